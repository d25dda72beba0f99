/* SPDX-License-Identifier: BSD-2-Clause */
/* gen_seeds.c - writes the seed corpora for the fuzz harnesses (frame_decode/ and reasm/ under a
 * directory). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rdps_batch.h"
#include "rdps_endian.h"
#include "rdps_frag.h"
#include "rdps_frame.h"

static const char *out_dir;

static void write_file(const char *sub, const char *name, const uint8_t *data, size_t len)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", out_dir, sub);
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
        perror(path);
        exit(1);
    }
    snprintf(path, sizeof(path), "%s/%s/%s", out_dir, sub, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

/* A batch of the given message lengths (each filled with its index) at ordinal 0xFFFFFFFE. */
static int put_batch(uint8_t *buf, uint32_t cap, uint64_t topic, const uint32_t *lens, unsigned n)
{
    struct rdps_batch b;
    rdps__batch_open(&b, buf, cap);
    for (unsigned i = 0; i < n; i++) {
        if (!rdps__batch_fits(&b, lens[i]))
            exit(1);
        memset(rdps__batch_add(&b, lens[i]), (int)i, lens[i]);
    }
    return (int)rdps__frame_put_data_header(buf, 0x1234, topic, 12, b.used, 0, b.used, 5,
                                            RDPS_FRAME_F_RELIABLE, 0xFFFFFFFEu, b.count);
}

/* Batches valid and malformed (lengths past the end, counts that do not match), fragments with a
 * count, control frames with ordinals, and batch-writer scripts (fuzz_frame_decode.c). */
static void batch_seeds(uint64_t topic)
{
    uint8_t buf[1024];
    static const uint32_t lens[] = {5, 0, 17, 1, 0, 64, 3};
    int n = put_batch(buf, sizeof(buf), topic, lens, 7);
    write_file("frame_decode", "batch", buf, (size_t)n);
    rdps__put_le32(buf + RDPS_FRAME_OFF_COUNT, 6);
    write_file("frame_decode", "batch_count_short", buf, (size_t)n);
    rdps__put_le32(buf + RDPS_FRAME_OFF_COUNT, 8);
    write_file("frame_decode", "batch_count_long", buf, (size_t)n);
    rdps__put_le32(buf + RDPS_FRAME_OFF_COUNT, 0xFFFFFFFFu);
    write_file("frame_decode", "batch_count_huge", buf, (size_t)n);
    rdps__put_le32(buf + RDPS_FRAME_OFF_COUNT, 7);
    rdps__put_le16(buf + RDPS_FRAME_HEADER_LEN + 2 + 5 + 2 + 2, 400); /* the third runs past */
    write_file("frame_decode", "batch_past_end", buf, (size_t)n);
    static const uint32_t empty[] = {0, 0, 0, 0};
    n = put_batch(buf, sizeof(buf), topic, empty, 4);
    write_file("frame_decode", "batch_empty_messages", buf, (size_t)n);
    static const uint32_t full[] = {900, 70}; /* fills a 1024-byte datagram exactly */
    n = put_batch(buf, sizeof(buf), topic, full, 2);
    write_file("frame_decode", "batch_full", buf, (size_t)n);
    n = (int)rdps__frame_put_data_header(buf, 0x1234, topic, 13, 3000, 0, 900, 6, 0, 77, 1);
    write_file("frame_decode", "fragment_with_count", buf, (size_t)n);
    n = (int)rdps__frame_put_data_header(buf, 0x1234, topic, 14, 3000, 2100, 900, 6, 0, 77, 0);
    write_file("frame_decode", "fragment_last", buf, (size_t)n);
    n = (int)rdps__frame_put_data_header(buf, 0x1234, topic, 15, 10, 0, 10, 6, 0, 78, 0);
    write_file("frame_decode", "whole_count_zero", buf, (size_t)n);
    struct rdps_seq_range one = {3, 1};
    n = rdps__frame_encode_nak(buf, sizeof(buf), 0x1234, topic, 5, &one, 1, 5);
    rdps__put_le32(buf + RDPS_FRAME_OFF_ORDINAL, 9);
    write_file("frame_decode", "nak_with_ordinal", buf, (size_t)n);
    n = rdps__frame_encode_heartbeat(buf, sizeof(buf), 0x1234, topic, 20, 30, 4, 0);
    rdps__put_le32(buf + RDPS_FRAME_OFF_COUNT, 29);
    write_file("frame_decode", "heartbeat_unreliable_trail", buf, (size_t)n);
    /* Batch-writer scripts: [cap x2] then [op][arg] pairs (the frame decoder rejects them). */
    static const uint8_t script[] = {0x00, 0x01, 0x00, 10, 0x01, 40, 0x02, 30, 0x80, 0,
                                     0x00, 0,    0x03, 0,  0x04, 7,  0x01, 0,  0x00, 200};
    write_file("frame_decode", "writer_script", script, sizeof(script));
}

static void frame_seeds(void)
{
    uint8_t buf[512];
    uint32_t seq = 7;
    int n;
    const uint64_t topic = 0x8877665544332299ull; /* every byte of the 64-bit id set */
    memset(buf + RDPS_FRAME_HEADER_LEN, 'm', 64);
    n = rdps__frag_put_single(buf, sizeof(buf), 0x1234, topic, &seq, 64, 1024, 1, 0, 0xFFFFFFFFu);
    write_file("frame_decode", "data_single", buf, (size_t)n);
    n = (int)rdps__frame_put_data_header(buf, 0x1234, topic, 8, 1000, 100, 100, 2,
                                         RDPS_FRAME_F_RETRANSMIT | RDPS_FRAME_F_RELIABLE, 500,
                                         rdps__frame_one_count(1000, 100, 100));
    write_file("frame_decode", "data_middle", buf, (size_t)n);
    n = (int)rdps__frame_put_data_header(buf, 0x1234, topic, 9, 0, 0, 0, 3, 0, 501,
                                         rdps__frame_one_count(0, 0, 0));
    write_file("frame_decode", "data_empty", buf, (size_t)n);
    n = rdps__frame_encode_heartbeat(buf, sizeof(buf), 0x1234, topic, 0xFFFFFFFFu, 0x7FFFFFFFu, 4,
                                     0);
    write_file("frame_decode", "heartbeat", buf, (size_t)n);
    n = rdps__frame_encode_heartbeat_reliable(buf, sizeof(buf), 0x1234, topic, 0xFFFFFFFFu, 4096,
                                              0x10u, 0xFFFFF000u, 4);
    write_file("frame_decode", "heartbeat_reliable", buf, (size_t)n);
    rdps__put_le32(buf + RDPS_FRAME_OFF_MSG_LEN, RDPS_FRAME_MAX_RETAINED + 1);
    write_file("frame_decode", "heartbeat_bad_retained", buf, (size_t)n);
    struct rdps_seq_range ranges[3] = {{1, 1}, {0xFFFFFFF0u, 32}, {100, 7}};
    n = rdps__frame_encode_nak(buf, sizeof(buf), 0x1234, topic, 5, ranges, 3, 5);
    write_file("frame_decode", "nak", buf, (size_t)n);
    n = rdps__frame_encode_status(buf, sizeof(buf), 0x1234, topic, 5, 1000, 256, 6);
    write_file("frame_decode", "status", buf, (size_t)n);
    n = rdps__frame_encode_status_echo(buf, sizeof(buf), 0x1234, topic, 5, 1000, 256, 250, 6);
    write_file("frame_decode", "status_echo", buf, (size_t)n);
    static const uint8_t body[] = {0x0A, 0x05, 't', 'o', 'p', 'i', 'c', 0x10, 0x01};
    n = rdps__frame_encode_announce(buf, sizeof(buf), 0x4321, 0, 1, body, sizeof(body), 7);
    write_file("frame_decode", "announce", buf, (size_t)n);
    /* Near misses: one field off. */
    n = rdps__frame_encode_status(buf, sizeof(buf), 0x1234, topic, 5, 1000, 256, 6);
    rdps__put_le32(buf + RDPS_FRAME_OFF_SEQ, 1);
    write_file("frame_decode", "status_seq", buf, (size_t)n);
    n = (int)rdps__frame_put_data_header(buf, 0x1234, topic, 8, 1000, 100, 100, 2, 0, 8,
                                         rdps__frame_one_count(1000, 100, 100));
    rdps__put_le16(buf + RDPS_FRAME_OFF_FLAGS, RDPS_FRAME_F_END);
    write_file("frame_decode", "data_bad_end", buf, (size_t)n);
    n = (int)rdps__frame_put_data_header(buf, 0x1234, topic, 8, 1000, 100, 100, 2, 0, 8,
                                         rdps__frame_one_count(1000, 100, 100));
    rdps__put_le32(buf + RDPS_FRAME_OFF_RESERVED, 1);
    write_file("frame_decode", "data_reserved", buf, (size_t)n);
    write_file("frame_decode", "short", buf, RDPS_FRAME_HEADER_LEN - 1);
    /* Parity: a symbol of block 0xFFFFFFC0 (k 64, the last block before the wrap), a parity
     * NAK, and hostile variants (k not a power of two, index past the limit, short symbol). */
    n = rdps__frame_put_parity_header(buf, 0x1234, topic, 0xFFFFFFC0u, 64, 5, 8);
    memset(buf + RDPS_FRAME_HEADER_LEN, 0x5A, 100);
    write_file("frame_decode", "parity", buf, (size_t)n + 100);
    rdps__put_le32(buf + RDPS_FRAME_OFF_MSG_LEN, 48);
    write_file("frame_decode", "parity_bad_k", buf, (size_t)n + 100);
    rdps__put_le32(buf + RDPS_FRAME_OFF_MSG_LEN, 64);
    rdps__put_le32(buf + RDPS_FRAME_OFF_FRAG_OFFSET, 128);
    write_file("frame_decode", "parity_bad_index", buf, (size_t)n + 100);
    rdps__put_le32(buf + RDPS_FRAME_OFF_FRAG_OFFSET, 5);
    write_file("frame_decode", "parity_short", buf, (size_t)n + 10);
    struct rdps_seq_range blocks[2] = {{0xFFFFFFC0u, 3}, {0, 64}};
    n = rdps__frame_encode_nak_flags(buf, sizeof(buf), 0x1234, topic, 5, blocks, 2, 5,
                                     RDPS_FRAME_F_PARITY);
    write_file("frame_decode", "nak_parity", buf, (size_t)n);
    rdps__put_le32(buf + RDPS_FRAME_NAK_OFF_RANGES + 4, 129);
    write_file("frame_decode", "nak_parity_bad_count", buf, (size_t)n);
    n = rdps__frame_encode_heartbeat_parity(buf, sizeof(buf), 0x1234, topic, 0xFFFFFFC5u, 4096, 77,
                                            13, 9, 64, 350, 8);
    write_file("frame_decode", "heartbeat_parity", buf, (size_t)n);
    batch_seeds(topic);
    /* A version 1 DATA frame (32-byte header, 32-bit topic id): BAD_VERSION. */
    static const uint8_t v1_data[37] = {1, 1, 3, 0, 0x34, 0x12, 0,   0,   0x99, 0,   0,  0, 7,
                                        0, 0, 0, 5, 0,    0,    0,   0,   0,    0,   0,  1, 0,
                                        0, 0, 0, 0, 0,    0,    'h', 'e', 'l',  'l', 'o'};
    write_file("frame_decode", "version1_data", v1_data, sizeof(v1_data));
}

/* A reasm input: op bytes and their arguments, as tests/fuzz/fuzz_reasm.c reads them. */
struct script {
    uint8_t bytes[65536];
    size_t len;
};

static void script_bytes(struct script *s, const uint8_t *b, size_t n)
{
    if (s->len + n > sizeof(s->bytes))
        exit(1);
    memcpy(s->bytes + s->len, b, n);
    s->len += n;
}

/* An honest publish of msgs (1..32) messages: source src, session 1 + session, datagrams of
 * header + 8 + 8 * size bytes. */
static void op_publish_n(struct script *s, bool send_now, unsigned msgs, unsigned src,
                         unsigned session, unsigned size, uint16_t len)
{
    uint8_t b[4] = {(uint8_t)((send_now ? 0 : 1) | (msgs - 1) << 3),
                    (uint8_t)(src | session << 1 | size << 2)};
    rdps__put_le16(b + 2, len);
    script_bytes(s, b, 4);
}

static void op_publish(struct script *s, bool send_now, unsigned src, unsigned session,
                       unsigned size, uint16_t len)
{
    op_publish_n(s, send_now, 1, src, session, size, len);
}

static void op_send_pool(struct script *s, uint8_t index, int hostile)
{
    uint8_t b[2] = {hostile < 0 ? 2 : (uint8_t)(3 | hostile << 3), index};
    script_bytes(s, b, 2);
}

static void op_hostile_ord(struct script *s, unsigned hostile, uint8_t sel, uint32_t seq,
                           uint16_t msg_len, uint16_t offset, uint8_t payload_len,
                           int8_t ordinal_step, uint8_t count)
{
    uint8_t b[15] = {(uint8_t)(5 | hostile << 3), sel};
    rdps__put_le32(b + 2, seq);
    rdps__put_le16(b + 6, msg_len);
    rdps__put_le16(b + 8, offset);
    b[12] = payload_len;
    b[13] = (uint8_t)ordinal_step;
    b[14] = count;
    script_bytes(s, b, 15);
}

static void op_hostile(struct script *s, unsigned hostile, uint8_t sel, uint32_t seq,
                       uint16_t msg_len, uint16_t offset, uint8_t payload_len)
{
    op_hostile_ord(s, hostile, sel, seq, msg_len, offset, payload_len, 1, 1);
}

static void op_time(struct script *s, unsigned steps)
{
    uint8_t b = (uint8_t)(6 | steps << 3);
    script_bytes(s, &b, 1);
}

static void op_publisher(struct script *s, unsigned src, unsigned session, uint16_t n)
{
    uint8_t b[3] = {(uint8_t)(7 | src << 3 | session << 4)};
    rdps__put_le16(b + 1, n);
    script_bytes(s, b, 3);
}

/* The publisher's next ordinal moves by step (backwards when negative). */
static void op_ordinal_jump(struct script *s, unsigned src, unsigned session, int16_t step)
{
    uint8_t b[3] = {(uint8_t)(7 | src << 3 | session << 4 | 7 << 5)};
    rdps__put_le16(b + 1, (uint16_t)step);
    script_bytes(s, b, 3);
}

/* Batches: many small messages per datagram, lost, reordered, repaired; ordinals that jump. */
static void reasm_batch_seeds(void)
{
    static struct script s;

    memset(&s, 0, sizeof(s));
    for (unsigned i = 0; i < 6; i++) /* 32 messages of a few bytes in 64- to 512-byte datagrams */
        op_publish_n(&s, true, 32, i & 1, 0, 7 + 10 * i, (uint16_t)(3 + 5 * i));
    write_file("reasm", "batches_in_order", s.bytes, s.len);

    memset(&s, 0, sizeof(s));
    op_publish_n(&s, false, 24, 0, 0, 20, 40);  /* unreliable: gaps count batched messages */
    op_publish_n(&s, false, 12, 0, 0, 20, 900); /* some fragmented between batches */
    static const uint8_t order[] = {0, 2, 3, 5, 4, 9, 8, 11, 12, 13, 15, 16};
    for (size_t i = 0; i < sizeof(order); i++)
        op_send_pool(&s, order[i], -1);
    op_time(&s, 3);
    op_send_pool(&s, 1, -1); /* late after its gap */
    op_publisher(&s, 0, 0, 1);
    op_time(&s, 7);
    write_file("reasm", "batches_gaps_late", s.bytes, s.len);

    memset(&s, 0, sizeof(s));
    op_publish_n(&s, false, 20, 1, 1, 12, 30); /* reliable: loss events count messages */
    op_publish_n(&s, false, 6, 1, 1, 12, 300);
    for (uint8_t i = 0; i < 14; i += (uint8_t)(i % 3 == 1 ? 2 : 1))
        op_send_pool(&s, i, -1);
    op_publisher(&s, 1, 1, 2 * 6 + 1); /* heartbeat: 6 retained */
    for (unsigned t = 0; t < 6; t++)
        op_time(&s, 31);
    op_publisher(&s, 1, 1, 8); /* skipped datagrams */
    op_publish_n(&s, true, 3, 1, 1, 12, 10);
    for (unsigned t = 0; t < 6; t++)
        op_time(&s, 31);
    write_file("reasm", "reliable_batches_loss", s.bytes, s.len);

    memset(&s, 0, sizeof(s));
    op_publish_n(&s, true, 4, 0, 1, 8, 20);
    op_ordinal_jump(&s, 0, 1, -3); /* ordinals going backwards */
    op_publish_n(&s, true, 4, 0, 1, 8, 20);
    op_ordinal_jump(&s, 0, 0, 1000); /* and jumping */
    op_publish_n(&s, true, 4, 0, 0, 8, 20);
    for (unsigned h = 0; h < 4; h++) { /* hostile batches with counts off by -1..2 */
        op_hostile_ord(&s, h, 0x20, 100 + h, 0, 0, 120, -5, (uint8_t)(0x80 | h));
        op_hostile_ord(&s, h, 0x20, 101 + h, 0, 0, 60, 3, 2);
        op_hostile_ord(&s, h, 0x60, 102 + h, 3, 0, 0, -100, 7);     /* reliable heartbeat */
        op_hostile_ord(&s, h, 0x00, 103 + h, 40, 0, 40, 127, 0xF3); /* a huge count */
    }
    op_time(&s, 31);
    write_file("reasm", "ordinals_backwards_hostile_batches", s.bytes, s.len);
}

static void reasm_seeds(void)
{
    static struct script s;

    memset(&s, 0, sizeof(s));
    for (unsigned i = 0; i < 12; i++)
        op_publish(&s, true, i & 1, (i >> 1) & 1, 26, (uint16_t)(i * 37));
    write_file("reasm", "singles_two_sources", s.bytes, s.len);

    memset(&s, 0, sizeof(s));
    op_publish(&s, true, 0, 0, 26, 1500);
    op_publish(&s, true, 1, 1, 0, 8192);
    op_publish(&s, true, 0, 1, 63, 4000);
    write_file("reasm", "multi_in_order", s.bytes, s.len);

    memset(&s, 0, sizeof(s));
    op_publish(&s, false, 0, 0, 10, 700);
    op_publish(&s, false, 1, 0, 10, 500);
    static const uint8_t order[] = {6, 5, 5, 4, 3, 9, 2, 1, 0, 0, 3, 8, 7, 10, 11, 12, 13, 14, 15};
    for (size_t i = 0; i < sizeof(order); i++)
        op_send_pool(&s, order[i], -1);
    write_file("reasm", "reordered_dups_two_sources", s.bytes, s.len);

    memset(&s, 0, sizeof(s));
    op_publish(&s, false, 0, 0, 10, 900);
    op_send_pool(&s, 0, -1);
    op_send_pool(&s, 1, -1);
    op_send_pool(&s, 3, -1);
    op_publisher(&s, 0, 0, 1); /* heartbeat: the tail is missing */
    op_time(&s, 3);
    op_time(&s, 7);
    op_send_pool(&s, 2, -1);
    write_file("reasm", "loss_heartbeat_timeout", s.bytes, s.len);

    memset(&s, 0, sizeof(s));
    op_publish(&s, false, 0, 0, 10, 1400);
    op_send_pool(&s, 0, -1);
    for (unsigned h = 0; h < 4; h++) {
        /* Copies of honest frames and forged huge or tiny partials from colliding sources. */
        op_send_pool(&s, 1, (int)h);
        op_hostile(&s, h, 0, 1000 + h, 8192, 0, 200);
        op_hostile(&s, h, 1, 2000 + h, 8000, 16 * 4, 16);
        op_hostile(&s, h, 0x40, 0x80000000u + h, 0, 0, 0);
    }
    for (uint8_t i = 1; i < 20; i++)
        op_send_pool(&s, i, -1);
    for (uint8_t session = 0; session < 4; session++) /* one source, more streams than its quota */
        op_hostile(&s, 1, session, 5000, 0, 0, 0);
    write_file("reasm", "hostile_sources", s.bytes, s.len);

    memset(&s, 0, sizeof(s));
    op_publish(&s, true, 0, 0, 26, 10);
    op_publisher(&s, 0, 0, 2000);   /* skip 8000 sequences: a reset */
    op_publisher(&s, 0, 0, 0x8001); /* a heartbeat from far ahead */
    op_publish(&s, true, 0, 0, 26, 10);
    op_publisher(&s, 0, 0, 100); /* skip 400: a gap */
    op_publish(&s, true, 0, 0, 26, 20);
    write_file("reasm", "skip_reset_gap", s.bytes, s.len);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
        return 2;
    }
    out_dir = argv[1];
    frame_seeds();
    reasm_seeds();
    reasm_batch_seeds();
    return 0;
}
