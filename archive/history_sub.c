/* SPDX-License-Identifier: BSD-2-Clause */
/* history_sub.c - rdps_history_sub: a late subscriber that asks a recorder for a topic's history
 * and merges it with its own live reliable stream (rdps_replay_merge.h) into one delivery. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <rdps/rdps_archive.h>

#include "rdps_clock.h"
#include "rdps_error.h"
#include "history_server.h"
#include "rdps_history_wire.h"
#include "rdps_replay_merge.h"

#define SYNC_INTERVAL_NS 20000000ull /* a SYNC while sessions wait at the seam */
#define SYNC_RESEND_NS   500000000ull
/* REQUEST again while no reply came: a recorder that was found may be gone or may have dropped
 * the job (its reply topic unseen); one that has the job ignores a repeat (same nonce). */
#define REQUEST_RETRY_NS 1000000000ull

enum phase {
    PHASE_FIND,   /* waiting for a recorder (a subscriber of the request topic) */
    PHASE_REPLAY, /* requested: history and live merging */
    PHASE_LIVE,   /* every session live: history over */
};

/* What the replay said of a session at its last CAUGHT_UP. */
struct session_state {
    uint32_t session, next;
    bool has;
    rdps_source source; /* from the live stream (history carries none) */
    bool has_source;
};

struct rdps_history_sub {
    rdps_ctx_t *ctx;
    char topic[RDPS_TOPIC_NAME_MAX + 1];
    uint64_t topic_id, nonce;
    rdps_msg_cb on_message;
    void *user;
    rdps_history_opts opts;
    rdps_sub_t *live, *reply;
    rdps_pub_t *request;
    struct rdps_merge merge;
    enum phase phase;
    uint64_t started_ns, last_reply_ns, last_sync_ns, last_request_ns;
    uint64_t replies;  /* replay records received */
    uint32_t requests; /* REQUESTs sent */
    uint32_t token;
    bool sync_out, timed_out_reported, refused, refused_reported, cancel_sent;
    struct session_state states[RDPS_HIST_MAX_SESSIONS];
    unsigned nstates;
};

static struct session_state *state_of(struct rdps_history_sub *hs, uint32_t session, bool add)
{
    for (unsigned i = 0; i < hs->nstates; i++)
        if (hs->states[i].session == session)
            return &hs->states[i];
    if (!add || hs->nstates == RDPS_HIST_MAX_SESSIONS)
        return NULL;
    struct session_state *s = &hs->states[hs->nstates++];
    memset(s, 0, sizeof(*s));
    s->session = session;
    return s;
}

static void raise_loss(struct rdps_history_sub *hs, const struct rdps_merge_msg *m)
{
    if (hs->opts.on_event == NULL)
        return;
    struct session_state *st = state_of(hs, m->session, false);
    rdps_event ev = {
        .type = RDPS_EVENT_LOSS,
        .topic = hs->topic,
        .session_id = m->session,
        .first_seq = m->seq,
        .count = m->count,
        .reason = m->reason == RDPS_MERGE_LOSS_NOT_IN_RECORDING ? RDPS_LOSS_NOT_IN_RECORDING
                                                                : (int)m->flags,
        .first_ordinal = m->msg_count > 0 ? m->ordinal : 0,
        .msg_count = m->msg_count,
    };
    if (st != NULL && st->has_source)
        ev.source = st->source;
    hs->opts.on_event(hs->opts.event_user, &ev);
}

/* The merger's output: one delivery to the application. */
static void deliver(void *user, const struct rdps_merge_msg *m, bool from_history)
{
    struct rdps_history_sub *hs = user;
    (void)from_history;
    if (m->kind == RDPS_MERGE_LOSS) {
        raise_loss(hs, m);
        return;
    }
    struct session_state *st = state_of(hs, m->session, false);
    rdps_msg_info info = {
        .topic = hs->topic,
        .topic_id = hs->topic_id,
        .session_id = m->session,
        .seq = m->seq,
        .ordinal = m->ordinal,
        .publisher_ts_ns = m->publisher_ts_ns,
        .fragments = m->count,
        .retransmitted = (m->flags & 1) != 0,
    };
    if (st != NULL && st->has_source)
        info.source = st->source;
    hs->on_message(hs->user, m->data, m->len, &info);
}

static void on_live(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct rdps_history_sub *hs = user;
    struct session_state *st = state_of(hs, info->session_id, true);
    if (st != NULL && !st->has_source) {
        st->source = info->source;
        st->has_source = true;
    }
    struct rdps_merge_msg m = {
        .kind = RDPS_MERGE_MESSAGE,
        .session = info->session_id,
        .seq = info->seq,
        .count = info->fragments > 0 ? info->fragments : 1,
        .ordinal = info->ordinal,
        .publisher_ts_ns = info->publisher_ts_ns,
        .flags = info->retransmitted ? 1 : 0,
        .data = data,
        .len = len,
    };
    rdps__merge_live(&hs->merge, &m);
}

static void on_live_event(void *user, const rdps_event *ev)
{
    struct rdps_history_sub *hs = user;
    if (ev->type == RDPS_EVENT_LOSS) {
        /* A live loss takes its place in the session's order like a message. */
        struct rdps_merge_msg m = {.kind = RDPS_MERGE_LOSS,
                                   .session = ev->session_id,
                                   .seq = ev->first_seq,
                                   .count = ev->count,
                                   .ordinal = ev->first_ordinal,
                                   .msg_count = ev->msg_count,
                                   .flags = (uint32_t)ev->reason};
        rdps__merge_live(&hs->merge, &m);
        return;
    }
    if (hs->opts.on_event != NULL)
        hs->opts.on_event(hs->opts.event_user, ev);
}

/* CAUGHT_UP: every session waiting at the seam learns what the recording has of it. */
static void caught_up(struct rdps_history_sub *hs)
{
    uint32_t sessions[RDPS_HIST_NEED_MAX], seqs[RDPS_HIST_NEED_MAX];
    uint32_t n = rdps__merge_waiting(&hs->merge, sessions, seqs, RDPS_HIST_NEED_MAX);
    if (n > RDPS_HIST_NEED_MAX)
        n = RDPS_HIST_NEED_MAX;
    for (uint32_t i = 0; i < n; i++) {
        struct session_state *st = state_of(hs, sessions[i], false);
        bool has = st != NULL && st->has;
        rdps__merge_history_caught_up(&hs->merge, sessions[i], has, has ? st->next : 0);
    }
    hs->sync_out = false;
}

static void on_reply(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct rdps_history_sub *hs = user;
    struct rdps_hist_record r;
    (void)info;
    if (!rdps__hist_record_decode(data, len, &r))
        return;
    hs->last_reply_ns = rdps__clock_monotonic_ns();
    hs->replies++;
    switch (r.kind) {
    case RDPS_HIST_MESSAGE:
    case RDPS_HIST_LOSS: {
        struct rdps_merge_msg m = {
            .kind = r.kind == RDPS_HIST_MESSAGE ? RDPS_MERGE_MESSAGE : RDPS_MERGE_LOSS,
            .session = r.session,
            .seq = r.seq,
            .count = r.count,
            .ordinal = r.ordinal,
            .publisher_ts_ns = r.publisher_ts_ns,
            .flags = r.kind == RDPS_HIST_LOSS ? r.value : r.flags,
            .data = r.data,
            .len = r.len,
        };
        rdps__merge_history(&hs->merge, &m);
        break;
    }
    case RDPS_HIST_SESSION_STATE: {
        struct session_state *st = state_of(hs, r.session, true);
        if (st != NULL) {
            st->next = r.seq;
            st->has = r.count != 0;
        }
        break;
    }
    case RDPS_HIST_CAUGHT_UP:
        if (hs->sync_out && r.value == hs->token)
            caught_up(hs);
        break;
    case RDPS_HIST_DONE:
        rdps__merge_history_done(&hs->merge);
        break;
    case RDPS_HIST_REFUSED:
        hs->refused = true;
        rdps__merge_history_done(&hs->merge);
        break;
    }
}

static int send_request(struct rdps_history_sub *hs, uint8_t kind)
{
    struct rdps_hist_request q = {0};
    uint8_t buf[RDPS_HIST_REQUEST_LEN + RDPS_HIST_NEED_MAX * RDPS_HIST_NEED_LEN];
    q.kind = kind;
    q.nonce = hs->nonce;
    q.topic_id = hs->topic_id;
    q.from_ns = hs->opts.from_ns;
    q.flags = hs->opts.from_session_start ? RDPS_HIST_F_FROM_SESSION_START : 0;
    if (kind == RDPS_HIST_SYNC) {
        uint32_t sessions[RDPS_HIST_NEED_MAX], seqs[RDPS_HIST_NEED_MAX];
        uint32_t n = rdps__merge_waiting(&hs->merge, sessions, seqs, RDPS_HIST_NEED_MAX);
        q.need_count = (uint16_t)(n > RDPS_HIST_NEED_MAX ? RDPS_HIST_NEED_MAX : n);
        q.token = ++hs->token;
        for (uint16_t i = 0; i < q.need_count; i++)
            q.need[i] = (struct rdps_hist_need){sessions[i], seqs[i]};
    }
    size_t len = rdps__hist_request_encode(buf, sizeof(buf), &q);
    return rdps_pub_send(hs->request, buf, len);
}

/* No recorder was found, or the one found never answered, or its replay stalled: the topic goes
 * live, and the error message says which (rdps_last_error_message). */
static int give_up(struct rdps_history_sub *hs, uint64_t now)
{
    rdps__merge_history_done(&hs->merge);
    hs->phase = PHASE_LIVE;
    hs->timed_out_reported = true;
    unsigned ms = hs->opts.timeout_ms;
    if (hs->requests == 0) {
        char name[48];
        rdps__hist_request_topic(name, sizeof(name), hs->topic_id);
        return rdps__set_err(RDPS_ETIMEDOUT,
                             "history of '%s': no recorder found within %u ms (nobody subscribes "
                             "to its request topic %s): live from now",
                             hs->topic, ms, name);
    }
    if (hs->replies == 0)
        return rdps__set_err(RDPS_ETIMEDOUT,
                             "history of '%s': a recorder was found but did not answer within "
                             "%u ms (%u requests sent): live from now",
                             hs->topic, ms, hs->requests);
    return rdps__set_err(RDPS_ETIMEDOUT,
                         "history of '%s': the recorder's replay stalled (nothing for %" PRIu64
                         " ms after %" PRIu64 " records): live from now",
                         hs->topic, (now - hs->last_reply_ns) / 1000000u, hs->replies);
}

static bool request(struct rdps_history_sub *hs, uint64_t now)
{
    if (send_request(hs, RDPS_HIST_REQUEST) != 0)
        return false;
    hs->requests++;
    hs->last_request_ns = now;
    return true;
}

static int rdps_history_sub_poll_impl(rdps_history_sub_t *hs)
{
    if (hs == NULL)
        return RDPS_EINVAL;
    uint64_t now = rdps__clock_monotonic_ns();
    uint64_t timeout = (uint64_t)hs->opts.timeout_ms * 1000000u;
    switch (hs->phase) {
    case PHASE_FIND:
        if (rdps_pub_ready(hs->request) && rdps_sub_ready(hs->reply) &&
            rdps_pub_subscriber_count(hs->request) > 0 && request(hs, now)) {
            hs->phase = PHASE_REPLAY;
            hs->last_reply_ns = now;
        } else if (now - hs->started_ns > timeout) {
            return give_up(hs, now);
        }
        return 0;
    case PHASE_REPLAY:
        if (hs->refused && !hs->refused_reported) {
            hs->refused_reported = true;
            hs->phase = PHASE_LIVE;
            return RDPS_EPROTO;
        }
        if (hs->replies == 0 && now - hs->last_request_ns > REQUEST_RETRY_NS &&
            rdps_pub_subscriber_count(hs->request) > 0)
            (void)request(hs, now);
        if (rdps__merge_waiting(&hs->merge, NULL, NULL, 0) > 0 &&
            ((!hs->sync_out && now - hs->last_sync_ns > SYNC_INTERVAL_NS) ||
             (hs->sync_out && now - hs->last_sync_ns > SYNC_RESEND_NS)) &&
            send_request(hs, RDPS_HIST_SYNC) == 0) {
            hs->sync_out = true;
            hs->last_sync_ns = now;
        }
        if (now - hs->last_reply_ns > timeout) /* the recorder went silent */
            return give_up(hs, now);
        if (!rdps__merge_all_live(&hs->merge) || hs->merge.nsessions == 0)
            return 0;
        rdps__merge_history_done(&hs->merge); /* new sessions go straight live */
        hs->phase = PHASE_LIVE;
        /* Live from this call on: an application that stops once it has every message it wanted
         * (the switch can deliver the last of them) must not read "still merging". */
        /* fall through */
    case PHASE_LIVE:
        if (!hs->cancel_sent && send_request(hs, RDPS_HIST_CANCEL) != RDPS_EAGAIN)
            hs->cancel_sent = true;
        return 1;
    }
    return 0;
}

void rdps_history_sub_destroy(rdps_history_sub_t *hs)
{
    if (hs == NULL)
        return;
    rdps_sub_destroy(hs->live);
    rdps_sub_destroy(hs->reply);
    rdps_pub_destroy(hs->request);
    rdps__merge_fini(&hs->merge);
    free(hs);
}

static int rdps_history_sub_create_sized_impl(rdps_ctx_t *ctx, const char *topic,
                                              rdps_msg_cb on_message, void *user,
                                              const rdps_history_opts *opts, size_t opts_size,
                                              rdps_history_sub_t **out)
{
    if (ctx == NULL || on_message == NULL || out == NULL || rdps_topic_id(topic) == 0)
        return rdps__set_err(RDPS_EINVAL, "history subscriber: a ctx, a valid topic name and a "
                                          "message callback are required");
    *out = NULL;
    struct rdps_history_sub *hs = calloc(1, sizeof(*hs));
    if (hs == NULL)
        return RDPS_ENOMEM;
    if (opts != NULL)
        memcpy(&hs->opts, opts, opts_size < sizeof(hs->opts) ? opts_size : sizeof(hs->opts));
    if (hs->opts.buffer_bytes == 0)
        hs->opts.buffer_bytes = 64u << 20;
    if (hs->opts.timeout_ms == 0)
        hs->opts.timeout_ms = 10000;
    if (hs->opts.event_user == NULL)
        hs->opts.event_user = user;
    if (hs->opts.buffer_bytes < 65536) {
        free(hs);
        return rdps__set_err(RDPS_EINVAL, "history subscriber: buffer_bytes below 64 KiB");
    }
    hs->ctx = ctx;
    snprintf(hs->topic, sizeof(hs->topic), "%s", topic);
    hs->topic_id = rdps_topic_id(topic);
    hs->on_message = on_message;
    hs->user = user;
    hs->started_ns = rdps__clock_monotonic_ns();
    while (hs->nonce == 0)
        if (getrandom(&hs->nonce, sizeof(hs->nonce), 0) != sizeof(hs->nonce))
            hs->nonce = hs->started_ns ^ (uintptr_t)hs;
    char name[48];
    int rc =
        rdps__merge_init(&hs->merge, hs->opts.buffer_bytes, RDPS_HIST_MAX_SESSIONS, deliver, hs);
    rdps_sub_opts reliable = {.reliable = 1};
    if (rc == 0) {
        rdps__hist_reply_topic(name, sizeof(name), hs->nonce);
        rc = rdps_sub_create(ctx, name, on_reply, hs, &reliable, &hs->reply);
    }
    if (rc == 0) {
        rdps__hist_request_topic(name, sizeof(name), hs->topic_id);
        rdps_pub_opts po = {.reliable = 1};
        rc = rdps_pub_create(ctx, name, &po, &hs->request);
    }
    if (rc == 0) {
        rdps_sub_opts live = {.reliable = 1, .on_event = on_live_event, .event_user = hs};
        rc = rdps_sub_create(ctx, topic, on_live, hs, &live, &hs->live);
    }
    if (rc != 0) {
        rdps_history_sub_destroy(hs);
        return rc;
    }
    *out = hs;
    return 0;
}

/* Public entry points: the thread's error message belongs to the last call (rdps_error.h). */

int rdps_history_sub_poll(rdps_history_sub_t *hs)
{
    rdps__api_enter();
    return rdps__api_return(rdps_history_sub_poll_impl(hs), "rdps_history_sub_poll");
}

int rdps_history_sub_create_sized(rdps_ctx_t *ctx, const char *topic, rdps_msg_cb on_message,
                                  void *user, const rdps_history_opts *opts, size_t opts_size,
                                  rdps_history_sub_t **out)
{
    rdps__api_enter();
    return rdps__api_return(
        rdps_history_sub_create_sized_impl(ctx, topic, on_message, user, opts, opts_size, out),
        "rdps_history_sub_create_sized");
}
