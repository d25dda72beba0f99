/* SPDX-License-Identifier: BSD-2-Clause */
/* collect.c - the Python binding's collector: rdps message and event callbacks append to a batch
 * (collect.h says why). */
#include "collect.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* What a batch keeps between drains; a burst beyond it is given back at the next reset. */
#define KEEP_ARENA_BYTES (4u << 20)
#define KEEP_ENTRIES     65536u

struct pyrdps_sink {
    struct pyrdps_batch *batch;
    uint32_t token;
    struct pyrdps_sink *next;
};

struct pyrdps_batch *pyrdps_batch_new(void)
{
    return calloc(1, sizeof(struct pyrdps_batch));
}

static void batch_release_buffers(struct pyrdps_batch *b)
{
    free(b->token);
    free(b->offset);
    free(b->length);
    free(b->record);
    free(b->arena);
    free(b->infos);
    free(b->events);
    b->token = NULL;
    b->record = NULL;
    b->offset = b->length = NULL;
    b->arena = NULL;
    b->infos = NULL;
    b->events = NULL;
    b->capacity = b->arena_capacity = b->info_capacity = b->event_capacity = 0;
}

void pyrdps_batch_free(struct pyrdps_batch *batch)
{
    if (batch == NULL)
        return;
    batch_release_buffers(batch);
    while (batch->sinks != NULL) {
        struct pyrdps_sink *next = batch->sinks->next;
        free(batch->sinks);
        batch->sinks = next;
    }
    free(batch);
}

void pyrdps_batch_reset(struct pyrdps_batch *batch)
{
    batch->count = batch->arena_used = batch->info_count = batch->event_count = 0;
    if (batch->arena_capacity > KEEP_ARENA_BYTES || batch->capacity > KEEP_ENTRIES)
        batch_release_buffers(batch);
}

/* Grows *array (elem bytes each) to hold `need`; 0, or -1 when out of memory (left as it was). */
static int grow(void **array, size_t *capacity, size_t need, size_t elem, size_t first)
{
    if (need <= *capacity)
        return 0;
    size_t cap = *capacity ? *capacity : first;
    while (cap < need) {
        if (cap > SIZE_MAX / 2 / elem)
            return -1;
        cap *= 2;
    }
    void *p = realloc(*array, cap * elem);
    if (p == NULL)
        return -1;
    *array = p;
    *capacity = cap;
    return 0;
}

/* Room for one more entry in the four parallel arrays (grown together: one capacity). */
static int reserve_entry(struct pyrdps_batch *b)
{
    if (b->count < b->capacity)
        return 0;
    size_t cap = b->capacity ? b->capacity * 2 : 256;
    uint32_t *token = realloc(b->token, cap * sizeof(*token));
    if (token == NULL)
        return -1;
    b->token = token;
    uint64_t *offset = realloc(b->offset, cap * sizeof(*offset));
    if (offset == NULL)
        return -1;
    b->offset = offset;
    uint64_t *length = realloc(b->length, cap * sizeof(*length));
    if (length == NULL)
        return -1;
    b->length = length;
    uint32_t *record = realloc(b->record, cap * sizeof(*record));
    if (record == NULL)
        return -1;
    b->record = record;
    b->capacity = cap;
    return 0;
}

/* Copies len bytes into the arena; their offset, or -1 when out of memory. */
static int64_t arena_append(struct pyrdps_batch *b, const void *data, size_t len)
{
    if (len > SIZE_MAX - b->arena_used ||
        grow((void **)&b->arena, &b->arena_capacity, b->arena_used + len, 1, 65536) != 0)
        return -1;
    size_t at = b->arena_used;
    if (len > 0)
        memcpy(b->arena + at, data, len);
    b->arena_used += len;
    return (int64_t)at;
}

static void copy_source(const rdps_source *src, uint32_t *qpn, uint16_t *lid, uint8_t *has_gid,
                        uint8_t gid[16])
{
    *qpn = src->qpn;
    *lid = src->lid;
    *has_gid = src->has_gid;
    memcpy(gid, src->gid, 16);
}

static void on_message(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct pyrdps_sink *sink = user;
    struct pyrdps_batch *b = sink->batch;
    if (reserve_entry(b) != 0 ||
        grow((void **)&b->infos, &b->info_capacity, b->info_count + 1, sizeof(*b->infos), 256)) {
        b->dropped++;
        return;
    }
    int64_t at = arena_append(b, data, len);
    if (at < 0) {
        b->dropped++;
        return;
    }
    struct pyrdps_info *rec = &b->infos[b->info_count];
    memset(rec, 0, sizeof(*rec));
    rec->topic_id = info->topic_id;
    rec->publisher_ts_ns = info->publisher_ts_ns;
    rec->session_id = info->session_id;
    rec->seq = info->seq;
    rec->ordinal = info->ordinal;
    rec->fragments = info->fragments;
    rec->retransmitted = info->retransmitted;
    copy_source(&info->source, &rec->qpn, &rec->lid, &rec->has_gid, rec->gid);
    b->token[b->count] = sink->token;
    b->offset[b->count] = (uint64_t)at;
    b->length[b->count] = len;
    b->record[b->count] = (uint32_t)b->info_count;
    b->info_count++;
    b->count++;
    b->writer = (unsigned long)pthread_self();
}

static void on_event(void *user, const rdps_event *ev)
{
    struct pyrdps_sink *sink = user;
    struct pyrdps_batch *b = sink->batch;
    if (reserve_entry(b) != 0 ||
        grow((void **)&b->events, &b->event_capacity, b->event_count + 1, sizeof(*b->events), 16)) {
        b->dropped++;
        return;
    }
    const char *other = ev->other_topic ? ev->other_topic : "";
    size_t other_len = strlen(other);
    int64_t at = arena_append(b, other, other_len);
    if (at < 0) {
        b->dropped++;
        return;
    }
    struct pyrdps_event *rec = &b->events[b->event_count];
    memset(rec, 0, sizeof(*rec));
    rec->type = (int32_t)ev->type;
    rec->reason = ev->reason;
    rec->session_id = ev->session_id;
    rec->first_seq = ev->first_seq;
    rec->count = ev->count;
    rec->receiver_id = ev->receiver_id;
    rec->first_ordinal = ev->first_ordinal;
    rec->msg_count = ev->msg_count;
    copy_source(&ev->source, &rec->qpn, &rec->lid, &rec->has_gid, rec->gid);
    b->token[b->count] = sink->token | PYRDPS_EVENT_BIT;
    b->offset[b->count] = (uint64_t)at;
    b->length[b->count] = other_len;
    b->record[b->count] = (uint32_t)b->event_count;
    b->event_count++;
    b->count++;
    b->writer = (unsigned long)pthread_self();
}

static struct pyrdps_sink *sink_new(struct pyrdps_batch *batch, uint32_t token)
{
    struct pyrdps_sink *sink = calloc(1, sizeof(*sink));
    if (sink == NULL)
        return NULL;
    sink->batch = batch;
    sink->token = token;
    sink->next = batch->sinks;
    batch->sinks = sink;
    return sink;
}

void pyrdps_sink_forget(struct pyrdps_batch *batch, uint32_t token)
{
    for (struct pyrdps_sink **at = &batch->sinks; *at != NULL;) {
        struct pyrdps_sink *sink = *at;
        if (sink->token == token) {
            *at = sink->next;
            free(sink);
        } else {
            at = &sink->next;
        }
    }
}

int pyrdps_pub_create(rdps_ctx_t *ctx, const char *topic, const rdps_pub_opts *opts,
                      struct pyrdps_batch *batch, uint32_t token, int events, rdps_pub_t **out)
{
    if (batch == NULL || opts == NULL)
        return RDPS_EINVAL;
    rdps_pub_opts o = *opts;
    if (events) {
        struct pyrdps_sink *sink = sink_new(batch, token);
        if (sink == NULL)
            return RDPS_ENOMEM;
        o.on_event = on_event;
        o.event_user = sink;
    }
    return rdps_pub_create(ctx, topic, &o, out);
}

int pyrdps_sub_create(rdps_ctx_t *ctx, const char *topic, const rdps_sub_opts *opts,
                      struct pyrdps_batch *batch, uint32_t token, int events, rdps_sub_t **out)
{
    if (batch == NULL || opts == NULL)
        return RDPS_EINVAL;
    struct pyrdps_sink *sink = sink_new(batch, token);
    if (sink == NULL)
        return RDPS_ENOMEM;
    rdps_sub_opts o = *opts;
    o.on_event = events ? on_event : NULL;
    o.event_user = NULL;
    return rdps_sub_create(ctx, topic, on_message, sink, &o, out);
}
