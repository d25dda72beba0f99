/* SPDX-License-Identifier: BSD-2-Clause */
/* loopback_internal.h - what the loopback device's two files share: the fabric with its
 * addresses and groups (loopback_fabric.c), the endpoints on it (loopback.c). */
#ifndef RDPS_LOOPBACK_INTERNAL_H
#define RDPS_LOOPBACK_INTERNAL_H

#include "rdps_loopback.h"
#include "rdps_soft_sq.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define LB_EVENT_RING_SIZE 16

struct lb_endpoint;

/* What a dest's `ah` points at: one endpoint or one group. */
struct lb_addr {
    bool is_group;
    uint32_t id;
    struct rdps_dest dest;
    struct lb_endpoint *endpoint; /* unicast: NULL once the endpoint is destroyed */
    struct lb_member *members;    /* group */
    uint32_t member_count, member_cap;
    struct lb_addr *next; /* fabric's list */
};

struct lb_member {
    struct lb_endpoint *endpoint;
    uint32_t refs;
};

struct rdps_loopback_fabric {
    struct lb_addr *addrs;
    struct lb_endpoint *endpoints;
    uint32_t next_endpoint_id;
    enum rdps_loopback_multicast multicast; /* what happens to groups (rdps_loopback.h) */
    /* A threaded fabric's endpoints belong to different threads: whatever one endpoint's call
     * touches of another's (delivery into its receive ring, group members, the address list)
     * runs under the lock. Tests' fabrics are single-threaded and skip it. */
    bool threaded;
    pthread_mutex_t lock;
};

static inline void fabric_lock(struct rdps_loopback_fabric *f)
{
    if (f != NULL && f->threaded)
        pthread_mutex_lock(&f->lock);
}

static inline void fabric_unlock(struct rdps_loopback_fabric *f)
{
    if (f != NULL && f->threaded)
        pthread_mutex_unlock(&f->lock);
}

struct lb_ready;

struct lb_endpoint {
    struct rdps_transport base;
    struct rdps_loopback_fabric *fabric;
    struct lb_endpoint *next; /* fabric's list */
    struct lb_addr *self;
    uint32_t max_payload, recv_slots;
    struct rdps_soft_sq sq; /* flush delivers its requests; the next poll() completes them */

    uint8_t *recv_mem;
    uint32_t *recv_free, recv_free_count;
    struct lb_ready *ready;     /* ring of delivered datagrams, oldest first */
    struct lb_addr **slot_from; /* sender of the datagram in each receive slot (for reply_dest) */
    uint32_t ready_head, ready_count;

    int event_fd;
    enum rdps_transport_event_type events[LB_EVENT_RING_SIZE];
    uint32_t event_head, event_count;
    bool device_fatal;
    struct rdps_transport_stats stats;
};

static inline struct lb_endpoint *to_lb(struct rdps_transport *t)
{
    return (struct lb_endpoint *)t;
}

/* True when t is a loopback endpoint (loopback.c). */
bool rdps__lb_is_endpoint(const struct rdps_transport *t);

/* The GID receivers see for endpoint `id`: link-local fe80::id, like a port's default GID. */
static inline void rdps__lb_endpoint_gid(uint32_t id, uint8_t gid[16])
{
    memset(gid, 0, 16);
    gid[0] = 0xfe;
    gid[1] = 0x80;
    gid[12] = (uint8_t)(id >> 24);
    gid[13] = (uint8_t)(id >> 16);
    gid[14] = (uint8_t)(id >> 8);
    gid[15] = (uint8_t)id;
}

/* Puts ep on f with the next endpoint number and an address of its own (false: out of memory);
 * detach takes it off: its address loses it, its groups drop it. Under the fabric's lock. */
bool rdps__lb_fabric_attach(struct rdps_loopback_fabric *f, struct lb_endpoint *ep);
void rdps__lb_fabric_detach(struct rdps_loopback_fabric *f, struct lb_endpoint *ep);

#endif /* RDPS_LOOPBACK_INTERNAL_H */
