/* SPDX-License-Identifier: BSD-2-Clause */
/* test_md_book.c - order books and VWAP against a brute-force model (a plain array of orders,
 * levels recomputed from scratch after every message), bad input, and the digest's independence
 * from history. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "md_book.h"

__extension__ typedef unsigned __int128 u128;

/* --- the brute-force model ------------------------------------------------------------------ */

#define BF_LOCATES 5  /* symbols 1..5; 0 and 6 are out of range */
#define BF_ORDERS  64 /* the book's max_orders */
#define BF_LEVELS  6  /* the book's max_levels_per_side */
#define BF_MAX_REF 8192

struct bf_order {
    uint64_t ref;
    uint16_t locate;
    char side;
    uint32_t price, shares;
};

/* The live orders in a plain array (swap-remove), and where each reference is. */
struct bf {
    struct bf_order o[BF_ORDERS];
    unsigned n;
    uint16_t where[BF_MAX_REF]; /* index + 1, 0: not live */
    uint64_t max_ref;
    u128 notional[BF_LOCATES + 1];
    uint64_t vshares[BF_LOCATES + 1], executions[BF_LOCATES + 1];
    uint64_t errors[MD_BOOK_NERRORS];
    uint64_t applied;
};

static struct bf_order *bf_find(struct bf *bf, uint64_t ref)
{
    return ref < BF_MAX_REF && bf->where[ref] != 0 ? &bf->o[bf->where[ref] - 1] : NULL;
}

static void bf_remove(struct bf *bf, struct bf_order *o)
{
    unsigned idx = (unsigned)(o - bf->o);
    bf->where[o->ref] = 0;
    if (idx != --bf->n) {
        bf->o[idx] = bf->o[bf->n];
        bf->where[bf->o[idx].ref] = (uint16_t)(idx + 1);
    }
}

/* Levels of one side from scratch, best first. */
static unsigned bf_levels(const struct bf *bf, uint16_t locate, char side, struct md_level *out)
{
    unsigned n = 0;
    for (unsigned i = 0; i < bf->n; i++) {
        const struct bf_order *o = &bf->o[i];
        if (o->locate != locate || o->side != side)
            continue;
        unsigned j = 0;
        while (j < n && out[j].price != o->price)
            j++;
        if (j == n)
            out[n++] = (struct md_level){.price = o->price};
        out[j].orders++;
        out[j].shares += o->shares;
    }
    for (unsigned i = 1; i < n; i++) /* insertion sort, best first */
        for (unsigned j = i; j > 0; j--) {
            bool better =
                side == 'B' ? out[j].price > out[j - 1].price : out[j].price < out[j - 1].price;
            if (!better)
                break;
            struct md_level t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    return n;
}

static bool bf_level_exists(const struct bf *bf, uint16_t locate, char side, uint32_t price)
{
    for (unsigned i = 0; i < bf->n; i++)
        if (bf->o[i].locate == locate && bf->o[i].side == side && bf->o[i].price == price)
            return true;
    return false;
}

static int bf_add(struct bf *bf, uint16_t locate, uint64_t ref, char side, uint32_t shares,
                  uint32_t price)
{
    struct md_level lv[BF_ORDERS];
    if (bf_find(bf, ref) != NULL)
        return MD_BOOK_E_DUPLICATE_REF;
    if (bf->n == BF_ORDERS)
        return MD_BOOK_E_ORDERS_FULL;
    if (!bf_level_exists(bf, locate, side, price) && bf_levels(bf, locate, side, lv) == BF_LEVELS)
        return MD_BOOK_E_LEVELS_FULL;
    assert_true(ref < BF_MAX_REF);
    bf->o[bf->n++] = (struct bf_order){
        .ref = ref, .locate = locate, .side = side, .price = price, .shares = shares};
    bf->where[ref] = (uint16_t)bf->n;
    if (ref > bf->max_ref)
        bf->max_ref = ref;
    return 0;
}

static bool bf_locate_ok(uint16_t locate)
{
    return locate >= 1 && locate <= BF_LOCATES;
}

static int bf_lookup(struct bf *bf, uint16_t locate, uint64_t ref, struct bf_order **o)
{
    if (!bf_locate_ok(locate))
        return MD_BOOK_E_BAD_LOCATE;
    *o = bf_find(bf, ref);
    if (*o == NULL)
        return MD_BOOK_E_UNKNOWN_REF;
    return (*o)->locate == locate ? 0 : MD_BOOK_E_LOCATE_MISMATCH;
}

static void bf_vwap(struct bf *bf, uint16_t locate, uint32_t price, uint32_t shares)
{
    bf->notional[locate] += (u128)price * shares;
    bf->vshares[locate] += shares;
    bf->executions[locate]++;
}

static int bf_take(struct bf *bf, struct bf_order *o, uint32_t shares, int over)
{
    int rc = 0;
    if (shares > o->shares) {
        shares = o->shares;
        rc = over;
    }
    o->shares -= shares;
    if (o->shares == 0)
        bf_remove(bf, o);
    return rc;
}

static int bf_apply_msg(struct bf *bf, const struct itch_msg *m)
{
    uint16_t l = m->stock_locate;
    struct bf_order *o;
    const struct itch_add_order *a = m->type == 'F' ? &m->u.F.add : &m->u.A;
    const struct itch_order_executed *e = m->type == 'C' ? &m->u.C.exec : &m->u.E;
    int rc;
    switch (m->type) {
    case 'S':
        return 0;
    case 'R':
        return bf_locate_ok(l) ? 0 : MD_BOOK_E_BAD_LOCATE;
    case 'A':
    case 'F':
        if (!bf_locate_ok(l))
            return MD_BOOK_E_BAD_LOCATE;
        if (a->side != 'B' && a->side != 'S')
            return MD_BOOK_E_BAD_SIDE;
        if (a->shares == 0)
            return MD_BOOK_E_BAD_SHARES;
        return bf_add(bf, l, a->order_ref, a->side, a->shares, a->price);
    case 'E':
    case 'C':
        if ((rc = bf_lookup(bf, l, e->order_ref, &o)) < 0)
            return rc;
        if (e->shares == 0)
            return MD_BOOK_E_BAD_SHARES;
        uint32_t taken = e->shares < o->shares ? e->shares : o->shares;
        if (m->type == 'E')
            bf_vwap(bf, l, o->price, taken);
        else if (m->u.C.printable == 'Y')
            bf_vwap(bf, l, m->u.C.price, taken);
        return bf_take(bf, o, e->shares, MD_BOOK_E_OVER_EXECUTED);
    case 'X':
        if ((rc = bf_lookup(bf, l, m->u.X.order_ref, &o)) < 0)
            return rc;
        if (m->u.X.shares == 0)
            return MD_BOOK_E_BAD_SHARES;
        return bf_take(bf, o, m->u.X.shares, MD_BOOK_E_OVER_CANCELLED);
    case 'D':
        if ((rc = bf_lookup(bf, l, m->u.D.order_ref, &o)) < 0)
            return rc;
        bf_remove(bf, o);
        return 0;
    case 'U':
        if ((rc = bf_lookup(bf, l, m->u.U.orig_order_ref, &o)) < 0)
            return rc;
        if (m->u.U.shares == 0)
            return MD_BOOK_E_BAD_SHARES;
        if (bf_find(bf, m->u.U.new_order_ref) != NULL)
            return MD_BOOK_E_DUPLICATE_REF;
        char side = o->side;
        bf_remove(bf, o);
        return bf_add(bf, l, m->u.U.new_order_ref, side, m->u.U.shares, m->u.U.price);
    case 'P':
        if (!bf_locate_ok(l))
            return MD_BOOK_E_BAD_LOCATE;
        if (m->u.P.shares == 0)
            return MD_BOOK_E_BAD_SHARES;
        bf_vwap(bf, l, m->u.P.price, m->u.P.shares);
        return 0;
    default:
        return MD_BOOK_E_UNSUPPORTED;
    }
}

static int bf_apply(struct bf *bf, const struct itch_msg *m)
{
    int rc = bf_apply_msg(bf, m);
    if (rc < 0)
        bf->errors[-rc - 1]++;
    else
        bf->applied++;
    return rc;
}

/* The whole book equals the model: levels, orders, BBO, VWAP, counters. */
static void assert_book_matches(const struct md_book *book, const struct bf *bf)
{
    struct md_level want[BF_ORDERS];
    for (uint16_t l = 1; l <= BF_LOCATES; l++) {
        for (int s = 0; s < 2; s++) {
            char side = s == 0 ? 'B' : 'S';
            unsigned n = bf_levels(bf, l, side, want);
            assert_int_equal(md_book_level_count(book, l, side), n);
            for (unsigned d = 0; d < n; d++) {
                struct md_level got;
                assert_int_equal(md_book_level(book, l, side, d, &got), 0);
                assert_int_equal(got.price, want[d].price);
                assert_int_equal(got.orders, want[d].orders);
                assert_true(got.shares == want[d].shares);
            }
            struct md_level past;
            assert_int_equal(md_book_level(book, l, side, n, &past), -ENOENT);
            struct md_bbo bbo;
            md_book_bbo(book, l, &bbo);
            if (side == 'B')
                assert_int_equal(bbo.bid_price, n > 0 ? want[0].price : 0);
            else
                assert_int_equal(bbo.ask_price, n > 0 ? want[0].price : 0);
        }
        unsigned live = 0;
        for (unsigned i = 0; i < bf->n; i++)
            live += bf->o[i].locate == l;
        assert_int_equal(md_book_order_count(book, l), live);
        for (uint32_t i = 0; i < live; i++) {
            const struct md_order *o = md_book_order_at(book, l, i);
            assert_non_null(o);
            const struct bf_order *w = bf_find((struct bf *)bf, o->ref);
            assert_non_null(w);
            assert_int_equal(w->locate, l);
        }
        assert_null(md_book_order_at(book, l, live));
        struct md_vwap v;
        md_book_vwap(book, l, &v);
        assert_true(v.notional_lo == (uint64_t)bf->notional[l]);
        assert_true(v.notional_hi == (uint64_t)(bf->notional[l] >> 64));
        assert_true(v.shares == bf->vshares[l]);
        assert_true(v.executions == bf->executions[l]);
    }
    for (unsigned i = 0; i < bf->n; i++) {
        const struct bf_order *w = &bf->o[i];
        const struct md_order *o = md_book_find(book, w->ref);
        assert_non_null(o);
        assert_int_equal(o->locate, w->locate);
        assert_int_equal(o->side, w->side);
        assert_int_equal(o->price, w->price);
        assert_int_equal(o->shares, w->shares);
    }
    /* References that are not live are not found (a sample of all used so far). */
    for (uint64_t ref = 1 + bf->applied % 17; ref <= bf->max_ref; ref += 17)
        if (bf_find((struct bf *)bf, ref) == NULL)
            assert_null(md_book_find(book, ref));
    const struct md_book_counters *c = md_book_counters(book);
    assert_true(c->live_orders == bf->n);
    assert_true(c->applied == bf->applied);
    for (int e = 0; e < MD_BOOK_NERRORS; e++)
        assert_true(c->errors[e] == bf->errors[e]);
}

/* --- random messages ------------------------------------------------------------------------ */

static uint64_t rs;

static uint32_t rnd(uint32_t n)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (uint32_t)((rs >> 16) % n);
}

/* A reference: usually a live order's (so most messages apply), sometimes any small number. */
static uint64_t pick_ref(const struct bf *bf)
{
    if (rnd(10) < 7 && bf->n > 0)
        return bf->o[rnd(bf->n)].ref;
    return 1 + rnd(400);
}

static uint16_t pick_locate(const struct bf *bf, uint64_t ref)
{
    const struct bf_order *o = bf_find((struct bf *)bf, ref);
    if (o != NULL && rnd(20) != 0)
        return o->locate;
    return (uint16_t)rnd(BF_LOCATES + 2); /* 0..6: two out of range */
}

static uint32_t pick_shares(uint32_t typical)
{
    uint32_t r = rnd(20);
    if (r == 0)
        return 0;
    if (r < 4)
        return typical + 1 + rnd(100); /* above an order's remaining shares */
    return 1 + rnd(typical > 1 ? typical : 2);
}

static void random_message(const struct bf *bf, struct itch_msg *m, uint64_t *next_ref)
{
    static const char types[] = "AAAAAFEECXXDDDUUPSRQ";
    memset(m, 0, sizeof(*m));
    m->type = (uint8_t)types[rnd(sizeof(types) - 1)];
    uint64_t ref = pick_ref(bf);
    const struct bf_order *o = bf_find((struct bf *)bf, ref);
    uint32_t remaining = o != NULL ? o->shares : 100;
    m->stock_locate = pick_locate(bf, ref);
    struct itch_add_order *a = m->type == 'F' ? &m->u.F.add : &m->u.A;
    struct itch_order_executed *e = m->type == 'C' ? &m->u.C.exec : &m->u.E;
    uint32_t price = 100 * (1 + rnd(12)); /* 12 prices: levels collide and fill */
    switch (m->type) {
    case 'A':
    case 'F':
        m->stock_locate = (uint16_t)rnd(BF_LOCATES + 2);
        a->order_ref = rnd(8) == 0 ? ref : (*next_ref)++;
        a->side = rnd(30) == 0 ? 'Q' : rnd(2) == 0 ? 'B' : 'S';
        a->shares = pick_shares(300);
        a->price = price;
        break;
    case 'E':
    case 'C':
        e->order_ref = ref;
        e->shares = pick_shares(remaining);
        m->u.C.printable = rnd(3) == 0 ? 'N' : 'Y'; /* ignored for E */
        m->u.C.price = price + 7;
        break;
    case 'X':
        m->u.X.order_ref = ref;
        m->u.X.shares = pick_shares(remaining);
        break;
    case 'D':
        m->u.D.order_ref = ref;
        break;
    case 'U':
        m->u.U.orig_order_ref = ref;
        m->u.U.new_order_ref = rnd(10) == 0 ? pick_ref(bf) : (*next_ref)++;
        m->u.U.shares = pick_shares(300);
        m->u.U.price = price;
        break;
    case 'P':
        m->stock_locate = (uint16_t)rnd(BF_LOCATES + 2);
        /* Notionals near 2^64: the 128-bit sums carry. */
        m->u.P.shares = rnd(4) == 0 ? UINT32_MAX - rnd(1000) : pick_shares(300);
        m->u.P.price = UINT32_MAX - rnd(1000);
        m->u.P.side = 'B';
        break;
    case 'R':
        m->stock_locate = (uint16_t)rnd(BF_LOCATES + 2);
        itch_stock_set(m->u.R.stock, "XYZ");
        break;
    default:
        break; /* S, and Q: a type the book does not handle */
    }
}

static void book_open(struct md_book *book, uint64_t seed)
{
    struct md_book_config cfg;
    md_book_config_init(&cfg);
    cfg.max_locate = BF_LOCATES;
    cfg.max_orders = BF_ORDERS;
    cfg.max_levels_per_side = BF_LEVELS;
    cfg.hash_seed = seed;
    assert_int_equal(md_book_init(book, &cfg), 0);
}

static void test_book_matches_brute_force(void **state)
{
    (void)state;
    static struct bf bf;
    uint64_t errors_seen[MD_BOOK_NERRORS] = {0};
    for (uint64_t seq = 1; seq <= 30; seq++) {
        rs = seq * 0x9E3779B97F4A7C15u;
        memset(&bf, 0, sizeof(bf));
        struct md_book book;
        book_open(&book, seq);
        uint64_t next_ref = 1000;
        for (int i = 0; i < 3000; i++) {
            struct itch_msg m;
            random_message(&bf, &m, &next_ref);
            int want = bf_apply(&bf, &m);
            int got = md_book_apply(&book, &m);
            if (got != want)
                fail_msg("sequence %llu message %d type %c: book %s, model %s",
                         (unsigned long long)seq, i, m.type, md_book_error_name(got),
                         md_book_error_name(want));
            assert_book_matches(&book, &bf);
        }
        for (int e = 0; e < MD_BOOK_NERRORS; e++)
            errors_seen[e] += bf.errors[e];
        md_book_fini(&book);
    }
    /* The random input reached every refusal except allocation failure. */
    for (int e = 0; e < MD_BOOK_NERRORS; e++)
        if (-(e + 1) != MD_BOOK_E_NO_MEMORY && errors_seen[e] == 0)
            fail_msg("no %s in the random sequences", md_book_error_name(-(e + 1)));
}

/* --- hand-made cases ------------------------------------------------------------------------ */

static void msg_add(struct itch_msg *m, uint16_t l, uint64_t ref, char side, uint32_t sh,
                    uint32_t px)
{
    memset(m, 0, sizeof(*m));
    m->type = 'A';
    m->stock_locate = l;
    m->u.A.order_ref = ref;
    m->u.A.side = side;
    m->u.A.shares = sh;
    m->u.A.price = px;
}

static void msg_ref(struct itch_msg *m, uint8_t type, uint16_t l, uint64_t ref, uint32_t sh)
{
    memset(m, 0, sizeof(*m));
    m->type = type;
    m->stock_locate = l;
    if (type == 'E') {
        m->u.E.order_ref = ref;
        m->u.E.shares = sh;
    } else if (type == 'X') {
        m->u.X.order_ref = ref;
        m->u.X.shares = sh;
    } else {
        m->u.D.order_ref = ref;
    }
}

static void test_execution_cancel_and_vwap(void **state)
{
    (void)state;
    struct md_book book;
    book_open(&book, 7);
    struct itch_msg m;
    msg_add(&m, 1, 10, 'B', 300, 100000);
    assert_int_equal(md_book_apply(&book, &m), 0);
    msg_add(&m, 1, 11, 'B', 200, 100000);
    assert_int_equal(md_book_apply(&book, &m), 0);
    msg_add(&m, 1, 12, 'S', 100, 100500);
    assert_int_equal(md_book_apply(&book, &m), 0);
    struct md_bbo bbo;
    md_book_bbo(&book, 1, &bbo);
    assert_int_equal(bbo.bid_price, 100000);
    assert_true(bbo.bid_shares == 500);
    assert_int_equal(bbo.ask_price, 100500);

    msg_ref(&m, 'E', 1, 10, 100); /* 100 at $10.00 */
    assert_int_equal(md_book_apply(&book, &m), 0);
    msg_ref(&m, 'X', 1, 11, 250); /* more than 200: clamped, the order leaves */
    assert_int_equal(md_book_apply(&book, &m), MD_BOOK_E_OVER_CANCELLED);
    assert_null(md_book_find(&book, 11));
    memset(&m, 0, sizeof(m));
    m.type = 'C';
    m.stock_locate = 1;
    m.u.C.exec.order_ref = 12;
    m.u.C.exec.shares = 40;
    m.u.C.printable = 'Y';
    m.u.C.price = 100400; /* 40 at $10.04 */
    assert_int_equal(md_book_apply(&book, &m), 0);
    m.u.C.printable = 'N'; /* book only */
    assert_int_equal(md_book_apply(&book, &m), 0);
    memset(&m, 0, sizeof(m));
    m.type = 'P';
    m.stock_locate = 1;
    m.u.P.shares = 60;
    m.u.P.price = 100200; /* 60 at $10.02 */
    assert_int_equal(md_book_apply(&book, &m), 0);
    msg_ref(&m, 'E', 1, 10, 500); /* 200 left: clamped */
    assert_int_equal(md_book_apply(&book, &m), MD_BOOK_E_OVER_EXECUTED);

    struct md_vwap v;
    md_book_vwap(&book, 1, &v);
    assert_true(v.shares == 100 + 40 + 60 + 200);
    assert_true(v.notional_hi == 0);
    assert_true(v.notional_lo ==
                100ull * 100000 + 40ull * 100400 + 60ull * 100200 + 200ull * 100000);
    assert_true(v.executions == 4);
    double vwap = md_vwap_dollars(&v);
    assert_true(vwap > 10.0069 && vwap < 10.0071); /* 4002.8 / 400 */
    md_book_bbo(&book, 1, &bbo);
    assert_int_equal(bbo.bid_price, 0); /* no bid left */
    assert_int_equal(bbo.ask_price, 100500);
    assert_true(bbo.ask_shares == 20);
    const struct md_book_counters *c = md_book_counters(&book);
    assert_true(c->errors[-MD_BOOK_E_OVER_CANCELLED - 1] == 1);
    assert_true(c->errors[-MD_BOOK_E_OVER_EXECUTED - 1] == 1);
    assert_true(c->live_orders == 1 && c->max_live_orders == 3);
    md_book_fini(&book);
    md_book_fini(&book); /* a finished book can be finished again */
}

static void test_directory_and_config(void **state)
{
    (void)state;
    struct md_book book;
    struct md_book_config cfg;
    md_book_config_init(&cfg);
    cfg.max_locate = 0;
    assert_int_equal(md_book_init(&book, &cfg), -EINVAL);
    md_book_config_init(&cfg);
    cfg.max_locate = 65536;
    assert_int_equal(md_book_init(&book, &cfg), -EINVAL);
    md_book_config_init(&cfg);
    cfg.max_orders = 0;
    assert_int_equal(md_book_init(&book, &cfg), -EINVAL);

    book_open(&book, 1);
    struct itch_msg m = {.type = 'R', .stock_locate = 3};
    itch_stock_set(m.u.R.stock, "QQQ");
    assert_null(md_book_stock(&book, 3));
    assert_int_equal(md_book_apply(&book, &m), 0);
    assert_memory_equal(md_book_stock(&book, 3), "QQQ     ", 8);
    assert_true(md_book_counters(&book)->by_type['R'] == 1);
    assert_string_equal(md_book_error_name(MD_BOOK_E_UNKNOWN_REF), "unknown_ref");
    assert_string_equal(md_book_error_name(0), "ok");
    assert_string_equal(md_book_error_name(-99), "?");
    md_book_fini(&book);
}

/* --- digest --------------------------------------------------------------------------------- */

#define DG_ORDERS 3000

static void big_book_open(struct md_book *book, uint64_t seed, uint32_t max_orders)
{
    struct md_book_config cfg;
    md_book_config_init(&cfg);
    cfg.max_locate = 100;
    cfg.max_orders = max_orders;
    cfg.hash_seed = seed;
    assert_int_equal(md_book_init(book, &cfg), 0);
}

static void digest_orders(struct itch_msg *adds, unsigned n)
{
    rs = 99;
    for (unsigned i = 0; i < n; i++) {
        char side = rnd(2) == 0 ? 'B' : 'S';
        uint32_t px = side == 'B' ? 10000 + 100 * rnd(30) : 14000 + 100 * rnd(30);
        msg_add(&adds[i], (uint16_t)(1 + rnd(40)), 5000 + 7 * (uint64_t)i, side, 1 + rnd(900), px);
    }
}

static void test_digest_depends_on_state_only(void **state)
{
    (void)state;
    static struct itch_msg adds[DG_ORDERS];
    digest_orders(adds, DG_ORDERS);
    struct md_book a, b;
    big_book_open(&a, 1, DG_ORDERS + 10);
    big_book_open(&b, 0xDEADBEEF, 4 * DG_ORDERS); /* another seed and table size */
    /* b first holds and drops other orders, so its pool slots and probe runs differ. */
    struct itch_msg m;
    for (unsigned i = 0; i < 500; i++) {
        msg_add(&m, (uint16_t)(1 + i % 60), 1 + i, 'S', 10, 20000 + 100 * (i % 50));
        assert_int_equal(md_book_apply(&b, &m), 0);
    }
    for (unsigned i = 0; i < DG_ORDERS; i++)
        assert_int_equal(md_book_apply(&a, &adds[i]), 0);
    for (unsigned i = DG_ORDERS; i-- > 0;) { /* reverse order, interleaved with the deletes */
        assert_int_equal(md_book_apply(&b, &adds[i]), 0);
        if (i < 500) {
            msg_ref(&m, 'D', (uint16_t)(1 + i % 60), 1 + i, 0);
            assert_int_equal(md_book_apply(&b, &m), 0);
        }
    }
    /* The same executions (VWAP sums commute) in different orders. */
    for (unsigned i = 0; i < 100; i++) {
        const struct itch_add_order *o = &adds[i * 7].u.A;
        msg_ref(&m, 'E', adds[i * 7].stock_locate, o->order_ref, 1);
        assert_int_equal(md_book_apply(&a, &m), 0);
        const struct itch_add_order *o2 = &adds[(99 - i) * 7].u.A;
        msg_ref(&m, 'E', adds[(99 - i) * 7].stock_locate, o2->order_ref, 1);
        assert_int_equal(md_book_apply(&b, &m), 0);
    }
    uint64_t da = md_book_digest(&a);
    assert_true(da == md_book_digest(&b));
    for (uint16_t l = 1; l <= 100; l++)
        assert_true(md_book_symbol_digest(&a, l) == md_book_symbol_digest(&b, l));

    /* One share less on one order: another digest. Put back by a second book, equal again. */
    msg_ref(&m, 'X', adds[5].stock_locate, adds[5].u.A.order_ref, 1);
    assert_int_equal(md_book_apply(&b, &m), 0);
    assert_true(md_book_digest(&b) != da);
    assert_int_equal(md_book_apply(&a, &m), 0);
    assert_true(md_book_digest(&a) == md_book_digest(&b));
    da = md_book_digest(&a);

    /* Two orders that swap prices keep every level and total: only the order part differs. */
    struct md_book c, d;
    big_book_open(&c, 1, 16);
    big_book_open(&d, 1, 16);
    msg_add(&m, 1, 1, 'B', 100, 900);
    md_book_apply(&c, &m);
    msg_add(&m, 1, 2, 'B', 100, 800);
    md_book_apply(&c, &m);
    msg_add(&m, 1, 1, 'B', 100, 800);
    md_book_apply(&d, &m);
    msg_add(&m, 1, 2, 'B', 100, 900);
    md_book_apply(&d, &m);
    assert_true(md_book_digest(&c) != md_book_digest(&d));

    /* A symbol that held orders and is empty again, and a non-printable execution, are no
     * state: the digest does not change. */
    msg_add(&m, 77, 999999, 'S', 5, 30000);
    assert_int_equal(md_book_apply(&a, &m), 0);
    memset(&m, 0, sizeof(m));
    m.type = 'C';
    m.stock_locate = 77;
    m.u.C.exec.order_ref = 999999;
    m.u.C.exec.shares = 5;
    m.u.C.printable = 'N';
    assert_int_equal(md_book_apply(&a, &m), 0);
    assert_true(md_book_digest(&a) == da);
    /* A printable trade is state. */
    memset(&m, 0, sizeof(m));
    m.type = 'P';
    m.stock_locate = 77;
    m.u.P.shares = 1;
    m.u.P.price = 1;
    assert_int_equal(md_book_apply(&a, &m), 0);
    assert_true(md_book_digest(&a) != da);

    /* Empty books agree whatever their size. */
    struct md_book e1, e2;
    big_book_open(&e1, 3, 8);
    big_book_open(&e2, 4, 1000);
    assert_true(md_book_digest(&e1) == md_book_digest(&e2));
    md_book_fini(&a);
    md_book_fini(&b);
    md_book_fini(&c);
    md_book_fini(&d);
    md_book_fini(&e1);
    md_book_fini(&e2);
}

/* The order table keeps working when probe runs wrap and deletions shift entries back: many
 * adds and deletes in a table only twice the pool. */
static void test_table_churn(void **state)
{
    (void)state;
    struct md_book book;
    big_book_open(&book, 5, 512);
    struct itch_msg m;
    rs = 3;
    uint64_t live[512];
    unsigned n = 0;
    uint64_t next = 1;
    for (int i = 0; i < 200000; i++) {
        if (n < 512 && (n == 0 || rnd(2) == 0)) {
            msg_add(&m, (uint16_t)(1 + rnd(100)), next, 'B', 1, 100 * (1 + rnd(50)));
            assert_int_equal(md_book_apply(&book, &m), 0);
            live[n++] = next++;
        } else {
            unsigned k = rnd(n);
            const struct md_order *o = md_book_find(&book, live[k]);
            assert_non_null(o);
            msg_ref(&m, 'D', o->locate, live[k], 0);
            assert_int_equal(md_book_apply(&book, &m), 0);
            assert_null(md_book_find(&book, live[k]));
            live[k] = live[--n];
        }
    }
    for (unsigned k = 0; k < n; k++)
        assert_non_null(md_book_find(&book, live[k]));
    assert_true(md_book_counters(&book)->live_orders == n);
    msg_add(&m, 1, next, 'B', 1, 100);
    while (md_book_counters(&book)->live_orders < 512) {
        m.u.A.order_ref = next++;
        assert_int_equal(md_book_apply(&book, &m), 0);
    }
    m.u.A.order_ref = next++;
    assert_int_equal(md_book_apply(&book, &m), MD_BOOK_E_ORDERS_FULL);
    md_book_fini(&book);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_book_matches_brute_force),
        cmocka_unit_test(test_execution_cancel_and_vwap),
        cmocka_unit_test(test_directory_and_config),
        cmocka_unit_test(test_digest_depends_on_state_only),
        cmocka_unit_test(test_table_churn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
