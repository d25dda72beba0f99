/* SPDX-License-Identifier: BSD-2-Clause */
/* auth_frame.c - authenticated domains, the pure part: sealing and opening one frame
 * (XChaCha20-Poly1305 over libsodium's primitives, bound to its source and send time) and the
 * anti-replay window (rdps_auth.h). */
#include "rdps_auth.h"

#include <sodium.h>
#include <string.h>

_Static_assert(RDPS_AUTH_TRAILER_LEN == 44, "the trailer is 44 bytes on the wire");
_Static_assert(RDPS_AUTH_KEY_LEN == crypto_aead_chacha20poly1305_ietf_KEYBYTES, "key size");
_Static_assert(RDPS_AUTH_TAG_LEN == crypto_aead_chacha20poly1305_ietf_ABYTES, "tag size");
_Static_assert(RDPS_AUTH_PREFIX_LEN + RDPS_AUTH_COUNTER_LEN ==
                   crypto_aead_xchacha20poly1305_ietf_NPUBBYTES,
               "prefix || counter is XChaCha20's nonce");
_Static_assert(RDPS_AUTH_PREFIX_LEN == crypto_core_hchacha20_INPUTBYTES, "HChaCha20 input");
_Static_assert(RDPS_AUTH_SOURCE_LEN == sizeof(struct rdps_source), "one source, 24 bytes");

static void put_le16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

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

void rdps__auth_subkey(uint8_t subkey[RDPS_AUTH_KEY_LEN], const uint8_t key[RDPS_AUTH_KEY_LEN],
                       const uint8_t prefix[RDPS_AUTH_PREFIX_LEN])
{
    crypto_core_hchacha20(subkey, prefix, key, NULL);
}

void rdps__auth_source_bytes(uint8_t out[RDPS_AUTH_SOURCE_LEN], const struct rdps_source *src)
{
    if (src->has_gid)
        memcpy(out, src->gid, 16);
    else
        memset(out, 0, 16);
    put_le32(out + 16, src->qpn);
    put_le16(out + 20, src->has_gid ? 0 : src->lid);
    out[22] = src->has_gid ? 1 : 0;
    out[23] = 0;
}

void rdps__auth_rx_source_bytes(uint8_t out[RDPS_AUTH_SOURCE_LEN], const struct rdps_rx_datagram *d)
{
    if (d->has_src_gid)
        memcpy(out, d->src_gid, 16);
    else
        memset(out, 0, 16);
    put_le32(out + 16, d->src_qpn);
    put_le16(out + 20, d->has_src_gid ? 0 : d->src_lid);
    out[22] = d->has_src_gid ? 1 : 0;
    out[23] = 0;
}

/* libsodium reads nothing for 0 bytes, but its pointer must not be NULL then either. */
static void poly_update(crypto_onetimeauth_poly1305_state *st, const uint8_t *p, size_t len)
{
    if (len > 0)
        crypto_onetimeauth_poly1305_update(st, p, len);
}

/*
 * ChaCha20-Poly1305-IETF (RFC 8439 section 2.8) as libsodium's crypto_aead_chacha20poly1305_ietf
 * computes it, with the associated data in two parts, the frame (all of it, or its header when
 * encrypted) and the binding (the trailer's time and the source, never sent together): the
 * Poly1305 key is the first half of keystream block 0, the message is encrypted from block 1, and
 * the tag covers ad || pad16 || ciphertext || pad16 || le64(adlen) || le64(clen). The binding and
 * its padding go in one update, the ciphertext's padding and the lengths in another: each update
 * call costs a few dozen instructions of its own.
 */
static void poly_tag(uint8_t tag[RDPS_AUTH_TAG_LEN], const uint8_t *npub,
                     const uint8_t subkey[RDPS_AUTH_KEY_LEN], const uint8_t *frame,
                     size_t frame_len, const uint8_t *trailer, const uint8_t *source,
                     const uint8_t *c, size_t clen)
{
    uint8_t block0[64], bind[RDPS_AUTH_TIME_LEN + RDPS_AUTH_SOURCE_LEN + 16], tail[16 + 16];
    crypto_onetimeauth_poly1305_state st;
    crypto_stream_chacha20_ietf(block0, sizeof(block0), npub, subkey);
    crypto_onetimeauth_poly1305_init(&st, block0);
    sodium_memzero(block0, sizeof(block0));
    size_t adlen = frame_len + RDPS_AUTH_TIME_LEN + RDPS_AUTH_SOURCE_LEN;
    size_t bind_len = RDPS_AUTH_TIME_LEN + RDPS_AUTH_SOURCE_LEN + (16 - adlen % 16) % 16;
    memcpy(bind, trailer + RDPS_AUTH_OFF_TIME, RDPS_AUTH_TIME_LEN);
    memcpy(bind + RDPS_AUTH_TIME_LEN, source, RDPS_AUTH_SOURCE_LEN);
    memset(bind + RDPS_AUTH_TIME_LEN + RDPS_AUTH_SOURCE_LEN, 0, 16);
    poly_update(&st, frame, frame_len);
    poly_update(&st, bind, bind_len);
    poly_update(&st, c, clen);
    size_t cpad = (16 - clen % 16) % 16;
    memset(tail, 0, cpad);
    put_le64(tail + cpad, adlen);
    put_le64(tail + cpad + 8, clen);
    poly_update(&st, tail, cpad + 16);
    crypto_onetimeauth_poly1305_final(&st, tag); /* it wipes the state */
}

/* ChaCha20-Poly1305-IETF's nonce under the subkey: 4 zero bytes, then the counter (XChaCha20). */
static void inner_nonce(uint8_t npub[crypto_aead_chacha20poly1305_ietf_NPUBBYTES],
                        const uint8_t *trailer)
{
    memset(npub, 0, 4);
    memcpy(npub + 4, trailer + RDPS_AUTH_OFF_COUNTER, RDPS_AUTH_COUNTER_LEN);
}

uint32_t rdps__auth_seal(uint8_t *frame, uint32_t len, const uint8_t subkey[RDPS_AUTH_KEY_LEN],
                         const struct rdps_auth_seal_args *a)
{
    uint8_t npub[crypto_aead_chacha20poly1305_ietf_NPUBBYTES];
    uint8_t *trailer = frame + len;
    uint8_t *payload = frame + RDPS_AUTH_HEADER_LEN;
    uint32_t payload_len = len - RDPS_AUTH_HEADER_LEN;
    put_le32(frame + RDPS_AUTH_OFF_WORD,
             (a->key_id & RDPS_AUTH_WORD_KEY_MASK) | (a->encrypt ? RDPS_AUTH_WORD_ENCRYPTED : 0));
    memcpy(trailer, a->prefix, RDPS_AUTH_PREFIX_LEN);
    put_le64(trailer + RDPS_AUTH_OFF_COUNTER, a->counter);
    put_le32(trailer + RDPS_AUTH_OFF_TIME, a->sent_s);
    inner_nonce(npub, trailer);
    if (a->encrypt) {
        crypto_stream_chacha20_ietf_xor_ic(payload, payload, payload_len, npub, 1, subkey);
        poly_tag(trailer + RDPS_AUTH_OFF_TAG, npub, subkey, frame, RDPS_AUTH_HEADER_LEN, trailer,
                 a->source, payload, payload_len);
    } else {
        poly_tag(trailer + RDPS_AUTH_OFF_TAG, npub, subkey, frame, len, trailer, a->source, NULL,
                 0);
    }
    return len + RDPS_AUTH_TRAILER_LEN;
}

int rdps__auth_open(uint8_t *frame, uint32_t len, const uint8_t subkey[RDPS_AUTH_KEY_LEN],
                    const uint8_t source[RDPS_AUTH_SOURCE_LEN])
{
    uint8_t npub[crypto_aead_chacha20poly1305_ietf_NPUBBYTES], tag[RDPS_AUTH_TAG_LEN];
    uint32_t body = len - RDPS_AUTH_TRAILER_LEN;
    const uint8_t *trailer = frame + body;
    uint8_t *payload = frame + RDPS_AUTH_HEADER_LEN;
    uint32_t payload_len = body - RDPS_AUTH_HEADER_LEN;
    bool encrypted = (get_le32(frame + RDPS_AUTH_OFF_WORD) & RDPS_AUTH_WORD_ENCRYPTED) != 0;
    inner_nonce(npub, trailer);
    poly_tag(tag, npub, subkey, frame, encrypted ? RDPS_AUTH_HEADER_LEN : body, trailer, source,
             encrypted ? payload : NULL, encrypted ? payload_len : 0);
    int rc = crypto_verify_16(tag, trailer + RDPS_AUTH_OFF_TAG);
    if (rc == 0 && encrypted) /* nothing is decrypted before the tag verified */
        crypto_stream_chacha20_ietf_xor_ic(payload, payload, payload_len, npub, 1, subkey);
    return rc == 0 ? 0 : -1;
}

uint64_t rdps__auth_counter(const uint8_t *frame, uint32_t len)
{
    return get_le64(rdps__auth_trailer(frame, len) + RDPS_AUTH_OFF_COUNTER);
}

uint32_t rdps__auth_sent_s(const uint8_t *frame, uint32_t len)
{
    return get_le32(rdps__auth_trailer(frame, len) + RDPS_AUTH_OFF_TIME);
}

uint32_t rdps__auth_word(const uint8_t *frame)
{
    return get_le32(frame + RDPS_AUTH_OFF_WORD);
}

/* ---- anti-replay window -------------------------------------------------------------------- */

_Static_assert((RDPS_AUTH_CONTROL_WORDS & (RDPS_AUTH_CONTROL_WORDS - 1)) == 0 &&
                   (RDPS_AUTH_DATA_WORDS & (RDPS_AUTH_DATA_WORDS - 1)) == 0,
               "windows of a power of two of words: the index is a mask");

bool rdps__auth_window_check(const struct rdps_auth_window *w, const uint64_t *bits, unsigned words,
                             uint64_t counter)
{
    if (!w->used || counter > w->top)
        return true;
    if (w->top - counter >= RDPS_AUTH_WINDOW(words))
        return false;
    uint64_t word = bits[(counter >> 6) & (words - 1)];
    return ((word >> (counter & 63)) & 1u) == 0;
}

bool rdps__auth_window_update(struct rdps_auth_window *w, uint64_t *bits, unsigned words,
                              uint64_t counter)
{
    if (!rdps__auth_window_check(w, bits, words, counter))
        return false;
    if (!w->used) {
        memset(bits, 0, (size_t)words * sizeof(*bits));
        w->top = counter;
        w->used = true;
    } else if (counter > w->top) {
        /* Words between the old top's and the new one's start empty (RFC 6479). */
        uint64_t from = w->top >> 6, to = counter >> 6;
        uint64_t steps = to - from < words ? to - from : words;
        for (uint64_t i = 1; i <= steps; i++)
            bits[(from + i) & (words - 1)] = 0;
        w->top = counter;
    }
    bits[(counter >> 6) & (words - 1)] |= 1ull << (counter & 63);
    return true;
}
