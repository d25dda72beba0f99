/* SPDX-License-Identifier: BSD-2-Clause */
/* test_frag.c - fragmenter: boundary sizes, frame layout, zero-copy singles, sequence wrap, round
 * trip. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <string.h>

#include <rdps/rdps.h>

#include "proto_test_util.h"
#include "rdps_frag.h"
#include "rdps_reasm.h"

#define DGRAM   1024u /* rxe-sized datagram: 984 payload bytes per fragment */
#define PAYLOAD (DGRAM - RDPS_FRAME_HEADER_LEN)
#define MAX_MSG RDPS_FRAME_DEFAULT_MAX_MSG_LEN

/* Fragments one message and checks every frame against the wire rules; returns the frames. */
static void fragment_and_check(size_t len, uint32_t first_seq, struct frame_list *fl)
{
    uint32_t next_seq = first_seq;
    int frames = frames_add_message(fl, 1, 0xABCD, 0x77, &next_seq, len, MAX_MSG, DGRAM, 42, 0);
    assert_true(frames >= 1);
    assert_int_equal((size_t)frames, fl->count);
    assert_int_equal((uint32_t)frames, rdps__frag_count(len, DGRAM));
    assert_int_equal(next_seq, first_seq + (uint32_t)frames);
    uint32_t expect_off = 0;
    for (size_t i = 0; i < fl->count; i++) {
        struct rdps_frame_view v;
        assert_int_equal(rdps__frame_decode(fl->items[i].data, fl->items[i].len, NULL, &v),
                         RDPS_FRAME_OK);
        assert_true(fl->items[i].len <= DGRAM);
        assert_int_equal(v.hdr.type, RDPS_FRAME_DATA);
        assert_int_equal(v.hdr.session_id, 0xABCD);
        assert_int_equal(v.hdr.topic_id, 0x77);
        assert_int_equal(v.hdr.seq, first_seq + (uint32_t)i);
        assert_int_equal(v.hdr.msg_len, len);
        assert_int_equal(v.hdr.frag_offset, expect_off);
        assert_true(v.hdr.timestamp_ns == 42);
        assert_int_equal((v.hdr.flags & RDPS_FRAME_F_BEGIN) != 0, i == 0);
        assert_int_equal((v.hdr.flags & RDPS_FRAME_F_END) != 0, i == fl->count - 1);
        if (i + 1 < fl->count)
            assert_int_equal(v.payload_len, PAYLOAD);
        for (uint32_t k = 0; k < v.payload_len; k++)
            assert_int_equal(v.payload[k], pattern_byte(0xABCD, 42, expect_off + k));
        expect_off += v.payload_len;
    }
    assert_int_equal(expect_off, len);
}

/* Feeds frames to a fresh reassembler and checks the single delivered message. */
static void reassemble_and_check(struct frame_list *fl, size_t len)
{
    struct recorder rec = {0};
    struct rdps_reasm_config cfg;
    rdps__reasm_config_default(&cfg);
    cfg.reasm_cap_bytes = MAX_MSG + 4096;
    cfg.deliver = recorder_deliver;
    cfg.user = &rec;
    struct rdps_reasm r;
    assert_int_equal(rdps__reasm_init(&r, &cfg), 0);
    for (size_t i = 0; i < fl->count; i++) {
        struct rdps_source src = test_source(1);
        int rc = rdps__reasm_input(&r, &src, fl->items[i].data, fl->items[i].len, 0);
        assert_int_equal(rc, i + 1 == fl->count ? 1 : 0);
    }
    assert_int_equal(rec.count, 1);
    assert_int_equal(rec.items[0].len, len);
    assert_true(rec.items[0].pattern_ok);
    assert_int_equal(rec.items[0].frag_count, fl->count);
    struct rdps_frame_view first;
    assert_int_equal(rdps__frame_decode(fl->items[0].data, fl->items[0].len, NULL, &first),
                     RDPS_FRAME_OK);
    assert_int_equal(rec.items[0].first_seq, first.hdr.seq);
    if (fl->count == 1) /* single datagram: delivered straight from the receive buffer */
        assert_ptr_equal(rec.items[0].ptr, fl->items[0].data + RDPS_FRAME_HEADER_LEN);
    assert_int_equal(rdps__reasm_partial_count(&r), 0);
    rdps__reasm_fini(&r);
    recorder_free(&rec);
}

static void test_boundary_sizes(void **state)
{
    (void)state;
    const size_t sizes[] = {0,           1,           PAYLOAD - 1,     PAYLOAD, PAYLOAD + 1,
                            2 * PAYLOAD, 7 * PAYLOAD, 7 * PAYLOAD + 5, 65536,   MAX_MSG};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        struct frame_list fl = {0};
        fragment_and_check(sizes[i], 100, &fl);
        reassemble_and_check(&fl, sizes[i]);
        frames_free(&fl);
    }
}

static void test_too_large_is_rejected(void **state)
{
    (void)state;
    struct rdps_frag it;
    uint32_t seq = 5;
    static const uint8_t byte = 0;
    assert_int_equal(
        rdps__frag_init(&it, 1, 1, &seq, &byte, MAX_MSG + 1, MAX_MSG, DGRAM, 0, 0, seq),
        RDPS_EMSGSIZE);
    assert_int_equal(seq, 5);
    /* The maximum is settable above 16 MiB, up to the 32-bit wire limit. */
    assert_int_equal(
        rdps__frag_init(&it, 1, 1, &seq, &byte, MAX_MSG + 1, 64u << 20, DGRAM, 0, 0, seq),
        (int)rdps__frag_count(MAX_MSG + 1, DGRAM));
    assert_int_equal(
        rdps__frag_init(&it, 1, 1, &seq, &byte, (size_t)UINT32_MAX + 1, SIZE_MAX, DGRAM, 0, 0, seq),
        RDPS_EMSGSIZE);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    struct rdps_frag it;
    uint32_t seq = 0;
    uint8_t msg[8] = {0};
    assert_int_equal(rdps__frag_init(&it, 0, 1, &seq, msg, 8, MAX_MSG, DGRAM, 0, 0, seq),
                     RDPS_EINVAL);
    assert_int_equal(rdps__frag_init(&it, 1, 0, &seq, msg, 8, MAX_MSG, DGRAM, 0, 0, seq),
                     RDPS_EINVAL);
    assert_int_equal(rdps__frag_init(&it, 1, 1, NULL, msg, 8, MAX_MSG, DGRAM, 0, 0, 0),
                     RDPS_EINVAL);
    assert_int_equal(rdps__frag_init(&it, 1, 1, &seq, NULL, 8, MAX_MSG, DGRAM, 0, 0, seq),
                     RDPS_EINVAL);
    assert_int_equal(
        rdps__frag_init(&it, 1, 1, &seq, msg, 8, MAX_MSG, RDPS_FRAME_HEADER_LEN, 0, 0, seq),
        RDPS_EINVAL);
    assert_int_equal(
        rdps__frag_init(&it, 1, 1, &seq, msg, 8, MAX_MSG, DGRAM, 0, RDPS_FRAME_F_BEGIN, seq),
        RDPS_EINVAL);
    assert_int_equal(rdps__frag_init(&it, 1, 1, &seq, msg, 8, MAX_MSG, DGRAM, 0, 0x100, seq),
                     RDPS_EINVAL);
    assert_int_equal(rdps__frag_init(&it, 1, 1, &seq, NULL, 0, MAX_MSG, DGRAM, 0, 0, seq), 1);
    assert_int_equal(rdps__frag_count(10, RDPS_FRAME_HEADER_LEN), 0);
    assert_int_equal(seq, 0);
}

static void test_next_needs_capacity(void **state)
{
    (void)state;
    uint8_t msg[100], buf[DGRAM];
    pattern_fill(msg, sizeof(msg), 3, 4);
    struct rdps_frag it;
    uint32_t seq = 9;
    assert_int_equal(rdps__frag_init(&it, 3, 5, &seq, msg, sizeof(msg), MAX_MSG, 80, 4,
                                     RDPS_FRAME_F_RELIABLE, 777),
                     4); /* 32 payload bytes per frame */
    assert_int_equal(rdps__frag_next(&it, buf, 79), RDPS_ENOSPC);
    assert_int_equal(seq, 9); /* nothing consumed */
    for (int i = 0; i < 3; i++)
        assert_int_equal(rdps__frag_next(&it, buf, sizeof(buf)), 80);
    /* The last fragment needs only the 48-byte header + 4 bytes. */
    assert_int_equal(rdps__frag_next(&it, buf, 52), 52);
    assert_int_equal(rdps__frag_next(&it, buf, sizeof(buf)), 0);
    assert_int_equal(rdps__frag_next(&it, buf, sizeof(buf)), 0);
    assert_int_equal(seq, 13);
    struct rdps_frame_view v;
    assert_int_equal(rdps__frame_decode(buf, 52, NULL, &v), RDPS_FRAME_OK);
    assert_int_equal(v.hdr.flags, RDPS_FRAME_F_END | RDPS_FRAME_F_RELIABLE);
    assert_int_equal(v.hdr.frag_offset, 96);
    /* Every fragment carries its message's ordinal, and no count. */
    assert_int_equal(v.hdr.ordinal, 777);
    assert_int_equal(v.hdr.count, 0);
}

static void test_zero_copy_single(void **state)
{
    (void)state;
    uint8_t buf[DGRAM];
    uint32_t seq = 0xFFFFFFFFu;
    pattern_fill(buf + RDPS_FRAME_HEADER_LEN, 64, 8, 99);
    int n = rdps__frag_put_single(buf, sizeof(buf), 8, 9, &seq, 64, DGRAM, 99,
                                  RDPS_FRAME_F_RETRANSMIT, 0xFFFFFFFFu);
    assert_int_equal(n, 112);
    assert_int_equal(seq, 0); /* wrapped */
    struct rdps_frame_view v;
    assert_int_equal(rdps__frame_decode(buf, 112, NULL, &v), RDPS_FRAME_OK);
    assert_int_equal(v.hdr.seq, 0xFFFFFFFFu);
    assert_int_equal(v.hdr.ordinal, 0xFFFFFFFFu);
    assert_int_equal(v.hdr.count, 1);
    assert_int_equal(v.hdr.flags, RDPS_FRAME_F_BEGIN | RDPS_FRAME_F_END | RDPS_FRAME_F_RETRANSMIT);
    assert_true(pattern_check(v.payload, 64, 8, 99));
    /* A zero-byte message is one header-only frame. */
    assert_int_equal(rdps__frag_put_single(buf, sizeof(buf), 8, 9, &seq, 0, DGRAM, 1, 0, seq),
                     RDPS_FRAME_HEADER_LEN);
    assert_int_equal(rdps__frame_decode(buf, RDPS_FRAME_HEADER_LEN, NULL, &v), RDPS_FRAME_OK);
    assert_int_equal(v.hdr.msg_len, 0);
    /* Too big for the buffer or the datagram. */
    assert_int_equal(rdps__frag_put_single(buf, 100, 8, 9, &seq, 53, DGRAM, 1, 0, seq),
                     RDPS_EMSGSIZE);
    assert_int_equal(rdps__frag_put_single(buf, 10, 8, 9, &seq, 0, DGRAM, 1, 0, seq),
                     RDPS_EMSGSIZE);
    assert_int_equal(
        rdps__frag_put_single(buf, sizeof(buf), 8, 9, &seq, PAYLOAD + 1, DGRAM, 1, 0, seq),
        RDPS_EMSGSIZE);
    assert_int_equal(rdps__frag_put_single(buf, sizeof(buf), 0, 9, &seq, 1, DGRAM, 1, 0, seq),
                     RDPS_EINVAL);
    assert_int_equal(seq, 1);
}

static void test_sequence_wraps_inside_a_message(void **state)
{
    (void)state;
    struct frame_list fl = {0};
    fragment_and_check(5 * PAYLOAD + 17, 0xFFFFFFFDu, &fl);
    assert_int_equal(fl.count, 6);
    reassemble_and_check(&fl, 5 * PAYLOAD + 17);
    frames_free(&fl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_boundary_sizes),
        cmocka_unit_test(test_too_large_is_rejected),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_next_needs_capacity),
        cmocka_unit_test(test_zero_copy_single),
        cmocka_unit_test(test_sequence_wraps_inside_a_message),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
