/* SPDX-License-Identifier: BSD-2-Clause */
/* gen_receive_path_seeds.c - writes the seed corpus of fuzz_receive_path (receive_path/ under a
 * directory): one program per scenario, in the language of receive_path_ops.h. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rdps_frame.h"
#include "receive_path_ops.h"
#include "script_transport.h"

struct prog {
    uint8_t bytes[16384];
    size_t len;
};

static const char *out_dir;
static unsigned written;

static void put(struct prog *p, const uint8_t *b, size_t n)
{
    if (p->len + n > sizeof(p->bytes)) {
        fprintf(stderr, "gen_receive_path_seeds: program too long\n");
        exit(1);
    }
    memcpy(p->bytes + p->len, b, n);
    p->len += n;
}

/* One operation: op byte (op + RP_OP_COUNT x hi), then its arguments. */
static void op(struct prog *p, enum rp_op o, unsigned hi, const uint8_t *args, size_t n)
{
    uint8_t b = (uint8_t)(o + RP_OP_COUNT * hi);
    put(p, &b, 1);
    put(p, args, n);
}

#define OP(p, o, hi, ...)                      \
    do {                                       \
        const uint8_t args_[] = {__VA_ARGS__}; \
        op(p, o, hi, args_, sizeof(args_));    \
    } while (0)

/* Publisher pub sends msgs (1..16) messages: len, or lengths around a datagram's payload. */
static void publish_n(struct prog *p, unsigned pub, unsigned msgs, unsigned len, int pooled)
{
    OP(p, pooled ? RP_PUBLISH_POOL : RP_PUBLISH, msgs - 1, (uint8_t)pub, (uint8_t)len,
       (uint8_t)(len >> 8));
}

static void publish(struct prog *p, unsigned pub, unsigned len, int pooled)
{
    publish_n(p, pub, 1, len, pooled);
}

static void tick(struct prog *p, unsigned n, unsigned shift)
{
    OP(p, RP_TIME, shift, (uint8_t)n);
}

static void start(struct prog *p, uint8_t config)
{
    p->len = 0;
    put(p, &config, 1);
}

static void save(const struct prog *p, const char *name)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/receive_path", out_dir);
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
        perror(path);
        exit(1);
    }
    snprintf(path, sizeof(path), "%s/receive_path/%s", out_dir, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(p->bytes, 1, p->len, f) != p->len || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
    written++;
}

/* A datagram's payload: the longest message that goes whole. */
#define RP_PAYLOAD (SCRIPT_MAX_PAYLOAD - RDPS_FRAME_HEADER_LEN)

/* Honest traffic alone: sizes around the fragment boundary and the largest. */
static void honest_seeds(struct prog *p)
{
    static const unsigned sizes[] = {
        0,    1,     RP_PAYLOAD - 1, RP_PAYLOAD, RP_PAYLOAD + 1, 2 * RP_PAYLOAD, 2 * RP_PAYLOAD + 1,
        5000, 12345, RP_MAX_MSG};
    start(p, 0x00);
    for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        publish(p, i % RP_PUBLISHERS, sizes[i], 0);
    save(p, "honest_sizes");

    start(p, 0x05); /* 1 MiB arena: messages of all four sessions interleaved */
    for (unsigned pub = 0; pub < RP_PUBLISHERS; pub++)
        publish(p, pub, 4000 + 1000 * pub, 1);
    for (unsigned k = 0; k < 20; k++)
        OP(p, RP_SEND_POOL, 0, (uint8_t)((k * 7) % 20));
    save(p, "honest_interleaved");

    start(p, 0x01);
    publish(p, 0, 9000, 1);
    publish(p, 3, 3000, 1);
    OP(p, RP_SEND_RANGE, 1, 0, 13); /* reversed */
    save(p, "honest_reversed");

    start(p, 0x02);
    publish(p, 1, 6000, 1);
    for (unsigned k = 0; k < 7; k++) {
        OP(p, RP_SEND_POOL, 0, (uint8_t)k);
        OP(p, RP_SEND_POOL, 0, (uint8_t)k); /* every fragment twice */
    }
    OP(p, RP_SEND_RANGE, 0, 0, 7); /* and the whole message again */
    save(p, "honest_duplicates");

    start(p, 0x08);
    publish(p, 2, 8000, 1);
    OP(p, RP_SEND_RANGE, 0, 0, 4); /* half of it, then silence: the partial times out */
    OP(p, RP_CONTROL, 0, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0); /* honest heartbeat */
    tick(p, 200, 2);
    OP(p, RP_SEND_RANGE, 0, 4, 5); /* the rest arrives too late */
    publish(p, 2, 100, 0);
    save(p, "honest_timeout");

    start(p, 0x00);
    publish(p, 0, 50, 0);
    OP(p, RP_SKIP, 0, 0, 10, 0); /* ten lost: a gap */
    publish(p, 0, 60, 0);
    OP(p, RP_SKIP, 0, 0, 0, 8); /* 2048 lost: a reset */
    publish(p, 0, 70, 0);
    OP(p, RP_SKIP, 0, 0, 0xff, 0xff);
    OP(p, RP_CONTROL, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    publish(p, 0, 3000, 0);
    save(p, "honest_gaps_and_reset");
}

/* Spoofed senders replaying honest fragments with one byte changed, ahead of the real ones. */
static void forged_copy_seeds(struct prog *p)
{
    for (unsigned variant = 0; variant < 3; variant++) {
        static const uint8_t configs[3] = {0x07, 0x27, 0x87};
        start(p, configs[variant]);
        publish(p, variant, 5000, 1);
        publish(p, 3, 2500, 1);
        for (unsigned k = 0; k < 9; k++) {
            for (unsigned src = 0; src < RP_HOSTILE; src++)
                OP(p, RP_HOSTILE_COPY, 0, (uint8_t)src, (uint8_t)k, (uint8_t)(40 + k * 31 + src),
                   (uint8_t)(src + 1));
            OP(p, RP_SEND_POOL, 0, (uint8_t)k);
        }
        OP(p, RP_POLL, 0, 0);
        char name[64];
        snprintf(name, sizeof(name), "forged_copies_%u", variant);
        save(p, name);
    }

    /* The honest stream exists first; then every spoof sends each later fragment, one byte
     * changed, before the honest one: a reassembler that mixed sources would deliver it. */
    for (unsigned pub = 0; pub < RP_PUBLISHERS; pub += 3) {
        start(p, 0x07);
        publish(p, pub, 5000, 1);
        OP(p, RP_SEND_POOL, 0, 0);
        for (unsigned k = 1; k < 6; k++) {
            for (unsigned src = 0; src < RP_HOSTILE; src++)
                OP(p, RP_HOSTILE_COPY, 0, (uint8_t)src, (uint8_t)k, (uint8_t)(50 + 7 * src), 0x5a);
            OP(p, RP_SEND_POOL, 0, (uint8_t)k);
        }
        char name[64];
        snprintf(name, sizeof(name), "forged_copies_joining_%u", pub);
        save(p, name);
    }

    start(p, 0x00);
    publish(p, 0, 3000, 1);
    for (unsigned k = 0; k < 4; k++) /* an exact header copy, payload changed, from every spoof */
        for (unsigned src = 0; src < RP_HOSTILE; src++)
            OP(p, RP_HOSTILE_COPY, 0, (uint8_t)src, (uint8_t)k, 200, 0xff);
    OP(p, RP_SEND_RANGE, 0, 0, 4);
    save(p, "forged_copies_first");
}

/* Headers with honest session ids and sequences from spoofed sources: jumps, conflicts, bogus
 * lengths, every frame type. */
static void forged_header_seeds(struct prog *p)
{
    start(p, 0x20);
    publish(p, 0, 4000, 1);
    for (unsigned k = 0; k < 16; k++) {
        uint8_t type = (uint8_t)(k % 5);
        /* [src][type][flags][session][topic][seq x4][msg_len x3][offset x3][plen x2][ord][count] */
        OP(p, RP_HOSTILE_HDR, 1, (uint8_t)k, type, (uint8_t)(k & 3 ? 0x2 : 0x1), 0, 0, (uint8_t)k,
           0, 0, 0, 0xa0, 0x0f, 0, (uint8_t)(k * 0x40), (uint8_t)(k >> 2), 0, 0xe0, 0x03, 1, 1);
        if (k % 4 == 3)
            OP(p, RP_SEND_POOL, 0, (uint8_t)(k / 4));
    }
    OP(p, RP_SEND_RANGE, 0, 0, 5);
    save(p, "forged_headers_near_honest");

    start(p, 0x00);
    publish(p, 1, 2000, 0);
    for (unsigned k = 0; k < 8; k++) /* window jumps of 2^31 and more on the honest session */
        OP(p, RP_HOSTILE_HDR, 0, (uint8_t)k, 0, 3, 1, 1, 0, 0, 0, (uint8_t)(0x80 + 0x10 * k), 8, 0,
           0, 0, 0, 0, 8, 0, 1, 1);
    publish(p, 1, 2000, 0);
    save(p, "forged_window_jumps");

    start(p, 0x00); /* declared lengths up to the maximum, tiny payloads: arena pressure */
    for (unsigned k = 0; k < 24; k++)
        OP(p, RP_HOSTILE_HDR, 0, (uint8_t)k, 0, 1, (uint8_t)(6 + k), (uint8_t)(k % 3), (uint8_t)k,
           0, 0, 0, 0x00, 0x60, 0x00, 0, 0, 0, 0x10, 0x00, 1, 1);
    publish(p, 0, 15000, 0);
    save(p, "forged_big_declared_lengths");

    start(p, 0x00);
    publish(p, 0, 3000, 1);
    for (unsigned k = 0; k < 12; k++) /* bad versions, types, flags, short datagrams */
        OP(p, RP_HOSTILE_HDR, 0, (uint8_t)k, (uint8_t)(240 + k), (uint8_t)(0x10 << (k % 4)), 0, 3,
           0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, (uint8_t)k, 0, 1, 1);
    OP(p, RP_SEND_RANGE, 0, 0, 4);
    save(p, "forged_bad_headers");
}

/* Several messages per datagram: in order, lost (gaps count messages), reordered, duplicated,
 * forged with counts that do not match and ordinals that go backwards. */
static void batch_seeds(struct prog *p)
{
    start(p, 0x05);
    for (unsigned k = 0; k < 8; k++)
        publish_n(p, k % RP_PUBLISHERS, 16, 10 + 7 * k, 0);
    save(p, "batches_in_order");

    start(p, 0x01);
    publish_n(p, 0, 16, 300, 1); /* 16 messages of up to 1.5 payloads: batches and fragments */
    publish_n(p, 0, 16, 40, 1);
    for (unsigned k = 0; k < 14; k += 1 + (k % 4 == 2))
        OP(p, RP_SEND_POOL, 0, (uint8_t)k);
    OP(p, RP_SEND_RANGE, 1, 0, 4); /* duplicates, reversed */
    tick(p, 40, 1);
    OP(p, RP_SEND_POOL, 0, 3); /* late after its gap */
    OP(p, RP_SKIP, 0, 0, 3, 0);
    publish_n(p, 0, 4, 20, 0);
    save(p, "batches_lost_reordered");

    start(p, 0x00);
    publish_n(p, 3, 8, 30, 0);
    for (unsigned k = 0; k < 12; k++) /* forged batches near the honest session (hi 3) */
        OP(p, RP_HOSTILE_HDR, 3, (uint8_t)k, 0, 3, 3, 0, (uint8_t)(k % 3), 0, 0, 0, 0, 0, 0, 0, 0,
           0, (uint8_t)(40 + 9 * k), 0, (uint8_t)(k % 2 ? -3 : 2), (uint8_t)(k % 3 ? 0x80 | k : k));
    for (unsigned k = 0; k < 8; k++) /* counts that do not match: huge, zero on whole */
        OP(p, RP_HOSTILE_HDR, 0, (uint8_t)k, 0, 3, (uint8_t)(6 + k), 0, (uint8_t)k, 0, 0, 0, 5, 0,
           0, 0, 0, 0, 5, 0, (uint8_t)(-1 - (int)k), (uint8_t)(k % 2 ? 0xF7 : 0));
    publish_n(p, 3, 8, 30, 0);
    save(p, "batches_forged_counts_ordinals");
}

static void raw_seeds(struct prog *p)
{
    start(p, 0x00);
    for (unsigned k = 0; k < 16; k++) {
        uint8_t junk[64];
        for (unsigned i = 0; i < sizeof(junk); i++)
            junk[i] = (uint8_t)(k * 37 + i * 11);
        junk[0] = (uint8_t)(1 + k % 2); /* versions 1 and 2 (rdps 1.2) */
        junk[1] = (uint8_t)(k % 6);
        OP(p, RP_HOSTILE_RAW, 0, (uint8_t)k, (uint8_t)(k * 4));
        put(p, junk, k * 4);
    }
    publish(p, 2, 1500, 0);
    save(p, "raw_datagrams");
}

/* Session and partial floods from many sources, against honest partials under tight caps. */
static void flood_seeds(struct prog *p)
{
    static const uint8_t configs[4] = {0x00, 0x20, 0x03, 0xa4};
    for (unsigned v = 0; v < 4; v++) {
        start(p, configs[v]);
        publish(p, 0, 9000, 1);
        publish(p, 3, 9000, 1);
        for (unsigned k = 0; k < 20; k++) {
            OP(p, RP_HOSTILE_HDR, 0, (uint8_t)k, 0, 1, (uint8_t)(8 + k), 0, (uint8_t)k, 0, 0, 0,
               0x00, 0x40, 0x00, 0, 0, 0, 0xe0, 0x03, 1, 1);
            OP(p, RP_SEND_POOL, 0, (uint8_t)k);
        }
        tick(p, 30, 0);
        char name[64];
        snprintf(name, sizeof(name), "flood_sessions_%u", v);
        save(p, name);
    }

    /* One spoofed source opens more partial messages than its quota (tight: 3), honest ones
     * in between: the spoof evicts its own oldest, never the honest partial. */
    start(p, 0x23);
    publish(p, 0, 4000, 1);
    OP(p, RP_SEND_RANGE, 0, 0, 2);
    for (unsigned k = 0; k < 6; k++) {
        /* [src][type][flags][session][topic][seq x4][msg_len x3][offset x3][plen x2][ord][count] */
        OP(p, RP_HOSTILE_HDR, 0, 1, 0, 1, 0x36, 0, (uint8_t)(32 * k), 0, 0, 0, 0x00, 0x50, 0, 0, 0,
           0, 0xe0, 0x03, 1, 1);
        OP(p, RP_HOSTILE_HDR, 0, 1, 0, 0, 0x36, 0, (uint8_t)(32 * k + 1), 0, 0, 0, 0x00, 0x50, 0,
           0xe0, 0x03, 0, 0xe0, 0x03, 1, 1);
    }
    OP(p, RP_SEND_RANGE, 0, 2, 3);
    save(p, "quota_partials_one_source");

    start(p, 0x00); /* heartbeats of unknown and honest sessions from every spoof */
    publish(p, 0, 100, 0);
    for (unsigned k = 0; k < 32; k++)
        OP(p, RP_CONTROL, 0, (uint8_t)k, (uint8_t)(k & 0x10), (uint8_t)k, (uint8_t)k, 0, 0,
           (uint8_t)(0x40 * (k & 3)), 0, 0, 0, 0);
    publish(p, 0, 100, 0);
    save(p, "flood_heartbeats");

    start(p, 0x00); /* NAK and STATUS from everyone */
    for (unsigned k = 0; k < 16; k++)
        OP(p, RP_CONTROL, 0, (uint8_t)k, (uint8_t)(1 + k % 2 + 0x80 * (k & 1)), (uint8_t)k, 1, 0, 0,
           0, (uint8_t)k, 0, 0, 0);
    publish(p, 1, 100, 0);
    save(p, "nak_status");
}

static void announce_seeds(struct prog *p)
{
    start(p, 0x40); /* small tables: foreign topics from everyone, then our topics */
    for (unsigned k = 0; k < 24; k++)
        OP(p, RP_ANNOUNCE, 0, (uint8_t)k, (uint8_t)(k & 1), (uint8_t)(3 + k % 5), (uint8_t)(6 + k),
           100, 0);
    for (unsigned k = 0; k < 12; k++)
        OP(p, RP_ANNOUNCE, 0, (uint8_t)k, 0, (uint8_t)(k % 3), (uint8_t)k, 50, 0);
    tick(p, 10, 4);
    save(p, "announce_flood_small_tables");

    start(p, 0x00); /* an honest publisher announced, forged leaves and updates from spoofs */
    OP(p, RP_ANNOUNCE, 0, 0, 0, 0, 0, 0xe8, 0x03);
    for (unsigned src = 3; src < 12; src++) {
        OP(p, RP_ANNOUNCE, 0, (uint8_t)src, 2, 0, 0, 0xe8, 0x03); /* leaving */
        OP(p, RP_ANNOUNCE, 0, (uint8_t)src, 0, 0, 0, 1, 0);       /* 1 ms interval */
    }
    publish(p, 0, 500, 0);
    tick(p, 40, 3);
    OP(p, RP_ANNOUNCE, 0, 0, 2, 0, 0, 0xe8, 0x03); /* the real leave */
    save(p, "announce_forged_leave");

    start(p, 0x00); /* bad announcements: session mismatch, topic id mismatch, garbage */
    OP(p, RP_ANNOUNCE, 0, 1, 4, 1, 1, 10, 0);
    OP(p, RP_ANNOUNCE, 0, 2, 8, 0, 3, 10, 0);
    for (unsigned k = 0; k < 8; k++) {
        uint8_t body[32];
        for (unsigned i = 0; i < sizeof(body); i++)
            body[i] = (uint8_t)(0x0a + k * i);
        OP(p, RP_ANNOUNCE_RAW, 0, (uint8_t)k, (uint8_t)(4 * k));
        put(p, body, 4 * k);
    }
    save(p, "announce_bad");

    start(p, 0x40); /* peers come and go while local topics appear and disappear */
    for (unsigned k = 0; k < 8; k++)
        OP(p, RP_ANNOUNCE, 0, (uint8_t)k, (uint8_t)(k & 1), 2, (uint8_t)(6 + k), 20, 0);
    OP(p, RP_SUB, 0, 3); /* fz.c becomes local */
    tick(p, 20, 2);
    OP(p, RP_SUB, 0, 3);
    OP(p, RP_SUB, 0, 3);
    tick(p, 255, 5);
    save(p, "announce_topic_local_churn");
}

/* Callbacks that destroy, create, send and poll. */
static void callback_seeds(struct prog *p)
{
    for (unsigned act = 0; act < RP_ACT_COUNT; act++) {
        start(p, (uint8_t)(act & 1 ? 0x80 : 0x00));
        OP(p, RP_ARM, 0, (uint8_t)act, (uint8_t)(act == RP_ACT_LOCAL_SEND ? 20 : 1));
        publish(p, 0, 3000, 0);
        publish(p, 0, 10, 0);
        OP(p, RP_POLL, 0, 0);
        OP(p, RP_ARM, 0, (uint8_t)act, 0);
        OP(p, RP_LOCAL_SEND, 0, 0x10, 0x00);
        publish(p, 2, 10, 0);
        char name[64];
        snprintf(name, sizeof(name), "callback_action_%u", act);
        save(p, name);
    }

    start(p, 0x00); /* a gap event whose callback destroys the other subscriber of the topic */
    OP(p, RP_ARM, 0, RP_ACT_DESTROY_SLOT, 1);
    publish(p, 3, 10, 0);
    OP(p, RP_SKIP, 0, 3, 5, 0);
    publish(p, 3, 10, 0);
    OP(p, RP_SUB, 0, 1);
    publish(p, 3, 2000, 0);
    save(p, "callback_gap_destroys_other");
}

static void local_seeds(struct prog *p)
{
    start(p, 0x00); /* our publisher's frames looped back from our own source, and replayed */
    OP(p, RP_LOCAL_SEND, 0, 0x40, 0x00);
    OP(p, RP_HOSTILE_COPY, 1, RP_SRC_SELF, 0, 0, 0);
    OP(p, RP_HOSTILE_COPY, 1, 4, 0, 0, 0);
    OP(p, RP_LOCAL_SEND, 0, 0x00, 0x20); /* fragmented */
    OP(p, RP_HOSTILE_COPY, 1, RP_SRC_SELF, 0, 0, 0);
    OP(p, RP_HOSTILE_COPY, 1, 5, 0, 0, 0);
    OP(p, RP_LOCAL_SEND, 1, 0, 0); /* destroy, then a new session */
    OP(p, RP_LOCAL_SEND, 0, 0x10, 0x00);
    tick(p, 60, 0); /* announcements go out */
    OP(p, RP_HOSTILE_COPY, 1, RP_SRC_SELF, 0, 0, 0);
    OP(p, RP_HOSTILE_COPY, 1, 0, 0, 0, 0);
    save(p, "local_and_own_loopback");

    start(p, 0x00); /* subscribers toggled while honest messages are half received */
    publish(p, 1, 6000, 1);
    OP(p, RP_SEND_RANGE, 0, 0, 3);
    OP(p, RP_SUB, 0, 2); /* fz.b loses its only subscriber: frames become unknown-topic */
    OP(p, RP_SEND_RANGE, 0, 3, 2);
    OP(p, RP_SUB, 0, 2);
    OP(p, RP_SEND_RANGE, 0, 5, 2);
    publish(p, 1, 500, 0);
    save(p, "subscriber_churn");
}

/* Time: idle streams, partial timeouts, peer expiry, under the tight quotas. */
static void time_seeds(struct prog *p)
{
    start(p, 0x38);
    for (unsigned k = 0; k < 6; k++) {
        publish(p, k % RP_PUBLISHERS, 3000, 1);
        OP(p, RP_SEND_POOL, 0, (uint8_t)(k * 4));
        tick(p, (uint8_t)(k * 40), 1);
    }
    OP(p, RP_ANNOUNCE, 0, 1, 0, 1, 1, 10, 0);
    tick(p, 255, 3);
    OP(p, RP_SEND_RANGE, 0, 0, 24);
    save(p, "time_expiry_tight");
}

int main(int argc, char **argv)
{
    static struct prog p;
    if (argc != 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR (writes CORPUS_DIR/receive_path/)\n", argv[0]);
        return 2;
    }
    out_dir = argv[1];
    honest_seeds(&p);
    forged_copy_seeds(&p);
    forged_header_seeds(&p);
    batch_seeds(&p);
    raw_seeds(&p);
    flood_seeds(&p);
    announce_seeds(&p);
    callback_seeds(&p);
    local_seeds(&p);
    time_seeds(&p);
    printf("gen_receive_path_seeds: %u seeds in %s/receive_path\n", written, out_dir);
    return 0;
}
