/* SPDX-License-Identifier: BSD-2-Clause */
/* rdsub.c - subscribe to an rdps topic: print, count or verify the messages that arrive. */
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdps/rdps.h>
#include <rdps/rdps_archive.h>

#include "ctx_options.h"
#include "rdps_clock.h"
#include "tool_cli.h"
#include "tool_event.h"
#include "tool_json.h"
#include "rdsub.h"
#include "verify.h"

static const char *prog = "rdsub";
static volatile sig_atomic_t stop_requested;

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: rdsub -t TOPIC [-b BIND_IP | -d DEV] [-c COUNT] [--timeout SEC] [--verify]\n"
            "             [--count-loss] [--linger SEC] [--reliable [--tag TAG] [--from-oldest]]\n"
            "             [--history [--history-timeout SEC]]\n"
            "             [--seed N] [--json] [-q]\n"
            "             [--group ADDR] [--cm-port P]\n"
            "             [--loss-rx RATE] [--loss-tx RATE] [--loss-seed N]\n"
            "Receives messages of TOPIC and prints them (text, or a hex summary for binary).\n"
            "  -t, --topic TOPIC   topic name (required)\n"
            "  -c, --count N       exit 0 once N messages arrived (default: run until SIGINT)\n"
            "      --timeout SEC   give up after SEC seconds\n"
            "      --linger SEC    with -c N: once N arrived, go on receiving SEC seconds; a\n"
            "                      message then (more than N in all: a duplicate, a replay)\n"
            "                      fails the run (exit 1)\n"
            "      --verify        check rdpub --pattern -c N messages: exit 0 only when one\n"
            "                      publisher session delivered all N (indices 0..N-1) intact;\n"
            "                      every session is counted on its own, corrupt, duplicate and\n"
            "                      missing messages are reported (needs -c N); with\n"
            "                      --reliable also messages out of order and loss events\n"
            "      --count-loss    with --verify: loss is allowed, but every message must be\n"
            "                      accounted for: exit 0 when each of the N arrived intact or\n"
            "                      was reported lost by a GAP or LOSS event (its exact\n"
            "                      message count), none reported twice or both; a message\n"
            "                      neither arrived nor reported is missing (exit 5); those\n"
            "                      before the first one the subscriber heard of are not\n"
            "                      (before_start: nothing can report them)\n"
            "      --reliable      ask reliable publishers for every message, in order,\n"
            "                      exactly once (NAK + repair); unrecoverable loss is\n"
            "                      reported on stderr and counted\n"
            "      --tag TAG       --reliable: group tag for publishers using --flow tagged\n"
            "      --from-oldest   --reliable: start a session at the oldest message the\n"
            "                      publisher still holds, not at the live position\n"
            "      --history       late join from history: a recorder serving TOPIC (rdps-record)\n"
            "                      replays each publisher session from its start, then the\n"
            "                      live stream follows with no gap and no duplicate at the\n"
            "                      seam (reliable; with --verify, sessions are told apart by\n"
            "                      session id: history does not carry the source)\n"
            "      --history-timeout SEC  no recorder answers or its replay stalls this long: go\n"
            "                      live without the history (default 10)\n"
            "      --seed N        pattern seed used by the publisher (default 1)\n"
            "      --json          print a one-line JSON summary at exit (with --verify: the\n"
            "                      verified session's figures, totals and every session's)\n"
            "  -q, --quiet         do not print messages\n");
    tool_ctx_options_usage(out);
    fprintf(out,
            "Exit: 0 done (-c N arrived; --verify: N of one session, all intact)\n"
            "      1 verification failed: corrupt, duplicate or out-of-range messages\n"
            "        (--reliable: also out of order, or a loss event; --linger: more than N)\n"
            "      2 bad usage\n"
            "      3 timeout: fewer than N arrived (--verify: no message at all)\n"
            "      4 runtime error\n"
            "      5 --verify: messages missing (no session delivered all N by the timeout or\n"
            "        an interrupt)\n");
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
    printf("[%zu bytes, session %08" PRIx32 " qpn 0x%" PRIx32 " seq %" PRIu32 "]", len,
           info->session_id, info->source.qpn, info->seq);
    for (size_t i = 0; i < len && i < 16; i++)
        printf(" %02x", p[i]);
    printf("%s\n", len > 16 ? " ..." : "");
}

/* The source a session is verified under: with --history none, as history messages carry the
 * source only once the live stream has shown it (one session must not count as two). */
static const rdps_source *verify_source(const struct state *st, const rdps_source *source)
{
    static const rdps_source none;
    return st->opt->history ? &none : source;
}

static void on_message(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct state *st = user;
    uint64_t now = rdps__clock_monotonic_ns();

    if (st->messages == 0)
        st->first_ns = now;
    st->last_ns = now;
    st->messages++;
    st->bytes += len;
    st->fragments += info->fragments;
    if (st->opt->verify)
        (void)verify_message(&st->verify, verify_source(st, &info->source), info->session_id,
                             info->ordinal, data, len);
    if (!st->opt->quiet)
        print_message(data, len, info);
}

static void on_event(void *user, const rdps_event *ev)
{
    struct state *st = user;
    bool loss = ev->type == RDPS_EVENT_LOSS;
    if (!loss && ev->type != RDPS_EVENT_GAP)
        return;
    if (loss) {
        st->loss_events++;
        st->lost_seqs += ev->count;
    } else {
        st->gap_events++;
    }
    st->lost_messages += ev->msg_count;
    if (st->opt->verify)
        verify_loss(&st->verify, verify_source(st, &ev->source), ev->session_id, loss, ev->count,
                    ev->first_ordinal, ev->msg_count);
    /* Loss of a reliable stream is news; an unreliable stream's gaps are its nature (counted). */
    if (loss || st->opt->count_loss) {
        char line[160];
        fprintf(stderr, "%s: %s\n", prog, tool_event_text(ev, line, sizeof(line)));
    }
}

static bool parse_args(int argc, char **argv, struct options *opt)
{
    enum {
        OPT_TIMEOUT = 256,
        OPT_VERIFY,
        OPT_SEED,
        OPT_JSON,
        OPT_RELIABLE,
        OPT_TAG,
        OPT_FROM_OLDEST,
        OPT_COUNT_LOSS,
        OPT_LINGER,
        OPT_HISTORY,
        OPT_HISTORY_TIMEOUT,
    };
    static const struct option longopts[] = {
        {"topic", required_argument, NULL, 't'},
        {"count", required_argument, NULL, 'c'},
        {"timeout", required_argument, NULL, OPT_TIMEOUT},
        {"verify", no_argument, NULL, OPT_VERIFY},
        {"seed", required_argument, NULL, OPT_SEED},
        {"json", no_argument, NULL, OPT_JSON},
        {"reliable", no_argument, NULL, OPT_RELIABLE},
        {"tag", required_argument, NULL, OPT_TAG},
        {"from-oldest", no_argument, NULL, OPT_FROM_OLDEST},
        {"count-loss", no_argument, NULL, OPT_COUNT_LOSS},
        {"linger", required_argument, NULL, OPT_LINGER},
        {"history", no_argument, NULL, OPT_HISTORY},
        {"history-timeout", required_argument, NULL, OPT_HISTORY_TIMEOUT},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        TOOL_CTX_LONG_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    int c;
    opt->seed = 1;
    opt->history_timeout_s = 10;
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
            if (!tool_opt_u64(prog, "-c", optarg, 1, UINT64_MAX, &opt->count))
                return false;
            break;
        case OPT_TIMEOUT:
            if (!tool_opt_u64(prog, "--timeout", optarg, 1, 86400 * 365, &opt->timeout_s))
                return false;
            break;
        case OPT_VERIFY:
            opt->verify = true;
            break;
        case OPT_SEED:
            if (!tool_opt_u64(prog, "--seed", optarg, 0, UINT64_MAX, &opt->seed))
                return false;
            break;
        case OPT_JSON:
            opt->json = true;
            break;
        case OPT_RELIABLE:
            opt->reliable = true;
            break;
        case OPT_TAG:
            if (!tool_opt_u64(prog, "--tag", optarg, 1, UINT32_MAX, &opt->tag))
                return false;
            break;
        case OPT_FROM_OLDEST:
            opt->from_oldest = true;
            break;
        case OPT_COUNT_LOSS:
            opt->count_loss = true;
            break;
        case OPT_LINGER:
            if (!tool_opt_u64(prog, "--linger", optarg, 1, 3600, &opt->linger_s))
                return false;
            break;
        case OPT_HISTORY:
            opt->history = true;
            break;
        case OPT_HISTORY_TIMEOUT:
            if (!tool_opt_u64(prog, "--history-timeout", optarg, 1, 3600, &opt->history_timeout_s))
                return false;
            break;
        case 'q':
            opt->quiet = true;
            break;
        case 'h':
            usage(stdout);
            exit(TOOL_EXIT_OK);
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
    if (opt->history && (opt->tag != 0 || opt->from_oldest)) {
        tool_error(prog, "--history starts from a recording: not with --tag or --from-oldest");
        return false;
    }
    if (opt->history)
        opt->reliable = true; /* the merge is of a reliable stream */
    if ((opt->tag != 0 || opt->from_oldest) && !opt->reliable) {
        tool_error(prog, "--tag and --from-oldest need --reliable");
        return false;
    }
    if (opt->count_loss && !opt->verify) {
        tool_error(prog, "--count-loss needs --verify (it accounts for each pattern message)");
        return false;
    }
    if (opt->verify && opt->count == 0) {
        tool_error(prog, "--verify needs -c COUNT (the number of pattern messages published)");
        return false;
    }
    if (opt->linger_s != 0 && opt->count == 0) {
        tool_error(prog, "--linger needs -c COUNT (it receives on after COUNT arrived)");
        return false;
    }
    if (opt->verify && opt->count > VERIFY_MAX_EXPECT) {
        tool_error(prog, "--verify checks at most %llu messages (a 32-bit index), got -c %" PRIu64,
                   VERIFY_MAX_EXPECT, opt->count);
        return false;
    }
    return true;
}

/* --history: notes when every session went live, or why the history did not come. */
static void poll_history(struct state *st, rdps_history_sub_t *hs)
{
    int rc = rdps_history_sub_poll(hs);
    if (rc == 1) {
        st->history = HISTORY_LIVE;
        st->history_live_ns = rdps__clock_monotonic_ns();
        st->history_live_messages = st->messages;
    } else if (rc == RDPS_ETIMEDOUT) {
        st->history = HISTORY_TIMED_OUT;
        tool_error(prog, "%s", rdps_last_error_message()); /* found or not, answered or not */
    } else if (rc < 0) {
        st->history = HISTORY_REFUSED;
        tool_error(prog, "the recorder refused %s's history (%s): live from now", st->opt->topic,
                   rdps_strerror(rc));
    }
}

/* The exit status and its one-line explanation on stderr. */
static int verdict_status(const struct state *st, bool timed_out)
{
    const struct options *opt = st->opt;
    if (!opt->verify) {
        if (timed_out && opt->count > 0) {
            tool_error(prog,
                       "timed out after %" PRIu64 " s with %" PRIu64 " of %" PRIu64 " messages",
                       opt->timeout_s, st->messages, opt->count);
            return TOOL_EXIT_TIMEOUT;
        }
        return TOOL_EXIT_OK;
    }
    const struct verify *v = &st->verify;
    const struct verify_session *best = verify_reported(v);
    struct verify_session sum;
    verify_totals(v, &sum);
    switch (verify_verdict(v)) {
    case VERIFY_PASSED:
        return TOOL_EXIT_OK;
    case VERIFY_FAILED:
        tool_error(prog,
                   "verification failed: %" PRIu64 " corrupt, %" PRIu64 " duplicate, %" PRIu64
                   " out-of-range, %" PRIu64 " out-of-order messages, %" PRIu64
                   " loss events (of %" PRIu64 " messages in %u sessions)",
                   sum.corrupt, sum.duplicates, sum.out_of_range, sum.out_of_order, sum.loss_events,
                   v->messages, v->nsessions);
        if (opt->count_loss)
            tool_error(prog,
                       "loss accounting: %" PRIu64 " messages with a wrong ordinal, %" PRIu64
                       " reported lost but delivered, %" PRIu64 " reported lost twice, %" PRIu64
                       " reported lost that were never published",
                       sum.bad_ordinal, sum.lost_delivered, sum.lost_twice, sum.lost_out_of_range);
        return TOOL_EXIT_FAILED;
    case VERIFY_MISSING:
        if (opt->count_loss) {
            tool_error(prog,
                       "messages unaccounted for: session %08" PRIx32 " delivered %" PRIu64
                       " and reported %" PRIu64 " lost of %" PRIu64 ": %" PRIu64
                       " neither arrived nor were reported lost%s",
                       best != NULL ? best->session_id : 0, best != NULL ? best->distinct : 0,
                       best != NULL ? best->reported_lost : 0, opt->count,
                       verify_session_unaccounted(v, best), timed_out ? "" : " (interrupted)");
            return TOOL_EXIT_MISSING;
        }
        tool_error(prog,
                   "messages missing: session %08" PRIx32 " (the best of %u) delivered %" PRIu64
                   " of %" PRIu64 ", %" PRIu64 " of them lost below index %" PRIu64 "%s",
                   best != NULL ? best->session_id : 0, v->nsessions,
                   best != NULL ? best->distinct : 0, opt->count, verify_session_holes(best),
                   best != NULL ? best->next_index : 0, timed_out ? "" : " (interrupted)");
        return TOOL_EXIT_MISSING;
    case VERIFY_NOTHING:
        break;
    }
    tool_error(prog, "no message arrived%s", timed_out ? " before the timeout" : "");
    return TOOL_EXIT_TIMEOUT;
}

int main(int argc, char **argv)
{
    tool_cli_init(argv);
    struct options opt = {0};
    struct state st = {0};
    rdps_ctx_t *ctx = NULL;
    rdps_sub_t *sub = NULL;
    rdps_history_sub_t *hs = NULL;
    int rc, status = TOOL_EXIT_OK;

    if (!parse_args(argc, argv, &opt)) {
        tool_usage_hint(prog);
        return TOOL_EXIT_USAGE;
    }
    st.opt = &opt;
    if (opt.verify) {
        (void)verify_init(&st.verify, opt.count, opt.seed); /* -c was checked */
        verify_set_ordered(&st.verify, opt.reliable);
        verify_set_count_loss(&st.verify, opt.count_loss);
    }

    if (tool_ctx_open(prog, &opt.ctx, 0, &ctx) < 0) {
        status = TOOL_EXIT_RUNTIME;
        goto out;
    }
    rdps_sub_opts sopts = {
        .group = opt.ctx.group,
        .transport = opt.ctx.transport,
        .on_event = on_event,
        .reliable = opt.reliable,
        .from_oldest = opt.from_oldest,
        .flow_tag = (uint32_t)opt.tag,
    };
    if (opt.history) {
        rdps_history_opts ho = {.from_session_start = 1,
                                .timeout_ms = (uint32_t)(opt.history_timeout_s * 1000),
                                .on_event = on_event};
        rc = rdps_history_sub_create(ctx, opt.topic, on_message, &st, &ho, &hs);
    } else {
        rc = rdps_sub_create(ctx, opt.topic, on_message, &st, &sopts, &sub);
    }
    if (rc < 0) {
        tool_error(prog, "cannot subscribe to '%s': %s (%s)", opt.topic, rdps_strerror(rc),
                   rdps_last_error_message());
        status = TOOL_EXIT_RUNTIME;
        goto out;
    }

    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    uint64_t start = rdps__clock_monotonic_ns();
    st.start_ns = start;
    uint64_t deadline = opt.timeout_s ? start + opt.timeout_s * 1000000000ull : UINT64_MAX;
    bool timed_out = false;
    uint64_t linger_until = 0; /* --linger: receiving on until then (0: not yet lingering) */
    while (!stop_requested) {
        rc = rdps_ctx_wait(ctx, 100);
        if (rc < 0) {
            tool_error(prog, "polling failed: %s (%s)", rdps_strerror(rc),
                       rdps_last_error_message());
            status = TOOL_EXIT_RUNTIME;
            break;
        }
        if (hs != NULL && st.history == HISTORY_MERGING)
            poll_history(&st, hs);
        /* With --verify only a complete session ends the run: other sessions never count. */
        bool done =
            opt.verify ? verify_complete(&st.verify) : (opt.count && st.messages >= opt.count);
        if (done && opt.linger_s != 0 && linger_until == 0)
            linger_until = rdps__clock_monotonic_ns() + opt.linger_s * 1000000000ull;
        if (done && (linger_until == 0 || rdps__clock_monotonic_ns() >= linger_until))
            break;
        if (linger_until == 0 && rdps__clock_monotonic_ns() >= deadline) {
            timed_out = true;
            break;
        }
    }
    if (status == TOOL_EXIT_OK)
        status = verdict_status(&st, timed_out);
    if (status == TOOL_EXIT_OK && linger_until != 0 && st.messages > opt.count) {
        tool_error(prog,
                   "%" PRIu64 " messages arrived, %" PRIu64 " more than -c %" PRIu64
                   " (duplicates or replays, while lingering or before)",
                   st.messages, st.messages - opt.count, opt.count);
        status = TOOL_EXIT_FAILED;
    }
    if (opt.json) {
        rdps_counters counters;
        if (sub != NULL)
            rdps_sub_counters(sub, &counters);
        else
            rdps_ctx_counters(ctx, &counters); /* the history subscriber's subscribers */
        rdsub_print_json(&st, sub, &counters, rdps__clock_monotonic_ns() - start);
    }
out:
    rdps_history_sub_destroy(hs);
    rdps_sub_destroy(sub);
    rdps_ctx_destroy(ctx);
    if (opt.verify)
        verify_fini(&st.verify);
    return status;
}
