/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_ping.c - rdps-ping: UD round-trip latency and datagram rate over the rdps verbs transport;
 * main, device and address setup, and the helpers listener and client share. */
#include <arpa/inet.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ping.h"
#include "rdps_auth.h"
#include "rdps_clock.h"
#include "rdps_error.h"
#include "tool_cli.h"

volatile sig_atomic_t ping_stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    ping_stop_requested = 1;
}

/* A resolution that timed out or found no host is tried again (address resolution rides on UD
 * too: a lost request or answer is retried), RESOLVE_ATTEMPTS times in all. */
static int resolve_state(struct ping_ctx *pc, struct rdps_addr_peer **peer,
                         const struct sockaddr_in *addr, unsigned *attempts,
                         const struct rdps_dest **dest, uint64_t deadline_ns)
{
    int state = rdps__addr_peer_state(*peer, dest);
    if ((state == RDPS_ETIMEDOUT || state == RDPS_EHOSTUNREACH) && ++*attempts < RESOLVE_ATTEMPTS &&
        rdps__clock_monotonic_ns() < deadline_ns && !ping_stop_requested) {
        rdps__addr_peer_release(*peer);
        *peer = NULL;
        int err = rdps__addr_resolve_start(pc->addr, (const struct sockaddr *)addr, peer);
        return err < 0 ? err : 0;
    }
    return state;
}

/* The groups' state: 1 all joined (a client's group is its destination), 0, or negative. */
static int groups_state(struct ping_ctx *pc)
{
    int state = 1;
    for (unsigned i = 0; i < pc->opt.ngroups && state == 1; i++) {
        const struct rdps_dest *d;
        state = rdps__addr_group_state(pc->groups[i], &d);
        if (state == 1 && !pc->opt.listen) {
            pc->dests[0] = d;
            pc->ndests = 1;
        }
    }
    return state;
}

/* Leaves the groups: --transport auto found them unjoinable (the client pings --peers). */
static void drop_groups(struct ping_ctx *pc, const char *why)
{
    for (unsigned i = 0; i < pc->opt.ngroups; i++) {
        rdps__addr_leave(pc->groups[i]);
        pc->groups[i] = NULL;
    }
    fprintf(stderr, PROG ": %s did not join (%s): going on by unicast%s\n",
            pc->opt.ngroups == 1 ? pc->opt.groups[0] : "the groups", why,
            pc->opt.listen ? " only" : " to --peers");
    pc->opt.ngroups = 0;
    pc->fell_back = true;
}

static int wait_ready(struct ping_ctx *pc, uint64_t deadline_ns, const char *what)
{
    const struct options *o = &pc->opt;
    uint64_t auto_until = rdps__clock_monotonic_ns() + AUTO_JOIN_NS;
    for (;;) {
        int state = 1;
        int err = rdps__addr_process(pc->addr);
        if (err < 0) {
            tool_error(PROG, "rdma_cm events: %s", rdps_last_error_message());
            return err;
        }
        if (pc->peer != NULL) {
            state = resolve_state(pc, &pc->peer, &pc->peer_addr, &pc->resolve_attempts,
                                  &pc->dests[0], deadline_ns);
            pc->ndests = 1;
        }
        for (unsigned i = 0; i < o->npeers && pc->peers[i] != NULL && state >= 0; i++) {
            int st = resolve_state(pc, &pc->peers[i], &o->peers[i], &pc->peer_attempts[i],
                                   &pc->dests[i], deadline_ns);
            state = st < 0 ? st : st == 0 ? 0 : state;
        }
        if (o->npeers > 0 && state == 1)
            pc->ndests = o->npeers;
        if (state >= 0 && o->ngroups > 0) {
            int gs = groups_state(pc);
            /* auto: a group that fails, or does not join in time, is left for unicast. */
            if (o->transport == RDPS_TRANSPORT_AUTO &&
                (gs < 0 || (gs == 0 && rdps__clock_monotonic_ns() > auto_until))) {
                drop_groups(pc, gs < 0 ? rdps_last_error_message() : "timed out");
                continue;
            }
            state = gs < 0 ? gs : gs == 0 ? 0 : state;
        }
        if (state == 1)
            return 0;
        if (state < 0) {
            /* addr/'s detail message already names the peer or group. */
            if (rdps_last_error_message()[0] != '\0')
                tool_error(PROG, "%s", rdps_last_error_message());
            else
                tool_error(PROG, "%s: %s", what, rdps_strerror(state));
            return state;
        }
        if (ping_stop_requested || rdps__clock_monotonic_ns() > deadline_ns) {
            tool_error(PROG, "%s: no answer in time", what);
            return RDPS_ETIMEDOUT;
        }
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

/*
 * With a domain key (--key-file, $RDPS_DOMAIN_KEY_FILE) every datagram goes through the
 * authenticating interceptor, as a keyed ctx's do: sealed, verified, replays of echoes dropped.
 * The addressing layer keeps the verbs transport underneath.
 */
static int wrap_keyed(struct ping_ctx *pc)
{
    const struct options *o = &pc->opt;
    uint8_t key[RDPS_DOMAIN_KEY_BYTES];
    uint32_t key_id = 1;
    int keyed = tool_key_load(PROG, &o->key, key, &key_id);
    if (keyed < 0)
        return TOOL_EXIT_USAGE;
    if (keyed == 0)
        return TOOL_EXIT_OK;
    struct rdps_auth_config ac = {.key = key, .key_id = key_id, .encrypt = o->key.encrypt};
    struct rdps_transport *wrapped;
    int err = rdps__auth_transport_create(pc->t, &ac, &wrapped);
    memset(key, 0, sizeof(key));
    if (err < 0) {
        tool_error(PROG, "%s", rdps_last_error_message());
        return TOOL_EXIT_FAILED;
    }
    pc->t = wrapped;
    pc->info.max_payload -= RDPS_AUTH_TRAILER_LEN;
    if (!o->listen && (o->size < RDPS_AUTH_HEADER_LEN || o->size > pc->info.max_payload)) {
        tool_error(PROG, "keyed: size %llu outside %u..%u (the trailer takes %u bytes)",
                   (unsigned long long)o->size, RDPS_AUTH_HEADER_LEN, pc->info.max_payload,
                   RDPS_AUTH_TRAILER_LEN);
        return TOOL_EXIT_USAGE;
    }
    return TOOL_EXIT_OK;
}

static int setup(struct ping_ctx *pc)
{
    struct options *o = &pc->opt;
    struct sockaddr_in bind_sin, peer, groups[MAX_GROUPS];
    struct rdps_verbs_config vcfg;
    int err;

    /* Every address is checked before the device is touched. */
    for (unsigned i = 0; i < o->ngroups; i++) {
        if (!ping_parse_ipv4(o->groups[i], 0, &groups[i]) || strchr(o->groups[i], ':') != NULL ||
            !IN_MULTICAST(ntohl(groups[i].sin_addr.s_addr))) {
            tool_error(PROG, "bad group '%s': need an IPv4 multicast address (224.0.0.0/4)",
                       o->groups[i]);
            return TOOL_EXIT_USAGE;
        }
    }
    if (o->target != NULL && !ping_parse_ipv4(o->target, o->port, &peer)) {
        tool_error(PROG, "bad host '%s': need a numeric IPv4 HOST_IP[:PORT]", o->target);
        return TOOL_EXIT_USAGE;
    }

    memset(&vcfg, 0, sizeof(vcfg));
    vcfg.device_name = o->device;
    if (o->bind_ip != NULL) {
        if (!ping_parse_ipv4(o->bind_ip, 0, &bind_sin) || strchr(o->bind_ip, ':') != NULL) {
            tool_error(PROG, "bad bind address '%s': need a numeric IPv4 address", o->bind_ip);
            return TOOL_EXIT_USAGE;
        }
        vcfg.bind_addr = (struct sockaddr *)&bind_sin;
    }
    if (o->flood || o->sink) {
        /* Deeper queues so the rate is bounded by the device, not by our pools. */
        vcfg.send_slots = 512;
        vcfg.recv_slots = 1024;
    }
    if (ping_is_local_device(o->device)) {
        int rc = ping_setup_local(pc, groups, o->target != NULL ? &peer : NULL);
        return rc != TOOL_EXIT_OK ? rc : wrap_keyed(pc);
    }
    err = rdps__verbs_transport_create(&vcfg, &pc->t);
    if (err < 0) {
        tool_error(PROG, "%s%s", rdps_last_error_message(),
                   err == RDPS_ENODEV ? "; without RDMA: tools/rxe-vm (QEMU guests with "
                                        "soft-RoCE), or the tools on the local device (-d local)"
                                      : "");
        return TOOL_EXIT_FAILED;
    }
    rdps__verbs_transport_info(pc->t, &pc->info);
    if (!o->listen && o->size > pc->info.max_payload) {
        tool_error(PROG, "size %llu exceeds max_payload %u of %s port %u (its active MTU)",
                   (unsigned long long)o->size, pc->info.max_payload, pc->info.device_name,
                   pc->info.port_num);
        return TOOL_EXIT_USAGE;
    }
    struct rdps_addr_config acfg = {
        .transport = pc->t,
        .cm_port = o->listen ? o->port : RDPS_ADDR_NO_LISTEN,
    };
    err = rdps__addr_create(&acfg, &pc->addr);
    if (err < 0) {
        tool_error(PROG, "%s", rdps_last_error_message());
        return TOOL_EXIT_FAILED;
    }
    if ((err = wrap_keyed(pc)) != TOOL_EXIT_OK)
        return err;
    uint64_t deadline =
        rdps__clock_monotonic_ns() + (o->timeout_s ? o->timeout_s : 30) * 1000000000ull;
    /* A client with --group and --peers uses one of them: the group (multicast, auto while it
     * joins) or the peers (unicast); a unicast listener joins no group. */
    bool use_groups = o->transport != RDPS_TRANSPORT_UNICAST;
    bool use_peers = o->npeers > 0 && (o->ngroups == 0 || o->transport != RDPS_TRANSPORT_MULTICAST);
    if (!use_groups)
        o->ngroups = 0;
    for (unsigned i = 0; i < o->ngroups; i++) {
        err =
            rdps__addr_join_start(pc->addr, (struct sockaddr *)&groups[i],
                                  o->listen ? RDPS_JOIN_FULL : RDPS_JOIN_SEND_ONLY, &pc->groups[i]);
        if (err < 0 && o->transport == RDPS_TRANSPORT_AUTO) {
            drop_groups(pc, rdps_last_error_message());
            break;
        }
        if (err < 0) {
            tool_error(PROG, "join %s: %s", o->groups[i], rdps_last_error_message());
            return TOOL_EXIT_FAILED;
        }
    }
    /* auto with both: the peers are pinged only if the group falls through. */
    if (use_peers && o->ngroups > 0 && o->transport == RDPS_TRANSPORT_AUTO) {
        snprintf(pc->target_text, sizeof(pc->target_text), "group %s", o->groups[0]);
        err = wait_ready(pc, deadline, pc->target_text);
        if (err < 0)
            return TOOL_EXIT_FAILED;
        use_peers = pc->fell_back;
    }
    if (use_peers && !o->listen) {
        for (unsigned i = 0; i < o->npeers; i++) {
            err =
                rdps__addr_resolve_start(pc->addr, (struct sockaddr *)&o->peers[i], &pc->peers[i]);
            if (err < 0) {
                tool_error(PROG, "resolve %s: %s", inet_ntoa(o->peers[i].sin_addr),
                           rdps_last_error_message());
                return TOOL_EXIT_FAILED;
            }
        }
        snprintf(pc->target_text, sizeof(pc->target_text), "%u peer%s (--peers)", o->npeers,
                 o->npeers == 1 ? "" : "s");
    }
    pc->fanout = o->ngroups > 0 || (use_peers && o->npeers > 0);
    if (use_peers && o->ngroups == 0 && o->expect == 0)
        o->expect = o->npeers; /* a ping is answered once every listener echoed it */
    if (o->target != NULL) {
        snprintf(pc->target_text, sizeof(pc->target_text), "%s:%u", inet_ntoa(peer.sin_addr),
                 ntohs(peer.sin_port));
        pc->peer_addr = peer;
        err = rdps__addr_resolve_start(pc->addr, (struct sockaddr *)&peer, &pc->peer);
        if (err < 0) {
            tool_error(PROG, "resolve %s: %s", pc->target_text, rdps_last_error_message());
            return TOOL_EXIT_FAILED;
        }
    } else if (o->ngroups > 0) {
        snprintf(pc->target_text, sizeof(pc->target_text), "group %s", o->groups[0]);
    }
    if (!use_peers)
        o->npeers = 0; /* not pinged: wait_ready resolves none */
    err = wait_ready(pc, deadline, o->listen ? "joining groups" : pc->target_text);
    return err < 0 ? TOOL_EXIT_FAILED : TOOL_EXIT_OK;
}

static void teardown(struct ping_ctx *pc)
{
    for (unsigned i = 0; i < pc->opt.npeers && !pc->local; i++)
        if (pc->peers[i] != NULL)
            rdps__addr_peer_release(pc->peers[i]);
    for (unsigned i = 0; i < pc->opt.ngroups && !pc->local; i++) {
        if (pc->groups[i] != NULL)
            rdps__addr_leave(pc->groups[i]);
    }
    if (pc->peer != NULL)
        rdps__addr_peer_release(pc->peer);
    rdps__addr_destroy(pc->addr);
    if (pc->t != NULL)
        pc->t->ops->destroy(pc->t);
}

/* Claims a send buffer, reaping completions while the pool is exhausted (bounded wait). */
int ping_claim_retry(struct rdps_transport *t, struct rdps_tx_buf *buf, uint64_t limit_ns)
{
    struct rdps_rx_datagram none[1];
    uint64_t deadline = 0;
    for (;;) {
        int err = t->ops->claim(t, buf);
        if (err != RDPS_EAGAIN)
            return err;
        if (deadline == 0)
            deadline = rdps__clock_monotonic_ns() + limit_ns;
        else if (rdps__clock_monotonic_ns() > deadline)
            return RDPS_EAGAIN;
        int n = t->ops->poll(t, none, 0); /* max 0: reap send completions only */
        if (n < 0)
            return n;
    }
}

/*
 * Nothing was received. Busy-polling yields the CPU every few empty polls
 * (one vCPU is common in test guests: the peer must run). With --event: first arm the completion
 * channel and let the caller poll once more (a completion may have landed
 * before the arm), then sleep on the fd.
 */
void ping_idle(struct ping_ctx *pc, int timeout_ms)
{
    if (!pc->opt.event) {
        /* Spin like perftest, but yield now and then so a peer on the same CPU can answer. */
        if (++pc->idle_spins % 16 == 0)
            sched_yield();
        return;
    }
    if (!pc->armed) {
        if (pc->t->ops->arm(pc->t) >= 0)
            pc->armed = true;
        return;
    }
    struct pollfd pfd = {.fd = pc->t->ops->event_fd(pc->t), .events = POLLIN};
    (void)poll(&pfd, 1, timeout_ms);
    pc->armed = false;
}

int main(int argc, char **argv)
{
    tool_cli_init(argv);
    struct ping_ctx pc;
    memset(&pc, 0, sizeof(pc));
    int rc = ping_parse_args(argc, argv, &pc.opt);
    if (rc != TOOL_EXIT_OK) {
        tool_usage_hint(PROG);
        return rc;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    rc = setup(&pc);
    if (rc == TOOL_EXIT_USAGE)
        tool_usage_hint(PROG);
    if (rc == TOOL_EXIT_OK)
        rc = pc.opt.listen ? ping_run_listener(&pc) : ping_run_client(&pc);
    teardown(&pc);
    return rc;
}
