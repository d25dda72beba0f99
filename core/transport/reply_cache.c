/* reply_cache.c - reply-destination cache: chained hash on GID + QPN, LRU eviction by scan. */
#include "rdps_reply_cache.h"

#include "rdps_error.h"

#include <stdlib.h>
#include <string.h>

static uint32_t hash_source(const uint8_t gid[16], uint32_t qpn)
{
    /* FNV-1a over the 20 key bytes: cheap and spreads QPNs of one host. */
    uint32_t h = 2166136261u;
    for (int i = 0; i < 16; i++)
        h = (h ^ gid[i]) * 16777619u;
    for (int i = 0; i < 4; i++)
        h = (h ^ ((qpn >> (8 * i)) & 0xffu)) * 16777619u;
    return h;
}

int rdps__reply_cache_init(struct rdps_reply_cache *c, uint32_t capacity, uint32_t qkey,
                           const struct rdps_reply_cache_ops *ops)
{
    memset(c, 0, sizeof(*c));
    if (capacity == 0 || capacity > (1u << 20) || ops == NULL || ops->make_ah == NULL ||
        ops->free_ah == NULL)
        return rdps__set_err(RDPS_EINVAL, "reply cache: bad capacity %u or ops", capacity);
    uint32_t nbuckets = 1;
    while (nbuckets < capacity * 2)
        nbuckets <<= 1;
    c->entries = calloc(capacity, sizeof(*c->entries));
    c->buckets = malloc(nbuckets * sizeof(*c->buckets));
    if (c->entries == NULL || c->buckets == NULL) {
        free(c->entries);
        free(c->buckets);
        memset(c, 0, sizeof(*c));
        return rdps__set_err(RDPS_ENOMEM, "reply cache: out of memory for %u entries", capacity);
    }
    for (uint32_t i = 0; i < nbuckets; i++)
        c->buckets[i] = -1;
    c->capacity = capacity;
    c->bucket_mask = nbuckets - 1;
    c->qkey = qkey;
    c->ops = *ops;
    return 0;
}

void rdps__reply_cache_fini(struct rdps_reply_cache *c)
{
    if (c == NULL || c->entries == NULL)
        return;
    for (uint32_t i = 0; i < c->capacity; i++) {
        if (c->entries[i].in_use)
            c->ops.free_ah(c->ops.user, c->entries[i].dest.ah);
    }
    free(c->entries);
    free(c->buckets);
    memset(c, 0, sizeof(*c));
}

static void unlink_entry(struct rdps_reply_cache *c, int32_t index)
{
    struct rdps_reply_entry *e = &c->entries[index];
    int32_t *link = &c->buckets[hash_source(e->gid, e->qpn) & c->bucket_mask];
    while (*link != index)
        link = &c->entries[*link].next_in_bucket;
    *link = e->next_in_bucket;
}

const struct rdps_dest *rdps__reply_cache_get(struct rdps_reply_cache *c, const uint8_t gid[16],
                                              uint32_t qpn, const void *make_arg)
{
    uint32_t bucket = hash_source(gid, qpn) & c->bucket_mask;
    for (int32_t i = c->buckets[bucket]; i >= 0; i = c->entries[i].next_in_bucket) {
        struct rdps_reply_entry *e = &c->entries[i];
        if (e->qpn == qpn && memcmp(e->gid, gid, 16) == 0) {
            e->last_used = ++c->clock;
            c->hits++;
            return &e->dest;
        }
    }
    c->misses++;
    void *ah = c->ops.make_ah(c->ops.user, make_arg);
    if (ah == NULL) {
        c->failures++;
        return NULL;
    }
    int32_t slot = -1;
    if (c->used < c->capacity) {
        /* Entries are only ever replaced, never removed, so the next unused one is `used`. */
        slot = (int32_t)c->used++;
    } else {
        /* Full: a linear scan for the LRU entry is fine, misses are rare in steady state. */
        slot = 0;
        for (uint32_t i = 1; i < c->capacity; i++) {
            if (c->entries[i].last_used < c->entries[slot].last_used)
                slot = (int32_t)i;
        }
        unlink_entry(c, slot);
        c->ops.free_ah(c->ops.user, c->entries[slot].dest.ah);
        c->evictions++;
    }
    struct rdps_reply_entry *e = &c->entries[slot];
    e->dest.ah = ah;
    e->dest.remote_qpn = qpn;
    e->dest.remote_qkey = c->qkey;
    memcpy(e->gid, gid, 16);
    e->qpn = qpn;
    e->last_used = ++c->clock;
    e->in_use = true;
    e->next_in_bucket = c->buckets[bucket];
    c->buckets[bucket] = slot;
    return &e->dest;
}

void rdps__grh_source_gid(const uint8_t grh[40], uint8_t gid[16])
{
    const uint8_t *ip4 = grh + 20;
    bool zero_head = true;
    for (int i = 0; i < 20; i++) {
        if (grh[i] != 0) {
            zero_head = false;
            break;
        }
    }
    /* An IB GRH starts with IP version 6 in its first nibble, never 20 zero bytes. */
    if (zero_head && (ip4[0] >> 4) == 4) {
        memset(gid, 0, 10);
        gid[10] = 0xff;
        gid[11] = 0xff;
        memcpy(gid + 12, ip4 + 12, 4);
    } else {
        memcpy(gid, grh + 8, 16);
    }
}
