/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_reasm_gaps.c - unreliable streams' gap list: a missing sequence is reported as a gap only
 * if it has not arrived within the reorder allowance (model: rdps_reasm.h). */
#include "rdps_reasm_internal.h"
#include "rdps_seq.h"

void rdps__reasm_report_gap(struct rdps_reasm *r, const struct rdps_reasm_stream *s, uint32_t first,
                            uint32_t count)
{
    r->counters.gaps++;
    r->counters.gap_seqs += count;
    if (r->cfg.on_gap != NULL)
        r->cfg.on_gap(r->cfg.user, &s->source, s->session_id, s->topic_id, first, count);
}

static void gap_list_unlink(struct rdps_reasm *r, int32_t si)
{
    struct rdps_reasm_stream *s = &r->streams[si];
    if (!s->in_gap_list)
        return;
    if (s->gap_prev != NO_INDEX)
        r->streams[s->gap_prev].gap_next = s->gap_next;
    else
        r->gap_head = s->gap_next;
    if (s->gap_next != NO_INDEX)
        r->streams[s->gap_next].gap_prev = s->gap_prev;
    s->in_gap_list = false;
}

/* Reports the first `count` sequences of the stream's oldest pending range. */
static void gaps_report_front(struct rdps_reasm *r, int32_t si, uint32_t count)
{
    struct rdps_reasm_stream *s = &r->streams[si];
    struct rdps_gap_range *g = &s->gaps.r[0];
    rdps__reasm_report_gap(r, s, g->start, count);
    if (count >= g->count)
        rdps__ranges_remove(&s->gaps, 0);
    else
        rdps__ranges_trim_below(&s->gaps, g->start + count);
    if (s->gaps.count == 0)
        gap_list_unlink(r, si);
}

/* Reports every pending range now (stream reset or removed: they never arrived). */
void rdps__reasm_gaps_flush(struct rdps_reasm *r, int32_t si)
{
    struct rdps_reasm_stream *s = &r->streams[si];
    while (s->gaps.count > 0 && !s->reliable)
        gaps_report_front(r, si, s->gaps.r[0].count);
    gap_list_unlink(r, si);
}

/* [first, first + count) just went missing: report after the reorder allowance. */
void rdps__reasm_gaps_note(struct rdps_reasm *r, int32_t si, uint32_t first, uint32_t count,
                           uint64_t now_ns)
{
    struct rdps_reasm_stream *s = &r->streams[si];
    if (r->cfg.reorder_allowance_ns == 0) {
        rdps__reasm_report_gap(r, s, first, count);
        return;
    }
    uint64_t due = now_ns + r->cfg.reorder_allowance_ns;
    while (rdps__ranges_append(&s->gaps, first, count, now_ns, due) < 0) {
        r->counters.gap_ranges_full++;
        gaps_report_front(r, si, s->gaps.r[0].count);
    }
    if (!s->in_gap_list) {
        s->in_gap_list = true;
        s->gap_prev = NO_INDEX;
        s->gap_next = r->gap_head;
        if (r->gap_head != NO_INDEX)
            r->streams[r->gap_head].gap_prev = si;
        r->gap_head = si;
    }
}

/* A late frame filled seq: it is no gap (or, if already reported, a late one). */
void rdps__reasm_gaps_fill(struct rdps_reasm *r, int32_t si, uint32_t seq)
{
    struct rdps_reasm_stream *s = &r->streams[si];
    int i = s->gaps.count > 0 ? rdps__ranges_find(&s->gaps, seq) : -1;
    if (i < 0) {
        if (rdps__seq_ge(seq, s->loss_floor))
            r->counters.late_after_gap++;
        return;
    }
    while (rdps__ranges_remove_seq(&s->gaps, i, seq) < 0) {
        /* No slot to split: the oldest range is reported early (it may be this one). */
        r->counters.gap_ranges_full++;
        gaps_report_front(r, si, s->gaps.r[0].count);
        i = rdps__ranges_find(&s->gaps, seq);
        if (i < 0) {
            r->counters.late_after_gap++;
            return;
        }
    }
    if (s->gaps.count == 0)
        gap_list_unlink(r, si);
}

/* The window needs the slot of unreceived `leaving`: report its pending range up to it now. */
void rdps__reasm_gaps_leaving(struct rdps_reasm *r, int32_t si, uint32_t leaving)
{
    struct rdps_reasm_stream *s = &r->streams[si];
    if (s->gaps.count == 0 || s->reliable)
        return;
    uint32_t off = leaving - s->gaps.r[0].start;
    if (off < s->gaps.r[0].count)
        gaps_report_front(r, si, off + 1);
}

uint64_t rdps__reasm_gaps_expire(struct rdps_reasm *r, uint64_t now_ns, uint64_t next)
{
    for (int32_t si = r->gap_head, after; si != NO_INDEX; si = after) {
        struct rdps_reasm_stream *s = &r->streams[si];
        after = s->gap_next;
        while (s->gaps.count > 0 && s->gaps.r[0].due_ns <= now_ns)
            gaps_report_front(r, si, s->gaps.r[0].count);
        if (s->gaps.count > 0 && s->gaps.r[0].due_ns < next)
            next = s->gaps.r[0].due_ns;
    }
    return next;
}
