/* SPDX-License-Identifier: BSD-2-Clause */
/* auth.c - authenticated domains: the interceptor transport that seals every frame it sends for
 * the address its receivers see, and verifies, checks for freshness and replays every frame it
 * receives before anything above sees it (rdps_auth.h). */
#include "rdps_auth.h"

#include <pthread.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "auth_senders.h"
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

struct auth_key {
    uint32_t id; /* 0: empty */
    uint8_t key[RDPS_AUTH_KEY_LEN];
};

/* base.inner is the wrapped transport. */
struct auth_transport {
    struct rdps_transport base;
    struct auth_key keys[2];
    unsigned send_key; /* index into keys[] */
    bool encrypt;
    /* Sending: our prefix (drawn in the process generation auth_forks had then), its subkey
     * under the key in use, the two counters. */
    uint8_t prefix[RDPS_AUTH_PREFIX_LEN];
    uint8_t send_subkey[RDPS_AUTH_KEY_LEN];
    uint64_t data_counter, control_counter;
    unsigned long prefix_forks;
    /* Freshness: the wall clock, and how far a frame's send time may be from it. */
    uint64_t (*clock_s)(void *user);
    void *clock_user;
    uint32_t max_age_s;
    struct auth_senders senders;
    struct rdps_tx_mem *regions;
    struct rdps_auth_stats stats;
};

static const struct rdps_transport_ops auth_ops;

static struct auth_transport *to_auth(struct rdps_transport *t)
{
    return (struct auth_transport *)t;
}

/* The coarse clock: read in the vDSO without a timer read (seconds are all freshness needs). */
static uint64_t realtime_s(void *user)
{
    (void)user;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME_COARSE, &ts);
    return (uint64_t)ts.tv_sec;
}

static const struct auth_key *find_key(const struct auth_transport *at, uint32_t id)
{
    for (unsigned i = 0; i < 2; i++)
        if (at->keys[i].id == id && id != 0)
            return &at->keys[i];
    return NULL;
}

/* A fresh sending identity: a new random prefix (the counters start again under it). */
static void new_prefix(struct auth_transport *at)
{
    randombytes_buf(at->prefix, sizeof(at->prefix));
    at->data_counter = 0;
    at->control_counter = RDPS_AUTH_CONTROL_COUNTER;
    at->prefix_forks = auth_forks;
    rdps__auth_subkey(at->send_subkey, at->keys[at->send_key].key, at->prefix);
}

/* Seals a frame of len bytes (>= header, room for the trailer) for receivers that see `source`,
 * with the next counter. */
static uint32_t seal_next(struct auth_transport *at, uint8_t *frame, uint32_t len,
                          const uint8_t *source)
{
    if (at->prefix_forks != auth_forks)
        new_prefix(at); /* we are a forked child: the parent goes on with the old prefix */
    uint64_t *counter = frame[RDPS_AUTH_OFF_TYPE] == RDPS_AUTH_FRAME_DATA ? &at->data_counter
                                                                          : &at->control_counter;
    /* 2^63 frames of one kind never happen; if they did, a new prefix keeps nonces unique. */
    if (*counter == RDPS_AUTH_CONTROL_COUNTER - 1 || *counter == UINT64_MAX)
        new_prefix(at);
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

/* Seals the plain frame in buf for its destinations and hands it to the inner transport (which
 * owns buf from here, on failure too). One seal when every destination sees one source. */
static int seal_submit(struct auth_transport *at, struct rdps_tx_buf *buf, uint32_t len,
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
static bool accept_datagram(struct auth_transport *at, struct rdps_rx_datagram *d, uint32_t now_s)
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

static uint32_t auth_max_payload(struct rdps_transport *t)
{
    struct rdps_transport *in = t->inner;
    uint32_t inner = in->ops->max_payload(in);
    return inner > RDPS_AUTH_TRAILER_LEN ? inner - RDPS_AUTH_TRAILER_LEN : 0;
}

static int auth_claim(struct rdps_transport *t, struct rdps_tx_buf *buf)
{
    struct rdps_transport *in = t->inner;
    int rc = in->ops->claim(in, buf);
    if (rc == 0)
        buf->capacity -= RDPS_AUTH_TRAILER_LEN; /* the trailer's room stays ours */
    return rc;
}

static void auth_abort(struct rdps_transport *t, struct rdps_tx_buf *buf)
{
    struct rdps_transport *in = t->inner;
    buf->capacity += RDPS_AUTH_TRAILER_LEN;
    in->ops->abort(in, buf);
}

static int auth_submit(struct rdps_transport *t, struct rdps_tx_buf *buf, uint32_t len,
                       const struct rdps_dest *const *dests, unsigned ndest)
{
    struct auth_transport *at = to_auth(t);
    struct rdps_transport *in = t->inner;
    uint32_t room = buf->capacity;
    buf->capacity += RDPS_AUTH_TRAILER_LEN;
    if (len > room || len < RDPS_AUTH_HEADER_LEN) {
        in->ops->abort(in, buf);
        return rdps__set_err(len > room ? RDPS_EMSGSIZE : RDPS_EINVAL,
                             "authenticated send: a frame of %u bytes (%u..%u)", len,
                             RDPS_AUTH_HEADER_LEN, room);
    }
    return seal_submit(at, buf, len, dests, ndest);
}

static int auth_flush(struct rdps_transport *t)
{
    return t->inner->ops->flush(t->inner);
}

static int auth_poll(struct rdps_transport *t, struct rdps_rx_datagram *rx, int max)
{
    struct auth_transport *at = to_auth(t);
    struct rdps_transport *in = t->inner;
    int n = in->ops->poll(in, rx, max);
    if (n <= 0)
        return n;
    uint32_t now_s = (uint32_t)at->clock_s(at->clock_user); /* once per batch */
    int kept = 0;
    for (int i = 0; i < n; i++) {
        if (!accept_datagram(at, &rx[i], now_s)) {
            in->ops->rx_release(in, &rx[i], 1);
            continue;
        }
        if (kept != i)
            rx[kept] = rx[i];
        kept++;
    }
    return kept;
}

static void auth_rx_release(struct rdps_transport *t, struct rdps_rx_datagram *rx, int count)
{
    t->inner->ops->rx_release(t->inner, rx, count);
}

static int auth_reply_dest(struct rdps_transport *t, const struct rdps_rx_datagram *rx,
                           const struct rdps_dest **out)
{
    return t->inner->ops->reply_dest(t->inner, rx, out);
}

static int auth_source_dest(struct rdps_transport *t, const struct rdps_source *src,
                            const struct rdps_dest **out)
{
    return rdps__transport_source_dest(t->inner, src, out);
}

static int auth_dest_acquire(struct rdps_transport *t, const struct rdps_source *src,
                             const struct rdps_dest **out)
{
    return rdps__transport_dest_acquire(t->inner, src, out);
}

static void auth_dest_release(struct rdps_transport *t, const struct rdps_dest *dest)
{
    rdps__transport_dest_release(t->inner, dest);
}

static uint32_t auth_send_room(struct rdps_transport *t)
{
    return rdps__transport_send_room(t->inner);
}

/* Regions are only read here, into sealed copies: nothing to register with the device. */
static int auth_mem_register(struct rdps_transport *t, void *addr, size_t len,
                             struct rdps_tx_mem **out)
{
    struct auth_transport *at = to_auth(t);
    if (out == NULL || addr == NULL || len == 0)
        return rdps__set_err(RDPS_EINVAL, "mem_register: no memory or no out pointer");
    struct rdps_tx_mem *m = calloc(1, sizeof(*m));
    if (m == NULL)
        return rdps__set_err(RDPS_ENOMEM, "mem_register: out of memory");
    m->addr = addr;
    m->len = len;
    m->owner = t;
    m->next = at->regions;
    at->regions = m;
    *out = m;
    return 0;
}

static int auth_mem_deregister(struct rdps_transport *t, struct rdps_tx_mem *m)
{
    struct auth_transport *at = to_auth(t);
    if (m == NULL || m->owner != t)
        return rdps__set_err(RDPS_EINVAL, "mem_deregister: region not registered here");
    for (struct rdps_tx_mem **link = &at->regions; *link != NULL; link = &(*link)->next) {
        if (*link == m) {
            *link = m->next;
            free(m);
            return 0;
        }
    }
    return rdps__set_err(RDPS_EINVAL, "mem_deregister: region not registered here");
}

static int auth_submit_mem(struct rdps_transport *t, struct rdps_tx_mem *m, size_t offset,
                           uint32_t len, const struct rdps_dest *const *dests, unsigned ndest,
                           uint64_t cookie)
{
    struct auth_transport *at = to_auth(t);
    struct rdps_transport *in = t->inner;
    if (m == NULL || m->owner != t)
        return rdps__set_err(RDPS_EINVAL, "submit_mem: region not registered with this transport");
    if (len > auth_max_payload(t))
        return rdps__set_err(RDPS_EMSGSIZE, "submit_mem: %u bytes above the datagram size %u", len,
                             auth_max_payload(t));
    if (offset > m->len || len > m->len - offset || len < RDPS_AUTH_HEADER_LEN)
        return rdps__set_err(RDPS_EINVAL, "submit_mem: %u bytes at %zu outside the %zu-byte region",
                             len, offset, m->len);
    if (cookie <= m->submitted)
        return rdps__set_err(RDPS_EINVAL, "submit_mem: cookie %llu not above the last (%llu)",
                             (unsigned long long)cookie, (unsigned long long)m->submitted);
    if (ndest == 0 || dests == NULL)
        return rdps__set_err(RDPS_EINVAL, "submit_mem: no destination");
    struct rdps_tx_buf buf;
    int rc = in->ops->claim(in, &buf);
    if (rc < 0)
        return rc; /* RDPS_EAGAIN: nothing queued, as the contract wants */
    memcpy(buf.data, m->addr + offset, len);
    rc = seal_submit(at, &buf, len, dests, ndest);
    if (rc == 0)
        rdps__tx_mem_skip(m, cookie); /* the copy is sent: the region is free at once */
    return rc;
}

static int auth_event_fd(struct rdps_transport *t)
{
    return t->inner->ops->event_fd(t->inner);
}

static int auth_arm(struct rdps_transport *t)
{
    return t->inner->ops->arm(t->inner);
}

static int auth_next_event(struct rdps_transport *t, enum rdps_transport_event_type *type)
{
    return t->inner->ops->next_event(t->inner, type);
}

static void auth_get_stats(const struct rdps_transport *t, struct rdps_transport_stats *out)
{
    const struct auth_transport *at = (const struct auth_transport *)t;
    t->inner->ops->get_stats(t->inner, out);
    out->auth_unsigned += at->stats.unsigned_frames;
    out->auth_short += at->stats.short_frames;
    out->auth_unknown_key += at->stats.unknown_key;
    out->auth_bad_tag += at->stats.bad_tag;
    out->auth_replayed += at->stats.replayed;
    out->auth_senders_evicted += at->senders.evicted;
    out->auth_stale += at->stats.stale;
}

static void auth_destroy(struct rdps_transport *t)
{
    if (t == NULL)
        return;
    struct auth_transport *at = to_auth(t);
    while (at->regions != NULL) {
        struct rdps_tx_mem *next = at->regions->next;
        free(at->regions);
        at->regions = next;
    }
    rdps__auth_senders_fini(&at->senders);
    if (t->inner != NULL)
        t->inner->ops->destroy(t->inner);
    sodium_memzero(at, sizeof(*at));
    free(at);
}

int rdps__auth_transport_create(struct rdps_transport *inner, const struct rdps_auth_config *cfg,
                                struct rdps_transport **out)
{
    if (inner == NULL || cfg == NULL || out == NULL || cfg->key == NULL)
        return rdps__set_err(RDPS_EINVAL, "authentication: no transport or no key");
    if (cfg->key_id == 0 || cfg->key_id > RDPS_AUTH_KEY_ID_MAX)
        return rdps__set_err(RDPS_EINVAL, "authentication: key id %u outside 1..%u", cfg->key_id,
                             RDPS_AUTH_KEY_ID_MAX);
    uint32_t cap = cfg->max_senders != 0 ? cfg->max_senders : RDPS_AUTH_DEFAULT_SENDERS;
    if (cap > (1u << 20))
        return rdps__set_err(RDPS_EINVAL, "authentication: %u senders above 2^20", cap);
    uint32_t max_age_ms = cfg->max_age_ms != 0 ? cfg->max_age_ms : RDPS_AUTH_DEFAULT_MAX_AGE_MS;
    if (max_age_ms < RDPS_AUTH_MIN_MAX_AGE_MS || max_age_ms > RDPS_AUTH_MAX_MAX_AGE_MS)
        return rdps__set_err(RDPS_EINVAL, "authentication: a frame age of %u ms outside %u..%u",
                             max_age_ms, RDPS_AUTH_MIN_MAX_AGE_MS, RDPS_AUTH_MAX_MAX_AGE_MS);
    struct rdps_source self;
    if (rdps__transport_self_source(inner, NULL, &self) < 0)
        return rdps__set_err(RDPS_ENOTSUP,
                             "authentication: the %s transport does not report the source its "
                             "receivers see, which every keyed frame is bound to",
                             rdps__transport_innermost(inner)->ops->name);
    if (sodium_init() < 0)
        return rdps__set_err(RDPS_ENOTSUP, "authentication: libsodium failed to initialize");
    pthread_once(&atfork_once, auth_register_atfork);
    if (atfork_rc != 0)
        return rdps__set_err(RDPS_ENOMEM, "authentication: pthread_atfork failed");
    struct auth_transport *at = calloc(1, sizeof(*at));
    if (at == NULL)
        return rdps__set_err(RDPS_ENOMEM, "authentication: out of memory");
    int rc = rdps__auth_senders_init(&at->senders, cap);
    if (rc < 0) {
        free(at);
        return rc;
    }
    at->base.ops = &auth_ops;
    at->base.inner = inner;
    at->encrypt = cfg->encrypt;
    at->max_age_s = (max_age_ms + 999) / 1000;
    at->clock_s = cfg->clock_s != NULL ? cfg->clock_s : realtime_s;
    at->clock_user = cfg->clock_user;
    at->keys[0].id = cfg->key_id;
    memcpy(at->keys[0].key, cfg->key, RDPS_AUTH_KEY_LEN);
    at->send_key = 0;
    new_prefix(at);
    *out = &at->base;
    return 0;
}

bool rdps__auth_transport_is(const struct rdps_transport *t)
{
    return t != NULL && t->ops == &auth_ops;
}

int rdps__auth_key_add(struct rdps_transport *t, const uint8_t key[RDPS_AUTH_KEY_LEN],
                       uint32_t key_id)
{
    if (!rdps__auth_transport_is(t) || key == NULL)
        return rdps__set_err(RDPS_EINVAL, "key add: not an authenticated context, or no key");
    struct auth_transport *at = to_auth(t);
    if (key_id == 0 || key_id > RDPS_AUTH_KEY_ID_MAX)
        return rdps__set_err(RDPS_EINVAL, "key add: key id %u outside 1..%u", key_id,
                             RDPS_AUTH_KEY_ID_MAX);
    if (find_key(at, key_id) != NULL)
        return rdps__set_err(RDPS_EEXIST, "key add: key id %u is installed already", key_id);
    for (unsigned i = 0; i < 2; i++) {
        if (at->keys[i].id == 0) {
            at->keys[i].id = key_id;
            memcpy(at->keys[i].key, key, RDPS_AUTH_KEY_LEN);
            return 0;
        }
    }
    return rdps__set_err(RDPS_ENOSPC, "key add: two keys are installed (%u, %u): remove one first",
                         at->keys[0].id, at->keys[1].id);
}

int rdps__auth_key_use(struct rdps_transport *t, uint32_t key_id)
{
    if (!rdps__auth_transport_is(t))
        return rdps__set_err(RDPS_EINVAL, "key use: not an authenticated context");
    struct auth_transport *at = to_auth(t);
    const struct auth_key *k = find_key(at, key_id);
    if (k == NULL)
        return rdps__set_err(RDPS_ENOENT, "key use: key id %u is not installed", key_id);
    at->send_key = (unsigned)(k - at->keys);
    rdps__auth_subkey(at->send_subkey, k->key, at->prefix);
    return 0;
}

int rdps__auth_key_remove(struct rdps_transport *t, uint32_t key_id)
{
    if (!rdps__auth_transport_is(t))
        return rdps__set_err(RDPS_EINVAL, "key remove: not an authenticated context");
    struct auth_transport *at = to_auth(t);
    struct auth_key *k = (struct auth_key *)(uintptr_t)find_key(at, key_id);
    if (k == NULL)
        return rdps__set_err(RDPS_ENOENT, "key remove: key id %u is not installed", key_id);
    if (k == &at->keys[at->send_key])
        return rdps__set_err(RDPS_EBUSY, "key remove: key id %u is the one frames are sent with",
                             key_id);
    sodium_memzero(k, sizeof(*k));
    rdps__auth_senders_forget_key(&at->senders, key_id);
    return 0;
}

uint32_t rdps__auth_key_in_use(const struct rdps_transport *t)
{
    if (!rdps__auth_transport_is(t))
        return 0;
    const struct auth_transport *at = (const struct auth_transport *)t;
    return at->keys[at->send_key].id;
}

void rdps__auth_get_stats(const struct rdps_transport *t, struct rdps_auth_stats *out)
{
    memset(out, 0, sizeof(*out));
    if (!rdps__auth_transport_is(t))
        return;
    const struct auth_transport *at = (const struct auth_transport *)t;
    *out = at->stats;
    out->senders_evicted = at->senders.evicted;
}

uint32_t rdps__auth_sender_count(const struct rdps_transport *t)
{
    return rdps__auth_transport_is(t) ? ((const struct auth_transport *)t)->senders.used : 0;
}

void rdps__auth_send_prefix(struct rdps_transport *t, uint8_t out[RDPS_AUTH_PREFIX_LEN])
{
    memset(out, 0, RDPS_AUTH_PREFIX_LEN);
    if (!rdps__auth_transport_is(t))
        return;
    struct auth_transport *at = to_auth(t);
    if (at->prefix_forks != auth_forks)
        new_prefix(at);
    memcpy(out, at->prefix, RDPS_AUTH_PREFIX_LEN);
}

static const struct rdps_transport_ops auth_ops = {
    .name = "auth",
    .max_payload = auth_max_payload,
    .claim = auth_claim,
    .abort = auth_abort,
    .submit = auth_submit,
    .flush = auth_flush,
    .poll = auth_poll,
    .rx_release = auth_rx_release,
    .reply_dest = auth_reply_dest,
    .source_dest = auth_source_dest,
    .dest_acquire = auth_dest_acquire,
    .dest_release = auth_dest_release,
    .send_room = auth_send_room,
    .mem_register = auth_mem_register,
    .mem_deregister = auth_mem_deregister,
    .submit_mem = auth_submit_mem,
    .event_fd = auth_event_fd,
    .arm = auth_arm,
    .next_event = auth_next_event,
    .get_stats = auth_get_stats,
    .destroy = auth_destroy,
};
