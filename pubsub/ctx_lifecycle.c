/* SPDX-License-Identifier: BSD-2-Clause */
/* ctx_lifecycle.c - an rdps_ctx's creation over its transport (verbs, loopback, local device, the
 * loss generator), its destruction, and the handover of a ctx between threads. */
#include "ctx_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "abi.h"
#include "rdps_clock.h"
#include "rdps_error.h"
#include "rdps_random.h"
#include "rdps_log.h"
#include "rdps_local.h"
#include "rdps_loopback.h"
#include "rdps_loss.h"
#include "rdps_verbs_transport.h"

/* ---- creation ---- */

static int add_epoll_fd(rdps_ctx_t *ctx, int fd)
{
    if (fd < 0)
        return 0;
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
    if (epoll_ctl(ctx->epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0)
        return rdps__set_err(rdps__errno_code(errno), "epoll_ctl(ADD %d): %s", fd, strerror(errno));
    return 0;
}

static void ctx_free(rdps_ctx_t *ctx);

/* rdps__ctx_create_over's work: *out is the object (its handle in ctx->handle). */
static int ctx_create_over(const rdps_config *cfg, struct rdps_transport *transport,
                           const struct rdps_membership_ops *ops, void *member_impl,
                           rdps_ctx_t **out)
{
    rdps_ctx_t *ctx = calloc(1, sizeof(*ctx));
    rdps_config filled = *cfg;
    int rc;

    rdps__config_zero_defaults(&filled); /* also for contexts over a test's transport */
    cfg = &filled;
    if (ctx == NULL)
        return rdps__set_err(RDPS_ENOMEM, "rdps_ctx_create: out of memory");
    ctx->cfg = *cfg;
    ctx->epoll_fd = -1;
    ctx->wake_fd = -1;
    rc = rdps__config_validate(cfg, &ctx->range, &ctx->control_group);
    if (rc < 0)
        goto err;
    rdps__topic_table_init(&ctx->topics, &ctx->range, ctx->control_group);
    /* The caller's strings need not outlive this call. */
    if (cfg->device) {
        snprintf(ctx->device, sizeof(ctx->device), "%s", cfg->device);
        ctx->cfg.device = ctx->device;
    }
    if (cfg->bind_ip) {
        snprintf(ctx->bind_ip, sizeof(ctx->bind_ip), "%s", cfg->bind_ip);
        ctx->cfg.bind_ip = ctx->bind_ip;
        struct in_addr in;
        if (inet_pton(AF_INET, cfg->bind_ip, &in) == 1)
            ctx->self_host = ntohl(in.s_addr);
    }
    ctx->cfg.group_range = NULL;
    ctx->cfg.control_group = NULL;
    /* Seeds parsed now (the caller's string need not outlive this call); started at first poll. */
    if ((rc = rdps__peers_parse_config(cfg, ctx->seeds, &ctx->nseeds)) < 0)
        goto err;
    ctx->cfg.peers = NULL;
    ctx->peers_deadline_ns = UINT64_MAX;
    ctx->topics_deadline_ns = UINT64_MAX;

    /* Authentication wraps every other layer: what it drops reaches nothing, not even the
     * loss generator, and what it sends is sealed last. The key is not kept in ctx->cfg. */
    if ((rc = rdps__ctx_wrap_auth(cfg, &transport)) < 0)
        goto err;
    ctx->cfg.domain_key = NULL;
    ctx->cfg.domain_key_file = NULL;
    ctx->transport = transport;
    ctx->tx = &rdps__transport_innermost(transport)->tx;
    ctx->batch_look_ns = RDPS_BATCH_LOOK_NS;
    ctx->member_ops = ops;
    ctx->member_impl = member_impl;
    ctx->max_datagram = transport->ops->max_payload(transport);
    if (ctx->max_datagram <= RDPS_FRAME_HEADER_LEN) {
        rc =
            rdps__set_err(RDPS_EINVAL, "transport datagram size %u leaves no room after the header",
                          ctx->max_datagram);
        goto err_owned;
    }
    rdps__frame_limits_default(&ctx->limits);
    ctx->limits.max_msg_len = (uint32_t)cfg->max_message_size;

    ctx->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (ctx->epoll_fd < 0) {
        rc = rdps__set_err(rdps__errno_code(errno), "epoll_create1: %s", strerror(errno));
        goto err_owned;
    }
    if ((rc = add_epoll_fd(ctx, transport->ops->event_fd(transport))) < 0 ||
        (rc = add_epoll_fd(ctx, ops->fd(member_impl))) < 0)
        goto err_owned;
    ctx->rel_receiver_id = rdps__ctx_random32();
    if ((rc = rdps__receive_init(ctx)) < 0)
        goto err_owned;
    rc = ops->join(member_impl, ctx->control_group, RDPS_MEMBER_RECEIVE, &ctx->control_membership);
    if (rc < 0) {
        rdps__prepend_err(rc, "joining the discovery group: ");
        goto err_owned;
    }
    ctx->now_ns = rdps__ctx_now(ctx);
    if ((rc = rdps__discovery_init(ctx)) < 0)
        goto err_owned;
    rdps__owner_set(&ctx->owner); /* the creating thread, until it hands the ctx over */
    if ((ctx->handle = rdps__handle_new(RDPS_HANDLE_CTX, ctx)) == 0) {
        rc = RDPS_ENOMEM;
        goto err_owned;
    }
    *out = ctx;
    return 0;

err_owned:
    /* From here on the ctx owns transport and membership: destroy tears everything down. */
    ctx_free(ctx);
    return rc;
err:
    free(ctx);
    ops->destroy(member_impl);
    transport->ops->destroy(transport);
    return rc;
}

int rdps__ctx_create_over(const rdps_config *cfg, struct rdps_transport *transport,
                          const struct rdps_membership_ops *ops, void *member_impl,
                          rdps_ctx_t **out)
{
    rdps_ctx_t *ctx;
    int rc = ctx_create_over(cfg, transport, ops, member_impl, &ctx);
    *out = rc < 0 ? NULL : (rdps_ctx_t *)ctx->handle;
    return rc;
}

int rdps__enter_refused(const void *handle, enum rdps_handle_type type, rdps_ctx_t *ctx)
{
    if (ctx == NULL)
        return rdps__handle_refusal(handle, type);
    int rc = rdps__owner_take(&ctx->owner);
    if (rc == 0)
        rdps__ctx_owner_changed(ctx);
    return rc;
}

void rdps__ctx_owner_changed(rdps_ctx_t *ctx)
{
    uint64_t owner = atomic_load_explicit(&ctx->owner.token, memory_order_relaxed);
    for (rdps_pub_t *p = ctx->pubs; p != NULL; p = p->next)
        atomic_store_explicit(&p->send_owner, p->cq != NULL ? RDPS__OWNER_NONE : owner,
                              memory_order_relaxed);
}

int rdps__ctx_wrap_loss_generator(const rdps_config *cfg, struct rdps_transport **t)
{
    if (cfg->loss_rx_rate <= 0.0 && cfg->loss_tx_rate <= 0.0)
        return 0;
    uint32_t mask =
        cfg->loss_frame_types ? cfg->loss_frame_types : RDPS_LOSS_TYPE_BIT(RDPS_FRAME_DATA);
    struct rdps_loss_config lc = {
        .seed = cfg->loss_seed,
        .rate = cfg->loss_rx_rate > cfg->loss_tx_rate ? cfg->loss_rx_rate : cfg->loss_tx_rate,
        .type_mask = mask,
        .on_send = cfg->loss_tx_rate > 0.0,
        .on_recv = cfg->loss_rx_rate > 0.0,
    };
    struct rdps_transport *wrapped;
    int rc = rdps__loss_transport_create(*t, &lc, &wrapped);
    if (rc < 0)
        return rc;
    /* One generator per direction, each with its own rate for the selected frame types. */
    for (unsigned type = 0; type < RDPS_LOSS_MAX_TYPES; type++) {
        if (!(mask & RDPS_LOSS_TYPE_BIT(type)))
            continue;
        if (lc.on_send)
            rdps__loss_gen_set_rate(rdps__loss_transport_send_gen(wrapped), type,
                                    cfg->loss_tx_rate);
        if (lc.on_recv)
            rdps__loss_gen_set_rate(rdps__loss_transport_recv_gen(wrapped), type,
                                    cfg->loss_rx_rate);
    }
    *t = wrapped;
    return 0;
}

/* A ctx on a device without RDMA: the process's in-process fabric ("loopback"), or the host's
 * local device ("local": a member among the host's processes). */
static int ctx_create_simulated(const rdps_config *cfg, const char *device, rdps_ctx_t **out)
{
    struct rdps_transport *t, *outer;
    const struct rdps_membership_ops *ops;
    void *impl;
    bool local = rdps__local_device_name(device);

    if (cfg->bind_ip != NULL)
        return rdps__set_err(RDPS_EINVAL,
                             "rdps_ctx_create: bind_ip selects an RDMA device; the %s device "
                             "has none (leave bind_ip NULL)",
                             local ? "local" : "loopback");
    int rc = local ? rdps__local_device_open(cfg, device, &t, &ops, &impl)
                   : rdps__loopback_device_open(cfg, &t, &ops, &impl);
    if (rc < 0)
        return rdps__prepend_err(rc, "rdps_ctx_create: %s", local ? "" : "loopback device: ");
    uint32_t qpn = local ? rdps__local_qpn(t) : rdps__loopback_qpn(t);
    uint32_t host = local ? rdps__local_ipv4(t) : rdps__loopback_ipv4(t);
    uint8_t gid[16];
    if (local)
        rdps__local_gid(t, gid);
    else
        rdps__loopback_gid(t, gid);
    outer = t;
    if ((rc = rdps__ctx_wrap_loss_generator(cfg, &outer)) < 0) {
        ops->destroy(impl);
        t->ops->destroy(t);
        if (!local)
            rdps__loopback_device_close();
        return rdps__prepend_err(rc, "rdps_ctx_create: loss generator: ");
    }
    rdps_ctx_t *ctx;
    rc = ctx_create_over(cfg, outer, ops, impl, &ctx);
    if (rc < 0) {
        if (!local)
            rdps__loopback_device_close(); /* create_over destroyed the endpoint */
        return rdps__prepend_err(rc, "rdps_ctx_create: ");
    }
    *out = (rdps_ctx_t *)ctx->handle;
    ctx->on_loopback_device = !local;
    ctx->self_qpn = qpn;
    memcpy(ctx->self_gid, gid, 16);
    ctx->has_self_gid = true;
    ctx->self_host = host; /* what seed peers name: 127.77.0.N (loopback), 127.78.0.N (local) */
    snprintf(ctx->device, sizeof(ctx->device), "%s",
             local ? RDPS_LOCAL_DEVICE_NAME : RDPS_LOOPBACK_DEVICE_NAME);
    ctx->cfg.device = ctx->device;
    if (local)
        RDPS_LOG_INF("ctx on the local device (%s): member 0x%06x, datagram %u bytes",
                     rdps__local_dir(t), qpn, ctx->max_datagram);
    else
        RDPS_LOG_INF("ctx on the in-process loopback device: endpoint %u, datagram %u bytes", qpn,
                     ctx->max_datagram);
    rdps__stat_shm_open(ctx);
    return 0;
}

/* The device a ctx opens: cfg->device, else $RDPS_DEVICE, else NULL (the first active port). */
static const char *chosen_device(const rdps_config *cfg)
{
    if (cfg->device != NULL)
        return cfg->device;
    const char *env = getenv("RDPS_DEVICE");
    return env != NULL && env[0] != '\0' ? env : NULL;
}

static int ctx_create(const rdps_config *cfg, rdps_ctx_t **out)
{
    struct rdps_group_range range;
    uint32_t control_group;
    struct rdps_verbs_config vcfg;
    struct sockaddr_in bind = {.sin_family = AF_INET};
    struct rdps_transport *verbs = NULL, *outer;
    const struct rdps_membership_ops *ops;
    void *impl;
    int rc;

    rdps__clear_err();
    if (out == NULL)
        return rdps__set_err(RDPS_EINVAL, "rdps_ctx_create: out is NULL");
    *out = NULL;
    if ((rc = rdps__config_validate(cfg, &range, &control_group)) < 0)
        return rc;
    const char *device = chosen_device(cfg);
    if (device != NULL && strlen(device) >= sizeof(((rdps_ctx_t *)0)->device))
        return rdps__set_err(RDPS_EINVAL,
                             "rdps_ctx_create: device name '%.16s...' (from "
                             "RDPS_DEVICE) is longer than 63 characters",
                             device);
    if (device != NULL &&
        (strcmp(device, RDPS_LOOPBACK_DEVICE_NAME) == 0 || rdps__local_device_name(device)))
        return ctx_create_simulated(cfg, device, out);

    memset(&vcfg, 0, sizeof(vcfg));
    vcfg.device_name = device;
    if (cfg->bind_ip != NULL) {
        inet_pton(AF_INET, cfg->bind_ip, &bind.sin_addr); /* validated above */
        vcfg.bind_addr = (const struct sockaddr *)&bind;
    }
    vcfg.port_num = cfg->port_num;
    vcfg.qkey = cfg->qkey;
    vcfg.send_slots = cfg->send_slots;
    vcfg.recv_slots = cfg->recv_slots;
    rc = rdps__verbs_transport_create(&vcfg, &verbs);
    if (rc == RDPS_ENODEV)
        rdps__append_err(rc, "; %s", RDPS__NO_DEVICE_HINT);
    if (rc < 0)
        return rdps__prepend_err(rc, "rdps_ctx_create: ");

    struct rdps_verbs_info info;
    rdps__verbs_transport_info(verbs, &info);
    uint16_t cm_port = 0;
    rc = rdps__membership_verbs_create(verbs, cfg, &ops, &impl, &cm_port);
    if (rc < 0) {
        verbs->ops->destroy(verbs);
        return rdps__prepend_err(rc, "rdps_ctx_create: ");
    }
    outer = verbs;
    if ((rc = rdps__ctx_wrap_loss_generator(cfg, &outer)) < 0) {
        ops->destroy(impl);
        verbs->ops->destroy(verbs);
        return rdps__prepend_err(rc, "rdps_ctx_create: loss generator: ");
    }
    rdps_ctx_t *ctx;
    rc = ctx_create_over(cfg, outer, ops, impl, &ctx);
    if (rc < 0)
        return rdps__prepend_err(rc, "rdps_ctx_create: ");
    *out = (rdps_ctx_t *)ctx->handle;
    ctx->cfg.cm_port = cm_port;
    ctx->self_qpn = info.qpn;
    memcpy(ctx->self_gid, info.gid.raw, 16);
    ctx->has_self_gid = true;
    if (ctx->self_host == 0 && info.has_bound_addr && info.bound_addr.ss_family == AF_INET)
        ctx->self_host = ntohl(((const struct sockaddr_in *)&info.bound_addr)->sin_addr.s_addr);
    if (!ctx->device[0])
        snprintf(ctx->device, sizeof(ctx->device), "%s", info.device_name);
    RDPS_LOG_INF("ctx on %s port %u: QPN 0x%06x, datagram %u bytes", info.device_name,
                 info.port_num, info.qpn, ctx->max_datagram);
    rdps__stat_shm_open(ctx);
    return 0;
}

static void ctx_free(rdps_ctx_t *ctx)
{
    rdps__handle_release(ctx->handle); /* from now on every copy of it is refused */
    ctx->handle = 0;
    ctx->callback_depth = 0;
    ctx->destroy_requested = true; /* nothing is sent or delivered from here on */
    rdps__stat_shm_close(ctx);
    while (ctx->subs)
        rdps__sub_free(ctx->subs);
    while (ctx->pubs)
        rdps__pub_free(ctx->pubs);
    rdps__topic_table_fini(&ctx->topics); /* topics kept only for explicit mappings */
    rdps__peers_stop(ctx);                /* after the leaving announcements went to the peers */
    rdps__discovery_fini(ctx);
    if (ctx->transport) {
        /* Give the device a moment to finish posted sends (the goodbyes above). */
        uint64_t until = rdps__clock_monotonic_ns() + 50000000ull;
        while (rdps__clock_monotonic_ns() < until && rdps__ctx_reap_sends(ctx) >= 0 &&
               rdps__ctx_sends_pending(ctx) > 0)
            ;
    }
    if (ctx->control_membership)
        ctx->member_ops->leave(ctx->member_impl, ctx->control_membership);
    rdps__receive_fini(ctx);
    if (ctx->member_ops)
        ctx->member_ops->destroy(ctx->member_impl);
    if (ctx->transport)
        ctx->transport->ops->destroy(ctx->transport); /* deregisters what is registered */
    rdps__claim_buffer_fini(ctx);
    if (ctx->on_loopback_device)
        rdps__loopback_device_close();
    rdps__ctx_queues_fini(ctx); /* concurrent publishers' lingering memory, the wake fd */
    if (ctx->epoll_fd >= 0)
        close(ctx->epoll_fd);
    free(ctx);
}

void rdps_ctx_destroy(rdps_ctx_t *handle)
{
    rdps_ctx_t *ctx = NULL;
    /* NULL and a ctx destroyed already are no-ops; another thread's ctx is left alone. */
    if (handle == NULL || rdps__ctx_enter(handle, &ctx) < 0) {
        if (ctx != NULL) {
            RDPS_LOG_ERR("rdps_ctx_destroy: %s", rdps_last_error_message());
            rdps__api_note("rdps_ctx_destroy");
        }
        return;
    }
    if (ctx->callback_depth == 0 && ctx->concurrent_pubs > 0) {
        /* What other threads queued on concurrent publishers goes first (callbacks of local
         * subscribers run: one destroying the ctx again only asks for what happens now). */
        rdps__ctx_callbacks_enter(ctx);
        for (rdps_pub_t *p = ctx->pubs; p != NULL; p = p->next)
            if (p->cq != NULL && !p->closed)
                rdps__pub_queue_flush(p);
        ctx->callback_depth--;
        if (ctx->handle == 0) { /* a callback destroyed it meanwhile: the flag is set */
            ctx_free(ctx);
            return;
        }
    }
    if (ctx->callback_depth > 0) {
        /* Called from a callback: the API call that ran it frees the ctx and returns ECLOSED.
         * The handle is refused from now on; what the publishers hold goes now, and none keeps
         * a datagram open for more. */
        rdps__handle_release(ctx->handle);
        ctx->handle = 0;
        for (rdps_pub_t *p = ctx->pubs; p != NULL; p = p->next)
            rdps__pub_batch_drop(p);
        ctx->destroy_requested = true;
        return;
    }
    ctx_free(ctx);
}

static int ctx_handover(rdps_ctx_t *ctx)
{
    if (ctx->callback_depth > 0)
        return rdps__set_err_static(RDPS_EBUSY, "called from a callback: the rdps_ctx_poll that "
                                                "runs it is still using the ctx");
    rdps__owner_hand_over(&ctx->owner);
    rdps__ctx_owner_changed(ctx);
    return 0;
}

int rdps_ctx_handover(rdps_ctx_t *handle)
{
    rdps_ctx_t *ctx;
    rdps__api_enter();
    int rc = rdps__ctx_enter(handle, &ctx);
    return rdps__api_return(rc < 0 ? rc : ctx_handover(ctx), "rdps_ctx_handover");
}

/* Frees the publishers and subscribers destroyed from callbacks. */
static void reap_closed(rdps_ctx_t *ctx)
{
    for (struct rdps_sub *s = ctx->subs, *next; s != NULL; s = next) {
        next = s->next;
        if (s->closed)
            rdps__sub_free(s);
    }
    for (struct rdps_pub *p = ctx->pubs, *next; p != NULL; p = next) {
        next = p->next;
        if (p->closed)
            rdps__pub_free(p);
    }
    ctx->closed_endpoints = 0;
}

bool rdps__ctx_callbacks_leave(rdps_ctx_t *ctx)
{
    if (--ctx->callback_depth > 0)
        return false;
    if (ctx->destroy_requested) {
        ctx_free(ctx);
        return true;
    }
    if (ctx->closed_endpoints > 0)
        reap_closed(ctx);
    return false;
}

static int ctx_create_sized(const rdps_config *cfg, size_t size, unsigned header_version,
                            rdps_ctx_t **out)
{
    rdps_config full;
    int rc;
    if (out != NULL)
        *out = NULL;
    if ((rc = rdps__abi_check_header(header_version, "rdps_ctx_create")) < 0)
        return rc;
    if (cfg == NULL)
        return rdps__set_err(RDPS_EINVAL, "rdps_ctx_create: config is NULL (use rdps_config_init)");
    rdps__config_defaults(&full);
    rc = rdps__abi_read_in(&full, sizeof(full), cfg, size, RDPS__ABI_CONFIG_SIZE_1_0,
                           "rdps_ctx_create: rdps_config");
    if (rc < 0)
        return rc;
    rdps__config_zero_defaults(&full); /* rdps.h: zero fields keep the defaults */
    return ctx_create(&full, out);
}

int rdps_ctx_create_sized(const rdps_config *cfg, size_t size, unsigned header_version,
                          rdps_ctx_t **out)
{
    rdps__api_enter();
    return rdps__api_return(ctx_create_sized(cfg, size, header_version, out), "rdps_ctx_create");
}
