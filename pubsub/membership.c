/* SPDX-License-Identifier: BSD-2-Clause */
/* membership.c - multicast group membership for a ctx: rdma_cm joins on a device, in-process groups
 * on loopback. */
#include "ctx_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rdps_addr.h"
#include "rdps_error.h"
#include "rdps_loopback.h"

/* ---- verbs: addr/ does rdma_join_multicast_ex and attaches the shared QP ---- */

static int verbs_join(void *impl, uint32_t group, enum rdps_member_mode mode, void **handle)
{
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(group)};
    struct rdps_addr_group *g = NULL;
    int rc = rdps__addr_join_start(
        impl, (const struct sockaddr *)&sin,
        mode == RDPS_MEMBER_RECEIVE ? RDPS_JOIN_FULL : RDPS_JOIN_SEND_ONLY, &g);
    if (rc < 0)
        return rc;
    *handle = g;
    return 0;
}

static int verbs_state(void *handle, const struct rdps_dest **dest)
{
    return rdps__addr_group_state(handle, dest);
}

static void verbs_leave(void *impl, void *handle)
{
    (void)impl;
    rdps__addr_leave(handle);
}

static int verbs_fd(void *impl)
{
    return rdps__addr_fd(impl);
}

static int verbs_process(void *impl)
{
    /* At most once per millisecond: rdps_ctx_poll runs in busy loops. */
    return rdps__addr_tick(impl);
}

static void verbs_destroy(void *impl)
{
    rdps__addr_destroy(impl);
}

static int verbs_resolve(void *impl, uint32_t ipv4, uint16_t port, void **handle)
{
    struct sockaddr_in sin = {.sin_family = AF_INET,
                              .sin_addr.s_addr = htonl(ipv4),
                              .sin_port = htons(port != 0 ? port : RDPS_DEFAULT_CM_PORT)};
    struct rdps_addr_peer *p = NULL;
    int rc = rdps__addr_resolve_start(impl, (const struct sockaddr *)&sin, &p);
    if (rc < 0)
        return rc;
    *handle = p;
    return 0;
}

static int verbs_resolve_state(void *handle, const struct rdps_dest **dest, struct rdps_source *src)
{
    int state = rdps__addr_peer_state(handle, dest);
    if (state != 1)
        return state;
    int rc = rdps__addr_peer_source(handle, src);
    return rc < 0 ? rc : 1;
}

static void verbs_unresolve(void *impl, void *handle)
{
    (void)impl;
    rdps__addr_peer_release(handle);
}

static const struct rdps_membership_ops verbs_ops = {
    .join = verbs_join,
    .state = verbs_state,
    .leave = verbs_leave,
    .fd = verbs_fd,
    .process = verbs_process,
    .destroy = verbs_destroy,
    .resolve = verbs_resolve,
    .resolve_state = verbs_resolve_state,
    .unresolve = verbs_unresolve,
};

int rdps__membership_verbs_create(struct rdps_transport *transport, const rdps_config *cfg,
                                  const struct rdps_membership_ops **ops, void **impl,
                                  uint16_t *cm_port)
{
    struct rdps_addr_config acfg;
    struct rdps_addr *addr = NULL;
    struct sockaddr_in bind = {.sin_family = AF_INET};
    int rc;

    memset(&acfg, 0, sizeof(acfg));
    acfg.transport = transport;
    if (cfg->bind_ip != NULL && inet_pton(AF_INET, cfg->bind_ip, &bind.sin_addr) == 1)
        acfg.local_addr = (const struct sockaddr *)&bind;
    /*
     * An explicit cm_port must be free. The automatic choice (0) takes the
     * default port if it can and otherwise the next free one above it, so
     * several processes on one host just work; discovery announces the port.
     */
    uint16_t first = cfg->cm_port ? cfg->cm_port : RDPS_DEFAULT_CM_PORT;
    unsigned attempts = cfg->cm_port ? 1 : 64;
    for (unsigned i = 0; i < attempts; i++) {
        acfg.cm_port = first + (int32_t)i;
        rc = rdps__addr_create(&acfg, &addr);
        if (rc != -EADDRINUSE)
            break;
    }
    if (rc < 0)
        return rdps__prepend_err(rc, "addressing: ");
    *ops = &verbs_ops;
    *impl = addr;
    *cm_port = (uint16_t)acfg.cm_port;
    return 0;
}

/* ---- loopback: joins complete at once on the in-process fabric ---- */

struct loopback_impl {
    struct rdps_loopback_fabric *fabric;
    struct rdps_transport *transport;
};

struct loopback_member {
    struct rdps_loopback_fabric *fabric;
    struct rdps_transport *transport;
    const struct rdps_dest *dest;
    uint32_t group;
    bool joined; /* send-only members do not receive */
};

static int loopback_join(void *impl, uint32_t group, enum rdps_member_mode mode, void **handle)
{
    struct loopback_impl *lb = impl;
    struct loopback_member *m = calloc(1, sizeof(*m));
    if (m == NULL)
        return rdps__set_err(RDPS_ENOMEM, "loopback join: out of memory");
    m->fabric = lb->fabric;
    m->transport = lb->transport;
    m->group = group;
    int rc = rdps__loopback_group_dest(lb->fabric, group, &m->dest);
    if (rc == 0 && mode == RDPS_MEMBER_RECEIVE) {
        rc = rdps__loopback_join(lb->transport, group);
        m->joined = rc == 0;
    }
    if (rc < 0) {
        free(m);
        return rc;
    }
    *handle = m;
    return 0;
}

static int loopback_state(void *handle, const struct rdps_dest **dest)
{
    struct loopback_member *m = handle;
    /* A fabric whose subnet manager has no multicast: the join never completes. */
    if (rdps__loopback_fabric_multicast(m->fabric) == RDPS_LOOPBACK_MCAST_NO_JOIN)
        return 0;
    *dest = m->dest;
    return 1;
}

static void loopback_leave(void *impl, void *handle)
{
    struct loopback_member *m = handle;
    (void)impl;
    if (m == NULL)
        return;
    if (m->joined)
        rdps__loopback_leave(m->transport, m->group);
    free(m);
}

static int loopback_fd(void *impl)
{
    (void)impl;
    return -1;
}

static int loopback_process(void *impl)
{
    (void)impl;
    return 0;
}

static void loopback_destroy(void *impl)
{
    free(impl);
}

/* A seed on the fabric: the endpoint of the address, at once (no port: one fabric, no cm). */
struct loopback_peer {
    const struct rdps_dest *dest;
    struct rdps_source source;
    int state;
};

static int loopback_resolve(void *impl, uint32_t ipv4, uint16_t port, void **handle)
{
    struct loopback_impl *lb = impl;
    (void)port;
    struct loopback_peer *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return rdps__set_err(RDPS_ENOMEM, "loopback resolve: out of memory");
    p->state =
        rdps__loopback_resolve(lb->fabric, ipv4, &p->dest, &p->source) == 0 ? 1 : RDPS_EHOSTUNREACH;
    *handle = p;
    return 0;
}

static int loopback_resolve_state(void *handle, const struct rdps_dest **dest,
                                  struct rdps_source *src)
{
    const struct loopback_peer *p = handle;
    if (p->state == 1) {
        *dest = p->dest;
        *src = p->source;
    }
    return p->state;
}

static void loopback_unresolve(void *impl, void *handle)
{
    (void)impl;
    free(handle);
}

static const struct rdps_membership_ops loopback_ops = {
    .join = loopback_join,
    .state = loopback_state,
    .leave = loopback_leave,
    .fd = loopback_fd,
    .process = loopback_process,
    .destroy = loopback_destroy,
    .resolve = loopback_resolve,
    .resolve_state = loopback_resolve_state,
    .unresolve = loopback_unresolve,
};

int rdps__membership_loopback_create(struct rdps_loopback_fabric *fabric,
                                     struct rdps_transport *transport,
                                     const struct rdps_membership_ops **ops, void **impl)
{
    struct loopback_impl *lb = calloc(1, sizeof(*lb));
    if (lb == NULL)
        return rdps__set_err(RDPS_ENOMEM, "loopback membership: out of memory");
    lb->fabric = fabric;
    lb->transport = transport;
    *ops = &loopback_ops;
    *impl = lb;
    return 0;
}
