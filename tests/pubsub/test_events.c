/* SPDX-License-Identifier: BSD-2-Clause */
/* test_events.c - typed events over the loopback transport (issue 27 row 9): names, the
 * publisher's subscriber seen/gone events, leave against timeout, replay to late endpoints, the
 * event user pointer, and queries that read 0 on NULL or closed handles. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "pubsub_test_util.h"

#define MS 1000000ull

/* ---- fixture: two contexts on the loopback fabric, each on its own fake clock ---- */

struct fixture {
    struct test_pair pair;
    uint64_t now_a, now_b;
};

static uint64_t clock_of(void *user)
{
    return *(const uint64_t *)user;
}

static int open_fixture(struct fixture *f, const rdps_config *cfg_a)
{
    memset(f, 0, sizeof(*f));
    struct test_pair *p = &f->pair;
    int rc = rdps__loopback_fabric_create(&p->fabric);
    if (rc == 0)
        rc = test_loopback_ctx(p->fabric, cfg_a, 0, &p->a);
    if (rc == 0)
        rc = test_loopback_ctx(p->fabric, NULL, 0, &p->b); /* announces every 1000 ms */
    if (rc != 0)
        return rc;
    f->now_a = f->now_b = 1000 * MS;
    rdps__ctx_set_clock(p->a, clock_of, &f->now_a);
    rdps__ctx_set_clock(p->b, clock_of, &f->now_b);
    return 0;
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    assert_int_equal(open_fixture(f, NULL), 0);
    *state = f;
    return 0;
}

/* a's discovery table holds two peers (one of them for topics without a local endpoint). */
static int setup_small_table(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    rdps_config cfg;
    rdps_config_init(&cfg);
    cfg.announce_interval_ms = 1000;
    cfg.max_peers = 2;
    cfg.max_remote_only_peers = 1;
    assert_int_equal(open_fixture(f, &cfg), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    test_pair_close(&f->pair);
    free(f);
    return 0;
}

/* Polls both contexts `rounds` times, their clocks moving 1 ms a round (no peer expires). */
static void pump(struct fixture *f, int rounds)
{
    for (int i = 0; i < rounds; i++) {
        f->now_a += MS;
        f->now_b += MS;
        assert_true(rdps_ctx_poll(f->pair.a, 0) >= 0);
        assert_true(rdps_ctx_poll(f->pair.b, 0) >= 0);
    }
}

/* ---- what a callback saw ---- */

#define MAX_EVENTS 16

struct seen {
    unsigned n;
    rdps_event ev[MAX_EVENTS]; /* topic: NULL, checked during the call */
    const char *topic;         /* the topic every event must carry */
    void *expected_user;
    unsigned wrong_user, wrong_topic;
};

static void record(void *user, const rdps_event *ev)
{
    struct seen *s = user;
    if (user != s->expected_user)
        s->wrong_user++;
    if (ev->topic == NULL || strcmp(ev->topic, s->topic) != 0)
        s->wrong_topic++;
    assert_true(s->n < MAX_EVENTS);
    s->ev[s->n] = *ev;
    s->ev[s->n].topic = NULL;
    s->n++;
}

static void seen_init(struct seen *s, const char *topic)
{
    memset(s, 0, sizeof(*s));
    s->topic = topic;
    s->expected_user = s;
}

static unsigned count_of(const struct seen *s, rdps_event_type type)
{
    unsigned n = 0;
    for (unsigned i = 0; i < s->n; i++)
        n += s->ev[i].type == type;
    return n;
}

static const rdps_event *last_of(const struct seen *s, rdps_event_type type)
{
    for (unsigned i = s->n; i-- > 0;)
        if (s->ev[i].type == type)
            return &s->ev[i];
    fail_msg("no %s event", rdps_event_name(type));
    return NULL;
}

static void on_message(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    (void)user, (void)data, (void)len, (void)info;
}

/* The source is ctx's own QP (the loopback endpoint's GID and QPN). */
static void assert_source_is(const rdps_source *src, const rdps_ctx_t *ctx)
{
    const rdps_ctx_t *obj = rdps__ctx_of_handle(ctx);
    assert_int_equal(src->qpn, obj->self_qpn);
    assert_int_equal(src->has_gid, 1);
    assert_memory_equal(src->gid, obj->self_gid, 16);
}

/* Only the fields the event's row of the table in rdps.h names are set. */
static void assert_discovery_fields(const rdps_event *ev, uint32_t session_id, uint32_t receiver_id,
                                    int reason)
{
    assert_int_equal(ev->session_id, session_id);
    assert_int_equal(ev->receiver_id, receiver_id);
    assert_int_equal(ev->reason, reason);
    assert_int_equal(ev->first_seq, 0);
    assert_int_equal(ev->count, 0);
}

/* ---- names ---- */

static void test_event_names(void **state)
{
    (void)state;
    static const struct {
        rdps_event_type type;
        const char *name;
    } types[] = {
        {RDPS_EVENT_GAP, "gap"},
        {RDPS_EVENT_PUBLISHER_SEEN, "publisher_seen"},
        {RDPS_EVENT_PUBLISHER_GONE, "publisher_gone"},
        {RDPS_EVENT_QP_RECOVERED, "qp_recovered"},
        {RDPS_EVENT_RECEIVER_EVICTED, "receiver_evicted"},
        {RDPS_EVENT_RECEIVER_RESUMED, "receiver_resumed"},
        {RDPS_EVENT_RECEIVER_TIMED_OUT, "receiver_timed_out"},
        {RDPS_EVENT_LOSS, "loss"},
        {RDPS_EVENT_SUBSCRIBER_SEEN, "subscriber_seen"},
        {RDPS_EVENT_SUBSCRIBER_GONE, "subscriber_gone"},
        {RDPS_EVENT_TOPIC_COLLISION, "topic_collision"},
        {RDPS_EVENT_UNICAST_FALLBACK, "unicast_fallback"},
    };
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        assert_string_equal(rdps_event_name(types[i].type), types[i].name);
    assert_int_equal(RDPS_EVENT_SUBSCRIBER_SEEN, 9);
    assert_int_equal(RDPS_EVENT_SUBSCRIBER_GONE, 10);
    assert_int_equal(RDPS_EVENT_TOPIC_COLLISION, 11);
    assert_int_equal(RDPS_EVENT_UNICAST_FALLBACK, 12);
    assert_string_equal(rdps_event_name((rdps_event_type)0), "unknown");
    assert_string_equal(rdps_event_name((rdps_event_type)-1), "unknown");
    assert_string_equal(rdps_event_name((rdps_event_type)1000), "unknown");

    static const struct {
        rdps_event_type type;
        int reason;
        const char *name;
    } reasons[] = {
        {RDPS_EVENT_LOSS, RDPS_LOSS_BELOW_RING, "below_ring"},
        {RDPS_EVENT_LOSS, RDPS_LOSS_NAK_RETRIES, "nak_retries"},
        {RDPS_EVENT_LOSS, RDPS_LOSS_DEADLINE, "deadline"},
        {RDPS_EVENT_LOSS, RDPS_LOSS_PARTIAL_MESSAGE, "partial_message"},
        {RDPS_EVENT_LOSS, RDPS_LOSS_TOO_LARGE, "too_large"},
        {RDPS_EVENT_LOSS, RDPS_LOSS_SESSION_DROPPED, "session_dropped"},
        {RDPS_EVENT_LOSS, 0, "unknown"},
        {RDPS_EVENT_LOSS, RDPS_LOSS_NOT_IN_RECORDING, "not_in_recording"},
        {RDPS_EVENT_LOSS, 8, "unknown"},
        {RDPS_EVENT_LOSS, -1, "unknown"},
        {RDPS_EVENT_RECEIVER_EVICTED, RDPS_EVICT_LAGGED, "lagged"},
        {RDPS_EVENT_RECEIVER_EVICTED, RDPS_EVICT_STALLED, "stalled"},
        {RDPS_EVENT_RECEIVER_EVICTED, 3, "unknown"},
        {RDPS_EVENT_PUBLISHER_GONE, RDPS_GONE_LEFT, "left"},
        {RDPS_EVENT_PUBLISHER_GONE, RDPS_GONE_TIMED_OUT, "timed_out"},
        {RDPS_EVENT_SUBSCRIBER_GONE, RDPS_GONE_LEFT, "left"},
        {RDPS_EVENT_SUBSCRIBER_GONE, RDPS_GONE_TIMED_OUT, "timed_out"},
        {RDPS_EVENT_SUBSCRIBER_GONE, 0, "unknown"},
        {RDPS_EVENT_UNICAST_FALLBACK, RDPS_FALLBACK_JOIN_FAILED, "join_failed"},
        {RDPS_EVENT_UNICAST_FALLBACK, RDPS_FALLBACK_JOIN_TIMED_OUT, "join_timed_out"},
        {RDPS_EVENT_UNICAST_FALLBACK, RDPS_FALLBACK_NO_MULTICAST, "no_multicast"},
        {RDPS_EVENT_UNICAST_FALLBACK, 4, "unknown"},
        {RDPS_EVENT_GAP, 0, ""},
        {RDPS_EVENT_PUBLISHER_SEEN, 0, ""},
        {RDPS_EVENT_SUBSCRIBER_SEEN, 1, ""}, /* no reason in this type: nothing to name */
        {(rdps_event_type)1000, 1, ""},
    };
    for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
        rdps_event ev = {.type = reasons[i].type, .reason = reasons[i].reason};
        assert_string_equal(rdps_event_reason_name(&ev), reasons[i].name);
    }
    assert_string_equal(rdps_event_reason_name(NULL), "");
    /* The values the enums had as bare ints before they were named. */
    assert_int_equal(RDPS_LOSS_BELOW_RING, 1);
    assert_int_equal(RDPS_LOSS_SESSION_DROPPED, 6);
    assert_int_equal(RDPS_EVICT_LAGGED, 1);
    assert_int_equal(RDPS_EVICT_STALLED, 2);
}

/* ---- publishers hear of their subscribers ---- */

static void test_subscriber_seen_then_left(void **state)
{
    struct fixture *f = *state;
    struct seen ps;
    seen_init(&ps, "ev.sub");
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    rdps_pub_opts popts = {.on_event = record, .event_user = &ps};
    assert_int_equal(rdps_pub_create(f->pair.a, "ev.sub", &popts, &pub), 0);
    assert_int_equal(rdps_sub_create(f->pair.b, "ev.sub", on_message, NULL, NULL, &sub), 0);
    pump(f, 3);
    assert_int_equal(ps.n, 1);
    const rdps_event *ev = &ps.ev[0];
    assert_int_equal(ev->type, RDPS_EVENT_SUBSCRIBER_SEEN);
    assert_discovery_fields(ev, rdps__sub_of_handle(sub)->receiver_id, 0,
                            0); /* unreliable: no receiver id */
    assert_source_is(&ev->source, f->pair.b);
    assert_string_equal(rdps_event_reason_name(ev), "");
    assert_int_equal(rdps_pub_subscriber_count(pub), 1);

    uint32_t id = rdps__sub_of_handle(sub)->receiver_id;
    rdps_sub_destroy(sub);
    pump(f, 3);
    assert_int_equal(ps.n, 2);
    ev = &ps.ev[1];
    assert_int_equal(ev->type, RDPS_EVENT_SUBSCRIBER_GONE);
    assert_discovery_fields(ev, id, 0, RDPS_GONE_LEFT);
    assert_source_is(&ev->source, f->pair.b);
    assert_string_equal(rdps_event_reason_name(ev), "left");
    assert_int_equal(rdps_pub_subscriber_count(pub), 0);
    assert_int_equal(ps.wrong_user, 0);
    assert_int_equal(ps.wrong_topic, 0);
}

/* A reliable subscriber is named by the receiver id its RECEIVER_* events will carry. */
static void test_reliable_subscriber_seen_carries_receiver_id(void **state)
{
    struct fixture *f = *state;
    struct seen ps;
    seen_init(&ps, "ev.rel");
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    rdps_pub_opts popts = {.reliable = 1, .on_event = record, .event_user = &ps};
    rdps_sub_opts sopts = {.reliable = 1};
    assert_int_equal(rdps_pub_create(f->pair.a, "ev.rel", &popts, &pub), 0);
    assert_int_equal(rdps_sub_create(f->pair.b, "ev.rel", on_message, NULL, &sopts, &sub), 0);
    pump(f, 3);
    assert_int_equal(count_of(&ps, RDPS_EVENT_SUBSCRIBER_SEEN), 1);
    const rdps_event *ev = last_of(&ps, RDPS_EVENT_SUBSCRIBER_SEEN);
    assert_int_not_equal(rdps__ctx_of_handle(f->pair.b)->rel_receiver_id, 0);
    assert_discovery_fields(ev, rdps__sub_of_handle(sub)->receiver_id,
                            rdps__ctx_of_handle(f->pair.b)->rel_receiver_id, 0);
    assert_source_is(&ev->source, f->pair.b);
}

/* A subscriber that stops announcing is gone after 3 of its intervals: timed out, not left. */
static void test_subscriber_timed_out(void **state)
{
    struct fixture *f = *state;
    struct seen ps;
    seen_init(&ps, "ev.quiet");
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    rdps_pub_opts popts = {.on_event = record, .event_user = &ps};
    assert_int_equal(rdps_pub_create(f->pair.a, "ev.quiet", &popts, &pub), 0);
    assert_int_equal(rdps_sub_create(f->pair.b, "ev.quiet", on_message, NULL, NULL, &sub), 0);
    pump(f, 3);
    assert_int_equal(count_of(&ps, RDPS_EVENT_SUBSCRIBER_SEEN), 1);
    /* b falls silent (not polled); a lives on. 3 x 1000 ms, and a little. */
    f->now_a += 2900 * MS;
    assert_true(rdps_ctx_poll(f->pair.a, 0) >= 0);
    assert_int_equal(count_of(&ps, RDPS_EVENT_SUBSCRIBER_GONE), 0);
    f->now_a += 200 * MS;
    assert_true(rdps_ctx_poll(f->pair.a, 0) >= 0);
    assert_int_equal(count_of(&ps, RDPS_EVENT_SUBSCRIBER_GONE), 1);
    const rdps_event *ev = last_of(&ps, RDPS_EVENT_SUBSCRIBER_GONE);
    assert_discovery_fields(ev, rdps__sub_of_handle(sub)->receiver_id, 0, RDPS_GONE_TIMED_OUT);
    assert_source_is(&ev->source, f->pair.b);
    assert_string_equal(rdps_event_reason_name(ev), "timed_out");
    assert_int_equal(rdps_pub_subscriber_count(pub), 0);
}

/* ---- subscribers: PUBLISHER_GONE tells a leave from a timeout ---- */

static void test_publisher_gone_left(void **state)
{
    struct fixture *f = *state;
    struct seen ss;
    seen_init(&ss, "ev.pub");
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    rdps_sub_opts sopts = {.on_event = record};
    assert_int_equal(rdps_sub_create(f->pair.b, "ev.pub", on_message, &ss, &sopts, &sub), 0);
    assert_int_equal(rdps_pub_create(f->pair.a, "ev.pub", NULL, &pub), 0);
    pump(f, 3);
    assert_int_equal(count_of(&ss, RDPS_EVENT_PUBLISHER_SEEN), 1);
    uint32_t session = rdps_pub_session(pub);
    assert_discovery_fields(last_of(&ss, RDPS_EVENT_PUBLISHER_SEEN), session, 0, 0);
    rdps_pub_destroy(pub);
    pump(f, 3);
    assert_int_equal(count_of(&ss, RDPS_EVENT_PUBLISHER_GONE), 1);
    const rdps_event *ev = last_of(&ss, RDPS_EVENT_PUBLISHER_GONE);
    assert_discovery_fields(ev, session, 0, RDPS_GONE_LEFT);
    assert_source_is(&ev->source, f->pair.a);
    assert_string_equal(rdps_event_reason_name(ev), "left");
    assert_int_equal(ss.wrong_user, 0);
    assert_int_equal(ss.wrong_topic, 0);
}

static void test_publisher_gone_timed_out(void **state)
{
    struct fixture *f = *state;
    struct seen ss;
    seen_init(&ss, "ev.pub.quiet");
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    rdps_sub_opts sopts = {.on_event = record};
    assert_int_equal(rdps_sub_create(f->pair.b, "ev.pub.quiet", on_message, &ss, &sopts, &sub), 0);
    assert_int_equal(rdps_pub_create(f->pair.a, "ev.pub.quiet", NULL, &pub), 0);
    pump(f, 3);
    assert_int_equal(count_of(&ss, RDPS_EVENT_PUBLISHER_SEEN), 1);
    f->now_b += 3100 * MS; /* a falls silent */
    assert_true(rdps_ctx_poll(f->pair.b, 0) >= 0);
    assert_int_equal(count_of(&ss, RDPS_EVENT_PUBLISHER_GONE), 1);
    const rdps_event *ev = last_of(&ss, RDPS_EVENT_PUBLISHER_GONE);
    assert_discovery_fields(ev, rdps_pub_session(pub), 0, RDPS_GONE_TIMED_OUT);
    assert_source_is(&ev->source, f->pair.a);
    assert_string_equal(rdps_event_reason_name(ev), "timed_out");
}

/* ---- endpoints created after their peers hear of them, once ---- */

static void test_late_publisher_hears_known_subscribers(void **state)
{
    struct fixture *f = *state;
    struct seen p1, p2;
    seen_init(&p1, "ev.late");
    seen_init(&p2, "ev.late");
    rdps_sub_t *s1, *s2;
    rdps_pub_t *pub1, *pub2;
    assert_int_equal(rdps_sub_create(f->pair.b, "ev.late", on_message, NULL, NULL, &s1), 0);
    assert_int_equal(rdps_sub_create(f->pair.b, "ev.late", on_message, NULL, NULL, &s2), 0);
    pump(f, 3); /* a knows them (the topic is not a's yet: kept aside, without events) */
    rdps_pub_opts o1 = {.on_event = record, .event_user = &p1};
    assert_int_equal(rdps_pub_create(f->pair.a, "ev.late", &o1, &pub1), 0);
    assert_int_equal(p1.n, 0); /* nothing from inside create */
    pump(f, 2);
    assert_int_equal(p1.n, 2);
    assert_int_equal(count_of(&p1, RDPS_EVENT_SUBSCRIBER_SEEN), 2);
    assert_true((p1.ev[0].session_id == rdps__sub_of_handle(s1)->receiver_id &&
                 p1.ev[1].session_id == rdps__sub_of_handle(s2)->receiver_id) ||
                (p1.ev[0].session_id == rdps__sub_of_handle(s2)->receiver_id &&
                 p1.ev[1].session_id == rdps__sub_of_handle(s1)->receiver_id));
    assert_int_equal(rdps_pub_subscriber_count(pub1), 2);

    /* The topic is a's now: a second publisher hears of both too, the first nothing again. */
    rdps_pub_opts o2 = {.on_event = record, .event_user = &p2};
    assert_int_equal(rdps_pub_create(f->pair.a, "ev.late", &o2, &pub2), 0);
    pump(f, 2);
    assert_int_equal(count_of(&p2, RDPS_EVENT_SUBSCRIBER_SEEN), 2);
    assert_int_equal(p1.n, 2);

    uint32_t gone_id = rdps__sub_of_handle(s1)->receiver_id;
    rdps_sub_destroy(s1);
    pump(f, 2);
    assert_int_equal(count_of(&p1, RDPS_EVENT_SUBSCRIBER_GONE), 1);
    assert_int_equal(count_of(&p2, RDPS_EVENT_SUBSCRIBER_GONE), 1);
    assert_int_equal(last_of(&p1, RDPS_EVENT_SUBSCRIBER_GONE)->session_id, gone_id);
    assert_int_equal(last_of(&p2, RDPS_EVENT_SUBSCRIBER_GONE)->session_id, gone_id);
    assert_int_equal(p1.n, 3);
    assert_int_equal(p2.n, 3);
}

/*
 * A subscriber created after its ctx learnt of a publisher hears PUBLISHER_SEEN for it before
 * its PUBLISHER_GONE (before: only the GONE, unpaired).
 */
static void test_late_subscriber_hears_known_publishers(void **state)
{
    struct fixture *f = *state;
    struct seen early, late;
    seen_init(&early, "ev.late.sub");
    seen_init(&late, "ev.late.sub");
    rdps_pub_t *pub;
    rdps_sub_t *s1, *s2;
    rdps_sub_opts sopts = {.on_event = record};
    assert_int_equal(rdps_sub_create(f->pair.b, "ev.late.sub", on_message, &early, &sopts, &s1), 0);
    assert_int_equal(rdps_pub_create(f->pair.a, "ev.late.sub", NULL, &pub), 0);
    pump(f, 3);
    assert_int_equal(count_of(&early, RDPS_EVENT_PUBLISHER_SEEN), 1);
    assert_int_equal(rdps_sub_create(f->pair.b, "ev.late.sub", on_message, &late, &sopts, &s2), 0);
    pump(f, 2);
    assert_int_equal(count_of(&late, RDPS_EVENT_PUBLISHER_SEEN), 1);
    assert_int_equal(last_of(&late, RDPS_EVENT_PUBLISHER_SEEN)->session_id, rdps_pub_session(pub));
    assert_source_is(&last_of(&late, RDPS_EVENT_PUBLISHER_SEEN)->source, f->pair.a);
    assert_int_equal(count_of(&early, RDPS_EVENT_PUBLISHER_SEEN), 1); /* not told twice */
    rdps_pub_destroy(pub);
    pump(f, 3);
    assert_int_equal(count_of(&late, RDPS_EVENT_PUBLISHER_GONE), 1);
    assert_int_equal(count_of(&early, RDPS_EVENT_PUBLISHER_GONE), 1);
    assert_int_equal(late.n, 2);
    assert_int_equal(early.n, 2);
}

/* Creates a publisher of "ev.race" from a message callback, in the middle of a poll. */
struct creator {
    rdps_ctx_t *ctx;
    struct seen *seen;
    rdps_pub_t *pub;
};

static void create_on_message(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct creator *c = user;
    (void)data, (void)len, (void)info;
    if (c->pub != NULL)
        return;
    rdps_pub_opts o = {.on_event = record, .event_user = c->seen};
    assert_int_equal(rdps_pub_create(c->ctx, "ev.race", &o, &c->pub), 0);
}

/*
 * A peer that leaves between a new endpoint's creation and its first poll's replay is neither
 * seen nor gone for it: a publisher created by a callback, with the subscriber's leaving
 * announcement next in the same receive batch.
 */
static void test_gone_before_replay_is_not_told(void **state)
{
    struct fixture *f = *state;
    struct seen p1, p2;
    seen_init(&p1, "ev.race");
    seen_init(&p2, "ev.race");
    struct creator c = {.ctx = f->pair.a, .seen = &p2};
    rdps_pub_t *pub1, *trigger;
    rdps_sub_t *sub, *trigger_sub;
    rdps_pub_opts o1 = {.on_event = record, .event_user = &p1};
    assert_int_equal(rdps_pub_create(f->pair.a, "ev.race", &o1, &pub1), 0);
    assert_int_equal(
        rdps_sub_create(f->pair.a, "ev.trigger", create_on_message, &c, NULL, &trigger_sub), 0);
    assert_int_equal(rdps_sub_create(f->pair.b, "ev.race", on_message, NULL, NULL, &sub), 0);
    assert_int_equal(rdps_pub_create(f->pair.b, "ev.trigger", NULL, &trigger), 0);
    pump(f, 3);
    assert_int_equal(count_of(&p1, RDPS_EVENT_SUBSCRIBER_SEEN), 1);
    assert_int_equal(rdps_pub_send(trigger, "go", 2), 0); /* first in a's queue */
    rdps_sub_destroy(sub);                                /* its leaving right behind */
    pump(f, 3);
    assert_non_null(c.pub);
    assert_int_equal(count_of(&p1, RDPS_EVENT_SUBSCRIBER_GONE), 1);
    assert_int_equal(p2.n, 0);
}

/* Created between polls, it hears of the peer at its first poll: SEEN, then GONE. */
static void test_gone_after_creation_comes_paired(void **state)
{
    struct fixture *f = *state;
    struct seen p1, p2;
    seen_init(&p1, "ev.pair");
    seen_init(&p2, "ev.pair");
    rdps_pub_t *pub1, *pub2;
    rdps_sub_t *sub;
    rdps_pub_opts o1 = {.on_event = record, .event_user = &p1};
    rdps_pub_opts o2 = {.on_event = record, .event_user = &p2};
    assert_int_equal(rdps_pub_create(f->pair.a, "ev.pair", &o1, &pub1), 0);
    assert_int_equal(rdps_sub_create(f->pair.b, "ev.pair", on_message, NULL, NULL, &sub), 0);
    pump(f, 3);
    assert_int_equal(rdps_pub_create(f->pair.a, "ev.pair", &o2, &pub2), 0);
    rdps_sub_destroy(sub); /* its leaving waits in a's receive queue */
    pump(f, 3);
    assert_int_equal(p2.n, 2);
    assert_int_equal(p2.ev[0].type, RDPS_EVENT_SUBSCRIBER_SEEN);
    assert_int_equal(p2.ev[1].type, RDPS_EVENT_SUBSCRIBER_GONE);
    assert_int_equal(p2.ev[0].session_id, p2.ev[1].session_id);
    assert_int_equal(p1.n, 2);
}

/* ---- reliable publishers: receiver events ---- */

/*
 * Under RDPS_FLOW_MIN a receiver that stops reporting holds the publisher back; after 2 s it is
 * evicted as STALLED. It is not behind the ring: count is 0 (it was the ring's oldest sequence
 * minus the receiver's position, wrapped around).
 */
static void test_receiver_evicted_stalled(void **state)
{
    struct fixture *f = *state;
    struct seen ps;
    seen_init(&ps, "ev.stall");
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    rdps_pub_opts popts = {
        .reliable = 1, .flow = RDPS_FLOW_MIN, .on_event = record, .event_user = &ps};
    rdps_sub_opts sopts = {.reliable = 1};
    assert_int_equal(rdps_pub_create(f->pair.a, "ev.stall", &popts, &pub), 0);
    assert_int_equal(rdps_sub_create(f->pair.b, "ev.stall", on_message, NULL, &sopts, &sub), 0);
    pump(f, 3);
    char msg[200] = "stall";
    for (int i = 0; i < 10; i++) {
        while (rdps_pub_send(pub, msg, sizeof(msg)) == RDPS_EAGAIN)
            pump(f, 1);
        pump(f, 1);
    }
    /* b stops polling: its window closes the publisher's. */
    int rc = 0;
    for (int i = 0; i < 100000 && rc != RDPS_EAGAIN; i++) {
        rc = rdps_pub_send(pub, msg, sizeof(msg));
        assert_true(rc == 0 || rc == RDPS_EAGAIN);
        f->now_a += 1000;
        assert_true(rdps_ctx_poll(f->pair.a, 0) >= 0);
    }
    assert_int_equal(rc, RDPS_EAGAIN);
    assert_int_equal(rdps_pub_send(pub, msg, sizeof(msg)), RDPS_EAGAIN);
    assert_int_equal(count_of(&ps, RDPS_EVENT_RECEIVER_EVICTED), 0);
    f->now_a += 2100 * MS;
    assert_true(rdps_ctx_poll(f->pair.a, 0) >= 0);
    assert_int_equal(count_of(&ps, RDPS_EVENT_RECEIVER_EVICTED), 1);
    const rdps_event *ev = last_of(&ps, RDPS_EVENT_RECEIVER_EVICTED);
    assert_int_equal(ev->reason, RDPS_EVICT_STALLED);
    assert_string_equal(rdps_event_reason_name(ev), "stalled");
    assert_int_equal(ev->session_id, rdps_pub_session(pub));
    assert_int_equal(ev->receiver_id, rdps__ctx_of_handle(f->pair.b)->rel_receiver_id);
    assert_source_is(&ev->source, f->pair.b);
    assert_int_equal(ev->count, 0);
    assert_int_equal(ps.wrong_topic, 0);
}

/* ---- hostile input: what discovery refuses raises nothing ---- */

/* Three subscribers, room for two: the refused one is neither seen nor gone. */
static void test_refused_announcements_raise_no_events(void **state)
{
    struct fixture *f = *state;
    struct seen ps;
    seen_init(&ps, "ev.full");
    rdps_pub_t *pub;
    rdps_sub_t *subs[3];
    rdps_pub_opts popts = {.on_event = record, .event_user = &ps};
    assert_int_equal(rdps_pub_create(f->pair.a, "ev.full", &popts, &pub), 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(rdps_sub_create(f->pair.b, "ev.full", on_message, NULL, NULL, &subs[i]),
                         0);
    pump(f, 3);
    assert_int_equal(count_of(&ps, RDPS_EVENT_SUBSCRIBER_SEEN), 2);
    rdps_counters c;
    assert_int_equal(rdps_ctx_counters(f->pair.a, &c), 0);
    assert_true(c.peers_refused >= 1);
    for (int i = 0; i < 3; i++)
        rdps_sub_destroy(subs[i]);
    pump(f, 3);
    assert_int_equal(count_of(&ps, RDPS_EVENT_SUBSCRIBER_GONE), 2);
    assert_int_equal(ps.n, 4);
}

/* ---- user pointers ---- */

static void test_subscriber_event_user(void **state)
{
    struct fixture *f = *state;
    struct seen by_default, own;
    seen_init(&by_default, "ev.user");
    seen_init(&own, "ev.user");
    rdps_pub_t *pub;
    rdps_sub_t *s1, *s2;
    /* event_user NULL: the subscriber's user pointer, as before event_user existed. */
    rdps_sub_opts o1 = {.on_event = record};
    rdps_sub_opts o2 = {.on_event = record, .event_user = &own};
    assert_int_equal(rdps_sub_create(f->pair.b, "ev.user", on_message, &by_default, &o1, &s1), 0);
    assert_int_equal(rdps_sub_create(f->pair.b, "ev.user", on_message, (void *)&s2, &o2, &s2), 0);
    assert_int_equal(rdps_pub_create(f->pair.a, "ev.user", NULL, &pub), 0);
    pump(f, 3);
    assert_int_equal(count_of(&by_default, RDPS_EVENT_PUBLISHER_SEEN), 1);
    assert_int_equal(count_of(&own, RDPS_EVENT_PUBLISHER_SEEN), 1);
    assert_int_equal(by_default.wrong_user + own.wrong_user, 0);
}

/* ---- queries on NULL and closed handles read 0, never a negative "true" ---- */

struct closer {
    rdps_pub_t **pub;
    rdps_sub_t **sub;
    unsigned checked;
};

static void close_and_query(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct closer *c = user;
    (void)data, (void)len, (void)info;
    if (*c->pub == NULL)
        return;
    rdps_pub_destroy(*c->pub);
    rdps_sub_destroy(*c->sub);
    /* Closed, not yet freed (we are inside the poll that runs this callback). */
    assert_int_equal(rdps_pub_ready(*c->pub), 0);
    assert_int_equal(rdps_sub_ready(*c->sub), 0);
    assert_int_equal(rdps_pub_subscriber_count(*c->pub), 0);
    assert_int_equal(rdps_pub_receivers_behind(*c->pub), 0);
    *c->pub = NULL;
    c->checked++;
}

static void test_queries_on_null_and_closed_handles(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(rdps_pub_ready(NULL), 0);
    assert_int_equal(rdps_sub_ready(NULL), 0);
    assert_int_equal(rdps_pub_subscriber_count(NULL), 0);
    assert_int_equal(rdps_pub_receivers_behind(NULL), 0);
    assert_int_equal(rdps_ctx_sends_pending(NULL), 0);
    assert_int_equal(rdps_pub_max_message_size(NULL), 0);
    assert_int_equal(rdps_pub_session(NULL), 0);

    rdps_pub_t *victim_pub, *sender;
    rdps_sub_t *victim_sub, *listener;
    struct closer c = {.pub = &victim_pub, .sub = &victim_sub};
    rdps_pub_opts rel = {.reliable = 1};
    assert_int_equal(rdps_pub_create(f->pair.b, "ev.closed", &rel, &victim_pub), 0);
    assert_int_equal(rdps_sub_create(f->pair.b, "ev.closed", on_message, NULL, NULL, &victim_sub),
                     0);
    assert_int_equal(rdps_sub_create(f->pair.b, "ev.trigger", close_and_query, &c, NULL, &listener),
                     0);
    assert_int_equal(rdps_pub_create(f->pair.a, "ev.trigger", NULL, &sender), 0);
    pump(f, 3);
    assert_int_equal(rdps_pub_ready(victim_pub), 1);
    assert_int_equal(rdps_sub_ready(victim_sub), 1);
    assert_int_equal(rdps_pub_send(sender, "x", 1), 0);
    pump(f, 2);
    assert_int_equal(c.checked, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_event_names),
        cmocka_unit_test_setup_teardown(test_subscriber_seen_then_left, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reliable_subscriber_seen_carries_receiver_id, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_subscriber_timed_out, setup, teardown),
        cmocka_unit_test_setup_teardown(test_publisher_gone_left, setup, teardown),
        cmocka_unit_test_setup_teardown(test_publisher_gone_timed_out, setup, teardown),
        cmocka_unit_test_setup_teardown(test_late_publisher_hears_known_subscribers, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_late_subscriber_hears_known_publishers, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_gone_before_replay_is_not_told, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gone_after_creation_comes_paired, setup, teardown),
        cmocka_unit_test_setup_teardown(test_receiver_evicted_stalled, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused_announcements_raise_no_events,
                                        setup_small_table, teardown),
        cmocka_unit_test_setup_teardown(test_subscriber_event_user, setup, teardown),
        cmocka_unit_test_setup_teardown(test_queries_on_null_and_closed_handles, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
