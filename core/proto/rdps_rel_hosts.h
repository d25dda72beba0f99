/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rel_hosts.h - the reliable publisher's host records: the hosts its receivers run on, their
 * bans and their repair allowances (under the receivers table, rdps_rel_receivers.h). */
#ifndef RDPS_PROTO_REL_HOSTS_H
#define RDPS_PROTO_REL_HOSTS_H

#include <stdbool.h>
#include <stdint.h>

#include "rdps_rel_pub_types.h"

/*
 * Model
 * -----
 * A host is the GID of a source, or its LID on InfiniBand without a GRH (the QPN is the sender's
 * choice, the host is not, short of forging it). The receivers table caps its receivers per host
 * and counts them here; a host's NAKs spend one allowance per repair interval, and its unicast
 * repairs past the budget one share (both refilled at the first use in the repair budget's epoch,
 * which the caller passes); stall evictions and connects that never reported ban the host for a
 * time that doubles with each one (one step forgotten per RDPS_REL_STRIKE_DECAY_NS without one).
 * There are twice as many records as receivers, so a record outlives its receivers (and a ban
 * does, too) until its slot is needed for another host: then the least recently used record
 * without receivers goes, one whose bans are over first. O(1) lookup by a seeded hash; calls no
 * other layer.
 */

struct rdps_rel_host {
    struct rdps_source key; /* GID or LID only: qpn 0 */
    int32_t hash_next;      /* bucket chain, or the free list */
    bool used;
    uint32_t entries;   /* receivers of this host in the table */
    uint32_t announced; /* ... of which discovery announced */
    uint64_t last_used_ns;
    int64_t nak_tokens; /* repair bytes its NAKs may still schedule this interval */
    uint64_t nak_epoch; /* the budget's epoch when nak_tokens was filled */
    /* Its share of unicast repairs past the budget while the window or ring holds the publisher:
     * repair_share_bytes per interval (share_epoch: the budget's epoch at the last fill). */
    int64_t share_tokens;
    uint64_t share_epoch;
    uint64_t ban_until; /* stall evictions: none of its receivers (re)joins flow control before */
    uint64_t strike_ns; /* the latest stall eviction */
    uint8_t strikes;
    uint8_t connect_strikes;    /* announced receivers that never reported */
    uint64_t connect_ban_until; /* ... its receivers hold no data before this */
};

struct rdps_rel_hosts {
    const struct rdps_rel_pub_config *cfg; /* the engine's */
    struct rdps_rel_host *rec;             /* cap records */
    int32_t *buckets;
    uint32_t cap, mask;
    int32_t free;
};

/* Hash buckets for a table of n entries: a power of two, at least 2n. */
static inline uint32_t rdps__rel_hash_buckets(uint32_t n)
{
    uint32_t buckets = 2;
    while (buckets < 2 * n)
        buckets <<= 1;
    return buckets;
}

/* Records for `receivers` receivers (twice as many). RDPS_ENOMEM. */
int rdps__rel_hosts_init(struct rdps_rel_hosts *hs, const struct rdps_rel_pub_config *cfg,
                         uint32_t receivers);
void rdps__rel_hosts_fini(struct rdps_rel_hosts *hs);

/* The host record of `source`, created if absent (never fails while at most `receivers` hosts have
 * receivers). */
int32_t rdps__rel_hosts_get(struct rdps_rel_hosts *hs, const struct rdps_source *source,
                            uint64_t now_ns);

/* A stall eviction of one of host h's receivers. The first one costs no ban; from the second
 * within the decay period, none of its receivers (re)joins for stall_evict_ns, doubling. Returns
 * true when it banned the host. */
bool rdps__rel_hosts_strike(struct rdps_rel_hosts *hs, int32_t h, uint64_t now_ns);
/* An announced receiver of host h never reported: its receivers hold no data for a doubling ban. */
void rdps__rel_hosts_connect_failed(struct rdps_rel_hosts *hs, int32_t h, uint64_t now_ns);

/* Host h's NAK allowance this interval (filled at the first use in the budget's epoch). */
static inline int64_t *rdps__rel_hosts_nak_allowance(struct rdps_rel_hosts *hs, int32_t h,
                                                     uint64_t epoch)
{
    struct rdps_rel_host *host = &hs->rec[h];
    if (host->nak_epoch != epoch) {
        host->nak_epoch = epoch;
        host->nak_tokens =
            host->announced > 0 ? hs->cfg->host_nak_bytes : hs->cfg->unannounced_host_bytes;
    }
    return &host->nak_tokens;
}

/* Host h's share of repairs past the budget this interval (filled likewise). */
static inline int64_t *rdps__rel_hosts_share(struct rdps_rel_hosts *hs, int32_t h, uint64_t epoch)
{
    struct rdps_rel_host *host = &hs->rec[h];
    if (host->share_epoch != epoch) {
        host->share_epoch = epoch;
        host->share_tokens = hs->cfg->repair_share_bytes;
    }
    return &host->share_tokens;
}

#endif /* RDPS_PROTO_REL_HOSTS_H */
