/* SPDX-License-Identifier: BSD-2-Clause */
/* test_archive_store.c - the file layer and the reader: round trip across segments, seeks by time,
 * record and session sequence, the catalog, retention, a torn tail cut at every byte of the last
 * chunk, and a full disk (a 1 MiB tmpfs, when root). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <rdps/rdps_archive.h>

#include "arc_catalog.h"
#include "arc_io.h"
#include "archive_test_util.h"

#define BASE_TS 1700000000000000000ull

/* Writes n test records into a new recording of dir; returns its id. */
static uint64_t write_records(const struct rdps_arc_writer_opts *o, uint64_t n, bool close_it)
{
    struct rdps_arc_writer *w;
    char report[1024];
    uint8_t body[128];
    assert_int_equal(rdps__arc_writer_open(&w, o, BASE_TS, report, sizeof(report)), 0);
    uint64_t id = rdps__arc_writer_stats(w)->recording_id;
    for (uint64_t i = 0; i < n; i++) {
        struct rdps_arc_record r = test_record(i, body, BASE_TS);
        assert_int_equal(rdps__arc_writer_append(w, &r, test_topic(i), i * 1000), 0);
        assert_int_equal(rdps__arc_writer_tick(w, i * 1000), 0);
    }
    assert_int_equal(rdps__arc_writer_flush(w, n * 1000), 0);
    if (close_it)
        rdps__arc_writer_close(w, BASE_TS + n * 1000);
    else
        _exit(0); /* the crash tests: a child dies without closing */
    return id;
}

static void check_record(const rdps_archive_record *rec, uint64_t i)
{
    uint8_t body[128];
    struct rdps_arc_record want = test_record(i, body, BASE_TS);
    assert_int_equal(rec->type, RDPS_ARCHIVE_MESSAGE);
    assert_int_equal(rec->seq, want.seq);
    assert_int_equal(rec->session_id, want.session_id);
    assert_int_equal(rec->recorder_ts_ns, want.recorder_ts_ns);
    assert_string_equal(rec->topic, test_topic(i));
    assert_int_equal(rec->len, want.body_len);
    assert_memory_equal(rec->data, body, want.body_len);
}

/* Reads the recording from the start: every record in order, then the end. Returns how many. */
static uint64_t read_all(const char *dir, uint64_t id)
{
    rdps_archive_reader_t *r;
    rdps_archive_record rec;
    assert_int_equal(rdps_archive_reader_open(dir, id, &r), 0);
    uint64_t n = 0;
    int rc;
    while ((rc = rdps_archive_reader_next(r, &rec)) == 1) {
        /* TOPIC records take numbers too: messages are in order, numbers increase. */
        check_record(&rec, n);
        n++;
    }
    assert_int_equal(rc, 0);
    rdps_archive_reader_close(r);
    return n;
}

static void test_round_trip_across_segments(void **state)
{
    (void)state;
    char dir[256];
    scratch_dir(dir, sizeof(dir), "arc-rt");
    struct rdps_arc_writer_opts o;
    writer_opts(&o, dir);
    o.segment_bytes = 16 * 1024;
    uint64_t id = write_records(&o, 20000, true);
    assert_int_equal(id, 1);
    assert_int_equal(read_all(dir, 0), 20000);
    char rec_dir[512];
    uint32_t *segs;
    size_t nsegs;
    rdps__arc_recording_dir(rec_dir, sizeof(rec_dir), dir, id);
    assert_int_equal(rdps__arc_list_segments(rec_dir, &segs, &nsegs), 0);
    assert_true(nsegs > 5);
    free(segs);
    rdps_archive_verify_result vr;
    assert_int_equal(rdps_archive_verify(dir, id, NULL, NULL, &vr), 0);
    assert_int_equal(vr.segments, nsegs);
    assert_int_equal(vr.bad_chunks + vr.bad_indexes + vr.torn_bytes, 0);
    /* A second recording in the same directory gets the next id. */
    assert_int_equal(write_records(&o, 10, true), 2);
    scratch_remove(dir);
}

/* The spec is valid during the callback only: kept in specs[]. */
static char specs[4][64];
static void list_cb(void *user, const rdps_archive_info *info)
{
    rdps_archive_info *out = user;
    out[info->id - 1] = *info;
    snprintf(specs[info->id - 1], sizeof(specs[0]), "%s", info->spec);
    out[info->id - 1].spec = specs[info->id - 1];
}

static void test_catalog_lists_recordings(void **state)
{
    (void)state;
    char dir[256];
    scratch_dir(dir, sizeof(dir), "arc-cat");
    struct rdps_arc_writer_opts o;
    writer_opts(&o, dir);
    write_records(&o, 100, true);
    o.spec = "prefix md.";
    write_records(&o, 50, true);
    rdps_archive_info infos[2];
    assert_int_equal(rdps_archive_list(dir, list_cb, infos), 2);
    assert_int_equal(infos[0].state, RDPS_ARCHIVE_STOPPED);
    assert_int_equal(infos[0].messages, 100);
    assert_string_equal(infos[0].spec, "topics test.a");
    assert_string_equal(infos[1].spec, "prefix md.");
    assert_int_equal(infos[1].messages, 50);
    assert_true(infos[1].records > 50); /* TOPIC records count as records */
    /* A second writer on a held directory is refused. */
    struct rdps_arc_writer *w1, *w2;
    char report[256];
    assert_int_equal(rdps__arc_writer_open(&w1, &o, BASE_TS, report, sizeof(report)), 0);
    assert_int_equal(rdps__arc_writer_open(&w2, &o, BASE_TS, report, sizeof(report)), RDPS_EBUSY);
    rdps__arc_writer_close(w1, BASE_TS);
    assert_int_equal(rdps_archive_list("/nonexistent-rdps", list_cb, infos), RDPS_ENOENT);
    scratch_remove(dir);
}

static void test_seeks(void **state)
{
    (void)state;
    char dir[256];
    scratch_dir(dir, sizeof(dir), "arc-seek");
    struct rdps_arc_writer_opts o;
    writer_opts(&o, dir);
    o.segment_bytes = 32 * 1024;
    const uint64_t n = 30000;
    write_records(&o, n, true);
    rdps_archive_reader_t *r;
    rdps_archive_record rec;
    assert_int_equal(rdps_archive_reader_open(dir, 1, &r), 0);
    srand(7);
    for (int k = 0; k < 300; k++) {
        uint64_t i = (uint64_t)rand() % n;
        /* By time: the first record at or after it. */
        assert_int_equal(rdps_archive_reader_seek_time(r, BASE_TS + i * 1000 - 1), 0);
        assert_int_equal(rdps_archive_reader_next(r, &rec), 1);
        check_record(&rec, i);
        /* By session sequence: record i is session 100 + i % 3, seq i / 3. */
        assert_int_equal(rdps_archive_reader_seek_seq(r, (i % 3) + 1, 100 + (uint32_t)(i % 3),
                                                      (uint32_t)(i / 3)),
                         0);
        assert_int_equal(rdps_archive_reader_next(r, &rec), 1);
        check_record(&rec, i);
        /* By record number: and the record after it follows. */
        uint64_t number = rec.number;
        assert_int_equal(rdps_archive_reader_seek_record(r, number), 0);
        assert_int_equal(rdps_archive_reader_next(r, &rec), 1);
        assert_int_equal(rec.number, number);
        check_record(&rec, i);
        if (i + 1 < n) {
            assert_int_equal(rdps_archive_reader_next(r, &rec), 1);
            check_record(&rec, i + 1);
        }
    }
    /* Past the end; before the start; a session the recording does not have. */
    assert_int_equal(rdps_archive_reader_seek_time(r, BASE_TS + n * 1000 + 1), 0);
    assert_int_equal(rdps_archive_reader_next(r, &rec), 0);
    assert_int_equal(rdps_archive_reader_seek_time(r, 0), 0);
    assert_int_equal(rdps_archive_reader_next(r, &rec), 1);
    check_record(&rec, 0);
    assert_int_equal(rdps_archive_reader_seek_seq(r, 1, 999, 0), RDPS_ENOENT);
    rdps_archive_reader_close(r);
    scratch_remove(dir);
}

static void test_retention(void **state)
{
    (void)state;
    char dir[256];
    scratch_dir(dir, sizeof(dir), "arc-ret");
    struct rdps_arc_writer_opts o;
    writer_opts(&o, dir);
    o.segment_bytes = 16 * 1024;
    o.retain_bytes = 64 * 1024;
    write_records(&o, 40000, true);
    char rec_dir[512];
    uint32_t *segs;
    size_t nsegs;
    rdps__arc_recording_dir(rec_dir, sizeof(rec_dir), dir, 1);
    assert_int_equal(rdps__arc_list_segments(rec_dir, &segs, &nsegs), 0);
    /* At most retain_bytes of closed segments, plus the last one (open while retention ran). */
    uint64_t total = 0;
    for (size_t i = 0; i < nsegs; i++) {
        char path[600];
        struct stat st;
        rdps__arc_segment_path(path, sizeof(path), dir, 1, segs[i], RDPS_ARC_SEGMENT_EXT);
        assert_int_equal(stat(path, &st), 0);
        if (i + 1 < nsegs)
            total += (uint64_t)st.st_size;
    }
    assert_true(total <= o.retain_bytes);
    assert_true(segs[0] > 0);
    rdps_archive_info info[1];
    assert_int_equal(rdps_archive_list(dir, list_cb, info), 1);
    assert_int_equal(info[0].first_segment, segs[0]);
    /* The reader starts at the first segment kept; verify finds nothing wrong. */
    rdps_archive_reader_t *r;
    rdps_archive_record rec;
    assert_int_equal(rdps_archive_reader_open(dir, 1, &r), 0);
    assert_int_equal(rdps_archive_reader_next(r, &rec), 1);
    assert_true(rec.number > 0);
    assert_string_not_equal(rec.topic, "");
    rdps_archive_reader_close(r);
    assert_int_equal(rdps_archive_verify(dir, 1, NULL, NULL, NULL), 0);
    free(segs);
    scratch_remove(dir);
}

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(*len + 1);
    assert_int_equal(fread(buf, 1, *len, f), *len);
    fclose(f);
    return buf;
}

static void spill(const char *path, const uint8_t *buf, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, len, f), len);
    fclose(f);
}

/*
 * A recorder killed while writing its last chunk: every cut of the segment inside that chunk
 * (and inside the previous one) is recovered to the whole chunks before the cut, the report says
 * how many bytes went, the index is rebuilt, and nothing after recovery fails verification.
 */
static void test_torn_tail_every_byte(void **state)
{
    (void)state;
    char dir[256];
    scratch_dir(dir, sizeof(dir), "arc-torn");
    struct rdps_arc_writer_opts o;
    writer_opts(&o, dir);
    pid_t pid = fork();
    if (pid == 0)
        write_records(&o, 300, false); /* _exit()s without a STOP entry */
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char seg_path[600], idx_path[600], cat_path[600];
    rdps__arc_segment_path(seg_path, sizeof(seg_path), dir, 1, 0, RDPS_ARC_SEGMENT_EXT);
    rdps__arc_segment_path(idx_path, sizeof(idx_path), dir, 1, 0, RDPS_ARC_INDEX_EXT);
    snprintf(cat_path, sizeof(cat_path), "%s/%s", dir, RDPS_ARC_CATALOG);
    size_t seg_len, idx_len, cat_len;
    uint8_t *seg = slurp(seg_path, &seg_len);
    uint8_t *idx = slurp(idx_path, &idx_len);
    uint8_t *cat = slurp(cat_path, &cat_len);
    /* The chunk starts, from the index's chunk entries. */
    size_t nchunks = 0;
    uint64_t starts[256];
    for (size_t off = RDPS_ARC_FILE_HEADER_LEN; off + RDPS_ARC_INDEX_ENTRY_LEN <= idx_len;
         off += RDPS_ARC_INDEX_ENTRY_LEN) {
        struct rdps_arc_index_entry e;
        assert_int_equal(rdps__arc_index_decode(idx + off, RDPS_ARC_INDEX_ENTRY_LEN, &e),
                         RDPS_ARC_OK);
        if (e.type == RDPS_ARC_IX_CHUNK)
            starts[nchunks++] = e.a;
    }
    assert_true(nchunks >= 3);
    uint64_t from = starts[nchunks - 2];
    for (uint64_t cut = from; cut < seg_len; cut++) {
        spill(seg_path, seg, cut);
        spill(idx_path, idx, idx_len);
        spill(cat_path, cat, cat_len);
        struct rdps_arc_catalog_entry stop;
        char report[1024] = "";
        assert_int_equal(rdps__arc_recover_recording(dir, 1, &stop, report, sizeof(report)), 0);
        size_t whole = 0;
        while (whole < nchunks && (whole + 1 == nchunks ? seg_len : starts[whole + 1]) <= cut)
            whole++;
        uint64_t kept_end = whole == nchunks ? seg_len : starts[whole];
        if (cut > kept_end)
            assert_non_null(strstr(report, "cut "));
        struct stat st;
        assert_int_equal(stat(seg_path, &st), 0);
        assert_int_equal((uint64_t)st.st_size, kept_end);
        assert_int_equal(rdps_archive_verify(dir, 1, NULL, NULL, NULL), 0);
        uint64_t n = read_all(dir, 1);
        assert_int_equal(stop.u.stop.records > 0, true);
        assert_true(n <= 300);
    }
    free(seg);
    free(idx);
    free(cat);
    /* A writer opening the directory closes the recording as recovered. */
    struct rdps_arc_writer *w;
    char report[1024];
    assert_int_equal(rdps__arc_writer_open(&w, &o, BASE_TS, report, sizeof(report)), 0);
    assert_non_null(strstr(report, "closed as recovered"));
    rdps__arc_writer_close(w, BASE_TS);
    rdps_archive_info info[2];
    assert_int_equal(rdps_archive_list(dir, list_cb, info), 2);
    assert_int_equal(info[0].state, RDPS_ARCHIVE_RECOVERED);
    scratch_remove(dir);
}

/* A 1 MiB tmpfs fills: the writer stops with RDPS_ENOSPC, every file stays whole. */
static void test_full_disk(void **state)
{
    (void)state;
    if (geteuid() != 0) {
        print_message("skipped: mounting a small tmpfs needs root\n");
        skip();
    }
    char dir[256];
    scratch_dir(dir, sizeof(dir), "arc-full");
    if (mount("tmpfs", dir, "tmpfs", 0, "size=1m,mode=0700") != 0) {
        print_message("skipped: mount tmpfs: %s (no CAP_SYS_ADMIN here?)\n", strerror(errno));
        scratch_remove(dir);
        skip();
    }
    struct rdps_arc_writer_opts o;
    writer_opts(&o, dir);
    o.codec = RDPS_ARC_CODEC_NONE; /* fills faster */
    o.segment_bytes = 256 * 1024;
    struct rdps_arc_writer *w;
    char report[256];
    uint8_t body[128];
    assert_int_equal(rdps__arc_writer_open(&w, &o, BASE_TS, report, sizeof(report)), 0);
    int rc = 0;
    uint64_t i;
    for (i = 0; i < 10000000 && rc == 0; i++) {
        struct rdps_arc_record r = test_record(i, body, BASE_TS);
        rc = rdps__arc_writer_append(w, &r, test_topic(i), i * 1000);
    }
    assert_int_equal(rc, RDPS_ENOSPC);
    assert_int_equal(rdps__arc_writer_error(w), RDPS_ENOSPC);
    rdps__arc_writer_close(w, BASE_TS + i * 1000);
    /* Whatever the catalog could take, the segments are whole chunks only. */
    rdps_archive_verify_result vr;
    int v = rdps_archive_verify(dir, 1, NULL, NULL, &vr);
    assert_int_equal(vr.torn_bytes, 0);
    assert_int_equal(vr.bad_chunks, 0);
    assert_true(v == 0 || vr.bad_indexes <= 1);
    assert_true(read_all(dir, 1) > 1000);
    assert_int_equal(umount(dir), 0);
    scratch_remove(dir);
}

/* The flush rule on a fake clock: a chunk is written when it holds chunk_bytes, or flush_ns after
 * its first record (tick), not before; fsync follows fsync_ns after the first unsynced write. */
static void test_flush_rule(void **state)
{
    (void)state;
    char dir[256];
    scratch_dir(dir, sizeof(dir), "arc-flush");
    struct rdps_arc_writer_opts o;
    writer_opts(&o, dir);
    o.flush_ns = 5000000;
    o.fsync_ns = 20000000;
    struct rdps_arc_writer *w;
    char report[256];
    uint8_t body[128];
    assert_int_equal(rdps__arc_writer_open(&w, &o, BASE_TS, report, sizeof(report)), 0);
    const struct rdps_arc_writer_stats *st = rdps__arc_writer_stats(w);
    struct rdps_arc_record r = test_record(1, body, BASE_TS);
    assert_int_equal(rdps__arc_writer_append(w, &r, test_topic(1), 1000), 0);
    assert_int_equal(rdps__arc_writer_deadline(w), 1000 + o.flush_ns);
    assert_int_equal(rdps__arc_writer_tick(w, 1000 + o.flush_ns - 1), 0);
    assert_int_equal(st->chunks, 0);
    assert_int_equal(rdps__arc_writer_tick(w, 1000 + o.flush_ns), 0);
    assert_int_equal(st->chunks, 1);
    assert_int_equal(st->written_messages, 1);
    assert_int_equal(st->fsyncs, 0);
    assert_int_equal(rdps__arc_writer_deadline(w), 1000 + o.flush_ns + o.fsync_ns);
    assert_int_equal(rdps__arc_writer_tick(w, 1000 + o.flush_ns + o.fsync_ns), 0);
    assert_int_equal(st->fsyncs, 1);
    assert_int_equal(rdps__arc_writer_deadline(w), UINT64_MAX);
    /* chunk_bytes of records seal at once, whatever the clock. */
    uint64_t i = 2;
    while (st->chunks == 1) {
        r = test_record(i, body, BASE_TS);
        assert_int_equal(rdps__arc_writer_append(w, &r, test_topic(i), 2000000000), 0);
        i++;
    }
    assert_true(i * 48 >= o.chunk_bytes / 2);
    rdps__arc_writer_close(w, BASE_TS);
    scratch_remove(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_across_segments),
        cmocka_unit_test(test_catalog_lists_recordings),
        cmocka_unit_test(test_seeks),
        cmocka_unit_test(test_retention),
        cmocka_unit_test(test_torn_tail_every_byte),
        cmocka_unit_test(test_full_disk),
        cmocka_unit_test(test_flush_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
