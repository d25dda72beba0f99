/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_reasm.h - receive side: per-(source, session) sequencing, reassembly, delivery (unreliable
 * mode), with every table bounded globally and per source. */
#ifndef RDPS_PROTO_REASM_H
#define RDPS_PROTO_REASM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rdps_frame.h"
#include "rdps_ranges.h"
#include "rdps_rel_recv.h"
#include "rdps_source.h"

/*
 * Model
 * -----
 * Every received byte is hostile input: anyone in the group can send any
 * header from any source it can forge. All state is keyed by the exact
 * sender identity (struct rdps_source: GID, QPN, LID, compared in full) and
 * bounded twice: globally, and per host.
 *
 * Hosts and sources. A source is one sender QP (GID + QPN, or LID + QPN); a
 * host is every source with the same GID (or LID without a GRH): the QPN is
 * the sender's choice, so one machine can be any number of sources, but only
 * one host. One entry per source and per host that currently has a stream; a
 * host counts its streams, partials and arena chunks against its quotas
 * (max_streams_per_source, max_partials_per_source, max_bytes_per_source:
 * the names are older than the rule, the quotas are per host), each source
 * its part of them. Within a host the source holding the most pays first:
 * each QPN's share of the host's quota is the quota divided among the host's
 * QPNs, and a QPN within its share loses nothing while another is over. At
 * most max_sessions entries of each (one without a stream is forgotten);
 * O(1) lookup by a seeded hash.
 *
 * Streams. A stream is one publisher session seen from one source: key
 * (source, session_id), table of max_sessions, O(1) lookup by a seeded hash
 * (hash_seed: random per process). Only DATA frames create streams;
 * heartbeats for an unknown stream are counted (heartbeats_unknown) and
 * ignored, so they can neither create nor evict anything. A new stream
 * whose host is at max_streams_per_source evicts the least recently active
 * stream of the host's heaviest source (sessions_source_quota); otherwise,
 * when the table is full, the least recently active stream of the heaviest
 * source of the host holding the most streams goes (sessions_evicted).
 * Either way its partials go too (reasm_dropped_with_session).
 *
 * Sequence window. Each stream tracks the RDPS_REASM_WINDOW sequences
 * [next_seq - WINDOW, next_seq) with one bit each (received or not). A
 * frame up to WINDOW - 1 sequences ahead of next_seq opens a gap (counted,
 * reported to on_gap); the sequences it pushes out of the window
 * unreceived are lost (counted). Missing sequences wait in the stream's gap
 * list (rdps_ranges.h, at most max_gap_ranges ranges) for the reorder
 * allowance: a late frame takes its sequence out (reordered, never a gap);
 * what is still missing after reorder_allowance_ns, or when the window
 * needs its slot, is reported (gaps, gap_seqs, on_gap). A full gap list
 * reports its oldest range early (gap_ranges_full). A frame inside the window whose bit is set
 * is a duplicate; one older than the window is stale (both counted and
 * dropped). A jump of WINDOW or more (on the 2^32 circle: WINDOW to 2^31
 * ahead, or more than 2^31 behind) is never slid over, so the window never
 * wraps onto sequences it tracked: a HEARTBEAT that far ahead is ignored
 * (heartbeat_jumps); a DATA frame resets the stream (session_resets, the gap
 * reported): its partials go and the window restarts at the frame with
 * every earlier sequence marked received (nothing from before the jump is
 * admitted). A new stream's window reaches back WINDOW - 1 sequences from
 * its first frame (frames reordered at the start are accepted; sequences
 * before the first frame are never counted as lost).
 *
 * Delivery guarantee (unreliable mode): a message is delivered at most once
 * per stream while the stream keeps its window (each sequence is admitted
 * once). A reset or an evicted stream starts afresh: a sender able to forge
 * a stream's source can replay its old frames, as it could forge new ones.
 * Messages are delivered as soon as complete, possibly out of order across
 * messages; missing ones are counted (gaps, lost), never waited for.
 *
 * Reassembly: exact. A partial message knows its layout (fragment size from
 * a non-final fragment: the protocol fixes it per message, so fragment i is
 * at offset i * frag_size and the END fragment ends at msg_len) and keeps a
 * bitmap with one bit per fragment (at most max_frags_per_msg =
 * ceil(max_msg_len / min_frag_payload) fragments; more are refused,
 * reasm_too_many_frags). A fragment that contradicts the layout of the
 * partial whose sequence span holds it is a conflict (dropped, counted, and
 * its sequence is given back so the real fragment can still come); one
 * whose bit is already set is a duplicate. The message completes only when
 * every fragment bit is set, so every delivered byte was written by a
 * fragment of that very message: nothing comes from memory used before.
 *
 * Arena: reasm_cap_bytes split into chunks of chunk_bytes (a power of two,
 * default 64 KiB). A partial takes a chunk only when a fragment's bytes
 * land in it (chunk map per partial: message offset / chunk_bytes -> arena
 * chunk), so memory follows the bytes that arrived, never the declared
 * msg_len: four frames declaring 16 MiB hold four chunks. A message of up to
 * chunk_bytes lives in one chunk and is delivered from it; a larger one is
 * copied at completion into one delivery buffer of min(max_msg_len, arena)
 * bytes allocated at init (the only memory beyond the arena and the
 * tables). A message that could never fit (more chunks than the arena or
 * than its source's byte quota) is refused at its first fragment
 * (reasm_too_large). Chunks are charged to the host: at
 * max_bytes_per_source (rounded up to whole chunks) the oldest partial of
 * the host's heaviest source is evicted (reasm_source_bytes); when the arena
 * is out of chunks the oldest partial of the heaviest source of the host
 * holding the most chunks goes (reasm_evicted). Partials likewise: at
 * max_partials_per_source the host's heaviest source's oldest
 * (reasm_source_partials), at max_partials the oldest of the heaviest source
 * of the host holding the most partials (reasm_evicted). So a host over its
 * quota only hurts itself (its heaviest QP first), and the global caps hurt
 * the heaviest host first, however many QPNs it spreads over; the partial
 * being filled is never the victim. (A host that forges many GIDs on RoCE
 * meets only the global caps and the heaviest-first rule: isolation from
 * such hosts comes from partitions and VLANs.) Partials
 * time out partial_timeout_ns after their first fragment
 * (rdps__reasm_expire). A single-datagram message is delivered straight
 * from the receive buffer (zero-copy).
 *
 * Hot path: rdps__reasm_input first predicts the header of the next frame
 * of the stream that sent the previous one (a single-datagram message, next
 * sequence; as in TCP header prediction). An exact match satisfies every
 * rule of the decoder by construction, so it is delivered without it;
 * anything else is decoded and handled in full.
 *
 * Memory, all allocated by rdps__reasm_init(): reasm_cap_bytes of chunks,
 * the delivery buffer, and tables of max_sessions streams, sources and hosts and
 * max_partials partials (each with its fragment bitmap and chunk map).
 *
 * Topic filtering: the optional accept hook is asked once per new stream
 * with the topic id of its first frame; a refused stream keeps a table slot
 * so its frames are dropped cheaply (counted as filtered). A session carries
 * one topic: later frames with another topic id are dropped (counted).
 *
 * Reliable mode (rdps_rel_recv.h, rdps_rel_recv.c) extends this state:
 * a consumed point below which nothing is admitted, the gap list as NAK
 * ranges, complete messages above the consumed point parked in the arena,
 * explicit loss events. Frames carry RELIABLE, reported per message in
 * rdps_reasm_msg_info.reliable.
 *
 * No allocation after rdps__reasm_init(); no clock reads (now_ns is passed
 * in); callbacks must not call back into the same rdps_reasm.
 */

#define RDPS_REASM_WINDOW 2048 /* sequences tracked per stream; a power of two */
/* Reliable streams: datagrams a receiver lets be in flight past the newest one it received
 * (its receive credits, advertised in STATUS): what may queue ahead of the receiver, so ahead
 * of every repair it waits for. Half the sequence window: the other half lets the publisher go
 * on past a hole while its repair comes, as far as the parking room allows. 511 on rxe halved
 * the repair latency and the duplicate repairs but cost 7 % of the lossless rate (10
 * interleaved rounds): the credits must also cover the frames posted ahead in the publisher's
 * send queue and the emulated round trip of several ms. */
#define RDPS_REL_CREDITS_MAX 1023u

/* Metadata of a delivered message. */
struct rdps_reasm_msg_info {
    struct rdps_source source; /* the exact sender */
    uint32_t session_id;
    uint64_t topic_id;
    uint32_t first_seq; /* sequence of the BEGIN fragment */
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
 * Gap callback (optional, unreliable streams): sequences [first_seq,
 * first_seq + count) never arrived within the reorder allowance (or were
 * skipped by a reset: count >= WINDOW). A sequence is reported at most once.
 */
typedef void (*rdps_gap_fn)(void *user, const struct rdps_source *source, uint32_t session_id,
                            uint64_t topic_id, uint32_t first_seq, uint32_t count);
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
    rdps_accept_fn accept;            /* optional; NULL accepts every stream */
    rdps_want_reliable_fn want_reliable; /* optional; NULL: every RELIABLE stream, joining as
                                            rel.from_oldest says */
    rdps_gap_fn on_gap;                  /* optional */
    void *user;
    uint64_t reorder_allowance_ns;   /* a missing sequence is a gap after this long; 0 = at once */
    uint32_t max_gap_ranges;         /* gap list per stream (1..1024) */
    struct rdps_rel_recv_config rel; /* reliable mode (rdps_rel_recv.h) */
};

/* Counters; bad_frames is indexed by enum rdps_frame_reject. */
struct rdps_reasm_counters {
    uint64_t frames_in, bytes_in;
    uint64_t data_frames, heartbeats, control_frames; /* control: NAK/STATUS/ANNOUNCE, ignored */
    uint64_t heartbeats_unknown; /* heartbeats of streams not in the table (ignored) */
    uint64_t msgs_delivered, bytes_delivered;
    uint64_t gaps;            /* gap ranges reported (never arrived within the allowance) */
    uint64_t gap_seqs;        /* sequences in them */
    uint64_t gap_ranges_full; /* gap list full: its oldest range reported early */
    uint64_t late_after_gap;  /* frames that arrived after their sequence was reported */
    uint64_t lost_seqs;       /* sequences that left the window without arriving */
    uint64_t reordered;       /* late frames that filled a gap */
    uint64_t duplicates;      /* frames or fragments already received (inside the window) */
    uint64_t stale;           /* frames older than the window (dropped) */
    uint64_t session_resets;  /* DATA a window or more ahead: window restarted, partials dropped */
    uint64_t heartbeat_jumps; /* heartbeats a window or more ahead (ignored) */
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
};

struct rdps_reasm_stream;
struct rdps_reasm_partial;
struct rdps_reasm_src;
struct rdps_reasm_host;

/* Embedded by the caller; contents are private to rdps_reasm.c. */
struct rdps_reasm {
    struct rdps_reasm_config cfg;
    struct rdps_reasm_counters counters;
    struct rdps_reasm_stream *streams;
    int32_t *hash_slots; /* stream index or -1; open addressing, linear probing */
    uint32_t hash_mask;
    int32_t stream_free, lru_head, lru_tail; /* lru_head = most recently active */
    struct rdps_reasm_src *sources;
    int32_t *src_buckets; /* source index or -1; chained through rdps_reasm_src.hash_next */
    uint32_t src_mask;
    int32_t src_free;
    struct rdps_reasm_host *hosts;
    int32_t *host_buckets; /* host index or -1; chained through rdps_reasm_host.hash_next */
    int32_t host_free;
    struct rdps_reasm_partial *partials;
    int32_t partial_free, age_head, age_tail; /* age_head = oldest partial */
    uint64_t *frag_bits;                      /* max_partials x frag_words */
    int32_t *chunk_maps;                      /* max_partials x map_len */
    uint32_t frag_words, max_frags, map_len;
    uint32_t chunk_shift, chunk_count, chunks_free;
    uint32_t host_max_streams, host_max_partials, host_max_chunks;
    int32_t chunk_free; /* free chunk list, linked through chunk_next */
    int32_t *chunk_next;
    uint8_t *arena;                   /* chunk_count << chunk_shift bytes */
    uint8_t *bounce;                  /* delivery buffer for messages spanning chunks */
    size_t bounce_bytes;              /* 0 when every deliverable message fits one chunk */
    struct rdps_gap_range *gap_store; /* max_sessions x max_gap_ranges */
    int32_t gap_head;                 /* streams with pending gaps (unreliable) */
    struct rdps_rel_stream *rel;      /* max_sessions, when rel.enabled */
    int32_t rel_head;                 /* reliable streams */
    uint32_t rel_credits;
    bool rel_rx_backlog; /* received datagrams wait unprocessed (rdps__reasm_rel_set_backlog) */
    uint64_t rel_rng;
    uint64_t rel_due_ns; /* earliest pending reliable action (a lower bound) */
    struct rdps_rel_recv_counters rel_totals;
    uint64_t now_ns; /* the latest now_ns given (timers set deep inside a call) */
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
    return r->gap_head >= 0;
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

#endif /* RDPS_PROTO_REASM_H */
