/* SPDX-License-Identifier: BSD-2-Clause */
/* local_groups.c - the local device's groups (destinations to send to, groups joined in the
 * registry) and names (a member's QPN, GID and IPv4 address, resolving one, the directory's
 * summary). */
#include "local_ep.h"

#include "rdps_error.h"

#include <stdio.h>
#include <stdlib.h>

int rdps__local_group_dest(struct rdps_transport *t, uint32_t group, const struct rdps_dest **out)
{
    if (!rdps__local_is_endpoint(t) || out == NULL)
        return rdps__set_err(RDPS_EINVAL, "not a local transport");
    struct local_ep *ep = to_ep(t);
    struct local_addr *a = ep->groups;
    while (a != NULL && a->group != group)
        a = a->next;
    if (a == NULL) {
        if (ep->group_count >= LOCAL_MAX_DESTS)
            return rdps__set_err(RDPS_ENOSPC, "local device: %u group destinations, the most",
                                 LOCAL_MAX_DESTS);
        if ((a = calloc(1, sizeof(*a))) == NULL)
            return rdps__set_err(RDPS_ENOMEM, "local group %u: out of memory", group);
        a->is_group = true;
        a->group = group;
        a->entry = -1;
        a->entry_epoch = UINT64_MAX;
        a->dest.ah = a;
        a->dest.remote_qpn = LOCAL_MCAST_QPN;
        a->next = ep->groups;
        ep->groups = a;
        ep->group_count++;
    }
    *out = &a->dest;
    return 0;
}

static struct local_join *find_join(struct local_ep *ep, uint32_t group)
{
    for (uint32_t i = 0; i < ep->join_count; i++)
        if (ep->joins[i].group == group)
            return &ep->joins[i];
    return NULL;
}

int rdps__local_join(struct rdps_transport *t, uint32_t group)
{
    if (!rdps__local_is_endpoint(t) || group == 0)
        return rdps__set_err(RDPS_EINVAL, "local join: not a local transport, or group 0");
    struct local_ep *ep = to_ep(t);
    struct local_join *j = find_join(ep, group);
    if (j != NULL) {
        j->refs++;
        return 0;
    }
    if (ep->join_count == ep->join_cap) {
        uint32_t cap = ep->join_cap ? ep->join_cap * 2 : 8;
        struct local_join *n = realloc(ep->joins, cap * sizeof(*n));
        if (n == NULL)
            return rdps__set_err(RDPS_ENOMEM, "local join: out of memory");
        ep->joins = n;
        ep->join_cap = cap;
    }
    int rc = local_dir_lock(&ep->dir);
    if (rc < 0)
        return rc;
    rc = local_dir_group_add(&ep->dir, group, ep->index);
    local_dir_unlock(&ep->dir);
    if (rc < 0)
        return rc;
    ep->joins[ep->join_count++] = (struct local_join){.group = group, .refs = 1};
    return 0;
}

int rdps__local_leave(struct rdps_transport *t, uint32_t group)
{
    if (!rdps__local_is_endpoint(t))
        return rdps__set_err(RDPS_EINVAL, "not a local transport");
    struct local_ep *ep = to_ep(t);
    struct local_join *j = find_join(ep, group);
    if (j == NULL)
        return rdps__set_err(RDPS_ENOENT, "local member %u is not in group %u", ep->qpn, group);
    if (--j->refs > 0)
        return 0;
    *j = ep->joins[--ep->join_count];
    /* Without the lock (held past its bound by a stuck member) the bit stays: we receive the
     * group's datagrams and drop them above, as after a lost leave on a fabric. */
    if (local_dir_lock(&ep->dir) == 0) {
        local_dir_group_remove(&ep->dir, group, ep->index);
        local_dir_unlock(&ep->dir);
    }
    return 0;
}

uint32_t rdps__local_qpn(struct rdps_transport *t)
{
    return to_ep(t)->qpn;
}

void rdps__local_gid(struct rdps_transport *t, uint8_t gid[16])
{
    member_gid(to_ep(t)->qpn, gid);
}

uint32_t rdps__local_ipv4(struct rdps_transport *t)
{
    return RDPS_LOCAL_NET | (to_ep(t)->index + 1);
}

uint32_t rdps__local_mtu(struct rdps_transport *t)
{
    return to_ep(t)->mtu;
}

const char *rdps__local_dir(struct rdps_transport *t)
{
    return to_ep(t)->dir.path;
}

int rdps__local_resolve(struct rdps_transport *t, uint32_t ipv4, const struct rdps_dest **dest,
                        struct rdps_source *src)
{
    struct local_ep *ep = to_ep(t);
    uint32_t n = ipv4 - RDPS_LOCAL_NET;
    if ((ipv4 & 0xffff0000u) != RDPS_LOCAL_NET || n == 0 || n > LOCAL_MAX_MEMBERS)
        return rdps__set_err(RDPS_EHOSTUNREACH,
                             "local resolve: %u.%u.%u.%u is not a local member's address "
                             "(127.78.0.1 to 127.78.%u.%u)",
                             ipv4 >> 24, (ipv4 >> 16) & 0xff, (ipv4 >> 8) & 0xff, ipv4 & 0xff,
                             LOCAL_MAX_MEMBERS >> 8, LOCAL_MAX_MEMBERS & 0xff);
    struct local_member_entry *m = &ep->dir.reg->members[n - 1];
    uint32_t gen = atomic_load(&m->gen);
    if (atomic_load(&m->state) != LOCAL_MEMBER_LIVE)
        return rdps__set_err(RDPS_EHOSTUNREACH, "local resolve: no member %u", n - 1);
    uint32_t qpn = local_qpn(gen, n - 1);
    *dest = rdps__local_unicast_dest(ep, qpn);
    if (src != NULL) {
        memset(src, 0, sizeof(*src));
        src->qpn = qpn;
        member_gid(qpn, src->gid);
        src->has_gid = 1;
    }
    return 0;
}

int rdps__local_dir_info(const struct rdps_local_config *cfg, struct rdps_local_dir_info *out)
{
    struct local_dir d;
    memset(out, 0, sizeof(*out));
    int rc = local_dir_open(&d, cfg != NULL ? cfg->dir : NULL, cfg != NULL ? cfg->group : NULL,
                            cfg != NULL ? cfg->mtu : 0);
    snprintf(out->dir, sizeof(out->dir), "%s", d.path);
    if (rc < 0)
        return rc;
    out->mtu = d.mtu;
    if (local_dir_lock(&d) == 0) {
        local_dir_reap(&d, LOCAL_MAX_MEMBERS);
        local_dir_unlock(&d);
    }
    for (uint32_t i = 0; i < LOCAL_MAX_MEMBERS; i++)
        out->members += atomic_load(&d.reg->members[i].state) == LOCAL_MEMBER_LIVE;
    for (uint32_t i = 0; i < LOCAL_MAX_GROUPS; i++)
        out->groups += atomic_load(&d.reg->groups[i].group) != 0;
    local_dir_close(&d);
    return 0;
}
