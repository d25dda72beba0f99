/* SPDX-License-Identifier: BSD-2-Clause */
/* reply_cache.c - reply-destination cache: seeded chained hash on the source key, O(1) segmented
 * LRU lists. */
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
    c->newest[0] = c->newest[1] = c->oldest[0] = c->oldest[1] = c->free_list = -1;
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
    c->protected_cap = capacity - capacity / 4;
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
    for (int seg = 0; seg < 2; seg++)
        for (int32_t i = c->newest[seg]; i >= 0; i = c->entries[i].older)
            (void)c->ops.retire_ah(c->ops.user, c->entries[i].dest.ah);
    free(c->entries);
    free(c->buckets);
    c->entries = NULL;
    c->buckets = NULL;
    c->newest[0] = c->newest[1] = c->oldest[0] = c->oldest[1] = c->free_list = -1;
    c->in_segment[0] = c->in_segment[1] = 0;
    c->used = 0;
}

static void list_unlink(struct rdps_reply_cache *c, int32_t i)
{
    struct rdps_reply_entry *e = &c->entries[i];
    int seg = e->segment;
    if (e->newer >= 0)
        c->entries[e->newer].older = e->older;
    else
        c->newest[seg] = e->older;
    if (e->older >= 0)
        c->entries[e->older].newer = e->newer;
    else
        c->oldest[seg] = e->newer;
    c->in_segment[seg]--;
}

static void list_push_newest(struct rdps_reply_cache *c, int32_t i, int seg)
{
    struct rdps_reply_entry *e = &c->entries[i];
    e->segment = (uint8_t)seg;
    e->newer = -1;
    e->older = c->newest[seg];
    if (c->newest[seg] >= 0)
        c->entries[c->newest[seg]].newer = i;
    c->newest[seg] = i;
    if (c->oldest[seg] < 0)
        c->oldest[seg] = i;
    c->in_segment[seg]++;
}

/* A hit: to the front of the protected segment, whose least recent entry goes back on probation
 * when it overflows. */
static void promote(struct rdps_reply_cache *c, int32_t i)
{
    if (c->entries[i].segment == RDPS_REPLY_PROTECTED && c->newest[RDPS_REPLY_PROTECTED] == i)
        return;
    list_unlink(c, i);
    list_push_newest(c, i, RDPS_REPLY_PROTECTED);
    if (c->in_segment[RDPS_REPLY_PROTECTED] > c->protected_cap) {
        int32_t demoted = c->oldest[RDPS_REPLY_PROTECTED];
        list_unlink(c, demoted);
        list_push_newest(c, demoted, RDPS_REPLY_PROBATION);
    }
}

static void bucket_unlink(struct rdps_reply_cache *c, int32_t index)
{
    struct rdps_reply_entry *e = &c->entries[index];
    int32_t *link = &c->buckets[hash_key(c, &e->key) & c->bucket_mask];
    while (*link != index)
        link = &c->entries[*link].next_in_bucket;
    *link = e->next_in_bucket;
}

/* Frees the least recent entry on probation (a protected one only when none is) for reuse, or
 * RDPS_EAGAIN when its AH cannot be retired. */
static int evict_oldest(struct rdps_reply_cache *c)
{
    int32_t victim = c->oldest[RDPS_REPLY_PROBATION] >= 0 ? c->oldest[RDPS_REPLY_PROBATION]
                                                          : c->oldest[RDPS_REPLY_PROTECTED];
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
        promote(c, i);
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
    e->dest.no_grh = key->lid != 0; /* a key carries a LID only for a source without a GRH */
    e->dest.src_path_bits = 0;
    e->key = *key;
    e->next_in_bucket = c->buckets[bucket];
    c->buckets[bucket] = slot;
    list_push_newest(c, slot, RDPS_REPLY_PROBATION);
    *out = &e->dest;
    return 0;
}
