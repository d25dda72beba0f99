/* SPDX-License-Identifier: BSD-2-Clause */
/* discovery_engine.c - sans-IO discovery: bounded peer table keyed by source, expiry heap, local
 * announcement schedule (model in discovery_engine.h). */
#include "discovery_engine.h"

#include <stdlib.h>
#include <string.h>

#include "rdps_error.h"

#define NONE (-1)

struct rdps_disc_peer {
    struct rdps_source source;
    uint32_t session_id;
    uint64_t topic_id;
    uint32_t hash;
    uint32_t interval_ms;
    uint64_t deadline_ns;
    uint32_t heap_pos;
    uint8_t role;                  /* 0: free */
    bool reliable;                 /* as first announced */
    uint32_t flow_tag;             /* as first announced */
    uint32_t receiver_id;          /* as first announced */
    bool addressed;                /* first announcement's body gid/qpn were its sender's */
    bool refreshed;                /* announced again after its first announcement */
    bool unicast;                  /* as last announced */
    uint64_t serial;               /* admission number */
    int32_t name_slot;             /* remote-only: its topic name in d->names, else NONE */
    struct rdps_disc_topic *topic; /* local topic, or NULL: remote-only */
    int32_t prev, next;            /* in topic->peers or d->remote_only_head; next: free list */
};

struct rdps_disc_topic {
    struct rdps_disc_topic *next; /* bucket chain */
    uint64_t id;
    uint32_t local[3];             /* local endpoints by role (index 1, 2) */
    uint32_t remote[3];            /* live peers by role */
    uint32_t remote_reliable_subs; /* of the subscribers, those that asked for reliability */
    uint32_t counted_receivers;    /* sum over hosts of min(RECEIVERS_PER_HOST, its tally) */
    int32_t peers;                 /* list head */
    char name[RDPS_TOPIC_NAME_MAX + 1];
};

struct rdps_disc_local {
    struct rdps_announce ann;
    struct rdps_disc_topic *topic;
};

/* The receivers counted on one host for one local topic (rdps__disc_counted_receivers). */
struct rdps_disc_tally {
    const struct rdps_disc_topic *topic; /* NULL: free slot */
    struct rdps_source host;             /* rdps__source_host() */
    uint32_t hash;
    uint32_t count; /* counted peers of the topic on the host */
};

/* A TOPIC_COLLISION already reported: `name`, announced by `source`, until deadline_ns. */
struct rdps_disc_collision {
    struct rdps_source source;
    uint64_t deadline_ns; /* free (or expired) once now_ns reaches it; 0: never used */
    char name[RDPS_TOPIC_NAME_MAX + 1];
};

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

/* ---- local topics ---- */

static struct rdps_disc_topic **topic_bucket(struct rdps_discovery *d, uint64_t id)
{
    return &d->topic_buckets[id % (sizeof(d->topic_buckets) / sizeof(d->topic_buckets[0]))];
}

static struct rdps_disc_topic *topic_find(const struct rdps_discovery *d, uint64_t id,
                                          const char *name)
{
    const size_t buckets = sizeof(d->topic_buckets) / sizeof(d->topic_buckets[0]);
    for (struct rdps_disc_topic *t = d->topic_buckets[id % buckets]; t; t = t->next)
        if (t->id == id && strcmp(t->name, name) == 0)
            return t;
    return NULL;
}

/* ---- the peer index: open addressing, linear probing, backward-shift deletion ---- */

static uint32_t key_hash(const struct rdps_discovery *d, const struct rdps_source *src,
                         uint32_t session_id, uint8_t role)
{
    uint64_t salt = ((uint64_t)session_id << 8 | role) * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(rdps__source_hash(src, d->cfg.hash_seed ^ salt) >> 32);
}

static int32_t index_lookup(const struct rdps_discovery *d, const struct rdps_source *src,
                            uint32_t session_id, uint8_t role, uint32_t hash)
{
    for (uint32_t s = hash & d->index_mask;; s = (s + 1) & d->index_mask) {
        uint32_t v = d->index[s];
        if (v == 0)
            return NONE;
        const struct rdps_disc_peer *p = &d->peers[v - 1];
        if (p->hash == hash && p->session_id == session_id && p->role == role &&
            rdps__source_equal(&p->source, src))
            return (int32_t)(v - 1);
    }
}

static void index_insert(struct rdps_discovery *d, int32_t peer)
{
    uint32_t s = d->peers[peer].hash & d->index_mask;
    while (d->index[s] != 0)
        s = (s + 1) & d->index_mask;
    d->index[s] = (uint32_t)peer + 1;
}

static void index_remove(struct rdps_discovery *d, int32_t peer)
{
    uint32_t s = d->peers[peer].hash & d->index_mask;
    while (d->index[s] != (uint32_t)peer + 1)
        s = (s + 1) & d->index_mask;
    /* Shift later members of the probe run back so lookups never stop at a hole. */
    for (uint32_t j = (s + 1) & d->index_mask; d->index[j] != 0; j = (j + 1) & d->index_mask) {
        uint32_t home = d->peers[d->index[j] - 1].hash & d->index_mask;
        if (((j - home) & d->index_mask) >= ((j - s) & d->index_mask)) {
            d->index[s] = d->index[j];
            s = j;
        }
    }
    d->index[s] = 0;
}

/* ---- receivers counted by host: tallies per (local topic, host), open addressing ---- */

static uint32_t tally_hash(const struct rdps_discovery *d, const struct rdps_disc_topic *t,
                           const struct rdps_source *host)
{
    return (uint32_t)(rdps__source_hash(host, d->cfg.hash_seed ^ t->id ^ 0x7a11ull) >> 32);
}

/* The slot of (t, host): its tally, or the free slot where it would go. */
static uint32_t tally_slot(const struct rdps_discovery *d, const struct rdps_disc_topic *t,
                           const struct rdps_source *host, uint32_t hash)
{
    uint32_t s = hash & d->index_mask;
    while (d->tallies[s].topic != NULL &&
           (d->tallies[s].topic != t || !rdps__source_equal(&d->tallies[s].host, host)))
        s = (s + 1) & d->index_mask;
    return s;
}

/* A counted peer of topic t on the host of `src` came (delta 1) or went (delta -1). */
static void tally_change(struct rdps_discovery *d, struct rdps_disc_topic *t,
                         const struct rdps_source *src, int delta)
{
    struct rdps_source host = rdps__source_host(src);
    uint32_t hash = tally_hash(d, t, &host);
    uint32_t s = tally_slot(d, t, &host, hash);
    struct rdps_disc_tally *e = &d->tallies[s];
    if (delta > 0) {
        if (e->topic == NULL)
            *e = (struct rdps_disc_tally){.topic = t, .host = host, .hash = hash};
        if (++e->count <= RDPS_DISC_RECEIVERS_PER_HOST)
            t->counted_receivers++;
        return;
    }
    if (e->count-- <= RDPS_DISC_RECEIVERS_PER_HOST)
        t->counted_receivers--;
    if (e->count > 0)
        return;
    /* Backward-shift deletion, as the peer index. */
    e->topic = NULL;
    for (uint32_t j = (s + 1) & d->index_mask; d->tallies[j].topic != NULL;
         j = (j + 1) & d->index_mask) {
        uint32_t home = d->tallies[j].hash & d->index_mask;
        if (((j - home) & d->index_mask) >= ((j - s) & d->index_mask)) {
            d->tallies[s] = d->tallies[j];
            d->tallies[j].topic = NULL;
            s = j;
        }
    }
}

/*
 * Whether peer p counts as a receiver of its topic for the NAK backoff: a reliable subscriber
 * whose announcement named the address it came from, and that announced again since (one
 * datagram, sent once, counts nothing).
 */
static bool peer_counted(const struct rdps_disc_peer *p)
{
    return p->role == RDPS_ROLE_SUBSCRIBER && p->reliable && p->addressed && p->refreshed;
}

/* ---- the expiry heap ---- */

static void heap_set(struct rdps_discovery *d, uint32_t pos, uint32_t peer)
{
    d->heap[pos] = peer;
    d->peers[peer].heap_pos = pos;
}

static void heap_up(struct rdps_discovery *d, uint32_t pos)
{
    uint32_t peer = d->heap[pos];
    uint64_t key = d->peers[peer].deadline_ns;
    while (pos > 0) {
        uint32_t parent = (pos - 1) / 2;
        if (d->peers[d->heap[parent]].deadline_ns <= key)
            break;
        heap_set(d, pos, d->heap[parent]);
        pos = parent;
    }
    heap_set(d, pos, peer);
}

static void heap_down(struct rdps_discovery *d, uint32_t pos)
{
    uint32_t peer = d->heap[pos];
    uint64_t key = d->peers[peer].deadline_ns;
    for (;;) {
        uint32_t child = 2 * pos + 1;
        if (child >= d->heap_len)
            break;
        if (child + 1 < d->heap_len &&
            d->peers[d->heap[child + 1]].deadline_ns < d->peers[d->heap[child]].deadline_ns)
            child++;
        if (d->peers[d->heap[child]].deadline_ns >= key)
            break;
        heap_set(d, pos, d->heap[child]);
        pos = child;
    }
    heap_set(d, pos, peer);
}

static void heap_remove(struct rdps_discovery *d, uint32_t pos)
{
    uint32_t last = d->heap[--d->heap_len];
    if (pos == d->heap_len)
        return;
    heap_set(d, pos, last);
    heap_up(d, pos);
    heap_down(d, d->peers[last].heap_pos);
}

/* ---- peer lists: a local topic's peers, or the remote-only ones ---- */

static int32_t *list_head(struct rdps_discovery *d, struct rdps_disc_topic *t)
{
    return t ? &t->peers : &d->remote_only_head;
}

static void list_link(struct rdps_discovery *d, int32_t i)
{
    struct rdps_disc_peer *p = &d->peers[i];
    int32_t *head = list_head(d, p->topic);
    p->prev = NONE;
    p->next = *head;
    if (*head != NONE)
        d->peers[*head].prev = i;
    *head = i;
}

static void list_unlink(struct rdps_discovery *d, int32_t i)
{
    struct rdps_disc_peer *p = &d->peers[i];
    if (p->prev != NONE)
        d->peers[p->prev].next = p->next;
    else
        *list_head(d, p->topic) = p->next;
    if (p->next != NONE)
        d->peers[p->next].prev = p->prev;
}

/* Puts peer i under topic t (local) or, with t == NULL, among the remote-only peers named `name`.
 */
static void peer_attach(struct rdps_discovery *d, int32_t i, struct rdps_disc_topic *t,
                        const char *name)
{
    struct rdps_disc_peer *p = &d->peers[i];
    p->topic = t;
    p->name_slot = NONE;
    if (t) {
        t->remote[p->role]++;
        if (p->role == RDPS_ROLE_SUBSCRIBER && p->reliable)
            t->remote_reliable_subs++;
        if (peer_counted(p))
            tally_change(d, t, &p->source, 1);
    } else {
        p->name_slot = d->name_free[--d->name_free_len];
        strcpy(d->names[p->name_slot], name);
        d->remote_only_count++;
    }
    list_link(d, i);
}

static void peer_detach(struct rdps_discovery *d, int32_t i)
{
    struct rdps_disc_peer *p = &d->peers[i];
    list_unlink(d, i);
    if (p->topic) {
        p->topic->remote[p->role]--;
        if (p->role == RDPS_ROLE_SUBSCRIBER && p->reliable)
            p->topic->remote_reliable_subs--;
        if (peer_counted(p))
            tally_change(d, p->topic, &p->source, -1);
    } else {
        d->name_free[d->name_free_len++] = p->name_slot;
        d->remote_only_count--;
    }
    p->topic = NULL;
    p->name_slot = NONE;
}

static const char *peer_topic_name(const struct rdps_discovery *d, const struct rdps_disc_peer *p)
{
    return p->topic ? p->topic->name : d->names[p->name_slot];
}

/* The event telling what peer p is (topic: its name, valid during the call). */
static struct rdps_disc_event peer_event(const struct rdps_discovery *d,
                                         const struct rdps_disc_peer *p,
                                         enum rdps_disc_event_type type, const char *topic)
{
    return (struct rdps_disc_event){.type = type,
                                    .role = (enum rdps_announce_role)p->role,
                                    .topic_id = p->topic_id,
                                    .topic = topic,
                                    .session_id = p->session_id,
                                    .interval_ms = p->interval_ms,
                                    .reliable = p->reliable,
                                    .flow_tag = p->flow_tag,
                                    .receiver_id = p->receiver_id,
                                    .source = p->source,
                                    .serial = p->serial,
                                    .addressed = p->addressed,
                                    .unicast = p->unicast,
                                    .slot = (uint32_t)(p - d->peers)};
}

/* Removes peer i from every structure; fills *ev (GONE) first when its topic is local. */
static bool peer_remove(struct rdps_discovery *d, int32_t i, struct rdps_disc_event *ev,
                        char *name_buf)
{
    struct rdps_disc_peer *p = &d->peers[i];
    bool tell = p->topic != NULL;
    if (tell) {
        strcpy(name_buf, p->topic->name);
        *ev = peer_event(d, p, RDPS_DISC_PEER_GONE, name_buf);
    }
    index_remove(d, i);
    heap_remove(d, p->heap_pos);
    peer_detach(d, i);
    p->role = 0;
    p->next = d->peer_free;
    d->peer_free = i;
    d->peer_count--;
    return tell;
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
    uint32_t hash = key_hash(d, src, a->session_id, role);
    int32_t i = index_lookup(d, src, a->session_id, role, hash);
    struct rdps_disc_peer *p = i != NONE ? &d->peers[i] : NULL;
    if (p && (p->topic_id != a->topic_id || strcmp(peer_topic_name(d, p), a->topic) != 0)) {
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
        if (peer_remove(d, i, &ev, name))
            emit(d, &ev);
        return;
    }

    uint32_t interval = clamp_interval(d, a->interval_ms);
    uint64_t deadline = now_ns + (uint64_t)interval * 1000000ull * RDPS_DISC_LIVENESS_INTERVALS;

    if (p) {
        d->counters.peers_updated++;
        if (!p->refreshed) {
            p->refreshed = true;
            if (p->topic != NULL && peer_counted(p))
                tally_change(d, p->topic, &p->source, 1);
        }
        p->interval_ms = interval;
        uint64_t old = p->deadline_ns;
        p->deadline_ns = deadline;
        if (deadline < old)
            heap_up(d, p->heap_pos);
        else
            heap_down(d, p->heap_pos);
        if (p->unicast != a->unicast) {
            p->unicast = a->unicast;
            if (p->topic != NULL) {
                struct rdps_disc_event ev = peer_event(d, p, RDPS_DISC_PEER_UPDATED, a->topic);
                emit(d, &ev);
            }
        }
        return;
    }

    struct rdps_disc_topic *t = topic_find(d, a->topic_id, a->topic);
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
    index_insert(d, i);
    d->heap[d->heap_len] = (uint32_t)i;
    p->heap_pos = d->heap_len++;
    heap_up(d, p->heap_pos);
    peer_attach(d, i, t, a->topic);
    d->counters.peers_added++;
    if (t) {
        struct rdps_disc_event ev = peer_event(d, p, RDPS_DISC_PEER_SEEN, a->topic);
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
            peer_detach(d, i);
            peer_attach(d, i, t, NULL);
        }
    }
}

/* A topic stopped being local: its peers become remote-only while there is room. */
static void release_topic(struct rdps_discovery *d, struct rdps_disc_topic *t)
{
    while (t->peers != NONE) {
        int32_t i = t->peers;
        if (d->remote_only_count < d->cfg.max_remote_only) {
            peer_detach(d, i);
            peer_attach(d, i, NULL, t->name);
        } else {
            struct rdps_disc_event unused;
            char name[RDPS_TOPIC_NAME_MAX + 1];
            d->counters.peers_forgotten++;
            peer_remove(d, i, &unused, name);
        }
    }
    struct rdps_disc_topic **link = topic_bucket(d, t->id);
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
    struct rdps_disc_topic *t = topic_find(d, a->topic_id, a->topic);
    if (t == NULL) {
        t = calloc(1, sizeof(*t));
        if (t == NULL)
            return rdps__set_err(RDPS_ENOMEM, "discovery: local topic");
        t->id = a->topic_id;
        strcpy(t->name, a->topic);
        t->peers = NONE;
        struct rdps_disc_topic **bucket = topic_bucket(d, t->id);
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
    struct rdps_disc_event pe = peer_event(d, p, RDPS_DISC_PEER_SEEN, p->topic->name);
    uint64_t heard = d->cfg.heard(d->cfg.user, &pe);
    if (heard == 0)
        return false;
    if (heard > now_ns)
        heard = now_ns;
    uint64_t until = heard + (uint64_t)p->interval_ms * 1000000ull * RDPS_DISC_LIVENESS_INTERVALS;
    if (until <= now_ns)
        return false;
    p->deadline_ns = until;
    heap_down(d, p->heap_pos);
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
        if (peer_remove(d, (int32_t)d->heap[0], &ev, name)) {
            ev.expired = true;
            emit(d, &ev);
        }
    }
    return rdps__disc_next_deadline(d);
}

/* ---- queries ---- */

uint32_t rdps__disc_remote_count(const struct rdps_discovery *d, uint64_t topic_id,
                                 const char *topic, enum rdps_announce_role role)
{
    const struct rdps_disc_topic *t = topic_find(d, topic_id, topic);
    return t && (role == RDPS_ROLE_PUBLISHER || role == RDPS_ROLE_SUBSCRIBER) ? t->remote[role] : 0;
}

void rdps__disc_for_each_remote(const struct rdps_discovery *d, uint64_t topic_id,
                                const char *topic, enum rdps_announce_role role,
                                rdps_disc_event_fn fn, void *user)
{
    const struct rdps_disc_topic *t = topic_find(d, topic_id, topic);
    if (t == NULL) {
        /* Not local yet (an endpoint being created asks before it is announced): its peers
         * are still remote-only, and adopting them later raises no event. */
        for (int32_t i = d->remote_only_head; i != NONE; i = d->peers[i].next) {
            const struct rdps_disc_peer *p = &d->peers[i];
            if (p->role != (uint8_t)role || p->topic_id != topic_id ||
                strcmp(d->names[p->name_slot], topic) != 0)
                continue;
            struct rdps_disc_event ev = peer_event(d, p, RDPS_DISC_PEER_SEEN, topic);
            fn(user, &ev);
        }
        return;
    }
    for (int32_t i = t->peers; i != NONE; i = d->peers[i].next) {
        const struct rdps_disc_peer *p = &d->peers[i];
        if (p->role != (uint8_t)role)
            continue;
        struct rdps_disc_event ev = peer_event(d, p, RDPS_DISC_PEER_SEEN, t->name);
        fn(user, &ev);
    }
}

uint64_t rdps__disc_next_serial(const struct rdps_discovery *d)
{
    return d->next_serial;
}

bool rdps__disc_replay_next(const struct rdps_discovery *d, uint64_t topic_id, const char *topic,
                            enum rdps_announce_role role, uint64_t before, uint32_t *cursor,
                            struct rdps_disc_event *ev)
{
    const struct rdps_disc_topic *t = topic_find(d, topic_id, topic);
    if (t == NULL)
        return false;
    /* Slots, not the topic's list: a slot stays put while fn runs, a list link may not. */
    for (uint32_t i = *cursor; i < d->cfg.max_peers; i++) {
        const struct rdps_disc_peer *p = &d->peers[i];
        if (p->role != (uint8_t)role || p->topic != t || p->serial >= before)
            continue;
        *cursor = i + 1;
        *ev = peer_event(d, p, RDPS_DISC_PEER_SEEN, t->name);
        return true;
    }
    *cursor = d->cfg.max_peers;
    return false;
}

uint32_t rdps__disc_remote_reliable_subscribers(const struct rdps_discovery *d, uint64_t topic_id,
                                                const char *topic)
{
    const struct rdps_disc_topic *t = topic_find(d, topic_id, topic);
    return t ? t->remote_reliable_subs : 0;
}

uint32_t rdps__disc_counted_receivers(const struct rdps_discovery *d, uint64_t topic_id,
                                      const char *topic)
{
    const struct rdps_disc_topic *t = topic_find(d, topic_id, topic);
    return t ? t->counted_receivers : 0;
}

uint32_t rdps__disc_local_count(const struct rdps_discovery *d, uint64_t topic_id,
                                const char *topic, enum rdps_announce_role role)
{
    const struct rdps_disc_topic *t = topic_find(d, topic_id, topic);
    return t && (role == RDPS_ROLE_PUBLISHER || role == RDPS_ROLE_SUBSCRIBER) ? t->local[role] : 0;
}

uint32_t rdps__disc_peer_count(const struct rdps_discovery *d)
{
    return d->peer_count;
}

uint32_t rdps__disc_remote_only_count(const struct rdps_discovery *d)
{
    return d->remote_only_count;
}

bool rdps__disc_peer_find(const struct rdps_discovery *d, const struct rdps_source *src,
                          uint32_t session_id, enum rdps_announce_role role,
                          struct rdps_disc_peer_info *out)
{
    if (src == NULL)
        src = &no_source;
    uint8_t r = (uint8_t)role;
    int32_t i = index_lookup(d, src, session_id, r, key_hash(d, src, session_id, r));
    if (i == NONE)
        return false;
    const struct rdps_disc_peer *p = &d->peers[i];
    *out = (struct rdps_disc_peer_info){.topic_id = p->topic_id,
                                        .local_topic = p->topic != NULL,
                                        .interval_ms = p->interval_ms,
                                        .deadline_ns = p->deadline_ns};
    return true;
}

const struct rdps_disc_counters *rdps__disc_counters(const struct rdps_discovery *d)
{
    return &d->counters;
}

size_t rdps__disc_memory_bytes(const struct rdps_discovery *d)
{
    size_t remote_only = d->cfg.max_remote_only ? d->cfg.max_remote_only : 1;
    return sizeof(*d) + d->cfg.max_peers * (sizeof(*d->peers) + sizeof(*d->heap)) +
           (d->index_mask + 1) * sizeof(*d->index) +
           remote_only * (sizeof(*d->names) + sizeof(*d->name_free)) +
           d->topic_count * sizeof(struct rdps_disc_topic) + d->local_cap * sizeof(*d->locals) +
           RDPS_DISC_COLLISION_SLOTS * sizeof(*d->collisions) +
           (d->index_mask + 1) * sizeof(*d->tallies);
}

static int fail(const char **why, const char *reason)
{
    if (why)
        *why = reason;
    return -1;
}

int rdps__disc_check(const struct rdps_discovery *d, const char **why)
{
    uint32_t used = 0, remote_only = 0;
    if (d->peer_count > d->cfg.max_peers || d->heap_len != d->peer_count)
        return fail(why, "peer count above the cap or out of step with the heap");
    if (d->remote_only_count > d->cfg.max_remote_only ||
        d->name_free_len + d->remote_only_count != d->cfg.max_remote_only)
        return fail(why, "remote-only count above its cap or name slots leaked");
    for (uint32_t i = 0; i < d->cfg.max_peers; i++) {
        const struct rdps_disc_peer *p = &d->peers[i];
        if (p->role == 0)
            continue;
        used++;
        if (p->heap_pos >= d->heap_len || d->heap[p->heap_pos] != i)
            return fail(why, "heap position");
        if (p->heap_pos > 0 &&
            d->peers[d->heap[(p->heap_pos - 1) / 2]].deadline_ns > p->deadline_ns)
            return fail(why, "heap order");
        if (index_lookup(d, &p->source, p->session_id, p->role, p->hash) != (int32_t)i ||
            p->hash != key_hash(d, &p->source, p->session_id, p->role))
            return fail(why, "index does not find the peer");
        if (p->interval_ms < d->cfg.min_interval_ms || p->interval_ms > d->cfg.max_interval_ms)
            return fail(why, "interval outside the clamp range");
        if (p->serial >= d->next_serial)
            return fail(why, "serial not yet given out");
        if (p->topic == NULL)
            remote_only++;
        else if (topic_find(d, p->topic_id, p->topic->name) != p->topic)
            return fail(why, "peer of a topic that is not local");
        else if (p->topic->local[1] + p->topic->local[2] == 0)
            return fail(why, "local topic without local endpoints");
    }
    if (used != d->peer_count || remote_only != d->remote_only_count)
        return fail(why, "peer or remote-only count");
    /* Tallies: each counted peer of a local topic is in its host's, and nothing else is. */
    uint32_t counted = 0, tallied = 0;
    for (uint32_t i = 0; i < d->cfg.max_peers; i++) {
        const struct rdps_disc_peer *p = &d->peers[i];
        if (p->role == 0 || p->topic == NULL || !peer_counted(p))
            continue;
        counted++;
        struct rdps_source host = rdps__source_host(&p->source);
        uint32_t s = tally_slot(d, p->topic, &host, tally_hash(d, p->topic, &host));
        if (d->tallies[s].topic == NULL || d->tallies[s].count == 0)
            return fail(why, "a counted receiver without its host's tally");
    }
    for (uint32_t s = 0; s <= d->index_mask; s++)
        if (d->tallies[s].topic != NULL)
            tallied += d->tallies[s].count;
    if (counted != tallied)
        return fail(why, "host tallies do not add up to the counted receivers");
    uint32_t topics = 0;
    for (unsigned b = 0; b < sizeof(d->topic_buckets) / sizeof(d->topic_buckets[0]); b++) {
        for (const struct rdps_disc_topic *t = d->topic_buckets[b]; t; t = t->next) {
            uint32_t n[3] = {0, 0, 0}, reliable = 0;
            topics++;
            for (int32_t i = t->peers; i != NONE; i = d->peers[i].next) {
                n[d->peers[i].role]++;
                reliable += d->peers[i].role == RDPS_ROLE_SUBSCRIBER && d->peers[i].reliable;
            }
            if (n[1] != t->remote[1] || n[2] != t->remote[2] || reliable != t->remote_reliable_subs)
                return fail(why, "per-topic remote counts");
            uint32_t by_host = 0;
            for (uint32_t s = 0; s <= d->index_mask; s++)
                if (d->tallies[s].topic == t)
                    by_host += d->tallies[s].count < RDPS_DISC_RECEIVERS_PER_HOST
                                   ? d->tallies[s].count
                                   : RDPS_DISC_RECEIVERS_PER_HOST;
            if (by_host != t->counted_receivers)
                return fail(why, "per-topic receivers counted by host");
        }
    }
    if (topics != d->topic_count)
        return fail(why, "topic count");
    return 0;
}
