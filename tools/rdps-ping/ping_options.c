/* SPDX-License-Identifier: BSD-2-Clause */
/* ping_options.c - rdps-ping's command line: usage text, option parsing and checks. */
#include <arpa/inet.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "ctx_options.h"
#include "ping.h"
#include "ping_wire.h"
#include "tool_cli.h"

static void usage(FILE *out)
{
    fprintf(out,
            "Usage:\n"
            "  " PROG " --listen [--group ADDR]... [-b BIND_IP | -d DEV] [--port P] [--sink]\n"
            "            [--timeout S] [--event] [--json]\n"
            "  " PROG " (HOST_IP[:PORT] | --group ADDR | --peers LIST) [--transport T]\n"
            "            [-c COUNT] [-s SIZE] [-i INTERVAL_US]\n"
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
            "  --peers LIST      client: ping every listener of ip[:port],... by unicast, each\n"
            "                    ping one work-request chain from one buffer to all of them\n"
            "                    (unicast fan-out; echoes counted as for a group)\n"
            "  --transport T     multicast: the group; unicast: the --peers (a listener joins no\n"
            "                    group); auto: the group, or the --peers when it does not join\n"
            "                    within 3 s (default: whichever of --group, --peers is given)\n"
            "  -b, --bind IP     local IP: picks the RDMA device and port (through rdma_cm)\n"
            "  -d, --device DEV  RDMA device (default: the first ACTIVE port); local: the\n"
            "                    local device (hosts are members, 127.78.0.N: the listener\n"
            "                    prints its own; local:4096 for 4 KiB datagrams)\n"
            "  --port P          rdma_cm port the listener answers resolves on (default %d)\n"
            "  -c, --count N     pings to send (default 100; -n is the same)\n"
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
            "  --json            one-line JSON summary on stdout\n",
            RDPS_DEFAULT_CM_PORT);
    tool_key_options_usage(out);
    fprintf(
        out,
        "  -h, --help        this text\n"
        "  --version         the tool's and librdps's version and git revision\n"
        "\n"
        "Keyed (--key-file): datagrams carry a 40-byte trailer, so SIZE is 40..max_payload-40,\n"
        "and both ends need the key.\n"
        "Exit: 0 ok, 1 failed (no echo, pings not all sent in time, device, resolve or\n"
        "join error), 2 bad usage.\n");
}

bool ping_parse_ipv4(const char *text, uint16_t default_port, struct sockaddr_in *out)
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

int ping_parse_args(int argc, char **argv, struct options *o)
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
        OPT_PEERS,
        OPT_TRANSPORT,
    };
    static const struct option longopts[] = {
        {"listen", no_argument, NULL, OPT_LISTEN},
        {"sink", no_argument, NULL, OPT_SINK},
        {"group", required_argument, NULL, OPT_GROUP},
        {"bind", required_argument, NULL, 'b'},
        {"device", required_argument, NULL, 'd'},
        {"port", required_argument, NULL, OPT_PORT},
        {"count", required_argument, NULL, 'c'},
        {"size", required_argument, NULL, 's'},
        {"interval", required_argument, NULL, 'i'},
        {"timeout", required_argument, NULL, OPT_TIMEOUT},
        {"json", no_argument, NULL, OPT_JSON},
        {"flood", no_argument, NULL, OPT_FLOOD},
        {"batch", required_argument, NULL, OPT_BATCH},
        {"expect", required_argument, NULL, OPT_EXPECT},
        {"wait-ms", required_argument, NULL, OPT_WAIT},
        {"event", no_argument, NULL, OPT_EVENT},
        {"peers", required_argument, NULL, OPT_PEERS},
        {"transport", required_argument, NULL, OPT_TRANSPORT},
        {"help", no_argument, NULL, 'h'},
        TOOL_KEY_LONG_OPTIONS,
        TOOL_VERSION_LONG_OPTION,
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
    while ((c = getopt_long(argc, argv, ":b:c:d:n:s:i:h", longopts, NULL)) != -1) {
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
                return TOOL_EXIT_USAGE;
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
            if (!tool_opt_u64(PROG, "--port", optarg, 1, 65535, &value))
                return TOOL_EXIT_USAGE;
            o->port = (uint16_t)value;
            break;
        case 'c':
        case 'n': /* 1.2's name of -c */
            if (!tool_opt_size(PROG, c == 'n' ? "-n" : "-c", optarg, 1, 100000000, &o->count))
                return TOOL_EXIT_USAGE;
            break;
        case 's':
            if (!tool_opt_size(PROG, "-s", optarg, 0, 1u << 20, &o->size))
                return TOOL_EXIT_USAGE;
            if (o->size < PING_HEADER_BYTES) {
                tool_error(PROG,
                           "size %llu is too small: a ping carries a %u-byte header (sequence + "
                           "timestamp), use -s %u or more",
                           (unsigned long long)o->size, PING_HEADER_BYTES, PING_HEADER_BYTES);
                return TOOL_EXIT_USAGE;
            }
            break;
        case 'i':
            if (!tool_opt_u64(PROG, "-i", optarg, 0, 60000000, &o->interval_us))
                return TOOL_EXIT_USAGE;
            o->interval_set = true;
            break;
        case OPT_TIMEOUT:
            if (!tool_opt_u64(PROG, "--timeout", optarg, 1, 86400, &o->timeout_s))
                return TOOL_EXIT_USAGE;
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
        case OPT_PEERS:
            o->peer_list = optarg;
            break;
        case OPT_TRANSPORT:
            if (!tool_parse_transport(PROG, optarg, &o->transport))
                return TOOL_EXIT_USAGE;
            o->transport_set = true;
            break;
        case OPT_BATCH:
            if (!tool_opt_u64(PROG, "--batch", optarg, 1, 1024, &o->batch))
                return TOOL_EXIT_USAGE;
            break;
        case OPT_EXPECT:
            if (!tool_opt_u64(PROG, "--expect", optarg, 1, MAX_RESPONDER, &o->expect))
                return TOOL_EXIT_USAGE;
            break;
        case OPT_WAIT:
            if (!tool_opt_u64(PROG, "--wait-ms", optarg, 1, 600000, &o->wait_ms))
                return TOOL_EXIT_USAGE;
            break;
        case 'h':
            usage(stdout);
            exit(TOOL_EXIT_OK);
        case TOOL_OPT_VERSION:
            tool_version_exit(PROG);
        case ':':
            tool_error(PROG, "option '%s' needs an argument", argv[optind - 1]);
            return TOOL_EXIT_USAGE;
        default:
            if (tool_key_option(c, optarg, &o->key) == 1)
                break;
            tool_error(PROG, "unknown option '%s'", argv[optind - 1]);
            return TOOL_EXIT_USAGE;
        }
    }
    if (optind < argc)
        o->target = argv[optind++];
    if (optind < argc) {
        tool_error(PROG, "unexpected argument '%s'", argv[optind]);
        return TOOL_EXIT_USAGE;
    }
    if (o->bind_ip != NULL && o->device != NULL) {
        tool_error(PROG, "use either -b BIND_IP or -d DEV, not both");
        return TOOL_EXIT_USAGE;
    }
    if (o->peer_list != NULL) {
        /* Parsed after --port (the default port of every item). */
        char list[1024];
        snprintf(list, sizeof(list), "%s", o->peer_list);
        for (char *save = NULL, *item = strtok_r(list, ",", &save); item != NULL;
             item = strtok_r(NULL, ",", &save)) {
            if (o->npeers == MAX_PEERS) {
                tool_error(PROG, "--peers: at most %d listeners", MAX_PEERS);
                return TOOL_EXIT_USAGE;
            }
            if (!ping_parse_ipv4(item, o->port, &o->peers[o->npeers++])) {
                tool_error(PROG, "--peers: '%s' is not a numeric IPv4 HOST_IP[:PORT]", item);
                return TOOL_EXIT_USAGE;
            }
        }
        if (o->npeers == 0) {
            tool_error(PROG, "--peers: empty list");
            return TOOL_EXIT_USAGE;
        }
    }
    if (!o->transport_set)
        o->transport =
            o->ngroups == 0 && o->npeers > 0 ? RDPS_TRANSPORT_UNICAST : RDPS_TRANSPORT_MULTICAST;
    if (o->listen) {
        if (o->target != NULL) {
            tool_error(PROG, "--listen takes no HOST argument");
            return TOOL_EXIT_USAGE;
        }
        if (o->npeers > 0) {
            tool_error(PROG, "--peers is a client option (a listener answers whoever pings it)");
            return TOOL_EXIT_USAGE;
        }
        if (o->flood) {
            tool_error(PROG, "--flood is a client option; use --listen --sink to count a flood");
            return TOOL_EXIT_USAGE;
        }
    } else {
        if (o->sink) {
            tool_error(PROG, "--sink needs --listen");
            return TOOL_EXIT_USAGE;
        }
        if ((o->target == NULL) == (o->ngroups == 0 && o->npeers == 0)) {
            tool_error(PROG, "give HOST_IP[:PORT], or --group ADDR and/or --peers LIST");
            return TOOL_EXIT_USAGE;
        }
        if (o->transport == RDPS_TRANSPORT_UNICAST && o->target == NULL && o->npeers == 0) {
            tool_error(PROG, "--transport unicast needs --peers (or HOST_IP)");
            return TOOL_EXIT_USAGE;
        }
        if (o->transport != RDPS_TRANSPORT_UNICAST && o->target == NULL && o->ngroups == 0) {
            tool_error(PROG, "--transport %s needs --group",
                       o->transport == RDPS_TRANSPORT_AUTO ? "auto" : "multicast");
            return TOOL_EXIT_USAGE;
        }
        if (o->ngroups > 1) {
            tool_error(PROG, "a client pings one --group");
            return TOOL_EXIT_USAGE;
        }
        if (o->timeout_s == 0)
            o->timeout_s = 60;
        if (!o->interval_set && o->ngroups > 0 && o->expect == 0)
            o->interval_us = 10000;
    }
    return TOOL_EXIT_OK;
}
