/* SPDX-License-Identifier: BSD-2-Clause */
/* test_history_loopback.c - replay-merge end to end through librdps on the loopback device: a
 * publisher that keeps sending, a recorder, and a late history subscriber that gets every message
 * from the start exactly once and in order across the seam; from a time; from the start of the
 * open sessions after one ended; no recorder at all; a recorder that never answers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include <rdps/rdps_archive.h>

#include "archive_test_util.h"

struct got {
    uint32_t next; /* the index the next message must carry */
    uint32_t first;
    bool any;
    int bad, losses;
    uint64_t first_pub_ts;
};

static void on_msg(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct got *g = user;
    uint32_t index;
    if (len < sizeof(index)) {
        g->bad++;
        return;
    }
    memcpy(&index, data, sizeof(index));
    if (!g->any) {
        g->any = true;
        g->first = g->next = index;
        g->first_pub_ts = info->publisher_ts_ns;
    }
    if (index != g->next)
        g->bad++;
    g->next = index + 1;
}

static void on_event(void *user, const rdps_event *ev)
{
    struct got *g = user;
    if (ev->type == RDPS_EVENT_LOSS)
        g->losses++;
}

struct world {
    rdps_ctx_t *ctx[3]; /* publisher, recorder, late subscriber */
    rdps_recorder_t *rec;
    rdps_history_sub_t *hs;
    rdps_pub_t *pub;
    uint32_t sent;
};

/* One turn of every ctx, the recorder and the history subscriber; returns the latter's poll (0
 * without one). */
static int poll_world(struct world *w)
{
    for (int i = 0; i < 3; i++)
        assert_true(rdps_ctx_poll(w->ctx[i], 0) >= 0);
    if (w->rec != NULL)
        assert_int_equal(rdps_recorder_poll(w->rec), 0);
    int rc = w->hs != NULL ? rdps_history_sub_poll(w->hs) : 0;
    assert_true(rc >= 0);
    return rc;
}

static void send_next(struct world *w)
{
    uint8_t msg[48];
    memset(msg, 0x5a, sizeof(msg));
    memcpy(msg, &w->sent, sizeof(w->sent));
    int rc;
    while ((rc = rdps_pub_send(w->pub, msg, sizeof(msg))) == RDPS_EAGAIN)
        poll_world(w);
    assert_int_equal(rc, 0);
    w->sent++;
}

/* loss: the receive loss generator's rate on the recorder's and the late subscriber's ctx
 * (DATA frames: the live stream and the replay stream lose datagrams, NAKs repair them). */
static void world_init_lossy(struct world *w, const char *dir, bool recorder, double loss)
{
    memset(w, 0, sizeof(*w));
    rdps_config cfg;
    rdps_config_init(&cfg);
    cfg.device = "loopback";
    cfg.stats_off = 1;
    cfg.announce_interval_ms = 500; /* live for 1.5 s: a loaded host may hold this thread */
    for (int i = 0; i < 3; i++) {
        cfg.loss_rx_rate = i == 0 ? 0.0 : loss;
        cfg.loss_seed = 7 + (uint64_t)i;
        assert_int_equal(rdps_ctx_create(&cfg, &w->ctx[i]), 0);
    }
    if (recorder) {
        const char *topics[] = {"live.t"};
        rdps_recorder_opts ro = {.dir = dir, .topics = topics, .topic_count = 1, .flush_ms = 5};
        assert_int_equal(rdps_recorder_create(w->ctx[1], &ro, &w->rec), 0);
    }
    rdps_pub_opts po = {.reliable = 1};
    assert_int_equal(rdps_pub_create(w->ctx[0], "live.t", &po, &w->pub), 0);
}

static void world_init(struct world *w, const char *dir, bool recorder)
{
    world_init_lossy(w, dir, recorder, 0.0);
}

static void world_fini(struct world *w)
{
    rdps_history_sub_destroy(w->hs);
    rdps_recorder_destroy(w->rec);
    for (int i = 0; i < 3; i++)
        rdps_ctx_destroy(w->ctx[i]);
}

/* Publishes `total` messages; the history subscriber comes after `late` of them. */
static void run(struct world *w, struct got *g, uint32_t late, uint32_t total,
                const rdps_history_opts *ho)
{
    while (w->sent < late) {
        send_next(w);
        poll_world(w);
    }
    assert_int_equal(rdps_history_sub_create(w->ctx[2], "live.t", on_msg, g, ho, &w->hs), 0);
    while (w->sent < total) { /* the publisher keeps going while history is replayed */
        send_next(w);
        poll_world(w);
    }
    for (int i = 0; i < 2000000 && (!g->any || g->next != total); i++)
        poll_world(w);
}

static void test_late_subscriber_from_the_start(void **state)
{
    (void)state;
    char dir[256];
    scratch_dir(dir, sizeof(dir), "hist-start");
    struct world w;
    struct got g = {0};
    world_init(&w, dir, true);
    rdps_history_opts ho = {.on_event = on_event, .event_user = &g};
    run(&w, &g, 3000, 8000, &ho);
    assert_int_equal(g.bad, 0);
    assert_int_equal(g.losses, 0);
    assert_int_equal(g.first, 0);
    assert_int_equal(g.next, 8000);
    assert_int_equal(rdps_history_sub_poll(w.hs), 1);
    rdps_recorder_stats st;
    rdps_recorder_get_stats(w.rec, &st);
    assert_int_equal(st.replays_served, 1);
    world_fini(&w);
    scratch_remove(dir);
}

/* The publisher stops long before history catches up: the switch to live delivers the last
 * messages, and the very poll after it says live (it said "merging" once more, and rdsub, which
 * stops at its count, reported a 1 100 000-message rxe run that did go live as still merging). */
static void test_poll_says_live_at_the_switch(void **state)
{
    (void)state;
    char dir[256];
    scratch_dir(dir, sizeof(dir), "hist-switch");
    struct world w;
    struct got g = {0};
    world_init(&w, dir, true);
    rdps_history_opts ho = {.on_event = on_event, .event_user = &g};
    while (w.sent < 6000) {
        send_next(&w);
        poll_world(&w);
    }
    assert_int_equal(rdps_history_sub_create(w.ctx[2], "live.t", on_msg, &g, &ho, &w.hs), 0);
    while (w.sent < 6100)
        send_next(&w);
    int rc = 0;
    for (int i = 0; i < 2000000 && (!g.any || g.next != 6100); i++)
        rc = poll_world(&w);
    assert_int_equal(g.next, 6100);
    assert_int_equal(g.bad, 0);
    assert_int_equal(g.losses, 0);
    assert_int_equal(rc, 1); /* the poll right after the last message */
    world_fini(&w);
    scratch_remove(dir);
}

/* A small live buffer: live runs far ahead of the replay and the seam moves, still exact. */
static void test_late_subscriber_small_buffer(void **state)
{
    (void)state;
    char dir[256];
    scratch_dir(dir, sizeof(dir), "hist-small");
    struct world w;
    struct got g = {0};
    world_init(&w, dir, true);
    rdps_history_opts ho = {.buffer_bytes = 65536, .on_event = on_event, .event_user = &g};
    run(&w, &g, 5000, 12000, &ho);
    assert_int_equal(g.bad, 0);
    assert_int_equal(g.losses, 0);
    assert_int_equal(g.first, 0);
    assert_int_equal(g.next, 12000);
    world_fini(&w);
    scratch_remove(dir);
}

/* 5 % of received datagrams dropped at the recorder and at the late subscriber (live and
 * replay streams alike): repairs keep both whole, the seam stays exact. */
static void test_late_subscriber_under_loss(void **state)
{
    (void)state;
    char dir[256];
    scratch_dir(dir, sizeof(dir), "hist-loss");
    struct world w;
    struct got g = {0};
    world_init_lossy(&w, dir, true, 0.05);
    rdps_history_opts ho = {.buffer_bytes = 65536, .on_event = on_event, .event_user = &g};
    run(&w, &g, 4000, 10000, &ho);
    assert_int_equal(g.bad, 0);
    assert_int_equal(g.losses, 0);
    assert_int_equal(g.first, 0);
    assert_int_equal(g.next, 10000);
    rdps_counters c;
    assert_int_equal(rdps_ctx_counters(w.ctx[2], &c), 0);
    assert_true(c.loss_dropped_rx > 100); /* the loss generator did drop */
    assert_true(c.recovered > 0);         /* and repairs filled the holes */
    world_fini(&w);
    scratch_remove(dir);
}

/* From a time: the first message delivered is the first one recorded at or after it. */
static void test_late_subscriber_from_a_time(void **state)
{
    (void)state;
    char dir[256];
    scratch_dir(dir, sizeof(dir), "hist-time");
    struct world w;
    struct got g = {0};
    world_init(&w, dir, true);
    while (w.sent < 1000) {
        send_next(&w);
        poll_world(&w);
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t from = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    uint32_t sent_before = w.sent;
    rdps_history_opts ho = {.from_ns = from, .on_event = on_event, .event_user = &g};
    run(&w, &g, 2000, 4000, &ho);
    assert_int_equal(g.bad, 0);
    assert_true(g.first >= sent_before && g.first < 2000);
    assert_true(g.first_pub_ts + 1000000000ull >= from); /* recorded after it (same host) */
    assert_int_equal(g.next, 4000);
    world_fini(&w);
    scratch_remove(dir);
}

/* No recorder: the subscriber goes live after its timeout and says so once. */
static void test_no_recorder(void **state)
{
    (void)state;
    struct world w;
    struct got g = {0};
    world_init(&w, NULL, false);
    rdps_history_opts ho = {.timeout_ms = 100};
    assert_int_equal(rdps_history_sub_create(w.ctx[2], "live.t", on_msg, &g, &ho, &w.hs), 0);
    int rc = 0;
    for (int i = 0; i < 5000000 && rc == 0; i++) {
        assert_true(rdps_ctx_poll(w.ctx[0], 0) >= 0);
        assert_true(rdps_ctx_poll(w.ctx[2], 0) >= 0);
        rc = rdps_history_sub_poll(w.hs);
    }
    assert_int_equal(rc, RDPS_ETIMEDOUT);
    assert_non_null(strstr(rdps_last_error_message(), "no recorder found"));
    rdps_history_sub_t *hs = w.hs;
    w.hs = NULL;
    for (int i = 0; i < 100; i++)
        send_next(&w), poll_world(&w), rdps_history_sub_poll(hs);
    for (int i = 0; i < 10000 && g.next != 100; i++)
        poll_world(&w), rdps_history_sub_poll(hs);
    assert_int_equal(g.bad, 0);
    assert_int_equal(g.next, 100);
    rdps_history_sub_destroy(hs);
    world_fini(&w);
}

/* From the start of the open sessions: a session that ended before is not replayed; the one
 * still publishing is, from its first message (the recorder seeks by its own session table). */
static void test_from_session_start_after_an_ended_session(void **state)
{
    (void)state;
    char dir[256];
    scratch_dir(dir, sizeof(dir), "hist-sessions");
    struct world w;
    struct got g = {0};
    world_init(&w, dir, true);
    while (w.sent < 500) {
        send_next(&w);
        poll_world(&w);
    }
    for (int i = 0; i < 20000; i++) /* the recorder has all of the first session */
        poll_world(&w);
    rdps_pub_destroy(w.pub); /* it leaves: a SESSION_END */
    for (int i = 0; i < 2000; i++)
        poll_world(&w);
    rdps_pub_opts po = {.reliable = 1};
    assert_int_equal(rdps_pub_create(w.ctx[0], "live.t", &po, &w.pub), 0);
    w.sent = 0; /* the new session counts from 0 again */
    rdps_history_opts ho = {.from_session_start = 1, .on_event = on_event, .event_user = &g};
    run(&w, &g, 2000, 5000, &ho);
    assert_int_equal(g.bad, 0);
    assert_int_equal(g.losses, 0);
    assert_int_equal(g.first, 0);
    assert_int_equal(g.next, 5000);
    rdps_recorder_stats st;
    rdps_recorder_get_stats(w.rec, &st);
    assert_int_equal(st.sessions_ended, 1);
    world_fini(&w);
    scratch_remove(dir);
}

static void count_request(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    (void)data, (void)len, (void)info;
    (*(unsigned *)user)++;
}

/*
 * A recorder that is found (it subscribes to the request topic) but never answers: the
 * subscriber asks again every second, then goes live and says that a recorder was found and did
 * not answer (not that none was found).
 */
static void test_recorder_that_never_answers(void **state)
{
    (void)state;
    struct world w;
    struct got g = {0};
    world_init(&w, NULL, false);
    char name[64];
    snprintf(name, sizeof(name), "_rdps.hist.%016llx", (unsigned long long)rdps_topic_id("live.t"));
    unsigned requests = 0;
    rdps_sub_t *mute;
    rdps_sub_opts so = {.reliable = 1};
    assert_int_equal(rdps_sub_create(w.ctx[1], name, count_request, &requests, &so, &mute), 0);
    rdps_history_opts ho = {.timeout_ms = 2500};
    assert_int_equal(rdps_history_sub_create(w.ctx[2], "live.t", on_msg, &g, &ho, &w.hs), 0);
    int rc = 0;
    for (int i = 0; i < 50000000 && rc == 0; i++) {
        for (int k = 0; k < 3; k++)
            assert_true(rdps_ctx_poll(w.ctx[k], 0) >= 0);
        rc = rdps_history_sub_poll(w.hs);
    }
    assert_int_equal(rc, RDPS_ETIMEDOUT);
    assert_non_null(strstr(rdps_last_error_message(), "did not answer"));
    for (int i = 0; i < 5000000 && requests < 2; i++)
        for (int k = 0; k < 3; k++)
            assert_true(rdps_ctx_poll(w.ctx[k], 0) >= 0);
    assert_true(requests >= 2);
    rdps_sub_destroy(mute);
    world_fini(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_late_subscriber_from_the_start),
        cmocka_unit_test(test_poll_says_live_at_the_switch),
        cmocka_unit_test(test_late_subscriber_small_buffer),
        cmocka_unit_test(test_late_subscriber_under_loss),
        cmocka_unit_test(test_late_subscriber_from_a_time),
        cmocka_unit_test(test_from_session_start_after_an_ended_session),
        cmocka_unit_test(test_no_recorder),
        cmocka_unit_test(test_recorder_that_never_answers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
