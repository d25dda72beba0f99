/* SPDX-License-Identifier: BSD-2-Clause */
/* publisher_setup.c - rdps_pub's creation (its options checked, its topic joined) and what it says
 * of itself: ready, receivers behind, the largest message, its session, its counters. */
#include "publisher_internal.h"

#include <stdlib.h>
#include <string.h>

#include "abi.h"
#include "rdps_clock.h"
#include "rdps_error.h"
#include "rdps_frag.h"
#include "rdps_log.h"

/*
 * Options that cannot apply are refused, not ignored: a setting the application believes in
 * must not silently do nothing. Returns 0 or RDPS_EINVAL naming the option and why.
 */
static int check_opts(const rdps_pub_opts *opts)
{
    if (opts == NULL)
        return 0;
    int batching = (int)opts->batching; /* the enum may be unsigned: a negative shows as itself */
    if (batching != RDPS_BATCH_AUTO && batching != RDPS_BATCH_OFF)
        return rdps__set_err(RDPS_EINVAL,
                             "rdps_pub_create: batching %d is not a batch mode (RDPS_BATCH_AUTO or "
                             "RDPS_BATCH_OFF)",
                             batching);
    if (opts->batch_linger_us > 1000000u)
        return rdps__set_err(RDPS_EINVAL,
                             "rdps_pub_create: batch_linger_us %u above 1 s (1000000): a datagram "
                             "would hold its messages longer than any bus would",
                             opts->batch_linger_us);
    if (opts->batch_linger_us != 0 && batching == RDPS_BATCH_OFF)
        return rdps__set_err(RDPS_EINVAL,
                             "rdps_pub_create: batch_linger_us needs batching (RDPS_BATCH_OFF "
                             "sends one message per datagram)");
    int rc = rdps__pub_queue_check_opts(opts);
    if (rc < 0)
        return rc;
    if (opts->reliable)
        return rdps__pub_rel_check_opts(opts);
    const char *reliable_only = opts->ring_bytes != 0            ? "ring_bytes"
                                : opts->flow != RDPS_FLOW_MAX    ? "flow"
                                : opts->flow_tag != 0            ? "flow_tag"
                                : opts->flow_min_receivers != 0  ? "flow_min_receivers"
                                : opts->receiver_timeout_ms != 0 ? "receiver_timeout_ms"
                                : opts->rate_limit != 0          ? "rate_limit"
                                : opts->parity_k != 0            ? "parity_k"
                                : opts->parity_proactive != 0    ? "parity_proactive"
                                                                 : NULL;
    if (reliable_only != NULL)
        return rdps__set_err(RDPS_EINVAL,
                             "rdps_pub_create: %s needs a reliable publisher (opts.reliable = 1): "
                             "an unreliable one keeps no ring and no receivers, and sends when "
                             "the application does",
                             reliable_only);
    return 0;
}

static int pub_create(rdps_ctx_t *ctx, const char *topic, const rdps_pub_opts *opts,
                      rdps_pub_t **out);

static int pub_create_sized(rdps_ctx_t *ctx, const char *topic, const rdps_pub_opts *opts,
                            size_t opts_size, rdps_pub_t **out)
{
    rdps_pub_opts full = {0}; /* zero: every option's default */
    if (opts != NULL) {
        int rc = rdps__abi_read_in(&full, sizeof(full), opts, opts_size,
                                   RDPS__ABI_PUB_OPTS_SIZE_1_0, "rdps_pub_create: rdps_pub_opts");
        if (rc < 0) {
            if (out != NULL)
                *out = NULL;
            return rc;
        }
    }
    return pub_create(ctx, topic, opts != NULL ? &full : NULL, out);
}

int rdps_pub_create_sized(rdps_ctx_t *handle, const char *topic, const rdps_pub_opts *opts,
                          size_t opts_size, rdps_pub_t **out)
{
    rdps_ctx_t *ctx = NULL;
    rdps__api_enter();
    int rc = handle == NULL ? 0 : rdps__ctx_enter(handle, &ctx); /* NULL: refused below */
    if (rc < 0 && out != NULL)
        *out = NULL;
    return rdps__api_return(rc < 0 ? rc : pub_create_sized(ctx, topic, opts, opts_size, out),
                            "rdps_pub_create");
}

static int pub_create(rdps_ctx_t *ctx, const char *topic, const rdps_pub_opts *opts,
                      rdps_pub_t **out)
{
    struct rdps_topic *t;
    int rc;

    rdps__clear_err();
    if (ctx == NULL || out == NULL)
        return rdps__set_err(RDPS_EINVAL, "rdps_pub_create: NULL argument");
    *out = NULL;
    if (ctx->destroy_requested)
        return rdps__set_err(RDPS_ECLOSED, "rdps_pub_create: the ctx is being destroyed");
    if ((rc = check_opts(opts)) < 0)
        return rc;
    if ((rc = rdps__topic_table_get(&ctx->topics, topic, opts ? opts->group : NULL, &t)) < 0)
        return rdps__prepend_err(rc, "rdps_pub_create: ");

    rdps_pub_t *pub = calloc(1, sizeof(*pub));
    if (pub == NULL) {
        rdps__topic_table_put(&ctx->topics, t);
        return rdps__set_err(RDPS_ENOMEM, "rdps_pub_create: out of memory");
    }
    if ((pub->handle = rdps__handle_new(RDPS_HANDLE_PUB, pub)) == 0) {
        free(pub);
        rdps__topic_table_put(&ctx->topics, t);
        return RDPS_ENOMEM; /* the table said why */
    }
    rc = rdps__topic_send_attach(ctx, t, opts != NULL ? (int)opts->transport : 0);
    if (rc < 0) {
        rdps__handle_release(pub->handle);
        free(pub);
        rdps__topic_table_put(&ctx->topics, t);
        return rdps__prepend_err(rc, "rdps_pub_create: ");
    }
    t->pubs++;
    pub->ctx = ctx;
    pub->topic = t;
    if (opts != NULL) {
        pub->on_event = opts->on_event;
        pub->event_user = opts->event_user;
    }
    pub->session_id = rdps__ctx_random32();
    /* Random starts exercise wrap-around and hide history. */
    pub->next_seq = rdps__ctx_random32();
    pub->next_ordinal = rdps__ctx_random32();
    pub->batching = opts == NULL || opts->batching == RDPS_BATCH_AUTO;
    pub->linger_ns = opts != NULL ? (uint64_t)opts->batch_linger_us * 1000u : 0;
    pub->join = &pub->open; /* nothing open yet: joins nothing */
    pub->local_subs = t->live_subs != 0;
    rdps__pub_tail_init(pub);
    pub->next = ctx->pubs;
    ctx->pubs = pub;
    if (opts != NULL && ((opts->reliable && (rc = rdps__pub_rel_attach(pub, opts)) < 0) ||
                         (opts->concurrent && (rc = rdps__pub_queue_attach(pub, opts)) < 0))) {
        rdps__pub_free(pub);
        return rdps__prepend_err(rc, "rdps_pub_create: ");
    }
    atomic_store_explicit(&pub->send_owner,
                          pub->cq != NULL
                              ? RDPS__OWNER_NONE
                              : atomic_load_explicit(&ctx->owner.token, memory_order_relaxed),
                          memory_order_relaxed);
    rdps__discovery_pub_added(ctx, pub);
    *out = (rdps_pub_t *)pub->handle;
    return 0;
}

/* A failed join reads as "not ready"; rdps_last_error_message() and rdps_pub_send say why. */
int rdps_pub_ready(const rdps_pub_t *handle)
{
    rdps_pub_t *pub = rdps__pub_of_handle(handle);
    if (pub != NULL && pub->cq != NULL && !rdps__owner_is_caller(&pub->ctx->owner)) {
        int ready = rdps__pub_queue_ready(pub); /* another thread of a concurrent publisher */
        if (!ready)
            rdps__api_note("rdps_pub_ready");
        return ready;
    }
    if (rdps__pub_enter(handle, &pub) < 0) {
        rdps__api_note("rdps_pub_ready");
        return 0;
    }
    if (pub->closed)
        return 0;
    int state = rdps__pub_join_state(pub);
    if (state < 0)
        rdps__api_note("rdps_pub_ready");
    return state == 1;
}

int rdps_pub_receivers_behind(const rdps_pub_t *handle)
{
    rdps_pub_t *pub;
    if (rdps__pub_enter(handle, &pub) < 0) {
        rdps__api_note("rdps_pub_receivers_behind");
        return 0;
    }
    if (pub->closed || pub->rel == NULL)
        return 0;
    uint32_t behind = rdps__pub_rel_receivers_behind(pub);
    return behind > INT32_MAX ? INT32_MAX : (int)behind;
}

/* Any thread: a publisher's limit never changes (a destroyed one's handle is refused). */
size_t rdps_pub_max_message_size(const rdps_pub_t *handle)
{
    const rdps_pub_t *pub = rdps__pub_of_handle(handle);
    if (pub == NULL)
        return 0;
    size_t max =
        pub->rel != NULL ? rdps__pub_rel_max_message_size(pub) : pub->ctx->cfg.max_message_size;
    if (pub->cq != NULL && rdps__pub_queue_max_message(pub) < max)
        max = rdps__pub_queue_max_message(pub); /* what other threads' sends take */
    return max;
}

/* Any thread: the session never changes. */
uint32_t rdps_pub_session(const rdps_pub_t *handle)
{
    const rdps_pub_t *pub = rdps__pub_of_handle(handle);
    return pub ? pub->session_id : 0;
}

void rdps__pub_local_subs_changed(rdps_ctx_t *ctx, const struct rdps_topic *t)
{
    for (rdps_pub_t *p = ctx->pubs; p != NULL; p = p->next) {
        if (p->topic == t) {
            p->local_subs = t->live_subs != 0;
            if (p->claimed) /* no join while a claim is outstanding: its end decides */
                p->join->joins_off = p->local_subs;
            else
                rdps__batch_set_joins(p->join, !p->local_subs);
        }
    }
}

void rdps__pub_fold_counters(const rdps_pub_t *pub, rdps_counters *into)
{
    /* Messages the open datagram holds were taken: they count before it goes (a claim's when
     * it is committed). */
    bool claim_open = pub->claimed && pub->claim_in_open;
    into->msgs_sent += pub->counters.msgs_sent + pub->open.count - claim_open;
    into->bytes_sent += pub->counters.bytes_sent + rdps__batch_message_bytes(&pub->open) -
                        (claim_open ? pub->claim_capacity : 0);
    into->frames_sent += pub->counters.frames_sent;
    into->frame_bytes_sent += pub->counters.frame_bytes_sent;
    into->send_backpressure += pub->counters.send_backpressure;
    into->retransmits += pub->counters.retransmits;
    into->unicast_copies += pub->counters.unicast_copies;
    into->frames_batched += pub->counters.frames_batched;
    into->heartbeats_sent += pub->counters.heartbeats_sent; /* unreliable: tail heartbeats */
    if (pub->rel != NULL)
        rdps__pub_rel_counters(pub, into);
    if (pub->cq != NULL)
        rdps__pub_queue_counters(pub, into);
}
