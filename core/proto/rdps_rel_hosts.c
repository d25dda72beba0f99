/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rel_hosts.c - the reliable publisher's host records: lookup, reuse, strikes and bans
 * (model: rdps_rel_hosts.h). */
#include "rdps_rel_hosts.h"

#include <stdlib.h>
#include <string.h>

#include <rdps/rdps.h>

#define REL_MAX_STRIKES 16u

int rdps__rel_hosts_init(struct rdps_rel_hosts *hs, const struct rdps_rel_pub_config *cfg,
                         uint32_t receivers)
{
    uint32_t hosts = 2 * receivers, host_buckets = rdps__rel_hash_buckets(hosts);
    hs->cfg = cfg;
    hs->rec = calloc(hosts, sizeof(*hs->rec));
    hs->buckets = malloc((size_t)host_buckets * sizeof(*hs->buckets));
    if (hs->rec == NULL || hs->buckets == NULL)
        return RDPS_ENOMEM;
    for (uint32_t i = 0; i < host_buckets; i++)
        hs->buckets[i] = -1;
    for (uint32_t i = 0; i < hosts; i++)
        hs->rec[i].hash_next = i + 1 < hosts ? (int32_t)(i + 1) : -1;
    hs->free = 0;
    hs->cap = hosts;
    hs->mask = host_buckets - 1;
    return 0;
}

void rdps__rel_hosts_fini(struct rdps_rel_hosts *hs)
{
    free(hs->rec);
    free(hs->buckets);
    hs->rec = NULL;
    hs->buckets = NULL;
}

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

static inline uint32_t host_bucket(const struct rdps_rel_hosts *hs, const struct rdps_source *key)
{
    return (uint32_t)rdps__source_hash(key, hs->cfg->hash_seed ^ 0x6a09e667f3bcc909ull) & hs->mask;
}

static void host_unlink(struct rdps_rel_hosts *hs, int32_t h)
{
    for (int32_t *link = &hs->buckets[host_bucket(hs, &hs->rec[h].key)]; *link >= 0;
         link = &hs->rec[*link].hash_next) {
        if (*link == h) {
            *link = hs->rec[h].hash_next;
            return;
        }
    }
}

/* There are twice as many records as receivers, so when none is free one has no receivers: the
 * least recently used of those (preferring one whose bans are over) is forgotten. */
int32_t rdps__rel_hosts_get(struct rdps_rel_hosts *hs, const struct rdps_source *source,
                            uint64_t now_ns)
{
    struct rdps_source key;
    host_key(source, &key);
    uint32_t b = host_bucket(hs, &key);
    for (int32_t h = hs->buckets[b]; h >= 0; h = hs->rec[h].hash_next)
        if (rdps__source_equal(&hs->rec[h].key, &key)) {
            hs->rec[h].last_used_ns = now_ns;
            return h;
        }
    int32_t h = hs->free;
    if (h >= 0) {
        hs->free = hs->rec[h].hash_next;
    } else {
        bool best_banned = true;
        for (uint32_t k = 0; k < hs->cap; k++) {
            const struct rdps_rel_host *c = &hs->rec[k];
            if (c->entries > 0)
                continue;
            bool banned = c->ban_until > now_ns || c->connect_ban_until > now_ns;
            if (h < 0 || (best_banned && !banned) ||
                (banned == best_banned && c->last_used_ns < hs->rec[h].last_used_ns)) {
                h = (int32_t)k;
                best_banned = banned;
            }
        }
        host_unlink(hs, h); /* h >= 0: at most max_receivers hosts have receivers */
    }
    struct rdps_rel_host *host = &hs->rec[h];
    memset(host, 0, sizeof(*host));
    host->key = key;
    host->used = true;
    host->last_used_ns = now_ns;
    host->nak_epoch = host->share_epoch = UINT64_MAX;
    host->hash_next = hs->buckets[b];
    hs->buckets[b] = h;
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

/* A receiver that paused, for a garbage collection or a page-in storm, is back in flow control
 * once it moves, and the ring keeps its place while it catches up: its first stall costs no
 * ban. */
bool rdps__rel_hosts_strike(struct rdps_rel_hosts *hs, int32_t h, uint64_t now_ns)
{
    struct rdps_rel_host *host = &hs->rec[h];
    uint8_t left = strikes_left(host->strikes, host->strike_ns, now_ns);
    host->strikes = left < REL_MAX_STRIKES ? (uint8_t)(left + 1) : left;
    host->strike_ns = now_ns;
    if (host->strikes < 2)
        return false;
    host->ban_until = now_ns + ban_for(hs->cfg->stall_evict_ns, (uint8_t)(host->strikes - 1));
    return true;
}

void rdps__rel_hosts_connect_failed(struct rdps_rel_hosts *hs, int32_t h, uint64_t now_ns)
{
    struct rdps_rel_host *host = &hs->rec[h];
    uint8_t left = strikes_left(host->connect_strikes, host->connect_ban_until, now_ns);
    host->connect_strikes = left < REL_MAX_STRIKES ? (uint8_t)(left + 1) : left;
    host->connect_ban_until = now_ns + ban_for(RDPS_REL_CONNECT_BAN_NS, host->connect_strikes);
}
