/* SPDX-License-Identifier: BSD-2-Clause */
/* arc_io.h - the recording directory's files: names, whole writes and reads, segment lists, and
 * the scan that finds a segment's valid chunks (recovery, verification, readers without an
 * index). */
#ifndef RDPS_ARCHIVE_IO_H
#define RDPS_ARCHIVE_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rdps_archive_chunk.h"

#define RDPS_ARC_PATH_MAX    4096
#define RDPS_ARC_CATALOG     "catalog.rdpc"
#define RDPS_ARC_LOCK        "lock"
#define RDPS_ARC_SEGMENT_EXT ".rdpa"
#define RDPS_ARC_INDEX_EXT   ".rdpi"

/* dir/rec-%08llu and its segment and index files; RDPS_ENAMETOOLONG-like RDPS_EINVAL when the
 * path does not fit. */
int rdps__arc_recording_dir(char *out, size_t cap, const char *dir, uint64_t id);
int rdps__arc_segment_path(char *out, size_t cap, const char *dir, uint64_t id, uint32_t segment,
                           const char *ext);

/* write() until done (EINTR retried): 0 or -errno (a short write of a full disk is ENOSPC). */
int rdps__arc_write_all(int fd, const void *buf, size_t len);
/* pread() until len bytes or the end of the file: the bytes read, or -errno. */
ssize_t rdps__arc_pread_full(int fd, void *buf, size_t len, off_t off);
/* A recording directory is believed only when it is the caller's (or the caller is root) and
 * no one else may write into it: 0, or RDPS_EACCES with the reason recorded. */
int rdps__arc_check_private(const char *dir);
/* fsync of a directory (new entries durable). */
int rdps__arc_fsync_dir(const char *dir);

/* The segment numbers present in a recording directory, ascending (malloc'd; *count). 0, or
 * -errno (RDPS_ENOENT: no such recording directory). */
int rdps__arc_list_segments(const char *rec_dir, uint32_t **segments, size_t *count);

/* One chunk as a scan finds it. */
struct rdps_arc_scan_chunk {
    uint64_t offset;
    struct rdps_arc_chunk_header hdr;
    uint32_t len; /* header + stored bytes */
};

/*
 * Walks the chunks of an open segment file from its header on. With `full`, every chunk is
 * opened (checksums, decompression, records) with `dec`; otherwise only headers are checked.
 * Stops at the first chunk that fails, at a record number that does not follow, or at the end.
 * on_chunk (may be NULL) sees each valid chunk, and with `full` on_record each record.
 * Fills *valid_end (the offset after the last valid chunk) and *file_size. Returns 0, or -errno
 * for a read error or RDPS_ENOMEM.
 */
struct rdps_arc_scan {
    int fd;
    bool full;
    struct rdps_arc_decoder *dec;
    uint64_t expect_first; /* record number of the first chunk (UINT64_MAX: any) */
    void (*on_chunk)(void *user, const struct rdps_arc_scan_chunk *c);
    void (*on_record)(void *user, const struct rdps_arc_scan_chunk *c,
                      const struct rdps_arc_record *r, uint64_t number);
    void *user;
    /* results */
    uint64_t valid_end, file_size;
    uint64_t chunks, records, next_record, first_ts, last_ts;
    enum rdps_arc_reject stop_reason; /* why the walk stopped before file_size (OK: at the end) */
};
int rdps__arc_scan_segment(struct rdps_arc_scan *s);

#endif /* RDPS_ARCHIVE_IO_H */
