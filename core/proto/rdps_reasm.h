/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_reasm.h - receive side: per-(source, session) sequencing, reassembly, delivery (unreliable
 * mode), with every table bounded globally and per source. */
#ifndef RDPS_PROTO_REASM_H
#define RDPS_PROTO_REASM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rdps_frame.h"
#include "rdps_rel_recv.h"
#include "rdps_rx_assembly.h"
#include "rdps_rx_gaps.h"
#include "rdps_rx_parity.h"
#include "rdps_rx_recovery.h"
#include "rdps_rx_streams.h"
#include "rdps_rx_track.h"
#include "rdps_rx_types.h"
#include "rdps_source.h"

/*
 * Model
 * -----
 * The receive engine: every received datagram goes in here (rdps__reasm_input) and complete
 * messages, gap and loss events and control frames come out through callbacks given at init.
 * Every received byte is hostile input: all state is keyed by the exact sender and bounded
 * globally and per host.
 *
 * It is a stack of layers that call downward only; a layer tells the one above through return
 * values or a callback it was given at init (the assembly layer's on_evicted, the application's
 * deliver, on_gap, send, on_loss), and never includes an upper layer's private header. Every
 * layer takes its stream by the index the stream table gave it and keeps its own per-stream
 * state:
 *
 *   receiver     rdps_reasm.c: decode (or predict) a frame, find its stream, drive the layers
 *                below; unreliable streams here, reliable ones in rdps_rel_recv.c
 *   1 streams    rdps_rx_streams.h: hosts, sources, streams, their quotas, the lookup
 *   2 tracking   rdps_rx_track.h: per stream what arrived, what is missing, the consumed point
 *                and the window offered; one mechanism for reliable and unreliable streams
 *   3 loss       rdps_rx_gaps.h (unreliable: gaps after the reorder allowance) and
 *                rdps_rx_recovery.h (reliable: NAK, STATUS, loss decisions; sans-IO)
 *   4 assembly   rdps_rx_assembly.h: fragments into messages, parking, in-order release,
 *                delivery; over rdps_rx_arena.h: the partials' memory, the chunked arena, the
 *                per-host quotas and their victims
 *
 * The contract of each is in its header; tests/proto/check_layers.py fails on a call cycle
 * among core/proto's files.
 *
 * Streams. A stream is one publisher session seen from one source (GID, QPN, LID, compared in
 * full); a host every source of one GID (or LID without a GRH). Only DATA frames create
 * streams, and heartbeats of reliable streams when this receiver is reliable; heartbeats for
 * an unknown stream are counted (heartbeats_unknown) and ignored. A new stream whose host is
 * at max_streams_per_source evicts the least recently active stream of the host's heaviest
 * source (sessions_source_quota); otherwise, when the table is full, the least recently active
 * stream of the heaviest source of the host holding the most streams goes (sessions_evicted).
 * Either way its partials go too (reasm_dropped_with_session).
 *
 * Sequence window (unreliable streams). Each stream tracks the RDPS_REASM_WINDOW sequences
 * [next - WINDOW, next). A frame up to WINDOW - 1 sequences ahead of next opens a gap (counted,
 * reported to on_gap after the reorder allowance unless it arrives meanwhile: reordered); the
 * sequences it pushes out of the window unreceived are lost (counted). A frame inside the
 * window whose bit is set is a duplicate; one older than the window is stale (both counted and
 * dropped). A jump of WINDOW or more (on the 2^32 circle: WINDOW to 2^31 ahead, or more than
 * 2^31 behind) is never slid over: a DATA frame resets the stream (session_resets, the gap
 * reported): its partials go and the window restarts at the frame with every earlier sequence
 * marked received. A HEARTBEAT that far ahead (a receive queue that overflowed to the end of a
 * burst: the tail is longer than the window) resets it the same way at its next sequence, the
 * tail's messages reported, when the window moved since the stream's start or last reset and the
 * jump is under 2^30; otherwise it is ignored (heartbeat_jumps): heartbeats alone never bring the
 * window around. A new stream's window reaches back WINDOW - 1 sequences from its first frame: a
 * frame from before it that arrives later starts the stream there instead, the sequences between
 * them missing (rdps_rx_gaps.h, The stream's start).
 *
 * Delivery guarantee (unreliable mode): a message is delivered at most once per stream while
 * the stream keeps its window. A reset or an evicted stream starts afresh: a sender able to
 * forge a stream's source can replay its old frames, as it could forge new ones. Messages are
 * delivered as soon as complete, possibly out of order across messages; missing ones are
 * counted (gaps, lost), never waited for. Reliable mode (rdps_rel_recv.h): in order, exactly
 * once, or an explicit loss event; messages up to the limits' max_msg_len, not bounded by the
 * window. Frames carry RELIABLE, reported per message in rdps_reasm_msg_info.reliable.
 *
 * Reassembly, arena and quotas: rdps_rx_assembly.h. The quotas are per host whatever the
 * config names say (max_streams_per_source, max_partials_per_source, max_bytes_per_source):
 * a host over its quota only hurts itself, its heaviest QP first, and the global caps hurt the
 * heaviest host first.
 *
 * Hot path: rdps__reasm_input first predicts the header of the next frame of the stream that
 * sent the previous one (a single-datagram message, next sequence; as in TCP header
 * prediction). An exact match satisfies every rule of the decoder by construction, so it is
 * delivered without it; anything else is decoded and handled in full.
 *
 * Topic filtering: the optional accept hook is asked once per new stream with the topic id of
 * its first frame; a refused stream keeps a table slot so its frames are dropped cheaply
 * (counted as filtered). A session carries one topic: later frames with another topic id are
 * dropped (counted).
 *
 * Memory, all allocated by rdps__reasm_init(): the layers' tables, the arena and the delivery
 * buffer. No allocation after it; no clock reads (now_ns is passed in); callbacks must not call
 * back into the same rdps_reasm.
 */

#define RDPS_REASM_WINDOW RDPS_SEQ_WINDOW /* sequences tracked per stream (rdps_rx_track.h) */

/* Asked once per new stream; return false to drop the stream's frames. */
typedef bool (*rdps_accept_fn)(void *user, const struct rdps_source *source, uint32_t session_id,
                               uint64_t topic_id);
/* What rdps_want_reliable_fn answers for a new stream. */
enum rdps_reasm_want {
    RDPS_REASM_WANT_UNRELIABLE = 0, /* treat it as an unreliable stream */
    RDPS_REASM_WANT_LIVE,           /* reliable, joining at the live position */
    RDPS_REASM_WANT_OLDEST,         /* reliable, joining at the publisher's oldest retained seq */
};
/*
 * Asked once per new stream whose first frame carries RELIABLE (rel.enabled), and for repairs of
 * streams not known yet (only OLDEST joins at a repair). Returns enum rdps_reasm_want.
 */
typedef int (*rdps_want_reliable_fn)(void *user, const struct rdps_source *source,
                                     uint32_t session_id, uint64_t topic_id);

struct rdps_reasm_config {
    uint32_t max_sessions;            /* stream table size (>= 1); also bounds sources, hosts */
    uint32_t max_partials;            /* partial messages in flight (>= 1) */
    size_t reasm_cap_bytes;           /* assembly arena (chunks); bounds reassembly memory */
    uint32_t chunk_bytes;             /* arena granule: power of two >= 64, clamped to the arena */
    uint32_t min_frag_payload;        /* smallest non-final fragment payload accepted (>= 1) */
    uint32_t max_streams_per_source;  /* per HOST; 0 = max_sessions */
    uint32_t max_partials_per_source; /* per HOST; 0 = max_partials */
    size_t max_bytes_per_source;      /* arena bytes one HOST may hold; 0 = the whole arena */
    uint64_t partial_timeout_ns;      /* drop a partial this long after its first fragment */
    uint64_t session_idle_timeout_ns; /* forget idle streams; 0 = only LRU eviction */
    uint64_t hash_seed;               /* randomize to resist crafted collisions */
    struct rdps_frame_limits limits;  /* decoder limits (max message length, ...) */
    rdps_deliver_fn deliver;          /* required */
    rdps_deliver_batch_fn deliver_batch; /* optional: a batched datagram's messages at once */
    rdps_accept_fn accept;               /* optional; NULL accepts every stream */
    rdps_want_reliable_fn want_reliable; /* optional; NULL: every RELIABLE stream, joining as
                                            rel.from_oldest says */
    rdps_gap_fn on_gap;                  /* optional */
    void *user;
    uint64_t reorder_allowance_ns;   /* a missing sequence is a gap after this long; 0 = at once */
    uint32_t max_gap_ranges;         /* gap list per stream (1..1024) */
    struct rdps_rel_recv_config rel; /* reliable mode (rdps_rel_recv.h) */
};

/* Embedded by the caller; contents are private to the engine. */
struct rdps_reasm {
    struct rdps_reasm_config cfg;
    struct rdps_reasm_counters counters;
    struct rdps_rx_streams streams;   /* layer 1 */
    struct rdps_rx_gaps gaps;         /* layer 3, unreliable streams */
    struct rdps_rx_recovery rec;      /* layer 3, reliable streams (cfg.rel.enabled) */
    struct rdps_rx_assembly assembly; /* layer 4 */
    uint64_t now_ns;                  /* the latest now_ns given */
    struct rdps_rx_parity par;        /* parity repairs' block store (cfg.rel.parity_blocks) */
    int32_t par_pending;              /* a record the frame being processed made decodable */
    bool par_feeding;                 /* rebuilt frames are being fed (not kept again) */
};

/*
 * Defaults: 256 sessions, 64 partials, 64 MiB arena in 64 KiB chunks, 224-byte smallest
 * fragment (InfiniBand's smallest MTU, 256, minus the header); per host 64 streams,
 * 16 partials, 32 MiB; 1 s partial timeout, no idle timeout; 2 ms reorder allowance, 32 gap
 * ranges per stream; reliable mode off (its defaults in rdps_rel_recv.h).
 */
void rdps__reasm_config_default(struct rdps_reasm_config *cfg);

/*
 * Allocates the tables, the arena and the delivery buffer (the only
 * allocations). Returns 0, RDPS_EINVAL for a bad config (no deliver
 * callback, zero sizes, chunk_bytes not a power of two >= 64, cap above
 * what offsets can hold), RDPS_ENOMEM. Detail via rdps_last_error_message().
 */
int rdps__reasm_init(struct rdps_reasm *r, const struct rdps_reasm_config *cfg);
/* Frees everything; accepts a zeroed or already finalized struct. */
void rdps__reasm_fini(struct rdps_reasm *r);

/*
 * Decodes one datagram received from `source` and processes it. Returns the
 * number of messages delivered by this frame (0 or 1; a reliable stream's
 * frame may release several parked ones), or RDPS_EBADFRAME if
 * the decoder rejected it (counted in bad_frames[reason]). Other drops
 * (duplicate, stale, filtered, conflict, ...) return 0 and are counted.
 * NAK/STATUS/ANNOUNCE are counted as control_frames and ignored: route them
 * elsewhere (decode once with rdps__frame_decode, then call
 * rdps__reasm_on_frame for DATA and HEARTBEAT).
 */
int rdps__reasm_input(struct rdps_reasm *r, const struct rdps_source *source, const uint8_t *buf,
                      size_t len, uint64_t now_ns);
/* Same as rdps__reasm_input for an already decoded, valid frame (not counted in frames_in). */
int rdps__reasm_on_frame(struct rdps_reasm *r, const struct rdps_source *source,
                         const struct rdps_frame_view *v, uint64_t now_ns);

/*
 * Times out partial messages (and idle streams if configured) whose deadline
 * is <= now_ns, and reports gaps whose reorder allowance ended. Returns the
 * next deadline, UINT64_MAX if there is none.
 */
uint64_t rdps__reasm_expire(struct rdps_reasm *r, uint64_t now_ns);

/*
 * True while some unreliable stream has a gap waiting out its reorder
 * allowance: the caller must run rdps__reasm_expire() within
 * reorder_allowance_ns (its return value says exactly when).
 */
static inline bool rdps__reasm_gaps_pending(const struct rdps_reasm *r)
{
    return rdps__rx_gaps_pending(&r->gaps);
}

/* True while some partial message is held (it times out, or a reliable one is requeued): the
 * caller must run rdps__reasm_expire() within partial_timeout_ns. */
static inline bool rdps__reasm_partials_pending(const struct rdps_reasm *r)
{
    return r->assembly.age_head != RDPS_RX_NONE;
}

static inline const struct rdps_reasm_counters *rdps__reasm_counters(const struct rdps_reasm *r)
{
    return &r->counters;
}

/* Streams, sources, hosts and partial messages currently held, arena bytes in use (tests and
 * stats). */
uint32_t rdps__reasm_stream_count(const struct rdps_reasm *r);
uint32_t rdps__reasm_source_count(const struct rdps_reasm *r);
uint32_t rdps__reasm_host_count(const struct rdps_reasm *r);
uint32_t rdps__reasm_partial_count(const struct rdps_reasm *r);
size_t rdps__reasm_arena_used(const struct rdps_reasm *r);
/* When the stream (source, session) last had a frame (now_ns as given; 0: no such stream). */
uint64_t rdps__reasm_stream_active_ns(const struct rdps_reasm *r, const struct rdps_source *source,
                                      uint32_t session_id);

#endif /* RDPS_PROTO_REASM_H */
