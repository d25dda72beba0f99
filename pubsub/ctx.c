/* SPDX-License-Identifier: BSD-2-Clause */
/* ctx.c - rdps_ctx: owns the transport and group membership, runs the poll loop and timers. */
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

uint64_t rdps__ctx_now(const rdps_ctx_t *ctx)
{
    return ctx->clock ? ctx->clock(ctx->clock_user) : rdps__clock_monotonic_ns();
}

void rdps__ctx_set_clock(rdps_ctx_t *handle, uint64_t (*clock)(void *user), void *user)
{
    rdps_ctx_t *ctx = rdps__ctx_of_handle(handle);
    ctx->clock = clock;
    ctx->clock_user = user;
    ctx->now_ns = rdps__ctx_now(ctx);
    ctx->next_timer_ns = 0;
}

uint32_t rdps__ctx_random32(void)
{
    uint32_t v;
    do {
        uint64_t r = rdps__random_u64();
        v = (uint32_t)(r ^ (r >> 32));
    } while (v == 0); /* 0 means "none" on the wire (session ids) */
    return v;
}

void rdps__ctx_timers_changed(rdps_ctx_t *ctx)
{
    ctx->next_timer_ns = 0;
}

/* ---- topics ---- */

static int ctx_map_topic(rdps_ctx_t *ctx, const char *topic, const char *group)
{
    struct rdps_topic *t;
    if (ctx == NULL || group == NULL)
        return rdps__set_err_static(RDPS_EINVAL, ctx == NULL ? "NULL ctx" : "NULL group");
    int rc = rdps__topic_table_get(&ctx->topics, topic, group, &t);
    if (rc < 0)
        return rc;
    t->mapped = true; /* remembered even while no endpoint uses it */
    return 0;
}

int rdps_ctx_map_topic(rdps_ctx_t *handle, const char *topic, const char *group)
{
    rdps_ctx_t *ctx;
    rdps__api_enter();
    int rc = rdps__ctx_enter(handle, &ctx);
    return rdps__api_return(rc < 0 ? rc : ctx_map_topic(ctx, topic, group), "rdps_ctx_map_topic");
}

static int topic_group(const rdps_ctx_t *ctx, const char *topic, char *buf, size_t len)
{
    if (ctx == NULL || buf == NULL || len < 16)
        return rdps__set_err(RDPS_EINVAL, "%s",
                             ctx == NULL   ? "NULL ctx"
                             : buf == NULL ? "NULL buffer"
                                           : "buffer under 16 bytes (an IPv4 address needs 16)");
    int rc = rdps__topic_name_check(topic);
    if (rc < 0)
        return rc;
    rdps__ipv4_format(rdps__topic_table_group_of(&ctx->topics, topic), buf, len);
    return 0;
}

int rdps_topic_group(const rdps_ctx_t *handle, const char *topic, char *buf, size_t len)
{
    rdps_ctx_t *ctx;
    rdps__api_enter();
    int rc = rdps__ctx_enter(handle, &ctx);
    return rdps__api_return(rc < 0 ? rc : topic_group(ctx, topic, buf, len), "rdps_topic_group");
}

/* ---- sending one frame (control frames; data goes through publisher.c) ---- */

int rdps__ctx_claim(rdps_ctx_t *ctx, struct rdps_tx_buf *buf)
{
    struct rdps_transport *t = ctx->transport;
    int rc = t->ops->claim(t, buf);
    if (rc == RDPS_EAGAIN) {
        /* Post what RDPS_SEND_MORE queued and reap completions, then try once more. */
        t->ops->flush(t);
        if (rdps__ctx_reap_sends(ctx) < 0)
            return rc;
        rc = t->ops->claim(t, buf);
    }
    return rc;
}

void rdps__ctx_self_source(const rdps_ctx_t *ctx, struct rdps_source *out)
{
    memset(out, 0, sizeof(*out));
    if (ctx->has_self_gid) {
        memcpy(out->gid, ctx->self_gid, sizeof(out->gid));
        out->has_gid = 1;
    }
    out->qpn = ctx->self_qpn;
    out->lid = ctx->self_lid;
}

int rdps__ctx_reap_sends(rdps_ctx_t *ctx)
{
    /* max 0: send completions only, so this is safe while a receive batch is being handled. */
    struct rdps_rx_datagram none[1];
    return ctx->transport->ops->poll(ctx->transport, none, 0);
}

int rdps__ctx_send_frame(rdps_ctx_t *ctx, const struct rdps_dest *dest, const uint8_t *frame,
                         uint32_t len)
{
    struct rdps_transport *t = ctx->transport;
    struct rdps_tx_buf buf;
    int rc = rdps__ctx_claim(ctx, &buf);
    if (rc < 0)
        return rc;
    if (len > buf.capacity) {
        t->ops->abort(t, &buf);
        return rdps__set_err(RDPS_EMSGSIZE, "frame of %u bytes above the datagram size %u", len,
                             buf.capacity);
    }
    memcpy(buf.data, frame, len);
    rc = t->ops->submit(t, &buf, len, &dest, 1);
    if (rc < 0)
        return rc;
    rc = t->ops->flush(t);
    if (rc < 0)
        return rc;
    ctx->counters.frames_sent++;
    ctx->counters.frame_bytes_sent += len;
    return 0;
}

/* Destinations per buffer: a chain that fits any send queue the ctx accepts (send_slots >= 16,
 * so a few chains of 64 at most), and keeps control frames from crowding out data. */
#define MULTI_CHUNK 64u

int rdps__ctx_send_frame_multi(rdps_ctx_t *ctx, const struct rdps_dest *const *dests, uint32_t n,
                               const uint8_t *frame, uint32_t len)
{
    struct rdps_transport *t = ctx->transport;
    for (uint32_t off = 0; off < n; off += MULTI_CHUNK) {
        uint32_t k = n - off < MULTI_CHUNK ? n - off : MULTI_CHUNK;
        if (rdps__transport_send_room(t) < k + 1) { /* + 1: the claim's own slot */
            t->ops->flush(t);
            (void)rdps__ctx_reap_sends(ctx);
            if (rdps__transport_send_room(t) < k + 1)
                return RDPS_EAGAIN;
        }
        struct rdps_tx_buf buf;
        int rc = rdps__ctx_claim(ctx, &buf);
        if (rc < 0)
            return rc;
        if (len > buf.capacity) {
            t->ops->abort(t, &buf);
            return rdps__set_err(RDPS_EMSGSIZE, "frame of %u bytes above the datagram size %u", len,
                                 buf.capacity);
        }
        memcpy(buf.data, frame, len);
        if ((rc = t->ops->submit(t, &buf, len, dests + off, k)) < 0)
            return rc;
        ctx->counters.frames_sent += k;
        ctx->counters.frame_bytes_sent += (uint64_t)len * k;
    }
    return t->ops->flush(t);
}

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
static int ctx_sends_pending(const rdps_ctx_t *ctx);

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
               ctx_sends_pending(ctx) > 0)
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

/* ---- progress ---- */

/* Picks up joins that completed since the last poll (topics' in unicast.c). */
static void update_memberships(rdps_ctx_t *ctx)
{
    const struct rdps_dest *dest;
    if (ctx->control_dest == NULL && ctx->control_membership &&
        ctx->member_ops->state(ctx->control_membership, &dest) == 1)
        ctx->control_dest = dest;
    if (ctx->topics_joining > 0 || ctx->now_ns >= ctx->topics_deadline_ns)
        rdps__topics_progress(ctx);
}

/* Every subscriber hears that datagrams may have been lost while the QP was down. */
static void raise_qp_recovered(rdps_ctx_t *ctx)
{
    struct rdps_transport_stats ts;
    ctx->transport->ops->get_stats(ctx->transport, &ts);
    uint64_t lost = ts.tx_lost_qp_error - ctx->sends_lost_reported;
    ctx->sends_lost_reported = ts.tx_lost_qp_error;
    for (struct rdps_sub *s = ctx->subs; s != NULL; s = s->next) {
        if (s->closed || s->on_event == NULL)
            continue;
        rdps_event ev = {
            .type = RDPS_EVENT_QP_RECOVERED,
            .topic = s->topic->name,
            .count = (uint32_t)(lost > UINT32_MAX ? UINT32_MAX : lost),
        };
        rdps__ctx_self_source(ctx, &ev.source);
        s->on_event(s->event_user, &ev);
    }
}

static int handle_transport_events(rdps_ctx_t *ctx)
{
    enum rdps_transport_event_type type;
    while (ctx->transport->ops->next_event(ctx->transport, &type) == 1) {
        switch (type) {
        case RDPS_TRANSPORT_EV_DEVICE_FATAL:
            return rdps__set_err(RDPS_EDEVFATAL, "the RDMA device reported a fatal error");
        case RDPS_TRANSPORT_EV_PORT_DOWN:
            RDPS_LOG_WRN("RDMA port went down: sends fail until it is back");
            break;
        case RDPS_TRANSPORT_EV_PORT_ACTIVE:
            RDPS_LOG_INF("RDMA port is active again");
            break;
        case RDPS_TRANSPORT_EV_QP_RECOVERED:
            RDPS_LOG_WRN("the queue pair entered the error state and was reset");
            raise_qp_recovered(ctx);
            break;
        default:
            break;
        }
    }
    return 0;
}

/*
 * Posts what the ctx's publishers hold: their open datagrams and reliable open frames as `mode`
 * says (now_ns: monotonic; lingering ones left keep the ctx's timer at their deadline), reliable
 * frames RDPS_SEND_MORE deferred, and the transport's queued chain, as one post.
 */
static int flush_sends(rdps_ctx_t *ctx, enum rdps_flush_mode mode, uint64_t now_ns)
{
    int rc = 0;
    if (ctx->open_batches > 0) {
        uint64_t lingering;
        rc = rdps__ctx_batches_flush(ctx, mode, now_ns, &lingering);
        rdps__ctx_timer_at(ctx, lingering);
    }
    if (ctx->rel_sends_deferred || (mode != RDPS_FLUSH_POLL && ctx->reliable_pubs > 0)) {
        ctx->rel_sends_deferred = false;
        rdps__pub_rel_flush(ctx, mode);
    }
    if (!ctx->sends_queued)
        return rc;
    ctx->sends_queued = false;
    int frc = ctx->transport->ops->flush(ctx->transport);
    return rc < 0 ? rc : frc;
}

static int ctx_flush(rdps_ctx_t *ctx)
{
    if (ctx == NULL)
        return rdps__set_err_static(RDPS_EINVAL, "NULL ctx");
    if (ctx->concurrent_pubs > 0 || ctx->lingering != NULL) {
        rdps__ctx_callbacks_enter(ctx); /* local subscribers get other threads' messages */
        rdps__ctx_queues_drain(ctx);
        if (rdps__ctx_callbacks_leave(ctx))
            return rdps__set_err_static(RDPS_ECLOSED, RDPS__TEXT_CTX_DESTROYED);
    }
    return flush_sends(ctx, RDPS_FLUSH_ALL, rdps__ctx_now(ctx));
}

/*
 * rdps_ctx_poll/wait from a callback: the outer poll owns the receive batch and the
 * reassembler, so handle nothing received; only post queued sends and reap send completions,
 * which is what a relay's RDPS_EAGAIN retry loop needs to make progress.
 */
static int refuse_nested_poll(rdps_ctx_t *ctx)
{
    int rc = ctx_flush(ctx);
    if (rc == 0)
        rc = rdps__ctx_reap_sends(ctx);
    return rc < 0 ? rc
                  : rdps__set_err_static(RDPS_EBUSY,
                                         "called from a callback: the rdps_ctx_poll that runs "
                                         "it owns the receive batch (queued sends were "
                                         "posted and send completions reaped)");
}

static void run_timers(rdps_ctx_t *ctx)
{
    /* The ctx sleeps until the earliest deadline of its components. */
    if (ctx->contacts != NULL && ctx->now_ns >= ctx->peers_deadline_ns)
        ctx->peers_deadline_ns = rdps__peers_tick(ctx, ctx->now_ns);
    uint64_t next = rdps__discovery_tick(ctx, ctx->now_ns);
    uint64_t reasm = rdps__receive_expire(ctx);
    if (reasm < next)
        next = reasm;
    if (ctx->peers_deadline_ns < next)
        next = ctx->peers_deadline_ns;
    if (ctx->topics_deadline_ns < next)
        next = ctx->topics_deadline_ns;
    ctx->next_timer_ns = next;
}

/* Unicast discovery starts at the first poll: it names this ctx's own QP, known only then. */
static void start_peers(rdps_ctx_t *ctx)
{
    if (rdps__peers_start(ctx) < 0) {
        RDPS_LOG_ERR("unicast discovery not started: %s", rdps_last_error_message());
        ctx->contacts_failed = true;
        return;
    }
    ctx->peers_deadline_ns = ctx->now_ns;
}

static int poll_locked(rdps_ctx_t *ctx, int budget)
{
    struct rdps_transport *t = ctx->transport;
    int handled = 0, rc;

    ctx->now_ns = rdps__ctx_now(ctx);
    if ((rc = flush_sends(ctx, RDPS_FLUSH_POLL, ctx->now_ns)) < 0)
        return rc;
    if (budget <= 0)
        budget = 4 * RDPS_RX_BATCH;
    if (ctx->contacts == NULL && !ctx->contacts_failed)
        start_peers(ctx);
    if ((rc = ctx->member_ops->process(ctx->member_impl)) < 0)
        RDPS_LOG_WRN("group membership events: %s", rdps_strerror(rc));
    update_memberships(ctx);
    if (ctx->discovery_replays > 0) /* new endpoints hear of the peers known before them */
        rdps__discovery_replay(ctx);

    while (handled < budget && !ctx->destroy_requested) {
        int want = budget - handled < RDPS_RX_BATCH ? budget - handled : RDPS_RX_BATCH;
        int n = t->ops->poll(t, ctx->rx, want);
        if (n < 0)
            return n;
        if (n == 0)
            break;
        for (int i = 0; i < n && !ctx->destroy_requested; i++)
            rdps__receive_datagram(ctx, &ctx->rx[i]);
        t->ops->rx_release(t, ctx->rx, n);
        handled += n;
    }
    /* Port and device events are rare: look at most once per millisecond (a syscall each). */
    if (ctx->now_ns - ctx->last_event_check_ns >= 1000000ull) {
        ctx->last_event_check_ns = ctx->now_ns;
        if ((rc = handle_transport_events(ctx)) < 0)
            return rc;
    }
    uint64_t reliable_deadline = UINT64_MAX;
    if (ctx->reliable_pubs > 0 && !ctx->destroy_requested)
        reliable_deadline = rdps__pub_rel_progress(ctx); /* completions, repairs, new data */
    if (ctx->reliable_subs > 0 && !ctx->destroy_requested) {
        /* A poll that stopped at its budget left received datagrams queued: a repair a retry
         * would ask for may be among them. */
        uint64_t d = rdps__receive_reliable_poll(ctx, handled >= budget);
        if (d < reliable_deadline)
            reliable_deadline = d;
    }
    if (ctx->now_ns >= ctx->next_timer_ns && !ctx->destroy_requested)
        run_timers(ctx);
    rdps__ctx_timer_at(ctx, reliable_deadline);
    if (ctx->stat != NULL) { /* live counters for rdps-stat: stores only, every 100 ms at most */
        if (ctx->now_ns >= ctx->stat_deadline_ns)
            ctx->stat_deadline_ns = rdps__stat_shm_refresh(ctx, ctx->now_ns);
        rdps__ctx_timer_at(ctx, ctx->stat_deadline_ns);
    }
    /* Unreliable publishers that went quiet tell their next sequence (a lost tail is a gap). */
    if ((ctx->tail_data || ctx->now_ns >= ctx->tail_deadline_ns) && !ctx->destroy_requested)
        rdps__ctx_timer_at(ctx, rdps__pubs_tail_tick(ctx, ctx->now_ns));
    /* What other threads queued on concurrent publishers, with the joins of this poll known. */
    if ((ctx->concurrent_pubs > 0 || ctx->lingering != NULL) && !ctx->destroy_requested)
        rdps__ctx_queues_drain(ctx);
    /* What the callbacks published in this poll goes now (and lingering datagrams keep their
     * deadline in the timer run_timers just set). */
    if (!ctx->destroy_requested && (rc = flush_sends(ctx, RDPS_FLUSH_POLL, ctx->now_ns)) < 0)
        return rc;
    return handled;
}

/* A callback destroyed the ctx: the outermost call that ran it says so (the ctx is freed). */
static int ctx_destroyed_by_callback(void)
{
    return rdps__set_err_static(RDPS_ECLOSED, RDPS__TEXT_CTX_DESTROYED);
}

static int ctx_poll(rdps_ctx_t *ctx, int budget)
{
    if (ctx == NULL)
        return rdps__set_err_static(RDPS_EINVAL, "NULL ctx");
    if (ctx->callback_depth > 0)
        return refuse_nested_poll(ctx);
    rdps__ctx_callbacks_enter(ctx);
    int rc = poll_locked(ctx, budget);
    if (rdps__ctx_callbacks_leave(ctx))
        return ctx_destroyed_by_callback();
    return rc;
}

int rdps_ctx_poll(rdps_ctx_t *handle, int budget)
{
    rdps_ctx_t *ctx;
    rdps__api_enter();
    int rc = rdps__ctx_enter(handle, &ctx);
    return rdps__api_return(rc < 0 ? rc : ctx_poll(ctx, budget), "rdps_ctx_poll");
}

/* Any thread: the fd never changes. */
int rdps_ctx_fd(rdps_ctx_t *handle)
{
    rdps__api_enter();
    const rdps_ctx_t *ctx = rdps__ctx_of_handle(handle);
    return rdps__api_return(
        ctx != NULL ? ctx->epoll_fd : rdps__handle_refusal(handle, RDPS_HANDLE_CTX), "rdps_ctx_fd");
}

static int ctx_next_timeout_ms(const rdps_ctx_t *ctx)
{
    uint64_t now = rdps__ctx_now(ctx);
    if (ctx->next_timer_ns <= now)
        return 0;
    uint64_t ms = (ctx->next_timer_ns - now + 999999) / 1000000;
    return ms > 60000 ? 60000 : (int)ms;
}

/* A query's refused handle: the message says why (the query itself returns its zero). */
static void query_refused(const char *fn)
{
    rdps__api_note(fn);
}

int rdps_ctx_next_timeout_ms(rdps_ctx_t *handle)
{
    rdps_ctx_t *ctx;
    if (rdps__ctx_enter(handle, &ctx) < 0) {
        query_refused("rdps_ctx_next_timeout_ms");
        return 0; /* a negative timeout would make the caller's epoll_wait block for ever */
    }
    return ctx_next_timeout_ms(ctx);
}

static int ctx_arm(rdps_ctx_t *ctx)
{
    if (ctx == NULL)
        return rdps__set_err_static(RDPS_EINVAL, "NULL ctx");
    if (ctx->callback_depth > 0)
        return refuse_nested_poll(ctx);
    /* Nothing queued or held waits for a wakeup, but a datagram lingering 1 ms more or longer:
     * rdps_ctx_next_timeout_ms() wakes the loop for it. */
    uint64_t now = rdps__ctx_now(ctx);
    int rc = flush_sends(ctx, RDPS_FLUSH_SLEEP, now);
    if (rc < 0)
        return rc;
    if (now >= ctx->next_timer_ns)
        return rdps__set_err_static(RDPS_EAGAIN, "a timer is due: call rdps_ctx_poll, then arm "
                                                 "again");
    if (ctx->concurrent_pubs > 0 && !rdps__ctx_queues_sleep(ctx))
        return rdps__set_err_static(RDPS_EAGAIN, "other threads queued messages on a concurrent "
                                                 "publisher: call rdps_ctx_poll, then arm again");
    rc = ctx->transport->ops->arm(ctx->transport);
    if (rc < 0)
        return rc;
    return rc > 0 ? rdps__set_err_static(RDPS_EAGAIN, "work arrived meanwhile: call "
                                                      "rdps_ctx_poll, then arm again")
                  : 0;
}

static int ctx_wait(rdps_ctx_t *ctx, int timeout_ms)
{
    if (ctx == NULL)
        return rdps__set_err_static(RDPS_EINVAL, "NULL ctx");
    if (ctx->callback_depth > 0)
        return refuse_nested_poll(ctx);
    int rc = ctx_poll(ctx, 0);
    if (rc != 0)
        return rc;
    rc = ctx_arm(ctx);
    if (rc == RDPS_EAGAIN)
        return ctx_poll(ctx, 0);
    if (rc < 0)
        return rc;
    int wait_ms = ctx_next_timeout_ms(ctx);
    if (timeout_ms >= 0 && timeout_ms < wait_ms)
        wait_ms = timeout_ms;
    struct epoll_event evs[4];
    int n = epoll_wait(ctx->epoll_fd, evs, 4, wait_ms);
    if (n < 0 && errno != EINTR)
        return rdps__set_err(rdps__errno_code(errno), "epoll_wait: %s", strerror(errno));
    return ctx_poll(ctx, 0);
}

int rdps_ctx_flush(rdps_ctx_t *handle)
{
    rdps_ctx_t *ctx;
    rdps__api_enter();
    int rc = rdps__ctx_enter(handle, &ctx);
    return rdps__api_return(rc < 0 ? rc : ctx_flush(ctx), "rdps_ctx_flush");
}

int rdps_ctx_arm(rdps_ctx_t *handle)
{
    rdps_ctx_t *ctx;
    rdps__api_enter();
    int rc = rdps__ctx_enter(handle, &ctx);
    return rdps__api_return(rc < 0 ? rc : ctx_arm(ctx), "rdps_ctx_arm");
}

int rdps_ctx_wait(rdps_ctx_t *handle, int timeout_ms)
{
    rdps_ctx_t *ctx;
    rdps__api_enter();
    int rc = rdps__ctx_enter(handle, &ctx);
    return rdps__api_return(rc < 0 ? rc : ctx_wait(ctx, timeout_ms), "rdps_ctx_wait");
}

/* Any thread: the datagram size never changes. */
size_t rdps_ctx_max_datagram_payload(const rdps_ctx_t *handle)
{
    const rdps_ctx_t *ctx = rdps__ctx_of_handle(handle);
    return ctx ? ctx->max_datagram - RDPS_FRAME_HEADER_LEN : 0;
}

static int ctx_sends_pending(const rdps_ctx_t *ctx)
{
    struct rdps_transport_stats ts;
    ctx->transport->ops->get_stats(ctx->transport, &ts);
    return ts.tx_outstanding > INT32_MAX ? INT32_MAX : (int)ts.tx_outstanding;
}

int rdps_ctx_sends_pending(const rdps_ctx_t *handle)
{
    rdps_ctx_t *ctx;
    if (rdps__ctx_enter(handle, &ctx) < 0) {
        query_refused("rdps_ctx_sends_pending");
        return 0; /* nothing pending: a `while (rdps_ctx_sends_pending(ctx))` loop ends */
    }
    return ctx_sends_pending(ctx);
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

int rdps__counters_to_caller(int rc, const rdps_counters *full, rdps_counters *out, size_t size)
{
    if (out == NULL)
        return rdps__set_err_static(RDPS_EINVAL, "NULL rdps_counters");
    if (size < RDPS__ABI_COUNTERS_SIZE_1_0) {
        memset(out, 0, size);
        return rdps__set_err(RDPS_EINVAL, "rdps_counters of %zu bytes: smaller than rdps 1.0's",
                             size);
    }
    rdps__abi_write_out(out, size, full, sizeof(*full));
    return rc;
}

int rdps_ctx_counters_sized(const rdps_ctx_t *handle, rdps_counters *out, size_t size)
{
    rdps_counters full;
    rdps_ctx_t *ctx;
    rdps__api_enter();
    int rc = rdps__ctx_enter(handle, &ctx);
    if (rc < 0)
        memset(&full, 0, sizeof(full));
    else
        rc = rdps__ctx_counters(ctx, &full);
    return rdps__api_return(rdps__counters_to_caller(rc, &full, out, size), "rdps_ctx_counters");
}

int rdps__ctx_counters(const rdps_ctx_t *ctx, rdps_counters *out)
{
    struct rdps_transport_stats ts;
    if (out == NULL)
        return RDPS_EINVAL;
    if (ctx == NULL) {
        memset(out, 0, sizeof(*out));
        return rdps__set_err_static(RDPS_EINVAL, "NULL ctx");
    }
    *out = ctx->counters;
    for (const struct rdps_pub *p = ctx->pubs; p != NULL; p = p->next)
        rdps__pub_fold_counters(p, out);
    rdps__receive_counters(ctx, out);
    ctx->transport->ops->get_stats(ctx->transport, &ts);
    out->rq_empty = ts.rx_queue_empty;
    out->loss_dropped_rx = ts.loss_dropped_rx;
    out->loss_dropped_tx = ts.loss_dropped_tx;
    out->qp_recoveries = ts.qp_recoveries;
    out->sends_lost = ts.tx_lost_qp_error;
    out->send_stalls = ts.tx_stalls;
    out->auth_unsigned = ts.auth_unsigned;
    out->auth_short = ts.auth_short;
    out->auth_unknown_key = ts.auth_unknown_key;
    out->auth_bad_tag = ts.auth_bad_tag;
    out->auth_replayed = ts.auth_replayed;
    out->auth_senders_evicted = ts.auth_senders_evicted;
    out->auth_stale = ts.auth_stale;
    rdps__discovery_counters(ctx, out);
    return 0;
}
