/* SPDX-License-Identifier: BSD-2-Clause */
/* stat_shm.c - a ctx's live counters in shared memory for rdps-stat (format: stat_format.h). */
#include "ctx_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rdps_clock.h"
#include "rdps_frame.h"
#include "rdps_log.h"
#include "rdps_random.h"
#include "rdps_reasm.h"
#include "stat_format.h"

/*
 * The ctx's side of the stats file: created at rdps_ctx_create (unless rdps_config.stats_off or
 * RDPS_STAT=0), refreshed from the poll loop when its deadline comes (every 100 ms while the
 * counters move, every second otherwise: no extra wake-ups for an idle ctx beyond discovery's),
 * removed at rdps_ctx_destroy. A refresh is plain stores into the mapping, no system call. A
 * file that cannot be created costs the ctx nothing but a warning: the counters are still there
 * through the API.
 *
 * The directory is shared with every local user (/dev/shm), so names are not trusted: the file
 * is built under a random temporary name (created exclusively, never followed), and when the
 * final name rdps-PID-N.stat is taken (another user planted a file there, which the sticky bit
 * then keeps us from replacing) the ctx takes rdps-PID-R.stat for a random R instead. Its mode
 * is 0600 unless RDPS_STAT_MODE asks for group or world read access.
 */

#define STAT_NAME_TRIES 8 /* random names tried before giving up */

#define STAT_COUNTERS (sizeof(rdps_counters) / sizeof(uint64_t))
#define STAT_ENTRIES  256u /* publishers + subscribers shown per ctx */
_Static_assert(STAT_COUNTERS <= RDPS_STAT_MAX_COUNTERS, "stat file: own_mask too small");
_Static_assert(RDPS_FRAME_REJECT_COUNT <= RDPS_STAT_MAX_REJECTS, "stat file: too many reasons");

struct rdps_stat_shm {
    struct rdps_stat_writer w;
    size_t size;
    uint64_t last[STAT_COUNTERS]; /* ctx counters at the last refresh: moving or idle */
    uint32_t last_entries;
    uint64_t pub_own[2], sub_own[2]; /* own_mask of publishers' and subscribers' entries */
    long owner_pid;                  /* a forked child never removes its parent's file */
    char path[512];
};

/* What rdps_pub_counters / rdps_sub_counters take from the endpoint itself (subscriber.c). */
static const char *const pub_own_names[] = {
    "msgs_sent",         "bytes_sent",    "frames_sent",     "frame_bytes_sent",
    "send_backpressure", "retransmits",   "heartbeats_sent", "receiver_evictions",
    "naks_suppressed",   "naks_received", "rate_waits",      "queue_dropped",
};
static const char *const sub_own_names[] = {"msgs_delivered", "bytes_delivered",
                                            "fragments_received", "gaps"};

static void own_mask(const char *const *names, size_t n, uint64_t mask[2])
{
    mask[0] = mask[1] = 0;
    for (size_t k = 0; k < n; k++)
        for (size_t i = 0; i < STAT_COUNTERS; i++)
            if (strcmp(rdps_counter_name(i), names[k]) == 0)
                mask[i / 64] |= 1ull << (i % 64);
}

static void counters_words(const rdps_counters *c, uint64_t *words)
{
    memcpy(words, c, sizeof(*c));
}

static void read_program(char *buf, size_t len)
{
    buf[0] = '\0';
    int fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, buf, len - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    for (char *c = buf; *c; c++)
        if (*c < 0x20 || *c >= 0x7f)
            *c = '?';
}

/* The file's mode: 0600, or RDPS_STAT_MODE (octal) with at most read access for group and
 * others added: never write, execute or special bits. */
static mode_t stat_file_mode(void)
{
    const char *env = getenv("RDPS_STAT_MODE");
    if (env == NULL || env[0] == '\0')
        return 0600;
    char *end;
    errno = 0;
    unsigned long mode = strtoul(env, &end, 8);
    if (errno != 0 || *end != '\0' || mode > 07777) {
        RDPS_LOG_WRN("RDPS_STAT_MODE=%s is not an octal mode: the stats file stays 0600", env);
        return 0600;
    }
    if (mode & ~(unsigned long)0644)
        RDPS_LOG_WRN("RDPS_STAT_MODE=%s: only read access is given to group and others (%04lo)",
                     env, 0600 | (mode & 044));
    return (mode_t)(0600 | (mode & 044));
}

/* A random temporary name in dir, created exclusively (O_EXCL, O_NOFOLLOW): an fd, or -errno. */
static int create_tmp(const char *dir, long pid, unsigned index, char *tmp, size_t len)
{
    int fd = -EEXIST;
    for (int i = 0; i < STAT_NAME_TRIES && fd == -EEXIST; i++) {
        if (snprintf(tmp, len, "%s/.rdps-%ld-%u-%016llx.tmp", dir, pid, index,
                     (unsigned long long)rdps__random_u64()) >= (int)len)
            return -ENAMETOOLONG;
        fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
            fd = -errno;
    }
    return fd;
}

/* Renames tmp to rdps-PID-<index>.stat, or when that name is taken to rdps-PID-<random>.stat
 * (the header's ctx_index follows: the file is not visible yet). 0 and s->path, or -errno. */
static int publish(struct rdps_stat_shm *s, const char *dir, long pid, unsigned index,
                   const char *tmp)
{
    struct rdps_stat_header *h = (struct rdps_stat_header *)(void *)s->w.base;
    unsigned first = index;
    int rc = 0;
    for (int i = 0; i <= STAT_NAME_TRIES; i++) {
        if (i > 0) /* taken: a number no ctx of ours has (they count from 0) */
            index = (unsigned)(rdps__random_u64() % 0x7fff0000u) + 0x10000u;
        h->ctx_index = index;
        if (!rdps__stat_path(s->path, sizeof(s->path), dir, pid, index))
            return -ENAMETOOLONG;
        if (rename(tmp, s->path) == 0) {
            if (i > 0)
                RDPS_LOG_WRN("stats file rdps-%ld-%u.stat was taken (another user's file?): "
                             "this ctx's is %s",
                             pid, first, s->path);
            return 0;
        }
        rc = -errno;
        if (rc == -ENOENT || rc == -ENAMETOOLONG)
            return rc; /* our temporary file is gone, or the directory: no other name helps */
    }
    return rc;
}

static bool stats_wanted(const rdps_config *cfg)
{
    const char *env = getenv("RDPS_STAT");
    if (env != NULL && strcmp(env, "0") == 0)
        return false;
    return !cfg->stats_off;
}

/* Creates, sizes, maps and fills the file under a temporary name, then renames it into place. */
static int stat_file_create(struct rdps_stat_shm *s, const rdps_ctx_t *ctx)
{
    static unsigned next_ctx_index;
    unsigned index = __atomic_fetch_add(&next_ctx_index, 1, __ATOMIC_RELAXED);
    const char *dir = rdps__stat_dir();
    long pid = (long)getpid();
    char tmp[sizeof(s->path)];
    struct rdps_stat_layout l;

    if (rdps__stat_layout(STAT_COUNTERS, RDPS_FRAME_REJECT_COUNT, STAT_ENTRIES, &l) != 0)
        return -EINVAL;
    int fd = create_tmp(dir, pid, index, tmp, sizeof(tmp));
    if (fd < 0)
        return fd;
    mode_t mode = stat_file_mode();
    if (mode != 0600 && fchmod(fd, mode) != 0) { /* past the umask: asked for explicitly */
        int err = -errno;
        close(fd);
        unlink(tmp);
        return err;
    }
    int rc = 0;
    void *mem = MAP_FAILED;
    if (ftruncate(fd, (off_t)l.file_size) != 0 ||
        (mem = mmap(NULL, l.file_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED)
        rc = -errno;
    close(fd);
    if (rc == 0) {
        const char *names[STAT_COUNTERS], *helps[STAT_COUNTERS], *rejects[RDPS_FRAME_REJECT_COUNT];
        uint8_t kinds[STAT_COUNTERS];
        for (size_t i = 0; i < STAT_COUNTERS; i++) {
            names[i] = rdps_counter_name(i);
            helps[i] = rdps_counter_description(i);
            kinds[i] = strstr(helps[i], "gauge") ? RDPS_STAT_GAUGE : RDPS_STAT_COUNTER;
        }
        for (int i = 0; i < RDPS_FRAME_REJECT_COUNT; i++)
            rejects[i] = rdps__frame_reject_name((enum rdps_frame_reject)i);
        char program[32];
        read_program(program, sizeof(program));
        uint64_t start_time = 0;
        /* 0 (no /proc): rdps-stat refuses the file, it cannot tell this process from a reused
         * pid's. */
        (void)rdps__stat_proc_start_time(pid, &start_time);
        struct rdps_stat_identity id = {
            .pid = (uint64_t)pid,
            .start_time = start_time,
            .create_real_ns = rdps__clock_realtime_ns(),
            .ctx_index = index,
            .program = program,
            .device = ctx->device,
            .counter_names = names,
            .counter_helps = helps,
            .counter_kinds = kinds,
            .reject_names = rejects,
        };
        rdps__stat_writer_init(&s->w, mem, &l, &id);
        s->size = l.file_size;
        rc = publish(s, dir, pid, index, tmp);
    }
    if (rc != 0) {
        if (mem != MAP_FAILED)
            munmap(mem, l.file_size);
        s->w.base = NULL;
        unlink(tmp);
    }
    return rc;
}

void rdps__stat_shm_open(rdps_ctx_t *ctx)
{
    if (!stats_wanted(&ctx->cfg))
        return;
    struct rdps_stat_shm *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return;
    int rc = stat_file_create(s, ctx);
    if (rc < 0) {
        RDPS_LOG_WRN("no live-counters file for rdps-stat in %s: %s", rdps__stat_dir(),
                     strerror(-rc));
        free(s);
        return;
    }
    own_mask(pub_own_names, sizeof(pub_own_names) / sizeof(pub_own_names[0]), s->pub_own);
    own_mask(sub_own_names, sizeof(sub_own_names) / sizeof(sub_own_names[0]), s->sub_own);
    s->owner_pid = (long)getpid();
    ctx->stat = s;
    ctx->stat_deadline_ns = 0; /* first refresh at the next poll */
}

void rdps__stat_shm_close(rdps_ctx_t *ctx)
{
    struct rdps_stat_shm *s = ctx->stat;
    if (s == NULL)
        return;
    if ((long)getpid() == s->owner_pid)
        unlink(s->path);
    munmap(s->w.base, s->size);
    free(s);
    ctx->stat = NULL;
}

uint64_t rdps__stat_shm_refresh(rdps_ctx_t *ctx, uint64_t now_ns)
{
    struct rdps_stat_shm *s = ctx->stat;
    if (s == NULL)
        return UINT64_MAX;
    rdps_counters c;
    uint64_t words[STAT_COUNTERS], rejects[RDPS_FRAME_REJECT_COUNT];
    rdps__ctx_counters(ctx, &c);
    counters_words(&c, words);
    const struct rdps_reasm_counters *rc = rdps__reasm_counters(ctx->reasm);
    for (int i = 0; i < RDPS_FRAME_REJECT_COUNT; i++)
        rejects[i] = ctx->bad_frames_by_reason[i] + rc->bad_frames[i];

    rdps__stat_write_begin(&s->w);
    rdps__stat_write_ctx(&s->w, words, rejects);
    uint32_t n = 0;
    uint64_t dropped = 0;
    for (const struct rdps_pub *p = ctx->pubs; p != NULL; p = p->next) {
        if (p->closed)
            continue;
        if (n == STAT_ENTRIES) {
            dropped++;
            continue;
        }
        uint64_t ew[STAT_COUNTERS];
        rdps_counters pc;
        rdps__pub_counters(p, &pc);
        counters_words(&pc, ew);
        struct rdps_source ucast[RDPS_STAT_UNICAST_LISTED];
        _Static_assert(sizeof(struct rdps_source) == sizeof(struct rdps_stat_source),
                       "the file lists rdps_source as it is");
        uint32_t nucast = rdps__fanout_sources(p->topic, ucast, RDPS_STAT_UNICAST_LISTED);
        rdps__stat_write_entry(&s->w, n++, RDPS_STAT_ENTRY_PUB,
                               p->rel != NULL ? RDPS_STAT_ENTRY_RELIABLE : 0, p->topic->id,
                               p->session_id, p->topic->name, s->pub_own, ew, nucast,
                               (const struct rdps_stat_source *)ucast);
    }
    for (const struct rdps_sub *q = ctx->subs; q != NULL; q = q->next) {
        if (q->closed)
            continue;
        if (n == STAT_ENTRIES) {
            dropped++;
            continue;
        }
        uint64_t ew[STAT_COUNTERS];
        rdps_counters sc;
        rdps__sub_counters(q, &sc);
        counters_words(&sc, ew);
        rdps__stat_write_entry(&s->w, n++, RDPS_STAT_ENTRY_SUB,
                               q->reliable ? RDPS_STAT_ENTRY_RELIABLE : 0, q->topic->id, 0,
                               q->topic->name, s->sub_own, ew, 0, NULL);
    }
    rdps__stat_write_end(&s->w, n, dropped, rdps__clock_monotonic_ns(), rdps__clock_realtime_ns());

    bool moving = n != s->last_entries || memcmp(words, s->last, sizeof(words)) != 0;
    memcpy(s->last, words, sizeof(words));
    s->last_entries = n;
    return now_ns + (moving ? RDPS_STAT_REFRESH_NS : RDPS_STAT_IDLE_NS);
}
