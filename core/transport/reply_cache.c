/* SPDX-License-Identifier: BSD-2-Clause */
/* reply_cache.c - reply-destination cache: seeded chained hash on the source key, O(1) LRU list. */
#include "rdps_reply_cache.h"

#include "rdps_error.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(struct rdps_reply_key) == 24, "reply key must have no padding (memcmp)");

static uint32_t hash_key(const struct rdps_reply_cache *c, const struct rdps_reply_key *k)
{
    uint64_t w[3];
    memcpy(w, k, sizeof(w));
    uint64_t h = c->seed ^ 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 3; i++) {
        h ^= w[i];
        h *= 0xbf58476d1ce4e5b9ull;
        h ^= h >> 31;
    }
    return (uint32_t)(h ^ (h >> 32));
}

int rdps__reply_cache_init(struct rdps_reply_cache *c, uint32_t capacity, uint32_t qkey,
                           uint64_t seed, const struct rdps_reply_cache_ops *ops)
{
    memset(c, 0, sizeof(*c));
    c->newest = c->oldest = c->free_list = -1;
    if (capacity == 0 || capacity > (1u << 20) || ops == NULL || ops->make_ah == NULL ||
        ops->retire_ah == NULL)
        return rdps__set_err(RDPS_EINVAL, "reply cache: bad capacity %u or ops", capacity);
    uint32_t nbuckets = 1;
    while (nbuckets < capacity * 2)
        nbuckets <<= 1;
    c->entries = calloc(capacity, sizeof(*c->entries));
    c->buckets = malloc(nbuckets * sizeof(*c->buckets));
    if (c->entries == NULL || c->buckets == NULL) {
        free(c->entries);
        free(c->buckets);
        c->entries = NULL;
        c->buckets = NULL;
        return rdps__set_err(RDPS_ENOMEM, "reply cache: out of memory for %u entries", capacity);
    }
    for (uint32_t i = 0; i < nbuckets; i++)
        c->buckets[i] = -1;
    c->capacity = capacity;
    c->bucket_mask = nbuckets - 1;
    c->qkey = qkey;
    c->seed = seed;
    c->ops = *ops;
    return 0;
}

void rdps__reply_cache_fini(struct rdps_reply_cache *c)
{
    if (c == NULL || c->entries == NULL)
        return;
    for (int32_t i = c->newest; i >= 0; i = c->entries[i].older)
        (void)c->ops.retire_ah(c->ops.user, c->entries[i].dest.ah);
    free(c->entries);
    free(c->buckets);
    c->entries = NULL;
    c->buckets = NULL;
    c->newest = c->oldest = c->free_list = -1;
    c->used = 0;
}

static void list_unlink(struct rdps_reply_cache *c, int32_t i)
{
    struct rdps_reply_entry *e = &c->entries[i];
    if (e->newer >= 0)
        c->entries[e->newer].older = e->older;
    else
        c->newest = e->older;
    if (e->older >= 0)
        c->entries[e->older].newer = e->newer;
    else
        c->oldest = e->newer;
}

static void list_push_newest(struct rdps_reply_cache *c, int32_t i)
{
    struct rdps_reply_entry *e = &c->entries[i];
    e->newer = -1;
    e->older = c->newest;
    if (c->newest >= 0)
        c->entries[c->newest].newer = i;
    c->newest = i;
    if (c->oldest < 0)
        c->oldest = i;
}

static void bucket_unlink(struct rdps_reply_cache *c, int32_t index)
{
    struct rdps_reply_entry *e = &c->entries[index];
    int32_t *link = &c->buckets[hash_key(c, &e->key) & c->bucket_mask];
    while (*link != index)
        link = &c->entries[*link].next_in_bucket;
    *link = e->next_in_bucket;
}

/* Frees the least recently used entry for reuse, or RDPS_EAGAIN when its AH cannot be retired. */
static int evict_oldest(struct rdps_reply_cache *c)
{
    int32_t victim = c->oldest;
    int err = c->ops.retire_ah(c->ops.user, c->entries[victim].dest.ah);
    if (err < 0)
        return err;
    bucket_unlink(c, victim);
    list_unlink(c, victim);
    c->entries[victim].dest.ah = NULL;
    c->entries[victim].next_in_bucket = c->free_list;
    c->free_list = victim;
    c->used--;
    c->evictions++;
    return 0;
}

static int32_t find_entry(const struct rdps_reply_cache *c, uint32_t bucket,
                          const struct rdps_reply_key *key)
{
    for (int32_t i = c->buckets[bucket]; i >= 0; i = c->entries[i].next_in_bucket) {
        if (memcmp(&c->entries[i].key, key, sizeof(*key)) == 0)
            return i;
    }
    return -1;
}

bool rdps__reply_cache_contains(const struct rdps_reply_cache *c, const struct rdps_reply_key *key)
{
    return find_entry(c, hash_key(c, key) & c->bucket_mask, key) >= 0;
}

int rdps__reply_cache_get(struct rdps_reply_cache *c, const struct rdps_reply_key *key,
                          const void *make_arg, const struct rdps_dest **out)
{
    uint32_t bucket = hash_key(c, key) & c->bucket_mask;
    int32_t i = find_entry(c, bucket, key);
    if (i >= 0) {
        if (c->newest != i) {
            list_unlink(c, i);
            list_push_newest(c, i);
        }
        c->hits++;
        *out = &c->entries[i].dest;
        return 0;
    }
    c->misses++;
    int err = 0;
    if (c->used == c->capacity)
        err = evict_oldest(c);
    void *ah = NULL;
    if (err == 0)
        err = c->ops.make_ah(c->ops.user, make_arg, &ah);
    if (err < 0) {
        c->refused++;
        *out = NULL;
        return err;
    }
    c->created++;
    int32_t slot;
    if (c->free_list >= 0) {
        slot = c->free_list;
        c->free_list = c->entries[slot].next_in_bucket;
    } else {
        slot = (int32_t)c->used; /* never used before: entries are taken in order */
    }
    c->used++;
    struct rdps_reply_entry *e = &c->entries[slot];
    e->dest.ah = ah;
    e->dest.remote_qpn = key->qpn;
    e->dest.remote_qkey = c->qkey;
    e->key = *key;
    e->next_in_bucket = c->buckets[bucket];
    c->buckets[bucket] = slot;
    list_push_newest(c, slot);
    *out = &e->dest;
    return 0;
}
