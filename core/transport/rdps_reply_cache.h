/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_reply_cache.h - bounded cache of reply destinations keyed by source (GID or LID, QPN): O(1)
 * lookup and segmented-LRU eviction, no malloc after init. */
#ifndef RDPS_REPLY_CACHE_H
#define RDPS_REPLY_CACHE_H

#include "rdps_transport.h"

#include <stdbool.h>
#include <stdint.h>

/*
 * Model: an entry per source that was answered, at most `capacity`. A lookup
 * hashes the key (seeded, so a sender cannot aim at one bucket) into a
 * chained table with twice as many buckets as entries. Recency is a
 * segmented LRU (two doubly linked lists, every step O(1)): a new entry is
 * on probation; a hit promotes it to the protected segment (three quarters
 * of the entries, rounded up; its least recent one is demoted back to
 * probation when it overflows); a miss on a full cache evicts the least recent entry on
 * probation, and a protected one only when none is on probation. So a
 * source answered again while cached (a publisher a subscriber NAKs and
 * reports to every status interval) is not evicted by any number of sources
 * answered once each (forged streams: issue 28 finding 10); it is demoted
 * only by a quarter of the capacity of other sources each answered twice
 * more recently.
 *
 * The cache never knows what an AH is: it asks make_ah to build one for a
 * miss and retire_ah to give up an evicted one. The verbs transport defers
 * ibv_destroy_ah until sends that may still name it have completed
 * (rdps_ah_retire.h); when it cannot (too many AHs waiting), retire_ah
 * refuses, the evicted entry stays cached and the new source is refused
 * (counted). Receiving never touches this: only a reply does.
 */
struct rdps_reply_key {
    uint8_t gid[16]; /* source GID; on InfiniBand without a GRH all zero and `lid` set */
    uint32_t qpn;
    uint16_t lid;
    uint16_t pad; /* zero: keys are compared with memcmp */
};

struct rdps_reply_cache_ops {
    /* Creates the address handle for a new source: 0 and *ah, or a negative rdps error code. */
    int (*make_ah)(void *user, const void *make_arg, void **ah);
    /* Gives up an evicted AH: 0, or RDPS_EAGAIN when it cannot be taken now. */
    int (*retire_ah)(void *user, void *ah);
    void *user;
};

struct rdps_reply_entry {
    struct rdps_dest dest;
    struct rdps_reply_key key;
    int32_t next_in_bucket; /* -1 ends the chain; links the free list when unused */
    int32_t newer, older;   /* its segment's recency list; -1 at the ends */
    uint8_t segment;        /* RDPS_REPLY_PROBATION or RDPS_REPLY_PROTECTED */
};

enum { RDPS_REPLY_PROBATION = 0, RDPS_REPLY_PROTECTED = 1 };

struct rdps_reply_cache {
    struct rdps_reply_entry *entries;
    int32_t *buckets;
    int32_t newest[2], oldest[2]; /* per segment */
    uint32_t in_segment[2];
    int32_t free_list;
    uint32_t capacity, protected_cap, bucket_mask, used;
    uint32_t qkey;
    uint64_t seed;
    uint64_t hits, misses, created, evictions, refused;
    struct rdps_reply_cache_ops ops;
};

/* capacity entries (>= 1); qkey is what replies are sent with; seed keys the hash. */
int rdps__reply_cache_init(struct rdps_reply_cache *c, uint32_t capacity, uint32_t qkey,
                           uint64_t seed, const struct rdps_reply_cache_ops *ops);
/* Retires every cached AH through ops.retire_ah and frees the tables; accepts a zeroed cache. */
void rdps__reply_cache_fini(struct rdps_reply_cache *c);
/*
 * Destination for `key`: cached, or built with make_ah(user, make_arg)
 * (evicting the least recently used entry when full). Returns 0 and *out;
 * RDPS_EAGAIN when the evicted AH could not be retired; make_ah's error when
 * it failed (both counted in `refused`). *out stays valid until that entry is
 * evicted, which takes `capacity` other sources being answered after it.
 */
int rdps__reply_cache_get(struct rdps_reply_cache *c, const struct rdps_reply_key *key,
                          const void *make_arg, const struct rdps_dest **out);

/* true when `key` is cached (no side effect: neither recency nor counters change). */
bool rdps__reply_cache_contains(const struct rdps_reply_cache *c, const struct rdps_reply_key *key);

#endif /* RDPS_REPLY_CACHE_H */
