/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_batch.h - several whole messages in one DATA datagram: the record layout, its check, the
 * reader's iterator and the writer's open datagram (rdps_frame.h, DATA). */
#ifndef RDPS_PROTO_BATCH_H
#define RDPS_PROTO_BATCH_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "rdps_endian.h"
#include "rdps_frame.h"

/*
 * Model
 * -----
 * A datagram of whole messages carries count = n of them (header word at RDPS_FRAME_OFF_COUNT).
 * One message is the payload itself, as it always was: a lone message pays nothing. Two or more
 * are records, each a u16 little-endian length and that many bytes, filling the payload exactly.
 * Records are not aligned: a reader copies what it needs (as MoldUDP64 readers do).
 *
 * Writer: a publisher keeps one open datagram (struct rdps_batch) in memory it owns until the
 * datagram is posted: a registered send buffer, or the head frame of a reliable ring. The first
 * message goes in as the payload; the second moves it up by RDPS_BATCH_LEN_BYTES to give it its
 * length (one memmove per batch, never on the lone-message path); later ones are appended. A
 * datagram opened to be held (rdps__batch_open_records: more messages are expected) writes the
 * first as a record at once, so no message moves, and sealing a lone one moves it back. Sealing
 * (rdps__batch_seal) ends the writing; the caller writes the header with the count and length it
 * reads here.
 *
 * Join path: join_limit caches, after every change, whether and how long a message may be
 * appended by rdps__batch_join, a few instructions with no call: len < join_limit. It is 0 when
 * none may (nothing open, a lone message not yet a record, a claim writing the last record, a
 * message that would fill the datagram, joins turned off: the caller's full path decides those).
 * join_flags are the
 * send flags a caller's join path may do without (the caller's meaning: the datagram is held).
 *
 * Reader: rdps__batch_check validates a payload against its count once (the decoder and the
 * receive fast path both call it), after which rdps__batch_next walks it without checks.
 */

#define RDPS_BATCH_LEN_BYTES 2u
/* A datagram held for the device (the default rule: an earlier send's completion is awaited) goes
 * at the latest this long after it began to wait, whether or not the completion came (a device
 * that stopped completing sends holds nothing longer). */
#define RDPS_BATCH_AWAIT_MAX_NS 1000000ull
/* The longest message a record can carry (datagrams are shorter still). */
#define RDPS_BATCH_MAX_RECORD 0xFFFFu

/*
 * Whether `len` payload bytes hold exactly `count` (>= 2) records, none longer than
 * max_msg_len: RDPS_FRAME_OK, RDPS_FRAME_BAD_COUNT (more records than the payload could hold),
 * RDPS_FRAME_BAD_BATCH (a record runs past the payload, or the records end before it) or
 * RDPS_FRAME_MSG_TOO_LARGE.
 */
static inline enum rdps_frame_reject rdps__batch_check(const uint8_t *payload, uint32_t len,
                                                       uint32_t count, uint32_t max_msg_len)
{
    if (count < 2 || count > len / RDPS_BATCH_LEN_BYTES)
        return RDPS_FRAME_BAD_COUNT;
    uint32_t off = 0;
    if (max_msg_len >= len) { /* no record can be too long: the structure alone (every datagram) */
        /* One test a record: its length word lies within (a record that ran past the end leaves
         * off beyond last too). len >= 4 here; off stays far from overflow. */
        const uint32_t last = len - RDPS_BATCH_LEN_BYTES;
        for (uint32_t i = count; i > 0; i--) {
            if (off > last)
                return RDPS_FRAME_BAD_BATCH;
            off += RDPS_BATCH_LEN_BYTES + rdps__get_le16(payload + off);
        }
        return off == len ? RDPS_FRAME_OK : RDPS_FRAME_BAD_BATCH;
    }
    for (uint32_t i = 0; i < count; i++) {
        if (len - off < RDPS_BATCH_LEN_BYTES)
            return RDPS_FRAME_BAD_BATCH;
        uint32_t rec = rdps__get_le16(payload + off);
        off += RDPS_BATCH_LEN_BYTES;
        if (rec > len - off)
            return RDPS_FRAME_BAD_BATCH;
        if (rec > max_msg_len)
            return RDPS_FRAME_MSG_TOO_LARGE;
        off += rec;
    }
    return off == len ? RDPS_FRAME_OK : RDPS_FRAME_BAD_BATCH;
}

/* Walks a checked payload of records: each call gives the next message. */
struct rdps_batch_iter {
    const uint8_t *at;
};

static inline void rdps__batch_iter_init(struct rdps_batch_iter *it, const uint8_t *payload)
{
    it->at = payload;
}

/* The next record's message (the caller knows how many there are). */
static inline const uint8_t *rdps__batch_next(struct rdps_batch_iter *it, uint32_t *len)
{
    uint32_t n = rdps__get_le16(it->at);
    const uint8_t *msg = it->at + RDPS_BATCH_LEN_BYTES;
    it->at = msg + n;
    *len = n;
    return msg;
}

/*
 * The writer's open datagram: `frame` is where its header goes (the payload follows it), `cap`
 * the longest frame it may become. Messages are counted in `count` and fill `used` payload bytes.
 */
struct rdps_batch {
    uint8_t *frame;
    /* The three words a join writes are not neighbours: the compiler then stores them as they
     * are, rather than packing two into a vector. */
    uint32_t used;       /* payload bytes written */
    uint32_t cap;        /* frame bytes, header included */
    uint32_t count;      /* messages in it */
    uint32_t max_record; /* the longest message it takes (<= RDPS_BATCH_MAX_RECORD) */
    uint32_t join_limit; /* rdps__batch_join takes a message of fewer bytes (0: none) */
    uint32_t join_flags; /* send flags a join may do without (the caller's; see the model) */
    uint32_t held_limit; /* join_limit when a claim held the joins (rdps__batch_hold_joins) */
    bool records;        /* the first message is a record too (rdps__batch_open_records) */
    bool joins_off;      /* the caller's: no join path (join_limit stays 0) */
};

static inline uint8_t *rdps__batch_payload(const struct rdps_batch *b)
{
    return b->frame + RDPS_FRAME_HEADER_LEN;
}

/* The payload bytes a frame of `cap` bytes holds. */
static inline uint32_t rdps__batch_capacity(uint32_t cap)
{
    return cap > RDPS_FRAME_HEADER_LEN ? cap - RDPS_FRAME_HEADER_LEN : 0;
}

/* Length bytes the next message needs: its own, and the first message's when it becomes a
 * record. */
static inline uint32_t rdps__batch_need(const struct rdps_batch *b)
{
    if (b->records || b->count >= 2)
        return RDPS_BATCH_LEN_BYTES;
    return b->count == 1 ? 2u * RDPS_BATCH_LEN_BYTES : 0u;
}

/* Recomputes join_limit after a change (see the model). */
static inline void rdps__batch_update_join(struct rdps_batch *b)
{
    uint32_t free = rdps__batch_capacity(b->cap) - b->used;
    if (b->count == 0 || (b->count == 1 && !b->records) || free <= RDPS_BATCH_LEN_BYTES ||
        b->joins_off) {
        b->join_limit = 0;
        return;
    }
    uint32_t limit = free - RDPS_BATCH_LEN_BYTES; /* one that would fill it exactly goes the full
                                                     path, which sends a full datagram at once */
    b->join_limit = limit <= b->max_record ? limit : b->max_record + 1u;
}

static inline void rdps__batch_open(struct rdps_batch *b, uint8_t *frame, uint32_t cap)
{
    b->frame = frame;
    b->cap = cap;
    b->used = 0;
    b->count = 0;
    b->join_limit = 0;
    b->held_limit = 0;
    b->max_record = RDPS_BATCH_MAX_RECORD;
    b->join_flags = 0;
    b->records = false;
    b->joins_off = false;
}

/* Turns the join path off or back on (the caller's reasons). */
static inline void rdps__batch_set_joins(struct rdps_batch *b, bool on)
{
    b->joins_off = !on;
    rdps__batch_update_join(b);
}

/* Opens a datagram meant to be held: the first message is written as a record. */
static inline void rdps__batch_open_records(struct rdps_batch *b, uint8_t *frame, uint32_t cap)
{
    rdps__batch_open(b, frame, cap);
    b->records = true;
}

/* Nothing open (the datagram was posted or given back). */
static inline void rdps__batch_reset(struct rdps_batch *b)
{
    b->used = 0;
    b->count = 0;
    b->join_limit = 0;
    b->held_limit = 0;
}

/* The longest message that still fits (0 fits when the result is 0 and fits() says so). */
static inline uint32_t rdps__batch_room(const struct rdps_batch *b)
{
    uint32_t free = rdps__batch_capacity(b->cap) - b->used, need = rdps__batch_need(b);
    if (need == 0) /* the lone message: the payload itself */
        return free;
    if (free < need)
        return 0;
    free -= need;
    return free < b->max_record ? free : b->max_record;
}

/* Whether a message of len bytes fits the open datagram. */
static inline bool rdps__batch_fits(const struct rdps_batch *b, uint32_t len)
{
    uint32_t free = rdps__batch_capacity(b->cap) - b->used, need = rdps__batch_need(b);
    return free >= need && len <= free - need && (need == 0 || len <= b->max_record);
}

/*
 * Makes room for one more message of len bytes (the caller checked it fits: rdps__batch_fits,
 * also for the first one of a datagram opened for records) and returns where its
 * bytes go; the message counts from now on. The writer copies it there (or a claim lends it:
 * then rdps__batch_hold_joins until its commit).
 */
static inline uint8_t *rdps__batch_add(struct rdps_batch *b, uint32_t len)
{
    uint8_t *payload = rdps__batch_payload(b);
    uint8_t *to;
    if (b->count == 0 && !b->records) {
        b->used = len;
        to = payload;
    } else {
        if (b->count == 1 && !b->records) { /* the lone message becomes the first record */
            memmove(payload + RDPS_BATCH_LEN_BYTES, payload, b->used);
            rdps__put_le16(payload, (uint16_t)b->used);
            b->used += RDPS_BATCH_LEN_BYTES;
        }
        uint8_t *rec = payload + b->used;
        rdps__put_le16(rec, (uint16_t)len);
        b->used += RDPS_BATCH_LEN_BYTES + len;
        to = rec + RDPS_BATCH_LEN_BYTES;
    }
    b->count++;
    rdps__batch_update_join(b);
    return to;
}

/* The join path: appends a record of len < join_limit bytes (the caller checked) and returns
 * where its bytes go; _within: limit is join_limit as the caller read it (not read again after
 * the length is stored, which may alias it). */
static inline uint8_t *rdps__batch_join_within(struct rdps_batch *b, uint32_t len, uint32_t limit)
{
    uint8_t *rec = rdps__batch_payload(b) + b->used;
    rdps__put_le16(rec, (uint16_t)len);
    b->used += RDPS_BATCH_LEN_BYTES + len;
    b->count++;
    uint32_t left = limit - len; /* >= 1: the free bytes after it, less one record's */
    b->join_limit = left > RDPS_BATCH_LEN_BYTES ? left - RDPS_BATCH_LEN_BYTES : 0;
    return rec + RDPS_BATCH_LEN_BYTES;
}
static inline uint8_t *rdps__batch_join(struct rdps_batch *b, uint32_t len)
{
    return rdps__batch_join_within(b, len, b->join_limit);
}

/* A claim writes the last message: nothing may join behind it until its commit. */
static inline void rdps__batch_hold_joins(struct rdps_batch *b)
{
    b->held_limit = b->join_limit;
    b->join_limit = 0;
}

/* Where the last message added starts, len bytes long. */
static inline uint8_t *rdps__batch_last(const struct rdps_batch *b, uint32_t len)
{
    return rdps__batch_payload(b) + b->used - len;
}

/* The last message added is len bytes after all (at most what rdps__batch_add was given): a
 * claim committed shorter. */
static inline void rdps__batch_shrink_last(struct rdps_batch *b, uint32_t added, uint32_t len)
{
    uint32_t held = b->held_limit;
    b->held_limit = 0;                                /* taken: valid for this claim only */
    if (added == len && held != 0 && !b->joins_off) { /* as claimed: the join path as it was */
        b->join_limit = held;
        return;
    }
    b->used -= added - len;
    if (b->count >= 2 || b->records) {
        uint8_t *rec = rdps__batch_payload(b) + b->used - len - RDPS_BATCH_LEN_BYTES;
        rdps__put_le16(rec, (uint16_t)len);
    }
    rdps__batch_update_join(b);
}

/* Takes back the last message added (a claim aborted), of `added` bytes: the datagram is as it was
 * before rdps__batch_add. */
static inline void rdps__batch_remove_last(struct rdps_batch *b, uint32_t added)
{
    b->held_limit = 0;
    if (b->count == 1) {
        rdps__batch_reset(b);
        return;
    }
    b->used -= RDPS_BATCH_LEN_BYTES + added;
    if (--b->count == 1 && !b->records) { /* the first record becomes the lone message again */
        uint8_t *payload = rdps__batch_payload(b);
        uint32_t first = rdps__get_le16(payload);
        memmove(payload, payload + RDPS_BATCH_LEN_BYTES, first);
        b->used = first;
    }
    rdps__batch_update_join(b);
}

/* Payload bytes of the messages themselves, lengths aside. */
static inline uint32_t rdps__batch_message_bytes(const struct rdps_batch *b)
{
    return b->records || b->count >= 2 ? b->used - RDPS_BATCH_LEN_BYTES * b->count : b->used;
}

/* Ends the writing (nothing joins any more): a lone message written as a record moves back to be
 * the payload. Returns the frame's length; count and used are the header's. */
static inline uint32_t rdps__batch_seal(struct rdps_batch *b)
{
    b->join_limit = 0;
    if (b->count == 1 && b->records) {
        uint8_t *payload = rdps__batch_payload(b);
        b->used -= RDPS_BATCH_LEN_BYTES;
        memmove(payload, payload + RDPS_BATCH_LEN_BYTES, b->used);
        b->records = false;
    }
    return RDPS_FRAME_HEADER_LEN + b->used;
}

/* The frame's length as it stands. */
static inline uint32_t rdps__batch_frame_len(const struct rdps_batch *b)
{
    return RDPS_FRAME_HEADER_LEN + b->used;
}

#endif /* RDPS_PROTO_BATCH_H */
