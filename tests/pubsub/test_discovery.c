/* SPDX-License-Identifier: BSD-2-Clause */
/* test_discovery.c - announcements round-trip and every invalid field is rejected. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "control.pb-c.h"
#include "discovery.h"

static void make_valid(struct rdps_announce *a)
{
    memset(a, 0, sizeof(*a));
    a->role = RDPS_ROLE_PUBLISHER;
    strcpy(a->topic, "md.equities.AAPL");
    a->topic_id = rdps__topic_hash_id(a->topic);
    a->group = 0xefc01234u;
    a->session_id = 0xdeadbeefu;
    a->qpn = 0x123456;
    a->qkey = 0x01234567;
    for (int i = 0; i < 16; i++)
        a->gid[i] = (uint8_t)(0xf0 + i);
    a->reliable = true;
    a->flow_tag = 0xfeedu;
    a->receiver_id = 0xabcdef01u;
    a->unicast = true;
    a->host = 0xa9fe4d01u;
    a->cm_port = 7471;
    a->pid = 4242;
    a->interval_ms = 1000;
    a->leaving = false;
    a->announce_seq = 0x1122334455667788ull;
}

static void test_round_trip(void **state)
{
    struct rdps_announce in, out;
    uint8_t buf[RDPS_ANNOUNCE_MAX_BYTES];
    (void)state;
    make_valid(&in);
    int len = rdps__announce_encode(&in, buf, sizeof(buf));
    assert_true(len > 0);
    assert_int_equal(rdps__announce_decode(buf, (size_t)len, &out), 0);
    assert_int_equal(out.role, in.role);
    assert_string_equal(out.topic, in.topic);
    assert_int_equal(out.topic_id, in.topic_id);
    assert_int_equal(out.group, in.group);
    assert_int_equal(out.session_id, in.session_id);
    assert_int_equal(out.qpn, in.qpn);
    assert_int_equal(out.qkey, in.qkey);
    assert_memory_equal(out.gid, in.gid, 16);
    assert_true(out.reliable);
    assert_int_equal(out.flow_tag, 0xfeedu);
    assert_int_equal(out.receiver_id, 0xabcdef01u);
    assert_true(out.unicast);
    assert_int_equal(out.host, in.host);
    assert_int_equal(out.cm_port, in.cm_port);
    assert_int_equal(out.pid, in.pid);
    assert_int_equal(out.interval_ms, in.interval_ms);
    assert_false(out.leaving);
    assert_true(out.announce_seq == in.announce_seq);

    in.role = RDPS_ROLE_SUBSCRIBER;
    in.leaving = true;
    in.host = 0;
    len = rdps__announce_encode(&in, buf, sizeof(buf));
    assert_int_equal(rdps__announce_decode(buf, (size_t)len, &out), 0);
    assert_int_equal(out.role, RDPS_ROLE_SUBSCRIBER);
    assert_true(out.leaving);
    assert_int_equal(out.host, 0);
}

static void test_encode_needs_room(void **state)
{
    struct rdps_announce in;
    uint8_t buf[16];
    (void)state;
    make_valid(&in);
    assert_int_equal(rdps__announce_encode(&in, buf, sizeof(buf)), RDPS_ENOSPC);
}

/* Packs a raw protobuf message with one field spoiled and expects rejection. */
static void expect_rejected(void (*spoil)(Rdps__Announce *m))
{
    Rdps__Announce m = RDPS__ANNOUNCE__INIT;
    uint8_t gid[16] = {0};
    uint8_t buf[1024];
    struct rdps_announce out;

    m.role = RDPS__ANNOUNCE__ROLE__SUBSCRIBER;
    m.topic = (char *)"t";
    m.topic_id = rdps__topic_hash_id("t");
    m.group = (char *)"239.192.0.9";
    m.session_id = 7;
    m.qpn = 99;
    m.gid.data = gid;
    m.gid.len = 16;
    m.host = (char *)"169.254.77.1";
    /* The unspoiled message is valid, so each rejection below is the spoiled field's. */
    size_t len = rdps__announce__pack(&m, buf);
    assert_int_equal(rdps__announce_decode(buf, len, &out), 0);
    spoil(&m);
    len = rdps__announce__pack(&m, buf);
    assert_int_equal(rdps__announce_decode(buf, len, &out), RDPS_EBADFRAME);
}

static void spoil_role(Rdps__Announce *m)
{
    m->role = RDPS__ANNOUNCE__ROLE__ROLE_UNSPECIFIED;
}
static void spoil_topic(Rdps__Announce *m)
{
    m->topic = (char *)"";
}
static void spoil_topic_chars(Rdps__Announce *m)
{
    m->topic = (char *)"a b";
}
static void spoil_topic_id(Rdps__Announce *m)
{
    m->topic_id ^= 1;
}
static void spoil_group(Rdps__Announce *m)
{
    m->group = (char *)"10.1.1.1";
}
static void spoil_group_text(Rdps__Announce *m)
{
    m->group = (char *)"nonsense";
}
static void spoil_session(Rdps__Announce *m)
{
    m->session_id = 0;
}
static void spoil_qpn(Rdps__Announce *m)
{
    m->qpn = 0x1000000;
}
static void spoil_gid(Rdps__Announce *m)
{
    m->gid.len = 4;
}
static void spoil_port(Rdps__Announce *m)
{
    m->cm_port = 70000;
}
static void spoil_host(Rdps__Announce *m)
{
    m->host = (char *)"host.example";
}

static void test_invalid_fields_rejected(void **state)
{
    (void)state;
    expect_rejected(spoil_role);
    expect_rejected(spoil_topic);
    expect_rejected(spoil_topic_chars);
    expect_rejected(spoil_topic_id);
    expect_rejected(spoil_group);
    expect_rejected(spoil_group_text);
    expect_rejected(spoil_session);
    expect_rejected(spoil_qpn);
    expect_rejected(spoil_gid);
    expect_rejected(spoil_port);
    expect_rejected(spoil_host);
}

static void test_garbage_rejected(void **state)
{
    struct rdps_announce out;
    uint8_t junk[RDPS_ANNOUNCE_MAX_BYTES + 1];
    (void)state;
    memset(junk, 0xff, sizeof(junk));
    assert_int_equal(rdps__announce_decode(junk, 10, &out), RDPS_EBADFRAME);
    assert_int_equal(rdps__announce_decode(junk, sizeof(junk), &out), RDPS_EBADFRAME);
    assert_int_equal(rdps__announce_decode(junk, 0, &out), RDPS_EBADFRAME); /* no role */
    /* Every truncation of a valid message is either rejected or decodes to a valid one. */
    struct rdps_announce in;
    uint8_t buf[RDPS_ANNOUNCE_MAX_BYTES];
    make_valid(&in);
    int len = rdps__announce_encode(&in, buf, sizeof(buf));
    for (int cut = 0; cut < len; cut++) {
        int rc = rdps__announce_decode(buf, (size_t)cut, &out);
        assert_true(rc == 0 || rc == RDPS_EBADFRAME);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_encode_needs_room),
        cmocka_unit_test(test_invalid_fields_rejected),
        cmocka_unit_test(test_garbage_rejected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
