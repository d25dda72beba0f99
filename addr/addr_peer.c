/* SPDX-License-Identifier: BSD-2-Clause */
/* addr_peer.c - unicast peers: IP:port -> AH + QPN + Q_Key through rdma_cm resolve and SIDR. */
#include "addr_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "rdps_error.h"
#include "rdps_log.h"

static struct rdps_addr_peer *to_peer(struct addr_obj *o)
{
    return (struct rdps_addr_peer *)o;
}

static void peer_drop(struct addr_obj *o)
{
    rdps__addr_destroy_id(&o->id);
}

/* Resolve step 1 (address); the events carry it on to the route and the SIDR request. */
static int peer_start(struct addr_obj *o)
{
    struct rdps_addr *a = o->owner;
    struct sockaddr_storage src;
    int err;

    if (rdma_create_id(a->channel, &o->id, &o->cm, RDMA_PS_UDP) != 0) {
        err = rdps__errno_code(errno);
        o->id = NULL;
        rdps__addr_obj_fail(o, err, "resolve %s: rdma_create_id: %s", o->name, strerror(errno));
        return err;
    }
    memcpy(&src, &a->local, sizeof(src));
    rdps__addr_set_port(&src, 0);
    if (rdma_resolve_addr(o->id, a->has_local ? (struct sockaddr *)&src : NULL,
                          (struct sockaddr *)&o->entry.key.addr, (int)a->timeout_ms) != 0) {
        int saved = errno;
        err = rdps__errno_code(saved);
        if (err == RDPS_ENETUNREACH || err == RDPS_EADDRNOTAVAIL || err == RDPS_ENODEV)
            rdps__addr_obj_fail(o, RDPS_EHOSTUNREACH,
                                "resolve %s: host unreachable (rdma_resolve_addr: %s)", o->name,
                                strerror(saved));
        else
            rdps__addr_obj_fail(o, err, "resolve %s: rdma_resolve_addr: %s", o->name,
                                strerror(saved));
        rdps__addr_destroy_id(&o->id);
        return o->entry.error;
    }
    RDPS_LOG_DBG("addr: resolving %s", o->name);
    return 0;
}

static void peer_timed_out(struct addr_obj *o)
{
    /* No answer in time is what a user calls an unreachable host. */
    o->entry.error = RDPS_EHOSTUNREACH;
    snprintf(o->entry.error_text, sizeof(o->entry.error_text),
             "resolve %s: host unreachable (no answer within %u ms)", o->name,
             o->owner->timeout_ms);
}

static const char *sidr_status_text(int status)
{
    /* SIDR_REP status values (IBA 12.11.2) that rdma_cm passes up as positive numbers. */
    switch (status) {
    case 1:
        return "no rdps listener on that port (service ID not supported)";
    case 2:
        return "request rejected by the peer";
    case 3:
        return "peer has no QP for that service";
    case 4:
        return "peer asks to redirect (not supported)";
    case 5:
        return "peer's UD protocol version unsupported";
    default:
        return "peer refused the request";
    }
}

/* The SIDR reply: an AH towards the peer's port and the QPN its listener answered with. */
static void peer_on_established(struct addr_obj *o, const struct event_copy *ev)
{
    struct rdps_addr *a = o->owner;
    struct ibv_ah_attr attr = ev->ud.ah_attr;

    if (attr.port_num != a->info.port_num) {
        rdps__addr_obj_fail(o, RDPS_EHOSTUNREACH,
                            "resolve %s: route uses port %u, transport port %u", o->name,
                            attr.port_num, a->info.port_num);
        return;
    }
    struct ibv_ah *ah = ibv_create_ah(a->info.pd, &attr);
    if (ah == NULL) {
        rdps__addr_obj_fail(o, rdps__errno_code(errno), "resolve %s: ibv_create_ah: %s", o->name,
                            strerror(errno));
        return;
    }
    rdps__addr_obj_retire_ah(o);
    o->ah = ah;
    o->dest.ah = ah;
    o->dest.remote_qpn = ev->ud.qp_num;
    o->dest.remote_qkey = ev->ud.qkey;
    o->dest.no_grh = attr.is_global == 0;
    o->dest.src_path_bits = attr.src_path_bits;
    struct rdps_addr_peer *p = to_peer(o);
    p->has_gid = attr.is_global != 0;
    p->gid = attr.grh.dgid;
    p->lid = attr.is_global ? 0 : attr.dlid;
    rdps__addr_entry_set_ready(&o->entry);
    a->stats.resolves_ready++;
    RDPS_LOG_DBG("addr: resolved peer QPN 0x%06x Q_Key 0x%08x", ev->ud.qp_num, ev->ud.qkey);
}

/* Why a resolve failed, as the user should read it (status: negative errno or SIDR status). */
static void peer_on_error(struct addr_obj *o, const struct event_copy *ev)
{
    int status = ev->status;

    switch (ev->type) {
    case RDMA_CM_EVENT_ADDR_ERROR:
        rdps__addr_obj_fail(o, RDPS_EHOSTUNREACH,
                            "resolve %s: host unreachable (address resolution: %s)", o->name,
                            strerror(status < 0 ? -status : EHOSTUNREACH));
        break;
    case RDMA_CM_EVENT_ROUTE_ERROR:
        rdps__addr_obj_fail(o, RDPS_EHOSTUNREACH,
                            "resolve %s: host unreachable (route resolution: %s)", o->name,
                            strerror(status < 0 ? -status : EHOSTUNREACH));
        break;
    case RDMA_CM_EVENT_UNREACHABLE:
        if (status < 0)
            rdps__addr_obj_fail(o, RDPS_EHOSTUNREACH,
                                "resolve %s: host unreachable (no SIDR answer: %s)", o->name,
                                strerror(-status));
        else
            rdps__addr_obj_fail(o, RDPS_ECONNREFUSED, "resolve %s: connection refused: %s", o->name,
                                sidr_status_text(status));
        break;
    case RDMA_CM_EVENT_REJECTED:
        rdps__addr_obj_fail(o, RDPS_ECONNREFUSED,
                            "resolve %s: connection refused (rejected, status %d)", o->name,
                            status);
        break;
    default:
        break;
    }
}

/* Returns true when the peer's id must be destroyed and resolution restarted after the ack. */
static bool peer_on_event(struct addr_obj *o, const struct event_copy *ev)
{
    struct rdps_addr *a = o->owner;

    enum rdps_addr_action action =
        rdps__addr_peer_action(&o->entry, rdps__addr_event_kind(ev->type));
    if (action == RDPS_ADDR_ACT_IGNORE)
        return false; /* late event for an attempt that already ended */
    if (action == RDPS_ADDR_ACT_RESTART) {
        /* The local address moved (e.g. bonding failover): the old AH may now be wrong. */
        a->stats.readdresses++;
        o->entry.invalidations++;
        return true;
    }
    switch (ev->type) {
    case RDMA_CM_EVENT_ADDR_RESOLVED:
        if (!rdps__addr_same_device(a, o->id)) {
            rdps__addr_obj_fail(o, RDPS_EHOSTUNREACH,
                                "resolve %s: host unreachable from this port: reached through "
                                "%s port %u, but the transport uses %s port %u",
                                o->name, rdps__addr_device_name(o->id->verbs), o->id->port_num,
                                rdps__addr_device_name(a->info.verbs), a->info.port_num);
        } else if (rdma_resolve_route(o->id, (int)a->timeout_ms) != 0) {
            rdps__addr_obj_fail(o, rdps__errno_code(errno), "resolve %s: rdma_resolve_route: %s",
                                o->name, strerror(errno));
        }
        return false;
    case RDMA_CM_EVENT_ROUTE_RESOLVED: {
        struct rdma_conn_param param;
        memset(&param, 0, sizeof(param));
        param.qp_num = a->info.qpn;
        if (rdma_connect(o->id, &param) != 0)
            rdps__addr_obj_fail(o, rdps__errno_code(errno), "resolve %s: rdma_connect (SIDR): %s",
                                o->name, strerror(errno));
        return false;
    }
    case RDMA_CM_EVENT_ESTABLISHED:
        peer_on_established(o, ev);
        return false;
    case RDMA_CM_EVENT_DEVICE_REMOVAL:
        rdps__addr_obj_fail(o, RDPS_ENODEV, "resolve %s: %s", o->name, "RDMA device removed");
        return false;
    default:
        peer_on_error(o, ev);
        return false;
    }
}

const struct addr_kind rdps__addr_peer_kind = {
    .start_api = "addr_resolve_start",
    .restart_what = "re-resolve",
    .size = sizeof(struct rdps_addr_peer),
    .started_stat = offsetof(struct rdps_addr_stats, resolves_started),
    .failed_stat = offsetof(struct rdps_addr_stats, resolves_failed),
    .start = peer_start,
    .on_event = peer_on_event,
    .timed_out = peer_timed_out,
    .drop = peer_drop,
};

int rdps__addr_resolve_start(struct rdps_addr *a, const struct sockaddr *peer,
                             struct rdps_addr_peer **out)
{
    struct rdps_addr_key key;
    char name[ADDR_TEXT];
    struct addr_obj *o;

    if (out != NULL)
        *out = NULL;
    if (a == NULL || out == NULL)
        return rdps__set_err(RDPS_EINVAL, "addr_resolve_start: NULL argument");
    int err = rdps__addr_key_init(&key, peer, RDPS_DEFAULT_CM_PORT, 0);
    if (err < 0)
        return rdps__prepend_err(err, "addr_resolve_start: ");
    rdps__addr_key_format(&key, name, sizeof(name));
    err = rdps__addr_obj_acquire(a, &a->peers, &rdps__addr_peer_kind, &key, name,
                                 &a->stats.resolve_cache_hits, &o);
    if (err < 0)
        return err;
    *out = to_peer(o);
    return 0;
}

int rdps__addr_peer_state(struct rdps_addr_peer *p, const struct rdps_dest **dest)
{
    if (p == NULL)
        return rdps__set_err(RDPS_EINVAL, "addr_peer_state: NULL peer");
    return rdps__addr_obj_state(&p->obj, dest);
}

void rdps__addr_peer_release(struct rdps_addr_peer *p)
{
    if (p != NULL)
        rdps__addr_obj_release(&p->obj);
}

int rdps__addr_peer_refresh(struct rdps_addr_peer *p)
{
    if (p == NULL)
        return rdps__set_err(RDPS_EINVAL, "addr_peer_refresh: NULL peer");
    return rdps__addr_obj_restart_now(&p->obj, offsetof(struct rdps_addr_stats, readdresses));
}

int rdps__addr_peer_source(const struct rdps_addr_peer *p, struct rdps_source *out)
{
    if (p == NULL || out == NULL)
        return rdps__set_err(RDPS_EINVAL, "addr_peer_source: NULL argument");
    const struct rdps_dest *dest;
    int state = rdps__addr_obj_state((struct addr_obj *)&p->obj, &dest);
    if (state != 1)
        return state < 0 ? state : RDPS_EAGAIN;
    memset(out, 0, sizeof(*out));
    if (p->has_gid) {
        memcpy(out->gid, p->gid.raw, sizeof(out->gid));
        out->has_gid = 1;
    } else {
        out->lid = p->lid;
    }
    out->qpn = dest->remote_qpn;
    return 0;
}
