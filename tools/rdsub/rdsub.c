/* rdsub.c - subscribe to an rdps topic: print, count or verify the messages that arrive. */
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdps/rdps.h>

#include "ctx_options.h"
#include "pattern.h"
#include "tool_util.h"

static const char *prog = "rdsub";
static volatile sig_atomic_t stop_requested;

enum exit_code {
    EXIT_OK = 0,
    EXIT_VERIFY_FAILED = 1,
    EXIT_USAGE = 2,
    EXIT_TIMEOUT = 3,
    EXIT_RUNTIME = 4,
};

struct options {
    const char *topic;
    struct tool_ctx_options ctx;
    uint64_t count; /* 0: until interrupted or timeout */
    uint64_t timeout_s;
    uint64_t seed;
    bool verify, json, quiet;
};

struct state {
    const struct options *opt;
    uint64_t messages, bytes, fragments, corrupt;
    uint64_t first_ns, last_ns;
    struct pattern_tracker tracker;
    uint32_t verify_session; /* --verify follows the first publisher session it sees */
    uint64_t other_sessions;
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: rdsub -t TOPIC [-b BIND_IP | -d DEV] [-c COUNT] [--timeout SEC] [--verify]\n"
            "             [--seed N] [--json] [-q] [--group ADDR] [--cm-port P]\n"
            "             [--loss-rx RATE] [--loss-tx RATE] [--loss-seed N]\n"
            "Receives messages of TOPIC and prints them (text, or a hex summary for binary).\n"
            "  -t, --topic TOPIC   topic name (required)\n"
            "  -c, --count N       exit 0 once N messages arrived (default: run until SIGINT)\n"
            "      --timeout SEC   give up after SEC seconds (exit 3)\n"
            "      --verify        check rdpub --pattern messages: corrupt, duplicate, missing\n"
            "      --seed N        pattern seed used by the publisher (default 1)\n"
            "      --json          print a one-line JSON summary at exit\n"
            "  -q, --quiet         do not print messages\n");
    tool_ctx_options_usage(out);
    fprintf(out, "Exit: 0 done, 1 verification failed, 2 bad usage, 3 timeout, 4 runtime error.\n");
}

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static void print_message(const void *data, size_t len, const rdps_msg_info *info)
{
    const unsigned char *p = data;
    bool text = true;
    for (size_t i = 0; i < len && text; i++)
        text = (p[i] >= 0x20 && p[i] < 0x7f) || p[i] == '\t';
    if (text) {
        fwrite(p, 1, len, stdout);
        fputc('\n', stdout);
        return;
    }
    printf("[%zu bytes, session %08" PRIx32 " seq %" PRIu32 "]", len, info->session_id, info->seq);
    for (size_t i = 0; i < len && i < 16; i++)
        printf(" %02x", p[i]);
    printf("%s\n", len > 16 ? " ..." : "");
}

static void on_message(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct state *st = user;
    uint64_t now = tool_now_ns();

    if (st->messages == 0)
        st->first_ns = now;
    st->last_ns = now;
    st->messages++;
    st->bytes += len;
    st->fragments += info->fragments;

    if (st->opt->verify) {
        if (st->verify_session == 0)
            st->verify_session = info->session_id;
        if (info->session_id != st->verify_session) {
            st->other_sessions++;
        } else {
            uint64_t index;
            if (pattern_check(st->opt->seed, data, len, st->tracker.next_hint, &index) !=
                PATTERN_OK)
                st->corrupt++;
            else
                pattern_tracker_add(&st->tracker, index);
        }
    }
    if (!st->opt->quiet)
        print_message(data, len, info);
}

static bool parse_args(int argc, char **argv, struct options *opt)
{
    enum {
        OPT_TIMEOUT = 256,
        OPT_VERIFY,
        OPT_SEED,
        OPT_JSON,
    };
    static const struct option longopts[] = {
        {"topic", required_argument, NULL, 't'},
        {"count", required_argument, NULL, 'c'},
        {"timeout", required_argument, NULL, OPT_TIMEOUT},
        {"verify", no_argument, NULL, OPT_VERIFY},
        {"seed", required_argument, NULL, OPT_SEED},
        {"json", no_argument, NULL, OPT_JSON},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        TOOL_CTX_LONG_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    int c;
    opt->seed = 1;
    tool_ctx_options_init(&opt->ctx);
    while ((c = getopt_long(argc, argv, "t:c:qh" TOOL_CTX_SHORT_OPTIONS, longopts, NULL)) != -1) {
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
            if (!tool_parse_u64(optarg, 1, UINT64_MAX, false, &opt->count)) {
                tool_error(prog, "-c needs a positive count, got '%s'", optarg);
                return false;
            }
            break;
        case OPT_TIMEOUT:
            if (!tool_parse_u64(optarg, 1, 86400 * 365, false, &opt->timeout_s)) {
                tool_error(prog, "--timeout needs a positive number of seconds, got '%s'", optarg);
                return false;
            }
            break;
        case OPT_VERIFY:
            opt->verify = true;
            break;
        case OPT_SEED:
            if (!tool_parse_u64(optarg, 0, UINT64_MAX, false, &opt->seed)) {
                tool_error(prog, "--seed needs a non-negative integer, got '%s'", optarg);
                return false;
            }
            break;
        case OPT_JSON:
            opt->json = true;
            break;
        case 'q':
            opt->quiet = true;
            break;
        case 'h':
            usage(stdout);
            exit(EXIT_OK);
        default:
            return false;
        }
    }
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
    if (opt->verify && opt->count == 0) {
        tool_error(prog, "--verify needs -c COUNT (the number of pattern messages published)");
        return false;
    }
    return true;
}

static void print_json(const struct state *st, const rdps_counters *c, uint64_t wall_ns)
{
    struct tool_json j;
    double elapsed = st->messages > 1 ? (double)(st->last_ns - st->first_ns) / 1e9 : 0.0;
    uint64_t missing = 0;
    if (st->opt->verify && st->opt->count > st->tracker.distinct)
        missing = st->opt->count - st->tracker.distinct;

    tool_json_begin(&j, stdout);
    tool_json_str(&j, "tool", "rdsub");
    tool_json_str(&j, "topic", st->opt->topic);
    tool_json_u64(&j, "messages", st->messages);
    tool_json_u64(&j, "bytes", st->bytes);
    tool_json_u64(&j, "fragments", st->fragments);
    tool_json_u64(&j, "corrupt", st->corrupt);
    tool_json_u64(&j, "duplicates", st->tracker.duplicates);
    tool_json_u64(&j, "missing", missing);
    tool_json_u64(&j, "verified", st->opt->verify ? st->tracker.distinct : 0);
    tool_json_u64(&j, "gaps", c->gaps);
    tool_json_u64(&j, "lost", c->lost);
    tool_json_u64(&j, "evicted", c->reasm_evictions);
    tool_json_u64(&j, "timeouts", c->reasm_timeouts);
    tool_json_u64(&j, "bad_frames", c->bad_frames);
    tool_json_u64(&j, "dup_frames", c->duplicates);
    tool_json_u64(&j, "loss_dropped_rx", c->loss_dropped_rx);
    tool_json_u64(&j, "frames_received", c->frames_received);
    tool_json_u64(&j, "rq_empty", c->rq_empty);
    tool_json_u64(&j, "unknown_topic", c->unknown_topic);
    tool_json_double(&j, "elapsed_s", elapsed);
    tool_json_double(&j, "msgs_per_s", elapsed > 0 ? (double)(st->messages - 1) / elapsed : 0.0);
    tool_json_double(&j, "wall_s", (double)wall_ns / 1e9);
    tool_json_end(&j);
}

int main(int argc, char **argv)
{
    struct options opt = {0};
    struct state st = {0};
    rdps_ctx_t *ctx = NULL;
    rdps_sub_t *sub = NULL;
    int rc, status = EXIT_OK;

    if (!parse_args(argc, argv, &opt)) {
        fprintf(stderr, "Try '%s --help'.\n", prog);
        return EXIT_USAGE;
    }
    st.opt = &opt;
    if (opt.verify && pattern_tracker_init(&st.tracker, opt.count) != 0) {
        tool_error(prog, "out of memory for %" PRIu64 " messages", opt.count);
        return EXIT_RUNTIME;
    }

    if (tool_ctx_open(prog, &opt.ctx, 0, &ctx) < 0) {
        status = EXIT_RUNTIME;
        goto out;
    }
    rdps_sub_opts sopts = {.group = opt.ctx.group};
    rc = rdps_sub_create(ctx, opt.topic, on_message, &st, &sopts, &sub);
    if (rc < 0) {
        tool_error(prog, "cannot subscribe to '%s': %s (%s)", opt.topic, rdps_strerror(rc),
                   rdps_last_error_message());
        status = EXIT_RUNTIME;
        goto out;
    }

    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    uint64_t start = tool_now_ns();
    uint64_t deadline = opt.timeout_s ? start + opt.timeout_s * 1000000000ull : UINT64_MAX;
    while (!stop_requested) {
        rc = rdps_ctx_wait(ctx, 100);
        if (rc < 0) {
            tool_error(prog, "polling failed: %s (%s)", rdps_strerror(rc),
                       rdps_last_error_message());
            status = EXIT_RUNTIME;
            break;
        }
        if (opt.count && st.messages >= opt.count)
            break;
        if (opt.verify && opt.count && st.tracker.distinct >= opt.count)
            break;
        if (tool_now_ns() >= deadline) {
            if (opt.count)
                status = EXIT_TIMEOUT;
            break;
        }
    }
    if (status == EXIT_TIMEOUT)
        tool_error(prog, "timed out after %" PRIu64 " s with %" PRIu64 " of %" PRIu64 " messages",
                   opt.timeout_s, st.messages, opt.count);
    if (opt.verify &&
        (st.corrupt > 0 || st.tracker.duplicates > 0 || st.tracker.out_of_range > 0)) {
        tool_error(prog,
                   "verification failed: %" PRIu64 " corrupt, %" PRIu64 " duplicate, %" PRIu64
                   " out-of-range messages",
                   st.corrupt, st.tracker.duplicates, st.tracker.out_of_range);
        status = EXIT_VERIFY_FAILED;
    }
    if (opt.json) {
        rdps_counters counters;
        rdps_sub_counters(sub, &counters);
        print_json(&st, &counters, tool_now_ns() - start);
    }
out:
    rdps_sub_destroy(sub);
    rdps_ctx_destroy(ctx);
    if (opt.verify)
        pattern_tracker_fini(&st.tracker);
    return status;
}
