/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rel_window.c - the receive window a reliable stream offers its publisher (computed by
 * rdps__rel_status_window in rdps_reasm_internal.h), its growth, and the STATUS
 * that carries it (model: rdps_rel_recv.h). */
#include "rdps_reasm_internal.h"

/*
 * Learns the span of the message at the consumed point from one of its non-final fragments
 * (all of a message's non-final fragments carry the same payload): its first sequence and
 * fragment count follow from the offset and the message length. A larger window is offered
 * at once, since the publisher may be waiting for it.
 */
void rdps__rel_learn_head(struct rdps_reasm *r, int32_t si, const struct rdps_frame_view *v)
{
    struct rdps_rel_stream *rs = &r->rel[si];
    const struct rdps_frame_header *h = &v->hdr;
    if ((h->flags & RDPS_FRAME_F_END) || v->payload_len == 0 ||
        (rs->has_head && rs->head_seq == rs->consumed))
        return;
    uint32_t index = h->frag_offset / v->payload_len;
    if (h->frag_offset % v->payload_len != 0 || h->seq - index != rs->consumed)
        return;
    uint64_t span = ((uint64_t)h->msg_len + v->payload_len - 1) / v->payload_len;
    if (span <= index || span > RDPS_REASM_WINDOW - 1)
        return; /* inconsistent, or beyond any window: the reassembler refuses it */
    uint32_t before = rdps__rel_status_window(r, si);
    rs->head_seq = rs->consumed;
    rs->head_span = (uint32_t)span;
    rs->has_head = true;
    if (rdps__rel_status_window(r, si) > before) {
        rs->status_now = true;
        rdps__rel_note_due(r, r->now_ns);
    }
}

/*
 * A STATUS is due at the next poll once the window's edge moved a quarter of the credits since
 * the last one (frames received: the credits count from the newest, parked or not), or the
 * consumed point moved a quarter of the window (the publisher's ring and flow control follow it).
 */
void rdps__rel_status_progress(struct rdps_reasm *r, struct rdps_rel_stream *rs)
{
    int32_t si = (int32_t)(rs - r->rel);
    /* A heartbeat said more was sent than the window let us track: track the next part now
     * rather than at the next heartbeat, which a blocked publisher sends ever more rarely (a
     * receiver back from a stall caught up one window per heartbeat in the simulated fabric). */
    if (rs->has_hb_next && !rs->extend && rdps__seq_gt(rs->hb_next, r->streams[si].next_seq) &&
        !(rs->extend_tried && rs->extend_consumed == rs->consumed &&
          rs->extend_next == r->streams[si].next_seq)) {
        rs->extend = true;
        rdps__rel_note_due(r, r->now_ns);
    }
    if (rs->status_now)
        return;
    /* Checked whether or not the consumed point moved: under loss it moves a little at each
     * repair, and a publisher that had sent up to the edge then waited for the STATUS interval
     * (test_status_when_edge_moves_while_consumed_creeps). */
    uint32_t next_seq = r->streams[si].next_seq;
    uint32_t credit_quarter = rdps__rel_credit_cap(r) / 4;
    if (rdps__seq_gt(next_seq, rs->status_next) &&
        next_seq - rs->status_next >= (credit_quarter ? credit_quarter : 1)) {
        rs->status_now = true;
        rdps__rel_note_due(r, r->now_ns);
        return;
    }
    uint32_t progress = rs->consumed - rs->status_consumed;
    /* Below a quarter of the window's floor no STATUS is due: the exact window is not needed. */
    uint32_t floor_quarter = rdps__rel_window_floor(r, si) / 4;
    if (progress == 0 || progress < floor_quarter)
        return;
    uint32_t quarter = rdps__rel_status_window(r, si) / 4;
    if (progress >= (quarter ? quarter : 1)) {
        rs->status_now = true;
        rdps__rel_note_due(r, r->now_ns);
    }
}

void rdps__rel_send_status(struct rdps_reasm *r, int32_t si, uint64_t now_ns, uint64_t wall_ns)
{
    struct rdps_reasm_stream *s = &r->streams[si];
    struct rdps_rel_stream *rs = &r->rel[si];
    /* Nothing heard from the publisher since the last STATUS: the next one waits twice as long
     * (a silent publisher, or none: a stream forged from one datagram reported for ever). */
    if (s->last_active_ns >= rs->status_ns)
        rs->status_backoff = 0;
    else if (rs->status_backoff < RDPS_REL_STATUS_BACKOFF_MAX)
        rs->status_backoff++;
    uint32_t window = rdps__rel_status_window(r, si);
    uint32_t echo = RDPS_FRAME_NO_ECHO;
    uint64_t ts = wall_ns;
    if (rs->hb_echo) {
        uint64_t held_us = (now_ns - rs->hb_rx_ns) / 1000;
        echo = held_us < RDPS_FRAME_NO_ECHO ? (uint32_t)held_us : RDPS_FRAME_NO_ECHO - 1;
        ts = rs->hb_ts_ns;
        rs->hb_echo = false;
    }
    uint8_t frame[RDPS_FRAME_STATUS_LEN];
    int len =
        rdps__frame_encode_status_echo(frame, sizeof(frame), s->session_id, s->topic_id,
                                       r->cfg.rel.receiver_id, rs->consumed, window, echo, ts);
    if (len < 0)
        return;
    rs->status_ns = now_ns;
    rs->status_consumed = rs->consumed;
    rs->status_next = s->next_seq;
    rs->status_now = false;
    RDPS_REL_COUNT(r, rs, status_sent, 1);
    r->cfg.rel.send(r->cfg.user, &s->source, s->session_id, frame, (size_t)len);
}
