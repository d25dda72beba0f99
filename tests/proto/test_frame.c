/* SPDX-License-Identifier: BSD-2-Clause */
/* test_frame.c - wire format: byte-exact layout, round trips with extreme values, every reject
 * reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <string.h>

#include <rdps/rdps.h>

#include "rdps_endian.h"
#include "rdps_frame.h"

#define HDR RDPS_FRAME_HEADER_LEN

static void test_endian_helpers(void **state)
{
    (void)state;
    uint8_t b[8];
    rdps__put_le16(b, 0x1234);
    assert_int_equal(b[0], 0x34);
    assert_int_equal(b[1], 0x12);
    assert_int_equal(rdps__get_le16(b), 0x1234);
    rdps__put_le32(b, 0xA1B2C3D4u);
    assert_memory_equal(b, "\xD4\xC3\xB2\xA1", 4);
    assert_int_equal(rdps__get_le32(b), 0xA1B2C3D4u);
    rdps__put_le64(b, 0x0102030405060708ull);
    assert_memory_equal(b, "\x08\x07\x06\x05\x04\x03\x02\x01", 8);
    assert_true(rdps__get_le64(b) == 0x0102030405060708ull);
}

/* The version 3 layout, pinned field by field: a change here is a wire-format change. */
static void test_header_layout_offsets(void **state)
{
    (void)state;
    assert_int_equal(RDPS_FRAME_VERSION, 3);
    assert_int_equal(RDPS_FRAME_HEADER_LEN, 48);
    assert_int_equal(RDPS_FRAME_OFF_VERSION, 0);
    assert_int_equal(RDPS_FRAME_OFF_TYPE, 1);
    assert_int_equal(RDPS_FRAME_OFF_FLAGS, 2);
    assert_int_equal(RDPS_FRAME_OFF_SESSION_ID, 4);
    assert_int_equal(RDPS_FRAME_OFF_TOPIC_ID, 8);
    assert_int_equal(RDPS_FRAME_OFF_SEQ, 16);
    assert_int_equal(RDPS_FRAME_OFF_MSG_LEN, 20);
    assert_int_equal(RDPS_FRAME_OFF_FRAG_OFFSET, 24);
    assert_int_equal(RDPS_FRAME_OFF_RESERVED, 28);
    assert_int_equal(RDPS_FRAME_OFF_TIMESTAMP_NS, 32);
    assert_int_equal(RDPS_FRAME_OFF_ORDINAL, 40);
    assert_int_equal(RDPS_FRAME_OFF_COUNT, 44);
    assert_int_equal(RDPS_FRAME_NAK_OFF_RECEIVER_ID, 48);
    assert_int_equal(RDPS_FRAME_NAK_OFF_RANGE_COUNT, 52);
    assert_int_equal(RDPS_FRAME_NAK_OFF_RESERVED, 54);
    assert_int_equal(RDPS_FRAME_NAK_OFF_RANGES, 56);
    assert_int_equal(RDPS_FRAME_STATUS_OFF_RECEIVER_ID, 48);
    assert_int_equal(RDPS_FRAME_STATUS_OFF_CONSUMED_SEQ, 52);
    assert_int_equal(RDPS_FRAME_STATUS_OFF_WINDOW, 56);
    assert_int_equal(RDPS_FRAME_STATUS_OFF_ECHO_DELAY, 60);
    assert_int_equal(RDPS_FRAME_STATUS_LEN, 64);
    assert_int_equal(RDPS_FRAME_HB_OFF_PARITY_K, 48);
    assert_int_equal(RDPS_FRAME_HB_PARITY_LEN, 60);
}

/* The layout written by hand from the specification, independent of the encoder. */
static void test_data_header_byte_exact(void **state)
{
    (void)state;
    static const uint8_t expected[48] = {
        0x03,                                           /* version 3 */
        0x01,                                           /* type DATA */
        0x0B, 0x00,                                     /* flags BEGIN|END|RELIABLE */
        0x44, 0x33, 0x22, 0x11,                         /* session 0x11223344 */
        0x88, 0x77, 0x66, 0x55, 0xDD, 0xCC, 0xBB, 0xAA, /* topic 0xAABBCCDD55667788 */
        0xFF, 0xFF, 0xFF, 0xFF,                         /* seq 0xFFFFFFFF */
        0x05, 0x00, 0x00, 0x00,                         /* msg_len 5 */
        0x00, 0x00, 0x00, 0x00,                         /* frag_offset 0 */
        0x00, 0x00, 0x00, 0x00,                         /* reserved */
        0xEF, 0xCD, 0xAB, 0x89, 0x67, 0x45, 0x23, 0x01, /* timestamp */
        0x78, 0x56, 0x34, 0x12,                         /* ordinal 0x12345678 */
        0x01, 0x00, 0x00, 0x00,                         /* count 1 */
    };
    uint8_t buf[64];
    memset(buf, 0xEE, sizeof(buf));
    memcpy(buf + HDR, "hello", 5);
    uint32_t n =
        rdps__frame_put_data_header(buf, 0x11223344u, 0xAABBCCDD55667788ull, 0xFFFFFFFFu, 5, 0, 5,
                                    0x0123456789ABCDEFull, RDPS_FRAME_F_RELIABLE, 0x12345678u, 1);
    assert_int_equal(n, 53);
    assert_memory_equal(buf, expected, 48);
    assert_memory_equal(buf + HDR, "hello", 5);
    assert_int_equal(buf[53], 0xEE);

    struct rdps_frame_view v;
    assert_int_equal(rdps__frame_decode(expected, sizeof(expected), NULL, &v),
                     RDPS_FRAME_BEGIN_END_MISMATCH); /* header says 5 bytes but carries 0 */
    assert_int_equal(rdps__frame_decode(buf, n, NULL, &v), RDPS_FRAME_OK);
    assert_int_equal(v.hdr.type, RDPS_FRAME_DATA);
    assert_int_equal(v.hdr.flags, 0x0B);
    assert_int_equal(v.hdr.session_id, 0x11223344u);
    assert_true(v.hdr.topic_id == 0xAABBCCDD55667788ull); /* all 64 bits */
    assert_int_equal(v.hdr.seq, 0xFFFFFFFFu);
    assert_int_equal(v.hdr.msg_len, 5);
    assert_int_equal(v.hdr.frag_offset, 0);
    assert_true(v.hdr.timestamp_ns == 0x0123456789ABCDEFull);
    assert_int_equal(v.hdr.ordinal, 0x12345678u);
    assert_int_equal(v.hdr.count, 1);
    assert_ptr_equal(v.payload, buf + HDR);
    assert_int_equal(v.payload_len, 5);
}

/* A batch of three messages ("ab", "", "xyz"), byte by byte. */
static void test_batch_byte_exact(void **state)
{
    (void)state;
    static const uint8_t expected[48 + 11] = {
        0x03, 0x01, 0x03, 0x00, 0x07, 0x00, 0x00, 0x00, /* v3 DATA BEGIN|END, session 7 */
        0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* topic 9 */
        0x64, 0x00, 0x00, 0x00, 0x0B, 0x00, 0x00, 0x00, /* seq 100, msg_len 11 (the payload) */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* frag_offset, reserved */
        0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* timestamp 5 */
        0xFF, 0xFF, 0xFF, 0xFF, 0x03, 0x00, 0x00, 0x00, /* ordinal 0xFFFFFFFF, count 3 */
        0x02, 0x00, 'a',  'b',                          /* record: 2 bytes */
        0x00, 0x00,                                     /* record: 0 bytes */
        0x03, 0x00, 'x',  'y',  'z',                    /* record: 3 bytes */
    };
    uint8_t buf[128];
    memcpy(buf + HDR, expected + HDR, 11);
    assert_int_equal(rdps__frame_put_data_header(buf, 7, 9, 100, 11, 0, 11, 5, 0, 0xFFFFFFFFu, 3),
                     sizeof(expected));
    assert_memory_equal(buf, expected, sizeof(expected));
    struct rdps_frame_view v;
    assert_int_equal(rdps__frame_decode(expected, sizeof(expected), NULL, &v), RDPS_FRAME_OK);
    assert_int_equal(v.hdr.count, 3);
    assert_int_equal(v.hdr.ordinal, 0xFFFFFFFFu);
    /* The ordinals around it: a run before it ends at its first, one after it starts past its
     * last (wrapping). */
    assert_int_equal(rdps__frame_ordinal_before(&v.hdr), 0xFFFFFFFFu);
    assert_int_equal(rdps__frame_ordinal_after(&v.hdr), 2);
}

static void test_nak_and_status_byte_exact(void **state)
{
    (void)state;
    static const uint8_t nak_expected[64] = {
        0x03, 0x03, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, /* v3 NAK, session 1 */
        0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, /* topic 0x0100000000000002 */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* seq 0, msg_len 0 */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* frag_offset, reserved */
        0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* timestamp 9 */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* ordinal, count */
        0x07, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, /* receiver 7, 1 range, reserved */
        0xFE, 0xFF, 0xFF, 0xFF, 0x03, 0x00, 0x00, 0x00, /* start 0xFFFFFFFE count 3 */
    };
    static const uint8_t status_expected[64] = {
        0x03, 0x04, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, /* v3 STATUS, session 1 */
        0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, /* topic 0x0100000000000002 */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* seq, msg_len */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* frag_offset, reserved */
        0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* timestamp 9 */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* ordinal, count */
        0x07, 0x00, 0x00, 0x00, 0x10, 0x32, 0x54, 0x76, /* receiver 7, consumed 0x76543210 */
        0x00, 0x01, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, /* window 256, no echo */
    };
    static const uint8_t heartbeat_expected[48] = {
        0x03, 0x02, 0x08, 0x00, 0x01, 0x00, 0x00, 0x00, /* v3 HEARTBEAT, RELIABLE, session 1 */
        0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, /* topic 0x0100000000000002 */
        0x10, 0x32, 0x54, 0x76, 0x00, 0x00, 0x00, 0x80, /* next seq 0x76543210, retained 2^31 */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* frag_offset, reserved */
        0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* timestamp 9 */
        0x44, 0x33, 0x22, 0x11, 0x88, 0x77, 0x66, 0x55, /* next ordinal, the trail's ordinal */
    };
    const uint64_t topic = 0x0100000000000002ull;
    uint8_t buf[64];
    struct rdps_seq_range r = {0xFFFFFFFEu, 3};
    assert_int_equal(rdps__frame_encode_nak(buf, sizeof(buf), 1, topic, 7, &r, 1, 9), 64);
    assert_memory_equal(buf, nak_expected, 64);
    assert_int_equal(rdps__frame_encode_status(buf, sizeof(buf), 1, topic, 7, 0x76543210u, 256, 9),
                     64);
    assert_memory_equal(buf, status_expected, 64);
    assert_int_equal(rdps__frame_encode_status_echo(buf, sizeof(buf), 1, topic, 7, 0x76543210u, 256,
                                                    0x01020304u, 9),
                     64);
    assert_int_equal(buf[60], 0x04); /* echo_delay_us, little-endian */
    assert_int_equal(buf[63], 0x01);
    assert_int_equal(rdps__frame_encode_heartbeat_reliable(buf, sizeof(buf), 1, topic, 0x76543210u,
                                                           1u << 31, 0x11223344u, 0x55667788u, 9),
                     48);
    assert_memory_equal(buf, heartbeat_expected, 48);
    struct rdps_frame_view v;
    assert_int_equal(rdps__frame_decode(nak_expected, 64, NULL, &v), RDPS_FRAME_OK);
    assert_true(v.hdr.topic_id == topic);
    assert_int_equal(v.receiver_id, 7);
    assert_int_equal(rdps__frame_decode(status_expected, 64, NULL, &v), RDPS_FRAME_OK);
    assert_int_equal(v.consumed_seq, 0x76543210u);
    assert_int_equal(rdps__frame_decode(heartbeat_expected, 48, NULL, &v), RDPS_FRAME_OK);
    assert_int_equal(v.retained, 1u << 31);
    assert_int_equal(v.hdr.ordinal, 0x11223344u);
    assert_int_equal(v.trail_ordinal, 0x55667788u);
}

static void test_round_trip_data_extremes(void **state)
{
    (void)state;
    static uint8_t buf[1024];
    struct rdps_frame_limits lim;
    rdps__frame_limits_default(&lim);
    lim.max_msg_len = UINT32_MAX;
    struct {
        uint32_t session;
        uint64_t topic;
        uint32_t seq, msg_len, off, plen;
        uint64_t ts;
        uint16_t flags;
    } cases[] = {
        {1, 1, 0, 0, 0, 0, 0, 0},
        {UINT32_MAX, UINT64_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX - 100, 100, UINT64_MAX,
         RDPS_FRAME_F_RETRANSMIT | RDPS_FRAME_F_RELIABLE},
        {7, 9, 0x80000000u, 1000, 0, 500, 1, RDPS_FRAME_F_RETRANSMIT},
        {7, 9, 12, 1000, 500, 400, 2, 0},
        {7, 9, 13, 1000, 900, 100, 3, RDPS_FRAME_F_RELIABLE},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        for (uint32_t k = 0; k < cases[i].plen; k++)
            buf[HDR + k] = (uint8_t)(k * 7 + i);
        uint32_t n = rdps__frame_put_data_header(
            buf, cases[i].session, cases[i].topic, cases[i].seq, cases[i].msg_len, cases[i].off,
            cases[i].plen, cases[i].ts, cases[i].flags, cases[i].seq,
            rdps__frame_one_count(cases[i].msg_len, cases[i].off, cases[i].plen));
        assert_int_equal(n, HDR + cases[i].plen);
        struct rdps_frame_view v;
        assert_int_equal(rdps__frame_decode(buf, n, &lim, &v), RDPS_FRAME_OK);
        assert_int_equal(v.hdr.session_id, cases[i].session);
        assert_true(v.hdr.topic_id == cases[i].topic);
        assert_int_equal(v.hdr.seq, cases[i].seq);
        assert_int_equal(v.hdr.msg_len, cases[i].msg_len);
        assert_int_equal(v.hdr.frag_offset, cases[i].off);
        assert_true(v.hdr.timestamp_ns == cases[i].ts);
        assert_int_equal(v.payload_len, cases[i].plen);
        assert_ptr_equal(v.payload, buf + HDR);
        uint16_t want = cases[i].flags;
        if (cases[i].off == 0)
            want |= RDPS_FRAME_F_BEGIN;
        if ((uint64_t)cases[i].off + cases[i].plen == cases[i].msg_len)
            want |= RDPS_FRAME_F_END;
        assert_int_equal(v.hdr.flags, want);
    }
}

static void test_round_trip_control_frames(void **state)
{
    (void)state;
    uint8_t buf[1024];
    struct rdps_frame_view v;

    assert_int_equal(rdps__frame_encode_heartbeat(buf, sizeof(buf), UINT32_MAX, UINT64_MAX,
                                                  UINT32_MAX, UINT32_MAX, UINT64_MAX,
                                                  RDPS_FRAME_F_RELIABLE),
                     HDR);
    assert_int_equal(rdps__frame_decode(buf, HDR, NULL, &v), RDPS_FRAME_OK);
    assert_int_equal(v.hdr.type, RDPS_FRAME_HEARTBEAT);
    assert_int_equal(v.hdr.flags, RDPS_FRAME_F_RELIABLE);
    assert_int_equal(v.hdr.session_id, UINT32_MAX);
    assert_true(v.hdr.topic_id == UINT64_MAX);
    assert_int_equal(v.hdr.seq, UINT32_MAX);
    assert_true(v.hdr.timestamp_ns == UINT64_MAX);
    assert_int_equal(v.payload_len, 0);
    assert_int_equal(v.retained, 0);

    /* A reliable heartbeat's retained count, 0..2^31. */
    static const uint32_t retained_values[] = {0, 1, 4096, 0x7FFFFFFFu, RDPS_FRAME_MAX_RETAINED};
    for (unsigned i = 0; i < sizeof(retained_values) / sizeof(retained_values[0]); i++) {
        uint32_t retained = retained_values[i];
        assert_int_equal(rdps__frame_encode_heartbeat_reliable(buf, sizeof(buf), 3, 4, 7, retained,
                                                               7, (7) - (retained), 5),
                         HDR);
        assert_int_equal(rdps__frame_decode(buf, HDR, NULL, &v), RDPS_FRAME_OK);
        assert_int_equal(v.hdr.flags, RDPS_FRAME_F_RELIABLE);
        assert_int_equal(v.hdr.seq, 7);
        assert_int_equal(v.retained, retained);
        assert_int_equal(v.hdr.msg_len, retained);
    }

    struct rdps_seq_range ranges[RDPS_FRAME_NAK_MAX_RANGES];
    for (unsigned i = 0; i < RDPS_FRAME_NAK_MAX_RANGES; i++) {
        ranges[i].start = UINT32_MAX - i * 1000;
        ranges[i].count = i == 0 ? RDPS_FRAME_NAK_MAX_RANGE_COUNT : i + 1;
    }
    int n = rdps__frame_encode_nak(buf, sizeof(buf), 5, 6, UINT32_MAX, ranges,
                                   RDPS_FRAME_NAK_MAX_RANGES, UINT64_MAX);
    assert_int_equal(n, HDR + 8 + 8 * RDPS_FRAME_NAK_MAX_RANGES);
    assert_int_equal(rdps__frame_decode(buf, (size_t)n, NULL, &v), RDPS_FRAME_OK);
    assert_int_equal(v.hdr.type, RDPS_FRAME_NAK);
    assert_int_equal(v.hdr.session_id, 5);
    assert_int_equal(v.hdr.topic_id, 6);
    assert_int_equal(v.receiver_id, UINT32_MAX);
    assert_int_equal(v.nak_range_count, RDPS_FRAME_NAK_MAX_RANGES);
    for (unsigned i = 0; i < RDPS_FRAME_NAK_MAX_RANGES; i++) {
        struct rdps_seq_range r = rdps__frame_nak_range(&v, i);
        assert_int_equal(r.start, ranges[i].start);
        assert_int_equal(r.count, ranges[i].count);
    }

    n = rdps__frame_encode_status(buf, sizeof(buf), 5, 0, UINT32_MAX, UINT32_MAX, UINT32_MAX,
                                  UINT64_MAX);
    assert_int_equal(n, RDPS_FRAME_STATUS_LEN);
    assert_int_equal(rdps__frame_decode(buf, (size_t)n, NULL, &v), RDPS_FRAME_OK);
    assert_int_equal(v.hdr.type, RDPS_FRAME_STATUS);
    assert_int_equal(v.receiver_id, UINT32_MAX);
    assert_int_equal(v.consumed_seq, UINT32_MAX);
    assert_int_equal(v.window, UINT32_MAX);
    assert_int_equal(v.echo_delay_us, RDPS_FRAME_NO_ECHO);
    assert_true(v.hdr.timestamp_ns == UINT64_MAX);
    /* Any echo delay decodes, including 0. */
    static const uint32_t delays[] = {0, 1, 0x7FFFFFFFu, 0xFFFFFFFEu};
    for (unsigned i = 0; i < sizeof(delays) / sizeof(delays[0]); i++) {
        n = rdps__frame_encode_status_echo(buf, sizeof(buf), 5, 6, 1, 2, 3, delays[i], 77);
        assert_int_equal(n, RDPS_FRAME_STATUS_LEN);
        assert_int_equal(rdps__frame_decode(buf, (size_t)n, NULL, &v), RDPS_FRAME_OK);
        assert_int_equal(v.echo_delay_us, delays[i]);
        assert_int_equal(v.consumed_seq, 2);
        assert_int_equal(v.window, 3);
        assert_true(v.hdr.timestamp_ns == 77);
    }

    static const uint8_t body[] = {0x0A, 0x03, 'a', 'b', 'c'};
    n = rdps__frame_encode_announce(buf, sizeof(buf), 77, 0, 0xFFFFFFFFu, body, sizeof(body), 42);
    assert_int_equal(n, HDR + (int)sizeof(body));
    assert_int_equal(rdps__frame_decode(buf, (size_t)n, NULL, &v), RDPS_FRAME_OK);
    assert_int_equal(v.hdr.type, RDPS_FRAME_ANNOUNCE);
    assert_int_equal(v.hdr.session_id, 77);
    assert_int_equal(v.hdr.topic_id, 0);
    assert_int_equal(v.hdr.seq, 0xFFFFFFFFu);
    assert_int_equal(v.payload_len, sizeof(body));
    assert_memory_equal(v.payload, body, sizeof(body));
    /* Empty announce body. */
    n = rdps__frame_encode_announce(buf, sizeof(buf), 77, 3, 1, NULL, 0, 42);
    assert_int_equal(n, HDR);
    assert_int_equal(rdps__frame_decode(buf, HDR, NULL, &v), RDPS_FRAME_OK);

    /* put_header writes reserved as 0 whatever the buffer held. */
    memset(buf, 0xFF, HDR);
    struct rdps_frame_header h = {
        .type = RDPS_FRAME_ANNOUNCE, .session_id = 3, .topic_id = 0x8000000000000001ull, .seq = 4};
    assert_int_equal(rdps__frame_put_header(buf, sizeof(buf), &h), HDR);
    assert_int_equal(rdps__get_le32(buf + RDPS_FRAME_OFF_RESERVED), 0);
    assert_int_equal(rdps__frame_decode(buf, HDR, NULL, &v), RDPS_FRAME_OK);
    assert_int_equal(v.hdr.seq, 4);
    assert_true(v.hdr.topic_id == 0x8000000000000001ull);
}

static void test_encoder_capacity_and_argument_checks(void **state)
{
    (void)state;
    uint8_t buf[64];
    memset(buf, 0, sizeof(buf));
    struct rdps_seq_range r = {1, 1};
    struct rdps_seq_range zero = {1, 0};
    struct rdps_frame_header h = {.type = RDPS_FRAME_DATA};
    assert_int_equal(rdps__frame_put_header(buf, HDR - 1, &h), RDPS_ENOSPC);
    assert_int_equal(rdps__frame_encode_heartbeat(buf, HDR - 1, 1, 1, 0, 0, 0, 0), RDPS_ENOSPC);
    assert_int_equal(rdps__frame_encode_heartbeat(buf, HDR, 0, 1, 0, 0, 0, 0), RDPS_EINVAL);
    assert_int_equal(rdps__frame_encode_heartbeat(buf, HDR, 1, 0, 0, 0, 0, 0), RDPS_EINVAL);
    assert_int_equal(rdps__frame_encode_heartbeat(buf, HDR, 1, 1, 0, 0, 0, RDPS_FRAME_F_BEGIN),
                     RDPS_EINVAL);
    assert_int_equal(rdps__frame_encode_nak(buf, 63, 1, 1, 1, &r, 1, 0), RDPS_ENOSPC);
    assert_int_equal(rdps__frame_encode_nak(buf, 64, 1, 1, 1, &r, 0, 0), RDPS_EINVAL);
    assert_int_equal(rdps__frame_encode_nak(buf, 64, 1, 1, 1, &zero, 1, 0), RDPS_EINVAL);
    assert_int_equal(rdps__frame_encode_nak(buf, 64, 0, 1, 1, &r, 1, 0), RDPS_EINVAL);
    assert_int_equal(rdps__frame_encode_nak(buf, 64, 1, 1, 1, &r, RDPS_FRAME_NAK_MAX_RANGES + 1, 0),
                     RDPS_EINVAL);
    assert_int_equal(rdps__frame_encode_status(buf, 63, 1, 1, 1, 1, 1, 0), RDPS_ENOSPC);
    assert_int_equal(rdps__frame_encode_status(buf, 64, 0, 1, 1, 1, 1, 0), RDPS_EINVAL);
    assert_int_equal(rdps__frame_encode_status_echo(buf, 63, 1, 1, 1, 1, 1, 0, 0), RDPS_ENOSPC);
    assert_int_equal(rdps__frame_encode_status_echo(buf, 64, 0, 1, 1, 1, 1, 0, 0), RDPS_EINVAL);
    assert_int_equal(
        rdps__frame_encode_heartbeat_reliable(buf, HDR - 1, 1, 1, 0, 0, 0, (0) - (0), 0),
        RDPS_ENOSPC);
    assert_int_equal(rdps__frame_encode_heartbeat_reliable(buf, HDR, 0, 1, 0, 0, 0, (0) - (0), 0),
                     RDPS_EINVAL);
    assert_int_equal(rdps__frame_encode_heartbeat_reliable(buf, HDR, 1, 0, 0, 0, 0, (0) - (0), 0),
                     RDPS_EINVAL);
    assert_int_equal(rdps__frame_encode_heartbeat_reliable(buf, HDR, 1, 1, 0,
                                                           RDPS_FRAME_MAX_RETAINED + 1, 0,
                                                           (0) - (RDPS_FRAME_MAX_RETAINED + 1), 0),
                     RDPS_EINVAL);
    assert_int_equal(rdps__frame_encode_announce(buf, HDR + 3, 1, 0, 0, "abcd", 4, 0), RDPS_ENOSPC);
    assert_int_equal(rdps__frame_encode_announce(buf, 64, 1, 0, 0, NULL, 4, 0), RDPS_EINVAL);
    assert_int_equal(rdps__frame_encode_announce(buf, 64, 0, 0, 0, "abcd", 4, 0), RDPS_EINVAL);
}

static void test_reject_names_are_generated(void **state)
{
    (void)state;
    assert_string_equal(rdps__frame_reject_name(RDPS_FRAME_OK), "OK");
    assert_string_equal(rdps__frame_reject_name(RDPS_FRAME_SHORT), "SHORT");
    assert_string_equal(rdps__frame_reject_name(RDPS_FRAME_BODY_TOO_LARGE), "BODY_TOO_LARGE");
    assert_string_equal(rdps__frame_reject_name(RDPS_FRAME_REJECT_COUNT), "UNKNOWN");
    assert_string_equal(rdps__frame_reject_text((enum rdps_frame_reject) - 1),
                        "unknown reject reason");
    for (int i = 0; i < RDPS_FRAME_REJECT_COUNT; i++) {
        assert_true(strlen(rdps__frame_reject_name((enum rdps_frame_reject)i)) > 0);
        assert_true(strlen(rdps__frame_reject_text((enum rdps_frame_reject)i)) > 0);
        for (int j = i + 1; j < RDPS_FRAME_REJECT_COUNT; j++)
            assert_string_not_equal(rdps__frame_reject_name((enum rdps_frame_reject)i),
                                    rdps__frame_reject_name((enum rdps_frame_reject)j));
    }
}

/* A valid DATA fragment in buf: 1000-byte message, bytes 100..199. */
static size_t make_data(uint8_t *buf)
{
    memset(buf + HDR, 0x5A, 100);
    return rdps__frame_put_data_header(buf, 1, 2, 3, 1000, 100, 100, 4, 0, 3,
                                       rdps__frame_one_count(1000, 100, 100));
}

static enum rdps_frame_reject decode(const uint8_t *buf, size_t len)
{
    struct rdps_frame_view v;
    return rdps__frame_decode(buf, len, NULL, &v);
}

static void test_reject_short(void **state)
{
    (void)state;
    uint8_t buf[256];
    size_t n = make_data(buf);
    assert_int_equal(decode(buf, n), RDPS_FRAME_OK);
    for (size_t len = 0; len < HDR; len++)
        assert_int_equal(decode(buf, len), RDPS_FRAME_SHORT);
}

static void test_reject_bad_version(void **state)
{
    (void)state;
    uint8_t buf[256];
    size_t n = make_data(buf);
    buf[0] = 0;
    assert_int_equal(decode(buf, n), RDPS_FRAME_BAD_VERSION);
    buf[0] = 2; /* rdps 1.0-1.2: a 40-byte header without ordinal and count */
    assert_int_equal(decode(buf, n), RDPS_FRAME_BAD_VERSION);
    buf[0] = 4;
    assert_int_equal(decode(buf, n), RDPS_FRAME_BAD_VERSION);
    buf[0] = 0xFF;
    assert_int_equal(decode(buf, n), RDPS_FRAME_BAD_VERSION);
}

/*
 * A version 1 frame (32-byte header, 32-bit topic id) as a peer built before the topic id was
 * widened sends it: rejected as BAD_VERSION, never read with the version 2 layout.
 */
static void test_reject_version_1_frame(void **state)
{
    (void)state;
    static const uint8_t v1_data[37] = {
        0x01, 0x01, 0x03, 0x00, 0x44, 0x33, 0x22, 0x11, /* v1 DATA BEGIN|END, session */
        0x88, 0x77, 0x66, 0x55, 0x07, 0x00, 0x00, 0x00, /* topic 0x55667788, seq 7 */
        0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* msg_len 5, frag_offset 0 */
        0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* timestamp 9 */
        'h',  'e',  'l',  'l',  'o',
    };
    static const uint8_t v1_heartbeat[40] = {
        0x01, 0x02, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, /* v1 HEARTBEAT, session 1 */
        0x02, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, /* topic 2, next seq 5 */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* msg_len, frag_offset */
        0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* timestamp 9 */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* (8 more bytes: as long as v2's) */
    };
    assert_int_equal(decode(v1_data, sizeof(v1_data)), RDPS_FRAME_BAD_VERSION);
    /* Checked before the length: a 32-byte version 1 heartbeat is not "short". */
    assert_int_equal(decode(v1_heartbeat, 32), RDPS_FRAME_BAD_VERSION);
    assert_int_equal(decode(v1_heartbeat, 1), RDPS_FRAME_BAD_VERSION);
    assert_int_equal(decode(v1_heartbeat, sizeof(v1_heartbeat)), RDPS_FRAME_BAD_VERSION);
    /* The same bytes with only the version byte changed are not a valid version 2 frame
     * either: the layouts differ, so the version byte is what tells them apart. */
    uint8_t copy[40];
    memcpy(copy, v1_heartbeat, sizeof(copy));
    copy[0] = RDPS_FRAME_VERSION;
    assert_int_not_equal(decode(copy, sizeof(copy)), RDPS_FRAME_OK);
}

/* The reserved word (offset 28) must be 0 in every frame type. */
static void test_reject_nonzero_reserved(void **state)
{
    (void)state;
    uint8_t buf[256];
    struct rdps_seq_range r = {1, 1};
    static const uint32_t values[] = {1, 0x80000000u, UINT32_MAX};
    for (unsigned i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        size_t n = make_data(buf);
        rdps__put_le32(buf + RDPS_FRAME_OFF_RESERVED, values[i]);
        assert_int_equal(decode(buf, n), RDPS_FRAME_NONZERO_FIELD);
        /* The single-datagram fast path too. */
        n = rdps__frame_put_data_header(buf, 1, 2, 3, 100, 0, 100, 4, 0, 3,
                                        rdps__frame_one_count(100, 0, 100));
        assert_int_equal(decode(buf, n), RDPS_FRAME_OK);
        rdps__put_le32(buf + RDPS_FRAME_OFF_RESERVED, values[i]);
        assert_int_equal(decode(buf, n), RDPS_FRAME_NONZERO_FIELD);
        int len =
            rdps__frame_encode_heartbeat_reliable(buf, sizeof(buf), 1, 1, 5, 9, 5, (5) - (9), 0);
        rdps__put_le32(buf + RDPS_FRAME_OFF_RESERVED, values[i]);
        assert_int_equal(decode(buf, (size_t)len), RDPS_FRAME_NONZERO_FIELD);
        len = rdps__frame_encode_nak(buf, sizeof(buf), 1, 1, 1, &r, 1, 0);
        rdps__put_le32(buf + RDPS_FRAME_OFF_RESERVED, values[i]);
        assert_int_equal(decode(buf, (size_t)len), RDPS_FRAME_NONZERO_FIELD);
        len = rdps__frame_encode_status(buf, sizeof(buf), 1, 1, 1, 1, 1, 0);
        rdps__put_le32(buf + RDPS_FRAME_OFF_RESERVED, values[i]);
        assert_int_equal(decode(buf, (size_t)len), RDPS_FRAME_NONZERO_FIELD);
        len = rdps__frame_encode_announce(buf, sizeof(buf), 1, 0, 0, NULL, 0, 0);
        rdps__put_le32(buf + RDPS_FRAME_OFF_RESERVED, values[i]);
        assert_int_equal(decode(buf, (size_t)len), RDPS_FRAME_NONZERO_FIELD);
    }
}

static void test_reject_bad_type(void **state)
{
    (void)state;
    uint8_t buf[256];
    size_t n = make_data(buf);
    buf[1] = 0;
    assert_int_equal(decode(buf, n), RDPS_FRAME_BAD_TYPE);
    buf[1] = 7;
    assert_int_equal(decode(buf, n), RDPS_FRAME_BAD_TYPE);
    buf[1] = 0xFF;
    assert_int_equal(decode(buf, n), RDPS_FRAME_BAD_TYPE);
}

static void test_reject_bad_flags(void **state)
{
    (void)state;
    uint8_t buf[256];
    size_t n = make_data(buf);
    for (int bit = 4; bit < 16; bit++) {
        rdps__put_le16(buf + RDPS_FRAME_OFF_FLAGS,
                       (uint16_t)(1u << bit | RDPS_FRAME_F_BEGIN | RDPS_FRAME_F_END));
        assert_int_equal(decode(buf, n), RDPS_FRAME_BAD_FLAGS);
    }
    /* Heartbeats accept RELIABLE only; NAKs RETRANSMIT only (their repairs were overtaken);
     * STATUS and ANNOUNCE no flags. */
    rdps__frame_encode_heartbeat(buf, sizeof(buf), 1, 1, 5, 5, 0, 0);
    rdps__put_le16(buf + RDPS_FRAME_OFF_FLAGS, RDPS_FRAME_F_RETRANSMIT);
    assert_int_equal(decode(buf, HDR), RDPS_FRAME_BAD_FLAGS);
    rdps__frame_encode_status(buf, sizeof(buf), 1, 1, 1, 1, 1, 0);
    rdps__put_le16(buf + RDPS_FRAME_OFF_FLAGS, RDPS_FRAME_F_RELIABLE);
    assert_int_equal(decode(buf, 64), RDPS_FRAME_BAD_FLAGS);
    struct rdps_seq_range r = {1, 1};
    rdps__frame_encode_nak(buf, sizeof(buf), 1, 1, 1, &r, 1, 0);
    rdps__put_le16(buf + RDPS_FRAME_OFF_FLAGS, RDPS_FRAME_F_END);
    assert_int_equal(decode(buf, 64), RDPS_FRAME_BAD_FLAGS);
    rdps__put_le16(buf + RDPS_FRAME_OFF_FLAGS, RDPS_FRAME_F_RELIABLE);
    assert_int_equal(decode(buf, 64), RDPS_FRAME_BAD_FLAGS);
    rdps__put_le16(buf + RDPS_FRAME_OFF_FLAGS, RDPS_FRAME_F_RETRANSMIT);
    assert_int_equal(decode(buf, 64), RDPS_FRAME_OK);
    uint8_t enc[64];
    assert_int_equal(
        rdps__frame_encode_nak_flags(enc, sizeof(enc), 1, 1, 1, &r, 1, 0, RDPS_FRAME_F_RETRANSMIT),
        64);
    assert_memory_equal(enc, buf, 64);
    assert_int_equal(
        rdps__frame_encode_nak_flags(enc, sizeof(enc), 1, 1, 1, &r, 1, 0, RDPS_FRAME_F_RELIABLE),
        RDPS_EINVAL);
    rdps__frame_encode_announce(buf, sizeof(buf), 1, 0, 0, NULL, 0, 0);
    rdps__put_le16(buf + RDPS_FRAME_OFF_FLAGS, RDPS_FRAME_F_BEGIN);
    assert_int_equal(decode(buf, HDR), RDPS_FRAME_BAD_FLAGS);
}

static void test_reject_begin_end_mismatch(void **state)
{
    (void)state;
    uint8_t buf[256];
    size_t n = make_data(buf);
    /* Middle fragment claiming BEGIN, claiming END. */
    rdps__put_le16(buf + RDPS_FRAME_OFF_FLAGS, RDPS_FRAME_F_BEGIN);
    assert_int_equal(decode(buf, n), RDPS_FRAME_BEGIN_END_MISMATCH);
    rdps__put_le16(buf + RDPS_FRAME_OFF_FLAGS, RDPS_FRAME_F_END);
    assert_int_equal(decode(buf, n), RDPS_FRAME_BEGIN_END_MISMATCH);
    /* First fragment without BEGIN. */
    n = rdps__frame_put_data_header(buf, 1, 2, 3, 1000, 0, 100, 4, 0, 3,
                                    rdps__frame_one_count(1000, 0, 100));
    rdps__put_le16(buf + RDPS_FRAME_OFF_FLAGS, 0);
    assert_int_equal(decode(buf, n), RDPS_FRAME_BEGIN_END_MISMATCH);
    /* Last fragment without END. */
    n = rdps__frame_put_data_header(buf, 1, 2, 3, 1000, 900, 100, 4, 0, 3,
                                    rdps__frame_one_count(1000, 900, 100));
    rdps__put_le16(buf + RDPS_FRAME_OFF_FLAGS, 0);
    assert_int_equal(decode(buf, n), RDPS_FRAME_BEGIN_END_MISMATCH);
    /* Zero-length message without END. */
    n = rdps__frame_put_data_header(buf, 1, 2, 3, 0, 0, 0, 4, 0, 3, rdps__frame_one_count(0, 0, 0));
    assert_int_equal(decode(buf, n), RDPS_FRAME_OK);
    rdps__put_le16(buf + RDPS_FRAME_OFF_FLAGS, RDPS_FRAME_F_BEGIN);
    assert_int_equal(decode(buf, n), RDPS_FRAME_BEGIN_END_MISMATCH);
}

static void test_reject_msg_too_large(void **state)
{
    (void)state;
    uint8_t buf[256];
    struct rdps_frame_limits lim;
    rdps__frame_limits_default(&lim);
    size_t n =
        rdps__frame_put_data_header(buf, 1, 2, 3, RDPS_FRAME_DEFAULT_MAX_MSG_LEN, 0, 100, 4, 0, 3,
                                    rdps__frame_one_count(RDPS_FRAME_DEFAULT_MAX_MSG_LEN, 0, 100));
    struct rdps_frame_view v;
    assert_int_equal(rdps__frame_decode(buf, n, &lim, &v), RDPS_FRAME_OK);
    n = rdps__frame_put_data_header(
        buf, 1, 2, 3, RDPS_FRAME_DEFAULT_MAX_MSG_LEN + 1, 0, 100, 4, 0, 3,
        rdps__frame_one_count(RDPS_FRAME_DEFAULT_MAX_MSG_LEN + 1, 0, 100));
    assert_int_equal(rdps__frame_decode(buf, n, &lim, &v), RDPS_FRAME_MSG_TOO_LARGE);
    lim.max_msg_len = 99;
    n = make_data(buf);
    assert_int_equal(rdps__frame_decode(buf, n, &lim, &v), RDPS_FRAME_MSG_TOO_LARGE);
}

static void test_reject_frag_exceeds_msg(void **state)
{
    (void)state;
    uint8_t buf[256];
    size_t n = make_data(buf);
    /* The header claims 100 payload bytes end the message, but 101 arrive. */
    rdps__frame_put_data_header(buf, 1, 2, 3, 200, 100, 100, 4, 0, 3,
                                rdps__frame_one_count(200, 100, 100));
    assert_int_equal(decode(buf, n + 1), RDPS_FRAME_FRAG_EXCEEDS_MSG);
    /* frag_offset near 4 GiB must not wrap. */
    rdps__put_le32(buf + RDPS_FRAME_OFF_MSG_LEN, 50);
    rdps__put_le32(buf + RDPS_FRAME_OFF_FRAG_OFFSET, UINT32_MAX - 10);
    assert_int_equal(decode(buf, n), RDPS_FRAME_FRAG_EXCEEDS_MSG);
}

static void test_reject_empty_fragment(void **state)
{
    (void)state;
    uint8_t buf[256];
    rdps__frame_put_data_header(buf, 1, 2, 3, 1000, 100, 0, 4, 0, 3,
                                rdps__frame_one_count(1000, 100, 0));
    assert_int_equal(decode(buf, HDR), RDPS_FRAME_EMPTY_FRAGMENT);
    rdps__frame_put_data_header(buf, 1, 2, 3, 1000, 0, 0, 4, 0, 3,
                                rdps__frame_one_count(1000, 0, 0));
    assert_int_equal(decode(buf, HDR), RDPS_FRAME_EMPTY_FRAGMENT);
}

static void test_reject_zero_session_and_topic(void **state)
{
    (void)state;
    uint8_t buf[256];
    size_t n = make_data(buf);
    rdps__put_le32(buf + RDPS_FRAME_OFF_SESSION_ID, 0);
    assert_int_equal(decode(buf, n), RDPS_FRAME_ZERO_SESSION);
    n = make_data(buf);
    rdps__put_le64(buf + RDPS_FRAME_OFF_TOPIC_ID, 0);
    assert_int_equal(decode(buf, n), RDPS_FRAME_ZERO_TOPIC);
    /* Only all 64 bits zero is "no topic". */
    n = make_data(buf);
    rdps__put_le64(buf + RDPS_FRAME_OFF_TOPIC_ID, 1ull << 63);
    assert_int_equal(decode(buf, n), RDPS_FRAME_OK);
    rdps__frame_encode_heartbeat(buf, sizeof(buf), 1, 1, 5, 5, 0, 0);
    rdps__put_le64(buf + RDPS_FRAME_OFF_TOPIC_ID, 0);
    assert_int_equal(decode(buf, HDR), RDPS_FRAME_ZERO_TOPIC);
    rdps__frame_encode_status(buf, sizeof(buf), 1, 1, 1, 1, 1, 0);
    rdps__put_le32(buf + RDPS_FRAME_OFF_SESSION_ID, 0);
    assert_int_equal(decode(buf, 64), RDPS_FRAME_ZERO_SESSION);
}

static void test_reject_nonzero_field(void **state)
{
    (void)state;
    uint8_t buf[256];
    struct rdps_seq_range r = {1, 1};
    /* Control frames must have frag_offset = 0 and msg_len = 0 (but a reliable heartbeat's R). */
    rdps__frame_encode_heartbeat(buf, sizeof(buf), 1, 1, 5, 5, 0, 0);
    rdps__put_le32(buf + RDPS_FRAME_OFF_MSG_LEN, 1);
    assert_int_equal(decode(buf, HDR), RDPS_FRAME_NONZERO_FIELD);
    rdps__frame_encode_heartbeat(buf, sizeof(buf), 1, 1, 5, 5, 0, 0);
    rdps__put_le32(buf + RDPS_FRAME_OFF_FRAG_OFFSET, 1);
    assert_int_equal(decode(buf, HDR), RDPS_FRAME_NONZERO_FIELD);
    rdps__frame_encode_heartbeat_reliable(buf, sizeof(buf), 1, 1, 5, 9, 5, (5) - (9), 0);
    rdps__put_le32(buf + RDPS_FRAME_OFF_FRAG_OFFSET, 1);
    assert_int_equal(decode(buf, HDR), RDPS_FRAME_NONZERO_FIELD);
    rdps__frame_encode_announce(buf, sizeof(buf), 1, 0, 0, NULL, 0, 0);
    rdps__put_le32(buf + RDPS_FRAME_OFF_MSG_LEN, 1);
    assert_int_equal(decode(buf, HDR), RDPS_FRAME_NONZERO_FIELD);
    /* NAK: seq and reserved. */
    rdps__frame_encode_nak(buf, sizeof(buf), 1, 1, 1, &r, 1, 0);
    rdps__put_le32(buf + RDPS_FRAME_OFF_SEQ, 1);
    assert_int_equal(decode(buf, 64), RDPS_FRAME_NONZERO_FIELD);
    rdps__frame_encode_nak(buf, sizeof(buf), 1, 1, 1, &r, 1, 0);
    rdps__put_le16(buf + RDPS_FRAME_NAK_OFF_RESERVED, 1);
    assert_int_equal(decode(buf, 64), RDPS_FRAME_NONZERO_FIELD);
    /* STATUS: seq and reserved. */
    rdps__frame_encode_status(buf, sizeof(buf), 1, 1, 1, 1, 1, 0);
    rdps__put_le32(buf + RDPS_FRAME_OFF_SEQ, 1);
    assert_int_equal(decode(buf, 64), RDPS_FRAME_NONZERO_FIELD);
    rdps__frame_encode_status(buf, sizeof(buf), 1, 1, 1, 1, 1, 0);
    rdps__put_le32(buf + RDPS_FRAME_OFF_MSG_LEN, 1);
    assert_int_equal(decode(buf, 64), RDPS_FRAME_NONZERO_FIELD);
}

static void test_reject_bad_retained(void **state)
{
    (void)state;
    uint8_t buf[64];
    rdps__frame_encode_heartbeat_reliable(buf, sizeof(buf), 1, 1, 5, RDPS_FRAME_MAX_RETAINED, 5,
                                          (5) - (RDPS_FRAME_MAX_RETAINED), 0);
    assert_int_equal(decode(buf, HDR), RDPS_FRAME_OK);
    rdps__put_le32(buf + RDPS_FRAME_OFF_MSG_LEN, RDPS_FRAME_MAX_RETAINED + 1);
    assert_int_equal(decode(buf, HDR), RDPS_FRAME_BAD_RETAINED);
    rdps__put_le32(buf + RDPS_FRAME_OFF_MSG_LEN, UINT32_MAX);
    assert_int_equal(decode(buf, HDR), RDPS_FRAME_BAD_RETAINED);
}

static void test_reject_bad_body_len(void **state)
{
    (void)state;
    uint8_t buf[256];
    memset(buf, 0, sizeof(buf));
    rdps__frame_encode_heartbeat(buf, sizeof(buf), 1, 1, 5, 5, 0, 0);
    assert_int_equal(decode(buf, HDR + 1), RDPS_FRAME_BAD_BODY_LEN);
    rdps__frame_encode_status(buf, sizeof(buf), 1, 1, 1, 1, 1, 0);
    assert_int_equal(decode(buf, RDPS_FRAME_STATUS_LEN - 1), RDPS_FRAME_BAD_BODY_LEN);
    assert_int_equal(decode(buf, RDPS_FRAME_STATUS_LEN + 1), RDPS_FRAME_BAD_BODY_LEN);
    struct rdps_seq_range r = {1, 1};
    rdps__frame_encode_nak(buf, sizeof(buf), 1, 1, 1, &r, 1, 0);
    for (size_t len = HDR; len < RDPS_FRAME_NAK_OFF_RANGES; len++)
        assert_int_equal(decode(buf, len), RDPS_FRAME_BAD_BODY_LEN);
}

static void test_reject_bad_range_count(void **state)
{
    (void)state;
    uint8_t buf[1024];
    struct rdps_seq_range r[3] = {{1, 1}, {5, 2}, {9, 3}};
    int n = rdps__frame_encode_nak(buf, sizeof(buf), 1, 1, 1, r, 3, 0);
    assert_int_equal(decode(buf, (size_t)n), RDPS_FRAME_OK);
    /* Count says 3 but the datagram is shorter, longer, or not a whole number of ranges. */
    assert_int_equal(decode(buf, (size_t)n - 8), RDPS_FRAME_BAD_RANGE_COUNT);
    assert_int_equal(decode(buf, (size_t)n - 1), RDPS_FRAME_BAD_RANGE_COUNT);
    assert_int_equal(decode(buf, (size_t)n + 8), RDPS_FRAME_BAD_RANGE_COUNT);
    rdps__put_le16(buf + RDPS_FRAME_NAK_OFF_RANGE_COUNT, 0);
    assert_int_equal(decode(buf, RDPS_FRAME_NAK_OFF_RANGES), RDPS_FRAME_BAD_RANGE_COUNT);
    /* Above the hard maximum even with a matching length. */
    memset(buf + RDPS_FRAME_NAK_OFF_RANGES, 0x01, sizeof(buf) - RDPS_FRAME_NAK_OFF_RANGES);
    rdps__put_le16(buf + RDPS_FRAME_NAK_OFF_RANGE_COUNT, RDPS_FRAME_NAK_MAX_RANGES + 1);
    assert_int_equal(decode(buf, rdps__frame_nak_len(RDPS_FRAME_NAK_MAX_RANGES + 1)),
                     RDPS_FRAME_BAD_RANGE_COUNT);
    /* Above a configured lower limit. */
    struct rdps_frame_limits lim;
    rdps__frame_limits_default(&lim);
    lim.max_nak_ranges = 2;
    n = rdps__frame_encode_nak(buf, sizeof(buf), 1, 1, 1, r, 3, 0);
    struct rdps_frame_view v;
    assert_int_equal(rdps__frame_decode(buf, (size_t)n, &lim, &v), RDPS_FRAME_BAD_RANGE_COUNT);
}

static void test_reject_bad_range(void **state)
{
    (void)state;
    uint8_t buf[256];
    struct rdps_seq_range r[2] = {{1, 1}, {5, 2}};
    int n = rdps__frame_encode_nak(buf, sizeof(buf), 1, 1, 1, r, 2, 0);
    rdps__put_le32(buf + RDPS_FRAME_NAK_OFF_RANGES + 8 + 4, 0);
    assert_int_equal(decode(buf, (size_t)n), RDPS_FRAME_BAD_RANGE);
    rdps__put_le32(buf + RDPS_FRAME_NAK_OFF_RANGES + 8 + 4, 0x80000000u);
    assert_int_equal(decode(buf, (size_t)n), RDPS_FRAME_BAD_RANGE);
}

static void test_reject_body_too_large(void **state)
{
    (void)state;
    static uint8_t buf[RDPS_FRAME_DEFAULT_MAX_ANNOUNCE_LEN + 64];
    static uint8_t body[RDPS_FRAME_DEFAULT_MAX_ANNOUNCE_LEN + 1];
    int n = rdps__frame_encode_announce(buf, sizeof(buf), 1, 0, 0, body,
                                        RDPS_FRAME_DEFAULT_MAX_ANNOUNCE_LEN, 0);
    assert_int_equal(decode(buf, (size_t)n), RDPS_FRAME_OK);
    n = rdps__frame_encode_announce(buf, sizeof(buf), 1, 0, 0, body, sizeof(body), 0);
    assert_int_equal(decode(buf, (size_t)n), RDPS_FRAME_BODY_TOO_LARGE);
}

/* Every reason in the X-macro has a test above: keep this list in step with it. */
static void test_every_reject_reason_is_reachable(void **state)
{
    (void)state;
    assert_int_equal(RDPS_FRAME_REJECT_COUNT, 21);
}

/* A datagram of whole messages at buf: n records of the given lengths (bytes 'a' + i). */
static size_t make_batch(uint8_t *buf, const uint32_t *lens, uint32_t n)
{
    uint8_t *p = buf + HDR;
    for (uint32_t i = 0; i < n; i++) {
        rdps__put_le16(p, (uint16_t)lens[i]);
        memset(p + 2, 'a' + (int)i, lens[i]);
        p += 2 + lens[i];
    }
    uint32_t plen = (uint32_t)(p - (buf + HDR));
    return rdps__frame_put_data_header(buf, 1, 2, 3, plen, 0, plen, 4, 0, 100, n);
}

/* Batches: the count and the records are checked against the payload, byte by byte. */
static void test_reject_bad_batches(void **state)
{
    (void)state;
    static uint8_t buf[2048];
    const uint32_t lens[4] = {5, 0, 17, 1};
    size_t n = make_batch(buf, lens, 4);
    assert_int_equal(decode(buf, n), RDPS_FRAME_OK);
    /* Whole messages say how many: 0 is no datagram of whole messages. */
    rdps__put_le32(buf + RDPS_FRAME_OFF_COUNT, 0);
    assert_int_equal(decode(buf, n), RDPS_FRAME_BAD_COUNT);
    /* Counts that do not match the records: fewer (the records go on), more (they end first),
     * more than the payload could ever hold. */
    rdps__put_le32(buf + RDPS_FRAME_OFF_COUNT, 3);
    assert_int_equal(decode(buf, n), RDPS_FRAME_BAD_BATCH);
    rdps__put_le32(buf + RDPS_FRAME_OFF_COUNT, 5);
    assert_int_equal(decode(buf, n), RDPS_FRAME_BAD_BATCH);
    rdps__put_le32(buf + RDPS_FRAME_OFF_COUNT, (uint32_t)(n - HDR) / 2 + 1);
    assert_int_equal(decode(buf, n), RDPS_FRAME_BAD_COUNT);
    rdps__put_le32(buf + RDPS_FRAME_OFF_COUNT, UINT32_MAX);
    assert_int_equal(decode(buf, n), RDPS_FRAME_BAD_COUNT);
    rdps__put_le32(buf + RDPS_FRAME_OFF_COUNT, 4);
    assert_int_equal(decode(buf, n), RDPS_FRAME_OK);
    /* A length past the end, at every record; one byte short of the end. */
    for (uint32_t at = 0, off = 0; at < 4; off += 2 + lens[at], at++) {
        uint16_t saved = rdps__get_le16(buf + HDR + off);
        rdps__put_le16(buf + HDR + off, 0xFFFF);
        assert_int_equal(decode(buf, n), RDPS_FRAME_BAD_BATCH);
        rdps__put_le16(buf + HDR + off, saved);
    }
    struct rdps_frame_view v;
    struct rdps_frame_limits lim;
    rdps__frame_limits_default(&lim);
    buf[RDPS_FRAME_OFF_MSG_LEN] -= 1; /* msg_len and the datagram lose the last byte */
    assert_int_equal(decode(buf, n - 1), RDPS_FRAME_BAD_BATCH);
    buf[RDPS_FRAME_OFF_MSG_LEN] += 1;
    /* A record longer than the limit on one message; a batch longer than it is fine. */
    lim.max_msg_len = 16;
    assert_int_equal(rdps__frame_decode(buf, n, &lim, &v), RDPS_FRAME_MSG_TOO_LARGE);
    lim.max_msg_len = 17;
    assert_int_equal(rdps__frame_decode(buf, n, &lim, &v), RDPS_FRAME_OK);
    assert_true(v.hdr.msg_len > lim.max_msg_len);
    /* A fragment carries no count. */
    n = make_data(buf);
    rdps__put_le32(buf + RDPS_FRAME_OFF_COUNT, 1);
    assert_int_equal(decode(buf, n), RDPS_FRAME_BAD_COUNT);
    /* A datagram of 0-byte messages only: as many as the payload holds. */
    uint32_t zeros[490] = {0};
    n = make_batch(buf, zeros, 490);
    assert_int_equal(decode(buf, n), RDPS_FRAME_OK);
    /* Only DATA numbers messages; an unreliable heartbeat names no trail. */
    struct rdps_seq_range r = {1, 1};
    int len = rdps__frame_encode_nak(buf, sizeof(buf), 1, 1, 1, &r, 1, 0);
    rdps__put_le32(buf + RDPS_FRAME_OFF_ORDINAL, 1);
    assert_int_equal(decode(buf, (size_t)len), RDPS_FRAME_NONZERO_FIELD);
    len = rdps__frame_encode_status(buf, sizeof(buf), 1, 1, 1, 1, 1, 0);
    rdps__put_le32(buf + RDPS_FRAME_OFF_COUNT, 1);
    assert_int_equal(decode(buf, (size_t)len), RDPS_FRAME_NONZERO_FIELD);
    len = rdps__frame_encode_heartbeat(buf, sizeof(buf), 1, 1, 5, 77, 0, 0);
    assert_int_equal(decode(buf, (size_t)len), RDPS_FRAME_OK);
    rdps__put_le32(buf + RDPS_FRAME_OFF_COUNT, 1);
    assert_int_equal(decode(buf, (size_t)len), RDPS_FRAME_NONZERO_FIELD);
}

/* A parity frame of block 64..127 (k 64), index 3, with a symbol of sym_len bytes. */
static size_t make_parity(uint8_t *buf, uint32_t sym_len)
{
    assert_int_equal(rdps__frame_put_parity_header(buf, 7, 9, 64, 64, 3, 11),
                     RDPS_FRAME_HEADER_LEN);
    memset(buf + RDPS_FRAME_HEADER_LEN, 0xA5, sym_len);
    return RDPS_FRAME_HEADER_LEN + sym_len;
}

/* The layout of a parity frame, written by hand, and its decoded view. */
static void test_parity_byte_exact(void **state)
{
    (void)state;
    static const uint8_t expected[48] = {
        0x03, 0x06, 0x0C, 0x00,                         /* version 3, PARITY, RETRANSMIT|RELIABLE */
        0x07, 0x00, 0x00, 0x00,                         /* session 7 */
        0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* topic 9 */
        0x40, 0x00, 0x00, 0x00,                         /* seq = block start 64 */
        0x40, 0x00, 0x00, 0x00,                         /* msg_len = k 64 */
        0x03, 0x00, 0x00, 0x00,                         /* frag_offset = index 3 */
        0x00, 0x00, 0x00, 0x00,                         /* reserved */
        0x0B, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* timestamp 11 */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* ordinal, count: 0 */
    };
    uint8_t buf[256];
    size_t n = make_parity(buf, 100);
    assert_memory_equal(buf, expected, sizeof(expected));
    struct rdps_frame_view v;
    assert_int_equal(rdps__frame_decode(buf, n, NULL, &v), RDPS_FRAME_OK);
    assert_int_equal(v.hdr.type, RDPS_FRAME_PARITY);
    assert_int_equal(v.parity_k, 64);
    assert_int_equal(v.parity_index, 3);
    assert_int_equal(v.payload_len, 100);
    assert_int_equal(RDPS_FRAME_PARITY_OVERHEAD, 34);
    /* Blocks survive the wrap: the last block of the sequence space. */
    assert_int_equal(rdps__frame_put_parity_header(buf, 7, 9, 0xFFFFFF80u, 128, 127, 0), HDR);
    assert_int_equal(rdps__frame_decode(buf, n, NULL, &v), RDPS_FRAME_OK);
    assert_int_equal(v.parity_k, 128);
    assert_int_equal(v.parity_index, 127);
    /* The encoder refuses what the decoder would. */
    assert_int_equal(rdps__frame_put_parity_header(buf, 7, 9, 64, 48, 0, 0), RDPS_EINVAL);
    assert_int_equal(rdps__frame_put_parity_header(buf, 7, 9, 32, 64, 0, 0), RDPS_EINVAL);
    assert_int_equal(rdps__frame_put_parity_header(buf, 7, 9, 0, 256, 0, 0), RDPS_EINVAL);
    assert_int_equal(rdps__frame_put_parity_header(buf, 7, 9, 0, 64, 128, 0), RDPS_EINVAL);
    assert_int_equal(rdps__frame_put_parity_header(buf, 0, 9, 0, 64, 0, 0), RDPS_EINVAL);
    assert_int_equal(rdps__frame_put_parity_header(buf, 7, 0, 0, 64, 0, 0), RDPS_EINVAL);
}

/* Hostile parity frames: every field the decoder checks, one at a time. */
static void test_reject_hostile_parity(void **state)
{
    (void)state;
    uint8_t buf[512];
    size_t n = make_parity(buf, 100);
    assert_int_equal(decode(buf, n), RDPS_FRAME_OK);
    /* k: zero, one, not a power of two, above the limit, huge. */
    static const uint32_t bad_k[] = {0, 1, 3, 48, 256, 0x80000000u, 0xFFFFFFFFu};
    for (size_t i = 0; i < sizeof(bad_k) / sizeof(bad_k[0]); i++) {
        make_parity(buf, 100);
        rdps__put_le32(buf + RDPS_FRAME_OFF_MSG_LEN, bad_k[i]);
        assert_int_equal(decode(buf, n), RDPS_FRAME_BAD_BLOCK);
    }
    /* seq not the start of a block of k. */
    make_parity(buf, 100);
    rdps__put_le32(buf + RDPS_FRAME_OFF_SEQ, 65);
    assert_int_equal(decode(buf, n), RDPS_FRAME_BAD_BLOCK);
    rdps__put_le32(buf + RDPS_FRAME_OFF_SEQ, 96);
    assert_int_equal(decode(buf, n), RDPS_FRAME_BAD_BLOCK);
    /* j past the codec's parity rows. */
    make_parity(buf, 100);
    rdps__put_le32(buf + RDPS_FRAME_OFF_FRAG_OFFSET, 128);
    assert_int_equal(decode(buf, n), RDPS_FRAME_BAD_PARITY_INDEX);
    rdps__put_le32(buf + RDPS_FRAME_OFF_FRAG_OFFSET, 0xFFFFFFFFu);
    assert_int_equal(decode(buf, n), RDPS_FRAME_BAD_PARITY_INDEX);
    /* Symbols shorter than the codec's least, or empty. */
    n = make_parity(buf, RDPS_FRAME_PARITY_MIN_BODY);
    assert_int_equal(decode(buf, n), RDPS_FRAME_OK);
    assert_int_equal(decode(buf, n - 1), RDPS_FRAME_BAD_BODY_LEN);
    assert_int_equal(decode(buf, RDPS_FRAME_HEADER_LEN), RDPS_FRAME_BAD_BODY_LEN);
    /* Flags other than exactly RELIABLE | RETRANSMIT; zero topic, zero session; reserved. */
    static const uint16_t bad_flags[] = {
        0, RDPS_FRAME_F_RELIABLE, RDPS_FRAME_F_RETRANSMIT,
        RDPS_FRAME_F_RELIABLE | RDPS_FRAME_F_RETRANSMIT | RDPS_FRAME_F_PARITY,
        RDPS_FRAME_F_RELIABLE | RDPS_FRAME_F_RETRANSMIT | RDPS_FRAME_F_BEGIN};
    n = make_parity(buf, 100);
    for (size_t i = 0; i < sizeof(bad_flags) / sizeof(bad_flags[0]); i++) {
        rdps__put_le16(buf + RDPS_FRAME_OFF_FLAGS, bad_flags[i]);
        assert_int_equal(decode(buf, n), RDPS_FRAME_BAD_FLAGS);
    }
    make_parity(buf, 100);
    rdps__put_le64(buf + RDPS_FRAME_OFF_TOPIC_ID, 0);
    assert_int_equal(decode(buf, n), RDPS_FRAME_ZERO_TOPIC);
    make_parity(buf, 100);
    rdps__put_le32(buf + RDPS_FRAME_OFF_SESSION_ID, 0);
    assert_int_equal(decode(buf, n), RDPS_FRAME_ZERO_SESSION);
    make_parity(buf, 100);
    rdps__put_le32(buf + RDPS_FRAME_OFF_RESERVED, 1);
    assert_int_equal(decode(buf, n), RDPS_FRAME_NONZERO_FIELD);
}

/* A NAK with the PARITY flag: ranges {block start, missing count}; the count is at most a
 * block, the start even; the flag belongs to NAKs only. */
static void test_parity_nak(void **state)
{
    (void)state;
    uint8_t buf[256];
    struct rdps_frame_view v;
    struct rdps_seq_range r[2] = {{0xFFFFFFC0u, 3}, {0, 128}};
    int n = rdps__frame_encode_nak_flags(buf, sizeof(buf), 1, 1, 5, r, 2, 0, RDPS_FRAME_F_PARITY);
    assert_int_equal(n, (int)rdps__frame_nak_len(2));
    assert_int_equal(rdps__frame_decode(buf, (size_t)n, NULL, &v), RDPS_FRAME_OK);
    assert_int_equal(v.hdr.flags, RDPS_FRAME_F_PARITY);
    assert_int_equal(rdps__frame_nak_range(&v, 0).start, 0xFFFFFFC0u);
    assert_int_equal(rdps__frame_nak_range(&v, 1).count, 128);
    n = rdps__frame_encode_nak_flags(buf, sizeof(buf), 1, 1, 5, r, 2, 0,
                                     RDPS_FRAME_F_PARITY | RDPS_FRAME_F_RETRANSMIT);
    assert_int_equal(rdps__frame_decode(buf, (size_t)n, NULL, &v), RDPS_FRAME_OK);
    /* Count past the largest block; odd block start: refused by the encoder and the decoder. */
    r[1].count = 129;
    assert_int_equal(
        rdps__frame_encode_nak_flags(buf, sizeof(buf), 1, 1, 5, r, 2, 0, RDPS_FRAME_F_PARITY),
        RDPS_EINVAL);
    n = rdps__frame_encode_nak_flags(buf, sizeof(buf), 1, 1, 5, r, 2, 0, 0);
    assert_int_equal(n, (int)rdps__frame_nak_len(2));
    rdps__put_le16(buf + RDPS_FRAME_OFF_FLAGS, RDPS_FRAME_F_PARITY);
    assert_int_equal(rdps__frame_decode(buf, (size_t)n, NULL, &v), RDPS_FRAME_BAD_RANGE);
    rdps__put_le32(buf + RDPS_FRAME_NAK_OFF_RANGES + 12, 0xFFFFFFFFu);
    assert_int_equal(rdps__frame_decode(buf, (size_t)n, NULL, &v), RDPS_FRAME_BAD_RANGE);
    rdps__put_le32(buf + RDPS_FRAME_NAK_OFF_RANGES + 12, 1);
    assert_int_equal(rdps__frame_decode(buf, (size_t)n, NULL, &v), RDPS_FRAME_OK);
    rdps__put_le32(buf + RDPS_FRAME_NAK_OFF_RANGES + 8, 1); /* odd start */
    assert_int_equal(rdps__frame_decode(buf, (size_t)n, NULL, &v), RDPS_FRAME_BAD_RANGE);
    r[1] = (struct rdps_seq_range){3, 1};
    assert_int_equal(
        rdps__frame_encode_nak_flags(buf, sizeof(buf), 1, 1, 5, r, 2, 0, RDPS_FRAME_F_PARITY),
        RDPS_EINVAL);
    /* PARITY on other frame types. */
    rdps__frame_encode_heartbeat(buf, sizeof(buf), 1, 1, 5, 5, 0, 0);
    rdps__put_le16(buf + RDPS_FRAME_OFF_FLAGS, RDPS_FRAME_F_PARITY);
    assert_int_equal(rdps__frame_decode(buf, HDR, NULL, &v), RDPS_FRAME_BAD_FLAGS);
    rdps__frame_encode_status(buf, sizeof(buf), 1, 1, 1, 1, 1, 0);
    rdps__put_le16(buf + RDPS_FRAME_OFF_FLAGS, RDPS_FRAME_F_PARITY);
    assert_int_equal(rdps__frame_decode(buf, 64, NULL, &v), RDPS_FRAME_BAD_FLAGS);
    n = (int)make_data(buf);
    rdps__put_le16(buf + RDPS_FRAME_OFF_FLAGS,
                   RDPS_FRAME_F_PARITY | RDPS_FRAME_F_BEGIN | RDPS_FRAME_F_END);
    assert_int_equal(rdps__frame_decode(buf, (size_t)n, NULL, &v), RDPS_FRAME_BAD_FLAGS);
}

/* A reliable heartbeat of a parity publisher: the body carries k, the group's RTT and receivers;
 * hostile bodies are refused. */
static void test_heartbeat_parity(void **state)
{
    (void)state;
    uint8_t buf[64];
    struct rdps_frame_view v;
    int n = rdps__frame_encode_heartbeat_parity(buf, sizeof(buf), 3, 4, 1000, 200, 1000,
                                                (1000) - (200), 5, 64, 350, 8);
    assert_int_equal(n, RDPS_FRAME_HB_PARITY_LEN);
    assert_int_equal(rdps__frame_decode(buf, (size_t)n, NULL, &v), RDPS_FRAME_OK);
    assert_int_equal(v.retained, 200);
    assert_int_equal(v.parity_k, 64);
    assert_int_equal(v.hb_max_rtt_us, 350);
    assert_int_equal(v.hb_receivers, 8);
    assert_int_equal(rdps__get_le16(buf + RDPS_FRAME_OFF_FLAGS),
                     RDPS_FRAME_F_RELIABLE | RDPS_FRAME_F_PARITY);
    assert_int_equal(rdps__frame_decode(buf, HDR, NULL, &v), RDPS_FRAME_BAD_BODY_LEN);
    assert_int_equal(rdps__frame_decode(buf, 51, NULL, &v), RDPS_FRAME_BAD_BODY_LEN);
    rdps__put_le16(buf + RDPS_FRAME_HB_OFF_PARITY_K, 48);
    assert_int_equal(rdps__frame_decode(buf, (size_t)n, NULL, &v), RDPS_FRAME_BAD_BLOCK);
    rdps__put_le16(buf + RDPS_FRAME_HB_OFF_PARITY_K, 256);
    assert_int_equal(rdps__frame_decode(buf, (size_t)n, NULL, &v), RDPS_FRAME_BAD_BLOCK);
    rdps__put_le16(buf + RDPS_FRAME_HB_OFF_PARITY_K, 64);
    rdps__put_le16(buf + RDPS_FRAME_HB_OFF_RESERVED, 1);
    assert_int_equal(rdps__frame_decode(buf, (size_t)n, NULL, &v), RDPS_FRAME_NONZERO_FIELD);
    assert_int_equal(rdps__frame_encode_heartbeat_parity(buf, sizeof(buf), 3, 4, 1000, 200, 1000,
                                                         (1000) - (200), 5, 3, 0, 0),
                     RDPS_EINVAL);
    assert_int_equal(rdps__frame_encode_heartbeat_parity(buf, 51, 3, 4, 1000, 200, 1000,
                                                         (1000) - (200), 5, 64, 0, 0),
                     RDPS_ENOSPC);
}

/* A DATA frame rebuilt from its symbol (bytes from seq on) gets back the exact original. */
static void test_symbol_prefix_rebuilds_frame(void **state)
{
    (void)state;
    uint8_t frame[200], rebuilt[200];
    static const struct {
        uint32_t msg_len, frag_offset, payload;
    } cases[] = {{100, 0, 100}, {300, 0, 100}, {300, 100, 100}, {300, 200, 100}, {0, 0, 0}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        memset(frame + RDPS_FRAME_HEADER_LEN, (int)i, cases[i].payload);
        uint32_t len = rdps__frame_put_data_header(
            frame, 7, 0x123456789ull, 42, cases[i].msg_len, cases[i].frag_offset, cases[i].payload,
            99, RDPS_FRAME_F_RELIABLE | RDPS_FRAME_F_RETRANSMIT, 42,
            rdps__frame_one_count(cases[i].msg_len, cases[i].frag_offset, cases[i].payload));
        memset(rebuilt, 0xEE, sizeof(rebuilt));
        memcpy(rebuilt + RDPS_FRAME_SYMBOL_OFF, frame + RDPS_FRAME_SYMBOL_OFF,
               len - RDPS_FRAME_SYMBOL_OFF);
        assert_true(rdps__frame_put_symbol_prefix(rebuilt, len, 7, 0x123456789ull));
        assert_memory_equal(rebuilt, frame, len);
        assert_int_equal(decode(rebuilt, len), RDPS_FRAME_OK);
    }
    assert_false(rdps__frame_put_symbol_prefix(rebuilt, RDPS_FRAME_HEADER_LEN - 1, 7, 1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_endian_helpers),
        cmocka_unit_test(test_header_layout_offsets),
        cmocka_unit_test(test_data_header_byte_exact),
        cmocka_unit_test(test_batch_byte_exact),
        cmocka_unit_test(test_nak_and_status_byte_exact),
        cmocka_unit_test(test_round_trip_data_extremes),
        cmocka_unit_test(test_round_trip_control_frames),
        cmocka_unit_test(test_encoder_capacity_and_argument_checks),
        cmocka_unit_test(test_reject_names_are_generated),
        cmocka_unit_test(test_reject_short),
        cmocka_unit_test(test_reject_bad_version),
        cmocka_unit_test(test_reject_version_1_frame),
        cmocka_unit_test(test_reject_nonzero_reserved),
        cmocka_unit_test(test_reject_bad_type),
        cmocka_unit_test(test_reject_bad_flags),
        cmocka_unit_test(test_reject_begin_end_mismatch),
        cmocka_unit_test(test_reject_msg_too_large),
        cmocka_unit_test(test_reject_frag_exceeds_msg),
        cmocka_unit_test(test_reject_empty_fragment),
        cmocka_unit_test(test_reject_zero_session_and_topic),
        cmocka_unit_test(test_reject_nonzero_field),
        cmocka_unit_test(test_reject_bad_body_len),
        cmocka_unit_test(test_reject_bad_range_count),
        cmocka_unit_test(test_reject_bad_range),
        cmocka_unit_test(test_reject_body_too_large),
        cmocka_unit_test(test_reject_bad_retained),
        cmocka_unit_test(test_every_reject_reason_is_reachable),
        cmocka_unit_test(test_reject_bad_batches),
        cmocka_unit_test(test_parity_byte_exact),
        cmocka_unit_test(test_reject_hostile_parity),
        cmocka_unit_test(test_parity_nak),
        cmocka_unit_test(test_symbol_prefix_rebuilds_frame),
        cmocka_unit_test(test_heartbeat_parity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
