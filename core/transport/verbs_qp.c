/* SPDX-License-Identifier: BSD-2-Clause */
/* verbs_qp.c - verbs transport QP lifecycle: the shared UD QP brought to RTS, reset and brought
 * back when it enters the error state, and the multicast attachments it must keep across that. */
#include "verbs_internal.h"

#include "rdps_error.h"
#include "rdps_log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* RESET (or a fresh QP) -> INIT -> RTR -> RTS, with the port and Q_Key of this transport. */
static int bring_up(struct verbs_transport *vt)
{
    struct ibv_qp_attr attr;
    memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_INIT;
    attr.pkey_index = 0;
    attr.port_num = vt->info.port_num;
    attr.qkey = vt->info.qkey;
    int err = ibv_modify_qp(vt->info.qp, &attr,
                            IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
    if (err == 0) {
        memset(&attr, 0, sizeof(attr));
        attr.qp_state = IBV_QPS_RTR;
        err = ibv_modify_qp(vt->info.qp, &attr, IBV_QP_STATE);
    }
    if (err == 0) {
        memset(&attr, 0, sizeof(attr));
        attr.qp_state = IBV_QPS_RTS;
        attr.sq_psn = 0;
        err = ibv_modify_qp(vt->info.qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
    }
    if (err != 0)
        return rdps__set_err(rdps__errno_code(err), "ibv_modify_qp(UD INIT/RTR/RTS): %s",
                             strerror(err));
    return 0;
}

int rdps__verbs_create_qp(struct verbs_transport *vt, const struct ibv_device_attr *dev_attr,
                          uint32_t want_inline)
{
    struct ibv_qp_init_attr init;

    if (vt->sq_depth > (uint32_t)dev_attr->max_qp_wr ||
        vt->recv_slots > (uint32_t)dev_attr->max_qp_wr)
        return rdps__set_err(RDPS_EINVAL, "queue depth (send %u, receive %u) exceeds device max %d",
                             vt->sq_depth, vt->recv_slots, dev_attr->max_qp_wr);
    /* Two send SGEs (submit_gather: a header and a payload from registered memory), else one;
     * inline data where the device grants it. */
    for (int attempt = 0; attempt < 4; attempt++) {
        memset(&init, 0, sizeof(init));
        init.send_cq = vt->send_cq;
        init.recv_cq = vt->recv_cq;
        init.qp_type = IBV_QPT_UD;
        init.sq_sig_all = 0;
        init.cap.max_send_wr = vt->sq_depth;
        init.cap.max_recv_wr = vt->recv_slots;
        init.cap.max_send_sge = attempt < 2 ? 2 : 1;
        init.cap.max_recv_sge = 1;
        init.cap.max_inline_data = attempt % 2 == 0 ? want_inline : 0;
        vt->info.qp = ibv_create_qp(vt->info.pd, &init);
        if (vt->info.qp != NULL)
            break;
    }
    if (vt->info.qp == NULL)
        return rdps__set_err(rdps__errno_code(errno), "ibv_create_qp(UD, sq %u, rq %u): %s",
                             vt->sq_depth, vt->recv_slots, strerror(errno));
    /* ibv_create_qp reports the inline size and SGEs actually granted. */
    vt->info.max_inline = init.cap.max_inline_data;
    vt->can_gather = init.cap.max_send_sge >= 2;
    vt->info.qpn = vt->info.qp->qp_num;
    return bring_up(vt);
}

/* Receive completions already drained: failed ones (flushed) go back to the pending list. */
static void drop_failed_from_ring(struct verbs_transport *vt)
{
    uint32_t kept = 0, n = vt->wc_count;
    for (uint32_t i = 0; i < n; i++) {
        struct ibv_wc *w = &vt->wc_ring[(vt->wc_head + i) % vt->recv_slots];
        if (w->status == IBV_WC_SUCCESS && w->byte_len >= RDPS_GRH_BYTES) {
            if (kept != i)
                vt->wc_ring[(vt->wc_head + kept) % vt->recv_slots] = *w;
            kept++;
        } else {
            vt->stats.rx_completion_errors++;
            vt->recv_pending[vt->recv_pending_count++] = (uint32_t)w->wr_id;
        }
    }
    vt->wc_count = kept;
}

static int attach(struct verbs_transport *vt, const struct verbs_mcast *m)
{
    int rc = ibv_attach_mcast(vt->info.qp, &m->gid, m->lid);
    if (rc != 0 && rc != EEXIST)
        return rdps__set_err(rdps__errno_code(rc), "ibv_attach_mcast: %s", strerror(rc));
    return 0;
}

/*
 * Error state -> RESET -> INIT -> RTR -> RTS on the same QPN. Datagrams that
 * completed before the error are kept (still handed out); every buffer that
 * was on the receive queue is re-posted under a new generation, so late
 * flushed completions of the old one are ignored; sends queued or in flight
 * are counted lost and their buffers freed; groups are re-attached.
 */
int rdps__verbs_recover_qp(struct verbs_transport *vt)
{
    struct ibv_qp_attr attr;
    vt->need_recovery = false;
    /* Before the reset: some providers remove a QP's completions from its CQs when it is reset. */
    (void)rdps__verbs_drain_recv_cq(vt);
    (void)verbs_reap_send(vt); /* sends that completed before the error are not lost */
    memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_RESET;
    int rc = ibv_modify_qp(vt->info.qp, &attr, IBV_QP_STATE);
    if (rc != 0)
        return rdps__set_err(rdps__errno_code(rc), "ibv_modify_qp(RESET): %s", strerror(rc));

    (void)rdps__verbs_drain_recv_cq(vt); /* what completed meanwhile */
    drop_failed_from_ring(vt);
    vt->recv_gen++;
    for (uint32_t slot = 0; slot < vt->recv_slots; slot++) {
        if (vt->rx_meta[slot].posted) {
            vt->rx_meta[slot].posted = 0;
            vt->recv_pending[vt->recv_pending_count++] = slot;
        }
    }
    vt->recv_posted = 0;

    (void)verbs_reap_send(vt);
    rdps__verbs_send_lose_all(vt);
    vt->need_recovery = false; /* what the reaps saw is this same error */

    int err = bring_up(vt);
    for (uint32_t i = 0; err == 0 && i < vt->mcast_count; i++)
        err = attach(vt, &vt->mcast[i]);
    if (err == 0)
        err = rdps__verbs_post_recv_pending(vt);
    if (err < 0)
        return rdps__prepend_err(err, "QP recovery: ");
    vt->stats.qp_recoveries++;
    rdps__verbs_push_event(vt, RDPS_TRANSPORT_EV_QP_RECOVERED);
    RDPS_LOG_WRN("%s: qpn 0x%x was in the error state: reset and back to RTS (%u groups)",
                 vt->info.device_name, vt->info.qpn, vt->mcast_count);
    return 0;
}

static int verbs_of(struct rdps_transport *t, struct verbs_transport **out)
{
    t = rdps__transport_innermost(t);
    if (!rdps__verbs_is_verbs(t))
        return RDPS_EINVAL;
    *out = to_verbs(t);
    return 0;
}

static struct verbs_mcast *find_mcast(struct verbs_transport *vt, const union ibv_gid *gid,
                                      uint16_t lid)
{
    for (uint32_t i = 0; i < vt->mcast_count; i++) {
        if (vt->mcast[i].lid == lid && memcmp(vt->mcast[i].gid.raw, gid->raw, 16) == 0)
            return &vt->mcast[i];
    }
    return NULL;
}

int rdps__verbs_transport_attach_mcast(struct rdps_transport *t, const union ibv_gid *gid,
                                       uint16_t lid)
{
    struct verbs_transport *vt;
    if (gid == NULL || verbs_of(t, &vt) < 0)
        return rdps__set_err(RDPS_EINVAL, "attach_mcast: not a verbs transport");
    struct verbs_mcast *m = find_mcast(vt, gid, lid);
    if (m != NULL) {
        m->refs++;
        return 0;
    }
    if (vt->mcast_count == vt->mcast_cap) {
        uint32_t cap = vt->mcast_cap ? vt->mcast_cap * 2 : 8;
        struct verbs_mcast *grown = realloc(vt->mcast, cap * sizeof(*grown));
        if (grown == NULL)
            return rdps__set_err(RDPS_ENOMEM, "attach_mcast: out of memory");
        vt->mcast = grown;
        vt->mcast_cap = cap;
    }
    m = &vt->mcast[vt->mcast_count];
    m->gid = *gid;
    m->lid = lid;
    m->refs = 1;
    int err = attach(vt, m);
    if (err < 0)
        return err;
    vt->mcast_count++;
    return 0;
}

int rdps__verbs_transport_detach_mcast(struct rdps_transport *t, const union ibv_gid *gid,
                                       uint16_t lid)
{
    struct verbs_transport *vt;
    if (gid == NULL || verbs_of(t, &vt) < 0)
        return rdps__set_err(RDPS_EINVAL, "detach_mcast: not a verbs transport");
    struct verbs_mcast *m = find_mcast(vt, gid, lid);
    if (m == NULL)
        return rdps__set_err(RDPS_ENOENT, "detach_mcast: the QP is not attached to that group");
    if (--m->refs > 0)
        return 0;
    *m = vt->mcast[--vt->mcast_count];
    int rc = ibv_detach_mcast(vt->info.qp, gid, lid);
    if (rc != 0)
        return rdps__set_err(rdps__errno_code(rc), "ibv_detach_mcast: %s", strerror(rc));
    return 0;
}

int rdps__verbs_transport_force_error(struct rdps_transport *t)
{
    struct verbs_transport *vt;
    if (verbs_of(t, &vt) < 0)
        return rdps__set_err(RDPS_EINVAL, "force_error: not a verbs transport");
    struct ibv_qp_attr attr;
    memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_ERR;
    int rc = ibv_modify_qp(vt->info.qp, &attr, IBV_QP_STATE);
    if (rc != 0)
        return rdps__set_err(rdps__errno_code(rc), "ibv_modify_qp(ERR): %s", strerror(rc));
    return 0;
}
