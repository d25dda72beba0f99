/* SPDX-License-Identifier: BSD-2-Clause */
/* test_rel_pub.c - reliable publisher: ring wrap and retention, back-pressure, NAK linger and
 * repair choice, repair budget, heartbeats, flow control modes, timeouts, evictions, caps,
 * counters. One file over 700 lines: every test drives the same engine fixture. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <string.h>

#include "rel_pub_test_util.h"
#include "rdps_seq.h"

#define MS 1000000ull
#define US 1000ull

/* Appends and posts one single-frame message; returns its sequence. */
static uint32_t send_one(struct rp *f, uint64_t id)
{
    uint32_t seq = f->p.adm.ring.head_seq;
    assert_int_equal(rp_append(f, RP_PAYLOAD, id), 1);
    struct rdps_rel_pub_action a[4];
    int n = rp_drain(f, a, 4, 1);
    assert_true(n >= 1);
    assert_int_equal(a[0].kind, RDPS_REL_PUB_POST_DATA);
    assert_int_equal(a[0].seq, seq);
    return seq;
}

static void test_ring_wrap_and_retention(void **state)
{
    (void)state;
    struct rp f;
    rp_config(&f, 8 * RP_DGRAM); /* holds 8 full frames */
    assert_int_equal(rp_start(&f), 0);
    uint32_t first = f.cfg.first_seq;
    for (uint64_t i = 0; i < 100; i++) {
        uint32_t seq = send_one(&f, i);
        assert_int_equal(seq, first + (uint32_t)i);
        assert_true(rdps__pub_ring_used(&f.p.adm.ring) <= f.p.adm.ring.cap);
        assert_true(rdps__rel_pub_retained(&f.p) <= 8);
        assert_int_equal(rdps__rel_pub_oldest_seq(&f.p) + rdps__rel_pub_retained(&f.p),
                         rdps__rel_pub_next_seq(&f.p));
    }
    /* Wrapped past 2^32 and around the memory 12 times: the last 8 frames are all retained. */
    assert_int_equal(rdps__rel_pub_retained(&f.p), 8);
    for (uint32_t s = first + 92; s != first + 100; s++) {
        const struct rdps_pub_ring_slot *slot = rdps__pub_ring_find(&f.p.adm.ring, s);
        assert_non_null(slot);
        struct rdps_frame_view v;
        assert_int_equal(
            rdps__frame_decode(rdps__pub_ring_frame(&f.p.adm.ring, slot), slot->len, NULL, &v), 0);
        assert_int_equal(v.hdr.seq, s);
        assert_true(pattern_check(v.payload, v.payload_len, RP_SESSION, s - first));
    }
    assert_null(rdps__pub_ring_find(&f.p.adm.ring, first + 91));
    assert_int_equal(f.p.counters.msgs_appended, 100);
    assert_int_equal(f.p.counters.data_posted, 100);

    /* Mixed sizes: a 3-frame message never straddles the end of the memory. */
    for (uint64_t i = 0; i < 50; i++) {
        int rc = rp_append(&f, i % 3 == 0 ? 3 * RP_PAYLOAD - 5 : 40, 1000 + i);
        assert_true(rc == 1 || rc == 3);
        assert_true(rp_drain(&f, NULL, 8, 1) >= rc);
        for (uint32_t s = f.p.adm.ring.trail_seq; s != f.p.adm.ring.head_seq; s++) {
            const struct rdps_pub_ring_slot *slot = rdps__pub_ring_find(&f.p.adm.ring, s);
            assert_true(slot->pos % f.p.adm.ring.cap + slot->len <= f.p.adm.ring.cap);
        }
        assert_true(rdps__pub_ring_used(&f.p.adm.ring) <= f.p.adm.ring.cap);
    }
    /* A message larger than the ring can never go. */
    assert_int_equal(rp_append(&f, 9 * RP_PAYLOAD, 1), RDPS_EMSGSIZE);
    rp_stop(&f);
}

static void test_slot_limit(void **state)
{
    (void)state;
    struct rp f;
    rp_config(&f, 64 * 1024);
    f.cfg.ring_frames = 4; /* slots bound retention even with bytes to spare */
    assert_int_equal(rp_start(&f), 0);
    for (uint64_t i = 0; i < 10; i++) {
        assert_int_equal(rp_append(&f, 10, i), 1);
        assert_int_equal(rp_drain(&f, NULL, 4, 1), 1);
    }
    assert_int_equal(rdps__rel_pub_retained(&f.p), 4);
    assert_int_equal(rp_append(&f, 5 * RP_PAYLOAD, 1), RDPS_EMSGSIZE);
    rp_stop(&f);
}

/* A reliable message is bounded by the ring, not by a receiver's window (a longer one streams
 * through it): one of 3000 datagrams goes; one more than the ring holds is refused. */
static void test_message_limit_is_the_ring(void **state)
{
    (void)state;
    struct rp f;
    rp_config(&f, 4u << 20);
    f.cfg.max_msg_len = 16u << 20;
    assert_int_equal(rp_start(&f), 0);
    uint32_t frames = (uint32_t)(f.p.adm.ring.cap / rdps__pub_ring_stride(RP_DGRAM));
    if (frames > f.p.adm.ring.slot_mask + 1u)
        frames = f.p.adm.ring.slot_mask + 1u;
    uint32_t limit = frames * RP_PAYLOAD;
    assert_true(frames > RDPS_REASM_WINDOW);
    assert_int_equal(rdps__rel_pub_max_msg_len(&f.p), limit);
    uint32_t head = f.p.adm.ring.head_seq;
    assert_int_equal(rp_append(&f, (size_t)limit + 1, 1), RDPS_EMSGSIZE);
    assert_int_equal(f.p.adm.ring.head_seq, head); /* nothing written */
    assert_int_equal(f.p.counters.msgs_appended, 0);
    assert_int_equal(rp_append(&f, 3000 * RP_PAYLOAD, 2), 3000);
    rp_stop(&f);

    /* A smaller configured limit stays the limit. */
    rp_config(&f, 64 * 1024);
    f.cfg.max_msg_len = 100;
    assert_int_equal(rp_start(&f), 0);
    assert_int_equal(rdps__rel_pub_max_msg_len(&f.p), 100);
    assert_int_equal(rp_append(&f, 101, 1), RDPS_EMSGSIZE);
    assert_int_equal(rp_append(&f, 100, 1), 1);
    rp_stop(&f);
}

/* Append refuses before writing a byte: window, ring (in-flight frames), missing receivers. */
static void test_backpressure_before_write(void **state)
{
    (void)state;
    struct rp f;
    rp_config(&f, 16 * RP_DGRAM);
    f.cfg.flow = RDPS_REL_FLOW_MIN;
    assert_int_equal(rp_start(&f), 0);
    uint32_t first = f.cfg.first_seq;
    rp_join(&f, 1, first, 4);
    for (uint64_t i = 0; i < 2; i++)
        assert_int_equal(rp_append(&f, 100, i), 1);
    uint8_t *snap = malloc(f.cfg.ring_bytes);
    memcpy(snap, f.mem, f.cfg.ring_bytes);
    uint32_t head = f.p.adm.ring.head_seq;
    /* 3 frames do not fit in the 2 credits left: nothing of the message is written. */
    assert_int_equal(rp_append(&f, 3 * RP_PAYLOAD, 9), RDPS_EAGAIN);
    assert_int_equal(f.p.adm.ring.head_seq, head);
    assert_memory_equal(snap, f.mem, f.cfg.ring_bytes);
    assert_int_equal(f.p.counters.backpressure_window, 1);
    assert_int_equal(rp_append(&f, 2 * RP_PAYLOAD, 9), 2); /* exactly the window */
    assert_int_equal(rp_append(&f, 0, 10), RDPS_EAGAIN);
    assert_int_equal(rp_drain(&f, NULL, 64, 1), 4);
    rp_status(&f, 1, first + 4, 4);
    assert_int_equal(rp_append(&f, 0, 10), 1);

    /* Ring: nothing completes, so the trail cannot pass frames in flight. */
    rp_status(&f, 1, first + 5, 1000);
    assert_int_equal(rp_drain(&f, NULL, 64, 0), 1);
    int rc;
    uint64_t id = 100;
    while ((rc = rp_append(&f, RP_PAYLOAD, id++)) == 1) {
        assert_int_equal(rp_drain(&f, NULL, 1, 0), 1);
        rp_status(&f, 1, f.p.adm.post_seq, 1000);
    }
    assert_int_equal(rc, RDPS_EAGAIN);
    assert_true(f.p.counters.backpressure_ring >= 1);
    uint32_t inflight_min;
    assert_true(rdps__pub_ring_inflight_min(&f.p.adm.ring, &inflight_min));
    assert_int_equal(inflight_min, first + 4);
    assert_int_equal(f.p.adm.ring.trail_seq, first + 4);
    memcpy(snap, f.mem, f.cfg.ring_bytes);
    assert_int_equal(rp_append(&f, RP_PAYLOAD, id), RDPS_EAGAIN);
    assert_memory_equal(snap, f.mem, f.cfg.ring_bytes);
    /* Completions free the ring. */
    rdps__rel_pub_send_done(&f.p, 1000);
    assert_int_equal(rp_append(&f, RP_PAYLOAD, id), 1);
    free(snap);
    rp_stop(&f);
}

/* The trail never passes the flow-control position: min's slowest, max's fastest receiver. */
static void test_ring_protects_flow_position(void **state)
{
    (void)state;
    for (int mode = 0; mode < 2; mode++) {
        struct rp f;
        rp_config(&f, 8 * RP_DGRAM);
        f.cfg.flow = mode ? RDPS_REL_FLOW_MIN : RDPS_REL_FLOW_MAX;
        assert_int_equal(rp_start(&f), 0);
        uint32_t first = f.cfg.first_seq;
        rp_join(&f, 1, first, 1000);
        rp_join(&f, 2, first, 1000);
        for (uint64_t i = 0; i < 8; i++)
            send_one(&f, i);
        rp_status(&f, 1, first + 3, 1000); /* receiver 2 stays at first */
        for (uint64_t i = 8; i < 11; i++)
            assert_int_equal(rp_append(&f, RP_PAYLOAD, i), mode ? RDPS_EAGAIN : 1);
        assert_int_equal(f.p.counters.backpressure_ring, mode ? 3 : 0);
        /* max: receiver 1 is protected (consumed first + 3), so the fourth cannot go. */
        if (!mode) {
            assert_int_equal(rp_append(&f, RP_PAYLOAD, 11), RDPS_EAGAIN);
            assert_int_equal(f.p.counters.backpressure_ring, 1);
            assert_int_equal(rdps__rel_pub_oldest_seq(&f.p), first + 3);
            assert_int_equal(rp_state(&f, 2), RDPS_REL_RX_EVICTED);
        } else {
            assert_int_equal(rdps__rel_pub_oldest_seq(&f.p), first);
        }
        rp_stop(&f);
    }
}

static void test_nak_linger_and_dedupe(void **state)
{
    (void)state;
    struct rp f;
    rp_config(&f, 64 * RP_DGRAM);
    assert_int_equal(rp_start(&f), 0);
    uint32_t first = f.cfg.first_seq;
    for (uint64_t i = 0; i < 20; i++)
        send_one(&f, i);
    struct rdps_rel_pub_action a[32];
    rp_nak1(&f, 1, first + 3, 4);
    int n = rp_drain(&f, a, 32, 1);
    assert_int_equal(n, 4);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(a[i].kind, RDPS_REL_PUB_POST_REPAIR);
        assert_true(a[i].unicast);
        assert_int_equal(test_source_number(&a[i].dest), 1);
        assert_int_equal(a[i].seq, first + 3 + (uint32_t)i);
    }
    /* Same receiver again within the linger: suppressed. */
    f.now += f.cfg.repair_linger_ns / 2;
    rp_nak1(&f, 1, first + 3, 4);
    assert_int_equal(rp_drain(&f, a, 32, 1), 0);
    assert_int_equal(f.p.counters.nak_ranges_suppressed, 1);
    assert_int_equal(f.p.counters.nak_seqs_suppressed, 4);
    /* Overlapping range: only the new part is repaired. */
    rp_nak1(&f, 1, first + 5, 4);
    n = rp_drain(&f, a, 32, 1);
    assert_int_equal(n, 2);
    assert_int_equal(a[0].seq, first + 7);
    assert_int_equal(a[1].seq, first + 8);
    /* After the linger (counted from the repair's departure) it is answered again. */
    f.now += f.cfg.repair_linger_ns;
    rp_nak1(&f, 1, first + 3, 1);
    n = rp_drain(&f, a, 32, 1);
    assert_int_equal(n, 1);
    assert_int_equal(a[0].seq, first + 3);
    assert_int_equal(f.p.counters.nak_ranges_answered, 3);
    assert_int_equal(f.p.counters.repairs_unicast, 7);
    assert_int_equal(f.p.counters.repair_bytes, 7 * RP_DGRAM);
    /* Ranges beyond what was posted are ignored. */
    rp_nak1(&f, 1, first + 30, 3);
    assert_int_equal(rp_drain(&f, a, 32, 1), 0);
    assert_int_equal(f.p.counters.nak_future, 1);
    rp_stop(&f);
}

/* A NAK flagged RETRANSMIT says a repair its receiver asked for later arrived first, so this
 * sequence's repair was lost: answered inside the linger once that repair has left, never while
 * it still waits to leave. */
static void test_overtaken_nak_answered_in_linger(void **state)
{
    (void)state;
    struct rp f;
    rp_config(&f, 64 * RP_DGRAM);
    assert_int_equal(rp_start(&f), 0);
    uint32_t first = f.cfg.first_seq;
    for (uint64_t i = 0; i < 20; i++)
        send_one(&f, i);
    struct rdps_rel_pub_action a[32];
    struct rdps_seq_range r = {first + 3, 1};
    rp_nak1(&f, 1, first + 3, 1);
    rp_nak_flags(&f, 1, 7, &r, 1, RDPS_FRAME_F_RETRANSMIT); /* the repair has not left yet */
    assert_int_equal(rp_drain(&f, a, 32, 1), 1);
    assert_int_equal(a[0].seq, first + 3);
    f.now += f.cfg.repair_linger_ns / 2;
    rp_nak1(&f, 1, first + 3, 1); /* a plain retry inside the linger may cross the repair */
    assert_int_equal(rp_drain(&f, a, 32, 1), 0);
    rp_nak_flags(&f, 1, 7, &r, 1, RDPS_FRAME_F_RETRANSMIT);
    assert_int_equal(rp_drain(&f, a, 32, 1), 1);
    assert_int_equal(a[0].seq, first + 3);
    assert_true(a[0].unicast);
    assert_int_equal(f.p.counters.naks_overtaken, 2);
    assert_int_equal(f.p.counters.repairs_unicast, 2);
    assert_int_equal(f.p.counters.nak_seqs_suppressed, 2);
    rp_stop(&f);
}

/* A lone receiver's linger is 1.25 of its RTTs (at least 25 us). With several, a repair lingers
 * the whole 2 ms, but its asker's own retry is answered after 1.25 of the asker's RTTs. */
static void test_linger_scales_with_rtt_when_alone(void **state)
{
    (void)state;
    struct rp f;
    rp_config(&f, 64 * RP_DGRAM);
    assert_int_equal(rp_start(&f), 0);
    uint32_t first = f.cfg.first_seq;
    for (uint64_t i = 0; i < 10; i++)
        send_one(&f, i);
    struct rdps_rel_pub_action a[8];
    /* An 80 us round trip measured from a heartbeat echo: linger 100 us. */
    rp_announce(&f, 1);
    uint64_t hb = rp_beat(&f);
    f.now += 80 * US;
    rp_status_echo(&f, 1, first, 100, hb, 0);
    assert_int_equal(f.p.counters.rtt_samples, 1);
    rp_nak1(&f, 1, first + 2, 1);
    assert_int_equal(rp_drain(&f, a, 8, 1), 1);
    f.now += 90 * US;
    rp_nak1(&f, 1, first + 2, 1);
    assert_int_equal(rp_drain(&f, a, 8, 1), 0); /* within 1.25 RTTs: suppressed */
    f.now += 20 * US;
    rp_nak1(&f, 1, first + 2, 1);
    assert_int_equal(rp_drain(&f, a, 8, 1), 1); /* its repair was lost: answered again */
    /* A second receiver, its RTT not measured: NAKs of others come spread over their backoff,
     * the full linger holds for them. */
    rp_join(&f, 2, first, 100);
    rp_nak1(&f, 1, first + 4, 1);
    assert_int_equal(rp_drain(&f, a, 8, 1), 1);
    assert_true(a[0].unicast);
    f.now += 90 * US;
    rp_nak1(&f, 1, first + 4, 1);
    assert_int_equal(rp_drain(&f, a, 8, 1), 0); /* its own retry, within 1.25 of its RTTs */
    rp_nak1(&f, 2, first + 4, 1);
    assert_int_equal(rp_drain(&f, a, 8, 1), 1); /* another one asks: multicast */
    assert_false(a[0].unicast);
    f.now += 1 * MS;
    rp_nak1(&f, 2, first + 4, 1);
    assert_int_equal(rp_drain(&f, a, 8, 1), 0); /* no RTT of its own: the whole linger */
    rp_nak1(&f, 1, first + 4, 1);
    assert_int_equal(rp_drain(&f, a, 8, 1), 1); /* past two of its RTTs: the repair was lost */
    rp_stop(&f);
}

static void test_unicast_vs_multicast(void **state)
{
    (void)state;
    struct rp f;
    rp_config(&f, 64 * RP_DGRAM);
    assert_int_equal(rp_start(&f), 0);
    uint32_t first = f.cfg.first_seq;
    for (uint64_t i = 0; i < 10; i++)
        send_one(&f, i);
    for (uint64_t rx = 1; rx <= 3; rx++)
        rp_announce(&f, rx); /* multicast needs askers discovery announced ... */
    struct rdps_rel_pub_action a[32];
    /* ... and receiving (ACTIVE): two that only NAK get unicast repairs, each its own. */
    rp_nak1(&f, 1, first + 6, 1);
    rp_nak1(&f, 2, first + 6, 1);
    assert_int_equal(rp_drain(&f, a, 32, 1), 2);
    assert_true(a[0].unicast && a[1].unicast);
    for (uint64_t rx = 1; rx <= 3; rx++)
        rp_status(&f, rx, first, 64);
    rp_nak1(&f, 1, first + 2, 2);
    assert_int_equal(rp_drain(&f, a, 32, 1), 2);
    assert_true(a[0].unicast && a[1].unicast);
    /* A second receiver asks within the linger: one multicast repair serves everyone. */
    rp_nak1(&f, 2, first + 2, 3);
    int n = rp_drain(&f, a, 32, 1);
    assert_int_equal(n, 3);
    assert_false(a[0].unicast);
    assert_false(a[1].unicast);
    assert_true(a[2].unicast); /* first + 4: only receiver 2 asked */
    assert_int_equal(test_source_number(&a[2].dest), 2);
    /* After a multicast repair, every receiver's NAK within the linger is suppressed. */
    rp_nak1(&f, 3, first + 2, 2);
    rp_nak1(&f, 1, first + 3, 1);
    assert_int_equal(rp_drain(&f, a, 32, 1), 0);
    assert_int_equal(f.p.counters.repairs_multicast, 2);
    assert_int_equal(f.p.counters.repairs_unicast, 2 + 3);
    rp_stop(&f);
}

/* Repairs among the first n actions. */
static int repairs_in(const struct rdps_rel_pub_action *a, int n)
{
    int r = 0;
    for (int i = 0; i < n; i++)
        r += a[i].kind == RDPS_REL_PUB_POST_REPAIR;
    return r;
}

/* Repairs spend a budget (new data is not starved) and get a share (they are not starved). */
static void test_repair_budget_vs_new_data(void **state)
{
    (void)state;
    struct rp f;
    rp_config(&f, 256 * RP_DGRAM);
    f.cfg.repair_budget_bytes = 4 * RP_DGRAM;
    f.cfg.repair_interval_ns = 1 * MS;
    f.cfg.data_per_repair = 3;
    assert_int_equal(rp_start(&f), 0);
    uint32_t first = f.cfg.first_seq;
    for (uint64_t i = 0; i < 40; i++)
        send_one(&f, i);
    rp_announce(&f, 1);
    rp_nak1(&f, 1, first, 40); /* 40 repairs wanted */
    for (uint64_t i = 0; i < 40; i++)
        assert_int_equal(rp_append(&f, RP_PAYLOAD, 100 + i), 1);
    struct rdps_rel_pub_action a[128];
    int n = rp_drain(&f, a, 128, 1);
    int data = 0, repairs = 0, run = 0;
    for (int i = 0; i < n; i++) {
        if (a[i].kind == RDPS_REL_PUB_POST_REPAIR) {
            repairs++;
            run = 0;
        } else if (a[i].kind == RDPS_REL_PUB_POST_DATA) {
            data++;
            if (repairs < 4)
                assert_true(++run <= 3); /* repairs got their share while budget lasted */
        }
    }
    /* This interval: the budget's 4 repairs, and all new data flowed past the rest. */
    assert_int_equal(repairs, 4);
    assert_int_equal(data, 40);
    assert_int_equal(a[0].kind, RDPS_REL_PUB_POST_REPAIR); /* queued repair goes first */
    /* The next deadline is the refill; then repairs continue at the budget's pace. */
    uint64_t next = rdps__rel_pub_tick(&f.p, f.now);
    assert_true(next > f.now && next <= f.now + 1 * MS);
    int total = repairs;
    for (int k = 0; k < 20 && total < 40; k++) {
        f.now += 1 * MS;
        n = rp_drain(&f, a, 128, 1);
        int r = repairs_in(a, n);
        assert_true(r <= 4);
        total += r;
    }
    assert_int_equal(total, 40);
    rp_stop(&f);
}

/* A rate limit sends new data evenly (bursts of 2 ms), sends no heartbeats while data waits for
 * it, and holds repairs to it too (ahead of new data). */
static void test_rate_limit_paces_data(void **state)
{
    (void)state;
    struct rp f;
    rp_config(&f, 256 * RP_DGRAM);
    f.cfg.rate_bytes_per_s = 1000ull * RP_DGRAM; /* one datagram per millisecond */
    assert_int_equal(rp_start(&f), 0);
    uint32_t first = f.cfg.first_seq;
    for (uint64_t i = 0; i < 20; i++)
        assert_int_equal(rp_append(&f, RP_PAYLOAD, i), 1);
    struct rdps_rel_pub_action a[32];
    /* A burst of 2 ms beyond the first datagram, then one datagram per millisecond. */
    assert_int_equal(rp_drain(&f, a, 32, 1), 3);
    assert_int_equal(rdps__rel_pub_tick(&f.p, f.now), f.now + 1 * MS);
    uint64_t hb = f.p.counters.heartbeats;
    int posted = 3;
    for (int ms = 1; ms <= 5; ms++) {
        f.now += 1 * MS - 1;
        assert_int_equal(rp_drain(&f, a, 32, 1), 0);
        f.now += 1;
        assert_int_equal(rp_drain(&f, a, 32, 1), 1);
        assert_int_equal(a[0].kind, RDPS_REL_PUB_POST_DATA);
        assert_int_equal(a[0].seq, first + (uint32_t)posted);
        posted++;
    }
    assert_int_equal(f.p.counters.heartbeats, hb); /* data waits: nothing to tell receivers */
    assert_int_equal(f.p.counters.rate_waits, 6);  /* after the burst, before each datagram */
    /* Repairs wait for the limit's allowance too, so they never put the publisher into debt
     * beyond one burst; they go ahead of waiting new data, which then takes at most
     * data_per_repair datagrams between two repairs. */
    rp_nak1(&f, 1, first, 2);
    assert_int_equal(rp_drain(&f, a, 32, 1), 0);
    assert_int_equal(rdps__rel_pub_tick(&f.p, f.now), f.now + 1 * MS);
    f.now += 1 * MS;
    assert_int_equal(rp_drain(&f, a, 32, 1), 1);
    assert_int_equal(a[0].kind, RDPS_REL_PUB_POST_REPAIR);
    for (uint32_t k = 0; k < f.cfg.data_per_repair; k++) {
        assert_int_equal(rdps__rel_pub_tick(&f.p, f.now), f.now + 1 * MS);
        f.now += 1 * MS;
        assert_int_equal(rp_drain(&f, a, 32, 1), 1);
        assert_int_equal(a[0].kind, RDPS_REL_PUB_POST_DATA);
        posted++;
    }
    f.now += 1 * MS;
    assert_int_equal(rp_drain(&f, a, 32, 1), 1);
    assert_int_equal(a[0].kind, RDPS_REL_PUB_POST_REPAIR);
    assert_true(f.p.adm.rate_paid_ns <= f.now + RDPS_REL_RATE_BURST_NS + 1 * MS);
    /* Idle time is saved up to the burst only: after 50 ms, 3 datagrams at once again. */
    f.now += 50 * MS;
    assert_int_equal(rp_drain(&f, a, 32, 1), 3);
    posted += 3;
    /* Everything appended goes, at the rate. */
    while (posted < 20) {
        f.now = rdps__rel_pub_tick(&f.p, f.now);
        posted += rp_drain(&f, a, 32, 1);
    }
    assert_int_equal(posted, 20);
    assert_int_equal(f.p.counters.data_posted, 20);
    rp_stop(&f);
    /* Below one datagram per second, or above 100 GB/s: refused. */
    rp_config(&f, 256 * RP_DGRAM);
    f.cfg.rate_bytes_per_s = RP_DGRAM - 1;
    assert_int_equal(rp_start(&f), RDPS_EINVAL);
    free(f.mem);
    rp_config(&f, 256 * RP_DGRAM);
    f.cfg.rate_bytes_per_s = RDPS_REL_RATE_MAX + 1;
    assert_int_equal(rp_start(&f), RDPS_EINVAL);
    free(f.mem);
}

static void test_heartbeat_backoff_and_reset(void **state)
{
    (void)state;
    struct rp f;
    rp_config(&f, 16 * RP_DGRAM);
    f.keep_hb = true;
    assert_int_equal(rp_start(&f), 0);
    struct rdps_rel_pub_action a[4];
    /* The first heartbeat goes at once. */
    assert_int_equal(rp_drain(&f, a, 4, 1), 1);
    assert_int_equal(a[0].kind, RDPS_REL_PUB_POST_HEARTBEAT);
    assert_false(a[0].unicast);
    assert_int_equal(rp_hb_seq(&a[0]), f.cfg.first_seq);
    assert_int_equal(rp_hb_retained(&a[0]), 0);
    send_one(&f, 1);
    send_one(&f, 2);
    /* Idle: heartbeats at +100 us, then gaps doubling to the 100 ms cap. */
    uint64_t t0 = f.now, expect = 100 * US, at = t0 + 100 * US;
    for (int i = 0; i < 14; i++) {
        uint64_t next = rdps__rel_pub_tick(&f.p, f.now);
        assert_int_equal(next - t0, at - t0);
        f.now = next - 1;
        assert_int_equal(rp_drain(&f, a, 4, 1), 0);
        f.now = next;
        assert_int_equal(rp_drain(&f, a, 4, 1), 1);
        assert_int_equal(rp_hb_seq(&a[0]), f.cfg.first_seq + 2);
        assert_int_equal(rp_hb_retained(&a[0]), 2);
        expect = expect * 2 > 100 * MS ? 100 * MS : expect * 2;
        at = f.now + expect;
    }
    assert_int_equal(f.p.hb.interval, 100 * MS);
    assert_int_equal(f.p.counters.heartbeats, 15);
    /* New data resets the backoff. */
    send_one(&f, 3);
    assert_int_equal(rdps__rel_pub_tick(&f.p, f.now), f.now + 100 * US);
    /* A 10 ms round trip of a receiver in flow control: no heartbeat sooner than half of it
     * after data. */
    rp_announce(&f, 1);
    uint64_t hb = rp_beat(&f);
    f.now += 10 * MS;
    rp_status_echo(&f, 1, f.cfg.first_seq, 10, hb, 0);
    assert_int_equal(f.p.counters.rtt_samples, 1);
    send_one(&f, 4);
    assert_int_equal(rdps__rel_pub_tick(&f.p, f.now), f.now + 5 * MS);
    rp_stop(&f);
}

static void test_flow_max(void **state)
{
    (void)state;
    struct rp f;
    rp_config(&f, 256 * RP_DGRAM);
    assert_int_equal(rp_start(&f), 0);
    uint32_t first = f.cfg.first_seq;
    rp_join(&f, 1, first, 10);
    rp_join(&f, 2, first, 20);
    int sent = 0;
    while (rp_append(&f, 10, (uint64_t)sent) == 1)
        sent++;
    assert_int_equal(sent, 20); /* the fastest receiver's window */
    assert_int_equal(f.p.counters.backpressure_window, 1);
    rp_stop(&f);
}

static void test_flow_min(void **state)
{
    (void)state;
    struct rp f;
    rp_config(&f, 256 * RP_DGRAM);
    f.cfg.flow = RDPS_REL_FLOW_MIN;
    assert_int_equal(rp_start(&f), 0);
    uint32_t first = f.cfg.first_seq;
    rp_join(&f, 1, first, 10);
    rp_join(&f, 2, first, 20);
    int sent = 0;
    while (rp_append(&f, 10, (uint64_t)sent) == 1)
        sent++;
    assert_int_equal(sent, 10);
    rp_drain(&f, NULL, 64, 1);
    /* A stale STATUS (older position) is ignored; a newer one opens the window. */
    rp_status(&f, 1, first + 5, 10);
    rp_status(&f, 1, first + 2, 100);
    assert_int_equal(f.p.counters.status_stale, 1);
    while (rp_append(&f, 10, (uint64_t)sent) == 1)
        sent++;
    assert_int_equal(sent, 15);
    /* Positions beyond what was posted are bogus. */
    rp_status(&f, 1, first + 1000, 10);
    assert_int_equal(f.p.counters.status_bogus, 1);
    rp_stop(&f);
}

/* Held by receiver 1's window, and no STATUS comes (lost): after two of its round trips (at least
 * heartbeat_min_ns) a unicast heartbeat asks it for one, then at doubling gaps up to the blocked
 * multicast heartbeats' 8 hb_min; its STATUS opening the window ends them. Receiver 2, not the
 * limit, is never asked. */
static void test_window_wait_pokes_the_limiting_receiver(void **state)
{
    (void)state;
    struct rp f;
    rp_config(&f, 256 * RP_DGRAM);
    f.cfg.flow = RDPS_REL_FLOW_MIN;
    assert_int_equal(rp_start(&f), 0);
    f.keep_hb = true;
    uint32_t first = f.cfg.first_seq;
    rp_join(&f, 1, first, 10);
    rp_join(&f, 2, first, 20);
    int sent = 0;
    while (rp_append(&f, 10, (uint64_t)sent) == 1)
        sent++;
    assert_int_equal(sent, 10);
    struct rdps_rel_pub_action a[64];
    int n = rp_drain(&f, a, 64, 1);
    for (int i = 0; i < n; i++)
        assert_false(a[i].kind == RDPS_REL_PUB_POST_HEARTBEAT && a[i].unicast);
    uint64_t gap = f.cfg.heartbeat_min_ns; /* no RTT sample: the floor */
    uint64_t deadline = rdps__rel_pub_tick(&f.p, f.now);
    assert_true(deadline <= f.now + gap);
    uint64_t pokes[4];
    for (int k = 0; k < 4; k++) {
        f.now += gap;
        n = rp_drain(&f, a, 64, 1);
        int unicast = 0;
        for (int i = 0; i < n; i++) {
            if (a[i].kind != RDPS_REL_PUB_POST_HEARTBEAT || !a[i].unicast)
                continue;
            unicast++;
            assert_int_equal(test_source_number(&a[i].dest), 1);
            assert_int_equal(rp_hb_seq(&a[i]), first + 10);
        }
        assert_int_equal(unicast, 1);
        pokes[k] = f.p.counters.heartbeats_poked;
        gap *= 2;
        if (gap > 8 * f.cfg.heartbeat_min_ns)
            gap = 8 * f.cfg.heartbeat_min_ns;
        /* Not before the doubled gap. */
        f.now += gap / 2;
        n = rp_drain(&f, a, 64, 1);
        for (int i = 0; i < n; i++)
            assert_false(a[i].kind == RDPS_REL_PUB_POST_HEARTBEAT && a[i].unicast);
        f.now -= gap / 2;
    }
    assert_int_equal(pokes[3], 4);
    /* The STATUS opens the window: appends go, and no poke follows. */
    rp_status(&f, 1, first + 10, 10);
    while (rp_append(&f, 10, (uint64_t)sent) == 1)
        sent++;
    assert_int_equal(sent, 20); /* now receiver 2's window holds it */
    f.now += 100 * f.cfg.heartbeat_min_ns;
    rp_drain(&f, a, 64, 1);
    assert_int_equal(f.p.counters.heartbeats_poked, 4 + 1); /* held again: one poke */
    rp_stop(&f);
}

static void test_flow_tagged(void **state)
{
    (void)state;
    struct rp f;
    rp_config(&f, 256 * RP_DGRAM);
    f.cfg.flow = RDPS_REL_FLOW_TAGGED;
    f.cfg.flow_tag = 42;
    f.cfg.flow_min_receivers = 2;
    assert_int_equal(rp_start(&f), 0);
    uint32_t first = f.cfg.first_seq;
    struct rdps_source s1 = test_source(1), s2 = test_source(2), s3 = test_source(3);
    rp_status(&f, 3, first, 2); /* untagged: does not count and does not limit */
    assert_int_equal(rp_append(&f, 10, 0), RDPS_EAGAIN);
    assert_int_equal(f.p.counters.backpressure_receivers, 1);
    assert_int_equal(rdps__rel_pub_receiver_tag(&f.p, &s1, 7, 42, f.now), 0);
    rp_status(&f, 1, first, 8);
    assert_int_equal(rp_append(&f, 10, 0), RDPS_EAGAIN); /* one tagged receiver of two */
    assert_int_equal(rdps__rel_pub_receiver_tag(&f.p, &s2, 7, 42, f.now), 0);
    rp_status(&f, 2, first, 5);
    int sent = 0;
    while (rp_append(&f, 10, (uint64_t)sent) == 1)
        sent++;
    assert_int_equal(sent, 5); /* min over the tagged ones, not the untagged window of 2 */
    /* Untagging one drops the group below its minimum. */
    assert_int_equal(rdps__rel_pub_receiver_tag(&f.p, &s2, 7, 0, f.now), 0);
    assert_int_equal(rp_append(&f, 10, 99), RDPS_EAGAIN);
    assert_int_equal(f.p.counters.backpressure_receivers, 3);
    (void)s3;
    rp_stop(&f);
}

/* Draining counts a late joiner catching up from the trail (announced, reporting, not yet in min
 * flow control): a publisher that left when the others were done would cut it off. An
 * unannounced reporter does not hold the drain. */
static void test_receivers_behind_counts_catching_up(void **state)
{
    (void)state;
    struct rp f;
    rp_config(&f, 256 * RP_DGRAM);
    f.cfg.flow = RDPS_REL_FLOW_MIN;
    assert_int_equal(rp_start(&f), 0);
    uint32_t first = f.cfg.first_seq;
    rp_join(&f, 1, first, 100);
    for (uint64_t m = 0; m < 50; m++)
        assert_int_equal(rp_append(&f, 10, m), 1);
    assert_true(rp_drain(&f, NULL, 1000, 1) >= 50);
    rp_status(&f, 1, first + 50, 100);
    assert_int_equal(rdps__rel_pub_receivers_behind(&f.p), 0);
    rp_join(&f, 2, first, 16); /* from the trail, 50 behind: more than its window */
    assert_int_equal(rp_state(&f, 2), RDPS_REL_RX_KNOWN);
    assert_int_equal(rdps__rel_pub_receivers_behind(&f.p), 1);
    rp_status(&f, 3, first, 16); /* unannounced */
    assert_int_equal(rdps__rel_pub_receivers_behind(&f.p), 1);
    rp_status(&f, 2, first + 50, 16); /* caught up: in flow control, nothing behind */
    assert_int_equal(rp_state(&f, 2), RDPS_REL_RX_ACTIVE);
    assert_int_equal(rdps__rel_pub_receivers_behind(&f.p), 0);
    rp_stop(&f);
}

/* A busy publisher: one ACTIVE receiver (max: a second one holds nothing), its first heartbeat
 * gone, 8 messages waiting to be posted. */
static void rp_busy_with_waiting_data(struct rp *f)
{
    rp_config(f, 256 * RP_DGRAM);
    assert_int_equal(rp_start(f), 0);
    f->keep_hb = true;
    rp_join(f, 1, f->cfg.first_seq, 64);
    rp_drain(f, NULL, 8, 1);
    for (uint64_t i = 0; i < 8; i++)
        assert_int_equal(rp_append(f, 10, i), 1);
}

/* The next two actions: a heartbeat, then the waiting datagram `seq` (nothing posted before). */
static void expect_heartbeat_then_data(struct rp *f, uint32_t seq)
{
    struct rdps_rel_pub_action a[2];
    assert_true(rdps__rel_pub_tick(&f->p, f->now) <= f->now);
    assert_int_equal(rp_drain(f, a, 2, 1), 2);
    assert_int_equal(a[0].kind, RDPS_REL_PUB_POST_HEARTBEAT);
    assert_int_equal(a[0].seq, seq);
    assert_int_equal(a[1].kind, RDPS_REL_PUB_POST_DATA);
    assert_int_equal(a[1].seq, seq);
}

/* A receiver discovery announces gets a heartbeat ahead of the data waiting to be posted: a busy
 * publisher sends no idle heartbeat, and a from_oldest receiver learns the ring's oldest sequence
 * only from one (before, it waited for a lull, and without one joined at the live position). */
static void test_announced_receiver_heartbeat_ahead_of_data(void **state)
{
    (void)state;
    struct rp f;
    rp_busy_with_waiting_data(&f);
    uint32_t first = f.cfg.first_seq;
    struct rdps_source s2 = test_source(2);
    assert_int_equal(rdps__rel_pub_expect_receiver(&f.p, &s2, 7, 0, f.now), 0);
    expect_heartbeat_then_data(&f, first);
    /* Announced again and still silent (that heartbeat may have come before its multicast join
     * did): another heartbeat ahead of the data waiting then. */
    rp_drain(&f, NULL, 16, 1);
    for (uint64_t i = 8; i < 12; i++)
        assert_int_equal(rp_append(&f, 10, i), 1);
    assert_int_equal(rdps__rel_pub_expect_receiver(&f.p, &s2, 7, 0, f.now), 0);
    expect_heartbeat_then_data(&f, first + 8);
    rp_stop(&f);
}

/* So does a receiver first heard through its STATUS (a from_oldest receiver reports as soon as it
 * sees the stream; its announcement may come late), once: its next STATUS draws none. */
static void test_new_receiver_status_heartbeat_ahead_of_data(void **state)
{
    (void)state;
    struct rp f;
    rp_busy_with_waiting_data(&f);
    uint32_t first = f.cfg.first_seq;
    rp_status(&f, 2, first, 64); /* unannounced, unknown until now */
    expect_heartbeat_then_data(&f, first);
    struct rdps_rel_pub_action a[16];
    int n = rp_drain(&f, a, 16, 1);
    for (int i = 0; i < n; i++)
        assert_int_not_equal(a[i].kind, RDPS_REL_PUB_POST_HEARTBEAT);
    for (uint64_t i = 8; i < 12; i++)
        assert_int_equal(rp_append(&f, 10, i), 1);
    rp_status(&f, 2, first, 64); /* known now: no heartbeat ahead of the new data */
    rp_status(&f, 1, first, 64);
    n = rp_drain(&f, a, 16, 1);
    assert_true(n >= 1);
    assert_int_equal(a[0].kind, RDPS_REL_PUB_POST_DATA);
    rp_stop(&f);
}

/* A receiver discovery announced holds data until its first STATUS (max: only the first one). */
static void test_connecting_receiver_holds_data(void **state)
{
    (void)state;
    struct rp f;
    rp_config(&f, 256 * RP_DGRAM);
    assert_int_equal(rp_start(&f), 0);
    uint32_t first = f.cfg.first_seq;
    struct rdps_source s1 = test_source(1), s2 = test_source(2);
    f.keep_hb = true;
    rp_drain(&f, NULL, 8, 1); /* the first heartbeat */
    f.now += 50000000ull;     /* heartbeats have backed off */
    rp_drain(&f, NULL, 8, 1);
    assert_int_equal(rdps__rel_pub_expect_receiver(&f.p, &s1, 7, 0, f.now), 0);
    assert_int_equal(rp_append(&f, 10, 0), RDPS_EAGAIN);
    assert_int_equal(f.p.counters.backpressure_connecting, 1);
    assert_int_equal(f.p.counters.backpressure_window, 0);
    /* The next heartbeat goes at once, so the receiver learns the session. */
    struct rdps_rel_pub_action a[4];
    assert_int_equal(rp_drain(&f, a, 4, 1), 1);
    assert_int_equal(a[0].kind, RDPS_REL_PUB_POST_HEARTBEAT);
    rp_status(&f, 1, first, 4);
    int sent = 0;
    while (rp_append(&f, 10, (uint64_t)sent) == 1)
        sent++;
    assert_int_equal(sent, 4); /* its window, not an unlimited burst */
    rp_drain(&f, NULL, 64, 1);
    /* Under max a second receiver connecting holds nothing: the first one sets the pace. */
    assert_int_equal(rdps__rel_pub_expect_receiver(&f.p, &s2, 7, 0, f.now), 0);
    rp_status(&f, 1, first + 4, 4);
    assert_int_equal(rp_append(&f, 10, 99), 1);
    assert_int_equal(f.p.counters.backpressure_connecting, 1);
    assert_int_equal(f.p.counters.receivers_expected, 2);
    rp_stop(&f);

    /* Under min, a receiver that never reports holds data for connect_timeout, then not. */
    rp_config(&f, 256 * RP_DGRAM);
    f.cfg.flow = RDPS_REL_FLOW_MIN;
    f.cfg.connect_timeout_ns = 10000000ull;
    assert_int_equal(rp_start(&f), 0);
    first = f.cfg.first_seq;
    rp_join(&f, 1, first, 100);
    assert_int_equal(rp_append(&f, 10, 0), 1);
    assert_int_equal(rdps__rel_pub_expect_receiver(&f.p, &s2, 7, 0, f.now), 0);
    assert_int_equal(rp_append(&f, 10, 1), RDPS_EAGAIN);
    uint64_t deadline = rdps__rel_pub_tick(&f.p, f.now);
    assert_true(deadline <= f.now + f.cfg.connect_timeout_ns);
    f.now += f.cfg.connect_timeout_ns;
    rdps__rel_pub_tick(&f.p, f.now);
    assert_int_equal(f.p.counters.connect_timeouts, 1);
    assert_int_equal(rp_append(&f, 10, 1), 1);
    /* Discovery saying it left removes it; an expired ACTIVE one raises TIMED_OUT. */
    assert_int_equal(rdps__rel_pub_receiver_gone(&f.p, &s2, 7, false), 0);
    assert_int_equal(rdps__rel_pub_receiver_gone(&f.p, &s2, 7, false), RDPS_ENOENT);
    unsigned nev = f.nev;
    assert_int_equal(rdps__rel_pub_receiver_gone(&f.p, &s1, 7, true), 0);
    assert_int_equal(f.nev, nev + 1);
    assert_int_equal(f.ev[nev].kind, RDPS_REL_PUB_EV_TIMED_OUT);
    assert_int_equal(rdps__rel_pub_receiver_count(&f.p), 0);
    assert_int_equal(f.p.counters.receivers_gone, 2);
    rp_stop(&f);
}

static void test_receiver_timeout(void **state)
{
    (void)state;
    struct rp f;
    rp_config(&f, 64 * RP_DGRAM);
    f.cfg.flow = RDPS_REL_FLOW_MIN;
    f.cfg.stall_evict_ns = 0; /* only the timeout here */
    assert_int_equal(rp_start(&f), 0);
    uint32_t first = f.cfg.first_seq;
    rp_join(&f, 1, first, 2);
    rp_join(&f, 2, first, 50);
    uint64_t t0 = f.now;
    assert_int_equal(rp_append(&f, 10, 0), 1);
    assert_int_equal(rp_append(&f, 10, 1), 1);
    assert_int_equal(rp_append(&f, 10, 2), RDPS_EAGAIN);
    f.now += 3000 * MS;
    rp_status(&f, 2, first, 50); /* receiver 2 keeps talking; 1 is silent */
    rp_drain(&f, NULL, 16, 1);
    uint64_t next = rdps__rel_pub_tick(&f.p, f.now);
    assert_true(next <= t0 + 5000 * MS);
    f.now = t0 + 5000 * MS;
    rdps__rel_pub_tick(&f.p, f.now);
    assert_int_equal(f.p.counters.receivers_timed_out, 1);
    assert_int_equal(rp_state(&f, 1), RDPS_REL_RX_FREE);
    assert_int_equal(rp_state(&f, 2), RDPS_REL_RX_ACTIVE);
    assert_int_equal(rdps__rel_pub_receiver_count(&f.p), 1);
    assert_int_equal(f.nev, 1);
    assert_int_equal(f.ev[0].kind, RDPS_REL_PUB_EV_TIMED_OUT);
    assert_int_equal(test_source_number(f.ev[0].source), 1);
    /* Flow control goes on with the live receiver. */
    assert_int_equal(rp_append(&f, 10, 2), 1);
    rp_stop(&f);
}

/* max: the ring wraps over a slow receiver, which is evicted and resumes at the live position. */
static void test_eviction_lagged(void **state)
{
    (void)state;
    struct rp f;
    rp_config(&f, 8 * RP_DGRAM);
    assert_int_equal(rp_start(&f), 0);
    uint32_t first = f.cfg.first_seq;
    rp_join(&f, 1, first, 1000); /* fast */
    rp_join(&f, 2, first, 1000); /* slow: never moves */
    for (uint64_t i = 0; i < 8; i++) {
        send_one(&f, i);
        rp_status(&f, 1, f.p.adm.post_seq, 1000);
    }
    assert_int_equal(f.nev, 0);
    send_one(&f, 8); /* the ring drops `first`: receiver 2 can no longer be repaired */
    assert_int_equal(f.nev, 1);
    assert_int_equal(f.ev[0].kind, RDPS_REL_PUB_EV_EVICTED);
    assert_int_equal(f.ev[0].reason, RDPS_EVICT_LAGGED);
    assert_int_equal(test_source_number(f.ev[0].source), 2);
    assert_int_equal(f.ev[0].consumed_seq, first);
    assert_int_equal(f.ev[0].trail_seq, first + 1);
    assert_int_equal(rp_state(&f, 2), RDPS_REL_RX_EVICTED);
    assert_int_equal(f.p.counters.evictions, 1);
    /* Its old position is still below the trail: no second event. */
    rp_status(&f, 2, first, 1000);
    assert_int_equal(f.nev, 1);
    /* It jumps to the live position: back in flow control. */
    rp_status(&f, 2, f.p.adm.post_seq, 1000);
    assert_int_equal(rp_state(&f, 2), RDPS_REL_RX_ACTIVE);
    assert_int_equal(f.nev, 2);
    assert_int_equal(f.ev[1].kind, RDPS_REL_PUB_EV_RESUMED);
    assert_int_equal(f.p.counters.resumes, 1);
    rp_stop(&f);
}

/* min: a receiver that holds the publisher back for stall_evict_ns is evicted. */
static void test_eviction_stalled_min(void **state)
{
    (void)state;
    struct rp f;
    rp_config(&f, 64 * RP_DGRAM);
    f.cfg.flow = RDPS_REL_FLOW_MIN;
    f.cfg.stall_evict_ns = 100 * MS;
    assert_int_equal(rp_start(&f), 0);
    uint32_t first = f.cfg.first_seq;
    rp_join(&f, 1, first, 4);
    rp_join(&f, 2, first, 4);
    for (int i = 0; i < 4; i++)
        send_one(&f, (uint64_t)i);
    assert_int_equal(rp_append(&f, 10, 4), RDPS_EAGAIN);
    /* Receiver 1 keeps up (and keeps the window moving a bit); receiver 2 is stuck. */
    uint64_t t0 = f.now;
    rp_status(&f, 1, f.p.adm.post_seq, 4);
    uint64_t deadline = rdps__rel_pub_tick(&f.p, f.now);
    assert_true(deadline <= t0 + 100 * MS); /* heartbeats come first */
    f.now += 50 * MS;
    rp_status(&f, 2, first, 4); /* alive but not consuming */
    assert_int_equal(rp_append(&f, 10, 4), RDPS_EAGAIN);
    rdps__rel_pub_tick(&f.p, f.now);
    assert_int_equal(f.nev, 0);
    f.now = t0 + 100 * MS;
    rdps__rel_pub_tick(&f.p, f.now);
    assert_int_equal(f.nev, 1);
    assert_int_equal(f.ev[0].kind, RDPS_REL_PUB_EV_EVICTED);
    assert_int_equal(f.ev[0].reason, RDPS_EVICT_STALLED);
    assert_int_equal(test_source_number(f.ev[0].source), 2);
    assert_int_equal(rp_state(&f, 1), RDPS_REL_RX_ACTIVE);
    /* Throughput recovers. */
    assert_int_equal(rp_append(&f, 10, 4), 1);
    rp_stop(&f);
}

static void test_unrecoverable_answered_with_heartbeat(void **state)
{
    (void)state;
    struct rp f;
    rp_config(&f, 8 * RP_DGRAM);
    assert_int_equal(rp_start(&f), 0);
    uint32_t first = f.cfg.first_seq;
    rp_drain(&f, NULL, 4, 1); /* first heartbeat */
    for (uint64_t i = 0; i < 20; i++)
        send_one(&f, i);
    uint32_t trail = rdps__rel_pub_oldest_seq(&f.p);
    assert_int_equal(trail, first + 12);
    struct rdps_rel_pub_action a[16];
    /* Wholly below the trail: a unicast heartbeat tells the asker what the ring still holds. */
    rp_nak1(&f, 1, first + 2, 3);
    int n = rp_drain(&f, a, 16, 1);
    assert_int_equal(n, 1);
    assert_int_equal(a[0].kind, RDPS_REL_PUB_POST_HEARTBEAT);
    assert_true(a[0].unicast);
    assert_int_equal(test_source_number(&a[0].dest), 1);
    assert_int_equal(rp_hb_seq(&a[0]), first + 20);
    assert_int_equal(rp_hb_retained(&a[0]), 8);
    assert_int_equal(f.p.counters.heartbeats_unrecoverable, 1);
    /* Straddling the trail within the linger: the retained part is repaired, no heartbeat. */
    rp_nak1(&f, 1, first + 10, 4);
    n = rp_drain(&f, a, 16, 1);
    assert_int_equal(n, 2);
    assert_int_equal(a[0].kind, RDPS_REL_PUB_POST_REPAIR);
    assert_int_equal(a[0].seq, first + 12);
    assert_int_equal(a[1].seq, first + 13);
    assert_int_equal(f.p.counters.nak_ranges_unrecoverable, 2);
    /* After the linger, another heartbeat. */
    f.now += f.cfg.repair_linger_ns;
    rp_nak1(&f, 1, first, 1);
    n = rp_drain(&f, a, 16, 1);
    assert_int_equal(n, 1);
    assert_int_equal(a[0].kind, RDPS_REL_PUB_POST_HEARTBEAT);
    assert_int_equal(f.p.counters.heartbeats_unrecoverable, 2);
    rp_stop(&f);
}

/* A publisher whose appends the window refuses can only move by repairs: they go past the budget
 * then, and spend it again once new data waits. */
static void test_repairs_unbudgeted_while_window_holds(void **state)
{
    (void)state;
    struct rp f;
    rp_config(&f, 256 * RP_DGRAM);
    f.cfg.repair_budget_bytes = 2 * RP_DGRAM;
    f.cfg.repair_share_bytes = 8 * RP_DGRAM;
    assert_int_equal(rp_start(&f), 0);
    uint32_t first = f.cfg.first_seq;
    rp_join(&f, 1, first, 16);
    for (uint64_t i = 0; i < 16; i++)
        send_one(&f, i);
    struct rdps_rel_pub_action a[64];
    /* Not held yet (the application has not been refused): two repairs this interval. */
    rp_nak1(&f, 1, first, 4);
    assert_int_equal(rp_drain(&f, a, 64, 1), 2);
    assert_true(rdps__rel_pub_tick(&f.p, f.now) > f.now);
    /* Refused by the window: the other two go now, and so do the next receiver's eight. */
    assert_int_equal(rp_append(&f, RP_PAYLOAD, 16), RDPS_EAGAIN);
    assert_int_equal(rdps__rel_pub_tick(&f.p, f.now), f.now);
    assert_int_equal(rp_drain(&f, a, 64, 1), 2);
    rp_nak1(&f, 2, first + 4, 8);
    assert_int_equal(rp_drain(&f, a, 64, 1), 8);
    for (int i = 0; i < 8; i++) {
        assert_int_equal(a[i].kind, RDPS_REL_PUB_POST_REPAIR);
        assert_int_equal(a[i].seq, first + 4 + (uint32_t)i);
    }
    /* The window opens and new data waits: repairs are held to the budget again. */
    rp_nak1(&f, 1, first + 12, 4);
    rp_status(&f, 1, first + 16, 16);
    for (uint64_t i = 0; i < 4; i++)
        assert_int_equal(rp_append(&f, RP_PAYLOAD, 17 + i), 1);
    f.now += f.cfg.repair_interval_ns;
    int n = rp_drain(&f, a, 64, 1);
    assert_int_equal(n, 4 + 2);
    assert_int_equal(repairs_in(a, n), 2);
    /* Refused while appended data still waits to be posted: the budget holds until that data
     * went, then the held publisher's repairs go. */
    rp_drain(&f, a, 64, 1);
    rp_status(&f, 1, first + 20, 12);
    for (uint64_t i = 0; i < 12; i++)
        assert_int_equal(rp_append(&f, RP_PAYLOAD, 21 + i), 1);
    assert_int_equal(rp_append(&f, RP_PAYLOAD, 33), RDPS_EAGAIN);
    rp_nak1(&f, 2, first + 16, 4);
    f.now += f.cfg.repair_interval_ns;
    n = rp_drain(&f, a, 64, 1);
    int data = 0, repairs_with_data = 0, repairs = 0;
    for (int i = 0; i < n; i++) {
        if (a[i].kind == RDPS_REL_PUB_POST_REPAIR)
            repairs++;
        else if (++data == 12)
            repairs_with_data = repairs;
    }
    assert_int_equal(data, 12);
    assert_int_equal(repairs_with_data, 2);
    assert_int_equal(repairs, 4 + 2);
    rp_stop(&f);
}

/* The ring held by the receiver it keeps frames for: repairs go past the budget until that
 * receiver's position moves (an application that then stops sending leaves them budgeted). */
static void test_repairs_unbudgeted_while_ring_holds(void **state)
{
    (void)state;
    struct rp f;
    rp_config(&f, 16 * RP_DGRAM);
    f.cfg.repair_budget_bytes = RP_DGRAM;
    f.cfg.repair_share_bytes = 4 * RP_DGRAM;
    assert_int_equal(rp_start(&f), 0);
    uint32_t first = f.cfg.first_seq;
    rp_join(&f, 1, first, 1000);
    uint64_t id = 0;
    int rc;
    while ((rc = rp_append(&f, RP_PAYLOAD, id++)) == 1)
        assert_true(rp_drain(&f, NULL, 4, 1) >= 1);
    assert_int_equal(rc, RDPS_EAGAIN);
    assert_int_equal(f.p.counters.backpressure_ring, 1);
    struct rdps_rel_pub_action a[32];
    rp_nak1(&f, 1, first, 4);
    assert_int_equal(rp_drain(&f, a, 32, 1), 4);
    /* The receiver moved on: one repair per interval again. */
    rp_status(&f, 1, first + 8, 1000);
    rp_nak1(&f, 1, first + 8, 4);
    f.now += f.cfg.repair_interval_ns;
    assert_int_equal(rp_drain(&f, a, 32, 1), 1);
    rp_stop(&f);
}

/* A publisher held by its window (receiver 1's sixteen credits all used) whose repairs go past a
 * budget of two datagrams per interval, each receiver's share four, all shares `total`; returns
 * the first sequence. */
static uint32_t share_held(struct rp *f, uint32_t total)
{
    rp_config(f, 256 * RP_DGRAM);
    f->cfg.repair_budget_bytes = 2 * RP_DGRAM;
    f->cfg.repair_share_bytes = 4 * RP_DGRAM;
    f->cfg.repair_share_total_bytes = total;
    assert_int_equal(rp_start(f), 0);
    uint32_t first = f->cfg.first_seq;
    rp_join(f, 1, first, 16);
    for (uint64_t i = 0; i < 16; i++)
        send_one(f, i);
    assert_int_equal(rp_append(f, RP_PAYLOAD, 16), RDPS_EAGAIN);
    return first;
}

/* Past the budget each receiver still spends its own share: one that NAKs twelve frames gets four
 * per interval, and its held entry moves aside for another receiver's repairs. */
static void test_repair_share_caps_one_receiver(void **state)
{
    (void)state;
    struct rp f;
    uint32_t first = share_held(&f, 64 * RP_DGRAM);
    rp_nak1(&f, 1, first, 12);
    rp_nak1(&f, 2, first + 12, 4);
    struct rdps_rel_pub_action a[64];
    uint32_t expect_next[3] = {0, first, first + 12};
    int n = rp_drain(&f, a, 64, 1);
    assert_int_equal(n, 8);
    int to[3] = {0, 0, 0};
    for (int i = 0; i < n; i++) {
        assert_int_equal(a[i].kind, RDPS_REL_PUB_POST_REPAIR);
        assert_true(a[i].unicast);
        unsigned rx = test_source_number(&a[i].dest);
        assert_in_range(rx, 1, 2);
        assert_int_equal(a[i].seq, expect_next[rx]++);
        to[rx]++;
    }
    assert_int_equal(to[1], 4);
    assert_int_equal(to[2], 4);
    assert_int_equal(f.p.counters.repair_share_spent, 2);
    /* Nothing more until the next interval, then the next four. */
    assert_true(rdps__rel_pub_tick(&f.p, f.now) > f.now);
    for (int k = 0; k < 2; k++) {
        f.now += f.cfg.repair_interval_ns;
        n = rp_drain(&f, a, 64, 1);
        assert_int_equal(n, 4);
        for (int i = 0; i < n; i++)
            assert_int_equal(a[i].seq, expect_next[1]++);
    }
    assert_int_equal(expect_next[1], first + 12);
    assert_int_equal(f.p.counters.repair_share_spent, 4);
    rp_stop(&f);
}

/* The shares together are capped too (many receiver ids cannot add up to the device's pace): with
 * room for two shares, a third receiver's repairs wait for the next interval. */
static void test_repair_shares_total(void **state)
{
    (void)state;
    struct rp f;
    uint32_t first = share_held(&f, 8 * RP_DGRAM);
    for (unsigned rx = 1; rx <= 3; rx++)
        rp_nak1(&f, rx, first + 4 * (rx - 1), 4);
    struct rdps_rel_pub_action a[64];
    int n = rp_drain(&f, a, 64, 1);
    assert_int_equal(n, 8);
    for (int i = 0; i < n; i++)
        assert_int_not_equal(test_source_number(&a[i].dest), 3);
    f.now += f.cfg.repair_interval_ns;
    n = rp_drain(&f, a, 64, 1);
    assert_int_equal(n, 4);
    for (int i = 0; i < n; i++) {
        assert_int_equal(test_source_number(&a[i].dest), 3);
        assert_int_equal(a[i].seq, first + 8 + (uint32_t)i);
    }
    rp_stop(&f);
}

/* The total running out is counted like a receiver's share running out: room for six datagrams,
 * the first receiver spends its four, the second two. */
static void test_repair_shares_total_counted(void **state)
{
    (void)state;
    struct rp f;
    uint32_t first = share_held(&f, 6 * RP_DGRAM);
    rp_nak1(&f, 1, first, 4);
    rp_nak1(&f, 2, first + 4, 4);
    struct rdps_rel_pub_action a[64];
    assert_int_equal(rp_drain(&f, a, 64, 1), 6);
    assert_int_equal(f.p.counters.repair_share_spent, 2);
    rp_stop(&f);
}

/* A lone receiver past its share gets the rest of its repairs in the order it asked (it takes a
 * repair that overtakes an earlier one as that one lost, and asks again). */
static void test_repair_share_keeps_order(void **state)
{
    (void)state;
    struct rp f;
    uint32_t first = share_held(&f, 64 * RP_DGRAM);
    rp_nak1(&f, 1, first, 3); /* three queue entries */
    rp_nak1(&f, 1, first + 5, 3);
    rp_nak1(&f, 1, first + 10, 3);
    const uint32_t asked[9] = {0, 1, 2, 5, 6, 7, 10, 11, 12};
    unsigned got = 0;
    struct rdps_rel_pub_action a[64];
    for (int k = 0; k < 4; k++) {
        int n = rp_drain(&f, a, 64, 1);
        assert_true(n <= 4); /* the share per interval */
        for (int i = 0; i < n; i++) {
            assert_true(got < 9);
            assert_int_equal(a[i].seq, first + asked[got++]);
        }
        f.now += f.cfg.repair_interval_ns;
    }
    assert_int_equal(got, 9);
    rp_stop(&f);
}

/* A full repair queue leaves the sequences unmarked and counted, so the receiver's retry gets
 * them; each entry holds a run, so one NAK for a long range is one entry. */
static void test_repair_queue_full(void **state)
{
    (void)state;
    struct rp f;
    rp_config(&f, 256 * RP_DGRAM);
    f.cfg.max_repairs = 2;
    f.cfg.repair_budget_bytes = RP_DGRAM;
    assert_int_equal(rp_start(&f), 0);
    uint32_t first = f.cfg.first_seq;
    for (uint64_t i = 0; i < 32; i++)
        send_one(&f, i);
    rp_nak1(&f, 1, first, 10);     /* one entry for the run */
    rp_nak1(&f, 2, first + 20, 1); /* a second */
    rp_nak1(&f, 3, first + 24, 2); /* no room */
    assert_int_equal(f.p.counters.repair_queue_full, 2);
    struct rdps_rel_pub_action a[64];
    for (int k = 0; k < 20 && f.p.rq.count > 0; k++) {
        assert_true(rp_drain(&f, a, 64, 1) >= 0);
        f.now += f.cfg.repair_interval_ns;
    }
    assert_int_equal(f.p.counters.repairs_unicast, 11);
    rp_nak1(&f, 3, first + 24, 2); /* the retry is answered: nothing was marked */
    assert_int_equal(rp_drain(&f, a, 64, 1), 1);
    assert_int_equal(a[0].seq, first + 24);
    assert_int_equal(f.p.counters.repair_queue_full, 2);
    rp_stop(&f);
}

/* A scheduled repair whose frame left the ring before it went is dropped, not sent stale. */
static void test_repair_dropped_below_trail(void **state)
{
    (void)state;
    struct rp f;
    rp_config(&f, 8 * RP_DGRAM);
    f.cfg.repair_budget_bytes = RP_DGRAM;
    assert_int_equal(rp_start(&f), 0);
    uint32_t first = f.cfg.first_seq;
    for (uint64_t i = 0; i < 8; i++)
        send_one(&f, i);
    rp_nak1(&f, 1, first, 8);
    struct rdps_rel_pub_action a[32];
    assert_int_equal(rp_drain(&f, a, 32, 1), 1); /* budget: one repair this interval */
    for (uint64_t i = 8; i < 12; i++)
        assert_int_equal(rp_append(&f, RP_PAYLOAD, i), 1); /* trail moves to first + 4 */
    int n = rp_drain(&f, a, 32, 1);
    for (int i = 0; i < n; i++)
        if (a[i].kind == RDPS_REL_PUB_POST_REPAIR)
            assert_true(rdps__seq_ge(a[i].seq, first + 4));
    f.now += 10 * MS;
    n = rp_drain(&f, a, 32, 1);
    assert_true(n >= 1);
    assert_int_equal(a[0].seq, first + 4);
    assert_int_equal(f.p.counters.repairs_dropped, 3);
    rp_stop(&f);
}

/* Late join from the oldest retained sequence: unicast repairs, clipped per NAK, paced by budget.
 */
static void test_late_join_from_oldest(void **state)
{
    (void)state;
    struct rp f;
    rp_config(&f, 64 * RP_DGRAM);
    f.cfg.repair_budget_bytes = 8 * RP_DGRAM;
    f.cfg.max_frames_per_nak = 32;
    assert_int_equal(rp_start(&f), 0);
    for (uint64_t i = 0; i < 100; i++)
        send_one(&f, i);
    uint32_t oldest = rdps__rel_pub_oldest_seq(&f.p);
    assert_int_equal(rdps__rel_pub_retained(&f.p), 64);
    rp_announce(&f, 5);
    rp_nak1(&f, 5, oldest, rdps__rel_pub_retained(&f.p));
    assert_int_equal(f.p.counters.nak_clipped, 1);
    struct rdps_rel_pub_action a[64];
    uint32_t expect = oldest;
    for (int interval = 0; interval < 4; interval++) {
        int n = rp_drain(&f, a, 64, 1);
        assert_int_equal(n, 8); /* the budget's worth per interval */
        for (int i = 0; i < n; i++) {
            assert_int_equal(a[i].kind, RDPS_REL_PUB_POST_REPAIR);
            assert_true(a[i].unicast);
            assert_int_equal(test_source_number(&a[i].dest), 5);
            assert_int_equal(a[i].seq, expect++);
        }
        f.now += f.cfg.repair_interval_ns;
    }
    assert_int_equal(rp_drain(&f, a, 64, 1), 0); /* 32 per NAK: the joiner asks again */
    rp_nak1(&f, 5, expect, oldest + 64 - expect);
    assert_int_equal(rp_drain(&f, a, 64, 1), 8);
    assert_int_equal(a[0].seq, oldest + 32);
    rp_stop(&f);
}

/* The table is capped; a full one refuses unannounced newcomers of hosts no lighter than the
 * others, and an announced receiver takes the place of the least recently heard unannounced one.
 * (Per-host and per-source caps: test_rel_pub_hostile.c.) */
static void test_receiver_table_cap(void **state)
{
    (void)state;
    struct rp f;
    rp_config(&f, 16 * RP_DGRAM);
    f.cfg.max_receivers = 4;
    assert_int_equal(rp_start(&f), 0);
    uint32_t first = f.cfg.first_seq;
    for (uint64_t i = 0; i < 4; i++)
        send_one(&f, i);
    for (uint64_t s = 1; s <= 10; s++) {
        f.now += 1 * US;
        rp_status(&f, s, first, 100);
    }
    assert_int_equal(rdps__rel_pub_receiver_count(&f.p), 4);
    assert_int_equal(f.p.counters.receivers_refused, 6);
    /* A refused receiver's NAK schedules nothing. */
    rp_nak1(&f, 9, first, 2);
    assert_int_equal(rp_drain(&f, NULL, 16, 1), 0);
    assert_int_equal(f.p.counters.receivers_refused, 7);
    /* Discovery announces it: it displaces the least recently heard unannounced receiver. */
    struct rdps_source s9 = test_source(9);
    assert_int_equal(rdps__rel_pub_receiver_tag(&f.p, &s9, 7, 1, f.now), 0);
    assert_int_equal(f.p.counters.receivers_displaced, 1);
    assert_int_equal(rp_state(&f, 1), RDPS_REL_RX_FREE);
    assert_int_equal(rdps__rel_pub_receiver_count(&f.p), 4);
    /* Same source as a displaced one, other receiver id: refused (no host is heavier). */
    struct rdps_rel_status st = {RP_SESSION, RP_TOPIC, 8, first, 100, RDPS_REL_NO_ECHO, 0};
    struct rdps_source s1 = test_source(1);
    rdps__rel_pub_on_status(&f.p, &s1, &st, f.now, f.now);
    assert_int_equal(f.p.counters.receivers_refused, 8);
    /* Timeouts make room: unannounced receivers after 1 s, announced ones after 5 s. */
    f.now += 1000 * MS;
    rdps__rel_pub_tick(&f.p, f.now);
    assert_int_equal(rdps__rel_pub_receiver_count(&f.p), 1);
    f.now += 5000 * MS;
    rdps__rel_pub_tick(&f.p, f.now);
    assert_int_equal(rdps__rel_pub_receiver_count(&f.p), 0);
    rp_status(&f, 9, first + 4, 100);
    assert_int_equal(rdps__rel_pub_receiver_count(&f.p), 1);
    rp_stop(&f);
}

static void test_counters_rtt_and_foreign(void **state)
{
    (void)state;
    struct rp f;
    rp_config(&f, 16 * RP_DGRAM);
    assert_int_equal(rp_start(&f), 0);
    uint32_t first = f.cfg.first_seq;
    struct rdps_source s1 = test_source(1);
    rp_join(&f, 1, first, 10);
    /* Echo of a heartbeat that left 100 us ago, held 30 us by the receiver: 70 us. */
    uint64_t hb = rp_beat(&f);
    f.now += 100 * US;
    rp_status_echo(&f, 1, first, 10, hb, 30);
    struct rdps_rel_pub_receiver_info info;
    assert_int_equal(rdps__rel_pub_receiver_info(&f.p, &s1, 7, &info), 0);
    assert_int_equal(info.srtt_ns, 70 * US);
    assert_int_equal(f.p.counters.rtt_last_ns, 70 * US);
    /* A timestamp no heartbeat of ours carried, and an echo held longer than the round trip: no
     * sample. */
    rp_status_echo(&f, 1, first, 10, hb + 1, 30);
    rp_status_echo(&f, 1, first, 10, hb, 200);
    assert_int_equal(f.p.counters.rtt_samples, 1);
    assert_int_equal(f.p.counters.rtt_bogus, 2);
    /* The next heartbeat, back after 150 us, held 30 us: a sample of 120 us. */
    hb = rp_beat(&f);
    f.now += 150 * US;
    rp_status_echo(&f, 1, first, 10, hb, 30);
    assert_int_equal(rdps__rel_pub_receiver_info(&f.p, &s1, 7, &info), 0);
    assert_int_equal(info.srtt_ns, 70 * US - 70 * US / 8 + 120 * US / 8);
    /* Another session's or topic's frames are foreign. */
    struct rdps_rel_status st = {1, RP_TOPIC, 7, first, 10, RDPS_REL_NO_ECHO, 0};
    rdps__rel_pub_on_status(&f.p, &s1, &st, f.now, f.now);
    assert_int_equal(f.p.counters.foreign_frames, 1);
    assert_int_equal(f.p.counters.status_received, 5);
    rp_stop(&f);
}

static void test_config_errors(void **state)
{
    (void)state;
    struct rp f;
    rp_config(&f, 16 * RP_DGRAM);
    f.cfg.session_id = 0;
    assert_int_equal(rp_start(&f), RDPS_EINVAL);
    free(f.mem);
    rp_config(&f, 16 * RP_DGRAM);
    f.cfg.flow = RDPS_REL_FLOW_TAGGED; /* no tag */
    assert_int_equal(rp_start(&f), RDPS_EINVAL);
    free(f.mem);
    rp_config(&f, 16 * RP_DGRAM);
    f.cfg.repair_budget_bytes = 10;
    assert_int_equal(rp_start(&f), RDPS_EINVAL);
    free(f.mem);
    rp_config(&f, 16 * RP_DGRAM);
    f.cfg.ring_frames = 6;
    assert_int_equal(rp_start(&f), RDPS_EINVAL);
    free(f.mem);
    rdps__rel_pub_fini(&f.p); /* a zeroed engine finalizes */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_wrap_and_retention),
        cmocka_unit_test(test_slot_limit),
        cmocka_unit_test(test_message_limit_is_the_ring),
        cmocka_unit_test(test_backpressure_before_write),
        cmocka_unit_test(test_ring_protects_flow_position),
        cmocka_unit_test(test_nak_linger_and_dedupe),
        cmocka_unit_test(test_linger_scales_with_rtt_when_alone),
        cmocka_unit_test(test_overtaken_nak_answered_in_linger),
        cmocka_unit_test(test_unicast_vs_multicast),
        cmocka_unit_test(test_repair_budget_vs_new_data),
        cmocka_unit_test(test_repairs_unbudgeted_while_window_holds),
        cmocka_unit_test(test_repairs_unbudgeted_while_ring_holds),
        cmocka_unit_test(test_repair_share_caps_one_receiver),
        cmocka_unit_test(test_repair_share_keeps_order),
        cmocka_unit_test(test_repair_shares_total),
        cmocka_unit_test(test_repair_shares_total_counted),
        cmocka_unit_test(test_repair_queue_full),
        cmocka_unit_test(test_rate_limit_paces_data),
        cmocka_unit_test(test_heartbeat_backoff_and_reset),
        cmocka_unit_test(test_flow_max),
        cmocka_unit_test(test_flow_min),
        cmocka_unit_test(test_window_wait_pokes_the_limiting_receiver),
        cmocka_unit_test(test_flow_tagged),
        cmocka_unit_test(test_connecting_receiver_holds_data),
        cmocka_unit_test(test_announced_receiver_heartbeat_ahead_of_data),
        cmocka_unit_test(test_new_receiver_status_heartbeat_ahead_of_data),
        cmocka_unit_test(test_receivers_behind_counts_catching_up),
        cmocka_unit_test(test_receiver_timeout),
        cmocka_unit_test(test_eviction_lagged),
        cmocka_unit_test(test_eviction_stalled_min),
        cmocka_unit_test(test_unrecoverable_answered_with_heartbeat),
        cmocka_unit_test(test_repair_dropped_below_trail),
        cmocka_unit_test(test_late_join_from_oldest),
        cmocka_unit_test(test_receiver_table_cap),
        cmocka_unit_test(test_counters_rtt_and_foreign),
        cmocka_unit_test(test_config_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
