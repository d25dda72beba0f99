/* SPDX-License-Identifier: BSD-2-Clause */
/* test_claim.c - zero-copy publishing (rdps_pub_claim / commit / abort) on unreliable and reliable
 * publishers through the public API over loopback: delivery, repairs, back-pressure, the rules. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "pubsub_test_util.h"
#include "rdps_clock.h"

/* Claims through back-pressure (pumping both contexts), writes message i of len bytes in place,
 * commits. */
static void claim_commit_ok(struct test_pair *f, rdps_pub_t *pub, uint32_t i, size_t len)
{
    rdps_claim claim;
    int rc;
    while ((rc = rdps_pub_claim(pub, &claim)) == RDPS_EAGAIN)
        TEST_PAIR_PUMP(f, 1);
    assert_int_equal(rc, 0);
    assert_true(len <= claim.capacity);
    test_message_fill(claim.data, i, len);
    assert_int_equal(rdps_pub_commit(pub, &claim, len), 0);
    assert_null(claim.data);
}

/* A reliable publisher, a reliable subscriber in the other ctx and a local one in its own. */
struct rel_fixture {
    struct test_pair f;
    rdps_pub_t *pub;
    rdps_sub_t *remote, *local;
    struct test_inbox rin, lin;
};

static void rel_open(struct rel_fixture *x, const rdps_config *cfg_b, const rdps_pub_opts *popts)
{
    memset(x, 0, sizeof(*x));
    assert_int_equal(test_pair_open(&x->f, cfg_b, 0), 0);
    rdps_sub_opts sopts = {.reliable = 1, .on_event = test_inbox_on_event};
    assert_int_equal(
        rdps_sub_create(x->f.b, "zc.rel", test_inbox_on_message, &x->rin, &sopts, &x->remote), 0);
    sopts.on_event = NULL;
    assert_int_equal(
        rdps_sub_create(x->f.a, "zc.rel", test_inbox_on_message, &x->lin, &sopts, &x->local), 0);
    assert_int_equal(rdps_pub_create(x->f.a, "zc.rel", popts, &x->pub), 0);
    TEST_PAIR_PUMP(&x->f, 3);
}

/* Waits (bounded) until the remote subscriber has n messages. */
static void rel_drain(struct rel_fixture *x, unsigned n)
{
    uint64_t until = rdps__clock_monotonic_ns() + 20000000000ull;
    while (x->rin.count < n && rdps__clock_monotonic_ns() < until) {
        assert_true(rdps_ctx_wait(x->f.a, 1) >= 0);
        assert_true(rdps_ctx_wait(x->f.b, 1) >= 0);
    }
}

/* Claimed messages on a reliable publisher, interleaved with copied ones, reach a reliable
 * subscriber and a local one in order, exactly once, intact, and are counted as sent. (Before
 * zero-copy on reliable publishers, rdps_pub_claim returned RDPS_ENOTSUP.) */
static void test_reliable_claim_in_order_with_send(void **state)
{
    (void)state;
    struct rel_fixture x;
    rdps_pub_opts popts = {.reliable = 1, .ring_bytes = 1u << 20};
    rel_open(&x, NULL, &popts);
    enum { N = 3000 };
    uint8_t buf[LOOPBACK_PAYLOAD];
    size_t bytes = 0;
    for (uint32_t i = 0; i < N; i++) {
        size_t len = 4 + (i * 37u) % (LOOPBACK_PAYLOAD - 3);
        if (i % 3 != 0) {
            claim_commit_ok(&x.f, x.pub, i, len);
        } else {
            test_message_fill(buf, i, len);
            TEST_PAIR_SEND_OK(&x.f, x.pub, buf, len);
        }
        bytes += len;
        if (i % 8 == 0)
            TEST_PAIR_PUMP(&x.f, 1);
    }
    rel_drain(&x, N);
    for (int k = 0; k < 2; k++) {
        struct test_inbox *in = k ? &x.lin : &x.rin;
        assert_int_equal(in->count, N);
        assert_int_equal(in->out_of_order, 0);
        assert_int_equal(in->corrupt, 0);
        assert_int_equal(in->next_index, N);
    }
    assert_int_equal(x.rin.loss_events, 0);
    rdps_counters c;
    rdps_pub_counters(x.pub, &c);
    assert_int_equal(c.msgs_sent, N);
    assert_int_equal(c.bytes_sent, bytes);
    assert_true(c.frames_sent >= N);
    assert_int_equal(c.retransmits, 0);
    assert_true(c.frame_bytes_sent > 1u << 20); /* the 1 MiB ring went round */
    test_pair_close(&x.f);
}

/* The subscriber's ctx drops 20 % of data and heartbeat frames: claimed messages are repaired
 * from the ring like copied ones, and every one arrives in order exactly once. */
static void test_reliable_claim_repaired_over_loss(void **state)
{
    (void)state;
    struct rel_fixture x;
    rdps_config lossy;
    rdps_config_init(&lossy);
    lossy.announce_interval_ms = 1000;
    lossy.loss_rx_rate = 0.20;
    lossy.loss_frame_types = (1u << RDPS_FRAME_DATA) | (1u << RDPS_FRAME_HEARTBEAT);
    lossy.loss_seed = 23;
    rdps_pub_opts popts = {.reliable = 1, .ring_bytes = 4u << 20};
    rel_open(&x, &lossy, &popts);
    enum { N = 2000 };
    for (uint32_t i = 0; i < N; i++) {
        claim_commit_ok(&x.f, x.pub, i, 4 + (i * 131u) % (LOOPBACK_PAYLOAD - 3));
        TEST_PAIR_PUMP(&x.f, 1);
    }
    rel_drain(&x, N);
    assert_int_equal(x.rin.count, N);
    assert_int_equal(x.rin.out_of_order, 0);
    assert_int_equal(x.rin.corrupt, 0);
    assert_int_equal(x.rin.loss_events, 0);
    rdps_counters pc, sc;
    rdps_pub_counters(x.pub, &pc);
    rdps_sub_counters(x.remote, &sc);
    assert_true(sc.loss_dropped_rx > 0);
    assert_true(sc.naks_sent > 0);
    assert_true(sc.recovered > 0);
    assert_true(pc.retransmits > 0);
    test_pair_close(&x.f);
}

/* A claim the flow-control window cannot take is refused with RDPS_EAGAIN and reserves nothing:
 * a send on the same publisher is refused for the window too (not for a claim outstanding), and
 * once the subscriber reports, the claim goes and everything arrives. */
static void test_reliable_claim_backpressure_reserves_nothing(void **state)
{
    (void)state;
    struct rel_fixture x;
    rdps_pub_opts popts = {.reliable = 1, .ring_bytes = 4u << 20, .flow = RDPS_FLOW_MIN};
    rel_open(&x, NULL, &popts);
    uint8_t buf[100];
    uint32_t i;
    int rc;
    /* The subscriber reports once (the first send waits for it), then its ctx is left alone. */
    test_message_fill(buf, 0, sizeof(buf));
    TEST_PAIR_SEND_OK(&x.f, x.pub, buf, sizeof(buf));
    for (i = 1; i < 5000; i++) {
        test_message_fill(buf, i, sizeof(buf));
        if ((rc = rdps_pub_send(x.pub, buf, sizeof(buf))) != 0)
            break;
        assert_true(rdps_ctx_poll(x.f.a, 0) >= 0);
    }
    assert_int_equal(rc, RDPS_EAGAIN);
    assert_true(i > 100 && i < 5000); /* the window, about 1023 datagrams */
    rdps_counters before, after;
    rdps_pub_counters(x.pub, &before);
    rdps_claim claim;
    assert_int_equal(rdps_pub_claim(x.pub, &claim), RDPS_EAGAIN);
    assert_null(claim.data);
    assert_int_equal(claim.capacity, 0);
    assert_int_equal(rdps_pub_claim(x.pub, &claim), RDPS_EAGAIN);
    assert_int_equal(rdps_pub_send(x.pub, buf, sizeof(buf)), RDPS_EAGAIN);
    rdps_pub_counters(x.pub, &after);
    assert_int_equal(after.send_backpressure, before.send_backpressure + 3);
    assert_int_equal(after.msgs_sent, before.msgs_sent);
    /* The subscriber catches up and reports: the claim goes, after everything sent before it. */
    claim_commit_ok(&x.f, x.pub, i, sizeof(buf));
    rel_drain(&x, i + 1);
    assert_int_equal(x.rin.count, i + 1);
    assert_int_equal(x.rin.out_of_order, 0);
    assert_int_equal(x.rin.corrupt, 0);
    assert_int_equal(x.lin.count, i + 1);
    test_pair_close(&x.f);
}

/* ---- the rules, the same for both kinds of publisher ---- */

struct kind_fixture {
    struct test_pair f;
    rdps_pub_t *pub, *other;
    rdps_sub_t *sub;
    struct test_inbox in;
    int reliable;
};

static int setup_kind(void **state, int reliable)
{
    struct kind_fixture *k = calloc(1, sizeof(*k));
    assert_non_null(k);
    k->reliable = reliable;
    assert_int_equal(test_pair_open(&k->f, NULL, 0), 0);
    rdps_sub_opts sopts = {.reliable = reliable, .on_event = test_inbox_on_event};
    rdps_pub_opts popts = {.reliable = reliable};
    assert_int_equal(
        rdps_sub_create(k->f.b, "zc.rules", test_inbox_on_message, &k->in, &sopts, &k->sub), 0);
    assert_int_equal(rdps_pub_create(k->f.a, "zc.rules", &popts, &k->pub), 0);
    assert_int_equal(rdps_pub_create(k->f.a, "zc.rules.other", &popts, &k->other), 0);
    TEST_PAIR_PUMP(&k->f, 3);
    k->in.loss_events = 0;
    *state = k;
    return 0;
}

static int setup_unreliable(void **state)
{
    return setup_kind(state, 0);
}

static int setup_reliable(void **state)
{
    return setup_kind(state, 1);
}

static int teardown_kind(void **state)
{
    struct kind_fixture *k = *state;
    test_pair_close(&k->f);
    free(k);
    return 0;
}

/* Pumps until the subscriber has n messages (bounded); fails if it has more. */
static void expect_delivered(struct kind_fixture *k, unsigned n)
{
    for (int r = 0; r < 200 && k->in.count < n; r++)
        TEST_PAIR_PUMP(&k->f, 1);
    TEST_PAIR_PUMP(&k->f, 3);
    assert_int_equal(k->in.count, n);
    assert_int_equal(k->in.out_of_order, 0);
    assert_int_equal(k->in.corrupt, 0);
    assert_int_equal(k->in.loss_events, 0);
}

static void claim_ok(struct kind_fixture *k, rdps_pub_t *pub, rdps_claim *claim)
{
    int rc;
    while ((rc = rdps_pub_claim(pub, claim)) == RDPS_EAGAIN) /* reliable: until connected */
        TEST_PAIR_PUMP(&k->f, 1);
    assert_int_equal(rc, 0);
}

/* Capacity: one datagram's payload, capped by max_message_size. */
static void test_claim_capacity(void **state)
{
    struct kind_fixture *k = *state;
    rdps_claim claim;
    claim_ok(k, k->pub, &claim);
    assert_int_equal(claim.capacity, rdps_ctx_max_datagram_payload(k->f.a));
    assert_int_equal(claim.capacity, LOOPBACK_PAYLOAD);
    test_message_fill(claim.data, 0, claim.capacity);
    assert_int_equal(rdps_pub_commit(k->pub, &claim, claim.capacity), 0);
    expect_delivered(k, 1);
    assert_int_equal(k->in.last_len, LOOPBACK_PAYLOAD);

    rdps_config cfg;
    rdps_ctx_t *small;
    rdps_pub_t *pub;
    rdps_config_init(&cfg);
    cfg.max_message_size = 100;
    assert_int_equal(test_loopback_ctx(k->f.fabric, &cfg, 256, &small), 0);
    rdps_pub_opts popts = {.reliable = k->reliable};
    assert_int_equal(rdps_pub_create(small, "zc.small", &popts, &pub), 0);
    for (int i = 0; i < 3; i++)
        assert_true(rdps_ctx_poll(small, 0) >= 0);
    assert_int_equal(rdps_pub_claim(pub, &claim), 0);
    assert_int_equal(claim.capacity, 100);
    claim.capacity = LOOPBACK_PAYLOAD; /* a caller that ignores the capacity it was given */
    assert_int_equal(rdps_pub_commit(pub, &claim, 101), RDPS_EMSGSIZE);
    assert_non_null(strstr(rdps_last_error_message(), "capacity 100"));
    rdps_ctx_destroy(small);
}

/* One claim per publisher: a second claim and sends on it get RDPS_EBUSY (not counted as
 * back-pressure) until commit or abort; other publishers are not affected. */
static void test_one_claim_per_publisher(void **state)
{
    struct kind_fixture *k = *state;
    rdps_claim claim, second, other;
    uint8_t buf[64];
    claim_ok(k, k->pub, &claim);
    assert_int_equal(rdps_pub_claim(k->pub, &second), RDPS_EBUSY);
    assert_null(second.data);
    assert_non_null(strstr(rdps_last_error_message(), "claim outstanding"));
    test_message_fill(buf, 1, sizeof(buf));
    assert_int_equal(rdps_pub_send(k->pub, buf, sizeof(buf)), RDPS_EBUSY);
    assert_int_equal(rdps_pub_send_ex(k->pub, buf, sizeof(buf), RDPS_SEND_MORE), RDPS_EBUSY);
    rdps_counters c;
    rdps_pub_counters(k->pub, &c);
    assert_int_equal(c.send_backpressure, 0);
    assert_int_equal(c.msgs_sent, 0);
    /* Another publisher of the ctx claims, commits and sends meanwhile; polling goes on. */
    claim_ok(k, k->other, &other);
    assert_int_equal(rdps_pub_commit(k->other, &other, 0), 0);
    assert_int_equal(rdps_pub_send(k->other, buf, sizeof(buf)), 0);
    TEST_PAIR_PUMP(&k->f, 3);
    /* The claim still goes, first; then the publisher sends again. */
    test_message_fill(claim.data, 0, 200);
    assert_int_equal(rdps_pub_commit(k->pub, &claim, 200), 0);
    assert_int_equal(rdps_pub_send(k->pub, buf, sizeof(buf)), 0);
    expect_delivered(k, 2);
    assert_int_equal(k->in.last_len, sizeof(buf));
}

/* Commit ends the claim on every return: a refused length sends nothing and frees the
 * publisher; the committed (or refused) claim cannot be committed or aborted again, nor can a
 * copy of it; a claim given to another publisher is refused and stays valid on its own. */
static void test_commit_ends_the_claim(void **state)
{
    struct kind_fixture *k = *state;
    rdps_claim claim, copy, other;
    claim_ok(k, k->pub, &claim);
    size_t cap = claim.capacity;
    test_message_fill(claim.data, 0, 10);
    copy = claim;
    assert_int_equal(rdps_pub_commit(k->pub, &claim, cap + 1), RDPS_EMSGSIZE);
    assert_null(claim.data);
    assert_int_equal(rdps_pub_commit(k->pub, &claim, 10), RDPS_EINVAL);
    assert_int_equal(rdps_pub_commit(k->pub, &copy, 10), RDPS_EINVAL);
    rdps_pub_abort(k->pub, &copy); /* a no-op */
    TEST_PAIR_PUMP(&k->f, 3);
    assert_int_equal(k->in.count, 0);

    /* A successful commit: a copy committed again is refused, never sent twice. */
    claim_ok(k, k->pub, &claim);
    test_message_fill(claim.data, 0, 30);
    copy = claim;
    assert_int_equal(rdps_pub_commit(k->pub, &claim, 30), 0);
    assert_int_equal(rdps_pub_commit(k->pub, &copy, 30), RDPS_EINVAL);
    expect_delivered(k, 1);

    /* Another publisher's claim: refused, and left to its own publisher. */
    claim_ok(k, k->other, &other);
    assert_int_equal(rdps_pub_commit(k->pub, &other, 0), RDPS_EINVAL);
    rdps_pub_abort(k->pub, &other); /* not this publisher's: nothing happens */
    assert_non_null(other.data);
    assert_int_equal(rdps_pub_commit(k->other, &other, 0), 0);
    /* A claim that was never given. */
    rdps_claim never = {0};
    assert_int_equal(rdps_pub_commit(k->pub, &never, 0), RDPS_EINVAL);
    assert_int_equal(rdps_pub_commit(k->pub, NULL, 0), RDPS_EINVAL);
    claim_ok(k, k->pub, &claim);
    test_message_fill(claim.data, 1, 40);
    assert_int_equal(rdps_pub_commit(k->pub, &claim, 40), 0);
    expect_delivered(k, 2);
    rdps_counters c;
    rdps_pub_counters(k->pub, &c);
    assert_int_equal(c.msgs_sent, 2);
    assert_int_equal(c.bytes_sent, 70);
}

/* Abort leaves nothing behind: nothing is sent, no sequence is used (a reliable subscriber sees no
 * loss, an unreliable one no gap), and the publisher claims and sends again. */
static void test_abort_leaves_nothing(void **state)
{
    struct kind_fixture *k = *state;
    rdps_claim claim;
    uint8_t buf[32];
    for (uint32_t i = 0; i < 50; i++) {
        claim_ok(k, k->pub, &claim);
        test_message_fill(claim.data, i, 20);
        rdps_pub_abort(k->pub, &claim);
        assert_null(claim.data);
        rdps_pub_abort(k->pub, &claim); /* twice: a no-op */
        assert_int_equal(rdps_pub_commit(k->pub, &claim, 20), RDPS_EINVAL);
        if (i % 2) {
            claim_ok(k, k->pub, &claim);
            test_message_fill(claim.data, i, 20);
            assert_int_equal(rdps_pub_commit(k->pub, &claim, 20), 0);
        } else {
            test_message_fill(buf, i, sizeof(buf));
            assert_int_equal(rdps_pub_send(k->pub, buf, sizeof(buf)), 0);
        }
    }
    expect_delivered(k, 50);
    rdps_counters c;
    rdps_pub_counters(k->pub, &c);
    assert_int_equal(c.msgs_sent, 50);
    assert_int_equal(c.send_backpressure, 0);
}

/* Destroying a publisher gives its claim back: with every send buffer of the pool (64) claimed
 * by unreliable publishers that are then destroyed, sends go again. Destroying a reliable
 * publisher, or the ctx, with a claim outstanding frees everything (the sanitizer build checks). */
static void test_destroy_releases_the_claim(void **state)
{
    struct kind_fixture *k = *state;
    if (!k->reliable) {
        rdps_pub_t *holders[64];
        rdps_claim held[64];
        for (int i = 0; i < 64; i++)
            assert_int_equal(rdps_pub_create(k->f.a, "zc.hold", NULL, &holders[i]), 0);
        TEST_PAIR_PUMP(&k->f, 3);
        for (int i = 0; i < 64; i++)
            assert_int_equal(rdps_pub_claim(holders[i], &held[i]), 0);
        uint8_t buf[16] = {0};
        assert_int_equal(rdps_pub_send(k->other, buf, sizeof(buf)), RDPS_EAGAIN); /* pool empty */
        for (int i = 0; i < 64; i++)
            rdps_pub_destroy(holders[i]);
        assert_int_equal(rdps_pub_send(k->other, buf, sizeof(buf)), 0);
    }
    rdps_claim claim;
    claim_ok(k, k->pub, &claim);
    rdps_pub_destroy(k->pub);
    k->pub = NULL;
    claim_ok(k, k->other, &claim);
    /* teardown destroys the ctx with this claim outstanding */
}

/* A publisher destroyed from a callback is closed at once: its claim is released, and commit
 * returns RDPS_ECLOSED. */
struct destroyer {
    rdps_pub_t *victim;
    rdps_claim *claim;
    unsigned calls;
    int commit_rc, claim_rc;
};

static void destroy_on_message(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct destroyer *d = user;
    (void)data;
    (void)len;
    (void)info;
    if (d->calls++ > 0)
        return;
    rdps_pub_destroy(d->victim); /* closed now, freed when the outermost call returns */
    d->commit_rc = rdps_pub_commit(d->victim, d->claim, 0);
    rdps_pub_abort(d->victim, d->claim); /* a no-op */
    rdps_claim again;
    d->claim_rc = rdps_pub_claim(d->victim, &again);
}

static void test_commit_after_destroy_in_callback(void **state)
{
    struct kind_fixture *k = *state;
    rdps_sub_t *local;
    rdps_claim claim, mine;
    struct destroyer d = {.victim = k->pub, .claim = &mine};
    assert_int_equal(
        rdps_sub_create(k->f.a, "zc.rules.other", destroy_on_message, &d, NULL, &local), 0);
    claim_ok(k, k->pub, &mine);
    claim_ok(k, k->other, &claim);
    /* The local subscriber's callback runs inside this commit and destroys k->pub. */
    assert_int_equal(rdps_pub_commit(k->other, &claim, 0), 0);
    assert_int_equal(d.calls, 1);
    assert_int_equal(d.commit_rc, RDPS_ECLOSED);
    assert_null(mine.data);
    assert_int_equal(d.claim_rc, RDPS_ECLOSED);
    k->pub = NULL; /* freed when the commit, the outermost call, returned */
    expect_delivered(k, 0);
}

/* Local subscribers read a committed reliable message from the ring: one that publishes a ring's
 * worth from its callback cannot overwrite it under the next subscriber (the frame stays pinned;
 * the publishing callback gets RDPS_EAGAIN instead). */
struct flooder {
    rdps_ctx_t *ctx;
    rdps_pub_t *pub;
    unsigned sent, refused, calls;
};

static void flood_on_message(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct flooder *fl = user;
    (void)data;
    (void)len;
    (void)info;
    if (fl->calls++ > 0)
        return; /* only the first message: the ones sent here come back here too */
    uint8_t buf[900];
    for (uint32_t i = 1; i <= 400; i++) {
        test_message_fill(buf, 1000 + i, sizeof(buf));
        int rc = rdps_pub_send(fl->pub, buf, sizeof(buf));
        if (rc == RDPS_EAGAIN) {
            fl->refused++;
            assert_int_equal(rdps_ctx_poll(fl->ctx, 0), RDPS_EBUSY); /* reaps completions */
            continue;
        }
        assert_int_equal(rc, 0);
        fl->sent++;
        assert_int_equal(rdps_ctx_poll(fl->ctx, 0), RDPS_EBUSY);
    }
}

struct first_check {
    unsigned count, first_corrupt;
    uint32_t first_index;
};

static void check_on_message(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct first_check *c = user;
    const uint8_t *b = data;
    (void)info;
    uint32_t i;
    memcpy(&i, b, 4);
    if (i == 0) { /* the committed message, delivered last (after the callback's sends) */
        for (size_t n = 4; n < len; n++)
            if (b[n] != (uint8_t)(i * 7u + n))
                c->first_corrupt++;
        c->first_index = c->count;
    }
    c->count++;
}

static void test_committed_message_stays_in_ring_for_callbacks(void **state)
{
    (void)state;
    struct test_pair f;
    assert_int_equal(test_pair_open(&f, NULL, 0), 0);
    rdps_pub_t *pub;
    rdps_sub_t *checker, *flood_sub;
    struct first_check chk = {0};
    rdps_pub_opts popts = {.reliable = 1, .ring_bytes = 64u * 1024u};
    assert_int_equal(rdps_pub_create(f.a, "zc.pin", &popts, &pub), 0);
    struct flooder fl = {.ctx = f.a, .pub = pub};
    /* Delivered in reverse order of creation: the flooder first, then the checker. */
    assert_int_equal(rdps_sub_create(f.a, "zc.pin", check_on_message, &chk, NULL, &checker), 0);
    assert_int_equal(rdps_sub_create(f.a, "zc.pin", flood_on_message, &fl, NULL, &flood_sub), 0);
    TEST_PAIR_PUMP(&f, 3);
    rdps_claim claim;
    assert_int_equal(rdps_pub_claim(pub, &claim), 0);
    test_message_fill(claim.data, 0, claim.capacity);
    assert_int_equal(rdps_pub_commit(pub, &claim, claim.capacity), 0);
    assert_int_equal(chk.count, 1 + fl.sent);
    assert_int_equal(chk.first_index, fl.sent);
    assert_int_equal(chk.first_corrupt, 0);
    assert_int_equal(fl.calls, 1 + fl.sent);
    assert_true(fl.sent >= 60);  /* most of the 64 KiB ring */
    assert_true(fl.refused > 0); /* then the pinned frame held the trail */
    test_pair_close(&f);
}

/* A claim longer than a datagram where the transport cannot gather (a QP of one SGE): the ctx
 * copies each fragment's payload behind its header instead; the same message arrives. */
struct large_inbox {
    unsigned count, corrupt;
    size_t len;
};

static void large_on_message(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct large_inbox *in = user;
    (void)info;
    const uint8_t *b = data;
    for (size_t n = 0; n < len; n++)
        if (b[n] != (uint8_t)(n * 13u + in->count)) {
            in->corrupt++;
            break;
        }
    in->count++;
    in->len = len;
}

static void test_large_claim_without_gather(void **state)
{
    (void)state;
    struct test_pair f;
    struct large_inbox in = {0};
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    assert_int_equal(test_pair_open(&f, NULL, 0), 0);
    assert_int_equal(rdps_pub_create(f.a, "zc.large", NULL, &pub), 0);
    assert_int_equal(rdps_sub_create(f.b, "zc.large", large_on_message, &in, NULL, &sub), 0);
    TEST_PAIR_PUMP(&f, 5);
    for (unsigned k = 0; k < 2; k++) {
        rdps__ctx_of_handle(f.a)->no_gather = k == 1; /* gathered (copied by loopback), then not */
        rdps_claim claim;
        assert_int_equal(rdps_pub_claim_ex(pub, 50000, 0, &claim), 0);
        uint8_t *b = claim.data;
        for (size_t n = 0; n < 50000; n++)
            b[n] = (uint8_t)(n * 13u + k);
        assert_int_equal(rdps_pub_commit(pub, &claim, 50000), 0);
        TEST_PAIR_PUMP(&f, 3);
        assert_int_equal(in.count, k + 1);
        assert_int_equal(in.len, 50000);
        assert_int_equal(in.corrupt, 0);
    }
    test_pair_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reliable_claim_in_order_with_send),
        cmocka_unit_test(test_reliable_claim_repaired_over_loss),
        cmocka_unit_test(test_reliable_claim_backpressure_reserves_nothing),
        cmocka_unit_test(test_committed_message_stays_in_ring_for_callbacks),
        cmocka_unit_test(test_large_claim_without_gather),
#define BOTH_KINDS(test)                                                    \
    cmocka_unit_test_setup_teardown(test, setup_unreliable, teardown_kind), \
        cmocka_unit_test_setup_teardown(test, setup_reliable, teardown_kind)
        BOTH_KINDS(test_claim_capacity),
        BOTH_KINDS(test_one_claim_per_publisher),
        BOTH_KINDS(test_commit_ends_the_claim),
        BOTH_KINDS(test_abort_leaves_nothing),
        BOTH_KINDS(test_destroy_releases_the_claim),
        BOTH_KINDS(test_commit_after_destroy_in_callback),
#undef BOTH_KINDS
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
