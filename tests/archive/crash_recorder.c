/* SPDX-License-Identifier: BSD-2-Clause */
/* crash_recorder.c - the victim of test_recorder_crash: a reliable publisher and a recorder in one
 * process on the loopback device, publishing message i = its 8-byte index and a pattern for ever,
 * printing "W n" each time the recorder's written-message count grows to n (then it is killed). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdps/rdps_archive.h>

#include "crash_pattern.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: crash_recorder DIR\n");
        return 2;
    }
    rdps_config cfg;
    rdps_config_init(&cfg);
    cfg.device = "loopback";
    cfg.stats_off = 1;
    rdps_ctx_t *pub_ctx, *rec_ctx;
    if (rdps_ctx_create(&cfg, &pub_ctx) != 0 || rdps_ctx_create(&cfg, &rec_ctx) != 0) {
        fprintf(stderr, "ctx: %s\n", rdps_last_error_message());
        return 4;
    }
    const char *topics[] = {CRASH_TOPIC};
    rdps_recorder_opts ro = {.dir = argv[1],
                             .topics = topics,
                             .topic_count = 1,
                             .flush_ms = 5,
                             .chunk_bytes = 4096,
                             .segment_bytes = 1024 * 1024};
    rdps_recorder_t *rec;
    if (rdps_recorder_create(rec_ctx, &ro, &rec) != 0) {
        fprintf(stderr, "recorder: %s\n", rdps_last_error_message());
        return 4;
    }
    rdps_pub_opts po = {.reliable = 1};
    rdps_pub_t *pub;
    if (rdps_pub_create(pub_ctx, CRASH_TOPIC, &po, &pub) != 0)
        return 4;
    uint8_t msg[CRASH_MAX_LEN];
    uint64_t reported = 0;
    for (uint64_t i = 0;;) {
        /* Paced (about 50 000 a second at most): the rounds stay small. */
        if (i % 16 == 0)
            usleep(200);
        size_t len = crash_message(i, msg);
        if (rdps_pub_send(pub, msg, len) == 0)
            i++;
        rdps_ctx_poll(pub_ctx, 0);
        rdps_ctx_poll(rec_ctx, 0);
        if (rdps_recorder_poll(rec) != 0)
            return 4;
        rdps_recorder_stats st;
        rdps_recorder_get_stats(rec, &st);
        if (st.written_messages > reported) {
            reported = st.written_messages;
            printf("W %" PRIu64 "\n", reported);
            fflush(stdout);
        }
    }
}
