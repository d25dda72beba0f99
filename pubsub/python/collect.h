/* SPDX-License-Identifier: BSD-2-Clause */
/* collect.h - the Python binding's message and event collector: rdps callbacks write into a batch
 * the binding drains after each call, so no Python code ever runs inside an rdps callback. */
#ifndef RDPS_PYTHON_COLLECT_H
#define RDPS_PYTHON_COLLECT_H

#include <stddef.h>
#include <stdint.h>

#include <rdps/rdps.h>

/*
 * Why a batch and not a Python callback per message: a callback into Python from C takes the
 * GIL, builds argument objects and must not raise through rdps; collecting keeps rdps_ctx_poll
 * free of Python (it runs with the GIL released), lets a Python callback raise, close the ctx or
 * poll again without re-entering rdps, and lets the binding read a whole poll's messages with a
 * few bulk copies. The cost is one copy of each payload into the arena.
 *
 * Entries, in the order rdps raised them (messages and events of every endpoint of one ctx
 * interleaved, as LOSS events must stay in order with the messages): token[i] names the endpoint
 * (PYRDPS_EVENT_BIT set for an event), offset[i]/length[i] the payload in the arena (for an event:
 * its other_topic), record[i] its pyrdps_info or pyrdps_event record.
 */
#define PYRDPS_EVENT_BIT 0x80000000u

/* What rdps_msg_info says of one message, laid out for Python's struct module ("<QQIIIIiIHB16sx"
 * plus padding, checked against ffi.offsetof at import). */
struct pyrdps_info {
    uint64_t topic_id;
    uint64_t publisher_ts_ns;
    uint32_t session_id;
    uint32_t seq;
    uint32_t ordinal;
    uint32_t fragments;
    int32_t retransmitted;
    uint32_t qpn;
    uint16_t lid;
    uint8_t has_gid;
    uint8_t gid[16];
};

/* What rdps_event says (other_topic in the arena). */
struct pyrdps_event {
    int32_t type;
    int32_t reason;
    uint32_t session_id;
    uint32_t first_seq;
    uint32_t count;
    uint32_t receiver_id;
    uint32_t first_ordinal;
    uint32_t msg_count;
    uint32_t qpn;
    uint16_t lid;
    uint8_t has_gid;
    uint8_t gid[16];
};

struct pyrdps_sink;

struct pyrdps_batch {
    size_t count, capacity; /* entries */
    uint32_t *token;
    uint64_t *offset;
    uint64_t *length;
    uint32_t *record;
    uint8_t *arena; /* payloads, then event topics */
    size_t arena_used, arena_capacity;
    struct pyrdps_info *infos;
    size_t info_count, info_capacity;
    struct pyrdps_event *events;
    size_t event_count, event_capacity;
    uint64_t dropped;          /* entries lost to a failed allocation */
    unsigned long writer;      /* pthread_self() of the last append: only that thread may drain */
    struct pyrdps_sink *sinks; /* every endpoint's callback context, freed with the batch */
};

/* A fresh batch, or NULL when out of memory. */
struct pyrdps_batch *pyrdps_batch_new(void);
/* Frees the batch and its sinks: only after rdps_ctx_destroy took every endpoint away. */
void pyrdps_batch_free(struct pyrdps_batch *batch);
/* Empties the batch once drained; gives back memory a large burst left behind. */
void pyrdps_batch_reset(struct pyrdps_batch *batch);

/* rdps_pub_create / rdps_sub_create with the collector's callbacks: the endpoint's messages and
 * events go to `batch` under `token` (events only when `events` is nonzero). Same return codes. */
int pyrdps_pub_create(rdps_ctx_t *ctx, const char *topic, const rdps_pub_opts *opts,
                      struct pyrdps_batch *batch, uint32_t token, int events, rdps_pub_t **out);
int pyrdps_sub_create(rdps_ctx_t *ctx, const char *topic, const rdps_sub_opts *opts,
                      struct pyrdps_batch *batch, uint32_t token, int events, rdps_sub_t **out);

/* Frees the sinks of `token`: only once its endpoint is destroyed (no callback can come). */
void pyrdps_sink_forget(struct pyrdps_batch *batch, uint32_t token);

#endif /* RDPS_PYTHON_COLLECT_H */
