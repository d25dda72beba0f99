/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rel_loss.c - reliable streams' loss events: what was given up and the messages it held,
 * from the ordinals around it (model: rdps_rel_recv.h, "Messages"). */
#include "rdps_rel_loss.h"

#include "rdps_seq.h"

static inline struct rdps_rx_stream *stream_of(struct rdps_reasm *r, int32_t si)
{
    return &r->streams.streams[si];
}

/* The ordinal of the message at `seq` of stream si, where this receiver knows it: a datagram
 * held there (its first message's, or the message it is a fragment of), the publisher's trail,
 * or the next message of its latest heartbeat. */
static bool ordinal_at(struct rdps_reasm *r, int32_t si, uint32_t seq, uint32_t *ord)
{
    const struct rdps_rx_track *t = &stream_of(r, si)->track;
    const struct rdps_rx_rel *rs = &r->rec.rel[si];
    if (rdps__seq_ge(seq, t->consumed) && rdps__seq_lt(seq, t->next) && rdps__track_test(t, seq)) {
        int32_t pi = rdps__rx_asm_partial_at(&r->assembly, si, seq);
        if (pi != RDPS_RX_NONE) {
            *ord = rdps__rx_asm_partial(&r->assembly, pi)->ordinal;
            return true;
        }
    }
    if (rs->have_trail && seq == rs->trail) {
        *ord = rs->trail_ordinal;
        return true;
    }
    if (rs->has_hb_ord && seq == rs->hb_ord_seq) {
        *ord = rs->hb_ordinal;
        return true;
    }
    return false;
}

/* Where the messages of a loss that ends before `seq` end: the ordinal at seq, past the message
 * held there when that message began in the loss (its first datagrams are part of it). */
static bool end_ordinal_at(struct rdps_reasm *r, int32_t si, uint32_t seq, uint32_t *ord)
{
    const struct rdps_rx_track *t = &stream_of(r, si)->track;
    if (rdps__seq_ge(seq, t->consumed) && rdps__seq_lt(seq, t->next) && rdps__track_test(t, seq)) {
        int32_t pi = rdps__rx_asm_partial_at(&r->assembly, si, seq);
        if (pi != RDPS_RX_NONE) {
            const struct rdps_rx_partial *p = rdps__rx_asm_partial(&r->assembly, pi);
            /* An anchor (only its END known) began earlier when the END is not its start. */
            bool began_before = p->frag_size != 0 ? p->first_seq != seq : p->anchor_offset != 0;
            *ord = p->ordinal + (began_before ? 1u : 0u);
            return true;
        }
    }
    return ordinal_at(r, si, seq, ord);
}

static void raise_loss(struct rdps_reasm *r, int32_t si, uint32_t first, uint32_t count,
                       rdps_loss_reason reason, uint32_t msg_first, uint32_t msg_count)
{
    struct rdps_rx_rel *rs = &r->rec.rel[si];
    RDPS_REL_COUNT(&r->rec, rs, lost[reason], count);
    RDPS_REL_COUNT(&r->rec, rs, lost_msgs, msg_count);
    RDPS_REL_COUNT(&r->rec, rs, loss_events, 1);
    if (r->cfg.rel.on_loss != NULL) {
        const struct rdps_rx_ident *id = &stream_of(r, si)->id;
        struct rdps_reasm_loss loss = {
            .source = &id->source,
            .session_id = id->session_id,
            .topic_id = id->topic_id,
            .first_seq = first,
            .count = count,
            .reason = reason,
            .msg_first = msg_first,
            .msg_count = msg_count,
        };
        r->cfg.rel.on_loss(r->cfg.user, &loss);
    }
}

/* Messages before `ord` are delivered or lost: the waiting loss (if any) ends there. */
void rdps__rel_messages_reach(struct rdps_reasm *r, int32_t si, uint32_t ord)
{
    struct rdps_rx_stream *s = stream_of(r, si);
    struct rdps_rx_rel *rs = &r->rec.rel[si];
    if (rs->loss_pending) {
        uint32_t lo = rs->ord_known ? s->ord_next : ord;
        uint32_t n = rdps__seq_gt(ord, lo) ? ord - lo : 0;
        rs->loss_pending = false;
        raise_loss(r, si, rs->pend_first, rs->pend_count, (rdps_loss_reason)rs->pend_reason, lo, n);
    }
    if (!rs->ord_known || rdps__seq_gt(ord, s->ord_next))
        s->ord_next = ord;
    rs->ord_known = true;
}

/* The waiting loss's end, if this receiver now knows it (the consumed point's ordinal). */
void rdps__rel_loss_try_end(struct rdps_reasm *r, int32_t si)
{
    uint32_t ord;
    if (r->rec.rel[si].loss_pending && ordinal_at(r, si, stream_of(r, si)->track.consumed, &ord))
        rdps__rel_messages_reach(r, si, ord);
}

void rdps__rel_emit_loss(struct rdps_reasm *r, int32_t si, uint32_t first, uint32_t count,
                         rdps_loss_reason reason, const struct rdps_rel_loss_msgs *m)
{
    struct rdps_rx_rel *rs = &r->rec.rel[si];
    if (count == 0)
        return;
    uint32_t end = 0;
    bool has_end = m->has_end || end_ordinal_at(r, si, first + count, &end);
    if (m->has_end)
        end = m->end;
    if (reason == RDPS__LOSS_NONE) { /* before the join: never part of this receiver's stream */
        RDPS_REL_COUNT(&r->rec, rs, join_skipped, count);
        if (has_end && !rs->loss_pending) {
            stream_of(r, si)->ord_next = end;
            rs->ord_known = true;
        }
        return;
    }
    if (rs->loss_pending && m->has_start)
        rdps__rel_messages_reach(r, si, m->start); /* the waiting loss ends where this one starts */
    if (rs->loss_pending) {
        /* No boundary known between them: one loss, under the first one's reason. */
        rs->pend_count = first + count - rs->pend_first;
    } else {
        if (m->has_start && !rs->ord_known) {
            stream_of(r, si)->ord_next = m->start;
            rs->ord_known = true;
        }
        rs->loss_pending = true;
        rs->pend_first = first;
        rs->pend_count = count;
        rs->pend_reason = (uint8_t)reason;
    }
    if (has_end)
        rdps__rel_messages_reach(r, si, end);
}
