/* SPDX-License-Identifier: BSD-2-Clause */
/* ping.h - rdps-ping's parts (options, setup, listener, client) and the state they share. */
#ifndef RDPS_PING_H
#define RDPS_PING_H

#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ctx_options.h"
#include "rdps_addr.h"
#include "rdps_verbs_transport.h"

#define PROG       "rdps-ping"
#define MAX_GROUPS 16
#define MAX_PEERS  16
/* --transport auto: how long a group join may take before the client pings --peers instead. */
#define AUTO_JOIN_NS     3000000000ull
#define MAX_RESPONDER    256
#define RX_BATCH         32
#define RESOLVE_ATTEMPTS 3

/* Set by SIGINT/SIGTERM: every loop ends at its next check. */
extern volatile sig_atomic_t ping_stop_requested;

struct options {
    bool listen, sink, flood, json, event;
    const char *target; /* HOST[:PORT] */
    const char *groups[MAX_GROUPS];
    unsigned ngroups;
    /* --peers: listeners pinged by unicast, each ping one chain from one buffer to all of them. */
    const char *peer_list;
    struct sockaddr_in peers[MAX_PEERS];
    unsigned npeers;
    rdps_transport_mode transport; /* --transport: group, peers, or the group falling back */
    bool transport_set;
    const char *bind_ip, *device;
    uint16_t port;
    uint64_t count;
    uint64_t size;
    uint64_t interval_us;
    bool interval_set;
    uint64_t timeout_s;
    uint64_t wait_ms;
    uint64_t expect;
    uint64_t batch;
    struct tool_key_options key; /* --key-file, --encrypt (tools/common) */
};

struct ping_ctx {
    struct options opt;
    struct rdps_transport *t;
    struct rdps_verbs_info info;
    struct rdps_addr *addr;
    struct rdps_addr_peer *peer;
    struct rdps_addr_group *groups[MAX_GROUPS];
    struct rdps_addr_peer *peers[MAX_PEERS];
    unsigned peer_attempts[MAX_PEERS];
    /* Where each ping goes: the host, the group, or every --peers listener (fan-out). */
    const struct rdps_dest *dests[MAX_PEERS];
    unsigned ndests;
    bool fanout;    /* several may answer a ping: a group or --peers */
    bool fell_back; /* --transport auto: the group did not join, --peers are pinged */
    char target_text[80];
    struct sockaddr_in peer_addr;
    unsigned resolve_attempts;
    unsigned idle_spins;
    bool armed; /* --event: completion notification requested since the last wakeup */
    /* -d local: the local device; no rdma_cm (addr is NULL): hosts are members (127.78.0.N),
     * groups the registry's; local_member is our own address. */
    bool local;
    char local_member[16];
};

/* ping_options.c: parses argv into *o; returns TOOL_EXIT_OK or TOOL_EXIT_USAGE (error printed). */
int ping_parse_args(int argc, char **argv, struct options *o);
/* Numeric IPv4 "HOST[:PORT]" (no name lookups). */
bool ping_parse_ipv4(const char *text, uint16_t default_port, struct sockaddr_in *out);

/* ping_local.c: setup on the local device (-d local): transport, groups, host and peers. */
bool ping_is_local_device(const char *device);
int ping_setup_local(struct ping_ctx *pc, const struct sockaddr_in *groups,
                     const struct sockaddr_in *peer);

/* rdps_ping.c: device, addressing and waiting helpers the listener and the client share. */
int ping_claim_retry(struct rdps_transport *t, struct rdps_tx_buf *buf, uint64_t limit_ns);
void ping_idle(struct ping_ctx *pc, int timeout_ms);

/* ping_listen.c / ping_client.c: the two modes; each returns the exit status. */
int ping_run_listener(struct ping_ctx *pc);
int ping_run_client(struct ping_ctx *pc);

#endif /* RDPS_PING_H */
