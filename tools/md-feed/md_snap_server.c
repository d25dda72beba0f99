/* SPDX-License-Identifier: BSD-2-Clause */
/* md_snap_server.c - md-feed's late-join service (md_snap_server.h): requests, snapshots and the
 * symbol directory. */
#include "md_snap_server.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "itch.h"
#include "md_topics.h"
#include "rdps_clock.h"
#include "tool_cli.h"

static const char *prog = "md-feed";

int md_snap_server_init(struct md_snap_server *s, const struct md_snap_server_config *cfg,
                        const struct md_snap_server_hooks *hooks)
{
    memset(s, 0, sizeof(*s));
    if (cfg->channels == 0 || cfg->channels > 64 || cfg->max_locate == 0 ||
        cfg->max_locate > MD_SNAP_LOCATE_MAX)
        return -EINVAL;
    s->cfg = *cfg;
    s->hooks = *hooks;
    if (s->cfg.budget_bytes_per_s == 0)
        s->cfg.budget_bytes_per_s = MD_SNAP_SERVER_DEFAULT_BUDGET;
    s->budget_burst_ns = 1000000000ull; /* one second's worth */
    for (uint32_t i = 0; i <= MD_SNAP_SERVER_SNAP_TOPIC; i++)
        s->topics[i] = (struct md_snap_server_topic_ref){.server = s, .topic = i};
    s->locates = calloc(cfg->max_locate, sizeof(*s->locates));
    s->part = malloc(1 + MD_SNAP_PART_BYTES);
    s->requesters = calloc(MD_SNAP_SERVER_MAX_REQUESTERS, sizeof(*s->requesters));
    if (s->locates == NULL || s->part == NULL || s->requesters == NULL) {
        md_snap_server_fini(s);
        return -ENOMEM;
    }
    /* Each channel's symbols, grouped by channel: the scope of its snapshot. */
    uint32_t n = 0;
    for (uint32_t ch = 0; ch < cfg->channels; ch++) {
        s->locate_first[ch] = n;
        for (uint32_t locate = 1; locate <= cfg->max_locate; locate++)
            if (hooks->channel_of(hooks->user, (uint16_t)locate) == ch)
                s->locates[n++] = (uint16_t)locate;
    }
    s->locate_first[cfg->channels] = n;
    return 0;
}

void md_snap_server_fini(struct md_snap_server *s)
{
    md_snap_builder_fini(&s->builder);
    free(s->locates);
    free(s->part);
    free(s->dir_channels);
    free(s->dir_symbols);
    free(s->dir_msg);
    free(s->requesters);
    s->locates = NULL;
    s->part = NULL;
    s->dir_channels = NULL;
    s->dir_symbols = NULL;
    s->dir_msg = NULL;
    s->requesters = NULL;
}

/* ---- whom it answers ---- */

/*
 * A generic cell rate algorithm: *tat_ns is when the bucket is full again. Taking `cost_ns`
 * succeeds while that stays within burst_ns of now; an empty bucket (tat <= now) always gives
 * one, so a cost above the burst still goes, once per cost.
 */
static bool gcra_take(uint64_t *tat_ns, uint64_t now_ns, uint64_t cost_ns, uint64_t burst_ns)
{
    uint64_t tat = *tat_ns > now_ns ? *tat_ns : now_ns;
    if (tat > now_ns && tat - now_ns + cost_ns > burst_ns)
        return false;
    *tat_ns = tat + cost_ns;
    return true;
}

static struct md_snap_requester *find_requester(struct md_snap_server *s, const rdps_source *src)
{
    for (uint32_t i = 0; i < MD_SNAP_SERVER_MAX_REQUESTERS; i++)
        if (s->requesters[i].total > 0 && md_source_equal(&s->requesters[i].source, src))
            return &s->requesters[i];
    return NULL;
}

/* What `what` needs of its requester: a live subscriber of the snapshot topic (where answers
 * go) and, for a channel's snapshot, of that channel. */
static bool announced_for(const struct md_snap_requester *q, uint32_t what)
{
    return q != NULL && q->subs[MD_SNAP_SERVER_SNAP_TOPIC] > 0 &&
           (what == MD_SNAPREQ_DIRECTORY || q->subs[what] > 0);
}

/* Takes `what` for an announced requester within its rate: every channel and the directory
 * twice at once, then once per MD_SNAP_RETRY_NS. */
static void admit(struct md_snap_server *s, struct md_snap_requester *q, uint32_t what,
                  uint64_t now_ns, bool late)
{
    uint64_t per_period = s->cfg.channels + 1u;
    if (!gcra_take(&q->tat_ns, now_ns, MD_SNAP_RETRY_NS / per_period, 2 * MD_SNAP_RETRY_NS)) {
        s->counters.requests_limited++;
        return;
    }
    if (late)
        s->counters.requests_late++;
    else
        s->counters.requests++;
    if (what == MD_SNAPREQ_DIRECTORY)
        s->dir_pending = true;
    else
        s->snap_pending |= 1ull << what;
}

/* A request from a source not announced for it waits for the announcement: its entry, a free
 * or expired one, or the one that expires first. */
static void wait_for_announcement(struct md_snap_server *s, const rdps_source *src, uint32_t what,
                                  uint64_t now_ns)
{
    struct md_snap_waiting *w = NULL, *oldest = &s->waiting[0];
    for (uint32_t i = 0; i < MD_SNAP_SERVER_WAITING && w == NULL; i++) {
        struct md_snap_waiting *e = &s->waiting[i];
        if (e->expires_ns > now_ns && md_source_equal(&e->source, src))
            w = e;
        else if (e->expires_ns < oldest->expires_ns)
            oldest = e;
    }
    if (w == NULL) {
        w = oldest;
        *w = (struct md_snap_waiting){.source = *src};
    }
    w->expires_ns = now_ns + MD_SNAP_SERVER_WAIT_NS;
    if (what == MD_SNAPREQ_DIRECTORY)
        w->directory = true;
    else
        w->channels |= 1ull << what;
}

/* q was just announced for more: the requests of its source that waited for that are taken. */
static void release_waiting(struct md_snap_server *s, struct md_snap_requester *q, uint64_t now_ns)
{
    for (uint32_t i = 0; i < MD_SNAP_SERVER_WAITING; i++) {
        struct md_snap_waiting *w = &s->waiting[i];
        if (w->expires_ns <= now_ns || !md_source_equal(&w->source, &q->source))
            continue;
        if (w->directory && announced_for(q, MD_SNAPREQ_DIRECTORY)) {
            w->directory = false;
            admit(s, q, MD_SNAPREQ_DIRECTORY, now_ns, true);
        }
        for (uint32_t ch = 0; ch < s->cfg.channels; ch++) {
            if ((w->channels & (1ull << ch)) && announced_for(q, ch)) {
                w->channels &= ~(1ull << ch);
                admit(s, q, ch, now_ns, true);
            }
        }
        if (!w->directory && w->channels == 0)
            w->expires_ns = 0;
    }
}

void md_snap_server_subscriber(struct md_snap_server *s, uint32_t topic, const rdps_event *ev,
                               uint64_t now_ns)
{
    if (topic != MD_SNAP_SERVER_SNAP_TOPIC && topic >= s->cfg.channels)
        return;
    struct md_snap_requester *q = find_requester(s, &ev->source);
    if (ev->type == RDPS_EVENT_SUBSCRIBER_GONE) {
        if (q != NULL && q->subs[topic] > 0) {
            q->subs[topic]--;
            q->total--; /* 0: the entry is free again */
        }
        return;
    }
    if (ev->type != RDPS_EVENT_SUBSCRIBER_SEEN)
        return;
    for (uint32_t i = 0; q == NULL && i < MD_SNAP_SERVER_MAX_REQUESTERS; i++)
        if (s->requesters[i].total == 0) {
            q = &s->requesters[i];
            *q = (struct md_snap_requester){.source = ev->source};
        }
    if (q == NULL) {
        s->counters.requesters_refused++;
        return;
    }
    if (q->subs[topic] == UINT16_MAX)
        return;
    q->subs[topic]++;
    q->total++;
    release_waiting(s, q, now_ns);
}

static void on_pub_event(void *user, const rdps_event *ev)
{
    struct md_snap_server_topic_ref *ref = user;
    md_snap_server_subscriber(ref->server, ref->topic, ev, rdps__clock_monotonic_ns());
}

void md_snap_server_pub_opts(struct md_snap_server *s, uint32_t topic, rdps_pub_opts *po)
{
    po->on_event = on_pub_event;
    po->event_user = &s->topics[topic <= MD_SNAP_SERVER_SNAP_TOPIC ? topic : 0];
}

void md_snap_server_request(struct md_snap_server *s, const void *data, size_t len,
                            const rdps_msg_info *info, uint64_t now_ns)
{
    struct md_snapreq r;
    if (md_snapreq_decode(data, len, &r) < 0 ||
        (r.channel >= s->cfg.channels && r.channel != MD_SNAPREQ_DIRECTORY)) {
        s->counters.requests_bad++;
        return;
    }
    struct md_snap_requester *q = find_requester(s, &info->source);
    if (!announced_for(q, r.channel)) {
        s->counters.requests_unknown++;
        wait_for_announcement(s, &info->source, r.channel, now_ns);
        return;
    }
    admit(s, q, r.channel, now_ns, false);
}

/* The byte budget: `len` bytes cost this much of its time. */
static uint64_t budget_cost(const struct md_snap_server *s, size_t len)
{
    return (uint64_t)len * 1000000000ull / s->cfg.budget_bytes_per_s;
}

/* Whether `len` more bytes fit in the budget now (and then they are spent). */
static bool budget_take(struct md_snap_server *s, size_t len, uint64_t now_ns)
{
    if (gcra_take(&s->budget_tat_ns, now_ns, budget_cost(s, len), s->budget_burst_ns))
        return true;
    s->counters.budget_waits++;
    return false;
}

void md_snap_server_on_request(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    md_snap_server_request(user, data, len, info, rdps__clock_monotonic_ns());
}

/* The symbol directory: every channel's topic and packet options, every named symbol's channel
 * (names from the reference books' Stock Directory messages), taken when asked for. */
static int start_directory(struct md_snap_server *s)
{
    uint32_t channels = s->cfg.channels;
    uint32_t n_locates = s->locate_first[channels];
    if (s->dir_channels == NULL) {
        s->dir_channels = calloc(channels, sizeof(*s->dir_channels));
        s->dir_symbols = calloc(n_locates ? n_locates : 1, sizeof(*s->dir_symbols));
        if (s->dir_channels == NULL || s->dir_symbols == NULL) {
            tool_error(prog, "out of memory");
            return -1;
        }
    }
    s->dir_n = 0;
    for (uint32_t ch = 0; ch < channels; ch++) {
        struct md_dir_channel *c = &s->dir_channels[ch];
        c->channel = ch;
        md_channel_topic(c->topic, sizeof(c->topic), s->cfg.feed, ch);
        memcpy(c->session, s->cfg.session, sizeof(c->session));
        c->intended_times = true;
        c->max_msg_len = ITCH_MAX_LEN;
        for (uint32_t i = s->locate_first[ch]; i < s->locate_first[ch + 1]; i++) {
            const char *stock = md_book_stock(s->cfg.book, s->locates[i]);
            size_t n = ITCH_STOCK_LEN;
            while (stock != NULL && n > 0 && stock[n - 1] == ' ')
                n--;
            if (stock == NULL || n == 0 || stock[0] == ' ')
                continue; /* no Stock Directory message yet (a replayed file) */
            struct md_dir_symbol *sym = &s->dir_symbols[s->dir_n++];
            memcpy(sym->name, stock, n);
            sym->name[n] = '\0';
            sym->locate = s->locates[i];
            sym->channel = ch;
        }
    }
    s->dir_next = 0;
    s->dir_active = true;
    return 0;
}

/* One slice of the directory (every channel, the next MD_DIR_SLICE_SYMBOLS symbols): a whole
 * directory of tens of thousands of symbols would be one message larger than any receive window
 * (see MD_SNAP_PART_BYTES). Encoded once, offered again next time under back-pressure or while
 * the budget has no room for it. */
static int send_directory_slice(struct md_snap_server *s, uint64_t now_ns)
{
    if (s->dir_msg == NULL) {
        uint32_t n = s->dir_n - s->dir_next;
        if (n > MD_DIR_SLICE_SYMBOLS)
            n = MD_DIR_SLICE_SYMBOLS;
        struct md_dir d = {.channel_count = s->cfg.channels,
                           .channels = s->dir_channels,
                           .n_channels = s->cfg.channels,
                           .symbols = s->dir_symbols + s->dir_next,
                           .n_symbols = n};
        uint8_t *enc = NULL;
        size_t len = 0;
        const char *why = NULL;
        if (md_dir_encode(&d, &enc, &len) < 0) {
            md_dir_check(&d, &why);
            tool_error(prog, "cannot encode the symbol directory: %s", why ? why : "out of memory");
            s->dir_active = false; /* the flow goes on; late books then lack names */
            return 0;
        }
        uint8_t *msg = realloc(enc, len + 1);
        if (msg == NULL) {
            free(enc);
            return -1;
        }
        memmove(msg + 1, msg, len);
        msg[0] = MD_SNAPMSG_DIRECTORY;
        s->dir_msg = msg;
        s->dir_msg_len = len + 1;
        s->dir_msg_symbols = n;
    }
    if (!budget_take(s, s->dir_msg_len, now_ns))
        return 0;
    int rc = s->hooks.send(s->hooks.user, s->dir_msg, s->dir_msg_len);
    if (rc == RDPS_EAGAIN) {
        s->counters.backpressure++;
        s->budget_tat_ns -= budget_cost(s, s->dir_msg_len); /* not sent: not spent */
        return 0;
    }
    if (rc < 0) {
        tool_error(prog, "symbol directory send failed: %s (%s)", rdps_strerror(rc),
                   rdps_last_error_message());
        return -1;
    }
    s->counters.directory_bytes += s->dir_msg_len - 1;
    s->dir_next += s->dir_msg_symbols;
    free(s->dir_msg);
    s->dir_msg = NULL;
    if (s->dir_next == s->dir_n) {
        s->dir_active = false;
        s->counters.directories++;
    }
    return 0;
}

/* Builds channel ch's snapshot after its last sent message: the channel's pending messages go
 * first, so the snapshot is exactly the books after the sequence it names. The builder keeps a
 * copy, so its parts can go out over the next calls while the books move on. */
static int start_snapshot(struct md_snap_server *s, uint32_t ch)
{
    uint64_t seq;
    if (s->hooks.flush(s->hooks.user, ch, &seq) < 0)
        return -1;
    uint32_t first = s->locate_first[ch];
    if (md_snap_build(&s->builder, s->cfg.book, s->locates + first, s->locate_first[ch + 1] - first,
                      ch, seq) < 0 ||
        md_snap_plan(&s->builder.snap, MD_SNAP_PART_BYTES, &s->plan) < 0) {
        tool_error(prog, "channel %u: cannot build its snapshot", ch);
        return -1;
    }
    s->snap_active = true;
    s->next_part = 0;
    s->part_len = 0;
    return 0;
}

int md_snap_server_serve(struct md_snap_server *s, uint64_t now_ns)
{
    /* A directory at most once per MD_DIR_MIN_INTERVAL_NS (a snapshot per channel at most once
     * per MD_SNAP_MIN_INTERVAL_NS): a flood of requests, which anyone on the fabric can send,
     * costs the feed a bounded rate. */
    if (s->dir_pending && !s->dir_active && !s->snap_active &&
        (s->dir_last_ns == 0 || now_ns - s->dir_last_ns >= MD_DIR_MIN_INTERVAL_NS)) {
        s->dir_pending = false;
        s->dir_last_ns = now_ns;
        if (start_directory(s) < 0)
            return -1;
    }
    if (s->dir_active)
        return send_directory_slice(s, now_ns);
    if (!s->snap_active) {
        if (s->snap_pending == 0)
            return 0;
        uint32_t ch = 0;
        while (ch < s->cfg.channels && (!(s->snap_pending & (1ull << ch)) ||
                                        (s->snap_last_ns[ch] != 0 &&
                                         now_ns - s->snap_last_ns[ch] < MD_SNAP_MIN_INTERVAL_NS)))
            ch++;
        if (ch == s->cfg.channels)
            return 0;
        s->snap_pending &= ~(1ull << ch);
        if (start_snapshot(s, ch) < 0)
            return -1;
    }
    const struct md_snap *snap = &s->builder.snap;
    if (s->part_len == 0) {
        s->part[0] = MD_SNAPMSG_PART;
        int rc = md_snap_encode_part(snap, &s->plan, s->next_part, s->part + 1, MD_SNAP_PART_BYTES,
                                     &s->part_len);
        s->part_len++;
        if (rc < 0) {
            tool_error(prog, "channel %u: snapshot part %u: %s", snap->channel, s->next_part,
                       strerror(-rc));
            return -1;
        }
    }
    if (!budget_take(s, s->part_len, now_ns))
        return 0;
    int rc = s->hooks.send(s->hooks.user, s->part, s->part_len);
    if (rc == RDPS_EAGAIN) {
        s->counters.backpressure++;
        s->budget_tat_ns -= budget_cost(s, s->part_len); /* not sent: not spent */
        return 0;
    }
    if (rc < 0) {
        tool_error(prog, "channel %u: snapshot send failed: %s (%s)", snap->channel,
                   rdps_strerror(rc), rdps_last_error_message());
        return -1;
    }
    s->counters.parts++;
    s->counters.bytes += s->part_len - 1;
    s->part_len = 0;
    if (++s->next_part == s->plan.part_count) {
        s->snap_active = false;
        s->snap_last_ns[snap->channel] = now_ns;
        s->counters.snapshots++;
    }
    return 0;
}

bool md_snap_server_busy(const struct md_snap_server *s)
{
    return s->snap_pending != 0 || s->snap_active || s->dir_pending || s->dir_active;
}
