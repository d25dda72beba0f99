/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rx_gaps.h - loss reporting for unreliable streams: a missing sequence is a gap only once its
 * reorder allowance is over (layer 3 of the receive engine, the unreliable counterpart of
 * rdps_rx_recovery.h). */
#ifndef RDPS_PROTO_RX_GAPS_H
#define RDPS_PROTO_RX_GAPS_H

#include <stdbool.h>
#include <stdint.h>

#include "rdps_rx_track.h"
#include "rdps_rx_types.h"

/*
 * Model
 * -----
 * The missing sequences of an unreliable stream wait in its tracker's range
 * list (rdps_rx_track.h, at most its capacity of ranges) for the reorder
 * allowance: a late frame takes its sequence out (reordered, never a gap);
 * what is still missing after reorder_allowance_ns, or when the window
 * needs its slot (rdps__rx_gaps_leaving), is reported through on_gap and
 * counted (gaps, gap_seqs). A full list reports its oldest range early
 * (gap_ranges_full); a frame whose sequence was reported already is dropped and counted
 * late_after_gap: its messages were counted lost, so they are never delivered as well (a GAP's
 * messages and the messages delivered are disjoint). Streams with pending ranges are linked in one
 * list so
 * rdps__rx_gaps_expire visits only them.
 *
 * Messages. Each range also knows the message ordinals it may hold, [ord_lo, ord_hi), from the
 * frames around it (rdps__frame_ordinal_before/after of the frame that opened it, of a late frame
 * that split it, or a heartbeat's next ordinal): a report counts the messages of that span that
 * no earlier report of the stream counted (reports go in sequence order, so a message spanning
 * two ranges counts once, in the first), exactly the messages that never arrived whole.
 *
 * The stream's start. A stream begins at the first datagram that arrives, but one sent before it
 * may come later (reordered): it is delivered, and the stream starts at it instead. The sequences
 * between it and the former start (none of which arrived: the start is the lowest that did) are
 * missing like any others, a range at the front of the list holding the messages between the two
 * datagrams, reported after the allowance if they do not come. Once a report counted a message of
 * the stream it is too late for that (the counts would not stay in sequence order): a datagram
 * from before the start then is dropped (late_after_gap), its messages before the stream.
 *
 * State per stream index (max_streams entries, allocated at init): the
 * stream's tracker and identity as given by rdps__rx_gaps_note (pointers
 * into the caller's table, stable while the stream lives), and the links.
 * Calls the tracker's range list only; tells the application through
 * on_gap, a callback given at init.
 */

struct rdps_rx_gaps_config {
    uint32_t max_streams;
    uint64_t allowance_ns; /* 0: report at once */
    rdps_gap_fn on_gap;    /* optional */
    void *user;
    struct rdps_reasm_counters *counters; /* gaps, gap_seqs, gap_ranges_full, late_after_gap */
};

struct rdps_rx_gaps_link {
    struct rdps_rx_track *track;
    const struct rdps_rx_ident *id;
    int32_t prev, next;
    bool linked;
    uint32_t ord_counted; /* messages before this ordinal were counted (or preceded the stream) */
    uint32_t ord_floor; /* the stream starts counting here: its lowest datagram's ordinal before */
};

struct rdps_rx_gaps {
    struct rdps_rx_gaps_config cfg;
    struct rdps_rx_gaps_link *links;
    int32_t head; /* streams with pending ranges */
};

int rdps__rx_gaps_init(struct rdps_rx_gaps *g, const struct rdps_rx_gaps_config *cfg);
void rdps__rx_gaps_fini(struct rdps_rx_gaps *g);

/* Stream si starts: messages before ord_floor are not its to count. */
void rdps__rx_gaps_stream_start(struct rdps_rx_gaps *g, int32_t si, uint32_t ord_floor);
/* Reports [first, first + count) of stream si now (a reset skipped it), holding the messages of
 * [ord_lo, ord_hi). */
void rdps__rx_gaps_report(struct rdps_rx_gaps *g, int32_t si, const struct rdps_rx_ident *id,
                          uint32_t first, uint32_t count, uint32_t ord_lo, uint32_t ord_hi);
/* [first, first + count) of stream si went missing, holding the messages of [ord_lo, ord_hi):
 * reported after the allowance. */
void rdps__rx_gaps_note(struct rdps_rx_gaps *g, int32_t si, struct rdps_rx_track *t,
                        const struct rdps_rx_ident *id, uint32_t first, uint32_t count,
                        uint32_t ord_lo, uint32_t ord_hi, uint64_t now_ns);
/* A late frame filled seq; ord_before and ord_after are its rdps__frame_ordinal_before/after.
 * A frame from before the stream's start moves the start to it (see The stream's start).
 * Returns false when seq was reported already, or came from before the start too late (counted
 * late_after_gap): drop the frame. */
bool rdps__rx_gaps_fill(struct rdps_rx_gaps *g, int32_t si, struct rdps_rx_track *t,
                        const struct rdps_rx_ident *id, uint32_t seq, uint32_t ord_before,
                        uint32_t ord_after, uint64_t now_ns);
/* seq (behind the window's front) was taken back: a forged frame held it (a conflict). It is
 * missing again, so the real frame is not late when it comes; its span counts no message (the
 * forged frame's ordinals are not trusted). Reported at once when the list is full. */
void rdps__rx_gaps_reopen(struct rdps_rx_gaps *g, int32_t si, struct rdps_rx_track *t,
                          const struct rdps_rx_ident *id, uint32_t seq, uint32_t ord,
                          uint64_t now_ns);
/* The window moved past `below` (its next - WINDOW): pending ranges starting before it are
 * reported now, whole. */
void rdps__rx_gaps_leaving(struct rdps_rx_gaps *g, int32_t si, struct rdps_rx_track *t,
                           const struct rdps_rx_ident *id, uint32_t below);
/* Reports every pending range of stream si now (reset, removed). */
void rdps__rx_gaps_flush(struct rdps_rx_gaps *g, int32_t si, struct rdps_rx_track *t,
                         const struct rdps_rx_ident *id);
/* Reports the ranges whose allowance ended; returns min(next, the next range deadline). */
uint64_t rdps__rx_gaps_expire(struct rdps_rx_gaps *g, uint64_t now_ns, uint64_t next);

/* Some stream has a range waiting out its allowance. */
static inline bool rdps__rx_gaps_pending(const struct rdps_rx_gaps *g)
{
    return g->head != RDPS_RX_NONE;
}

#endif /* RDPS_PROTO_RX_GAPS_H */
