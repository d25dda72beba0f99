/* SPDX-License-Identifier: BSD-2-Clause */
/* test_rel_pub_hostile.c - the reliable publisher against a forging host (issue 28, audit of
 * 2026-11-28 findings 1-7, 16-18): each test replays an audit probe on the engine with a fake
 * clock and checks the outcome the fix promises. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rel_pub_test_util.h"
#include "rdps_seq.h"

#define MS 1000000ull
#define US 1000ull

/* A source on host `host` (its GID, as test_source(host)) with QPN `qpn`. */
static struct rdps_source host_src(uint64_t host, uint32_t qpn)
{
    struct rdps_source s = test_source(host);
    s.qpn = qpn & 0xFFFFFFu;
    return s;
}

static void nak_from(struct rp *f, const struct rdps_source *s, uint32_t id, uint32_t start,
                     uint32_t count, uint64_t *bytes)
{
    struct rdps_seq_range r = {start, count};
    uint8_t buf[RDPS_FRAME_NAK_OFF_RANGES + RDPS_FRAME_NAK_RANGE_LEN];
    int len = rdps__frame_encode_nak(buf, sizeof(buf), RP_SESSION, RP_TOPIC, id, &r, 1, f->now);
    struct rdps_frame_view v;
    assert_true(len > 0);
    assert_int_equal(rdps__frame_decode(buf, (size_t)len, NULL, &v), RDPS_FRAME_OK);
    rdps__rel_pub_on_frame(&f->p, s, &v, f->now, f->now);
    if (bytes != NULL)
        *bytes += (uint64_t)len;
}

static void status_from(struct rp *f, const struct rdps_source *s, uint32_t id, uint32_t consumed,
                        uint32_t window)
{
    uint8_t buf[RDPS_FRAME_STATUS_LEN];
    int len = rdps__frame_encode_status(buf, sizeof(buf), RP_SESSION, RP_TOPIC, id, consumed,
                                        window, f->now);
    struct rdps_frame_view v;
    assert_true(len > 0);
    assert_int_equal(rdps__frame_decode(buf, (size_t)len, NULL, &v), RDPS_FRAME_OK);
    rdps__rel_pub_on_frame(&f->p, s, &v, f->now, f->now);
}

/* What the publisher put on the wire, by kind. */
struct wire {
    uint64_t data, repairs_uc, repairs_mc, repair_bytes, heartbeats;
    uint64_t bin_start, bin_bytes, max_bin_bytes; /* repair bytes per 1 ms, and the worst bin */
    uint64_t repairs_to[8];                       /* unicast repairs by test_source number < 8 */
};

/* Takes every action due now, completing each at once, and accounts it. */
static void take(struct rp *f, struct wire *w)
{
    struct rdps_rel_pub_action a;
    while (rdps__rel_pub_next_action(&f->p, f->now, f->now, &a) == 1) {
        assert_true(rp_action_ok(f, &a));
        if (a.in_ring)
            rdps__rel_pub_send_done(&f->p, 1);
        if (w == NULL)
            continue;
        if (a.kind == RDPS_REL_PUB_POST_DATA) {
            w->data++;
        } else if (a.kind == RDPS_REL_PUB_POST_HEARTBEAT) {
            w->heartbeats++;
        } else {
            if (f->now / MS != w->bin_start) {
                w->bin_start = f->now / MS;
                w->bin_bytes = 0;
            }
            w->bin_bytes += a.len;
            if (w->bin_bytes > w->max_bin_bytes)
                w->max_bin_bytes = w->bin_bytes;
            w->repair_bytes += a.len;
            if (a.unicast) {
                w->repairs_uc++;
                uint64_t n = test_source_number(&a.dest);
                if (n < 8)
                    w->repairs_to[n]++;
            } else {
                w->repairs_mc++;
            }
        }
    }
}

/* ---- finding 1: announced receivers that never report ---------------------------------- */

/*
 * A min publisher whose application offers a 64-byte message every 100 us for 10 s, one honest
 * receiver (announced, reporting everything posted every millisecond); from 0.5 s on, a forger
 * has discovery announce a new receiver every 400 ms that never reports, from one host, or each
 * from a host of its own (`hosts`, 0: no forger). Returns the messages the engine took.
 */
static uint64_t run_connect_flood(unsigned hosts)
{
    struct rp f;
    rp_config(&f, 1u << 20);
    f.cfg.flow = RDPS_REL_FLOW_MIN;
    assert_int_equal(rp_start(&f), 0);
    rp_join(&f, 1, f.cfg.first_seq, 1000);
    uint64_t appended = 0, t0 = f.now;
    unsigned forged = 0;
    for (uint64_t step = 0; f.now < t0 + 10000 * MS; step++) {
        f.now += 100 * US;
        if (rp_append(&f, 64, appended) == 1)
            appended++;
        take(&f, NULL);
        rdps__rel_pub_tick(&f.p, f.now);
        if (step % 10 == 0)
            rp_status(&f, 1, f.p.adm.post_seq, 1000);
        if (hosts > 0 && f.now >= t0 + 500 * MS + forged * 400 * MS) {
            struct rdps_source s = host_src(100 + forged % hosts, 5000 + forged);
            rdps__rel_pub_expect_receiver(&f.p, &s, 0xBAD + forged, 0, f.now);
            forged++;
        }
    }
    rp_stop(&f);
    return appended;
}

/* Finding 1: announcements of receivers that never report held a min publisher (the audit: 5000
 * messages in 5 s, all before the forger started). A host holds data once, then is banned from
 * holding; holds of many hosts together spend a bucket that refills at 1/32 of real time. */
static void test_connect_holds_bounded(void **state)
{
    (void)state;
    uint64_t clean = run_connect_flood(0);
    uint64_t one_host = run_connect_flood(1);
    uint64_t many_hosts = run_connect_flood(1000);
    printf("finding 1: messages in 10 s: undisturbed %llu, forger on one host %llu (%.2f), "
           "on a host per announcement %llu (%.2f)\n",
           (unsigned long long)clean, (unsigned long long)one_host, (double)one_host / clean,
           (unsigned long long)many_hosts, (double)many_hosts / clean);
    assert_true(clean >= 99000);
    assert_true(one_host >= clean * 8 / 10);
    assert_true(many_hosts >= clean * 8 / 10);
}

/* ---- finding 2: forged STATUS under min -------------------------------------------------- */

/* A min publisher, one honest receiver keeping up, 64-byte messages offered every 10 us for 5 s;
 * `forger`: STATUS {consumed = trail, window 0} every 10 ms from an unannounced source (that,
 * unlike the honest receiver, discovery never announced). Returns the messages taken. */
static uint64_t run_min_status(bool forger)
{
    struct rp f;
    rp_config(&f, 1u << 20);
    f.cfg.flow = RDPS_REL_FLOW_MIN;
    assert_int_equal(rp_start(&f), 0);
    rp_join(&f, 1, f.cfg.first_seq, 1000);
    struct rdps_source forged = host_src(666, 4242);
    uint64_t appended = 0, t0 = f.now;
    for (uint64_t step = 0; f.now < t0 + 5000 * MS; step++) {
        f.now += 10 * US;
        if (rp_append(&f, 64, appended) == 1)
            appended++;
        take(&f, NULL);
        rdps__rel_pub_tick(&f.p, f.now);
        if (step % 100 == 0)
            rp_status(&f, 1, f.p.adm.post_seq, 1000);
        if (forger && step % 1000 == 0)
            status_from(&f, &forged, 7, rdps__rel_pub_oldest_seq(&f.p), 0);
    }
    rp_stop(&f);
    return appended;
}

/* Finding 2: the audit's forged STATUS throttled a min publisher from 80 000 to 1 119 msg/s. */
static void test_forged_status_does_not_throttle_min(void **state)
{
    (void)state;
    uint64_t clean = run_min_status(false), forged = run_min_status(true);
    printf("finding 2: messages in 5 s: undisturbed %llu, forged STATUS every 10 ms %llu (%.3f)\n",
           (unsigned long long)clean, (unsigned long long)forged, (double)forged / clean);
    assert_true(clean >= 490000);
    assert_true(forged >= clean * 8 / 10);
}

/* ---- finding 3: receiver table lock-out ------------------------------------------------- */

/* Finding 3: one host with 256 QPNs and receiver ids (768 NAKs, the audit's 36 864 bytes) filled
 * the table; a receiver arriving later got no repairs at all. */
static void test_table_flood_from_one_host(void **state)
{
    (void)state;
    struct rp f;
    struct wire w = {0};
    rp_config(&f, 256 * RP_DGRAM);
    assert_int_equal(rp_start(&f), 0);
    uint32_t first = f.cfg.first_seq;
    for (uint64_t i = 0; i < 200; i++)
        assert_int_equal(rp_append(&f, RP_PAYLOAD, i), 1);
    take(&f, NULL);
    for (uint32_t k = 0; k < 768; k++) {
        struct rdps_source s = host_src(500, 1000 + k % 256);
        nak_from(&f, &s, 0xF00 + k % 256, first + k % 200, 1, NULL);
        f.now += 13 * MS; /* 768 NAKs over 10 s */
        take(&f, NULL);
    }
    /* The late receiver (another host, discovery has not announced it yet) is answered. */
    struct rdps_source late = test_source(2);
    for (uint32_t k = 0; k < 10; k++) {
        nak_from(&f, &late, 7, first + 100 + k, 1, NULL);
        take(&f, &w);
    }
    printf("finding 3: late receiver got %llu of 10 repairs; table %u, refused %llu\n",
           (unsigned long long)w.repairs_to[2], rdps__rel_pub_receiver_count(&f.p),
           (unsigned long long)f.p.counters.receivers_refused);
    assert_int_equal(w.repairs_to[2], 10);
    assert_true(rdps__rel_pub_receiver_count(&f.p) <=
                32 + 1); /* the host's cap, and the late one */
    rp_stop(&f);
}

/* Finding 3 with many hosts: 256 of them (one receiver id each, every one reporting a position)
 * fill the table; an honest receiver discovery announces takes the place of one of them. */
static void test_table_flood_from_many_hosts(void **state)
{
    (void)state;
    struct rp f;
    struct wire w = {0};
    rp_config(&f, 256 * RP_DGRAM);
    assert_int_equal(rp_start(&f), 0);
    uint32_t first = f.cfg.first_seq;
    for (uint64_t i = 0; i < 200; i++)
        assert_int_equal(rp_append(&f, RP_PAYLOAD, i), 1);
    take(&f, NULL);
    for (uint32_t k = 0; k < 256; k++) {
        struct rdps_source s = host_src(1000 + k, 77);
        status_from(&f, &s, 7, first, 100);
        f.now += 1 * US;
    }
    assert_int_equal(rdps__rel_pub_receiver_count(&f.p), 256);
    int rc = rp_announce(&f, 2);
    rp_status(&f, 2, first + 100, 100);
    struct rdps_source late = test_source(2);
    nak_from(&f, &late, 7, first + 150, 10, NULL);
    take(&f, &w);
    printf("finding 3 (many hosts): the announced late receiver got %llu of 10 repairs\n",
           (unsigned long long)w.repairs_to[2]);
    assert_int_equal(w.repairs_to[2], 10);
    assert_int_equal(rc, 0);
    assert_int_equal(rp_state(&f, 2), RDPS_REL_RX_ACTIVE);
    rp_stop(&f);
}

/* One source (GID and QPN) gets at most max_receivers_per_source receiver ids, one host at most
 * max_receivers_per_host: past them a newcomer displaces its own least recently heard. */
static void test_receivers_capped_per_source_and_host(void **state)
{
    (void)state;
    struct rp f;
    rp_config(&f, 64 * RP_DGRAM);
    assert_int_equal(rp_start(&f), 0);
    uint32_t first = f.cfg.first_seq;
    assert_int_equal(rp_append(&f, RP_PAYLOAD, 1), 1);
    take(&f, NULL);
    struct rdps_source one = host_src(500, 77);
    for (uint32_t id = 1; id <= 10; id++) {
        f.now += 1 * US;
        status_from(&f, &one, id, first, 10);
    }
    assert_int_equal(rdps__rel_pub_receiver_count(&f.p), f.cfg.max_receivers_per_source);
    for (uint32_t k = 0; k < 100; k++) {
        struct rdps_source s = host_src(500, 1000 + k);
        f.now += 1 * US;
        status_from(&f, &s, 1, first, 10);
    }
    assert_int_equal(rdps__rel_pub_receiver_count(&f.p), f.cfg.max_receivers_per_host);
    /* The newest are kept: they were heard last. */
    struct rdps_source newest = host_src(500, 1099);
    struct rdps_rel_pub_receiver_info info;
    assert_int_equal(rdps__rel_pub_receiver_info(&f.p, &newest, 1, &info), 0);
    assert_int_equal(f.p.counters.receivers_displaced, 10 - 4 + 100 + 4 - 32);
    rp_stop(&f);
}

/* A receiver that stalls a min publisher earns its way back: evicted, it rejoins only past the
 * position it was evicted at; its host's second eviction bans it for stall_evict_ns, the third
 * for twice that. */
static void test_stalled_receiver_earns_its_way_back(void **state)
{
    (void)state;
    struct rp f;
    rp_config(&f, 256 * RP_DGRAM);
    f.cfg.flow = RDPS_REL_FLOW_MIN;
    f.cfg.stall_evict_ns = 100 * MS;
    assert_int_equal(rp_start(&f), 0);
    uint32_t first = f.cfg.first_seq;
    rp_join(&f, 1, first, 100);
    rp_join(&f, 2, first, 0); /* announced, takes nothing */
    uint64_t id = 0;
    assert_int_equal(rp_append(&f, 10, id++), 1); /* it has consumed everything: one goes */
    take(&f, NULL);
    for (int round = 0; round < 3; round++) {
        /* Held: the stall clock runs from the refusal. */
        assert_int_equal(rp_append(&f, 10, id), RDPS_EAGAIN);
        f.now += 100 * MS;
        rdps__rel_pub_tick(&f.p, f.now);
        assert_int_equal(rp_state(&f, 2), RDPS_REL_RX_EVICTED);
        assert_int_equal(f.ev[f.nev - 1].kind, RDPS_REL_PUB_EV_EVICTED);
        assert_int_equal(f.ev[f.nev - 1].reason, RDPS_EVICT_STALLED);
        uint32_t at = f.ev[f.nev - 1].consumed_seq;
        /* Data goes; the same position again does not bring it back. */
        for (int k = 0; k < 4; k++, id++) {
            assert_int_equal(rp_append(&f, 10, id), 1);
            take(&f, NULL);
        }
        rp_status(&f, 1, f.p.adm.post_seq, 100);
        rp_status(&f, 2, at, 0);
        assert_int_equal(rp_state(&f, 2), RDPS_REL_RX_EVICTED);
        /* Past it: back at once the first time; after a ban of 100 ms, then 200 ms. */
        uint64_t ban = round == 0 ? 0 : round == 1 ? 100 * MS : 200 * MS;
        if (ban > 0) {
            f.now += ban - 1 * MS;
            rp_status(&f, 1, f.p.adm.post_seq, 100);
            rp_status(&f, 2, at + 1, 0);
            assert_int_equal(rp_state(&f, 2), RDPS_REL_RX_EVICTED);
            f.now += 1 * MS;
        }
        rp_status(&f, 1, f.p.adm.post_seq, 100);
        rp_status(&f, 2, at + 1, 0);
        assert_int_equal(rp_state(&f, 2), RDPS_REL_RX_ACTIVE);
        assert_int_equal(f.ev[f.nev - 1].kind, RDPS_REL_PUB_EV_RESUMED);
    }
    assert_int_equal(f.p.counters.host_bans, 2);
    assert_int_equal(rp_state(&f, 1), RDPS_REL_RX_ACTIVE);
    rp_stop(&f);
}

/* ---- findings 4 and 6: repair budgets and amplification --------------------------------- */

/*
 * Finding 4: a window-blocked publisher (one honest receiver holding 2047 frames unreported, max
 * flow) and two forging hosts, each announced from its own source, NAKing 1024 sequences in turn
 * every 50 us within each other's linger. Before, multicast repairs past the budget spent
 * nothing: 1.7 GB/s of repairs, 6.6 times the budget. Every repair byte is charged now: per
 * interval at most the budget plus the shares' total. (Since rdps 1.3 their askings no longer
 * fan repairs out to the group: they never report, they are not receiving; and the whole run
 * is bounded by what the 2047 frames earned, test_repairs_bounded_by_data.)
 */
static void test_repairs_budgeted_in_every_state(void **state)
{
    (void)state;
    struct rp f;
    struct wire w = {0};
    rp_config(&f, 4u << 20);
    assert_int_equal(rp_start(&f), 0);
    uint32_t first = f.cfg.first_seq;
    rp_join(&f, 1, first, 2047);
    uint64_t id = 0;
    while (rp_append(&f, RP_PAYLOAD, id) == 1) {
        id++;
        take(&f, NULL);
    }
    assert_int_equal(id, 2047); /* the window is full: repairs go past the budget */
    struct rdps_source a = test_source(3), b = test_source(4);
    struct rdps_source *forgers[2] = {&a, &b};
    for (int k = 0; k < 2; k++)
        assert_int_equal(rdps__rel_pub_receiver_tag(&f.p, forgers[k], 7, 0, f.now), 0);
    uint64_t t0 = f.now;
    for (uint32_t step = 0; f.now < t0 + 100 * MS; step++) {
        f.now += 10 * US;
        if (step % 5 == 0) /* the two hosts in turn, each half of the window in turn */
            nak_from(&f, forgers[step / 5 % 2], 7, first + step / 10 % 2 * 1023, 1024, NULL);
        take(&f, &w);
    }
    uint64_t limit = f.cfg.repair_budget_bytes + f.cfg.repair_share_total_bytes + RP_DGRAM;
    printf("finding 4 (held): repairs %.1f MB/s (%llu multicast), worst 1 ms %llu bytes, limit "
           "%llu\n",
           (double)w.repair_bytes / 100e-3 / 1e6, (unsigned long long)w.repairs_mc,
           (unsigned long long)w.max_bin_bytes, (unsigned long long)limit);
    assert_int_equal(w.repairs_mc, 0); /* announced but not receiving: unicast each */
    assert_true(w.max_bin_bytes <= limit);

    /* New data waits (the window opened): at most the budget per interval. */
    rp_status(&f, 1, f.p.adm.post_seq, 2047);
    memset(&w, 0, sizeof(w));
    t0 = f.now;
    for (uint32_t step = 0; f.now < t0 + 100 * MS; step++) {
        f.now += 10 * US;
        for (int k = 0; k < 4; k++)
            if (rp_append(&f, RP_PAYLOAD, id) == 1)
                id++;
        if (step % 5 == 0)
            nak_from(&f, forgers[step / 5 % 2], 7, f.p.adm.ring.trail_seq + step / 10 % 2 * 1023,
                     1024, NULL);
        take(&f, &w);
        if (step % 10 == 0)
            rp_status(&f, 1, f.p.adm.post_seq, 2047);
    }
    printf("finding 4 (data waiting): worst 1 ms %llu repair bytes, budget %u\n",
           (unsigned long long)w.max_bin_bytes, f.cfg.repair_budget_bytes);
    assert_true(w.max_bin_bytes <= f.cfg.repair_budget_bytes + RP_DGRAM);
    rp_stop(&f);
}

/* Finding 6: two NAKs every 8 ms from two receiver ids of one unannounced host (the audit's
 * economical forger: 1248 bytes in, 14.2 MB out in 100 ms, 11 349 times, half of it multicast). */
static void test_nak_amplification_bounded(void **state)
{
    (void)state;
    struct rp f;
    struct wire w = {0};
    rp_config(&f, 4u << 20);
    assert_int_equal(rp_start(&f), 0);
    uint32_t first = f.cfg.first_seq;
    for (uint64_t i = 0; i < 2048; i++) {
        assert_int_equal(rp_append(&f, RP_PAYLOAD, i), 1);
        take(&f, NULL);
    }
    struct rdps_source s = host_src(666, 1);
    uint64_t in = 0, t0 = f.now;
    for (uint32_t step = 0; f.now < t0 + 100 * MS; step++) {
        if (step % 800 == 0) { /* every 8 ms, two NAKs of the whole ring's first half */
            nak_from(&f, &s, 1, first, 1024, &in);
            nak_from(&f, &s, 2, first, 1024, &in);
        }
        take(&f, &w);
        f.now += 10 * US;
    }
    double gain = (double)w.repair_bytes / (double)in;
    printf("finding 6: %llu bytes in, %llu repair bytes out (%llu multicast repairs): %.0fx\n",
           (unsigned long long)in, (unsigned long long)w.repair_bytes,
           (unsigned long long)w.repairs_mc, gain);
    assert_int_equal(w.repairs_mc, 0);
    /* At most unannounced_nak_frames (16) datagrams per NAK: 16 KiB per 48 bytes. */
    assert_true(gain <= 16.0 * RP_DGRAM / 48.0);
    rp_stop(&f);
}

/*
 * Finding 2 of the fourth review: one host announced from two addresses (a RoCE host with two
 * IP addresses has two GIDs), each address a receiver that never reports, NAKs the whole ring
 * every 100 ms for 10 s against a publisher that sent 2 MiB and went idle; an honest receiver
 * (ACTIVE, reporting) lost 8 datagrams and asks for them once a second. 1.2.0: ~9 000 times the
 * NAK bytes in repairs, half by multicast to every member. Now every repair byte spends what
 * data earned (twice the data, plus 64 KB/s): the two addresses' askings draw at most that, by
 * unicast, and the honest receiver's repairs take turns with them.
 */
static void test_repairs_bounded_by_data(void **state)
{
    (void)state;
    struct rp f;
    struct wire w = {0};
    rp_config(&f, 4u << 20);
    assert_int_equal(rp_start(&f), 0);
    uint32_t first = f.cfg.first_seq;
    rp_join(&f, 5, first, 2048);
    uint64_t data_bytes = 0;
    for (uint64_t i = 0; i < 2048; i++) {
        assert_int_equal(rp_append(&f, RP_PAYLOAD, i), 1);
        take(&f, NULL);
        data_bytes += RP_DGRAM;
        if (i % 64 == 0) /* it lacks [1000, 1008): its position stays there */
            rp_status(&f, 5, i < 1000 ? f.p.adm.post_seq : first + 1000, 2048);
    }
    struct rdps_source g1 = host_src(3, 1), g2 = host_src(4, 1); /* one machine, two GIDs */
    assert_int_equal(rdps__rel_pub_receiver_tag(&f.p, &g1, 7, 0, f.now), 0);
    assert_int_equal(rdps__rel_pub_receiver_tag(&f.p, &g2, 8, 0, f.now), 0);
    uint64_t in = 0, t0 = f.now, honest_done_at = 0;
    struct rdps_source honest = test_source(5);
    for (uint32_t step = 0; f.now < t0 + 10000 * MS; step++) {
        f.now += 100 * US;
        if (step % 1000 == 0) { /* every 100 ms: the whole ring from both addresses */
            nak_from(&f, &g1, 7, first, 1024, &in);
            nak_from(&f, &g1, 7, first + 1024, 1024, &in);
            nak_from(&f, &g2, 8, first, 1024, &in);
            nak_from(&f, &g2, 8, first + 1024, 1024, &in);
        }
        if (step % 10000 == 5 && honest_done_at == 0)
            nak_from(&f, &honest, 7, first + 1000, 8, NULL);
        uint64_t before = w.repairs_to[5];
        take(&f, &w);
        rdps__rel_pub_tick(&f.p, f.now);
        if (w.repairs_to[5] >= 8 && before < 8)
            honest_done_at = f.now;
    }
    double gain = (double)w.repair_bytes / (double)in;
    double per_data = (double)w.repair_bytes / (double)data_bytes;
    printf("finding 2: %llu NAK bytes in, %llu repair bytes out (%.0fx the NAKs, %.2fx the %llu "
           "data bytes), %llu by multicast; the honest receiver's 8 repaired after %.1f ms\n",
           (unsigned long long)in, (unsigned long long)w.repair_bytes, gain, per_data,
           (unsigned long long)data_bytes, (unsigned long long)w.repairs_mc,
           honest_done_at ? (double)(honest_done_at - t0) / 1e6 : -1.0);
    assert_int_equal(w.repairs_mc, 0);
    /* Twice the data, the floor's 64 KB/s for 10 s, a datagram of slack. */
    assert_true(w.repair_bytes <= 2 * data_bytes + 10 * 65536 + RP_DGRAM);
    assert_true(honest_done_at != 0 && honest_done_at - t0 <= 1000 * MS);
    assert_true(f.p.counters.repairs_unearned > 0);
    rp_stop(&f);
}

/*
 * Finding 2, hosts taking turns: once a forging host (announced, never reporting) has drained what
 * data earned, repairs trickle at the floor (a datagram every 16 ms) and what is left of its run of
 * 512 sequences would hold the queue for seconds; an honest receiver's repair asked behind it goes
 * next instead (the queue rotates to another host's first entry after each repair).
 */
static void test_unearned_repairs_take_turns(void **state)
{
    (void)state;
    struct rp f;
    struct wire w = {0};
    rp_config(&f, 4u << 20);
    assert_int_equal(rp_start(&f), 0);
    uint32_t first = f.cfg.first_seq;
    rp_join(&f, 5, first, 2048);
    for (uint64_t i = 0; i < 512; i++) { /* earns 1024 datagrams of repairs */
        assert_int_equal(rp_append(&f, RP_PAYLOAD, i), 1);
        take(&f, NULL);
    }
    rp_status(&f, 5, first + 500, 2048); /* the honest receiver lacks first + 500 only */
    struct rdps_source forger = host_src(3, 1), honest = test_source(5);
    assert_int_equal(rdps__rel_pub_receiver_tag(&f.p, &forger, 7, 0, f.now), 0);
    uint64_t asked_at = 0, repaired_at = 0;
    for (uint32_t ms = 0; ms < 2000 && repaired_at == 0; ms++) {
        f.now += MS;
        if (ms == 0 || ms == 10 || ms == 20) /* 1536 datagrams asked: the allowance runs out */
            nak_from(&f, &forger, 7, first, 512, NULL);
        if (ms == 25) {
            assert_true(f.p.counters.repairs_unearned > 0);
            nak_from(&f, &honest, 7, first + 500, 1, NULL);
            asked_at = f.now;
        }
        take(&f, &w);
        rdps__rel_pub_tick(&f.p, f.now);
        if (w.repairs_to[5] > 0)
            repaired_at = f.now;
    }
    printf("finding 2 (turns): the honest receiver's repair went %.0f ms after its NAK, behind a "
           "forger's run of 512 at the floor's pace (%llu repairs to the forger)\n",
           repaired_at ? (double)(repaired_at - asked_at) / 1e6 : -1.0,
           (unsigned long long)(w.repairs_uc - w.repairs_to[5]));
    assert_true(repaired_at != 0 && repaired_at - asked_at <= 64 * MS);
    rp_stop(&f);
}

/* ---- finding 5: rate debt ---------------------------------------------------------------- */

/* Finding 5: 1 s of forged NAKs (12 000 bytes) against a publisher limited to 10 MB/s left it 12.6
 * s of rate debt: nothing new went out for 12.6 s after the attack. Now repairs wait for the
 * limit's allowance like data, and data goes on during and right after the attack. */
static void test_no_rate_debt_after_nak_storm(void **state)
{
    (void)state;
    struct rp f;
    struct wire w = {0};
    rp_config(&f, 4u << 20);
    f.cfg.rate_bytes_per_s = 10000000;
    assert_int_equal(rp_start(&f), 0);
    uint32_t first = f.cfg.first_seq;
    struct rdps_source s = host_src(666, 1);
    uint64_t id = 0, in = 0, t0 = f.now;
    for (uint32_t step = 0; f.now < t0 + 1000 * MS; step++) {
        f.now += 100 * US;
        if (rp_append(&f, 64, id) == 1) /* 10 000 messages/s, 1 MB/s */
            id++;
        if (step % 40 == 0 && rdps__rel_pub_retained(&f.p) > 1100)
            nak_from(&f, &s, 1 + step % 2, first + step % 64, 1024, &in); /* 250 NAKs */
        take(&f, &w);
    }
    uint64_t end = f.now;
    uint64_t debt = f.p.adm.rate_paid_ns > end ? f.p.adm.rate_paid_ns - end : 0;
    /* After the attack: the next new datagram goes within a burst and a datagram's time. */
    uint64_t posted = w.data, next_data_at = 0;
    assert_int_equal(rp_append(&f, 64, id), 1);
    while (f.now < end + 20000 * MS && next_data_at == 0) {
        f.now += 100 * US;
        take(&f, &w);
        if (w.data > posted)
            next_data_at = f.now;
    }
    printf("finding 5: %llu forged bytes; rate debt at the end %.3f ms; next data %.3f ms later\n",
           (unsigned long long)in, (double)debt / 1e6, (double)(next_data_at - end) / 1e6);
    assert_true(in >= 10000);
    assert_true(debt <= RDPS_REL_RATE_BURST_NS + 1 * MS);
    assert_true(next_data_at != 0 && next_data_at - end <= 3 * MS);
    rp_stop(&f);
}

/* ---- finding 7: forged fastest receiver under max ---------------------------------------- */

/* Under max, one honest receiver draining 100 datagrams per ms; `forger`: STATUS {consumed = next
 * sequence, window 2^30} every millisecond from an unannounced source. Returns the honest
 * receiver's evictions in 1 s. */
static unsigned run_max_fastest(bool forger)
{
    struct rp f;
    rp_config(&f, 256 * RP_DGRAM);
    assert_int_equal(rp_start(&f), 0);
    uint32_t consumed = f.cfg.first_seq;
    rp_join(&f, 1, consumed, 1000);
    struct rdps_source forged = host_src(666, 4242);
    uint64_t id = 0, t0 = f.now;
    for (uint32_t step = 0; f.now < t0 + 1000 * MS; step++) {
        f.now += 10 * US;
        for (int k = 0; k < 2; k++) /* 200 offered per ms */
            if (rp_append(&f, 64, id) == 1)
                id++;
        take(&f, NULL);
        rdps__rel_pub_tick(&f.p, f.now);
        if (step % 100 == 0) {
            consumed =
                rdps__seq_lt(consumed + 100, f.p.adm.post_seq) ? consumed + 100 : f.p.adm.post_seq;
            if (rdps__seq_lt(consumed, rdps__rel_pub_oldest_seq(&f.p)))
                consumed = f.p.adm.post_seq; /* evicted: it jumps to the live position */
            rp_status(&f, 1, consumed, 1000);
            if (forger)
                status_from(&f, &forged, 7, f.p.adm.post_seq, 1u << 30);
        }
    }
    unsigned evicted = 0;
    for (unsigned i = 0; i < f.nev; i++)
        evicted +=
            f.ev[i].kind == RDPS_REL_PUB_EV_EVICTED && test_source_number(f.ev[i].source) == 1;
    rp_stop(&f);
    return evicted;
}

/* Finding 7: the audit's forged fastest receiver got an honest one evicted 1871 times. */
static void test_forged_fastest_receiver_under_max(void **state)
{
    (void)state;
    unsigned clean = run_max_fastest(false), forged = run_max_fastest(true);
    printf("finding 7: honest receiver evicted %u times undisturbed, %u with the forger\n", clean,
           forged);
    assert_int_equal(clean, 0);
    assert_int_equal(forged, 0);
}

/* ---- finding 16: forged echoes and clock steps ------------------------------------------ */

/* Finding 16: one forged echo claiming a 9.9 s round trip set the heartbeat minimum to 100 ms; a
 * forward step of the wall clock during a round trip did the same. */
static void test_forged_echo_does_not_pace_heartbeats(void **state)
{
    (void)state;
    struct rp f;
    rp_config(&f, 256 * RP_DGRAM);
    assert_int_equal(rp_start(&f), 0);
    uint32_t first = f.cfg.first_seq;
    rp_join(&f, 1, first, 100);
    uint64_t hb = rp_beat(&f);
    f.now += 100 * US;
    rp_status_echo(&f, 1, first, 100, hb, 0); /* the honest receiver: 100 us */
    assert_int_equal(rp_append(&f, 64, 1), 1);
    take(&f, NULL);
    uint64_t hb_min = rdps__rel_pub_tick(&f.p, f.now) - f.now;
    /* A forger (not announced) echoes a timestamp 9.9 s old, and a real heartbeat held 50 ms. */
    struct rdps_source forged = host_src(666, 1);
    uint8_t buf[RDPS_FRAME_STATUS_LEN];
    struct rdps_frame_view v;
    int len = rdps__frame_encode_status_echo(buf, sizeof(buf), RP_SESSION, RP_TOPIC, 7, first, 100,
                                             0, f.now - 9900 * MS);
    assert_int_equal(rdps__frame_decode(buf, (size_t)len, NULL, &v), RDPS_FRAME_OK);
    rdps__rel_pub_on_frame(&f.p, &forged, &v, f.now, f.now);
    hb = rp_beat(&f);
    f.now += 50 * MS;
    len = rdps__frame_encode_status_echo(buf, sizeof(buf), RP_SESSION, RP_TOPIC, 7, first, 100, 0,
                                         hb);
    assert_int_equal(rdps__frame_decode(buf, (size_t)len, NULL, &v), RDPS_FRAME_OK);
    rdps__rel_pub_on_frame(&f.p, &forged, &v, f.now, f.now);
    /* The honest receiver's echo arrives 100 us after its heartbeat, the wall clock having stepped
     * 5 s forward meanwhile. */
    hb = rp_beat(&f);
    f.now += 100 * US;
    len = rdps__frame_encode_status_echo(buf, sizeof(buf), RP_SESSION, RP_TOPIC, 7, first, 100, 0,
                                         hb);
    assert_int_equal(rdps__frame_decode(buf, (size_t)len, NULL, &v), RDPS_FRAME_OK);
    struct rdps_source honest = test_source(1);
    rdps__rel_pub_on_frame(&f.p, &honest, &v, f.now, f.now + 5000 * MS);
    assert_int_equal(rp_append(&f, 64, 2), 1);
    take(&f, NULL);
    uint64_t after = rdps__rel_pub_tick(&f.p, f.now) - f.now;
    printf("finding 16: heartbeat after data %llu us before, %llu us after the forged echoes and "
           "the clock step\n",
           (unsigned long long)(hb_min / US), (unsigned long long)(after / US));
    assert_int_equal(hb_min, f.cfg.heartbeat_min_ns);
    assert_int_equal(after, hb_min);
    rp_stop(&f);
}

/* ---- finding 17: forged eviction events ------------------------------------------------- */

/* Finding 17: one forged STATUS below the trail from a new (source, id) raised RECEIVER_EVICTED
 * at the application; a forged NAK's entry timing out raised RECEIVER_TIMED_OUT. Events come only
 * for receivers that were in flow control. */
static void test_no_events_for_forged_receivers(void **state)
{
    (void)state;
    struct rp f;
    rp_config(&f, 8 * RP_DGRAM);
    assert_int_equal(rp_start(&f), 0);
    uint32_t first = f.cfg.first_seq;
    for (uint64_t i = 0; i < 20; i++) {
        assert_int_equal(rp_append(&f, RP_PAYLOAD, i), 1);
        take(&f, NULL);
    }
    assert_true(rdps__seq_gt(rdps__rel_pub_oldest_seq(&f.p), first));
    struct rdps_source forged = host_src(666, 1);
    status_from(&f, &forged, 0x77, first, 100); /* below the trail */
    nak_from(&f, &forged, 0x78, first + 18, 1, NULL);
    status_from(&f, &forged, 0x79, f.p.adm.post_seq, 100); /* at the live position, then behind */
    status_from(&f, &forged, 0x79, first, 100);
    f.now += 10000 * MS;
    rdps__rel_pub_tick(&f.p, f.now);
    printf("finding 17: %u events from forged receivers\n", f.nev);
    assert_int_equal(f.nev, 0);
    assert_int_equal(f.p.counters.evictions, 0);
    /* A receiver in flow control that the ring overruns does raise one. */
    rp_join(&f, 1, f.p.adm.post_seq, 100);
    rp_join(&f, 2, f.p.adm.post_seq, 100);
    for (uint64_t i = 0; i < 10; i++) {
        assert_int_equal(rp_append(&f, RP_PAYLOAD, 20 + i), 1);
        take(&f, NULL);
        rp_status(&f, 2, f.p.adm.post_seq, 100);
    }
    assert_int_equal(f.nev, 1);
    assert_int_equal(f.ev[0].kind, RDPS_REL_PUB_EV_EVICTED);
    assert_int_equal(test_source_number(f.ev[0].source), 1);
    rp_stop(&f);
}

/* ---- finding 18: the largest message -------------------------------------------------- */

/* Finding 18: with a 64 KiB ring the largest message was 1 014 816 bytes, which append refused. */
static void test_max_message_fits_the_ring(void **state)
{
    (void)state;
    struct rp f;
    rp_config(&f, 64 * 1024);
    f.cfg.max_msg_len = 16u << 20;
    assert_int_equal(rp_start(&f), 0);
    uint32_t max = rdps__rel_pub_max_msg_len(&f.p);
    printf("finding 18: 64 KiB ring: largest message %u bytes\n", max);
    assert_true(max <= 64 * 1024);
    assert_true(max >= 60 * RP_PAYLOAD); /* the ring holds 64 datagrams of 1024 bytes */
    assert_true(rp_append(&f, max, 1) > 0);
    take(&f, NULL);
    assert_true(rp_append(&f, max, 2) > 0); /* again, once the first one left */
    assert_int_equal(rp_append(&f, (size_t)max + 1, 3), RDPS_EMSGSIZE);
    rp_stop(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_connect_holds_bounded),
        cmocka_unit_test(test_forged_status_does_not_throttle_min),
        cmocka_unit_test(test_table_flood_from_one_host),
        cmocka_unit_test(test_table_flood_from_many_hosts),
        cmocka_unit_test(test_receivers_capped_per_source_and_host),
        cmocka_unit_test(test_stalled_receiver_earns_its_way_back),
        cmocka_unit_test(test_repairs_budgeted_in_every_state),
        cmocka_unit_test(test_nak_amplification_bounded),
        cmocka_unit_test(test_repairs_bounded_by_data),
        cmocka_unit_test(test_unearned_repairs_take_turns),
        cmocka_unit_test(test_no_rate_debt_after_nak_storm),
        cmocka_unit_test(test_forged_fastest_receiver_under_max),
        cmocka_unit_test(test_forged_echo_does_not_pace_heartbeats),
        cmocka_unit_test(test_no_events_for_forged_receivers),
        cmocka_unit_test(test_max_message_fits_the_ring),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
