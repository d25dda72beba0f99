/* SPDX-License-Identifier: BSD-2-Clause */
/* make_recording.c - writes a known recording for the tools' tests: COUNT messages "topic:i" on
 * arc.a and arc.b (every 100th of 6000 bytes, above one datagram), a session start per topic and
 * one loss marker, through the file layer.
 * usage: make_recording DIR COUNT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdps/rdps.h>

#include "arc_writer.h"

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: make_recording DIR COUNT\n");
        return 2;
    }
    struct rdps_arc_writer_opts o = {
        .dir = argv[1],
        .codec = RDPS_ARC_CODEC_ZSTD,
        .level = 1,
        .chunk_bytes = 16384,
        .flush_ns = 100000000,
        .fsync_ns = UINT64_MAX,
        .segment_bytes = 64 * 1024,
        .spec = "topics arc.a,arc.b",
        .max_topics = 16,
    };
    long count = atol(argv[2]);
    uint64_t ts = 1796550667000000000ull; /* 2026-12-06T09:51:07Z */
    struct rdps_arc_writer *w;
    char report[512];
    if (rdps__arc_writer_open(&w, &o, ts, report, sizeof(report)) != 0) {
        fprintf(stderr, "make_recording: %s\n", rdps_last_error_message());
        return 1;
    }
    static const char *topics[] = {"arc.a", "arc.b"};
    static uint8_t body[6000];
    uint32_t seq[2] = {0, 0};
    for (int t = 0; t < 2; t++) {
        uint8_t src[RDPS_ARC_SESSION_BODY_LEN] = {0};
        struct rdps_arc_record r = {.type = RDPS_ARC_REC_SESSION_START,
                                    .topic_id = rdps_topic_id(topics[t]),
                                    .session_id = 0x1000u + (uint32_t)t,
                                    .recorder_ts_ns = ts,
                                    .body = src,
                                    .body_len = sizeof(src)};
        rdps__arc_writer_append(w, &r, topics[t], 0);
    }
    for (long i = 0; i < count; i++) {
        int t = (int)(i % 2);
        uint32_t len;
        if (i % 100 == 99) {
            len = sizeof(body);
            memset(body, 'x', len);
        } else {
            len = (uint32_t)snprintf((char *)body, sizeof(body), "%s:%ld", topics[t], i);
        }
        struct rdps_arc_record r = {.type = RDPS_ARC_REC_MESSAGE,
                                    .topic_id = rdps_topic_id(topics[t]),
                                    .session_id = 0x1000u + (uint32_t)t,
                                    .seq = seq[t],
                                    .count = len > 4000 ? 2 : 1,
                                    .publisher_ts_ns = ts + (uint64_t)i * 1000000 - 1000,
                                    .recorder_ts_ns = ts + (uint64_t)i * 1000000,
                                    .body = body,
                                    .body_len = len};
        seq[t] += r.count;
        if (rdps__arc_writer_append(w, &r, topics[t], 0) != 0)
            return 1;
        if (i == count / 2) {
            uint8_t loss[RDPS_ARC_LOSS_BODY_LEN] = {1, 0, 0, 0, 0, 0, 0, 0};
            struct rdps_arc_record l = {.type = RDPS_ARC_REC_LOSS,
                                        .topic_id = rdps_topic_id(topics[0]),
                                        .session_id = 0x1000u,
                                        .seq = seq[0],
                                        .count = 3,
                                        .recorder_ts_ns = r.recorder_ts_ns,
                                        .body = loss,
                                        .body_len = sizeof(loss)};
            seq[0] += 3;
            rdps__arc_writer_append(w, &l, topics[0], 0);
        }
    }
    int rc = rdps__arc_writer_error(w);
    rdps__arc_writer_close(w, ts + (uint64_t)count * 1000000);
    return rc == 0 ? 0 : 1;
}
