/* SPDX-License-Identifier: BSD-2-Clause */
/* ping_local.c - rdps-ping on the local device (-d local): a member of the host's local device
 * instead of a verbs QP, hosts named by their member address (127.78.0.N), groups joined in its
 * registry; everything is ready at once (no rdma_cm). */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "ping.h"
#include "rdps_error.h"
#include "rdps_local.h"
#include "tool_cli.h"

bool ping_is_local_device(const char *device)
{
    return device != NULL && strncmp(device, "local", 5) == 0 &&
           (device[5] == '\0' || device[5] == ':');
}

/* The member at a 127.78.0.N address, as the destination of pings. */
static int resolve_member(struct ping_ctx *pc, const struct sockaddr_in *addr,
                          const struct rdps_dest **dest)
{
    int err = rdps__local_resolve(pc->t, ntohl(addr->sin_addr.s_addr), dest, NULL);
    if (err < 0)
        tool_error(PROG, "%s (a listener prints its address: rdps-ping -d local --listen)",
                   rdps_last_error_message());
    return err;
}

int ping_setup_local(struct ping_ctx *pc, const struct sockaddr_in *groups,
                     const struct sockaddr_in *peer)
{
    struct options *o = &pc->opt;
    struct rdps_local_config lc = {.send_slots = o->flood || o->sink ? 512 : 0,
                                   .recv_slots = o->flood || o->sink ? 4096 : 0};
    if (strcmp(o->device, "local:4096") == 0)
        lc.mtu = 4096;
    else if (strcmp(o->device, "local:1024") == 0)
        lc.mtu = 1024;
    else if (strcmp(o->device, "local") != 0) {
        tool_error(PROG, "device '%s': the local device is local, local:1024 or local:4096",
                   o->device);
        return TOOL_EXIT_USAGE;
    }
    if (rdps__local_create(&lc, &pc->t) < 0) {
        tool_error(PROG, "%s", rdps_last_error_message());
        return TOOL_EXIT_FAILED;
    }
    pc->local = true;
    uint32_t self = htonl(rdps__local_ipv4(pc->t));
    inet_ntop(AF_INET, &self, pc->local_member, sizeof(pc->local_member));
    snprintf(pc->info.device_name, sizeof(pc->info.device_name), "local");
    pc->info.port_num = 1;
    pc->info.qpn = rdps__local_qpn(pc->t);
    pc->info.max_payload = rdps__local_mtu(pc->t);
    if (!o->listen && o->size > pc->info.max_payload) {
        tool_error(PROG, "size %llu exceeds the local device's MTU %u (local:4096: 4 KiB)",
                   (unsigned long long)o->size, pc->info.max_payload);
        return TOOL_EXIT_USAGE;
    }
    bool use_groups = o->transport != RDPS_TRANSPORT_UNICAST && o->ngroups > 0;
    for (unsigned i = 0; use_groups && i < o->ngroups; i++) {
        uint32_t group = ntohl(groups[i].sin_addr.s_addr);
        const struct rdps_dest *d;
        int err = o->listen ? rdps__local_join(pc->t, group) : 0;
        if (err == 0)
            err = rdps__local_group_dest(pc->t, group, &d);
        if (err < 0) {
            tool_error(PROG, "join %s: %s", o->groups[i], rdps_last_error_message());
            return TOOL_EXIT_FAILED;
        }
        if (!o->listen && i == 0) {
            pc->dests[0] = d;
            pc->ndests = 1;
            snprintf(pc->target_text, sizeof(pc->target_text), "group %s", o->groups[0]);
        }
    }
    if (!use_groups)
        o->ngroups = 0;
    bool use_peers = o->npeers > 0 && !use_groups && !o->listen;
    for (unsigned i = 0; use_peers && i < o->npeers; i++)
        if (resolve_member(pc, &o->peers[i], &pc->dests[i]) < 0)
            return TOOL_EXIT_FAILED;
    if (use_peers) {
        pc->ndests = o->npeers;
        snprintf(pc->target_text, sizeof(pc->target_text), "%u peer%s (--peers)", o->npeers,
                 o->npeers == 1 ? "" : "s");
        if (o->expect == 0)
            o->expect = o->npeers;
    } else {
        o->npeers = 0;
    }
    pc->fanout = use_groups || use_peers;
    if (peer != NULL && !o->listen) {
        snprintf(pc->target_text, sizeof(pc->target_text), "%s", inet_ntoa(peer->sin_addr));
        if (resolve_member(pc, peer, &pc->dests[0]) < 0)
            return TOOL_EXIT_FAILED;
        pc->ndests = 1;
    }
    return TOOL_EXIT_OK;
}
