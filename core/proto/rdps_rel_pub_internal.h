/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rel_pub_internal.h - state shared by the reliable publisher's files (rdps_rel_pub.c: ring,
 * NAK, actions; rdps_rel_pub_rx.c: receiver table and flow control). */
#ifndef RDPS_PROTO_REL_PUB_INTERNAL_H
#define RDPS_PROTO_REL_PUB_INTERNAL_H

#include "rdps_rel_pub.h"

#define REL_MULTICAST (-1) /* repair destination: the group */

struct rdps_rel_receiver {
    struct rdps_source source;
    uint32_t receiver_id;
    uint32_t consumed_seq, window, tag;
    uint64_t last_heard_ns;
    uint64_t srtt_ns;
    uint64_t owed_until; /* no unrecoverable-range heartbeat to it before this */
    uint32_t gen;
    int32_t hash_next;     /* bucket chain, or the free list */
    uint8_t state;         /* enum rdps_rel_rx_state */
    bool owed;             /* in the owed-heartbeat FIFO */
    bool expected;         /* KNOWN from discovery: holds flow control until its first STATUS */
    uint64_t expect_until; /* ... or until then (connect_timeout_ns) */
    /* Its share of unicast repairs past the budget: repair_share_bytes per budget interval,
     * reset when the shared budget is (share_epoch: the budget's tokens_at at the last reset). */
    int64_t share_tokens;
    uint64_t share_epoch;
};

/* A run of sequences to repair to one destination; `sent` of them went. */
struct rdps_rel_repair {
    uint32_t start, count, sent;
    int32_t dest; /* receiver slot or REL_MULTICAST */
    uint32_t gen; /* the receiver's generation when scheduled */
};

/* Per ring slot: who sequence `seq` was last repaired to, until when that answer lingers, and
 * when the repair left (0: still queued). */
struct rdps_rel_mark {
    uint64_t linger_until;
    uint64_t sent_ns;
    uint32_t seq;
    int32_t dest;
};

/* rdps_rel_pub_rx.c */
int rdps__rel_rx_init(struct rdps_rel_pub *p);
void rdps__rel_rx_fini(struct rdps_rel_pub *p);
/* The receiver's slot, created if absent; -1 when the table is full (counted). */
int32_t rdps__rel_rx_get(struct rdps_rel_pub *p, const struct rdps_source *source,
                         uint32_t receiver_id, uint64_t now_ns);
int32_t rdps__rel_rx_find(const struct rdps_rel_pub *p, const struct rdps_source *source,
                          uint32_t receiver_id);
void rdps__rel_fc_recompute(struct rdps_rel_pub *p);
/* Evicts ACTIVE receivers whose consumed sequence is below the trail. */
void rdps__rel_evict_lagging(struct rdps_rel_pub *p);
/* Removes receivers unheard for the timeout; returns the next expiry (UINT64_MAX: none). */
uint64_t rdps__rel_rx_expire(struct rdps_rel_pub *p, uint64_t now_ns);
/* min/tagged: evicts the receivers holding a stall that lasted stall_evict_ns; next deadline. */
uint64_t rdps__rel_stall_check(struct rdps_rel_pub *p, uint64_t now_ns);

#endif /* RDPS_PROTO_REL_PUB_INTERNAL_H */
