/* SPDX-License-Identifier: BSD-2-Clause */
/* test_md_snapshot.c - book snapshots: split plans within the part size, encode/decode round trips
 * (one part, many parts in any order, duplicates, restarts), and hostile parts refused by reason.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "md.pb-c.h"
#include "md_snapshot.h"
#include "mdutil_test_rng.h"

struct fixture {
    struct md_snap_symbol *symbols;
    struct md_snap_order *orders;
    struct md_snap snap;
};

/* n_symbols symbols with locates 1.., n_orders orders on them; values over their whole ranges. */
static void make_snapshot(struct fixture *f, uint32_t n_symbols, uint32_t n_orders, uint64_t seed)
{
    rng_state = seed;
    f->symbols = calloc(n_symbols ? n_symbols : 1, sizeof(*f->symbols));
    f->orders = calloc(n_orders ? n_orders : 1, sizeof(*f->orders));
    assert_true(f->symbols && f->orders);
    for (uint32_t i = 0; i < n_symbols; i++)
        f->symbols[i] = (struct md_snap_symbol){.locate = n_symbols - i, /* not sorted */
                                                .vwap_num = rng_next(),
                                                .vwap_num_hi = rng_next() >> 40,
                                                .vwap_den = rng_next() >> (rng_next() % 64)};
    for (uint32_t i = 0; i < n_orders; i++)
        f->orders[i] = (struct md_snap_order){
            .ref = i % 7 == 0 ? UINT64_MAX - i : rng_next() >> (rng_next() % 64),
            .locate = n_symbols ? 1 + (uint32_t)(rng_next() % n_symbols) : 1,
            .side = rng_next() & 1 ? 'B' : 'S',
            .shares = (uint32_t)rng_next(),
            .price = i % 5 == 0 ? UINT32_MAX : (uint32_t)(rng_next() % 20000000)};
    f->snap = (struct md_snap){.channel = 3,
                               .seq = 0x123456789ull + seed,
                               .symbols = f->symbols,
                               .n_symbols = n_symbols,
                               .orders = f->orders,
                               .n_orders = n_orders};
}

static void free_snapshot(struct fixture *f)
{
    free(f->symbols);
    free(f->orders);
}

static void assert_same_snapshot(const struct md_snap *got, const struct md_snap *want)
{
    assert_non_null(got);
    assert_int_equal(got->channel, want->channel);
    assert_int_equal(got->seq, want->seq);
    assert_int_equal(got->n_symbols, want->n_symbols);
    assert_int_equal(got->n_orders, want->n_orders);
    for (uint32_t i = 0; i < want->n_symbols; i++) {
        assert_int_equal(got->symbols[i].locate, want->symbols[i].locate);
        assert_int_equal(got->symbols[i].vwap_num, want->symbols[i].vwap_num);
        assert_int_equal(got->symbols[i].vwap_num_hi, want->symbols[i].vwap_num_hi);
        assert_int_equal(got->symbols[i].vwap_den, want->symbols[i].vwap_den);
    }
    for (uint32_t i = 0; i < want->n_orders; i++) { /* same order: time priority kept */
        assert_int_equal(got->orders[i].ref, want->orders[i].ref);
        assert_int_equal(got->orders[i].locate, want->orders[i].locate);
        assert_int_equal(got->orders[i].side, want->orders[i].side);
        assert_int_equal(got->orders[i].shares, want->orders[i].shares);
        assert_int_equal(got->orders[i].price, want->orders[i].price);
    }
}

struct parts {
    uint8_t **data;
    size_t *len;
    uint32_t count;
};

static void encode_all(const struct md_snap *s, size_t max_part_bytes, struct parts *out)
{
    struct md_snap_plan plan;
    assert_int_equal(md_snap_plan(s, max_part_bytes, &plan), 0);
    out->count = plan.part_count;
    out->data = calloc(plan.part_count, sizeof(*out->data));
    out->len = calloc(plan.part_count, sizeof(*out->len));
    assert_true(out->data && out->len);
    for (uint32_t i = 0; i < plan.part_count; i++) {
        out->data[i] = malloc(max_part_bytes);
        assert_non_null(out->data[i]);
        assert_int_equal(
            md_snap_encode_part(s, &plan, i, out->data[i], max_part_bytes, &out->len[i]), 0);
        assert_true(out->len[i] > 0 && out->len[i] <= max_part_bytes);
    }
}

static void free_parts(struct parts *p)
{
    for (uint32_t i = 0; i < p->count; i++)
        free(p->data[i]);
    free(p->data);
    free(p->len);
}

static struct md_snap_asm_config asm_config(void)
{
    return (struct md_snap_asm_config){
        .max_orders = 200000, .max_symbols = 10000, .max_parts = 4096, .max_part_bytes = 65536};
}

/* ---- plans ---- */

static void test_plan(void **state)
{
    (void)state;
    struct fixture f;
    make_snapshot(&f, 300, 5000, 1);
    struct md_snap_plan plan;
    assert_int_equal(md_snap_plan(&f.snap, MD_SNAP_PART_MIN - 1, &plan), -EINVAL);
    /* Big enough for everything: one part. */
    assert_int_equal(md_snap_plan(&f.snap, 1 << 20, &plan), 0);
    assert_int_equal(plan.part_count, 1);
    assert_int_equal(plan.orders_per_part, 5000);
    assert_int_equal(plan.symbols_per_part, 300);
    /* 4 KiB parts: the worst case of each part fits, and no fewer parts could hold it. */
    assert_int_equal(md_snap_plan(&f.snap, 4096, &plan), 0);
    uint64_t worst = (uint64_t)plan.orders_per_part * MD_SNAP_ORDER_MAX_BYTES +
                     (uint64_t)plan.symbols_per_part * MD_SNAP_SYMBOL_MAX_BYTES;
    assert_true(worst + MD_SNAP_PART_OVERHEAD <= 4096);
    uint64_t need = 5000ull * MD_SNAP_ORDER_MAX_BYTES + 300ull * MD_SNAP_SYMBOL_MAX_BYTES;
    assert_true((uint64_t)plan.part_count * (4096 - MD_SNAP_PART_OVERHEAD) >= need);
    assert_true((uint64_t)(plan.part_count - 2) * (4096 - MD_SNAP_PART_OVERHEAD) < need);
    assert_true((uint64_t)plan.orders_per_part * plan.part_count >= 5000);
    assert_true((uint64_t)plan.symbols_per_part * plan.part_count >= 300);
    /* The smallest parts: one order and one symbol each. */
    assert_int_equal(md_snap_plan(&f.snap, MD_SNAP_PART_MIN, &plan), 0);
    assert_int_equal(plan.part_count, 5000);
    assert_int_equal(plan.orders_per_part, 1);
    assert_int_equal(plan.symbols_per_part, 1);
    /* Nothing at all: one empty part. */
    struct md_snap empty = {.channel = 1, .seq = 0};
    assert_int_equal(md_snap_plan(&empty, 4096, &plan), 0);
    assert_int_equal(plan.part_count, 1);
    free_snapshot(&f);
}

/* ---- round trips ---- */

static void roundtrip(uint32_t n_symbols, uint32_t n_orders, size_t max_part_bytes, bool shuffle,
                      bool duplicates)
{
    struct fixture f;
    make_snapshot(&f, n_symbols, n_orders, n_orders + 17);
    struct parts parts;
    encode_all(&f.snap, max_part_bytes, &parts);
    struct md_snap_asm a;
    struct md_snap_asm_config cfg = asm_config();
    cfg.max_part_bytes = max_part_bytes;
    assert_int_equal(md_snap_asm_init(&a, &cfg), 0);
    uint32_t *order = malloc(parts.count * sizeof(*order));
    assert_non_null(order);
    for (uint32_t i = 0; i < parts.count; i++)
        order[i] = i;
    for (uint32_t i = parts.count; shuffle && i > 1; i--) {
        uint32_t j = (uint32_t)(rng_next() % i), t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
    uint64_t dups = 0;
    for (uint32_t i = 0; i < parts.count; i++) {
        int rc = md_snap_asm_add(&a, parts.data[order[i]], parts.len[order[i]]);
        assert_int_equal(rc, i + 1 == parts.count ? MD_SNAP_COMPLETE : MD_SNAP_INCOMPLETE);
        if (i + 1 < parts.count) {
            assert_null(md_snap_asm_result(&a));
            if (duplicates && i % 3 == 0) {
                uint32_t again = order[rng_next() % (i + 1)];
                assert_int_equal(md_snap_asm_add(&a, parts.data[again], parts.len[again]),
                                 MD_SNAP_INCOMPLETE);
                dups++;
            }
        }
    }
    assert_same_snapshot(md_snap_asm_result(&a), &f.snap);
    assert_int_equal(a.counters.parts, parts.count);
    assert_int_equal(a.counters.duplicates, dups);
    assert_int_equal(a.counters.completed, 1);
    assert_int_equal(a.counters.restarts, 0);
    /* The next add starts afresh: the same snapshot again completes again. */
    for (uint32_t i = 0; i < parts.count; i++)
        md_snap_asm_add(&a, parts.data[i], parts.len[i]);
    assert_same_snapshot(md_snap_asm_result(&a), &f.snap);
    assert_int_equal(a.counters.completed, 2);
    md_snap_asm_fini(&a);
    free(order);
    free_parts(&parts);
    free_snapshot(&f);
}

static void test_roundtrip_one_part(void **state)
{
    (void)state;
    roundtrip(10, 100, 65536, false, false);
    roundtrip(1, 0, 65536, false, false);
    roundtrip(0, 0, 65536, false, false);
}

static void test_roundtrip_many_parts_any_order(void **state)
{
    (void)state;
    roundtrip(300, 5000, 4096, false, false);
    roundtrip(300, 5000, 4096, true, true);
    roundtrip(1000, 20, 1024, true, true); /* more symbol parts than order parts */
    roundtrip(7, 3000, MD_SNAP_PART_MIN, true, false);
}

/* The demo's scale: 8 000 symbols over 8 channels, here all on one. */
static void test_roundtrip_8000_symbols(void **state)
{
    (void)state;
    roundtrip(8000, 150000, 65536, true, false);
}

static void test_restart_on_another_snapshot(void **state)
{
    (void)state;
    struct fixture f1, f2;
    make_snapshot(&f1, 50, 2000, 1);
    make_snapshot(&f2, 50, 2000, 2); /* another seq */
    struct parts p1, p2;
    encode_all(&f1.snap, 4096, &p1);
    encode_all(&f2.snap, 4096, &p2);
    assert_true(p1.count > 3);
    struct md_snap_asm a;
    struct md_snap_asm_config cfg = asm_config();
    assert_int_equal(md_snap_asm_init(&a, &cfg), 0);
    for (uint32_t i = 0; i < p1.count - 1; i++)
        assert_int_equal(md_snap_asm_add(&a, p1.data[i], p1.len[i]), MD_SNAP_INCOMPLETE);
    /* The second snapshot's parts abandon the first; its last part no longer completes it. */
    for (uint32_t i = 0; i < p2.count; i++)
        assert_int_equal(md_snap_asm_add(&a, p2.data[i], p2.len[i]),
                         i + 1 == p2.count ? MD_SNAP_COMPLETE : MD_SNAP_INCOMPLETE);
    assert_same_snapshot(md_snap_asm_result(&a), &f2.snap);
    assert_int_equal(a.counters.restarts, 1);
    /* Reset drops a snapshot in progress. */
    assert_int_equal(md_snap_asm_add(&a, p1.data[0], p1.len[0]), MD_SNAP_INCOMPLETE);
    md_snap_asm_reset(&a);
    for (uint32_t i = 1; i < p1.count; i++)
        assert_int_equal(md_snap_asm_add(&a, p1.data[i], p1.len[i]), MD_SNAP_INCOMPLETE);
    assert_int_equal(md_snap_asm_add(&a, p1.data[0], p1.len[0]), MD_SNAP_COMPLETE);
    assert_same_snapshot(md_snap_asm_result(&a), &f1.snap);
    md_snap_asm_fini(&a);
    free_parts(&p1);
    free_parts(&p2);
    free_snapshot(&f1);
    free_snapshot(&f2);
}

/* ---- encoder errors ---- */

static void test_encode_errors(void **state)
{
    (void)state;
    struct fixture f;
    make_snapshot(&f, 5, 20, 3);
    struct md_snap_plan plan;
    uint8_t buf[4096];
    size_t len;
    assert_int_equal(md_snap_plan(&f.snap, sizeof(buf), &plan), 0);
    assert_int_equal(md_snap_encode_part(&f.snap, &plan, 1, buf, sizeof(buf), &len), -EINVAL);
    assert_int_equal(md_snap_encode_part(&f.snap, &plan, 0, buf, 10, &len), -ENOSPC);
    f.orders[3].side = 'X';
    assert_int_equal(md_snap_encode_part(&f.snap, &plan, 0, buf, sizeof(buf), &len), -EINVAL);
    f.orders[3].side = 'B';
    f.symbols[2].locate = 70000;
    assert_int_equal(md_snap_encode_part(&f.snap, &plan, 0, buf, sizeof(buf), &len), -EINVAL);
    f.symbols[2].locate = 3;
    struct md_snap_plan short_plan = {
        .part_count = 1, .orders_per_part = 19, .symbols_per_part = 5};
    assert_int_equal(md_snap_encode_part(&f.snap, &short_plan, 0, buf, sizeof(buf), &len), -EINVAL);
    assert_int_equal(md_snap_encode_part(&f.snap, &plan, 0, buf, sizeof(buf), &len), 0);
    free_snapshot(&f);
}

/* ---- hostile parts ---- */

/* A well-formed two-part snapshot message, to be spoiled field by field. */
struct handmade {
    uint32_t locate[2];
    uint64_t vwap_num[2], vwap_num_hi[2], vwap_den[2];
    uint32_t order_locate[3], order_shares[3], order_price[3];
    uint64_t order_ref[3];
    uint8_t order_side[3];
    Rdps__Md__BookSnapshot msg;
};

static void handmade_init(struct handmade *h)
{
    memset(h, 0, sizeof(*h));
    rdps__md__book_snapshot__init(&h->msg);
    h->locate[0] = 10;
    h->locate[1] = 11;
    for (int i = 0; i < 3; i++) {
        h->order_locate[i] = 10 + (uint32_t)(i & 1);
        h->order_ref[i] = 100 + (uint64_t)i;
        h->order_side[i] = i ? 'S' : 'B';
        h->order_shares[i] = 100;
        h->order_price[i] = 123400;
    }
    Rdps__Md__BookSnapshot *m = &h->msg;
    m->channel = 2;
    m->seq = 99;
    m->part_index = 0;
    m->part_count = 1;
    m->orders_total = 3;
    m->orders_per_part = 3;
    m->symbols_total = 2;
    m->symbols_per_part = 2;
    m->n_locate = m->n_vwap_num = m->n_vwap_num_hi = m->n_vwap_den = 2;
    m->locate = h->locate;
    m->vwap_num = h->vwap_num;
    m->vwap_num_hi = h->vwap_num_hi;
    m->vwap_den = h->vwap_den;
    m->n_order_locate = m->n_order_ref = m->n_order_shares = m->n_order_price = 3;
    m->order_locate = h->order_locate;
    m->order_ref = h->order_ref;
    m->order_side.data = h->order_side;
    m->order_side.len = 3;
    m->order_shares = h->order_shares;
    m->order_price = h->order_price;
}

static int add_handmade(struct md_snap_asm *a, const struct handmade *h)
{
    uint8_t buf[1024];
    size_t len = rdps__md__book_snapshot__pack(&h->msg, buf);
    return md_snap_asm_add(a, buf, len);
}

static void expect_refused(struct md_snap_asm *a, const struct handmade *h, enum md_snap_error why)
{
    uint64_t before = a->counters.rejected[why];
    int rc = add_handmade(a, h);
    if (rc != -(int)why)
        fail_msg("expected %s, got %d (%s)", md_snap_error_name((int)why), rc,
                 md_snap_error_name(rc));
    assert_int_equal(a->counters.rejected[why], before + 1);
}

static void test_hostile_parts(void **state)
{
    (void)state;
    struct md_snap_asm a;
    struct md_snap_asm_config cfg = {
        .max_orders = 100, .max_symbols = 10, .max_parts = 4, .max_part_bytes = 1024};
    assert_int_equal(md_snap_asm_init(&a, &cfg), 0);
    struct handmade h;
    handmade_init(&h);
    assert_int_equal(add_handmade(&a, &h), MD_SNAP_COMPLETE); /* the unspoiled one is fine */

    /* Not protobuf, too long. */
    static const uint8_t junk[] = {0xFF, 0xFF, 0xFF, 0xFF, 0x0F};
    assert_int_equal(md_snap_asm_add(&a, junk, sizeof(junk)), -MD_SNAP_E_DECODE);
    uint8_t big[1025] = {0};
    assert_int_equal(md_snap_asm_add(&a, big, sizeof(big)), -MD_SNAP_E_TOO_LARGE);

    /* Shape. */
    handmade_init(&h);
    h.msg.part_count = 0;
    expect_refused(&a, &h, MD_SNAP_E_SHAPE);
    handmade_init(&h);
    h.msg.part_index = 1;
    expect_refused(&a, &h, MD_SNAP_E_SHAPE);
    handmade_init(&h);
    h.msg.orders_per_part = 2; /* 2 x 1 part cannot hold 3 orders */
    expect_refused(&a, &h, MD_SNAP_E_SHAPE);
    handmade_init(&h);
    h.msg.symbols_per_part = 1;
    expect_refused(&a, &h, MD_SNAP_E_SHAPE);
    handmade_init(&h);
    h.msg.part_count = 2;
    h.msg.orders_per_part = 0x80000000u; /* 2^31 x 2 overflows 32 bits, not 64 */
    h.msg.orders_total = 3;
    h.msg.part_index = 1; /* holds orders [2^31, ...): none */
    expect_refused(&a, &h, MD_SNAP_E_COLUMNS);

    /* Caps. */
    handmade_init(&h);
    h.msg.part_count = 5;
    expect_refused(&a, &h, MD_SNAP_E_CAP);
    handmade_init(&h);
    h.msg.orders_total = 101;
    h.msg.orders_per_part = 101;
    expect_refused(&a, &h, MD_SNAP_E_CAP);
    handmade_init(&h);
    h.msg.symbols_total = 11;
    h.msg.symbols_per_part = 11;
    expect_refused(&a, &h, MD_SNAP_E_CAP);

    /* Columns: each one shorter than the part's count. */
    for (int col = 0; col < 9; col++) {
        handmade_init(&h);
        size_t *lens[9] = {&h.msg.n_locate,       &h.msg.n_vwap_num,     &h.msg.n_vwap_num_hi,
                           &h.msg.n_vwap_den,     &h.msg.n_order_locate, &h.msg.n_order_ref,
                           &h.msg.order_side.len, &h.msg.n_order_shares, &h.msg.n_order_price};
        (*lens[col])--;
        expect_refused(&a, &h, MD_SNAP_E_COLUMNS);
    }
    handmade_init(&h);
    h.msg.orders_total = 2; /* the columns hold 3 */
    h.msg.orders_per_part = 2;
    expect_refused(&a, &h, MD_SNAP_E_COLUMNS);

    /* Values. */
    handmade_init(&h);
    h.order_side[1] = 'X';
    expect_refused(&a, &h, MD_SNAP_E_VALUE);
    handmade_init(&h);
    h.order_side[2] = 0;
    expect_refused(&a, &h, MD_SNAP_E_VALUE);
    handmade_init(&h);
    h.locate[1] = 0x10000;
    expect_refused(&a, &h, MD_SNAP_E_VALUE);
    handmade_init(&h);
    h.order_locate[0] = 0xFFFFFFFF;
    expect_refused(&a, &h, MD_SNAP_E_VALUE);

    /* Locates, seen only once the snapshot is whole. */
    handmade_init(&h);
    h.order_locate[2] = 12; /* no such symbol */
    expect_refused(&a, &h, MD_SNAP_E_LOCATE);
    handmade_init(&h);
    h.locate[1] = 10; /* a symbol twice */
    h.order_locate[1] = 10;
    expect_refused(&a, &h, MD_SNAP_E_LOCATE);
    assert_null(md_snap_asm_result(&a));
    assert_int_equal(a.counters.completed, 1);

    /* Refused parts leave a snapshot in progress alone. */
    handmade_init(&h);
    h.msg.part_count = 2;
    h.msg.orders_per_part = 2;
    h.msg.symbols_per_part = 1;
    h.msg.n_locate = h.msg.n_vwap_num = h.msg.n_vwap_num_hi = h.msg.n_vwap_den = 1;
    h.msg.n_order_locate = h.msg.n_order_ref = h.msg.n_order_shares = h.msg.n_order_price = 2;
    h.msg.order_side.len = 2;
    assert_int_equal(add_handmade(&a, &h), MD_SNAP_INCOMPLETE); /* part 0: orders 0-1, symbol 0 */
    assert_int_equal(md_snap_asm_add(&a, junk, sizeof(junk)), -MD_SNAP_E_DECODE);
    struct handmade other;
    handmade_init(&other);
    other.order_side[0] = 'Q';
    expect_refused(&a, &other, MD_SNAP_E_VALUE);
    /* part 1: order 2 and symbol 1 */
    h.msg.part_index = 1;
    h.msg.locate = &h.locate[1];
    h.msg.vwap_num = &h.vwap_num[1];
    h.msg.vwap_num_hi = &h.vwap_num_hi[1];
    h.msg.vwap_den = &h.vwap_den[1];
    h.msg.n_order_locate = h.msg.n_order_ref = h.msg.n_order_shares = h.msg.n_order_price = 1;
    h.msg.order_side.len = 1;
    h.msg.order_locate = &h.order_locate[2];
    h.msg.order_ref = &h.order_ref[2];
    h.msg.order_side.data = &h.order_side[2];
    h.msg.order_shares = &h.order_shares[2];
    h.msg.order_price = &h.order_price[2];
    assert_int_equal(add_handmade(&a, &h), MD_SNAP_COMPLETE);
    const struct md_snap *s = md_snap_asm_result(&a);
    assert_int_equal(s->n_orders, 3);
    assert_int_equal(s->orders[2].ref, 102);
    assert_int_equal(s->symbols[1].locate, 11);
    assert_int_equal(a.counters.restarts, 0);

    assert_string_equal(md_snap_error_name(-MD_SNAP_E_LOCATE), "locate");
    assert_string_equal(md_snap_error_name(0), "?");
    md_snap_asm_fini(&a);

    /* Bad configurations. */
    cfg.max_parts = 0;
    assert_int_equal(md_snap_asm_init(&a, &cfg), -EINVAL);
    cfg.max_parts = 4;
    cfg.max_part_bytes = MD_SNAP_PART_MIN - 1;
    assert_int_equal(md_snap_asm_init(&a, &cfg), -EINVAL);
}

/* Random corruption of real parts: refused by reason, or a snapshot that passes every check. */
static void test_random_corruption(void **state)
{
    (void)state;
    struct fixture f;
    make_snapshot(&f, 20, 300, 5);
    struct parts parts;
    encode_all(&f.snap, 1024, &parts);
    struct md_snap_asm a;
    struct md_snap_asm_config cfg = {
        .max_orders = 1000, .max_symbols = 100, .max_parts = 64, .max_part_bytes = 1024};
    assert_int_equal(md_snap_asm_init(&a, &cfg), 0);
    rng_state = 77;
    for (int round = 0; round < 20000; round++) {
        uint32_t i = (uint32_t)(rng_next() % parts.count);
        uint8_t *copy = malloc(parts.len[i]);
        assert_non_null(copy);
        memcpy(copy, parts.data[i], parts.len[i]);
        size_t len = parts.len[i] - rng_next() % 3;
        if (rng_next() % 4)
            copy[rng_next() % len] = (uint8_t)rng_next();
        int rc = md_snap_asm_add(&a, copy, len);
        free(copy);
        assert_true(rc == MD_SNAP_INCOMPLETE || rc == MD_SNAP_COMPLETE ||
                    (rc < 0 && -rc < MD_SNAP__ERRORS));
        if (rc == MD_SNAP_COMPLETE) {
            const struct md_snap *s = md_snap_asm_result(&a);
            assert_true(s->n_orders <= cfg.max_orders && s->n_symbols <= cfg.max_symbols);
            for (uint32_t k = 0; k < s->n_orders; k++)
                assert_true(s->orders[k].side == 'B' || s->orders[k].side == 'S');
        }
    }
    md_snap_asm_fini(&a);
    free_parts(&parts);
    free_snapshot(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan),
        cmocka_unit_test(test_roundtrip_one_part),
        cmocka_unit_test(test_roundtrip_many_parts_any_order),
        cmocka_unit_test(test_roundtrip_8000_symbols),
        cmocka_unit_test(test_restart_on_another_snapshot),
        cmocka_unit_test(test_encode_errors),
        cmocka_unit_test(test_hostile_parts),
        cmocka_unit_test(test_random_corruption),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
