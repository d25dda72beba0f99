/* SPDX-License-Identifier: BSD-2-Clause */
/* addr_group.c - multicast groups: rdma_join_multicast_ex (full or send-only) and attaching the
 * shared QP. */
#include "addr_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "rdps_error.h"
#include "rdps_log.h"

#define MCAST_QPN 0xffffffu

static struct rdps_addr_group *to_group(struct addr_obj *o)
{
    return (struct rdps_addr_group *)o;
}

/* The mode is part of the key: a FULL and a SEND_ONLY join of one group are two entries. */
static enum rdps_join_mode group_mode(const struct rdps_addr_group *g)
{
    return (enum rdps_join_mode)g->obj.entry.key.mode;
}

static void group_detach(struct rdps_addr_group *g)
{
    if (!g->attached)
        return;
    int rc = rdps__verbs_transport_detach_mcast(g->obj.owner->transport, &g->mgid, g->mlid);
    if (rc != 0)
        RDPS_LOG_WRN("addr: ibv_detach_mcast: %s", rdps_last_error_message());
    g->attached = false;
    g->obj.owner->stats.qp_detaches++;
}

/*
 * Leaves (or cancels) the id's join before destroying it: librdmacm frees its
 * per-join state only in rdma_leave_multicast, not in rdma_destroy_id.
 */
static void group_drop_id(struct rdps_addr_group *g)
{
    if (g->obj.id != NULL && g->join_issued)
        rdma_leave_multicast(g->obj.id, (struct sockaddr *)&g->obj.entry.key.addr);
    g->join_issued = false;
    rdps__addr_destroy_id(&g->obj.id);
}

/* Detach first so no datagram of the group lands on the QP once the attempt is over. */
static void group_drop(struct addr_obj *o)
{
    group_detach(to_group(o));
    group_drop_id(to_group(o));
}

static int group_issue_join(struct rdps_addr_group *g)
{
    struct rdma_cm_join_mc_attr_ex attr;

    memset(&attr, 0, sizeof(attr));
    attr.comp_mask = RDMA_CM_JOIN_MC_ATTR_ADDRESS | RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS;
    attr.join_flags = (group_mode(g) == RDPS_JOIN_SEND_ONLY && !g->use_full_join)
                          ? RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER
                          : RDMA_MC_JOIN_FLAG_FULLMEMBER;
    attr.addr = (struct sockaddr *)&g->obj.entry.key.addr;
    if (rdma_join_multicast_ex(g->obj.id, &attr, g) == 0) {
        g->join_issued = true;
        return 0;
    }
    int saved = errno;
    if (attr.join_flags == RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER &&
        (saved == ENOSYS || saved == EOPNOTSUPP || saved == EINVAL)) {
        /* Older kernels and some devices refuse send-only joins: a full join still sends. */
        RDPS_LOG_WRN("addr: send-only join refused (%s); joining as a full member instead",
                     strerror(saved));
        g->use_full_join = true;
        g->obj.owner->stats.send_only_fallbacks++;
        return group_issue_join(g);
    }
    return rdps__errno_code(saved);
}

static int group_start(struct addr_obj *o)
{
    struct rdps_addr_group *g = to_group(o);
    struct rdps_addr *a = o->owner;
    struct sockaddr_storage src;
    int err;

    if (!a->has_local) {
        rdps__addr_obj_fail(o, RDPS_EADDRNOTAVAIL, "join %s: %s", o->name,
                            "no local IP address to bind the rdma_cm id to (set local_addr)");
        return o->entry.error;
    }
    if (rdma_create_id(a->channel, &o->id, &o->cm, RDMA_PS_UDP) != 0) {
        o->id = NULL;
        err = rdps__errno_code(errno);
        rdps__addr_obj_fail(o, err, "join %s: rdma_create_id: %s", o->name, strerror(errno));
        return err;
    }
    memcpy(&src, &a->local, sizeof(src));
    rdps__addr_set_port(&src, 0);
    /* A join needs the id bound to the local address (it picks the device and port). */
    if (rdma_bind_addr(o->id, (struct sockaddr *)&src) != 0) {
        err = rdps__errno_code(errno);
        rdps__addr_obj_fail(o, err, "join %s: rdma_bind_addr: %s", o->name, strerror(errno));
        group_drop_id(g);
        return err;
    }
    err = group_issue_join(g);
    if (err < 0) {
        rdps__addr_obj_fail(o, err, "join %s: rdma_join_multicast_ex: %s", o->name,
                            rdps_strerror(err));
        group_drop_id(g);
        return err;
    }
    return 0;
}

static void group_timed_out(struct addr_obj *o)
{
    snprintf(o->entry.error_text, sizeof(o->entry.error_text),
             "join %s: no answer within %u ms (timed out)", o->name, o->owner->timeout_ms);
}

/* The join completed: an AH for sending to the group, and for FULL joins the QP attached. */
static void group_on_joined(struct rdps_addr_group *g, const struct event_copy *ev)
{
    struct addr_obj *o = &g->obj;
    struct rdps_addr *a = o->owner;
    struct ibv_ah_attr attr = ev->ud.ah_attr;

    if (!rdps__addr_same_device(a, o->id) || attr.port_num != a->info.port_num) {
        rdps__addr_obj_fail(o, RDPS_ENODEV,
                            "join %s: joined through %s port %u, but the transport uses %s port %u",
                            o->name, rdps__addr_device_name(o->id->verbs), attr.port_num,
                            rdps__addr_device_name(a->info.verbs), a->info.port_num);
        return;
    }
    struct ibv_ah *ah = ibv_create_ah(a->info.pd, &attr);
    if (ah == NULL) {
        rdps__addr_obj_fail(o, rdps__errno_code(errno), "join %s: ibv_create_ah: %s", o->name,
                            strerror(errno));
        return;
    }
    g->mgid = attr.grh.dgid;
    g->mlid = attr.dlid;
    g->qkey = ev->ud.qkey;
    if (group_mode(g) == RDPS_JOIN_FULL) {
        int rc = rdps__verbs_transport_attach_mcast(a->transport, &g->mgid, g->mlid);
        if (rc != 0) {
            ibv_destroy_ah(ah); /* never handed out: no send can name it */
            rdps__addr_obj_fail(o, rc, "join %s: %s", o->name, rdps_last_error_message());
            return;
        }
        g->attached = true;
        a->stats.qp_attaches++;
    }
    rdps__addr_obj_retire_ah(o);
    o->ah = ah;
    o->dest.ah = ah;
    o->dest.remote_qpn = MCAST_QPN;
    o->dest.remote_qkey = ev->ud.qkey;
    if (ev->ud.qkey != a->info.qkey)
        RDPS_LOG_WRN("addr: group Q_Key 0x%08x differs from the QP's 0x%08x: receives will be "
                     "dropped by the HCA",
                     ev->ud.qkey, a->info.qkey);
    rdps__addr_entry_set_ready(&o->entry);
    a->stats.joins_ready++;
}

/* Returns true when the group must be re-joined on a new id after the ack. */
static bool group_on_event(struct addr_obj *o, const struct event_copy *ev)
{
    struct rdps_addr_group *g = to_group(o);
    struct rdps_addr *a = o->owner;

    enum rdps_addr_action action = rdps__addr_group_action(
        &o->entry, group_mode(g) == RDPS_JOIN_SEND_ONLY && !g->use_full_join,
        rdps__addr_event_kind(ev->type));
    switch (action) {
    case RDPS_ADDR_ACT_IGNORE:
        return false;
    case RDPS_ADDR_ACT_FALLBACK_FULL:
        RDPS_LOG_WRN("addr: send-only join of %s failed (status %d); joining as a full member",
                     o->name, ev->status);
        g->use_full_join = true;
        a->stats.send_only_fallbacks++;
        return true;
    case RDPS_ADDR_ACT_RESTART:
        a->stats.rejoins++;
        o->entry.invalidations++;
        return true;
    default:
        break;
    }
    switch (ev->type) {
    case RDMA_CM_EVENT_MULTICAST_JOIN:
        group_on_joined(g, ev);
        return false;
    case RDMA_CM_EVENT_MULTICAST_ERROR: {
        int code = ev->status < 0 ? rdps__errno_code(ev->status) : RDPS_EPROTO;
        rdps__addr_obj_fail(o, code, "join %s: multicast join failed: %s", o->name,
                            ev->status < 0 ? strerror(-ev->status) : "rejected by the fabric");
        return false;
    }
    case RDMA_CM_EVENT_DEVICE_REMOVAL:
        group_detach(g);
        rdps__addr_obj_fail(o, RDPS_ENODEV, "join %s: %s", o->name, "RDMA device removed");
        return false;
    default:
        return false;
    }
}

const struct addr_kind rdps__addr_group_kind = {
    .start_api = "addr_join_start",
    .restart_what = "re-join",
    .size = sizeof(struct rdps_addr_group),
    .started_stat = offsetof(struct rdps_addr_stats, joins_started),
    .failed_stat = offsetof(struct rdps_addr_stats, joins_failed),
    .start = group_start,
    .on_event = group_on_event,
    .timed_out = group_timed_out,
    .drop = group_drop,
};

int rdps__addr_join_start(struct rdps_addr *a, const struct sockaddr *group,
                          enum rdps_join_mode mode, struct rdps_addr_group **out)
{
    struct rdps_addr_key key;
    char name[ADDR_TEXT];
    struct addr_obj *o;

    if (out != NULL)
        *out = NULL;
    if (a == NULL || out == NULL)
        return rdps__set_err(RDPS_EINVAL, "addr_join_start: NULL argument");
    if (mode != RDPS_JOIN_FULL && mode != RDPS_JOIN_SEND_ONLY)
        return rdps__set_err(RDPS_EINVAL, "addr_join_start: join mode %d is not FULL or SEND_ONLY",
                             (int)mode);
    int err = rdps__addr_key_init(&key, group, 0, (int)mode);
    if (err < 0)
        return rdps__prepend_err(err, "addr_join_start: ");
    /* The port means nothing for a group; it must not split the refcount. */
    rdps__addr_set_port(&key.addr, 0);
    rdps__sockaddr_format((struct sockaddr *)&key.addr, name, sizeof(name));
    bool multicast = key.addr.ss_family == AF_INET
                         ? IN_MULTICAST(ntohl(((struct sockaddr_in *)&key.addr)->sin_addr.s_addr))
                         : IN6_IS_ADDR_MULTICAST(&((struct sockaddr_in6 *)&key.addr)->sin6_addr);
    if (!multicast)
        return rdps__set_err(RDPS_EINVAL, "addr_join_start: %s is not a multicast address", name);
    err = rdps__addr_obj_acquire(a, &a->groups, &rdps__addr_group_kind, &key, name, NULL, &o);
    if (err < 0)
        return err;
    *out = to_group(o);
    return 0;
}

int rdps__addr_group_state(struct rdps_addr_group *g, const struct rdps_dest **dest)
{
    if (g == NULL)
        return rdps__set_err(RDPS_EINVAL, "addr_group_state: NULL group");
    return rdps__addr_obj_state(&g->obj, dest);
}

int rdps__addr_group_info(const struct rdps_addr_group *g, struct rdps_addr_group_info *out)
{
    if (g == NULL || out == NULL)
        return rdps__set_err(RDPS_EINVAL, "addr_group_info: NULL argument");
    memset(out, 0, sizeof(*out));
    memcpy(out->mgid, g->mgid.raw, sizeof(out->mgid));
    out->mlid = g->mlid;
    out->qkey = g->qkey;
    out->qp_attached = g->attached;
    out->full_join_fallback = g->use_full_join;
    out->refcount = g->obj.entry.refcount;
    out->rejoins = g->obj.entry.invalidations;
    return 0;
}

void rdps__addr_leave(struct rdps_addr_group *g)
{
    if (g != NULL)
        rdps__addr_obj_release(&g->obj);
}

int rdps__addr_group_rejoin(struct rdps_addr_group *g)
{
    if (g == NULL)
        return rdps__set_err(RDPS_EINVAL, "addr_group_rejoin: NULL group");
    return rdps__addr_obj_restart_now(&g->obj, offsetof(struct rdps_addr_stats, rejoins));
}
