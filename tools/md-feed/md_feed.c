/* SPDX-License-Identifier: BSD-2-Clause */
/* md_feed.c - md-feed: a synthetic ITCH 5.0 feed handler publishing on rdps channels, open loop,
 * with the reference book digest and reflector latency. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <rdps/rdps.h>

#include "ctx_options.h"
#include "itch.h"
#include "lat_hist.h"
#include "md_directory.h"
#include "md_gen.h"
#include "md_packet.h"
#include "md_recovery.h"
#include "md_snap_server.h"
#include "md_snapshot.h"
#include "md_topics.h"
#include "rdps_clock.h"
#include "tool_cli.h"
#include "tool_json.h"

static const char *prog = "md-feed";
static volatile sig_atomic_t stop_requested;

#define MAX_CHANNELS 64
#define MAX_BOOKS    16
#define DAY_NS       86400000000000ull

enum profile { PROFILE_STEADY, PROFILE_OPEN, PROFILE_REPLAY };

struct options {
    struct tool_ctx_options ctx;
    const char *feed, *hgrm_prefix, *timeseries, *replay, *write_itch, *symbol_digests;
    const char *breakdown_prefix;
    uint64_t duration_s, rate, symbols, channels, seed, books, max_delay_us, warmup_ms;
    uint64_t wait_timeout_s, drain_timeout_s, snapshot_rate;
    double zipf;
    enum profile profile;
    bool unreliable, json;
};

/*
 * The reflector's round trip in stages, per echoed packet of channel 0: the feed's own on its
 * clock (how late its loop took up the first message after its intended time; waiting in the
 * packer; handing the packet to rdps and its post), the book's from the durations its echo carries
 * (applying the packet; handing the echo to rdps), and the two legs across the wire (rdps, the
 * devices, the guests' network, and each side's wait to poll) as halves of what is left. They add
 * up to the round trip from the intended time by construction; a sample whose book durations exceed
 * what the feed saw between its post and the echo's arrival is counted as inconsistent, not
 * recorded.
 */
enum stage { ST_WAKE, ST_PACK, ST_SEND, ST_WIRE_OUT, ST_APPLY, ST_ECHO, ST_WIRE_BACK, ST_COUNT };
static const char *const stage_names[ST_COUNT] = {"wake",  "pack", "send",     "wire_out",
                                                  "apply", "echo", "wire_back"};

/* Channel 0's packets as sent, by sequence, until their echo may come back. */
#define SENT_RING 4096
struct sent_packet {
    uint64_t seq, intended_ns, added_ns, packed_ns, posted_ns;
};

struct book_rtt {
    uint32_t id;
    struct lat_hist hist;
    struct lat_hist stage[ST_COUNT];
    uint64_t staged, inconsistent, unmatched;
    FILE *samples; /* --breakdown: one line per echoed packet */
};

struct feed {
    const struct options *opt;
    rdps_ctx_t *ctx;
    rdps_pub_t *pubs[MAX_CHANNELS];
    rdps_sub_t *echo_sub;
    /* Late join: requests in, snapshots out (reliable). */
    rdps_sub_t *snapreq_sub;
    rdps_pub_t *snap_pub;
    struct md_snap_server snap;
    bool snap_ok;
    struct md_gen gen;
    struct md_packer *packers;
    uint64_t start_real_ns, warmup_end_real_ns;
    uint64_t messages, datagrams, bytes, eagain, stalled_sends;
    struct book_rtt books[MAX_BOOKS];
    unsigned nbooks;
    struct sent_packet sent[SENT_RING];
    int wait_ep, wait_timer; /* run_flow's sleep: the ctx's fd and a timer for the schedule */
    uint64_t echoes, echoes_dropped;
    /* --profile replay: the file, and the book its messages build (the reference digest) */
    FILE *replay;
    FILE *itch_out; /* --write-itch */
    struct md_book replay_book;
    bool replay_book_ok;
    uint64_t replay_skipped; /* messages of types the codec does not carry */
    /* --timeseries: one row per second of flow */
    FILE *series;
    struct lat_hist second_hist; /* reflector RTT/2 samples of the current second, all books */
    uint64_t second_start_ns, second_messages, second_datagrams, second_index;
};

static void usage(FILE *out)
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

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static bool parse_args(int argc, char **argv, struct options *o)
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
static double rate_at(const struct options *o, uint64_t t_ns)
{
    double rate = (double)o->rate;
    if (o->profile != PROFILE_OPEN)
        return rate;
    double frac = (double)t_ns / ((double)o->duration_s * 1e9);
    if (frac < 0.2)
        return rate * (0.1 + 0.9 * frac / 0.2);
    if (frac < 0.25)
        return rate * 20.0;
    return rate;
}

static struct book_rtt *book_slot(struct feed *f, uint32_t id)
{
    for (unsigned i = 0; i < f->nbooks; i++)
        if (f->books[i].id == id)
            return &f->books[i];
    if (f->nbooks == MAX_BOOKS)
        return NULL;
    struct book_rtt *b = &f->books[f->nbooks];
    if (lat_hist_init(&b->hist, 3) < 0)
        return NULL;
    for (int s = 0; s < ST_COUNT; s++) {
        if (lat_hist_init(&b->stage[s], 2) < 0) {
            while (--s >= 0)
                lat_hist_fini(&b->stage[s]);
            lat_hist_fini(&b->hist);
            return NULL;
        }
    }
    b->id = id;
    if (f->opt->breakdown_prefix != NULL) {
        char path[4096];
        snprintf(path, sizeof(path), "%s.book%u.dat", f->opt->breakdown_prefix, id);
        if ((b->samples = fopen(path, "w")) == NULL)
            tool_error(prog, "cannot write %s", path);
        else
            fprintf(b->samples, "# seq rtt wake pack send wire_out apply echo wire_back (ns)\n");
    }
    f->nbooks++;
    return b;
}

/* One echoed packet's round trip in stages (enum stage), when the feed still has its record. */
static void record_stages(struct book_rtt *b, const struct sent_packet *p, const struct md_echo *e,
                          uint64_t arrival_ns, bool warm)
{
    if (p->seq != e->seq || p->intended_ns != e->intended_ns || p->posted_ns == 0) {
        b->unmatched++;
        return;
    }
    uint64_t book = e->apply_ns + e->echo_ns, away = arrival_ns - p->posted_ns;
    if (p->added_ns < p->intended_ns || p->packed_ns < p->added_ns || p->posted_ns < p->packed_ns ||
        arrival_ns < p->posted_ns || away < book) {
        b->inconsistent++;
        return;
    }
    uint64_t st[ST_COUNT];
    st[ST_WAKE] = p->added_ns - p->intended_ns;
    st[ST_PACK] = p->packed_ns - p->added_ns;
    st[ST_SEND] = p->posted_ns - p->packed_ns;
    st[ST_APPLY] = e->apply_ns;
    st[ST_ECHO] = e->echo_ns;
    st[ST_WIRE_OUT] = (away - book) / 2;
    st[ST_WIRE_BACK] = away - book - st[ST_WIRE_OUT];
    b->staged++;
    if (warm)
        for (int s = 0; s < ST_COUNT; s++)
            lat_hist_record(&b->stage[s], st[s]);
    if (b->samples != NULL)
        fprintf(b->samples,
                "%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
                " %" PRIu64 " %" PRIu64 "\n",
                e->seq, arrival_ns - p->intended_ns, st[ST_WAKE], st[ST_PACK], st[ST_SEND],
                st[ST_WIRE_OUT], st[ST_APPLY], st[ST_ECHO], st[ST_WIRE_BACK]);
}

static void on_echo(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct feed *f = user;
    struct md_echo e;
    (void)info;
    if (md_echo_decode(data, len, &e) < 0) {
        f->echoes_dropped++;
        return;
    }
    uint64_t now = rdps__clock_realtime_ns();
    struct book_rtt *b = book_slot(f, e.book_id);
    if (b == NULL || now < e.intended_ns) {
        f->echoes_dropped++;
        return;
    }
    f->echoes++;
    bool warm = e.intended_ns >= f->warmup_end_real_ns;
    if (warm)
        lat_hist_record(&b->hist, (now - e.intended_ns) / 2);
    record_stages(b, &f->sent[e.seq % SENT_RING], &e, now, warm);
    if (f->series != NULL)
        lat_hist_record(&f->second_hist, (now - e.intended_ns) / 2);
}

/* Sends one datagram on channel ch, polling through back-pressure (the schedule keeps its
 * intended times, so the stall shows in the latency). 0, or -1 when stalled for good. */
static int send_packet(struct feed *f, uint32_t ch, const uint8_t *data, size_t len)
{
    int rc = tool_send(f->ctx, f->pubs[ch], data, len, 0, &stop_requested, &f->eagain);
    if (rc == 0) {
        f->datagrams++;
        f->second_datagrams++;
        f->bytes += len;
        return 0;
    }
    if (rc == TOOL_SEND_STALLED)
        f->stalled_sends++;
    else if (rc != RDPS_ECANCELED)
        tool_error(prog, "send on channel %u failed: %s (%s)", ch, rdps_strerror(rc),
                   rdps_last_error_message());
    return -1;
}

static int flush_channel(struct feed *f, uint32_t ch)
{
    const uint8_t *data;
    size_t len;
    struct md_packer *p = &f->packers[ch];
    uint64_t seq = p->packet_seq, intended = p->base_ns, added = p->first_added_ns;
    if (md_packer_flush(p, &data, &len) == 0)
        return 0;
    if (ch != 0)
        return send_packet(f, ch, data, len);
    /* Channel 0's packets are the ones books echo: keep when each was packed and posted. */
    struct sent_packet *r = &f->sent[seq % SENT_RING];
    *r = (struct sent_packet){.seq = seq,
                              .intended_ns = intended,
                              .added_ns = added,
                              .packed_ns = rdps__clock_realtime_ns()};
    int rc = send_packet(f, ch, data, len);
    if (rc == 0)
        r->posted_ns = rdps__clock_realtime_ns();
    return rc;
}

/* ---- late join: md_snap_server's hooks ---- */

static uint32_t snap_channel_of(void *user, uint16_t locate)
{
    struct feed *f = user;
    return f->replay != NULL ? locate % (uint32_t)f->opt->channels
                             : md_gen_channel_of(&f->gen, locate);
}

static int snap_flush(void *user, uint32_t ch, uint64_t *seq)
{
    struct feed *f = user;
    if (flush_channel(f, ch) < 0)
        return -1;
    *seq = md_packer_next_seq(&f->packers[ch]) - 1;
    return 0;
}

static int snap_send(void *user, const void *msg, size_t len)
{
    struct feed *f = user;
    return rdps_pub_send(f->snap_pub, msg, len);
}

/* The snapshots' scope: the generator's mapping, or for a replayed file every locate by
 * locate % channels. */
static bool setup_snapshots(struct feed *f)
{
    struct md_snap_server_config sc = {
        .channels = (uint32_t)f->opt->channels,
        .feed = f->opt->feed,
        .book = f->replay != NULL ? &f->replay_book : md_gen_book(&f->gen),
        .max_locate = f->replay != NULL ? MD_SNAP_LOCATE_MAX : (uint32_t)f->opt->symbols,
        .budget_bytes_per_s = f->opt->snapshot_rate,
    };
    memcpy(sc.session, f->packers[0].cfg.session, sizeof(sc.session));
    struct md_snap_server_hooks hooks = {
        .user = f, .channel_of = snap_channel_of, .flush = snap_flush, .send = snap_send};
    if (md_snap_server_init(&f->snap, &sc, &hooks) < 0)
        return false;
    f->snap_ok = true;
    return true;
}

static int serve_snapshots(struct feed *f)
{
    return f->snap_ok ? md_snap_server_serve(&f->snap, rdps__clock_monotonic_ns()) : 0;
}

static bool open_endpoints(struct feed *f)
{
    const struct options *o = f->opt;
    char topic[300];
    for (uint32_t ch = 0; ch < o->channels; ch++) {
        md_channel_topic(topic, sizeof(topic), o->feed, ch);
        rdps_pub_opts po = {
            .reliable = !o->unreliable, .group = o->ctx.group, .transport = o->ctx.transport};
        md_snap_server_pub_opts(&f->snap, ch, &po); /* who may ask for its snapshot */
        int rc = rdps_pub_create(f->ctx, topic, &po, &f->pubs[ch]);
        if (rc < 0) {
            tool_error(prog, "cannot publish '%s': %s (%s)", topic, rdps_strerror(rc),
                       rdps_last_error_message());
            return false;
        }
    }
    md_echo_topic(topic, sizeof(topic), o->feed);
    rdps_sub_opts so = {.transport = o->ctx.transport};
    int rc = rdps_sub_create(f->ctx, topic, on_echo, f, &so, &f->echo_sub);
    if (rc < 0) {
        tool_error(prog, "cannot subscribe to '%s': %s (%s)", topic, rdps_strerror(rc),
                   rdps_last_error_message());
        return false;
    }
    md_snapreq_topic(topic, sizeof(topic), o->feed);
    rc = rdps_sub_create(f->ctx, topic, md_snap_server_on_request, &f->snap, &so, &f->snapreq_sub);
    if (rc < 0) {
        tool_error(prog, "cannot subscribe to '%s': %s (%s)", topic, rdps_strerror(rc),
                   rdps_last_error_message());
        return false;
    }
    md_snap_topic(topic, sizeof(topic), o->feed);
    rdps_pub_opts snap_opts = {
        .reliable = true, .group = o->ctx.group, .transport = o->ctx.transport};
    md_snap_server_pub_opts(&f->snap, MD_SNAP_SERVER_SNAP_TOPIC, &snap_opts);
    rc = rdps_pub_create(f->ctx, topic, &snap_opts, &f->snap_pub);
    if (rc < 0) {
        tool_error(prog, "cannot publish '%s': %s (%s)", topic, rdps_strerror(rc),
                   rdps_last_error_message());
        return false;
    }
    return true;
}

/* Every channel ready with at least `books` subscribers. */
static bool wait_for_books(struct feed *f)
{
    uint64_t until = rdps__clock_monotonic_ns() + f->opt->wait_timeout_s * 1000000000ull;
    while (!stop_requested && rdps__clock_monotonic_ns() < until) {
        bool all = rdps_sub_ready(f->echo_sub) == 1;
        for (uint32_t ch = 0; ch < f->opt->channels && all; ch++)
            all = rdps_pub_ready(f->pubs[ch]) == 1 &&
                  (uint64_t)rdps_pub_subscriber_count(f->pubs[ch]) >= f->opt->books;
        if (all)
            return true;
        if (rdps_ctx_wait(f->ctx, 50) < 0)
            return false;
    }
    return false;
}

static bool setup_generator(struct feed *f)
{
    const struct options *o = f->opt;
    struct md_gen_config gc;
    md_gen_config_init(&gc);
    gc.seed = o->seed;
    gc.symbols = (uint32_t)o->symbols;
    gc.channels = (uint32_t)o->channels;
    gc.zipf_exponent = o->zipf;
    if (md_gen_init(&f->gen, &gc) < 0) {
        tool_error(prog, "generator: bad configuration or out of memory");
        return false;
    }
    f->packers = calloc(o->channels, sizeof(*f->packers));
    if (f->packers == NULL) {
        tool_error(prog, "out of memory");
        return false;
    }
    size_t dgram = rdps_ctx_max_datagram_payload(f->ctx);
    if (dgram > MD_PACKET_MAX)
        dgram = MD_PACKET_MAX;
    for (uint32_t ch = 0; ch < o->channels; ch++) {
        struct md_packer_config pc = {
            .first_seq = 1,
            .max_datagram = (uint32_t)dgram,
            .max_msg_len = ITCH_MAX_LEN,
            .max_delay_ns = o->max_delay_us * 1000ull,
            .intended_times = true,
        };
        size_t n = strlen(o->feed) < MD_SESSION_LEN ? strlen(o->feed) : MD_SESSION_LEN;
        memset(pc.session, ' ', sizeof(pc.session)); /* MoldUDP64: space-padded ASCII */
        memcpy(pc.session, o->feed, n);
        if (md_packer_init(&f->packers[ch], &pc) < 0) {
            tool_error(prog, "packer: a %zu-byte datagram is too small", dgram);
            return false;
        }
    }
    return true;
}

/* --timeseries: closes the second that ended at now_rel (offered: what the profile asked). */
static void series_tick(struct feed *f, uint64_t now_rel)
{
    while (f->series != NULL && now_rel >= f->second_start_ns + 1000000000ull) {
        double offered = rate_at(f->opt, f->second_start_ns);
        fprintf(f->series, "%" PRIu64 " %.0f %" PRIu64 " %" PRIu64 " %" PRIu64 " %.1f\n",
                f->second_index, offered, f->second_messages, f->second_datagrams,
                lat_hist_count(&f->second_hist),
                (double)lat_hist_value_at_percentile(&f->second_hist, 99.0) / 1e3);
        lat_hist_reset(&f->second_hist);
        f->second_messages = f->second_datagrams = 0;
        f->second_index++;
        f->second_start_ns += 1000000000ull;
    }
}

/* The open loop: returns TOOL_EXIT_OK or TOOL_EXIT_FAILED. */
/*
 * The next message of a --profile replay file into m/buf, its channel in *ch: its length, 0 at
 * the end of the file, -1 for a truncated or malformed file. Unsupported types are skipped.
 */
static int replay_next(struct feed *f, struct itch_msg *m, uint8_t *buf, uint32_t *ch)
{
    for (;;) {
        uint8_t hdr[2], raw[65535];
        size_t got = fread(hdr, 1, 2, f->replay);
        if (got == 0 && feof(f->replay))
            return 0;
        size_t len = (size_t)hdr[0] << 8 | hdr[1];
        if (got != 2 || len == 0 || fread(raw, 1, len, f->replay) != len) {
            tool_error(prog, "replay file %s: truncated after %" PRIu64 " messages", f->opt->replay,
                       f->messages);
            return -1;
        }
        if (itch_msg_len(raw[0]) == 0) {
            f->replay_skipped++;
            continue;
        }
        if (len > ITCH_MAX_LEN || itch_decode(raw, len, m) != (int)len) {
            tool_error(prog, "replay file %s: malformed '%c' message after %" PRIu64 " messages",
                       f->opt->replay, raw[0], f->messages);
            return -1;
        }
        memcpy(buf, raw, len);
        md_book_apply(&f->replay_book, m); /* refusals are the file's, counted by the book */
        *ch = m->stock_locate % (uint32_t)f->opt->channels;
        return (int)len;
    }
}

/* The sleep of the flow loop: rdps's fd and a timer for the schedule, in one epoll set. */
static bool open_wait(struct feed *f)
{
    f->wait_ep = epoll_create1(EPOLL_CLOEXEC);
    f->wait_timer = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (f->wait_ep < 0 || f->wait_timer < 0) {
        tool_error(prog, "epoll/timerfd: %s", strerror(errno));
        return false;
    }
    int fds[2] = {rdps_ctx_fd(f->ctx), f->wait_timer};
    for (int i = 0; i < 2; i++) {
        struct epoll_event ev = {.events = EPOLLIN, .data.fd = fds[i]};
        if (epoll_ctl(f->wait_ep, EPOLL_CTL_ADD, fds[i], &ev) < 0) {
            tool_error(prog, "epoll_ctl: %s", strerror(errno));
            return false;
        }
    }
    return true;
}

/*
 * Sleeps until the next message is due (due_mono_ns), a partly filled packet must go (the
 * packers' deadlines), a snapshot part may go, or rdps has work: rdps.h's event loop (drain,
 * arm, wait on the ctx's fd bounded by its next timer) with a timer of the feed's own. The feed
 * never spins: on soft-RoCE the kernel does the device's work on the same CPUs. Returns 0 or
 * an rdps error.
 */
static int sleep_until(struct feed *f, uint64_t due_mono_ns)
{
    uint64_t now_mono = rdps__clock_monotonic_ns(), now_real = rdps__clock_realtime_ns();
    uint64_t wake = due_mono_ns;
    for (uint32_t ch = 0; ch < f->opt->channels; ch++) {
        uint64_t d = md_packer_deadline(&f->packers[ch]);
        if (d == UINT64_MAX)
            continue;
        uint64_t dm = d > now_real ? now_mono + (d - now_real) : now_mono;
        if (dm < wake)
            wake = dm;
    }
    if (f->snap_ok && md_snap_server_busy(&f->snap) && now_mono + 1000000ull < wake)
        wake = now_mono + 1000000ull;
    if (wake <= now_mono)
        return 0;
    int rc;
    while ((rc = rdps_ctx_poll(f->ctx, 0)) > 0)
        ;
    if (rc < 0)
        return rc;
    if ((rc = rdps_ctx_arm(f->ctx)) == RDPS_EAGAIN)
        return 0; /* work came in meanwhile: poll it first */
    if (rc < 0)
        return rc;
    struct itimerspec its = {.it_value = {.tv_sec = (time_t)(wake / 1000000000ull),
                                          .tv_nsec = (long)(wake % 1000000000ull)}};
    timerfd_settime(f->wait_timer, TFD_TIMER_ABSTIME, &its, NULL);
    struct epoll_event evs[2];
    if (epoll_wait(f->wait_ep, evs, 2, rdps_ctx_next_timeout_ms(f->ctx)) < 0 && errno != EINTR)
        return RDPS_EIO;
    uint64_t expirations;
    (void)!read(f->wait_timer, &expirations, sizeof(expirations)); /* non-blocking */
    return 0;
}

static int run_flow(struct feed *f)
{
    const struct options *o = f->opt;
    uint64_t mono0 = rdps__clock_monotonic_ns();
    f->start_real_ns = rdps__clock_realtime_ns();
    f->warmup_end_real_ns = f->start_real_ns + o->warmup_ms * 1000000ull;
    uint64_t end_ns = o->duration_s * 1000000000ull, next_ns = 0;
    uint8_t buf[ITCH_MAX_LEN];
    while (!stop_requested && next_ns < end_ns) {
        uint64_t now_rel = rdps__clock_monotonic_ns() - mono0;
        /* Everything due by now goes; a burst of at most 256 between polls. */
        for (int n = 0; n < 256 && next_ns <= now_rel && next_ns < end_ns; n++) {
            uint64_t intended = f->start_real_ns + next_ns;
            struct itch_msg m;
            uint32_t ch;
            int len;
            if (f->replay != NULL) {
                len = replay_next(f, &m, buf, &ch);
                if (len < 0)
                    return TOOL_EXIT_FAILED;
                if (len == 0) {
                    end_ns = next_ns; /* the file is over */
                    break;
                }
            } else {
                len = md_gen_next(&f->gen, intended % DAY_NS, &m, &ch);
                if (len < 0 || itch_encode(&m, buf, sizeof(buf)) != len)
                    return TOOL_EXIT_FAILED;
            }
            int pr = md_packer_add(&f->packers[ch], buf, (size_t)len, intended,
                                   rdps__clock_realtime_ns());
            if (pr < 0) { /* no room: flush and add again */
                if (flush_channel(f, ch) < 0)
                    return TOOL_EXIT_FAILED;
                pr = md_packer_add(&f->packers[ch], buf, (size_t)len, intended,
                                   rdps__clock_realtime_ns());
                if (pr < 0)
                    return TOOL_EXIT_FAILED;
            }
            if (pr == MD_PACK_FLUSH && flush_channel(f, ch) < 0)
                return TOOL_EXIT_FAILED;
            if (f->itch_out != NULL) {
                uint8_t pre[2] = {(uint8_t)(len >> 8), (uint8_t)len};
                if (fwrite(pre, 1, 2, f->itch_out) != 2 ||
                    fwrite(buf, 1, (size_t)len, f->itch_out) != (size_t)len) {
                    tool_error(prog, "cannot write %s", o->write_itch);
                    return TOOL_EXIT_RUNTIME;
                }
            }
            f->messages++;
            f->second_messages++;
            next_ns += (uint64_t)(1e9 / rate_at(o, next_ns));
        }
        /* A packet goes when it is due, and also when its deadline falls before the next
         * message is due: nothing can join it before then, so waiting for a timer would only
         * add the wakeup's delay to its messages. */
        uint64_t real = rdps__clock_realtime_ns(), next_real = f->start_real_ns + next_ns;
        for (uint32_t ch = 0; ch < o->channels; ch++)
            if ((md_packer_due(&f->packers[ch], real) ||
                 md_packer_deadline(&f->packers[ch]) <= next_real) &&
                flush_channel(f, ch) < 0)
                return TOOL_EXIT_FAILED;
        if (rdps_ctx_poll(f->ctx, 0) < 0)
            return TOOL_EXIT_RUNTIME;
        if (serve_snapshots(f) < 0)
            return TOOL_EXIT_FAILED;
        now_rel = rdps__clock_monotonic_ns() - mono0;
        series_tick(f, now_rel);
        if (next_ns < end_ns && sleep_until(f, mono0 + next_ns) < 0)
            return TOOL_EXIT_RUNTIME;
    }
    for (uint32_t ch = 0; ch < o->channels; ch++) {
        const uint8_t *data;
        size_t len;
        if (flush_channel(f, ch) < 0)
            return TOOL_EXIT_FAILED;
        if (md_packer_heartbeat(&f->packers[ch], true, rdps__clock_realtime_ns(), &data, &len) <
                0 ||
            send_packet(f, ch, data, len) < 0)
            return TOOL_EXIT_FAILED;
    }
    return TOOL_EXIT_OK;
}

/* Reliable: every book has everything before the feed goes; echoes still in flight arrive. */
static bool drain(struct feed *f)
{
    uint64_t until = rdps__clock_monotonic_ns() + f->opt->drain_timeout_s * 1000000000ull;
    uint64_t linger = rdps__clock_monotonic_ns() + 500000000ull;
    for (;;) {
        int behind = 0;
        for (uint32_t ch = 0; ch < f->opt->channels; ch++)
            behind += rdps_pub_receivers_behind(f->pubs[ch]);
        behind += rdps_pub_receivers_behind(f->snap_pub); /* a snapshot still being repaired */
        uint64_t now = rdps__clock_monotonic_ns();
        bool serving = f->snap_ok && md_snap_server_busy(&f->snap);
        if ((behind == 0 && !serving && now >= linger) || stop_requested)
            return true;
        if (serve_snapshots(f) < 0)
            return false;
        if (now >= until) {
            tool_error(prog, "%d receiver(s) still behind after %" PRIu64 " s", behind,
                       f->opt->drain_timeout_s);
            return false;
        }
        rdps_ctx_wait(f->ctx, serving ? 1 : 10);
    }
}

/* The reference digest: the generator's books, or the books the replayed file built. */
static uint64_t feed_digest(const struct feed *f)
{
    return f->replay != NULL ? md_book_digest(&f->replay_book) : md_gen_digest(&f->gen);
}

static void write_hgrms(struct feed *f)
{
    for (unsigned i = 0; i < f->nbooks; i++) {
        char path[4096];
        snprintf(path, sizeof(path), "%s.book%u.hgrm", f->opt->hgrm_prefix, f->books[i].id);
        FILE *out = fopen(path, "w");
        if (out == NULL || lat_hist_write_hgrm(&f->books[i].hist, out, 5, 1000.0) < 0)
            tool_error(prog, "cannot write %s", path);
        if (out != NULL)
            fclose(out);
    }
}

static void print_json(struct feed *f, uint64_t elapsed_ns)
{
    const struct options *o = f->opt;
    struct tool_json j;
    rdps_counters c;
    char digest[17];
    rdps_ctx_counters(f->ctx, &c);
    snprintf(digest, sizeof(digest), "%016" PRIx64, feed_digest(f));
    double secs = (double)elapsed_ns / 1e9;
    tool_json_init(&j, stdout);
    tool_json_object_begin(&j, NULL);
    tool_json_str(&j, "tool", "md-feed");
    tool_json_str(&j, "feed", o->feed);
    tool_json_str(&j, "version", rdps_version());
    tool_json_u64(&j, "seed", o->seed);
    tool_json_str(&j, "profile",
                  o->profile == PROFILE_OPEN     ? "open"
                  : o->profile == PROFILE_REPLAY ? "replay"
                                                 : "steady");
    tool_json_u64(&j, "replay_skipped", f->replay_skipped);
    tool_json_u64(&j, "symbols", o->symbols);
    tool_json_u64(&j, "channels", o->channels);
    tool_json_bool(&j, "reliable", !o->unreliable);
    tool_json_u64(&j, "rate_offered", o->rate);
    tool_json_u64(&j, "messages", f->messages);
    tool_json_u64(&j, "datagrams", f->datagrams);
    tool_json_u64(&j, "bytes", f->bytes);
    tool_json_double(&j, "elapsed_s", secs);
    tool_json_double(&j, "msgs_per_s", secs > 0 ? (double)f->messages / secs : 0);
    tool_json_double(&j, "datagrams_per_s", secs > 0 ? (double)f->datagrams / secs : 0);
    tool_json_double(&j, "bytes_per_s", secs > 0 ? (double)f->bytes / secs : 0);
    tool_json_str(&j, "digest", digest);
    tool_json_u64(&j, "self_check_failures", md_gen_counters(&f->gen)->self_check_failures);
    tool_json_u64(&j, "backpressure", f->eagain);
    tool_json_u64(&j, "naks_received", c.naks_received);
    tool_json_u64(&j, "repairs", c.retransmits);
    tool_json_u64(&j, "echoes", f->echoes);
    tool_json_object_begin(&j, "snapshots");
    const struct md_snap_server_counters *sn = &f->snap.counters;
    tool_json_u64(&j, "requests", sn->requests);
    tool_json_u64(&j, "requests_refused", sn->requests_bad);
    tool_json_u64(&j, "requests_unknown", sn->requests_unknown);
    tool_json_u64(&j, "requests_late", sn->requests_late);
    tool_json_u64(&j, "requests_limited", sn->requests_limited);
    tool_json_u64(&j, "requesters_refused", sn->requesters_refused);
    tool_json_u64(&j, "budget_waits", sn->budget_waits);
    tool_json_u64(&j, "sent", sn->snapshots);
    tool_json_u64(&j, "parts", sn->parts);
    tool_json_u64(&j, "bytes", sn->bytes);
    tool_json_u64(&j, "backpressure", sn->backpressure);
    tool_json_u64(&j, "directories", sn->directories);
    tool_json_u64(&j, "directory_bytes", sn->directory_bytes);
    tool_json_object_end(&j);
    tool_json_array_begin(&j, "reflector");
    for (unsigned i = 0; i < f->nbooks; i++) {
        tool_json_object_begin(&j, NULL);
        tool_json_u64(&j, "book", f->books[i].id);
        tool_json_str(&j, "method", "reflector RTT/2");
        md_json_latency(&j, &f->books[i].hist);
        tool_json_object_end(&j);
    }
    tool_json_array_end(&j);
    tool_json_array_begin(&j, "breakdown");
    for (unsigned i = 0; i < f->nbooks; i++) {
        const struct book_rtt *b = &f->books[i];
        tool_json_object_begin(&j, NULL);
        tool_json_u64(&j, "book", b->id);
        tool_json_u64(&j, "samples", b->staged);
        tool_json_u64(&j, "inconsistent", b->inconsistent);
        tool_json_u64(&j, "unmatched", b->unmatched);
        for (int s = 0; s < ST_COUNT; s++) {
            tool_json_object_begin(&j, stage_names[s]);
            md_json_latency(&j, &b->stage[s]);
            tool_json_object_end(&j);
        }
        tool_json_object_end(&j);
    }
    tool_json_array_end(&j);
    tool_json_object_end(&j);
    tool_json_finish(&j);
}

int main(int argc, char **argv)
{
    tool_cli_init(argv);
    struct options opt;
    struct feed f = {.wait_ep = -1, .wait_timer = -1};
    int status = TOOL_EXIT_OK;
    if (!parse_args(argc, argv, &opt)) {
        tool_usage_hint(prog);
        return TOOL_EXIT_USAGE;
    }
    f.opt = &opt;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    if (tool_ctx_open(prog, &opt.ctx, 0, &f.ctx) < 0)
        return TOOL_EXIT_RUNTIME;
    if (!setup_generator(&f)) {
        status = TOOL_EXIT_RUNTIME;
        goto out;
    }
    if (opt.write_itch != NULL && (f.itch_out = fopen(opt.write_itch, "wb")) == NULL) {
        tool_error(prog, "cannot write %s: %s", opt.write_itch, strerror(errno));
        status = TOOL_EXIT_RUNTIME;
        goto out;
    }
    if (opt.replay != NULL) {
        struct md_book_config bc;
        md_book_config_init(&bc);
        f.replay = fopen(opt.replay, "rb");
        if (f.replay == NULL || md_book_init(&f.replay_book, &bc) < 0) {
            tool_error(prog, "cannot replay %s: %s", opt.replay,
                       f.replay == NULL ? strerror(errno) : "out of memory");
            status = TOOL_EXIT_RUNTIME;
            goto out;
        }
        f.replay_book_ok = true;
    }
    if (!setup_snapshots(&f)) {
        tool_error(prog, "out of memory");
        status = TOOL_EXIT_RUNTIME;
        goto out;
    }
    /* After the snapshot service: the publishers tell it who subscribes. */
    if (!open_endpoints(&f)) {
        status = TOOL_EXIT_RUNTIME;
        goto out;
    }
    if (!wait_for_books(&f)) {
        tool_error(prog, "%" PRIu64 " book(s) per channel did not appear within %" PRIu64 " s",
                   opt.books, opt.wait_timeout_s);
        status = TOOL_EXIT_TIMEOUT;
        goto out;
    }
    if (opt.timeseries != NULL) {
        f.series = fopen(opt.timeseries, "w");
        if (f.series == NULL || lat_hist_init(&f.second_hist, 2) < 0) {
            tool_error(prog, "cannot write %s: %s", opt.timeseries, strerror(errno));
            status = TOOL_EXIT_RUNTIME;
            goto out;
        }
        fprintf(f.series, "# second offered_msgs_per_s messages datagrams echoes "
                          "rtt2_p99_us\n");
    }
    if (!open_wait(&f)) {
        status = TOOL_EXIT_RUNTIME;
        goto out;
    }
    uint64_t t0 = rdps__clock_monotonic_ns();
    status = run_flow(&f);
    uint64_t elapsed = rdps__clock_monotonic_ns() - t0;
    if (status == TOOL_EXIT_OK && !drain(&f))
        status = TOOL_EXIT_FAILED;
    if (f.stalled_sends > 0)
        tool_error(prog, "sends stayed back-pressured for %llu s: stopped",
                   TOOL_SEND_STALL_NS / 1000000000ull);
    if (opt.hgrm_prefix != NULL)
        write_hgrms(&f);
    if (opt.symbol_digests != NULL &&
        md_write_symbol_digests(opt.symbol_digests,
                                f.replay != NULL ? &f.replay_book : md_gen_book(&f.gen)) < 0)
        tool_error(prog, "cannot write %s", opt.symbol_digests);
    if (opt.json)
        print_json(&f, elapsed);
    else
        printf("md-feed: %" PRIu64 " messages in %" PRIu64 " datagrams, digest %016" PRIx64 "\n",
               f.messages, f.datagrams, feed_digest(&f));
out:
    if (f.series != NULL) {
        fclose(f.series);
        lat_hist_fini(&f.second_hist);
    }
    if (f.replay != NULL)
        fclose(f.replay);
    if (f.itch_out != NULL && fclose(f.itch_out) != 0 && status == TOOL_EXIT_OK)
        status = TOOL_EXIT_RUNTIME;
    if (f.replay_book_ok)
        md_book_fini(&f.replay_book);
    for (uint32_t ch = 0; ch < opt.channels; ch++)
        rdps_pub_destroy(f.pubs[ch]);
    rdps_sub_destroy(f.echo_sub);
    rdps_sub_destroy(f.snapreq_sub);
    rdps_pub_destroy(f.snap_pub);
    rdps_ctx_destroy(f.ctx);
    if (f.snap_ok)
        md_snap_server_fini(&f.snap);
    if (f.packers != NULL)
        md_gen_fini(&f.gen);
    free(f.packers);
    for (unsigned i = 0; i < f.nbooks; i++) {
        lat_hist_fini(&f.books[i].hist);
        for (int s = 0; s < ST_COUNT; s++)
            lat_hist_fini(&f.books[i].stage[s]);
        if (f.books[i].samples != NULL)
            fclose(f.books[i].samples);
    }
    if (f.wait_ep >= 0)
        close(f.wait_ep);
    if (f.wait_timer >= 0)
        close(f.wait_timer);
    return status;
}
