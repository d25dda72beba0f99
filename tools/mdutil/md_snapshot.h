/* SPDX-License-Identifier: BSD-2-Clause */
/* md_snapshot.h - per-channel book snapshots (schemas/md.proto BookSnapshot) from and to plain C
 * arrays: split into parts of bounded size, and reassembled from parts in any order. */
#ifndef RDPS_MDUTIL_SNAPSHOT_H
#define RDPS_MDUTIL_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Model
 * -----
 * A snapshot is the state of every book of one channel after the channel's message `seq`:
 * the live orders (in time priority within each price level: array order is kept) and each
 * symbol's VWAP numerator and denominator. It uses neutral structs, so neither side depends
 * on how a book stores its orders.
 *
 * Splitting. md_snap_plan picks the fewest parts such that every part, encoded, fits in
 * max_part_bytes, from worst-case sizes (MD_SNAP_ORDER_MAX_BYTES per order,
 * MD_SNAP_SYMBOL_MAX_BYTES per symbol, MD_SNAP_PART_OVERHEAD per part), so it never
 * encodes to measure. Part i holds orders [i * orders_per_part, ...) and symbols
 * [i * symbols_per_part, ...), each part its share or what is left (possibly none).
 *
 * Reassembly (struct md_snap_asm). Parts are hostile input until proven otherwise: a part's
 * shape (channel, seq, part_count, totals, per-part counts) must be self-consistent and
 * within the assembler's caps (max_orders, max_symbols, max_parts, max_part_bytes, fixed at
 * init, when every array is allocated); its columns must have exactly the lengths its index
 * implies, sides 'B' or 'S', locates <= 65535. Parts of one snapshot may come in any order;
 * a duplicate is counted and ignored; a part of another shape abandons the snapshot being
 * assembled (counted in restarts) and starts that one. When the last part arrives the whole
 * is checked once more (symbol locates unique, every order's locate among the symbols) and
 * the snapshot is available until the next add or reset. Decoding uses a bump arena sized
 * from max_part_bytes at init (protobuf-c allocates while unpacking; our encoder's packed
 * columns never need more than 8 bytes per input byte): no allocation per part.
 *
 * Not checked here: unique order references and a book that does not cross; the book that
 * applies the snapshot owns those rules.
 */

#define MD_SNAP_ORDER_MAX_BYTES  26  /* locate 5, ref 10, side 1, shares 5, price 5 */
#define MD_SNAP_SYMBOL_MAX_BYTES 35  /* locate 5, vwap_num 10 + 10 (high), vwap_den 10 */
#define MD_SNAP_PART_OVERHEAD    128 /* 8 scalar fields and 9 column headers, at most 108 */
#define MD_SNAP_PART_MIN \
    (MD_SNAP_PART_OVERHEAD + MD_SNAP_ORDER_MAX_BYTES + MD_SNAP_SYMBOL_MAX_BYTES)
#define MD_SNAP_LOCATE_MAX 0xFFFFu

struct md_snap_order {
    uint64_t ref; /* ITCH order reference number */
    uint32_t locate;
    char side; /* 'B' or 'S' */
    uint32_t shares;
    uint32_t price; /* 4 implied decimals */
};

struct md_snap_symbol {
    uint32_t locate;
    uint64_t vwap_num;    /* sum of price x shares executed: low 64 bits */
    uint64_t vwap_num_hi; /* ... and high 64 bits */
    uint64_t vwap_den;    /* sum of shares executed */
};

struct md_snap {
    uint32_t channel;
    uint64_t seq; /* the last channel message included */
    const struct md_snap_symbol *symbols;
    uint32_t n_symbols;
    const struct md_snap_order *orders;
    uint32_t n_orders;
};

struct md_snap_plan {
    uint32_t part_count;
    uint32_t orders_per_part;
    uint32_t symbols_per_part;
};

/* The split for parts of at most max_part_bytes (>= MD_SNAP_PART_MIN). 0 or -EINVAL. */
int md_snap_plan(const struct md_snap *s, size_t max_part_bytes, struct md_snap_plan *plan);
/*
 * Encodes part part_index of plan into out (cap bytes; the plan's max_part_bytes always
 * suffices) and sets *len. Allocates its column scratch (slow path). 0, -EINVAL (index,
 * a side that is not 'B'/'S', a locate above 65535), -ENOSPC (cap), -ENOMEM.
 */
int md_snap_encode_part(const struct md_snap *s, const struct md_snap_plan *plan,
                        uint32_t part_index, uint8_t *out, size_t cap, size_t *len);

/* Why a part was refused: md_snap_asm_add returns the negative value. */
enum md_snap_error {
    MD_SNAP_E_TOO_LARGE = 1, /* longer than max_part_bytes */
    MD_SNAP_E_DECODE,        /* not a BookSnapshot (or needs more decode memory than ours) */
    MD_SNAP_E_SHAPE,         /* part index/count, totals or per-part counts inconsistent */
    MD_SNAP_E_CAP,           /* more orders, symbols or parts than the assembler holds */
    MD_SNAP_E_COLUMNS,       /* a column's length is not the part's count */
    MD_SNAP_E_VALUE,         /* a side other than 'B'/'S', a locate above 65535 */
    MD_SNAP_E_LOCATE,        /* complete, but a symbol repeats or an order's symbol is absent */
    MD_SNAP__ERRORS
};
/* "too_large", "decode", ...; "?" for anything else. */
const char *md_snap_error_name(int error);

struct md_snap_asm_config {
    uint32_t max_orders;
    uint32_t max_symbols;
    uint32_t max_parts;
    size_t max_part_bytes; /* >= MD_SNAP_PART_MIN */
};

struct md_snap_asm_counters {
    uint64_t parts;      /* accepted */
    uint64_t duplicates; /* a part already held */
    uint64_t restarts;   /* incomplete snapshots abandoned for another */
    uint64_t completed;
    uint64_t rejected[MD_SNAP__ERRORS];
};

/* Results of md_snap_asm_add (errors are -enum md_snap_error). */
enum md_snap_add_result {
    MD_SNAP_INCOMPLETE = 0,
    MD_SNAP_COMPLETE = 1, /* md_snap_asm_result() holds the snapshot */
};

struct md_snap_asm {
    struct md_snap_asm_config cfg;
    struct md_snap_asm_counters counters;
    struct md_snap_order *orders;   /* max_orders */
    struct md_snap_symbol *symbols; /* max_symbols */
    uint8_t *part_seen;             /* max_parts bits */
    uint8_t *locate_seen;           /* 65536 bits, for the completion check */
    uint8_t *arena;                 /* protobuf-c decode memory */
    size_t arena_size, arena_used;
    bool active;   /* a snapshot is being assembled */
    bool complete; /* ... and all its parts are in */
    uint32_t parts_received;
    struct md_snap cur; /* channel, seq, totals; arrays point into orders/symbols */
    struct md_snap_plan shape;
};

/* Allocates every array for the caps. 0, -EINVAL (a cap of 0, max_part_bytes), -ENOMEM. */
int md_snap_asm_init(struct md_snap_asm *a, const struct md_snap_asm_config *cfg);
void md_snap_asm_fini(struct md_snap_asm *a);
/* Drops the snapshot being assembled (or the complete one). */
void md_snap_asm_reset(struct md_snap_asm *a);
/* One encoded part. MD_SNAP_INCOMPLETE, MD_SNAP_COMPLETE, or -enum md_snap_error. */
int md_snap_asm_add(struct md_snap_asm *a, const uint8_t *data, size_t len);
/* The snapshot after MD_SNAP_COMPLETE (until the next add or reset); NULL otherwise. */
const struct md_snap *md_snap_asm_result(const struct md_snap_asm *a);

#endif /* RDPS_MDUTIL_SNAPSHOT_H */
