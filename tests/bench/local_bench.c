/* SPDX-License-Identifier: BSD-2-Clause */
/* local_bench.c - one publisher and one subscriber through librdps: two processes on the local
 * device, or two threads on the in-process loopback device; every message verified (index and
 * fill); msgs/s at the subscriber (first to last) and, paced, the one-way latency p50. */
#include <rdps/rdps.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TOPIC "bench.local"

struct bench {
    const char *device;
    size_t size;
    uint64_t count, rate; /* rate 0: as fast as possible */
    bool reliable;
    bool sleep;   /* the subscriber sleeps on its fd before every poll (LOCAL_BENCH_SLEEP=1) */
    int ready_fd; /* the subscriber writes one byte once it is subscribed */
};

struct result {
    uint64_t received, verified, out_of_order;
    double msgs_per_s, p50_us;
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

struct sub_state {
    const struct bench *b;
    uint64_t next, received, verified, out_of_order, first_ns, last_ns, *lat;
};

static void on_msg(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct sub_state *s = user;
    const uint8_t *m = data;
    uint64_t t = now_ns(), idx, sent;
    (void)info;
    if (len != s->b->size)
        return;
    memcpy(&idx, m, 8);
    memcpy(&sent, m + 8, 8);
    bool ok = idx < s->b->count;
    for (size_t k = 16; ok && k < len; k++)
        ok = m[k] == (uint8_t)(idx + k);
    if (s->received == 0)
        s->first_ns = t;
    s->last_ns = t;
    if (ok && s->received < s->b->count)
        s->lat[s->received] = t - sent;
    s->received++;
    s->verified += ok;
    s->out_of_order += idx != s->next;
    s->next = idx + 1;
}

static int subscriber(const struct bench *b, struct result *r)
{
    rdps_config cfg;
    rdps_config_init(&cfg);
    cfg.device = b->device;
    rdps_ctx_t *ctx;
    rdps_sub_t *sub;
    struct sub_state s = {.b = b, .lat = calloc(b->count, sizeof(uint64_t))};
    rdps_sub_opts opts = {.reliable = b->reliable};
    if (s.lat == NULL || rdps_ctx_create(&cfg, &ctx) < 0 ||
        rdps_sub_create(ctx, TOPIC, on_msg, &s, &opts, &sub) < 0) {
        fprintf(stderr, "subscriber: %s\n", rdps_last_error_message());
        return 1;
    }
    (void)!write(b->ready_fd, "r", 1);
    /* Gives up 3 s after the last message (the clock read every 1024 polls: it is not free). */
    uint64_t idle_since = now_ns(), seen = 0;
    unsigned idle = 0;
    for (uint64_t polls = 0; s.received < b->count; polls++) {
        /* Spin a little, then sleep on the ctx's fd (the device wakes it: arm), as the tools
         * do: two processes spinning on a loaded host take each other's CPU. */
        if (b->sleep || (rdps_ctx_poll(ctx, 0) == 0 && ++idle >= 16)) {
            rdps_ctx_wait(ctx, 100);
            idle = 0;
        }
        if ((polls & 1023) != 0)
            continue;
        if (s.received != seen)
            idle_since = now_ns(), seen = s.received;
        else if (now_ns() - idle_since > 3000000000ull)
            break;
    }
    uint64_t n = s.received < b->count ? s.received : b->count;
    qsort(s.lat, n, sizeof(uint64_t), cmp_u64);
    *r = (struct result){.received = s.received,
                         .verified = s.verified,
                         .out_of_order = s.out_of_order,
                         .msgs_per_s = s.last_ns > s.first_ns ? (double)(s.received - 1) * 1e9 /
                                                                    (double)(s.last_ns - s.first_ns)
                                                              : 0,
                         .p50_us = n > 0 ? (double)s.lat[n / 2] / 1e3 : 0};
    rdps_ctx_destroy(ctx);
    free(s.lat);
    return 0;
}

static int publisher(const struct bench *b)
{
    rdps_config cfg;
    rdps_config_init(&cfg);
    cfg.device = b->device;
    rdps_ctx_t *ctx;
    rdps_pub_t *pub;
    rdps_pub_opts opts = {.reliable = b->reliable};
    if (rdps_ctx_create(&cfg, &ctx) < 0 || rdps_pub_create(ctx, TOPIC, &opts, &pub) < 0) {
        fprintf(stderr, "publisher: %s\n", rdps_last_error_message());
        return 1;
    }
    uint64_t until = now_ns() + 10000000000ull;
    while (rdps_pub_subscriber_count(pub) == 0 && now_ns() < until)
        rdps_ctx_wait(ctx, 10);
    uint8_t *m = malloc(b->size);
    uint64_t start = now_ns(), gap = b->rate ? 1000000000ull / b->rate : 0;
    for (uint64_t i = 0; i < b->count; i++) {
        while (gap && now_ns() < start + i * gap)
            rdps_ctx_poll(ctx, 0);
        uint64_t t = now_ns();
        memcpy(m, &i, 8);
        memcpy(m + 8, &t, 8);
        for (size_t k = 16; k < b->size; k++)
            m[k] = (uint8_t)(i + k);
        int rc;
        for (unsigned spins = 0; (rc = rdps_pub_send(pub, m, b->size)) == RDPS_EAGAIN; spins++)
            if (spins < 16)
                rdps_ctx_poll(ctx, 0);
            else
                rdps_ctx_wait(ctx, 1); /* back-pressure that lasts: sleep on the fd */
        if (rc < 0) {
            fprintf(stderr, "rdps_pub_send: %s\n", rdps_strerror(rc));
            break;
        }
    }
    for (int i = 0; i < 3000 && b->reliable && rdps_pub_receivers_behind(pub) > 0; i++)
        rdps_ctx_wait(ctx, 1);
    for (int i = 0; i < 200; i++) /* heartbeats and repairs for the tail */
        rdps_ctx_wait(ctx, 1);
    rdps_ctx_destroy(ctx);
    free(m);
    return 0;
}

struct thread_arg {
    struct bench b;
    struct result r;
};

static void *sub_thread(void *p)
{
    struct thread_arg *a = p;
    subscriber(&a->b, &a->r);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "Usage: local_bench local|loopback SIZE COUNT unreliable|reliable [RATE]\n"
                        "  RATE: messages per second (latency runs; default: as fast as "
                        "possible); LOCAL_BENCH_SLEEP=1: the subscriber sleeps on its fd\n");
        return 2;
    }
    struct bench b = {.device = argv[1],
                      .size = strtoull(argv[2], NULL, 10),
                      .count = strtoull(argv[3], NULL, 10),
                      .reliable = strcmp(argv[4], "reliable") == 0,
                      .rate = argc > 5 ? strtoull(argv[5], NULL, 10) : 0,
                      .sleep = getenv("LOCAL_BENCH_SLEEP") != NULL &&
                               strcmp(getenv("LOCAL_BENCH_SLEEP"), "1") == 0};
    if (b.size < 16 || b.count < 2)
        return 2;
    int ready[2], results[2];
    if (pipe(ready) != 0 || pipe(results) != 0)
        return 1;
    b.ready_fd = ready[1];
    struct result r = {0};
    char c;
    if (strcmp(b.device, "loopback") == 0) {
        struct thread_arg a = {.b = b};
        pthread_t t;
        pthread_create(&t, NULL, sub_thread, &a);
        (void)!read(ready[0], &c, 1);
        publisher(&b);
        pthread_join(t, NULL);
        r = a.r;
    } else {
        pid_t pid = fork();
        if (pid == 0) {
            int rc = subscriber(&b, &r);
            (void)!write(results[1], &r, sizeof(r));
            _exit(rc);
        }
        (void)!read(ready[0], &c, 1);
        publisher(&b);
        (void)!read(results[0], &r, sizeof(r));
        waitpid(pid, NULL, 0);
    }
    printf("rdps %-8s %5zu B %-10s %s%s: %9.0f msgs/s, one-way p50 %7.1f us, %llu of %llu "
           "verified, %llu out of order\n",
           b.device, b.size, argv[4], b.rate ? argv[5] : "max", b.sleep ? " sleeping" : "",
           r.msgs_per_s, r.p50_us, (unsigned long long)r.verified, (unsigned long long)b.count,
           (unsigned long long)r.out_of_order);
    return r.verified == b.count ? 0 : 3;
}
