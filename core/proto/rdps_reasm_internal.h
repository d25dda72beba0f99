/* rdps_reasm_internal.h - the reassembler's private state, shared by rdps_reasm.c (sources,
 * streams, sequence window, entry points) and rdps_reasm_partial.c (partial messages, arena). */
#ifndef RDPS_PROTO_REASM_INTERNAL_H
#define RDPS_PROTO_REASM_INTERNAL_H

#include "rdps_reasm.h"

#define WINDOW_MASK  (RDPS_REASM_WINDOW - 1u)
#define WINDOW_WORDS (RDPS_REASM_WINDOW / 64)
#define NO_INDEX     (-1)
#define MIN_CHUNK    64u
/* Keeps every table index far from int32_t limits. */
#define MAX_TABLE_ENTRIES (1u << 24)

_Static_assert((RDPS_REASM_WINDOW & (RDPS_REASM_WINDOW - 1)) == 0, "window is a power of two");
_Static_assert(RDPS_REASM_WINDOW % 64 == 0, "window is whole 64-bit words");

struct rdps_reasm_src {
    struct rdps_source id;
    uint32_t streams, partials, chunks; /* charged against the per-source quotas */
    int32_t hash_next;                  /* bucket chain; also the free-list link */
    int32_t part_head, part_tail;       /* this source's partials, oldest first */
};

struct rdps_reasm_stream {
    struct rdps_source source;
    uint32_t session_id;
    uint32_t topic_id;
    uint32_t
        topic_ok; /* topic_id if accepted, else 0 (never a valid topic): one compare per frame */
    int32_t src;
    uint32_t next_seq;   /* newest sequence seen + 1; the window is [next_seq - WINDOW, next_seq) */
    uint32_t loss_floor; /* sequences before the stream's (re)start are not counted as lost */
    uint64_t last_active_ns;
    int32_t lru_prev, lru_next;      /* also the free-list link (lru_next) */
    int32_t partial_head;            /* this stream's partial messages */
    uint64_t received[WINDOW_WORDS]; /* bit seq % WINDOW: seq in the window arrived */
    /* Metadata of single-datagram messages: the stream's part filled once, at creation. */
    struct rdps_reasm_msg_info single;
    /* Header prediction: bytes 0-7 of its next single-datagram frame (0 = never predicted). */
    uint64_t predict_w0;
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
};

/* Forgets a sequence admitted by a frame that was then refused, so the real one can come. */
static inline void rdps__reasm_window_clear(struct rdps_reasm_stream *s, uint32_t seq)
{
    uint32_t bit = seq & WINDOW_MASK;
    s->received[bit / 64] &= ~(1ull << (bit % 64));
}

/* Frees partial pi: its chunks, its slot, its links (stream, age, source). */
void rdps__reasm_partial_release(struct rdps_reasm *r, int32_t pi);
/* Places a fragment of a multi-datagram message of stream si; returns messages delivered (0/1). */
int rdps__reasm_reassemble(struct rdps_reasm *r, int32_t si, const struct rdps_frame_view *v,
                           uint64_t now_ns);

#endif /* RDPS_PROTO_REASM_INTERNAL_H */
