/* SPDX-License-Identifier: BSD-2-Clause */
/* md_book.c - order books, VWAP and digest from ITCH messages (the model is in md_book.h). */
#include "md_book.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(MD_BOOK_NERRORS == 12, "MD_BOOK_NERRORS counts MD_BOOK_ERROR_MAP");

#define LEVELS_INITIAL 8
#define ORDERS_INITIAL 8

const char *md_book_error_name(int err)
{
    switch (err) {
    case MD_BOOK_OK:
        return "ok";
#define MD_BOOK_ERROR_NAME_(name, value, field, text) \
    case MD_BOOK_E_##name:                            \
        return #field;
        MD_BOOK_ERROR_MAP(MD_BOOK_ERROR_NAME_)
#undef MD_BOOK_ERROR_NAME_
    }
    return "?";
}

const char *md_book_error_text(int err)
{
    switch (err) {
    case MD_BOOK_OK:
        return "applied";
#define MD_BOOK_ERROR_TEXT_(name, value, field, text) \
    case MD_BOOK_E_##name:                            \
        return text;
        MD_BOOK_ERROR_MAP(MD_BOOK_ERROR_TEXT_)
#undef MD_BOOK_ERROR_TEXT_
    }
    return "unknown error";
}

void md_book_config_init(struct md_book_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->max_locate = 65535;
    cfg->max_orders = 1u << 20;
    cfg->max_levels_per_side = 4096;
    cfg->hash_seed = UINT64_C(0x6a09e667f3bcc909);
}

/* splitmix64's finalizer: a bijective 64-bit mix. */
static inline uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= UINT64_C(0xbf58476d1ce4e5b9);
    x ^= x >> 27;
    x *= UINT64_C(0x94d049bb133111eb);
    x ^= x >> 31;
    return x;
}

int md_book_init(struct md_book *book, const struct md_book_config *cfg)
{
    memset(book, 0, sizeof(*book));
    if (cfg == NULL || cfg->max_locate == 0 || cfg->max_locate > 65535 || cfg->max_orders == 0 ||
        cfg->max_orders > (1u << 30) || cfg->max_levels_per_side == 0)
        return -EINVAL;
    book->cfg = *cfg;
    uint64_t table_size = 2;
    while (table_size < 2 * (uint64_t)cfg->max_orders)
        table_size <<= 1;
    book->symbols = calloc((size_t)cfg->max_locate + 1, sizeof(*book->symbols));
    book->pool = calloc(cfg->max_orders, sizeof(*book->pool));
    book->table = calloc(table_size, sizeof(*book->table));
    if (book->symbols == NULL || book->pool == NULL || book->table == NULL) {
        md_book_fini(book);
        return -ENOMEM;
    }
    book->table_mask = (uint32_t)(table_size - 1);
    return 0;
}

void md_book_fini(struct md_book *book)
{
    if (book->symbols != NULL) {
        for (uint32_t i = 0; i <= book->cfg.max_locate; i++) {
            free(book->symbols[i].bids.levels);
            free(book->symbols[i].asks.levels);
            free(book->symbols[i].orders);
        }
    }
    free(book->symbols);
    free(book->pool);
    free(book->table);
    memset(book, 0, sizeof(*book));
}

const struct md_book_counters *md_book_counters(const struct md_book *book)
{
    return &book->counters;
}

static int refuse(struct md_book *book, int err)
{
    book->counters.errors[-err - 1]++;
    return err;
}

/* --- the order table ------------------------------------------------------------------------ */

static inline uint32_t table_home(const struct md_book *book, uint64_t ref)
{
    return (uint32_t)mix64(ref ^ book->cfg.hash_seed) & book->table_mask;
}

/* The table slot holding ref, or the empty slot where it would go. */
static uint32_t table_slot(const struct md_book *book, uint64_t ref)
{
    uint32_t i = table_home(book, ref);
    while (book->table[i] != 0 && book->pool[book->table[i] - 1].ref != ref)
        i = (i + 1) & book->table_mask;
    return i;
}

static struct md_order *order_find(const struct md_book *book, uint64_t ref)
{
    uint32_t v = book->table[table_slot(book, ref)];
    return v != 0 ? &book->pool[v - 1] : NULL;
}

/* Removes the entry at slot i and shifts the rest of its probe run back (no tombstones). */
static void table_remove_slot(struct md_book *book, uint32_t i)
{
    uint32_t mask = book->table_mask;
    uint32_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        uint32_t v = book->table[j];
        if (v == 0)
            break;
        uint32_t home = table_home(book, book->pool[v - 1].ref);
        /* The entry at j may move to i only if its home is not in (i, j] (cyclically). */
        if (((j - home) & mask) >= ((j - i) & mask)) {
            book->table[i] = v;
            i = j;
        }
    }
    book->table[i] = 0;
}

/* --- price levels --------------------------------------------------------------------------- */

static inline struct md_side *side_of(struct md_symbol *sym, char side)
{
    return side == 'B' ? &sym->bids : &sym->asks;
}

/* Sort key: ascending keys put the best price last on both sides. */
static inline uint32_t level_key(char side, uint32_t price)
{
    return side == 'B' ? price : ~price;
}

/* Index of the level at price, or -(insertion index) - 1. */
static int64_t level_search(const struct md_side *s, char side, uint32_t price)
{
    uint32_t key = level_key(side, price);
    uint32_t lo = 0, hi = s->count;
    /* Most traffic is at the top of the book: the end of the array. */
    if (hi > 0 && level_key(side, s->levels[hi - 1].price) <= key)
        lo = hi - 1;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        uint32_t k = level_key(side, s->levels[mid].price);
        if (k == key)
            return mid;
        if (k < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -(int64_t)lo - 1;
}

/* Adds shares of one new order at price; 0 or an error (nothing changed). */
static int level_add(struct md_book *book, struct md_side *s, char side, uint32_t price,
                     uint32_t shares)
{
    int64_t at = level_search(s, side, price);
    if (at >= 0) {
        s->levels[at].shares += shares;
        s->levels[at].orders++;
        return 0;
    }
    uint32_t pos = (uint32_t)(-at - 1);
    if (s->count == book->cfg.max_levels_per_side)
        return MD_BOOK_E_LEVELS_FULL;
    if (s->count == s->cap) {
        uint32_t cap = s->cap == 0 ? LEVELS_INITIAL : s->cap * 2;
        if (cap > book->cfg.max_levels_per_side)
            cap = book->cfg.max_levels_per_side;
        struct md_level *grown = realloc(s->levels, (size_t)cap * sizeof(*grown));
        if (grown == NULL)
            return MD_BOOK_E_NO_MEMORY;
        s->levels = grown;
        s->cap = cap;
    }
    memmove(&s->levels[pos + 1], &s->levels[pos], (size_t)(s->count - pos) * sizeof(*s->levels));
    s->levels[pos] = (struct md_level){.price = price, .orders = 1, .shares = shares};
    s->count++;
    return 0;
}

/* Takes shares (and the order itself when gone) off the level at price; it exists by
 * construction (every live order is counted in its level). */
static void level_reduce(struct md_side *s, char side, uint32_t price, uint32_t shares,
                         bool order_gone)
{
    int64_t at = level_search(s, side, price);
    struct md_level *l = &s->levels[at];
    l->shares -= shares;
    if (order_gone && --l->orders == 0) {
        s->count--;
        memmove(l, l + 1, (size_t)(s->count - (uint32_t)at) * sizeof(*l));
    }
}

/* --- orders --------------------------------------------------------------------------------- */

static int order_add(struct md_book *book, uint16_t locate, uint64_t ref, char side,
                     uint32_t shares, uint32_t price)
{
    struct md_symbol *sym = &book->symbols[locate];
    uint32_t slot = table_slot(book, ref);
    if (book->table[slot] != 0)
        return MD_BOOK_E_DUPLICATE_REF;
    if (book->free_head == 0 && book->pool_used == book->cfg.max_orders)
        return MD_BOOK_E_ORDERS_FULL;
    if (sym->order_count == sym->order_cap) {
        uint32_t cap = sym->order_cap == 0 ? ORDERS_INITIAL : sym->order_cap * 2;
        if (cap > book->cfg.max_orders)
            cap = book->cfg.max_orders;
        uint32_t *grown = realloc(sym->orders, (size_t)cap * sizeof(*grown));
        if (grown == NULL)
            return MD_BOOK_E_NO_MEMORY;
        sym->orders = grown;
        sym->order_cap = cap;
    }
    int rc = level_add(book, side_of(sym, side), side, price, shares);
    if (rc < 0)
        return rc;
    uint32_t idx;
    if (book->free_head != 0) {
        idx = book->free_head - 1;
        book->free_head = book->pool[idx].pos;
    } else {
        idx = book->pool_used++;
    }
    book->pool[idx] = (struct md_order){.ref = ref,
                                        .price = price,
                                        .shares = shares,
                                        .pos = sym->order_count,
                                        .locate = locate,
                                        .side = side,
                                        .live = 1};
    sym->orders[sym->order_count++] = idx;
    book->table[slot] = idx + 1;
    if (++book->counters.live_orders > book->counters.max_live_orders)
        book->counters.max_live_orders = book->counters.live_orders;
    return 0;
}

/* Removes o, whose entry is at table slot `slot`. */
static void order_remove(struct md_book *book, struct md_order *o, uint32_t slot)
{
    struct md_symbol *sym = &book->symbols[o->locate];
    uint32_t idx = (uint32_t)(o - book->pool);
    level_reduce(side_of(sym, o->side), o->side, o->price, o->shares, true);
    uint32_t last = sym->orders[--sym->order_count];
    sym->orders[o->pos] = last;
    book->pool[last].pos = o->pos;
    table_remove_slot(book, slot);
    o->live = 0;
    o->pos = book->free_head;
    book->free_head = idx + 1;
    book->counters.live_orders--;
}

/* Takes shares off an order (clamped by the caller), removing it at zero. */
static void order_reduce(struct md_book *book, struct md_order *o, uint32_t slot, uint32_t shares)
{
    if (shares == o->shares) {
        order_remove(book, o, slot);
        return;
    }
    level_reduce(side_of(&book->symbols[o->locate], o->side), o->side, o->price, shares, false);
    o->shares -= shares;
}

static void vwap_add(struct md_vwap *v, uint32_t price, uint32_t shares)
{
    uint64_t notional = (uint64_t)price * shares;
    v->notional_lo += notional;
    v->notional_hi += v->notional_lo < notional; /* carry */
    v->shares += shares;
    v->executions++;
}

/* --- messages ------------------------------------------------------------------------------- */

static bool locate_ok(const struct md_book *book, uint16_t locate)
{
    return locate != 0 && locate <= book->cfg.max_locate;
}

static int apply_add(struct md_book *book, uint16_t locate, const struct itch_add_order *a)
{
    if (!locate_ok(book, locate))
        return MD_BOOK_E_BAD_LOCATE;
    if (a->side != 'B' && a->side != 'S')
        return MD_BOOK_E_BAD_SIDE;
    if (a->shares == 0)
        return MD_BOOK_E_BAD_SHARES;
    return order_add(book, locate, a->order_ref, a->side, a->shares, a->price);
}

/* The live order a message refers to (and its table slot), checked against the message's
 * locate. */
static int lookup(const struct md_book *book, uint16_t locate, uint64_t ref, struct md_order **out,
                  uint32_t *slot)
{
    if (!locate_ok(book, locate))
        return MD_BOOK_E_BAD_LOCATE;
    *slot = table_slot(book, ref);
    uint32_t v = book->table[*slot];
    if (v == 0)
        return MD_BOOK_E_UNKNOWN_REF;
    *out = &book->pool[v - 1];
    if ((*out)->locate != locate)
        return MD_BOOK_E_LOCATE_MISMATCH;
    return 0;
}

enum print { PRINT_NONE, PRINT_AT_ORDER_PRICE, PRINT_AT_PRICE };

/* E, C and X: takes shares off an order, clamped to its remaining shares (over_err counted);
 * an execution that prints adds to the VWAP. */
static int apply_take(struct md_book *book, uint16_t locate, uint64_t ref, uint32_t shares,
                      int over_err, enum print print, uint32_t price)
{
    struct md_order *o;
    uint32_t slot;
    int rc = lookup(book, locate, ref, &o, &slot);
    if (rc < 0)
        return rc;
    if (shares == 0)
        return MD_BOOK_E_BAD_SHARES;
    if (shares > o->shares) {
        shares = o->shares;
        rc = over_err;
    }
    if (print != PRINT_NONE)
        vwap_add(&book->symbols[locate].vwap, print == PRINT_AT_PRICE ? price : o->price, shares);
    order_reduce(book, o, slot, shares);
    return rc;
}

static int apply_replace(struct md_book *book, uint16_t locate, const struct itch_order_replace *u)
{
    struct md_order *o;
    uint32_t slot;
    int rc = lookup(book, locate, u->orig_order_ref, &o, &slot);
    if (rc < 0)
        return rc;
    if (u->shares == 0)
        return MD_BOOK_E_BAD_SHARES;
    if (order_find(book, u->new_order_ref) != NULL)
        return MD_BOOK_E_DUPLICATE_REF;
    char side = o->side;
    order_remove(book, o, slot); /* frees a pool slot: the add cannot meet orders_full */
    return order_add(book, locate, u->new_order_ref, side, u->shares, u->price);
}

static int apply_trade(struct md_book *book, uint16_t locate, const struct itch_trade *p)
{
    if (!locate_ok(book, locate))
        return MD_BOOK_E_BAD_LOCATE;
    if (p->shares == 0)
        return MD_BOOK_E_BAD_SHARES;
    vwap_add(&book->symbols[locate].vwap, p->price, p->shares);
    return 0;
}

static int apply_msg(struct md_book *book, const struct itch_msg *m)
{
    uint16_t locate = m->stock_locate;
    struct md_order *o;
    uint32_t slot;
    int rc;
    switch (m->type) {
    case ITCH_SYSTEM_EVENT:
        return 0;
    case ITCH_STOCK_DIRECTORY:
        if (!locate_ok(book, locate))
            return MD_BOOK_E_BAD_LOCATE;
        memcpy(book->symbols[locate].stock, m->u.R.stock, ITCH_STOCK_LEN);
        book->symbols[locate].listed = true;
        return 0;
    case ITCH_ADD_ORDER:
        return apply_add(book, locate, &m->u.A);
    case ITCH_ADD_ORDER_MPID:
        return apply_add(book, locate, &m->u.F.add);
    case ITCH_ORDER_EXECUTED:
        return apply_take(book, locate, m->u.E.order_ref, m->u.E.shares, MD_BOOK_E_OVER_EXECUTED,
                          PRINT_AT_ORDER_PRICE, 0);
    case ITCH_ORDER_EXECUTED_PRICE:
        return apply_take(book, locate, m->u.C.exec.order_ref, m->u.C.exec.shares,
                          MD_BOOK_E_OVER_EXECUTED,
                          m->u.C.printable == 'Y' ? PRINT_AT_PRICE : PRINT_NONE, m->u.C.price);
    case ITCH_ORDER_CANCEL:
        return apply_take(book, locate, m->u.X.order_ref, m->u.X.shares, MD_BOOK_E_OVER_CANCELLED,
                          PRINT_NONE, 0);
    case ITCH_ORDER_DELETE:
        rc = lookup(book, locate, m->u.D.order_ref, &o, &slot);
        if (rc == 0)
            order_remove(book, o, slot);
        return rc;
    case ITCH_ORDER_REPLACE:
        return apply_replace(book, locate, &m->u.U);
    case ITCH_TRADE:
        return apply_trade(book, locate, &m->u.P);
    default:
        return MD_BOOK_E_UNSUPPORTED;
    }
}

int md_book_apply(struct md_book *book, const struct itch_msg *msg)
{
    int rc = apply_msg(book, msg);
    if (rc < 0)
        return refuse(book, rc);
    book->counters.applied++;
    book->counters.by_type[msg->type & 127]++;
    return 0;
}

/* --- queries -------------------------------------------------------------------------------- */

static const struct md_symbol *symbol_get(const struct md_book *book, uint16_t locate)
{
    return locate_ok(book, locate) ? &book->symbols[locate] : NULL;
}

const struct md_order *md_book_find(const struct md_book *book, uint64_t ref)
{
    return order_find(book, ref);
}

uint32_t md_book_order_count(const struct md_book *book, uint16_t locate)
{
    const struct md_symbol *sym = symbol_get(book, locate);
    return sym != NULL ? sym->order_count : 0;
}

const struct md_order *md_book_order_at(const struct md_book *book, uint16_t locate, uint32_t i)
{
    const struct md_symbol *sym = symbol_get(book, locate);
    if (sym == NULL || i >= sym->order_count)
        return NULL;
    return &book->pool[sym->orders[i]];
}

static const struct md_side *side_get(const struct md_book *book, uint16_t locate, char side)
{
    const struct md_symbol *sym = symbol_get(book, locate);
    if (sym == NULL || (side != 'B' && side != 'S'))
        return NULL;
    return side == 'B' ? &sym->bids : &sym->asks;
}

uint32_t md_book_level_count(const struct md_book *book, uint16_t locate, char side)
{
    const struct md_side *s = side_get(book, locate, side);
    return s != NULL ? s->count : 0;
}

int md_book_level(const struct md_book *book, uint16_t locate, char side, uint32_t depth,
                  struct md_level *out)
{
    const struct md_side *s = side_get(book, locate, side);
    if (s == NULL || depth >= s->count)
        return -ENOENT;
    *out = s->levels[s->count - 1 - depth];
    return 0;
}

void md_book_bbo(const struct md_book *book, uint16_t locate, struct md_bbo *out)
{
    struct md_level l;
    memset(out, 0, sizeof(*out));
    if (md_book_level(book, locate, 'B', 0, &l) == 0) {
        out->bid_price = l.price;
        out->bid_shares = l.shares;
    }
    if (md_book_level(book, locate, 'S', 0, &l) == 0) {
        out->ask_price = l.price;
        out->ask_shares = l.shares;
    }
}

void md_book_vwap(const struct md_book *book, uint16_t locate, struct md_vwap *out)
{
    const struct md_symbol *sym = symbol_get(book, locate);
    if (sym != NULL)
        *out = sym->vwap;
    else
        memset(out, 0, sizeof(*out));
}

int md_book_restore_vwap(struct md_book *book, uint16_t locate, const struct md_vwap *vwap)
{
    if (locate == 0 || locate > book->cfg.max_locate)
        return MD_BOOK_E_BAD_LOCATE;
    book->symbols[locate].vwap = *vwap;
    return 0;
}

double md_vwap_dollars(const struct md_vwap *v)
{
    if (v->shares == 0)
        return 0.0;
    double notional = (double)v->notional_hi * 18446744073709551616.0 + (double)v->notional_lo;
    return notional / (double)v->shares / ITCH_PRICE_SCALE;
}

const char *md_book_stock(const struct md_book *book, uint16_t locate)
{
    const struct md_symbol *sym = symbol_get(book, locate);
    return sym != NULL && sym->listed ? sym->stock : NULL;
}

/* --- digest --------------------------------------------------------------------------------- */

static inline uint64_t digest_step(uint64_t h, uint64_t v)
{
    return mix64(h ^ mix64(v + UINT64_C(0x9e3779b97f4a7c15)));
}

static uint64_t digest_side(uint64_t h, const struct md_side *s)
{
    h = digest_step(h, s->count);
    for (uint32_t i = s->count; i-- > 0;) {
        const struct md_level *l = &s->levels[i];
        h = digest_step(h, (uint64_t)l->price << 32 | l->orders);
        h = digest_step(h, l->shares);
    }
    return h;
}

uint64_t md_book_symbol_digest(const struct md_book *book, uint16_t locate)
{
    const struct md_symbol *sym = symbol_get(book, locate);
    if (sym == NULL || (sym->bids.count == 0 && sym->asks.count == 0 && sym->vwap.shares == 0))
        return 0;
    uint64_t h = digest_step(UINT64_C(0x243f6a8885a308d3), locate);
    h = digest_side(h, &sym->bids);
    h = digest_side(h, &sym->asks);
    h = digest_step(h, sym->vwap.notional_hi);
    h = digest_step(h, sym->vwap.notional_lo);
    h = digest_step(h, sym->vwap.shares);
    /* Orders: a sum of per-order hashes does not depend on the order of the list. */
    uint64_t orders = 0;
    for (uint32_t i = 0; i < sym->order_count; i++) {
        const struct md_order *o = &book->pool[sym->orders[i]];
        uint64_t oh = digest_step(mix64(o->ref), (uint64_t)o->price << 32 | o->shares);
        orders += digest_step(oh, (uint64_t)(unsigned char)o->side);
    }
    h = digest_step(h, sym->order_count);
    h = digest_step(h, orders);
    return h != 0 ? h : 1;
}

uint64_t md_book_digest(const struct md_book *book)
{
    uint64_t h = UINT64_C(0x13198a2e03707344);
    for (uint32_t locate = 1; locate <= book->cfg.max_locate; locate++) {
        uint64_t sh = md_book_symbol_digest(book, (uint16_t)locate);
        if (sh != 0)
            h = digest_step(h, sh);
    }
    return h;
}
