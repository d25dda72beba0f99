/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rel_pub_rx.c - reliable publisher: receiver and host tables, STATUS, flow control,
 * timeouts, evictions and bans (model: rdps_rel_pub.h). */
/* Over 600 lines: one concern, the receivers the publisher keeps (their table, caps per host and
 * source, states, flow control over them), each rule a check against hostile reports. */
#include "rdps_rel_pub_internal.h"

#include <stdlib.h>
#include <string.h>

#include <rdps/rdps.h>

#include "rdps_reasm.h"
#include "rdps_seq.h"

#define MAX_RTT_NS 10000000000ull /* a larger sample is an echo of something else */
/* The most a STATUS may offer: a receiver tracks RDPS_REASM_WINDOW sequences. */
#define REL_WINDOW_MAX (RDPS_REASM_WINDOW - 1u)
/* Refusals by a connecting hold further apart than this: the application was not trying
 * meanwhile, and the time between counts as held only up to it. */
#define REL_HOLD_GAP_NS 10000000ull
#define REL_MAX_STRIKES 16u

static uint32_t buckets_for(uint32_t n)
{
    uint32_t buckets = 2;
    while (buckets < 2 * n)
        buckets <<= 1;
    return buckets;
}

int rdps__rel_rx_init(struct rdps_rel_pub *p)
{
    uint32_t n = p->cfg.max_receivers, buckets = buckets_for(n);
    uint32_t hosts = 2 * n, host_buckets = buckets_for(hosts);
    p->rx = calloc(n, sizeof(*p->rx));
    p->rx_buckets = malloc((size_t)buckets * sizeof(*p->rx_buckets));
    p->hosts = calloc(hosts, sizeof(*p->hosts));
    p->host_buckets = malloc((size_t)host_buckets * sizeof(*p->host_buckets));
    if (p->rx == NULL || p->rx_buckets == NULL || p->hosts == NULL || p->host_buckets == NULL)
        return RDPS_ENOMEM;
    for (uint32_t i = 0; i < buckets; i++)
        p->rx_buckets[i] = -1;
    for (uint32_t i = 0; i < n; i++)
        p->rx[i].hash_next = i + 1 < n ? (int32_t)(i + 1) : -1;
    p->rx_free = 0;
    p->rx_mask = buckets - 1;
    for (uint32_t i = 0; i < host_buckets; i++)
        p->host_buckets[i] = -1;
    for (uint32_t i = 0; i < hosts; i++)
        p->hosts[i].hash_next = i + 1 < hosts ? (int32_t)(i + 1) : -1;
    p->host_free = 0;
    p->host_cap = hosts;
    p->host_mask = host_buckets - 1;
    return 0;
}

void rdps__rel_rx_fini(struct rdps_rel_pub *p)
{
    free(p->rx);
    free(p->rx_buckets);
    free(p->hosts);
    free(p->host_buckets);
    p->rx = NULL;
    p->rx_buckets = NULL;
    p->hosts = NULL;
    p->host_buckets = NULL;
}

/* ---- hosts ---- */

/* The host of a source: its GID, or its LID when it has no GID. */
static void host_key(const struct rdps_source *s, struct rdps_source *key)
{
    memset(key, 0, sizeof(*key));
    if (s->has_gid) {
        memcpy(key->gid, s->gid, sizeof(key->gid));
        key->has_gid = 1;
    } else {
        key->lid = s->lid;
    }
}

static uint32_t host_bucket(const struct rdps_rel_pub *p, const struct rdps_source *key)
{
    return (uint32_t)rdps__source_hash(key, p->cfg.hash_seed ^ 0x6a09e667f3bcc909ull) &
           p->host_mask;
}

static void host_unlink(struct rdps_rel_pub *p, int32_t h)
{
    for (int32_t *link = &p->host_buckets[host_bucket(p, &p->hosts[h].key)]; *link >= 0;
         link = &p->hosts[*link].hash_next) {
        if (*link == h) {
            *link = p->hosts[h].hash_next;
            return;
        }
    }
}

/* The host record of `source`, created if absent. There are twice as many records as receivers,
 * so when none is free one has no receivers: the least recently used of those (preferring one
 * whose bans are over) is forgotten. */
static int32_t host_get(struct rdps_rel_pub *p, const struct rdps_source *source, uint64_t now_ns)
{
    struct rdps_source key;
    host_key(source, &key);
    uint32_t b = host_bucket(p, &key);
    for (int32_t h = p->host_buckets[b]; h >= 0; h = p->hosts[h].hash_next)
        if (rdps__source_equal(&p->hosts[h].key, &key)) {
            p->hosts[h].last_used_ns = now_ns;
            return h;
        }
    int32_t h = p->host_free;
    if (h >= 0) {
        p->host_free = p->hosts[h].hash_next;
    } else {
        bool best_banned = true;
        for (uint32_t k = 0; k < p->host_cap; k++) {
            const struct rdps_rel_host *c = &p->hosts[k];
            if (c->entries > 0)
                continue;
            bool banned = c->ban_until > now_ns || c->connect_ban_until > now_ns;
            if (h < 0 || (best_banned && !banned) ||
                (banned == best_banned && c->last_used_ns < p->hosts[h].last_used_ns)) {
                h = (int32_t)k;
                best_banned = banned;
            }
        }
        host_unlink(p, h); /* h >= 0: at most max_receivers hosts have receivers */
    }
    struct rdps_rel_host *host = &p->hosts[h];
    memset(host, 0, sizeof(*host));
    host->key = key;
    host->used = true;
    host->last_used_ns = now_ns;
    host->nak_epoch = host->share_epoch = UINT64_MAX;
    host->hash_next = p->host_buckets[b];
    p->host_buckets[b] = h;
    return h;
}

/* Strikes left of `strikes` after time passed since `since` (one forgotten per decay period). */
static uint8_t strikes_left(uint8_t strikes, uint64_t since, uint64_t now_ns)
{
    uint64_t gone = now_ns > since ? (now_ns - since) / RDPS_REL_STRIKE_DECAY_NS : 0;
    return gone >= strikes ? 0 : (uint8_t)(strikes - gone);
}

/* A ban of base doubled per strike beyond the first, capped. */
static uint64_t ban_for(uint64_t base, uint8_t strikes)
{
    uint64_t ban = base;
    for (uint8_t k = 1; k < strikes && ban < RDPS_REL_BAN_MAX_NS; k++)
        ban *= 2;
    return ban < RDPS_REL_BAN_MAX_NS ? ban : RDPS_REL_BAN_MAX_NS;
}

int64_t *rdps__rel_host_nak_tokens(struct rdps_rel_pub *p, int32_t h)
{
    struct rdps_rel_host *host = &p->hosts[h];
    if (host->nak_epoch != p->tokens_at) {
        host->nak_epoch = p->tokens_at;
        host->nak_tokens =
            host->announced > 0 ? p->cfg.host_nak_bytes : p->cfg.unannounced_host_bytes;
    }
    return &host->nak_tokens;
}

/* ---- receivers ---- */

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

/* A receiver that was in flow control (only those raise events). */
static inline bool was_member(const struct rdps_rel_receiver *r)
{
    return r->state == RDPS_REL_RX_ACTIVE || r->state == RDPS_REL_RX_EVICTED;
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
    struct rdps_rel_host *host = &p->hosts[r->host];
    host->entries--;
    if (r->announced)
        host->announced--;
    r->state = RDPS_REL_RX_FREE;
    r->expected = false;
    r->announced = false;
    r->owed = false;
    r->hash_next = p->rx_free;
    p->rx_free = i;
    p->rx_count--;
}

static void set_announced(struct rdps_rel_pub *p, struct rdps_rel_receiver *r)
{
    if (!r->announced) {
        r->announced = true;
        p->hosts[r->host].announced++;
    }
}

/* How much a receiver is worth keeping: 0 unannounced, 1 announced but neither in flow control
 * nor connecting (its connect timed out), 2 in flow control or connecting. */
static int rank_of(const struct rdps_rel_receiver *r)
{
    if (!r->announced)
        return 0;
    return was_member(r) || r->expected ? 2 : 1;
}

enum victim_scope { SCOPE_ALL, SCOPE_HOST, SCOPE_SOURCE };

/*
 * The receiver a new one (of host h, announced or not) displaces, or -1. Candidates rank below
 * what the new one may displace (an unannounced one only unannounced ones, an announced one also
 * announced ones out of flow control, and in the whole table those in it of a host with more than
 * one receiver more than h); over the whole table, an unannounced newcomer only displaces from a
 * host with more than one receiver more than its own. Among candidates: lowest rank, heaviest
 * host, least recently heard.
 */
static int32_t pick_victim(const struct rdps_rel_pub *p, enum victim_scope scope, int32_t h,
                           const struct rdps_source *source, bool announced)
{
    uint32_t own = p->hosts[h].entries;
    int32_t best = -1;
    int best_rank = 0;
    uint32_t best_weight = 0;
    for (uint32_t k = 0; k < p->cfg.max_receivers; k++) {
        const struct rdps_rel_receiver *r = &p->rx[k];
        if (r->state == RDPS_REL_RX_FREE)
            continue;
        if (scope == SCOPE_HOST && r->host != h)
            continue;
        if (scope == SCOPE_SOURCE && !rdps__source_equal(&r->source, source))
            continue;
        int rank = rank_of(r);
        uint32_t weight = p->hosts[r->host].entries;
        bool heavier = weight > own + 1;
        if (announced ? (rank == 2 && (scope != SCOPE_ALL || !heavier))
                      : (rank > 0 || (scope == SCOPE_ALL && !heavier)))
            continue;
        if (best < 0 || rank < best_rank ||
            (rank == best_rank &&
             (weight > best_weight ||
              (weight == best_weight && r->last_heard_ns < p->rx[best].last_heard_ns)))) {
            best = (int32_t)k;
            best_rank = rank;
            best_weight = weight;
        }
    }
    return best;
}

static uint32_t source_entries(const struct rdps_rel_pub *p, const struct rdps_source *source)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < p->cfg.max_receivers; k++)
        if (p->rx[k].state != RDPS_REL_RX_FREE && rdps__source_equal(&p->rx[k].source, source))
            n++;
    return n;
}

/* Removes receiver i to make room; one in flow control leaves it with TIMED_OUT. */
static void displace(struct rdps_rel_pub *p, int32_t i)
{
    p->counters.receivers_displaced++;
    if (was_member(&p->rx[i]))
        emit(p, RDPS_REL_PUB_EV_TIMED_OUT, 0, &p->rx[i]);
    rx_remove(p, i);
}

int32_t rdps__rel_rx_get(struct rdps_rel_pub *p, const struct rdps_source *source,
                         uint32_t receiver_id, bool announced, uint64_t now_ns)
{
    int32_t i = rdps__rel_rx_find(p, source, receiver_id);
    if (i >= 0) {
        if (announced)
            set_announced(p, &p->rx[i]);
        return i;
    }
    int32_t h = host_get(p, source, now_ns);
    const struct rdps_rel_host *host = &p->hosts[h];
    enum victim_scope scope = SCOPE_ALL;
    bool full = true;
    if (host->entries >= p->cfg.max_receivers_per_host)
        scope = SCOPE_HOST;
    else if (host->entries >= p->cfg.max_receivers_per_source &&
             source_entries(p, source) >= p->cfg.max_receivers_per_source)
        scope = SCOPE_SOURCE;
    else
        full = p->rx_free < 0;
    if (full) {
        int32_t victim = pick_victim(p, scope, h, source, announced);
        if (victim < 0) {
            p->counters.receivers_refused++;
            return -1;
        }
        displace(p, victim); /* frees a slot of the table too */
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
    r->host = h;
    p->hosts[h].entries++;
    if (announced)
        set_announced(p, r);
    uint32_t b = bucket_of(p, source, receiver_id);
    r->hash_next = p->rx_buckets[b];
    p->rx_buckets[b] = i;
    p->rx_count++;
    p->counters.receivers_created++;
    uint64_t timeout = announced ? p->cfg.receiver_timeout_ns : p->cfg.unannounced_timeout_ns;
    if (now_ns + timeout < p->rx_next_expiry)
        p->rx_next_expiry = now_ns + timeout;
    return i;
}

static void evict(struct rdps_rel_pub *p, int32_t i, rdps_evict_reason reason)
{
    struct rdps_rel_receiver *r = &p->rx[i];
    p->fc_dirty = true;
    r->state = RDPS_REL_RX_EVICTED;
    r->expected = false;
    r->evict_mark = r->consumed_seq;
    p->counters.evictions++;
    emit(p, RDPS_REL_PUB_EV_EVICTED, reason, r);
}

/* A stall eviction of one of the host's receivers. The first one costs no ban (a receiver that
 * paused, for a garbage collection or a page-in storm, is back in flow control once it moves, and
 * the ring keeps its place while it catches up); from the second within the decay period, none of
 * the host's receivers (re)joins for stall_evict_ns, doubling. */
static void strike(struct rdps_rel_pub *p, int32_t h, uint64_t now_ns)
{
    struct rdps_rel_host *host = &p->hosts[h];
    uint8_t left = strikes_left(host->strikes, host->strike_ns, now_ns);
    host->strikes = left < REL_MAX_STRIKES ? (uint8_t)(left + 1) : left;
    host->strike_ns = now_ns;
    if (host->strikes < 2)
        return;
    host->ban_until = now_ns + ban_for(p->cfg.stall_evict_ns, (uint8_t)(host->strikes - 1));
    p->counters.host_bans++;
}

/* A reporting, announced receiver out of flow control joins it (KNOWN: once within its window of
 * the live position) or rejoins it (EVICTED: past the position it was evicted at), unless its host
 * is banned. */
static void try_join(struct rdps_rel_pub *p, int32_t i, uint64_t now_ns)
{
    struct rdps_rel_receiver *r = &p->rx[i];
    if (!r->announced || !r->reported || rdps__seq_lt(r->consumed_seq, p->ring.trail_seq))
        return;
    bool evicted = r->state == RDPS_REL_RX_EVICTED;
    /* A first join waits until it has caught up (a late joiner NAKing its way through what the
     * ring retains): within its window of the live position, or it would hold a min/tagged
     * publisher. (An evicted receiver comes back past where it was evicted, as below.) */
    if (!evicted && rdps__seq_lt(r->consumed_seq + r->window, p->post_seq))
        return;
    if (now_ns < p->hosts[r->host].ban_until ||
        (evicted && !rdps__seq_gt(r->consumed_seq, r->evict_mark))) {
        p->counters.rejoins_refused++;
        return;
    }
    r->state = RDPS_REL_RX_ACTIVE;
    r->expected = false;
    p->fc_dirty = true;
    if (evicted) {
        p->counters.resumes++;
        emit(p, RDPS_REL_PUB_EV_RESUMED, 0, r);
    }
}

/* The RTT a heartbeat echo gives: the heartbeat's departure on the monotonic clock, looked up by
 * the wall-clock timestamp it carried. false: no heartbeat of ours had that timestamp (among the
 * last RDPS_REL_HB_SENT), or it was held longer than the round trip took. */
static bool echo_rtt(const struct rdps_rel_pub *p, uint64_t echoed_ts, uint64_t held_ns,
                     uint64_t now_ns, uint64_t *rtt_ns)
{
    uint32_t n = p->hb_sent_count < RDPS_REL_HB_SENT ? p->hb_sent_count : RDPS_REL_HB_SENT;
    for (uint32_t k = 1; k <= n; k++) { /* newest first: the echo is usually of the latest */
        const struct rdps_rel_hb_sent *sent =
            &p->hb_sent[(p->hb_sent_count - k) % RDPS_REL_HB_SENT];
        if (sent->wall_ns != echoed_ts)
            continue;
        if (now_ns < sent->mono_ns || now_ns - sent->mono_ns < held_ns)
            return false; /* held longer than the round trip took */
        *rtt_ns = now_ns - sent->mono_ns - held_ns;
        return true;
    }
    return false;
}

int rdps__rel_pub_on_status(struct rdps_rel_pub *p, const struct rdps_source *source,
                            const struct rdps_rel_status *st, uint64_t now_ns, uint64_t wall_ns)
{
    (void)wall_ns; /* RTT comes from the monotonic departure of the echoed heartbeat */
    if (st->session_id != p->cfg.session_id || st->topic_id != p->cfg.topic_id) {
        p->counters.foreign_frames++;
        return 0;
    }
    p->counters.status_received++;
    int32_t i = rdps__rel_rx_get(p, source, st->receiver_id, false, now_ns);
    if (i < 0)
        return 0;
    struct rdps_rel_receiver *r = &p->rx[i];
    r->last_heard_ns = now_ns;
    if (st->echo_delay_us != RDPS_REL_NO_ECHO) {
        uint64_t sample;
        if (echo_rtt(p, st->echo_timestamp_ns, (uint64_t)st->echo_delay_us * 1000u, now_ns,
                     &sample) &&
            sample < MAX_RTT_NS) {
            r->srtt_ns = r->srtt_ns == 0 ? sample : r->srtt_ns - r->srtt_ns / 8 + sample / 8;
            p->counters.rtt_samples++;
            if (r->state == RDPS_REL_RX_ACTIVE) {
                p->counters.rtt_last_ns = sample;
                p->fc_dirty = true; /* heartbeat pace and linger follow the ACTIVE receivers */
            }
        } else {
            p->counters.rtt_bogus++;
        }
    }
    uint32_t consumed = st->consumed_seq;
    if (rdps__seq_gt(consumed, p->post_seq)) {
        p->counters.status_bogus++;
        return 0;
    }
    if (r->state == RDPS_REL_RX_ACTIVE && rdps__seq_lt(consumed, r->consumed_seq)) {
        p->counters.status_stale++;
        return 0;
    }
    r->consumed_seq = consumed;
    r->window = st->window > REL_WINDOW_MAX ? REL_WINDOW_MAX : st->window;
    r->reported = true;
    if (r->expected) {
        r->expected = false; /* connected: it holds nothing any more */
        p->fc_dirty = true;
    }
    if (rdps__seq_lt(consumed, p->ring.trail_seq)) {
        /* Behind what the ring holds: out of flow control until it jumps to the live position. */
        if (r->state == RDPS_REL_RX_ACTIVE)
            evict(p, i, RDPS_EVICT_LAGGED);
        return 0;
    }
    if (r->state == RDPS_REL_RX_ACTIVE)
        p->fc_dirty = true;
    else
        try_join(p, i, now_ns);
    return 0;
}

int rdps__rel_pub_receiver_tag(struct rdps_rel_pub *p, const struct rdps_source *source,
                               uint32_t receiver_id, uint32_t tag, uint64_t now_ns)
{
    int32_t i = rdps__rel_rx_get(p, source, receiver_id, true, now_ns);
    if (i < 0)
        return RDPS_ENOSPC;
    if (p->rx[i].tag != tag)
        p->fc_dirty = true;
    p->rx[i].tag = tag;
    if (p->rx[i].state == RDPS_REL_RX_KNOWN)
        try_join(p, i, now_ns);
    return 0;
}

static inline uint64_t clamp_u64(uint64_t v, uint64_t lo, uint64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

void rdps__rel_fc_recompute(struct rdps_rel_pub *p)
{
    bool max = p->cfg.flow == RDPS_REL_FLOW_MAX;
    bool tagged = p->cfg.flow == RDPS_REL_FLOW_TAGGED;
    uint32_t connecting = 0, protect_was = p->fc_protect;
    bool protected_was = p->fc_protected;
    uint64_t rtt = 0;
    p->fc_limited = p->fc_protected = p->lag_any = false;
    p->fc_tagged = p->fc_members = 0;
    p->fc_rtt_max = 0;
    for (uint32_t i = 0; i < p->cfg.max_receivers; i++) {
        const struct rdps_rel_receiver *r = &p->rx[i];
        if (r->state == RDPS_REL_RX_KNOWN && r->expected && (!tagged || r->tag == p->cfg.flow_tag))
            connecting++;
        if (r->state != RDPS_REL_RX_ACTIVE)
            continue;
        p->fc_members++;
        if (r->srtt_ns > p->fc_rtt_max)
            p->fc_rtt_max = r->srtt_ns;
        if (r->srtt_ns != 0 && (rtt == 0 || r->srtt_ns < rtt))
            rtt = r->srtt_ns;
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
    /* Heartbeats and a lone receiver's linger follow the fastest receiver in flow control: a
     * receiver cannot act on a tail loss sooner than its round trip, and a NAK sent before the
     * repair reached its asker arrives within an RTT of the repair (a quarter more for jitter;
     * later it is a retry). Nobody else's echo moves them. */
    if (rtt != 0) {
        p->linger_ns =
            clamp_u64(rtt + rtt / 4, p->cfg.repair_linger_min_ns, p->cfg.repair_linger_ns);
        p->hb_min = clamp_u64(rtt / 2, p->cfg.heartbeat_min_ns, p->cfg.heartbeat_max_ns);
    } else {
        p->linger_ns = p->cfg.repair_linger_ns;
        p->hb_min = p->cfg.heartbeat_min_ns;
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
    if (p->fc_connecting == 0)
        p->hold_last_ns = 0; /* a hold episode ended: the next one counts from its first refusal */
    p->fc_dirty = false;
}

bool rdps__rel_connect_hold(struct rdps_rel_pub *p, uint64_t now_ns)
{
    if (now_ns > p->hold_at_ns) {
        uint64_t refill = (now_ns - p->hold_at_ns) / RDPS_REL_HOLD_REFILL;
        p->hold_level_ns = p->hold_level_ns > refill ? p->hold_level_ns - refill : 0;
        p->hold_at_ns = now_ns;
    }
    if (p->hold_level_ns >= p->cfg.connect_hold_max_ns) {
        p->counters.connect_holds_refused++;
        return false;
    }
    /* The publisher has been held since the previous refusal of this episode. */
    if (p->hold_last_ns != 0 && now_ns > p->hold_last_ns)
        p->hold_level_ns +=
            now_ns - p->hold_last_ns < REL_HOLD_GAP_NS ? now_ns - p->hold_last_ns : REL_HOLD_GAP_NS;
    p->hold_last_ns = now_ns ? now_ns : 1;
    return true;
}

int rdps__rel_pub_expect_receiver(struct rdps_rel_pub *p, const struct rdps_source *source,
                                  uint32_t receiver_id, uint32_t tag, uint64_t now_ns)
{
    int32_t i = rdps__rel_rx_get(p, source, receiver_id, true, now_ns);
    if (i < 0)
        return RDPS_ENOSPC;
    struct rdps_rel_receiver *r = &p->rx[i];
    if (r->tag != tag)
        p->fc_dirty = true;
    r->tag = tag;
    if (r->state != RDPS_REL_RX_KNOWN)
        return 0;
    if (r->reported) { /* its STATUS came before the announcement */
        try_join(p, i, now_ns);
        return 0;
    }
    if (r->expected || p->cfg.connect_timeout_ns == 0)
        return 0;
    /* Tell it the session (and the ring's oldest sequence) now, ahead of waiting data, rather
     * than after the idle heartbeat's backoff. */
    p->hb_interval = p->hb_min;
    p->hb_next = now_ns;
    p->hb_urgent = true;
    if (now_ns < p->hosts[r->host].connect_ban_until) {
        p->counters.connect_holds_refused++; /* an earlier one of its host never reported */
        return 0;
    }
    r->expected = true;
    r->expect_until = now_ns + p->cfg.connect_timeout_ns;
    if (r->expect_until < p->rx_next_expiry)
        p->rx_next_expiry = r->expect_until;
    p->counters.receivers_expected++;
    p->fc_dirty = true;
    return 0;
}

int rdps__rel_pub_receiver_gone(struct rdps_rel_pub *p, const struct rdps_source *source,
                                uint32_t receiver_id, bool expired)
{
    int32_t i = rdps__rel_rx_find(p, source, receiver_id);
    if (i < 0)
        return RDPS_ENOENT;
    struct rdps_rel_receiver *r = &p->rx[i];
    if (expired && was_member(r))
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

/* An announced receiver that never reported within connect_timeout: its host holds no data for a
 * doubling ban. */
static void connect_failed(struct rdps_rel_pub *p, struct rdps_rel_receiver *r, uint64_t now_ns)
{
    struct rdps_rel_host *host = &p->hosts[r->host];
    r->expected = false;
    p->counters.connect_timeouts++;
    p->fc_dirty = true;
    uint8_t left = strikes_left(host->connect_strikes, host->connect_ban_until, now_ns);
    host->connect_strikes = left < REL_MAX_STRIKES ? (uint8_t)(left + 1) : left;
    host->connect_ban_until = now_ns + ban_for(RDPS_REL_CONNECT_BAN_NS, host->connect_strikes);
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
            if (r->expect_until <= now_ns)
                connect_failed(p, r, now_ns);
            else if (r->expect_until < next)
                next = r->expect_until;
        }
        uint64_t timeout =
            r->announced ? p->cfg.receiver_timeout_ns : p->cfg.unannounced_timeout_ns;
        uint64_t deadline = r->last_heard_ns + timeout;
        if (deadline <= now_ns) {
            p->counters.receivers_timed_out++;
            if (was_member(r))
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
        if (v == mark) {
            evict(p, (int32_t)i, RDPS_EVICT_STALLED);
            strike(p, r->host, now_ns);
        }
    }
    return UINT64_MAX;
}

uint32_t rdps__rel_pub_receivers_behind(const struct rdps_rel_pub *p)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < p->cfg.max_receivers; i++) {
        const struct rdps_rel_receiver *r = &p->rx[i];
        /* A receiver catching up (a late join from the ring, under min/tagged flow control) is
         * not in flow control yet, but leaving now would cut it off: an announced one with a
         * position of its own counts too. */
        bool catching_up = r->state == RDPS_REL_RX_KNOWN && r->announced && r->reported;
        if ((r->state == RDPS_REL_RX_ACTIVE || catching_up) && r->consumed_seq != p->ring.head_seq)
            n++;
    }
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
