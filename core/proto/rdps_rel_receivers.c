/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rel_receivers.c - the reliable publisher's receivers table: receivers and hosts, caps and
 * victims, states, STATUS, timeouts, evictions and bans (model: rdps_rel_receivers.h). */
#include "rdps_rel_receivers.h"

#include <stdlib.h>
#include <string.h>

#include <rdps/rdps.h>

#include "rdps_reasm.h"
#include "rdps_seq.h"

#define MAX_RTT_NS 10000000000ull /* a larger sample is an echo of something else */
/* The most a STATUS may offer: a receiver tracks RDPS_REASM_WINDOW sequences. */
#define REL_WINDOW_MAX (RDPS_REASM_WINDOW - 1u)

int rdps__rel_rxt_init(struct rdps_rel_receivers *t, const struct rdps_rel_pub_config *cfg,
                       struct rdps_rel_pub_counters *c, const struct rdps_pub_ring *ring,
                       const struct rdps_rel_beat *beat)
{
    t->cfg = cfg;
    t->c = c;
    t->ring = ring;
    t->beat = beat;
    t->hash_seed = cfg->hash_seed;
    t->rx_next_expiry = UINT64_MAX;
    t->changed = true;
    uint32_t n = cfg->max_receivers, buckets = rdps__rel_hash_buckets(n);
    t->owed = calloc(n, sizeof(*t->owed));
    t->owed_gen = calloc(n, sizeof(*t->owed_gen));
    t->rx = calloc(n, sizeof(*t->rx));
    t->rx_buckets = malloc((size_t)buckets * sizeof(*t->rx_buckets));
    if (t->owed == NULL || t->owed_gen == NULL || t->rx == NULL || t->rx_buckets == NULL ||
        rdps__rel_hosts_init(&t->hosts, cfg, n) < 0)
        return RDPS_ENOMEM;
    for (uint32_t i = 0; i < buckets; i++)
        t->rx_buckets[i] = -1;
    for (uint32_t i = 0; i < n; i++)
        t->rx[i].hash_next = i + 1 < n ? (int32_t)(i + 1) : -1;
    t->rx_free = 0;
    t->rx_mask = buckets - 1;
    return 0;
}

void rdps__rel_rxt_fini(struct rdps_rel_receivers *t)
{
    free(t->owed);
    free(t->owed_gen);
    free(t->rx);
    free(t->rx_buckets);
    rdps__rel_hosts_fini(&t->hosts);
    t->owed = NULL;
    t->owed_gen = NULL;
    t->rx = NULL;
    t->rx_buckets = NULL;
}

/* ---- receivers ---- */

static inline uint32_t bucket_of(const struct rdps_rel_receivers *t, const struct rdps_source *s,
                                 uint32_t id)
{
    return (uint32_t)rdps__source_hash(s, t->hash_seed ^ (id * 0x9e3779b97f4a7c15ull)) & t->rx_mask;
}

int32_t rdps__rel_rxt_find(const struct rdps_rel_receivers *t, const struct rdps_source *source,
                           uint32_t receiver_id)
{
    for (int32_t i = t->rx_buckets[bucket_of(t, source, receiver_id)]; i >= 0;
         i = t->rx[i].hash_next)
        if (t->rx[i].receiver_id == receiver_id && rdps__source_equal(&t->rx[i].source, source))
            return i;
    return -1;
}

static void emit(struct rdps_rel_receivers *t, enum rdps_rel_pub_event_kind kind, int reason,
                 const struct rdps_rel_receiver *r)
{
    if (t->cfg->on_event == NULL)
        return;
    struct rdps_rel_pub_event ev = {
        .kind = kind,
        .reason = reason,
        .source = &r->source,
        .receiver_id = r->receiver_id,
        .consumed_seq = r->consumed_seq,
        .trail_seq = t->ring->trail_seq,
    };
    t->cfg->on_event(t->cfg->user, &ev);
}

/* A receiver that was in flow control (only those raise events). */
static inline bool was_member(const struct rdps_rel_receiver *r)
{
    return r->state == RDPS_REL_RX_ACTIVE || r->state == RDPS_REL_RX_EVICTED;
}

static void rx_remove(struct rdps_rel_receivers *t, int32_t i)
{
    struct rdps_rel_receiver *r = &t->rx[i];
    for (int32_t *link = &t->rx_buckets[bucket_of(t, &r->source, r->receiver_id)]; *link >= 0;
         link = &t->rx[*link].hash_next) {
        if (*link == i) {
            *link = r->hash_next;
            break;
        }
    }
    if (r->state == RDPS_REL_RX_ACTIVE || r->expected)
        t->changed = true;
    struct rdps_rel_host *host = &t->hosts.rec[r->host];
    host->entries--;
    if (r->announced)
        host->announced--;
    r->state = RDPS_REL_RX_FREE;
    r->expected = false;
    r->announced = false;
    r->owed = false;
    r->hash_next = t->rx_free;
    t->rx_free = i;
    t->rx_count--;
}

static void set_announced(struct rdps_rel_receivers *t, struct rdps_rel_receiver *r)
{
    if (!r->announced) {
        r->announced = true;
        t->hosts.rec[r->host].announced++;
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
static int32_t pick_victim(const struct rdps_rel_receivers *t, enum victim_scope scope, int32_t h,
                           const struct rdps_source *source, bool announced)
{
    uint32_t own = t->hosts.rec[h].entries;
    int32_t best = -1;
    int best_rank = 0;
    uint32_t best_weight = 0;
    for (uint32_t k = 0; k < t->cfg->max_receivers; k++) {
        const struct rdps_rel_receiver *r = &t->rx[k];
        if (r->state == RDPS_REL_RX_FREE)
            continue;
        if (scope == SCOPE_HOST && r->host != h)
            continue;
        if (scope == SCOPE_SOURCE && !rdps__source_equal(&r->source, source))
            continue;
        int rank = rank_of(r);
        uint32_t weight = t->hosts.rec[r->host].entries;
        bool heavier = weight > own + 1;
        if (announced ? (rank == 2 && (scope != SCOPE_ALL || !heavier))
                      : (rank > 0 || (scope == SCOPE_ALL && !heavier)))
            continue;
        if (best < 0 || rank < best_rank ||
            (rank == best_rank &&
             (weight > best_weight ||
              (weight == best_weight && r->last_heard_ns < t->rx[best].last_heard_ns)))) {
            best = (int32_t)k;
            best_rank = rank;
            best_weight = weight;
        }
    }
    return best;
}

static uint32_t source_entries(const struct rdps_rel_receivers *t, const struct rdps_source *source)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < t->cfg->max_receivers; k++)
        if (t->rx[k].state != RDPS_REL_RX_FREE && rdps__source_equal(&t->rx[k].source, source))
            n++;
    return n;
}

/* Removes receiver i to make room; one in flow control leaves it with TIMED_OUT. */
static void displace(struct rdps_rel_receivers *t, int32_t i)
{
    t->c->receivers_displaced++;
    if (was_member(&t->rx[i]))
        emit(t, RDPS_REL_PUB_EV_TIMED_OUT, 0, &t->rx[i]);
    rx_remove(t, i);
}

int32_t rdps__rel_rxt_get(struct rdps_rel_receivers *t, const struct rdps_source *source,
                          uint32_t receiver_id, bool announced, uint64_t now_ns)
{
    int32_t i = rdps__rel_rxt_find(t, source, receiver_id);
    if (i >= 0) {
        if (announced)
            set_announced(t, &t->rx[i]);
        return i;
    }
    int32_t h = rdps__rel_hosts_get(&t->hosts, source, now_ns);
    const struct rdps_rel_host *host = &t->hosts.rec[h];
    enum victim_scope scope = SCOPE_ALL;
    bool full = true;
    if (host->entries >= t->cfg->max_receivers_per_host)
        scope = SCOPE_HOST;
    else if (host->entries >= t->cfg->max_receivers_per_source &&
             source_entries(t, source) >= t->cfg->max_receivers_per_source)
        scope = SCOPE_SOURCE;
    else
        full = t->rx_free < 0;
    if (full) {
        int32_t victim = pick_victim(t, scope, h, source, announced);
        if (victim < 0) {
            t->c->receivers_refused++;
            return -1;
        }
        displace(t, victim); /* frees a slot of the table too */
    }
    i = t->rx_free;
    struct rdps_rel_receiver *r = &t->rx[i];
    t->rx_free = r->hash_next;
    memset(r, 0, sizeof(*r));
    r->source = *source;
    r->receiver_id = receiver_id;
    r->state = RDPS_REL_RX_KNOWN;
    r->gen = ++t->rx_gen;
    r->last_heard_ns = now_ns;
    r->host = h;
    t->hosts.rec[h].entries++;
    if (announced)
        set_announced(t, r);
    uint32_t b = bucket_of(t, source, receiver_id);
    r->hash_next = t->rx_buckets[b];
    t->rx_buckets[b] = i;
    t->rx_count++;
    t->c->receivers_created++;
    uint64_t timeout = announced ? t->cfg->receiver_timeout_ns : t->cfg->unannounced_timeout_ns;
    if (now_ns + timeout < t->rx_next_expiry)
        t->rx_next_expiry = now_ns + timeout;
    return i;
}

void rdps__rel_rxt_evict(struct rdps_rel_receivers *t, int32_t i, rdps_evict_reason reason)
{
    struct rdps_rel_receiver *r = &t->rx[i];
    t->changed = true;
    r->state = RDPS_REL_RX_EVICTED;
    r->expected = false;
    r->evict_mark = r->consumed_seq;
    t->c->evictions++;
    emit(t, RDPS_REL_PUB_EV_EVICTED, reason, r);
}

void rdps__rel_rxt_strike(struct rdps_rel_receivers *t, int32_t h, uint64_t now_ns)
{
    if (rdps__rel_hosts_strike(&t->hosts, h, now_ns))
        t->c->host_bans++;
}

/* A reporting, announced receiver out of flow control joins it (KNOWN: once within its window of
 * the live position) or rejoins it (EVICTED: past the position it was evicted at), unless its host
 * is banned. */
static void try_join(struct rdps_rel_receivers *t, int32_t i, uint32_t post, uint64_t now_ns)
{
    struct rdps_rel_receiver *r = &t->rx[i];
    if (!r->announced || !r->reported || rdps__seq_lt(r->consumed_seq, t->ring->trail_seq))
        return;
    bool evicted = r->state == RDPS_REL_RX_EVICTED;
    /* A first join waits until it has caught up (a late joiner NAKing its way through what the
     * ring retains): within its window of the live position, or it would hold a min/tagged
     * publisher. (An evicted receiver comes back past where it was evicted, as below.) */
    if (!evicted && rdps__seq_lt(r->consumed_seq + r->window, post))
        return;
    if (now_ns < t->hosts.rec[r->host].ban_until ||
        (evicted && !rdps__seq_gt(r->consumed_seq, r->evict_mark))) {
        t->c->rejoins_refused++;
        return;
    }
    r->state = RDPS_REL_RX_ACTIVE;
    r->expected = false;
    t->changed = true;
    if (evicted) {
        t->c->resumes++;
        emit(t, RDPS_REL_PUB_EV_RESUMED, 0, r);
    }
}

int rdps__rel_rxt_on_status(struct rdps_rel_receivers *t, const struct rdps_source *source,
                            const struct rdps_rel_status *st, uint32_t post, uint64_t now_ns)
{
    if (st->session_id != t->cfg->session_id || st->topic_id != t->cfg->topic_id) {
        t->c->foreign_frames++;
        return 0;
    }
    t->c->status_received++;
    int32_t i = rdps__rel_rxt_get(t, source, st->receiver_id, false, now_ns);
    if (i < 0)
        return 0;
    struct rdps_rel_receiver *r = &t->rx[i];
    r->last_heard_ns = now_ns;
    if (st->echo_delay_us != RDPS_REL_NO_ECHO) {
        uint64_t sample;
        if (rdps__rel_beat_echo_rtt(t->beat, st->echo_timestamp_ns,
                                    (uint64_t)st->echo_delay_us * 1000u, now_ns, &sample) &&
            sample < MAX_RTT_NS) {
            r->srtt_ns = r->srtt_ns == 0 ? sample : r->srtt_ns - r->srtt_ns / 8 + sample / 8;
            t->c->rtt_samples++;
            if (r->state == RDPS_REL_RX_ACTIVE) {
                t->c->rtt_last_ns = sample;
                t->changed = true; /* heartbeat pace and linger follow the ACTIVE receivers */
            }
        } else {
            t->c->rtt_bogus++;
        }
    }
    uint32_t consumed = st->consumed_seq;
    if (rdps__seq_gt(consumed, post)) {
        t->c->status_bogus++;
        return 0;
    }
    if (r->state == RDPS_REL_RX_ACTIVE && rdps__seq_lt(consumed, r->consumed_seq)) {
        t->c->status_stale++;
        return 0;
    }
    r->consumed_seq = consumed;
    r->window = st->window > REL_WINDOW_MAX ? REL_WINDOW_MAX : st->window;
    r->reported = true;
    if (r->expected) {
        r->expected = false; /* connected: it holds nothing any more */
        t->changed = true;
    }
    if (rdps__seq_lt(consumed, t->ring->trail_seq)) {
        /* Behind what the ring holds: out of flow control until it jumps to the live position. */
        if (r->state == RDPS_REL_RX_ACTIVE)
            rdps__rel_rxt_evict(t, i, RDPS_EVICT_LAGGED);
        return 0;
    }
    if (r->state == RDPS_REL_RX_ACTIVE)
        t->changed = true;
    else
        try_join(t, i, post, now_ns);
    return 0;
}

int rdps__rel_rxt_tag(struct rdps_rel_receivers *t, const struct rdps_source *source,
                      uint32_t receiver_id, uint32_t tag, uint32_t post, uint64_t now_ns)
{
    int32_t i = rdps__rel_rxt_get(t, source, receiver_id, true, now_ns);
    if (i < 0)
        return RDPS_ENOSPC;
    if (t->rx[i].tag != tag)
        t->changed = true;
    t->rx[i].tag = tag;
    if (t->rx[i].state == RDPS_REL_RX_KNOWN)
        try_join(t, i, post, now_ns);
    return 0;
}

int rdps__rel_rxt_expect(struct rdps_rel_receivers *t, const struct rdps_source *source,
                         uint32_t receiver_id, uint32_t tag, uint32_t post, uint64_t now_ns)
{
    int32_t i = rdps__rel_rxt_get(t, source, receiver_id, true, now_ns);
    if (i < 0)
        return RDPS_ENOSPC;
    struct rdps_rel_receiver *r = &t->rx[i];
    if (r->tag != tag)
        t->changed = true;
    r->tag = tag;
    if (r->state != RDPS_REL_RX_KNOWN)
        return 0;
    if (r->reported) { /* its STATUS came before the announcement */
        try_join(t, i, post, now_ns);
        return 0;
    }
    if (t->cfg->connect_timeout_ns == 0)
        return 0;
    if (r->expected) /* announced again, still silent: it may have joined the group since */
        return 1;
    /* From here the caller sends the next heartbeat at once: it tells the receiver the session
     * (and the ring's oldest sequence) ahead of waiting data, not after the idle backoff. */
    if (now_ns < t->hosts.rec[r->host].connect_ban_until) {
        t->c->connect_holds_refused++; /* an earlier one of its host never reported */
        return 1;
    }
    r->expected = true;
    r->expect_until = now_ns + t->cfg->connect_timeout_ns;
    if (r->expect_until < t->rx_next_expiry)
        t->rx_next_expiry = r->expect_until;
    t->c->receivers_expected++;
    t->changed = true;
    return 1;
}

int rdps__rel_rxt_gone(struct rdps_rel_receivers *t, const struct rdps_source *source,
                       uint32_t receiver_id, bool expired)
{
    int32_t i = rdps__rel_rxt_find(t, source, receiver_id);
    if (i < 0)
        return RDPS_ENOENT;
    struct rdps_rel_receiver *r = &t->rx[i];
    if (expired && was_member(r))
        emit(t, RDPS_REL_PUB_EV_TIMED_OUT, 0, r);
    t->c->receivers_gone++;
    rx_remove(t, i);
    return 0;
}

/* An announced receiver that never reported within connect_timeout: its host holds no data for a
 * doubling ban. */
static void connect_failed(struct rdps_rel_receivers *t, struct rdps_rel_receiver *r,
                           uint64_t now_ns)
{
    r->expected = false;
    t->c->connect_timeouts++;
    t->changed = true;
    rdps__rel_hosts_connect_failed(&t->hosts, r->host, now_ns);
}

uint64_t rdps__rel_rxt_expire(struct rdps_rel_receivers *t, uint64_t now_ns)
{
    if (now_ns < t->rx_next_expiry)
        return t->rx_next_expiry;
    uint64_t next = UINT64_MAX;
    for (uint32_t i = 0; i < t->cfg->max_receivers; i++) {
        struct rdps_rel_receiver *r = &t->rx[i];
        if (r->state == RDPS_REL_RX_FREE)
            continue;
        if (r->expected && r->state == RDPS_REL_RX_KNOWN) {
            if (r->expect_until <= now_ns)
                connect_failed(t, r, now_ns);
            else if (r->expect_until < next)
                next = r->expect_until;
        }
        uint64_t timeout =
            r->announced ? t->cfg->receiver_timeout_ns : t->cfg->unannounced_timeout_ns;
        uint64_t deadline = r->last_heard_ns + timeout;
        if (deadline <= now_ns) {
            t->c->receivers_timed_out++;
            if (was_member(r))
                emit(t, RDPS_REL_PUB_EV_TIMED_OUT, 0, r);
            rx_remove(t, (int32_t)i);
        } else if (deadline < next) {
            next = deadline;
        }
    }
    t->rx_next_expiry = next;
    return next;
}

/* ---- owed heartbeats ---- */

void rdps__rel_rxt_owe(struct rdps_rel_receivers *t, int32_t slot, uint64_t now_ns)
{
    struct rdps_rel_receiver *r = &t->rx[slot];
    if (r->owed || now_ns < r->owed_until || t->owed_count == t->cfg->max_receivers)
        return;
    uint32_t at = (t->owed_head + t->owed_count++) % t->cfg->max_receivers;
    t->owed[at] = (uint32_t)slot;
    t->owed_gen[at] = r->gen;
    r->owed = true;
}

int32_t rdps__rel_rxt_take_owed(struct rdps_rel_receivers *t, uint64_t now_ns, uint64_t linger)
{
    while (t->owed_count > 0) {
        uint32_t slot = t->owed[t->owed_head], gen = t->owed_gen[t->owed_head];
        t->owed_head = (t->owed_head + 1) % t->cfg->max_receivers;
        t->owed_count--;
        struct rdps_rel_receiver *r = &t->rx[slot];
        if (r->state == RDPS_REL_RX_FREE || r->gen != gen || !r->owed)
            continue;
        r->owed = false;
        r->owed_until = now_ns + linger;
        return (int32_t)slot;
    }
    return -1;
}

/* ---- stats ---- */

uint32_t rdps__rel_rxt_behind(const struct rdps_rel_receivers *t)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < t->cfg->max_receivers; i++) {
        const struct rdps_rel_receiver *r = &t->rx[i];
        /* A receiver catching up (a late join from the ring, under min/tagged flow control) is
         * not in flow control yet, but leaving now would cut it off: an announced one with a
         * position of its own counts too. */
        bool catching_up = r->state == RDPS_REL_RX_KNOWN && r->announced && r->reported;
        if ((r->state == RDPS_REL_RX_ACTIVE || catching_up) && r->consumed_seq != t->ring->head_seq)
            n++;
    }
    return n;
}
