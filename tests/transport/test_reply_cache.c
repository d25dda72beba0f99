/* SPDX-License-Identifier: BSD-2-Clause */
/* test_reply_cache.c - reply-destination cache (hits, misses, O(1) LRU eviction, refusals,
 * teardown), AH retirement by send sequence, and the receive-source fill (GRH parsing, IB LID). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "rdps_ah_retire.h"
#include "rdps_reply_cache.h"
#include "rdps_rx_source.h"

#include <string.h>

/* Fake address handles: numbered tokens, so the test sees exactly what was made and retired. */
struct fake_ahs {
    int made, retired, fail_next, refuse_retire;
    int live[64];
    int tokens[64];
};

static int fake_make(void *user, const void *arg, void **ah)
{
    struct fake_ahs *f = user;
    (void)arg;
    if (f->fail_next) {
        f->fail_next = 0;
        return RDPS_ENOMEM;
    }
    int id = f->made++;
    f->live[id] = 1;
    f->tokens[id] = id;
    *ah = &f->tokens[id];
    return 0;
}

static int fake_retire(void *user, void *ah)
{
    struct fake_ahs *f = user;
    if (f->refuse_retire)
        return RDPS_EAGAIN;
    int id = *(int *)ah;
    assert_int_equal(f->live[id], 1); /* never retired twice */
    f->live[id] = 0;
    f->retired++;
    return 0;
}

/* Makes and retires without tracking tokens (for caches making more AHs than fake_ahs numbers). */
static int fake_make_counted(void *user, const void *arg, void **ah)
{
    struct fake_ahs *f = user;
    (void)arg;
    f->made++;
    *ah = &f->tokens[0];
    return 0;
}

static int fake_retire_counted(void *user, void *ah)
{
    struct fake_ahs *f = user;
    (void)ah;
    f->retired++;
    return 0;
}

static struct rdps_reply_key key_of(uint8_t host, uint32_t qpn)
{
    struct rdps_reply_key k;
    memset(&k, 0, sizeof(k));
    k.gid[10] = k.gid[11] = 0xff;
    k.gid[15] = host;
    k.qpn = qpn;
    return k;
}

static const struct rdps_dest *get(struct rdps_reply_cache *c, uint8_t host, uint32_t qpn)
{
    struct rdps_reply_key k = key_of(host, qpn);
    const struct rdps_dest *d = NULL;
    if (rdps__reply_cache_get(c, &k, NULL, &d) < 0)
        return NULL;
    return d;
}

static void test_hit_miss_and_keying(void **state)
{
    (void)state;
    struct fake_ahs f = {0};
    struct rdps_reply_cache_ops ops = {fake_make, fake_retire, &f};
    struct rdps_reply_cache c;

    assert_int_equal(rdps__reply_cache_init(&c, 4, 0x1234, 42, &ops), 0);
    const struct rdps_dest *d1 = get(&c, 1, 100);
    assert_non_null(d1);
    assert_int_equal(d1->remote_qpn, 100);
    assert_int_equal(d1->remote_qkey, 0x1234);
    assert_ptr_equal(get(&c, 1, 100), d1);
    assert_int_equal(f.made, 1);
    const struct rdps_dest *d2 = get(&c, 1, 101);
    const struct rdps_dest *d3 = get(&c, 2, 100);
    assert_ptr_not_equal(d1, d2);
    assert_ptr_not_equal(d1, d3);
    /* Same GID and QPN but a LID (IB without GRH) is another source. */
    struct rdps_reply_key k = key_of(1, 100);
    k.lid = 7;
    const struct rdps_dest *d4 = NULL;
    assert_int_equal(rdps__reply_cache_get(&c, &k, NULL, &d4), 0);
    assert_ptr_not_equal(d1, d4);
    assert_int_equal(c.hits, 1);
    assert_int_equal(c.misses, 4);
    assert_int_equal(c.created, 4);
    assert_int_equal(f.made, 4);
    rdps__reply_cache_fini(&c);
    assert_int_equal(f.retired, 4);
}

static void test_lru_eviction(void **state)
{
    (void)state;
    struct fake_ahs f = {0};
    struct rdps_reply_cache_ops ops = {fake_make, fake_retire, &f};
    struct rdps_reply_cache c;

    assert_int_equal(rdps__reply_cache_init(&c, 3, 1, 7, &ops), 0);
    get(&c, 9, 1); /* ah 0 */
    get(&c, 9, 2); /* ah 1 */
    get(&c, 9, 3); /* ah 2 */
    get(&c, 9, 1); /* touch 1: now qpn 2 is the oldest */
    const struct rdps_dest *d4 = get(&c, 9, 4);
    assert_non_null(d4);
    assert_int_equal(c.evictions, 1);
    assert_int_equal(f.live[1], 0); /* qpn 2's AH went */
    assert_int_equal(f.live[0], 1);
    assert_int_equal(f.live[2], 1);
    /* qpn 1 and 3 still hit; qpn 2 is a miss again (and evicts qpn 4, the oldest now). */
    uint64_t misses = c.misses;
    get(&c, 9, 1);
    get(&c, 9, 3);
    assert_int_equal(c.misses, misses);
    get(&c, 9, 2);
    assert_int_equal(c.misses, misses + 1);
    assert_int_equal(c.used, 3);
    assert_int_equal(f.live[3], 0);
    /* Steady churn over many sources answered once keeps the table bounded and consistent, and
     * takes only the entry on probation: qpn 1 and 3, answered again while cached, stay. */
    for (uint32_t q = 10; q < 40; q++)
        assert_int_equal(get(&c, 9, q)->remote_qpn, q);
    misses = c.misses;
    get(&c, 9, 39); /* the newest hits */
    get(&c, 9, 1);
    get(&c, 9, 3);
    assert_int_equal(c.misses, misses);
    assert_int_equal(f.made - f.retired, 3);
    rdps__reply_cache_fini(&c);
    assert_int_equal(f.made, f.retired);
}

/*
 * Issue 28 finding 10: 1024 forged sources each answered once per round (a STATUS to each forged
 * reliable stream every status interval) between two answers to the real publisher. In a plain
 * LRU of 256 the publisher's AH was evicted and made again every round (and, with the retire
 * queue full, its NAK/STATUS refused); answered again while cached, it is protected now.
 */
static void test_sources_answered_once_cannot_evict_a_regular(void **state)
{
    (void)state;
    struct fake_ahs f = {0};
    struct rdps_reply_cache_ops ops = {fake_make_counted, fake_retire_counted, &f};
    struct rdps_reply_cache c;
    assert_int_equal(rdps__reply_cache_init(&c, 256, 1, 99, &ops), 0);
    struct rdps_reply_key publisher = key_of(1, 0x11);
    get(&c, 1, 0x11); /* its stream's first STATUS and NAK */
    get(&c, 1, 0x11);
    unsigned publisher_misses = 0;
    for (unsigned round = 0; round < 8; round++) {
        for (uint32_t i = 0; i < 1024; i++)
            assert_non_null(get(&c, (uint8_t)(2 + i % 200), 0x1000 + i));
        publisher_misses += !rdps__reply_cache_contains(&c, &publisher);
        assert_int_equal(get(&c, 1, 0x11)->remote_qpn, 0x11);
    }
    print_message("finding 10: the publisher's AH made again %u times in 8 rounds of 1024 forged "
                  "sources; %llu AHs made\n",
                  publisher_misses, (unsigned long long)c.created);
    assert_int_equal(publisher_misses, 0);
    assert_int_equal(c.used, 256);
    rdps__reply_cache_fini(&c);
}

static void test_refusals_and_bad_init(void **state)
{
    (void)state;
    struct fake_ahs f = {0};
    struct rdps_reply_cache_ops ops = {fake_make, fake_retire, &f};
    struct rdps_reply_cache c;
    struct rdps_reply_key k = key_of(3, 5);
    const struct rdps_dest *d = NULL;

    assert_int_equal(rdps__reply_cache_init(&c, 0, 1, 0, &ops), RDPS_EINVAL);
    rdps__reply_cache_fini(&c); /* a failed init leaves a finalisable cache */
    struct rdps_reply_cache_ops no_retire = {fake_make, NULL, &f};
    assert_int_equal(rdps__reply_cache_init(&c, 2, 1, 0, &no_retire), RDPS_EINVAL);
    assert_int_equal(rdps__reply_cache_init(&c, 2, 1, 0, &ops), 0);
    f.fail_next = 1;
    assert_int_equal(rdps__reply_cache_get(&c, &k, NULL, &d), RDPS_ENOMEM);
    assert_null(d);
    assert_int_equal(c.refused, 1);
    assert_int_equal(c.used, 0);
    /* The next request for the same source retries. */
    assert_int_equal(rdps__reply_cache_get(&c, &k, NULL, &d), 0);
    assert_non_null(get(&c, 3, 6));
    /* Full, and the evicted AH cannot be retired now: the new source is refused, nothing lost. */
    f.refuse_retire = 1;
    assert_null(get(&c, 3, 7));
    assert_int_equal(c.refused, 2);
    assert_int_equal(c.evictions, 0);
    assert_int_equal(f.made, 2);
    assert_ptr_equal(get(&c, 3, 5), d); /* still cached */
    f.refuse_retire = 0;
    assert_non_null(get(&c, 3, 7));
    assert_int_equal(c.evictions, 1);
    /* A failed make after an eviction leaves a free entry that the next miss reuses. */
    f.fail_next = 1;
    assert_null(get(&c, 3, 8));
    assert_int_equal(c.used, 1);
    assert_non_null(get(&c, 3, 8));
    assert_non_null(get(&c, 3, 9));
    assert_int_equal(c.used, 2);
    rdps__reply_cache_fini(&c);
    assert_int_equal(f.made, f.retired);
}

/* ---- AH retirement ---- */

static int destroyed[16], destroyed_count;

static void fake_destroy(void *ah)
{
    destroyed[destroyed_count++] = *(int *)ah;
}

static void test_ah_retire_waits_for_sends(void **state)
{
    (void)state;
    static int ahs[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    struct rdps_ah_retire r;
    destroyed_count = 0;
    assert_int_equal(rdps__ah_retire_init(&r, 0, fake_destroy), RDPS_EINVAL);
    assert_int_equal(rdps__ah_retire_init(&r, 2, fake_destroy), 0);

    /* No send outstanding (done == pending_until): destroyed at once. */
    assert_int_equal(rdps__ah_retire(&r, &ahs[0], 10, 10), 0);
    assert_int_equal(destroyed_count, 1);
    /* WRs 10..14 outstanding: kept until everything below 15 completed. */
    assert_int_equal(rdps__ah_retire(&r, &ahs[1], 15, 10), 0);
    assert_int_equal(rdps__ah_retire(&r, &ahs[2], 20, 10), 0);
    assert_int_equal(destroyed_count, 1);
    /* Full: refused, the caller keeps the AH. */
    assert_int_equal(rdps__ah_retire(&r, &ahs[3], 20, 10), RDPS_EAGAIN);
    assert_int_equal(r.refused, 1);
    rdps__ah_retire_sweep(&r, 14);
    assert_int_equal(destroyed_count, 1);
    rdps__ah_retire_sweep(&r, 15);
    assert_int_equal(destroyed_count, 2);
    assert_int_equal(destroyed[1], 1);
    /* Even when its own sends are done, an AH behind a waiting one waits (ring order). */
    assert_int_equal(rdps__ah_retire(&r, &ahs[3], 16, 16), 0);
    assert_int_equal(destroyed_count, 2);
    rdps__ah_retire_sweep(&r, 20);
    assert_int_equal(destroyed_count, 4);
    assert_int_equal(destroyed[2], 2);
    assert_int_equal(destroyed[3], 3);
    /* fini destroys whatever still waits. */
    assert_int_equal(rdps__ah_retire(&r, &ahs[4], 30, 20), 0);
    rdps__ah_retire_fini(&r);
    assert_int_equal(destroyed_count, 5);
    assert_int_equal(destroyed[4], 4);
    rdps__ah_retire_fini(&r); /* twice is harmless */
}

/* ---- receive source ---- */

static void test_grh_source_gid(void **state)
{
    (void)state;
    uint8_t grh[40], gid[16];

    /* RoCE v2 over IPv4: 20 zero bytes, then an IPv4 header from 169.254.77.2. */
    memset(grh, 0, sizeof(grh));
    grh[20] = 0x45;
    grh[29] = 17; /* UDP */
    const uint8_t src[4] = {169, 254, 77, 2}, dst[4] = {169, 254, 77, 1};
    memcpy(grh + 32, src, 4);
    memcpy(grh + 36, dst, 4);
    rdps__grh_source_gid(grh, gid);
    const uint8_t v4_mapped[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 169, 254, 77, 2};
    assert_memory_equal(gid, v4_mapped, 16);

    /* IB / RoCE v1 GRH: version 6, source GID at offset 8. */
    memset(grh, 0, sizeof(grh));
    grh[0] = 0x60;
    for (int i = 0; i < 16; i++) {
        grh[8 + i] = (uint8_t)(0xf0 + i);
        grh[24 + i] = 0x11;
    }
    rdps__grh_source_gid(grh, gid);
    for (int i = 0; i < 16; i++)
        assert_int_equal(gid[i], 0xf0 + i);

    /* A GRH whose first 20 bytes are not all zero is never read as IPv4 (one stray byte). */
    memset(grh, 0, sizeof(grh));
    grh[20] = 0x45;
    grh[19] = 1;
    grh[8] = 0xaa;
    rdps__grh_source_gid(grh, gid);
    assert_int_equal(gid[0], 0xaa);
}

static void test_fill_source_ib_lid(void **state)
{
    (void)state;
    uint8_t grh[40];
    struct rdps_rx_datagram d;
    struct rdps_reply_key k1, k2;

    /* IB without a GRH: the buffer's first 40 bytes are garbage, the LID is the identity. */
    memset(grh, 0x5a, sizeof(grh));
    memset(&d, 0xff, sizeof(d));
    d.src_qpn = 0x42;
    rdps__rx_fill_source(&d, grh, false, 0x1234);
    assert_false(d.has_src_gid);
    assert_int_equal(d.src_lid, 0x1234);
    const uint8_t zero[16] = {0};
    assert_memory_equal(d.src_gid, zero, 16);
    rdps__rx_reply_key(&d, &k1);
    assert_int_equal(k1.lid, 0x1234);
    assert_int_equal(k1.qpn, 0x42);
    /* Two hosts with the same QPN differ by LID, so they are two sources. */
    rdps__rx_fill_source(&d, grh, false, 0x1235);
    rdps__rx_reply_key(&d, &k2);
    assert_memory_not_equal(&k1, &k2, sizeof(k1));

    /* With a GRH the GID is the identity and src_lid is 0 (the slid is not used as identity). */
    memset(grh, 0, sizeof(grh));
    grh[0] = 0x60;
    grh[8] = 0xfe;
    grh[9] = 0x80;
    grh[23] = 9;
    rdps__rx_fill_source(&d, grh, true, 0x1234);
    assert_true(d.has_src_gid);
    assert_int_equal(d.src_lid, 0);
    assert_int_equal(d.src_gid[0], 0xfe);
    assert_int_equal(d.src_gid[15], 9);
    rdps__rx_reply_key(&d, &k1);
    assert_int_equal(k1.lid, 0);
    assert_int_equal(k1.pad, 0);
}

/* Whether a datagram went to a group, from its GRH: IPv4 destination in 224.0.0.0/4 on RoCE v2,
 * a multicast GID (ff..) on IB/RoCE v1; never without a GRH. */
static void test_fill_source_to_multicast(void **state)
{
    (void)state;
    uint8_t grh[40];
    struct rdps_rx_datagram d;
    memset(grh, 0, sizeof(grh));
    grh[20] = 0x45;
    const uint8_t unicast[4] = {169, 254, 77, 1}, group[4] = {239, 192, 0, 1};
    memcpy(grh + 36, unicast, 4);
    rdps__rx_fill_source(&d, grh, true, 0);
    assert_false(d.to_multicast);
    memcpy(grh + 36, group, 4);
    rdps__rx_fill_source(&d, grh, true, 0);
    assert_true(d.to_multicast);
    memset(grh, 0, sizeof(grh));
    grh[0] = 0x60;
    grh[24] = 0xfe;
    rdps__rx_fill_source(&d, grh, true, 0);
    assert_false(d.to_multicast);
    grh[24] = 0xff;
    rdps__rx_fill_source(&d, grh, true, 0);
    assert_true(d.to_multicast);
    rdps__rx_fill_source(&d, grh, false, 7); /* no GRH: the bytes are garbage, unicast */
    assert_false(d.to_multicast);
}

/*
 * contains() looks without touching: no counter moves and the recency order
 * stays, so asking whether a source is cached cannot save it from eviction.
 * A source key from rdps_source equals the key of the same sender's datagram.
 */
static void test_contains_and_source_key(void **state)
{
    (void)state;
    struct fake_ahs f = {0};
    struct rdps_reply_cache_ops ops = {fake_make, fake_retire, &f};
    struct rdps_reply_cache c;
    assert_int_equal(rdps__reply_cache_init(&c, 2, 1, 7, &ops), 0);
    assert_non_null(get(&c, 1, 100));
    assert_non_null(get(&c, 2, 200));
    struct rdps_reply_key k1 = key_of(1, 100), k3 = key_of(3, 300);
    assert_true(rdps__reply_cache_contains(&c, &k1));
    assert_false(rdps__reply_cache_contains(&c, &k3));
    assert_int_equal(c.hits, 0);
    assert_int_equal(c.misses, 2);
    /* 1 is still the least recently used: a third source evicts it, not 2. */
    assert_non_null(get(&c, 3, 300));
    assert_false(rdps__reply_cache_contains(&c, &k1));
    struct rdps_reply_key k2 = key_of(2, 200);
    assert_true(rdps__reply_cache_contains(&c, &k2));

    struct rdps_rx_datagram rx;
    memset(&rx, 0, sizeof(rx));
    memcpy(rx.src_gid, k2.gid, 16);
    rx.has_src_gid = true;
    rx.src_qpn = 200;
    rdps_source src;
    memset(&src, 0, sizeof(src));
    memcpy(src.gid, k2.gid, 16);
    src.has_gid = 1;
    src.qpn = 200;
    struct rdps_reply_key from_rx, from_src;
    rdps__rx_reply_key(&rx, &from_rx);
    rdps__source_reply_key(&src, &from_src);
    assert_memory_equal(&from_rx, &from_src, sizeof(from_rx));
    /* Without a GRH: LID + QPN, whatever the (unused) GID bytes hold. */
    rx.has_src_gid = false;
    memset(rx.src_gid, 0, 16);
    rx.src_lid = 9;
    src.has_gid = 0;
    src.lid = 9;
    rdps__rx_reply_key(&rx, &from_rx);
    rdps__source_reply_key(&src, &from_src);
    assert_memory_equal(&from_rx, &from_src, sizeof(from_rx));
    rdps__reply_cache_fini(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hit_miss_and_keying),
        cmocka_unit_test(test_lru_eviction),
        cmocka_unit_test(test_sources_answered_once_cannot_evict_a_regular),
        cmocka_unit_test(test_refusals_and_bad_init),
        cmocka_unit_test(test_ah_retire_waits_for_sends),
        cmocka_unit_test(test_grh_source_gid),
        cmocka_unit_test(test_fill_source_ib_lid),
        cmocka_unit_test(test_fill_source_to_multicast),
        cmocka_unit_test(test_contains_and_source_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
