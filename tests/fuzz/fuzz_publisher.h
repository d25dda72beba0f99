/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_publisher.h - an honest publisher for the fuzz harnesses: messages whose bytes say who sent
 * them, where and as which message, packed into datagrams as rdps's publishers pack them. */
#ifndef RDPS_TESTS_FUZZ_PUBLISHER_H
#define RDPS_TESTS_FUZZ_PUBLISHER_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rdps_batch.h"
#include "rdps_frag.h"
#include "rdps_frame.h"

/*
 * Model
 * -----
 * A publisher session numbers its datagrams (seq) and its messages (ordinal, rdps_frame.h).
 * fuzz_pub_send places one message as the library's publishers do: in the open datagram when it
 * fits (rdps_batch.h: a lone message is the payload, two or more are records), else the open
 * datagram is closed and the message opens the next one; a message longer than a datagram's
 * payload closes the open one and goes as fragments (rdps_frag.h). fuzz_pub_flush closes the
 * open datagram. Each message is told to placed() (the sequence of the datagram it starts in,
 * its ordinal, its length, its datagrams) before any of its datagrams goes to emit(), so a
 * checker knows it before a receiver can deliver it. Its bytes are fuzz_msg_fill(key,
 * first_seq, ordinal, len): the checker recomputes them from what a delivery says.
 */
#define FUZZ_PUB_MAX_DGRAM 1024u
#define FUZZ_PUB_MAX_MSG   24576u

struct fuzz_pub {
    uint32_t key; /* who: seeds the bytes */
    uint32_t session_id;
    uint64_t topic_id;
    uint16_t flags; /* RELIABLE or 0 */
    uint32_t next_seq, next_ordinal;
    uint64_t now_ns;
    void (*emit)(void *user, const uint8_t *frame, uint32_t len);
    void (*placed)(void *user, uint32_t first_seq, uint32_t ordinal, uint32_t len,
                   uint32_t datagrams);
    void *user;
    struct rdps_batch open; /* the open datagram (count 0: none) */
    uint32_t open_seq, open_dgram;
    uint8_t frame[FUZZ_PUB_MAX_DGRAM];
    uint8_t msg[FUZZ_PUB_MAX_MSG];
};

/* The bytes of a message: an xorshift stream seeded by who sent it, where and how long it is. */
static inline void fuzz_msg_fill(uint8_t *buf, uint32_t key, uint32_t first_seq, uint32_t ordinal,
                                 uint32_t len)
{
    uint32_t x = (key + 1) * 0x9E3779B1u ^ first_seq * 0x85EBCA77u ^ ordinal * 0xC2B2AE3Du ^
                 len * 0x27D4EB2Fu;
    x ^= x >> 15;
    if (x == 0)
        x = 1;
    for (uint32_t k = 0; k < len; k++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        buf[k] = (uint8_t)(x >> 7);
    }
}

static inline void fuzz_pub_init(struct fuzz_pub *p, uint32_t key, uint32_t session_id,
                                 uint64_t topic_id, uint16_t flags, uint32_t first_seq,
                                 uint32_t first_ordinal)
{
    p->key = key;
    p->session_id = session_id;
    p->topic_id = topic_id;
    p->flags = flags;
    p->next_seq = first_seq;
    p->next_ordinal = first_ordinal;
    p->now_ns = 0;
    p->open.count = 0;
}

/* Closes the open datagram: its header says how many messages it holds, and it goes. */
static inline void fuzz_pub_flush(struct fuzz_pub *p)
{
    struct rdps_batch *b = &p->open;
    if (b->count == 0)
        return;
    uint32_t len = rdps__frame_put_data_header(b->frame, p->session_id, p->topic_id, p->open_seq,
                                               b->used, 0, b->used, p->now_ns, p->flags,
                                               p->next_ordinal - b->count, b->count);
    b->count = 0;
    p->emit(p->user, b->frame, len);
}

/*
 * Publishes a message of len (<= FUZZ_PUB_MAX_MSG) bytes in datagrams of at most max_dgram
 * (RDPS_FRAME_HEADER_LEN + 1 .. FUZZ_PUB_MAX_DGRAM) bytes; a datagram left open waits for
 * fuzz_pub_flush or the next message.
 */
static inline void fuzz_pub_send(struct fuzz_pub *p, uint32_t len, uint32_t max_dgram)
{
    struct rdps_batch *b = &p->open;
    if (len > FUZZ_PUB_MAX_MSG || max_dgram <= RDPS_FRAME_HEADER_LEN ||
        max_dgram > FUZZ_PUB_MAX_DGRAM)
        abort(); /* the harness's own mistake */
    if (b->count > 0 && (p->open_dgram != max_dgram || !rdps__batch_fits(b, len)))
        fuzz_pub_flush(p);
    if (len <= max_dgram - RDPS_FRAME_HEADER_LEN) {
        if (b->count == 0) {
            rdps__batch_open(b, p->frame, max_dgram);
            p->open_seq = p->next_seq++;
            p->open_dgram = max_dgram;
        }
        uint32_t ordinal = p->next_ordinal++;
        fuzz_msg_fill(rdps__batch_add(b, len), p->key, p->open_seq, ordinal, len);
        p->placed(p->user, p->open_seq, ordinal, len, 1);
        return;
    }
    uint32_t first_seq = p->next_seq, ordinal = p->next_ordinal++;
    struct rdps_frag it;
    fuzz_msg_fill(p->msg, p->key, first_seq, ordinal, len);
    int frames = rdps__frag_init(&it, p->session_id, p->topic_id, &p->next_seq, p->msg, len,
                                 FUZZ_PUB_MAX_MSG, max_dgram, p->now_ns, p->flags, ordinal);
    if (frames < 1)
        abort();
    p->placed(p->user, first_seq, ordinal, len, (uint32_t)frames);
    uint8_t frame[FUZZ_PUB_MAX_DGRAM];
    int n;
    while ((n = rdps__frag_next(&it, frame, sizeof(frame))) > 0)
        p->emit(p->user, frame, (uint32_t)n);
    if (n < 0)
        abort();
}

#endif /* RDPS_TESTS_FUZZ_PUBLISHER_H */
