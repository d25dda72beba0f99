/* SPDX-License-Identifier: BSD-2-Clause */
/* test_batch.c - several messages in one datagram: the writer's open datagram at every boundary,
 * what the decoder makes of it, and the reader's walk. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <string.h>

#include <rdps/rdps.h>

#include "rdps_batch.h"
#include "rdps_frame.h"

#define DGRAM   1024u
#define PAYLOAD (DGRAM - RDPS_FRAME_HEADER_LEN)

/* Message i of a test: its length and bytes. */
static void fill(uint8_t *p, uint32_t len, uint32_t i)
{
    for (uint32_t k = 0; k < len; k++)
        p[k] = (uint8_t)(i * 31 + k);
}

/* Adds message i of len bytes to b (which fits it). */
static void add(struct rdps_batch *b, uint32_t len, uint32_t i)
{
    assert_true(rdps__batch_fits(b, len));
    fill(rdps__batch_add(b, len), len, i);
}

/* Closes b as a datagram of messages [first, first + count) and decodes it: the payload walks to
 * exactly the lengths given, each message's bytes intact. */
static void check_datagram(struct rdps_batch *b, const uint32_t *lens, uint32_t count,
                           uint32_t ordinal)
{
    assert_int_equal(b->count, count);
    uint32_t flen = rdps__frame_put_data_header(b->frame, 7, 9, 42, b->used, 0, b->used, 1, 0,
                                                ordinal, b->count);
    assert_int_equal(flen, rdps__batch_frame_len(b));
    assert_true(flen <= b->cap);
    struct rdps_frame_view v;
    assert_int_equal(rdps__frame_decode(b->frame, flen, NULL, &v), RDPS_FRAME_OK);
    assert_int_equal(v.hdr.count, count);
    assert_int_equal(v.hdr.ordinal, ordinal);
    assert_int_equal(v.hdr.flags, RDPS_FRAME_F_BEGIN | RDPS_FRAME_F_END);
    uint8_t want[PAYLOAD];
    if (count == 1) { /* one message is the payload itself */
        assert_int_equal(v.payload_len, lens[0]);
        fill(want, lens[0], 0);
        assert_memory_equal(v.payload, want, lens[0]);
        return;
    }
    struct rdps_batch_iter it;
    rdps__batch_iter_init(&it, v.payload);
    for (uint32_t i = 0; i < count; i++) {
        uint32_t len;
        const uint8_t *msg = rdps__batch_next(&it, &len);
        assert_int_equal(len, lens[i]);
        fill(want, len, i);
        if (len > 0)
            assert_memory_equal(msg, want, len);
    }
    assert_ptr_equal(it.at, v.payload + v.payload_len);
}

/* A lone message pays nothing: it fills the whole payload, with no length. */
static void test_one_message_is_the_payload(void **state)
{
    (void)state;
    static uint8_t frame[DGRAM];
    struct rdps_batch b;
    rdps__batch_open(&b, frame, DGRAM);
    assert_int_equal(rdps__batch_room(&b), PAYLOAD);
    assert_true(rdps__batch_fits(&b, PAYLOAD));
    assert_false(rdps__batch_fits(&b, PAYLOAD + 1));
    uint32_t lens[1] = {PAYLOAD};
    add(&b, PAYLOAD, 0);
    assert_int_equal(rdps__batch_room(&b), 0);
    assert_false(rdps__batch_fits(&b, 0)); /* not even an empty one: no room for two lengths */
    check_datagram(&b, lens, 1, 100);
}

/* The second message makes both records: it fits exactly when the two lengths fit too, and one
 * byte over does not; the first message is moved, not lost. */
static void test_two_messages_at_the_boundary(void **state)
{
    (void)state;
    static uint8_t frame[DGRAM];
    for (uint32_t first = 0; first <= PAYLOAD - 4; first += 97) {
        struct rdps_batch b;
        rdps__batch_open(&b, frame, DGRAM);
        add(&b, first, 0);
        uint32_t exact = PAYLOAD - first - 2 * RDPS_BATCH_LEN_BYTES;
        assert_int_equal(rdps__batch_room(&b), exact);
        assert_false(rdps__batch_fits(&b, exact + 1));
        add(&b, exact, 1);
        assert_int_equal(b.used, PAYLOAD);
        assert_int_equal(rdps__batch_room(&b), 0);
        uint32_t lens[2] = {first, exact};
        check_datagram(&b, lens, 2, 0xFFFFFFFFu); /* ordinals wrap */
    }
    /* A first message too long to share: only a zero-length second one... and not even that. */
    struct rdps_batch b;
    rdps__batch_open(&b, frame, DGRAM);
    add(&b, PAYLOAD - 3, 0);
    assert_false(rdps__batch_fits(&b, 0));
    rdps__batch_open(&b, frame, DGRAM);
    add(&b, PAYLOAD - 4, 0);
    assert_true(rdps__batch_fits(&b, 0));
    assert_false(rdps__batch_fits(&b, 1));
}

/* Later messages take their length's two bytes each; a full datagram of 0-byte messages. */
static void test_many_messages_and_empty_ones(void **state)
{
    (void)state;
    static uint8_t frame[DGRAM];
    struct rdps_batch b;
    uint32_t lens[PAYLOAD / 2];
    rdps__batch_open(&b, frame, DGRAM);
    uint32_t n = 0;
    while (rdps__batch_fits(&b, 0)) {
        lens[n] = 0;
        add(&b, 0, n);
        n++;
    }
    assert_int_equal(n, PAYLOAD / RDPS_BATCH_LEN_BYTES);
    assert_int_equal(b.used, PAYLOAD);
    check_datagram(&b, lens, n, 5);
    /* Mixed sizes until full, then the exact remainder. */
    rdps__batch_open(&b, frame, DGRAM);
    n = 0;
    for (uint32_t len = 1; rdps__batch_fits(&b, len); len = len * 3 % 97 + 1) {
        lens[n] = len;
        add(&b, len, n);
        n++;
    }
    uint32_t rest = rdps__batch_room(&b);
    assert_true(rdps__batch_fits(&b, rest));
    assert_false(rdps__batch_fits(&b, rest + 1));
    lens[n] = rest;
    add(&b, rest, n);
    n++;
    assert_int_equal(b.used, PAYLOAD);
    check_datagram(&b, lens, n, 1000);
}

/* A claim committed shorter, and one aborted: the datagram is as if only the others were added. */
static void test_shrink_and_remove_last(void **state)
{
    (void)state;
    static uint8_t frame[DGRAM];
    struct rdps_batch b;
    rdps__batch_open(&b, frame, DGRAM);
    /* The first message claimed whole, committed shorter. */
    uint8_t *p = rdps__batch_add(&b, PAYLOAD);
    fill(p, 10, 0);
    rdps__batch_shrink_last(&b, PAYLOAD, 10);
    add(&b, 20, 1);
    uint8_t *q = rdps__batch_add(&b, 300); /* the third, claimed for 300, 7 committed */
    fill(q, 7, 2);
    rdps__batch_shrink_last(&b, 300, 7);
    uint32_t lens[3] = {10, 20, 7};
    check_datagram(&b, lens, 3, 77);
    /* Aborted: the third goes; then the second: the first is the payload again. */
    rdps__batch_open(&b, frame, DGRAM);
    add(&b, 10, 0);
    add(&b, 20, 1);
    (void)rdps__batch_add(&b, 50);
    rdps__batch_remove_last(&b, 50);
    check_datagram(&b, lens, 2, 77);
    rdps__batch_remove_last(&b, 20);
    check_datagram(&b, lens, 1, 77);
    rdps__batch_remove_last(&b, 10);
    assert_int_equal(b.count, 0);
    assert_int_equal(b.used, 0);
}

/* A datagram smaller than the MTU (a keyed ctx, a parity stream) bounds the room the same way. */
static void test_small_capacity(void **state)
{
    (void)state;
    static uint8_t frame[DGRAM];
    struct rdps_batch b;
    rdps__batch_open(&b, frame, RDPS_FRAME_HEADER_LEN + 10);
    assert_int_equal(rdps__batch_room(&b), 10);
    add(&b, 3, 0);
    assert_int_equal(rdps__batch_room(&b), 3); /* 10 - 3 - 2 x 2 */
    add(&b, 3, 1);
    assert_int_equal(rdps__batch_room(&b), 0);
    uint32_t lens[2] = {3, 3};
    check_datagram(&b, lens, 2, 1);
    rdps__batch_open(&b, frame, RDPS_FRAME_HEADER_LEN);
    assert_int_equal(rdps__batch_room(&b), 0);
    assert_true(rdps__batch_fits(&b, 0)); /* one empty message: a header-only datagram */
}

/* The ordinals around a datagram: what a run of lost datagrams before or after it can hold. */
static void test_ordinal_bounds(void **state)
{
    (void)state;
    struct rdps_frame_header h = {.type = RDPS_FRAME_DATA, .ordinal = 10};
    h.flags = RDPS_FRAME_F_BEGIN | RDPS_FRAME_F_END;
    h.count = 3; /* messages 10, 11, 12 */
    assert_int_equal(rdps__frame_ordinal_before(&h), 10);
    assert_int_equal(rdps__frame_ordinal_after(&h), 13);
    h.count = 0;
    h.flags = RDPS_FRAME_F_BEGIN; /* the first fragment of message 10 */
    assert_int_equal(rdps__frame_ordinal_before(&h), 10);
    assert_int_equal(rdps__frame_ordinal_after(&h), 10);
    h.flags = 0; /* a middle fragment: a run on either side holds message 10 */
    assert_int_equal(rdps__frame_ordinal_before(&h), 11);
    assert_int_equal(rdps__frame_ordinal_after(&h), 10);
    h.flags = RDPS_FRAME_F_END; /* the last */
    assert_int_equal(rdps__frame_ordinal_before(&h), 11);
    assert_int_equal(rdps__frame_ordinal_after(&h), 11);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_message_is_the_payload),
        cmocka_unit_test(test_two_messages_at_the_boundary),
        cmocka_unit_test(test_many_messages_and_empty_ones),
        cmocka_unit_test(test_shrink_and_remove_last),
        cmocka_unit_test(test_small_capacity),
        cmocka_unit_test(test_ordinal_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
