/* SPDX-License-Identifier: BSD-2-Clause */
/* arc_catalog.c - the catalog file: parse, summarize, append without ever leaving a torn entry. */
#include "arc_catalog.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rdps/rdps.h>

#include "arc_io.h"

struct rdps_arc_recording *rdps__arc_catalog_find(const struct rdps_arc_catalog *cat, uint64_t id)
{
    /* Ids are appended in increasing order: binary search. */
    size_t lo = 0, hi = cat->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cat->recs[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < cat->count && cat->recs[lo].id == id ? &cat->recs[lo] : NULL;
}

uint64_t rdps__arc_catalog_next_id(const struct rdps_arc_catalog *cat)
{
    return cat->count > 0 ? cat->recs[cat->count - 1].id + 1 : 1;
}

/* One entry applied to the summaries; false only when memory ran out. */
static bool apply(struct rdps_arc_catalog *cat, const struct rdps_arc_catalog_entry *e)
{
    struct rdps_arc_recording *r = rdps__arc_catalog_find(cat, e->recording_id);
    if (e->type == RDPS_ARC_CE_START) {
        /* Only a new, larger id starts a recording (ids only grow). */
        if (r != NULL || (cat->count > 0 && e->recording_id < cat->recs[cat->count - 1].id) ||
            cat->count >= RDPS_ARC_CATALOG_MAX_RECORDINGS) {
            cat->ignored++;
            return true;
        }
        if (cat->count == cat->cap) {
            size_t ncap = cat->cap ? cat->cap * 2 : 16;
            struct rdps_arc_recording *bigger = realloc(cat->recs, ncap * sizeof(*bigger));
            if (bigger == NULL)
                return false;
            cat->recs = bigger;
            cat->cap = ncap;
        }
        char *spec = strndup(e->u.start.spec, e->u.start.spec_len);
        if (spec == NULL)
            return false;
        r = &cat->recs[cat->count++];
        memset(r, 0, sizeof(*r));
        r->spec = spec;
        r->id = e->recording_id;
        r->start_ns = e->u.start.start_ns;
        r->codec = e->u.start.codec;
        r->segment_bytes = e->u.start.segment_bytes;
        r->segment_ns = e->u.start.segment_ns;
        r->retain_bytes = e->u.start.retain_bytes;
        return true;
    }
    if (r == NULL) {
        cat->ignored++;
        return true;
    }
    if (e->type == RDPS_ARC_CE_STOP) {
        r->stopped = true;
        r->stop.end_ns = e->u.stop.end_ns;
        r->stop.records = e->u.stop.records;
        r->stop.messages = e->u.stop.messages;
        r->stop.loss_events = e->u.stop.loss_events;
        r->stop.overrun_messages = e->u.stop.overrun_messages;
        r->stop.last_record = e->u.stop.last_record;
        r->stop.bytes = e->u.stop.bytes;
        r->stop.segments = e->u.stop.segments;
        r->stop.reason = e->u.stop.reason;
    } else if (e->type == RDPS_ARC_CE_TRIM && e->u.trim.first_segment > r->first_segment) {
        r->first_segment = e->u.trim.first_segment;
    }
    return true;
}

size_t rdps__arc_catalog_parse(struct rdps_arc_catalog *cat, const uint8_t *buf, size_t len)
{
    size_t off = 0;
    while (off < len) {
        struct rdps_arc_catalog_entry e;
        size_t used;
        if (rdps__arc_catalog_decode(buf + off, len - off, &e, &used) != RDPS_ARC_OK)
            break;
        if (!apply(cat, &e))
            break;
        off += used;
    }
    return off;
}

static int create_catalog(const char *path)
{
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    uint8_t head[RDPS_ARC_FILE_HEADER_LEN];
    struct rdps_arc_file_header h = {0};
    rdps__arc_file_header_encode(head, RDPS_ARC_CATALOG_MAGIC, &h);
    int rc = rdps__arc_write_all(fd, head, sizeof(head));
    if (rc == 0 && fdatasync(fd) != 0)
        rc = -errno;
    if (rc != 0) {
        close(fd);
        unlink(path);
        return rc;
    }
    return fd;
}

int rdps__arc_catalog_open(struct rdps_arc_catalog *cat, const char *dir, bool for_append)
{
    memset(cat, 0, sizeof(*cat));
    cat->fd = -1;
    char path[RDPS_ARC_PATH_MAX];
    if (snprintf(path, sizeof(path), "%s/%s", dir, RDPS_ARC_CATALOG) >= (int)sizeof(path))
        return RDPS_EINVAL;
    int checked = rdps__arc_check_private(dir);
    if (checked != 0)
        return checked;
    int fd = open(path, (for_append ? O_RDWR : O_RDONLY) | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT && for_append) {
        fd = create_catalog(path);
        if (fd < 0)
            return fd;
        (void)rdps__arc_fsync_dir(dir);
    }
    if (fd < 0)
        return -errno;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int rc = -errno;
        close(fd);
        return rc;
    }
    size_t size = (size_t)st.st_size;
    uint8_t *buf = malloc(size > 0 ? size : 1);
    if (buf == NULL) {
        close(fd);
        return RDPS_ENOMEM;
    }
    ssize_t n = rdps__arc_pread_full(fd, buf, size, 0);
    struct rdps_arc_file_header h;
    int rc = 0;
    if (n < 0)
        rc = (int)n;
    else if (rdps__arc_file_header_decode(buf, (size_t)n, RDPS_ARC_CATALOG_MAGIC, &h) !=
             RDPS_ARC_OK)
        rc = RDPS_EPROTO;
    if (rc == 0) {
        size_t end = RDPS_ARC_FILE_HEADER_LEN +
                     rdps__arc_catalog_parse(cat, buf + RDPS_ARC_FILE_HEADER_LEN,
                                             (size_t)n - RDPS_ARC_FILE_HEADER_LEN);
        cat->valid_end = end;
        cat->torn_bytes = (uint64_t)n - end;
        if (for_append && cat->torn_bytes > 0 && ftruncate(fd, (off_t)end) != 0)
            rc = -errno;
    }
    free(buf);
    if (rc != 0 || !for_append) {
        close(fd);
        if (rc != 0)
            rdps__arc_catalog_close(cat);
        return rc;
    }
    if (lseek(fd, (off_t)cat->valid_end, SEEK_SET) < 0) {
        rc = -errno;
        close(fd);
        rdps__arc_catalog_close(cat);
        return rc;
    }
    cat->fd = fd;
    return 0;
}

void rdps__arc_catalog_close(struct rdps_arc_catalog *cat)
{
    if (cat->fd >= 0)
        close(cat->fd);
    for (size_t i = 0; i < cat->count; i++)
        free(cat->recs[i].spec);
    free(cat->recs);
    memset(cat, 0, sizeof(*cat));
    cat->fd = -1;
}

int rdps__arc_catalog_append(struct rdps_arc_catalog *cat, const struct rdps_arc_catalog_entry *e,
                             bool sync)
{
    uint8_t buf[RDPS_ARC_CE_HEAD_LEN + RDPS_ARC_CE_START_FIXED + 4 + RDPS_ARC_CE_SPEC_MAX +
                RDPS_ARC_CE_TRAILER_LEN];
    size_t len = rdps__arc_catalog_encode(buf, sizeof(buf), e);
    if (cat->fd < 0 || len == 0)
        return RDPS_EINVAL;
    int rc = rdps__arc_write_all(cat->fd, buf, len);
    if (rc == 0 && sync && fdatasync(cat->fd) != 0)
        rc = -errno;
    if (rc != 0) {
        /* Never leave half an entry: the next reader would stop there anyway, but a later
         * append after it would be lost to them. */
        if (ftruncate(cat->fd, (off_t)cat->valid_end) == 0)
            (void)lseek(cat->fd, (off_t)cat->valid_end, SEEK_SET);
        return rc;
    }
    cat->valid_end += len;
    return apply(cat, e) ? 0 : RDPS_ENOMEM;
}
