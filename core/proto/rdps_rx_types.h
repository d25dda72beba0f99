/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rx_types.h - what every layer of the receive engine shares: a stream's identity, the
 * metadata of a delivered message, the callbacks to the application and the counters. Types only.
 */
#ifndef RDPS_PROTO_RX_TYPES_H
#define RDPS_PROTO_RX_TYPES_H

#include <stdbool.h>
#include <stdint.h>

#include "rdps_frame.h"
#include "rdps_source.h"

/* Index into the per-stream and per-partial tables of the layers; -1 for none. */
#define RDPS_RX_NONE (-1)

/* A stream is one publisher session seen from one source (rdps_rx_streams.h). */
struct rdps_rx_ident {
    struct rdps_source source; /* the exact sender */
    uint32_t session_id;
    uint64_t topic_id;
};

/* Metadata of a delivered message. */
struct rdps_reasm_msg_info {
    struct rdps_source source; /* the exact sender */
    uint32_t session_id;
    uint64_t topic_id;
    uint32_t first_seq; /* sequence of the BEGIN fragment (or the batch's datagram) */
    uint32_t ordinal;   /* the message's per-session ordinal */
    uint32_t msg_len;
    uint32_t frag_count;
    uint64_t timestamp_ns; /* publisher's clock at publish */
    bool retransmit;       /* some fragment carried RETRANSMIT */
    bool reliable;         /* the publisher asked for acks */
};

/*
 * Delivery callback: `msg` points into the receive buffer (single datagram),
 * an arena chunk or the delivery buffer, and is valid only during the call.
 */
typedef void (*rdps_deliver_fn)(void *user, const uint8_t *msg, uint32_t len,
                                const struct rdps_reasm_msg_info *info);
/*
 * Optional: the `count` (>= 2) messages of one datagram in one call, records filling payload_len
 * bytes at `payload`, already checked (walk them with rdps__batch_next, rdps_batch.h). *info
 * describes the first (msg_len unset); the n-th message's ordinal is info->ordinal + n. Lets a
 * receiver set up its per-message metadata once per datagram. Without it, rdps_deliver_fn runs
 * once per message.
 */
typedef void (*rdps_deliver_batch_fn)(void *user, const uint8_t *payload, uint32_t payload_len,
                                      uint32_t count, const struct rdps_reasm_msg_info *info);
/*
 * A gap of an unreliable stream: datagrams [first_seq, first_seq + count) never arrived within
 * the reorder allowance (or were skipped by a reset: count >= the sequence window), and with
 * them messages [msg_first, msg_first + msg_count): every message one of them held, whole or
 * in part, that no earlier gap of the stream counted (a message spanning two gaps counts in the
 * first), from the ordinals of the datagrams around it (rdps_frame.h, DATA).
 */
struct rdps_reasm_gap {
    const struct rdps_source *source;
    uint32_t session_id;
    uint64_t topic_id;
    uint32_t first_seq, count;
    uint32_t msg_first, msg_count;
};
/* Gap callback (optional, unreliable streams). A sequence is reported at most once. */
typedef void (*rdps_gap_fn)(void *user, const struct rdps_reasm_gap *gap);

/* Counters of the receive engine (each layer counts its own part); bad_frames is indexed by
 * enum rdps_frame_reject. */
struct rdps_reasm_counters {
    uint64_t frames_in, bytes_in;
    uint64_t data_frames, heartbeats, control_frames; /* control: NAK/STATUS/ANNOUNCE, ignored */
    uint64_t heartbeats_unknown; /* heartbeats of streams not in the table (ignored) */
    uint64_t msgs_delivered, bytes_delivered;
    uint64_t gaps;            /* gap ranges reported (never arrived within the allowance) */
    uint64_t gap_seqs;        /* sequences in them */
    uint64_t gap_msgs;        /* messages in them */
    uint64_t gap_ranges_full; /* gap list full: its oldest range reported early */
    uint64_t late_after_gap;  /* frames that arrived after their sequence was reported */
    uint64_t lost_seqs;       /* sequences that left the window without arriving */
    uint64_t reordered;       /* late frames that filled a gap */
    uint64_t duplicates;      /* frames or fragments already received (inside the window) */
    uint64_t stale;           /* frames older than the window (dropped) */
    /* DATA (or an unreliable stream's heartbeat) a window or more ahead: window restarted,
     * partials dropped, the skipped messages reported */
    uint64_t session_resets;
    uint64_t heartbeat_jumps; /* heartbeats a window or more ahead that may not restart (ignored) */
    uint64_t filtered;        /* frames of streams the accept hook refused */
    uint64_t topic_mismatch;
    uint64_t reasm_started, reasm_timeouts, reasm_conflicts;
    uint64_t reasm_evicted;         /* global cap (partials or chunks): heaviest host's oldest */
    uint64_t reasm_source_partials; /* host at max_partials_per_source: its own oldest */
    uint64_t reasm_source_bytes;    /* host at max_bytes_per_source: its own oldest */
    uint64_t reasm_too_large;       /* message could never fit the arena or the source quota */
    uint64_t reasm_too_many_frags;  /* layout with more than max_frags_per_msg fragments */
    uint64_t reasm_dropped_with_session; /* partials dropped because their stream went or reset */
    uint64_t sessions_created, sessions_evicted, sessions_expired;
    uint64_t sessions_source_quota; /* streams evicted: their host at max_streams_per_source */
    uint64_t bad_frames[RDPS_FRAME_REJECT_COUNT];
    uint64_t parity_frames; /* PARITY datagrams (rdps_rx_parity.h counts what became of them) */
};

#endif /* RDPS_PROTO_RX_TYPES_H */
