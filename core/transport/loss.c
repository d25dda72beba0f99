/* SPDX-License-Identifier: BSD-2-Clause */
/* loss.c - seeded loss generator and the loss interceptor transport (drops by frame type on
 * send/receive). */
#include "rdps_loss.h"

#include "rdps_error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

uint64_t rdps__loss_gen_next(struct rdps_loss_gen *g)
{
    /* splitmix64: tiny, well mixed, and every seed (even 0) gives a full-period stream. */
    uint64_t z = (g->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int rdps__loss_gen_set_rate(struct rdps_loss_gen *g, unsigned frame_type, double rate)
{
    if (g == NULL || frame_type >= RDPS_LOSS_MAX_TYPES || !(rate >= 0.0 && rate <= 1.0))
        return rdps__set_err(RDPS_EINVAL, "loss rate %g for frame type %u: need type < %u and 0..1",
                             rate, frame_type, RDPS_LOSS_MAX_TYPES);
    g->always[frame_type] = rate >= 1.0;
    /* 2^64 * rate, computed without overflowing at rate close to 1. */
    g->threshold[frame_type] = rate >= 1.0 ? UINT64_MAX : (uint64_t)ldexp(rate, 64);
    return 0;
}

int rdps__loss_gen_init(struct rdps_loss_gen *g, uint64_t seed, double rate, uint32_t type_mask)
{
    if (g == NULL)
        return rdps__set_err(RDPS_EINVAL, "loss generator: NULL");
    memset(g, 0, sizeof(*g));
    g->state = seed;
    if (!(rate >= 0.0 && rate <= 1.0))
        return rdps__set_err(RDPS_EINVAL, "loss rate %g is not within 0..1", rate);
    for (unsigned t = 0; t < RDPS_LOSS_MAX_TYPES; t++) {
        if (type_mask & RDPS_LOSS_TYPE_BIT(t))
            (void)rdps__loss_gen_set_rate(g, t, rate);
    }
    return 0;
}

unsigned rdps__loss_frame_type(const uint8_t *frame, uint32_t len)
{
    if (frame == NULL || len < 2)
        return 0;
    return frame[1] < RDPS_LOSS_MAX_TYPES ? frame[1] : RDPS_LOSS_MAX_TYPES - 1;
}

bool rdps__loss_gen_should_drop(struct rdps_loss_gen *g, const uint8_t *frame, uint32_t len)
{
    unsigned type = rdps__loss_frame_type(frame, len);
    g->seen++;
    if (g->threshold[type] == 0)
        return false;
    bool drop = g->always[type] || rdps__loss_gen_next(g) < g->threshold[type];
    if (drop) {
        g->dropped++;
        g->dropped_by_type[type]++;
    }
    return drop;
}

/* ---- the interceptor ------------------------------------------------------------------- */

/* base.inner is the wrapped transport. */
struct loss_transport {
    struct rdps_transport base;
    struct rdps_loss_gen send_gen, recv_gen;
    bool on_send, on_recv;
    uint64_t dropped_tx, dropped_rx;
};

static const struct rdps_transport_ops loss_ops;

static struct loss_transport *to_loss(struct rdps_transport *t)
{
    return (struct loss_transport *)t;
}

static uint32_t loss_max_payload(struct rdps_transport *t)
{
    struct rdps_transport *in = t->inner;
    return in->ops->max_payload(in);
}

static int loss_claim(struct rdps_transport *t, struct rdps_tx_buf *buf)
{
    struct rdps_transport *in = t->inner;
    return in->ops->claim(in, buf);
}

static void loss_abort(struct rdps_transport *t, struct rdps_tx_buf *buf)
{
    struct rdps_transport *in = t->inner;
    in->ops->abort(in, buf);
}

/*
 * Copies of one datagram to several destinations (unicast fan-out) are lost independently, as
 * on a wire: each copy is judged on its own. Fills kept[] with the destinations whose copy goes
 * and returns how many; a fan-out wider than the array is judged whole (one draw).
 */
#define LOSS_FANOUT_MAX 256
static unsigned judge_copies(struct loss_transport *lt, const uint8_t *frame, uint32_t len,
                             const struct rdps_dest *const *dests, unsigned ndest,
                             const struct rdps_dest **kept)
{
    if (ndest > LOSS_FANOUT_MAX) {
        (void)kept; /* the caller submits dests itself when the whole fan-out goes */
        if (!rdps__loss_gen_should_drop(&lt->send_gen, frame, len))
            return ndest;
        lt->dropped_tx += ndest;
        return 0;
    }
    unsigned n = 0;
    for (unsigned i = 0; i < ndest; i++) {
        if (rdps__loss_gen_should_drop(&lt->send_gen, frame, len))
            lt->dropped_tx++;
        else
            kept[n++] = dests[i];
    }
    return n;
}

static int loss_submit(struct rdps_transport *t, struct rdps_tx_buf *buf, uint32_t len,
                       const struct rdps_dest *const *dests, unsigned ndest)
{
    struct loss_transport *lt = to_loss(t);
    struct rdps_transport *in = lt->base.inner;
    /* Oversized or otherwise bad submits still reach the inner transport's checks. */
    if (!lt->on_send || len > buf->capacity || ndest == 0 || dests == NULL)
        return in->ops->submit(in, buf, len, dests, ndest);
    const struct rdps_dest *kept[LOSS_FANOUT_MAX];
    unsigned n = judge_copies(lt, buf->data, len, dests, ndest, kept);
    if (n == 0) {
        in->ops->abort(in, buf);
        return 0;
    }
    return in->ops->submit(in, buf, len, n == ndest ? dests : kept, n);
}

static int loss_flush(struct rdps_transport *t)
{
    struct rdps_transport *in = t->inner;
    return in->ops->flush(in);
}

static int loss_poll(struct rdps_transport *t, struct rdps_rx_datagram *rx, int max)
{
    struct loss_transport *lt = to_loss(t);
    struct rdps_transport *in = lt->base.inner;
    int n = in->ops->poll(in, rx, max);
    if (n <= 0 || !lt->on_recv)
        return n;
    int kept = 0;
    for (int i = 0; i < n; i++) {
        if (rdps__loss_gen_should_drop(&lt->recv_gen, rx[i].data, rx[i].len)) {
            lt->dropped_rx++;
            in->ops->rx_release(in, &rx[i], 1);
            continue;
        }
        if (kept != i)
            rx[kept] = rx[i];
        kept++;
    }
    return kept;
}

static void loss_rx_release(struct rdps_transport *t, struct rdps_rx_datagram *rx, int count)
{
    struct rdps_transport *in = t->inner;
    in->ops->rx_release(in, rx, count);
}

static int loss_reply_dest(struct rdps_transport *t, const struct rdps_rx_datagram *rx,
                           const struct rdps_dest **out)
{
    return t->inner->ops->reply_dest(t->inner, rx, out);
}

static int loss_source_dest(struct rdps_transport *t, const struct rdps_source *src,
                            const struct rdps_dest **out)
{
    return rdps__transport_source_dest(t->inner, src, out);
}

static int loss_dest_acquire(struct rdps_transport *t, const struct rdps_source *src,
                             const struct rdps_dest **out)
{
    return rdps__transport_dest_acquire(t->inner, src, out);
}

static void loss_dest_release(struct rdps_transport *t, const struct rdps_dest *dest)
{
    rdps__transport_dest_release(t->inner, dest);
}

static uint32_t loss_send_room(struct rdps_transport *t)
{
    return rdps__transport_send_room(t->inner);
}

static int loss_mem_register(struct rdps_transport *t, void *addr, size_t len,
                             struct rdps_tx_mem **out)
{
    return rdps__transport_mem_register(t->inner, addr, len, out);
}

static int loss_mem_deregister(struct rdps_transport *t, struct rdps_tx_mem *m)
{
    return rdps__transport_mem_deregister(t->inner, m);
}

static int loss_submit_mem(struct rdps_transport *t, struct rdps_tx_mem *m, size_t offset,
                           uint32_t len, const struct rdps_dest *const *dests, unsigned ndest,
                           uint64_t cookie)
{
    struct loss_transport *lt = to_loss(t);
    struct rdps_transport *in = lt->base.inner;
    /*
     * Judged like submit(), each copy on its own; a dropped request never references the region,
     * so when every copy is dropped its cookie completes as soon as the region's earlier sends
     * have. Bad submits (and those the inner transport would refuse for room) still get the inner
     * transport's answer.
     */
    if (lt->on_send && m != NULL && m->owner == rdps__transport_innermost(in) && ndest > 0 &&
        dests != NULL && cookie > m->submitted && offset <= m->len && len <= m->len - offset &&
        len <= in->ops->max_payload(in)) {
        const struct rdps_dest *kept[LOSS_FANOUT_MAX];
        unsigned n = judge_copies(lt, m->addr + offset, len, dests, ndest, kept);
        if (n == 0) {
            rdps__tx_mem_skip(m, cookie);
            return 0;
        }
        if (n != ndest)
            return in->ops->submit_mem(in, m, offset, len, kept, n, cookie);
    }
    return in->ops->submit_mem(in, m, offset, len, dests, ndest, cookie);
}

/* Judged like submit() on the frame's header (in buf); the inner transport gathers what is kept,
 * or says it cannot (RDPS_ENOTSUP: the buffer stays the caller's). */
static int loss_submit_gather(struct rdps_transport *t, struct rdps_tx_buf *buf, uint32_t hdr_len,
                              struct rdps_tx_mem *m, size_t offset, uint32_t len,
                              const struct rdps_dest *const *dests, unsigned ndest, uint64_t cookie)
{
    struct loss_transport *lt = to_loss(t);
    struct rdps_transport *in = lt->base.inner;
    if (in->ops->submit_gather == NULL)
        return RDPS_ENOTSUP;
    if (lt->on_send && buf != NULL && m != NULL && ndest > 0 && dests != NULL &&
        cookie > m->submitted && hdr_len <= buf->capacity) {
        const struct rdps_dest *kept[LOSS_FANOUT_MAX];
        unsigned n = judge_copies(lt, buf->data, hdr_len, dests, ndest, kept);
        if (n == 0) {
            in->ops->abort(in, buf);
            rdps__tx_mem_skip(m, cookie);
            return 0;
        }
        if (n != ndest)
            return in->ops->submit_gather(in, buf, hdr_len, m, offset, len, kept, n, cookie);
    }
    return in->ops->submit_gather(in, buf, hdr_len, m, offset, len, dests, ndest, cookie);
}

static int loss_event_fd(struct rdps_transport *t)
{
    struct rdps_transport *in = t->inner;
    return in->ops->event_fd(in);
}

static int loss_arm(struct rdps_transport *t)
{
    struct rdps_transport *in = t->inner;
    return in->ops->arm(in);
}

static int loss_next_event(struct rdps_transport *t, enum rdps_transport_event_type *type)
{
    struct rdps_transport *in = t->inner;
    return in->ops->next_event(in, type);
}

static void loss_get_stats(const struct rdps_transport *t, struct rdps_transport_stats *out)
{
    const struct loss_transport *lt = (const struct loss_transport *)t;
    lt->base.inner->ops->get_stats(lt->base.inner, out);
    out->loss_dropped_tx += lt->dropped_tx;
    out->loss_dropped_rx += lt->dropped_rx;
}

static void loss_destroy(struct rdps_transport *t)
{
    if (t == NULL)
        return;
    struct loss_transport *lt = to_loss(t);
    if (lt->base.inner != NULL)
        lt->base.inner->ops->destroy(lt->base.inner);
    free(lt);
}

int rdps__loss_transport_create(struct rdps_transport *inner, const struct rdps_loss_config *cfg,
                                struct rdps_transport **out)
{
    if (inner == NULL || cfg == NULL || out == NULL)
        return rdps__set_err(RDPS_EINVAL, "loss interceptor: NULL argument");
    *out = NULL;
    struct loss_transport *lt = calloc(1, sizeof(*lt));
    if (lt == NULL)
        return rdps__set_err(RDPS_ENOMEM, "loss interceptor: out of memory");
    /* Distinct streams for the two directions, both fixed by the one seed. */
    int err = rdps__loss_gen_init(&lt->send_gen, cfg->seed, cfg->rate, cfg->type_mask);
    if (err == 0)
        err = rdps__loss_gen_init(&lt->recv_gen, cfg->seed ^ 0x5deece66dull, cfg->rate,
                                  cfg->type_mask);
    if (err < 0) {
        free(lt);
        return rdps__prepend_err(err, "loss interceptor: ");
    }
    lt->base.ops = &loss_ops;
    lt->base.inner = inner;
    lt->on_send = cfg->on_send;
    lt->on_recv = cfg->on_recv;
    *out = &lt->base;
    return 0;
}

struct rdps_loss_gen *rdps__loss_transport_send_gen(struct rdps_transport *t)
{
    return t != NULL && t->ops == &loss_ops ? &to_loss(t)->send_gen : NULL;
}

struct rdps_loss_gen *rdps__loss_transport_recv_gen(struct rdps_transport *t)
{
    return t != NULL && t->ops == &loss_ops ? &to_loss(t)->recv_gen : NULL;
}

struct rdps_transport *rdps__loss_transport_inner(struct rdps_transport *t)
{
    return t != NULL && t->ops == &loss_ops ? t->inner : NULL;
}

static const struct rdps_transport_ops loss_ops = {
    .name = "loss",
    .max_payload = loss_max_payload,
    .claim = loss_claim,
    .abort = loss_abort,
    .submit = loss_submit,
    .flush = loss_flush,
    .poll = loss_poll,
    .rx_release = loss_rx_release,
    .reply_dest = loss_reply_dest,
    .source_dest = loss_source_dest,
    .dest_acquire = loss_dest_acquire,
    .dest_release = loss_dest_release,
    .send_room = loss_send_room,
    .mem_register = loss_mem_register,
    .mem_deregister = loss_mem_deregister,
    .submit_mem = loss_submit_mem,
    .event_fd = loss_event_fd,
    .arm = loss_arm,
    .next_event = loss_next_event,
    .get_stats = loss_get_stats,
    .destroy = loss_destroy,
    .submit_gather = loss_submit_gather,
};
