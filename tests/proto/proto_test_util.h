/* SPDX-License-Identifier: BSD-2-Clause */
/* proto_test_util.h - shared helpers for engine tests: message patterns, a delivery recorder, frame
 * lists. */
#ifndef RDPS_TESTS_PROTO_UTIL_H
#define RDPS_TESTS_PROTO_UTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rdps_frag.h"
#include "rdps_reasm.h"

/* Byte k of message msg_id of a session: position-dependent so misplaced fragments show. */
static inline uint8_t pattern_byte(uint32_t session, uint64_t msg_id, size_t k)
{
    return (uint8_t)(k * 131u + (k >> 8) * 17u + session * 7u + msg_id * 13u + 1u);
}

static inline void pattern_fill(uint8_t *buf, size_t len, uint32_t session, uint64_t msg_id)
{
    for (size_t k = 0; k < len; k++)
        buf[k] = pattern_byte(session, msg_id, k);
}

static inline int pattern_check(const uint8_t *buf, size_t len, uint32_t session, uint64_t msg_id)
{
    for (size_t k = 0; k < len; k++)
        if (buf[k] != pattern_byte(session, msg_id, k))
            return 0;
    return 1;
}

/*
 * The sender identity tests use for source number n (a RoCE-like source: link-local GID
 * fe80::n, QPN n); test_source_number() maps it back.
 */
static inline struct rdps_source test_source(uint64_t n)
{
    struct rdps_source s;
    memset(&s, 0, sizeof(s));
    s.gid[0] = 0xfe;
    s.gid[1] = 0x80;
    for (int i = 0; i < 8; i++)
        s.gid[8 + i] = (uint8_t)(n >> (56 - 8 * i));
    s.qpn = (uint32_t)n & 0xFFFFFFu;
    s.has_gid = 1;
    return s;
}

static inline uint64_t test_source_number(const struct rdps_source *s)
{
    uint64_t n = 0;
    for (int i = 0; i < 8; i++)
        n = n << 8 | s->gid[8 + i];
    return n;
}

/* One delivered message; the publisher timestamp is used as the message id in tests. */
struct delivery {
    uint64_t source; /* test_source_number() of the sender */
    uint32_t session_id, first_seq, len, frag_count;
    uint64_t topic_id;
    uint64_t msg_id;
    const uint8_t *ptr; /* where the engine delivered from */
    int pattern_ok;
    int retransmit;
};

struct recorder {
    struct delivery *items;
    size_t count, capacity;
};

static inline void recorder_deliver(void *user, const uint8_t *msg, uint32_t len,
                                    const struct rdps_reasm_msg_info *info)
{
    struct recorder *rec = user;
    if (rec->count == rec->capacity) {
        rec->capacity = rec->capacity ? rec->capacity * 2 : 64;
        rec->items = realloc(rec->items, rec->capacity * sizeof(*rec->items));
        if (rec->items == NULL)
            abort();
    }
    struct delivery *d = &rec->items[rec->count++];
    d->source = test_source_number(&info->source);
    d->session_id = info->session_id;
    d->topic_id = info->topic_id;
    d->first_seq = info->first_seq;
    d->len = len;
    d->frag_count = info->frag_count;
    d->msg_id = info->timestamp_ns;
    d->ptr = msg;
    d->retransmit = info->retransmit;
    d->pattern_ok =
        len == info->msg_len && pattern_check(msg, len, info->session_id, info->timestamp_ns);
}

static inline void recorder_free(struct recorder *rec)
{
    free(rec->items);
    memset(rec, 0, sizeof(*rec));
}

/* A list of encoded frames (each owns its bytes). */
struct frame {
    uint8_t *data;
    size_t len;
    uint64_t source;
    uint32_t session;
    uint64_t msg_id;
};

struct frame_list {
    struct frame *items;
    size_t count, capacity;
};

static inline void frames_push(struct frame_list *fl, const uint8_t *data, size_t len,
                               uint64_t source, uint32_t session, uint64_t msg_id)
{
    if (fl->count == fl->capacity) {
        fl->capacity = fl->capacity ? fl->capacity * 2 : 64;
        fl->items = realloc(fl->items, fl->capacity * sizeof(*fl->items));
        if (fl->items == NULL)
            abort();
    }
    struct frame *f = &fl->items[fl->count++];
    f->data = malloc(len ? len : 1);
    if (f->data == NULL)
        abort();
    memcpy(f->data, data, len);
    f->len = len;
    f->source = source;
    f->session = session;
    f->msg_id = msg_id;
}

static inline void frames_free(struct frame_list *fl)
{
    for (size_t i = 0; i < fl->count; i++)
        free(fl->items[i].data);
    free(fl->items);
    memset(fl, 0, sizeof(*fl));
}

/*
 * Fragments message msg_id (pattern bytes, len bytes) of `session` and appends
 * its frames; the message id travels as the publisher timestamp. Returns the
 * number of frames or a negative rdps error.
 */
static inline int frames_add_message(struct frame_list *fl, uint64_t source, uint32_t session,
                                     uint32_t topic, uint32_t *next_seq, size_t len, size_t max_msg,
                                     uint32_t max_datagram, uint64_t msg_id, uint16_t flags)
{
    uint8_t *msg = malloc(len ? len : 1);
    uint8_t *buf = malloc(max_datagram);
    if (msg == NULL || buf == NULL)
        abort();
    pattern_fill(msg, len, session, msg_id);
    struct rdps_frag it;
    int frames = rdps__frag_init(&it, session, topic, next_seq, msg, len, max_msg, max_datagram,
                                 msg_id, flags, *next_seq);
    if (frames >= 0) {
        int n;
        while ((n = rdps__frag_next(&it, buf, max_datagram)) > 0)
            frames_push(fl, buf, (size_t)n, source, session, msg_id);
        if (n < 0)
            frames = n;
    }
    free(buf);
    free(msg);
    return frames;
}

/* xorshift64*: small, seeded, reproducible. */
static inline uint64_t test_rand(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

static inline void frames_shuffle(struct frame_list *fl, uint64_t *rng)
{
    for (size_t i = fl->count; i > 1; i--) {
        size_t j = (size_t)(test_rand(rng) % i);
        struct frame tmp = fl->items[i - 1];
        fl->items[i - 1] = fl->items[j];
        fl->items[j] = tmp;
    }
}

#endif /* RDPS_TESTS_PROTO_UTIL_H */
