/* SPDX-License-Identifier: BSD-2-Clause */
/* loopback.c - in-memory loopback transport: endpoints, unicast and multicast over a process-local
 * fabric, registered memory. One concern (the device double every unit test runs over) in one
 * file, so the endpoint's state stays private; about 800 lines. */
#include "rdps_loopback.h"

#include "rdps_error.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define NO_SLOT         UINT32_MAX
#define LB_MCAST_QPN    0xffffffu /* the IB multicast QPN, so dests look like verbs ones */
#define EVENT_RING_SIZE 16

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

static void fabric_lock(struct rdps_loopback_fabric *f)
{
    if (f != NULL && f->threaded)
        pthread_mutex_lock(&f->lock);
}

static void fabric_unlock(struct rdps_loopback_fabric *f)
{
    if (f != NULL && f->threaded)
        pthread_mutex_unlock(&f->lock);
}

/* A queued request: from a send buffer (slot), or from a registered region (slot NO_SLOT). */
struct lb_pending {
    uint32_t slot, len;
    const struct rdps_dest *dest;
    const uint8_t *data;     /* slot NO_SLOT: where in the region */
    struct rdps_tx_mem *mem; /* slot NO_SLOT: the region */
    uint64_t cookie;         /* on a submit_mem's last request, else 0 */
};

/* A delivered submit_mem request, completed by the next poll() (sent[] holds NO_SLOT for it). */
struct lb_sent_mem {
    struct rdps_tx_mem *mem;
    uint64_t cookie;
};

struct lb_ready {
    uint32_t slot, len;
    struct lb_addr *from;
    bool to_group;
};

struct lb_endpoint {
    struct rdps_transport base;
    struct rdps_loopback_fabric *fabric;
    struct lb_endpoint *next; /* fabric's list */
    struct lb_addr *self;
    uint32_t max_payload, send_slots, recv_slots, sq_depth;

    uint8_t *send_mem;
    uint32_t *send_refs, *send_free, send_free_count;
    struct lb_pending *pending;
    uint32_t pend_count;
    uint32_t *sent, sent_count;        /* delivered WRs whose buffers return on the next poll() */
    struct lb_sent_mem *sent_mem;      /* by sent[] index, for NO_SLOT entries */
    uint32_t pend_mem, sent_mem_count; /* submit_mem requests among pending[] / sent[] */
    struct rdps_tx_mem *mems;          /* registered regions */

    uint8_t *recv_mem;
    uint32_t *recv_free, recv_free_count;
    struct lb_ready *ready;     /* ring of delivered datagrams, oldest first */
    struct lb_addr **slot_from; /* sender of the datagram in each receive slot (for reply_dest) */
    uint32_t ready_head, ready_count;

    int event_fd;
    enum rdps_transport_event_type events[EVENT_RING_SIZE];
    uint32_t event_head, event_count;
    bool device_fatal;
    struct rdps_transport_stats stats;
};

static const struct rdps_transport_ops loopback_ops;

static struct lb_endpoint *to_lb(struct rdps_transport *t)
{
    return (struct lb_endpoint *)t;
}

static struct lb_addr *new_addr(struct rdps_loopback_fabric *f, bool is_group, uint32_t id)
{
    struct lb_addr *a = calloc(1, sizeof(*a));
    if (a == NULL)
        return NULL;
    a->is_group = is_group;
    a->id = id;
    a->dest.ah = a;
    a->dest.remote_qpn = is_group ? LB_MCAST_QPN : id;
    a->dest.remote_qkey = 0;
    a->next = f->addrs;
    f->addrs = a;
    return a;
}

int rdps__loopback_fabric_create(struct rdps_loopback_fabric **out)
{
    if (out == NULL)
        return rdps__set_err(RDPS_EINVAL, "loopback fabric: NULL out pointer");
    *out = calloc(1, sizeof(**out));
    if (*out == NULL)
        return rdps__set_err(RDPS_ENOMEM, "loopback fabric: out of memory");
    (*out)->next_endpoint_id = 1;
    return 0;
}

int rdps__loopback_fabric_create_threaded(struct rdps_loopback_fabric **out)
{
    int rc = rdps__loopback_fabric_create(out);
    if (rc < 0)
        return rc;
    if ((rc = pthread_mutex_init(&(*out)->lock, NULL)) != 0) {
        free(*out);
        *out = NULL;
        return rdps__set_err(rdps__errno_code(rc), "loopback fabric: pthread_mutex_init failed");
    }
    (*out)->threaded = true;
    return 0;
}

void rdps__loopback_fabric_destroy(struct rdps_loopback_fabric *f)
{
    if (f == NULL)
        return;
    for (struct lb_endpoint *ep = f->endpoints; ep != NULL; ep = ep->next) {
        ep->fabric = NULL;
        ep->self = NULL;
    }
    while (f->addrs != NULL) {
        struct lb_addr *a = f->addrs;
        f->addrs = a->next;
        free(a->members);
        free(a);
    }
    if (f->threaded)
        pthread_mutex_destroy(&f->lock);
    free(f);
}

/* The GID receivers see for endpoint `id`: link-local fe80::id, like a port's default GID. */
static void endpoint_gid(uint32_t id, uint8_t gid[16])
{
    memset(gid, 0, 16);
    gid[0] = 0xfe;
    gid[1] = 0x80;
    gid[12] = (uint8_t)(id >> 24);
    gid[13] = (uint8_t)(id >> 16);
    gid[14] = (uint8_t)(id >> 8);
    gid[15] = (uint8_t)id;
}

/* ---- data path ------------------------------------------------------------------------- */

static void send_unref(struct lb_endpoint *ep, uint32_t slot)
{
    if (--ep->send_refs[slot] == 0)
        ep->send_free[ep->send_free_count++] = slot;
}

static int lb_claim(struct rdps_transport *t, struct rdps_tx_buf *buf)
{
    struct lb_endpoint *ep = to_lb(t);
    if (ep->device_fatal)
        return RDPS_EDEVFATAL;
    if (ep->send_free_count == 0 || ep->pend_count + ep->sent_count >= ep->sq_depth) {
        ep->stats.tx_backpressure++;
        return RDPS_EAGAIN;
    }
    uint32_t slot = ep->send_free[--ep->send_free_count];
    ep->send_refs[slot] = 1;
    buf->slot = slot;
    buf->data = ep->send_mem + (size_t)slot * ep->max_payload;
    buf->capacity = ep->max_payload;
    return 0;
}

static bool claimed(const struct lb_endpoint *ep, const struct rdps_tx_buf *buf)
{
    return buf != NULL && buf->slot < ep->send_slots && ep->send_refs[buf->slot] > 0;
}

static void lb_abort(struct rdps_transport *t, struct rdps_tx_buf *buf)
{
    struct lb_endpoint *ep = to_lb(t);
    if (!claimed(ep, buf))
        return;
    send_unref(ep, buf->slot);
    buf->slot = NO_SLOT;
    buf->data = NULL;
}

static int lb_submit(struct rdps_transport *t, struct rdps_tx_buf *buf, uint32_t len,
                     const struct rdps_dest *const *dests, unsigned ndest)
{
    struct lb_endpoint *ep = to_lb(t);
    int err = 0;
    if (!claimed(ep, buf))
        return rdps__set_err(RDPS_EINVAL, "submit: buffer was not claimed from this endpoint");
    if (ep->device_fatal)
        err = RDPS_EDEVFATAL;
    else if (ep->fabric == NULL)
        err = RDPS_ESHUTDOWN;
    else if (len > ep->max_payload)
        err = rdps__set_err(RDPS_EMSGSIZE,
                            "datagram of %u bytes exceeds max_payload %u of loopback endpoint", len,
                            ep->max_payload);
    else if (ndest == 0 || dests == NULL)
        err = rdps__set_err(RDPS_EINVAL, "submit: no destination");
    else if (ep->pend_count + ep->sent_count + ndest > ep->sq_depth) {
        ep->stats.tx_backpressure++;
        err = RDPS_EAGAIN;
    }
    for (unsigned i = 0; err == 0 && i < ndest; i++) {
        if (dests[i] == NULL || dests[i]->ah == NULL)
            err = rdps__set_err(RDPS_EINVAL, "submit: destination %u has no address", i);
    }
    uint32_t slot = buf->slot;
    buf->slot = NO_SLOT;
    buf->data = NULL;
    if (err != 0) {
        send_unref(ep, slot);
        return err;
    }
    for (unsigned i = 0; i < ndest; i++) {
        struct lb_pending *p = &ep->pending[ep->pend_count++];
        p->slot = slot;
        p->len = len;
        p->dest = dests[i];
    }
    /* One reference per queued request; the claim's own (1) passes to the first. */
    ep->send_refs[slot] += ndest - 1;
    return 0;
}

static void signal_readable(struct lb_endpoint *ep)
{
    uint64_t one = 1;
    if (ep->event_fd >= 0)
        (void)!write(ep->event_fd, &one, sizeof(one));
}

static void deliver(struct lb_endpoint *to, struct lb_addr *from, const uint8_t *data, uint32_t len,
                    bool to_group)
{
    if (to->device_fatal)
        return;
    if (to->recv_free_count == 0) {
        to->stats.rx_queue_empty++;
        return;
    }
    uint32_t slot = to->recv_free[--to->recv_free_count];
    memcpy(to->recv_mem + (size_t)slot * to->max_payload, data, len);
    struct lb_ready *r = &to->ready[(to->ready_head + to->ready_count) % to->recv_slots];
    r->slot = slot;
    r->len = len;
    r->from = from;
    r->to_group = to_group;
    if (to->ready_count++ == 0)
        signal_readable(to);
}

/* The device reads one queued request's bytes and delivers them. */
static inline void transmit(struct lb_endpoint *ep, const struct lb_pending *p, const uint8_t *data)
{
    struct lb_addr *a = p->dest->ah;
    if (a->is_group) {
        /* A fabric without multicast loses every group datagram (it left the port all the same). */
        if (ep->fabric->multicast == RDPS_LOOPBACK_MCAST_ON)
            for (uint32_t m = 0; m < a->member_count; m++)
                deliver(a->members[m].endpoint, ep->self, data, p->len, true);
    } else if (a->endpoint != NULL) {
        /* A datagram to a destroyed endpoint is lost, as on a real fabric. */
        deliver(a->endpoint, ep->self, data, p->len, false);
    }
    ep->stats.tx_datagrams++;
    ep->stats.tx_bytes += p->len;
}

static int flush_locked(struct lb_endpoint *ep)
{
    int err = 0;
    if (ep->device_fatal)
        err = RDPS_EDEVFATAL;
    else if (ep->fabric == NULL)
        err = RDPS_ESHUTDOWN;
    if (err == 0 && ep->pend_mem == 0) {
        /* Send buffers only (every unreliable send): the short loop. */
        for (uint32_t i = 0; i < ep->pend_count; i++) {
            const struct lb_pending *p = &ep->pending[i];
            transmit(ep, p, ep->send_mem + (size_t)p->slot * ep->max_payload);
            ep->sent[ep->sent_count++] = p->slot;
        }
        ep->pend_count = 0;
        ep->base.tx.awaited = ep->base.tx.seen + ep->sent_count; /* each one completes */
        return 0;
    }
    for (uint32_t i = 0; i < ep->pend_count; i++) {
        const struct lb_pending *p = &ep->pending[i];
        bool from_mem = p->slot == NO_SLOT;
        if (err != 0) {
            if (from_mem)
                rdps__tx_mem_release(p->mem, 0);
            else
                send_unref(ep, p->slot);
            continue;
        }
        /* Registered regions are read now, as a device reads them after the post. */
        transmit(ep, p, from_mem ? p->data : ep->send_mem + (size_t)p->slot * ep->max_payload);
        if (from_mem) {
            ep->sent_mem[ep->sent_count].mem = p->mem;
            ep->sent_mem[ep->sent_count].cookie = p->cookie;
            ep->sent_mem_count++;
        }
        ep->sent[ep->sent_count++] = p->slot;
    }
    ep->pend_count = 0;
    ep->pend_mem = 0;
    ep->base.tx.awaited = ep->base.tx.seen + ep->sent_count;
    return err;
}

static int lb_flush(struct rdps_transport *t)
{
    struct lb_endpoint *ep = to_lb(t);
    if (ep->pend_count == 0)
        return ep->device_fatal ? RDPS_EDEVFATAL : ep->fabric == NULL ? RDPS_ESHUTDOWN : 0;
    struct rdps_loopback_fabric *f = ep->fabric;
    fabric_lock(f);
    int err = flush_locked(ep);
    fabric_unlock(f);
    return err;
}

/* Send completions: buffers back to the pool, regions' `completed` forward (in order). */
static void reap_sent(struct lb_endpoint *ep)
{
    if (ep->sent_mem_count == 0) {
        for (uint32_t i = 0; i < ep->sent_count; i++)
            send_unref(ep, ep->sent[i]);
    } else {
        for (uint32_t i = 0; i < ep->sent_count; i++) {
            if (ep->sent[i] != NO_SLOT)
                send_unref(ep, ep->sent[i]);
            else
                rdps__tx_mem_release(ep->sent_mem[i].mem, ep->sent_mem[i].cookie);
        }
        ep->sent_mem_count = 0;
    }
    ep->base.tx.seen += ep->sent_count;
    ep->sent_count = 0;
}

static int lb_poll(struct rdps_transport *t, struct rdps_rx_datagram *rx, int max)
{
    struct lb_endpoint *ep = to_lb(t);
    if (ep->device_fatal)
        return RDPS_EDEVFATAL;
    reap_sent(ep);
    int got = 0;
    fabric_lock(ep->fabric);
    while (got < max && ep->ready_count > 0) {
        struct lb_ready *r = &ep->ready[ep->ready_head];
        struct rdps_rx_datagram *d = &rx[got++];
        ep->ready_head = (ep->ready_head + 1) % ep->recv_slots;
        ep->ready_count--;
        d->data = ep->recv_mem + (size_t)r->slot * ep->max_payload;
        d->len = r->len;
        d->slot = r->slot;
        d->src_qpn = r->from != NULL ? r->from->id : 0;
        endpoint_gid(d->src_qpn, d->src_gid);
        d->has_src_gid = true;
        d->src_lid = 0;
        d->to_multicast = r->to_group;
        ep->slot_from[r->slot] = r->from;
        ep->stats.rx_datagrams++;
        ep->stats.rx_bytes += r->len;
    }
    fabric_unlock(ep->fabric);
    return got;
}

static void lb_rx_release(struct rdps_transport *t, struct rdps_rx_datagram *rx, int count)
{
    struct lb_endpoint *ep = to_lb(t);
    fabric_lock(ep->fabric);
    for (int i = 0; i < count; i++) {
        if (rx[i].slot >= ep->recv_slots || ep->recv_free_count >= ep->recv_slots)
            continue;
        ep->recv_free[ep->recv_free_count++] = rx[i].slot;
        rx[i].slot = NO_SLOT;
        rx[i].data = NULL;
    }
    fabric_unlock(ep->fabric);
}

static int lb_reply_dest(struct rdps_transport *t, const struct rdps_rx_datagram *rx,
                         const struct rdps_dest **out)
{
    struct lb_endpoint *ep = to_lb(t);
    if (out == NULL)
        return RDPS_EINVAL;
    *out = NULL;
    if (rx == NULL || rx->slot >= ep->recv_slots)
        return rdps__set_err(RDPS_EINVAL, "loopback reply: not a received datagram");
    struct lb_addr *from = ep->slot_from[rx->slot];
    if (from == NULL)
        return rdps__set_err(RDPS_ENOENT, "loopback reply: the sender is gone");
    *out = &from->dest;
    return 0;
}

/* The endpoint numbered src->qpn, if src carries its GID (every loopback datagram does). */
static int lb_source_dest(struct rdps_transport *t, const struct rdps_source *src,
                          const struct rdps_dest **out)
{
    struct lb_endpoint *ep = to_lb(t);
    if (out == NULL)
        return RDPS_EINVAL;
    *out = NULL;
    if (src == NULL || src->qpn == 0 || !src->has_gid)
        return rdps__set_err(RDPS_EINVAL, "loopback source_dest: no endpoint number or GID");
    if (ep->fabric == NULL)
        return RDPS_ESHUTDOWN;
    uint8_t gid[16];
    endpoint_gid(src->qpn, gid);
    if (memcmp(gid, src->gid, sizeof(gid)) != 0)
        return rdps__set_err(RDPS_ENOENT, "loopback source_dest: GID is not endpoint %u's",
                             src->qpn);
    fabric_lock(ep->fabric);
    for (struct lb_addr *a = ep->fabric->addrs; a != NULL; a = a->next) {
        if (!a->is_group && a->id == src->qpn) {
            *out = &a->dest; /* owned by the fabric: valid until it is destroyed */
            break;
        }
    }
    fabric_unlock(ep->fabric);
    if (*out != NULL)
        return 0;
    return rdps__set_err(RDPS_ENOENT, "loopback source_dest: no endpoint %u", src->qpn);
}

/* Fabric-owned destinations never go away while the fabric lives: nothing to pin or release. */
static int lb_dest_acquire(struct rdps_transport *t, const struct rdps_source *src,
                           const struct rdps_dest **out)
{
    return lb_source_dest(t, src, out);
}

static void lb_dest_release(struct rdps_transport *t, const struct rdps_dest *dest)
{
    (void)t;
    (void)dest;
}

static uint32_t lb_send_room(struct rdps_transport *t)
{
    struct lb_endpoint *ep = to_lb(t);
    if (ep->pend_count + ep->sent_count >= ep->sq_depth)
        reap_sent(ep); /* completions come back at once on this fabric */
    return ep->sq_depth - ep->pend_count - ep->sent_count;
}

/* ---- registered memory: read by flush (the device's DMA), completed on the next poll() ---- */

static int lb_mem_register(struct rdps_transport *t, void *addr, size_t len,
                           struct rdps_tx_mem **out)
{
    return rdps__tx_mem_list_add(t, &to_lb(t)->mems, addr, len, out);
}

static int lb_mem_deregister(struct rdps_transport *t, struct rdps_tx_mem *m)
{
    struct lb_endpoint *ep = to_lb(t);
    if (m == NULL)
        return 0;
    if (m->owner != t)
        return rdps__set_err(RDPS_EINVAL, "mem_deregister: region of another transport");
    if (m->inflight > 0)
        reap_sent(ep);
    if (m->inflight > 0)
        return rdps__set_err(RDPS_EBUSY, "mem_deregister: %u sends still reference the region",
                             m->inflight);
    rdps__tx_mem_list_remove(&ep->mems, m);
    return 0;
}

static int lb_submit_mem(struct rdps_transport *t, struct rdps_tx_mem *m, size_t offset,
                         uint32_t len, const struct rdps_dest *const *dests, unsigned ndest,
                         uint64_t cookie)
{
    struct lb_endpoint *ep = to_lb(t);
    if (ep->device_fatal)
        return RDPS_EDEVFATAL;
    if (ep->fabric == NULL)
        return RDPS_ESHUTDOWN;
    if (m == NULL || m->owner != t)
        return rdps__set_err(RDPS_EINVAL, "submit_mem: region not registered with this endpoint");
    if (len > ep->max_payload)
        return rdps__set_err(RDPS_EMSGSIZE,
                             "datagram of %u bytes exceeds max_payload %u of loopback endpoint",
                             len, ep->max_payload);
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
            return rdps__set_err(RDPS_EINVAL, "submit_mem: destination %u has no address", i);
    }
    if (ep->pend_count + ep->sent_count + ndest > ep->sq_depth) {
        ep->stats.tx_backpressure++;
        return RDPS_EAGAIN;
    }
    for (unsigned i = 0; i < ndest; i++) {
        struct lb_pending *p = &ep->pending[ep->pend_count++];
        p->slot = NO_SLOT;
        p->len = len;
        p->dest = dests[i];
        p->data = m->addr + offset;
        p->mem = m;
        p->cookie = i + 1 == ndest ? cookie : 0;
    }
    ep->pend_mem += ndest;
    m->inflight += ndest;
    m->submitted = cookie;
    return 0;
}

static int lb_event_fd(struct rdps_transport *t)
{
    return to_lb(t)->event_fd;
}

/*
 * The eventfd is written when the ready ring goes from empty to not empty (or an event is
 * queued): reading it consumes that, and whatever is still waiting is reported instead, so the
 * caller polls rather than sleeps. Under the lock, a delivery either came before the read (then
 * it is counted here) or writes the fd again after it.
 */
static int lb_arm(struct rdps_transport *t)
{
    struct lb_endpoint *ep = to_lb(t);
    uint64_t value;
    fabric_lock(ep->fabric);
    if (ep->event_fd >= 0)
        (void)!read(ep->event_fd, &value, sizeof(value));
    bool pending = ep->ready_count > 0 || ep->event_count > 0 || ep->sent_count > 0;
    fabric_unlock(ep->fabric);
    return pending ? 1 : 0;
}

static int lb_next_event(struct rdps_transport *t, enum rdps_transport_event_type *type)
{
    struct lb_endpoint *ep = to_lb(t);
    if (ep->event_count == 0)
        return 0;
    *type = ep->events[ep->event_head];
    ep->event_head = (ep->event_head + 1) % EVENT_RING_SIZE;
    ep->event_count--;
    return 1;
}

int rdps__loopback_inject_event(struct rdps_transport *t, enum rdps_transport_event_type type)
{
    if (t == NULL || t->ops != &loopback_ops)
        return rdps__set_err(RDPS_EINVAL, "not a loopback transport");
    struct lb_endpoint *ep = to_lb(t);
    if (ep->event_count == EVENT_RING_SIZE)
        return RDPS_ENOSPC;
    ep->events[(ep->event_head + ep->event_count) % EVENT_RING_SIZE] = type;
    ep->event_count++;
    ep->stats.async_events++;
    if (type == RDPS_TRANSPORT_EV_DEVICE_FATAL)
        ep->device_fatal = true;
    signal_readable(ep);
    return 0;
}

static uint32_t lb_max_payload(struct rdps_transport *t)
{
    return to_lb(t)->max_payload;
}

static void lb_get_stats(const struct rdps_transport *t, struct rdps_transport_stats *out)
{
    const struct lb_endpoint *ep = (const struct lb_endpoint *)t;
    fabric_lock(ep->fabric); /* deliveries from other threads count into rx_queue_empty */
    *out = ep->stats;
    fabric_unlock(ep->fabric);
    out->tx_outstanding = ep->pend_count + ep->sent_count;
}

/* ---- membership ------------------------------------------------------------------------ */

static struct lb_addr *find_group(struct rdps_loopback_fabric *f, uint32_t group)
{
    for (struct lb_addr *a = f->addrs; a != NULL; a = a->next) {
        if (a->is_group && a->id == group)
            return a;
    }
    return NULL;
}

int rdps__loopback_group_dest(struct rdps_loopback_fabric *f, uint32_t group,
                              const struct rdps_dest **out)
{
    if (f == NULL || out == NULL)
        return rdps__set_err(RDPS_EINVAL, "loopback group dest: NULL argument");
    fabric_lock(f);
    struct lb_addr *a = find_group(f, group);
    if (a == NULL)
        a = new_addr(f, true, group);
    fabric_unlock(f);
    if (a == NULL)
        return rdps__set_err(RDPS_ENOMEM, "loopback group %u: out of memory", group);
    *out = &a->dest;
    return 0;
}

/* One more reference of ep on group a (a new member at the end). */
static int add_member(struct lb_addr *a, struct lb_endpoint *ep)
{
    for (uint32_t i = 0; i < a->member_count; i++) {
        if (a->members[i].endpoint == ep) {
            a->members[i].refs++;
            return 0;
        }
    }
    if (a->member_count == a->member_cap) {
        uint32_t cap = a->member_cap ? a->member_cap * 2 : 4;
        struct lb_member *m = realloc(a->members, cap * sizeof(*m));
        if (m == NULL)
            return RDPS_ENOMEM;
        a->members = m;
        a->member_cap = cap;
    }
    a->members[a->member_count].endpoint = ep;
    a->members[a->member_count].refs = 1;
    a->member_count++;
    return 0;
}

int rdps__loopback_join(struct rdps_transport *t, uint32_t group)
{
    if (t == NULL || t->ops != &loopback_ops)
        return rdps__set_err(RDPS_EINVAL, "not a loopback transport");
    struct lb_endpoint *ep = to_lb(t);
    if (ep->fabric == NULL)
        return RDPS_ESHUTDOWN;
    const struct rdps_dest *dest;
    int err = rdps__loopback_group_dest(ep->fabric, group, &dest);
    if (err < 0)
        return err;
    struct lb_addr *a = dest->ah;
    fabric_lock(ep->fabric);
    err = add_member(a, ep);
    fabric_unlock(ep->fabric);
    return err < 0 ? rdps__set_err(err, "loopback join %u: out of memory", group) : 0;
}

static void remove_member(struct lb_addr *a, uint32_t index)
{
    /* Keep join order: delivery order to members stays deterministic. */
    memmove(&a->members[index], &a->members[index + 1],
            (a->member_count - index - 1) * sizeof(*a->members));
    a->member_count--;
}

int rdps__loopback_leave(struct rdps_transport *t, uint32_t group)
{
    if (t == NULL || t->ops != &loopback_ops)
        return rdps__set_err(RDPS_EINVAL, "not a loopback transport");
    struct lb_endpoint *ep = to_lb(t);
    bool member = false;
    fabric_lock(ep->fabric);
    struct lb_addr *a = ep->fabric != NULL ? find_group(ep->fabric, group) : NULL;
    for (uint32_t i = 0; a != NULL && i < a->member_count; i++) {
        if (a->members[i].endpoint == ep) {
            if (--a->members[i].refs == 0)
                remove_member(a, i);
            member = true;
            break;
        }
    }
    fabric_unlock(ep->fabric);
    if (member)
        return 0;
    return rdps__set_err(RDPS_ENOENT, "loopback endpoint %u is not a member of group %u",
                         rdps__loopback_qpn(t), group);
}

int rdps__loopback_dest(struct rdps_transport *t, const struct rdps_dest **out)
{
    if (t == NULL || t->ops != &loopback_ops || out == NULL)
        return rdps__set_err(RDPS_EINVAL, "not a loopback transport");
    struct lb_endpoint *ep = to_lb(t);
    if (ep->self == NULL)
        return RDPS_ESHUTDOWN;
    *out = &ep->self->dest;
    return 0;
}

uint32_t rdps__loopback_qpn(struct rdps_transport *t)
{
    struct lb_endpoint *ep = to_lb(t);
    return ep->self != NULL ? ep->self->id : 0;
}

void rdps__loopback_gid(struct rdps_transport *t, uint8_t gid[16])
{
    endpoint_gid(rdps__loopback_qpn(t), gid);
}

void rdps__loopback_fabric_set_multicast(struct rdps_loopback_fabric *f,
                                         enum rdps_loopback_multicast mode)
{
    fabric_lock(f);
    f->multicast = mode;
    fabric_unlock(f);
}

enum rdps_loopback_multicast rdps__loopback_fabric_multicast(struct rdps_loopback_fabric *f)
{
    fabric_lock(f);
    enum rdps_loopback_multicast mode = f->multicast;
    fabric_unlock(f);
    return mode;
}

uint32_t rdps__loopback_ipv4(struct rdps_transport *t)
{
    uint32_t id = rdps__loopback_qpn(t);
    return id != 0 && id < RDPS_LOOPBACK_HOSTS ? RDPS_LOOPBACK_NET | id : 0;
}

int rdps__loopback_resolve(struct rdps_loopback_fabric *f, uint32_t ipv4,
                           const struct rdps_dest **dest, struct rdps_source *src)
{
    if (f == NULL || dest == NULL)
        return rdps__set_err(RDPS_EINVAL, "loopback resolve: NULL argument");
    *dest = NULL;
    uint32_t id = ipv4 & (RDPS_LOOPBACK_HOSTS - 1);
    if ((ipv4 & ~(RDPS_LOOPBACK_HOSTS - 1)) != RDPS_LOOPBACK_NET || id == 0)
        return rdps__set_err(RDPS_EHOSTUNREACH,
                             "loopback resolve: %u.%u.%u.%u is not a loopback endpoint's address "
                             "(127.77.0.0/16)",
                             ipv4 >> 24, (ipv4 >> 16) & 0xff, (ipv4 >> 8) & 0xff, ipv4 & 0xff);
    fabric_lock(f);
    for (struct lb_addr *a = f->addrs; a != NULL; a = a->next) {
        if (!a->is_group && a->id == id && a->endpoint != NULL) {
            *dest = &a->dest;
            break;
        }
    }
    fabric_unlock(f);
    if (*dest == NULL)
        return rdps__set_err(RDPS_EHOSTUNREACH, "loopback resolve: no endpoint %u", id);
    if (src != NULL) {
        memset(src, 0, sizeof(*src));
        endpoint_gid(id, src->gid);
        src->has_gid = 1;
        src->qpn = id;
    }
    return 0;
}

/* ---- create / destroy ------------------------------------------------------------------ */

static void lb_destroy(struct rdps_transport *t)
{
    struct lb_endpoint *ep = to_lb(t);
    if (ep == NULL)
        return;
    struct rdps_loopback_fabric *f = ep->fabric;
    if (f != NULL) {
        fabric_lock(f);
        for (struct lb_addr *a = f->addrs; a != NULL; a = a->next) {
            if (a->endpoint == ep)
                a->endpoint = NULL;
            for (uint32_t i = 0; i < a->member_count; i++) {
                if (a->members[i].endpoint == ep) {
                    remove_member(a, i);
                    break;
                }
            }
        }
        for (struct lb_endpoint **link = &f->endpoints; *link != NULL; link = &(*link)->next) {
            if (*link == ep) {
                *link = ep->next;
                break;
            }
        }
        fabric_unlock(f);
    }
    if (ep->event_fd >= 0)
        close(ep->event_fd);
    while (ep->mems != NULL) {
        struct rdps_tx_mem *m = ep->mems;
        ep->mems = m->next;
        free(m);
    }
    free(ep->send_mem);
    free(ep->send_refs);
    free(ep->send_free);
    free(ep->pending);
    free(ep->sent);
    free(ep->sent_mem);
    free(ep->recv_mem);
    free(ep->recv_free);
    free(ep->ready);
    free(ep->slot_from);
    free(ep);
}

static uint32_t or_default(uint32_t v, uint32_t d)
{
    return v != 0 ? v : d;
}

int rdps__loopback_create(struct rdps_loopback_fabric *f, const struct rdps_loopback_config *cfg,
                          struct rdps_transport **out)
{
    static const struct rdps_loopback_config zero_cfg;
    struct lb_endpoint *ep = NULL;
    int err;

    if (f == NULL || out == NULL)
        return rdps__set_err(RDPS_EINVAL, "loopback create: NULL fabric or out pointer");
    *out = NULL;
    if (cfg == NULL)
        cfg = &zero_cfg;
    ep = calloc(1, sizeof(*ep));
    if (ep == NULL) {
        err = rdps__set_err(RDPS_ENOMEM, "loopback create: out of memory");
        goto err;
    }
    ep->base.ops = &loopback_ops;
    ep->event_fd = -1;
    ep->max_payload = or_default(cfg->max_payload, 1024);
    ep->send_slots = or_default(cfg->send_slots, 64);
    ep->recv_slots = or_default(cfg->recv_slots, 64);
    ep->sq_depth = or_default(cfg->sq_depth, ep->send_slots);
    if (ep->max_payload > (1u << 24) || ep->send_slots > (1u << 20) ||
        ep->recv_slots > (1u << 20) || ep->sq_depth > (1u << 20)) {
        err = rdps__set_err(RDPS_EINVAL, "loopback create: sizes out of range");
        goto err;
    }
    ep->send_mem = calloc(ep->send_slots, ep->max_payload);
    ep->send_refs = calloc(ep->send_slots, sizeof(uint32_t));
    ep->send_free = calloc(ep->send_slots, sizeof(uint32_t));
    ep->pending = calloc(ep->sq_depth, sizeof(*ep->pending));
    ep->sent = calloc(ep->sq_depth, sizeof(uint32_t));
    ep->sent_mem = calloc(ep->sq_depth, sizeof(*ep->sent_mem));
    ep->recv_mem = calloc(ep->recv_slots, ep->max_payload);
    ep->recv_free = calloc(ep->recv_slots, sizeof(uint32_t));
    ep->ready = calloc(ep->recv_slots, sizeof(*ep->ready));
    ep->slot_from = calloc(ep->recv_slots, sizeof(*ep->slot_from));
    if (ep->send_mem == NULL || ep->send_refs == NULL || ep->send_free == NULL ||
        ep->pending == NULL || ep->sent == NULL || ep->sent_mem == NULL || ep->recv_mem == NULL ||
        ep->recv_free == NULL || ep->ready == NULL || ep->slot_from == NULL) {
        err = rdps__set_err(RDPS_ENOMEM, "loopback create: out of memory for buffers");
        goto err;
    }
    /* Free lists hand out slot 0 first, so buffer order is predictable in tests. */
    for (uint32_t i = 0; i < ep->send_slots; i++)
        ep->send_free[i] = ep->send_slots - 1 - i;
    ep->send_free_count = ep->send_slots;
    for (uint32_t i = 0; i < ep->recv_slots; i++)
        ep->recv_free[i] = ep->recv_slots - 1 - i;
    ep->recv_free_count = ep->recv_slots;
    ep->event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (ep->event_fd < 0) {
        err = rdps__set_err(rdps__errno_code(errno), "loopback create: eventfd: %s",
                            rdps_strerror(rdps__errno_code(errno)));
        goto err;
    }
    fabric_lock(f);
    ep->self = new_addr(f, false, f->next_endpoint_id);
    if (ep->self != NULL) {
        f->next_endpoint_id++;
        ep->self->endpoint = ep;
        ep->fabric = f;
        ep->next = f->endpoints;
        f->endpoints = ep;
    }
    fabric_unlock(f);
    if (ep->self == NULL) {
        err = rdps__set_err(RDPS_ENOMEM, "loopback create: out of memory");
        goto err;
    }
    *out = &ep->base;
    return 0;
err:
    lb_destroy(ep == NULL ? NULL : &ep->base);
    return err;
}

/* Every loopback datagram arrives with the sender's endpoint number and GID (lb_poll). */
static int lb_self_source(struct rdps_transport *t, const struct rdps_dest *dest,
                          struct rdps_source *out)
{
    (void)dest;
    memset(out, 0, sizeof(*out));
    out->qpn = rdps__loopback_qpn(t);
    endpoint_gid(out->qpn, out->gid);
    out->has_gid = 1;
    return 0;
}

static const struct rdps_transport_ops loopback_ops = {
    .name = "loopback",
    .max_payload = lb_max_payload,
    .claim = lb_claim,
    .abort = lb_abort,
    .submit = lb_submit,
    .flush = lb_flush,
    .poll = lb_poll,
    .rx_release = lb_rx_release,
    .reply_dest = lb_reply_dest,
    .source_dest = lb_source_dest,
    .dest_acquire = lb_dest_acquire,
    .dest_release = lb_dest_release,
    .send_room = lb_send_room,
    .mem_register = lb_mem_register,
    .mem_deregister = lb_mem_deregister,
    .submit_mem = lb_submit_mem,
    .event_fd = lb_event_fd,
    .arm = lb_arm,
    .next_event = lb_next_event,
    .get_stats = lb_get_stats,
    .destroy = lb_destroy,
    .self_source = lb_self_source,
    .submit_gather = rdps__transport_gather_by_copy, /* it copies every datagram anyway */
};
