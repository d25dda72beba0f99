/* SPDX-License-Identifier: BSD-2-Clause */
/* test_pubsub_loopback.c - the public pub/sub API end to end over the in-memory loopback transport.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "pubsub_test_util.h"

#define PAYLOAD LOOPBACK_PAYLOAD

struct received {
    unsigned count;
    size_t last_len;
    uint8_t *last;
    uint32_t last_fragments;
    uint32_t last_session;
    unsigned corrupt; /* messages whose bytes do not match fill_message */
    unsigned events[4];
};

static void fill_message(uint8_t *buf, size_t len, unsigned salt)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = (uint8_t)(i * 31u + salt + (i >> 8));
}

static bool message_ok(const uint8_t *buf, size_t len, unsigned salt)
{
    for (size_t i = 0; i < len; i++)
        if (buf[i] != (uint8_t)(i * 31u + salt + (i >> 8)))
            return false;
    return true;
}

static void on_message(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct received *r = user;
    r->count++;
    free(r->last);
    r->last = malloc(len ? len : 1);
    memcpy(r->last, data, len);
    r->last_len = len;
    r->last_fragments = info->fragments;
    r->last_session = info->session_id;
    if (len >= 1 && !message_ok(data, len, ((const uint8_t *)data)[0]))
        r->corrupt++;
}

static void on_event(void *user, const rdps_event *ev)
{
    struct received *r = user;
    if ((unsigned)ev->type < 4)
        r->events[ev->type]++;
}

static int make_ctx(struct rdps_loopback_fabric *fabric, const rdps_config *cfg_in,
                    rdps_ctx_t **out)
{
    rdps_config cfg;
    if (cfg_in)
        cfg = *cfg_in;
    else
        rdps_config_init(&cfg);
    cfg.announce_interval_ms = 1000; /* long enough that no peer expires while a test runs */
    return test_loopback_ctx(fabric, &cfg, 0, out);
}

static int setup(void **state)
{
    struct test_pair *f = calloc(1, sizeof(*f));
    assert_int_equal(test_pair_open(f, NULL, 0), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    test_pair_close(*state);
    free(*state);
    return 0;
}

static void test_sizes_end_to_end(void **state)
{
    struct test_pair *f = *state;
    struct received r = {0};
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    const size_t sizes[] = {0,           1,           PAYLOAD - 1, PAYLOAD,
                            PAYLOAD + 1, 3 * PAYLOAD, 1u << 20,    16u << 20};
    assert_int_equal(rdps_sub_create(f->b, "md.sizes", on_message, &r, NULL, &sub), 0);
    assert_int_equal(rdps_pub_create(f->a, "md.sizes", NULL, &pub), 0);
    TEST_PAIR_PUMP(f, 2);
    assert_true(rdps_pub_ready(pub));
    assert_true(rdps_sub_ready(sub));
    assert_int_equal(rdps_ctx_max_datagram_payload(f->a), PAYLOAD);

    uint8_t *buf = malloc(16u << 20);
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        unsigned before = r.count;
        fill_message(buf, sizes[i], (unsigned)i + 1);
        if (sizes[i] > 0)
            buf[0] = (uint8_t)(i + 1); /* on_message re-derives the salt from byte 0 */
        fill_message(buf, sizes[i], buf[0]);
        TEST_PAIR_SEND_OK(f, pub, buf, sizes[i]);
        /* Each poll handles a bounded batch: a 16 MiB message takes a few hundred. */
        for (int round = 0; round < 1000 && r.count == before; round++)
            TEST_PAIR_PUMP(f, 1);
        assert_int_equal(r.count, before + 1);
        assert_int_equal(r.last_len, sizes[i]);
        assert_memory_equal(r.last, buf, sizes[i]);
        uint32_t frames = sizes[i] == 0 ? 1 : (uint32_t)((sizes[i] + PAYLOAD - 1) / PAYLOAD);
        assert_int_equal(r.last_fragments, frames);
        assert_int_equal(r.last_session, rdps_pub_session(pub));
    }
    /* One byte above the maximum is refused and nothing is sent. */
    rdps_counters c;
    rdps_pub_counters(pub, &c);
    uint64_t frames_before = c.frames_sent;
    assert_int_equal(rdps_pub_send(pub, buf, (16u << 20) + 1), RDPS_EMSGSIZE);
    rdps_pub_counters(pub, &c);
    assert_int_equal(c.frames_sent, frames_before);
    assert_int_equal(c.msgs_sent, sizeof(sizes) / sizeof(sizes[0]));
    /* Everything sent was reaped by the polls above. */
    assert_int_equal(rdps_ctx_sends_pending(f->a), 0);
    assert_int_equal(r.corrupt, 0);
    free(buf);
    free(r.last);
}

static void test_topics_sharing_a_group_are_filtered(void **state)
{
    struct test_pair *f = *state;
    struct received wanted = {0}, other = {0};
    rdps_pub_t *pub;
    rdps_sub_t *s1, *s2;
    rdps_sub_opts same_group = {.group = "239.192.7.7"};
    rdps_pub_opts pub_group = {.group = "239.192.7.7"};
    assert_int_equal(rdps_sub_create(f->b, "topic.one", on_message, &wanted, &same_group, &s1), 0);
    assert_int_equal(rdps_sub_create(f->b, "topic.two", on_message, &other, &same_group, &s2), 0);
    assert_int_equal(rdps_pub_create(f->a, "topic.one", &pub_group, &pub), 0);
    TEST_PAIR_PUMP(f, 2);
    uint8_t msg[100];
    msg[0] = 5;
    fill_message(msg, sizeof(msg), 5);
    for (int i = 0; i < 20; i++)
        TEST_PAIR_SEND_OK(f, pub, msg, sizeof(msg));
    TEST_PAIR_PUMP(f, 3);
    assert_int_equal(wanted.count, 20);
    assert_int_equal(other.count, 0);
    free(wanted.last);
}

/*
 * Issue 27 row 2: two names that had the same 32-bit topic id. What a subscriber of one name
 * receives: the messages published on its name, each tagged with its name and 64-bit id.
 */
#define NAME_X "md.quotes.1722382"
#define NAME_Y "md.quotes.1539599"

struct by_name {
    const char *name; /* the subscriber's topic */
    unsigned own, other, wrong_info;
};

static void on_named_message(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct by_name *r = user;
    /* Every message carries the name it was published on. */
    if (len == strlen(r->name) && memcmp(data, r->name, len) == 0)
        r->own++;
    else
        r->other++;
    if (strcmp(info->topic, r->name) != 0 || info->topic_id != rdps_topic_id(r->name))
        r->wrong_info++;
}

static void send_names(struct test_pair *f, rdps_pub_t *pub, const char *name, int count)
{
    for (int i = 0; i < count; i++)
        TEST_PAIR_SEND_OK(f, pub, name, strlen(name));
}

/*
 * The subscriber of `sub_name` lives in sub_ctx, a publisher of `other_name` in other_ctx (the
 * other context, or the subscriber's own), a publisher of `sub_name` in the context that does
 * not publish the other name.
 */
static void check_names_apart(struct test_pair *f, rdps_ctx_t *sub_ctx, rdps_ctx_t *other_ctx,
                              const char *sub_name, const char *other_name)
{
    struct by_name r = {.name = sub_name};
    rdps_sub_t *sub;
    rdps_pub_t *own_pub, *other_pub;
    rdps_ctx_t *own_ctx = other_ctx == f->a ? f->b : f->a;
    assert_int_equal(rdps_sub_create(sub_ctx, sub_name, on_named_message, &r, NULL, &sub), 0);
    assert_int_equal(rdps_pub_create(other_ctx, other_name, NULL, &other_pub), 0);
    assert_int_equal(rdps_pub_create(own_ctx, sub_name, NULL, &own_pub), 0);
    TEST_PAIR_PUMP(f, 3);
    send_names(f, other_pub, other_name, 10);
    send_names(f, own_pub, sub_name, 5);
    send_names(f, other_pub, other_name, 10);
    TEST_PAIR_PUMP(f, 5);
    assert_int_equal(r.other, 0);
    assert_int_equal(r.own, 5);
    assert_int_equal(r.wrong_info, 0);
    rdps_counters c;
    rdps_ctx_counters(sub_ctx, &c);
    if (other_ctx != sub_ctx)
        assert_true(c.unknown_topic >= 2); /* the other name's frames (two bursts, batched),
                                              dropped by id */
    rdps_pub_destroy(own_pub);
    rdps_pub_destroy(other_pub);
    rdps_sub_destroy(sub);
    TEST_PAIR_PUMP(f, 2);
}

static void test_names_with_equal_32bit_ids_stay_apart(void **state)
{
    struct test_pair *f = *state;
    char gx[16], gy[16];
    /* The premise: the same group on the fabric, so only the topic id tells them apart. */
    assert_int_equal(rdps_topic_group(f->a, NAME_X, gx, sizeof(gx)), 0);
    assert_int_equal(rdps_topic_group(f->a, NAME_Y, gy, sizeof(gy)), 0);
    assert_string_equal(gx, gy);
    check_names_apart(f, f->b, f->a, NAME_Y,
                      NAME_X); /* publisher of X in a, subscriber of Y in b */
    check_names_apart(f, f->b, f->a, NAME_X, NAME_Y); /* the reverse */
    check_names_apart(f, f->a, f->a, NAME_Y, NAME_X); /* the other name published in one ctx */
    check_names_apart(f, f->b, f->b, NAME_X, NAME_Y);
}

static void test_local_subscriber_gets_messages_once(void **state)
{
    struct test_pair *f = *state;
    struct received local = {0}, remote = {0};
    rdps_pub_t *pub;
    rdps_sub_t *s_local, *s_remote;
    assert_int_equal(rdps_sub_create(f->a, "loop", on_message, &local, NULL, &s_local), 0);
    assert_int_equal(rdps_sub_create(f->b, "loop", on_message, &remote, NULL, &s_remote), 0);
    assert_int_equal(rdps_pub_create(f->a, "loop", NULL, &pub), 0);
    TEST_PAIR_PUMP(f, 2);
    uint8_t msg[3000];
    msg[0] = 9;
    fill_message(msg, sizeof(msg), 9);
    for (int i = 0; i < 10; i++)
        TEST_PAIR_SEND_OK(f, pub, msg, sizeof(msg));
    TEST_PAIR_PUMP(f, 5);
    assert_int_equal(local.count, 10);
    assert_int_equal(remote.count, 10);
    rdps_counters c;
    rdps_ctx_counters(f->a, &c);
    assert_true(c.own_frames > 0); /* the fabric's multicast copy came back and was dropped */
    free(local.last);
    free(remote.last);
}

static void test_discovery_counts_and_events(void **state)
{
    struct test_pair *f = *state;
    struct received r = {0};
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    rdps_sub_opts opts = {.on_event = on_event};
    assert_int_equal(rdps_pub_create(f->a, "disc", NULL, &pub), 0);
    assert_int_equal(rdps_sub_create(f->b, "disc", on_message, &r, &opts, &sub), 0);
    TEST_PAIR_PUMP(f, 3);
    assert_int_equal(rdps_pub_subscriber_count(pub), 1);
    assert_int_equal(r.events[RDPS_EVENT_PUBLISHER_SEEN], 1);
    rdps_pub_destroy(pub);
    TEST_PAIR_PUMP(f, 3);
    assert_int_equal(r.events[RDPS_EVENT_PUBLISHER_GONE], 1);
    rdps_sub_destroy(sub);
}

static void test_claim_commit(void **state)
{
    struct test_pair *f = *state;
    struct received r = {0};
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    rdps_claim claim;
    assert_int_equal(rdps_sub_create(f->b, "zc", on_message, &r, NULL, &sub), 0);
    assert_int_equal(rdps_pub_create(f->a, "zc", NULL, &pub), 0);
    TEST_PAIR_PUMP(f, 2);
    assert_int_equal(rdps_pub_claim(pub, &claim), 0);
    assert_int_equal(claim.capacity, PAYLOAD);
    uint8_t *p = claim.data;
    p[0] = 3;
    fill_message(p, 200, 3);
    assert_int_equal(rdps_pub_commit(pub, &claim, 200), 0);
    TEST_PAIR_PUMP(f, 2);
    assert_int_equal(r.count, 1);
    assert_int_equal(r.last_len, 200);
    assert_int_equal(r.corrupt, 0);
    /* Too long a commit is refused and the buffer returned. */
    assert_int_equal(rdps_pub_claim(pub, &claim), 0);
    assert_int_equal(rdps_pub_commit(pub, &claim, PAYLOAD + 1), RDPS_EMSGSIZE);
    assert_int_equal(rdps_pub_claim(pub, &claim), 0);
    rdps_pub_abort(pub, &claim);
    free(r.last);
}

static void test_backpressure_is_reported(void **state)
{
    struct test_pair *f = *state;
    struct received r = {0};
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    rdps_pub_t *holders[64];
    rdps_claim held[64];
    uint8_t msg[64] = {7};
    assert_int_equal(rdps_sub_create(f->b, "bp", on_message, &r, NULL, &sub), 0);
    assert_int_equal(rdps_pub_create(f->a, "bp", NULL, &pub), 0);
    for (int i = 0; i < 64; i++) /* a publisher lends one claim at a time */
        assert_int_equal(rdps_pub_create(f->a, "bp.hold", NULL, &holders[i]), 0);
    TEST_PAIR_PUMP(f, 2);
    /* Hold every send buffer of the pool (64): the next send must refuse, not block. */
    for (int i = 0; i < 64; i++)
        assert_int_equal(rdps_pub_claim(holders[i], &held[i]), 0);
    rdps_claim one_more;
    assert_int_equal(rdps_pub_claim(pub, &one_more), RDPS_EAGAIN);
    assert_int_equal(rdps_pub_send(pub, msg, sizeof(msg)), RDPS_EAGAIN);
    assert_int_equal(rdps_pub_send(pub, msg, 5000),
                     RDPS_EAGAIN); /* multi-frame: nothing half-sent */
    rdps_counters c;
    rdps_pub_counters(pub, &c);
    assert_int_equal(c.send_backpressure, 3);
    assert_int_equal(c.msgs_sent, 0);
    TEST_PAIR_PUMP(f, 2);
    assert_int_equal(r.count, 0);
    for (int i = 0; i < 64; i++)
        rdps_pub_abort(holders[i], &held[i]);
    assert_int_equal(rdps_pub_send(pub, msg, sizeof(msg)), 0);
    TEST_PAIR_PUMP(f, 2);
    assert_int_equal(r.count, 1);
    free(r.last);
}

static void test_bad_arguments(void **state)
{
    struct test_pair *f = *state;
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    rdps_pub_opts bad_group = {.group = "10.0.0.1"};
    rdps_pub_opts bad_flow = {.reliable = 1, .flow = (rdps_flow_control)7};
    rdps_pub_opts tag_missing = {.reliable = 1, .flow = RDPS_FLOW_TAGGED};
    rdps_pub_opts tiny_ring = {.reliable = 1, .ring_bytes = 4096};
    assert_int_equal(rdps_pub_create(f->a, "", NULL, &pub), RDPS_EINVAL);
    assert_int_equal(rdps_pub_create(f->a, "has space", NULL, &pub), RDPS_EINVAL);
    assert_int_equal(rdps_pub_create(f->a, "t", &bad_group, &pub), RDPS_EINVAL);
    assert_int_equal(rdps_pub_create(f->a, "t", &bad_flow, &pub), RDPS_EINVAL);
    assert_int_equal(rdps_pub_create(f->a, "t", &tag_missing, &pub), RDPS_EINVAL);
    assert_int_equal(rdps_pub_create(f->a, "t", &tiny_ring, &pub), RDPS_EINVAL);
    assert_int_equal(rdps_sub_create(f->a, "t", NULL, NULL, NULL, &sub), RDPS_EINVAL);
    assert_int_equal(rdps_pub_create(NULL, "t", NULL, &pub), RDPS_EINVAL);
    assert_true(strlen(rdps_last_error_message()) > 0);
}

/* The topic name rules of rdps.h, the same for every call that takes a name. */
static void test_topic_name_rules(void **state)
{
    struct test_pair *f = *state;
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    char group[16], longest[RDPS_TOPIC_NAME_MAX + 2];
    memset(longest, 'n', RDPS_TOPIC_NAME_MAX);
    longest[RDPS_TOPIC_NAME_MAX] = '\0';
    static const char *const good[] = {"!", "~", "md.quotes.AAPL", "A/b:c#1"};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        assert_true(rdps_topic_id(good[i]) != 0);
    assert_true(rdps_topic_id(longest) != 0);
    assert_int_equal(rdps_pub_create(f->a, longest, NULL, &pub), 0);
    rdps_pub_destroy(pub);
    longest[RDPS_TOPIC_NAME_MAX] = 'n'; /* 256 bytes */
    longest[RDPS_TOPIC_NAME_MAX + 1] = '\0';
    const char *const bad[] = {NULL,          "",        "a b",  "tab\there",
                               "caf\xc3\xa9", "del\x7f", "nl\n", longest};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_true(rdps_topic_id(bad[i]) == 0);
        assert_int_equal(rdps_pub_create(f->a, bad[i], NULL, &pub), RDPS_EINVAL);
        assert_non_null(strstr(rdps_last_error_message(), "topic name"));
        assert_int_equal(rdps_sub_create(f->a, bad[i], on_message, NULL, NULL, &sub), RDPS_EINVAL);
        assert_non_null(strstr(rdps_last_error_message(), "topic name"));
        assert_int_equal(rdps_ctx_map_topic(f->a, bad[i], "239.192.9.9"), RDPS_EINVAL);
        assert_int_equal(rdps_topic_group(f->a, bad[i], group, sizeof(group)), RDPS_EINVAL);
    }
}

/*
 * Two names with the same 64-bit id (tests/pubsub/test_topic.c tells how they were found)
 * cannot both be used in one ctx: the second is refused with both names in the message.
 */
static void test_names_with_equal_ids_refused_in_one_ctx(void **state)
{
    struct test_pair *f = *state;
    static const char a[] = "md.quotes.8MlN5CIm0nE", b[] = "md.quotes.DceKDt0TJc6";
    rdps_pub_t *pub, *pub_b;
    rdps_sub_t *sub;
    char ga[16], gb[16];
    assert_true(rdps_topic_id(a) == rdps_topic_id(b));
    assert_int_equal(rdps_ctx_map_topic(f->a, a, "239.192.9.9"), 0);
    assert_int_equal(rdps_pub_create(f->a, a, NULL, &pub), 0);
    assert_int_equal(rdps_sub_create(f->a, b, on_message, NULL, NULL, &sub), RDPS_EEXIST);
    assert_non_null(strstr(rdps_last_error_message(), a));
    assert_non_null(strstr(rdps_last_error_message(), b));
    assert_int_equal(rdps_pub_create(f->a, b, NULL, &pub_b), RDPS_EEXIST);
    assert_int_equal(rdps_ctx_map_topic(f->a, b, "239.192.9.10"), RDPS_EEXIST);
    /* Each name keeps its own group: b's is its hash, not a's mapping. */
    assert_int_equal(rdps_topic_group(f->a, a, ga, sizeof(ga)), 0);
    assert_int_equal(rdps_topic_group(f->a, b, gb, sizeof(gb)), 0);
    assert_string_equal(ga, "239.192.9.9");
    assert_string_not_equal(gb, "239.192.9.9");
    /* Another ctx may use the other name (discovery then reports the collision). */
    assert_int_equal(rdps_sub_create(f->b, b, on_message, NULL, NULL, &sub), 0);
    rdps_pub_destroy(pub);
    assert_int_equal(rdps_pub_create(f->a, b, NULL, &pub_b), RDPS_EEXIST); /* a is still mapped */
    rdps_sub_destroy(sub);
}

/*
 * Options that cannot apply are refused with RDPS_EINVAL and a message naming the option, never
 * ignored (issue 27 row 11: an unreliable publisher took ring_bytes, flow, flow_tag,
 * flow_min_receivers and receiver_timeout_ms and did nothing with them; a reliable one took a
 * flow_tag without RDPS_FLOW_TAGGED and a flow_min_receivers no table could meet; an unreliable
 * subscriber took from_oldest and flow_tag). Nothing is created, and the topic stays usable.
 */
static void test_options_that_cannot_apply(void **state)
{
    struct test_pair *f = *state;
    struct received r = {0};
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    struct {
        rdps_pub_opts opts;
        const char *says;
    } bad_pub[] = {
        {{.ring_bytes = 1u << 20}, "ring_bytes needs a reliable publisher (opts.reliable = 1)"},
        {{.flow = RDPS_FLOW_MIN}, "flow needs a reliable publisher"},
        {{.flow = RDPS_FLOW_TAGGED, .flow_tag = 3}, "flow needs a reliable publisher"},
        {{.flow_tag = 3}, "flow_tag needs a reliable publisher"},
        {{.flow_min_receivers = 2}, "flow_min_receivers needs a reliable publisher"},
        {{.receiver_timeout_ms = 100}, "receiver_timeout_ms needs a reliable publisher"},
        {{.rate_limit = 1000000}, "rate_limit needs a reliable publisher"},
        {{.reliable = 1, .flow = (rdps_flow_control)7}, "flow 7 is not a flow control mode"},
        {{.reliable = 1, .flow = (rdps_flow_control)-1}, "flow -1 is not a flow control mode"},
        {{.reliable = 1, .flow = RDPS_FLOW_TAGGED}, "RDPS_FLOW_TAGGED needs a nonzero flow_tag"},
        {{.reliable = 1, .flow = RDPS_FLOW_MIN, .flow_tag = 5},
         "flow_tag needs flow = RDPS_FLOW_TAGGED"},
        {{.reliable = 1, .flow_min_receivers = 2},
         "flow_min_receivers needs flow = RDPS_FLOW_TAGGED"},
        {{.reliable = 1, .flow = RDPS_FLOW_TAGGED, .flow_tag = 5, .flow_min_receivers = 257},
         "flow_min_receivers 257 can never be met"},
        {{.reliable = 1, .ring_bytes = 4096}, "ring_bytes 4096 outside 64 KiB..4 GiB"},
    };
    for (size_t i = 0; i < sizeof(bad_pub) / sizeof(bad_pub[0]); i++) {
        pub = (rdps_pub_t *)&pub; /* not NULL: create must clear it */
        assert_int_equal(rdps_pub_create(f->a, "opts", &bad_pub[i].opts, &pub), RDPS_EINVAL);
        assert_null(pub);
        if (strstr(rdps_last_error_message(), bad_pub[i].says) == NULL)
            fail_msg("case %zu: '%s' does not say '%s'", i, rdps_last_error_message(),
                     bad_pub[i].says);
        assert_non_null(strstr(rdps_last_error_message(), "rdps_pub_create: "));
    }
    struct {
        rdps_sub_opts opts;
        const char *says;
    } bad_sub[] = {
        {{.from_oldest = 1}, "from_oldest needs a reliable subscriber (opts.reliable = 1)"},
        {{.flow_tag = 9}, "flow_tag needs a reliable subscriber"},
    };
    for (size_t i = 0; i < sizeof(bad_sub) / sizeof(bad_sub[0]); i++) {
        assert_int_equal(rdps_sub_create(f->b, "opts", on_message, &r, &bad_sub[i].opts, &sub),
                         RDPS_EINVAL);
        assert_null(sub);
        if (strstr(rdps_last_error_message(), bad_sub[i].says) == NULL)
            fail_msg("sub case %zu: '%s' does not say '%s'", i, rdps_last_error_message(),
                     bad_sub[i].says);
    }

    /* What applies is taken: the edges of each range, and every option where it belongs. */
    rdps_pub_opts good_pub[] = {
        {.group = "239.192.9.9"},
        {.reliable = 1, .flow = RDPS_FLOW_TAGGED, .flow_tag = 5, .flow_min_receivers = 256},
        {.reliable = 1, .flow = RDPS_FLOW_MIN, .receiver_timeout_ms = 100, .rate_limit = 1000000},
        {.reliable = 1, .ring_bytes = 64u * 1024u},
    };
    for (size_t i = 0; i < sizeof(good_pub) / sizeof(good_pub[0]); i++) {
        assert_int_equal(rdps_pub_create(f->a, "opts", &good_pub[i], &pub), 0);
        rdps_pub_destroy(pub);
    }
    rdps_sub_opts good_sub = {.reliable = 1, .from_oldest = 1, .flow_tag = 9};
    assert_int_equal(rdps_sub_create(f->b, "opts", on_message, &r, &good_sub, &sub), 0);
    rdps_sub_destroy(sub);
}

static void test_config_validation(void **state)
{
    struct test_pair *f = *state;
    rdps_config cfg;
    rdps_ctx_t *ctx;
    rdps_config_init(&cfg);
    cfg.group_range = "10.0.0.0/8";
    assert_int_equal(make_ctx(f->fabric, &cfg, &ctx), RDPS_EINVAL);
    rdps_config_init(&cfg);
    cfg.control_group = "1.2.3.4";
    assert_int_equal(make_ctx(f->fabric, &cfg, &ctx), RDPS_EINVAL);
    rdps_config_init(&cfg);
    cfg.loss_rx_rate = 1.5;
    assert_int_equal(make_ctx(f->fabric, &cfg, &ctx), RDPS_EINVAL);
    rdps_config_init(&cfg);
    cfg.bind_ip = "not-an-ip";
    assert_int_equal(make_ctx(f->fabric, &cfg, &ctx), RDPS_EINVAL);
    rdps_config_init(&cfg);
    cfg.recv_slots = 1;
    assert_int_equal(make_ctx(f->fabric, &cfg, &ctx), RDPS_EINVAL);
    assert_non_null(strstr(rdps_last_error_message(), "recv_slots"));
}

static void test_bad_frames_are_counted(void **state)
{
    struct test_pair *f = *state;
    struct received r = {0};
    rdps_sub_t *sub;
    const struct rdps_dest *group;
    assert_int_equal(rdps_sub_create(f->b, "hostile", on_message, &r, NULL, &sub), 0);
    TEST_PAIR_PUMP(f, 2);
    /* Raw garbage from ctx a's transport to the topic's group. */
    char gtext[16];
    assert_int_equal(rdps_topic_group(f->b, "hostile", gtext, sizeof(gtext)), 0);
    uint32_t g;
    assert_int_equal(rdps__mcast_addr_parse(gtext, &g), 0);
    assert_int_equal(rdps__loopback_group_dest(f->fabric, g, &group), 0);
    uint8_t junk[64];
    for (unsigned i = 0; i < 50; i++) {
        memset(junk, (int)i, sizeof(junk));
        junk[0] = (uint8_t)(i % 3); /* versions 0..2: 1 is valid, then garbage fields */
        assert_int_equal(
            rdps__ctx_send_frame(rdps__ctx_of_handle(f->a), group, junk, 1 + i % sizeof(junk)), 0);
    }
    TEST_PAIR_PUMP(f, 3);
    rdps_counters c;
    rdps_ctx_counters(f->b, &c);
    assert_int_equal(c.bad_frames, 50);
    assert_int_equal(r.count, 0);
}

static void test_receive_loss_delivers_only_intact_messages(void **state)
{
    struct test_pair *f = *state;
    struct received r = {0};
    rdps_config cfg;
    rdps_ctx_t *lossy;
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    rdps_sub_opts opts = {.on_event = on_event};

    rdps_config_init(&cfg);
    cfg.loss_rx_rate = 0.10;
    cfg.loss_seed = 42;
    assert_int_equal(make_ctx(f->fabric, &cfg, &lossy), 0);
    assert_int_equal(rdps_sub_create(lossy, "lossy", on_message, &r, &opts, &sub), 0);
    assert_int_equal(rdps_pub_create(f->a, "lossy", NULL, &pub), 0);
    for (int i = 0; i < 3; i++) {
        TEST_PAIR_PUMP(f, 1);
        rdps_ctx_poll(lossy, 0);
    }
    uint8_t *buf = malloc(20000);
    const int messages = 400;
    for (int i = 0; i < messages; i++) {
        size_t len = 1 + (size_t)(i * 7919) % 20000; /* 1..20 datagrams */
        buf[0] = (uint8_t)(i | 1);
        fill_message(buf, len, buf[0]);
        TEST_PAIR_SEND_OK(f, pub, buf, len);
        for (int k = 0; k < 2; k++)
            rdps_ctx_poll(lossy, 0);
    }
    for (int k = 0; k < 20; k++)
        rdps_ctx_poll(lossy, 0);
    rdps_counters c;
    rdps_sub_counters(sub, &c);
    assert_true(c.loss_dropped_rx > 0);
    assert_true(r.count > 0 && r.count < (unsigned)messages);
    assert_int_equal(r.corrupt, 0);
    assert_true(c.gaps > 0);
    assert_true(r.events[RDPS_EVENT_GAP] > 0);
    rdps_ctx_destroy(lossy);
    free(buf);
    free(r.last);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_sizes_end_to_end, setup, teardown),
        cmocka_unit_test_setup_teardown(test_topics_sharing_a_group_are_filtered, setup, teardown),
        cmocka_unit_test_setup_teardown(test_names_with_equal_32bit_ids_stay_apart, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_local_subscriber_gets_messages_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_discovery_counts_and_events, setup, teardown),
        cmocka_unit_test_setup_teardown(test_claim_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_backpressure_is_reported, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_topic_name_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(test_names_with_equal_ids_refused_in_one_ctx, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_options_that_cannot_apply, setup, teardown),
        cmocka_unit_test_setup_teardown(test_config_validation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_frames_are_counted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_receive_loss_delivers_only_intact_messages, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
