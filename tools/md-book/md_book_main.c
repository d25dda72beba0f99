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
#include "md_packet.h"
#include "md_topics.h"
#include "rdps_clock.h"
#include "tool_cli.h"
#include "tool_json.h"

static const char *prog = "md-book";
static volatile sig_atomic_t stop_requested;

#define MAX_CHANNELS 64

struct options {
    struct tool_ctx_options ctx;
    const char *feed, *hgrm;
    uint64_t channels, book_id, reflect_every, timeout_s, warmup_ms;
    bool unreliable, oneway, json;
};

struct channel {
    uint32_t index;
    struct book *book;
    rdps_sub_t *sub;
    uint64_t next_seq; /* the MoldUDP64 sequence expected next (0: nothing yet) */
    uint64_t packets, missing, stale;
    bool ended;
};

struct book {
    const struct options *opt;
    rdps_ctx_t *ctx;
    rdps_pub_t *echo_pub;
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
            "               [--timeout S] [--warmup-ms MS] [--json]\n"
            "Subscribes to md-feed's channels (md.NAME.ch0..chN-1), applies every ITCH\n"
            "message to a full order book per symbol (orders by reference, price levels, best\n"
            "bid and offer, VWAP) and, when every channel has ended, prints the book digest:\n"
            "it must equal md-feed's. Reliable by default: every message in order or an\n"
            "explicit loss.\n"
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
    if (v.kind == MD_PACKET_HEARTBEAT)
        return;
    if (ch->next_seq != 0 && v.seq < ch->next_seq) {
        ch->stale++; /* already applied: a duplicate the unreliable path let through */
        return;
    }
    if (ch->next_seq != 0 && v.seq > ch->next_seq)
        ch->missing += v.seq - ch->next_seq;
    if (v.kind == MD_PACKET_END_OF_SESSION) {
        if (!ch->ended) {
            ch->ended = true;
            b->ended++;
        }
        ch->next_seq = v.seq;
        return;
    }
    ch->packets++;
    ch->next_seq = v.seq + v.count;
    if (b->first_intended_ns == 0)
        b->first_intended_ns = v.intended_ns;
    uint64_t now = rdps__clock_realtime_ns();
    uint64_t warm = b->first_intended_ns + b->opt->warmup_ms * 1000000ull;
    struct md_msg m;
    while (md_packet_next(&v, &m)) {
        struct itch_msg msg;
        b->messages++;
        if (itch_decode(m.data, m.len, &msg) < 0) {
            b->bad_messages++;
            continue;
        }
        if (md_book_apply(&b->book, &msg) < 0)
            b->apply_errors++;
        if (b->opt->oneway && m.intended_ns >= warm && now >= m.intended_ns)
            lat_hist_record(&b->oneway, now - m.intended_ns);
    }
    if (b->opt->reflect_every != 0 && ch->index == 0 && ch->packets % b->opt->reflect_every == 0)
        reflect(b, &v);
}

static void on_event(void *user, const rdps_event *ev)
{
    struct channel *ch = user;
    if (ev->type != RDPS_EVENT_LOSS)
        return;
    ch->book->loss_events++;
    fprintf(stderr, "%s: channel %u: %u sequences lost for good (reason %d)\n", prog, ch->index,
            ev->count, ev->reason);
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
    }
    if (o->reflect_every != 0) {
        md_echo_topic(topic, sizeof(topic), o->feed);
        int rc = rdps_pub_create(b->ctx, topic, NULL, &b->echo_pub);
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
    uint64_t missing = 0, stale = 0, packets = 0;
    for (uint32_t i = 0; i < o->channels; i++) {
        missing += b->channels[i].missing;
        stale += b->channels[i].stale;
        packets += b->channels[i].packets;
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
    tool_json_u64(&j, "echoes", b->echoes);
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
    while (!stop_requested && b.ended < opt.channels) {
        if (rdps_ctx_wait(b.ctx, 100) < 0) {
            status = TOOL_EXIT_RUNTIME;
            break;
        }
        if (rdps__clock_monotonic_ns() >= deadline) {
            timed_out = true;
            break;
        }
    }
    uint64_t missing = 0;
    for (uint32_t i = 0; i < opt.channels; i++)
        missing += b.channels[i].missing;
    if (status == TOOL_EXIT_OK) {
        if (timed_out || b.ended < opt.channels) {
            tool_error(prog, "%u of %" PRIu64 " channels ended before the %s", b.ended,
                       opt.channels, timed_out ? "timeout" : "interrupt");
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
    if (opt.json)
        print_json(&b, timed_out);
    else
        printf("md-book %" PRIu64 ": %" PRIu64 " messages, digest %016" PRIx64 "\n", opt.book_id,
               b.messages, md_book_digest(&b.book));
out:
    for (uint32_t i = 0; i < opt.channels; i++)
        rdps_sub_destroy(b.channels[i].sub);
    rdps_pub_destroy(b.echo_pub);
    rdps_ctx_destroy(b.ctx);
    if (book_ok)
        md_book_fini(&b.book);
    if (hist_ok)
        lat_hist_fini(&b.oneway);
    return status;
}
