/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rel_pub_rx.c - reliable publisher: receiver table, STATUS, flow control, timeouts and
 * evictions (model: rdps_rel_pub.h). */
#include "rdps_rel_pub_internal.h"

#include <stdlib.h>
#include <string.h>

#include <rdps/rdps.h>

#include "rdps_seq.h"

#define MAX_RTT_NS 10000000000ull /* a larger sample is an echo of something else */

int rdps__rel_rx_init(struct rdps_rel_pub *p)
{
    uint32_t n = p->cfg.max_receivers, buckets = 2;
    while (buckets < 2 * n)
        buckets <<= 1;
    p->rx = calloc(n, sizeof(*p->rx));
    p->rx_buckets = malloc((size_t)buckets * sizeof(*p->rx_buckets));
    if (p->rx == NULL || p->rx_buckets == NULL)
        return RDPS_ENOMEM;
    for (uint32_t i = 0; i < buckets; i++)
        p->rx_buckets[i] = -1;
    for (uint32_t i = 0; i < n; i++)
        p->rx[i].hash_next = i + 1 < n ? (int32_t)(i + 1) : -1;
    p->rx_free = 0;
    p->rx_mask = buckets - 1;
    return 0;
}

void rdps__rel_rx_fini(struct rdps_rel_pub *p)
{
    free(p->rx);
    free(p->rx_buckets);
    p->rx = NULL;
    p->rx_buckets = NULL;
}

static uint32_t bucket_of(const struct rdps_rel_pub *p, const struct rdps_source *s, uint32_t id)
{
    return (uint32_t)rdps__source_hash(s, p->cfg.hash_seed ^ (id * 0x9e3779b97f4a7c15ull)) &
           p->rx_mask;
}

int32_t rdps__rel_rx_find(const struct rdps_rel_pub *p, const struct rdps_source *source,
                          uint32_t receiver_id)
{
    for (int32_t i = p->rx_buckets[bucket_of(p, source, receiver_id)]; i >= 0;
         i = p->rx[i].hash_next)
        if (p->rx[i].receiver_id == receiver_id && rdps__source_equal(&p->rx[i].source, source))
            return i;
    return -1;
}

int32_t rdps__rel_rx_get(struct rdps_rel_pub *p, const struct rdps_source *source,
                         uint32_t receiver_id, uint64_t now_ns)
{
    int32_t i = rdps__rel_rx_find(p, source, receiver_id);
    if (i >= 0)
        return i;
    if (p->rx_free < 0) {
        p->counters.receivers_refused++;
        return -1;
    }
    i = p->rx_free;
    struct rdps_rel_receiver *r = &p->rx[i];
    p->rx_free = r->hash_next;
    memset(r, 0, sizeof(*r));
    r->source = *source;
    r->receiver_id = receiver_id;
    r->state = RDPS_REL_RX_KNOWN;
    r->gen = ++p->rx_gen;
    r->last_heard_ns = now_ns;
    r->share_epoch = UINT64_MAX; /* its share is filled at its first repair */
    uint32_t b = bucket_of(p, source, receiver_id);
    r->hash_next = p->rx_buckets[b];
    p->rx_buckets[b] = i;
    p->rx_count++;
    p->counters.receivers_created++;
    if (now_ns + p->cfg.receiver_timeout_ns < p->rx_next_expiry)
        p->rx_next_expiry = now_ns + p->cfg.receiver_timeout_ns;
    return i;
}

static void rx_remove(struct rdps_rel_pub *p, int32_t i)
{
    struct rdps_rel_receiver *r = &p->rx[i];
    for (int32_t *link = &p->rx_buckets[bucket_of(p, &r->source, r->receiver_id)]; *link >= 0;
         link = &p->rx[*link].hash_next) {
        if (*link == i) {
            *link = r->hash_next;
            break;
        }
    }
    if (r->state == RDPS_REL_RX_ACTIVE || r->expected)
        p->fc_dirty = true;
    r->state = RDPS_REL_RX_FREE;
    r->expected = false;
    r->owed = false;
    r->hash_next = p->rx_free;
    p->rx_free = i;
    p->rx_count--;
}

static void emit(struct rdps_rel_pub *p, enum rdps_rel_pub_event_kind kind, int reason,
                 const struct rdps_rel_receiver *r)
{
    if (p->cfg.on_event == NULL)
        return;
    struct rdps_rel_pub_event ev = {
        .kind = kind,
        .reason = reason,
        .source = &r->source,
        .receiver_id = r->receiver_id,
        .consumed_seq = r->consumed_seq,
        .trail_seq = p->ring.trail_seq,
    };
    p->cfg.on_event(p->cfg.user, &ev);
}

static void evict(struct rdps_rel_pub *p, int32_t i, rdps_evict_reason reason)
{
    struct rdps_rel_receiver *r = &p->rx[i];
    if (r->state == RDPS_REL_RX_ACTIVE)
        p->fc_dirty = true;
    if (r->expected)
        p->fc_dirty = true;
    r->state = RDPS_REL_RX_EVICTED;
    r->expected = false;
    p->counters.evictions++;
    emit(p, RDPS_REL_PUB_EV_EVICTED, reason, r);
}

int rdps__rel_pub_on_status(struct rdps_rel_pub *p, const struct rdps_source *source,
                            const struct rdps_rel_status *st, uint64_t now_ns, uint64_t wall_ns)
{
    if (st->session_id != p->cfg.session_id || st->topic_id != p->cfg.topic_id) {
        p->counters.foreign_frames++;
        return 0;
    }
    p->counters.status_received++;
    int32_t i = rdps__rel_rx_get(p, source, st->receiver_id, now_ns);
    if (i < 0)
        return 0;
    struct rdps_rel_receiver *r = &p->rx[i];
    r->last_heard_ns = now_ns;
    if (st->echo_delay_us != RDPS_REL_NO_ECHO) {
        uint64_t held = (uint64_t)st->echo_delay_us * 1000u;
        uint64_t ts = st->echo_timestamp_ns;
        if (wall_ns >= ts && wall_ns - ts >= held && wall_ns - ts - held < MAX_RTT_NS) {
            uint64_t sample = wall_ns - ts - held;
            r->srtt_ns = r->srtt_ns == 0 ? sample : r->srtt_ns - r->srtt_ns / 8 + sample / 8;
            /* A NAK sent before the repair reached its asker arrives within an RTT of the
             * repair (a quarter more for jitter); a later one is a retry. */
            uint64_t linger = r->srtt_ns + r->srtt_ns / 4;
            p->linger_ns = linger < p->cfg.repair_linger_min_ns ? p->cfg.repair_linger_min_ns
                           : linger > p->cfg.repair_linger_ns   ? p->cfg.repair_linger_ns
                                                                : linger;
            uint64_t half = r->srtt_ns / 2;
            p->hb_min = half < p->cfg.heartbeat_min_ns   ? p->cfg.heartbeat_min_ns
                        : half > p->cfg.heartbeat_max_ns ? p->cfg.heartbeat_max_ns
                                                         : half;
            p->counters.rtt_samples++;
            p->counters.rtt_last_ns = sample;
        } else {
            p->counters.rtt_bogus++;
        }
    }
    uint32_t consumed = st->consumed_seq;
    if (rdps__seq_gt(consumed, p->post_seq)) {
        p->counters.status_bogus++;
        return 0;
    }
    if (rdps__seq_lt(consumed, p->ring.trail_seq)) {
        /* Behind what the ring holds: out of flow control until it jumps to the live position. */
        if (r->state != RDPS_REL_RX_EVICTED) {
            r->consumed_seq = consumed;
            evict(p, i, RDPS_EVICT_LAGGED);
        }
        return 0;
    }
    if (r->state == RDPS_REL_RX_ACTIVE && rdps__seq_lt(consumed, r->consumed_seq)) {
        p->counters.status_stale++;
        return 0;
    }
    if (r->state == RDPS_REL_RX_EVICTED) {
        r->state = RDPS_REL_RX_ACTIVE;
        r->consumed_seq = consumed;
        p->counters.resumes++;
        emit(p, RDPS_REL_PUB_EV_RESUMED, 0, r);
    }
    r->state = RDPS_REL_RX_ACTIVE;
    r->expected = false;
    r->consumed_seq = consumed;
    r->window = st->window > (1u << 30) ? (1u << 30) : st->window;
    p->fc_dirty = true;
    return 0;
}

int rdps__rel_pub_receiver_tag(struct rdps_rel_pub *p, const struct rdps_source *source,
                               uint32_t receiver_id, uint32_t tag, uint64_t now_ns)
{
    int32_t i = rdps__rel_rx_get(p, source, receiver_id, now_ns);
    if (i < 0)
        return RDPS_ENOSPC;
    if (p->rx[i].tag != tag && p->rx[i].state == RDPS_REL_RX_ACTIVE)
        p->fc_dirty = true;
    p->rx[i].tag = tag;
    return 0;
}

void rdps__rel_fc_recompute(struct rdps_rel_pub *p)
{
    bool max = p->cfg.flow == RDPS_REL_FLOW_MAX;
    bool tagged = p->cfg.flow == RDPS_REL_FLOW_TAGGED;
    uint32_t connecting = 0, protect_was = p->fc_protect;
    bool protected_was = p->fc_protected;
    p->fc_limited = p->fc_protected = p->lag_any = false;
    p->fc_tagged = 0;
    for (uint32_t i = 0; i < p->cfg.max_receivers; i++) {
        const struct rdps_rel_receiver *r = &p->rx[i];
        if (r->state == RDPS_REL_RX_KNOWN && r->expected && (!tagged || r->tag == p->cfg.flow_tag))
            connecting++;
        if (r->state != RDPS_REL_RX_ACTIVE)
            continue;
        if (!p->lag_any || rdps__seq_lt(r->consumed_seq, p->lag_min))
            p->lag_min = r->consumed_seq;
        p->lag_any = true;
        if (tagged) {
            if (r->tag != p->cfg.flow_tag)
                continue;
            p->fc_tagged++;
        }
        uint32_t lim = r->consumed_seq + r->window;
        if (!p->fc_limited ||
            (max ? rdps__seq_gt(lim, p->fc_limit) : rdps__seq_lt(lim, p->fc_limit))) {
            p->fc_limit = lim;
            p->fc_limit_consumed = r->consumed_seq;
        }
        if (!p->fc_protected || (max ? rdps__seq_gt(r->consumed_seq, p->fc_protect)
                                     : rdps__seq_lt(r->consumed_seq, p->fc_protect)))
            p->fc_protect = r->consumed_seq;
        p->fc_limited = p->fc_protected = true;
    }
    /* The window opened: an application that stopped trying lets heartbeats back off again. */
    if (!p->fc_limited || rdps__seq_lt(p->ring.head_seq, p->fc_limit))
        p->window_blocked = false;
    /* The position the ring keeps moved: the ring holds appends again only once it refuses one
     * (an application that stopped sending does not leave repairs past the budget). */
    if (p->fc_protected != protected_was || p->fc_protect != protect_was)
        p->ring_blocked = false;
    /* Under max a receiver still connecting holds nothing once another one is ACTIVE. */
    p->fc_connecting = max && p->lag_any ? 0 : connecting;
    p->fc_dirty = false;
}

int rdps__rel_pub_expect_receiver(struct rdps_rel_pub *p, const struct rdps_source *source,
                                  uint32_t receiver_id, uint32_t tag, uint64_t now_ns)
{
    int32_t i = rdps__rel_rx_get(p, source, receiver_id, now_ns);
    if (i < 0)
        return RDPS_ENOSPC;
    struct rdps_rel_receiver *r = &p->rx[i];
    if (r->tag != tag)
        p->fc_dirty = true;
    r->tag = tag;
    if (r->state != RDPS_REL_RX_KNOWN || r->expected || p->cfg.connect_timeout_ns == 0)
        return 0;
    r->expected = true;
    r->expect_until = now_ns + p->cfg.connect_timeout_ns;
    if (r->expect_until < p->rx_next_expiry)
        p->rx_next_expiry = r->expect_until;
    p->counters.receivers_expected++;
    p->fc_dirty = true;
    /* Tell it the session now rather than after the idle heartbeat's backoff. */
    p->hb_interval = p->hb_min;
    p->hb_next = now_ns;
    return 0;
}

int rdps__rel_pub_receiver_gone(struct rdps_rel_pub *p, const struct rdps_source *source,
                                uint32_t receiver_id, bool expired)
{
    int32_t i = rdps__rel_rx_find(p, source, receiver_id);
    if (i < 0)
        return RDPS_ENOENT;
    struct rdps_rel_receiver *r = &p->rx[i];
    if (r->expected)
        p->fc_dirty = true;
    if (expired && r->state != RDPS_REL_RX_KNOWN)
        emit(p, RDPS_REL_PUB_EV_TIMED_OUT, 0, r);
    p->counters.receivers_gone++;
    rx_remove(p, i);
    return 0;
}

void rdps__rel_evict_lagging(struct rdps_rel_pub *p)
{
    for (uint32_t i = 0; i < p->cfg.max_receivers; i++)
        if (p->rx[i].state == RDPS_REL_RX_ACTIVE &&
            rdps__seq_lt(p->rx[i].consumed_seq, p->ring.trail_seq))
            evict(p, (int32_t)i, RDPS_EVICT_LAGGED);
    rdps__rel_fc_recompute(p);
}

uint64_t rdps__rel_rx_expire(struct rdps_rel_pub *p, uint64_t now_ns)
{
    if (now_ns < p->rx_next_expiry)
        return p->rx_next_expiry;
    uint64_t next = UINT64_MAX;
    for (uint32_t i = 0; i < p->cfg.max_receivers; i++) {
        struct rdps_rel_receiver *r = &p->rx[i];
        if (r->state == RDPS_REL_RX_FREE)
            continue;
        if (r->expected && r->state == RDPS_REL_RX_KNOWN) {
            if (r->expect_until <= now_ns) {
                r->expected = false; /* it never reported: stop holding data for it */
                p->counters.connect_timeouts++;
                p->fc_dirty = true;
            } else if (r->expect_until < next) {
                next = r->expect_until;
            }
        }
        uint64_t deadline = r->last_heard_ns + p->cfg.receiver_timeout_ns;
        if (deadline <= now_ns) {
            p->counters.receivers_timed_out++;
            emit(p, RDPS_REL_PUB_EV_TIMED_OUT, 0, r);
            rx_remove(p, (int32_t)i);
        } else if (deadline < next) {
            next = deadline;
        }
    }
    p->rx_next_expiry = next;
    return next;
}

uint64_t rdps__rel_stall_check(struct rdps_rel_pub *p, uint64_t now_ns)
{
    if (p->blocked_since == 0 || p->cfg.stall_evict_ns == 0)
        return UINT64_MAX;
    uint64_t deadline = p->blocked_since + p->cfg.stall_evict_ns;
    if (now_ns < deadline)
        return deadline;
    if (p->fc_dirty)
        rdps__rel_fc_recompute(p);
    uint32_t mark = p->blocked_by_window ? p->fc_limit : p->fc_protect;
    p->blocked_since = 0;
    if (!p->fc_limited || mark != p->blocked_mark)
        return UINT64_MAX; /* the position moved since the refusal: not a stall */
    for (uint32_t i = 0; i < p->cfg.max_receivers; i++) {
        const struct rdps_rel_receiver *r = &p->rx[i];
        if (r->state != RDPS_REL_RX_ACTIVE ||
            (p->cfg.flow == RDPS_REL_FLOW_TAGGED && r->tag != p->cfg.flow_tag))
            continue;
        uint32_t v = p->blocked_by_window ? r->consumed_seq + r->window : r->consumed_seq;
        if (v == mark)
            evict(p, (int32_t)i, RDPS_EVICT_STALLED);
    }
    return UINT64_MAX;
}

uint32_t rdps__rel_pub_receivers_behind(const struct rdps_rel_pub *p)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < p->cfg.max_receivers; i++)
        if (p->rx[i].state == RDPS_REL_RX_ACTIVE && p->rx[i].consumed_seq != p->ring.head_seq)
            n++;
    return n;
}

uint32_t rdps__rel_pub_receiver_count(const struct rdps_rel_pub *p)
{
    return p->rx_count;
}

int rdps__rel_pub_receiver_info(const struct rdps_rel_pub *p, const struct rdps_source *source,
                                uint32_t receiver_id, struct rdps_rel_pub_receiver_info *info)
{
    int32_t i = rdps__rel_rx_find(p, source, receiver_id);
    if (i < 0)
        return RDPS_ENOENT;
    const struct rdps_rel_receiver *r = &p->rx[i];
    info->source = r->source;
    info->receiver_id = r->receiver_id;
    info->state = (enum rdps_rel_rx_state)r->state;
    info->consumed_seq = r->consumed_seq;
    info->window = r->window;
    info->tag = r->tag;
    info->srtt_ns = r->srtt_ns;
    info->last_heard_ns = r->last_heard_ns;
    return 0;
}
