/* gen_seeds.c - writes the seed corpora for the fuzz harnesses (frame_decode/ and reasm/ under a
 * directory). */
#include <errno.h>
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
    memset(buf + 32, 'm', 64);
    n = rdps__frag_put_single(buf, sizeof(buf), 0x1234, 0x99, &seq, 64, 1024, 1, 0);
    write_file("frame_decode", "data_single", buf, (size_t)n);
    n = (int)rdps__frame_put_data_header(buf, 0x1234, 0x99, 8, 1000, 100, 100, 2,
                                         RDPS_FRAME_F_RETRANSMIT | RDPS_FRAME_F_RELIABLE);
    write_file("frame_decode", "data_middle", buf, (size_t)n);
    n = (int)rdps__frame_put_data_header(buf, 0x1234, 0x99, 9, 0, 0, 0, 3, 0);
    write_file("frame_decode", "data_empty", buf, (size_t)n);
    n = rdps__frame_encode_heartbeat(buf, sizeof(buf), 0x1234, 0x99, 0xFFFFFFFFu, 4,
                                     RDPS_FRAME_F_RELIABLE);
    write_file("frame_decode", "heartbeat", buf, (size_t)n);
    struct rdps_seq_range ranges[3] = {{1, 1}, {0xFFFFFFF0u, 32}, {100, 7}};
    n = rdps__frame_encode_nak(buf, sizeof(buf), 0x1234, 0x99, 5, ranges, 3, 5);
    write_file("frame_decode", "nak", buf, (size_t)n);
    n = rdps__frame_encode_status(buf, sizeof(buf), 0x1234, 0x99, 5, 1000, 256, 6);
    write_file("frame_decode", "status", buf, (size_t)n);
    static const uint8_t body[] = {0x0A, 0x05, 't', 'o', 'p', 'i', 'c', 0x10, 0x01};
    n = rdps__frame_encode_announce(buf, sizeof(buf), 0x4321, 0, 1, body, sizeof(body), 7);
    write_file("frame_decode", "announce", buf, (size_t)n);
    /* Near misses: one field off. */
    n = rdps__frame_encode_status(buf, sizeof(buf), 0x1234, 0x99, 5, 1000, 256, 6);
    rdps__put_le32(buf + RDPS_FRAME_STATUS_OFF_RESERVED, 1);
    write_file("frame_decode", "status_reserved", buf, (size_t)n);
    n = (int)rdps__frame_put_data_header(buf, 0x1234, 0x99, 8, 1000, 100, 100, 2, 0);
    rdps__put_le16(buf + RDPS_FRAME_OFF_FLAGS, RDPS_FRAME_F_END);
    write_file("frame_decode", "data_bad_end", buf, (size_t)n);
    write_file("frame_decode", "short", buf, 31);
}

/* A reasm input: records of [op][u16 length][datagram]. */
struct script {
    uint8_t bytes[65536];
    size_t len;
};

static void script_add(struct script *s, uint8_t op, const uint8_t *dgram, size_t len)
{
    if (s->len + 3 + len > sizeof(s->bytes))
        return;
    s->bytes[s->len] = op;
    rdps__put_le16(s->bytes + s->len + 1, (uint16_t)len);
    memcpy(s->bytes + s->len + 3, dgram, len);
    s->len += 3 + len;
}

/* Adds the frames of one message (max datagram 256) in the order given by `order` (or in order). */
static void script_message(struct script *s, uint8_t op, uint32_t session, uint32_t *seq,
                           size_t len, const int *order, size_t order_len)
{
    uint8_t msg[8192], frames[64][256];
    int frame_len[64];
    for (size_t i = 0; i < len; i++)
        msg[i] = (uint8_t)(i * 31 + session);
    struct rdps_frag it;
    int count = rdps__frag_init(&it, session, 0x99, seq, msg, len, sizeof(msg), 256, 1, 0);
    if (count <= 0 || count > 64)
        exit(1);
    for (int i = 0; i < count; i++)
        frame_len[i] = rdps__frag_next(&it, frames[i], sizeof(frames[i]));
    if (order == NULL) {
        for (int i = 0; i < count; i++)
            script_add(s, op, frames[i], (size_t)frame_len[i]);
        return;
    }
    for (size_t k = 0; k < order_len; k++)
        if (order[k] < count)
            script_add(s, op, frames[order[k]], (size_t)frame_len[order[k]]);
}

static void reasm_seeds(void)
{
    static struct script s;
    uint32_t seq;

    memset(&s, 0, sizeof(s));
    seq = 0xFFFFFFFEu;
    for (int i = 0; i < 5; i++)
        script_message(&s, (uint8_t)(i & 1), 1, &seq, (size_t)i * 10, NULL, 0);
    write_file("reasm", "singles_two_sources", s.bytes, s.len);

    memset(&s, 0, sizeof(s));
    seq = 100;
    script_message(&s, 0, 2, &seq, 1500, NULL, 0);
    write_file("reasm", "multi_in_order", s.bytes, s.len);

    memset(&s, 0, sizeof(s));
    seq = 0xFFFFFFFCu;
    static const int reversed_dup[] = {6, 5, 5, 4, 3, 2, 1, 0, 0, 3};
    script_message(&s, 0, 3, &seq, 1500, reversed_dup, 10);
    write_file("reasm", "multi_reversed_dups", s.bytes, s.len);

    memset(&s, 0, sizeof(s));
    seq = 50;
    static const int missing_middle[] = {0, 1, 3};
    script_message(&s, 0, 4, &seq, 900, missing_middle, 3);
    uint8_t hb[32];
    rdps__frame_encode_heartbeat(hb, sizeof(hb), 4, 0x99, seq + 3, 9, 0);
    script_add(&s, 0x80 | 0x30, hb, sizeof(hb)); /* time passes: the partial times out */
    script_add(&s, 0x80 | 0x70, hb, sizeof(hb));
    write_file("reasm", "loss_heartbeat_timeout", s.bytes, s.len);

    memset(&s, 0, sizeof(s));
    for (uint32_t session = 1; session <= 8; session++) {
        seq = session * 1000;
        static const int first_two[] = {0, 1};
        script_message(&s, (uint8_t)(session & 3), session, &seq, 3000, first_two, 2);
    }
    write_file("reasm", "session_and_partial_churn", s.bytes, s.len);

    memset(&s, 0, sizeof(s));
    seq = 1;
    script_message(&s, 0, 5, &seq, 8000, NULL, 0);
    write_file("reasm", "max_message", s.bytes, s.len);
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
