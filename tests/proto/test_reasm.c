/* SPDX-License-Identifier: BSD-2-Clause */
/* test_reasm.c - receive engine: loss, duplication, reordering, wrap, memory cap, timeouts, hostile
 * frames. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <string.h>

#include <rdps/rdps.h>

#include "proto_test_util.h"
#include "rdps_endian.h"
#include "rdps_frag.h"
#include "rdps_reasm.h"
#include "rdps_seq.h"

#define DGRAM   256u /* small datagrams: many fragments per message */
#define PAYLOAD (DGRAM - RDPS_FRAME_HEADER_LEN)
#define MAX_MSG RDPS_FRAME_DEFAULT_MAX_MSG_LEN
#define TOPIC   0x70C1Cu
#define SEC     1000000000ull

struct gap_log {
    uint32_t first_seq[16], count[16], msg_first[16], msg_count[16];
    size_t n;
};

struct fixture {
    struct rdps_reasm r;
    struct recorder rec;
    struct gap_log gaps;
    uint32_t refused_topic;
};

static void on_gap(void *user, const struct rdps_reasm_gap *gap)
{
    struct fixture *fx = (struct fixture *)((char *)user - offsetof(struct fixture, rec));
    if (fx->gaps.n < 16) {
        fx->gaps.first_seq[fx->gaps.n] = gap->first_seq;
        fx->gaps.count[fx->gaps.n] = gap->count;
        fx->gaps.msg_first[fx->gaps.n] = gap->msg_first;
        fx->gaps.msg_count[fx->gaps.n] = gap->msg_count;
    }
    fx->gaps.n++;
}

static bool accept_topic(void *user, const struct rdps_source *source, uint32_t session_id,
                         uint64_t topic_id)
{
    (void)source;
    (void)session_id;
    struct fixture *fx = (struct fixture *)((char *)user - offsetof(struct fixture, rec));
    return topic_id != fx->refused_topic;
}

static void fixture_init(struct fixture *fx, struct rdps_reasm_config *cfg)
{
    memset(fx, 0, sizeof(*fx));
    cfg->deliver = recorder_deliver;
    cfg->on_gap = on_gap;
    cfg->accept = accept_topic;
    cfg->user = &fx->rec;
    assert_int_equal(rdps__reasm_init(&fx->r, cfg), 0);
}

static void fixture_default(struct fixture *fx)
{
    struct rdps_reasm_config cfg;
    rdps__reasm_config_default(&cfg);
    cfg.reasm_cap_bytes = 8u << 20;
    cfg.max_partials = 1024;
    cfg.max_partials_per_source = 0; /* these tests send everything from one source */
    cfg.reorder_allowance_ns = 0;    /* gaps reported at detection (allowance: its own tests) */
    fixture_init(fx, &cfg);
}

/* As fixture_default, with a reorder allowance longer than any test runs (now stays 0): shuffled
 * frames fill their gaps before one is reported. A frame that comes after its gap was reported
 * is dropped (its messages were counted lost): test_gaps_reorder_lost_and_stale. */
static void fixture_patient(struct fixture *fx)
{
    struct rdps_reasm_config cfg;
    rdps__reasm_config_default(&cfg);
    cfg.reasm_cap_bytes = 8u << 20;
    cfg.max_partials = 1024;
    cfg.max_partials_per_source = 0;    /* these tests send everything from one source */
    cfg.reorder_allowance_ns = 2 * SEC; /* after the partial timeout; now stays 0 */
    fixture_init(fx, &cfg);
}

static void fixture_fini(struct fixture *fx)
{
    rdps__reasm_fini(&fx->r);
    recorder_free(&fx->rec);
}

static const struct rdps_reasm_counters *counters(const struct fixture *fx)
{
    return rdps__reasm_counters(&fx->r);
}

/* One datagram from test source number `source`. */
static int input(struct fixture *fx, uint64_t source, const uint8_t *buf, size_t len, uint64_t now)
{
    struct rdps_source src = test_source(source);
    return rdps__reasm_input(&fx->r, &src, buf, len, now);
}

static int feed(struct fixture *fx, const struct frame *f, uint64_t now)
{
    return input(fx, f->source, f->data, f->len, now);
}

/* Single-datagram frame with seq at source 1. */
static struct frame single(uint8_t *buf, uint32_t session, uint32_t seq, uint32_t len,
                           uint64_t msg_id)
{
    pattern_fill(buf + RDPS_FRAME_HEADER_LEN, len, session, msg_id);
    uint32_t n = rdps__frame_put_data_header(buf, session, TOPIC, seq, len, 0, len, msg_id, 0, seq,
                                             rdps__frame_one_count(len, 0, len));
    struct frame f = {buf, n, 1, session, msg_id};
    return f;
}

static void test_single_zero_copy_and_zero_length(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_default(&fx);
    uint8_t buf[DGRAM];
    struct frame f = single(buf, 5, 100, 64, 1);
    assert_int_equal(feed(&fx, &f, 0), 1);
    assert_int_equal(fx.rec.count, 1);
    assert_ptr_equal(fx.rec.items[0].ptr, buf + RDPS_FRAME_HEADER_LEN);
    assert_true(fx.rec.items[0].pattern_ok);
    assert_int_equal(fx.rec.items[0].first_seq, 100);
    assert_int_equal(fx.rec.items[0].frag_count, 1);
    assert_int_equal(fx.rec.items[0].topic_id, TOPIC);
    f = single(buf, 5, 101, 0, 2);
    assert_int_equal(feed(&fx, &f, 0), 1);
    assert_int_equal(fx.rec.items[1].len, 0);
    assert_int_equal(counters(&fx)->msgs_delivered, 2);
    assert_int_equal(counters(&fx)->bytes_delivered, 64);
    assert_int_equal(counters(&fx)->gaps, 0);
    fixture_fini(&fx);
}

/* Every message of every stream is delivered exactly once and byte-exact. */
static void check_exactly_once(const struct fixture *fx, uint32_t sessions, uint64_t msgs,
                               const uint8_t *must_deliver)
{
    uint8_t *seen = calloc((size_t)sessions * msgs, 1);
    assert_non_null(seen);
    for (size_t i = 0; i < fx->rec.count; i++) {
        const struct delivery *d = &fx->rec.items[i];
        assert_true(d->pattern_ok);
        assert_true(d->session_id >= 1 && d->session_id <= sessions);
        assert_true(d->msg_id < msgs);
        size_t k = (size_t)(d->session_id - 1) * msgs + d->msg_id;
        assert_int_equal(seen[k], 0);
        seen[k] = 1;
    }
    for (size_t k = 0; k < (size_t)sessions * msgs; k++)
        if (must_deliver == NULL || must_deliver[k])
            assert_int_equal(seen[k], 1);
    free(seen);
}

/* Message sizes cycling through the interesting boundaries. */
static size_t msg_size(uint64_t msg_id)
{
    static const size_t sizes[] = {
        0, 1, PAYLOAD - 1, PAYLOAD, PAYLOAD + 1, 3 * PAYLOAD, 5 * PAYLOAD + 7, 64, 2 * PAYLOAD - 1};
    return sizes[msg_id % (sizeof(sizes) / sizeof(sizes[0]))];
}

/* Builds frames for `sessions` streams of `msgs` messages, starting at start_seq. */
static void build_streams(struct frame_list *fl, uint32_t sessions, uint64_t msgs,
                          uint32_t start_seq)
{
    for (uint32_t s = 1; s <= sessions; s++) {
        uint32_t seq = start_seq + s * 3;
        for (uint64_t m = 0; m < msgs; m++)
            assert_true(
                frames_add_message(fl, 1, s, TOPIC, &seq, msg_size(m), MAX_MSG, DGRAM, m, 0) >= 1);
    }
}

static void test_shuffled_duplicated_many_sessions(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        struct fixture fx;
        fixture_patient(&fx);
        struct frame_list fl = {0};
        build_streams(&fl, 8, 40, seed % 2 ? 0xFFFFFF00u : 7); /* odd seeds wrap mid-stream */
        size_t original = fl.count;
        uint64_t rng = seed * 0x9E3779B97F4A7C15ull;
        /* Duplicate a third of the frames, then shuffle everything. */
        for (size_t i = 0; i < original; i++)
            if (test_rand(&rng) % 3 == 0)
                frames_push(&fl, fl.items[i].data, fl.items[i].len, 1, fl.items[i].session,
                            fl.items[i].msg_id);
        frames_shuffle(&fl, &rng);
        for (size_t i = 0; i < fl.count; i++)
            assert_true(feed(&fx, &fl.items[i], 0) >= 0);
        check_exactly_once(&fx, 8, 40, NULL);
        assert_int_equal(counters(&fx)->duplicates, fl.count - original);
        assert_int_equal(counters(&fx)->stale, 0);
        assert_int_equal(rdps__reasm_partial_count(&fx.r), 0);
        assert_int_equal(rdps__reasm_stream_count(&fx.r), 8);
        frames_free(&fl);
        fixture_fini(&fx);
    }
}

static void test_loss_delivers_only_complete_messages(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        struct fixture fx;
        fixture_patient(&fx);
        struct frame_list fl = {0};
        build_streams(&fl, 6, 50, 0xFFFFFFF0u);
        uint8_t *complete = malloc(6 * 50);
        memset(complete, 1, 6 * 50);
        uint8_t *dropped = calloc(fl.count, 1);
        uint64_t rng = seed;
        for (size_t i = 0; i < fl.count; i++)
            if (test_rand(&rng) % 10 == 0) {
                dropped[i] = 1;
                complete[(fl.items[i].session - 1) * 50 + fl.items[i].msg_id] = 0;
            }
        /* Keep the drop marks attached to frames while shuffling. */
        for (size_t i = 0; i < fl.count; i++)
            fl.items[i].source = dropped[i] ? 0 : 1;
        frames_shuffle(&fl, &rng);
        size_t sent = 0;
        for (size_t i = 0; i < fl.count; i++)
            if (fl.items[i].source == 1) {
                assert_true(feed(&fx, &fl.items[i], 0) >= 0);
                sent++;
            }
        check_exactly_once(&fx, 6, 50, complete);
        size_t expect = 0;
        for (size_t k = 0; k < 6 * 50; k++)
            expect += complete[k];
        assert_int_equal(fx.rec.count, expect);
        assert_int_equal(counters(&fx)->data_frames, sent);
        /* Partials of incomplete messages wait for the timeout, then go; the gaps after it. */
        assert_true(rdps__reasm_expire(&fx.r, 0) == (rdps__reasm_partial_count(&fx.r) ? SEC
                                                     : rdps__reasm_gaps_pending(&fx.r)
                                                         ? 2 * SEC
                                                         : UINT64_MAX));
        uint32_t waiting = rdps__reasm_partial_count(&fx.r);
        assert_true(rdps__reasm_expire(&fx.r, SEC) ==
                    (rdps__reasm_gaps_pending(&fx.r) ? 2 * SEC : UINT64_MAX));
        assert_int_equal(counters(&fx)->reasm_timeouts, waiting);
        assert_int_equal(rdps__reasm_partial_count(&fx.r), 0);
        free(dropped);
        free(complete);
        frames_free(&fl);
        fixture_fini(&fx);
    }
}

static void test_duplicate_of_completed_message_not_redelivered(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_default(&fx);
    struct frame_list fl = {0};
    uint32_t seq = 10;
    assert_int_equal(frames_add_message(&fl, 1, 1, TOPIC, &seq, 4 * PAYLOAD, MAX_MSG, DGRAM, 0, 0),
                     4);
    for (size_t i = 0; i < fl.count; i++)
        feed(&fx, &fl.items[i], 0);
    assert_int_equal(fx.rec.count, 1);
    /* Replay the whole message, and its fragments in reverse: nothing new. */
    for (size_t i = 0; i < fl.count; i++)
        assert_int_equal(feed(&fx, &fl.items[i], 0), 0);
    for (size_t i = fl.count; i-- > 0;)
        assert_int_equal(feed(&fx, &fl.items[i], 0), 0);
    assert_int_equal(fx.rec.count, 1);
    assert_int_equal(counters(&fx)->duplicates, 8);
    assert_int_equal(rdps__reasm_partial_count(&fx.r), 0);
    frames_free(&fl);
    fixture_fini(&fx);
}

static void test_gaps_reorder_lost_and_stale(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_default(&fx);
    uint8_t buf[DGRAM];
    struct frame f;
    uint32_t order[] = {0, 1, 5, 3};
    for (size_t i = 0; i < 4; i++) {
        f = single(buf, 9, order[i], 8, order[i]);
        /* 3 comes after the gap 2..4 was reported (no allowance here): dropped, its message
         * was counted lost with the gap (late_after_gap), never delivered as well. */
        assert_int_equal(feed(&fx, &f, 0), order[i] == 3 ? 0 : 1);
    }
    assert_int_equal(counters(&fx)->late_after_gap, 1);
    assert_int_equal(counters(&fx)->gaps, 1);
    assert_int_equal(counters(&fx)->gap_seqs, 3);
    assert_int_equal(fx.gaps.n, 1);
    assert_int_equal(fx.gaps.first_seq[0], 2);
    assert_int_equal(fx.gaps.count[0], 3);
    assert_int_equal(counters(&fx)->reordered, 0);
    /* Jump as far as the window reaches: 0..5 leave it, 2 and 4 never arrived. */
    f = single(buf, 9, 5 + RDPS_REASM_WINDOW, 8, 6);
    assert_int_equal(feed(&fx, &f, 0), 1);
    assert_int_equal(counters(&fx)->lost_seqs, 2);
    assert_int_equal(counters(&fx)->gaps, 2);
    assert_int_equal(fx.gaps.count[1], RDPS_REASM_WINDOW - 1);
    /* 4 is now older than the window: stale, dropped, never delivered. */
    f = single(buf, 9, 4, 8, 4);
    assert_int_equal(feed(&fx, &f, 0), 0);
    assert_int_equal(counters(&fx)->stale, 1);
    assert_int_equal(fx.rec.count, 4);
    assert_int_equal(counters(&fx)->session_resets, 0);
    /* A whole window ahead: a reset, reported as a gap, nothing slid over or counted lost. */
    uint32_t next = 5 + RDPS_REASM_WINDOW + 1;
    f = single(buf, 9, next + RDPS_REASM_WINDOW, 8, 7);
    assert_int_equal(feed(&fx, &f, 0), 1);
    assert_int_equal(counters(&fx)->session_resets, 1);
    assert_int_equal(counters(&fx)->lost_seqs, 2);
    assert_int_equal(fx.gaps.first_seq[2], next);
    assert_int_equal(fx.gaps.count[2], RDPS_REASM_WINDOW);
    /* Nothing from before the jump is admitted again, however recent. */
    f = single(buf, 9, next + RDPS_REASM_WINDOW - 1, 8, 8);
    assert_int_equal(feed(&fx, &f, 0), 0);
    assert_int_equal(counters(&fx)->duplicates, 1);
    assert_int_equal(fx.rec.count, 5);
    fixture_fini(&fx);
}

static void test_heartbeat_reveals_tail_loss(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_default(&fx);
    uint8_t buf[DGRAM], hb[RDPS_FRAME_HEADER_LEN];
    /* A heartbeat first: it creates no stream (counted, ignored). */
    assert_int_equal(
        rdps__frame_encode_heartbeat(hb, sizeof(hb), 4, TOPIC, 0xFFFFFFFEu, 0xFFFFFFFEu, 0, 0),
        RDPS_FRAME_HEADER_LEN);
    struct frame h = {hb, RDPS_FRAME_HEADER_LEN, 1, 4, 0};
    assert_int_equal(feed(&fx, &h, 0), 0);
    assert_int_equal(counters(&fx)->heartbeats_unknown, 1);
    assert_int_equal(rdps__reasm_stream_count(&fx.r), 0);
    assert_int_equal(counters(&fx)->gaps, 0);
    for (uint32_t i = 0; i < 4; i++) {
        struct frame f = single(buf, 4, 0xFFFFFFFEu + i, 3, i);
        assert_int_equal(feed(&fx, &f, 0), 1);
    }
    assert_int_equal(counters(&fx)->gaps, 0);
    /* The publisher says 5 is next: 2, 3, 4 went missing at the tail. */
    rdps__frame_encode_heartbeat(hb, sizeof(hb), 4, TOPIC, 5, 5, 0, RDPS_FRAME_F_RELIABLE);
    assert_int_equal(feed(&fx, &h, 0), 0);
    assert_int_equal(counters(&fx)->heartbeats, 2);
    assert_int_equal(counters(&fx)->gaps, 1);
    assert_int_equal(counters(&fx)->gap_seqs, 3);
    assert_int_equal(fx.gaps.first_seq[0], 2);
    assert_int_equal(fx.gaps.count[0], 3);
    /* A repeated heartbeat changes nothing; the late frame 3, reported lost, is dropped. */
    assert_int_equal(feed(&fx, &h, 0), 0);
    assert_int_equal(counters(&fx)->gaps, 1);
    struct frame f = single(buf, 4, 3, 3, 5);
    assert_int_equal(feed(&fx, &f, 0), 0);
    assert_int_equal(counters(&fx)->late_after_gap, 1);
    assert_int_equal(counters(&fx)->reordered, 0);
    fixture_fini(&fx);
}

static void test_arena_takes_chunks_as_bytes_arrive(void **state)
{
    (void)state;
    struct rdps_reasm_config cfg;
    rdps__reasm_config_default(&cfg);
    const size_t len = 4 * PAYLOAD; /* 896 bytes: 4 fragments, 4 chunks of 256 */
    cfg.chunk_bytes = 256;
    cfg.reasm_cap_bytes = 8 * 256 + 100; /* 8 chunks: two such messages */
    struct fixture fx;
    fixture_init(&fx, &cfg);
    struct frame_list fl = {0};
    for (uint32_t s = 1; s <= 3; s++) {
        uint32_t seq = 1000 * s;
        assert_int_equal(frames_add_message(&fl, s, s, TOPIC, &seq, len, MAX_MSG, DGRAM, 0, 0), 4);
    }
    /* One source each: the arena cap, not a source quota, decides. */
    /* Three fragments of messages 1 and 2: 672 bytes each, 3 chunks each, not 4. */
    for (size_t m = 0; m < 2; m++)
        for (size_t k = 0; k < 3; k++)
            assert_int_equal(feed(&fx, &fl.items[m * 4 + k], 10 * m), 0);
    assert_int_equal(rdps__reasm_arena_used(&fx.r), 6 * 256);
    assert_int_equal(counters(&fx)->reasm_evicted, 0);
    /* Message 3 needs a third chunk while two are free: the oldest partial goes. */
    for (size_t k = 0; k < 3; k++)
        assert_int_equal(feed(&fx, &fl.items[8 + k], 20), 0);
    assert_int_equal(counters(&fx)->reasm_evicted, 1);
    assert_int_equal(rdps__reasm_partial_count(&fx.r), 2);
    /* Messages 2 and 3 complete in the 8 chunks. */
    assert_int_equal(feed(&fx, &fl.items[7], 30), 1);
    assert_int_equal(feed(&fx, &fl.items[11], 30), 1);
    assert_int_equal(fx.rec.count, 2);
    for (size_t i = 0; i < 2; i++) {
        assert_true(fx.rec.items[i].pattern_ok);
        assert_int_equal(fx.rec.items[i].session_id, i + 2);
        assert_int_equal(fx.rec.items[i].frag_count, 4);
    }
    assert_int_equal(rdps__reasm_arena_used(&fx.r), 0);
    /* The evicted message's last fragment alone starts a partial that can never finish. */
    assert_int_equal(feed(&fx, &fl.items[3], 60), 0);
    assert_int_equal(rdps__reasm_partial_count(&fx.r), 1);
    assert_true(rdps__reasm_expire(&fx.r, 60) == 60 + SEC);
    assert_true(rdps__reasm_expire(&fx.r, 60 + SEC) == UINT64_MAX);
    assert_int_equal(counters(&fx)->reasm_timeouts, 1);
    /* A message larger than the whole arena is refused outright. */
    struct frame_list big = {0};
    uint32_t seq = 1;
    frames_add_message(&big, 1, 7, TOPIC, &seq, 3 * len, MAX_MSG, DGRAM, 0, 0);
    assert_int_equal(feed(&fx, &big.items[0], 70), 0);
    assert_int_equal(counters(&fx)->reasm_too_large, 1);
    assert_int_equal(rdps__reasm_arena_used(&fx.r), 0);
    frames_free(&big);
    frames_free(&fl);
    fixture_fini(&fx);
}

/* Two interleaved streams of 150 messages each (1000..2999 bytes) through a small arena. */
static void run_two_streams_through_arena(size_t cap, uint64_t *evicted)
{
    struct rdps_reasm_config cfg;
    rdps__reasm_config_default(&cfg);
    cfg.reasm_cap_bytes = cap;
    cfg.chunk_bytes = 256;
    cfg.max_partials = 4;
    struct fixture fx;
    fixture_init(&fx, &cfg);
    struct frame_list fl = {0};
    uint32_t seq_a = 0, seq_b = 0x80000000u;
    for (uint64_t m = 0; m < 150; m++) {
        size_t len = 1000 + (size_t)(m * 37 % 1000);
        frames_add_message(&fl, 1, 1, TOPIC, &seq_a, len, MAX_MSG, DGRAM, m, 0);
        frames_add_message(&fl, 1, 2, TOPIC, &seq_b, len + 500, MAX_MSG, DGRAM, m, 0);
    }
    /* Alternate fragments of the two streams. */
    size_t i = 0, j = 0;
    while (i < fl.count && fl.items[i].session != 1)
        i++;
    while (j < fl.count && fl.items[j].session != 2)
        j++;
    while (i < fl.count || j < fl.count) {
        if (i < fl.count) {
            feed(&fx, &fl.items[i], 0);
            for (i++; i < fl.count && fl.items[i].session != 1; i++)
                ;
        }
        if (j < fl.count) {
            feed(&fx, &fl.items[j], 0);
            for (j++; j < fl.count && fl.items[j].session != 2; j++)
                ;
        }
    }
    /* One source: its quotas (the whole arena, 4 partials) evict before the global caps. */
    *evicted = counters(&fx)->reasm_evicted + counters(&fx)->reasm_source_bytes +
               counters(&fx)->reasm_source_partials;
    if (*evicted == 0) {
        check_exactly_once(&fx, 2, 150, NULL);
    } else {
        /* Under pressure: fewer messages, but each one byte-exact and at most once. */
        uint8_t none[300] = {0};
        check_exactly_once(&fx, 2, 150, none);
        assert_true(fx.rec.count < 300);
        assert_true(fx.rec.count + *evicted >= 300);
    }
    assert_true(rdps__reasm_partial_count(&fx.r) <= 4);
    assert_true(rdps__reasm_arena_used(&fx.r) <= cap);
    frames_free(&fl);
    fixture_fini(&fx);
}

static void test_arena_reuses_space_and_evicts_under_pressure(void **state)
{
    (void)state;
    uint64_t evicted;
    /* Room for the largest message of each stream (8 + 10 chunks of 256 bytes): no eviction. */
    run_two_streams_through_arena(18 * 256, &evicted);
    assert_int_equal(evicted, 0);
    /* Less than the two largest in flight together (11 chunks): evictions. */
    run_two_streams_through_arena(3000, &evicted);
    assert_true(evicted > 0);
}

static void test_partial_table_full_evicts_sources_oldest(void **state)
{
    (void)state;
    struct rdps_reasm_config cfg;
    rdps__reasm_config_default(&cfg);
    cfg.max_partials = 2;
    struct fixture fx;
    fixture_init(&fx, &cfg);
    struct frame_list fl = {0};
    uint32_t seq = 0;
    for (uint64_t m = 0; m < 3; m++)
        frames_add_message(&fl, 1, 1, TOPIC, &seq, 2 * PAYLOAD, MAX_MSG, DGRAM, m, 0);
    feed(&fx, &fl.items[0], 0);
    feed(&fx, &fl.items[2], 0);
    feed(&fx, &fl.items[4], 0);
    /* One source holds both partials: its own quota (clamped to max_partials) evicts. */
    assert_int_equal(counters(&fx)->reasm_source_partials, 1);
    feed(&fx, &fl.items[3], 0);
    feed(&fx, &fl.items[5], 0);
    feed(&fx, &fl.items[1], 0); /* message 0 was evicted: its tail alone cannot complete */
    assert_int_equal(rdps__reasm_partial_count(&fx.r), 1);
    assert_int_equal(fx.rec.count, 2);
    assert_int_equal(fx.rec.items[0].msg_id, 1);
    assert_int_equal(fx.rec.items[1].msg_id, 2);
    frames_free(&fl);
    fixture_fini(&fx);
}

static void test_session_table_lru_eviction_and_idle_expiry(void **state)
{
    (void)state;
    struct rdps_reasm_config cfg;
    rdps__reasm_config_default(&cfg);
    cfg.max_sessions = 4;
    cfg.session_idle_timeout_ns = 10 * SEC;
    struct fixture fx;
    fixture_init(&fx, &cfg);
    uint8_t buf[DGRAM];
    for (uint32_t s = 1; s <= 4; s++) {
        struct frame f = single(buf, s, 0, 8, 0);
        feed(&fx, &f, s);
    }
    /* Session 1 becomes the most recent; a partial on session 2 (now the LRU). */
    struct frame f = single(buf, 1, 1, 8, 1);
    feed(&fx, &f, 5);
    struct frame_list fl = {0};
    uint32_t seq = 1;
    frames_add_message(&fl, 1, 2, TOPIC, &seq, 2 * PAYLOAD, MAX_MSG, DGRAM, 1, 0);
    feed(&fx, &fl.items[0], 6);
    for (uint32_t s = 3; s <= 4; s++) {
        f = single(buf, s, 1, 8, 1);
        feed(&fx, &f, 6 + s);
    }
    f = single(buf, 1, 2, 8, 2);
    feed(&fx, &f, 11);
    /* Session 5 evicts session 2 and its partial. */
    f = single(buf, 5, 0, 8, 0);
    feed(&fx, &f, 12);
    assert_int_equal(counters(&fx)->sessions_created, 5);
    assert_int_equal(counters(&fx)->sessions_source_quota, 1);
    assert_int_equal(counters(&fx)->reasm_dropped_with_session, 1);
    assert_int_equal(rdps__reasm_stream_count(&fx.r), 4);
    assert_int_equal(rdps__reasm_partial_count(&fx.r), 0);
    /* Session 2 comes back: a fresh stream, and its old tail fragment alone does not complete. */
    feed(&fx, &fl.items[1], 13);
    assert_int_equal(counters(&fx)->sessions_source_quota, 2);
    /* Same source and session from a different source address is a different stream. */
    f = single(buf, 1, 3, 8, 3);
    f.source = 2;
    assert_int_equal(feed(&fx, &f, 14), 1);
    assert_int_equal(counters(&fx)->sessions_evicted, 1);
    assert_int_equal(rdps__reasm_source_count(&fx.r), 2);
    /* Idle expiry: everything last active before now - 10 s goes. */
    uint64_t next = rdps__reasm_expire(&fx.r, 12 + 10 * SEC);
    assert_true(next > 12 + 10 * SEC);
    assert_true(counters(&fx)->sessions_expired >= 1);
    assert_true(rdps__reasm_expire(&fx.r, 100 * SEC) == UINT64_MAX);
    assert_int_equal(rdps__reasm_stream_count(&fx.r), 0);
    frames_free(&fl);
    fixture_fini(&fx);
}

static void test_many_sessions_hash_churn(void **state)
{
    (void)state;
    struct rdps_reasm_config cfg;
    rdps__reasm_config_default(&cfg);
    cfg.max_sessions = 64;
    struct fixture fx;
    fixture_init(&fx, &cfg);
    uint8_t buf[DGRAM];
    uint64_t rng = 77;
    /* Random sessions force constant eviction; table and hash must stay consistent. */
    for (int i = 0; i < 20000; i++) {
        uint32_t session = (uint32_t)(test_rand(&rng) % 200) + 1;
        struct frame f = single(buf, session, (uint32_t)i, 4, (uint64_t)i);
        f.source = test_rand(&rng) % 3;
        assert_int_equal(feed(&fx, &f, (uint64_t)i), 1);
        assert_true(rdps__reasm_stream_count(&fx.r) <= 64);
    }
    assert_int_equal(rdps__reasm_stream_count(&fx.r), 64);
    assert_int_equal(counters(&fx)->sessions_created - counters(&fx)->sessions_evicted -
                         counters(&fx)->sessions_source_quota,
                     64);
    assert_true(rdps__reasm_source_count(&fx.r) <= 3);
    fixture_fini(&fx);
}

static void test_sequence_wrap(void **state)
{
    (void)state;
    assert_true(rdps__seq_lt(0xFFFFFFFFu, 0));
    assert_true(rdps__seq_gt(0, 0xFFFFFFFFu));
    assert_true(rdps__seq_le(5, 5) && rdps__seq_ge(5, 5));
    assert_int_equal(rdps__seq_diff(2, 0xFFFFFFFEu), 4);
    assert_int_equal(rdps__seq_diff(0xFFFFFFFEu, 2), -4);
    assert_int_equal(rdps__seq_diff(0x7FFFFFFFu, 0), INT32_MAX);
    assert_int_equal(rdps__seq_diff(0x80000000u, 0), INT32_MIN);

    struct fixture fx;
    fixture_default(&fx);
    uint8_t buf[DGRAM];
    for (uint32_t i = 0; i < 3000; i++) {
        struct frame f = single(buf, 3, 0xFFFFFC00u + i, 16, i);
        assert_int_equal(feed(&fx, &f, 0), 1);
    }
    assert_int_equal(counters(&fx)->gaps, 0);
    assert_int_equal(counters(&fx)->lost_seqs, 0);
    /* Old frames from before the wrap are duplicates or stale, never delivered again. */
    struct frame f = single(buf, 3, 0xFFFFFFFFu, 16, 0xFFF);
    assert_int_equal(feed(&fx, &f, 0), 0);
    f = single(buf, 3, 0xFFFFFC00u + 2999, 16, 2999);
    assert_int_equal(feed(&fx, &f, 0), 0);
    assert_int_equal(counters(&fx)->duplicates + counters(&fx)->stale, 2);
    assert_int_equal(fx.rec.count, 3000);
    fixture_fini(&fx);
}

static void test_end_fragment_first(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_patient(&fx); /* the stream starts at the END: the earlier fragments fill its gap */
    struct frame_list fl = {0};
    uint32_t seq = 0xFFFFFFFEu;
    frames_add_message(&fl, 1, 1, TOPIC, &seq, 3 * PAYLOAD + 10, MAX_MSG, DGRAM, 0, 0);
    /* END, then a middle fragment fixes the layout, then the rest. */
    feed(&fx, &fl.items[3], 0);
    feed(&fx, &fl.items[2], 0);
    feed(&fx, &fl.items[0], 0);
    assert_int_equal(fx.rec.count, 0);
    assert_int_equal(rdps__reasm_partial_count(&fx.r), 1);
    assert_int_equal(feed(&fx, &fl.items[1], 0), 1);
    assert_true(fx.rec.items[0].pattern_ok);
    assert_int_equal(fx.rec.items[0].first_seq, 0xFFFFFFFEu);
    assert_int_equal(fx.rec.items[0].frag_count, 4);
    assert_int_equal(counters(&fx)->reasm_conflicts, 0);
    frames_free(&fl);
    fixture_fini(&fx);
}

/* A DATA frame from raw header values (bypassing the fragmenter's consistency). */
static size_t raw_data(uint8_t *buf, uint32_t session, uint32_t seq, uint32_t msg_len, uint32_t off,
                       uint32_t plen)
{
    memset(buf + RDPS_FRAME_HEADER_LEN, 0xC3, plen);
    return rdps__frame_put_data_header(buf, session, TOPIC, seq, msg_len, off, plen, 0, 0, seq,
                                       rdps__frame_one_count(msg_len, off, plen));
}

static void test_hostile_frames_counted_and_dropped(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_patient(&fx); /* the legitimate message's fragments come late */
    fx.refused_topic = 0xBAD;
    uint8_t buf[2048];
    size_t n;
    /* A partial with layout 100-byte fragments, msg_len 1000, seqs 10..19. */
    n = raw_data(buf, 1, 10, 1000, 0, 100);
    assert_int_equal(input(&fx, 1, buf, n, 0), 0);
    /* Same seq range, different msg_len: conflict. */
    n = raw_data(buf, 1, 12, 2000, 200, 100);
    assert_int_equal(input(&fx, 1, buf, n, 0), 0);
    /* Right msg_len, offset not matching the seq: conflict. */
    n = raw_data(buf, 1, 13, 1000, 500, 100);
    assert_int_equal(input(&fx, 1, buf, n, 0), 0);
    /* Non-final fragment of another size inside the span: conflict. */
    n = raw_data(buf, 1, 14, 1000, 400, 50);
    assert_int_equal(input(&fx, 1, buf, n, 0), 0);
    /* END claimed at a non-final index: conflict (payload larger than the layout allows). */
    n = raw_data(buf, 1, 15, 1000, 500, 500);
    assert_int_equal(input(&fx, 1, buf, n, 0), 0);
    assert_int_equal(counters(&fx)->reasm_conflicts, 4);
    /* Empty END fragment past offset 0. */
    n = raw_data(buf, 1, 30, 1000, 1000, 0);
    assert_int_equal(input(&fx, 1, buf, n, 0), 0);
    /* Misaligned first fragment of a new message. */
    n = raw_data(buf, 1, 40, 5000, 150, 100);
    assert_int_equal(input(&fx, 1, buf, n, 0), 0);
    assert_int_equal(counters(&fx)->reasm_conflicts, 6);
    /* Topic changes within the session. */
    n = rdps__frame_put_data_header(buf, 1, TOPIC + 1, 50, 0, 0, 0, 0, 0, 50,
                                    rdps__frame_one_count(0, 0, 0));
    assert_int_equal(input(&fx, 1, buf, n, 0), 0);
    assert_int_equal(counters(&fx)->topic_mismatch, 1);
    /* Refused topic: the stream is remembered and its frames are filtered. */
    for (uint32_t i = 0; i < 3; i++) {
        n = rdps__frame_put_data_header(buf, 2, 0xBAD, i, 0, 0, 0, 0, 0, i,
                                        rdps__frame_one_count(0, 0, 0));
        assert_int_equal(input(&fx, 1, buf, n, 0), 0);
    }
    assert_int_equal(counters(&fx)->filtered, 3);
    assert_int_equal(counters(&fx)->sessions_created, 2);
    /* Control frames are not for the receive engine. */
    n = (size_t)rdps__frame_encode_status(buf, sizeof(buf), 1, TOPIC, 1, 1, 1, 0);
    assert_int_equal(input(&fx, 1, buf, n, 0), 0);
    assert_int_equal(counters(&fx)->control_frames, 1);
    /* Malformed frames: counted by reason. */
    assert_int_equal(input(&fx, 1, buf, 10, 0), RDPS_EBADFRAME);
    n = raw_data(buf, 1, 60, 100, 0, 100);
    buf[0] = 9;
    assert_int_equal(input(&fx, 1, buf, n, 0), RDPS_EBADFRAME);
    n = raw_data(buf, 1, 60, 100, 0, 100);
    assert_int_equal(input(&fx, 1, buf, n - 1, 0), RDPS_EBADFRAME); /* lying len */
    assert_int_equal(counters(&fx)->bad_frames[RDPS_FRAME_SHORT], 1);
    assert_int_equal(counters(&fx)->bad_frames[RDPS_FRAME_BAD_VERSION], 1);
    assert_int_equal(counters(&fx)->bad_frames[RDPS_FRAME_BEGIN_END_MISMATCH], 1);
    assert_int_equal(fx.rec.count, 0);
    /* The legitimate message still completes: conflicting frames did not use up its sequences. */
    for (uint32_t i = 1; i < 10; i++) {
        n = raw_data(buf, 1, 10 + i, 1000, 100 * i, 100);
        input(&fx, 1, buf, n, 0);
    }
    assert_int_equal(fx.rec.count, 1);
    assert_int_equal(fx.rec.items[0].len, 1000);
    assert_int_equal(fx.rec.items[0].frag_count, 10);
    fixture_fini(&fx);
}

/* Random mutations of valid frames: nothing may crash, everything delivered is well-formed. */
static void test_mutated_frames_never_crash(void **state)
{
    (void)state;
    struct rdps_reasm_config cfg;
    rdps__reasm_config_default(&cfg);
    cfg.reasm_cap_bytes = 1u << 16;
    cfg.max_partials = 8;
    cfg.max_sessions = 8;
    cfg.limits.max_msg_len = 1u << 15;
    struct fixture fx;
    fixture_init(&fx, &cfg);
    struct frame_list fl = {0};
    for (uint32_t s = 1; s <= 4; s++) {
        uint32_t seq = s * 0x40000000u - 50;
        for (uint64_t m = 0; m < 30; m++)
            frames_add_message(&fl, 1, s, TOPIC, &seq, msg_size(m), 1u << 15, DGRAM, m, 0);
    }
    uint64_t rng = 12345;
    uint8_t buf[DGRAM];
    for (int round = 0; round < 20000; round++) {
        const struct frame *f = &fl.items[test_rand(&rng) % fl.count];
        memcpy(buf, f->data, f->len);
        size_t len = f->len;
        int flips = (int)(test_rand(&rng) % 4);
        for (int k = 0; k < flips; k++) {
            size_t pos = (size_t)(test_rand(&rng) % (len < 40 ? 40 : len));
            buf[pos % DGRAM] ^= (uint8_t)(1u << (test_rand(&rng) % 8));
        }
        if (test_rand(&rng) % 8 == 0)
            len = (size_t)(test_rand(&rng) % (DGRAM + 1));
        int rc = input(&fx, test_rand(&rng) % 2, buf, len, (uint64_t)round * 1000);
        assert_true(rc == 0 || rc == 1 || rc == RDPS_EBADFRAME);
        if (round % 1000 == 0)
            rdps__reasm_expire(&fx.r, (uint64_t)round * 1000);
    }
    for (size_t i = 0; i < fx.rec.count; i++)
        assert_true(fx.rec.items[i].len <= (1u << 15));
    uint64_t bad = 0;
    for (int i = 0; i < RDPS_FRAME_REJECT_COUNT; i++)
        bad += counters(&fx)->bad_frames[i];
    assert_true(bad > 0);
    assert_true(counters(&fx)->msgs_delivered > 0);
    frames_free(&fl);
    fixture_fini(&fx);
}

/* ---- hostile senders (issue 7, rows 4 and 6) ------------------------------------------------ */

static size_t heartbeat(uint8_t *buf, uint32_t session, uint32_t next_seq)
{
    int n = rdps__frame_encode_heartbeat(buf, RDPS_FRAME_HEADER_LEN, session, TOPIC, next_seq,
                                         next_seq, 0, 0);
    assert_int_equal(n, RDPS_FRAME_HEADER_LEN);
    return (size_t)n;
}

/* Two heartbeats 2^31 - 1 ahead each would bring the window back around onto delivered sequences.
 */
static void test_heartbeats_cannot_wrap_window(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_default(&fx);
    uint8_t buf[DGRAM], hb[RDPS_FRAME_HEADER_LEN];
    for (uint32_t i = 0; i < 10; i++) {
        struct frame f = single(buf, 3, i, 16, i);
        assert_int_equal(feed(&fx, &f, 0), 1);
    }
    uint32_t h1 = 10 + 0x7FFFFFFFu, h2 = h1 + 0x7FFFFFFFu; /* h2 == 8 */
    assert_int_equal(input(&fx, 1, hb, heartbeat(hb, 3, h1), 0), 0);
    assert_int_equal(input(&fx, 1, hb, heartbeat(hb, 3, h2), 0), 0);
    /* The first is ignored; the second is then behind next_seq: nothing to do either. */
    assert_int_equal(counters(&fx)->heartbeat_jumps, 1);
    assert_int_equal(counters(&fx)->lost_seqs, 0);
    assert_int_equal(counters(&fx)->gaps, 0);
    /* Replays of everything delivered: duplicates, never delivered again. */
    for (uint32_t i = 0; i < 10; i++) {
        struct frame f = single(buf, 3, i, 16, i);
        assert_int_equal(feed(&fx, &f, 0), 0);
    }
    assert_int_equal(counters(&fx)->duplicates, 10);
    assert_int_equal(fx.rec.count, 10);
    /* A heartbeat within the window still reveals tail loss. */
    assert_int_equal(input(&fx, 1, hb, heartbeat(hb, 3, 12), 0), 0);
    assert_int_equal(counters(&fx)->gap_seqs, 2);
    fixture_fini(&fx);
}

/*
 * A receive queue that overflowed to the end of a burst: the tail heartbeat is more than a window
 * ahead of the last datagram heard. It restarts the stream, the tail's messages reported exactly;
 * a second one without data in between may not (heartbeats alone never walk the window around),
 * and nothing from before the restart is delivered again.
 */
static void test_heartbeat_past_the_window_reports_the_tail(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_default(&fx);
    uint8_t buf[DGRAM], hb[RDPS_FRAME_HEADER_LEN];
    for (uint32_t i = 0; i < 10; i++) {
        struct frame f = single(buf, 3, i, 16, i);
        assert_int_equal(feed(&fx, &f, 0), 1);
    }
    uint32_t tail = 10 + 3 * RDPS_SEQ_WINDOW;
    assert_int_equal(input(&fx, 1, hb, heartbeat(hb, 3, tail), 0), 0);
    assert_int_equal(fx.gaps.n, 1);
    assert_int_equal(fx.gaps.msg_first[0], 10);
    assert_int_equal(fx.gaps.msg_count[0], 3 * RDPS_SEQ_WINDOW);
    assert_int_equal(counters(&fx)->session_resets, 1);
    assert_int_equal(counters(&fx)->heartbeat_jumps, 0);
    /* Another as far, with no data since: ignored. The same one again: nothing new. */
    assert_int_equal(input(&fx, 1, hb, heartbeat(hb, 3, tail + 2 * RDPS_SEQ_WINDOW), 0), 0);
    assert_int_equal(input(&fx, 1, hb, heartbeat(hb, 3, tail), 0), 0);
    assert_int_equal(counters(&fx)->heartbeat_jumps, 1);
    assert_int_equal(fx.gaps.n, 1);
    for (uint32_t i = 0; i < 10; i++) {
        struct frame f = single(buf, 3, i, 16, i);
        assert_int_equal(feed(&fx, &f, 0), 0);
    }
    /* Data at the heartbeat's position: delivered, and a later tail past the window counts. */
    struct frame f = single(buf, 3, tail, 16, tail);
    assert_int_equal(feed(&fx, &f, 0), 1);
    assert_int_equal(input(&fx, 1, hb, heartbeat(hb, 3, tail + 1 + RDPS_SEQ_WINDOW), 0), 0);
    assert_int_equal(fx.gaps.n, 2);
    assert_int_equal(fx.gaps.msg_first[1], tail + 1);
    assert_int_equal(fx.gaps.msg_count[1], RDPS_SEQ_WINDOW);
    assert_int_equal(fx.rec.count, 11);
    fixture_fini(&fx);
}

/*
 * A datagram sent before the one that started the stream arrives later: delivered, and the stream
 * starts at it, the datagram between them missing (reported when it does not come, its message
 * counted). Once a report counted messages, one from before the start is dropped instead.
 */
static void test_frame_before_the_start_moves_it(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_patient(&fx);
    uint8_t buf[DGRAM];
    struct frame f = single(buf, 3, 5, 16, 5);
    assert_int_equal(feed(&fx, &f, 0), 1);
    f = single(buf, 3, 3, 16, 3);
    assert_int_equal(feed(&fx, &f, 0), 1);
    assert_int_equal(fx.gaps.n, 0);
    rdps__reasm_expire(&fx.r, 3 * SEC);
    assert_int_equal(fx.gaps.n, 1);
    assert_int_equal(fx.gaps.first_seq[0], 4);
    assert_int_equal(fx.gaps.msg_first[0], 4);
    assert_int_equal(fx.gaps.msg_count[0], 1);
    /* Seq 4 now comes too late; so does seq 1 (the start cannot move before a counted report). */
    f = single(buf, 3, 4, 16, 4);
    assert_int_equal(feed(&fx, &f, 3 * SEC), 0);
    f = single(buf, 3, 1, 16, 1);
    assert_int_equal(feed(&fx, &f, 3 * SEC), 0);
    assert_int_equal(counters(&fx)->late_after_gap, 2);
    assert_int_equal(fx.rec.count, 2);
    fixture_fini(&fx);
}

/*
 * A message of two fragments: the first arrives, then the window is pushed around (two heartbeats,
 * or two DATA frames 2^31 - 1 ahead each) and the first fragment is sent again. Counting bytes
 * would complete the message with the second fragment's bytes taken from stale arena memory.
 */
static void test_resent_fragment_never_completes_message(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_default(&fx);
    uint8_t buf[DGRAM], hb[RDPS_FRAME_HEADER_LEN];
    /* Another message first, so the arena holds someone else's bytes. */
    struct frame_list other = {0}, msg = {0}, msg2 = {0};
    uint32_t seq = 1;
    frames_add_message(&other, 1, 1, TOPIC, &seq, 2 * PAYLOAD, MAX_MSG, DGRAM, 77, 0);
    feed(&fx, &other.items[0], 0);
    assert_int_equal(feed(&fx, &other.items[1], 0), 1);
    seq = 100;
    frames_add_message(&msg, 1, 2, TOPIC, &seq, 2 * PAYLOAD, MAX_MSG, DGRAM, 5, 0);
    assert_int_equal(feed(&fx, &msg.items[0], 0), 0);
    uint32_t h1 = 101 + 0x7FFFFFFFu, h2 = h1 + 0x7FFFFFFFu; /* h2 == 99 */
    input(&fx, 1, hb, heartbeat(hb, 2, h1), 0);
    input(&fx, 1, hb, heartbeat(hb, 2, h2), 0);
    assert_int_equal(feed(&fx, &msg.items[0], 0), 0);
    assert_int_equal(fx.rec.count, 1);
    /* The real second fragment completes it, byte-exact. */
    assert_int_equal(feed(&fx, &msg.items[1], 0), 1);
    assert_true(fx.rec.items[1].pattern_ok);
    assert_int_equal(fx.rec.items[1].frag_count, 2);

    /* Same with DATA frames: each jump resets the stream and drops the partial. */
    seq = 200;
    frames_add_message(&msg2, 1, 4, TOPIC, &seq, 2 * PAYLOAD, MAX_MSG, DGRAM, 6, 0);
    assert_int_equal(feed(&fx, &msg2.items[0], 0), 0);
    struct frame f = single(buf, 4, 201 + 0x7FFFFFFEu, 8, 1000);
    feed(&fx, &f, 0);
    f = single(buf, 4, 199, 8, 1001); /* 2^31 - 1 after the previous one */
    feed(&fx, &f, 0);
    assert_int_equal(counters(&fx)->session_resets, 2);
    assert_int_equal(counters(&fx)->reasm_dropped_with_session, 1);
    size_t before = fx.rec.count;
    assert_int_equal(feed(&fx, &msg2.items[0], 0), 0);
    assert_int_equal(fx.rec.count, before);
    for (size_t i = 0; i < fx.rec.count; i++)
        assert_true(fx.rec.items[i].pattern_ok);
    frames_free(&other);
    frames_free(&msg);
    frames_free(&msg2);
    fixture_fini(&fx);
}

/* First fragments of `count` two-fragment messages, sessions first_session.., from `source`. */
static void start_messages(struct fixture *fx, struct frame_list *fl, uint64_t source,
                           uint32_t first_session, uint32_t count, size_t len)
{
    for (uint32_t i = 0; i < count; i++) {
        uint32_t seq = 10;
        size_t at = fl->count;
        assert_true(frames_add_message(fl, source, first_session + i, TOPIC, &seq, len, MAX_MSG,
                                       DGRAM, i, 0) >= 2);
        assert_int_equal(feed(fx, &fl->items[at], 0), 0);
    }
}

/* Feeds every frame but the first of each message started by start_messages. */
static void finish_messages(struct fixture *fx, struct frame_list *fl)
{
    for (size_t i = 0; i < fl->count; i++)
        if (fl->items[i].data[RDPS_FRAME_OFF_FLAGS] & RDPS_FRAME_F_BEGIN)
            continue;
        else
            feed(fx, &fl->items[i], 1);
}

static void test_tiny_datagrams_cannot_evict_other_sources_partials(void **state)
{
    (void)state;
    struct rdps_reasm_config cfg;
    rdps__reasm_config_default(&cfg); /* 64 partials, 16 per source */
    struct fixture fx;
    fixture_init(&fx, &cfg);
    struct frame_list fl = {0};
    start_messages(&fx, &fl, 1, 1, 4, 2 * PAYLOAD);
    /* 64 tiny first fragments (2-byte messages) of distinct partials from another source. */
    uint8_t buf[64];
    for (uint32_t i = 0; i < 64; i++) {
        size_t n = rdps__frame_put_data_header(buf, 9, TOPIC, 1000 + 2 * i, 2, 0, 1, 0, 0,
                                               1000 + 2 * i, rdps__frame_one_count(2, 0, 1));
        assert_int_equal(input(&fx, 2, buf, n, 0), 0);
    }
    assert_int_equal(counters(&fx)->reasm_source_partials, 64 - 16);
    assert_int_equal(counters(&fx)->reasm_evicted, 0);
    assert_int_equal(rdps__reasm_partial_count(&fx.r), 4 + 16);
    finish_messages(&fx, &fl);
    assert_int_equal(fx.rec.count, 4);
    for (size_t i = 0; i < 4; i++)
        assert_true(fx.rec.items[i].pattern_ok);
    frames_free(&fl);
    fixture_fini(&fx);
}

static void test_declared_huge_messages_take_only_arrived_bytes(void **state)
{
    (void)state;
    struct rdps_reasm_config cfg;
    rdps__reasm_config_default(&cfg); /* 64 MiB arena, 16 MiB messages */
    struct fixture fx;
    fixture_init(&fx, &cfg);
    struct frame_list fl = {0};
    start_messages(&fx, &fl, 1, 1, 1, 1u << 20);
    /* Four first fragments declaring 16 MiB each, from four sources. */
    uint8_t buf[DGRAM];
    for (uint32_t i = 0; i < 4; i++) {
        size_t n = raw_data(buf, 5, 50, MAX_MSG, 0, PAYLOAD);
        assert_int_equal(input(&fx, 10 + i, buf, n, 0), 0);
    }
    assert_int_equal(rdps__reasm_partial_count(&fx.r), 5);
    assert_int_equal(rdps__reasm_arena_used(&fx.r), 5 * cfg.chunk_bytes);
    assert_int_equal(counters(&fx)->reasm_evicted, 0);
    finish_messages(&fx, &fl);
    assert_int_equal(fx.rec.count, 1);
    assert_true(fx.rec.items[0].pattern_ok);
    assert_int_equal(fx.rec.items[0].len, 1u << 20);
    frames_free(&fl);
    fixture_fini(&fx);
}

static void test_heartbeats_never_create_or_evict_streams(void **state)
{
    (void)state;
    struct rdps_reasm_config cfg;
    rdps__reasm_config_default(&cfg); /* 256 streams */
    struct fixture fx;
    fixture_init(&fx, &cfg);
    struct frame_list fl = {0};
    start_messages(&fx, &fl, 1, 1, 1, 2 * PAYLOAD);
    uint8_t hb[RDPS_FRAME_HEADER_LEN];
    for (uint32_t i = 0; i < 1024; i++)
        assert_int_equal(input(&fx, 100 + i, hb, heartbeat(hb, 1 + i, i), 0), 0);
    assert_int_equal(counters(&fx)->heartbeats_unknown, 1024);
    assert_int_equal(rdps__reasm_stream_count(&fx.r), 1);
    assert_int_equal(counters(&fx)->sessions_evicted, 0);
    finish_messages(&fx, &fl);
    assert_int_equal(fx.rec.count, 1);
    assert_true(fx.rec.items[0].pattern_ok);
    frames_free(&fl);
    fixture_fini(&fx);
}

static void test_source_quotas_hurt_only_the_source(void **state)
{
    (void)state;
    struct rdps_reasm_config cfg;
    rdps__reasm_config_default(&cfg);
    cfg.max_sessions = 4;
    cfg.max_streams_per_source = 2;
    struct fixture fx;
    fixture_init(&fx, &cfg);
    uint8_t buf[DGRAM];
    /* Source 2 first (the oldest stream), then source 1 opens three sessions. */
    struct frame f = single(buf, 1, 0, 8, 0);
    f.source = 2;
    feed(&fx, &f, 0);
    for (uint32_t s = 1; s <= 3; s++) {
        f = single(buf, s, 0, 8, 0);
        feed(&fx, &f, s);
    }
    assert_int_equal(counters(&fx)->sessions_source_quota, 1);
    assert_int_equal(rdps__reasm_stream_count(&fx.r), 3);
    /* Full table: source 3's stream evicts the least recent of the heaviest (source 1). */
    f = single(buf, 1, 0, 8, 0);
    f.source = 3;
    feed(&fx, &f, 5);
    f = single(buf, 1, 0, 8, 0);
    f.source = 4;
    feed(&fx, &f, 6);
    assert_int_equal(counters(&fx)->sessions_evicted, 1);
    f = single(buf, 1, 1, 8, 1); /* source 2's stream is still there: in order, no new stream */
    f.source = 2;
    assert_int_equal(feed(&fx, &f, 7), 1);
    assert_int_equal(counters(&fx)->sessions_created, 6);
    assert_int_equal(rdps__reasm_source_count(&fx.r), 4);
    fixture_fini(&fx);

    /* Bytes: two chunks per source; a third partial of the source evicts its own oldest. */
    rdps__reasm_config_default(&cfg);
    cfg.chunk_bytes = 256;
    cfg.reasm_cap_bytes = 16 * 256;
    cfg.max_bytes_per_source = 2 * 256;
    cfg.max_partials = 4;
    fixture_init(&fx, &cfg);
    struct frame_list a = {0}, b = {0};
    start_messages(&fx, &b, 2, 10, 1, 2 * PAYLOAD);
    start_messages(&fx, &a, 1, 1, 3, 2 * PAYLOAD);
    assert_int_equal(counters(&fx)->reasm_source_bytes, 1);
    assert_int_equal(rdps__reasm_arena_used(&fx.r), 3 * 256);
    /* Partials: the table is full (4); a new source evicts the heaviest's oldest, not source 2's.
     */
    uint8_t raw[DGRAM];
    size_t n = raw_data(raw, 7, 0, 2 * PAYLOAD, 0, PAYLOAD);
    assert_int_equal(input(&fx, 3, raw, n, 0), 0);
    n = raw_data(raw, 7, 2, 2 * PAYLOAD, 0, PAYLOAD);
    assert_int_equal(input(&fx, 3, raw, n, 0), 0);
    assert_int_equal(counters(&fx)->reasm_evicted, 1);
    finish_messages(&fx, &b);
    assert_int_equal(fx.rec.count, 1);
    assert_int_equal(fx.rec.items[0].source, 2);
    assert_true(fx.rec.items[0].pattern_ok);
    frames_free(&a);
    frames_free(&b);
    fixture_fini(&fx);
}

/* Source `n`'s QP number `qp` (test_source(n) with another QPN): the same host. */
static struct rdps_source host_qp(uint64_t n, uint32_t qp)
{
    struct rdps_source s = test_source(n);
    s.qpn = 0x1000 + qp;
    return s;
}

/* The first fragment of a two-datagram message of `session` at seq 10 from `src` (a partial). */
static void partial_from(struct fixture *fx, const struct rdps_source *src, uint32_t session)
{
    uint8_t raw[DGRAM];
    size_t n = raw_data(raw, session, 10, 2 * PAYLOAD, 0, PAYLOAD);
    assert_int_equal(rdps__reasm_input(&fx->r, src, raw, n, 0), 0);
}

/*
 * Issue 28 finding 9: the quotas and the heaviest-first rule are a host's (GID, or LID without
 * a GRH), whatever QPNs it spreads over; within the host its heaviest QPN pays first.
 */
static void test_quotas_are_per_host(void **state)
{
    (void)state;
    struct rdps_reasm_config cfg;
    rdps__reasm_config_default(&cfg);
    cfg.max_sessions = 16;
    cfg.max_streams_per_source = 3;
    cfg.max_partials = 8;
    cfg.max_partials_per_source = 4;
    struct fixture fx;
    fixture_init(&fx, &cfg);
    uint8_t buf[DGRAM];
    /* Streams: host 1 opens one session on each of 4 QPNs: the 4th evicts one of its own. */
    struct rdps_source other = test_source(2);
    struct frame f = single(buf, 1, 0, 8, 0);
    assert_int_equal(rdps__reasm_input(&fx.r, &other, f.data, f.len, 0), 1);
    for (uint32_t q = 0; q < 4; q++) {
        struct rdps_source src = host_qp(1, q);
        assert_int_equal(rdps__reasm_input(&fx.r, &src, f.data, f.len, 1 + q), 1);
    }
    assert_int_equal(counters(&fx)->sessions_source_quota, 1);
    assert_int_equal(rdps__reasm_stream_count(&fx.r), 4);
    assert_int_equal(rdps__reasm_source_count(&fx.r), 4);
    assert_int_equal(rdps__reasm_host_count(&fx.r), 2);
    f = single(buf, 1, 1, 8, 1); /* host 2's stream is still there: in order, no new stream */
    assert_int_equal(rdps__reasm_input(&fx.r, &other, f.data, f.len, 9), 1);
    assert_int_equal(counters(&fx)->sessions_created, 5);
    fixture_fini(&fx);

    /* Partials, host quota 4: QPN 0 holds 3, QPN 1 one; QPN 1's second takes QPN 0's oldest
     * (the heaviest QPN of the host pays), nothing of QPN 1's nor of host 2's. */
    cfg.max_streams_per_source = 0;
    fixture_init(&fx, &cfg);
    struct rdps_source q0 = host_qp(1, 0), q1 = host_qp(1, 1);
    partial_from(&fx, &other, 7);
    partial_from(&fx, &other, 8);
    for (uint32_t k = 0; k < 3; k++)
        partial_from(&fx, &q0, 20 + k);
    partial_from(&fx, &q1, 30);
    partial_from(&fx, &q1, 31);
    assert_int_equal(counters(&fx)->reasm_source_partials, 1);
    assert_int_equal(counters(&fx)->reasm_evicted, 0);
    uint8_t raw[DGRAM];
    const struct {
        const struct rdps_source *src;
        uint32_t session;
        int delivered;
    } second[] = {{&q1, 30, 1}, {&q1, 31, 1},   {&q0, 21, 1},  {&q0, 22, 1},
                  {&q0, 20, 0}, {&other, 7, 1}, {&other, 8, 1}};
    for (size_t k = 0; k < sizeof(second) / sizeof(second[0]); k++) {
        size_t n = raw_data(raw, second[k].session, 11, 2 * PAYLOAD, PAYLOAD, PAYLOAD);
        assert_int_equal(rdps__reasm_input(&fx.r, second[k].src, raw, n, 1), second[k].delivered);
    }
    fixture_fini(&fx);

    /* Global cap: host 1 holds 4 partials over 4 QPNs (1 each), host 2 holds 3 on one QPN (the
     * heaviest source). A new partial of host 3 evicts one of the heaviest HOST's, host 1's. */
    cfg.max_partials = 7;
    cfg.max_partials_per_source = 0;
    fixture_init(&fx, &cfg);
    for (uint32_t k = 0; k < 3; k++)
        partial_from(&fx, &other, 7 + k);
    for (uint32_t q = 0; q < 4; q++) {
        struct rdps_source src = host_qp(1, q);
        partial_from(&fx, &src, 20 + q);
    }
    struct rdps_source third = test_source(3);
    partial_from(&fx, &third, 30);
    assert_int_equal(counters(&fx)->reasm_evicted, 1);
    for (uint32_t k = 0; k < 3; k++) {
        size_t n = raw_data(raw, 7 + k, 11, 2 * PAYLOAD, PAYLOAD, PAYLOAD);
        assert_int_equal(rdps__reasm_input(&fx.r, &other, raw, n, 1), 1);
    }
    fixture_fini(&fx);
}

/* Streams are keyed by the whole identity: GID, QPN and LID each tell senders apart. */
static void test_sources_compared_exactly(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_default(&fx);
    struct rdps_source ids[4];
    ids[0] = test_source(1);
    ids[1] = ids[0];
    ids[1].qpn++; /* same GID */
    ids[2] = ids[0];
    ids[2].gid[15] ^= 0x40; /* same QPN */
    memset(&ids[3], 0, sizeof(ids[3]));
    ids[3].qpn = ids[0].qpn; /* InfiniBand without a GRH */
    ids[3].lid = 9;
    uint8_t buf[DGRAM];
    for (int i = 0; i < 4; i++) {
        struct frame f = single(buf, 1, 5, 8, 0);
        assert_int_equal(rdps__reasm_input(&fx.r, &ids[i], f.data, f.len, 0), 1);
    }
    assert_int_equal(rdps__reasm_stream_count(&fx.r), 4);
    assert_int_equal(rdps__reasm_source_count(&fx.r), 4);
    assert_int_equal(counters(&fx)->duplicates, 0);
    fixture_fini(&fx);
}

/*
 * rdps__reasm_input predicts the header of the next single-datagram frame and skips the decoder
 * when it matches. Lockstep against decode + rdps__reasm_on_frame (no prediction) over predicted
 * frames with one header bit flipped or a wrong length: same result, deliveries and counters.
 */
static void test_header_prediction_agrees_with_decoder(void **state)
{
    (void)state;
    struct fixture a, b;
    fixture_default(&a);
    fixture_default(&b);
    uint8_t buf[DGRAM];
    uint32_t next[3] = {0, 0xFFFFFFF0u, 77};
    uint64_t rng = 4242;
    struct rdps_source src = test_source(1);
    for (uint32_t round = 0; round < 30000; round++) {
        uint32_t session = 1 + (uint32_t)(test_rand(&rng) % 8 == 0);
        uint32_t len = (uint32_t)(test_rand(&rng) % 100);
        struct frame f = single(buf, session, next[session], len, round);
        uint16_t extra = (uint16_t)(test_rand(&rng) % 4) << 2; /* RETRANSMIT, RELIABLE */
        rdps__put_le16(buf + RDPS_FRAME_OFF_FLAGS,
                       (uint16_t)(rdps__get_le16(buf + RDPS_FRAME_OFF_FLAGS) | extra));
        switch (test_rand(&rng) % 4) {
        case 0: /* one header bit flipped */
            buf[test_rand(&rng) % RDPS_FRAME_HEADER_LEN] ^= (uint8_t)(1u << (test_rand(&rng) % 8));
            break;
        case 1: /* a length that does not match msg_len */
            f.len = test_rand(&rng) % 2 && f.len > 0 ? f.len - 1 : f.len + 1;
            break;
        default: /* the predicted frame */
            break;
        }
        int rc_a = rdps__reasm_input(&a.r, &src, f.data, f.len, round);
        struct rdps_frame_view v;
        int rc_b = rdps__frame_decode(f.data, f.len, &b.r.cfg.limits, &v) != RDPS_FRAME_OK
                       ? RDPS_EBADFRAME
                       : rdps__reasm_on_frame(&b.r, &src, &v, round);
        assert_int_equal(rc_a, rc_b);
        assert_int_equal(a.rec.count, b.rec.count);
        if (rc_a == 1) {
            const struct delivery *da = &a.rec.items[a.rec.count - 1];
            const struct delivery *db = &b.rec.items[b.rec.count - 1];
            assert_int_equal(da->len, db->len);
            assert_int_equal(da->session_id, db->session_id);
            assert_int_equal(da->first_seq, db->first_seq);
            assert_true(da->msg_id == db->msg_id);
            assert_int_equal(da->retransmit, db->retransmit);
            assert_ptr_equal(da->ptr, db->ptr);
            /* Follow the stream (a flipped sequence bit may have moved it on). */
            if (da->session_id == session && rdps__seq_ge(da->first_seq, next[session]))
                next[session] = da->first_seq + 1;
        }
        struct rdps_reasm_counters ca = *counters(&a), cb = *counters(&b);
        ca.frames_in = ca.bytes_in = 0;
        memset(ca.bad_frames, 0, sizeof(ca.bad_frames));
        assert_memory_equal(&ca, &cb, sizeof(ca));
    }
    assert_true(counters(&a)->msgs_delivered > 10000);
    fixture_fini(&a);
    fixture_fini(&b);
}

static void test_init_rejects_bad_config(void **state)
{
    (void)state;
    struct rdps_reasm r;
    struct rdps_reasm_config cfg;
    rdps__reasm_config_default(&cfg);
    assert_int_equal(rdps__reasm_init(&r, &cfg), RDPS_EINVAL); /* no deliver callback */
    assert_true(strstr(rdps_last_error_message(), "deliver") != NULL);
    rdps__reasm_fini(&r);
    cfg.deliver = recorder_deliver;
    cfg.max_sessions = 0;
    assert_int_equal(rdps__reasm_init(&r, &cfg), RDPS_EINVAL);
    rdps__reasm_fini(&r);
    rdps__reasm_config_default(&cfg);
    cfg.deliver = recorder_deliver;
    cfg.reasm_cap_bytes = 0;
    assert_int_equal(rdps__reasm_init(&r, &cfg), RDPS_EINVAL);
    rdps__reasm_fini(&r);
    rdps__reasm_fini(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_zero_copy_and_zero_length),
        cmocka_unit_test(test_shuffled_duplicated_many_sessions),
        cmocka_unit_test(test_loss_delivers_only_complete_messages),
        cmocka_unit_test(test_duplicate_of_completed_message_not_redelivered),
        cmocka_unit_test(test_gaps_reorder_lost_and_stale),
        cmocka_unit_test(test_heartbeat_reveals_tail_loss),
        cmocka_unit_test(test_arena_takes_chunks_as_bytes_arrive),
        cmocka_unit_test(test_arena_reuses_space_and_evicts_under_pressure),
        cmocka_unit_test(test_partial_table_full_evicts_sources_oldest),
        cmocka_unit_test(test_session_table_lru_eviction_and_idle_expiry),
        cmocka_unit_test(test_many_sessions_hash_churn),
        cmocka_unit_test(test_sequence_wrap),
        cmocka_unit_test(test_end_fragment_first),
        cmocka_unit_test(test_hostile_frames_counted_and_dropped),
        cmocka_unit_test(test_mutated_frames_never_crash),
        cmocka_unit_test(test_heartbeats_cannot_wrap_window),
        cmocka_unit_test(test_heartbeat_past_the_window_reports_the_tail),
        cmocka_unit_test(test_frame_before_the_start_moves_it),
        cmocka_unit_test(test_resent_fragment_never_completes_message),
        cmocka_unit_test(test_tiny_datagrams_cannot_evict_other_sources_partials),
        cmocka_unit_test(test_declared_huge_messages_take_only_arrived_bytes),
        cmocka_unit_test(test_heartbeats_never_create_or_evict_streams),
        cmocka_unit_test(test_source_quotas_hurt_only_the_source),
        cmocka_unit_test(test_quotas_are_per_host),
        cmocka_unit_test(test_sources_compared_exactly),
        cmocka_unit_test(test_header_prediction_agrees_with_decoder),
        cmocka_unit_test(test_init_rejects_bad_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
