/* SPDX-License-Identifier: BSD-2-Clause */
/* arc_io.c - recording files: paths, whole writes and reads, segment lists, the chunk scan. */
#include "arc_io.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rdps/rdps.h>

#include "rdps_error.h"

int rdps__arc_recording_dir(char *out, size_t cap, const char *dir, uint64_t id)
{
    int n = snprintf(out, cap, "%s/rec-%08" PRIu64, dir, id);
    return n > 0 && (size_t)n < cap ? 0 : RDPS_EINVAL;
}

int rdps__arc_segment_path(char *out, size_t cap, const char *dir, uint64_t id, uint32_t segment,
                           const char *ext)
{
    int n = snprintf(out, cap, "%s/rec-%08" PRIu64 "/seg-%08" PRIu32 "%s", dir, id, segment, ext);
    return n > 0 && (size_t)n < cap ? 0 : RDPS_EINVAL;
}

int rdps__arc_write_all(int fd, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (n == 0)
            return -ENOSPC;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

ssize_t rdps__arc_pread_full(int fd, void *buf, size_t len, off_t off)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = pread(fd, (uint8_t *)buf + got, len - got, off + (off_t)got);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (n == 0)
            break;
        got += (size_t)n;
    }
    return (ssize_t)got;
}

int rdps__arc_check_private(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) != 0)
        return -errno;
    uid_t me = geteuid();
    if (me != 0 && st.st_uid != me)
        return rdps__set_err(RDPS_EACCES, "%s belongs to uid %u, not to this user (%u)", dir,
                             (unsigned)st.st_uid, (unsigned)me);
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
        return rdps__set_err(RDPS_EACCES,
                             "%s is writable by others (mode %03o): its recordings could be "
                             "forged; chmod go-w",
                             dir, (unsigned)(st.st_mode & 0777));
    return 0;
}

int rdps__arc_fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = fsync(fd) == 0 ? 0 : -errno;
    close(fd);
    return rc;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

int rdps__arc_list_segments(const char *rec_dir, uint32_t **segments, size_t *count)
{
    *segments = NULL;
    *count = 0;
    DIR *d = opendir(rec_dir);
    if (d == NULL)
        return -errno;
    size_t n = 0, cap = 0;
    uint32_t *list = NULL;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        unsigned seg;
        char ext[8];
        int used = 0;
        if (sscanf(e->d_name, "seg-%8u%7s%n", &seg, ext, &used) != 2 ||
            (size_t)used != strlen(e->d_name) || strcmp(ext, RDPS_ARC_SEGMENT_EXT) != 0 ||
            strlen(e->d_name) != strlen("seg-00000000" RDPS_ARC_SEGMENT_EXT))
            continue;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            uint32_t *bigger = realloc(list, ncap * sizeof(*list));
            if (bigger == NULL) {
                free(list);
                closedir(d);
                return RDPS_ENOMEM;
            }
            list = bigger;
            cap = ncap;
        }
        list[n++] = seg;
    }
    closedir(d);
    if (n > 1) /* qsort(NULL, 0) is undefined */
        qsort(list, n, sizeof(*list), cmp_u32);
    *segments = list;
    *count = n;
    return 0;
}

/* Reads the chunk at off whole into *buf (grown to fit): RDPS_ARC_OK with its header, or why it
 * is not a chunk (SHORT when the file ends inside it). */
static enum rdps_arc_reject read_chunk(struct rdps_arc_scan *s, uint64_t off, uint8_t **buf,
                                       size_t *cap, struct rdps_arc_chunk_header *h, int *err)
{
    uint8_t head[RDPS_ARC_CHUNK_HEADER_LEN];
    ssize_t n = rdps__arc_pread_full(s->fd, head, sizeof(head), (off_t)off);
    if (n < 0) {
        *err = (int)n;
        return RDPS_ARC_SHORT;
    }
    enum rdps_arc_reject why = rdps__arc_chunk_header_decode(head, (size_t)n, h);
    if (why != RDPS_ARC_OK)
        return why;
    size_t total = RDPS_ARC_CHUNK_HEADER_LEN + (size_t)h->stored_len;
    if (off + total > s->file_size)
        return RDPS_ARC_SHORT;
    if (!s->full)
        return RDPS_ARC_OK;
    if (*cap < total) {
        uint8_t *bigger = realloc(*buf, total);
        if (bigger == NULL) {
            *err = RDPS_ENOMEM;
            return RDPS_ARC_SHORT;
        }
        *buf = bigger;
        *cap = total;
    }
    n = rdps__arc_pread_full(s->fd, *buf, total, (off_t)off);
    if (n < 0) {
        *err = (int)n;
        return RDPS_ARC_SHORT;
    }
    return (size_t)n == total ? RDPS_ARC_OK : RDPS_ARC_SHORT;
}

int rdps__arc_scan_segment(struct rdps_arc_scan *s)
{
    struct stat st;
    if (fstat(s->fd, &st) != 0)
        return -errno;
    s->file_size = (uint64_t)st.st_size;
    s->valid_end = RDPS_ARC_FILE_HEADER_LEN;
    s->chunks = s->records = 0;
    s->next_record = s->expect_first;
    s->first_ts = s->last_ts = 0;
    s->stop_reason = RDPS_ARC_OK;
    uint8_t *buf = NULL;
    size_t cap = 0;
    int err = 0;
    uint64_t off = RDPS_ARC_FILE_HEADER_LEN;
    while (off < s->file_size) {
        struct rdps_arc_scan_chunk c = {.offset = off};
        enum rdps_arc_reject why = read_chunk(s, off, &buf, &cap, &c.hdr, &err);
        if (err != 0)
            break;
        struct rdps_arc_chunk_view view;
        size_t len = 0;
        if (why == RDPS_ARC_OK && s->full)
            why = rdps__arc_chunk_open(s->dec, buf, cap, &view, &len, NULL);
        if (why == RDPS_ARC_OK && s->next_record != UINT64_MAX &&
            c.hdr.first_record != s->next_record)
            why = RDPS_ARC_BAD_FIELD;
        if (why == RDPS_ARC_OK && s->chunks > 0 && c.hdr.first_ts < s->last_ts)
            why = RDPS_ARC_BAD_FIELD;
        if (why != RDPS_ARC_OK) {
            s->stop_reason = why;
            break;
        }
        c.len = (uint32_t)(RDPS_ARC_CHUNK_HEADER_LEN + c.hdr.stored_len);
        if (s->chunks == 0)
            s->first_ts = c.hdr.first_ts;
        s->last_ts = c.hdr.last_ts;
        s->chunks++;
        s->records += c.hdr.records;
        s->next_record = c.hdr.first_record + c.hdr.records;
        if (s->on_chunk != NULL)
            s->on_chunk(s->user, &c);
        if (s->full && s->on_record != NULL) {
            struct rdps_arc_record r;
            uint64_t number;
            while (rdps__arc_chunk_next(&view, &r, &number))
                s->on_record(s->user, &c, &r, number);
        }
        off += c.len;
        s->valid_end = off;
    }
    free(buf);
    return err;
}
