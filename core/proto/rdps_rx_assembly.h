/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rx_assembly.h - fragments into messages: partial messages, the chunked arena, per-host
 * quotas, parking and delivery (layer 4 of the receive engine: it calls no other layer). */
#ifndef RDPS_PROTO_RX_ASSEMBLY_H
#define RDPS_PROTO_RX_ASSEMBLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rdps_frame.h"
#include "rdps_rx_track.h"
#include "rdps_rx_types.h"

/*
 * Model
 * -----
 * A partial message knows its layout (fragment size from a non-final
 * fragment: the protocol fixes it per message, so fragment i is at offset
 * i * frag_size and the END fragment ends at msg_len) and keeps one bit per
 * fragment (at most max_frags = ceil(max_msg_len / min_frag_payload);
 * more are refused, reasm_too_many_frags). While only its END fragment is
 * known it is an anchor at that sequence. A fragment that contradicts the
 * layout of the partial whose sequence span holds it is a conflict
 * (CONFLICT: the caller gives its sequence back so the real fragment can
 * still come); one whose bit is set is a DUPLICATE. A message completes
 * only when every fragment bit is set, so every delivered byte was written
 * by a fragment of that very message.
 *
 * Finding a fragment's partial is O(1) for every stream: a map per stream
 * from seq % RDPS_RX_SEQ_MAP to the partial holding seq (an anchor at its
 * END), checked on use (the entry's partial must be the stream's and hold
 * seq), and, for partials spanning a sequence window or more (not in the
 * map), a list of at most RDPS_RX_LONG_MAX per stream. Exact because the
 * callers admit only sequences within a window of the tracker's (reliable:
 * [consumed, consumed + WINDOW); unreliable: within WINDOW of next): two
 * live partials of a stream shorter than a window never share a map slot
 * (they lie within 3 windows of each other), and at most 3 longer ones can
 * meet the admitted sequences.
 *
 * Arena: arena_bytes split into chunks of chunk_bytes (a power of two). A
 * partial takes a chunk only when a fragment's bytes land in it, so memory
 * follows the bytes that arrived, never the declared msg_len. A message of
 * up to chunk_bytes is delivered from its chunk; a larger one is copied at
 * completion into one delivery buffer of min(max_msg_len, arena) bytes
 * allocated at init. A message that could never fit (more chunks than the
 * arena or its host's byte quota) is refused at its first fragment
 * (reasm_too_large).
 *
 * Quotas, charged to the stream's source and host (indexes the caller gives
 * at rdps__rx_asm_stream_start): at max_bytes_per_host (whole chunks) the
 * oldest partial of the host's heaviest source is evicted
 * (reasm_source_bytes), at max_partials_per_host likewise
 * (reasm_source_partials); when the arena or the partial table is full, the
 * oldest partial of the heaviest source of the heaviest host goes
 * (reasm_evicted). The partial being filled is never the victim, nor a
 * pinned one. A reliable stream's partial about to be evicted is reported
 * to on_evicted (a callback given at init) so its sequences can be asked
 * again; an unreliable one's is gone.
 *
 * Reliable streams (stream_start with reliable): a complete partial is not
 * delivered by rdps__rx_asm_fragment but parked (COMPLETE) until the caller
 * releases it in order (rdps__rx_asm_deliver); rdps__rx_asm_park_single
 * copies a single-datagram message into the arena as a complete partial. A
 * partial spanning a window or more can never be held whole within the
 * tracker's window: the caller pins it once it is at the stream's head and
 * releases its fragments into it as they come (its sequences pass the
 * consumed point before it completes); a pinned partial is never evicted
 * and not counted in the stream's parking use. Reliable partials never time
 * out; unreliable ones partial_timeout_ns after their first fragment.
 *
 * Allocates everything at init; no clock (now_ns is passed).
 */

#define RDPS_RX_SEQ_MAP  (4u * RDPS_SEQ_WINDOW)
#define RDPS_RX_LONG_MAX 4u

typedef void (*rdps_rx_evicted_fn)(void *user, int32_t stream, int32_t partial);

struct rdps_rx_assembly_config {
    uint32_t max_streams; /* stream indexes are below it */
    uint32_t max_partials;
    size_t arena_bytes;
    uint32_t chunk_bytes; /* power of two >= 64, clamped to the arena */
    uint32_t min_frag_payload;
    uint32_t max_msg_len;
    uint32_t max_partials_per_host; /* 0 = max_partials */
    size_t max_bytes_per_host;      /* 0 = the arena */
    uint64_t partial_timeout_ns;
    rdps_deliver_fn deliver;
    void *user;                    /* deliver's */
    rdps_rx_evicted_fn on_evicted; /* reliable streams' evictions; optional */
    void *evicted_user;
    struct rdps_reasm_counters *counters;
};

struct rdps_rx_partial {
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
    uint32_t chunks;                    /* arena chunks it holds */
    uint64_t timestamp_ns, deadline_ns;
    bool retransmit, reliable;
    bool complete; /* reliable: parked until released in order */
    bool pinned;   /* reliable: streaming at the head of its stream, never evicted */
    bool is_long;  /* spans a window or more: in its stream's long list, not its map */
};

struct rdps_rx_asm_stream {
    struct rdps_rx_ident id;
    int32_t src, host;
    int32_t partial_head;
    uint32_t partials, chunks; /* held by its partials */
    int32_t pinned;            /* its pinned partial, RDPS_RX_NONE */
    bool reliable;
    uint32_t nlongs;  /* entries of longs in use */
    uint32_t anchors; /* partials of which only the END fragment is known */
    int32_t longs[RDPS_RX_LONG_MAX];
    /* Metadata of its single-datagram messages: the stream's part filled once, at its start. */
    struct rdps_reasm_msg_info single;
};

struct rdps_rx_asm_source {
    uint32_t partials, chunks;
    int32_t host;
    int32_t part_head, part_tail; /* its partials, oldest first */
    int32_t host_prev, host_next; /* the host's sources (linked at their first stream) */
    bool linked;
};

struct rdps_rx_asm_host {
    uint32_t partials, chunks;
    int32_t src_head; /* its sources; a source freed by the caller stays until reused */
};

struct rdps_rx_assembly {
    struct rdps_rx_assembly_config cfg;
    struct rdps_reasm_counters *c;
    struct rdps_rx_asm_stream *streams;
    struct rdps_rx_asm_source *sources; /* by the caller's source index */
    struct rdps_rx_asm_host *hosts;     /* by the caller's host index */
    int32_t *seq_maps;                  /* max_streams x RDPS_RX_SEQ_MAP, checked on use */
    struct rdps_rx_partial *partials;
    int32_t partial_free, age_head, age_tail; /* age_head = oldest partial */
    uint64_t *frag_bits;                      /* max_partials x frag_words */
    int32_t *chunk_maps;                      /* max_partials x map_len */
    uint32_t frag_words, max_frags, map_len;
    uint32_t chunk_shift, chunk_count, chunks_free;
    uint32_t host_max_partials, host_max_chunks;
    int32_t chunk_free; /* free chunk list, linked through chunk_next */
    int32_t *chunk_next;
    uint8_t *arena;      /* chunk_count << chunk_shift bytes */
    uint8_t *bounce;     /* delivery buffer for messages spanning chunks */
    size_t bounce_bytes; /* 0 when every deliverable message fits one chunk */
};

/* Returns 0, RDPS_EINVAL (bad sizes), RDPS_ENOMEM. */
int rdps__rx_asm_init(struct rdps_rx_assembly *a, const struct rdps_rx_assembly_config *cfg);
void rdps__rx_asm_fini(struct rdps_rx_assembly *a);

/* Stream si starts, charged to source `src` and host `host` (the caller's indexes, below
 * max_streams; a host's sources are the caller's to keep consistent). */
void rdps__rx_asm_stream_start(struct rdps_rx_assembly *a, int32_t si, int32_t src, int32_t host,
                               const struct rdps_rx_ident *id, bool reliable);
/* Drops every partial of stream si, counted reasm_dropped_with_session if `counted` (no
 * on_evicted). */
void rdps__rx_asm_stream_drop(struct rdps_rx_assembly *a, int32_t si, bool counted);

/* What rdps__rx_asm_fragment did with a fragment. */
enum rdps_rx_placed {
    RDPS_RX_PLACED = 0,     /* in its partial (*pi), which is not complete yet */
    RDPS_RX_DELIVERED = 1,  /* it completed an unreliable message, delivered */
    RDPS_RX_COMPLETE = 2,   /* it completed a reliable stream's partial *pi: parked */
    RDPS_RX_CONFLICT = -1,  /* contradicts the partial holding its sequence (counted) */
    RDPS_RX_DUPLICATE = -2, /* that fragment is there already (counted) */
    RDPS_RX_REFUSED = -3,   /* no partial can hold it: too large, too many fragments (counted) */
};
/* Places fragment v (not a single-datagram message) of stream si. *pi: its partial when
 * PLACED or COMPLETE. */
enum rdps_rx_placed rdps__rx_asm_fragment(struct rdps_rx_assembly *a, int32_t si,
                                          const struct rdps_frame_view *v, uint64_t now_ns,
                                          int32_t *pi);
/* Copies single-datagram message v of reliable stream si into the arena as a complete partial;
 * RDPS_RX_NONE if it cannot be held. */
int32_t rdps__rx_asm_park_single(struct rdps_rx_assembly *a, int32_t si,
                                 const struct rdps_frame_view *v, uint64_t now_ns);
/* Delivers single-datagram message v of stream si straight from the receive buffer (zero-copy);
 * returns 1. */
static inline int rdps__rx_asm_deliver_single(struct rdps_rx_assembly *a, int32_t si,
                                              const struct rdps_frame_view *v)
{
    const struct rdps_frame_header *h = &v->hdr;
    struct rdps_reasm_msg_info *info = &a->streams[si].single;
    info->first_seq = h->seq;
    info->msg_len = h->msg_len;
    info->timestamp_ns = h->timestamp_ns;
    info->retransmit = (h->flags & RDPS_FRAME_F_RETRANSMIT) != 0;
    info->reliable = (h->flags & RDPS_FRAME_F_RELIABLE) != 0;
    a->c->msgs_delivered++;
    a->c->bytes_delivered += h->msg_len;
    a->cfg.deliver(a->cfg.user, v->payload, h->msg_len, info);
    return 1;
}
/* Delivers complete partial pi and frees it; returns 1. */
int rdps__rx_asm_deliver(struct rdps_rx_assembly *a, int32_t pi);
/* Frees partial pi without delivering it. */
void rdps__rx_asm_release(struct rdps_rx_assembly *a, int32_t pi);
/* Frees the partials of stream si that lie wholly before `upto` (a reliable stream gave them up).
 */
void rdps__rx_asm_release_before(struct rdps_rx_assembly *a, int32_t si, uint32_t upto);
/* Pins partial pi (the head of its reliable stream, streaming): never evicted from now on. */
void rdps__rx_asm_pin(struct rdps_rx_assembly *a, int32_t pi);

/* Times out unreliable partials whose deadline is <= now_ns (reliable ones are requeued). Returns
 * the next deadline, UINT64_MAX if none. */
uint64_t rdps__rx_asm_expire(struct rdps_rx_assembly *a, uint64_t now_ns);

static inline const struct rdps_rx_partial *rdps__rx_asm_partial(const struct rdps_rx_assembly *a,
                                                                 int32_t pi)
{
    return &a->partials[pi];
}

/* Whether partial p holds seq (laid out) or ends at it (only its END known). */
static inline bool rdps__rx_partial_holds(const struct rdps_rx_partial *p, uint32_t seq)
{
    return p->frag_size != 0 ? seq - p->first_seq < p->frag_total : p->anchor_seq == seq;
}

/* The partial of stream si holding seq (or an anchor at seq); RDPS_RX_NONE. O(1). */
static inline int32_t rdps__rx_asm_partial_at(const struct rdps_rx_assembly *a, int32_t si,
                                              uint32_t seq)
{
    int32_t pi = a->seq_maps[(size_t)si * RDPS_RX_SEQ_MAP + (seq & (RDPS_RX_SEQ_MAP - 1))];
    if (pi >= 0 && (uint32_t)pi < a->cfg.max_partials && a->partials[pi].stream == si &&
        rdps__rx_partial_holds(&a->partials[pi], seq))
        return pi;
    const struct rdps_rx_asm_stream *s = &a->streams[si];
    if (s->nlongs == 0)
        return RDPS_RX_NONE;
    for (uint32_t k = 0; k < RDPS_RX_LONG_MAX; k++)
        if (s->longs[k] >= 0 && rdps__rx_partial_holds(&a->partials[s->longs[k]], seq))
            return s->longs[k];
    return RDPS_RX_NONE;
}

/* Whether fragment `index` of partial pi arrived. */
static inline bool rdps__rx_asm_frag_received(const struct rdps_rx_assembly *a, int32_t pi,
                                              uint32_t index)
{
    return (a->frag_bits[(size_t)pi * a->frag_words + index / 64] >> (index % 64)) & 1;
}

/* The stream's parking use: partial slots and chunks, its pinned partial not counted. */
static inline void rdps__rx_asm_parked(const struct rdps_rx_assembly *a, int32_t si,
                                       uint32_t *partials, uint32_t *chunks)
{
    const struct rdps_rx_asm_stream *s = &a->streams[si];
    *partials = s->partials;
    *chunks = s->chunks;
    if (s->pinned != RDPS_RX_NONE) {
        *partials -= 1;
        *chunks -= a->partials[s->pinned].chunks;
    }
}

uint32_t rdps__rx_asm_partial_count(const struct rdps_rx_assembly *a);
size_t rdps__rx_asm_arena_used(const struct rdps_rx_assembly *a);

#endif /* RDPS_PROTO_RX_ASSEMBLY_H */
