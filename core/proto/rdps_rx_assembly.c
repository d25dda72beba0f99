/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rx_assembly.c - fragments into messages: layout, O(1) lookup by sequence, placement, parking
 * and delivery, over the arena (model: rdps_rx_assembly.h). */
#include "rdps_rx_assembly.h"

#include <string.h>

#include "rdps_batch.h"
#include "rdps_seq.h"

/* ---- finding a fragment's partial -------------------------------------------------------------
 */

/* A free entry of stream si's long list. When it is full, its oldest partial that is not pinned
 * goes (counted reasm_evicted; an unreliable stream's is one the window passed, waiting out its
 * timeout); RDPS_RX_NONE if every one is pinned or being filled. */
static int long_slot(struct rdps_rx_assembly *a, int32_t si, int32_t keep)
{
    struct rdps_rx_asm_stream *s = &a->streams[si];
    int oldest = -1;
    for (uint32_t k = 0; k < RDPS_RX_LONG_MAX; k++) {
        int32_t pi = s->longs[k];
        if (pi == RDPS_RX_NONE)
            return (int)k;
        if (pi != keep && !a->partials[pi].pinned &&
            (oldest < 0 ||
             rdps__seq_lt(a->partials[pi].first_seq, a->partials[s->longs[oldest]].first_seq)))
            oldest = (int)k;
    }
    if (oldest < 0)
        return -1;
    a->c->reasm_evicted++;
    rdps__rx_arena_evict(a, s->longs[oldest]); /* clears the entry */
    return oldest;
}

/* Enters partial pi in its stream's sequence map: every sequence it holds, or its END alone while
 * the layout is unknown; a partial spanning a window or more goes in the long list instead
 * (false: no room there). */
static inline bool map_partial(struct rdps_rx_assembly *a, int32_t pi)
{
    struct rdps_rx_partial *p = &a->partials[pi];
    if (p->frag_size != 0 && p->frag_total >= RDPS_SEQ_WINDOW) {
        int k = long_slot(a, p->stream, pi);
        if (k < 0)
            return false;
        a->streams[p->stream].longs[k] = pi;
        a->streams[p->stream].nlongs++;
        p->is_long = true;
        return true;
    }
    int32_t *map = rdps__rx_arena_seq_map(a, p->stream);
    uint32_t first = p->frag_size != 0 ? p->first_seq : p->anchor_seq;
    uint32_t count = p->frag_size != 0 ? p->frag_total : 1;
    for (uint32_t i = 0; i < count; i++)
        map[(first + i) & (RDPS_RX_SEQ_MAP - 1)] = pi;
    return true;
}

/* Fixes a partial's fragment layout and clears the bitmap words it uses. */
__attribute__((always_inline)) static inline bool partial_set_layout(struct rdps_rx_assembly *a,
                                                                     int32_t pi, uint32_t frag_size,
                                                                     uint32_t first_seq,
                                                                     uint32_t frag_total)
{
    struct rdps_rx_partial *p = &a->partials[pi];
    if (p->frag_size == 0 && p->anchor_offset != 0) /* an anchor laid out */
        a->streams[p->stream].anchors--;
    p->frag_size = frag_size;
    p->first_seq = first_seq;
    p->frag_total = frag_total;
    uint64_t *bits = rdps__rx_arena_bits(a, pi);
    if (frag_total <= 64)
        bits[0] = 0; /* most messages: no call for one word */
    else
        memset(bits, 0, ((size_t)frag_total + 63) / 64 * sizeof(uint64_t));
    return map_partial(a, pi);
}

static inline bool bit_test_and_set(uint64_t *bits, uint32_t index)
{
    uint64_t mask = 1ull << (index % 64);
    bool was = (bits[index / 64] & mask) != 0;
    bits[index / 64] |= mask;
    return was;
}

#define FOUND_CONFLICT  (-2)
#define FOUND_DUPLICATE (-3)
#define FOUND_FULL      (-4) /* a layout that needs the long list, which is full */

/* Fragment v against laid-out partial pi whose span contains it: pi, CONFLICT or DUPLICATE. */
static int32_t laid_out_match(struct rdps_rx_assembly *a, int32_t pi,
                              const struct rdps_frame_view *v)
{
    const struct rdps_frame_header *h = &v->hdr;
    const struct rdps_rx_partial *p = &a->partials[pi];
    bool is_final = (h->flags & RDPS_FRAME_F_END) != 0;
    uint32_t index = h->seq - p->first_seq;
    /* The decoder made the END fragment end at msg_len, so this pins every byte. */
    bool fits = h->msg_len == p->msg_len && (uint64_t)index * p->frag_size == h->frag_offset &&
                is_final == (index == p->frag_total - 1) &&
                (is_final || v->payload_len == p->frag_size);
    if (!fits)
        return FOUND_CONFLICT;
    return bit_test_and_set(rdps__rx_arena_bits(a, pi), index) ? FOUND_DUPLICATE : pi;
}

/* Non-final fragment v against anchor pi (only its END known): if v fixes a consistent layout,
 * lays it out and returns pi; else RDPS_RX_NONE (or FOUND_FULL). */
static int32_t anchor_match(struct rdps_rx_assembly *a, int32_t pi, const struct rdps_frame_view *v)
{
    const struct rdps_frame_header *h = &v->hdr;
    const struct rdps_rx_partial *p = &a->partials[pi];
    if (h->msg_len != p->msg_len || h->frag_offset >= p->anchor_offset)
        return RDPS_RX_NONE;
    uint32_t size = v->payload_len;
    if (h->frag_offset % size != 0 || p->anchor_offset % size != 0 ||
        p->msg_len - p->anchor_offset > size ||
        p->anchor_seq - h->seq != (p->anchor_offset - h->frag_offset) / size ||
        p->anchor_offset / size >= a->max_frags)
        return RDPS_RX_NONE;
    uint32_t total = p->anchor_offset / size + 1;
    if (!partial_set_layout(a, pi, size, h->seq - h->frag_offset / size, total))
        return FOUND_FULL;
    bit_test_and_set(rdps__rx_arena_bits(a, pi), total - 1);
    bit_test_and_set(rdps__rx_arena_bits(a, pi), h->frag_offset / size);
    return pi;
}

/*
 * The partial of stream si that fragment v belongs to, RDPS_RX_NONE if none, FOUND_CONFLICT if v
 * contradicts the partial whose sequence span contains it, FOUND_DUPLICATE if that fragment is
 * there already. Two O(1) lookups: the partial holding v's sequence, and the anchor where v's
 * message would end.
 */
static int32_t partial_find(struct rdps_rx_assembly *a, int32_t si, const struct rdps_frame_view *v)
{
    const struct rdps_frame_header *h = &v->hdr;
    if (a->streams[si].partials == 0)
        return RDPS_RX_NONE; /* the common first fragment of a message */
    int32_t pi = rdps__rx_asm_partial_at(a, si, h->seq);
    if (pi != RDPS_RX_NONE && a->partials[pi].frag_size != 0)
        return laid_out_match(a, pi, v);
    if ((h->flags & RDPS_FRAME_F_END) || a->streams[si].anchors == 0 ||
        h->frag_offset >= h->msg_len || h->frag_offset % v->payload_len != 0)
        return RDPS_RX_NONE; /* an END that is no anchor's is new; a non-final one reassembles */
    uint32_t size = v->payload_len;
    uint32_t end_seq = h->seq + ((h->msg_len - 1) / size - h->frag_offset / size);
    pi = rdps__rx_asm_partial_at(a, si, end_seq);
    if (pi == RDPS_RX_NONE || a->partials[pi].frag_size != 0)
        return RDPS_RX_NONE;
    return anchor_match(a, pi, v);
}

/* ---- placing, parking, delivering ------------------------------------------------------------ */

int rdps__rx_asm_deliver_records(struct rdps_rx_assembly *a, struct rdps_reasm_msg_info *info,
                                 const uint8_t *payload, uint32_t payload_len, uint32_t count)
{
    a->c->msgs_delivered += count;
    a->c->bytes_delivered += payload_len - RDPS_BATCH_LEN_BYTES * count;
    if (a->cfg.deliver_batch != NULL) {
        a->cfg.deliver_batch(a->cfg.user, payload, payload_len, count, info);
        return (int)count;
    }
    struct rdps_batch_iter it;
    rdps__batch_iter_init(&it, payload);
    for (uint32_t i = 0; i < count; i++) {
        uint32_t len;
        const uint8_t *msg = rdps__batch_next(&it, &len);
        info->msg_len = len;
        a->cfg.deliver(a->cfg.user, msg, len, info);
        info->ordinal++;
    }
    return (int)count;
}

int rdps__rx_asm_deliver(struct rdps_rx_assembly *a, int32_t pi)
{
    struct rdps_rx_partial *p = &a->partials[pi];
    const struct rdps_rx_asm_stream *s = &a->streams[p->stream];
    struct rdps_reasm_msg_info info = {
        .source = s->id.source,
        .session_id = s->id.session_id,
        .topic_id = s->id.topic_id,
        .first_seq = p->first_seq,
        .ordinal = p->ordinal,
        .msg_len = p->msg_len,
        .frag_count = p->frags_received,
        .timestamp_ns = p->timestamp_ns,
        .retransmit = p->retransmit,
        .reliable = p->reliable,
    };
    const int32_t *map = rdps__rx_arena_chunk_map(a, pi);
    const uint8_t *msg;
    if (p->chunk_span == 0) {
        msg = a->arena; /* an empty message parked by a reliable stream */
    } else if (p->chunk_span == 1) {
        msg = a->arena + ((size_t)map[0] << a->chunk_shift);
    } else {
        /* Every chunk is present: each byte of the message was written by one of its fragments. */
        size_t done = 0;
        for (uint32_t c = 0; c < p->chunk_span; c++) {
            size_t piece =
                p->msg_len - done < a->cfg.chunk_bytes ? p->msg_len - done : a->cfg.chunk_bytes;
            memcpy(a->bounce + done, a->arena + ((size_t)map[c] << a->chunk_shift), piece);
            done += piece;
        }
        msg = a->bounce;
    }
    uint32_t count = p->count;
    /* Release first (state is consistent during the callback); a freed chunk keeps its bytes
     * until the next frame, which the callbacks cannot cause. */
    rdps__rx_asm_release(a, pi);
    if (count >= 2)
        return rdps__rx_asm_deliver_records(a, &info, msg, info.msg_len, count);
    a->c->msgs_delivered++;
    a->c->bytes_delivered += info.msg_len;
    a->cfg.deliver(a->cfg.user, msg, info.msg_len, &info);
    return 1;
}

enum rdps_rx_placed rdps__rx_asm_fragment(struct rdps_rx_assembly *a, int32_t si,
                                          const struct rdps_frame_view *v, uint64_t now_ns,
                                          int32_t *pi_out)
{
    const struct rdps_frame_header *h = &v->hdr;
    /* An empty END fragment after offset 0 has no place in the fixed-size layout. */
    if (v->payload_len == 0)
        goto conflict;
    int32_t pi = partial_find(a, si, v);
    if (pi == FOUND_CONFLICT)
        goto conflict;
    if (pi == FOUND_DUPLICATE) {
        a->c->duplicates++;
        return RDPS_RX_DUPLICATE;
    }
    if (pi == FOUND_FULL)
        goto too_long;
    if (pi == RDPS_RX_NONE) {
        bool is_final = (h->flags & RDPS_FRAME_F_END) != 0;
        uint32_t total = 0;
        if (!is_final) {
            if (h->frag_offset % v->payload_len != 0)
                goto conflict;
            total = (uint32_t)(((uint64_t)h->msg_len + v->payload_len - 1) / v->payload_len);
            if (total > a->max_frags) {
                a->c->reasm_too_many_frags++;
                return RDPS_RX_REFUSED;
            }
        }
        pi = rdps__rx_arena_create(a, si, h->msg_len, now_ns);
        if (pi == RDPS_RX_NONE)
            return RDPS_RX_REFUSED;
        struct rdps_rx_partial *p = &a->partials[pi];
        p->ordinal = h->ordinal; /* every fragment carries its message's */
        p->count = 0;
        if (is_final) {
            p->anchor_seq = h->seq;
            p->anchor_offset = h->frag_offset;
            a->streams[si].anchors++;
            map_partial(a, pi);
        } else {
            uint32_t index = h->frag_offset / v->payload_len;
            if (!partial_set_layout(a, pi, v->payload_len, h->seq - index, total)) {
                rdps__rx_asm_release(a, pi);
                goto too_long;
            }
            bit_test_and_set(rdps__rx_arena_bits(a, pi), index);
        }
    }
    if (!rdps__rx_arena_write(a, pi, h->frag_offset, v->payload, v->payload_len)) {
        /* Cannot happen while quotas are consistent; never deliver a message with a hole. */
        a->c->reasm_source_bytes++;
        rdps__rx_arena_evict(a, pi);
        return RDPS_RX_REFUSED;
    }
    struct rdps_rx_partial *p = &a->partials[pi];
    p->frags_received++;
    if (h->flags & RDPS_FRAME_F_BEGIN)
        p->timestamp_ns = h->timestamp_ns;
    p->retransmit |= (h->flags & RDPS_FRAME_F_RETRANSMIT) != 0;
    p->reliable |= (h->flags & RDPS_FRAME_F_RELIABLE) != 0;
    *pi_out = pi;
    if (p->frag_size == 0 || p->frags_received != p->frag_total)
        return RDPS_RX_PLACED;
    if (a->streams[si].reliable) {
        p->complete = true;
        return RDPS_RX_COMPLETE;
    }
    return (enum rdps_rx_placed)rdps__rx_asm_deliver(a, pi);

conflict:
    /* Drop it; the caller gives its sequence back so the real fragment can still come. */
    a->c->reasm_conflicts++;
    return RDPS_RX_CONFLICT;
too_long:
    a->c->reasm_too_large++; /* more long partials than a window can meet: a forgery */
    return RDPS_RX_REFUSED;
}

int32_t rdps__rx_asm_park_single(struct rdps_rx_assembly *a, int32_t si,
                                 const struct rdps_frame_view *v, uint64_t now_ns)
{
    const struct rdps_frame_header *h = &v->hdr;
    int32_t pi = rdps__rx_arena_create(a, si, h->msg_len, now_ns);
    if (pi == RDPS_RX_NONE)
        return RDPS_RX_NONE;
    partial_set_layout(a, pi, h->msg_len ? h->msg_len : 1, h->seq, 1);
    bit_test_and_set(rdps__rx_arena_bits(a, pi), 0);
    if (!rdps__rx_arena_write(a, pi, 0, v->payload, v->payload_len)) {
        a->c->reasm_source_bytes++;
        rdps__rx_asm_release(a, pi);
        return RDPS_RX_NONE;
    }
    struct rdps_rx_partial *p = &a->partials[pi];
    p->frags_received = 1;
    p->ordinal = h->ordinal;
    p->count = h->count;
    p->timestamp_ns = h->timestamp_ns;
    p->retransmit = (h->flags & RDPS_FRAME_F_RETRANSMIT) != 0;
    p->reliable = true;
    p->complete = true;
    return pi;
}
