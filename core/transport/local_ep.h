/* SPDX-License-Identifier: BSD-2-Clause */
/* local_ep.h - what the local device's endpoint files share: the endpoint (local.c: data path,
 * events, life) and its groups and names (local_groups.c). */
#ifndef RDPS_LOCAL_EP_H
#define RDPS_LOCAL_EP_H

#include "local_dir.h"
#include "rdps_local.h"
#include "rdps_soft_sq.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define LOCAL_MCAST_QPN 0xffffffu /* the IB multicast QPN, so dests look like verbs ones */
#define LOCAL_RECV_BUFS 256u      /* private copies the application may hold at once */
#define LOCAL_MAX_DESTS 4096u     /* group destinations one endpoint keeps */

/* What a dest's `ah` points at: the endpoint's unicast marker, or one group. */
struct local_addr {
    bool is_group;
    uint32_t group;
    int entry;             /* registry entry of the group as last looked up (-1: none) */
    uint64_t entry_epoch;  /* the registry epoch of that lookup */
    struct rdps_dest dest; /* groups' destination */
    struct local_addr *next;
};

/* A writer's cache of another member's ring, by index; remapped when the generation changes. */
struct local_peer {
    uint32_t gen; /* 0: nothing mapped */
    void *mem;
    size_t bytes;
    struct local_ring_view view;
    int fifo_fd;
    uint64_t failed_epoch; /* mapping failed at this registry epoch: retried when it moves */
    bool failed;
};

struct local_join {
    uint32_t group, refs;
};

struct local_ep {
    struct rdps_transport base;
    struct local_dir dir;
    uint32_t index, gen, qpn, mtu, pid;
    int ring_fd, fifo_fd, timer_fd, epoll_fd;
    void *ring_mem;
    size_t ring_bytes;
    struct local_ring_reader reader;
    bool registered;

    /* Requests copied at flush whose completions the next poll() reports (as a device's would):
     * a sender that outruns its polls sees the queue fill and batches its small messages. */
    struct rdps_soft_sq sq;

    uint8_t *recv_mem;
    uint32_t recv_free[LOCAL_RECV_BUFS], recv_free_count;
    uint32_t recv_src[LOCAL_RECV_BUFS]; /* sender of each held buffer (reply_dest) */

    struct local_addr unicast; /* every unicast dest's ah */
    struct rdps_dest uni_dests[LOCAL_MAX_MEMBERS];
    struct local_addr *groups;
    uint32_t group_count;
    struct local_join *joins;
    uint32_t join_count, join_cap;
    struct local_peer peers[LOCAL_MAX_MEMBERS];

    uint64_t next_reap_ns, overruns_base, polls;
    uint64_t unreachable; /* sends to a member whose ring could not be mapped */
    struct rdps_transport_stats stats;
};

static inline struct local_ep *to_ep(struct rdps_transport *t)
{
    return (struct local_ep *)t;
}

/* The GID a member's datagrams show: fe80::5244:5053:<qpn> ("RDPS", then the QPN). */
static inline void member_gid(uint32_t qpn, uint8_t gid[16])
{
    static const uint8_t prefix[12] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 'R', 'D', 'P', 'S'};
    memcpy(gid, prefix, sizeof(prefix));
    gid[12] = (uint8_t)(qpn >> 24);
    gid[13] = (uint8_t)(qpn >> 16);
    gid[14] = (uint8_t)(qpn >> 8);
    gid[15] = (uint8_t)qpn;
}

/* True when t is a local device's endpoint (local.c). */
bool rdps__local_is_endpoint(const struct rdps_transport *t);

/* The endpoint's unicast destination of `qpn` (one per member index, rewritten for another
 * generation: a stale pointer names a live member or none, as the contract allows). */
const struct rdps_dest *rdps__local_unicast_dest(struct local_ep *ep, uint32_t qpn);

#endif /* RDPS_LOCAL_EP_H */
