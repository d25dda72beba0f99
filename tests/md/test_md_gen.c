/* SPDX-License-Identifier: BSD-2-Clause */
/* test_md_gen.c - the synthetic order flow: over 10^6 messages for 3 seeds, every message
 * survives the codec and applies cleanly to an independent book, references are live, shares
 * never go negative, books never cross (checked from an independent order table), the mix, mean
 * size, channel balance and Zipf popularity are on target; digests match the feed's and change
 * when a message is dropped; caps hold. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "md_gen.h"

/* Every order reference of the day, indexed by reference (the generator counts them up). */
struct ref_entry {
    uint32_t shares, price;
    uint16_t locate;
    char side;
    uint8_t state; /* 0 unused, 1 live, 2 gone */
};

struct run {
    struct md_gen gen;
    struct md_book book; /* fed the encoded and decoded messages */
    struct ref_entry *refs;
    uint64_t nrefs, next_ref;
    uint64_t flow_msgs, flow_bytes, flow_by_type[128];
    uint64_t channel_msgs[64];
    uint64_t msgs_of_locate_top;
    uint16_t top_locate;
};

static void book_open(struct md_book *book, uint32_t symbols, uint64_t seed)
{
    struct md_book_config cfg;
    md_book_config_init(&cfg);
    cfg.max_locate = symbols;
    cfg.hash_seed = seed;
    assert_int_equal(md_book_init(book, &cfg), 0);
}

static void run_open(struct run *r, const struct md_gen_config *cfg, uint64_t max_msgs)
{
    memset(r, 0, sizeof(*r));
    assert_int_equal(md_gen_init(&r->gen, cfg), 0);
    book_open(&r->book, cfg->symbols, cfg->seed ^ 0x5555);
    r->nrefs = max_msgs + 2;
    r->refs = calloc(r->nrefs, sizeof(*r->refs));
    assert_non_null(r->refs);
    r->next_ref = 1;
    double best = -1.0;
    for (uint32_t l = 1; l <= cfg->symbols; l++) {
        double p = md_gen_popularity(&r->gen, (uint16_t)l);
        if (p > best) {
            best = p;
            r->top_locate = (uint16_t)l;
        }
    }
}

static void run_close(struct run *r)
{
    md_gen_fini(&r->gen);
    md_book_fini(&r->book);
    free(r->refs);
}

static struct ref_entry *live_ref(struct run *r, uint64_t ref, uint16_t locate)
{
    assert_true(ref > 0 && ref < r->next_ref);
    struct ref_entry *e = &r->refs[ref];
    if (e->state != 1)
        fail_msg("reference %llu is not live", (unsigned long long)ref);
    assert_int_equal(e->locate, locate);
    return e;
}

static void new_ref(struct run *r, uint64_t ref, uint16_t locate, char side, uint32_t shares,
                    uint32_t price)
{
    assert_true(ref == r->next_ref); /* fresh, counting up */
    assert_true(ref < r->nrefs);
    assert_true(side == 'B' || side == 'S');
    assert_true(shares > 0 && price > 0);
    r->refs[ref] = (struct ref_entry){
        .shares = shares, .price = price, .locate = locate, .side = side, .state = 1};
    r->next_ref++;
}

static void take_shares(struct ref_entry *e, uint32_t shares, bool may_empty)
{
    assert_true(shares > 0);
    assert_true(may_empty ? shares <= e->shares : shares < e->shares);
    e->shares -= shares;
    if (e->shares == 0)
        e->state = 2;
}

/* Checks one message against the independent reference table and updates it. */
static void check_refs(struct run *r, const struct itch_msg *m)
{
    uint16_t l = m->stock_locate;
    const struct itch_add_order *a = m->type == 'F' ? &m->u.F.add : &m->u.A;
    const struct itch_order_executed *e = m->type == 'C' ? &m->u.C.exec : &m->u.E;
    struct ref_entry *o;
    switch (m->type) {
    case 'A':
    case 'F':
        new_ref(r, a->order_ref, l, a->side, a->shares, a->price);
        break;
    case 'E':
    case 'C':
        take_shares(live_ref(r, e->order_ref, l), e->shares, true);
        break;
    case 'X':
        take_shares(live_ref(r, m->u.X.order_ref, l), m->u.X.shares, false);
        break;
    case 'D':
        live_ref(r, m->u.D.order_ref, l)->state = 2;
        break;
    case 'U':
        o = live_ref(r, m->u.U.orig_order_ref, l);
        o->state = 2;
        new_ref(r, m->u.U.new_order_ref, l, o->side, m->u.U.shares, m->u.U.price);
        break;
    case 'P':
        assert_true(m->u.P.order_ref == 0);
        assert_true(m->u.P.shares > 0);
        break;
    default:
        fail_msg("order flow carries type %c", m->type);
    }
}

/* Best bid and ask of every symbol from the reference table alone, compared with the book's;
 * no symbol crossed or locked. */
static void check_all_books(struct run *r, uint32_t symbols)
{
    uint32_t *bid = calloc(symbols + 1, sizeof(*bid));
    uint32_t *ask = calloc(symbols + 1, sizeof(*ask));
    assert_true(bid != NULL && ask != NULL);
    for (uint64_t ref = 1; ref < r->next_ref; ref++) {
        const struct ref_entry *e = &r->refs[ref];
        if (e->state != 1)
            continue;
        if (e->side == 'B' && e->price > bid[e->locate])
            bid[e->locate] = e->price;
        if (e->side == 'S' && (ask[e->locate] == 0 || e->price < ask[e->locate]))
            ask[e->locate] = e->price;
    }
    for (uint32_t l = 1; l <= symbols; l++) {
        struct md_bbo bbo;
        md_book_bbo(&r->book, (uint16_t)l, &bbo);
        assert_int_equal(bbo.bid_price, bid[l]);
        assert_int_equal(bbo.ask_price, ask[l]);
        if (bid[l] != 0 && ask[l] != 0)
            assert_true(bid[l] < ask[l]);
    }
    free(bid);
    free(ask);
}

/* One message through the codec into the test's book, checked. */
static void step(struct run *r, uint64_t i, const struct md_gen_config *cfg)
{
    struct itch_msg m, d;
    uint32_t ch;
    uint8_t buf[ITCH_MAX_LEN];
    int len = md_gen_next(&r->gen, 34200000000000ull + i * 1000, &m, &ch);
    assert_int_equal(itch_encode(&m, buf, sizeof(buf)), len);
    assert_int_equal(itch_decode(buf, (size_t)len, &d), len);
    int rc = md_book_apply(&r->book, &d);
    if (rc != 0)
        fail_msg("message %llu type %c refused: %s", (unsigned long long)i, d.type,
                 md_book_error_name(rc));
    assert_true(ch < 64);
    r->channel_msgs[ch]++;
    if (i < cfg->channels + cfg->symbols) {
        assert_int_equal(d.type, i < cfg->channels ? 'S' : 'R');
        return;
    }
    assert_int_equal(ch, md_gen_channel_of(&r->gen, d.stock_locate));
    check_refs(r, &d);
    if (i < md_gen_preamble_length(&r->gen)) {
        assert_int_equal(d.type, 'A'); /* the opening book */
    } else {
        r->flow_msgs++;
        r->flow_bytes += (uint64_t)len;
        r->flow_by_type[d.type]++;
        r->msgs_of_locate_top += d.stock_locate == r->top_locate;
    }
    struct md_bbo bbo;
    md_book_bbo(&r->book, d.stock_locate, &bbo);
    if (bbo.bid_price != 0 && bbo.ask_price != 0 && bbo.bid_price >= bbo.ask_price)
        fail_msg("message %llu crossed locate %u: bid %u ask %u", (unsigned long long)i,
                 d.stock_locate, bbo.bid_price, bbo.ask_price);
}

#define INVARIANT_MSGS 1000000u

/* Runs n messages of cfg through step() with every check, and the clean end state. */
static void run_checked(struct run *r, const struct md_gen_config *cfg, uint64_t n)
{
    run_open(r, cfg, n);
    for (uint64_t i = 0; i < n; i++) {
        step(r, i, cfg);
        if ((i + 1) % 250000 == 0 || i + 1 == n)
            check_all_books(r, cfg->symbols);
    }
    const struct md_gen_counters *gc = md_gen_counters(&r->gen);
    assert_true(gc->self_check_failures == 0);
    assert_true(gc->messages == n);
    const struct md_book_counters *bc = md_book_counters(&r->book);
    for (int e = 0; e < MD_BOOK_NERRORS; e++)
        assert_true(bc->errors[e] == 0);
    assert_true(md_gen_digest(&r->gen) == md_book_digest(&r->book));
    print_message(
        "seed %llu: preamble %llu, mean %.2f bytes, forced deletes %llu, substituted "
        "adds %llu, cancels as deletes %llu, live orders %llu (max %llu)\n",
        (unsigned long long)cfg->seed, (unsigned long long)md_gen_preamble_length(&r->gen),
        (double)r->flow_bytes / (double)r->flow_msgs, (unsigned long long)gc->forced_delete,
        (unsigned long long)gc->no_live_order, (unsigned long long)gc->cancel_as_delete,
        (unsigned long long)bc->live_orders, (unsigned long long)bc->max_live_orders);
}

/* Each kind of the flow within 1 point and 20 % of its target; returns the mix's mean size. */
static double check_mix(const struct run *r, const struct md_gen_config *cfg)
{
    uint64_t total = 0;
    for (unsigned k = 0; k < MD_GEN_KINDS; k++)
        total += cfg->mix[k];
    double mean_want = 0.0;
    for (unsigned k = 0; k < MD_GEN_KINDS; k++) {
        uint8_t type = md_gen_kind_type((enum md_gen_kind)k);
        double want = (double)cfg->mix[k] / (double)total;
        double got = (double)r->flow_by_type[type] / (double)r->flow_msgs;
        mean_want += want * (double)itch_msg_len(type);
        if (fabs(got - want) > 0.01 || fabs(got - want) > 0.2 * want + 0.0005)
            fail_msg("seed %llu type %c: %.4f of the flow, target %.4f",
                     (unsigned long long)cfg->seed, type, got, want);
    }
    return mean_want;
}

static void invariants_for_seed(uint64_t seed)
{
    static struct run r;
    struct md_gen_config cfg;
    md_gen_config_init(&cfg);
    cfg.seed = seed;
    run_checked(&r, &cfg, INVARIANT_MSGS);
    double mean_want = check_mix(&r, &cfg);
    double mean = (double)r.flow_bytes / (double)r.flow_msgs;
    assert_true(fabs(mean - mean_want) < 0.1);
    assert_true(mean > 28.0 && mean < 29.5);
    /* Channels: balanced within 2 points of 1/8. */
    for (uint32_t c = 0; c < cfg.channels; c++) {
        double share = (double)r.channel_msgs[c] / (double)INVARIANT_MSGS;
        if (fabs(share - 1.0 / cfg.channels) > 0.02)
            fail_msg("channel %u carries %.4f", c, share);
    }
    /* Zipf: the most popular symbol gets its share of the flow, within 15 %. */
    double top = (double)r.msgs_of_locate_top / (double)r.flow_msgs;
    double top_want = md_gen_popularity(&r.gen, r.top_locate);
    if (fabs(top - top_want) > 0.15 * top_want)
        fail_msg("top symbol: %.4f of the flow, popularity %.4f", top, top_want);
    /* Books are deep (the opening book) and the flow rarely had to substitute. */
    assert_true(md_book_counters(&r.book)->live_orders > 50000);
    assert_true(md_gen_counters(&r.gen)->no_live_order < 1000);
    run_close(&r);
}

/* Without an opening book the books stay thin: a third of the reference-taking draws find no
 * live order and become adds. The generator pays them back, so the mix still holds. */
static void test_mix_holds_on_thin_books(void **state)
{
    (void)state;
    static struct run r;
    struct md_gen_config cfg;
    md_gen_config_init(&cfg);
    cfg.seed = 11;
    cfg.opening_depth = 0;
    run_checked(&r, &cfg, 300000);
    check_mix(&r, &cfg);
    assert_true(md_gen_counters(&r.gen)->no_live_order > 10000);
    run_close(&r);
}

static void test_invariants_seed_1(void **state)
{
    (void)state;
    invariants_for_seed(1);
}

static void test_invariants_seed_2(void **state)
{
    (void)state;
    invariants_for_seed(0xC0FFEE);
}

static void test_invariants_seed_3(void **state)
{
    (void)state;
    invariants_for_seed(UINT64_MAX);
}

/* --- digests -------------------------------------------------------------------------------- */

#define DROP_MSGS 200000u

/* The feed's digest equals a subscriber's that applied the same messages; dropping one message
 * of any type changes it. An A or X whose order is deleted later ends in the same state with or
 * without it (the subscriber only counts an unknown reference), so the test drops one whose order
 * is still live at the end: pass 1 finds them, pass 2 (same seed, so the same stream) drops. */
static void test_digest_matches_and_drop_changes_it(void **state)
{
    (void)state;
    static const uint8_t drop_types[] = {'A', 'D', 'U', 'E', 'X', 'P'};
    enum { NDROP = sizeof(drop_types) };
    static uint64_t cand_index[2][DROP_MSGS], cand_ref[2][DROP_MSGS]; /* A, X */
    uint64_t ncand[2] = {0, 0};
    uint64_t chosen[NDROP];
    struct md_gen_config cfg;
    md_gen_config_init(&cfg);
    cfg.seed = 4;

    struct md_gen gen;
    struct md_book full;
    assert_int_equal(md_gen_init(&gen, &cfg), 0);
    book_open(&full, cfg.symbols, 77);
    uint64_t stream_hash = 0;
    for (int k = 0; k < NDROP; k++)
        chosen[k] = UINT64_MAX;
    for (uint64_t i = 0; i < DROP_MSGS; i++) {
        struct itch_msg m;
        uint8_t buf[ITCH_MAX_LEN];
        uint32_t ch;
        int len = md_gen_next(&gen, i, &m, &ch);
        assert_int_equal(itch_encode(&m, buf, sizeof(buf)), len);
        for (int b = 0; b < len; b++)
            stream_hash = stream_hash * 1099511628211u + buf[b];
        assert_int_equal(md_book_apply(&full, &m), 0);
        if (i < DROP_MSGS / 2)
            continue;
        if (m.type == 'A' || m.type == 'X') {
            int c = m.type == 'X';
            cand_index[c][ncand[c]] = i;
            cand_ref[c][ncand[c]++] = m.type == 'A' ? m.u.A.order_ref : m.u.X.order_ref;
        }
        for (int k = 0; k < NDROP; k++)
            if (chosen[k] == UINT64_MAX && m.type == drop_types[k] && m.type != 'A' &&
                m.type != 'X')
                chosen[k] = i;
    }
    for (int c = 0; c < 2; c++) {
        int k = c == 0 ? 0 : 4;
        for (uint64_t j = 0; j < ncand[c] && chosen[k] == UINT64_MAX; j++)
            if (md_book_find(md_gen_book(&gen), cand_ref[c][j]) != NULL)
                chosen[k] = cand_index[c][j];
    }
    uint64_t digest = md_gen_digest(&gen);
    assert_true(md_book_digest(&full) == digest);
    for (int k = 0; k < NDROP; k++)
        assert_true(chosen[k] != UINT64_MAX);

    struct md_gen again, other;
    struct md_book dropped[NDROP];
    assert_int_equal(md_gen_init(&again, &cfg), 0);
    cfg.seed = 5;
    assert_int_equal(md_gen_init(&other, &cfg), 0);
    for (int k = 0; k < NDROP; k++)
        book_open(&dropped[k], cfg.symbols, 78 + (uint64_t)k);
    uint64_t again_hash = 0;
    for (uint64_t i = 0; i < DROP_MSGS; i++) {
        struct itch_msg m, o;
        uint8_t buf[ITCH_MAX_LEN];
        uint32_t ch;
        int len = md_gen_next(&again, i, &m, &ch);
        md_gen_next(&other, i, &o, &ch);
        assert_int_equal(itch_encode(&m, buf, sizeof(buf)), len);
        for (int b = 0; b < len; b++)
            again_hash = again_hash * 1099511628211u + buf[b];
        for (int k = 0; k < NDROP; k++) {
            if (i == chosen[k]) {
                assert_int_equal(m.type, drop_types[k]);
                continue; /* this one never arrives */
            }
            md_book_apply(&dropped[k], &m);
        }
    }
    assert_true(again_hash == stream_hash); /* same seed, same bytes */
    assert_true(md_gen_digest(&again) == digest);
    assert_true(md_gen_digest(&other) != digest);
    for (int k = 0; k < NDROP; k++) {
        if (md_book_digest(&dropped[k]) == digest)
            fail_msg("dropping message %llu (%c) left the digest unchanged",
                     (unsigned long long)chosen[k], drop_types[k]);
        md_book_fini(&dropped[k]);
    }
    md_book_fini(&full);
    md_gen_fini(&gen);
    md_gen_fini(&again);
    md_gen_fini(&other);
}

/* --- caps, preamble, config ----------------------------------------------------------------- */

static void test_caps_hold_with_an_add_heavy_mix(void **state)
{
    (void)state;
    static struct run r;
    struct md_gen_config cfg;
    md_gen_config_init(&cfg);
    cfg.seed = 9;
    cfg.symbols = 50;
    cfg.channels = 4;
    cfg.max_orders_per_symbol = 20;
    cfg.max_orders = 300;
    cfg.opening_depth = 2;
    memset(cfg.mix, 0, sizeof(cfg.mix));
    cfg.mix[MD_GEN_ADD] = 80;
    cfg.mix[MD_GEN_DELETE] = 10;
    cfg.mix[MD_GEN_EXECUTE] = 5;
    cfg.mix[MD_GEN_CANCEL] = 5;
    run_open(&r, &cfg, 100000);
    for (uint64_t i = 0; i < 100000; i++) {
        step(&r, i, &cfg);
        assert_true(md_book_counters(md_gen_book(&r.gen))->live_orders <= cfg.max_orders);
        for (uint16_t l = 1; l <= cfg.symbols; l++)
            assert_true(md_book_order_count(md_gen_book(&r.gen), l) <= 20);
    }
    check_all_books(&r, cfg.symbols);
    assert_true(md_book_counters(md_gen_book(&r.gen))->max_live_orders == cfg.max_orders);
    const struct md_gen_counters *gc = md_gen_counters(&r.gen);
    assert_true(gc->forced_delete > 0);
    assert_true(gc->self_check_failures == 0);
    assert_true(md_book_counters(&r.book)->max_live_orders <= 300);
    assert_true(md_gen_digest(&r.gen) == md_book_digest(&r.book));
    run_close(&r);

    /* One order per symbol: the opening book and the flow both respect it. */
    cfg.max_orders_per_symbol = 1;
    cfg.opening_depth = 10;
    run_open(&r, &cfg, 20000);
    for (uint64_t i = 0; i < 20000; i++) {
        step(&r, i, &cfg);
        assert_true(md_book_order_count(md_gen_book(&r.gen), r.refs[r.next_ref - 1].locate) <= 1);
    }
    assert_true(md_gen_counters(&r.gen)->self_check_failures == 0);
    run_close(&r);
}

static void test_preamble_and_names(void **state)
{
    (void)state;
    struct md_gen_config cfg;
    md_gen_config_init(&cfg);
    cfg.symbols = 800;
    cfg.channels = 3;
    cfg.zipf_exponent = 0.0; /* uniform */
    struct md_gen gen;
    assert_int_equal(md_gen_init(&gen, &cfg), 0);
    struct itch_msg m;
    uint32_t ch;
    for (uint32_t c = 0; c < 3; c++) {
        assert_int_equal(md_gen_next(&gen, 5, &m, &ch), ITCH_SYSTEM_EVENT_LEN);
        assert_int_equal(m.type, 'S');
        assert_int_equal(m.u.S.event_code, 'O');
        assert_int_equal(m.stock_locate, 0);
        assert_int_equal(ch, c);
        assert_int_equal(m.tracking_number, 0);
        assert_true(m.timestamp_ns == 5);
    }
    static const struct {
        uint16_t locate;
        const char *name;
    } names[] = {{1, "A       "},   {26, "Z       "},  {27, "AA      "},
                 {702, "ZZ      "}, {703, "AAA     "}, {800, "ADT     "}};
    unsigned next_name = 0;
    uint32_t per_channel[3] = {0};
    for (uint32_t l = 1; l <= 800; l++) {
        assert_int_equal(md_gen_next(&gen, 6, &m, &ch), ITCH_STOCK_DIRECTORY_LEN);
        assert_int_equal(m.type, 'R');
        assert_int_equal(m.stock_locate, l);
        assert_int_equal(ch, md_gen_channel_of(&gen, (uint16_t)l));
        assert_int_equal(m.u.R.round_lot_size, 100);
        per_channel[ch]++;
        if (next_name < 6 && names[next_name].locate == l)
            assert_memory_equal(m.u.R.stock, names[next_name++].name, 8);
        assert_true(fabs(md_gen_popularity(&gen, (uint16_t)l) - 1.0 / 800) < 1e-12);
    }
    assert_int_equal(next_name, 6);
    for (int c = 0; c < 3; c++) /* uniform popularity: the balanced assignment deals evenly */
        assert_true(per_channel[c] >= 266 && per_channel[c] <= 267);
    assert_int_equal(md_gen_next(&gen, ITCH_TIMESTAMP_MAX + 1, &m, &ch), -ERANGE);
    assert_int_not_equal(md_gen_next(&gen, ITCH_TIMESTAMP_MAX, &m, &ch), -ERANGE);
    assert_true(m.timestamp_ns == ITCH_TIMESTAMP_MAX);
    md_gen_fini(&gen);
}

static void test_config_is_validated(void **state)
{
    (void)state;
    struct md_gen gen;
    struct md_gen_config cfg;
    md_gen_config_init(&cfg);
    cfg.symbols = 0;
    assert_int_equal(md_gen_init(&gen, &cfg), -EINVAL);
    md_gen_config_init(&cfg);
    cfg.symbols = 65536;
    assert_int_equal(md_gen_init(&gen, &cfg), -EINVAL);
    md_gen_config_init(&cfg);
    cfg.symbols = 4;
    cfg.channels = 5;
    assert_int_equal(md_gen_init(&gen, &cfg), -EINVAL);
    md_gen_config_init(&cfg);
    cfg.channels = 0;
    assert_int_equal(md_gen_init(&gen, &cfg), -EINVAL);
    md_gen_config_init(&cfg);
    cfg.zipf_exponent = -0.5;
    assert_int_equal(md_gen_init(&gen, &cfg), -EINVAL);
    cfg.zipf_exponent = NAN;
    assert_int_equal(md_gen_init(&gen, &cfg), -EINVAL);
    md_gen_config_init(&cfg);
    memset(cfg.mix, 0, sizeof(cfg.mix));
    assert_int_equal(md_gen_init(&gen, &cfg), -EINVAL);
    md_gen_config_init(&cfg);
    cfg.max_orders = 0;
    assert_int_equal(md_gen_init(&gen, &cfg), -EINVAL);
    md_gen_config_init(&cfg);
    cfg.symbols = 65535;
    cfg.channels = 1024;
    assert_int_equal(md_gen_init(&gen, &cfg), 0);
    md_gen_fini(&gen);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_invariants_seed_1),
        cmocka_unit_test(test_invariants_seed_2),
        cmocka_unit_test(test_invariants_seed_3),
        cmocka_unit_test(test_mix_holds_on_thin_books),
        cmocka_unit_test(test_digest_matches_and_drop_changes_it),
        cmocka_unit_test(test_caps_hold_with_an_add_heavy_mix),
        cmocka_unit_test(test_preamble_and_names),
        cmocka_unit_test(test_config_is_validated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
