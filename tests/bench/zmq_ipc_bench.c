/* SPDX-License-Identifier: BSD-2-Clause */
/* zmq_ipc_bench.c - the baseline of the local device's benchmark: libzmq PUB/SUB over ipc://
 * between two processes, every message verified (index and fill), no drops (unlimited high-water
 * marks); prints msgs/s at the subscriber (first to last) and the one-way latency p50 (one clock).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

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

/* Message i: 8 bytes of i, 8 bytes of the send time, then bytes (i + k) & 0xff. */
static void fill(uint8_t *m, size_t size, uint64_t i)
{
    uint64_t t = now_ns();
    memcpy(m, &i, 8);
    memcpy(m + 8, &t, 8);
    for (size_t k = 16; k < size; k++)
        m[k] = (uint8_t)(i + k);
}

static int subscriber(const char *ep, size_t size, uint64_t count, int ready_fd)
{
    void *zc = zmq_ctx_new(), *s = zmq_socket(zc, ZMQ_SUB);
    int hwm = 0;
    zmq_setsockopt(s, ZMQ_RCVHWM, &hwm, sizeof(hwm));
    zmq_setsockopt(s, ZMQ_SUBSCRIBE, "", 0);
    if (zmq_connect(s, ep) != 0)
        return 1;
    uint8_t *m = malloc(size);
    uint64_t *lat = malloc(count * sizeof(uint64_t)), first = 0, last = 0, bad = 0;
    (void)!write(ready_fd, "r", 1);
    for (uint64_t i = 0; i < count; i++) {
        int n = zmq_recv(s, m, size, 0);
        uint64_t t = now_ns(), idx, sent;
        if (i == 0)
            first = t;
        last = t;
        memcpy(&idx, m, 8);
        memcpy(&sent, m + 8, 8);
        int ok = n == (int)size && idx == i;
        for (size_t k = 16; ok && k < size; k++)
            ok = m[k] == (uint8_t)(i + k);
        bad += !ok;
        lat[i] = t - sent;
    }
    qsort(lat, count, sizeof(uint64_t), cmp_u64);
    printf("zmq ipc  %5zu B: %9.0f msgs/s, one-way p50 %6.1f us, %llu of %llu verified\n", size,
           (double)(count - 1) * 1e9 / (double)(last - first), lat[count / 2] / 1e3,
           (unsigned long long)(count - bad), (unsigned long long)count);
    fflush(stdout); /* the child leaves by _exit */
    zmq_close(s);
    zmq_ctx_term(zc);
    return bad != 0;
}

int main(int argc, char **argv)
{
    size_t size = argc > 1 ? strtoull(argv[1], NULL, 10) : 64;
    uint64_t count = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000000;
    uint64_t rate = argc > 3 ? strtoull(argv[3], NULL, 10) : 0; /* paced: a latency run */
    char ep[64];
    snprintf(ep, sizeof(ep), "ipc:///tmp/rdps-zmq-bench-%d", (int)getpid());
    if (size < 16)
        size = 16;
    void *zc = zmq_ctx_new(), *p = zmq_socket(zc, ZMQ_PUB);
    int hwm = 0;
    zmq_setsockopt(p, ZMQ_SNDHWM, &hwm, sizeof(hwm));
    if (zmq_bind(p, ep) != 0) {
        fprintf(stderr, "zmq_bind %s: %s\n", ep, zmq_strerror(zmq_errno()));
        return 1;
    }
    int ready[2];
    if (pipe(ready) != 0)
        return 1;
    pid_t pid = fork();
    if (pid == 0)
        _exit(subscriber(ep, size, count, ready[1]));
    char c;
    (void)!read(ready[0], &c, 1);
    usleep(300000); /* the subscription reaches the publisher (PUB/SUB drops before it) */
    uint8_t *m = malloc(size);
    uint64_t start = now_ns(), gap = rate ? 1000000000ull / rate : 0;
    for (uint64_t i = 0; i < count; i++) {
        while (gap && now_ns() < start + i * gap)
            ;
        fill(m, size, i);
        zmq_send(p, m, size, 0);
    }
    int status;
    waitpid(pid, &status, 0);
    zmq_close(p);
    zmq_ctx_term(zc);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
