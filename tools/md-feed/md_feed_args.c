/* SPDX-License-Identifier: BSD-2-Clause */
/* md_feed_args.c - md-feed's command line: --help and the options into struct options. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "md_feed.h"
#include "md_topics.h"
#include "tool_cli.h"

static const char *prog = MD_FEED_PROG;

void md_feed_usage(FILE *out)
{
    fprintf(out,
            "Usage: md-feed [-b IP | -d DEV] [--feed NAME] [--duration S] [--rate N]\n"
            "               [--profile steady|open] [--symbols N] [--channels N] [--zipf S]\n"
            "               [--seed N] [--books N] [--max-delay-us US] [--unreliable]\n"
            "               [--warmup-ms MS] [--hgrm PREFIX] [--symbol-digests FILE] [--json]\n"
            "Publishes a seeded synthetic NASDAQ TotalView-ITCH 5.0 order flow (add, delete,\n"
            "replace, execute, cancel, trade on thousands of Zipf-popular symbols) on rdps\n"
            "topics md.NAME.ch0..chN-1, several messages per datagram (MoldUDP64 framing),\n"
            "reliable by default. Messages are scheduled open loop: each has an intended send\n"
            "time and latency counts from it, so a stalled publisher shows. At the end it\n"
            "prints the digest of its own reference books: every md-book must print the same.\n"
            "Books that join late ask for a snapshot of a channel's books (md.NAME.snapreq);\n"
            "the feed sends it reliably on md.NAME.snap, consistent with the channel's\n"
            "sequence, and keeps serving requests until it exits.\n"
            "  --feed NAME        topic prefix (default itch)\n"
            "  --duration S       seconds of order flow (default 20)\n"
            "  --rate N           ITCH messages per second offered (default 20000)\n"
            "  --profile P        steady; open: a ramp over the first fifth, then a burst\n"
            "                     at 20x for a twentieth of the run, then steady; replay:FILE:\n"
            "                     the messages of a NASDAQ ITCH 5.0 file (2-byte big-endian\n"
            "                     length before each) at --rate, channel = locate %% channels;\n"
            "                     types other than S R A F E C X D U P are skipped (counted)\n"
            "  --symbols N        symbols (default 8000); --channels N channels (default 8)\n"
            "  --zipf S           Zipf exponent of symbol popularity (default 1.0)\n"
            "  --seed N           generator seed (default 1)\n"
            "  --books N          wait for N subscribers on every channel before starting\n"
            "  --max-delay-us US  flush a partly filled datagram after US (default 50)\n"
            "  --unreliable       publish without the ack/resend layer\n"
            "  --warmup-ms MS     leave the first MS of flow out of the latency (default 1000)\n"
            "  --hgrm PREFIX      write PREFIX.bookN.hgrm: reflector RTT/2 per book\n"
            "  --breakdown PREFIX write PREFIX.bookN.dat: each echoed packet's round trip in\n"
            "                     stages (ns): rtt wake pack send wire_out apply echo wire_back\n"
            "  --write-itch FILE  also write every message published as an ITCH 5.0 file (the\n"
            "                     format --profile replay reads)\n"
            "  --timeseries FILE  per second: offered and sent messages, datagrams, echoes and\n"
            "                     the reflector RTT/2 p99 of that second (us)\n"
            "  --symbol-digests FILE  at exit, one 'locate digest' line per symbol of the\n"
            "                     reference books (md-book writes the same)\n"
            "  --snapshot-rate BYTES  snapshot and directory bytes per second for late books,\n"
            "                     all together (k/m/g suffixes; default 1m). Only books\n"
            "                     discovery announced as subscribers are answered, each at\n"
            "                     most every channel and the directory once per 3 s\n"
            "  --json             one-line JSON summary at exit\n");
    tool_ctx_options_usage(out);
    fprintf(out, "Exit: 0 done, 1 sends stalled, 2 bad usage, 3 books did not appear, 4 runtime "
                 "error.\n");
}

bool md_feed_parse_args(int argc, char **argv, struct options *o)
{
    enum {
        O_FEED = 256,
        O_DURATION,
        O_RATE,
        O_PROFILE,
        O_SYMBOLS,
        O_CHANNELS,
        O_ZIPF,
        O_SEED,
        O_BOOKS,
        O_DELAY,
        O_UNRELIABLE,
        O_WARMUP,
        O_BREAKDOWN,
        O_HGRM,
        O_JSON,
        O_SERIES,
        O_WRITE,
        O_SYMBOL_DIGESTS,
        O_SNAPSHOT_RATE
    };
    static const struct option longopts[] = {
        {"feed", required_argument, NULL, O_FEED},
        {"duration", required_argument, NULL, O_DURATION},
        {"rate", required_argument, NULL, O_RATE},
        {"profile", required_argument, NULL, O_PROFILE},
        {"symbols", required_argument, NULL, O_SYMBOLS},
        {"channels", required_argument, NULL, O_CHANNELS},
        {"zipf", required_argument, NULL, O_ZIPF},
        {"seed", required_argument, NULL, O_SEED},
        {"books", required_argument, NULL, O_BOOKS},
        {"max-delay-us", required_argument, NULL, O_DELAY},
        {"unreliable", no_argument, NULL, O_UNRELIABLE},
        {"warmup-ms", required_argument, NULL, O_WARMUP},
        {"breakdown", required_argument, NULL, O_BREAKDOWN},
        {"hgrm", required_argument, NULL, O_HGRM},
        {"timeseries", required_argument, NULL, O_SERIES},
        {"write-itch", required_argument, NULL, O_WRITE},
        {"symbol-digests", required_argument, NULL, O_SYMBOL_DIGESTS},
        {"snapshot-rate", required_argument, NULL, O_SNAPSHOT_RATE},
        {"json", no_argument, NULL, O_JSON},
        {"help", no_argument, NULL, 'h'},
        TOOL_CTX_LONG_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    *o = (struct options){.feed = "itch",
                          .duration_s = 20,
                          .rate = 20000,
                          .symbols = 8000,
                          .channels = 8,
                          .seed = 1,
                          .max_delay_us = 50,
                          .warmup_ms = 1000,
                          .wait_timeout_s = 60,
                          .drain_timeout_s = 30,
                          .snapshot_rate = MD_SNAP_SERVER_DEFAULT_BUDGET,
                          .zipf = 1.0};
    tool_ctx_options_init(&o->ctx);
    int c;
    while ((c = getopt_long(argc, argv, "h" TOOL_CTX_SHORT_OPTIONS, longopts, NULL)) != -1) {
        int shared = tool_ctx_option(prog, c, optarg, &o->ctx);
        if (shared < 0)
            return false;
        if (shared > 0)
            continue;
        bool ok = true;
        switch (c) {
        case O_FEED:
            o->feed = optarg;
            break;
        case O_DURATION:
            ok = tool_opt_u64(prog, "--duration", optarg, 1, 86400, &o->duration_s);
            break;
        case O_RATE:
            ok = tool_opt_u64(prog, "--rate", optarg, 1, 10000000, &o->rate);
            break;
        case O_PROFILE:
            if (strcmp(optarg, "steady") == 0) {
                o->profile = PROFILE_STEADY;
            } else if (strcmp(optarg, "open") == 0) {
                o->profile = PROFILE_OPEN;
            } else if (strncmp(optarg, "replay:", 7) == 0 && optarg[7] != '\0') {
                o->profile = PROFILE_REPLAY;
                o->replay = optarg + 7;
            } else {
                tool_error(prog, "--profile: steady, open or replay:FILE, got '%s'", optarg);
                ok = false;
            }
            break;
        case O_SYMBOLS:
            ok = tool_opt_u64(prog, "--symbols", optarg, 1, 65535, &o->symbols);
            break;
        case O_CHANNELS:
            ok = tool_opt_u64(prog, "--channels", optarg, 1, MAX_CHANNELS, &o->channels);
            break;
        case O_ZIPF: {
            char *end;
            errno = 0;
            o->zipf = strtod(optarg, &end);
            if (errno || *end || !(o->zipf >= 0 && o->zipf <= 10)) {
                tool_error(prog, "--zipf: a number in 0..10, got '%s'", optarg);
                ok = false;
            }
            break;
        }
        case O_SEED:
            ok = tool_opt_u64(prog, "--seed", optarg, 0, UINT64_MAX, &o->seed);
            break;
        case O_BOOKS:
            ok = tool_opt_u64(prog, "--books", optarg, 0, 1000, &o->books);
            break;
        case O_DELAY:
            ok = tool_opt_u64(prog, "--max-delay-us", optarg, 1, 1000000, &o->max_delay_us);
            break;
        case O_UNRELIABLE:
            o->unreliable = true;
            break;
        case O_WARMUP:
            ok = tool_opt_u64(prog, "--warmup-ms", optarg, 0, 3600000, &o->warmup_ms);
            break;
        case O_BREAKDOWN:
            o->breakdown_prefix = optarg;
            break;
        case O_HGRM:
            o->hgrm_prefix = optarg;
            break;
        case O_SERIES:
            o->timeseries = optarg;
            break;
        case O_WRITE:
            o->write_itch = optarg;
            break;
        case O_SYMBOL_DIGESTS:
            o->symbol_digests = optarg;
            break;
        case O_SNAPSHOT_RATE:
            ok = tool_opt_size(prog, "--snapshot-rate", optarg, 16384, 1ull << 40,
                               &o->snapshot_rate);
            break;
        case O_JSON:
            o->json = true;
            break;
        case 'h':
            md_feed_usage(stdout);
            exit(TOOL_EXIT_OK);
        default:
            return false;
        }
        if (!ok)
            return false;
    }
    if (optind < argc) {
        tool_error(prog, "unexpected argument '%s'", argv[optind]);
        return false;
    }
    if (o->channels > o->symbols) {
        tool_error(prog, "--channels %" PRIu64 " is more than --symbols %" PRIu64, o->channels,
                   o->symbols);
        return false;
    }
    char topic[300];
    md_channel_topic(topic, sizeof(topic), o->feed, (uint32_t)o->channels - 1);
    if (rdps_topic_id(topic) == 0 || strlen(o->feed) > 200) {
        tool_error(prog, "--feed '%s' does not make valid topic names", o->feed);
        return false;
    }
    return tool_ctx_options_check(prog, &o->ctx);
}

/* Offered rate at t_ns after the start: steady, or the open's ramp and burst. */
