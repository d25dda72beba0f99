/* SPDX-License-Identifier: BSD-2-Clause */
/* soft_sq.c - the send queue shared by the devices made of software (rdps_soft_sq.h). */
#include "rdps_soft_sq.h"

#include "rdps_error.h"

#include <stdlib.h>
#include <string.h>

int rdps__soft_sq_init(struct rdps_soft_sq *q, struct rdps_transport *owner, const char *limit_name,
                       uint32_t buf_size, uint32_t slots, uint32_t depth)
{
    memset(q, 0, sizeof(*q));
    q->owner = owner;
    q->limit_name = limit_name;
    q->buf_size = buf_size;
    q->slots = slots;
    q->depth = depth;
    q->buf_mem = calloc(slots, buf_size);
    q->refs = calloc(slots, sizeof(*q->refs));
    q->free_slots = calloc(slots, sizeof(*q->free_slots));
    q->reqs = calloc(depth, sizeof(*q->reqs));
    if (q->buf_mem == NULL || q->refs == NULL || q->free_slots == NULL || q->reqs == NULL)
        return RDPS_ENOMEM;
    for (uint32_t i = 0; i < slots; i++)
        q->free_slots[i] = slots - 1 - i;
    q->free_count = slots;
    return 0;
}

void rdps__soft_sq_fini(struct rdps_soft_sq *q)
{
    while (q->mems != NULL) {
        struct rdps_tx_mem *m = q->mems;
        q->mems = m->next;
        free(m);
    }
    free(q->buf_mem);
    free(q->refs);
    free(q->free_slots);
    free(q->reqs);
    memset(q, 0, sizeof(*q));
}

static void unref(struct rdps_soft_sq *q, uint32_t slot)
{
    if (--q->refs[slot] == 0)
        q->free_slots[q->free_count++] = slot;
}

static bool claimed(const struct rdps_soft_sq *q, const struct rdps_tx_buf *buf)
{
    return buf != NULL && buf->slot < q->slots && q->refs[buf->slot] > 0;
}

int rdps__soft_sq_claim(struct rdps_soft_sq *q, struct rdps_tx_buf *buf)
{
    if (q->free_count == 0 || q->sent + q->queued >= q->depth) {
        q->backpressure++;
        return RDPS_EAGAIN;
    }
    uint32_t slot = q->free_slots[--q->free_count];
    q->refs[slot] = 1;
    buf->slot = slot;
    buf->data = q->buf_mem + (size_t)slot * q->buf_size;
    buf->capacity = q->buf_size;
    return 0;
}

void rdps__soft_sq_abort(struct rdps_soft_sq *q, struct rdps_tx_buf *buf)
{
    if (!claimed(q, buf))
        return;
    unref(q, buf->slot);
    buf->slot = RDPS_SOFT_SQ_NO_SLOT;
    buf->data = NULL;
}

static int check_len(const struct rdps_soft_sq *q, uint32_t len)
{
    if (len <= q->buf_size)
        return 0;
    return rdps__set_err(RDPS_EMSGSIZE, "datagram of %u bytes exceeds max_payload %u %s", len,
                         q->buf_size, q->limit_name);
}

/* Destinations that name an address, and room for one request each (`op` names the call).
 * Inlined, as queue(): they are most of a send's work on these devices. */
__attribute__((always_inline)) static inline int check_dests(struct rdps_soft_sq *q, const char *op,
                                                             const struct rdps_dest *const *dests,
                                                             unsigned ndest)
{
    if (ndest == 0 || dests == NULL)
        return rdps__set_err(RDPS_EINVAL, "%s: no destination", op);
    for (unsigned i = 0; i < ndest; i++) {
        if (dests[i] == NULL || dests[i]->ah == NULL)
            return rdps__set_err(RDPS_EINVAL, "%s: destination %u has no address", op, i);
    }
    if (q->sent + q->queued + ndest > q->depth) {
        q->backpressure++;
        return RDPS_EAGAIN;
    }
    return 0;
}

/* One request per destination, at the end of the queue (cookies 0: submit_mem sets its last). */
__attribute__((always_inline)) static inline void
queue(struct rdps_soft_sq *q, uint32_t slot, uint32_t len, const uint8_t *data,
      struct rdps_tx_mem *mem, const struct rdps_dest *const *dests, unsigned ndest)
{
    struct rdps_soft_sq_req *r = q->reqs + q->sent + q->queued;
    for (unsigned i = 0; i < ndest; i++) {
        r[i].slot = slot;
        r[i].len = len;
        r[i].data = data;
        r[i].dest = *dests[i];
        r[i].mem = mem;
        r[i].cookie = 0;
    }
    q->queued += ndest;
}

int rdps__soft_sq_submit(struct rdps_soft_sq *q, struct rdps_tx_buf *buf, uint32_t len,
                         const struct rdps_dest *const *dests, unsigned ndest, int refuse)
{
    if (!claimed(q, buf))
        return rdps__set_err(RDPS_EINVAL, "submit: buffer was not claimed from this endpoint");
    uint32_t slot = buf->slot;
    buf->slot = RDPS_SOFT_SQ_NO_SLOT;
    buf->data = NULL;
    int err = refuse;
    if (err == 0)
        err = check_len(q, len);
    if (err == 0)
        err = check_dests(q, "submit", dests, ndest);
    if (err != 0) {
        unref(q, slot);
        return err;
    }
    queue(q, slot, len, q->buf_mem + (size_t)slot * q->buf_size, NULL, dests, ndest);
    /* One reference per queued request; the claim's own (1) passes to the first. */
    q->refs[slot] += ndest - 1;
    return 0;
}

int rdps__soft_sq_submit_mem(struct rdps_soft_sq *q, struct rdps_tx_mem *m, size_t offset,
                             uint32_t len, const struct rdps_dest *const *dests, unsigned ndest,
                             uint64_t cookie, int refuse)
{
    if (refuse != 0)
        return refuse;
    if (m == NULL || m->owner != q->owner)
        return rdps__set_err(RDPS_EINVAL, "submit_mem: region not registered with this endpoint");
    int err = check_len(q, len);
    if (err != 0)
        return err;
    if (offset > m->len || len > m->len - offset)
        return rdps__set_err(RDPS_EINVAL, "submit_mem: %u bytes at %zu outside the %zu-byte region",
                             len, offset, m->len);
    if (cookie <= m->submitted)
        return rdps__set_err(RDPS_EINVAL, "submit_mem: cookie %llu not above the last (%llu)",
                             (unsigned long long)cookie, (unsigned long long)m->submitted);
    if ((err = check_dests(q, "submit_mem", dests, ndest)) != 0)
        return err;
    queue(q, RDPS_SOFT_SQ_NO_SLOT, len, m->addr + offset, m, dests, ndest);
    q->reqs[q->sent + q->queued - 1].cookie = cookie; /* the submit's last request carries it */
    m->inflight += ndest;
    m->submitted = cookie;
    return 0;
}

/* A request stops referencing its buffer or region: sent (its cookie completes the region's
 * submit) or dropped (it completes nothing by itself). */
static inline void release(struct rdps_soft_sq *q, const struct rdps_soft_sq_req *r, bool sent)
{
    if (r->slot != RDPS_SOFT_SQ_NO_SLOT)
        unref(q, r->slot);
    else
        rdps__tx_mem_release(r->mem, sent ? r->cookie : 0);
}

void rdps__soft_sq_drop_queued(struct rdps_soft_sq *q)
{
    const struct rdps_soft_sq_req *r = q->reqs + q->sent;
    for (uint32_t i = 0; i < q->queued; i++)
        release(q, &r[i], false);
    q->queued = 0;
}

void rdps__soft_sq_reap(struct rdps_soft_sq *q)
{
    uint32_t sent = q->sent; /* in locals: the buffers' counters could alias the queue's */
    const struct rdps_soft_sq_req *r = q->reqs;
    if (sent == 0)
        return;
    for (uint32_t i = 0; i < sent; i++)
        release(q, &r[i], true);
    /* Requests queued since the flush move to the front: each moves once at most. */
    if (q->queued > 0)
        memmove(q->reqs, q->reqs + sent, (size_t)q->queued * sizeof(*q->reqs));
    q->sent = 0;
    q->owner->tx.seen += sent; /* their completions are seen (rdps_tx_progress) */
}

int rdps__soft_sq_mem_register(struct rdps_soft_sq *q, void *addr, size_t len,
                               struct rdps_tx_mem **out)
{
    return rdps__tx_mem_list_add(q->owner, &q->mems, addr, len, out);
}

int rdps__soft_sq_mem_deregister(struct rdps_soft_sq *q, struct rdps_tx_mem *m)
{
    if (m == NULL)
        return 0;
    if (m->owner != q->owner)
        return rdps__set_err(RDPS_EINVAL, "mem_deregister: region of another transport");
    if (m->inflight > 0)
        rdps__soft_sq_reap(q);
    if (m->inflight > 0)
        return rdps__set_err(RDPS_EBUSY, "mem_deregister: %u sends still reference the region",
                             m->inflight);
    rdps__tx_mem_list_remove(&q->mems, m);
    return 0;
}
