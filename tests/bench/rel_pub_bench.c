/* SPDX-License-Identifier: BSD-2-Clause */
/* rel_pub_bench.c - the reliable publisher's cost per message: append into the ring, post,
 * complete, with one receiver's STATUS every 256 messages (run under callgrind by
 * rel-pub-instructions.sh). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdps/rdps.h>

#include "rdps_rel_pub.h"

/* Usage: rel_pub_bench MESSAGES [MSG_BYTES (64)] [MAX_DATAGRAM (1024)]. Exit 0 when every
 * message was appended and posted once, in order. */
int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s MESSAGES [MSG_BYTES] [MAX_DATAGRAM]\n", argv[0]);
        return 2;
    }
    unsigned long n = strtoul(argv[1], NULL, 10);
    size_t msg_len = argc > 2 ? strtoul(argv[2], NULL, 10) : 64;
    uint32_t dgram = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 1024;
    struct rdps_rel_pub_config cfg;
    rdps__rel_pub_config_default(&cfg);
    cfg.session_id = 0x1234;
    cfg.topic_id = 0x55;
    cfg.max_datagram = dgram;
    cfg.ring_mem = malloc(cfg.ring_bytes);
    uint8_t *msg = calloc(1, msg_len ? msg_len : 1);
    if (cfg.ring_mem == NULL || msg == NULL)
        return 1;
    struct rdps_rel_pub p;
    if (rdps__rel_pub_init(&p, &cfg) < 0) {
        fprintf(stderr, "init: %s\n", rdps_last_error_message());
        return 1;
    }
    struct rdps_source rx;
    memset(&rx, 0, sizeof(rx));
    rx.qpn = 77;
    rx.has_gid = 1;
    struct rdps_rel_status st = {cfg.session_id, cfg.topic_id, 1, 0, 4096, RDPS_REL_NO_ECHO, 0};
    uint64_t now = 1000000000ull, frames = 0, last_status = 0, expect = cfg.first_seq;
    struct rdps_rel_pub_action a;
    /* Discovery announced it (from its own source): it takes part in flow control. */
    if (rdps__rel_pub_receiver_tag(&p, &rx, 1, 0, now) < 0)
        return 1;
    for (unsigned long i = 0; i < n; i++) {
        now += 1000;
        memcpy(msg, &i, msg_len < sizeof(i) ? msg_len : sizeof(i));
        int rc = rdps__rel_pub_append(&p, msg, msg_len, now, now);
        if (rc < 1) {
            fprintf(stderr, "append %lu: %d\n", i, rc);
            return 1;
        }
        while (rdps__rel_pub_next_action(&p, now, now, &a) == 1) {
            if (a.kind == RDPS_REL_PUB_POST_DATA) {
                if (a.seq != (uint32_t)expect++)
                    return 1;
                frames++;
            }
            if (a.in_ring)
                rdps__rel_pub_send_done(&p, 1);
        }
        if (frames - last_status >= 256) { /* a receiver keeping up: STATUS every 256 frames */
            last_status = frames;
            st.consumed_seq = rdps__rel_pub_next_seq(&p);
            rdps__rel_pub_on_status(&p, &rx, &st, now, now);
        }
    }
    const struct rdps_rel_pub_counters *c = rdps__rel_pub_counters(&p);
    printf("messages %llu frames %llu heartbeats %llu backpressure %llu\n",
           (unsigned long long)c->msgs_appended, (unsigned long long)frames,
           (unsigned long long)c->heartbeats,
           (unsigned long long)(c->backpressure_ring + c->backpressure_window));
    int ok = c->msgs_appended == n && frames == c->frames_appended;
    rdps__rel_pub_fini(&p);
    free(cfg.ring_mem);
    free(msg);
    return ok ? 0 : 1;
}
