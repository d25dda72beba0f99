/* SPDX-License-Identifier: BSD-2-Clause */
/* recorder.c - rdps_recorder: reliable subscribers whose messages and events go through a bounded
 * queue to a writer thread that appends them to a recording (arc_writer.h). */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdps/rdps_archive.h>

#include "arc_writer.h"
#include "history_server.h"
#include "rdps_clock.h"
#include "rdps_error.h"
#include "record_queue.h"

/*
 * Threads. Everything that touches the ctx (subscribers, callbacks, events, poll) runs on the
 * ctx's thread; the writer thread touches only the queue, the writer and the files. The topic
 * table is preallocated (max_topics) and an entry is complete before the first queue entry that
 * names it is published, so the writer reads names without a lock. Figures the ctx thread reads
 * from the writer go through `shared` under a mutex, refreshed after each drained batch.
 */
static inline uint32_t msg_ordinal(const rdps_msg_info *info)
{
    return info->ordinal;
}
static inline uint32_t loss_messages(const rdps_event *ev)
{
    return ev->msg_count;
}

struct rec_topic {
    char name[RDPS_TOPIC_NAME_MAX + 1];
    uint64_t id;
    uint32_t index;
    rdps_sub_t *sub;
    rdps_sub_t *history_sub; /* requests for its history (history_server.h) */
    struct rdps_recorder *rec;
};

/* A queue entry: the record (its body follows), and its topic's index. */
struct qentry {
    uint32_t topic; /* UINT32_MAX: none */
    uint32_t reserved;
    struct rdps_arc_record r;
};

#define REFUSED_MAX 16

struct rdps_recorder {
    rdps_ctx_t *ctx;
    rdps_recorder_opts opts;
    char *dir, *prefix;
    struct rec_topic *topics;
    uint32_t ntopics, max_topics, topics_reported;
    char refused[REFUSED_MAX][RDPS_TOPIC_NAME_MAX + 1];
    int refused_err[REFUSED_MAX];
    unsigned nrefused;
    char *recovered; /* writer_open's report, raised at the first poll */

    struct record_queue q;
    struct rdps_arc_writer *w;
    pthread_t thread;
    bool thread_started;
    _Atomic int stop;
    _Atomic int error;
    _Atomic int flush_now; /* a history SYNC waits for the chunk being built */
    struct hist_server hist;
    bool serving;
    bool stopped_reported;
    bool watching; /* the ctx's publisher watch is ours */

    /* ctx thread */
    uint64_t records, messages, message_bytes;
    uint32_t last_seq, last_session; /* the datagram last_arrival_ns was read for */
    uint64_t last_topic, last_arrival_ns;
    uint64_t loss_events, gap_events, sessions_started, sessions_ended;
    uint64_t overrun_messages, overrun_events, overrun_reported;
    /* An overrun in progress: dropped messages not yet marked in the queue. */
    uint64_t drop_count, drop_bytes, drop_first_ts, drop_last_ts;

    pthread_mutex_t shared_lock;
    struct rdps_arc_writer_stats shared;
    int writer_error;
};

static void writer_publish_stats(struct rdps_recorder *rec)
{
    pthread_mutex_lock(&rec->shared_lock);
    rec->shared = *rdps__arc_writer_stats(rec->w);
    pthread_mutex_unlock(&rec->shared_lock);
}

static void *writer_main(void *arg)
{
    struct rdps_recorder *rec = arg;
    for (;;) {
        bool stopping = atomic_load(&rec->stop);
        size_t len;
        const void *p;
        /* One clock read per batch drained, not per record (a system call on hosts whose clock
         * source the vDSO cannot read): the chunk's flush deadline starts at most a batch early. */
        uint64_t now = rdps__clock_monotonic_ns();
        while ((p = record_queue_peek(&rec->q, &len)) != NULL) {
            struct qentry e;
            memcpy(&e, p, sizeof(e));
            e.r.body = (const uint8_t *)p + sizeof(e);
            const char *topic = e.topic != UINT32_MAX ? rec->topics[e.topic].name : NULL;
            if (rdps__arc_writer_error(rec->w) == 0)
                (void)rdps__arc_writer_append(rec->w, &e.r, topic, now);
            record_queue_release(&rec->q);
        }
        now = rdps__clock_monotonic_ns();
        int err = rdps__arc_writer_tick(rec->w, now);
        if (err == 0 && atomic_exchange(&rec->flush_now, 0))
            err = rdps__arc_writer_flush(rec->w, now);
        if (stopping && err == 0)
            err = rdps__arc_writer_flush(rec->w, now);
        if (err != 0)
            atomic_store(&rec->error, err);
        writer_publish_stats(rec);
        if (stopping)
            return NULL;
        uint64_t deadline = rdps__arc_writer_deadline(rec->w);
        bool pending = deadline != UINT64_MAX;
        /* Nothing pending: sleep until the first entry (a second at most, to notice a stop). */
        uint64_t cap = now + 1000000000ull;
        record_queue_wait(&rec->q, deadline < cap ? deadline : cap, !pending);
    }
}

static uint64_t realtime_ns(void)
{
    return rdps__clock_realtime_ns();
}

/* Queues a record (ctx thread). false: the queue is full (the caller counts an overrun). */
static bool enqueue(struct rdps_recorder *rec, const struct rdps_arc_record *r, uint32_t topic)
{
    struct qentry *e = record_queue_reserve(&rec->q, sizeof(*e) + r->body_len);
    if (e == NULL)
        return false;
    e->topic = topic;
    e->reserved = 0;
    e->r = *r;
    e->r.body = NULL;
    if (r->body_len > 0)
        memcpy((uint8_t *)(e + 1), r->body, r->body_len);
    record_queue_publish(&rec->q);
    rec->records++;
    return true;
}

/* An overrun ends when the queue has room for its marker again: the marker goes in first, so it
 * sits where the messages would have been. */
static bool flush_overrun(struct rdps_recorder *rec)
{
    if (rec->drop_count == 0)
        return true;
    uint8_t body[RDPS_ARC_OVERRUN_BODY_LEN];
    for (int i = 0; i < 8; i++) {
        body[i] = (uint8_t)(rec->drop_bytes >> (8 * i));
        body[8 + i] = (uint8_t)(rec->drop_first_ts >> (8 * i));
        body[16 + i] = (uint8_t)(rec->drop_last_ts >> (8 * i));
    }
    struct rdps_arc_record r = {
        .type = RDPS_ARC_REC_OVERRUN,
        .count = rec->drop_count > UINT32_MAX ? UINT32_MAX : (uint32_t)rec->drop_count,
        .publisher_ts_ns = rec->drop_first_ts,
        .recorder_ts_ns = realtime_ns(),
        .body = body,
        .body_len = sizeof(body),
    };
    if (!enqueue(rec, &r, UINT32_MAX))
        return false;
    rec->overrun_events++;
    rec->drop_count = rec->drop_bytes = 0;
    return true;
}

/* Records r, or counts it dropped: a stopped writer records nothing more; a full queue drops
 * the messages (and events) until its marker fits. */
static void record(struct rdps_recorder *rec, const struct rdps_arc_record *r, uint32_t topic)
{
    if (atomic_load_explicit(&rec->error, memory_order_relaxed) != 0)
        return;
    if (flush_overrun(rec) && enqueue(rec, r, topic))
        return;
    if (rec->drop_count == 0)
        rec->drop_first_ts = r->recorder_ts_ns;
    rec->drop_last_ts = r->recorder_ts_ns;
    if (r->type == RDPS_ARC_REC_MESSAGE) {
        rec->drop_count++;
        rec->drop_bytes += r->body_len;
        rec->overrun_messages++;
    }
}

/* The recorder's time of a message: messages batched in one datagram (same session and seq)
 * arrived together and share the first one's clock read. */
static uint64_t arrival_ns(struct rdps_recorder *rec, const rdps_msg_info *info)
{
    if (info->seq != rec->last_seq || info->session_id != rec->last_session ||
        info->topic_id != rec->last_topic || rec->last_arrival_ns == 0) {
        rec->last_topic = info->topic_id;
        rec->last_seq = info->seq;
        rec->last_session = info->session_id;
        rec->last_arrival_ns = realtime_ns();
    }
    return rec->last_arrival_ns;
}

static void on_message(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct rec_topic *t = user;
    struct rdps_recorder *rec = t->rec;
    struct rdps_arc_record r = {
        .type = RDPS_ARC_REC_MESSAGE,
        .flags = info->retransmitted ? RDPS_ARC_RF_RETRANSMITTED : 0,
        .topic_id = t->id,
        .session_id = info->session_id,
        .seq = info->seq,
        .ordinal = msg_ordinal(info),
        .count = info->fragments,
        .publisher_ts_ns = info->publisher_ts_ns,
        .recorder_ts_ns = arrival_ns(rec, info),
        .body = data,
        .body_len = (uint32_t)len,
    };
    rec->messages++;
    rec->message_bytes += len;
    record(rec, &r, t->index);
    if (rec->serving)
        hist_server_on_message(&rec->hist, t->id, info->session_id, info->seq + info->fragments,
                               r.recorder_ts_ns);
}

static void on_event(void *user, const rdps_event *ev)
{
    struct rec_topic *t = user;
    struct rdps_recorder *rec = t->rec;
    uint8_t body[RDPS_ARC_SESSION_BODY_LEN];
    struct rdps_arc_record r = {
        .topic_id = t->id,
        .session_id = ev->session_id,
        .recorder_ts_ns = realtime_ns(),
        .body = body,
    };
    switch (ev->type) {
    case RDPS_EVENT_LOSS:
    case RDPS_EVENT_GAP: {
        uint32_t messages = loss_messages(ev);
        r.type = ev->type == RDPS_EVENT_LOSS ? RDPS_ARC_REC_LOSS : RDPS_ARC_REC_GAP;
        r.seq = ev->first_seq;
        r.count = ev->count;
        for (int i = 0; i < 4; i++) {
            body[i] = (uint8_t)((uint32_t)ev->reason >> (8 * i));
            body[4 + i] = (uint8_t)(messages >> (8 * i));
        }
        r.body_len = RDPS_ARC_LOSS_BODY_LEN;
        if (ev->type == RDPS_EVENT_LOSS)
            rec->loss_events++;
        else
            rec->gap_events++;
        break;
    }
    case RDPS_EVENT_PUBLISHER_SEEN:
    case RDPS_EVENT_PUBLISHER_GONE: {
        struct rdps_arc_source src = {
            .qpn = ev->source.qpn, .lid = ev->source.lid, .has_gid = ev->source.has_gid};
        memcpy(src.gid, ev->source.gid, sizeof(src.gid));
        r.type = ev->type == RDPS_EVENT_PUBLISHER_SEEN ? RDPS_ARC_REC_SESSION_START
                                                       : RDPS_ARC_REC_SESSION_END;
        rdps__arc_session_body_encode(body, &src, (uint32_t)ev->reason);
        r.body_len = RDPS_ARC_SESSION_BODY_LEN;
        if (ev->type == RDPS_EVENT_PUBLISHER_SEEN)
            rec->sessions_started++;
        else
            rec->sessions_ended++;
        if (rec->serving)
            hist_server_on_session(&rec->hist, t->id, ev->session_id,
                                   ev->type == RDPS_EVENT_PUBLISHER_SEEN, r.recorder_ts_ns);
        break;
    }
    default:
        return;
    }
    record(rec, &r, t->index);
}

/* Subscribes to one more topic: 0, or a negative code (the topic cap: RDPS_ENOSPC). */
static int add_topic(struct rdps_recorder *rec, const char *name)
{
    uint64_t id = rdps_topic_id(name);
    if (id == 0)
        return rdps__set_err(RDPS_EINVAL, "recorder: invalid topic name '%s'", name);
    for (uint32_t i = 0; i < rec->ntopics; i++)
        if (rec->topics[i].id == id)
            return 0;
    if (rec->ntopics >= rec->max_topics)
        return rdps__set_err(RDPS_ENOSPC, "recorder: %u topics already (max_topics)",
                             rec->max_topics);
    struct rec_topic *t = &rec->topics[rec->ntopics];
    memset(t, 0, sizeof(*t));
    snprintf(t->name, sizeof(t->name), "%s", name);
    t->id = id;
    t->index = rec->ntopics;
    t->rec = rec;
    rdps_sub_opts so = {
        .on_event = on_event,
        .reliable = !rec->opts.reliable_off,
        .from_oldest = !rec->opts.reliable_off && rec->opts.from_oldest,
    };
    int rc = rdps_sub_create(rec->ctx, name, on_message, t, &so, &t->sub);
    if (rc == 0 && rec->serving) {
        rc = hist_server_add_topic(&rec->hist, id, &t->history_sub);
        if (rc != 0) {
            rdps_sub_destroy(t->sub);
            t->sub = NULL;
        }
    }
    if (rc != 0)
        return rc;
    rec->ntopics++;
    return 0;
}

static void on_publisher(void *user, const char *topic, const rdps_source *source)
{
    struct rdps_recorder *rec = user;
    (void)source;
    int rc = add_topic(rec, topic);
    if (rc != 0 && rec->nrefused < REFUSED_MAX) {
        snprintf(rec->refused[rec->nrefused], sizeof(rec->refused[0]), "%s", topic);
        rec->refused_err[rec->nrefused++] = rc;
    }
}

static int check_opts(rdps_recorder_opts *o)
{
    if (o->dir == NULL || o->dir[0] == '\0')
        return rdps__set_err(RDPS_EINVAL, "recorder: dir is required");
    if (o->topic_count == 0 && o->prefix == NULL)
        return rdps__set_err(RDPS_EINVAL, "recorder: no topic and no prefix to record");
    if (o->topic_count > 0 && o->topics == NULL)
        return rdps__set_err(RDPS_EINVAL, "recorder: topic_count without topics");
    if ((unsigned)o->compression > RDPS_ARCHIVE_NONE)
        return rdps__set_err(RDPS_EINVAL, "recorder: compression %d unknown", o->compression);
    if (o->max_topics == 0)
        o->max_topics = 4096;
    if (o->zstd_level == 0)
        o->zstd_level = 1;
    if (o->zstd_level < -7 || o->zstd_level > 19)
        return rdps__set_err(RDPS_EINVAL, "recorder: zstd_level %d outside -7..19", o->zstd_level);
    if (o->chunk_bytes == 0)
        o->chunk_bytes = 64 * 1024;
    if (o->chunk_bytes < 4096 || o->chunk_bytes > 16u * 1024 * 1024)
        return rdps__set_err(RDPS_EINVAL, "recorder: chunk_bytes %" PRIu32 " outside 4 KiB..16 MiB",
                             o->chunk_bytes);
    if (o->flush_ms == 0)
        o->flush_ms = 100;
    if (o->fsync_ms == 0)
        o->fsync_ms = 1000;
    if (o->segment_bytes == 0)
        o->segment_bytes = 256ull * 1024 * 1024;
    if (o->segment_bytes < 1024 * 1024)
        return rdps__set_err(RDPS_EINVAL, "recorder: segment_bytes below 1 MiB");
    if (o->queue_bytes == 0)
        o->queue_bytes = 64u * 1024 * 1024;
    if (o->queue_bytes < 1024 * 1024)
        return rdps__set_err(RDPS_EINVAL, "recorder: queue_bytes below 1 MiB");
    if (o->max_topics > 1u << 20)
        return rdps__set_err(RDPS_EINVAL, "recorder: max_topics above 2^20");
    return 0;
}

/* "topics a,b" / "prefix p" for the catalog. */
static void spec_text(const rdps_recorder_opts *o, char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    if (o->prefix != NULL)
        used += (size_t)snprintf(out, cap, "prefix %s", o->prefix);
    for (size_t i = 0; i < o->topic_count && used < cap; i++)
        used += (size_t)snprintf(out + used, cap - used, "%s%s",
                                 i == 0 ? (used ? " topics " : "topics ") : ",", o->topics[i]);
}

void rdps_recorder_destroy(rdps_recorder_t *rec)
{
    if (rec == NULL)
        return;
    if (rec->serving)
        hist_server_fini(&rec->hist);
    for (uint32_t i = 0; i < rec->ntopics; i++) {
        rdps_sub_destroy(rec->topics[i].sub);
        rdps_sub_destroy(rec->topics[i].history_sub);
    }
    if (rec->watching) /* (a failed create leaves the thread's error message alone) */
        rdps_ctx_watch_publishers(rec->ctx, "", NULL, NULL);
    /* The last overrun's marker waits for room: the writer is draining the queue. */
    while (rec->thread_started && atomic_load(&rec->error) == 0 && !flush_overrun(rec)) {
        record_queue_wake(&rec->q);
        nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    }
    if (rec->thread_started) {
        atomic_store(&rec->stop, 1);
        record_queue_wake(&rec->q);
        pthread_join(rec->thread, NULL);
    }
    rdps__arc_writer_close(rec->w, rdps__clock_realtime_ns());
    record_queue_fini(&rec->q);
    pthread_mutex_destroy(&rec->shared_lock);
    free(rec->topics);
    free(rec->recovered);
    free(rec->dir);
    free(rec->prefix);
    free(rec);
}

static int rdps_recorder_create_sized_impl(rdps_ctx_t *ctx, const rdps_recorder_opts *opts,
                                           size_t opts_size, rdps_recorder_t **out)
{
    if (ctx == NULL || opts == NULL || out == NULL || opts_size == 0)
        return rdps__set_err(RDPS_EINVAL, "recorder: NULL argument");
    *out = NULL;
    rdps_recorder_opts o = {0};
    memcpy(&o, opts, opts_size < sizeof(o) ? opts_size : sizeof(o));
    int rc = check_opts(&o);
    if (rc != 0)
        return rc;
    struct rdps_recorder *rec = calloc(1, sizeof(*rec));
    if (rec == NULL)
        return RDPS_ENOMEM;
    pthread_mutex_init(&rec->shared_lock, NULL);
    rec->ctx = ctx;
    rec->max_topics = o.max_topics;
    rec->dir = strdup(o.dir);
    rec->prefix = o.prefix != NULL ? strdup(o.prefix) : NULL;
    rec->topics = calloc(o.max_topics, sizeof(*rec->topics));
    rec->recovered = malloc(8192);
    if (rec->dir == NULL || rec->topics == NULL || rec->recovered == NULL ||
        (o.prefix != NULL && rec->prefix == NULL)) {
        rdps_recorder_destroy(rec);
        return RDPS_ENOMEM;
    }
    o.dir = rec->dir;
    o.prefix = rec->prefix;
    o.topics = NULL; /* not kept */
    rec->opts = o;
    char spec[RDPS_ARC_CE_SPEC_MAX + 1];
    spec_text(opts->topic_count > 0 ? opts : &o, spec, sizeof(spec));
    struct rdps_arc_writer_opts wo = {
        .dir = o.dir,
        .codec = o.compression == RDPS_ARCHIVE_NONE ? RDPS_ARC_CODEC_NONE : RDPS_ARC_CODEC_ZSTD,
        .level = o.zstd_level,
        .chunk_bytes = o.chunk_bytes,
        .flush_ns = (uint64_t)o.flush_ms * 1000000u,
        .fsync_ns = o.fsync_ms == UINT32_MAX ? UINT64_MAX : (uint64_t)o.fsync_ms * 1000000u,
        .segment_bytes = o.segment_bytes,
        .segment_ns = (uint64_t)o.segment_s * 1000000000u,
        .retain_bytes = o.retain_bytes,
        .retain_ns = (uint64_t)o.retain_s * 1000000000u,
        .spec = spec,
        .max_topics = o.max_topics,
    };
    rc = record_queue_init(&rec->q, o.queue_bytes);
    if (rc == 0)
        rc = rdps__arc_writer_open(&rec->w, &wo, rdps__clock_realtime_ns(), rec->recovered, 8192);
    if (rc == 0 && !o.history_off) {
        rc = hist_server_init(&rec->hist, ctx, rec->dir,
                              rdps__arc_writer_stats(rec->w)->recording_id);
        rec->serving = rc == 0;
    }
    if (rc == 0) {
        rec->shared = *rdps__arc_writer_stats(rec->w);
        rc = -pthread_create(&rec->thread, NULL, writer_main, rec);
        if (rc != 0)
            rdps__set_err(rc, "recorder: cannot start the writer thread");
        rec->thread_started = rc == 0;
    }
    for (size_t i = 0; rc == 0 && i < opts->topic_count; i++)
        rc = add_topic(rec, opts->topics[i]);
    if (rc == 0 && rec->prefix != NULL) {
        rc = rdps_ctx_watch_publishers(ctx, rec->prefix, on_publisher, rec);
        rec->watching = rc == 0;
    }
    if (rc != 0) {
        rdps_recorder_destroy(rec);
        return rc;
    }
    rec->topics_reported = rec->ntopics; /* events name the topics the prefix adds */
    *out = rec;
    return 0;
}

static void raise_event(struct rdps_recorder *rec, const rdps_recorder_event *ev)
{
    if (rec->opts.on_event != NULL)
        rec->opts.on_event(rec->opts.event_user, ev);
}

static int rdps_recorder_poll_impl(rdps_recorder_t *rec)
{
    if (rec == NULL)
        return RDPS_EINVAL;
    if (rec->recovered[0] != '\0') {
        rdps_recorder_event ev = {.type = RDPS_RECORDER_RECOVERED, .detail = rec->recovered};
        raise_event(rec, &ev);
        rec->recovered[0] = '\0';
    }
    for (; rec->topics_reported < rec->ntopics; rec->topics_reported++) {
        rdps_recorder_event ev = {.type = RDPS_RECORDER_TOPIC_ADDED,
                                  .topic = rec->topics[rec->topics_reported].name};
        raise_event(rec, &ev);
    }
    for (unsigned i = 0; i < rec->nrefused; i++) {
        rdps_recorder_event ev = {.type = RDPS_RECORDER_TOPIC_REFUSED,
                                  .topic = rec->refused[i],
                                  .error = rec->refused_err[i]};
        raise_event(rec, &ev);
    }
    rec->nrefused = 0;
    (void)flush_overrun(rec);
    if (rec->serving) {
        pthread_mutex_lock(&rec->shared_lock);
        uint64_t written = rec->shared.written_records;
        pthread_mutex_unlock(&rec->shared_lock);
        hist_server_poll(&rec->hist, rec->records, written, rdps__clock_monotonic_ns());
        if (rec->hist.flush_wanted && !atomic_exchange(&rec->flush_now, 1))
            record_queue_wake(&rec->q);
    }
    if (rec->overrun_messages > rec->overrun_reported) {
        rdps_recorder_event ev = {.type = RDPS_RECORDER_OVERRUN,
                                  .count = rec->overrun_messages - rec->overrun_reported};
        rec->overrun_reported = rec->overrun_messages;
        raise_event(rec, &ev);
    }
    int err = atomic_load(&rec->error);
    if (err != 0 && !rec->stopped_reported) {
        rec->stopped_reported = true;
        rdps_recorder_event ev = {.type = RDPS_RECORDER_STOPPED,
                                  .error = err,
                                  .detail = err == RDPS_ENOSPC ? "disk full" : rdps_strerror(err)};
        raise_event(rec, &ev);
    }
    return err;
}

static int rdps_recorder_stats_sized_impl(const rdps_recorder_t *rec, rdps_recorder_stats *out,
                                          size_t size)
{
    if (rec == NULL || out == NULL)
        return RDPS_EINVAL;
    struct rdps_recorder *r = (struct rdps_recorder *)rec;
    rdps_recorder_stats s = {0};
    pthread_mutex_lock(&r->shared_lock);
    struct rdps_arc_writer_stats w = r->shared;
    pthread_mutex_unlock(&r->shared_lock);
    s.recording_id = w.recording_id;
    s.records = r->records;
    s.messages = r->messages;
    s.message_bytes = r->message_bytes;
    s.written_records = w.written_records;
    s.written_messages = w.written_messages;
    s.chunks = w.chunks;
    s.segments = w.segments;
    s.stored_bytes = w.stored_bytes;
    s.raw_bytes = w.raw_bytes;
    s.loss_events = r->loss_events;
    s.gap_events = r->gap_events;
    s.sessions_started = r->sessions_started;
    s.sessions_ended = r->sessions_ended;
    s.overrun_messages = r->overrun_messages;
    s.overrun_events = r->overrun_events;
    s.queue_high_water = r->q.high_water;
    s.fsyncs = w.fsyncs;
    s.segments_deleted = w.segments_deleted;
    s.topics = r->ntopics;
    s.replays_served = r->hist.served;
    s.replays_refused = r->hist.refused;
    s.error = atomic_load(&r->error);
    memcpy(out, &s, size < sizeof(s) ? size : sizeof(s));
    return 0;
}

/* Public entry points: the thread's error message belongs to the last call (rdps_error.h). */

int rdps_recorder_create_sized(rdps_ctx_t *ctx, const rdps_recorder_opts *opts, size_t opts_size,
                               rdps_recorder_t **out)
{
    rdps__api_enter();
    return rdps__api_return(rdps_recorder_create_sized_impl(ctx, opts, opts_size, out),
                            "rdps_recorder_create_sized");
}

int rdps_recorder_poll(rdps_recorder_t *rec)
{
    rdps__api_enter();
    return rdps__api_return(rdps_recorder_poll_impl(rec), "rdps_recorder_poll");
}

int rdps_recorder_stats_sized(const rdps_recorder_t *rec, rdps_recorder_stats *out, size_t size)
{
    rdps__api_enter();
    return rdps__api_return(rdps_recorder_stats_sized_impl(rec, out, size),
                            "rdps_recorder_stats_sized");
}
