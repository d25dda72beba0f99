/* SPDX-License-Identifier: BSD-2-Clause */
/* sim_net.h - the simulated fabric's network (sim_fabric.h): a discrete-event heap, shared frame
 * buffers and lossy links, every draw from one seeded generator. */
#ifndef RDPS_TESTS_SIM_NET_H
#define RDPS_TESTS_SIM_NET_H

#include <stdbool.h>
#include <stdint.h>

#include "proto_test_util.h"
#include "sim_fabric.h"

/*
 * Events are ordered by time only (the heap keeps no order among equal
 * times): a link that must keep its frames in order gives each a later time
 * than the previous one. `who` is the caller's (kind << 24 | index).
 *
 * A frame buffer holds one copy of a frame for every delivery of it (a
 * multicast frame is copied once for all receivers); it is reference
 * counted, and its address stays put while the pool grows, so a receiver may
 * read it while its callbacks send frames of their own.
 */
#define SIM_POOL_LOG 12 /* frame buffers per pool chunk: 2^12 */

struct sim_event {
    uint64_t at;
    uint32_t who;
    uint32_t buf;
};

/* A loss model as 32-bit thresholds: a draw below the threshold happens. */
struct sim_thresholds {
    uint32_t uniform, ge_p, ge_r, ge_bad, ge_good, reorder, dup;
    uint64_t reorder_ns;
};

/* One direction of one link. */
struct sim_link {
    uint64_t delay_ns;
    uint64_t last_ns; /* latest in-order arrival: jitter never overtakes */
    bool bad;         /* Gilbert-Elliott state */
};

struct sim_net {
    uint64_t rng;
    struct sim_event *heap;
    size_t n, cap;
    uint8_t **chunks;
    uint32_t nchunks, stride, *refs, *lens, *free_list, nfree, nbufs;
    uint64_t dropped, duplicated; /* by the links */
};

/* Seeds the generator; frames up to max_frame bytes. */
void sim_net_init(struct sim_net *net, uint64_t seed, uint32_t max_frame);
void sim_net_fini(struct sim_net *net);

/* A 32-bit draw; a draw uniform in [0, n]. */
static inline uint32_t sim_draw(struct sim_net *net)
{
    return (uint32_t)(test_rand(&net->rng) >> 32);
}

static inline uint64_t sim_draw_upto(struct sim_net *net, uint64_t n)
{
    return (test_rand(&net->rng) >> 11) % (n + 1);
}

/* Probability p as a threshold for sim_draw(). */
uint32_t sim_threshold(double p);
void sim_thresholds_of(struct sim_thresholds *t, const struct sim_loss *loss);

void sim_push(struct sim_net *net, uint64_t at, uint32_t who, uint32_t buf);
/* The earliest event; the heap must not be empty. */
struct sim_event sim_pop(struct sim_net *net);

/* A copy of frame[0, len) with one reference; sim_buf_put drops one. */
uint32_t sim_buf_new(struct sim_net *net, const uint8_t *frame, uint32_t len);

static inline void sim_buf_put(struct sim_net *net, uint32_t b)
{
    if (--net->refs[b] == 0)
        net->free_list[net->nfree++] = b;
}

static inline const uint8_t *sim_buf_data(const struct sim_net *net, uint32_t b)
{
    return net->chunks[b >> SIM_POOL_LOG] + (size_t)(b & ((1u << SIM_POOL_LOG) - 1)) * net->stride;
}

/*
 * Sends buffer b, leaving at `at`, over link l with loss model th: it may be
 * dropped, delayed (link delay, up to 1 us of jitter, the reorder model's
 * extra delay) and duplicated; each copy becomes an event `who` holding a
 * reference to b.
 */
void sim_link_send(struct sim_net *net, const struct sim_thresholds *th, struct sim_link *l,
                   uint32_t who, uint32_t b, uint64_t at);

#endif /* RDPS_TESTS_SIM_NET_H */
