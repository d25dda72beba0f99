/* SPDX-License-Identifier: BSD-2-Clause */
/* test_md_packet.c - MoldUDP64-style packets: byte layout, packer/unpacker round trips, flush by
 * size and by delay, heartbeat and end of session, and hostile datagrams rejected by reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "md_packet.h"
#include "mdutil_test_rng.h"

static struct md_packer_config packer_config(bool times, uint32_t max_datagram)
{
    struct md_packer_config cfg = {
        .first_seq = 1,
        .max_datagram = max_datagram,
        .max_msg_len = 50,
        .max_delay_ns = 50000,
        .intended_times = times,
    };
    memcpy(cfg.session, "SESSION123", MD_SESSION_LEN);
    return cfg;
}

/* Unpacks a copy of exactly len bytes on the heap, so ASan sees any read past the datagram. */
static int unpack_copy(struct md_unpacker *u, const uint8_t *pkt, size_t len,
                       struct md_packet_view *v, uint8_t **copy)
{
    *copy = malloc(len ? len : 1);
    assert_non_null(*copy);
    memcpy(*copy, pkt, len);
    return md_unpack(u, *copy, len, v);
}

/* ---- the exact bytes ---- */

static void test_layout_plain_moldudp64(void **state)
{
    (void)state;
    struct md_packer p;
    struct md_packer_config cfg = packer_config(false, 1400);
    cfg.first_seq = 7;
    assert_int_equal(md_packer_init(&p, &cfg), 0);
    assert_int_equal(md_packer_add(&p, "AB", 2, 100, 1000), MD_PACK_ADDED);
    assert_int_equal(md_packer_add(&p, "C", 1, 200, 1001), MD_PACK_ADDED);
    const uint8_t *pkt;
    size_t len;
    assert_int_equal(md_packer_flush(&p, &pkt, &len), 27);
    static const uint8_t expect[27] = {
        'S', 'E', 'S', 'S', 'I', 'O', 'N', '1', '2', '3', /* session */
        0,   0,   0,   0,   0,   0,   0,   7,             /* sequence of "AB" */
        0,   2,                                           /* count */
        0,   2,   'A', 'B',                               /* length, message */
        0,   1,   'C',
    };
    assert_int_equal(len, sizeof(expect));
    assert_memory_equal(pkt, expect, sizeof(expect));
    assert_int_equal(md_packer_next_seq(&p), 9);
}

static void test_layout_intended_times(void **state)
{
    (void)state;
    struct md_packer p;
    struct md_packer_config cfg = packer_config(true, 1400);
    cfg.first_seq = 0x0102030405060708ull;
    assert_int_equal(md_packer_init(&p, &cfg), 0);
    assert_int_equal(md_packer_add(&p, "AB", 2, 0x1122334455667788ull, 5), MD_PACK_ADDED);
    assert_int_equal(md_packer_add(&p, "C", 1, 0x1122334455667788ull + 0x01020304, 6),
                     MD_PACK_ADDED);
    const uint8_t *pkt;
    size_t len;
    assert_int_equal(md_packer_flush(&p, &pkt, &len), 43);
    static const uint8_t expect[43] = {
        'S',  'E',  'S',  'S',  'I',  'O',  'N',  '1',  '2', '3', /* session */
        0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,           /* sequence */
        0,    2,                                                  /* count */
        0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,           /* intended_ns of "AB" */
        0,    2,    'A',  'B',  0,    1,    'C',                  /* MoldUDP64 blocks */
        0,    0,    0,    0,                                      /* delta of "AB" */
        0x01, 0x02, 0x03, 0x04,                                   /* delta of "C" */
    };
    assert_int_equal(len, sizeof(expect));
    assert_memory_equal(pkt, expect, sizeof(expect));
}

/* ---- round trips ---- */

struct sent {
    uint8_t bytes[50];
    uint16_t len;
    uint64_t intended_ns;
};

static void roundtrip(bool times, uint32_t max_datagram, size_t n_msgs)
{
    struct sent *sent = calloc(n_msgs, sizeof(*sent));
    assert_non_null(sent);
    struct md_packer *p = malloc(sizeof(*p));
    assert_non_null(p);
    struct md_packer_config cfg = packer_config(times, max_datagram);
    cfg.first_seq = 1000;
    assert_int_equal(md_packer_init(p, &cfg), 0);
    struct md_unpacker u;
    md_unpacker_init(&u, &(struct md_unpacker_config){.max_msg_len = 50, .intended_times = times});

    size_t next_expected = 0, packets = 0;
    uint64_t t = 1000000;
    for (size_t i = 0; i <= n_msgs; i++) {
        bool flush = i == n_msgs;
        if (i < n_msgs) {
            sent[i].len = (uint16_t)(1 + rng_next() % 50);
            for (uint16_t b = 0; b < sent[i].len; b++)
                sent[i].bytes[b] = (uint8_t)rng_next();
            t += rng_next() % 3000;
            sent[i].intended_ns = t;
            int rc = md_packer_add(p, sent[i].bytes, sent[i].len, t, t);
            assert_true(rc == MD_PACK_ADDED || rc == MD_PACK_FLUSH);
            assert_true(md_packer_pending(p) >= 1);
            flush = rc == MD_PACK_FLUSH;
        }
        if (!flush)
            continue;
        const uint8_t *pkt;
        size_t len;
        if (md_packer_flush(p, &pkt, &len) == 0)
            continue;
        packets++;
        assert_true(len <= max_datagram);
        struct md_packet_view v;
        uint8_t *copy;
        assert_int_equal(unpack_copy(&u, pkt, len, &v, &copy), 0);
        assert_int_equal(v.kind, MD_PACKET_DATA);
        assert_memory_equal(v.session, "SESSION123", MD_SESSION_LEN);
        assert_int_equal(v.seq, 1000 + next_expected);
        /* A full packet has no room for one more longest message; the last one may. */
        size_t per_msg_extra = times ? MD_DELTA_LEN : 0;
        if (i < n_msgs)
            assert_true(len + 2 + 50 + per_msg_extra > max_datagram);
        struct md_msg m;
        while (md_packet_next(&v, &m)) {
            const struct sent *s = &sent[next_expected];
            assert_int_equal(m.seq, 1000 + next_expected);
            assert_int_equal(m.len, s->len);
            assert_memory_equal(m.data, s->bytes, s->len);
            assert_int_equal(m.intended_ns, times ? s->intended_ns : 0);
            next_expected++;
        }
        free(copy);
    }
    assert_int_equal(next_expected, n_msgs);
    assert_int_equal(u.messages, n_msgs);
    assert_int_equal(u.packets, packets);
    assert_int_equal(p->counters.messages, n_msgs);
    assert_int_equal(p->counters.packets, packets);
    assert_int_equal(md_packer_next_seq(p), 1000 + n_msgs);
    free(p);
    free(sent);
}

static void test_roundtrip(void **state)
{
    (void)state;
    roundtrip(false, 1400, 20000);
    roundtrip(true, 1400, 20000);
    roundtrip(true, 4096, 20000);
    roundtrip(false, MD_PACKET_MAX, 20000);
    roundtrip(true, MD_PACKET_MIN + 50 - 1, 500); /* one message per packet */
}

/* ---- flushing ---- */

static void test_flush_by_size(void **state)
{
    (void)state;
    struct md_packer p;
    struct md_packer_config cfg = packer_config(false, 64);
    cfg.max_msg_len = 10;
    assert_int_equal(md_packer_init(&p, &cfg), 0);
    uint8_t msg[10] = {0};
    /* 20 + 12 + 12 = 44: a third 12-byte block fits (56), a fourth would not (68 > 64). */
    assert_int_equal(md_packer_add(&p, msg, 10, 0, 0), MD_PACK_ADDED);
    assert_int_equal(md_packer_add(&p, msg, 10, 0, 0), MD_PACK_ADDED);
    assert_int_equal(md_packer_add(&p, msg, 10, 0, 0), MD_PACK_FLUSH);
    /* Not flushed: a shorter one still fits (56 + 8 = 64), a longest one does not. */
    assert_int_equal(md_packer_add(&p, msg, 7, 0, 0), -ENOSPC);
    assert_int_equal(md_packer_add(&p, msg, 6, 0, 0), MD_PACK_FLUSH);
    assert_int_equal(md_packer_add(&p, msg, 1, 0, 0), -ENOSPC);
    assert_int_equal(p.counters.full_no_room, 2);
    const uint8_t *pkt;
    size_t len;
    assert_int_equal(md_packer_flush(&p, &pkt, &len), 64);
    assert_int_equal(md_packer_pending(&p), 0);
    assert_int_equal(md_packer_add(&p, msg, 7, 0, 0), MD_PACK_ADDED);
    assert_int_equal(md_packer_flush(&p, &pkt, &len), 29);
    assert_int_equal(md_packer_flush(&p, &pkt, &len), 0); /* nothing waits */
    assert_int_equal(len, 0);
}

static void test_flush_by_delay(void **state)
{
    (void)state;
    struct md_packer p;
    struct md_packer_config cfg = packer_config(true, 1400);
    assert_int_equal(md_packer_init(&p, &cfg), 0);
    assert_false(md_packer_due(&p, 0));
    assert_false(md_packer_due(&p, UINT64_MAX));
    assert_int_equal(md_packer_deadline(&p), UINT64_MAX);
    /* The clock starts at the first message's add, whatever its intended time. */
    assert_int_equal(md_packer_add(&p, "x", 1, 500, 1000), MD_PACK_ADDED);
    assert_int_equal(md_packer_deadline(&p), 51000);
    assert_int_equal(md_packer_add(&p, "y", 1, 40000, 40000), MD_PACK_ADDED);
    assert_int_equal(md_packer_deadline(&p), 51000);
    assert_false(md_packer_due(&p, 50999));
    assert_true(md_packer_due(&p, 51000));
    const uint8_t *pkt;
    size_t len;
    assert_true(md_packer_flush(&p, &pkt, &len) > 0);
    assert_false(md_packer_due(&p, 51000));
    assert_int_equal(md_packer_deadline(&p), UINT64_MAX);
    assert_int_equal(md_packer_add(&p, "z", 1, 60000, 70000), MD_PACK_ADDED);
    assert_int_equal(md_packer_deadline(&p), 120000);
    assert_false(md_packer_due(&p, 119999));
    assert_true(md_packer_due(&p, 120000));
}

static void test_intended_time_range_starts_a_packet(void **state)
{
    (void)state;
    struct md_packer p;
    struct md_packer_config cfg = packer_config(true, 1400);
    assert_int_equal(md_packer_init(&p, &cfg), 0);
    assert_int_equal(md_packer_add(&p, "a", 1, 1000, 0), MD_PACK_ADDED);
    assert_int_equal(md_packer_add(&p, "b", 1, 999, 0), -ENOSPC); /* before the first */
    assert_int_equal(md_packer_add(&p, "b", 1, 1000ull + UINT32_MAX + 1, 0), -ENOSPC);
    assert_int_equal(md_packer_add(&p, "b", 1, 1000ull + UINT32_MAX, 0), MD_PACK_ADDED);
    const uint8_t *pkt;
    size_t len;
    md_packer_flush(&p, &pkt, &len);
    assert_int_equal(md_packer_add(&p, "c", 1, 999, 0), MD_PACK_ADDED); /* a new packet */
    /* Without the extension intended times do not matter. */
    cfg = packer_config(false, 1400);
    assert_int_equal(md_packer_init(&p, &cfg), 0);
    assert_int_equal(md_packer_add(&p, "a", 1, 1000, 0), MD_PACK_ADDED);
    assert_int_equal(md_packer_add(&p, "b", 1, 1, 0), MD_PACK_ADDED);
}

static void test_heartbeat_and_end_of_session(void **state)
{
    (void)state;
    for (int times = 0; times <= 1; times++) {
        struct md_packer p;
        struct md_packer_config cfg = packer_config(times, 1400);
        cfg.first_seq = 41;
        assert_int_equal(md_packer_init(&p, &cfg), 0);
        struct md_unpacker u;
        md_unpacker_init(&u,
                         &(struct md_unpacker_config){.max_msg_len = 50, .intended_times = times});
        const uint8_t *pkt;
        size_t len;
        size_t hlen = MD_HEADER_LEN + (times ? MD_TIMES_LEN : 0);
        struct md_packet_view v;
        struct md_msg m;
        uint8_t *copy;

        assert_int_equal(md_packer_heartbeat(&p, false, 777, &pkt, &len), (int)hlen);
        assert_int_equal(unpack_copy(&u, pkt, len, &v, &copy), 0);
        free(copy);
        assert_int_equal(v.kind, MD_PACKET_HEARTBEAT);
        assert_int_equal(v.seq, 41);
        assert_int_equal(v.count, 0);
        assert_int_equal(v.intended_ns, times ? 777 : 0);
        assert_false(md_packet_next(&v, &m));

        assert_int_equal(md_packer_add(&p, "m", 1, 800, 800), MD_PACK_ADDED);
        assert_int_equal(md_packer_heartbeat(&p, false, 900, &pkt, &len), -EBUSY);
        assert_int_equal(md_packer_heartbeat(&p, true, 900, &pkt, &len), -EBUSY);
        md_packer_flush(&p, &pkt, &len);

        assert_int_equal(md_packer_heartbeat(&p, true, 1000, &pkt, &len), (int)hlen);
        assert_int_equal(pkt[18], 0xFF);
        assert_int_equal(pkt[19], 0xFF);
        assert_int_equal(unpack_copy(&u, pkt, len, &v, &copy), 0);
        free(copy);
        assert_int_equal(v.kind, MD_PACKET_END_OF_SESSION);
        assert_int_equal(v.seq, 42);
        assert_int_equal(v.count, 0);
        assert_false(md_packet_next(&v, &m));
        assert_int_equal(md_packer_add(&p, "m", 1, 1100, 1100), -EPIPE);
        assert_int_equal(u.heartbeats, 1);
        assert_int_equal(u.ends, 1);
        assert_int_equal(p.counters.heartbeats, 2);
    }
}

static void test_bad_config_and_lengths(void **state)
{
    (void)state;
    struct md_packer p;
    struct md_packer_config cfg = packer_config(true, 1400);
    cfg.max_datagram = MD_PACKET_MIN - 1;
    assert_int_equal(md_packer_init(&p, &cfg), -EINVAL);
    cfg.max_datagram = MD_PACKET_MAX + 1;
    assert_int_equal(md_packer_init(&p, &cfg), -EINVAL);
    cfg = packer_config(true, 100);
    cfg.max_msg_len = 100 - 28 - 2 - 4 + 1; /* a longest message would never fit */
    assert_int_equal(md_packer_init(&p, &cfg), -EINVAL);
    cfg.max_msg_len--;
    assert_int_equal(md_packer_init(&p, &cfg), 0);
    cfg.max_msg_len = 0;
    assert_int_equal(md_packer_init(&p, &cfg), -EINVAL);
    cfg = packer_config(true, 1400);
    cfg.max_delay_ns = 0;
    assert_int_equal(md_packer_init(&p, &cfg), -EINVAL);
    cfg = packer_config(true, 1400);
    assert_int_equal(md_packer_init(&p, &cfg), 0);
    uint8_t big[51] = {0};
    assert_int_equal(md_packer_add(&p, big, 0, 0, 0), -EINVAL);
    assert_int_equal(md_packer_add(&p, big, 51, 0, 0), -EINVAL);
    assert_int_equal(p.counters.bad_length, 2);
    assert_int_equal(md_packer_pending(&p), 0);
}

/* ---- hostile datagrams ---- */

static size_t build_valid(bool times, uint8_t *out)
{
    struct md_packer p;
    struct md_packer_config cfg = packer_config(times, 1400);
    assert_int_equal(md_packer_init(&p, &cfg), 0);
    assert_int_equal(md_packer_add(&p, "ABCDE", 5, 10, 10), MD_PACK_ADDED);
    assert_int_equal(md_packer_add(&p, "FG", 2, 20, 20), MD_PACK_ADDED);
    assert_int_equal(md_packer_add(&p, "HIJ", 3, 30, 30), MD_PACK_ADDED);
    const uint8_t *pkt;
    size_t len;
    md_packer_flush(&p, &pkt, &len);
    memcpy(out, pkt, len);
    return len;
}

static void expect_reject(struct md_unpacker *u, const uint8_t *pkt, size_t len,
                          enum md_unpack_error why)
{
    struct md_packet_view v;
    uint8_t *copy;
    uint64_t before = u->rejected[why];
    int rc = unpack_copy(u, pkt, len, &v, &copy);
    free(copy);
    if (rc != -(int)why)
        fail_msg("expected %s, got %d (%s)", md_unpack_error_name((int)why), rc,
                 md_unpack_error_name(rc));
    assert_int_equal(u->rejected[why], before + 1);
}

static void test_hostile_datagrams(void **state)
{
    (void)state;
    for (int times = 0; times <= 1; times++) {
        struct md_unpacker u;
        md_unpacker_init(&u,
                         &(struct md_unpacker_config){.max_msg_len = 50, .intended_times = times});
        uint8_t good[256], bad[256];
        size_t len = build_valid(times, good);
        size_t blocks = MD_HEADER_LEN + (times ? MD_TIMES_LEN : 0); /* first length field */

        /* Every proper prefix is refused; only the whole datagram passes. */
        for (size_t cut = 0; cut < len; cut++) {
            struct md_packet_view v;
            uint8_t *copy;
            int rc = unpack_copy(&u, good, cut, &v, &copy);
            free(copy);
            assert_true(rc < 0);
            if (cut < blocks)
                assert_int_equal(rc, -MD_UNPACK_SHORT);
        }
        struct md_packet_view v;
        uint8_t *copy;
        assert_int_equal(unpack_copy(&u, good, len, &v, &copy), 0);
        free(copy);

        /* The last message cut short (times: the trailer still whole, so blocks overrun). */
        if (!times)
            expect_reject(&u, good, len - 1, MD_UNPACK_TRUNCATED);
        /* Count one more than there is: the lengths run out (with the extension, into the
         * trailer, which the extra delta moved forward). */
        memcpy(bad, good, len);
        bad[19] = 4;
        expect_reject(&u, bad, len, MD_UNPACK_TRUNCATED);
        /* ... and without the extension, that lie read as more blocks runs off the end. */
        memcpy(bad, good, len);
        bad[19] = 200;
        expect_reject(&u, bad, len, MD_UNPACK_TRUNCATED);
        /* Count one less: bytes left over. */
        memcpy(bad, good, len);
        bad[19] = 2;
        expect_reject(&u, bad, len, MD_UNPACK_TRAILING);
        /* A zero length. */
        memcpy(bad, good, len);
        bad[blocks] = 0;
        bad[blocks + 1] = 0;
        expect_reject(&u, bad, len, MD_UNPACK_ZERO_LENGTH);
        /* A length above max_msg_len, one past the datagram, and 0xFFFF. */
        memcpy(bad, good, len);
        bad[blocks + 1] = 51;
        expect_reject(&u, bad, len, MD_UNPACK_TOO_LONG);
        u.cfg.max_msg_len = 0xFFFF;
        bad[blocks + 1] = 50;
        expect_reject(&u, bad, len, MD_UNPACK_TRUNCATED);
        bad[blocks] = 0xFF;
        bad[blocks + 1] = 0xFF;
        expect_reject(&u, bad, len, MD_UNPACK_TRUNCATED);
        u.cfg.max_msg_len = 50;
        /* A length that swallows the next block exactly: count and bytes disagree. */
        memcpy(bad, good, len);
        bad[blocks + 1] = 5 + 2 + 2;
        expect_reject(&u, bad, len, MD_UNPACK_TRUNCATED);
        /* Heartbeat and end of session with bytes after them. */
        memcpy(bad, good, len);
        bad[18] = 0;
        bad[19] = 0;
        expect_reject(&u, bad, len, MD_UNPACK_TRAILING);
        bad[18] = 0xFF;
        bad[19] = 0xFF;
        expect_reject(&u, bad, len, MD_UNPACK_TRAILING);
        /* Sequence wrap: the third message would be 2^64. */
        memcpy(bad, good, len);
        memset(bad + 10, 0xFF, 8);
        bad[17] = 0xFE;
        expect_reject(&u, bad, len, MD_UNPACK_SEQ_WRAP);
        bad[17] = 0xFD; /* ... it ends at 2^64 - 1: fine */
        assert_int_equal(unpack_copy(&u, bad, len, &v, &copy), 0);
        free(copy);
        if (times) {
            /* intended_ns + delta past 2^64 - 1. */
            memcpy(bad, good, len);
            memset(bad + 20, 0xFF, 8);
            expect_reject(&u, bad, len, MD_UNPACK_TIME_WRAP);
            /* A trailer longer than what follows the header. */
            memcpy(bad, good, len);
            bad[19] = 10;
            expect_reject(&u, bad, 28 + 8, MD_UNPACK_TRUNCATED);
        }
        assert_int_equal(u.packets, 2);
    }
    assert_string_equal(md_unpack_error_name(-MD_UNPACK_TRUNCATED), "truncated");
    assert_string_equal(md_unpack_error_name(0), "?");
    assert_string_equal(md_unpack_error_name(MD_UNPACK__COUNT), "?");
}

/* Random corruption: whatever md_unpack accepts, its messages lie inside the datagram. */
static void test_random_corruption(void **state)
{
    (void)state;
    rng_state = 99;
    for (int times = 0; times <= 1; times++) {
        struct md_unpacker u;
        md_unpacker_init(&u,
                         &(struct md_unpacker_config){.max_msg_len = 50, .intended_times = times});
        uint8_t good[256];
        size_t len = build_valid(times, good);
        for (int round = 0; round < 20000; round++) {
            uint8_t bad[256];
            memcpy(bad, good, len);
            size_t bad_len = len - rng_next() % 4;
            for (int k = 1 + (int)(rng_next() % 3); k > 0; k--)
                bad[rng_next() % bad_len] = (uint8_t)rng_next();
            struct md_packet_view v;
            uint8_t *copy;
            int rc = unpack_copy(&u, bad, bad_len, &v, &copy);
            if (rc == 0) {
                struct md_msg m;
                size_t bytes = 0;
                uint32_t n = 0;
                while (md_packet_next(&v, &m)) {
                    assert_true(m.data >= copy && m.data + m.len <= copy + bad_len);
                    assert_true(m.len >= 1 && m.len <= 50);
                    bytes += 2u + m.len;
                    n++;
                }
                assert_int_equal(n, v.count);
                assert_int_equal(MD_HEADER_LEN + (times ? MD_TIMES_LEN : 0) + bytes +
                                     (times ? n * MD_DELTA_LEN : 0),
                                 bad_len);
            } else {
                assert_true(rc < 0 && -rc < MD_UNPACK__COUNT);
            }
            free(copy);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout_plain_moldudp64),
        cmocka_unit_test(test_layout_intended_times),
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_flush_by_size),
        cmocka_unit_test(test_flush_by_delay),
        cmocka_unit_test(test_intended_time_range_starts_a_packet),
        cmocka_unit_test(test_heartbeat_and_end_of_session),
        cmocka_unit_test(test_bad_config_and_lengths),
        cmocka_unit_test(test_hostile_datagrams),
        cmocka_unit_test(test_random_corruption),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
