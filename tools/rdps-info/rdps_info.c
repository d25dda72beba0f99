/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_info.c - rdps-info: RDMA devices, ports, link layer, MTU, GID table, and the SA view of a
 * group on IB. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <ifaddrs.h>
#include <infiniband/verbs.h>
#include <net/if.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <time.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdps_addr.h"
#include "rdps_error.h"
#include "rdps_local.h"
#include "tool_cli.h"
#include "tool_json.h"

#define PROG          "rdps-info"
#define MAX_GIDS      256
#define MAX_SA_RECS   64
#define SA_TIMEOUT_MS 2000
/* The group a join test joins: rdps's discovery group (rdps_config.control_group's default). */
#define JOIN_TEST_GROUP      "239.192.0.1"
#define JOIN_TEST_TIMEOUT_MS 3000

struct options {
    const char *device;
    unsigned port; /* 0: all */
    const char *group;
    bool json;
    bool no_join; /* --no-join-test */
};

/* ---- names ------------------------------------------------------------------------------ */

static const char *port_state_name(enum ibv_port_state s)
{
    switch (s) {
    case IBV_PORT_DOWN:
        return "PORT_DOWN";
    case IBV_PORT_INIT:
        return "PORT_INIT";
    case IBV_PORT_ARMED:
        return "PORT_ARMED";
    case IBV_PORT_ACTIVE:
        return "PORT_ACTIVE";
    case IBV_PORT_ACTIVE_DEFER:
        return "PORT_ACTIVE_DEFER";
    default:
        return "PORT_NOP";
    }
}

static const char *phys_state_name(uint8_t s)
{
    static const char *const names[] = {"NOP",
                                        "SLEEP",
                                        "POLLING",
                                        "DISABLED",
                                        "PORT_CONFIGURATION_TRAINING",
                                        "LINK_UP",
                                        "LINK_ERROR_RECOVERY",
                                        "PHY_TEST"};
    return s < sizeof(names) / sizeof(names[0]) ? names[s] : "UNKNOWN";
}

static const char *link_layer_name(uint8_t ll)
{
    switch (ll) {
    case IBV_LINK_LAYER_INFINIBAND:
    case IBV_LINK_LAYER_UNSPECIFIED: /* old kernels: IB */
        return "InfiniBand";
    case IBV_LINK_LAYER_ETHERNET:
        return "Ethernet";
    default:
        return "unknown";
    }
}

static const char *width_name(uint8_t w)
{
    switch (w) {
    case 1:
        return "1X";
    case 2:
        return "4X";
    case 4:
        return "8X";
    case 8:
        return "12X";
    case 16:
        return "2X";
    default:
        return "?";
    }
}

static const char *speed_name(uint32_t s)
{
    switch (s) {
    case 1:
        return "2.5 Gb/s (SDR)";
    case 2:
        return "5 Gb/s (DDR)";
    case 4:
    case 8:
        return "10 Gb/s (QDR/FDR10)";
    case 16:
        return "14 Gb/s (FDR)";
    case 32:
        return "25 Gb/s (EDR)";
    case 64:
        return "50 Gb/s (HDR)";
    case 128:
        return "100 Gb/s (NDR)";
    default:
        return "?";
    }
}

static const char *gid_type_name(uint32_t type)
{
    switch (type) {
    case IBV_GID_TYPE_IB:
        return "IB";
    case IBV_GID_TYPE_ROCE_V1:
        return "RoCE v1";
    case IBV_GID_TYPE_ROCE_V2:
        return "RoCE v2";
    default:
        return "unknown";
    }
}

static const char *node_type_name(enum ibv_node_type t)
{
    switch (t) {
    case IBV_NODE_CA:
        return "CA";
    case IBV_NODE_SWITCH:
        return "switch";
    case IBV_NODE_ROUTER:
        return "router";
    case IBV_NODE_RNIC:
        return "RNIC";
    default:
        return "other";
    }
}

static void guid_text(__be64 guid, char *buf, size_t len)
{
    uint64_t g = be64toh(guid);
    snprintf(buf, len, "%04x:%04x:%04x:%04x", (unsigned)(g >> 48) & 0xffff,
             (unsigned)(g >> 32) & 0xffff, (unsigned)(g >> 16) & 0xffff, (unsigned)g & 0xffff);
}

/* ---- GID table: ibv_query_gid_table, else sysfs gid_attrs ------------------------------- */

struct gid_row {
    unsigned index;
    uint8_t gid[16];
    char type[16];
    char netdev[IF_NAMESIZE + 1];
};

static bool read_sysfs_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return false;
    bool ok = fgets(buf, (int)len, f) != NULL;
    fclose(f);
    if (ok)
        buf[strcspn(buf, "\n")] = '\0';
    return ok;
}

static int gid_table_sysfs(struct ibv_context *ctx, const char *dev, uint8_t port, int table_len,
                           struct gid_row *rows, int max)
{
    static const uint8_t zero[16];
    int n = 0;
    for (int i = 0; i < table_len && n < max; i++) {
        union ibv_gid gid;
        if (ibv_query_gid(ctx, port, i, &gid) != 0 || memcmp(gid.raw, zero, 16) == 0)
            continue;
        struct gid_row *r = &rows[n++];
        char path[256];
        memset(r, 0, sizeof(*r));
        r->index = (unsigned)i;
        memcpy(r->gid, gid.raw, 16);
        snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%u/gid_attrs/types/%d", dev,
                 port, i);
        if (!read_sysfs_line(path, r->type, sizeof(r->type)))
            snprintf(r->type, sizeof(r->type), "IB");
        else if (strcmp(r->type, "IB/RoCE v1") == 0)
            snprintf(r->type, sizeof(r->type), "RoCE v1");
        snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%u/gid_attrs/ndevs/%d", dev,
                 port, i);
        if (!read_sysfs_line(path, r->netdev, sizeof(r->netdev)))
            r->netdev[0] = '\0';
    }
    return n;
}

static int gid_table(struct ibv_context *ctx, const char *dev, uint8_t port, uint8_t link_layer,
                     int table_len, struct gid_row *rows, int max)
{
    struct ibv_gid_entry entries[MAX_GIDS];
    ssize_t got = ibv_query_gid_table(ctx, entries, MAX_GIDS, 0);
    if (got < 0)
        return gid_table_sysfs(ctx, dev, port, table_len, rows, max);
    int n = 0;
    for (ssize_t i = 0; i < got && n < max; i++) {
        if (entries[i].port_num != port)
            continue;
        struct gid_row *r = &rows[n++];
        memset(r, 0, sizeof(*r));
        r->index = entries[i].gid_index;
        memcpy(r->gid, entries[i].gid.raw, 16);
        /* Some providers report type IB for RoCE v1 entries; the link layer tells them apart. */
        if (entries[i].gid_type == IBV_GID_TYPE_IB && link_layer == IBV_LINK_LAYER_ETHERNET)
            snprintf(r->type, sizeof(r->type), "RoCE v1");
        else
            snprintf(r->type, sizeof(r->type), "%s", gid_type_name(entries[i].gid_type));
        if (entries[i].ndev_ifindex == 0 ||
            if_indextoname(entries[i].ndev_ifindex, r->netdev) == NULL)
            r->netdev[0] = '\0';
    }
    return n;
}

/* ---- the SA view of a group ------------------------------------------------------------- */

/* --group: an IPv4 group (mapped as rdma_cm maps it), an MGID in IPv6 notation, or "all". */
static int group_mgid(const char *text, uint16_t pkey, uint8_t mgid[16], bool *all)
{
    struct in_addr v4;
    *all = strcmp(text, "all") == 0;
    if (*all)
        return 0;
    if (inet_pton(AF_INET, text, &v4) == 1) {
        if (!IN_MULTICAST(ntohl(v4.s_addr)))
            return -1;
        rdps__ib_mgid_from_ipv4(ntohl(v4.s_addr), pkey, 2, mgid);
        return 0;
    }
    if (inet_pton(AF_INET6, text, mgid) == 1 && mgid[0] == 0xff)
        return 0;
    return -1;
}

static void report_sa(struct tool_json *j, struct ibv_context *ctx, const char *dev, uint8_t port,
                      const struct ibv_port_attr *pa, const struct options *opt)
{
    char gidtxt[INET6_ADDRSTRLEN];

    if (pa->link_layer == IBV_LINK_LAYER_ETHERNET) {
        static const char reason[] =
            "no SA on Ethernet link layer (RoCE has no subnet administrator; "
            "multicast membership is kept by IGMP/MLD)";
        if (j != NULL) {
            tool_json_object_begin(j, "sa");
            tool_json_bool(j, "available", false);
            tool_json_str(j, "reason", reason);
            if (opt->group != NULL) {
                struct in_addr v4;
                tool_json_str(j, "group", opt->group);
                /* What rdma_cm joins on RoCE: the IPv4-mapped address as MGID. */
                if (inet_pton(AF_INET, opt->group, &v4) == 1) {
                    uint8_t mgid[16] = {[10] = 0xff, [11] = 0xff};
                    memcpy(mgid + 12, &v4, 4);
                    inet_ntop(AF_INET6, mgid, gidtxt, sizeof(gidtxt));
                    tool_json_str(j, "roce_mgid", gidtxt);
                }
            }
            tool_json_object_end(j);
        } else {
            printf("        SA: %s\n", reason);
        }
        return;
    }

    if (opt->group == NULL) {
        if (j != NULL) {
            tool_json_object_begin(j, "sa");
            tool_json_bool(j, "available", pa->sm_lid != 0);
            tool_json_i64(j, "sm_lid", pa->sm_lid);
            tool_json_object_end(j);
        } else {
            printf("        SA: at SM LID 0x%04x (--group ADDR lists a group's members)\n",
                   pa->sm_lid);
        }
        return;
    }

    uint16_t pkey = 0xffff;
    __be16 pk;
    if (ibv_query_pkey(ctx, port, 0, &pk) == 0)
        pkey = ntohs(pk);
    uint8_t mgid[16];
    bool all = false;
    struct rdps_sa_mcmember recs[MAX_SA_RECS];
    int n;
    if (group_mgid(opt->group, pkey, mgid, &all) < 0)
        n = rdps__set_err(RDPS_EINVAL,
                          "--group %s is not a multicast IPv4 address, an MGID or 'all'",
                          opt->group);
    else
        n = rdps__sa_query_mcmember(dev, port, all ? NULL : mgid, SA_TIMEOUT_MS, recs, MAX_SA_RECS);
    if (j != NULL) {
        tool_json_object_begin(j, "sa");
        tool_json_bool(j, "available", n >= 0);
        tool_json_str(j, "group", opt->group);
        if (!all && n != RDPS_EINVAL) {
            inet_ntop(AF_INET6, mgid, gidtxt, sizeof(gidtxt));
            tool_json_str(j, "mgid", gidtxt);
        }
        if (n < 0) {
            tool_json_str(j, "error", rdps_err_name(n));
            tool_json_str(j, "reason", rdps_last_error_message());
        } else {
            tool_json_i64(j, "record_count", n);
            tool_json_array_begin(j, "records");
            for (int i = 0; i < n && i < MAX_SA_RECS; i++) {
                tool_json_object_begin(j, NULL);
                inet_ntop(AF_INET6, recs[i].mgid, gidtxt, sizeof(gidtxt));
                tool_json_str(j, "mgid", gidtxt);
                inet_ntop(AF_INET6, recs[i].port_gid, gidtxt, sizeof(gidtxt));
                tool_json_str(j, "port_gid", gidtxt);
                tool_json_i64(j, "mlid", recs[i].mlid);
                tool_json_i64(j, "qkey", recs[i].qkey);
                tool_json_i64(j, "mtu", rdps__ib_mtu_bytes(recs[i].mtu));
                tool_json_str(j, "rate", rdps__ib_rate_text(recs[i].rate));
                tool_json_i64(j, "pkey", recs[i].pkey);
                tool_json_i64(j, "sl", recs[i].sl);
                tool_json_i64(j, "scope", recs[i].scope);
                tool_json_i64(j, "join_state", recs[i].join_state);
                tool_json_object_end(j);
            }
            tool_json_array_end(j);
        }
        tool_json_object_end(j);
        return;
    }
    if (n < 0) {
        printf("        SA view of %s: %s (%s)\n", opt->group, rdps_strerror(n),
               rdps_last_error_message());
        return;
    }
    printf("        SA view of %s: %d record%s\n", opt->group, n, n == 1 ? "" : "s");
    for (int i = 0; i < n && i < MAX_SA_RECS; i++) {
        char pg[INET6_ADDRSTRLEN];
        inet_ntop(AF_INET6, recs[i].mgid, gidtxt, sizeof(gidtxt));
        inet_ntop(AF_INET6, recs[i].port_gid, pg, sizeof(pg));
        printf("          MGID %s MLID 0x%04x Q_Key 0x%08x MTU %u rate %s P_Key 0x%04x SL %u "
               "join state 0x%x port GID %s\n",
               gidtxt, recs[i].mlid, recs[i].qkey, rdps__ib_mtu_bytes(recs[i].mtu),
               rdps__ib_rate_text(recs[i].rate), recs[i].pkey, recs[i].sl, recs[i].join_state, pg);
    }
}

/* ---- can the port join groups? ------------------------------------------------------------ */

struct join_test {
    const char *result; /* "joined", "failed", "timed_out", "skipped" */
    char detail[160];
    char local[INET_ADDRSTRLEN];
    double ms;
};

/* An IPv4 address of the port: an IPv4-mapped GID (RoCE v2), else one of its netdevs'. */
static bool port_ipv4(const struct gid_row *rows, int ngid, struct in_addr *out)
{
    static const uint8_t v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    for (int i = 0; i < ngid; i++) {
        if (memcmp(rows[i].gid, v4_mapped, 12) == 0) {
            memcpy(&out->s_addr, rows[i].gid + 12, 4);
            return true;
        }
    }
    struct ifaddrs *ifs = NULL;
    if (getifaddrs(&ifs) != 0)
        return false;
    bool found = false;
    for (struct ifaddrs *a = ifs; a != NULL && !found; a = a->ifa_next) {
        if (a->ifa_addr == NULL || a->ifa_addr->sa_family != AF_INET)
            continue;
        for (int i = 0; i < ngid && !found; i++) {
            if (rows[i].netdev[0] != '\0' && strcmp(rows[i].netdev, a->ifa_name) == 0) {
                *out = ((const struct sockaddr_in *)a->ifa_addr)->sin_addr;
                found = true;
            }
        }
    }
    freeifaddrs(ifs);
    return found;
}

static double ms_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) * 1e3 + (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

/*
 * Joins JOIN_TEST_GROUP through rdma_cm from the port's address and leaves it: what a ctx's join
 * of a topic group does. On InfiniBand the subnet manager answers (a subnet without multicast
 * refuses or never answers); on RoCE the join is local (an IGMP report), so it says nothing of
 * whether the switches carry multicast.
 */
static void join_test(const char *dev, uint8_t port, const struct gid_row *rows, int ngid,
                      struct join_test *r)
{
    struct in_addr local;
    memset(r, 0, sizeof(*r));
    r->result = "skipped";
    if (!port_ipv4(rows, ngid, &local)) {
        snprintf(r->detail, sizeof(r->detail), "no IPv4 address on this port");
        return;
    }
    inet_ntop(AF_INET, &local, r->local, sizeof(r->local));
    struct rdma_event_channel *ch = rdma_create_event_channel();
    struct rdma_cm_id *id = NULL;
    struct sockaddr_in src = {.sin_family = AF_INET, .sin_addr = local};
    struct sockaddr_in grp = {.sin_family = AF_INET};
    inet_pton(AF_INET, JOIN_TEST_GROUP, &grp.sin_addr);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    r->result = "failed";
    if (ch == NULL || rdma_create_id(ch, &id, NULL, RDMA_PS_UDP) != 0) {
        snprintf(r->detail, sizeof(r->detail), "rdma_cm: %s", strerror(errno));
        goto out;
    }
    if (rdma_bind_addr(id, (struct sockaddr *)&src) != 0) {
        snprintf(r->detail, sizeof(r->detail), "rdma_bind_addr(%s): %s", r->local, strerror(errno));
        goto out;
    }
    if (id->verbs == NULL || strcmp(ibv_get_device_name(id->verbs->device), dev) != 0 ||
        id->port_num != port) {
        r->result = "skipped";
        snprintf(r->detail, sizeof(r->detail), "%s is not this port's address", r->local);
        goto out;
    }
    if (rdma_join_multicast(id, (struct sockaddr *)&grp, NULL) != 0) {
        snprintf(r->detail, sizeof(r->detail), "rdma_join_multicast: %s", strerror(errno));
        goto out;
    }
    struct pollfd pfd = {.fd = ch->fd, .events = POLLIN};
    int n = poll(&pfd, 1, JOIN_TEST_TIMEOUT_MS);
    struct rdma_cm_event *ev = NULL;
    if (n <= 0 || rdma_get_cm_event(ch, &ev) != 0) {
        r->result = "timed_out";
        snprintf(r->detail, sizeof(r->detail), "no answer within %d ms", JOIN_TEST_TIMEOUT_MS);
    } else if (ev->event == RDMA_CM_EVENT_MULTICAST_JOIN) {
        r->result = "joined";
    } else {
        snprintf(r->detail, sizeof(r->detail), "%s (status %d)", rdma_event_str(ev->event),
                 ev->status);
    }
    r->ms = ms_since(&t0);
    if (ev != NULL)
        rdma_ack_cm_event(ev);
    rdma_leave_multicast(id, (struct sockaddr *)&grp);
out:
    if (id != NULL)
        rdma_destroy_id(id);
    if (ch != NULL)
        rdma_destroy_event_channel(ch);
}

static void report_join(struct tool_json *j, const char *dev, uint8_t port,
                        const struct ibv_port_attr *pa, const struct gid_row *rows, int ngid,
                        const struct options *opt)
{
    bool roce = pa->link_layer == IBV_LINK_LAYER_ETHERNET;
    struct join_test r;
    if (opt->no_join) {
        memset(&r, 0, sizeof(r));
        r.result = "skipped";
        snprintf(r.detail, sizeof(r.detail), "--no-join-test");
    } else if (pa->state != IBV_PORT_ACTIVE) {
        memset(&r, 0, sizeof(r));
        r.result = "skipped";
        snprintf(r.detail, sizeof(r.detail), "port not active");
    } else {
        join_test(dev, port, rows, ngid, &r);
    }
    const char *note = roce ? "RoCE joins are local (IGMP): the switches decide whether groups "
                              "carry frames; where they do not, use --transport unicast or auto"
                            : "InfiniBand joins go to the subnet manager: a failed join means "
                              "no multicast here; use --transport unicast or auto";
    if (j != NULL) {
        tool_json_object_begin(j, "multicast");
        tool_json_str(j, "join_test", r.result);
        tool_json_str(j, "group", JOIN_TEST_GROUP);
        if (r.local[0] != '\0')
            tool_json_str(j, "local", r.local);
        if (r.detail[0] != '\0')
            tool_json_str(j, "detail", r.detail);
        tool_json_double(j, "ms", r.ms);
        tool_json_bool(j, "joins_are_local", roce);
        tool_json_object_end(j);
        return;
    }
    if (strcmp(r.result, "joined") == 0)
        printf("        multicast: can join groups (%s from %s in %.1f ms); %s\n", JOIN_TEST_GROUP,
               r.local, r.ms, note);
    else if (strcmp(r.result, "skipped") == 0)
        printf("        multicast: join test skipped: %s\n", r.detail);
    else
        printf("        multicast: CANNOT join groups (%s from %s: %s): use --transport unicast "
               "or auto, and seed peers (--peers)\n",
               JOIN_TEST_GROUP, r.local, r.detail);
}

/* ---- the local device ------------------------------------------------------------------ */

/* The host's local device (-d local): its directory, MTU, live members and joined groups. */
static int report_local(const struct options *opt)
{
    struct rdps_local_dir_info li;
    struct rdps_local_config lc = {0};
    if (strcmp(opt->device, "local:4096") == 0)
        lc.mtu = 4096;
    else if (strcmp(opt->device, "local:1024") == 0)
        lc.mtu = 1024;
    if (rdps__local_dir_info(&lc, &li) < 0) {
        fprintf(stderr, PROG ": %s\n", rdps_last_error_message());
        return TOOL_EXIT_FAILED;
    }
    if (opt->json) {
        struct tool_json j;
        tool_json_init(&j, stdout);
        tool_json_object_begin(&j, NULL);
        tool_json_str(&j, "tool", PROG);
        tool_json_array_begin(&j, "devices");
        tool_json_object_begin(&j, NULL);
        tool_json_str(&j, "name", "local");
        tool_json_str(&j, "dir", li.dir);
        tool_json_u64(&j, "mtu", li.mtu);
        tool_json_u64(&j, "members", li.members);
        tool_json_u64(&j, "groups", li.groups);
        tool_json_object_end(&j);
        tool_json_array_end(&j);
        tool_json_object_end(&j);
        tool_json_finish(&j);
    } else {
        printf("device local: the processes of this host, through %s\n", li.dir);
        printf("  MTU %u, %u members, %u groups with members\n", li.mtu, li.members, li.groups);
    }
    return TOOL_EXIT_OK;
}

/* ---- devices and ports ------------------------------------------------------------------ */

static int report_port(struct tool_json *j, struct ibv_context *ctx, const char *dev, uint8_t port,
                       const struct options *opt)
{
    struct ibv_port_attr pa;
    struct gid_row rows[MAX_GIDS];
    char gidtxt[INET6_ADDRSTRLEN];

    int rc = ibv_query_port(ctx, port, &pa);
    if (rc != 0) {
        fprintf(stderr, PROG ": %s port %u: ibv_query_port: %s\n", dev, port, strerror(rc));
        return -1;
    }
    int ngid = gid_table(ctx, dev, port, pa.link_layer, pa.gid_tbl_len, rows, MAX_GIDS);
    unsigned active_mtu = 128u << pa.active_mtu, max_mtu = 128u << pa.max_mtu;
    uint32_t speed = pa.active_speed;

    if (j != NULL) {
        tool_json_object_begin(j, NULL);
        tool_json_i64(j, "port", port);
        tool_json_str(j, "state", port_state_name(pa.state));
        tool_json_i64(j, "state_num", pa.state);
        tool_json_str(j, "phys_state", phys_state_name(pa.phys_state));
        tool_json_str(j, "link_layer", link_layer_name(pa.link_layer));
        tool_json_i64(j, "active_mtu", active_mtu);
        tool_json_i64(j, "max_mtu", max_mtu);
        tool_json_i64(j, "lid", pa.lid);
        tool_json_i64(j, "sm_lid", pa.sm_lid);
        tool_json_str(j, "width", width_name(pa.active_width));
        tool_json_str(j, "speed", speed_name(speed));
        tool_json_i64(j, "gid_table_len", pa.gid_tbl_len);
        tool_json_array_begin(j, "gids");
        for (int i = 0; i < ngid; i++) {
            tool_json_object_begin(j, NULL);
            tool_json_i64(j, "index", rows[i].index);
            inet_ntop(AF_INET6, rows[i].gid, gidtxt, sizeof(gidtxt));
            tool_json_str(j, "gid", gidtxt);
            tool_json_str(j, "type", rows[i].type);
            tool_json_str(j, "netdev", rows[i].netdev);
            tool_json_object_end(j);
        }
        tool_json_array_end(j);
        report_sa(j, ctx, dev, port, &pa, opt);
        report_join(j, dev, port, &pa, rows, ngid, opt);
        tool_json_object_end(j);
        return 0;
    }
    printf("    port %u: state %s (%s), physical state %s, link layer %s\n", port,
           port_state_name(pa.state), pa.state == IBV_PORT_ACTIVE ? "ACTIVE" : "not active",
           phys_state_name(pa.phys_state), link_layer_name(pa.link_layer));
    printf("        MTU %u active, %u max; LID 0x%04x, SM LID 0x%04x; %s x %s\n", active_mtu,
           max_mtu, pa.lid, pa.sm_lid, width_name(pa.active_width), speed_name(speed));
    printf("        GID table (%d of %d entries in use):\n", ngid, pa.gid_tbl_len);
    for (int i = 0; i < ngid; i++) {
        inet_ntop(AF_INET6, rows[i].gid, gidtxt, sizeof(gidtxt));
        printf("          [%u] %-40s %-8s %s\n", rows[i].index, gidtxt, rows[i].type,
               rows[i].netdev[0] != '\0' ? rows[i].netdev : "-");
    }
    report_sa(NULL, ctx, dev, port, &pa, opt);
    report_join(NULL, dev, port, &pa, rows, ngid, opt);
    return 0;
}

static int report_device(struct tool_json *j, struct ibv_device *device, const struct options *opt)
{
    const char *name = ibv_get_device_name(device);
    struct ibv_device_attr da;
    char guid[32], sysguid[32];
    int failed = 0;

    struct ibv_context *ctx = ibv_open_device(device);
    if (ctx == NULL) {
        fprintf(stderr, PROG ": %s: ibv_open_device: %s\n", name, strerror(errno));
        return -1;
    }
    int rc = ibv_query_device(ctx, &da);
    if (rc != 0) {
        fprintf(stderr, PROG ": %s: ibv_query_device: %s\n", name, strerror(rc));
        ibv_close_device(ctx);
        return -1;
    }
    if (opt->port > da.phys_port_cnt) {
        fprintf(stderr, PROG ": %s has %u port(s); there is no port %u\n", name, da.phys_port_cnt,
                opt->port);
        ibv_close_device(ctx);
        return -1;
    }
    guid_text(ibv_get_device_guid(device), guid, sizeof(guid));
    guid_text(da.sys_image_guid, sysguid, sizeof(sysguid));
    if (j != NULL) {
        tool_json_object_begin(j, NULL);
        tool_json_str(j, "name", name);
        tool_json_str(j, "node_type", node_type_name(device->node_type));
        tool_json_str(j, "node_guid", guid);
        tool_json_str(j, "sys_image_guid", sysguid);
        tool_json_str(j, "fw_ver", da.fw_ver);
        tool_json_i64(j, "phys_port_cnt", da.phys_port_cnt);
        tool_json_i64(j, "max_qp", da.max_qp);
        tool_json_i64(j, "max_mcast_grp", da.max_mcast_grp);
        tool_json_i64(j, "max_mcast_qp_attach", da.max_mcast_qp_attach);
        tool_json_array_begin(j, "ports");
    } else {
        printf("device %s: %s, node GUID %s, firmware %s, %u port(s)\n", name,
               node_type_name(device->node_type), guid, da.fw_ver[0] != '\0' ? da.fw_ver : "-",
               da.phys_port_cnt);
        printf("    limits: %d QPs, %d multicast groups, %d QPs per group\n", da.max_qp,
               da.max_mcast_grp, da.max_mcast_qp_attach);
    }
    for (unsigned p = 1; p <= da.phys_port_cnt; p++)
        if (opt->port == 0 || opt->port == p)
            failed |= report_port(j, ctx, name, (uint8_t)p, opt) < 0;
    if (j != NULL) {
        tool_json_array_end(j);
        tool_json_object_end(j);
    }
    ibv_close_device(ctx);
    return failed ? -1 : 0;
}

static void usage(FILE *out)
{
    fprintf(out, "Usage: " PROG " [-d DEV] [-p PORT] [--group ADDR] [--no-join-test] [--json]\n"
                 "Shows RDMA devices and ports as rdps sees them: state, link layer, active MTU,\n"
                 "GID table (type RoCE v1/v2 and netdev), whether the port can join multicast\n"
                 "groups (a join of " JOIN_TEST_GROUP " through rdma_cm, left at once), and on\n"
                 "InfiniBand the subnet administrator's records for a multicast group.\n"
                 "\n"
                 "  -d, --device DEV   only this device (e.g. rxe0, mlx5_0); local: the host's\n"
                 "                     local device (its directory, MTU, members, groups)\n"
                 "  -p, --port N       only this port (1-based)\n"
                 "  -g, --group ADDR   IB: list the SA's MCMemberRecords for ADDR (an IPv4 group,\n"
                 "                     mapped to the MGID rdma_cm uses; an MGID such as ff12::1;\n"
                 "                     or 'all'); RoCE: says there is no SA\n"
                 "      --no-join-test do not try joining a group\n"
                 "  -j, --json         one JSON document on stdout\n"
                 "  -h, --help         this text\n"
                 "      --version      the tool's and librdps's version and git revision\n"
                 "\n"
                 "Exit status: 0 ok, 1 no device or a query failed, 2 bad arguments.\n");
}

int main(int argc, char **argv)
{
    tool_cli_init(argv);
    static const struct option longopts[] = {
        {"device", required_argument, NULL, 'd'},
        {"port", required_argument, NULL, 'p'},
        {"group", required_argument, NULL, 'g'},
        {"json", no_argument, NULL, 'j'},
        {"no-join-test", no_argument, NULL, 'J'},
        {"help", no_argument, NULL, 'h'},
        TOOL_VERSION_LONG_OPTION,
        {NULL, 0, NULL, 0},
    };
    struct options opt = {0};
    int c;

    while ((c = getopt_long(argc, argv, "d:p:g:jh", longopts, NULL)) != -1) {
        switch (c) {
        case 'd':
            opt.device = optarg;
            break;
        case 'p': {
            uint64_t v;
            if (!tool_opt_u64(PROG, "--port", optarg, 1, 255, &v)) {
                tool_usage_hint(PROG);
                return TOOL_EXIT_USAGE;
            }
            opt.port = (unsigned)v;
            break;
        }
        case 'g':
            opt.group = optarg;
            break;
        case 'j':
            opt.json = true;
            break;
        case 'J':
            opt.no_join = true;
            break;
        case 'h':
            usage(stdout);
            return TOOL_EXIT_OK;
        case TOOL_OPT_VERSION:
            tool_version_exit(PROG);
        default: /* getopt printed the one-line error */
            tool_usage_hint(PROG);
            return TOOL_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        tool_error(PROG, "unexpected argument '%s'", argv[optind]);
        tool_usage_hint(PROG);
        return TOOL_EXIT_USAGE;
    }
    if (opt.group != NULL) {
        uint8_t mgid[16];
        bool all;
        if (group_mgid(opt.group, 0xffff, mgid, &all) < 0) {
            tool_error(PROG, "--group '%s' is not a multicast IPv4 address, an MGID or 'all'",
                       opt.group);
            tool_usage_hint(PROG);
            return TOOL_EXIT_USAGE;
        }
    }

    if (opt.device != NULL && strncmp(opt.device, "local", 5) == 0 &&
        (opt.device[5] == '\0' || opt.device[5] == ':'))
        return report_local(&opt);

    int num = 0;
    struct ibv_device **list = ibv_get_device_list(&num);
    if (list == NULL || num == 0) {
        fprintf(stderr,
                PROG ": no RDMA devices found (%s); load a driver, e.g. for soft-RoCE: "
                     "modprobe rdma_rxe && rdma link add rxe0 type rxe netdev eth0, or use "
                     "tools/rxe-vm; without RDMA the processes of this host meet on the local "
                     "device: -d local (rdps-info -d local shows it)\n",
                list == NULL ? strerror(errno) : "the device list is empty");
        if (list != NULL)
            ibv_free_device_list(list);
        return TOOL_EXIT_FAILED;
    }
    bool found = false;
    int failed = 0;
    struct tool_json j;
    tool_json_init(&j, stdout);
    if (opt.json) {
        tool_json_object_begin(&j, NULL);
        tool_json_str(&j, "tool", PROG);
        tool_json_array_begin(&j, "devices");
    }
    for (int i = 0; i < num; i++) {
        if (opt.device != NULL && strcmp(opt.device, ibv_get_device_name(list[i])) != 0)
            continue;
        found = true;
        failed |= report_device(opt.json ? &j : NULL, list[i], &opt) < 0;
    }
    if (opt.json) {
        tool_json_array_end(&j);
        tool_json_object_end(&j);
        tool_json_finish(&j);
    }
    if (!found) {
        fprintf(stderr, PROG ": no RDMA device named '%s'; present:", opt.device);
        for (int i = 0; i < num; i++)
            fprintf(stderr, " %s", ibv_get_device_name(list[i]));
        fputc('\n', stderr);
        failed = 1;
    }
    ibv_free_device_list(list);
    return failed ? TOOL_EXIT_FAILED : TOOL_EXIT_OK;
}
