/* SPDX-License-Identifier: BSD-2-Clause */
/* test_auth.c - authenticated domains below the API: the frame transform against libsodium's own
 * XChaCha20-Poly1305, the anti-replay window, and the interceptor over loopback endpoints. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <sodium.h>
#include <string.h>

#include "rdps_auth.h"
#include "rdps_loopback.h"

static const uint8_t key_a[32] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16,
                                  17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32};
static const uint8_t key_b[32] = {0xb0, 0xb1, 0xb2, [31] = 0xbf};

/* A plausible frame: version 2, `type`, 40-byte header, `payload` bytes of pattern. */
static uint32_t make_frame(uint8_t *f, uint8_t type, uint32_t payload, uint8_t fill)
{
    memset(f, 0, 40);
    f[0] = 2;
    f[1] = type;
    f[4] = 7; /* session */
    f[8] = 9; /* topic */
    for (uint32_t i = 0; i < payload; i++)
        f[40 + i] = (uint8_t)(fill + i);
    return 40 + payload;
}

/* The bytes on the wire are XChaCha20-Poly1305-IETF's: libsodium's own API verifies them. */
static void test_seal_is_xchacha20poly1305(void **state)
{
    (void)state;
    assert_true(sodium_init() >= 0);
    uint8_t prefix[16], subkey[32], f[256], copy[256], nonce[24];
    for (int i = 0; i < 16; i++)
        prefix[i] = (uint8_t)(0xa0 + i);
    rdps__auth_subkey(subkey, key_a, prefix);
    for (int encrypt = 0; encrypt <= 1; encrypt++) {
        uint32_t len = make_frame(f, 1, 100, 3);
        memcpy(copy, f, len);
        uint32_t sealed =
            rdps__auth_seal(f, len, subkey, prefix, 0x1122334455667788ull, 77, encrypt != 0);
        assert_int_equal(sealed, len + RDPS_AUTH_TRAILER_LEN);
        assert_int_equal(rdps__auth_word(f), 77u | (encrypt ? RDPS_AUTH_WORD_ENCRYPTED : 0));
        assert_int_equal(rdps__auth_counter(f, sealed), 0x1122334455667788ull);
        memcpy(nonce, rdps__auth_trailer(f, sealed), 24);
        const uint8_t *tag = rdps__auth_trailer(f, sealed) + 24;
        if (encrypt) {
            assert_memory_not_equal(f + 40, copy + 40, 100); /* the payload is ciphertext */
            uint8_t plain[100];
            assert_int_equal(crypto_aead_xchacha20poly1305_ietf_decrypt_detached(
                                 plain, NULL, f + 40, 100, tag, f, 40, nonce, key_a),
                             0);
            assert_memory_equal(plain, copy + 40, 100);
        } else {
            assert_memory_equal(f + 40, copy + 40, 100);
            uint8_t none;
            assert_int_equal(crypto_aead_xchacha20poly1305_ietf_decrypt_detached(
                                 NULL, NULL, &none, 0, tag, f, len, nonce, key_a),
                             0);
        }
        assert_int_equal(rdps__auth_open(f, sealed, subkey), 0);
        assert_memory_equal(f + 40, copy + 40, 100); /* decrypted in place */
        /* Any flipped bit of header, payload or trailer fails. */
        for (uint32_t bit = 0; bit < sealed * 8; bit += 13) {
            uint32_t l2 =
                rdps__auth_seal(memcpy(f, copy, len), len, subkey, prefix, 5, 77, encrypt != 0);
            f[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            /* The receiver derives the subkey from the prefix the frame carries. */
            uint8_t derived[32];
            rdps__auth_subkey(derived, key_a, rdps__auth_trailer(f, l2));
            assert_int_equal(rdps__auth_open(f, l2, derived), -1);
        }
        /* Another key's subkey fails. */
        uint8_t other[32];
        rdps__auth_subkey(other, key_b, prefix);
        uint32_t l3 =
            rdps__auth_seal(memcpy(f, copy, len), len, subkey, prefix, 6, 77, encrypt != 0);
        assert_int_equal(rdps__auth_open(f, l3, other), -1);
    }
}

static void test_replay_window(void **state)
{
    (void)state;
    struct rdps_auth_window w = {0};
    assert_true(rdps__auth_window_update(&w, 1000));
    assert_false(rdps__auth_window_update(&w, 1000)); /* the same counter again */
    assert_true(rdps__auth_window_update(&w, 1002));
    assert_true(rdps__auth_window_update(&w, 1001)); /* late, inside the window */
    assert_false(rdps__auth_window_check(&w, 1001));
    assert_true(rdps__auth_window_update(&w, 1002 - RDPS_AUTH_REPLAY_WINDOW + 1));
    assert_false(rdps__auth_window_check(&w, 1002 - RDPS_AUTH_REPLAY_WINDOW)); /* too old */
    /* A jump far ahead forgets every earlier counter: all of them are below the window. */
    assert_true(rdps__auth_window_update(&w, 1000000));
    assert_false(rdps__auth_window_check(&w, 1002));
    assert_true(rdps__auth_window_check(&w, 1000000 - 1));
    /* Across word boundaries, every counter once, in an order shuffled within the window. */
    struct rdps_auth_window v = {0};
    for (uint64_t base = 0; base < 4096; base += 64)
        for (uint64_t k = 0; k < 64; k++) {
            uint64_t c = (1ull << 63) + base + ((k * 37) % 64);
            assert_true(rdps__auth_window_update(&v, c));
            assert_false(rdps__auth_window_update(&v, c));
        }
}

/* Two loopback endpoints, each behind an authenticating interceptor. */
struct pair {
    struct rdps_loopback_fabric *fabric;
    struct rdps_transport *a_in, *b_in, *a, *b;
    const struct rdps_dest *to_b;
};

static void pair_open(struct pair *p, const uint8_t *key_for_a, uint32_t id_a, bool encrypt_a,
                      uint32_t senders_b)
{
    memset(p, 0, sizeof(*p));
    struct rdps_loopback_config lc = {.max_payload = 1024, .send_slots = 16, .recv_slots = 64};
    assert_int_equal(rdps__loopback_fabric_create(&p->fabric), 0);
    assert_int_equal(rdps__loopback_create(p->fabric, &lc, &p->a_in), 0);
    assert_int_equal(rdps__loopback_create(p->fabric, &lc, &p->b_in), 0);
    assert_int_equal(rdps__loopback_dest(p->b_in, &p->to_b), 0);
    struct rdps_auth_config ca = {.key = key_for_a, .key_id = id_a, .encrypt = encrypt_a};
    struct rdps_auth_config cb = {.key = key_a, .key_id = 1, .max_senders = senders_b};
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

/* Injects raw bytes as a datagram from a's inner endpoint (what a forger on the fabric sends). */
static int inject(struct pair *p, const uint8_t *bytes, uint32_t len, struct rdps_rx_datagram *rx)
{
    struct rdps_tx_buf buf;
    assert_int_equal(p->a_in->ops->poll(p->a_in, rx, 0), 0);
    assert_int_equal(p->a_in->ops->claim(p->a_in, &buf), 0);
    memcpy(buf.data, bytes, len);
    assert_int_equal(p->a_in->ops->submit(p->a_in, &buf, len, &p->to_b, 1), 0);
    assert_int_equal(p->a_in->ops->flush(p->a_in), 0);
    return p->b->ops->poll(p->b, rx, 1);
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
            assert_int_equal(rx.len, 240); /* the trailer is stripped */
            assert_int_equal(rx.data[1], type);
            assert_int_equal(rdps__auth_word(rx.data), 0); /* as a keyless frame reads */
            for (uint32_t i = 0; i < 200; i++)
                assert_int_equal(rx.data[40 + i], (uint8_t)(type + i));
            p.b->ops->rx_release(p.b, &rx, 1);
        }
        /* A frame filling the whole datagram (max_payload) goes; one byte more is refused. */
        assert_int_equal(send_one(&p, 1, 1024 - 40 - 40, 9, &rx), 1);
        p.b->ops->rx_release(p.b, &rx, 1);
        assert_int_equal(p.a->ops->claim(p.a, &buf), 0);
        assert_int_equal(p.a->ops->submit(p.a, &buf, 1024 - 40 + 1, &p.to_b, 1), RDPS_EMSGSIZE);
        struct rdps_auth_stats s = stats_of(p.b);
        assert_int_equal(s.bad_tag + s.short_frames + s.unknown_key + s.unsigned_frames, 0);
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
        assert_int_equal(n, 40 + 64 + 40);
        for (uint32_t cut = 1; cut <= 40; cut += 13) /* 4 truncated trailers or tags */
            assert_int_equal(inject(&p, wire, n - cut, &rx), 0);
        assert_int_equal(inject(&p, wire, 79, &rx), 0); /* shorter than header + trailer */
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
        bad[n - 20] ^= 1; /* the counter */
        assert_int_equal(inject(&p, bad, n, &rx), 0);
        struct rdps_auth_stats s = stats_of(p.b);
        assert_int_equal(s.short_frames, 2);
        assert_int_equal(s.unknown_key, 1);
        assert_int_equal(s.bad_tag, 4 + 3); /* four truncations, tag, header, counter */
        assert_int_equal(rdps__auth_sender_count(p.b), 0);
        /* The undamaged frame still goes up (DATA: a replay is the engine's duplicate). */
        assert_int_equal(inject(&p, wire, n, &rx), 1);
        p.b->ops->rx_release(p.b, &rx, 1);
        assert_int_equal(rdps__auth_sender_count(p.b), 1);
        pair_close(&p);
    }
}

/* A replayed control frame is dropped; DATA passes (the engine drops its duplicates). */
static void test_replayed_control_frames(void **state)
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
        int again = inject(&p, wire, n, &rx);
        if (type == 1) {
            assert_int_equal(again, 1);
            p.b->ops->rx_release(p.b, &rx, 1);
            assert_int_equal(stats_of(p.b).replayed, 0);
        } else {
            assert_int_equal(again, 0);
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
        }
        pair_close(&p);
    }
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
        struct rdps_auth_config ca = {.key = key_a, .key_id = 1};
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
        assert_int_equal(ring[1000 + 40], (uint8_t)cookie);
        assert_int_equal(p.a->ops->flush(p.a), 0);
        assert_int_equal(p.b->ops->poll(p.b, &rx, 1), 1);
        assert_int_equal(rx.len, len);
        assert_memory_equal(rx.data + 40, ring + 1040, 300);
        p.b->ops->rx_release(p.b, &rx, 1);
    }
    assert_int_equal(rdps__transport_submit_mem(p.a, m, 0, 984 + 1, &p.to_b, 1, 4), RDPS_EMSGSIZE);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seal_is_xchacha20poly1305),
        cmocka_unit_test(test_replay_window),
        cmocka_unit_test(test_interceptor_round_trip),
        cmocka_unit_test(test_forgeries_dropped_before_state),
        cmocka_unit_test(test_replayed_control_frames),
        cmocka_unit_test(test_sender_table_bounded),
        cmocka_unit_test(test_submit_mem_sealed_copy),
        cmocka_unit_test(test_key_rollover),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
