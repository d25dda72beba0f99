/* subscriber.c - rdps_sub: joins the topic's group and receives the topic's messages through
 * callbacks. */
#include "ctx_internal.h"

#include <stdlib.h>
#include <string.h>

#include "rdps_error.h"

int rdps_sub_create(rdps_ctx_t *ctx, const char *topic, rdps_msg_cb on_message, void *user,
                    const rdps_sub_opts *opts, rdps_sub_t **out)
{
    struct rdps_topic *t;
    int rc;

    rdps__clear_err();
    if (ctx == NULL || out == NULL || on_message == NULL)
        return rdps__set_err(RDPS_EINVAL, "rdps_sub_create: NULL ctx, out or callback");
    *out = NULL;
    if (opts != NULL && opts->reliable)
        return rdps__set_err(RDPS_ENOTSUP,
                             "rdps_sub_create: reliable subscribing is not available yet");
    if ((rc = rdps__ctx_topic_get(ctx, topic, opts ? opts->group : NULL, &t)) < 0)
        return rdps__prepend_err(rc, "rdps_sub_create: ");

    rdps_sub_t *sub = calloc(1, sizeof(*sub));
    if (sub == NULL) {
        rdps__ctx_topic_put(ctx, t);
        return rdps__set_err(RDPS_ENOMEM, "rdps_sub_create: out of memory");
    }
    if (t->subs == NULL) {
        rc = ctx->member_ops->join(ctx->member_impl, t->group, RDPS_MEMBER_RECEIVE,
                                   &t->receive_membership);
        if (rc < 0) {
            free(sub);
            rdps__ctx_topic_put(ctx, t);
            return rdps__prepend_err(rc, "rdps_sub_create: joining the topic's group: ");
        }
    }
    sub->ctx = ctx;
    sub->topic = t;
    sub->on_message = on_message;
    sub->on_event = opts ? opts->on_event : NULL;
    sub->user = user;
    sub->receiver_id = rdps__ctx_random32();
    sub->topic_next = t->subs;
    t->subs = sub;
    sub->next = ctx->subs;
    ctx->subs = sub;
    rdps__discovery_sub_added(ctx, sub);
    *out = sub;
    return 0;
}

void rdps_sub_destroy(rdps_sub_t *sub)
{
    if (sub == NULL)
        return;
    rdps_ctx_t *ctx = sub->ctx;
    struct rdps_topic *t = sub->topic;

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
    if (t->subs == NULL) {
        ctx->member_ops->leave(ctx->member_impl, t->receive_membership);
        t->receive_membership = NULL;
    }
    rdps__ctx_topic_put(ctx, t);
    free(sub);
}

int rdps_sub_ready(const rdps_sub_t *sub)
{
    const struct rdps_dest *dest;
    if (sub == NULL || sub->topic->receive_membership == NULL)
        return 0;
    return sub->ctx->member_ops->state(sub->topic->receive_membership, &dest) == 1;
}

void rdps_sub_counters(const rdps_sub_t *sub, rdps_counters *out)
{
    rdps_counters whole;
    /* Per-subscriber figures where they exist, the ctx's for what is not per topic. */
    rdps_ctx_counters(sub->ctx, &whole);
    *out = whole;
    out->msgs_delivered = sub->counters.msgs_delivered;
    out->bytes_delivered = sub->counters.bytes_delivered;
    out->fragments_received = sub->counters.fragments_received;
    out->gaps = sub->counters.gaps;
}

void rdps_pub_counters(const rdps_pub_t *pub, rdps_counters *out)
{
    rdps_counters whole;
    rdps_ctx_counters(pub->ctx, &whole);
    *out = whole;
    out->msgs_sent = pub->counters.msgs_sent;
    out->bytes_sent = pub->counters.bytes_sent;
    out->frames_sent = pub->counters.frames_sent;
    out->frame_bytes_sent = pub->counters.frame_bytes_sent;
    out->send_backpressure = pub->counters.send_backpressure;
}
