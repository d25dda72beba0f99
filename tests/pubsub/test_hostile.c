/* SPDX-License-Identifier: BSD-2-Clause */
/* test_hostile.c - a ctx fed datagrams from forged sources (issue 7 rows 5 and 12): what a
 * group member on the same fabric can and cannot do to other senders' state. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "rdps_frag.h"
#include "script_transport.h"

static uint64_t fake_now = 1000000000ull;
static uint64_t fake_clock(void *user)
{
    (void)user;
    return fake_now;
}

static const struct rdps_source self_roce = {
    .gid = {0xfe, 0x80, [15] = 1}, .qpn = 77, .has_gid = 1};
static const struct rdps_source other_roce = {
    .gid = {0xfe, 0x80, [15] = 2}, .qpn = 77, .has_gid = 1};

struct seen {
    unsigned msgs, seen_events, gone_events;
    rdps_source last_source;
};

static void on_msg(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct seen *s = user;
    (void)data;
    (void)len;
    s->msgs++;
    s->last_source = info->source;
}

static void on_event(void *user, const rdps_event *ev)
{
    struct seen *s = user;
    if (ev->type == RDPS_EVENT_PUBLISHER_SEEN)
        s->seen_events++;
    if (ev->type == RDPS_EVENT_PUBLISHER_GONE)
        s->gone_events++;
}

/* One single-datagram DATA frame of `topic` from session `session`. */
static void inject_data(struct rdps_transport *t, const struct rdps_source *src, const char *topic,
                        uint32_t session, uint32_t *seq)
{
    uint8_t frame[SCRIPT_MAX_PAYLOAD];
    memset(frame + RDPS_FRAME_HEADER_LEN, 0x5a, 40);
    int len = rdps__frag_put_single(frame, sizeof(frame), session, rdps_topic_id(topic), seq, 40,
                                    SCRIPT_MAX_PAYLOAD, 0, 0, *(seq));
    assert_true(len > 0);
    assert_int_equal(script_transport_inject(t, src, frame, (uint32_t)len), 0);
}

static void inject_announce(struct rdps_transport *t, const struct rdps_source *src,
                            const char *topic, uint32_t session, bool leaving)
{
    struct rdps_announce a = {
        .role = RDPS_ROLE_PUBLISHER,
        .topic_id = rdps_topic_id(topic),
        .group = 0xefc00707,
        .session_id = session,
        .qpn = src->qpn ? src->qpn : 1,
        .interval_ms = 1000,
        .leaving = leaving,
    };
    strcpy(a.topic, topic);
    memcpy(a.gid, src->gid, 16);
    uint8_t body[RDPS_ANNOUNCE_MAX_BYTES], frame[SCRIPT_MAX_PAYLOAD];
    int blen = rdps__announce_encode(&a, body, sizeof(body));
    assert_true(blen > 0);
    int len = rdps__frame_encode_announce(frame, sizeof(frame), session, a.topic_id, 1, body,
                                          (size_t)blen, 0);
    assert_true(len > 0);
    assert_int_equal(script_transport_inject(t, src, frame, (uint32_t)len), 0);
}

/* Row 12: a QPN alone does not make a datagram ours (every port numbers QPs alike). */
static void test_foreign_sender_with_our_qpn_is_delivered(void **state)
{
    (void)state;
    rdps_ctx_t *ctx;
    struct rdps_transport *t;
    rdps_sub_t *sub;
    struct seen s = {0};
    uint32_t seq = 100;
    assert_int_equal(script_ctx_create(NULL, &self_roce, fake_clock, NULL, &ctx, &t), 0);
    assert_int_equal(rdps_sub_create(ctx, "qpn.clash", on_msg, &s, NULL, &sub), 0);
    inject_data(t, &other_roce, "qpn.clash", 9, &seq);
    inject_data(t, &self_roce, "qpn.clash", 9, &seq);
    assert_true(rdps_ctx_poll(ctx, 0) >= 0);
    assert_int_equal(s.msgs, 1);
    assert_memory_equal(s.last_source.gid, other_roce.gid, 16);
    rdps_counters c;
    rdps_ctx_counters(ctx, &c);
    assert_int_equal(c.own_frames, 1);
    rdps_ctx_destroy(ctx);
}

/* Row 12 on InfiniBand without a GRH: the LID tells senders with equal QPNs apart. */
static void test_ib_without_grh_uses_the_lid(void **state)
{
    (void)state;
    const struct rdps_source self_ib = {.qpn = 77, .lid = 5};
    const struct rdps_source other_ib = {.qpn = 77, .lid = 6};
    rdps_ctx_t *ctx;
    struct rdps_transport *t;
    rdps_sub_t *sub;
    struct seen s = {0};
    uint32_t seq = 100;
    assert_int_equal(script_ctx_create(NULL, &self_ib, fake_clock, NULL, &ctx, &t), 0);
    assert_int_equal(rdps_sub_create(ctx, "ib.lid", on_msg, &s, NULL, &sub), 0);
    inject_data(t, &other_ib, "ib.lid", 9, &seq);
    inject_data(t, &self_ib, "ib.lid", 9, &seq);
    assert_true(rdps_ctx_poll(ctx, 0) >= 0);
    assert_int_equal(s.msgs, 1);
    assert_int_equal(s.last_source.lid, 6);
    assert_int_equal(s.last_source.has_gid, 0);
    rdps_ctx_destroy(ctx);
}

/* Row 5: a leaving announcement counts only from the source that announced the peer. */
static void test_forged_leave_does_not_drop_a_publisher(void **state)
{
    (void)state;
    const struct rdps_source publisher = {.gid = {0xfe, 0x80, [15] = 9}, .qpn = 900, .has_gid = 1};
    const struct rdps_source forger = {.gid = {0xfe, 0x80, [15] = 66}, .qpn = 900, .has_gid = 1};
    rdps_ctx_t *ctx;
    struct rdps_transport *t;
    rdps_sub_t *sub;
    struct seen s = {0};
    rdps_sub_opts opts = {.on_event = on_event};
    assert_int_equal(script_ctx_create(NULL, &self_roce, fake_clock, NULL, &ctx, &t), 0);
    assert_int_equal(rdps_sub_create(ctx, "md.real", on_msg, &s, &opts, &sub), 0);
    inject_announce(t, &publisher, "md.real", 4242, false);
    assert_true(rdps_ctx_poll(ctx, 0) >= 0);
    assert_int_equal(s.seen_events, 1);
    inject_announce(t, &forger, "md.real", 4242, true);
    assert_true(rdps_ctx_poll(ctx, 0) >= 0);
    assert_int_equal(s.gone_events, 0);
    inject_announce(t, &publisher, "md.real", 4242, true);
    assert_true(rdps_ctx_poll(ctx, 0) >= 0);
    assert_int_equal(s.gone_events, 1);
    rdps_ctx_destroy(ctx);
}

struct gaps_seen {
    unsigned events, missing;
};

static void count_gaps(void *user, const rdps_event *ev)
{
    struct gaps_seen *g = user;
    if (ev->type == RDPS_EVENT_GAP) {
        g->events++;
        g->missing += ev->count;
    }
}

static void msg_ignore(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    (void)user;
    (void)data;
    (void)len;
    (void)info;
}

/* A reordered datagram is not a gap; one still missing after the reorder allowance is, and the
 * ctx wakes up by itself to report it (its next timeout says when). */
static void test_gap_only_after_reorder_allowance(void **state)
{
    (void)state;
    const struct rdps_source pub_src = {.gid = {0xfe, 0x80, [15] = 7}, .qpn = 70, .has_gid = 1};
    rdps_ctx_t *ctx;
    struct rdps_transport *t;
    rdps_sub_t *sub;
    struct gaps_seen g = {0};
    rdps_sub_opts opts = {.on_event = count_gaps};
    assert_int_equal(script_ctx_create(NULL, &self_roce, fake_clock, NULL, &ctx, &t), 0);
    assert_int_equal(rdps_sub_create(ctx, "gaps", msg_ignore, &g, &opts, &sub), 0);
    /* Settle: announcements out, the ctx's next timer well in the future. */
    assert_true(rdps_ctx_poll(ctx, 0) >= 0);
    fake_now += 1000000ull;
    assert_true(rdps_ctx_poll(ctx, 0) >= 0);
    assert_true(rdps_ctx_next_timeout_ms(ctx) > 100);
    uint32_t seq100 = 100, seq101 = 101, seq102 = 102, seq104 = 104;
    inject_data(t, &pub_src, "gaps", 5, &seq100);
    inject_data(t, &pub_src, "gaps", 5, &seq102); /* 101 late */
    inject_data(t, &pub_src, "gaps", 5, &seq101);
    inject_data(t, &pub_src, "gaps", 5, &seq104); /* 103 never */
    assert_true(rdps_ctx_poll(ctx, 0) >= 0);
    assert_int_equal(g.events, 0);
    assert_true(rdps_ctx_next_timeout_ms(ctx) <= 3); /* it will look within the allowance */
    fake_now += 5000000ull;
    assert_true(rdps_ctx_poll(ctx, 0) >= 0);
    assert_int_equal(g.events, 1);
    assert_int_equal(g.missing, 1);
    rdps_counters c;
    rdps_ctx_counters(ctx, &c);
    assert_int_equal(c.gaps, 1);
    rdps_ctx_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_foreign_sender_with_our_qpn_is_delivered),
        cmocka_unit_test(test_ib_without_grh_uses_the_lid),
        cmocka_unit_test(test_forged_leave_does_not_drop_a_publisher),
        cmocka_unit_test(test_gap_only_after_reorder_allowance),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
