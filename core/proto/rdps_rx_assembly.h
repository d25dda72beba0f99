/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rx_assembly.h - fragments into messages: layout, O(1) lookup by sequence, placement, parking
 * and delivery (layer 4 of the receive engine, over its memory, rdps_rx_arena.h; it calls no other
 * layer). */
#ifndef RDPS_PROTO_RX_ASSEMBLY_H
#define RDPS_PROTO_RX_ASSEMBLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rdps_frame.h"
#include "rdps_rx_arena.h"
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
 * The memory, quotas and victims: rdps_rx_arena.h.
 */

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
/* Copies datagram v of whole messages (reliable stream si) into the arena as a complete partial;
 * RDPS_RX_NONE if it cannot be held. */
int32_t rdps__rx_asm_park_single(struct rdps_rx_assembly *a, int32_t si,
                                 const struct rdps_frame_view *v, uint64_t now_ns);
/* Delivers `count` (>= 2) checked records filling payload_len bytes at payload, one message
 * each (or all at once: deliver_batch), with the metadata in *info (first_seq, ordinal of the
 * first, timestamp, flags set by the caller); returns count. */
int rdps__rx_asm_deliver_records(struct rdps_rx_assembly *a, struct rdps_reasm_msg_info *info,
                                 const uint8_t *payload, uint32_t payload_len, uint32_t count);
/* Delivers datagram v of whole messages straight from the receive buffer (zero-copy), with the
 * metadata in *info (the stream's template: its identity filled by the caller); returns the
 * messages delivered (the datagram's count). */
static inline int rdps__rx_asm_deliver_single(struct rdps_rx_assembly *a,
                                              struct rdps_reasm_msg_info *info,
                                              const struct rdps_frame_view *v)
{
    const struct rdps_frame_header *h = &v->hdr;
    info->first_seq = h->seq;
    info->ordinal = h->ordinal;
    info->timestamp_ns = h->timestamp_ns;
    info->retransmit = (h->flags & RDPS_FRAME_F_RETRANSMIT) != 0;
    info->reliable = (h->flags & RDPS_FRAME_F_RELIABLE) != 0;
    if (h->count != 1)
        return rdps__rx_asm_deliver_records(a, info, v->payload, v->payload_len, h->count);
    info->msg_len = h->msg_len;
    a->c->msgs_delivered++;
    a->c->bytes_delivered += h->msg_len;
    a->cfg.deliver(a->cfg.user, v->payload, h->msg_len, info);
    return 1;
}
/* Delivers complete partial pi (a message, or a parked batch of them) and frees it; returns the
 * messages delivered. */
int rdps__rx_asm_deliver(struct rdps_rx_assembly *a, int32_t pi);

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

#endif /* RDPS_PROTO_RX_ASSEMBLY_H */
