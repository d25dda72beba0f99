/* SPDX-License-Identifier: BSD-2-Clause */
/* publisher_reliable.c - reliable publishers: the sans-IO engine (rdps_rel_pub.h) over the ctx's
 * transport, its ring registered once and posted from in place. */
#include "ctx_internal.h"

#include <stdlib.h>
#include <string.h>

#include "discovery_engine.h"
#include "rdps_clock.h"
#include "rdps_error.h"
#include "rdps_log.h"
#include "rdps_random.h"
#include "rdps_rel_pub.h"
#include "rdps_seq.h"

/*
 * Ring frames posted and not completed, per publisher (a power of two). What is posted waits in
 * the send queue in order, and a repair waits behind it: with 1024 (the whole receive window) a
 * busy soft-RoCE guest held a repair 1-16 ms and more in its send queue, and the window waited on
 * it. Frames not yet posted wait in the ring, where a repair goes ahead of them. 256 against 1024
 * on rxe (4 interleaved rounds each way): 1 % loss 0.89 against 0.78 of the lossless rate, 5 %
 * 0.76 against 0.71, lossless the same. 64 against 256 (two A/Bs of 5 interleaved rounds): the
 * same rates, the median repair latency halved (16 against 32 ms at 1 and 5 % loss) and fewer
 * duplicate repairs. On hardware 64 x 4 KiB is 21 us at 100 Gb/s, ten times what a send
 * completion takes to come back, so the link stays busy while a repair waits at most that.
 */
#ifndef RDPS_REL_INFLIGHT
#define RDPS_REL_INFLIGHT 64u
#endif

/* Engine events wait here until the engine call returns (callbacks may publish). */
#define EVENT_QUEUE 16

struct rdps_rel_pub_glue {
    struct rdps_rel_pub engine;
    void *ring_mem;
    struct rdps_tx_mem *ring_reg;
    /*
     * Every ring action gets the next cookie; the transport's `completed` says how many of them
     * no longer reference the ring (done_reported of them were told to the engine).
     */
    uint64_t cookie, done_reported;
    /* An action the send queue had no room for: posted first next time. */
    struct rdps_rel_pub_action pending;
    bool has_pending;
    rdps_event events[EVENT_QUEUE]; /* for the publisher's on_event */
    unsigned event_count;
    uint64_t events_dropped;
    uint64_t deadline_ns; /* the engine's next deadline as last reported */
};

static void queue_event(void *user, const struct rdps_rel_pub_event *ev)
{
    rdps_pub_t *pub = user;
    struct rdps_rel_pub_glue *g = pub->rel;
    if (pub->on_event == NULL)
        return;
    if (g->event_count == EVENT_QUEUE) {
        g->events_dropped++;
        return;
    }
    rdps_event *out = &g->events[g->event_count++];
    memset(out, 0, sizeof(*out));
    switch (ev->kind) {
    case RDPS_REL_PUB_EV_EVICTED:
        out->type = RDPS_EVENT_RECEIVER_EVICTED;
        break;
    case RDPS_REL_PUB_EV_RESUMED:
        out->type = RDPS_EVENT_RECEIVER_RESUMED;
        break;
    default:
        out->type = RDPS_EVENT_RECEIVER_TIMED_OUT;
        break;
    }
    out->topic = pub->topic->name;
    out->session_id = pub->session_id;
    out->first_seq = ev->consumed_seq;
    /* How far behind the ring's oldest sequence it is; 0 when it is not (resumed, stalled). */
    out->count =
        rdps__seq_lt(ev->consumed_seq, ev->trail_seq) ? ev->trail_seq - ev->consumed_seq : 0;
    out->source = *ev->source;
    out->receiver_id = ev->receiver_id;
    out->reason = ev->reason;
}

/* Raises queued events; the caller is inside the ctx's callback bracket. */
static void raise_events(rdps_pub_t *pub)
{
    struct rdps_rel_pub_glue *g = pub->rel;
    for (unsigned i = 0; i < g->event_count && !pub->closed; i++)
        pub->on_event(pub->event_user, &g->events[i]);
    g->event_count = 0;
}

/* A reliable subscriber discovery knows of: the engine of publisher `user` expects it, or
 * forgets it (an rdps_disc_event_fn). Only an announcement that names its own datagram's source
 * speaks for the receiver at that source: anyone can announce in another's name, and a receiver
 * the engine takes as announced may hold and pace the publisher. */
static void receiver_event(void *user, const struct rdps_disc_event *ev)
{
    rdps_pub_t *pub = user;
    struct rdps_rel_pub *e = &pub->rel->engine;
    if (!ev->reliable || ev->receiver_id == 0 || !ev->addressed)
        return;
    if (ev->type == RDPS_DISC_PEER_SEEN) {
        if (rdps__rel_pub_expect_receiver(e, &ev->source, ev->receiver_id, ev->flow_tag,
                                          pub->ctx->now_ns) < 0)
            RDPS_LOG_WRN("reliable publisher %s: receiver table full", pub->topic->name);
    } else {
        rdps__rel_pub_receiver_gone(e, &ev->source, ev->receiver_id, ev->expired);
    }
}

void rdps__pub_rel_on_receiver(rdps_ctx_t *ctx, struct rdps_topic *t,
                               const struct rdps_disc_event *ev)
{
    for (rdps_pub_t *p = ctx->pubs; p != NULL; p = p->next) {
        if (p->rel == NULL || p->closed || p->topic != t)
            continue;
        receiver_event(p, ev);
        raise_events(p);                      /* inside poll: the callback bracket is held */
        rdps__ctx_timer_at(ctx, ctx->now_ns); /* a heartbeat may be due now */
    }
}

uint64_t rdps__pub_rel_receiver_heard(const rdps_ctx_t *ctx, uint64_t topic_id,
                                      const struct rdps_source *source, uint32_t receiver_id)
{
    uint64_t heard = 0;
    for (const rdps_pub_t *p = ctx->pubs; p != NULL; p = p->next) {
        struct rdps_rel_pub_receiver_info info;
        if (p->rel != NULL && !p->closed && p->topic->id == topic_id &&
            rdps__rel_pub_receiver_info(&p->rel->engine, source, receiver_id, &info) == 0 &&
            info.last_heard_ns > heard)
            heard = info.last_heard_ns;
    }
    return heard;
}

int rdps__pub_rel_check_opts(const rdps_pub_opts *opts)
{
    struct rdps_rel_pub_config cfg;
    rdps__rel_pub_config_default(&cfg);
    int flow = (int)opts->flow; /* the enum may be unsigned: a negative value shows as itself */
    if (flow != RDPS_FLOW_MAX && flow != RDPS_FLOW_MIN && flow != RDPS_FLOW_TAGGED)
        return rdps__set_err(RDPS_EINVAL,
                             "rdps_pub_create: flow %d is not a flow control mode (RDPS_FLOW_MAX, "
                             "RDPS_FLOW_MIN or RDPS_FLOW_TAGGED)",
                             flow);
    if (flow == RDPS_FLOW_TAGGED) {
        if (opts->flow_tag == 0)
            return rdps__set_err(RDPS_EINVAL, "rdps_pub_create: flow RDPS_FLOW_TAGGED needs a "
                                              "nonzero flow_tag (the tag its receivers announce)");
        if (opts->flow_min_receivers > cfg.max_receivers)
            return rdps__set_err(RDPS_EINVAL,
                                 "rdps_pub_create: flow_min_receivers %u can never be met (a "
                                 "publisher tracks at most %u receivers): nothing would be sent",
                                 opts->flow_min_receivers, cfg.max_receivers);
    } else if (opts->flow_tag != 0 || opts->flow_min_receivers != 0) {
        return rdps__set_err(RDPS_EINVAL, "rdps_pub_create: %s needs flow = RDPS_FLOW_TAGGED",
                             opts->flow_tag != 0 ? "flow_tag" : "flow_min_receivers");
    }
    if (opts->parity_k != 0 && (opts->parity_k < 2 || opts->parity_k > RDPS_FRAME_PARITY_MAX_K ||
                                (opts->parity_k & (opts->parity_k - 1)) != 0))
        return rdps__set_err(RDPS_EINVAL,
                             "rdps_pub_create: parity_k %u is not a power of two in 2..%u",
                             opts->parity_k, RDPS_FRAME_PARITY_MAX_K);
    if (opts->parity_proactive > opts->parity_k)
        return rdps__set_err(
            RDPS_EINVAL, "rdps_pub_create: parity_proactive %u above parity_k %u (%s)",
            opts->parity_proactive, opts->parity_k,
            opts->parity_k == 0 ? "proactive parity needs parity_k" : "at most one block's worth");
    if (opts->ring_bytes != 0 &&
        (opts->ring_bytes < 64u * 1024u || opts->ring_bytes > (1ull << 32)))
        return rdps__set_err(RDPS_EINVAL, "rdps_pub_create: ring_bytes %zu outside 64 KiB..4 GiB",
                             opts->ring_bytes);
    return 0;
}

int rdps__pub_rel_attach(rdps_pub_t *pub, const rdps_pub_opts *opts)
{
    rdps_ctx_t *ctx = pub->ctx;
    struct rdps_rel_pub_config cfg;
    rdps__rel_pub_config_default(&cfg);
    if (opts->ring_bytes != 0)
        cfg.ring_bytes = opts->ring_bytes; /* checked by rdps__pub_rel_check_opts */

    struct rdps_rel_pub_glue *g = calloc(1, sizeof(*g));
    if (g == NULL)
        return rdps__set_err(RDPS_ENOMEM, "reliable publisher: out of memory");
    /* Page-aligned so registration pins exactly the ring. */
    size_t bytes = (cfg.ring_bytes + 4095u) & ~(size_t)4095u;
    g->ring_mem = aligned_alloc(4096, bytes);
    if (g->ring_mem == NULL) {
        free(g);
        return rdps__set_err(RDPS_ENOMEM, "reliable publisher: no memory for a %zu-byte ring",
                             bytes);
    }
    int rc = rdps__transport_mem_register(ctx->transport, g->ring_mem, bytes, &g->ring_reg);
    if (rc < 0) {
        free(g->ring_mem);
        free(g);
        return rdps__prepend_err(rc, "registering the retransmission ring: ");
    }
    cfg.session_id = pub->session_id;
    cfg.topic_id = pub->topic->id;
    cfg.first_seq = pub->next_seq;
    cfg.first_ordinal = pub->next_ordinal;
    cfg.batching = pub->batching;
    cfg.batch_linger_ns = pub->linger_ns;
    cfg.max_datagram = ctx->max_datagram;
    cfg.max_msg_len = (uint32_t)ctx->cfg.max_message_size;
    cfg.ring_mem = g->ring_mem;
    cfg.ring_bytes = bytes;
    cfg.flow = opts->flow == RDPS_FLOW_MIN      ? RDPS_REL_FLOW_MIN
               : opts->flow == RDPS_FLOW_TAGGED ? RDPS_REL_FLOW_TAGGED
                                                : RDPS_REL_FLOW_MAX;
    cfg.flow_tag = opts->flow_tag;
    cfg.flow_min_receivers = opts->flow_min_receivers;
    if (opts->receiver_timeout_ms != 0)
        cfg.receiver_timeout_ns = (uint64_t)opts->receiver_timeout_ms * 1000000ull;
    cfg.rate_bytes_per_s = opts->rate_limit;       /* its bounds: rel_pub_init */
    cfg.parity_k = opts->parity_k;                 /* checked by rdps__pub_rel_check_opts */
    cfg.parity_proactive = opts->parity_proactive; /* ... likewise */
    /* A repair is posted behind whatever data the send queue already holds; 128 instead of
     * 1024 showed no repair-latency gain on rxe within the noise of a loaded TCG host. */
    cfg.max_inflight = RDPS_REL_INFLIGHT;
    cfg.hash_seed = rdps__random_u64();
    cfg.on_event = queue_event;
    cfg.user = pub;
    pub->rel = g; /* queue_event may run inside init */
    rc = rdps__rel_pub_init(&g->engine, &cfg);
    if (rc < 0) {
        pub->rel = NULL;
        rdps__transport_mem_deregister(ctx->transport, g->ring_reg);
        free(g->ring_mem);
        free(g);
        return rdps__prepend_err(rc, "reliable publisher: ");
    }
    g->deadline_ns = 0;
    if (pub->batching) {
        pub->join = rdps__rel_pub_open_batch(&g->engine);
        rdps__batch_set_joins(pub->join, !pub->local_subs);
    }
    rdps__rel_pub_set_fanout(&g->engine, pub->topic->send_path == RDPS_PATH_UNICAST);
    /* Subscribers that announced before this publisher existed are expected too. */
    if (ctx->discovery != NULL)
        rdps__disc_for_each_remote(ctx->discovery, pub->topic->id, pub->topic->name,
                                   RDPS_ROLE_SUBSCRIBER, receiver_event, pub);
    ctx->reliable_pubs++;
    rdps__ctx_timers_changed(ctx);
    return 0;
}

/* Tells the engine which ring posts the device is done with. */
static void report_completions(struct rdps_rel_pub_glue *g)
{
    uint64_t done = rdps__tx_mem_completed(g->ring_reg);
    if (done > g->done_reported) {
        rdps__rel_pub_send_done(&g->engine, (uint32_t)(done - g->done_reported));
        g->done_reported = done;
    }
}

void rdps__pub_rel_detach(rdps_pub_t *pub)
{
    struct rdps_rel_pub_glue *g = pub->rel;
    rdps_ctx_t *ctx = pub->ctx;
    if (g == NULL)
        return;
    pub->join = &pub->open; /* the ring goes */
    /* The device may still read the ring: wait (bounded) for the posts to complete. */
    uint64_t until = rdps__clock_monotonic_ns() + 100000000ull;
    ctx->transport->ops->flush(ctx->transport);
    while (rdps__tx_mem_completed(g->ring_reg) < g->cookie && rdps__clock_monotonic_ns() < until)
        rdps__ctx_reap_sends(ctx);
    if (rdps__transport_mem_deregister(ctx->transport, g->ring_reg) < 0) {
        /* Still referenced by a dead device: leak the ring rather than free memory in use. */
        RDPS_LOG_WRN("reliable publisher: ring still in use at destroy, not freed");
    } else {
        free(g->ring_mem);
    }
    rdps__rel_pub_fini(&g->engine);
    free(g);
    pub->rel = NULL;
    ctx->reliable_pubs--;
}

/* Posts one action; RDPS_EAGAIN leaves it for later (nothing queued). */
static int post_action(rdps_pub_t *pub, const struct rdps_rel_pub_action *a)
{
    rdps_ctx_t *ctx = pub->ctx;
    struct rdps_transport *t = ctx->transport;
    struct rdps_rel_pub_glue *g = pub->rel;
    const struct rdps_topic *topic = pub->topic;
    /* "To the group": the topic's destinations, i.e. the group while the publishers use it and a
     * copy for each unicast subscriber (each subscriber, without the group); none, perhaps. */
    const struct rdps_dest *dest = NULL;
    const struct rdps_dest *const *dests = topic->dests;
    uint32_t n = topic->ndests, copies = topic->ndests_unicast;
    int rc = 0;

    if (a->unicast) {
        rc = rdps__transport_source_dest(t, &a->dest, &dest);
        if (rc == RDPS_EAGAIN)
            return rc;
        /* An unreachable receiver (rc < 0): the frame is dropped, its NAK retried. */
        dests = &dest;
        n = rc < 0 ? 0 : 1;
        copies = 0;
    }
    if (a->in_ring) {
        uint64_t cookie = g->cookie + 1;
        rc = n == 0 ? RDPS_EHOSTUNREACH
                    : rdps__transport_submit_mem(t, g->ring_reg, a->ring_offset, a->len, dests, n,
                                                 cookie);
        if (rc == RDPS_EAGAIN)
            return rc;
        g->cookie = cookie;
        if (rc < 0)
            rdps__tx_mem_skip(g->ring_reg, cookie); /* never queued: done at once, in order */
    } else if (n > 0) {
        /* Heartbeats live in the engine only until the next call: copy into a send buffer. */
        struct rdps_tx_buf buf;
        if (n > 1 && rdps__transport_send_room(t) <= n)
            return RDPS_EAGAIN;
        rc = t->ops->claim(t, &buf);
        if (rc < 0)
            return rc == RDPS_EAGAIN ? rc : 0;
        memcpy(buf.data, a->frame, a->len);
        rc = t->ops->submit(t, &buf, a->len, dests, n);
    } else {
        rc = RDPS_EHOSTUNREACH;
    }
    if (rc == 0) {
        pub->counters.frames_sent++;
        pub->counters.frame_bytes_sent += a->len;
        pub->counters.unicast_copies += copies;
        if (a->kind == RDPS_REL_PUB_POST_REPAIR)
            pub->counters.retransmits++;
    }
    return 0;
}

/* Posts everything the engine has due now, as one work-request chain. */
static void pump(rdps_pub_t *pub, uint64_t now, uint64_t wall)
{
    struct rdps_rel_pub_glue *g = pub->rel;
    struct rdps_rel_pub_action a;
    int posted = 0;

    report_completions(g);
    if (g->has_pending) {
        if (post_action(pub, &g->pending) == RDPS_EAGAIN)
            return;
        g->has_pending = false;
        posted++;
    }
    while (rdps__rel_pub_next_action(&g->engine, now, wall, &a) == 1) {
        if (post_action(pub, &a) == RDPS_EAGAIN) {
            g->pending = a;
            g->has_pending = true;
            break;
        }
        posted++;
    }
    if (posted > 0)
        pub->ctx->transport->ops->flush(pub->ctx->transport);
}

size_t rdps__pub_rel_max_message_size(const rdps_pub_t *pub)
{
    return rdps__rel_pub_max_msg_len(&pub->rel->engine);
}

/*
 * After a message went into the ring: counters, posting (RDPS_SEND_MORE defers it), timers, then
 * local subscribers (from `data`) and engine events. Shared by send and commit. in_ring: `data`
 * is the message in the ring (commit), kept there while callbacks run.
 */
static int rel_appended(rdps_pub_t *pub, const void *data, size_t len, unsigned flags, bool in_ring,
                        uint64_t now, uint64_t wall)
{
    rdps_ctx_t *ctx = pub->ctx;
    struct rdps_rel_pub_glue *g = pub->rel;
    /* RDPS_SEND_MORE: the frames wait in the ring and go with the next send's chain (one
     * doorbell, one system call on soft-RoCE, for the batch: 0.57x the unreliable rate without);
     * with batching, later messages join the open frame meanwhile. */
    if (flags & RDPS_SEND_MORE)
        ctx->rel_sends_deferred = true;
    else
        pump(pub, now, wall);
    rdps__ctx_timer_at(ctx, now); /* the engine's deadlines moved */
    if (pub->topic->live_subs == 0 && g->event_count == 0)
        return 0;
    /* Subscribers in this ctx hear the message at once; engine events go out too. */
    rdps_msg_info info = {
        .topic = pub->topic->name,
        .topic_id = pub->topic->id,
        .session_id = pub->session_id,
        .seq = rdps__rel_pub_last_seq(&g->engine),
        .publisher_ts_ns = wall,
        .fragments = rdps__rel_pub_last_frames(&g->engine),
        .ordinal = rdps__rel_pub_next_ordinal(&g->engine) - 1u,
    };
    rdps__ctx_self_source(ctx, &info.source);
    /* Whatever the callbacks publish, the trail does not pass a frame they read in place. Until
     * the bracket closes the publisher is not freed (callbacks that destroy it only close it). */
    if (in_ring)
        rdps__rel_pub_pin(&g->engine, info.seq);
    rdps__ctx_callbacks_enter(ctx);
    if (g->event_count > 0)
        raise_events(pub);
    if (pub->topic->live_subs > 0)
        rdps__deliver_local(ctx, pub->topic, data, len, &info);
    if (in_ring)
        rdps__rel_pub_unpin(&g->engine);
    return rdps__ctx_callbacks_leave(ctx)
               ? rdps__set_err_static(RDPS_ECLOSED, RDPS__TEXT_CTX_DESTROYED)
               : 0;
}

int rdps__pub_rel_send(rdps_pub_t *pub, const void *data, size_t len, unsigned flags)
{
    struct rdps_rel_pub_glue *g = pub->rel;
    uint64_t now = rdps__ctx_now(pub->ctx), wall = rdps__clock_realtime_ns();

    report_completions(g);
    int frames = rdps__rel_pub_append(&g->engine, data, len, now, wall);
    if (frames == RDPS_EAGAIN) {
        pub->counters.send_backpressure++;
        return RDPS_EAGAIN;
    }
    if (frames == RDPS_EMSGSIZE && len > rdps__rel_pub_max_msg_len(&g->engine))
        return rdps__set_err(frames,
                             "reliable message of %zu bytes above %u bytes (the "
                             "ctx's max_message_size, or what the ring holds; see "
                             "rdps_pub_max_message_size)",
                             len, rdps__rel_pub_max_msg_len(&g->engine));
    if (frames < 0)
        return rdps__set_err(frames, "message of %zu bytes refused by the ring", len);
    return rel_appended(pub, data, len, flags, false, now, wall);
}

int rdps__pub_rel_claim(rdps_pub_t *pub, size_t want, void **data, size_t *capacity)
{
    struct rdps_rel_pub_glue *g = pub->rel;
    uint8_t *payload;
    uint32_t cap;

    report_completions(g);
    int rc =
        rdps__rel_pub_reserve(&g->engine, want > UINT32_MAX ? UINT32_MAX : (uint32_t)want,
                              rdps__ctx_now(pub->ctx), rdps__clock_realtime_ns(), &payload, &cap);
    if (rc == RDPS_EAGAIN) {
        pub->counters.send_backpressure++;
        return RDPS_EAGAIN;
    }
    if (rc < 0)
        return rdps__set_err(rc, "rdps_pub_claim: the ring cannot hold a datagram");
    *data = payload;
    *capacity = cap;
    return 0;
}

int rdps__pub_rel_commit(rdps_pub_t *pub, size_t len, unsigned flags)
{
    struct rdps_rel_pub_glue *g = pub->rel;
    uint64_t now = rdps__ctx_now(pub->ctx), wall = rdps__clock_realtime_ns();
    const uint8_t *payload = rdps__rel_pub_reserved_payload(&g->engine);

    int frames = rdps__rel_pub_commit(&g->engine, len, wall);
    if (frames < 0) { /* the caller checked the length against the claim: not reached */
        rdps__rel_pub_unreserve(&g->engine);
        return rdps__set_err(frames, "rdps_pub_commit: %zu bytes refused by the ring", len);
    }
    return rel_appended(pub, payload, len, flags, true, now, wall);
}

void rdps__pub_rel_unclaim(rdps_pub_t *pub)
{
    rdps__rel_pub_unreserve(&pub->rel->engine);
}

void rdps__pub_rel_on_control(rdps_ctx_t *ctx, const struct rdps_source *src,
                              const struct rdps_frame_view *v)
{
    for (rdps_pub_t *p = ctx->pubs; p != NULL; p = p->next) {
        if (p->rel == NULL || p->closed || p->session_id != v->hdr.session_id)
            continue;
        uint64_t wall = rdps__clock_realtime_ns();
        if (v->hdr.type == RDPS_FRAME_NAK)
            p->counters.naks_received++;
        else if (v->hdr.type == RDPS_FRAME_STATUS)
            rdps__fanout_confirm(p->topic, src); /* it receives what it is sent */
        rdps__rel_pub_on_frame(&p->rel->engine, src, v, ctx->now_ns, wall);
        pump(p, ctx->now_ns, wall);
        raise_events(p); /* inside poll: the callback bracket is held */
        rdps__ctx_timer_at(ctx, ctx->now_ns);
        return;
    }
}

uint64_t rdps__pub_rel_progress(rdps_ctx_t *ctx)
{
    uint64_t next = UINT64_MAX;
    if (ctx->reliable_pubs == 0)
        return next;
    uint64_t wall = rdps__clock_realtime_ns();
    for (rdps_pub_t *p = ctx->pubs; p != NULL; p = p->next) {
        if (p->rel == NULL || p->closed)
            continue;
        struct rdps_rel_pub_glue *g = p->rel;
        uint64_t deadline = rdps__rel_pub_tick(&g->engine, ctx->now_ns);
        if (deadline <= ctx->now_ns || g->has_pending ||
            rdps__tx_mem_completed(g->ring_reg) > g->done_reported) {
            pump(p, ctx->now_ns, wall);
            deadline = rdps__rel_pub_tick(&g->engine, ctx->now_ns);
        }
        raise_events(p);
        if (g->has_pending && deadline > ctx->now_ns + 100000ull)
            deadline = ctx->now_ns + 100000ull; /* the send queue was full: try again soon */
        if (deadline < next)
            next = deadline;
    }
    return next;
}

void rdps__pub_rel_flush(rdps_ctx_t *ctx, enum rdps_flush_mode mode)
{
    uint64_t now = rdps__ctx_now(ctx), wall = rdps__clock_realtime_ns();
    for (rdps_pub_t *p = ctx->pubs; p != NULL; p = p->next) {
        if (p->rel == NULL || p->closed)
            continue;
        if (mode == RDPS_FLUSH_ALL) /* rdps_ctx_flush: lingering frames go too */
            rdps__rel_pub_end_linger(&p->rel->engine);
        if (mode != RDPS_FLUSH_POLL) /* and those waiting for the device */
            rdps__rel_pub_end_await(&p->rel->engine);
        pump(p, now, wall);
    }
}

void rdps__pub_rel_topic_path(rdps_ctx_t *ctx, const struct rdps_topic *t)
{
    for (rdps_pub_t *p = ctx->pubs; p != NULL; p = p->next)
        if (p->rel != NULL && p->topic == t)
            rdps__rel_pub_set_fanout(&p->rel->engine, t->send_path == RDPS_PATH_UNICAST);
}

uint32_t rdps__pub_rel_receivers_behind(const rdps_pub_t *pub)
{
    return rdps__rel_pub_receivers_behind(&pub->rel->engine);
}

void rdps__pub_rel_counters(const rdps_pub_t *pub, rdps_counters *out)
{
    const struct rdps_rel_pub_counters *c = rdps__rel_pub_counters(&pub->rel->engine);
    /* Messages are counted by the engine (the join path appends without the glue). */
    uint32_t open_msgs;
    uint64_t open_bytes;
    rdps__rel_pub_open_counts(&pub->rel->engine, &open_msgs, &open_bytes);
    out->msgs_sent += c->msgs_appended + open_msgs;
    out->bytes_sent += c->bytes_appended + open_bytes;
    out->heartbeats_sent += c->heartbeats + c->heartbeats_unrecoverable + c->heartbeats_poked;
    out->receiver_evictions += c->evictions;
    out->naks_suppressed += c->nak_seqs_suppressed;
    out->repairs_unicast += c->repairs_unicast;
    out->repairs_multicast += c->repairs_multicast;
    out->repair_bytes += c->repair_bytes;
    out->parity_sent += c->parity_sent;
    out->parity_bytes += c->parity_bytes;
    out->parity_proactive += c->parity_proactive;
    out->rate_waits += c->rate_waits;
    out->receivers_refused += c->receivers_refused;
    out->repair_queue_full += c->repair_queue_full;
    out->repair_share_spent += c->repair_share_spent;
    out->repair_data_limited += c->repairs_unearned;
    out->naks_limited += c->nak_host_limited;
    out->receivers_displaced += c->receivers_displaced;
    out->frames_batched += c->frames_batched;
    if (c->rtt_last_ns / 1000u > out->rtt_us)
        out->rtt_us = c->rtt_last_ns / 1000u; /* the ctx's figure: the worst publisher's */
}
