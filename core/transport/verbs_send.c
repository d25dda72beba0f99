/* SPDX-License-Identifier: BSD-2-Clause */
/* verbs_send.c - verbs transport send pool: registered buffers, queued work requests posted as one
 * chain, selective signaling, completions reaped in sequence, AH retirement by sequence. */
#include "verbs_internal.h"

#include "rdps_error.h"
#include "rdps_log.h"

#include <string.h>

static void send_slot_unref(struct verbs_transport *vt, uint32_t slot)
{
    if (--vt->send_refs[slot] == 0)
        vt->send_free[vt->send_free_count++] = slot;
}

/* Everything up to and including `seq` has completed (send completions arrive in order). */
static void complete_through(struct verbs_transport *vt, uint64_t seq)
{
    for (uint64_t s = vt->base.tx.seen; s <= seq; s++) {
        uint32_t *slot = &vt->posted_slot[s % vt->sq_depth];
        if (*slot != VERBS_NO_SLOT) {
            if (*slot < VERBS_GATHER_BIT) {
                send_slot_unref(vt, *slot);
            } else {
                if (*slot != VERBS_MEM_SLOT) /* a gather: its header's buffer, then its region */
                    send_slot_unref(vt, *slot & ~VERBS_GATHER_BIT);
                rdps__tx_mem_release(vt->posted_mem[s % vt->sq_depth],
                                     vt->posted_cookie[s % vt->sq_depth]);
            }
        }
        *slot = VERBS_NO_SLOT;
    }
    vt->base.tx.seen = seq + 1;
    if (vt->retired.count > 0)
        rdps__ah_retire_sweep(&vt->retired, vt->base.tx.seen);
}

int rdps__verbs_reap_send_cq(struct verbs_transport *vt)
{
    struct ibv_wc wc[VERBS_POLL_BATCH];
    int n;
    do {
        n = ibv_poll_cq(vt->send_cq, VERBS_POLL_BATCH, wc);
        if (n < 0)
            return RDPS_EIO;
        for (int i = 0; i < n; i++) {
            uint64_t seq = wc[i].wr_id;
            /* Not ours, or of a QP incarnation before a reset (already counted lost): ignore. */
            if (seq >= vt->next_seq || seq < vt->base.tx.seen)
                continue;
            if (wc[i].status != IBV_WC_SUCCESS) {
                vt->stats.tx_completion_errors++;
                /* Flushed: the QP is in the error state and needs a reset. */
                if (wc[i].status == IBV_WC_WR_FLUSH_ERR)
                    vt->need_recovery = true;
                RDPS_LOG_DBG("send completion error: %s", ibv_wc_status_str(wc[i].status));
            }
            complete_through(vt, seq);
        }
    } while (n == VERBS_POLL_BATCH);
    return 0;
}

/* A gather WR goes back to the pool's one SGE (after its post, or when it is dropped). */
static void gather_wr_reset(struct verbs_transport *vt, uint32_t i)
{
    vt->pend_wr[i].sg_list = &vt->pend_sge[i];
    vt->pend_wr[i].num_sge = 1;
}

void rdps__verbs_pend_drop(struct verbs_transport *vt, uint32_t i)
{
    uint32_t slot = vt->pend_slot[i];
    if (slot == VERBS_MEM_SLOT) {
        rdps__tx_mem_release(vt->pend_mem[i], 0);
        vt->pend_sge[i].lkey = vt->send_mr->lkey; /* the slot's default, for the next pool send */
    } else if (verbs_is_gather(slot)) {
        rdps__tx_mem_release(vt->pend_mem[i], 0);
        gather_wr_reset(vt, i);
        send_slot_unref(vt, slot & ~VERBS_GATHER_BIT);
    } else {
        send_slot_unref(vt, slot);
    }
}

void rdps__verbs_send_lose_all(struct verbs_transport *vt)
{
    vt->stats.tx_lost_qp_error += (vt->next_seq - vt->base.tx.seen) + vt->pend_count;
    if (vt->next_seq > vt->base.tx.seen)
        complete_through(vt, vt->next_seq - 1);
    for (uint32_t i = 0; i < vt->pend_count; i++)
        rdps__verbs_pend_drop(vt, i);
    vt->pend_count = 0;
    vt->pend_mem_count = 0;
    vt->low_free_mark = vt->signal_every;
    vt->base.tx.awaited = vt->base.tx.seen;
    vt->unsignaled_run = 0;
    rdps__ah_retire_sweep(&vt->retired, UINT64_MAX);
}

int rdps__verbs_retire_ah(struct verbs_transport *vt, void *ah)
{
    /* Queued WRs get sequences from next_seq on when flushed: the AH waits for all of them. */
    uint64_t until = vt->next_seq + vt->pend_count;
    int err = rdps__ah_retire(&vt->retired, ah, until, vt->base.tx.seen);
    if (err == RDPS_EAGAIN && verbs_reap_send(vt) == 0)
        err = rdps__ah_retire(&vt->retired, ah, until, vt->base.tx.seen);
    return err;
}

int rdps__verbs_transport_retire_ah(struct rdps_transport *t, struct ibv_ah *ah)
{
    t = rdps__transport_innermost(t);
    if (!rdps__verbs_is_verbs(t) || ah == NULL)
        return rdps__set_err(RDPS_EINVAL, "retire_ah: not a verbs transport or no AH");
    return rdps__verbs_retire_ah(to_verbs(t), ah);
}

int rdps__verbs_claim(struct rdps_transport *t, struct rdps_tx_buf *buf)
{
    struct verbs_transport *vt = to_verbs(t);
    if (vt->device_fatal)
        return RDPS_EDEVFATAL;
    if (vt->send_free_count == 0 || verbs_sq_room(vt) == 0) {
        int err = verbs_reap_send(vt);
        if (err < 0)
            return err;
        if (vt->send_free_count == 0 || verbs_sq_room(vt) == 0) {
            vt->stats.tx_backpressure++;
            return RDPS_EAGAIN;
        }
    }
    uint32_t slot = vt->send_free[--vt->send_free_count];
    vt->send_refs[slot] = 1; /* the claim's own hold */
    buf->slot = slot;
    buf->data = vt->send_mem + (size_t)slot * vt->send_stride;
    buf->capacity = vt->info.max_payload;
    return 0;
}

static bool claimed_slot(const struct verbs_transport *vt, const struct rdps_tx_buf *buf)
{
    return buf != NULL && buf->slot < vt->send_slots && vt->send_refs[buf->slot] > 0;
}

void rdps__verbs_abort(struct rdps_transport *t, struct rdps_tx_buf *buf)
{
    struct verbs_transport *vt = to_verbs(t);
    if (!claimed_slot(vt, buf))
        return;
    send_slot_unref(vt, buf->slot);
    buf->data = NULL;
    buf->slot = VERBS_NO_SLOT;
}

int rdps__verbs_submit(struct rdps_transport *t, struct rdps_tx_buf *buf, uint32_t len,
                       const struct rdps_dest *const *dests, unsigned ndest)
{
    struct verbs_transport *vt = to_verbs(t);
    int err = 0;

    if (!claimed_slot(vt, buf))
        return rdps__set_err(RDPS_EINVAL, "submit: buffer was not claimed from this transport");
    uint32_t slot = buf->slot;
    if (vt->device_fatal) {
        err = RDPS_EDEVFATAL;
    } else if (len > vt->info.max_payload) {
        err = rdps__set_err(
            RDPS_EMSGSIZE, "datagram of %u bytes exceeds max_payload %u (active MTU of %s port %u)",
            len, vt->info.max_payload, vt->info.device_name, vt->info.port_num);
    } else if (ndest == 0 || dests == NULL) {
        err = rdps__set_err(RDPS_EINVAL, "submit: no destination");
    } else if (verbs_sq_room(vt) < ndest) {
        vt->stats.tx_backpressure++;
        err = RDPS_EAGAIN;
    }
    if (err == 0) {
        for (unsigned i = 0; i < ndest; i++) {
            if (dests[i] == NULL || dests[i]->ah == NULL) {
                err = rdps__set_err(RDPS_EINVAL, "submit: destination %u has no address handle", i);
                break;
            }
        }
    }
    if (err != 0) {
        send_slot_unref(vt, slot);
        return err;
    }
    bool inline_send = len <= vt->info.max_inline;
    uint64_t addr = (uint64_t)(uintptr_t)(vt->send_mem + (size_t)slot * vt->send_stride);
    for (unsigned i = 0; i < ndest; i++) {
        uint32_t k = vt->pend_count++;
        struct ibv_sge *sge = &vt->pend_sge[k];
        struct ibv_send_wr *wr = &vt->pend_wr[k];
        /* sg_list, num_sge, opcode and lkey were set once at create (rdps__verbs_prepare_wrs). */
        sge->addr = addr;
        sge->length = len;
        wr->send_flags = inline_send ? IBV_SEND_INLINE : 0;
        wr->wr.ud.ah = dests[i]->ah;
        wr->wr.ud.remote_qpn = dests[i]->remote_qpn;
        wr->wr.ud.remote_qkey = dests[i]->remote_qkey;
        vt->pend_slot[k] = slot;
        vt->send_refs[slot]++;
    }
    send_slot_unref(vt, slot); /* the claim's hold passes to the queued WRs */
    buf->data = NULL;
    buf->slot = VERBS_NO_SLOT;
    return 0;
}

/* After a refused post: a QP in the error state is reset by the next poll(). */
static void check_qp_error(struct verbs_transport *vt)
{
    struct ibv_qp_attr attr;
    struct ibv_qp_init_attr init;
    if (ibv_query_qp(vt->info.qp, &attr, IBV_QP_STATE, &init) == 0 &&
        (attr.qp_state == IBV_QPS_ERR || attr.qp_state == IBV_QPS_SQE))
        vt->need_recovery = true;
}

/*
 * The submit_mem requests among the first `posted` of the chain just posted:
 * inline ones no longer reference their region (released now, their slot
 * becomes NO_SLOT and the flag is cleared so the pool loop leaves them); the
 * others are recorded by sequence for complete_through. Kept out of flush's
 * loop so sends from the pool pay nothing for it. Ends the chain's
 * submit_mem bookkeeping.
 */
static void posted_mem_requests(struct verbs_transport *vt, uint32_t posted)
{
    for (uint32_t i = 0; i < posted; i++) {
        uint32_t slot = vt->pend_slot[i];
        if (verbs_is_gather(slot)) {
            gather_wr_reset(vt, i);
            if (vt->pend_wr[i].send_flags & IBV_SEND_INLINE) {
                /* Both parts were copied into the WQE: the region is free, and the pool loop
                 * frees the header's buffer as for any inline send. */
                rdps__tx_mem_release(vt->pend_mem[i], 0);
                vt->pend_slot[i] = slot & ~VERBS_GATHER_BIT;
            } else {
                uint64_t seq = vt->next_seq + i;
                vt->posted_mem[seq % vt->sq_depth] = vt->pend_mem[i];
                vt->posted_cookie[seq % vt->sq_depth] = vt->pend_cookie[i];
                vt->mem_posted_through = seq + 1;
            }
            continue;
        }
        if (slot != VERBS_MEM_SLOT)
            continue;
        vt->pend_sge[i].lkey = vt->send_mr->lkey; /* the slot's default, for the next pool send */
        if (vt->pend_wr[i].send_flags & IBV_SEND_INLINE) {
            rdps__tx_mem_release(vt->pend_mem[i], 0);
            vt->pend_slot[i] = VERBS_NO_SLOT;
            vt->pend_wr[i].send_flags &= ~(unsigned)IBV_SEND_INLINE;
        } else {
            uint64_t seq = vt->next_seq + i;
            vt->posted_mem[seq % vt->sq_depth] = vt->pend_mem[i];
            vt->posted_cookie[seq % vt->sq_depth] = vt->pend_cookie[i];
            vt->mem_posted_through = seq + 1;
        }
    }
    /* Unposted ones (i >= posted) are dropped by flush through rdps__verbs_pend_drop. */
    vt->pend_mem_count = 0;
    vt->low_free_mark = vt->signal_every;
}

int rdps__verbs_flush(struct rdps_transport *t)
{
    struct verbs_transport *vt = to_verbs(t);
    uint32_t n = vt->pend_count;
    if (n == 0)
        return 0;
    if (vt->device_fatal) {
        for (uint32_t i = 0; i < n; i++)
            rdps__verbs_pend_drop(vt, i);
        vt->pend_count = 0;
        vt->pend_mem_count = 0;
        vt->low_free_mark = vt->signal_every;
        return RDPS_EDEVFATAL;
    }
    /*
     * Signal every signal_every-th WR, and the chain's last one when buffers or
     * queue slots run low, so a sender that stops never leaves the pool stuck
     * behind unsignaled WRs; also when the chain has submit_mem requests, so
     * their region's `completed` advances without any later send; and when no
     * signaled WR is in flight, so a completion is awaited for what this chain
     * posts (rdps_tx_progress: batching holds messages until it is seen).
     */
    uint32_t room_after = verbs_sq_room(vt); /* pend_count is already counted as used */
    bool low = vt->send_free_count < vt->low_free_mark || room_after < vt->signal_every ||
               !rdps__tx_awaited(&vt->base.tx);
    for (uint32_t i = 0; i < n; i++) {
        struct ibv_send_wr *wr = &vt->pend_wr[i];
        wr->wr_id = vt->next_seq + i;
        wr->next = i + 1 < n ? &vt->pend_wr[i + 1] : NULL;
        if (++vt->unsignaled_run >= vt->signal_every || (low && i + 1 == n)) {
            wr->send_flags |= IBV_SEND_SIGNALED;
            vt->unsignaled_run = 0;
        }
    }
    struct ibv_send_wr *bad = NULL;
    int ret = ibv_post_send(vt->info.qp, &vt->pend_wr[0], &bad);
    uint32_t posted = ret == 0 ? n : (uint32_t)(bad - &vt->pend_wr[0]);
    if (vt->pend_mem_count > 0)
        posted_mem_requests(vt, posted);
    for (uint32_t i = 0; i < posted; i++) {
        uint64_t seq = vt->next_seq + i;
        uint32_t slot = vt->pend_slot[i];
        if (vt->pend_wr[i].send_flags & IBV_SEND_INLINE) {
            /* The data was copied into the WQE: the buffer is free already. */
            send_slot_unref(vt, slot);
            slot = VERBS_NO_SLOT;
        }
        vt->posted_slot[seq % vt->sq_depth] = slot;
        if (vt->pend_wr[i].send_flags & IBV_SEND_SIGNALED)
            vt->base.tx.awaited = seq + 1;
        vt->stats.tx_datagrams++;
        vt->stats.tx_bytes += vt->pend_sge[i].length;
    }
    vt->next_seq += posted;
    for (uint32_t i = posted; i < n; i++)
        rdps__verbs_pend_drop(vt, i);
    vt->pend_count = 0;
    if (ret != 0) {
        /* A signaled WR may have been among the unposted ones: signal the next one. */
        vt->unsignaled_run = vt->signal_every;
        check_qp_error(vt);
        return rdps__set_err(rdps__errno_code(ret), "ibv_post_send: %s (%u of %u posted)",
                             strerror(ret), posted, n);
    }
    return 0;
}
