/* SPDX-License-Identifier: BSD-2-Clause */
/* stat_fixture.c - live-counters files for the rdps-stat tests: real contexts (loopback), a dead
 * process's file, a reused pid's file and a corrupt one, in $RDPS_STAT_DIR.
 *
 * usage: stat_fixture N   publishes N messages on "fix.a" (reliable subscriber) and "fix.b",
 * and none on "fix.u" (unicast: its publisher lists the subscribing ctx as a unicast
 * destination), then keeps both contexts alive, polling, until stdin closes. Prints "ready" on
 * stdout once the files hold the final counters.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <poll.h>
#include <unistd.h>

#include "pubsub_test_util.h"
#include "stat_format.h"

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "stat_fixture: %s:%d: %s\n", __FILE__, __LINE__, #cond); \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

static void on_message(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    (void)data;
    (void)len;
    (void)info;
    (*(unsigned *)user)++;
}

static void pump(struct test_pair *p, int rounds)
{
    for (int i = 0; i < rounds; i++) {
        CHECK(rdps_ctx_poll(p->a, 0) >= 0);
        CHECK(rdps_ctx_poll(p->b, 0) >= 0);
    }
}

/* A child opens a ctx with its file and dies without destroying it: a stale file. */
static void dead_process_file(void)
{
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        struct test_pair p;
        if (test_pair_open(&p, NULL, 64) != 0)
            _exit(1);
        rdps__stat_shm_open(rdps__ctx_of_handle(p.a));
        rdps_ctx_poll(p.a, 0);
        _exit(rdps__ctx_of_handle(p.a)->stat != NULL ? 0 : 1);
    }
    int st;
    CHECK(waitpid(child, &st, 0) == child && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* A file that names our pid with another start time: the pid was reused. */
static void reused_pid_file(const char *dir)
{
    struct rdps_stat_layout l;
    CHECK(rdps__stat_layout(1, 0, 0, &l) == 0);
    char path[512];
    CHECK(rdps__stat_path(path, sizeof(path), dir, (long)getpid(), 99));
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0 && ftruncate(fd, (off_t)l.file_size) == 0);
    void *mem = mmap(NULL, l.file_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(mem != MAP_FAILED);
    const char *names[] = {"msgs_sent"}, *helps[] = {"messages published"};
    const uint8_t kinds[] = {RDPS_STAT_COUNTER};
    struct rdps_stat_identity id = {.pid = (uint64_t)getpid(),
                                    .start_time = 1, /* no process of ours started at tick 1 */
                                    .ctx_index = 99,
                                    .program = "old",
                                    .device = "rxe9",
                                    .counter_names = names,
                                    .counter_helps = helps,
                                    .counter_kinds = kinds};
    struct rdps_stat_writer w;
    rdps__stat_writer_init(&w, mem, &l, &id);
    munmap(mem, l.file_size);
    close(fd);
}

static void corrupt_file(const char *dir)
{
    char path[512];
    CHECK(rdps__stat_path(path, sizeof(path), dir, (long)getpid(), 98));
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    for (int i = 0; i < 1000; i++)
        fputc("RDPSSTAT-not-really"[i % 19], f);
    fclose(f);
}

int main(int argc, char **argv)
{
    unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 100;
    const char *dir = getenv("RDPS_STAT_DIR");
    CHECK(dir != NULL);
    dead_process_file();
    reused_pid_file(dir);
    corrupt_file(dir);

    struct test_pair p;
    CHECK(test_pair_open(&p, NULL, 0) == 0);
    rdps__stat_shm_open(rdps__ctx_of_handle(p.a));
    rdps__stat_shm_open(rdps__ctx_of_handle(p.b));
    CHECK(rdps__ctx_of_handle(p.a)->stat != NULL && rdps__ctx_of_handle(p.b)->stat != NULL);
    unsigned got_a = 0, got_b = 0;
    rdps_sub_t *sa, *sb;
    rdps_pub_t *pa, *pb;
    rdps_sub_opts rel = {.reliable = 1};
    CHECK(rdps_sub_create(p.b, "fix.a", on_message, &got_a, &rel, &sa) == 0);
    CHECK(rdps_sub_create(p.b, "fix.b\"q\\", on_message, &got_b, NULL, &sb) == 0);
    CHECK(rdps_pub_create(p.a, "fix.a", NULL, &pa) == 0);
    CHECK(rdps_pub_create(p.a, "fix.b\"q\\", NULL, &pb) == 0);
    unsigned got_u = 0;
    rdps_sub_t *su;
    rdps_pub_t *pu;
    rdps_sub_opts uni_sub = {.transport = RDPS_TRANSPORT_UNICAST};
    rdps_pub_opts uni_pub = {.transport = RDPS_TRANSPORT_UNICAST};
    CHECK(rdps_sub_create(p.b, "fix.u", on_message, &got_u, &uni_sub, &su) == 0);
    CHECK(rdps_pub_create(p.a, "fix.u", &uni_pub, &pu) == 0);
    for (int i = 0; i < 300 && rdps_pub_subscriber_count(pu) < 1; i++) {
        pump(&p, 1);
        usleep(10000);
    }
    CHECK(rdps_pub_subscriber_count(pu) == 1);
    for (int i = 0; i < 100 && !(rdps_pub_ready(pa) && rdps_pub_ready(pb)); i++)
        pump(&p, 1);
    uint8_t msg[64] = {0};
    for (unsigned i = 0; i < n; i++) {
        while (rdps_pub_send(pa, msg, sizeof(msg)) == RDPS_EAGAIN)
            pump(&p, 1);
        while (rdps_pub_send(pb, msg, 10) == RDPS_EAGAIN)
            pump(&p, 1);
    }
    pump(&p, 10);
    CHECK(got_a == n && got_b == n);
    usleep(250000); /* two refresh periods of the real clock, then a poll writes the files */
    pump(&p, 1);
    printf("ready\n");
    fflush(stdout);
    struct pollfd pfd = {.fd = 0, .events = POLLIN};
    char buf[64];
    while (poll(&pfd, 1, 20) >= 0) {
        pump(&p, 1);
        if ((pfd.revents & (POLLIN | POLLHUP)) && read(0, buf, sizeof(buf)) <= 0)
            break;
    }
    rdps_ctx_destroy(p.a);
    rdps_ctx_destroy(p.b);
    rdps__loopback_fabric_destroy(p.fabric);
    return 0;
}
