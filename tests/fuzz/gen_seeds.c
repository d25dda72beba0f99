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

static void frame_seeds(void)
{
    uint8_t buf[512];
    uint32_t seq = 7;
    int n;
    const uint64_t topic = 0x8877665544332299ull; /* every byte of the 64-bit id set */
    memset(buf + RDPS_FRAME_HEADER_LEN, 'm', 64);
    n = rdps__frag_put_single(buf, sizeof(buf), 0x1234, topic, &seq, 64, 1024, 1, 0);
    write_file("frame_decode", "data_single", buf, (size_t)n);
    n = (int)rdps__frame_put_data_header(buf, 0x1234, topic, 8, 1000, 100, 100, 2,
                                         RDPS_FRAME_F_RETRANSMIT | RDPS_FRAME_F_RELIABLE);
    write_file("frame_decode", "data_middle", buf, (size_t)n);
    n = (int)rdps__frame_put_data_header(buf, 0x1234, topic, 9, 0, 0, 0, 3, 0);
    write_file("frame_decode", "data_empty", buf, (size_t)n);
    n = rdps__frame_encode_heartbeat(buf, sizeof(buf), 0x1234, topic, 0xFFFFFFFFu, 4, 0);
    write_file("frame_decode", "heartbeat", buf, (size_t)n);
    n = rdps__frame_encode_heartbeat_reliable(buf, sizeof(buf), 0x1234, topic, 0xFFFFFFFFu, 4096,
                                              4);
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
    n = (int)rdps__frame_put_data_header(buf, 0x1234, topic, 8, 1000, 100, 100, 2, 0);
    rdps__put_le16(buf + RDPS_FRAME_OFF_FLAGS, RDPS_FRAME_F_END);
    write_file("frame_decode", "data_bad_end", buf, (size_t)n);
    n = (int)rdps__frame_put_data_header(buf, 0x1234, topic, 8, 1000, 100, 100, 2, 0);
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
    n = rdps__frame_encode_heartbeat_parity(buf, sizeof(buf), 0x1234, topic, 0xFFFFFFC5u, 4096, 9,
                                            64, 350, 8);
    write_file("frame_decode", "heartbeat_parity", buf, (size_t)n);
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

/* An honest publish: source src, session 1 + session, datagrams of 48 + 8 * size bytes. */
static void op_publish(struct script *s, bool send_now, unsigned src, unsigned session,
                       unsigned size, uint16_t len)
{
    uint8_t b[4] = {send_now ? 0 : 1, (uint8_t)(src | session << 1 | size << 2)};
    rdps__put_le16(b + 2, len);
    script_bytes(s, b, 4);
}

static void op_send_pool(struct script *s, uint8_t index, int hostile)
{
    uint8_t b[2] = {hostile < 0 ? 2 : (uint8_t)(3 | hostile << 3), index};
    script_bytes(s, b, 2);
}

static void op_hostile(struct script *s, unsigned hostile, uint8_t sel, uint32_t seq,
                       uint16_t msg_len, uint16_t offset, uint8_t payload_len)
{
    uint8_t b[13] = {(uint8_t)(5 | hostile << 3), sel};
    rdps__put_le32(b + 2, seq);
    rdps__put_le16(b + 6, msg_len);
    rdps__put_le16(b + 8, offset);
    b[12] = payload_len;
    script_bytes(s, b, 13);
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
    return 0;
}
