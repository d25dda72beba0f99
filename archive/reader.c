/* SPDX-License-Identifier: BSD-2-Clause */
/* reader.c - rdps_archive_reader: iterates a recording's records from disk, follows a live one,
 * seeks by time, record number or session sequence through the segment indexes. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdps/rdps_archive.h>

#include "arc_catalog.h"
#include "arc_index.h"
#include "arc_io.h"
#include "arc_names.h"
#include "rdps_archive_chunk.h"
#include "rdps_error.h"

_Static_assert(RDPS_ARCHIVE_MESSAGE == (int)RDPS_ARC_REC_MESSAGE &&
                   RDPS_ARCHIVE_OVERRUN == (int)RDPS_ARC_REC_OVERRUN &&
                   RDPS_ARCHIVE_SESSION_END == (int)RDPS_ARC_REC_SESSION_END,
               "public record types are the format's");

struct seg_head {
    uint32_t seg;
    bool loaded, empty; /* empty: no whole chunk (yet) */
    uint64_t first_record, first_ts;
};

struct rdps_archive_reader {
    char *dir;
    uint64_t id;
    char rec_dir[RDPS_ARC_PATH_MAX];
    struct seg_head *segs;
    size_t nsegs;
    size_t cur; /* segs[cur] is open in fd (or about to be) */
    int fd;
    uint64_t off; /* next chunk's offset in fd */
    uint8_t *buf;
    size_t cap;
    struct rdps_arc_decoder dec;
    struct rdps_arc_chunk_view view;
    bool in_chunk;
    struct arc_names names;
    /* After a seek: records before the target are skipped. */
    uint64_t skip_ts, skip_number;
    bool seq_filter;
    uint64_t f_topic;
    uint32_t f_session, f_seq;
};

static int refresh_segments(rdps_archive_reader_t *r)
{
    uint32_t *list;
    size_t n;
    int rc = rdps__arc_list_segments(r->rec_dir, &list, &n);
    if (rc != 0)
        return rc;
    struct seg_head *segs = calloc(n > 0 ? n : 1, sizeof(*segs));
    if (segs == NULL) {
        free(list);
        return RDPS_ENOMEM;
    }
    /* Keep what is known of segments seen before (the list only grows at its end, and retention
     * removes from its start). */
    for (size_t i = 0; i < n; i++) {
        segs[i].seg = list[i];
        for (size_t k = 0; k < r->nsegs; k++)
            if (r->segs[k].seg == list[i] && r->segs[k].loaded && !r->segs[k].empty)
                segs[i] = r->segs[k];
    }
    uint32_t cur_seg = r->cur < r->nsegs ? r->segs[r->cur].seg : 0;
    bool had = r->cur < r->nsegs;
    free(r->segs);
    free(list);
    r->segs = segs;
    r->nsegs = n;
    if (had) {
        size_t i = 0;
        while (i < n && segs[i].seg < cur_seg)
            i++;
        r->cur = i;
    }
    return 0;
}

/* The first chunk header of a segment (its first record and time). */
static void load_head(rdps_archive_reader_t *r, struct seg_head *s)
{
    if (s->loaded && !s->empty)
        return;
    char path[RDPS_ARC_PATH_MAX];
    rdps__arc_segment_path(path, sizeof(path), r->dir, r->id, s->seg, RDPS_ARC_SEGMENT_EXT);
    s->loaded = true;
    s->empty = true;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    uint8_t head[RDPS_ARC_CHUNK_HEADER_LEN];
    struct rdps_arc_chunk_header h;
    ssize_t n = rdps__arc_pread_full(fd, head, sizeof(head), RDPS_ARC_FILE_HEADER_LEN);
    close(fd);
    if (n > 0 && rdps__arc_chunk_header_decode(head, (size_t)n, &h) == RDPS_ARC_OK) {
        s->empty = false;
        s->first_record = h.first_record;
        s->first_ts = h.first_ts;
    }
}

static void close_segment(rdps_archive_reader_t *r)
{
    if (r->fd >= 0)
        close(r->fd);
    r->fd = -1;
    r->in_chunk = false;
}

/* Opens segs[cur] at offset off: 0, or -errno. */
static int open_segment(rdps_archive_reader_t *r, uint64_t off)
{
    close_segment(r);
    char path[RDPS_ARC_PATH_MAX];
    rdps__arc_segment_path(path, sizeof(path), r->dir, r->id, r->segs[r->cur].seg,
                           RDPS_ARC_SEGMENT_EXT);
    r->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (r->fd < 0)
        return -errno;
    r->off = off;
    return 0;
}

static int grow(rdps_archive_reader_t *r, size_t need)
{
    if (r->cap >= need)
        return 0;
    uint8_t *bigger = realloc(r->buf, need);
    if (bigger == NULL)
        return RDPS_ENOMEM;
    r->buf = bigger;
    r->cap = need;
    return 0;
}

/* Reads and validates the chunk at off in fd into the view. RDPS_ARC_OK, or why not (SHORT: the
 * file ends inside it). *err: a read error. */
static enum rdps_arc_reject read_chunk_at(rdps_archive_reader_t *r, uint64_t off, size_t *len,
                                          int *err)
{
    *err = 0;
    if (grow(r, RDPS_ARC_CHUNK_HEADER_LEN) != 0) {
        *err = RDPS_ENOMEM;
        return RDPS_ARC_SHORT;
    }
    ssize_t n = rdps__arc_pread_full(r->fd, r->buf, RDPS_ARC_CHUNK_HEADER_LEN, (off_t)off);
    if (n < 0) {
        *err = (int)n;
        return RDPS_ARC_SHORT;
    }
    struct rdps_arc_chunk_header h;
    enum rdps_arc_reject why = rdps__arc_chunk_header_decode(r->buf, (size_t)n, &h);
    if (why != RDPS_ARC_OK)
        return why;
    size_t total = RDPS_ARC_CHUNK_HEADER_LEN + (size_t)h.stored_len;
    if (grow(r, total) != 0) {
        *err = RDPS_ENOMEM;
        return RDPS_ARC_SHORT;
    }
    n = rdps__arc_pread_full(r->fd, r->buf, total, (off_t)off);
    if (n < 0) {
        *err = (int)n;
        return RDPS_ARC_SHORT;
    }
    bool oom;
    why = rdps__arc_chunk_open(&r->dec, r->buf, (size_t)n, &r->view, len, &oom);
    if (oom)
        *err = RDPS_ENOMEM;
    return why;
}

/* After a bad chunk at off: the offset of the next chunk that validates, or 0 when none. */
static uint64_t resync(rdps_archive_reader_t *r, uint64_t off)
{
    uint8_t block[65536];
    uint64_t pos = off + 1;
    for (;;) {
        ssize_t n = rdps__arc_pread_full(r->fd, block, sizeof(block), (off_t)pos);
        if (n < 4)
            return 0;
        for (ssize_t i = 0; i + 4 <= n; i++) {
            if (block[i] != 'R' || block[i + 1] != 'D' || block[i + 2] != 'C' ||
                block[i + 3] != 'K')
                continue;
            size_t len;
            int err;
            if (read_chunk_at(r, pos + (uint64_t)i, &len, &err) == RDPS_ARC_OK)
                return pos + (uint64_t)i;
        }
        pos += (uint64_t)n - 3;
    }
}

/* Loads the next chunk: 1, 0 (nothing more on disk for now), or a negative code. */
static int next_chunk(rdps_archive_reader_t *r)
{
    for (;;) {
        if (r->fd < 0) {
            if (r->cur >= r->nsegs) {
                int rc = refresh_segments(r);
                if (rc != 0)
                    return rc;
                if (r->cur >= r->nsegs)
                    return 0;
            }
            int rc = open_segment(r, RDPS_ARC_FILE_HEADER_LEN);
            if (rc != 0)
                return rc;
        }
        size_t len;
        int err;
        enum rdps_arc_reject why = read_chunk_at(r, r->off, &len, &err);
        if (err != 0)
            return err;
        if (why == RDPS_ARC_OK) {
            r->off += len;
            r->in_chunk = true;
            return 1;
        }
        bool last = r->cur + 1 >= r->nsegs;
        if (last) {
            int rc = refresh_segments(r);
            if (rc != 0)
                return rc;
            last = r->cur + 1 >= r->nsegs;
        }
        uint8_t probe;
        bool at_end = rdps__arc_pread_full(r->fd, &probe, 1, (off_t)r->off) == 0;
        if (at_end && !last) {
            close_segment(r);
            r->cur++;
            continue;
        }
        if (why == RDPS_ARC_SHORT) {
            /* The file ends inside the chunk: in the last segment it is being written (a reader
             * following a live recording must not skip it for a later one) or torn (recovery
             * cuts it): the end for now. A closed segment's torn end: on to the next. */
            if (last)
                return 0;
            rdps__set_err(RDPS_EBADFRAME,
                          "recording %" PRIu64 " segment %" PRIu32 ": torn chunk at offset %" PRIu64
                          " (the segment ends inside it)",
                          r->id, r->segs[r->cur].seg, r->off);
            close_segment(r);
            r->cur++;
            return RDPS_EBADFRAME;
        }
        uint64_t next = resync(r, r->off);
        if (next == 0 && last)
            return 0; /* the tail being written (or torn): wait for more */
        rdps__set_err(RDPS_EBADFRAME,
                      "recording %" PRIu64 " segment %" PRIu32 ": bad chunk at offset %" PRIu64
                      " (%s); %s",
                      r->id, r->segs[r->cur].seg, r->off, rdps__arc_reject_text(why),
                      next != 0 ? "skipped to the next valid chunk" : "rest of segment skipped");
        if (next != 0) {
            r->off = next;
        } else {
            close_segment(r);
            r->cur++;
        }
        return RDPS_EBADFRAME;
    }
}

static void fill(rdps_archive_reader_t *r, const struct rdps_arc_record *in, uint64_t number,
                 rdps_archive_record *out)
{
    memset(out, 0, sizeof(*out));
    out->type = (rdps_archive_record_type)in->type;
    out->flags = in->flags;
    out->number = number;
    out->topic_id = in->topic_id;
    out->topic = rdps__arc_names_get(&r->names, in->topic_id);
    out->session_id = in->session_id;
    out->seq = in->seq;
    out->ordinal = in->ordinal;
    out->count = in->count;
    out->publisher_ts_ns = in->publisher_ts_ns;
    out->recorder_ts_ns = in->recorder_ts_ns;
    const uint8_t *b = in->body;
    switch (in->type) {
    case RDPS_ARC_REC_MESSAGE:
        out->data = b;
        out->len = in->body_len;
        break;
    case RDPS_ARC_REC_LOSS:
    case RDPS_ARC_REC_GAP:
        out->reason =
            (int)(b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24);
        out->messages = b[4] | (uint32_t)b[5] << 8 | (uint32_t)b[6] << 16 | (uint32_t)b[7] << 24;
        break;
    case RDPS_ARC_REC_SESSION_START:
    case RDPS_ARC_REC_SESSION_END: {
        struct rdps_arc_source src;
        uint32_t reason;
        rdps__arc_session_body_decode(b, in->body_len, &src, &reason);
        memcpy(out->source.gid, src.gid, sizeof(out->source.gid));
        out->source.qpn = src.qpn;
        out->source.lid = src.lid;
        out->source.has_gid = src.has_gid;
        out->reason = (int)reason;
        break;
    }
    default:
        break;
    }
}

/* Whether a record passes the seek's filters (clearing them once the target is reached). */
static bool wanted(rdps_archive_reader_t *r, const struct rdps_arc_record *rec, uint64_t number)
{
    if (number < r->skip_number || rec->recorder_ts_ns < r->skip_ts)
        return false;
    r->skip_number = 0;
    r->skip_ts = 0;
    if (!r->seq_filter)
        return true;
    if (rec->topic_id != r->f_topic || rec->session_id != r->f_session ||
        rec->type == RDPS_ARC_REC_TOPIC || (int32_t)(rec->seq - r->f_seq) < 0)
        return false;
    r->seq_filter = false;
    return true;
}

static int rdps_archive_reader_next_impl(rdps_archive_reader_t *r, rdps_archive_record *out)
{
    if (r == NULL || out == NULL)
        return RDPS_EINVAL;
    for (;;) {
        if (r->in_chunk) {
            struct rdps_arc_record rec;
            uint64_t number;
            while (rdps__arc_chunk_next(&r->view, &rec, &number)) {
                if (rec.type == RDPS_ARC_REC_TOPIC) {
                    rdps__arc_names_put(&r->names, rec.topic_id, rec.body, rec.body_len);
                    continue;
                }
                if (!wanted(r, &rec, number))
                    continue;
                fill(r, &rec, number, out);
                return 1;
            }
            r->in_chunk = false;
        }
        int rc = next_chunk(r);
        if (rc <= 0)
            return rc;
    }
}

/* Learns the topic names of segs[i] defined before offset `before`: the flagged chunks of its
 * index, or every chunk before it when the index does not say. */
static void prime_names(rdps_archive_reader_t *r, const struct arc_index *ix, uint64_t before)
{
    bool indexed =
        ix->nchunks > 0 && ix->chunks[ix->nchunks - 1].a + ix->chunks[ix->nchunks - 1].b >= before;
    uint64_t off = RDPS_ARC_FILE_HEADER_LEN;
    size_t k = 0;
    while (off < before) {
        if (indexed) {
            while (k < ix->nchunks && !(ix->chunks[k].flags & RDPS_ARC_IXF_TOPICS))
                k++;
            if (k >= ix->nchunks || ix->chunks[k].a >= before)
                break;
            off = ix->chunks[k++].a;
        }
        size_t len;
        int err;
        if (read_chunk_at(r, off, &len, &err) != RDPS_ARC_OK)
            break;
        struct rdps_arc_record rec;
        uint64_t number;
        while (rdps__arc_chunk_next(&r->view, &rec, &number))
            if (rec.type == RDPS_ARC_REC_TOPIC)
                rdps__arc_names_put(&r->names, rec.topic_id, rec.body, rec.body_len);
        off += len;
    }
}

/* Positions at segs[i], chunk offset `off` (learning the names defined before it). */
static int position(rdps_archive_reader_t *r, size_t i, const struct arc_index *ix, uint64_t off)
{
    r->cur = i;
    int rc = open_segment(r, off);
    if (rc != 0)
        return rc;
    prime_names(r, ix, off);
    r->in_chunk = false;
    return 0;
}

/* The segment to start a seek in: the last whose first key is <= key (by time or number). */
static size_t find_segment(rdps_archive_reader_t *r, uint64_t key, bool by_time)
{
    size_t lo = 0, hi = r->nsegs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        load_head(r, &r->segs[mid]);
        uint64_t first = by_time ? r->segs[mid].first_ts : r->segs[mid].first_record;
        if (!r->segs[mid].empty && first <= key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 ? lo - 1 : 0;
}

static int seek_key(rdps_archive_reader_t *r, uint64_t key, bool by_time)
{
    int rc = refresh_segments(r);
    if (rc != 0)
        return rc;
    close_segment(r);
    r->seq_filter = false;
    r->skip_ts = by_time ? key : 0;
    r->skip_number = by_time ? 0 : key;
    if (r->nsegs == 0) {
        r->cur = 0;
        return 0;
    }
    size_t i = find_segment(r, key, by_time);
    struct arc_index ix;
    rc = rdps__arc_index_load(r->dir, r->id, r->segs[i].seg, &ix);
    if (rc != 0)
        return rc;
    /* The first chunk that can hold the key: its last time >= key, or its records reach it. */
    size_t lo = 0, hi = ix.nchunks;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct rdps_arc_index_entry *e = &ix.chunks[mid];
        bool before = by_time ? e->d < key : e->first_record + e->c <= key;
        if (before)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint64_t off = RDPS_ARC_FILE_HEADER_LEN;
    if (lo < ix.nchunks)
        off = ix.chunks[lo].a;
    else if (ix.nchunks > 0)
        off = ix.chunks[ix.nchunks - 1].a + ix.chunks[ix.nchunks - 1].b; /* past the index */
    rc = position(r, i, &ix, off);
    rdps__arc_index_free(&ix);
    return rc;
}

static int rdps_archive_reader_seek_time_impl(rdps_archive_reader_t *r, uint64_t ts_ns)
{
    if (r == NULL)
        return RDPS_EINVAL;
    return seek_key(r, ts_ns, true);
}

static int rdps_archive_reader_seek_record_impl(rdps_archive_reader_t *r, uint64_t number)
{
    if (r == NULL)
        return RDPS_EINVAL;
    return seek_key(r, number, false);
}

static int rdps_archive_reader_seek_seq_impl(rdps_archive_reader_t *r, uint64_t topic_id,
                                             uint32_t session_id, uint32_t seq)
{
    if (r == NULL)
        return RDPS_EINVAL;
    int rc = refresh_segments(r);
    if (rc != 0)
        return rc;
    close_segment(r);
    r->skip_ts = r->skip_number = 0;
    /* The last segment whose first record of the session is at or before seq; else the first
     * segment holding the session (the sequence was before the recording began). */
    size_t best = SIZE_MAX, first = SIZE_MAX;
    uint64_t best_off = 0, first_off = 0;
    for (size_t i = 0; i < r->nsegs; i++) {
        struct arc_index ix;
        rc = rdps__arc_index_load(r->dir, r->id, r->segs[i].seg, &ix);
        if (rc != 0)
            return rc;
        for (size_t k = 0; k < ix.nsessions; k++) {
            const struct rdps_arc_index_entry *e = &ix.sessions[k];
            if (e->a != topic_id || e->b != session_id)
                continue;
            if (first == SIZE_MAX) {
                first = i;
                first_off = e->d;
            }
            if ((int32_t)(seq - e->c) >= 0) {
                best = i;
                best_off = e->d;
            }
            break;
        }
        rdps__arc_index_free(&ix);
    }
    if (best == SIZE_MAX) {
        best = first;
        best_off = first_off;
    }
    if (best == SIZE_MAX)
        return rdps__set_err(RDPS_ENOENT,
                             "recording %" PRIu64 ": no session %08" PRIx32 " of topic %016" PRIx64
                             " in its indexes",
                             r->id, session_id, topic_id);
    struct arc_index ix;
    rc = rdps__arc_index_load(r->dir, r->id, r->segs[best].seg, &ix);
    if (rc != 0)
        return rc;
    rc = position(r, best, &ix, best_off);
    rdps__arc_index_free(&ix);
    r->seq_filter = true;
    r->f_topic = topic_id;
    r->f_session = session_id;
    r->f_seq = seq;
    return rc;
}

uint64_t rdps_archive_reader_id(const rdps_archive_reader_t *r)
{
    return r != NULL ? r->id : 0;
}

static int rdps_archive_reader_open_impl(const char *dir, uint64_t id, rdps_archive_reader_t **out)
{
    if (dir == NULL || out == NULL)
        return RDPS_EINVAL;
    *out = NULL;
    int checked = rdps__arc_check_private(dir);
    if (checked == RDPS_EACCES)
        return checked;
    if (id == 0) {
        struct rdps_arc_catalog cat;
        int rc = rdps__arc_catalog_open(&cat, dir, false);
        if (rc != 0)
            return rdps__set_err(rc, "%s: no recording catalog (%s)", dir, rdps_strerror(rc));
        id = cat.count > 0 ? cat.recs[cat.count - 1].id : 0;
        rdps__arc_catalog_close(&cat);
        if (id == 0)
            return rdps__set_err(RDPS_ENOENT, "%s: the catalog lists no recording", dir);
    }
    rdps_archive_reader_t *r = calloc(1, sizeof(*r));
    if (r == NULL)
        return RDPS_ENOMEM;
    r->fd = -1;
    r->id = id;
    r->dir = strdup(dir);
    rdps__arc_names_init(&r->names);
    int rc = r->dir != NULL ? rdps__arc_decoder_init(&r->dec) : RDPS_ENOMEM;
    if (rc == 0 && rdps__arc_recording_dir(r->rec_dir, sizeof(r->rec_dir), dir, id) != 0)
        rc = RDPS_EINVAL;
    if (rc == 0) {
        rc = refresh_segments(r);
        if (rc == -ENOENT)
            rdps__set_err(RDPS_ENOENT, "%s: no recording %" PRIu64, dir, id);
    }
    if (rc != 0) {
        rdps_archive_reader_close(r);
        return rc;
    }
    *out = r;
    return 0;
}

void rdps_archive_reader_close(rdps_archive_reader_t *r)
{
    if (r == NULL)
        return;
    close_segment(r);
    rdps__arc_decoder_fini(&r->dec);
    rdps__arc_names_fini(&r->names);
    free(r->segs);
    free(r->buf);
    free(r->dir);
    free(r);
}

/* Public entry points: the thread's error message belongs to the last call (rdps_error.h). */

int rdps_archive_reader_next(rdps_archive_reader_t *reader, rdps_archive_record *rec)
{
    rdps__api_enter();
    return rdps__api_return(rdps_archive_reader_next_impl(reader, rec), "rdps_archive_reader_next");
}

int rdps_archive_reader_seek_time(rdps_archive_reader_t *reader, uint64_t ts_ns)
{
    rdps__api_enter();
    return rdps__api_return(rdps_archive_reader_seek_time_impl(reader, ts_ns),
                            "rdps_archive_reader_seek_time");
}

int rdps_archive_reader_seek_record(rdps_archive_reader_t *reader, uint64_t number)
{
    rdps__api_enter();
    return rdps__api_return(rdps_archive_reader_seek_record_impl(reader, number),
                            "rdps_archive_reader_seek_record");
}

int rdps_archive_reader_seek_seq(rdps_archive_reader_t *reader, uint64_t topic_id,
                                 uint32_t session_id, uint32_t seq)
{
    rdps__api_enter();
    return rdps__api_return(rdps_archive_reader_seek_seq_impl(reader, topic_id, session_id, seq),
                            "rdps_archive_reader_seek_seq");
}

int rdps_archive_reader_open(const char *dir, uint64_t id, rdps_archive_reader_t **out)
{
    rdps__api_enter();
    return rdps__api_return(rdps_archive_reader_open_impl(dir, id, out),
                            "rdps_archive_reader_open");
}
