/* rdps_reasm.h - receive side: per-(source, session) sequencing, reassembly, delivery (unreliable
 * mode). */
#ifndef RDPS_PROTO_REASM_H
#define RDPS_PROTO_REASM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rdps_frame.h"

/*
 * Model
 * -----
 * A stream is one publisher session seen from one source (the caller's id
 * for the sender, e.g. a hash of GID + QPN): key (source, session_id). The
 * table of streams is fixed-size; when it is full the least recently active
 * stream is evicted (counted) together with its partial messages.
 *
 * Each stream tracks a window of the last RDPS_REASM_WINDOW sequences:
 * window_base <= seq < next_seq, with a bitmap of those received. A frame
 * beyond next_seq opens a gap (counted); a frame inside the window whose bit
 * is set is a duplicate (counted, dropped); a frame older than the window is
 * stale (counted, dropped); sequences that leave the window unreceived are
 * counted as lost. Reliable mode (next issue) extends this same state: the
 * bitmap gives NAK ranges, window_base becomes the consumed point.
 *
 * Delivery guarantee (unreliable mode): a message is delivered at most once
 * per stream while the stream stays in the table, because every sequence is
 * admitted at most once (duplicates inside the window are dropped, anything
 * older is dropped as stale; a new stream's window reaches back
 * RDPS_REASM_WINDOW - 1 sequences from its first frame, so frames reordered
 * at the start are still accepted). Messages are delivered as soon as they are
 * complete, so they can be out of order across messages; missing messages
 * are counted (gaps, lost), never waited for. If a stream is evicted and the
 * same session shows up again, it starts afresh.
 *
 * Reassembly: fragments are placed by frag_offset into one contiguous buffer
 * per partial message, taken first-fit from a preallocated arena of
 * reasm_cap_bytes. When a new partial does not fit in any free gap (or the
 * partial table is full), the oldest partials are evicted (counted) until it
 * does; a message larger than the arena is dropped (counted). Because
 * buffers are contiguous, free space split across gaps can force an
 * eviction before the live bytes reach the cap; the cap is never exceeded. Partials time out
 * partial_timeout_ns after their first fragment (rdps__reasm_expire). Fragment indices come from
 * the payload size of non-final fragments, which the protocol fixes per message; fragments that
 * contradict the layout of a partial they fall into are dropped as conflicts. A single-datagram
 * message is delivered straight from the receive buffer (zero-copy).
 *
 * Topic filtering: the optional accept hook is asked once per new stream
 * with the topic id of its first frame; a refused stream keeps a table slot
 * so its frames are dropped cheaply (counted as filtered). A session carries
 * one topic: later frames with another topic id are dropped (counted).
 *
 * Reliable mode (next issue) extends this state instead of replacing it:
 * window_base becomes the consumed point reported in STATUS (it advances
 * only over sequences received or declared lost); NAK ranges are the runs
 * of clear bits in [window_base, next_seq); window_slide() in rdps_reasm.c
 * is the single place where a sequence is given up, so the explicit loss
 * event goes there; in-order exactly-once delivery parks complete messages
 * above the consumed point (the arena already holds them) and releases them
 * as it advances; heartbeats already feed tail-loss detection. Frames carry
 * RELIABLE, reported per message in rdps_reasm_msg_info.reliable.
 *
 * No allocation after rdps__reasm_init(); no clock reads (now_ns is passed
 * in); callbacks must not call back into the same rdps_reasm.
 */

#define RDPS_REASM_WINDOW 1024 /* sequences tracked per stream; a power of two */

/* Metadata of a delivered message. */
struct rdps_reasm_msg_info {
    uint64_t source;
    uint32_t session_id;
    uint32_t topic_id;
    uint32_t first_seq; /* sequence of the BEGIN fragment */
    uint32_t msg_len;
    uint32_t frag_count;
    uint64_t timestamp_ns; /* publisher's clock at publish */
    bool retransmit;       /* some fragment carried RETRANSMIT */
    bool reliable;         /* the publisher asked for acks */
};

/*
 * Delivery callback: `msg` points into the receive buffer (single datagram)
 * or the assembly arena and is valid only during the call.
 */
typedef void (*rdps_deliver_fn)(void *user, const uint8_t *msg, uint32_t len,
                                const struct rdps_reasm_msg_info *info);
/*
 * Gap callback (optional): sequences [first_seq, first_seq + count) were
 * skipped by a newer frame or a heartbeat. Reported at detection, so some
 * may still arrive late (then counted as reordered and delivered).
 */
typedef void (*rdps_gap_fn)(void *user, uint64_t source, uint32_t session_id, uint32_t topic_id,
                            uint32_t first_seq, uint32_t count);
/* Asked once per new stream; return false to drop the stream's frames. */
typedef bool (*rdps_accept_fn)(void *user, uint64_t source, uint32_t session_id, uint32_t topic_id);

struct rdps_reasm_config {
    uint32_t max_sessions;            /* stream table size (>= 1) */
    uint32_t max_partials;            /* partial messages in flight (>= 1) */
    size_t reasm_cap_bytes;           /* assembly arena; bounds reassembly memory */
    uint64_t partial_timeout_ns;      /* drop a partial this long after its first fragment */
    uint64_t session_idle_timeout_ns; /* forget idle streams; 0 = only LRU eviction */
    uint64_t hash_seed;               /* randomize to resist crafted collisions */
    struct rdps_frame_limits limits;  /* decoder limits (max message length, ...) */
    rdps_deliver_fn deliver;          /* required */
    rdps_accept_fn accept;            /* optional; NULL accepts every stream */
    rdps_gap_fn on_gap;               /* optional */
    void *user;
};

/* Counters; bad_frames is indexed by enum rdps_frame_reject. */
struct rdps_reasm_counters {
    uint64_t frames_in, bytes_in;
    uint64_t data_frames, heartbeats, control_frames; /* control: NAK/STATUS/ANNOUNCE, ignored */
    uint64_t msgs_delivered, bytes_delivered;
    uint64_t gaps;       /* times a frame or heartbeat skipped ahead of next_seq */
    uint64_t gap_seqs;   /* sequences skipped by those gaps */
    uint64_t lost_seqs;  /* sequences that left the window without arriving */
    uint64_t reordered;  /* late frames that filled a gap */
    uint64_t duplicates; /* frames already received (inside the window) */
    uint64_t stale;      /* frames older than the window (dropped) */
    uint64_t filtered;   /* frames of streams the accept hook refused */
    uint64_t topic_mismatch;
    uint64_t reasm_started, reasm_evicted, reasm_timeouts, reasm_conflicts, reasm_too_large;
    uint64_t reasm_dropped_with_session; /* partials dropped because their stream went */
    uint64_t sessions_created, sessions_evicted, sessions_expired;
    uint64_t bad_frames[RDPS_FRAME_REJECT_COUNT];
};

struct rdps_reasm_stream;
struct rdps_reasm_partial;

/* Embedded by the caller; contents are private to rdps_reasm.c. */
struct rdps_reasm {
    struct rdps_reasm_config cfg;
    struct rdps_reasm_counters counters;
    struct rdps_reasm_stream *streams;
    int32_t *hash_slots; /* stream index or -1; open addressing, linear probing */
    uint32_t hash_mask;
    int32_t stream_free, lru_head, lru_tail; /* lru_head = most recently active */
    struct rdps_reasm_partial *partials;
    int32_t partial_free, age_head, age_tail; /* age_head = oldest partial */
    int32_t addr_head;                        /* partials by arena offset */
    uint8_t *arena;
};

/* Defaults: 256 sessions, 64 partials, 64 MiB arena, 1 s partial timeout, no idle timeout. */
void rdps__reasm_config_default(struct rdps_reasm_config *cfg);

/*
 * Allocates the tables and the arena (the only allocation). Returns 0,
 * RDPS_EINVAL for a bad config (no deliver callback, zero sizes, cap
 * above what size_t offsets can hold), RDPS_ENOMEM. Detail via
 * rdps_last_error_message().
 */
int rdps__reasm_init(struct rdps_reasm *r, const struct rdps_reasm_config *cfg);
/* Frees everything; accepts a zeroed or already finalized struct. */
void rdps__reasm_fini(struct rdps_reasm *r);

/*
 * Decodes one received datagram and processes it. Returns the number of
 * messages delivered by this frame (0 or 1), or RDPS_EBADFRAME if the
 * decoder rejected it (counted in bad_frames[reason]). Other drops
 * (duplicate, stale, filtered, conflict, ...) return 0 and are counted.
 * NAK/STATUS/ANNOUNCE are counted as control_frames and ignored: route them
 * elsewhere (decode once with rdps__frame_decode, then call
 * rdps__reasm_on_frame for DATA and HEARTBEAT).
 */
int rdps__reasm_input(struct rdps_reasm *r, uint64_t source, const uint8_t *buf, size_t len,
                      uint64_t now_ns);
/* Same as rdps__reasm_input for an already decoded, valid frame (not counted in frames_in). */
int rdps__reasm_on_frame(struct rdps_reasm *r, uint64_t source, const struct rdps_frame_view *v,
                         uint64_t now_ns);

/*
 * Times out partial messages (and idle streams if configured) whose deadline
 * is <= now_ns. Returns the next deadline, UINT64_MAX if there is none.
 */
uint64_t rdps__reasm_expire(struct rdps_reasm *r, uint64_t now_ns);

static inline const struct rdps_reasm_counters *rdps__reasm_counters(const struct rdps_reasm *r)
{
    return &r->counters;
}

/* Number of streams and partial messages currently held (for tests and stats). */
uint32_t rdps__reasm_stream_count(const struct rdps_reasm *r);
uint32_t rdps__reasm_partial_count(const struct rdps_reasm *r);

#endif /* RDPS_PROTO_REASM_H */
