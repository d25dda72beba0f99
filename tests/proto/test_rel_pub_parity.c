/* SPDX-License-Identifier: BSD-2-Clause */
/* test_rel_pub_parity.c - the reliable publisher's parity repairs: rounds per block (the largest
 * count asked, not the sum), symbols that rebuild any lost datagrams, hostile parity NAKs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rdps_fec.h"
#include "rel_pub_test_util.h"

#define K     16u
#define FIRST 0xFFFFFFF0u /* rp_config's first sequence: the first block ends at the wrap */

static struct rp f;
static struct rdps_fec dec; /* a receiver's codec */

/* A publisher with blocks of K, `msgs` one-datagram messages posted, receivers 1..rx announced
 * and in flow control. */
static void start(uint32_t msgs, uint32_t rx)
{
    rp_config(&f, 1u << 20);
    f.cfg.parity_k = K;
    f.cfg.parity_max = 8;
    assert_int_equal(rp_start(&f), 0);
    for (uint32_t r = 1; r <= rx; r++)
        rp_join(&f, r, FIRST, 4096);
    for (uint32_t m = 0; m < msgs; m++)
        assert_int_equal(rp_append(&f, 100 + m, m + 1), 1);
    assert_int_equal(rp_drain(&f, NULL, 1000, 1), (int)msgs);
}

static void nak_parity(uint64_t src, uint32_t start, uint32_t count, uint16_t flags)
{
    struct rdps_seq_range r = {start, count};
    rp_nak_flags(&f, src, 7, &r, 1, (uint16_t)(RDPS_FRAME_F_PARITY | flags));
}

/* Rebuilds the frames at `lost` (indices in the block at start) from the parity actions and
 * checks each is the ring's frame, as a receiver would decode it. */
static void check_rebuild(uint32_t start, const uint32_t *lost, uint32_t nlost,
                          const struct rdps_rel_pub_action *par, uint32_t npar)
{
    uint32_t max_source = RP_DGRAM - RDPS_FRAME_PARITY_OVERHEAD - RDPS_FRAME_SYMBOL_OFF;
    assert_int_equal(rdps__fec_init(&dec, K, RDPS_FEC_MAX_PARITY, max_source), 0);
    const uint8_t *frames[K];
    uint32_t lens[K];
    bool have[K];
    static uint8_t rebuilt[K][RP_DGRAM];
    uint8_t *out[K];
    uint32_t out_lens[K];
    for (uint32_t i = 0; i < K; i++) {
        const struct rdps_pub_ring_slot *s = rdps__pub_ring_find(&f.p.adm.ring, start + i);
        assert_non_null(s);
        frames[i] = f.mem + s->pos % f.p.adm.ring.cap + RDPS_FRAME_SYMBOL_OFF;
        lens[i] = s->len - RDPS_FRAME_SYMBOL_OFF;
        have[i] = true;
        out[i] = rebuilt[i] + RDPS_FRAME_SYMBOL_OFF;
    }
    for (uint32_t m = 0; m < nlost; m++)
        have[lost[m]] = false;
    const uint8_t *parity[K];
    uint32_t index[K];
    for (uint32_t p = 0; p < npar; p++) {
        struct rdps_frame_view v;
        assert_int_equal(rdps__frame_decode(par[p].frame, par[p].len, NULL, &v), RDPS_FRAME_OK);
        assert_int_equal(v.hdr.seq, start);
        parity[p] = v.payload;
        index[p] = v.parity_index;
    }
    assert_int_equal(rdps__fec_decode(&dec, have, frames, lens, parity, index, npar, out, out_lens),
                     nlost);
    for (uint32_t m = 0; m < nlost; m++) {
        uint32_t i = lost[m], len = out_lens[i] + RDPS_FRAME_SYMBOL_OFF;
        assert_true(rdps__frame_put_symbol_prefix(rebuilt[i], len, RP_SESSION, RP_TOPIC));
        struct rdps_frame_view v;
        assert_int_equal(rdps__frame_decode(rebuilt[i], len, NULL, &v), RDPS_FRAME_OK);
        assert_int_equal(v.hdr.seq, start + i);
        assert_true(v.hdr.flags & RDPS_FRAME_F_RETRANSMIT);
        const uint8_t *orig = frames[i] - RDPS_FRAME_SYMBOL_OFF;
        assert_int_equal(len, lens[i] + RDPS_FRAME_SYMBOL_OFF);
        /* All but the flags (the rebuilt one is a repair) is the ring's frame. */
        assert_memory_equal(rebuilt[i] + 4, orig + 4, len - 4);
    }
}

/* Three receivers miss 2, 3 and 1 datagrams of the block (different ones): the publisher sends
 * 3 parity datagrams (the largest count, not 6), multicast, and each rebuilds its losses. */
static void test_largest_count_not_sum(void **state)
{
    (void)state;
    start(2 * K, 3);
    uint32_t block = FIRST; /* 0xFFFFFFF0: the block of 16 ending at the wrap */
    nak_parity(1, block, 2, 0);
    nak_parity(2, block, 3, 0);
    nak_parity(3, block, 1, 0);
    struct rdps_rel_pub_action a[16];
    for (uint32_t i = 0; i < 3; i++) { /* the engine's buffer holds one: look at each in turn */
        assert_int_equal(rp_drain(&f, a, 1, 1), 1);
        assert_int_equal(a[0].kind, RDPS_REL_PUB_POST_PARITY);
        assert_false(a[0].unicast);
        assert_int_equal(rdps__get_le32(a[0].frame + RDPS_FRAME_OFF_FRAG_OFFSET), i);
    }
    assert_int_equal(rp_drain(&f, a, 16, 1), 0);
    assert_int_equal(f.p.counters.parity_sent, 3);
    assert_int_equal(f.p.counters.parity_bytes, 3 * RP_DGRAM);
    assert_int_equal(f.p.counters.parity_nak_suppressed, 1);
    /* Symbols of later rounds (new indices 3, 4, 5), copied as a receiver holds them. */
    static uint8_t copies[3][RP_DGRAM];
    f.now += 10 * f.cfg.repair_linger_ns;
    struct rdps_rel_pub_action got[3];
    for (int i = 0; i < 3; i++) {
        nak_parity(1, block, 1, RDPS_FRAME_F_RETRANSMIT);
        assert_int_equal(rp_drain(&f, got + i, 1, 1), 1);
        assert_int_equal(rdps__get_le32(got[i].frame + RDPS_FRAME_OFF_FRAG_OFFSET), 3 + i);
        memcpy(copies[i], got[i].frame, got[i].len);
        got[i].frame = copies[i];
        f.now += 10 * f.cfg.repair_linger_ns;
    }
    static const uint32_t lost3[] = {0, 7, 15};
    check_rebuild(block, lost3, 3, got, 3);
    static const uint32_t lost1[] = {9};
    check_rebuild(block, lost1, 1, got + 2, 1);
    rp_stop(&f);
}

/* A loss common to 64 receivers: one parity datagram answers all 64 NAKs. */
static void test_common_loss_one_symbol(void **state)
{
    (void)state;
    start(2 * K, 64);
    for (uint32_t r = 1; r <= 64; r++)
        nak_parity(r, FIRST + K, 1, 0);
    struct rdps_rel_pub_action a[8];
    assert_int_equal(rp_drain(&f, a, 8, 1), 1);
    assert_int_equal(a[0].kind, RDPS_REL_PUB_POST_PARITY);
    assert_int_equal(a[0].seq, FIRST + K);
    assert_int_equal(f.p.counters.parity_nak_suppressed, 63);
    /* After the linger, a receiver still missing one starts a round with a new index. */
    f.now += 10 * f.cfg.repair_linger_ns;
    nak_parity(5, FIRST + K, 1, 0);
    assert_int_equal(rp_drain(&f, a, 8, 1), 1);
    assert_int_equal(rdps__get_le32(a[0].frame + RDPS_FRAME_OFF_FRAG_OFFSET), 1);
    rp_stop(&f);
}

/* Hostile or useless parity NAKs are counted and draw nothing: misaligned block, count past
 * the block, a block not wholly posted (the tail), no parity configured. */
static void test_hostile_parity_naks(void **state)
{
    (void)state;
    start(K + 3, 2);
    nak_parity(1, FIRST + 2, 1, 0);     /* not a block start */
    nak_parity(1, FIRST + K, 2, 0);     /* the tail: 3 of 16 posted */
    nak_parity(1, FIRST + 4 * K, 1, 0); /* not posted at all */
    struct rdps_seq_range r = {FIRST, K + 1};
    /* count past the block: the encoder refuses it past 128; K + 1 reaches the engine */
    rp_nak_flags(&f, 1, 7, &r, 1, RDPS_FRAME_F_PARITY);
    assert_int_equal(rp_drain(&f, NULL, 16, 1), 0);
    assert_int_equal(f.p.counters.parity_nak_ranges, 4);
    assert_int_equal(f.p.counters.parity_nak_refused, 4);
    assert_int_equal(f.p.counters.parity_sent, 0);
    rp_stop(&f);

    /* A publisher without parity refuses every parity NAK. */
    rp_config(&f, 1u << 20);
    assert_int_equal(rp_start(&f), 0);
    rp_join(&f, 1, FIRST, 4096);
    for (uint32_t m = 0; m < K; m++)
        assert_int_equal(rp_append(&f, 100, m + 1), 1);
    assert_int_equal(rp_drain(&f, NULL, 100, 1), (int)K);
    nak_parity(1, FIRST, 1, 0);
    assert_int_equal(rp_drain(&f, NULL, 16, 1), 0);
    assert_int_equal(f.p.counters.parity_nak_refused, 1);
    rp_stop(&f);
}

/* A block partly overwritten in the ring:
 * symbols queued for it are dropped when its first frames leave, and a NAK for it is answered as
 * unrecoverable. */
static void test_block_left_the_ring(void **state)
{
    (void)state;
    rp_config(&f, 128u * 1024u); /* 1024 slots, about 120 datagrams of 1 KiB */
    f.cfg.parity_k = K;
    f.cfg.parity_max = 8;
    assert_int_equal(rp_start(&f), 0);
    /* No receiver in flow control: the ring wraps freely. */
    uint32_t m = 0;
    for (; m < 2 * K; m++)
        assert_int_equal(rp_append(&f, 900, m + 1), 1);
    assert_int_equal(rp_drain(&f, NULL, 1000, 1), (int)(2 * K));
    nak_parity(1, FIRST, 2, 0); /* unannounced: unicast, queued */
    f.p.rq.data_since_repair = 0;
    while (rdps__seq_le(rdps__rel_pub_oldest_seq(&f.p), FIRST)) {
        assert_int_equal(rp_append(&f, 900, ++m), 1);
        struct rdps_rel_pub_action a;
        assert_int_equal(rdps__rel_pub_next_action(&f.p, f.now, f.now, &a), 1);
        assert_int_equal(a.kind, RDPS_REL_PUB_POST_DATA); /* data first: data_per_repair */
        rdps__rel_pub_send_done(&f.p, 1);
        f.p.rq.data_since_repair = 0; /* keep the repair behind the data in this test */
    }
    assert_int_equal(rp_drain(&f, NULL, 1000, 1), 0);
    assert_int_equal(f.p.counters.parity_dropped, 2);
    assert_int_equal(f.p.counters.parity_sent, 0);
    nak_parity(1, FIRST, 1, 0);
    assert_int_equal(f.p.counters.nak_ranges_unrecoverable, 1);
    rp_stop(&f);
}

/* With parity a DATA frame leaves room for the parity overhead; a bad configuration is refused. */
static void test_payload_and_config(void **state)
{
    (void)state;
    start(0, 0);
    assert_int_equal(
        rp_append(&f, RP_DGRAM - RDPS_FRAME_HEADER_LEN - RDPS_FRAME_PARITY_OVERHEAD, 1), 1);
    assert_int_equal(
        rp_append(&f, RP_DGRAM - RDPS_FRAME_HEADER_LEN - RDPS_FRAME_PARITY_OVERHEAD + 1, 2), 2);
    assert_int_equal(rp_append(&f, 5 * RP_DGRAM, 3), 6);
    struct rdps_rel_pub_action a[16];
    int n = rp_drain(&f, a, 16, 0); /* every frame decodes (rp_action_ok) */
    assert_int_equal(n, 9);
    for (int i = 0; i < n; i++)
        assert_true(a[i].len <= RP_DGRAM - RDPS_FRAME_PARITY_OVERHEAD);
    rdps__rel_pub_send_done(&f.p, (uint32_t)n);
    rp_stop(&f);
    static const uint32_t bad_k[] = {1, 3, 256};
    for (size_t i = 0; i < sizeof(bad_k) / sizeof(bad_k[0]); i++) {
        rp_config(&f, 1u << 20);
        f.cfg.parity_k = bad_k[i];
        assert_int_equal(rp_start(&f), RDPS_EINVAL);
        rp_stop(&f);
    }
    rp_config(&f, 1u << 20);
    f.cfg.parity_k = 16;
    f.cfg.parity_max = 0;
    assert_int_equal(rp_start(&f), RDPS_EINVAL);
    rp_stop(&f);
    rp_config(&f, 16u * 1024u); /* 128 slots: blocks of 64 exceed a quarter */
    f.cfg.parity_k = 64;
    assert_int_equal(rp_start(&f), RDPS_EINVAL);
    rp_stop(&f);
}

/* parity_proactive 3: each block's last datagram queues its parity indices 0..2 by multicast,
 * with no NAK; they rebuild any 3 losses of the block; a later NAK of the block gets the indices
 * after them; parity_proactive above K, or without parity_k, is refused. */
/* A lone receiver asks by sequence and is repaired by retransmission: no proactive parity for
 * it; a second one brings it back. */
static void test_no_proactive_parity_for_a_lone_receiver(void **state)
{
    (void)state;
    rp_config(&f, 1u << 20);
    f.cfg.parity_k = K;
    f.cfg.parity_max = 8;
    f.cfg.parity_proactive = 3;
    assert_int_equal(rp_start(&f), 0);
    rp_join(&f, 1, FIRST, 4096);
    for (uint32_t m = 0; m < 2 * K; m++)
        assert_int_equal(rp_append(&f, 100 + m, m + 1), 1);
    struct rdps_rel_pub_action a;
    while (rp_drain(&f, &a, 1, 1) == 1)
        assert_int_equal(a.kind, RDPS_REL_PUB_POST_DATA);
    assert_int_equal(f.p.counters.parity_sent, 0);
    rp_join(&f, 2, FIRST + 2 * K, 4096);
    for (uint32_t m = 0; m < K; m++)
        assert_int_equal(rp_append(&f, 100 + m, 2 * K + m + 1), 1);
    while (rp_drain(&f, &a, 1, 1) == 1)
        ;
    assert_int_equal(f.p.counters.parity_proactive, 3);
    rp_stop(&f);
}

static void test_proactive_parity_unasked(void **state)
{
    (void)state;
    rp_config(&f, 1u << 20);
    f.cfg.parity_k = K;
    f.cfg.parity_max = 8;
    f.cfg.parity_proactive = 3;
    assert_int_equal(rp_start(&f), 0);
    rp_join(&f, 1, FIRST, 4096);
    rp_join(&f, 2, FIRST, 4096);
    for (uint32_t m = 0; m < 2 * K + 5; m++)
        assert_int_equal(rp_append(&f, 100 + m, m + 1), 1);
    static uint8_t copies[6][RP_DGRAM];
    struct rdps_rel_pub_action par[6], a;
    uint32_t data = 0, npar = 0;
    while (rp_drain(&f, &a, 1, 1) == 1) {
        if (a.kind == RDPS_REL_PUB_POST_DATA) {
            data++;
            continue;
        }
        assert_int_equal(a.kind, RDPS_REL_PUB_POST_PARITY);
        assert_false(a.unicast);
        assert_true(npar < 6);
        uint32_t block = FIRST + (npar / 3) * K, j = npar % 3;
        assert_int_equal(a.seq, block);
        assert_int_equal(rdps__get_le32(a.frame + RDPS_FRAME_OFF_FRAG_OFFSET), j);
        assert_true(data >= block - FIRST + K); /* after the block's last datagram */
        memcpy(copies[npar], a.frame, a.len);
        par[npar] = a;
        par[npar].frame = copies[npar];
        npar++;
    }
    assert_int_equal(data, 2 * K + 5);
    assert_int_equal(npar, 6); /* two whole blocks, the third not yet */
    assert_int_equal(f.p.counters.naks_received, 0);
    assert_int_equal(f.p.counters.parity_sent, 6);
    assert_int_equal(f.p.counters.parity_proactive, 6);
    assert_int_equal(f.p.counters.parity_bytes, 6 * RP_DGRAM);
    static const uint32_t lost[] = {1, 8, 15};
    check_rebuild(FIRST, lost, 3, par, 3);
    check_rebuild(FIRST + K, lost + 1, 2, par + 3, 2);
    /* A receiver lacking 2 more of the first block, later: indices 3 and 4. */
    f.now += 10 * f.cfg.repair_linger_ns;
    nak_parity(1, FIRST, 2, 0);
    for (uint32_t i = 0; i < 2; i++) {
        assert_int_equal(rp_drain(&f, &a, 1, 1), 1);
        assert_int_equal(a.kind, RDPS_REL_PUB_POST_PARITY);
        assert_int_equal(rdps__get_le32(a.frame + RDPS_FRAME_OFF_FRAG_OFFSET), 3 + i);
    }
    assert_int_equal(f.p.counters.parity_proactive, 6);
    assert_int_equal(f.p.counters.parity_sent, 8);
    rp_stop(&f);
    static const uint32_t bad[][2] = {{0, 1}, {K, K + 1}, {K, 9}}; /* {k, proactive}; max 8 */
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        rp_config(&f, 1u << 20);
        f.cfg.parity_k = bad[i][0];
        f.cfg.parity_max = 8;
        f.cfg.parity_proactive = bad[i][1];
        assert_int_equal(rp_start(&f), RDPS_EINVAL);
        rp_stop(&f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_largest_count_not_sum),
        cmocka_unit_test(test_common_loss_one_symbol),
        cmocka_unit_test(test_hostile_parity_naks),
        cmocka_unit_test(test_block_left_the_ring),
        cmocka_unit_test(test_payload_and_config),
        cmocka_unit_test(test_no_proactive_parity_for_a_lone_receiver),
        cmocka_unit_test(test_proactive_parity_unasked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
