/* test_reply_cache.c - reply-destination cache: hits, misses, LRU eviction, failures, teardown. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "rdps_reply_cache.h"

#include <string.h>

/* Fake address handles: numbered tokens, so the test sees exactly what was made and freed. */
struct fake_ahs {
    int made, freed, fail_next;
    int live[64];
    int tokens[64];
};

static void *fake_make(void *user, const void *arg)
{
    struct fake_ahs *f = user;
    (void)arg;
    if (f->fail_next) {
        f->fail_next = 0;
        return NULL;
    }
    int id = f->made++;
    f->live[id] = 1;
    f->tokens[id] = id;
    return &f->tokens[id];
}

static void fake_free(void *user, void *ah)
{
    struct fake_ahs *f = user;
    int id = *(int *)ah;
    assert_int_equal(f->live[id], 1); /* never freed twice */
    f->live[id] = 0;
    f->freed++;
}

static void gid_of(uint8_t gid[16], uint8_t host)
{
    memset(gid, 0, 16);
    gid[10] = gid[11] = 0xff;
    gid[15] = host;
}

static void test_hit_miss_and_keying(void **state)
{
    (void)state;
    struct fake_ahs f = {0};
    struct rdps_reply_cache_ops ops = {fake_make, fake_free, &f};
    struct rdps_reply_cache c;
    uint8_t g1[16], g2[16];
    gid_of(g1, 1);
    gid_of(g2, 2);

    assert_int_equal(rdps__reply_cache_init(&c, 4, 0x1234, &ops), 0);
    const struct rdps_dest *d1 = rdps__reply_cache_get(&c, g1, 100, NULL);
    assert_non_null(d1);
    assert_int_equal(d1->remote_qpn, 100);
    assert_int_equal(d1->remote_qkey, 0x1234);
    assert_ptr_equal(rdps__reply_cache_get(&c, g1, 100, NULL), d1);
    /* Same GID, other QPN and same QPN, other GID are other sources. */
    const struct rdps_dest *d2 = rdps__reply_cache_get(&c, g1, 101, NULL);
    const struct rdps_dest *d3 = rdps__reply_cache_get(&c, g2, 100, NULL);
    assert_ptr_not_equal(d2, d1);
    assert_ptr_not_equal(d3, d1);
    assert_ptr_not_equal(d2->ah, d1->ah);
    assert_int_equal(f.made, 3);
    assert_int_equal(c.hits, 1);
    assert_int_equal(c.misses, 3);
    rdps__reply_cache_fini(&c);
    assert_int_equal(f.freed, 3);
}

static void test_lru_eviction(void **state)
{
    (void)state;
    struct fake_ahs f = {0};
    struct rdps_reply_cache_ops ops = {fake_make, fake_free, &f};
    struct rdps_reply_cache c;
    uint8_t g[16];
    gid_of(g, 9);

    assert_int_equal(rdps__reply_cache_init(&c, 3, 1, &ops), 0);
    rdps__reply_cache_get(&c, g, 1, NULL); /* ah 0 */
    rdps__reply_cache_get(&c, g, 2, NULL); /* ah 1 */
    rdps__reply_cache_get(&c, g, 3, NULL); /* ah 2 */
    rdps__reply_cache_get(&c, g, 1, NULL); /* touch 1: now qpn 2 is the oldest */
    const struct rdps_dest *d4 = rdps__reply_cache_get(&c, g, 4, NULL);
    assert_non_null(d4);
    assert_int_equal(c.evictions, 1);
    assert_int_equal(f.live[1], 0); /* qpn 2's AH went */
    assert_int_equal(f.live[0], 1);
    assert_int_equal(f.live[2], 1);
    /* qpn 1 and 3 still hit; qpn 2 is a miss again. */
    uint64_t misses = c.misses;
    rdps__reply_cache_get(&c, g, 1, NULL);
    rdps__reply_cache_get(&c, g, 3, NULL);
    assert_int_equal(c.misses, misses);
    rdps__reply_cache_get(&c, g, 2, NULL);
    assert_int_equal(c.misses, misses + 1);
    assert_int_equal(c.used, 3);
    /* Steady churn over many sources keeps the table bounded and consistent. */
    for (uint32_t q = 10; q < 40; q++)
        assert_int_equal(rdps__reply_cache_get(&c, g, q, NULL)->remote_qpn, q);
    assert_int_equal(f.made - f.freed, 3);
    rdps__reply_cache_fini(&c);
    assert_int_equal(f.made, f.freed);
}

static void test_make_failure_and_bad_init(void **state)
{
    (void)state;
    struct fake_ahs f = {0};
    struct rdps_reply_cache_ops ops = {fake_make, fake_free, &f};
    struct rdps_reply_cache c;
    uint8_t g[16];
    gid_of(g, 3);

    assert_int_equal(rdps__reply_cache_init(&c, 0, 1, &ops), RDPS_EINVAL);
    rdps__reply_cache_fini(&c); /* a failed init leaves a zeroed, finalisable cache */
    struct rdps_reply_cache_ops no_free = {fake_make, NULL, &f};
    assert_int_equal(rdps__reply_cache_init(&c, 2, 1, &no_free), RDPS_EINVAL);
    assert_int_equal(rdps__reply_cache_init(&c, 2, 1, &ops), 0);
    f.fail_next = 1;
    assert_null(rdps__reply_cache_get(&c, g, 5, NULL));
    assert_int_equal(c.failures, 1);
    assert_int_equal(c.used, 0);
    /* The next datagram from the same source retries. */
    assert_non_null(rdps__reply_cache_get(&c, g, 5, NULL));
    rdps__reply_cache_fini(&c);
    assert_int_equal(f.made, f.freed);
}

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
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hit_miss_and_keying),
        cmocka_unit_test(test_lru_eviction),
        cmocka_unit_test(test_make_failure_and_bad_init),
        cmocka_unit_test(test_grh_source_gid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
