/* SPDX-License-Identifier: BSD-2-Clause */
/* publisher.c - rdps_pub: fragments messages into DATA frames and posts them to the topic's group.
 */
#include "ctx_internal.h"

#include <stdlib.h>
#include <string.h>

#include "abi.h"
#include "rdps_clock.h"
#include "rdps_error.h"
#include "rdps_frag.h"

/*
 * Options that cannot apply are refused, not ignored: a setting the application believes in
 * must not silently do nothing. Returns 0 or RDPS_EINVAL naming the option and why.
 */
static int check_opts(const rdps_pub_opts *opts)
{
    if (opts == NULL)
        return 0;
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

int rdps_pub_create_sized(rdps_ctx_t *ctx, const char *topic, const rdps_pub_opts *opts,
                          size_t opts_size, rdps_pub_t **out)
{
    rdps__api_enter();
    return rdps__api_return(pub_create_sized(ctx, topic, opts, opts_size, out), "rdps_pub_create");
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
    rc = rdps__topic_send_attach(ctx, t, opts != NULL ? (int)opts->transport : 0);
    if (rc < 0) {
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
    pub->next_seq =
        rdps__ctx_random32(); /* a random start exercises wrap-around and hides history */
    pub->next = ctx->pubs;
    ctx->pubs = pub;
    if (opts != NULL && opts->reliable && (rc = rdps__pub_rel_attach(pub, opts)) < 0) {
        rdps__pub_free(pub);
        return rdps__prepend_err(rc, "rdps_pub_create: ");
    }
    rdps__discovery_pub_added(ctx, pub);
    *out = pub;
    return 0;
}

/*
 * Claims. A publisher lends at most one claim at a time: a reliable publisher's reserved room is
 * the head of its ring, so nothing may be appended before its commit, and unreliable publishers
 * follow the same rule so an application need not know which kind it holds. The claim's opaque_
 * names the publisher and the claim's number: a stale copy (committed or aborted) or another
 * publisher's claim is refused, never sent twice.
 */
static bool claim_outstanding(const rdps_pub_t *pub, const rdps_claim *claim)
{
    return pub->claimed && claim->data != NULL && claim->opaque_[0] == pub->claim_token &&
           claim->opaque_[1] == (uint64_t)(uintptr_t)pub;
}

/* Gives back what the outstanding claim holds (ring room, or the transport buffer). */
static void release_claim(rdps_pub_t *pub)
{
    if (!pub->claimed)
        return;
    pub->claimed = false;
    if (pub->rel != NULL)
        rdps__pub_rel_unclaim(pub);
    else
        pub->ctx->transport->ops->abort(pub->ctx->transport, &pub->claim_buf);
}

void rdps_pub_destroy(rdps_pub_t *pub)
{
    if (pub == NULL || pub->closed)
        return;
    release_claim(pub); /* at once, even when the free waits for the callbacks to return */
    if (pub->ctx->callback_depth > 0) {
        /* From a callback: an iteration up the stack may hold this publisher. */
        pub->closed = true;
        pub->ctx->closed_endpoints++;
        return;
    }
    rdps__pub_free(pub);
}

void rdps__pub_free(rdps_pub_t *pub)
{
    rdps_ctx_t *ctx = pub->ctx;
    struct rdps_topic *t = pub->topic;

    release_claim(pub);
    rdps__discovery_pub_removed(ctx, pub);
    for (struct rdps_pub **p = &ctx->pubs; *p; p = &(*p)->next) {
        if (*p == pub) {
            *p = pub->next;
            break;
        }
    }
    if (--t->pubs == 0)
        rdps__topic_send_detach(ctx, t);
    rdps__pub_fold_counters(pub, &ctx->counters); /* the ctx's totals keep what it sent */
    rdps__pub_rel_detach(pub);
    rdps__topic_table_put(&ctx->topics, t);
    free(pub);
}

/* 1 ready (joined, or unicast), 0 joining, RDPS_ENOTJOINED when the join failed for good. */
static int send_join_state(const rdps_pub_t *pub)
{
    const struct rdps_topic *t = pub->topic;
    if (t->send_ready)
        return 1;
    if (t->send_path != RDPS_PATH_FAILED)
        return 0;
    return rdps__set_err(RDPS_ENOTJOINED, "topic '%s': joining its multicast group failed",
                         t->name);
}

/* A failed join reads as "not ready"; rdps_last_error_message() and rdps_pub_send say why. */
int rdps_pub_ready(const rdps_pub_t *pub)
{
    if (pub == NULL || pub->closed)
        return 0;
    int state = send_join_state(pub);
    if (state < 0)
        rdps__api_note("rdps_pub_ready");
    return state == 1;
}

int rdps_pub_receivers_behind(const rdps_pub_t *pub)
{
    if (pub == NULL || pub->closed || pub->rel == NULL)
        return 0;
    uint32_t behind = rdps__pub_rel_receivers_behind(pub);
    return behind > INT32_MAX ? INT32_MAX : (int)behind;
}

size_t rdps_pub_max_message_size(const rdps_pub_t *pub)
{
    if (pub == NULL || pub->closed)
        return 0;
    return pub->rel != NULL ? rdps__pub_rel_max_message_size(pub) : pub->ctx->cfg.max_message_size;
}

uint32_t rdps_pub_session(const rdps_pub_t *pub)
{
    return pub ? pub->session_id : 0;
}

void rdps__pub_fold_counters(const rdps_pub_t *pub, rdps_counters *into)
{
    into->msgs_sent += pub->counters.msgs_sent;
    into->bytes_sent += pub->counters.bytes_sent;
    into->frames_sent += pub->counters.frames_sent;
    into->frame_bytes_sent += pub->counters.frame_bytes_sent;
    into->send_backpressure += pub->counters.send_backpressure;
    into->retransmits += pub->counters.retransmits;
    into->unicast_copies += pub->counters.unicast_copies;
    if (pub->rel != NULL)
        rdps__pub_rel_counters(pub, into);
}

/* The ctx's totals are the sum over its publishers (rdps_ctx_counters): count once, here. */
static void count_sent(rdps_pub_t *pub, uint32_t frames, uint64_t frame_bytes, size_t msg_len)
{
    pub->counters.msgs_sent++;
    pub->counters.bytes_sent += msg_len;
    pub->counters.frames_sent += frames;
    pub->counters.frame_bytes_sent += frame_bytes;
}

/*
 * Why a publisher cannot send (or claim) now, or 0: RDPS_EINVAL (NULL), RDPS_ECLOSED (destroyed
 * from a callback), RDPS_EBUSY (a claim is outstanding), RDPS_EAGAIN (group still joining:
 * back-pressure), RDPS_ENOTJOINED (join failed).
 */
static int send_refusal(const rdps_pub_t *pub)
{
    if (pub == NULL)
        return rdps__set_err_static(RDPS_EINVAL, "NULL publisher");
    if (pub->closed || pub->ctx->destroy_requested)
        return rdps__set_err_static(RDPS_ECLOSED, pub->closed
                                                      ? "the publisher was destroyed (from a "
                                                        "callback)"
                                                      : "the ctx is being destroyed");
    if (pub->claimed)
        return rdps__set_err(RDPS_EBUSY,
                             "publisher of '%s' has a claim outstanding: rdps_pub_commit or "
                             "rdps_pub_abort it first",
                             pub->topic->name);
    if (pub->topic->send_ready)
        return 0;
    int state = send_join_state(pub);
    return state < 0 ? state
                     : rdps__set_err_static(RDPS_EAGAIN, "not ready: the topic's multicast group "
                                                         "is still being joined (poll until "
                                                         "rdps_pub_ready)");
}

/* The ready case inline (one load each); the rest out of line. */
static inline int send_check(const rdps_pub_t *pub)
{
    if (pub != NULL && pub->topic->send_ready && !pub->closed && !pub->claimed &&
        !pub->ctx->destroy_requested)
        return 0;
    return send_refusal(pub);
}

static int refuse(rdps_pub_t *pub, int rc)
{
    if (rc == RDPS_EAGAIN) {
        pub->counters.send_backpressure++;
        if (!rdps__err_is_set()) /* the transport's pool: says nothing itself */
            rdps__set_err_static(RDPS_EAGAIN, "the send queue is full: every send buffer is in "
                                              "flight (poll to reap completions, then retry)");
    }
    return rc;
}

/*
 * Delivers to subscribers of the same topic in this ctx (the fabric's loopback copy is dropped).
 * Runs user callbacks: returns RDPS_ECLOSED when one of them destroyed the ctx.
 */
static int deliver_to_local_subs(rdps_pub_t *pub, const void *data, size_t len, uint32_t seq,
                                 uint64_t ts, uint32_t frames)
{
    rdps_ctx_t *ctx = pub->ctx;
    if (pub->topic->live_subs == 0)
        return 0; /* also checked by the hot callers, before the call */
    rdps_msg_info info = {
        .topic = pub->topic->name,
        .topic_id = pub->topic->id,
        .session_id = pub->session_id,
        .seq = seq,
        .publisher_ts_ns = ts,
        .fragments = frames,
    };
    rdps__ctx_self_source(ctx, &info.source);
    rdps__ctx_callbacks_enter(ctx);
    rdps__deliver_local(ctx, pub->topic, data, len, &info);
    return rdps__ctx_callbacks_leave(ctx)
               ? rdps__set_err_static(RDPS_ECLOSED, RDPS__TEXT_CTX_DESTROYED)
               : 0;
}

/* Posts what was submitted unless RDPS_SEND_MORE asks to batch it with the next send. */
static int post_unless_more(rdps_ctx_t *ctx, unsigned flags)
{
    if (flags & RDPS_SEND_MORE) {
        ctx->sends_queued = true;
        return 0;
    }
    ctx->sends_queued = false;
    return ctx->transport->ops->flush(ctx->transport);
}

/* fanout_room's work when a datagram has several copies (kept out of the one-copy path). */
__attribute__((noinline)) static int fanout_room_copies(rdps_ctx_t *ctx, uint32_t n)
{
    struct rdps_transport *t = ctx->transport;
    if (rdps__transport_send_room(t) > n)
        return 0;
    int rc = t->ops->flush(t);
    if (rc == 0)
        rc = rdps__ctx_reap_sends(ctx);
    if (rc < 0)
        return rc;
    return rdps__transport_send_room(t) > n ? 0 : RDPS_EAGAIN;
}

/*
 * Room in the send queue for a datagram's n copies (unicast fan-out), before its buffer is
 * claimed: flushes and reaps once when short. 0, or RDPS_EAGAIN (nothing claimed, nothing sent).
 * One copy (the group, or one subscriber) needs nothing more than the claim's own check.
 */
static inline int fanout_room(rdps_ctx_t *ctx, uint32_t n)
{
    return n <= 1 ? 0 : fanout_room_copies(ctx, n);
}

/* A message nobody is to get over the fabric (unicast topic, no subscriber known yet): it takes
 * its sequences and reaches this ctx's own subscribers only. */
__attribute__((noinline)) static int send_nowhere(rdps_pub_t *pub, const void *data, size_t len)
{
    uint64_t ts = rdps__clock_realtime_ns();
    uint32_t payload = pub->ctx->max_datagram - RDPS_FRAME_HEADER_LEN;
    uint32_t frames = len <= payload ? 1u : (uint32_t)((len + payload - 1) / payload);
    uint32_t seq = pub->next_seq;
    pub->next_seq += frames;
    pub->counters.msgs_sent++;
    pub->counters.bytes_sent += len;
    if (pub->topic->live_subs == 0)
        return 0;
    return deliver_to_local_subs(pub, data, len, seq, ts, frames);
}

/*
 * A message that fits one datagram: copied straight behind the header, no fragmenter. The
 * datagram goes to the topic's destinations (one: the group, or the one unicast subscriber;
 * more: unicast copies, room for them made first).
 */
static inline __attribute__((always_inline)) int
send_single(rdps_pub_t *pub, const void *data, size_t len, unsigned flags, bool copies)
{
    rdps_ctx_t *ctx = pub->ctx;
    struct rdps_transport *t = ctx->transport;
    const struct rdps_topic *topic = pub->topic;
    struct rdps_tx_buf buf;
    int rc;
    if (copies && (rc = fanout_room_copies(ctx, topic->ndests)) < 0)
        return refuse(pub, rc);
    rc = t->ops->claim(t, &buf);
    if (rc == RDPS_EAGAIN)
        rc = rdps__ctx_claim(ctx, &buf); /* flushes and reaps first */
    if (rc < 0)
        return refuse(pub, rc);
    uint64_t ts = rdps__clock_realtime_ns();
    uint32_t seq = pub->next_seq++;
    if (len > 0)
        memcpy(buf.data + RDPS_FRAME_HEADER_LEN, data, len);
    /* Session and topic ids are nonzero and len fits (checked by the caller): no validation. */
    uint32_t flen = rdps__frame_put_data_header(buf.data, pub->session_id, pub->topic->id, seq,
                                                (uint32_t)len, 0, (uint32_t)len, ts, 0);
    if ((rc = t->ops->submit(t, &buf, flen, topic->dests, copies ? topic->ndests : 1)) < 0 ||
        (rc = post_unless_more(ctx, flags)) < 0)
        return rc;
    count_sent(pub, 1, flen, len);
    pub->counters.unicast_copies += topic->ndests_unicast;
    if (pub->topic->live_subs == 0)
        return 0;
    return deliver_to_local_subs(pub, data, len, seq, ts, 1);
}

/* send_single with several copies (unicast fan-out), out of the one-copy path. */
__attribute__((noinline)) static int send_single_copies(rdps_pub_t *pub, const void *data,
                                                        size_t len, unsigned flags)
{
    return send_single(pub, data, len, flags, true);
}

static int pub_send_ex(rdps_pub_t *pub, const void *data, size_t len, unsigned flags)
{
    struct rdps_frag it;
    struct rdps_tx_buf buf;

    int rc = send_check(pub);
    if (rc < 0)
        return refuse(pub, rc);
    rdps_ctx_t *ctx = pub->ctx;
    struct rdps_transport *t = ctx->transport;
    const struct rdps_topic *topic = pub->topic;
    if (flags & ~RDPS_SEND_MORE)
        return rdps__set_err(RDPS_EINVAL,
                             "unknown flags 0x%x (RDPS_SEND_MORE, 0x1, is the only "
                             "flag)",
                             flags & ~RDPS_SEND_MORE);
    if (data == NULL && len > 0)
        return rdps__set_err(RDPS_EINVAL, "NULL data with a length of %zu bytes", len);
    if (len > ctx->cfg.max_message_size)
        return rdps__set_err(RDPS_EMSGSIZE, "message of %zu bytes above max_message_size %zu", len,
                             ctx->cfg.max_message_size);
    if (pub->rel != NULL)
        return rdps__pub_rel_send(pub, data, len, flags);
    if (len <= ctx->max_datagram - RDPS_FRAME_HEADER_LEN) {
        if (topic->ndests == 1) /* the group, or one subscriber */
            return send_single(pub, data, len, flags, false);
        if (topic->ndests > 1)
            return send_single_copies(pub, data, len, flags);
    }
    if (topic->ndests == 0)
        return send_nowhere(pub, data, len);
    uint64_t ts = rdps__clock_realtime_ns();
    uint32_t first_seq = pub->next_seq;
    int frames = rdps__frag_init(&it, pub->session_id, pub->topic->id, &pub->next_seq, data, len,
                                 ctx->cfg.max_message_size, ctx->max_datagram, ts, 0);
    if (frames < 0)
        return frames;

    /* Back-pressure before the first frame leaves nothing half-sent: report it. */
    if ((rc = fanout_room(ctx, topic->ndests)) < 0)
        return refuse(pub, rc);
    rc = rdps__ctx_claim(ctx, &buf);
    if (rc < 0)
        return refuse(pub, rc);

    uint64_t frame_bytes = 0;
    uint64_t deadline = 0;
    for (int sent = 0;; sent++) {
        int flen = rdps__frag_next(&it, buf.data, buf.capacity);
        if (flen <= 0) {
            t->ops->abort(t, &buf);
            if (flen < 0)
                return flen;
            break;
        }
        rc = t->ops->submit(t, &buf, (uint32_t)flen, topic->dests, topic->ndests);
        if (rc < 0)
            return rc;
        frame_bytes += (uint64_t)flen;
        if (sent + 1 == frames)
            break;
        /*
         * The message has started: finish it. Claims that fail now mean the
         * pool (or, with unicast copies, the send queue) is in flight; post what
         * is queued and reap completions until a buffer frees up (bounded: a
         * dead port fails the message instead).
         */
        while ((rc = fanout_room(ctx, topic->ndests)) == RDPS_EAGAIN ||
               (rc == 0 && (rc = t->ops->claim(t, &buf)) == RDPS_EAGAIN)) {
            if ((rc = t->ops->flush(t)) < 0)
                return rc;
            if ((rc = rdps__ctx_reap_sends(ctx)) < 0)
                return rc;
            uint64_t now = rdps__clock_monotonic_ns();
            if (deadline == 0)
                deadline = now + 5000000000ull;
            else if (now > deadline)
                return rdps__set_err(RDPS_ETIMEDOUT,
                                     "send buffers did not come back within 5 s mid-message "
                                     "(%d of %d frames sent)",
                                     sent + 1, frames);
        }
        if (rc < 0)
            return rc;
        deadline = 0;
    }
    if ((rc = post_unless_more(ctx, flags)) < 0)
        return rc;
    count_sent(pub, (uint32_t)frames, frame_bytes, len);
    pub->counters.unicast_copies += (uint64_t)topic->ndests_unicast * (uint32_t)frames;
    return deliver_to_local_subs(pub, data, len, first_seq, ts, (uint32_t)frames);
}

static int pub_claim(rdps_pub_t *pub, rdps_claim *claim)
{
    void *data;
    size_t capacity;
    if (claim == NULL)
        return rdps__set_err_static(RDPS_EINVAL, pub == NULL ? "NULL publisher" : "NULL claim");
    int rc = send_check(pub);
    if (rc < 0)
        goto refused;
    if (pub->rel != NULL) {
        if ((rc = rdps__pub_rel_claim(pub, &data, &capacity)) < 0)
            goto failed; /* RDPS_EAGAIN counted there */
    } else {
        struct rdps_transport *t = pub->ctx->transport;
        struct rdps_tx_buf *buf = &pub->claim_buf;
        if ((rc = fanout_room(pub->ctx, pub->topic->ndests)) < 0)
            goto refused;
        rc = t->ops->claim(t, buf);
        if (rc == RDPS_EAGAIN)
            rc = rdps__ctx_claim(pub->ctx, buf); /* flushes and reaps first */
        if (rc < 0)
            goto refused;
        size_t room = buf->capacity - RDPS_FRAME_HEADER_LEN;
        data = buf->data + RDPS_FRAME_HEADER_LEN;
        capacity = room < pub->ctx->cfg.max_message_size ? room : pub->ctx->cfg.max_message_size;
    }
    pub->claimed = true;
    pub->claim_capacity = capacity;
    claim->data = data;
    claim->capacity = capacity;
    claim->opaque_[0] = ++pub->claim_token;
    claim->opaque_[1] = (uint64_t)(uintptr_t)pub;
    return 0;
refused:
    rc = refuse(pub, rc);
failed:
    claim->data = NULL;
    claim->capacity = 0;
    return rc;
}

void rdps_pub_abort(rdps_pub_t *pub, rdps_claim *claim)
{
    if (pub == NULL || claim == NULL || !claim_outstanding(pub, claim))
        return;
    release_claim(pub);
    claim->data = NULL;
}

/* Commit's datagram with no copy (a unicast topic nobody subscribes yet: local subscribers
 * only) or several (unicast fan-out): its buffer is submitted to all of them, or given back. */
__attribute__((noinline)) static int commit_copies(rdps_pub_t *pub, struct rdps_tx_buf *buf,
                                                   uint32_t flen)
{
    struct rdps_transport *t = pub->ctx->transport;
    const struct rdps_topic *topic = pub->topic;
    int rc = topic->ndests == 0 ? 0 : fanout_room(pub->ctx, topic->ndests);
    if (topic->ndests == 0 || rc < 0) {
        t->ops->abort(t, buf);
        return rc;
    }
    rc = t->ops->submit(t, buf, flen, topic->dests, topic->ndests); /* takes the buffer */
    return rc == 0 ? t->ops->flush(t) : rc;
}

static int pub_commit(rdps_pub_t *pub, rdps_claim *claim, size_t len)
{
    if (pub == NULL || claim == NULL)
        return rdps__set_err_static(RDPS_EINVAL, pub == NULL ? "NULL publisher" : "NULL claim");
    rdps_ctx_t *ctx = pub->ctx;
    if (pub->closed || ctx->destroy_requested) {
        /* Destroying the publisher released its claim; a ctx being destroyed releases it here. */
        if (claim_outstanding(pub, claim))
            release_claim(pub);
        claim->data = NULL;
        return send_refusal(pub); /* RDPS_ECLOSED, saying which */
    }
    if (!claim_outstanding(pub, claim))
        return rdps__set_err(RDPS_EINVAL,
                             "rdps_pub_commit: not the publisher's outstanding claim (committed or "
                             "aborted already, another publisher's, or never claimed)");
    /* From here the claim ends, whatever the outcome. */
    claim->data = NULL;
    if (len > pub->claim_capacity) {
        release_claim(pub);
        return rdps__set_err(RDPS_EMSGSIZE,
                             "rdps_pub_commit: %zu bytes above the claim's capacity %zu (one "
                             "datagram's payload, at most max_message_size %zu)",
                             len, pub->claim_capacity, ctx->cfg.max_message_size);
    }
    pub->claimed = false;
    if (pub->rel != NULL)
        return rdps__pub_rel_commit(pub, len);

    struct rdps_transport *t = ctx->transport;
    const struct rdps_topic *topic = pub->topic;
    struct rdps_tx_buf buf = pub->claim_buf;
    uint64_t ts = rdps__clock_realtime_ns();
    uint32_t seq = pub->next_seq++;
    uint32_t flen = rdps__frame_put_data_header(buf.data, pub->session_id, pub->topic->id, seq,
                                                (uint32_t)len, 0, (uint32_t)len, ts, 0);
    int rc;
    if (topic->ndests == 1) {
        rc = t->ops->submit(t, &buf, flen, topic->dests, 1); /* takes the buffer, even on failure */
        if (rc == 0)
            rc = t->ops->flush(t);
    } else {
        rc = commit_copies(pub, &buf, flen);
    }
    if (rc == RDPS_EAGAIN && !rdps__err_is_set())
        return rdps__set_err_static(rc, "the send queue filled up since the claim (sends made "
                                        "meanwhile): the claimed message was not sent");
    if (rc < 0)
        return rc;
    if (topic->ndests > 0) {
        count_sent(pub, 1, flen, len);
        pub->counters.unicast_copies += topic->ndests_unicast;
    } else {
        pub->counters.msgs_sent++;
        pub->counters.bytes_sent += len;
    }
    if (pub->topic->live_subs == 0)
        return 0;
    return deliver_to_local_subs(pub, buf.data + RDPS_FRAME_HEADER_LEN, len, seq, ts, 1);
}

/* ---- entry points: the thread's error message belongs to the call (rdps_error.h) ---- */

int rdps_pub_send(rdps_pub_t *pub, const void *data, size_t len)
{
    rdps__api_enter();
    return rdps__api_return(pub_send_ex(pub, data, len, 0), "rdps_pub_send");
}

int rdps_pub_send_ex(rdps_pub_t *pub, const void *data, size_t len, unsigned flags)
{
    rdps__api_enter();
    return rdps__api_return(pub_send_ex(pub, data, len, flags), "rdps_pub_send_ex");
}

int rdps_pub_claim(rdps_pub_t *pub, rdps_claim *claim)
{
    rdps__api_enter();
    return rdps__api_return(pub_claim(pub, claim), "rdps_pub_claim");
}

int rdps_pub_commit(rdps_pub_t *pub, rdps_claim *claim, size_t len)
{
    rdps__api_enter();
    return rdps__api_return(pub_commit(pub, claim, len), "rdps_pub_commit");
}
