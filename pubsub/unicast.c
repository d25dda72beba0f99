/* SPDX-License-Identifier: BSD-2-Clause */
/* unicast.c - how a topic's datagrams travel in a ctx (rdps_transport_mode): each side's group
 * join or unicast path, auto's fallback, and the publishers' unicast fan-out to the subscribers
 * discovery announced. */
#include "ctx_internal.h"

#include <stdlib.h>
#include <string.h>

#include "discovery_engine.h"
#include "rdps_error.h"
#include "rdps_log.h"

/* Subscriber peers (endpoint announcements) tracked per unicast destination (a ctx), on average. */
#define FANOUT_PEERS_PER_DEST 4

/*
 * The fan-out of one topic's publishers: every subscriber peer discovery announced from its own
 * address (peers: source and session, whether it asked for unicast), grouped by source into
 * destinations (one per subscribing ctx: its QP gets one copy, however many of its subscribers
 * announced). A destination holds an address handle for as long as a peer of it lives
 * (dest_acquire). `list` is what the publishers post to: the group (while they use it) and the
 * destinations that get copies.
 *
 * Every copy is a datagram the publishers post, so what one host draws is capped: at most
 * unicast_subscribers_per_host destinations (4 by default) on one host (GID, or LID without a
 * GRH: a QPN is the sender's choice), which is also the copies of each datagram it costs. When
 * the table (max_unicast_subscribers) is full, a newcomer displaces an unconfirmed destination
 * of the host holding the most, when that host holds more than the newcomer's would (fair
 * shares); a destination is confirmed once its QP reported (STATUS) to a reliable publisher of
 * the topic here, showing it receives what it was sent. When a destination goes, subscribers
 * discovery knows that were refused for want of room are considered again.
 */
struct fanout_peer {
    struct rdps_source source;
    uint32_t session_id;
    uint32_t dest; /* index in dests */
    bool unicast;
};

struct fanout_dest {
    struct rdps_source source;
    const struct rdps_dest *dest;
    uint32_t peers, unicast_peers;
    uint64_t added; /* order of admission (the oldest unconfirmed one is displaced first) */
    bool confirmed; /* its QP reported to a reliable publisher of the topic (STATUS) */
};

struct rdps_fanout {
    struct fanout_peer *peers;
    uint32_t npeers, peer_cap;
    struct fanout_dest *dests;
    uint32_t ndests, dest_cap;
    const struct rdps_dest **list; /* 1 + dest_cap */
    uint64_t admissions;
    bool refused; /* a subscriber was refused for want of room since the last rescan */
    bool rescan;  /* room was made since: discovery's subscribers are considered again */
};

static bool valid_mode(int mode)
{
    return mode == RDPS_TRANSPORT_MULTICAST || mode == RDPS_TRANSPORT_UNICAST ||
           mode == RDPS_TRANSPORT_AUTO;
}

static const char *mode_name(int mode)
{
    return mode == RDPS_TRANSPORT_UNICAST ? "unicast"
           : mode == RDPS_TRANSPORT_AUTO  ? "auto"
                                          : "multicast";
}

int rdps__transport_mode_check(const char *who, int mode)
{
    if (!valid_mode(mode))
        return rdps__set_err(RDPS_EINVAL,
                             "%stransport %d is not RDPS_TRANSPORT_MULTICAST, _UNICAST or _AUTO",
                             who, mode);
    return 0;
}

/* ---- the fan-out ---- */

static uint32_t fanout_capacity(const rdps_ctx_t *ctx)
{
    uint32_t cap = ctx->cfg.max_unicast_subscribers, half = ctx->cfg.send_slots / 2;
    return cap < half ? cap : half; /* a datagram's copies go in one chain: they must fit */
}

static int fanout_create(rdps_ctx_t *ctx, struct rdps_fanout **out)
{
    struct rdps_fanout *f = calloc(1, sizeof(*f));
    if (f == NULL)
        return rdps__set_err(RDPS_ENOMEM, "unicast fan-out: out of memory");
    f->dest_cap = fanout_capacity(ctx);
    f->peer_cap = f->dest_cap * FANOUT_PEERS_PER_DEST;
    f->peers = calloc(f->peer_cap, sizeof(*f->peers));
    f->dests = calloc(f->dest_cap, sizeof(*f->dests));
    f->list = calloc((size_t)f->dest_cap + 1, sizeof(*f->list));
    if (f->peers == NULL || f->dests == NULL || f->list == NULL) {
        free(f->peers);
        free(f->dests);
        free(f->list);
        free(f);
        return rdps__set_err(RDPS_ENOMEM, "unicast fan-out: out of memory");
    }
    *out = f;
    return 0;
}

static void fanout_destroy(rdps_ctx_t *ctx, struct rdps_fanout *f)
{
    if (f == NULL)
        return;
    for (uint32_t i = 0; i < f->ndests; i++)
        rdps__transport_dest_release(ctx->transport, f->dests[i].dest);
    free(f->peers);
    free(f->dests);
    free(f->list);
    free(f);
}

/* Where the topic's publishers post: the group while they use it, and the copies. */
static void fanout_rebuild(struct rdps_topic *t)
{
    struct rdps_fanout *f = t->fanout;
    uint32_t n = 0;
    bool group = t->send_path == RDPS_PATH_GROUP && t->send_dest != NULL;
    if (f == NULL) {
        t->ndests = t->ndests_unicast = 0;
        t->dests = NULL;
        return;
    }
    if (group)
        f->list[n++] = t->send_dest;
    for (uint32_t i = 0; i < f->ndests; i++) {
        const struct fanout_dest *d = &f->dests[i];
        /* On the group, only those that asked for copies; without it, every subscriber. */
        if (group ? d->unicast_peers > 0 : d->peers > 0)
            f->list[n++] = d->dest;
    }
    t->dests = f->list;
    t->ndests = n;
    t->ndests_unicast = n - (group ? 1u : 0u);
}

static int32_t find_peer(const struct rdps_fanout *f, const struct rdps_source *src,
                         uint32_t session)
{
    for (uint32_t i = 0; i < f->npeers; i++)
        if (f->peers[i].session_id == session && rdps__source_equal(&f->peers[i].source, src))
            return (int32_t)i;
    return -1;
}

static int32_t find_dest(const struct rdps_fanout *f, const struct rdps_source *src)
{
    for (uint32_t i = 0; i < f->ndests; i++)
        if (rdps__source_equal(&f->dests[i].source, src))
            return (int32_t)i;
    return -1;
}

static uint32_t host_dests(const struct rdps_fanout *f, const struct rdps_source *src)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < f->ndests; i++)
        n += rdps__source_same_host(&f->dests[i].source, src);
    return n;
}

/* Removes destination d and its peers (the last index takes its place). */
static void dest_remove(rdps_ctx_t *ctx, struct rdps_fanout *f, uint32_t d)
{
    /* Sends queued before keep their own copy of the destination; the address handle waits. */
    rdps__transport_dest_release(ctx->transport, f->dests[d].dest);
    for (uint32_t k = 0; k < f->npeers;) {
        if (f->peers[k].dest == d)
            f->peers[k] = f->peers[--f->npeers];
        else
            k++;
    }
    uint32_t last = f->ndests - 1;
    if (d != last) {
        f->dests[d] = f->dests[last];
        for (uint32_t k = 0; k < f->npeers; k++)
            if (f->peers[k].dest == last)
                f->peers[k].dest = d;
    }
    f->ndests--;
}

/*
 * The table is full: the oldest unconfirmed destination of the host holding the most goes, when
 * that host holds more than the newcomer's host would (mine + 1). false: nobody can make room.
 */
static bool displace_for(rdps_ctx_t *ctx, struct rdps_fanout *f, uint32_t mine)
{
    int32_t victim = -1;
    uint32_t victim_host = 0;
    for (uint32_t i = 0; i < f->ndests; i++) {
        const struct fanout_dest *d = &f->dests[i];
        if (d->confirmed)
            continue;
        uint32_t n = host_dests(f, &d->source);
        if (n > victim_host ||
            (n == victim_host && victim >= 0 && d->added < f->dests[victim].added)) {
            victim = (int32_t)i;
            victim_host = n;
        }
    }
    if (victim < 0 || victim_host <= mine + 1)
        return false;
    dest_remove(ctx, f, (uint32_t)victim);
    ctx->counters.unicast_displaced++;
    return true;
}

struct seen_before {
    rdps_ctx_t *ctx;
    struct rdps_topic *t;
};

static void seen_before(void *user, const struct rdps_disc_event *ev);
static void watch(rdps_ctx_t *ctx);

/* A new subscriber peer: its ctx's destination found or made (within the caps), or refused. */
static void peer_add(rdps_ctx_t *ctx, struct rdps_fanout *f, const struct rdps_disc_event *ev)
{
    int32_t d = find_dest(f, &ev->source);
    if (f->npeers == f->peer_cap) {
        ctx->counters.unicast_refused++;
        f->refused = true;
        return;
    }
    if (d < 0) {
        uint32_t on_host = host_dests(f, &ev->source);
        const struct rdps_dest *dest = NULL;
        if (on_host >= ctx->cfg.unicast_subscribers_per_host ||
            (f->ndests == f->dest_cap && !displace_for(ctx, f, on_host)) ||
            rdps__transport_dest_acquire(ctx->transport, &ev->source, &dest) < 0) {
            ctx->counters.unicast_refused++;
            f->refused = true;
            return;
        }
        d = (int32_t)f->ndests++;
        f->dests[d] =
            (struct fanout_dest){.source = ev->source, .dest = dest, .added = ++f->admissions};
    }
    struct fanout_peer *p = &f->peers[f->npeers++];
    *p = (struct fanout_peer){.source = ev->source,
                              .session_id = ev->session_id,
                              .dest = (uint32_t)d,
                              .unicast = ev->unicast};
    f->dests[d].peers++;
    f->dests[d].unicast_peers += ev->unicast;
}

/* Returns true when the peer's destination went with it (room was made). */
static bool peer_remove(rdps_ctx_t *ctx, struct rdps_fanout *f, uint32_t i)
{
    struct fanout_peer *p = &f->peers[i];
    struct fanout_dest *d = &f->dests[p->dest];
    d->unicast_peers -= p->unicast;
    if (d->peers == 1) { /* the last subscriber of that ctx went: its copies stop */
        dest_remove(ctx, f, p->dest);
        return true;
    }
    d->peers--;
    f->peers[i] = f->peers[--f->npeers];
    return false;
}

void rdps__fanout_on_subscriber(rdps_ctx_t *ctx, struct rdps_topic *t,
                                const struct rdps_disc_event *ev)
{
    struct rdps_fanout *f = t->fanout;
    if (f == NULL || ev->role != RDPS_ROLE_SUBSCRIBER)
        return;
    int32_t i = find_peer(f, &ev->source, ev->session_id);
    switch (ev->type) {
    case RDPS_DISC_PEER_SEEN:
        /* Only a subscriber announced from its own address gets copies: anyone can announce in
         * another's name, and each copy is a datagram to that address. */
        if (!ev->addressed) {
            ctx->counters.unicast_refused++;
            return;
        }
        if (i < 0)
            peer_add(ctx, f, ev);
        break;
    case RDPS_DISC_PEER_UPDATED:
        if (i >= 0 && f->peers[i].unicast != ev->unicast) {
            struct fanout_dest *d = &f->dests[f->peers[i].dest];
            f->peers[i].unicast = ev->unicast;
            if (ev->unicast)
                d->unicast_peers++;
            else
                d->unicast_peers--;
        }
        break;
    case RDPS_DISC_PEER_GONE:
        if (i >= 0 && peer_remove(ctx, f, (uint32_t)i) && f->refused) {
            /* Room: the subscribers refused for want of it are considered again, at the next
             * progress (not inside discovery's event). */
            f->refused = false;
            f->rescan = true;
            watch(ctx);
        }
        break;
    default:
        return;
    }
    fanout_rebuild(t);
}

void rdps__fanout_confirm(struct rdps_topic *t, const struct rdps_source *src)
{
    struct rdps_fanout *f = t->fanout;
    int32_t d = f != NULL ? find_dest(f, src) : -1;
    if (d >= 0)
        f->dests[d].confirmed = true;
}

/* Subscribers discovery knew before the topic's first publisher, or refused while it was full. */
static void seen_before(void *user, const struct rdps_disc_event *ev)
{
    struct seen_before *sb = user;
    rdps__fanout_on_subscriber(sb->ctx, sb->t, ev);
}

uint32_t rdps__fanout_sources(const struct rdps_topic *t, struct rdps_source *out, uint32_t max)
{
    const struct rdps_fanout *f = t->fanout;
    uint32_t n = 0;
    if (f == NULL)
        return 0;
    bool group = t->send_path == RDPS_PATH_GROUP && t->send_dest != NULL;
    for (uint32_t i = 0; i < f->ndests; i++) {
        const struct fanout_dest *d = &f->dests[i];
        if (group ? d->unicast_peers > 0 : d->peers > 0) {
            if (n < max)
                out[n] = d->source;
            n++;
        }
    }
    return n;
}

/* ---- each side's path ---- */

static uint64_t multicast_timeout_ns(const rdps_ctx_t *ctx)
{
    return (uint64_t)ctx->cfg.multicast_timeout_ms * 1000000ull;
}

/* The topic sides progress looks at changed: look at the next poll. */
static void watch(rdps_ctx_t *ctx)
{
    ctx->topics_deadline_ns = 0;
    rdps__ctx_timers_changed(ctx);
}

int rdps__topic_send_attach(rdps_ctx_t *ctx, struct rdps_topic *t, int mode)
{
    int rc = rdps__transport_mode_check("", mode);
    if (rc < 0)
        return rc;
    if (t->pubs > 0) {
        if (t->send_mode != mode)
            return rdps__set_err(RDPS_EINVAL,
                                 "the publishers of '%s' in this ctx use transport %s, not %s "
                                 "(one mode per topic and side)",
                                 t->name, mode_name(t->send_mode), mode_name(mode));
        return 0;
    }
    struct rdps_fanout *f = NULL;
    if ((rc = fanout_create(ctx, &f)) < 0)
        return rc;
    if (mode != RDPS_TRANSPORT_UNICAST) {
        rc = ctx->member_ops->join(ctx->member_impl, t->group, RDPS_MEMBER_SEND_ONLY,
                                   &t->send_membership);
        if (rc < 0) {
            fanout_destroy(ctx, f);
            return rdps__prepend_err(rc, "joining the topic's group: ");
        }
    }
    t->fanout = f;
    t->send_mode = (uint8_t)mode;
    t->send_path = mode == RDPS_TRANSPORT_UNICAST ? RDPS_PATH_UNICAST : RDPS_PATH_JOINING;
    t->send_ready = t->send_path == RDPS_PATH_UNICAST;
    t->send_since_ns = ctx->now_ns;
    if (ctx->discovery != NULL) {
        struct seen_before sb = {ctx, t};
        rdps__disc_for_each_remote(ctx->discovery, t->id, t->name, RDPS_ROLE_SUBSCRIBER,
                                   seen_before, &sb);
    }
    fanout_rebuild(t);
    watch(ctx);
    return 0;
}

void rdps__topic_send_detach(rdps_ctx_t *ctx, struct rdps_topic *t)
{
    if (t->send_membership != NULL)
        ctx->member_ops->leave(ctx->member_impl, t->send_membership);
    t->send_membership = NULL;
    t->send_dest = NULL;
    fanout_destroy(ctx, t->fanout);
    t->fanout = NULL;
    t->send_path = RDPS_PATH_NONE;
    t->send_ready = false;
    fanout_rebuild(t);
}

int rdps__topic_recv_attach(rdps_ctx_t *ctx, struct rdps_topic *t, int mode)
{
    int rc = rdps__transport_mode_check("", mode);
    if (rc < 0)
        return rc;
    if (t->subs != NULL) {
        if (t->recv_mode != mode)
            return rdps__set_err(RDPS_EINVAL,
                                 "the subscribers of '%s' in this ctx use transport %s, not %s "
                                 "(one mode per topic and side)",
                                 t->name, mode_name(t->recv_mode), mode_name(mode));
        return 0;
    }
    if (mode != RDPS_TRANSPORT_UNICAST) {
        rc = ctx->member_ops->join(ctx->member_impl, t->group, RDPS_MEMBER_RECEIVE,
                                   &t->receive_membership);
        if (rc < 0)
            return rdps__prepend_err(rc, "joining the topic's group: ");
    }
    t->recv_mode = (uint8_t)mode;
    t->recv_path = mode == RDPS_TRANSPORT_UNICAST ? RDPS_PATH_UNICAST : RDPS_PATH_JOINING;
    t->recv_since_ns = ctx->now_ns;
    watch(ctx);
    return 0;
}

void rdps__topic_recv_detach(rdps_ctx_t *ctx, struct rdps_topic *t)
{
    if (t->receive_membership != NULL)
        ctx->member_ops->leave(ctx->member_impl, t->receive_membership);
    t->receive_membership = NULL;
    t->recv_path = RDPS_PATH_NONE;
}

/* The event telling a topic's endpoints on one side that it now goes by unicast. */
static void raise_fallback(rdps_ctx_t *ctx, struct rdps_topic *t, bool send_side, int reason)
{
    rdps_event ev = {.type = RDPS_EVENT_UNICAST_FALLBACK, .topic = t->name, .reason = reason};
    rdps__ctx_self_source(ctx, &ev.source);
    ctx->counters.unicast_fallbacks++;
    static const char *const why[] = {"", "its join failed", "its join did not complete in time",
                                      "no multicast heard while peers were heard by unicast"};
    RDPS_LOG_WRN("topic '%s': %s go by unicast: %s", t->name,
                 send_side ? "publishers" : "subscribers", why[reason]);
    if (!send_side) {
        rdps__topic_notify(ctx, t, &ev);
        return;
    }
    rdps__ctx_callbacks_enter(ctx);
    for (struct rdps_pub *p = ctx->pubs, *next; p != NULL && !ctx->destroy_requested; p = next) {
        next = p->next;
        if (!p->closed && p->topic == t && p->on_event != NULL) {
            ev.session_id = p->session_id;
            p->on_event(p->event_user, &ev);
        }
    }
    rdps__ctx_callbacks_leave(ctx); /* inside poll: frees nothing */
}

static void send_fall_back(rdps_ctx_t *ctx, struct rdps_topic *t, int reason)
{
    if (t->send_membership != NULL)
        ctx->member_ops->leave(ctx->member_impl, t->send_membership);
    t->send_membership = NULL;
    t->send_dest = NULL;
    t->send_path = RDPS_PATH_UNICAST;
    t->send_ready = true;
    fanout_rebuild(t);
    rdps__pub_rel_topic_path(ctx, t);
    raise_fallback(ctx, t, true, reason);
}

static void recv_fall_back(rdps_ctx_t *ctx, struct rdps_topic *t, int reason)
{
    if (t->receive_membership != NULL)
        ctx->member_ops->leave(ctx->member_impl, t->receive_membership);
    t->receive_membership = NULL;
    t->recv_path = RDPS_PATH_UNICAST;
    for (struct rdps_sub *s = t->subs; s != NULL; s = s->topic_next)
        rdps__discovery_sub_unicast(ctx, s); /* publishers hear it at once */
    raise_fallback(ctx, t, false, reason);
}

/*
 * Whether this ctx hears no multicast: an announcement came by unicast multicast_timeout_ms ago or
 * more and none ever came through a group. Otherwise *next gets the time the answer may change.
 */
static bool no_multicast_heard(const rdps_ctx_t *ctx, uint64_t *next)
{
    if (ctx->multicast_heard || ctx->unicast_heard_ns == 0)
        return false;
    uint64_t at = ctx->unicast_heard_ns + multicast_timeout_ns(ctx);
    if (ctx->now_ns >= at)
        return true;
    if (at < *next)
        *next = at;
    return false;
}

/* A join in progress: 1 joined (*dest), 0 pending, negative failed. */
static int join_state(rdps_ctx_t *ctx, void *membership, const struct rdps_dest **dest)
{
    if (membership == NULL)
        return RDPS_ENOTJOINED;
    return ctx->member_ops->state(membership, dest);
}

/* One side that is joining: joined, failed, or (auto) out of time. */
static int side_join(rdps_ctx_t *ctx, int mode, void *membership, uint64_t since,
                     const struct rdps_dest **dest, int *reason, uint64_t *next)
{
    int st = join_state(ctx, membership, dest);
    if (st == 1)
        return RDPS_PATH_GROUP;
    if (st < 0) {
        *reason = RDPS_FALLBACK_JOIN_FAILED;
        return mode == RDPS_TRANSPORT_AUTO ? RDPS_PATH_UNICAST : RDPS_PATH_FAILED;
    }
    if (mode == RDPS_TRANSPORT_AUTO) {
        uint64_t at = since + multicast_timeout_ns(ctx);
        if (ctx->now_ns >= at) {
            *reason = RDPS_FALLBACK_JOIN_TIMED_OUT;
            return RDPS_PATH_UNICAST;
        }
        if (at < *next)
            *next = at;
    }
    return RDPS_PATH_JOINING;
}

uint64_t rdps__topics_progress(rdps_ctx_t *ctx)
{
    uint64_t next = UINT64_MAX;
    bool no_mcast = no_multicast_heard(ctx, &next);
    unsigned joining = 0;
    for (unsigned b = 0; b < RDPS_TOPIC_TABLE_BUCKETS && !ctx->destroy_requested; b++) {
        for (struct rdps_topic *t = ctx->topics.buckets[b]; t != NULL; t = t->next) {
            int reason = 0;
            if (t->fanout != NULL && t->fanout->rescan && ctx->discovery != NULL) {
                struct seen_before sb = {ctx, t};
                t->fanout->rescan = false;
                rdps__disc_for_each_remote(ctx->discovery, t->id, t->name, RDPS_ROLE_SUBSCRIBER,
                                           seen_before, &sb);
            }
            if (t->send_path == RDPS_PATH_JOINING) {
                const struct rdps_dest *dest = NULL;
                int path = side_join(ctx, t->send_mode, t->send_membership, t->send_since_ns, &dest,
                                     &reason, &next);
                if (path == RDPS_PATH_GROUP) {
                    t->send_dest = dest;
                    t->send_path = RDPS_PATH_GROUP;
                    t->send_ready = true;
                    fanout_rebuild(t);
                } else if (path == RDPS_PATH_UNICAST) {
                    send_fall_back(ctx, t, reason);
                } else if (path == RDPS_PATH_FAILED) {
                    t->send_path = RDPS_PATH_FAILED;
                }
            }
            if (t->send_path == RDPS_PATH_GROUP && t->send_mode == RDPS_TRANSPORT_AUTO && no_mcast)
                send_fall_back(ctx, t, RDPS_FALLBACK_NO_MULTICAST);
            if (t->recv_path == RDPS_PATH_JOINING) {
                const struct rdps_dest *dest = NULL;
                int path = side_join(ctx, t->recv_mode, t->receive_membership, t->recv_since_ns,
                                     &dest, &reason, &next);
                if (path == RDPS_PATH_UNICAST)
                    recv_fall_back(ctx, t, reason);
                else if (path != RDPS_PATH_JOINING)
                    t->recv_path = (uint8_t)path;
            }
            if (t->recv_path == RDPS_PATH_GROUP && t->recv_mode == RDPS_TRANSPORT_AUTO && no_mcast)
                recv_fall_back(ctx, t, RDPS_FALLBACK_NO_MULTICAST);
            joining += t->send_path == RDPS_PATH_JOINING;
            joining += t->recv_path == RDPS_PATH_JOINING;
        }
    }
    ctx->topics_joining = joining;
    ctx->topics_deadline_ns = next;
    return next;
}

void rdps__topics_unicast_heard(rdps_ctx_t *ctx)
{
    if (ctx->unicast_heard_ns != 0)
        return;
    ctx->unicast_heard_ns = ctx->now_ns != 0 ? ctx->now_ns : 1;
    uint64_t at = ctx->unicast_heard_ns + multicast_timeout_ns(ctx);
    if (at < ctx->topics_deadline_ns)
        ctx->topics_deadline_ns = at;
    rdps__ctx_timer_at(ctx, at);
}
