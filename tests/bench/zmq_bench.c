/* SPDX-License-Identifier: BSD-2-Clause */
/* zmq_bench.c - ZeroMQ PUB/SUB sender and counting receiver (tcp or epgm), the baseline that
 * rdps's small-message rate is compared against on the same rxe guests. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zmq.h>

/*
 * Both ends use what a ZeroMQ user would for a fast feed: the sender an XPUB socket that blocks
 * instead of dropping when its queue is full (ZMQ_XPUB_NODROP; plain PUB drops above its high
 * water mark, which would turn the rate into a loss figure), the receiver a SUB socket with no
 * high water mark. Over tcp the sender waits for the subscription to arrive (XPUB hands it up),
 * so no message goes before the receiver is connected. Over epgm (PGM multicast, NAK-based
 * repair within ZMQ_RECOVERY_IVL) subscriptions do not travel upstream: the sender waits
 * --start-delay seconds instead, and the receiver counts from the first message it hears.
 *
 * Every message carries its index in its first 8 bytes and a pattern after it; the receiver
 * checks both, so a message counts only when it arrived intact. Its rate is first to last
 * message received, as rdsub's msgs_per_s.
 */

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2, EXIT_TIMEOUT = 3 };

#define MAX_MSG_SIZE (1u << 20)

struct opts {
    const char *role;
    const char *endpoint;
    uint64_t count;
    size_t size;
    int rate_kbit;
    int maxtpdu;
    double start_delay_s;
    double timeout_s;
    double idle_s;
    bool json;
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: zmq_bench pub --endpoint EP --count N --size S [--rate KBIT]\n"
            "                     [--maxtpdu BYTES] [--start-delay SEC] [--timeout SEC] [--json]\n"
            "       zmq_bench sub --endpoint EP --count N --size S [--rate KBIT]\n"
            "                     [--maxtpdu BYTES] [--timeout SEC] [--idle SEC] [--json]\n"
            "\n"
            "ZeroMQ PUB/SUB (libzmq): pub sends N messages of S bytes (the message index in\n"
            "the first 8 bytes, a pattern after it) as fast as its socket takes them, blocking\n"
            "when the queue is full (XPUB_NODROP); sub receives, checks every message and\n"
            "counts the missing ones (indices skipped), exiting 0 when all N arrived intact,\n"
            "1 on a corrupt or out-of-order message or when any went missing, 3 on timeout.\n"
            "Argument errors exit 2. Both print one line (JSON with --json).\n"
            "\n"
            "  --endpoint EP      pub: tcp://HOST:PORT (connects) or epgm://IFACE;GROUP:PORT;\n"
            "                     sub: tcp://*:PORT (binds) or the same epgm endpoint\n"
            "  --count N          messages\n"
            "  --size S           bytes per message (8..%u)\n"
            "  --rate KBIT        epgm: ZMQ_RATE, the sender's PGM rate limit in kbit/s\n"
            "                     (libzmq's default 100)\n"
            "  --maxtpdu BYTES    epgm: ZMQ_MULTICAST_MAXTPDU, the largest datagram (default\n"
            "                     1500)\n"
            "  --start-delay SEC  pub over epgm: wait SEC before sending, for receivers to\n"
            "                     join (default 2)\n"
            "  --timeout SEC      give up after SEC (default 300)\n"
            "  --idle SEC         sub: once a message arrived, stop when none came for SEC (the\n"
            "                     last ones were lost; default 5)\n"
            "  --json             print one line of JSON\n",
            MAX_MSG_SIZE);
}

__attribute__((format(printf, 1, 2))) static int arg_error(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "zmq_bench: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see --help)\n");
    return EXIT_USAGE;
}

static bool parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    char *end;
    if (s[0] == '-' || s[0] == '\0')
        return false;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < min || v > max)
        return false;
    *out = v;
    return true;
}

static bool parse_seconds(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || *end != '\0' || !(v >= 0) || v > 86400)
        return false;
    *out = v;
    return true;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
    static const struct option longs[] = {
        {"endpoint", required_argument, NULL, 'e'},
        {"count", required_argument, NULL, 'c'},
        {"size", required_argument, NULL, 's'},
        {"rate", required_argument, NULL, 'r'},
        {"maxtpdu", required_argument, NULL, 'm'},
        {"start-delay", required_argument, NULL, 'd'},
        {"timeout", required_argument, NULL, 't'},
        {"idle", required_argument, NULL, 'i'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    *o = (struct opts){
        .rate_kbit = 0, .maxtpdu = 0, .start_delay_s = 2, .timeout_s = 300, .idle_s = 5};
    if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        usage(stdout);
        exit(EXIT_OK);
    }
    if (argc < 2 || (strcmp(argv[1], "pub") != 0 && strcmp(argv[1], "sub") != 0))
        return arg_error("the first argument is the role: pub or sub");
    o->role = argv[1];
    optind = 2;
    int c;
    uint64_t v;
    while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
        switch (c) {
        case 'e':
            o->endpoint = optarg;
            break;
        case 'c':
            if (!parse_u64(optarg, 1, UINT64_MAX / 2, &o->count))
                return arg_error("--count must be a positive integer, not '%s'", optarg);
            break;
        case 's':
            if (!parse_u64(optarg, 8, MAX_MSG_SIZE, &v))
                return arg_error("--size must be 8..%u, not '%s'", MAX_MSG_SIZE, optarg);
            o->size = (size_t)v;
            break;
        case 'r':
            if (!parse_u64(optarg, 1, 10000000, &v))
                return arg_error("--rate must be 1..10000000 kbit/s, not '%s'", optarg);
            o->rate_kbit = (int)v;
            break;
        case 'm':
            if (!parse_u64(optarg, 576, 65535, &v))
                return arg_error("--maxtpdu must be 576..65535, not '%s'", optarg);
            o->maxtpdu = (int)v;
            break;
        case 'd':
            if (!parse_seconds(optarg, &o->start_delay_s))
                return arg_error("--start-delay must be 0..86400 seconds, not '%s'", optarg);
            break;
        case 't':
            if (!parse_seconds(optarg, &o->timeout_s) || o->timeout_s == 0)
                return arg_error("--timeout must be 0..86400 seconds (not 0), not '%s'", optarg);
            break;
        case 'i':
            if (!parse_seconds(optarg, &o->idle_s) || o->idle_s == 0)
                return arg_error("--idle must be 0..86400 seconds (not 0), not '%s'", optarg);
            break;
        case 'j':
            o->json = true;
            break;
        case 'h':
            usage(stdout);
            exit(EXIT_OK);
        default:
            return arg_error("unknown option");
        }
    }
    if (optind < argc)
        return arg_error("unexpected argument '%s'", argv[optind]);
    if (o->endpoint == NULL || o->count == 0 || o->size == 0)
        return arg_error("--endpoint, --count and --size are required");
    if (strncmp(o->endpoint, "tcp://", 6) != 0 && strncmp(o->endpoint, "epgm://", 7) != 0)
        return arg_error("--endpoint must be tcp://... or epgm://..., not '%s'", o->endpoint);
    return EXIT_OK;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The byte at offset i (>= 8) of message `index`: differs between neighbouring messages. */
static uint8_t pattern_byte(uint64_t index, size_t i)
{
    return (uint8_t)((index * 131u) ^ (i * 7u) ^ 0x5Au);
}

static void fill_message(uint8_t *m, size_t size, uint64_t index)
{
    memcpy(m, &index, sizeof index);
    for (size_t i = sizeof index; i < size; i++)
        m[i] = pattern_byte(index, i);
}

static bool check_message(const uint8_t *m, size_t len, size_t size, uint64_t *index)
{
    if (len != size)
        return false;
    memcpy(index, m, sizeof *index);
    for (size_t i = sizeof *index; i < size; i++)
        if (m[i] != pattern_byte(*index, i))
            return false;
    return true;
}

static bool is_epgm(const struct opts *o)
{
    return strncmp(o->endpoint, "epgm://", 7) == 0;
}

static int set_int(void *sock, int option, int value, const char *name)
{
    if (zmq_setsockopt(sock, option, &value, sizeof value) == 0)
        return 0;
    fprintf(stderr, "zmq_bench: %s: %s\n", name, zmq_strerror(zmq_errno()));
    return -1;
}

/* The socket options both roles share over epgm (they must agree on the rate). */
static int set_pgm_opts(void *sock, const struct opts *o)
{
    if (!is_epgm(o))
        return 0;
    if (o->rate_kbit && set_int(sock, ZMQ_RATE, o->rate_kbit, "ZMQ_RATE") < 0)
        return -1;
    if (o->maxtpdu && set_int(sock, ZMQ_MULTICAST_MAXTPDU, o->maxtpdu, "ZMQ_MULTICAST_MAXTPDU") < 0)
        return -1;
    /* A burst a slow receiver has not read yet is a loss PGM may not repair in time (what
     * net.core.rmem_max allows of it). */
    if (set_int(sock, ZMQ_RCVBUF, 8 << 20, "ZMQ_RCVBUF") < 0 ||
        set_int(sock, ZMQ_SNDBUF, 8 << 20, "ZMQ_SNDBUF") < 0)
        return -1;
    return 0;
}

/* tcp: the receiver's subscription, which XPUB reads, says it is connected. */
static int wait_subscriber(void *pub, double deadline)
{
    set_int(pub, ZMQ_RCVTIMEO, 100, "ZMQ_RCVTIMEO");
    uint8_t sub[64];
    while (now_s() < deadline) {
        int n = zmq_recv(pub, sub, sizeof sub, 0);
        if (n >= 1 && sub[0] == 1)
            return 0;
        if (n < 0 && zmq_errno() != EAGAIN && zmq_errno() != EINTR) {
            fprintf(stderr, "zmq_bench: waiting for the subscriber: %s\n",
                    zmq_strerror(zmq_errno()));
            return -1;
        }
    }
    fprintf(stderr, "zmq_bench: no subscriber connected within the timeout\n");
    return -1;
}

static int run_pub(void *zctx, const struct opts *o)
{
    double deadline = now_s() + o->timeout_s;
    uint8_t *m = malloc(o->size);
    void *pub = zmq_socket(zctx, ZMQ_XPUB);
    int rc = EXIT_FAIL;
    if (m == NULL || pub == NULL) {
        fprintf(stderr, "zmq_bench: cannot create the socket\n");
        goto out;
    }
    if (set_int(pub, ZMQ_XPUB_NODROP, 1, "ZMQ_XPUB_NODROP") < 0 ||
        set_int(pub, ZMQ_LINGER, (int)(o->timeout_s * 1000), "ZMQ_LINGER") < 0 ||
        set_pgm_opts(pub, o) < 0)
        goto out;
    if (zmq_connect(pub, o->endpoint) != 0) {
        fprintf(stderr, "zmq_bench: connect %s: %s\n", o->endpoint, zmq_strerror(zmq_errno()));
        goto out;
    }
    if (is_epgm(o)) {
        struct timespec d = {.tv_sec = (time_t)o->start_delay_s,
                             .tv_nsec =
                                 (long)((o->start_delay_s - (time_t)o->start_delay_s) * 1e9)};
        nanosleep(&d, NULL);
    } else if (wait_subscriber(pub, deadline) < 0) {
        rc = EXIT_TIMEOUT;
        goto out;
    }
    double t0 = now_s();
    for (uint64_t i = 0; i < o->count; i++) {
        fill_message(m, o->size, i);
        while (zmq_send(pub, m, o->size, 0) < 0) {
            if (zmq_errno() != EAGAIN && zmq_errno() != EINTR) {
                fprintf(stderr, "zmq_bench: send of message %" PRIu64 ": %s\n", i,
                        zmq_strerror(zmq_errno()));
                goto out;
            }
            if (now_s() > deadline) {
                fprintf(stderr, "zmq_bench: timed out at message %" PRIu64 "\n", i);
                rc = EXIT_TIMEOUT;
                goto out;
            }
        }
    }
    double elapsed = now_s() - t0;
    if (o->json)
        printf("{\"tool\":\"zmq_bench\",\"role\":\"pub\",\"endpoint\":\"%s\",\"messages\":%" PRIu64
               ",\"size\":%zu,\"elapsed_s\":%.6f,\"msgs_per_s\":%.1f}\n",
               o->endpoint, o->count, o->size, elapsed,
               elapsed > 0 ? (double)o->count / elapsed : 0.0);
    else
        printf("zmq_bench pub: %" PRIu64 " messages of %zu B queued in %.3f s\n", o->count, o->size,
               elapsed);
    rc = EXIT_OK;
out:
    if (pub != NULL)
        zmq_close(pub); /* ZMQ_LINGER: sends what is queued first */
    free(m);
    return rc;
}

struct recv_state {
    uint64_t received, corrupt, out_of_order, missing, next, first_index;
    double t_first, t_last;
};

static void print_sub(const struct opts *o, const struct recv_state *st)
{
    double elapsed = st->t_last - st->t_first;
    double mps = elapsed > 0 && st->received > 1 ? (double)(st->received - 1) / elapsed : 0;
    /* Missing: skipped indices, and those after the last one received. */
    uint64_t missing = st->missing + (st->received ? o->count - st->next : o->count);
    if (!o->json) {
        printf("zmq_bench sub: %" PRIu64 " of %" PRIu64 " messages intact (%" PRIu64
               " corrupt, %" PRIu64 " out of order, %" PRIu64 " missing, first index %" PRIu64
               ") in %.3f s: %.0f msg/s\n",
               st->received, o->count, st->corrupt, st->out_of_order, missing, st->first_index,
               elapsed, mps);
        return;
    }
    printf("{\"tool\":\"zmq_bench\",\"role\":\"sub\",\"endpoint\":\"%s\",\"messages\":%" PRIu64
           ",\"size\":%zu,\"received\":%" PRIu64 ",\"corrupt\":%" PRIu64
           ",\"out_of_order\":%" PRIu64 ",\"missing\":%" PRIu64 ",\"first_index\":%" PRIu64
           ",\"elapsed_s\":%.6f,"
           "\"msgs_per_s\":%.1f}\n",
           o->endpoint, o->count, o->size, st->received, st->corrupt, st->out_of_order, missing,
           st->first_index, elapsed, mps);
}

static int run_sub(void *zctx, const struct opts *o)
{
    double deadline = now_s() + o->timeout_s;
    struct recv_state st = {0};
    uint8_t *m = malloc(o->size + 1);
    void *sub = zmq_socket(zctx, ZMQ_SUB);
    int rc = EXIT_FAIL;
    bool timed_out = false;
    if (m == NULL || sub == NULL) {
        fprintf(stderr, "zmq_bench: cannot create the socket\n");
        goto out;
    }
    if (set_int(sub, ZMQ_RCVHWM, 0, "ZMQ_RCVHWM") < 0 ||
        set_int(sub, ZMQ_RCVTIMEO, 200, "ZMQ_RCVTIMEO") < 0 || set_pgm_opts(sub, o) < 0 ||
        zmq_setsockopt(sub, ZMQ_SUBSCRIBE, "", 0) != 0)
        goto out;
    int bound = is_epgm(o) ? zmq_connect(sub, o->endpoint) : zmq_bind(sub, o->endpoint);
    if (bound != 0) {
        fprintf(stderr, "zmq_bench: %s %s: %s\n", is_epgm(o) ? "connect" : "bind", o->endpoint,
                zmq_strerror(zmq_errno()));
        goto out;
    }
    while (st.next < o->count) {
        double now = now_s();
        if (now > deadline || (st.received > 0 && now - st.t_last > o->idle_s)) {
            timed_out = now > deadline;
            break;
        }
        int n = zmq_recv(sub, m, o->size + 1, 0);
        if (n < 0) {
            if (zmq_errno() == EAGAIN || zmq_errno() == EINTR)
                continue;
            fprintf(stderr, "zmq_bench: receive: %s\n", zmq_strerror(zmq_errno()));
            goto out;
        }
        uint64_t index;
        if (!check_message(m, (size_t)n, o->size, &index) || index >= o->count) {
            st.corrupt++;
            continue;
        }
        double t = now_s();
        if (st.received == 0) {
            st.t_first = t;
            st.first_index = index;
            st.missing = index; /* those before the first are missing too */
            st.next = index;
        }
        if (index < st.next) {
            st.out_of_order++;
            continue;
        }
        st.missing += index - st.next;
        st.next = index + 1;
        st.received++;
        st.t_last = t;
    }
    print_sub(o, &st);
    if (timed_out)
        rc = st.received ? EXIT_FAIL : EXIT_TIMEOUT;
    else
        rc =
            st.corrupt || st.out_of_order || st.missing || st.next < o->count ? EXIT_FAIL : EXIT_OK;
out:
    if (sub != NULL) {
        set_int(sub, ZMQ_LINGER, 0, "ZMQ_LINGER");
        zmq_close(sub);
    }
    free(m);
    return rc;
}

int main(int argc, char **argv)
{
    struct opts o;
    int rc = parse_opts(argc, argv, &o);
    if (rc != EXIT_OK)
        return rc;
    void *zctx = zmq_ctx_new();
    if (zctx == NULL) {
        fprintf(stderr, "zmq_bench: zmq_ctx_new: %s\n", zmq_strerror(zmq_errno()));
        return EXIT_FAIL;
    }
    rc = strcmp(o.role, "pub") == 0 ? run_pub(zctx, &o) : run_sub(zctx, &o);
    zmq_ctx_term(zctx);
    return rc;
}
