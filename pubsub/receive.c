/* SPDX-License-Identifier: BSD-2-Clause */
/* receive.c - the receive path: decode, drop own/unknown frames, reassemble, call subscribers. */
#include "ctx_internal.h"

#include <stdlib.h>
#include <string.h>

#include "abi.h"
#include "rdps_batch.h"
#include "discovery_engine.h"
#include "rdps_clock.h"
#include "rdps_endian.h"
#include "rdps_error.h"
#include "rdps_random.h"
#include "rdps_reasm.h"
#include "rdps_rel_recv.h"

/* Who sent the datagram, exactly as the device reported it. */
static inline void rx_source(const struct rdps_rx_datagram *rx, struct rdps_source *out)
{
    if (rx->has_src_gid) {
        memcpy(out->gid, rx->src_gid, sizeof(out->gid));
        out->lid = 0;
        out->has_gid = 1;
    } else {
        memset(out->gid, 0, sizeof(out->gid));
        out->lid = rx->src_lid;
        out->has_gid = 0;
    }
    out->qpn = rx->src_qpn;
    out->reserved_ = 0;
}

static inline void bump_delivered(rdps_counters *c, uint32_t len, uint32_t frags)
{
    c->msgs_delivered++;
    c->bytes_delivered += len;
    c->fragments_received += frags;
}

/*
 * Calls every live subscriber of the topic, counting the message for each. Callbacks run with the
 * ctx's callback depth raised, so a destroyed subscriber is only marked closed and stays linked:
 * `next` stays valid. Inline (always): it is the end of the receive path of every message.
 */
__attribute__((always_inline)) static inline void
deliver_subs(struct rdps_topic *topic, const void *data, size_t len, const rdps_msg_info *info)
{
    for (struct rdps_sub *s = topic->subs, *next; s != NULL; s = next) {
        next = s->topic_next;
        if (s->closed)
            continue;
        bump_delivered(&s->counters, (uint32_t)len, info->fragments);
        s->on_message(s->user, data, len, info);
    }
}

/* Counts the message for the ctx and delivers it to the topic's subscribers. */
__attribute__((always_inline)) static inline void deliver(rdps_ctx_t *ctx, struct rdps_topic *topic,
                                                          const void *data, size_t len,
                                                          const rdps_msg_info *info)
{
    bump_delivered(&ctx->counters, (uint32_t)len, info->fragments);
    deliver_subs(topic, data, len, info);
}

void rdps__deliver_local(rdps_ctx_t *ctx, struct rdps_topic *topic, const void *data, size_t len,
                         const rdps_msg_info *info)
{
    deliver(ctx, topic, data, len, info);
}

/* The topic a delivered message is for: the frame being handled is the one that completed it (its
 * topic was checked), and a stream carries one topic. NULL: nobody here wants it (counted). */
static struct rdps_topic *delivery_topic(rdps_ctx_t *ctx, uint64_t topic_id)
{
    struct rdps_topic *topic = ctx->rx_topic;
    if (topic == NULL || topic->id != topic_id) {
        topic = rdps__ctx_topic_find(ctx, topic_id);
        if (topic == NULL || topic->live_subs == 0) {
            ctx->counters.unknown_topic++;
            return NULL;
        }
    }
    return topic;
}

static inline void msg_info_init(rdps_msg_info *info, const struct rdps_topic *topic,
                                 const struct rdps_reasm_msg_info *ri)
{
    *info = (rdps_msg_info){
        .topic = topic->name,
        .topic_id = ri->topic_id,
        .session_id = ri->session_id,
        .seq = ri->first_seq,
        .publisher_ts_ns = ri->timestamp_ns,
        .fragments = ri->frag_count,
        .retransmitted = ri->retransmit,
        .source = ri->source,
        .ordinal = ri->ordinal,
    };
}

static void on_deliver(void *user, const uint8_t *msg, uint32_t len,
                       const struct rdps_reasm_msg_info *ri)
{
    rdps_ctx_t *ctx = user;
    struct rdps_topic *topic = delivery_topic(ctx, ri->topic_id);
    if (topic == NULL)
        return;
    rdps_msg_info info;
    msg_info_init(&info, topic, ri);
    deliver(ctx, topic, msg, len, &info);
}

/* A batched datagram's messages: one rdps_msg_info for them all, its ordinal moving on; the ctx
 * counts them at once. */
static void on_deliver_batch(void *user, const uint8_t *payload, uint32_t payload_len,
                             uint32_t count, const struct rdps_reasm_msg_info *ri)
{
    rdps_ctx_t *ctx = user;
    struct rdps_topic *topic = delivery_topic(ctx, ri->topic_id);
    if (topic == NULL)
        return;
    rdps_msg_info info;
    msg_info_init(&info, topic, ri);
    ctx->counters.msgs_delivered += count;
    ctx->counters.bytes_delivered += payload_len - RDPS_BATCH_LEN_BYTES * count;
    ctx->counters.fragments_received += (uint64_t)count * ri->frag_count;
    struct rdps_batch_iter it;
    rdps__batch_iter_init(&it, payload);
    /* The records fill the payload exactly (checked when the datagram was decoded). */
    for (const uint8_t *end = payload + payload_len; it.at < end; info.ordinal++) {
        uint32_t len;
        const uint8_t *msg = rdps__batch_next(&it, &len);
        deliver_subs(topic, msg, len, &info);
    }
}

void rdps__topic_notify(rdps_ctx_t *ctx, struct rdps_topic *topic, const rdps_event *ev)
{
    rdps__ctx_callbacks_enter(ctx);
    for (struct rdps_sub *s = topic->subs, *next; s != NULL; s = next) {
        next = s->topic_next;
        if (!s->closed && s->on_event)
            s->on_event(s->event_user, ev);
    }
    rdps__ctx_callbacks_leave(ctx); /* inside poll (depth > 1): frees nothing */
}

static void on_gap(void *user, const struct rdps_reasm_gap *gap)
{
    rdps_ctx_t *ctx = user;
    struct rdps_topic *topic = rdps__ctx_topic_find(ctx, gap->topic_id);
    if (topic == NULL)
        return;
    rdps_event ev = {
        .type = RDPS_EVENT_GAP,
        .topic = topic->name,
        .session_id = gap->session_id,
        .first_seq = gap->first_seq,
        .count = gap->count,
        .source = *gap->source,
        .first_ordinal = gap->msg_first,
        .msg_count = gap->msg_count,
    };
    for (struct rdps_sub *s = topic->subs; s != NULL; s = s->topic_next) {
        if (!s->closed) {
            s->counters.gaps += gap->count;
            s->counters.gap_messages += gap->msg_count;
        }
    }
    rdps__topic_notify(ctx, topic, &ev);
}

/* Reliable handling for a new session of a reliable publisher: only if a subscriber asked. */
static int want_reliable(void *user, const struct rdps_source *source, uint32_t session_id,
                         uint64_t topic_id)
{
    rdps_ctx_t *ctx = user;
    const struct rdps_topic *topic = rdps__ctx_topic_find(ctx, topic_id);
    (void)source;
    (void)session_id;
    if (topic == NULL || topic->reliable_subs == 0)
        return RDPS_REASM_WANT_UNRELIABLE;
    return topic->oldest_subs > 0 ? RDPS_REASM_WANT_OLDEST : RDPS_REASM_WANT_LIVE;
}

/* NAK or STATUS to a publisher, by unicast to its QP. */
static void send_control(void *user, const struct rdps_source *dest, uint32_t session_id,
                         const uint8_t *frame, size_t len)
{
    rdps_ctx_t *ctx = user;
    const struct rdps_dest *d;
    (void)session_id;
    if (rdps__transport_source_dest(ctx->transport, dest, &d) < 0 ||
        rdps__ctx_send_frame(ctx, d, frame, (uint32_t)len) < 0)
        ctx->counters.control_send_failures++; /* the engine retries NAKs and STATUS */
}

static void on_loss(void *user, const struct rdps_reasm_loss *loss)
{
    rdps_ctx_t *ctx = user;
    struct rdps_topic *topic = rdps__ctx_topic_find(ctx, loss->topic_id);
    if (topic == NULL)
        return;
    rdps_event ev = {
        .type = RDPS_EVENT_LOSS,
        .topic = topic->name,
        .session_id = loss->session_id,
        .first_seq = loss->first_seq,
        .count = loss->count,
        .source = *loss->source,
        .reason = (int)loss->reason,
        .first_ordinal = loss->msg_first,
        .msg_count = loss->msg_count,
    };
    rdps__topic_notify(ctx, topic, &ev);
}

/* The NAK backoff's receiver count: this ctx and the topic's remote reliable subscribers as
 * discovery counts them by host (forged announcements raise it by a few per host at most). */
static uint32_t receivers_of(void *user, uint64_t topic_id)
{
    rdps_ctx_t *ctx = user;
    const struct rdps_topic *topic = rdps__ctx_topic_find(ctx, topic_id);
    if (topic == NULL || ctx->discovery == NULL)
        return 1;
    return 1 + rdps__disc_counted_receivers(ctx->discovery, topic->id, topic->name);
}

int rdps__receive_init(rdps_ctx_t *ctx)
{
    struct rdps_reasm_config rc;
    rdps__reasm_config_default(&rc);
    rc.max_sessions = ctx->cfg.max_sessions;
    rc.max_streams_per_source = ctx->cfg.max_sessions_per_source;
    rc.max_partials = ctx->cfg.max_partials;
    rc.max_partials_per_source = ctx->cfg.max_partials_per_source;
    rc.reasm_cap_bytes = ctx->cfg.reassembly_memory;
    rc.max_bytes_per_source = ctx->cfg.reassembly_memory_per_source;
    rc.partial_timeout_ns = (uint64_t)ctx->cfg.reassembly_timeout_ms * 1000000ull;
    ctx->reassembly_timeout_ns = rc.partial_timeout_ns;
    ctx->reorder_allowance_ns = rc.reorder_allowance_ns;
    rc.hash_seed = rdps__random_u64();
    rc.limits = ctx->limits;
    rc.deliver = on_deliver;
    rc.deliver_batch = on_deliver_batch;
    rc.want_reliable = want_reliable;
    rc.rel.enabled = true; /* only for sessions want_reliable() picks */
    rc.rel.receiver_id = ctx->rel_receiver_id;
    rc.rel.rng_seed = rdps__random_u64();
    /* Retries outside the publisher's repair linger, or it ignores them: 2 ms with several
     * receivers, so 4 ms; alone, 1.25 of its RTTs (25 us..2 ms), so two RTTs and at least 50 us
     * (three RTTs and 200 us held a lone receiver's window on its oldest hole most of a 20 %
     * loss run on a simulated 10 Gb/s fabric: 0.15-0.30 of line rate, 0.42-0.63 now). */
    rc.rel.nak_retry_min_ns = 4000000ull;
    rc.rel.nak_retry_alone_ns = 50000ull;
    rc.rel.nak_retry_min_rtts = 2;
    /* Each try fails with 1 - (1 - loss)^2 (NAK or repair lost): 36 % at 20 % loss, and loss
     * bursts last through many tries on quiet links; what the publisher still holds is given up
     * by the 5 s loss deadline, not a count (200 tries at most 25 ms apart). */
    rc.rel.nak_max_tries = 200;
    rc.rel.nak_retry_max_ns = 25000000ull;
    /* Hold first NAKs for the reorder allowance only on paths seen reordering (netem reorder
     * 25 % across guests: 4x fewer useless repairs); in-order fabrics keep NAKing at once. */
    rc.rel.reorder_holdoff_ns = rc.reorder_allowance_ns;
    /* Uniform loss over 1024 datagrams of the window leaves ~100 holes at 10 %: a short gap list
     * merges them and the publisher resends what arrived (seen on rxe: 12x the lost bytes). */
    rc.max_gap_ranges = 256;
    /* A parked small message holds one arena chunk: 16 KiB chunks let a window of them fit. */
    rc.chunk_bytes = 16u * 1024u;
    rc.rel.send = send_control;
    rc.rel.on_loss = on_loss;
    rc.rel.receivers_of = receivers_of;
    /* Parity repairs: blocks of up to 64 datagrams of this path's MTU; one stream the window's
     * worth (2048 datagrams: 32 blocks). */
    rc.rel.parity_blocks = ctx->cfg.parity_blocks;
    rc.rel.parity_blocks_per_stream = ctx->cfg.parity_blocks < 32 ? ctx->cfg.parity_blocks : 32;
    rc.rel.parity_k_max = 64;
    rc.rel.parity_max_frame = ctx->max_datagram;
    rc.on_gap = on_gap;
    rc.user = ctx;

    ctx->reasm = calloc(1, sizeof(*ctx->reasm));
    if (ctx->reasm == NULL)
        return rdps__set_err(RDPS_ENOMEM, "reassembler: out of memory");
    int err = rdps__reasm_init(ctx->reasm, &rc);
    if (err < 0) {
        free(ctx->reasm);
        ctx->reasm = NULL;
        return rdps__prepend_err(err, "reassembler: ");
    }
    return 0;
}

void rdps__receive_fini(rdps_ctx_t *ctx)
{
    if (ctx->reasm == NULL)
        return;
    rdps__reasm_fini(ctx->reasm);
    free(ctx->reasm);
    ctx->reasm = NULL;
}

/*
 * Our own multicast looped back: our QPN from our GID, or, on InfiniBand without a GRH, from our
 * LID. A QPN alone proves nothing (every port numbers its QPs from the same small range).
 */
static bool is_own_datagram(const rdps_ctx_t *ctx, const struct rdps_rx_datagram *rx)
{
    if (rx->src_qpn != ctx->self_qpn)
        return false;
    if (rx->has_src_gid)
        return ctx->has_self_gid && memcmp(rx->src_gid, ctx->self_gid, 16) == 0;
    return ctx->self_lid != 0 && rx->src_lid == ctx->self_lid;
}

/*
 * DATA, the hot path: the topic is read from the header first (frames of topics nobody here
 * subscribes are dropped before any work), then the reassembler decodes the frame itself, which
 * lets it check a frame against the one its stream predicted instead of decoding it afresh.
 */
static void receive_data(rdps_ctx_t *ctx, const struct rdps_rx_datagram *rx)
{
    struct rdps_topic *topic =
        rdps__ctx_topic_find(ctx, rdps__get_le64(rx->data + RDPS_FRAME_OFF_TOPIC_ID));
    if (topic == NULL || topic->live_subs == 0) {
        ctx->counters.unknown_topic++;
        return;
    }
    ctx->rx_topic = topic;
    int rc = rdps__reasm_input(ctx->reasm, &ctx->rx_source, rx->data, rx->len, ctx->now_ns);
    ctx->rx_topic = NULL;
    if (rc == RDPS_EBADFRAME) {
        ctx->counters.bad_frames++; /* by reason: the reassembler's bad_frames[] */
        return;
    }
    /* A partial started here expires no earlier than this: make sure the timer looks. */
    if (rdps__reasm_partials_pending(ctx->reasm))
        rdps__ctx_timer_at(ctx, ctx->now_ns + ctx->reassembly_timeout_ns);
    /* A sequence skipped here is a gap only if it is still missing after the reorder allowance. */
    if (rdps__reasm_gaps_pending(ctx->reasm))
        rdps__ctx_timer_at(ctx, ctx->now_ns + ctx->reorder_allowance_ns);
}

void rdps__receive_datagram(rdps_ctx_t *ctx, const struct rdps_rx_datagram *rx)
{
    struct rdps_frame_view v;

    ctx->counters.frames_received++;
    ctx->counters.frame_bytes_received += rx->len;
    if (is_own_datagram(ctx, rx)) {
        /* Multicast looped back to our own QP: local subscribers got it at send time. */
        ctx->counters.own_frames++;
        return;
    }
    rx_source(rx, &ctx->rx_source);
    if (rx->len >= RDPS_FRAME_HEADER_LEN && rx->data[RDPS_FRAME_OFF_TYPE] == RDPS_FRAME_DATA) {
        receive_data(ctx, rx);
        return;
    }
    enum rdps_frame_reject why = rdps__frame_decode(rx->data, rx->len, &ctx->limits, &v);
    if (why != RDPS_FRAME_OK) {
        ctx->counters.bad_frames++;
        ctx->bad_frames_by_reason[why]++;
        return;
    }
    switch (v.hdr.type) {
    case RDPS_FRAME_HEARTBEAT:
    case RDPS_FRAME_PARITY: { /* a reliable stream's parity datagram goes where its heartbeat does
                               */
        struct rdps_topic *topic = rdps__ctx_topic_find(ctx, v.hdr.topic_id);
        if (topic == NULL || topic->live_subs == 0) {
            ctx->counters.unknown_topic++;
            return;
        }
        ctx->rx_topic = topic;
        rdps__reasm_on_frame(ctx->reasm, &ctx->rx_source, &v, ctx->now_ns);
        ctx->rx_topic = NULL;
        if (rdps__reasm_gaps_pending(ctx->reasm)) /* a heartbeat revealed tail loss */
            rdps__ctx_timer_at(ctx, ctx->now_ns + ctx->reorder_allowance_ns);
        return;
    }
    case RDPS_FRAME_ANNOUNCE:
        rdps__discovery_on_frame(ctx, &ctx->rx_source, &v, rx->to_multicast);
        return;
    case RDPS_FRAME_NAK:
        ctx->counters.naks_received++;
        rdps__pub_rel_on_control(ctx, &ctx->rx_source, &v);
        return;
    case RDPS_FRAME_STATUS:
        rdps__pub_rel_on_control(ctx, &ctx->rx_source, &v);
        return;
    default:
        return;
    }
}

uint64_t rdps__receive_expire(rdps_ctx_t *ctx)
{
    return rdps__reasm_expire(ctx->reasm, ctx->now_ns);
}

uint64_t rdps__receive_heard(const rdps_ctx_t *ctx, const struct rdps_source *source,
                             uint32_t session_id)
{
    return ctx->reasm != NULL ? rdps__reasm_stream_active_ns(ctx->reasm, source, session_id) : 0;
}

/* Sequences given up, every reason together (the public counters do not split them). */
static uint64_t lost_total(const struct rdps_rel_recv_counters *c)
{
    uint64_t lost = 0;
    for (int i = 0; i < RDPS__LOSS_REASONS; i++)
        lost += c->lost[i];
    return lost;
}

void rdps__receive_counters(const rdps_ctx_t *ctx, rdps_counters *out)
{
    const struct rdps_reasm_counters *rc = rdps__reasm_counters(ctx->reasm);
    out->gaps = rc->gap_seqs;
    out->gap_messages = rc->gap_msgs;
    out->late_dropped = rc->late_after_gap;
    out->duplicates = rc->duplicates + rc->stale;
    out->reasm_evictions = rc->reasm_evicted + rc->reasm_too_large;
    out->reasm_timeouts = rc->reasm_timeouts;
    out->sessions_evicted = rc->sessions_evicted;
    out->reasm_quota_drops =
        rc->reasm_source_partials + rc->reasm_source_bytes + rc->sessions_source_quota;
    out->session_resets = rc->session_resets;
    const struct rdps_rel_recv_counters *rel = rdps__reasm_rel_counters(ctx->reasm);
    if (rel != NULL) {
        out->naks_sent = rel->naks_sent;
        out->recovered = rel->recovered;
        out->out_of_order = rel->out_of_order;
        out->loss_events = rel->loss_events;
        out->status_sent = rel->status_sent;
        out->sessions_idle = rel->idle;
        out->repair_latency_p50_us = rdps__rel_latency_quantile_us(rel->repair_latency, 0.5);
        out->repair_latency_p99_us = rdps__rel_latency_quantile_us(rel->repair_latency, 0.99);
        out->repair_rtts_p50_milli = rdps__rel_rtts_quantile_milli(rel->repair_rtts, 0.5);
        out->repair_rtts_p99_milli = rdps__rel_rtts_quantile_milli(rel->repair_rtts, 0.99);
        out->lost = lost_total(rel);
        out->lost_messages = rel->lost_msgs;
        out->parity_rebuilt = rel->parity_rebuilt;
    }
}

uint64_t rdps__receive_reliable_poll(rdps_ctx_t *ctx, bool backlog)
{
    rdps__reasm_rel_set_backlog(ctx->reasm, backlog);
    return rdps__reasm_rel_poll(ctx->reasm, ctx->now_ns, rdps__clock_realtime_ns());
}

struct session_fill {
    unsigned char *out; /* the caller's array, elem_size bytes apart */
    size_t max, n, elem_size;
};

static void fill_session(void *user, const struct rdps_source *source, uint32_t session_id,
                         const struct rdps_rel_stream_info *info)
{
    struct session_fill *f = user;
    if (f->n < f->max) {
        const struct rdps_rel_recv_counters *c = &info->counters;
        rdps_session_stats stats, *o = &stats;
        memset(o, 0, sizeof(*o));
        o->session_id = session_id;
        o->source = *source;
        o->consumed_seq = info->consumed_seq;
        o->gap_ranges = info->gap_ranges;
        o->delivered = c->delivered;
        o->naks_sent = c->naks_sent;
        o->naks_suppressed = c->naks_suppressed;
        o->recovered = c->recovered;
        o->out_of_order = c->out_of_order;
        o->duplicates = c->duplicates;
        o->lost = lost_total(c);
        o->lost_messages = c->lost_msgs;
        o->loss_events = c->loss_events;
        o->status_sent = c->status_sent;
        o->rtt_us = info->srtt_ns / 1000;
        o->repair_latency_p50_us = rdps__rel_latency_quantile_us(c->repair_latency, 0.5);
        o->repair_latency_p99_us = rdps__rel_latency_quantile_us(c->repair_latency, 0.99);
        o->repair_rtts_p50_milli = rdps__rel_rtts_quantile_milli(c->repair_rtts, 0.5);
        o->repair_rtts_p99_milli = rdps__rel_rtts_quantile_milli(c->repair_rtts, 0.99);
        rdps__abi_write_out(f->out + f->n * f->elem_size, f->elem_size, o, sizeof(*o));
    }
    f->n++;
}

static int sub_sessions(const rdps_sub_t *sub, rdps_session_stats *out, size_t max,
                        size_t elem_size)
{
    if (sub == NULL || (out == NULL && max > 0))
        return rdps__set_err_static(RDPS_EINVAL,
                                    sub == NULL ? "NULL subscriber" : "NULL array with max > 0");
    if (elem_size < RDPS__ABI_SESSION_STATS_SIZE_1_0)
        return rdps__set_err(RDPS_EINVAL,
                             "rdps_sub_sessions: rdps_session_stats of %zu bytes: smaller than "
                             "rdps 1.0's",
                             elem_size);
    if (sub->closed)
        return rdps__set_err_static(RDPS_ECLOSED, "the subscriber was destroyed (from a callback)");
    struct session_fill f = {(unsigned char *)out, max, 0, elem_size};
    rdps__reasm_rel_streams(sub->ctx->reasm, sub->topic->id, fill_session, &f);
    return f.n > INT32_MAX ? INT32_MAX : (int)f.n;
}

int rdps_sub_sessions_sized(const rdps_sub_t *handle, rdps_session_stats *out, size_t max,
                            size_t elem_size)
{
    rdps_sub_t *sub;
    rdps__api_enter();
    int rc = rdps__sub_enter(handle, &sub);
    return rdps__api_return(rc < 0 ? rc : sub_sessions(sub, out, max, elem_size),
                            "rdps_sub_sessions");
}
