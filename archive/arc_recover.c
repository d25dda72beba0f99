/* SPDX-License-Identifier: BSD-2-Clause */
/* arc_recover.c - closing recordings a recorder left unfinished (torn tail cut, index rebuilt) and
 * retention (oldest closed segments deleted beyond a size or an age). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "arc_writer_internal.h"
#include "rdps_error.h"

static void report_line(char *report, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void report_line(char *report, size_t cap, const char *fmt, ...)
{
    size_t used = strnlen(report, cap);
    if (cap == 0 || used + 1 >= cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(report + used, cap - used, fmt, ap);
    va_end(ap);
}

/* The index of a segment rebuilt from its records. */
struct rebuild {
    struct rdps_arc_index_entry *e;
    size_t n, cap;
    size_t chunk_entry; /* the current chunk's entry */
    uint64_t chunk_offset;
    bool have_chunk;
    /* sessions seen in this segment: a small open-addressing set */
    uint64_t *seen;
    size_t seen_slots, seen_used;
    bool failed;
};

static bool push(struct rebuild *rb, const struct rdps_arc_index_entry *e)
{
    if (rb->n == rb->cap) {
        size_t ncap = rb->cap ? rb->cap * 2 : 256;
        struct rdps_arc_index_entry *p = realloc(rb->e, ncap * sizeof(*p));
        if (p == NULL) {
            rb->failed = true;
            return false;
        }
        rb->e = p;
        rb->cap = ncap;
    }
    rb->e[rb->n++] = *e;
    return true;
}

/* True the first time (topic, session) is seen (a full set is emptied: a repeated entry only). */
static bool first_seen(struct rebuild *rb, uint64_t topic_id, uint32_t session)
{
    uint64_t key = (topic_id * 0x9e3779b97f4a7c15ull) ^ session;
    if (key == 0)
        key = 1;
    if (rb->seen_used + 1 > rb->seen_slots / 2) {
        memset(rb->seen, 0, rb->seen_slots * sizeof(*rb->seen));
        rb->seen_used = 0;
    }
    size_t mask = rb->seen_slots - 1;
    for (size_t i = (key ^ (key >> 29)) & mask;; i = (i + 1) & mask) {
        if (rb->seen[i] == key)
            return false;
        if (rb->seen[i] == 0) {
            rb->seen[i] = key;
            rb->seen_used++;
            return true;
        }
    }
}

static void rebuild_chunk(void *user, const struct rdps_arc_scan_chunk *c)
{
    struct rebuild *rb = user;
    struct rdps_arc_index_entry e = {
        .type = RDPS_ARC_IX_CHUNK,
        .a = c->offset,
        .b = c->len,
        .c = c->hdr.records,
        .first_record = c->hdr.first_record,
        .first_ts = c->hdr.first_ts,
        .d = c->hdr.last_ts,
    };
    if (push(rb, &e))
        rb->chunk_entry = rb->n - 1;
    rb->chunk_offset = c->offset;
}

static void rebuild_record(void *user, const struct rdps_arc_scan_chunk *c,
                           const struct rdps_arc_record *r, uint64_t number)
{
    struct rebuild *rb = user;
    (void)c;
    if (rb->failed)
        return;
    if (r->type == RDPS_ARC_REC_TOPIC)
        rb->e[rb->chunk_entry].flags |= RDPS_ARC_IXF_TOPICS;
    if (r->session_id == 0 || r->topic_id == 0 || r->type == RDPS_ARC_REC_TOPIC ||
        !first_seen(rb, r->topic_id, r->session_id))
        return;
    struct rdps_arc_index_entry e = {
        .type = RDPS_ARC_IX_SESSION,
        .a = r->topic_id,
        .b = r->session_id,
        .c = r->seq,
        .first_record = number,
        .first_ts = r->recorder_ts_ns,
        .d = rb->chunk_offset,
    };
    push(rb, &e);
}

/* Rewrites the index of segment `seg` from the entries rebuilt. */
static int write_index(const char *dir, uint64_t id, uint32_t seg,
                       const struct rdps_arc_file_header *h, const struct rebuild *rb)
{
    char path[RDPS_ARC_PATH_MAX];
    rdps__arc_segment_path(path, sizeof(path), dir, id, seg, RDPS_ARC_INDEX_EXT);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    uint8_t buf[RDPS_ARC_FILE_HEADER_LEN];
    rdps__arc_file_header_encode(buf, RDPS_ARC_INDEX_MAGIC, h);
    int rc = rdps__arc_write_all(fd, buf, sizeof(buf));
    for (size_t i = 0; rc == 0 && i < rb->n; i++) {
        uint8_t e[RDPS_ARC_INDEX_ENTRY_LEN];
        rdps__arc_index_encode(e, &rb->e[i]);
        rc = rdps__arc_write_all(fd, e, sizeof(e));
    }
    if (rc == 0 && fdatasync(fd) != 0)
        rc = -errno;
    close(fd);
    return rc;
}

/* Scans segment `seg` fully, cuts its torn tail, rebuilds its index. *removed: its header was
 * torn and the segment was deleted. */
static int recover_segment(const char *dir, uint64_t id, uint32_t seg, struct rdps_arc_scan *s,
                           bool *removed, char *report, size_t report_cap)
{
    char path[RDPS_ARC_PATH_MAX];
    *removed = false;
    rdps__arc_segment_path(path, sizeof(path), dir, id, seg, RDPS_ARC_SEGMENT_EXT);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    uint8_t head[RDPS_ARC_FILE_HEADER_LEN];
    struct rdps_arc_file_header h;
    ssize_t n = rdps__arc_pread_full(fd, head, sizeof(head), 0);
    if (n < 0) {
        close(fd);
        return (int)n;
    }
    if (rdps__arc_file_header_decode(head, (size_t)n, RDPS_ARC_SEGMENT_MAGIC, &h) != RDPS_ARC_OK ||
        h.recording_id != id || h.segment != seg) {
        close(fd);
        report_line(report, report_cap,
                    "recording %" PRIu64 ": removed segment %" PRIu32
                    " (%zd bytes, its header torn: created as the recorder died)\n",
                    id, seg, n);
        unlink(path);
        rdps__arc_segment_path(path, sizeof(path), dir, id, seg, RDPS_ARC_INDEX_EXT);
        unlink(path);
        *removed = true;
        return 0;
    }
    struct rdps_arc_decoder dec;
    struct rebuild rb = {.seen_slots = 8192};
    rb.seen = calloc(rb.seen_slots, sizeof(*rb.seen));
    int rc = rdps__arc_decoder_init(&dec);
    if (rc != 0 || rb.seen == NULL) {
        if (rc == 0)
            rdps__arc_decoder_fini(&dec);
        free(rb.seen);
        close(fd);
        return RDPS_ENOMEM;
    }
    s->fd = fd;
    s->full = true;
    s->dec = &dec;
    s->expect_first = h.first_record;
    s->on_chunk = rebuild_chunk;
    s->on_record = rebuild_record;
    s->user = &rb;
    rc = rdps__arc_scan_segment(s);
    if (rc == 0 && rb.failed)
        rc = RDPS_ENOMEM;
    if (rc == 0 && s->valid_end < s->file_size) {
        report_line(report, report_cap,
                    "recording %" PRIu64 " segment %" PRIu32 ": cut %" PRIu64
                    " bytes after its last whole chunk (offset %" PRIu64 ", %s; %" PRIu64
                    " records kept in it)\n",
                    id, seg, s->file_size - s->valid_end, s->valid_end,
                    rdps__arc_reject_text(s->stop_reason), s->records);
        if (ftruncate(fd, (off_t)s->valid_end) != 0 || fdatasync(fd) != 0)
            rc = -errno;
    }
    if (rc == 0)
        rc = write_index(dir, id, seg, &h, &rb);
    rdps__arc_decoder_fini(&dec);
    free(rb.e);
    free(rb.seen);
    close(fd);
    return rc;
}

int rdps__arc_recover_recording(const char *dir, uint64_t id, struct rdps_arc_catalog_entry *stop,
                                char *report, size_t report_cap)
{
    char rec_dir[RDPS_ARC_PATH_MAX];
    uint32_t *segs;
    size_t nsegs;
    memset(stop, 0, sizeof(*stop));
    stop->type = RDPS_ARC_CE_STOP;
    stop->recording_id = id;
    stop->u.stop.reason = RDPS_ARC_STOP_RECOVERED;
    rdps__arc_recording_dir(rec_dir, sizeof(rec_dir), dir, id);
    int rc = rdps__arc_list_segments(rec_dir, &segs, &nsegs);
    if (rc == -ENOENT) {
        report_line(report, report_cap, "recording %" PRIu64 ": no segment was written\n", id);
        return 0;
    }
    if (rc != 0)
        return rc;
    struct rdps_arc_scan s = {0};
    bool removed = true;
    /* Only the last segment can be torn (earlier ones were closed and synced); when its header
     * is torn it goes and the one before is the last. */
    while (nsegs > 0 && removed) {
        memset(&s, 0, sizeof(s));
        rc = recover_segment(dir, id, segs[nsegs - 1], &s, &removed, report, report_cap);
        if (rc != 0)
            break;
        if (removed)
            nsegs--;
    }
    if (rc == 0 && nsegs > 0) {
        stop->u.stop.records = s.next_record;
        stop->u.stop.last_record = s.next_record > 0 ? s.next_record - 1 : 0;
        stop->u.stop.end_ns = s.last_ts;
        stop->u.stop.segments = (uint32_t)nsegs;
        stop->u.stop.bytes = s.valid_end;
        report_line(report, report_cap,
                    "recording %" PRIu64 ": closed as recovered: %" PRIu64
                    " records in %zu segments\n",
                    id, s.next_record, nsegs);
    }
    free(segs);
    return rc;
}

int rdps__arc_recover_unfinished(struct rdps_arc_writer *w, uint64_t now_ns, char *report,
                                 size_t report_cap)
{
    if (w->cat.torn_bytes > 0)
        report_line(report, report_cap, "catalog: cut a torn last entry (%" PRIu64 " bytes)\n",
                    w->cat.torn_bytes);
    for (size_t i = 0; i < w->cat.count; i++) {
        if (w->cat.recs[i].stopped)
            continue;
        uint64_t id = w->cat.recs[i].id;
        struct rdps_arc_catalog_entry stop;
        int rc = rdps__arc_recover_recording(w->dir, id, &stop, report, report_cap);
        if (rc != 0)
            return rdps__set_err(rc, "recovering recording %" PRIu64 " in %s: %s", id, w->dir,
                                 rdps_strerror(rc));
        if (stop.u.stop.end_ns == 0)
            stop.u.stop.end_ns = w->cat.recs[i].start_ns > 0 ? w->cat.recs[i].start_ns : now_ns;
        rc = rdps__arc_catalog_append(&w->cat, &stop, true);
        if (rc != 0)
            return rdps__set_err(rc, "%s/%s: append: %s", w->dir, RDPS_ARC_CATALOG,
                                 rdps_strerror(rc));
    }
    return 0;
}

/* A closed segment retention may delete. */
struct closed_segment {
    uint64_t id;
    uint32_t seg;
    uint64_t bytes;
    int64_t mtime_s;
};

static void delete_segment(struct rdps_arc_writer *w, const struct closed_segment *c)
{
    char path[RDPS_ARC_PATH_MAX];
    rdps__arc_segment_path(path, sizeof(path), w->dir, c->id, c->seg, RDPS_ARC_SEGMENT_EXT);
    if (unlink(path) != 0 && errno != ENOENT)
        return;
    rdps__arc_segment_path(path, sizeof(path), w->dir, c->id, c->seg, RDPS_ARC_INDEX_EXT);
    unlink(path);
    w->stats.segments_deleted++;
    struct rdps_arc_catalog_entry trim = {
        .type = RDPS_ARC_CE_TRIM,
        .recording_id = c->id,
        .u.trim.first_segment = c->seg + 1,
    };
    (void)rdps__arc_catalog_append(&w->cat, &trim, false);
}

void rdps__arc_retention(struct rdps_arc_writer *w)
{
    if (w->o.retain_bytes == 0 && w->o.retain_ns == 0)
        return;
    struct closed_segment *list = NULL;
    size_t n = 0, cap = 0;
    uint64_t total = 0;
    for (size_t i = 0; i < w->cat.count; i++) {
        const struct rdps_arc_recording *r = &w->cat.recs[i];
        char rec_dir[RDPS_ARC_PATH_MAX];
        uint32_t *segs;
        size_t nsegs;
        rdps__arc_recording_dir(rec_dir, sizeof(rec_dir), w->dir, r->id);
        if (rdps__arc_list_segments(rec_dir, &segs, &nsegs) != 0)
            continue;
        for (size_t k = 0; k < nsegs; k++) {
            if (r->id == w->id && segs[k] >= w->segment)
                break; /* the segment being written */
            char path[RDPS_ARC_PATH_MAX];
            struct stat st;
            rdps__arc_segment_path(path, sizeof(path), w->dir, r->id, segs[k],
                                   RDPS_ARC_SEGMENT_EXT);
            if (stat(path, &st) != 0)
                continue;
            if (n == cap) {
                size_t ncap = cap ? cap * 2 : 64;
                struct closed_segment *p = realloc(list, ncap * sizeof(*p));
                if (p == NULL)
                    break;
                list = p;
                cap = ncap;
            }
            list[n++] =
                (struct closed_segment){r->id, segs[k], (uint64_t)st.st_size, (int64_t)st.st_mtime};
            total += (uint64_t)st.st_size;
        }
        free(segs);
    }
    int64_t now_s = (int64_t)time(NULL);
    for (size_t i = 0; i < n; i++) {
        bool too_big = w->o.retain_bytes != 0 && total > w->o.retain_bytes;
        bool too_old = w->o.retain_ns != 0 &&
                       list[i].mtime_s < now_s - (int64_t)(w->o.retain_ns / 1000000000u);
        if (!too_big && !too_old)
            break;
        delete_segment(w, &list[i]);
        total -= list[i].bytes;
    }
    free(list);
}
