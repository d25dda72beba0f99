/* SPDX-License-Identifier: BSD-2-Clause */
/* local_device.c - the public cross-process device "local": a ctx is a member of the host's local
 * device (rdps_local.h), and group membership is the registry's (joins complete at once). */
#include "ctx_internal.h"

#include <stdlib.h>
#include <string.h>

#include "rdps_error.h"
#include "rdps_local.h"

struct local_member {
    struct rdps_transport *transport;
    const struct rdps_dest *dest;
    uint32_t group;
    bool joined; /* send-only members do not receive */
};

static int local_join(void *impl, uint32_t group, enum rdps_member_mode mode, void **handle)
{
    struct rdps_transport *t = impl;
    struct local_member *m = calloc(1, sizeof(*m));
    if (m == NULL)
        return rdps__set_err(RDPS_ENOMEM, "local join: out of memory");
    m->transport = t;
    m->group = group;
    int rc = rdps__local_group_dest(t, group, &m->dest);
    if (rc == 0 && mode == RDPS_MEMBER_RECEIVE) {
        rc = rdps__local_join(t, group);
        m->joined = rc == 0;
    }
    if (rc < 0) {
        free(m);
        return rc;
    }
    *handle = m;
    return 0;
}

static int local_state(void *handle, const struct rdps_dest **dest)
{
    const struct local_member *m = handle;
    *dest = m->dest;
    return 1;
}

static void local_leave(void *impl, void *handle)
{
    struct local_member *m = handle;
    (void)impl;
    if (m == NULL)
        return;
    if (m->joined)
        rdps__local_leave(m->transport, m->group);
    free(m);
}

static int local_fd(void *impl)
{
    (void)impl;
    return -1;
}

static int local_process(void *impl)
{
    (void)impl;
    return 0;
}

static void local_destroy(void *impl)
{
    (void)impl; /* the transport is the ctx's */
}

/* A seed on this host: the member at 127.78.0.0 + index + 1, at once (no port, no rdma_cm). */
struct local_peer_handle {
    const struct rdps_dest *dest;
    struct rdps_source source;
    int state;
};

static int local_resolve(void *impl, uint32_t ipv4, uint16_t port, void **handle)
{
    (void)port;
    struct local_peer_handle *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return rdps__set_err(RDPS_ENOMEM, "local resolve: out of memory");
    p->state = rdps__local_resolve(impl, ipv4, &p->dest, &p->source) == 0 ? 1 : RDPS_EHOSTUNREACH;
    *handle = p;
    return 0;
}

static int local_resolve_state(void *handle, const struct rdps_dest **dest, struct rdps_source *src)
{
    const struct local_peer_handle *p = handle;
    if (p->state == 1) {
        *dest = p->dest;
        *src = p->source;
    }
    return p->state;
}

static void local_unresolve(void *impl, void *handle)
{
    (void)impl;
    free(handle);
}

static const struct rdps_membership_ops local_membership_ops = {
    .join = local_join,
    .state = local_state,
    .leave = local_leave,
    .fd = local_fd,
    .process = local_process,
    .destroy = local_destroy,
    .resolve = local_resolve,
    .resolve_state = local_resolve_state,
    .unresolve = local_unresolve,
};

bool rdps__local_device_name(const char *device)
{
    return device != NULL && strncmp(device, RDPS_LOCAL_DEVICE_NAME, 5) == 0 &&
           (device[5] == '\0' || device[5] == ':');
}

int rdps__local_device_open(const rdps_config *cfg, const char *device,
                            struct rdps_transport **transport,
                            const struct rdps_membership_ops **ops, void **impl)
{
    struct rdps_local_config lc = {
        .send_slots = cfg->send_slots,
        .recv_slots = cfg->recv_slots,
    };
    /* "local:4096" (or "local:1024"): the MTU of a new directory, checked against an existing
     * one's; plain "local" takes the directory's (1024 for a new one). */
    if (device[5] == ':') {
        if (strcmp(device + 6, "1024") == 0)
            lc.mtu = 1024;
        else if (strcmp(device + 6, "4096") == 0)
            lc.mtu = 4096;
        else
            return rdps__set_err(RDPS_EINVAL,
                                 "device '%s': the local device's MTU is 1024 or 4096 "
                                 "(\"local:1024\", \"local:4096\")",
                                 device);
    }
    int rc = rdps__local_create(&lc, transport);
    if (rc < 0)
        return rc;
    *ops = &local_membership_ops;
    *impl = *transport;
    return 0;
}
