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

#include "ctx_options.h"
#include "itch.h"
#include "lat_hist.h"
#include "md_book.h"
#include "md_directory.h"
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

#define MAX_CHANNELS 64

struct options {
    struct tool_ctx_options ctx;
    const char *feed, *hgrm, *symbol_digests;
    uint64_t channels, book_id, reflect_every, timeout_s, warmup_ms;
    bool unreliable, oneway, json;
};

struct channel {
    uint32_t index;
    struct book *book;
    rdps_sub_t *sub;
    struct md_rec rec; /* late join: held packets until a snapshot */
    uint64_t next_seq; /* the MoldUDP64 sequence expected next (0: nothing yet) */
    uint64_t snap_seq; /* the snapshot's last message (late join; 0: none) */
    uint64_t end_seq;  /* end of session seen while recovering: the sequence it named */
    uint64_t last_request_ns;
    uint64_t packets, missing, stale, covered;
    bool ended;
};

struct book {
    const struct options *opt;
    rdps_ctx_t *ctx;
    rdps_pub_t *echo_pub;
    rdps_pub_t *snapreq_pub; /* late join: snapshot requests to the feed */
    rdps_sub_t *snap_sub;    /* ... and the snapshots */
    struct md_snap_asm snap_asm;
    bool snap_asm_ok;
    unsigned recovering; /* channels waiting for a snapshot */
    bool replaying;      /* applying held packets: no latency samples (they waited for it) */
    uint64_t snap_requests, snap_requests_failed, snap_parts_rejected, snap_parts_unneeded;
    /* The feed's symbol directory: names for a late joiner, channel count checked. */
    bool have_directory;
    uint64_t dir_requested_ns, dir_symbols, dir_rejected;
    struct channel channels[MAX_CHANNELS];
    struct md_book book;
    struct md_unpacker unpacker;
    struct lat_hist oneway;
    uint64_t first_intended_ns; /* the flow's start as seen here (warm-up reference) */
    uint64_t messages, bad_messages, apply_errors, packets_rejected;
    uint64_t echoes, echoes_skipped, loss_events;
    unsigned ended;
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: md-book [-b IP | -d DEV] [--feed NAME] [--channels N] [--book-id N]\n"
            "               [--reflect N] [--oneway] [--hgrm FILE] [--unreliable]\n"
            "               [--timeout S] [--warmup-ms MS] [--symbol-digests FILE] [--json]\n"
            "Subscribes to md-feed's channels (md.NAME.ch0..chN-1), applies every ITCH\n"
            "message to a full order book per symbol (orders by reference, price levels, best\n"
            "bid and offer, VWAP) and, when every channel has ended, prints the book digest:\n"
            "it must equal md-feed's. Reliable by default: every message in order or an\n"
            "explicit loss. A book started after the feed joins each channel at the live\n"
            "position and catches up from a snapshot of the channel's books (asked of the feed\n"
            "on md.NAME.snapreq, sent on md.NAME.snap) plus the messages after it.\n"
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
            "  --json           one-line JSON summary at exit\n");
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
        O_JSON
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
        {"help", no_argument, NULL, 'h'},
        TOOL_CTX_LONG_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    *o = (struct options){
        .feed = "itch", .channels = 8, .book_id = 1, .timeout_s = 600, .warmup_ms = 1000};
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
    if (o->hgrm != NULL && !o->oneway) {
        tool_error(prog, "--hgrm writes the one-way histogram: it needs --oneway");
        return false;
    }
    return tool_ctx_options_check(prog, &o->ctx);
}

static void reflect(struct book *b, const struct md_packet_view *v)
{
    struct md_echo e = {
        .book_id = (uint32_t)b->opt->book_id, .seq = v->seq, .intended_ns = v->intended_ns};
    uint8_t buf[MD_ECHO_LEN];
    md_echo_encode(&e, buf);
    if (rdps_pub_send(b->echo_pub, buf, sizeof(buf)) == 0)
        b->echoes++;
    else
        b->echoes_skipped++; /* back-pressure: an echo is a sample, never worth waiting for */
}

/* Applies a packet's messages from ch->next_seq on (a packet may overlap what a snapshot
 * covered, or repeat what the unreliable path delivered before), counting what is missing. */
static void apply_packet(struct book *b, struct channel *ch, struct md_packet_view *v)
{
    if (ch->next_seq != 0 && v->seq + v->count <= ch->next_seq) {
        if (v->seq + v->count <= ch->snap_seq + 1)
            ch->covered += v->count; /* held or in flight while the snapshot was taken */
        else
            ch->stale++; /* already applied: a duplicate the unreliable path let through */
        return;
    }
    if (ch->next_seq != 0 && v->seq > ch->next_seq)
        ch->missing += v->seq - ch->next_seq;
    uint64_t from = ch->next_seq;
    ch->packets++;
    ch->next_seq = v->seq + v->count;
    if (b->first_intended_ns == 0)
        b->first_intended_ns = v->intended_ns;
    uint64_t now = rdps__clock_realtime_ns();
    uint64_t warm = b->first_intended_ns + b->opt->warmup_ms * 1000000ull;
    struct md_msg m;
    while (md_packet_next(v, &m)) {
        struct itch_msg msg;
        if (m.seq < from) {
            ch->covered++;
            continue;
        }
        b->messages++;
        if (itch_decode(m.data, m.len, &msg) < 0) {
            b->bad_messages++;
            continue;
        }
        if (md_book_apply(&b->book, &msg) < 0)
            b->apply_errors++;
        if (b->opt->oneway && !b->replaying && m.intended_ns >= warm && now >= m.intended_ns)
            lat_hist_record(&b->oneway, now - m.intended_ns);
    }
    if (b->opt->reflect_every != 0 && !b->replaying && ch->index == 0 &&
        ch->packets % b->opt->reflect_every == 0)
        reflect(b, v);
}

static void end_channel(struct book *b, struct channel *ch, uint64_t end_seq)
{
    if (ch->next_seq != 0 && end_seq > ch->next_seq)
        ch->missing += end_seq - ch->next_seq;
    ch->next_seq = end_seq;
    if (!ch->ended) {
        ch->ended = true;
        b->ended++;
    }
}

/* Asks the feed for a channel's snapshot or (MD_SNAPREQ_DIRECTORY) the symbol directory;
 * unreliable: a lost request is asked again. */
static void send_request(struct book *b, uint32_t what)
{
    struct md_snapreq r = {.book_id = (uint32_t)b->opt->book_id, .channel = what};
    uint8_t buf[MD_SNAPREQ_LEN];
    md_snapreq_encode(&r, buf);
    if (rdps_pub_send(b->snapreq_pub, buf, sizeof(buf)) == 0)
        b->snap_requests++;
    else
        b->snap_requests_failed++;
}

static void request_snapshot(struct book *b, struct channel *ch)
{
    ch->last_request_ns = rdps__clock_monotonic_ns();
    send_request(b, ch->index);
}

/* The directory names every symbol (a late joiner missed the Stock Directory messages) and
 * must describe the channels this book subscribed to. dir_symbols counts the symbols it named
 * first. */
static void apply_directory(struct book *b, const uint8_t *data, size_t len)
{
    struct md_dir_channel *channels = calloc(MAX_CHANNELS, sizeof(*channels));
    struct md_dir_symbol *symbols = calloc(MD_SNAP_LOCATE_MAX, sizeof(*symbols));
    struct md_dir d = {.channels = channels, .symbols = symbols};
    const char *why = NULL;
    if (channels == NULL || symbols == NULL ||
        md_dir_decode(data, len, &d, MAX_CHANNELS, MD_SNAP_LOCATE_MAX, &why) < 0) {
        b->dir_rejected++;
        tool_error(prog, "symbol directory refused: %s", why ? why : "out of memory");
    } else if (d.channel_count != b->opt->channels) {
        b->dir_rejected++;
        tool_error(prog, "the feed has %u channels, --channels says %" PRIu64, d.channel_count,
                   b->opt->channels);
    } else {
        /* One slice of the directory (the feed sends it in slices): names add up. */
        b->have_directory = true;
        for (uint32_t i = 0; i < d.n_symbols; i++) {
            uint16_t locate = (uint16_t)d.symbols[i].locate;
            struct itch_msg m = {.type = ITCH_STOCK_DIRECTORY, .stock_locate = locate};
            memset(&m.u.R, ' ', sizeof(m.u.R));
            memcpy(m.u.R.stock, d.symbols[i].name, strlen(d.symbols[i].name));
            bool named = md_book_stock(&b->book, locate) != NULL;
            if (md_book_apply(&b->book, &m) == 0 && !named)
                b->dir_symbols++;
        }
    }
    free(channels);
    free(symbols);
}

static void on_packet(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct channel *ch = user;
    struct book *b = ch->book;
    struct md_packet_view v;
    (void)info;
    if (md_unpack(&b->unpacker, data, len, &v) < 0) {
        b->packets_rejected++;
        return;
    }
    if (ch->rec.state != MD_REC_LIVE) {
        if (md_rec_on_packet(&ch->rec, &v, data, len) == MD_REC_NEED_SNAPSHOT) {
            b->recovering++;
            request_snapshot(b, ch);
        }
        if (ch->rec.state != MD_REC_LIVE) {
            if (v.kind == MD_PACKET_END_OF_SESSION)
                ch->end_seq = v.seq; /* checked once the snapshot is in */
            return;
        }
    }
    if (v.kind == MD_PACKET_HEARTBEAT)
        return;
    if (v.kind == MD_PACKET_END_OF_SESSION) {
        end_channel(b, ch, v.seq);
        return;
    }
    apply_packet(b, ch, &v);
}

/* A snapshot that fits a recovering channel: import it, then the packets held meanwhile. */
static void replay_held(struct book *b, struct channel *ch)
{
    const uint8_t *data;
    size_t len;
    ch->snap_seq = md_rec_resume_seq(&ch->rec) - 1;
    ch->next_seq = ch->snap_seq + 1;
    b->recovering--;
    b->replaying = true;
    while (md_rec_next_held(&ch->rec, &data, &len)) {
        struct md_packet_view v;
        if (md_unpack(&b->unpacker, data, len, &v) == 0)
            apply_packet(b, ch, &v);
    }
    b->replaying = false;
    if (ch->end_seq != 0)
        end_channel(b, ch, ch->end_seq);
}

static void on_snap_message(void *user, const void *msg, size_t msg_len, const rdps_msg_info *info)
{
    struct book *b = user;
    const uint8_t *tagged = msg;
    (void)info;
    if (msg_len < 1 || (tagged[0] != MD_SNAPMSG_PART && tagged[0] != MD_SNAPMSG_DIRECTORY)) {
        b->snap_parts_rejected++;
        return;
    }
    const uint8_t *data = tagged + 1;
    size_t len = msg_len - 1;
    if (tagged[0] == MD_SNAPMSG_DIRECTORY) {
        apply_directory(b, data, len);
        return;
    }
    if (b->recovering == 0) {
        b->snap_parts_unneeded++; /* another book's recovery */
        return;
    }
    if (!b->snap_asm_ok) {
        struct md_snap_asm_config sc = {.max_orders = 1u << 20,
                                        .max_symbols = MD_SNAP_LOCATE_MAX,
                                        .max_parts = 4096,
                                        .max_part_bytes = MD_SNAP_PART_BYTES};
        if (md_snap_asm_init(&b->snap_asm, &sc) < 0) {
            b->snap_parts_rejected++;
            return;
        }
        b->snap_asm_ok = true;
    }
    int rc = md_snap_asm_add(&b->snap_asm, data, len);
    if (rc < 0) {
        b->snap_parts_rejected++;
        return;
    }
    const struct md_snap *s = md_snap_asm_result(&b->snap_asm);
    if (rc != MD_SNAP_COMPLETE || s == NULL || s->channel >= b->opt->channels)
        return;
    struct channel *ch = &b->channels[s->channel];
    switch (md_rec_on_snapshot(&ch->rec, s, &b->book)) {
    case MD_REC_REPLAY:
        replay_held(b, ch);
        break;
    case MD_REC_NEED_SNAPSHOT:
        request_snapshot(b, ch); /* taken before this book's first packet: a newer one */
        break;
    default:
        break;
    }
}

/* Asks (again) for the directory and the snapshots that did not come. */
static void retry_requests(struct book *b)
{
    uint64_t now = rdps__clock_monotonic_ns();
    if (!b->have_directory &&
        (b->dir_requested_ns == 0 || now - b->dir_requested_ns >= MD_SNAP_RETRY_NS)) {
        b->dir_requested_ns = now;
        send_request(b, MD_SNAPREQ_DIRECTORY);
    }
    if (b->recovering == 0)
        return;
    for (uint32_t i = 0; i < b->opt->channels; i++) {
        struct channel *ch = &b->channels[i];
        if (ch->rec.state == MD_REC_RECOVERING && now - ch->last_request_ns >= MD_SNAP_RETRY_NS)
            request_snapshot(b, ch);
    }
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
        rdps_sub_opts so = {
            .reliable = !o->unreliable, .on_event = on_event, .group = o->ctx.group};
        int rc = rdps_sub_create(b->ctx, topic, on_packet, ch, &so, &ch->sub);
        if (rc < 0) {
            tool_error(prog, "cannot subscribe to '%s': %s (%s)", topic, rdps_strerror(rc),
                       rdps_last_error_message());
            return false;
        }
        md_rec_init(&ch->rec, &(struct md_rec_config){.channel = i});
    }
    /* Late join: snapshots always come reliably, whatever the channels use. */
    md_snap_topic(topic, sizeof(topic), o->feed);
    rdps_sub_opts snap_opts = {.reliable = true, .group = o->ctx.group};
    int rc = rdps_sub_create(b->ctx, topic, on_snap_message, b, &snap_opts, &b->snap_sub);
    if (rc < 0) {
        tool_error(prog, "cannot subscribe to '%s': %s (%s)", topic, rdps_strerror(rc),
                   rdps_last_error_message());
        return false;
    }
    md_snapreq_topic(topic, sizeof(topic), o->feed);
    rc = rdps_pub_create(b->ctx, topic, NULL, &b->snapreq_pub);
    if (rc < 0) {
        tool_error(prog, "cannot publish '%s': %s (%s)", topic, rdps_strerror(rc),
                   rdps_last_error_message());
        return false;
    }
    if (o->reflect_every != 0) {
        md_echo_topic(topic, sizeof(topic), o->feed);
        rc = rdps_pub_create(b->ctx, topic, NULL, &b->echo_pub);
        if (rc < 0) {
            tool_error(prog, "cannot publish '%s': %s (%s)", topic, rdps_strerror(rc),
                       rdps_last_error_message());
            return false;
        }
    }
    return true;
}

static void print_json(struct book *b, bool timed_out)
{
    const struct options *o = b->opt;
    struct tool_json j;
    rdps_counters c;
    char digest[17];
    uint64_t missing = 0, stale = 0, packets = 0, covered = 0;
    struct md_rec_counters late = {0};
    unsigned late_channels = 0;
    for (uint32_t i = 0; i < o->channels; i++) {
        const struct channel *ch = &b->channels[i];
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
    }
    rdps_ctx_counters(b->ctx, &c);
    snprintf(digest, sizeof(digest), "%016" PRIx64, md_book_digest(&b->book));
    tool_json_init(&j, stdout);
    tool_json_object_begin(&j, NULL);
    tool_json_str(&j, "tool", "md-book");
    tool_json_str(&j, "feed", o->feed);
    tool_json_u64(&j, "book", o->book_id);
    tool_json_bool(&j, "reliable", !o->unreliable);
    tool_json_bool(&j, "timed_out", timed_out);
    tool_json_u64(&j, "channels_ended", b->ended);
    tool_json_u64(&j, "messages", b->messages);
    tool_json_u64(&j, "packets", packets);
    tool_json_u64(&j, "missing", missing);
    tool_json_u64(&j, "stale_packets", stale);
    tool_json_u64(&j, "bad_messages", b->bad_messages);
    tool_json_u64(&j, "apply_errors", b->apply_errors);
    tool_json_u64(&j, "packets_rejected", b->packets_rejected);
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
    tool_json_u64(&j, "still_recovering", b->recovering);
    tool_json_u64(&j, "requests", b->snap_requests);
    tool_json_u64(&j, "requests_failed", b->snap_requests_failed);
    tool_json_u64(&j, "snapshots_applied", late.snapshots_applied);
    tool_json_u64(&j, "snapshots_stale", late.snapshots_stale);
    tool_json_u64(&j, "parts_rejected", b->snap_parts_rejected);
    tool_json_u64(&j, "held_packets", late.held_packets);
    tool_json_u64(&j, "held_overflows", late.overflows);
    tool_json_u64(&j, "imported_orders", late.imported_orders);
    tool_json_u64(&j, "import_refused", late.import_refused);
    tool_json_u64(&j, "covered_messages", covered);
    tool_json_object_end(&j);
    tool_json_object_begin(&j, "directory");
    tool_json_bool(&j, "received", b->have_directory);
    tool_json_u64(&j, "symbols", b->dir_symbols);
    tool_json_u64(&j, "refused", b->dir_rejected);
    uint64_t with_state = 0, named = 0;
    for (uint32_t locate = 1; locate <= MD_SNAP_LOCATE_MAX; locate++) {
        if (md_book_symbol_digest(&b->book, (uint16_t)locate) == 0)
            continue;
        with_state++;
        named += md_book_stock(&b->book, (uint16_t)locate) != NULL;
    }
    tool_json_u64(&j, "symbols_with_state", with_state);
    tool_json_u64(&j, "symbols_named", named);
    tool_json_object_end(&j);
    if (o->oneway) {
        tool_json_object_begin(&j, "oneway");
        tool_json_str(&j, "method", "one-way from the intended send time (shared clock)");
        md_json_latency(&j, &b->oneway);
        tool_json_object_end(&j);
    }
    tool_json_object_end(&j);
    tool_json_finish(&j);
}

int main(int argc, char **argv)
{
    struct options opt;
    struct book b = {0};
    int status = TOOL_EXIT_OK;
    bool book_ok = false, hist_ok = false, timed_out = false;
    if (!parse_args(argc, argv, &opt)) {
        tool_usage_hint(prog);
        return TOOL_EXIT_USAGE;
    }
    b.opt = &opt;
    struct md_book_config bc;
    md_book_config_init(&bc);
    if (md_book_init(&b.book, &bc) < 0 || lat_hist_init(&b.oneway, 3) < 0) {
        tool_error(prog, "out of memory");
        return TOOL_EXIT_RUNTIME;
    }
    book_ok = hist_ok = true;
    struct md_unpacker_config uc = {.max_msg_len = ITCH_MAX_LEN, .intended_times = true};
    md_unpacker_init(&b.unpacker, &uc);
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
    while (!stop_requested && (b.ended < opt.channels || b.recovering > 0)) {
        if (rdps_ctx_wait(b.ctx, 100) < 0) {
            status = TOOL_EXIT_RUNTIME;
            break;
        }
        retry_requests(&b);
        if (rdps__clock_monotonic_ns() >= deadline) {
            timed_out = true;
            break;
        }
    }
    uint64_t missing = 0;
    for (uint32_t i = 0; i < opt.channels; i++)
        missing += b.channels[i].missing;
    if (status == TOOL_EXIT_OK) {
        if (timed_out || b.ended < opt.channels || b.recovering > 0) {
            tool_error(prog,
                       "%u of %" PRIu64 " channels ended (%u still waiting for a snapshot) "
                       "before the %s",
                       b.ended, opt.channels, b.recovering, timed_out ? "timeout" : "interrupt");
            status = TOOL_EXIT_TIMEOUT;
        } else if (missing > 0 || b.apply_errors > 0 || b.bad_messages > 0 || b.loss_events > 0) {
            tool_error(prog,
                       "%" PRIu64 " messages missing, %" PRIu64 " refused by the book, %" PRIu64
                       " undecodable, %" PRIu64 " loss events",
                       missing, b.apply_errors, b.bad_messages, b.loss_events);
            status = TOOL_EXIT_FAILED;
        }
    }
    if (opt.hgrm != NULL) {
        FILE *out = fopen(opt.hgrm, "w");
        if (out == NULL || lat_hist_write_hgrm(&b.oneway, out, 5, 1000.0) < 0)
            tool_error(prog, "cannot write %s", opt.hgrm);
        if (out != NULL)
            fclose(out);
    }
    if (opt.symbol_digests != NULL && md_write_symbol_digests(opt.symbol_digests, &b.book) < 0)
        tool_error(prog, "cannot write %s", opt.symbol_digests);
    if (opt.json)
        print_json(&b, timed_out);
    else
        printf("md-book %" PRIu64 ": %" PRIu64 " messages, digest %016" PRIx64 "\n", opt.book_id,
               b.messages, md_book_digest(&b.book));
out:
    for (uint32_t i = 0; i < opt.channels; i++) {
        rdps_sub_destroy(b.channels[i].sub);
        md_rec_fini(&b.channels[i].rec);
    }
    rdps_sub_destroy(b.snap_sub);
    rdps_pub_destroy(b.snapreq_pub);
    rdps_pub_destroy(b.echo_pub);
    rdps_ctx_destroy(b.ctx);
    if (b.snap_asm_ok)
        md_snap_asm_fini(&b.snap_asm);
    if (book_ok)
        md_book_fini(&b.book);
    if (hist_ok)
        lat_hist_fini(&b.oneway);
    return status;
}
