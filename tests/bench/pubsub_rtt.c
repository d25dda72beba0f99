/* SPDX-License-Identifier: BSD-2-Clause */
/* pubsub_rtt.c - publish/subscribe round trip at a paced rate (ping publishes, pong echoes from
 * its message callback), batching on or off: what batching adds to a message's latency. */
#include <rdps/rdps.h>

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * usage: pubsub_rtt ping|pong COUNT [RATE (1000)] [SIZE (64)] [on|off (on)] [TIMEOUT_S (60)]
 * ping publishes COUNT messages of SIZE bytes on rtt.ping at RATE per second (each carries its
 * index and send time), pong republishes each on rtt.pong from its message callback, and ping
 * prints one JSON line with the round trips' percentiles (microseconds; the first 1 % left out as
 * warm-up). Both sleep on the ctx's completion channel between messages (rdps_ctx_wait), as an
 * application paced by its input would. on|off: rdps_pub_opts.batching on both sides. Exit 0
 * when every echo came back, 1 when some did not, 2 on bad usage, 3 on timeout before the start.
 */

#define PING_TOPIC   "rtt.ping"
#define PONG_TOPIC   "rtt.pong"
#define HEADER_BYTES 16u

struct rtt_state {
    rdps_ctx_t *ctx;
    rdps_pub_t *pub;
    uint64_t count, received, refused;
    uint64_t *rtt_ns; /* ping: by index; 0 until its echo came back */
    uint8_t *msg;
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (s[0] == '-' || errno != 0 || *end != '\0' || v < min || v > max)
        return false;
    *out = v;
    return true;
}

/* pong: echo the message on the pong topic (a callback may send). */
static void on_ping(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct rtt_state *st = user;
    (void)info;
    int rc;
    while ((rc = rdps_pub_send(st->pub, data, len)) == RDPS_EAGAIN)
        rdps_ctx_poll(st->ctx, 0); /* from a callback: reaps send completions (RDPS_EBUSY) */
    if (rc < 0)
        st->refused++;
    st->received++;
}

/* ping: the echo's round trip, by the index it carries. */
static void on_pong(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct rtt_state *st = user;
    (void)info;
    uint64_t index, sent;
    if (len < HEADER_BYTES)
        return;
    memcpy(&index, data, sizeof index);
    memcpy(&sent, (const uint8_t *)data + 8, sizeof sent);
    if (index >= st->count || st->rtt_ns[index] != 0)
        return;
    st->rtt_ns[index] = now_ns() - sent;
    st->received++;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void print_result(const struct rtt_state *st, uint64_t rate, size_t size, bool batching)
{
    uint64_t skip = st->count / 100, n = 0;
    uint64_t *v = malloc(st->count * sizeof *v);
    if (v == NULL)
        return;
    for (uint64_t i = skip; i < st->count; i++)
        if (st->rtt_ns[i] != 0)
            v[n++] = st->rtt_ns[i];
    qsort(v, n, sizeof *v, cmp_u64);
#define PCT(p) (n ? (double)v[(size_t)((double)(n - 1) * (p))] / 1e3 : 0.0)
    printf("{\"tool\":\"pubsub_rtt\",\"messages\":%" PRIu64 ",\"echoed\":%" PRIu64
           ",\"rate\":%" PRIu64 ",\"size\":%zu,\"batching\":%s,\"samples\":%" PRIu64
           ",\"rtt_min_us\":%.1f,\"rtt_p50_us\":%.1f,\"rtt_p90_us\":%.1f,\"rtt_p99_us\":%.1f,"
           "\"rtt_max_us\":%.1f}\n",
           st->count, st->received, rate, size, batching ? "true" : "false", n, PCT(0.0), PCT(0.5),
           PCT(0.9), PCT(0.99), PCT(1.0));
#undef PCT
    free(v);
}

int main(int argc, char **argv)
{
    uint64_t count, rate = 1000, size = 64, timeout_s = 60;
    if (argc < 3 || (strcmp(argv[1], "ping") != 0 && strcmp(argv[1], "pong") != 0) ||
        !parse_u64(argv[2], 1, 10000000, &count) ||
        (argc > 3 && !parse_u64(argv[3], 1, 1000000, &rate)) ||
        (argc > 4 && !parse_u64(argv[4], HEADER_BYTES, 4096, &size)) ||
        (argc > 5 && strcmp(argv[5], "on") != 0 && strcmp(argv[5], "off") != 0) ||
        (argc > 6 && !parse_u64(argv[6], 1, 86400, &timeout_s)) || argc > 7) {
        fprintf(stderr, "usage: pubsub_rtt ping|pong COUNT [RATE (1..1000000, default 1000)] "
                        "[SIZE (16..4096, default 64)] [on|off (default on)] [TIMEOUT_S (60)]\n");
        return 2;
    }
    bool ping = strcmp(argv[1], "ping") == 0;
    bool batching = argc <= 5 || strcmp(argv[5], "on") == 0;
    struct rtt_state st = {.count = count};
    rdps_ctx_t *ctx = NULL;
    rdps_sub_t *sub;
    int status = 1;
    st.msg = calloc(1, (size_t)size);
    st.rtt_ns = ping ? calloc((size_t)count, sizeof *st.rtt_ns) : NULL;
    if (st.msg == NULL || (ping && st.rtt_ns == NULL)) {
        fprintf(stderr, "pubsub_rtt: out of memory\n");
        goto out;
    }
    rdps_config cfg;
    rdps_config_init(&cfg);
    rdps_pub_opts po = {.batching = batching ? RDPS_BATCH_AUTO : RDPS_BATCH_OFF};
    if (rdps_ctx_create(&cfg, &ctx) < 0 || (st.ctx = ctx, false) ||
        rdps_sub_create(ctx, ping ? PONG_TOPIC : PING_TOPIC, ping ? on_pong : on_ping, &st, NULL,
                        &sub) < 0 ||
        rdps_pub_create(ctx, ping ? PING_TOPIC : PONG_TOPIC, &po, &st.pub) < 0) {
        fprintf(stderr, "pubsub_rtt: %s\n", rdps_last_error_message());
        goto out;
    }
    uint64_t deadline = now_ns() + timeout_s * 1000000000ull;
    if (!ping) {
        while (st.received < count && now_ns() < deadline)
            if (rdps_ctx_wait(ctx, 100) < 0)
                break;
        for (int i = 0; i < 100 && rdps_ctx_sends_pending(ctx) > 0; i++)
            rdps_ctx_wait(ctx, 1); /* the last echoes leave before the ctx goes */
        status = st.received == count && st.refused == 0 ? 0 : 1;
        if (status != 0)
            fprintf(stderr,
                    "pubsub_rtt pong: %" PRIu64 " of %" PRIu64 " echoed, %" PRIu64 " refused\n",
                    st.received, count, st.refused);
        goto out;
    }
    /* The echo path is whole once pong's publisher is heard: ping's publisher has its
     * subscriber, and ping's subscriber has its publisher (an answered warm-up message). */
    while (!(rdps_pub_ready(st.pub) && rdps_pub_subscriber_count(st.pub) >= 1)) {
        if (now_ns() >= deadline || rdps_ctx_wait(ctx, 50) < 0) {
            fprintf(stderr, "pubsub_rtt ping: pong did not subscribe within %" PRIu64 " s\n",
                    timeout_s);
            status = 3;
            goto out;
        }
    }
    rdps_ctx_wait(ctx, 1000); /* pong's publisher is discovered by now too */
    uint64_t interval = 1000000000ull / rate, start = now_ns();
    for (uint64_t i = 0; i < count && now_ns() < deadline; i++) {
        uint64_t when = start + i * interval, t;
        while ((t = now_ns()) < when) {
            uint64_t left = when - t;
            if (left >= 1000000ull) {
                rdps_ctx_wait(ctx, (int)(left / 1000000ull));
            } else {
                struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)left};
                nanosleep(&ts, NULL);
                rdps_ctx_poll(ctx, 0);
            }
        }
        t = now_ns();
        memcpy(st.msg, &i, sizeof i);
        memcpy(st.msg + 8, &t, sizeof t);
        int rc;
        while ((rc = rdps_pub_send(st.pub, st.msg, (size_t)size)) == RDPS_EAGAIN)
            rdps_ctx_poll(ctx, 0);
        if (rc < 0) {
            fprintf(stderr, "pubsub_rtt ping: send %" PRIu64 ": %s\n", i, rdps_strerror(rc));
            goto out;
        }
    }
    /* The last echoes: up to a second. */
    for (uint64_t end = now_ns() + 1000000000ull; st.received < count && now_ns() < end;)
        rdps_ctx_wait(ctx, 10);
    print_result(&st, rate, (size_t)size, batching);
    status = st.received == count ? 0 : 1;
out:
    rdps_ctx_destroy(ctx);
    free(st.rtt_ns);
    free(st.msg);
    return status;
}
