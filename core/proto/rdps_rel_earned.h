/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rel_earned.h - the reliable publisher's repair allowance, earned by the data it sends:
 * repair volume bounded by what is sent (rdps_rel_repairs.h). */
#ifndef RDPS_PROTO_REL_EARNED_H
#define RDPS_PROTO_REL_EARNED_H

#include <stdbool.h>
#include <stdint.h>

#include "rdps_rel_pub_types.h"

/*
 * Model
 * -----
 * Every repair byte, in every state, spends what new data earned. Each byte of data posted earns
 * repair_per_data_permille / 1000 bytes of repairs for each receiver in flow control (ACTIVE: it
 * reports; at least one), up to repair_earned_max for each saved (0: the ring's bytes), and
 * repair_floor_bytes come with each repair interval (0: repair_budget_bytes / 4096, 64 bytes per
 * ms by default: 64 KB/s, a datagram every 16 ms) so an idle publisher still answers a tail loss.
 * So repair volume is tied to what the publisher sends and to the receivers that report, whoever
 * asks and from how many addresses: over any time, repairs <= ratio x data x the receivers in
 * flow control + the floor's rate + the saved allowance. A repair that finds too little waits
 * (repairs_unearned counts the waits, once each); from then until the repair queue empties hosts
 * take turns (rdps__rel_rq_take_turns), so a host that asks for a lot does not hold the queue for
 * its whole runs.
 *
 * The repair queue owns one (rdps_rel_repairs.h) and tells it what happened: an interval passed
 * (floor), data went (data), may a repair of len bytes go (covers), a repair went (spend). Pure
 * accounting: it reads nothing else.
 */

struct rdps_rel_earned {
    int64_t bytes;     /* repair bytes earned (data and the floor), not yet spent */
    int64_t max;       /* cfg.repair_earned_max resolved: the most saved per receiver */
    uint32_t floor;    /* cfg.repair_floor_bytes resolved: earned per interval however idle */
    uint32_t permille; /* cfg.repair_per_data_permille */
    bool waiting;      /* repairs wait for earnings (counted once per wait) */
    bool starved;      /* repairs waited since the repair queue was last empty: hosts take turns */
    int32_t last_host; /* the host record the last repair went to; -1: multicast, or none yet */
};

/* Resolves the config's zeros (ring_bytes: the ring's capacity); nothing earned yet. */
static inline void rdps__rel_earned_init(struct rdps_rel_earned *ea,
                                         const struct rdps_rel_pub_config *cfg, uint64_t ring_bytes)
{
    ea->bytes = 0;
    ea->max = cfg->repair_earned_max != 0 ? (int64_t)cfg->repair_earned_max : (int64_t)ring_bytes;
    if (ea->max < (int64_t)cfg->max_datagram)
        ea->max = cfg->max_datagram;
    /* The floor accumulates: 64 bytes a millisecond is a datagram every 16 ms, 64 KB/s. */
    ea->floor =
        cfg->repair_floor_bytes != 0 ? cfg->repair_floor_bytes : cfg->repair_budget_bytes / 4096;
    if (ea->floor == 0)
        ea->floor = 1;
    ea->permille = cfg->repair_per_data_permille;
    ea->waiting = ea->starved = false;
    ea->last_host = -1;
}

/* Earns `bytes`, up to what may be saved: max for each of `scale` receivers in flow control (each
 * may lose its own datagrams, a repair by unicast each). */
static inline void rdps__rel_earned_add(struct rdps_rel_earned *ea, uint64_t bytes, uint32_t scale)
{
    int64_t room = ea->max * (int64_t)scale - ea->bytes;
    if (room > 0)
        ea->bytes += bytes < (uint64_t)room ? (int64_t)bytes : room;
}

/* `intervals` repair intervals passed: the floor for each. */
static inline void rdps__rel_earned_floor(struct rdps_rel_earned *ea, uint64_t intervals)
{
    rdps__rel_earned_add(ea, intervals < (1u << 20) ? intervals * ea->floor : (uint64_t)ea->max, 1);
}

/* A data frame of len bytes went with `members` receivers in flow control: each earns the ratio
 * (64 receivers at 5 % loss each ask their own 5 % of the data). Announced askers that never
 * report earn nothing. */
static inline void rdps__rel_earned_data(struct rdps_rel_earned *ea, uint32_t len, uint32_t members)
{
    if (members == 0)
        members = 1;
    rdps__rel_earned_add(ea, (uint64_t)len * ea->permille / 1000u * members, members);
}

/* May a repair of len bytes go? No: it waits (counted once per wait, in c->repairs_unearned), and
 * hosts take turns until the queue empties. */
static inline bool rdps__rel_earned_covers(struct rdps_rel_earned *ea, uint32_t len,
                                           struct rdps_rel_pub_counters *c)
{
    if (ea->bytes < (int64_t)len) {
        if (!ea->waiting)
            c->repairs_unearned++;
        ea->waiting = true;
        ea->starved = true;
        return false;
    }
    ea->waiting = false;
    return true;
}

/* A repair of len bytes went to host record `host` (-1: multicast). */
static inline void rdps__rel_earned_spend(struct rdps_rel_earned *ea, uint32_t len, int32_t host)
{
    ea->bytes -= len;
    ea->last_host = host;
}

#endif /* RDPS_PROTO_REL_EARNED_H */
