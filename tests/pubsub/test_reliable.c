/* test_reliable.c - reliable publishers and subscribers through the public API over loopback. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "pubsub_test_util.h"

struct inbox {
    unsigned count, out_of_order, corrupt;
    uint32_t next_index;
};

/* Message i: 4-byte index, then bytes derived from it. */
static size_t make_message(uint8_t *buf, uint32_t i, size_t len)
{
    memcpy(buf, &i, 4);
    for (size_t k = 4; k < len; k++)
        buf[k] = (uint8_t)(i * 7u + k);
    return len;
}

static void on_message(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct inbox *in = user;
    const uint8_t *b = data;
    uint32_t i;
    (void)info;
    assert_true(len >= 4);
    memcpy(&i, b, 4);
    for (size_t k = 4; k < len; k++)
        if (b[k] != (uint8_t)(i * 7u + k)) {
            in->corrupt++;
            break;
        }
    if (i != in->next_index)
        in->out_of_order++;
    in->next_index = i + 1;
    in->count++;
}

static int setup(void **state)
{
    struct test_pair *f = calloc(1, sizeof(*f));
    assert_int_equal(rdps__loopback_fabric_create(&f->fabric), 0);
    assert_int_equal(test_loopback_ctx(f->fabric, NULL, 0, &f->a), 0);
    assert_int_equal(test_loopback_ctx(f->fabric, NULL, 0, &f->b), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct test_pair *f = *state;
    rdps_ctx_destroy(f->a);
    rdps_ctx_destroy(f->b);
    rdps__loopback_fabric_destroy(f->fabric);
    free(f);
    return 0;
}

/* A reliable publisher's frames are ordinary DATA to a subscriber: all arrive, in order. */
static void test_reliable_publisher_to_plain_subscriber(void **state)
{
    struct test_pair *f = *state;
    struct inbox in = {0};
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    rdps_pub_opts popts = {.reliable = 1, .ring_bytes = 1u << 20};
    assert_int_equal(rdps_sub_create(f->b, "rel.plain", on_message, &in, NULL, &sub), 0);
    assert_int_equal(rdps_pub_create(f->a, "rel.plain", &popts, &pub), 0);
    TEST_PAIR_PUMP(f, 3);
    uint8_t buf[5000];
    for (uint32_t i = 0; i < 3000; i++) {
        size_t len = make_message(buf, i, 4 + (i * 37u) % (sizeof(buf) - 4));
        TEST_PAIR_SEND_OK(f, pub, buf, len);
        if (i % 8 == 0)
            TEST_PAIR_PUMP(f, 1);
    }
    for (int r = 0; r < 100 && in.count < 3000; r++)
        TEST_PAIR_PUMP(f, 1);
    assert_int_equal(in.count, 3000);
    assert_int_equal(in.out_of_order, 0);
    assert_int_equal(in.corrupt, 0);
    rdps_counters c;
    rdps_pub_counters(pub, &c);
    assert_int_equal(c.msgs_sent, 3000);
    assert_true(c.frames_sent >= 3000);
    assert_int_equal(c.retransmits, 0);
    /* The ring went round several times (1 MiB for ~7.5 MB of messages). */
    assert_true(c.frame_bytes_sent > 4u << 20);
    rdps_pub_destroy(pub);
    rdps_sub_destroy(sub);
}

/* An idle reliable publisher sends heartbeats, backing off. */
static void test_idle_reliable_publisher_heartbeats(void **state)
{
    struct test_pair *f = *state;
    rdps_pub_t *pub;
    rdps_pub_opts popts = {.reliable = 1, .ring_bytes = 1u << 20};
    assert_int_equal(rdps_pub_create(f->a, "rel.idle", &popts, &pub), 0);
    TEST_PAIR_PUMP(f, 3);
    TEST_PAIR_SEND_OK(f, pub, "x", 1);
    for (int i = 0; i < 200; i++)
        assert_true(rdps_ctx_wait(f->a, 1) >= 0);
    rdps_counters c;
    rdps_pub_counters(pub, &c);
    assert_true(c.heartbeats_sent >= 3); /* 100 us doubling: several in ~200 ms */
    assert_true(c.heartbeats_sent < 40); /* and backing off, not one per poll */
    rdps_pub_destroy(pub);
}

static void test_reliable_claim_is_refused(void **state)
{
    struct test_pair *f = *state;
    rdps_pub_t *pub;
    rdps_claim claim;
    rdps_pub_opts popts = {.reliable = 1, .ring_bytes = 1u << 20};
    assert_int_equal(rdps_pub_create(f->a, "rel.claim", &popts, &pub), 0);
    TEST_PAIR_PUMP(f, 3);
    assert_int_equal(rdps_pub_claim(pub, &claim), RDPS_ENOTSUP);
    rdps_pub_destroy(pub);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_reliable_publisher_to_plain_subscriber, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_idle_reliable_publisher_heartbeats, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reliable_claim_is_refused, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
