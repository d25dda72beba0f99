/* SPDX-License-Identifier: BSD-2-Clause */
/* test_batching.c - small messages sharing datagrams at the API: RDPS_SEND_MORE, the linger, flush
 * points, claims in the open datagram, back-pressure, local subscribers, batching off. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <string.h>

#include <rdps/rdps.h>

#include "pubsub_test_util.h"
#include "rdps_batch.h"

#define TOPIC "batch.t"

/* Every message a subscriber got, with its metadata. */
struct got {
    unsigned count;
    uint32_t seq[4096], ordinal[4096], len[4096];
    uint8_t first_byte[4096];
    unsigned bad;
};

static void on_msg(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct got *g = user;
    if (g->count >= 4096)
        return;
    /* Message i carries len bytes of value (i & 0xFF), its index in the first 4 bytes. */
    uint32_t i = 0;
    if (len >= 4)
        memcpy(&i, data, 4);
    for (size_t k = 4; k < len; k++)
        if (((const uint8_t *)data)[k] != (uint8_t)i)
            g->bad++;
    g->seq[g->count] = info->seq;
    g->ordinal[g->count] = info->ordinal;
    g->len[g->count] = (uint32_t)len;
    g->first_byte[g->count] = len > 0 ? ((const uint8_t *)data)[0] : 0;
    g->count++;
}

static void msg_fill(uint8_t *buf, uint32_t i, size_t len)
{
    memset(buf, (uint8_t)i, len);
    if (len >= 4)
        memcpy(buf, &i, 4);
}

static uint64_t fake_now;
static uint64_t fake_clock(void *user)
{
    (void)user;
    return fake_now;
}

struct fixture {
    struct test_pair p;
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    struct got got;
};

/* A publisher on a, a subscriber on b, joined; pub options from *opts (NULL: defaults). */
static void open_with(struct fixture *f, const rdps_pub_opts *opts)
{
    memset(f, 0, sizeof(*f));
    assert_int_equal(test_pair_open(&f->p, NULL, 0), 0);
    fake_now = 1000000000ull;
    rdps__ctx_set_clock(f->p.a, fake_clock, NULL);
    rdps__ctx_set_clock(f->p.b, fake_clock, NULL);
    assert_int_equal(rdps_sub_create(f->p.b, TOPIC, on_msg, &f->got, NULL, &f->sub), 0);
    assert_int_equal(rdps_pub_create(f->p.a, TOPIC, opts, &f->pub), 0);
    for (int i = 0; i < 50 && (!rdps_pub_ready(f->pub) || !rdps_sub_ready(f->sub)); i++)
        TEST_PAIR_PUMP(&f->p, 1);
    assert_true(rdps_pub_ready(f->pub));
}

static void close_fixture(struct fixture *f)
{
    rdps_pub_destroy(f->pub);
    rdps_sub_destroy(f->sub);
    test_pair_close(&f->p);
}

static void send_msg(struct fixture *f, uint32_t i, size_t len, unsigned flags)
{
    uint8_t buf[4096];
    msg_fill(buf, i, len);
    assert_int_equal(rdps_pub_send_ex(f->pub, buf, len, flags), 0);
}

static uint64_t pub_counter(const rdps_pub_t *pub, size_t offset)
{
    rdps_counters c;
    assert_int_equal(rdps_pub_counters(pub, &c), 0);
    uint64_t v;
    memcpy(&v, (const char *)&c + offset, sizeof(v));
    return v;
}
#define PUB_COUNTER(pub, field) pub_counter((pub), offsetof(rdps_counters, field))

/* RDPS_SEND_MORE holds messages in one datagram until a send without it: they arrive together,
 * one datagram, consecutive ordinals sharing its sequence. */
static void test_send_more_holds_until_a_send_without_it(void **state)
{
    (void)state;
    struct fixture f;
    open_with(&f, NULL);
    uint64_t frames = PUB_COUNTER(f.pub, frames_sent);
    for (uint32_t i = 0; i < 10; i++)
        send_msg(&f, i, 20 + i, RDPS_SEND_MORE);
    assert_true(rdps_ctx_poll(f.p.b, 0) >= 0);
    assert_int_equal(f.got.count, 0); /* held */
    assert_int_equal(PUB_COUNTER(f.pub, frames_sent), frames);
    send_msg(&f, 10, 30, 0);
    assert_true(rdps_ctx_poll(f.p.b, 0) >= 0);
    assert_int_equal(f.got.count, 11);
    assert_int_equal(f.got.bad, 0);
    for (uint32_t i = 0; i < 11; i++) {
        assert_int_equal(f.got.first_byte[i], i == 0 ? 0 : (uint8_t)i); /* the index, LE */
        assert_int_equal(f.got.len[i], i < 10 ? 20 + i : 30);
        assert_int_equal(f.got.seq[i], f.got.seq[0]);
        assert_int_equal(f.got.ordinal[i], f.got.ordinal[0] + i);
    }
    assert_int_equal(PUB_COUNTER(f.pub, frames_sent), frames + 1);
    assert_int_equal(PUB_COUNTER(f.pub, frames_batched), 1);
    assert_int_equal(PUB_COUNTER(f.pub, msgs_sent), 11);
    close_fixture(&f);
}

/* A datagram goes when the next message does not fit (queued on the device; with RDPS_SEND_MORE
 * its doorbell waits for the chain's end); the next datagram takes the next sequence and the
 * ordinals go on; zero-length messages count like others. */
static void test_full_datagrams_and_empty_messages(void **state)
{
    (void)state;
    struct fixture f;
    open_with(&f, NULL);
    /* 100-byte messages: 102 bytes each as records, 9 fit the 976-byte payload (918). */
    for (uint32_t i = 0; i < 20; i++)
        send_msg(&f, i, 100, RDPS_SEND_MORE);
    assert_int_equal(PUB_COUNTER(f.pub, frames_sent), 2); /* two full ones queued, one open */
    assert_true(rdps_ctx_poll(f.p.b, 0) >= 0);
    assert_int_equal(f.got.count, 0); /* not rung yet: RDPS_SEND_MORE */
    send_msg(&f, 20, 100, 0);         /* the chain's end rings them, and sends the open one */
    assert_true(rdps_ctx_poll(f.p.b, 0) >= 0);
    assert_int_equal(f.got.count, 21);
    assert_int_equal(PUB_COUNTER(f.pub, frames_sent), 3);
    f.got.count = 0;
    for (uint32_t i = 0; i < 20; i++)
        send_msg(&f, i, 100, RDPS_SEND_MORE);
    assert_true(rdps_ctx_poll(f.p.b, 0) >= 0);
    assert_int_equal(f.got.count, 0);
    assert_int_equal(rdps_ctx_flush(f.p.a), 0);
    assert_true(rdps_ctx_poll(f.p.a, 0) >= 0); /* the flush's completion seen: nothing awaited */
    for (uint32_t i = 0; i < 300; i++)
        send_msg(&f, 20 + i, 0, RDPS_SEND_MORE);
    send_msg(&f, 320, 0, 0);
    assert_true(rdps_ctx_poll(f.p.b, 0) >= 0);
    assert_int_equal(f.got.count, 321);
    for (uint32_t i = 1; i < 321; i++)
        assert_int_equal(f.got.ordinal[i], f.got.ordinal[i - 1] + 1);
    assert_int_equal(f.got.seq[9], f.got.seq[0] + 1);
    assert_int_equal(f.got.seq[18], f.got.seq[0] + 2);
    assert_int_equal(f.got.seq[20], f.got.seq[18] + 1); /* the empty ones: one datagram */
    assert_int_equal(f.got.seq[320], f.got.seq[20]);
    assert_int_equal(f.got.len[20], 0);
    assert_int_equal(f.got.bad, 0);
    close_fixture(&f);
}

/* A lone message goes at once, in a datagram of its own: no latency added when idle (the sender
 * polls between messages, so the last send's completion has been seen). */
static void test_lone_message_goes_at_once(void **state)
{
    (void)state;
    struct fixture f;
    open_with(&f, NULL);
    rdps__ctx_set_batch_look(f.p.a, UINT64_MAX); /* however slow the host: only polls look */
    for (uint32_t i = 0; i < 5; i++) {
        assert_true(rdps_ctx_poll(f.p.a, 0) >= 0);
        send_msg(&f, i, 64, 0);
        assert_true(rdps_ctx_poll(f.p.b, 0) >= 0);
        assert_int_equal(f.got.count, i + 1);
    }
    assert_int_equal(PUB_COUNTER(f.pub, frames_batched), 0);
    assert_int_equal(f.got.seq[4], f.got.seq[0] + 4);
    close_fixture(&f);
}

/* Sends a lone message (it goes at once) and n more before the publisher polls: those wait in one
 * open datagram for the first one's completion. */
static void send_during_a_send(struct fixture *f, uint32_t first, uint32_t n)
{
    send_msg(f, first, 64, 0);
    for (uint32_t i = 1; i <= n; i++)
        send_msg(f, first + i, 64, 0);
    assert_true(rdps_ctx_poll(f->p.b, 0) >= 0);
}

/* The default rule: messages sent while an earlier send's completion is awaited join the open
 * datagram, which goes when a poll sees that completion (at its start or its end). */
static void test_messages_join_while_a_send_is_awaited(void **state)
{
    (void)state;
    struct fixture f;
    open_with(&f, NULL);
    rdps__ctx_set_batch_look(f.p.a, UINT64_MAX);
    assert_true(rdps_ctx_poll(f.p.a, 0) >= 0);
    uint64_t frames = PUB_COUNTER(f.pub, frames_sent);
    send_during_a_send(&f, 0, 5);
    assert_int_equal(f.got.count, 1); /* the lone one went at once; five wait */
    assert_int_equal(PUB_COUNTER(f.pub, frames_sent), frames + 1);
    assert_int_equal(PUB_COUNTER(f.pub, msgs_sent), 6); /* accepted: counted with the open one */
    assert_true(rdps_ctx_poll(f.p.a, 0) >= 0);          /* sees the completion: the open one goes */
    assert_true(rdps_ctx_poll(f.p.b, 0) >= 0);
    assert_int_equal(f.got.count, 6);
    assert_int_equal(PUB_COUNTER(f.pub, frames_sent), frames + 2);
    assert_int_equal(PUB_COUNTER(f.pub, frames_batched), 1);
    for (uint32_t i = 1; i < 6; i++) {
        assert_int_equal(f.got.seq[i], f.got.seq[0] + 1);
        assert_int_equal(f.got.ordinal[i], f.got.ordinal[0] + i);
    }
    assert_int_equal(f.got.bad, 0);
    /* The open datagram's own completion is awaited now: the next message waits for it, and
     * goes at the poll that sees it. */
    send_msg(&f, 6, 64, 0);
    assert_true(rdps_ctx_poll(f.p.b, 0) >= 0);
    assert_int_equal(f.got.count, 6);
    TEST_PAIR_PUMP(&f.p, 2);
    assert_int_equal(f.got.count, 7);
    /* Messages that fill the open datagram while they wait: the full one goes at once. */
    assert_true(rdps_ctx_poll(f.p.a, 0) >= 0);
    send_during_a_send(&f, 7, 20); /* 66 bytes a record: 14 fit */
    assert_int_equal(f.got.count, 7 + 1 + 14);
    TEST_PAIR_PUMP(&f.p, 2);
    assert_int_equal(f.got.count, 7 + 21);
    assert_int_equal(f.got.bad, 0);
    close_fixture(&f);
}

/* What else sends a datagram held for the device: rdps_ctx_flush, rdps_ctx_arm (going to sleep),
 * rdps_ctx_wait. */
static void test_held_datagram_goes_on_flush_and_sleep(void **state)
{
    (void)state;
    struct fixture f;
    open_with(&f, NULL);
    rdps__ctx_set_batch_look(f.p.a, UINT64_MAX);
    assert_true(rdps_ctx_poll(f.p.a, 0) >= 0);
    send_during_a_send(&f, 0, 3);
    assert_int_equal(f.got.count, 1);
    assert_int_equal(rdps_ctx_flush(f.p.a), 0);
    assert_true(rdps_ctx_poll(f.p.b, 0) >= 0);
    assert_int_equal(f.got.count, 4);
    send_during_a_send(&f, 4, 3); /* the flushed one's completion is awaited: all four wait */
    assert_int_equal(f.got.count, 4);
    int rc = rdps_ctx_arm(f.p.a);
    assert_true(rc == 0 || rc == RDPS_EAGAIN);
    assert_true(rdps_ctx_poll(f.p.b, 0) >= 0);
    assert_int_equal(f.got.count, 8);
    send_during_a_send(&f, 8, 3);
    assert_int_equal(f.got.count, 8);
    assert_true(rdps_ctx_wait(f.p.a, 0) >= 0);
    assert_true(rdps_ctx_poll(f.p.b, 0) >= 0);
    assert_int_equal(f.got.count, 12);
    for (uint32_t i = 1; i < 12; i++)
        assert_int_equal(f.got.ordinal[i], f.got.ordinal[0] + i);
    close_fixture(&f);
}

/* A device that does not complete (its progress faked): a poll sends the held datagram once its
 * completion shows, or RDPS_BATCH_AWAIT_MAX_NS after the first poll that found it held. */
static void test_held_datagram_waits_for_its_completion_at_most_the_cap(void **state)
{
    (void)state;
    struct fixture f;
    open_with(&f, NULL);
    rdps__ctx_set_batch_look(f.p.a, UINT64_MAX);
    rdps_ctx_t *a = rdps__ctx_of_handle(f.p.a);
    struct rdps_tx_progress stuck = {.awaited = 10, .seen = 0};
    const struct rdps_tx_progress *real = a->tx;
    a->tx = &stuck;
    send_msg(&f, 0, 64, 0);
    send_msg(&f, 1, 64, 0);
    TEST_PAIR_PUMP(&f.p, 3);
    assert_int_equal(f.got.count, 0); /* both wait for send 10 */
    stuck.seen = 9;
    TEST_PAIR_PUMP(&f.p, 2);
    assert_int_equal(f.got.count, 0);
    stuck.seen = 10; /* its completion seen */
    TEST_PAIR_PUMP(&f.p, 2);
    assert_int_equal(f.got.count, 2);
    stuck.awaited = 20;
    send_msg(&f, 2, 64, 0);
    TEST_PAIR_PUMP(&f.p, 2); /* the first poll that finds it held starts the clock */
    fake_now += RDPS_BATCH_AWAIT_MAX_NS - 1;
    TEST_PAIR_PUMP(&f.p, 2);
    assert_int_equal(f.got.count, 2);
    fake_now += 1;
    TEST_PAIR_PUMP(&f.p, 2);
    assert_int_equal(f.got.count, 3);
    a->tx = real;
    close_fixture(&f);
}

/* A sender that never polls: a message that comes after a pause (batch_look_ns since the last
 * post; 0 here) looks for completions itself and goes at once. */
static void test_sender_that_does_not_poll(void **state)
{
    (void)state;
    struct fixture f;
    open_with(&f, NULL);
    rdps__ctx_set_batch_look(f.p.a, 0);
    for (uint32_t i = 0; i < 5; i++) {
        send_msg(&f, i, 64, 0);
        assert_true(rdps_ctx_poll(f.p.b, 0) >= 0);
        assert_int_equal(f.got.count, i + 1);
    }
    assert_int_equal(PUB_COUNTER(f.pub, frames_batched), 0);
    close_fixture(&f);
}

/* Claims follow the rule too: in a loop of claims and commits without polls, each commit after
 * the first finds the previous datagram's completion awaited (its publisher posted just now, so
 * it does not look for it) and waits in the open datagram. */
static void test_claims_join_while_a_send_is_awaited(void **state)
{
    (void)state;
    struct fixture f;
    open_with(&f, NULL);
    rdps__ctx_set_batch_look(f.p.a, 60000000000ull); /* a minute: a slow host stays within it */
    assert_true(rdps_ctx_poll(f.p.a, 0) >= 0);
    for (uint32_t i = 0; i < 5; i++) {
        rdps_claim c;
        assert_int_equal(rdps_pub_claim_ex(f.pub, 64, 0, &c), 0);
        msg_fill(c.data, i, 64);
        assert_int_equal(rdps_pub_commit(f.pub, &c, 64), 0);
    }
    assert_true(rdps_ctx_poll(f.p.b, 0) >= 0);
    assert_int_equal(f.got.count, 1);
    TEST_PAIR_PUMP(&f.p, 2);
    assert_int_equal(f.got.count, 5);
    assert_int_equal(f.got.seq[4], f.got.seq[1]);
    assert_int_equal(f.got.bad, 0);
    close_fixture(&f);
}

/* Reliable publishers keep the rule in their ring: the open frame waits while ring frames are in
 * flight, and goes when the poll reports their completion; every message once, in order. */
static void test_reliable_joins_while_frames_are_in_flight(void **state)
{
    (void)state;
    struct fixture f;
    memset(&f, 0, sizeof(f));
    assert_int_equal(test_pair_open(&f.p, NULL, 0), 0);
    fake_now = 1000000000ull;
    rdps__ctx_set_clock(f.p.a, fake_clock, NULL);
    rdps__ctx_set_clock(f.p.b, fake_clock, NULL);
    rdps_sub_opts so = {.reliable = 1};
    rdps_pub_opts po = {.reliable = 1};
    assert_int_equal(rdps_sub_create(f.p.b, TOPIC, on_msg, &f.got, &so, &f.sub), 0);
    assert_int_equal(rdps_pub_create(f.p.a, TOPIC, &po, &f.pub), 0);
    for (int i = 0;
         i < 50 && rdps_pub_receivers_behind(f.pub) == 0 && rdps_pub_subscriber_count(f.pub) < 1;
         i++)
        TEST_PAIR_PUMP(&f.p, 1);
    TEST_PAIR_PUMP(&f.p, 5);
    uint64_t frames = PUB_COUNTER(f.pub, frames_sent);
    send_during_a_send(&f, 0, 5);
    assert_int_equal(f.got.count, 1);
    assert_int_equal(PUB_COUNTER(f.pub, frames_sent), frames + 1);
    TEST_PAIR_PUMP(&f.p, 3);
    assert_int_equal(f.got.count, 6);
    for (uint32_t i = 1; i < 6; i++) {
        assert_int_equal(f.got.seq[i], f.got.seq[0] + 1);
        assert_int_equal(f.got.ordinal[i], f.got.ordinal[0] + i);
    }
    /* Flush sends a held frame too. */
    send_during_a_send(&f, 6, 2);
    assert_int_equal(rdps_ctx_flush(f.p.a), 0);
    assert_true(rdps_ctx_poll(f.p.b, 0) >= 0);
    assert_int_equal(f.got.count, 9);
    assert_int_equal(f.got.bad, 0);
    for (uint32_t i = 1; i < 9; i++)
        assert_int_equal(f.got.ordinal[i], f.got.ordinal[0] + i);
    close_fixture(&f);
}

/* The linger holds a datagram its time, counted by the ctx's timer, and goes at the first poll
 * after it; a sleep on the fd does not wait for less than a millisecond of it. */
static void test_linger(void **state)
{
    (void)state;
    struct fixture f;
    rdps_pub_opts opts = {.batch_linger_us = 5000};
    open_with(&f, &opts);
    send_msg(&f, 0, 64, 0);
    send_msg(&f, 1, 64, 0);
    TEST_PAIR_PUMP(&f.p, 1);
    assert_int_equal(f.got.count, 0);
    assert_true(rdps_ctx_next_timeout_ms(f.p.a) <= 5);
    fake_now += 4000000ull;
    TEST_PAIR_PUMP(&f.p, 1);
    assert_int_equal(f.got.count, 0); /* 1 ms of it left */
    assert_true(rdps_ctx_next_timeout_ms(f.p.a) <= 1);
    fake_now += 1000001ull;
    TEST_PAIR_PUMP(&f.p, 2);
    assert_int_equal(f.got.count, 2);
    assert_int_equal(f.got.seq[1], f.got.seq[0]);
    /* Arming to sleep sends a datagram with less than 1 ms of linger left, keeps a longer one. */
    send_msg(&f, 2, 64, 0);
    int rc = rdps_ctx_arm(f.p.a);
    assert_true(rc == 0 || rc == RDPS_EAGAIN);
    assert_true(rdps_ctx_poll(f.p.b, 0) >= 0);
    assert_int_equal(f.got.count, 2);
    fake_now += 4500000ull;
    rc = rdps_ctx_arm(f.p.a);
    assert_true(rc == 0 || rc == RDPS_EAGAIN);
    assert_true(rdps_ctx_poll(f.p.b, 0) >= 0);
    assert_int_equal(f.got.count, 3);
    /* A full datagram does not wait for its linger. */
    for (uint32_t i = 0; i < 10; i++)
        send_msg(&f, 3 + i, 100, 0);
    assert_true(rdps_ctx_poll(f.p.b, 0) >= 0);
    assert_int_equal(f.got.count, 12);
    rdps_ctx_flush(f.p.a);
    assert_true(rdps_ctx_poll(f.p.b, 0) >= 0);
    assert_int_equal(f.got.count, 13);
    close_fixture(&f);
}

/* A relay's callback publishes with RDPS_SEND_MORE and flushes from inside the poll. */
struct relay {
    rdps_pub_t *out;
    rdps_ctx_t *ctx; /* out's */
    unsigned seen;
    bool flush;
};

static void relay_msg(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct relay *r = user;
    (void)info;
    r->seen++;
    assert_int_equal(rdps_pub_send_ex(r->out, data, len, RDPS_SEND_MORE), 0);
    if (r->flush)
        assert_int_equal(rdps_ctx_flush(r->ctx), 0);
}

static void test_flush_from_a_callback(void **state)
{
    (void)state;
    struct fixture f;
    open_with(&f, NULL);
    struct relay r = {.flush = true, .ctx = f.p.b};
    struct got out = {0};
    rdps_sub_t *relay_sub, *out_sub;
    assert_int_equal(rdps_pub_create(f.p.b, "batch.out", NULL, &r.out), 0);
    assert_int_equal(rdps_sub_create(f.p.b, TOPIC, relay_msg, &r, NULL, &relay_sub), 0);
    assert_int_equal(rdps_sub_create(f.p.a, "batch.out", on_msg, &out, NULL, &out_sub), 0);
    TEST_PAIR_PUMP(&f.p, 5);
    send_msg(&f, 1, 10, 0);
    TEST_PAIR_PUMP(&f.p, 1);
    assert_int_equal(r.seen, 1);
    assert_true(rdps_ctx_poll(f.p.a, 0) >= 0);
    assert_int_equal(out.count, 1); /* flushed from inside b's poll */
    /* Without the flush, the poll that ran the callback sends it on its way out. */
    r.flush = false;
    send_msg(&f, 2, 10, 0);
    assert_true(rdps_ctx_poll(f.p.b, 0) >= 0);
    assert_true(rdps_ctx_poll(f.p.a, 0) >= 0);
    assert_int_equal(out.count, 2);
    rdps_sub_destroy(relay_sub);
    rdps_sub_destroy(out_sub);
    rdps_pub_destroy(r.out);
    close_fixture(&f);
}

/* Claims take room in the open datagram; a claim aborted leaves nothing; RDPS_SEND_MORE on a
 * claim holds its commit like a send's. */
static void test_claims_in_the_open_datagram(void **state)
{
    (void)state;
    struct fixture f;
    open_with(&f, NULL);
    rdps_claim c;
    send_msg(&f, 0, 50, RDPS_SEND_MORE);
    assert_int_equal(rdps_pub_claim_ex(f.pub, 200, RDPS_SEND_MORE, &c), 0);
    assert_int_equal(c.capacity, 200);
    msg_fill(c.data, 1, 40);
    assert_int_equal(rdps_pub_commit(f.pub, &c, 40), 0);
    assert_int_equal(rdps_pub_claim_ex(f.pub, 100, RDPS_SEND_MORE, &c), 0);
    msg_fill(c.data, 99, 100);
    rdps_pub_abort(f.pub, &c); /* takes nothing, uses no ordinal */
    assert_int_equal(rdps_pub_claim_ex(f.pub, 30, 0, &c), 0);
    msg_fill(c.data, 2, 30);
    assert_true(rdps_ctx_poll(f.p.b, 0) >= 0);
    assert_int_equal(f.got.count, 0);
    assert_int_equal(rdps_pub_commit(f.pub, &c, 30), 0); /* no RDPS_SEND_MORE: it goes */
    assert_true(rdps_ctx_poll(f.p.b, 0) >= 0);
    assert_int_equal(f.got.count, 3);
    assert_int_equal(f.got.bad, 0);
    assert_int_equal(f.got.len[0], 50);
    assert_int_equal(f.got.len[1], 40);
    assert_int_equal(f.got.len[2], 30);
    assert_int_equal(f.got.ordinal[2], f.got.ordinal[0] + 2);
    assert_int_equal(f.got.seq[2], f.got.seq[0]);
    /* The claim that opened a datagram, aborted: no sequence is used. */
    assert_int_equal(rdps_pub_claim_ex(f.pub, 30, 0, &c), 0);
    rdps_pub_abort(f.pub, &c);
    assert_true(rdps_ctx_poll(f.p.a, 0) >= 0); /* the commit's send seen complete */
    send_msg(&f, 3, 8, 0);
    assert_true(rdps_ctx_poll(f.p.b, 0) >= 0);
    assert_int_equal(f.got.count, 4);
    assert_int_equal(f.got.seq[3], f.got.seq[0] + 1);
    assert_int_equal(f.got.ordinal[3], f.got.ordinal[0] + 3);
    /* Too long for the publisher (longer than a datagram is a claim in the ctx's claim buffer:
     * test_claim_large). */
    assert_int_equal(rdps_pub_claim_ex(f.pub, (size_t)64 << 20, 0, &c), RDPS_EMSGSIZE);
    assert_int_equal(rdps_pub_claim_ex(f.pub, 8, 0x2, &c), RDPS_EINVAL);
    close_fixture(&f);
}

/* A subscriber in the publisher's own ctx gets each message as a remote one does: the datagram's
 * sequence, the message's ordinal. */
static void test_local_subscribers_see_the_same(void **state)
{
    (void)state;
    struct fixture f;
    open_with(&f, NULL);
    struct got local = {0};
    rdps_sub_t *ls;
    assert_int_equal(rdps_sub_create(f.p.a, TOPIC, on_msg, &local, NULL, &ls), 0);
    for (uint32_t i = 0; i < 7; i++)
        send_msg(&f, i, 16, i < 6 ? RDPS_SEND_MORE : 0);
    uint8_t big[2500];
    msg_fill(big, 7, sizeof(big)); /* fragmented: the open datagram goes first */
    assert_int_equal(rdps_pub_send(f.pub, big, sizeof(big)), 0);
    TEST_PAIR_PUMP(&f.p, 2);
    assert_int_equal(local.count, 8);
    assert_int_equal(f.got.count, 8);
    for (unsigned i = 0; i < 8; i++) {
        assert_int_equal(local.seq[i], f.got.seq[i]);
        assert_int_equal(local.ordinal[i], f.got.ordinal[i]);
        assert_int_equal(local.len[i], f.got.len[i]);
    }
    assert_int_equal(local.bad + f.got.bad, 0);
    rdps_sub_destroy(ls);
    close_fixture(&f);
}

/* RDPS_BATCH_OFF: one message per datagram, RDPS_SEND_MORE or not. */
static void test_batching_off(void **state)
{
    (void)state;
    struct fixture f;
    rdps_pub_opts opts = {.batching = RDPS_BATCH_OFF};
    open_with(&f, &opts);
    for (uint32_t i = 0; i < 10; i++)
        send_msg(&f, i, 20, RDPS_SEND_MORE);
    rdps_ctx_flush(f.p.a);
    assert_true(rdps_ctx_poll(f.p.b, 0) >= 0);
    assert_int_equal(f.got.count, 10);
    assert_int_equal(f.got.seq[9], f.got.seq[0] + 9);
    assert_int_equal(PUB_COUNTER(f.pub, frames_batched), 0);
    rdps_pub_opts bad = {.batching = RDPS_BATCH_OFF, .batch_linger_us = 10};
    rdps_pub_t *p2;
    assert_int_equal(rdps_pub_create(f.p.a, "batch.bad", &bad, &p2), RDPS_EINVAL);
    bad.batching = (rdps_batch_mode)7;
    bad.batch_linger_us = 0;
    assert_int_equal(rdps_pub_create(f.p.a, "batch.bad", &bad, &p2), RDPS_EINVAL);
    bad.batching = RDPS_BATCH_AUTO;
    bad.batch_linger_us = 1000001;
    assert_int_equal(rdps_pub_create(f.p.a, "batch.bad", &bad, &p2), RDPS_EINVAL);
    close_fixture(&f);
}

/* A send queue that is full: messages are taken into an open datagram instead of refused, and
 * the datagrams go as the queue drains. */
static void test_back_pressure_batches(void **state)
{
    (void)state;
    struct test_pair p;
    struct got got = {0};
    memset(&p, 0, sizeof(p));
    assert_int_equal(rdps__loopback_fabric_create(&p.fabric), 0);
    struct rdps_loopback_config lc = {.max_payload = LOOPBACK_MAX_DATAGRAM,
                                      .send_slots = 40, /* a send queue of 40 */
                                      .recv_slots = 20000};
    assert_int_equal(test_loopback_ctx_with(p.fabric, NULL, &lc, &p.a), 0);
    assert_int_equal(test_loopback_ctx(p.fabric, NULL, 0, &p.b), 0);
    rdps_sub_t *sub;
    rdps_pub_t *pub;
    assert_int_equal(rdps_sub_create(p.b, TOPIC, on_msg, &got, NULL, &sub), 0);
    assert_int_equal(rdps_pub_create(p.a, TOPIC, NULL, &pub), 0);
    for (int i = 0; i < 50 && !rdps_pub_ready(pub); i++)
        TEST_PAIR_PUMP(&p, 1);
    /* The publisher's ctx is not polled: completions are not reaped, the queue fills. */
    uint8_t buf[64];
    unsigned refused = 0;
    for (uint32_t i = 0; i < 400; i++) {
        msg_fill(buf, i, sizeof(buf));
        int rc = rdps_pub_send(pub, buf, sizeof(buf));
        if (rc == RDPS_EAGAIN) {
            refused++;
            assert_true(rdps_ctx_poll(p.a, 0) >= 0);
            i--;
            continue;
        }
        assert_int_equal(rc, 0);
    }
    assert_int_equal(rdps_ctx_flush(p.a), 0);
    TEST_PAIR_PUMP(&p, 3);
    assert_int_equal(got.count, 400);
    assert_int_equal(got.bad, 0);
    for (uint32_t i = 1; i < 400; i++)
        assert_int_equal(got.ordinal[i], got.ordinal[i - 1] + 1);
    rdps_counters c;
    rdps_pub_counters(pub, &c);
    assert_true(c.frames_batched > 0);
    assert_true(c.frames_sent < 400);
    assert_true(refused < 400 / 14); /* at most one refusal per full datagram waiting */
    rdps_pub_destroy(pub);
    rdps_sub_destroy(sub);
    test_pair_close(&p);
}

/* Destroying a publisher sends what it held. */
static void test_destroy_sends_what_was_held(void **state)
{
    (void)state;
    struct fixture f;
    open_with(&f, NULL);
    for (uint32_t i = 0; i < 3; i++)
        send_msg(&f, i, 20, RDPS_SEND_MORE);
    rdps_pub_destroy(f.pub);
    f.pub = NULL;
    assert_true(rdps_ctx_poll(f.p.b, 0) >= 0);
    assert_int_equal(f.got.count, 3);
    close_fixture(&f);
}

/*
 * Unreliable, 20 % of datagrams lost (the loss generator at the subscriber), bursts of batched and
 * fragmented messages of 1..3000 bytes: every message is delivered or counted in a GAP event, the
 * lost tail of each burst too (the publisher's tail heartbeats name what came before them).
 */
struct gap_got {
    struct got got;
    uint64_t gap_msgs, gap_events;
    uint32_t min_ordinal;
    bool any;
};

static void gap_msg(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct gap_got *g = user;
    if (!g->any || (int32_t)(info->ordinal - g->min_ordinal) < 0)
        g->min_ordinal = info->ordinal;
    g->any = true;
    on_msg(&g->got, data, len, info);
}

static void gap_event(void *user, const rdps_event *ev)
{
    struct gap_got *g = user;
    if (ev->type != RDPS_EVENT_GAP)
        return;
    g->gap_events++;
    g->gap_msgs += ev->msg_count;
}

static void test_exact_gap_counts_with_tails(void **state)
{
    (void)state;
    struct test_pair p;
    rdps_config lossy;
    rdps_config_init(&lossy);
    lossy.announce_interval_ms = 1000;
    lossy.loss_rx_rate = 0.2;
    lossy.loss_seed = 7;
    assert_int_equal(test_pair_open(&p, &lossy, 0), 0);
    fake_now = 1000000000ull;
    rdps__ctx_set_clock(p.a, fake_clock, NULL);
    rdps__ctx_set_clock(p.b, fake_clock, NULL);
    struct gap_got remote = {0};
    struct got local = {0};
    rdps_sub_opts so = {.on_event = gap_event, .event_user = &remote};
    rdps_sub_t *sub, *lsub;
    rdps_pub_t *pub;
    assert_int_equal(rdps_sub_create(p.b, TOPIC, gap_msg, &remote, &so, &sub), 0);
    assert_int_equal(rdps_sub_create(p.a, TOPIC, on_msg, &local, NULL, &lsub), 0);
    assert_int_equal(rdps_pub_create(p.a, TOPIC, NULL, &pub), 0);
    for (int i = 0; i < 50 && !rdps_pub_ready(pub); i++)
        TEST_PAIR_PUMP(&p, 1);
    static uint8_t buf[3000];
    uint32_t n = 0, r = 12345;
    for (int burst = 0; burst < 30; burst++) {
        for (int k = 0; k < 40; k++, n++) {
            r = r * 1103515245u + 12345u;
            size_t len = (r >> 8) % 8 == 0 ? 1000 + (r >> 12) % 2001 : 1 + (r >> 12) % 200;
            msg_fill(buf, n, len);
            assert_int_equal(rdps_pub_send_ex(pub, buf, len, k < 39 ? RDPS_SEND_MORE : 0), 0);
        }
        /* The tail heartbeats go 1, 4, 13, 40, 121 and 364 ms after the burst (the first ones
         * fall within these 240 ms). */
        for (int step = 0; step < 4; step++) {
            TEST_PAIR_PUMP(&p, 2);
            fake_now += 60000000ull;
        }
    }
    fake_now += 5000000000ull; /* every reorder allowance and partial timeout over */
    TEST_PAIR_PUMP(&p, 3);
    assert_int_equal(local.count, n);
    assert_true(remote.gap_events > 0);
    assert_true(remote.got.count < n);
    /* Messages before the first datagram that arrived were never the subscriber's to count. */
    uint32_t before = remote.min_ordinal - local.ordinal[0];
    assert_int_equal(remote.got.count + remote.gap_msgs + before, n);
    assert_int_equal(remote.got.bad, 0);
    rdps_counters c;
    rdps_sub_counters(sub, &c);
    assert_int_equal(c.gap_messages, remote.gap_msgs);
    rdps_pub_counters(pub, &c);
    assert_true(c.heartbeats_sent >= 30); /* at least one per burst */
    rdps_sub_destroy(sub);
    rdps_sub_destroy(lsub);
    rdps_pub_destroy(pub);
    test_pair_close(&p);
}

/* Mixed sizes 1..3000 bytes in RDPS_SEND_MORE chains of 16, as rdpub sends unpaced: small ones
 * share datagrams, a long one sends the open datagram and goes in fragments; every message
 * arrives intact and in order, and no datagram is longer than the device takes. */
static void test_mixed_sizes_in_chains(void **state)
{
    (void)state;
    struct fixture f;
    open_with(&f, NULL);
    uint32_t seed = 12345;
    size_t lens[2000];
    for (uint32_t i = 0; i < 2000; i++) {
        seed = seed * 1103515245u + 12345u;
        size_t len = 1 + (seed >> 8) % 3000;
        lens[i] = len;
        unsigned flags = (i + 1) % 16 != 0 ? RDPS_SEND_MORE : 0;
        uint8_t buf[4096];
        msg_fill(buf, i, len);
        int rc;
        while ((rc = rdps_pub_send_ex(f.pub, buf, len, flags)) == RDPS_EAGAIN)
            TEST_PAIR_PUMP(&f.p, 1);
        assert_int_equal(rc, 0);
        if (i % 64 == 63)
            TEST_PAIR_PUMP(&f.p, 2);
    }
    assert_int_equal(rdps_ctx_flush(f.p.a), 0);
    for (int k = 0; k < 50 && f.got.count < 2000; k++)
        TEST_PAIR_PUMP(&f.p, 1);
    assert_int_equal(f.got.count, 2000);
    assert_int_equal(f.got.bad, 0);
    for (uint32_t i = 0; i < 2000; i++) {
        assert_int_equal(f.got.len[i], lens[i]);
        if (i > 0)
            assert_int_equal(f.got.ordinal[i], f.got.ordinal[i - 1] + 1);
    }
    assert_true(PUB_COUNTER(f.pub, frames_batched) > 0);
    close_fixture(&f);
}

/* Delivers what a flush sends to f's subscriber. */
static void flush_and_receive(struct fixture *f)
{
    assert_int_equal(rdps_ctx_flush(f->p.a), 0);
    for (int i = 0; i < 4; i++)
        assert_true(rdps_ctx_poll(f->p.b, 0) >= 0);
}

/* A claim longer than a datagram, outstanding while a datagram is open: sends and short claims
 * get RDPS_EBUSY (their join paths too) until its abort or commit, and what was sent arrives in
 * order. */
static void test_large_claim_holds_the_join_path(void **state)
{
    (void)state;
    struct fixture f;
    open_with(&f, NULL);
    rdps_claim big, c;
    uint8_t buf[64];
    msg_fill(buf, 9, sizeof(buf));
    send_msg(&f, 0, 50, RDPS_SEND_MORE);
    send_msg(&f, 1, 50, RDPS_SEND_MORE); /* joins */
    assert_int_equal(rdps_pub_claim_ex(f.pub, 3000, RDPS_SEND_MORE, &big), 0);
    assert_int_equal(rdps_pub_send_ex(f.pub, buf, 40, RDPS_SEND_MORE), RDPS_EBUSY);
    assert_int_equal(rdps_pub_claim_ex(f.pub, 40, RDPS_SEND_MORE, &c), RDPS_EBUSY);
    rdps_pub_abort(f.pub, &big);
    send_msg(&f, 2, 50, RDPS_SEND_MORE); /* joins again */
    assert_int_equal(rdps_pub_claim_ex(f.pub, 3000, 0, &big), 0);
    msg_fill(big.data, 3, 3000);
    assert_int_equal(rdps_pub_send_ex(f.pub, buf, 40, RDPS_SEND_MORE), RDPS_EBUSY);
    assert_int_equal(rdps_pub_commit(f.pub, &big, 3000), 0);
    send_msg(&f, 4, 50, 0);
    flush_and_receive(&f);
    assert_int_equal(f.got.count, 5);
    assert_int_equal(f.got.bad, 0);
    static const uint32_t lens[5] = {50, 50, 50, 3000, 50};
    for (unsigned i = 0; i < 5; i++) {
        assert_int_equal(f.got.len[i], lens[i]);
        assert_int_equal(f.got.ordinal[i], f.got.ordinal[0] + i);
    }
    close_fixture(&f);
}

/* A claim in the open datagram stays its last record while subscribers of the publisher's own
 * ctx come and go: the join path stays shut until its commit. */
static void test_claim_keeps_the_join_path_shut_as_local_subscribers_change(void **state)
{
    (void)state;
    struct fixture f;
    open_with(&f, NULL);
    rdps_claim c;
    uint8_t buf[64];
    msg_fill(buf, 9, sizeof(buf));
    send_msg(&f, 0, 50, RDPS_SEND_MORE);
    assert_int_equal(rdps_pub_claim_ex(f.pub, 40, RDPS_SEND_MORE, &c), 0);
    struct got local_got = {0};
    rdps_sub_t *local;
    assert_int_equal(rdps_sub_create(f.p.a, TOPIC, on_msg, &local_got, NULL, &local), 0);
    rdps_sub_destroy(local); /* none left: joins would be allowed again, but for the claim */
    assert_int_equal(rdps_pub_send_ex(f.pub, buf, 40, RDPS_SEND_MORE), RDPS_EBUSY);
    msg_fill(c.data, 1, 20);
    assert_int_equal(rdps_pub_commit(f.pub, &c, 20), 0);
    send_msg(&f, 2, 30, RDPS_SEND_MORE); /* joins after the committed record */
    send_msg(&f, 3, 30, 0);
    flush_and_receive(&f);
    assert_int_equal(f.got.count, 4);
    assert_int_equal(f.got.bad, 0);
    static const uint32_t lens[4] = {50, 20, 30, 30};
    for (unsigned i = 0; i < 4; i++) {
        assert_int_equal(f.got.len[i], lens[i]);
        assert_int_equal(f.got.ordinal[i], f.got.ordinal[0] + i);
    }
    close_fixture(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mixed_sizes_in_chains),
        cmocka_unit_test(test_send_more_holds_until_a_send_without_it),
        cmocka_unit_test(test_full_datagrams_and_empty_messages),
        cmocka_unit_test(test_lone_message_goes_at_once),
        cmocka_unit_test(test_messages_join_while_a_send_is_awaited),
        cmocka_unit_test(test_held_datagram_goes_on_flush_and_sleep),
        cmocka_unit_test(test_held_datagram_waits_for_its_completion_at_most_the_cap),
        cmocka_unit_test(test_sender_that_does_not_poll),
        cmocka_unit_test(test_claims_join_while_a_send_is_awaited),
        cmocka_unit_test(test_reliable_joins_while_frames_are_in_flight),
        cmocka_unit_test(test_linger),
        cmocka_unit_test(test_flush_from_a_callback),
        cmocka_unit_test(test_claims_in_the_open_datagram),
        cmocka_unit_test(test_local_subscribers_see_the_same),
        cmocka_unit_test(test_batching_off),
        cmocka_unit_test(test_back_pressure_batches),
        cmocka_unit_test(test_destroy_sends_what_was_held),
        cmocka_unit_test(test_exact_gap_counts_with_tails),
        cmocka_unit_test(test_large_claim_holds_the_join_path),
        cmocka_unit_test(test_claim_keeps_the_join_path_shut_as_local_subscribers_change),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
