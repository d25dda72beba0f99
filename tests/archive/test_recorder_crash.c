/* SPDX-License-Identifier: BSD-2-Clause */
/* test_recorder_crash.c - kill -9 of a recorder at random points, in a loop: every message the
 * recorder had reported written is read back, in order and intact, the recording holds nothing
 * else, and once a later recorder has recovered the directory every recording verifies clean.
 * usage: test_recorder_crash CRASH_RECORDER [ROUNDS] (seeded by the round number). */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <rdps/rdps_archive.h>

#include "archive_test_util.h"
#include "crash_pattern.h"

static const char *victim;
static int rounds = 20;

/* Starts the victim; returns its pid and its stdout. */
static pid_t start_victim(const char *dir, FILE **out)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        execl(victim, victim, dir, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    *out = fdopen(fds[0], "r");
    return pid;
}

/* Reads recording id: a prefix 0..n-1 of the messages, nothing corrupt. Returns n. */
static uint64_t read_prefix(const char *dir, uint64_t id)
{
    rdps_archive_reader_t *r;
    rdps_archive_record rec;
    assert_int_equal(rdps_archive_reader_open(dir, id, &r), 0);
    uint64_t n = 0;
    int rc;
    while ((rc = rdps_archive_reader_next(r, &rec)) == 1) {
        if (rec.type != RDPS_ARCHIVE_MESSAGE)
            continue;
        if (!crash_message_is(n, rec.data, rec.len))
            fail_msg("recording %" PRIu64 ": message %" PRIu64 " wrong (%zu bytes)", id, n,
                     rec.len);
        n++;
    }
    assert_int_equal(rc, 0); /* a torn tail reads as the end, never as an error */
    rdps_archive_reader_close(r);
    return n;
}

static void verify_cb(void *user, const char *line)
{
    (void)user;
    print_message("verify: %s\n", line);
}

static void test_kill_loop(void **state)
{
    (void)state;
    char dir[256];
    scratch_dir(dir, sizeof(dir), "rec-crash");
    for (int round = 1; round <= rounds; round++) {
        srand((unsigned)round);
        FILE *out;
        pid_t pid = start_victim(dir, &out);
        /* Kill after a random number of reported writes, a random moment later. */
        int kill_after = 1 + rand() % 40;
        uint64_t written = 0;
        char line[64];
        for (int k = 0; k < kill_after && fgets(line, sizeof(line), out) != NULL; k++)
            assert_int_equal(sscanf(line, "W %" SCNu64, &written), 1);
        usleep((useconds_t)(rand() % 20000));
        /* What it reported before the kill: lines already in the pipe count too. */
        kill(pid, SIGKILL);
        while (fgets(line, sizeof(line), out) != NULL)
            assert_int_equal(sscanf(line, "W %" SCNu64, &written), 1);
        fclose(out);
        int status;
        waitpid(pid, &status, 0);
        assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        assert_true(written > 0);
        uint64_t n = read_prefix(dir, (uint64_t)round);
        if (n < written)
            fail_msg("round %d: %" PRIu64 " messages read back, %" PRIu64 " were written", round, n,
                     written);
    }
    /* A recorder opening the directory recovers the last one; then all verify clean. */
    FILE *out;
    pid_t pid = start_victim(dir, &out);
    char line[64];
    assert_non_null(fgets(line, sizeof(line), out));
    kill(pid, SIGTERM);
    fclose(out);
    waitpid(pid, NULL, 0);
    for (int round = 1; round <= rounds; round++) {
        rdps_archive_verify_result vr;
        int rc = rdps_archive_verify(dir, (uint64_t)round, verify_cb, NULL, &vr);
        if (rc != 0)
            fail_msg("recording %d: verify returned %d after recovery", round, rc);
    }
    scratch_remove(dir);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_recorder_crash CRASH_RECORDER [ROUNDS]\n");
        return 2;
    }
    victim = argv[1];
    if (argc > 2)
        rounds = atoi(argv[2]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kill_loop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
