/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_loopback.h - in-memory loopback transport: N endpoints on one in-process fabric, for tests.
 */
#ifndef RDPS_LOOPBACK_H
#define RDPS_LOOPBACK_H

#include "rdps_transport.h"

#include <stdint.h>

/*
 * Semantics mirror the verbs UD transport so engine and pubsub tests exercise
 * the same paths without a device:
 *  - claim() takes one of send_slots buffers; submit() queues one WR per
 *    destination (sq_depth WRs at most); flush() delivers synchronously, in
 *    order; the sent buffers come back on the sender's next poll(), like
 *    reaped send completions. Full pool or queue -> RDPS_EAGAIN.
 *  - each endpoint has recv_slots receive buffers; a datagram arriving when
 *    all are held by the application is dropped and counted in
 *    rx_queue_empty, as a UD QP with an empty receive queue drops it.
 *  - a multicast datagram reaches every member, the sender included when it
 *    is a member (rxe loops multicast back too; filter by session id), and is
 *    received with to_multicast set; on a fabric without multicast
 *    (rdps__loopback_fabric_set_multicast) it reaches no one.
 *  - dest_acquire() is source_dest() (destinations live as long as the fabric);
 *    send_room() counts queued and unreaped requests against sq_depth.
 *  - reply_dest() is the sender's unicast destination; src_qpn its endpoint
 *    number; src_gid fe80::<endpoint number>. Q_Keys are not checked.
 *    source_dest() finds the endpoint by that number and GID; its
 *    destinations live as long as the fabric (no cache, no eviction).
 *  - submit_mem() queues a request that reads the registered bytes when
 *    flush() delivers it (as a device reads them after the post, not at
 *    submit); its region's `completed` moves on the sender's next poll(), so
 *    a caller that overwrites a slot too early is caught here as on verbs.
 *  - no hidden threads, no clock: fully deterministic.
 */
struct rdps_loopback_fabric;
struct rdps_source;

/*
 * What the fabric does with multicast. A fabric without it is what rdps meets on RDMA networks
 * that do not route multicast: RoCE whose switches drop it (joins complete, every group datagram
 * is lost) or InfiniBand whose subnet manager has none configured (a join never completes).
 */
enum rdps_loopback_multicast {
    RDPS_LOOPBACK_MCAST_ON = 0,      /* default: groups deliver to their members */
    RDPS_LOOPBACK_MCAST_DROP = 1,    /* joins complete; group datagrams reach no one */
    RDPS_LOOPBACK_MCAST_NO_JOIN = 2, /* as DROP, and joins stay pending for ever */
};

struct rdps_loopback_config {
    uint32_t max_payload; /* default 1024 */
    uint32_t send_slots;  /* default 64 */
    uint32_t recv_slots;  /* default 64 */
    uint32_t sq_depth;    /* default send_slots */
};

int rdps__loopback_fabric_create(struct rdps_loopback_fabric **out);
/* A fabric whose endpoints may be used from different threads (each endpoint by one thread at a
 * time): what one endpoint's call touches of another's runs under a fabric-wide lock. The public
 * loopback device (rdps_config.device = "loopback") is one such fabric per process. */
int rdps__loopback_fabric_create_threaded(struct rdps_loopback_fabric **out);
/* Frees groups and addresses; endpoints still alive are cut off (their sends fail, RDPS_ESHUTDOWN).
 */
void rdps__loopback_fabric_destroy(struct rdps_loopback_fabric *f);

/* A new endpoint (cfg may be NULL for defaults); destroy it with t->ops->destroy(t). */
int rdps__loopback_create(struct rdps_loopback_fabric *f, const struct rdps_loopback_config *cfg,
                          struct rdps_transport **out);
/* The endpoint's unicast destination (owned by the fabric, valid until the fabric is destroyed). */
int rdps__loopback_dest(struct rdps_transport *t, const struct rdps_dest **out);
/* The endpoint number (what receivers see as src_qpn). */
uint32_t rdps__loopback_qpn(struct rdps_transport *t);
/* The endpoint's GID (what receivers see as src_gid). */
void rdps__loopback_gid(struct rdps_transport *t, uint8_t gid[16]);
/* Destination of multicast group `group` (created on first use, owned by the fabric). */
int rdps__loopback_group_dest(struct rdps_loopback_fabric *f, uint32_t group,
                              const struct rdps_dest **out);
/* Joins / leaves a group; reference-counted per endpoint (two joins need two leaves). */
int rdps__loopback_join(struct rdps_transport *t, uint32_t group);
/* RDPS_ENOENT when the endpoint is not a member. */
int rdps__loopback_leave(struct rdps_transport *t, uint32_t group);
/* Multicast on the fabric (RDPS_LOOPBACK_MCAST_ON unless set): for every endpoint at once. */
void rdps__loopback_fabric_set_multicast(struct rdps_loopback_fabric *f,
                                         enum rdps_loopback_multicast mode);
enum rdps_loopback_multicast rdps__loopback_fabric_multicast(struct rdps_loopback_fabric *f);

/*
 * Addresses: endpoint N has the IPv4 address 127.77.0.0 + N (N < 65536), what seed peers
 * ("ip[:port]") name on this fabric; the port means nothing here. rdps__loopback_ipv4 gives an
 * endpoint's (0 past 65535); rdps__loopback_resolve finds the endpoint of an address: its
 * destination and its source as its datagrams show it (src may be NULL), or RDPS_EHOSTUNREACH.
 */
#define RDPS_LOOPBACK_NET   0x7f4d0000u /* 127.77.0.0/16 */
#define RDPS_LOOPBACK_HOSTS 0x10000u
uint32_t rdps__loopback_ipv4(struct rdps_transport *t);
int rdps__loopback_resolve(struct rdps_loopback_fabric *f, uint32_t ipv4,
                           const struct rdps_dest **dest, struct rdps_source *src);

/* Queues an async event as a device would; DEVICE_FATAL makes data calls fail with RDPS_EDEVFATAL.
 */
int rdps__loopback_inject_event(struct rdps_transport *t, enum rdps_transport_event_type type);

#endif /* RDPS_LOOPBACK_H */
