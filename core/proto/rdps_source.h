/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_source.h - who sent a datagram: the exact sender identity that keys all per-source state. */
#ifndef RDPS_PROTO_SOURCE_H
#define RDPS_PROTO_SOURCE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rdps/rdps.h>

/*
 * A datagram's source as the receiving device reports it, in the public
 * layout (struct rdps_source in rdps.h, so it reaches the application
 * unchanged): the source QPN from the work completion, the source GID from
 * the GRH (RoCE always has one; InfiniBand only for routed or multicast
 * traffic) and, on InfiniBand without a GRH, the source LID. Tables keyed by
 * sender compare all of it exactly (never a hash alone), so two senders can
 * never share state by colliding. Nothing here is authenticated: on RoCE the
 * GID is an IP address any host on the VLAN can forge; see docs/security.md,
 * security model.
 */
_Static_assert(sizeof(struct rdps_source) == 24, "rdps_source must have no padding (memcmp)");

static inline bool rdps__source_equal(const struct rdps_source *a, const struct rdps_source *b)
{
    return memcmp(a, b, sizeof(*a)) == 0;
}

/*
 * The host a source belongs to: the source without its QPN (its GID, or on InfiniBand without a
 * GRH its LID). A QPN is the sender's choice, so state that must hold against one host splitting
 * itself over many QPs is keyed and capped by host (docs/security.md); the host of a
 * source is compared and hashed like a source (rdps__source_equal, rdps__source_hash).
 */
static inline struct rdps_source rdps__source_host(const struct rdps_source *s)
{
    struct rdps_source h = *s;
    h.qpn = 0;
    return h;
}

static inline bool rdps__source_same_host(const struct rdps_source *a, const struct rdps_source *b)
{
    return a->has_gid == b->has_gid && a->lid == b->lid && memcmp(a->gid, b->gid, 16) == 0;
}

/*
 * Seeded 64-bit hash of a source for hash tables. The seed is random per
 * process, so a sender cannot aim datagrams at one bucket.
 */
static inline uint64_t rdps__source_hash(const struct rdps_source *s, uint64_t seed)
{
    uint64_t w[3];
    memcpy(w, s, sizeof(w));
    uint64_t h = seed ^ 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 3; i++) {
        h ^= w[i];
        h *= 0xbf58476d1ce4e5b9ull;
        h ^= h >> 31;
        h *= 0x94d049bb133111ebull;
        h ^= h >> 29;
    }
    return h;
}

#endif /* RDPS_PROTO_SOURCE_H */
