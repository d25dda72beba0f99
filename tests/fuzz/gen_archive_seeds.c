/* SPDX-License-Identifier: BSD-2-Clause */
/* gen_archive_seeds.c - seeds of fuzz_archive: small recordings (zstd and stored chunks, several
 * sessions, loss and session markers, a message in many chunks, a torn tail) packed as
 * archive_fuzz_input.h says.
 * usage: fuzz_gen_archive_seeds CORPUS_DIR   (writes CORPUS_DIR/archive/) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rdps/rdps.h>

#include "archive_fuzz_input.h"
#include "arc_writer.h"
#include "rdps_endian.h"

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(*len + 1);
    if (buf == NULL || fread(buf, 1, *len, f) != *len)
        abort();
    fclose(f);
    return buf;
}

/* Writes a recording of n messages with codec into a scratch dir and packs it as seed `name`. */
static void seed(const char *out_dir, const char *name, int codec, int n, int body, size_t cut,
                 uint8_t flags)
{
    char dir[] = "/tmp/rdps-gen-archive-XXXXXX";
    if (mkdtemp(dir) == NULL)
        abort();
    struct rdps_arc_writer_opts o = {.dir = dir,
                                     .codec = codec,
                                     .level = 1,
                                     .chunk_bytes = 4096,
                                     .flush_ns = 1000000,
                                     .fsync_ns = UINT64_MAX,
                                     .segment_bytes = 1u << 30,
                                     .spec = "topics fz.a,fz.b",
                                     .max_topics = 8};
    struct rdps_arc_writer *w;
    char report[256];
    uint64_t ts = 1796550667000000000ull;
    if (rdps__arc_writer_open(&w, &o, ts, report, sizeof(report)) != 0)
        abort();
    static uint8_t data[8192];
    for (int i = 0; i < n; i++) {
        const char *topic = i % 3 ? "fz.a" : "fz.b";
        size_t len = (size_t)(body > 0 ? body : i % 40);
        memset(data, 'a' + i % 26, len);
        struct rdps_arc_record r = {.type = RDPS_ARC_REC_MESSAGE,
                                    .flags = i % 7 == 0,
                                    .topic_id = rdps_topic_id(topic),
                                    .session_id = 7 + (uint32_t)(i % 2),
                                    .seq = (uint32_t)i,
                                    .count = 1,
                                    .publisher_ts_ns = ts + (uint64_t)i * 1000,
                                    .recorder_ts_ns = ts + (uint64_t)i * 1000,
                                    .body = data,
                                    .body_len = (uint32_t)len};
        if (i == n / 2) {
            uint8_t loss[RDPS_ARC_LOSS_BODY_LEN] = {2};
            struct rdps_arc_record l = r;
            l.type = RDPS_ARC_REC_LOSS;
            l.count = 4;
            l.body = loss;
            l.body_len = sizeof(loss);
            rdps__arc_writer_append(w, &l, topic, (uint64_t)i);
            uint8_t src[RDPS_ARC_SESSION_BODY_LEN] = {0xfe, 0x80};
            struct rdps_arc_record s = r;
            s.type = RDPS_ARC_REC_SESSION_END;
            s.body = src;
            s.body_len = sizeof(src);
            rdps__arc_writer_append(w, &s, topic, (uint64_t)i);
        }
        rdps__arc_writer_append(w, &r, topic, (uint64_t)i);
    }
    rdps__arc_writer_close(w, ts + (uint64_t)n * 1000);
    char path[512];
    size_t seg_len, idx_len, cat_len;
    snprintf(path, sizeof(path), "%s/rec-00000001/seg-00000000.rdpa", dir);
    uint8_t *seg = slurp(path, &seg_len);
    snprintf(path, sizeof(path), "%s/rec-00000001/seg-00000000.rdpi", dir);
    uint8_t *idx = slurp(path, &idx_len);
    snprintf(path, sizeof(path), "%s/catalog.rdpc", dir);
    uint8_t *cat = slurp(path, &cat_len);
    if (seg == NULL || idx == NULL || cat == NULL)
        abort();
    if (cut > 0 && cut < seg_len)
        seg_len = cut;
    uint8_t head[FUZZ_ARCHIVE_HEAD] = {flags};
    rdps__put_le16(head + 1, (uint16_t)seg_len);
    rdps__put_le16(head + 3, (uint16_t)idx_len);
    rdps__put_le16(head + 5, (uint16_t)cat_len);
    rdps__put_le64(head + 7, ts + (uint64_t)n * 500);
    rdps__put_le32(head + 15, 7);
    rdps__put_le32(head + 19, (uint32_t)n / 3);
    rdps__put_le64(head + 23, (uint64_t)n / 4);
    snprintf(path, sizeof(path), "%s/archive/%s", out_dir, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(head, 1, sizeof(head), f) != sizeof(head) ||
        fwrite(seg, 1, seg_len, f) != seg_len || fwrite(idx, 1, idx_len, f) != idx_len ||
        fwrite(cat, 1, cat_len, f) != cat_len)
        abort();
    fclose(f);
    printf("%s: %zu + %zu + %zu bytes\n", path, seg_len, idx_len, cat_len);
    free(seg);
    free(idx);
    free(cat);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        abort();
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: fuzz_gen_archive_seeds CORPUS_DIR\n");
        return 2;
    }
    char path[512];
    snprintf(path, sizeof(path), "%s/archive", argv[1]);
    mkdir(path, 0755);
    seed(argv[1], "zstd_small", RDPS_ARC_CODEC_ZSTD, 60, 0, 0, 0);
    seed(argv[1], "stored_small", RDPS_ARC_CODEC_NONE, 40, 0, 0, 1);
    seed(argv[1], "zstd_chunks", RDPS_ARC_CODEC_ZSTD, 300, 30, 0, 1);
    seed(argv[1], "zstd_torn_recover", RDPS_ARC_CODEC_ZSTD, 200, 20, 3000, 3);
    seed(argv[1], "stored_big_messages", RDPS_ARC_CODEC_NONE, 6, 2000, 0, 1);
    return 0;
}
