/* SPDX-License-Identifier: BSD-2-Clause */
/* sim_profile.c - the simulated fabric's stall profile (sim_fabric.h): why a publisher that has a
 * message to append cannot, read from the engines' state at each event. */
#include <stdbool.h>
#include <stddef.h>

#include "rdps_reasm.h"
#include "rdps_rel_pub.h"
#include "rdps_seq.h"
#include "sim_fabric.h"

const char *const sim_wait_names[SIM_WAIT_COUNT] = {
    [SIM_WAIT_SENDING] = "sending",
    [SIM_WAIT_START] = "start",
    [SIM_WAIT_CONNECTING] = "connecting",
    [SIM_WAIT_RING] = "ring",
    [SIM_WAIT_STATUS_UNSENT] = "st_unsent",
    [SIM_WAIT_STATUS_FLIGHT] = "st_flight",
    [SIM_WAIT_STATUS_QUARTER] = "st_quarter",
    [SIM_WAIT_DATA_FLIGHT] = "data_flight",
    [SIM_WAIT_FIRST_NAK] = "first_nak",
    [SIM_WAIT_REPAIR_QUEUED] = "rep_queued",
    [SIM_WAIT_REPAIR_FLIGHT] = "rep_flight",
    [SIM_WAIT_RETRY] = "retry",
    [SIM_WAIT_TAIL] = "tail",
    [SIM_WAIT_OTHER] = "other",
};

/* Is seq waiting in the publisher's repair queue (scheduled, not yet sent)? */
static bool repair_queued(const struct rdps_rel_pub *p, uint32_t seq)
{
    for (uint32_t i = 0; i < p->rq.count; i++) {
        const struct rdps_rel_repair *e = &p->rq.queue[(p->rq.head + i) % p->cfg.max_repairs];
        if (seq - (e->start + e->sent) < e->count - e->sent)
            return true;
    }
    return false;
}

enum sim_wait sim_wait_window(const struct rdps_rel_pub *p, const struct rdps_reasm *r,
                              const struct rdps_source *pub_src, uint32_t session_id,
                              uint32_t known_consumed, uint32_t window, uint32_t need_end,
                              uint64_t now_ns, uint64_t rtt_ns)
{
    int32_t si = rdps__rx_streams_lookup(&r->streams, pub_src, session_id);
    if (si < 0 || !r->streams.streams[si].reliable)
        return SIM_WAIT_DATA_FLIGHT;
    const struct rdps_rx_track *t = &r->streams.streams[si].track;
    const struct rdps_rx_rel *rs = &r->rec.rel[si];
    /* The receiver could take the message, and progressed by a STATUS-worth (a quarter window):
     * the publisher has not heard so yet. */
    bool could = t->consumed != known_consumed && rdps__seq_ge(t->consumed + window, need_end);
    if (could && t->consumed - known_consumed >= window / 4)
        return rs->status_consumed != t->consumed ? SIM_WAIT_STATUS_UNSENT : SIM_WAIT_STATUS_FLIGHT;
    if (t->gaps.count == 0)
        return could ? SIM_WAIT_STATUS_QUARTER : SIM_WAIT_DATA_FLIGHT;
    const struct rdps_gap_range *g = &t->gaps.r[0];
    if (g->tries == 0)
        return SIM_WAIT_FIRST_NAK;
    if (repair_queued(p, g->start))
        return SIM_WAIT_REPAIR_QUEUED;
    if (now_ns - g->nak_ns <= rtt_ns)
        return SIM_WAIT_REPAIR_FLIGHT;
    return SIM_WAIT_RETRY;
}
