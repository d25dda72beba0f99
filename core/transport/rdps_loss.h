/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_loss.h - seeded loss generator (pure decision logic) and the interceptor that applies it to
 * a transport. */
#ifndef RDPS_LOSS_H
#define RDPS_LOSS_H

#include "rdps_transport.h"

#include <stdbool.h>
#include <stdint.h>

/* Frame types are byte 1 of a datagram; types >= this share the last rate entry. */
#define RDPS_LOSS_MAX_TYPES 16

/* Bit for frame type t in a type mask. */
#define RDPS_LOSS_TYPE_BIT(t) (1u << (t))

/*
 * Deterministic per seed: the same seed and the same sequence of frames give
 * the same decisions. A random number is drawn only for frames whose type
 * has a non-zero rate, so adding traffic of an unaffected type does not
 * shift the decisions for the others.
 */
struct rdps_loss_gen {
    uint64_t state;
    uint64_t threshold[RDPS_LOSS_MAX_TYPES]; /* drop when draw < threshold */
    bool always[RDPS_LOSS_MAX_TYPES];        /* rate 1.0 */
    uint64_t seen, dropped;
    uint64_t dropped_by_type[RDPS_LOSS_MAX_TYPES];
};

/* rate in [0, 1] applied to every type whose bit is set in type_mask. */
int rdps__loss_gen_init(struct rdps_loss_gen *g, uint64_t seed, double rate, uint32_t type_mask);
/* Overrides the rate of one frame type. */
int rdps__loss_gen_set_rate(struct rdps_loss_gen *g, unsigned frame_type, double rate);
/* Frame type of a datagram (byte 1), 0 when it is shorter than 2 bytes. */
unsigned rdps__loss_frame_type(const uint8_t *frame, uint32_t len);
/* true: drop this frame. Counts what it sees and drops. */
bool rdps__loss_gen_should_drop(struct rdps_loss_gen *g, const uint8_t *frame, uint32_t len);
/* Next raw 64-bit draw (splitmix64), exposed for tests. */
uint64_t rdps__loss_gen_next(struct rdps_loss_gen *g);

struct rdps_loss_config {
    uint64_t seed;
    double rate;        /* in [0, 1] */
    uint32_t type_mask; /* RDPS_LOSS_TYPE_BIT(type) for each affected type */
    bool on_send;       /* a dropped send is freed and reported as sent */
    bool on_recv;       /* a dropped receive is released back to the inner transport */
};

/*
 * Wraps `inner` (the interceptor owns it and destroys it). Sends are judged
 * once per submit: a dropped frame reaches none of its destinations, like a
 * datagram lost at the sender's NIC. Drops are counted in loss_dropped_tx /
 * loss_dropped_rx of get_stats.
 */
int rdps__loss_transport_create(struct rdps_transport *inner, const struct rdps_loss_config *cfg,
                                struct rdps_transport **out);
/* The generators in use (to set per-type rates); NULL if t is not a loss interceptor. */
struct rdps_loss_gen *rdps__loss_transport_send_gen(struct rdps_transport *t);
struct rdps_loss_gen *rdps__loss_transport_recv_gen(struct rdps_transport *t);
/* The wrapped transport, or NULL if t is not a loss interceptor. */
struct rdps_transport *rdps__loss_transport_inner(struct rdps_transport *t);

#endif /* RDPS_LOSS_H */
