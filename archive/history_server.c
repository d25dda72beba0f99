/* SPDX-License-Identifier: BSD-2-Clause */
/* history_server.c - replay jobs of the recorder: read the recording, send the topic's records on
 * the requester's replay topic through a reliable publisher, answer SYNCs with CAUGHT_UP. */
#include "history_server.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdps_clock.h"
#include "rdps_error.h"

struct hist_topic {
    struct hist_server *hs;
    uint64_t topic_id;
};

struct job_session {
    uint32_t session, next;
};

struct hist_job {
    uint64_t nonce, topic_id;
    rdps_pub_t *pub;
    rdps_archive_reader_t *reader;
    uint8_t *pending; /* a record waiting for flow control */
    size_t pending_len, pending_cap;
    bool at_end, done;
    uint64_t created_ns; /* a replay nobody subscribes to within RDPS_HIST_ORPHAN_NS is dropped */
    struct job_session sessions[RDPS_HIST_MAX_SESSIONS];
    unsigned nsessions;
    /* a SYNC being answered */
    bool sync;
    uint32_t token;
    struct rdps_hist_need need[RDPS_HIST_NEED_MAX];
    uint16_t need_count;
    uint64_t sync_deadline, sync_mark; /* sync_mark: records taken once the needs were seen */
    bool marked;
};

static uint64_t mono_now(void)
{
    return rdps__clock_monotonic_ns();
}

static void job_free(struct hist_job *j)
{
    if (j == NULL)
        return;
    rdps_pub_destroy(j->pub);
    rdps_archive_reader_close(j->reader);
    free(j->pending);
    free(j);
}

static bool stage(struct hist_job *j, const struct rdps_hist_record *r, const void *data,
                  size_t len)
{
    size_t need = RDPS_HIST_RECORD_LEN + len;
    if (need > j->pending_cap) {
        uint8_t *p = realloc(j->pending, need);
        if (p == NULL)
            return false;
        j->pending = p;
        j->pending_cap = need;
    }
    rdps__hist_record_encode_header(j->pending, r);
    if (len > 0)
        memcpy(j->pending + RDPS_HIST_RECORD_LEN, data, len);
    j->pending_len = need;
    return true;
}

/* Sends the staged record: true when it went (or there was none). */
static bool flush_pending(struct hist_job *j)
{
    if (j->pending_len == 0)
        return true;
    int rc = rdps_pub_send(j->pub, j->pending, j->pending_len);
    if (rc == RDPS_EAGAIN || rc == RDPS_ENOTJOINED)
        return false;
    if (rc != 0)
        j->done = true; /* the requester is unreachable: give up */
    j->pending_len = 0;
    return true;
}

static void note_session(struct hist_job *j, uint32_t session, uint32_t next)
{
    for (unsigned i = 0; i < j->nsessions; i++)
        if (j->sessions[i].session == session) {
            j->sessions[i].next = next;
            return;
        }
    if (j->nsessions < RDPS_HIST_MAX_SESSIONS)
        j->sessions[j->nsessions++] = (struct job_session){session, next};
}

static void send_simple(struct hist_job *j, uint8_t kind, uint32_t value)
{
    struct rdps_hist_record r = {.kind = kind, .value = value};
    if (stage(j, &r, NULL, 0))
        (void)flush_pending(j);
}

static struct hist_received *received_of(struct hist_server *hs, uint64_t topic_id,
                                         uint32_t session, bool add)
{
    if (hs->last_hit < hs->nreceived && hs->received[hs->last_hit].session == session &&
        hs->received[hs->last_hit].topic_id == topic_id)
        return &hs->received[hs->last_hit];
    for (unsigned i = 0; i < hs->nreceived; i++)
        if (hs->received[i].topic_id == topic_id && hs->received[i].session == session) {
            hs->last_hit = i;
            return &hs->received[i];
        }
    if (!add)
        return NULL;
    /* Full: the oldest entry goes (a SYNC for it waits its deadline instead). */
    if (hs->nreceived == RDPS_HIST_MAX_SESSIONS) {
        memmove(hs->received, hs->received + 1,
                (RDPS_HIST_MAX_SESSIONS - 1) * sizeof(*hs->received));
        hs->nreceived--;
        hs->forgot = true;
    }
    hs->last_hit = hs->nreceived;
    struct hist_received *r = &hs->received[hs->nreceived++];
    *r = (struct hist_received){.topic_id = topic_id, .session = session};
    return r;
}

void hist_server_on_message(struct hist_server *hs, uint64_t topic_id, uint32_t session,
                            uint32_t end, uint64_t ts)
{
    struct hist_received *r = received_of(hs, topic_id, session, true);
    if ((int32_t)(end - r->end) > 0 || r->end == 0)
        r->end = end;
    if (r->first_ts == 0)
        r->first_ts = ts;
}

void hist_server_on_session(struct hist_server *hs, uint64_t topic_id, uint32_t session,
                            bool started, uint64_t ts)
{
    struct hist_received *r = received_of(hs, topic_id, session, true);
    if (r->first_ts == 0)
        r->first_ts = ts;
    r->ended = !started;
}

/* FROM_SESSION_START: the recorder time of the first record of the topic's sessions that have not
 * ended; 0 (the recording's start) when there is none or the table forgot some. */
static uint64_t open_sessions_start(const struct hist_server *hs, uint64_t topic_id)
{
    uint64_t first = UINT64_MAX;
    for (unsigned i = 0; i < hs->nreceived && !hs->forgot; i++) {
        const struct hist_received *r = &hs->received[i];
        if (r->topic_id == topic_id && !r->ended && r->first_ts != 0 && r->first_ts < first)
            first = r->first_ts;
    }
    return first == UINT64_MAX ? 0 : first;
}

/* Whether the recorder has received everything the SYNC's needs name. */
static bool needs_received(struct hist_server *hs, const struct hist_job *j)
{
    for (uint16_t i = 0; i < j->need_count; i++) {
        const struct hist_received *r = received_of(hs, j->topic_id, j->need[i].session, false);
        if (r == NULL || (int32_t)(r->end - j->need[i].seq) < 0)
            return false;
    }
    return true;
}

/* CAUGHT_UP: the state of every session the replay has met, then the token. */
static bool answer_sync(struct hist_job *j)
{
    for (unsigned i = 0; i < j->nsessions; i++) {
        struct rdps_hist_record r = {.kind = RDPS_HIST_SESSION_STATE,
                                     .session = j->sessions[i].session,
                                     .seq = j->sessions[i].next,
                                     .count = 1};
        if (!stage(j, &r, NULL, 0) || !flush_pending(j))
            return false; /* retried at the next poll (sessions re-sent: harmless) */
    }
    struct rdps_hist_record done = {.kind = RDPS_HIST_CAUGHT_UP, .value = j->token};
    if (!stage(j, &done, NULL, 0) || !flush_pending(j))
        return false;
    j->sync = false;
    return true;
}

static void pump(struct hist_server *hs, struct hist_job *j, uint64_t taken, uint64_t written,
                 uint64_t now)
{
    /* Only to a subscriber that is there: a request naming a reply topic nobody listens to
     * must not make the recorder multicast its recording (an amplifier). */
    if (rdps_pub_subscriber_count(j->pub) == 0) {
        if (now - j->created_ns > RDPS_HIST_ORPHAN_NS)
            j->done = true;
        return;
    }
    for (int budget = 0; budget < 4096 && !j->done; budget++) {
        if (!flush_pending(j))
            return;
        rdps_archive_record rec;
        int rc = rdps_archive_reader_next(j->reader, &rec);
        if (rc < 0 && rc != RDPS_EBADFRAME) {
            send_simple(j, RDPS_HIST_REFUSED, (uint32_t)rc);
            j->done = true;
            return;
        }
        if (rc == 0) {
            j->at_end = true;
            break;
        }
        if (rc < 0 || rec.topic_id != j->topic_id ||
            (rec.type != RDPS_ARCHIVE_MESSAGE && rec.type != RDPS_ARCHIVE_LOSS &&
             rec.type != RDPS_ARCHIVE_GAP))
            continue;
        uint32_t count = rec.count > 0 ? rec.count : 1;
        struct rdps_hist_record r = {
            .kind = rec.type == RDPS_ARCHIVE_MESSAGE ? RDPS_HIST_MESSAGE : RDPS_HIST_LOSS,
            .flags = (rec.flags & RDPS_ARCHIVE_F_RETRANSMITTED) ? 1 : 0,
            .session = rec.session_id,
            .seq = rec.seq,
            .count = count,
            .ordinal = rec.ordinal,
            .value = (uint32_t)rec.reason,
            .publisher_ts_ns = rec.publisher_ts_ns,
        };
        if (!stage(j, &r, rec.type == RDPS_ARCHIVE_MESSAGE ? rec.data : NULL,
                   rec.type == RDPS_ARCHIVE_MESSAGE ? rec.len : 0)) {
            j->done = true;
            return;
        }
        note_session(j, rec.session_id, rec.seq + count);
        j->at_end = false;
    }
    if (!j->sync || !j->at_end)
        return;
    /* The recording can hold what the subscriber needs once the recorder received it and wrote
     * everything it had taken by then; the deadline bounds the wait. */
    if (!j->marked && needs_received(hs, j)) {
        j->sync_mark = taken;
        j->marked = true;
    }
    if (j->marked && written < j->sync_mark)
        hs->flush_wanted = true;
    if ((j->marked && written >= j->sync_mark) || now >= j->sync_deadline)
        (void)answer_sync(j);
}

static void start_job(struct hist_server *hs, const struct rdps_hist_request *q)
{
    for (unsigned i = 0; i < RDPS_HIST_MAX_JOBS; i++)
        if (hs->jobs[i] != NULL && hs->jobs[i]->nonce == q->nonce)
            return; /* a repeated request */
    unsigned slot = RDPS_HIST_MAX_JOBS;
    for (unsigned i = 0; i < RDPS_HIST_MAX_JOBS && slot == RDPS_HIST_MAX_JOBS; i++)
        if (hs->jobs[i] == NULL)
            slot = i;
    struct hist_job *j = calloc(1, sizeof(*j));
    if (j == NULL)
        return;
    j->nonce = q->nonce;
    j->topic_id = q->topic_id;
    j->created_ns = mono_now();
    char reply[48];
    rdps__hist_reply_topic(reply, sizeof(reply), q->nonce);
    /* Paced by the requester alone (flow control min over its one receiver). */
    rdps_pub_opts po = {.reliable = 1, .flow = RDPS_FLOW_MIN};
    if (rdps_pub_create(hs->ctx, reply, &po, &j->pub) != 0) {
        job_free(j);
        return;
    }
    if (slot == RDPS_HIST_MAX_JOBS) {
        hs->refused++;
        send_simple(j, RDPS_HIST_REFUSED, (uint32_t)RDPS_EBUSY);
        job_free(j);
        return;
    }
    int rc = rdps_archive_reader_open(hs->dir, hs->recording_id, &j->reader);
    if (rc == 0) /* an index seek: the ctx's thread never reads the recording through here */
        rc = rdps_archive_reader_seek_time(j->reader, (q->flags & RDPS_HIST_F_FROM_SESSION_START)
                                                          ? open_sessions_start(hs, q->topic_id)
                                                          : q->from_ns);
    if (rc != 0) {
        send_simple(j, RDPS_HIST_REFUSED, (uint32_t)rc);
        job_free(j);
        return;
    }
    hs->jobs[slot] = j;
    hs->served++;
}

static void on_request(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct hist_topic *t = user;
    struct hist_server *hs = t->hs;
    struct rdps_hist_request q;
    (void)info;
    if (!rdps__hist_request_decode(data, len, &q) || q.topic_id != t->topic_id)
        return;
    if (q.kind == RDPS_HIST_REQUEST) {
        start_job(hs, &q);
        return;
    }
    for (unsigned i = 0; i < RDPS_HIST_MAX_JOBS; i++) {
        struct hist_job *j = hs->jobs[i];
        if (j == NULL || j->nonce != q.nonce)
            continue;
        if (q.kind == RDPS_HIST_CANCEL) {
            j->done = true;
        } else if (!j->sync || q.token != j->token) {
            j->sync = true;
            j->marked = false;
            j->token = q.token;
            j->need_count = q.need_count;
            memcpy(j->need, q.need, q.need_count * sizeof(q.need[0]));
            j->sync_deadline = mono_now() + RDPS_HIST_SYNC_WAIT_NS;
        }
    }
}

int hist_server_add_topic(struct hist_server *hs, uint64_t topic_id, rdps_sub_t **out)
{
    if (hs->ntopics == hs->topics_cap) {
        size_t ncap = hs->topics_cap ? hs->topics_cap * 2 : 16;
        struct hist_topic **p = realloc(hs->topics, ncap * sizeof(*p));
        if (p == NULL)
            return RDPS_ENOMEM;
        hs->topics = p;
        hs->topics_cap = ncap;
    }
    struct hist_topic *t = malloc(sizeof(*t));
    if (t == NULL)
        return RDPS_ENOMEM;
    *t = (struct hist_topic){hs, topic_id};
    char name[48];
    rdps__hist_request_topic(name, sizeof(name), topic_id);
    rdps_sub_opts so = {.reliable = 1};
    int rc = rdps_sub_create(hs->ctx, name, on_request, t, &so, out);
    if (rc != 0) {
        free(t);
        return rc;
    }
    hs->topics[hs->ntopics++] = t;
    return 0;
}

int hist_server_init(struct hist_server *hs, rdps_ctx_t *ctx, const char *dir, uint64_t id)
{
    memset(hs, 0, sizeof(*hs));
    hs->ctx = ctx;
    hs->recording_id = id;
    hs->dir = strdup(dir);
    return hs->dir != NULL ? 0 : RDPS_ENOMEM;
}

void hist_server_poll(struct hist_server *hs, uint64_t taken, uint64_t written, uint64_t now_ns)
{
    hs->flush_wanted = false;
    for (unsigned i = 0; i < RDPS_HIST_MAX_JOBS; i++) {
        struct hist_job *j = hs->jobs[i];
        if (j == NULL)
            continue;
        if (!j->done)
            pump(hs, j, taken, written, now_ns);
        if (j->done && rdps_pub_receivers_behind(j->pub) == 0) {
            job_free(j);
            hs->jobs[i] = NULL;
        }
    }
}

void hist_server_fini(struct hist_server *hs)
{
    for (unsigned i = 0; i < RDPS_HIST_MAX_JOBS; i++)
        job_free(hs->jobs[i]);
    for (size_t i = 0; i < hs->ntopics; i++)
        free(hs->topics[i]);
    free(hs->topics);
    free(hs->dir);
    memset(hs, 0, sizeof(*hs));
}
