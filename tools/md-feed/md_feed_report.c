/* SPDX-License-Identifier: BSD-2-Clause */
/* md_feed_report.c - md-feed's measurements and report: the books' echoes timed in stages, the
 * digest, the latency histograms and the JSON summary. */
#include <inttypes.h>
#include <stdio.h>

#include "md_feed.h"
#include "md_topics.h"
#include "rdps_clock.h"
#include "tool_cli.h"
#include "tool_json.h"

static const char *prog = MD_FEED_PROG;

const char *const md_feed_stage_names[ST_COUNT] = {"wake",  "pack", "send",     "wire_out",
                                                   "apply", "echo", "wire_back"};

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

void md_feed_on_echo(void *user, const void *data, size_t len, const rdps_msg_info *info)
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

uint64_t md_feed_digest(const struct feed *f)
{
    return f->replay != NULL ? md_book_digest(&f->replay_book) : md_gen_digest(&f->gen);
}

void md_feed_write_hgrms(struct feed *f)
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

void md_feed_print_json(struct feed *f, uint64_t elapsed_ns)
{
    const struct options *o = f->opt;
    struct tool_json j;
    rdps_counters c;
    char digest[17];
    rdps_ctx_counters(f->ctx, &c);
    snprintf(digest, sizeof(digest), "%016" PRIx64, md_feed_digest(f));
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
            tool_json_object_begin(&j, md_feed_stage_names[s]);
            md_json_latency(&j, &b->stage[s]);
            tool_json_object_end(&j);
        }
        tool_json_object_end(&j);
    }
    tool_json_array_end(&j);
    tool_json_object_end(&j);
    tool_json_finish(&j);
}
