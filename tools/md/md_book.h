/* SPDX-License-Identifier: BSD-2-Clause */
/* md_book.h - a subscriber's market-data model: full-depth order books per symbol built from ITCH
 * 5.0 messages, per-symbol VWAP, and a digest of the whole state. */
#ifndef RDPS_MD_BOOK_H
#define RDPS_MD_BOOK_H

#include <stdbool.h>
#include <stdint.h>

#include "itch.h"

/*
 * Model
 * -----
 * Symbols are addressed by their ITCH stock locate, 1..max_locate (locate 0
 * means "not symbol-specific" and carries no book). Each symbol has:
 *
 *  - orders: every live order by its reference number, in one hash table
 *    shared by all symbols (ITCH reference numbers are unique for the day
 *    across symbols). Open addressing with linear probing and backward-shift
 *    deletion over a power-of-two table at least twice max_orders, keyed by
 *    a seeded mix of the reference: O(1) add, find, remove, never a
 *    tombstone. Order records come from a pool of max_orders; each symbol
 *    also keeps a dense array of its orders (swap-remove), so a symbol's
 *    orders can be counted, iterated or sampled at random in O(1)
 *    (md_book_order_at: snapshots, the generator's picks).
 *  - price levels: per side a sorted array of {price, shares, orders},
 *    best price at the end (bids ascending, asks descending), so the
 *    frequent changes near the top of the book move few entries. Finding a
 *    level is a binary search; adding or removing one moves the levels
 *    behind it. At most max_levels_per_side per side.
 *  - VWAP: the integer sums of price x shares (128 bits) and of shares over
 *    every execution: E at the resting order's price, C at its printed price
 *    when printable is 'Y' (a non-printable C changes the book only), P at
 *    the trade's price. No floating point in the state.
 *
 * Messages (md_book_apply):
 *   S  counted, no state.           R  records the symbol's name.
 *   A, F  add an order.             E, C  execute part or all of an order.
 *   X  cancel part of an order.     D  remove an order.
 *   U  remove the original order, add the new reference with the same side and symbol at the
 *      new price and shares.        P  VWAP only (non-displayed orders are not on the book).
 * An order whose remaining shares reach 0 (E, C or X) leaves the book.
 *
 * Bad input never crashes and never half-applies, with two stated
 * exceptions. A message that breaks a rule is refused whole and counted by
 * reason (enum md_book_error, counters.errors[]): unknown reference, a
 * reference already live, a locate out of range or not the order's, a side
 * other than 'B'/'S', zero shares, the order pool or a side's levels full,
 * memory refused while an array grows. The exceptions: an execution or
 * cancel larger than the order's remaining shares is clamped to them (the
 * order leaves the book; VWAP takes the clamped shares) and counted
 * (over_executed / over_cancelled); a replace whose new order cannot be
 * added after the original was removed (levels_full, no_memory) leaves the
 * original removed. md_book_apply returns 0 when the message was applied as
 * given, otherwise the (negative) reason.
 *
 * Digest (md_book_digest): a 64-bit hash of the whole state that depends
 * only on the state, never on history (hash seed, table size, pool slots,
 * arrival order of the orders). Symbols in locate order, skipping symbols
 * with no level and no VWAP; for each: its locate, each side's levels from
 * the best (price, shares, order count), the VWAP sums, and the sum (mod
 * 2^64, so order-independent) of a strong mix of each of its live orders
 * (reference, side, price, shares). Symbol names and counters are not
 * state. The feed digests its own reference book the same way, so two
 * books that applied the same messages have the same digest.
 *
 * Memory: allocated by md_book_init (symbols, the order pool and the
 * table, all zero-filled, so the OS backs only the pages used: a book
 * for 65535 locates and 2^20 orders costs what the day's symbols and
 * live orders touch) and, while books
 * deepen, by the per-symbol arrays (levels, order lists) that grow by
 * doubling and never shrink: after warm-up, applying a message allocates
 * nothing. No clock reads, no I/O; one thread.
 */

#define MD_BOOK_ERROR_MAP(X)                                                          \
    X(UNSUPPORTED, -1, unsupported, "message type the book does not handle")          \
    X(BAD_LOCATE, -2, bad_locate, "stock locate 0 or above max_locate")               \
    X(BAD_SIDE, -3, bad_side, "side neither 'B' nor 'S'")                             \
    X(BAD_SHARES, -4, bad_shares, "zero shares")                                      \
    X(UNKNOWN_REF, -5, unknown_ref, "order reference not on the book")                \
    X(DUPLICATE_REF, -6, duplicate_ref, "added reference already live")               \
    X(LOCATE_MISMATCH, -7, locate_mismatch, "stock locate differs from the order's")  \
    X(OVER_EXECUTED, -8, over_executed, "execution above remaining shares (clamped)") \
    X(OVER_CANCELLED, -9, over_cancelled, "cancel above remaining shares (clamped)")  \
    X(ORDERS_FULL, -10, orders_full, "order pool at max_orders: add refused")         \
    X(LEVELS_FULL, -11, levels_full, "side at max_levels_per_side: add refused")      \
    X(NO_MEMORY, -12, no_memory, "allocation refused while a book grew: add refused")

enum md_book_error {
    MD_BOOK_OK = 0,
#define MD_BOOK_ERROR_ENUM_(name, value, field, text) MD_BOOK_E_##name = (value),
    MD_BOOK_ERROR_MAP(MD_BOOK_ERROR_ENUM_)
#undef MD_BOOK_ERROR_ENUM_
};
#define MD_BOOK_NERRORS 12

/* Short name of an error ("unknown_ref"), "ok" for 0, "?" otherwise. */
const char *md_book_error_name(int err);
/* One-line description of an error. */
const char *md_book_error_text(int err);

struct md_book_config {
    uint32_t max_locate; /* symbols 1..max_locate; default 65535 (the locate field's range) */
    uint32_t max_orders; /* live orders, all symbols; default 1 << 20 */
    uint32_t max_levels_per_side; /* price levels per side per symbol; default 4096 */
    /* Order table hash. The digest does not depend on it; a random one per process keeps a
     * hostile feed from choosing references that collide. */
    uint64_t hash_seed;
};

void md_book_config_init(struct md_book_config *cfg);

struct md_book_counters {
    uint64_t applied;                      /* messages applied as given */
    uint64_t by_type[128];                 /* applied messages by ITCH type letter */
    uint64_t errors[MD_BOOK_NERRORS];      /* by -md_book_error - 1 */
    uint64_t live_orders, max_live_orders; /* now and high-water mark */
};

struct md_level {
    uint32_t price;
    uint32_t orders;
    uint64_t shares;
};

struct md_order {
    uint64_t ref;
    uint32_t price;
    uint32_t shares; /* remaining */
    uint32_t pos;    /* index in its symbol's order list; next free slot when free */
    uint16_t locate;
    char side; /* 'B' or 'S' */
    uint8_t live;
};

struct md_vwap {
    uint64_t notional_hi, notional_lo; /* sum of price x shares, 128 bits, price in 1/10000 */
    uint64_t shares;
    uint64_t executions;
};

/* Book side: levels sorted so that the best price is last. */
struct md_side {
    struct md_level *levels;
    uint32_t count, cap;
};

struct md_symbol {
    char stock[ITCH_STOCK_LEN]; /* from R (valid when listed) */
    bool listed;                /* an R was seen */
    struct md_side bids, asks;
    uint32_t *orders; /* pool indices of the live orders */
    uint32_t order_count, order_cap;
    struct md_vwap vwap;
};

/* Read through the functions below; the fields are private. */
struct md_book {
    struct md_book_config cfg;
    struct md_symbol *symbols; /* [max_locate + 1], [0] unused */
    struct md_order *pool;     /* [max_orders] */
    uint32_t pool_used;        /* slots ever handed out (high-water mark) */
    uint32_t free_head;        /* a freed slot + 1, chained through md_order.pos; 0: none */
    uint32_t *table;           /* pool index + 1; 0 empty */
    uint32_t table_mask;
    struct md_book_counters counters;
};

/* Allocates the tables; 0, -EINVAL (a zero limit, max_locate > 65535) or -ENOMEM. */
int md_book_init(struct md_book *book, const struct md_book_config *cfg);
/* Frees everything; accepts a zeroed or finished book. */
void md_book_fini(struct md_book *book);

/* Applies one decoded message: 0, or a negative enum md_book_error (counted). */
int md_book_apply(struct md_book *book, const struct itch_msg *msg);

const struct md_book_counters *md_book_counters(const struct md_book *book);

/* The live order with this reference, or NULL. */
const struct md_order *md_book_find(const struct md_book *book, uint64_t ref);
/* A symbol's live orders, in no particular order: count, and the i-th (i < count) or NULL. */
uint32_t md_book_order_count(const struct md_book *book, uint16_t locate);
const struct md_order *md_book_order_at(const struct md_book *book, uint16_t locate, uint32_t i);

/* Price level at depth (0 = best) of side 'B' or 'S': 0, or -ENOENT past the last level or for
 * a bad locate or side. */
int md_book_level(const struct md_book *book, uint16_t locate, char side, uint32_t depth,
                  struct md_level *out);
uint32_t md_book_level_count(const struct md_book *book, uint16_t locate, char side);

/* Best bid and offer; a missing side reads price 0, shares 0. */
struct md_bbo {
    uint32_t bid_price, ask_price;
    uint64_t bid_shares, ask_shares;
};
void md_book_bbo(const struct md_book *book, uint16_t locate, struct md_bbo *out);

/* The symbol's VWAP sums (zeros for a bad locate), and the price they give in dollars (0 when
 * nothing executed; for display only). */
void md_book_vwap(const struct md_book *book, uint16_t locate, struct md_vwap *out);
double md_vwap_dollars(const struct md_vwap *vwap);
/* Sets the symbol's VWAP sums, as a snapshot carries them (a book's orders come back through
 * Add Order messages). 0, or MD_BOOK_E_BAD_LOCATE. */
int md_book_restore_vwap(struct md_book *book, uint16_t locate, const struct md_vwap *vwap);

/* The symbol's name from its R message (8 bytes, space padded), or NULL when none was seen. */
const char *md_book_stock(const struct md_book *book, uint16_t locate);

/* Hash of one symbol's state (0 for a symbol without levels or executions), and of the whole
 * book (see the model). */
uint64_t md_book_symbol_digest(const struct md_book *book, uint16_t locate);
uint64_t md_book_digest(const struct md_book *book);

#endif /* RDPS_MD_BOOK_H */
