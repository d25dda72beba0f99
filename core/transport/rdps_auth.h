/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_auth.h - authenticated domains: the frame trailer (XChaCha20-Poly1305 tag, optional payload
 * encryption), the anti-replay table and the interceptor transport that seals and verifies. */
#ifndef RDPS_AUTH_H
#define RDPS_AUTH_H

#include "rdps_transport.h"

#include <stdbool.h>
#include <stdint.h>

/*
 * A keyed frame is the wire-v2 frame with its reserved word (offset 28) set to the AUTH WORD and
 * a 40-byte TRAILER appended:
 *
 *   0 .. 40            header (the auth word at 28: key id in bits 0..23, ENCRYPTED bit 24,
 *                      bits 25..31 zero)
 *   40 .. 40+P         payload or control body (ciphertext when ENCRYPTED)
 *   40+P .. 40+P+16    nonce prefix: 16 random bytes drawn once per sending transport
 *   40+P+16 .. +24     counter, u64 little-endian: never repeats for one prefix
 *   40+P+24 .. +40     Poly1305 tag
 *
 * The AEAD is XChaCha20-Poly1305-IETF (libsodium crypto_aead_xchacha20poly1305_ietf_*) with the
 * 24-byte nonce prefix || counter:
 *   auth only:  message empty, associated data = header || payload (the whole frame);
 *   ENCRYPTED:  message = payload (encrypted in place), associated data = header.
 * XChaCha20 derives a subkey from the key and the nonce's first 16 bytes (HChaCha20), then runs
 * ChaCha20-Poly1305-IETF under it with the nonce 0^4 || counter. The prefix is constant per
 * sender, so both sides compute that subkey once per (sender, key) and cache it: the bytes on
 * the wire are exactly XChaCha20-Poly1305's, any implementation of it verifies them.
 *
 * Counters: DATA frames count from 0, every other type from 2^63, so a receiver's anti-replay
 * window for control frames sees a dense sequence not thinned out by the data between them.
 */
#define RDPS_AUTH_HEADER_LEN     40u
#define RDPS_AUTH_OFF_TYPE       1u
#define RDPS_AUTH_OFF_WORD       28u
#define RDPS_AUTH_FRAME_DATA     1u
#define RDPS_AUTH_PREFIX_LEN     16u
#define RDPS_AUTH_COUNTER_LEN    8u
#define RDPS_AUTH_TAG_LEN        16u
#define RDPS_AUTH_TRAILER_LEN    (RDPS_AUTH_PREFIX_LEN + RDPS_AUTH_COUNTER_LEN + RDPS_AUTH_TAG_LEN)
#define RDPS_AUTH_KEY_LEN        32u
#define RDPS_AUTH_KEY_ID_MAX     0xFFFFFFu
#define RDPS_AUTH_WORD_ENCRYPTED (1u << 24)
#define RDPS_AUTH_WORD_KEY_MASK  0xFFFFFFu
/* The first counter of control frames (types other than DATA). */
#define RDPS_AUTH_CONTROL_COUNTER (1ull << 63)
/* Control frames accepted behind the newest one seen from a sender (RFC 6479-style bitmap). */
#define RDPS_AUTH_REPLAY_WORDS    4u
#define RDPS_AUTH_REPLAY_WINDOW   ((RDPS_AUTH_REPLAY_WORDS - 1u) * 64u)
#define RDPS_AUTH_DEFAULT_SENDERS 1024u

/* ---- the frame transform (no state beyond its arguments) --------------------------------- */

/* The per-sender subkey: HChaCha20(key, prefix), XChaCha20's first step. */
void rdps__auth_subkey(uint8_t subkey[RDPS_AUTH_KEY_LEN], const uint8_t key[RDPS_AUTH_KEY_LEN],
                       const uint8_t prefix[RDPS_AUTH_PREFIX_LEN]);

/*
 * Seals the frame of `len` bytes (>= the header) at `frame` in place: writes the auth word,
 * encrypts the payload when `encrypt`, appends the trailer at frame + len (the caller leaves
 * RDPS_AUTH_TRAILER_LEN bytes of room). Returns the sealed length.
 */
uint32_t rdps__auth_seal(uint8_t *frame, uint32_t len, const uint8_t subkey[RDPS_AUTH_KEY_LEN],
                         const uint8_t prefix[RDPS_AUTH_PREFIX_LEN], uint64_t counter,
                         uint32_t key_id, bool encrypt);

/*
 * Verifies a sealed frame of `len` bytes (>= header + trailer) under `subkey` (the sender's:
 * rdps__auth_subkey of the key its auth word names and its prefix) and, when the auth word says
 * ENCRYPTED, decrypts its payload in place. 0 when the tag verifies, -1 otherwise (then the
 * payload may have been overwritten). The trailer and the auth word are left as they are.
 */
int rdps__auth_open(uint8_t *frame, uint32_t len, const uint8_t subkey[RDPS_AUTH_KEY_LEN]);

/* The parts of a sealed frame's trailer (len >= header + trailer). */
static inline const uint8_t *rdps__auth_trailer(const uint8_t *frame, uint32_t len)
{
    return frame + len - RDPS_AUTH_TRAILER_LEN;
}
uint64_t rdps__auth_counter(const uint8_t *frame, uint32_t len);
uint32_t rdps__auth_word(const uint8_t *frame);

/* ---- anti-replay window (per sender; pure logic) ----------------------------------------- */

struct rdps_auth_window {
    uint64_t top; /* newest counter accepted (valid when `used`) */
    uint64_t bits[RDPS_AUTH_REPLAY_WORDS];
    bool used;
};

/* true when `counter` may be new: not seen and not older than the window. Changes nothing. */
bool rdps__auth_window_check(const struct rdps_auth_window *w, uint64_t counter);
/* Records `counter` (after its frame verified); returns false when it was a replay after all. */
bool rdps__auth_window_update(struct rdps_auth_window *w, uint64_t counter);

/* ---- the interceptor ----------------------------------------------------------------------- */

struct rdps_auth_config {
    const uint8_t *key;   /* RDPS_AUTH_KEY_LEN bytes, copied */
    uint32_t key_id;      /* 1..RDPS_AUTH_KEY_ID_MAX */
    bool encrypt;         /* payloads encrypted as well as authenticated */
    uint32_t max_senders; /* anti-replay table entries (0: RDPS_AUTH_DEFAULT_SENDERS) */
};

/* Why received frames were dropped (added into rdps_transport_stats). */
struct rdps_auth_stats {
    uint64_t unsigned_frames; /* auth word 0: a keyless sender */
    uint64_t short_frames;    /* shorter than header + trailer */
    uint64_t unknown_key;     /* key id not installed, or reserved bits of the auth word set */
    uint64_t bad_tag;         /* the tag did not verify */
    uint64_t replayed;        /* a control frame's counter seen already or below the window */
    uint64_t senders_evicted; /* anti-replay entries evicted for a new sender (LRU) */
};

/*
 * Wraps `inner` (owned from here on and destroyed with the interceptor; not on failure).
 * Sending: max_payload and claimed buffers are the inner ones less the trailer; submit seals in
 * place; submit_mem copies the region's bytes into an inner send buffer and seals that (the
 * region's cookie completes at once: nothing references the region after the call), so the
 * regions registered here are never registered with the device. Receiving: poll() verifies (and
 * decrypts) every datagram before handing it up, drops and counts what fails, strips the
 * trailer and zeroes the auth word, so the layers above see plain wire-v2 frames.
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

#endif /* RDPS_AUTH_H */
