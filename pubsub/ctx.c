/* SPDX-License-Identifier: BSD-2-Clause */
/* ctx.c - rdps_ctx at work: its clock, topic groups, control frames, the poll loop and timers,
 * arm/wait and its counters (created and destroyed in ctx_lifecycle.c). */
#include "ctx_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "abi.h"
#include "rdps_clock.h"
#include "rdps_error.h"
#include "rdps_random.h"
#include "rdps_log.h"
#include "rdps_local.h"
#include "rdps_loopback.h"
#include "rdps_loss.h"
#include "rdps_verbs_transport.h"

uint64_t rdps__ctx_now(const rdps_ctx_t *ctx)
{
    return ctx->clock ? ctx->clock(ctx->clock_user) : rdps__clock_monotonic_ns();
}

void rdps__ctx_set_clock(rdps_ctx_t *handle, uint64_t (*clock)(void *user), void *user)
{
    rdps_ctx_t *ctx = rdps__ctx_of_handle(handle);
    ctx->clock = clock;
    ctx->clock_user = user;
    ctx->now_ns = rdps__ctx_now(ctx);
    ctx->next_timer_ns = 0;
}

uint32_t rdps__ctx_random32(void)
{
    uint32_t v;
    do {
        uint64_t r = rdps__random_u64();
        v = (uint32_t)(r ^ (r >> 32));
    } while (v == 0); /* 0 means "none" on the wire (session ids) */
    return v;
}

void rdps__ctx_timers_changed(rdps_ctx_t *ctx)
{
    ctx->next_timer_ns = 0;
}

/* ---- topics ---- */

static int ctx_map_topic(rdps_ctx_t *ctx, const char *topic, const char *group)
{
    struct rdps_topic *t;
    if (ctx == NULL || group == NULL)
        return rdps__set_err_static(RDPS_EINVAL, ctx == NULL ? "NULL ctx" : "NULL group");
    int rc = rdps__topic_table_get(&ctx->topics, topic, group, &t);
    if (rc < 0)
        return rc;
    t->mapped = true; /* remembered even while no endpoint uses it */
    return 0;
}

int rdps_ctx_map_topic(rdps_ctx_t *handle, const char *topic, const char *group)
{
    rdps_ctx_t *ctx;
    rdps__api_enter();
    int rc = rdps__ctx_enter(handle, &ctx);
    return rdps__api_return(rc < 0 ? rc : ctx_map_topic(ctx, topic, group), "rdps_ctx_map_topic");
}

static int topic_group(const rdps_ctx_t *ctx, const char *topic, char *buf, size_t len)
{
    if (ctx == NULL || buf == NULL || len < 16)
        return rdps__set_err(RDPS_EINVAL, "%s",
                             ctx == NULL   ? "NULL ctx"
                             : buf == NULL ? "NULL buffer"
                                           : "buffer under 16 bytes (an IPv4 address needs 16)");
    int rc = rdps__topic_name_check(topic);
    if (rc < 0)
        return rc;
    rdps__ipv4_format(rdps__topic_table_group_of(&ctx->topics, topic), buf, len);
    return 0;
}

int rdps_topic_group(const rdps_ctx_t *handle, const char *topic, char *buf, size_t len)
{
    rdps_ctx_t *ctx;
    rdps__api_enter();
    int rc = rdps__ctx_enter(handle, &ctx);
    return rdps__api_return(rc < 0 ? rc : topic_group(ctx, topic, buf, len), "rdps_topic_group");
}

/* ---- sending one frame (control frames; data goes through publisher.c) ---- */

int rdps__ctx_claim(rdps_ctx_t *ctx, struct rdps_tx_buf *buf)
{
    struct rdps_transport *t = ctx->transport;
    int rc = t->ops->claim(t, buf);
    if (rc == RDPS_EAGAIN) {
        /* Post what RDPS_SEND_MORE queued and reap completions, then try once more. */
        t->ops->flush(t);
        if (rdps__ctx_reap_sends(ctx) < 0)
            return rc;
        rc = t->ops->claim(t, buf);
    }
    return rc;
}

void rdps__ctx_self_source(const rdps_ctx_t *ctx, struct rdps_source *out)
{
    memset(out, 0, sizeof(*out));
    if (ctx->has_self_gid) {
        memcpy(out->gid, ctx->self_gid, sizeof(out->gid));
        out->has_gid = 1;
    }
    out->qpn = ctx->self_qpn;
    out->lid = ctx->self_lid;
}

int rdps__ctx_reap_sends(rdps_ctx_t *ctx)
{
    /* max 0: send completions only, so this is safe while a receive batch is being handled. */
    struct rdps_rx_datagram none[1];
    return ctx->transport->ops->poll(ctx->transport, none, 0);
}

int rdps__ctx_send_frame(rdps_ctx_t *ctx, const struct rdps_dest *dest, const uint8_t *frame,
                         uint32_t len)
{
    struct rdps_transport *t = ctx->transport;
    struct rdps_tx_buf buf;
    int rc = rdps__ctx_claim(ctx, &buf);
    if (rc < 0)
        return rc;
    if (len > buf.capacity) {
        t->ops->abort(t, &buf);
        return rdps__set_err(RDPS_EMSGSIZE, "frame of %u bytes above the datagram size %u", len,
                             buf.capacity);
    }
    memcpy(buf.data, frame, len);
    rc = t->ops->submit(t, &buf, len, &dest, 1);
    if (rc < 0)
        return rc;
    rc = t->ops->flush(t);
    if (rc < 0)
        return rc;
    ctx->counters.frames_sent++;
    ctx->counters.frame_bytes_sent += len;
    return 0;
}

/* Destinations per buffer: a chain that fits any send queue the ctx accepts (send_slots >= 16,
 * so a few chains of 64 at most), and keeps control frames from crowding out data. */
#define MULTI_CHUNK 64u

int rdps__ctx_send_frame_multi(rdps_ctx_t *ctx, const struct rdps_dest *const *dests, uint32_t n,
                               const uint8_t *frame, uint32_t len)
{
    struct rdps_transport *t = ctx->transport;
    for (uint32_t off = 0; off < n; off += MULTI_CHUNK) {
        uint32_t k = n - off < MULTI_CHUNK ? n - off : MULTI_CHUNK;
        if (rdps__transport_send_room(t) < k + 1) { /* + 1: the claim's own slot */
            t->ops->flush(t);
            (void)rdps__ctx_reap_sends(ctx);
            if (rdps__transport_send_room(t) < k + 1)
                return RDPS_EAGAIN;
        }
        struct rdps_tx_buf buf;
        int rc = rdps__ctx_claim(ctx, &buf);
        if (rc < 0)
            return rc;
        if (len > buf.capacity) {
            t->ops->abort(t, &buf);
            return rdps__set_err(RDPS_EMSGSIZE, "frame of %u bytes above the datagram size %u", len,
                                 buf.capacity);
        }
        memcpy(buf.data, frame, len);
        if ((rc = t->ops->submit(t, &buf, len, dests + off, k)) < 0)
            return rc;
        ctx->counters.frames_sent += k;
        ctx->counters.frame_bytes_sent += (uint64_t)len * k;
    }
    return t->ops->flush(t);
}

/* ---- progress ---- */

/* Picks up joins that completed since the last poll (topics' in unicast.c). */
static void update_memberships(rdps_ctx_t *ctx)
{
    const struct rdps_dest *dest;
    if (ctx->control_dest == NULL && ctx->control_membership &&
        ctx->member_ops->state(ctx->control_membership, &dest) == 1)
        ctx->control_dest = dest;
    if (ctx->topics_joining > 0 || ctx->now_ns >= ctx->topics_deadline_ns)
        rdps__topics_progress(ctx);
}

/* Every subscriber hears that datagrams may have been lost while the QP was down. */
static void raise_qp_recovered(rdps_ctx_t *ctx)
{
    struct rdps_transport_stats ts;
    ctx->transport->ops->get_stats(ctx->transport, &ts);
    uint64_t lost = ts.tx_lost_qp_error - ctx->sends_lost_reported;
    ctx->sends_lost_reported = ts.tx_lost_qp_error;
    for (struct rdps_sub *s = ctx->subs; s != NULL; s = s->next) {
        if (s->closed || s->on_event == NULL)
            continue;
        rdps_event ev = {
            .type = RDPS_EVENT_QP_RECOVERED,
            .topic = s->topic->name,
            .count = (uint32_t)(lost > UINT32_MAX ? UINT32_MAX : lost),
        };
        rdps__ctx_self_source(ctx, &ev.source);
        s->on_event(s->event_user, &ev);
    }
}

static int handle_transport_events(rdps_ctx_t *ctx)
{
    enum rdps_transport_event_type type;
    while (ctx->transport->ops->next_event(ctx->transport, &type) == 1) {
        switch (type) {
        case RDPS_TRANSPORT_EV_DEVICE_FATAL:
            return rdps__set_err(RDPS_EDEVFATAL, "the RDMA device reported a fatal error");
        case RDPS_TRANSPORT_EV_PORT_DOWN:
            RDPS_LOG_WRN("RDMA port went down: sends fail until it is back");
            break;
        case RDPS_TRANSPORT_EV_PORT_ACTIVE:
            RDPS_LOG_INF("RDMA port is active again");
            break;
        case RDPS_TRANSPORT_EV_QP_RECOVERED:
            RDPS_LOG_WRN("the queue pair entered the error state and was reset");
            raise_qp_recovered(ctx);
            break;
        default:
            break;
        }
    }
    return 0;
}

/*
 * Posts what the ctx's publishers hold: their open datagrams and reliable open frames as `mode`
 * says (now_ns: monotonic; lingering ones left keep the ctx's timer at their deadline), reliable
 * frames RDPS_SEND_MORE deferred, and the transport's queued chain, as one post.
 */
static int flush_sends(rdps_ctx_t *ctx, enum rdps_flush_mode mode, uint64_t now_ns)
{
    int rc = 0;
    if (ctx->open_batches > 0) {
        uint64_t lingering;
        rc = rdps__ctx_batches_flush(ctx, mode, now_ns, &lingering);
        rdps__ctx_timer_at(ctx, lingering);
    }
    if (ctx->rel_sends_deferred || (mode != RDPS_FLUSH_POLL && ctx->reliable_pubs > 0)) {
        ctx->rel_sends_deferred = false;
        rdps__pub_rel_flush(ctx, mode);
    }
    if (!ctx->sends_queued)
        return rc;
    ctx->sends_queued = false;
    int frc = ctx->transport->ops->flush(ctx->transport);
    return rc < 0 ? rc : frc;
}

static int ctx_flush(rdps_ctx_t *ctx)
{
    if (ctx == NULL)
        return rdps__set_err_static(RDPS_EINVAL, "NULL ctx");
    if (ctx->concurrent_pubs > 0 || ctx->lingering != NULL) {
        rdps__ctx_callbacks_enter(ctx); /* local subscribers get other threads' messages */
        rdps__ctx_queues_drain(ctx);
        if (rdps__ctx_callbacks_leave(ctx))
            return rdps__set_err_static(RDPS_ECLOSED, RDPS__TEXT_CTX_DESTROYED);
    }
    return flush_sends(ctx, RDPS_FLUSH_ALL, rdps__ctx_now(ctx));
}

/*
 * rdps_ctx_poll/wait from a callback: the outer poll owns the receive batch and the
 * reassembler, so handle nothing received; only post queued sends and reap send completions,
 * which is what a relay's RDPS_EAGAIN retry loop needs to make progress.
 */
static int refuse_nested_poll(rdps_ctx_t *ctx)
{
    int rc = ctx_flush(ctx);
    if (rc == 0)
        rc = rdps__ctx_reap_sends(ctx);
    return rc < 0 ? rc
                  : rdps__set_err_static(RDPS_EBUSY,
                                         "called from a callback: the rdps_ctx_poll that runs "
                                         "it owns the receive batch (queued sends were "
                                         "posted and send completions reaped)");
}

static void run_timers(rdps_ctx_t *ctx)
{
    /* The ctx sleeps until the earliest deadline of its components. */
    if (ctx->contacts != NULL && ctx->now_ns >= ctx->peers_deadline_ns)
        ctx->peers_deadline_ns = rdps__peers_tick(ctx, ctx->now_ns);
    uint64_t next = rdps__discovery_tick(ctx, ctx->now_ns);
    uint64_t reasm = rdps__receive_expire(ctx);
    if (reasm < next)
        next = reasm;
    if (ctx->peers_deadline_ns < next)
        next = ctx->peers_deadline_ns;
    if (ctx->topics_deadline_ns < next)
        next = ctx->topics_deadline_ns;
    ctx->next_timer_ns = next;
}

/* Unicast discovery starts at the first poll: it names this ctx's own QP, known only then. */
static void start_peers(rdps_ctx_t *ctx)
{
    if (rdps__peers_start(ctx) < 0) {
        RDPS_LOG_ERR("unicast discovery not started: %s", rdps_last_error_message());
        ctx->contacts_failed = true;
        return;
    }
    ctx->peers_deadline_ns = ctx->now_ns;
}

static int poll_locked(rdps_ctx_t *ctx, int budget)
{
    struct rdps_transport *t = ctx->transport;
    int handled = 0, rc;

    ctx->now_ns = rdps__ctx_now(ctx);
    if ((rc = flush_sends(ctx, RDPS_FLUSH_POLL, ctx->now_ns)) < 0)
        return rc;
    if (budget <= 0)
        budget = 4 * RDPS_RX_BATCH;
    if (ctx->contacts == NULL && !ctx->contacts_failed)
        start_peers(ctx);
    if ((rc = ctx->member_ops->process(ctx->member_impl)) < 0)
        RDPS_LOG_WRN("group membership events: %s", rdps_strerror(rc));
    update_memberships(ctx);
    if (ctx->discovery_replays > 0) /* new endpoints hear of the peers known before them */
        rdps__discovery_replay(ctx);

    while (handled < budget && !ctx->destroy_requested) {
        int want = budget - handled < RDPS_RX_BATCH ? budget - handled : RDPS_RX_BATCH;
        int n = t->ops->poll(t, ctx->rx, want);
        if (n < 0)
            return n;
        if (n == 0)
            break;
        for (int i = 0; i < n && !ctx->destroy_requested; i++)
            rdps__receive_datagram(ctx, &ctx->rx[i]);
        t->ops->rx_release(t, ctx->rx, n);
        handled += n;
    }
    /* Port and device events are rare: look at most once per millisecond (a syscall each). */
    if (ctx->now_ns - ctx->last_event_check_ns >= 1000000ull) {
        ctx->last_event_check_ns = ctx->now_ns;
        if ((rc = handle_transport_events(ctx)) < 0)
            return rc;
    }
    uint64_t reliable_deadline = UINT64_MAX;
    if (ctx->reliable_pubs > 0 && !ctx->destroy_requested)
        reliable_deadline = rdps__pub_rel_progress(ctx); /* completions, repairs, new data */
    if (ctx->reliable_subs > 0 && !ctx->destroy_requested) {
        /* A poll that stopped at its budget left received datagrams queued: a repair a retry
         * would ask for may be among them. */
        uint64_t d = rdps__receive_reliable_poll(ctx, handled >= budget);
        if (d < reliable_deadline)
            reliable_deadline = d;
    }
    if (ctx->now_ns >= ctx->next_timer_ns && !ctx->destroy_requested)
        run_timers(ctx);
    rdps__ctx_timer_at(ctx, reliable_deadline);
    if (ctx->stat != NULL) { /* live counters for rdps-stat: stores only, every 100 ms at most */
        if (ctx->now_ns >= ctx->stat_deadline_ns)
            ctx->stat_deadline_ns = rdps__stat_shm_refresh(ctx, ctx->now_ns);
        rdps__ctx_timer_at(ctx, ctx->stat_deadline_ns);
    }
    /* Unreliable publishers that went quiet tell their next sequence (a lost tail is a gap). */
    if ((ctx->tail_data || ctx->now_ns >= ctx->tail_deadline_ns) && !ctx->destroy_requested)
        rdps__ctx_timer_at(ctx, rdps__pubs_tail_tick(ctx, ctx->now_ns));
    /* What other threads queued on concurrent publishers, with the joins of this poll known. */
    if ((ctx->concurrent_pubs > 0 || ctx->lingering != NULL) && !ctx->destroy_requested)
        rdps__ctx_queues_drain(ctx);
    /* What the callbacks published in this poll goes now (and lingering datagrams keep their
     * deadline in the timer run_timers just set). */
    if (!ctx->destroy_requested && (rc = flush_sends(ctx, RDPS_FLUSH_POLL, ctx->now_ns)) < 0)
        return rc;
    return handled;
}

/* A callback destroyed the ctx: the outermost call that ran it says so (the ctx is freed). */
static int ctx_destroyed_by_callback(void)
{
    return rdps__set_err_static(RDPS_ECLOSED, RDPS__TEXT_CTX_DESTROYED);
}

static int ctx_poll(rdps_ctx_t *ctx, int budget)
{
    if (ctx == NULL)
        return rdps__set_err_static(RDPS_EINVAL, "NULL ctx");
    if (ctx->callback_depth > 0)
        return refuse_nested_poll(ctx);
    rdps__ctx_callbacks_enter(ctx);
    int rc = poll_locked(ctx, budget);
    if (rdps__ctx_callbacks_leave(ctx))
        return ctx_destroyed_by_callback();
    return rc;
}

int rdps_ctx_poll(rdps_ctx_t *handle, int budget)
{
    rdps_ctx_t *ctx;
    rdps__api_enter();
    int rc = rdps__ctx_enter(handle, &ctx);
    return rdps__api_return(rc < 0 ? rc : ctx_poll(ctx, budget), "rdps_ctx_poll");
}

/* Any thread: the fd never changes. */
int rdps_ctx_fd(rdps_ctx_t *handle)
{
    rdps__api_enter();
    const rdps_ctx_t *ctx = rdps__ctx_of_handle(handle);
    return rdps__api_return(
        ctx != NULL ? ctx->epoll_fd : rdps__handle_refusal(handle, RDPS_HANDLE_CTX), "rdps_ctx_fd");
}

static int ctx_next_timeout_ms(const rdps_ctx_t *ctx)
{
    uint64_t now = rdps__ctx_now(ctx);
    if (ctx->next_timer_ns <= now)
        return 0;
    uint64_t ms = (ctx->next_timer_ns - now + 999999) / 1000000;
    return ms > 60000 ? 60000 : (int)ms;
}

/* A query's refused handle: the message says why (the query itself returns its zero). */
static void query_refused(const char *fn)
{
    rdps__api_note(fn);
}

int rdps_ctx_next_timeout_ms(rdps_ctx_t *handle)
{
    rdps_ctx_t *ctx;
    if (rdps__ctx_enter(handle, &ctx) < 0) {
        query_refused("rdps_ctx_next_timeout_ms");
        return 0; /* a negative timeout would make the caller's epoll_wait block for ever */
    }
    return ctx_next_timeout_ms(ctx);
}

static int ctx_arm(rdps_ctx_t *ctx)
{
    if (ctx == NULL)
        return rdps__set_err_static(RDPS_EINVAL, "NULL ctx");
    if (ctx->callback_depth > 0)
        return refuse_nested_poll(ctx);
    /* Nothing queued or held waits for a wakeup, but a datagram lingering 1 ms more or longer:
     * rdps_ctx_next_timeout_ms() wakes the loop for it. */
    uint64_t now = rdps__ctx_now(ctx);
    int rc = flush_sends(ctx, RDPS_FLUSH_SLEEP, now);
    if (rc < 0)
        return rc;
    if (now >= ctx->next_timer_ns)
        return rdps__set_err_static(RDPS_EAGAIN, "a timer is due: call rdps_ctx_poll, then arm "
                                                 "again");
    if (ctx->concurrent_pubs > 0 && !rdps__ctx_queues_sleep(ctx))
        return rdps__set_err_static(RDPS_EAGAIN, "other threads queued messages on a concurrent "
                                                 "publisher: call rdps_ctx_poll, then arm again");
    rc = ctx->transport->ops->arm(ctx->transport);
    if (rc < 0)
        return rc;
    return rc > 0 ? rdps__set_err_static(RDPS_EAGAIN, "work arrived meanwhile: call "
                                                      "rdps_ctx_poll, then arm again")
                  : 0;
}

static int ctx_wait(rdps_ctx_t *ctx, int timeout_ms)
{
    if (ctx == NULL)
        return rdps__set_err_static(RDPS_EINVAL, "NULL ctx");
    if (ctx->callback_depth > 0)
        return refuse_nested_poll(ctx);
    int rc = ctx_poll(ctx, 0);
    if (rc != 0)
        return rc;
    rc = ctx_arm(ctx);
    if (rc == RDPS_EAGAIN)
        return ctx_poll(ctx, 0);
    if (rc < 0)
        return rc;
    int wait_ms = ctx_next_timeout_ms(ctx);
    if (timeout_ms >= 0 && timeout_ms < wait_ms)
        wait_ms = timeout_ms;
    struct epoll_event evs[4];
    int n = epoll_wait(ctx->epoll_fd, evs, 4, wait_ms);
    if (n < 0 && errno != EINTR)
        return rdps__set_err(rdps__errno_code(errno), "epoll_wait: %s", strerror(errno));
    return ctx_poll(ctx, 0);
}

int rdps_ctx_flush(rdps_ctx_t *handle)
{
    rdps_ctx_t *ctx;
    rdps__api_enter();
    int rc = rdps__ctx_enter(handle, &ctx);
    return rdps__api_return(rc < 0 ? rc : ctx_flush(ctx), "rdps_ctx_flush");
}

int rdps_ctx_arm(rdps_ctx_t *handle)
{
    rdps_ctx_t *ctx;
    rdps__api_enter();
    int rc = rdps__ctx_enter(handle, &ctx);
    return rdps__api_return(rc < 0 ? rc : ctx_arm(ctx), "rdps_ctx_arm");
}

int rdps_ctx_wait(rdps_ctx_t *handle, int timeout_ms)
{
    rdps_ctx_t *ctx;
    rdps__api_enter();
    int rc = rdps__ctx_enter(handle, &ctx);
    return rdps__api_return(rc < 0 ? rc : ctx_wait(ctx, timeout_ms), "rdps_ctx_wait");
}

/* Any thread: the datagram size never changes. */
size_t rdps_ctx_max_datagram_payload(const rdps_ctx_t *handle)
{
    const rdps_ctx_t *ctx = rdps__ctx_of_handle(handle);
    return ctx ? ctx->max_datagram - RDPS_FRAME_HEADER_LEN : 0;
}

int rdps__ctx_sends_pending(const rdps_ctx_t *ctx)
{
    struct rdps_transport_stats ts;
    ctx->transport->ops->get_stats(ctx->transport, &ts);
    return ts.tx_outstanding > INT32_MAX ? INT32_MAX : (int)ts.tx_outstanding;
}

int rdps_ctx_sends_pending(const rdps_ctx_t *handle)
{
    rdps_ctx_t *ctx;
    if (rdps__ctx_enter(handle, &ctx) < 0) {
        query_refused("rdps_ctx_sends_pending");
        return 0; /* nothing pending: a `while (rdps_ctx_sends_pending(ctx))` loop ends */
    }
    return rdps__ctx_sends_pending(ctx);
}

int rdps__counters_to_caller(int rc, const rdps_counters *full, rdps_counters *out, size_t size)
{
    if (out == NULL)
        return rdps__set_err_static(RDPS_EINVAL, "NULL rdps_counters");
    if (size < RDPS__ABI_COUNTERS_SIZE_1_0) {
        memset(out, 0, size);
        return rdps__set_err(RDPS_EINVAL, "rdps_counters of %zu bytes: smaller than rdps 1.0's",
                             size);
    }
    rdps__abi_write_out(out, size, full, sizeof(*full));
    return rc;
}

int rdps_ctx_counters_sized(const rdps_ctx_t *handle, rdps_counters *out, size_t size)
{
    rdps_counters full;
    rdps_ctx_t *ctx;
    rdps__api_enter();
    int rc = rdps__ctx_enter(handle, &ctx);
    if (rc < 0)
        memset(&full, 0, sizeof(full));
    else
        rc = rdps__ctx_counters(ctx, &full);
    return rdps__api_return(rdps__counters_to_caller(rc, &full, out, size), "rdps_ctx_counters");
}

int rdps__ctx_counters(const rdps_ctx_t *ctx, rdps_counters *out)
{
    struct rdps_transport_stats ts;
    if (out == NULL)
        return RDPS_EINVAL;
    if (ctx == NULL) {
        memset(out, 0, sizeof(*out));
        return rdps__set_err_static(RDPS_EINVAL, "NULL ctx");
    }
    *out = ctx->counters;
    for (const struct rdps_pub *p = ctx->pubs; p != NULL; p = p->next)
        rdps__pub_fold_counters(p, out);
    rdps__receive_counters(ctx, out);
    ctx->transport->ops->get_stats(ctx->transport, &ts);
    out->rq_empty = ts.rx_queue_empty;
    out->loss_dropped_rx = ts.loss_dropped_rx;
    out->loss_dropped_tx = ts.loss_dropped_tx;
    out->qp_recoveries = ts.qp_recoveries;
    out->sends_lost = ts.tx_lost_qp_error;
    out->send_stalls = ts.tx_stalls;
    out->auth_unsigned = ts.auth_unsigned;
    out->auth_short = ts.auth_short;
    out->auth_unknown_key = ts.auth_unknown_key;
    out->auth_bad_tag = ts.auth_bad_tag;
    out->auth_replayed = ts.auth_replayed;
    out->auth_senders_evicted = ts.auth_senders_evicted;
    out->auth_stale = ts.auth_stale;
    rdps__discovery_counters(ctx, out);
    return 0;
}
