/* SPDX-License-Identifier: BSD-2-Clause */
/* test_callbacks.c - the API called from inside its own callbacks, NULL handles, and what a
 * subscriber learns about the sender (issue 7 rows 2, 3, 5, 9, 10). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "pubsub_test_util.h"

static int setup(void **state)
{
    struct test_pair *f = calloc(1, sizeof(*f));
    /* Few receive slots: a receive path that stops re-posting buffers runs dry quickly. */
    assert_int_equal(test_pair_open(f, NULL, 256), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    test_pair_close(*state);
    free(*state);
    return 0;
}

/* ---- row 2: rdps_ctx_poll / rdps_ctx_wait from a callback ---- */

struct relay {
    rdps_ctx_t *ctx;
    rdps_pub_t *out;
    unsigned received, nested_busy, nested_other;
};

/* A relay as the README's retry loop writes it: republish, polling through back-pressure. */
static void relay_on_message(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct relay *r = user;
    (void)info;
    r->received++;
    int rc = rdps_ctx_poll(r->ctx, 0);
    if (rc == RDPS_EBUSY)
        r->nested_busy++;
    else
        r->nested_other++;
    rc = rdps_ctx_wait(r->ctx, 0);
    if (rc == RDPS_EBUSY)
        r->nested_busy++;
    else
        r->nested_other++;
    while ((rc = rdps_pub_send(r->out, data, len)) == RDPS_EAGAIN)
        rdps_ctx_poll(r->ctx, 0);
    assert_int_equal(rc, 0);
}

static void count_on_message(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    (void)data;
    (void)len;
    (void)info;
    (*(unsigned *)user)++;
}

static void test_nested_poll_is_refused_and_relay_works(void **state)
{
    struct test_pair *f = *state;
    struct relay relay = {.ctx = f->b};
    unsigned relayed = 0;
    rdps_pub_t *in;
    rdps_sub_t *relay_sub, *final_sub;
    assert_int_equal(rdps_pub_create(f->a, "relay.in", NULL, &in), 0);
    assert_int_equal(rdps_pub_create(f->b, "relay.out", NULL, &relay.out), 0);
    assert_int_equal(rdps_sub_create(f->b, "relay.in", relay_on_message, &relay, NULL, &relay_sub),
                     0);
    assert_int_equal(
        rdps_sub_create(f->a, "relay.out", count_on_message, &relayed, NULL, &final_sub), 0);
    TEST_PAIR_PUMP(f, 3);
    /* Several times the receive ring: buffers must keep coming back to the receive queue. */
    char msg[64] = "relay me";
    for (int i = 0; i < 2000; i++) {
        TEST_PAIR_SEND_OK(f, in, msg, sizeof(msg));
        if (i % 16 == 15)
            TEST_PAIR_PUMP(f, 2);
    }
    TEST_PAIR_PUMP(f, 10);
    assert_int_equal(relay.received, 2000);
    assert_int_equal(relay.nested_busy, 2 * 2000);
    assert_int_equal(relay.nested_other, 0);
    assert_int_equal(relayed, 2000);
    rdps_counters c;
    rdps_ctx_counters(f->b, &c);
    assert_int_equal(c.bad_frames, 0);
}

/* ---- row 3: destroying handles from callbacks ---- */

struct destroyer {
    rdps_sub_t **victim_sub; /* destroyed at the first message */
    rdps_pub_t **victim_pub;
    rdps_ctx_t *victim_ctx;
    unsigned calls;
};

static void destroy_on_message(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct destroyer *d = user;
    (void)data;
    (void)len;
    (void)info;
    d->calls++;
    if (d->victim_sub && *d->victim_sub) {
        rdps_sub_destroy(*d->victim_sub);
        /* A handle destroyed from a callback is not ready (calls on it return ECLOSED) until the
         * callback returns. */
        assert_int_equal(rdps_sub_ready(*d->victim_sub), 0);
        *d->victim_sub = NULL;
    }
    if (d->victim_pub && *d->victim_pub) {
        rdps_pub_destroy(*d->victim_pub);
        assert_int_equal(rdps_pub_send(*d->victim_pub, "x", 1), RDPS_ECLOSED);
        *d->victim_pub = NULL;
    }
    if (d->victim_ctx) {
        rdps_ctx_destroy(d->victim_ctx);
        d->victim_ctx = NULL;
    }
}

static void test_destroy_other_subscriber_of_same_topic(void **state)
{
    struct test_pair *f = *state;
    rdps_pub_t *pub;
    rdps_sub_t *s1, *s2, *s3;
    struct destroyer d1 = {0}, d2 = {0}, d3 = {0};
    /* Subscribers are called newest first: s3 destroys s2 (next in line), s2 must not run. */
    assert_int_equal(rdps_sub_create(f->b, "same", destroy_on_message, &d1, NULL, &s1), 0);
    assert_int_equal(rdps_sub_create(f->b, "same", destroy_on_message, &d2, NULL, &s2), 0);
    d3.victim_sub = &s2;
    assert_int_equal(rdps_sub_create(f->b, "same", destroy_on_message, &d3, NULL, &s3), 0);
    d1.victim_sub = &s1; /* s1 destroys itself */
    assert_int_equal(rdps_pub_create(f->a, "same", NULL, &pub), 0);
    TEST_PAIR_PUMP(f, 3);
    TEST_PAIR_SEND_OK(f, pub, "m1", 2);
    TEST_PAIR_SEND_OK(f, pub, "m2", 2);
    TEST_PAIR_PUMP(f, 3);
    assert_int_equal(d3.calls, 2);
    assert_int_equal(d2.calls, 0);
    assert_int_equal(d1.calls, 1);
    assert_null(s1);
    assert_null(s2);
    /* The topic and its group are still alive for s3. */
    TEST_PAIR_SEND_OK(f, pub, "m3", 2);
    TEST_PAIR_PUMP(f, 3);
    assert_int_equal(d3.calls, 3);
    rdps_sub_destroy(s3);
}

static void test_destroy_other_topic_publisher_and_local_subscriber(void **state)
{
    struct test_pair *f = *state;
    rdps_pub_t *pub, *other_pub;
    rdps_sub_t *sub, *other_sub, *local_sub;
    struct destroyer d = {0}, other = {0}, local = {0};
    unsigned other_count = 0;
    (void)other_count;
    assert_int_equal(rdps_sub_create(f->b, "t.one", destroy_on_message, &d, NULL, &sub), 0);
    assert_int_equal(rdps_sub_create(f->b, "t.two", destroy_on_message, &other, NULL, &other_sub),
                     0);
    assert_int_equal(rdps_pub_create(f->b, "t.two", NULL, &other_pub), 0);
    d.victim_sub = &other_sub;
    d.victim_pub = &other_pub;
    assert_int_equal(rdps_pub_create(f->a, "t.one", NULL, &pub), 0);
    TEST_PAIR_PUMP(f, 3);
    TEST_PAIR_SEND_OK(f, pub, "go", 2);
    TEST_PAIR_PUMP(f, 3);
    assert_int_equal(d.calls, 1);
    assert_null(other_sub);
    assert_null(other_pub);

    /* Local delivery inside rdps_pub_send: the callback destroys the sending publisher. */
    rdps_pub_t *local_pub;
    assert_int_equal(rdps_pub_create(f->a, "t.local", NULL, &local_pub), 0);
    assert_int_equal(rdps_sub_create(f->a, "t.local", destroy_on_message, &local, NULL, &local_sub),
                     0);
    local.victim_pub = &local_pub;
    TEST_PAIR_PUMP(f, 3);
    rdps_pub_t *sending = local_pub;
    assert_int_equal(rdps_pub_send(sending, "self", 4), 0);
    assert_null(local_pub);
    assert_int_equal(local.calls, 1);
    rdps_sub_destroy(local_sub);
    rdps_sub_destroy(sub);
    rdps_pub_destroy(pub);
}

static void test_destroy_ctx_from_callback(void **state)
{
    struct test_pair *f = *state;
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    struct destroyer d = {.victim_ctx = f->b};
    assert_int_equal(rdps_sub_create(f->b, "bye", destroy_on_message, &d, NULL, &sub), 0);
    assert_int_equal(rdps_pub_create(f->a, "bye", NULL, &pub), 0);
    TEST_PAIR_PUMP(f, 3);
    TEST_PAIR_SEND_OK(f, pub, "a", 1);
    TEST_PAIR_SEND_OK(f, pub, "b", 1);
    assert_int_equal(rdps_ctx_poll(f->b, 0), RDPS_ECLOSED);
    f->b = NULL; /* freed by that poll */
    assert_int_equal(d.calls, 1);
    assert_true(rdps_ctx_poll(f->a, 0) >= 0);
}

/* ---- row 9: commit respects max_message_size ---- */

static void test_commit_respects_max_message_size(void **state)
{
    struct test_pair *f = *state;
    rdps_config cfg;
    rdps_ctx_t *small;
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    unsigned got = 0;
    rdps_config_init(&cfg);
    cfg.max_message_size = 100;
    assert_int_equal(test_loopback_ctx(f->fabric, &cfg, 256, &small), 0);
    assert_int_equal(rdps_pub_create(small, "small", NULL, &pub), 0);
    assert_int_equal(rdps_sub_create(small, "small", count_on_message, &got, NULL, &sub), 0);
    for (int i = 0; i < 3; i++)
        rdps_ctx_poll(small, 0);
    rdps_claim claim;
    assert_int_equal(rdps_pub_claim(pub, &claim), 0);
    assert_int_equal(claim.capacity, 100);
    memset(claim.data, 1, 100);
    claim.capacity = LOOPBACK_PAYLOAD; /* a caller that ignores the capacity it was given */
    assert_int_equal(rdps_pub_commit(pub, &claim, 101), RDPS_EMSGSIZE);
    assert_int_equal(got, 0);
    assert_int_equal(rdps_pub_claim(pub, &claim), 0);
    assert_int_equal(rdps_pub_commit(pub, &claim, 100), 0);
    assert_int_equal(got, 1);
    rdps_ctx_destroy(small);
}

/* ---- row 10: NULL handles ---- */

static void test_null_handles(void **state)
{
    (void)state;
    rdps_counters c;
    rdps_claim claim = {0};
    assert_int_equal(rdps_ctx_poll(NULL, 0), RDPS_EINVAL);
    assert_int_equal(rdps_ctx_wait(NULL, 0), RDPS_EINVAL);
    assert_int_equal(rdps_ctx_flush(NULL), RDPS_EINVAL);
    assert_int_equal(rdps_ctx_fd(NULL), RDPS_EINVAL);
    assert_int_equal(rdps_ctx_next_timeout_ms(NULL), 0); /* never a negative timeout */
    assert_int_equal(rdps_ctx_sends_pending(NULL), 0);   /* queries read 0: nothing pending */
    assert_int_equal(rdps_ctx_max_datagram_payload(NULL), 0);
    assert_int_equal(rdps_ctx_counters(NULL, &c), RDPS_EINVAL);
    assert_int_equal(rdps_ctx_map_topic(NULL, "t", "239.1.1.1"), RDPS_EINVAL);
    assert_int_equal(rdps_topic_group(NULL, "t", (char[16]){0}, 16), RDPS_EINVAL);
    rdps_ctx_destroy(NULL);
    assert_int_equal(rdps_pub_send(NULL, "x", 1), RDPS_EINVAL);
    assert_int_equal(rdps_pub_send_ex(NULL, "x", 1, 0), RDPS_EINVAL);
    assert_int_equal(rdps_pub_claim(NULL, &claim), RDPS_EINVAL);
    assert_int_equal(rdps_pub_commit(NULL, &claim, 0), RDPS_EINVAL);
    rdps_pub_abort(NULL, &claim);
    assert_int_equal(rdps_pub_ready(NULL), 0);
    assert_int_equal(rdps_pub_session(NULL), 0);
    assert_int_equal(rdps_pub_subscriber_count(NULL), 0);
    assert_int_equal(rdps_pub_receivers_behind(NULL), 0);
    assert_int_equal(rdps_pub_counters(NULL, &c), RDPS_EINVAL);
    rdps_pub_destroy(NULL);
    assert_int_equal(rdps_sub_ready(NULL), 0);
    assert_int_equal(rdps_sub_counters(NULL, &c), RDPS_EINVAL);
    rdps_sub_destroy(NULL);
}

static void test_null_arguments_with_live_handles(void **state)
{
    struct test_pair *f = *state;
    rdps_pub_t *pub;
    assert_int_equal(rdps_pub_create(f->a, "nulls", NULL, &pub), 0);
    TEST_PAIR_PUMP(f, 2);
    assert_int_equal(rdps_pub_send(pub, NULL, 5), RDPS_EINVAL);
    assert_int_equal(rdps_pub_send(pub, NULL, 0), 0); /* an empty message needs no buffer */
    assert_int_equal(rdps_pub_claim(pub, NULL), RDPS_EINVAL);
    assert_int_equal(rdps_ctx_counters(f->a, NULL), RDPS_EINVAL);
    rdps_pub_destroy(pub);
}

/* ---- row 5: the source of every message and event ---- */

struct source_seen {
    rdps_source msg_source, event_source;
    unsigned msgs, events;
};

static void source_on_message(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct source_seen *s = user;
    (void)data;
    (void)len;
    s->msg_source = info->source;
    s->msgs++;
}

static void source_on_event(void *user, const rdps_event *ev)
{
    struct source_seen *s = user;
    if (ev->type == RDPS_EVENT_PUBLISHER_SEEN) {
        s->event_source = ev->source;
        s->events++;
    }
}

static void test_messages_and_events_carry_the_source(void **state)
{
    struct test_pair *f = *state;
    struct source_seen seen = {0}, local = {0};
    rdps_pub_t *pub;
    rdps_sub_t *sub, *local_sub;
    rdps_sub_opts opts = {.on_event = source_on_event};
    assert_int_equal(rdps_sub_create(f->b, "who", source_on_message, &seen, &opts, &sub), 0);
    assert_int_equal(rdps_sub_create(f->a, "who", source_on_message, &local, NULL, &local_sub), 0);
    assert_int_equal(rdps_pub_create(f->a, "who", NULL, &pub), 0);
    TEST_PAIR_PUMP(f, 3);
    TEST_PAIR_SEND_OK(f, pub, "hello", 5);
    uint8_t big[3000] = {0};
    TEST_PAIR_SEND_OK(f, pub, big, sizeof(big)); /* reassembled messages too */
    TEST_PAIR_PUMP(f, 3);
    assert_int_equal(seen.msgs, 2);
    assert_int_equal(local.msgs, 2);
    assert_int_equal(seen.events, 1);
    assert_int_equal(seen.msg_source.qpn, rdps__ctx_of_handle(f->a)->self_qpn);
    assert_int_equal(seen.msg_source.has_gid, 1);
    assert_memory_equal(seen.msg_source.gid, rdps__ctx_of_handle(f->a)->self_gid, 16);
    assert_memory_equal(&local.msg_source, &seen.msg_source, sizeof(rdps_source));
    assert_memory_equal(&seen.event_source, &seen.msg_source, sizeof(rdps_source));
    rdps_sub_destroy(sub);
    rdps_sub_destroy(local_sub);
    rdps_pub_destroy(pub);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_nested_poll_is_refused_and_relay_works, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_destroy_other_subscriber_of_same_topic, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_destroy_other_topic_publisher_and_local_subscriber,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_destroy_ctx_from_callback, setup, teardown),
        cmocka_unit_test_setup_teardown(test_commit_respects_max_message_size, setup, teardown),
        cmocka_unit_test(test_null_handles),
        cmocka_unit_test_setup_teardown(test_null_arguments_with_live_handles, setup, teardown),
        cmocka_unit_test_setup_teardown(test_messages_and_events_carry_the_source, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
