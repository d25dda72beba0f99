/* SPDX-License-Identifier: BSD-2-Clause */
/* md_gen.c - the synthetic order-flow generator (the model is in md_gen.h). */
#include "md_gen.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define TICK          100 /* one cent in 1/10000 dollars */
#define REDRAWS       4   /* symbol draws before a substitution */
#define MAX_CHANNELS  1024
#define MAX_DEPTH     200 /* ticks from the mid for a new order */
#define MID_STEP_ODDS 8   /* the mid moves a tick on one order in MID_STEP_ODDS */

static const uint32_t default_mix[MD_GEN_KINDS] = {
    [MD_GEN_ADD] = 4300,     [MD_GEN_ADD_MPID] = 100, [MD_GEN_DELETE] = 4200,
    [MD_GEN_REPLACE] = 1000, [MD_GEN_EXECUTE] = 225,  [MD_GEN_EXECUTE_PRICE] = 25,
    [MD_GEN_CANCEL] = 100,   [MD_GEN_TRADE] = 50,
};

static const char mpids[][4] = {{'G', 'S', 'C', 'O'}, {'M', 'S', 'C', 'O'}, {'U', 'B', 'S', 'S'},
                                {'N', 'I', 'T', 'E'}, {'C', 'D', 'R', 'G'}, {'V', 'I', 'R', 'T'}};

uint8_t md_gen_kind_type(enum md_gen_kind kind)
{
    static const uint8_t types[MD_GEN_KINDS] = {
        [MD_GEN_ADD] = ITCH_ADD_ORDER,          [MD_GEN_ADD_MPID] = ITCH_ADD_ORDER_MPID,
        [MD_GEN_DELETE] = ITCH_ORDER_DELETE,    [MD_GEN_REPLACE] = ITCH_ORDER_REPLACE,
        [MD_GEN_EXECUTE] = ITCH_ORDER_EXECUTED, [MD_GEN_EXECUTE_PRICE] = ITCH_ORDER_EXECUTED_PRICE,
        [MD_GEN_CANCEL] = ITCH_ORDER_CANCEL,    [MD_GEN_TRADE] = ITCH_TRADE,
    };
    return (unsigned)kind < MD_GEN_KINDS ? types[kind] : 0;
}

void md_gen_config_init(struct md_gen_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->seed = 1;
    cfg->symbols = 8000;
    cfg->channels = 8;
    cfg->zipf_exponent = 1.0;
    memcpy(cfg->mix, default_mix, sizeof(cfg->mix));
    cfg->max_orders_per_symbol = 1000;
    cfg->opening_depth = 10;
    cfg->max_orders = 1u << 20;
}

/* --- randomness (splitmix64: one word of state, fast, passes BigCrush) ----------------------- */

static uint64_t rng_next(struct md_gen *g)
{
    uint64_t z = (g->rng += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0 (multiply-shift; the bias is below 2^-32 n). */
static uint32_t rng_below(struct md_gen *g, uint32_t n)
{
    return (uint32_t)(((rng_next(g) >> 32) * n) >> 32);
}

/* Uniform in [0, 1). */
static double rng_unit(struct md_gen *g)
{
    return (double)(rng_next(g) >> 11) * 0x1p-53;
}

/* Exponentially distributed integer with the given mean, capped. */
static uint32_t rng_exp(struct md_gen *g, double mean, uint32_t cap)
{
    double v = -mean * log1p(-rng_unit(g));
    return v >= cap ? cap : (uint32_t)v;
}

/* --- setup ---------------------------------------------------------------------------------- */

/* Bijective base 26: 1 "A", 26 "Z", 27 "AA", ... */
static void symbol_name(uint32_t locate, char stock[ITCH_STOCK_LEN])
{
    char rev[ITCH_STOCK_LEN];
    unsigned n = 0;
    for (uint32_t v = locate; v > 0 && n < ITCH_STOCK_LEN; v = (v - 1) / 26)
        rev[n++] = (char)('A' + (v - 1) % 26);
    memset(stock, ' ', ITCH_STOCK_LEN);
    for (unsigned i = 0; i < n; i++)
        stock[i] = rev[n - 1 - i];
}

/* Opening book depth of a symbol: its popularity's share of opening_depth x symbols orders, at
 * least one order a side (two orders, or the cap if smaller), at most half the cap. */
static uint32_t opening_count(const struct md_gen *g, uint16_t locate)
{
    if (g->cfg.opening_depth == 0)
        return 0;
    double want = (double)g->cfg.opening_depth * g->cfg.symbols * md_gen_popularity(g, locate);
    uint32_t cap = g->cfg.max_orders_per_symbol;
    uint32_t least = cap < 2 ? cap : 2;
    uint32_t most = cap / 2 > least ? cap / 2 : least;
    uint32_t n = want >= most ? most : (uint32_t)llround(want);
    return n < least ? least : n;
}

static int validate(const struct md_gen_config *cfg)
{
    if (cfg->symbols == 0 || cfg->symbols > 65535 || cfg->channels == 0 ||
        cfg->channels > cfg->symbols || cfg->channels > MAX_CHANNELS ||
        !(cfg->zipf_exponent >= 0.0 && cfg->zipf_exponent <= 100.0) ||
        cfg->max_orders_per_symbol == 0 || cfg->max_orders == 0 || cfg->max_orders > (1u << 30))
        return -EINVAL;
    uint64_t sum = 0;
    for (unsigned k = 0; k < MD_GEN_KINDS; k++)
        sum += cfg->mix[k];
    return sum == 0 || sum > UINT32_MAX ? -EINVAL : 0;
}

/* Longest-processing-time assignment: in popularity order, the least loaded channel. */
static int assign_channels(struct md_gen *g)
{
    double *load = calloc(g->cfg.channels, sizeof(*load));
    if (load == NULL)
        return -ENOMEM;
    double prev = 0.0;
    for (uint32_t r = 0; r < g->cfg.symbols; r++) {
        uint32_t best = 0;
        for (uint32_t c = 1; c < g->cfg.channels; c++)
            if (load[c] < load[best])
                best = c;
        load[best] += g->cdf[r] - prev;
        prev = g->cdf[r];
        g->channel_of[g->locate_of_rank[r]] = (uint16_t)best;
    }
    free(load);
    return 0;
}

int md_gen_init(struct md_gen *gen, const struct md_gen_config *cfg)
{
    memset(gen, 0, sizeof(*gen));
    if (cfg == NULL || validate(cfg) < 0)
        return -EINVAL;
    gen->cfg = *cfg;
    gen->rng = cfg->seed;
    uint32_t n = cfg->symbols;
    gen->cdf = malloc(n * sizeof(*gen->cdf));
    gen->locate_of_rank = malloc(n * sizeof(*gen->locate_of_rank));
    gen->rank_of_locate = calloc(n + 1, sizeof(*gen->rank_of_locate));
    gen->channel_of = calloc(n + 1, sizeof(*gen->channel_of));
    gen->channel_msgs = calloc(cfg->channels, sizeof(*gen->channel_msgs));
    gen->symbols = calloc(n + 1, sizeof(*gen->symbols));
    if (gen->cdf == NULL || gen->locate_of_rank == NULL || gen->rank_of_locate == NULL ||
        gen->channel_of == NULL || gen->channel_msgs == NULL || gen->symbols == NULL)
        goto nomem;

    double sum = 0.0;
    for (uint32_t r = 0; r < n; r++) {
        sum += pow((double)r + 1.0, -cfg->zipf_exponent);
        gen->cdf[r] = sum;
    }
    for (uint32_t r = 0; r < n; r++)
        gen->locate_of_rank[r] = (uint16_t)(r + 1);
    for (uint32_t r = n - 1; r > 0; r--) { /* Fisher-Yates */
        uint32_t j = rng_below(gen, r + 1);
        uint16_t t = gen->locate_of_rank[r];
        gen->locate_of_rank[r] = gen->locate_of_rank[j];
        gen->locate_of_rank[j] = t;
    }
    for (uint32_t r = 0; r < n; r++)
        gen->rank_of_locate[gen->locate_of_rank[r]] = (uint16_t)r;
    if (assign_channels(gen) < 0)
        goto nomem;
    for (uint32_t l = 1; l <= n; l++) {
        /* Log-uniform $5..$500 on the tick grid. */
        double dollars = 5.0 * pow(100.0, rng_unit(gen));
        uint32_t base = (uint32_t)(dollars * ITCH_PRICE_SCALE / TICK) * TICK;
        gen->symbols[l].base = base;
        gen->symbols[l].mid = base;
    }
    uint32_t cum = 0;
    for (unsigned k = 0; k < MD_GEN_KINDS; k++) {
        cum += cfg->mix[k];
        gen->mix_cum[k] = cum;
    }

    struct md_book_config bc;
    md_book_config_init(&bc);
    bc.max_locate = n;
    bc.max_orders = cfg->max_orders;
    if (bc.max_levels_per_side < cfg->max_orders_per_symbol)
        bc.max_levels_per_side = cfg->max_orders_per_symbol;
    bc.hash_seed = rng_next(gen);
    int rc = md_book_init(&gen->book, &bc);
    if (rc < 0) {
        md_gen_fini(gen);
        return rc;
    }
    gen->next_ref = 1;
    gen->next_match = 1;
    uint64_t opening = 0;
    for (uint32_t l = 1; l <= n; l++)
        opening += opening_count(gen, (uint16_t)l);
    if (opening > cfg->max_orders) {
        md_gen_fini(gen);
        return -EINVAL;
    }
    gen->preamble_len = cfg->channels + n + opening;
    return 0;
nomem:
    md_gen_fini(gen);
    return -ENOMEM;
}

void md_gen_fini(struct md_gen *gen)
{
    free(gen->cdf);
    free(gen->locate_of_rank);
    free(gen->rank_of_locate);
    free(gen->channel_of);
    free(gen->channel_msgs);
    free(gen->symbols);
    md_book_fini(&gen->book);
    memset(gen, 0, sizeof(*gen));
}

/* --- drawing -------------------------------------------------------------------------------- */

static uint16_t draw_symbol(struct md_gen *g)
{
    double u = rng_unit(g) * g->cdf[g->cfg.symbols - 1];
    uint32_t lo = 0, hi = g->cfg.symbols - 1;
    while (lo < hi) { /* the first rank whose cumulative weight exceeds u */
        uint32_t mid = lo + (hi - lo) / 2;
        if (g->cdf[mid] > u)
            hi = mid;
        else
            lo = mid + 1;
    }
    return g->locate_of_rank[lo];
}

static enum md_gen_kind draw_kind(struct md_gen *g)
{
    uint32_t r = rng_below(g, g->mix_cum[MD_GEN_KINDS - 1]);
    unsigned k = 0;
    while (g->mix_cum[k] <= r)
        k++;
    return (enum md_gen_kind)k;
}

static uint32_t order_count(const struct md_gen *g, uint16_t locate)
{
    return md_book_order_count(&g->book, locate);
}

/* A symbol with a live order: the hint, else up to REDRAWS draws (0 if none had one). */
static uint16_t draw_with_orders(struct md_gen *g, uint16_t *last)
{
    for (int i = 0; i < REDRAWS; i++) {
        uint16_t l = draw_symbol(g);
        *last = l;
        if (order_count(g, l) > 0)
            return l;
    }
    return 0;
}

static const struct md_order *random_order(struct md_gen *g, uint16_t locate)
{
    return md_book_order_at(&g->book, locate, rng_below(g, order_count(g, locate)));
}

/* Price for a new order on side: a depth below/above the mid, never crossing or locking the
 * other side's best. Every ask is at least two ticks (above a bid >= 1 tick or a mid of
 * >= $2.50), so a bid one tick under it stays positive. */
static uint32_t new_price(struct md_gen *g, uint16_t locate, char side)
{
    struct md_gen_symbol *s = &g->symbols[locate];
    if (rng_below(g, MID_STEP_ODDS) == 0) {
        uint32_t lo = s->base / 2 / TICK * TICK, hi = s->base * 2;
        if (rng_below(g, 2) == 0)
            s->mid = s->mid - TICK >= lo ? s->mid - TICK : s->mid + TICK;
        else
            s->mid = s->mid + TICK <= hi ? s->mid + TICK : s->mid - TICK;
    }
    uint32_t offset = TICK * (1 + rng_exp(g, 3.0, MAX_DEPTH));
    struct md_bbo bbo;
    md_book_bbo(&g->book, locate, &bbo);
    uint32_t p;
    if (side == 'B') {
        p = s->mid > offset + TICK ? s->mid - offset : TICK;
        if (bbo.ask_price != 0 && p >= bbo.ask_price)
            p = bbo.ask_price - TICK;
    } else {
        p = s->mid + offset;
        if (bbo.bid_price != 0 && p <= bbo.bid_price)
            p = bbo.bid_price + TICK;
    }
    return p;
}

/* Round lots mostly (mean ~250 shares), an odd lot one time in ten. */
static uint32_t new_shares(struct md_gen *g)
{
    if (rng_below(g, 10) == 0)
        return 1 + rng_below(g, 99);
    return 100 * (1 + rng_exp(g, 1.5, 99));
}

/* --- messages ------------------------------------------------------------------------------- */

/* An add on locate; side 0 picks one at random. Opening adds are not flow (not in by_kind). */
static void emit_add(struct md_gen *g, struct itch_msg *m, enum md_gen_kind kind, uint16_t locate,
                     char side)
{
    struct itch_add_order *a = kind == MD_GEN_ADD_MPID ? &m->u.F.add : &m->u.A;
    m->type = md_gen_kind_type(kind);
    m->stock_locate = locate;
    a->order_ref = g->next_ref++;
    a->side = side != 0 ? side : rng_below(g, 2) == 0 ? 'B' : 'S';
    a->shares = new_shares(g);
    memcpy(a->stock, md_book_stock(&g->book, locate), ITCH_STOCK_LEN);
    a->price = new_price(g, locate, a->side);
    if (kind == MD_GEN_ADD_MPID)
        memcpy(m->u.F.attribution, mpids[rng_below(g, sizeof(mpids) / sizeof(mpids[0]))], 4);
    if (side == 0)
        g->counters.by_kind[kind]++;
}

static void emit_delete(struct md_gen *g, struct itch_msg *m, const struct md_order *o)
{
    m->type = ITCH_ORDER_DELETE;
    m->stock_locate = o->locate;
    m->u.D.order_ref = o->ref;
    g->counters.by_kind[MD_GEN_DELETE]++;
}

static void emit_replace(struct md_gen *g, struct itch_msg *m, const struct md_order *o)
{
    m->type = ITCH_ORDER_REPLACE;
    m->stock_locate = o->locate;
    m->u.U.orig_order_ref = o->ref;
    m->u.U.new_order_ref = g->next_ref++;
    m->u.U.shares = new_shares(g);
    m->u.U.price = new_price(g, o->locate, o->side);
    g->counters.by_kind[MD_GEN_REPLACE]++;
}

static void emit_execution(struct md_gen *g, struct itch_msg *m, const struct md_order *o,
                           bool with_price)
{
    struct itch_order_executed *e = with_price ? &m->u.C.exec : &m->u.E;
    m->type = with_price ? ITCH_ORDER_EXECUTED_PRICE : ITCH_ORDER_EXECUTED;
    m->stock_locate = o->locate;
    e->order_ref = o->ref;
    e->shares = rng_below(g, 5) < 3 ? o->shares : 1 + rng_below(g, o->shares);
    e->match_number = g->next_match++;
    if (with_price) {
        m->u.C.printable = rng_below(g, 4) != 0 ? 'Y' : 'N';
        m->u.C.price = o->price;
        if (rng_below(g, 2) == 0) /* a tick of price improvement for the taker */
            m->u.C.price =
                o->side == 'B' ? (o->price > TICK ? o->price - TICK : o->price) : o->price + TICK;
    }
    g->counters.by_kind[with_price ? MD_GEN_EXECUTE_PRICE : MD_GEN_EXECUTE]++;
}

static void emit_cancel(struct md_gen *g, struct itch_msg *m, const struct md_order *o)
{
    if (o->shares < 2) {
        g->counters.cancel_as_delete++;
        emit_delete(g, m, o);
        return;
    }
    m->type = ITCH_ORDER_CANCEL;
    m->stock_locate = o->locate;
    m->u.X.order_ref = o->ref;
    m->u.X.shares = 1 + rng_below(g, o->shares - 1);
    g->counters.by_kind[MD_GEN_CANCEL]++;
}

static void emit_trade(struct md_gen *g, struct itch_msg *m, uint16_t locate)
{
    struct md_bbo bbo;
    md_book_bbo(&g->book, locate, &bbo);
    m->type = ITCH_TRADE;
    m->stock_locate = locate;
    m->u.P.order_ref = 0;
    m->u.P.side = 'B';
    m->u.P.shares = new_shares(g);
    memcpy(m->u.P.stock, md_book_stock(&g->book, locate), ITCH_STOCK_LEN);
    if (bbo.bid_price != 0 && bbo.ask_price != 0)
        m->u.P.price = bbo.bid_price + (bbo.ask_price - bbo.bid_price) / (2 * TICK) * TICK;
    else
        m->u.P.price = g->symbols[locate].mid;
    m->u.P.match_number = g->next_match++;
    g->counters.by_kind[MD_GEN_TRADE]++;
}

/* A delete instead of an add at a cap: of the hint's orders, else of any symbol's. */
static void emit_forced_delete(struct md_gen *g, struct itch_msg *m, uint16_t hint)
{
    uint16_t last = hint;
    uint16_t locate = order_count(g, hint) > 0 ? hint : draw_with_orders(g, &last);
    for (uint32_t i = 0; locate == 0 && i < g->cfg.symbols; i++) {
        uint16_t l = (uint16_t)((hint + i) % g->cfg.symbols + 1);
        if (order_count(g, l) > 0)
            locate = l;
    }
    g->counters.forced_delete++;
    emit_delete(g, m, random_order(g, locate));
}

/* An add on a symbol under its cap (up to REDRAWS draws, starting with hint if not 0). */
static void flow_add(struct md_gen *g, struct itch_msg *m, enum md_gen_kind kind, uint16_t hint)
{
    uint16_t locate = hint;
    for (int i = 0;
         i < REDRAWS && (locate == 0 || order_count(g, locate) >= g->cfg.max_orders_per_symbol);
         i++)
        locate = draw_symbol(g);
    if (order_count(g, locate) >= g->cfg.max_orders_per_symbol ||
        md_book_counters(&g->book)->live_orders >= g->cfg.max_orders) {
        emit_forced_delete(g, m, locate);
        return;
    }
    emit_add(g, m, kind, locate, 0);
}

/* The kind the mix owes most (drawn more often than emitted), or MD_GEN_KINDS. */
static enum md_gen_kind most_owed(const struct md_gen *g)
{
    enum md_gen_kind best = MD_GEN_KINDS;
    uint64_t most = 0;
    for (unsigned k = 0; k < MD_GEN_KINDS; k++) {
        uint64_t drawn = g->counters.drawn[k], emitted = g->counters.by_kind[k];
        if (drawn > emitted && drawn - emitted > most) {
            most = drawn - emitted;
            best = (enum md_gen_kind)k;
        }
    }
    return best;
}

static void flow_next(struct md_gen *g, struct itch_msg *m)
{
    enum md_gen_kind kind = draw_kind(g);
    /* A kind already emitted as often as drawn gives its turn to one the substitutions below
     * owe, so the long-run mix stays the configured one. */
    if (++g->counters.drawn[kind] <= g->counters.by_kind[kind]) {
        enum md_gen_kind owed = most_owed(g);
        if (owed != MD_GEN_KINDS)
            kind = owed;
    }
    if (kind == MD_GEN_ADD || kind == MD_GEN_ADD_MPID) {
        flow_add(g, m, kind, 0);
        return;
    }
    if (kind == MD_GEN_TRADE) {
        emit_trade(g, m, draw_symbol(g));
        return;
    }
    uint16_t last = 0;
    uint16_t locate = draw_with_orders(g, &last);
    if (locate == 0) {
        g->counters.no_live_order++;
        flow_add(g, m, MD_GEN_ADD, last);
        return;
    }
    const struct md_order *o = random_order(g, locate);
    switch (kind) {
    case MD_GEN_DELETE:
        emit_delete(g, m, o);
        break;
    case MD_GEN_REPLACE:
        emit_replace(g, m, o);
        break;
    case MD_GEN_EXECUTE:
    case MD_GEN_EXECUTE_PRICE:
        emit_execution(g, m, o, kind == MD_GEN_EXECUTE_PRICE);
        break;
    default:
        emit_cancel(g, m, o);
        break;
    }
}

static void emit_system_event(struct itch_msg *m)
{
    m->type = ITCH_SYSTEM_EVENT;
    m->stock_locate = 0;
    m->u.S.event_code = 'O';
}

static void emit_directory(struct itch_msg *m, uint16_t locate)
{
    struct itch_stock_directory *r = &m->u.R;
    m->type = ITCH_STOCK_DIRECTORY;
    m->stock_locate = locate;
    symbol_name(locate, r->stock);
    r->market_category = 'Q';
    r->financial_status = 'N';
    r->round_lot_size = 100;
    r->round_lots_only = 'N';
    r->issue_classification = 'C';
    r->issue_subtype[0] = 'Z';
    r->issue_subtype[1] = ' ';
    r->authenticity = 'P';
    r->short_sale_threshold = 'N';
    r->ipo_flag = 'N';
    r->luld_tier = '1';
    r->etp_flag = 'N';
    r->etp_leverage_factor = 0;
    r->inverse_indicator = 'N';
}

/* The next message of the session's start, or false once it is over. */
static bool preamble_next(struct md_gen *g, struct itch_msg *m, uint32_t *channel)
{
    if (g->next_preamble < g->cfg.channels) {
        *channel = g->next_preamble++;
        emit_system_event(m);
        return true;
    }
    if (g->next_preamble < g->cfg.channels + g->cfg.symbols) {
        emit_directory(m, (uint16_t)(++g->next_preamble - g->cfg.channels));
        return true;
    }
    while (g->opening_left == 0 && g->opening_locate < g->cfg.symbols)
        g->opening_left = opening_count(g, (uint16_t)++g->opening_locate);
    if (g->opening_left == 0)
        return false;
    g->opening_left--;
    emit_add(g, m, MD_GEN_ADD, (uint16_t)g->opening_locate, g->opening_left % 2 ? 'B' : 'S');
    g->counters.opening_adds++;
    return true;
}

int md_gen_next(struct md_gen *gen, uint64_t ts_ns, struct itch_msg *out, uint32_t *channel)
{
    if (ts_ns > ITCH_TIMESTAMP_MAX)
        return -ERANGE;
    memset(out, 0, sizeof(*out));
    uint32_t ch = 0;
    if (gen->counters.messages >= gen->preamble_len || !preamble_next(gen, out, &ch))
        flow_next(gen, out);
    if (out->type != ITCH_SYSTEM_EVENT)
        ch = gen->channel_of[out->stock_locate];
    out->timestamp_ns = ts_ns;
    out->tracking_number = gen->channel_msgs[ch]++;
    if (md_book_apply(&gen->book, out) != 0)
        gen->counters.self_check_failures++;
    int len = (int)itch_msg_len(out->type);
    gen->counters.messages++;
    gen->counters.bytes += (uint64_t)len;
    if (channel != NULL)
        *channel = ch;
    return len;
}

uint64_t md_gen_preamble_length(const struct md_gen *gen)
{
    return gen->preamble_len;
}

uint32_t md_gen_channel_of(const struct md_gen *gen, uint16_t locate)
{
    return locate >= 1 && locate <= gen->cfg.symbols ? gen->channel_of[locate] : 0;
}

const struct md_book *md_gen_book(const struct md_gen *gen)
{
    return &gen->book;
}

const struct md_gen_counters *md_gen_counters(const struct md_gen *gen)
{
    return &gen->counters;
}

double md_gen_popularity(const struct md_gen *gen, uint16_t locate)
{
    if (locate < 1 || locate > gen->cfg.symbols)
        return 0.0;
    uint32_t r = gen->rank_of_locate[locate];
    double below = r > 0 ? gen->cdf[r - 1] : 0.0;
    return (gen->cdf[r] - below) / gen->cdf[gen->cfg.symbols - 1];
}

uint64_t md_gen_digest(const struct md_gen *gen)
{
    return md_book_digest(&gen->book);
}
