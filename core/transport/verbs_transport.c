/* verbs_transport.c - verbs UD transport: device/port, PD, CQs + channel, one UD QP, registered
 * pools. */
#include "rdps_verbs_transport.h"

#include "rdps_error.h"
#include "rdps_log.h"
#include "rdps_loss.h"
#include "rdps_reply_cache.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <rdma/rdma_cma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#define NO_SLOT         UINT32_MAX
#define POLL_BATCH      32
#define EVENT_RING_SIZE 16
#define BUF_ALIGN       64u

struct deferred_ah {
    struct ibv_ah *ah;
    uint64_t free_after_seq; /* destroyed once every WR with a lower sequence has completed */
};

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

    /* Posted WRs by sequence (wr_id); everything below done_seq has completed. */
    uint32_t *posted_slot;
    uint64_t next_seq, done_seq;
    uint64_t signaled_through; /* 1 + sequence of the last signaled WR posted (0: none) */
    uint32_t sq_depth, signal_every, unsignaled_run;

    /* Receive pool: slot i is recv_mem + i * recv_stride (GRH + MTU). */
    uint8_t *recv_mem;
    struct ibv_mr *recv_mr;
    uint32_t recv_slots, recv_stride, recv_batch, recv_posted;
    struct ibv_recv_wr *recv_wr;
    struct ibv_sge *recv_sge;
    uint32_t *recv_pending;
    uint32_t recv_pending_count;
    /* Receive completions drained from the CQ, handed out by poll() (recv_slots entries). */
    struct ibv_wc *wc_ring;
    uint32_t wc_head, wc_count;

    struct rdps_reply_cache replies;
    struct deferred_ah *graveyard;
    uint32_t graveyard_count, graveyard_cap;

    enum rdps_transport_event_type events[EVENT_RING_SIZE];
    uint32_t event_head, event_count;
    bool device_fatal;
    bool recv_notify_armed, send_notify_armed;
    struct rdps_transport_stats stats;
};

static const struct rdps_transport_ops verbs_ops;

static struct verbs_transport *to_verbs(struct rdps_transport *t)
{
    return (struct verbs_transport *)t;
}

static uint32_t round_up(uint32_t v, uint32_t a)
{
    return (v + a - 1) / a * a;
}

static uint32_t mtu_bytes(enum ibv_mtu mtu)
{
    switch (mtu) {
    case IBV_MTU_256:
        return 256;
    case IBV_MTU_512:
        return 512;
    case IBV_MTU_1024:
        return 1024;
    case IBV_MTU_2048:
        return 2048;
    case IBV_MTU_4096:
        return 4096;
    }
    return 256; /* unknown encodings: the smallest MTU every port supports */
}

static int set_nonblocking(int fd)
{
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
        return rdps__errno_code(errno);
    return 0;
}

static const char *addr_text(const struct sockaddr *sa, char *buf, size_t len)
{
    const void *raw = NULL;
    if (sa->sa_family == AF_INET)
        raw = &((const struct sockaddr_in *)sa)->sin_addr;
    else if (sa->sa_family == AF_INET6)
        raw = &((const struct sockaddr_in6 *)sa)->sin6_addr;
    if (raw == NULL || inet_ntop(sa->sa_family, raw, buf, (socklen_t)len) == NULL)
        snprintf(buf, len, "(address family %d)", sa->sa_family);
    return buf;
}

static socklen_t sockaddr_len(const struct sockaddr *sa)
{
    return sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

/* ---- device and port selection ---------------------------------------------------------- */

/* Finds the device and port that own a local IP, through a temporary rdma_cm id. */
static int find_port_by_addr(const struct sockaddr *addr, char *dev_name, size_t dev_len,
                             uint8_t *port_num)
{
    struct sockaddr_storage local;
    struct rdma_cm_id *id = NULL;
    char text[INET6_ADDRSTRLEN + 16];
    int err;

    if (addr->sa_family != AF_INET && addr->sa_family != AF_INET6)
        return rdps__set_err(RDPS_EINVAL, "bind address family %d is not IPv4 or IPv6",
                             addr->sa_family);
    memset(&local, 0, sizeof(local));
    memcpy(&local, addr, sockaddr_len(addr));
    /* Port 0: only the device is wanted here; addr/ binds the real CM port later. */
    if (local.ss_family == AF_INET)
        ((struct sockaddr_in *)&local)->sin_port = 0;
    else
        ((struct sockaddr_in6 *)&local)->sin6_port = 0;

    if (rdma_create_id(NULL, &id, NULL, RDMA_PS_UDP) != 0) {
        err = rdps__errno_code(errno);
        return rdps__set_err(err, "rdma_create_id: %s (is rdma_ucm loaded?)", strerror(errno));
    }
    if (rdma_bind_addr(id, (struct sockaddr *)&local) != 0) {
        int saved = errno;
        rdma_destroy_id(id);
        return rdps__set_err(RDPS_EADDRNOTAVAIL, "no RDMA device owns address %s (%s)",
                             addr_text(addr, text, sizeof(text)), strerror(saved));
    }
    if (id->verbs == NULL) {
        rdma_destroy_id(id);
        return rdps__set_err(RDPS_ENODEV, "address %s is not on an RDMA device",
                             addr_text(addr, text, sizeof(text)));
    }
    snprintf(dev_name, dev_len, "%s", ibv_get_device_name(id->verbs->device));
    *port_num = id->port_num;
    rdma_destroy_id(id);
    return 0;
}

/* Opens `name` (or every device in turn when NULL) and picks `want_port` or the first ACTIVE one.
 */
static int open_device_port(const char *name, uint8_t want_port, struct ibv_context **out_ctx,
                            uint8_t *out_port, struct ibv_port_attr *out_attr)
{
    int num = 0;
    struct ibv_device **list = ibv_get_device_list(&num);
    int err = 0;
    bool found_name = false;
    char down_detail[160] = "";

    if (list == NULL && (errno == ENOSYS || errno == ENOENT))
        return rdps__set_err(RDPS_ENODEV, "no RDMA devices: this kernel has no RDMA support (%s)",
                             strerror(errno));
    if (list == NULL)
        return rdps__set_err(rdps__errno_code(errno), "ibv_get_device_list: %s", strerror(errno));
    if (num == 0) {
        ibv_free_device_list(list);
        return rdps__set_err(
            RDPS_ENODEV, "no RDMA devices found (load rdma_rxe and add a link, or an HCA driver)");
    }
    for (int i = 0; i < num; i++) {
        const char *dev_name = ibv_get_device_name(list[i]);
        if (name != NULL && strcmp(dev_name, name) != 0)
            continue;
        found_name = true;
        struct ibv_context *ctx = ibv_open_device(list[i]);
        if (ctx == NULL) {
            err = rdps__set_err(rdps__errno_code(errno), "ibv_open_device(%s): %s", dev_name,
                                strerror(errno));
            continue;
        }
        struct ibv_device_attr dev_attr;
        if (ibv_query_device(ctx, &dev_attr) != 0) {
            err = rdps__set_err(rdps__errno_code(errno), "ibv_query_device(%s): %s", dev_name,
                                strerror(errno));
            ibv_close_device(ctx);
            continue;
        }
        if (want_port != 0 && want_port > dev_attr.phys_port_cnt) {
            err = rdps__set_err(RDPS_ENODEV, "device %s has no port %u (it has %u)", dev_name,
                                want_port, dev_attr.phys_port_cnt);
            ibv_close_device(ctx);
            continue;
        }
        for (uint8_t p = 1; p <= dev_attr.phys_port_cnt; p++) {
            struct ibv_port_attr attr;
            if (want_port != 0 && p != want_port)
                continue;
            if (ibv_query_port(ctx, p, &attr) != 0)
                continue;
            if (attr.state == IBV_PORT_ACTIVE) {
                *out_ctx = ctx;
                *out_port = p;
                *out_attr = attr;
                ibv_free_device_list(list);
                return 0;
            }
            snprintf(down_detail, sizeof(down_detail), "%s port %u is %s", dev_name, p,
                     ibv_port_state_str(attr.state));
        }
        ibv_close_device(ctx);
    }
    ibv_free_device_list(list);
    if (name != NULL && !found_name)
        return rdps__set_err(RDPS_ENODEV, "RDMA device '%s' not found", name);
    if (down_detail[0] != '\0')
        return rdps__set_err(RDPS_ENETDOWN, "no ACTIVE port: %s", down_detail);
    if (err != 0)
        return err;
    return rdps__set_err(RDPS_ENODEV, "no ACTIVE RDMA port found");
}

static bool gid_is_v4_mapped(const union ibv_gid *gid)
{
    static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return memcmp(gid->raw, prefix, sizeof(prefix)) == 0;
}

static bool gid_matches_addr(const union ibv_gid *gid, const struct sockaddr *sa)
{
    if (sa == NULL)
        return false;
    if (sa->sa_family == AF_INET)
        return gid_is_v4_mapped(gid) &&
               memcmp(gid->raw + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4) == 0;
    if (sa->sa_family == AF_INET6)
        return memcmp(gid->raw, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16) == 0;
    return false;
}

/*
 * On RoCE the GID picks the wire format: prefer the RoCE v2 GID of the bind
 * address, else the first RoCE v2 IPv4 GID (routable, what rdma_cm uses), else
 * the first valid entry. IB uses index 0.
 */
static int choose_gid(struct verbs_transport *vt, const struct rdps_verbs_config *cfg,
                      const struct ibv_port_attr *attr)
{
    struct rdps_verbs_info *info = &vt->info;
    if (cfg->gid_index_set) {
        if (ibv_query_gid(info->verbs, info->port_num, cfg->gid_index, &info->gid) != 0)
            return rdps__set_err(RDPS_EINVAL, "GID index %u not readable on %s port %u",
                                 cfg->gid_index, info->device_name, info->port_num);
        info->gid_index = cfg->gid_index;
        return 0;
    }
    if (attr->link_layer != IBV_LINK_LAYER_ETHERNET) {
        info->gid_index = 0;
        if (ibv_query_gid(info->verbs, info->port_num, 0, &info->gid) != 0)
            return rdps__set_err(rdps__errno_code(errno), "ibv_query_gid(%s, 0): %s",
                                 info->device_name, strerror(errno));
        return 0;
    }
    int best = -1, best_rank = 0;
    for (int i = 0; i < attr->gid_tbl_len && i < 256; i++) {
        struct ibv_gid_entry entry;
        if (ibv_query_gid_ex(info->verbs, info->port_num, (uint32_t)i, &entry, 0) != 0)
            continue;
        union ibv_gid gid;
        memcpy(gid.raw, entry.gid.raw, 16);
        int rank = 1;
        if (entry.gid_type == IBV_GID_TYPE_ROCE_V2)
            rank = gid_is_v4_mapped(&gid) ? 3 : 2;
        if (gid_matches_addr(&gid, cfg->bind_addr))
            rank += 10;
        if (rank > best_rank) {
            best = i;
            best_rank = rank;
            info->gid = gid;
        }
    }
    if (best < 0)
        return rdps__set_err(RDPS_EADDRNOTAVAIL,
                             "%s port %u has no valid GID (no IP address on its netdev?)",
                             info->device_name, info->port_num);
    info->gid_index = (uint8_t)best;
    return 0;
}

/* ---- send side ------------------------------------------------------------------------- */

static void send_slot_unref(struct verbs_transport *vt, uint32_t slot)
{
    if (--vt->send_refs[slot] == 0)
        vt->send_free[vt->send_free_count++] = slot;
}

static void graveyard_sweep(struct verbs_transport *vt, bool all)
{
    uint32_t kept = 0;
    for (uint32_t i = 0; i < vt->graveyard_count; i++) {
        struct deferred_ah *d = &vt->graveyard[i];
        if (all || vt->done_seq >= d->free_after_seq)
            ibv_destroy_ah(d->ah);
        else
            vt->graveyard[kept++] = *d;
    }
    vt->graveyard_count = kept;
}

/* Everything up to and including `seq` has completed (send completions arrive in order). */
static void complete_through(struct verbs_transport *vt, uint64_t seq)
{
    if (seq >= vt->next_seq || seq < vt->done_seq)
        return; /* not ours or already seen: ignore rather than corrupt the pool */
    for (uint64_t s = vt->done_seq; s <= seq; s++) {
        uint32_t *slot = &vt->posted_slot[s % vt->sq_depth];
        if (*slot != NO_SLOT)
            send_slot_unref(vt, *slot);
        *slot = NO_SLOT;
    }
    vt->done_seq = seq + 1;
    if (vt->graveyard_count > 0)
        graveyard_sweep(vt, false);
}

static int reap_send(struct verbs_transport *vt)
{
    struct ibv_wc wc[POLL_BATCH];
    int n;
    /* Only signaled WRs complete: with none in flight the send CQ has nothing to give. */
    if (vt->signaled_through <= vt->done_seq)
        return 0;
    do {
        n = ibv_poll_cq(vt->send_cq, POLL_BATCH, wc);
        if (n < 0)
            return RDPS_EIO;
        for (int i = 0; i < n; i++) {
            if (wc[i].status != IBV_WC_SUCCESS) {
                vt->stats.tx_completion_errors++;
                RDPS_LOG_DBG("send completion error: %s", ibv_wc_status_str(wc[i].status));
            }
            complete_through(vt, wc[i].wr_id);
        }
    } while (n == POLL_BATCH);
    return 0;
}

static uint32_t sq_room(const struct verbs_transport *vt)
{
    uint64_t outstanding = vt->next_seq - vt->done_seq;
    return vt->sq_depth - (uint32_t)outstanding - vt->pend_count;
}

static int verbs_claim(struct rdps_transport *t, struct rdps_tx_buf *buf)
{
    struct verbs_transport *vt = to_verbs(t);
    if (vt->device_fatal)
        return RDPS_EDEVFATAL;
    if (vt->send_free_count == 0 || sq_room(vt) == 0) {
        int err = reap_send(vt);
        if (err < 0)
            return err;
        if (vt->send_free_count == 0 || sq_room(vt) == 0) {
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

static void verbs_abort(struct rdps_transport *t, struct rdps_tx_buf *buf)
{
    struct verbs_transport *vt = to_verbs(t);
    if (!claimed_slot(vt, buf))
        return;
    send_slot_unref(vt, buf->slot);
    buf->data = NULL;
    buf->slot = NO_SLOT;
}

static int verbs_submit(struct rdps_transport *t, struct rdps_tx_buf *buf, uint32_t len,
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
    } else if (sq_room(vt) < ndest) {
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
        sge->addr = addr;
        sge->length = len;
        sge->lkey = vt->send_mr->lkey;
        memset(wr, 0, sizeof(*wr));
        wr->sg_list = sge;
        wr->num_sge = 1;
        wr->opcode = IBV_WR_SEND;
        wr->send_flags = inline_send ? IBV_SEND_INLINE : 0;
        wr->wr.ud.ah = dests[i]->ah;
        wr->wr.ud.remote_qpn = dests[i]->remote_qpn;
        wr->wr.ud.remote_qkey = dests[i]->remote_qkey;
        vt->pend_slot[k] = slot;
        vt->send_refs[slot]++;
    }
    send_slot_unref(vt, slot); /* the claim's hold passes to the queued WRs */
    buf->data = NULL;
    buf->slot = NO_SLOT;
    return 0;
}

static int verbs_flush(struct rdps_transport *t)
{
    struct verbs_transport *vt = to_verbs(t);
    uint32_t n = vt->pend_count;
    if (n == 0)
        return 0;
    if (vt->device_fatal) {
        for (uint32_t i = 0; i < n; i++)
            send_slot_unref(vt, vt->pend_slot[i]);
        vt->pend_count = 0;
        return RDPS_EDEVFATAL;
    }
    /*
     * Signal every signal_every-th WR, and the chain's last one when buffers or
     * queue slots run low, so a sender that stops never leaves the pool stuck
     * behind unsignaled WRs.
     */
    uint32_t room_after = sq_room(vt); /* pend_count is already counted as used */
    bool low = vt->send_free_count < vt->signal_every || room_after < vt->signal_every;
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
    for (uint32_t i = 0; i < posted; i++) {
        uint64_t seq = vt->next_seq + i;
        uint32_t slot = vt->pend_slot[i];
        if (vt->pend_wr[i].send_flags & IBV_SEND_INLINE) {
            /* The data was copied into the WQE: the buffer is free already. */
            send_slot_unref(vt, slot);
            slot = NO_SLOT;
        }
        vt->posted_slot[seq % vt->sq_depth] = slot;
        if (vt->pend_wr[i].send_flags & IBV_SEND_SIGNALED)
            vt->signaled_through = seq + 1;
        vt->stats.tx_datagrams++;
        vt->stats.tx_bytes += vt->pend_sge[i].length;
    }
    vt->next_seq += posted;
    for (uint32_t i = posted; i < n; i++)
        send_slot_unref(vt, vt->pend_slot[i]);
    vt->pend_count = 0;
    if (ret != 0) {
        /* A signaled WR may have been among the unposted ones: signal the next one. */
        vt->unsignaled_run = vt->signal_every;
        return rdps__set_err(rdps__errno_code(ret), "ibv_post_send: %s (%u of %u posted)",
                             strerror(ret), posted, n);
    }
    return 0;
}

/* ---- receive side ---------------------------------------------------------------------- */

static int post_recv_pending(struct verbs_transport *vt)
{
    uint32_t n = vt->recv_pending_count;
    if (n == 0)
        return 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t slot = vt->recv_pending[i];
        struct ibv_sge *sge = &vt->recv_sge[i];
        struct ibv_recv_wr *wr = &vt->recv_wr[i];
        sge->addr = (uint64_t)(uintptr_t)(vt->recv_mem + (size_t)slot * vt->recv_stride);
        sge->length = vt->info.active_mtu_bytes + RDPS_GRH_BYTES;
        sge->lkey = vt->recv_mr->lkey;
        wr->wr_id = slot;
        wr->sg_list = sge;
        wr->num_sge = 1;
        wr->next = i + 1 < n ? &vt->recv_wr[i + 1] : NULL;
    }
    struct ibv_recv_wr *bad = NULL;
    int ret = ibv_post_recv(vt->info.qp, &vt->recv_wr[0], &bad);
    uint32_t posted = ret == 0 ? n : (uint32_t)(bad - &vt->recv_wr[0]);
    vt->recv_posted += posted;
    /* Keep what was not posted for the next attempt. */
    memmove(vt->recv_pending, vt->recv_pending + posted, (n - posted) * sizeof(uint32_t));
    vt->recv_pending_count = n - posted;
    if (ret != 0)
        return rdps__set_err(rdps__errno_code(ret), "ibv_post_recv: %s", strerror(ret));
    return 0;
}

struct ah_from_wc_arg {
    struct verbs_transport *vt;
    struct ibv_wc *wc;
    struct ibv_grh *grh;
    const uint8_t *src_gid;
};

static void *make_reply_ah(void *user, const void *make_arg)
{
    const struct ah_from_wc_arg *arg = make_arg;
    struct verbs_transport *vt = arg->vt;
    (void)user;
    struct ibv_ah *ah = ibv_create_ah_from_wc(vt->info.pd, arg->wc, arg->grh, vt->info.port_num);
    if (ah != NULL || !(arg->wc->wc_flags & IBV_WC_GRH))
        return ah;
    /*
     * A datagram that arrived through a multicast group carries the group as
     * its destination GID, which is no local GID, so ibv_create_ah_from_wc
     * cannot pick a source GID. Reply from our own GID to the sender's.
     */
    struct ibv_ah_attr attr;
    memset(&attr, 0, sizeof(attr));
    attr.is_global = 1;
    memcpy(attr.grh.dgid.raw, arg->src_gid, 16);
    attr.grh.sgid_index = vt->info.gid_index;
    attr.grh.hop_limit = 64;
    attr.sl = arg->wc->sl;
    attr.dlid = arg->wc->slid;
    attr.port_num = vt->info.port_num;
    return ibv_create_ah(vt->info.pd, &attr);
}

static void free_reply_ah(void *user, void *ah)
{
    struct verbs_transport *vt = user;
    uint64_t pending_until = vt->next_seq + vt->pend_count;
    if (vt->done_seq >= pending_until && vt->pend_count == 0) {
        ibv_destroy_ah(ah);
        return;
    }
    /* Queued or in-flight WRs may still name this AH; destroy it once they complete. */
    if (vt->graveyard_count == vt->graveyard_cap) {
        ibv_destroy_ah(vt->graveyard[0].ah);
        memmove(vt->graveyard, vt->graveyard + 1,
                (vt->graveyard_count - 1) * sizeof(*vt->graveyard));
        vt->graveyard_count--;
    }
    vt->graveyard[vt->graveyard_count].ah = ah;
    vt->graveyard[vt->graveyard_count].free_after_seq = pending_until;
    vt->graveyard_count++;
}

/*
 * Moves every waiting receive completion into the ring. Draining the CQ
 * completely is what makes an empty receive queue visible: if nothing posted
 * is left after the drain, the device had no buffer for the next datagram.
 */
static int drain_recv_cq(struct verbs_transport *vt)
{
    uint32_t drained = 0;
    while (vt->wc_count < vt->recv_slots) {
        uint32_t tail = (vt->wc_head + vt->wc_count) % vt->recv_slots;
        uint32_t room = vt->recv_slots - tail; /* contiguous entries up to the ring's end */
        if (room > vt->recv_slots - vt->wc_count)
            room = vt->recv_slots - vt->wc_count;
        if (room > POLL_BATCH)
            room = POLL_BATCH;
        int n = ibv_poll_cq(vt->recv_cq, (int)room, &vt->wc_ring[tail]);
        if (n < 0)
            return RDPS_EIO;
        vt->wc_count += (uint32_t)n;
        drained += (uint32_t)n;
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

static int verbs_poll(struct rdps_transport *t, struct rdps_rx_datagram *rx, int max)
{
    struct verbs_transport *vt = to_verbs(t);
    int got = 0;

    if (vt->device_fatal)
        return RDPS_EDEVFATAL;
    int err = reap_send(vt);
    if (err == 0)
        err = drain_recv_cq(vt);
    if (err < 0)
        return err;
    while (got < max && vt->wc_count > 0) {
        struct ibv_wc *w = &vt->wc_ring[vt->wc_head];
        vt->wc_head = (vt->wc_head + 1) % vt->recv_slots;
        vt->wc_count--;
        uint32_t slot = (uint32_t)w->wr_id;
        uint8_t *buf = vt->recv_mem + (size_t)slot * vt->recv_stride;
        if (w->status != IBV_WC_SUCCESS || w->byte_len < RDPS_GRH_BYTES) {
            vt->stats.rx_completion_errors++;
            if (w->status != IBV_WC_WR_FLUSH_ERR)
                vt->recv_pending[vt->recv_pending_count++] = slot;
            continue;
        }
        struct rdps_rx_datagram *d = &rx[got++];
        d->data = buf + RDPS_GRH_BYTES;
        d->len = w->byte_len - RDPS_GRH_BYTES;
        d->src_qpn = w->src_qp;
        d->slot = slot;
        if (w->wc_flags & IBV_WC_GRH) {
            rdps__grh_source_gid(buf, d->src_gid);
            d->has_src_gid = true;
        } else {
            /* IB without a GRH: the source LID identifies the sender. */
            memset(d->src_gid, 0, sizeof(d->src_gid));
            d->src_gid[0] = 0xfe; /* not a valid GID prefix: no clash with real GIDs */
            d->src_gid[14] = (uint8_t)(w->slid >> 8);
            d->src_gid[15] = (uint8_t)w->slid;
            d->has_src_gid = false;
        }
        struct ah_from_wc_arg arg = {vt, w, (struct ibv_grh *)buf, d->src_gid};
        d->reply = rdps__reply_cache_get(&vt->replies, d->src_gid, w->src_qp, &arg);
        vt->stats.rx_datagrams++;
        vt->stats.rx_bytes += d->len;
    }
    if (vt->recv_pending_count > 0 && vt->recv_posted < vt->recv_batch)
        (void)post_recv_pending(vt);
    return got;
}

static void verbs_rx_release(struct rdps_transport *t, struct rdps_rx_datagram *rx, int count)
{
    struct verbs_transport *vt = to_verbs(t);
    for (int i = 0; i < count; i++) {
        if (rx[i].slot >= vt->recv_slots || vt->recv_pending_count >= vt->recv_slots)
            continue;
        vt->recv_pending[vt->recv_pending_count++] = rx[i].slot;
        rx[i].slot = NO_SLOT;
        rx[i].data = NULL;
    }
    if (vt->recv_pending_count >= vt->recv_batch || vt->recv_posted < vt->recv_batch) {
        if (post_recv_pending(vt) < 0)
            RDPS_LOG_WRN("re-posting receive buffers: %s", rdps_last_error_message());
    }
}

/* ---- events ---------------------------------------------------------------------------- */

static void push_event(struct verbs_transport *vt, enum rdps_transport_event_type type)
{
    if (vt->event_count == EVENT_RING_SIZE) {
        /* Keep the newest: the latest port state is what matters. */
        vt->event_head = (vt->event_head + 1) % EVENT_RING_SIZE;
        vt->event_count--;
    }
    vt->events[(vt->event_head + vt->event_count) % EVENT_RING_SIZE] = type;
    vt->event_count++;
}

static void drain_async_events(struct verbs_transport *vt)
{
    struct ibv_async_event ev;
    while (ibv_get_async_event(vt->info.verbs, &ev) == 0) {
        vt->stats.async_events++;
        switch (ev.event_type) {
        case IBV_EVENT_PORT_ACTIVE:
            if (ev.element.port_num == vt->info.port_num)
                push_event(vt, RDPS_TRANSPORT_EV_PORT_ACTIVE);
            break;
        case IBV_EVENT_PORT_ERR:
            if (ev.element.port_num == vt->info.port_num)
                push_event(vt, RDPS_TRANSPORT_EV_PORT_DOWN);
            break;
        case IBV_EVENT_DEVICE_FATAL:
            vt->device_fatal = true;
            push_event(vt, RDPS_TRANSPORT_EV_DEVICE_FATAL);
            RDPS_LOG_ERR("%s: device fatal error, transport unusable", vt->info.device_name);
            break;
        default:
            push_event(vt, RDPS_TRANSPORT_EV_OTHER);
            RDPS_LOG_INF("%s: async event %s", vt->info.device_name,
                         ibv_event_type_str(ev.event_type));
            break;
        }
        ibv_ack_async_event(&ev);
    }
}

static int verbs_event_fd(struct rdps_transport *t)
{
    return to_verbs(t)->epoll_fd;
}

static void ack_cq_events(struct verbs_transport *vt)
{
    struct ibv_cq *cq;
    void *cq_ctx;
    unsigned send_events = 0, recv_events = 0;

    /* The channel fd is non-blocking: this stops at EAGAIN. */
    while (ibv_get_cq_event(vt->channel, &cq, &cq_ctx) == 0) {
        if (cq == vt->send_cq)
            send_events++;
        else
            recv_events++;
    }
    if (send_events > 0)
        ibv_ack_cq_events(vt->send_cq, send_events);
    if (recv_events > 0)
        ibv_ack_cq_events(vt->recv_cq, recv_events);
}

/*
 * Re-arms after the fd fired, with as few system calls as possible (on rxe
 * every request for notification is one): at most one CQ event is read per
 * call (the epoll fd is level-triggered, so a second pending event simply
 * wakes the caller again); a CQ is re-armed only after its notification was
 * consumed; the send CQ only while a sender may wait for buffers; async events
 * are read when the wakeup was not a CQ event.
 */
static int verbs_arm(struct rdps_transport *t)
{
    struct verbs_transport *vt = to_verbs(t);
    struct ibv_cq *cq;
    void *cq_ctx;

    if (ibv_get_cq_event(vt->channel, &cq, &cq_ctx) == 0) {
        ibv_ack_cq_events(cq, 1);
        if (cq == vt->send_cq)
            vt->send_notify_armed = false;
        else
            vt->recv_notify_armed = false;
    } else {
        drain_async_events(vt);
    }
    if (!vt->recv_notify_armed) {
        if (ibv_req_notify_cq(vt->recv_cq, 0) != 0)
            return rdps__set_err(RDPS_EIO, "ibv_req_notify_cq: %s", strerror(errno));
        vt->recv_notify_armed = true;
    }
    /* Only a sender short of buffers or queue slots waits for send completions. */
    bool sender_may_wait = vt->send_free_count < vt->signal_every || sq_room(vt) < vt->signal_every;
    if (!vt->send_notify_armed && sender_may_wait) {
        if (ibv_req_notify_cq(vt->send_cq, 0) != 0)
            return rdps__set_err(RDPS_EIO, "ibv_req_notify_cq: %s", strerror(errno));
        vt->send_notify_armed = true;
    }
    return (int)vt->event_count;
}

static int verbs_next_event(struct rdps_transport *t, enum rdps_transport_event_type *type)
{
    struct verbs_transport *vt = to_verbs(t);
    if (vt->event_count == 0)
        drain_async_events(vt);
    if (vt->event_count == 0)
        return 0;
    *type = vt->events[vt->event_head];
    vt->event_head = (vt->event_head + 1) % EVENT_RING_SIZE;
    vt->event_count--;
    return 1;
}

static uint32_t verbs_max_payload(struct rdps_transport *t)
{
    return to_verbs(t)->info.max_payload;
}

static void verbs_get_stats(const struct rdps_transport *t, struct rdps_transport_stats *out)
{
    const struct verbs_transport *vt = (const struct verbs_transport *)t;
    *out = vt->stats;
    out->tx_outstanding = (vt->next_seq - vt->done_seq) + vt->pend_count;
}

/* ---- create / destroy ------------------------------------------------------------------ */

static void verbs_destroy(struct rdps_transport *t)
{
    struct verbs_transport *vt = to_verbs(t);
    if (vt == NULL)
        return;
    if (vt->info.qp != NULL)
        ibv_destroy_qp(vt->info.qp);
    rdps__reply_cache_fini(&vt->replies);
    graveyard_sweep(vt, true);
    if (vt->channel != NULL && vt->send_cq != NULL && vt->recv_cq != NULL)
        ack_cq_events(vt); /* ibv_destroy_cq waits for every CQ event to be acked */
    if (vt->send_cq != NULL)
        ibv_destroy_cq(vt->send_cq);
    if (vt->recv_cq != NULL)
        ibv_destroy_cq(vt->recv_cq);
    if (vt->channel != NULL)
        ibv_destroy_comp_channel(vt->channel);
    if (vt->recv_mr != NULL)
        ibv_dereg_mr(vt->recv_mr);
    if (vt->send_mr != NULL)
        ibv_dereg_mr(vt->send_mr);
    if (vt->info.pd != NULL)
        ibv_dealloc_pd(vt->info.pd);
    if (vt->epoll_fd >= 0)
        close(vt->epoll_fd);
    if (vt->info.verbs != NULL)
        ibv_close_device(vt->info.verbs);
    free(vt->send_mem);
    free(vt->recv_mem);
    free(vt->send_refs);
    free(vt->send_free);
    free(vt->pend_wr);
    free(vt->pend_sge);
    free(vt->pend_slot);
    free(vt->posted_slot);
    free(vt->recv_wr);
    free(vt->recv_sge);
    free(vt->recv_pending);
    free(vt->wc_ring);
    free(vt->graveyard);
    free(vt);
}

static int alloc_arrays(struct verbs_transport *vt)
{
    size_t send_bytes = (size_t)vt->send_slots * vt->send_stride;
    size_t recv_bytes = (size_t)vt->recv_slots * vt->recv_stride;
    if (posix_memalign((void **)&vt->send_mem, 4096, send_bytes) != 0)
        vt->send_mem = NULL;
    if (posix_memalign((void **)&vt->recv_mem, 4096, recv_bytes) != 0)
        vt->recv_mem = NULL;
    vt->send_refs = calloc(vt->send_slots, sizeof(uint32_t));
    vt->send_free = calloc(vt->send_slots, sizeof(uint32_t));
    vt->pend_wr = calloc(vt->sq_depth, sizeof(struct ibv_send_wr));
    vt->pend_sge = calloc(vt->sq_depth, sizeof(struct ibv_sge));
    vt->pend_slot = calloc(vt->sq_depth, sizeof(uint32_t));
    vt->posted_slot = calloc(vt->sq_depth, sizeof(uint32_t));
    vt->recv_wr = calloc(vt->recv_slots, sizeof(struct ibv_recv_wr));
    vt->recv_sge = calloc(vt->recv_slots, sizeof(struct ibv_sge));
    vt->recv_pending = calloc(vt->recv_slots, sizeof(uint32_t));
    vt->wc_ring = calloc(vt->recv_slots, sizeof(struct ibv_wc));
    vt->graveyard_cap = vt->replies.capacity > 0 ? vt->replies.capacity : 1;
    vt->graveyard = calloc(vt->graveyard_cap, sizeof(struct deferred_ah));
    if (vt->send_mem == NULL || vt->recv_mem == NULL || vt->send_refs == NULL ||
        vt->send_free == NULL || vt->pend_wr == NULL || vt->pend_sge == NULL ||
        vt->pend_slot == NULL || vt->posted_slot == NULL || vt->recv_wr == NULL ||
        vt->recv_sge == NULL || vt->recv_pending == NULL || vt->wc_ring == NULL ||
        vt->graveyard == NULL)
        return rdps__set_err(RDPS_ENOMEM, "out of memory for %u send and %u receive buffers",
                             vt->send_slots, vt->recv_slots);
    memset(vt->send_mem, 0, send_bytes);
    memset(vt->recv_mem, 0, recv_bytes);
    for (uint32_t i = 0; i < vt->send_slots; i++)
        vt->send_free[i] = vt->send_slots - 1 - i;
    vt->send_free_count = vt->send_slots;
    for (uint32_t i = 0; i < vt->sq_depth; i++)
        vt->posted_slot[i] = NO_SLOT;
    return 0;
}

static int create_qp(struct verbs_transport *vt, const struct ibv_device_attr *dev_attr,
                     uint32_t want_inline, uint32_t qkey)
{
    struct ibv_qp_init_attr init;
    int err;

    if (vt->sq_depth > (uint32_t)dev_attr->max_qp_wr ||
        vt->recv_slots > (uint32_t)dev_attr->max_qp_wr)
        return rdps__set_err(RDPS_EINVAL, "queue depth (send %u, receive %u) exceeds device max %d",
                             vt->sq_depth, vt->recv_slots, dev_attr->max_qp_wr);
    for (int attempt = 0; attempt < 2; attempt++) {
        memset(&init, 0, sizeof(init));
        init.send_cq = vt->send_cq;
        init.recv_cq = vt->recv_cq;
        init.qp_type = IBV_QPT_UD;
        init.sq_sig_all = 0;
        init.cap.max_send_wr = vt->sq_depth;
        init.cap.max_recv_wr = vt->recv_slots;
        init.cap.max_send_sge = 1;
        init.cap.max_recv_sge = 1;
        init.cap.max_inline_data = attempt == 0 ? want_inline : 0;
        vt->info.qp = ibv_create_qp(vt->info.pd, &init);
        if (vt->info.qp != NULL)
            break;
    }
    if (vt->info.qp == NULL)
        return rdps__set_err(rdps__errno_code(errno), "ibv_create_qp(UD, sq %u, rq %u): %s",
                             vt->sq_depth, vt->recv_slots, strerror(errno));
    /* ibv_create_qp reports the inline size actually granted. */
    vt->info.max_inline = init.cap.max_inline_data;
    vt->info.qpn = vt->info.qp->qp_num;
    vt->info.qkey = qkey;

    struct ibv_qp_attr attr;
    memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_INIT;
    attr.pkey_index = 0;
    attr.port_num = vt->info.port_num;
    attr.qkey = qkey;
    err = ibv_modify_qp(vt->info.qp, &attr,
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

static uint32_t or_default(uint32_t v, uint32_t d)
{
    return v != 0 ? v : d;
}

int rdps__verbs_transport_create(const struct rdps_verbs_config *cfg_in,
                                 struct rdps_transport **out)
{
    static const struct rdps_verbs_config zero_cfg;
    const struct rdps_verbs_config *cfg = cfg_in != NULL ? cfg_in : &zero_cfg;
    struct verbs_transport *vt = NULL;
    struct ibv_port_attr port_attr;
    struct ibv_device_attr dev_attr;
    char dev_name[64];

    memset(&port_attr, 0, sizeof(port_attr));
    const char *want_dev = cfg->device_name;
    uint8_t want_port = cfg->port_num;
    int err;

    if (out == NULL)
        return rdps__set_err(RDPS_EINVAL, "verbs transport: NULL out pointer");
    *out = NULL;
    if (cfg->bind_addr != NULL) {
        uint8_t addr_port = 0;
        err = find_port_by_addr(cfg->bind_addr, dev_name, sizeof(dev_name), &addr_port);
        if (err < 0)
            goto err;
        if (want_dev != NULL && strcmp(want_dev, dev_name) != 0) {
            err = rdps__set_err(RDPS_EINVAL, "bind address is on %s, not on the requested %s",
                                dev_name, want_dev);
            goto err;
        }
        if (want_port != 0 && want_port != addr_port) {
            err = rdps__set_err(RDPS_EINVAL, "bind address is on port %u, not on requested %u",
                                addr_port, want_port);
            goto err;
        }
        want_dev = dev_name;
        want_port = addr_port;
    }

    vt = calloc(1, sizeof(*vt));
    if (vt == NULL) {
        err = rdps__set_err(RDPS_ENOMEM, "out of memory");
        goto err;
    }
    vt->base.ops = &verbs_ops;
    vt->epoll_fd = -1;
    err = open_device_port(want_dev, want_port, &vt->info.verbs, &vt->info.port_num, &port_attr);
    if (err < 0)
        goto err;
    snprintf(vt->info.device_name, sizeof(vt->info.device_name), "%s",
             ibv_get_device_name(vt->info.verbs->device));
    if (ibv_query_device(vt->info.verbs, &dev_attr) != 0) {
        err = rdps__set_err(rdps__errno_code(errno), "ibv_query_device: %s", strerror(errno));
        goto err;
    }
    vt->info.link_layer = port_attr.link_layer;
    vt->info.active_mtu_bytes = mtu_bytes(port_attr.active_mtu);
    /* A UD datagram carries up to one path MTU; nothing beyond the port's active MTU. */
    vt->info.max_payload = vt->info.active_mtu_bytes;
    err = choose_gid(vt, cfg, &port_attr);
    if (err < 0)
        goto err;
    if (cfg->bind_addr != NULL) {
        memcpy(&vt->info.bound_addr, cfg->bind_addr, sockaddr_len(cfg->bind_addr));
        vt->info.has_bound_addr = true;
    } else if (vt->info.link_layer == IBV_LINK_LAYER_ETHERNET && gid_is_v4_mapped(&vt->info.gid)) {
        struct sockaddr_in *sin = (struct sockaddr_in *)&vt->info.bound_addr;
        sin->sin_family = AF_INET;
        memcpy(&sin->sin_addr, vt->info.gid.raw + 12, 4);
        vt->info.has_bound_addr = true;
    }

    vt->send_slots = or_default(cfg->send_slots, 256);
    vt->recv_slots = or_default(cfg->recv_slots, 512);
    vt->signal_every = or_default(cfg->signal_every, 16);
    vt->sq_depth = or_default(cfg->sq_depth, vt->send_slots);
    if (vt->sq_depth < 2 * vt->signal_every)
        vt->signal_every = vt->sq_depth / 2 > 0 ? vt->sq_depth / 2 : 1;
    if (vt->sq_depth < 2)
        vt->sq_depth = 2;
    vt->recv_batch = or_default(cfg->recv_batch, 16);
    if (vt->recv_batch > vt->recv_slots / 4)
        vt->recv_batch = vt->recv_slots / 4 > 0 ? vt->recv_slots / 4 : 1;
    vt->send_stride = round_up(vt->info.max_payload, BUF_ALIGN);
    vt->recv_stride = round_up(vt->info.active_mtu_bytes + RDPS_GRH_BYTES, BUF_ALIGN);
    uint32_t qkey = or_default(cfg->qkey, RDPS_DEFAULT_QKEY);

    struct rdps_reply_cache_ops cache_ops = {make_reply_ah, free_reply_ah, vt};
    err = rdps__reply_cache_init(&vt->replies, or_default(cfg->reply_cache_entries, 256), qkey,
                                 &cache_ops);
    if (err < 0)
        goto err;
    err = alloc_arrays(vt);
    if (err < 0)
        goto err;

    vt->info.pd = ibv_alloc_pd(vt->info.verbs);
    if (vt->info.pd == NULL) {
        err = rdps__set_err(rdps__errno_code(errno), "ibv_alloc_pd: %s", strerror(errno));
        goto err;
    }
    vt->send_mr = ibv_reg_mr(vt->info.pd, vt->send_mem, (size_t)vt->send_slots * vt->send_stride,
                             IBV_ACCESS_LOCAL_WRITE);
    vt->recv_mr = vt->send_mr == NULL ? NULL
                                      : ibv_reg_mr(vt->info.pd, vt->recv_mem,
                                                   (size_t)vt->recv_slots * vt->recv_stride,
                                                   IBV_ACCESS_LOCAL_WRITE);
    if (vt->send_mr == NULL || vt->recv_mr == NULL) {
        err = rdps__set_err(rdps__errno_code(errno), "ibv_reg_mr: %s (check ulimit -l)",
                            strerror(errno));
        goto err;
    }
    vt->channel = ibv_create_comp_channel(vt->info.verbs);
    if (vt->channel == NULL) {
        err =
            rdps__set_err(rdps__errno_code(errno), "ibv_create_comp_channel: %s", strerror(errno));
        goto err;
    }
    /* Non-blocking before anything can wait on them (the unwind path drains the channel). */
    err = set_nonblocking(vt->channel->fd);
    if (err == 0)
        err = set_nonblocking(vt->info.verbs->async_fd);
    if (err < 0) {
        err = rdps__set_err(err, "making event fds non-blocking: %s", rdps_strerror(err));
        goto err;
    }
    uint32_t send_cqe = or_default(cfg->cq_entries, vt->sq_depth);
    uint32_t recv_cqe = or_default(cfg->cq_entries, vt->recv_slots);
    if (send_cqe < vt->sq_depth)
        send_cqe = vt->sq_depth;
    if (recv_cqe < vt->recv_slots)
        recv_cqe = vt->recv_slots;
    vt->send_cq = ibv_create_cq(vt->info.verbs, (int)send_cqe, vt, vt->channel, 0);
    vt->recv_cq = vt->send_cq == NULL
                      ? NULL
                      : ibv_create_cq(vt->info.verbs, (int)recv_cqe, vt, vt->channel, 0);
    if (vt->send_cq == NULL || vt->recv_cq == NULL) {
        err = rdps__set_err(rdps__errno_code(errno), "ibv_create_cq(%u/%u entries): %s", send_cqe,
                            recv_cqe, strerror(errno));
        goto err;
    }
    err = create_qp(vt, &dev_attr, or_default(cfg->max_inline, 128), qkey);
    if (err < 0)
        goto err;

    for (uint32_t i = 0; i < vt->recv_slots; i++)
        vt->recv_pending[i] = i;
    vt->recv_pending_count = vt->recv_slots;
    err = post_recv_pending(vt);
    if (err < 0)
        goto err;

    vt->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (vt->epoll_fd < 0) {
        err = rdps__set_err(rdps__errno_code(errno), "epoll_create1: %s", strerror(errno));
        goto err;
    }
    int fds[2] = {vt->channel->fd, vt->info.verbs->async_fd};
    for (int i = 0; i < 2; i++) {
        struct epoll_event ev = {.events = EPOLLIN, .data.fd = fds[i]};
        if (epoll_ctl(vt->epoll_fd, EPOLL_CTL_ADD, fds[i], &ev) != 0) {
            err = rdps__set_err(rdps__errno_code(errno), "epoll_ctl: %s", strerror(errno));
            goto err;
        }
    }
    err = verbs_arm(&vt->base);
    if (err < 0)
        goto err;

    RDPS_LOG_INF("verbs transport on %s port %u: qpn 0x%x, mtu %u, gid index %u, inline %u",
                 vt->info.device_name, vt->info.port_num, vt->info.qpn, vt->info.active_mtu_bytes,
                 vt->info.gid_index, vt->info.max_inline);
    *out = &vt->base;
    return 0;
err:
    verbs_destroy(vt == NULL ? NULL : &vt->base);
    return rdps__prepend_err(err, "verbs transport: ");
}

int rdps__verbs_transport_info(struct rdps_transport *t, struct rdps_verbs_info *out)
{
    /* Look through interceptors: addr/ gets the device behind a loss generator too. */
    for (struct rdps_transport *inner; (inner = rdps__loss_transport_inner(t)) != NULL;)
        t = inner;
    if (t == NULL || out == NULL || t->ops != &verbs_ops)
        return rdps__set_err(RDPS_EINVAL, "not a verbs transport");
    *out = to_verbs(t)->info;
    return 0;
}

static const struct rdps_transport_ops verbs_ops = {
    .name = "verbs-ud",
    .max_payload = verbs_max_payload,
    .claim = verbs_claim,
    .abort = verbs_abort,
    .submit = verbs_submit,
    .flush = verbs_flush,
    .poll = verbs_poll,
    .rx_release = verbs_rx_release,
    .event_fd = verbs_event_fd,
    .arm = verbs_arm,
    .next_event = verbs_next_event,
    .get_stats = verbs_get_stats,
    .destroy = verbs_destroy,
};
