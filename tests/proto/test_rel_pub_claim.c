/* SPDX-License-Identifier: BSD-2-Clause */
/* test_rel_pub_claim.c - reliable publisher: zero-copy reserve/commit in the ring (admission,
 * placement, refusals) and pins that keep a frame in the ring while it is read in place. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <string.h>

#include "rel_pub_test_util.h"
#include "rdps_seq.h"

/* Reserves, writes the pattern of message id (len bytes) in place and commits. */
static int claim_commit(struct rp *f, size_t len, uint64_t id)
{
    uint8_t *payload;
    uint32_t cap;
    int rc = rdps__rel_pub_reserve(&f->p, UINT32_MAX, f->now, 0, &payload, &cap);
    if (rc < 0)
        return rc;
    assert_true(len <= cap);
    pattern_fill(payload, len, RP_SESSION, id);
    return rdps__rel_pub_commit(&f->p, len, id); /* wall_ns = id: rp_action_ok checks the bytes */
}

/* A committed frame is the frame append would have written: header, sequence, payload in place;
 * posted in order with appended ones. */
static void test_reserve_commit_in_order_with_append(void **state)
{
    (void)state;
    struct rp f;
    rp_config(&f, 64 * RP_DGRAM);
    assert_int_equal(rp_start(&f), 0);
    uint32_t first = f.cfg.first_seq;
    for (uint64_t i = 0; i < 40; i++) {
        size_t len = (size_t)(i * 37u) % (RP_PAYLOAD + 1);
        int rc = i % 2 ? claim_commit(&f, len, i) : rp_append(&f, len, i);
        assert_int_equal(rc, 1);
    }
    struct rdps_rel_pub_action a[64];
    assert_int_equal(rp_drain(&f, a, 64, 1), 40); /* every frame checked against the ring */
    for (uint32_t i = 0; i < 40; i++) {
        assert_int_equal(a[i].kind, RDPS_REL_PUB_POST_DATA);
        assert_int_equal(a[i].seq, first + i);
        assert_int_equal(a[i].len, RDPS_FRAME_HEADER_LEN + (i * 37u) % (RP_PAYLOAD + 1));
    }
    assert_int_equal(f.p.counters.msgs_appended, 40);
    assert_int_equal(f.p.counters.frames_appended, 40);
    rp_stop(&f);
}

/* The claim's room: one datagram's payload, capped by max_msg_len; inside the ring memory, after
 * the header of the frame it becomes. */
static void test_reserve_capacity_and_place(void **state)
{
    (void)state;
    struct rp f;
    uint8_t *payload;
    uint32_t cap;
    rp_config(&f, 8 * RP_DGRAM);
    assert_int_equal(rp_start(&f), 0);
    assert_int_equal(rdps__rel_pub_reserve(&f.p, UINT32_MAX, f.now, 0, &payload, &cap), 0);
    assert_int_equal(cap, RP_PAYLOAD);
    assert_ptr_equal(payload, f.mem + RDPS_FRAME_HEADER_LEN);
    rdps__rel_pub_unreserve(&f.p);
    rp_stop(&f);

    rp_config(&f, 8 * RP_DGRAM);
    f.cfg.max_msg_len = 100;
    assert_int_equal(rp_start(&f), 0);
    assert_int_equal(rdps__rel_pub_reserve(&f.p, UINT32_MAX, f.now, 0, &payload, &cap), 0);
    assert_int_equal(cap, 100);
    assert_int_equal(rdps__rel_pub_commit(&f.p, 101, 1), RDPS_EMSGSIZE);
    assert_true(f.p.adm.reserved); /* a refused commit leaves the reservation: the caller decides */
    pattern_fill(payload, 100, RP_SESSION, 5);
    assert_int_equal(rdps__rel_pub_commit(&f.p, 100, 5), 1);
    assert_int_equal(rp_drain(&f, NULL, 4, 1), 1);
    rp_stop(&f);
}

/* While a reservation is outstanding nothing else is placed (EBUSY); unreserve leaves the ring as
 * it was; commit without a reservation is refused. */
static void test_reserve_excludes_and_unreserve_leaves_nothing(void **state)
{
    (void)state;
    struct rp f;
    uint8_t *payload, *again;
    uint32_t cap;
    rp_config(&f, 16 * RP_DGRAM);
    assert_int_equal(rp_start(&f), 0);
    assert_int_equal(rp_append(&f, 300, 1), 1);
    uint32_t head = f.p.adm.ring.head_seq;
    uint64_t head_pos = f.p.adm.ring.head_pos;

    assert_int_equal(rdps__rel_pub_reserve(&f.p, UINT32_MAX, f.now, 0, &payload, &cap), 0);
    assert_int_equal(rdps__rel_pub_reserve(&f.p, UINT32_MAX, f.now, 0, &again, &cap), RDPS_EBUSY);
    assert_int_equal(rp_append(&f, 10, 2), RDPS_EBUSY);
    /* Posting goes on meanwhile: the appended frame leaves, the reserved room does not. */
    assert_int_equal(rp_drain(&f, NULL, 4, 1), 1);
    memset(payload, 0x55, cap); /* the application writes, then changes its mind */
    rdps__rel_pub_unreserve(&f.p);
    assert_int_equal(f.p.adm.ring.head_seq, head);
    assert_int_equal(f.p.adm.ring.head_pos, head_pos);
    assert_int_equal(f.p.counters.msgs_appended, 1);
    assert_int_equal(rdps__rel_pub_commit(&f.p, 10, 3), RDPS_EINVAL);
    assert_int_equal(rp_drain(&f, NULL, 4, 1), 0); /* nothing was appended */

    /* The room is reused by the next message, whichever way it comes. */
    assert_int_equal(rp_append(&f, 20, 4), 1);
    assert_int_equal(f.p.adm.ring.slots[head & f.p.adm.ring.slot_mask].pos, head_pos);
    assert_int_equal(rp_drain(&f, NULL, 4, 1), 1);
    rp_stop(&f);
}

/* Reserve is admitted like append: the window and the ring refuse with RDPS_EAGAIN and nothing is
 * reserved. */
static void test_reserve_backpressure(void **state)
{
    (void)state;
    struct rp f;
    uint8_t *payload;
    uint32_t cap;
    rp_config(&f, 16 * RP_DGRAM);
    f.cfg.flow = RDPS_REL_FLOW_MIN;
    assert_int_equal(rp_start(&f), 0);
    uint32_t first = f.cfg.first_seq;
    rp_join(&f, 1, first, 2); /* a window of two datagrams */
    assert_int_equal(claim_commit(&f, 10, 1), 1);
    assert_int_equal(claim_commit(&f, 10, 2), 1);
    assert_int_equal(rdps__rel_pub_reserve(&f.p, UINT32_MAX, f.now, 0, &payload, &cap),
                     RDPS_EAGAIN);
    assert_false(f.p.adm.reserved);
    assert_int_equal(f.p.counters.backpressure_window, 1);
    assert_int_equal(rp_drain(&f, NULL, 8, 1), 2);
    rp_status(&f, 1, first + 2, 1000);
    assert_int_equal(claim_commit(&f, 10, 3), 1);

    /* Ring: nothing completes, so the trail cannot pass frames in flight. */
    assert_int_equal(rp_drain(&f, NULL, 8, 0), 1);
    int rc;
    uint64_t id = 10;
    while (id < 100 && (rc = claim_commit(&f, RP_PAYLOAD, id++)) == 1) {
        assert_int_equal(rp_drain(&f, NULL, 1, 0), 1);
        rp_status(&f, 1, f.p.adm.post_seq, 1000);
    }
    assert_int_equal(rc, RDPS_EAGAIN);
    assert_false(f.p.adm.reserved);
    assert_true(f.p.counters.backpressure_ring >= 1);
    uint32_t head = f.p.adm.ring.head_seq;
    rdps__rel_pub_send_done(&f.p, 1000);
    assert_int_equal(claim_commit(&f, RP_PAYLOAD, id), 1);
    assert_int_equal(f.p.adm.ring.head_seq, head + 1);
    rp_stop(&f);
}

/* Claimed frames of every length wrap the ring like appended ones: never across its end, never
 * over a retained frame; what is retained is intact. */
static void test_reserve_wraps_the_ring(void **state)
{
    (void)state;
    struct rp f;
    rp_config(&f, 5 * RP_DGRAM + 200); /* not a multiple of a datagram: room is left at the end */
    assert_int_equal(rp_start(&f), 0);
    uint32_t first = f.cfg.first_seq;
    for (uint64_t i = 0; i < 300; i++) {
        size_t len = (size_t)(i * 331u) % (RP_PAYLOAD + 1);
        assert_int_equal(i % 3 ? claim_commit(&f, len, i) : rp_append(&f, len, i), 1);
        assert_int_equal(rp_drain(&f, NULL, 4, 1), 1);
        assert_true(rdps__pub_ring_used(&f.p.adm.ring) <= f.p.adm.ring.cap);
        for (uint32_t s = f.p.adm.ring.trail_seq; s != f.p.adm.ring.head_seq; s++) {
            const struct rdps_pub_ring_slot *slot = rdps__pub_ring_find(&f.p.adm.ring, s);
            assert_non_null(slot);
            assert_true(slot->pos % f.p.adm.ring.cap + slot->len <= f.p.adm.ring.cap);
            struct rdps_frame_view v;
            assert_int_equal(
                rdps__frame_decode(rdps__pub_ring_frame(&f.p.adm.ring, slot), slot->len, NULL, &v),
                0);
            assert_int_equal(v.hdr.seq, s);
            assert_true(pattern_check(v.payload, v.payload_len, RP_SESSION, s - first));
        }
    }
    rp_stop(&f);
}

/* A pinned frame stays in the ring: appends that would need the trail past it are refused until
 * the last unpin. */
static void test_pin_holds_the_trail(void **state)
{
    (void)state;
    struct rp f;
    rp_config(&f, 4 * RP_DGRAM);
    assert_int_equal(rp_start(&f), 0);
    uint32_t first = f.cfg.first_seq;
    assert_int_equal(claim_commit(&f, RP_PAYLOAD, 0), 1);
    assert_int_equal(rp_drain(&f, NULL, 4, 1), 1); /* posted and complete: free to go */
    rdps__rel_pub_pin(&f.p, first);
    rdps__rel_pub_pin(&f.p, first); /* nested */
    uint64_t id = 1;
    int rc;
    while (id < 20 && (rc = rp_append(&f, RP_PAYLOAD, id)) == 1) {
        assert_int_equal(rp_drain(&f, NULL, 4, 1), 1);
        id++;
    }
    assert_int_equal(rc, RDPS_EAGAIN);
    assert_int_equal(id, 4); /* three more fit beside it */
    assert_int_equal(f.p.adm.ring.trail_seq, first);
    const struct rdps_pub_ring_slot *slot = rdps__pub_ring_find(&f.p.adm.ring, first);
    assert_true(pattern_check(rdps__pub_ring_frame(&f.p.adm.ring, slot) + RDPS_FRAME_HEADER_LEN,
                              RP_PAYLOAD, RP_SESSION, 0));
    rdps__rel_pub_unpin(&f.p);
    assert_int_equal(rp_append(&f, RP_PAYLOAD, id), RDPS_EAGAIN); /* still pinned once */
    rdps__rel_pub_unpin(&f.p);
    assert_int_equal(rp_append(&f, RP_PAYLOAD, id), 1);
    assert_null(rdps__pub_ring_find(&f.p.adm.ring, first));
    rp_stop(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reserve_commit_in_order_with_append),
        cmocka_unit_test(test_reserve_capacity_and_place),
        cmocka_unit_test(test_reserve_excludes_and_unreserve_leaves_nothing),
        cmocka_unit_test(test_reserve_backpressure),
        cmocka_unit_test(test_reserve_wraps_the_ring),
        cmocka_unit_test(test_pin_holds_the_trail),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
