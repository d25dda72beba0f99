/* SPDX-License-Identifier: BSD-2-Clause */
/* test_verify.c - rdsub --verify's verdicts for good and broken message streams (per session). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "pattern.h"
#include "verify.h"

#define SEED 1
#define N    100

struct publisher {
    rdps_source source;
    uint32_t session_id;
    size_t size; /* 0: sizes 1..300 drawn from the pattern, like --size-range 1:300 */
};

static const struct publisher pub_a = {
    .source = {.qpn = 0x11, .has_gid = 1, .gid = {0xfe, 0x80}}, .session_id = 0xa0a0, .size = 64};
static const struct publisher pub_b = {
    .source = {.qpn = 0x22, .has_gid = 1, .gid = {0xfe, 0x80}}, .session_id = 0xb0b0, .size = 64};
/* Same session id as A from another QP: a different session. */
static const struct publisher pub_a_twin = {
    .source = {.qpn = 0x33, .has_gid = 1, .gid = {0xfe, 0x80}}, .session_id = 0xa0a0, .size = 64};

/* The ordinal the publisher gives message 0 (random in the library: one near the wrap here). */
#define ORD0 0xFFFFFFF0u

/* Delivers message `index` of publisher p; flip >= 0 corrupts that byte. */
static enum verify_result deliver(struct verify *v, const struct publisher *p, uint64_t index,
                                  int flip)
{
    uint8_t buf[300];
    size_t len = p->size ? p->size : pattern_size(SEED, index, 1, sizeof(buf));
    pattern_fill(SEED, index, buf, len);
    if (flip >= 0)
        buf[(size_t)flip % len] ^= 0x40;
    return verify_message(v, &p->source, p->session_id, ORD0 + (uint32_t)index, buf, len);
}

static void deliver_range(struct verify *v, const struct publisher *p, uint64_t from, uint64_t to)
{
    for (uint64_t i = from; i < to; i++)
        assert_int_equal(deliver(v, p, i, -1), VERIFY_MSG_NEW);
}

static void test_all_messages_pass(void **state)
{
    struct verify v;
    (void)state;
    assert_int_equal(verify_init(&v, N, SEED), 0);
    deliver_range(&v, &pub_a, 0, N - 1);
    assert_false(verify_complete(&v));
    assert_int_equal(verify_verdict(&v), VERIFY_MISSING);
    deliver_range(&v, &pub_a, N - 1, N);
    assert_true(verify_complete(&v));
    assert_int_equal(verify_verdict(&v), VERIFY_PASSED);
    const struct verify_session *s = verify_reported(&v);
    assert_non_null(s);
    assert_int_equal(s->distinct, N);
    assert_int_equal(verify_session_missing(&v, s), 0);
    assert_int_equal(verify_session_holes(s), 0);
    verify_fini(&v);
}

static void test_reordered_messages_pass(void **state)
{
    struct verify v;
    (void)state;
    assert_int_equal(verify_init(&v, N, SEED), 0);
    for (uint64_t i = 0; i < N; i += 2)
        assert_int_equal(deliver(&v, &pub_a, i + 1, -1), VERIFY_MSG_NEW);
    for (uint64_t i = 0; i < N; i += 2)
        assert_int_equal(deliver(&v, &pub_a, i, -1), VERIFY_MSG_NEW);
    assert_int_equal(verify_verdict(&v), VERIFY_PASSED);
    verify_fini(&v);
}

/* rdsub --reliable: the same reordered stream fails, and so does a reported loss. */
static void test_ordered_mode_fails_on_reorder_and_loss(void **state)
{
    struct verify v;
    (void)state;
    assert_int_equal(verify_init(&v, N, SEED), 0);
    verify_set_ordered(&v, true);
    deliver_range(&v, &pub_a, 0, N);
    assert_int_equal(verify_verdict(&v), VERIFY_PASSED);
    verify_fini(&v);

    assert_int_equal(verify_init(&v, N, SEED), 0);
    verify_set_ordered(&v, true);
    deliver_range(&v, &pub_a, 0, 10);
    deliver_range(&v, &pub_a, 11, N);
    deliver_range(&v, &pub_a, 10, 11); /* late: complete, but out of order */
    assert_true(verify_complete(&v));
    assert_int_equal(verify_reported(&v)->out_of_order, 1);
    assert_int_equal(verify_verdict(&v), VERIFY_FAILED);
    verify_fini(&v);

    assert_int_equal(verify_init(&v, N, SEED), 0);
    verify_set_ordered(&v, true);
    deliver_range(&v, &pub_a, 0, N);
    /* another session's loss counts too */
    verify_loss(&v, &pub_b.source, pub_b.session_id, true, 3, 0, 3);
    struct verify_session sum;
    verify_totals(&v, &sum);
    assert_int_equal(sum.loss_events, 1);
    assert_int_equal(sum.lost_seqs, 3);
    assert_int_equal(verify_verdict(&v), VERIFY_FAILED);
    verify_fini(&v);
}

static void test_missing_in_the_middle_fails(void **state)
{
    struct verify v;
    (void)state;
    assert_int_equal(verify_init(&v, N, SEED), 0);
    deliver_range(&v, &pub_a, 0, 40);
    deliver_range(&v, &pub_a, 43, N);
    assert_false(verify_complete(&v));
    assert_int_equal(verify_verdict(&v), VERIFY_MISSING);
    const struct verify_session *s = verify_reported(&v);
    assert_int_equal(verify_session_missing(&v, s), 3);
    assert_int_equal(verify_session_holes(s), 3);
    verify_fini(&v);
}

static void test_fewer_than_expected_fails(void **state)
{
    struct verify v;
    (void)state;
    /* The publisher sent 60 intact messages; the subscriber was told 100. */
    assert_int_equal(verify_init(&v, N, SEED), 0);
    deliver_range(&v, &pub_a, 0, 60);
    assert_int_equal(verify_verdict(&v), VERIFY_MISSING);
    const struct verify_session *s = verify_reported(&v);
    assert_int_equal(verify_session_missing(&v, s), 40);
    assert_int_equal(verify_session_holes(s), 0); /* nothing lost below the highest seen */
    verify_fini(&v);
}

static void test_duplicate_fails(void **state)
{
    struct verify v;
    (void)state;
    assert_int_equal(verify_init(&v, N, SEED), 0);
    deliver_range(&v, &pub_a, 0, N);
    assert_int_equal(deliver(&v, &pub_a, 17, -1), VERIFY_MSG_DUPLICATE);
    assert_int_equal(verify_verdict(&v), VERIFY_FAILED);
    assert_int_equal(verify_reported(&v)->duplicates, 1);
    verify_fini(&v);
}

static void test_corrupt_fails(void **state)
{
    struct verify v;
    (void)state;
    assert_int_equal(verify_init(&v, N, SEED), 0);
    deliver_range(&v, &pub_a, 0, 50);
    assert_int_equal(deliver(&v, &pub_a, 50, 9), VERIFY_MSG_CORRUPT);
    deliver_range(&v, &pub_a, 51, N);
    /* Index 50 never arrived intact, and a corrupt message was delivered. */
    assert_int_equal(verify_verdict(&v), VERIFY_FAILED);
    assert_int_equal(verify_reported(&v)->corrupt, 1);
    assert_int_equal(verify_session_holes(verify_reported(&v)), 1);
    verify_fini(&v);
}

static void test_corrupt_in_another_session_fails(void **state)
{
    struct verify v;
    (void)state;
    assert_int_equal(verify_init(&v, N, SEED), 0);
    deliver_range(&v, &pub_a, 0, N);
    assert_int_equal(deliver(&v, &pub_b, 3, 0), VERIFY_MSG_CORRUPT);
    assert_int_equal(verify_verdict(&v), VERIFY_FAILED);
    verify_fini(&v);
}

static void test_index_beyond_expected_fails(void **state)
{
    struct verify v;
    (void)state;
    assert_int_equal(verify_init(&v, N, SEED), 0);
    deliver_range(&v, &pub_a, 0, 10);
    assert_int_equal(deliver(&v, &pub_a, N, -1), VERIFY_MSG_OUT_OF_RANGE);
    assert_int_equal(verify_verdict(&v), VERIFY_FAILED);
    verify_fini(&v);
}

static void test_two_interleaved_sessions_do_not_add_up(void **state)
{
    struct verify v;
    (void)state;
    assert_int_equal(verify_init(&v, N, SEED), 0);
    /* Two publishers, 60 messages each: 120 messages, but no session has all 100. */
    for (uint64_t i = 0; i < 60; i++) {
        assert_int_equal(deliver(&v, &pub_a, i, -1), VERIFY_MSG_NEW);
        assert_int_equal(deliver(&v, &pub_b, i, -1), VERIFY_MSG_NEW);
    }
    assert_int_equal(v.messages, 120);
    assert_false(verify_complete(&v));
    assert_int_equal(verify_verdict(&v), VERIFY_MISSING);
    assert_int_equal(v.nsessions, 2);
    /* B finishes: B is the verified session, A's figures stay its own. */
    deliver_range(&v, &pub_b, 60, N);
    assert_int_equal(verify_verdict(&v), VERIFY_PASSED);
    const struct verify_session *s = verify_reported(&v);
    assert_int_equal(s->session_id, pub_b.session_id);
    assert_int_equal(s->source.qpn, pub_b.source.qpn);
    assert_int_equal(v.sessions[0].distinct, 60);
    verify_fini(&v);
}

static void test_same_session_id_other_source_is_another_session(void **state)
{
    struct verify v;
    (void)state;
    assert_int_equal(verify_init(&v, N, SEED), 0);
    deliver_range(&v, &pub_a, 0, 50);
    /* Without the source these would be 50 duplicates, or (by index) a complete set. */
    deliver_range(&v, &pub_a_twin, 0, 50);
    deliver_range(&v, &pub_a_twin, 50, N - 1);
    deliver_range(&v, &pub_a, 50, N - 1);
    assert_int_equal(v.nsessions, 2);
    assert_int_equal(verify_verdict(&v), VERIFY_MISSING);
    verify_fini(&v);
}

static void test_nothing_received(void **state)
{
    struct verify v;
    (void)state;
    assert_int_equal(verify_init(&v, N, SEED), 0);
    assert_int_equal(verify_verdict(&v), VERIFY_NOTHING);
    assert_null(verify_reported(&v));
    assert_int_equal(verify_session_missing(&v, NULL), N);
    verify_fini(&v);
}

static void test_session_cap_counts_untracked(void **state)
{
    struct verify v;
    struct publisher p = pub_a;
    (void)state;
    assert_int_equal(verify_init(&v, N, SEED), 0);
    for (unsigned i = 0; i < VERIFY_MAX_SESSIONS; i++) {
        p.session_id = 1000 + i;
        assert_int_equal(deliver(&v, &p, 0, -1), VERIFY_MSG_NEW);
    }
    p.session_id = 999;
    assert_int_equal(deliver(&v, &p, 0, -1), VERIFY_MSG_UNTRACKED);
    assert_int_equal(v.untracked, 1);
    assert_int_equal(v.nsessions, VERIFY_MAX_SESSIONS);
    assert_int_equal(verify_verdict(&v), VERIFY_MISSING);
    verify_fini(&v);
}

static void test_tiny_messages_found_by_hint(void **state)
{
    struct verify v;
    struct publisher p = pub_a;
    (void)state;
    p.size = 3; /* too short to carry an index: found near the session's next index */
    assert_int_equal(verify_init(&v, N, SEED), 0);
    deliver_range(&v, &p, 0, N);
    assert_int_equal(verify_verdict(&v), VERIFY_PASSED);
    verify_fini(&v);
}

static void test_mixed_sizes_in_order_pass(void **state)
{
    struct verify v;
    struct publisher p = pub_a;
    (void)state;
    p.size = 0; /* 1..300 bytes: some too short to name their index */
    assert_int_equal(verify_init(&v, 1000, SEED), 0);
    deliver_range(&v, &p, 0, 1000);
    assert_int_equal(verify_verdict(&v), VERIFY_PASSED);
    verify_fini(&v);
}

static void test_bad_expect_rejected(void **state)
{
    struct verify v;
    (void)state;
    assert_int_equal(verify_init(&v, 0, SEED), -1);
    assert_int_equal(verify_init(&v, VERIFY_MAX_EXPECT + 1, SEED), -1);
    assert_string_equal(verify_verdict_name(VERIFY_MISSING), "missing");
}

/* Loss accounting (rdsub --count-loss): what did not arrive must be reported, exactly once. */
static void lost(struct verify *v, const struct publisher *p, uint64_t from, uint64_t to)
{
    verify_loss(v, &p->source, p->session_id, false, 1, ORD0 + (uint32_t)from,
                (uint32_t)(to - from));
}

static void count_loss_init(struct verify *v)
{
    assert_int_equal(verify_init(v, N, SEED), 0);
    verify_set_count_loss(v, true);
}

static void test_count_loss_passes_when_every_message_is_accounted_for(void **state)
{
    struct verify v;
    (void)state;
    count_loss_init(&v);
    lost(&v, &pub_a, 0, 3); /* before the first message: held until the base is known */
    deliver_range(&v, &pub_a, 3, 40);
    lost(&v, &pub_a, 40, 45);
    deliver_range(&v, &pub_a, 45, N - 2);
    assert_false(verify_complete(&v));
    assert_int_equal(verify_verdict(&v), VERIFY_MISSING);
    assert_int_equal(verify_session_unaccounted(&v, verify_reported(&v)), 2);
    lost(&v, &pub_a, N - 2, N); /* a lost tail, reported */
    assert_true(verify_complete(&v));
    assert_int_equal(verify_verdict(&v), VERIFY_PASSED);
    const struct verify_session *s = verify_reported(&v);
    assert_int_equal(s->reported_lost, 10);
    assert_int_equal(s->lost_messages, 10);
    assert_int_equal(s->gap_events, 3);
    verify_fini(&v);
}

/* Each fault fails the run, and a loss nobody reported leaves it missing. */
static void test_count_loss_fails_on_every_fault(void **state)
{
    struct verify v;
    (void)state;
    count_loss_init(&v); /* a message lost without a report */
    deliver_range(&v, &pub_a, 0, 50);
    deliver_range(&v, &pub_a, 51, N);
    assert_false(verify_complete(&v));
    assert_int_equal(verify_verdict(&v), VERIFY_MISSING);
    assert_int_equal(verify_session_unaccounted(&v, verify_reported(&v)), 1);
    verify_fini(&v);

    count_loss_init(&v); /* a report that counts a delivered message */
    deliver_range(&v, &pub_a, 0, 50);
    lost(&v, &pub_a, 49, 51);
    deliver_range(&v, &pub_a, 51, N);
    assert_int_equal(verify_reported(&v)->lost_delivered, 1);
    assert_int_equal(verify_verdict(&v), VERIFY_FAILED);
    verify_fini(&v);

    count_loss_init(&v); /* reported, then delivered after all */
    deliver_range(&v, &pub_a, 0, 50);
    lost(&v, &pub_a, 50, 51);
    deliver_range(&v, &pub_a, 50, N);
    assert_int_equal(verify_reported(&v)->lost_delivered, 1);
    assert_int_equal(verify_verdict(&v), VERIFY_FAILED);
    verify_fini(&v);

    count_loss_init(&v); /* reported twice */
    deliver_range(&v, &pub_a, 0, 50);
    lost(&v, &pub_a, 50, 52);
    lost(&v, &pub_a, 51, 52);
    deliver_range(&v, &pub_a, 52, N);
    assert_int_equal(verify_reported(&v)->lost_twice, 1);
    assert_int_equal(verify_verdict(&v), VERIFY_FAILED);
    verify_fini(&v);

    count_loss_init(&v); /* more reported than were published */
    deliver_range(&v, &pub_a, 0, N - 1);
    lost(&v, &pub_a, N - 1, N + 3);
    assert_int_equal(verify_reported(&v)->lost_out_of_range, 3);
    assert_int_equal(verify_verdict(&v), VERIFY_FAILED);
    verify_fini(&v);

    count_loss_init(&v); /* an ordinal that does not follow the index */
    deliver_range(&v, &pub_a, 0, 10);
    uint8_t buf[64];
    pattern_fill(SEED, 10, buf, sizeof(buf));
    assert_int_equal(
        verify_message(&v, &pub_a.source, pub_a.session_id, ORD0 + 11, buf, sizeof(buf)),
        VERIFY_MSG_NEW);
    assert_int_equal(verify_reported(&v)->bad_ordinal, 1);
    assert_int_equal(verify_verdict(&v), VERIFY_FAILED);
    verify_fini(&v);

    count_loss_init(&v); /* another session's report does not account for this one's */
    deliver_range(&v, &pub_a, 0, 50);
    deliver_range(&v, &pub_b, 0, 1);
    lost(&v, &pub_b, 50, 51);
    deliver_range(&v, &pub_a, 51, N);
    assert_int_equal(verify_verdict(&v), VERIFY_MISSING); /* a's message 50: unaccounted */
    assert_int_equal(verify_session_unaccounted(&v, verify_reported(&v)), 1);
    verify_fini(&v);
}

/* Messages before the first one the subscriber could know of are nobody's to report. */
static void test_count_loss_excuses_the_unknown_start(void **state)
{
    struct verify v;
    (void)state;
    count_loss_init(&v);
    deliver_range(&v, &pub_a, 7, 30); /* 0..6 went before the first datagram it got */
    lost(&v, &pub_a, 30, 34);
    deliver_range(&v, &pub_a, 34, N);
    assert_true(verify_complete(&v));
    assert_int_equal(verify_verdict(&v), VERIFY_PASSED);
    assert_int_equal(verify_session_before_start(&v, verify_reported(&v)), 7);
    assert_int_equal(verify_session_unaccounted(&v, verify_reported(&v)), 0);
    verify_fini(&v);

    count_loss_init(&v); /* a report reaching lower moves the start down */
    lost(&v, &pub_a, 3, 7);
    deliver_range(&v, &pub_a, 7, N);
    assert_int_equal(verify_session_before_start(&v, verify_reported(&v)), 3);
    assert_int_equal(verify_verdict(&v), VERIFY_PASSED);
    verify_fini(&v);

    count_loss_init(&v); /* a hole after the start is still missing */
    deliver_range(&v, &pub_a, 7, 50);
    deliver_range(&v, &pub_a, 51, N);
    assert_false(verify_complete(&v));
    assert_int_equal(verify_session_unaccounted(&v, verify_reported(&v)), 1);
    verify_fini(&v);
}

/* A message too short to name its index, far out of order: its ordinal says which it is. */
static void test_count_loss_places_short_messages_by_ordinal(void **state)
{
    struct verify v;
    (void)state;
    struct publisher tiny = pub_a;
    tiny.size = 3;
    assert_int_equal(verify_init(&v, 2000, SEED), 0);
    verify_set_count_loss(&v, true);
    for (uint64_t i = 0; i < 2000; i++)
        if (i != 100)
            assert_int_equal(deliver(&v, &pub_a, i, -1), VERIFY_MSG_NEW);
    /* 1 900 behind the next expected index: a hint search alone gives up (corrupt). */
    assert_int_equal(deliver(&v, &tiny, 100, -1), VERIFY_MSG_NEW);
    assert_int_equal(verify_verdict(&v), VERIFY_PASSED);
    assert_int_equal(verify_reported(&v)->bad_ordinal, 0);
    verify_fini(&v);
}

/* Reliable with --count-loss: loss events account for messages, order still matters. */
static void test_count_loss_in_ordered_mode(void **state)
{
    struct verify v;
    (void)state;
    count_loss_init(&v);
    verify_set_ordered(&v, true);
    deliver_range(&v, &pub_a, 0, 60);
    verify_loss(&v, &pub_a.source, pub_a.session_id, true, 2, ORD0 + 60, 5);
    deliver_range(&v, &pub_a, 65, N);
    assert_int_equal(verify_verdict(&v), VERIFY_PASSED);
    assert_int_equal(verify_reported(&v)->loss_events, 1);
    verify_fini(&v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_messages_pass),
        cmocka_unit_test(test_count_loss_passes_when_every_message_is_accounted_for),
        cmocka_unit_test(test_count_loss_fails_on_every_fault),
        cmocka_unit_test(test_count_loss_in_ordered_mode),
        cmocka_unit_test(test_count_loss_excuses_the_unknown_start),
        cmocka_unit_test(test_count_loss_places_short_messages_by_ordinal),
        cmocka_unit_test(test_reordered_messages_pass),
        cmocka_unit_test(test_ordered_mode_fails_on_reorder_and_loss),
        cmocka_unit_test(test_missing_in_the_middle_fails),
        cmocka_unit_test(test_fewer_than_expected_fails),
        cmocka_unit_test(test_duplicate_fails),
        cmocka_unit_test(test_corrupt_fails),
        cmocka_unit_test(test_corrupt_in_another_session_fails),
        cmocka_unit_test(test_index_beyond_expected_fails),
        cmocka_unit_test(test_two_interleaved_sessions_do_not_add_up),
        cmocka_unit_test(test_same_session_id_other_source_is_another_session),
        cmocka_unit_test(test_nothing_received),
        cmocka_unit_test(test_session_cap_counts_untracked),
        cmocka_unit_test(test_tiny_messages_found_by_hint),
        cmocka_unit_test(test_mixed_sizes_in_order_pass),
        cmocka_unit_test(test_bad_expect_rejected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
