/* SPDX-License-Identifier: BSD-2-Clause */
/* verbs_recv.c - verbs transport receive pool: buffers (GRH + MTU) posted in batches, completions
 * drained and handed out, the sender's identity, reply destinations built on request. */
#include "verbs_internal.h"

#include "rdps_error.h"
#include "rdps_log.h"
#include "rdps_rx_source.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int rdps__verbs_post_recv_pending(struct verbs_transport *vt)
{
    uint32_t n = vt->recv_pending_count;
    if (n == 0)
        return 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t slot = vt->recv_pending[i];
        struct ibv_recv_wr *wr = &vt->recv_wr[i];
        /* sg_list, num_sge, length and lkey were set once at create; chained up to the last. */
        vt->recv_sge[i].addr = (uint64_t)(uintptr_t)(vt->recv_mem + (size_t)slot * vt->recv_stride);
        wr->wr_id = verbs_recv_wr_id(vt->recv_gen, slot);
        wr->next = &vt->recv_wr[i + 1];
    }
    vt->recv_wr[n - 1].next = NULL;
    struct ibv_recv_wr *bad = NULL;
    int ret = ibv_post_recv(vt->info.qp, &vt->recv_wr[0], &bad);
    uint32_t posted = ret == 0 ? n : (uint32_t)(bad - &vt->recv_wr[0]);
    for (uint32_t i = 0; i < posted; i++)
        vt->rx_meta[vt->recv_pending[i]].posted = 1;
    vt->recv_posted += posted;
    /* Keep what was not posted for the next attempt. */
    memmove(vt->recv_pending, vt->recv_pending + posted, (n - posted) * sizeof(uint32_t));
    vt->recv_pending_count = n - posted;
    if (ret != 0)
        return rdps__set_err(rdps__errno_code(ret), "ibv_post_recv: %s", strerror(ret));
    return 0;
}

/*
 * Moves every waiting receive completion into the ring. Draining the CQ
 * completely is what makes an empty receive queue visible: if nothing posted
 * is left after the drain, the device had no buffer for the next datagram.
 * Completions of an earlier QP generation (flushed before a reset, their
 * buffers re-posted since) are dropped here.
 */
static inline int drain_recv_cq(struct verbs_transport *vt)
{
    uint32_t drained = 0;
    while (vt->wc_count < vt->recv_slots) {
        uint32_t tail = (vt->wc_head + vt->wc_count) % vt->recv_slots;
        uint32_t room = vt->recv_slots - tail; /* contiguous entries up to the ring's end */
        if (room > vt->recv_slots - vt->wc_count)
            room = vt->recv_slots - vt->wc_count;
        if (room > VERBS_POLL_BATCH)
            room = VERBS_POLL_BATCH;
        struct ibv_wc *batch = &vt->wc_ring[tail];
        int n = ibv_poll_cq(vt->recv_cq, (int)room, batch);
        if (n < 0)
            return RDPS_EIO;
        uint32_t kept = 0;
        for (int i = 0; i < n; i++) {
            if ((uint32_t)(batch[i].wr_id >> 32) != vt->recv_gen)
                continue;
            vt->rx_meta[(uint32_t)batch[i].wr_id].posted = 0;
            if (kept != (uint32_t)i)
                batch[kept] = batch[i];
            kept++;
        }
        vt->wc_count += kept;
        drained += kept;
        if ((uint32_t)n < room)
            break;
    }
    if (drained > 0) {
        vt->recv_posted -= drained;
        if (vt->recv_posted == 0)
            vt->stats.rx_queue_empty++;
    }
    return 0;
}

int rdps__verbs_drain_recv_cq(struct verbs_transport *vt)
{
    return drain_recv_cq(vt);
}

int rdps__verbs_poll(struct rdps_transport *t, struct rdps_rx_datagram *rx, int max)
{
    struct verbs_transport *vt = to_verbs(t);
    int got = 0;

    if (vt->device_fatal)
        return RDPS_EDEVFATAL;
    int err = verbs_reap_send(vt);
    if (err == 0)
        err = drain_recv_cq(vt);
    if (err < 0)
        return err;
    while (got < max && vt->wc_count > 0) {
        struct ibv_wc *w = &vt->wc_ring[vt->wc_head];
        vt->wc_head = vt->wc_head + 1 == vt->recv_slots ? 0 : vt->wc_head + 1;
        vt->wc_count--;
        uint32_t slot = (uint32_t)w->wr_id;
        uint8_t *buf = vt->recv_mem + (size_t)slot * vt->recv_stride;
        if (w->status != IBV_WC_SUCCESS || w->byte_len < RDPS_GRH_BYTES) {
            vt->stats.rx_completion_errors++;
            /* Flushed: the QP is in the error state; the buffer is re-posted after the reset. */
            if (w->status == IBV_WC_WR_FLUSH_ERR)
                vt->need_recovery = true;
            vt->recv_pending[vt->recv_pending_count++] = slot;
            continue;
        }
        struct rdps_rx_datagram *d = &rx[got++];
        d->data = buf + RDPS_GRH_BYTES;
        d->len = w->byte_len - RDPS_GRH_BYTES;
        d->src_qpn = w->src_qp;
        d->slot = slot;
        rdps__rx_fill_source(d, buf, (w->wc_flags & IBV_WC_GRH) != 0, w->slid);
        /* What a reply would need besides the source; nothing is built unless one is asked for. */
        vt->rx_meta[slot].slid = w->slid;
        vt->rx_meta[slot].sl = w->sl;
        vt->stats.rx_datagrams++;
        vt->stats.rx_bytes += d->len;
    }
    if (vt->need_recovery) {
        if (rdps__verbs_recover_qp(vt) < 0)
            RDPS_LOG_ERR("%s: QP recovery failed: %s", vt->info.device_name,
                         rdps_last_error_message());
    } else if (vt->recv_pending_count > 0 && vt->recv_posted < vt->recv_batch) {
        (void)rdps__verbs_post_recv_pending(vt);
    }
    return got;
}

void rdps__verbs_rx_release(struct rdps_transport *t, struct rdps_rx_datagram *rx, int count)
{
    struct verbs_transport *vt = to_verbs(t);
    for (int i = 0; i < count; i++) {
        if (rx[i].slot >= vt->recv_slots || vt->recv_pending_count >= vt->recv_slots)
            continue;
        vt->recv_pending[vt->recv_pending_count++] = rx[i].slot;
        rx[i].slot = VERBS_NO_SLOT;
        rx[i].data = NULL;
    }
    if (vt->recv_pending_count >= vt->recv_batch || vt->recv_posted < vt->recv_batch) {
        if (rdps__verbs_post_recv_pending(vt) < 0)
            RDPS_LOG_WRN("re-posting receive buffers: %s", rdps_last_error_message());
    }
}

/* What an AH to a datagram's sender is built from (the reply cache's make_arg). */
struct reply_arg {
    const uint8_t *gid; /* NULL: no GRH, address by LID */
    uint32_t qpn;
    uint16_t dlid;
    uint8_t sl;
};

/*
 * One ibv_create_ah from the source alone: with a GRH (RoCE; IB routed or
 * multicast) from our own GID to the sender's, which also answers datagrams
 * that came through a multicast group (their destination GID is the group's,
 * no local GID); without one, to the sender's LID.
 */
static int make_reply_ah(void *user, const void *make_arg, void **out)
{
    struct verbs_transport *vt = user;
    const struct reply_arg *arg = make_arg;
    struct ibv_ah_attr attr;
    memset(&attr, 0, sizeof(attr));
    if (arg->gid != NULL) {
        attr.is_global = 1;
        memcpy(attr.grh.dgid.raw, arg->gid, 16);
        attr.grh.sgid_index = vt->info.gid_index;
        attr.grh.hop_limit = 0xff;
    }
    attr.dlid = arg->dlid;
    attr.sl = arg->sl;
    attr.port_num = vt->info.port_num;
    struct ibv_ah *ah = ibv_create_ah(vt->info.pd, &attr);
    if (ah == NULL)
        return rdps__set_err(rdps__errno_code(errno != 0 ? errno : EINVAL),
                             "reply address handle for QPN 0x%x: ibv_create_ah: %s", arg->qpn,
                             strerror(errno));
    *out = ah;
    return 0;
}

static int retire_reply_ah(void *user, void *ah)
{
    return rdps__verbs_retire_ah(user, ah);
}

void rdps__verbs_reply_cache_ops(struct verbs_transport *vt, struct rdps_reply_cache_ops *ops)
{
    ops->make_ah = make_reply_ah;
    ops->retire_ah = retire_reply_ah;
    ops->user = vt;
}

int rdps__verbs_reply_dest(struct rdps_transport *t, const struct rdps_rx_datagram *rx,
                           const struct rdps_dest **out)
{
    struct verbs_transport *vt = to_verbs(t);
    if (out == NULL)
        return RDPS_EINVAL;
    *out = NULL;
    if (rx == NULL || rx->slot >= vt->recv_slots)
        return rdps__set_err(RDPS_EINVAL, "reply: not a received datagram of this transport");
    struct rdps_reply_key key;
    rdps__rx_reply_key(rx, &key);
    const struct verbs_rx_meta *meta = &vt->rx_meta[rx->slot];
    struct reply_arg arg = {rx->has_src_gid ? rx->src_gid : NULL, rx->src_qpn, meta->slid,
                            meta->sl};
    return rdps__reply_cache_get(&vt->replies, &key, &arg, out);
}

int rdps__verbs_source_dest(struct rdps_transport *t, const struct rdps_source *src,
                            const struct rdps_dest **out)
{
    struct verbs_transport *vt = to_verbs(t);
    if (out == NULL)
        return RDPS_EINVAL;
    *out = NULL;
    if (src == NULL || src->qpn == 0 || src->qpn >= 0xffffffu || (!src->has_gid && src->lid == 0))
        return rdps__set_err(RDPS_EINVAL, "source_dest: no QPN, GID or LID to address");
    struct rdps_reply_key key;
    rdps__source_reply_key(src, &key);
    /*
     * The key is the one reply_dest uses for the same sender, so a source once
     * answered is a cache hit here. A miss on InfiniBand with only a GID
     * would need the LID its datagram came from (or a path query).
     */
    if (src->has_gid && src->lid == 0 && vt->info.link_layer == IBV_LINK_LAYER_INFINIBAND &&
        !rdps__reply_cache_contains(&vt->replies, &key))
        return rdps__set_err(RDPS_ENOTSUP,
                             "source_dest: InfiniBand source QPN 0x%x known by GID only: no LID "
                             "to address it (answer one of its datagrams with reply_dest)",
                             src->qpn);
    struct reply_arg arg = {src->has_gid ? src->gid : NULL, src->qpn, src->lid, 0};
    return rdps__reply_cache_get(&vt->replies, &key, &arg, out);
}

/* ---- destinations held for unicast fan-out (dest_acquire / dest_release) ---- */

struct verbs_pinned_dest {
    struct rdps_dest dest; /* first: the caller holds &dest */
    struct verbs_pinned_dest *next;
    bool released; /* given back; its AH waits for room in the retirement ring */
};

int rdps__verbs_dest_acquire(struct rdps_transport *t, const struct rdps_source *src,
                             const struct rdps_dest **out)
{
    struct verbs_transport *vt = to_verbs(t);
    if (out == NULL)
        return RDPS_EINVAL;
    *out = NULL;
    if (src == NULL || src->qpn == 0 || src->qpn >= 0xffffffu || (!src->has_gid && src->lid == 0))
        return rdps__set_err(RDPS_EINVAL, "dest_acquire: no QPN, GID or LID to address");
    if (src->has_gid && src->lid == 0 && vt->info.link_layer == IBV_LINK_LAYER_INFINIBAND)
        return rdps__set_err(RDPS_ENOTSUP,
                             "dest_acquire: InfiniBand source QPN 0x%x known by GID only: no LID "
                             "to address it",
                             src->qpn);
    struct verbs_pinned_dest *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return rdps__set_err(RDPS_ENOMEM, "dest_acquire: out of memory");
    /* The very AH a reply to a datagram of that source would get (make_reply_ah). */
    struct reply_arg arg = {src->has_gid ? src->gid : NULL, src->qpn, src->lid, 0};
    void *ah;
    int err = make_reply_ah(vt, &arg, &ah);
    if (err < 0) {
        free(p);
        return err;
    }
    p->dest.ah = ah;
    p->dest.remote_qpn = src->qpn;
    p->dest.remote_qkey = vt->info.qkey;
    p->dest.no_grh = !src->has_gid;
    p->next = vt->pinned;
    vt->pinned = p;
    *out = &p->dest;
    return 0;
}

void rdps__verbs_dest_release(struct rdps_transport *t, const struct rdps_dest *dest)
{
    struct verbs_transport *vt = to_verbs(t);
    for (struct verbs_pinned_dest **link = &vt->pinned; *link != NULL;) {
        struct verbs_pinned_dest *p = *link;
        if (&p->dest == dest)
            p->released = true;
        /* Sends queued or posted before now may name the AH: it waits for them. */
        if (p->released && rdps__verbs_retire_ah(vt, p->dest.ah) == 0) {
            *link = p->next;
            free(p);
            continue;
        }
        link = &p->next;
    }
}

void rdps__verbs_pinned_fini(struct verbs_transport *vt)
{
    while (vt->pinned != NULL) {
        struct verbs_pinned_dest *p = vt->pinned;
        vt->pinned = p->next;
        ibv_destroy_ah(p->dest.ah);
        free(p);
    }
}

uint32_t rdps__verbs_send_room(struct rdps_transport *t)
{
    struct verbs_transport *vt = to_verbs(t);
    if (verbs_sq_room(vt) < vt->signal_every)
        (void)verbs_reap_send(vt);
    return verbs_sq_room(vt);
}
