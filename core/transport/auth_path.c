/* SPDX-License-Identifier: BSD-2-Clause */
/* auth_path.c - the authenticating interceptor's data path: each frame sealed for the source its
 * destinations see, each datagram checked (freshness, replay, address, tag) before it goes up
 * (rdps_auth.h). */
#include "auth_internal.h"

#include <pthread.h>
#include <sodium.h>
#include <string.h>

#include "rdps_error.h"

/*
 * fork(): a child that used its parent's prefix and counters would seal different frames under
 * nonces its parent uses too. Every child bumps this (pthread_atfork, registered once), and a
 * transport whose prefix was drawn under another value draws a new one before its next seal: one
 * compare per frame on the send path.
 */
static unsigned long auth_forks;
static int atfork_rc;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void auth_on_fork_child(void)
{
    auth_forks++;
}

static void auth_register_atfork(void)
{
    atfork_rc = pthread_atfork(NULL, NULL, auth_on_fork_child);
}

int rdps__auth_fork_watch(void)
{
    pthread_once(&atfork_once, auth_register_atfork);
    return atfork_rc != 0 ? rdps__set_err(RDPS_ENOMEM, "authentication: pthread_atfork failed") : 0;
}

void rdps__auth_new_prefix(struct auth_transport *at)
{
    randombytes_buf(at->prefix, sizeof(at->prefix));
    at->data_counter = 0;
    at->control_counter = RDPS_AUTH_CONTROL_COUNTER;
    at->prefix_forks = auth_forks;
    rdps__auth_subkey(at->send_subkey, at->keys[at->send_key].key, at->prefix);
}

void rdps__auth_after_fork(struct auth_transport *at)
{
    if (at->prefix_forks != auth_forks)
        rdps__auth_new_prefix(at); /* we are a forked child: the parent goes on with the old one */
}

/* Seals a frame of len bytes (>= header, room for the trailer) for receivers that see `source`,
 * with the next counter. */
static uint32_t seal_next(struct auth_transport *at, uint8_t *frame, uint32_t len,
                          const uint8_t *source)
{
    rdps__auth_after_fork(at);
    uint64_t *counter = frame[RDPS_AUTH_OFF_TYPE] == RDPS_AUTH_FRAME_DATA ? &at->data_counter
                                                                          : &at->control_counter;
    /* 2^63 frames of one kind never happen; if they did, a new prefix keeps nonces unique. */
    if (*counter == RDPS_AUTH_CONTROL_COUNTER - 1 || *counter == UINT64_MAX)
        rdps__auth_new_prefix(at);
    struct rdps_auth_seal_args args = {
        .prefix = at->prefix,
        .counter = (*counter)++,
        .sent_s = (uint32_t)at->clock_s(at->clock_user),
        .source = source,
        .key_id = at->keys[at->send_key].id,
        .encrypt = at->encrypt,
    };
    return rdps__auth_seal(frame, len, at->send_subkey, &args);
}

/* The binding's source bytes for a destination: what its receiver will see as ours. */
static int dest_source(struct auth_transport *at, const struct rdps_dest *dest, uint8_t *out)
{
    struct rdps_source self;
    int rc = rdps__transport_self_source(at->base.inner, dest, &self);
    if (rc < 0)
        return rdps__set_err(rc, "authenticated send: the transport cannot tell the source its "
                                 "receivers see");
    rdps__auth_source_bytes(out, &self);
    return 0;
}

/* One sealed copy of the plain frame for the destinations from `start` on that see `src`, in
 * chunks of 64 (each chunk its own buffer and counter). */
static int send_copy(struct auth_transport *at, const uint8_t *plain, uint32_t len,
                     const struct rdps_dest *const *dests, unsigned ndest, const uint8_t *src)
{
    struct rdps_transport *in = at->base.inner;
    struct rdps_tx_buf copy;
    int rc = in->ops->claim(in, &copy);
    if (rc < 0)
        return rc;
    memcpy(copy.data, plain, len);
    return in->ops->submit(in, &copy, seal_next(at, copy.data, len, src), dests, ndest);
}

static int send_group_copies(struct auth_transport *at, const uint8_t *plain, uint32_t len,
                             const struct rdps_dest *const *dests, unsigned ndest, unsigned start,
                             const uint8_t *src)
{
    const struct rdps_dest *group[64];
    uint8_t other[RDPS_AUTH_SOURCE_LEN];
    unsigned n = 0;
    int rc = 0;
    for (unsigned j = start; j < ndest && rc == 0; j++) {
        if (j > start) {
            if ((rc = dest_source(at, dests[j], other)) < 0)
                break;
            if (memcmp(other, src, sizeof(other)) != 0)
                continue;
        }
        group[n++] = dests[j];
        if (n == 64) {
            rc = send_copy(at, plain, len, group, n, src);
            n = 0;
        }
    }
    if (rc == 0 && n > 0)
        rc = send_copy(at, plain, len, group, n, src);
    return rc;
}

/*
 * The frame in buf goes to destinations that see different sources of ours (InfiniBand: a
 * unicast AH without a GRH and a multicast or routed one in one submit; nothing does that
 * today): one sealed copy per source, each from a buffer of its own, buf staying plain to copy
 * from and then given back. Quadratic in ndest, which only this rare case pays.
 */
static int seal_submit_mixed(struct auth_transport *at, struct rdps_tx_buf *buf, uint32_t len,
                             const struct rdps_dest *const *dests, unsigned ndest)
{
    struct rdps_transport *in = at->base.inner;
    uint8_t src[RDPS_AUTH_SOURCE_LEN], other[RDPS_AUTH_SOURCE_LEN];
    int rc = 0;
    for (unsigned i = 0; i < ndest && rc == 0; i++) {
        if ((rc = dest_source(at, dests[i], src)) < 0)
            break;
        bool sent = false; /* with the group of an earlier destination */
        for (unsigned j = 0; j < i && !sent && rc == 0; j++)
            if ((rc = dest_source(at, dests[j], other)) == 0)
                sent = memcmp(src, other, sizeof(src)) == 0;
        if (!sent && rc == 0)
            rc = send_group_copies(at, buf->data, len, dests, ndest, i, src);
    }
    in->ops->abort(in, buf);
    return rc;
}

/* One seal when every destination sees one source (always but on InfiniBand, above). */
int rdps__auth_seal_submit(struct auth_transport *at, struct rdps_tx_buf *buf, uint32_t len,
                           const struct rdps_dest *const *dests, unsigned ndest)
{
    struct rdps_transport *in = at->base.inner;
    uint8_t first[RDPS_AUTH_SOURCE_LEN], other[RDPS_AUTH_SOURCE_LEN];
    if (ndest == 0 || dests == NULL) /* the inner transport refuses it with its own words */
        return in->ops->submit(in, buf, len, dests, ndest);
    int rc = dest_source(at, dests[0], first);
    if (rc < 0) {
        in->ops->abort(in, buf);
        return rc;
    }
    for (unsigned i = 1; i < ndest; i++) {
        if ((rc = dest_source(at, dests[i], other)) < 0) {
            in->ops->abort(in, buf);
            return rc;
        }
        if (memcmp(first, other, sizeof(first)) != 0)
            return seal_submit_mixed(at, buf, len, dests, ndest);
    }
    return in->ops->submit(in, buf, seal_next(at, buf->data, len, first), dests, ndest);
}

/*
 * Verifies (and decrypts) one received datagram in place; true when it goes up, as a plain
 * frame. Cheap refusals first (no crypto): too short, keyless, unknown key, stale, a known
 * sender's prefix from another address or a counter its window has seen. Nothing in the table
 * changes unless the tag verified under the address the datagram came from.
 */
bool rdps__auth_accept(struct auth_transport *at, struct rdps_rx_datagram *d, uint32_t now_s)
{
    /* The receive buffer is the transport's own writable memory, lent until rx_release. */
    uint8_t *f = (uint8_t *)(uintptr_t)d->data;
    uint32_t len = d->len;
    if (len < RDPS_AUTH_HEADER_LEN) {
        at->stats.short_frames++;
        return false;
    }
    uint32_t word = rdps__auth_word(f);
    if (word == 0) {
        at->stats.unsigned_frames++;
        return false;
    }
    if (len < RDPS_AUTH_HEADER_LEN + RDPS_AUTH_TRAILER_LEN) {
        at->stats.short_frames++;
        return false;
    }
    const struct auth_key *key = (word & ~(RDPS_AUTH_WORD_KEY_MASK | RDPS_AUTH_WORD_ENCRYPTED)) != 0
                                     ? NULL
                                     : find_key(at, word & RDPS_AUTH_WORD_KEY_MASK);
    if (key == NULL) {
        at->stats.unknown_key++;
        return false;
    }
    /* Serial arithmetic on the 32-bit seconds: a frame from a clock ahead of ours is as stale. */
    int32_t age = (int32_t)(now_s - rdps__auth_sent_s(f, len));
    if (age > (int32_t)at->max_age_s || age < -(int32_t)at->max_age_s) {
        at->stats.stale++;
        return false;
    }
    const uint8_t *prefix = rdps__auth_trailer(f, len);
    uint64_t counter = rdps__auth_counter(f, len);
    bool data = f[RDPS_AUTH_OFF_TYPE] == RDPS_AUTH_FRAME_DATA;
    uint8_t source[RDPS_AUTH_SOURCE_LEN];
    rdps__auth_rx_source_bytes(source, d);
    struct auth_sender *s = rdps__auth_senders_find(&at->senders, prefix);
    if (s != NULL &&
        (!rdps__auth_sender_source_ok(s, source) ||
         !(data ? rdps__auth_window_check(&s->data, s->data_bits, RDPS_AUTH_DATA_WORDS, counter)
                : rdps__auth_window_check(&s->control, s->control_bits, RDPS_AUTH_CONTROL_WORDS,
                                          counter)))) {
        at->stats.replayed++;
        return false;
    }
    uint8_t fresh[RDPS_AUTH_KEY_LEN];
    const uint8_t *subkey;
    bool derived = s == NULL || s->key_id != key->id;
    if (derived) {
        rdps__auth_subkey(fresh, key->key, prefix);
        subkey = fresh;
    } else {
        subkey = s->subkey;
    }
    if (rdps__auth_open(f, len, subkey, source) != 0) {
        at->stats.bad_tag++;
        if (derived)
            sodium_memzero(fresh, sizeof(fresh));
        return false;
    }
    if (s == NULL)
        s = rdps__auth_senders_insert(&at->senders, prefix);
    if (derived) {
        memcpy(s->subkey, fresh, sizeof(fresh));
        s->key_id = key->id;
        sodium_memzero(fresh, sizeof(fresh));
    }
    rdps__auth_sender_set_source(s, source);
    s->heard_s = now_s;
    rdps__auth_senders_touch(&at->senders, s);
    if (!(data ? rdps__auth_window_update(&s->data, s->data_bits, RDPS_AUTH_DATA_WORDS, counter)
               : rdps__auth_window_update(&s->control, s->control_bits, RDPS_AUTH_CONTROL_WORDS,
                                          counter))) {
        at->stats.replayed++;
        return false;
    }
    f[RDPS_AUTH_OFF_WORD] = f[RDPS_AUTH_OFF_WORD + 1] = f[RDPS_AUTH_OFF_WORD + 2] =
        f[RDPS_AUTH_OFF_WORD + 3] = 0;
    d->len = len - RDPS_AUTH_TRAILER_LEN;
    return true;
}
