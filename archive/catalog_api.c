/* SPDX-License-Identifier: BSD-2-Clause */
/* catalog_api.c - rdps_archive_list and rdps_archive_verify: the catalog as users see it, and a
 * full check of a recording's chunks, records, numbering and indexes. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdps/rdps_archive.h>

#include "arc_catalog.h"
#include "arc_index.h"
#include "arc_io.h"
#include "rdps_archive_chunk.h"
#include "rdps_error.h"

static rdps_archive_state state_of(const struct rdps_arc_recording *r)
{
    if (!r->stopped)
        return RDPS_ARCHIVE_RECORDING;
    switch (r->stop.reason) {
    case RDPS_ARC_STOP_DISK_FULL:
        return RDPS_ARCHIVE_DISK_FULL;
    case RDPS_ARC_STOP_IO_ERROR:
        return RDPS_ARCHIVE_IO_ERROR;
    case RDPS_ARC_STOP_RECOVERED:
        return RDPS_ARCHIVE_RECOVERED;
    default:
        return RDPS_ARCHIVE_STOPPED;
    }
}

static int rdps_archive_list_impl(const char *dir, rdps_archive_info_cb cb, void *user)
{
    if (dir == NULL)
        return RDPS_EINVAL;
    struct rdps_arc_catalog cat;
    int rc = rdps__arc_catalog_open(&cat, dir, false);
    if (rc == RDPS_EACCES)
        return rc;
    if (rc != 0)
        return rdps__set_err(rc, "%s/%s: %s", dir, RDPS_ARC_CATALOG,
                             rc == RDPS_EPROTO ? "not a recording catalog" : rdps_strerror(rc));
    for (size_t i = 0; i < cat.count && cb != NULL; i++) {
        const struct rdps_arc_recording *r = &cat.recs[i];
        rdps_archive_info info = {
            .id = r->id,
            .state = state_of(r),
            .start_ns = r->start_ns,
            .end_ns = r->stop.end_ns,
            .spec = r->spec,
            .first_segment = r->first_segment,
            .segments = r->stop.segments,
            .records = r->stop.records,
            .messages = r->stop.messages,
            .loss_events = r->stop.loss_events,
            .overrun_messages = r->stop.overrun_messages,
            .bytes = r->stop.bytes,
        };
        cb(user, &info);
    }
    int n = cat.count > INT32_MAX ? INT32_MAX : (int)cat.count;
    rdps__arc_catalog_close(&cat);
    return n;
}

struct verify {
    void (*problem)(void *user, const char *line);
    void *user;
    rdps_archive_verify_result *res;
    int found;
};

static void problem(struct verify *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(struct verify *v, const char *fmt, ...)
{
    v->found = 1;
    if (v->problem == NULL)
        return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    v->problem(v->user, line);
}

/* Collects a segment's chunks to compare with its index. */
struct chunk_list {
    struct rdps_arc_scan_chunk *c;
    size_t n, cap;
    bool oom;
};

static void collect_chunk(void *user, const struct rdps_arc_scan_chunk *c)
{
    struct chunk_list *l = user;
    if (l->n == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 256;
        struct rdps_arc_scan_chunk *p = realloc(l->c, ncap * sizeof(*p));
        if (p == NULL) {
            l->oom = true;
            return;
        }
        l->c = p;
        l->cap = ncap;
    }
    l->c[l->n++] = *c;
}

static void check_index(struct verify *v, const char *dir, uint64_t id, uint32_t seg,
                        const struct chunk_list *l)
{
    struct arc_index ix;
    if (rdps__arc_index_load(dir, id, seg, &ix) != 0) {
        problem(v, "segment %" PRIu32 ": index: out of memory", seg);
        return;
    }
    bool bad = !ix.complete || ix.nchunks != l->n;
    for (size_t i = 0; !bad && i < ix.nchunks; i++) {
        const struct rdps_arc_index_entry *e = &ix.chunks[i];
        const struct rdps_arc_scan_chunk *c = &l->c[i];
        bad = e->a != c->offset || e->b != c->len || e->c != c->hdr.records ||
              e->first_record != c->hdr.first_record || e->first_ts != c->hdr.first_ts ||
              e->d != c->hdr.last_ts;
    }
    if (bad) {
        v->res->bad_indexes++;
        problem(v,
                "segment %" PRIu32 ": index %s: %zu chunk entries for %zu chunks (rebuilt when "
                "a recorder recovers the recording)",
                seg, ix.complete ? "disagrees with the segment" : "torn or corrupt", ix.nchunks,
                l->n);
    }
    rdps__arc_index_free(&ix);
}

static int verify_segment(struct verify *v, const char *dir, uint64_t id, uint32_t seg,
                          uint64_t *next_record, struct rdps_arc_decoder *dec)
{
    char path[RDPS_ARC_PATH_MAX];
    rdps__arc_segment_path(path, sizeof(path), dir, id, seg, RDPS_ARC_SEGMENT_EXT);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    uint8_t head[RDPS_ARC_FILE_HEADER_LEN];
    struct rdps_arc_file_header h;
    ssize_t n = rdps__arc_pread_full(fd, head, sizeof(head), 0);
    enum rdps_arc_reject why =
        n < 0 ? RDPS_ARC_SHORT
              : rdps__arc_file_header_decode(head, (size_t)n, RDPS_ARC_SEGMENT_MAGIC, &h);
    if (why != RDPS_ARC_OK || h.recording_id != id || h.segment != seg) {
        problem(v, "segment %" PRIu32 ": bad header (%s)", seg,
                why != RDPS_ARC_OK ? rdps__arc_reject_text(why) : "names another segment");
        v->res->bad_chunks++;
        close(fd);
        return 0;
    }
    if (*next_record != UINT64_MAX && h.first_record != *next_record)
        problem(v, "segment %" PRIu32 ": starts at record %" PRIu64 ", expected %" PRIu64, seg,
                h.first_record, *next_record);
    struct chunk_list l = {0};
    struct rdps_arc_scan s = {
        .fd = fd,
        .full = true,
        .dec = dec,
        .expect_first = h.first_record,
        .on_chunk = collect_chunk,
        .user = &l,
    };
    int rc = rdps__arc_scan_segment(&s);
    close(fd);
    if (rc == 0 && l.oom)
        rc = RDPS_ENOMEM;
    if (rc != 0) {
        free(l.c);
        return rc;
    }
    v->res->segments++;
    v->res->chunks += s.chunks;
    v->res->records += s.records;
    v->res->bytes += s.valid_end;
    if (s.chunks > 0) {
        if (v->res->first_ts == 0)
            v->res->first_ts = s.first_ts;
        v->res->last_ts = s.last_ts;
    }
    if (s.valid_end < s.file_size) {
        v->res->torn_bytes += s.file_size - s.valid_end;
        v->res->bad_chunks++;
        problem(v,
                "segment %" PRIu32 ": %" PRIu64 " bytes from offset %" PRIu64
                " are not whole valid chunks (%s)",
                seg, s.file_size - s.valid_end, s.valid_end, rdps__arc_reject_text(s.stop_reason));
    }
    check_index(v, dir, id, seg, &l);
    free(l.c);
    *next_record = s.next_record;
    return 0;
}

static int rdps_archive_verify_impl(const char *dir, uint64_t id,
                                    void (*problem_cb)(void *user, const char *line), void *user,
                                    rdps_archive_verify_result *result)
{
    rdps_archive_verify_result local;
    if (result == NULL)
        result = &local;
    memset(result, 0, sizeof(*result));
    if (dir == NULL)
        return RDPS_EINVAL;
    struct rdps_arc_catalog cat;
    int rc = rdps__arc_catalog_open(&cat, dir, false);
    if (rc == RDPS_EACCES)
        return rc;
    if (rc != 0)
        return rdps__set_err(rc, "%s: no recording catalog (%s)", dir, rdps_strerror(rc));
    if (id == 0)
        id = cat.count > 0 ? cat.recs[cat.count - 1].id : 0;
    const struct rdps_arc_recording *rec = rdps__arc_catalog_find(&cat, id);
    uint32_t first_segment = rec != NULL ? rec->first_segment : 0;
    bool stopped = rec != NULL && rec->stopped;
    uint64_t stop_records = rec != NULL ? rec->stop.records : 0;
    uint64_t torn_catalog = cat.torn_bytes;
    rdps__arc_catalog_close(&cat);
    if (rec == NULL)
        return rdps__set_err(RDPS_ENOENT, "%s: no recording %" PRIu64, dir, id);
    struct verify v = {.problem = problem_cb, .user = user, .res = result};
    if (torn_catalog > 0)
        problem(&v, "catalog: %" PRIu64 " bytes after its last whole entry", torn_catalog);
    char rec_dir[RDPS_ARC_PATH_MAX];
    uint32_t *segs;
    size_t nsegs;
    rdps__arc_recording_dir(rec_dir, sizeof(rec_dir), dir, id);
    rc = rdps__arc_list_segments(rec_dir, &segs, &nsegs);
    if (rc != 0)
        return rdps__set_err(rc, "%s: %s", rec_dir, rdps_strerror(rc));
    struct rdps_arc_decoder dec;
    rc = rdps__arc_decoder_init(&dec);
    uint64_t next_record = UINT64_MAX;
    for (size_t i = 0; rc == 0 && i < nsegs; i++) {
        if (segs[i] < first_segment)
            continue;
        if (i > 0 && segs[i] != segs[i - 1] + 1 && segs[i - 1] >= first_segment)
            problem(&v, "segments %" PRIu32 "..%" PRIu32 " are missing", segs[i - 1] + 1,
                    segs[i] - 1);
        rc = verify_segment(&v, dir, id, segs[i], &next_record, &dec);
    }
    if (rc == 0 && stopped && next_record != UINT64_MAX && stop_records != next_record)
        problem(&v, "the catalog says %" PRIu64 " records, the segments hold up to %" PRIu64,
                stop_records, next_record);
    rdps__arc_decoder_fini(&dec);
    free(segs);
    return rc != 0 ? rc : v.found;
}

/* Public entry points: the thread's error message belongs to the last call (rdps_error.h). */

int rdps_archive_list(const char *dir, rdps_archive_info_cb cb, void *user)
{
    rdps__api_enter();
    return rdps__api_return(rdps_archive_list_impl(dir, cb, user), "rdps_archive_list");
}

int rdps_archive_verify(const char *dir, uint64_t id,
                        void (*problem_cb)(void *user, const char *line), void *user,
                        rdps_archive_verify_result *result)
{
    rdps__api_enter();
    return rdps__api_return(rdps_archive_verify_impl(dir, id, problem_cb, user, result),
                            "rdps_archive_verify");
}
