/* rdps_ping.c - rdps-ping: UD round-trip latency and datagram rate over the rdps verbs transport.
 */
#include "ping_wire.h"
#include "rdps_addr.h"
#include "rdps_error.h"
#include "rdps_verbs_transport.h"
#include "tool_util.h"

#include <arpa/inet.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG             "rdps-ping"
#define MAX_GROUPS       16
#define MAX_RESPONDER    256
#define RX_BATCH         32
#define RESOLVE_ATTEMPTS 3

static volatile sig_atomic_t stop_requested;

struct options {
    bool listen, sink, flood, json, event;
    const char *target; /* HOST[:PORT] */
    const char *groups[MAX_GROUPS];
    unsigned ngroups;
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
};

struct ping_ctx {
    struct options opt;
    struct rdps_transport *t;
    struct rdps_verbs_info info;
    struct rdps_addr *addr;
    struct rdps_addr_peer *peer;
    struct rdps_addr_group *groups[MAX_GROUPS];
    const struct rdps_dest *dest;
    char target_text[80];
    struct sockaddr_in peer_addr;
    unsigned resolve_attempts;
    unsigned idle_spins;
    bool armed; /* --event: completion notification requested since the last wakeup */
};

static void usage(FILE *out)
{
    fprintf(out,
            "Usage:\n"
            "  " PROG " --listen [--group ADDR]... [-b BIND_IP | -d DEV] [--port P] [--sink]\n"
            "            [--timeout S] [--event] [--json]\n"
            "  " PROG " (HOST_IP[:PORT] | --group ADDR) [-n COUNT] [-s SIZE] [-i INTERVAL_US]\n"
            "            [--expect K] [--wait-ms MS] [--flood [--batch B]] [-b BIND_IP | -d DEV]\n"
            "            [--timeout S] [--event] [--json]\n"
            "\n"
            "UD round-trip latency over the rdps verbs transport (one shared UD QP).\n"
            "The listener echoes every ping to its sender (reply AH from the work completion);\n"
            "the client sends COUNT pings of SIZE bytes and prints RTT min/p50/p99/p99.9/max in\n"
            "microseconds and the loss. With --group, every listener joined to the group echoes:\n"
            "all echoes are counted (echoes per ping, distinct responders).\n"
            "\n"
            "  --listen          echo pings (until --timeout, or SIGINT/SIGTERM)\n"
            "  --sink            with --listen: count datagrams, do not echo (rate benchmark)\n"
            "  --group ADDR      multicast group (listener: join, may repeat; client: send to it)\n"
            "  -b, --bind IP     local IP: picks the RDMA device and port (through rdma_cm)\n"
            "  -d, --device DEV  RDMA device (default: the first ACTIVE port)\n"
            "  --port P          rdma_cm port the listener answers resolves on (default %d)\n"
            "  -n, --count N     pings to send (default 100)\n"
            "  -s, --size N      datagram size, 16..max_payload (default 64)\n"
            "  -i, --interval US gap between pings (default: unicast 0 = as soon as echoed,\n"
            "                    multicast 10000)\n"
            "  --expect K        multicast: go on as soon as K echoes of a ping arrived\n"
            "  --wait-ms MS      longest wait for a ping's echoes (default 1000)\n"
            "  --flood           send COUNT datagrams as fast as back-pressure allows, print\n"
            "                    datagrams/s (echoes are counted when the listener echoes)\n"
            "  --batch B         --flood: datagrams per posted work-request chain (default 16)\n"
            "  --timeout S       overall limit in seconds (default: client 60, listener none)\n"
            "  --event           sleep on the completion channel when idle instead of\n"
            "                    busy-polling (like perftest -e)\n"
            "  --json            one-line JSON summary on stdout\n"
            "  -h, --help        this text\n",
            RDPS_DEFAULT_CM_PORT);
}

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

/* ---- argument parsing ------------------------------------------------------------------ */

static bool parse_ipv4(const char *text, uint16_t default_port, struct sockaddr_in *out)
{
    char host[64];
    const char *colon = strchr(text, ':');
    size_t host_len = colon != NULL ? (size_t)(colon - text) : strlen(text);
    uint64_t port = default_port;

    if (host_len == 0 || host_len >= sizeof(host))
        return false;
    memcpy(host, text, host_len);
    host[host_len] = '\0';
    if (colon != NULL && !tool_parse_u64(colon + 1, 1, 65535, false, &port))
        return false;
    memset(out, 0, sizeof(*out));
    out->sin_family = AF_INET;
    out->sin_port = htons((uint16_t)port);
    /* Numeric addresses only: rdps-ping never asks a name server. */
    return inet_pton(AF_INET, host, &out->sin_addr) == 1;
}

static int parse_args(int argc, char **argv, struct options *o)
{
    enum {
        OPT_LISTEN = 256,
        OPT_SINK,
        OPT_GROUP,
        OPT_PORT,
        OPT_TIMEOUT,
        OPT_JSON,
        OPT_FLOOD,
        OPT_BATCH,
        OPT_EXPECT,
        OPT_WAIT,
        OPT_EVENT,
    };
    static const struct option longopts[] = {
        {"listen", no_argument, NULL, OPT_LISTEN},
        {"sink", no_argument, NULL, OPT_SINK},
        {"group", required_argument, NULL, OPT_GROUP},
        {"bind", required_argument, NULL, 'b'},
        {"device", required_argument, NULL, 'd'},
        {"port", required_argument, NULL, OPT_PORT},
        {"count", required_argument, NULL, 'n'},
        {"size", required_argument, NULL, 's'},
        {"interval", required_argument, NULL, 'i'},
        {"timeout", required_argument, NULL, OPT_TIMEOUT},
        {"json", no_argument, NULL, OPT_JSON},
        {"flood", no_argument, NULL, OPT_FLOOD},
        {"batch", required_argument, NULL, OPT_BATCH},
        {"expect", required_argument, NULL, OPT_EXPECT},
        {"wait-ms", required_argument, NULL, OPT_WAIT},
        {"event", no_argument, NULL, OPT_EVENT},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    uint64_t value;
    int c;

    memset(o, 0, sizeof(*o));
    o->port = RDPS_DEFAULT_CM_PORT;
    o->count = 100;
    o->size = 64;
    o->wait_ms = 1000;
    o->batch = 16;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":b:d:n:s:i:h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_LISTEN:
            o->listen = true;
            break;
        case OPT_SINK:
            o->sink = true;
            break;
        case OPT_GROUP:
            if (o->ngroups == MAX_GROUPS) {
                tool_error(PROG, "at most %d --group options", MAX_GROUPS);
                return 2;
            }
            o->groups[o->ngroups++] = optarg;
            break;
        case 'b':
            o->bind_ip = optarg;
            break;
        case 'd':
            o->device = optarg;
            break;
        case OPT_PORT:
            if (!tool_parse_u64(optarg, 1, 65535, false, &value)) {
                tool_error(PROG, "bad --port '%s': need 1..65535", optarg);
                return 2;
            }
            o->port = (uint16_t)value;
            break;
        case 'n':
            if (!tool_parse_u64(optarg, 1, 100000000, true, &o->count)) {
                tool_error(PROG, "bad count '%s': need 1..100000000", optarg);
                return 2;
            }
            break;
        case 's':
            if (!tool_parse_u64(optarg, 0, 1u << 20, true, &o->size)) {
                tool_error(PROG, "bad size '%s': need a number of bytes", optarg);
                return 2;
            }
            if (o->size < PING_HEADER_BYTES) {
                tool_error(PROG,
                           "size %llu is too small: a ping carries a %u-byte header (sequence + "
                           "timestamp), use -s %u or more",
                           (unsigned long long)o->size, PING_HEADER_BYTES, PING_HEADER_BYTES);
                return 2;
            }
            break;
        case 'i':
            if (!tool_parse_u64(optarg, 0, 60000000, false, &o->interval_us)) {
                tool_error(PROG, "bad interval '%s': need 0..60000000 microseconds", optarg);
                return 2;
            }
            o->interval_set = true;
            break;
        case OPT_TIMEOUT:
            if (!tool_parse_u64(optarg, 1, 86400, false, &o->timeout_s)) {
                tool_error(PROG, "bad --timeout '%s': need 1..86400 seconds", optarg);
                return 2;
            }
            break;
        case OPT_JSON:
            o->json = true;
            break;
        case OPT_FLOOD:
            o->flood = true;
            break;
        case OPT_EVENT:
            o->event = true;
            break;
        case OPT_BATCH:
            if (!tool_parse_u64(optarg, 1, 1024, false, &o->batch)) {
                tool_error(PROG, "bad --batch '%s': need 1..1024", optarg);
                return 2;
            }
            break;
        case OPT_EXPECT:
            if (!tool_parse_u64(optarg, 1, MAX_RESPONDER, false, &o->expect)) {
                tool_error(PROG, "bad --expect '%s': need 1..%d", optarg, MAX_RESPONDER);
                return 2;
            }
            break;
        case OPT_WAIT:
            if (!tool_parse_u64(optarg, 1, 600000, false, &o->wait_ms)) {
                tool_error(PROG, "bad --wait-ms '%s': need 1..600000", optarg);
                return 2;
            }
            break;
        case 'h':
            usage(stdout);
            exit(0);
        case ':':
            tool_error(PROG, "option '%s' needs an argument (see --help)", argv[optind - 1]);
            return 2;
        default:
            tool_error(PROG, "unknown option '%s' (see --help)", argv[optind - 1]);
            return 2;
        }
    }
    if (optind < argc)
        o->target = argv[optind++];
    if (optind < argc) {
        tool_error(PROG, "unexpected argument '%s' (see --help)", argv[optind]);
        return 2;
    }
    if (o->bind_ip != NULL && o->device != NULL) {
        tool_error(PROG, "use either -b BIND_IP or -d DEV, not both");
        return 2;
    }
    if (o->listen) {
        if (o->target != NULL) {
            tool_error(PROG, "--listen takes no HOST argument");
            return 2;
        }
        if (o->flood) {
            tool_error(PROG, "--flood is a client option; use --listen --sink to count a flood");
            return 2;
        }
    } else {
        if (o->sink) {
            tool_error(PROG, "--sink needs --listen");
            return 2;
        }
        if ((o->target == NULL) == (o->ngroups == 0)) {
            tool_error(PROG, "give exactly one of HOST_IP[:PORT] or --group ADDR (see --help)");
            return 2;
        }
        if (o->ngroups > 1) {
            tool_error(PROG, "a client pings one --group");
            return 2;
        }
        if (o->timeout_s == 0)
            o->timeout_s = 60;
        if (!o->interval_set && o->ngroups > 0 && o->expect == 0)
            o->interval_us = 10000;
    }
    return 0;
}

/* ---- setup ----------------------------------------------------------------------------- */

static int wait_ready(struct ping_ctx *pc, uint64_t deadline_ns, const char *what)
{
    for (;;) {
        int state = 1;
        int err = rdps__addr_process(pc->addr);
        if (err < 0) {
            tool_error(PROG, "rdma_cm events: %s", rdps_last_error_message());
            return err;
        }
        if (pc->peer != NULL) {
            state = rdps__addr_peer_state(pc->peer, &pc->dest);
            /* Address resolution rides on UD too: a lost request or answer is retried. */
            if ((state == RDPS_ETIMEDOUT || state == RDPS_EHOSTUNREACH) &&
                ++pc->resolve_attempts < RESOLVE_ATTEMPTS && tool_now_ns() < deadline_ns &&
                !stop_requested) {
                rdps__addr_peer_release(pc->peer);
                pc->peer = NULL;
                err = rdps__addr_resolve_start(pc->addr, (struct sockaddr *)&pc->peer_addr,
                                               &pc->peer);
                if (err < 0) {
                    tool_error(PROG, "resolve %s: %s", what, rdps_last_error_message());
                    return err;
                }
                continue;
            }
        }
        for (unsigned i = 0; i < pc->opt.ngroups && state == 1; i++) {
            const struct rdps_dest *d;
            state = rdps__addr_group_state(pc->groups[i], &d);
            if (state == 1 && !pc->opt.listen)
                pc->dest = d;
        }
        if (state == 1)
            return 0;
        if (state < 0) {
            char attempts[32] = "";
            if (pc->resolve_attempts > 0)
                snprintf(attempts, sizeof(attempts), " (%u attempts)", pc->resolve_attempts);
            /* addr/'s detail message already names the peer or group. */
            if (rdps_last_error_message()[0] != '\0')
                tool_error(PROG, "%s%s", rdps_last_error_message(), attempts);
            else
                tool_error(PROG, "%s: %s%s", what, rdps_strerror(state), attempts);
            return state;
        }
        if (stop_requested || tool_now_ns() > deadline_ns) {
            tool_error(PROG, "%s: no answer in time", what);
            return RDPS_ETIMEDOUT;
        }
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

static int setup(struct ping_ctx *pc)
{
    struct options *o = &pc->opt;
    struct sockaddr_in bind_sin, peer, groups[MAX_GROUPS];
    struct rdps_verbs_config vcfg;
    int err;

    /* Every address is checked before the device is touched. */
    for (unsigned i = 0; i < o->ngroups; i++) {
        if (!parse_ipv4(o->groups[i], 0, &groups[i]) || strchr(o->groups[i], ':') != NULL ||
            !IN_MULTICAST(ntohl(groups[i].sin_addr.s_addr))) {
            tool_error(PROG, "bad group '%s': need an IPv4 multicast address (224.0.0.0/4)",
                       o->groups[i]);
            return 2;
        }
    }
    if (o->target != NULL && !parse_ipv4(o->target, o->port, &peer)) {
        tool_error(PROG, "bad host '%s': need a numeric IPv4 HOST_IP[:PORT]", o->target);
        return 2;
    }

    memset(&vcfg, 0, sizeof(vcfg));
    vcfg.device_name = o->device;
    if (o->bind_ip != NULL) {
        if (!parse_ipv4(o->bind_ip, 0, &bind_sin) || strchr(o->bind_ip, ':') != NULL) {
            tool_error(PROG, "bad bind address '%s': need a numeric IPv4 address", o->bind_ip);
            return 2;
        }
        vcfg.bind_addr = (struct sockaddr *)&bind_sin;
    }
    if (o->flood || o->sink) {
        /* Deeper queues so the rate is bounded by the device, not by our pools. */
        vcfg.send_slots = 512;
        vcfg.recv_slots = 1024;
    }
    err = rdps__verbs_transport_create(&vcfg, &pc->t);
    if (err < 0) {
        tool_error(PROG, "%s", rdps_last_error_message());
        return 1;
    }
    rdps__verbs_transport_info(pc->t, &pc->info);
    if (!o->listen && o->size > pc->info.max_payload) {
        tool_error(PROG, "size %llu exceeds max_payload %u of %s port %u (its active MTU)",
                   (unsigned long long)o->size, pc->info.max_payload, pc->info.device_name,
                   pc->info.port_num);
        return 2;
    }
    struct rdps_addr_config acfg = {
        .transport = pc->t,
        .cm_port = o->listen ? o->port : RDPS_ADDR_NO_LISTEN,
    };
    err = rdps__addr_create(&acfg, &pc->addr);
    if (err < 0) {
        tool_error(PROG, "%s", rdps_last_error_message());
        return 1;
    }
    uint64_t deadline = tool_now_ns() + (o->timeout_s ? o->timeout_s : 30) * 1000000000ull;
    for (unsigned i = 0; i < o->ngroups; i++) {
        err =
            rdps__addr_join_start(pc->addr, (struct sockaddr *)&groups[i],
                                  o->listen ? RDPS_JOIN_FULL : RDPS_JOIN_SEND_ONLY, &pc->groups[i]);
        if (err < 0) {
            tool_error(PROG, "join %s: %s", o->groups[i], rdps_last_error_message());
            return 1;
        }
    }
    if (o->target != NULL) {
        snprintf(pc->target_text, sizeof(pc->target_text), "%s:%u", inet_ntoa(peer.sin_addr),
                 ntohs(peer.sin_port));
        pc->peer_addr = peer;
        err = rdps__addr_resolve_start(pc->addr, (struct sockaddr *)&peer, &pc->peer);
        if (err < 0) {
            tool_error(PROG, "resolve %s: %s", pc->target_text, rdps_last_error_message());
            return 1;
        }
    } else if (o->ngroups > 0) {
        snprintf(pc->target_text, sizeof(pc->target_text), "group %s", o->groups[0]);
    }
    err = wait_ready(pc, deadline, o->listen ? "joining groups" : pc->target_text);
    return err < 0 ? 1 : 0;
}

static void teardown(struct ping_ctx *pc)
{
    for (unsigned i = 0; i < pc->opt.ngroups; i++) {
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
static int claim_retry(struct rdps_transport *t, struct rdps_tx_buf *buf, uint64_t limit_ns)
{
    struct rdps_rx_datagram none[1];
    uint64_t deadline = 0;
    for (;;) {
        int err = t->ops->claim(t, buf);
        if (err != RDPS_EAGAIN)
            return err;
        if (deadline == 0)
            deadline = tool_now_ns() + limit_ns;
        else if (tool_now_ns() > deadline)
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
static void idle(struct ping_ctx *pc, int timeout_ms)
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

/* ---- listener -------------------------------------------------------------------------- */

struct listen_totals {
    uint64_t received, echoed, bad, echo_failed, no_reply;
    uint64_t first_ns, last_ns;
};

static int run_listener(struct ping_ctx *pc)
{
    struct rdps_rx_datagram rx[RX_BATCH];
    struct listen_totals tot = {0};
    uint64_t deadline = pc->opt.timeout_s ? tool_now_ns() + pc->opt.timeout_s * 1000000000ull : 0;
    uint64_t next_cm_check = 0;
    int rc = 0;

    fprintf(stderr, PROG ": listening on %s port %u, qpn 0x%x, cm port %u%s\n",
            pc->info.device_name, pc->info.port_num, pc->info.qpn, rdps__addr_listen_port(pc->addr),
            pc->opt.sink ? " (sink)" : "");
    while (!stop_requested) {
        int n = pc->t->ops->poll(pc->t, rx, RX_BATCH);
        if (n < 0) {
            tool_error(PROG, "poll: %s", rdps_strerror(n));
            rc = 1;
            break;
        }
        if (n > 0) {
            uint64_t now = tool_now_ns();
            if (tot.first_ns == 0)
                tot.first_ns = now;
            tot.last_ns = now;
        }
        bool queued = false;
        for (int i = 0; i < n; i++) {
            struct ping_header h;
            tot.received++;
            if (!ping_header_get(rx[i].data, rx[i].len, &h) || h.kind != PING_KIND_PING) {
                tot.bad++;
                continue;
            }
            if (pc->opt.sink)
                continue;
            const struct rdps_dest *reply = NULL;
            if (rdps__transport_reply(pc->t, &rx[i], &reply) < 0) {
                tot.no_reply++;
                continue;
            }
            struct rdps_tx_buf buf;
            int err = claim_retry(pc->t, &buf, 100000000ull);
            if (err == 0) {
                memcpy(buf.data, rx[i].data, rx[i].len);
                h.kind = PING_KIND_PONG;
                ping_header_put(buf.data, &h);
                err = pc->t->ops->submit(pc->t, &buf, rx[i].len, &reply, 1);
            }
            if (err < 0) {
                tot.echo_failed++; /* counted, reported in the summary */
                continue;
            }
            queued = true;
            tot.echoed++;
        }
        if (queued) {
            int err = pc->t->ops->flush(pc->t);
            if (err < 0)
                tool_error(PROG, "flush: %s", rdps_last_error_message());
        }
        if (n > 0)
            pc->t->ops->rx_release(pc->t, rx, n);
        uint64_t now = n > 0 ? tot.last_ns : tool_now_ns();
        if (now >= next_cm_check) {
            /* CM requests (resolves from clients) are rare: look every 10 ms. */
            (void)rdps__addr_process(pc->addr);
            enum rdps_transport_event_type ev;
            while (pc->t->ops->next_event(pc->t, &ev) == 1) {
                if (ev == RDPS_TRANSPORT_EV_DEVICE_FATAL) {
                    tool_error(PROG, "%s: device fatal error", pc->info.device_name);
                    stop_requested = 1;
                    rc = 1;
                } else if (ev == RDPS_TRANSPORT_EV_PORT_DOWN) {
                    fprintf(stderr, PROG ": %s port %u went down\n", pc->info.device_name,
                            pc->info.port_num);
                }
            }
            next_cm_check = now + 10000000ull;
            if (deadline != 0 && now > deadline)
                break;
        }
        if (n == 0)
            idle(pc, 10);
    }
    struct rdps_transport_stats st;
    pc->t->ops->get_stats(pc->t, &st);
    double secs = tot.last_ns > tot.first_ns ? (double)(tot.last_ns - tot.first_ns) / 1e9 : 0.0;
    double rate = secs > 0 ? (double)(tot.received > 1 ? tot.received - 1 : 0) / secs : 0.0;
    if (pc->opt.json) {
        struct tool_json j;
        tool_json_begin(&j, stdout);
        tool_json_str(&j, "mode", pc->opt.sink ? "sink" : "listen");
        tool_json_u64(&j, "received", tot.received);
        tool_json_u64(&j, "echoed", tot.echoed);
        tool_json_u64(&j, "bad", tot.bad);
        tool_json_u64(&j, "echo_failed", tot.echo_failed + tot.no_reply);
        tool_json_u64(&j, "rx_queue_empty", st.rx_queue_empty);
        tool_json_double(&j, "rx_seconds", secs);
        tool_json_double(&j, "rx_datagrams_per_s", rate);
        tool_json_end(&j);
    } else {
        printf("%s: received %llu datagrams (%llu bad), echoed %llu, echo failures %llu, "
               "receive queue empty %llu times; %.0f datagrams/s over %.3f s\n",
               pc->opt.sink ? "sink" : "listener", (unsigned long long)tot.received,
               (unsigned long long)tot.bad, (unsigned long long)tot.echoed,
               (unsigned long long)(tot.echo_failed + tot.no_reply),
               (unsigned long long)st.rx_queue_empty, rate, secs);
    }
    return rc;
}

/* ---- client ---------------------------------------------------------------------------- */

struct responder {
    uint8_t gid[16];
    uint32_t qpn;
};

struct client_state {
    uint16_t *echoes_per_seq;
    uint64_t *rtt_ns;
    size_t nrtt, rtt_cap;
    struct responder responders[MAX_RESPONDER];
    unsigned nresponders;
    bool responders_overflow;
    uint64_t echoes, bad, foreign;
};

static void note_responder(struct client_state *cs, const struct rdps_rx_datagram *d)
{
    for (unsigned i = 0; i < cs->nresponders; i++) {
        if (cs->responders[i].qpn == d->src_qpn &&
            memcmp(cs->responders[i].gid, d->src_gid, 16) == 0)
            return;
    }
    if (cs->nresponders == MAX_RESPONDER) {
        cs->responders_overflow = true;
        return;
    }
    memcpy(cs->responders[cs->nresponders].gid, d->src_gid, 16);
    cs->responders[cs->nresponders].qpn = d->src_qpn;
    cs->nresponders++;
}

/* Takes in echoes; returns how many echoes of `want_seq` arrived, or a negative code. */
static int drain_echoes(struct ping_ctx *pc, struct client_state *cs, uint32_t want_seq)
{
    struct rdps_rx_datagram rx[RX_BATCH];
    int n = pc->t->ops->poll(pc->t, rx, RX_BATCH);
    int matched = 0;
    if (n <= 0)
        return n;
    uint64_t now = tool_now_ns();
    for (int i = 0; i < n; i++) {
        struct ping_header h;
        if (!ping_header_get(rx[i].data, rx[i].len, &h) || h.kind != PING_KIND_PONG) {
            cs->bad++;
            continue;
        }
        if (h.seq >= pc->opt.count || h.sent_ns > now) {
            cs->foreign++; /* not one of ours (another client, or a stale run) */
            continue;
        }
        cs->echoes++;
        if (cs->echoes_per_seq[h.seq] < UINT16_MAX)
            cs->echoes_per_seq[h.seq]++;
        note_responder(cs, &rx[i]);
        if (cs->nrtt < cs->rtt_cap)
            cs->rtt_ns[cs->nrtt++] = now - h.sent_ns;
        if (h.seq == want_seq)
            matched++;
    }
    pc->t->ops->rx_release(pc->t, rx, n);
    return matched;
}

static int send_ping(struct ping_ctx *pc, uint32_t seq)
{
    struct rdps_tx_buf buf;
    int err = claim_retry(pc->t, &buf, 1000000000ull);
    if (err < 0)
        return err;
    struct ping_header h = {.kind = PING_KIND_PING, .seq = seq};
    memset(buf.data + PING_HEADER_BYTES, 0xa5, pc->opt.size - PING_HEADER_BYTES);
    h.sent_ns = tool_now_ns();
    ping_header_put(buf.data, &h);
    err = pc->t->ops->submit(pc->t, &buf, (uint32_t)pc->opt.size, &pc->dest, 1);
    if (err < 0)
        return err;
    return pc->t->ops->flush(pc->t);
}

static void print_summary(struct ping_ctx *pc, struct client_state *cs, uint64_t sent,
                          double send_secs)
{
    uint64_t lost = 0;
    for (uint64_t s = 0; s < sent; s++)
        lost += cs->echoes_per_seq[s] == 0;
    ping_sort(cs->rtt_ns, cs->nrtt);
    double us[5];
    const double pcts[5] = {0, 50, 99, 99.9, 100};
    for (int i = 0; i < 5; i++)
        us[i] = (double)(i == 0 ? (cs->nrtt ? cs->rtt_ns[0] : 0)
                                : ping_percentile(cs->rtt_ns, cs->nrtt, pcts[i])) /
                1000.0;
    double loss_pct = sent ? 100.0 * (double)lost / (double)sent : 0.0;
    double per_ping = sent ? (double)cs->echoes / (double)sent : 0.0;
    double rate = send_secs > 0 ? (double)sent / send_secs : 0.0;
    struct rdps_transport_stats st;
    pc->t->ops->get_stats(pc->t, &st);

    if (pc->opt.json) {
        struct tool_json j;
        tool_json_begin(&j, stdout);
        tool_json_str(&j, "mode", pc->opt.flood ? "flood" : "ping");
        tool_json_str(&j, "target", pc->target_text);
        tool_json_u64(&j, "size", pc->opt.size);
        tool_json_u64(&j, "sent", sent);
        tool_json_u64(&j, "echoes", cs->echoes);
        tool_json_double(&j, "echoes_per_ping", per_ping);
        tool_json_u64(&j, "responders", cs->nresponders);
        tool_json_u64(&j, "lost", lost);
        tool_json_double(&j, "loss_pct", loss_pct);
        tool_json_double(&j, "rtt_min_us", us[0]);
        tool_json_double(&j, "rtt_p50_us", us[1]);
        tool_json_double(&j, "rtt_p99_us", us[2]);
        tool_json_double(&j, "rtt_p999_us", us[3]);
        tool_json_double(&j, "rtt_max_us", us[4]);
        tool_json_double(&j, "send_seconds", send_secs);
        tool_json_double(&j, "datagrams_per_s", rate);
        tool_json_u64(&j, "bad", cs->bad);
        tool_json_u64(&j, "tx_backpressure", st.tx_backpressure);
        tool_json_end(&j);
        return;
    }
    printf("%llu %s of %llu bytes to %s via %s port %u (max_payload %u)\n",
           (unsigned long long)sent, pc->opt.flood ? "datagrams" : "pings",
           (unsigned long long)pc->opt.size, pc->target_text, pc->info.device_name,
           pc->info.port_num, pc->info.max_payload);
    if (pc->opt.flood)
        printf("rate: %.0f datagrams/s (%.3f s), back-pressure waits %llu\n", rate, send_secs,
               (unsigned long long)st.tx_backpressure);
    printf("rtt us: min %.1f p50 %.1f p99 %.1f p99.9 %.1f max %.1f (%zu samples)\n", us[0], us[1],
           us[2], us[3], us[4], cs->nrtt);
    printf("echoes %llu (%.2f per ping) from %u responder%s%s; lost %llu of %llu (%.2f%%)",
           (unsigned long long)cs->echoes, per_ping, cs->nresponders,
           cs->nresponders == 1 ? "" : "s", cs->responders_overflow ? " (or more)" : "",
           (unsigned long long)lost, (unsigned long long)sent, loss_pct);
    if (cs->bad || cs->foreign)
        printf("; %llu malformed, %llu foreign", (unsigned long long)cs->bad,
               (unsigned long long)cs->foreign);
    printf("\n");
}

static int run_client(struct ping_ctx *pc)
{
    struct options *o = &pc->opt;
    struct client_state cs;
    uint64_t deadline = tool_now_ns() + o->timeout_s * 1000000000ull;
    uint64_t sent = 0;
    int rc = 0;

    memset(&cs, 0, sizeof(cs));
    cs.echoes_per_seq = calloc(o->count, sizeof(uint16_t));
    cs.rtt_cap = o->count * (o->ngroups > 0 ? 8 : 1) + 64;
    cs.rtt_ns = malloc(cs.rtt_cap * sizeof(uint64_t));
    if (cs.echoes_per_seq == NULL || cs.rtt_ns == NULL) {
        tool_error(PROG, "out of memory for %llu pings", (unsigned long long)o->count);
        free(cs.echoes_per_seq);
        free(cs.rtt_ns);
        return 1;
    }
    uint64_t start = tool_now_ns(), send_end = start;
    if (o->flood) {
        /* As fast as back-pressure allows: chains of `batch` WRs, echoes drained meanwhile. */
        while (sent < o->count && !stop_requested && tool_now_ns() < deadline) {
            uint64_t chain = 0;
            int err = 0;
            while (chain < o->batch && sent + chain < o->count) {
                struct rdps_tx_buf buf;
                err = pc->t->ops->claim(pc->t, &buf);
                if (err < 0)
                    break;
                struct ping_header h = {.kind = PING_KIND_PING, .seq = (uint32_t)(sent + chain)};
                h.sent_ns = tool_now_ns();
                ping_header_put(buf.data, &h);
                memset(buf.data + PING_HEADER_BYTES, 0xa5, o->size - PING_HEADER_BYTES);
                err = pc->t->ops->submit(pc->t, &buf, (uint32_t)o->size, &pc->dest, 1);
                if (err < 0)
                    break;
                chain++;
            }
            if (chain > 0) {
                int ferr = pc->t->ops->flush(pc->t);
                if (ferr < 0) {
                    tool_error(PROG, "flush: %s", rdps_last_error_message());
                    rc = 1;
                    break;
                }
                sent += chain;
            }
            if (err < 0 && err != RDPS_EAGAIN) {
                tool_error(PROG, "send: %s", rdps_strerror(err));
                rc = 1;
                break;
            }
            if (drain_echoes(pc, &cs, UINT32_MAX) < 0) {
                rc = 1;
                break;
            }
        }
        send_end = tool_now_ns();
        /* Collect late echoes for a moment (they are counted, not needed for the rate). */
        uint64_t linger = tool_now_ns() + o->wait_ms * 1000000ull;
        while (tool_now_ns() < linger && tool_now_ns() < deadline && !stop_requested &&
               cs.echoes < sent)
            if (drain_echoes(pc, &cs, UINT32_MAX) == 0)
                idle(pc, 10);
    } else {
        for (uint32_t seq = 0; seq < o->count && !stop_requested; seq++) {
            if (tool_now_ns() > deadline)
                break;
            uint64_t t0 = tool_now_ns();
            int err = send_ping(pc, seq);
            if (err < 0) {
                tool_error(PROG, "send: %s (%s)", rdps_strerror(err), rdps_last_error_message());
                rc = 1;
                break;
            }
            sent++;
            uint64_t wait_until = t0 + o->wait_ms * 1000000ull;
            uint64_t next_send = t0 + o->interval_us * 1000ull;
            unsigned want = o->ngroups > 0 ? (unsigned)o->expect : 1;
            unsigned got = 0;
            for (;;) {
                int m = drain_echoes(pc, &cs, seq);
                if (m < 0) {
                    tool_error(PROG, "poll: %s", rdps_strerror(m));
                    rc = 1;
                    break;
                }
                got += (unsigned)m;
                uint64_t now = tool_now_ns();
                bool answered = want > 0 && got >= want;
                if ((answered && now >= next_send) || now >= wait_until ||
                    (want == 0 && now >= next_send) || now > deadline || stop_requested)
                    break;
                if (m == 0) {
                    uint64_t until = answered || want == 0 ? next_send : wait_until;
                    uint64_t ms = until > now ? (until - now) / 1000000u : 0;
                    idle(pc, ms > 100 ? 100 : (int)ms);
                }
            }
            if (rc != 0)
                break;
        }
        send_end = tool_now_ns();
        /* Late echoes of the last pings still count. */
        uint64_t linger = tool_now_ns() + (o->ngroups > 0 ? o->wait_ms : 0) * 1000000ull;
        while (tool_now_ns() < linger && !stop_requested)
            if (drain_echoes(pc, &cs, UINT32_MAX) == 0)
                idle(pc, 10);
    }
    print_summary(pc, &cs, sent, (double)(send_end - start) / 1e9);
    if (sent < o->count && rc == 0 && !stop_requested) {
        tool_error(PROG, "timed out after %llu of %llu pings", (unsigned long long)sent,
                   (unsigned long long)o->count);
        rc = 1;
    }
    if (rc == 0 && !o->flood && cs.echoes == 0) {
        tool_error(PROG, "no echo from %s", pc->target_text);
        rc = 1;
    }
    free(cs.echoes_per_seq);
    free(cs.rtt_ns);
    return rc;
}

int main(int argc, char **argv)
{
    struct ping_ctx pc;
    memset(&pc, 0, sizeof(pc));
    int rc = parse_args(argc, argv, &pc.opt);
    if (rc != 0)
        return rc;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    rc = setup(&pc);
    if (rc == 0)
        rc = pc.opt.listen ? run_listener(&pc) : run_client(&pc);
    teardown(&pc);
    return rc;
}
