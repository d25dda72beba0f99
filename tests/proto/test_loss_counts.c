/* SPDX-License-Identifier: BSD-2-Clause */
/* test_loss_counts.c - exact message counts for lost datagrams, batched or fragmented: every
 * message is either delivered once or named by exactly one GAP (unreliable) or LOSS (reliable)
 * event, over seeded random streams of mixed sizes, loss and reordering. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rdps/rdps.h>

#include "proto_test_util.h"
#include "rdps_batch.h"
#include "rdps_frag.h"
#include "rdps_reasm.h"

#define DGRAM     1024u
#define TOPIC     0x77u
#define SESSION   5u
#define MAX_MSGS  6000u
#define MAX_DGRAM 8000u
#define US        1000ull
#define MS        1000000ull

static uint64_t rng_state;
static uint32_t rnd(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_state >> 33);
}

/* Byte k of the message with ordinal o. */
static uint8_t msg_byte(uint32_t o, uint32_t k)
{
    return (uint8_t)(o * 29u + k * 7u + (k >> 8));
}

/* A published stream: its datagrams (in sequence order) and its messages. */
struct stream {
    uint32_t first_ord, nmsgs;
    uint32_t lens[MAX_MSGS];
    uint32_t first_seq, ndgrams;
    uint8_t *dgram[MAX_DGRAM];
    uint32_t dlen[MAX_DGRAM];
    bool drop[MAX_DGRAM];
};

static void push(struct stream *st, const uint8_t *frame, uint32_t len)
{
    assert_true(st->ndgrams < MAX_DGRAM);
    st->dgram[st->ndgrams] = malloc(len);
    memcpy(st->dgram[st->ndgrams], frame, len);
    st->dlen[st->ndgrams] = len;
    st->drop[st->ndgrams] = false;
    st->ndgrams++;
}

static uint32_t random_len(void)
{
    uint32_t r = rnd() % 100;
    if (r < 70)
        return rnd() % 120; /* small, 0 included */
    if (r < 90)
        return 120 + rnd() % 900;
    return 1000 + rnd() % 2001; /* fragmented: up to 3000 bytes */
}

/* Publishes n messages as a batching publisher would: small ones share the open datagram (which
 * goes when the next does not fit, or at random "flushes"), long ones go in fragments. */
static void publish(struct stream *st, uint32_t n, uint16_t flags)
{
    static uint8_t frame[DGRAM], msg[3100];
    struct rdps_batch b;
    uint32_t seq = st->first_seq, ord = st->first_ord;
    uint32_t open_seq = 0, open_ord = 0;
    rdps__batch_open(&b, frame, DGRAM);
    st->nmsgs = n;
    for (uint32_t i = 0; i < n; i++, ord++) {
        uint32_t len = random_len();
        st->lens[i] = len;
        for (uint32_t k = 0; k < len; k++)
            msg[k] = msg_byte(ord, k);
        bool whole = len <= DGRAM - RDPS_FRAME_HEADER_LEN;
        if (b.count > 0 && (!whole || !rdps__batch_fits(&b, len) || rnd() % 8 == 0)) {
            uint32_t fl = rdps__frame_put_data_header(frame, SESSION, TOPIC, open_seq, b.used, 0,
                                                      b.used, open_ord, flags, open_ord, b.count);
            push(st, frame, fl);
            rdps__batch_open(&b, frame, DGRAM);
        }
        if (whole) {
            if (b.count == 0) {
                open_seq = seq++;
                open_ord = ord;
            }
            memcpy(rdps__batch_add(&b, len), msg, len);
            continue;
        }
        struct rdps_frag it;
        assert_true(rdps__frag_init(&it, SESSION, TOPIC, &seq, msg, len, 1u << 24, DGRAM, ord,
                                    flags, ord) >= 2);
        int fl;
        while ((fl = rdps__frag_next(&it, frame, sizeof(frame))) > 0)
            push(st, frame, (uint32_t)fl);
    }
    if (b.count > 0) {
        uint32_t fl = rdps__frame_put_data_header(frame, SESSION, TOPIC, open_seq, b.used, 0,
                                                  b.used, open_ord, flags, open_ord, b.count);
        push(st, frame, fl);
    }
}

static void stream_free(struct stream *st)
{
    for (uint32_t i = 0; i < st->ndgrams; i++)
        free(st->dgram[i]);
}

/* What the receiver reported, per message (index: ordinal - first_ord). */
struct outcome {
    struct stream *st;
    uint8_t delivered[MAX_MSGS];
    uint8_t counted[MAX_MSGS]; /* named by a GAP or LOSS event */
    uint32_t bad_content, bad_ordinal, events, msgs_in_events;
    uint32_t last_delivered; /* reliable: order */
    bool any_delivered, out_of_order;
};

static void on_deliver(void *user, const uint8_t *msg, uint32_t len,
                       const struct rdps_reasm_msg_info *info)
{
    struct outcome *o = user;
    uint32_t i = info->ordinal - o->st->first_ord;
    if (i >= o->st->nmsgs) {
        o->bad_ordinal++;
        return;
    }
    o->delivered[i]++;
    if (len != o->st->lens[i])
        o->bad_content++;
    for (uint32_t k = 0; k < len && k < o->st->lens[i]; k++)
        if (msg[k] != msg_byte(info->ordinal, k)) {
            o->bad_content++;
            break;
        }
    if (o->any_delivered && i <= o->last_delivered)
        o->out_of_order = true;
    o->any_delivered = true;
    o->last_delivered = i;
}

static void count_range(struct outcome *o, uint32_t first, uint32_t count)
{
    o->events++;
    o->msgs_in_events += count;
    for (uint32_t m = 0; m < count; m++) {
        uint32_t i = first + m - o->st->first_ord;
        if (i >= o->st->nmsgs)
            o->bad_ordinal++;
        else
            o->counted[i]++;
    }
}

static void on_gap(void *user, const struct rdps_reasm_gap *gap)
{
    count_range(user, gap->msg_first, gap->msg_count);
}

static void on_loss(void *user, const struct rdps_reasm_loss *loss)
{
    count_range(user, loss->msg_first, loss->msg_count);
}

static void on_send(void *user, const struct rdps_source *dest, uint32_t session_id,
                    const uint8_t *frame, size_t len)
{
    (void)user, (void)dest, (void)session_id, (void)frame, (void)len;
}

static void reasm_start(struct rdps_reasm *r, struct outcome *o, bool reliable)
{
    struct rdps_reasm_config cfg;
    rdps__reasm_config_default(&cfg);
    cfg.max_partials = 256;
    cfg.max_partials_per_source = 0;
    cfg.reasm_cap_bytes = 8u << 20;
    cfg.chunk_bytes = 4096;
    cfg.max_gap_ranges = 64;
    cfg.deliver = on_deliver;
    cfg.on_gap = on_gap;
    cfg.user = o;
    if (reliable) {
        cfg.rel.enabled = true;
        cfg.rel.send = on_send;
        cfg.rel.on_loss = on_loss;
        cfg.rel.receiver_id = 9;
        cfg.rel.rng_seed = 1;
        cfg.rel.nak_max_tries = 1000; /* the publisher's trail decides, not the tries */
        cfg.rel.loss_deadline_ns = 0;
    }
    assert_int_equal(rdps__reasm_init(r, &cfg), 0);
}

/* Every message delivered once or counted once, none both; the counts add up. */
static void check_outcome(const struct outcome *o, bool in_order)
{
    uint32_t delivered = 0, counted = 0;
    for (uint32_t i = 0; i < o->st->nmsgs; i++) {
        if (o->delivered[i] > 1 || o->counted[i] > 1 || o->delivered[i] + o->counted[i] != 1)
            fail_msg("message %u (%u bytes): delivered %u times, counted lost %u times", i,
                     o->st->lens[i], o->delivered[i], o->counted[i]);
        delivered += o->delivered[i];
        counted += o->counted[i];
    }
    assert_int_equal(o->bad_content + o->bad_ordinal, 0);
    assert_int_equal(delivered + counted, o->st->nmsgs);
    assert_int_equal(o->msgs_in_events, counted);
    if (in_order)
        assert_false(o->out_of_order);
}

/* Unreliable: random loss (bursts included) and reordering within the allowance; the first and
 * last datagrams arrive (a gap needs a frame after it, and a stream starts at its first). */
static void run_unreliable(uint64_t seed, uint32_t loss_pct)
{
    static struct stream st;
    static struct outcome o;
    struct rdps_reasm r;
    memset(&st, 0, sizeof(st));
    memset(&o, 0, sizeof(o));
    rng_state = seed;
    st.first_seq = 0xFFFFF000u + rnd() % 4096; /* both wrap mid-stream */
    st.first_ord = 0xFFFFFC00u + rnd() % 1024;
    publish(&st, 3000, 0);
    for (uint32_t d = 1; d + 1 < st.ndgrams; d++) {
        if (rnd() % 100 < loss_pct)
            st.drop[d] = true;
        if (rnd() % 200 == 0) /* a burst */
            for (uint32_t k = 0; k < 20 && d + 1 < st.ndgrams; k++, d++)
                st.drop[d] = true;
    }
    o.st = &st;
    reasm_start(&r, &o, false);
    struct rdps_source src = test_source(3);
    uint64_t now = 1000 * MS;
    for (uint32_t d = 0; d < st.ndgrams; d++) {
        /* Swap with the next one now and then: reordered, not lost. */
        uint32_t at = d;
        if (d + 2 < st.ndgrams && rnd() % 10 == 0) {
            if (!st.drop[d + 1])
                rdps__reasm_input(&r, &src, st.dgram[d + 1], st.dlen[d + 1], now);
            if (!st.drop[d])
                rdps__reasm_input(&r, &src, st.dgram[d], st.dlen[d], now);
            d++;
            now += 10 * US;
            continue;
        }
        if (!st.drop[at])
            rdps__reasm_input(&r, &src, st.dgram[at], st.dlen[at], now);
        now += 10 * US;
        rdps__reasm_expire(&r, now);
    }
    rdps__reasm_expire(&r, now + 10 * 1000 * MS); /* every allowance and partial timeout over */
    check_outcome(&o, false);
    assert_true(o.events > 0);
    rdps__reasm_fini(&r);
    stream_free(&st);
}

static void test_unreliable_exact_counts(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 6; seed++)
        run_unreliable(seed, seed % 3 == 0 ? 20 : 5);
}

/*
 * Every message from the first one the receiver could know of (the lowest delivered or counted:
 * what was lost before a stream's first datagram is nobody's to report) is delivered once or
 * counted once, none both.
 */
static void check_outcome_from_start(const struct outcome *o)
{
    uint32_t start = o->st->nmsgs;
    for (uint32_t i = 0; i < o->st->nmsgs && start == o->st->nmsgs; i++)
        if (o->delivered[i] + o->counted[i] > 0)
            start = i;
    uint32_t counted = 0;
    for (uint32_t i = start; i < o->st->nmsgs; i++) {
        if (o->delivered[i] > 1 || o->counted[i] > 1 || o->delivered[i] + o->counted[i] != 1)
            fail_msg("message %u of %u (%u bytes, first known %u): delivered %u times, counted "
                     "lost %u times",
                     i, o->st->nmsgs, o->st->lens[i], start, o->delivered[i], o->counted[i]);
        counted += o->counted[i];
    }
    assert_int_equal(o->bad_content + o->bad_ordinal, 0);
    assert_int_equal(o->msgs_in_events, counted);
}

/*
 * The stream's ends, where no datagram follows or precedes a loss: the first datagrams arrive
 * shuffled with some of them lost (a frame from before the stream's first one arrives late, with
 * a hole between), and the tail is lost, sometimes longer than the receiver's sequence window (a
 * receive queue that overflowed to the end), named only by the publisher's tail heartbeats.
 */
static void run_unreliable_ends(uint64_t seed)
{
    static struct stream st;
    static struct outcome o;
    struct rdps_reasm r;
    memset(&st, 0, sizeof(st));
    memset(&o, 0, sizeof(o));
    rng_state = seed;
    st.first_seq = 0xFFFFF000u + rnd() % 4096;
    st.first_ord = 0xFFFFFC00u + rnd() % 1024;
    publish(&st, MAX_MSGS, 0);
    for (uint32_t d = 0; d < st.ndgrams; d++)
        st.drop[d] = rnd() % 100 < 10;
    /* The tail: none, short, or longer than the window. */
    uint32_t tails[] = {0, 1 + rnd() % 40, RDPS_SEQ_WINDOW + rnd() % 2000};
    uint32_t tail = tails[seed % 3];
    if (tail > st.ndgrams - 300)
        tail = st.ndgrams - 300;
    for (uint32_t d = st.ndgrams - tail; d < st.ndgrams; d++)
        st.drop[d] = true;
    /* The first 12 datagrams in a random order. */
    uint32_t order[MAX_DGRAM];
    for (uint32_t d = 0; d < st.ndgrams; d++)
        order[d] = d;
    for (uint32_t d = 11; d > 0; d--) {
        uint32_t k = rnd() % (d + 1), t = order[d];
        order[d] = order[k];
        order[k] = t;
    }
    o.st = &st;
    reasm_start(&r, &o, false);
    struct rdps_source src = test_source(3);
    uint64_t now = 1000 * MS;
    for (uint32_t k = 0; k < st.ndgrams; k++, now += 10 * US) {
        if (!st.drop[order[k]])
            rdps__reasm_input(&r, &src, st.dgram[order[k]], st.dlen[order[k]], now);
        rdps__reasm_expire(&r, now);
    }
    /* The tail heartbeats, the first of them lost now and then. */
    uint8_t hb[RDPS_FRAME_HEADER_LEN];
    int n = rdps__frame_encode_heartbeat(hb, sizeof(hb), SESSION, TOPIC, st.first_seq + st.ndgrams,
                                         st.first_ord + st.nmsgs, 0, 0);
    assert_int_equal(n, RDPS_FRAME_HEADER_LEN);
    for (uint32_t beat = rnd() % 2; beat < 3; beat++, now += 4 * MS)
        rdps__reasm_input(&r, &src, hb, (size_t)n, now);
    rdps__reasm_expire(&r, now + 10 * 1000 * MS);
    check_outcome_from_start(&o);
    rdps__reasm_fini(&r);
    stream_free(&st);
}

static void test_unreliable_exact_counts_at_the_ends(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 60; seed++)
        run_unreliable_ends(seed);
}

/*
 * Reliable: datagrams lost at random; a repair (RETRANSMIT) comes for some of them, the rest are
 * given up when the publisher's heartbeat says its ring no longer holds them (BELOW_RING, the
 * trail the heartbeat names with its ordinal). Delivery stays in order; each message is
 * delivered or named by exactly one LOSS event.
 */
static void run_reliable(uint64_t seed, uint32_t loss_pct)
{
    static struct stream st;
    static struct outcome o;
    struct rdps_reasm r;
    memset(&st, 0, sizeof(st));
    memset(&o, 0, sizeof(o));
    rng_state = seed;
    st.first_seq = 0xFFFFF800u + rnd() % 2048;
    st.first_ord = 0xFFFFFF00u + rnd() % 256;
    publish(&st, 1500, RDPS_FRAME_F_RELIABLE);
    for (uint32_t d = 1; d < st.ndgrams; d++)
        if (rnd() % 100 < loss_pct)
            st.drop[d] = true;
    o.st = &st;
    reasm_start(&r, &o, true);
    struct rdps_source src = test_source(4);
    uint64_t now = 1000 * MS;
    /* In windows of 200 datagrams: send, repair about half the losses, then a heartbeat whose
     * trail is the window's end gives up the rest. */
    uint8_t hb[RDPS_FRAME_HEADER_LEN];
    for (uint32_t w = 0; w < st.ndgrams; w += 200) {
        uint32_t end = w + 200 < st.ndgrams ? w + 200 : st.ndgrams;
        for (uint32_t d = w; d < end; d++, now += 10 * US)
            if (!st.drop[d])
                rdps__reasm_input(&r, &src, st.dgram[d], st.dlen[d], now);
        for (uint32_t d = w; d < end; d++, now += 10 * US) {
            if (!st.drop[d] || rnd() % 2 == 0)
                continue;
            static uint8_t copy[DGRAM];
            memcpy(copy, st.dgram[d], st.dlen[d]);
            rdps__put_le16(
                copy + RDPS_FRAME_OFF_FLAGS,
                (uint16_t)(rdps__get_le16(copy + RDPS_FRAME_OFF_FLAGS) | RDPS_FRAME_F_RETRANSMIT));
            rdps__reasm_input(&r, &src, copy, st.dlen[d], now);
            st.drop[d] = false;
        }
        rdps__reasm_rel_poll(&r, now, now);
        /* The ring now starts at the window's end: its first datagram's first message. */
        uint32_t trail = st.first_seq + end;
        uint32_t next = st.first_seq + st.ndgrams;
        uint32_t trail_ord = end < st.ndgrams
                                 ? rdps__get_le32(st.dgram[end] + RDPS_FRAME_OFF_ORDINAL)
                                 : st.first_ord + st.nmsgs;
        int n = rdps__frame_encode_heartbeat_reliable(hb, sizeof(hb), SESSION, TOPIC, next,
                                                      next - trail, st.first_ord + st.nmsgs,
                                                      trail_ord, now);
        assert_int_equal(n, RDPS_FRAME_HEADER_LEN);
        rdps__reasm_input(&r, &src, hb, (size_t)n, now);
        now += MS;
    }
    check_outcome(&o, true);
    rdps__reasm_fini(&r);
    stream_free(&st);
}

static void test_reliable_exact_counts(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 6; seed++)
        run_reliable(seed, seed % 2 ? 5 : 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unreliable_exact_counts),
        cmocka_unit_test(test_unreliable_exact_counts_at_the_ends),
        cmocka_unit_test(test_reliable_exact_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
