/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_archive.c - libFuzzer harness: the recording reader on corrupted segments, indexes and
 * catalogs (archive_fuzz_input.h): iterate, seek by time, record and session, verify, recover;
 * nothing may crash, hang or hand out a record that breaks the format's rules. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rdps/rdps_archive.h>

#include "arc_catalog.h"
#include "arc_index.h"
#include "arc_io.h"
#include "arc_writer.h"
#include "archive_fuzz_input.h"
#include "rdps_endian.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[128];

static void put_file(const char *path, const uint8_t *buf, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL || (len > 0 && fwrite(buf, 1, len, f) != len))
        abort();
    fclose(f);
}

/* Recomputes the CRCs of a segment's header and chunks, an index's header and entries, a
 * catalog's header and entries, where the lengths allow. */
static void fix_crcs(uint8_t *seg, size_t seg_len, uint8_t *idx, size_t idx_len, uint8_t *cat,
                     size_t cat_len)
{
    if (seg_len >= RDPS_ARC_FILE_HEADER_LEN)
        rdps__put_le32(seg + RDPS_ARC_FH_OFF_CRC, rdps__arc_crc32c(seg, RDPS_ARC_FH_OFF_CRC, 0));
    for (size_t off = RDPS_ARC_FILE_HEADER_LEN; off + RDPS_ARC_CHUNK_HEADER_LEN <= seg_len;) {
        uint8_t *h = seg + off;
        size_t stored = rdps__get_le32(h + RDPS_ARC_CH_OFF_STORED_LEN);
        if (stored > seg_len - off - RDPS_ARC_CHUNK_HEADER_LEN)
            stored = seg_len - off - RDPS_ARC_CHUNK_HEADER_LEN;
        rdps__put_le32(h + RDPS_ARC_CH_OFF_STORED_CRC,
                       rdps__arc_crc32c(h + RDPS_ARC_CHUNK_HEADER_LEN, stored, 0));
        rdps__put_le32(h + RDPS_ARC_CH_OFF_HEADER_CRC,
                       rdps__arc_crc32c(h, RDPS_ARC_CH_OFF_HEADER_CRC, 0));
        off += RDPS_ARC_CHUNK_HEADER_LEN + stored;
    }
    if (idx_len >= RDPS_ARC_FILE_HEADER_LEN)
        rdps__put_le32(idx + RDPS_ARC_FH_OFF_CRC, rdps__arc_crc32c(idx, RDPS_ARC_FH_OFF_CRC, 0));
    for (size_t off = RDPS_ARC_FILE_HEADER_LEN; off + RDPS_ARC_INDEX_ENTRY_LEN <= idx_len;
         off += RDPS_ARC_INDEX_ENTRY_LEN)
        rdps__put_le32(idx + off + RDPS_ARC_IX_OFF_CRC,
                       rdps__arc_crc32c(idx + off, RDPS_ARC_IX_OFF_CRC, 0));
    if (cat_len >= RDPS_ARC_FILE_HEADER_LEN)
        rdps__put_le32(cat + RDPS_ARC_FH_OFF_CRC, rdps__arc_crc32c(cat, RDPS_ARC_FH_OFF_CRC, 0));
    for (size_t off = RDPS_ARC_FILE_HEADER_LEN; off + RDPS_ARC_CE_HEAD_LEN + 4 <= cat_len;) {
        size_t body = rdps__get_le16(cat + off + RDPS_ARC_CE_OFF_BODY_LEN);
        size_t end = off + RDPS_ARC_CE_HEAD_LEN + body;
        if (end + 4 > cat_len)
            break;
        rdps__put_le32(cat + end, rdps__arc_crc32c(cat + off, end - off, 0));
        off = end + 4;
    }
}

/* Reads at most a bounded number of records, checking what the reader promises. */
static void read_some(rdps_archive_reader_t *r, int max)
{
    rdps_archive_record rec;
    int n = 0, rc;
    while (n < max && (rc = rdps_archive_reader_next(r, &rec)) != 0) {
        n++;
        if (rc < 0)
            continue; /* a bad chunk: the next call goes on after it */
        if (rec.type < RDPS_ARCHIVE_MESSAGE || rec.type > RDPS_ARCHIVE_OVERRUN ||
            rec.type == RDPS_ARCHIVE_TOPIC || rec.topic == NULL)
            abort();
        volatile size_t sum = strlen(rec.topic);
        if (rec.type == RDPS_ARCHIVE_MESSAGE && rec.len > 0)
            sum += ((const uint8_t *)rec.data)[rec.len - 1]; /* ASan: the body is readable */
        (void)sum;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < FUZZ_ARCHIVE_HEAD)
        return 0;
    if (dir[0] == '\0') {
        snprintf(dir, sizeof(dir), "/dev/shm/rdps-fuzz-archive-%d", (int)getpid());
        if (access("/dev/shm", W_OK) != 0)
            snprintf(dir, sizeof(dir), "/tmp/rdps-fuzz-archive-%d", (int)getpid());
    }
    uint8_t flags = data[0];
    size_t seg_len = rdps__get_le16(data + 1), idx_len = rdps__get_le16(data + 3),
           cat_len = rdps__get_le16(data + 5);
    uint64_t seek_ts = rdps__get_le64(data + 7);
    uint32_t session = rdps__get_le32(data + 15), seq = rdps__get_le32(data + 19);
    uint64_t number = rdps__get_le64(data + 23);
    size_t avail = size - FUZZ_ARCHIVE_HEAD;
    if (seg_len > avail)
        seg_len = avail;
    if (idx_len > avail - seg_len)
        idx_len = avail - seg_len;
    if (cat_len > avail - seg_len - idx_len)
        cat_len = avail - seg_len - idx_len;
    uint8_t *buf = malloc(avail + 1);
    if (buf == NULL)
        abort();
    memcpy(buf, data + FUZZ_ARCHIVE_HEAD, avail);
    uint8_t *seg = buf, *idx = buf + seg_len, *cat = buf + seg_len + idx_len;
    if (flags & 1)
        fix_crcs(seg, seg_len, idx, idx_len, cat, cat_len);

    char path[512];
    mkdir(dir, 0700);
    snprintf(path, sizeof(path), "%s/rec-00000001", dir);
    mkdir(path, 0700);
    snprintf(path, sizeof(path), "%s/rec-00000001/seg-00000000.rdpa", dir);
    put_file(path, seg, seg_len);
    snprintf(path, sizeof(path), "%s/rec-00000001/seg-00000000.rdpi", dir);
    put_file(path, idx, idx_len);
    snprintf(path, sizeof(path), "%s/catalog.rdpc", dir);
    put_file(path, cat, cat_len);

    /* The index and catalog parsers on the bytes themselves. */
    struct arc_index ix;
    if (rdps__arc_index_parse(idx, idx_len, 1, 0, &ix) == 0)
        rdps__arc_index_free(&ix);
    struct rdps_arc_catalog c = {.fd = -1};
    if (cat_len > RDPS_ARC_FILE_HEADER_LEN)
        rdps__arc_catalog_parse(&c, cat + RDPS_ARC_FILE_HEADER_LEN,
                                cat_len - RDPS_ARC_FILE_HEADER_LEN);
    rdps__arc_catalog_close(&c);

    for (int pass = 0; pass < ((flags & 2) ? 2 : 1); pass++) {
        rdps_archive_reader_t *r;
        if (rdps_archive_reader_open(dir, 1, &r) == 0) {
            read_some(r, 4096);
            rdps_archive_reader_seek_time(r, seek_ts);
            read_some(r, 64);
            rdps_archive_reader_seek_record(r, number);
            read_some(r, 64);
            rdps_archive_reader_seek_seq(r, rdps_topic_id("fz.a"), session, seq);
            read_some(r, 64);
            rdps_archive_reader_close(r);
        }
        rdps_archive_list(dir, NULL, NULL);
        rdps_archive_verify(dir, 0, NULL, NULL, NULL);
        if (pass == 0 && (flags & 2)) {
            struct rdps_arc_catalog_entry stop;
            char report[512];
            rdps__arc_recover_recording(dir, 1, &stop, report, sizeof(report));
        }
    }
    free(buf);
    return 0;
}
