/* SPDX-License-Identifier: BSD-2-Clause */
/* verbs_internal.h - the verbs UD transport's private state, shared by its files (device, send
 * pool, receive pool, events, QP lifecycle, ops table); nothing outside core/transport includes it.
 */
#ifndef RDPS_VERBS_INTERNAL_H
#define RDPS_VERBS_INTERNAL_H

#include "rdps_ah_retire.h"
#include "rdps_reply_cache.h"
#include "rdps_verbs_transport.h"

#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdint.h>

#define VERBS_NO_SLOT UINT32_MAX
/* A submit_mem request's slot: pend_mem / posted_mem say which region. */
#define VERBS_MEM_SLOT (UINT32_MAX - 1)
/* A submit_gather request's slot: its header buffer's slot with this bit set; pend_mem /
 * posted_mem say which region holds its payload (the special slots above have the bit too). */
#define VERBS_GATHER_BIT 0x80000000u
static inline bool verbs_is_gather(uint32_t slot)
{
    return slot >= VERBS_GATHER_BIT && slot < VERBS_MEM_SLOT;
}
#define VERBS_POLL_BATCH 32
/* A signaled send not completed for this long, nothing else completing: a stalled device. */
#define VERBS_SEND_STALL_NS 2000000000ull
#define VERBS_EVENT_RING    16
#define VERBS_BUF_ALIGN     64u

/* What a reply needs from a receive completion besides the source, kept per receive slot. */
struct verbs_rx_meta {
    uint16_t slid;
    uint8_t sl;
    uint8_t posted; /* the buffer is on the receive queue (re-posted after a QP reset) */
};

/* A multicast group the QP is attached to, restored after a QP reset. */
struct verbs_mcast {
    union ibv_gid gid;
    uint16_t lid;
    uint32_t refs;
};

/*
 * Receive work-request ids carry the QP generation in the high 32 bits and the
 * slot in the low 32: completions of a QP incarnation before a reset (flushed
 * receives straggling in) are recognized and ignored, their slots having been
 * re-posted by the recovery.
 */
static inline uint64_t verbs_recv_wr_id(uint32_t gen, uint32_t slot)
{
    return ((uint64_t)gen << 32) | slot;
}

struct verbs_pinned_dest;

struct verbs_transport {
    struct rdps_transport base;
    struct rdps_verbs_info info;
    struct ibv_comp_channel *channel;
    struct ibv_cq *send_cq, *recv_cq;
    int epoll_fd;

    /* Send pool: slot i is send_mem + i * send_stride; refs counts the claim and each WR. */
    uint8_t *send_mem;
    struct ibv_mr *send_mr;
    uint32_t send_slots, send_stride;
    uint32_t *send_refs;
    uint32_t *send_free;
    uint32_t send_free_count;

    /* Work requests queued by submit(), posted as one chain by flush(). */
    struct ibv_send_wr *pend_wr;
    struct ibv_sge *pend_sge;
    uint32_t *pend_slot;
    uint32_t pend_count;
    /* For pend_slot VERBS_MEM_SLOT: the region, and the cookie on a submit's last request (else 0).
     */
    struct rdps_tx_mem **pend_mem;
    uint64_t *pend_cookie;
    uint32_t pend_mem_count; /* submit_mem and submit_gather requests among them */
    /* submit_gather's two SGEs per WR (header, payload); its WR points there until posted. */
    struct ibv_sge *gather_sge;
    bool can_gather; /* the QP was granted two send SGEs */

    /* Posted WRs by sequence (wr_id); everything below base.tx.seen has completed, and
     * base.tx.awaited is 1 + the last signaled WR posted (rdps_tx_progress). */
    uint32_t *posted_slot;
    struct rdps_tx_mem **posted_mem; /* by sequence, for posted_slot VERBS_MEM_SLOT */
    uint64_t *posted_cookie;
    uint64_t next_seq;
    uint64_t mem_posted_through; /* 1 + sequence of the last submit_mem WR posted (0: none) */
    /* Send watchdog (verbs_events.c): base.tx.seen when last looked at, and since when it has not
     * moved with a signaled WR outstanding (0: not waiting). */
    uint64_t watch_done_seq, watch_since_ns;
    bool watch_reported;
    uint32_t sq_depth, signal_every, unsignaled_run;
    /*
     * flush() signals a chain's last WR when fewer free send buffers than this
     * remain: signal_every, or UINT32_MAX while the chain holds submit_mem
     * requests (so their completion comes without a later send; one compare
     * on the pool's path instead of two).
     */
    uint32_t low_free_mark;

    /* Receive pool: slot i is recv_mem + i * recv_stride (GRH + MTU). */
    uint8_t *recv_mem;
    struct ibv_mr *recv_mr;
    uint32_t recv_slots, recv_stride, recv_batch, recv_posted;
    uint32_t recv_gen; /* QP incarnation, bumped by every reset */
    struct ibv_recv_wr *recv_wr;
    struct ibv_sge *recv_sge;
    uint32_t *recv_pending;
    uint32_t recv_pending_count;
    struct verbs_rx_meta *rx_meta; /* recv_slots entries */
    /* Receive completions drained from the CQ, handed out by poll() (recv_slots entries). */
    struct ibv_wc *wc_ring;
    uint32_t wc_head, wc_count;

    /* Registered caller memory (mem_register), deregistered at destroy if the caller did not. */
    struct rdps_tx_mem *mems;

    /* Reply destinations, built on request; evicted AHs wait in `retired` for their sends. */
    struct rdps_reply_cache replies;
    struct rdps_ah_retire retired;
    /* Destinations held by dest_acquire (unicast fan-out), and released ones whose AH the full
     * retirement ring could not take yet (retried at the next release, destroyed at the end). */
    struct verbs_pinned_dest *pinned;

    /* QP lifecycle: multicast attachments to restore, and a reset to run. */
    struct verbs_mcast *mcast;
    uint32_t mcast_count, mcast_cap;
    bool need_recovery;

    enum rdps_transport_event_type events[VERBS_EVENT_RING];
    uint32_t event_head, event_count;
    bool device_fatal;
    bool recv_notify_armed, send_notify_armed;
    struct rdps_transport_stats stats;
};

static inline struct verbs_transport *to_verbs(struct rdps_transport *t)
{
    return (struct verbs_transport *)t;
}

/* ---- verbs_transport.c: ops table, create / destroy ---- */
/* true when t (not looking through interceptors) is a verbs transport. */
bool rdps__verbs_is_verbs(const struct rdps_transport *t);

/* ---- verbs_device.c: device, port and GID ---- */
/* Opens the device port cfg asks for (or the first ACTIVE one), fills vt->info's port fields. */
int rdps__verbs_open_port(struct verbs_transport *vt, const struct rdps_verbs_config *cfg,
                          struct ibv_device_attr *dev_attr);

/* ---- verbs_send.c: send pool ---- */
int rdps__verbs_claim(struct rdps_transport *t, struct rdps_tx_buf *buf);
void rdps__verbs_abort(struct rdps_transport *t, struct rdps_tx_buf *buf);
int rdps__verbs_submit(struct rdps_transport *t, struct rdps_tx_buf *buf, uint32_t len,
                       const struct rdps_dest *const *dests, unsigned ndest);
int rdps__verbs_flush(struct rdps_transport *t);
/* Polls the send CQ (call only through verbs_reap_send, which skips it when nothing is signaled).
 */
int rdps__verbs_reap_send_cq(struct verbs_transport *vt);
/* Counts every queued and posted send as lost and frees their buffers (the QP was reset). */
void rdps__verbs_send_lose_all(struct verbs_transport *vt);
/* Releases queued request i (dropped, never posted): its buffer or its region's reference. */
void rdps__verbs_pend_drop(struct verbs_transport *vt, uint32_t i);
/* Hands an AH that queued or posted sends may name to the retirement ring (reaps once if full). */
int rdps__verbs_retire_ah(struct verbs_transport *vt, void *ah);

static inline int verbs_reap_send(struct verbs_transport *vt)
{
    /* Only signaled WRs complete: with none in flight the send CQ has nothing to give. */
    return vt->base.tx.awaited > vt->base.tx.seen ? rdps__verbs_reap_send_cq(vt) : 0;
}

static inline uint32_t verbs_sq_room(const struct verbs_transport *vt)
{
    uint64_t outstanding = vt->next_seq - vt->base.tx.seen;
    return vt->sq_depth - (uint32_t)outstanding - vt->pend_count;
}

/* ---- verbs_mem.c: registered caller memory, zero-copy sends from it ---- */
int rdps__verbs_mem_register(struct rdps_transport *t, void *addr, size_t len,
                             struct rdps_tx_mem **out);
int rdps__verbs_mem_deregister(struct rdps_transport *t, struct rdps_tx_mem *m);
int rdps__verbs_submit_mem(struct rdps_transport *t, struct rdps_tx_mem *m, size_t offset,
                           uint32_t len, const struct rdps_dest *const *dests, unsigned ndest,
                           uint64_t cookie);
/* A header from a claimed pool buffer and a payload from a region: one WR of two SGEs. */
int rdps__verbs_submit_gather(struct rdps_transport *t, struct rdps_tx_buf *buf, uint32_t hdr_len,
                              struct rdps_tx_mem *m, size_t offset, uint32_t len,
                              const struct rdps_dest *const *dests, unsigned ndest,
                              uint64_t cookie);
/* Deregisters every region left (destroy, after the QP). */
void rdps__verbs_mem_fini(struct verbs_transport *vt);

/* ---- verbs_recv.c: receive pool ---- */
int rdps__verbs_post_recv_pending(struct verbs_transport *vt);
/* Moves every waiting receive completion of the current QP generation into the ring. */
int rdps__verbs_drain_recv_cq(struct verbs_transport *vt);
int rdps__verbs_poll(struct rdps_transport *t, struct rdps_rx_datagram *rx, int max);
void rdps__verbs_rx_release(struct rdps_transport *t, struct rdps_rx_datagram *rx, int count);
int rdps__verbs_reply_dest(struct rdps_transport *t, const struct rdps_rx_datagram *rx,
                           const struct rdps_dest **out);
int rdps__verbs_source_dest(struct rdps_transport *t, const struct rdps_source *src,
                            const struct rdps_dest **out);
int rdps__verbs_dest_acquire(struct rdps_transport *t, const struct rdps_source *src,
                             const struct rdps_dest **out);
void rdps__verbs_dest_release(struct rdps_transport *t, const struct rdps_dest *dest);
/* Destroys every pinned AH (destroy, after the QP: no send can name them). */
void rdps__verbs_pinned_fini(struct verbs_transport *vt);
uint32_t rdps__verbs_send_room(struct rdps_transport *t);
/* The reply cache's callbacks: AHs built from a datagram's source, retired by send sequence. */
void rdps__verbs_reply_cache_ops(struct verbs_transport *vt, struct rdps_reply_cache_ops *ops);

/* ---- verbs_events.c: completion channel and async events ---- */
int rdps__verbs_event_fd(struct rdps_transport *t);
int rdps__verbs_arm(struct rdps_transport *t);
int rdps__verbs_next_event(struct rdps_transport *t, enum rdps_transport_event_type *type);
void rdps__verbs_push_event(struct verbs_transport *vt, enum rdps_transport_event_type type);
/* Acks every pending CQ event (ibv_destroy_cq waits for them). */
void rdps__verbs_ack_cq_events(struct verbs_transport *vt);

/* ---- verbs_qp.c: QP creation, recovery from the error state, multicast attachments ---- */
int rdps__verbs_create_qp(struct verbs_transport *vt, const struct ibv_device_attr *dev_attr,
                          uint32_t want_inline);
/* Resets the QP and brings it back to RTS with receives re-posted and groups re-attached. */
int rdps__verbs_recover_qp(struct verbs_transport *vt);

#endif /* RDPS_VERBS_INTERNAL_H */
