/* SPDX-License-Identifier: BSD-2-Clause */
/* discovery_peers.c - the discovery engine's tables: local topics, the peer index, receivers
 * counted per host, the expiry heap, and each peer's place in them (discovery_peers.h). */
#include "discovery_peers.h"

#include <string.h>

/* ---- local topics ---- */

struct rdps_disc_topic **rdps__disc_topic_bucket(struct rdps_discovery *d, uint64_t id)
{
    return &d->topic_buckets[id % (sizeof(d->topic_buckets) / sizeof(d->topic_buckets[0]))];
}

struct rdps_disc_topic *rdps__disc_topic_find(const struct rdps_discovery *d, uint64_t id,
                                              const char *name)
{
    const size_t buckets = sizeof(d->topic_buckets) / sizeof(d->topic_buckets[0]);
    for (struct rdps_disc_topic *t = d->topic_buckets[id % buckets]; t; t = t->next)
        if (t->id == id && strcmp(t->name, name) == 0)
            return t;
    return NULL;
}

/* ---- the peer index: open addressing, linear probing, backward-shift deletion ---- */

uint32_t rdps__disc_key_hash(const struct rdps_discovery *d, const struct rdps_source *src,
                             uint32_t session_id, uint8_t role)
{
    uint64_t salt = ((uint64_t)session_id << 8 | role) * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(rdps__source_hash(src, d->cfg.hash_seed ^ salt) >> 32);
}

int32_t rdps__disc_index_lookup(const struct rdps_discovery *d, const struct rdps_source *src,
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

void rdps__disc_index_insert(struct rdps_discovery *d, int32_t peer)
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

uint32_t rdps__disc_tally_hash(const struct rdps_discovery *d, const struct rdps_disc_topic *t,
                               const struct rdps_source *host)
{
    return (uint32_t)(rdps__source_hash(host, d->cfg.hash_seed ^ t->id ^ 0x7a11ull) >> 32);
}

/* The slot of (t, host): its tally, or the free slot where it would go. */
uint32_t rdps__disc_tally_slot(const struct rdps_discovery *d, const struct rdps_disc_topic *t,
                               const struct rdps_source *host, uint32_t hash)
{
    uint32_t s = hash & d->index_mask;
    while (d->tallies[s].topic != NULL &&
           (d->tallies[s].topic != t || !rdps__source_equal(&d->tallies[s].host, host)))
        s = (s + 1) & d->index_mask;
    return s;
}

/* A counted peer of topic t on the host of `src` came (delta 1) or went (delta -1). */
void rdps__disc_tally_change(struct rdps_discovery *d, struct rdps_disc_topic *t,
                             const struct rdps_source *src, int delta)
{
    struct rdps_source host = rdps__source_host(src);
    uint32_t hash = rdps__disc_tally_hash(d, t, &host);
    uint32_t s = rdps__disc_tally_slot(d, t, &host, hash);
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
bool rdps__disc_peer_counted(const struct rdps_disc_peer *p)
{
    return p->role == RDPS_ROLE_SUBSCRIBER && p->reliable && p->addressed && p->refreshed;
}

/* ---- the expiry heap ---- */

static void heap_set(struct rdps_discovery *d, uint32_t pos, uint32_t peer)
{
    d->heap[pos] = peer;
    d->peers[peer].heap_pos = pos;
}

void rdps__disc_heap_up(struct rdps_discovery *d, uint32_t pos)
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

void rdps__disc_heap_down(struct rdps_discovery *d, uint32_t pos)
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
    rdps__disc_heap_up(d, pos);
    rdps__disc_heap_down(d, d->peers[last].heap_pos);
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
void rdps__disc_peer_attach(struct rdps_discovery *d, int32_t i, struct rdps_disc_topic *t,
                            const char *name)
{
    struct rdps_disc_peer *p = &d->peers[i];
    p->topic = t;
    p->name_slot = NONE;
    if (t) {
        t->remote[p->role]++;
        if (p->role == RDPS_ROLE_SUBSCRIBER && p->reliable)
            t->remote_reliable_subs++;
        if (rdps__disc_peer_counted(p))
            rdps__disc_tally_change(d, t, &p->source, 1);
    } else {
        p->name_slot = d->name_free[--d->name_free_len];
        strcpy(d->names[p->name_slot], name);
        d->remote_only_count++;
    }
    list_link(d, i);
}

void rdps__disc_peer_detach(struct rdps_discovery *d, int32_t i)
{
    struct rdps_disc_peer *p = &d->peers[i];
    list_unlink(d, i);
    if (p->topic) {
        p->topic->remote[p->role]--;
        if (p->role == RDPS_ROLE_SUBSCRIBER && p->reliable)
            p->topic->remote_reliable_subs--;
        if (rdps__disc_peer_counted(p))
            rdps__disc_tally_change(d, p->topic, &p->source, -1);
    } else {
        d->name_free[d->name_free_len++] = p->name_slot;
        d->remote_only_count--;
    }
    p->topic = NULL;
    p->name_slot = NONE;
}

const char *rdps__disc_peer_topic_name(const struct rdps_discovery *d,
                                       const struct rdps_disc_peer *p)
{
    return p->topic ? p->topic->name : d->names[p->name_slot];
}

/* The event telling what peer p is (topic: its name, valid during the call). */
struct rdps_disc_event rdps__disc_peer_event(const struct rdps_discovery *d,
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
bool rdps__disc_peer_remove(struct rdps_discovery *d, int32_t i, struct rdps_disc_event *ev,
                            char *name_buf)
{
    struct rdps_disc_peer *p = &d->peers[i];
    bool tell = p->topic != NULL;
    if (tell) {
        strcpy(name_buf, p->topic->name);
        *ev = rdps__disc_peer_event(d, p, RDPS_DISC_PEER_GONE, name_buf);
    }
    index_remove(d, i);
    heap_remove(d, p->heap_pos);
    rdps__disc_peer_detach(d, i);
    p->role = 0;
    p->next = d->peer_free;
    d->peer_free = i;
    d->peer_count--;
    return tell;
}
