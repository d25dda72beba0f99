/* SPDX-License-Identifier: BSD-2-Clause */
/* md_feed.c - md-feed: a synthetic ITCH 5.0 feed handler publishing on rdps channels, open loop,
 * with the reference book digest and reflector latency. */
#include <errno.h>
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
#include "md_feed.h"
#include "md_gen.h"
#include "md_packet.h"
#include "md_recovery.h"
#include "md_snap_server.h"
#include "md_snapshot.h"
#include "md_topics.h"
#include "rdps_clock.h"
#include "tool_cli.h"
#include "tool_json.h"

static const char *prog = MD_FEED_PROG;
static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

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
    int rc = rdps_sub_create(f->ctx, topic, md_feed_on_echo, f, &so, &f->echo_sub);
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
int main(int argc, char **argv)
{
    tool_cli_init(argv);
    struct options opt;
    struct feed f = {.wait_ep = -1, .wait_timer = -1};
    int status = TOOL_EXIT_OK;
    if (!md_feed_parse_args(argc, argv, &opt)) {
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
        md_feed_write_hgrms(&f);
    if (opt.symbol_digests != NULL &&
        md_write_symbol_digests(opt.symbol_digests,
                                f.replay != NULL ? &f.replay_book : md_gen_book(&f.gen)) < 0)
        tool_error(prog, "cannot write %s", opt.symbol_digests);
    if (opt.json)
        md_feed_print_json(&f, elapsed);
    else
        printf("md-feed: %" PRIu64 " messages in %" PRIu64 " datagrams, digest %016" PRIx64 "\n",
               f.messages, f.datagrams, md_feed_digest(&f));
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
