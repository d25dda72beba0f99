/* SPDX-License-Identifier: BSD-2-Clause */
/* rdpub.c - publish to an rdps topic: lines of a file/stdin, or generated self-checking pattern
 * messages. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdps/rdps.h>

#include "ctx_options.h"
#include "pattern.h"
#include "rdps_clock.h"
#include "tool_cli.h"
#include "tool_event.h"
#include "tool_json.h"

static const char *prog = "rdpub";
static volatile sig_atomic_t stop_requested;

struct options {
    const char *topic, *input;
    struct tool_ctx_options ctx;
    uint64_t count; /* 0: pattern default 1000 / all lines */
    uint64_t size_min, size_max;
    bool size_given;
    uint64_t rate; /* messages per second, 0: as fast as possible */
    bool pattern, json;
    uint64_t seed;
    uint64_t wait_subs, wait_timeout_s, linger_ms;
    bool reliable;
    rdps_flow_control flow;
    uint64_t flow_tag, flow_min, ring_bytes, rate_limit, drain_timeout_s, parity_k;
    uint64_t parity_proactive;
    bool verbose;
    rdps_batch_mode batching; /* --batch */
    uint64_t batch_linger_us; /* --batch-linger */
    uint64_t chain;           /* --chain (0: 16 datagrams' worth) */
};

struct progress {
    uint64_t messages, bytes, start_ns, last_report_ns, last_messages, eagain;
};

static void usage(FILE *out)
{
    fprintf(
        out,
        "Usage: rdpub -t TOPIC [-b BIND_IP | -d DEV] [-c COUNT] [-s SIZE | --size-range MIN:MAX]\n"
        "             [-r RATE] [--pattern [--seed N]] [--json] [-v] [--wait-subs N]\n"
        "             [--wait-timeout SEC] [--linger MS] [--group ADDR] [--cm-port P]\n"
        "             [--reliable [--flow max|min|tagged:TAG:N] [--ring BYTES]\n"
        "              [--rate-limit BYTES] [--parity-k K] [--parity-proactive N]\n"
        "              [--drain-timeout SEC]] [--batch on|off] [--batch-linger US]\n"
        "             [--chain N]\n"
        "             [--loss-rx RATE] [--loss-tx RATE] [--loss-seed N] [FILE|-]\n"
        "Publishes each line of FILE (or stdin) as a message, or with --pattern COUNT\n"
        "generated messages that rdsub --verify can check byte for byte.\n"
        "  -t, --topic TOPIC     topic name (required)\n"
        "  -c, --count N         messages to send (pattern default 1000; lines: all)\n"
        "  -s, --size SIZE       pattern message size in bytes (k/m suffix; default 64)\n"
        "      --size-range A:B  pattern sizes drawn uniformly from [A, B]\n"
        "  -r, --rate N          at most N messages per second (default: as fast as possible)\n"
        "      --pattern         send generated pattern messages instead of lines\n"
        "      --seed N          pattern seed (default 1; rdsub --seed must match)\n"
        "      --json            print a one-line JSON summary at exit\n"
        "  -v, --verbose         print subscribers discovery sees come and go (stderr)\n"
        "      --wait-subs N     before sending, wait until N subscribers were discovered\n"
        "      --wait-timeout S  give up waiting for readiness/subscribers after S s (default 30)\n"
        "      --linger MS       keep the context alive MS ms after the last send (default 500)\n"
        "      --reliable        reliable publishing: frames kept in a retransmission ring,\n"
        "                        NAKed ones repaired, flow control from subscriber STATUS\n"
        "      --flow MODE       --reliable flow control: max (default; the fastest\n"
        "                        receiver sets the pace, slow ones are evicted and told),\n"
        "                        min (the slowest live receiver), tagged:TAG:N (the slowest\n"
        "                        of the receivers started with rdsub --tag TAG; nothing is\n"
        "                        sent before N of them are there)\n"
        "      --ring BYTES      --reliable: retransmission ring size (k/m/g; default 16m)\n"
        "      --rate-limit BYTES --reliable: at most BYTES of datagrams per second on the\n"
        "                        wire, repairs included, sent evenly (k/m/g; default: none).\n"
        "                        Set it a little below what the subscribers drain: faster,\n"
        "                        repairs queue behind the excess\n"
        "      --parity-k K      --reliable: parity repairs in blocks of K datagrams (a power\n"
        "                        of two, 2..128; subscribers need --parity-blocks)\n"
        "      --parity-proactive N --parity-k: send N parity datagrams of each block\n"
        "                        unasked (0..K; for links with steady loss)\n"
        "      --drain-timeout S --reliable: after the last message, wait up to S s\n"
        "                        (default 10) until every receiver has reported it all\n"
        "      --batch on|off    small messages share datagrams (default on: a message\n"
        "                        waits only while an earlier send's completion is\n"
        "                        awaited or RDPS_SEND_MORE\n"
        "                        holds it; unpaced --pattern holds 16 datagrams'\n"
        "                        worth of messages so, then posts them);\n"
        "                        off: one datagram per message (rdps 1.2)\n"
        "      --batch-linger US with batching: a datagram waits up to US microseconds\n"
        "                        for more messages (0..1000000; default 0)\n"
        "      --chain N         unpaced --pattern: N messages per RDPS_SEND_MORE chain\n"
        "                        (1..1000000; default 16 datagrams' worth; 1: a plain\n"
        "                        rdps_pub_send loop)\n");
    tool_ctx_options_usage(out);
    fprintf(out, "Exit: 0 sent (--reliable: and every receiver caught up), 1 send failed,\n"
                 "      2 bad usage, 3 timed out waiting (--reliable: receivers still behind at\n"
                 "      the drain timeout), 4 runtime error.\n");
}

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

struct pub_events {
    uint64_t evictions;
    bool verbose;
};

/* Receivers evicted, resumed or timed out are worth a line; subscribers seen or gone with -v. */
static void on_pub_event(void *user, const rdps_event *ev)
{
    struct pub_events *pe = user;
    switch (ev->type) {
    case RDPS_EVENT_RECEIVER_EVICTED:
        pe->evictions++;
        break;
    case RDPS_EVENT_RECEIVER_RESUMED:
    case RDPS_EVENT_RECEIVER_TIMED_OUT:
        break;
    case RDPS_EVENT_SUBSCRIBER_SEEN:
    case RDPS_EVENT_SUBSCRIBER_GONE:
        if (!pe->verbose)
            return;
        break;
    default:
        return;
    }
    char line[160];
    fprintf(stderr, "%s: %s\n", prog, tool_event_text(ev, line, sizeof(line)));
}

/* --flow max | min | tagged:TAG:N */
static bool parse_flow(const char *arg, struct options *opt)
{
    /* A later --flow replaces an earlier one: the tag goes with tagged only (the library refuses
     * a flow_tag without RDPS_FLOW_TAGGED). */
    opt->flow_tag = opt->flow_min = 0;
    if (strcmp(arg, "max") == 0) {
        opt->flow = RDPS_FLOW_MAX;
        return true;
    }
    if (strcmp(arg, "min") == 0) {
        opt->flow = RDPS_FLOW_MIN;
        return true;
    }
    unsigned long long tag, n;
    char tail;
    /* N: at most the 256 receivers a publisher tracks (more could never be met). */
    if (sscanf(arg, "tagged:%llu:%llu%c", &tag, &n, &tail) == 2 && tag >= 1 && tag <= UINT32_MAX &&
        n <= 256) {
        opt->flow = RDPS_FLOW_TAGGED;
        opt->flow_tag = tag;
        opt->flow_min = n;
        return true;
    }
    tool_error(prog, "--flow: expected max, min or tagged:TAG:N (TAG 1..%u, N 0..256), got '%s'",
               UINT32_MAX, arg);
    return false;
}

static bool parse_args(int argc, char **argv, struct options *opt)
{
    enum {
        OPT_RANGE = 256,
        OPT_PATTERN,
        OPT_SEED,
        OPT_JSON,
        OPT_WAIT_SUBS,
        OPT_WAIT_TIMEOUT,
        OPT_LINGER,
        OPT_RELIABLE,
        OPT_FLOW,
        OPT_RING,
        OPT_RATE_LIMIT,
        OPT_PARITY_K,
        OPT_PARITY_PROACTIVE,
        OPT_DRAIN_TIMEOUT,
        OPT_BATCH,
        OPT_BATCH_LINGER,
        OPT_CHAIN,
    };
    static const struct option longopts[] = {
        {"topic", required_argument, NULL, 't'},
        {"count", required_argument, NULL, 'c'},
        {"size", required_argument, NULL, 's'},
        {"size-range", required_argument, NULL, OPT_RANGE},
        {"rate", required_argument, NULL, 'r'},
        {"pattern", no_argument, NULL, OPT_PATTERN},
        {"seed", required_argument, NULL, OPT_SEED},
        {"json", no_argument, NULL, OPT_JSON},
        {"verbose", no_argument, NULL, 'v'},
        {"wait-subs", required_argument, NULL, OPT_WAIT_SUBS},
        {"wait-timeout", required_argument, NULL, OPT_WAIT_TIMEOUT},
        {"linger", required_argument, NULL, OPT_LINGER},
        {"reliable", no_argument, NULL, OPT_RELIABLE},
        {"flow", required_argument, NULL, OPT_FLOW},
        {"ring", required_argument, NULL, OPT_RING},
        {"rate-limit", required_argument, NULL, OPT_RATE_LIMIT},
        {"parity-k", required_argument, NULL, OPT_PARITY_K},
        {"parity-proactive", required_argument, NULL, OPT_PARITY_PROACTIVE},
        {"drain-timeout", required_argument, NULL, OPT_DRAIN_TIMEOUT},
        {"batch", required_argument, NULL, OPT_BATCH},
        {"batch-linger", required_argument, NULL, OPT_BATCH_LINGER},
        {"chain", required_argument, NULL, OPT_CHAIN},
        {"help", no_argument, NULL, 'h'},
        TOOL_CTX_LONG_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    const uint64_t max_size = 1ull << 32;
    int c;

    opt->seed = 1;
    opt->size_min = opt->size_max = 64;
    opt->wait_timeout_s = 30;
    opt->linger_ms = 500;
    opt->drain_timeout_s = 10;
    tool_ctx_options_init(&opt->ctx);
    while ((c = getopt_long(argc, argv, "t:c:s:r:vh" TOOL_CTX_SHORT_OPTIONS, longopts, NULL)) !=
           -1) {
        int shared = tool_ctx_option(prog, c, optarg, &opt->ctx);
        if (shared < 0)
            return false;
        if (shared > 0)
            continue;
        switch (c) {
        case 't':
            opt->topic = optarg;
            break;
        case 'c':
            if (!tool_opt_u64(prog, "-c", optarg, 1, UINT64_MAX, &opt->count))
                return false;
            break;
        case 's':
            if (!tool_opt_size(prog, "-s", optarg, 0, max_size, &opt->size_min))
                return false;
            opt->size_max = opt->size_min;
            opt->size_given = true;
            break;
        case OPT_RANGE:
            if (!tool_opt_size_range(prog, "--size-range", optarg, max_size, &opt->size_min,
                                     &opt->size_max))
                return false;
            opt->size_given = true;
            break;
        case 'r':
            if (!tool_opt_u64(prog, "-r", optarg, 1, 100000000, &opt->rate))
                return false;
            break;
        case OPT_PATTERN:
            opt->pattern = true;
            break;
        case OPT_SEED:
            if (!tool_opt_u64(prog, "--seed", optarg, 0, UINT64_MAX, &opt->seed))
                return false;
            break;
        case OPT_JSON:
            opt->json = true;
            break;
        case OPT_WAIT_SUBS:
            if (!tool_opt_u64(prog, "--wait-subs", optarg, 0, 100000, &opt->wait_subs))
                return false;
            break;
        case OPT_WAIT_TIMEOUT:
            if (!tool_opt_u64(prog, "--wait-timeout", optarg, 1, 86400, &opt->wait_timeout_s))
                return false;
            break;
        case OPT_LINGER:
            if (!tool_opt_u64(prog, "--linger", optarg, 0, 3600000, &opt->linger_ms))
                return false;
            break;
        case OPT_RELIABLE:
            opt->reliable = true;
            break;
        case OPT_FLOW:
            if (!parse_flow(optarg, opt))
                return false;
            break;
        case OPT_RING:
            if (!tool_opt_size(prog, "--ring", optarg, 64u * 1024u, 1ull << 32, &opt->ring_bytes))
                return false;
            break;
        case OPT_RATE_LIMIT:
            if (!tool_opt_size(prog, "--rate-limit", optarg, 1024, 100000000000ull,
                               &opt->rate_limit))
                return false;
            break;
        case OPT_PARITY_K:
            if (!tool_opt_u64(prog, "--parity-k", optarg, 2, 128, &opt->parity_k))
                return false;
            break;
        case OPT_PARITY_PROACTIVE:
            if (!tool_opt_u64(prog, "--parity-proactive", optarg, 0, 128, &opt->parity_proactive))
                return false;
            break;
        case OPT_DRAIN_TIMEOUT:
            if (!tool_opt_u64(prog, "--drain-timeout", optarg, 0, 86400, &opt->drain_timeout_s))
                return false;
            break;
        case OPT_BATCH:
            if (strcmp(optarg, "on") == 0) {
                opt->batching = RDPS_BATCH_AUTO;
            } else if (strcmp(optarg, "off") == 0) {
                opt->batching = RDPS_BATCH_OFF;
            } else {
                tool_error(prog, "--batch takes on or off, not '%s'", optarg);
                return false;
            }
            break;
        case OPT_BATCH_LINGER:
            if (!tool_opt_u64(prog, "--batch-linger", optarg, 0, 1000000, &opt->batch_linger_us))
                return false;
            break;
        case OPT_CHAIN:
            if (!tool_opt_u64(prog, "--chain", optarg, 1, 1000000, &opt->chain))
                return false;
            break;
        case 'v':
            opt->verbose = true;
            break;
        case 'h':
            usage(stdout);
            exit(TOOL_EXIT_OK);
        default:
            return false;
        }
    }
    if (optind < argc)
        opt->input = argv[optind++];
    if (optind < argc) {
        tool_error(prog, "unexpected argument '%s'", argv[optind]);
        return false;
    }
    if (opt->topic == NULL) {
        tool_error(prog, "a topic is required (-t TOPIC)");
        return false;
    }
    if (rdps_topic_id(opt->topic) == 0) {
        tool_error(prog, "invalid topic name '%s': 1..255 printable characters, no spaces",
                   opt->topic);
        return false;
    }
    if (!tool_ctx_options_check(prog, &opt->ctx))
        return false;
    if (opt->pattern && opt->input) {
        tool_error(prog, "--pattern generates messages: do not also give FILE '%s'", opt->input);
        return false;
    }
    if (!opt->pattern && opt->size_given) {
        tool_error(prog, "-s/--size-range only apply to --pattern messages");
        return false;
    }
    if (opt->pattern && opt->count == 0)
        opt->count = 1000;
    if (!opt->reliable &&
        (opt->flow != RDPS_FLOW_MAX || opt->ring_bytes != 0 || opt->rate_limit != 0)) {
        tool_error(prog, "--flow, --ring and --rate-limit need --reliable");
        return false;
    }
    if (!opt->reliable && opt->parity_k != 0) {
        tool_error(prog, "--parity-k needs --reliable");
        return false;
    }
    if (opt->parity_proactive > opt->parity_k) {
        tool_error(prog, "--parity-proactive needs --parity-k K and at most K");
        return false;
    }
    return true;
}

/*
 * Paces the next send: the ctx keeps polling while it waits (a reliable publisher answers NAKs
 * and STATUS and sends its heartbeats meanwhile); the last sub-millisecond is slept.
 */
static void pace_until(rdps_ctx_t *ctx, uint64_t when_ns)
{
    for (;;) {
        uint64_t now = rdps__clock_monotonic_ns();
        if (when_ns <= now || stop_requested)
            return;
        uint64_t d = when_ns - now;
        if (d >= 1000000ull) {
            if (rdps_ctx_wait(ctx, (int)(d / 1000000ull)) < 0)
                return;
            continue;
        }
        struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)d};
        nanosleep(&ts, NULL);
    }
}

/* Polls the ctx until cond(pub) holds or the deadline passes; false on timeout/stop/error. */
static bool wait_for(rdps_ctx_t *ctx, rdps_pub_t *pub, uint64_t want_subs, uint64_t deadline_ns)
{
    while (!stop_requested) {
        if (rdps_pub_ready(pub) && (uint64_t)rdps_pub_subscriber_count(pub) >= want_subs)
            return true;
        if (rdps__clock_monotonic_ns() >= deadline_ns)
            return false;
        if (rdps_ctx_wait(ctx, 50) < 0)
            return false;
    }
    return false;
}

static void report_progress(struct progress *p, bool final)
{
    uint64_t now = rdps__clock_monotonic_ns();
    if (!final && now - p->last_report_ns < 1000000000ull)
        return;
    double secs = (double)(now - p->last_report_ns) / 1e9;
    fprintf(stderr, "\rrdpub: %" PRIu64 " msgs, %.1f MB, %.0f msg/s, %" PRIu64 " back-pressure%s",
            p->messages, (double)p->bytes / 1e6,
            secs > 0 ? (double)(p->messages - p->last_messages) / secs : 0.0, p->eagain,
            final ? "\n" : "   ");
    p->last_report_ns = now;
    p->last_messages = p->messages;
}

/* Datagrams posted as one work-request chain when sending as fast as possible. */
#define SEND_BATCH 16

/*
 * Messages sent as one chain (RDPS_SEND_MORE on all but its last): SEND_BATCH datagrams' worth.
 * Batched, a datagram holds several messages of the mean size, and a chain of SEND_BATCH
 * messages would end in a datagram cut short (at MTU 4096, 16 messages of 64 bytes in a datagram
 * that takes 61: the wire then carries a quarter of what it could).
 */
static uint64_t chain_messages(const struct options *opt, const rdps_ctx_t *ctx)
{
    if (opt->chain != 0)
        return opt->chain;
    if (opt->batching != RDPS_BATCH_AUTO)
        return SEND_BATCH;
    uint64_t room = rdps_ctx_max_datagram_payload(ctx);
    uint64_t mean = (opt->size_min + opt->size_max) / 2 + 2; /* a batch record's length word */
    uint64_t per_datagram = room / mean;
    return SEND_BATCH * (per_datagram > 1 ? per_datagram : 1);
}

int main(int argc, char **argv)
{
    tool_cli_init(argv);
    struct options opt = {0};
    struct progress prog_state = {0};
    rdps_ctx_t *ctx = NULL;
    rdps_pub_t *pub = NULL;
    FILE *in = NULL;
    uint8_t *buf = NULL;
    char *line = NULL;
    size_t line_cap = 0;
    int rc, status = TOOL_EXIT_OK;
    bool tty = isatty(STDERR_FILENO);

    if (!parse_args(argc, argv, &opt)) {
        tool_usage_hint(prog);
        return TOOL_EXIT_USAGE;
    }
    if (!opt.pattern) {
        in = (opt.input == NULL || strcmp(opt.input, "-") == 0) ? stdin : fopen(opt.input, "r");
        if (in == NULL) {
            tool_error(prog, "cannot open '%s': %s", opt.input, strerror(errno));
            tool_usage_hint(prog);
            return TOOL_EXIT_USAGE;
        }
    } else {
        buf = malloc(opt.size_max ? (size_t)opt.size_max : 1);
        if (buf == NULL) {
            tool_error(prog, "out of memory for %" PRIu64 "-byte messages", opt.size_max);
            return TOOL_EXIT_RUNTIME;
        }
    }

    if (tool_ctx_open(prog, &opt.ctx, (size_t)opt.size_max, &ctx) < 0) {
        status = TOOL_EXIT_RUNTIME;
        goto out;
    }
    struct pub_events events = {.verbose = opt.verbose};
    rdps_pub_opts popts = {
        .group = opt.ctx.group,
        .transport = opt.ctx.transport,
        .reliable = opt.reliable,
        .ring_bytes = (size_t)opt.ring_bytes,
        .rate_limit = opt.rate_limit,
        .parity_k = (uint32_t)opt.parity_k,
        .parity_proactive = (uint32_t)opt.parity_proactive,
        .flow = opt.flow,
        .flow_tag = (uint32_t)opt.flow_tag,
        .flow_min_receivers = (uint32_t)opt.flow_min,
        .on_event = on_pub_event,
        .event_user = &events,
        .batching = opt.batching,
        .batch_linger_us = (uint32_t)opt.batch_linger_us,
    };
    rc = rdps_pub_create(ctx, opt.topic, &popts, &pub);
    if (rc < 0) {
        tool_error(prog, "cannot publish to '%s': %s (%s)", opt.topic, rdps_strerror(rc),
                   rdps_last_error_message());
        status = TOOL_EXIT_RUNTIME;
        goto out;
    }
    if (opt.pattern && opt.size_max > rdps_pub_max_message_size(pub)) {
        tool_error(prog, "messages of up to %" PRIu64 " bytes: this publisher takes at most %zu%s",
                   opt.size_max, rdps_pub_max_message_size(pub),
                   opt.reliable ? " (reliable: what the ring holds; see --ring)" : "");
        status = TOOL_EXIT_USAGE;
        goto out;
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGPIPE, SIG_IGN);

    if (!wait_for(ctx, pub, opt.wait_subs,
                  rdps__clock_monotonic_ns() + opt.wait_timeout_s * 1000000000ull)) {
        tool_error(prog, "%s after %" PRIu64 " s (%d of %" PRIu64 " subscribers seen)",
                   rdps_pub_ready(pub) ? "subscribers did not appear"
                                       : "multicast join did not complete",
                   opt.wait_timeout_s, rdps_pub_subscriber_count(pub), opt.wait_subs);
        status = TOOL_EXIT_TIMEOUT;
        goto out;
    }

    prog_state.start_ns = prog_state.last_report_ns = rdps__clock_monotonic_ns();
    uint64_t interval_ns = opt.rate ? 1000000000ull / opt.rate : 0;
    uint64_t chain = chain_messages(&opt, ctx);
    for (uint64_t i = 0; !stop_requested && (opt.count == 0 || i < opt.count); i++) {
        const void *data;
        size_t len;
        if (opt.pattern) {
            len = pattern_size(opt.seed, i, (size_t)opt.size_min, (size_t)opt.size_max);
            pattern_fill(opt.seed, i, buf, len);
            data = buf;
        } else {
            ssize_t n = getline(&line, &line_cap, in);
            if (n < 0)
                break;
            if (n > 0 && line[n - 1] == '\n')
                n--;
            data = line;
            len = (size_t)n;
        }
        if (interval_ns)
            pace_until(ctx, prog_state.start_ns + i * interval_ns);
        /*
         * Unpaced pattern messages go out in chains of SEND_BATCH datagrams (one post
         * each); paced ones and lines (maybe typed by hand) go at once.
         */
        bool last = opt.count != 0 && i + 1 == opt.count;
        bool batch = opt.pattern && !interval_ns && !last && (i + 1) % chain != 0;
        unsigned flags = batch ? RDPS_SEND_MORE : 0;
        rc = tool_send(ctx, pub, data, len, flags, &stop_requested, &prog_state.eagain);
        if (rc == TOOL_SEND_STALLED) {
            /* What the publisher was waiting on: the device (sends pending), or receivers. */
            rdps_counters pc;
            rdps_pub_counters(pub, &pc);
            tool_error(prog,
                       "message %" PRIu64 " stayed back-pressured for 10 s (%s): %d sends "
                       "pending on the device, %d receivers behind, %" PRIu64
                       " NAKs received, %" PRIu64 " suppressed, %" PRIu64 " repairs sent",
                       i,
                       opt.reliable ? "the device is not completing sends, or a receiver's "
                                      "window stays closed"
                                    : "the device is not completing sends",
                       rdps_ctx_sends_pending(ctx), rdps_pub_receivers_behind(pub),
                       pc.naks_received, pc.naks_suppressed, pc.retransmits);
            status = TOOL_EXIT_FAILED;
            break;
        }
        if (rc < 0) {
            if (rc != RDPS_ECANCELED) {
                tool_error(prog, "send of message %" PRIu64 " (%zu bytes) failed: %s (%s)", i, len,
                           rdps_strerror(rc), rdps_last_error_message());
                status = TOOL_EXIT_FAILED;
            }
            break;
        }
        prog_state.messages++;
        prog_state.bytes += len;
        /* A reliable publisher hears NAKs and STATUS only when its ctx is polled: between
         * batches, not only when back-pressured, or repairs wait for the window to close. */
        if (opt.reliable && !batch && rdps_ctx_poll(ctx, 0) < 0)
            break;
        if (tty)
            report_progress(&prog_state, false);
    }
    rdps_ctx_flush(ctx); /* a stop or read error can leave a batch queued */
    uint64_t send_end = rdps__clock_monotonic_ns();
    uint64_t acked_end = send_end; /* reliable: once every receiver had every message */
    if (tty)
        report_progress(&prog_state, true);

    /* Reliable: the last messages may still need repairs; stay until every receiver has them. */
    if (opt.reliable && status == TOOL_EXIT_OK) {
        uint64_t drain_end = rdps__clock_monotonic_ns() + opt.drain_timeout_s * 1000000000ull;
        while (!stop_requested && rdps_pub_receivers_behind(pub) > 0 &&
               rdps__clock_monotonic_ns() < drain_end)
            if (rdps_ctx_wait(ctx, 10) < 0)
                break;
        acked_end = rdps__clock_monotonic_ns();
        int behind = rdps_pub_receivers_behind(pub);
        if (behind > 0 && !stop_requested) {
            tool_error(prog, "%d receiver(s) still behind after the %" PRIu64 " s drain timeout",
                       behind, opt.drain_timeout_s);
            status = TOOL_EXIT_TIMEOUT;
        }
    }

    /*
     * Keep the context alive for the linger time, and beyond it (by at most 2 s)
     * while the device may still be sending what was posted.
     */
    uint64_t linger_end = rdps__clock_monotonic_ns() + opt.linger_ms * 1000000ull;
    uint64_t drain_end = linger_end + 2000000000ull;
    for (;;) {
        uint64_t now = rdps__clock_monotonic_ns();
        if (stop_requested || now >= drain_end ||
            (now >= linger_end && rdps_ctx_sends_pending(ctx) == 0))
            break;
        if (rdps_ctx_wait(ctx, 10) < 0)
            break;
    }

    if (opt.json) {
        struct tool_json j;
        rdps_counters c;
        double elapsed = (double)(send_end - prog_state.start_ns) / 1e9;
        rdps_pub_counters(pub, &c);
        tool_json_init(&j, stdout);
        tool_json_object_begin(&j, NULL);
        tool_json_str(&j, "tool", "rdpub");
        tool_json_str(&j, "topic", opt.topic);
        tool_json_u64(&j, "session", rdps_pub_session(pub));
        tool_json_u64(&j, "messages", prog_state.messages);
        tool_json_u64(&j, "bytes", prog_state.bytes);
        tool_json_u64(&j, "fragments", c.frames_sent);
        tool_json_u64(&j, "frames_batched", c.frames_batched); /* datagrams of 2+ messages */
        tool_json_bool(&j, "batching", opt.batching == RDPS_BATCH_AUTO);
        tool_json_u64(&j, "backpressure", prog_state.eagain);
        tool_json_u64(&j, "loss_dropped_tx", c.loss_dropped_tx);
        rdps_counters ctx_c;
        rdps_ctx_counters(ctx, &ctx_c); /* the ctx's receive side (NAK, STATUS) */
        tool_json_u64(&j, "loss_dropped_rx", ctx_c.loss_dropped_rx);
        tool_json_u64(&j, "frames_received", ctx_c.frames_received);
        tool_json_u64(&j, "own_frames", ctx_c.own_frames);
        tool_json_u64(&j, "bad_frames", ctx_c.bad_frames);
        /* Keyed: frames the authenticating layer dropped (forged, keyless, stale key, short,
         * sealed too far from our clock), and replays (also from another address). */
        tool_json_u64(&j, "auth_dropped",
                      ctx_c.auth_unsigned + ctx_c.auth_short + ctx_c.auth_unknown_key +
                          ctx_c.auth_bad_tag + ctx_c.auth_stale);
        tool_json_u64(&j, "auth_replayed", ctx_c.auth_replayed);
        tool_json_u64(&j, "auth_stale", ctx_c.auth_stale);
        tool_json_u64(&j, "rq_empty", ctx_c.rq_empty);
        tool_json_u64(&j, "qp_recoveries", ctx_c.qp_recoveries);
        tool_json_u64(&j, "sends_lost", ctx_c.sends_lost);
        tool_json_u64(&j, "send_stalls", ctx_c.send_stalls);
        tool_json_u64(&j, "subscribers", (uint64_t)rdps_pub_subscriber_count(pub));
        static const char *const modes[] = {"multicast", "unicast", "auto"};
        tool_json_str(&j, "transport", modes[opt.ctx.transport]);
        tool_json_u64(&j, "unicast_copies", c.unicast_copies);
        tool_json_u64(&j, "unicast_refused", ctx_c.unicast_refused);
        tool_json_u64(&j, "unicast_fallbacks", ctx_c.unicast_fallbacks);
        tool_json_bool(&j, "reliable", opt.reliable);
        tool_json_u64(&j, "rate_limit", opt.rate_limit);
        tool_json_u64(&j, "rate_waits", c.rate_waits);
        tool_json_u64(&j, "naks_received", c.naks_received);
        tool_json_u64(&j, "repairs", c.retransmits);
        tool_json_u64(&j, "repairs_unicast", c.repairs_unicast);
        tool_json_u64(&j, "repairs_multicast", c.repairs_multicast);
        tool_json_u64(&j, "parity_k", opt.parity_k);
        tool_json_u64(&j, "repair_bytes", c.repair_bytes);
        tool_json_u64(&j, "parity_sent", c.parity_sent);
        tool_json_u64(&j, "parity_bytes", c.parity_bytes);
        tool_json_u64(&j, "parity_proactive", c.parity_proactive);
        tool_json_u64(&j, "naks_suppressed", c.naks_suppressed);
        tool_json_u64(&j, "heartbeats", c.heartbeats_sent);
        tool_json_u64(&j, "receivers_refused", c.receivers_refused);
        tool_json_u64(&j, "repair_queue_full", c.repair_queue_full);
        tool_json_u64(&j, "repair_share_spent", c.repair_share_spent);
        tool_json_u64(&j, "evictions", events.evictions);
        tool_json_u64(&j, "rtt_us", c.rtt_us);
        tool_json_double(&j, "elapsed_s", elapsed);
        /* The send phase plus, reliable, the drain until every receiver had every message. */
        tool_json_double(&j, "acked_s", (double)(acked_end - prog_state.start_ns) / 1e9);
        tool_json_double(&j, "msgs_per_s",
                         elapsed > 0 ? (double)prog_state.messages / elapsed : 0.0);
        tool_json_finish(&j);
    }
out:
    rdps_pub_destroy(pub);
    rdps_ctx_destroy(ctx);
    free(buf);
    free(line);
    if (in && in != stdin)
        fclose(in);
    return status;
}
