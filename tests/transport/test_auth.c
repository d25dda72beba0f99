/* SPDX-License-Identifier: BSD-2-Clause */
/* test_auth.c - authenticated domains below the API: the frame transform against libsodium's own
 * XChaCha20-Poly1305, the anti-replay windows, and the interceptor over loopback endpoints
 * (forgeries, replays from the sender's and from another QP, freshness, fork, mixed sources). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <sodium.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rdps_auth.h"

#define H RDPS_AUTH_HEADER_LEN
#include "rdps_loopback.h"

static const uint8_t key_a[32] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16,
                                  17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32};
static const uint8_t key_b[32] = {0xb0, 0xb1, 0xb2, [31] = 0xbf};

/* A plausible frame: the current version, `type`, its header, `payload` bytes of pattern. */
static uint32_t make_frame(uint8_t *f, uint8_t type, uint32_t payload, uint8_t fill)
{
    memset(f, 0, H);
    f[0] = 3;
    f[1] = type;
    f[4] = 7; /* session */
    f[8] = 9; /* topic */
    for (uint32_t i = 0; i < payload; i++)
        f[H + i] = (uint8_t)(fill + i);
    return H + payload;
}

static const struct rdps_source src_one = {
    .gid = {0xfe, 0x80, [15] = 1}, .qpn = 0x11, .has_gid = 1};
static const struct rdps_source src_two = {
    .gid = {0xfe, 0x80, [15] = 2}, .qpn = 0x11, .has_gid = 1};

static uint32_t seal_frame(uint8_t *f, uint32_t len, const uint8_t *subkey, const uint8_t *prefix,
                           uint64_t counter, uint32_t sent_s, const struct rdps_source *src,
                           bool encrypt)
{
    uint8_t source[RDPS_AUTH_SOURCE_LEN];
    rdps__auth_source_bytes(source, src);
    struct rdps_auth_seal_args a = {.prefix = prefix,
                                    .counter = counter,
                                    .sent_s = sent_s,
                                    .source = source,
                                    .key_id = 77,
                                    .encrypt = encrypt};
    return rdps__auth_seal(f, len, subkey, &a);
}

static int open_frame(uint8_t *f, uint32_t len, const uint8_t *subkey,
                      const struct rdps_source *src)
{
    uint8_t source[RDPS_AUTH_SOURCE_LEN];
    rdps__auth_source_bytes(source, src);
    return rdps__auth_open(f, len, subkey, source);
}

/*
 * The bytes on the wire are XChaCha20-Poly1305-IETF's: libsodium's own API verifies them with the
 * associated data the header describes (the frame or its header, then sent_s and the source).
 */
static void test_seal_is_xchacha20poly1305(void **state)
{
    (void)state;
    assert_true(sodium_init() >= 0);
    uint8_t prefix[16], subkey[32], f[256], copy[256], nonce[24], ad[256];
    for (int i = 0; i < 16; i++)
        prefix[i] = (uint8_t)(0xa0 + i);
    rdps__auth_subkey(subkey, key_a, prefix);
    for (int encrypt = 0; encrypt <= 1; encrypt++) {
        uint32_t len = make_frame(f, 1, 100, 3);
        memcpy(copy, f, len);
        uint32_t sealed = seal_frame(f, len, subkey, prefix, 0x1122334455667788ull, 0xA1B2C3D4u,
                                     &src_one, encrypt != 0);
        assert_int_equal(sealed, len + RDPS_AUTH_TRAILER_LEN);
        assert_int_equal(rdps__auth_word(f), 77u | (encrypt ? RDPS_AUTH_WORD_ENCRYPTED : 0));
        assert_int_equal(rdps__auth_counter(f, sealed), 0x1122334455667788ull);
        assert_int_equal(rdps__auth_sent_s(f, sealed), 0xA1B2C3D4u);
        const uint8_t *trailer = rdps__auth_trailer(f, sealed);
        memcpy(nonce, trailer, 24);
        const uint8_t *tag = trailer + RDPS_AUTH_OFF_TAG;
        /* The associated data: the frame (header only when encrypted), sent_s, the source. */
        uint32_t adlen = encrypt ? H : len;
        memcpy(ad, f, adlen);
        memcpy(ad + adlen, trailer + RDPS_AUTH_OFF_TIME, 4);
        rdps__auth_source_bytes(ad + adlen + 4, &src_one);
        assert_memory_equal(ad + adlen + 4, src_one.gid, 16);
        assert_int_equal(ad[adlen + 4 + 16], 0x11); /* QPN, little-endian */
        assert_int_equal(ad[adlen + 4 + 22], 1);    /* has_gid */
        adlen += 4 + RDPS_AUTH_SOURCE_LEN;
        if (encrypt) {
            assert_memory_not_equal(f + H, copy + H, 100); /* the payload is ciphertext */
            uint8_t plain[100];
            assert_int_equal(crypto_aead_xchacha20poly1305_ietf_decrypt_detached(
                                 plain, NULL, f + H, 100, tag, ad, adlen, nonce, key_a),
                             0);
            assert_memory_equal(plain, copy + H, 100);
        } else {
            assert_memory_equal(f + H, copy + H, 100);
            uint8_t none;
            assert_int_equal(crypto_aead_xchacha20poly1305_ietf_decrypt_detached(
                                 NULL, NULL, &none, 0, tag, ad, adlen, nonce, key_a),
                             0);
        }
        /* Received from another address (another GID, QPN, or a LID), it fails, untouched. */
        struct rdps_source other_qpn = src_one, by_lid = {.qpn = 0x11, .lid = 5};
        other_qpn.qpn = 0x12;
        uint8_t saved[256];
        memcpy(saved, f, sealed);
        assert_int_equal(open_frame(f, sealed, subkey, &src_two), -1);
        assert_int_equal(open_frame(f, sealed, subkey, &other_qpn), -1);
        assert_int_equal(open_frame(f, sealed, subkey, &by_lid), -1);
        assert_memory_equal(f, saved, sealed); /* nothing decrypted before the tag verified */
        assert_int_equal(open_frame(f, sealed, subkey, &src_one), 0);
        assert_memory_equal(f + H, copy + H, 100); /* decrypted in place */
        /* Any flipped bit of header, payload or trailer fails. */
        for (uint32_t bit = 0; bit < sealed * 8; bit += 13) {
            uint32_t l2 =
                seal_frame(memcpy(f, copy, len), len, subkey, prefix, 5, 9, &src_one, encrypt != 0);
            f[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            /* The receiver derives the subkey from the prefix the frame carries. */
            uint8_t derived[32];
            rdps__auth_subkey(derived, key_a, rdps__auth_trailer(f, l2));
            assert_int_equal(open_frame(f, l2, derived, &src_one), -1);
        }
        /* Another key's subkey fails. */
        uint8_t other[32];
        rdps__auth_subkey(other, key_b, prefix);
        uint32_t l3 =
            seal_frame(memcpy(f, copy, len), len, subkey, prefix, 6, 9, &src_one, encrypt != 0);
        assert_int_equal(open_frame(f, l3, other, &src_one), -1);
    }
    /* Every padding of the associated data and the ciphertext: payloads of 0..47 bytes, both
     * ways, against libsodium's own AEAD. */
    for (int encrypt = 0; encrypt <= 1; encrypt++) {
        for (uint32_t payload = 0; payload < 48; payload++) {
            uint32_t len = make_frame(f, 2, payload, (uint8_t)payload);
            memcpy(copy, f, len);
            uint32_t sealed =
                seal_frame(f, len, subkey, prefix, payload, 7, &src_two, encrypt != 0);
            const uint8_t *trailer = rdps__auth_trailer(f, sealed);
            uint32_t adlen = encrypt ? H : len;
            memcpy(ad, f, adlen);
            memcpy(ad + adlen, trailer + RDPS_AUTH_OFF_TIME, 4);
            rdps__auth_source_bytes(ad + adlen + 4, &src_two);
            adlen += 4 + RDPS_AUTH_SOURCE_LEN;
            uint8_t plain[64], none;
            assert_int_equal(crypto_aead_xchacha20poly1305_ietf_decrypt_detached(
                                 encrypt ? plain : NULL, NULL, encrypt ? f + H : &none,
                                 encrypt ? payload : 0, trailer + RDPS_AUTH_OFF_TAG, ad, adlen,
                                 trailer, key_a),
                             0);
            assert_int_equal(open_frame(f, sealed, subkey, &src_two), 0);
            assert_memory_equal(f, copy + 0, 28); /* the header up to the auth word */
            if (payload > 0)
                assert_memory_equal(f + H, copy + H, payload);
        }
    }
}

static void test_replay_window(void **state)
{
    (void)state;
    const unsigned words = RDPS_AUTH_CONTROL_WORDS, big = RDPS_AUTH_DATA_WORDS;
    const uint64_t width = RDPS_AUTH_WINDOW(words);
    struct rdps_auth_window w = {0};
    uint64_t bits[RDPS_AUTH_CONTROL_WORDS];
    assert_true(rdps__auth_window_update(&w, bits, words, 1000));
    assert_false(rdps__auth_window_update(&w, bits, words, 1000)); /* the same counter again */
    assert_true(rdps__auth_window_update(&w, bits, words, 1002));
    assert_true(rdps__auth_window_update(&w, bits, words, 1001)); /* late, inside the window */
    assert_false(rdps__auth_window_check(&w, bits, words, 1001));
    assert_true(rdps__auth_window_update(&w, bits, words, 1002 - width + 1));
    assert_false(rdps__auth_window_check(&w, bits, words, 1002 - width)); /* too old */
    /* A jump far ahead forgets every earlier counter: all of them are below the window. */
    assert_true(rdps__auth_window_update(&w, bits, words, 1000000));
    assert_false(rdps__auth_window_check(&w, bits, words, 1002));
    assert_true(rdps__auth_window_check(&w, bits, words, 1000000 - 1));
    /* Across word boundaries, every counter once, in an order shuffled within the window. */
    struct rdps_auth_window v = {0};
    for (uint64_t base = 0; base < 4096; base += 64)
        for (uint64_t k = 0; k < 64; k++) {
            uint64_t c = (1ull << 63) + base + ((k * 37) % 64);
            assert_true(rdps__auth_window_update(&v, bits, words, c));
            assert_false(rdps__auth_window_update(&v, bits, words, c));
        }
    /* The DATA window: 1984 behind, reordered by up to 1900 and every counter once. */
    struct rdps_auth_window d = {0};
    uint64_t dbits[RDPS_AUTH_DATA_WORDS];
    assert_int_equal(RDPS_AUTH_WINDOW(big), 1984);
    for (uint64_t c = 0; c < 20000; c += 2)
        assert_true(rdps__auth_window_update(&d, dbits, big, c));
    for (uint64_t c = 18101; c < 20000; c += 2) /* the odd ones, 1900 late */
        assert_true(rdps__auth_window_update(&d, dbits, big, c));
    for (uint64_t c = 18100; c < 20000; c++)
        assert_false(rdps__auth_window_check(&d, dbits, big, c));
    assert_false(rdps__auth_window_check(&d, dbits, big, 19998 - 1984));
}

/* The test's wall clock (seconds), for sealing and freshness on both sides. */
static uint64_t fake_s = 1700000000;
static uint64_t fake_clock_s(void *user)
{
    (void)user;
    return fake_s;
}

/* Two loopback endpoints, each behind an authenticating interceptor, and a third (c) with none:
 * a host of the fabric that can record and send whatever bytes it likes from its own QP. */
struct pair {
    struct rdps_loopback_fabric *fabric;
    struct rdps_transport *a_in, *b_in, *c, *a, *b;
    const struct rdps_dest *to_b;
};

static struct rdps_auth_config auth_config(const uint8_t *key, uint32_t id, bool encrypt,
                                           uint32_t senders)
{
    struct rdps_auth_config c = {.key = key,
                                 .key_id = id,
                                 .encrypt = encrypt,
                                 .max_senders = senders,
                                 .clock_s = fake_clock_s};
    return c;
}

static void pair_open(struct pair *p, const uint8_t *key_for_a, uint32_t id_a, bool encrypt_a,
                      uint32_t senders_b)
{
    memset(p, 0, sizeof(*p));
    struct rdps_loopback_config lc = {.max_payload = 1024, .send_slots = 16, .recv_slots = 64};
    assert_int_equal(rdps__loopback_fabric_create(&p->fabric), 0);
    assert_int_equal(rdps__loopback_create(p->fabric, &lc, &p->a_in), 0);
    assert_int_equal(rdps__loopback_create(p->fabric, &lc, &p->b_in), 0);
    assert_int_equal(rdps__loopback_create(p->fabric, &lc, &p->c), 0);
    assert_int_equal(rdps__loopback_dest(p->b_in, &p->to_b), 0);
    struct rdps_auth_config ca = auth_config(key_for_a, id_a, encrypt_a, 0);
    struct rdps_auth_config cb = auth_config(key_a, 1, false, senders_b);
    if (key_for_a != NULL)
        assert_int_equal(rdps__auth_transport_create(p->a_in, &ca, &p->a), 0);
    else
        p->a = p->a_in; /* a keyless sender */
    assert_int_equal(rdps__auth_transport_create(p->b_in, &cb, &p->b), 0);
}

static void pair_close(struct pair *p)
{
    p->a->ops->destroy(p->a);
    p->b->ops->destroy(p->b);
    p->c->ops->destroy(p->c);
    rdps__loopback_fabric_destroy(p->fabric);
}

/* a sends one frame; returns how many datagrams b's poll handed up (at most one, into *rx). */
static int send_one(struct pair *p, uint8_t type, uint32_t payload, uint8_t fill,
                    struct rdps_rx_datagram *rx)
{
    struct rdps_tx_buf buf;
    assert_int_equal(p->a_in->ops->poll(p->a_in, rx, 0), 0); /* reaps a's send completions */
    assert_int_equal(p->a->ops->claim(p->a, &buf), 0);
    uint32_t len = make_frame(buf.data, type, payload, fill);
    assert_int_equal(p->a->ops->submit(p->a, &buf, len, &p->to_b, 1), 0);
    assert_int_equal(p->a->ops->flush(p->a), 0);
    int n = p->b->ops->poll(p->b, rx, 1);
    assert_true(n >= 0);
    return n;
}

/* The raw datagram of the next frame a sends, as the wire carries it (b's inner endpoint). */
static uint32_t capture_one(struct pair *p, uint8_t type, uint32_t payload, uint8_t *out)
{
    struct rdps_tx_buf buf;
    struct rdps_rx_datagram rx;
    assert_int_equal(p->a_in->ops->poll(p->a_in, &rx, 0), 0);
    assert_int_equal(p->a->ops->claim(p->a, &buf), 0);
    uint32_t len = make_frame(buf.data, type, payload, 0x40);
    assert_int_equal(p->a->ops->submit(p->a, &buf, len, &p->to_b, 1), 0);
    assert_int_equal(p->a->ops->flush(p->a), 0);
    assert_int_equal(p->b_in->ops->poll(p->b_in, &rx, 1), 1);
    memcpy(out, rx.data, rx.len);
    uint32_t n = rx.len;
    p->b_in->ops->rx_release(p->b_in, &rx, 1);
    return n;
}

/* Raw bytes sent to b from endpoint `from` (a's inner endpoint: as a forger of a's exact address
 * sends them; c: from another QP). Returns what b's poll handed up. */
static int inject_from(struct pair *p, struct rdps_transport *from, const uint8_t *bytes,
                       uint32_t len, struct rdps_rx_datagram *rx)
{
    struct rdps_tx_buf buf;
    assert_int_equal(from->ops->poll(from, rx, 0), 0);
    assert_int_equal(from->ops->claim(from, &buf), 0);
    memcpy(buf.data, bytes, len);
    assert_int_equal(from->ops->submit(from, &buf, len, &p->to_b, 1), 0);
    assert_int_equal(from->ops->flush(from), 0);
    return p->b->ops->poll(p->b, rx, 1);
}

static int inject(struct pair *p, const uint8_t *bytes, uint32_t len, struct rdps_rx_datagram *rx)
{
    return inject_from(p, p->a_in, bytes, len, rx);
}

static struct rdps_auth_stats stats_of(struct rdps_transport *t)
{
    struct rdps_auth_stats s;
    rdps__auth_get_stats(t, &s);
    return s;
}

static void test_interceptor_round_trip(void **state)
{
    (void)state;
    for (int encrypt = 0; encrypt <= 1; encrypt++) {
        struct pair p;
        struct rdps_rx_datagram rx;
        pair_open(&p, key_a, 1, encrypt != 0, 0);
        assert_int_equal(p.a->ops->max_payload(p.a), 1024 - RDPS_AUTH_TRAILER_LEN);
        struct rdps_tx_buf buf;
        assert_int_equal(p.a->ops->claim(p.a, &buf), 0);
        assert_int_equal(buf.capacity, 1024 - RDPS_AUTH_TRAILER_LEN);
        p.a->ops->abort(p.a, &buf);
        for (uint8_t type = 1; type <= 5; type++) {
            assert_int_equal(send_one(&p, type, 200, type, &rx), 1);
            assert_int_equal(rx.len, H + 200); /* the trailer is stripped */
            assert_int_equal(rx.data[1], type);
            assert_int_equal(rdps__auth_word(rx.data), 0); /* as a keyless frame reads */
            for (uint32_t i = 0; i < 200; i++)
                assert_int_equal(rx.data[H + i], (uint8_t)(type + i));
            p.b->ops->rx_release(p.b, &rx, 1);
        }
        /* A frame filling the whole datagram (max_payload) goes; one byte more is refused. */
        uint32_t fill = 1024 - H - RDPS_AUTH_TRAILER_LEN;
        assert_int_equal(send_one(&p, 1, fill, 9, &rx), 1);
        p.b->ops->rx_release(p.b, &rx, 1);
        assert_int_equal(p.a->ops->claim(p.a, &buf), 0);
        assert_int_equal(p.a->ops->submit(p.a, &buf, H + fill + 1, &p.to_b, 1), RDPS_EMSGSIZE);
        struct rdps_auth_stats s = stats_of(p.b);
        assert_int_equal(s.bad_tag + s.short_frames + s.unknown_key + s.unsigned_frames, 0);
        assert_int_equal(s.replayed + s.stale, 0);
        assert_int_equal(rdps__auth_sender_count(p.b), 1);
        pair_close(&p);
    }
}

/* Every frame type: a wrong key, a keyless sender, an unknown key id, truncation, a flipped bit:
 * dropped, counted, and no sender entry is created. */
static void test_forgeries_dropped_before_state(void **state)
{
    (void)state;
    struct rdps_rx_datagram rx;
    const uint32_t trailer = RDPS_AUTH_TRAILER_LEN;
    for (uint8_t type = 1; type <= 5; type++) {
        struct pair p;
        pair_open(&p, key_b, 1, false, 0); /* a holds the wrong key under b's key id */
        assert_int_equal(send_one(&p, type, 64, 1, &rx), 0);
        assert_int_equal(stats_of(p.b).bad_tag, 1);
        assert_int_equal(rdps__auth_sender_count(p.b), 0);
        pair_close(&p);

        pair_open(&p, NULL, 0, false, 0); /* a keyless sender */
        assert_int_equal(send_one(&p, type, 64, 1, &rx), 0);
        assert_int_equal(stats_of(p.b).unsigned_frames, 1);
        pair_close(&p);

        pair_open(&p, key_a, 2, false, 0); /* the right key under an id b does not have */
        assert_int_equal(send_one(&p, type, 64, 1, &rx), 0);
        assert_int_equal(stats_of(p.b).unknown_key, 1);
        assert_int_equal(rdps__auth_sender_count(p.b), 0);
        pair_close(&p);

        /* The honest sender's frames, damaged on the way. */
        pair_open(&p, key_a, 1, type == 1, 0);
        uint8_t wire[1024], bad[1024];
        uint32_t n = capture_one(&p, type, 64, wire);
        assert_int_equal(n, H + 64 + trailer);
        for (uint32_t cut = 1; cut <= trailer; cut += 14) /* 4 truncated trailers or tags */
            assert_int_equal(inject(&p, wire, n - cut, &rx), 0);
        assert_int_equal(inject(&p, wire, H + trailer - 1, &rx), 0); /* < header + trailer */
        assert_int_equal(inject(&p, wire, 20, &rx), 0);
        memcpy(bad, wire, n);
        bad[30] = 0x01; /* reserved bits of the auth word */
        assert_int_equal(inject(&p, bad, n, &rx), 0);
        memcpy(bad, wire, n);
        bad[n - 1] ^= 0x80; /* the tag */
        assert_int_equal(inject(&p, bad, n, &rx), 0);
        memcpy(bad, wire, n);
        bad[16] ^= 1; /* the header (seq) */
        assert_int_equal(inject(&p, bad, n, &rx), 0);
        memcpy(bad, wire, n);
        bad[n - trailer + RDPS_AUTH_OFF_COUNTER] ^= 1; /* the counter */
        assert_int_equal(inject(&p, bad, n, &rx), 0);
        memcpy(bad, wire, n);
        bad[n - trailer + RDPS_AUTH_OFF_TIME] ^= 1; /* the send time, by a second */
        assert_int_equal(inject(&p, bad, n, &rx), 0);
        struct rdps_auth_stats s = stats_of(p.b);
        assert_int_equal(s.short_frames, 2);
        assert_int_equal(s.unknown_key, 1);
        /* Four truncations (the time read from a shifted trailer may make them stale first),
         * tag, header, counter, time. */
        assert_int_equal(s.bad_tag + s.stale, 4 + 4);
        assert_true(s.bad_tag >= 4);
        assert_int_equal(rdps__auth_sender_count(p.b), 0);
        /* The undamaged frame still goes up, once. */
        assert_int_equal(inject(&p, wire, n, &rx), 1);
        p.b->ops->rx_release(p.b, &rx, 1);
        assert_int_equal(rdps__auth_sender_count(p.b), 1);
        pair_close(&p);
    }
}

/* A frame replayed from its sender's own address is dropped, DATA and control alike: each kind
 * has its window. */
static void test_replayed_frames_same_source(void **state)
{
    (void)state;
    struct rdps_rx_datagram rx;
    for (uint8_t type = 1; type <= 5; type++) {
        struct pair p;
        uint8_t wire[1024];
        pair_open(&p, key_a, 1, false, 0);
        uint32_t n = capture_one(&p, type, 32, wire);
        assert_int_equal(inject(&p, wire, n, &rx), 1);
        p.b->ops->rx_release(p.b, &rx, 1);
        assert_int_equal(inject(&p, wire, n, &rx), 0);
        assert_int_equal(stats_of(p.b).replayed, 1);
        /* Newer frames of the sender still go, and an old one, once, within the window. */
        uint8_t later[1024];
        uint32_t m = capture_one(&p, type, 32, later);
        assert_int_equal(send_one(&p, type, 32, 1, &rx), 1);
        p.b->ops->rx_release(p.b, &rx, 1);
        assert_int_equal(inject(&p, later, m, &rx), 1);
        p.b->ops->rx_release(p.b, &rx, 1);
        assert_int_equal(inject(&p, later, m, &rx), 0);
        assert_int_equal(stats_of(p.b).replayed, 2);
        pair_close(&p);
    }
}

/*
 * Finding 1 of the fourth review: a host without the key records a sender's frames and sends the
 * same bytes from its own QP (c). A receiver that knows the sender drops them at once (its prefix
 * from another address); one that never heard it (a fresh receiver, or one that evicted it) drops
 * them because the tag covers the address they were sealed for. Every frame type, both modes.
 */
static void test_replay_from_another_qp(void **state)
{
    (void)state;
    struct rdps_rx_datagram rx;
    for (int encrypt = 0; encrypt <= 1; encrypt++) {
        for (uint8_t type = 1; type <= 5; type++) {
            struct pair p;
            uint8_t wire[1024];
            pair_open(&p, key_a, 1, encrypt != 0, 0);
            uint32_t n = capture_one(&p, type, 32, wire); /* b did not see it: recorded only */
            assert_int_equal(inject_from(&p, p.c, wire, n, &rx), 0);
            struct rdps_auth_stats s = stats_of(p.b);
            assert_int_equal(s.bad_tag, 1);
            assert_int_equal(rdps__auth_sender_count(p.b), 0);
            /* b hears a; the recording from c is refused before any crypto. */
            assert_int_equal(send_one(&p, type, 32, 1, &rx), 1);
            p.b->ops->rx_release(p.b, &rx, 1);
            assert_int_equal(inject_from(&p, p.c, wire, n, &rx), 0);
            assert_int_equal(stats_of(p.b).replayed, 1);
            /* From its true address, the recorded frame is new to b: it goes up, once. */
            assert_int_equal(inject(&p, wire, n, &rx), 1);
            p.b->ops->rx_release(p.b, &rx, 1);
            assert_int_equal(inject_from(&p, p.c, wire, n, &rx), 0);
            assert_int_equal(inject(&p, wire, n, &rx), 0);
            s = stats_of(p.b);
            assert_int_equal(s.replayed, 3);
            assert_int_equal(s.bad_tag, 1);
            assert_int_equal(rdps__auth_sender_count(p.b), 1);
            pair_close(&p);
        }
    }
}

/*
 * Finding 7: freshness. A frame sealed more than max_age (30 s) from the receiver's clock, either
 * way, is dropped; so a control frame recorded once cannot be replayed after its sender was
 * evicted from the anti-replay table, or into a restarted receiver, once it is that old.
 */
static void test_stale_frames(void **state)
{
    (void)state;
    struct rdps_rx_datagram rx;
    struct pair p;
    uint8_t nak[1024], status[1024];
    fake_s = 1700000000;
    pair_open(&p, key_a, 1, false, 16);
    uint32_t n = capture_one(&p, 3, 24, nak);
    uint32_t m = capture_one(&p, 4, 16, status);
    assert_int_equal(inject(&p, nak, n, &rx), 1); /* b takes the NAK once */
    p.b->ops->rx_release(p.b, &rx, 1);
    /* 16 other senders push a out of b's table (16 entries). */
    for (int i = 0; i < 16; i++) {
        struct rdps_auth_config ca = auth_config(key_a, 1, false, 0);
        struct rdps_transport *fresh;
        assert_int_equal(rdps__auth_transport_create(p.a_in, &ca, &fresh), 0);
        struct rdps_transport *keep = p.a;
        p.a = fresh;
        assert_int_equal(send_one(&p, 2, 8, 0, &rx), 1);
        p.b->ops->rx_release(p.b, &rx, 1);
        fresh->inner = NULL;
        fresh->ops->destroy(fresh);
        p.a = keep;
    }
    assert_int_equal(stats_of(p.b).senders_evicted, 1);
    fake_s += 31;
    assert_int_equal(inject(&p, nak, n, &rx), 0); /* evicted, but 31 s old: stale */
    assert_int_equal(inject(&p, status, m, &rx), 0);
    assert_int_equal(stats_of(p.b).stale, 2);
    /* A restarted receiver (a new interceptor on b's endpoint) refuses them as well. */
    struct rdps_transport *b_in = p.b->inner;
    p.b->inner = NULL;
    p.b->ops->destroy(p.b);
    struct rdps_auth_config cb = auth_config(key_a, 1, false, 0);
    assert_int_equal(rdps__auth_transport_create(b_in, &cb, &p.b), 0);
    assert_int_equal(inject(&p, nak, n, &rx), 0);
    assert_int_equal(inject(&p, status, m, &rx), 0);
    assert_int_equal(stats_of(p.b).stale, 2);
    /* Fresh frames go; a sender whose clock is 31 s ahead of ours is as stale. */
    assert_int_equal(send_one(&p, 4, 16, 0, &rx), 1);
    p.b->ops->rx_release(p.b, &rx, 1);
    uint8_t ahead[1024];
    fake_s += 31;
    uint32_t k = capture_one(&p, 4, 16, ahead);
    fake_s -= 31;
    assert_int_equal(inject(&p, ahead, k, &rx), 0);
    fake_s += 2;
    assert_int_equal(inject(&p, status, m, &rx), 0); /* 33 s old now */
    assert_int_equal(stats_of(p.b).stale, 4);
    pair_close(&p);
    /* Out-of-range ages are refused at creation. */
    struct rdps_loopback_fabric *f;
    struct rdps_transport *ep, *t;
    assert_int_equal(rdps__loopback_fabric_create(&f), 0);
    assert_int_equal(rdps__loopback_create(f, NULL, &ep), 0);
    struct rdps_auth_config bad = auth_config(key_a, 1, false, 0);
    bad.max_age_ms = 1999;
    assert_int_equal(rdps__auth_transport_create(ep, &bad, &t), RDPS_EINVAL);
    bad.max_age_ms = 3600001;
    assert_int_equal(rdps__auth_transport_create(ep, &bad, &t), RDPS_EINVAL);
    ep->ops->destroy(ep);
    rdps__loopback_fabric_destroy(f);
}

/* The anti-replay table is bounded: the least recently heard sender makes room. */
static void test_sender_table_bounded(void **state)
{
    (void)state;
    struct pair p;
    struct rdps_rx_datagram rx;
    pair_open(&p, key_a, 1, false, 16);
    for (int i = 0; i < 40; i++) {
        /* A new interceptor on a's endpoint each time: a new random prefix, a new sender. */
        struct rdps_auth_config ca = auth_config(key_a, 1, false, 0);
        struct rdps_transport *fresh;
        assert_int_equal(rdps__auth_transport_create(p.a_in, &ca, &fresh), 0);
        struct rdps_transport *keep = p.a;
        p.a = fresh;
        assert_int_equal(send_one(&p, 2, 8, 0, &rx), 1);
        p.b->ops->rx_release(p.b, &rx, 1);
        fresh->inner = NULL; /* a_in stays alive for the next round */
        fresh->ops->destroy(fresh);
        p.a = keep;
    }
    assert_int_equal(rdps__auth_sender_count(p.b), 16);
    assert_int_equal(stats_of(p.b).senders_evicted, 40 - 16);
    pair_close(&p);
}

/* Sends from registered memory are sealed copies; the region's cookies complete at once. */
static void test_submit_mem_sealed_copy(void **state)
{
    (void)state;
    struct pair p;
    struct rdps_rx_datagram rx;
    pair_open(&p, key_a, 1, true, 0);
    static uint8_t ring[4096];
    struct rdps_tx_mem *m;
    assert_int_equal(rdps__transport_mem_register(p.a, ring, sizeof(ring), &m), 0);
    for (uint64_t cookie = 1; cookie <= 3; cookie++) {
        uint32_t len = make_frame(ring + 1000, 1, 300, (uint8_t)cookie);
        assert_int_equal(rdps__transport_submit_mem(p.a, m, 1000, len, &p.to_b, 1, cookie), 0);
        assert_int_equal(rdps__tx_mem_completed(m), cookie);
        assert_int_equal(ring[1000 + 28], 0); /* the ring itself is not touched */
        assert_int_equal(ring[1000 + H], (uint8_t)cookie);
        assert_int_equal(p.a->ops->flush(p.a), 0);
        assert_int_equal(p.b->ops->poll(p.b, &rx, 1), 1);
        assert_int_equal(rx.len, len);
        assert_memory_equal(rx.data + H, ring + 1000 + H, 300);
        p.b->ops->rx_release(p.b, &rx, 1);
    }
    uint32_t most = 1024 - RDPS_AUTH_TRAILER_LEN;
    assert_int_equal(rdps__transport_submit_mem(p.a, m, 0, most + 1, &p.to_b, 1, 4), RDPS_EMSGSIZE);
    assert_int_equal(rdps__transport_submit_mem(p.a, m, 4000, 100, &p.to_b, 1, 4), RDPS_EINVAL);
    assert_int_equal(rdps__transport_submit_mem(p.a, m, 0, 100, &p.to_b, 1, 3), RDPS_EINVAL);
    assert_int_equal(rdps__transport_mem_deregister(p.a, m), 0);
    pair_close(&p);
}

/* Rollover: b accepts the next key once added, a switches, b retires the old one. */
static void test_key_rollover(void **state)
{
    (void)state;
    struct pair p;
    struct rdps_rx_datagram rx;
    pair_open(&p, key_a, 1, false, 0);
    assert_int_equal(rdps__auth_key_use(p.a, 2), RDPS_ENOENT);
    assert_int_equal(rdps__auth_key_add(p.a, key_b, 2), 0);
    assert_int_equal(rdps__auth_key_add(p.a, key_b, 2), RDPS_EEXIST);
    assert_int_equal(rdps__auth_key_add(p.a, key_b, 3), RDPS_ENOSPC);
    assert_int_equal(rdps__auth_key_add(p.a, key_b, 0), RDPS_EINVAL);
    assert_int_equal(rdps__auth_key_use(p.a, 2), 0);
    assert_int_equal(rdps__auth_key_in_use(p.a), 2);
    assert_int_equal(send_one(&p, 2, 8, 0, &rx), 0); /* b does not have key 2 yet */
    assert_int_equal(stats_of(p.b).unknown_key, 1);
    assert_int_equal(rdps__auth_key_add(p.b, key_b, 2), 0);
    assert_int_equal(send_one(&p, 2, 8, 0, &rx), 1);
    p.b->ops->rx_release(p.b, &rx, 1);
    assert_int_equal(rdps__auth_key_use(p.a, 1), 0); /* back to the old key: still accepted */
    assert_int_equal(send_one(&p, 1, 8, 0, &rx), 1);
    p.b->ops->rx_release(p.b, &rx, 1);
    assert_int_equal(rdps__auth_key_remove(p.b, 1), RDPS_EBUSY); /* b sends under key 1 */
    assert_int_equal(rdps__auth_key_use(p.b, 2), 0);
    assert_int_equal(rdps__auth_key_remove(p.b, 1), 0);
    assert_int_equal(send_one(&p, 1, 8, 0, &rx), 0); /* key 1 is stale now */
    assert_int_equal(stats_of(p.b).unknown_key, 2);
    assert_int_equal(rdps__auth_key_use(p.a, 2), 0);
    assert_int_equal(send_one(&p, 1, 8, 0, &rx), 1);
    p.b->ops->rx_release(p.b, &rx, 1);
    assert_int_equal(rdps__auth_key_remove(p.b, 1), RDPS_ENOENT);
    pair_close(&p);
}

/*
 * Finding 6: a forked child that sends through an inherited interceptor must not reuse its
 * parent's nonces. The child seals one frame and reports its trailer; the parent seals its next
 * one: the two (prefix, counter) pairs differ, the child's prefix is new, the parent's unchanged.
 */
static void test_fork_draws_new_prefix(void **state)
{
    (void)state;
    struct pair p;
    struct rdps_rx_datagram rx;
    uint8_t parent_prefix[RDPS_AUTH_PREFIX_LEN], now_prefix[RDPS_AUTH_PREFIX_LEN];
    pair_open(&p, key_a, 1, false, 0);
    assert_int_equal(send_one(&p, 1, 8, 0, &rx), 1);
    p.b->ops->rx_release(p.b, &rx, 1);
    rdps__auth_send_prefix(p.a, parent_prefix);
    int pipefd[2];
    assert_int_equal(pipe(pipefd), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        uint8_t wire[1024];
        uint32_t n = capture_one(&p, 1, 8, wire);
        ssize_t w = write(pipefd[1], rdps__auth_trailer(wire, n), RDPS_AUTH_TRAILER_LEN);
        _exit(w == (ssize_t)RDPS_AUTH_TRAILER_LEN ? 0 : 1);
    }
    close(pipefd[1]);
    uint8_t child_trailer[RDPS_AUTH_TRAILER_LEN], wire[1024];
    assert_int_equal(read(pipefd[0], child_trailer, sizeof(child_trailer)),
                     (ssize_t)sizeof(child_trailer));
    close(pipefd[0]);
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    uint32_t n = capture_one(&p, 1, 8, wire);
    const uint8_t *mine = rdps__auth_trailer(wire, n);
    assert_memory_equal(mine, parent_prefix, RDPS_AUTH_PREFIX_LEN); /* the parent goes on */
    assert_memory_not_equal(child_trailer, parent_prefix, RDPS_AUTH_PREFIX_LEN);
    assert_memory_not_equal(child_trailer, mine, RDPS_AUTH_PREFIX_LEN + RDPS_AUTH_COUNTER_LEN);
    rdps__auth_send_prefix(p.a, now_prefix);
    assert_memory_equal(now_prefix, parent_prefix, RDPS_AUTH_PREFIX_LEN);
    pair_close(&p);
}

/*
 * A transport whose destinations see two different sources of ours (InfiniBand: a unicast AH
 * without a GRH shows our LID, a multicast one our GID): records each submit. The interceptor
 * seals one copy per source, each verifying under the source its destinations see.
 */
struct mixed_fake {
    struct rdps_transport base;
    uint8_t bufs[8][256];
    bool used[8];
    uint8_t sent[8][256];
    uint32_t sent_len[8];
    unsigned sent_dests[8];
    bool sent_no_grh[8];
    unsigned nsent;
};

static int mf_claim(struct rdps_transport *t, struct rdps_tx_buf *buf)
{
    struct mixed_fake *m = (struct mixed_fake *)t;
    for (uint32_t i = 0; i < 8; i++)
        if (!m->used[i]) {
            m->used[i] = true;
            *buf = (struct rdps_tx_buf){.data = m->bufs[i], .capacity = 256, .slot = i};
            return 0;
        }
    return RDPS_EAGAIN;
}

static void mf_abort(struct rdps_transport *t, struct rdps_tx_buf *buf)
{
    ((struct mixed_fake *)t)->used[buf->slot] = false;
}

static int mf_submit(struct rdps_transport *t, struct rdps_tx_buf *buf, uint32_t len,
                     const struct rdps_dest *const *dests, unsigned ndest)
{
    struct mixed_fake *m = (struct mixed_fake *)t;
    for (unsigned i = 1; i < ndest; i++) /* one submit never mixes the two */
        assert_int_equal(dests[i]->no_grh, dests[0]->no_grh);
    memcpy(m->sent[m->nsent], buf->data, len);
    m->sent_len[m->nsent] = len;
    m->sent_dests[m->nsent] = ndest;
    m->sent_no_grh[m->nsent++] = dests[0]->no_grh;
    m->used[buf->slot] = false;
    return 0;
}

static uint32_t mf_max_payload(struct rdps_transport *t)
{
    (void)t;
    return 256;
}

static const struct rdps_source mf_by_gid = {
    .gid = {0xfe, 0x80, [15] = 9}, .qpn = 77, .has_gid = 1};
static const struct rdps_source mf_by_lid = {.qpn = 77, .lid = 0x1234};

static int mf_self_source(struct rdps_transport *t, const struct rdps_dest *dest,
                          struct rdps_source *out)
{
    (void)t;
    *out = dest != NULL && dest->no_grh ? mf_by_lid : mf_by_gid;
    return 0;
}

static void mf_destroy(struct rdps_transport *t)
{
    (void)t;
}

static const struct rdps_transport_ops mixed_fake_ops = {
    .name = "mixed-fake",
    .max_payload = mf_max_payload,
    .claim = mf_claim,
    .abort = mf_abort,
    .submit = mf_submit,
    .destroy = mf_destroy,
    .self_source = mf_self_source,
};

static void test_mixed_destinations(void **state)
{
    (void)state;
    static struct mixed_fake fake;
    memset(&fake, 0, sizeof(fake));
    fake.base.ops = &mixed_fake_ops;
    struct rdps_transport *t;
    struct rdps_auth_config c = auth_config(key_a, 1, true, 0);
    assert_int_equal(rdps__auth_transport_create(&fake.base, &c, &t), 0);
    struct rdps_dest group = {.remote_qpn = 0xffffff}, uni1 = {.no_grh = true},
                     uni2 = {.no_grh = true};
    const struct rdps_dest *all[] = {&uni1, &group, &uni2};
    struct rdps_tx_buf buf;
    assert_int_equal(t->ops->claim(t, &buf), 0);
    uint32_t len = make_frame(buf.data, 1, 50, 7);
    assert_int_equal(t->ops->submit(t, &buf, len, all, 3), 0);
    assert_int_equal(fake.nsent, 2);
    unsigned lid_copies = 0;
    for (unsigned i = 0; i < 2; i++) {
        const struct rdps_source *src = fake.sent_no_grh[i] ? &mf_by_lid : &mf_by_gid;
        const struct rdps_source *wrong = fake.sent_no_grh[i] ? &mf_by_gid : &mf_by_lid;
        lid_copies += fake.sent_no_grh[i];
        assert_int_equal(fake.sent_dests[i], fake.sent_no_grh[i] ? 2 : 1);
        uint8_t subkey[32];
        uint8_t *f = fake.sent[i];
        rdps__auth_subkey(subkey, key_a, rdps__auth_trailer(f, fake.sent_len[i]));
        assert_int_equal(open_frame(f, fake.sent_len[i], subkey, wrong), -1);
        assert_int_equal(open_frame(f, fake.sent_len[i], subkey, src), 0);
        assert_int_equal(f[H], 7); /* decrypted: each copy was sealed from the plain frame */
    }
    assert_int_equal(lid_copies, 1);
    assert_memory_not_equal(rdps__auth_trailer(fake.sent[0], fake.sent_len[0]),
                            rdps__auth_trailer(fake.sent[1], fake.sent_len[1]), 24);
    for (unsigned i = 0; i < 8; i++)
        assert_false(fake.used[i]); /* every buffer given back */
    t->ops->destroy(t);
    /* A transport that cannot tell its source: no domain key over it. */
    struct mixed_fake blind;
    memset(&blind, 0, sizeof(blind));
    struct rdps_transport_ops blind_ops = mixed_fake_ops;
    blind_ops.self_source = NULL;
    blind.base.ops = &blind_ops;
    assert_int_equal(rdps__auth_transport_create(&blind.base, &c, &t), RDPS_ENOTSUP);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seal_is_xchacha20poly1305),
        cmocka_unit_test(test_replay_window),
        cmocka_unit_test(test_interceptor_round_trip),
        cmocka_unit_test(test_forgeries_dropped_before_state),
        cmocka_unit_test(test_replayed_frames_same_source),
        cmocka_unit_test(test_replay_from_another_qp),
        cmocka_unit_test(test_stale_frames),
        cmocka_unit_test(test_sender_table_bounded),
        cmocka_unit_test(test_submit_mem_sealed_copy),
        cmocka_unit_test(test_key_rollover),
        cmocka_unit_test(test_fork_draws_new_prefix),
        cmocka_unit_test(test_mixed_destinations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
