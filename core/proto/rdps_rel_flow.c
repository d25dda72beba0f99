/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rel_flow.c - the reliable publisher's flow control: recomputed from the receivers table,
 * connecting holds, stall clock and evictions (model: rdps_rel_flow.h). */
#include "rdps_rel_flow.h"

#include <rdps/rdps.h>

/* Refusals by a connecting hold further apart than this: the application was not trying
 * meanwhile, and the time between counts as held only up to it. */
#define REL_HOLD_GAP_NS 10000000ull

void rdps__rel_flow_init(struct rdps_rel_flowctl *fc, const struct rdps_rel_pub_config *cfg,
                         struct rdps_rel_pub_counters *c, struct rdps_rel_receivers *rxt,
                         const struct rdps_pub_ring *ring)
{
    fc->cfg = cfg;
    fc->c = c;
    fc->rxt = rxt;
    fc->ring = ring;
    fc->hb_min = cfg->heartbeat_min_ns;
    fc->linger_ns = cfg->repair_linger_ns;
    fc->limit_slot = -1;
}

static inline uint64_t clamp_u64(uint64_t v, uint64_t lo, uint64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

void rdps__rel_flow_recompute(struct rdps_rel_flowctl *fc)
{
    const struct rdps_rel_pub_config *cfg = fc->cfg;
    bool max = cfg->flow == RDPS_REL_FLOW_MAX;
    bool tagged = cfg->flow == RDPS_REL_FLOW_TAGGED;
    uint32_t connecting = 0, protect_was = fc->protect;
    bool protected_was = fc->protecting;
    uint64_t rtt = 0;
    fc->limited = fc->protecting = fc->lag_any = false;
    fc->limit_slot = -1;
    fc->tagged = fc->members = 0;
    fc->rtt_max = 0;
    for (uint32_t i = 0; i < cfg->max_receivers; i++) {
        const struct rdps_rel_receiver *r = &fc->rxt->rx[i];
        if (r->state == RDPS_REL_RX_KNOWN && r->expected && (!tagged || r->tag == cfg->flow_tag))
            connecting++;
        if (r->state != RDPS_REL_RX_ACTIVE)
            continue;
        fc->members++;
        if (r->srtt_ns > fc->rtt_max)
            fc->rtt_max = r->srtt_ns;
        if (r->srtt_ns != 0 && (rtt == 0 || r->srtt_ns < rtt))
            rtt = r->srtt_ns;
        if (!fc->lag_any || rdps__seq_lt(r->consumed_seq, fc->lag_min))
            fc->lag_min = r->consumed_seq;
        fc->lag_any = true;
        if (tagged) {
            if (r->tag != cfg->flow_tag)
                continue;
            fc->tagged++;
        }
        uint32_t lim = r->consumed_seq + r->window;
        if (!fc->limited || (max ? rdps__seq_gt(lim, fc->limit) : rdps__seq_lt(lim, fc->limit))) {
            fc->limit = lim;
            fc->limit_consumed = r->consumed_seq;
            fc->limit_slot = (int32_t)i;
        }
        if (!fc->protecting || (max ? rdps__seq_gt(r->consumed_seq, fc->protect)
                                    : rdps__seq_lt(r->consumed_seq, fc->protect)))
            fc->protect = r->consumed_seq;
        fc->limited = fc->protecting = true;
    }
    /* Heartbeats and a lone receiver's linger follow the fastest receiver in flow control: a
     * receiver cannot act on a tail loss sooner than its round trip, and a NAK sent before the
     * repair reached its asker arrives within an RTT of the repair (a quarter more for jitter;
     * later it is a retry). Nobody else's echo moves them. */
    if (rtt != 0) {
        fc->linger_ns = clamp_u64(rtt + rtt / 4, cfg->repair_linger_min_ns, cfg->repair_linger_ns);
        fc->hb_min = clamp_u64(rtt / 2, cfg->heartbeat_min_ns, cfg->heartbeat_max_ns);
    } else {
        fc->linger_ns = cfg->repair_linger_ns;
        fc->hb_min = cfg->heartbeat_min_ns;
    }
    /* The window opened: an application that stopped trying lets heartbeats back off again. */
    if (!fc->limited || rdps__seq_lt(fc->ring->head_seq, fc->limit))
        fc->window_blocked = false;
    /* The position the ring keeps moved: the ring holds appends again only once it refuses one
     * (an application that stopped sending does not leave repairs past the budget). */
    if (fc->protecting != protected_was || fc->protect != protect_was)
        fc->ring_blocked = false;
    /* Under max a receiver still connecting holds nothing once another one is ACTIVE. */
    fc->connecting = max && fc->lag_any ? 0 : connecting;
    if (fc->connecting == 0)
        fc->hold_last_ns = 0; /* a hold episode ended: the next one counts from its first refusal */
    fc->rxt->changed = false;
}

bool rdps__rel_flow_connect_hold(struct rdps_rel_flowctl *fc, uint64_t now_ns)
{
    if (now_ns > fc->hold_at_ns) {
        uint64_t refill = (now_ns - fc->hold_at_ns) / RDPS_REL_HOLD_REFILL;
        fc->hold_level_ns = fc->hold_level_ns > refill ? fc->hold_level_ns - refill : 0;
        fc->hold_at_ns = now_ns;
    }
    if (fc->hold_level_ns >= fc->cfg->connect_hold_max_ns) {
        fc->c->connect_holds_refused++;
        return false;
    }
    /* The publisher has been held since the previous refusal of this episode. */
    if (fc->hold_last_ns != 0 && now_ns > fc->hold_last_ns)
        fc->hold_level_ns += now_ns - fc->hold_last_ns < REL_HOLD_GAP_NS ? now_ns - fc->hold_last_ns
                                                                         : REL_HOLD_GAP_NS;
    fc->hold_last_ns = now_ns ? now_ns : 1;
    return true;
}

void rdps__rel_flow_evict_lagging(struct rdps_rel_flowctl *fc)
{
    const struct rdps_rel_receivers *t = fc->rxt;
    for (uint32_t i = 0; i < fc->cfg->max_receivers; i++)
        if (t->rx[i].state == RDPS_REL_RX_ACTIVE &&
            rdps__seq_lt(t->rx[i].consumed_seq, fc->ring->trail_seq))
            rdps__rel_rxt_evict(fc->rxt, (int32_t)i, RDPS_EVICT_LAGGED);
    rdps__rel_flow_recompute(fc);
}

uint64_t rdps__rel_flow_stall_check(struct rdps_rel_flowctl *fc, uint64_t now_ns)
{
    if (fc->blocked_since == 0 || fc->cfg->stall_evict_ns == 0)
        return UINT64_MAX;
    uint64_t deadline = fc->blocked_since + fc->cfg->stall_evict_ns;
    if (now_ns < deadline)
        return deadline;
    rdps__rel_flow_fresh(fc);
    uint32_t mark = fc->blocked_by_window ? fc->limit : fc->protect;
    fc->blocked_since = 0;
    if (!fc->limited || mark != fc->blocked_mark)
        return UINT64_MAX; /* the position moved since the refusal: not a stall */
    for (uint32_t i = 0; i < fc->cfg->max_receivers; i++) {
        const struct rdps_rel_receiver *r = &fc->rxt->rx[i];
        if (r->state != RDPS_REL_RX_ACTIVE ||
            (fc->cfg->flow == RDPS_REL_FLOW_TAGGED && r->tag != fc->cfg->flow_tag))
            continue;
        uint32_t v = fc->blocked_by_window ? r->consumed_seq + r->window : r->consumed_seq;
        if (v == mark) {
            rdps__rel_rxt_evict(fc->rxt, (int32_t)i, RDPS_EVICT_STALLED);
            rdps__rel_rxt_strike(fc->rxt, r->host, now_ns);
        }
    }
    return UINT64_MAX;
}
