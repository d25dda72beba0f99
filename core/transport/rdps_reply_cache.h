/* rdps_reply_cache.h - bounded cache of reply destinations keyed by source GID + QPN (no malloc
 * after init). */
#ifndef RDPS_REPLY_CACHE_H
#define RDPS_REPLY_CACHE_H

#include "rdps_transport.h"

#include <stdbool.h>
#include <stdint.h>

/*
 * The cache never knows what an AH is: it asks make_ah to build one for a
 * miss and free_ah to dispose of an evicted one. The verbs transport defers
 * the ibv_destroy_ah until sends that may still use it have completed.
 */
struct rdps_reply_cache_ops {
    /* Creates the address handle for a new source; returns NULL on failure. */
    void *(*make_ah)(void *user, const void *make_arg);
    void (*free_ah)(void *user, void *ah);
    void *user;
};

struct rdps_reply_entry {
    struct rdps_dest dest;
    uint8_t gid[16];
    uint32_t qpn;
    uint64_t last_used;
    int32_t next_in_bucket; /* -1 ends the chain */
    bool in_use;
};

struct rdps_reply_cache {
    struct rdps_reply_entry *entries;
    int32_t *buckets;
    uint32_t capacity, bucket_mask, used;
    uint32_t qkey;
    uint64_t clock;
    uint64_t hits, misses, evictions, failures;
    struct rdps_reply_cache_ops ops;
};

/* capacity entries (>= 1); qkey is what replies are sent with. */
int rdps__reply_cache_init(struct rdps_reply_cache *c, uint32_t capacity, uint32_t qkey,
                           const struct rdps_reply_cache_ops *ops);
/* Frees every cached AH through ops.free_ah and the tables; accepts a zeroed cache. */
void rdps__reply_cache_fini(struct rdps_reply_cache *c);
/*
 * Destination for (gid, qpn): cached, or built with make_ah(user, make_arg)
 * (evicting the least recently used entry when full). NULL when make_ah failed.
 * The pointer stays valid until that entry is evicted, which takes `capacity`
 * other sources being seen more recently.
 */
const struct rdps_dest *rdps__reply_cache_get(struct rdps_reply_cache *c, const uint8_t gid[16],
                                              uint32_t qpn, const void *make_arg);

/*
 * Source GID of a received UD datagram from the 40 bytes before its payload:
 * an IB GRH (source GID at offset 8), or on RoCE v2 over IPv4 20 unused bytes
 * followed by the IPv4 header (the GID is then the IPv4-mapped source address).
 */
void rdps__grh_source_gid(const uint8_t grh[40], uint8_t gid[16]);

#endif /* RDPS_REPLY_CACHE_H */
