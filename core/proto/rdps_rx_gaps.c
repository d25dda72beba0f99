/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rx_gaps.c - unreliable streams' gap reporting after the reorder allowance (model:
 * rdps_rx_gaps.h). */
#include "rdps_rx_gaps.h"

#include <stdlib.h>

#include "rdps_error.h"

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

void rdps__rx_gaps_report(struct rdps_rx_gaps *g, const struct rdps_rx_ident *id, uint32_t first,
                          uint32_t count)
{
    g->cfg.counters->gaps++;
    g->cfg.counters->gap_seqs += count;
    if (g->cfg.on_gap != NULL)
        g->cfg.on_gap(g->cfg.user, &id->source, id->session_id, id->topic_id, first, count);
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

/* Reports the first `count` sequences of the stream's oldest pending range. */
static void report_front(struct rdps_rx_gaps *g, int32_t si, struct rdps_rx_track *t,
                         const struct rdps_rx_ident *id, uint32_t count)
{
    struct rdps_gap_range *r = &t->gaps.r[0];
    rdps__rx_gaps_report(g, id, r->start, count);
    if (count >= r->count)
        rdps__ranges_remove(&t->gaps, 0);
    else
        rdps__ranges_trim_below(&t->gaps, r->start + count);
    if (t->gaps.count == 0)
        unlink_stream(g, si);
}

void rdps__rx_gaps_flush(struct rdps_rx_gaps *g, int32_t si, struct rdps_rx_track *t,
                         const struct rdps_rx_ident *id)
{
    while (t->gaps.count > 0)
        report_front(g, si, t, id, t->gaps.r[0].count);
    unlink_stream(g, si);
}

void rdps__rx_gaps_note(struct rdps_rx_gaps *g, int32_t si, struct rdps_rx_track *t,
                        const struct rdps_rx_ident *id, uint32_t first, uint32_t count,
                        uint64_t now_ns)
{
    if (g->cfg.allowance_ns == 0) {
        rdps__rx_gaps_report(g, id, first, count);
        return;
    }
    uint64_t due = now_ns + g->cfg.allowance_ns;
    while (rdps__ranges_append(&t->gaps, first, count, now_ns, due) < 0) {
        g->cfg.counters->gap_ranges_full++;
        report_front(g, si, t, id, t->gaps.r[0].count);
    }
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

void rdps__rx_gaps_fill(struct rdps_rx_gaps *g, int32_t si, struct rdps_rx_track *t,
                        const struct rdps_rx_ident *id, uint32_t seq)
{
    int i = t->gaps.count > 0 ? rdps__ranges_find(&t->gaps, seq) : -1;
    if (i < 0) {
        if (rdps__seq_ge(seq, t->loss_floor))
            g->cfg.counters->late_after_gap++;
        return;
    }
    while (rdps__ranges_remove_seq(&t->gaps, i, seq) < 0) {
        /* No slot to split: the oldest range is reported early (it may be this one). */
        g->cfg.counters->gap_ranges_full++;
        report_front(g, si, t, id, t->gaps.r[0].count);
        i = rdps__ranges_find(&t->gaps, seq);
        if (i < 0) {
            g->cfg.counters->late_after_gap++;
            return;
        }
    }
    if (t->gaps.count == 0)
        unlink_stream(g, si);
}

void rdps__rx_gaps_leaving(struct rdps_rx_gaps *g, int32_t si, struct rdps_rx_track *t,
                           const struct rdps_rx_ident *id, uint32_t below)
{
    while (t->gaps.count > 0 && rdps__seq_lt(t->gaps.r[0].start, below)) {
        uint32_t off = below - t->gaps.r[0].start;
        report_front(g, si, t, id, off < t->gaps.r[0].count ? off : t->gaps.r[0].count);
    }
}

uint64_t rdps__rx_gaps_expire(struct rdps_rx_gaps *g, uint64_t now_ns, uint64_t next)
{
    for (int32_t si = g->head, after; si != RDPS_RX_NONE; si = after) {
        struct rdps_rx_gaps_link *l = &g->links[si];
        struct rdps_rx_track *t = l->track;
        after = l->next;
        while (t->gaps.count > 0 && t->gaps.r[0].due_ns <= now_ns)
            report_front(g, si, t, l->id, t->gaps.r[0].count);
        if (t->gaps.count > 0 && t->gaps.r[0].due_ns < next)
            next = t->gaps.r[0].due_ns;
    }
    return next;
}
