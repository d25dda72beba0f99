/* SPDX-License-Identifier: BSD-2-Clause */
/* test_rel_recv.c - reliable receive side, sans-IO on a fake clock: in-order release, gap ranges
 * across wrap, NAK timing, retries, suppression, STATUS, loss classification, late join, counters,
 * and a lossy link with a ring-bound publisher end to end (one file: they share the fixture). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rdps/rdps.h>

#include "proto_test_util.h"
#include "rdps_endian.h"
#include "rdps_reasm.h"

#define TOPIC   0x70C1Cu
#define SESSION 7u
#define US      1000ull
#define MS      1000000ull
#define DGRAM   256u

struct sent {
    struct rdps_frame_header hdr;
    uint64_t at;
    unsigned n;
    struct rdps_seq_range ranges[RDPS_FRAME_NAK_MAX_RANGES];
    uint32_t receiver_id, consumed, window, echo_delay_us;
};

struct fixture {
    struct recorder rec; /* first: the callbacks' user pointer */
    struct rdps_reasm r;
    uint64_t now;
    struct sent sent[512];
    size_t nsent, naks, statuses;
    struct rdps_reasm_loss loss[64];
    size_t nloss;
};

static void on_send(void *user, const struct rdps_source *dest, uint32_t session_id,
                    const uint8_t *frame, size_t len)
{
    struct fixture *fx = user;
    assert_int_equal(test_source_number(dest), 1);
    assert_true(session_id == SESSION || session_id == SESSION + 1); /* + 1: a second session */
    struct rdps_frame_view v;
    assert_int_equal(rdps__frame_decode(frame, len, NULL, &v), RDPS_FRAME_OK);
    assert_true(fx->nsent < 512);
    struct sent *s = &fx->sent[fx->nsent++];
    memset(s, 0, sizeof(*s));
    s->hdr = v.hdr;
    s->at = fx->now;
    s->receiver_id = v.receiver_id;
    if (v.hdr.type == RDPS_FRAME_NAK) {
        fx->naks++;
        s->n = v.nak_range_count;
        for (unsigned i = 0; i < s->n; i++)
            s->ranges[i] = rdps__frame_nak_range(&v, i);
    } else {
        assert_int_equal(v.hdr.type, RDPS_FRAME_STATUS);
        fx->statuses++;
        s->consumed = v.consumed_seq;
        s->window = v.window;
        s->echo_delay_us = v.echo_delay_us;
    }
}

static void on_loss(void *user, const struct rdps_reasm_loss *loss)
{
    struct fixture *fx = user;
    assert_true(fx->nloss < 64);
    fx->loss[fx->nloss] = *loss;
    fx->loss[fx->nloss].source = NULL;
    fx->nloss++;
}

static void fixture_init(struct fixture *fx, void (*tune)(struct rdps_reasm_config *))
{
    memset(fx, 0, sizeof(*fx));
    struct rdps_reasm_config cfg;
    rdps__reasm_config_default(&cfg);
    cfg.reasm_cap_bytes = 4u << 20;
    cfg.chunk_bytes = 4096;
    cfg.max_partials = 2048;
    cfg.max_partials_per_source = 0;
    cfg.deliver = recorder_deliver;
    cfg.user = fx;
    cfg.rel.enabled = true;
    cfg.rel.receiver_id = 0xABCD;
    cfg.rel.rng_seed = 42;
    cfg.rel.send = on_send;
    cfg.rel.on_loss = on_loss;
    if (tune != NULL)
        tune(&cfg);
    assert_int_equal(rdps__reasm_init(&fx->r, &cfg), 0);
    fx->now = 1000 * MS;
}

static void fixture_fini(struct fixture *fx)
{
    rdps__reasm_fini(&fx->r);
    recorder_free(&fx->rec);
}

static int input(struct fixture *fx, const uint8_t *buf, size_t len)
{
    struct rdps_source src = test_source(1);
    return rdps__reasm_input(&fx->r, &src, buf, len, fx->now);
}

/* Single-datagram message `seq` of `session` (its id is its sequence). */
static int data_of(struct fixture *fx, uint32_t session, uint32_t seq, uint16_t extra_flags)
{
    uint8_t buf[64];
    pattern_fill(buf + RDPS_FRAME_HEADER_LEN, 16, session, seq);
    uint32_t n = rdps__frame_put_data_header(buf, session, TOPIC, seq, 16, 0, 16, seq,
                                             RDPS_FRAME_F_RELIABLE | extra_flags, seq,
                                             rdps__frame_one_count(16, 0, 16));
    return input(fx, buf, n);
}

static int data(struct fixture *fx, uint32_t seq, uint16_t extra_flags)
{
    return data_of(fx, SESSION, seq, extra_flags);
}

static int repair(struct fixture *fx, uint32_t seq)
{
    return data(fx, seq, RDPS_FRAME_F_RETRANSMIT);
}

static int heartbeat(struct fixture *fx, uint32_t next, uint32_t retained, uint64_t ts)
{
    uint8_t buf[RDPS_FRAME_HEADER_LEN];
    int n = rdps__frame_encode_heartbeat_reliable(buf, sizeof(buf), SESSION, TOPIC, next, retained,
                                                  next, (next) - (retained), ts);
    assert_int_equal(n, RDPS_FRAME_HEADER_LEN);
    return input(fx, buf, RDPS_FRAME_HEADER_LEN);
}

static uint64_t poll(struct fixture *fx)
{
    return rdps__reasm_rel_poll(&fx->r, fx->now, fx->now + 5);
}

static const struct sent *last_nak(const struct fixture *fx)
{
    for (size_t i = fx->nsent; i-- > 0;)
        if (fx->sent[i].hdr.type == RDPS_FRAME_NAK)
            return &fx->sent[i];
    return NULL;
}

static const struct sent *last_status(const struct fixture *fx)
{
    for (size_t i = fx->nsent; i-- > 0;)
        if (fx->sent[i].hdr.type == RDPS_FRAME_STATUS)
            return &fx->sent[i];
    return NULL;
}

static struct rdps_rel_stream_info info(const struct fixture *fx)
{
    struct rdps_rel_stream_info in;
    struct rdps_source src = test_source(1);
    assert_int_equal(rdps__reasm_rel_stream_info(&fx->r, &src, SESSION, &in), 0);
    return in;
}

/* Deliveries are exactly the ids first..first+n-1 in order, each intact. */
static void expect_delivered(const struct fixture *fx, uint32_t first, size_t n)
{
    assert_int_equal(fx->rec.count, n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(fx->rec.items[i].first_seq, first + (uint32_t)i);
        assert_true(fx->rec.items[i].pattern_ok);
    }
}

/* The public name of a loss reason, as rdps_event_reason_name gives it for a LOSS event. */
static const char *loss_name(rdps_loss_reason reason)
{
    rdps_event ev = {.type = RDPS_EVENT_LOSS, .reason = (int)reason};
    return rdps_event_reason_name(&ev);
}

static void test_in_order_release_and_no_duplicates(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_init(&fx, NULL);
    for (uint32_t seq = 0; seq < 10; seq++)
        if (seq != 3)
            assert_true(data(&fx, seq, 0) >= 0);
    expect_delivered(&fx, 0, 3); /* 4..9 wait for 3 */
    poll(&fx);                   /* one receiver: NAK at once */
    const struct sent *nak = last_nak(&fx);
    assert_non_null(nak);
    assert_int_equal(nak->receiver_id, 0xABCD);
    assert_int_equal(nak->n, 1);
    assert_int_equal(nak->ranges[0].start, 3);
    assert_int_equal(nak->ranges[0].count, 1);
    fx.now += 200 * US;
    assert_int_equal(repair(&fx, 3), 7);
    expect_delivered(&fx, 0, 10);
    assert_true(fx.rec.items[3].retransmit);
    /* Everything again, originals and repairs: nothing is delivered twice. */
    for (uint32_t seq = 0; seq < 10; seq++) {
        assert_int_equal(data(&fx, seq, 0), 0);
        assert_int_equal(repair(&fx, seq), 0);
    }
    expect_delivered(&fx, 0, 10);
    struct rdps_rel_stream_info in = info(&fx);
    assert_int_equal(in.consumed_seq, 10);
    assert_int_equal(in.counters.delivered, 10);
    assert_int_equal(in.counters.parked, 6);
    assert_int_equal(in.counters.recovered, 1);
    assert_int_equal(in.counters.duplicates, 20);
    assert_int_equal(in.counters.naks_sent, 1);
    assert_int_equal(in.counters.rtt_samples, 1);
    assert_int_equal(in.srtt_ns, 200 * US); /* NAK -> repair: alone, the first sample */
    assert_int_equal(rdps__reasm_partial_count(&fx.r), 0);
    assert_int_equal(fx.nloss, 0);
    fixture_fini(&fx);
}

/* Multi-fragment messages, fragments shuffled: delivered whole, in order, once. */
static void test_fragmented_shuffled_in_order(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_init(&fx, NULL);
    struct frame_list fl = {0};
    uint32_t seq = 0xFFFFFFF0u; /* across the wrap */
    for (uint64_t id = 0; id < 40; id++)
        frames_add_message(&fl, 1, SESSION, TOPIC, &seq, (size_t)(id % 5) * 300 + 1,
                           RDPS_FRAME_DEFAULT_MAX_MSG_LEN, DGRAM, id, RDPS_FRAME_F_RELIABLE);
    uint32_t first = rdps__get_le32(fl.items[0].data + RDPS_FRAME_OFF_SEQ);
    /* Keep the first frame first (it sets the live position); shuffle windows of 16 after it. */
    uint64_t rng = 7;
    for (size_t base = 1; base < fl.count; base += 16) {
        struct frame_list part = {fl.items + base, fl.count - base < 16 ? fl.count - base : 16, 0};
        frames_shuffle(&part, &rng);
    }
    for (size_t i = 0; i < fl.count; i++) {
        assert_true(input(&fx, fl.items[i].data, fl.items[i].len) >= 0);
        if (i % 3 == 0) /* duplicates along the way */
            assert_int_equal(input(&fx, fl.items[i].data, fl.items[i].len), 0);
    }
    assert_int_equal(fx.rec.count, 40);
    for (size_t i = 0; i < 40; i++) {
        assert_int_equal(fx.rec.items[i].msg_id, i);
        assert_true(fx.rec.items[i].pattern_ok);
    }
    assert_int_equal(fx.rec.items[0].first_seq, first);
    assert_int_equal(info(&fx).consumed_seq, seq);
    assert_int_equal(rdps__reasm_partial_count(&fx.r), 0);
    frames_free(&fl);
    fixture_fini(&fx);
}

static void test_gap_ranges_across_wrap_in_one_nak(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_init(&fx, NULL);
    uint32_t start = 0xFFFFFFF8u;
    for (uint32_t i = 0; i < 16; i++) {
        uint32_t seq = start + i;
        if (seq == 0xFFFFFFFEu || seq == 0xFFFFFFFFu || seq == 0 || seq == 1 || seq == 5)
            continue;
        data(&fx, seq, 0);
    }
    poll(&fx);
    const struct sent *nak = last_nak(&fx);
    assert_non_null(nak);
    assert_int_equal(nak->n, 2);
    assert_int_equal(nak->ranges[0].start, 0xFFFFFFFEu);
    assert_int_equal(nak->ranges[0].count, 4);
    assert_int_equal(nak->ranges[1].start, 5);
    assert_int_equal(nak->ranges[1].count, 1);
    assert_int_equal(info(&fx).gap_ranges, 2);
    /* Repair 0 first: a split; then the rest. */
    repair(&fx, 0);
    assert_int_equal(info(&fx).gap_ranges, 3);
    repair(&fx, 0xFFFFFFFEu);
    repair(&fx, 0xFFFFFFFFu);
    repair(&fx, 1);
    repair(&fx, 5);
    expect_delivered(&fx, start, 16);
    assert_int_equal(info(&fx).gap_ranges, 0);
    fixture_fini(&fx);
}

static void test_nak_backoff_bounds(void **state)
{
    (void)state;
    uint64_t rng = 1;
    assert_int_equal(rdps__rel_nak_backoff_ns(&rng, 4 * MS, 1), 0);
    assert_int_equal(rdps__rel_nak_backoff_ns(&rng, 0, 64), 0);
    uint64_t sum = 0, lo = UINT64_MAX, hi = 0, early = 0;
    for (int i = 0; i < 100000; i++) {
        uint64_t t = rdps__rel_nak_backoff_ns(&rng, 4 * MS, 64);
        assert_true(t <= 4 * MS);
        sum += t;
        lo = t < lo ? t : lo;
        hi = t > hi ? t : hi;
        early += t < 1 * MS;
    }
    /* Increasing exponential (RFC 5401): most timers late, few in the first quarter. */
    assert_true(sum / 100000 > 3 * MS);
    assert_true(lo < 50 * US && hi > 3990 * US);
    /* P(t < T/4) = (e^(lambda/4) - 1) / (e^lambda - 1), lambda = ln 64 + 1: about 1.5 %. */
    assert_true(early > 1000 && early < 2200);
}

static void tune_reorder(struct rdps_reasm_config *cfg)
{
    cfg->rel.reorder_holdoff_ns = 2 * MS;
}

/* No NAK until `hold` from now, then one (the fixture's NAK count + 1) asking for `start`. */
static void expect_nak_after(struct fixture *fx, uint64_t hold, uint32_t start)
{
    size_t naks = fx->naks;
    fx->now += hold - 1;
    poll(fx);
    assert_int_equal(fx->naks, naks);
    fx->now += 1;
    poll(fx);
    assert_int_equal(fx->naks, naks + 1);
    assert_int_equal(last_nak(fx)->ranges[0].start, start);
}

/* One receiver NAKs at once, until the path shows it reorders: then after a hold-off of twice
 * how late originals came (at least a quarter RTT, at most reorder_holdoff_ns). */
static void test_reordering_path_holds_first_naks(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_init(&fx, tune_reorder);
    assert_true(data(&fx, 10, 0) >= 0);
    assert_true(data(&fx, 12, 0) >= 0);
    poll(&fx);
    assert_int_equal(fx.naks, 1); /* in-order path so far: at once */
    fx.now += 300 * US;
    assert_true(data(&fx, 11, 0) >= 0); /* the original was only late, by 300 us */
    assert_int_equal(info(&fx).counters.out_of_order, 1);
    assert_true(data(&fx, 14, 0) >= 0);
    expect_nak_after(&fx, 600 * US, 13);
    fx.now += 100 * US;
    assert_true(data(&fx, 13, 0) >= 0); /* later still (700 us): the hold-off grows to 1.4 ms */
    assert_true(data(&fx, 16, 0) >= 0);
    expect_nak_after(&fx, 1400 * US, 15);
    /* An original 10 ms late: the hold-off stops at reorder_holdoff_ns (2 ms). */
    fx.now += 10 * MS;
    assert_true(data(&fx, 15, 0) >= 0);
    assert_true(data(&fx, 18, 0) >= 0);
    expect_nak_after(&fx, 2 * MS, 17);
    expect_delivered(&fx, 10, 7); /* 17 is still missing */
    fixture_fini(&fx);
    /* Lateness of zero (reordered within one batch) still holds a quarter RTT (the 1 ms
     * default). */
    fixture_init(&fx, tune_reorder);
    assert_true(data(&fx, 0, 0) >= 0);
    assert_true(data(&fx, 2, 0) >= 0);
    assert_true(data(&fx, 1, 0) >= 0);
    assert_true(data(&fx, 4, 0) >= 0);
    poll(&fx);
    assert_int_equal(fx.naks, 0);
    expect_nak_after(&fx, 250 * US, 3);
    fixture_fini(&fx);
}

static void tune_group(struct rdps_reasm_config *cfg)
{
    cfg->rel.receivers = 64;
}

/* With many receivers the first NAK waits a random backoff within 4 RTTs. */
static void test_nak_delay_scaled_by_receivers(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_init(&fx, tune_group);
    data(&fx, 0, 0);
    data(&fx, 2, 0);
    uint64_t t0 = fx.now;
    uint64_t due = poll(&fx);
    assert_int_equal(fx.naks, 0);
    assert_true(due > t0 && due <= t0 + 4 * MS);
    fx.now = due;
    poll(&fx);
    assert_int_equal(fx.naks, 1);
    /* The exact receiver count from discovery: one receiver NAKs at once. */
    struct rdps_source src = test_source(1);
    assert_int_equal(rdps__reasm_rel_set_receivers(&fx.r, &src, SESSION, 1), 0);
    assert_int_equal(rdps__reasm_rel_set_receivers(&fx.r, &src, SESSION + 1, 1), RDPS_ENOENT);
    data(&fx, 4, 0);
    poll(&fx);
    assert_int_equal(fx.naks, 2);
    assert_int_equal(last_nak(&fx)->ranges[0].start, 3);
    fixture_fini(&fx);
}

/* Discovery's live count through the receivers_of hook: it follows receivers joining. */
static uint32_t hook_receivers = 1;
static uint64_t hook_topic;

static uint32_t receivers_hook(void *user, uint64_t topic_id)
{
    (void)user;
    hook_topic = topic_id;
    return hook_receivers;
}

static void tune_hook(struct rdps_reasm_config *cfg)
{
    cfg->rel.receivers_of = receivers_hook;
}

static void test_nak_delay_follows_discovery_count(void **state)
{
    (void)state;
    struct fixture fx;
    hook_receivers = 1;
    fixture_init(&fx, tune_hook);
    data(&fx, 0, 0);
    data(&fx, 2, 0);
    poll(&fx);
    assert_int_equal(fx.naks, 1); /* alone: at once */
    assert_int_equal(hook_topic, TOPIC);
    hook_receivers = 64; /* 63 more reliable subscribers announced themselves */
    data(&fx, 4, 0);
    uint64_t t0 = fx.now, due = poll(&fx);
    assert_int_equal(fx.naks, 1);
    assert_true(due > t0 && due <= t0 + 4 * MS);
    fx.now = due;
    poll(&fx);
    assert_int_equal(fx.naks, 2);
    hook_receivers = 0; /* taken as one */
    data(&fx, 6, 0);
    poll(&fx);
    assert_int_equal(fx.naks, 3);
    fixture_fini(&fx);
}

/* A first NAK drawn over the default RTT's backoff (4 x 1 ms, 64 receivers) follows the estimate
 * down when samples come: here a lone receiver's first sample (100 us) replaces the default and
 * the waiting NAK's time left shrinks tenfold. Before, it waited out its draw. */
static void test_waiting_first_nak_follows_rtt_down(void **state)
{
    (void)state;
    struct fixture fx;
    hook_receivers = 64;
    fixture_init(&fx, tune_hook);
    data(&fx, 0, 0);
    data(&fx, 2, 0); /* hole 1: a first NAK drawn within 4 ms */
    uint64_t t0 = fx.now, due = poll(&fx);
    assert_int_equal(fx.naks, 0);
    assert_true(due > t0 + 1 * MS && due <= t0 + 4 * MS);
    hook_receivers = 1; /* alone now: hole 3 is NAKed at once */
    data(&fx, 4, 0);
    poll(&fx);
    assert_int_equal(fx.naks, 1);
    assert_int_equal(last_nak(&fx)->ranges[0].start, 3);
    fx.now += 100 * US;
    repair(&fx, 3);
    assert_int_equal(info(&fx).srtt_ns, 100 * US);
    hook_receivers = 64;
    uint64_t left = due - fx.now, due2 = poll(&fx);
    assert_true(due2 <= fx.now + left / 10 + 1);
    fx.now = due2;
    poll(&fx);
    assert_int_equal(fx.naks, 2);
    assert_int_equal(last_nak(&fx)->ranges[0].start, 1);
    hook_receivers = 1;
    fixture_fini(&fx);
}

/* The same for a suppressed first hole: part of its range came as a repair another receiver
 * asked for (with parity, a symbol of its block too few for this receiver), and the rest still
 * waits its draw over the default RTT. It follows the estimate down like an unsuppressed one
 * (before, it waited out its draw: parity's first holes held the window while retransmission's
 * did not). */
static void test_suppressed_first_nak_follows_rtt_down(void **state)
{
    (void)state;
    struct fixture fx;
    hook_receivers = 64;
    fixture_init(&fx, tune_hook);
    data(&fx, 0, 0);
    data(&fx, 3, 0); /* holes 1 and 2: a first NAK drawn within 4 ms */
    uint64_t t0 = fx.now, due = poll(&fx);
    assert_true(due > t0 + 1 * MS && due <= t0 + 4 * MS);
    repair(&fx, 1); /* asked by another: 2 is suppressed, its draw kept */
    assert_int_equal(poll(&fx), due);
    hook_receivers = 1; /* alone now: hole 4 is NAKed at once */
    data(&fx, 5, 0);
    poll(&fx);
    assert_int_equal(fx.naks, 1);
    assert_int_equal(last_nak(&fx)->ranges[0].start, 4);
    fx.now += 100 * US;
    repair(&fx, 4);
    assert_int_equal(info(&fx).srtt_ns, 100 * US);
    hook_receivers = 64;
    uint64_t left = due - fx.now, due2 = poll(&fx);
    assert_true(due2 <= fx.now + left / 10 + 1);
    fx.now = due2;
    poll(&fx);
    assert_int_equal(fx.naks, 2);
    assert_int_equal(last_nak(&fx)->ranges[0].start, 2);
    hook_receivers = 1;
    fixture_fini(&fx);
}

/* Retry delays after a first NAK, for `receivers` from discovery's hook: one per new hole, each
 * repaired after its retry (no RTT sample: Karn). The wait is the 1 ms default RTT; the rest is
 * the random spread. */
static void retry_delays(uint32_t receivers, uint64_t *delay, int n)
{
    struct fixture fx;
    hook_receivers = receivers;
    fixture_init(&fx, tune_hook);
    data(&fx, 0, 0);
    for (int i = 0; i < n; i++) {
        uint32_t hole = 1 + 2 * (uint32_t)i;
        data(&fx, hole + 1, 0);
        size_t naks = fx.naks;
        for (int k = 0; k < 100 && fx.naks == naks; k++)
            fx.now = poll(&fx); /* the first NAK, after its backoff */
        assert_int_equal(fx.naks, naks + 1);
        uint64_t first = last_nak(&fx)->at;
        for (int k = 0; k < 100 && fx.naks == naks + 1; k++)
            fx.now = poll(&fx);
        assert_int_equal(fx.naks, naks + 2); /* the retry, not a hang when none comes */
        assert_int_equal(last_nak(&fx)->ranges[0].start, hole);
        delay[i] = last_nak(&fx)->at - first;
        repair(&fx, hole);
    }
    fixture_fini(&fx);
    hook_receivers = 1;
}

/* Several receivers' retries (the count from discovery's hook) wait the retry wait plus a random
 * spread: one RTT up to eight receivers, two for 64. */
static void test_retry_spread_follows_discovery_count(void **state)
{
    (void)state;
    uint64_t d[16];
    uint64_t lo = UINT64_MAX, hi = 0;
    retry_delays(8, d, 16);
    for (int i = 0; i < 16; i++) {
        assert_true(d[i] >= 1 * MS && d[i] <= 2 * MS);
        lo = d[i] < lo ? d[i] : lo;
        hi = d[i] > hi ? d[i] : hi;
    }
    assert_true(hi - lo > 100 * US); /* spread, not one fixed wait */
    retry_delays(64, d, 16);
    hi = 0;
    for (int i = 0; i < 16; i++) {
        assert_true(d[i] >= 1 * MS && d[i] <= 3 * MS);
        hi = d[i] > hi ? d[i] : hi;
    }
    assert_true(hi > 2 * MS);
    retry_delays(1, d, 1);
    assert_int_equal(d[0], 1 * MS); /* alone: no spread */
}

static void tune_retry(struct rdps_reasm_config *cfg)
{
    cfg->rel.nak_retry_max_ns = 4 * MS;
    cfg->rel.nak_max_tries = 12;
    cfg->rel.loss_deadline_ns = 0;
}

/* Sequences 1 and 2 go missing; they are NAKed at once, then every RTT (1 ms) eight times, then
 * after 2 ms and 4 ms (the cap), up to the twelfth NAK. */
static void expect_retries_undoubled_then_capped(struct fixture *fx)
{
    data(fx, 0, 0);
    data(fx, 3, 0);
    uint64_t t0 = fx->now;
    static const uint64_t at_ms[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 14, 18};
    for (int i = 0; i < 12; i++) {
        uint64_t due = poll(fx);
        assert_int_equal(fx->naks, (size_t)i + 1);
        assert_int_equal(last_nak(fx)->at - t0, at_ms[i] * MS);
        fx->now = due;
    }
}

/* A lone receiver retries every RTT eight times, then every RTT x 2^n capped; then the range is
 * lost once and delivery goes on. */
static void test_retry_backoff_cap_and_exhaustion(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_init(&fx, tune_retry);
    expect_retries_undoubled_then_capped(&fx);
    assert_int_equal(fx.nloss, 0);
    poll(&fx); /* the thirteenth would exceed nak_max_tries */
    assert_int_equal(fx.naks, 12);
    assert_int_equal(fx.nloss, 1);
    assert_int_equal(fx.loss[0].first_seq, 1);
    assert_int_equal(fx.loss[0].count, 2);
    assert_int_equal(fx.loss[0].reason, RDPS_LOSS_NAK_RETRIES);
    assert_string_equal(loss_name(fx.loss[0].reason), "nak_retries");
    assert_int_equal(fx.loss[0].session_id, SESSION);
    assert_int_equal(fx.rec.count, 2); /* 0, then 3 after the loss */
    assert_int_equal(fx.rec.items[0].first_seq, 0);
    assert_int_equal(fx.rec.items[1].first_seq, 3);
    /* Late copies of the lost sequences are never delivered. */
    assert_int_equal(repair(&fx, 1), 0);
    assert_int_equal(fx.rec.count, 2);
    assert_int_equal(rdps__reasm_rel_counters(&fx.r)->lost[RDPS_LOSS_NAK_RETRIES], 2);
    assert_int_equal(rdps__reasm_rel_counters(&fx.r)->loss_events, 1);
    fixture_fini(&fx);
}

static void tune_retry_group(struct rdps_reasm_config *cfg)
{
    tune_retry(cfg);
    cfg->rel.receivers = 8;
    cfg->rel.nak_backoff_rtts = 0; /* no random spread: the waits alone */
}

/* Several receivers retry every RTT eight times too before they back off: a retry asks only for
 * what this receiver misses, and the publisher's window waits on its oldest hole (doubling from
 * the first retry made eight receivers 4-6 times slower at 20 % loss in the simulated fabric). */
static void test_several_receivers_retry_undoubled_first(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_init(&fx, tune_retry_group);
    expect_retries_undoubled_then_capped(&fx);
    fixture_fini(&fx);
}

static void tune_retry_rto(struct rdps_reasm_config *cfg)
{
    cfg->rel.nak_retry_alone_ns = 50 * US; /* as the ctx configures a lone receiver */
    cfg->rel.nak_retry_min_rtts = 2;
    cfg->rel.nak_retry_max_ns = 4 * MS; /* below the RTT: bounds the backoff only */
    cfg->rel.loss_deadline_ns = 0;
}

/*
 * A lone receiver retries no earlier than two smoothed RTTs and the smoothed RTT plus four mean
 * deviations of its NAK -> repair samples (RFC 6298), and the retry cap never cuts that short:
 * repairs that wait behind a backlog come late, and a retry before them only brings a
 * duplicate. Samples 10 ms, then 30 ms: srtt 12.5 ms, deviation 5 ms, so 32.5 ms (not 25, not
 * the 4 ms cap).
 */
static void test_retry_waits_rtt_and_deviation(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_init(&fx, tune_retry_rto);
    data(&fx, 0, 0);
    data(&fx, 2, 0); /* 1 missing: NAKed at once */
    poll(&fx);
    assert_int_equal(fx.naks, 1);
    fx.now += 10 * MS;
    assert_true(repair(&fx, 1) > 0);
    assert_int_equal(info(&fx).srtt_ns, 10 * MS); /* alone: the first sample replaces it */
    /* With one sample and no deviation: two RTTs. */
    data(&fx, 4, 0); /* 3 missing */
    uint64_t t1 = fx.now;
    poll(&fx);
    assert_int_equal(fx.naks, 2);
    fx.now = t1 + 20 * MS - 1;
    poll(&fx);
    assert_int_equal(fx.naks, 2);
    fx.now = t1 + 20 * MS;
    poll(&fx);
    assert_int_equal(fx.naks, 3); /* the retry */
    /* That retry's repair gives no sample (Karn); a fresh hole's gives 30 ms. */
    assert_true(repair(&fx, 3) > 0);
    data(&fx, 6, 0); /* 5 missing */
    uint64_t t2 = fx.now;
    poll(&fx);
    assert_int_equal(fx.naks, 4);
    fx.now = t2 + 30 * MS;
    assert_true(repair(&fx, 5) > 0);
    assert_int_equal(info(&fx).srtt_ns, 10 * MS - 10 * MS / 8 + 30 * MS / 8);
    data(&fx, 8, 0); /* 7 missing */
    uint64_t t3 = fx.now;
    poll(&fx);
    assert_int_equal(fx.naks, 5);
    uint64_t rto = 12500 * US + 4 * (5 * MS);
    fx.now = t3 + rto - 1;
    poll(&fx);
    assert_int_equal(fx.naks, 5);
    fx.now = t3 + rto;
    poll(&fx);
    assert_int_equal(fx.naks, 6);
    assert_int_equal(fx.nloss, 0);
    fixture_fini(&fx);
}

/*
 * Karn's rule takes no sample from a range NAKed more than once; a lone receiver whose path is
 * slower than a few of the default RTT NAKed every range again before its repair came, so it
 * never had a sample and went on retrying every hole at the default's pace. Its first repair
 * now gives the time since detection (the first NAK) as its first sample.
 */
static void test_first_sample_despite_retries(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_init(&fx, NULL);
    data(&fx, 0, 0);
    data(&fx, 2, 0); /* 1 missing: NAKed at once */
    uint64_t t0 = fx.now;
    poll(&fx);
    assert_int_equal(fx.naks, 1);
    for (int k = 0; k < 2; k++) /* retries at the 1 ms default's pace */
        fx.now = poll(&fx);
    poll(&fx);
    assert_true(fx.naks >= 3);
    assert_true(fx.now < t0 + 50 * MS);
    fx.now = t0 + 50 * MS;
    assert_true(repair(&fx, 1) > 0);
    assert_int_equal(info(&fx).counters.rtt_samples, 1);
    assert_int_equal(info(&fx).srtt_ns, 50 * MS);
    /* The next hole's retry waits for that estimate, not the default. */
    size_t naks = fx.naks;
    data(&fx, 4, 0);
    uint64_t t1 = fx.now;
    poll(&fx);
    assert_int_equal(fx.naks, naks + 1);
    fx.now = t1 + 50 * MS - 1;
    poll(&fx);
    assert_int_equal(fx.naks, naks + 1);
    /* Only the first: later repairs of retried ranges give no sample (Karn). */
    for (uint64_t due = poll(&fx); fx.naks == naks + 1; due = poll(&fx))
        fx.now = due;
    fx.now += 10 * MS;
    assert_true(repair(&fx, 3) > 0);
    assert_int_equal(info(&fx).counters.rtt_samples, 1);
    assert_int_equal(fx.nloss, 0);
    fixture_fini(&fx);
}

/* While received datagrams wait unprocessed, a due retry waits for them (its repair may be
 * there), at most one more retry wait; a first NAK does not wait. */
static void test_retry_held_while_datagrams_queued(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_init(&fx, tune_retry);
    data(&fx, 0, 0);
    data(&fx, 3, 0); /* 1 and 2 missing */
    rdps__reasm_rel_set_backlog(&fx.r, true);
    poll(&fx);
    assert_int_equal(fx.naks, 1); /* the first NAK goes at once */
    uint64_t due = poll(&fx);
    assert_int_equal(due, fx.now + 1 * MS);
    fx.now = due;
    assert_int_equal(poll(&fx), fx.now); /* held: look again after the next datagrams */
    assert_int_equal(fx.naks, 1);
    fx.now += MS / 2;
    poll(&fx);
    assert_int_equal(fx.naks, 1);
    assert_int_equal(rdps__reasm_rel_counters(&fx.r)->retries_held, 1); /* once per retry */
    /* The queue processed: the retry goes. */
    rdps__reasm_rel_set_backlog(&fx.r, false);
    poll(&fx);
    assert_int_equal(fx.naks, 2);
    /* Held at most one retry wait past its due time, however long the queue stays. */
    rdps__reasm_rel_set_backlog(&fx.r, true);
    uint64_t nak2 = fx.now;
    fx.now = nak2 + 1 * MS;
    poll(&fx);
    assert_int_equal(fx.naks, 2);
    fx.now = nak2 + 2 * MS - 1;
    poll(&fx);
    assert_int_equal(fx.naks, 2);
    fx.now = nak2 + 2 * MS;
    poll(&fx);
    assert_int_equal(fx.naks, 3);
    assert_int_equal(rdps__reasm_rel_counters(&fx.r)->retries_held, 2);
    /* The repair came with the queue: nothing more is asked. */
    repair(&fx, 1);
    repair(&fx, 2);
    fx.now += 10 * MS;
    poll(&fx);
    assert_int_equal(fx.naks, 3);
    assert_int_equal(fx.rec.count, 4);
    fixture_fini(&fx);
}

static void tune_deadline(struct rdps_reasm_config *cfg)
{
    cfg->rel.loss_deadline_ns = 20 * MS;
}

static void test_loss_deadline(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_init(&fx, tune_deadline);
    data(&fx, 0, 0);
    data(&fx, 2, 0);
    uint64_t t0 = fx.now;
    for (;;) {
        uint64_t due = poll(&fx);
        if (fx.nloss > 0)
            break;
        assert_true(due <= t0 + 20 * MS);
        fx.now = due;
    }
    assert_int_equal(fx.loss[0].reason, RDPS_LOSS_DEADLINE);
    assert_string_equal(loss_name(fx.loss[0].reason), "deadline");
    assert_int_equal(fx.now, t0 + 20 * MS);
    assert_true(fx.naks >= 4); /* retried until then */
    assert_int_equal(fx.rec.count, 2);
    assert_int_equal(fx.rec.items[1].first_seq, 2);
    fixture_fini(&fx);
}

static void tune_deadline_oldest(struct rdps_reasm_config *cfg)
{
    cfg->rel.loss_deadline_ns = 20 * MS;
    cfg->rel.from_oldest = true;
}

/* A late joiner's backlog is repaired at the publisher's pace, for longer than the deadline:
 * nothing is given up while repairs keep coming; once they stop, the rest is, one deadline after
 * the last repair (it was all given up one deadline after the join). */
static void test_loss_deadline_counts_from_last_repair(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_init(&fx, tune_deadline_oldest);
    heartbeat(&fx, 300, 300, 0); /* retains [0, 300): all missing */
    assert_int_equal(info(&fx).consumed_seq, 0);
    poll(&fx);
    uint32_t seq = 0;
    for (int round = 0; round < 10; round++) { /* 20 every 5 ms: 50 ms, 2.5 deadlines */
        fx.now += 5 * MS;
        for (int i = 0; i < 20; i++)
            repair(&fx, seq++);
        poll(&fx);
        assert_int_equal(fx.nloss, 0);
    }
    expect_delivered(&fx, 0, 200);
    uint64_t last_repair = fx.now;
    while (fx.nloss == 0) {
        uint64_t due = poll(&fx);
        assert_true(due <= last_repair + 20 * MS);
        fx.now = due;
    }
    assert_int_equal(fx.now, last_repair + 20 * MS);
    assert_int_equal(fx.loss[0].reason, RDPS_LOSS_DEADLINE);
    assert_int_equal(fx.rec.count, 200);
    fixture_fini(&fx);
}

/* NAKs 1 and 3 (missing between 0, 2 and 4) in one NAK at once (one receiver). */
static void nak_two_holes(struct fixture *fx)
{
    data(fx, 0, 0);
    data(fx, 2, 0);
    data(fx, 4, 0);
    poll(fx);
    assert_int_equal(fx->naks, 1);
    assert_int_equal(last_nak(fx)->n, 2);
    assert_int_equal(last_nak(fx)->hdr.flags, 0);
}

/* Repairs come back in the order they were asked for: the repair of 3 arriving while 1 is
 * missing means 1's repair (or the NAK) was lost. A lone receiver asks again at once, flagged
 * RETRANSMIT (the publisher answers it inside its linger), not after the retry wait. */
static void test_overtaken_repair_asked_again_at_once(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_init(&fx, NULL);
    nak_two_holes(&fx);
    fx.now += 100 * US; /* well before the retry (2 RTTs of the 1 ms default) */
    repair(&fx, 3);
    poll(&fx);
    assert_int_equal(fx.naks, 2);
    const struct sent *nak = last_nak(&fx);
    assert_int_equal(nak->hdr.flags, RDPS_FRAME_F_RETRANSMIT);
    assert_int_equal(nak->n, 1);
    assert_int_equal(nak->ranges[0].start, 1);
    assert_int_equal(nak->ranges[0].count, 1);
    assert_int_equal(info(&fx).counters.overtaken, 1);
    /* Once per NAK: nothing more until that retry's own repair or its timer. */
    poll(&fx);
    assert_int_equal(fx.naks, 2);
    repair(&fx, 1);
    expect_delivered(&fx, 0, 5);
    fixture_fini(&fx);
}

/*
 * A poll that asks again for an overtaken range and for the first time for a new hole sends the
 * flagged NAK first: the publisher answers in order, so the re-asked range's repair comes before
 * the new hole's, as the overtaken rule assumes for ranges asked in the same poll. Flagged NAK
 * second, the new hole's repair came first and the re-asked range, still missing, was taken for
 * lost once more (one more NAK, and a duplicate repair when the first one came).
 */
static void test_overtaken_nak_goes_first(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_init(&fx, NULL);
    nak_two_holes(&fx);
    fx.now += 100 * US;
    repair(&fx, 3);  /* 1 overtaken */
    data(&fx, 6, 0); /* 5: a new hole */
    poll(&fx);
    assert_int_equal(fx.naks, 3);
    const struct sent *flagged = NULL, *fresh = NULL;
    for (size_t i = 0; i < fx.nsent; i++) {
        const struct sent *x = &fx.sent[i];
        if (x->hdr.type != RDPS_FRAME_NAK)
            continue;
        if (x->hdr.flags == RDPS_FRAME_F_RETRANSMIT)
            flagged = x;
        else if (x->ranges[0].start == 5)
            fresh = x;
    }
    assert_non_null(flagged);
    assert_non_null(fresh);
    assert_true(flagged < fresh); /* sent first */
    assert_int_equal(flagged->n, 1);
    assert_int_equal(flagged->ranges[0].start, 1);
    assert_int_equal(fresh->hdr.flags, 0);
    /* Repaired in that order: nothing is taken for lost again. */
    repair(&fx, 1);
    repair(&fx, 5);
    poll(&fx);
    assert_int_equal(fx.naks, 3);
    assert_int_equal(info(&fx).counters.overtaken, 1);
    expect_delivered(&fx, 0, 7);
    fixture_fini(&fx);
}

/* 64 receivers, first NAKs without backoff: both holes in one NAK, as alone. */
static void tune_group_at_once(struct rdps_reasm_config *cfg)
{
    cfg->rel.receivers = 64;
    cfg->rel.nak_backoff_rtts = 0;
}

static void test_overtaken_only_when_unambiguous(void **state)
{
    (void)state;
    struct fixture fx;
    /* The lower sequence's repair first: the higher one's is simply behind it. */
    fixture_init(&fx, NULL);
    nak_two_holes(&fx);
    repair(&fx, 1);
    poll(&fx);
    assert_int_equal(fx.naks, 1);
    fixture_fini(&fx);
    /* A retried range's repair may answer its first NAK: ranges NAKed in between are not
     * taken for lost. */
    fixture_init(&fx, NULL);
    nak_two_holes(&fx);
    fx.now = poll(&fx); /* the retry of both */
    poll(&fx);
    assert_int_equal(fx.naks, 2);
    assert_int_equal(last_nak(&fx)->hdr.flags, 0);
    repair(&fx, 3);
    poll(&fx);
    assert_int_equal(fx.naks, 2);
    fixture_fini(&fx);
    /* Several receivers: multicast repairs follow other receivers' NAKs too. */
    fixture_init(&fx, tune_group_at_once);
    nak_two_holes(&fx);
    repair(&fx, 3);
    poll(&fx);
    assert_int_equal(fx.naks, 1);
    assert_int_equal(info(&fx).counters.overtaken, 0);
    fixture_fini(&fx);
    /* A path seen reordering: a late original is not a lost one. */
    fixture_init(&fx, NULL);
    data(&fx, 10, 0);
    data(&fx, 12, 0);
    data(&fx, 11, 0); /* late original: reordering */
    data(&fx, 14, 0);
    data(&fx, 16, 0);
    for (uint64_t due = poll(&fx); fx.naks == 0; due = poll(&fx))
        fx.now = due; /* to the first NAK, after the reorder hold-off */
    assert_int_equal(last_nak(&fx)->n, 2);
    repair(&fx, 15);
    poll(&fx);
    assert_int_equal(fx.naks, 1);
    assert_int_equal(info(&fx).counters.overtaken, 0);
    fixture_fini(&fx);
}

/* A repair seen for a range not yet NAKed cancels that part; the rest waits an RTT. */
static void test_suppression_by_seen_repair(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_init(&fx, tune_group);
    data(&fx, 0, 0);
    data(&fx, 4, 0); /* 1, 2, 3 missing */
    uint64_t due = poll(&fx);
    assert_int_equal(fx.naks, 0);
    fx.now = due > fx.now + 10 * US ? due - 10 * US : fx.now; /* just before our NAK */
    repair(&fx, 1); /* someone else asked: its repair arrives */
    poll(&fx);
    fx.now = due; /* our NAK was due now: held back an RTT for the rest of the repair */
    poll(&fx);
    assert_int_equal(fx.naks, 0);
    repair(&fx, 2);
    repair(&fx, 3);
    poll(&fx);
    fx.now += 10 * MS;
    poll(&fx);
    assert_int_equal(fx.naks, 0);
    expect_delivered(&fx, 0, 5);
    assert_int_equal(info(&fx).counters.naks_suppressed, 1);
    assert_int_equal(info(&fx).counters.recovered, 3);
    fixture_fini(&fx);
}

static void test_status_cadence_and_content(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_init(&fx, NULL);
    rdps__reasm_rel_set_credits(&fx.r, 100); /* quarter window: 25 */
    data(&fx, 50, 0);
    poll(&fx); /* a new stream reports at once */
    assert_int_equal(fx.statuses, 1);
    const struct sent *st = last_status(&fx);
    assert_int_equal(st->consumed, 51);
    assert_int_equal(st->window, 100);
    assert_int_equal(st->receiver_id, 0xABCD);
    assert_int_equal(st->echo_delay_us, RDPS_FRAME_NO_ECHO);
    assert_true(st->hdr.timestamp_ns == fx.now + 5); /* the receiver's wall clock */
    assert_int_equal(st->hdr.session_id, SESSION);
    assert_int_equal(st->hdr.topic_id, TOPIC);
    /* 24 more messages: below a quarter window, no STATUS. */
    for (uint32_t s = 51; s < 75; s++)
        data(&fx, s, 0);
    uint64_t due = poll(&fx);
    assert_int_equal(fx.statuses, 1);
    assert_int_equal(due, fx.now + 100 * MS); /* the interval */
    data(&fx, 75, 0);
    poll(&fx);
    assert_int_equal(fx.statuses, 2);
    assert_int_equal(last_status(&fx)->consumed, 76);
    /* A heartbeat means the publisher is idle; one announcing less than this receiver's window
     * reaches is answered at once (the STATUS that opened the window may have been lost), with
     * its timestamp and the time it was held. */
    heartbeat(&fx, 77, 1000, 0x1234567890ull);
    fx.now += 250 * US;
    poll(&fx); /* a NAK for 76 and the STATUS */
    assert_int_equal(fx.statuses, 3);
    st = last_status(&fx);
    assert_true(st->hdr.timestamp_ns == 0x1234567890ull);
    assert_int_equal(st->echo_delay_us, 250);
    assert_int_equal(st->consumed, 76);
    assert_non_null(last_nak(&fx));
    repair(&fx, 76);
    /* Echoed once: the next STATUS, at the interval, carries the receiver's clock again. */
    poll(&fx);
    assert_int_equal(fx.statuses, 3);
    fx.now += 100 * MS;
    poll(&fx);
    assert_int_equal(fx.statuses, 4);
    assert_int_equal(last_status(&fx)->consumed, 77);
    assert_int_equal(last_status(&fx)->echo_delay_us, RDPS_FRAME_NO_ECHO);
    /* One finding everything consumed is answered at once too. */
    heartbeat(&fx, 77, 1000, 0x2234567890ull);
    fx.now += 30 * US;
    poll(&fx);
    assert_int_equal(fx.statuses, 5);
    st = last_status(&fx);
    assert_true(st->hdr.timestamp_ns == 0x2234567890ull);
    assert_int_equal(st->echo_delay_us, 30);
    assert_int_equal(st->consumed, 77);
    assert_int_equal(info(&fx).counters.status_sent, 5);
    fixture_fini(&fx);
}

static void tune_one_try(struct rdps_reasm_config *cfg)
{
    cfg->rel.nak_max_tries = 1;
    cfg->rel.loss_deadline_ns = 0;
}

/* The first fragment of a 3-fragment message is given up: the two that came go with it. */
static void test_loss_partial_message(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_init(&fx, tune_one_try);
    struct frame_list fl = {0};
    uint32_t seq = 1;
    assert_int_equal(
        frames_add_message(&fl, 1, SESSION, TOPIC, &seq, 3 * (DGRAM - RDPS_FRAME_HEADER_LEN),
                           RDPS_FRAME_DEFAULT_MAX_MSG_LEN, DGRAM, 99, RDPS_FRAME_F_RELIABLE),
        3);
    data(&fx, 0, 0);
    input(&fx, fl.items[1].data, fl.items[1].len); /* 1 missing */
    input(&fx, fl.items[2].data, fl.items[2].len);
    data(&fx, 4, 0);
    uint64_t due = poll(&fx); /* the one NAK */
    assert_int_equal(fx.naks, 1);
    fx.now = due;
    poll(&fx);
    assert_int_equal(fx.nloss, 2);
    assert_int_equal(fx.loss[0].first_seq, 1);
    assert_int_equal(fx.loss[0].count, 1);
    assert_int_equal(fx.loss[0].reason, RDPS_LOSS_NAK_RETRIES);
    assert_int_equal(fx.loss[1].first_seq, 2);
    assert_int_equal(fx.loss[1].count, 2);
    assert_int_equal(fx.loss[1].reason, RDPS_LOSS_PARTIAL_MESSAGE);
    assert_string_equal(loss_name(fx.loss[1].reason), "partial_message");
    assert_int_equal(fx.rec.count, 2); /* 0, then 4 after the losses */
    assert_int_equal(fx.rec.items[0].first_seq, 0);
    assert_int_equal(fx.rec.items[1].first_seq, 4);
    frames_free(&fl);
    fixture_fini(&fx);
}

static void tune_one_chunk_per_source(struct rdps_reasm_config *cfg)
{
    cfg->max_bytes_per_source = 4096; /* one arena chunk */
}

/* A message larger than the sender may hold here is given up whole; delivery goes on. */
static void test_loss_too_large(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_init(&fx, tune_one_chunk_per_source);
    struct frame_list fl = {0};
    uint32_t seq = 1;
    int frags =
        frames_add_message(&fl, 1, SESSION, TOPIC, &seq, 20 * (DGRAM - RDPS_FRAME_HEADER_LEN),
                           RDPS_FRAME_DEFAULT_MAX_MSG_LEN, DGRAM, 99, RDPS_FRAME_F_RELIABLE);
    assert_int_equal(frags, 20);
    data(&fx, 0, 0);
    for (int i = 0; i < frags; i++)
        input(&fx, fl.items[i].data, fl.items[i].len);
    data(&fx, 21, 0);
    assert_true(fx.nloss >= 1);
    uint32_t lost = 0;
    for (size_t i = 0; i < fx.nloss; i++) {
        assert_int_equal(fx.loss[i].reason, RDPS_LOSS_TOO_LARGE);
        assert_int_equal(fx.loss[i].first_seq, 1 + lost);
        lost += fx.loss[i].count;
    }
    assert_int_equal(lost, 20);
    assert_string_equal(loss_name(fx.loss[0].reason), "too_large");
    assert_int_equal(fx.rec.count, 2); /* 0 and 21 */
    frames_free(&fl);
    fixture_fini(&fx);
}

static void tune_one_session(struct rdps_reasm_config *cfg)
{
    cfg->max_sessions = 1;
}

/* A session pushed out of a full table loses what it had not delivered. */
static void test_loss_session_dropped(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_init(&fx, tune_one_session);
    data(&fx, 0, 0);
    data(&fx, 2, 0); /* 1 missing: 2 waits */
    assert_int_equal(fx.nloss, 0);
    assert_true(data_of(&fx, SESSION + 1, 100, 0) >= 0); /* takes the only entry */
    assert_int_equal(fx.nloss, 1);
    assert_int_equal(fx.loss[0].session_id, SESSION);
    assert_int_equal(fx.loss[0].first_seq, 1);
    assert_int_equal(fx.loss[0].count, 2);
    assert_int_equal(fx.loss[0].reason, RDPS_LOSS_SESSION_DROPPED);
    assert_string_equal(loss_name(fx.loss[0].reason), "session_dropped");
    fixture_fini(&fx);
}

/* A gap below the heartbeat's trail is lost at once, never NAKed; delivery goes on. */
static void test_unrecoverable_by_heartbeat_trail(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_init(&fx, NULL);
    for (uint32_t seq = 0; seq < 10; seq++)
        if (seq != 3)
            data(&fx, seq, 0);
    heartbeat(&fx, 12, 8, 0); /* retains [4, 12): 3 is gone; 10 and 11 are tail loss */
    assert_int_equal(fx.nloss, 1);
    assert_int_equal(fx.loss[0].first_seq, 3);
    assert_int_equal(fx.loss[0].count, 1);
    assert_int_equal(fx.loss[0].reason, RDPS_LOSS_BELOW_RING);
    assert_string_equal(loss_name(fx.loss[0].reason), "below_ring");
    assert_int_equal(fx.rec.count, 9);
    poll(&fx);
    const struct sent *nak = last_nak(&fx);
    assert_non_null(nak);
    assert_int_equal(nak->n, 1);
    assert_int_equal(nak->ranges[0].start, 10);
    assert_int_equal(nak->ranges[0].count, 2);
    /* A fragmented message with a fragment below the trail goes whole, as one event. */
    struct frame_list fl = {0};
    uint32_t seq = 12;
    assert_int_equal(
        frames_add_message(&fl, 1, SESSION, TOPIC, &seq, 3 * (DGRAM - RDPS_FRAME_HEADER_LEN),
                           RDPS_FRAME_DEFAULT_MAX_MSG_LEN, DGRAM, 99, RDPS_FRAME_F_RELIABLE),
        3);
    repair(&fx, 10);
    repair(&fx, 11);
    input(&fx, fl.items[0].data, fl.items[0].len);
    input(&fx, fl.items[2].data, fl.items[2].len); /* 13 missing */
    data(&fx, 15, 0);
    heartbeat(&fx, 16, 2, 0); /* retains [14, 16) */
    assert_int_equal(fx.nloss, 2);
    assert_int_equal(fx.loss[1].first_seq, 12);
    assert_int_equal(fx.loss[1].count, 3);
    assert_int_equal(fx.loss[1].reason, RDPS_LOSS_BELOW_RING);
    assert_int_equal(fx.rec.count, 12);
    assert_int_equal(fx.rec.items[11].first_seq, 15);
    assert_int_equal(rdps__reasm_partial_count(&fx.r), 0);
    /* A trail far ahead (we were overrun): one event up to it, then live again. (Given up a
     * window at a time, the first part ends where no message is known: one event.) */
    heartbeat(&fx, 5000, 100, 0);
    assert_int_equal(fx.nloss, 3);
    assert_int_equal(fx.loss[2].first_seq, 16);
    assert_int_equal(fx.loss[2].count, 4900 - 16);
    assert_int_equal(fx.loss[2].reason, RDPS_LOSS_BELOW_RING);
    /* Messages are numbered like sequences here: the trail's ordinal is 4900. */
    assert_int_equal(fx.loss[2].msg_first, 16);
    assert_int_equal(fx.loss[2].msg_count, 4900 - 16);
    assert_int_equal(info(&fx).consumed_seq, 4900);
    frames_free(&fl);
    fixture_fini(&fx);
}

/* Feeds frame f of a message again as a repair (RETRANSMIT set). */
static int repair_frame(struct fixture *fx, const struct frame *f)
{
    uint8_t buf[DGRAM];
    memcpy(buf, f->data, f->len);
    rdps__put_le16(
        buf + RDPS_FRAME_OFF_FLAGS,
        (uint16_t)(rdps__get_le16(buf + RDPS_FRAME_OFF_FLAGS) | RDPS_FRAME_F_RETRANSMIT));
    return input(fx, buf, f->len);
}

/* Polls and answers every NAK with repairs of the message framed in fl from sequence `first`,
 * until nothing is asked any more or `rounds` polls went. */
static void answer_naks(struct fixture *fx, const struct frame_list *fl, uint32_t first, int rounds)
{
    for (int round = 0; round < rounds; round++) {
        size_t before = fx->naks;
        fx->now += 5 * MS;
        poll(fx);
        if (fx->naks == before)
            return;
        const struct sent *nak = last_nak(fx);
        for (unsigned i = 0; i < nak->n; i++)
            for (uint32_t k = 0; k < nak->ranges[i].count; k++) {
                uint32_t seq = nak->ranges[i].start + k;
                if (seq - first < fl->count)
                    repair_frame(fx, &fl->items[seq - first]);
            }
    }
}

/*
 * A message longer than the sequence window (3000 fragments; the window is 2048) streams through
 * it: the consumed point moves into the message as its fragments come in order, what comes beyond
 * the window is dropped and asked for as the window slides, and the message is delivered whole,
 * in order between the one before and the one after. Before, a reliable stream refused a message
 * of a window's fragments or more (lost as too_large).
 */
static void test_message_longer_than_the_window_streams(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_init(&fx, NULL);
    struct frame_list fl = {0};
    uint32_t seq = 1;
    const uint32_t frags = 3000;
    assert_int_equal(frames_add_message(&fl, 1, SESSION, TOPIC, &seq,
                                        (size_t)frags * (DGRAM - RDPS_FRAME_HEADER_LEN),
                                        RDPS_FRAME_DEFAULT_MAX_MSG_LEN, DGRAM, 77,
                                        RDPS_FRAME_F_RELIABLE),
                     (int)frags);
    data(&fx, 0, 0);
    for (uint32_t i = 0; i < frags; i++)
        if (i != 10)
            input(&fx, fl.items[i].data, fl.items[i].len);
    /* Held at the hole inside the message; the rest of the window parked, the tail dropped. */
    assert_int_equal(info(&fx).consumed_seq, 11);
    assert_true(info(&fx).counters.beyond_window > 0);
    assert_int_equal(fx.rec.count, 1);
    repair_frame(&fx, &fl.items[10]);
    /* Past the hole: the point moved a window's worth into the undelivered message. */
    uint32_t consumed = info(&fx).consumed_seq;
    assert_true(consumed > 1 + RDPS_REASM_WINDOW);
    assert_true(consumed < 1 + frags);
    assert_int_equal(fx.rec.count, 1);
    assert_int_equal(info(&fx).counters.streamed, 1);
    answer_naks(&fx, &fl, 1, 50);
    data(&fx, 1 + frags, 0);
    assert_int_equal(fx.rec.count, 3);
    assert_int_equal(fx.rec.items[1].first_seq, 1);
    assert_int_equal(fx.rec.items[1].msg_id, 77);
    assert_true(fx.rec.items[1].pattern_ok);
    assert_int_equal(fx.rec.items[2].first_seq, 1 + frags);
    assert_int_equal(fx.nloss, 0);
    assert_int_equal(rdps__reasm_partial_count(&fx.r), 0);
    assert_int_equal(rdps__reasm_arena_used(&fx.r), 0);
    frames_free(&fl);
    fixture_fini(&fx);
}

/*
 * A streaming message whose missing fragment is given up goes whole: one loss event from its
 * first sequence to its end, though part of it had passed the consumed point, and the next
 * message is delivered.
 */
static void test_streaming_message_lost_whole(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_init(&fx, NULL);
    struct frame_list fl = {0};
    uint32_t seq = 0;
    const uint32_t frags = 3000;
    assert_int_equal(frames_add_message(&fl, 1, SESSION, TOPIC, &seq,
                                        (size_t)frags * (DGRAM - RDPS_FRAME_HEADER_LEN),
                                        RDPS_FRAME_DEFAULT_MAX_MSG_LEN, DGRAM, 78,
                                        RDPS_FRAME_F_RELIABLE),
                     (int)frags);
    for (uint32_t i = 0; i < 1000; i++)
        if (i != 5)
            input(&fx, fl.items[i].data, fl.items[i].len);
    assert_int_equal(info(&fx).consumed_seq, 5);   /* streaming, held at the hole */
    heartbeat(&fx, frags + 1, frags + 1 - 100, 0); /* retains [100, 3001): 5 is gone */
    assert_int_equal(fx.nloss, 1);
    assert_int_equal(fx.loss[0].first_seq, 0);
    assert_int_equal(fx.loss[0].count, frags);
    assert_int_equal(fx.loss[0].reason, RDPS_LOSS_BELOW_RING);
    assert_int_equal(rdps__reasm_partial_count(&fx.r), 0);
    data(&fx, frags, 0);
    assert_int_equal(fx.rec.count, 1);
    assert_int_equal(fx.rec.items[0].first_seq, frags);
    frames_free(&fl);
    fixture_fini(&fx);
}

static void test_late_join_live(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_init(&fx, NULL);
    repair(&fx, 60); /* a repair for other receivers: no place to join at */
    assert_int_equal(rdps__reasm_rel_counters(&fx.r)->repairs_before_join, 1);
    data(&fx, 100, 0); /* the first frame seen is the live position */
    data(&fx, 99, 0);  /* before it: never delivered */
    data(&fx, 101, 0);
    expect_delivered(&fx, 100, 2);
    assert_int_equal(info(&fx).counters.duplicates, 1);
    fixture_fini(&fx);
    /* First seen through a heartbeat: its next sequence. */
    fixture_init(&fx, NULL);
    heartbeat(&fx, 50, 40, 0);
    assert_int_equal(info(&fx).consumed_seq, 50);
    data(&fx, 49, 0);
    data(&fx, 50, 0);
    expect_delivered(&fx, 50, 1);
    poll(&fx);
    assert_int_equal(fx.naks, 0);
    fixture_fini(&fx);
}

static void tune_oldest(struct rdps_reasm_config *cfg)
{
    cfg->rel.from_oldest = true;
}

static void test_late_join_from_oldest(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_init(&fx, tune_oldest);
    heartbeat(&fx, 50, 10, 0); /* retains [40, 50) */
    assert_int_equal(info(&fx).consumed_seq, 40);
    poll(&fx);
    assert_int_equal(last_nak(&fx)->ranges[0].start, 40);
    assert_int_equal(last_nak(&fx)->ranges[0].count, 10);
    data(&fx, 50, 0);
    for (uint32_t seq = 40; seq < 50; seq++)
        repair(&fx, seq);
    expect_delivered(&fx, 40, 11);
    fixture_fini(&fx);

    /* DATA first: parked until the heartbeat tells where the ring starts. */
    fixture_init(&fx, tune_oldest);
    data(&fx, 50, 0);
    data(&fx, 51, 0);
    poll(&fx);
    assert_int_equal(fx.rec.count, 0);
    assert_int_equal(fx.nsent, 0);
    assert_true(info(&fx).joining);
    heartbeat(&fx, 52, 12, 0);
    poll(&fx);
    assert_int_equal(last_nak(&fx)->ranges[0].start, 40);
    assert_int_equal(last_nak(&fx)->ranges[0].count, 10);
    for (uint32_t seq = 40; seq < 50; seq++)
        repair(&fx, seq);
    expect_delivered(&fx, 40, 12);
    fixture_fini(&fx);

    /* A heartbeat one publisher heartbeat gap (at most 100 ms) and a slow host's delay after the
     * DATA still joins at the trail. */
    fixture_init(&fx, tune_oldest);
    data(&fx, 50, 0);
    fx.now += 150 * MS;
    poll(&fx);
    assert_true(info(&fx).joining);
    heartbeat(&fx, 51, 11, 0);
    poll(&fx);
    assert_int_equal(last_nak(&fx)->ranges[0].start, 40);
    fixture_fini(&fx);

    /* No heartbeat within join_wait: start at the first frame seen. */
    fixture_init(&fx, tune_oldest);
    data(&fx, 50, 0);
    data(&fx, 51, 0);
    fx.now = poll(&fx);
    poll(&fx);
    assert_false(info(&fx).joining);
    expect_delivered(&fx, 50, 2);
    fixture_fini(&fx);
}

static void test_counters_and_latency_histogram(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_init(&fx, NULL);
    data(&fx, 0, 0);
    for (uint32_t seq = 2; seq < 200; seq += 2)
        data(&fx, seq, 0); /* every odd one missing */
    poll(&fx);
    assert_int_equal(fx.naks, 1);
    assert_int_equal(last_nak(&fx)->n, 32); /* the gap list cap */
    uint64_t t0 = fx.now;
    for (uint32_t seq = 1; seq < 64; seq += 2) {
        fx.now = t0 + (seq < 40 ? 100 * US : 3 * MS);
        repair(&fx, seq);
    }
    data(&fx, 7, 0); /* duplicate */
    const struct rdps_rel_recv_counters *c = rdps__reasm_rel_counters(&fx.r);
    assert_int_equal(c->recovered, 32);
    assert_int_equal(c->duplicates, 1);
    assert_int_equal(c->naks_sent, 1);
    assert_int_equal(c->nak_ranges_sent, 32);
    assert_true(c->range_overflow > 0); /* 99 holes, 32 ranges */
    assert_int_equal(rdps__rel_latency_quantile_us(c->repair_latency, 0.5), 128);
    assert_int_equal(rdps__rel_latency_quantile_us(c->repair_latency, 0.99), 4096);
    /* In round trips of the estimate each was asked with: the first repair replaced the 1 ms
     * default with 100 us (so it came at 0.1 RTT), the next 19 at one RTT, the first 3 ms one at
     * 30 RTTs (the estimate before its own sample), the later ones at fewer as it grows. */
    assert_int_equal(c->repair_rtts[0], 1);
    assert_int_equal(c->repair_rtts[4], 19); /* [1, 1.25) RTT */
    assert_int_equal(rdps__rel_rtts_quantile_milli(c->repair_rtts, 0.5), 1250);
    assert_int_equal(rdps__rel_rtts_quantile_milli(c->repair_rtts, 0.99), 32000);
    uint64_t none[RDPS_REL_RTT_BUCKETS] = {0};
    assert_int_equal(rdps__rel_rtts_quantile_milli(none, 0.5), 0);
    /* Per-stream figures match the totals for the only stream. */
    struct rdps_rel_stream_info in = info(&fx);
    assert_memory_equal(&in.counters, c, sizeof(*c));
    fixture_fini(&fx);
}

/* A parked message evicted under memory pressure is asked for again, never lost. */
static void tune_small(struct rdps_reasm_config *cfg)
{
    cfg->max_partials = 6;
}

static void test_evicted_parked_message_is_asked_again(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_init(&fx, tune_small);
    data(&fx, 0, 0);
    for (uint32_t seq = 2; seq < 8; seq++)
        data(&fx, seq, 0); /* the window is the 6 it can park: 7 is beyond it */
    assert_int_equal(info(&fx).counters.park_evicted, 0);
    assert_int_equal(info(&fx).counters.beyond_window, 1);
    /* A second session of the same source needs parking room too: over the source's quota
     * the oldest parked message (2) goes, and is asked for again. */
    data_of(&fx, SESSION + 1, 100, 0);
    data_of(&fx, SESSION + 1, 102, 0);
    data_of(&fx, SESSION + 1, 103, 0);
    assert_int_equal(info(&fx).counters.park_evicted, 1);
    poll(&fx);
    bool asked = false;
    for (size_t i = 0; i < fx.nsent; i++)
        if (fx.sent[i].hdr.type == RDPS_FRAME_NAK && fx.sent[i].hdr.session_id == SESSION &&
            fx.sent[i].ranges[0].start == 1 && fx.sent[i].ranges[0].count == 2)
            asked = true; /* 1, and the evicted 2 */
    assert_true(asked);
    for (uint32_t seq = 1; seq < 8; seq++)
        repair(&fx, seq);
    /* Session A: 0..7 in order, each once (B delivered its 100 in between). */
    uint32_t next = 0;
    for (size_t i = 0; i < fx.rec.count; i++) {
        if (fx.rec.items[i].first_seq >= 100)
            continue;
        assert_int_equal(fx.rec.items[i].first_seq, next);
        assert_true(fx.rec.items[i].pattern_ok);
        next++;
    }
    assert_int_equal(next, 8);
    assert_int_equal(fx.nloss, 0);
    fixture_fini(&fx);
}

/*
 * A message with more fragments than the stream's share of the parking quota (6 here): the
 * window stretches to hold it whole, the STATUS says so at once, and the message is delivered;
 * the next message is back within the share. Before, fragments past the share were dropped and
 * never asked for: the stream stalled for good (a 134 kB message against a 64-datagram share).
 */
static void test_message_larger_than_share_completes(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_init(&fx, tune_small);
    struct frame_list fl = {0};
    uint32_t seq = 50;
    assert_int_equal(
        frames_add_message(&fl, 1, SESSION, TOPIC, &seq, 10 * (DGRAM - RDPS_FRAME_HEADER_LEN),
                           RDPS_FRAME_DEFAULT_MAX_MSG_LEN, DGRAM, 7, RDPS_FRAME_F_RELIABLE),
        10);
    assert_int_equal(
        frames_add_message(&fl, 1, SESSION, TOPIC, &seq, 9 * (DGRAM - RDPS_FRAME_HEADER_LEN),
                           RDPS_FRAME_DEFAULT_MAX_MSG_LEN, DGRAM, 8, RDPS_FRAME_F_RELIABLE),
        9);
    for (size_t i = 0; i < 10; i++)
        assert_true(input(&fx, fl.items[i].data, fl.items[i].len) >= 0);
    assert_int_equal(fx.rec.count, 1);
    assert_int_equal(fx.rec.items[0].msg_id, 7);
    assert_true(fx.rec.items[0].pattern_ok);
    assert_int_equal(info(&fx).counters.beyond_window, 0);
    poll(&fx);
    const struct sent *st = last_status(&fx);
    assert_non_null(st);
    assert_true(st->window >= 6);
    /* The second message (9 fragments) stretches the window again once it is at the head,
     * even with its first fragment lost: a later one names the span. */
    for (size_t i = 11; i < 19; i++)
        assert_true(input(&fx, fl.items[i].data, fl.items[i].len) >= 0);
    assert_int_equal(info(&fx).counters.beyond_window, 0);
    assert_true(input(&fx, fl.items[10].data, fl.items[10].len) >= 0);
    assert_int_equal(fx.rec.count, 2);
    assert_int_equal(fx.rec.items[1].msg_id, 8);
    assert_true(fx.rec.items[1].pattern_ok);
    /* Back to the share: 6 datagrams past the consumed point is beyond the window. */
    assert_int_equal(data(&fx, seq + 6, 0), 0);
    assert_int_equal(info(&fx).counters.beyond_window, 1);
    assert_int_equal(fx.nloss, 0);
    frames_free(&fl);
    fixture_fini(&fx);
}

static void tune_park_400(struct rdps_reasm_config *cfg)
{
    cfg->max_partials = 400;
    cfg->max_partials_per_source = 400;
}

/*
 * The credits bound what is in flight past the newest datagram received, not past the consumed
 * point: frames parked behind a hole were taken off the receive queue, so the window is the
 * stretch held past the consumed point plus the credits (within the parking room and the
 * sequence window). A hole then stops the publisher only when the parking room is full, not
 * after one credit window; and parking moves the window's edge, so a STATUS goes out after a
 * quarter of the credits of it even though the consumed point stands still.
 */
/* 400 parking slots, 100 credits (a quarter: 25); 0 received and reported in one STATUS. */
static void start_with_100_credits(struct fixture *fx)
{
    fixture_init(fx, tune_park_400);
    rdps__reasm_rel_set_credits(&fx->r, 100);
    data(fx, 0, 0);
    poll(fx);
    assert_int_equal(fx->statuses, 1);
}

static void test_window_is_credits_past_newest_received(void **state)
{
    (void)state;
    struct fixture fx;
    start_with_100_credits(&fx);
    assert_int_equal(last_status(&fx)->window, 100); /* nothing held: the credits */
    /* 1 never comes; 2..24 park: the newest received moved 24 past the STATUS's, below a
     * quarter. */
    for (uint32_t q = 2; q < 25; q++)
        data(&fx, q, 0);
    poll(&fx);
    assert_int_equal(fx.statuses, 1);
    data(&fx, 25, 0); /* a quarter */
    poll(&fx);
    assert_int_equal(fx.statuses, 2);
    const struct sent *st = last_status(&fx);
    assert_int_equal(st->consumed, 1);
    assert_int_equal(st->window, 25 + 100);
    /* Parked on, far past one credit window behind the hole: nothing is beyond the window. */
    for (uint32_t q = 26; q < 250; q++)
        data(&fx, q, 0);
    assert_int_equal(info(&fx).counters.beyond_window, 0);
    assert_int_equal(info(&fx).counters.parked, 248);
    poll(&fx);
    assert_int_equal(last_status(&fx)->window, 249 + 100);
    /* More than the credits past the newest received is beyond it (and the parking room's
     * 400 slots less the 248 parked and the hole's is the other bound: 249 + 151 = 400). */
    assert_int_equal(data(&fx, 250 + 100, 0), 0);
    assert_int_equal(info(&fx).counters.beyond_window, 1);
    assert_true(data(&fx, 250 + 99, 0) >= 0);
    assert_int_equal(info(&fx).counters.beyond_window, 1);
    /* The repair of 1 releases 0..249 in order; 250..348 are a new hole before 349. */
    assert_true(repair(&fx, 1) > 0);
    assert_int_equal(info(&fx).consumed_seq, 250);
    expect_delivered(&fx, 0, 250);
    assert_int_equal(fx.nloss, 0);
    fixture_fini(&fx);
}

/*
 * The edge of the window moves with the newest datagram received whether or not the consumed
 * point moves: a repair that moves the consumed point a little (to the next hole) must not hold
 * back the STATUS that parking behind that hole made due. Before, a consumed point that moved
 * at all was held to a quarter window of progress, and a publisher that had sent up to the edge
 * waited for the STATUS interval with the receiver idle.
 */
static void test_status_when_edge_moves_while_consumed_creeps(void **state)
{
    (void)state;
    struct fixture fx;
    start_with_100_credits(&fx);
    /* Holes at 1 and 5; 2..4 and 6..24 park: 24 past the STATUS's newest, below a quarter. */
    for (uint32_t q = 2; q < 25; q++)
        if (q != 5)
            data(&fx, q, 0);
    poll(&fx);
    assert_int_equal(fx.statuses, 1);
    /* The repair of 1 moves the consumed point to the next hole: 4, below a quarter. */
    assert_int_equal(repair(&fx, 1), 4);
    assert_int_equal(info(&fx).consumed_seq, 5);
    poll(&fx);
    assert_int_equal(fx.statuses, 1);
    data(&fx, 25, 0); /* the edge moved a quarter of the credits */
    poll(&fx);
    assert_int_equal(fx.statuses, 2);
    const struct sent *st = last_status(&fx);
    assert_int_equal(st->consumed, 5);
    assert_int_equal(st->window, 21 + 100); /* 5..25 held past the consumed point, + credits */
    /* And not again before the edge moves another quarter. */
    for (uint32_t q = 26; q < 50; q++)
        data(&fx, q, 0);
    poll(&fx);
    assert_int_equal(fx.statuses, 2);
    data(&fx, 50, 0);
    poll(&fx);
    assert_int_equal(fx.statuses, 3);
    fixture_fini(&fx);
}

/*
 * The window reaches past a hole as far as the parking room: a hole costs the one slot its
 * repair will need, not the stretch behind it, and a message of several fragments parks in one
 * slot. Share 6: with 1 missing, a 4-fragment message (2..5, one slot) and singles 6..9 (four
 * slots) fill the share with the hole's slot; 10 is beyond. Before, the window counted every
 * sequence past the consumed point and stopped at 6 (7..9 beyond): one old hole blocked the
 * publisher after a share of datagrams although the receiver had room to park more.
 */
static void test_window_reaches_past_hole_up_to_parking_room(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_init(&fx, tune_small);
    struct frame_list fl = {0};
    uint32_t seq = 2;
    assert_int_equal(
        frames_add_message(&fl, 1, SESSION, TOPIC, &seq, 4 * (DGRAM - RDPS_FRAME_HEADER_LEN),
                           RDPS_FRAME_DEFAULT_MAX_MSG_LEN, DGRAM, 2, RDPS_FRAME_F_RELIABLE),
        4);
    data(&fx, 0, 0); /* delivered: the consumed point is 1, and 1 never comes */
    for (size_t i = 0; i < 4; i++)
        assert_true(input(&fx, fl.items[i].data, fl.items[i].len) >= 0);
    fx.now += 200 * MS; /* a STATUS is due by the interval */
    poll(&fx);
    const struct sent *st = last_status(&fx);
    assert_non_null(st);
    assert_int_equal(st->consumed, 1);
    assert_int_equal(st->window, 9); /* 4 received past 1, and 5 free slots */
    for (uint32_t q = 6; q < 10; q++)
        data(&fx, q, 0);
    assert_int_equal(info(&fx).counters.beyond_window, 0);
    assert_int_equal(info(&fx).counters.parked, 5);
    /* The share is full (five parked messages and the hole's slot): 10 is beyond. */
    assert_int_equal(data(&fx, 10, 0), 0);
    assert_int_equal(info(&fx).counters.beyond_window, 1);
    fx.now += 200 * MS;
    poll(&fx);
    st = last_status(&fx);
    assert_int_equal(st->consumed, 1);
    assert_int_equal(st->window, 9);
    /* The repair of the hole finds room: everything is released in order, nothing evicted. */
    assert_true(repair(&fx, 1) > 0);
    assert_int_equal(info(&fx).counters.park_evicted, 0);
    assert_int_equal(info(&fx).consumed_seq, 10);
    static const uint32_t firsts[] = {0, 1, 2, 6, 7, 8, 9};
    assert_int_equal(fx.rec.count, 7);
    for (size_t i = 0; i < 7; i++) {
        assert_int_equal(fx.rec.items[i].first_seq, firsts[i]);
        assert_true(fx.rec.items[i].pattern_ok);
    }
    assert_int_equal(fx.rec.items[2].msg_id, 2);
    /* Nothing parked: the whole share is free again. */
    fx.now += 200 * MS;
    poll(&fx);
    assert_int_equal(last_status(&fx)->window, 6);
    assert_int_equal(fx.nloss, 0);
    frames_free(&fl);
    fixture_fini(&fx);
}

/* ---- a lossy link and a publisher with a ring: the whole receive side end to end ---------- */

enum { EV_FRAME, EV_NAK };

struct event {
    uint64_t at;
    uint8_t kind;
    uint16_t flags; /* EV_FRAME: extra flags (RETRANSMIT) */
    uint32_t a, b;  /* EV_FRAME: frame index; EV_NAK: range start, count */
};

struct sim {
    struct fixture fx;
    struct frame_list fl; /* every frame, index = seq - first_seq */
    uint32_t first_seq, posted, ring;
    struct event *heap;
    size_t n, cap;
    uint64_t rng;
    unsigned loss_pct, reorder_pct, dup_pct;
    uint64_t half_rtt;
    uint8_t *msg_lost; /* per message id: covered by a loss event */
    uint32_t *msg_first_seq;
    size_t msgs;
};

static void heap_push(struct sim *sm, struct event e)
{
    if (sm->n == sm->cap) {
        sm->cap = sm->cap ? sm->cap * 2 : 1024;
        sm->heap = realloc(sm->heap, sm->cap * sizeof(*sm->heap));
        assert_non_null(sm->heap);
    }
    size_t i = sm->n++;
    while (i > 0 && sm->heap[(i - 1) / 2].at > e.at) {
        sm->heap[i] = sm->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    sm->heap[i] = e;
}

static struct event heap_pop(struct sim *sm)
{
    struct event top = sm->heap[0], last = sm->heap[--sm->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= sm->n)
            break;
        if (c + 1 < sm->n && sm->heap[c + 1].at < sm->heap[c].at)
            c++;
        if (sm->heap[c].at >= last.at)
            break;
        sm->heap[i] = sm->heap[c];
        i = c;
    }
    if (sm->n > 0)
        sm->heap[i] = last;
    return top;
}

/* The link: loss, reordering by up to 300 us, duplication. */
static void link_send(struct sim *sm, struct event e)
{
    if (test_rand(&sm->rng) % 100 < sm->loss_pct)
        return;
    if (test_rand(&sm->rng) % 100 < sm->reorder_pct)
        e.at += test_rand(&sm->rng) % (300 * US);
    heap_push(sm, e);
    if (test_rand(&sm->rng) % 100 < sm->dup_pct) {
        e.at += test_rand(&sm->rng) % (100 * US);
        heap_push(sm, e);
    }
}

static struct sim *sim_current;

static void sim_send(void *user, const struct rdps_source *dest, uint32_t session_id,
                     const uint8_t *frame, size_t len)
{
    (void)user;
    (void)dest;
    (void)session_id;
    struct sim *sm = sim_current;
    struct rdps_frame_view v;
    assert_int_equal(rdps__frame_decode(frame, len, NULL, &v), RDPS_FRAME_OK);
    if (v.hdr.type != RDPS_FRAME_NAK)
        return;
    for (unsigned i = 0; i < v.nak_range_count; i++) {
        struct rdps_seq_range r = rdps__frame_nak_range(&v, i);
        link_send(sm, (struct event){sm->fx.now + sm->half_rtt, EV_NAK, 0, r.start, r.count});
    }
}

static void sim_loss(void *user, const struct rdps_reasm_loss *loss)
{
    (void)user;
    struct sim *sm = sim_current;
    on_loss(&sm->fx, loss);
    sm->fx.nloss = 0; /* only the message marks matter here */
    /* A loss event never covers a delivered message; mark the messages it covers. */
    for (size_t m = 0; m < sm->msgs; m++)
        if (sm->msg_first_seq[m] - loss->first_seq < loss->count) {
            for (size_t d = 0; d < sm->fx.rec.count; d++)
                assert_true(sm->fx.rec.items[d].msg_id != m);
            sm->msg_lost[m]++;
        }
}

static void tune_sim(struct rdps_reasm_config *cfg)
{
    cfg->rel.send = sim_send;
    cfg->rel.on_loss = sim_loss;
    cfg->rel.default_rtt_ns = 100 * US;
    cfg->rel.nak_retry_max_ns = 2 * MS;
    cfg->rel.nak_max_tries = 12;
    cfg->rel.loss_deadline_ns = 0;
    cfg->max_gap_ranges = 64;
}

/*
 * msgs messages of 1..3000 bytes (1 to 14 fragments of 224 bytes) through the
 * link (loss, reordering and duplication on data, NAKs and repairs alike);
 * the publisher retains the last `ring` sequences, repairs what a NAK asks
 * for after half an RTT, and heartbeats every 500 us. Returns the messages
 * reported lost.
 */
static size_t simulate(struct sim *sm, size_t msgs, uint32_t ring, uint64_t seed, unsigned loss_pct,
                       unsigned reorder_pct, unsigned dup_pct)
{
    memset(sm, 0, sizeof(*sm));
    sm->loss_pct = loss_pct;
    sm->reorder_pct = reorder_pct;
    sm->dup_pct = dup_pct;
    sim_current = sm;
    fixture_init(&sm->fx, tune_sim);
    sm->rng = seed;
    sm->ring = ring;
    sm->half_rtt = 50 * US;
    sm->msgs = msgs;
    sm->msg_lost = calloc(msgs, 1);
    sm->msg_first_seq = calloc(msgs, sizeof(uint32_t));
    uint32_t seq = sm->first_seq = 0xFFFFF000u;
    for (size_t m = 0; m < msgs; m++) {
        sm->msg_first_seq[m] = seq;
        size_t len = 1 + test_rand(&sm->rng) % (m % 4 == 0 ? 3000 : 200);
        frames_add_message(&sm->fl, 1, SESSION, TOPIC, &seq, len, RDPS_FRAME_DEFAULT_MAX_MSG_LEN,
                           DGRAM, m, RDPS_FRAME_F_RELIABLE);
    }
    uint64_t t = sm->fx.now, next_hb = t, deadline = UINT64_MAX;
    for (;;) {
        /* The publisher posts a frame every 5 us and heartbeats every 500 us. */
        uint64_t post_at = sm->posted < sm->fl.count ? t + 5 * US : UINT64_MAX;
        uint64_t ev_at = sm->n > 0 ? sm->heap[0].at : UINT64_MAX;
        uint64_t at = post_at < ev_at ? post_at : ev_at;
        at = at < next_hb ? at : next_hb;
        at = at < deadline ? at : deadline;
        if (at - sm->fx.now > 2000 * MS)
            break;
        t = sm->fx.now = at;
        if (at == post_at) {
            link_send(sm, (struct event){at + sm->half_rtt, EV_FRAME, 0, sm->posted++, 0});
        } else if (at == next_hb) {
            uint8_t hb[RDPS_FRAME_HEADER_LEN];
            uint32_t next = sm->first_seq + sm->posted;
            uint32_t retained = sm->posted < ring ? sm->posted : ring;
            rdps__frame_encode_heartbeat_reliable(hb, sizeof(hb), SESSION, TOPIC, next, retained,
                                                  next, (next) - (retained), at);
            input(&sm->fx, hb, RDPS_FRAME_HEADER_LEN);
            next_hb = at + 500 * US;
        } else if (at == ev_at) {
            struct event e = heap_pop(sm);
            if (e.kind == EV_FRAME) {
                struct frame *f = &sm->fl.items[e.a];
                if (e.flags)
                    f->data[2] |= RDPS_FRAME_F_RETRANSMIT;
                else
                    f->data[2] &= (uint8_t)~RDPS_FRAME_F_RETRANSMIT;
                input(&sm->fx, f->data, f->len);
            } else {
                uint32_t oldest = sm->posted < ring ? 0 : sm->posted - ring;
                for (uint32_t k = 0; k < e.b; k++) {
                    uint32_t idx = e.a + k - sm->first_seq;
                    if (idx >= oldest && idx < sm->posted)
                        link_send(sm, (struct event){at + sm->half_rtt, EV_FRAME,
                                                     RDPS_FRAME_F_RETRANSMIT, idx, 0});
                }
            }
        }
        deadline = rdps__reasm_rel_poll(&sm->fx.r, at, at);
        uint64_t expire = rdps__reasm_expire(&sm->fx.r, at);
        deadline = deadline < expire ? deadline : expire;
        if (sm->posted == sm->fl.count && sm->n == 0 && info(&sm->fx).consumed_seq == seq)
            break;
    }
    /* In order, once, intact; every message delivered or in exactly one loss event. */
    size_t lost = 0, d = 0;
    for (size_t m = 0; m < msgs; m++) {
        assert_true(sm->msg_lost[m] <= 1);
        if (sm->msg_lost[m]) {
            lost++;
            continue;
        }
        assert_true(d < sm->fx.rec.count);
        assert_int_equal(sm->fx.rec.items[d].msg_id, m);
        assert_true(sm->fx.rec.items[d].pattern_ok);
        d++;
    }
    assert_int_equal(d, sm->fx.rec.count);
    return lost;
}

static void sim_free(struct sim *sm)
{
    free(sm->heap);
    free(sm->msg_lost);
    free(sm->msg_first_seq);
    frames_free(&sm->fl);
    fixture_fini(&sm->fx);
}

static void test_lossy_link_everything_in_order_once(void **state)
{
    (void)state;
    static struct sim sm;
    static const unsigned loss[] = {1, 5, 20};
    for (unsigned i = 0; i < 3; i++)
        for (uint64_t seed = 1; seed <= 2; seed++) {
            size_t lost = simulate(&sm, 3000, 1u << 20, seed * 7919, loss[i], 25, 5);
            assert_int_equal(lost, 0);
            assert_int_equal(sm.fx.rec.count, 3000);
            assert_true(rdps__reasm_rel_counters(&sm.fx.r)->recovered > 0);
            sim_free(&sm);
        }
}

/* A ring too small for the repairs: every message is delivered or in exactly one loss event. */
static void test_small_ring_every_gap_repaired_or_reported_once(void **state)
{
    (void)state;
    static struct sim sm;
    size_t lost = simulate(&sm, 3000, 64, 99, 20, 25, 5);
    assert_true(lost > 0);
    assert_true(sm.fx.rec.count > 1000);
    assert_true(rdps__reasm_rel_counters(&sm.fx.r)->lost[RDPS_LOSS_BELOW_RING] > 0);
    sim_free(&sm);
}

/*
 * Issue 28 finding 10: a publisher that falls silent (gone, or never there: one forged frame)
 * gets STATUS backing off and NAK retries spaced by the silence, then nothing once the stream is
 * idle (5 s); its hole still meets the loss deadline, releasing what was parked behind it; the
 * first frame heard brings STATUS back at once and at the usual interval.
 */
static void test_silent_publisher_goes_idle(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_init(&fx, NULL);
    const uint64_t t0 = fx.now;
    data(&fx, 0, 0);
    data(&fx, 1, 0);
    data(&fx, 3, 0); /* 2 is missing: 3 parks behind it */
    uint64_t status_at[16];
    size_t statuses = 0, last_nak_ms = 0;
    for (;;) {
        size_t before = fx.nsent;
        uint64_t due = poll(&fx);
        for (size_t i = before; i < fx.nsent; i++) {
            if (fx.sent[i].hdr.type == RDPS_FRAME_STATUS && statuses < 16)
                status_at[statuses++] = (fx.sent[i].at - t0) / MS;
            if (fx.sent[i].hdr.type == RDPS_FRAME_NAK)
                last_nak_ms = (fx.sent[i].at - t0) / MS;
        }
        if (due == UINT64_MAX || due > t0 + 20000 * MS)
            break;
        fx.now = due > fx.now ? due : fx.now + 1;
    }
    static const uint64_t expect_ms[] = {0, 100, 200, 400, 800, 1600, 3200, 4800};
    assert_int_equal(statuses, sizeof(expect_ms) / sizeof(expect_ms[0]));
    for (size_t i = 0; i < statuses; i++)
        assert_int_equal(status_at[i], expect_ms[i]);
    print_message("silent publisher: %zu STATUS, %zu NAKs, the last at %zu ms\n", statuses, fx.naks,
                  last_nak_ms);
    assert_true(fx.naks <= 30);
    assert_true(last_nak_ms < 5000);
    /* The hole met its deadline while idle: 3 is delivered after the loss of 2. */
    assert_int_equal(fx.nloss, 1);
    assert_int_equal(fx.loss[0].reason, RDPS_LOSS_DEADLINE);
    assert_int_equal(fx.rec.count, 3);
    assert_int_equal(fx.rec.items[2].first_seq, 3);
    assert_int_equal(rdps__reasm_rel_counters(&fx.r)->idle, 1);
    /* Heard again: STATUS at once, then every 100 ms. */
    fx.now = t0 + 30000 * MS;
    size_t before = fx.statuses;
    heartbeat(&fx, 4, 4, 77);
    poll(&fx);
    assert_int_equal(fx.statuses, before + 1);
    fx.now += 50 * MS;
    heartbeat(&fx, 4, 4, 78);
    fx.now += 50 * MS;
    poll(&fx);
    assert_int_equal(fx.statuses, before + 2);
    fixture_fini(&fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_in_order_release_and_no_duplicates),
        cmocka_unit_test(test_fragmented_shuffled_in_order),
        cmocka_unit_test(test_gap_ranges_across_wrap_in_one_nak),
        cmocka_unit_test(test_nak_backoff_bounds),
        cmocka_unit_test(test_reordering_path_holds_first_naks),
        cmocka_unit_test(test_nak_delay_scaled_by_receivers),
        cmocka_unit_test(test_nak_delay_follows_discovery_count),
        cmocka_unit_test(test_waiting_first_nak_follows_rtt_down),
        cmocka_unit_test(test_suppressed_first_nak_follows_rtt_down),
        cmocka_unit_test(test_retry_spread_follows_discovery_count),
        cmocka_unit_test(test_retry_backoff_cap_and_exhaustion),
        cmocka_unit_test(test_several_receivers_retry_undoubled_first),
        cmocka_unit_test(test_retry_waits_rtt_and_deviation),
        cmocka_unit_test(test_first_sample_despite_retries),
        cmocka_unit_test(test_retry_held_while_datagrams_queued),
        cmocka_unit_test(test_loss_deadline),
        cmocka_unit_test(test_loss_deadline_counts_from_last_repair),
        cmocka_unit_test(test_suppression_by_seen_repair),
        cmocka_unit_test(test_overtaken_repair_asked_again_at_once),
        cmocka_unit_test(test_overtaken_only_when_unambiguous),
        cmocka_unit_test(test_overtaken_nak_goes_first),
        cmocka_unit_test(test_status_cadence_and_content),
        cmocka_unit_test(test_unrecoverable_by_heartbeat_trail),
        cmocka_unit_test(test_loss_partial_message),
        cmocka_unit_test(test_loss_too_large),
        cmocka_unit_test(test_loss_session_dropped),
        cmocka_unit_test(test_message_longer_than_the_window_streams),
        cmocka_unit_test(test_streaming_message_lost_whole),
        cmocka_unit_test(test_late_join_live),
        cmocka_unit_test(test_late_join_from_oldest),
        cmocka_unit_test(test_counters_and_latency_histogram),
        cmocka_unit_test(test_evicted_parked_message_is_asked_again),
        cmocka_unit_test(test_message_larger_than_share_completes),
        cmocka_unit_test(test_window_reaches_past_hole_up_to_parking_room),
        cmocka_unit_test(test_window_is_credits_past_newest_received),
        cmocka_unit_test(test_status_when_edge_moves_while_consumed_creeps),
        cmocka_unit_test(test_lossy_link_everything_in_order_once),
        cmocka_unit_test(test_small_ring_every_gap_repaired_or_reported_once),
        cmocka_unit_test(test_silent_publisher_goes_idle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
