/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rel_pub_internal.h - state shared by the reliable publisher's files (rdps_rel_pub.c: ring,
 * NAK, actions; rdps_rel_pub_rx.c: receiver and host tables, flow control). */
#ifndef RDPS_PROTO_REL_PUB_INTERNAL_H
#define RDPS_PROTO_REL_PUB_INTERNAL_H

#include "rdps_rel_pub.h"

#define REL_MULTICAST (-1) /* repair destination: the group */

struct rdps_rel_receiver {
    struct rdps_source source;
    uint32_t receiver_id;
    uint32_t consumed_seq, window, tag;
    uint32_t evict_mark; /* EVICTED: it rejoins only with a position past this one */
    uint64_t last_heard_ns;
    uint64_t srtt_ns;
    uint64_t owed_until; /* no unrecoverable-range heartbeat to it before this */
    uint32_t gen;
    int32_t hash_next;     /* bucket chain, or the free list */
    int32_t host;          /* its host record (rdps_rel_host) */
    uint8_t state;         /* enum rdps_rel_rx_state */
    bool owed;             /* in the owed-heartbeat FIFO */
    bool announced;        /* discovery announced it, from this exact source */
    bool reported;         /* it sent a STATUS: consumed_seq and window are its own */
    bool expected;         /* announced, no STATUS yet: holds flow control until its first one */
    uint64_t expect_until; /* ... or until then (connect_timeout_ns) */
};

/*
 * A host: the GID of a source, or its LID on InfiniBand without a GRH (the QPN is the sender's
 * choice, the host is not, short of forging it). Receivers are capped per host and per source;
 * a host's NAKs spend one allowance per repair interval; stall evictions and connects that never
 * reported ban the host for a time that doubles with each one. A record outlives its receivers
 * (so a ban does, too) until its slot is needed for another host.
 */
struct rdps_rel_host {
    struct rdps_source key; /* GID or LID only: qpn 0 */
    int32_t hash_next;      /* bucket chain, or the free list */
    bool used;
    uint32_t entries;   /* receivers of this host in the table */
    uint32_t announced; /* ... of which discovery announced */
    uint64_t last_used_ns;
    int64_t nak_tokens; /* repair bytes its NAKs may still schedule this interval */
    uint64_t nak_epoch; /* the budget's tokens_at when nak_tokens was filled */
    /* Its share of unicast repairs past the budget while the window or ring holds the publisher:
     * repair_share_bytes per interval (share_epoch: tokens_at at the last fill). */
    int64_t share_tokens;
    uint64_t share_epoch;
    uint64_t ban_until; /* stall evictions: none of its receivers (re)joins flow control before */
    uint64_t strike_ns; /* the latest stall eviction */
    uint8_t strikes;
    uint8_t connect_strikes;    /* announced receivers that never reported */
    uint64_t connect_ban_until; /* ... its receivers hold no data before this */
};

/* A run of sequences to repair to one destination; `sent` of them went. */
struct rdps_rel_repair {
    uint32_t start, count, sent;
    int32_t dest; /* receiver slot or REL_MULTICAST */
    uint32_t gen; /* the receiver's generation when scheduled */
    bool parity;  /* `count` parity symbols of the block starting at `start` */
};

/* A block's parity round (rdps_rel_pub_parity.c): symbols [0, sent) have gone (indices modulo
 * parity_max), target is what the round asked so far, base where the round began. */
struct rdps_rel_block {
    uint32_t start;
    uint32_t base, target, sent;
    uint32_t proactive; /* symbols [0, proactive) were queued unasked (parity_proactive) */
    int32_t dest;       /* the round's destination: REL_MULTICAST or a receiver slot */
    bool used;
    uint64_t sent_ns; /* when its latest symbol left (0: none yet) */
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
/* The receiver's slot, created if absent (announced: discovery announced it, which may displace
 * an unannounced receiver); -1 when refused (counted). */
int32_t rdps__rel_rx_get(struct rdps_rel_pub *p, const struct rdps_source *source,
                         uint32_t receiver_id, bool announced, uint64_t now_ns);
int32_t rdps__rel_rx_find(const struct rdps_rel_pub *p, const struct rdps_source *source,
                          uint32_t receiver_id);
void rdps__rel_fc_recompute(struct rdps_rel_pub *p);
/* Evicts ACTIVE receivers whose consumed sequence is below the trail. */
void rdps__rel_evict_lagging(struct rdps_rel_pub *p);
/* Removes receivers unheard for the timeout; returns the next expiry (UINT64_MAX: none). */
uint64_t rdps__rel_rx_expire(struct rdps_rel_pub *p, uint64_t now_ns);
/* min/tagged: evicts the receivers holding a stall that lasted stall_evict_ns; next deadline. */
uint64_t rdps__rel_stall_check(struct rdps_rel_pub *p, uint64_t now_ns);
/* Whether connecting receivers may hold data now: the hold bucket (see Connecting) has room. */
bool rdps__rel_connect_hold(struct rdps_rel_pub *p, uint64_t now_ns);

/* How long a repair answers its sequence: a lone receiver's RTT-scaled linger, else the whole
 * configured linger (other receivers' NAKs come spread over their backoff). Receivers in flow
 * control count; NAKs from anyone else do not make the publisher linger longer. */
static inline uint64_t linger_of(const struct rdps_rel_pub *p)
{
    return p->fc_members <= 1 ? p->linger_ns : p->cfg.repair_linger_ns;
}

/* How long after a repair left a NAK from receiver `slot` may still have been sent before the
 * repair reached it: its RTT and a quarter (clamped like a lone receiver's linger) once measured.
 */
static inline uint64_t asker_linger(const struct rdps_rel_pub *p, int32_t slot)
{
    uint64_t srtt = p->rx[slot].srtt_ns;
    if (srtt == 0)
        return linger_of(p);
    uint64_t l = srtt + srtt / 4;
    return l < p->cfg.repair_linger_min_ns ? p->cfg.repair_linger_min_ns
           : l > p->cfg.repair_linger_ns   ? p->cfg.repair_linger_ns
                                           : l;
}

/* rdps_rel_pub_parity.c */
int rdps__rel_parity_init(struct rdps_rel_pub *p);
void rdps__rel_parity_fini(struct rdps_rel_pub *p);
/* What a parity NAK range {block start, missing count} from receiver `slot` adds to the block's
 * round: the symbols to queue (0: none) and their destination; charges the host's allowance.
 * *unrecoverable: the block is partly or wholly below the trail. */
uint32_t rdps__rel_parity_nak(struct rdps_rel_pub *p, int32_t slot, struct rdps_seq_range rg,
                              bool overtaken, uint64_t now_ns, int64_t *allowance, int32_t *dest,
                              bool *unrecoverable);
/* n symbols rdps__rel_parity_nak granted were not queued (the queue is full): take them back. */
void rdps__rel_parity_unqueue(struct rdps_rel_pub *p, uint32_t start, uint32_t n);
/* Proactive parity: the block starting at `start` was wholly posted; opens its round with
 * cfg.parity_proactive symbols to the group and returns that count (the caller queues them). */
uint32_t rdps__rel_parity_proactive(struct rdps_rel_pub *p, uint32_t start);
/* Whether the block starting at `start` is still wholly in the ring. */
bool rdps__rel_parity_whole(const struct rdps_rel_pub *p, uint32_t start);
/* The block's next parity symbol into the engine's buffer, as action *a. */
void rdps__rel_parity_action(struct rdps_rel_pub *p, uint32_t start, uint64_t now_ns,
                             uint64_t wall_ns, struct rdps_rel_pub_action *a);

/* Refills the repair budget when an interval passed (rdps_rel_pub.c). */
void rdps__rel_refill(struct rdps_rel_pub *p, uint64_t now_ns);
/* The host's NAK allowance this interval (filled at the first use in an interval). */
int64_t *rdps__rel_host_nak_tokens(struct rdps_rel_pub *p, int32_t host);

#endif /* RDPS_PROTO_REL_PUB_INTERNAL_H */
