/* SPDX-License-Identifier: BSD-2-Clause */
/* verbs_device.c - verbs transport: choosing the device, port and GID (a bind address is mapped to
 * its device through rdma_cm). */
#include "verbs_internal.h"

#include "rdps_error.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <rdma/rdma_cma.h>
#include <stdio.h>
#include <string.h>

static uint32_t mtu_bytes(enum ibv_mtu mtu)
{
    switch (mtu) {
    case IBV_MTU_256:
        return 256;
    case IBV_MTU_512:
        return 512;
    case IBV_MTU_1024:
        return 1024;
    case IBV_MTU_2048:
        return 2048;
    case IBV_MTU_4096:
        return 4096;
    }
    return 256; /* unknown encodings: the smallest MTU every port supports */
}

static const char *addr_text(const struct sockaddr *sa, char *buf, size_t len)
{
    const void *raw = NULL;
    if (sa->sa_family == AF_INET)
        raw = &((const struct sockaddr_in *)sa)->sin_addr;
    else if (sa->sa_family == AF_INET6)
        raw = &((const struct sockaddr_in6 *)sa)->sin6_addr;
    if (raw == NULL || inet_ntop(sa->sa_family, raw, buf, (socklen_t)len) == NULL)
        snprintf(buf, len, "(address family %d)", sa->sa_family);
    return buf;
}

static socklen_t sockaddr_len(const struct sockaddr *sa)
{
    return sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

/* Finds the device and port that own a local IP, through a temporary rdma_cm id. */
static int find_port_by_addr(const struct sockaddr *addr, char *dev_name, size_t dev_len,
                             uint8_t *port_num)
{
    struct sockaddr_storage local;
    struct rdma_cm_id *id = NULL;
    char text[INET6_ADDRSTRLEN + 16];
    int err;

    if (addr->sa_family != AF_INET && addr->sa_family != AF_INET6)
        return rdps__set_err(RDPS_EINVAL, "bind address family %d is not IPv4 or IPv6",
                             addr->sa_family);
    memset(&local, 0, sizeof(local));
    memcpy(&local, addr, sockaddr_len(addr));
    /* Port 0: only the device is wanted here; addr/ binds the real CM port later. */
    if (local.ss_family == AF_INET)
        ((struct sockaddr_in *)&local)->sin_port = 0;
    else
        ((struct sockaddr_in6 *)&local)->sin6_port = 0;

    if (rdma_create_id(NULL, &id, NULL, RDMA_PS_UDP) != 0) {
        err = rdps__errno_code(errno);
        return rdps__set_err(err, "rdma_create_id: %s (is rdma_ucm loaded?)", strerror(errno));
    }
    if (rdma_bind_addr(id, (struct sockaddr *)&local) != 0) {
        int saved = errno;
        rdma_destroy_id(id);
        return rdps__set_err(RDPS_EADDRNOTAVAIL, "no RDMA device owns address %s (%s)",
                             addr_text(addr, text, sizeof(text)), strerror(saved));
    }
    if (id->verbs == NULL) {
        rdma_destroy_id(id);
        return rdps__set_err(RDPS_ENODEV, "address %s is not on an RDMA device",
                             addr_text(addr, text, sizeof(text)));
    }
    snprintf(dev_name, dev_len, "%s", ibv_get_device_name(id->verbs->device));
    *port_num = id->port_num;
    rdma_destroy_id(id);
    return 0;
}

/* Opens `name` (or every device in turn when NULL) and picks `want_port` or the first ACTIVE one.
 */
static int open_device_port(const char *name, uint8_t want_port, struct ibv_context **out_ctx,
                            uint8_t *out_port, struct ibv_port_attr *out_attr)
{
    int num = 0;
    struct ibv_device **list = ibv_get_device_list(&num);
    int err = 0;
    bool found_name = false;
    char down_detail[160] = "";

    if (list == NULL && (errno == ENOSYS || errno == ENOENT))
        return rdps__set_err(RDPS_ENODEV, "no RDMA devices: this kernel has no RDMA support (%s)",
                             strerror(errno));
    if (list == NULL)
        return rdps__set_err(rdps__errno_code(errno), "ibv_get_device_list: %s", strerror(errno));
    if (num == 0) {
        ibv_free_device_list(list);
        return rdps__set_err(
            RDPS_ENODEV, "no RDMA devices found (load rdma_rxe and add a link, or an HCA driver)");
    }
    for (int i = 0; i < num; i++) {
        const char *dev_name = ibv_get_device_name(list[i]);
        if (name != NULL && strcmp(dev_name, name) != 0)
            continue;
        found_name = true;
        struct ibv_context *ctx = ibv_open_device(list[i]);
        if (ctx == NULL) {
            err = rdps__set_err(rdps__errno_code(errno), "ibv_open_device(%s): %s", dev_name,
                                strerror(errno));
            continue;
        }
        struct ibv_device_attr dev_attr;
        if (ibv_query_device(ctx, &dev_attr) != 0) {
            err = rdps__set_err(rdps__errno_code(errno), "ibv_query_device(%s): %s", dev_name,
                                strerror(errno));
            ibv_close_device(ctx);
            continue;
        }
        if (want_port != 0 && want_port > dev_attr.phys_port_cnt) {
            err = rdps__set_err(RDPS_ENODEV, "device %s has no port %u (it has %u)", dev_name,
                                want_port, dev_attr.phys_port_cnt);
            ibv_close_device(ctx);
            continue;
        }
        for (uint8_t p = 1; p <= dev_attr.phys_port_cnt; p++) {
            struct ibv_port_attr attr;
            if (want_port != 0 && p != want_port)
                continue;
            if (ibv_query_port(ctx, p, &attr) != 0)
                continue;
            if (attr.state == IBV_PORT_ACTIVE) {
                *out_ctx = ctx;
                *out_port = p;
                *out_attr = attr;
                ibv_free_device_list(list);
                return 0;
            }
            snprintf(down_detail, sizeof(down_detail), "%s port %u is %s", dev_name, p,
                     ibv_port_state_str(attr.state));
        }
        ibv_close_device(ctx);
    }
    ibv_free_device_list(list);
    if (name != NULL && !found_name)
        return rdps__set_err(RDPS_ENODEV, "RDMA device '%s' not found", name);
    if (down_detail[0] != '\0')
        return rdps__set_err(RDPS_ENETDOWN, "no ACTIVE port: %s", down_detail);
    if (err != 0)
        return err;
    return rdps__set_err(RDPS_ENODEV, "no ACTIVE RDMA port found");
}

static bool gid_is_v4_mapped(const union ibv_gid *gid)
{
    static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return memcmp(gid->raw, prefix, sizeof(prefix)) == 0;
}

static bool gid_matches_addr(const union ibv_gid *gid, const struct sockaddr *sa)
{
    if (sa == NULL)
        return false;
    if (sa->sa_family == AF_INET)
        return gid_is_v4_mapped(gid) &&
               memcmp(gid->raw + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4) == 0;
    if (sa->sa_family == AF_INET6)
        return memcmp(gid->raw, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16) == 0;
    return false;
}

/*
 * On RoCE the GID picks the wire format: prefer the RoCE v2 GID of the bind
 * address, else the first RoCE v2 IPv4 GID (routable, what rdma_cm uses), else
 * the first valid entry. IB uses index 0.
 */
static int choose_gid(struct verbs_transport *vt, const struct rdps_verbs_config *cfg,
                      const struct ibv_port_attr *attr)
{
    struct rdps_verbs_info *info = &vt->info;
    if (cfg->gid_index_set) {
        if (ibv_query_gid(info->verbs, info->port_num, cfg->gid_index, &info->gid) != 0)
            return rdps__set_err(RDPS_EINVAL, "GID index %u not readable on %s port %u",
                                 cfg->gid_index, info->device_name, info->port_num);
        info->gid_index = cfg->gid_index;
        return 0;
    }
    if (attr->link_layer != IBV_LINK_LAYER_ETHERNET) {
        info->gid_index = 0;
        if (ibv_query_gid(info->verbs, info->port_num, 0, &info->gid) != 0)
            return rdps__set_err(rdps__errno_code(errno), "ibv_query_gid(%s, 0): %s",
                                 info->device_name, strerror(errno));
        return 0;
    }
    int best = -1, best_rank = 0;
    for (int i = 0; i < attr->gid_tbl_len && i < 256; i++) {
        struct ibv_gid_entry entry;
        if (ibv_query_gid_ex(info->verbs, info->port_num, (uint32_t)i, &entry, 0) != 0)
            continue;
        union ibv_gid gid;
        memcpy(gid.raw, entry.gid.raw, 16);
        int rank = 1;
        if (entry.gid_type == IBV_GID_TYPE_ROCE_V2)
            rank = gid_is_v4_mapped(&gid) ? 3 : 2;
        if (gid_matches_addr(&gid, cfg->bind_addr))
            rank += 10;
        if (rank > best_rank) {
            best = i;
            best_rank = rank;
            info->gid = gid;
        }
    }
    if (best < 0)
        return rdps__set_err(RDPS_EADDRNOTAVAIL,
                             "%s port %u has no valid GID (no IP address on its netdev?)",
                             info->device_name, info->port_num);
    info->gid_index = (uint8_t)best;
    return 0;
}

int rdps__verbs_open_port(struct verbs_transport *vt, const struct rdps_verbs_config *cfg,
                          struct ibv_device_attr *dev_attr)
{
    struct ibv_port_attr port_attr;
    char dev_name[64];
    const char *want_dev = cfg->device_name;
    uint8_t want_port = cfg->port_num;
    int err;

    memset(&port_attr, 0, sizeof(port_attr));
    if (cfg->bind_addr != NULL) {
        uint8_t addr_port = 0;
        err = find_port_by_addr(cfg->bind_addr, dev_name, sizeof(dev_name), &addr_port);
        if (err < 0)
            return err;
        if (want_dev != NULL && strcmp(want_dev, dev_name) != 0)
            return rdps__set_err(RDPS_EINVAL, "bind address is on %s, not on the requested %s",
                                 dev_name, want_dev);
        if (want_port != 0 && want_port != addr_port)
            return rdps__set_err(RDPS_EINVAL, "bind address is on port %u, not on requested %u",
                                 addr_port, want_port);
        want_dev = dev_name;
        want_port = addr_port;
    }
    err = open_device_port(want_dev, want_port, &vt->info.verbs, &vt->info.port_num, &port_attr);
    if (err < 0)
        return err;
    snprintf(vt->info.device_name, sizeof(vt->info.device_name), "%s",
             ibv_get_device_name(vt->info.verbs->device));
    if (ibv_query_device(vt->info.verbs, dev_attr) != 0)
        return rdps__set_err(rdps__errno_code(errno), "ibv_query_device: %s", strerror(errno));
    vt->info.link_layer = port_attr.link_layer;
    vt->info.lid = vt->info.link_layer == IBV_LINK_LAYER_INFINIBAND ? port_attr.lid : 0;
    vt->info.active_mtu_bytes = mtu_bytes(port_attr.active_mtu);
    /* A UD datagram carries up to one path MTU; nothing beyond the port's active MTU. */
    vt->info.max_payload = vt->info.active_mtu_bytes;
    err = choose_gid(vt, cfg, &port_attr);
    if (err < 0)
        return err;
    if (cfg->bind_addr != NULL) {
        memcpy(&vt->info.bound_addr, cfg->bind_addr, sockaddr_len(cfg->bind_addr));
        vt->info.has_bound_addr = true;
    } else if (vt->info.link_layer == IBV_LINK_LAYER_ETHERNET && gid_is_v4_mapped(&vt->info.gid)) {
        struct sockaddr_in *sin = (struct sockaddr_in *)&vt->info.bound_addr;
        sin->sin_family = AF_INET;
        memcpy(&sin->sin_addr, vt->info.gid.raw + 12, 4);
        vt->info.has_bound_addr = true;
    }
    return 0;
}
