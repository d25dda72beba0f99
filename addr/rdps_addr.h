/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_addr.h - rdma_cm address resolution (unicast AH + QPN via SIDR), multicast joins, SA
 * queries. */
#ifndef RDPS_ADDR_H
#define RDPS_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "rdps_sa_mad.h"
#include "rdps_transport.h"

/* rdma_cm UDP-port-space port an addr context listens on to answer unicast resolves. */
#define RDPS_DEFAULT_CM_PORT 7471
/* cm_port value: do not listen (this context resolves others but cannot be resolved). */
#define RDPS_ADDR_NO_LISTEN             (-1)
#define RDPS_DEFAULT_RESOLVE_TIMEOUT_MS 2000u

struct rdps_addr;
struct rdps_addr_peer;
struct rdps_addr_group;

struct rdps_addr_config {
    /* A verbs transport: addr reads rdps_verbs_info (device, port, PD, shared QP). */
    struct rdps_transport *transport;
    /* Local IP for rdma_cm ids (port ignored); NULL -> the transport's bound_addr. */
    const struct sockaddr *local_addr;
    /*
     * rdma_cm UDP-port-space port to listen on (0 -> RDPS_DEFAULT_CM_PORT,
     * RDPS_ADDR_NO_LISTEN -> none). Signed so that "no listener" is not a port.
     */
    int32_t cm_port;
    /* Deadline of one resolve or join, from its start (0 -> RDPS_DEFAULT_RESOLVE_TIMEOUT_MS). */
    uint32_t resolve_timeout_ms;
};

struct rdps_addr_stats {
    uint64_t cm_events;           /* CM events handled (every one acked) */
    uint64_t resolves_started;    /* unicast resolves started, restarts included */
    uint64_t resolves_ready;      /* unicast resolves that produced a destination */
    uint64_t resolves_failed;     /* unicast resolves that failed or timed out */
    uint64_t resolve_cache_hits;  /* resolve_start answered from the cache */
    uint64_t joins_started;       /* multicast joins started, rejoins included */
    uint64_t joins_ready;         /* multicast joins completed */
    uint64_t joins_failed;        /* multicast joins that failed or timed out */
    uint64_t rejoins;             /* MULTICAST_ERROR / ADDR_CHANGE restarts of a group */
    uint64_t readdresses;         /* ADDR_CHANGE restarts of a unicast peer */
    uint64_t send_only_fallbacks; /* send-only joins retried as full joins */
    uint64_t qp_attaches, qp_detaches;
    uint64_t requests_answered; /* CONNECT_REQUESTs (SIDR) accepted with the shared QPN */
    uint64_t requests_rejected; /* CONNECT_REQUESTs refused (other device) */
    /* AHs the transport could not take for deferred destruction (its ring was full): leaked. */
    uint64_t ahs_leaked;
};

/* Creates the context and (unless told not to) starts listening; never blocks on the network. */
int rdps__addr_create(const struct rdps_addr_config *cfg, struct rdps_addr **out);
/*
 * Leaves every group, detaches the QP, destroys the ids and hands the AHs to
 * the transport for destruction once their sends completed (so destroy the
 * context before its transport); peer and group handles still held become
 * invalid. Accepts NULL.
 */
void rdps__addr_destroy(struct rdps_addr *a);
/* rdma_cm event channel fd (non-blocking): readable when rdps__addr_process has work. */
int rdps__addr_fd(const struct rdps_addr *a);
/*
 * Handles pending CM events and expired deadlines; returns events handled,
 * never blocks. Costs one read() on the event channel: epoll users call it
 * when rdps__addr_fd() is readable (and now and then for deadlines).
 */
int rdps__addr_process(struct rdps_addr *a);
/*
 * rdps__addr_process() at most once per millisecond (coarse clock, no
 * syscall otherwise): cheap enough for every pass of a busy-poll loop.
 * Returns events handled, 0 when skipped.
 */
int rdps__addr_tick(struct rdps_addr *a);
/* The port actually listened on (0 when not listening). */
uint16_t rdps__addr_listen_port(const struct rdps_addr *a);
void rdps__addr_get_stats(const struct rdps_addr *a, struct rdps_addr_stats *out);

/*
 * Unicast: IP:port -> AH + remote QPN + Q_Key through rdma_cm RDMA_PS_UDP
 * (resolve_addr, resolve_route, connect = SIDR; the peer's addr context
 * answers with its shared QP's number). A port of 0 means
 * RDPS_DEFAULT_CM_PORT. Entries are cached by address and refcounted: a
 * second resolve of the same peer returns the same entry; an entry that
 * failed is retried by the next resolve_start; ADDR_CHANGE re-resolves.
 */
int rdps__addr_resolve_start(struct rdps_addr *a, const struct sockaddr *peer,
                             struct rdps_addr_peer **out);
/*
 * 0 pending, 1 ready (*dest set; the pointer stays valid until release), or a
 * negative code (RDPS_EHOSTUNREACH, RDPS_ECONNREFUSED, RDPS_ETIMEDOUT, ...)
 * with the reason in rdps_last_error_message(). dest may be NULL.
 */
int rdps__addr_peer_state(struct rdps_addr_peer *p, const struct rdps_dest **dest);
void rdps__addr_peer_release(struct rdps_addr_peer *p);
/*
 * A resolved peer as its datagrams show it (rdps_source: its QPN and, as the SIDR reply's route
 * names it, its GID, or its LID on InfiniBand without a GRH): 0, RDPS_EAGAIN while pending, or
 * the failure's code.
 */
int rdps__addr_peer_source(const struct rdps_addr_peer *p, struct rdps_source *out);
/*
 * Re-resolves a peer now, as ADDR_CHANGE does (e.g. the application saw the
 * peer restart on a new QP). The entry turns pending; the previous AH goes to
 * the transport, which destroys it only once the sends already posted with it
 * have completed (rdps__verbs_transport_retire_ah), as it does on release.
 */
int rdps__addr_peer_refresh(struct rdps_addr_peer *p);

/*
 * Multicast: rdma_join_multicast_ex, asynchronous. FULL joins attach the
 * shared QP (ibv_attach_mcast) once joined; SEND_ONLY joins (send-only full
 * member) only give an AH for sending. Refcounted per (group, mode): the QP
 * is detached and the group left at zero. MULTICAST_ERROR and ADDR_CHANGE
 * re-join (counted in stats.rejoins).
 */
enum rdps_join_mode { RDPS_JOIN_FULL = 1, RDPS_JOIN_SEND_ONLY = 2 };

int rdps__addr_join_start(struct rdps_addr *a, const struct sockaddr *group,
                          enum rdps_join_mode mode, struct rdps_addr_group **out);
/* 0 pending, 1 joined (*dest set, remote QPN 0xFFFFFF), or a negative code. dest may be NULL. */
int rdps__addr_group_state(struct rdps_addr_group *g, const struct rdps_dest **dest);
void rdps__addr_leave(struct rdps_addr_group *g);
/*
 * Leaves and joins again now, as MULTICAST_ERROR does (counted in
 * stats.rejoins): the QP is detached, the group re-joined on a new cm id and
 * re-attached when the join completes.
 */
int rdps__addr_group_rejoin(struct rdps_addr_group *g);

/* What a completed join learned (valid while rdps__addr_group_state() returns 1). */
struct rdps_addr_group_info {
    uint8_t mgid[16];
    uint16_t mlid;
    uint32_t qkey;
    bool qp_attached;
    bool full_join_fallback; /* asked for SEND_ONLY, joined as a full member */
    unsigned refcount;
    uint64_t rejoins;
};
int rdps__addr_group_info(const struct rdps_addr_group *g, struct rdps_addr_group_info *out);

/*
 * SubnAdmGetTable(MCMemberRecord) through libibumad on an InfiniBand port:
 * the SA's records for `mgid` (NULL: every group). Returns the number of
 * records the SA reported (up to `max` stored in out), RDPS_ENOTSUP on an
 * Ethernet (RoCE) link layer, which has no subnet administrator,
 * RDPS_ETIMEDOUT when the SA does not answer, or another negative code; a
 * detail message says why.
 */
int rdps__sa_query_mcmember(const char *device_name, uint8_t port_num, const uint8_t mgid[16],
                            uint32_t timeout_ms, struct rdps_sa_mcmember *out, size_t max);
#endif /* RDPS_ADDR_H */
