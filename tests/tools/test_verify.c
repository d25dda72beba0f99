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

/* Delivers message `index` of publisher p; flip >= 0 corrupts that byte. */
static enum verify_result deliver(struct verify *v, const struct publisher *p, uint64_t index,
                                  int flip)
{
    uint8_t buf[300];
    size_t len = p->size ? p->size : pattern_size(SEED, index, 1, sizeof(buf));
    pattern_fill(SEED, index, buf, len);
    if (flip >= 0)
        buf[(size_t)flip % len] ^= 0x40;
    return verify_message(v, &p->source, p->session_id, buf, len);
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
    verify_loss(&v, &pub_b.source, pub_b.session_id, 3); /* another session's loss counts too */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_messages_pass),
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
