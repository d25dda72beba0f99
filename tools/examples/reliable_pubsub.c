/* SPDX-License-Identifier: BSD-2-Clause */
/* reliable_pubsub.c - reliable publish/subscribe: in-order, exactly-once delivery or an explicit
 * loss event, back-pressure handled by waiting, and a publisher that lets its receivers catch
 * up before it leaves. */
#include <rdps/rdps.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * usage: reliable_pubsub pub|sub|both [COUNT]
 *   pub   publish COUNT orders on md.orders (waits for a subscriber)
 *   sub   receive them; exit 0 when all COUNT arrived in order with no loss
 *   both  both roles in this process (a thread each, on the in-process device when
 *         RDPS_DEVICE=loopback), the subscriber's ctx dropping 5 % of the data frames it
 *         receives so that repairs are seen
 */

#define TOPIC "md.orders"

struct order {
    uint64_t index;
    char text[56];
};

struct subscriber {
    uint64_t expected, received, lost;
};

static void on_order(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct subscriber *s = user;
    struct order o;
    if (len != sizeof(o))
        return;
    memcpy(&o, data, sizeof(o)); /* `data` is valid only during the call */
    if (o.index != s->expected)  /* cannot happen: delivery is in order, or a loss event */
        fprintf(stderr, "sub: order %llu where %llu was next\n", (unsigned long long)o.index,
                (unsigned long long)s->expected);
    s->expected = o.index + 1;
    s->received++;
    (void)info;
}

/* Subscriber events: a gap that could not be repaired is reported, never skipped silently. */
static void on_sub_event(void *user, const rdps_event *ev)
{
    struct subscriber *s = user;
    if (ev->type == RDPS_EVENT_LOSS) {
        /* Datagrams [first_seq, first_seq + count) of the session are gone; delivery goes on
         * after them. A feed would resynchronize here (e.g. ask for a snapshot). */
        s->lost += ev->count;
        fprintf(stderr, "sub: %u datagrams lost (%s)\n", ev->count, rdps_event_reason_name(ev));
    } else {
        fprintf(stderr, "sub: %s\n", rdps_event_name(ev->type));
    }
}

/* Publisher events: subscribers arriving and leaving, receivers evicted from flow control. */
static void on_pub_event(void *user, const rdps_event *ev)
{
    (void)user;
    fprintf(stderr, "pub: %s receiver %08x %s\n", rdps_event_name(ev->type), ev->receiver_id,
            rdps_event_reason_name(ev));
}

static int open_ctx(double loss, rdps_ctx_t **ctx)
{
    rdps_config cfg;
    rdps_config_init(&cfg);  /* RDPS_DEVICE picks the device, "loopback" for none */
    cfg.loss_rx_rate = loss; /* the built-in loss generator: for tests and demos only */
    int rc = rdps_ctx_create(&cfg, ctx);
    if (rc < 0)
        fprintf(stderr, "rdps_ctx_create: %s\n", rdps_last_error_message());
    return rc;
}

static int publish(uint64_t count)
{
    rdps_ctx_t *ctx;
    rdps_pub_t *pub;
    /* RDPS_FLOW_MIN: the slowest live receiver sets the pace (one that stalls 2 s is evicted). */
    rdps_pub_opts opts = {.reliable = 1, .flow = RDPS_FLOW_MIN, .on_event = on_pub_event};
    if (open_ctx(0.0, &ctx) < 0)
        return 1;
    if (rdps_pub_create(ctx, TOPIC, &opts, &pub) < 0) {
        fprintf(stderr, "rdps_pub_create: %s\n", rdps_last_error_message());
        rdps_ctx_destroy(ctx);
        return 1;
    }
    /* Unlike a feed, this example waits for its first subscriber before it starts. */
    while (rdps_pub_subscriber_count(pub) == 0)
        rdps_ctx_wait(ctx, 100);

    int rc = 0;
    for (uint64_t i = 0; i < count && rc == 0; i++) {
        struct order o = {.index = i};
        snprintf(o.text, sizeof(o.text), "order %llu", (unsigned long long)i);
        /* RDPS_EAGAIN: the ring or the flow-control window is full and nothing was sent.
         * Wait for STATUS and completions rather than spin. */
        while ((rc = rdps_pub_send(pub, &o, sizeof(o))) == RDPS_EAGAIN)
            rdps_ctx_wait(ctx, 1);
    }
    if (rc < 0)
        fprintf(stderr, "rdps_pub_send: %s\n", rdps_strerror(rc));
    /* The ring holds what receivers may still ask for: let them catch up before leaving. */
    for (int i = 0; i < 5000 && rdps_pub_receivers_behind(pub) > 0; i++)
        rdps_ctx_wait(ctx, 1);
    rdps_ctx_destroy(ctx);
    return rc < 0 ? 1 : 0;
}

static int subscribe(uint64_t count, double loss)
{
    rdps_ctx_t *ctx;
    rdps_sub_t *sub;
    struct subscriber s = {0};
    rdps_sub_opts opts = {.reliable = 1, .on_event = on_sub_event, .event_user = &s};
    if (open_ctx(loss, &ctx) < 0)
        return 1;
    if (rdps_sub_create(ctx, TOPIC, on_order, &s, &opts, &sub) < 0) {
        fprintf(stderr, "rdps_sub_create: %s\n", rdps_last_error_message());
        rdps_ctx_destroy(ctx);
        return 1;
    }
    for (int idle = 0; s.received + s.lost < count && idle < 10000; idle++) {
        uint64_t before = s.received;
        if (rdps_ctx_wait(ctx, 1) < 0)
            break;
        if (s.received != before)
            idle = 0;
    }
    rdps_counters c;
    rdps_sub_counters(sub, &c);
    printf("sub: %llu of %llu orders in order, %llu datagrams lost, %llu repaired\n",
           (unsigned long long)s.received, (unsigned long long)count, (unsigned long long)s.lost,
           (unsigned long long)c.recovered);
    rdps_ctx_destroy(ctx);
    return s.received == count ? 0 : 1;
}

struct both_arg {
    uint64_t count;
    int rc;
};

static void *subscriber_thread(void *p)
{
    struct both_arg *arg = p;
    arg->rc = subscribe(arg->count, 0.05);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *role = argc > 1 ? argv[1] : "";
    uint64_t count = argc > 2 ? strtoull(argv[2], NULL, 10) : 10000;
    if (strcmp(role, "pub") == 0)
        return publish(count);
    if (strcmp(role, "sub") == 0)
        return subscribe(count, 0.0);
    if (strcmp(role, "both") == 0) {
        /* A ctx belongs to one thread: each role gets its own ctx and thread. */
        struct both_arg arg = {.count = count};
        pthread_t thread;
        if (pthread_create(&thread, NULL, subscriber_thread, &arg) != 0)
            return 1;
        int rc = publish(count);
        pthread_join(thread, NULL);
        return rc != 0 ? rc : arg.rc;
    }
    fprintf(stderr, "Usage: reliable_pubsub pub|sub|both [COUNT]\n");
    return 2;
}
