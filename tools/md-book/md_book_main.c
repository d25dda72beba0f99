/* SPDX-License-Identifier: BSD-2-Clause */
/* md_book_main.c - md-book: subscribes to an md-feed's channels, keeps every symbol's order book
 * and VWAP, reports latency, loss and the book digest. */
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdps/rdps.h>
#include <rdps/rdps_archive.h>

#include "ctx_options.h"
#include "lat_hist.h"
#include "md_book.h"
#include "md_book_rx.h"
#include "md_packet.h"
#include "md_recovery.h"
#include "md_snapshot.h"
#include "md_topics.h"
#include "rdps_clock.h"
#include "tool_cli.h"
#include "tool_event.h"
#include "tool_json.h"

static const char *prog = "md-book";
static volatile sig_atomic_t stop_requested;

#define MAX_CHANNELS MD_BOOK_RX_MAX_CHANNELS

struct options {
    struct tool_ctx_options ctx;
    const char *feed, *hgrm, *symbol_digests;
    uint64_t channels, book_id, reflect_every, timeout_s, warmup_ms, history_timeout_s;
    bool unreliable, oneway, json, from_archive;
};

/* Where a --from-archive channel's history stands (rdps_history_sub_poll). */
enum history_state { HISTORY_MERGING, HISTORY_LIVE, HISTORY_TIMED_OUT, HISTORY_REFUSED };

/* A channel's subscriber (or, --from-archive, its history subscriber) and what its callbacks
 * need. */
struct channel {
    struct book *book;
    uint32_t index;
    rdps_sub_t *sub;
    rdps_history_sub_t *history;
    enum history_state history_state;
};

struct book {
    const struct options *opt;
    rdps_ctx_t *ctx;
    rdps_pub_t *echo_pub;
    rdps_pub_t *snapreq_pub; /* late join: snapshot requests to the feed */
    rdps_sub_t *snap_sub;    /* ... and the snapshots */
    struct channel channels[MAX_CHANNELS];
    struct md_book_rx rx; /* everything received, applied to the books */
    uint64_t snap_requests, snap_requests_failed;
    uint64_t echoes, echoes_skipped, loss_events;
};

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: md-book [-b IP | -d DEV] [--feed NAME] [--channels N] [--book-id N]\n"
            "               [--reflect N] [--oneway] [--hgrm FILE] [--unreliable]\n"
            "               [--timeout S] [--warmup-ms MS] [--symbol-digests FILE] [--json]\n"
            "               [--from-archive [--history-timeout S]]\n"
            "Subscribes to md-feed's channels (md.NAME.ch0..chN-1), applies every ITCH\n"
            "message to a full order book per symbol (orders by reference, price levels, best\n"
            "bid and offer, VWAP) and, when every channel has ended, prints the book digest:\n"
            "it must equal md-feed's. Reliable by default: every message in order or an\n"
            "explicit loss. A book started after the feed joins each channel at the live\n"
            "position and catches up from a snapshot of the channel's books (asked of the feed\n"
            "on md.NAME.snapreq, sent on md.NAME.snap) plus the messages after it. It keeps\n"
            "to the feed it heard first (the source and MoldUDP64 session of the first\n"
            "packet, each channel's session): other senders' packets and snapshots, and\n"
            "sequences far ahead of the channel, are dropped and counted (--json).\n"
            "  --feed NAME      the feed's topic prefix (default itch)\n"
            "  --channels N     the feed's channel count (default 8)\n"
            "  --book-id N      this book's id in echoes and reports (default 1)\n"
            "  --reflect N      echo every Nth datagram of channel 0 to the feed (reflector\n"
            "                   latency: the feed records RTT/2; 0 = off, the default)\n"
            "  --oneway         record one-way latency from each message's intended send time\n"
            "                   (meaningful only when the feed runs on this host's clock)\n"
            "  --hgrm FILE      write the one-way histogram (.hgrm percentile distribution)\n"
            "  --unreliable     subscribe without the ack/resend layer (loss shows as\n"
            "                   missing messages and a different digest)\n"
            "  --timeout S      give up after S seconds (default 600)\n"
            "  --warmup-ms MS   leave the first MS of flow out of the latency (default 1000)\n"
            "  --symbol-digests FILE  at exit, one 'locate digest' line per symbol (compare\n"
            "                   with md-feed's to see which books differ)\n"
            "  --json           one-line JSON summary at exit\n"
            "  --from-archive   start from history: each channel first replays from a\n"
            "                   recorder serving the feed (rdps-record, found through\n"
            "                   discovery) from the start of its recording, then moves onto\n"
            "                   the live stream with no gap and no duplicate (replay-merge):\n"
            "                   a late book without snapshots. No recorder: the channel goes\n"
            "                   live and catches up from a snapshot as without it\n"
            "  --history-timeout S  no recorder answers or its replay stalls this long: go\n"
            "                   live (default 10)\n");
    tool_ctx_options_usage(out);
    fprintf(out, "Exit: 0 every channel ended with nothing missing, 1 messages missing or "
                 "refused,\n      2 bad usage, 3 timeout, 4 runtime error.\n");
}

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static bool parse_args(int argc, char **argv, struct options *o)
{
    enum {
        O_FEED = 256,
        O_CHANNELS,
        O_BOOK_ID,
        O_REFLECT,
        O_ONEWAY,
        O_HGRM,
        O_UNRELIABLE,
        O_TIMEOUT,
        O_WARMUP,
        O_SYMBOL_DIGESTS,
        O_JSON,
        O_FROM_ARCHIVE,
        O_HISTORY_TIMEOUT
    };
    static const struct option longopts[] = {
        {"feed", required_argument, NULL, O_FEED},
        {"channels", required_argument, NULL, O_CHANNELS},
        {"book-id", required_argument, NULL, O_BOOK_ID},
        {"reflect", required_argument, NULL, O_REFLECT},
        {"oneway", no_argument, NULL, O_ONEWAY},
        {"hgrm", required_argument, NULL, O_HGRM},
        {"unreliable", no_argument, NULL, O_UNRELIABLE},
        {"timeout", required_argument, NULL, O_TIMEOUT},
        {"warmup-ms", required_argument, NULL, O_WARMUP},
        {"symbol-digests", required_argument, NULL, O_SYMBOL_DIGESTS},
        {"json", no_argument, NULL, O_JSON},
        {"from-archive", no_argument, NULL, O_FROM_ARCHIVE},
        {"history-timeout", required_argument, NULL, O_HISTORY_TIMEOUT},
        {"help", no_argument, NULL, 'h'},
        TOOL_CTX_LONG_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    *o = (struct options){.feed = "itch",
                          .channels = 8,
                          .book_id = 1,
                          .timeout_s = 600,
                          .warmup_ms = 1000,
                          .history_timeout_s = 10};
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
        case O_CHANNELS:
            ok = tool_opt_u64(prog, "--channels", optarg, 1, MAX_CHANNELS, &o->channels);
            break;
        case O_BOOK_ID:
            ok = tool_opt_u64(prog, "--book-id", optarg, 0, UINT32_MAX, &o->book_id);
            break;
        case O_REFLECT:
            ok = tool_opt_u64(prog, "--reflect", optarg, 0, 1000000, &o->reflect_every);
            break;
        case O_ONEWAY:
            o->oneway = true;
            break;
        case O_HGRM:
            o->hgrm = optarg;
            break;
        case O_UNRELIABLE:
            o->unreliable = true;
            break;
        case O_TIMEOUT:
            ok = tool_opt_u64(prog, "--timeout", optarg, 1, 86400, &o->timeout_s);
            break;
        case O_WARMUP:
            ok = tool_opt_u64(prog, "--warmup-ms", optarg, 0, 3600000, &o->warmup_ms);
            break;
        case O_SYMBOL_DIGESTS:
            o->symbol_digests = optarg;
            break;
        case O_JSON:
            o->json = true;
            break;
        case O_FROM_ARCHIVE:
            o->from_archive = true;
            break;
        case O_HISTORY_TIMEOUT:
            ok = tool_opt_u64(prog, "--history-timeout", optarg, 1, 3600, &o->history_timeout_s);
            break;
        case 'h':
            usage(stdout);
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
    if (strlen(o->feed) > 200) {
        tool_error(prog, "--feed name too long");
        return false;
    }
    if (o->from_archive && o->unreliable) {
        tool_error(prog, "--from-archive merges history into a reliable stream: drop --unreliable");
        return false;
    }
    if (o->hgrm != NULL && !o->oneway) {
        tool_error(prog, "--hgrm writes the one-way histogram: it needs --oneway");
        return false;
    }
    return tool_ctx_options_check(prog, &o->ctx);
}

/* md_book_rx's hooks: echoes and snapshot requests go out on this ctx. */
static void echo_hook(void *user, const struct md_packet_view *v, uint64_t received_real_ns)
{
    struct book *b = user;
    if (b->channels[0].history != NULL && b->channels[0].history_state == HISTORY_MERGING) {
        b->echoes_skipped++; /* a recorded packet's round trip would measure its age */
        return;
    }
    uint64_t applied = rdps__clock_realtime_ns();
    struct md_echo e = {.book_id = (uint32_t)b->opt->book_id,
                        .seq = v->seq,
                        .intended_ns = v->intended_ns,
                        .apply_ns = applied > received_real_ns ? applied - received_real_ns : 0};
    uint8_t buf[MD_ECHO_LEN];
    uint64_t handed = rdps__clock_realtime_ns();
    e.echo_ns = handed - applied;
    md_echo_encode(&e, buf);
    if (rdps_pub_send(b->echo_pub, buf, sizeof(buf)) == 0)
        b->echoes++;
    else
        b->echoes_skipped++; /* back-pressure: an echo is a sample, never worth waiting for */
}

/* Asks the feed for a channel's snapshot or (MD_SNAPREQ_DIRECTORY) the symbol directory;
 * unreliable: a lost request is asked again. */
static void request_hook(void *user, uint32_t what)
{
    struct book *b = user;
    struct md_snapreq r = {.book_id = (uint32_t)b->opt->book_id, .channel = what};
    uint8_t buf[MD_SNAPREQ_LEN];
    md_snapreq_encode(&r, buf);
    if (rdps_pub_send(b->snapreq_pub, buf, sizeof(buf)) == 0)
        b->snap_requests++;
    else
        b->snap_requests_failed++;
}

static void on_packet(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct channel *ch = user;
    md_book_rx_packet(&ch->book->rx, ch->index, data, len, info, rdps__clock_realtime_ns(),
                      rdps__clock_monotonic_ns());
}

static void on_snap_message(void *user, const void *msg, size_t len, const rdps_msg_info *info)
{
    struct book *b = user;
    md_book_rx_snap_message(&b->rx, msg, len, info, rdps__clock_monotonic_ns());
}

static void on_event(void *user, const rdps_event *ev)
{
    struct channel *ch = user;
    if (ev->type != RDPS_EVENT_LOSS)
        return;
    ch->book->loss_events++;
    char line[160];
    fprintf(stderr, "%s: channel %u: %s\n", prog, ch->index,
            tool_event_text(ev, line, sizeof(line)));
}

static bool open_endpoints(struct book *b)
{
    const struct options *o = b->opt;
    char topic[300];
    for (uint32_t i = 0; i < o->channels; i++) {
        struct channel *ch = &b->channels[i];
        ch->index = i;
        ch->book = b;
        md_channel_topic(topic, sizeof(topic), o->feed, i);
        int rc;
        if (o->from_archive) {
            rdps_history_opts ho = {.timeout_ms = (uint32_t)(o->history_timeout_s * 1000),
                                    .on_event = on_event,
                                    .event_user = ch};
            rc = rdps_history_sub_create(b->ctx, topic, on_packet, ch, &ho, &ch->history);
        } else {
            rdps_sub_opts so = {.reliable = !o->unreliable,
                                .on_event = on_event,
                                .group = o->ctx.group,
                                .transport = o->ctx.transport};
            rc = rdps_sub_create(b->ctx, topic, on_packet, ch, &so, &ch->sub);
        }
        if (rc < 0) {
            tool_error(prog, "cannot subscribe to '%s': %s (%s)", topic, rdps_strerror(rc),
                       rdps_last_error_message());
            return false;
        }
    }
    /* Late join: snapshots always come reliably, whatever the channels use. */
    md_snap_topic(topic, sizeof(topic), o->feed);
    rdps_sub_opts snap_opts = {
        .reliable = true, .group = o->ctx.group, .transport = o->ctx.transport};
    int rc = rdps_sub_create(b->ctx, topic, on_snap_message, b, &snap_opts, &b->snap_sub);
    if (rc < 0) {
        tool_error(prog, "cannot subscribe to '%s': %s (%s)", topic, rdps_strerror(rc),
                   rdps_last_error_message());
        return false;
    }
    md_snapreq_topic(topic, sizeof(topic), o->feed);
    rdps_pub_opts po = {.transport = o->ctx.transport};
    rc = rdps_pub_create(b->ctx, topic, &po, &b->snapreq_pub);
    if (rc < 0) {
        tool_error(prog, "cannot publish '%s': %s (%s)", topic, rdps_strerror(rc),
                   rdps_last_error_message());
        return false;
    }
    if (o->reflect_every != 0) {
        md_echo_topic(topic, sizeof(topic), o->feed);
        rc = rdps_pub_create(b->ctx, topic, &po, &b->echo_pub);
        if (rc < 0) {
            tool_error(prog, "cannot publish '%s': %s (%s)", topic, rdps_strerror(rc),
                       rdps_last_error_message());
            return false;
        }
    }
    return true;
}

/* Moves each --from-archive channel's replay-merge on; says once why a channel went live
 * without its history. */
static void poll_history(struct book *b)
{
    for (uint32_t i = 0; i < b->opt->channels; i++) {
        struct channel *ch = &b->channels[i];
        if (ch->history == NULL || ch->history_state != HISTORY_MERGING)
            continue;
        int rc = rdps_history_sub_poll(ch->history);
        if (rc == 1) {
            ch->history_state = HISTORY_LIVE;
        } else if (rc == RDPS_ETIMEDOUT) {
            ch->history_state = HISTORY_TIMED_OUT;
            fprintf(stderr, "%s: channel %u: %s; caught up from a snapshot\n", prog, i,
                    rdps_last_error_message());
        } else if (rc < 0) {
            ch->history_state = HISTORY_REFUSED;
            fprintf(stderr,
                    "%s: channel %u: the recorder refused the history (%s): live from now\n", prog,
                    i, rdps_strerror(rc));
        }
    }
}

static void print_json(struct book *b, bool timed_out)
{
    const struct options *o = b->opt;
    const struct md_book_rx *rx = &b->rx;
    struct tool_json j;
    rdps_counters c;
    char digest[17];
    uint64_t missing = 0, stale = 0, packets = 0, covered = 0;
    struct md_rec_counters late = {0};
    unsigned late_channels = 0;
    for (uint32_t i = 0; i < o->channels; i++) {
        const struct md_book_rx_channel *ch = &rx->channels[i];
        missing += ch->missing;
        stale += ch->stale;
        packets += ch->packets;
        covered += ch->covered;
        late_channels +=
            ch->rec.counters.snapshots_applied > 0 || ch->rec.state == MD_REC_RECOVERING;
        late.held_packets += ch->rec.counters.held_packets;
        late.overflows += ch->rec.counters.overflows;
        late.snapshots_applied += ch->rec.counters.snapshots_applied;
        late.snapshots_stale += ch->rec.counters.snapshots_stale;
        late.imported_orders += ch->rec.counters.imported_orders;
        late.import_refused += ch->rec.counters.import_refused;
        late.packets_implausible += ch->rec.counters.packets_implausible;
        late.snapshots_implausible += ch->rec.counters.snapshots_implausible;
        late.jumps += ch->rec.counters.jumps;
    }
    rdps_ctx_counters(b->ctx, &c);
    snprintf(digest, sizeof(digest), "%016" PRIx64, md_book_digest(&rx->book));
    tool_json_init(&j, stdout);
    tool_json_object_begin(&j, NULL);
    tool_json_str(&j, "tool", "md-book");
    tool_json_str(&j, "feed", o->feed);
    tool_json_u64(&j, "book", o->book_id);
    tool_json_bool(&j, "reliable", !o->unreliable);
    tool_json_bool(&j, "timed_out", timed_out);
    tool_json_u64(&j, "channels_ended", rx->ended);
    tool_json_u64(&j, "messages", rx->messages);
    tool_json_u64(&j, "packets", packets);
    tool_json_u64(&j, "missing", missing);
    tool_json_u64(&j, "stale_packets", stale);
    tool_json_u64(&j, "bad_messages", rx->bad_messages);
    tool_json_u64(&j, "apply_errors", rx->apply_errors);
    tool_json_u64(&j, "packets_rejected", rx->packets_rejected);
    /* What the book did not believe: another sender than the feed it pinned, or too far ahead. */
    tool_json_u64(&j, "packets_foreign", rx->packets_foreign);
    tool_json_u64(&j, "packets_implausible", late.packets_implausible);
    tool_json_u64(&j, "sequence_jumps", late.jumps);
    tool_json_u64(&j, "ends_refused", rx->ends_refused);
    tool_json_str(&j, "digest", digest);
    tool_json_u64(&j, "gaps", c.gaps);
    tool_json_u64(&j, "naks_sent", c.naks_sent);
    tool_json_u64(&j, "recovered", c.recovered);
    tool_json_u64(&j, "lost", c.lost);
    tool_json_u64(&j, "loss_events", b->loss_events);
    tool_json_u64(&j, "repair_latency_p50_us", c.repair_latency_p50_us);
    tool_json_u64(&j, "repair_latency_p99_us", c.repair_latency_p99_us);
    tool_json_double(&j, "repair_latency_p50_rtts", c.repair_rtts_p50_milli / 1000.0);
    tool_json_double(&j, "repair_latency_p99_rtts", c.repair_rtts_p99_milli / 1000.0);
    tool_json_u64(&j, "echoes", b->echoes);
    tool_json_object_begin(&j, "late_join");
    tool_json_u64(&j, "channels", late_channels);
    tool_json_u64(&j, "still_recovering", rx->recovering);
    tool_json_u64(&j, "requests", b->snap_requests);
    tool_json_u64(&j, "requests_failed", b->snap_requests_failed);
    tool_json_u64(&j, "snapshots_applied", late.snapshots_applied);
    tool_json_u64(&j, "snapshots_stale", late.snapshots_stale);
    tool_json_u64(&j, "parts_rejected", rx->snap_parts_rejected);
    tool_json_u64(&j, "held_packets", late.held_packets);
    tool_json_u64(&j, "held_overflows", late.overflows);
    tool_json_u64(&j, "imported_orders", late.imported_orders);
    tool_json_u64(&j, "import_refused", late.import_refused);
    tool_json_u64(&j, "covered_messages", covered);
    tool_json_u64(&j, "messages_foreign", rx->snap_foreign);
    tool_json_u64(&j, "messages_early", rx->snap_early);
    tool_json_u64(&j, "snapshots_implausible", late.snapshots_implausible);
    tool_json_object_end(&j);
    if (o->from_archive) {
        uint64_t by_state[4] = {0};
        for (uint32_t i = 0; i < o->channels; i++)
            by_state[b->channels[i].history_state]++;
        tool_json_object_begin(&j, "history");
        tool_json_u64(&j, "channels_live", by_state[HISTORY_LIVE]);
        tool_json_u64(&j, "channels_merging", by_state[HISTORY_MERGING]);
        tool_json_u64(&j, "timeouts", by_state[HISTORY_TIMED_OUT]);
        tool_json_u64(&j, "refused", by_state[HISTORY_REFUSED]);
        tool_json_object_end(&j);
    }
    tool_json_object_begin(&j, "directory");
    tool_json_bool(&j, "received", rx->have_directory);
    tool_json_u64(&j, "symbols", rx->dir_symbols);
    tool_json_u64(&j, "refused", rx->dir_rejected);
    uint64_t with_state = 0, named = 0;
    for (uint32_t locate = 1; locate <= MD_SNAP_LOCATE_MAX; locate++) {
        if (md_book_symbol_digest(&rx->book, (uint16_t)locate) == 0)
            continue;
        with_state++;
        named += md_book_stock(&rx->book, (uint16_t)locate) != NULL;
    }
    tool_json_u64(&j, "symbols_with_state", with_state);
    tool_json_u64(&j, "symbols_named", named);
    tool_json_object_end(&j);
    if (o->oneway) {
        tool_json_object_begin(&j, "oneway");
        tool_json_str(&j, "method", "one-way from the intended send time (shared clock)");
        md_json_latency(&j, &rx->oneway);
        tool_json_object_end(&j);
    }
    tool_json_object_end(&j);
    tool_json_finish(&j);
}

int main(int argc, char **argv)
{
    tool_cli_init(argv);
    struct options opt;
    struct book b = {0};
    int status = TOOL_EXIT_OK;
    bool rx_ok = false, timed_out = false;
    if (!parse_args(argc, argv, &opt)) {
        tool_usage_hint(prog);
        return TOOL_EXIT_USAGE;
    }
    b.opt = &opt;
    struct md_book_rx_config rc = {.channels = (uint32_t)opt.channels,
                                   .reflect_every = opt.reflect_every,
                                   .oneway = opt.oneway,
                                   .warmup_ms = opt.warmup_ms};
    struct md_book_rx_hooks hooks = {.user = &b, .request = request_hook, .echo = echo_hook};
    if (md_book_rx_init(&b.rx, &rc, &hooks) < 0) {
        tool_error(prog, "out of memory");
        return TOOL_EXIT_RUNTIME;
    }
    rx_ok = true;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    if (tool_ctx_open(prog, &opt.ctx, 0, &b.ctx) < 0) {
        status = TOOL_EXIT_RUNTIME;
        goto out;
    }
    if (!open_endpoints(&b)) {
        status = TOOL_EXIT_RUNTIME;
        goto out;
    }
    uint64_t deadline = rdps__clock_monotonic_ns() + opt.timeout_s * 1000000000ull;
    while (!stop_requested && !md_book_rx_done(&b.rx)) {
        if (rdps_ctx_wait(b.ctx, 100) < 0) {
            status = TOOL_EXIT_RUNTIME;
            break;
        }
        poll_history(&b);
        md_book_rx_retry(&b.rx, rdps__clock_monotonic_ns());
        if (rdps__clock_monotonic_ns() >= deadline) {
            timed_out = true;
            break;
        }
    }
    uint64_t missing = 0;
    for (uint32_t i = 0; i < opt.channels; i++)
        missing += b.rx.channels[i].missing;
    if (status == TOOL_EXIT_OK) {
        if (timed_out || !md_book_rx_done(&b.rx)) {
            tool_error(prog,
                       "%u of %" PRIu64 " channels ended (%u still waiting for a snapshot) "
                       "before the %s",
                       b.rx.ended, opt.channels, b.rx.recovering,
                       timed_out ? "timeout" : "interrupt");
            status = TOOL_EXIT_TIMEOUT;
        } else if (missing > 0 || b.rx.apply_errors > 0 || b.rx.bad_messages > 0 ||
                   b.loss_events > 0) {
            tool_error(prog,
                       "%" PRIu64 " messages missing, %" PRIu64 " refused by the book, %" PRIu64
                       " undecodable, %" PRIu64 " loss events",
                       missing, b.rx.apply_errors, b.rx.bad_messages, b.loss_events);
            status = TOOL_EXIT_FAILED;
        }
    }
    if (opt.hgrm != NULL) {
        FILE *out = fopen(opt.hgrm, "w");
        if (out == NULL || lat_hist_write_hgrm(&b.rx.oneway, out, 5, 1000.0) < 0)
            tool_error(prog, "cannot write %s", opt.hgrm);
        if (out != NULL)
            fclose(out);
    }
    if (opt.symbol_digests != NULL && md_write_symbol_digests(opt.symbol_digests, &b.rx.book) < 0)
        tool_error(prog, "cannot write %s", opt.symbol_digests);
    if (opt.json)
        print_json(&b, timed_out);
    else
        printf("md-book %" PRIu64 ": %" PRIu64 " messages, digest %016" PRIx64 "\n", opt.book_id,
               b.rx.messages, md_book_digest(&b.rx.book));
out:
    for (uint32_t i = 0; i < opt.channels; i++) {
        rdps_history_sub_destroy(b.channels[i].history);
        rdps_sub_destroy(b.channels[i].sub);
    }
    rdps_sub_destroy(b.snap_sub);
    rdps_pub_destroy(b.snapreq_pub);
    rdps_pub_destroy(b.echo_pub);
    rdps_ctx_destroy(b.ctx);
    if (rx_ok)
        md_book_rx_fini(&b.rx);
    return status;
}
