/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rel_pub_parity.h - the reliable publisher's parity repairs: per-block rounds answering
 * parity NAKs, proactive parity, parity datagrams encoded from the ring (rdps_rel_pub.h). */
#ifndef RDPS_PROTO_REL_PUB_PARITY_H
#define RDPS_PROTO_REL_PUB_PARITY_H

#include <stdbool.h>
#include <stdint.h>

#include "rdps_pub_ring.h"
#include "rdps_rel_flow.h"
#include "rdps_rel_pub_types.h"
#include "rdps_seq.h"

/*
 * Model
 * -----
 * Parity (parity_k != 0). The ring's sequences form blocks of parity_k (block of s:
 * s & ~(parity_k - 1), so blocks survive the wrap), and DATA frames leave
 * RDPS_FRAME_PARITY_OVERHEAD bytes of the datagram unused so a parity datagram of their block is
 * max_datagram long. A NAK flagged PARITY counts, per block, the datagrams the receiver lacks;
 * the engine answers with that many parity symbols of the block (rdps_fec.h), encoded from the
 * ring when sent: each repairs any one datagram of the block at every receiver that lacks one.
 * Per block a round: NAKs within it raise its target to the largest count asked (not the sum;
 * NORM's rule), a NAK asking no more is suppressed. A receiver counts what it lacks with the
 * symbols it holds, so a NAK sent after the round's last symbol could reach it (later than its
 * RTT and a quarter after that symbol left, or flagged RETRANSMIT) starts a new round with new
 * indices: that many more symbols. Parity goes by multicast to an announced asker that is
 * receiving (ACTIVE), by unicast to any other or under unicast fan-out (a second asker of a
 * unicast round gets its own
 * symbols). Refused (counted): a block not aligned, a count past it, a block not wholly posted
 * (the receiver asks for the tail by sequence); a block partly below the trail is unrecoverable;
 * a block that leaves the ring before its symbols go drops them (parity_dropped, the repair
 * queue). Parity spends the host's NAK allowance, the repair budget and shares, and what data
 * earned (rdps_rel_earned.h), like
 * retransmissions. With parity_proactive n, posting a block's last datagram queues its first n
 * symbols by multicast as if a NAK had asked for n (no host allowance spent): a receiver losing
 * at most n of the block rebuilds them without a NAK.
 *
 * One round record per block the ring can hold (block_mask + 1), allocated at init; the parity
 * datagram being sent lives in this layer's buffer (valid until the next call). Reads the ring,
 * the asker's record and its linger (rdps_rel_flow.h); the post cursor is passed in. The repair
 * queue holds the symbols to send (rdps_rel_repairs.h); this layer decides how many.
 */

/* A block's round: symbols [0, sent) have gone (indices modulo parity_max), target is what the
 * round asked so far, base where the round began. */
struct rdps_rel_block {
    uint32_t start;
    uint32_t base, target, sent;
    uint32_t proactive; /* symbols [0, proactive) were queued unasked (parity_proactive) */
    int32_t dest;       /* the round's destination: RDPS_REL_MULTICAST or a receiver slot */
    bool used;
    uint64_t sent_ns; /* when its latest symbol left (0: none yet) */
};

struct rdps_rel_pub_parity {
    const struct rdps_rel_pub_config *cfg; /* the engine's */
    struct rdps_rel_pub_counters *c;       /* the engine's */
    const struct rdps_pub_ring *ring;      /* the frames a symbol is encoded from */
    const struct rdps_rel_flowctl *fc;     /* askers' lingers */
    struct rdps_fec *fec;
    struct rdps_rel_block *blocks;
    uint32_t block_mask;
    uint32_t len; /* a parity datagram's bytes: max_datagram */
    uint8_t *buf;
    struct rdps_pub_ring_slot slot; /* len = len: a parity entry in the repair queue */
};

/* Allocates the codec, the rounds and the buffer when cfg->parity_k != 0 (RDPS_ENOMEM, or the
 * codec's error); nothing otherwise. */
int rdps__rel_par_init(struct rdps_rel_pub_parity *par, const struct rdps_rel_pub_config *cfg,
                       struct rdps_rel_pub_counters *c, const struct rdps_pub_ring *ring,
                       const struct rdps_rel_flowctl *fc);
void rdps__rel_par_fini(struct rdps_rel_pub_parity *par);

/* What a parity NAK range {block start, missing count} from receiver `slot` adds to the block's
 * round (to: where a new round's symbols go, RDPS_REL_MULTICAST or slot): the symbols to queue
 * (0: none) and their destination; charges the host's allowance. *unrecoverable: the block is
 * partly or wholly below the trail. */
uint32_t rdps__rel_par_nak(struct rdps_rel_pub_parity *par, int32_t slot, int32_t to,
                           struct rdps_seq_range rg, bool overtaken, uint32_t post, uint64_t now_ns,
                           int64_t *allowance, int32_t *dest, bool *unrecoverable);
/* n symbols rdps__rel_par_nak granted were not queued (the queue is full): take them back. */
void rdps__rel_par_unqueue(struct rdps_rel_pub_parity *par, uint32_t start, uint32_t n);
/* Proactive parity: the block starting at `start` was wholly posted; opens its round with
 * cfg.parity_proactive symbols to the group and returns that count (the caller queues them). */
uint32_t rdps__rel_par_proactive(struct rdps_rel_pub_parity *par, uint32_t start);
/* Whether the block starting at `start` is still wholly in the ring and posted. */
static inline bool rdps__rel_par_whole(const struct rdps_rel_pub_parity *par, uint32_t start,
                                       uint32_t post)
{
    return rdps__seq_ge(start, par->ring->trail_seq) && post - start >= par->cfg->parity_k &&
           rdps__seq_lt(start, post);
}
/* The block's next parity symbol into the layer's buffer, as action *a. */
void rdps__rel_par_action(struct rdps_rel_pub_parity *par, uint32_t start, uint64_t now_ns,
                          uint64_t wall_ns, struct rdps_rel_pub_action *a);

#endif /* RDPS_PROTO_REL_PUB_PARITY_H */
