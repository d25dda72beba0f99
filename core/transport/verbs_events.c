/* SPDX-License-Identifier: BSD-2-Clause */
/* verbs_events.c - verbs transport events: one epoll fd over the completion channel and the async
 * fd, CQ notification arming, async events (port, device, QP errors) queued for next_event(). */
#include "verbs_internal.h"

#include "rdps_clock.h"
#include "rdps_error.h"
#include "rdps_log.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

void rdps__verbs_push_event(struct verbs_transport *vt, enum rdps_transport_event_type type)
{
    if (vt->event_count == VERBS_EVENT_RING) {
        /* Keep the newest: the latest port state is what matters. */
        vt->event_head = (vt->event_head + 1) % VERBS_EVENT_RING;
        vt->event_count--;
    }
    vt->events[(vt->event_head + vt->event_count) % VERBS_EVENT_RING] = type;
    vt->event_count++;
}

static bool is_qp_error_event(const struct ibv_async_event *ev)
{
    return ev->event_type == IBV_EVENT_QP_FATAL || ev->event_type == IBV_EVENT_QP_REQ_ERR ||
           ev->event_type == IBV_EVENT_QP_ACCESS_ERR;
}

static void drain_async_events(struct verbs_transport *vt)
{
    struct ibv_async_event ev;
    while (ibv_get_async_event(vt->info.verbs, &ev) == 0) {
        vt->stats.async_events++;
        switch (ev.event_type) {
        case IBV_EVENT_PORT_ACTIVE:
            if (ev.element.port_num == vt->info.port_num)
                rdps__verbs_push_event(vt, RDPS_TRANSPORT_EV_PORT_ACTIVE);
            break;
        case IBV_EVENT_PORT_ERR:
            if (ev.element.port_num == vt->info.port_num)
                rdps__verbs_push_event(vt, RDPS_TRANSPORT_EV_PORT_DOWN);
            break;
        case IBV_EVENT_DEVICE_FATAL:
            vt->device_fatal = true;
            rdps__verbs_push_event(vt, RDPS_TRANSPORT_EV_DEVICE_FATAL);
            RDPS_LOG_ERR("%s: device fatal error, transport unusable", vt->info.device_name);
            break;
        default:
            if (is_qp_error_event(&ev) && ev.element.qp == vt->info.qp) {
                /* The QP is in the error state: reset below, reported as QP_RECOVERED. */
                RDPS_LOG_WRN("%s: %s on qpn 0x%x", vt->info.device_name,
                             ibv_event_type_str(ev.event_type), vt->info.qpn);
                vt->need_recovery = true;
                break;
            }
            rdps__verbs_push_event(vt, RDPS_TRANSPORT_EV_OTHER);
            RDPS_LOG_INF("%s: async event %s", vt->info.device_name,
                         ibv_event_type_str(ev.event_type));
            break;
        }
        ibv_ack_async_event(&ev);
    }
    if (vt->need_recovery && !vt->device_fatal && rdps__verbs_recover_qp(vt) < 0)
        RDPS_LOG_ERR("%s: QP recovery failed: %s", vt->info.device_name, rdps_last_error_message());
}

int rdps__verbs_event_fd(struct rdps_transport *t)
{
    return to_verbs(t)->epoll_fd;
}

void rdps__verbs_ack_cq_events(struct verbs_transport *vt)
{
    struct ibv_cq *cq;
    void *cq_ctx;
    unsigned send_events = 0, recv_events = 0;

    /* The channel fd is non-blocking: this stops at EAGAIN. */
    while (ibv_get_cq_event(vt->channel, &cq, &cq_ctx) == 0) {
        if (cq == vt->send_cq)
            send_events++;
        else
            recv_events++;
    }
    if (send_events > 0)
        ibv_ack_cq_events(vt->send_cq, send_events);
    if (recv_events > 0)
        ibv_ack_cq_events(vt->recv_cq, recv_events);
}

/*
 * Consumes the fd's readiness and re-arms, with as few system calls as possible (on rxe every
 * read of the channel and every request for notification is one). Each armed CQ raises at most
 * one event per request, so at most that many are read: the common wakeup (one receive event)
 * costs one read. A CQ is re-armed only after its notification was consumed; the send CQ only
 * while a sender may wait for buffers or ring posts. Async events are read when no CQ event was
 * (the wakeup came from the async fd, or from nothing). Then, with the notifications armed, the
 * CQs are looked at once more: a completion that landed before the request raised no event and
 * would otherwise be slept on. Returns 1 when work is waiting (received datagrams, send
 * completions a sender waits for, async events), 0 when armed with nothing waiting.
 */
int rdps__verbs_arm(struct rdps_transport *t)
{
    struct verbs_transport *vt = to_verbs(t);
    unsigned armed = (unsigned)vt->recv_notify_armed + (unsigned)vt->send_notify_armed;
    unsigned consumed = 0;
    struct ibv_cq *cq;
    void *cq_ctx;

    while (consumed < armed && ibv_get_cq_event(vt->channel, &cq, &cq_ctx) == 0) {
        ibv_ack_cq_events(cq, 1);
        if (cq == vt->send_cq)
            vt->send_notify_armed = false;
        else
            vt->recv_notify_armed = false;
        consumed++;
    }
    if (consumed == 0)
        drain_async_events(vt);
    if (!vt->recv_notify_armed) {
        if (ibv_req_notify_cq(vt->recv_cq, 0) != 0)
            return rdps__set_err(RDPS_EIO, "ibv_req_notify_cq: %s", strerror(errno));
        vt->recv_notify_armed = true;
    }
    /* Only a sender short of buffers or queue slots waits for send completions, or one whose
     * posts reference its own memory (a reliable publisher's ring: frames wait in it for the
     * device to finish earlier ones, and the chain's last request is signaled). */
    bool sender_may_wait = vt->send_free_count < vt->signal_every ||
                           verbs_sq_room(vt) < vt->signal_every ||
                           vt->base.tx.seen < vt->mem_posted_through;
    if (!vt->send_notify_armed && sender_may_wait) {
        if (ibv_req_notify_cq(vt->send_cq, 0) != 0)
            return rdps__set_err(RDPS_EIO, "ibv_req_notify_cq: %s", strerror(errno));
        vt->send_notify_armed = true;
    }
    int err = rdps__verbs_drain_recv_cq(vt);
    if (err < 0)
        return rdps__set_err(err, "ibv_poll_cq (receive CQ): %s", strerror(errno));
    bool pending = vt->wc_count > 0 || vt->event_count > 0;
    if (sender_may_wait) {
        uint64_t done = vt->base.tx.seen;
        if ((err = verbs_reap_send(vt)) < 0)
            return rdps__set_err(err, "ibv_poll_cq (send CQ): %s", strerror(errno));
        pending = pending || vt->base.tx.seen != done;
    }
    return pending ? 1 : 0;
}

/*
 * A send that never completes leaves no error to see: the device or the link stopped moving
 * (a queue pair wedged, a link without carrier that reports none). Senders then wait on the
 * send queue without a word and reliable receivers time out. A signaled WR outstanding while
 * nothing completes for VERBS_SEND_STALL_NS is reported once per stall, logged and counted;
 * the transport does not act on it (a reset would lose the queued sends and cannot revive a
 * dead link).
 */
static void send_watchdog(struct verbs_transport *vt)
{
    bool waiting = vt->base.tx.awaited > vt->base.tx.seen;
    if (vt->watch_reported && (!waiting || vt->base.tx.seen != vt->watch_done_seq)) {
        RDPS_LOG_WRN("%s: qpn 0x%x: sends complete again", vt->info.device_name, vt->info.qpn);
        vt->watch_reported = false;
    }
    if (!waiting) {
        vt->watch_since_ns = 0;
        return;
    }
    uint64_t now = rdps__clock_monotonic_ns();
    if (vt->watch_since_ns == 0 || vt->base.tx.seen != vt->watch_done_seq) {
        vt->watch_done_seq = vt->base.tx.seen;
        vt->watch_since_ns = now;
        return;
    }
    if (vt->watch_reported || now - vt->watch_since_ns < VERBS_SEND_STALL_NS)
        return;
    if (rdps__verbs_reap_send_cq(vt) == 0 && vt->base.tx.seen != vt->watch_done_seq)
        return; /* completions were waiting: the next look restarts the clock */
    vt->watch_reported = true;
    vt->stats.tx_stalls++;
    RDPS_LOG_WRN("%s: qpn 0x%x: %" PRIu64 " sends posted, none completed for %" PRIu64
                 " ms: the device or the link stopped sending",
                 vt->info.device_name, vt->info.qpn, vt->next_seq - vt->base.tx.seen,
                 (now - vt->watch_since_ns) / 1000000u);
}

int rdps__verbs_next_event(struct rdps_transport *t, enum rdps_transport_event_type *type)
{
    struct verbs_transport *vt = to_verbs(t);
    send_watchdog(vt);
    if (vt->event_count == 0)
        drain_async_events(vt);
    if (vt->event_count == 0)
        return 0;
    *type = vt->events[vt->event_head];
    vt->event_head = (vt->event_head + 1) % VERBS_EVENT_RING;
    vt->event_count--;
    return 1;
}
