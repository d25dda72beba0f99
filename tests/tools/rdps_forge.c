/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_forge.c - a hostile host on the fabric, for the security tests: it learns a topic's
 * publisher through discovery, as any host can, then sends what the audit's attacks send. */
#include "ctx_internal.h"
#include "discovery.h"

#include <arpa/inet.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rdps_clock.h"
#include "rdps_endian.h"
#include "rdps_frame.h"

/*
 * usage: rdps_forge -t TOPIC [-d DEVICE] [--duration S] [--rate N] ATTACK...
 * ATTACK (any of them, each at N frames per second):
 *   --announce    reliable-subscriber announcements from this host, a new receiver id each
 *   --status      STATUS to the publisher: consumed a little behind its latest message, window 0
 *   --nak         NAKs to the publisher for 512 sequences behind its latest, two receiver ids
 *   --data        reliable DATA frames into the topic's group from new sessions
 *   --replay      records the topic's datagrams from its group and sends the same bytes into the
 *                 group again from a fresh QP (a new ctx every --replay-qp-s seconds, 2 by
 *                 default), N datagrams a second, until the duration ends (see replay_run);
 *                 --ready-file F: created once the group is joined and recording
 * The ctx is an ordinary one: with RDPS_DEVICE, and with a domain key when one is configured (a
 * wrong key's frames are what a host outside the domain sends). --sniff-key-file F: learn the
 * publisher (source, session, latest sequence) through a second ctx keyed with F, as a host that
 * captures the domain's traffic reads it from the frames' headers, and forge through the first.
 * Exit 0 after the duration (or SIGTERM) with a JSON line of what was sent; 3 when no publisher of
 * TOPIC was seen within 20 s (--replay: when its group could not be joined).
 */

struct forger {
    rdps_ctx_t *ctx;
    const char *topic;
    uint64_t topic_id;
    bool seen;
    rdps_source publisher;
    uint32_t session;
    uint32_t last_seq; /* sequence after the latest message seen */
    uint32_t next_receiver_id;
    uint64_t sent_announce, sent_status, sent_nak, sent_data, send_errors;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static void on_event(void *user, const rdps_event *ev)
{
    struct forger *f = user;
    if (ev->type == RDPS_EVENT_PUBLISHER_SEEN && !f->seen) {
        f->seen = true;
        f->publisher = ev->source;
        f->session = ev->session_id;
    }
}

static void on_msg(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct forger *f = user;
    (void)data;
    (void)len;
    if (f->seen && info->session_id == f->session)
        f->last_seq = info->seq + info->fragments;
}

static void count(struct forger *f, int rc, uint64_t *sent)
{
    if (rc == 0)
        (*sent)++;
    else
        f->send_errors++;
}

static const struct rdps_dest *publisher_dest(struct forger *f)
{
    const struct rdps_dest *dest = NULL;
    struct rdps_source src = f->publisher;
    if (rdps__transport_source_dest(rdps__ctx_of_handle(f->ctx)->transport, &src, &dest) < 0)
        return NULL;
    return dest;
}

/* A reliable subscriber of the topic announcing itself from this host, with a new receiver id. */
static void forge_announce(struct forger *f)
{
    struct rdps_announce a;
    uint8_t frame[RDPS_FRAME_HEADER_LEN + RDPS_ANNOUNCE_MAX_BYTES];
    memset(&a, 0, sizeof(a));
    a.role = RDPS_ROLE_SUBSCRIBER;
    snprintf(a.topic, sizeof(a.topic), "%s", f->topic);
    a.topic_id = f->topic_id;
    char group[16];
    if (rdps_topic_group(f->ctx, f->topic, group, sizeof(group)) < 0)
        return;
    a.group = ntohl(inet_addr(group));
    a.session_id = rdps__ctx_random32() | 1u;
    a.qpn = rdps__ctx_of_handle(f->ctx)->self_qpn;
    a.qkey = rdps__ctx_of_handle(f->ctx)->cfg.qkey;
    memcpy(a.gid, rdps__ctx_of_handle(f->ctx)->self_gid, 16);
    a.reliable = true;
    a.receiver_id = f->next_receiver_id++;
    a.interval_ms = 60000;
    a.announce_seq = 1;
    int body = rdps__announce_encode(&a, frame + RDPS_FRAME_HEADER_LEN, RDPS_ANNOUNCE_MAX_BYTES);
    if (body < 0)
        return;
    int len = rdps__frame_encode_announce(frame, sizeof(frame), a.session_id, a.topic_id, 1,
                                          frame + RDPS_FRAME_HEADER_LEN, (size_t)body,
                                          rdps__clock_realtime_ns());
    if (len < 0 || rdps__ctx_of_handle(f->ctx)->control_dest == NULL)
        return;
    count(f,
          rdps__ctx_send_frame(rdps__ctx_of_handle(f->ctx),
                               rdps__ctx_of_handle(f->ctx)->control_dest, frame, (uint32_t)len),
          &f->sent_announce);
}

static void forge_status(struct forger *f)
{
    const struct rdps_dest *dest = publisher_dest(f);
    uint8_t frame[RDPS_FRAME_STATUS_LEN];
    int len = rdps__frame_encode_status(frame, sizeof(frame), f->session, f->topic_id, 0xBAD0u,
                                        f->last_seq - 8, 0, rdps__clock_realtime_ns());
    if (dest != NULL && len > 0)
        count(f, rdps__ctx_send_frame(rdps__ctx_of_handle(f->ctx), dest, frame, (uint32_t)len),
              &f->sent_status);
}

static void forge_nak(struct forger *f)
{
    const struct rdps_dest *dest = publisher_dest(f);
    struct rdps_seq_range range = {.start = f->last_seq - 512, .count = 512};
    uint8_t frame[RDPS_FRAME_NAK_OFF_RANGES + RDPS_FRAME_NAK_RANGE_LEN];
    /* Two receiver ids, so that an unhardened publisher repairs by multicast. */
    uint32_t receiver = f->sent_nak % 2 ? 0xBAD1u : 0xBAD2u;
    int len = rdps__frame_encode_nak(frame, sizeof(frame), f->session, f->topic_id, receiver,
                                     &range, 1, rdps__clock_realtime_ns());
    if (dest != NULL && len > 0)
        count(f, rdps__ctx_send_frame(rdps__ctx_of_handle(f->ctx), dest, frame, (uint32_t)len),
              &f->sent_nak);
}

static void forge_data(struct forger *f, const struct rdps_dest *group)
{
    uint8_t frame[RDPS_FRAME_HEADER_LEN + 16];
    memset(frame + RDPS_FRAME_HEADER_LEN, 0x66, 16);
    uint32_t len = rdps__frame_put_data_header(
        frame, rdps__ctx_random32() | 1u, f->topic_id, rdps__ctx_random32(), 16, 0, 16,
        rdps__clock_realtime_ns(), RDPS_FRAME_F_RELIABLE, rdps__ctx_random32(),
        rdps__frame_one_count(16, 0, 16));
    count(f, rdps__ctx_send_frame(rdps__ctx_of_handle(f->ctx), group, frame, len), &f->sent_data);
}

static uint64_t now_ms(void)
{
    return rdps__clock_monotonic_ns() / 1000000u;
}

/*
 * --replay: a host outside the domain records a topic and replays it. A keyless ctx subscribes to
 * the topic (any host may join its group); once joined, its QP is read directly, below the ctx,
 * as a capture reads the wire: every DATA, heartbeat and parity datagram of the topic from the
 * first source heard sending them that is not on this host (the publisher; this host's own
 * forgers are not recorded) is kept, up to REPLAY_MAX. From then on a new ctx (a fresh QP: they
 * cost nothing) is made every qp_ms and sends the recording into the group again from its start,
 * `rate` datagrams a second, byte for byte.
 */
#define REPLAY_MAX   8192
#define REPLAY_BYTES 4200

struct replayer {
    const char *topic, *device;
    uint64_t topic_id;
    rdps_ctx_t *rec, *send;
    rdps_sub_t *rec_sub;
    rdps_pub_t *send_pub;
    rdps_source from; /* the publisher: the first source of the topic heard */
    bool have_from;
    uint8_t (*frames)[REPLAY_BYTES];
    uint32_t *lens;
    uint32_t count, next;
    uint64_t heard, recorded, replayed, qps, send_errors;
};

/* The recording ctx's subscriber never sees a message: its QP is read below the ctx. */
static void on_nothing(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    (void)user;
    (void)data;
    (void)len;
    (void)info;
}

static rdps_ctx_t *keyless_ctx(const char *device)
{
    rdps_config cfg;
    rdps_config_init(&cfg);
    cfg.device = device;
    cfg.domain_key_file = ""; /* outside the domain whatever the environment says */
    cfg.stats_off = 1;
    rdps_ctx_t *ctx;
    return rdps_ctx_create(&cfg, &ctx) == 0 ? ctx : NULL;
}

/* Keeps what the recording QP received (the datagrams of the topic from its publisher). */
static void replay_record(struct replayer *r)
{
    struct rdps_transport *t = rdps__ctx_of_handle(r->rec)->transport;
    struct rdps_rx_datagram rx[32];
    int n = t->ops->poll(t, rx, 32);
    for (int i = 0; i < n; i++) {
        const struct rdps_rx_datagram *d = &rx[i];
        rdps_source src = {.qpn = d->src_qpn, .lid = d->src_lid, .has_gid = d->has_src_gid};
        memcpy(src.gid, d->src_gid, 16);
        /* The publisher's datagrams: its QP also hears the discovery group, whose announcements
         * of the topic (a subscriber's among them) carry its id too. The header is clear. */
        uint8_t type = d->len > RDPS_FRAME_OFF_TYPE ? d->data[RDPS_FRAME_OFF_TYPE] : 0;
        if (d->len < RDPS_FRAME_HEADER_LEN || d->len > REPLAY_BYTES ||
            (type != RDPS_FRAME_DATA && type != RDPS_FRAME_HEARTBEAT &&
             type != RDPS_FRAME_PARITY) ||
            rdps__get_le64(d->data + RDPS_FRAME_OFF_TOPIC_ID) != r->topic_id ||
            (d->has_src_gid && memcmp(d->src_gid, rdps__ctx_of_handle(r->rec)->self_gid, 16) == 0))
            continue;
        r->heard++;
        if (!r->have_from) {
            r->from = src;
            r->have_from = true;
        }
        if (memcmp(&src, &r->from, sizeof(src)) != 0 || r->count == REPLAY_MAX)
            continue;
        memcpy(r->frames[r->count], d->data, d->len);
        r->lens[r->count++] = d->len;
        r->recorded++;
    }
    if (n > 0)
        t->ops->rx_release(t, rx, n);
}

/* The next sending QP: a new ctx with an unreliable publisher of the topic (its send-only join
 * gives the group), the old one destroyed. */
static void replay_new_qp(struct replayer *r)
{
    if (r->send != NULL)
        rdps_ctx_destroy(r->send);
    r->send_pub = NULL;
    r->send = keyless_ctx(r->device);
    if (r->send == NULL || rdps_pub_create(r->send, r->topic, NULL, &r->send_pub) < 0) {
        fprintf(stderr, "rdps_forge: replay ctx: %s\n", rdps_last_error_message());
        if (r->send != NULL)
            rdps_ctx_destroy(r->send);
        r->send = NULL;
        return;
    }
    uint64_t until = now_ms() + 5000;
    while (!stop && !rdps_pub_ready(r->send_pub) && now_ms() < until) {
        rdps_ctx_poll(r->send, 0);
        replay_record(r);
        rdps_ctx_wait(r->send, 1);
    }
    r->qps++;
    r->next = 0;
}

static int replay_run(const char *topic, const char *device, double duration, double rate,
                      double qp_s, const char *ready_file)
{
    struct replayer r = {.topic = topic, .device = device, .topic_id = rdps_topic_id(topic)};
    r.frames = calloc(REPLAY_MAX, sizeof(*r.frames));
    r.lens = calloc(REPLAY_MAX, sizeof(*r.lens));
    r.rec = keyless_ctx(device);
    if (r.frames == NULL || r.lens == NULL || r.rec == NULL ||
        rdps_sub_create(r.rec, topic, on_nothing, NULL, NULL, &r.rec_sub) < 0) {
        fprintf(stderr, "rdps_forge: %s\n", rdps_last_error_message());
        return 1;
    }
    uint64_t deadline = now_ms() + 20000;
    while (!stop && !rdps_sub_ready(r.rec_sub) && now_ms() < deadline)
        rdps_ctx_wait(r.rec, 10);
    if (!rdps_sub_ready(r.rec_sub)) {
        fprintf(stderr, "rdps_forge: the group of %s was not joined within 20 s\n", topic);
        rdps_ctx_destroy(r.rec);
        return 3;
    }
    fprintf(stderr, "rdps_forge: recording %s, replaying from a new QP every %.1f s\n", topic,
            qp_s);
    if (ready_file != NULL) { /* the test's publisher starts once we record */
        FILE *fp = fopen(ready_file, "w");
        if (fp != NULL)
            fclose(fp);
    }
    uint64_t end = now_ms() + (uint64_t)(duration * 1000), next_qp = 0;
    uint64_t period_us = (uint64_t)(1e6 / rate), next_us = rdps__clock_monotonic_ns() / 1000;
    while (!stop && now_ms() < end) {
        replay_record(&r);
        if (r.count > 0 && now_ms() >= next_qp) {
            replay_new_qp(&r);
            next_qp = now_ms() + (uint64_t)(qp_s * 1000);
        }
        if (r.send == NULL || r.count == 0) {
            usleep(1000);
            continue;
        }
        rdps_ctx_poll(r.send, 0); /* reaps its sends */
        uint64_t now_us = rdps__clock_monotonic_ns() / 1000;
        if (now_us < next_us) {
            usleep(200);
            continue;
        }
        next_us += period_us;
        if (rdps__ctx_send_frame(rdps__ctx_of_handle(r.send),
                                 rdps__pub_of_handle(r.send_pub)->topic->send_dest,
                                 r.frames[r.next], r.lens[r.next]) == 0)
            r.replayed++;
        else
            r.send_errors++;
        r.next = (r.next + 1) % r.count;
    }
    printf("{\"heard\":%" PRIu64 ",\"recorded\":%" PRIu64 ",\"from_qpn\":%u,\"replayed\":%" PRIu64
           ",\"qps\":%" PRIu64 ",\"send_errors\":%" PRIu64 "}\n",
           r.heard, r.recorded, r.from.qpn, r.replayed, r.qps, r.send_errors);
    if (r.send != NULL)
        rdps_ctx_destroy(r.send);
    rdps_ctx_destroy(r.rec);
    free(r.frames);
    free(r.lens);
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option options[] = {
        {"topic", required_argument, NULL, 't'},
        {"device", required_argument, NULL, 'd'},
        {"duration", required_argument, NULL, 'D'},
        {"rate", required_argument, NULL, 'r'},
        {"announce", no_argument, NULL, 'a'},
        {"status", no_argument, NULL, 's'},
        {"nak", no_argument, NULL, 'n'},
        {"data", no_argument, NULL, 'x'},
        {"sniff-key-file", required_argument, NULL, 'k'},
        {"replay", no_argument, NULL, 'R'},
        {"replay-qp-s", required_argument, NULL, 'Q'},
        {"ready-file", required_argument, NULL, 'F'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct forger f = {.next_receiver_id = 0xBAD00000u};
    const char *device = NULL, *sniff_key = NULL, *ready_file = NULL;
    double duration = 10, rate = 100, replay_qp_s = 2;
    bool announce = false, status = false, nak = false, data = false, replay = false;
    int c;
    while ((c = getopt_long(argc, argv, "t:d:h", options, NULL)) != -1) {
        switch (c) {
        case 't':
            f.topic = optarg;
            break;
        case 'd':
            device = optarg;
            break;
        case 'D':
            duration = atof(optarg);
            break;
        case 'r':
            rate = atof(optarg);
            break;
        case 'a':
            announce = true;
            break;
        case 's':
            status = true;
            break;
        case 'n':
            nak = true;
            break;
        case 'x':
            data = true;
            break;
        case 'k':
            sniff_key = optarg;
            break;
        case 'R':
            replay = true;
            break;
        case 'Q':
            replay_qp_s = atof(optarg);
            break;
        case 'F':
            ready_file = optarg;
            break;
        case 'h':
            printf("usage: rdps_forge -t TOPIC [-d DEVICE] [--duration S] [--rate N] "
                   "[--announce] [--status] [--nak] [--data] [--replay [--replay-qp-s S] "
                   "[--ready-file F]]\n");
            return 0;
        default:
            return 2;
        }
    }
    if (f.topic == NULL || rate <= 0 || duration <= 0) {
        fprintf(stderr, "rdps_forge: -t TOPIC and a positive --rate/--duration are required\n");
        return 2;
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    if (replay) {
        if (replay_qp_s <= 0) {
            fprintf(stderr, "rdps_forge: --replay-qp-s must be positive\n");
            return 2;
        }
        return replay_run(f.topic, device, duration, rate, replay_qp_s, ready_file);
    }
    rdps_config cfg;
    rdps_config_init(&cfg);
    cfg.device = device;
    int rc = rdps_ctx_create(&cfg, &f.ctx);
    if (rc < 0) {
        fprintf(stderr, "rdps_forge: %s\n", rdps_last_error_message());
        return 1;
    }
    f.topic_id = rdps_topic_id(f.topic);
    rdps_ctx_t *sniff = f.ctx; /* the ctx that learns the publisher */
    if (sniff_key != NULL) {
        rdps_config scfg;
        rdps_config_init(&scfg);
        scfg.device = device;
        scfg.domain_key_file = sniff_key;
        scfg.stats_off = 1;
        if (rdps_ctx_create(&scfg, &sniff) < 0) {
            fprintf(stderr, "rdps_forge: sniffing ctx: %s\n", rdps_last_error_message());
            rdps_ctx_destroy(f.ctx);
            return 1;
        }
    }
    rdps_sub_t *sub;
    rdps_pub_t *pub; /* an unreliable publisher of the topic: its send-only join gives the group */
    rdps_sub_opts sopts = {.on_event = on_event, .event_user = &f};
    if (rdps_sub_create(sniff, f.topic, on_msg, &f, &sopts, &sub) < 0 ||
        rdps_pub_create(f.ctx, f.topic, NULL, &pub) < 0) {
        fprintf(stderr, "rdps_forge: %s\n", rdps_last_error_message());
        rdps_ctx_destroy(f.ctx);
        return 1;
    }
    uint64_t deadline = now_ms() + 20000;
    while (!stop && (!f.seen || !rdps_pub_ready(pub)) && now_ms() < deadline) {
        rdps_ctx_wait(f.ctx, 10);
        if (sniff != f.ctx)
            rdps_ctx_poll(sniff, 0);
    }
    if (!f.seen) {
        fprintf(stderr, "rdps_forge: no publisher of %s seen within 20 s\n", f.topic);
        if (sniff != f.ctx)
            rdps_ctx_destroy(sniff);
        rdps_ctx_destroy(f.ctx);
        return 3;
    }
    fprintf(stderr, "rdps_forge: publisher session 0x%08x qpn 0x%x: forging for %.1f s\n",
            f.session, f.publisher.qpn, duration);
    uint64_t start = now_ms(), end = start + (uint64_t)(duration * 1000),
             period_us = (uint64_t)(1e6 / rate);
    uint64_t next_us = rdps__clock_monotonic_ns() / 1000;
    while (!stop && now_ms() < end) {
        rdps_ctx_poll(f.ctx, 0);
        if (sniff != f.ctx)
            rdps_ctx_poll(sniff, 0);
        uint64_t now_us = rdps__clock_monotonic_ns() / 1000;
        if (now_us < next_us) {
            rdps_ctx_wait(f.ctx, 1);
            continue;
        }
        next_us += period_us;
        if (announce)
            forge_announce(&f);
        if (status)
            forge_status(&f);
        if (nak)
            forge_nak(&f);
        if (data)
            forge_data(&f, rdps__pub_of_handle(pub)->topic->send_dest);
    }
    printf("{\"announce\":%" PRIu64 ",\"status\":%" PRIu64 ",\"nak\":%" PRIu64 ",\"data\":%" PRIu64
           ",\"send_errors\":%" PRIu64 ",\"last_seq\":%u}\n",
           f.sent_announce, f.sent_status, f.sent_nak, f.sent_data, f.send_errors, f.last_seq);
    if (sniff != f.ctx)
        rdps_ctx_destroy(sniff);
    rdps_ctx_destroy(f.ctx);
    return 0;
}
