/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_auth.h - authenticated domains: the frame trailer (XChaCha20-Poly1305 tag bound to the
 * sender's address and send time, optional payload encryption), the anti-replay windows and the
 * interceptor transport that seals and verifies. */
#ifndef RDPS_AUTH_H
#define RDPS_AUTH_H

#include "rdps_transport.h"

#include <stdbool.h>
#include <stdint.h>

/*
 * A keyed frame is the plain frame with its reserved word (offset 28) set to the AUTH WORD and
 * a 44-byte TRAILER appended (wire version 3; version 2's was 40 bytes, without the time):
 *
 *   0 .. H             header (H = RDPS_AUTH_HEADER_LEN; the auth word at 28: key id in bits
 *                      0..23, ENCRYPTED bit 24, bits 25..31 zero)
 *   H .. H+P           payload or control body (ciphertext when ENCRYPTED)
 *   H+P .. +16         nonce prefix: 16 random bytes drawn once per sending transport (and again
 *                      in a forked child)
 *   +16 .. +24         counter, u64 little-endian: never repeats for one prefix
 *   +24 .. +28         sent_s, u32 little-endian: the sender's CLOCK_REALTIME in seconds (mod
 *                      2^32) when it sealed the frame
 *   +28 .. +44         Poly1305 tag
 *
 * The AEAD is XChaCha20-Poly1305-IETF with the 24-byte nonce prefix || counter, and associated
 * data that ends with the frame's BINDING, 28 bytes that are never sent as such:
 *   sent_s (4, as in the trailer) || the SOURCE (24): the sender's address as the receiver sees
 *   it in the datagram (rdps_rx_datagram): GID (16; zero without a GRH) || QPN (u32 LE) ||
 *   LID (u16 LE; 0 with a GRH) || 1 when the GID is valid else 0 (u8) || 0 (u8).
 *   auth only:  message empty, associated data = header || payload || binding;
 *   ENCRYPTED:  message = payload (encrypted in place), associated data = header || binding.
 * The sender seals with the source its transport says each destination will see
 * (rdps_transport_ops.self_source); the receiver verifies with the source its device reported.
 * The same bytes sent from any other QP, GID or LID therefore fail verification: a host without
 * the key that records a sender's frames cannot deliver them again from its own QPs.
 * XChaCha20 derives a subkey from the key and the nonce's first 16 bytes (HChaCha20), then runs
 * ChaCha20-Poly1305-IETF under it with the nonce 0^4 || counter. The prefix is constant per
 * sender, so both sides compute that subkey once per (sender, key) and cache it: the bytes on
 * the wire are exactly XChaCha20-Poly1305's over that associated data.
 *
 * Counters: DATA frames count from 0, every other type from 2^63, so a receiver's anti-replay
 * window of each kind sees a dense sequence not thinned out by the other kind.
 */
#define RDPS_AUTH_HEADER_LEN     48u
#define RDPS_AUTH_OFF_TYPE       1u
#define RDPS_AUTH_OFF_WORD       28u
#define RDPS_AUTH_FRAME_DATA     1u
#define RDPS_AUTH_PREFIX_LEN     16u
#define RDPS_AUTH_COUNTER_LEN    8u
#define RDPS_AUTH_TIME_LEN       4u
#define RDPS_AUTH_TAG_LEN        16u
#define RDPS_AUTH_OFF_COUNTER    RDPS_AUTH_PREFIX_LEN /* in the trailer */
#define RDPS_AUTH_OFF_TIME       (RDPS_AUTH_OFF_COUNTER + RDPS_AUTH_COUNTER_LEN)
#define RDPS_AUTH_OFF_TAG        (RDPS_AUTH_OFF_TIME + RDPS_AUTH_TIME_LEN)
#define RDPS_AUTH_TRAILER_LEN    (RDPS_AUTH_OFF_TAG + RDPS_AUTH_TAG_LEN)
#define RDPS_AUTH_SOURCE_LEN     24u
#define RDPS_AUTH_KEY_LEN        32u
#define RDPS_AUTH_KEY_ID_MAX     0xFFFFFFu
#define RDPS_AUTH_WORD_ENCRYPTED (1u << 24)
#define RDPS_AUTH_WORD_KEY_MASK  0xFFFFFFu
/* The first counter of control frames (types other than DATA). */
#define RDPS_AUTH_CONTROL_COUNTER (1ull << 63)
/*
 * Counters accepted behind the newest one seen from a sender (RFC 6479-style bitmaps, one word
 * of slack, a power of two of words: the index is a mask): 192 for control frames, 1984 for
 * DATA (a receiver sees the DATA of one sender's many groups and unicast copies interleaved,
 * some of it reordered across paths).
 */
#define RDPS_AUTH_CONTROL_WORDS   4u
#define RDPS_AUTH_DATA_WORDS      32u
#define RDPS_AUTH_WINDOW(words)   (((words)-1u) * 64u)
#define RDPS_AUTH_DEFAULT_SENDERS 1024u
/* A frame sealed further than this from the receiver's clock is stale (rdps_config). */
#define RDPS_AUTH_DEFAULT_MAX_AGE_MS 30000u
#define RDPS_AUTH_MIN_MAX_AGE_MS     2000u
#define RDPS_AUTH_MAX_MAX_AGE_MS     3600000u

/* ---- the frame transform (no state beyond its arguments) --------------------------------- */

/* The per-sender subkey: HChaCha20(key, prefix), XChaCha20's first step. */
void rdps__auth_subkey(uint8_t subkey[RDPS_AUTH_KEY_LEN], const uint8_t key[RDPS_AUTH_KEY_LEN],
                       const uint8_t prefix[RDPS_AUTH_PREFIX_LEN]);

/* The binding's SOURCE bytes of a datagram's sender (layout above). */
void rdps__auth_source_bytes(uint8_t out[RDPS_AUTH_SOURCE_LEN], const struct rdps_source *src);
void rdps__auth_rx_source_bytes(uint8_t out[RDPS_AUTH_SOURCE_LEN],
                                const struct rdps_rx_datagram *d);

/* What one frame is sealed with, besides the frame and the subkey. */
struct rdps_auth_seal_args {
    const uint8_t *prefix; /* RDPS_AUTH_PREFIX_LEN bytes */
    uint64_t counter;
    uint32_t sent_s;       /* the sender's CLOCK_REALTIME seconds */
    const uint8_t *source; /* RDPS_AUTH_SOURCE_LEN bytes: what the receiver will see */
    uint32_t key_id;
    bool encrypt;
};

/*
 * Seals the frame of `len` bytes (>= the header) at `frame` in place: writes the auth word,
 * encrypts the payload when `encrypt`, appends the trailer at frame + len (the caller leaves
 * RDPS_AUTH_TRAILER_LEN bytes of room). Returns the sealed length.
 */
uint32_t rdps__auth_seal(uint8_t *frame, uint32_t len, const uint8_t subkey[RDPS_AUTH_KEY_LEN],
                         const struct rdps_auth_seal_args *args);

/*
 * Verifies a sealed frame of `len` bytes (>= header + trailer), received from `source`, under
 * `subkey` (the sender's: rdps__auth_subkey of the key its auth word names and its prefix) and,
 * when the auth word says ENCRYPTED, decrypts its payload in place (only after the tag verified).
 * 0 when the tag verifies, -1 otherwise. The trailer and the auth word are left as they are.
 */
int rdps__auth_open(uint8_t *frame, uint32_t len, const uint8_t subkey[RDPS_AUTH_KEY_LEN],
                    const uint8_t source[RDPS_AUTH_SOURCE_LEN]);

/* The parts of a sealed frame's trailer (len >= header + trailer). */
static inline const uint8_t *rdps__auth_trailer(const uint8_t *frame, uint32_t len)
{
    return frame + len - RDPS_AUTH_TRAILER_LEN;
}
uint64_t rdps__auth_counter(const uint8_t *frame, uint32_t len);
uint32_t rdps__auth_sent_s(const uint8_t *frame, uint32_t len);
uint32_t rdps__auth_word(const uint8_t *frame);

/* ---- anti-replay window (per sender and kind; pure logic) -------------------------------- */

/* The newest counter accepted; `bits` (words x 64, words a power of two, owned by the caller)
 * marks those behind it. */
struct rdps_auth_window {
    uint64_t top; /* valid when `used` */
    bool used;
};

/* true when `counter` may be new: not seen and not older than the window. Changes nothing. */
bool rdps__auth_window_check(const struct rdps_auth_window *w, const uint64_t *bits, unsigned words,
                             uint64_t counter);
/* Records `counter` (after its frame verified); returns false when it was a replay after all. */
bool rdps__auth_window_update(struct rdps_auth_window *w, uint64_t *bits, unsigned words,
                              uint64_t counter);

/* ---- the interceptor ----------------------------------------------------------------------- */

struct rdps_auth_config {
    const uint8_t *key;   /* RDPS_AUTH_KEY_LEN bytes, copied */
    uint32_t key_id;      /* 1..RDPS_AUTH_KEY_ID_MAX */
    bool encrypt;         /* payloads encrypted as well as authenticated */
    uint32_t max_senders; /* anti-replay table entries (0: RDPS_AUTH_DEFAULT_SENDERS) */
    uint32_t max_age_ms;  /* freshness (0: RDPS_AUTH_DEFAULT_MAX_AGE_MS) */
    /* Wall clock in seconds for sealing and freshness (NULL: CLOCK_REALTIME; tests fake it). */
    uint64_t (*clock_s)(void *user);
    void *clock_user;
};

/* Why received frames were dropped (added into rdps_transport_stats). */
struct rdps_auth_stats {
    uint64_t unsigned_frames; /* auth word 0: a keyless sender */
    uint64_t short_frames;    /* shorter than header + trailer */
    uint64_t unknown_key;     /* key id not installed, or reserved bits of the auth word set */
    uint64_t bad_tag;         /* the tag did not verify (forged, corrupted, another key, or
                                 sent from another address than it was sealed for) */
    uint64_t replayed;        /* counter seen already or below the window, or a known sender's
                                 prefix from another address */
    uint64_t senders_evicted; /* anti-replay entries evicted for a new sender (LRU) */
    uint64_t stale;           /* sealed further than max_age from our clock */
};

/*
 * Wraps `inner` (owned from here on and destroyed with the interceptor; not on failure), which
 * must report its own source (rdps__transport_self_source; RDPS_ENOTSUP otherwise).
 * Sending: max_payload and claimed buffers are the inner ones less the trailer; submit seals in
 * place, once per distinct source its destinations see (one seal in practice; a second buffer
 * for InfiniBand destinations with and without a GRH in one submit); submit_mem copies the
 * region's bytes into an inner send buffer and seals that (the region's cookie completes at
 * once: nothing references the region after the call), so the regions registered here are
 * never registered with the device. Receiving: poll() verifies (and decrypts) every datagram
 * before handing it up, drops and counts what fails, strips the trailer and zeroes the auth
 * word, so the layers above see plain frames.
 */
int rdps__auth_transport_create(struct rdps_transport *inner, const struct rdps_auth_config *cfg,
                                struct rdps_transport **out);
/* true when t is an authenticating interceptor. */
bool rdps__auth_transport_is(const struct rdps_transport *t);
/*
 * Key rollover. add: accept frames under `key` as `key_id` too (two keys at most; RDPS_EEXIST
 * for an id installed already, RDPS_ENOSPC with two installed). use: seal with that key from now
 * on (RDPS_ENOENT if not installed). remove: stop accepting it (RDPS_EBUSY for the key in use,
 * RDPS_ENOENT if not installed). Key bytes are wiped when a key is removed or replaced.
 */
int rdps__auth_key_add(struct rdps_transport *t, const uint8_t key[RDPS_AUTH_KEY_LEN],
                       uint32_t key_id);
int rdps__auth_key_use(struct rdps_transport *t, uint32_t key_id);
int rdps__auth_key_remove(struct rdps_transport *t, uint32_t key_id);
/* The id frames are sealed with now. */
uint32_t rdps__auth_key_in_use(const struct rdps_transport *t);
/* Drops by reason, and the senders the anti-replay table holds (a snapshot). */
void rdps__auth_get_stats(const struct rdps_transport *t, struct rdps_auth_stats *out);
uint32_t rdps__auth_sender_count(const struct rdps_transport *t);
/* The nonce prefix frames are sealed with now (tests: a forked child's differs). */
void rdps__auth_send_prefix(struct rdps_transport *t, uint8_t out[RDPS_AUTH_PREFIX_LEN]);

#endif /* RDPS_AUTH_H */
