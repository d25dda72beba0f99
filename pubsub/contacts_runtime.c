/* SPDX-License-Identifier: BSD-2-Clause */
/* contacts_runtime.c - the ctx's side of unicast discovery: resolves the seed peers, feeds the
 * sans-IO contacts engine (contacts_engine.h) with peer lists and time, holds a destination per
 * contact, and keeps the list of unicast destinations discovery's announcements go to. */
#include "ctx_internal.h"

#include <stdlib.h>
#include <string.h>

#include "contacts_engine.h"
#include "discovery_engine.h"
#include "rdps_clock.h"
#include "rdps_error.h"
#include "rdps_log.h"
#include "rdps_random.h"

/* A seed whose resolution failed is tried again after this many of our announce intervals; one
 * resolved but silent this long is resolved again (its process may have restarted on a new QP). */
#define SEED_RETRY_INTERVALS  2
#define SEED_SILENT_INTERVALS 5

enum seed_state { SEED_IDLE = 0, SEED_RESOLVING, SEED_RESOLVED };

struct seed_slot {
    struct rdps_seed addr;
    enum seed_state state;
    void *handle;                 /* the membership's resolution */
    const struct rdps_dest *dest; /* resolved: its QP */
    uint64_t next_try_ns;         /* IDLE: when to resolve; RESOLVED: when to check it was heard */
};

struct rdps_contacts_rt {
    struct rdps_contacts engine;
    struct seed_slot seeds[RDPS_MAX_SEEDS];
    unsigned nseeds;
    uint32_t session_id; /* the header's session of our peer lists */
    uint32_t seq;
    /* Where announcements go by unicast: every SEED and DIRECT contact's destination. */
    const struct rdps_dest **targets;
    uint32_t ntargets;
    bool targets_dirty;
};

/* ---- sending ---- */

static int send_list(void *user, struct rdps_contact *to, const struct rdps_contacts_msg *m)
{
    rdps_ctx_t *ctx = user;
    struct rdps_contacts_rt *rt = ctx->contacts;
    uint8_t frame[RDPS_FRAME_HEADER_LEN + RDPS_ANNOUNCE_MAX_BYTES];
    if (to->dest == NULL)
        return RDPS_EHOSTUNREACH;
    int body = rdps__contacts_encode(m, frame + RDPS_FRAME_HEADER_LEN, RDPS_ANNOUNCE_MAX_BYTES);
    if (body < 0)
        return body;
    /* An ANNOUNCE frame with topic id 0: no announcement has it, so receivers tell them apart. */
    int len = rdps__frame_encode_announce(frame, sizeof(frame), rt->session_id, 0, rt->seq++,
                                          frame + RDPS_FRAME_HEADER_LEN, (size_t)body,
                                          rdps__clock_realtime_ns());
    if (len < 0)
        return len;
    if ((uint32_t)len > ctx->max_datagram)
        return RDPS_EMSGSIZE;
    int rc = rdps__ctx_send_frame(ctx, to->dest, frame, (uint32_t)len);
    if (rc == 0)
        ctx->counters.contacts_sent++;
    return rc;
}

static void on_change(void *user, struct rdps_contact *c, bool added)
{
    rdps_ctx_t *ctx = user;
    struct rdps_contacts_rt *rt = ctx->contacts;
    rt->targets_dirty = true;
    if (!added) {
        if (c->kind != RDPS_CONTACT_SEED)
            rdps__transport_dest_release(ctx->transport, c->dest);
        c->dest = NULL;
        return;
    }
    if (c->kind == RDPS_CONTACT_SEED) {
        c->dest = rt->seeds[c->seed].dest;
    } else {
        const struct rdps_dest *d = NULL;
        if (rdps__transport_dest_acquire(ctx->transport, &c->source, &d) < 0) {
            RDPS_LOG_DBG("contacts: no destination for QPN 0x%x: %s", c->source.qpn,
                         rdps_last_error_message());
            d = NULL;
        }
        c->dest = d;
    }
    /* A seed or a peer that spoke to us hears our endpoints now, not at the next round. */
    if (c->dest != NULL && c->kind != RDPS_CONTACT_PROBE)
        rdps__discovery_announce_to(ctx, c->dest);
}

static void collect_target(void *user, const struct rdps_contact *c)
{
    struct rdps_contacts_rt *rt = user;
    if (c->dest != NULL)
        rt->targets[rt->ntargets++] = c->dest;
}

/* The announcement destinations, rebuilt after contacts changed. */
static void rebuild_targets(struct rdps_contacts_rt *rt)
{
    rt->ntargets = 0;
    rdps__contacts_for_each_target(&rt->engine, collect_target, rt);
    rt->targets_dirty = false;
}

uint32_t rdps__peers_announce_dests(rdps_ctx_t *ctx, const struct rdps_dest ***dests)
{
    struct rdps_contacts_rt *rt = ctx->contacts;
    if (rt == NULL)
        return 0;
    if (rt->targets_dirty)
        rebuild_targets(rt);
    *dests = rt->targets;
    return rt->ntargets;
}

/* ---- set-up ---- */

int rdps__peers_parse_config(const rdps_config *cfg, struct rdps_seed *seeds, unsigned *count)
{
    const char *text = cfg->peers;
    if (text == NULL)
        text = getenv("RDPS_PEERS");
    int n = rdps__seeds_parse(text, seeds, RDPS_MAX_SEEDS);
    if (n < 0)
        return rdps__prepend_err(n, text == cfg->peers ? "config " : "RDPS_PEERS: ");
    *count = (unsigned)n;
    return 0;
}

int rdps__peers_start(rdps_ctx_t *ctx)
{
    struct rdps_contacts_rt *rt = calloc(1, sizeof(*rt));
    if (rt == NULL)
        return rdps__set_err(RDPS_ENOMEM, "unicast discovery: out of memory");
    int rc;
    unsigned n = ctx->nseeds; /* parsed at create */
    for (unsigned i = 0; i < n; i++)
        rt->seeds[i].addr = ctx->seeds[i];
    rt->nseeds = ctx->member_ops->resolve != NULL ? n : 0;
    if (n > 0 && rt->nseeds == 0)
        RDPS_LOG_WRN("unicast discovery: this device cannot resolve seed peers");
    rt->session_id = rdps__ctx_random32();
    struct rdps_contacts_config cc;
    rdps__contacts_config_default(&cc);
    cc.max_contacts = ctx->cfg.max_contacts;
    cc.max_probes = cc.max_probes < cc.max_contacts ? cc.max_probes : cc.max_contacts;
    cc.interval_ms = ctx->cfg.announce_interval_ms;
    cc.min_interval_ms = ctx->cfg.peer_interval_min_ms;
    cc.max_interval_ms = ctx->cfg.peer_interval_max_ms;
    cc.hash_seed = rdps__random_u64();
    memcpy(cc.self_gid, ctx->self_gid, 16);
    cc.self_lid = ctx->self_lid;
    cc.self_qpn = ctx->self_qpn ? ctx->self_qpn : 1;
    cc.self_host = ctx->self_host;
    cc.self_cm_port = ctx->cfg.cm_port;
    cc.send = send_list;
    cc.on_change = on_change;
    cc.user = ctx;
    rt->targets = calloc((size_t)cc.max_contacts + RDPS_MAX_SEEDS, sizeof(*rt->targets));
    if (rt->targets == NULL) {
        free(rt);
        return rdps__set_err(RDPS_ENOMEM, "unicast discovery: out of memory");
    }
    ctx->contacts = rt; /* the engine's callbacks find it */
    if ((rc = rdps__contacts_init(&rt->engine, &cc)) < 0) {
        ctx->contacts = NULL;
        free(rt->targets);
        free(rt);
        return rc;
    }
    for (unsigned i = 0; i < rt->nseeds; i++)
        rt->seeds[i].next_try_ns = ctx->now_ns;
    return 0;
}

void rdps__peers_stop(rdps_ctx_t *ctx)
{
    struct rdps_contacts_rt *rt = ctx->contacts;
    if (rt == NULL)
        return;
    rdps__contacts_leave(&rt->engine);
    rdps__contacts_fini(&rt->engine); /* releases every contact's destination */
    for (unsigned i = 0; i < rt->nseeds; i++)
        if (rt->seeds[i].handle != NULL)
            ctx->member_ops->unresolve(ctx->member_impl, rt->seeds[i].handle);
    free(rt->targets);
    free(rt);
    ctx->contacts = NULL;
}

/* ---- progress ---- */

/* Seeds: start resolutions when due, pick up the finished ones, resolve silent ones again. */
static uint64_t seeds_progress(rdps_ctx_t *ctx, uint64_t now)
{
    struct rdps_contacts_rt *rt = ctx->contacts;
    uint64_t interval = (uint64_t)ctx->cfg.announce_interval_ms * 1000000ull, next = UINT64_MAX;
    for (unsigned i = 0; i < rt->nseeds; i++) {
        struct seed_slot *s = &rt->seeds[i];
        if (s->state == SEED_RESOLVED && now >= s->next_try_ns) {
            const struct rdps_contact *c = rdps__contacts_seed(&rt->engine, (uint16_t)i);
            if (c != NULL && c->heard) {
                s->next_try_ns = now + SEED_SILENT_INTERVALS * interval;
            } else {
                /* Silent since it resolved: perhaps a new process, on another QP. */
                rdps__contacts_seed_clear(&rt->engine, (uint16_t)i);
                ctx->member_ops->unresolve(ctx->member_impl, s->handle);
                s->handle = NULL;
                s->dest = NULL;
                s->state = SEED_IDLE;
                s->next_try_ns = now;
            }
        }
        if (s->state == SEED_IDLE && now >= s->next_try_ns) {
            if (ctx->member_ops->resolve(ctx->member_impl, s->addr.ipv4, s->addr.port,
                                         &s->handle) == 0) {
                s->state = SEED_RESOLVING;
            } else {
                ctx->counters.seeds_unresolved++;
                s->next_try_ns = now + SEED_RETRY_INTERVALS * interval;
            }
        }
        if (s->state == SEED_RESOLVING) {
            struct rdps_source src;
            const struct rdps_dest *dest = NULL;
            int st = ctx->member_ops->resolve_state(s->handle, &dest, &src);
            if (st == 1) {
                s->dest = dest;
                s->state = SEED_RESOLVED;
                s->next_try_ns = now + SEED_SILENT_INTERVALS * interval;
                if (rdps__contacts_seed_set(&rt->engine, (uint16_t)i, &src, now) < 0)
                    RDPS_LOG_DBG("unicast discovery: seed %u is this ctx", i);
            } else if (st < 0) {
                char ip[16];
                RDPS_LOG_DBG("unicast discovery: seed %s: %s",
                             rdps__ipv4_format(s->addr.ipv4, ip, sizeof(ip)),
                             rdps_last_error_message());
                ctx->counters.seeds_unresolved++;
                ctx->member_ops->unresolve(ctx->member_impl, s->handle);
                s->handle = NULL;
                s->state = SEED_IDLE;
                s->next_try_ns = now + SEED_RETRY_INTERVALS * interval;
            } else {
                /* Resolving: completions arrive through the membership's events; look soon. */
                uint64_t soon = now + 10000000ull;
                if (soon < next)
                    next = soon;
            }
        }
        if (s->state != SEED_RESOLVING && s->next_try_ns < next)
            next = s->next_try_ns;
    }
    return next;
}

uint64_t rdps__peers_tick(rdps_ctx_t *ctx, uint64_t now)
{
    struct rdps_contacts_rt *rt = ctx->contacts;
    if (rt == NULL)
        return UINT64_MAX;
    uint64_t next = rt->nseeds > 0 ? seeds_progress(ctx, now) : UINT64_MAX;
    uint64_t engine = rdps__contacts_tick(&rt->engine, now);
    return engine < next ? engine : next;
}

void rdps__peers_on_frame(rdps_ctx_t *ctx, const struct rdps_source *src,
                          const struct rdps_frame_view *view)
{
    struct rdps_contacts_msg m;
    ctx->counters.contacts_received++;
    if (rdps__contacts_decode(view->payload, view->payload_len, &m) != 0) {
        ctx->counters.bad_announces++;
        RDPS_LOG_DBG("dropped peer list: %s", rdps_last_error_message());
        return;
    }
    struct rdps_contacts_rt *rt = ctx->contacts;
    if (rt == NULL)
        return;
    rdps__contacts_on_list(&rt->engine, src, &m, ctx->now_ns);
    uint64_t next = rdps__contacts_next_deadline(&rt->engine);
    if (next < ctx->peers_deadline_ns) {
        ctx->peers_deadline_ns = next;
        rdps__ctx_timer_at(ctx, next);
    }
}

void rdps__peers_counters(const rdps_ctx_t *ctx, rdps_counters *out)
{
    const struct rdps_contacts_rt *rt = ctx->contacts;
    if (rt == NULL)
        return;
    const struct rdps_contacts_counters *c = rdps__contacts_counters(&rt->engine);
    out->contacts_refused = c->forged + c->refused_full + c->refused_host + c->refused_probe;
    out->contacts_displaced = c->displaced;
}

uint32_t rdps__peers_count(const rdps_ctx_t *ctx)
{
    return ctx->contacts != NULL ? rdps__contacts_targets(&ctx->contacts->engine) : 0;
}
