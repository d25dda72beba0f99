/* SPDX-License-Identifier: BSD-2-Clause */
/* discovery_runtime.c - the ctx's side of discovery: feeds the sans-IO engine (discovery_engine.h)
 * with announcements and time, frames what it sends, turns its events into rdps_events. */
#include "ctx_internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "discovery_engine.h"
#include "rdps_clock.h"
#include "rdps_error.h"
#include "rdps_random.h"
#include "rdps_log.h"

/* Frames an announcement into frame (RDPS_FRAME_HEADER_LEN + RDPS_ANNOUNCE_MAX_BYTES bytes);
 * returns its length or a negative code. */
static int frame_announce(const rdps_ctx_t *ctx, const struct rdps_announce *a, uint8_t *frame)
{
    int body = rdps__announce_encode(a, frame + RDPS_FRAME_HEADER_LEN, RDPS_ANNOUNCE_MAX_BYTES);
    if (body < 0)
        return body;
    /* Every frame's timestamp_ns is CLOCK_REALTIME (rdps_frame.h). */
    int len = rdps__frame_encode_announce(frame, RDPS_FRAME_HEADER_LEN + RDPS_ANNOUNCE_MAX_BYTES,
                                          a->session_id, a->topic_id, (uint32_t)a->announce_seq,
                                          frame + RDPS_FRAME_HEADER_LEN, (size_t)body,
                                          rdps__clock_realtime_ns());
    if (len < 0)
        return len;
    return (uint32_t)len > ctx->max_datagram ? RDPS_EMSGSIZE : len;
}

/*
 * Sends an announcement on the control group and by unicast to every seed and peer of unicast
 * discovery (one buffer, one chain); RDPS_ENOTJOINED while it has neither.
 */
static int send_announce(void *user, const struct rdps_announce *a)
{
    rdps_ctx_t *ctx = user;
    uint8_t frame[RDPS_FRAME_HEADER_LEN + RDPS_ANNOUNCE_MAX_BYTES];
    const struct rdps_dest **peers = NULL;
    uint32_t npeers = rdps__peers_announce_dests(ctx, &peers);
    if (ctx->control_dest == NULL && npeers == 0)
        return RDPS_ENOTJOINED; /* the engine retries shortly */
    int len = frame_announce(ctx, a, frame);
    if (len < 0)
        return len;
    int rc = ctx->control_dest != NULL
                 ? rdps__ctx_send_frame(ctx, ctx->control_dest, frame, (uint32_t)len)
                 : 0;
    if (npeers > 0) {
        int urc = rdps__ctx_send_frame_multi(ctx, peers, npeers, frame, (uint32_t)len);
        if (rc == 0 || ctx->control_dest == NULL)
            rc = urc;
    }
    if (rc == 0)
        ctx->counters.announces_sent++;
    return rc;
}

struct announce_to {
    rdps_ctx_t *ctx;
    const struct rdps_dest *dest;
};

static void send_one_announce(void *user, const struct rdps_announce *a)
{
    struct announce_to *at = user;
    uint8_t frame[RDPS_FRAME_HEADER_LEN + RDPS_ANNOUNCE_MAX_BYTES];
    int len = frame_announce(at->ctx, a, frame);
    if (len > 0 && rdps__ctx_send_frame(at->ctx, at->dest, frame, (uint32_t)len) == 0)
        at->ctx->counters.announces_sent++;
}

void rdps__discovery_announce_to(rdps_ctx_t *ctx, const struct rdps_dest *dest)
{
    struct announce_to at = {ctx, dest};
    if (ctx->discovery != NULL && dest != NULL)
        rdps__disc_for_each_local(ctx->discovery, send_one_announce, &at);
}

/* The public event for a discovery event about a peer of topic t. */
static void public_event(const struct rdps_topic *t, const struct rdps_disc_event *dev,
                         rdps_event *ev)
{
    bool publisher = dev->role == RDPS_ROLE_PUBLISHER;
    bool seen = dev->type == RDPS_DISC_PEER_SEEN;
    memset(ev, 0, sizeof(*ev));
    if (publisher)
        ev->type = seen ? RDPS_EVENT_PUBLISHER_SEEN : RDPS_EVENT_PUBLISHER_GONE;
    else
        ev->type = seen ? RDPS_EVENT_SUBSCRIBER_SEEN : RDPS_EVENT_SUBSCRIBER_GONE;
    ev->topic = t->name;
    ev->session_id = dev->session_id;
    ev->source = dev->source;
    ev->receiver_id = !publisher && dev->reliable ? dev->receiver_id : 0;
    if (!seen)
        ev->reason = dev->expired ? RDPS_GONE_TIMED_OUT : RDPS_GONE_LEFT;
}

/* Whether an endpoint hears about peer dev: not while the replay that owes it its SEEN is
 * pending (a GONE before that SEEN would come unpaired; the replay then skips the peer). */
static bool endpoint_told(const struct rdps_disc_replay *r, const struct rdps_disc_event *dev)
{
    return !r->pending || dev->serial >= r->told_from || dev->slot < r->cursor;
}

/* Raises dev on the endpoints of topic t that want it: subscribers hear of publishers,
 * publishers of subscribers. The caller is inside the callback bracket. */
static void notify_endpoints(rdps_ctx_t *ctx, struct rdps_topic *t,
                             const struct rdps_disc_event *dev)
{
    rdps_event ev;
    public_event(t, dev, &ev);
    if (dev->role == RDPS_ROLE_PUBLISHER) {
        for (struct rdps_sub *s = t->subs; s != NULL; s = s->topic_next)
            if (!s->closed && s->on_event != NULL && endpoint_told(&s->replay, dev))
                s->on_event(s->event_user, &ev);
        return;
    }
    for (struct rdps_pub *p = ctx->pubs; p != NULL; p = p->next)
        if (p->topic == t && !p->closed && p->on_event != NULL && endpoint_told(&p->replay, dev))
            p->on_event(p->event_user, &ev);
}

/* Another name announced with topic t's id: every local subscriber and publisher of t hears. */
static void raise_collision(rdps_ctx_t *ctx, struct rdps_topic *t,
                            const struct rdps_disc_event *dev)
{
    rdps_event ev = {
        .type = RDPS_EVENT_TOPIC_COLLISION,
        .topic = t->name,
        .session_id = dev->session_id,
        .source = dev->source,
        .other_topic = dev->other_topic,
    };
    RDPS_LOG_WRN("topic '%s' and the announced topic '%s' (QPN 0x%x) have the same id "
                 "0x%016llx: their messages cannot be told apart; rename one",
                 t->name, dev->other_topic, dev->source.qpn, (unsigned long long)t->id);
    rdps__ctx_callbacks_enter(ctx); /* t and every handle stay allocated until we leave */
    rdps__topic_notify(ctx, t, &ev);
    for (struct rdps_pub *p = ctx->pubs, *next; p != NULL && !ctx->destroy_requested; p = next) {
        next = p->next; /* a publisher destroyed by a callback stays linked until we leave */
        if (!p->closed && p->topic == t && p->on_event != NULL)
            p->on_event(p->event_user, &ev);
    }
    rdps__ctx_callbacks_leave(ctx);
}

static void on_disc_event(void *user, const struct rdps_disc_event *dev)
{
    rdps_ctx_t *ctx = user;
    struct rdps_topic *t = rdps__ctx_topic_find(ctx, dev->topic_id);
    if (t == NULL || strcmp(t->name, dev->topic) != 0)
        return;
    if (dev->type == RDPS_DISC_TOPIC_COLLISION) {
        raise_collision(ctx, t, dev);
        return;
    }
    /* Publishers send copies to unicast subscribers (and to every one without the group). */
    if (dev->role == RDPS_ROLE_SUBSCRIBER && t->fanout != NULL)
        rdps__fanout_on_subscriber(ctx, t, dev);
    if (dev->type == RDPS_DISC_PEER_UPDATED)
        return; /* how it receives changed: nothing for the application */
    /* Reliable publishers expect reliable subscribers (flow control). */
    if (dev->role == RDPS_ROLE_SUBSCRIBER && dev->reliable && ctx->reliable_pubs > 0)
        rdps__pub_rel_on_receiver(ctx, t, dev);
    rdps__ctx_callbacks_enter(ctx);
    notify_endpoints(ctx, t, dev);
    rdps__ctx_callbacks_leave(ctx); /* inside poll (depth > 1): frees nothing */
}

/* A peer is heard by its traffic too (discovery_engine.h, Liveness): a publisher session by its
 * datagrams and heartbeats, a reliable subscriber by its STATUS and NAKs to our publishers. */
static uint64_t peer_heard(void *user, const struct rdps_disc_event *peer)
{
    const rdps_ctx_t *ctx = user;
    if (peer->role == RDPS_ROLE_PUBLISHER)
        return rdps__receive_heard(ctx, &peer->source, peer->session_id);
    if (peer->reliable && peer->receiver_id != 0 && ctx->reliable_pubs > 0)
        return rdps__pub_rel_receiver_heard(ctx, peer->topic_id, &peer->source, peer->receiver_id);
    return 0;
}

int rdps__discovery_init(rdps_ctx_t *ctx)
{
    struct rdps_disc_config dc;
    rdps__disc_config_default(&dc);
    dc.announce_interval_ms = ctx->cfg.announce_interval_ms;
    dc.max_peers = ctx->cfg.max_peers;
    dc.max_remote_only = ctx->cfg.max_remote_only_peers;
    dc.min_interval_ms = ctx->cfg.peer_interval_min_ms;
    dc.max_interval_ms = ctx->cfg.peer_interval_max_ms;
    dc.hash_seed = rdps__random_u64();
    dc.send = send_announce;
    dc.on_event = on_disc_event;
    dc.heard = peer_heard;
    dc.user = ctx;
    struct rdps_discovery *d = calloc(1, sizeof(*d));
    if (d == NULL)
        return rdps__set_err(RDPS_ENOMEM, "discovery state");
    int rc = rdps__disc_init(d, &dc);
    if (rc < 0) {
        free(d);
        return rc;
    }
    ctx->discovery = d;
    ctx->discovery_deadline_ns = UINT64_MAX;
    return 0;
}

void rdps__discovery_fini(rdps_ctx_t *ctx)
{
    if (ctx->discovery == NULL)
        return;
    rdps__disc_fini(ctx->discovery);
    free(ctx->discovery);
    ctx->discovery = NULL;
}

/* The engine's deadline may have moved earlier than what the ctx last heard: have it re-read. */
static void deadline_check(rdps_ctx_t *ctx)
{
    uint64_t next = rdps__disc_next_deadline(ctx->discovery);
    if (next < ctx->discovery_deadline_ns) {
        ctx->discovery_deadline_ns = next;
        rdps__ctx_timers_changed(ctx);
    }
}

/* A new endpoint with an event callback hears, at the next poll, of the peers known before it. */
static void replay_start(rdps_ctx_t *ctx, struct rdps_disc_replay *r, bool has_callback)
{
    memset(r, 0, sizeof(*r));
    if (!has_callback)
        return;
    r->told_from = rdps__disc_next_serial(ctx->discovery);
    r->pending = true;
    ctx->discovery_replays++; /* local_add makes the next wait poll at once */
}

static void replay_end(rdps_ctx_t *ctx, struct rdps_disc_replay *r)
{
    if (!r->pending)
        return;
    r->pending = false;
    ctx->discovery_replays--;
}

/* Replays to one endpoint (role: the peers it hears of) until done or closed. */
static void replay_endpoint(rdps_ctx_t *ctx, struct rdps_topic *t, enum rdps_announce_role role,
                            struct rdps_disc_replay *r, const bool *closed, rdps_event_cb fn,
                            void *fn_user)
{
    struct rdps_disc_event dev;
    while (!*closed && !ctx->destroy_requested &&
           rdps__disc_replay_next(ctx->discovery, t->id, t->name, role, r->told_from, &r->cursor,
                                  &dev)) {
        rdps_event ev;
        public_event(t, &dev, &ev);
        fn(fn_user, &ev);
    }
    replay_end(ctx, r);
}

void rdps__discovery_replay(rdps_ctx_t *ctx)
{
    /* Endpoints created by the callbacks below are at the head of the lists, pending: the
     * loops see them or the next poll does. */
    for (struct rdps_sub *s = ctx->subs; s != NULL && ctx->discovery_replays > 0; s = s->next)
        if (s->replay.pending)
            replay_endpoint(ctx, s->topic, RDPS_ROLE_PUBLISHER, &s->replay, &s->closed, s->on_event,
                            s->event_user);
    for (struct rdps_pub *p = ctx->pubs; p != NULL && ctx->discovery_replays > 0; p = p->next)
        if (p->replay.pending)
            replay_endpoint(ctx, p->topic, RDPS_ROLE_SUBSCRIBER, &p->replay, &p->closed,
                            p->on_event, p->event_user);
}

static void local_add(rdps_ctx_t *ctx, const struct rdps_topic *t, enum rdps_announce_role role,
                      uint32_t session_id, bool reliable, uint32_t flow_tag)
{
    struct rdps_announce a;
    if (ctx->discovery == NULL)
        return;
    memset(&a, 0, sizeof(a));
    a.role = role;
    strcpy(a.topic, t->name);
    a.topic_id = t->id;
    a.group = t->group;
    a.session_id = session_id;
    a.reliable = reliable;
    if (reliable && role == RDPS_ROLE_SUBSCRIBER) {
        a.receiver_id = ctx->rel_receiver_id;
        a.flow_tag = flow_tag;
    }
    a.unicast = role == RDPS_ROLE_SUBSCRIBER && t->recv_path == RDPS_PATH_UNICAST;
    a.qpn = ctx->self_qpn ? ctx->self_qpn : 1;
    a.qkey = ctx->cfg.qkey;
    memcpy(a.gid, ctx->self_gid, sizeof(a.gid));
    a.host = ctx->self_host;
    a.cm_port = ctx->cfg.cm_port;
    a.pid = (uint32_t)getpid();
    a.interval_ms = ctx->discovery->cfg.announce_interval_ms;
    if (rdps__disc_local_add(ctx->discovery, &a, ctx->now_ns) < 0)
        RDPS_LOG_WRN("discovery: %s: endpoint not announced", rdps_last_error_message());
    deadline_check(ctx);
}

void rdps__discovery_pub_added(rdps_ctx_t *ctx, rdps_pub_t *pub)
{
    if (ctx->discovery == NULL)
        return;
    replay_start(ctx, &pub->replay, pub->on_event != NULL);
    local_add(ctx, pub->topic, RDPS_ROLE_PUBLISHER, pub->session_id, pub->rel != NULL, 0);
}

void rdps__discovery_pub_removed(rdps_ctx_t *ctx, rdps_pub_t *pub)
{
    if (ctx->discovery == NULL)
        return;
    replay_end(ctx, &pub->replay);
    rdps__disc_local_remove(ctx->discovery, RDPS_ROLE_PUBLISHER, pub->session_id);
}

void rdps__discovery_sub_added(rdps_ctx_t *ctx, rdps_sub_t *sub)
{
    if (ctx->discovery == NULL)
        return;
    replay_start(ctx, &sub->replay, sub->on_event != NULL);
    local_add(ctx, sub->topic, RDPS_ROLE_SUBSCRIBER, sub->receiver_id, sub->reliable,
              sub->flow_tag);
}

void rdps__discovery_sub_removed(rdps_ctx_t *ctx, rdps_sub_t *sub)
{
    if (ctx->discovery == NULL)
        return;
    replay_end(ctx, &sub->replay);
    rdps__disc_local_remove(ctx->discovery, RDPS_ROLE_SUBSCRIBER, sub->receiver_id);
}

void rdps__discovery_sub_unicast(rdps_ctx_t *ctx, rdps_sub_t *sub)
{
    if (ctx->discovery == NULL)
        return;
    rdps__disc_local_set_unicast(ctx->discovery, RDPS_ROLE_SUBSCRIBER, sub->receiver_id, true,
                                 ctx->now_ns);
    deadline_check(ctx);
}

/* rdps_ctx_watch_publishers: a publisher of a topic with no endpoint here, named by the prefix. */
static void watch_publisher(rdps_ctx_t *ctx, const struct rdps_source *src,
                            const struct rdps_announce *a)
{
    if (ctx->watch_cb == NULL || a->role != RDPS_ROLE_PUBLISHER || a->leaving ||
        strncmp(a->topic, ctx->watch_prefix, ctx->watch_prefix_len) != 0 ||
        rdps__ctx_topic_find(ctx, a->topic_id) != NULL)
        return;
    rdps__ctx_callbacks_enter(ctx);
    ctx->watch_cb(ctx->watch_user, a->topic, src);
    rdps__ctx_callbacks_leave(ctx); /* inside poll (depth > 1): frees nothing */
}

void rdps__discovery_on_frame(rdps_ctx_t *ctx, const struct rdps_source *src,
                              const struct rdps_frame_view *view, bool to_multicast)
{
    struct rdps_announce a;
    if (view->hdr.topic_id == 0) {
        if (!to_multicast) /* peer lists go by unicast only */
            rdps__peers_on_frame(ctx, src, view);
        return;
    }
    ctx->counters.announces_received++;
    if (rdps__announce_decode(view->payload, view->payload_len, &a) != 0 ||
        a.session_id != view->hdr.session_id) {
        ctx->counters.bad_announces++;
        RDPS_LOG_DBG("dropped announcement: %s", rdps_last_error_message());
        return;
    }
    /* What auto topics go by: multicast works here once anything came through a group. */
    if (to_multicast)
        ctx->multicast_heard = true;
    else if (!ctx->multicast_heard)
        rdps__topics_unicast_heard(ctx);
    watch_publisher(ctx, src, &a);
    rdps__disc_on_announce(ctx->discovery, src, &a, ctx->now_ns);
    deadline_check(ctx);
}

static int watch_publishers(rdps_ctx_t *ctx, const char *prefix, rdps_publisher_watch_cb cb,
                            void *user)
{
    size_t len = prefix != NULL ? strlen(prefix) : 0;
    if (ctx == NULL || prefix == NULL || len > RDPS_TOPIC_NAME_MAX)
        return rdps__set_err(RDPS_EINVAL, "%s",
                             ctx == NULL      ? "NULL ctx"
                             : prefix == NULL ? "NULL prefix"
                                              : "prefix longer than RDPS_TOPIC_NAME_MAX");
    memcpy(ctx->watch_prefix, prefix, len + 1);
    ctx->watch_prefix_len = len;
    ctx->watch_cb = cb;
    ctx->watch_user = user;
    return 0;
}

int rdps_ctx_watch_publishers(rdps_ctx_t *handle, const char *prefix, rdps_publisher_watch_cb cb,
                              void *user)
{
    rdps_ctx_t *ctx;
    rdps__api_enter();
    int rc = rdps__ctx_enter(handle, &ctx);
    return rdps__api_return(rc < 0 ? rc : watch_publishers(ctx, prefix, cb, user),
                            "rdps_ctx_watch_publishers");
}

uint64_t rdps__discovery_tick(rdps_ctx_t *ctx, uint64_t now_ns)
{
    uint64_t next = rdps__disc_tick(ctx->discovery, now_ns);
    ctx->discovery_deadline_ns = next;
    return next;
}

int rdps_pub_subscriber_count(const rdps_pub_t *handle)
{
    rdps_pub_t *pub;
    if (rdps__pub_enter(handle, &pub) < 0) {
        rdps__api_note("rdps_pub_subscriber_count");
        return 0;
    }
    if (pub->closed)
        return 0;
    const struct rdps_topic *t = pub->topic;
    uint32_t remote =
        rdps__disc_remote_count(pub->ctx->discovery, t->id, t->name, RDPS_ROLE_SUBSCRIBER);
    /* Subscribers in this ctx hear the publisher directly. */
    uint64_t n = (uint64_t)remote + t->live_subs;
    return n > INT32_MAX ? INT32_MAX : (int)n;
}

void rdps__discovery_counters(const rdps_ctx_t *ctx, rdps_counters *out)
{
    const struct rdps_disc_counters *dc = rdps__disc_counters(ctx->discovery);
    out->peers_refused = dc->refused_table_full + dc->refused_remote_only +
                         dc->refused_unknown_leave + dc->refused_topic_change +
                         dc->refused_bad_role;
    out->topic_collisions = dc->topic_collisions;
    rdps__peers_counters(ctx, out);
}
