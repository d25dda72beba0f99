/* SPDX-License-Identifier: BSD-2-Clause */
/* test_recorder_loopback.c - record and replay end to end through librdps on the in-process
 * loopback device: a reliable publisher, a recorder of named topics and of a prefix, the
 * recording read back, and replayed under another name to a subscriber of a third ctx. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rdps/rdps_archive.h>

#include "archive_test_util.h"

static void loopback_cfg(rdps_config *cfg)
{
    rdps_config_init(cfg);
    cfg->device = "loopback";
    cfg->stats_off = 1;
    /* Peers are live for three intervals: 20 ms made a publisher "gone" whenever a loaded host
     * held this one-thread test for 60 ms (a session end record among its messages). */
    cfg->announce_interval_ms = 500;
}

struct events {
    int topic_added, stopped, recovered;
    char last_topic[256];
};

static void on_recorder_event(void *user, const rdps_recorder_event *ev)
{
    struct events *e = user;
    if (ev->type == RDPS_RECORDER_TOPIC_ADDED) {
        e->topic_added++;
        snprintf(e->last_topic, sizeof(e->last_topic), "%s", ev->topic);
    } else if (ev->type == RDPS_RECORDER_STOPPED) {
        e->stopped++;
    } else if (ev->type == RDPS_RECORDER_RECOVERED) {
        e->recovered++;
    }
}

static void poll_all(rdps_ctx_t **ctxs, int n, rdps_recorder_t *rec)
{
    for (int i = 0; i < n; i++)
        assert_true(rdps_ctx_poll(ctxs[i], 0) >= 0);
    if (rec != NULL)
        assert_int_equal(rdps_recorder_poll(rec), 0);
}

/* Publishes count messages "topic:i" through back-pressure. */
static void publish(rdps_ctx_t **ctxs, int n, rdps_recorder_t *rec, rdps_pub_t *pub,
                    const char *topic, int count)
{
    for (int i = 0; i < count; i++) {
        char msg[64];
        int len = snprintf(msg, sizeof(msg), "%s:%d", topic, i);
        int rc;
        while ((rc = rdps_pub_send(pub, msg, (size_t)len)) == RDPS_EAGAIN)
            poll_all(ctxs, n, rec);
        assert_int_equal(rc, 0);
    }
}

static void wait_recorded(rdps_ctx_t **ctxs, int n, rdps_recorder_t *rec, uint64_t messages)
{
    rdps_recorder_stats st;
    for (int i = 0; i < 200000; i++) {
        poll_all(ctxs, n, rec);
        assert_int_equal(rdps_recorder_get_stats(rec, &st), 0);
        if (st.messages >= messages)
            return;
    }
    fail_msg("recorded %llu of %llu messages", (unsigned long long)st.messages,
             (unsigned long long)messages);
}

static void test_record_named_topics_and_read_back(void **state)
{
    (void)state;
    char dir[256];
    scratch_dir(dir, sizeof(dir), "rec-lb");
    rdps_config cfg;
    loopback_cfg(&cfg);
    rdps_ctx_t *ctxs[2];
    assert_int_equal(rdps_ctx_create(&cfg, &ctxs[0]), 0);
    assert_int_equal(rdps_ctx_create(&cfg, &ctxs[1]), 0);
    const char *topics[] = {"rec.a", "rec.b"};
    struct events ev = {0};
    rdps_recorder_opts ro = {.dir = dir,
                             .topics = topics,
                             .topic_count = 2,
                             .on_event = on_recorder_event,
                             .event_user = &ev};
    rdps_recorder_t *rec;
    assert_int_equal(rdps_recorder_create(ctxs[1], &ro, &rec), 0);
    rdps_pub_opts po = {.reliable = 1};
    rdps_pub_t *pa, *pb;
    assert_int_equal(rdps_pub_create(ctxs[0], "rec.a", &po, &pa), 0);
    assert_int_equal(rdps_pub_create(ctxs[0], "rec.b", &po, &pb), 0);
    for (int i = 0; i < 100 && (!rdps_pub_ready(pa) || !rdps_pub_ready(pb)); i++)
        poll_all(ctxs, 2, rec);
    publish(ctxs, 2, rec, pa, "rec.a", 3000);
    publish(ctxs, 2, rec, pb, "rec.b", 2000);
    wait_recorded(ctxs, 2, rec, 5000);
    rdps_recorder_stats st;
    assert_int_equal(rdps_recorder_get_stats(rec, &st), 0);
    assert_int_equal(st.recording_id, 1);
    assert_int_equal(st.overrun_messages, 0);
    assert_int_equal(st.topics, 2);
    rdps_recorder_destroy(rec);

    /* Read back: each topic's messages in order, intact, one session each, its start marked. */
    rdps_archive_reader_t *r;
    rdps_archive_record rr;
    assert_int_equal(rdps_archive_reader_open(dir, 0, &r), 0);
    int next[2] = {0, 0}, starts = 0;
    uint64_t last_ts = 0;
    int rc;
    while ((rc = rdps_archive_reader_next(r, &rr)) == 1) {
        assert_true(rr.recorder_ts_ns >= last_ts);
        last_ts = rr.recorder_ts_ns;
        if (rr.type == RDPS_ARCHIVE_SESSION_START) {
            starts++;
            continue;
        }
        assert_int_equal(rr.type, RDPS_ARCHIVE_MESSAGE);
        int t = strcmp(rr.topic, "rec.a") == 0 ? 0 : 1;
        assert_string_equal(rr.topic, topics[t]);
        char want[64];
        int len = snprintf(want, sizeof(want), "%s:%d", topics[t], next[t]);
        assert_int_equal(rr.len, (size_t)len);
        assert_memory_equal(rr.data, want, (size_t)len);
        assert_true(rr.publisher_ts_ns > 0);
        next[t]++;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(next[0], 3000);
    assert_int_equal(next[1], 2000);
    assert_int_equal(starts, 2);
    rdps_archive_reader_close(r);
    assert_int_equal(rdps_archive_verify(dir, 1, NULL, NULL, NULL), 0);
    rdps_ctx_destroy(ctxs[0]);
    rdps_ctx_destroy(ctxs[1]);
    scratch_remove(dir);
}

static void test_record_prefix(void **state)
{
    (void)state;
    char dir[256];
    scratch_dir(dir, sizeof(dir), "rec-pfx");
    rdps_config cfg;
    loopback_cfg(&cfg);
    rdps_ctx_t *ctxs[2];
    assert_int_equal(rdps_ctx_create(&cfg, &ctxs[0]), 0);
    assert_int_equal(rdps_ctx_create(&cfg, &ctxs[1]), 0);
    struct events ev = {0};
    rdps_recorder_opts ro = {
        .dir = dir, .prefix = "md.", .on_event = on_recorder_event, .event_user = &ev};
    rdps_recorder_t *rec;
    assert_int_equal(rdps_recorder_create(ctxs[1], &ro, &rec), 0);
    rdps_pub_opts po = {.reliable = 1};
    rdps_pub_t *p1, *p2;
    assert_int_equal(rdps_pub_create(ctxs[0], "md.quotes", &po, &p1), 0);
    assert_int_equal(rdps_pub_create(ctxs[0], "other.quotes", &po, &p2), 0);
    /* The prefix's topic is found through discovery; the other one is not recorded. */
    for (int i = 0; i < 500000 && ev.topic_added == 0; i++)
        poll_all(ctxs, 2, rec);
    assert_int_equal(ev.topic_added, 1);
    assert_string_equal(ev.last_topic, "md.quotes");
    /* Its subscriber reports to the reliable publisher before the first send goes. */
    publish(ctxs, 2, rec, p1, "md.quotes", 500);
    publish(ctxs, 2, rec, p2, "other.quotes", 10);
    wait_recorded(ctxs, 2, rec, 500);
    rdps_recorder_destroy(rec);
    rdps_archive_reader_t *r;
    rdps_archive_record rr;
    assert_int_equal(rdps_archive_reader_open(dir, 0, &r), 0);
    int messages = 0;
    while (rdps_archive_reader_next(r, &rr) == 1) {
        if (rr.type != RDPS_ARCHIVE_MESSAGE)
            continue;
        assert_string_equal(rr.topic, "md.quotes");
        messages++;
    }
    assert_int_equal(messages, 500);
    rdps_archive_reader_close(r);
    rdps_ctx_destroy(ctxs[0]);
    rdps_ctx_destroy(ctxs[1]);
    scratch_remove(dir);
}

struct replayed {
    int count, bad;
};

static void on_replayed(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct replayed *r = user;
    char want[64];
    int n = snprintf(want, sizeof(want), "rec.a:%d", r->count);
    if (len != (size_t)n || memcmp(data, want, len) != 0)
        r->bad++;
    (void)info;
    r->count++;
}

/* A recording replayed under another name: a subscriber of that name gets every message in
 * order (what rdps-replay does, through the library). */
static void test_replay_renamed(void **state)
{
    (void)state;
    char dir[256];
    scratch_dir(dir, sizeof(dir), "rec-replay");
    rdps_config cfg;
    loopback_cfg(&cfg);
    rdps_ctx_t *ctxs[2];
    assert_int_equal(rdps_ctx_create(&cfg, &ctxs[0]), 0);
    assert_int_equal(rdps_ctx_create(&cfg, &ctxs[1]), 0);
    const char *topics[] = {"rec.a"};
    rdps_recorder_opts ro = {
        .dir = dir, .topics = topics, .topic_count = 1, .compression = RDPS_ARCHIVE_NONE};
    rdps_recorder_t *rec;
    assert_int_equal(rdps_recorder_create(ctxs[1], &ro, &rec), 0);
    rdps_pub_opts po = {.reliable = 1};
    rdps_pub_t *pub;
    assert_int_equal(rdps_pub_create(ctxs[0], "rec.a", &po, &pub), 0);
    publish(ctxs, 2, rec, pub, "rec.a", 2000);
    wait_recorded(ctxs, 2, rec, 2000);
    rdps_recorder_destroy(rec);
    rdps_pub_destroy(pub);

    struct replayed got = {0};
    rdps_sub_opts so = {.reliable = 1};
    rdps_sub_t *sub;
    assert_int_equal(rdps_sub_create(ctxs[1], "replay.a", on_replayed, &got, &so, &sub), 0);
    assert_int_equal(rdps_pub_create(ctxs[0], "replay.a", &po, &pub), 0);
    rdps_archive_reader_t *r;
    rdps_archive_record rr;
    assert_int_equal(rdps_archive_reader_open(dir, 1, &r), 0);
    while (rdps_archive_reader_next(r, &rr) == 1) {
        if (rr.type != RDPS_ARCHIVE_MESSAGE)
            continue;
        int rc;
        while ((rc = rdps_pub_send(pub, rr.data, rr.len)) == RDPS_EAGAIN)
            poll_all(ctxs, 2, NULL);
        assert_int_equal(rc, 0);
    }
    rdps_archive_reader_close(r);
    for (int i = 0; i < 100000 && got.count < 2000; i++)
        poll_all(ctxs, 2, NULL);
    assert_int_equal(got.count, 2000);
    assert_int_equal(got.bad, 0);
    rdps_ctx_destroy(ctxs[0]);
    rdps_ctx_destroy(ctxs[1]);
    scratch_remove(dir);
}

struct overrun_events {
    uint64_t reported;
};

static void on_overrun_event(void *user, const rdps_recorder_event *ev)
{
    struct overrun_events *o = user;
    if (ev->type == RDPS_RECORDER_OVERRUN)
        o->reported += ev->count;
}

/*
 * A disk slower than the stream: large incompressible messages at zstd level 19 behind a 1 MiB
 * queue. The network side does not wait: every message published is either recorded or counted
 * dropped, the drops are reported as events and marked by OVERRUN records whose counts add up,
 * and what was recorded is intact and in order.
 */
static void test_overrun_is_counted_and_marked(void **state)
{
    (void)state;
    char dir[256];
    scratch_dir(dir, sizeof(dir), "rec-overrun");
    rdps_config cfg;
    loopback_cfg(&cfg);
    rdps_ctx_t *ctxs[2];
    assert_int_equal(rdps_ctx_create(&cfg, &ctxs[0]), 0);
    assert_int_equal(rdps_ctx_create(&cfg, &ctxs[1]), 0);
    const char *topics[] = {"rec.big"};
    struct overrun_events oe = {0};
    rdps_recorder_opts ro = {.dir = dir,
                             .topics = topics,
                             .topic_count = 1,
                             .zstd_level = 19,
                             .queue_bytes = 1024 * 1024,
                             .on_event = on_overrun_event,
                             .event_user = &oe};
    rdps_recorder_t *rec;
    assert_int_equal(rdps_recorder_create(ctxs[1], &ro, &rec), 0);
    rdps_pub_opts po = {.reliable = 1};
    rdps_pub_t *pub;
    assert_int_equal(rdps_pub_create(ctxs[0], "rec.big", &po, &pub), 0);
    enum { N = 60, SIZE = 400 * 1024 };
    uint8_t *msg = malloc(SIZE);
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < N; i++) {
        for (size_t k = 0; k < SIZE; k += 8) { /* xorshift: nothing to compress */
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            memcpy(msg + k, &x, 8);
        }
        memcpy(msg, &i, sizeof(i));
        int rc;
        while ((rc = rdps_pub_send(pub, msg, SIZE)) == RDPS_EAGAIN)
            poll_all(ctxs, 2, rec);
        assert_int_equal(rc, 0);
    }
    wait_recorded(ctxs, 2, rec, N);
    rdps_recorder_stats st;
    assert_int_equal(rdps_recorder_get_stats(rec, &st), 0);
    assert_int_equal(st.messages, N);
    assert_true(st.overrun_messages > 0); /* the queue holds two of them: the disk is behind */
    rdps_recorder_destroy(rec);
    assert_int_equal(oe.reported, st.overrun_messages);

    rdps_archive_reader_t *r;
    rdps_archive_record rr;
    assert_int_equal(rdps_archive_reader_open(dir, 0, &r), 0);
    uint64_t recorded = 0, marked = 0;
    int last = -1;
    while (rdps_archive_reader_next(r, &rr) == 1) {
        if (rr.type == RDPS_ARCHIVE_OVERRUN) {
            marked += rr.count;
            assert_true(rr.publisher_ts_ns <= rr.recorder_ts_ns);
        } else if (rr.type == RDPS_ARCHIVE_MESSAGE) {
            int i;
            assert_int_equal(rr.len, SIZE);
            memcpy(&i, rr.data, sizeof(i));
            assert_true(i > last);
            last = i;
            recorded++;
        }
    }
    rdps_archive_reader_close(r);
    assert_int_equal(marked, st.overrun_messages);
    assert_int_equal(recorded + marked, N);
    free(msg);
    rdps_ctx_destroy(ctxs[0]);
    rdps_ctx_destroy(ctxs[1]);
    scratch_remove(dir);
}

static void test_bad_options(void **state)
{
    (void)state;
    rdps_config cfg;
    loopback_cfg(&cfg);
    rdps_ctx_t *ctx;
    assert_int_equal(rdps_ctx_create(&cfg, &ctx), 0);
    rdps_recorder_t *rec;
    rdps_recorder_opts ro = {.dir = "/tmp/unused"};
    assert_int_equal(rdps_recorder_create(ctx, &ro, &rec), RDPS_EINVAL); /* nothing to record */
    const char *bad[] = {"has space"};
    char dir[256];
    scratch_dir(dir, sizeof(dir), "rec-bad");
    ro = (rdps_recorder_opts){.dir = dir, .topics = bad, .topic_count = 1};
    assert_int_equal(rdps_recorder_create(ctx, &ro, &rec), RDPS_EINVAL);
    ro = (rdps_recorder_opts){.dir = dir, .prefix = "x", .chunk_bytes = 100};
    assert_int_equal(rdps_recorder_create(ctx, &ro, &rec), RDPS_EINVAL);
    /* One recorder per directory. */
    ro = (rdps_recorder_opts){.dir = dir, .prefix = "x"};
    rdps_recorder_t *other;
    assert_int_equal(rdps_recorder_create(ctx, &ro, &rec), 0);
    assert_int_equal(rdps_recorder_create(ctx, &ro, &other), RDPS_EBUSY);
    assert_non_null(strstr(rdps_last_error_message(), "another recorder"));
    rdps_recorder_destroy(rec);
    rdps_ctx_destroy(ctx);
    scratch_remove(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record_named_topics_and_read_back),
        cmocka_unit_test(test_record_prefix),
        cmocka_unit_test(test_replay_renamed),
        cmocka_unit_test(test_overrun_is_counted_and_marked),
        cmocka_unit_test(test_bad_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
