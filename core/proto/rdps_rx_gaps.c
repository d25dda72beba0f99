/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rx_gaps.c - unreliable streams' gap reporting after the reorder allowance (model:
 * rdps_rx_gaps.h). */
#include "rdps_rx_gaps.h"

#include <stdlib.h>

#include "rdps_error.h"
#include "rdps_seq.h"

int rdps__rx_gaps_init(struct rdps_rx_gaps *g, const struct rdps_rx_gaps_config *cfg)
{
    g->cfg = *cfg;
    g->head = RDPS_RX_NONE;
    g->links = calloc(cfg->max_streams, sizeof(*g->links));
    if (g->links == NULL)
        return rdps__set_err(RDPS_ENOMEM, "rx_gaps_init: out of memory");
    return 0;
}

void rdps__rx_gaps_fini(struct rdps_rx_gaps *g)
{
    free(g->links);
    g->links = NULL;
}

void rdps__rx_gaps_stream_start(struct rdps_rx_gaps *g, int32_t si, uint32_t ord_floor)
{
    g->links[si].ord_counted = g->links[si].ord_floor = ord_floor;
}

void rdps__rx_gaps_report(struct rdps_rx_gaps *g, int32_t si, const struct rdps_rx_ident *id,
                          uint32_t first, uint32_t count, uint32_t ord_lo, uint32_t ord_hi)
{
    /* Messages an earlier report counted (one spanning both ranges) are not counted again. */
    uint32_t *counted = &g->links[si].ord_counted;
    if (rdps__seq_lt(ord_lo, *counted))
        ord_lo = *counted;
    uint32_t msgs = rdps__seq_gt(ord_hi, ord_lo) ? ord_hi - ord_lo : 0;
    if (rdps__seq_gt(ord_hi, *counted))
        *counted = ord_hi;
    g->cfg.counters->gaps++;
    g->cfg.counters->gap_seqs += count;
    g->cfg.counters->gap_msgs += msgs;
    if (g->cfg.on_gap != NULL) {
        struct rdps_reasm_gap gap = {
            .source = &id->source,
            .session_id = id->session_id,
            .topic_id = id->topic_id,
            .first_seq = first,
            .count = count,
            .msg_first = ord_lo,
            .msg_count = msgs,
        };
        g->cfg.on_gap(g->cfg.user, &gap);
    }
}

static void link_stream(struct rdps_rx_gaps *g, int32_t si, struct rdps_rx_track *t,
                        const struct rdps_rx_ident *id)
{
    struct rdps_rx_gaps_link *l = &g->links[si];
    l->track = t;
    l->id = id;
    if (!l->linked) {
        l->linked = true;
        l->prev = RDPS_RX_NONE;
        l->next = g->head;
        if (g->head != RDPS_RX_NONE)
            g->links[g->head].prev = si;
        g->head = si;
    }
}

static void unlink_stream(struct rdps_rx_gaps *g, int32_t si)
{
    struct rdps_rx_gaps_link *l = &g->links[si];
    if (!l->linked)
        return;
    if (l->prev != RDPS_RX_NONE)
        g->links[l->prev].next = l->next;
    else
        g->head = l->next;
    if (l->next != RDPS_RX_NONE)
        g->links[l->next].prev = l->prev;
    l->linked = false;
}

/* Reports the stream's oldest pending range. */
static void report_front(struct rdps_rx_gaps *g, int32_t si, struct rdps_rx_track *t,
                         const struct rdps_rx_ident *id)
{
    const struct rdps_gap_range *r = &t->gaps.r[0];
    rdps__rx_gaps_report(g, si, id, r->start, r->count, r->ord_lo, r->ord_hi);
    rdps__ranges_remove(&t->gaps, 0);
    if (t->gaps.count == 0)
        unlink_stream(g, si);
}

void rdps__rx_gaps_flush(struct rdps_rx_gaps *g, int32_t si, struct rdps_rx_track *t,
                         const struct rdps_rx_ident *id)
{
    while (t->gaps.count > 0)
        report_front(g, si, t, id);
    unlink_stream(g, si);
}

void rdps__rx_gaps_note(struct rdps_rx_gaps *g, int32_t si, struct rdps_rx_track *t,
                        const struct rdps_rx_ident *id, uint32_t first, uint32_t count,
                        uint32_t ord_lo, uint32_t ord_hi, uint64_t now_ns)
{
    if (g->cfg.allowance_ns == 0) {
        rdps__rx_gaps_report(g, si, id, first, count, ord_lo, ord_hi);
        return;
    }
    uint64_t due = now_ns + g->cfg.allowance_ns;
    int i;
    while ((i = rdps__ranges_append(&t->gaps, first, count, now_ns, due)) < 0) {
        g->cfg.counters->gap_ranges_full++;
        report_front(g, si, t, id);
    }
    /* A new range holds [ord_lo, ord_hi); one extended (it ended where this begins) reaches on. */
    if (t->gaps.r[i].start == first)
        t->gaps.r[i].ord_lo = ord_lo;
    t->gaps.r[i].ord_hi = ord_hi;
    link_stream(g, si, t, id);
}

void rdps__rx_gaps_reopen(struct rdps_rx_gaps *g, int32_t si, struct rdps_rx_track *t,
                          const struct rdps_rx_ident *id, uint32_t seq, uint32_t ord,
                          uint64_t now_ns)
{
    if (rdps__seq_ge(seq, t->next) || rdps__seq_lt(seq, t->loss_floor) ||
        (t->gaps.count > 0 && rdps__ranges_find(&t->gaps, seq) >= 0))
        return; /* not behind the window's front, or missing already */
    if (g->cfg.allowance_ns == 0 || t->gaps.count == t->gaps.cap) {
        rdps__rx_gaps_report(g, si, id, seq, 1, ord, ord); /* at once: the list has no room */
        return;
    }
    rdps__ranges_insert(&t->gaps, seq, 1, now_ns, now_ns + g->cfg.allowance_ns); /* has room */
    int i = rdps__ranges_find(&t->gaps, seq);
    if (t->gaps.r[i].start == seq && t->gaps.r[i].count == 1) /* alone: its own (empty) span */
        t->gaps.r[i].ord_lo = t->gaps.r[i].ord_hi = ord;
    link_stream(g, si, t, id);
}

/* After seq left the range at index i: the part before it ends at its ordinal, the part after
 * it starts after it. */
static void bound_at(struct rdps_ranges *l, int i, uint32_t seq, uint32_t ord_before,
                     uint32_t ord_after)
{
    for (int k = i > 0 ? i - 1 : 0; k < l->count && k <= i + 1; k++) {
        if (rdps__range_end(&l->r[k]) == seq)
            l->r[k].ord_hi = ord_before;
        else if (l->r[k].start == seq + 1)
            l->r[k].ord_lo = ord_after;
    }
}

/* seq, before the stream's start, arrived: the stream starts at it, what lies between it and the
 * former start missing (see The stream's start). False when a report counted messages already. */
static bool start_earlier(struct rdps_rx_gaps *g, int32_t si, struct rdps_rx_track *t,
                          const struct rdps_rx_ident *id, uint32_t seq, uint32_t ord_before,
                          uint32_t ord_after, uint64_t now_ns)
{
    struct rdps_rx_gaps_link *l = &g->links[si];
    if (l->ord_counted != l->ord_floor)
        return false;
    uint32_t first = seq + 1, count = t->loss_floor - first;
    uint32_t ord_hi = l->ord_floor;
    t->loss_floor = seq;
    l->ord_counted = l->ord_floor = ord_before;
    if (count == 0)
        return true;
    if (g->cfg.allowance_ns == 0 || t->gaps.count == t->gaps.cap) {
        rdps__rx_gaps_report(g, si, id, first, count, ord_after, ord_hi); /* first in order */
        return true;
    }
    /* Nothing missing lies before the former start: a range of its own at the front. */
    rdps__ranges_insert(&t->gaps, first, count, now_ns, now_ns + g->cfg.allowance_ns);
    t->gaps.r[0].ord_lo = ord_after;
    t->gaps.r[0].ord_hi = ord_hi;
    link_stream(g, si, t, id);
    return true;
}

bool rdps__rx_gaps_fill(struct rdps_rx_gaps *g, int32_t si, struct rdps_rx_track *t,
                        const struct rdps_rx_ident *id, uint32_t seq, uint32_t ord_before,
                        uint32_t ord_after, uint64_t now_ns)
{
    int i = t->gaps.count > 0 ? rdps__ranges_find(&t->gaps, seq) : -1;
    if (i < 0) {
        if (rdps__seq_lt(seq, t->loss_floor) &&
            start_earlier(g, si, t, id, seq, ord_before, ord_after, now_ns))
            return true;
        g->cfg.counters->late_after_gap++;
        return false;
    }
    while (rdps__ranges_remove_seq(&t->gaps, i, seq) < 0) {
        /* No slot to split: the oldest range is reported early (it may be this one). */
        g->cfg.counters->gap_ranges_full++;
        report_front(g, si, t, id);
        i = rdps__ranges_find(&t->gaps, seq);
        if (i < 0) {
            g->cfg.counters->late_after_gap++;
            return false;
        }
    }
    bound_at(&t->gaps, i, seq, ord_before, ord_after);
    if (t->gaps.count == 0)
        unlink_stream(g, si);
    return true;
}

void rdps__rx_gaps_leaving(struct rdps_rx_gaps *g, int32_t si, struct rdps_rx_track *t,
                           const struct rdps_rx_ident *id, uint32_t below)
{
    /* Whole: a report knows the ordinals at its ends, not at a cut. */
    while (t->gaps.count > 0 && rdps__seq_lt(t->gaps.r[0].start, below))
        report_front(g, si, t, id);
}

uint64_t rdps__rx_gaps_expire(struct rdps_rx_gaps *g, uint64_t now_ns, uint64_t next)
{
    for (int32_t si = g->head, after; si != RDPS_RX_NONE; si = after) {
        struct rdps_rx_gaps_link *l = &g->links[si];
        struct rdps_rx_track *t = l->track;
        after = l->next;
        while (t->gaps.count > 0 && t->gaps.r[0].due_ns <= now_ns)
            report_front(g, si, t, l->id);
        if (t->gaps.count > 0 && t->gaps.r[0].due_ns < next)
            next = t->gaps.r[0].due_ns;
    }
    return next;
}
