/* SPDX-License-Identifier: BSD-2-Clause */
/* local.c - the local device's transport: one member per endpoint, sends copied into the
 * receivers' rings at flush (the soft devices' send queue, rdps_soft_sq.h), receives copied out
 * of its own ring, a FIFO and a timer to wake; its groups and names are local_groups.c's. */
#include "local_ep.h"

#include "rdps_error.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define LOCAL_REAP_NS 2000000000ull
#define NO_SLOT       UINT32_MAX

static const struct rdps_transport_ops local_ops;

bool rdps__local_is_endpoint(const struct rdps_transport *t)
{
    return t != NULL && t->ops == &local_ops;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- delivery into other members' rings ----------------------------------------------- */

static void peer_unmap(struct local_peer *p)
{
    if (p->mem != NULL)
        munmap(p->mem, p->bytes);
    if (p->fifo_fd >= 0)
        close(p->fifo_fd);
    p->mem = NULL;
    p->fifo_fd = -1;
    p->gen = 0;
}

/* The ring of member `index` of generation `gen`, mapped on first use; NULL when unreachable. */
static struct local_peer *peer_get(struct local_ep *ep, uint32_t index, uint32_t gen)
{
    struct local_peer *p = &ep->peers[index];
    if (p->gen == gen && p->mem != NULL)
        return p;
    uint64_t epoch = atomic_load_explicit(&ep->dir.reg->epoch, memory_order_acquire);
    if (p->failed && p->gen == gen && p->failed_epoch == epoch)
        return NULL;
    peer_unmap(p);
    p->gen = gen;
    uint32_t slots;
    if (index == ep->index && gen == ep->gen) {
        local_ring_view_init(&p->view, ep->ring_mem, ep->reader.view.slots, ep->mtu);
        p->failed = false;
        return p; /* our own ring: mem stays NULL (not ours to unmap) */
    }
    if (local_dir_ring_map(&ep->dir, index, gen, &p->mem, &p->bytes, &slots) < 0) {
        p->mem = NULL;
        p->failed = true;
        p->failed_epoch = epoch;
        return NULL;
    }
    p->failed = false;
    local_ring_view_init(&p->view, p->mem, slots, ep->mtu);
    return p;
}

static void wake_peer(struct local_ep *ep, struct local_peer *p, uint32_t index)
{
    if (p->fifo_fd < 0)
        p->fifo_fd = local_dir_fifo_open(&ep->dir, index, p->gen);
    if (p->fifo_fd < 0 || (write(p->fifo_fd, "w", 1) < 0 && errno != EAGAIN)) {
        ep->next_reap_ns = 0; /* no reader: the member died; reap soon */
        ep->polls = 0;
        if (p->fifo_fd >= 0)
            close(p->fifo_fd);
        p->fifo_fd = -1;
    }
}

static void deliver(struct local_ep *ep, uint32_t index, uint32_t gen, const uint8_t *data,
                    uint32_t len, uint32_t flags)
{
    struct local_peer *p = index == ep->index && gen == ep->gen ? &ep->peers[index] : NULL;
    if (p == NULL || p->gen != gen)
        p = peer_get(ep, index, gen);
    else if (p->view.hdr == NULL)
        p = peer_get(ep, index, gen);
    if (p == NULL) {
        ep->unreachable++;
        return;
    }
    enum local_push_result r = local_ring_push(&p->view, data, len, ep->qpn, flags, ep->pid);
    if (r == LOCAL_PUSH_OK_WAKE)
        wake_peer(ep, p, index);
}

/* The registry entry of a group destination (cached until the registry changes). */
static int group_entry(struct local_ep *ep, struct local_addr *a)
{
    uint64_t epoch = atomic_load_explicit(&ep->dir.reg->epoch, memory_order_acquire);
    if (a->entry_epoch != epoch || a->entry < 0 ||
        atomic_load_explicit(&ep->dir.reg->groups[a->entry].group, memory_order_relaxed) !=
            a->group) {
        a->entry = local_registry_find_group(ep->dir.reg, a->group);
        a->entry_epoch = epoch;
    }
    return a->entry;
}

static void transmit(struct local_ep *ep, const struct rdps_soft_sq_req *p)
{
    const struct local_addr *a = p->dest.ah;
    struct local_registry *reg = ep->dir.reg;
    if (a->is_group) {
        int entry = group_entry(ep, (struct local_addr *)a);
        for (uint32_t w = 0; entry >= 0 && w < LOCAL_BITMAP_WORDS; w++) {
            uint64_t bits =
                atomic_load_explicit(&reg->groups[entry].bitmap[w], memory_order_acquire);
            while (bits != 0) {
                uint32_t index = w * 64 + (uint32_t)__builtin_ctzll(bits);
                bits &= bits - 1;
                struct local_member_entry *m = &reg->members[index];
                if (atomic_load_explicit(&m->state, memory_order_relaxed) != LOCAL_MEMBER_LIVE)
                    continue;
                deliver(ep, index, atomic_load_explicit(&m->gen, memory_order_relaxed), p->data,
                        p->len, LOCAL_SLOT_MULTICAST);
            }
        }
    } else {
        uint32_t index = local_qpn_index(p->dest.remote_qpn);
        struct local_member_entry *m = &reg->members[index];
        uint32_t gen = atomic_load_explicit(&m->gen, memory_order_relaxed);
        /* A datagram to a member that is gone is lost, as to a destroyed QP. */
        if (atomic_load_explicit(&m->state, memory_order_relaxed) == LOCAL_MEMBER_LIVE &&
            (gen & LOCAL_GEN_MASK) == local_qpn_gen(p->dest.remote_qpn))
            deliver(ep, index, gen, p->data, p->len, 0);
    }
    ep->stats.tx_datagrams++;
    ep->stats.tx_bytes += p->len;
}

/* ---- send side: claimed buffers, queued requests, flush ------------------------------- */

static int lc_claim(struct rdps_transport *t, struct rdps_tx_buf *buf)
{
    return rdps__soft_sq_claim(&to_ep(t)->sq, buf);
}

static void lc_abort(struct rdps_transport *t, struct rdps_tx_buf *buf)
{
    rdps__soft_sq_abort(&to_ep(t)->sq, buf);
}

static int lc_submit(struct rdps_transport *t, struct rdps_tx_buf *buf, uint32_t len,
                     const struct rdps_dest *const *dests, unsigned ndest)
{
    return rdps__soft_sq_submit(&to_ep(t)->sq, buf, len, dests, ndest, 0);
}

static int lc_submit_mem(struct rdps_transport *t, struct rdps_tx_mem *m, size_t offset,
                         uint32_t len, const struct rdps_dest *const *dests, unsigned ndest,
                         uint64_t cookie)
{
    return rdps__soft_sq_submit_mem(&to_ep(t)->sq, m, offset, len, dests, ndest, cookie, 0);
}

/* Every request is copied into its receivers' rings now; the next poll() completes them. */
static int lc_flush(struct rdps_transport *t)
{
    struct local_ep *ep = to_ep(t);
    uint32_t count;
    const struct rdps_soft_sq_req *r = rdps__soft_sq_queued(&ep->sq, &count);
    for (uint32_t i = 0; i < count; i++)
        transmit(ep, &r[i]);
    rdps__soft_sq_flushed(&ep->sq);
    return 0;
}

static uint32_t lc_send_room(struct rdps_transport *t)
{
    return rdps__soft_sq_room(&to_ep(t)->sq);
}

static int lc_mem_register(struct rdps_transport *t, void *addr, size_t len,
                           struct rdps_tx_mem **out)
{
    return rdps__soft_sq_mem_register(&to_ep(t)->sq, addr, len, out);
}

static int lc_mem_deregister(struct rdps_transport *t, struct rdps_tx_mem *m)
{
    return rdps__soft_sq_mem_deregister(&to_ep(t)->sq, m);
}

/* ---- receive side ---------------------------------------------------------------------- */

static bool process_alive(uint32_t pid)
{
    return pid == 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH;
}

static void arm_timer(struct local_ep *ep, uint64_t at_ns)
{
    struct itimerspec its = {.it_value = {.tv_sec = (time_t)(at_ns / 1000000000ull),
                                          .tv_nsec = (long)(at_ns % 1000000000ull)}};
    timerfd_settime(ep->timer_fd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* Dead members' entries and files, every LOCAL_REAP_NS (sooner when a wake found no reader). */
static void maybe_reap(struct local_ep *ep, uint64_t now)
{
    if (now < ep->next_reap_ns)
        return;
    ep->next_reap_ns = now + LOCAL_REAP_NS;
    if (local_dir_trylock(&ep->dir)) {
        local_dir_reap(&ep->dir, ep->index);
        local_dir_unlock(&ep->dir);
    }
}

static int lc_poll(struct rdps_transport *t, struct rdps_rx_datagram *rx, int max)
{
    struct local_ep *ep = to_ep(t);
    static const struct local_ring_env env = {.now_ns = now_ns, .writer_alive = process_alive};
    rdps__soft_sq_reap(&ep->sq);
    /* The clock only every 4096 polls: on some virtual machines a read costs a microsecond. */
    if ((ep->polls++ & 4095) == 0)
        maybe_reap(ep, now_ns());
    int got = 0;
    while (got < max && ep->recv_free_count > 0) {
        uint32_t slot = ep->recv_free[ep->recv_free_count - 1];
        struct local_ring_item item;
        uint64_t retry = 0;
        enum local_pop_result r =
            local_ring_pop(&ep->reader, ep->recv_mem + (size_t)slot * ep->mtu, &item, &env, &retry);
        if (r == LOCAL_POP_STUCK)
            arm_timer(ep, retry); /* the writer's grace ends then: wake to look again */
        if (r != LOCAL_POP_ITEM)
            break;
        ep->recv_free_count--;
        struct rdps_rx_datagram *d = &rx[got++];
        d->data = ep->recv_mem + (size_t)slot * ep->mtu;
        d->len = item.len;
        d->slot = slot;
        d->src_qpn = item.src_qpn;
        member_gid(item.src_qpn, d->src_gid);
        d->has_src_gid = true;
        d->src_lid = 0;
        d->to_multicast = (item.flags & LOCAL_SLOT_MULTICAST) != 0;
        ep->recv_src[slot] = item.src_qpn;
        ep->stats.rx_datagrams++;
        ep->stats.rx_bytes += item.len;
    }
    return got;
}

static void lc_rx_release(struct rdps_transport *t, struct rdps_rx_datagram *rx, int count)
{
    struct local_ep *ep = to_ep(t);
    for (int i = 0; i < count; i++) {
        if (rx[i].slot >= LOCAL_RECV_BUFS || ep->recv_free_count >= LOCAL_RECV_BUFS)
            continue;
        ep->recv_free[ep->recv_free_count++] = rx[i].slot;
        rx[i].slot = NO_SLOT;
        rx[i].data = NULL;
    }
}

const struct rdps_dest *rdps__local_unicast_dest(struct local_ep *ep, uint32_t qpn)
{
    struct rdps_dest *d = &ep->uni_dests[local_qpn_index(qpn)];
    d->ah = &ep->unicast;
    d->remote_qpn = qpn;
    d->remote_qkey = 0;
    return d;
}

static int lc_reply_dest(struct rdps_transport *t, const struct rdps_rx_datagram *rx,
                         const struct rdps_dest **out)
{
    struct local_ep *ep = to_ep(t);
    if (out == NULL)
        return RDPS_EINVAL;
    *out = NULL;
    if (rx == NULL || rx->slot >= LOCAL_RECV_BUFS)
        return rdps__set_err(RDPS_EINVAL, "local reply: not a received datagram");
    *out = rdps__local_unicast_dest(ep, ep->recv_src[rx->slot]);
    return 0;
}

static int lc_source_dest(struct rdps_transport *t, const struct rdps_source *src,
                          const struct rdps_dest **out)
{
    struct local_ep *ep = to_ep(t);
    if (out == NULL)
        return RDPS_EINVAL;
    *out = NULL;
    uint8_t gid[16];
    if (src == NULL || !src->has_gid || src->qpn == 0 || src->qpn > 0xffffffu)
        return rdps__set_err(RDPS_EINVAL, "local source_dest: no member QPN or GID");
    member_gid(src->qpn, gid);
    if (memcmp(gid, src->gid, sizeof(gid)) != 0)
        return rdps__set_err(RDPS_ENOENT, "local source_dest: GID is not member %u's", src->qpn);
    *out = rdps__local_unicast_dest(ep, src->qpn);
    return 0;
}

/* A destination of its own, freed by dest_release (unicast fan-out keeps it for long). */
static int lc_dest_acquire(struct rdps_transport *t, const struct rdps_source *src,
                           const struct rdps_dest **out)
{
    struct local_ep *ep = to_ep(t);
    const struct rdps_dest *shared;
    int rc = lc_source_dest(t, src, &shared);
    if (rc < 0)
        return rc;
    struct rdps_dest *d = malloc(sizeof(*d));
    if (d == NULL)
        return rdps__set_err(RDPS_ENOMEM, "local dest_acquire: out of memory");
    *d = *shared;
    d->ah = &ep->unicast;
    *out = d;
    return 0;
}

static void lc_dest_release(struct rdps_transport *t, const struct rdps_dest *dest)
{
    (void)t;
    free((void *)dest); /* queued sends hold a copy (rdps_soft_sq_req.dest) */
}

/* ---- events ---------------------------------------------------------------------------- */

static int lc_event_fd(struct rdps_transport *t)
{
    return to_ep(t)->epoll_fd;
}

/*
 * Drains the FIFO and the timer, then says we sleep (`waiting`) and looks at the head once more:
 * a writer that commits after this look finds `waiting` set and writes the FIFO.
 */
static int lc_arm(struct rdps_transport *t)
{
    struct local_ep *ep = to_ep(t);
    char buf[64];
    while (read(ep->fifo_fd, buf, sizeof(buf)) > 0)
        ;
    uint64_t ticks;
    (void)!read(ep->timer_fd, &ticks, sizeof(ticks));
    maybe_reap(ep, now_ns()); /* a member that sleeps polls seldom: reap on the way to sleep */
    atomic_store(&ep->reader.view.hdr->waiting, 1);
    return local_ring_ready(&ep->reader) || rdps__soft_sq_completions_due(&ep->sq) ? 1 : 0;
}

static int lc_next_event(struct rdps_transport *t, enum rdps_transport_event_type *type)
{
    (void)t;
    (void)type;
    return 0; /* no ports to go down */
}

static uint32_t lc_max_payload(struct rdps_transport *t)
{
    return to_ep(t)->mtu;
}

static void lc_get_stats(const struct rdps_transport *t, struct rdps_transport_stats *out)
{
    const struct local_ep *ep = (const struct local_ep *)t;
    *out = ep->stats;
    /* Writers count what found our ring full; a count that went back is not ours to trust. */
    uint64_t overruns = atomic_load_explicit(&ep->reader.view.hdr->overruns, memory_order_relaxed);
    out->rx_queue_empty = overruns >= ep->overruns_base ? overruns - ep->overruns_base : 0;
    out->rx_completion_errors = ep->reader.bad_slots;
    out->tx_completion_errors = ep->unreachable;
    rdps__soft_sq_stats(&ep->sq, out);
}

/* ---- create / destroy ------------------------------------------------------------------ */

static void lc_destroy(struct rdps_transport *t)
{
    struct local_ep *ep = to_ep(t);
    if (ep == NULL)
        return;
    if (ep->registered && local_dir_lock(&ep->dir) == 0) {
        local_dir_member_free(&ep->dir, ep->index, ep->gen);
        local_dir_unlock(&ep->dir);
    } /* else: the others reap us once our lock on the ring is gone (below) */
    for (uint32_t i = 0; i < LOCAL_MAX_MEMBERS; i++)
        peer_unmap(&ep->peers[i]);
    if (ep->ring_mem != NULL)
        munmap(ep->ring_mem, ep->ring_bytes);
    int fds[] = {ep->ring_fd, ep->fifo_fd, ep->timer_fd, ep->epoll_fd};
    for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
        if (fds[i] >= 0)
            close(fds[i]);
    local_dir_close(&ep->dir);
    while (ep->groups != NULL) {
        struct local_addr *a = ep->groups;
        ep->groups = a->next;
        free(a);
    }
    rdps__soft_sq_fini(&ep->sq);
    free(ep->joins);
    free(ep->recv_mem);
    free(ep);
}

static int create_buffers(struct local_ep *ep, const struct rdps_local_config *cfg)
{
    uint32_t send_slots = cfg->send_slots != 0 ? cfg->send_slots : 1024;
    if (send_slots > (1u << 16))
        send_slots = 1u << 16;
    int rc = rdps__soft_sq_init(&ep->sq, &ep->base, "(the local device's MTU)", ep->mtu, send_slots,
                                send_slots);
    ep->recv_mem = malloc((size_t)LOCAL_RECV_BUFS * ep->mtu);
    if (rc < 0 || ep->recv_mem == NULL)
        return rdps__set_err(RDPS_ENOMEM, "local device: out of memory for buffers");
    for (uint32_t i = 0; i < LOCAL_RECV_BUFS; i++)
        ep->recv_free[i] = LOCAL_RECV_BUFS - 1 - i;
    ep->recv_free_count = LOCAL_RECV_BUFS;
    for (uint32_t i = 0; i < LOCAL_MAX_MEMBERS; i++)
        ep->peers[i].fifo_fd = -1;
    return 0;
}

/* The member's entry, ring and FIFO, under the registry's lock. */
static int create_member(struct local_ep *ep, uint32_t recv_slots)
{
    uint32_t slots = local_ring_slots_for(recv_slots != 0 ? recv_slots : 4096, ep->mtu);
    int rc = local_dir_lock(&ep->dir);
    if (rc < 0)
        return rc;
    local_dir_reap(&ep->dir, LOCAL_MAX_MEMBERS);
    rc = local_dir_member_take(&ep->dir, slots, &ep->index, &ep->gen);
    if (rc == 0) {
        ep->qpn = local_qpn(ep->gen, ep->index);
        rc = local_dir_ring_create(&ep->dir, ep->index, ep->gen, slots, &ep->ring_fd, &ep->ring_mem,
                                   &ep->ring_bytes, &ep->fifo_fd);
        if (rc < 0) {
            ep->ring_mem = NULL;
            local_dir_member_free(&ep->dir, ep->index, ep->gen);
        }
    }
    local_dir_unlock(&ep->dir);
    if (rc < 0)
        return rc;
    ep->registered = true;
    local_ring_reader_init(&ep->reader, ep->ring_mem, slots, ep->mtu);
    return 0;
}

static int create_wakeup(struct local_ep *ep)
{
    ep->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    ep->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (ep->timer_fd < 0 || ep->epoll_fd < 0)
        return rdps__set_err(rdps__errno_code(errno), "local device: timerfd/epoll: %s",
                             strerror(errno));
    struct epoll_event ev = {.events = EPOLLIN};
    if (epoll_ctl(ep->epoll_fd, EPOLL_CTL_ADD, ep->fifo_fd, &ev) < 0 ||
        epoll_ctl(ep->epoll_fd, EPOLL_CTL_ADD, ep->timer_fd, &ev) < 0)
        return rdps__set_err(rdps__errno_code(errno), "local device: epoll_ctl: %s",
                             strerror(errno));
    return 0;
}

int rdps__local_create(const struct rdps_local_config *cfg, struct rdps_transport **out)
{
    static const struct rdps_local_config zero_cfg;
    if (out == NULL)
        return rdps__set_err(RDPS_EINVAL, "local create: NULL out pointer");
    *out = NULL;
    if (cfg == NULL)
        cfg = &zero_cfg;
    if (cfg->mtu != 0 && cfg->mtu != 1024 && cfg->mtu != 4096)
        return rdps__set_err(RDPS_EINVAL, "local device: MTU %u is not 1024 or 4096", cfg->mtu);
    struct local_ep *ep = calloc(1, sizeof(*ep));
    if (ep == NULL)
        return rdps__set_err(RDPS_ENOMEM, "local create: out of memory");
    ep->base.ops = &local_ops;
    ep->ring_fd = ep->fifo_fd = ep->timer_fd = ep->epoll_fd = -1;
    ep->pid = (uint32_t)getpid();
    ep->unicast.is_group = false;
    int rc = local_dir_open(&ep->dir, cfg->dir, cfg->group, cfg->mtu);
    if (rc == 0) {
        ep->mtu = ep->dir.mtu;
        rc = create_buffers(ep, cfg);
    } else {
        ep->dir.reg_fd = ep->dir.dir_fd = -1;
    }
    if (rc == 0)
        rc = create_member(ep, cfg->recv_slots);
    if (rc == 0)
        rc = create_wakeup(ep);
    if (rc < 0) {
        lc_destroy(&ep->base);
        return rc;
    }
    ep->overruns_base = atomic_load(&ep->reader.view.hdr->overruns);
    *out = &ep->base;
    return 0;
}

/* ---- identity ------------------------------------------------------------------------------ */

static int lc_self_source(struct rdps_transport *t, const struct rdps_dest *dest,
                          struct rdps_source *out)
{
    (void)dest;
    memset(out, 0, sizeof(*out));
    out->qpn = to_ep(t)->qpn;
    member_gid(out->qpn, out->gid);
    out->has_gid = 1;
    return 0;
}

static const struct rdps_transport_ops local_ops = {
    .name = "local",
    .max_payload = lc_max_payload,
    .claim = lc_claim,
    .abort = lc_abort,
    .submit = lc_submit,
    .flush = lc_flush,
    .poll = lc_poll,
    .rx_release = lc_rx_release,
    .reply_dest = lc_reply_dest,
    .source_dest = lc_source_dest,
    .dest_acquire = lc_dest_acquire,
    .dest_release = lc_dest_release,
    .send_room = lc_send_room,
    .mem_register = lc_mem_register,
    .mem_deregister = lc_mem_deregister,
    .submit_mem = lc_submit_mem,
    .event_fd = lc_event_fd,
    .arm = lc_arm,
    .next_event = lc_next_event,
    .get_stats = lc_get_stats,
    .destroy = lc_destroy,
    .self_source = lc_self_source,
    .submit_gather = rdps__transport_gather_by_copy, /* every datagram is copied anyway */
};
