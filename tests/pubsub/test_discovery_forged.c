/* SPDX-License-Identifier: BSD-2-Clause */
/* test_discovery_forged.c - a forging group member against discovery, through the public API over
 * the loopback transport: forged leaves and updates, and a flood of foreign topics. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "discovery.h"
#include "pubsub_test_util.h"

/*
 * The forger is a bare loopback endpoint in the discovery group: it sniffs
 * the announcements of the real endpoints and sends its own from its own QP
 * (as any host on the VLAN can).
 */
struct fixture {
    struct rdps_loopback_fabric *fabric;
    rdps_ctx_t *a, *b;
    struct rdps_transport *forger;
    const struct rdps_dest *control;
    struct rdps_announce sniffed[16];
    unsigned sniffed_count;
};

struct events {
    unsigned seen, gone;         /* a's subscriber: b's publisher */
    unsigned sub_seen, sub_gone; /* a's publisher: b's subscriber */
};

static void on_event(void *user, const rdps_event *ev)
{
    struct events *e = user;
    if (ev->type == RDPS_EVENT_PUBLISHER_SEEN)
        e->seen++;
    if (ev->type == RDPS_EVENT_PUBLISHER_GONE)
        e->gone++;
    if (ev->type == RDPS_EVENT_SUBSCRIBER_SEEN)
        e->sub_seen++;
    if (ev->type == RDPS_EVENT_SUBSCRIBER_GONE)
        e->sub_gone++;
}

static void on_message(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    (void)user, (void)data, (void)len, (void)info;
}

/* Receives what reached the forger, keeping the announcements it can decode. */
static void forger_drain(struct fixture *f)
{
    struct rdps_rx_datagram rx[32];
    int n;
    while ((n = f->forger->ops->poll(f->forger, rx, 32)) > 0) {
        for (int i = 0; i < n; i++) {
            struct rdps_frame_view v;
            struct rdps_announce a;
            if (rdps__frame_decode(rx[i].data, rx[i].len, NULL, &v) != RDPS_FRAME_OK ||
                v.hdr.type != RDPS_FRAME_ANNOUNCE ||
                rdps__announce_decode(v.payload, v.payload_len, &a) != 0)
                continue;
            if (f->sniffed_count < 16)
                f->sniffed[f->sniffed_count++] = a;
        }
        f->forger->ops->rx_release(f->forger, rx, n);
    }
}

static void pump(struct fixture *f, int rounds)
{
    for (int i = 0; i < rounds; i++) {
        assert_true(rdps_ctx_poll(f->a, 0) >= 0);
        assert_true(rdps_ctx_poll(f->b, 0) >= 0);
        forger_drain(f);
    }
}

static void forger_send(struct fixture *f, const struct rdps_announce *a)
{
    uint8_t body[RDPS_ANNOUNCE_MAX_BYTES];
    struct rdps_tx_buf buf;
    int len = rdps__announce_encode(a, body, sizeof(body));
    assert_true(len > 0);
    while (f->forger->ops->claim(f->forger, &buf) == RDPS_EAGAIN)
        pump(f, 1);
    int n = rdps__frame_encode_announce(buf.data, buf.capacity, a->session_id, a->topic_id, 1, body,
                                        (size_t)len, 0);
    assert_true(n > 0);
    assert_int_equal(f->forger->ops->submit(f->forger, &buf, (uint32_t)n, &f->control, 1), 0);
    assert_int_equal(f->forger->ops->flush(f->forger), 0);
}

/* The last sniffed announcement of b's endpoint of (role, topic). */
static struct rdps_announce sniffed(struct fixture *f, enum rdps_announce_role role,
                                    const char *topic)
{
    for (unsigned i = f->sniffed_count; i-- > 0;)
        if (f->sniffed[i].role == role && strcmp(f->sniffed[i].topic, topic) == 0 &&
            f->sniffed[i].qpn == rdps__ctx_of_handle(f->b)->self_qpn)
            return f->sniffed[i];
    fail_msg("no announcement of %s seen", topic);
    struct rdps_announce none = {0};
    return none;
}

/*
 * a's timers run every 50 ms (so expiry is checked often); b announces every 10 s, so its
 * endpoints live 30 s for a unless someone shortens that.
 */
static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    uint32_t control;
    rdps_config cfg;
    rdps_config_init(&cfg);
    assert_int_equal(rdps__loopback_fabric_create(&f->fabric), 0);
    cfg.announce_interval_ms = 50;
    assert_int_equal(test_loopback_ctx(f->fabric, &cfg, 0, &f->a), 0);
    cfg.announce_interval_ms = 10000;
    assert_int_equal(test_loopback_ctx(f->fabric, &cfg, 0, &f->b), 0);
    struct rdps_loopback_config lc = {.max_payload = LOOPBACK_MAX_DATAGRAM, .recv_slots = 256};
    assert_int_equal(rdps__loopback_create(f->fabric, &lc, &f->forger), 0);
    assert_int_equal(rdps__mcast_addr_parse("239.192.0.1", &control), 0);
    assert_int_equal(rdps__loopback_join(f->forger, control), 0);
    assert_int_equal(rdps__loopback_group_dest(f->fabric, control, &f->control), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    rdps_ctx_destroy(f->a);
    rdps_ctx_destroy(f->b);
    f->forger->ops->destroy(f->forger);
    rdps__loopback_fabric_destroy(f->fabric);
    free(f);
    return 0;
}

/* a subscribes and publishes "disc", b publishes and subscribes: both know each other. */
static void meet(struct fixture *f, struct events *ev, rdps_pub_t **pub_a, rdps_sub_t **sub_a,
                 rdps_pub_t **pub_b, rdps_sub_t **sub_b)
{
    rdps_sub_opts opts = {.on_event = on_event};
    rdps_pub_opts popts = {.on_event = on_event, .event_user = ev};
    assert_int_equal(rdps_sub_create(f->a, "disc", on_message, ev, &opts, sub_a), 0);
    assert_int_equal(rdps_pub_create(f->a, "disc", &popts, pub_a), 0);
    assert_int_equal(rdps_pub_create(f->b, "disc", NULL, pub_b), 0);
    assert_int_equal(rdps_sub_create(f->b, "disc", on_message, NULL, NULL, sub_b), 0);
    pump(f, 3);
    assert_int_equal(ev->seen, 1);                          /* b's publisher */
    assert_int_equal(ev->sub_seen, 1);                      /* b's subscriber (a's is local) */
    assert_int_equal(rdps_pub_subscriber_count(*pub_a), 2); /* a's own and b's */
}

/* Issue 7 row 5: a `leaving` forged from another host drops nothing and raises nothing. */
static void test_forged_leave_is_refused(void **state)
{
    struct fixture *f = *state;
    struct events ev = {0};
    rdps_pub_t *pub_a, *pub_b;
    rdps_sub_t *sub_a, *sub_b;
    meet(f, &ev, &pub_a, &sub_a, &pub_b, &sub_b);

    struct rdps_announce pub = sniffed(f, RDPS_ROLE_PUBLISHER, "disc");
    struct rdps_announce sub = sniffed(f, RDPS_ROLE_SUBSCRIBER, "disc");
    pub.leaving = sub.leaving = true;
    forger_send(f, &pub);
    forger_send(f, &sub);
    pump(f, 3);
    assert_int_equal(ev.gone, 0);
    assert_int_equal(ev.sub_gone, 0);
    assert_int_equal(rdps_pub_subscriber_count(pub_a), 2);

    rdps_pub_destroy(pub_b); /* the real leaves still work */
    rdps_sub_destroy(sub_b);
    pump(f, 3);
    assert_int_equal(ev.gone, 1);
    assert_int_equal(ev.sub_gone, 1);
}

/* Issue 7 row 5: an update forged from another host does not shorten the real peer's life. */
static void test_forged_short_interval_is_not_the_real_peers(void **state)
{
    struct fixture *f = *state;
    struct events ev = {0};
    rdps_pub_t *pub_a, *pub_b;
    rdps_sub_t *sub_a, *sub_b;
    meet(f, &ev, &pub_a, &sub_a, &pub_b, &sub_b);

    struct rdps_announce pub = sniffed(f, RDPS_ROLE_PUBLISHER, "disc");
    struct rdps_announce sub = sniffed(f, RDPS_ROLE_SUBSCRIBER, "disc");
    pub.interval_ms = sub.interval_ms = 1; /* clamped, and only the forger's own entry */
    forger_send(f, &pub);
    forger_send(f, &sub);
    pump(f, 1);
    struct timespec pause = {0, 150 * 1000000L}; /* far beyond 3 x the forged interval */
    nanosleep(&pause, NULL);
    pump(f, 3);
    /* b's publisher is still live for a (the forger's own entry may have come and gone). */
    assert_int_equal(ev.seen - ev.gone, 1);
    assert_int_equal(ev.sub_seen - ev.sub_gone, 1);
    assert_int_equal(rdps_pub_subscriber_count(pub_a), 2);
}

/* Issue 7 row 1: 20 000 announcements of foreign topics do not grow a's memory. */
static void test_flood_of_foreign_topics_is_bounded(void **state)
{
    struct fixture *f = *state;
    struct events ev = {0};
    rdps_pub_t *pub_a, *pub_b;
    rdps_sub_t *sub_a, *sub_b;
    meet(f, &ev, &pub_a, &sub_a, &pub_b, &sub_b);

    struct rdps_announce a = sniffed(f, RDPS_ROLE_SUBSCRIBER, "disc");
    struct mallinfo2 before = mallinfo2();
    for (uint32_t i = 0; i < 20000; i++) {
        snprintf(a.topic, sizeof(a.topic), "forged.%u", i);
        a.topic_id = rdps__topic_hash_id(a.topic);
        a.session_id = 0x40000000u + i;
        a.interval_ms = 60000;
        forger_send(f, &a);
        if (i % 32 == 31)
            pump(f, 1);
    }
    pump(f, 3);
    struct mallinfo2 after = mallinfo2();
    size_t grown = after.uordblks > before.uordblks ? after.uordblks - before.uordblks : 0;
    printf("heap grew by %zu bytes over 20000 forged announcements\n", grown);
    assert_true(grown < 512 * 1024);
    assert_int_equal(rdps_pub_subscriber_count(pub_a), 2);
    assert_int_equal(ev.seen - ev.gone, 1);
    assert_int_equal(ev.sub_seen, 1); /* foreign topics raise nothing */
    assert_int_equal(ev.sub_gone, 0);
}

/* Two names with the same 64-bit topic id (tests/pubsub/test_topic.c tells how they were found). */
#define COLLIDING_A "md.quotes.8MlN5CIm0nE"
#define COLLIDING_B "md.quotes.DceKDt0TJc6"

struct collisions {
    unsigned count, others; /* TOPIC_COLLISION events; events of other types */
    char topic[RDPS_TOPIC_NAME_MAX + 1], other[RDPS_TOPIC_NAME_MAX + 1];
    rdps_source source;
};

static void on_collision(void *user, const rdps_event *ev)
{
    struct collisions *c = user;
    if (ev->type != RDPS_EVENT_TOPIC_COLLISION) {
        c->others++;
        assert_null(ev->other_topic);
        return;
    }
    c->count++;
    assert_non_null(ev->other_topic);
    snprintf(c->topic, sizeof(c->topic), "%s", ev->topic);
    snprintf(c->other, sizeof(c->other), "%s", ev->other_topic);
    c->source = ev->source;
}

static uint64_t collision_counter(rdps_ctx_t *ctx)
{
    rdps_counters c;
    assert_int_equal(rdps_ctx_counters(ctx, &c), 0);
    return c.topic_collisions;
}

/* An announcement of the forger's, as a host would send it. */
static struct rdps_announce forger_announce(struct fixture *f, enum rdps_announce_role role,
                                            const char *topic, uint32_t session)
{
    struct rdps_announce a;
    memset(&a, 0, sizeof(a));
    a.role = role;
    snprintf(a.topic, sizeof(a.topic), "%s", topic);
    a.topic_id = rdps__topic_hash_id(a.topic);
    a.group = 0xefc00042u;
    a.session_id = session;
    a.qpn = rdps__loopback_qpn(f->forger);
    a.interval_ms = 10000;
    return a;
}

/*
 * Issue 27 row 2: a host announces another name with the id of a's topic. a's subscriber and
 * publisher of that topic each hear it once (with the other name and the announcer), the
 * counter says 1; repeats, the announcer's other endpoints of that name and announcements of
 * a's own name add nothing; a name whose id is not its own is refused by the decoder.
 */
static void test_announced_name_with_our_id_is_a_collision(void **state)
{
    struct fixture *f = *state;
    struct collisions at_sub = {0}, at_pub = {0};
    rdps_sub_opts sopts = {.on_event = on_collision};
    rdps_pub_opts popts = {.on_event = on_collision, .event_user = &at_pub};
    rdps_sub_t *sub;
    rdps_pub_t *pub;
    assert_int_equal(rdps_sub_create(f->a, COLLIDING_A, on_message, &at_sub, &sopts, &sub), 0);
    assert_int_equal(rdps_pub_create(f->a, COLLIDING_A, &popts, &pub), 0);
    pump(f, 3);
    assert_int_equal(collision_counter(f->a), 0);

    struct rdps_announce other = forger_announce(f, RDPS_ROLE_PUBLISHER, COLLIDING_B, 0x51);
    assert_true(other.topic_id == rdps_topic_id(COLLIDING_A));
    forger_send(f, &other);
    pump(f, 2);
    assert_int_equal(collision_counter(f->a), 1);
    assert_int_equal(at_sub.count, 1);
    assert_int_equal(at_pub.count, 1);
    assert_string_equal(at_sub.topic, COLLIDING_A);
    assert_string_equal(at_sub.other, COLLIDING_B);
    assert_string_equal(at_pub.other, COLLIDING_B);
    assert_int_equal(at_sub.source.qpn, rdps__loopback_qpn(f->forger));
    rdps_counters c;
    assert_int_equal(rdps_sub_counters(sub, &c), 0);
    assert_int_equal(c.topic_collisions, 1); /* the ctx's count, seen from its endpoints */

    /* Repeats, and the same host's subscriber of that name: nothing more. */
    for (int i = 0; i < 5; i++)
        forger_send(f, &other);
    struct rdps_announce other_sub = forger_announce(f, RDPS_ROLE_SUBSCRIBER, COLLIDING_B, 0x52);
    forger_send(f, &other_sub);
    pump(f, 2);
    /* a's own name from the same host: a publisher of a's topic, no collision. */
    struct rdps_announce same = forger_announce(f, RDPS_ROLE_PUBLISHER, COLLIDING_A, 0x53);
    forger_send(f, &same);
    pump(f, 2);
    assert_int_equal(at_sub.count, 1);
    assert_int_equal(at_pub.count, 1);
    assert_int_equal(collision_counter(f->a), 1);
    assert_int_equal(at_sub.others, 1); /* PUBLISHER_SEEN of the forger's COLLIDING_A */

    /* Any other name claiming a's id: the decoder refuses it (the id must be the name's). */
    rdps_ctx_counters(f->a, &c);
    uint64_t bad = c.bad_announces;
    struct rdps_announce liar = forger_announce(f, RDPS_ROLE_PUBLISHER, "md.quotes.liar", 0x54);
    liar.topic_id = rdps_topic_id(COLLIDING_A);
    forger_send(f, &liar);
    pump(f, 2);
    rdps_ctx_counters(f->a, &c);
    assert_int_equal(c.bad_announces, bad + 1);
    assert_int_equal(c.topic_collisions, 1);
    assert_int_equal(at_sub.count, 1);
    rdps_pub_destroy(pub);
    rdps_sub_destroy(sub);
}

/*
 * Both sides of a real collision: a publishes one name, b subscribes the other. Each hears of
 * the other's name through discovery (the frames themselves cannot be told apart).
 */
static void test_collision_seen_from_both_hosts(void **state)
{
    struct fixture *f = *state;
    struct collisions at_a = {0}, at_b = {0};
    rdps_pub_opts popts = {.on_event = on_collision, .event_user = &at_a};
    rdps_sub_opts sopts = {.on_event = on_collision};
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    assert_int_equal(rdps_pub_create(f->a, COLLIDING_A, &popts, &pub), 0);
    assert_int_equal(rdps_sub_create(f->b, COLLIDING_B, on_message, &at_b, &sopts, &sub), 0);
    /* b announces every 10 s: its first announcement goes out at creation; a announces every
     * 50 ms of real time. Pumped until both have heard (a loaded host may not run this test for
     * longer than an announce interval), for at most 5 s. */
    pump(f, 3);
    struct timespec pause = {0, 10 * 1000000L};
    for (int i = 0; i < 500 && (at_a.count == 0 || at_b.count == 0); i++) {
        nanosleep(&pause, NULL);
        pump(f, 3);
    }
    pump(f, 3); /* and a while longer: a second report would show here */
    assert_int_equal(at_a.count, 1);
    assert_string_equal(at_a.other, COLLIDING_B);
    assert_int_equal(at_b.count, 1);
    assert_string_equal(at_b.other, COLLIDING_A);
    assert_int_equal(collision_counter(f->a), 1);
    assert_int_equal(collision_counter(f->b), 1);
    rdps_pub_destroy(pub);
    rdps_sub_destroy(sub);
}

/* The application reacts to PUBLISHER_GONE by closing its subscriber and opening another. */
struct reacting {
    rdps_ctx_t *ctx;
    rdps_sub_t *sub, *replacement;
    unsigned gone;
};

static void on_event_reacting(void *user, const rdps_event *ev)
{
    struct reacting *r = user;
    if (ev->type != RDPS_EVENT_PUBLISHER_GONE || r->sub == NULL)
        return;
    r->gone++;
    rdps_sub_destroy(r->sub);
    r->sub = NULL;
    assert_int_equal(rdps_sub_create(r->ctx, "disc.next", on_message, NULL, NULL, &r->replacement),
                     0);
}

static void test_gone_callback_may_close_and_open_endpoints(void **state)
{
    struct fixture *f = *state;
    struct reacting r = {.ctx = f->a};
    rdps_pub_t *pub_b;
    rdps_sub_opts opts = {.on_event = on_event_reacting};
    assert_int_equal(rdps_sub_create(f->a, "disc", on_message, &r, &opts, &r.sub), 0);
    assert_int_equal(rdps_pub_create(f->b, "disc", NULL, &pub_b), 0);
    pump(f, 3);
    rdps_pub_destroy(pub_b);
    pump(f, 3);
    assert_int_equal(r.gone, 1);
    assert_non_null(r.replacement);
    assert_int_equal(rdps_sub_ready(r.replacement), 1); /* joined: the loopback joins at once */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_forged_leave_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forged_short_interval_is_not_the_real_peers, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_flood_of_foreign_topics_is_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gone_callback_may_close_and_open_endpoints, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_announced_name_with_our_id_is_a_collision, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_collision_seen_from_both_hosts, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
