/* SPDX-License-Identifier: BSD-2-Clause */
/* pubsub_bench.c - pushes N messages through the public pub/sub API between two contexts on the
 * in-memory loopback fabric. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdps/rdps.h>

#include "pubsub_test_util.h"

/*
 * Usage: pubsub_bench N [send|claim|reliable-send|reliable-claim] [BATCH (32)] [MSG_BYTES (64)]
 *
 * One publisher ctx and one subscriber ctx on one loopback fabric, one topic.
 * The publisher sends BATCH messages (rdps_pub_send, or rdps_pub_claim +
 * write + rdps_pub_commit in claim mode; the reliable modes use a reliable
 * publisher and a reliable subscriber), then the subscriber ctx is polled
 * until it has nothing left and the publisher ctx is polled once, as an
 * application's event loop would. Each message carries its index in its
 * first 8 bytes; the subscriber checks length and order, and the run fails
 * unless all N arrived in order with no gap. Prints one line of JSON.
 *
 * Built for instruction counting under callgrind (pubsub-instructions.sh):
 * the two polls are separate non-inlined functions so their inclusive cost
 * is attributed to one side each. The loopback transport delivers during
 * the publisher's flush (a memcpy into the receiver's buffer plus an eventfd
 * write when its ring goes non-empty), which a NIC does on real hardware;
 * the script lists those functions apart.
 *
 * Fan-out (fanout-instructions.sh): RDPS_BENCH_SUBSCRIBERS=K subscriber contexts (1..16) and
 * RDPS_BENCH_TRANSPORT=unicast (default multicast) for both sides: every datagram is one submit
 * of one buffer to K destinations; every subscriber must get all N in order.
 */

#define MAX_DATAGRAM 1024 /* rxe on a 1500-byte netdev: active MTU 1024 */
#define TOPIC        "bench.md"

struct bench_sink {
    uint64_t delivered, bytes, out_of_order, wrong_len, gap_events;
    size_t msg_bytes;
};

static void on_message(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct bench_sink *sink = user;
    (void)info;
    if (len != sink->msg_bytes) {
        sink->wrong_len++;
    } else if (len >= 8) {
        uint64_t index;
        memcpy(&index, data, sizeof(index));
        if (index != sink->delivered)
            sink->out_of_order++;
    }
    sink->delivered++;
    sink->bytes += len;
}

static void on_event(void *user, const rdps_event *ev)
{
    struct bench_sink *sink = user;
    if (ev->type == RDPS_EVENT_GAP)
        sink->gap_events++;
}

static unsigned long parse_arg(const char *s, const char *what)
{
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (*s == '\0' || *end != '\0') {
        fprintf(stderr, "pubsub_bench: %s must be a number, got '%s'\n", what, s);
        exit(2);
    }
    return v;
}

/* A ctx over a new loopback endpoint, configured like rdps_ctx_create would be. */
static int make_ctx(struct rdps_loopback_fabric *fabric, rdps_ctx_t **out)
{
    rdps_config cfg;
    rdps_config_init(&cfg);
    /* Discovery announces once at start; keep its timer out of the measured loop. */
    cfg.announce_interval_ms = 600000;
    /* RDPS_BENCH_KEY=auth|encrypt: an authenticated domain (tests/bench/auth-instructions.sh). */
    static const uint8_t key[RDPS_DOMAIN_KEY_BYTES] = {0x42};
    const char *keyed = getenv("RDPS_BENCH_KEY");
    cfg.domain_key_file = ""; /* the environment's key file must not change the figures */
    if (keyed != NULL && (strcmp(keyed, "auth") == 0 || strcmp(keyed, "encrypt") == 0)) {
        cfg.domain_key = key;
        cfg.encrypt = strcmp(keyed, "encrypt") == 0;
    }
    /* RDPS_BENCH_MTU=4096: the device's datagrams (rxe on a 9000-byte netdev), else 1024. */
    const char *mtu = getenv("RDPS_BENCH_MTU");
    uint32_t max_datagram = mtu != NULL && strcmp(mtu, "4096") == 0 ? 4096u : MAX_DATAGRAM;
    struct rdps_loopback_config lc = {
        .max_payload = max_datagram, .send_slots = cfg.send_slots, .recv_slots = cfg.recv_slots};
    return test_loopback_ctx_with(fabric, &cfg, &lc, out);
}

#define MAX_SUBS 16
static rdps_ctx_t *extra_subs[MAX_SUBS]; /* subscriber contexts beyond the first (fan-out) */
static unsigned n_extra;

/* The subscribers' event loop: poll each until nothing is left. Returns datagrams handled or
 * < 0. */
__attribute__((noinline)) static int bench_poll_subscriber(rdps_ctx_t *ctx)
{
    int total = 0, n;
    for (unsigned k = 0; k <= n_extra; k++) {
        rdps_ctx_t *c = k == 0 ? ctx : extra_subs[k - 1];
        while ((n = rdps_ctx_poll(c, 0)) > 0)
            total += n;
        if (n < 0)
            return n;
    }
    return total;
}

/* The publisher's event loop turn: completions, discovery, timers. */
__attribute__((noinline)) static int bench_poll_publisher(rdps_ctx_t *ctx)
{
    return rdps_ctx_poll(ctx, 0);
}

/* Back-pressure: polls the publisher, and the subscriber (a reliable publisher waits for its
 * reports). */
static int on_backpressure(rdps_ctx_t *pctx, rdps_ctx_t *sctx, uint64_t *eagain)
{
    (*eagain)++;
    int rc = bench_poll_publisher(pctx);
    return rc < 0 ? rc : bench_poll_subscriber(sctx);
}

/* RDPS_BENCH_MORE=1: every message but a batch's last is sent with RDPS_SEND_MORE, so messages
 * share datagrams (batching); the flags of the message being published. */
static unsigned send_flags;

/* Publishes message `index` by copy; back-pressure polls and retries. */
static int publish_send(rdps_ctx_t *pctx, rdps_ctx_t *sctx, rdps_pub_t *pub, uint8_t *msg,
                        size_t len, uint64_t index, uint64_t *eagain)
{
    if (len >= 8)
        memcpy(msg, &index, sizeof(index));
    int rc;
    while ((rc = rdps_pub_send_ex(pub, msg, len, send_flags)) == RDPS_EAGAIN) {
        if ((rc = on_backpressure(pctx, sctx, eagain)) < 0)
            return rc;
    }
    return rc;
}

/* Publishes message `index` in place: claim room (a send buffer, or the reliable ring), write,
 * commit. */
static int publish_claim(rdps_ctx_t *pctx, rdps_ctx_t *sctx, rdps_pub_t *pub, const uint8_t *msg,
                         size_t len, uint64_t index, uint64_t *eagain)
{
    rdps_claim claim;
    int rc;
    while ((rc = rdps_pub_claim_ex(pub, len, send_flags, &claim)) == RDPS_EAGAIN) {
        if ((rc = on_backpressure(pctx, sctx, eagain)) < 0)
            return rc;
    }
    if (rc < 0)
        return rc;
    if (len > claim.capacity) {
        rdps_pub_abort(pub, &claim);
        return RDPS_EMSGSIZE;
    }
    /* The application's write of its message into the claimed buffer. */
    memcpy(claim.data, msg, len);
    if (len >= 8)
        memcpy(claim.data, &index, sizeof(index));
    return rdps_pub_commit(pub, &claim, len);
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 5) {
        fprintf(stderr,
                "usage: %s N [send|claim|reliable-send|reliable-claim] [BATCH] [MSG_BYTES]\n",
                argv[0]);
        return 2;
    }
    unsigned long n = parse_arg(argv[1], "N");
    const char *mode = argc > 2 ? argv[2] : "send";
    int reliable = strncmp(mode, "reliable-", 9) == 0;
    const char *how = reliable ? mode + 9 : mode;
    int claim_mode = strcmp(how, "claim") == 0;
    if (!claim_mode && strcmp(how, "send") != 0) {
        fprintf(stderr,
                "pubsub_bench: mode must be send, claim, reliable-send or reliable-claim, got "
                "'%s'\n",
                mode);
        return 2;
    }
    unsigned long batch = argc > 3 ? parse_arg(argv[3], "BATCH") : 32;
    size_t msg_bytes = argc > 4 ? parse_arg(argv[4], "MSG_BYTES") : 64;
    /* The subscriber holds a whole batch before it polls: keep it under its receive slots. */
    if (batch == 0 || batch > 1024 || msg_bytes > MAX_DATAGRAM - RDPS_FRAME_HEADER_LEN - 40) {
        fprintf(stderr, "pubsub_bench: need 1 <= BATCH <= 1024 and MSG_BYTES <= %d\n",
                MAX_DATAGRAM - RDPS_FRAME_HEADER_LEN - 40); /* room for a keyed trailer */
        return 2;
    }

    struct rdps_loopback_fabric *fabric = NULL;
    rdps_ctx_t *pctx = NULL, *sctx = NULL;
    rdps_pub_t *pub = NULL;
    rdps_sub_t *sub = NULL;
    uint8_t *msg = NULL;
    struct bench_sink sink = {.msg_bytes = msg_bytes};
    struct bench_sink extra_sinks[MAX_SUBS];
    rdps_sub_t *extra_sub[MAX_SUBS];
    uint64_t eagain = 0;
    int status = 1, rc;
    const char *subs_env = getenv("RDPS_BENCH_SUBSCRIBERS");
    const char *transport_env = getenv("RDPS_BENCH_TRANSPORT");
    unsigned long subs = subs_env != NULL ? parse_arg(subs_env, "RDPS_BENCH_SUBSCRIBERS") : 1;
    rdps_transport_mode transport = transport_env != NULL && strcmp(transport_env, "unicast") == 0
                                        ? RDPS_TRANSPORT_UNICAST
                                        : RDPS_TRANSPORT_MULTICAST;
    if (subs == 0 || subs > MAX_SUBS) {
        fprintf(stderr, "pubsub_bench: RDPS_BENCH_SUBSCRIBERS must be 1..%d\n", MAX_SUBS);
        return 2;
    }

    if ((rc = rdps__loopback_fabric_create(&fabric)) < 0 || (rc = make_ctx(fabric, &pctx)) < 0 ||
        (rc = make_ctx(fabric, &sctx)) < 0) {
        fprintf(stderr, "pubsub_bench: setting up the loopback contexts: %s (%s)\n",
                rdps_strerror(rc), rdps_last_error_message());
        goto out;
    }
    const char *more_env = getenv("RDPS_BENCH_MORE");
    const char *batching_env = getenv("RDPS_BENCH_BATCHING");
    bool more = more_env != NULL && strcmp(more_env, "1") == 0;
    rdps_sub_opts sopts = {.on_event = on_event, .reliable = reliable, .transport = transport};
    rdps_pub_opts popts = {.reliable = reliable, .transport = transport};
    if (batching_env != NULL && strcmp(batching_env, "off") == 0)
        popts.batching = RDPS_BATCH_OFF;
    for (unsigned k = 0; k + 1 < subs; k++) {
        extra_sinks[k] = (struct bench_sink){.msg_bytes = msg_bytes};
        if ((rc = make_ctx(fabric, &extra_subs[k])) < 0 ||
            (rc = rdps_sub_create(extra_subs[k], TOPIC, on_message, &extra_sinks[k], &sopts,
                                  &extra_sub[k])) < 0) {
            fprintf(stderr, "pubsub_bench: subscriber %u: %s (%s)\n", k + 2, rdps_strerror(rc),
                    rdps_last_error_message());
            goto out;
        }
        n_extra++;
    }
    if ((rc = rdps_sub_create(sctx, TOPIC, on_message, &sink, &sopts, &sub)) < 0 ||
        (rc = rdps_pub_create(pctx, TOPIC, &popts, &pub)) < 0) {
        fprintf(stderr, "pubsub_bench: creating the endpoints: %s (%s)\n", rdps_strerror(rc),
                rdps_last_error_message());
        goto out;
    }
    /* Joins complete at once on loopback; the first polls also exchange discovery announces
     * (a unicast publisher must know every subscriber before it sends). */
    for (int i = 0; i < 3 || (i < 1000 && rdps_pub_subscriber_count(pub) < (int)subs); i++) {
        if (bench_poll_publisher(pctx) < 0 || bench_poll_subscriber(sctx) < 0)
            goto out;
    }
    if (!rdps_pub_ready(pub) || !rdps_sub_ready(sub)) {
        fprintf(stderr, "pubsub_bench: endpoints not ready after the first polls\n");
        goto out;
    }
    msg = malloc(msg_bytes ? msg_bytes : 1);
    if (msg == NULL) {
        fprintf(stderr, "pubsub_bench: out of memory\n");
        goto out;
    }
    for (size_t i = 0; i < msg_bytes; i++)
        msg[i] = (uint8_t)(i * 7u + 1u);

    for (unsigned long i = 0; i < n; i++) {
        send_flags = more && (i + 1) % batch != 0 && i + 1 != n ? RDPS_SEND_MORE : 0;
        rc = claim_mode ? publish_claim(pctx, sctx, pub, msg, msg_bytes, i, &eagain)
                        : publish_send(pctx, sctx, pub, msg, msg_bytes, i, &eagain);
        if (rc < 0) {
            fprintf(stderr, "pubsub_bench: publishing message %lu: %s (%s)\n", i, rdps_strerror(rc),
                    rdps_last_error_message());
            goto out;
        }
        if ((i + 1) % batch == 0 || i + 1 == n) {
            if ((rc = bench_poll_subscriber(sctx)) < 0 || (rc = bench_poll_publisher(pctx)) < 0) {
                fprintf(stderr, "pubsub_bench: poll: %s\n", rdps_strerror(rc));
                goto out;
            }
        }
    }

    /* The last messages may wait in an open datagram (batching holds them while an earlier
     * send's completion is awaited): the application's last flush sends them. */
    if ((rc = rdps_ctx_flush(pctx)) < 0 || (rc = bench_poll_subscriber(sctx)) < 0) {
        fprintf(stderr, "pubsub_bench: final flush: %s\n", rdps_strerror(rc));
        goto out;
    }
    rdps_counters sc, pc;
    rdps_ctx_counters(sctx, &sc);
    rdps_pub_counters(pub, &pc);
    printf("{\"messages\":%lu,\"mode\":\"%s\",\"batch\":%lu,\"msg_bytes\":%zu,"
           "\"frames_sent\":%llu,\"delivered\":%llu,\"bytes_delivered\":%llu,"
           "\"out_of_order\":%llu,\"wrong_len\":%llu,\"gaps\":%llu,\"rq_empty\":%llu,"
           "\"backpressure\":%llu}\n",
           n, mode, batch, msg_bytes, (unsigned long long)pc.frames_sent,
           (unsigned long long)sink.delivered, (unsigned long long)sink.bytes,
           (unsigned long long)sink.out_of_order, (unsigned long long)sink.wrong_len,
           (unsigned long long)sc.gaps, (unsigned long long)sc.rq_empty,
           (unsigned long long)eagain);
    if (sink.delivered != n || sink.out_of_order || sink.wrong_len || sink.gap_events || sc.gaps ||
        sc.rq_empty) {
        fprintf(stderr,
                "pubsub_bench: delivered %llu of %lu messages (%llu out of order, %llu wrong "
                "length, %llu gaps, receive queue empty %llu times)\n",
                (unsigned long long)sink.delivered, n, (unsigned long long)sink.out_of_order,
                (unsigned long long)sink.wrong_len, (unsigned long long)sc.gaps,
                (unsigned long long)sc.rq_empty);
        goto out;
    }
    for (unsigned k = 0; k < n_extra; k++) {
        if (extra_sinks[k].delivered != n || extra_sinks[k].out_of_order ||
            extra_sinks[k].wrong_len) {
            fprintf(stderr, "pubsub_bench: subscriber %u got %llu of %lu messages\n", k + 2,
                    (unsigned long long)extra_sinks[k].delivered, n);
            goto out;
        }
    }
    status = 0;
out:
    free(msg);
    for (unsigned k = 0; k < n_extra; k++)
        rdps_ctx_destroy(extra_subs[k]);
    rdps_pub_destroy(pub);
    rdps_sub_destroy(sub);
    rdps_ctx_destroy(pctx);
    rdps_ctx_destroy(sctx);
    rdps__loopback_fabric_destroy(fabric);
    return status;
}
