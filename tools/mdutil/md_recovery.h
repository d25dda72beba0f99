/* SPDX-License-Identifier: BSD-2-Clause */
/* md_recovery.h - late join for the market-data demo: a feed builds a channel's book snapshot from
 * its books; a book that joined a running channel holds its packets until a snapshot that fits
 * them arrives, applies it, then the held messages after it (the way real feeds recover). */
#ifndef RDPS_MDUTIL_RECOVERY_H
#define RDPS_MDUTIL_RECOVERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "md_book.h"
#include "md_packet.h"
#include "md_snapshot.h"

/*
 * Model
 * -----
 * One struct md_rec per channel of a book, in one of three states:
 *
 *   NEW         nothing seen yet. The first packet decides: a data packet whose first message
 *               is sequence 1 means the book saw the channel from its start (LIVE); any other
 *               packet (data from later on, a heartbeat or end of session naming a later
 *               sequence) means it joined late: RECOVERING, and the caller asks the feed for
 *               a snapshot (md_rec_on_packet returns MD_REC_NEED_SNAPSHOT).
 *   RECOVERING  data packets are copied into the held buffer, in arrival order. The buffer is
 *               capped (max_held_bytes): a packet that does not fit drops everything held and
 *               holding restarts with it (counted in overflows), so the next snapshot must reach
 *               that far. first_seq is the lowest sequence that must come after the snapshot.
 *   LIVE        the caller applies packets itself.
 *
 * A snapshot of the channel's books after message S fits when S + 1 >= first_seq: every
 * message after S is held or still to come. md_rec_on_snapshot imports a fitting one into the
 * book (each symbol's VWAP, each order as an Add Order through md_book_apply, so the book's own
 * rules check it: an order the book refuses is counted in import_refused), moves to LIVE and
 * returns MD_REC_REPLAY; the caller then takes the held packets back (md_rec_next_held) and
 * applies their messages from sequence md_rec_resume_seq() on, exactly as it applies live
 * packets. A snapshot older than that is counted (stale) and MD_REC_NEED_SNAPSHOT asks for a
 * newer one; a snapshot for a channel that is not recovering, or of another channel, is
 * ignored (counted).
 *
 * Plausibility. Anyone on the fabric can send a channel a packet or the book a snapshot, and
 * md-book keeps only its feed's source and session (md_book_rx.h); what is left is bounded here,
 * in every state: a packet whose sequence lies more than max_ahead past the highest sequence the
 * channel has named so far (its horizon) is refused (MD_REC_REFUSED, counted in
 * packets_implausible), so one packet numbered 2^40 cannot make every real packet after it
 * stale; a snapshot past the horizon by that much is ignored (snapshots_implausible). A feed
 * that really jumped that far (a long outage of an unreliable channel) is followed after
 * MD_REC_JUMP_RUN consecutive packets that continue each other past the window (counted in
 * jumps): a lone forged packet never does that.
 *
 * The import must start from empty books: a channel's messages touch only its own symbols,
 * and while a channel recovers nothing of it is applied, so its symbols are still empty.
 * A snapshot that names a symbol of another channel breaks that and shows as a digest that
 * differs from the feed's (the book cannot know the mapping; the feed's snapshot is trusted
 * that far, as its messages are).
 *
 * Memory: the held buffer grows by doubling up to max_held_bytes and is freed when the
 * channel goes live. No clock, no I/O.
 */

enum md_rec_state { MD_REC_NEW, MD_REC_RECOVERING, MD_REC_LIVE };

/* What the caller does next. */
enum md_rec_action {
    MD_REC_APPLY = 0,     /* LIVE: apply this packet */
    MD_REC_HELD,          /* RECOVERING: held (or nothing to hold); wait for the snapshot */
    MD_REC_NEED_SNAPSHOT, /* RECOVERING: ask the feed for a snapshot of this channel */
    MD_REC_REPLAY,        /* the snapshot is in the book: apply md_rec_next_held's packets */
    MD_REC_IGNORED,       /* a snapshot the channel does not need (or an implausible one) */
    MD_REC_REFUSED,       /* a packet numbered too far ahead of the channel: drop it */
};

#define MD_REC_DEFAULT_AHEAD (1ull << 24) /* messages past the horizon a packet may start */
#define MD_REC_JUMP_RUN      32           /* consecutive packets that confirm a real jump */

struct md_rec_config {
    uint32_t channel;
    size_t max_held_bytes; /* default (0) 64 MiB */
    uint64_t max_ahead;    /* default (0) MD_REC_DEFAULT_AHEAD */
};

struct md_rec_counters {
    uint64_t held_packets, held_bytes; /* since the last overflow */
    uint64_t overflows;                /* held packets dropped for want of room */
    uint64_t snapshots_applied, snapshots_stale, snapshots_ignored;
    uint64_t imported_orders, import_refused; /* orders the book refused while importing */
    uint64_t packets_implausible, snapshots_implausible; /* numbered past the window */
    uint64_t jumps; /* the channel followed a run of packets past the window */
};

struct md_rec {
    struct md_rec_config cfg;
    enum md_rec_state state;
    uint64_t first_seq;  /* RECOVERING: the first sequence the snapshot must precede */
    uint64_t resume_seq; /* after MD_REC_REPLAY: the first sequence to apply */
    uint64_t horizon;    /* one past the highest sequence a packet named (0: none yet) */
    uint64_t run_next;   /* refused packets: where the current run of them continues */
    uint32_t run;        /* ... and how many it has */
    uint8_t *held;       /* [u32 length][packet] ... */
    size_t held_used, held_cap, replay_off;
    struct md_rec_counters counters;
};

void md_rec_init(struct md_rec *r, const struct md_rec_config *cfg);
void md_rec_fini(struct md_rec *r);

/*
 * A validated packet of the channel (v from md_unpack over data/len), in every state.
 * MD_REC_APPLY (LIVE), MD_REC_NEED_SNAPSHOT (the first packet of a late join), MD_REC_HELD,
 * MD_REC_REFUSED (implausible: numbered too far ahead).
 */
enum md_rec_action md_rec_on_packet(struct md_rec *r, const struct md_packet_view *v,
                                    const uint8_t *data, size_t len);
/* A complete snapshot (md_snap_asm_result). MD_REC_REPLAY, MD_REC_NEED_SNAPSHOT (stale) or
 * MD_REC_IGNORED (not needed, or numbered too far past the horizon). */
enum md_rec_action md_rec_on_snapshot(struct md_rec *r, const struct md_snap *s,
                                      struct md_book *book);
/* After MD_REC_REPLAY: the held packets in arrival order, one per call; false after the last
 * (the buffer is then freed). */
bool md_rec_next_held(struct md_rec *r, const uint8_t **data, size_t *len);
/* After MD_REC_REPLAY: the first message sequence after the snapshot. */
uint64_t md_rec_resume_seq(const struct md_rec *r);

/*
 * Feed side: the snapshot of the books of `locates` (n of them: one channel's symbols) after
 * the channel's message seq, into arrays this builder owns (slow path: it allocates). Symbols
 * without orders and without executions are left out (they are empty in every book).
 */
struct md_snap_builder {
    struct md_snap snap;
    struct md_snap_symbol *symbols;
    struct md_snap_order *orders;
    uint32_t symbols_cap, orders_cap;
};

/* 0, -ENOMEM. The snapshot is b->snap until the next build or fini. */
int md_snap_build(struct md_snap_builder *b, const struct md_book *book, const uint16_t *locates,
                  uint32_t n, uint32_t channel, uint64_t seq);
void md_snap_builder_fini(struct md_snap_builder *b);

#endif /* RDPS_MDUTIL_RECOVERY_H */
