/* SPDX-License-Identifier: BSD-2-Clause */
/* discovery_queries.c - what the runtime asks the discovery engine (counts, walks over a topic's
 * peers, lookups) and the engine's invariant check for the tests. */
#include "discovery_peers.h"

#include <string.h>

static const struct rdps_source no_source;

uint32_t rdps__disc_remote_count(const struct rdps_discovery *d, uint64_t topic_id,
                                 const char *topic, enum rdps_announce_role role)
{
    const struct rdps_disc_topic *t = rdps__disc_topic_find(d, topic_id, topic);
    return t && (role == RDPS_ROLE_PUBLISHER || role == RDPS_ROLE_SUBSCRIBER) ? t->remote[role] : 0;
}

void rdps__disc_for_each_remote(const struct rdps_discovery *d, uint64_t topic_id,
                                const char *topic, enum rdps_announce_role role,
                                rdps_disc_event_fn fn, void *user)
{
    const struct rdps_disc_topic *t = rdps__disc_topic_find(d, topic_id, topic);
    if (t == NULL) {
        /* Not local yet (an endpoint being created asks before it is announced): its peers
         * are still remote-only, and adopting them later raises no event. */
        for (int32_t i = d->remote_only_head; i != NONE; i = d->peers[i].next) {
            const struct rdps_disc_peer *p = &d->peers[i];
            if (p->role != (uint8_t)role || p->topic_id != topic_id ||
                strcmp(d->names[p->name_slot], topic) != 0)
                continue;
            struct rdps_disc_event ev = rdps__disc_peer_event(d, p, RDPS_DISC_PEER_SEEN, topic);
            fn(user, &ev);
        }
        return;
    }
    for (int32_t i = t->peers; i != NONE; i = d->peers[i].next) {
        const struct rdps_disc_peer *p = &d->peers[i];
        if (p->role != (uint8_t)role)
            continue;
        struct rdps_disc_event ev = rdps__disc_peer_event(d, p, RDPS_DISC_PEER_SEEN, t->name);
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
    const struct rdps_disc_topic *t = rdps__disc_topic_find(d, topic_id, topic);
    if (t == NULL)
        return false;
    /* Slots, not the topic's list: a slot stays put while fn runs, a list link may not. */
    for (uint32_t i = *cursor; i < d->cfg.max_peers; i++) {
        const struct rdps_disc_peer *p = &d->peers[i];
        if (p->role != (uint8_t)role || p->topic != t || p->serial >= before)
            continue;
        *cursor = i + 1;
        *ev = rdps__disc_peer_event(d, p, RDPS_DISC_PEER_SEEN, t->name);
        return true;
    }
    *cursor = d->cfg.max_peers;
    return false;
}

uint32_t rdps__disc_remote_reliable_subscribers(const struct rdps_discovery *d, uint64_t topic_id,
                                                const char *topic)
{
    const struct rdps_disc_topic *t = rdps__disc_topic_find(d, topic_id, topic);
    return t ? t->remote_reliable_subs : 0;
}

uint32_t rdps__disc_counted_receivers(const struct rdps_discovery *d, uint64_t topic_id,
                                      const char *topic)
{
    const struct rdps_disc_topic *t = rdps__disc_topic_find(d, topic_id, topic);
    return t ? t->counted_receivers : 0;
}

uint32_t rdps__disc_local_count(const struct rdps_discovery *d, uint64_t topic_id,
                                const char *topic, enum rdps_announce_role role)
{
    const struct rdps_disc_topic *t = rdps__disc_topic_find(d, topic_id, topic);
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
    int32_t i =
        rdps__disc_index_lookup(d, src, session_id, r, rdps__disc_key_hash(d, src, session_id, r));
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
        if (rdps__disc_index_lookup(d, &p->source, p->session_id, p->role, p->hash) != (int32_t)i ||
            p->hash != rdps__disc_key_hash(d, &p->source, p->session_id, p->role))
            return fail(why, "index does not find the peer");
        if (p->interval_ms < d->cfg.min_interval_ms || p->interval_ms > d->cfg.max_interval_ms)
            return fail(why, "interval outside the clamp range");
        if (p->serial >= d->next_serial)
            return fail(why, "serial not yet given out");
        if (p->topic == NULL)
            remote_only++;
        else if (rdps__disc_topic_find(d, p->topic_id, p->topic->name) != p->topic)
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
        if (p->role == 0 || p->topic == NULL || !rdps__disc_peer_counted(p))
            continue;
        counted++;
        struct rdps_source host = rdps__source_host(&p->source);
        uint32_t s =
            rdps__disc_tally_slot(d, p->topic, &host, rdps__disc_tally_hash(d, p->topic, &host));
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
