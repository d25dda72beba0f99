/* SPDX-License-Identifier: BSD-2-Clause */
/* test_archive_format.c - the recording format's codec: round trips of every structure, chunks
 * sealed and opened (zstd and stored), a chunk cut at every byte and flipped at every byte. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rdps_archive_chunk.h"
#include "rdps_archive_format.h"

static struct rdps_arc_record message(uint32_t i, const uint8_t *body, uint32_t len)
{
    return (struct rdps_arc_record){
        .type = RDPS_ARC_REC_MESSAGE,
        .flags = (i % 3 == 0) ? RDPS_ARC_RF_RETRANSMITTED : 0,
        .topic_id = 0x1122334455667788ull,
        .session_id = 0xabcd0000u + (i % 2),
        .seq = 1000 + i,
        .ordinal = i,
        .count = 1,
        .publisher_ts_ns = 5000000000ull + i,
        .recorder_ts_ns = 6000000000ull + i * 10,
        .body = body,
        .body_len = len,
    };
}

static void test_crc32c_known_value(void **state)
{
    (void)state;
    /* The CRC-32C check value (RFC 3720 appendix B.4: "123456789" -> 0xE3069283). */
    assert_int_equal(rdps__arc_crc32c("123456789", 9, 0), 0xE3069283u);
    /* Pieces continue one another. */
    uint32_t a = rdps__arc_crc32c("1234", 4, 0);
    assert_int_equal(rdps__arc_crc32c("56789", 5, a), 0xE3069283u);
}

static void test_file_header_round_trip(void **state)
{
    (void)state;
    uint8_t buf[RDPS_ARC_FILE_HEADER_LEN];
    struct rdps_arc_file_header h = {
        .recording_id = 7, .segment = 3, .created_ns = 99, .first_record = 12345};
    struct rdps_arc_file_header out;
    rdps__arc_file_header_encode(buf, RDPS_ARC_SEGMENT_MAGIC, &h);
    assert_int_equal(rdps__arc_file_header_decode(buf, sizeof(buf), RDPS_ARC_SEGMENT_MAGIC, &out),
                     RDPS_ARC_OK);
    assert_int_equal(out.recording_id, 7);
    assert_int_equal(out.segment, 3);
    assert_int_equal(out.first_record, 12345);
    assert_int_equal(rdps__arc_file_header_decode(buf, sizeof(buf), RDPS_ARC_INDEX_MAGIC, &out),
                     RDPS_ARC_BAD_MAGIC);
    assert_int_equal(
        rdps__arc_file_header_decode(buf, sizeof(buf) - 1, RDPS_ARC_SEGMENT_MAGIC, &out),
        RDPS_ARC_SHORT);
    for (size_t i = 0; i < sizeof(buf); i++) {
        buf[i] ^= 0x40;
        assert_int_not_equal(
            rdps__arc_file_header_decode(buf, sizeof(buf), RDPS_ARC_SEGMENT_MAGIC, &out),
            RDPS_ARC_OK);
        buf[i] ^= 0x40;
    }
}

static void test_index_and_catalog_round_trip(void **state)
{
    (void)state;
    uint8_t buf[8192];
    struct rdps_arc_index_entry e = {.type = RDPS_ARC_IX_CHUNK,
                                     .flags = RDPS_ARC_IXF_TOPICS,
                                     .a = 64,
                                     .b = 100,
                                     .c = 3,
                                     .first_record = 9,
                                     .first_ts = 10,
                                     .d = 20};
    struct rdps_arc_index_entry o;
    rdps__arc_index_encode(buf, &e);
    assert_int_equal(rdps__arc_index_decode(buf, RDPS_ARC_INDEX_ENTRY_LEN, &o), RDPS_ARC_OK);
    assert_true(o.type == e.type && o.flags == e.flags && o.a == e.a && o.b == e.b && o.c == e.c &&
                o.first_record == e.first_record && o.first_ts == e.first_ts && o.d == e.d);
    e.d = 5; /* last ts before first ts */
    rdps__arc_index_encode(buf, &e);
    assert_int_equal(rdps__arc_index_decode(buf, RDPS_ARC_INDEX_ENTRY_LEN, &o), RDPS_ARC_BAD_FIELD);

    const char *spec = "topics md.a,md.b";
    struct rdps_arc_catalog_entry c = {
        .type = RDPS_ARC_CE_START,
        .recording_id = 4,
        .u.start = {.start_ns = 1,
                    .codec = RDPS_ARC_CODEC_ZSTD,
                    .segment_bytes = 1 << 20,
                    .spec_len = (uint16_t)strlen(spec),
                    .spec = spec},
    };
    size_t len = rdps__arc_catalog_encode(buf, sizeof(buf), &c);
    assert_true(len > 0);
    struct rdps_arc_catalog_entry co;
    size_t used;
    assert_int_equal(rdps__arc_catalog_decode(buf, len, &co, &used), RDPS_ARC_OK);
    assert_int_equal(used, len);
    assert_int_equal(co.u.start.spec_len, strlen(spec));
    assert_memory_equal(co.u.start.spec, spec, strlen(spec));
    for (size_t cut = 0; cut < len; cut++)
        assert_int_not_equal(rdps__arc_catalog_decode(buf, cut, &co, &used), RDPS_ARC_OK);
    c = (struct rdps_arc_catalog_entry){.type = RDPS_ARC_CE_STOP,
                                        .recording_id = 4,
                                        .u.stop = {.records = 77, .reason = RDPS_ARC_STOP_CLEAN}};
    len = rdps__arc_catalog_encode(buf, sizeof(buf), &c);
    assert_int_equal(rdps__arc_catalog_decode(buf, len, &co, &used), RDPS_ARC_OK);
    assert_int_equal(co.u.stop.records, 77);
}

static void test_record_validation(void **state)
{
    (void)state;
    uint8_t buf[256];
    const char *name = "md.quotes";
    struct rdps_arc_record r = {
        .type = RDPS_ARC_REC_TOPIC, .topic_id = 5, .body = (const uint8_t *)name, .body_len = 9};
    struct rdps_arc_record o;
    size_t used;
    size_t len = rdps__arc_record_encode(buf, sizeof(buf), &r);
    assert_int_equal(len, RDPS_ARC_RECORD_HEADER_LEN + 9);
    assert_int_equal(rdps__arc_record_decode(buf, len, &o, &used), RDPS_ARC_OK);
    buf[RDPS_ARC_RECORD_HEADER_LEN] = ' '; /* a space is no topic name */
    assert_int_equal(rdps__arc_record_decode(buf, len, &o, &used), RDPS_ARC_BAD_FIELD);
    r = (struct rdps_arc_record){.type = RDPS_ARC_REC_LOSS, .body_len = 4, .body = buf + 200};
    len = rdps__arc_record_encode(buf, sizeof(buf), &r);
    assert_int_equal(rdps__arc_record_decode(buf, len, &o, &used), RDPS_ARC_BAD_FIELD);
    r.type = 99;
    r.body_len = 8;
    len = rdps__arc_record_encode(buf, sizeof(buf), &r);
    assert_int_equal(rdps__arc_record_decode(buf, len, &o, &used), RDPS_ARC_BAD_FIELD);
    r.type = RDPS_ARC_REC_LOSS;
    len = rdps__arc_record_encode(buf, sizeof(buf), &r);
    buf[RDPS_ARC_RH_OFF_BODY_LEN] = 200; /* body longer than the bytes */
    assert_int_equal(rdps__arc_record_decode(buf, len, &o, &used), RDPS_ARC_BAD_LENGTH);
}

/* Seals n records of growing bodies with codec; returns the chunk (malloc'd) and its length. */
static uint8_t *make_chunk(int codec, uint32_t n, size_t *len_out)
{
    struct rdps_arc_builder b;
    struct rdps_arc_compressor c;
    uint8_t body[300];
    for (size_t i = 0; i < sizeof(body); i++)
        body[i] = (uint8_t)(i * 7);
    assert_int_equal(rdps__arc_builder_init(&b, 64 * 1024), 0);
    assert_int_equal(rdps__arc_compressor_init(&c, codec, 1), 0);
    for (uint32_t i = 0; i < n; i++) {
        struct rdps_arc_record r = message(i, body, i % 300);
        assert_true(rdps__arc_builder_fits(&b, &r));
        assert_int_equal(rdps__arc_builder_add(&b, &r, 500 + i), 0);
    }
    size_t cap = rdps__arc_chunk_bound(b.raw_len);
    uint8_t *out = malloc(cap);
    long len = rdps__arc_chunk_seal(&b, &c, out, cap);
    assert_true(len > RDPS_ARC_CHUNK_HEADER_LEN);
    assert_int_equal(b.records, 0);
    rdps__arc_builder_fini(&b);
    rdps__arc_compressor_fini(&c);
    *len_out = (size_t)len;
    return out;
}

static void check_chunk(const uint8_t *chunk, size_t len, uint32_t n)
{
    struct rdps_arc_decoder d;
    struct rdps_arc_chunk_view v;
    size_t clen;
    assert_int_equal(rdps__arc_decoder_init(&d), 0);
    assert_int_equal(rdps__arc_chunk_open(&d, chunk, len, &v, &clen, NULL), RDPS_ARC_OK);
    assert_int_equal(clen, len);
    struct rdps_arc_record r;
    uint64_t number;
    uint32_t i = 0;
    while (rdps__arc_chunk_next(&v, &r, &number)) {
        assert_int_equal(number, 500 + i);
        assert_int_equal(r.seq, 1000 + i);
        assert_int_equal(r.body_len, i % 300);
        assert_int_equal(r.recorder_ts_ns, 6000000000ull + i * 10);
        for (uint32_t k = 0; k < r.body_len; k++)
            assert_int_equal(r.body[k], (uint8_t)(k * 7));
        i++;
    }
    assert_int_equal(i, n);
    rdps__arc_decoder_fini(&d);
}

static void test_chunk_round_trip(void **state)
{
    (void)state;
    size_t zlen, nlen;
    uint8_t *z = make_chunk(RDPS_ARC_CODEC_ZSTD, 200, &zlen);
    uint8_t *n = make_chunk(RDPS_ARC_CODEC_NONE, 200, &nlen);
    assert_int_equal(z[RDPS_ARC_CH_OFF_CODEC], RDPS_ARC_CODEC_ZSTD);
    assert_int_equal(n[RDPS_ARC_CH_OFF_CODEC], RDPS_ARC_CODEC_NONE);
    assert_true(zlen < nlen / 2); /* repetitive headers and bodies compress */
    check_chunk(z, zlen, 200);
    check_chunk(n, nlen, 200);
    free(z);
    free(n);
}

/* A chunk cut at every byte is never accepted; one byte flipped anywhere is never accepted. */
static void test_chunk_torn_and_flipped_at_every_byte(void **state)
{
    (void)state;
    for (int codec = RDPS_ARC_CODEC_NONE; codec <= RDPS_ARC_CODEC_ZSTD; codec++) {
        size_t len;
        uint8_t *chunk = make_chunk(codec, 20, &len);
        struct rdps_arc_decoder d;
        struct rdps_arc_chunk_view v;
        size_t clen;
        assert_int_equal(rdps__arc_decoder_init(&d), 0);
        for (size_t cut = 0; cut < len; cut++)
            assert_int_equal(rdps__arc_chunk_open(&d, chunk, cut, &v, &clen, NULL), RDPS_ARC_SHORT);
        for (size_t i = 0; i < len; i++) {
            chunk[i] ^= 0x01;
            assert_int_not_equal(rdps__arc_chunk_open(&d, chunk, len, &v, &clen, NULL),
                                 RDPS_ARC_OK);
            chunk[i] ^= 0x01;
        }
        assert_int_equal(rdps__arc_chunk_open(&d, chunk, len, &v, &clen, NULL), RDPS_ARC_OK);
        rdps__arc_decoder_fini(&d);
        free(chunk);
    }
}

/* A record larger than the builder's capacity gets a chunk of its own. */
static void test_large_record_own_chunk(void **state)
{
    (void)state;
    struct rdps_arc_builder b;
    struct rdps_arc_compressor c;
    size_t big = 1024 * 1024;
    uint8_t *body = calloc(1, big);
    assert_int_equal(rdps__arc_builder_init(&b, 4096), 0);
    assert_int_equal(rdps__arc_compressor_init(&c, RDPS_ARC_CODEC_ZSTD, 1), 0);
    struct rdps_arc_record r = message(0, body, 10);
    assert_int_equal(rdps__arc_builder_add(&b, &r, 0), 0);
    r = message(1, body, (uint32_t)big);
    assert_false(rdps__arc_builder_fits(&b, &r));
    assert_int_equal(rdps__arc_builder_add(&b, &r, 1), -28 /* ENOSPC */);
    size_t cap = rdps__arc_chunk_bound(b.raw_len);
    uint8_t *out = malloc(cap);
    assert_true(rdps__arc_chunk_seal(&b, &c, out, cap) > 0);
    free(out);
    assert_int_equal(rdps__arc_builder_add(&b, &r, 1), 0);
    cap = rdps__arc_chunk_bound(b.raw_len);
    out = malloc(cap);
    long len = rdps__arc_chunk_seal(&b, &c, out, cap);
    assert_true(len > 0 && (size_t)len < big / 10); /* zeros compress */
    struct rdps_arc_decoder d;
    struct rdps_arc_chunk_view v;
    size_t clen;
    assert_int_equal(rdps__arc_decoder_init(&d), 0);
    assert_int_equal(rdps__arc_chunk_open(&d, out, (size_t)len, &v, &clen, NULL), RDPS_ARC_OK);
    assert_int_equal(v.hdr.raw_len, RDPS_ARC_RECORD_HEADER_LEN + big);
    rdps__arc_decoder_fini(&d);
    rdps__arc_builder_fini(&b);
    rdps__arc_compressor_fini(&c);
    free(out);
    free(body);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32c_known_value),
        cmocka_unit_test(test_file_header_round_trip),
        cmocka_unit_test(test_index_and_catalog_round_trip),
        cmocka_unit_test(test_record_validation),
        cmocka_unit_test(test_chunk_round_trip),
        cmocka_unit_test(test_chunk_torn_and_flipped_at_every_byte),
        cmocka_unit_test(test_large_record_own_chunk),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
