/* SPDX-License-Identifier: BSD-2-Clause */
/* arc_writer.c - appends records to a recording: chunks, segments and their indexes, the flush and
 * fsync rules, rotation, and a failed write cut back to the last whole chunk. */
#include "arc_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arc_catalog.h"
#include "arc_io.h"
#include "arc_writer_internal.h"
#include "rdps_archive_chunk.h"
#include "rdps_error.h"

static uint64_t hash64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

/* Open addressing, linear probing; keys are never 0 (topic ids are not; sessions are keyed with
 * their topic and never 0 either). Full: emptied (the table only saves repeated entries). */
static struct arc_slot *slot_find(struct arc_table *t, uint64_t key, uint64_t key2, bool *found)
{
    size_t mask = t->slots - 1;
    for (size_t i = hash64(key ^ (key2 * 0x9e3779b97f4a7c15ull)) & mask;; i = (i + 1) & mask) {
        struct arc_slot *s = &t->table[i];
        if (s->key == 0 || (s->key == key && s->key2 == key2)) {
            *found = s->key != 0;
            return s;
        }
    }
}

static void table_clear(struct arc_table *t)
{
    for (size_t i = 0; i < t->slots; i++)
        free(t->table[i].name);
    memset(t->table, 0, t->slots * sizeof(*t->table));
    t->used = 0;
}

/* The slot of (key, key2), added when missing (NULL: no memory). */
static struct arc_slot *table_get(struct arc_table *t, uint64_t key, uint64_t key2)
{
    bool found;
    if (t->used + 1 > t->slots / 2)
        table_clear(t);
    struct arc_slot *s = slot_find(t, key, key2, &found);
    if (!found) {
        s->key = key;
        s->key2 = key2;
        s->generation = 0;
        t->used++;
    }
    return s;
}

static int table_init(struct arc_table *t, size_t entries)
{
    size_t slots = 64;
    while (slots < entries * 2)
        slots *= 2;
    t->table = calloc(slots, sizeof(*t->table));
    t->slots = slots;
    t->used = 0;
    return t->table != NULL ? 0 : RDPS_ENOMEM;
}

static void table_fini(struct arc_table *t)
{
    if (t->table != NULL)
        table_clear(t);
    free(t->table);
    t->table = NULL;
}

/* Stops the writer on a failed write: the error is kept and returned from then on. */
static int fail(struct rdps_arc_writer *w, int rc, const char *what)
{
    if (w->error == 0) {
        w->error = rc == -EDQUOT ? RDPS_ENOSPC : rc;
        rdps__set_err(w->error, "recording %llu segment %u: %s: %s", (unsigned long long)w->id,
                      w->segment, what, rdps_strerror(rc));
    }
    return w->error;
}

static int open_segment(struct rdps_arc_writer *w, uint64_t first_ts)
{
    char path[RDPS_ARC_PATH_MAX];
    uint8_t head[RDPS_ARC_FILE_HEADER_LEN];
    struct rdps_arc_file_header h = {
        .recording_id = w->id,
        .segment = w->segment,
        .created_ns = first_ts,
        .first_record = w->next_record,
    };
    rdps__arc_segment_path(path, sizeof(path), w->dir, w->id, w->segment, RDPS_ARC_SEGMENT_EXT);
    w->seg_fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (w->seg_fd < 0)
        return fail(w, -errno, "create segment");
    rdps__arc_file_header_encode(head, RDPS_ARC_SEGMENT_MAGIC, &h);
    int rc = rdps__arc_write_all(w->seg_fd, head, sizeof(head));
    if (rc != 0) {
        /* A header that does not fit is no segment: remove it, not leave it torn. */
        close(w->seg_fd);
        w->seg_fd = -1;
        unlink(path);
        return fail(w, rc, "write segment header");
    }
    rdps__arc_segment_path(path, sizeof(path), w->dir, w->id, w->segment, RDPS_ARC_INDEX_EXT);
    w->idx_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (w->idx_fd < 0)
        return fail(w, -errno, "create index");
    rdps__arc_file_header_encode(head, RDPS_ARC_INDEX_MAGIC, &h);
    rc = rdps__arc_write_all(w->idx_fd, head, sizeof(head));
    if (rc != 0)
        return fail(w, rc, "write index header");
    (void)rdps__arc_fsync_dir(w->rec_dir);
    w->seg_off = RDPS_ARC_FILE_HEADER_LEN;
    w->idx_off = RDPS_ARC_FILE_HEADER_LEN;
    w->seg_first_ts = first_ts;
    w->seg_generation++;
    w->stats.segments++;
    return 0;
}

static int sync_now(struct rdps_arc_writer *w)
{
    if (!w->unsynced)
        return 0;
    if (fdatasync(w->seg_fd) != 0)
        return fail(w, -errno, "fdatasync segment");
    if (fdatasync(w->idx_fd) != 0)
        return fail(w, -errno, "fdatasync index");
    w->unsynced = false;
    w->stats.fsyncs++;
    return 0;
}

static void close_segment(struct rdps_arc_writer *w)
{
    if (w->seg_fd >= 0) {
        if (w->error == 0)
            (void)sync_now(w);
        close(w->seg_fd);
    }
    if (w->idx_fd >= 0)
        close(w->idx_fd);
    w->seg_fd = w->idx_fd = -1;
}

/* Writes the sealed chunk and then its index entries; on failure both files are cut back. */
static int write_chunk(struct rdps_arc_writer *w, long len, uint64_t mono_ns)
{
    struct rdps_arc_chunk_header h;
    rdps__arc_chunk_header_decode(w->out, (size_t)len, &h);
    int rc = rdps__arc_write_all(w->seg_fd, w->out, (size_t)len);
    if (rc != 0) {
        if (ftruncate(w->seg_fd, (off_t)w->seg_off) == 0)
            (void)lseek(w->seg_fd, (off_t)w->seg_off, SEEK_SET);
        return fail(w, rc, "write chunk");
    }
    struct rdps_arc_index_entry chunk = {
        .type = RDPS_ARC_IX_CHUNK,
        .flags = w->chunk_has_topics ? RDPS_ARC_IXF_TOPICS : 0,
        .a = w->seg_off,
        .b = (uint32_t)len,
        .c = h.records,
        .first_record = h.first_record,
        .first_ts = h.first_ts,
        .d = h.last_ts,
    };
    size_t n = 0;
    rdps__arc_index_encode(w->ix_buf, &chunk);
    n++;
    for (size_t i = 0; i < w->npending; i++) {
        w->pending[i].d = w->seg_off;
        rdps__arc_index_encode(w->ix_buf + n * RDPS_ARC_INDEX_ENTRY_LEN, &w->pending[i]);
        n++;
    }
    w->npending = 0;
    w->chunk_has_topics = false;
    rc = rdps__arc_write_all(w->idx_fd, w->ix_buf, n * RDPS_ARC_INDEX_ENTRY_LEN);
    if (rc != 0) {
        /* The chunk is whole and readers find it without an index: keep it, cut the entries. */
        if (ftruncate(w->idx_fd, (off_t)w->idx_off) == 0)
            (void)lseek(w->idx_fd, (off_t)w->idx_off, SEEK_SET);
        w->seg_off += (uint64_t)len;
        return fail(w, rc, "write index");
    }
    w->seg_off += (uint64_t)len;
    w->idx_off += n * RDPS_ARC_INDEX_ENTRY_LEN;
    w->stats.chunks++;
    w->stats.written_records += h.records;
    w->stats.written_messages += w->chunk_messages;
    w->chunk_messages = 0;
    w->stats.stored_bytes += (uint64_t)len;
    w->stats.raw_bytes += w->sealed_raw;
    if (!w->unsynced) {
        w->unsynced = true;
        w->sync_deadline = w->o.fsync_ns == UINT64_MAX ? UINT64_MAX : mono_ns + w->o.fsync_ns;
    }
    if (w->o.fsync_ns == 0)
        return sync_now(w);
    return 0;
}

static int seal(struct rdps_arc_writer *w, uint64_t mono_ns)
{
    if (w->b.records == 0)
        return w->error;
    if (w->error != 0)
        return w->error;
    size_t need = rdps__arc_chunk_bound(w->b.raw_len);
    if (need > w->out_cap) {
        uint8_t *bigger = realloc(w->out, need);
        if (bigger == NULL)
            return fail(w, RDPS_ENOMEM, "chunk buffer");
        w->out = bigger;
        w->out_cap = need;
    }
    w->sealed_raw = w->b.raw_len;
    long len = rdps__arc_chunk_seal(&w->b, &w->comp, w->out, w->out_cap);
    w->chunk_deadline = UINT64_MAX;
    if (len < 0)
        return fail(w, (int)len, "compress chunk");
    int rc = write_chunk(w, len, mono_ns);
    if (rc == 0 && w->seg_off >= w->o.segment_bytes)
        w->rotate_due = true;
    return rc;
}

static int rotate(struct rdps_arc_writer *w, uint64_t first_ts)
{
    close_segment(w);
    w->segment++;
    w->rotate_due = false;
    int rc = open_segment(w, first_ts);
    if (rc == 0)
        rdps__arc_retention(w);
    return rc;
}

/* Adds one record to the chunk, sealing the chunk first when it is full. */
static int add_record(struct rdps_arc_writer *w, const struct rdps_arc_record *r, uint64_t mono_ns)
{
    if (!rdps__arc_builder_fits(&w->b, r)) {
        int rc = seal(w, mono_ns);
        if (rc != 0)
            return rc;
    }
    int rc = rdps__arc_builder_add(&w->b, r, w->next_record);
    if (rc != 0)
        return fail(w, rc, "add record");
    if (w->b.records == 1)
        w->chunk_deadline = mono_ns + w->o.flush_ns;
    w->next_record++;
    w->stats.records++;
    return 0;
}

/* A TOPIC record before the first use of a topic in this segment. */
static int define_topic(struct rdps_arc_writer *w, const struct rdps_arc_record *r,
                        const char *topic, uint64_t mono_ns)
{
    struct arc_slot *s = table_get(&w->topics, r->topic_id, 1);
    if (s->generation == w->seg_generation)
        return 0;
    size_t len = strnlen(topic, RDPS_ARC_TOPIC_NAME_MAX + 1);
    if (len == 0 || len > RDPS_ARC_TOPIC_NAME_MAX)
        return 0; /* not a name rdps accepts: leave the id unnamed */
    struct rdps_arc_record def = {
        .type = RDPS_ARC_REC_TOPIC,
        .topic_id = r->topic_id,
        .recorder_ts_ns = r->recorder_ts_ns,
        .body = (const uint8_t *)topic,
        .body_len = (uint32_t)len,
    };
    int rc = add_record(w, &def, mono_ns);
    if (rc == 0) {
        s->generation = w->seg_generation;
        w->chunk_has_topics = true;
    }
    return rc;
}

/* The first record of a session in this segment gets a SESSION index entry. */
static int note_session(struct rdps_arc_writer *w, const struct rdps_arc_record *r)
{
    struct arc_slot *s = table_get(&w->sessions, r->topic_id, r->session_id);
    if (s->generation == w->seg_generation)
        return 0;
    if (w->npending == w->pending_cap) {
        size_t ncap = w->pending_cap ? w->pending_cap * 2 : 64;
        struct rdps_arc_index_entry *p = realloc(w->pending, ncap * sizeof(*p));
        uint8_t *ix = realloc(w->ix_buf, (ncap + 1) * RDPS_ARC_INDEX_ENTRY_LEN);
        if (p != NULL)
            w->pending = p;
        if (ix != NULL)
            w->ix_buf = ix;
        if (p == NULL || ix == NULL)
            return fail(w, RDPS_ENOMEM, "index entries");
        w->pending_cap = ncap;
    }
    s->generation = w->seg_generation;
    w->pending[w->npending++] = (struct rdps_arc_index_entry){
        .type = RDPS_ARC_IX_SESSION,
        .a = r->topic_id,
        .b = r->session_id,
        .c = r->seq,
        .first_record = w->next_record,
        .first_ts = r->recorder_ts_ns,
    };
    return 0;
}

int rdps__arc_writer_append(struct rdps_arc_writer *w, struct rdps_arc_record *r, const char *topic,
                            uint64_t mono_ns)
{
    if (w->error != 0)
        return w->error;
    if (r->recorder_ts_ns < w->last_ts)
        r->recorder_ts_ns = w->last_ts; /* never decreasing: the index searches by it */
    w->last_ts = r->recorder_ts_ns;
    bool segment_used = w->seg_off > RDPS_ARC_FILE_HEADER_LEN || w->b.records > 0;
    if (segment_used && w->o.segment_ns != 0 &&
        r->recorder_ts_ns - w->seg_first_ts >= w->o.segment_ns)
        w->rotate_due = true;
    if (w->rotate_due) {
        int rc = seal(w, mono_ns);
        if (rc == 0)
            rc = rotate(w, r->recorder_ts_ns);
        if (rc != 0)
            return rc;
    } else if (!segment_used) {
        w->seg_first_ts = r->recorder_ts_ns;
    }
    int rc = 0;
    if (r->topic_id != w->known_topic || r->session_id != w->known_session ||
        w->known_generation != w->seg_generation) {
        if (topic != NULL && r->topic_id != 0)
            rc = define_topic(w, r, topic, mono_ns);
        if (rc == 0 && r->session_id != 0 && r->topic_id != 0)
            rc = note_session(w, r);
        if (rc == 0 && topic != NULL && r->topic_id != 0 && r->session_id != 0) {
            w->known_topic = r->topic_id;
            w->known_session = r->session_id;
            w->known_generation = w->seg_generation;
        }
    }
    if (rc == 0)
        rc = add_record(w, r, mono_ns);
    if (rc != 0)
        return rc;
    switch (r->type) {
    case RDPS_ARC_REC_MESSAGE:
        w->stats.messages++;
        w->chunk_messages++;
        break;
    case RDPS_ARC_REC_LOSS:
        w->stats.loss_events++;
        break;
    case RDPS_ARC_REC_GAP:
        w->stats.gap_events++;
        break;
    case RDPS_ARC_REC_OVERRUN:
        w->stats.overrun_messages += r->count;
        break;
    default:
        break;
    }
    if (w->b.raw_len >= w->o.chunk_bytes)
        return seal(w, mono_ns);
    return 0;
}

int rdps__arc_writer_tick(struct rdps_arc_writer *w, uint64_t mono_ns)
{
    int rc = w->error;
    if (rc == 0 && mono_ns >= w->chunk_deadline)
        rc = seal(w, mono_ns);
    if (rc == 0 && w->unsynced && mono_ns >= w->sync_deadline)
        rc = sync_now(w);
    return rc;
}

int rdps__arc_writer_flush(struct rdps_arc_writer *w, uint64_t mono_ns)
{
    return seal(w, mono_ns);
}

uint64_t rdps__arc_writer_deadline(const struct rdps_arc_writer *w)
{
    uint64_t d = w->chunk_deadline;
    if (w->unsynced && w->sync_deadline < d)
        d = w->sync_deadline;
    return d;
}

int rdps__arc_writer_error(const struct rdps_arc_writer *w)
{
    return w->error;
}

const struct rdps_arc_writer_stats *rdps__arc_writer_stats(const struct rdps_arc_writer *w)
{
    return &w->stats;
}

/* Takes the directory's lock file (flock: released by the kernel when the process dies, so a
 * crashed recorder never leaves the directory locked). */
static int take_lock(struct rdps_arc_writer *w)
{
    char path[RDPS_ARC_PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", w->dir, RDPS_ARC_LOCK);
    w->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (w->lock_fd < 0)
        return rdps__set_err(-errno, "%s: %s", path, strerror(errno));
    if (flock(w->lock_fd, LOCK_EX | LOCK_NB) != 0) {
        char pid[32] = "";
        ssize_t n = pread(w->lock_fd, pid, sizeof(pid) - 1, 0);
        pid[n > 0 ? n : 0] = '\0';
        pid[strcspn(pid, "\n")] = '\0';
        return rdps__set_err(RDPS_EBUSY, "%s: another recorder (pid %s) records into %s", path,
                             pid[0] ? pid : "?", w->dir);
    }
    char pid[32];
    int n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
    if (ftruncate(w->lock_fd, 0) == 0)
        (void)!pwrite(w->lock_fd, pid, (size_t)n, 0);
    return 0;
}

static void writer_free(struct rdps_arc_writer *w)
{
    close_segment(w);
    rdps__arc_catalog_close(&w->cat);
    if (w->lock_fd >= 0)
        close(w->lock_fd); /* releases the flock */
    rdps__arc_builder_fini(&w->b);
    rdps__arc_compressor_fini(&w->comp);
    table_fini(&w->topics);
    table_fini(&w->sessions);
    free(w->out);
    free(w->pending);
    free(w->ix_buf);
    free(w->dir);
    free(w);
}

int rdps__arc_writer_open(struct rdps_arc_writer **out, const struct rdps_arc_writer_opts *o,
                          uint64_t now_ns, char *report, size_t report_cap)
{
    *out = NULL;
    if (report_cap > 0)
        report[0] = '\0';
    struct rdps_arc_writer *w = calloc(1, sizeof(*w));
    if (w == NULL)
        return RDPS_ENOMEM;
    w->o = *o;
    w->seg_fd = w->idx_fd = w->lock_fd = -1;
    w->cat.fd = -1;
    w->chunk_deadline = UINT64_MAX;
    w->dir = strdup(o->dir);
    w->ix_buf = malloc(RDPS_ARC_INDEX_ENTRY_LEN);
    int rc = w->dir != NULL && w->ix_buf != NULL ? 0 : RDPS_ENOMEM;
    if (rc == 0 && mkdir(o->dir, 0700) != 0 && errno != EEXIST)
        rc = rdps__set_err(-errno, "%s: %s", o->dir, strerror(errno));
    if (rc == 0)
        rc = take_lock(w);
    if (rc == 0) {
        rc = rdps__arc_catalog_open(&w->cat, o->dir, true);
        if (rc != 0 && rc != RDPS_EACCES) /* EACCES says why itself */
            rdps__set_err(rc, "%s/%s: %s", o->dir, RDPS_ARC_CATALOG,
                          rc == RDPS_EPROTO ? "not a catalog" : rdps_strerror(rc));
    }
    if (rc == 0)
        rc = rdps__arc_recover_unfinished(w, now_ns, report, report_cap);
    if (rc == 0)
        rc = rdps__arc_builder_init(&w->b, o->chunk_bytes);
    if (rc == 0)
        rc = rdps__arc_compressor_init(&w->comp, o->codec, o->level);
    if (rc == 0)
        rc = table_init(&w->topics, o->max_topics);
    if (rc == 0)
        rc = table_init(&w->sessions, 4096);
    if (rc != 0) {
        writer_free(w);
        return rc;
    }
    w->id = rdps__arc_catalog_next_id(&w->cat);
    w->stats.recording_id = w->id;
    const char *spec = o->spec != NULL ? o->spec : "";
    size_t spec_len = strnlen(spec, RDPS_ARC_CE_SPEC_MAX);
    struct rdps_arc_catalog_entry start = {
        .type = RDPS_ARC_CE_START,
        .recording_id = w->id,
        .u.start = {.start_ns = now_ns,
                    .codec = (uint32_t)o->codec,
                    .segment_bytes = o->segment_bytes,
                    .segment_ns = o->segment_ns,
                    .retain_bytes = o->retain_bytes,
                    .spec_len = (uint16_t)spec_len,
                    .spec = spec},
    };
    rdps__arc_recording_dir(w->rec_dir, sizeof(w->rec_dir), o->dir, w->id);
    if (mkdir(w->rec_dir, 0700) != 0 && errno != EEXIST)
        rc = rdps__set_err(-errno, "%s: %s", w->rec_dir, strerror(errno));
    if (rc == 0) {
        rc = rdps__arc_catalog_append(&w->cat, &start, true);
        if (rc != 0)
            rdps__set_err(rc, "%s/%s: append: %s", o->dir, RDPS_ARC_CATALOG, rdps_strerror(rc));
    }
    if (rc == 0) {
        (void)rdps__arc_fsync_dir(o->dir);
        w->last_ts = now_ns;
        rc = open_segment(w, now_ns);
    }
    if (rc != 0) {
        writer_free(w);
        return rc;
    }
    *out = w;
    return 0;
}

void rdps__arc_writer_close(struct rdps_arc_writer *w, uint64_t now_ns)
{
    if (w == NULL)
        return;
    (void)seal(w, 0);
    close_segment(w);
    uint32_t reason = RDPS_ARC_STOP_CLEAN;
    if (w->error == RDPS_ENOSPC)
        reason = RDPS_ARC_STOP_DISK_FULL;
    else if (w->error != 0)
        reason = RDPS_ARC_STOP_IO_ERROR;
    struct rdps_arc_catalog_entry stop = {
        .type = RDPS_ARC_CE_STOP,
        .recording_id = w->id,
        .u.stop = {.end_ns = now_ns > w->last_ts ? now_ns : w->last_ts,
                   .records = w->next_record,
                   .messages = w->stats.messages,
                   .loss_events = w->stats.loss_events,
                   .overrun_messages = w->stats.overrun_messages,
                   .last_record = w->next_record > 0 ? w->next_record - 1 : 0,
                   .bytes = w->stats.stored_bytes,
                   .segments = (uint32_t)w->stats.segments,
                   .reason = reason},
    };
    /* Best effort on a full disk: without it the next recorder closes the recording as
     * RECOVERED, finding the same whole chunks. */
    (void)rdps__arc_catalog_append(&w->cat, &stop, true);
    writer_free(w);
}
