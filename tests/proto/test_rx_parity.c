/* SPDX-License-Identifier: BSD-2-Clause */
/* test_rx_parity.c - parity repairs end to end on a fake clock: a parity publisher engine and
 * several receive engines with their own losses; the block store's hostile inputs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rdps_fec.h"
#include "rdps_reasm.h"
#include "rel_pub_test_util.h"

#define NRX     8
#define K       16u
#define PUB_SRC 100u
#define US      1000ull

struct rx {
    struct recorder rec; /* first: the callbacks' user pointer */
    struct rdps_reasm r;
    unsigned index;
    uint64_t losses; /* loss events */
};

static struct rp f;
static struct rx rxs[NRX];
static unsigned nrx;
/* Control frames from receivers, delivered to the publisher at the next step. */
static struct frame_list to_pub;
static uint32_t naks_at_pub;
static uint32_t proactive; /* the next setup's parity_proactive */

static void rx_send(void *user, const struct rdps_source *dest, uint32_t session_id,
                    const uint8_t *frame, size_t len)
{
    struct rx *x = user;
    assert_int_equal(test_source_number(dest), PUB_SRC);
    assert_int_equal(session_id, RP_SESSION);
    frames_push(&to_pub, frame, len, x->index + 1, session_id, 0);
}

static void rx_loss(void *user, const struct rdps_reasm_loss *loss)
{
    struct rx *x = user;
    (void)loss;
    x->losses++;
}

static void setup(unsigned receivers, uint32_t parity_blocks)
{
    rp_config(&f, 4u << 20);
    f.cfg.first_seq = 0xFFFFFF00u; /* blocks across the wrap */
    f.cfg.parity_k = K;
    f.cfg.parity_max = 16;
    f.cfg.repair_linger_ns = 300 * US;
    f.cfg.parity_proactive = proactive;
    assert_int_equal(rp_start(&f), 0);
    nrx = receivers;
    memset(&to_pub, 0, sizeof(to_pub));
    naks_at_pub = 0;
    for (unsigned k = 0; k < receivers; k++) {
        struct rx *x = &rxs[k];
        memset(x, 0, sizeof(*x));
        x->index = k;
        struct rdps_reasm_config cfg;
        rdps__reasm_config_default(&cfg);
        cfg.reasm_cap_bytes = 4u << 20;
        cfg.chunk_bytes = 4096;
        cfg.max_partials = 2048;
        cfg.max_partials_per_source = 0;
        cfg.deliver = recorder_deliver;
        cfg.user = x;
        cfg.rel.enabled = true;
        cfg.rel.receiver_id = 7; /* rp's NAK/STATUS helpers use 7: sources tell them apart */
        cfg.rel.rng_seed = 42 + k;
        cfg.rel.default_rtt_ns = 100 * US;
        cfg.rel.send = rx_send;
        cfg.rel.on_loss = rx_loss;
        cfg.rel.receivers = receivers;
        cfg.rel.parity_blocks = parity_blocks;
        cfg.rel.parity_blocks_per_stream = 64; /* the window in blocks of 16 */
        cfg.rel.parity_max_frame = RP_DGRAM;
        assert_int_equal(rdps__reasm_init(&x->r, &cfg), 0);
        assert_int_equal(rp_announce(&f, k + 1), 0);
    }
}

static void teardown(void)
{
    for (unsigned k = 0; k < nrx; k++) {
        rdps__reasm_fini(&rxs[k].r);
        recorder_free(&rxs[k].rec);
    }
    frames_free(&to_pub);
    rp_stop(&f);
}

typedef bool (*drop_fn)(unsigned rx, uint32_t offset);

/* One step: the publisher's actions go to every receiver (first posts dropped as `drop` says,
 * repairs and heartbeats delivered), receivers poll, their NAK and STATUS reach the publisher. */
static void step(drop_fn drop)
{
    struct rdps_rel_pub_action a;
    struct rdps_source pub = test_source(PUB_SRC);
    for (int n = 0; n < 8 && rdps__rel_pub_next_action(&f.p, f.now, f.now, &a) == 1; n++) {
        assert_true(rp_action_ok(&f, &a));
        for (unsigned k = 0; k < nrx; k++) {
            if (a.unicast && test_source_number(&a.dest) != k + 1)
                continue;
            /* The first datagram always arrives: a receiver joins at the live position. */
            if (a.kind == RDPS_REL_PUB_POST_DATA && a.seq != f.cfg.first_seq &&
                drop(k, a.seq - f.cfg.first_seq))
                continue;
            (void)rdps__reasm_input(&rxs[k].r, &pub, a.frame, a.len, f.now);
        }
        if (a.in_ring)
            rdps__rel_pub_send_done(&f.p, 1);
    }
    f.now += 5 * US;
    for (unsigned k = 0; k < nrx; k++)
        (void)rdps__reasm_rel_poll(&rxs[k].r, f.now, f.now);
    for (size_t i = 0; i < to_pub.count; i++) {
        struct rdps_frame_view v;
        const struct frame *fr = &to_pub.items[i];
        assert_int_equal(rdps__frame_decode(fr->data, fr->len, NULL, &v), RDPS_FRAME_OK);
        if (v.hdr.type == RDPS_FRAME_NAK)
            naks_at_pub++;
        struct rdps_source s = test_source(fr->source);
        rdps__rel_pub_on_frame(&f.p, &s, &v, f.now, f.now);
    }
    frames_free(&to_pub);
}

/* Publishes msgs one-datagram messages and runs until every receiver has them all. */
static void run(uint32_t msgs, drop_fn drop)
{
    uint32_t m = 0;
    for (int rounds = 0; rounds < 20000; rounds++) {
        while (m < msgs && rp_append(&f, 200, m + 1) == 1)
            m++;
        step(drop);
        bool done = m == msgs;
        for (unsigned k = 0; k < nrx && done; k++)
            done = rxs[k].rec.count == msgs;
        if (done)
            break;
    }
    for (unsigned k = 0; k < nrx; k++) {
        const struct recorder *rec = &rxs[k].rec;
        assert_int_equal(rec->count, msgs);
        for (uint32_t i = 0; i < msgs; i++) { /* exactly once, in order, intact */
            assert_int_equal(rec->items[i].msg_id, i + 1);
            assert_true(rec->items[i].pattern_ok);
        }
        assert_int_equal(rxs[k].losses, 0);
    }
}

/* Receiver k loses the datagrams at offsets = k (mod 11) and 2k + 3 (mod 13): every receiver its
 * own, several per block. */
static bool drop_independent(unsigned rx, uint32_t off)
{
    return off % 11 == rx % 11 || off % 13 == (2 * rx + 3) % 13;
}

static void test_independent_losses_repaired_by_parity(void **state)
{
    (void)state;
    setup(NRX, 512);
    run(40 * K, drop_independent);
    uint64_t rebuilt = 0;
    for (unsigned k = 0; k < nrx; k++)
        rebuilt += rdps__reasm_rel_counters(&rxs[k].r)->parity_rebuilt;
    const struct rdps_rel_pub_counters *pc = rdps__rel_pub_counters(&f.p);
    /* Losses were healed by parity: far fewer publisher repairs than losses. */
    assert_true(rebuilt > 40 * K / 13 * NRX);
    assert_true(pc->parity_sent > 0);
    print_message("parity: %llu sent, %llu rebuilt at %u receivers, %llu retransmissions, "
                  "%u NAKs\n",
                  (unsigned long long)pc->parity_sent, (unsigned long long)rebuilt, nrx,
                  (unsigned long long)(pc->repairs_unicast + pc->repairs_multicast), naks_at_pub);
    /* One parity datagram healed several losses; retransmissions were the exception. */
    assert_true(pc->parity_sent * 3 < rebuilt);
    assert_true(pc->repairs_unicast + pc->repairs_multicast < rebuilt);
    teardown();
}

/* Without the receivers' block store the same run is repaired by retransmissions (the
 * publisher's parity stays unused): parity is opt-in on both sides. */
static void test_receivers_without_parity(void **state)
{
    (void)state;
    setup(4, 0);
    run(20 * K, drop_independent);
    assert_int_equal(rdps__rel_pub_counters(&f.p)->parity_sent, 0);
    assert_true(rdps__rel_pub_counters(&f.p)->repairs_multicast +
                    rdps__rel_pub_counters(&f.p)->repairs_unicast >
                0);
    teardown();
}

/* A loss common to all receivers (one datagram per block, the same everywhere): at most 3 NAKs
 * reach the publisher per block. */
static bool drop_common(unsigned rx, uint32_t off)
{
    (void)rx;
    return off % K == 5;
}

static void test_common_loss_at_most_three_naks_per_block(void **state)
{
    (void)state;
    setup(NRX, 512);
    run(40 * K, drop_common);
    const struct rdps_rx_parity_counters *c = &rxs[0].r.par.c;
    print_message("rx0: kept %llu parity %llu/%llu useless %llu bad %llu decodes %llu, "
                  "parity ranges %llu\n",
                  (unsigned long long)c->frames_kept, (unsigned long long)c->parity_kept,
                  (unsigned long long)c->parity_received, (unsigned long long)c->parity_useless,
                  (unsigned long long)c->parity_bad, (unsigned long long)c->decodes,
                  (unsigned long long)rdps__reasm_rel_counters(&rxs[0].r)->parity_ranges_sent);
    print_message("common loss: %u NAKs for 40 blocks, %llu parity\n", naks_at_pub,
                  (unsigned long long)rdps__rel_pub_counters(&f.p)->parity_sent);
    assert_true(naks_at_pub <= 3 * 40);
    teardown();
}

/* Proactive parity of 2 per block: every receiver loses 2 datagrams of each block (its own ones,
 * none in the last block) and rebuilds them from the symbols sent unasked: no NAK at all. */
static bool drop_two_per_block(unsigned rx, uint32_t off)
{
    return off < 39 * K && (off % K == rx % K || off % K == (rx + 5) % K);
}

static void test_proactive_parity_needs_no_nak(void **state)
{
    (void)state;
    proactive = 2;
    setup(NRX, 512);
    proactive = 0;
    run(40 * K, drop_two_per_block);
    uint64_t rebuilt = 0, ranges = 0;
    for (unsigned k = 0; k < nrx; k++) {
        rebuilt += rdps__reasm_rel_counters(&rxs[k].r)->parity_rebuilt;
        ranges += rdps__reasm_rel_counters(&rxs[k].r)->parity_ranges_sent;
    }
    const struct rdps_rel_pub_counters *pc = rdps__rel_pub_counters(&f.p);
    print_message("proactive 2: %llu parity sent (%llu unasked), %llu rebuilt, %u NAKs\n",
                  (unsigned long long)pc->parity_sent, (unsigned long long)pc->parity_proactive,
                  (unsigned long long)rebuilt, naks_at_pub);
    /* Every loss rebuilt (receiver 0's first datagram always arrives). */
    assert_int_equal(rebuilt, 39 * 2 * NRX - 1);
    assert_int_equal(naks_at_pub, 0);
    assert_int_equal(ranges, 0);
    assert_int_equal(pc->parity_sent, 40 * 2);
    assert_int_equal(pc->parity_proactive, 40 * 2);
    assert_int_equal(pc->repairs_unicast + pc->repairs_multicast, 0);
    teardown();
}

/* Forged parity frames from the publisher's own source: each is a counted drop, and a forged
 * symbol that makes a block decode to garbage rebuilds nothing (the rebuilt frame fails its
 * checks); every message still arrives once, in order, repaired by sequence. */
static bool drop_nothing(unsigned rx, uint32_t off)
{
    (void)rx;
    return off == 2 * K + 3 || off == 2 * K + 4; /* two holes in the third block */
}

static void inject_parity(uint32_t block, uint32_t k, uint32_t j, uint32_t len, uint8_t fill)
{
    uint8_t frame[RP_DGRAM + 64];
    struct rdps_source pub = test_source(PUB_SRC);
    assert_int_equal(rdps__frame_put_parity_header(frame, RP_SESSION, RP_TOPIC, block, k, j, 1),
                     RDPS_FRAME_HEADER_LEN);
    memset(frame + RDPS_FRAME_HEADER_LEN, fill, len);
    (void)rdps__reasm_input(&rxs[0].r, &pub, frame, RDPS_FRAME_HEADER_LEN + len, f.now);
}

static void test_hostile_parity_frames(void **state)
{
    (void)state;
    setup(2, 64); /* two receivers: parity NAKs */
    uint32_t first = f.cfg.first_seq, block = first + 2 * K;
    uint32_t sym = f.p.par.len - RDPS_FRAME_HEADER_LEN;
    /* The first three blocks go out; receiver 0 misses two datagrams of the third. */
    for (uint32_t m = 0; m < 3 * K; m++)
        assert_int_equal(rp_append(&f, 200, m + 1), 1);
    for (int i = 0; i < 8; i++) {
        struct rdps_rel_pub_action a;
        struct rdps_source pub = test_source(PUB_SRC);
        while (rdps__rel_pub_next_action(&f.p, f.now, f.now, &a) == 1) {
            for (unsigned k = 0; k < nrx; k++)
                if (a.kind != RDPS_REL_PUB_POST_DATA || k != 0 || !drop_nothing(k, a.seq - first))
                    (void)rdps__reasm_input(&rxs[k].r, &pub, a.frame, a.len, f.now);
            if (a.in_ring)
                rdps__rel_pub_send_done(&f.p, 1);
        }
    }
    const struct rdps_rx_parity_counters *c = &rxs[0].r.par.c;
    inject_parity(block, 32, 0, sym, 1); /* another k than the heartbeats said */
    assert_int_equal(c->parity_bad, 1);
    inject_parity(block, K, 0, sym, 0x5A); /* a forged symbol of the right shape: kept */
    assert_int_equal(c->parity_kept, 1);
    inject_parity(block, K, 0, sym, 0x5A); /* the same index again */
    assert_int_equal(c->parity_bad, 2);
    inject_parity(block, K, 1, sym - 2, 0x5A); /* another length than the first symbol's */
    assert_int_equal(c->parity_bad, 3);
    inject_parity(first + 64 * K, K, 0, sym, 0x5A); /* a block never seen */
    assert_int_equal(c->parity_useless, 1);
    /* A second forged symbol completes the block: it decodes to garbage, nothing is rebuilt. */
    inject_parity(block, K, 1, sym, 0xA5);
    assert_int_equal(c->decodes + c->rebuilt_bad > 0, 1);
    assert_int_equal(c->rebuilt, 0);
    assert_int_equal(rxs[0].rec.count, 2 * K + 3);
    /* The holes are asked for by sequence and repaired: everything, in order, once. */
    for (int rounds = 0; rounds < 20000 && rxs[0].rec.count < 3 * K; rounds++)
        step(drop_nothing);
    for (unsigned k = 0; k < nrx; k++) {
        assert_int_equal(rxs[k].rec.count, 3 * K);
        for (uint32_t i = 0; i < 3 * K; i++) {
            assert_int_equal(rxs[k].rec.items[i].msg_id, i + 1);
            assert_true(rxs[k].rec.items[i].pattern_ok);
        }
        assert_int_equal(rxs[k].losses, 0);
    }
    teardown();
}

/*
 * A forger that sees a block's other datagrams (any member of the group does) builds parity
 * symbols over the block with its own frames in place of the two the receiver lacks, each with a
 * valid header (the sequence it replaces, a consistent length, reserved zero) and a payload that
 * passes for message 999: decoded, the block rebuilds exactly those frames, every check of the
 * block store passes. Sent from the forger's own address, they never reach the stream (streams
 * are keyed by source) and the holes are repaired with the true messages. Sent from the
 * publisher's exact address (a host that forges source addresses, on RoCE), the engine cannot
 * tell them from the publisher's and delivers the forgery, as it would a forged DATA frame:
 * what stops that is a domain key (test_domain_key: test_forged_parity_keyed).
 */
static void run_parity_forged_to_decode(bool from_publisher_address)
{
    setup(2, 64);
    uint32_t first = f.cfg.first_seq, block = first + 2 * K;
    uint32_t sym = f.p.par.len - RDPS_FRAME_HEADER_LEN; /* a parity symbol's bytes */
    static uint8_t frames[K][RP_DGRAM];
    uint32_t lens[K] = {0};
    for (uint32_t m = 0; m < 3 * K; m++)
        assert_int_equal(rp_append(&f, 200, m + 1), 1);
    for (int i = 0; i < 8; i++) {
        struct rdps_rel_pub_action a;
        struct rdps_source pub = test_source(PUB_SRC);
        while (rdps__rel_pub_next_action(&f.p, f.now, f.now, &a) == 1) {
            if (a.kind == RDPS_REL_PUB_POST_DATA && a.seq - block < K) { /* what a member sees */
                memcpy(frames[a.seq - block], a.frame, a.len);
                lens[a.seq - block] = (uint32_t)a.len;
            }
            for (unsigned k = 0; k < nrx; k++)
                if (a.kind != RDPS_REL_PUB_POST_DATA || k != 0 || !drop_nothing(k, a.seq - first))
                    (void)rdps__reasm_input(&rxs[k].r, &pub, a.frame, a.len, f.now);
            if (a.in_ring)
                rdps__rel_pub_send_done(&f.p, 1);
        }
    }
    assert_int_equal(rxs[0].rec.count, 2 * K + 3);
    /* The forged frames: message 999 and 1000, pattern and all, at the two holes. */
    for (uint32_t h = 3; h <= 4; h++) {
        uint32_t ordinal = rdps__get_le32(frames[h] + RDPS_FRAME_OFF_ORDINAL); /* the real one's */
        uint32_t len =
            rdps__frame_put_data_header(frames[h], RP_SESSION, RP_TOPIC, block + h, 200, 0, 200,
                                        996 + h, RDPS_FRAME_F_RELIABLE, ordinal, 1);
        pattern_fill(frames[h] + RDPS_FRAME_HEADER_LEN, 200, RP_SESSION, 996 + h);
        lens[h] = len;
    }
    const uint8_t *src[K];
    uint32_t src_lens[K];
    for (uint32_t i = 0; i < K; i++) {
        assert_true(lens[i] > RDPS_FRAME_SYMBOL_OFF);
        src[i] = frames[i] + RDPS_FRAME_SYMBOL_OFF;
        src_lens[i] = lens[i] - RDPS_FRAME_SYMBOL_OFF;
    }
    struct rdps_fec *fec = calloc(1, sizeof(*fec));
    assert_non_null(fec);
    assert_int_equal(rdps__fec_init(fec, K, 16, sym - RDPS_FEC_LEN_BYTES), 0);
    struct rdps_source from = test_source(from_publisher_address ? PUB_SRC : PUB_SRC + 50);
    const struct rdps_rx_parity_counters *c = &rxs[0].r.par.c;
    for (uint32_t j = 0; j < 2; j++) {
        uint8_t frame[RP_DGRAM + 64];
        assert_int_equal(rdps__frame_put_parity_header(frame, RP_SESSION, RP_TOPIC, block, K, j, 1),
                         RDPS_FRAME_HEADER_LEN);
        assert_int_equal(rdps__fec_encode(fec, src, src_lens, j, frame + RDPS_FRAME_HEADER_LEN), 0);
        (void)rdps__reasm_input(&rxs[0].r, &from, frame, RDPS_FRAME_HEADER_LEN + sym, f.now);
    }
    free(fec);
    if (from_publisher_address) {
        /* Rebuilt, checked, fed as a repair: the forged message is delivered. */
        print_message("forged parity from the publisher's address: %llu rebuilt, %llu bad, "
                      "delivered %zu\n",
                      (unsigned long long)c->rebuilt, (unsigned long long)c->rebuilt_bad,
                      rxs[0].rec.count);
        assert_int_equal(c->rebuilt, 2);
        assert_int_equal(c->rebuilt_bad, 0);
        assert_true(rxs[0].rec.count > 2 * K + 3);
        assert_int_equal(rxs[0].rec.items[2 * K + 3].msg_id, 999);
        assert_true(rxs[0].rec.items[2 * K + 3].pattern_ok);
        teardown();
        return;
    }
    assert_int_equal(c->parity_kept, 0); /* no stream of that source: nothing kept */
    assert_int_equal(c->rebuilt, 0);
    assert_int_equal(rxs[0].rec.count, 2 * K + 3);
    for (int rounds = 0; rounds < 20000 && rxs[0].rec.count < 3 * K; rounds++)
        step(drop_nothing);
    for (unsigned k = 0; k < nrx; k++) {
        assert_int_equal(rxs[k].rec.count, 3 * K);
        for (uint32_t i = 0; i < 3 * K; i++) {
            assert_int_equal(rxs[k].rec.items[i].msg_id, i + 1); /* never 999 or 1000 */
            assert_true(rxs[k].rec.items[i].pattern_ok);
        }
    }
    teardown();
}

static void test_parity_forged_to_decode_from_another_address(void **state)
{
    (void)state;
    run_parity_forged_to_decode(false);
}

static void test_parity_forged_to_decode_from_the_publishers_address(void **state)
{
    (void)state;
    run_parity_forged_to_decode(true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_independent_losses_repaired_by_parity),
        cmocka_unit_test(test_receivers_without_parity),
        cmocka_unit_test(test_common_loss_at_most_three_naks_per_block),
        cmocka_unit_test(test_proactive_parity_needs_no_nak),
        cmocka_unit_test(test_hostile_parity_frames),
        cmocka_unit_test(test_parity_forged_to_decode_from_another_address),
        cmocka_unit_test(test_parity_forged_to_decode_from_the_publishers_address),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
