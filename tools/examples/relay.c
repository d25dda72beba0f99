/* SPDX-License-Identifier: BSD-2-Clause */
/* relay.c - republishes every message of one topic on another, from one context to a second one
 * (e.g. from one fabric or partition to another): sending from inside a message callback, with
 * back-pressure handled there. */
#include <rdps/rdps.h>

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * usage: relay IN_TOPIC OUT_TOPIC [IN_DEVICE [OUT_DEVICE]] [COUNT]
 * Devices default to the first active port ($RDPS_DEVICE); COUNT: stop after that many.
 */

struct relay {
    rdps_ctx_t *out_ctx;
    rdps_pub_t *out;
    uint64_t relayed, failed;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

/* Runs inside rdps_ctx_poll of the input context; `data` is valid only during the call. */
static void on_msg(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct relay *r = user;
    (void)info; /* info->source says who published it: a relay could filter on it */
    int rc;
    /* Back-pressure on the output: make progress on ITS context (another ctx may be polled from
     * a callback; the input ctx itself may not) until the message is taken. rdps_pub_send
     * copies it, so `data` may go away when we return. */
    while ((rc = rdps_pub_send(r->out, data, len)) == RDPS_EAGAIN)
        rdps_ctx_poll(r->out_ctx, 0);
    if (rc == 0)
        r->relayed++;
    else
        r->failed++; /* e.g. RDPS_EMSGSIZE when the output's limit is smaller */
}

static int open_ctx(const char *device, rdps_ctx_t **ctx)
{
    rdps_config cfg;
    rdps_config_init(&cfg);
    cfg.device = device; /* NULL: $RDPS_DEVICE or the first active port */
    int rc = rdps_ctx_create(&cfg, ctx);
    if (rc < 0)
        fprintf(stderr, "rdps_ctx_create(%s): %s\n", device ? device : "default",
                rdps_last_error_message());
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "Usage: relay IN_TOPIC OUT_TOPIC [IN_DEVICE [OUT_DEVICE]] [COUNT]\n");
        return 2;
    }
    const char *in_device = argc > 3 ? argv[3] : NULL, *out_device = argc > 4 ? argv[4] : NULL;
    uint64_t count = argc > 5 ? strtoull(argv[5], NULL, 10) : UINT64_MAX;
    struct relay r = {0};
    rdps_ctx_t *in_ctx = NULL;
    rdps_sub_t *in;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);

    if (open_ctx(in_device, &in_ctx) < 0 || open_ctx(out_device, &r.out_ctx) < 0 ||
        rdps_sub_create(in_ctx, argv[1], on_msg, &r, NULL, &in) < 0 ||
        rdps_pub_create(r.out_ctx, argv[2], NULL, &r.out) < 0) {
        fprintf(stderr, "relay: %s\n", rdps_last_error_message());
        rdps_ctx_destroy(in_ctx);
        rdps_ctx_destroy(r.out_ctx);
        return 1;
    }
    /* One thread drives both contexts: wait on the input, keep the output's completions and
     * timers going. An application with an event loop would put both fds in it. */
    while (!stop && r.relayed + r.failed < count) {
        if (rdps_ctx_wait(in_ctx, 10) < 0 || rdps_ctx_poll(r.out_ctx, 0) < 0)
            break;
    }
    /* Let the last datagrams leave before the output context goes. */
    for (int i = 0; i < 100 && rdps_ctx_sends_pending(r.out_ctx) > 0; i++)
        rdps_ctx_wait(r.out_ctx, 1);
    printf("relayed %llu messages from %s to %s (%llu refused)\n", (unsigned long long)r.relayed,
           argv[1], argv[2], (unsigned long long)r.failed);
    rdps_ctx_destroy(in_ctx);
    rdps_ctx_destroy(r.out_ctx);
    return r.failed == 0 ? 0 : 1;
}
