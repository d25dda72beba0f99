/* SPDX-License-Identifier: BSD-2-Clause */
/* event_loop_check.c - a subscriber driven by an application's own epoll loop (a timerfd and
 * rdps_ctx_fd): every message must arrive on an fd wakeup, never wait for a timer, and the fd
 * must not wake the loop for nothing. */
#include <rdps/rdps.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

/*
 * usage: event_loop_check [--loopback] [--no-arm] TOPIC COUNT TIMEOUT_S
 *   --loopback  publish COUNT messages from a thread of this process on the in-process
 *               loopback device, 1 ms apart (else another process publishes them, e.g. rdpub)
 *   --no-arm    leave out rdps_ctx_arm (the loop before it existed: shows the check failing)
 * Prints one JSON line of what the loop saw; exits 0 when every bound held, 1 otherwise.
 * Bounds: all COUNT messages delivered; none delivered in a wakeup the timer alone caused; empty
 * wakeups (the ctx fd readable, no datagram handled, no timer due) at most COUNT / 10 + 5.
 */

struct loop_stats {
    uint64_t messages, wakeups, fd_wakeups, timer_wakeups, empty_wakeups, timer_only_messages;
    uint64_t polls, arm_eagain;
};

struct publisher_arg {
    const char *topic;
    int count;
    int status;
};

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void on_message(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    (void)data;
    (void)len;
    (void)info;
    ((struct loop_stats *)user)->messages++;
}

static int loopback_config(rdps_config *cfg)
{
    rdps_config_init(cfg);
    cfg->device = "loopback";
    cfg->stats_off = 1;
    return 0;
}

/* The publisher thread: its own ctx on the loopback device, one message a millisecond. */
static void *publish(void *p)
{
    struct publisher_arg *arg = p;
    rdps_config cfg;
    rdps_ctx_t *ctx;
    rdps_pub_t *pub;
    loopback_config(&cfg);
    arg->status = rdps_ctx_create(&cfg, &ctx);
    if (arg->status < 0)
        return NULL;
    arg->status = rdps_pub_create(ctx, arg->topic, NULL, &pub);
    while (arg->status == 0 && (!rdps_pub_ready(pub) || rdps_pub_subscriber_count(pub) < 1))
        rdps_ctx_wait(ctx, 10);
    for (int i = 0; arg->status == 0 && i < arg->count; i++) {
        char text[32];
        int len = snprintf(text, sizeof(text), "message %d", i);
        int rc;
        while ((rc = rdps_pub_send(pub, text, (size_t)len)) == RDPS_EAGAIN)
            rdps_ctx_wait(ctx, 1);
        if (rc < 0)
            arg->status = rc;
        rdps_ctx_poll(ctx, 0);
        usleep(1000);
    }
    rdps_ctx_destroy(ctx);
    return NULL;
}

static int set_timer(int tfd, int ms)
{
    struct itimerspec its = {0};
    /* 0 would disarm: a due timer fires at once. */
    its.it_value.tv_sec = ms / 1000;
    its.it_value.tv_nsec = (long)(ms % 1000) * 1000000L + (ms == 0 ? 1 : 0);
    return timerfd_settime(tfd, 0, &its, NULL);
}

/* The application's loop, as rdps.h describes it above rdps_ctx_fd. */
static int run_loop(rdps_ctx_t *ctx, struct loop_stats *st, uint64_t want, uint64_t deadline_ms,
                    int use_arm)
{
    int ep = epoll_create1(EPOLL_CLOEXEC);
    int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    int cfd = rdps_ctx_fd(ctx);
    if (ep < 0 || tfd < 0 || cfd < 0)
        return -1;
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = cfd};
    epoll_ctl(ep, EPOLL_CTL_ADD, cfd, &ev);
    ev.data.fd = tfd;
    epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev);

    while (st->messages < want && now_ms() < deadline_ms) {
        int handled;
        while ((handled = rdps_ctx_poll(ctx, 0)) > 0)
            st->polls++;
        if (handled < 0)
            return handled;
        if (use_arm) {
            int rc = rdps_ctx_arm(ctx);
            if (rc == RDPS_EAGAIN) {
                st->arm_eagain++;
                continue;
            }
            if (rc < 0)
                return rc;
        }
        set_timer(tfd, rdps_ctx_next_timeout_ms(ctx));
        struct epoll_event evs[2];
        int n = epoll_wait(ep, evs, 2, 1000);
        if (n < 0 && errno != EINTR)
            return -1;
        if (n <= 0)
            continue;
        st->wakeups++;
        int fd_ready = 0, timer_ready = 0;
        for (int i = 0; i < n; i++) {
            if (evs[i].data.fd == cfd)
                fd_ready = 1;
            else
                timer_ready = 1;
        }
        if (timer_ready) {
            uint64_t expirations;
            (void)!read(tfd, &expirations, sizeof(expirations));
            st->timer_wakeups++;
        }
        st->fd_wakeups += (uint64_t)fd_ready;
        /* Drain what this wakeup brought, and attribute it. */
        uint64_t before = st->messages;
        int timer_due = rdps_ctx_next_timeout_ms(ctx) == 0;
        int total = 0;
        while ((handled = rdps_ctx_poll(ctx, 0)) > 0)
            total += handled;
        if (handled < 0)
            return handled;
        if (fd_ready && total == 0 && !timer_due && !timer_ready)
            st->empty_wakeups++;
        if (!fd_ready && timer_ready)
            st->timer_only_messages += st->messages - before;
    }
    close(tfd);
    close(ep);
    return 0;
}

int main(int argc, char **argv)
{
    int loopback = 0, use_arm = 1, a = 1;
    for (; a < argc && strncmp(argv[a], "--", 2) == 0; a++) {
        if (strcmp(argv[a], "--loopback") == 0)
            loopback = 1;
        else if (strcmp(argv[a], "--no-arm") == 0)
            use_arm = 0;
        else
            break;
    }
    if (argc - a != 3) {
        fprintf(stderr, "usage: event_loop_check [--loopback] [--no-arm] TOPIC COUNT TIMEOUT_S\n");
        return 2;
    }
    const char *topic = argv[a];
    int count = atoi(argv[a + 1]), timeout_s = atoi(argv[a + 2]);
    if (count <= 0 || timeout_s <= 0) {
        fprintf(stderr, "event_loop_check: COUNT and TIMEOUT_S must be positive\n");
        return 2;
    }

    rdps_config cfg;
    rdps_ctx_t *ctx;
    rdps_sub_t *sub;
    struct loop_stats st = {0};
    if (loopback)
        loopback_config(&cfg);
    else
        rdps_config_init(&cfg);
    int rc = rdps_ctx_create(&cfg, &ctx);
    if (rc < 0) {
        fprintf(stderr, "event_loop_check: %s: %s\n", rdps_strerror(rc), rdps_last_error_message());
        return rc == RDPS_ENODEV ? 77 : 1;
    }
    if ((rc = rdps_sub_create(ctx, topic, on_message, &st, NULL, &sub)) < 0) {
        fprintf(stderr, "event_loop_check: subscribe: %s\n", rdps_last_error_message());
        return 1;
    }
    while (!rdps_sub_ready(sub))
        rdps_ctx_wait(ctx, 10);
    pthread_t thread;
    struct publisher_arg parg = {.topic = topic, .count = count};
    if (loopback && pthread_create(&thread, NULL, publish, &parg) != 0) {
        fprintf(stderr, "event_loop_check: pthread_create failed\n");
        return 1;
    }
    rc = run_loop(ctx, &st, (uint64_t)count, now_ms() + (uint64_t)timeout_s * 1000u, use_arm);
    if (loopback)
        pthread_join(thread, NULL);
    rdps_ctx_destroy(ctx);

    uint64_t empty_bound = (uint64_t)count / 10 + 5;
    printf("{\"messages\":%" PRIu64 ",\"wakeups\":%" PRIu64 ",\"fd_wakeups\":%" PRIu64
           ",\"timer_wakeups\":%" PRIu64 ",\"empty_wakeups\":%" PRIu64
           ",\"timer_only_messages\":%" PRIu64 ",\"arm_eagain\":%" PRIu64
           ",\"empty_wakeups_bound\":%" PRIu64 "}\n",
           st.messages, st.wakeups, st.fd_wakeups, st.timer_wakeups, st.empty_wakeups,
           st.timer_only_messages, st.arm_eagain, empty_bound);
    int ok = 1;
    if (rc < 0 || (loopback && parg.status < 0)) {
        fprintf(stderr, "FAIL: the loop or the publisher failed (%d, %d)\n", rc, parg.status);
        ok = 0;
    }
    if (st.messages != (uint64_t)count) {
        fprintf(stderr, "FAIL: %" PRIu64 " of %d messages delivered\n", st.messages, count);
        ok = 0;
    }
    if (st.timer_only_messages > 0) {
        fprintf(stderr, "FAIL: %" PRIu64 " messages waited for a timer wakeup\n",
                st.timer_only_messages);
        ok = 0;
    }
    if (st.empty_wakeups > empty_bound) {
        fprintf(stderr, "FAIL: %" PRIu64 " empty wakeups for %d messages (bound %" PRIu64 ")\n",
                st.empty_wakeups, count, empty_bound);
        ok = 0;
    }
    return ok ? 0 : 1;
}
