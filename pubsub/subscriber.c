/* SPDX-License-Identifier: BSD-2-Clause */
/* subscriber.c - rdps_sub: joins the topic's group and receives the topic's messages through
 * callbacks. */
#include "ctx_internal.h"

#include <stdlib.h>
#include <string.h>

#include "abi.h"
#include "rdps_error.h"
#include "rdps_log.h"

static int sub_create(rdps_ctx_t *ctx, const char *topic, rdps_msg_cb on_message, void *user,
                      const rdps_sub_opts *opts, rdps_sub_t **out);

static int sub_create_sized(rdps_ctx_t *ctx, const char *topic, rdps_msg_cb on_message, void *user,
                            const rdps_sub_opts *opts, size_t opts_size, rdps_sub_t **out)
{
    rdps_sub_opts full = {0}; /* zero: every option's default */
    if (opts != NULL) {
        int rc = rdps__abi_read_in(&full, sizeof(full), opts, opts_size,
                                   RDPS__ABI_SUB_OPTS_SIZE_1_0, "rdps_sub_create: rdps_sub_opts");
        if (rc < 0) {
            if (out != NULL)
                *out = NULL;
            return rc;
        }
    }
    return sub_create(ctx, topic, on_message, user, opts != NULL ? &full : NULL, out);
}

int rdps_sub_create_sized(rdps_ctx_t *handle, const char *topic, rdps_msg_cb on_message, void *user,
                          const rdps_sub_opts *opts, size_t opts_size, rdps_sub_t **out)
{
    rdps_ctx_t *ctx;
    rdps__api_enter();
    int rc = handle == NULL ? 0 : rdps__ctx_enter(handle, &ctx); /* NULL: refused below */
    if (rc < 0 && out != NULL)
        *out = NULL;
    return rdps__api_return(rc < 0 ? rc
                                   : sub_create_sized(handle == NULL ? NULL : ctx, topic,
                                                      on_message, user, opts, opts_size, out),
                            "rdps_sub_create");
}

static int sub_create(rdps_ctx_t *ctx, const char *topic, rdps_msg_cb on_message, void *user,
                      const rdps_sub_opts *opts, rdps_sub_t **out)
{
    struct rdps_topic *t;
    int rc;

    rdps__clear_err();
    if (ctx == NULL || out == NULL || on_message == NULL)
        return rdps__set_err(RDPS_EINVAL, "rdps_sub_create: NULL ctx, out or callback");
    *out = NULL;
    if (ctx->destroy_requested)
        return rdps__set_err(RDPS_ECLOSED, "rdps_sub_create: the ctx is being destroyed");
    /* Options that cannot apply are refused, not ignored. */
    if (opts != NULL && !opts->reliable && (opts->from_oldest || opts->flow_tag != 0))
        return rdps__set_err(RDPS_EINVAL,
                             "rdps_sub_create: %s needs a reliable subscriber (opts.reliable = 1): "
                             "an unreliable one joins at the live position and takes part in no "
                             "flow control",
                             opts->from_oldest ? "from_oldest" : "flow_tag");
    if ((rc = rdps__topic_table_get(&ctx->topics, topic, opts ? opts->group : NULL, &t)) < 0)
        return rdps__prepend_err(rc, "rdps_sub_create: ");

    rdps_sub_t *sub = calloc(1, sizeof(*sub));
    if (sub == NULL) {
        rdps__topic_table_put(&ctx->topics, t);
        return rdps__set_err(RDPS_ENOMEM, "rdps_sub_create: out of memory");
    }
    if ((sub->handle = rdps__handle_new(RDPS_HANDLE_SUB, sub)) == 0) {
        free(sub);
        rdps__topic_table_put(&ctx->topics, t);
        return RDPS_ENOMEM; /* the table said why */
    }
    rc = rdps__topic_recv_attach(ctx, t, opts != NULL ? (int)opts->transport : 0);
    if (rc < 0) {
        rdps__handle_release(sub->handle);
        free(sub);
        rdps__topic_table_put(&ctx->topics, t);
        return rdps__prepend_err(rc, "rdps_sub_create: ");
    }
    sub->ctx = ctx;
    sub->topic = t;
    sub->on_message = on_message;
    sub->on_event = opts ? opts->on_event : NULL;
    sub->user = user;
    sub->event_user = opts != NULL && opts->event_user != NULL ? opts->event_user : user;
    sub->reliable = opts != NULL && opts->reliable;
    sub->from_oldest = sub->reliable && opts->from_oldest;
    sub->flow_tag = sub->reliable ? opts->flow_tag : 0; /* unreliable: refused above */
    sub->receiver_id = rdps__ctx_random32(); /* its discovery key; NAK/STATUS use the ctx's id */
    if (sub->reliable) {
        t->reliable_subs++;
        ctx->reliable_subs++;
        if (sub->from_oldest)
            t->oldest_subs++;
    }
    sub->topic_next = t->subs;
    t->subs = sub;
    t->live_subs++;
    rdps__pub_local_subs_changed(ctx, t);
    sub->next = ctx->subs;
    ctx->subs = sub;
    rdps__discovery_sub_added(ctx, sub);
    *out = (rdps_sub_t *)sub->handle;
    return 0;
}

void rdps_sub_destroy(rdps_sub_t *handle)
{
    rdps_sub_t *sub = NULL;
    /* NULL and a subscriber destroyed already (or with its ctx) are no-ops; a subscriber of
     * another thread's ctx is left alone. */
    if (handle == NULL || rdps__sub_enter(handle, &sub) < 0) {
        if (sub != NULL) {
            RDPS_LOG_ERR("rdps_sub_destroy: %s", rdps_last_error_message());
            rdps__api_note("rdps_sub_destroy");
        }
        return;
    }
    if (sub->closed)
        return;
    rdps__handle_release(sub->handle); /* refused from now on, even before the memory goes */
    sub->handle = 0;
    sub->closed = true; /* no more deliveries, even before the memory goes */
    sub->topic->live_subs--;
    rdps__pub_local_subs_changed(sub->ctx, sub->topic);
    if (sub->ctx->callback_depth > 0) {
        /* From a callback: a delivery loop up the stack may hold this subscriber. */
        sub->ctx->closed_endpoints++;
        return;
    }
    rdps__sub_free(sub);
}

void rdps__sub_free(rdps_sub_t *sub)
{
    rdps_ctx_t *ctx = sub->ctx;
    struct rdps_topic *t = sub->topic;

    rdps__handle_release(sub->handle);
    sub->handle = 0;
    if (!sub->closed) {
        sub->closed = true;
        t->live_subs--;
        rdps__pub_local_subs_changed(ctx, t);
    }
    if (sub->reliable) {
        t->reliable_subs--;
        ctx->reliable_subs--;
        if (sub->from_oldest)
            t->oldest_subs--;
    }
    rdps__discovery_sub_removed(ctx, sub);
    for (struct rdps_sub **p = &ctx->subs; *p; p = &(*p)->next) {
        if (*p == sub) {
            *p = sub->next;
            break;
        }
    }
    for (struct rdps_sub **p = &t->subs; *p; p = &(*p)->topic_next) {
        if (*p == sub) {
            *p = sub->topic_next;
            break;
        }
    }
    if (t->subs == NULL)
        rdps__topic_recv_detach(ctx, t);
    rdps__topic_table_put(&ctx->topics, t);
    free(sub);
}

/* A failed join reads as "not ready"; rdps_last_error_message() says why. Unicast (or auto
 * fallen back): ready at once. */
int rdps_sub_ready(const rdps_sub_t *handle)
{
    const struct rdps_dest *dest;
    rdps_sub_t *sub;
    if (rdps__sub_enter(handle, &sub) < 0) {
        rdps__api_note("rdps_sub_ready");
        return 0;
    }
    if (sub->closed)
        return 0;
    const struct rdps_topic *t = sub->topic;
    int state = 0;
    switch (t->recv_path) {
    case RDPS_PATH_GROUP:
    case RDPS_PATH_UNICAST:
        return 1;
    case RDPS_PATH_JOINING: /* the poll that sees it completed has not run yet, perhaps */
        state = t->receive_membership != NULL
                    ? sub->ctx->member_ops->state(t->receive_membership, &dest)
                    : 0;
        if (state < 0 && t->recv_mode == RDPS_TRANSPORT_AUTO)
            return 0; /* auto: the next poll falls back to unicast */
        break;
    case RDPS_PATH_FAILED:
        state = RDPS_ENOTJOINED;
        break;
    default:
        return 0;
    }
    if (state < 0) {
        rdps__set_err(RDPS_ENOTJOINED, "topic '%s': joining its multicast group failed", t->name);
        rdps__api_note("rdps_sub_ready");
    }
    return state == 1;
}

void rdps__sub_counters(const rdps_sub_t *sub, rdps_counters *out)
{
    rdps__ctx_counters(sub->ctx, out);
    /* Per-subscriber figures where they exist, the ctx's for what is not per topic. */
    out->msgs_delivered = sub->counters.msgs_delivered;
    out->bytes_delivered = sub->counters.bytes_delivered;
    out->fragments_received = sub->counters.fragments_received;
    out->gaps = sub->counters.gaps;
}

void rdps__pub_counters(const rdps_pub_t *pub, rdps_counters *out)
{
    rdps__ctx_counters(pub->ctx, out);
    /* The ctx's figures for what is not per publisher, this publisher's for the rest. */
    rdps_counters mine;
    memset(&mine, 0, sizeof(mine));
    rdps__pub_fold_counters(pub, &mine);
    out->msgs_sent = mine.msgs_sent;
    out->bytes_sent = mine.bytes_sent;
    out->frames_sent = mine.frames_sent;
    out->frame_bytes_sent = mine.frame_bytes_sent;
    out->send_backpressure = mine.send_backpressure;
    out->retransmits = mine.retransmits;
    out->heartbeats_sent = mine.heartbeats_sent;
    out->receiver_evictions = mine.receiver_evictions;
    out->naks_suppressed = mine.naks_suppressed;
    out->naks_received = pub->counters.naks_received;
    out->unicast_copies = mine.unicast_copies;
    out->frames_batched = mine.frames_batched;
    out->queue_dropped = mine.queue_dropped;
}

int rdps_sub_counters_sized(const rdps_sub_t *handle, rdps_counters *out, size_t size)
{
    rdps_counters full;
    rdps_sub_t *sub;
    rdps__api_enter();
    int rc = rdps__sub_enter(handle, &sub);
    if (rc < 0)
        memset(&full, 0, sizeof(full));
    else
        rdps__sub_counters(sub, &full);
    return rdps__api_return(rdps__counters_to_caller(rc, &full, out, size), "rdps_sub_counters");
}

int rdps_pub_counters_sized(const rdps_pub_t *handle, rdps_counters *out, size_t size)
{
    rdps_counters full;
    rdps_pub_t *pub;
    rdps__api_enter();
    int rc = rdps__pub_enter(handle, &pub);
    if (rc < 0)
        memset(&full, 0, sizeof(full));
    else
        rdps__pub_counters(pub, &full);
    return rdps__api_return(rdps__counters_to_caller(rc, &full, out, size), "rdps_pub_counters");
}
