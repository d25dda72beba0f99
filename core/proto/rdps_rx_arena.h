/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rx_arena.h - the assembly layer's state and memory: partial messages, the chunked arena,
 * per-host quotas and their victims (layer 4 of the receive engine, under rdps_rx_assembly.h; it
 * calls no other layer). */
#ifndef RDPS_PROTO_RX_ARENA_H
#define RDPS_PROTO_RX_ARENA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rdps_rx_track.h"
#include "rdps_rx_types.h"

/*
 * Model
 * -----
 * The memory of the assembly layer (rdps_rx_assembly.h places fragments in
 * it): a table of max_partials partial messages, each with its fragment
 * bitmap and chunk map, and per stream, source and host the partials and
 * chunks they hold.
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
 * Reliable partials never time out (requeued); unreliable ones
 * partial_timeout_ns after their first fragment. A pinned partial (a
 * reliable stream's message streaming at its head) is never evicted and
 * not counted in the stream's parking use.
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
    rdps_deliver_batch_fn deliver_batch; /* optional */
    void *user;                          /* deliver's and deliver_batch's */
    rdps_rx_evicted_fn on_evicted;       /* reliable streams' evictions; optional */
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
    uint32_t ordinal; /* its message's ordinal, or its first message's (a parked batch) */
    uint32_t count;   /* a parked datagram of whole messages: how many (>= 2: records); else 0 */
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

/* ---- for rdps_rx_assembly.c ---- */

/* A new partial for stream si of msg_len bytes, making room as the quotas say; RDPS_RX_NONE
 * (counted) if the message can never fit. */
int32_t rdps__rx_arena_create(struct rdps_rx_assembly *a, int32_t si, uint32_t msg_len,
                              uint64_t now_ns);
/* Copies len bytes at message offset `offset` into partial pi's chunks, taking chunks as needed;
 * false if none can be had. */
bool rdps__rx_arena_write(struct rdps_rx_assembly *a, int32_t pi, uint32_t offset,
                          const uint8_t *data, uint32_t len);
/* Evicts partial pi (counted by the caller); a reliable stream is told first (on_evicted). */
void rdps__rx_arena_evict(struct rdps_rx_assembly *a, int32_t pi);
/* Takes partial pi out of its stream's long list. */
void rdps__rx_arena_long_remove(struct rdps_rx_assembly *a, int32_t si, int32_t pi);

static inline uint64_t *rdps__rx_arena_bits(const struct rdps_rx_assembly *a, int32_t pi)
{
    return a->frag_bits + (size_t)pi * a->frag_words;
}

static inline int32_t *rdps__rx_arena_chunk_map(const struct rdps_rx_assembly *a, int32_t pi)
{
    return a->chunk_maps + (size_t)pi * a->map_len;
}

static inline int32_t *rdps__rx_arena_seq_map(const struct rdps_rx_assembly *a, int32_t si)
{
    return a->seq_maps + (size_t)si * RDPS_RX_SEQ_MAP;
}

#endif /* RDPS_PROTO_RX_ARENA_H */
