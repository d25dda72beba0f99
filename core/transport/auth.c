/* SPDX-License-Identifier: BSD-2-Clause */
/* auth.c - authenticated domains: sealing and verifying frames (libsodium XChaCha20-Poly1305),
 * the per-sender anti-replay table, and the interceptor transport (rdps_auth.h). */
#include "rdps_auth.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "rdps_error.h"

_Static_assert(RDPS_AUTH_TRAILER_LEN == 40, "the trailer is 40 bytes on the wire");
_Static_assert(RDPS_AUTH_KEY_LEN == crypto_aead_chacha20poly1305_ietf_KEYBYTES, "key size");
_Static_assert(RDPS_AUTH_TAG_LEN == crypto_aead_chacha20poly1305_ietf_ABYTES, "tag size");
_Static_assert(RDPS_AUTH_PREFIX_LEN + RDPS_AUTH_COUNTER_LEN ==
                   crypto_aead_xchacha20poly1305_ietf_NPUBBYTES,
               "prefix || counter is XChaCha20's nonce");
_Static_assert(RDPS_AUTH_PREFIX_LEN == crypto_core_hchacha20_INPUTBYTES, "HChaCha20 input");

static void put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* ---- the frame transform ------------------------------------------------------------------- */

void rdps__auth_subkey(uint8_t subkey[RDPS_AUTH_KEY_LEN], const uint8_t key[RDPS_AUTH_KEY_LEN],
                       const uint8_t prefix[RDPS_AUTH_PREFIX_LEN])
{
    crypto_core_hchacha20(subkey, prefix, key, NULL);
}

/* ChaCha20-Poly1305-IETF's nonce under the subkey: 4 zero bytes, then the counter (XChaCha20). */
static void inner_nonce(uint8_t npub[crypto_aead_chacha20poly1305_ietf_NPUBBYTES],
                        const uint8_t *counter_le)
{
    memset(npub, 0, 4);
    memcpy(npub + 4, counter_le, RDPS_AUTH_COUNTER_LEN);
}

uint32_t rdps__auth_seal(uint8_t *frame, uint32_t len, const uint8_t subkey[RDPS_AUTH_KEY_LEN],
                         const uint8_t prefix[RDPS_AUTH_PREFIX_LEN], uint64_t counter,
                         uint32_t key_id, bool encrypt)
{
    uint8_t npub[crypto_aead_chacha20poly1305_ietf_NPUBBYTES];
    uint8_t *trailer = frame + len;
    uint8_t *tag = trailer + RDPS_AUTH_PREFIX_LEN + RDPS_AUTH_COUNTER_LEN;
    put_le32(frame + RDPS_AUTH_OFF_WORD,
             (key_id & RDPS_AUTH_WORD_KEY_MASK) | (encrypt ? RDPS_AUTH_WORD_ENCRYPTED : 0));
    memcpy(trailer, prefix, RDPS_AUTH_PREFIX_LEN);
    put_le64(trailer + RDPS_AUTH_PREFIX_LEN, counter);
    inner_nonce(npub, trailer + RDPS_AUTH_PREFIX_LEN);
    if (encrypt)
        crypto_aead_chacha20poly1305_ietf_encrypt_detached(
            frame + RDPS_AUTH_HEADER_LEN, tag, NULL, frame + RDPS_AUTH_HEADER_LEN,
            len - RDPS_AUTH_HEADER_LEN, frame, RDPS_AUTH_HEADER_LEN, NULL, npub, subkey);
    else
        /* An empty message (libsodium wants non-NULL pointers even for 0 bytes). */
        crypto_aead_chacha20poly1305_ietf_encrypt_detached(trailer, tag, NULL, trailer, 0, frame,
                                                           len, NULL, npub, subkey);
    return len + RDPS_AUTH_TRAILER_LEN;
}

int rdps__auth_open(uint8_t *frame, uint32_t len, const uint8_t subkey[RDPS_AUTH_KEY_LEN])
{
    uint8_t npub[crypto_aead_chacha20poly1305_ietf_NPUBBYTES];
    uint32_t body = len - RDPS_AUTH_TRAILER_LEN;
    const uint8_t *trailer = frame + body;
    const uint8_t *tag = trailer + RDPS_AUTH_PREFIX_LEN + RDPS_AUTH_COUNTER_LEN;
    inner_nonce(npub, trailer + RDPS_AUTH_PREFIX_LEN);
    int rc;
    if (get_le32(frame + RDPS_AUTH_OFF_WORD) & RDPS_AUTH_WORD_ENCRYPTED)
        /* Verifies the tag before it decrypts anything. */
        rc = crypto_aead_chacha20poly1305_ietf_decrypt_detached(
            frame + RDPS_AUTH_HEADER_LEN, NULL, frame + RDPS_AUTH_HEADER_LEN,
            body - RDPS_AUTH_HEADER_LEN, tag, frame, RDPS_AUTH_HEADER_LEN, npub, subkey);
    else
        /* m NULL: verify only; c is 0 bytes (a non-NULL pointer for libsodium). */
        rc = crypto_aead_chacha20poly1305_ietf_decrypt_detached(NULL, NULL, trailer, 0, tag, frame,
                                                                body, npub, subkey);
    return rc == 0 ? 0 : -1;
}

uint64_t rdps__auth_counter(const uint8_t *frame, uint32_t len)
{
    return get_le64(rdps__auth_trailer(frame, len) + RDPS_AUTH_PREFIX_LEN);
}

uint32_t rdps__auth_word(const uint8_t *frame)
{
    return get_le32(frame + RDPS_AUTH_OFF_WORD);
}

/* ---- anti-replay window -------------------------------------------------------------------- */

bool rdps__auth_window_check(const struct rdps_auth_window *w, uint64_t counter)
{
    if (!w->used || counter > w->top)
        return true;
    if (w->top - counter >= RDPS_AUTH_REPLAY_WINDOW)
        return false;
    uint64_t word = w->bits[(counter >> 6) % RDPS_AUTH_REPLAY_WORDS];
    return ((word >> (counter & 63)) & 1u) == 0;
}

bool rdps__auth_window_update(struct rdps_auth_window *w, uint64_t counter)
{
    if (!rdps__auth_window_check(w, counter))
        return false;
    if (!w->used) {
        memset(w->bits, 0, sizeof(w->bits));
        w->top = counter;
        w->used = true;
    } else if (counter > w->top) {
        /* Words between the old top's and the new one's start empty (RFC 6479). */
        uint64_t from = w->top >> 6, to = counter >> 6;
        uint64_t steps = to - from < RDPS_AUTH_REPLAY_WORDS ? to - from : RDPS_AUTH_REPLAY_WORDS;
        for (uint64_t i = 1; i <= steps; i++)
            w->bits[(from + i) % RDPS_AUTH_REPLAY_WORDS] = 0;
        w->top = counter;
    }
    w->bits[(counter >> 6) % RDPS_AUTH_REPLAY_WORDS] |= 1ull << (counter & 63);
    return true;
}

/* ---- the interceptor ----------------------------------------------------------------------- */

#define NONE UINT32_MAX

/* A sender as its nonce prefix names it: its cached subkey and its control frames' window. */
struct auth_sender {
    uint8_t prefix[RDPS_AUTH_PREFIX_LEN];
    uint8_t subkey[RDPS_AUTH_KEY_LEN];
    uint32_t key_id; /* the key `subkey` was derived from (0: none) */
    uint32_t hash_next, lru_prev, lru_next;
    struct rdps_auth_window window;
};

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
    /* Sending: our prefix, its subkey under the key in use, the two counters. */
    uint8_t prefix[RDPS_AUTH_PREFIX_LEN];
    uint8_t send_subkey[RDPS_AUTH_KEY_LEN];
    uint64_t data_counter, control_counter;
    /* Receiving: the senders, hashed by prefix, in LRU order (head: most recent). */
    struct auth_sender *senders;
    uint32_t *buckets;
    uint32_t bucket_mask, cap, used, lru_head, lru_tail;
    uint64_t hash_seed;
    struct rdps_tx_mem *regions;
    struct rdps_auth_stats stats;
};

static const struct rdps_transport_ops auth_ops;

static struct auth_transport *to_auth(struct rdps_transport *t)
{
    return (struct auth_transport *)t;
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
    rdps__auth_subkey(at->send_subkey, at->keys[at->send_key].key, at->prefix);
}

/* Seals a frame of len bytes (>= header, room for the trailer) with the next counter. */
static uint32_t seal_next(struct auth_transport *at, uint8_t *frame, uint32_t len)
{
    uint64_t *counter = frame[RDPS_AUTH_OFF_TYPE] == RDPS_AUTH_FRAME_DATA ? &at->data_counter
                                                                          : &at->control_counter;
    /* 2^63 frames of one kind never happen; if they did, a new prefix keeps nonces unique. */
    if (*counter == RDPS_AUTH_CONTROL_COUNTER - 1 || *counter == UINT64_MAX)
        new_prefix(at);
    uint64_t n = (*counter)++;
    return rdps__auth_seal(frame, len, at->send_subkey, at->prefix, n, at->keys[at->send_key].id,
                           at->encrypt);
}

static uint32_t prefix_hash(const struct auth_transport *at, const uint8_t *prefix)
{
    uint64_t a, b;
    memcpy(&a, prefix, 8);
    memcpy(&b, prefix + 8, 8);
    uint64_t h = (a ^ at->hash_seed) * 0x9e3779b97f4a7c15ull;
    h = (h ^ (h >> 29) ^ b) * 0xbf58476d1ce4e5b9ull;
    return (uint32_t)(h >> 32) & at->bucket_mask;
}

static struct auth_sender *sender_find(struct auth_transport *at, const uint8_t *prefix)
{
    for (uint32_t i = at->buckets[prefix_hash(at, prefix)]; i != NONE; i = at->senders[i].hash_next)
        if (memcmp(at->senders[i].prefix, prefix, RDPS_AUTH_PREFIX_LEN) == 0)
            return &at->senders[i];
    return NULL;
}

static void lru_unlink(struct auth_transport *at, uint32_t i)
{
    struct auth_sender *s = &at->senders[i];
    if (s->lru_prev != NONE)
        at->senders[s->lru_prev].lru_next = s->lru_next;
    else
        at->lru_head = s->lru_next;
    if (s->lru_next != NONE)
        at->senders[s->lru_next].lru_prev = s->lru_prev;
    else
        at->lru_tail = s->lru_prev;
}

static void lru_push_front(struct auth_transport *at, uint32_t i)
{
    struct auth_sender *s = &at->senders[i];
    s->lru_prev = NONE;
    s->lru_next = at->lru_head;
    if (at->lru_head != NONE)
        at->senders[at->lru_head].lru_prev = i;
    at->lru_head = i;
    if (at->lru_tail == NONE)
        at->lru_tail = i;
}

static void sender_touch(struct auth_transport *at, struct auth_sender *s)
{
    uint32_t i = (uint32_t)(s - at->senders);
    if (at->lru_head == i)
        return;
    lru_unlink(at, i);
    lru_push_front(at, i);
}

/* A new entry for a sender whose frame verified; the least recently heard one makes room. */
static struct auth_sender *sender_insert(struct auth_transport *at, const uint8_t *prefix)
{
    uint32_t i;
    if (at->used < at->cap) {
        i = at->used++;
    } else {
        i = at->lru_tail;
        lru_unlink(at, i);
        uint32_t *link = &at->buckets[prefix_hash(at, at->senders[i].prefix)];
        while (*link != i)
            link = &at->senders[*link].hash_next;
        *link = at->senders[i].hash_next;
        at->stats.senders_evicted++;
    }
    struct auth_sender *s = &at->senders[i];
    sodium_memzero(s, sizeof(*s));
    memcpy(s->prefix, prefix, RDPS_AUTH_PREFIX_LEN);
    uint32_t *bucket = &at->buckets[prefix_hash(at, prefix)];
    s->hash_next = *bucket;
    *bucket = i;
    lru_push_front(at, i);
    return s;
}

/*
 * Verifies (and decrypts) one received datagram in place; true when it goes up, as a plain
 * frame. Nothing in the table changes unless the tag verified.
 */
static bool accept_datagram(struct auth_transport *at, struct rdps_rx_datagram *d)
{
    /* The receive buffer is the transport's own writable memory, lent until rx_release. */
    uint8_t *f = (uint8_t *)(uintptr_t)d->data;
    uint32_t len = d->len;
    if (len < RDPS_AUTH_HEADER_LEN) {
        at->stats.short_frames++;
        return false;
    }
    uint32_t word = get_le32(f + RDPS_AUTH_OFF_WORD);
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
    const uint8_t *prefix = rdps__auth_trailer(f, len);
    uint64_t counter = rdps__auth_counter(f, len);
    bool control = f[RDPS_AUTH_OFF_TYPE] != RDPS_AUTH_FRAME_DATA;
    struct auth_sender *s = sender_find(at, prefix);
    if (s != NULL && control && !rdps__auth_window_check(&s->window, counter)) {
        at->stats.replayed++; /* cheap: no crypto for a replay the window already refuses */
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
    if (rdps__auth_open(f, len, subkey) != 0) {
        at->stats.bad_tag++;
        if (derived)
            sodium_memzero(fresh, sizeof(fresh));
        return false;
    }
    if (s == NULL)
        s = sender_insert(at, prefix); /* `prefix` is read before the entry is written */
    if (derived) {
        memcpy(s->subkey, fresh, sizeof(fresh));
        s->key_id = key->id;
        sodium_memzero(fresh, sizeof(fresh));
    }
    sender_touch(at, s);
    if (control && !rdps__auth_window_update(&s->window, counter)) {
        at->stats.replayed++;
        return false;
    }
    put_le32(f + RDPS_AUTH_OFF_WORD, 0);
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
    return in->ops->submit(in, buf, seal_next(at, buf->data, len), dests, ndest);
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
    int kept = 0;
    for (int i = 0; i < n; i++) {
        if (!accept_datagram(at, &rx[i])) {
            in->ops->rx_release(in, &rx[i], 1);
            continue;
        }
        if (kept != i)
            rx[kept] = rx[i];
        kept++;
    }
    return n < 0 ? n : kept;
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
    rc = in->ops->submit(in, &buf, seal_next(at, buf.data, len), dests, ndest);
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
    out->auth_senders_evicted += at->stats.senders_evicted;
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
    if (at->senders != NULL) {
        sodium_memzero(at->senders, (size_t)at->cap * sizeof(*at->senders));
        free(at->senders);
    }
    free(at->buckets);
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
    if (sodium_init() < 0)
        return rdps__set_err(RDPS_ENOTSUP, "authentication: libsodium failed to initialize");
    uint32_t cap = cfg->max_senders != 0 ? cfg->max_senders : RDPS_AUTH_DEFAULT_SENDERS;
    if (cap > (1u << 20))
        return rdps__set_err(RDPS_EINVAL, "authentication: %u senders above 2^20", cap);
    uint32_t buckets = 16;
    while (buckets < 2 * cap)
        buckets <<= 1;
    struct auth_transport *at = calloc(1, sizeof(*at));
    if (at != NULL) {
        at->senders = calloc(cap, sizeof(*at->senders));
        at->buckets = malloc((size_t)buckets * sizeof(*at->buckets));
    }
    if (at == NULL || at->senders == NULL || at->buckets == NULL) {
        if (at != NULL) {
            free(at->senders);
            free(at->buckets);
            free(at);
        }
        return rdps__set_err(RDPS_ENOMEM, "authentication: out of memory");
    }
    memset(at->buckets, 0xff, (size_t)buckets * sizeof(*at->buckets)); /* NONE */
    at->bucket_mask = buckets - 1;
    at->cap = cap;
    at->lru_head = at->lru_tail = NONE;
    randombytes_buf(&at->hash_seed, sizeof(at->hash_seed));
    at->base.ops = &auth_ops;
    at->base.inner = inner;
    at->encrypt = cfg->encrypt;
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
    for (uint32_t i = 0; i < at->used; i++) {
        if (at->senders[i].key_id == key_id) { /* subkeys derived from it go with it */
            sodium_memzero(at->senders[i].subkey, sizeof(at->senders[i].subkey));
            at->senders[i].key_id = 0;
        }
    }
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
    if (rdps__auth_transport_is(t))
        *out = ((const struct auth_transport *)t)->stats;
}

uint32_t rdps__auth_sender_count(const struct rdps_transport *t)
{
    return rdps__auth_transport_is(t) ? ((const struct auth_transport *)t)->used : 0;
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
