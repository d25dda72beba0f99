/* SPDX-License-Identifier: BSD-2-Clause */
/* loopback_fabric.c - the loopback device's fabric: its endpoints' addresses, multicast groups
 * and their members, resolving an endpoint's IPv4 name (rdps_loopback.h). */
#include "loopback_internal.h"

#include "rdps_error.h"

#include <stdlib.h>
#include <string.h>

#define LB_MCAST_QPN 0xffffffu /* the IB multicast QPN, so dests look like verbs ones */

static struct lb_addr *new_addr(struct rdps_loopback_fabric *f, bool is_group, uint32_t id)
{
    struct lb_addr *a = calloc(1, sizeof(*a));
    if (a == NULL)
        return NULL;
    a->is_group = is_group;
    a->id = id;
    a->dest.ah = a;
    a->dest.remote_qpn = is_group ? LB_MCAST_QPN : id;
    a->dest.remote_qkey = 0;
    a->next = f->addrs;
    f->addrs = a;
    return a;
}

int rdps__loopback_fabric_create(struct rdps_loopback_fabric **out)
{
    if (out == NULL)
        return rdps__set_err(RDPS_EINVAL, "loopback fabric: NULL out pointer");
    *out = calloc(1, sizeof(**out));
    if (*out == NULL)
        return rdps__set_err(RDPS_ENOMEM, "loopback fabric: out of memory");
    (*out)->next_endpoint_id = 1;
    return 0;
}

int rdps__loopback_fabric_create_threaded(struct rdps_loopback_fabric **out)
{
    int rc = rdps__loopback_fabric_create(out);
    if (rc < 0)
        return rc;
    if ((rc = pthread_mutex_init(&(*out)->lock, NULL)) != 0) {
        free(*out);
        *out = NULL;
        return rdps__set_err(rdps__errno_code(rc), "loopback fabric: pthread_mutex_init failed");
    }
    (*out)->threaded = true;
    return 0;
}

void rdps__loopback_fabric_destroy(struct rdps_loopback_fabric *f)
{
    if (f == NULL)
        return;
    for (struct lb_endpoint *ep = f->endpoints; ep != NULL; ep = ep->next) {
        ep->fabric = NULL;
        ep->self = NULL;
    }
    while (f->addrs != NULL) {
        struct lb_addr *a = f->addrs;
        f->addrs = a->next;
        free(a->members);
        free(a);
    }
    if (f->threaded)
        pthread_mutex_destroy(&f->lock);
    free(f);
}

bool rdps__lb_fabric_attach(struct rdps_loopback_fabric *f, struct lb_endpoint *ep)
{
    fabric_lock(f);
    ep->self = new_addr(f, false, f->next_endpoint_id);
    if (ep->self != NULL) {
        f->next_endpoint_id++;
        ep->self->endpoint = ep;
        ep->fabric = f;
        ep->next = f->endpoints;
        f->endpoints = ep;
    }
    fabric_unlock(f);
    return ep->self != NULL;
}

static struct lb_addr *find_group(struct rdps_loopback_fabric *f, uint32_t group)
{
    for (struct lb_addr *a = f->addrs; a != NULL; a = a->next) {
        if (a->is_group && a->id == group)
            return a;
    }
    return NULL;
}

int rdps__loopback_group_dest(struct rdps_loopback_fabric *f, uint32_t group,
                              const struct rdps_dest **out)
{
    if (f == NULL || out == NULL)
        return rdps__set_err(RDPS_EINVAL, "loopback group dest: NULL argument");
    fabric_lock(f);
    struct lb_addr *a = find_group(f, group);
    if (a == NULL)
        a = new_addr(f, true, group);
    fabric_unlock(f);
    if (a == NULL)
        return rdps__set_err(RDPS_ENOMEM, "loopback group %u: out of memory", group);
    *out = &a->dest;
    return 0;
}

/* One more reference of ep on group a (a new member at the end). */
static int add_member(struct lb_addr *a, struct lb_endpoint *ep)
{
    for (uint32_t i = 0; i < a->member_count; i++) {
        if (a->members[i].endpoint == ep) {
            a->members[i].refs++;
            return 0;
        }
    }
    if (a->member_count == a->member_cap) {
        uint32_t cap = a->member_cap ? a->member_cap * 2 : 4;
        struct lb_member *m = realloc(a->members, cap * sizeof(*m));
        if (m == NULL)
            return RDPS_ENOMEM;
        a->members = m;
        a->member_cap = cap;
    }
    a->members[a->member_count].endpoint = ep;
    a->members[a->member_count].refs = 1;
    a->member_count++;
    return 0;
}

int rdps__loopback_join(struct rdps_transport *t, uint32_t group)
{
    if (!rdps__lb_is_endpoint(t))
        return rdps__set_err(RDPS_EINVAL, "not a loopback transport");
    struct lb_endpoint *ep = to_lb(t);
    if (ep->fabric == NULL)
        return RDPS_ESHUTDOWN;
    const struct rdps_dest *dest;
    int err = rdps__loopback_group_dest(ep->fabric, group, &dest);
    if (err < 0)
        return err;
    struct lb_addr *a = dest->ah;
    fabric_lock(ep->fabric);
    err = add_member(a, ep);
    fabric_unlock(ep->fabric);
    return err < 0 ? rdps__set_err(err, "loopback join %u: out of memory", group) : 0;
}

static void remove_member(struct lb_addr *a, uint32_t index)
{
    /* Keep join order: delivery order to members stays deterministic. */
    memmove(&a->members[index], &a->members[index + 1],
            (a->member_count - index - 1) * sizeof(*a->members));
    a->member_count--;
}

int rdps__loopback_leave(struct rdps_transport *t, uint32_t group)
{
    if (!rdps__lb_is_endpoint(t))
        return rdps__set_err(RDPS_EINVAL, "not a loopback transport");
    struct lb_endpoint *ep = to_lb(t);
    bool member = false;
    fabric_lock(ep->fabric);
    struct lb_addr *a = ep->fabric != NULL ? find_group(ep->fabric, group) : NULL;
    for (uint32_t i = 0; a != NULL && i < a->member_count; i++) {
        if (a->members[i].endpoint == ep) {
            if (--a->members[i].refs == 0)
                remove_member(a, i);
            member = true;
            break;
        }
    }
    fabric_unlock(ep->fabric);
    if (member)
        return 0;
    return rdps__set_err(RDPS_ENOENT, "loopback endpoint %u is not a member of group %u",
                         rdps__loopback_qpn(t), group);
}

int rdps__loopback_dest(struct rdps_transport *t, const struct rdps_dest **out)
{
    if (!rdps__lb_is_endpoint(t) || out == NULL)
        return rdps__set_err(RDPS_EINVAL, "not a loopback transport");
    struct lb_endpoint *ep = to_lb(t);
    if (ep->self == NULL)
        return RDPS_ESHUTDOWN;
    *out = &ep->self->dest;
    return 0;
}

uint32_t rdps__loopback_qpn(struct rdps_transport *t)
{
    struct lb_endpoint *ep = to_lb(t);
    return ep->self != NULL ? ep->self->id : 0;
}

void rdps__loopback_gid(struct rdps_transport *t, uint8_t gid[16])
{
    rdps__lb_endpoint_gid(rdps__loopback_qpn(t), gid);
}

void rdps__loopback_fabric_set_multicast(struct rdps_loopback_fabric *f,
                                         enum rdps_loopback_multicast mode)
{
    fabric_lock(f);
    f->multicast = mode;
    fabric_unlock(f);
}

enum rdps_loopback_multicast rdps__loopback_fabric_multicast(struct rdps_loopback_fabric *f)
{
    fabric_lock(f);
    enum rdps_loopback_multicast mode = f->multicast;
    fabric_unlock(f);
    return mode;
}

uint32_t rdps__loopback_ipv4(struct rdps_transport *t)
{
    uint32_t id = rdps__loopback_qpn(t);
    return id != 0 && id < RDPS_LOOPBACK_HOSTS ? RDPS_LOOPBACK_NET | id : 0;
}

int rdps__loopback_resolve(struct rdps_loopback_fabric *f, uint32_t ipv4,
                           const struct rdps_dest **dest, struct rdps_source *src)
{
    if (f == NULL || dest == NULL)
        return rdps__set_err(RDPS_EINVAL, "loopback resolve: NULL argument");
    *dest = NULL;
    uint32_t id = ipv4 & (RDPS_LOOPBACK_HOSTS - 1);
    if ((ipv4 & ~(RDPS_LOOPBACK_HOSTS - 1)) != RDPS_LOOPBACK_NET || id == 0)
        return rdps__set_err(RDPS_EHOSTUNREACH,
                             "loopback resolve: %u.%u.%u.%u is not a loopback endpoint's address "
                             "(127.77.0.0/16)",
                             ipv4 >> 24, (ipv4 >> 16) & 0xff, (ipv4 >> 8) & 0xff, ipv4 & 0xff);
    fabric_lock(f);
    for (struct lb_addr *a = f->addrs; a != NULL; a = a->next) {
        if (!a->is_group && a->id == id && a->endpoint != NULL) {
            *dest = &a->dest;
            break;
        }
    }
    fabric_unlock(f);
    if (*dest == NULL)
        return rdps__set_err(RDPS_EHOSTUNREACH, "loopback resolve: no endpoint %u", id);
    if (src != NULL) {
        memset(src, 0, sizeof(*src));
        rdps__lb_endpoint_gid(id, src->gid);
        src->has_gid = 1;
        src->qpn = id;
    }
    return 0;
}

void rdps__lb_fabric_detach(struct rdps_loopback_fabric *f, struct lb_endpoint *ep)
{
    fabric_lock(f);
    for (struct lb_addr *a = f->addrs; a != NULL; a = a->next) {
        if (a->endpoint == ep)
            a->endpoint = NULL;
        for (uint32_t i = 0; i < a->member_count; i++) {
            if (a->members[i].endpoint == ep) {
                remove_member(a, i);
                break;
            }
        }
    }
    for (struct lb_endpoint **link = &f->endpoints; *link != NULL; link = &(*link)->next) {
        if (*link == ep) {
            *link = ep->next;
            break;
        }
    }
    fabric_unlock(f);
}
