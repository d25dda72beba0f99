/* SPDX-License-Identifier: BSD-2-Clause */
/* engine_bench.c - pushes N messages through fragmenter -> in-memory frames -> receive engine ->
 * delivery. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdps/rdps.h>

#include "rdps_frag.h"
#include "rdps_reasm.h"

/*
 * Usage: engine_bench N [MSG_BYTES (64)] [MAX_DATAGRAM (1024)] [SESSIONS (1)]
 *        [copy|zerocopy|reliable|reliable-loss]
 * zerocopy publishes single-datagram messages the way a claim/commit API
 * does: the payload is written in place and rdps__frag_put_single() adds
 * the header (messages that need fragments still use the fragmenter).
 * reliable does the same with the RELIABLE flag into a receiver in reliable
 * mode, calling rdps__reasm_rel_poll() after every frame (STATUS frames go
 * to a counting sink), lossless. reliable-loss holds back one frame in 20 and feeds it
 * LOSS_REPAIR_AFTER frames later as a repair (RETRANSMIT), as a 5 % loss repaired a few
 * hundred frames later would: the cost of parking above holes and releasing in order.
 * Runs N messages end to end in one process (no I/O, fake clock) and prints
 * one line of JSON. Built for instruction counting under callgrind
 * (engine-instructions.sh), so it does nothing but the engine work per
 * message: one frame buffer reused, no allocation in the loop.
 */

/* reliable-loss: one frame in LOSS_EVERY is held back and comes back LOSS_REPAIR_AFTER frames
 * later (a window of 1024 holds a hole and what arrived after it). */
#define LOSS_EVERY        20u
#define LOSS_REPAIR_AFTER 256u

struct held_frame {
    uint64_t release_at; /* frame count at which it is fed again */
    size_t len;
    uint8_t *bytes;
};

struct bench_feed {
    struct rdps_reasm *r;
    const struct rdps_source *src;
    int reliable, lossy;
    uint64_t frames; /* frames produced */
    struct held_frame held[LOSS_REPAIR_AFTER / LOSS_EVERY + 2];
    unsigned held_head, held_count;
};

static int feed_now(struct bench_feed *f, const uint8_t *frame, size_t len, uint64_t now)
{
    if (rdps__reasm_input(f->r, f->src, frame, len, now) < 0)
        return -1;
    if (f->reliable)
        rdps__reasm_rel_poll(f->r, now, now);
    return 0;
}

/* Feeds held frames that are due (all with flush), then this one (or holds it). */
static int feed(struct bench_feed *f, uint8_t *frame, size_t len, uint64_t now, int flush)
{
    const unsigned cap = sizeof(f->held) / sizeof(f->held[0]);
    while (f->held_count > 0 && (flush || f->held[f->held_head].release_at <= f->frames)) {
        struct held_frame *h = &f->held[f->held_head];
        if (feed_now(f, h->bytes, h->len, now) < 0)
            return -1;
        f->held_head = (f->held_head + 1) % cap;
        f->held_count--;
    }
    if (frame == NULL)
        return 0;
    uint64_t k = f->frames++;
    if (f->lossy && k % LOSS_EVERY == 7 && f->held_count < cap) {
        struct held_frame *h = &f->held[(f->held_head + f->held_count++) % cap];
        memcpy(h->bytes, frame, len);
        h->len = len;
        h->release_at = k + LOSS_REPAIR_AFTER;
        uint16_t flags =
            (uint16_t)(h->bytes[RDPS_FRAME_OFF_FLAGS] | (h->bytes[RDPS_FRAME_OFF_FLAGS + 1] << 8) |
                       RDPS_FRAME_F_RETRANSMIT);
        h->bytes[RDPS_FRAME_OFF_FLAGS] = (uint8_t)flags;
        h->bytes[RDPS_FRAME_OFF_FLAGS + 1] = (uint8_t)(flags >> 8);
        return 0;
    }
    return feed_now(f, frame, len, now);
}

struct bench_sink {
    uint64_t delivered, bytes, checksum, control_frames;
};

static void on_control(void *user, const struct rdps_source *dest, uint32_t session_id,
                       const uint8_t *frame, size_t len)
{
    (void)dest;
    (void)session_id;
    (void)frame;
    (void)len;
    ((struct bench_sink *)user)->control_frames++;
}

static void on_deliver(void *user, const uint8_t *msg, uint32_t len,
                       const struct rdps_reasm_msg_info *info)
{
    struct bench_sink *sink = user;
    sink->delivered++;
    sink->bytes += len;
    /* Read one byte so the delivery cannot be optimized into nothing. */
    if (len > 0)
        sink->checksum += msg[len - 1] + info->first_seq;
}

static unsigned long parse_arg(const char *s, const char *what)
{
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (*s == '\0' || *end != '\0') {
        fprintf(stderr, "engine_bench: %s must be a number, got '%s'\n", what, s);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 6) {
        fprintf(stderr,
                "usage: %s N [MSG_BYTES] [MAX_DATAGRAM] [SESSIONS] "
                "[copy|zerocopy|reliable|reliable-loss]\n",
                argv[0]);
        return 2;
    }
    unsigned long n = parse_arg(argv[1], "N");
    size_t msg_bytes = argc > 2 ? parse_arg(argv[2], "MSG_BYTES") : 64;
    uint32_t max_datagram = argc > 3 ? (uint32_t)parse_arg(argv[3], "MAX_DATAGRAM") : 1024;
    uint32_t sessions = argc > 4 ? (uint32_t)parse_arg(argv[4], "SESSIONS") : 1;
    int lossy = argc > 5 && strcmp(argv[5], "reliable-loss") == 0;
    int reliable = lossy || (argc > 5 && strcmp(argv[5], "reliable") == 0);
    int zerocopy = argc > 5 && (strcmp(argv[5], "zerocopy") == 0 || reliable);
    if (argc > 5 && !zerocopy && strcmp(argv[5], "copy") != 0) {
        fprintf(stderr,
                "engine_bench: mode must be copy, zerocopy, reliable or reliable-loss, got '%s'\n",
                argv[5]);
        return 2;
    }
    if (sessions == 0 || max_datagram <= RDPS_FRAME_HEADER_LEN || max_datagram > 65536 ||
        msg_bytes > RDPS_FRAME_DEFAULT_MAX_MSG_LEN) {
        fprintf(stderr, "engine_bench: need SESSIONS >= 1, 32 < MAX_DATAGRAM <= 65536, "
                        "MSG_BYTES <= 16 MiB\n");
        return 2;
    }

    struct bench_sink sink = {0};
    struct rdps_reasm_config cfg;
    rdps__reasm_config_default(&cfg);
    cfg.reasm_cap_bytes = 2 * (msg_bytes + 64) * sessions + 4096;
    cfg.max_sessions = sessions;
    cfg.deliver = on_deliver;
    cfg.user = &sink;
    cfg.rel.enabled = reliable;
    cfg.rel.send = on_control;
    if (reliable) {
        /* The ctx's parking room: a reliable STATUS window is bounded by it (rdps_rel_recv.h),
         * and a one-chunk arena would make every message send a STATUS. */
        cfg.reasm_cap_bytes = 64u << 20;
        cfg.chunk_bytes = 16u << 10;
        cfg.max_partials = 2048;
        cfg.max_partials_per_source = 1024;
    }
    struct rdps_reasm r;
    /* One publisher: a RoCE source (GID fe80::1, QPN 0x11). */
    struct rdps_source src = {.gid = {0xfe, 0x80, [15] = 1}, .qpn = 0x11, .has_gid = 1};
    int rc = rdps__reasm_init(&r, &cfg);
    if (rc != 0) {
        fprintf(stderr, "engine_bench: reasm_init: %s\n", rdps_last_error_message());
        return 1;
    }
    uint8_t *msg = malloc(msg_bytes ? msg_bytes : 1);
    uint8_t *frame = malloc(max_datagram);
    uint32_t *next_seq = calloc(sessions, sizeof(*next_seq));
    if (msg == NULL || frame == NULL || next_seq == NULL) {
        fprintf(stderr, "engine_bench: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < msg_bytes; i++)
        msg[i] = (uint8_t)i;
    struct bench_feed fd = {.r = &r, .src = &src, .reliable = reliable, .lossy = lossy};
    for (size_t i = 0; i < sizeof(fd.held) / sizeof(fd.held[0]); i++)
        if ((fd.held[i].bytes = malloc(max_datagram)) == NULL) {
            fprintf(stderr, "engine_bench: out of memory\n");
            return 1;
        }

    uint64_t frames = 0;
    for (unsigned long i = 0; i < n; i++) {
        uint32_t s = (uint32_t)(i % sessions);
        uint64_t now = i * 1000;
        if (zerocopy && msg_bytes + RDPS_FRAME_HEADER_LEN <= max_datagram) {
            /* The application's payload write into the claimed buffer. */
            memcpy(frame + RDPS_FRAME_HEADER_LEN, msg, msg_bytes);
            int len = rdps__frag_put_single(frame, max_datagram, s + 1, 0x99, &next_seq[s],
                                            msg_bytes, max_datagram, now,
                                            reliable ? RDPS_FRAME_F_RELIABLE : 0, next_seq[s]);
            if (len < 0 || feed(&fd, frame, (size_t)len, now, 0) < 0) {
                fprintf(stderr, "engine_bench: zero-copy publish failed: %d\n", len);
                return 1;
            }
            frames++;
            continue;
        }
        struct rdps_frag it;
        rc = rdps__frag_init(&it, s + 1, 0x99, &next_seq[s], msg, msg_bytes,
                             RDPS_FRAME_DEFAULT_MAX_MSG_LEN, max_datagram, now,
                             reliable ? RDPS_FRAME_F_RELIABLE : 0, next_seq[s]);
        if (rc < 0) {
            fprintf(stderr, "engine_bench: frag_init: %d\n", rc);
            return 1;
        }
        int len;
        while ((len = rdps__frag_next(&it, frame, max_datagram)) > 0) {
            rc = feed(&fd, frame, (size_t)len, now, 0);
            if (rc < 0) {
                fprintf(stderr, "engine_bench: reasm_input: %d\n", rc);
                return 1;
            }
            frames++;
        }
    }
    if (feed(&fd, NULL, 0, n * 1000, 1) < 0) {
        fprintf(stderr, "engine_bench: reasm_input of a held frame failed\n");
        return 1;
    }
    for (size_t i = 0; i < sizeof(fd.held) / sizeof(fd.held[0]); i++)
        free(fd.held[i].bytes);
    const struct rdps_reasm_counters *c = rdps__reasm_counters(&r);
    printf("{\"messages\":%lu,\"msg_bytes\":%zu,\"max_datagram\":%u,\"sessions\":%u,"
           "\"frames\":%llu,\"delivered\":%llu,\"bytes_delivered\":%llu,\"gaps\":%llu,"
           "\"checksum\":%llu,\"control_frames\":%llu}\n",
           n, msg_bytes, max_datagram, sessions, (unsigned long long)frames,
           (unsigned long long)sink.delivered, (unsigned long long)sink.bytes,
           (unsigned long long)c->gaps, (unsigned long long)sink.checksum,
           (unsigned long long)sink.control_frames);
    int ok = sink.delivered == n && c->gaps == 0;
    free(next_seq);
    free(frame);
    free(msg);
    rdps__reasm_fini(&r);
    if (!ok) {
        fprintf(stderr, "engine_bench: delivered %llu of %lu messages\n",
                (unsigned long long)sink.delivered, n);
        return 1;
    }
    return 0;
}
