/* SPDX-License-Identifier: BSD-2-Clause */
/* loopback.c - in-memory loopback transport, the device double every unit test runs over: an
 * endpoint's data path, events and life on a process-local fabric (loopback_fabric.c); its send
 * queue is the soft devices' (rdps_soft_sq.h). */
#include "loopback_internal.h"

#include "rdps_error.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define NO_SLOT UINT32_MAX

struct lb_ready {
    uint32_t slot, len;
    struct lb_addr *from;
    bool to_group;
};

static const struct rdps_transport_ops loopback_ops;

bool rdps__lb_is_endpoint(const struct rdps_transport *t)
{
    return t != NULL && t->ops == &loopback_ops;
}

/* ---- data path ------------------------------------------------------------------------- */

/* What the device refuses to send: it failed, or its fabric is gone. */
static int refusal(const struct lb_endpoint *ep)
{
    return ep->device_fatal ? RDPS_EDEVFATAL : ep->fabric == NULL ? RDPS_ESHUTDOWN : 0;
}

static int lb_claim(struct rdps_transport *t, struct rdps_tx_buf *buf)
{
    struct lb_endpoint *ep = to_lb(t);
    if (ep->device_fatal)
        return RDPS_EDEVFATAL;
    return rdps__soft_sq_claim(&ep->sq, buf);
}

static void lb_abort(struct rdps_transport *t, struct rdps_tx_buf *buf)
{
    rdps__soft_sq_abort(&to_lb(t)->sq, buf);
}

static int lb_submit(struct rdps_transport *t, struct rdps_tx_buf *buf, uint32_t len,
                     const struct rdps_dest *const *dests, unsigned ndest)
{
    struct lb_endpoint *ep = to_lb(t);
    return rdps__soft_sq_submit(&ep->sq, buf, len, dests, ndest, refusal(ep));
}

static int lb_submit_mem(struct rdps_transport *t, struct rdps_tx_mem *m, size_t offset,
                         uint32_t len, const struct rdps_dest *const *dests, unsigned ndest,
                         uint64_t cookie)
{
    struct lb_endpoint *ep = to_lb(t);
    return rdps__soft_sq_submit_mem(&ep->sq, m, offset, len, dests, ndest, cookie, refusal(ep));
}

/* Completions come back at once on this fabric: a full queue reaps first. */
static uint32_t lb_send_room(struct rdps_transport *t)
{
    return rdps__soft_sq_room(&to_lb(t)->sq);
}

/* Registered memory is read by flush (the device's DMA) and completed on the next poll(). */
static int lb_mem_register(struct rdps_transport *t, void *addr, size_t len,
                           struct rdps_tx_mem **out)
{
    return rdps__soft_sq_mem_register(&to_lb(t)->sq, addr, len, out);
}

static int lb_mem_deregister(struct rdps_transport *t, struct rdps_tx_mem *m)
{
    return rdps__soft_sq_mem_deregister(&to_lb(t)->sq, m);
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

/* The device reads one queued request's bytes (a registered region's too, as a device reads
 * them after the post) and delivers them. */
static inline void transmit(struct lb_endpoint *ep, const struct rdps_soft_sq_req *r)
{
    struct lb_addr *a = r->dest.ah;
    if (a->is_group) {
        /* A fabric without multicast loses every group datagram (it left the port all the same). */
        if (ep->fabric->multicast == RDPS_LOOPBACK_MCAST_ON)
            for (uint32_t m = 0; m < a->member_count; m++)
                deliver(a->members[m].endpoint, ep->self, r->data, r->len, true);
    } else if (a->endpoint != NULL) {
        /* A datagram to a destroyed endpoint is lost, as on a real fabric. */
        deliver(a->endpoint, ep->self, r->data, r->len, false);
    }
    ep->stats.tx_datagrams++;
    ep->stats.tx_bytes += r->len;
}

static int lb_flush(struct rdps_transport *t)
{
    struct lb_endpoint *ep = to_lb(t);
    int err = refusal(ep);
    uint32_t count;
    const struct rdps_soft_sq_req *r = rdps__soft_sq_queued(&ep->sq, &count);
    if (count == 0)
        return err;
    struct rdps_loopback_fabric *f = ep->fabric;
    fabric_lock(f);
    if (err == 0) {
        for (uint32_t i = 0; i < count; i++)
            transmit(ep, &r[i]);
        rdps__soft_sq_flushed(&ep->sq);
    } else {
        rdps__soft_sq_drop_queued(&ep->sq);
    }
    fabric_unlock(f);
    return err;
}

static int lb_poll(struct rdps_transport *t, struct rdps_rx_datagram *rx, int max)
{
    struct lb_endpoint *ep = to_lb(t);
    if (ep->device_fatal)
        return RDPS_EDEVFATAL;
    rdps__soft_sq_reap(&ep->sq);
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
        rdps__lb_endpoint_gid(d->src_qpn, d->src_gid);
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
    rdps__lb_endpoint_gid(src->qpn, gid);
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
    bool pending =
        ep->ready_count > 0 || ep->event_count > 0 || rdps__soft_sq_completions_due(&ep->sq);
    fabric_unlock(ep->fabric);
    return pending ? 1 : 0;
}

static int lb_next_event(struct rdps_transport *t, enum rdps_transport_event_type *type)
{
    struct lb_endpoint *ep = to_lb(t);
    if (ep->event_count == 0)
        return 0;
    *type = ep->events[ep->event_head];
    ep->event_head = (ep->event_head + 1) % LB_EVENT_RING_SIZE;
    ep->event_count--;
    return 1;
}

int rdps__loopback_inject_event(struct rdps_transport *t, enum rdps_transport_event_type type)
{
    if (!rdps__lb_is_endpoint(t))
        return rdps__set_err(RDPS_EINVAL, "not a loopback transport");
    struct lb_endpoint *ep = to_lb(t);
    if (ep->event_count == LB_EVENT_RING_SIZE)
        return RDPS_ENOSPC;
    ep->events[(ep->event_head + ep->event_count) % LB_EVENT_RING_SIZE] = type;
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
    rdps__soft_sq_stats(&ep->sq, out);
}

/* ---- create / destroy ------------------------------------------------------------------ */

static void lb_destroy(struct rdps_transport *t)
{
    struct lb_endpoint *ep = to_lb(t);
    if (ep == NULL)
        return;
    if (ep->fabric != NULL)
        rdps__lb_fabric_detach(ep->fabric, ep);
    if (ep->event_fd >= 0)
        close(ep->event_fd);
    rdps__soft_sq_fini(&ep->sq);
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
    uint32_t send_slots = or_default(cfg->send_slots, 64);
    ep->recv_slots = or_default(cfg->recv_slots, 64);
    uint32_t sq_depth = or_default(cfg->sq_depth, send_slots);
    if (ep->max_payload > (1u << 24) || send_slots > (1u << 20) || ep->recv_slots > (1u << 20) ||
        sq_depth > (1u << 20)) {
        err = rdps__set_err(RDPS_EINVAL, "loopback create: sizes out of range");
        goto err;
    }
    err = rdps__soft_sq_init(&ep->sq, &ep->base, "of loopback endpoint", ep->max_payload,
                             send_slots, sq_depth);
    ep->recv_mem = calloc(ep->recv_slots, ep->max_payload);
    ep->recv_free = calloc(ep->recv_slots, sizeof(uint32_t));
    ep->ready = calloc(ep->recv_slots, sizeof(*ep->ready));
    ep->slot_from = calloc(ep->recv_slots, sizeof(*ep->slot_from));
    if (err < 0 || ep->recv_mem == NULL || ep->recv_free == NULL || ep->ready == NULL ||
        ep->slot_from == NULL) {
        err = rdps__set_err(RDPS_ENOMEM, "loopback create: out of memory for buffers");
        goto err;
    }
    /* Free lists hand out slot 0 first, so buffer order is predictable in tests. */
    for (uint32_t i = 0; i < ep->recv_slots; i++)
        ep->recv_free[i] = ep->recv_slots - 1 - i;
    ep->recv_free_count = ep->recv_slots;
    ep->event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (ep->event_fd < 0) {
        err = rdps__set_err(rdps__errno_code(errno), "loopback create: eventfd: %s",
                            rdps_strerror(rdps__errno_code(errno)));
        goto err;
    }
    if (!rdps__lb_fabric_attach(f, ep)) {
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
    rdps__lb_endpoint_gid(out->qpn, out->gid);
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
