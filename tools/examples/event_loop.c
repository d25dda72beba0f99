/* SPDX-License-Identifier: BSD-2-Clause */
/* event_loop.c - an rdps subscriber inside the application's own epoll loop, beside a timer and a
 * signal fd of the application's: no thread, no busy polling, no message waiting for a timer. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* signalfd, timerfd, CLOCK_MONOTONIC under -std=c11 */
#endif
#include <rdps/rdps.h>

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

/* usage: event_loop TOPIC [COUNT]   (receives COUNT messages, or until Ctrl-C) */

struct app {
    uint64_t received, bytes;
};

static void on_msg(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct app *app = user;
    (void)data;
    (void)info;
    app->received++;
    app->bytes += len;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "Usage: event_loop TOPIC [COUNT]\n");
        return 2;
    }
    uint64_t want = argc > 2 ? strtoull(argv[2], NULL, 10) : UINT64_MAX;
    struct app app = {0};
    rdps_config cfg;
    rdps_ctx_t *ctx;
    rdps_sub_t *sub;
    rdps_config_init(&cfg); /* RDPS_DEVICE=loopback runs it without RDMA */
    int rc = rdps_ctx_create(&cfg, &ctx);
    if (rc < 0) {
        fprintf(stderr, "rdps: %s: %s\n", rdps_strerror(rc), rdps_last_error_message());
        return 1;
    }
    if ((rc = rdps_sub_create(ctx, argv[1], on_msg, &app, NULL, &sub)) < 0) {
        fprintf(stderr, "rdps_sub_create: %s\n", rdps_last_error_message());
        rdps_ctx_destroy(ctx);
        return 1;
    }

    /* The application's own fds: a 1-second status timer and SIGINT/SIGTERM as a signal fd. */
    int ep = epoll_create1(EPOLL_CLOEXEC);
    int status_timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    struct itimerspec every_second = {.it_interval = {1, 0}, .it_value = {1, 0}};
    timerfd_settime(status_timer, 0, &every_second, NULL);
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    sigprocmask(SIG_BLOCK, &stop_signals, NULL);
    int signals = signalfd(-1, &stop_signals, SFD_CLOEXEC | SFD_NONBLOCK);
    /* rdps's fd: readable means "call rdps_ctx_poll()". */
    int rdps_fd = rdps_ctx_fd(ctx);
    int fds[] = {rdps_fd, status_timer, signals};
    for (int i = 0; i < 3; i++) {
        struct epoll_event ev = {.events = EPOLLIN, .data.fd = fds[i]};
        epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev);
    }

    int running = 1;
    while (running && app.received < want) {
        /* 1. Drain: message callbacks run inside rdps_ctx_poll. */
        while ((rc = rdps_ctx_poll(ctx, 0)) > 0)
            ;
        if (rc < 0)
            break;
        if (app.received >= want)
            break;
        /* 2. Arm before sleeping; RDPS_EAGAIN: work came in meanwhile, drain again. */
        rc = rdps_ctx_arm(ctx);
        if (rc == RDPS_EAGAIN)
            continue;
        if (rc < 0)
            break;
        /* 3. Sleep on every fd, at most until rdps's next timer (heartbeats, announcements). */
        struct epoll_event events[3];
        int n = epoll_wait(ep, events, 3, rdps_ctx_next_timeout_ms(ctx));
        for (int i = 0; i < n; i++) {
            if (events[i].data.fd == status_timer) {
                uint64_t ticks;
                if (read(status_timer, &ticks, sizeof(ticks)) == sizeof(ticks))
                    printf("%llu messages, %llu bytes\n", (unsigned long long)app.received,
                           (unsigned long long)app.bytes);
            } else if (events[i].data.fd == signals) {
                running = 0;
            } /* rdps_fd: nothing to do here, the drain at the top of the loop handles it */
        }
    }
    if (rc < 0 && rc != RDPS_EAGAIN)
        fprintf(stderr, "rdps: %s: %s\n", rdps_strerror(rc), rdps_last_error_message());
    printf("received %llu messages\n", (unsigned long long)app.received);
    close(signals);
    close(status_timer);
    close(ep);
    rdps_ctx_destroy(ctx);
    return rc < 0 && rc != RDPS_EAGAIN ? 1 : 0;
}
