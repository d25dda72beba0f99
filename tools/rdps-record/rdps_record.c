/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_record.c - rdps-record: records topics (names, or a prefix found through discovery) into a
 * recording directory until interrupted (rdps_archive.h's recorder). */
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
#include "tool_event.h"
#include "tool_json.h"

#define MAX_TOPICS 1024

static const char *prog = "rdps-record";
static volatile sig_atomic_t stop_requested;

struct options {
    const char *topics[MAX_TOPICS];
    size_t ntopics;
    const char *prefix, *dir;
    struct tool_ctx_options ctx;
    rdps_recorder_opts rec;
    uint64_t count, timeout_s;
    bool json, quiet;
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: rdps-record --dir DIR (-t TOPIC ... | --prefix PREFIX) [-c COUNT]\n"
            "                   [--timeout SEC] [--unreliable] [--from-oldest]\n"
            "                   [--compression zstd|none] [--level N] [--chunk-bytes SIZE]\n"
            "                   [--flush-ms MS] [--fsync-ms MS|never] [--segment-bytes SIZE]\n"
            "                   [--segment-s SEC] [--retain-bytes SIZE] [--retain-s SEC]\n"
            "                   [--queue-bytes SIZE] [--max-topics N] [--json] [-q]\n"
            "Records every message of the topics, with loss markers and session starts and\n"
            "ends, into a new recording of DIR (rdps-archive lists it, rdps-replay plays it).\n"
            "  -t, --topic TOPIC     a topic to record (repeat, or separate with commas)\n"
            "      --prefix PREFIX   also every topic whose publishers discovery announces\n"
            "                        with a name starting with PREFIX (\"\": every topic)\n"
            "      --dir DIR         the recording directory (created; one recorder at a time)\n"
            "  -c, --count N         stop once N messages were recorded\n"
            "      --timeout SEC     stop after SEC seconds\n"
            "      --unreliable      subscribe unreliably (default: reliably, with NAKs)\n"
            "      --from-oldest     reliable sessions start at the publisher's oldest message\n"
            "      --compression C   zstd (default) or none\n"
            "      --level N         zstd level, -7..19 (default 1, the fastest)\n"
            "      --chunk-bytes S   raw bytes that close a chunk (default 64k, 4k..16m)\n"
            "      --flush-ms MS     a message is written at most MS ms after it arrived\n"
            "                        (default 100): what a kill -9 can lose\n"
            "      --fsync-ms MS     fdatasync at most MS ms after a write (default 1000);\n"
            "                        never: only when a segment closes (power loss)\n"
            "      --segment-bytes S start a new segment at this size (default 256m, >= 1m)\n"
            "      --segment-s SEC   and after SEC seconds (default: no limit)\n"
            "      --retain-bytes S  delete the oldest closed segments of DIR beyond S bytes\n"
            "      --retain-s SEC    and those last written more than SEC seconds ago\n"
            "      --queue-bytes S   memory between the network and the disk (default 64m):\n"
            "                        when the disk falls this far behind, messages are\n"
            "                        dropped, counted and marked (an OVERRUN record)\n"
            "      --max-topics N    topics recorded at most (default 4096)\n"
            "      --json            print a one-line JSON summary at exit\n"
            "  -q, --quiet           print nothing but errors\n");
    tool_ctx_options_usage(out);
    fprintf(out, "Exit: 0 stopped (SIGINT/SIGTERM, -c reached, --timeout without -c)\n"
                 "      2 bad usage\n"
                 "      3 --timeout before -c messages\n"
                 "      4 runtime error (device, directory held by another recorder, ...)\n"
                 "      6 the disk filled or a write failed: recording stopped, every record\n"
                 "        before it intact\n");
}

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static bool add_topics(struct options *opt, char *list)
{
    for (char *save = NULL, *t = strtok_r(list, ",", &save); t != NULL;
         t = strtok_r(NULL, ",", &save)) {
        if (rdps_topic_id(t) == 0) {
            tool_error(prog, "invalid topic name '%s': 1..255 printable characters, no spaces", t);
            return false;
        }
        if (opt->ntopics == MAX_TOPICS) {
            tool_error(prog, "at most %d topics with -t (use --prefix)", MAX_TOPICS);
            return false;
        }
        opt->topics[opt->ntopics++] = t;
    }
    return true;
}

static bool parse_args(int argc, char **argv, struct options *opt)
{
    enum {
        OPT_PREFIX = 256,
        OPT_DIR,
        OPT_TIMEOUT,
        OPT_UNRELIABLE,
        OPT_FROM_OLDEST,
        OPT_COMPRESSION,
        OPT_LEVEL,
        OPT_CHUNK,
        OPT_FLUSH,
        OPT_FSYNC,
        OPT_SEG_BYTES,
        OPT_SEG_S,
        OPT_RET_BYTES,
        OPT_RET_S,
        OPT_QUEUE,
        OPT_MAX_TOPICS,
        OPT_JSON,
    };
    static const struct option longopts[] = {
        {"topic", required_argument, NULL, 't'},
        {"prefix", required_argument, NULL, OPT_PREFIX},
        {"dir", required_argument, NULL, OPT_DIR},
        {"count", required_argument, NULL, 'c'},
        {"timeout", required_argument, NULL, OPT_TIMEOUT},
        {"unreliable", no_argument, NULL, OPT_UNRELIABLE},
        {"from-oldest", no_argument, NULL, OPT_FROM_OLDEST},
        {"compression", required_argument, NULL, OPT_COMPRESSION},
        {"level", required_argument, NULL, OPT_LEVEL},
        {"chunk-bytes", required_argument, NULL, OPT_CHUNK},
        {"flush-ms", required_argument, NULL, OPT_FLUSH},
        {"fsync-ms", required_argument, NULL, OPT_FSYNC},
        {"segment-bytes", required_argument, NULL, OPT_SEG_BYTES},
        {"segment-s", required_argument, NULL, OPT_SEG_S},
        {"retain-bytes", required_argument, NULL, OPT_RET_BYTES},
        {"retain-s", required_argument, NULL, OPT_RET_S},
        {"queue-bytes", required_argument, NULL, OPT_QUEUE},
        {"max-topics", required_argument, NULL, OPT_MAX_TOPICS},
        {"json", no_argument, NULL, OPT_JSON},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        TOOL_CTX_LONG_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    tool_ctx_options_init(&opt->ctx);
    int c;
    uint64_t v;
    while ((c = getopt_long(argc, argv, "t:c:qh" TOOL_CTX_SHORT_OPTIONS, longopts, NULL)) != -1) {
        int shared = tool_ctx_option(prog, c, optarg, &opt->ctx);
        if (shared < 0)
            return false;
        if (shared > 0)
            continue;
        rdps_recorder_opts *r = &opt->rec;
        switch (c) {
        case 't':
            if (!add_topics(opt, optarg))
                return false;
            break;
        case OPT_PREFIX:
            opt->prefix = optarg;
            break;
        case OPT_DIR:
            opt->dir = optarg;
            break;
        case 'c':
            if (!tool_opt_u64(prog, "-c", optarg, 1, UINT64_MAX, &opt->count))
                return false;
            break;
        case OPT_TIMEOUT:
            if (!tool_opt_u64(prog, "--timeout", optarg, 1, 86400ull * 365, &opt->timeout_s))
                return false;
            break;
        case OPT_UNRELIABLE:
            r->reliable_off = 1;
            break;
        case OPT_FROM_OLDEST:
            r->from_oldest = 1;
            break;
        case OPT_COMPRESSION:
            if (strcmp(optarg, "zstd") == 0) {
                r->compression = RDPS_ARCHIVE_ZSTD;
            } else if (strcmp(optarg, "none") == 0) {
                r->compression = RDPS_ARCHIVE_NONE;
            } else {
                tool_error(prog, "--compression: 'zstd' or 'none', not '%s'", optarg);
                return false;
            }
            break;
        case OPT_LEVEL: {
            /* zstd's fast levels are negative: -7..-1, then 1..19. */
            bool neg = optarg[0] == '-';
            if (!tool_opt_u64(prog, "--level", optarg + neg, 1, neg ? 7 : 19, &v))
                return false;
            r->zstd_level = neg ? -(int)v : (int)v;
            break;
        }
        case OPT_CHUNK:
            if (!tool_opt_size(prog, "--chunk-bytes", optarg, 4096, 16u << 20, &v))
                return false;
            r->chunk_bytes = (uint32_t)v;
            break;
        case OPT_FLUSH:
            if (!tool_opt_u64(prog, "--flush-ms", optarg, 1, 60000, &v))
                return false;
            r->flush_ms = (uint32_t)v;
            break;
        case OPT_FSYNC:
            if (strcmp(optarg, "never") == 0) {
                r->fsync_ms = UINT32_MAX;
            } else {
                if (!tool_opt_u64(prog, "--fsync-ms", optarg, 1, 3600000, &v))
                    return false;
                r->fsync_ms = (uint32_t)v;
            }
            break;
        case OPT_SEG_BYTES:
            if (!tool_opt_size(prog, "--segment-bytes", optarg, 1u << 20, 1ull << 40, &v))
                return false;
            r->segment_bytes = v;
            break;
        case OPT_SEG_S:
            if (!tool_opt_u64(prog, "--segment-s", optarg, 1, 86400ull * 365, &v))
                return false;
            r->segment_s = (uint32_t)v;
            break;
        case OPT_RET_BYTES:
            if (!tool_opt_size(prog, "--retain-bytes", optarg, 1u << 20, UINT64_MAX, &v))
                return false;
            r->retain_bytes = v;
            break;
        case OPT_RET_S:
            if (!tool_opt_u64(prog, "--retain-s", optarg, 1, 86400ull * 3650, &v))
                return false;
            r->retain_s = (uint32_t)v;
            break;
        case OPT_QUEUE:
            if (!tool_opt_size(prog, "--queue-bytes", optarg, 1u << 20, 1ull << 36, &v))
                return false;
            r->queue_bytes = (size_t)v;
            break;
        case OPT_MAX_TOPICS:
            if (!tool_opt_u64(prog, "--max-topics", optarg, 1, 1u << 20, &v))
                return false;
            r->max_topics = (uint32_t)v;
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
    if (opt->ntopics == 0 && opt->prefix == NULL) {
        tool_error(prog, "nothing to record: give -t TOPIC or --prefix PREFIX");
        return false;
    }
    if (opt->rec.from_oldest && opt->rec.reliable_off) {
        tool_error(prog, "--from-oldest needs reliable subscriptions (drop --unreliable)");
        return false;
    }
    return tool_ctx_options_check(prog, &opt->ctx);
}

static void on_recorder_event(void *user, const rdps_recorder_event *ev)
{
    const struct options *opt = user;
    switch (ev->type) {
    case RDPS_RECORDER_RECOVERED:
        fprintf(stderr, "%s: recovered the directory:\n%s", prog, ev->detail);
        break;
    case RDPS_RECORDER_TOPIC_ADDED:
        if (!opt->quiet)
            fprintf(stderr, "%s: recording %s\n", prog, ev->topic);
        break;
    case RDPS_RECORDER_TOPIC_REFUSED:
        tool_error(prog, "cannot record %s: %s", ev->topic, rdps_strerror(ev->error));
        break;
    case RDPS_RECORDER_OVERRUN:
        tool_error(prog,
                   "the disk fell behind: %" PRIu64 " messages dropped (marked in the recording; "
                   "raise --queue-bytes or use a faster disk)",
                   ev->count);
        break;
    case RDPS_RECORDER_STOPPED:
        tool_error(prog, "recording stopped: %s (every record before is intact)", ev->detail);
        break;
    }
}

static void print_json(const struct options *opt, const rdps_recorder_stats *s, double elapsed)
{
    struct tool_json j;
    tool_json_init(&j, stdout);
    tool_json_object_begin(&j, NULL);
    tool_json_str(&j, "tool", prog);
    tool_json_str(&j, "dir", opt->dir);
    tool_json_u64(&j, "recording", s->recording_id);
    tool_json_u64(&j, "topics", s->topics);
    tool_json_u64(&j, "messages", s->messages);
    tool_json_u64(&j, "message_bytes", s->message_bytes);
    tool_json_u64(&j, "records", s->records);
    tool_json_u64(&j, "written_records", s->written_records);
    tool_json_u64(&j, "written_messages", s->written_messages);
    tool_json_u64(&j, "chunks", s->chunks);
    tool_json_u64(&j, "segments", s->segments);
    tool_json_u64(&j, "stored_bytes", s->stored_bytes);
    tool_json_u64(&j, "raw_bytes", s->raw_bytes);
    tool_json_double(&j, "compression_ratio",
                     s->stored_bytes > 0 ? (double)s->raw_bytes / (double)s->stored_bytes : 0.0);
    tool_json_u64(&j, "loss_events", s->loss_events);
    tool_json_u64(&j, "gap_events", s->gap_events);
    tool_json_u64(&j, "sessions_started", s->sessions_started);
    tool_json_u64(&j, "sessions_ended", s->sessions_ended);
    tool_json_u64(&j, "overrun_messages", s->overrun_messages);
    tool_json_u64(&j, "queue_high_water", s->queue_high_water);
    tool_json_u64(&j, "fsyncs", s->fsyncs);
    tool_json_u64(&j, "segments_deleted", s->segments_deleted);
    tool_json_str(&j, "error", s->error != 0 ? rdps_err_name(s->error) : "");
    tool_json_double(&j, "elapsed_s", elapsed);
    tool_json_double(&j, "msgs_per_s", elapsed > 0 ? (double)s->messages / elapsed : 0.0);
    tool_json_object_end(&j);
    tool_json_finish(&j);
}

int main(int argc, char **argv)
{
    static struct options opt;
    if (!parse_args(argc, argv, &opt)) {
        tool_usage_hint(prog);
        return TOOL_EXIT_USAGE;
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    rdps_ctx_t *ctx;
    if (tool_ctx_open(prog, &opt.ctx, 0, &ctx) != 0)
        return TOOL_EXIT_RUNTIME;
    opt.rec.dir = opt.dir;
    opt.rec.topics = opt.topics;
    opt.rec.topic_count = opt.ntopics;
    opt.rec.prefix = opt.prefix;
    opt.rec.on_event = on_recorder_event;
    opt.rec.event_user = &opt;
    rdps_recorder_t *rec;
    int rc = rdps_recorder_create(ctx, &opt.rec, &rec);
    if (rc != 0) {
        tool_error(prog, "%s",
                   rdps_last_error_message()[0] ? rdps_last_error_message() : rdps_strerror(rc));
        rdps_ctx_destroy(ctx);
        return TOOL_EXIT_RUNTIME;
    }
    rdps_recorder_stats st;
    rdps_recorder_get_stats(rec, &st);
    if (!opt.quiet)
        fprintf(stderr, "%s: recording %" PRIu64 " in %s\n", prog, st.recording_id, opt.dir);
    uint64_t start = rdps__clock_monotonic_ns();
    uint64_t deadline = opt.timeout_s > 0 ? start + opt.timeout_s * 1000000000ull : UINT64_MAX;
    int status = TOOL_EXIT_OK;
    while (!stop_requested) {
        rc = rdps_ctx_wait(ctx, 100);
        if (rc < 0 && rc != RDPS_EINTR) {
            tool_error(prog, "rdps_ctx_wait: %s", rdps_strerror(rc));
            status = TOOL_EXIT_RUNTIME;
            break;
        }
        if (rdps_recorder_poll(rec) != 0) {
            status = TOOL_EXIT_STORAGE;
            break;
        }
        rdps_recorder_get_stats(rec, &st);
        if (opt.count > 0 && st.messages >= opt.count)
            break;
        if (rdps__clock_monotonic_ns() >= deadline) {
            if (opt.count > 0)
                status = TOOL_EXIT_TIMEOUT;
            break;
        }
    }
    double elapsed = (double)(rdps__clock_monotonic_ns() - start) / 1e9;
    /* The figures printed are the written ones: wait (at most 30 s) for the writer to take the
     * queue to disk, as destroy would, so the summary does not count what was still queued. */
    uint64_t drain_deadline = rdps__clock_monotonic_ns() + 30000000000ull;
    rdps_recorder_get_stats(rec, &st);
    while (status != TOOL_EXIT_STORAGE && st.written_records < st.records &&
           rdps__clock_monotonic_ns() < drain_deadline) {
        if (rdps_recorder_poll(rec) != 0)
            break;
        nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
        rdps_recorder_get_stats(rec, &st);
    }
    rdps_recorder_destroy(rec); /* the rest of the queue to disk, the catalog's STOP entry */
    rdps_ctx_destroy(ctx);
    if (opt.json)
        print_json(&opt, &st, elapsed);
    if (status == TOOL_EXIT_TIMEOUT)
        tool_error(prog, "timed out after %" PRIu64 " s with %" PRIu64 " of %" PRIu64 " messages",
                   opt.timeout_s, st.messages, opt.count);
    return status;
}
