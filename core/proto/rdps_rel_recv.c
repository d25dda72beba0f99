/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rel_recv.c - the receiver's path for reliable streams: admission within the window, in-order
 * release, streaming of long messages, late join, loss events (model: rdps_rel_recv.h). */
#include "rdps_rel_recv.h"

#include "rdps_rel_loss.h"

#include <string.h>

#include "rdps_reasm.h"
#include "rdps_seq.h"

static inline struct rdps_rx_stream *stream_of(struct rdps_reasm *r, int32_t si)
{
    return &r->streams.streams[si];
}

static inline uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* ---- the window ---------------------------------------------------------------------------- */

/* The free part of the stream's parking share (partial slots and chunks, the fewer): its host's
 * quotas per stream less what it holds, its streaming message not counted. */
static uint32_t free_share(const struct rdps_reasm *r, int32_t si)
{
    uint32_t park, chunks, held_partials, held_chunks;
    rdps__rx_streams_share(&r->streams, si, &park, &chunks);
    rdps__rx_asm_parked(&r->assembly, si, &held_partials, &held_chunks);
    park = park > held_partials ? park - held_partials : 0;
    chunks = chunks > held_chunks ? chunks - held_chunks : 0;
    return park < chunks ? park : chunks;
}

/* The window stream si offers now (rdps__track_window). */
static uint32_t window_of(struct rdps_reasm *r, int32_t si)
{
    const struct rdps_rx_track *t = &stream_of(r, si)->track;
    return rdps__track_window(t, rdps__rx_rec_credits(&r->rec), free_share(r, si),
                              rdps__rx_rec_head_need(&r->rec.rel[si], t->consumed));
}

/* Whether `distance` sequences past the consumed point lie within the window offered: the floor
 * settles most frames without counting the received stretch. */
static bool within_window(struct rdps_reasm *r, int32_t si, uint32_t distance)
{
    if (distance < rdps__track_window_floor(rdps__rx_rec_credits(&r->rec), free_share(r, si)))
        return true;
    return distance < window_of(r, si);
}

/* ---- tracking ------------------------------------------------------------------------------ */

/* Moves next up to `upto` (<= consumed + WINDOW): the sequences between are missing. */
static void rel_advance(struct rdps_reasm *r, int32_t si, uint32_t upto, uint64_t now_ns)
{
    struct rdps_rx_track *t = &stream_of(r, si)->track;
    uint32_t first = t->next;
    /* Their slots held sequences before the consumed point: released or given up. */
    for (uint32_t q = first; q != upto; q++)
        rdps__track_clear(t, q);
    t->next = upto;
    rdps__rx_rec_gap_add(&r->rec, si, t, first, upto - first, now_ns);
}

/*
 * Tracks the stream up to `upto`, clipped to what this receiver can park past its consumed
 * point: the sequences in between are missing (NAKed when due). Nothing beyond is tracked, so
 * repairs never evict parked messages.
 */
static void rel_track(struct rdps_reasm *r, int32_t si, uint32_t upto, uint64_t now_ns)
{
    struct rdps_rx_track *t = &stream_of(r, si)->track;
    if (!rdps__seq_gt(upto, t->next) || t->next - t->consumed >= RDPS_SEQ_WINDOW - 1)
        return;
    uint32_t limit = t->consumed + window_of(r, si);
    if (rdps__seq_gt(upto, limit))
        upto = limit;
    if (rdps__seq_gt(upto, t->next))
        rel_advance(r, si, upto, now_ns);
}

/* ---- loss and release ---------------------------------------------------------------------- */

/*
 * Gives up [consumed, upto): marks it received (nothing more is admitted), forgets its ranges and
 * the partials wholly inside, raises one loss event for [from, upto) (from: the consumed point, or
 * the first sequence of a streaming message given up), and moves the consumed point. Past next the
 * window restarts at upto.
 */
static void skip_to(struct rdps_reasm *r, int32_t si, uint32_t from, uint32_t upto,
                    rdps_loss_reason reason, const struct rdps_rel_loss_msgs *m)
{
    struct rdps_rx_track *t = &stream_of(r, si)->track;
    struct rdps_rx_rel *rs = &r->rec.rel[si];
    if (rdps__seq_gt(upto, t->next)) {
        rdps__rx_asm_stream_drop(&r->assembly, si, true);
        rdps__track_restart(t, upto);
    } else {
        for (uint32_t q = t->consumed; q != upto; q++)
            rdps__track_set(t, q);
        rdps__ranges_trim_below(&t->gaps, upto);
        rdps__rx_asm_release_before(&r->assembly, si, upto);
        t->consumed = upto;
    }
    if (reason != RDPS__LOSS_NONE)
        rs->progressed = true;
    rdps__rel_emit_loss(r, si, from, upto - from, reason, m);
}

/* One message (a partial of ordinal `ord`) is what [from, upto) loses. */
static void skip_message(struct rdps_reasm *r, int32_t si, uint32_t from, uint32_t upto,
                         rdps_loss_reason reason, uint32_t ord)
{
    struct rdps_rel_loss_msgs m = {
        .has_start = true, .has_end = true, .start = ord, .end = ord + 1};
    skip_to(r, si, from, upto, reason, &m);
}

/* Gives up [consumed, upto) as skip_to does; a streaming message the consumed point is in goes
 * whole (the loss reaches back to its first sequence, and on to its end). */
static void give_up(struct rdps_reasm *r, int32_t si, uint32_t upto, rdps_loss_reason reason)
{
    uint32_t from = stream_of(r, si)->track.consumed;
    struct rdps_rel_loss_msgs m = {0};
    int32_t pin = r->assembly.streams[si].pinned;
    if (pin != RDPS_RX_NONE) {
        const struct rdps_rx_partial *p = rdps__rx_asm_partial(&r->assembly, pin);
        uint32_t end = p->first_seq + p->frag_total;
        from = p->first_seq;
        m.has_start = true;
        m.start = p->ordinal;
        if (rdps__seq_le(upto, end)) { /* the loss is that message and nothing more */
            upto = end;
            m.has_end = true;
            m.end = p->ordinal + 1;
        }
        rdps__rx_asm_release(&r->assembly, pin);
    }
    skip_to(r, si, from, upto, reason, &m);
}

/* The first missing range if it lies within partial p's span. */
static const struct rdps_gap_range *partial_hole(const struct rdps_rx_track *t,
                                                 const struct rdps_rx_partial *p)
{
    if (t->gaps.count == 0)
        return NULL;
    const struct rdps_gap_range *g = &t->gaps.r[0];
    return g->start - p->first_seq < p->frag_total ? g : NULL;
}

/* Delivers complete partial pi at the consumed point. */
static int release_complete(struct rdps_reasm *r, int32_t si, int32_t pi)
{
    const struct rdps_rx_partial *p = rdps__rx_asm_partial(&r->assembly, pi);
    struct rdps_rx_rel *rs = &r->rec.rel[si];
    uint32_t msgs = p->count > 1 ? p->count : 1;
    stream_of(r, si)->track.consumed = p->first_seq + p->frag_total;
    rdps__rel_messages_reach(r, si, p->ordinal);
    stream_of(r, si)->ord_next = p->ordinal + msgs;
    rs->progressed = true;
    RDPS_REL_COUNT(&r->rec, rs, delivered, msgs);
    return rdps__rx_asm_deliver(&r->assembly, pi);
}

/*
 * Delivers, in sequence order, every message at the consumed point, streams a long message's
 * fragments into it, and gives up what can no longer come. Returns the messages delivered.
 */
static int rel_release(struct rdps_reasm *r, int32_t si)
{
    struct rdps_rx_track *t = &stream_of(r, si)->track;
    struct rdps_rx_rel *rs = &r->rec.rel[si];
    struct rdps_rx_assembly *a = &r->assembly;
    int delivered = 0;
    while (!rs->joining) {
        uint32_t c = t->consumed;
        if (c == t->next) {
            if (rs->have_trail && rdps__seq_lt(c, rs->trail))
                give_up(r, si, rs->trail, RDPS_LOSS_BELOW_RING);
            rdps__rel_loss_try_end(r, si);
            break;
        }
        if (!rdps__track_test(t, c)) {
            rdps__ranges_trim_below(&t->gaps, c); /* a merged range may reach below c */
            if (t->gaps.count == 0 || t->gaps.r[0].start != c) {
                /* Every missing sequence has a range; restore one rather than stall. */
                rdps__rx_rec_gap_add(&r->rec, si, t, c, 1, r->now_ns);
                continue;
            }
            const struct rdps_gap_range *g = &t->gaps.r[0];
            rdps_loss_reason why = rdps__rx_rec_verdict(rs, g);
            if (why == RDPS__LOSS_NONE)
                break;
            uint32_t end = rdps__range_end(g);
            if (why == RDPS_LOSS_BELOW_RING && rdps__seq_lt(rs->trail, end))
                end = rs->trail;
            give_up(r, si, end, why);
            continue;
        }
        int32_t pi = rdps__rx_asm_partial_at(a, si, c);
        if (pi == RDPS_RX_NONE) { /* admitted, but no message could hold it */
            struct rdps_rel_loss_msgs unknown = {0};
            skip_to(r, si, c, c + 1, RDPS_LOSS_TOO_LARGE, &unknown);
            continue;
        }
        const struct rdps_rx_partial *p = rdps__rx_asm_partial(a, pi);
        if (p->pinned) {
            if (p->complete) {
                delivered += release_complete(r, si, pi);
                continue;
            }
            /* Streaming: the point moves over the fragments that arrived, in order. */
            uint32_t end = p->first_seq + p->frag_total;
            while (c != end && c != t->next && rdps__track_test(t, c))
                c++;
            t->consumed = c;
            if (c == end) { /* every sequence came, yet not every fragment: one was forged */
                uint32_t first = p->first_seq;
                struct rdps_rel_loss_msgs m = {
                    .has_start = true, .has_end = true, .start = p->ordinal, .end = p->ordinal + 1};
                rdps__rx_asm_release(a, pi);
                rdps__rel_emit_loss(r, si, first, end - first, RDPS_LOSS_PARTIAL_MESSAGE, &m);
            }
            continue; /* at a hole, or at next */
        }
        if (p->frag_size == 0 || p->first_seq != c) {
            /* Its first fragments are behind the consumed point: given up, or (nothing
             * delivered or given up yet) sent before this receiver joined. */
            uint32_t end = p->frag_size != 0 ? p->first_seq + p->frag_total : c + 1;
            uint32_t ord = p->ordinal;
            rdps__rx_asm_release(a, pi);
            skip_message(r, si, c, end,
                         rs->progressed ? RDPS_LOSS_PARTIAL_MESSAGE : RDPS__LOSS_NONE, ord);
            continue;
        }
        if (p->complete) {
            delivered += release_complete(r, si, pi);
            continue;
        }
        if (p->frag_total >= RDPS_SEQ_WINDOW) {
            /* It can never be held whole within the window: it streams through it. */
            rdps__rx_asm_pin(a, pi);
            rs->progressed = true;
            RDPS_REL_COUNT(&r->rec, rs, streamed, 1);
            continue;
        }
        const struct rdps_gap_range *hole = partial_hole(t, p);
        rdps_loss_reason why = hole != NULL ? rdps__rx_rec_verdict(rs, hole) : RDPS__LOSS_NONE;
        if (why == RDPS__LOSS_NONE)
            break;
        uint32_t end = c + p->frag_total;
        uint32_t ord = p->ordinal;
        rdps__rx_asm_release(a, pi);
        skip_message(r, si, c, end, why, ord);
    }
    rdps__rx_rec_progress(&r->rec, si, t);
    return delivered;
}

/* ---- streams ------------------------------------------------------------------------------- */

void rdps__rel_stream_start(struct rdps_reasm *r, int32_t si, const struct rdps_frame_header *h,
                            uint64_t now_ns)
{
    struct rdps_rx_stream *s = stream_of(r, si);
    struct rdps_rx_rel *rs = &r->rec.rel[si];
    rdps__rx_rec_stream_start(&r->rec, si, &s->id, h->seq, s->from_oldest, now_ns);
    /* The next message is the first frame's, unless it continues one begun before (dropped as
     * sent before the join: its end tells the next then). A heartbeat names it. */
    s->ord_next = h->ordinal;
    rs->ord_known = h->type == RDPS_FRAME_HEARTBEAT || (h->flags & RDPS_FRAME_F_BEGIN);
}

void rdps__rel_stream_stop(struct rdps_reasm *r, int32_t si)
{
    struct rdps_rx_stream *s = stream_of(r, si);
    struct rdps_rx_track *t = &s->track;
    struct rdps_rx_rel *rs = &r->rec.rel[si];
    /* What was given up or dropped ends with the newest datagram seen (the messages known). */
    struct rdps_rel_loss_msgs m = {.has_end = rs->has_ord_seen, .end = rs->ord_seen};
    if (!rs->joining && rdps__seq_lt(t->consumed, t->next)) {
        uint32_t from = t->consumed;
        int32_t pin = r->assembly.streams[si].pinned;
        if (pin != RDPS_RX_NONE) {
            from = rdps__rx_asm_partial(&r->assembly, pin)->first_seq;
            m.has_start = true;
            m.start = rdps__rx_asm_partial(&r->assembly, pin)->ordinal;
        }
        rdps__rel_emit_loss(r, si, from, t->next - from, RDPS_LOSS_SESSION_DROPPED, &m);
    }
    if (rs->loss_pending)
        rdps__rel_messages_reach(r, si, rs->has_ord_seen ? rs->ord_seen : s->ord_next);
    t->gaps.count = 0;
    rdps__rx_par_stream_stop(&r->par, si);
    rdps__rx_rec_stream_stop(&r->rec, si);
    s->reliable = false;
}

/* Seq of stream si was admitted, then refused: ask for it again. */
static void unreceive(struct rdps_reasm *r, int32_t si, uint32_t seq)
{
    struct rdps_rx_track *t = &stream_of(r, si)->track;
    rdps__track_clear(t, seq);
    if (rdps__seq_ge(seq, t->consumed))
        rdps__rx_rec_gap_add(&r->rec, si, t, seq, 1, r->now_ns);
}

void rdps__rel_partial_evicted(void *user, int32_t si, int32_t pi)
{
    struct rdps_reasm *r = user;
    const struct rdps_rx_partial *p = rdps__rx_asm_partial(&r->assembly, pi);
    struct rdps_rx_track *t = &stream_of(r, si)->track;
    struct rdps_rx_rel *rs = &r->rec.rel[si];
    RDPS_REL_COUNT(&r->rec, rs, park_evicted, 1);
    if (p->frag_size == 0) {
        if (rdps__seq_ge(p->anchor_seq, t->consumed)) {
            rdps__track_clear(t, p->anchor_seq);
            rdps__rx_rec_gap_add(&r->rec, si, t, p->anchor_seq, 1, r->now_ns);
        }
        return;
    }
    /* Only sequences in [consumed, next) can have arrived: each run of them is missing again. */
    uint32_t from = rdps__seq_gt(t->consumed, p->first_seq) ? t->consumed - p->first_seq : 0;
    uint32_t to = rdps__seq_lt(t->next, p->first_seq + p->frag_total) ? t->next - p->first_seq
                                                                      : p->frag_total;
    uint32_t run = 0;
    for (uint32_t i = from; i <= to; i++) {
        if (i < to && rdps__rx_asm_frag_received(&r->assembly, pi, i)) {
            rdps__track_clear(t, p->first_seq + i);
            run++;
            continue;
        }
        if (run > 0)
            rdps__rx_rec_gap_add(&r->rec, si, t, p->first_seq + i - run, run, r->now_ns);
        run = 0;
    }
}

/* ---- frames -------------------------------------------------------------------------------- */

/* The ordinal after the newest datagram seen, within the window or beyond it (serial maximum:
 * a datagram beyond the window may be newer than the next ones within it). */
static inline void note_ord_seen(struct rdps_rx_rel *rs, const struct rdps_frame_header *h)
{
    uint32_t after = rdps__frame_ordinal_after(h);
    if (!rs->has_ord_seen || rdps__seq_gt(after, rs->ord_seen)) {
        rs->ord_seen = after;
        rs->has_ord_seen = true;
    }
}

int rdps__rel_on_data_frame(struct rdps_reasm *r, int32_t si, const struct rdps_frame_view *v,
                            uint64_t now_ns)
{
    struct rdps_rx_track *t = &stream_of(r, si)->track;
    struct rdps_rx_rel *rs = &r->rec.rel[si];
    const struct rdps_frame_header *h = &v->hdr;
    uint32_t seq = h->seq;
    rdps__rx_rec_heard(&r->rec, rs);
    if (rdps__seq_lt(seq, t->consumed)) {
        r->counters.duplicates++;
        RDPS_REL_COUNT(&r->rec, rs, duplicates, 1);
        return 0;
    }
    /* The span of the message at the consumed point (from one of its non-final fragments): a
     * larger window is offered at once, since the publisher may be waiting for it. */
    if (!(h->flags & RDPS_FRAME_F_END) && rdps__rx_rec_head_need(rs, t->consumed) == 0 &&
        v->payload_len != 0 && h->seq - h->frag_offset / v->payload_len == t->consumed) {
        uint32_t before = window_of(r, si);
        if (rdps__rx_rec_learn_head(rs, t->consumed, v) && window_of(r, si) > before)
            rdps__rx_rec_status_now(&r->rec, rs);
    }
    if (!within_window(r, si, seq - t->consumed)) {
        /* Nothing slides over an unreleased sequence: beyond the advertised window, drop and
         * ask later. */
        RDPS_REL_COUNT(&r->rec, rs, beyond_window, 1);
        rel_track(r, si, seq, now_ns);
        /* The publisher sent up to it: tracked as the window slides, like a heartbeat's. */
        if (!rs->has_hb_next || rdps__seq_gt(seq + 1, rs->hb_next)) {
            rs->hb_next = seq + 1;
            rs->has_hb_next = true;
        }
        note_ord_seen(rs, h); /* its messages were sent too: a loss ending the stream counts them */
        return 0;
    }
    bool repair = (h->flags & RDPS_FRAME_F_RETRANSMIT) != 0;
    if (rdps__seq_ge(seq, t->next)) {
        if (seq != t->next)
            rel_advance(r, si, seq, now_ns);
        rdps__track_set(t, seq);
        t->next = seq + 1;
        note_ord_seen(rs, h);
    } else {
        if (rdps__track_test(t, seq)) {
            r->counters.duplicates++;
            RDPS_REL_COUNT(&r->rec, rs, duplicates, 1);
            return 0;
        }
        rdps__track_set(t, seq);
        rdps__rx_rec_gap_filled(&r->rec, si, t, seq, repair, r->par_feeding, now_ns);
    }
    if (rs->parity && !r->par_feeding) {
        int32_t bi = rdps__rx_par_keep(&r->par, si, t, v);
        if (bi != RDPS_RX_NONE)
            r->par_pending = bi; /* decoded once this frame is processed */
    }
    if ((h->flags & (RDPS_FRAME_F_BEGIN | RDPS_FRAME_F_END)) !=
        (RDPS_FRAME_F_BEGIN | RDPS_FRAME_F_END)) {
        int32_t pi = RDPS_RX_NONE;
        switch (rdps__rx_asm_fragment(&r->assembly, si, v, now_ns, &pi)) {
        case RDPS_RX_CONFLICT: /* a forged frame must not use up the sequence of the real one */
            unreceive(r, si, seq);
            return 0;
        case RDPS_RX_COMPLETE:
            if (rs->joining || rdps__rx_asm_partial(&r->assembly, pi)->first_seq != t->consumed)
                RDPS_REL_COUNT(&r->rec, rs, parked, 1);
            return rel_release(r, si);
        case RDPS_RX_PLACED: /* at the consumed point: a long message may stream on */
            return seq == t->consumed ? rel_release(r, si) : 0;
        default: /* duplicate or refused (counted; a refused sequence is lost as TOO_LARGE) */
            return 0;
        }
    }
    if (!rs->joining && seq == t->consumed) {
        t->consumed = seq + 1;
        rdps__rel_messages_reach(r, si, h->ordinal);
        stream_of(r, si)->ord_next = h->ordinal + h->count;
        rs->progressed = true;
        RDPS_REL_COUNT(&r->rec, rs, delivered, h->count);
        int n = rdps__rx_asm_deliver_single(&r->assembly, &stream_of(r, si)->single, v);
        return n + rel_release(r, si);
    }
    if (rdps__rx_asm_park_single(&r->assembly, si, v, now_ns) != RDPS_RX_NONE)
        RDPS_REL_COUNT(&r->rec, rs, parked, 1);
    return rel_release(r, si);
}

/* A from_oldest stream learns where the publisher's ring starts: it starts there. */
static void join_at(struct rdps_reasm *r, int32_t si, uint32_t start, uint64_t now_ns)
{
    struct rdps_rx_track *t = &stream_of(r, si)->track;
    struct rdps_rx_rel *rs = &r->rec.rel[si];
    if (!rdps__seq_lt(start, t->consumed))
        return;
    if (rdps__seq_gt(start, t->next - RDPS_SEQ_WINDOW)) {
        /* Within a window of what arrived (never a whole one: consumed and next would share a
         * bit): kept, the sequences before it missing. */
        for (uint32_t q = start; q != t->consumed; q++)
            rdps__track_clear(t, q);
        rdps__rx_rec_gap_add(&r->rec, si, t, start, t->consumed - start, now_ns);
        t->consumed = start;
    } else {
        /* Further back: the window restarts at the trail; what arrived is asked for again when
         * the window comes to it. */
        rdps__rx_asm_stream_drop(&r->assembly, si, false);
        memset(t->received, 0, sizeof(t->received));
        t->gaps.count = 0;
        t->next = t->consumed = t->loss_floor = start;
    }
    rs->status_consumed = rs->status_next = start;
    stream_of(r, si)->ord_next = rs->trail_ordinal; /* the caller set it with the trail */
    rs->ord_known = true;
    RDPS_REL_COUNT(&r->rec, rs, late_joins, 1);
}

int rdps__rel_on_heartbeat(struct rdps_reasm *r, int32_t si, const struct rdps_frame_view *v,
                           uint64_t now_ns)
{
    const struct rdps_frame_header *h = &v->hdr;
    struct rdps_rx_track *t = &stream_of(r, si)->track;
    struct rdps_rx_rel *rs = &r->rec.rel[si];
    if ((h->flags & RDPS_FRAME_F_PARITY) && rdps__rx_par_enabled(&r->par)) {
        rdps__rx_par_set_k(&r->par, si, v->parity_k);
        rs->parity = rdps__rx_par_k(&r->par, si) != 0;
        if (rs->parity) /* every frame takes the full path (kept for its block): no prediction */
            stream_of(r, si)->predict_w0 = 0;
        /* The group as the publisher counts it, and its largest RTT until this receiver has a
         * sample of its own: several receivers spread their first NAKs over it. */
        rs->hb_receivers = v->hb_receivers < 65536 ? v->hb_receivers : 65536;
        if (v->hb_max_rtt_us != 0)
            rs->hb_rtt_ns = (uint64_t)v->hb_max_rtt_us * 1000u;
        if (rs->c.rtt_samples == 0 && rs->hb_rtt_ns != 0)
            rs->srtt_ns = rs->hb_rtt_ns;
    }
    RDPS_REL_COUNT(&r->rec, rs, heartbeats, 1);
    rdps__rx_rec_heard(&r->rec, rs);
    uint32_t next = h->seq;
    bool has_trail = (h->flags & RDPS_FRAME_F_RELIABLE) != 0;
    uint32_t trail = next - h->msg_len;
    if (!rs->has_hb_ord || rdps__seq_ge(next, rs->hb_ord_seq)) {
        rs->hb_ord_seq = next;
        rs->hb_ordinal = h->ordinal;
        rs->has_hb_ord = true;
    }
    rs->hb_ts_ns = h->timestamp_ns;
    rs->hb_rx_ns = now_ns;
    rs->hb_echo = true;
    if (!rs->has_hb_next || rdps__seq_gt(next, rs->hb_next)) {
        rs->hb_next = next;
        rs->has_hb_next = true;
    }
    /* The trail only moves forward (heartbeats may be reordered). */
    bool trail_moved = has_trail && (!rs->have_trail || rdps__seq_gt(trail, rs->trail)) &&
                       rdps__seq_le(trail, next);
    if (rs->joining) {
        /* from_oldest: start at the trail, however far back the ring reaches. */
        rs->joining = false;
        if (has_trail) {
            rs->trail_ordinal = v->trail_ordinal;
            join_at(r, si, trail, now_ns);
        }
    }
    if (trail_moved) {
        rs->trail = trail;
        rs->trail_ordinal = v->trail_ordinal;
        rs->have_trail = true;
    }
    int delivered = 0;
    for (int round = 0; round < 2; round++) {
        /* Tail loss: the publisher sent everything before next. */
        rel_track(r, si, next, now_ns);
        delivered += rel_release(r, si); /* below the trail is given up at once */
    }
    /* A heartbeat means the publisher is idle: it has nothing to send or waits on a window.
     * Report now when everything it sent is held, or when this receiver could take more than
     * it sent: the STATUS that carried the position may have been lost, and a window-blocked
     * publisher only sends heartbeats. */
    if (!rs->status_now &&
        (rdps__seq_le(next, t->consumed) || within_window(r, si, next - t->consumed)))
        rdps__rx_rec_status_now(&r->rec, rs);
    return delivered;
}

/* ---- poll ------------------------------------------------------------------------------------ */

uint64_t rdps__reasm_rel_poll(struct rdps_reasm *r, uint64_t now_ns, uint64_t wall_ns)
{
    struct rdps_rx_recovery *rec = &r->rec;
    if (!r->cfg.rel.enabled)
        return UINT64_MAX;
    r->now_ns = rec->now_ns = now_ns;
    if (now_ns < rec->due_ns)
        return rec->due_ns;
    uint64_t next = UINT64_MAX;
    rec->due_ns = UINT64_MAX; /* what runs below may lower it again */
    for (int32_t si = rec->head; si != RDPS_RX_NONE; si = rec->rel[si].next) {
        struct rdps_rx_rel *rs = &rec->rel[si];
        struct rdps_rx_track *t = &stream_of(r, si)->track;
        if (rs->joining) {
            if (now_ns < rs->join_deadline_ns) {
                next = min_u64(next, rs->join_deadline_ns);
                continue;
            }
            rs->joining = false; /* no heartbeat came: start at the live position */
            rel_release(r, si);
        }
        if (rs->extend) {
            rs->extend = false;
            rel_track(r, si, rs->hb_next, now_ns);
            rs->extend_tried = true;
            rs->extend_consumed = t->consumed;
            rs->extend_next = t->next;
        }
        /* A publisher silent for idle_ns (gone, or never there: a forged stream) hears nothing
         * more from this stream until it is heard again; before that, STATUS backs off. */
        uint64_t heard = stream_of(r, si)->last_active_ns;
        bool idle = rec->cfg.idle_ns != 0 && now_ns - heard >= rec->cfg.idle_ns;
        if (idle && !rs->idle)
            RDPS_REL_COUNT(rec, rs, idle, 1);
        rs->idle = idle;
        bool gave_up = false;
        next = min_u64(next,
                       rdps__rx_rec_poll_naks(rec, si, t, now_ns, wall_ns, heard, idle, &gave_up));
        if (gave_up)
            rel_release(r, si);
        if (idle) {
            rs->silent = true;
            continue;
        }
        next = min_u64(
            next, rdps__rx_rec_poll_status(rec, si, t, window_of(r, si), heard, now_ns, wall_ns));
    }
    if (next < rec->due_ns)
        rec->due_ns = next;
    return rec->due_ns;
}
