/* SPDX-License-Identifier: BSD-2-Clause */
/* addr.c - the addr context: rdma_cm event channel and dispatch, the SIDR listener, create/destroy,
 * deadlines and the rate-limited tick. */
#include "rdps_clock.h"
#include "addr_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rdps_error.h"
#include "rdps_log.h"

#define LISTEN_DEPTH 64

uint64_t rdps__addr_now_ms(void)
{
    return rdps__clock_monotonic_ms();
}

static socklen_t sockaddr_size(const struct sockaddr *sa)
{
    return sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

void rdps__addr_set_port(struct sockaddr_storage *ss, uint16_t port)
{
    if (ss->ss_family == AF_INET6)
        ((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
    else
        ((struct sockaddr_in *)ss)->sin_port = htons(port);
}

const char *rdps__addr_device_name(const struct ibv_context *verbs)
{
    return verbs != NULL ? ibv_get_device_name(verbs->device) : "(none)";
}

bool rdps__addr_same_device(const struct rdps_addr *a, const struct rdma_cm_id *id)
{
    return id->verbs != NULL &&
           strcmp(ibv_get_device_name(id->verbs->device), rdps__addr_device_name(a->info.verbs)) ==
               0 &&
           id->port_num == a->info.port_num;
}

enum rdps_addr_event_kind rdps__addr_event_kind(enum rdma_cm_event_type type)
{
    switch (type) {
    case RDMA_CM_EVENT_ADDR_RESOLVED:
        return RDPS_ADDR_EV_ADDR_RESOLVED;
    case RDMA_CM_EVENT_ROUTE_RESOLVED:
        return RDPS_ADDR_EV_ROUTE_RESOLVED;
    case RDMA_CM_EVENT_ESTABLISHED:
        return RDPS_ADDR_EV_ESTABLISHED;
    case RDMA_CM_EVENT_ADDR_ERROR:
    case RDMA_CM_EVENT_ROUTE_ERROR:
    case RDMA_CM_EVENT_UNREACHABLE:
    case RDMA_CM_EVENT_REJECTED:
        return RDPS_ADDR_EV_ERROR;
    case RDMA_CM_EVENT_ADDR_CHANGE:
        return RDPS_ADDR_EV_ADDR_CHANGE;
    case RDMA_CM_EVENT_DEVICE_REMOVAL:
        return RDPS_ADDR_EV_DEVICE_REMOVAL;
    case RDMA_CM_EVENT_MULTICAST_JOIN:
        return RDPS_ADDR_EV_MC_JOIN;
    case RDMA_CM_EVENT_MULTICAST_ERROR:
        return RDPS_ADDR_EV_MC_ERROR;
    default:
        return RDPS_ADDR_EV_OTHER;
    }
}

/* ---- listener (answers other contexts' resolves) ---------------------------------------- */

static void listener_on_request(struct rdps_addr *a, struct rdma_cm_id *child)
{
    if (!rdps__addr_same_device(a, child)) {
        /* Our QPN is meaningless on another device: refuse rather than mislead. */
        rdma_reject(child, NULL, 0);
        a->stats.requests_rejected++;
        RDPS_LOG_INF("addr: refused a resolve arriving on %s port %u (transport is on %s)",
                     rdps__addr_device_name(child->verbs), child->port_num,
                     rdps__addr_device_name(a->info.verbs));
        return;
    }
    struct rdma_conn_param param;
    memset(&param, 0, sizeof(param));
    /* The cm id owns no QP: the answer names the shared QP so peers send straight to it. */
    param.qp_num = a->info.qpn;
    if (rdma_accept(child, &param) != 0) {
        RDPS_LOG_WRN("addr: rdma_accept (SIDR reply): %s", strerror(errno));
        a->stats.requests_rejected++;
        return;
    }
    a->stats.requests_answered++;
}

static int listen_start(struct rdps_addr *a, uint16_t port)
{
    struct sockaddr_storage any;
    const struct sockaddr *bind_to;

    if (a->has_local) {
        memcpy(&any, &a->local, sizeof(any));
    } else {
        memset(&any, 0, sizeof(any));
        any.ss_family = AF_INET;
    }
    rdps__addr_set_port(&any, port);
    bind_to = (const struct sockaddr *)&any;
    a->listen_owner.kind = CM_OWNER_LISTENER;
    a->listen_owner.object = a;
    if (rdma_create_id(a->channel, &a->listen_id, &a->listen_owner, RDMA_PS_UDP) != 0) {
        a->listen_id = NULL;
        return rdps__set_err(rdps__errno_code(errno), "rdma_create_id (listener): %s",
                             strerror(errno));
    }
    if (rdma_bind_addr(a->listen_id, (struct sockaddr *)bind_to) != 0) {
        char name[ADDR_TEXT];
        int saved = errno;
        return rdps__set_err(rdps__errno_code(saved), "listen on %s: rdma_bind_addr: %s%s",
                             rdps__sockaddr_format(bind_to, name, sizeof(name)), strerror(saved),
                             saved == EADDRINUSE ? " (another context uses this cm_port)" : "");
    }
    if (rdma_listen(a->listen_id, LISTEN_DEPTH) != 0)
        return rdps__set_err(rdps__errno_code(errno), "rdma_listen: %s", strerror(errno));
    a->listen_port = ntohs(rdma_get_src_port(a->listen_id));
    return 0;
}

/* ---- context ---------------------------------------------------------------------------- */

int rdps__addr_create(const struct rdps_addr_config *cfg, struct rdps_addr **out)
{
    struct rdps_addr *a;
    int err;

    if (out != NULL)
        *out = NULL;
    if (cfg == NULL || out == NULL || cfg->transport == NULL)
        return rdps__set_err(RDPS_EINVAL, "addr_create: a config with a transport is required");
    if (cfg->cm_port < RDPS_ADDR_NO_LISTEN || cfg->cm_port > 65535)
        return rdps__set_err(RDPS_EINVAL, "addr_create: cm_port %d out of range",
                             (int)cfg->cm_port);
    if (cfg->local_addr != NULL && cfg->local_addr->sa_family != AF_INET &&
        cfg->local_addr->sa_family != AF_INET6)
        return rdps__set_err(RDPS_EINVAL, "addr_create: local_addr is not IPv4 or IPv6");

    a = calloc(1, sizeof(*a));
    if (a == NULL)
        return rdps__set_err(RDPS_ENOMEM, "addr_create: out of memory");
    a->transport = cfg->transport;
    a->timeout_ms =
        cfg->resolve_timeout_ms != 0 ? cfg->resolve_timeout_ms : RDPS_DEFAULT_RESOLVE_TIMEOUT_MS;
    rdps__addr_table_init(&a->peers);
    rdps__addr_table_init(&a->groups);
    err = rdps__verbs_transport_info(cfg->transport, &a->info);
    if (err < 0) {
        rdps__prepend_err(err, "addr_create: ");
        goto err_free;
    }
    if (cfg->local_addr != NULL) {
        memcpy(&a->local, cfg->local_addr, sockaddr_size(cfg->local_addr));
        a->has_local = true;
    } else if (a->info.has_bound_addr) {
        a->local = a->info.bound_addr;
        a->has_local = true;
    }

    a->channel = rdma_create_event_channel();
    if (a->channel == NULL) {
        err = rdps__set_err(rdps__errno_code(errno),
                            "addr_create: rdma_create_event_channel: %s (is rdma_ucm loaded?)",
                            strerror(errno));
        goto err_free;
    }
    int flags = fcntl(a->channel->fd, F_GETFL);
    if (flags < 0 || fcntl(a->channel->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
        err = rdps__set_err(rdps__errno_code(errno), "addr_create: fcntl(O_NONBLOCK): %s",
                            strerror(errno));
        goto err_channel;
    }
    if (cfg->cm_port != RDPS_ADDR_NO_LISTEN) {
        err = listen_start(a, cfg->cm_port != 0 ? (uint16_t)cfg->cm_port : RDPS_DEFAULT_CM_PORT);
        if (err < 0) {
            rdps__prepend_err(err, "addr_create: ");
            goto err_listen;
        }
    }
    *out = a;
    return 0;

err_listen:
    rdps__addr_destroy_id(&a->listen_id);
err_channel:
    rdma_destroy_event_channel(a->channel);
err_free:
    free(a);
    return err;
}

void rdps__addr_destroy(struct rdps_addr *a)
{
    if (a == NULL)
        return;
    /* Groups first: detach from the shared QP before the ids go. */
    while (a->groups.head != NULL) {
        a->groups.head->refcount = 1;
        rdps__addr_obj_release((struct addr_obj *)a->groups.head);
    }
    while (a->peers.head != NULL) {
        a->peers.head->refcount = 1;
        rdps__addr_obj_release((struct addr_obj *)a->peers.head);
    }
    rdps__addr_destroy_id(&a->listen_id);
    rdma_destroy_event_channel(a->channel);
    free(a);
}

int rdps__addr_fd(const struct rdps_addr *a)
{
    return a != NULL ? a->channel->fd : RDPS_EINVAL;
}

uint16_t rdps__addr_listen_port(const struct rdps_addr *a)
{
    return a != NULL ? a->listen_port : 0;
}

void rdps__addr_get_stats(const struct rdps_addr *a, struct rdps_addr_stats *out)
{
    if (a != NULL && out != NULL)
        *out = a->stats;
}

static void expire_deadlines(struct rdps_addr *a)
{
    uint64_t now = rdps__addr_now_ms();

    rdps__addr_obj_expire(&a->peers, now);
    rdps__addr_obj_expire(&a->groups, now);
}

int rdps__addr_process(struct rdps_addr *a)
{
    struct rdma_cm_event *event;
    int handled = 0;

    if (a == NULL)
        return rdps__set_err(RDPS_EINVAL, "addr_process: NULL context");
    /* Bounded so a flood of requests cannot starve the caller's data path. */
    while (handled < 64) {
        if (rdma_get_cm_event(a->channel, &event) != 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
                break;
            return rdps__set_err(rdps__errno_code(errno), "addr_process: rdma_get_cm_event: %s",
                                 strerror(errno));
        }
        handled++;
        a->stats.cm_events++;
        struct event_copy ev = {.type = event->event, .status = event->status, .id = event->id};
        if (event->event == RDMA_CM_EVENT_ESTABLISHED ||
            event->event == RDMA_CM_EVENT_MULTICAST_JOIN)
            ev.ud = event->param.ud;
        /* CONNECT_REQUEST ids are new children; their context is the listener's. */
        struct cm_owner *owner = event->id != NULL ? event->id->context : NULL;
        RDPS_LOG_DBG("addr: CM event %s status %d", rdma_event_str(event->event), event->status);

        if (event->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
            listener_on_request(a, event->id);
            rdma_ack_cm_event(event);
            /* The SIDR reply is sent; the child id has no further use. */
            rdma_destroy_id(ev.id);
            continue;
        }
        rdma_ack_cm_event(event);
        if (owner == NULL)
            continue;
        if (owner->kind == CM_OWNER_OBJECT) {
            struct addr_obj *o = owner->object;
            if (o->id == ev.id && o->kind->on_event(o, &ev))
                rdps__addr_obj_restart(o);
        } else if (owner->kind == CM_OWNER_LISTENER && ev.type == RDMA_CM_EVENT_DEVICE_REMOVAL) {
            RDPS_LOG_ERR("addr: RDMA device removed under the listener");
        }
    }
    expire_deadlines(a);
    return handled;
}

int rdps__addr_tick(struct rdps_addr *a)
{
    if (a == NULL)
        return rdps__set_err(RDPS_EINVAL, "addr_tick: NULL context");
    uint64_t now = rdps__clock_coarse_ms(); /* no syscall on the busy path */
    if (now == a->last_tick_ms)
        return 0;
    a->last_tick_ms = now;
    return rdps__addr_process(a);
}
