/* SPDX-License-Identifier: BSD-2-Clause */
/* test_stat_scan.c - rdps-stat's scan (tools/rdps-stat/stat_scan.h) and the stats-file writer
 * against another local user: files planted under a process's names neither block its ctx nor
 * pass for it, and sparse or oversized files cost the reader no memory. Needs root (setuid). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pubsub_test_util.h"
#include "stat_format.h"
#include "stat_scan.h"

#define VICTIM_UID   65534u /* nobody */
#define ATTACKER_UID 4242u
#define FORGED_SENT  31337u

/* A private 1777 directory standing in for /dev/shm (RDPS_STAT_DIR). */
static void shared_dir(char *dir)
{
    assert_non_null(mkdtemp(dir));
    assert_int_equal(chmod(dir, 01777), 0);
    setenv("RDPS_STAT_DIR", dir, 1);
}

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        char path[600];
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
    unsetenv("RDPS_STAT_DIR");
}

/*
 * A file that looks like a live md-feed's: counter "msgs_sent" = FORGED_SENT, `counters` counters,
 * room for `capacity` entries of which `used` in use, naming pid/index and start_time. The layout
 * is computed here (rdps__stat_layout refuses what is too large to be a writer's), the file
 * written with pwrite and sized with ftruncate: beyond what is written it is sparse.
 */
static void plant(const char *path, long pid, unsigned index, uint64_t start_time,
                  uint32_t counters, uint32_t capacity, uint32_t used, uid_t owner)
{
    struct rdps_stat_header h = {0};
    h.magic = RDPS_STAT_MAGIC;
    h.layout_version = RDPS_STAT_LAYOUT_VERSION;
    h.header_size = RDPS_STAT_HEADER_SIZE;
    h.pid = (uint64_t)pid;
    h.start_time = start_time;
    h.ctx_index = index;
    h.counter_count = counters;
    h.entry_capacity = capacity;
    h.entry_size = RDPS_STAT_ENTRY_FIXED + 8u * counters;
    h.names_off = RDPS_STAT_HEADER_SIZE;
    h.helps_off = h.names_off + (uint64_t)counters * RDPS_STAT_NAME_SIZE;
    h.kinds_off = h.helps_off + (uint64_t)counters * RDPS_STAT_HELP_SIZE;
    h.reject_names_off = h.kinds_off + (uint64_t)counters * 8;
    h.ctx_off = h.reject_names_off;
    h.entries_off = h.ctx_off + (uint64_t)counters * 8;
    h.file_size = h.entries_off + (uint64_t)capacity * h.entry_size;
    h.create_real_ns = 1;
    snprintf(h.program, sizeof(h.program), "md-feed");
    snprintf(h.device, sizeof(h.device), "mlx5_0");
    h.seq = 2;
    h.updates = 1;
    h.entry_count = used;
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0644);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)h.file_size), 0);
    assert_int_equal(pwrite(fd, &h, sizeof(h), 0), (ssize_t)sizeof(h));
    for (uint32_t i = 0; i < counters; i++) {
        char name[RDPS_STAT_NAME_SIZE] = {0};
        if (i == 0)
            snprintf(name, sizeof(name), "msgs_sent");
        else
            snprintf(name, sizeof(name), "c%u", i);
        uint64_t kind = RDPS_STAT_COUNTER, value = i == 0 ? FORGED_SENT : 0;
        assert_int_equal(pwrite(fd, name, sizeof(name), (off_t)(h.names_off + i * sizeof(name))),
                         (ssize_t)sizeof(name));
        assert_int_equal(pwrite(fd, &kind, 8, (off_t)(h.kinds_off + 8u * i)), 8);
        assert_int_equal(pwrite(fd, &value, 8, (off_t)(h.ctx_off + 8u * i)), 8);
    }
    for (uint32_t e = 0; e < used; e++) {
        char topic[RDPS_STAT_TOPIC_SIZE] = "md.itch.ch0";
        uint32_t kind = RDPS_STAT_ENTRY_PUB;
        off_t off = (off_t)(h.entries_off + (uint64_t)e * h.entry_size);
        assert_int_equal(pwrite(fd, topic, sizeof(topic), off), (ssize_t)sizeof(topic));
        assert_int_equal(pwrite(fd, &kind, 4, off + RDPS_STAT_ENTRY_OFF_KIND), 4);
    }
    assert_int_equal(fchown(fd, owner, owner == geteuid() ? getegid() : owner), 0);
    close(fd);
}

/* ---- finding 13: names planted by another user ---- */

struct victim {
    pid_t pid;
    int to_child, from_child;
};

/* A child that, on "go", becomes VICTIM_UID and opens a ctx with its stats file, reports whether
 * the file was created, refreshes it, and exits on "exit". */
static void victim_start(struct victim *v)
{
    int down[2], up[2];
    assert_int_equal(pipe(down), 0);
    assert_int_equal(pipe(up), 0);
    v->pid = fork();
    assert_true(v->pid >= 0);
    if (v->pid == 0) {
        char c;
        close(down[1]);
        close(up[0]);
        if (read(down[0], &c, 1) != 1 || setgid(VICTIM_UID) != 0 || setuid(VICTIM_UID) != 0)
            _exit(2);
        struct rdps_loopback_fabric *fabric;
        rdps_ctx_t *ctx;
        if (rdps__loopback_fabric_create(&fabric) != 0 || test_loopback_ctx(fabric, NULL, 64, &ctx))
            _exit(3);
        rdps__stat_shm_open(rdps__ctx_of_handle(ctx));
        rdps_ctx_poll(ctx, 0); /* the first refresh */
        c = rdps__ctx_of_handle(ctx)->stat != NULL ? 'Y' : 'N';
        if (write(up[1], &c, 1) != 1)
            _exit(4);
        while (read(down[0], &c, 1) == 1 && c != 'x')
            ;
        rdps_ctx_destroy(ctx);
        rdps__loopback_fabric_destroy(fabric);
        _exit(0);
    }
    close(down[0]);
    close(up[1]);
    v->to_child = down[1];
    v->from_child = up[0];
}

/* "go": the victim's ctx creates its file. True when it could. */
static bool victim_open(struct victim *v)
{
    char c = 'g';
    assert_int_equal(write(v->to_child, &c, 1), 1);
    assert_int_equal(read(v->from_child, &c, 1), 1);
    return c == 'Y';
}

static void victim_stop(struct victim *v)
{
    char c = 'x';
    assert_int_equal(write(v->to_child, &c, 1), 1);
    int st;
    assert_int_equal(waitpid(v->pid, &st, 0), v->pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    close(v->to_child);
    close(v->from_child);
}

/* What rdps-stat shows for the victim's pid: the live ctx must be the victim's own file. */
static void check_scan(const char *dir, const struct victim *v, const char *planted)
{
    struct stat_scan scan;
    assert_int_equal(stat_scan_dir(dir, (long)v->pid, &scan), 0);
    unsigned live = 0, planted_seen = 0;
    for (size_t i = 0; i < scan.n; i++) {
        const struct stat_ctx *c = &scan.ctx[i];
        if (strcmp(c->path, planted) == 0) {
            planted_seen++;
            if (c->state != STAT_REFUSED)
                fail_msg("the planted %s is shown %s (program %s, msgs_sent %llu)", c->path,
                         c->state == STAT_LIVE ? "live" : "stale", c->view.hdr.program,
                         (unsigned long long)rdps__stat_ctx_counter(&c->view, 0));
            assert_non_null(strstr(c->why, "owned by uid 4242"));
            continue;
        }
        assert_int_equal(c->state, STAT_LIVE);
        assert_string_not_equal(c->view.hdr.program, "md-feed");
        struct stat st;
        assert_int_equal(stat(c->path, &st), 0);
        assert_int_equal(st.st_uid, VICTIM_UID);
        assert_int_equal(st.st_mode & 07777, 0600);
        live++;
    }
    assert_int_equal(planted_seen, 1);
    assert_int_equal(live, 1);
    stat_scan_free(&scan);
}

/* Another user plants rdps-<victim's pid>-0.stat (a live-looking md-feed, the victim's start
 * time, msgs_sent 31337) before the victim's first ctx: the victim still gets a stats file, and
 * rdps-stat shows that one, never the planted one. */
static void test_planted_final_name(void **state)
{
    (void)state;
    if (geteuid() != 0)
        skip(); /* setuid to two users */
    char dir[] = "/tmp/rdps-stat-plant-XXXXXX";
    shared_dir(dir);
    struct victim v;
    victim_start(&v);
    uint64_t start;
    assert_int_equal(rdps__stat_proc_start_time((long)v.pid, &start), 0);
    char planted[512];
    assert_true(rdps__stat_path(planted, sizeof(planted), dir, (long)v.pid, 0));
    plant(planted, (long)v.pid, 0, start, 4, 4, 1, ATTACKER_UID);
    bool opened = victim_open(&v);
    if (!opened)
        fail_msg("the victim's ctx has no stats file: the planted name blocked it");
    check_scan(dir, &v, planted);
    victim_stop(&v);
    remove_dir(dir);
}

/* The same with the temporary name the writer used to take: .rdps-<pid>-0.tmp. */
static void test_planted_tmp_name(void **state)
{
    (void)state;
    if (geteuid() != 0)
        skip();
    char dir[] = "/tmp/rdps-stat-tmp-XXXXXX";
    shared_dir(dir);
    struct victim v;
    victim_start(&v);
    char tmp[512];
    snprintf(tmp, sizeof(tmp), "%s/.rdps-%ld-0.tmp", dir, (long)v.pid);
    plant(tmp, (long)v.pid, 0, 0, 4, 4, 1, ATTACKER_UID);
    if (!victim_open(&v))
        fail_msg("the victim's ctx has no stats file: the planted temporary name blocked it");
    struct stat_scan scan;
    assert_int_equal(stat_scan_dir(dir, (long)v.pid, &scan), 0);
    assert_int_equal(scan.n, 1);
    assert_int_equal(scan.ctx[0].state, STAT_LIVE);
    stat_scan_free(&scan);
    victim_stop(&v);
    remove_dir(dir);
}

/* A file naming a live process but another owner, or no start time, is refused; a root-owned
 * file (a process that dropped privileges after creating it) is believed. */
static void test_owner_and_start_time(void **state)
{
    (void)state;
    if (geteuid() != 0)
        skip();
    char dir[] = "/tmp/rdps-stat-own-XXXXXX";
    shared_dir(dir);
    long pid = (long)getpid();
    uint64_t start;
    assert_int_equal(rdps__stat_proc_start_time(pid, &start), 0);
    char path[512];
    assert_true(rdps__stat_path(path, sizeof(path), dir, pid, 1));
    plant(path, pid, 1, start, 4, 4, 1, ATTACKER_UID); /* we run as root */
    assert_true(rdps__stat_path(path, sizeof(path), dir, pid, 2));
    plant(path, pid, 2, 0, 4, 4, 1, 0); /* no start time */
    assert_true(rdps__stat_path(path, sizeof(path), dir, pid, 3));
    plant(path, pid, 3, start, 4, 4, 1, 0); /* ours */
    struct stat_scan scan;
    assert_int_equal(stat_scan_dir(dir, pid, &scan), 0);
    assert_int_equal(scan.n, 3);
    assert_int_equal(scan.ctx[0].state, STAT_REFUSED);
    assert_non_null(strstr(scan.ctx[0].why, "owned by uid 4242, but process"));
    assert_int_equal(scan.ctx[1].state, STAT_REFUSED);
    assert_non_null(strstr(scan.ctx[1].why, "names no start time"));
    assert_int_equal(scan.ctx[2].state, STAT_LIVE);
    assert_int_equal(rdps__stat_ctx_counter(&scan.ctx[2].view, 0), FORGED_SENT);
    stat_scan_free(&scan);
    remove_dir(dir);
}

/* ---- finding 14: the reader's memory ---- */

/* Max RSS (kB) of a child that scans dir for pid's files (dir NULL: does nothing). *counts gets
 * how many were live and refused. */
static long scan_rss_kb(const char *dir, long pid, unsigned counts[2])
{
    int up[2];
    assert_int_equal(pipe(up), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        unsigned n[2] = {0, 0};
        struct stat_scan scan;
        if (dir != NULL && stat_scan_dir(dir, pid, &scan) == 0) {
            for (size_t i = 0; i < scan.n; i++) {
                n[0] += scan.ctx[i].state == STAT_LIVE;
                n[1] += scan.ctx[i].state == STAT_REFUSED;
            }
            /* the scan is held, as rdps-stat holds it while it prints */
        }
        _exit(write(up[1], n, sizeof(n)) == (ssize_t)sizeof(n) ? 0 : 1);
    }
    close(up[1]);
    unsigned n[2] = {0, 0};
    assert_int_equal(read(up[0], n, sizeof(n)), (ssize_t)sizeof(n));
    close(up[0]);
    int st;
    struct rusage ru;
    assert_int_equal(wait4(child, &st, 0, &ru), child);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    if (counts != NULL)
        memcpy(counts, n, sizeof(n));
    return ru.ru_maxrss;
}

/* The audit's 32 sparse files of 64 MiB (valid by the old limits: 90 counters, 65536 entries),
 * naming this live process: the scan reads none of them. */
static void test_sparse_files_cost_nothing(void **state)
{
    (void)state;
    char dir[] = "/tmp/rdps-stat-sparse-XXXXXX";
    shared_dir(dir);
    long pid = (long)getpid();
    uint64_t start;
    assert_int_equal(rdps__stat_proc_start_time(pid, &start), 0);
    for (unsigned i = 0; i < 32; i++) {
        char path[512];
        assert_true(rdps__stat_path(path, sizeof(path), dir, pid, i));
        plant(path, pid, i, start, 90, 65536, 0, geteuid());
    }
    long base = scan_rss_kb(NULL, 0, NULL);
    unsigned n[2];
    long rss = scan_rss_kb(dir, pid, n);
    print_message("32 sparse 64 MiB files: max RSS %ld kB (baseline %ld kB), %u live, %u "
                  "refused\n",
                  rss, base, n[0], n[1]);
    assert_true(rss - base < 8 * 1024);
    assert_int_equal(n[1], 32);
    remove_dir(dir);
}

/* Files a writer could have made (1 MiB, every entry in use), many of them: one owner's share
 * of a scan is read, the rest refused unread. */
static void test_scan_budget(void **state)
{
    (void)state;
    char dir[] = "/tmp/rdps-stat-budget-XXXXXX";
    shared_dir(dir);
    long pid = (long)getpid();
    uint64_t start;
    assert_int_equal(rdps__stat_proc_start_time(pid, &start), 0);
    /* As plant() lays them out: names 64, helps 128, kinds 8 and counters 8 bytes each. */
    uint32_t counters = 90, entry = RDPS_STAT_ENTRY_FIXED + 8 * counters;
    uint32_t fixed = RDPS_STAT_HEADER_SIZE + counters * 208;
    uint32_t capacity = (RDPS_STAT_MAX_FILE - fixed) / entry;
    uint32_t file_size = fixed + capacity * entry;
    for (unsigned i = 0; i < 64; i++) {
        char path[512];
        assert_true(rdps__stat_path(path, sizeof(path), dir, pid, i));
        plant(path, pid, i, start, counters, capacity, capacity, geteuid());
    }
    long base = scan_rss_kb(NULL, 0, NULL);
    unsigned n[2];
    long rss = scan_rss_kb(dir, pid, n);
    print_message("64 full 1 MiB files: max RSS %ld kB (baseline %ld kB), %u live, %u refused\n",
                  rss, base, n[0], n[1]);
    assert_int_equal(n[0] + n[1], 64);
    assert_int_equal(n[0], STAT_SCAN_OWNER_BYTES / file_size);
    assert_true(rss - base < (long)(STAT_SCAN_OWNER_BYTES / 1024) + 8 * 1024);
    remove_dir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_planted_final_name),
        cmocka_unit_test(test_planted_tmp_name),
        cmocka_unit_test(test_owner_and_start_time),
        cmocka_unit_test(test_sparse_files_cost_nothing),
        cmocka_unit_test(test_scan_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
