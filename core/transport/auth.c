/* SPDX-License-Identifier: BSD-2-Clause */
/* auth.c - authenticated domains: the interceptor transport (create, keys, stats, the ops that
 * pass through); its data path, sealing and verifying, is auth_path.c (rdps_auth.h). */
#include "auth_internal.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rdps_error.h"

static const struct rdps_transport_ops auth_ops;

/* The coarse clock: read in the vDSO without a timer read (seconds are all freshness needs). */
static uint64_t realtime_s(void *user)
{
    (void)user;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME_COARSE, &ts);
    return (uint64_t)ts.tv_sec;
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
    return rdps__auth_seal_submit(at, buf, len, dests, ndest);
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
        if (!rdps__auth_accept(at, &rx[i], now_s)) {
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
    return rdps__tx_mem_list_add(t, &to_auth(t)->regions, addr, len, out);
}

static int auth_mem_deregister(struct rdps_transport *t, struct rdps_tx_mem *m)
{
    if (m == NULL || m->owner != t || !rdps__tx_mem_list_remove(&to_auth(t)->regions, m))
        return rdps__set_err(RDPS_EINVAL, "mem_deregister: region not registered here");
    return 0;
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
    rc = rdps__auth_seal_submit(at, &buf, len, dests, ndest);
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
    if (rdps__auth_fork_watch() < 0)
        return RDPS_ENOMEM;
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
    rdps__auth_new_prefix(at);
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
    rdps__auth_after_fork(at);
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
    .submit_gather = rdps__transport_gather_by_copy, /* sealing reads the whole frame: a copy */
};
