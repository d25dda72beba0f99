/* SPDX-License-Identifier: BSD-2-Clause */
/* md_gen.h - a seeded synthetic ITCH 5.0 order flow: thousands of symbols with Zipf popularity on a
 * few channels, every message valid against the book it builds. */
#ifndef RDPS_MD_GEN_H
#define RDPS_MD_GEN_H

#include <stdint.h>

#include "itch.h"
#include "md_book.h"

/*
 * Model
 * -----
 * Symbols: stock locates 1..symbols, named "A", "B", ..., "Z", "AA", ...
 * (bijective base 26 of the locate). Popularity follows Zipf: the symbol of
 * popularity rank r (0-based) is drawn with probability proportional to
 * 1 / (r + 1)^zipf_exponent (exponent 0: uniform), sampled by binary search
 * in a precomputed CDF. Ranks are dealt to locates by a seeded shuffle (as
 * on a real day, where locates are alphabetical and activity is not).
 *
 * Channels: each symbol belongs to one of `channels` channels, each one
 * rdps topic with its own sequence space. The assignment is balanced: in
 * popularity order, each symbol goes to the channel with the least expected
 * traffic so far (md_gen_channel_of). Every message of a symbol goes on its
 * channel; the tracking number counts the channel's messages (mod 2^16).
 *
 * Session: the first messages are one System Event 'O' (start of messages)
 * per channel, one Stock Directory per symbol on its channel, and an
 * opening book (as built before the open): per symbol, in locate order,
 * its popularity's share of opening_depth x symbols adds (at least 2 or
 * the cap, at most half the cap), alternately bids and asks. md_gen_preamble_length()
 * says how many messages that is. Then order flow forever. Each flow message
 * draws a kind from the mix (relative weights; the default is close to a
 * real NASDAQ day: add 44 % of which F 1 %, delete 42 %, replace 10 %,
 * execute 2.5 % of which C 0.25 %, cancel 1 %, trade 0.5 %; mean wire size
 * 28.6 bytes, a real day's 29 with the message types not generated here;
 * adds slightly above removals, so books deepen slowly until the caps) and
 * a symbol from the Zipf law, then makes the message valid against the
 * generator's own book:
 *
 *  - Substitutions (below) are paid back: a kind drawn when it has already
 *    been emitted as often as drawn gives its turn to the kind most owed,
 *    so the emitted mix converges on the configured one.
 *  - E, C, X, D and U refer to a live order of the symbol (picked uniformly
 *    among its orders); a symbol without one is redrawn up to 4 times, then
 *    an add goes out instead (counters.no_live_order).
 *  - Executions take 1..remaining shares (often all: the order leaves the
 *    book); cancels 1..remaining-1 (an order of 1 share is deleted instead,
 *    counters.cancel_as_delete), so shares never go negative.
 *  - Prices are on a 1-cent grid around a per-symbol mid that random-walks
 *    within [base/2, 2 base] (base log-uniform $5..$500). A bid is at most
 *    the best ask minus a tick and an ask at least the best bid plus a tick,
 *    so books never cross or lock. Replaces keep the side, take a new
 *    reference, new shares and a new price by the same rule.
 *  - P trades (non-displayed orders) print inside the spread with order
 *    reference 0 and side 'B', as NASDAQ has sent them since 2014; C prints
 *    at the order's price or a tick better, printable 3 times in 4.
 *  - Reference numbers and match numbers count up from 1 for the day.
 *
 * Caps: at most max_orders_per_symbol live orders per symbol and
 * max_orders in all. An add that meets a full symbol is redrawn up to 4
 * times; then, or when the total is full, the generator deletes an order of
 * that symbol instead (counters.forced_delete). So memory is bounded and
 * the flow goes on at the cap with more deletes than the mix asks for.
 *
 * Reference state: every message md_gen_next returns has been applied to
 * the generator's md_book (md_gen_book), so md_book_digest() of it is the
 * digest every subscriber that applied the same messages must report.
 * A message the book refuses would be a generator bug: counted
 * (counters.self_check_failures), expected to stay 0.
 *
 * Time: the caller passes the timestamp (nanoseconds since midnight,
 * < 2^48); nothing reads a clock. Same config and seed, same messages.
 * No allocation after warm-up (md_book's arrays grow while books deepen).
 */

enum md_gen_kind {
    MD_GEN_ADD,           /* A */
    MD_GEN_ADD_MPID,      /* F */
    MD_GEN_DELETE,        /* D */
    MD_GEN_REPLACE,       /* U */
    MD_GEN_EXECUTE,       /* E */
    MD_GEN_EXECUTE_PRICE, /* C */
    MD_GEN_CANCEL,        /* X */
    MD_GEN_TRADE,         /* P */
    MD_GEN_KINDS
};

/* The ITCH type letter of a kind. */
uint8_t md_gen_kind_type(enum md_gen_kind kind);

struct md_gen_config {
    uint64_t seed;
    uint32_t symbols;               /* 1..65535; default 8000 */
    uint32_t channels;              /* 1..min(symbols, 1024); default 8 */
    double zipf_exponent;           /* >= 0; default 1.0 */
    uint32_t mix[MD_GEN_KINDS];     /* relative weights of the flow; default per 10 000 above */
    uint32_t max_orders_per_symbol; /* default 1000 */
    uint32_t max_orders;            /* all symbols; default 1 << 20 */
    uint32_t opening_depth;         /* mean opening orders per symbol; default 10, 0: none */
};

void md_gen_config_init(struct md_gen_config *cfg);

struct md_gen_counters {
    uint64_t messages, bytes;       /* everything returned, wire bytes */
    uint64_t opening_adds;          /* adds of the opening book (not flow) */
    uint64_t drawn[MD_GEN_KINDS];   /* flow kinds as drawn from the mix */
    uint64_t by_kind[MD_GEN_KINDS]; /* flow messages as emitted (after substitutions) */
    uint64_t no_live_order;         /* a reference-taking kind became an add */
    uint64_t forced_delete;         /* an add at a cap became a delete */
    uint64_t cancel_as_delete;      /* a cancel of a 1-share order became a delete */
    uint64_t self_check_failures;   /* messages the generator's own book refused: must stay 0 */
};

struct md_gen_symbol {
    uint32_t base, mid; /* price, 1/10000 dollars */
};

/* Private; read through the functions. */
struct md_gen {
    struct md_gen_config cfg;
    uint64_t rng;
    double *cdf;                   /* [symbols] cumulative Zipf weights by rank */
    uint16_t *locate_of_rank;      /* [symbols] */
    uint16_t *rank_of_locate;      /* [symbols + 1] */
    uint16_t *channel_of;          /* [symbols + 1] by locate */
    uint16_t *channel_msgs;        /* [channels] tracking numbers */
    struct md_gen_symbol *symbols; /* [symbols + 1] by locate */
    uint32_t mix_cum[MD_GEN_KINDS];
    uint32_t next_preamble;  /* system events, then directory entries */
    uint32_t opening_locate; /* symbol of the opening book being built */
    uint32_t opening_left;   /* its adds still to send */
    uint64_t preamble_len;   /* events, directory and opening book */
    uint64_t next_ref, next_match;
    struct md_book book; /* the reference state */
    struct md_gen_counters counters;
};

/* 0, -EINVAL (a field out of range, all weights 0, an opening book above max_orders) or
 * -ENOMEM. */
int md_gen_init(struct md_gen *gen, const struct md_gen_config *cfg);
void md_gen_fini(struct md_gen *gen);

/* Fills *out with the next message stamped ts_ns and *channel with its channel; applies it to
 * the reference book. Returns its wire length (itch_msg_len), or -ERANGE for ts_ns >= 2^48. */
int md_gen_next(struct md_gen *gen, uint64_t ts_ns, struct itch_msg *out, uint32_t *channel);

/* Messages before the order flow: system events, directory, opening book. */
uint64_t md_gen_preamble_length(const struct md_gen *gen);
uint32_t md_gen_channel_of(const struct md_gen *gen, uint16_t locate);
const struct md_book *md_gen_book(const struct md_gen *gen);
const struct md_gen_counters *md_gen_counters(const struct md_gen *gen);
/* The probability that a flow message is about this symbol (its Zipf weight). */
double md_gen_popularity(const struct md_gen *gen, uint16_t locate);
/* md_book_digest() of the reference book. */
uint64_t md_gen_digest(const struct md_gen *gen);

#endif /* RDPS_MD_GEN_H */
