/* SPDX-License-Identifier: BSD-2-Clause */
/* norm_bench.c - NORM (RFC 5740, NRL libnorm) multicast sender and verifying receiver, the
 * baseline that rdps's reliable multicast goodput under loss is compared against. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * normApi.h is written for C++ as well as C, but two of its declarations are C++ only (a
 * reference parameter and a default argument). Those two functions are not used here; the
 * macros turn their declarations into harmless C ones while the header is read.
 */
#define NormGetRxBindAddress(...) norm_bench_unused_rx_bind_address(void)
#define NormStreamGetVacancy(...) norm_bench_unused_stream_vacancy(void)
#include <normApi.h>
#undef NormGetRxBindAddress
#undef NormStreamGetVacancy

/*
 * Why a NORM stream and not data objects: NORM delivers a stream in order and reliably, and its
 * FEC blocks (k source segments, up to p parity segments) run across consecutive messages, as
 * rdps's parity blocks run across consecutive datagrams. With one NORM data object per message
 * every small message would be an object of its own and a block of one segment, so a parity
 * segment would only be a copy, and objects complete out of order. NormStreamMarkEom after each
 * message marks where messages start (a receiver resynchronises there after a loss NORM could
 * not repair) without flushing: NORM fills its segments, so messages are packed into segments
 * of --segment bytes. With --segment equal to --size every datagram carries one message, as an
 * rdps datagram does.
 */

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2, EXIT_TIMEOUT = 3 };

#define MAX_MSG_SIZE    (16u << 20)
#define MAX_RECEIVERS   64
#define SENDER_NODE_ID  1u
#define FIRST_RECV_NODE 2u

struct opts {
    const char *role;
    const char *addr;
    const char *iface;
    unsigned port;
    uint64_t count;
    size_t size;
    double rate_bps;
    bool cc;
    unsigned block;
    unsigned parity;
    unsigned auto_parity;
    unsigned segment;
    unsigned receivers;
    unsigned node_id;
    double timeout_s;
    double linger_s;
    double grtt_s;
    double backoff;
    unsigned buffer_mb;
    double rx_loss_pct;
    bool loopback;
    bool json;
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: norm_bench send --addr GROUP --port PORT --iface IFACE --count N --size S\n"
            "                       [--rate BITS_PER_S | --cc] [--block K] [--parity P]\n"
            "                       [--auto-parity A] [--segment BYTES] [--receivers R]\n"
            "                       [--grtt SEC] [--backoff F] [--buffer-mb MB] [--timeout SEC] "
            "[--loopback]\n"
            "                       [--json]\n"
            "       norm_bench recv --addr GROUP --port PORT --iface IFACE --count N --size S\n"
            "                       [--node-id ID] [--timeout SEC] [--linger SEC]\n"
            "                       [--buffer-mb MB] [--rx-loss PCT] [--loopback] [--json]\n"
            "\n"
            "NORM (RFC 5740) over UDP multicast, the baseline for rdps's reliable multicast.\n"
            "send writes N messages of S bytes (the message index in the first 8 bytes, a\n"
            "pattern after it) into one NORM stream, one message per NormStreamMarkEom, and\n"
            "waits until receivers with node ids 2..R+1 acknowledged all of it (a NORM\n"
            "watermark). recv checks every message in order and exits 0 when all N arrived\n"
            "intact, 1 on a missing, corrupt or out-of-order message or a loss NORM reports,\n"
            "3 on timeout. Argument errors exit 2. Both print one line (JSON with --json).\n"
            "\n"
            "  --addr GROUP       multicast group (e.g. 239.192.1.1)\n"
            "  --port PORT        UDP port of the NORM session\n"
            "  --iface IFACE      interface for multicast (e.g. eth0)\n"
            "  --count N          messages\n"
            "  --size S           bytes per message (8..%u)\n"
            "  --rate BPS         fixed transmit rate in bits/s, repairs included\n"
            "                     (default 100000000)\n"
            "  --cc               NORM congestion control instead of a fixed rate\n"
            "  --block K          source segments per FEC block (default 64)\n"
            "  --parity P         parity segments NORM may compute per block (default 32)\n"
            "  --auto-parity A    parity segments sent proactively per block (default 0)\n"
            "  --segment BYTES    NORM segment (payload) size (default 1400); messages are\n"
            "                     packed into segments, --segment S gives one per datagram\n"
            "  --receivers R      acknowledging receivers, node ids 2..R+1 (default 1)\n"
            "  --node-id ID       this receiver's NORM node id (default 2)\n"
            "  --grtt SEC         initial group round-trip estimate (default 0.001)\n"
            "  --backoff F        NAK back-off factor, in GRTTs (NORM's default 4; 0 for\n"
            "                     few receivers: NAK at once)\n"
            "  --buffer-mb MB     sender buffer / stream buffer / receiver buffer (default 64)\n"
            "  --timeout SEC      give up after SEC (default 300)\n"
            "  --linger SEC       recv: after the last message, wait up to SEC for the\n"
            "                     sender to close the stream, so it gets its ACK (default 10)\n"
            "  --rx-loss PCT      recv: NORM drops PCT %% of what it receives (its own loss\n"
            "                     generator, for tests without netem)\n"
            "  --loopback         multicast loopback (sender and receivers on one host)\n"
            "  --json             print one line of JSON\n",
            MAX_MSG_SIZE);
}

__attribute__((format(printf, 1, 2))) static int arg_error(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "norm_bench: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see --help)\n");
    return EXIT_USAGE;
}

static bool parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    char *end;
    unsigned long long v;

    if (s[0] == '-' || s[0] == '\0')
        return false;
    errno = 0;
    v = strtoull(s, &end, 0);
    if (errno != 0 || *end != '\0' || v < min || v > max)
        return false;
    *out = v;
    return true;
}

static bool parse_double(const char *s, double min, double *out)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !(v >= min))
        return false;
    *out = v;
    return true;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
    enum {
        O_ADDR = 256,
        O_PORT,
        O_IFACE,
        O_COUNT,
        O_SIZE,
        O_RATE,
        O_CC,
        O_BLOCK,
        O_PARITY,
        O_AUTO,
        O_SEGMENT,
        O_RECEIVERS,
        O_NODE,
        O_TIMEOUT,
        O_LINGER,
        O_GRTT,
        O_BACKOFF,
        O_BUFFER,
        O_LOOPBACK,
        O_RX_LOSS,
        O_JSON,
    };
    static const struct option longopts[] = {
        {"addr", required_argument, NULL, O_ADDR},
        {"port", required_argument, NULL, O_PORT},
        {"iface", required_argument, NULL, O_IFACE},
        {"count", required_argument, NULL, O_COUNT},
        {"size", required_argument, NULL, O_SIZE},
        {"rate", required_argument, NULL, O_RATE},
        {"cc", no_argument, NULL, O_CC},
        {"block", required_argument, NULL, O_BLOCK},
        {"parity", required_argument, NULL, O_PARITY},
        {"auto-parity", required_argument, NULL, O_AUTO},
        {"segment", required_argument, NULL, O_SEGMENT},
        {"receivers", required_argument, NULL, O_RECEIVERS},
        {"node-id", required_argument, NULL, O_NODE},
        {"timeout", required_argument, NULL, O_TIMEOUT},
        {"linger", required_argument, NULL, O_LINGER},
        {"grtt", required_argument, NULL, O_GRTT},
        {"backoff", required_argument, NULL, O_BACKOFF},
        {"buffer-mb", required_argument, NULL, O_BUFFER},
        {"loopback", no_argument, NULL, O_LOOPBACK},
        {"rx-loss", required_argument, NULL, O_RX_LOSS},
        {"json", no_argument, NULL, O_JSON},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool have_rate = false, have_node = false, have_receivers = false;
    uint64_t v;
    int c;

    *o = (struct opts){.rate_bps = 100e6,
                       .block = 64,
                       .parity = 32,
                       .segment = 1400,
                       .receivers = 1,
                       .node_id = FIRST_RECV_NODE,
                       .timeout_s = 300,
                       .linger_s = 10,
                       .grtt_s = 0.001,
                       .backoff = 4,
                       .buffer_mb = 64};
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            exit(EXIT_OK);
        }
    if (argc < 2)
        return arg_error("%s", "a role is required: send or recv");
    o->role = argv[1];
    if (strcmp(o->role, "send") != 0 && strcmp(o->role, "recv") != 0)
        return arg_error("unknown role '%s' (send or recv)", o->role);
    opterr = 0;
    optind = 2;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        const char *a = optarg;

        switch (c) {
        case O_ADDR:
            o->addr = a;
            break;
        case O_IFACE:
            o->iface = a;
            break;
        case O_PORT:
            if (!parse_u64(a, 1, 65535, &v))
                return arg_error("--port: '%s' is not a port (1..65535)", a);
            o->port = (unsigned)v;
            break;
        case O_COUNT:
            if (!parse_u64(a, 1, UINT64_MAX / 2, &v))
                return arg_error("--count: '%s' is not a positive count", a);
            o->count = v;
            break;
        case O_SIZE:
            if (!parse_u64(a, 8, MAX_MSG_SIZE, &v))
                return arg_error("--size: '%s' is not 8..16777216 bytes", a);
            o->size = (size_t)v;
            break;
        case O_RATE:
            if (!parse_double(a, 1000, &o->rate_bps))
                return arg_error("--rate: '%s' is not a rate of at least 1000 bits/s", a);
            have_rate = true;
            break;
        case O_CC:
            o->cc = true;
            break;
        case O_BLOCK:
            if (!parse_u64(a, 1, 32767, &v))
                return arg_error("--block: '%s' is not 1..32767", a);
            o->block = (unsigned)v;
            break;
        case O_PARITY:
            if (!parse_u64(a, 0, 32767, &v))
                return arg_error("--parity: '%s' is not 0..32767", a);
            o->parity = (unsigned)v;
            break;
        case O_AUTO:
            if (!parse_u64(a, 0, 255, &v))
                return arg_error("--auto-parity: '%s' is not 0..255", a);
            o->auto_parity = (unsigned)v;
            break;
        case O_SEGMENT:
            if (!parse_u64(a, 64, 8192, &v))
                return arg_error("--segment: '%s' is not 64..8192 bytes", a);
            o->segment = (unsigned)v;
            break;
        case O_RECEIVERS:
            if (!parse_u64(a, 0, MAX_RECEIVERS, &v))
                return arg_error("--receivers: '%s' is not 0..64", a);
            o->receivers = (unsigned)v;
            have_receivers = true;
            break;
        case O_NODE:
            if (!parse_u64(a, FIRST_RECV_NODE, 0xfffffffe, &v))
                return arg_error("--node-id: '%s' is not 2..4294967294 (1 is the sender)", a);
            o->node_id = (unsigned)v;
            have_node = true;
            break;
        case O_TIMEOUT:
            if (!parse_double(a, 0.001, &o->timeout_s))
                return arg_error("--timeout: '%s' is not a positive number of seconds", a);
            break;
        case O_LINGER:
            if (!parse_double(a, 0, &o->linger_s))
                return arg_error("--linger: '%s' is not a number of seconds", a);
            break;
        case O_GRTT:
            if (!parse_double(a, 1e-6, &o->grtt_s))
                return arg_error("--grtt: '%s' is not a positive number of seconds", a);
            break;
        case O_BACKOFF:
            if (!parse_double(a, 0, &o->backoff) || o->backoff > 100)
                return arg_error("--backoff: '%s' is not 0..100", a);
            break;
        case O_BUFFER:
            if (!parse_u64(a, 1, 1024, &v))
                return arg_error("--buffer-mb: '%s' is not 1..1024", a);
            o->buffer_mb = (unsigned)v;
            break;
        case O_LOOPBACK:
            o->loopback = true;
            break;
        case O_RX_LOSS:
            if (!parse_double(a, 0, &o->rx_loss_pct) || o->rx_loss_pct >= 100)
                return arg_error("--rx-loss: '%s' is not a percentage below 100", a);
            break;
        case O_JSON:
            o->json = true;
            break;
        default:
            return arg_error("unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return arg_error("unexpected argument '%s'", argv[optind]);
    if (o->addr == NULL || o->port == 0 || o->iface == NULL || o->count == 0 || o->size == 0)
        return arg_error("%s", "--addr, --port, --iface, --count and --size are required");
    if (strcmp(o->role, "send") == 0) {
        if (have_node)
            return arg_error("%s", "--node-id is for recv (the sender is node 1)");
        if (have_rate && o->cc)
            return arg_error("%s", "--rate and --cc exclude each other");
        if (o->block + o->parity > 65535 || (o->parity > 0 && o->block + o->parity > 32767))
            return arg_error("%s", "--block plus --parity must stay within NORM's FEC (32767)");
        if (o->auto_parity > o->parity)
            return arg_error("%s", "--auto-parity cannot exceed --parity");
    } else if (have_rate || o->cc || have_receivers) {
        return arg_error("%s", "--rate, --cc and --receivers are for send");
    }
    if (strcmp(o->role, "send") == 0 && o->rx_loss_pct > 0) {
        return arg_error("%s", "--rx-loss is for recv");
    }
    return EXIT_OK;
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Message i: its index little-endian in bytes 0..7, then byte j = (i * 131 + j) mod 256. */
static void fill_message(unsigned char *m, size_t size, uint64_t index)
{
    for (unsigned b = 0; b < 8; b++)
        m[b] = (unsigned char)(index >> (8 * b));
    for (size_t j = 8; j < size; j++)
        m[j] = (unsigned char)(index * 131u + j);
}

static uint64_t message_index(const unsigned char *m)
{
    uint64_t v = 0;

    for (unsigned b = 0; b < 8; b++)
        v |= (uint64_t)m[b] << (8 * b);
    return v;
}

static bool message_intact(const unsigned char *m, size_t size, uint64_t index)
{
    for (size_t j = 8; j < size; j++)
        if (m[j] != (unsigned char)(index * 131u + j))
            return false;
    return true;
}

/*
 * The next NORM event, waiting at most until the deadline (CLOCK_MONOTONIC seconds). Returns 1
 * with an event, 0 at the deadline, -1 if the instance failed.
 */
static int next_event(NormInstanceHandle inst, NormEvent *ev, double deadline)
{
    struct pollfd pfd = {.fd = NormGetDescriptor(inst), .events = POLLIN};

    for (;;) {
        double left = deadline - now_s();
        int ms, rc;

        if (left <= 0)
            return 0;
        ms = left > 1.0 ? 1000 : (int)(left * 1000) + 1;
        rc = poll(&pfd, 1, ms);
        if (rc < 0 && errno != EINTR)
            return -1;
        if (rc > 0) {
            if (!NormGetNextEvent(inst, ev, false))
                continue; /* woken without an event (one was consumed already) */
            return 1;
        }
    }
}

/*
 * UDP datagrams the host has sent (/proc/net/snmp Udp OutDatagrams): the host's total, not this
 * process's, which on a benchmark guest is the NORM sender's. -1 when unreadable.
 */
static long long udp_out_datagrams(void)
{
    char hdr[1024], val[1024];
    long long result = -1;
    FILE *f = fopen("/proc/net/snmp", "r");

    if (f == NULL)
        return -1;
    while (fgets(hdr, sizeof(hdr), f) != NULL) {
        char *hs, *vs, *h, *v;
        if (strncmp(hdr, "Udp: ", 5) != 0 || fgets(val, sizeof(val), f) == NULL)
            continue;
        h = strtok_r(hdr, " \n", &hs);
        v = strtok_r(val, " \n", &vs);
        while (h != NULL && v != NULL) {
            if (strcmp(h, "OutDatagrams") == 0) {
                result = strtoll(v, NULL, 10);
                break;
            }
            h = strtok_r(NULL, " \n", &hs);
            v = strtok_r(NULL, " \n", &vs);
        }
        break;
    }
    fclose(f);
    return result;
}

static NormSessionHandle open_session(NormInstanceHandle inst, const struct opts *o,
                                      NormNodeId node)
{
    NormSessionHandle s = NormCreateSession(inst, o->addr, (UINT16)o->port, node);

    if (s == NORM_SESSION_INVALID) {
        fprintf(stderr, "norm_bench: NormCreateSession %s/%u failed\n", o->addr, o->port);
        return NORM_SESSION_INVALID;
    }
    /* Several NORM processes on one host (tests over loopback) share the session port. */
    NormSetRxPortReuse(s, true, NULL, NULL, 0);
    if (!NormSetMulticastInterface(s, o->iface)) {
        fprintf(stderr, "norm_bench: NormSetMulticastInterface %s failed\n", o->iface);
        NormDestroySession(s);
        return NORM_SESSION_INVALID;
    }
    NormSetTTL(s, 1);
    NormSetMulticastLoopback(s, o->loopback);
    NormSetRxSocketBuffer(s, 8u << 20);
    return s;
}

static void print_send(const struct opts *o, double elapsed, long long udp_out, double rate_end)
{
    double bytes = (double)o->count * (double)o->size;
    double mps = elapsed > 0 ? (double)o->count / elapsed : 0;
    double gbps = elapsed > 0 ? bytes * 8 / elapsed : 0;
    uint64_t data_segments = (uint64_t)((bytes + o->segment - 1) / o->segment);

    if (!o->json) {
        printf("norm_bench send: %" PRIu64 " messages of %zu B in %.3f s: %.0f msg/s, "
               "%.1f Mbit/s goodput (block %u, parity %u, auto parity %u)\n",
               o->count, o->size, elapsed, mps, gbps / 1e6, o->block, o->parity, o->auto_parity);
        return;
    }
    printf("{\"tool\":\"norm_bench\",\"role\":\"send\",\"messages\":%" PRIu64 ",\"size\":%zu,"
           "\"bytes\":%.0f,\"elapsed_s\":%.6f,\"msgs_per_s\":%.1f,\"goodput_bps\":%.0f,"
           "\"block\":%u,\"parity\":%u,\"auto_parity\":%u,\"segment\":%u,\"receivers\":%u,"
           "\"rate_bps\":%.0f,\"cc\":%s,\"data_segments\":%" PRIu64,
           o->count, o->size, bytes, elapsed, mps, gbps, o->block, o->parity, o->auto_parity,
           o->segment, o->receivers, o->cc ? rate_end : o->rate_bps, o->cc ? "true" : "false",
           data_segments);
    if (udp_out >= 0)
        printf(",\"host_udp_out_datagrams\":%lld", udp_out);
    printf("}\n");
}

static int run_send(const struct opts *o)
{
    NormInstanceHandle inst;
    NormSessionHandle s;
    NormObjectHandle stream;
    unsigned char *msg;
    UINT32 buffer = (UINT32)o->buffer_mb << 20;
    double t0, deadline, elapsed, rate_end = o->rate_bps;
    long long udp0, udp1;
    int rc = EXIT_FAIL;

    msg = malloc(o->size);
    inst = NormCreateInstance(false);
    if (msg == NULL || inst == NORM_INSTANCE_INVALID) {
        fprintf(stderr, "norm_bench: out of memory or NormCreateInstance failed\n");
        free(msg);
        return EXIT_FAIL;
    }
    s = open_session(inst, o, SENDER_NODE_ID);
    if (s == NORM_SESSION_INVALID)
        goto out_instance;
    if (o->cc) {
        NormSetCongestionControl(s, true, true);
    } else {
        NormSetCongestionControl(s, false, true);
        NormSetTxRate(s, o->rate_bps);
    }
    NormSetTxSocketBuffer(s, 8u << 20);
    NormSetGrttEstimate(s, o->grtt_s);
    NormSetBackoffFactor(s, o->backoff);
    NormSetGroupSize(s, o->receivers > 0 ? o->receivers : 1);
    for (unsigned r = 0; r < o->receivers; r++)
        NormAddAckingNode(s, FIRST_RECV_NODE + r);
    if (!NormStartSender(s, NormGetRandomSessionId(), buffer, (UINT16)o->segment, (UINT16)o->block,
                         (UINT16)o->parity, 0)) {
        fprintf(stderr, "norm_bench: NormStartSender failed (block %u, parity %u, segment %u)\n",
                o->block, o->parity, o->segment);
        goto out_session;
    }
    NormSetAutoParity(s, (unsigned char)o->auto_parity);
    stream = NormStreamOpen(s, buffer, NULL, 0);
    if (stream == NORM_OBJECT_INVALID) {
        fprintf(stderr, "norm_bench: NormStreamOpen failed\n");
        goto out_sender;
    }
    /* Blocking writes: the stream never overwrites data receivers may still need. */
    NormStreamSetPushEnable(stream, false);
    NormStreamSetAutoFlush(stream, NORM_FLUSH_NONE);

    udp0 = udp_out_datagrams();
    t0 = now_s();
    deadline = t0 + o->timeout_s;
    for (uint64_t i = 0; i < o->count; i++) {
        size_t off = 0;

        fill_message(msg, o->size, i);
        while (off < o->size) {
            size_t chunk = o->size - off > UINT_MAX ? UINT_MAX : o->size - off;
            NormEvent ev;
            int got;

            off += NormStreamWrite(stream, (const char *)msg + off, (unsigned)chunk);
            if (off == o->size)
                break;
            /* Stream buffer full: wait for NORM to free room (NORM_TX_QUEUE_VACANCY). */
            do {
                got = next_event(inst, &ev, deadline);
                if (got == 1 && ev.type == NORM_TX_RATE_CHANGED)
                    rate_end = NormGetTxRate(s);
            } while (got == 1 && ev.type != NORM_TX_QUEUE_VACANCY &&
                     ev.type != NORM_TX_QUEUE_EMPTY);
            if (got != 1) {
                fprintf(stderr, "norm_bench: %s at message %" PRIu64 "\n",
                        got == 0 ? "timed out writing" : "NORM failed", i);
                rc = got == 0 ? EXIT_TIMEOUT : EXIT_FAIL;
                goto out_stream;
            }
        }
        NormStreamMarkEom(stream);
    }
    NormStreamFlush(stream, true, NORM_FLUSH_ACTIVE);

    /* Done when every acking receiver has acknowledged the whole stream. */
    if (!NormSetWatermark(s, stream, true)) {
        fprintf(stderr, "norm_bench: NormSetWatermark failed\n");
        goto out_stream;
    }
    for (;;) {
        NormEvent ev;
        int got = next_event(inst, &ev, deadline);

        if (got != 1) {
            fprintf(stderr, "norm_bench: %s waiting for the receivers' acknowledgement\n",
                    got == 0 ? "timed out" : "NORM failed");
            for (unsigned r = 0; r < o->receivers; r++)
                if (NormGetAckingStatus(s, FIRST_RECV_NODE + r) != NORM_ACK_SUCCESS)
                    fprintf(stderr, "norm_bench: receiver node %u has not acknowledged\n",
                            FIRST_RECV_NODE + r);
            rc = got == 0 ? EXIT_TIMEOUT : EXIT_FAIL;
            goto out_stream;
        }
        if (ev.type == NORM_TX_RATE_CHANGED)
            rate_end = NormGetTxRate(s);
        if (ev.type != NORM_TX_WATERMARK_COMPLETED)
            continue;
        if (NormGetAckingStatus(s, NORM_NODE_ANY) == NORM_ACK_SUCCESS)
            break;
        /* Some receiver did not answer within NORM's robust factor: ask again. */
        NormResetWatermark(s);
    }
    elapsed = now_s() - t0;
    udp1 = udp_out_datagrams();
    print_send(o, elapsed, udp0 >= 0 && udp1 >= 0 ? udp1 - udp0 : -1, rate_end);
    rc = EXIT_OK;

    /* Close gracefully so the receivers see the end of the stream, then let it go out. */
    NormStreamClose(stream, true);
    stream = NORM_OBJECT_INVALID;
    for (double end = now_s() + 2.0;;) {
        NormEvent ev;

        if (next_event(inst, &ev, end) != 1 || ev.type == NORM_TX_OBJECT_PURGED ||
            ev.type == NORM_TX_FLUSH_COMPLETED)
            break;
    }
out_stream:
    if (stream != NORM_OBJECT_INVALID)
        NormStreamClose(stream, false);
out_sender:
    NormStopSender(s);
out_session:
    NormDestroySession(s);
out_instance:
    NormDestroyInstance(inst);
    free(msg);
    return rc;
}

struct recv_state {
    const struct opts *o;
    unsigned char *msg;
    size_t fill;
    uint64_t next;     /* index expected next */
    uint64_t verified; /* intact, in order */
    uint64_t corrupt;  /* pattern wrong, or an index behind the expected one */
    uint64_t missing;  /* indices skipped */
    uint64_t breaks;   /* NORM reported the stream broken (data it could not repair) */
    double t_first, t_last;
};

static void check_message(struct recv_state *st)
{
    uint64_t idx = message_index(st->msg);
    double t = now_s();

    if (st->verified + st->corrupt + st->missing == 0 && st->t_first == 0)
        st->t_first = t;
    st->t_last = t;
    if (idx < st->next || idx >= st->o->count || !message_intact(st->msg, st->o->size, idx)) {
        st->corrupt++;
        if (st->corrupt <= 5)
            fprintf(stderr, "norm_bench: message %" PRIu64 " (expected %" PRIu64 ") %s\n", idx,
                    st->next, idx < st->next || idx >= st->o->count ? "out of order" : "corrupt");
        if (idx >= st->next && idx < st->o->count) {
            st->missing += idx - st->next;
            st->next = idx + 1;
        } else {
            st->next++; /* count it in place of the one expected */
        }
        return;
    }
    if (idx > st->next) {
        fprintf(stderr, "norm_bench: messages %" PRIu64 "..%" PRIu64 " missing\n", st->next,
                idx - 1);
        st->missing += idx - st->next;
    }
    st->next = idx + 1;
    st->verified++;
}

/* Reads what the stream holds; false once all messages are accounted for. */
static bool read_stream(struct recv_state *st, NormObjectHandle stream)
{
    while (st->next < st->o->count) {
        size_t want = st->o->size - st->fill;
        unsigned n = want > UINT_MAX ? UINT_MAX : (unsigned)want;

        if (!NormStreamRead(stream, (char *)st->msg + st->fill, &n)) {
            /* A break in the stream: NORM could not repair some data. */
            st->breaks++;
            fprintf(stderr, "norm_bench: NORM reports data loss in the stream\n");
            st->fill = 0;
            NormStreamSeekMsgStart(stream);
            continue;
        }
        if (n == 0)
            return true;
        st->fill += n;
        if (st->fill == st->o->size) {
            check_message(st);
            st->fill = 0;
        }
    }
    return false;
}

static void print_recv(const struct recv_state *st)
{
    const struct opts *o = st->o;
    double elapsed = st->t_last - st->t_first;
    double mps = elapsed > 0 ? (double)st->verified / elapsed : 0;
    double gbps = elapsed > 0 ? (double)st->verified * (double)o->size * 8 / elapsed : 0;
    uint64_t missing = st->missing + (o->count - st->next);

    if (!o->json) {
        printf("norm_bench recv: %" PRIu64 " of %" PRIu64 " messages verified (%" PRIu64
               " corrupt, %" PRIu64 " missing) in %.3f s: %.0f msg/s, %.1f Mbit/s goodput\n",
               st->verified, o->count, st->corrupt, missing, elapsed, mps, gbps / 1e6);
        return;
    }
    printf("{\"tool\":\"norm_bench\",\"role\":\"recv\",\"node_id\":%u,\"messages\":%" PRIu64
           ",\"size\":%zu,\"verified\":%" PRIu64 ",\"corrupt\":%" PRIu64 ",\"missing\":%" PRIu64
           ",\"stream_breaks\":%" PRIu64 ",\"elapsed_s\":%.6f,\"msgs_per_s\":%.1f,"
           "\"goodput_bps\":%.0f}\n",
           o->node_id, o->count, o->size, st->verified, st->corrupt, missing, st->breaks, elapsed,
           mps, gbps);
}

static int run_recv(const struct opts *o)
{
    NormInstanceHandle inst;
    NormSessionHandle s;
    NormObjectHandle stream = NORM_OBJECT_INVALID;
    struct recv_state st = {.o = o};
    double deadline = now_s() + o->timeout_s;
    bool done = false, closed = false, timed_out = false;
    int rc = EXIT_FAIL;

    st.msg = malloc(o->size);
    inst = NormCreateInstance(false);
    if (st.msg == NULL || inst == NORM_INSTANCE_INVALID) {
        fprintf(stderr, "norm_bench: out of memory or NormCreateInstance failed\n");
        free(st.msg);
        return EXIT_FAIL;
    }
    s = open_session(inst, o, o->node_id);
    if (s == NORM_SESSION_INVALID)
        goto out_instance;
    /* A receiver started before the sender takes the stream from its beginning. */
    NormSetDefaultSyncPolicy(s, NORM_SYNC_STREAM);
    if (o->rx_loss_pct > 0)
        NormSetRxLoss(s, o->rx_loss_pct);
    if (!NormStartReceiver(s, (UINT32)o->buffer_mb << 20)) {
        fprintf(stderr, "norm_bench: NormStartReceiver failed\n");
        goto out_session;
    }
    while (!done || !closed) {
        NormEvent ev;
        int got = next_event(inst, &ev, deadline);

        if (got == 0) {
            timed_out = !done;
            break;
        }
        if (got < 0) {
            fprintf(stderr, "norm_bench: NORM failed\n");
            break;
        }
        switch (ev.type) {
        case NORM_RX_OBJECT_NEW:
            if (stream == NORM_OBJECT_INVALID && NormObjectGetType(ev.object) == NORM_OBJECT_STREAM)
                stream = ev.object;
            break;
        case NORM_RX_OBJECT_UPDATED:
            if (ev.object == stream && !done && !read_stream(&st, stream)) {
                done = true;
                /* Stay until the sender closes the stream, so it gets our acknowledgement. */
                deadline = now_s() + o->linger_s;
            }
            break;
        case NORM_RX_OBJECT_COMPLETED:
        case NORM_RX_OBJECT_ABORTED:
            if (ev.object != stream)
                break;
            if (!done)
                read_stream(&st, stream);
            if (ev.type == NORM_RX_OBJECT_ABORTED && st.next < o->count) {
                fprintf(stderr, "norm_bench: NORM aborted the stream\n");
                st.breaks++;
            }
            closed = true;
            done = true;
            break;
        default:
            break;
        }
    }
    print_recv(&st);
    if (st.verified == o->count && st.corrupt == 0 && st.missing == 0 && st.breaks == 0)
        rc = EXIT_OK;
    else if (timed_out && st.corrupt == 0 && st.missing == 0 && st.breaks == 0)
        rc = EXIT_TIMEOUT;
    NormStopReceiver(s);
out_session:
    NormDestroySession(s);
out_instance:
    NormDestroyInstance(inst);
    free(st.msg);
    return rc;
}

int main(int argc, char **argv)
{
    struct opts o;
    int rc = parse_args(argc, argv, &o);

    if (rc != EXIT_OK) {
        return rc;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    return strcmp(o.role, "send") == 0 ? run_send(&o) : run_recv(&o);
}
