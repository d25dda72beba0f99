/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_reasm_query.c - the receive engine's queries and settings: table sizes, reliable streams'
 * figures, the inputs the caller sets (model: rdps_reasm.h, rdps_rel_recv.h). */
#include "rdps_reasm.h"

#include <string.h>

uint32_t rdps__reasm_stream_count(const struct rdps_reasm *r)
{
    return rdps__rx_streams_count(&r->streams);
}

uint32_t rdps__reasm_source_count(const struct rdps_reasm *r)
{
    return rdps__rx_streams_source_count(&r->streams);
}

uint32_t rdps__reasm_host_count(const struct rdps_reasm *r)
{
    return rdps__rx_streams_host_count(&r->streams);
}

uint32_t rdps__reasm_partial_count(const struct rdps_reasm *r)
{
    return rdps__rx_asm_partial_count(&r->assembly);
}

size_t rdps__reasm_arena_used(const struct rdps_reasm *r)
{
    return rdps__rx_asm_arena_used(&r->assembly);
}

uint64_t rdps__reasm_stream_active_ns(const struct rdps_reasm *r, const struct rdps_source *source,
                                      uint32_t session_id)
{
    int32_t si = rdps__rx_streams_lookup(&r->streams, source, session_id);
    return si != RDPS_RX_NONE ? r->streams.streams[si].last_active_ns : 0;
}

/* ---- reliable streams: inputs and stats (model: rdps_rel_recv.h) ----------------------------- */

void rdps__reasm_rel_set_backlog(struct rdps_reasm *r, bool backlog)
{
    r->rec.backlog = backlog;
}

void rdps__reasm_rel_set_credits(struct rdps_reasm *r, uint32_t credits)
{
    rdps__rx_rec_set_credits(&r->rec, credits);
}

static int32_t rel_lookup(const struct rdps_reasm *r, const struct rdps_source *source,
                          uint32_t session_id)
{
    if (!r->cfg.rel.enabled)
        return RDPS_RX_NONE;
    int32_t si = rdps__rx_streams_lookup(&r->streams, source, session_id);
    return si != RDPS_RX_NONE && r->streams.streams[si].reliable ? si : RDPS_RX_NONE;
}

int rdps__reasm_rel_set_receivers(struct rdps_reasm *r, const struct rdps_source *source,
                                  uint32_t session_id, uint32_t receivers)
{
    int32_t si = rel_lookup(r, source, session_id);
    if (si == RDPS_RX_NONE)
        return RDPS_ENOENT;
    r->rec.rel[si].receivers = receivers ? receivers : 1;
    return 0;
}

static void stream_info(const struct rdps_reasm *r, int32_t si, struct rdps_rel_stream_info *out)
{
    const struct rdps_rx_rel *rs = &r->rec.rel[si];
    const struct rdps_rx_track *t = &r->streams.streams[si].track;
    memset(out, 0, sizeof(*out));
    out->consumed_seq = t->consumed;
    out->next_seq = t->next;
    out->trail_seq = rs->trail;
    out->gap_ranges = t->gaps.count;
    out->receivers = rs->receivers;
    out->srtt_ns = rs->srtt_ns;
    out->have_trail = rs->have_trail;
    out->joining = rs->joining;
    out->counters = rs->c;
}

int rdps__reasm_rel_stream_info(const struct rdps_reasm *r, const struct rdps_source *source,
                                uint32_t session_id, struct rdps_rel_stream_info *out)
{
    int32_t si = rel_lookup(r, source, session_id);
    if (si == RDPS_RX_NONE)
        return RDPS_ENOENT;
    stream_info(r, si, out);
    return 0;
}

unsigned rdps__reasm_rel_streams(const struct rdps_reasm *r, uint64_t topic_id,
                                 rdps_rel_stream_fn fn, void *user)
{
    unsigned n = 0;
    if (!r->cfg.rel.enabled)
        return 0;
    for (int32_t si = r->rec.head; si != RDPS_RX_NONE; si = r->rec.rel[si].next) {
        const struct rdps_rx_ident *id = &r->streams.streams[si].id;
        if (id->topic_id != topic_id)
            continue;
        struct rdps_rel_stream_info info;
        stream_info(r, si, &info);
        fn(user, &id->source, id->session_id, &info);
        n++;
    }
    return n;
}

const struct rdps_rel_recv_counters *rdps__reasm_rel_counters(const struct rdps_reasm *r)
{
    return &r->rec.totals;
}
