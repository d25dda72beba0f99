/* SPDX-License-Identifier: BSD-2-Clause */
/* verbs_mem.c - verbs transport: caller memory registered once (ibv_reg_mr) and sent from where it
 * lies (zero-copy), in the same work-request chain as the send pool. */
#include "verbs_internal.h"

#include "rdps_error.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int rdps__verbs_mem_register(struct rdps_transport *t, void *addr, size_t len,
                             struct rdps_tx_mem **out)
{
    struct verbs_transport *vt = to_verbs(t);
    if (out == NULL)
        return rdps__set_err(RDPS_EINVAL, "mem_register: NULL out pointer");
    *out = NULL;
    if (addr == NULL || len == 0)
        return rdps__set_err(RDPS_EINVAL, "mem_register: no memory (%zu bytes)", len);
    struct rdps_tx_mem *m = calloc(1, sizeof(*m));
    if (m == NULL)
        return rdps__set_err(RDPS_ENOMEM, "mem_register: out of memory");
    /* Sends only read it: no remote access, and local write is not needed for a send's source. */
    struct ibv_mr *mr = ibv_reg_mr(vt->info.pd, addr, len, 0);
    if (mr == NULL) {
        int err = rdps__errno_code(errno != 0 ? errno : ENOMEM);
        free(m);
        return rdps__set_err(err, "mem_register: ibv_reg_mr of %zu bytes: %s (check ulimit -l)",
                             len, rdps_strerror(err));
    }
    m->addr = addr;
    m->len = len;
    m->lkey = mr->lkey;
    m->priv = mr;
    m->owner = t;
    m->next = vt->mems;
    vt->mems = m;
    *out = m;
    return 0;
}

static void mem_free(struct rdps_tx_mem *m)
{
    ibv_dereg_mr(m->priv);
    free(m);
}

int rdps__verbs_mem_deregister(struct rdps_transport *t, struct rdps_tx_mem *m)
{
    struct verbs_transport *vt = to_verbs(t);
    if (m == NULL)
        return 0;
    if (m->owner != t)
        return rdps__set_err(RDPS_EINVAL, "mem_deregister: region of another transport");
    if (m->inflight > 0)
        (void)verbs_reap_send(vt);
    if (m->inflight > 0)
        return rdps__set_err(RDPS_EBUSY, "mem_deregister: %u sends still reference the region",
                             m->inflight);
    for (struct rdps_tx_mem **link = &vt->mems; *link != NULL; link = &(*link)->next) {
        if (*link == m) {
            *link = m->next;
            break;
        }
    }
    mem_free(m);
    return 0;
}

int rdps__verbs_submit_gather(struct rdps_transport *t, struct rdps_tx_buf *buf, uint32_t hdr_len,
                              struct rdps_tx_mem *m, size_t offset, uint32_t len,
                              const struct rdps_dest *const *dests, unsigned ndest, uint64_t cookie)
{
    struct verbs_transport *vt = to_verbs(t);
    if (!vt->can_gather)
        return RDPS_ENOTSUP; /* the buffer stays the caller's: it copies instead */
    if (buf == NULL || buf->slot >= vt->send_slots || vt->send_refs[buf->slot] == 0)
        return rdps__set_err(RDPS_EINVAL, "submit_gather: buffer was not claimed from this "
                                          "transport");
    uint32_t slot = buf->slot;
    int err = 0;
    if (vt->device_fatal)
        err = RDPS_EDEVFATAL;
    else if (m == NULL || m->owner != t)
        err = rdps__set_err(RDPS_EINVAL, "submit_gather: region not registered with this "
                                         "transport");
    else if (hdr_len > vt->info.max_payload || len > vt->info.max_payload - hdr_len)
        err = rdps__set_err(RDPS_EMSGSIZE,
                            "datagram of %u + %u bytes exceeds max_payload %u (active MTU of %s "
                            "port %u)",
                            hdr_len, len, vt->info.max_payload, vt->info.device_name,
                            vt->info.port_num);
    else if (offset > m->len || len > m->len - offset)
        err = rdps__set_err(RDPS_EINVAL,
                            "submit_gather: %u bytes at %zu outside the %zu-byte "
                            "region",
                            len, offset, m->len);
    else if (cookie <= m->submitted)
        err = rdps__set_err(RDPS_EINVAL, "submit_gather: cookie %llu not above the last (%llu)",
                            (unsigned long long)cookie, (unsigned long long)m->submitted);
    else if (ndest == 0 || dests == NULL)
        err = rdps__set_err(RDPS_EINVAL, "submit_gather: no destination");
    for (unsigned i = 0; err == 0 && i < ndest; i++)
        if (dests[i] == NULL || dests[i]->ah == NULL)
            err = rdps__set_err(RDPS_EINVAL, "submit_gather: destination %u has no address handle",
                                i);
    if (err == 0 && verbs_sq_room(vt) < ndest) {
        vt->stats.tx_backpressure++;
        err = RDPS_EAGAIN;
    }
    if (err != 0) {
        rdps__verbs_abort(t, buf); /* the buffer is the transport's, as with submit */
        return err;
    }
    int flags = hdr_len + len <= vt->info.max_inline ? IBV_SEND_INLINE : 0;
    uint64_t hdr_addr = (uint64_t)(uintptr_t)(vt->send_mem + (size_t)slot * vt->send_stride);
    uint64_t payload_addr = (uint64_t)(uintptr_t)(m->addr + offset);
    for (unsigned i = 0; i < ndest; i++) {
        uint32_t k = vt->pend_count++;
        struct ibv_sge *sge = &vt->gather_sge[2 * k];
        struct ibv_send_wr *wr = &vt->pend_wr[k];
        sge[0] = (struct ibv_sge){.addr = hdr_addr, .length = hdr_len, .lkey = vt->send_mr->lkey};
        sge[1] = (struct ibv_sge){.addr = payload_addr, .length = len, .lkey = m->lkey};
        wr->sg_list = sge; /* flush puts the pool's one SGE back once posted */
        wr->num_sge = 2;
        vt->pend_sge[k].length = hdr_len + len; /* what the statistics count */
        wr->send_flags = flags;
        wr->wr.ud.ah = dests[i]->ah;
        wr->wr.ud.remote_qpn = dests[i]->remote_qpn;
        wr->wr.ud.remote_qkey = dests[i]->remote_qkey;
        vt->pend_slot[k] = slot | VERBS_GATHER_BIT;
        vt->send_refs[slot]++;
        vt->pend_mem[k] = m;
        /* Completions are in order: the submit's last request completing covers the others. */
        vt->pend_cookie[k] = i + 1 == ndest ? cookie : 0;
    }
    rdps__verbs_abort(t, buf); /* the claim's hold passes to the queued WRs */
    vt->pend_mem_count += ndest;
    vt->low_free_mark = UINT32_MAX; /* the chain's last WR is signaled */
    m->inflight += ndest;
    m->submitted = cookie;
    return 0;
}

void rdps__verbs_mem_fini(struct verbs_transport *vt)
{
    while (vt->mems != NULL) {
        struct rdps_tx_mem *m = vt->mems;
        vt->mems = m->next;
        mem_free(m);
    }
}

int rdps__verbs_submit_mem(struct rdps_transport *t, struct rdps_tx_mem *m, size_t offset,
                           uint32_t len, const struct rdps_dest *const *dests, unsigned ndest,
                           uint64_t cookie)
{
    struct verbs_transport *vt = to_verbs(t);
    if (vt->device_fatal)
        return RDPS_EDEVFATAL;
    if (m == NULL || m->owner != t)
        return rdps__set_err(RDPS_EINVAL, "submit_mem: region not registered with this transport");
    if (len > vt->info.max_payload)
        return rdps__set_err(
            RDPS_EMSGSIZE, "datagram of %u bytes exceeds max_payload %u (active MTU of %s port %u)",
            len, vt->info.max_payload, vt->info.device_name, vt->info.port_num);
    if (offset > m->len || len > m->len - offset)
        return rdps__set_err(RDPS_EINVAL, "submit_mem: %u bytes at %zu outside the %zu-byte region",
                             len, offset, m->len);
    if (cookie <= m->submitted)
        return rdps__set_err(RDPS_EINVAL, "submit_mem: cookie %llu not above the last (%llu)",
                             (unsigned long long)cookie, (unsigned long long)m->submitted);
    if (ndest == 0 || dests == NULL)
        return rdps__set_err(RDPS_EINVAL, "submit_mem: no destination");
    for (unsigned i = 0; i < ndest; i++) {
        if (dests[i] == NULL || dests[i]->ah == NULL)
            return rdps__set_err(RDPS_EINVAL, "submit_mem: destination %u has no address handle",
                                 i);
    }
    if (verbs_sq_room(vt) < ndest) {
        int err = verbs_reap_send(vt);
        if (err < 0)
            return err;
        if (verbs_sq_room(vt) < ndest) {
            vt->stats.tx_backpressure++;
            return RDPS_EAGAIN;
        }
    }
    int flags = len <= vt->info.max_inline ? IBV_SEND_INLINE : 0;
    uint64_t addr = (uint64_t)(uintptr_t)(m->addr + offset);
    for (unsigned i = 0; i < ndest; i++) {
        uint32_t k = vt->pend_count++;
        struct ibv_sge *sge = &vt->pend_sge[k];
        struct ibv_send_wr *wr = &vt->pend_wr[k];
        sge->addr = addr;
        sge->length = len;
        sge->lkey = m->lkey; /* flush puts the pool's back once posted */
        wr->send_flags = flags;
        wr->wr.ud.ah = dests[i]->ah;
        wr->wr.ud.remote_qpn = dests[i]->remote_qpn;
        wr->wr.ud.remote_qkey = dests[i]->remote_qkey;
        vt->pend_slot[k] = VERBS_MEM_SLOT;
        vt->pend_mem[k] = m;
        /* Completions are in order: the submit's last request completing covers the others. */
        vt->pend_cookie[k] = i + 1 == ndest ? cookie : 0;
    }
    vt->pend_mem_count += ndest;
    vt->low_free_mark = UINT32_MAX; /* the chain's last WR is signaled */
    m->inflight += ndest;
    m->submitted = cookie;
    return 0;
}
