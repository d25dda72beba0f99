/* SPDX-License-Identifier: BSD-2-Clause */
/* rdsub.c - subscribe to an rdps topic: print, count or verify the messages that arrive. */
#include <arpa/inet.h>
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
#include "verify.h"

static const char *prog = "rdsub";
static volatile sig_atomic_t stop_requested;

struct options {
    const char *topic;
    struct tool_ctx_options ctx;
    uint64_t count; /* 0: until interrupted or timeout */
    uint64_t timeout_s;
    uint64_t seed;
    uint64_t tag;      /* --tag: group tag for tagged flow control */
    uint64_t linger_s; /* --linger: seconds of receiving after -c N arrived */
    bool verify, json, quiet;
    bool reliable, from_oldest;
    bool count_loss; /* --count-loss: loss allowed, every message accounted for */
    bool history;    /* --history: from a recorder, then live (rdps_history_sub) */
    uint64_t history_timeout_s;
};

/* --history: where the merge stands (rdps_history_sub_poll's answers). */
enum history_state { HISTORY_MERGING, HISTORY_LIVE, HISTORY_TIMED_OUT, HISTORY_REFUSED };
static const char *const history_state_names[] = {"merging", "live", "timed_out", "refused"};

struct state {
    const struct options *opt;
    uint64_t messages, bytes, fragments;
    uint64_t first_ns, last_ns;
    uint64_t loss_events, lost_seqs;    /* --reliable: RDPS_EVENT_LOSS */
    uint64_t gap_events, lost_messages; /* RDPS_EVENT_GAP; messages both kinds reported */
    struct verify verify;               /* --verify: per publisher session (verify.h) */
    enum history_state history;
    uint64_t start_ns, history_live_ns; /* --history: when every session was live (0: not yet) */
    uint64_t history_live_messages;     /* ... and the messages delivered by then */
};

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

static void json_source(struct tool_json *j, const rdps_source *s)
{
    char gid[INET6_ADDRSTRLEN] = "";
    if (s->has_gid)
        inet_ntop(AF_INET6, s->gid, gid, sizeof(gid));
    tool_json_str(j, "gid", gid);
    tool_json_u64(j, "qpn", s->qpn);
    tool_json_u64(j, "lid", s->lid);
}

static void json_session(struct tool_json *j, const char *key, const struct verify *v,
                         const struct verify_session *s)
{
    tool_json_object_begin(j, key);
    tool_json_u64(j, "session", s->session_id);
    json_source(j, &s->source);
    tool_json_u64(j, "messages", s->messages);
    tool_json_u64(j, "verified", s->distinct);
    tool_json_u64(j, "missing", verify_session_missing(v, s));
    tool_json_u64(j, "holes", verify_session_holes(s));
    tool_json_u64(j, "duplicates", s->duplicates);
    tool_json_u64(j, "corrupt", s->corrupt);
    tool_json_u64(j, "out_of_range", s->out_of_range);
    tool_json_u64(j, "first_index", s->first_index);
    tool_json_u64(j, "out_of_order", s->out_of_order);
    tool_json_u64(j, "loss_events", s->loss_events);
    tool_json_u64(j, "gap_events", s->gap_events);
    tool_json_u64(j, "lost_messages", s->lost_messages);
    if (v->count_loss) {
        tool_json_u64(j, "reported_lost", s->reported_lost);
        tool_json_u64(j, "unaccounted", verify_session_unaccounted(v, s));
        tool_json_u64(j, "before_start", verify_session_before_start(v, s));
        tool_json_u64(j, "bad_ordinal", s->bad_ordinal);
        tool_json_u64(j, "lost_delivered", s->lost_delivered);
        tool_json_u64(j, "lost_twice", s->lost_twice);
        tool_json_u64(j, "lost_out_of_range", s->lost_out_of_range);
    }
    tool_json_object_end(j);
}

/* Reliable sessions as the library tracks them (NAKs, repairs, losses, RTT per publisher). */
static void json_reliable_sessions(struct tool_json *j, const rdps_sub_t *sub)
{
    rdps_session_stats ss[16];
    int n = rdps_sub_sessions(sub, ss, 16);
    /* The array holds the newest 16: the total says whether there were more. */
    tool_json_u64(j, "reliable_sessions_total", n > 0 ? (uint64_t)n : 0);
    tool_json_array_begin(j, "reliable_sessions");
    for (int i = 0; i < n && i < 16; i++) {
        tool_json_object_begin(j, NULL);
        tool_json_u64(j, "session", ss[i].session_id);
        json_source(j, &ss[i].source);
        tool_json_u64(j, "delivered", ss[i].delivered);
        tool_json_u64(j, "naks_sent", ss[i].naks_sent);
        tool_json_u64(j, "naks_suppressed", ss[i].naks_suppressed);
        tool_json_u64(j, "recovered", ss[i].recovered);
        tool_json_u64(j, "out_of_order", ss[i].out_of_order);
        tool_json_u64(j, "duplicates", ss[i].duplicates);
        tool_json_u64(j, "lost", ss[i].lost);
        tool_json_u64(j, "loss_events", ss[i].loss_events);
        tool_json_u64(j, "status_sent", ss[i].status_sent);
        tool_json_u64(j, "rtt_us", ss[i].rtt_us);
        tool_json_u64(j, "repair_latency_p50_us", ss[i].repair_latency_p50_us);
        tool_json_u64(j, "repair_latency_p99_us", ss[i].repair_latency_p99_us);
        tool_json_double(j, "repair_latency_p50_rtts", ss[i].repair_rtts_p50_milli / 1000.0);
        tool_json_double(j, "repair_latency_p99_rtts", ss[i].repair_rtts_p99_milli / 1000.0);
        tool_json_object_end(j);
    }
    tool_json_array_end(j);
}

/*
 * Top-level figures keep their meaning for scripts: messages/bytes are
 * everything received; with --verify, verified/missing/holes are the
 * verified session's (verify_reported), corrupt/duplicates/out_of_range are
 * totals over all sessions, and "sessions" lists each one.
 */
static void print_json(const struct state *st, const rdps_sub_t *sub, const rdps_counters *c,
                       uint64_t wall_ns)
{
    struct tool_json j;
    double elapsed = st->messages > 1 ? (double)(st->last_ns - st->first_ns) / 1e9 : 0.0;
    const struct verify *v = &st->verify;
    const struct verify_session *best = st->opt->verify ? verify_reported(v) : NULL;
    struct verify_session sum;
    verify_totals(v, &sum);

    tool_json_init(&j, stdout);
    tool_json_object_begin(&j, NULL);
    tool_json_str(&j, "tool", "rdsub");
    tool_json_str(&j, "topic", st->opt->topic);
    tool_json_u64(&j, "topic_id", rdps_topic_id(st->opt->topic));
    tool_json_u64(&j, "messages", st->messages);
    /* --linger: messages beyond -c N (the run's end came after them) */
    tool_json_u64(
        &j, "extra",
        st->opt->count != 0 && st->messages > st->opt->count ? st->messages - st->opt->count : 0);
    tool_json_u64(&j, "bytes", st->bytes);
    tool_json_u64(&j, "fragments", st->fragments);
    tool_json_u64(&j, "corrupt", sum.corrupt);
    tool_json_u64(&j, "duplicates", sum.duplicates);
    tool_json_u64(&j, "out_of_range", sum.out_of_range);
    tool_json_u64(&j, "out_of_order", sum.out_of_order);
    tool_json_bool(&j, "reliable", st->opt->reliable);
    tool_json_u64(&j, "missing", st->opt->verify ? verify_session_missing(v, best) : 0);
    tool_json_u64(&j, "holes", verify_session_holes(best));
    tool_json_u64(&j, "verified", best != NULL ? best->distinct : 0);
    tool_json_u64(&j, "first_index", best != NULL ? best->first_index : 0);
    if (st->opt->verify) {
        tool_json_str(&j, "verdict", verify_verdict_name(verify_verdict(v)));
        tool_json_u64(&j, "expected", st->opt->count);
        tool_json_u64(&j, "untracked", v->untracked);
        if (best != NULL)
            json_session(&j, "verified_session", v, best);
        tool_json_array_begin(&j, "sessions");
        for (unsigned i = 0; i < v->nsessions; i++)
            json_session(&j, NULL, v, &v->sessions[i]);
        tool_json_array_end(&j);
    }
    tool_json_u64(&j, "gaps", c->gaps);
    tool_json_u64(&j, "gap_messages", c->gap_messages);
    tool_json_u64(&j, "lost", c->lost);
    tool_json_u64(&j, "lost_messages", c->lost_messages);
    if (st->opt->count_loss) {
        tool_json_u64(&j, "unaccounted", verify_session_unaccounted(v, best));
        tool_json_u64(&j, "before_start", verify_session_before_start(v, best));
    }
    tool_json_u64(&j, "evicted", c->reasm_evictions);
    tool_json_u64(&j, "timeouts", c->reasm_timeouts);
    tool_json_u64(&j, "bad_frames", c->bad_frames);
    /* Keyed: frames the authenticating layer dropped (forged, keyless, stale key, short, sealed
     * too far from our clock), and replays (also from another address) on their own. */
    tool_json_u64(&j, "auth_dropped",
                  c->auth_unsigned + c->auth_short + c->auth_unknown_key + c->auth_bad_tag +
                      c->auth_stale);
    tool_json_u64(&j, "auth_replayed", c->auth_replayed);
    tool_json_u64(&j, "auth_stale", c->auth_stale);
    tool_json_u64(&j, "dup_frames", c->duplicates);
    tool_json_u64(&j, "loss_dropped_rx", c->loss_dropped_rx);
    tool_json_u64(&j, "frames_received", c->frames_received);
    tool_json_u64(&j, "rq_empty", c->rq_empty);
    tool_json_u64(&j, "qp_recoveries", c->qp_recoveries);
    tool_json_u64(&j, "sends_lost", c->sends_lost);
    tool_json_u64(&j, "send_stalls", c->send_stalls);
    tool_json_u64(&j, "control_send_failures", c->control_send_failures);
    tool_json_u64(&j, "unknown_topic", c->unknown_topic);
    tool_json_u64(&j, "topic_collisions", c->topic_collisions);
    static const char *const modes[] = {"multicast", "unicast", "auto"};
    tool_json_str(&j, "transport", modes[st->opt->ctx.transport]);
    tool_json_u64(&j, "unicast_fallbacks", c->unicast_fallbacks);
    /* Reliable delivery (zero otherwise): lost above counts sequences given up. */
    tool_json_u64(&j, "loss_events", st->loss_events);
    tool_json_u64(&j, "naks_sent", c->naks_sent);
    tool_json_u64(&j, "status_sent", c->status_sent);
    tool_json_u64(&j, "recovered", c->recovered);
    tool_json_u64(&j, "parity_rebuilt", c->parity_rebuilt);
    tool_json_u64(&j, "repairs", c->recovered);
    tool_json_u64(&j, "frames_out_of_order", c->out_of_order);
    tool_json_u64(&j, "evictions", c->receiver_evictions);
    tool_json_u64(&j, "repair_latency_p50_us", c->repair_latency_p50_us);
    tool_json_u64(&j, "repair_latency_p99_us", c->repair_latency_p99_us);
    tool_json_double(&j, "repair_latency_p50_rtts", c->repair_rtts_p50_milli / 1000.0);
    tool_json_double(&j, "repair_latency_p99_rtts", c->repair_rtts_p99_milli / 1000.0);
    if (st->opt->reliable && sub != NULL)
        json_reliable_sessions(&j, sub);
    if (st->opt->history) {
        tool_json_str(&j, "history", history_state_names[st->history]);
        tool_json_double(
            &j, "history_live_s",
            st->history_live_ns != 0 ? (double)(st->history_live_ns - st->start_ns) / 1e9 : 0.0);
        tool_json_u64(&j, "history_live_messages", st->history_live_messages);
    }
    tool_json_double(&j, "elapsed_s", elapsed);
    tool_json_double(&j, "msgs_per_s", elapsed > 0 ? (double)(st->messages - 1) / elapsed : 0.0);
    tool_json_double(&j, "wall_s", (double)wall_ns / 1e9);
    tool_json_object_end(&j);
    tool_json_finish(&j);
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
        tool_error(prog, "no recorder served %s's history within %" PRIu64 " s: live from now",
                   st->opt->topic, st->opt->history_timeout_s);
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
        print_json(&st, sub, &counters, rdps__clock_monotonic_ns() - start);
    }
out:
    rdps_history_sub_destroy(hs);
    rdps_sub_destroy(sub);
    rdps_ctx_destroy(ctx);
    if (opt.verify)
        verify_fini(&st.verify);
    return status;
}
