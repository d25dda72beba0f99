/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_replay.c - rdps-replay: publishes a recording's messages again, to the same topics or
 * renamed ones, at the recorded pace, N times it, or as fast as flow control allows. */
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdps/rdps_archive.h>

#include "ctx_options.h"
#include "rdps_clock.h"
#include "tool_cli.h"
#include "tool_json.h"
#include "tool_time.h"

#define MAX_TOPICS  1024
#define MAX_RENAMES 64

static const char *prog = "rdps-replay";
static volatile sig_atomic_t stop_requested;

struct rename {
    const char *from, *to;
    bool prefix; /* --rename-prefix */
};

struct options {
    const char *dir;
    uint64_t recording;
    const char *topics[MAX_TOPICS];
    size_t ntopics;
    struct rename renames[MAX_RENAMES];
    size_t nrenames;
    struct tool_ctx_options ctx;
    double speed; /* 0: as fast as flow control allows */
    const char *from_time, *to_time, *from_seq;
    uint64_t from_record;
    bool from_record_set, unreliable, json, quiet;
    uint64_t wait_subs, wait_timeout_s, linger_ms, drain_timeout_s;
};

/* A publisher of the replay: the recorded topic id it stands for and the name it publishes. */
struct out_topic {
    uint64_t id;
    char name[RDPS_TOPIC_NAME_MAX + 1];
    rdps_pub_t *pub;
    uint64_t messages;
};

struct replay {
    struct options *opt;
    rdps_ctx_t *ctx;
    struct out_topic topics[MAX_TOPICS];
    size_t ntopics;
    uint64_t messages, bytes, eagain, skipped_topics, losses, gaps, overruns;
    double drain_s; /* after the last message, until every receiver had every message */
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: rdps-replay --dir DIR [--recording ID] [-t TOPIC ...]\n"
            "                   [--rename OLD=NEW ...] [--rename-prefix OLD=NEW ...]\n"
            "                   [--speed N | --fast] [--from-time T | --from-record N |\n"
            "                   --from-seq TOPIC:SESSION:SEQ] [--to-time T] [--unreliable]\n"
            "                   [--wait-subs N] [--wait-timeout SEC] [--linger MS]\n"
            "                   [--drain-timeout SEC] [--json] [-q]\n"
            "Publishes the messages of a recording (rdps-record) again, in recorded order.\n"
            "  --dir DIR              the recording directory\n"
            "  --recording ID         which recording (default: the newest)\n"
            "  -t, --topic TOPIC      replay only these recorded topics (repeat, or commas)\n"
            "  --rename OLD=NEW       publish recorded topic OLD as NEW\n"
            "  --rename-prefix A=B    publish recorded topics A... as B... (e.g. md.=replay.md.)\n"
            "  --speed N              N times the recorded pace (default 1; 0.5 is half)\n"
            "  --fast                 as fast as flow control allows\n"
            "  --from-time T          start at the first record at or after T: UTC\n"
            "                         2026-12-06T10:31:07.25Z, ns since the epoch, or +SECONDS\n"
            "                         after the recording's first record\n"
            "  --from-record N        start at record number N\n"
            "  --from-seq T:S:Q       start at topic T's session S (hex) at datagram sequence Q\n"
            "  --to-time T            stop before the first record after T (same forms)\n"
            "  --unreliable           publish unreliably (default: reliable publishers)\n"
            "  --wait-subs N          before the first message of a topic, wait until N\n"
            "                         subscribers of it were discovered\n"
            "  --wait-timeout SEC     give up waiting for subscribers after SEC s (default 30)\n"
            "  --linger MS            keep running MS ms after the last message (default 500)\n"
            "  --drain-timeout SEC    reliable: after the last message, wait up to SEC s for\n"
            "                         every receiver to have it all (repairs; default 60)\n"
            "  --json                 print a one-line JSON summary at exit\n"
            "  -q, --quiet            print nothing but errors\n");
    tool_ctx_options_usage(out);
    fprintf(out, "Exit: 0 replayed, 1 a send failed, 2 bad usage, 3 no subscribers in time or\n"
                 "      a receiver still behind after --drain-timeout, 4 runtime error (no such\n"
                 "      recording, unreadable chunk, device)\n");
}

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static bool parse_rename(const char *arg, bool prefix, struct options *opt)
{
    const char *eq = strchr(arg, '=');
    if (eq == NULL || eq == arg || eq[1] == '\0' || opt->nrenames == MAX_RENAMES) {
        tool_error(prog, "--rename%s: OLD=NEW, not '%s'", prefix ? "-prefix" : "", arg);
        return false;
    }
    char *from = strndup(arg, (size_t)(eq - arg));
    opt->renames[opt->nrenames++] = (struct rename){from, eq + 1, prefix};
    return true;
}

static bool parse_args(int argc, char **argv, struct options *opt)
{
    enum {
        OPT_DIR = 256,
        OPT_RECORDING,
        OPT_RENAME,
        OPT_RENAME_PREFIX,
        OPT_SPEED,
        OPT_FAST,
        OPT_FROM_TIME,
        OPT_FROM_RECORD,
        OPT_FROM_SEQ,
        OPT_TO_TIME,
        OPT_UNRELIABLE,
        OPT_WAIT_SUBS,
        OPT_WAIT_TIMEOUT,
        OPT_LINGER,
        OPT_DRAIN_TIMEOUT,
        OPT_JSON,
    };
    static const struct option longopts[] = {
        {"dir", required_argument, NULL, OPT_DIR},
        {"recording", required_argument, NULL, OPT_RECORDING},
        {"topic", required_argument, NULL, 't'},
        {"rename", required_argument, NULL, OPT_RENAME},
        {"rename-prefix", required_argument, NULL, OPT_RENAME_PREFIX},
        {"speed", required_argument, NULL, OPT_SPEED},
        {"fast", no_argument, NULL, OPT_FAST},
        {"from-time", required_argument, NULL, OPT_FROM_TIME},
        {"from-record", required_argument, NULL, OPT_FROM_RECORD},
        {"from-seq", required_argument, NULL, OPT_FROM_SEQ},
        {"to-time", required_argument, NULL, OPT_TO_TIME},
        {"unreliable", no_argument, NULL, OPT_UNRELIABLE},
        {"wait-subs", required_argument, NULL, OPT_WAIT_SUBS},
        {"wait-timeout", required_argument, NULL, OPT_WAIT_TIMEOUT},
        {"linger", required_argument, NULL, OPT_LINGER},
        {"drain-timeout", required_argument, NULL, OPT_DRAIN_TIMEOUT},
        {"json", no_argument, NULL, OPT_JSON},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        TOOL_CTX_LONG_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    tool_ctx_options_init(&opt->ctx);
    opt->speed = 1.0;
    opt->wait_timeout_s = 30;
    opt->linger_ms = 500;
    opt->drain_timeout_s = 60;
    int c;
    while ((c = getopt_long(argc, argv, "t:qh" TOOL_CTX_SHORT_OPTIONS, longopts, NULL)) != -1) {
        int shared = tool_ctx_option(prog, c, optarg, &opt->ctx);
        if (shared < 0)
            return false;
        if (shared > 0)
            continue;
        switch (c) {
        case OPT_DIR:
            opt->dir = optarg;
            break;
        case OPT_RECORDING:
            if (!tool_opt_u64(prog, "--recording", optarg, 1, UINT64_MAX, &opt->recording))
                return false;
            break;
        case 't':
            for (char *save = NULL, *t = strtok_r(optarg, ",", &save); t != NULL;
                 t = strtok_r(NULL, ",", &save)) {
                if (rdps_topic_id(t) == 0 || opt->ntopics == MAX_TOPICS) {
                    tool_error(prog, "-t: invalid topic name '%s' (or more than %d)", t,
                               MAX_TOPICS);
                    return false;
                }
                opt->topics[opt->ntopics++] = t;
            }
            break;
        case OPT_RENAME:
        case OPT_RENAME_PREFIX:
            if (!parse_rename(optarg, c == OPT_RENAME_PREFIX, opt))
                return false;
            break;
        case OPT_SPEED: {
            char *end;
            opt->speed = strtod(optarg, &end);
            if (*end != '\0' || !(opt->speed >= 0.001 && opt->speed <= 1e6)) {
                tool_error(prog, "--speed: a factor in [0.001, 1000000], not '%s'", optarg);
                return false;
            }
            break;
        }
        case OPT_FAST:
            opt->speed = 0;
            break;
        case OPT_FROM_TIME:
            opt->from_time = optarg;
            break;
        case OPT_FROM_RECORD:
            if (!tool_opt_u64(prog, "--from-record", optarg, 0, UINT64_MAX, &opt->from_record))
                return false;
            opt->from_record_set = true;
            break;
        case OPT_FROM_SEQ:
            opt->from_seq = optarg;
            break;
        case OPT_TO_TIME:
            opt->to_time = optarg;
            break;
        case OPT_UNRELIABLE:
            opt->unreliable = true;
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
            if (!tool_opt_u64(prog, "--linger", optarg, 0, 600000, &opt->linger_ms))
                return false;
            break;
        case OPT_DRAIN_TIMEOUT:
            if (!tool_opt_u64(prog, "--drain-timeout", optarg, 1, 86400, &opt->drain_timeout_s))
                return false;
            break;
        case OPT_JSON:
            opt->json = true;
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
    if (opt->dir == NULL) {
        tool_error(prog, "a recording directory is required (--dir DIR)");
        return false;
    }
    if ((opt->from_time != NULL) + opt->from_record_set + (opt->from_seq != NULL) > 1) {
        tool_error(prog, "give one of --from-time, --from-record and --from-seq");
        return false;
    }
    return tool_ctx_options_check(prog, &opt->ctx);
}

static bool selected(const struct options *opt, const char *topic)
{
    if (opt->ntopics == 0)
        return true;
    for (size_t i = 0; i < opt->ntopics; i++)
        if (strcmp(opt->topics[i], topic) == 0)
            return true;
    return false;
}

/* The name a recorded topic is published under. */
static bool renamed(const struct options *opt, const char *topic, char *out, size_t cap)
{
    for (size_t i = 0; i < opt->nrenames; i++) {
        const struct rename *r = &opt->renames[i];
        size_t n = strlen(r->from);
        if (r->prefix ? strncmp(topic, r->from, n) == 0 : strcmp(topic, r->from) == 0) {
            int len = snprintf(out, cap, "%s%s", r->to, r->prefix ? topic + n : "");
            return len > 0 && (size_t)len < cap;
        }
    }
    return (size_t)snprintf(out, cap, "%s", topic) < cap;
}

static int wait_subscribers(struct replay *rp, rdps_pub_t *pub)
{
    uint64_t deadline = rdps__clock_monotonic_ns() + rp->opt->wait_timeout_s * 1000000000ull;
    while (!stop_requested && (!rdps_pub_ready(pub) ||
                               (uint64_t)rdps_pub_subscriber_count(pub) < rp->opt->wait_subs)) {
        if (rdps__clock_monotonic_ns() >= deadline)
            return TOOL_EXIT_TIMEOUT;
        rdps_ctx_wait(rp->ctx, 10);
    }
    return 0;
}

/* The publisher for a recorded topic (created on its first message); NULL: not replayed. */
static struct out_topic *out_topic(struct replay *rp, const rdps_archive_record *rec, int *status)
{
    for (size_t i = 0; i < rp->ntopics; i++)
        if (rp->topics[i].id == rec->topic_id)
            return rp->topics[i].pub != NULL ? &rp->topics[i] : NULL;
    if (rp->ntopics == MAX_TOPICS) {
        rp->skipped_topics++;
        return NULL;
    }
    struct out_topic *t = &rp->topics[rp->ntopics++];
    memset(t, 0, sizeof(*t));
    t->id = rec->topic_id;
    if (rec->topic[0] == '\0' || !selected(rp->opt, rec->topic))
        return NULL;
    if (!renamed(rp->opt, rec->topic, t->name, sizeof(t->name)) || rdps_topic_id(t->name) == 0) {
        tool_error(prog, "cannot publish %s as '%s': not a topic name", rec->topic, t->name);
        *status = TOOL_EXIT_USAGE;
        return NULL;
    }
    rdps_pub_opts po = {.reliable = !rp->opt->unreliable};
    int rc = rdps_pub_create(rp->ctx, t->name, &po, &t->pub);
    if (rc != 0) {
        tool_error(prog, "publisher of %s: %s", t->name, rdps_last_error_message());
        *status = TOOL_EXIT_RUNTIME;
        return NULL;
    }
    if (!rp->opt->quiet)
        fprintf(stderr, "%s: replaying %s as %s\n", prog, rec->topic, t->name);
    if ((rc = wait_subscribers(rp, t->pub)) != 0) {
        tool_error(prog, "%s: fewer than %" PRIu64 " subscribers within %" PRIu64 " s", t->name,
                   rp->opt->wait_subs, rp->opt->wait_timeout_s);
        *status = rc;
        return NULL;
    }
    return t;
}

/* Sleeps (polling the ctx) until the monotonic time `at`. */
static void pace_until(struct replay *rp, uint64_t at)
{
    for (;;) {
        uint64_t now = rdps__clock_monotonic_ns();
        if (now >= at || stop_requested)
            return;
        uint64_t left_ms = (at - now) / 1000000u;
        if (left_ms >= 2)
            rdps_ctx_wait(rp->ctx, (int)(left_ms > 100 ? 100 : left_ms - 1));
        else
            rdps_ctx_poll(rp->ctx, 0);
    }
}

static int position(struct replay *rp, rdps_archive_reader_t *r, uint64_t first_ts)
{
    const struct options *opt = rp->opt;
    int rc = 0;
    if (opt->from_time != NULL) {
        uint64_t ts;
        bool rel;
        if (!tool_parse_time(opt->from_time, first_ts, &ts, &rel)) {
            tool_error(prog, "--from-time: not a time: '%s'", opt->from_time);
            return TOOL_EXIT_USAGE;
        }
        rc = rdps_archive_reader_seek_time(r, ts);
    } else if (opt->from_record_set) {
        rc = rdps_archive_reader_seek_record(r, opt->from_record);
    } else if (opt->from_seq != NULL) {
        char topic[RDPS_TOPIC_NAME_MAX + 1];
        unsigned session, seq;
        char tail;
        const char *colon = strrchr(opt->from_seq, ':');
        const char *first = strchr(opt->from_seq, ':');
        if (first == NULL || first == colon || (size_t)(first - opt->from_seq) >= sizeof(topic) ||
            sscanf(first + 1, "%x:%u%c", &session, &seq, &tail) != 2) {
            tool_error(prog, "--from-seq: TOPIC:SESSION:SEQ (session in hex), not '%s'",
                       opt->from_seq);
            return TOOL_EXIT_USAGE;
        }
        memcpy(topic, opt->from_seq, (size_t)(first - opt->from_seq));
        topic[first - opt->from_seq] = '\0';
        rc = rdps_archive_reader_seek_seq(r, rdps_topic_id(topic), session, seq);
    }
    if (rc != 0) {
        tool_error(prog, "%s", rdps_last_error_message());
        return TOOL_EXIT_RUNTIME;
    }
    return 0;
}

static void print_json(const struct replay *rp, double elapsed)
{
    struct tool_json j;
    tool_json_init(&j, stdout);
    tool_json_object_begin(&j, NULL);
    tool_json_str(&j, "tool", prog);
    tool_json_u64(&j, "messages", rp->messages);
    tool_json_u64(&j, "bytes", rp->bytes);
    tool_json_u64(&j, "send_backpressure", rp->eagain);
    tool_json_u64(&j, "loss_markers", rp->losses);
    tool_json_u64(&j, "gap_markers", rp->gaps);
    tool_json_u64(&j, "overrun_markers", rp->overruns);
    tool_json_array_begin(&j, "topics");
    for (size_t i = 0; i < rp->ntopics; i++) {
        if (rp->topics[i].pub == NULL)
            continue;
        tool_json_object_begin(&j, NULL);
        tool_json_str(&j, "topic", rp->topics[i].name);
        tool_json_u64(&j, "messages", rp->topics[i].messages);
        tool_json_object_end(&j);
    }
    tool_json_array_end(&j);
    /* The publishers' side of recovery: the repairs the replay served, and how. */
    rdps_counters c;
    if (rp->ctx != NULL && rdps_ctx_counters(rp->ctx, &c) == 0) {
        tool_json_u64(&j, "naks_received", c.naks_received);
        tool_json_u64(&j, "retransmits", c.retransmits);
        tool_json_u64(&j, "naks_suppressed", c.naks_suppressed);
        tool_json_u64(&j, "naks_limited", c.naks_limited);
        tool_json_u64(&j, "repair_queue_full", c.repair_queue_full);
        tool_json_u64(&j, "heartbeats_sent", c.heartbeats_sent);
        tool_json_u64(&j, "receiver_evictions", c.receiver_evictions);
        tool_json_u64(&j, "receivers_refused", c.receivers_refused);
    }
    tool_json_double(&j, "elapsed_s", elapsed);
    tool_json_double(&j, "drain_s", rp->drain_s);
    tool_json_double(&j, "msgs_per_s", elapsed > 0 ? (double)rp->messages / elapsed : 0.0);
    tool_json_object_end(&j);
    tool_json_finish(&j);
}

int main(int argc, char **argv)
{
    static struct options opt;
    static struct replay rp;
    if (!parse_args(argc, argv, &opt)) {
        tool_usage_hint(prog);
        return TOOL_EXIT_USAGE;
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    rdps_archive_reader_t *r;
    if (rdps_archive_reader_open(opt.dir, opt.recording, &r) != 0) {
        tool_error(prog, "%s", rdps_last_error_message());
        return TOOL_EXIT_RUNTIME;
    }
    rdps_archive_record rec;
    uint64_t first_ts = 0;
    if (rdps_archive_reader_next(r, &rec) == 1)
        first_ts = rec.recorder_ts_ns;
    rdps_archive_reader_seek_record(r, 0);
    rp.opt = &opt;
    int status = position(&rp, r, first_ts);
    uint64_t to_ts = UINT64_MAX;
    bool rel;
    if (status == 0 && opt.to_time != NULL &&
        !tool_parse_time(opt.to_time, first_ts, &to_ts, &rel)) {
        tool_error(prog, "--to-time: not a time: '%s'", opt.to_time);
        status = TOOL_EXIT_USAGE;
    }
    if (status == 0 && tool_ctx_open(prog, &opt.ctx, 16u << 20, &rp.ctx) != 0)
        status = TOOL_EXIT_RUNTIME;
    uint64_t start = rdps__clock_monotonic_ns(), base_ts = 0, base_mono = 0;
    while (status == 0 && !stop_requested) {
        int rc = rdps_archive_reader_next(r, &rec);
        if (rc == 0)
            break;
        if (rc < 0) {
            tool_error(prog, "%s", rdps_last_error_message());
            if (rc != RDPS_EBADFRAME)
                status = TOOL_EXIT_RUNTIME;
            continue;
        }
        if (rec.recorder_ts_ns > to_ts)
            break;
        if (rec.type == RDPS_ARCHIVE_LOSS || rec.type == RDPS_ARCHIVE_GAP ||
            rec.type == RDPS_ARCHIVE_OVERRUN) {
            *(rec.type == RDPS_ARCHIVE_LOSS  ? &rp.losses
              : rec.type == RDPS_ARCHIVE_GAP ? &rp.gaps
                                             : &rp.overruns) += 1;
            if (!opt.quiet)
                fprintf(stderr, "%s: the recording has a %s here (record %" PRIu64 ")\n", prog,
                        rec.type == RDPS_ARCHIVE_LOSS  ? "loss"
                        : rec.type == RDPS_ARCHIVE_GAP ? "gap"
                                                       : "recorder overrun",
                        rec.number);
            continue;
        }
        if (rec.type != RDPS_ARCHIVE_MESSAGE)
            continue;
        struct out_topic *t = out_topic(&rp, &rec, &status);
        if (t == NULL)
            continue;
        if (opt.speed > 0) {
            if (base_mono == 0) {
                base_mono = rdps__clock_monotonic_ns();
                base_ts = rec.recorder_ts_ns;
            }
            pace_until(&rp,
                       base_mono + (uint64_t)((double)(rec.recorder_ts_ns - base_ts) / opt.speed));
        }
        rc = tool_send(rp.ctx, t->pub, rec.data, rec.len, 0, &stop_requested, &rp.eagain);
        if (rc == RDPS_ECANCELED)
            break;
        if (rc != 0) {
            tool_error(prog, "send to %s: %s", t->name,
                       rc == TOOL_SEND_STALLED ? "stalled" : rdps_strerror(rc));
            status = TOOL_EXIT_FAILED;
            break;
        }
        t->messages++;
        rp.messages++;
        rp.bytes += rec.len;
    }
    double elapsed = (double)(rdps__clock_monotonic_ns() - start) / 1e9;
    /* The publishers stay the linger time, and reliable ones until every receiver has caught up
     * (repairs of the tail), up to the drain timeout: leaving earlier loses what a receiver still
     * lacks, which is an error, not a replay. */
    uint64_t now = rdps__clock_monotonic_ns(), drain_start = now;
    uint64_t linger_end = now + opt.linger_ms * 1000000ull;
    uint64_t drain_end = now + opt.drain_timeout_s * 1000000000ull;
    int behind = 0;
    while (rp.ctx != NULL && !stop_requested) {
        behind = 0;
        for (size_t i = 0; i < rp.ntopics; i++)
            if (rp.topics[i].pub != NULL)
                behind += rdps_pub_receivers_behind(rp.topics[i].pub);
        now = rdps__clock_monotonic_ns();
        if ((behind == 0 && now >= linger_end) || (behind > 0 && now >= drain_end))
            break;
        if (rdps_ctx_wait(rp.ctx, 10) < 0)
            break;
    }
    rp.drain_s = (double)(rdps__clock_monotonic_ns() - drain_start) / 1e9;
    if (behind > 0 && status == TOOL_EXIT_OK) {
        tool_error(prog,
                   "%d receiver(s) of the replayed topics still behind after the %" PRIu64
                   " s drain timeout",
                   behind, opt.drain_timeout_s);
        status = TOOL_EXIT_TIMEOUT;
    }
    if (opt.json && status != TOOL_EXIT_USAGE)
        print_json(&rp, elapsed);
    rdps_archive_reader_close(r);
    rdps_ctx_destroy(rp.ctx);
    for (size_t i = 0; i < opt.nrenames; i++)
        free((char *)opt.renames[i].from);
    return status;
}
