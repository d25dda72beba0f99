/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_reasm_internal.h - the reassembler's private state, shared by rdps_reasm.c (sources,
 * streams, sequence window, entry points) and rdps_reasm_partial.c (partial messages, arena). */
#ifndef RDPS_PROTO_REASM_INTERNAL_H
#define RDPS_PROTO_REASM_INTERNAL_H

#include "rdps_reasm.h"
#include "rdps_seq.h"

#define WINDOW_MASK  (RDPS_REASM_WINDOW - 1u)
#define WINDOW_WORDS (RDPS_REASM_WINDOW / 64)
#define NO_INDEX     (-1)
#define MIN_CHUNK    64u
/* Keeps every table index far from int32_t limits. */
#define MAX_TABLE_ENTRIES (1u << 24)

_Static_assert((RDPS_REASM_WINDOW & (RDPS_REASM_WINDOW - 1)) == 0, "window is a power of two");
_Static_assert(RDPS_REASM_WINDOW % 64 == 0, "window is whole 64-bit words");

/* A host: the sources sharing a GID (or a LID without a GRH). The quotas are a host's. */
struct rdps_reasm_host {
    struct rdps_source id;              /* rdps__source_host(): the QPN is 0 */
    uint32_t streams, partials, chunks; /* charged against the per-host quotas */
    int32_t hash_next;                  /* bucket chain; also the free-list link */
    int32_t src_head;                   /* its sources, linked through rdps_reasm_src.host_next */
};

/* A source (one QP of a host). Its counts are its part of its host's: the share the
 * heaviest-first rule compares within the host. */
struct rdps_reasm_src {
    struct rdps_source id;
    uint32_t streams, partials, chunks;
    int32_t host;
    int32_t hash_next;            /* bucket chain; also the free-list link */
    int32_t host_prev, host_next; /* the host's sources */
    int32_t part_head, part_tail; /* this source's partials, oldest first */
};

struct rdps_reasm_stream {
    struct rdps_source source;
    uint32_t session_id;
    uint64_t topic_id;
    uint64_t
        topic_ok;  /* topic_id if accepted, else 0 (never a valid topic): one compare per frame */
    bool reliable; /* handled by rdps_rel_recv.c; state in r->rel[index] */
    bool from_oldest; /* reliable: late join from the publisher's oldest retained sequence */
    bool in_gap_list; /* unreliable stream with pending gaps (r->gap_head) */
    int32_t src, host;
    uint32_t next_seq;   /* newest sequence seen + 1; the window is [next_seq - WINDOW, next_seq) */
    uint32_t loss_floor; /* sequences before the stream's (re)start are not counted as lost */
    uint64_t last_active_ns;
    int32_t lru_prev, lru_next;      /* also the free-list link (lru_next) */
    int32_t partial_head;            /* this stream's partial messages */
    uint32_t partials, chunks;       /* held by them (a reliable stream's parking room) */
    uint64_t received[WINDOW_WORDS]; /* bit seq % WINDOW: seq in the window arrived */
    /* Metadata of single-datagram messages: the stream's part filled once, at creation. */
    struct rdps_reasm_msg_info single;
    /* Header prediction: bytes 0-7 of its next single-datagram frame (0 = never predicted). */
    uint64_t predict_w0;
    struct rdps_ranges gaps;    /* missing sequences not yet reported (unreliable) or NAK ranges */
    int32_t gap_prev, gap_next; /* r->gap_head list */
};

/*
 * Partials of a reliable stream by sequence (rdps__rel_partial_at). A reliable stream admits
 * sequences below consumed + RDPS_REASM_WINDOW and holds messages of fewer than
 * RDPS_REASM_WINDOW fragments, so every sequence of a live partial at or above the consumed
 * point lies within 2 windows of it (and within 3 after a from_oldest join moved the point back
 * by at most a window): with 4 windows of slots no live entry is ever overwritten by another
 * sequence, and the map is exact (a frame whose slot fails the check has no partial).
 */
#define RDPS_REL_SEQ_MAP (4u * RDPS_REASM_WINDOW)

/* Reliable state of stream i, in r->rel[i] (model: rdps_rel_recv.h). */
struct rdps_rel_stream {
    uint32_t consumed;        /* every sequence before it was delivered or declared lost */
    uint32_t trail;           /* publisher's oldest retained sequence (have_trail) */
    uint32_t receivers;       /* live receivers of this publisher */
    uint32_t status_consumed; /* consumed sent in the last STATUS */
    uint32_t status_next;     /* the stream's next_seq at the last STATUS */
    uint64_t srtt_ns;
    uint64_t rttvar_ns;          /* mean deviation of the NAK -> repair samples (RFC 6298) */
    uint64_t rtt_fast_ns;        /* NAK -> repair, halving towards each sample (0: none yet) */
    uint64_t status_ns;          /* last STATUS sent */
    uint64_t hb_ts_ns, hb_rx_ns; /* latest heartbeat: its timestamp, when it arrived */
    uint32_t hb_next;            /* the newest heartbeat's next sequence (valid if has_hb_next) */
    bool has_hb_next;
    bool extend; /* the consumed point moved while hb_next is untracked: track more at poll */
    /* The last extend stopped at the window's edge with these consumed and next_seq: not again
     * until one of them moves (the edge moves with them), or every poll would be due at once. */
    bool extend_tried;
    uint32_t extend_consumed, extend_next;
    uint64_t join_deadline_ns; /* joining: give up waiting for a heartbeat */
    bool have_trail, joining, hb_echo, status_now;
    bool reordering; /* a missing sequence arrived late: first NAKs wait for reordering */
    /* How late missing originals arrived after their range was found (a decaying maximum). */
    uint64_t reorder_late_ns;
    /* The message at the consumed point spans head_span datagrams from head_seq (learnt from
     * one of its non-final fragments): the window stretches to hold it whole (has_head). */
    uint32_t head_seq, head_span;
    bool has_head;
    bool progressed; /* consumed moved by a delivery or a loss event since the join */
    /* The publisher went silent: STATUS intervals doubled status_backoff times (each STATUS
     * sent with no frame heard since the one before), NAK retries spaced by the silence, or
     * nothing sent at all (idle: silent for rel.idle_ns). `silent` makes the next frame of the
     * stream bring the poll forward (rdps__rel_heard). */
    uint8_t status_backoff;
    bool silent, idle;
    int32_t prev, next; /* r->rel_head list */
    struct rdps_rel_recv_counters c;
    /* Last, and not cleared when a stream starts in the slot (32 KiB): entries are checked on
     * use. The partial holding seq (laid out) or ending at seq (only its END known), at
     * seq % RDPS_REL_SEQ_MAP: walking the stream's partials cost O(parked) per frame, 45 % of
     * the receive side's instructions at 5 % loss. */
    int32_t seq_partial[RDPS_REL_SEQ_MAP];
};

struct rdps_reasm_partial {
    int32_t stream, src;
    int32_t stream_prev, stream_next; /* per-stream list; stream_next is the free-list link */
    int32_t age_prev, age_next;       /* creation order over all partials */
    int32_t src_prev, src_next;       /* creation order within the source */
    uint32_t msg_len;
    uint32_t frag_size; /* payload of non-final fragments; 0 while only the END is known */
    uint32_t frag_total;
    uint32_t first_seq;
    uint32_t anchor_seq, anchor_offset; /* the END fragment, while frag_size is unknown */
    uint32_t frags_received;            /* bits set in the fragment bitmap (+1 for an anchor) */
    uint32_t chunk_span;                /* chunk map entries the message covers */
    uint64_t timestamp_ns, deadline_ns;
    bool retransmit, reliable;
    bool complete; /* reliable: parked until the consumed point reaches first_seq */
};

static inline void rdps__reasm_window_clear(struct rdps_reasm_stream *s, uint32_t seq)
{
    uint32_t bit = seq & WINDOW_MASK;
    s->received[bit / 64] &= ~(1ull << (bit % 64));
}

static inline void rdps__reasm_window_set(struct rdps_reasm_stream *s, uint32_t seq)
{
    uint32_t bit = seq & WINDOW_MASK;
    s->received[bit / 64] |= 1ull << (bit % 64);
}

static inline bool rdps__reasm_window_test(const struct rdps_reasm_stream *s, uint32_t seq)
{
    uint32_t bit = seq & WINDOW_MASK;
    return (s->received[bit / 64] >> (bit % 64)) & 1;
}

/* Delivers a single-datagram message of stream s straight from the receive buffer (zero-copy). */
static inline int rdps__reasm_deliver_single(struct rdps_reasm *r, struct rdps_reasm_stream *s,
                                             const struct rdps_frame_view *v)
{
    const struct rdps_frame_header *h = &v->hdr;
    struct rdps_reasm_msg_info *info = &s->single;
    info->first_seq = h->seq;
    info->msg_len = h->msg_len;
    info->timestamp_ns = h->timestamp_ns;
    info->retransmit = (h->flags & RDPS_FRAME_F_RETRANSMIT) != 0;
    info->reliable = (h->flags & RDPS_FRAME_F_RELIABLE) != 0;
    r->counters.msgs_delivered++;
    r->counters.bytes_delivered += h->msg_len;
    r->cfg.deliver(r->cfg.user, v->payload, h->msg_len, info);
    return 1;
}

/* Forgets a sequence admitted by a frame that was then refused, so the real one can come (a
 * reliable stream asks for it again). */
void rdps__reasm_seq_unreceive(struct rdps_reasm *r, int32_t si, uint32_t seq);
/* Drops every partial of stream s (counted reasm_dropped_with_session). */
void rdps__reasm_stream_drop_partials(struct rdps_reasm *r, struct rdps_reasm_stream *s);
/* The stream for (source, session) without marking it active; NO_INDEX if none. */
int32_t rdps__reasm_stream_lookup(const struct rdps_reasm *r, const struct rdps_source *source,
                                  uint32_t session_id);

/* Frees partial pi: its chunks, its slot, its links (stream, age, source). */
void rdps__reasm_partial_release(struct rdps_reasm *r, int32_t pi);
/* Places a fragment of a multi-datagram message of stream si; returns messages delivered. */
int rdps__reasm_reassemble(struct rdps_reasm *r, int32_t si, const struct rdps_frame_view *v,
                           uint64_t now_ns);
/* Delivers complete partial pi and releases it; returns 1. */
int rdps__reasm_deliver_partial(struct rdps_reasm *r, int32_t pi);
/* Copies a single-datagram message into the arena as a complete partial; NO_INDEX if refused. */
int32_t rdps__reasm_park_single(struct rdps_reasm *r, int32_t si, const struct rdps_frame_view *v,
                                uint64_t now_ns);
/* Reliable stream si: the partial holding seq (laid out) or ending at it (only its END known),
 * NO_INDEX if none. O(1): the stream's sequence map (RDPS_REL_SEQ_MAP). */
static inline int32_t rdps__rel_partial_at(const struct rdps_reasm *r, int32_t si, uint32_t seq)
{
    int32_t pi = r->rel[si].seq_partial[seq & (RDPS_REL_SEQ_MAP - 1)];
    if (pi < 0 || (uint32_t)pi >= r->cfg.max_partials)
        return NO_INDEX;
    const struct rdps_reasm_partial *p = &r->partials[pi];
    if (p->stream != si) /* freed (no stream), or another stream's */
        return NO_INDEX;
    bool holds = p->frag_size != 0 ? seq - p->first_seq < p->frag_total : p->anchor_seq == seq;
    return holds ? pi : NO_INDEX;
}
/* Moves partial pi to the young end of the age list with a new deadline. */
void rdps__reasm_partial_requeue(struct rdps_reasm *r, int32_t pi, uint64_t deadline_ns);

/* ---- unreliable gap list (rdps_reasm_gaps.c) ---- */
void rdps__reasm_report_gap(struct rdps_reasm *r, const struct rdps_reasm_stream *s, uint32_t first,
                            uint32_t count);
/* [first, first + count) went missing: reported after the reorder allowance. */
void rdps__reasm_gaps_note(struct rdps_reasm *r, int32_t si, uint32_t first, uint32_t count,
                           uint64_t now_ns);
/* A late frame filled seq. */
void rdps__reasm_gaps_fill(struct rdps_reasm *r, int32_t si, uint32_t seq);
/* The window needs the slot of unreceived `leaving`: its pending range is reported up to it. */
void rdps__reasm_gaps_leaving(struct rdps_reasm *r, int32_t si, uint32_t leaving);
/* Reports every pending range now (stream reset or removed). */
void rdps__reasm_gaps_flush(struct rdps_reasm *r, int32_t si);
/* Reports ranges whose allowance ended; returns min(next, the next range deadline). */
uint64_t rdps__reasm_gaps_expire(struct rdps_reasm *r, uint64_t now_ns, uint64_t next);

/* ---- reliable mode hooks (rdps_rel_recv.c) ---- */

/* Adds n to a reliable stream's counter and to the reassembler's totals. */
#define RDPS_REL_COUNT(r, rs, field, n) \
    do {                                \
        (rs)->c.field += (n);           \
        (r)->rel_totals.field += (n);   \
    } while (0)

/* The next reliable poll is due no later than due_ns. */
static inline void rdps__rel_note_due(struct rdps_reasm *r, uint64_t due_ns)
{
    if (due_ns < r->rel_due_ns)
        r->rel_due_ns = due_ns;
}

/* Reliable stream si has nothing waiting: its next frame in sequence is delivered at once. */
static inline bool rdps__rel_in_order(const struct rdps_reasm *r, int32_t si)
{
    return r->rel[si].consumed == r->streams[si].next_seq && !r->rel[si].joining;
}
/* The header-predicted frame at the consumed point was admitted: move the point over it. */
void rdps__rel_delivered_in_order(struct rdps_reasm *r, int32_t si);
void rdps__rel_stream_start(struct rdps_reasm *r, int32_t si, const struct rdps_frame_header *h,
                            uint64_t now_ns);
void rdps__rel_stream_stop(struct rdps_reasm *r, int32_t si);
int rdps__rel_on_data(struct rdps_reasm *r, int32_t si, const struct rdps_frame_view *v,
                      uint64_t now_ns);
int rdps__rel_on_heartbeat(struct rdps_reasm *r, int32_t si, const struct rdps_frame_header *h,
                           uint64_t now_ns);
/* Partial pi of a reliable stream completed: park it or deliver it in order. */
int rdps__rel_complete(struct rdps_reasm *r, int32_t pi);
/* Partial pi of a reliable stream is about to be evicted: its sequences are asked again. */
void rdps__rel_partial_evicted(struct rdps_reasm *r, int32_t pi);
/* seq of reliable stream si was refused after admission: ask for it again. */
void rdps__rel_unreceive(struct rdps_reasm *r, int32_t si, uint32_t seq);

/* A frame of reliable stream `rs` arrived from its publisher: if the poll spaced this stream's
 * NAK and STATUS for a silent publisher, it runs again now (at once: a NAK or STATUS held back may
 * be due). One predictable branch on the hot path. */
static inline void rdps__rel_heard(struct rdps_reasm *r, struct rdps_rel_stream *rs)
{
    if (__builtin_expect(rs->silent, 0)) {
        rs->silent = false;
        rdps__rel_note_due(r, r->now_ns);
    }
}

/* ---- the receive window and STATUS (rdps_rel_window.c) ---- */

/* Bits set in w, branch-free and inline: without -mpopcnt (a generic x86-64 build)
 * __builtin_popcountll is a libgcc call, 11 % of the receive side's instructions at 5 % loss. */
static inline uint32_t rdps__popcount64(uint64_t w)
{
    w = w - ((w >> 1) & 0x5555555555555555ull);
    w = (w & 0x3333333333333333ull) + ((w >> 2) & 0x3333333333333333ull);
    w = (w + (w >> 4)) & 0x0F0F0F0F0F0F0F0Full;
    return (uint32_t)((w * 0x0101010101010101ull) >> 56);
}

/* Sequences of [from, from + n) the stream has received (n <= RDPS_REASM_WINDOW). */
static inline uint32_t rdps__rel_received_count(const struct rdps_reasm_stream *s, uint32_t from,
                                                uint32_t n)
{
    uint32_t count = 0;
    while (n > 0) {
        uint32_t bit = from & WINDOW_MASK, within = bit % 64;
        uint32_t take = 64 - within < n ? 64 - within : n;
        uint64_t word = s->received[bit / 64] >> within;
        if (take < 64)
            word &= (1ull << take) - 1;
        count += rdps__popcount64(word);
        from += take;
        n -= take;
    }
    return count;
}

/*
 * The window a STATUS offers: the credits past the newest sequence received, the sequence
 * window, and what this source may park. The credits bound what is in flight to this receiver
 * and not yet taken off its receive queue, so they count from the newest received (next_seq),
 * not from the consumed point: frames parked behind a hole were taken off the queue, and
 * counting from the consumed point stopped the publisher one credit window after each hole
 * until the repair came. The stream's share of its host's quotas (partial slots, arena
 * chunks) holds the messages received past the consumed point; every sequence of the window
 * not received yet (a hole, or not sent) may need one more slot and one more chunk when it
 * comes, so the parking bound is the sequences received past the consumed point plus the
 * share's free slots (the fewer of partials and chunks). A hole thus costs one slot, not the
 * whole stretch behind it: the window reaches past an old hole as far as the parked messages
 * leave room (a message of many fragments parks in one slot and few chunks), and a datagram
 * within it never makes the receiver evict a parked message and ask for it again. Inline: it
 * is checked several times per received frame.
 */
static inline uint32_t rdps__rel_credit_cap(const struct rdps_reasm *r)
{
    return r->rel_credits < RDPS_REL_CREDITS_MAX ? r->rel_credits : RDPS_REL_CREDITS_MAX;
}

/* The stream's free share of its host's partial slots and arena chunks (the fewer). */
static inline uint32_t rdps__rel_free_share(const struct rdps_reasm *r, int32_t si)
{
    const struct rdps_reasm_stream *s = &r->streams[si];
    const struct rdps_reasm_host *host = &r->hosts[s->host];
    uint32_t streams = host->streams ? host->streams : 1;
    uint32_t park = r->host_max_partials / streams, chunks = r->host_max_chunks / streams;
    park = park > s->partials ? park - s->partials : 0;
    chunks = chunks > s->chunks ? chunks - s->chunks : 0;
    return park < chunks ? park : chunks;
}

static inline uint32_t rdps__rel_status_window(const struct rdps_reasm *r, int32_t si)
{
    const struct rdps_reasm_stream *s = &r->streams[si];
    const struct rdps_rel_stream *rs = &r->rel[si];
    uint32_t w = rdps__rel_credit_cap(r); /* past next_seq, so past consumed + held */
    uint32_t share = rdps__rel_free_share(r, si);
    uint32_t held = s->next_seq - rs->consumed;
    if (held != 0 && rdps__seq_gt(s->next_seq, rs->consumed)) {
        share += rdps__rel_received_count(s, rs->consumed,
                                          held < RDPS_REASM_WINDOW ? held : RDPS_REASM_WINDOW);
        w += held;
        if (w > RDPS_REASM_WINDOW - 1)
            w = RDPS_REASM_WINDOW - 1;
    }
    if (share == 0)
        share = 1;
    /* The message at the consumed point must fit whole or it could never complete: a stream
     * whose share is smaller than one message stalled for good (a 134 kB message against a
     * 64-datagram share). Only its own fragments lie in the stretch, and the reassembler's
     * per-message limits still refuse what it cannot hold. */
    if (rs->has_head && rs->head_seq == rs->consumed && rs->head_span > share)
        share = rs->head_span;
    return w < share ? w : share;
}

/*
 * A floor of rdps__rel_status_window without the count of the stretch's received sequences
 * (the free share alone, at least 1, within the credits): the window only adds to it. The
 * receive path asks whether a distance lies within the window on every frame, and while a
 * hole is open the count is a popcount over up to a whole window; the floor settles most
 * questions without it.
 */
static inline uint32_t rdps__rel_window_floor(const struct rdps_reasm *r, int32_t si)
{
    uint32_t w = rdps__rel_credit_cap(r), share = rdps__rel_free_share(r, si);
    if (share == 0)
        share = 1;
    return w < share ? w : share;
}

/* Whether `distance` sequences past the consumed point lie within the window offered. */
static inline bool rdps__rel_within_window(const struct rdps_reasm *r, int32_t si,
                                           uint32_t distance)
{
    return distance < rdps__rel_window_floor(r, si) || distance < rdps__rel_status_window(r, si);
}

/* Learns the span of the message at the consumed point from fragment v (window stretch). */
void rdps__rel_learn_head(struct rdps_reasm *r, int32_t si, const struct rdps_frame_view *v);
/* After progress: a STATUS is due once a quarter window was consumed since the last one. */
void rdps__rel_status_progress(struct rdps_reasm *r, struct rdps_rel_stream *rs);
void rdps__rel_send_status(struct rdps_reasm *r, int32_t si, uint64_t now_ns, uint64_t wall_ns);
/* STATUS intervals double at most this many times (100 ms -> 1.6 s at the defaults; a stream
 * goes idle before: 5 s). */
#define RDPS_REL_STATUS_BACKOFF_MAX 4

/* How long after the last STATUS the next is due: status_interval_ns, doubled status_backoff
 * times while nothing was heard from the publisher since that STATUS (then a frame heard brings
 * the next STATUS forward: `silent`). */
static inline uint64_t rdps__rel_status_wait(struct rdps_reasm *r, int32_t si)
{
    struct rdps_rel_stream *rs = &r->rel[si];
    uint64_t interval = r->cfg.rel.status_interval_ns;
    if (rs->status_backoff == 0 || r->streams[si].last_active_ns >= rs->status_ns)
        return interval;
    rs->silent = true;
    return interval << rs->status_backoff;
}

#endif /* RDPS_PROTO_REASM_INTERNAL_H */
