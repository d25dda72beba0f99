/* SPDX-License-Identifier: BSD-2-Clause */
/* test_replay_merge.c - the replay-merge seam: history and a live stream racing ahead merged per
 * session, every message once and in order, under live loss of the buffer (eviction), holes in
 * the recording, recordings that stop short, sessions history never had, a seeded random mix,
 * and messages the recording skipped (an overrun) reported as losses by their exact count. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rdps_replay_merge.h"

#define MAX_OUT 200000

/* What came out: per delivery, session, seq, count, kind, reason, whether from history. */
struct out {
    struct {
        uint32_t session, seq, count, ordinal, msg_count;
        int kind, reason;
        bool history;
        uint32_t payload; /* the message's first 4 bytes */
    } d[MAX_OUT];
    size_t n;
};

static void deliver(void *user, const struct rdps_merge_msg *m, bool from_history)
{
    struct out *o = user;
    assert_true(o->n < MAX_OUT);
    o->d[o->n].session = m->session;
    o->d[o->n].seq = m->seq;
    o->d[o->n].count = m->count;
    o->d[o->n].ordinal = m->ordinal;
    o->d[o->n].msg_count = m->msg_count;
    o->d[o->n].kind = m->kind;
    o->d[o->n].reason = m->reason;
    o->d[o->n].history = from_history;
    o->d[o->n].payload = 0;
    if (m->kind == RDPS_MERGE_MESSAGE) {
        assert_int_equal(m->len, 16);
        memcpy(&o->d[o->n].payload, m->data, 4);
    }
    o->n++;
}

/* Message `seq` of session s: 16 bytes starting with the seq. */
static struct rdps_merge_msg msg(uint32_t s, uint32_t seq, uint8_t *buf)
{
    memset(buf, (int)seq, 16);
    memcpy(buf, &seq, 4);
    return (struct rdps_merge_msg){.kind = RDPS_MERGE_MESSAGE,
                                   .session = s,
                                   .seq = seq,
                                   .count = 1,
                                   .ordinal = seq + 1,
                                   .data = buf,
                                   .len = 16};
}

/* Each session's deliveries cover [from, to) exactly once, in order; returns the losses. */
static int check_session(const struct out *o, uint32_t s, uint32_t from, uint32_t to)
{
    uint32_t next = from;
    int losses = 0;
    for (size_t i = 0; i < o->n; i++) {
        if (o->d[i].session != s)
            continue;
        if (o->d[i].seq != next)
            fail_msg("session %u: delivery %zu at seq %u, expected %u", s, i, o->d[i].seq, next);
        if (o->d[i].kind == RDPS_MERGE_MESSAGE)
            assert_int_equal(o->d[i].payload, o->d[i].seq);
        else
            losses++;
        next += o->d[i].count;
    }
    if (next != to)
        fail_msg("session %u: delivered up to %u, expected %u", s, next, to);
    return losses;
}

static struct out out;

/* History 0..999, live joined at 600 and racing on to 1500: the seam at 600, no gap, no
 * duplicate; then live goes straight through. */
static void test_seam_live_racing_ahead(void **state)
{
    (void)state;
    struct rdps_merge m;
    uint8_t buf[16];
    memset(&out, 0, sizeof(out));
    assert_int_equal(rdps__merge_init(&m, 1 << 20, 16, deliver, &out), 0);
    uint32_t h = 0, l = 600;
    while (l < 1500 || h < 1000) {
        /* live runs three messages for each history one until history passes the seam */
        for (int k = 0; k < 3 && l < 1500; k++, l++) {
            struct rdps_merge_msg x = msg(7, l, buf);
            rdps__merge_live(&m, &x);
        }
        if (h < 1000) {
            struct rdps_merge_msg x = msg(7, h++, buf);
            rdps__merge_history(&m, &x);
        }
    }
    assert_int_equal(check_session(&out, 7, 0, 1500), 0);
    const struct rdps_merge_counters *c = rdps__merge_counters(&m);
    assert_int_equal(c->history_delivered, 600);
    assert_int_equal(c->history_duplicates, 400);
    assert_int_equal(c->sessions_switched, 1);
    assert_int_equal(c->ordinal_breaks, 0);
    assert_true(rdps__merge_all_live(&m));
    rdps__merge_fini(&m);
}

/* History ahead of where live began (the recorder had more than the subscriber when it joined):
 * live's repeats of it are dropped after the switch too. Found by fuzz_replay_merge. */
static void test_history_ahead_of_live(void **state)
{
    (void)state;
    struct rdps_merge m;
    uint8_t buf[16];
    memset(&out, 0, sizeof(out));
    assert_int_equal(rdps__merge_init(&m, 1 << 20, 4, deliver, &out), 0);
    for (uint32_t h = 0; h <= 5000; h++) {
        struct rdps_merge_msg x = msg(9, h, buf);
        rdps__merge_history(&m, &x);
    }
    for (uint32_t l = 4990; l < 6000; l++) {
        struct rdps_merge_msg x = msg(9, l, buf);
        rdps__merge_live(&m, &x);
    }
    assert_int_equal(check_session(&out, 9, 0, 6000), 0);
    assert_int_equal(rdps__merge_counters(&m)->live_duplicates, 11);
    rdps__merge_fini(&m);
}

/* History ended past where live begins (history_done before live's first message): the catch-up
 * keeps history's place and drops what it already gave. Found by fuzz_replay_merge. */
static void test_done_with_history_ahead(void **state)
{
    (void)state;
    struct rdps_merge m;
    uint8_t buf[16];
    memset(&out, 0, sizeof(out));
    assert_int_equal(rdps__merge_init(&m, 1 << 20, 4, deliver, &out), 0);
    for (uint32_t h = 0; h < 100; h++) {
        struct rdps_merge_msg x = msg(6, h, buf);
        rdps__merge_history(&m, &x);
    }
    rdps__merge_history_done(&m);
    for (uint32_t l = 90; l < 200; l++) {
        struct rdps_merge_msg x = msg(6, l, buf);
        rdps__merge_live(&m, &x);
    }
    assert_int_equal(check_session(&out, 6, 0, 200), 0);
    rdps__merge_fini(&m);
}

/* A 64 KiB buffer cannot hold live while history is far behind: the oldest live messages are
 * evicted and history has to cover them; still no gap and no duplicate. */
static void test_eviction_moves_the_seam(void **state)
{
    (void)state;
    struct rdps_merge m;
    uint8_t buf[16];
    memset(&out, 0, sizeof(out));
    assert_int_equal(rdps__merge_init(&m, 65536, 4, deliver, &out), 0);
    for (uint32_t l = 100; l < 5100; l++) { /* 5000 live messages before any history */
        struct rdps_merge_msg x = msg(1, l, buf);
        rdps__merge_live(&m, &x);
    }
    assert_true(rdps__merge_counters(&m)->evicted > 0);
    for (uint32_t h = 0; h < 5100; h++) { /* the recording has everything */
        struct rdps_merge_msg x = msg(1, h, buf);
        rdps__merge_history(&m, &x);
    }
    for (uint32_t l = 5100; l < 5200; l++) {
        struct rdps_merge_msg x = msg(1, l, buf);
        rdps__merge_live(&m, &x);
    }
    assert_int_equal(check_session(&out, 1, 0, 5200), 0);
    assert_true(rdps__merge_all_live(&m));
    rdps__merge_fini(&m);
}

/* The recording's own hole is delivered as its loss; a recording that stops short of live gets
 * one NOT_IN_RECORDING loss for the difference when the recorder says it is caught up. */
static void test_losses(void **state)
{
    (void)state;
    struct rdps_merge m;
    uint8_t buf[16];
    memset(&out, 0, sizeof(out));
    assert_int_equal(rdps__merge_init(&m, 1 << 20, 4, deliver, &out), 0);
    for (uint32_t l = 300; l < 400; l++) {
        struct rdps_merge_msg x = msg(2, l, buf);
        rdps__merge_live(&m, &x);
    }
    for (uint32_t h = 0; h < 250;) {
        if (h == 100) { /* the recording lost 100..109 */
            struct rdps_merge_msg loss = {
                .kind = RDPS_MERGE_LOSS, .session = 2, .seq = 100, .count = 10};
            rdps__merge_history(&m, &loss);
            h = 110;
            continue;
        }
        struct rdps_merge_msg x = msg(2, h++, buf);
        rdps__merge_history(&m, &x);
    }
    assert_false(rdps__merge_all_live(&m));
    rdps__merge_history_caught_up(&m, 2, true, 250); /* the recording ends at 249 */
    assert_int_equal(check_session(&out, 2, 0, 400), 2);
    assert_int_equal(rdps__merge_counters(&m)->losses_not_in_recording, 1);
    for (size_t i = 0; i < out.n; i++)
        if (out.d[i].kind == RDPS_MERGE_LOSS)
            assert_int_equal(out.d[i].reason, out.d[i].seq == 100
                                                  ? RDPS_MERGE_LOSS_IN_RECORDING
                                                  : RDPS_MERGE_LOSS_NOT_IN_RECORDING);
    rdps__merge_fini(&m);
}

/* A session the recording never had goes live without a loss; the end of the replay releases
 * sessions still waiting, and later ones go live at once. */
static void test_sessions_without_history(void **state)
{
    (void)state;
    struct rdps_merge m;
    uint8_t buf[16];
    memset(&out, 0, sizeof(out));
    assert_int_equal(rdps__merge_init(&m, 1 << 20, 4, deliver, &out), 0);
    for (uint32_t l = 50; l < 60; l++) {
        struct rdps_merge_msg x = msg(3, l, buf);
        rdps__merge_live(&m, &x);
    }
    rdps__merge_history_caught_up(&m, 3, false, 0);
    assert_int_equal(check_session(&out, 3, 50, 60), 0);
    for (uint32_t l = 0; l < 5; l++) {
        struct rdps_merge_msg x = msg(4, l, buf);
        rdps__merge_live(&m, &x);
    }
    rdps__merge_history_done(&m);
    for (uint32_t l = 0; l < 5; l++) {
        struct rdps_merge_msg x = msg(5, l, buf);
        rdps__merge_live(&m, &x);
    }
    assert_int_equal(check_session(&out, 4, 0, 5), 0);
    assert_int_equal(check_session(&out, 5, 0, 5), 0);
    assert_true(rdps__merge_all_live(&m));
    rdps__merge_fini(&m);
}

/* Eight sessions, history and live interleaved at random (seeded), live joining each session at
 * a random point, random buffer pressure: every session exactly once, in order, no loss. */
static void test_random_interleaving(void **state)
{
    (void)state;
    for (unsigned seed = 1; seed <= 20; seed++) {
        srand(seed);
        struct rdps_merge m;
        uint8_t buf[16];
        memset(&out, 0, sizeof(out));
        size_t cap = (size_t)(65536 + rand() % (1 << 18));
        assert_int_equal(rdps__merge_init(&m, cap, 8, deliver, &out), 0);
        uint32_t end = 3000, h[8] = {0}, l[8];
        for (int s = 0; s < 8; s++)
            l[s] = (uint32_t)(rand() % 2000) + 0xFFFFF000u; /* joins across the wrap */
        for (int s = 0; s < 8; s++)
            h[s] = 0xFFFFF000u;
        for (;;) {
            int s = rand() % 8;
            bool history = rand() % 2;
            if (history && h[s] != 0xFFFFF000u + end) {
                struct rdps_merge_msg x = msg((uint32_t)s, h[s]++, buf);
                rdps__merge_history(&m, &x);
            } else if (!history && l[s] != 0xFFFFF000u + end) {
                struct rdps_merge_msg x = msg((uint32_t)s, l[s]++, buf);
                rdps__merge_live(&m, &x);
            }
            bool done = true;
            for (int k = 0; k < 8; k++)
                done &= h[k] == 0xFFFFF000u + end && l[k] == 0xFFFFF000u + end;
            if (done)
                break;
        }
        for (int s = 0; s < 8; s++)
            assert_int_equal(check_session(&out, (uint32_t)s, 0xFFFFF000u, 0xFFFFF000u + end), 0);
        assert_true(rdps__merge_all_live(&m));
        rdps__merge_fini(&m);
    }
}

/* Wire version 3 batches messages: several share a datagram's seq, each with its own ordinal.
 * A stream of n messages, ordinals from `ordinal0` (across the wrap), in datagrams of 1 to 5
 * messages (seeded) from seq `seq0`; message i's payload is its ordinal. */
#define BATCHED_MAX 6000
struct batched {
    uint32_t seq[BATCHED_MAX], ordinal[BATCHED_MAX];
    size_t n;
};

static void batched_stream(struct batched *b, size_t n, uint32_t seq0, uint32_t ordinal0)
{
    uint32_t seq = seq0;
    b->n = n;
    for (size_t i = 0; i < n;) {
        for (int k = 1 + rand() % 5; k > 0 && i < n; k--, i++) {
            b->seq[i] = seq;
            b->ordinal[i] = ordinal0 + (uint32_t)i;
        }
        seq++;
    }
}

static struct rdps_merge_msg batched_msg(const struct batched *b, size_t i, uint8_t *buf)
{
    memset(buf, 0, 16);
    memcpy(buf, &b->ordinal[i], 4);
    return (struct rdps_merge_msg){.kind = RDPS_MERGE_MESSAGE,
                                   .session = 11,
                                   .seq = b->seq[i],
                                   .count = 1,
                                   .ordinal = b->ordinal[i],
                                   .data = buf,
                                   .len = 16};
}

/* Every message of the stream delivered once, in order (payload and seq match its ordinal). */
static void check_batched(const struct out *o, const struct batched *b)
{
    size_t i = 0;
    for (size_t k = 0; k < o->n; k++) {
        if (o->d[k].kind != RDPS_MERGE_MESSAGE)
            fail_msg("delivery %zu: a loss at seq %u", k, o->d[k].seq);
        if (i == b->n || o->d[k].payload != b->ordinal[i] || o->d[k].seq != b->seq[i])
            fail_msg("delivery %zu: ordinal %u seq %u, expected message %zu of %zu", k,
                     o->d[k].payload, o->d[k].seq, i, b->n);
        i++;
    }
    if (i != b->n)
        fail_msg("delivered %zu messages of %zu", i, b->n);
}

/* History and live racing, on the caller's seed: history gives every message of b but the
 * skipped ones (skipped NULL: none), live every message from `join` on, moved back to the first
 * of its datagram (live joins at a datagram) and a whole datagram a turn; history takes a turn
 * with probability history_bias / 4 (how much faster it runs than live). Returns where live
 * joined. */
static size_t race(struct rdps_merge *m, const struct batched *b, const bool *skipped, size_t join,
                   int history_bias)
{
    uint8_t buf[16];
    while (join > 0 && b->seq[join - 1] == b->seq[join])
        join--;
    size_t h = 0, l = join;
    while (h < b->n || l < b->n) {
        bool history = rand() % 4 < history_bias;
        if (history && h < b->n) {
            if (skipped == NULL || !skipped[h]) {
                struct rdps_merge_msg x = batched_msg(b, h, buf);
                rdps__merge_history(m, &x);
            }
            h++;
        } else if (!history && l < b->n) {
            uint32_t seq = b->seq[l]; /* a datagram's messages arrive together */
            while (l < b->n && b->seq[l] == seq) {
                struct rdps_merge_msg x = batched_msg(b, l++, buf);
                rdps__merge_live(m, &x);
            }
        }
    }
    return join;
}

/* Batched datagrams at the seam and in the duplicate filter: history and live racing (seeded),
 * live joining at a random datagram, buffers small enough to evict; history sometimes running
 * ahead of live. Every message once, in order: by seq alone, history's duplicate filter dropped
 * the rest of each datagram after its first message. */
static void test_batched_seam(void **state)
{
    (void)state;
    static struct batched b;
    for (unsigned seed = 1; seed <= 40; seed++) {
        srand(seed);
        batched_stream(&b, BATCHED_MAX, 0xFFFFFF00u, 0xFFFFF000u + (uint32_t)rand());
        struct rdps_merge m;
        memset(&out, 0, sizeof(out));
        size_t cap = seed % 2 ? 65536 : (size_t)1 << 20;
        assert_int_equal(rdps__merge_init(&m, cap, 4, deliver, &out), 0);
        size_t join = (size_t)rand() % (BATCHED_MAX / 2);
        (void)race(&m, &b, NULL, join, 1 + rand() % 3);
        check_batched(&out, &b);
        assert_true(rdps__merge_all_live(&m));
        rdps__merge_fini(&m);
    }
}

/* The recording stops inside the live stream's first datagram's predecessor: the recorder's
 * CAUGHT_UP releases the session, and the switch keeps the rest of history's last datagram
 * that live buffered (it never goes past history's last message in a datagram). */
static void test_batched_switch_waits_for_the_whole_datagram(void **state)
{
    (void)state;
    struct rdps_merge m;
    uint8_t buf[16];
    struct rdps_merge_msg x;
    memset(&out, 0, sizeof(out));
    assert_int_equal(rdps__merge_init(&m, 1 << 20, 4, deliver, &out), 0);
    /* datagram 10: ordinals 100..102; datagram 11: 103..104; live joined at datagram 11 */
    static struct batched b = {
        .seq = {10, 10, 10, 11, 11}, .ordinal = {100, 101, 102, 103, 104}, .n = 5};
    for (size_t i = 3; i < 5; i++) {
        x = batched_msg(&b, i, buf);
        rdps__merge_live(&m, &x);
    }
    x = batched_msg(&b, 0, buf);
    rdps__merge_history(&m, &x);
    assert_false(rdps__merge_all_live(&m)); /* 101 and 102 still to come from history */
    for (size_t i = 1; i < 5; i++) {
        x = batched_msg(&b, i, buf);
        rdps__merge_history(&m, &x);
    }
    check_batched(&out, &b);
    assert_true(rdps__merge_all_live(&m));
    assert_int_equal(rdps__merge_counters(&m)->ordinal_breaks, 0);
    rdps__merge_fini(&m);
}

/* The recording skipped messages (its recorder dropped them when its disk fell behind: an
 * OVERRUN, which the history stream does not carry): anywhere, inside datagrams, across live's
 * join point. Every message comes out once and in order or inside exactly one LOSS that names it
 * by ordinal (NOT_IN_RECORDING); with a buffer that never evicts, the lost are exactly the
 * skipped ones live did not have. Seeded; live and history racing as in test_batched_seam. */
static void test_holes_in_the_recording(void **state)
{
    (void)state;
    static struct batched b;
    static bool skipped[BATCHED_MAX];
    for (unsigned seed = 1; seed <= 60; seed++) {
        srand(seed);
        batched_stream(&b, 3000, 0xFFFFFF80u, 0xFFFFFC00u + (uint32_t)rand());
        memset(skipped, 0, sizeof(skipped));
        for (int spans = 1 + rand() % 3; spans > 0; spans--) {
            size_t from = 1 + (size_t)rand() % (b.n - 1), len = 1 + (size_t)rand() % 200;
            for (size_t i = from; i < from + len && i < b.n; i++)
                skipped[i] = true;
        }
        size_t join = b.n / 4 + (size_t)rand() % (b.n / 2);
        struct rdps_merge m;
        memset(&out, 0, sizeof(out));
        bool small = seed % 3 == 0; /* 64 KiB: live's oldest are evicted while history lags */
        assert_int_equal(rdps__merge_init(&m, small ? 65536 : (size_t)1 << 20, 4, deliver, &out),
                         0);
        join = race(&m, &b, skipped, join, 1 + rand() % 3);
        rdps__merge_history_done(&m);
        assert_true(rdps__merge_all_live(&m));
        size_t i = 0, lost = 0, expected_lost = 0;
        for (size_t k = 0; k < out.n; k++) {
            if (out.d[k].kind == RDPS_MERGE_LOSS) {
                assert_int_equal(out.d[k].reason, RDPS_MERGE_LOSS_NOT_IN_RECORDING);
                if (out.d[k].msg_count == 0 || i == b.n || out.d[k].ordinal != b.ordinal[i])
                    fail_msg("seed %u delivery %zu: a loss of %u at ordinal %u, expected message "
                             "%zu (ordinal %u)",
                             seed, k, out.d[k].msg_count, out.d[k].ordinal, i,
                             i < b.n ? b.ordinal[i] : 0);
                for (uint32_t c = 0; c < out.d[k].msg_count; c++, i++)
                    if (i == b.n || !skipped[i])
                        fail_msg("seed %u: message %zu reported lost, not skipped", seed, i);
                lost += out.d[k].msg_count;
                continue;
            }
            if (i == b.n || out.d[k].payload != b.ordinal[i])
                fail_msg("seed %u delivery %zu: ordinal %u, expected message %zu", seed, k,
                         out.d[k].payload, i);
            i++;
        }
        if (i != b.n)
            fail_msg("seed %u: %zu of %zu messages accounted for", seed, i, b.n);
        for (size_t k = 0; k < join; k++)
            expected_lost += skipped[k];
        if (!small) /* nothing evicted: only what live never had can be lost */
            assert_int_equal(lost, expected_lost);
        rdps__merge_fini(&m);
    }
}

/* The recording stops inside the datagram before live's first: the messages between are one
 * LOSS of 3 messages and no whole datagram when the recorder is caught up. */
static void test_seam_hole_inside_a_datagram(void **state)
{
    (void)state;
    struct rdps_merge m;
    uint8_t buf[16];
    struct rdps_merge_msg x;
    memset(&out, 0, sizeof(out));
    assert_int_equal(rdps__merge_init(&m, 1 << 20, 4, deliver, &out), 0);
    static struct batched b = {.seq = {10, 10, 10, 10, 10, 11, 11},
                               .ordinal = {100, 101, 102, 103, 104, 105, 106},
                               .n = 7};
    for (size_t i = 5; i < 7; i++) {
        x = batched_msg(&b, i, buf);
        rdps__merge_live(&m, &x);
    }
    for (size_t i = 0; i < 2; i++) {
        x = batched_msg(&b, i, buf);
        rdps__merge_history(&m, &x);
    }
    assert_false(rdps__merge_all_live(&m));
    rdps__merge_history_caught_up(&m, 11, true, 11);
    assert_true(rdps__merge_all_live(&m));
    assert_int_equal(out.n, 5);
    assert_int_equal(out.d[2].kind, RDPS_MERGE_LOSS);
    assert_int_equal(out.d[2].ordinal, 102);
    assert_int_equal(out.d[2].msg_count, 3);
    assert_int_equal(out.d[2].count, 0);
    assert_int_equal(out.d[3].payload, 105);
    assert_int_equal(rdps__merge_counters(&m)->losses_not_in_recording, 1);
    rdps__merge_fini(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seam_live_racing_ahead),
        cmocka_unit_test(test_history_ahead_of_live),
        cmocka_unit_test(test_done_with_history_ahead),
        cmocka_unit_test(test_eviction_moves_the_seam),
        cmocka_unit_test(test_losses),
        cmocka_unit_test(test_sessions_without_history),
        cmocka_unit_test(test_random_interleaving),
        cmocka_unit_test(test_batched_seam),
        cmocka_unit_test(test_batched_switch_waits_for_the_whole_datagram),
        cmocka_unit_test(test_holes_in_the_recording),
        cmocka_unit_test(test_seam_hole_inside_a_datagram),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
