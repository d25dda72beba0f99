/* SPDX-License-Identifier: BSD-2-Clause */
/* verbs_transport.c - verbs UD transport: the ops table, create / destroy (PD, MRs, CQs + channel,
 * the shared QP, the epoll fd) and the accessors addr/ and tools use. */
#include "verbs_internal.h"

#include "rdps_error.h"
#include "rdps_random.h"
#include "rdps_log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

static const struct rdps_transport_ops verbs_ops;

bool rdps__verbs_is_verbs(const struct rdps_transport *t)
{
    return t != NULL && t->ops == &verbs_ops;
}

static uint32_t round_up(uint32_t v, uint32_t a)
{
    return (v + a - 1) / a * a;
}

static uint32_t or_default(uint32_t v, uint32_t d)
{
    return v != 0 ? v : d;
}

static int set_nonblocking(int fd)
{
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
        return rdps__errno_code(errno);
    return 0;
}

static void destroy_ah(void *ah)
{
    ibv_destroy_ah(ah);
}

static uint32_t verbs_max_payload(struct rdps_transport *t)
{
    return to_verbs(t)->info.max_payload;
}

static void verbs_get_stats(const struct rdps_transport *t, struct rdps_transport_stats *out)
{
    const struct verbs_transport *vt = (const struct verbs_transport *)t;
    *out = vt->stats;
    out->tx_outstanding = (vt->next_seq - vt->base.tx.seen) + vt->pend_count;
    out->reply_ah_created = vt->replies.created;
    out->reply_evictions = vt->replies.evictions;
    out->reply_refused = vt->replies.refused;
    out->ah_retiring = vt->retired.count;
}

static void verbs_destroy(struct rdps_transport *t)
{
    struct verbs_transport *vt = to_verbs(t);
    if (vt == NULL)
        return;
    if (vt->info.qp != NULL)
        ibv_destroy_qp(vt->info.qp);
    /* No send can name an AH once the QP is gone: every retirement destroys at once. */
    rdps__ah_retire_sweep(&vt->retired, UINT64_MAX);
    rdps__verbs_pinned_fini(vt);
    vt->pend_count = 0;
    vt->base.tx.seen = vt->next_seq;
    rdps__reply_cache_fini(&vt->replies);
    rdps__ah_retire_fini(&vt->retired);
    rdps__verbs_mem_fini(vt); /* no send can read the regions once the QP is gone */
    if (vt->channel != NULL && vt->send_cq != NULL && vt->recv_cq != NULL)
        rdps__verbs_ack_cq_events(vt); /* ibv_destroy_cq waits for every CQ event to be acked */
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
    free(vt->gather_sge);
    free(vt->pend_slot);
    free(vt->pend_mem);
    free(vt->pend_cookie);
    free(vt->posted_slot);
    free(vt->posted_mem);
    free(vt->posted_cookie);
    free(vt->recv_wr);
    free(vt->recv_sge);
    free(vt->recv_pending);
    free(vt->rx_meta);
    free(vt->wc_ring);
    free(vt->mcast);
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
    vt->gather_sge = calloc((size_t)vt->sq_depth * 2, sizeof(struct ibv_sge));
    vt->pend_slot = calloc(vt->sq_depth, sizeof(uint32_t));
    vt->posted_slot = calloc(vt->sq_depth, sizeof(uint32_t));
    vt->pend_mem = calloc(vt->sq_depth, sizeof(*vt->pend_mem));
    vt->pend_cookie = calloc(vt->sq_depth, sizeof(*vt->pend_cookie));
    vt->posted_mem = calloc(vt->sq_depth, sizeof(*vt->posted_mem));
    vt->posted_cookie = calloc(vt->sq_depth, sizeof(*vt->posted_cookie));
    vt->recv_wr = calloc(vt->recv_slots, sizeof(struct ibv_recv_wr));
    vt->recv_sge = calloc(vt->recv_slots, sizeof(struct ibv_sge));
    vt->recv_pending = calloc(vt->recv_slots, sizeof(uint32_t));
    vt->rx_meta = calloc(vt->recv_slots, sizeof(struct verbs_rx_meta));
    vt->wc_ring = calloc(vt->recv_slots, sizeof(struct ibv_wc));
    if (vt->send_mem == NULL || vt->recv_mem == NULL || vt->send_refs == NULL ||
        vt->send_free == NULL || vt->pend_wr == NULL || vt->pend_sge == NULL ||
        vt->gather_sge == NULL || vt->pend_slot == NULL || vt->posted_slot == NULL ||
        vt->pend_mem == NULL || vt->pend_cookie == NULL || vt->posted_mem == NULL ||
        vt->posted_cookie == NULL || vt->recv_wr == NULL || vt->recv_sge == NULL ||
        vt->recv_pending == NULL || vt->rx_meta == NULL || vt->wc_ring == NULL)
        return rdps__set_err(RDPS_ENOMEM, "out of memory for %u send and %u receive buffers",
                             vt->send_slots, vt->recv_slots);
    memset(vt->send_mem, 0, send_bytes);
    memset(vt->recv_mem, 0, recv_bytes);
    for (uint32_t i = 0; i < vt->send_slots; i++)
        vt->send_free[i] = vt->send_slots - 1 - i;
    vt->send_free_count = vt->send_slots;
    for (uint32_t i = 0; i < vt->sq_depth; i++)
        vt->posted_slot[i] = VERBS_NO_SLOT;
    return 0;
}

static void size_pools(struct verbs_transport *vt, const struct rdps_verbs_config *cfg)
{
    vt->send_slots = or_default(cfg->send_slots, 256);
    vt->recv_slots = or_default(cfg->recv_slots, 512);
    vt->signal_every = or_default(cfg->signal_every, 16);
    vt->sq_depth = or_default(cfg->sq_depth, vt->send_slots);
    if (vt->sq_depth < 2 * vt->signal_every)
        vt->signal_every = vt->sq_depth / 2 > 0 ? vt->sq_depth / 2 : 1;
    if (vt->sq_depth < 2)
        vt->sq_depth = 2;
    vt->low_free_mark = vt->signal_every;
    vt->recv_batch = or_default(cfg->recv_batch, 16);
    if (vt->recv_batch > vt->recv_slots / 4)
        vt->recv_batch = vt->recv_slots / 4 > 0 ? vt->recv_slots / 4 : 1;
    vt->send_stride = round_up(vt->info.max_payload, VERBS_BUF_ALIGN);
    vt->recv_stride = round_up(vt->info.active_mtu_bytes + RDPS_GRH_BYTES, VERBS_BUF_ALIGN);
}

/* The work-request fields that never change, set once so the data path writes only the rest. */
static void prepare_wrs(struct verbs_transport *vt)
{
    for (uint32_t k = 0; k < vt->sq_depth; k++) {
        vt->pend_wr[k].sg_list = &vt->pend_sge[k];
        vt->pend_wr[k].num_sge = 1;
        vt->pend_wr[k].opcode = IBV_WR_SEND;
        vt->pend_sge[k].lkey = vt->send_mr->lkey;
    }
    for (uint32_t i = 0; i < vt->recv_slots; i++) {
        vt->recv_wr[i].sg_list = &vt->recv_sge[i];
        vt->recv_wr[i].num_sge = 1;
        vt->recv_sge[i].length = vt->info.active_mtu_bytes + RDPS_GRH_BYTES;
        vt->recv_sge[i].lkey = vt->recv_mr->lkey;
    }
}

/* PD, registered pools, completion channel and CQs (the QP comes after). */
static int create_resources(struct verbs_transport *vt, const struct rdps_verbs_config *cfg)
{
    vt->info.pd = ibv_alloc_pd(vt->info.verbs);
    if (vt->info.pd == NULL)
        return rdps__set_err(rdps__errno_code(errno), "ibv_alloc_pd: %s", strerror(errno));
    vt->send_mr = ibv_reg_mr(vt->info.pd, vt->send_mem, (size_t)vt->send_slots * vt->send_stride,
                             IBV_ACCESS_LOCAL_WRITE);
    vt->recv_mr = vt->send_mr == NULL ? NULL
                                      : ibv_reg_mr(vt->info.pd, vt->recv_mem,
                                                   (size_t)vt->recv_slots * vt->recv_stride,
                                                   IBV_ACCESS_LOCAL_WRITE);
    if (vt->send_mr == NULL || vt->recv_mr == NULL)
        return rdps__set_err(rdps__errno_code(errno), "ibv_reg_mr: %s (check ulimit -l)",
                             strerror(errno));
    prepare_wrs(vt);
    vt->channel = ibv_create_comp_channel(vt->info.verbs);
    if (vt->channel == NULL)
        return rdps__set_err(rdps__errno_code(errno), "ibv_create_comp_channel: %s",
                             strerror(errno));
    /* Non-blocking before anything can wait on them (the unwind path drains the channel). */
    int err = set_nonblocking(vt->channel->fd);
    if (err == 0)
        err = set_nonblocking(vt->info.verbs->async_fd);
    if (err < 0)
        return rdps__set_err(err, "making event fds non-blocking: %s", rdps_strerror(err));
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
    if (vt->send_cq == NULL || vt->recv_cq == NULL)
        return rdps__set_err(rdps__errno_code(errno), "ibv_create_cq(%u/%u entries): %s", send_cqe,
                             recv_cqe, strerror(errno));
    return 0;
}

/* One level-triggered fd for event loops: the completion channel and the async event fd. */
static int create_epoll(struct verbs_transport *vt)
{
    vt->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (vt->epoll_fd < 0)
        return rdps__set_err(rdps__errno_code(errno), "epoll_create1: %s", strerror(errno));
    int fds[2] = {vt->channel->fd, vt->info.verbs->async_fd};
    for (int i = 0; i < 2; i++) {
        struct epoll_event ev = {.events = EPOLLIN, .data.fd = fds[i]};
        if (epoll_ctl(vt->epoll_fd, EPOLL_CTL_ADD, fds[i], &ev) != 0)
            return rdps__set_err(rdps__errno_code(errno), "epoll_ctl: %s", strerror(errno));
    }
    return 0;
}

int rdps__verbs_transport_create(const struct rdps_verbs_config *cfg_in,
                                 struct rdps_transport **out)
{
    static const struct rdps_verbs_config zero_cfg;
    const struct rdps_verbs_config *cfg = cfg_in != NULL ? cfg_in : &zero_cfg;
    struct verbs_transport *vt = NULL;
    struct ibv_device_attr dev_attr;
    int err;

    if (out == NULL)
        return rdps__set_err(RDPS_EINVAL, "verbs transport: NULL out pointer");
    *out = NULL;
    vt = calloc(1, sizeof(*vt));
    if (vt == NULL) {
        err = rdps__set_err(RDPS_ENOMEM, "out of memory");
        goto err;
    }
    vt->base.ops = &verbs_ops;
    vt->epoll_fd = -1;
    err = rdps__verbs_open_port(vt, cfg, &dev_attr);
    if (err < 0)
        goto err;
    size_pools(vt, cfg);
    vt->info.qkey = or_default(cfg->qkey, RDPS_DEFAULT_QKEY);

    uint32_t reply_entries = or_default(cfg->reply_cache_entries, 256);
    struct rdps_reply_cache_ops cache_ops;
    rdps__verbs_reply_cache_ops(vt, &cache_ops);
    err = rdps__reply_cache_init(&vt->replies, reply_entries, vt->info.qkey, rdps__random_u64(),
                                 &cache_ops);
    /* Evicted AHs wait for in-flight sends; as many as the cache holds is plenty. */
    if (err == 0)
        err = rdps__ah_retire_init(&vt->retired, reply_entries, destroy_ah);
    if (err == 0)
        err = alloc_arrays(vt);
    if (err == 0)
        err = create_resources(vt, cfg);
    if (err == 0)
        err = rdps__verbs_create_qp(vt, &dev_attr, or_default(cfg->max_inline, 128));
    if (err < 0)
        goto err;

    for (uint32_t i = 0; i < vt->recv_slots; i++)
        vt->recv_pending[i] = i;
    vt->recv_pending_count = vt->recv_slots;
    err = rdps__verbs_post_recv_pending(vt);
    if (err == 0)
        err = create_epoll(vt);
    if (err == 0)
        err = rdps__verbs_arm(&vt->base);
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
    t = rdps__transport_innermost(t);
    if (!rdps__verbs_is_verbs(t) || out == NULL)
        return rdps__set_err(RDPS_EINVAL, "not a verbs transport");
    *out = to_verbs(t)->info;
    return 0;
}

/* What a receiver reads off our datagrams (rdps__rx_fill_source): the GRH's source GID, which
 * is the GID at our gid_index every AH of this QP sends from (on RoCE v2 over IPv4 the mapped
 * IPv4 source address, the same bytes), or without a GRH the work completion's slid. */
static int verbs_self_source(struct rdps_transport *t, const struct rdps_dest *dest,
                             struct rdps_source *out)
{
    struct verbs_transport *vt = to_verbs(t);
    memset(out, 0, sizeof(*out));
    out->qpn = vt->info.qpn;
    if (dest != NULL && dest->no_grh) {
        out->lid = (uint16_t)(vt->info.lid | dest->src_path_bits);
    } else {
        memcpy(out->gid, vt->info.gid.raw, sizeof(out->gid));
        out->has_gid = 1;
    }
    return 0;
}

static const struct rdps_transport_ops verbs_ops = {
    .name = "verbs-ud",
    .max_payload = verbs_max_payload,
    .claim = rdps__verbs_claim,
    .abort = rdps__verbs_abort,
    .submit = rdps__verbs_submit,
    .flush = rdps__verbs_flush,
    .poll = rdps__verbs_poll,
    .rx_release = rdps__verbs_rx_release,
    .reply_dest = rdps__verbs_reply_dest,
    .source_dest = rdps__verbs_source_dest,
    .dest_acquire = rdps__verbs_dest_acquire,
    .dest_release = rdps__verbs_dest_release,
    .send_room = rdps__verbs_send_room,
    .mem_register = rdps__verbs_mem_register,
    .mem_deregister = rdps__verbs_mem_deregister,
    .submit_mem = rdps__verbs_submit_mem,
    .submit_gather = rdps__verbs_submit_gather,
    .event_fd = rdps__verbs_event_fd,
    .arm = rdps__verbs_arm,
    .next_event = rdps__verbs_next_event,
    .get_stats = verbs_get_stats,
    .destroy = verbs_destroy,
    .self_source = verbs_self_source,
};
