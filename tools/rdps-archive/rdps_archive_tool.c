/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_archive_tool.c - rdps-archive: lists a directory's recordings, shows a recording's span and
 * counts, prints its records, verifies its checksums and indexes, exports it to pcapng. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdps/rdps_archive.h>

#include "pcapng.h"
#include "rdps_frame.h"
#include "tool_cli.h"
#include "tool_json.h"
#include "tool_time.h"

#define MAX_TOPICS 4096

static const char *prog = "rdps-archive";

struct options {
    const char *cmd, *dir, *output, *topic, *from_time, *to_time;
    uint64_t id, mtu, count;
    bool json;
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: rdps-archive list DIR [--json]\n"
            "       rdps-archive info DIR [ID] [--json]\n"
            "       rdps-archive verify DIR [ID] [--json]\n"
            "       rdps-archive dump DIR [ID] [-t TOPIC] [--from-time T] [--to-time T] [-c N]\n"
            "       rdps-archive export DIR [ID] -o FILE.pcapng [-t TOPIC] [--from-time T]\n"
            "                           [--to-time T] [--mtu BYTES]\n"
            "Recordings of rdps-record (ID: a recording of DIR, default the newest).\n"
            "  list     the catalog: each recording's id, state, span, what it recorded\n"
            "  info     a recording's span and counts by topic, sessions, losses (reads it all)\n"
            "  verify   checks every chunk (CRC-32C, decompression, every record), the record\n"
            "           numbering and each index against its segment; exit 1 on a problem\n"
            "  dump     prints the records, one line each\n"
            "  export   writes the messages as rdps DATA datagrams in RoCEv2 packets (UDP 4791)\n"
            "           to a pcapng file that Wireshark decodes with tools/wireshark/rdps.lua;\n"
            "           a message above one datagram is fragmented as a publisher would\n"
            "  -o, --output FILE   export: the pcapng file ('-': stdout)\n"
            "  -t, --topic TOPIC   dump/export: this recorded topic only\n"
            "  --from-time T       dump/export: from the first record at or after T (UTC\n"
            "                      2026-12-06T10:31:07Z, ns since the epoch, or +SECONDS)\n"
            "  --to-time T         dump/export: up to T\n"
            "  -c, --count N       dump: at most N records\n"
            "  --mtu BYTES         export: datagram size, header included (default 4096)\n"
            "  --json              list/info/verify: JSON (one line)\n"
            "  -h, --help          this text;  --version  the version\n"
            "Exit: 0 done, 1 verify found a problem (or export/dump met a bad chunk),\n"
            "      2 bad usage, 4 cannot read the directory or the recording\n");
}

static bool parse_args(int argc, char **argv, struct options *opt)
{
    enum { OPT_FROM = 256, OPT_TO, OPT_MTU, OPT_JSON };
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"topic", required_argument, NULL, 't'},
        {"from-time", required_argument, NULL, OPT_FROM},
        {"to-time", required_argument, NULL, OPT_TO},
        {"count", required_argument, NULL, 'c'},
        {"mtu", required_argument, NULL, OPT_MTU},
        {"json", no_argument, NULL, OPT_JSON},
        {"help", no_argument, NULL, 'h'},
        TOOL_VERSION_LONG_OPTION,
        {NULL, 0, NULL, 0},
    };
    opt->mtu = 4096;
    int c;
    while ((c = getopt_long(argc, argv, "o:t:c:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            opt->output = optarg;
            break;
        case 't':
            opt->topic = optarg;
            break;
        case 'c':
            if (!tool_opt_u64(prog, "-c", optarg, 1, UINT64_MAX, &opt->count))
                return false;
            break;
        case OPT_FROM:
            opt->from_time = optarg;
            break;
        case OPT_TO:
            opt->to_time = optarg;
            break;
        case OPT_MTU:
            if (!tool_opt_u64(prog, "--mtu", optarg, RDPS_FRAME_HEADER_LEN + 1, 8900, &opt->mtu))
                return false;
            break;
        case OPT_JSON:
            opt->json = true;
            break;
        case 'h':
            usage(stdout);
            exit(TOOL_EXIT_OK);
        case TOOL_OPT_VERSION:
            tool_version_exit(prog);
        default:
            return false;
        }
    }
    if (optind + 2 > argc) {
        tool_error(prog, "a command and a directory are required");
        return false;
    }
    opt->cmd = argv[optind++];
    opt->dir = argv[optind++];
    if (optind < argc && !tool_opt_u64(prog, "ID", argv[optind++], 1, UINT64_MAX, &opt->id))
        return false;
    if (optind < argc) {
        tool_error(prog, "unexpected argument '%s'", argv[optind]);
        return false;
    }
    if (strcmp(opt->cmd, "export") == 0 && opt->output == NULL) {
        tool_error(prog, "export needs -o FILE");
        return false;
    }
    return true;
}

static const char *state_name(rdps_archive_state s)
{
    static const char *const names[] = {"recording", "stopped", "disk_full", "io_error",
                                        "recovered"};
    return (unsigned)s < 5 ? names[s] : "unknown";
}

struct list_ctx {
    const struct options *opt;
    struct tool_json *j;
};

static void list_one(void *user, const rdps_archive_info *info)
{
    struct list_ctx *lc = user;
    char t0[40], t1[40];
    if (!lc->opt->json) {
        printf("%6" PRIu64 "  %-9s  %s  %s  %" PRIu64 " messages  %" PRIu64 " losses  %s\n",
               info->id, state_name(info->state), tool_format_time(info->start_ns, t0, sizeof(t0)),
               info->end_ns ? tool_format_time(info->end_ns, t1, sizeof(t1)) : "-", info->messages,
               info->loss_events, info->spec);
        return;
    }
    struct tool_json *j = lc->j;
    tool_json_object_begin(j, NULL);
    tool_json_u64(j, "id", info->id);
    tool_json_str(j, "state", state_name(info->state));
    tool_json_u64(j, "start_ns", info->start_ns);
    tool_json_u64(j, "end_ns", info->end_ns);
    tool_json_str(j, "spec", info->spec);
    tool_json_u64(j, "first_segment", info->first_segment);
    tool_json_u64(j, "segments", info->segments);
    tool_json_u64(j, "records", info->records);
    tool_json_u64(j, "messages", info->messages);
    tool_json_u64(j, "loss_events", info->loss_events);
    tool_json_u64(j, "overrun_messages", info->overrun_messages);
    tool_json_u64(j, "bytes", info->bytes);
    tool_json_object_end(j);
}

static int cmd_list(const struct options *opt)
{
    struct tool_json j;
    struct list_ctx lc = {opt, &j};
    if (opt->json) {
        tool_json_init(&j, stdout);
        tool_json_object_begin(&j, NULL);
        tool_json_str(&j, "dir", opt->dir);
        tool_json_array_begin(&j, "recordings");
    }
    int n = rdps_archive_list(opt->dir, list_one, &lc);
    if (opt->json)
        tool_json_finish(&j);
    if (n < 0) {
        tool_error(prog, "%s", rdps_last_error_message());
        return TOOL_EXIT_RUNTIME;
    }
    return TOOL_EXIT_OK;
}

/* Opens the reader positioned by --from-time; -1 after printing the error. */
static int open_reader(const struct options *opt, rdps_archive_reader_t **r, uint64_t *to_ts)
{
    if (rdps_archive_reader_open(opt->dir, opt->id, r) != 0) {
        tool_error(prog, "%s", rdps_last_error_message());
        return TOOL_EXIT_RUNTIME;
    }
    rdps_archive_record rec;
    uint64_t first = rdps_archive_reader_next(*r, &rec) == 1 ? rec.recorder_ts_ns : 0;
    uint64_t from = 0;
    bool rel;
    *to_ts = UINT64_MAX;
    if (opt->from_time != NULL && !tool_parse_time(opt->from_time, first, &from, &rel)) {
        tool_error(prog, "--from-time: not a time: '%s'", opt->from_time);
        return TOOL_EXIT_USAGE;
    }
    if (opt->to_time != NULL && !tool_parse_time(opt->to_time, first, to_ts, &rel)) {
        tool_error(prog, "--to-time: not a time: '%s'", opt->to_time);
        return TOOL_EXIT_USAGE;
    }
    rdps_archive_reader_seek_time(*r, from);
    return 0;
}

static const char *type_name(rdps_archive_record_type t)
{
    static const char *const names[] = {"?",   "message",       "topic",       "loss",
                                        "gap", "session_start", "session_end", "overrun"};
    return (unsigned)t < 8 ? names[t] : "?";
}

static int cmd_dump(const struct options *opt)
{
    rdps_archive_reader_t *r;
    uint64_t to_ts;
    int status = open_reader(opt, &r, &to_ts);
    if (status != 0)
        return status;
    rdps_archive_record rec;
    uint64_t n = 0;
    int rc;
    while ((opt->count == 0 || n < opt->count) && (rc = rdps_archive_reader_next(r, &rec)) != 0) {
        if (rc < 0) {
            tool_error(prog, "%s", rdps_last_error_message());
            status = TOOL_EXIT_FAILED;
            if (rc != RDPS_EBADFRAME)
                break;
            continue;
        }
        if (rec.recorder_ts_ns > to_ts)
            break;
        if (opt->topic != NULL && strcmp(rec.topic, opt->topic) != 0)
            continue;
        char ts[40];
        printf("%" PRIu64 " %s %s %s session %08" PRIx32 " seq %" PRIu32 " count %" PRIu32,
               rec.number, tool_format_time(rec.recorder_ts_ns, ts, sizeof(ts)),
               type_name(rec.type), rec.topic[0] ? rec.topic : "-", rec.session_id, rec.seq,
               rec.count);
        if (rec.type == RDPS_ARCHIVE_MESSAGE)
            printf(" len %zu%s", rec.len,
                   (rec.flags & RDPS_ARCHIVE_F_RETRANSMITTED) ? " retransmitted" : "");
        if (rec.reason != 0)
            printf(" reason %d", rec.reason);
        putchar('\n');
        n++;
    }
    rdps_archive_reader_close(r);
    return status;
}

struct topic_count {
    uint64_t id;
    const char *name;
    uint64_t messages, bytes, sessions, losses, lost_datagrams;
};

static struct topic_count *count_of(struct topic_count *t, size_t *n, const rdps_archive_record *r)
{
    for (size_t i = 0; i < *n; i++)
        if (t[i].id == r->topic_id)
            return &t[i];
    if (*n == MAX_TOPICS)
        return NULL;
    t[*n] = (struct topic_count){.id = r->topic_id, .name = strdup(r->topic)};
    return &t[(*n)++];
}

static int cmd_info(const struct options *opt)
{
    rdps_archive_reader_t *r;
    if (rdps_archive_reader_open(opt->dir, opt->id, &r) != 0) {
        tool_error(prog, "%s", rdps_last_error_message());
        return TOOL_EXIT_RUNTIME;
    }
    static struct topic_count topics[MAX_TOPICS];
    size_t ntopics = 0;
    uint64_t records = 0, messages = 0, bytes = 0, first = 0, last = 0, overruns = 0, bad = 0;
    uint64_t first_number = 0;
    rdps_archive_record rec;
    int rc;
    while ((rc = rdps_archive_reader_next(r, &rec)) != 0) {
        if (rc < 0) {
            bad++;
            if (rc != RDPS_EBADFRAME)
                break;
            continue;
        }
        if (records++ == 0) {
            first = rec.recorder_ts_ns;
            first_number = rec.number;
        }
        last = rec.recorder_ts_ns;
        if (rec.type == RDPS_ARCHIVE_OVERRUN) {
            overruns += rec.count;
            continue;
        }
        struct topic_count *t = count_of(topics, &ntopics, &rec);
        if (t == NULL)
            continue;
        if (rec.type == RDPS_ARCHIVE_MESSAGE) {
            t->messages++;
            t->bytes += rec.len;
            messages++;
            bytes += rec.len;
        } else if (rec.type == RDPS_ARCHIVE_SESSION_START) {
            t->sessions++;
        } else if (rec.type == RDPS_ARCHIVE_LOSS || rec.type == RDPS_ARCHIVE_GAP) {
            t->losses++;
            t->lost_datagrams += rec.count;
        }
    }
    uint64_t id = rdps_archive_reader_id(r);
    rdps_archive_reader_close(r);
    char t0[40], t1[40];
    if (opt->json) {
        struct tool_json j;
        tool_json_init(&j, stdout);
        tool_json_object_begin(&j, NULL);
        tool_json_u64(&j, "id", id);
        tool_json_u64(&j, "first_ns", first);
        tool_json_u64(&j, "last_ns", last);
        tool_json_u64(&j, "first_record", first_number);
        tool_json_u64(&j, "records", records);
        tool_json_u64(&j, "messages", messages);
        tool_json_u64(&j, "bytes", bytes);
        tool_json_u64(&j, "overrun_messages", overruns);
        tool_json_u64(&j, "bad_chunks", bad);
        tool_json_array_begin(&j, "topics");
        for (size_t i = 0; i < ntopics; i++) {
            tool_json_object_begin(&j, NULL);
            tool_json_str(&j, "topic", topics[i].name);
            tool_json_u64(&j, "messages", topics[i].messages);
            tool_json_u64(&j, "bytes", topics[i].bytes);
            tool_json_u64(&j, "sessions", topics[i].sessions);
            tool_json_u64(&j, "loss_events", topics[i].losses);
            tool_json_u64(&j, "lost_datagrams", topics[i].lost_datagrams);
            tool_json_object_end(&j);
        }
        tool_json_array_end(&j);
        tool_json_object_end(&j);
        tool_json_finish(&j);
    } else {
        printf("recording %" PRIu64 ": %s .. %s (%.3f s), %" PRIu64 " records, %" PRIu64
               " messages, %" PRIu64 " bytes, %" PRIu64 " dropped by the recorder\n",
               id, tool_format_time(first, t0, sizeof(t0)), tool_format_time(last, t1, sizeof(t1)),
               (double)(last - first) / 1e9, records, messages, bytes, overruns);
        for (size_t i = 0; i < ntopics; i++)
            printf("  %-40s %10" PRIu64 " messages %12" PRIu64 " bytes %4" PRIu64
                   " sessions %" PRIu64 " losses (%" PRIu64 " datagrams)\n",
                   topics[i].name[0] ? topics[i].name : "(unnamed)", topics[i].messages,
                   topics[i].bytes, topics[i].sessions, topics[i].losses, topics[i].lost_datagrams);
    }
    for (size_t i = 0; i < ntopics; i++)
        free((char *)topics[i].name);
    if (bad > 0)
        tool_error(prog, "%" PRIu64 " bad chunks skipped (rdps-archive verify says where)", bad);
    return bad > 0 ? TOOL_EXIT_FAILED : TOOL_EXIT_OK;
}

static void print_problem(void *user, const char *line)
{
    (void)user;
    fprintf(stderr, "%s: %s\n", prog, line);
}

static int cmd_verify(const struct options *opt)
{
    rdps_archive_verify_result v;
    int rc = rdps_archive_verify(opt->dir, opt->id, print_problem, NULL, &v);
    if (rc < 0) {
        tool_error(prog, "%s", rdps_last_error_message());
        return TOOL_EXIT_RUNTIME;
    }
    if (opt->json) {
        struct tool_json j;
        tool_json_init(&j, stdout);
        tool_json_object_begin(&j, NULL);
        tool_json_str(&j, "verdict", rc == 0 ? "ok" : "problems");
        tool_json_u64(&j, "segments", v.segments);
        tool_json_u64(&j, "chunks", v.chunks);
        tool_json_u64(&j, "records", v.records);
        tool_json_u64(&j, "bytes", v.bytes);
        tool_json_u64(&j, "bad_chunks", v.bad_chunks);
        tool_json_u64(&j, "bad_indexes", v.bad_indexes);
        tool_json_u64(&j, "torn_bytes", v.torn_bytes);
        tool_json_object_end(&j);
        tool_json_finish(&j);
    } else {
        printf("%s: %" PRIu64 " segments, %" PRIu64 " chunks, %" PRIu64 " records, %" PRIu64
               " bytes checked; %" PRIu64 " bad chunks, %" PRIu64 " bad indexes, %" PRIu64
               " torn bytes\n",
               rc == 0 ? "ok" : "PROBLEMS", v.segments, v.chunks, v.records, v.bytes, v.bad_chunks,
               v.bad_indexes, v.torn_bytes);
    }
    return rc == 0 ? TOOL_EXIT_OK : TOOL_EXIT_FAILED;
}

/* One message as the datagrams a publisher would send (fragments of mtu bytes). */
static int export_message(FILE *f, const rdps_archive_record *rec, uint64_t mtu, uint32_t *psn)
{
    static uint8_t frame[9000];
    uint32_t max_payload = (uint32_t)(mtu - RDPS_FRAME_HEADER_LEN);
    uint32_t off = 0, k = 0;
    uint16_t flags = (rec->flags & RDPS_ARCHIVE_F_RETRANSMITTED) ? RDPS_FRAME_F_RETRANSMIT : 0;
    do {
        uint32_t n =
            (uint32_t)rec->len - off < max_payload ? (uint32_t)rec->len - off : max_payload;
        memcpy(frame + RDPS_FRAME_HEADER_LEN, (const uint8_t *)rec->data + off, n);
        uint32_t len = rdps__frame_put_data_header(
            frame, rec->session_id, rec->topic_id, rec->seq + k, (uint32_t)rec->len, off, n,
            rec->publisher_ts_ns, flags, rec->ordinal, n == rec->len ? 1u : 0u);
        /* To the multicast QPN (0xFFFFFF); QPs 0 and 1 would be taken for subnet management. */
        int rc = pcapng_roce_packet(f, rec->recorder_ts_ns, frame, len,
                                    0x100 + (rec->session_id & 0xFF), 0xFFFFFF, (*psn)++);
        if (rc != 0)
            return rc;
        off += n;
        k++;
    } while (off < rec->len);
    return 0;
}

static int cmd_export(const struct options *opt)
{
    rdps_archive_reader_t *r;
    uint64_t to_ts;
    int status = open_reader(opt, &r, &to_ts);
    if (status != 0)
        return status;
    FILE *f = strcmp(opt->output, "-") == 0 ? stdout : fopen(opt->output, "wb");
    if (f == NULL) {
        tool_error(prog, "%s: %s", opt->output, strerror(errno));
        rdps_archive_reader_close(r);
        return TOOL_EXIT_RUNTIME;
    }
    int rc = pcapng_begin(f);
    rdps_archive_record rec;
    uint64_t messages = 0, markers = 0;
    uint32_t psn = 0;
    while (rc == 0) {
        int n = rdps_archive_reader_next(r, &rec);
        if (n == 0 || rec.recorder_ts_ns > to_ts)
            break;
        if (n < 0) {
            tool_error(prog, "%s", rdps_last_error_message());
            status = TOOL_EXIT_FAILED;
            if (n != RDPS_EBADFRAME)
                break;
            continue;
        }
        if (opt->topic != NULL && strcmp(rec.topic, opt->topic) != 0)
            continue;
        if (rec.type != RDPS_ARCHIVE_MESSAGE) {
            markers++;
            continue;
        }
        rc = export_message(f, &rec, opt->mtu, &psn);
        messages++;
    }
    if (f != stdout && fclose(f) != 0 && rc == 0)
        rc = -errno;
    rdps_archive_reader_close(r);
    if (rc != 0) {
        tool_error(prog, "%s: %s", opt->output, strerror(-rc));
        return TOOL_EXIT_RUNTIME;
    }
    fprintf(stderr,
            "%s: %" PRIu64 " messages exported (%" PRIu64
            " loss, gap and session markers are not datagrams: not exported)\n",
            prog, messages, markers);
    return status;
}

int main(int argc, char **argv)
{
    struct options opt = {0};
    if (!parse_args(argc, argv, &opt)) {
        tool_usage_hint(prog);
        return TOOL_EXIT_USAGE;
    }
    if (strcmp(opt.cmd, "list") == 0)
        return cmd_list(&opt);
    if (strcmp(opt.cmd, "info") == 0)
        return cmd_info(&opt);
    if (strcmp(opt.cmd, "verify") == 0)
        return cmd_verify(&opt);
    if (strcmp(opt.cmd, "dump") == 0)
        return cmd_dump(&opt);
    if (strcmp(opt.cmd, "export") == 0)
        return cmd_export(&opt);
    tool_error(prog, "unknown command '%s' (list, info, verify, dump, export)", opt.cmd);
    tool_usage_hint(prog);
    return TOOL_EXIT_USAGE;
}
