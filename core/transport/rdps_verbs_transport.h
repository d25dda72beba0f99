/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_verbs_transport.h - the verbs UD transport: one device port, one PD, one shared UD QP per
 * ctx. */
#ifndef RDPS_VERBS_TRANSPORT_H
#define RDPS_VERBS_TRANSPORT_H

#include "rdps_transport.h"

#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

/* rdma_cm's Q_Key for the UDP port space (RDMA_UDP_QKEY): lets rdma_cm peers and rdps share it. */
#define RDPS_DEFAULT_QKEY 0x01234567u

/* Bytes of the Global Route Header that precede every received UD payload. */
#define RDPS_GRH_BYTES 40u

struct rdps_verbs_config {
    /* e.g. "rxe0"; NULL -> chosen via bind_addr, else the first ACTIVE port of any device. */
    const char *device_name;
    /* Local IP: device and port found through rdma_cm (rdma_bind_addr on a temporary id). */
    const struct sockaddr *bind_addr;
    /* 0 -> first ACTIVE port (or the one bind_addr resolves to). */
    uint8_t port_num;
    /* 0 -> RDPS_DEFAULT_QKEY. */
    uint32_t qkey;
    /* Registered send buffers (default 256). */
    uint32_t send_slots;
    /* Registered receive buffers, active MTU + GRH each (default 512). */
    uint32_t recv_slots;
    /* Send queue depth in work requests (default send_slots, at least 2 * signal_every). */
    uint32_t sq_depth;
    /* Entries of each of the send and receive CQs (default sq_depth / recv_slots). */
    uint32_t cq_entries;
    /* Signal one send work request in this many (default 16, capped at sq_depth / 2). */
    uint32_t signal_every;
    /* Released receive buffers re-posted as one chain (default 16, capped at recv_slots / 4). */
    uint32_t recv_batch;
    /* Inline data size asked for (default 128); the size granted is used. */
    uint32_t max_inline;
    /* Reply destinations cached by source GID (or LID) + QPN, built on request (default 256). */
    uint32_t reply_cache_entries;
    /* GID table index, used when gid_index_set; otherwise the GID is chosen automatically
     * (the one of bind_addr, else the first RoCE v2 IPv4 GID, else index 0). */
    uint8_t gid_index;
    bool gid_index_set;
};

/* What addr/ (and tools) need to know about the opened port and the shared QP. */
struct rdps_verbs_info {
    struct ibv_context *verbs;
    uint8_t port_num;
    struct ibv_pd *pd;
    struct ibv_qp *qp;
    uint32_t qpn;
    uint32_t qkey;
    uint32_t active_mtu_bytes;
    uint32_t max_payload;
    int link_layer; /* IBV_LINK_LAYER_* */
    uint8_t gid_index;
    union ibv_gid gid;
    uint16_t lid; /* the port's base LID (InfiniBand; 0 on RoCE) */
    /*
     * Set when bind_addr was given (a copy of it), and also when the automatically
     * chosen GID is an IPv4-mapped RoCE v2 GID (its IPv4 address, port 0), so addr/
     * always has a local address on RoCE.
     */
    struct sockaddr_storage bound_addr;
    bool has_bound_addr;
    uint32_t max_inline; /* inline size the QP granted; frames up to it are sent inline */
    char device_name[64];
};

/* Opens the device port and creates the shared UD QP (cfg may be NULL for all defaults). */
int rdps__verbs_transport_create(const struct rdps_verbs_config *cfg, struct rdps_transport **out);
/* Fills *out (looking through interceptors); RDPS_EINVAL if t is not a verbs transport. */
int rdps__verbs_transport_info(struct rdps_transport *t, struct rdps_verbs_info *out);

/*
 * Attaches the shared QP to a multicast group (ibv_attach_mcast) and records
 * it, so the attachment is restored when the QP is reset after an error.
 * Reference-counted per (gid, lid): attach twice, detach twice. Both look
 * through interceptors; 0 or a negative rdps code (RDPS_ENOENT: not attached).
 */
int rdps__verbs_transport_attach_mcast(struct rdps_transport *t, const union ibv_gid *gid,
                                       uint16_t lid);
int rdps__verbs_transport_detach_mcast(struct rdps_transport *t, const union ibv_gid *gid,
                                       uint16_t lid);

/*
 * Gives up an address handle that sends of this transport may name: it is
 * destroyed once every send queued or posted so far has completed (at once
 * when none is outstanding, at the latest by destroy). The transport's reply
 * cache retires its AHs the same way (rdps_ah_retire.h). 0, or RDPS_EAGAIN
 * when too many AHs wait already (the caller keeps ah and retries later).
 */
int rdps__verbs_transport_retire_ah(struct rdps_transport *t, struct ibv_ah *ah);

/*
 * Test hook: moves the QP to the error state (ibv_modify_qp IBV_QPS_ERR), as
 * a fatal QP error would. The transport notices (flushed completions, a
 * refused post or the QP_FATAL event), resets the QP and reports
 * RDPS_TRANSPORT_EV_QP_RECOVERED.
 */
int rdps__verbs_transport_force_error(struct rdps_transport *t);

#endif /* RDPS_VERBS_TRANSPORT_H */
