/* SPDX-License-Identifier: BSD-2-Clause */
/* stat_scan.c - rdps-stat: find, read and check every live-counters file of a directory. */
#include "stat_scan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rdps_clock.h"

#define READ_TRIES 200 /* a writer refreshes every 100 ms and takes microseconds */

/* "rdps-PID-N.stat" exactly; fills pid and index. */
static bool parse_name(const char *name, long *pid, unsigned *index)
{
    int end = 0;
    if (sscanf(name, "rdps-%ld-%u.stat%n", pid, index, &end) != 2 || end == 0 ||
        name[end] != '\0' || *pid <= 0)
        return false;
    char canonical[64];
    snprintf(canonical, sizeof(canonical), "rdps-%ld-%u.stat", *pid, *index);
    return strcmp(canonical, name) == 0; /* no signs, spaces or leading zeros */
}

/* Bytes this scan holds, in all and per file owner (a few owners each, the rest share one). */
#define SCAN_OWNERS 64
struct scan_budget {
    size_t total;
    size_t owners;
    struct {
        uint32_t uid;
        size_t bytes;
    } owner[SCAN_OWNERS + 1];
};

/* The share of `uid`: its own slot, or the last one, which every owner past SCAN_OWNERS shares. */
static size_t *owner_bytes(struct scan_budget *b, uint32_t uid)
{
    for (size_t i = 0; i < b->owners; i++)
        if (b->owner[i].uid == uid)
            return &b->owner[i].bytes;
    size_t i = b->owners < SCAN_OWNERS ? b->owners++ : SCAN_OWNERS;
    b->owner[i].uid = uid;
    return &b->owner[i].bytes;
}

static void check_liveness(struct stat_ctx *c)
{
    const struct rdps_stat_header *h = &c->view.hdr;
    uint64_t start;
    if (h->start_time == 0) {
        c->state = STAT_REFUSED;
        snprintf(c->why, sizeof(c->why),
                 "names no start time: pid %ld's process cannot be told from a later one", c->pid);
    } else if (rdps__stat_proc_start_time(c->pid, &start) != 0) {
        c->state = STAT_STALE;
        snprintf(c->why, sizeof(c->why), "process %ld is gone", c->pid);
    } else if (h->start_time != 0 && start != h->start_time) {
        c->state = STAT_STALE;
        snprintf(c->why, sizeof(c->why),
                 "pid %ld now belongs to another process (started at tick %" PRIu64
                 ", the file's at %" PRIu64 ")",
                 c->pid, start, h->start_time);
    } else {
        c->state = STAT_LIVE;
    }
}

/* Whether the owner of a file may speak for process pid: its effective or filesystem uid, or
 * root. A process that is gone cannot say: its file is read (to be shown stale). */
static bool owner_of(const struct stat_ctx *c, uid_t owner, char *why, size_t why_len)
{
    uint32_t euid, fsuid;
    if (owner == 0 || rdps__stat_proc_uids(c->pid, &euid, &fsuid) != 0 || owner == euid ||
        owner == fsuid)
        return true;
    snprintf(why, why_len, "owned by uid %u, but process %ld runs as uid %u: not its file",
             (unsigned)owner, c->pid, euid);
    return false;
}

/* Reads and checks one file; false when it vanished (nothing to show). */
static bool load(struct stat_ctx *c, struct scan_budget *budget)
{
    int fd = open(c->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0) {
        if (errno == ENOENT)
            return false;
        c->state = STAT_REFUSED;
        if (errno == EACCES && lstat(c->path, &st) == 0)
            snprintf(c->why, sizeof(c->why),
                     "not readable here (uid %u, mode %04o): run rdps-stat as its owner or root, "
                     "or give the process RDPS_STAT_MODE=0640 or 0644",
                     (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
        else
            snprintf(c->why, sizeof(c->why), "cannot open: %s", strerror(errno));
        return true;
    }
    size_t len = 0, file_len = 0;
    c->state = STAT_REFUSED;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(c->why, sizeof(c->why), "not a regular file");
    } else if (st.st_size > (off_t)RDPS_STAT_MAX_FILE) {
        snprintf(c->why, sizeof(c->why), "%lld bytes: larger than any writer makes (%u), not read",
                 (long long)st.st_size, RDPS_STAT_MAX_FILE);
    } else if (owner_of(c, st.st_uid, c->why, sizeof(c->why))) {
        size_t *mine = owner_bytes(budget, (uint32_t)st.st_uid);
        size_t left = STAT_SCAN_MAX_BYTES - budget->total;
        if (STAT_SCAN_OWNER_BYTES - *mine < left)
            left = STAT_SCAN_OWNER_BYTES - *mine;
        if (rdps__stat_read_fd(fd, READ_TRIES, left, &c->buf, &len, &file_len, c->why,
                               sizeof(c->why)) == 0) {
            *mine += len;
            budget->total += len;
            bool parsed = rdps__stat_parse_prefix(c->buf, len, file_len, &c->view, c->why,
                                                  sizeof(c->why)) == 0;
            if (parsed &&
                (c->view.hdr.pid != (uint64_t)c->pid || c->view.hdr.ctx_index != c->index))
                snprintf(c->why, sizeof(c->why),
                         "names pid %" PRIu64 " ctx %u, not its file name's", c->view.hdr.pid,
                         c->view.hdr.ctx_index);
            else if (parsed)
                check_liveness(c);
        }
    }
    close(fd);
    if (c->state == STAT_REFUSED) {
        free(c->buf);
        c->buf = NULL;
    }
    return true;
}

static int by_pid_then_index(const void *a, const void *b)
{
    const struct stat_ctx *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

int stat_scan_dir(const char *dir, long pid, struct stat_scan *out)
{
    memset(out, 0, sizeof(*out));
    DIR *d = opendir(dir);
    if (d == NULL)
        return -1;
    size_t cap = 0;
    struct scan_budget *budget = calloc(1, sizeof(*budget));
    if (budget == NULL) {
        closedir(d);
        return -1;
    }
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        long file_pid;
        unsigned index;
        if (!parse_name(de->d_name, &file_pid, &index) || (pid > 0 && file_pid != pid))
            continue;
        if (out->n == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            struct stat_ctx *grown = realloc(out->ctx, ncap * sizeof(*grown));
            if (grown == NULL)
                break; /* show what fitted */
            out->ctx = grown;
            cap = ncap;
        }
        struct stat_ctx *c = &out->ctx[out->n];
        memset(c, 0, sizeof(*c));
        c->pid = file_pid;
        c->index = index;
        if (snprintf(c->path, sizeof(c->path), "%s/%s", dir, de->d_name) >= (int)sizeof(c->path))
            continue;
        if (load(c, budget))
            out->n++;
    }
    free(budget);
    closedir(d);
    out->taken_mono_ns = rdps__clock_monotonic_ns();
    if (out->n > 1)
        qsort(out->ctx, out->n, sizeof(out->ctx[0]), by_pid_then_index);
    return 0;
}

void stat_scan_free(struct stat_scan *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->ctx[i].buf);
    free(s->ctx);
    memset(s, 0, sizeof(*s));
}

const struct stat_ctx *stat_scan_match(const struct stat_scan *prev, const struct stat_ctx *c)
{
    if (prev == NULL || c->state == STAT_REFUSED)
        return NULL;
    for (size_t i = 0; i < prev->n; i++) {
        const struct stat_ctx *p = &prev->ctx[i];
        if (p->state != STAT_REFUSED && p->pid == c->pid && p->index == c->index &&
            p->view.hdr.start_time == c->view.hdr.start_time &&
            p->view.hdr.create_real_ns == c->view.hdr.create_real_ns)
            return p;
    }
    return NULL;
}

int stat_entry_match(const struct stat_ctx *c, const struct rdps_stat_entry_view *e)
{
    for (uint32_t i = 0; i < c->view.hdr.entry_count; i++) {
        struct rdps_stat_entry_view x;
        rdps__stat_entry(&c->view, i, &x);
        if (x.kind == e->kind && x.session_id == e->session_id && strcmp(x.topic, e->topic) == 0)
            return (int)i;
    }
    return -1;
}

bool stat_ctx_has_topic(const struct stat_ctx *c, const char *topic)
{
    if (topic == NULL)
        return true;
    if (c->state == STAT_REFUSED)
        return false;
    for (uint32_t i = 0; i < c->view.hdr.entry_count; i++) {
        struct rdps_stat_entry_view e;
        rdps__stat_entry(&c->view, i, &e);
        if (strcmp(e.topic, topic) == 0)
            return true;
    }
    return false;
}

double stat_rate(uint64_t now, uint64_t before, const struct stat_ctx *c,
                 const struct stat_ctx *prev)
{
    uint64_t t1 = c->view.hdr.update_mono_ns, t0 = prev->view.hdr.update_mono_ns;
    if (t1 <= t0 || now < before)
        return 0.0;
    return (double)(now - before) / ((double)(t1 - t0) / 1e9);
}

int stat_remove(const struct stat_ctx *c)
{
    if (c->state != STAT_STALE) {
        errno = EBUSY;
        return -1;
    }
    return unlink(c->path);
}
