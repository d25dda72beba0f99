/* SPDX-License-Identifier: BSD-2-Clause */
/* test_unicast.c - topics without multicast over the loopback fabric: unicast fan-out as one
 * chain per datagram, mixed topics delivered once, seed peers and their lists on a fabric that
 * drops multicast, auto's fallbacks, subscribers leaving or going silent, reliable delivery over
 * unicast with loss, forged subscribers, and the options' rules. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pubsub_test_util.h"
#include "script_transport.h"

#define MS      1000000ull
#define NCTX    5
#define TOPIC   "uni.t"
#define PAYLOAD 100

/* ---- a transport that counts what is submitted (wraps a loopback endpoint) ---- */

struct counting {
    struct rdps_transport base; /* base.inner: the loopback endpoint */
    uint64_t submits, submit_mems, dests, max_ndest;
};

static struct counting *to_counting(struct rdps_transport *t)
{
    return (struct counting *)t;
}

static uint32_t c_max_payload(struct rdps_transport *t)
{
    return t->inner->ops->max_payload(t->inner);
}
static int c_claim(struct rdps_transport *t, struct rdps_tx_buf *buf)
{
    return t->inner->ops->claim(t->inner, buf);
}
static void c_abort(struct rdps_transport *t, struct rdps_tx_buf *buf)
{
    t->inner->ops->abort(t->inner, buf);
}
static int c_submit(struct rdps_transport *t, struct rdps_tx_buf *buf, uint32_t len,
                    const struct rdps_dest *const *dests, unsigned ndest)
{
    struct counting *c = to_counting(t);
    /* Count DATA frames only: announcements and peer lists are not the fan-out. */
    if (len >= RDPS_FRAME_HEADER_LEN && buf->data[RDPS_FRAME_OFF_TYPE] == RDPS_FRAME_DATA) {
        c->submits++;
        c->dests += ndest;
        if (ndest > c->max_ndest)
            c->max_ndest = ndest;
    }
    return t->inner->ops->submit(t->inner, buf, len, dests, ndest);
}
static int c_flush(struct rdps_transport *t)
{
    return t->inner->ops->flush(t->inner);
}
static int c_poll(struct rdps_transport *t, struct rdps_rx_datagram *rx, int max)
{
    return t->inner->ops->poll(t->inner, rx, max);
}
static void c_rx_release(struct rdps_transport *t, struct rdps_rx_datagram *rx, int count)
{
    t->inner->ops->rx_release(t->inner, rx, count);
}
static int c_reply_dest(struct rdps_transport *t, const struct rdps_rx_datagram *rx,
                        const struct rdps_dest **out)
{
    return t->inner->ops->reply_dest(t->inner, rx, out);
}
static int c_source_dest(struct rdps_transport *t, const struct rdps_source *src,
                         const struct rdps_dest **out)
{
    return rdps__transport_source_dest(t->inner, src, out);
}
static int c_dest_acquire(struct rdps_transport *t, const struct rdps_source *src,
                          const struct rdps_dest **out)
{
    return rdps__transport_dest_acquire(t->inner, src, out);
}
static void c_dest_release(struct rdps_transport *t, const struct rdps_dest *dest)
{
    rdps__transport_dest_release(t->inner, dest);
}
static uint32_t c_send_room(struct rdps_transport *t)
{
    return rdps__transport_send_room(t->inner);
}
static int c_mem_register(struct rdps_transport *t, void *addr, size_t len,
                          struct rdps_tx_mem **out)
{
    return rdps__transport_mem_register(t->inner, addr, len, out);
}
static int c_mem_deregister(struct rdps_transport *t, struct rdps_tx_mem *m)
{
    return rdps__transport_mem_deregister(t->inner, m);
}
static int c_submit_mem(struct rdps_transport *t, struct rdps_tx_mem *m, size_t offset,
                        uint32_t len, const struct rdps_dest *const *dests, unsigned ndest,
                        uint64_t cookie)
{
    struct counting *c = to_counting(t);
    if (m->addr[offset + RDPS_FRAME_OFF_TYPE] == RDPS_FRAME_DATA) {
        c->submit_mems++;
        c->dests += ndest;
        if (ndest > c->max_ndest)
            c->max_ndest = ndest;
    }
    return rdps__transport_submit_mem(t->inner, m, offset, len, dests, ndest, cookie);
}
static int c_event_fd(struct rdps_transport *t)
{
    return t->inner->ops->event_fd(t->inner);
}
static int c_arm(struct rdps_transport *t)
{
    return t->inner->ops->arm(t->inner);
}
static int c_next_event(struct rdps_transport *t, enum rdps_transport_event_type *type)
{
    return t->inner->ops->next_event(t->inner, type);
}
static void c_get_stats(const struct rdps_transport *t, struct rdps_transport_stats *out)
{
    t->inner->ops->get_stats(t->inner, out);
}
static void c_destroy(struct rdps_transport *t)
{
    t->inner->ops->destroy(t->inner);
    free(t);
}

static const struct rdps_transport_ops counting_ops = {
    .name = "counting",
    .max_payload = c_max_payload,
    .claim = c_claim,
    .abort = c_abort,
    .submit = c_submit,
    .flush = c_flush,
    .poll = c_poll,
    .rx_release = c_rx_release,
    .reply_dest = c_reply_dest,
    .source_dest = c_source_dest,
    .dest_acquire = c_dest_acquire,
    .dest_release = c_dest_release,
    .send_room = c_send_room,
    .mem_register = c_mem_register,
    .mem_deregister = c_mem_deregister,
    .submit_mem = c_submit_mem,
    .event_fd = c_event_fd,
    .arm = c_arm,
    .next_event = c_next_event,
    .get_stats = c_get_stats,
    .destroy = c_destroy,
};

/* ---- fixture: up to NCTX contexts on one fabric and one fake clock ---- */

struct fixture {
    struct rdps_loopback_fabric *fabric;
    rdps_ctx_t *ctx[NCTX];
    struct counting *counting[NCTX]; /* the wrapper of a ctx opened with open_counting */
    bool silent[NCTX];               /* not polled (a process that hangs or died) */
    uint64_t now;
    char seed[32]; /* ctx 0's address as a seed ("127.77.0.N") */
};

static uint64_t clock_of(void *user)
{
    return *(const uint64_t *)user;
}

static void base_config(rdps_config *cfg)
{
    rdps_config_init(cfg);
    cfg->announce_interval_ms = 100;
    cfg->multicast_timeout_ms = 300;
    cfg->peers = "";
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    assert_int_equal(rdps__loopback_fabric_create(&f->fabric), 0);
    f->now = 1000 * MS;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    for (int i = 0; i < NCTX; i++)
        rdps_ctx_destroy(f->ctx[i]);
    rdps__loopback_fabric_destroy(f->fabric);
    free(f);
    return 0;
}

static void finish_open(struct fixture *f, int i)
{
    rdps__ctx_set_clock(f->ctx[i], clock_of, &f->now);
    if (i == 0)
        snprintf(f->seed, sizeof(f->seed), "127.77.0.%u", rdps__ctx_of_handle(f->ctx[0])->self_qpn);
}

/* Opens ctx i with the fixture's config; seeded: with ctx 0 as its seed. */
static void open_ctx(struct fixture *f, int i, bool seeded)
{
    rdps_config cfg;
    base_config(&cfg);
    if (seeded)
        cfg.peers = f->seed;
    assert_int_equal(test_loopback_ctx(f->fabric, &cfg, 0, &f->ctx[i]), 0);
    finish_open(f, i);
}

/* The same over a counting wrapper. */
static void open_counting(struct fixture *f, int i, bool seeded)
{
    rdps_config cfg;
    base_config(&cfg);
    if (seeded)
        cfg.peers = f->seed;
    struct rdps_loopback_config lc = {
        .max_payload = LOOPBACK_MAX_DATAGRAM, .send_slots = 64, .recv_slots = 20000};
    struct rdps_transport *t;
    const struct rdps_membership_ops *ops;
    void *impl;
    assert_int_equal(rdps__loopback_create(f->fabric, &lc, &t), 0);
    assert_int_equal(rdps__membership_loopback_create(f->fabric, t, &ops, &impl), 0);
    uint32_t qpn = rdps__loopback_qpn(t), host = rdps__loopback_ipv4(t);
    uint8_t gid[16];
    rdps__loopback_gid(t, gid);
    struct counting *c = calloc(1, sizeof(*c));
    assert_non_null(c);
    c->base.ops = &counting_ops;
    c->base.inner = t;
    assert_int_equal(rdps__ctx_create_over(&cfg, &c->base, ops, impl, &f->ctx[i]), 0);
    rdps_ctx_t *ctx = rdps__ctx_of_handle(f->ctx[i]);
    ctx->self_qpn = qpn;
    memcpy(ctx->self_gid, gid, 16);
    ctx->has_self_gid = true;
    ctx->self_host = host;
    f->counting[i] = c;
    finish_open(f, i);
}

/* Polls every context that is not silent `rounds` times, the clock moving `step_ms` a round. */
static void pump(struct fixture *f, int rounds, uint64_t step_ms)
{
    for (int r = 0; r < rounds; r++) {
        f->now += step_ms * MS;
        for (int i = 0; i < NCTX; i++)
            if (f->ctx[i] != NULL && !f->silent[i])
                assert_true(rdps_ctx_poll(f->ctx[i], 0) >= 0);
    }
}

static void counters_of_pub(const rdps_pub_t *pub, rdps_counters *c)
{
    assert_int_equal(rdps_pub_counters(pub, c), 0);
}

static void counters_of_ctx(const rdps_ctx_t *ctx, rdps_counters *c)
{
    assert_int_equal(rdps_ctx_counters(ctx, c), 0);
}

static rdps_pub_t *pub_on(struct fixture *f, int i, const char *topic, rdps_transport_mode mode,
                          int reliable, rdps_event_cb on_event, void *user)
{
    rdps_pub_t *pub;
    rdps_pub_opts o = {
        .transport = mode, .reliable = reliable, .on_event = on_event, .event_user = user};
    assert_int_equal(rdps_pub_create(f->ctx[i], topic, &o, &pub), 0);
    return pub;
}

static rdps_sub_t *sub_on(struct fixture *f, int i, const char *topic, rdps_transport_mode mode,
                          int reliable, struct test_inbox *in, rdps_event_cb on_event,
                          void *event_user)
{
    rdps_sub_t *sub;
    rdps_sub_opts o = {
        .transport = mode, .reliable = reliable, .on_event = on_event, .event_user = event_user};
    assert_int_equal(rdps_sub_create(f->ctx[i], topic, test_inbox_on_message, in, &o, &sub), 0);
    return sub;
}

/* Pumps until the publisher knows `want` subscribers (at most `rounds` rounds of step_ms). */
static void await_subscribers(struct fixture *f, rdps_pub_t *pub, int want, int rounds,
                              uint64_t step_ms)
{
    for (int r = 0; r < rounds && rdps_pub_subscriber_count(pub) < want; r++)
        pump(f, 1, step_ms);
    assert_int_equal(rdps_pub_subscriber_count(pub), want);
}

/* Sends `count` indexed messages from index `first`, pumping through back-pressure. */
static void send_messages(struct fixture *f, rdps_pub_t *pub, uint32_t first, uint32_t count)
{
    uint8_t buf[PAYLOAD];
    for (uint32_t i = first; i < first + count; i++) {
        test_message_fill(buf, i, sizeof(buf));
        int rc;
        while ((rc = rdps_pub_send(pub, buf, sizeof(buf))) == RDPS_EAGAIN)
            pump(f, 1, 0);
        assert_int_equal(rc, 0);
        /* A sender that polls after each message sees each send complete: one datagram (one
         * unicast copy per subscriber) per message, as the counts below expect. */
        pump(f, 1, 0);
    }
    pump(f, 3, 0);
}

static uint32_t fanout_sources(const rdps_pub_t *pub)
{
    struct rdps_source src[8];
    return rdps__fanout_sources(rdps__pub_of_handle(pub)->topic, src, 8);
}

/* ---- events seen ---- */

struct events {
    unsigned fallbacks;
    int reason;
    unsigned other;
};

static void on_event(void *user, const rdps_event *ev)
{
    struct events *e = user;
    if (ev->type == RDPS_EVENT_UNICAST_FALLBACK) {
        e->fallbacks++;
        e->reason = ev->reason;
    } else {
        e->other++;
    }
}

/* ---- tests ---- */

/*
 * A unicast publisher and a unicast subscriber: both ready at once, neither joins the topic's
 * group; once discovery told the publisher, every message arrives once, each as one unicast copy.
 */
static void test_unicast_topic_delivers(void **state)
{
    struct fixture *f = *state;
    struct test_inbox in = {0};
    open_ctx(f, 0, false);
    open_ctx(f, 1, false);
    rdps_pub_t *pub = pub_on(f, 0, TOPIC, RDPS_TRANSPORT_UNICAST, 0, NULL, NULL);
    rdps_sub_t *sub = sub_on(f, 1, TOPIC, RDPS_TRANSPORT_UNICAST, 0, &in, NULL, NULL);
    assert_int_equal(rdps_pub_ready(pub), 1);
    assert_int_equal(rdps_sub_ready(sub), 1);
    assert_null(rdps__pub_of_handle(pub)->topic->send_membership);
    assert_null(rdps__sub_of_handle(sub)->topic->receive_membership);
    /* Before discovery told it, nobody gets the message (and nothing is posted). */
    uint8_t early[PAYLOAD];
    test_message_fill(early, 999, sizeof(early));
    assert_int_equal(rdps_pub_send(pub, early, sizeof(early)), 0);
    await_subscribers(f, pub, 1, 50, 10);
    assert_int_equal(fanout_sources(pub), 1);
    in.next_index = 0;
    in.count = 0;
    send_messages(f, pub, 0, 200);
    assert_int_equal(in.count, 200);
    assert_int_equal(in.out_of_order, 0);
    assert_int_equal(in.corrupt, 0);
    rdps_counters c;
    counters_of_pub(pub, &c);
    assert_int_equal(c.unicast_copies, 200);
    assert_int_equal(c.msgs_sent, 201);
    assert_int_equal(c.frames_sent, 200); /* the early message went nowhere */
}

/*
 * Three unicast subscribers (three contexts): each datagram goes to all three as one submit of
 * one buffer with three destinations (one work-request chain), unreliable and reliable (from the
 * ring) alike; a multi-datagram message is three copies of each of its datagrams.
 */
static void test_fanout_is_one_chain_per_datagram(void **state)
{
    struct fixture *f = *state;
    struct test_inbox in[3] = {{0}}, rin[3] = {{0}};
    open_counting(f, 0, false);
    for (int i = 1; i <= 3; i++)
        open_ctx(f, i, false);
    rdps_pub_t *pub = pub_on(f, 0, TOPIC, RDPS_TRANSPORT_UNICAST, 0, NULL, NULL);
    rdps_pub_t *rel = pub_on(f, 0, "uni.rel", RDPS_TRANSPORT_UNICAST, 1, NULL, NULL);
    for (int i = 1; i <= 3; i++) {
        sub_on(f, i, TOPIC, RDPS_TRANSPORT_UNICAST, 0, &in[i - 1], NULL, NULL);
        sub_on(f, i, "uni.rel", RDPS_TRANSPORT_UNICAST, 1, &rin[i - 1], NULL, NULL);
    }
    await_subscribers(f, pub, 3, 50, 10);
    await_subscribers(f, rel, 3, 50, 10);
    pump(f, 5, 10); /* the reliable receivers report */
    struct counting *c = f->counting[0];
    uint64_t submits = c->submits, dests = c->dests;
    send_messages(f, pub, 0, 100);
    /* Messages share datagrams while the send queue is short (batching): each one datagram, one
     * submit with three destinations. */
    uint64_t datagrams = c->submits - submits;
    assert_true(datagrams > 0 && datagrams <= 100);
    assert_int_equal(c->dests - dests, 3 * datagrams);
    assert_int_equal(c->max_ndest, 3);
    rdps_counters pc;
    counters_of_pub(pub, &pc);
    assert_int_equal(pc.frames_sent, datagrams);
    assert_int_equal(pc.unicast_copies, 3 * datagrams);
    assert_int_equal(pc.msgs_sent, 100);
    uint8_t big[3000];
    test_message_fill(big, 100, sizeof(big));
    assert_int_equal(rdps_ctx_flush(f->ctx[0]), 0);
    submits = c->submits;
    dests = c->dests;
    assert_int_equal(rdps_pub_send(pub, big, sizeof(big)), 0); /* 4 datagrams of 976 bytes */
    pump(f, 2, 0);
    assert_int_equal(c->submits - submits, 4);
    assert_int_equal(c->dests - dests, 12);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(in[i].count, 101);
        assert_int_equal(in[i].out_of_order, 0);
        assert_int_equal(in[i].last_len, sizeof(big));
    }
    uint64_t mems = c->submit_mems;
    dests = c->dests;
    send_messages(f, rel, 0, 100);
    while (rdps_pub_receivers_behind(rel) > 0)
        pump(f, 1, 1);
    assert_true(c->submit_mems - mems >= 100);
    assert_int_equal((c->dests - dests) % 3, 0); /* each new datagram or heartbeat: 3 copies */
    for (int i = 0; i < 3; i++) {
        assert_int_equal(rin[i].count, 100);
        assert_int_equal(rin[i].out_of_order, 0);
    }
    rdps_counters k;
    counters_of_pub(rel, &k);
    assert_true(k.unicast_copies >= 300);
}

/*
 * A mixed topic: one subscriber on the group, one by unicast, one by unicast in a ctx that is on
 * the topic's group anyway (another topic of its shares the group). Every message reaches each
 * exactly once; the publisher sends the group copy and one unicast copy per unicast ctx.
 */
static void test_mixed_topic_exactly_once(void **state)
{
    struct fixture *f = *state;
    struct test_inbox on_group = {0}, by_unicast = {0}, both = {0}, other = {0};
    for (int i = 0; i < 4; i++)
        open_ctx(f, i, false);
    rdps_pub_t *pub = pub_on(f, 0, TOPIC, RDPS_TRANSPORT_MULTICAST, 0, NULL, NULL);
    sub_on(f, 1, TOPIC, RDPS_TRANSPORT_MULTICAST, 0, &on_group, NULL, NULL);
    sub_on(f, 2, TOPIC, RDPS_TRANSPORT_UNICAST, 0, &by_unicast, NULL, NULL);
    char group[16];
    assert_int_equal(rdps_topic_group(f->ctx[3], TOPIC, group, sizeof(group)), 0);
    rdps_sub_t *o;
    rdps_sub_opts oo = {.group = group};
    assert_int_equal(
        rdps_sub_create(f->ctx[3], "uni.other", test_inbox_on_message, &other, &oo, &o), 0);
    sub_on(f, 3, TOPIC, RDPS_TRANSPORT_UNICAST, 0, &both, NULL, NULL);
    await_subscribers(f, pub, 3, 50, 10);
    send_messages(f, pub, 0, 300);
    assert_int_equal(on_group.count, 300);
    assert_int_equal(by_unicast.count, 300);
    assert_int_equal(both.count, 300);
    assert_int_equal(on_group.backwards + by_unicast.backwards + both.backwards, 0);
    assert_int_equal(other.count, 0);
    rdps_counters c;
    counters_of_pub(pub, &c);
    assert_int_equal(c.msgs_sent, 300);
    assert_int_equal(c.unicast_copies, 2 * c.frames_sent); /* ctx 2 and ctx 3, each datagram */
    uint64_t datagrams = c.frames_sent;
    counters_of_ctx(f->ctx[3], &c);
    /* The group's copy and the unicast one of each datagram: one delivered. */
    assert_true(c.duplicates >= datagrams);
}

/*
 * A fabric that drops multicast, discovery from one seed that has no endpoint of its own: the
 * others learn each other from its peer lists; a unicast topic works, a multicast one does not
 * (the negative control).
 */
static void test_seed_discovery_without_multicast(void **state)
{
    struct fixture *f = *state;
    struct test_inbox uni = {0}, neg = {0};
    rdps__loopback_fabric_set_multicast(f->fabric, RDPS_LOOPBACK_MCAST_DROP);
    open_ctx(f, 0, false); /* the seed and nothing more */
    for (int i = 1; i <= 3; i++)
        open_ctx(f, i, true);
    rdps_pub_t *pub = pub_on(f, 1, TOPIC, RDPS_TRANSPORT_UNICAST, 0, NULL, NULL);
    rdps_pub_t *mpub = pub_on(f, 1, "uni.neg", RDPS_TRANSPORT_MULTICAST, 0, NULL, NULL);
    sub_on(f, 2, TOPIC, RDPS_TRANSPORT_UNICAST, 0, &uni, NULL, NULL);
    sub_on(f, 3, "uni.neg", RDPS_TRANSPORT_MULTICAST, 0, &neg, NULL, NULL);
    /* Within a few announce intervals (100 ms) everyone talks to everyone. */
    pump(f, 30, 10);
    for (int i = 1; i <= 3; i++)
        assert_int_equal(rdps__peers_count(rdps__ctx_of_handle(f->ctx[i])), 3);
    assert_int_equal(rdps__peers_count(rdps__ctx_of_handle(f->ctx[0])), 3);
    await_subscribers(f, pub, 1, 10, 10);
    await_subscribers(f, mpub, 1, 10, 10);
    send_messages(f, pub, 0, 100);
    send_messages(f, mpub, 0, 100);
    assert_int_equal(uni.count, 100);
    assert_int_equal(neg.count, 0); /* the group carries nothing here */
    rdps_counters c;
    counters_of_ctx(f->ctx[1], &c);
    assert_true(c.contacts_sent > 0);
    assert_true(c.contacts_received > 0);
    assert_int_equal(c.unicast_fallbacks, 0);
}

/* Auto where joins never complete (an InfiniBand subnet without multicast): both sides fall back
 * after multicast_timeout_ms, with an event each; data then flows by unicast. */
static void test_auto_falls_back_when_joins_never_complete(void **state)
{
    struct fixture *f = *state;
    struct test_inbox in = {0};
    struct events pe = {0}, se = {0};
    rdps__loopback_fabric_set_multicast(f->fabric, RDPS_LOOPBACK_MCAST_NO_JOIN);
    open_ctx(f, 0, false);
    open_ctx(f, 1, true);
    rdps_pub_t *pub = pub_on(f, 0, TOPIC, RDPS_TRANSPORT_AUTO, 0, on_event, &pe);
    rdps_sub_t *sub = sub_on(f, 1, TOPIC, RDPS_TRANSPORT_AUTO, 0, &in, on_event, &se);
    pump(f, 20, 10); /* 200 ms: joining */
    assert_int_equal(rdps_pub_ready(pub), 0);
    assert_int_equal(rdps_sub_ready(sub), 0);
    assert_int_equal(pe.fallbacks + se.fallbacks, 0);
    pump(f, 20, 10);
    assert_int_equal(pe.fallbacks, 1);
    assert_int_equal(pe.reason, RDPS_FALLBACK_JOIN_TIMED_OUT);
    assert_int_equal(se.fallbacks, 1);
    assert_int_equal(se.reason, RDPS_FALLBACK_JOIN_TIMED_OUT);
    assert_int_equal(rdps_pub_ready(pub), 1);
    assert_int_equal(rdps_sub_ready(sub), 1);
    await_subscribers(f, pub, 1, 30, 10);
    send_messages(f, pub, 0, 100);
    assert_int_equal(in.count, 100);
    rdps_counters c;
    counters_of_ctx(f->ctx[0], &c);
    assert_int_equal(c.unicast_fallbacks, 1);
    counters_of_pub(pub, &c);
    assert_int_equal(c.unicast_copies, 100);
    pump(f, 50, 10);
    assert_int_equal(pe.fallbacks + se.fallbacks, 2); /* once per side, for good */
}

/* Auto where joins complete but the fabric drops group datagrams (RoCE without multicast
 * routing): peers are heard by unicast only, so both sides fall back (no_multicast); where
 * multicast works, auto stays on the group although peers are heard by unicast too. */
static void test_auto_falls_back_when_no_multicast_heard(void **state)
{
    struct fixture *f = *state;
    struct test_inbox in = {0}, in_ok = {0};
    struct events pe = {0}, se = {0}, ok = {0};
    rdps__loopback_fabric_set_multicast(f->fabric, RDPS_LOOPBACK_MCAST_DROP);
    open_ctx(f, 0, false);
    open_ctx(f, 1, true);
    rdps_pub_t *pub = pub_on(f, 0, TOPIC, RDPS_TRANSPORT_AUTO, 0, on_event, &pe);
    sub_on(f, 1, TOPIC, RDPS_TRANSPORT_AUTO, 0, &in, on_event, &se);
    pump(f, 5, 10);
    assert_int_equal(rdps_pub_ready(pub), 1); /* joined: the fabric says nothing */
    pump(f, 50, 10);
    assert_int_equal(pe.fallbacks, 1);
    assert_int_equal(pe.reason, RDPS_FALLBACK_NO_MULTICAST);
    assert_int_equal(se.fallbacks, 1);
    assert_int_equal(se.reason, RDPS_FALLBACK_NO_MULTICAST);
    await_subscribers(f, pub, 1, 30, 10);
    send_messages(f, pub, 0, 100);
    assert_int_equal(in.count, 100);

    /* The same with multicast: no fallback. */
    rdps_ctx_destroy(f->ctx[1]);
    rdps_ctx_destroy(f->ctx[0]);
    f->ctx[0] = f->ctx[1] = NULL;
    rdps__loopback_fabric_set_multicast(f->fabric, RDPS_LOOPBACK_MCAST_ON);
    open_ctx(f, 0, false);
    open_ctx(f, 1, true);
    rdps_pub_t *p2 = pub_on(f, 0, TOPIC, RDPS_TRANSPORT_AUTO, 0, on_event, &ok);
    sub_on(f, 1, TOPIC, RDPS_TRANSPORT_AUTO, 0, &in_ok, on_event, &ok);
    pump(f, 100, 10);
    assert_int_equal(ok.fallbacks, 0);
    await_subscribers(f, p2, 1, 10, 10);
    send_messages(f, p2, 0, 50);
    assert_int_equal(in_ok.count, 50);
    rdps_counters c;
    counters_of_pub(p2, &c);
    assert_int_equal(c.unicast_copies, 0); /* all through the group */
}

/*
 * Copies stop when a subscriber leaves (at once) or goes silent (after 3 of its announce
 * intervals): the fan-out holds only live subscribers.
 */
static void test_copies_stop_when_subscriber_leaves_or_goes_silent(void **state)
{
    struct fixture *f = *state;
    struct test_inbox a = {0}, b = {0};
    for (int i = 0; i < 3; i++)
        open_ctx(f, i, false);
    rdps_pub_t *pub = pub_on(f, 0, TOPIC, RDPS_TRANSPORT_UNICAST, 0, NULL, NULL);
    rdps_sub_t *leaving = sub_on(f, 1, TOPIC, RDPS_TRANSPORT_UNICAST, 0, &a, NULL, NULL);
    sub_on(f, 2, TOPIC, RDPS_TRANSPORT_UNICAST, 0, &b, NULL, NULL);
    await_subscribers(f, pub, 2, 50, 10);
    send_messages(f, pub, 0, 10);
    rdps_counters c;
    counters_of_pub(pub, &c);
    assert_int_equal(c.unicast_copies, 20);
    rdps_sub_destroy(leaving);
    pump(f, 2, 1);
    assert_int_equal(fanout_sources(pub), 1);
    send_messages(f, pub, 10, 10);
    counters_of_pub(pub, &c);
    assert_int_equal(c.unicast_copies, 30);
    assert_int_equal(b.count, 20);
    /* ctx 2 stops answering: after 3 x 100 ms its subscriber is gone, and so are its copies. */
    f->silent[2] = true;
    pump(f, 35, 10);
    assert_int_equal(rdps_pub_subscriber_count(pub), 0);
    assert_int_equal(fanout_sources(pub), 0);
    send_messages(f, pub, 20, 10);
    counters_of_pub(pub, &c);
    assert_int_equal(c.unicast_copies, 30);
}

/*
 * Reliable publishing over unicast on a fabric without multicast, found through a seed, with 10 %
 * of DATA and heartbeat frames lost at each subscriber (independently): every message in order,
 * exactly once, at each; repairs went to the askers.
 */
static void test_reliable_over_unicast_with_loss(void **state)
{
    struct fixture *f = *state;
    struct test_inbox in[2] = {{0}};
    rdps__loopback_fabric_set_multicast(f->fabric, RDPS_LOOPBACK_MCAST_DROP);
    open_ctx(f, 0, false);
    for (int i = 1; i <= 2; i++) {
        rdps_config cfg;
        base_config(&cfg);
        cfg.peers = f->seed;
        cfg.loss_rx_rate = 0.1;
        cfg.loss_seed = (uint64_t)i;
        cfg.loss_frame_types = (1u << RDPS_FRAME_DATA) | (1u << RDPS_FRAME_HEARTBEAT);
        assert_int_equal(test_loopback_ctx(f->fabric, &cfg, 0, &f->ctx[i]), 0);
        finish_open(f, i);
    }
    rdps_pub_t *pub;
    rdps_pub_opts po = {.transport = RDPS_TRANSPORT_UNICAST, .reliable = 1, .flow = RDPS_FLOW_MIN};
    assert_int_equal(rdps_pub_create(f->ctx[0], TOPIC, &po, &pub), 0);
    for (int i = 1; i <= 2; i++)
        sub_on(f, i, TOPIC, RDPS_TRANSPORT_UNICAST, 1, &in[i - 1], test_inbox_on_event, &in[i - 1]);
    await_subscribers(f, pub, 2, 100, 10);
    uint8_t buf[PAYLOAD];
    for (uint32_t i = 0; i < 1000; i++) {
        test_message_fill(buf, i, sizeof(buf));
        int rc;
        while ((rc = rdps_pub_send(pub, buf, sizeof(buf))) == RDPS_EAGAIN)
            pump(f, 1, 1);
        assert_int_equal(rc, 0);
        if (i % 8 == 7)
            pump(f, 1, 0);
    }
    for (int r = 0; r < 5000 && rdps_pub_receivers_behind(pub) > 0; r++)
        pump(f, 1, 1);
    assert_int_equal(rdps_pub_receivers_behind(pub), 0);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(in[i].count, 1000);
        assert_int_equal(in[i].out_of_order, 0);
        assert_int_equal(in[i].loss_events, 0);
        assert_int_equal(in[i].corrupt, 0);
        rdps_counters c;
        counters_of_ctx(f->ctx[i + 1], &c);
        assert_true(c.recovered > 0);
    }
    rdps_counters c;
    counters_of_pub(pub, &c);
    assert_true(c.retransmits > 0);
    counters_of_ctx(f->ctx[0], &c);
    assert_true(c.repairs_unicast > 0);
    /* Without a group a "multicast" repair would be a copy to every subscriber: askers only. */
    assert_int_equal(c.repairs_multicast, 0);
}

/* A late unicast subscriber hears the session from where it joined (reliable: live position);
 * one published before it was known is not resent to it. */
static void test_late_unicast_subscriber(void **state)
{
    struct fixture *f = *state;
    struct test_inbox early = {0}, late = {0};
    for (int i = 0; i < 3; i++)
        open_ctx(f, i, false);
    rdps_pub_t *pub = pub_on(f, 0, TOPIC, RDPS_TRANSPORT_UNICAST, 1, NULL, NULL);
    sub_on(f, 1, TOPIC, RDPS_TRANSPORT_UNICAST, 1, &early, NULL, NULL);
    await_subscribers(f, pub, 1, 50, 10);
    send_messages(f, pub, 0, 50);
    sub_on(f, 2, TOPIC, RDPS_TRANSPORT_UNICAST, 1, &late, NULL, NULL);
    await_subscribers(f, pub, 2, 50, 10);
    pump(f, 5, 10);
    late.next_index = 50;
    send_messages(f, pub, 50, 50);
    while (rdps_pub_receivers_behind(pub) > 0)
        pump(f, 1, 1);
    assert_int_equal(early.count, 100);
    assert_int_equal(late.count, 50);
    assert_int_equal(late.out_of_order, 0);
}

/* The options' rules: a value outside the enum, and a second mode for one topic and side in one
 * ctx, are refused; the two sides may differ. */
static void test_transport_option_rules(void **state)
{
    struct fixture *f = *state;
    struct test_inbox in = {0};
    open_ctx(f, 0, false);
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    rdps_pub_opts po = {.transport = (rdps_transport_mode)7};
    assert_int_equal(rdps_pub_create(f->ctx[0], TOPIC, &po, &pub), RDPS_EINVAL);
    assert_non_null(strstr(rdps_last_error_message(), "transport 7"));
    rdps_sub_opts so = {.transport = (rdps_transport_mode)-1};
    assert_int_equal(rdps_sub_create(f->ctx[0], TOPIC, test_inbox_on_message, &in, &so, &sub),
                     RDPS_EINVAL);
    pub_on(f, 0, TOPIC, RDPS_TRANSPORT_UNICAST, 0, NULL, NULL);
    po.transport = RDPS_TRANSPORT_MULTICAST;
    assert_int_equal(rdps_pub_create(f->ctx[0], TOPIC, &po, &pub), RDPS_EINVAL);
    assert_non_null(strstr(rdps_last_error_message(), "use transport unicast, not multicast"));
    pub_on(f, 0, TOPIC, RDPS_TRANSPORT_UNICAST, 0, NULL, NULL); /* the same mode: fine */
    sub_on(f, 0, TOPIC, RDPS_TRANSPORT_AUTO, 0, &in, NULL, NULL);
    so.transport = RDPS_TRANSPORT_UNICAST;
    assert_int_equal(rdps_sub_create(f->ctx[0], TOPIC, test_inbox_on_message, &in, &so, &sub),
                     RDPS_EINVAL);
    /* Malformed seeds are refused at create, naming the item. */
    rdps_config cfg;
    base_config(&cfg);
    cfg.peers = "10.0.0.1:7471, 10.0.0.x";
    rdps_ctx_t *bad;
    assert_int_equal(test_loopback_ctx(f->fabric, &cfg, 0, &bad), RDPS_EINVAL);
    assert_non_null(strstr(rdps_last_error_message(), "10.0.0.x"));
    cfg.peers = "10.0.0.1:0";
    assert_int_equal(test_loopback_ctx(f->fabric, &cfg, 0, &bad), RDPS_EINVAL);
    cfg.peers = "";
    cfg.max_unicast_subscribers = 4097; /* 0 keeps the default */
    assert_int_equal(test_loopback_ctx(f->fabric, &cfg, 0, &bad), RDPS_EINVAL);
}

/* ---- hostile: subscribers that do not speak for their own address ---- */

static uint64_t fake_now = 1000 * MS;
static uint64_t fake_clock(void *user)
{
    (void)user;
    return fake_now;
}

struct sent_to {
    unsigned to_a, to_b, other;
    struct rdps_source a, b;
};

static void record_sent(void *user, const struct rdps_source *to, const uint8_t *frame,
                        uint32_t len)
{
    struct sent_to *s = user;
    if (to == NULL || len < RDPS_FRAME_HEADER_LEN || frame[RDPS_FRAME_OFF_TYPE] != RDPS_FRAME_DATA)
        return;
    if (rdps__source_equal(to, &s->a))
        s->to_a++;
    else if (rdps__source_equal(to, &s->b))
        s->to_b++;
    else
        s->other++;
}

static void inject_subscriber(struct rdps_transport *t, const struct rdps_source *from,
                              uint32_t body_qpn, uint32_t session)
{
    struct rdps_announce a;
    memset(&a, 0, sizeof(a));
    a.role = RDPS_ROLE_SUBSCRIBER;
    strcpy(a.topic, TOPIC);
    a.topic_id = rdps__topic_hash_id(TOPIC);
    a.group = 0xefc00010u;
    a.session_id = session;
    a.qpn = body_qpn;
    memcpy(a.gid, from->gid, 16);
    a.interval_ms = 1000;
    a.unicast = true;
    uint8_t frame[RDPS_FRAME_HEADER_LEN + RDPS_ANNOUNCE_MAX_BYTES];
    int body = rdps__announce_encode(&a, frame + RDPS_FRAME_HEADER_LEN, RDPS_ANNOUNCE_MAX_BYTES);
    assert_true(body > 0);
    int len = rdps__frame_encode_announce(frame, sizeof(frame), session, a.topic_id, 0,
                                          frame + RDPS_FRAME_HEADER_LEN, (size_t)body, 1);
    assert_true(len > 0);
    assert_int_equal(script_transport_inject(t, from, frame, (uint32_t)len), 0);
}

/*
 * A subscriber announced from another address than its body names (anyone can announce in
 * another's name) gets no copies; one announced from its own address does. Past the per-host cap
 * (unicast_subscribers_per_host, 4 subscribing contexts on one host) more are refused and
 * counted.
 */
static void test_forged_subscribers_get_no_copies(void **state)
{
    (void)state;
    struct rdps_source self = {.qpn = 0x10, .has_gid = 1, .gid = {0xfe, 0x80, [15] = 1}};
    rdps_ctx_t *ctx;
    struct rdps_transport *t;
    rdps_config cfg;
    base_config(&cfg);
    assert_int_equal(script_ctx_create(&cfg, &self, fake_clock, NULL, &ctx, &t), 0);
    struct sent_to sent = {0};
    sent.a = (struct rdps_source){.qpn = 0x20, .has_gid = 1, .gid = {0xfe, 0x80, [15] = 2}};
    sent.b = (struct rdps_source){.qpn = 0x30, .has_gid = 1, .gid = {0xfe, 0x80, [15] = 3}};
    script_transport_on_sent(t, record_sent, &sent);
    rdps_pub_t *pub;
    rdps_pub_opts po = {.transport = RDPS_TRANSPORT_UNICAST};
    assert_int_equal(rdps_pub_create(ctx, TOPIC, &po, &pub), 0);
    inject_subscriber(t, &sent.a, 0x99, 7); /* names QPN 0x99, comes from 0x20 */
    inject_subscriber(t, &sent.b, 0x30, 8); /* its own address */
    assert_true(rdps_ctx_poll(ctx, 0) >= 0);
    assert_int_equal(rdps_pub_subscriber_count(pub), 2); /* discovery knows both ... */
    uint8_t msg[PAYLOAD] = {0};
    assert_int_equal(rdps_pub_send(pub, msg, sizeof(msg)), 0);
    assert_int_equal(sent.to_a, 0); /* ... only the addressed one gets copies */
    assert_int_equal(sent.to_b, 1);
    assert_int_equal(sent.other, 0);
    rdps_counters c;
    counters_of_ctx(ctx, &c);
    assert_int_equal(c.unicast_refused, 1);
    /* One host behind 40 QPNs: 4 of its contexts are served, the rest refused. */
    for (uint32_t q = 0; q < 40; q++) {
        struct rdps_source s = {.qpn = 0x1000 + q, .has_gid = 1, .gid = {0xfe, 0x80, [15] = 9}};
        inject_subscriber(t, &s, s.qpn, 100 + q);
    }
    assert_true(rdps_ctx_poll(ctx, 0) >= 0);
    struct rdps_source all[64];
    assert_int_equal(rdps__fanout_sources(rdps__pub_of_handle(pub)->topic, all, 64), 1 + 4);
    counters_of_ctx(ctx, &c);
    assert_int_equal(c.unicast_refused, 1 + 36);
    rdps_ctx_destroy(ctx);
}

/* Counts the DATA copies each host gets (by the last byte of its GID). */
struct copies {
    unsigned by_host[256];
};

static void count_copies(void *user, const struct rdps_source *to, const uint8_t *frame,
                         uint32_t len)
{
    struct copies *c = user;
    if (to != NULL && len >= RDPS_FRAME_HEADER_LEN && frame[RDPS_FRAME_OFF_TYPE] == RDPS_FRAME_DATA)
        c->by_host[to->gid[15]]++;
}

static struct rdps_source host_qp(uint8_t host, uint32_t qpn)
{
    return (struct rdps_source){.qpn = qpn, .has_gid = 1, .gid = {0xfe, 0x80, [15] = host}};
}

static void inject_status(struct rdps_transport *t, const struct rdps_source *from,
                          uint32_t session)
{
    uint8_t frame[RDPS_FRAME_STATUS_LEN];
    int len = rdps__frame_encode_status(frame, sizeof(frame), session, rdps__topic_hash_id(TOPIC),
                                        from->qpn, 0, 64, 1);
    assert_true(len > 0);
    assert_int_equal(script_transport_inject(t, from, frame, (uint32_t)len), 0);
}

/*
 * Finding 3 of the fourth review. One host announcing subscribers from 40 QPs draws 4 copies of
 * each datagram (1.2.0: 32, dividing the publisher's rate by 33 when it had one real
 * subscriber). A table filled by a handful of hosts no longer shuts later subscribers out: a
 * newcomer displaces an unconfirmed destination of the host holding the most; confirmed ones
 * (they reported to a reliable publisher of the topic) stay, and a subscriber refused then is
 * taken as soon as one leaves.
 */
static void test_one_host_few_copies_and_no_lock_out(void **state)
{
    (void)state;
    struct rdps_source self = host_qp(1, 0x10);
    rdps_ctx_t *ctx;
    struct rdps_transport *t;
    rdps_config cfg;
    base_config(&cfg);
    cfg.max_unicast_subscribers = 16;
    assert_int_equal(script_ctx_create(&cfg, &self, fake_clock, NULL, &ctx, &t), 0);
    struct copies copies;
    memset(&copies, 0, sizeof(copies));
    script_transport_on_sent(t, count_copies, &copies);
    /* Copies are counted on an unreliable publisher's sends; STATUS frames to a reliable
     * publisher of the topic (which never sends here) confirm their senders. */
    rdps_pub_t *pub, *rpub;
    rdps_pub_opts po = {.transport = RDPS_TRANSPORT_UNICAST};
    rdps_pub_opts rpo = {.transport = RDPS_TRANSPORT_UNICAST, .reliable = 1, .ring_bytes = 1 << 20};
    assert_int_equal(rdps_pub_create(ctx, TOPIC, &po, &pub), 0);
    assert_int_equal(rdps_pub_create(ctx, TOPIC, &rpo, &rpub), 0);
    struct rdps_source real = host_qp(2, 0x20);
    inject_subscriber(t, &real, real.qpn, 1);
    for (uint32_t q = 0; q < 40; q++) { /* one host, 40 QPs */
        struct rdps_source s = host_qp(9, 0x1000 + q);
        inject_subscriber(t, &s, s.qpn, 100 + q);
    }
    assert_true(rdps_ctx_poll(ctx, 0) >= 0);
    uint8_t msg[PAYLOAD] = {0};
    assert_int_equal(rdps_pub_send(pub, msg, sizeof(msg)), 0);
    print_message("one datagram: %u copies to the real subscriber's host, %u to the host "
                  "behind 40 QPs\n",
                  copies.by_host[2], copies.by_host[9]);
    assert_int_equal(copies.by_host[2], 1);
    assert_int_equal(copies.by_host[9], 4);
    /* Three more hosts of 4 fill the table (16): a later subscriber still gets in. */
    for (uint8_t h = 10; h < 13; h++)
        for (uint32_t q = 0; q < 4; q++) {
            struct rdps_source s = host_qp(h, 0x2000 + q);
            inject_subscriber(t, &s, s.qpn, 200u + h * 8u + q);
        }
    assert_true(rdps_ctx_poll(ctx, 0) >= 0);
    struct rdps_source all[64], late = host_qp(50, 0x50);
    assert_int_equal(rdps__fanout_sources(rdps__pub_of_handle(pub)->topic, all, 64), 1 + 4 + 11);
    for (uint8_t h = 10; h < 13; h++) /* fill the last place; report from host 10, 11, 12 */
        for (uint32_t q = 0; q < 4; q++) {
            struct rdps_source s = host_qp(h, 0x2000 + q);
            inject_status(t, &s, rdps_pub_session(rpub));
        }
    inject_status(t, &real, rdps_pub_session(rpub));
    assert_true(rdps_ctx_poll(ctx, 0) >= 0);
    inject_subscriber(t, &late, late.qpn, 500);
    assert_true(rdps_ctx_poll(ctx, 0) >= 0);
    memset(&copies, 0, sizeof(copies));
    assert_int_equal(rdps_pub_send(pub, msg, sizeof(msg)), 0);
    print_message("table of 16 full: the late subscriber got %u copies\n", copies.by_host[50]);
    assert_int_equal(copies.by_host[50], 1);
    rdps_counters c;
    counters_of_ctx(ctx, &c);
    assert_int_equal(c.unicast_displaced, 1); /* one of host 9's, never confirmed */
    assert_int_equal(copies.by_host[9], 3);
    /* Two more newcomers take host 9 down to one (a third is refused: host 9 holds no more than
     * it would); once every host holds one or is confirmed, a newcomer is refused ... */
    struct rdps_source later = host_qp(51, 0x51);
    for (uint32_t k = 0; k < 3; k++) {
        struct rdps_source s = host_qp((uint8_t)(60 + k), 0x60);
        inject_subscriber(t, &s, s.qpn, 600 + k);
    }
    assert_true(rdps_ctx_poll(ctx, 0) >= 0);
    inject_status(t, &late, rdps_pub_session(rpub));
    for (uint32_t k = 0; k < 3; k++) {
        struct rdps_source s = host_qp((uint8_t)(60 + k), 0x60);
        inject_status(t, &s, rdps_pub_session(rpub));
    }
    inject_subscriber(t, &later, later.qpn, 700);
    assert_true(rdps_ctx_poll(ctx, 0) >= 0);
    memset(&copies, 0, sizeof(copies));
    assert_int_equal(rdps_pub_send(pub, msg, sizeof(msg)), 0);
    assert_int_equal(copies.by_host[51], 0);
    assert_int_equal(copies.by_host[62], 0);
    assert_int_equal(copies.by_host[9], 1);
    counters_of_ctx(ctx, &c);
    assert_int_equal(c.unicast_displaced, 3);
    /* ... until a destination leaves: then it is taken. */
    fake_now += 5000000000ull; /* every announced subscriber but the ones heard again expires */
    inject_subscriber(t, &later, later.qpn, 700);
    for (int r = 0; r < 3; r++)
        assert_true(rdps_ctx_poll(ctx, 0) >= 0);
    memset(&copies, 0, sizeof(copies));
    assert_int_equal(rdps_pub_send(pub, msg, sizeof(msg)), 0);
    assert_int_equal(copies.by_host[51], 1);
    rdps_ctx_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_unicast_topic_delivers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fanout_is_one_chain_per_datagram, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mixed_topic_exactly_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_seed_discovery_without_multicast, setup, teardown),
        cmocka_unit_test_setup_teardown(test_auto_falls_back_when_joins_never_complete, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_auto_falls_back_when_no_multicast_heard, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_copies_stop_when_subscriber_leaves_or_goes_silent,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_reliable_over_unicast_with_loss, setup, teardown),
        cmocka_unit_test_setup_teardown(test_late_unicast_subscriber, setup, teardown),
        cmocka_unit_test_setup_teardown(test_transport_option_rules, setup, teardown),
        cmocka_unit_test(test_forged_subscribers_get_no_copies),
        cmocka_unit_test(test_one_host_few_copies_and_no_lock_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
