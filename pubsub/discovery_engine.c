/* SPDX-License-Identifier: BSD-2-Clause */
/* discovery_engine.c - sans-IO discovery: bounded peer table keyed by source, expiry heap, local
 * announcement schedule (model in discovery_engine.h). */
#include "discovery_engine.h"

#include <stdlib.h>
#include <string.h>

#include "discovery_peers.h"
#include "rdps_error.h"

static const struct rdps_source no_source;

void rdps__disc_config_default(struct rdps_disc_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->max_peers = RDPS_DISCOVERY_DEFAULT_MAX_PEERS;
    cfg->max_remote_only = RDPS_DISCOVERY_DEFAULT_MAX_REMOTE_ONLY;
    cfg->min_interval_ms = RDPS_DISCOVERY_DEFAULT_MIN_INTERVAL_MS;
    cfg->max_interval_ms = RDPS_DISCOVERY_DEFAULT_MAX_INTERVAL_MS;
    cfg->announce_interval_ms = RDPS_DISCOVERY_DEFAULT_ANNOUNCE_INTERVAL_MS;
    cfg->hash_seed = 0x5eed5eed5eed5eedull;
}

int rdps__disc_init(struct rdps_discovery *d, const struct rdps_disc_config *cfg)
{
    memset(d, 0, sizeof(*d));
    if (cfg->send == NULL || cfg->max_peers == 0 || cfg->max_peers > (1u << 24) ||
        cfg->max_remote_only >= cfg->max_peers || cfg->min_interval_ms == 0 ||
        cfg->max_interval_ms < cfg->min_interval_ms || cfg->announce_interval_ms == 0)
        return rdps__set_err(RDPS_EINVAL, "discovery: invalid table or interval configuration");
    d->cfg = *cfg;
    uint32_t slots = 2;
    while (slots < 2 * cfg->max_peers)
        slots <<= 1;
    d->index_mask = slots - 1;
    d->peers = calloc(cfg->max_peers, sizeof(*d->peers));
    d->index = calloc(slots, sizeof(*d->index));
    d->heap = calloc(cfg->max_peers, sizeof(*d->heap));
    d->names = calloc(cfg->max_remote_only ? cfg->max_remote_only : 1, sizeof(*d->names));
    d->name_free = calloc(cfg->max_remote_only ? cfg->max_remote_only : 1, sizeof(*d->name_free));
    d->collisions = calloc(RDPS_DISC_COLLISION_SLOTS, sizeof(*d->collisions));
    d->tallies = calloc(slots, sizeof(*d->tallies));
    if (!d->peers || !d->index || !d->heap || !d->names || !d->name_free || !d->collisions ||
        !d->tallies) {
        rdps__disc_fini(d);
        return rdps__set_err(RDPS_ENOMEM, "discovery: %u peer table", cfg->max_peers);
    }
    for (uint32_t i = 0; i < cfg->max_peers; i++)
        d->peers[i].next = i + 1 < cfg->max_peers ? (int32_t)(i + 1) : NONE;
    d->peer_free = 0;
    for (uint32_t i = 0; i < cfg->max_remote_only; i++)
        d->name_free[i] = (int32_t)(cfg->max_remote_only - 1 - i);
    d->name_free_len = cfg->max_remote_only;
    d->remote_only_head = NONE;
    return 0;
}

void rdps__disc_fini(struct rdps_discovery *d)
{
    for (unsigned b = 0; b < sizeof(d->topic_buckets) / sizeof(d->topic_buckets[0]); b++) {
        while (d->topic_buckets[b]) {
            struct rdps_disc_topic *t = d->topic_buckets[b];
            d->topic_buckets[b] = t->next;
            free(t);
        }
    }
    free(d->peers);
    free(d->index);
    free(d->heap);
    free(d->names);
    free(d->name_free);
    free(d->locals);
    free(d->collisions);
    free(d->tallies);
    memset(d, 0, sizeof(*d));
}

static void emit(struct rdps_discovery *d, const struct rdps_disc_event *ev)
{
    if (d->cfg.on_event)
        d->cfg.on_event(d->cfg.user, ev);
}

/* ---- announcements in ---- */

/* The announced interval, clamped (and the clamp counted). */
static uint32_t clamp_interval(struct rdps_discovery *d, uint32_t interval)
{
    if (interval < d->cfg.min_interval_ms || interval > d->cfg.max_interval_ms) {
        d->counters.intervals_clamped++;
        interval =
            interval < d->cfg.min_interval_ms ? d->cfg.min_interval_ms : d->cfg.max_interval_ms;
    }
    return interval;
}

/* The peer table's part of an announcement: admit, refresh or remove the peer. */
static void peer_announce(struct rdps_discovery *d, const struct rdps_source *src,
                          const struct rdps_announce *a, uint64_t now_ns)
{
    uint8_t role = (uint8_t)a->role;
    uint32_t hash = rdps__disc_key_hash(d, src, a->session_id, role);
    int32_t i = rdps__disc_index_lookup(d, src, a->session_id, role, hash);
    struct rdps_disc_peer *p = i != NONE ? &d->peers[i] : NULL;
    if (p &&
        (p->topic_id != a->topic_id || strcmp(rdps__disc_peer_topic_name(d, p), a->topic) != 0)) {
        d->counters.refused_topic_change++;
        return;
    }
    if (a->leaving) {
        if (p == NULL) {
            d->counters.refused_unknown_leave++;
            return;
        }
        struct rdps_disc_event ev;
        char name[RDPS_TOPIC_NAME_MAX + 1];
        d->counters.peers_left++;
        if (rdps__disc_peer_remove(d, i, &ev, name))
            emit(d, &ev);
        return;
    }

    uint32_t interval = clamp_interval(d, a->interval_ms);
    uint64_t deadline = now_ns + (uint64_t)interval * 1000000ull * RDPS_DISC_LIVENESS_INTERVALS;

    if (p) {
        d->counters.peers_updated++;
        if (!p->refreshed) {
            p->refreshed = true;
            if (p->topic != NULL && rdps__disc_peer_counted(p))
                rdps__disc_tally_change(d, p->topic, &p->source, 1);
        }
        p->interval_ms = interval;
        uint64_t old = p->deadline_ns;
        p->deadline_ns = deadline;
        if (deadline < old)
            rdps__disc_heap_up(d, p->heap_pos);
        else
            rdps__disc_heap_down(d, p->heap_pos);
        if (p->unicast != a->unicast) {
            p->unicast = a->unicast;
            if (p->topic != NULL) {
                struct rdps_disc_event ev =
                    rdps__disc_peer_event(d, p, RDPS_DISC_PEER_UPDATED, a->topic);
                emit(d, &ev);
            }
        }
        return;
    }

    struct rdps_disc_topic *t = rdps__disc_topic_find(d, a->topic_id, a->topic);
    if (t == NULL && d->remote_only_count >= d->cfg.max_remote_only) {
        d->counters.refused_remote_only++;
        return;
    }
    if (d->peer_free == NONE) {
        d->counters.refused_table_full++;
        return;
    }
    i = d->peer_free;
    p = &d->peers[i];
    d->peer_free = p->next;
    d->peer_count++;
    p->source = *src;
    p->session_id = a->session_id;
    p->topic_id = a->topic_id;
    p->hash = hash;
    p->role = role;
    p->reliable = a->reliable;
    p->flow_tag = a->flow_tag;
    p->receiver_id = a->receiver_id;
    /* Announced from the address it names (on InfiniBand without a GRH, the QPN alone). */
    p->addressed = a->qpn == src->qpn && (!src->has_gid || memcmp(a->gid, src->gid, 16) == 0);
    p->refreshed = false;
    p->unicast = a->unicast;
    p->serial = d->next_serial++;
    p->interval_ms = interval;
    p->deadline_ns = deadline;
    rdps__disc_index_insert(d, i);
    d->heap[d->heap_len] = (uint32_t)i;
    p->heap_pos = d->heap_len++;
    rdps__disc_heap_up(d, p->heap_pos);
    rdps__disc_peer_attach(d, i, t, a->topic);
    d->counters.peers_added++;
    if (t) {
        struct rdps_disc_event ev = rdps__disc_peer_event(d, p, RDPS_DISC_PEER_SEEN, a->topic);
        emit(d, &ev);
    }
}

/*
 * Whether (src, name) is a collision already reported and still live: if so its deadline moves
 * to `deadline`. Otherwise the slot to remember it in: a free or expired one, else the one
 * expiring first.
 */
static bool collision_known(struct rdps_discovery *d, const struct rdps_source *src,
                            const char *name, uint64_t now_ns, uint64_t deadline,
                            struct rdps_disc_collision **slot)
{
    struct rdps_disc_collision *free_slot = NULL, *soonest = NULL;
    for (unsigned k = 0; k < RDPS_DISC_COLLISION_SLOTS; k++) {
        struct rdps_disc_collision *c = &d->collisions[k];
        if (c->deadline_ns <= now_ns) {
            if (free_slot == NULL)
                free_slot = c;
            continue;
        }
        if (rdps__source_equal(&c->source, src) && strcmp(c->name, name) == 0) {
            if (deadline > c->deadline_ns)
                c->deadline_ns = deadline;
            return true;
        }
        if (soonest == NULL || c->deadline_ns < soonest->deadline_ns)
            soonest = c;
    }
    *slot = free_slot != NULL ? free_slot : soonest;
    return false;
}

/* An announced name with a local topic's id: TOPIC_COLLISION, once per (announcer, name). */
static void collision_check(struct rdps_discovery *d, const struct rdps_source *src,
                            const struct rdps_announce *a, uint64_t now_ns)
{
    const size_t buckets = sizeof(d->topic_buckets) / sizeof(d->topic_buckets[0]);
    const struct rdps_disc_topic *t = d->topic_buckets[a->topic_id % buckets];
    while (t != NULL && (t->id != a->topic_id || strcmp(t->name, a->topic) == 0))
        t = t->next;
    if (t == NULL)
        return; /* no local topic of that id, or only the announced name's own */
    uint32_t interval = clamp_interval(d, a->interval_ms);
    uint64_t deadline = now_ns + (uint64_t)interval * 1000000ull * RDPS_DISC_LIVENESS_INTERVALS;
    struct rdps_disc_collision *slot;
    if (collision_known(d, src, a->topic, now_ns, deadline, &slot))
        return;
    slot->source = *src;
    slot->deadline_ns = deadline;
    strcpy(slot->name, a->topic);
    d->counters.topic_collisions++;
    /* The callback may remove the local topic: the event refers to copies. */
    char local_name[RDPS_TOPIC_NAME_MAX + 1];
    strcpy(local_name, t->name);
    struct rdps_disc_event ev = {.type = RDPS_DISC_TOPIC_COLLISION,
                                 .role = a->role,
                                 .topic_id = a->topic_id,
                                 .topic = local_name,
                                 .session_id = a->session_id,
                                 .interval_ms = interval,
                                 .reliable = a->reliable,
                                 .flow_tag = a->flow_tag,
                                 .receiver_id = a->receiver_id,
                                 .source = *src,
                                 .other_topic = a->topic};
    emit(d, &ev);
}

void rdps__disc_on_announce(struct rdps_discovery *d, const struct rdps_source *src,
                            const struct rdps_announce *a, uint64_t now_ns)
{
    d->counters.announces_in++;
    if (src == NULL)
        src = &no_source;
    if (a->role != RDPS_ROLE_PUBLISHER && a->role != RDPS_ROLE_SUBSCRIBER) {
        d->counters.refused_bad_role++;
        return;
    }
    peer_announce(d, src, a, now_ns);
    /* After the peer table: a SEEN callback may have created or removed the local topic. */
    if (!a->leaving)
        collision_check(d, src, a, now_ns);
}

/* ---- local endpoints ---- */

/* A topic just became local: its remote-only peers (at most max_remote_only) move to it. */
static void adopt_remote_only(struct rdps_discovery *d, struct rdps_disc_topic *t)
{
    for (int32_t i = d->remote_only_head, next; i != NONE; i = next) {
        struct rdps_disc_peer *p = &d->peers[i];
        next = p->next;
        if (p->topic_id == t->id && strcmp(d->names[p->name_slot], t->name) == 0) {
            rdps__disc_peer_detach(d, i);
            rdps__disc_peer_attach(d, i, t, NULL);
        }
    }
}

/* A topic stopped being local: its peers become remote-only while there is room. */
static void release_topic(struct rdps_discovery *d, struct rdps_disc_topic *t)
{
    while (t->peers != NONE) {
        int32_t i = t->peers;
        if (d->remote_only_count < d->cfg.max_remote_only) {
            rdps__disc_peer_detach(d, i);
            rdps__disc_peer_attach(d, i, NULL, t->name);
        } else {
            struct rdps_disc_event unused;
            char name[RDPS_TOPIC_NAME_MAX + 1];
            d->counters.peers_forgotten++;
            rdps__disc_peer_remove(d, i, &unused, name);
        }
    }
    struct rdps_disc_topic **link = rdps__disc_topic_bucket(d, t->id);
    while (*link != t)
        link = &(*link)->next;
    *link = t->next;
    d->topic_count--;
    free(t);
}

int rdps__disc_local_add(struct rdps_discovery *d, const struct rdps_announce *a, uint64_t now_ns)
{
    if (a->role != RDPS_ROLE_PUBLISHER && a->role != RDPS_ROLE_SUBSCRIBER)
        return rdps__set_err(RDPS_EINVAL, "discovery: unknown role");
    if (d->local_count == d->local_cap) {
        uint32_t cap = d->local_cap ? 2 * d->local_cap : 8;
        struct rdps_disc_local *grown = realloc(d->locals, cap * sizeof(*grown));
        if (grown == NULL)
            return rdps__set_err(RDPS_ENOMEM, "discovery: %u local endpoints", cap);
        d->locals = grown;
        d->local_cap = cap;
    }
    struct rdps_disc_topic *t = rdps__disc_topic_find(d, a->topic_id, a->topic);
    if (t == NULL) {
        t = calloc(1, sizeof(*t));
        if (t == NULL)
            return rdps__set_err(RDPS_ENOMEM, "discovery: local topic");
        t->id = a->topic_id;
        strcpy(t->name, a->topic);
        t->peers = NONE;
        struct rdps_disc_topic **bucket = rdps__disc_topic_bucket(d, t->id);
        t->next = *bucket;
        *bucket = t;
        d->topic_count++;
        adopt_remote_only(d, t);
    }
    t->local[a->role]++;
    struct rdps_disc_local *l = &d->locals[d->local_count++];
    l->ann = *a;
    l->ann.leaving = false;
    l->ann.announce_seq = 0;
    l->topic = t;
    d->next_announce_ns = now_ns; /* the newcomer goes out at the next tick */
    return 0;
}

void rdps__disc_local_set_unicast(struct rdps_discovery *d, enum rdps_announce_role role,
                                  uint32_t session_id, bool unicast, uint64_t now_ns)
{
    for (uint32_t k = 0; k < d->local_count; k++) {
        struct rdps_disc_local *l = &d->locals[k];
        if (l->ann.role != role || l->ann.session_id != session_id)
            continue;
        if (l->ann.unicast != unicast) {
            l->ann.unicast = unicast;
            d->next_announce_ns = now_ns; /* tell the publishers at once */
        }
        return;
    }
}

void rdps__disc_for_each_local(const struct rdps_discovery *d,
                               void (*fn)(void *user, const struct rdps_announce *a), void *user)
{
    for (uint32_t k = 0; k < d->local_count; k++)
        fn(user, &d->locals[k].ann);
}

void rdps__disc_local_remove(struct rdps_discovery *d, enum rdps_announce_role role,
                             uint32_t session_id)
{
    for (uint32_t k = 0; k < d->local_count; k++) {
        struct rdps_disc_local *l = &d->locals[k];
        if (l->ann.role != role || l->ann.session_id != session_id)
            continue;
        l->ann.leaving = true;
        if (d->cfg.send(d->cfg.user, &l->ann) == 0)
            d->counters.announces_sent++;
        else
            d->counters.announce_send_failures++;
        struct rdps_disc_topic *t = l->topic;
        *l = d->locals[--d->local_count];
        if (--t->local[role] == 0 && t->local[3 - role] == 0)
            release_topic(d, t);
        return;
    }
}

/* ---- time ---- */

uint64_t rdps__disc_next_deadline(const struct rdps_discovery *d)
{
    uint64_t next = d->local_count ? d->next_announce_ns : UINT64_MAX;
    if (d->heap_len && d->peers[d->heap[0]].deadline_ns < next)
        next = d->peers[d->heap[0]].deadline_ns;
    return next;
}

/* Whether peer i, due to expire, was heard otherwise within its liveness time: if so its deadline
 * moves to that time plus its liveness (always after now_ns, so the expiry loop moves on). */
static bool heard_lately(struct rdps_discovery *d, uint32_t i, uint64_t now_ns)
{
    struct rdps_disc_peer *p = &d->peers[i];
    if (d->cfg.heard == NULL || p->topic == NULL)
        return false;
    struct rdps_disc_event pe = rdps__disc_peer_event(d, p, RDPS_DISC_PEER_SEEN, p->topic->name);
    uint64_t heard = d->cfg.heard(d->cfg.user, &pe);
    if (heard == 0)
        return false;
    if (heard > now_ns)
        heard = now_ns;
    uint64_t until = heard + (uint64_t)p->interval_ms * 1000000ull * RDPS_DISC_LIVENESS_INTERVALS;
    if (until <= now_ns)
        return false;
    p->deadline_ns = until;
    rdps__disc_heap_down(d, p->heap_pos);
    d->counters.peers_kept_alive++;
    return true;
}

uint64_t rdps__disc_tick(struct rdps_discovery *d, uint64_t now_ns)
{
    if (d->local_count && now_ns >= d->next_announce_ns) {
        bool refused = false;
        for (uint32_t k = 0; k < d->local_count; k++) {
            struct rdps_disc_local *l = &d->locals[k];
            if (d->cfg.send(d->cfg.user, &l->ann) == 0) {
                d->counters.announces_sent++;
                l->ann.announce_seq++;
            } else {
                d->counters.announce_send_failures++;
                refused = true;
            }
        }
        d->next_announce_ns =
            now_ns + (refused ? RDPS_DISC_RETRY_NS : d->cfg.announce_interval_ms * 1000000ull);
    }
    /* Re-read the heap each round: the GONE callback may add or remove local endpoints. */
    while (d->heap_len && d->peers[d->heap[0]].deadline_ns <= now_ns) {
        struct rdps_disc_event ev;
        char name[RDPS_TOPIC_NAME_MAX + 1];
        if (heard_lately(d, d->heap[0], now_ns))
            continue;
        d->counters.peers_expired++;
        if (rdps__disc_peer_remove(d, (int32_t)d->heap[0], &ev, name)) {
            ev.expired = true;
            emit(d, &ev);
        }
    }
    return rdps__disc_next_deadline(d);
}

/* ---- queries ---- */
