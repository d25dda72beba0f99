/* SPDX-License-Identifier: BSD-2-Clause */
/* archive_bench.c - figures of recorded history (tests/bench/archive-figures.sh runs it):
 *   itch N DIR CODEC LEVEL   N ITCH messages of the demo's generator (tools/md) packed into the
 *                            MoldUDP64 packets md-feed publishes, written by the file layer:
 *                            disk bytes per ITCH message
 *   pubsub N MODE            N such packets published on the loopback device to a reliable
 *                            subscriber (MODE sub) or to a recorder (MODE record, into
 *                            $ARCHIVE_BENCH_DIR): run under callgrind, the difference is the
 *                            recorder's instructions per message
 *   pubsub N MODE SIZE       the same with N rdpub --pattern -s SIZE messages (what the rxe
 *                            replay-merge bench records)
 *   seek DIR GB SEEKS        writes a GB-gigabyte recording into DIR (unless there), then times
 *                            SEEKS seeks to random times, each from a freshly opened reader */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rdps/rdps_archive.h>

#include "arc_writer.h"
#include "itch.h"
#include "md_gen.h"
#include "md_packet.h"
#include "pattern.h"
#include "rdps_clock.h"

#define CHANNELS 8
#define DGRAM    984 /* a 1024-byte datagram less the rdps header: the loopback device's */

/* The demo's feed: ITCH messages 1 us apart packed per channel (flushed when full or 50 us old). */
struct feed {
    struct md_gen gen;
    struct md_packer packers[CHANNELS];
    uint64_t ts, itch_messages, itch_bytes;
};

static void feed_init(struct feed *f)
{
    struct md_gen_config cfg;
    md_gen_config_init(&cfg);
    cfg.channels = CHANNELS;
    if (md_gen_init(&f->gen, &cfg) != 0)
        abort();
    for (int ch = 0; ch < CHANNELS; ch++) {
        struct md_packer_config pc = {.first_seq = 1,
                                      .max_datagram = DGRAM,
                                      .max_msg_len = ITCH_MAX_LEN,
                                      .max_delay_ns = 50000,
                                      .intended_times = true};
        memcpy(pc.session, "BENCH     ", MD_SESSION_LEN);
        if (md_packer_init(&f->packers[ch], &pc) != 0)
            abort();
    }
    f->ts = 34200ull * 1000000000ull; /* 09:30 */
}

/* The next packet md-feed would publish: its channel, bytes and length. */
static int feed_next(struct feed *f, const uint8_t **pkt, size_t *len)
{
    for (;;) {
        for (int ch = 0; ch < CHANNELS; ch++)
            if (md_packer_due(&f->packers[ch], f->ts) && md_packer_flush(&f->packers[ch], pkt, len))
                return ch;
        struct itch_msg m;
        uint32_t ch;
        uint8_t buf[ITCH_MAX_LEN];
        f->ts += 1000;
        int n = md_gen_next(&f->gen, f->ts, &m, &ch);
        if (n < 0 || itch_encode(&m, buf, sizeof(buf)) != n)
            abort();
        f->itch_messages++;
        f->itch_bytes += (uint64_t)n;
        int pr = md_packer_add(&f->packers[ch], buf, (size_t)n, f->ts, f->ts);
        if (pr == -ENOSPC) {
            /* The packet is full: it goes out (copied), the message starts the next one. */
            static uint8_t copy[MD_PACKET_MAX];
            const uint8_t *p;
            size_t l;
            md_packer_flush(&f->packers[ch], &p, &l);
            memcpy(copy, p, l);
            if (md_packer_add(&f->packers[ch], buf, (size_t)n, f->ts, f->ts) < 0)
                abort();
            *pkt = copy;
            *len = l;
            return (int)ch;
        }
        if (pr == MD_PACK_FLUSH && md_packer_flush(&f->packers[ch], pkt, len))
            return (int)ch;
    }
}

static int bench_itch(uint64_t n, const char *dir, int codec, int level)
{
    static struct feed f;
    feed_init(&f);
    struct rdps_arc_writer_opts o = {.dir = dir,
                                     .codec = codec,
                                     .level = level,
                                     .chunk_bytes = 64 * 1024,
                                     .flush_ns = 100000000,
                                     .fsync_ns = UINT64_MAX,
                                     .segment_bytes = 256u << 20,
                                     .spec = "prefix md.",
                                     .max_topics = 64};
    struct rdps_arc_writer *w;
    char report[1024];
    if (rdps__arc_writer_open(&w, &o, rdps__clock_realtime_ns(), report, sizeof(report)) != 0) {
        fprintf(stderr, "archive_bench: %s\n", rdps_last_error_message());
        return 1;
    }
    char topics[CHANNELS][32];
    uint32_t seq[CHANNELS] = {0};
    for (int ch = 0; ch < CHANNELS; ch++)
        snprintf(topics[ch], sizeof(topics[ch]), "md.itch.%d", ch);
    uint64_t packets = 0, packet_bytes = 0, base = rdps__clock_realtime_ns(), writer_ns = 0;
    while (f.itch_messages < n) {
        const uint8_t *pkt;
        size_t len;
        int ch = feed_next(&f, &pkt, &len);
        struct rdps_arc_record r = {.type = RDPS_ARC_REC_MESSAGE,
                                    .topic_id = rdps_topic_id(topics[ch]),
                                    .session_id = 0x5e550000u + (uint32_t)ch,
                                    .seq = seq[ch]++,
                                    .count = 1,
                                    .publisher_ts_ns = base + f.ts,
                                    .recorder_ts_ns = base + f.ts + 20000,
                                    .body = pkt,
                                    .body_len = (uint32_t)len};
        uint64_t a = rdps__clock_monotonic_ns();
        if (rdps__arc_writer_append(w, &r, topics[ch], f.ts) != 0)
            return 1;
        writer_ns += rdps__clock_monotonic_ns() - a;
        packets++;
        packet_bytes += len;
    }
    rdps__arc_writer_flush(w, 0);
    const struct rdps_arc_writer_stats *st = rdps__arc_writer_stats(w);
    printf("itch %s%s%d: %" PRIu64 " ITCH messages (%.1f bytes each on the wire) in %" PRIu64
           " MoldUDP64 packets (%.1f messages, %.0f bytes each)\n",
           codec == RDPS_ARC_CODEC_ZSTD ? "zstd" : "none",
           codec == RDPS_ARC_CODEC_ZSTD ? " level " : "", codec == RDPS_ARC_CODEC_ZSTD ? level : 0,
           f.itch_messages, (double)f.itch_bytes / (double)f.itch_messages, packets,
           (double)f.itch_messages / (double)packets, (double)packet_bytes / (double)packets);
    printf("  disk bytes per ITCH message: %.2f (raw records %.2f; the ITCH bytes alone %.2f); "
           "ratio %.2f; writer %.0f ns per ITCH message (wall, in append)\n",
           (double)st->stored_bytes / (double)f.itch_messages,
           (double)st->raw_bytes / (double)f.itch_messages,
           (double)f.itch_bytes / (double)f.itch_messages,
           (double)st->raw_bytes / (double)st->stored_bytes,
           (double)writer_ns / (double)f.itch_messages);
    rdps__arc_writer_close(w, rdps__clock_realtime_ns());
    return 0;
}

static uint64_t got;
static void on_msg(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    (void)user, (void)data, (void)len, (void)info;
    got++;
}

/* N packets (size 0) or N SIZE-byte messages over the loopback device to a reliable subscriber
 * or to a recorder. */
static int bench_pubsub(uint64_t n, const char *mode, uint32_t size)
{
    static struct feed f;
    feed_init(&f);
    rdps_config cfg;
    rdps_config_init(&cfg);
    cfg.device = "loopback";
    cfg.stats_off = 1;
    rdps_ctx_t *pc, *sc;
    if (rdps_ctx_create(&cfg, &pc) != 0 || rdps_ctx_create(&cfg, &sc) != 0)
        return 1;
    const char *topic = "md.itch.all";
    rdps_sub_t *sub = NULL;
    rdps_recorder_t *rec = NULL;
    bool record = strcmp(mode, "record") == 0;
    if (record) {
        const char *dir = getenv("ARCHIVE_BENCH_DIR");
        const char *level = getenv("ARCHIVE_BENCH_LEVEL"); /* none, or a zstd level */
        rdps_recorder_opts ro = {.dir = dir != NULL ? dir : "/tmp/rdps-archive-bench",
                                 .topics = &topic,
                                 .topic_count = 1};
        if (level != NULL && strcmp(level, "none") == 0)
            ro.compression = RDPS_ARCHIVE_NONE;
        else if (level != NULL)
            ro.zstd_level = atoi(level);
        if (rdps_recorder_create(sc, &ro, &rec) != 0) {
            fprintf(stderr, "archive_bench: %s\n", rdps_last_error_message());
            return 1;
        }
    } else {
        rdps_sub_opts so = {.reliable = 1};
        if (rdps_sub_create(sc, topic, on_msg, NULL, &so, &sub) != 0)
            return 1;
    }
    rdps_pub_opts po = {.reliable = 1};
    rdps_pub_t *pub;
    if (rdps_pub_create(pc, topic, &po, &pub) != 0)
        return 1;
    static uint8_t small[4096];
    for (uint64_t i = 0; i < n; i++) {
        const uint8_t *pkt = small;
        size_t len = size;
        if (size == 0)
            feed_next(&f, &pkt, &len);
        else
            pattern_fill(1, i, small, size);
        while (rdps_pub_send(pub, pkt, len) == RDPS_EAGAIN) {
            rdps_ctx_poll(pc, 0);
            rdps_ctx_poll(sc, 0);
            if (rec != NULL)
                rdps_recorder_poll(rec);
        }
    }
    for (int i = 0; i < 1000; i++) {
        rdps_ctx_poll(pc, 0);
        rdps_ctx_poll(sc, 0);
    }
    rdps_recorder_stats st = {0};
    if (rec != NULL) {
        rdps_recorder_get_stats(rec, &st);
        got = st.messages;
        rdps_recorder_destroy(rec);
    }
    printf("pubsub %s: %" PRIu64 " %s published, %" PRIu64 " received (%" PRIu64
           " ITCH messages); recorded chunks so far: %" PRIu64 " raw bytes stored in %" PRIu64 "\n",
           mode, n, size ? "messages" : "packets", got, f.itch_messages, st.raw_bytes,
           st.stored_bytes);
    rdps_ctx_destroy(pc);
    rdps_ctx_destroy(sc);
    return got == n ? 0 : 1;
}

static int bench_seek(const char *dir, uint64_t gb, int seeks)
{
    char cat[4200];
    snprintf(cat, sizeof(cat), "%s/catalog.rdpc", dir);
    struct stat st;
    uint64_t t0 = 1796550667000000000ull, span = 0;
    uint64_t bodies = gb * 1000000000ull / 4096;
    if (stat(cat, &st) != 0) {
        struct rdps_arc_writer_opts o = {.dir = dir,
                                         .codec = RDPS_ARC_CODEC_NONE,
                                         .chunk_bytes = 64 * 1024,
                                         .flush_ns = 100000000,
                                         .fsync_ns = UINT64_MAX,
                                         .segment_bytes = 256u << 20,
                                         .spec = "topics seek.bench",
                                         .max_topics = 4};
        struct rdps_arc_writer *w;
        char report[256];
        if (rdps__arc_writer_open(&w, &o, t0, report, sizeof(report)) != 0)
            return 1;
        static uint8_t body[4096 - 48];
        uint64_t start = rdps__clock_monotonic_ns();
        for (uint64_t i = 0; i < bodies; i++) {
            memcpy(body, &i, sizeof(i));
            struct rdps_arc_record r = {.type = RDPS_ARC_REC_MESSAGE,
                                        .topic_id = 42,
                                        .session_id = 1,
                                        .seq = (uint32_t)i,
                                        .count = 5,
                                        .publisher_ts_ns = t0 + i * 1000,
                                        .recorder_ts_ns = t0 + i * 1000,
                                        .body = body,
                                        .body_len = sizeof(body)};
            if (rdps__arc_writer_append(w, &r, "seek.bench", i) != 0)
                return 1;
        }
        rdps__arc_writer_close(w, t0 + bodies * 1000);
        printf("seek: wrote %" PRIu64 " GB (%" PRIu64 " records of 4 KiB) in %.1f s\n", gb, bodies,
               (double)(rdps__clock_monotonic_ns() - start) / 1e9);
    }
    span = bodies * 1000;
    uint64_t *ns = calloc((size_t)seeks, sizeof(*ns));
    srand(1);
    for (int k = 0; k < seeks; k++) {
        uint64_t target = t0 + ((uint64_t)rand() * 7919u) % span;
        uint64_t a = rdps__clock_monotonic_ns();
        rdps_archive_reader_t *r;
        rdps_archive_record rec;
        if (rdps_archive_reader_open(dir, 1, &r) != 0 || rdps_archive_reader_seek_time(r, target) ||
            rdps_archive_reader_next(r, &rec) != 1 || rec.recorder_ts_ns < target ||
            rec.recorder_ts_ns >= target + 1000) {
            fprintf(stderr, "seek: wrong record for %" PRIu64 "\n", target);
            return 1;
        }
        ns[k] = rdps__clock_monotonic_ns() - a;
        rdps_archive_reader_close(r);
    }
    for (int i = 1; i < seeks; i++)
        for (int j = i; j > 0 && ns[j - 1] > ns[j]; j--) {
            uint64_t t = ns[j];
            ns[j] = ns[j - 1];
            ns[j - 1] = t;
        }
    printf("seek in a %" PRIu64 " GB recording (open, seek to a random time, read the record), "
           "%d seeks: median %.2f ms, p99 %.2f ms, max %.2f ms\n",
           gb, seeks, ns[seeks / 2] / 1e6, ns[seeks * 99 / 100] / 1e6, ns[seeks - 1] / 1e6);
    free(ns);
    return 0;
}

/* N messages of SIZE bytes on topic rate.test, 1 us apart: the replay-rate recording. */
static int bench_plain(const char *dir, uint64_t n, uint32_t size)
{
    struct rdps_arc_writer_opts o = {.dir = dir,
                                     .codec = RDPS_ARC_CODEC_ZSTD,
                                     .level = 1,
                                     .chunk_bytes = 64 * 1024,
                                     .flush_ns = 100000000,
                                     .fsync_ns = UINT64_MAX,
                                     .segment_bytes = 256u << 20,
                                     .spec = "topics rate.test",
                                     .max_topics = 4};
    struct rdps_arc_writer *w;
    char report[256];
    uint64_t t0 = rdps__clock_realtime_ns();
    if (size > 65536 || rdps__arc_writer_open(&w, &o, t0, report, sizeof(report)) != 0)
        return 1;
    static uint8_t body[65536];
    for (uint64_t i = 0; i < n; i++) {
        memcpy(body, &i, size < 8 ? size : 8);
        struct rdps_arc_record r = {.type = RDPS_ARC_REC_MESSAGE,
                                    .topic_id = rdps_topic_id("rate.test"),
                                    .session_id = 1,
                                    .seq = (uint32_t)i,
                                    .count = 1,
                                    .publisher_ts_ns = t0 + i * 1000,
                                    .recorder_ts_ns = t0 + i * 1000,
                                    .body = body,
                                    .body_len = size};
        if (rdps__arc_writer_append(w, &r, "rate.test", i) != 0)
            return 1;
    }
    rdps__arc_writer_close(w, t0 + n * 1000);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 5 && strcmp(argv[1], "plain") == 0)
        return bench_plain(argv[2], strtoull(argv[3], NULL, 10), (uint32_t)atoi(argv[4]));
    if (argc >= 6 && strcmp(argv[1], "itch") == 0)
        return bench_itch(strtoull(argv[2], NULL, 10), argv[3],
                          strcmp(argv[4], "none") == 0 ? RDPS_ARC_CODEC_NONE : RDPS_ARC_CODEC_ZSTD,
                          atoi(argv[5]));
    if (argc >= 4 && strcmp(argv[1], "pubsub") == 0) {
        uint32_t size = argc >= 5 ? (uint32_t)atoi(argv[4]) : 0;
        if (size > 4096)
            return 2;
        return bench_pubsub(strtoull(argv[2], NULL, 10), argv[3], size);
    }
    if (argc >= 5 && strcmp(argv[1], "seek") == 0)
        return bench_seek(argv[2], strtoull(argv[3], NULL, 10), atoi(argv[4]));
    fprintf(stderr, "usage: archive_bench itch N DIR zstd|none LEVEL | pubsub N sub|record [SIZE] |"
                    " seek DIR GB SEEKS\n");
    return 2;
}
