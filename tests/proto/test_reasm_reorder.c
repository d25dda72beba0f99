/* SPDX-License-Identifier: BSD-2-Clause */
/* test_reasm_reorder.c - unreliable mode counts as gaps only datagrams that never arrived:
 * reordering within the allowance is not loss (seeded reorder/duplicate/loss model, fake clock). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rdps/rdps.h>

#include "proto_test_util.h"
#include "rdps_reasm.h"

#define TOPIC 0x70C1Cu
#define MS    1000000ull
#define N     20000u

struct fixture {
    struct recorder rec; /* first: the callbacks' user pointer */
    struct rdps_reasm r;
    uint8_t *reported; /* per sequence: times reported as a gap */
    uint64_t reported_seqs;
};

static void on_gap(void *user, const struct rdps_reasm_gap *gap)
{
    struct fixture *fx = user;
    uint32_t first_seq = gap->first_seq, count = gap->count;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t seq = first_seq + i;
        if (seq < N)
            fx->reported[seq]++;
    }
    fx->reported_seqs += count;
}

struct arrival {
    uint64_t at;
    uint32_t seq;
};

static int by_time(const void *a, const void *b)
{
    const struct arrival *x = a, *y = b;
    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Sends N single-datagram messages 10 us apart through a seeded link: each is
 * lost with 1/64 chance, delayed by up to max_delay with 1/4 chance (netem
 * "reorder 25%"), duplicated with 1/20 chance. Feeds the arrivals in time
 * order, runs expire at every deadline, ends with a heartbeat. Returns the
 * number of datagrams that never arrived; marks them in *lost.
 */
static uint32_t run(struct fixture *fx, uint64_t allowance, uint64_t max_delay, uint64_t seed,
                    uint8_t *lost)
{
    struct rdps_reasm_config cfg;
    rdps__reasm_config_default(&cfg);
    cfg.deliver = recorder_deliver;
    cfg.on_gap = on_gap;
    cfg.user = fx;
    cfg.reorder_allowance_ns = allowance;
    memset(fx, 0, sizeof(*fx));
    fx->reported = calloc(N, 1);
    assert_non_null(fx->reported);
    assert_int_equal(rdps__reasm_init(&fx->r, &cfg), 0);

    struct arrival *arr = malloc(2 * N * sizeof(*arr));
    assert_non_null(arr);
    size_t n = 0;
    uint32_t never = 0;
    uint64_t rng = seed;
    for (uint32_t seq = 0; seq < N; seq++) {
        uint64_t sent = 1000 * MS + (uint64_t)seq * 10000;
        lost[seq] = test_rand(&rng) % 64 == 0;
        if (lost[seq]) {
            never++;
            continue;
        }
        uint64_t delay = test_rand(&rng) % 4 == 0 ? test_rand(&rng) % max_delay : 0;
        arr[n++] = (struct arrival){sent + delay, seq};
        if (test_rand(&rng) % 20 == 0)
            arr[n++] = (struct arrival){sent + delay + test_rand(&rng) % max_delay, seq};
    }
    qsort(arr, n, sizeof(*arr), by_time);
    uint8_t buf[64];
    struct rdps_source src = test_source(1);
    uint64_t deadline = UINT64_MAX, now = 0;
    for (size_t i = 0; i < n; i++) {
        now = arr[i].at;
        if (now >= deadline)
            deadline = rdps__reasm_expire(&fx->r, now);
        uint32_t seq = arr[i].seq;
        pattern_fill(buf + RDPS_FRAME_HEADER_LEN, 8, 7, seq);
        uint32_t len = rdps__frame_put_data_header(buf, 7, TOPIC, seq, 8, 0, 8, seq, 0, seq,
                                                   rdps__frame_one_count(8, 0, 8));
        assert_true(rdps__reasm_input(&fx->r, &src, buf, len, now) >= 0);
        uint64_t next = rdps__reasm_expire(&fx->r, now);
        deadline = next;
    }
    /* The publisher's heartbeat reveals tail loss; the allowance then runs out. */
    int hb = rdps__frame_encode_heartbeat(buf, sizeof(buf), 7, TOPIC, N, N, 0, 0);
    assert_int_equal(rdps__reasm_input(&fx->r, &src, buf, (size_t)hb, now + 1), 0);
    rdps__reasm_expire(&fx->r, now + 1000 * MS);
    free(arr);
    return never;
}

static void fixture_fini(struct fixture *fx)
{
    rdps__reasm_fini(&fx->r);
    recorder_free(&fx->rec);
    free(fx->reported);
}

/* netem "reorder 25%" with delays up to 1 ms: gaps are exactly the datagrams never sent on. */
static void test_reported_gaps_are_exactly_the_lost_datagrams(void **state)
{
    (void)state;
    static uint8_t lost[N];
    for (uint64_t seed = 1; seed <= 3; seed++) {
        struct fixture fx;
        uint32_t never = run(&fx, 2 * MS, 1 * MS, seed * 0x9E3779B97F4A7C15ull, lost);
        assert_true(never > 200);
        const struct rdps_reasm_counters *c = rdps__reasm_counters(&fx.r);
        assert_int_equal(c->gap_seqs, never);
        assert_int_equal(fx.reported_seqs, never);
        for (uint32_t seq = 0; seq < N; seq++)
            assert_int_equal(fx.reported[seq], lost[seq]); /* each lost one, once; nothing else */
        assert_true(c->reordered > 1000);                  /* the model did reorder */
        assert_int_equal(c->late_after_gap, 0);
        assert_int_equal(c->gap_ranges_full, 0);
        assert_int_equal(fx.rec.count, N - never); /* everything that arrived was delivered */
        fixture_fini(&fx);
    }
}

/* The same link with no allowance (the old behaviour): reordering is counted as loss. */
static void test_without_allowance_reordering_counts_as_loss(void **state)
{
    (void)state;
    static uint8_t lost[N];
    struct fixture fx;
    uint32_t never = run(&fx, 0, 1 * MS, 0x9E3779B97F4A7C15ull, lost);
    const struct rdps_reasm_counters *c = rdps__reasm_counters(&fx.r);
    assert_true(c->gap_seqs > 4 * (uint64_t)never);
    assert_true(c->late_after_gap > 1000);
    fixture_fini(&fx);
}

/* Reordered beyond the allowance: reported once, and the late arrival is counted as such. */
static void test_late_beyond_allowance_and_window_need(void **state)
{
    (void)state;
    struct fixture fx;
    struct rdps_reasm_config cfg;
    rdps__reasm_config_default(&cfg);
    cfg.deliver = recorder_deliver;
    cfg.on_gap = on_gap;
    cfg.user = &fx;
    cfg.reorder_allowance_ns = 2 * MS;
    cfg.max_gap_ranges = 2;
    memset(&fx, 0, sizeof(fx));
    fx.reported = calloc(N, 1);
    assert_int_equal(rdps__reasm_init(&fx.r, &cfg), 0);
    struct rdps_source src = test_source(1);
    uint8_t buf[64];
#define SEND(seq, now)                                                                       \
    do {                                                                                     \
        uint32_t len_ = rdps__frame_put_data_header(buf, 7, TOPIC, (seq), 0, 0, 0, (seq), 0, \
                                                    (seq), rdps__frame_one_count(0, 0, 0));  \
        rdps__reasm_input(&fx.r, &src, buf, len_, (now));                                    \
    } while (0)
    SEND(0, 0);
    assert_false(rdps__reasm_gaps_pending(&fx.r));
    SEND(2, 0); /* 1 missing */
    assert_int_equal(fx.reported_seqs, 0);
    assert_true(rdps__reasm_gaps_pending(&fx.r));
    assert_true(rdps__reasm_expire(&fx.r, 1 * MS) == 2 * MS);
    assert_true(rdps__reasm_expire(&fx.r, 2 * MS) == UINT64_MAX);
    assert_int_equal(fx.reported[1], 1);
    assert_false(rdps__reasm_gaps_pending(&fx.r));
    SEND(1, 3 * MS); /* too late: not a gap again, counted late and dropped (counted lost) */
    assert_int_equal(rdps__reasm_counters(&fx.r)->late_after_gap, 1);
    assert_int_equal(fx.rec.count, 2);
    /* The gap list holds 2 ranges: a third reports the oldest early. */
    SEND(4, 4 * MS);
    SEND(6, 4 * MS);
    SEND(8, 4 * MS);
    assert_int_equal(rdps__reasm_counters(&fx.r)->gap_ranges_full, 1);
    assert_int_equal(fx.reported[3], 1);
    assert_int_equal(fx.reported[5], 0);
    /* A window later the slot is needed: 5 and 7 are reported without waiting. */
    SEND(8 + RDPS_REASM_WINDOW, 4 * MS);
    assert_int_equal(fx.reported[5], 1);
    assert_int_equal(fx.reported[7], 1);
    assert_int_equal(fx.reported_seqs, 4);
    rdps__reasm_expire(&fx.r, 6 * MS); /* the new gap 9.. waited its allowance */
    assert_int_equal(fx.reported_seqs, 4 + RDPS_REASM_WINDOW - 1);
#undef SEND
    fixture_fini(&fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reported_gaps_are_exactly_the_lost_datagrams),
        cmocka_unit_test(test_without_allowance_reordering_counts_as_loss),
        cmocka_unit_test(test_late_beyond_allowance_and_window_need),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
