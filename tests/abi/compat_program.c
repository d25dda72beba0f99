/* SPDX-License-Identifier: BSD-2-Clause */
/* compat_program.c - a program as an application built against an older rdps.h is: compiled
 * against the frozen header of a release (tests/abi/headers/MAJOR.MINOR), run against this
 * librdps. It uses every struct that crosses the API and checks what comes back. */
#include <rdps/rdps.h>

#include <stdio.h>
#include <string.h>

#define CHECK(cond)                                                             \
    do {                                                                        \
        if (!(cond)) {                                                          \
            fprintf(stderr, "FAIL %s:%d: %s (%s)\n", __FILE__, __LINE__, #cond, \
                    rdps_last_error_message());                                 \
            return 1;                                                           \
        }                                                                       \
    } while (0)

struct inbox {
    int messages, events;
    uint64_t topic_id;
};

static void on_msg(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct inbox *in = user;
    if (len == 4 && memcmp(data, "ping", 4) == 0)
        in->messages++;
    in->topic_id = info->topic_id;
}

static void on_event(void *user, const rdps_event *ev)
{
    (void)ev;
    ((struct inbox *)user)->events++;
}

/* A struct followed by canaries: the library must never write past the program's struct. */
struct guarded_counters {
    rdps_counters c;
    unsigned char canary[64];
};
struct guarded_sessions {
    rdps_session_stats s[2];
    unsigned char canary[64];
};

static int canary_intact(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != 0x5a)
            return 0;
    return 1;
}

int main(void)
{
    rdps_config cfg;
    rdps_ctx_t *pctx, *sctx;
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    struct inbox in = {0};
    printf("built against rdps %d.%d.%d, running on librdps %s\n", RDPS_VERSION_MAJOR,
           RDPS_VERSION_MINOR, RDPS_VERSION_PATCH, rdps_version());
    rdps_config_init(&cfg);
    cfg.device = "loopback";
    cfg.stats_off = 1;
    CHECK(rdps_ctx_create(&cfg, &pctx) == 0);
    CHECK(rdps_ctx_create(&cfg, &sctx) == 0);
    rdps_pub_opts popts = {.reliable = 1, .flow = RDPS_FLOW_MIN};
    rdps_sub_opts sopts = {.reliable = 1, .on_event = on_event};
    CHECK(rdps_sub_create(sctx, "abi.compat", on_msg, &in, &sopts, &sub) == 0);
    CHECK(rdps_pub_create(pctx, "abi.compat", &popts, &pub) == 0);
    for (int i = 0; i < 1000 && in.messages < 50; i++) {
        rdps_claim claim;
        if (i % 2 == 0 && rdps_pub_claim(pub, &claim) == 0) {
            memcpy(claim.data, "ping", 4);
            CHECK(rdps_pub_commit(pub, &claim, 4) == 0);
        } else {
            (void)rdps_pub_send(pub, "ping", 4);
        }
        rdps_ctx_poll(pctx, 0);
        rdps_ctx_poll(sctx, 0);
    }
    CHECK(in.messages >= 50);
    CHECK(in.topic_id == rdps_topic_id("abi.compat"));

    struct guarded_counters gc;
    memset(&gc, 0x5a, sizeof(gc));
    CHECK(rdps_sub_counters(sub, &gc.c) == 0);
    CHECK(gc.c.msgs_delivered == (uint64_t)in.messages);
    CHECK(canary_intact(gc.canary, sizeof(gc.canary)));
    memset(&gc, 0x5a, sizeof(gc));
    CHECK(rdps_pub_counters(pub, &gc.c) == 0);
    CHECK(gc.c.msgs_sent >= 50);
    CHECK(canary_intact(gc.canary, sizeof(gc.canary)));
    struct guarded_sessions gs;
    memset(&gs, 0x5a, sizeof(gs));
    CHECK(rdps_sub_sessions(sub, gs.s, 2) == 1);
    CHECK(gs.s[0].session_id == rdps_pub_session(pub));
    CHECK(canary_intact(gs.canary, sizeof(gs.canary)));
    rdps_ctx_destroy(pctx);
    rdps_ctx_destroy(sctx);
    printf("ok: %d messages, %d events, counters and sessions within the program's structs\n",
           in.messages, in.events);
    return 0;
}
