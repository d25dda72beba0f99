/* discovery_runtime.c - announcing local endpoints on the control group and tracking remote ones.
 */
#include "ctx_internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rdps_error.h"
#include "rdps_log.h"

/* A peer is gone after this many of its announce intervals without a word. */
#define LIVENESS_INTERVALS 3

static void fill_common(const rdps_ctx_t *ctx, struct rdps_announce *a, const struct rdps_topic *t)
{
    memset(a, 0, sizeof(*a));
    strcpy(a->topic, t->name);
    a->topic_id = t->id;
    a->group = t->group;
    a->qpn = ctx->self_qpn ? ctx->self_qpn : 1;
    a->qkey = ctx->cfg.qkey;
    memcpy(a->gid, ctx->self_gid, sizeof(a->gid));
    a->host = ctx->self_host;
    a->cm_port = ctx->cfg.cm_port;
    a->pid = (uint32_t)getpid();
    a->interval_ms = ctx->cfg.announce_interval_ms;
}

static void send_announce(rdps_ctx_t *ctx, const struct rdps_announce *a)
{
    uint8_t frame[RDPS_FRAME_HEADER_LEN + RDPS_ANNOUNCE_MAX_BYTES];
    if (ctx->control_dest == NULL)
        return; /* the discovery group is still being joined: the next tick sends it */
    int body = rdps__announce_encode(a, frame + RDPS_FRAME_HEADER_LEN, RDPS_ANNOUNCE_MAX_BYTES);
    if (body < 0)
        return;
    int len = rdps__frame_encode_announce(frame, sizeof(frame), a->session_id, a->topic_id,
                                          (uint32_t)a->announce_seq, frame + RDPS_FRAME_HEADER_LEN,
                                          (size_t)body, ctx->now_ns);
    if (len < 0 || (uint32_t)len > ctx->max_datagram)
        return;
    if (rdps__ctx_send_frame(ctx, ctx->control_dest, frame, (uint32_t)len) == 0)
        ctx->counters.announces_sent++;
}

static void announce_pub(rdps_ctx_t *ctx, rdps_pub_t *pub, bool leaving)
{
    struct rdps_announce a;
    fill_common(ctx, &a, pub->topic);
    a.role = RDPS_ROLE_PUBLISHER;
    a.session_id = pub->session_id;
    a.leaving = leaving;
    a.announce_seq = pub->announce_seq++;
    send_announce(ctx, &a);
}

static void announce_sub(rdps_ctx_t *ctx, rdps_sub_t *sub, bool leaving)
{
    struct rdps_announce a;
    fill_common(ctx, &a, sub->topic);
    a.role = RDPS_ROLE_SUBSCRIBER;
    a.session_id = sub->receiver_id;
    a.leaving = leaving;
    a.announce_seq = sub->announce_seq++;
    send_announce(ctx, &a);
}

static void notify_subs(rdps_ctx_t *ctx, const struct rdps_announce *a, rdps_event_type type)
{
    struct rdps_topic *t = rdps__ctx_topic_find(ctx, a->topic_id);
    if (t == NULL)
        return;
    rdps_event ev = {.type = type, .topic = t->name, .session_id = a->session_id};
    rdps__topic_notify(ctx, t, &ev);
}

static void remove_peer(rdps_ctx_t *ctx, struct rdps_peer **link)
{
    struct rdps_peer *p = *link;
    *link = p->next;
    if (p->ann.role == RDPS_ROLE_PUBLISHER)
        notify_subs(ctx, &p->ann, RDPS_EVENT_PUBLISHER_GONE);
    free(p);
}

void rdps__discovery_on_frame(rdps_ctx_t *ctx, const struct rdps_source *src,
                              const struct rdps_frame_view *view)
{
    (void)src;
    struct rdps_announce a;
    ctx->counters.announces_received++;
    if (rdps__announce_decode(view->payload, view->payload_len, &a) != 0 ||
        a.session_id != view->hdr.session_id) {
        ctx->counters.bad_announces++;
        RDPS_LOG_DBG("dropped announcement: %s", rdps_last_error_message());
        return;
    }
    /* A peer's own interval sets its liveness; keep it within what config allows. */
    if (a.interval_ms < 10)
        a.interval_ms = 10;
    if (a.interval_ms > 600000)
        a.interval_ms = 600000;
    struct rdps_peer **link = &ctx->peers;
    for (; *link; link = &(*link)->next)
        if ((*link)->ann.session_id == a.session_id && (*link)->ann.role == a.role)
            break;
    if (a.leaving) {
        if (*link)
            remove_peer(ctx, link);
        return;
    }
    if (*link == NULL) {
        struct rdps_peer *p = calloc(1, sizeof(*p));
        if (p == NULL)
            return; /* counted as not discovered; the next announcement retries */
        p->ann = a;
        p->next = ctx->peers;
        ctx->peers = p;
        if (a.role == RDPS_ROLE_PUBLISHER)
            notify_subs(ctx, &a, RDPS_EVENT_PUBLISHER_SEEN);
        link = &ctx->peers;
    }
    (*link)->ann = a;
    (*link)->last_seen_ns = ctx->now_ns;
}

uint64_t rdps__discovery_tick(rdps_ctx_t *ctx, uint64_t now_ns)
{
    (void)now_ns; /* ctx->now_ns */
    uint64_t interval = (uint64_t)ctx->cfg.announce_interval_ms * 1000000ull;
    if (ctx->control_dest == NULL && (ctx->pubs || ctx->subs))
        return ctx->now_ns + 10000000ull; /* retry as soon as the discovery join completes */
    if (ctx->now_ns >= ctx->next_announce_ns) {
        for (rdps_pub_t *p = ctx->pubs; p; p = p->next)
            announce_pub(ctx, p, false);
        for (rdps_sub_t *s = ctx->subs; s; s = s->next)
            announce_sub(ctx, s, false);
        ctx->next_announce_ns = ctx->now_ns + interval;
    }
    for (struct rdps_peer **link = &ctx->peers; *link;) {
        uint64_t life = (uint64_t)(*link)->ann.interval_ms * 1000000ull * LIVENESS_INTERVALS;
        if (ctx->now_ns - (*link)->last_seen_ns > life)
            remove_peer(ctx, link);
        else
            link = &(*link)->next;
    }
    return ctx->next_announce_ns;
}

int rdps__discovery_init(rdps_ctx_t *ctx)
{
    ctx->next_announce_ns = 0;
    return 0;
}

void rdps__discovery_pub_added(rdps_ctx_t *ctx, rdps_pub_t *pub)
{
    (void)pub;
    ctx->next_announce_ns = 0; /* announce the newcomer at the next poll */
    rdps__ctx_timers_changed(ctx);
}

void rdps__discovery_pub_removed(rdps_ctx_t *ctx, rdps_pub_t *pub)
{
    announce_pub(ctx, pub, true);
}

void rdps__discovery_sub_added(rdps_ctx_t *ctx, rdps_sub_t *sub)
{
    (void)sub;
    ctx->next_announce_ns = 0;
    rdps__ctx_timers_changed(ctx);
}

void rdps__discovery_sub_removed(rdps_ctx_t *ctx, rdps_sub_t *sub)
{
    announce_sub(ctx, sub, true);
}

void rdps__discovery_fini(rdps_ctx_t *ctx)
{
    while (ctx->peers) {
        struct rdps_peer *p = ctx->peers;
        ctx->peers = p->next;
        free(p);
    }
}

int rdps_pub_subscriber_count(const rdps_pub_t *pub)
{
    int n = 0;
    for (const struct rdps_peer *p = pub->ctx->peers; p; p = p->next)
        if (p->ann.role == RDPS_ROLE_SUBSCRIBER && p->ann.topic_id == pub->topic->id)
            n++;
    for (const struct rdps_sub *s = pub->topic->subs; s; s = s->topic_next)
        n++; /* subscribers in this ctx hear the publisher directly */
    return n;
}
