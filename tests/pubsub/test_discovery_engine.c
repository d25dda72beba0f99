/* SPDX-License-Identifier: BSD-2-Clause */
/* test_discovery_engine.c - the sans-IO discovery engine on a fake clock: expiry, leave, forged
 * leaves and updates from other sources, interval clamping, the table caps, counts, events. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "discovery_engine.h"

#define MS 1000000ull

struct harness {
    struct rdps_discovery d;
    struct rdps_announce sent[64];
    unsigned sent_count;
    bool refuse_sends;
    bool drop_local_on_gone; /* the application removes its subscriber 0xa0ca1 on the first GONE */
    bool drop_local_on_collision; /* ... or on the first TOPIC_COLLISION */
    struct rdps_disc_event events[64];
    char event_topics[64][RDPS_TOPIC_NAME_MAX + 1];
    char event_others[64][RDPS_TOPIC_NAME_MAX + 1];
    unsigned event_count;
};

static void check(const struct harness *h)
{
    const char *why = NULL;
    if (rdps__disc_check(&h->d, &why) != 0)
        fail_msg("discovery state inconsistent: %s", why);
}

static int on_send(void *user, const struct rdps_announce *a)
{
    struct harness *h = user;
    if (h->refuse_sends)
        return RDPS_ENOTJOINED;
    if (h->sent_count < 64)
        h->sent[h->sent_count] = *a;
    h->sent_count++;
    return 0;
}

static void on_event(void *user, const struct rdps_disc_event *ev)
{
    struct harness *h = user;
    if (h->event_count < 64) {
        h->events[h->event_count] = *ev;
        strcpy(h->event_topics[h->event_count], ev->topic);
        h->events[h->event_count].topic = h->event_topics[h->event_count];
        if (ev->other_topic != NULL) {
            strcpy(h->event_others[h->event_count], ev->other_topic);
            h->events[h->event_count].other_topic = h->event_others[h->event_count];
        }
    }
    h->event_count++;
    if ((h->drop_local_on_gone && ev->type == RDPS_DISC_PEER_GONE) ||
        (h->drop_local_on_collision && ev->type == RDPS_DISC_TOPIC_COLLISION)) {
        h->drop_local_on_gone = h->drop_local_on_collision = false;
        rdps__disc_local_remove(&h->d, RDPS_ROLE_SUBSCRIBER, 0xa0ca1);
        check(h);
    }
}

static struct harness *setup_with(uint32_t max_peers, uint32_t max_remote_only)
{
    static struct harness h;
    struct rdps_disc_config cfg;
    memset(&h, 0, sizeof(h));
    rdps__disc_config_default(&cfg);
    cfg.max_peers = max_peers;
    cfg.max_remote_only = max_remote_only;
    cfg.min_interval_ms = 10;
    cfg.max_interval_ms = 60000;
    cfg.announce_interval_ms = 1000;
    cfg.hash_seed = 0x1234;
    cfg.send = on_send;
    cfg.on_event = on_event;
    cfg.user = &h;
    assert_int_equal(rdps__disc_init(&h.d, &cfg), 0);
    return &h;
}

static int setup(void **state)
{
    *state = setup_with(16, 4);
    return 0;
}

static int teardown(void **state)
{
    struct harness *h = *state;
    check(h);
    rdps__disc_fini(&h->d);
    return 0;
}

static struct rdps_source source(uint8_t host, uint32_t qpn)
{
    struct rdps_source s;
    memset(&s, 0, sizeof(s));
    s.gid[10] = 0xff;
    s.gid[11] = 0xff;
    s.gid[12] = 169;
    s.gid[13] = 254;
    s.gid[15] = host;
    s.has_gid = 1;
    s.qpn = qpn;
    return s;
}

static struct rdps_announce ann(enum rdps_announce_role role, const char *topic, uint32_t session,
                                uint32_t interval_ms)
{
    struct rdps_announce a;
    memset(&a, 0, sizeof(a));
    a.role = role;
    snprintf(a.topic, sizeof(a.topic), "%s", topic);
    a.topic_id = rdps__topic_hash_id(a.topic);
    a.group = 0xefc00005u;
    a.session_id = session;
    a.qpn = 0x11;
    a.interval_ms = interval_ms;
    return a;
}

/* Makes `topic` local with one subscriber of ours (session 0xa0ca1). */
static void local_sub(struct harness *h, const char *topic, uint64_t now)
{
    struct rdps_announce a = ann(RDPS_ROLE_SUBSCRIBER, topic, 0xa0ca1, 1000);
    assert_int_equal(rdps__disc_local_add(&h->d, &a, now), 0);
}

static uint32_t remote(const struct harness *h, const char *topic, enum rdps_announce_role role)
{
    return rdps__disc_remote_count(&h->d, rdps__topic_hash_id(topic), topic, role);
}

static void test_seen_then_expired_after_three_intervals(void **state)
{
    struct harness *h = *state;
    struct rdps_source a = source(1, 0x100);
    local_sub(h, "md.x", 0);
    struct rdps_announce p = ann(RDPS_ROLE_PUBLISHER, "md.x", 77, 100);
    rdps__disc_on_announce(&h->d, &a, &p, 0);
    assert_int_equal(h->event_count, 1);
    assert_int_equal(h->events[0].type, RDPS_DISC_PEER_SEEN);
    assert_int_equal(h->events[0].session_id, 77);
    assert_memory_equal(&h->events[0].source, &a, sizeof(a)); /* events carry the announcer */
    assert_string_equal(h->events[0].topic, "md.x");
    assert_int_equal(remote(h, "md.x", RDPS_ROLE_PUBLISHER), 1);

    /* A refresh at 200 ms moves the deadline to 500 ms. */
    rdps__disc_on_announce(&h->d, &a, &p, 200 * MS);
    assert_true(rdps__disc_tick(&h->d, 499 * MS) <= 500 * MS);
    assert_int_equal(rdps__disc_peer_count(&h->d), 1);
    check(h);
    rdps__disc_tick(&h->d, 500 * MS);
    assert_int_equal(rdps__disc_peer_count(&h->d), 0);
    assert_int_equal(remote(h, "md.x", RDPS_ROLE_PUBLISHER), 0);
    assert_int_equal(h->event_count, 2);
    assert_int_equal(h->events[1].type, RDPS_DISC_PEER_GONE);
    assert_true(h->events[1].expired);
    assert_memory_equal(&h->events[1].source, &a, sizeof(a));
    assert_int_equal(rdps__disc_counters(&h->d)->peers_expired, 1);
}

static void test_leave_removes_and_tells(void **state)
{
    struct harness *h = *state;
    struct rdps_source a = source(1, 0x100);
    local_sub(h, "md.x", 0);
    struct rdps_announce p = ann(RDPS_ROLE_PUBLISHER, "md.x", 77, 1000);
    rdps__disc_on_announce(&h->d, &a, &p, 0);
    p.leaving = true;
    rdps__disc_on_announce(&h->d, &a, &p, 10 * MS);
    assert_int_equal(rdps__disc_peer_count(&h->d), 0);
    assert_int_equal(h->event_count, 2);
    assert_int_equal(h->events[1].type, RDPS_DISC_PEER_GONE);
    assert_false(h->events[1].expired);
    assert_int_equal(rdps__disc_counters(&h->d)->peers_left, 1);
    /* Leaving again: nothing left to remove, refused and counted. */
    rdps__disc_on_announce(&h->d, &a, &p, 20 * MS);
    assert_int_equal(rdps__disc_counters(&h->d)->refused_unknown_leave, 1);
    assert_int_equal(h->event_count, 2);
}

/* Issue 7 row 5: a leaving with a real peer's session and role from another host is refused. */
static void test_foreign_leave_refused(void **state)
{
    struct harness *h = *state;
    struct rdps_source real = source(1, 0x100), forger = source(66, 0x100);
    struct rdps_source same_host_other_qp = source(1, 0x101);
    local_sub(h, "md.x", 0);
    struct rdps_announce sub = ann(RDPS_ROLE_SUBSCRIBER, "md.x", 0x5b, 1000);
    struct rdps_announce pub = ann(RDPS_ROLE_PUBLISHER, "md.x", 0x9b, 1000);
    rdps__disc_on_announce(&h->d, &real, &sub, 0);
    rdps__disc_on_announce(&h->d, &real, &pub, 0);
    assert_int_equal(remote(h, "md.x", RDPS_ROLE_SUBSCRIBER), 1);
    unsigned events = h->event_count;

    sub.leaving = pub.leaving = true;
    rdps__disc_on_announce(&h->d, &forger, &sub, 1 * MS);
    rdps__disc_on_announce(&h->d, &forger, &pub, 1 * MS);
    rdps__disc_on_announce(&h->d, &same_host_other_qp, &pub, 1 * MS);
    rdps__disc_on_announce(&h->d, NULL, &pub, 1 * MS);
    assert_int_equal(rdps__disc_counters(&h->d)->refused_unknown_leave, 4);
    assert_int_equal(remote(h, "md.x", RDPS_ROLE_SUBSCRIBER), 1);
    assert_int_equal(remote(h, "md.x", RDPS_ROLE_PUBLISHER), 1);
    assert_int_equal(h->event_count, events); /* no PUBLISHER_GONE */

    rdps__disc_on_announce(&h->d, &real, &pub, 2 * MS); /* the real one can leave */
    assert_int_equal(remote(h, "md.x", RDPS_ROLE_PUBLISHER), 0);
    assert_int_equal(h->events[h->event_count - 1].type, RDPS_DISC_PEER_GONE);
}

/* Issue 7 row 5: an update from another source never shortens the real peer's liveness. */
static void test_foreign_update_refused(void **state)
{
    struct harness *h = *state;
    struct rdps_source real = source(1, 0x100), forger = source(66, 0x200);
    struct rdps_disc_peer_info info;
    local_sub(h, "md.x", 0);
    struct rdps_announce pub = ann(RDPS_ROLE_PUBLISHER, "md.x", 0x9b, 1000);
    rdps__disc_on_announce(&h->d, &real, &pub, 0);
    struct rdps_announce forged = pub;
    forged.interval_ms = 10;
    rdps__disc_on_announce(&h->d, &forger, &forged, 1 * MS);
    assert_true(rdps__disc_peer_find(&h->d, &real, 0x9b, RDPS_ROLE_PUBLISHER, &info));
    assert_int_equal(info.interval_ms, 1000);
    assert_true(info.deadline_ns == 3000 * MS);
    /* Well past the forged liveness (30 ms), the real peer is still there. */
    rdps__disc_tick(&h->d, 100 * MS);
    assert_true(rdps__disc_peer_find(&h->d, &real, 0x9b, RDPS_ROLE_PUBLISHER, &info));
    assert_false(rdps__disc_peer_find(&h->d, &forger, 0x9b, RDPS_ROLE_PUBLISHER, &info));
    /* The forged announcement is a peer of its own source, with its own events. */
    assert_int_equal(h->events[1].type, RDPS_DISC_PEER_SEEN);
    assert_memory_equal(&h->events[1].source, &forger, sizeof(forger));
    assert_int_equal(h->events[2].type, RDPS_DISC_PEER_GONE);
    assert_memory_equal(&h->events[2].source, &forger, sizeof(forger));
    /* A known key announcing another topic is refused. */
    struct rdps_announce other = ann(RDPS_ROLE_PUBLISHER, "md.y", 0x9b, 1000);
    rdps__disc_on_announce(&h->d, &real, &other, 200 * MS);
    assert_int_equal(rdps__disc_counters(&h->d)->refused_topic_change, 1);
    assert_int_equal(rdps__disc_peer_count(&h->d), 1);
}

static void test_interval_clamped(void **state)
{
    struct harness *h = *state;
    struct rdps_source a = source(1, 0x100);
    struct rdps_disc_peer_info info;
    local_sub(h, "md.x", 0);
    struct rdps_announce fast = ann(RDPS_ROLE_PUBLISHER, "md.x", 1, 0);
    struct rdps_announce slow = ann(RDPS_ROLE_PUBLISHER, "md.x", 2, 600000);
    struct rdps_announce fine = ann(RDPS_ROLE_PUBLISHER, "md.x", 3, 60000);
    rdps__disc_on_announce(&h->d, &a, &fast, 0);
    rdps__disc_on_announce(&h->d, &a, &slow, 0);
    rdps__disc_on_announce(&h->d, &a, &fine, 0);
    assert_int_equal(rdps__disc_counters(&h->d)->intervals_clamped, 2);
    assert_true(rdps__disc_peer_find(&h->d, &a, 1, RDPS_ROLE_PUBLISHER, &info));
    assert_int_equal(info.interval_ms, 10);
    assert_true(info.deadline_ns == 30 * MS);
    assert_true(rdps__disc_peer_find(&h->d, &a, 2, RDPS_ROLE_PUBLISHER, &info));
    assert_int_equal(info.interval_ms, 60000);
    assert_true(info.deadline_ns == 180000 * MS);
    /* The slowest peer lives 3 x 60 s at most, not 3 x 600 s. */
    rdps__disc_tick(&h->d, 180000 * MS);
    assert_int_equal(rdps__disc_peer_count(&h->d), 0);
}

static void test_peer_cap_refuses_without_evicting(void **state)
{
    struct harness *h = *state; /* 16 peers, 4 remote-only */
    struct rdps_source real = source(1, 0x100);
    local_sub(h, "md.x", 0);
    struct rdps_announce first = ann(RDPS_ROLE_PUBLISHER, "md.x", 1, 1000);
    rdps__disc_on_announce(&h->d, &real, &first, 0);
    for (uint32_t i = 0; i < 100; i++) {
        struct rdps_source s = source((uint8_t)(i + 2), 0x100 + i);
        struct rdps_announce a = ann(RDPS_ROLE_SUBSCRIBER, "md.x", 1000 + i, 1000);
        rdps__disc_on_announce(&h->d, &s, &a, 1 * MS);
        assert_true(rdps__disc_peer_count(&h->d) <= 16);
    }
    assert_int_equal(rdps__disc_peer_count(&h->d), 16);
    assert_int_equal(rdps__disc_counters(&h->d)->refused_table_full, 85);
    assert_int_equal(remote(h, "md.x", RDPS_ROLE_SUBSCRIBER), 15);
    struct rdps_disc_peer_info info;
    assert_true(rdps__disc_peer_find(&h->d, &real, 1, RDPS_ROLE_PUBLISHER, &info));
    /* Known peers still refresh when the table is full. */
    rdps__disc_on_announce(&h->d, &real, &first, 2000 * MS);
    rdps__disc_tick(&h->d, 3001 * MS);
    assert_int_equal(rdps__disc_peer_count(&h->d), 1);
    assert_true(rdps__disc_peer_find(&h->d, &real, 1, RDPS_ROLE_PUBLISHER, &info));
}

/* Issue 7 row 1: peers of topics nobody here uses are bounded; our topics' peers still get in. */
static void test_remote_only_cap_keeps_room_for_own_topics(void **state)
{
    struct harness *h = *state; /* 16 peers, 4 remote-only */
    local_sub(h, "md.x", 0);
    for (uint32_t i = 0; i < 1000; i++) {
        char topic[32];
        snprintf(topic, sizeof(topic), "forged.%u", i);
        struct rdps_source s = source((uint8_t)i, 0x1000 + i);
        struct rdps_announce a =
            ann(i & 1 ? RDPS_ROLE_PUBLISHER : RDPS_ROLE_SUBSCRIBER, topic, i + 1, 60000);
        rdps__disc_on_announce(&h->d, &s, &a, i * MS);
    }
    assert_int_equal(rdps__disc_remote_only_count(&h->d), 4);
    assert_int_equal(rdps__disc_peer_count(&h->d), 4);
    assert_int_equal(rdps__disc_counters(&h->d)->refused_remote_only, 996);
    assert_int_equal(h->event_count, 0); /* nobody here to tell */
    for (uint32_t i = 0; i < 12; i++) {
        struct rdps_source s = source(200, 0x100 + i);
        struct rdps_announce a = ann(RDPS_ROLE_PUBLISHER, "md.x", 50 + i, 1000);
        rdps__disc_on_announce(&h->d, &s, &a, 1000 * MS);
    }
    assert_int_equal(remote(h, "md.x", RDPS_ROLE_PUBLISHER), 12);
    assert_int_equal(rdps__disc_peer_count(&h->d), 16);
    assert_int_equal(rdps__disc_counters(&h->d)->refused_table_full, 0);
    check(h);
}

static void test_topic_becoming_local_adopts_and_releases(void **state)
{
    struct harness *h = *state; /* 4 remote-only */
    struct rdps_source s = source(9, 0x900);
    struct rdps_announce sub = ann(RDPS_ROLE_SUBSCRIBER, "md.z", 5, 1000);
    rdps__disc_on_announce(&h->d, &s, &sub, 0);
    assert_int_equal(rdps__disc_remote_only_count(&h->d), 1);
    struct rdps_announce mine = ann(RDPS_ROLE_PUBLISHER, "md.z", 0xbeef, 1000);
    assert_int_equal(rdps__disc_local_add(&h->d, &mine, 1 * MS), 0);
    assert_int_equal(rdps__disc_remote_only_count(&h->d), 0);
    assert_int_equal(remote(h, "md.z", RDPS_ROLE_SUBSCRIBER), 1);
    assert_int_equal(rdps__disc_local_count(&h->d, mine.topic_id, "md.z", RDPS_ROLE_PUBLISHER), 1);
    check(h);
    rdps__disc_local_remove(&h->d, RDPS_ROLE_PUBLISHER, 0xbeef);
    assert_int_equal(rdps__disc_remote_only_count(&h->d), 1);
    assert_int_equal(remote(h, "md.z", RDPS_ROLE_SUBSCRIBER), 0);
    assert_int_equal(h->sent_count, 1);
    assert_true(h->sent[0].leaving);
    assert_int_equal(h->sent[0].session_id, 0xbeef);
}

static void collect_event(void *user, const struct rdps_disc_event *ev)
{
    on_event(user, ev);
}

/* A reliable subscriber's receiver id and flow tag reach the publisher's side in events, and a
 * publisher created after its subscribers announced finds them with for_each_remote. */
static void test_reliable_subscriber_fields_and_enumeration(void **state)
{
    struct harness *h = *state;
    struct rdps_source s1 = source(9, 0x900), s2 = source(8, 0x800);
    struct rdps_announce a = ann(RDPS_ROLE_SUBSCRIBER, "md.r", 5, 1000);
    a.reliable = true;
    a.receiver_id = 0x77;
    a.flow_tag = 42;
    rdps__disc_on_announce(&h->d, &s1, &a, 0);
    struct rdps_announce b = ann(RDPS_ROLE_SUBSCRIBER, "md.r", 6, 1000);
    rdps__disc_on_announce(&h->d, &s2, &b, 0);
    assert_int_equal(h->event_count, 0); /* remote-only topic: nothing to tell yet */
    struct rdps_announce mine = ann(RDPS_ROLE_PUBLISHER, "md.r", 0xbeef, 1000);
    assert_int_equal(rdps__disc_local_add(&h->d, &mine, 1 * MS), 0);
    rdps__disc_for_each_remote(&h->d, mine.topic_id, "md.r", RDPS_ROLE_SUBSCRIBER, collect_event,
                               h);
    assert_int_equal(h->event_count, 2);
    assert_int_equal(rdps__disc_remote_reliable_subscribers(&h->d, mine.topic_id, "md.r"), 1);
    assert_int_equal(remote(h, "md.r", RDPS_ROLE_SUBSCRIBER), 2);
    unsigned rel = h->events[0].reliable ? 0 : 1;
    assert_true(h->events[rel].reliable);
    assert_int_equal(h->events[rel].receiver_id, 0x77);
    assert_int_equal(h->events[rel].flow_tag, 42);
    assert_int_equal(h->events[rel].type, RDPS_DISC_PEER_SEEN);
    assert_memory_equal(&h->events[rel].source, &s1, sizeof(s1));
    assert_false(h->events[1 - rel].reliable);
    /* No publisher of the topic to enumerate, and an unknown topic: no calls. */
    rdps__disc_for_each_remote(&h->d, mine.topic_id, "md.r", RDPS_ROLE_PUBLISHER, collect_event, h);
    rdps__disc_for_each_remote(&h->d, 12345, "md.none", RDPS_ROLE_SUBSCRIBER, collect_event, h);
    assert_int_equal(h->event_count, 2);
    /* Its leave carries the same fields. */
    a.leaving = true;
    rdps__disc_on_announce(&h->d, &s1, &a, 2 * MS);
    assert_int_equal(h->event_count, 3);
    assert_int_equal(h->events[2].type, RDPS_DISC_PEER_GONE);
    assert_int_equal(h->events[2].receiver_id, 0x77);
    assert_true(h->events[2].reliable);
    assert_int_equal(rdps__disc_remote_reliable_subscribers(&h->d, mine.topic_id, "md.r"), 0);
    check(h);
}

/* An endpoint being created asks for its topic's peers before it is announced (rdps_pub_create
 * attaches a reliable publisher, then announces it): the peers still remote-only are found too,
 * and only those of its topic and role (a publisher created after a reliable subscriber had
 * announced never expected it: no flow control, no rdps_pub_receivers_behind, NAKs limited). */
static void test_enumeration_before_the_topic_is_local(void **state)
{
    struct harness *h = *state; /* 4 remote-only */
    struct rdps_source s1 = source(9, 0x900), s2 = source(8, 0x800), s3 = source(7, 0x700);
    struct rdps_announce a = ann(RDPS_ROLE_SUBSCRIBER, "md.late", 5, 1000);
    a.reliable = true;
    a.receiver_id = 0x77;
    rdps__disc_on_announce(&h->d, &s1, &a, 0);
    struct rdps_announce other = ann(RDPS_ROLE_SUBSCRIBER, "md.other", 6, 1000);
    rdps__disc_on_announce(&h->d, &s2, &other, 0);
    struct rdps_announce pub = ann(RDPS_ROLE_PUBLISHER, "md.late", 7, 1000);
    rdps__disc_on_announce(&h->d, &s3, &pub, 0);
    assert_int_equal(rdps__disc_remote_only_count(&h->d), 3);
    assert_int_equal(h->event_count, 0);
    rdps__disc_for_each_remote(&h->d, a.topic_id, "md.late", RDPS_ROLE_SUBSCRIBER, collect_event,
                               h);
    assert_int_equal(h->event_count, 1);
    assert_int_equal(h->events[0].type, RDPS_DISC_PEER_SEEN);
    assert_string_equal(h->events[0].topic, "md.late");
    assert_int_equal(h->events[0].receiver_id, 0x77);
    assert_true(h->events[0].reliable);
    assert_memory_equal(&h->events[0].source, &s1, sizeof(s1));
    /* The same id under another name is another topic. */
    rdps__disc_for_each_remote(&h->d, a.topic_id, "md.lat", RDPS_ROLE_SUBSCRIBER, collect_event, h);
    assert_int_equal(h->event_count, 1);
    /* Once local, the same peer is found through the topic, as before. */
    struct rdps_announce mine = ann(RDPS_ROLE_PUBLISHER, "md.late", 0xbeef, 1000);
    assert_int_equal(rdps__disc_local_add(&h->d, &mine, 1 * MS), 0);
    rdps__disc_for_each_remote(&h->d, a.topic_id, "md.late", RDPS_ROLE_SUBSCRIBER, collect_event,
                               h);
    assert_int_equal(h->event_count, 2);
    assert_int_equal(h->events[1].receiver_id, 0x77);
    check(h);
}

/* A reliable subscriber's announcement from `s` naming the address `body`. */
static struct rdps_announce receiver_ann(const char *topic, uint32_t session,
                                         const struct rdps_source *body)
{
    struct rdps_announce a = ann(RDPS_ROLE_SUBSCRIBER, topic, session, 1000);
    a.reliable = true;
    a.receiver_id = session;
    a.qpn = body->qpn;
    memcpy(a.gid, body->gid, 16);
    return a;
}

static uint32_t counted(const struct harness *h, const char *topic)
{
    return rdps__disc_counted_receivers(&h->d, rdps__topic_hash_id(topic), topic);
}

/*
 * Issue 28 finding 8: the NAK backoff's receivers are counted by host: only reliable subscribers
 * announced from the address their body names, once they announced again, and at most
 * RDPS_DISC_RECEIVERS_PER_HOST per host however many sessions, receiver ids and QPNs it uses.
 */
static void test_receivers_counted_by_host(void **state)
{
    struct harness *h = *state;
    rdps__disc_fini(&h->d);
    *state = h = setup_with(64, 8);
    local_sub(h, "md.r", 0);
    uint64_t now = 0;
    /* Host 9: six receivers on six QPNs, announced once: nothing counted yet. */
    for (uint32_t i = 0; i < 6; i++) {
        struct rdps_source s = source(9, 0x900 + i);
        struct rdps_announce a = receiver_ann("md.r", 0x90 + i, &s);
        rdps__disc_on_announce(&h->d, &s, &a, now);
    }
    assert_int_equal(
        rdps__disc_remote_reliable_subscribers(&h->d, rdps__topic_hash_id("md.r"), "md.r"), 6);
    assert_int_equal(counted(h, "md.r"), 0);
    /* Announced again: counted, the host's cap of them. */
    now += 1000 * MS;
    for (uint32_t i = 0; i < 6; i++) {
        struct rdps_source s = source(9, 0x900 + i);
        struct rdps_announce a = receiver_ann("md.r", 0x90 + i, &s);
        rdps__disc_on_announce(&h->d, &s, &a, now);
    }
    assert_int_equal(counted(h, "md.r"), RDPS_DISC_RECEIVERS_PER_HOST);
    check(h);
    /* Another host's receiver adds one; bodies naming another QPN or GID, and an unreliable
     * subscriber, add nothing however often they announce. */
    struct rdps_source s8 = source(8, 0x800), s7 = source(7, 0x700), s6 = source(6, 0x600);
    struct rdps_source other_qpn = source(7, 0x701), other_gid = source(5, 0x700);
    struct rdps_announce a8 = receiver_ann("md.r", 0x80, &s8);
    struct rdps_announce a7 = receiver_ann("md.r", 0x70, &other_qpn);
    struct rdps_announce a7b = receiver_ann("md.r", 0x71, &other_gid);
    struct rdps_announce a6 = ann(RDPS_ROLE_SUBSCRIBER, "md.r", 0x60, 1000);
    a6.qpn = s6.qpn;
    memcpy(a6.gid, s6.gid, 16);
    for (int round = 0; round < 3; round++) {
        rdps__disc_on_announce(&h->d, &s8, &a8, now);
        rdps__disc_on_announce(&h->d, &s7, &a7, now);
        rdps__disc_on_announce(&h->d, &s7, &a7b, now);
        rdps__disc_on_announce(&h->d, &s6, &a6, now);
        now += 10 * MS;
    }
    assert_int_equal(counted(h, "md.r"), RDPS_DISC_RECEIVERS_PER_HOST + 1);
    /* Host 9 down to three receivers: all three count. */
    for (uint32_t i = 0; i < 3; i++) {
        struct rdps_source s = source(9, 0x900 + i);
        struct rdps_announce a = receiver_ann("md.r", 0x90 + i, &s);
        a.leaving = true;
        rdps__disc_on_announce(&h->d, &s, &a, now);
    }
    assert_int_equal(counted(h, "md.r"), 3 + 1);
    check(h);
    /* Expiry takes them out too. */
    rdps__disc_tick(&h->d, now + 10000 * MS);
    assert_int_equal(counted(h, "md.r"), 0);
    check(h);
}

static void test_announces_local_endpoints_when_due(void **state)
{
    struct harness *h = *state;
    assert_true(rdps__disc_tick(&h->d, 0) == UINT64_MAX); /* nothing to do */
    h->refuse_sends = true;                               /* the control group is not joined yet */
    local_sub(h, "md.x", 5 * MS);
    assert_true(rdps__disc_next_deadline(&h->d) == 5 * MS);
    assert_true(rdps__disc_tick(&h->d, 5 * MS) == 15 * MS); /* retried soon */
    assert_int_equal(rdps__disc_counters(&h->d)->announce_send_failures, 1);
    h->refuse_sends = false;
    assert_true(rdps__disc_tick(&h->d, 15 * MS) == 1015 * MS);
    assert_true(rdps__disc_tick(&h->d, 1014 * MS) == 1015 * MS);
    assert_int_equal(h->sent_count, 1);
    rdps__disc_tick(&h->d, 1015 * MS);
    assert_int_equal(h->sent_count, 2);
    assert_false(h->sent[1].leaving);
    assert_true(h->sent[1].announce_seq == h->sent[0].announce_seq + 1);
    assert_string_equal(h->sent[1].topic, "md.x");
}

/*
 * A subscriber that falls back to unicast announces it again with `unicast` set: the publisher's
 * engine raises UPDATED once per change (nothing for a plain refresh), the SEEN and the GONE carry
 * the flag as last announced, and our own endpoint's change is announced at once.
 */
static void test_unicast_change_updates_peer(void **state)
{
    struct harness *h = *state;
    struct rdps_source a = source(1, 0x100);
    struct rdps_announce mine = ann(RDPS_ROLE_PUBLISHER, "md.u", 0xbeef, 1000);
    assert_int_equal(rdps__disc_local_add(&h->d, &mine, 0), 0);
    struct rdps_announce sub = ann(RDPS_ROLE_SUBSCRIBER, "md.u", 0x5b, 1000);
    rdps__disc_on_announce(&h->d, &a, &sub, 0);
    assert_int_equal(h->event_count, 1);
    assert_false(h->events[0].unicast);
    rdps__disc_on_announce(&h->d, &a, &sub, 100 * MS); /* a refresh: no event */
    assert_int_equal(h->event_count, 1);
    sub.unicast = true;
    rdps__disc_on_announce(&h->d, &a, &sub, 200 * MS);
    assert_int_equal(h->event_count, 2);
    assert_int_equal(h->events[1].type, RDPS_DISC_PEER_UPDATED);
    assert_true(h->events[1].unicast);
    assert_int_equal(h->events[1].session_id, 0x5b);
    assert_memory_equal(&h->events[1].source, &a, sizeof(a));
    rdps__disc_on_announce(&h->d, &a, &sub, 300 * MS);
    assert_int_equal(h->event_count, 2);
    sub.leaving = true;
    rdps__disc_on_announce(&h->d, &a, &sub, 400 * MS);
    assert_int_equal(h->events[2].type, RDPS_DISC_PEER_GONE);
    assert_true(h->events[2].unicast);
    check(h);

    /* Our own endpoint: the change goes out at the next tick, carried by every announcement. */
    rdps__disc_tick(&h->d, 0);
    unsigned sent = h->sent_count;
    assert_true(rdps__disc_next_deadline(&h->d) == 1000 * MS);
    rdps__disc_local_set_unicast(&h->d, RDPS_ROLE_PUBLISHER, 0xbeef, true, 500 * MS);
    assert_true(rdps__disc_next_deadline(&h->d) == 500 * MS);
    rdps__disc_tick(&h->d, 500 * MS);
    assert_int_equal(h->sent_count, sent + 1);
    assert_true(h->sent[sent].unicast);
    rdps__disc_local_set_unicast(&h->d, RDPS_ROLE_PUBLISHER, 0xdead, true, 600 * MS); /* none */
    assert_true(rdps__disc_next_deadline(&h->d) == 1500 * MS);
}

static void test_counts_per_topic_and_role(void **state)
{
    struct harness *h = *state;
    local_sub(h, "md.x", 0);
    struct rdps_announce mine = ann(RDPS_ROLE_PUBLISHER, "md.y", 0xbeef, 1000);
    assert_int_equal(rdps__disc_local_add(&h->d, &mine, 0), 0);
    for (uint32_t i = 0; i < 6; i++) {
        struct rdps_source s = source((uint8_t)i, 0x100);
        struct rdps_announce a = ann(i < 2 ? RDPS_ROLE_PUBLISHER : RDPS_ROLE_SUBSCRIBER,
                                     i % 2 ? "md.x" : "md.y", 10 + i, 1000);
        rdps__disc_on_announce(&h->d, &s, &a, 0);
        rdps__disc_on_announce(&h->d, &s, &a, 1 * MS); /* a refresh counts once */
    }
    assert_int_equal(remote(h, "md.x", RDPS_ROLE_PUBLISHER), 1);
    assert_int_equal(remote(h, "md.y", RDPS_ROLE_PUBLISHER), 1);
    assert_int_equal(remote(h, "md.x", RDPS_ROLE_SUBSCRIBER), 2);
    assert_int_equal(remote(h, "md.y", RDPS_ROLE_SUBSCRIBER), 2);
    assert_int_equal(remote(h, "md.none", RDPS_ROLE_SUBSCRIBER), 0);
    assert_int_equal(rdps__disc_counters(&h->d)->peers_updated, 6);
    /* Only publishers of local topics and their subscribers raise events: 6 SEEN. */
    assert_int_equal(h->event_count, 6);
    check(h);
}

/* The same topic id under another name is a different (here: remote-only) topic. */
static void test_topic_name_compared_exactly(void **state)
{
    struct harness *h = *state;
    local_sub(h, "md.x", 0);
    struct rdps_source s = source(3, 0x300);
    struct rdps_announce a = ann(RDPS_ROLE_SUBSCRIBER, "md.x", 1, 1000);
    strcpy(a.topic, "md.w"); /* keeps md.x's id */
    rdps__disc_on_announce(&h->d, &s, &a, 0);
    assert_int_equal(remote(h, "md.x", RDPS_ROLE_SUBSCRIBER), 0);
    assert_int_equal(rdps__disc_remote_only_count(&h->d), 1);
}

static void test_last_local_endpoint_releases_topic(void **state)
{
    struct harness *h = *state;
    struct rdps_source s = source(3, 0x300);
    local_sub(h, "md.x", 0);
    for (uint32_t i = 0; i < 8; i++) {
        struct rdps_announce a = ann(RDPS_ROLE_PUBLISHER, "md.x", 100 + i, 10);
        rdps__disc_on_announce(&h->d, &s, &a, 0);
    }
    /* Dropping the last local endpoint mid-expiry moves the rest to remote-only or forgets them. */
    rdps__disc_local_remove(&h->d, RDPS_ROLE_SUBSCRIBER, 0xa0ca1);
    assert_int_equal(rdps__disc_remote_only_count(&h->d), 4);
    assert_int_equal(rdps__disc_counters(&h->d)->peers_forgotten, 4);
    check(h);
    rdps__disc_tick(&h->d, 30 * MS);
    assert_int_equal(rdps__disc_peer_count(&h->d), 0);
}

/* The GONE callback removes the topic's last local endpoint while tick is still expiring peers. */
static void test_gone_callback_may_remove_the_last_local_endpoint(void **state)
{
    struct harness *h = *state; /* 16 peers, 4 remote-only */
    local_sub(h, "md.x", 0);
    for (uint32_t i = 0; i < 10; i++) {
        struct rdps_source s = source((uint8_t)i, 0x100);
        struct rdps_announce a = ann(RDPS_ROLE_PUBLISHER, "md.x", 100 + i, i < 6 ? 10 : 1000);
        rdps__disc_on_announce(&h->d, &s, &a, 0);
    }
    h->drop_local_on_gone = true;
    rdps__disc_tick(&h->d, 30 * MS); /* six are due; the first GONE makes md.x remote-only */
    check(h);
    assert_int_equal(h->event_count, 10 + 1); /* 10 SEEN, then one GONE: the rest are not ours */
    assert_int_equal(
        rdps__disc_local_count(&h->d, rdps__topic_hash_id("md.x"), "md.x", RDPS_ROLE_SUBSCRIBER),
        0);
    assert_true(rdps__disc_peer_count(&h->d) <= 4);
    assert_int_equal(rdps__disc_remote_only_count(&h->d), rdps__disc_peer_count(&h->d));
    rdps__disc_tick(&h->d, 3000 * MS);
    assert_int_equal(rdps__disc_peer_count(&h->d), 0);
}

/*
 * Replay: a local endpoint added when the next serial was S is given the live peers of its role
 * admitted before S, each once, including remote-only ones its topic adopted; peers removed
 * meanwhile are skipped, peers admitted after S are not replayed (they had their own SEEN).
 */
static void test_replay_gives_earlier_peers_once(void **state)
{
    struct harness *h = *state;
    struct rdps_source src = source(1, 0x100);
    struct rdps_announce s1 = ann(RDPS_ROLE_SUBSCRIBER, "md.r", 1, 1000);
    struct rdps_announce s2 = ann(RDPS_ROLE_SUBSCRIBER, "md.r", 2, 1000);
    struct rdps_announce s3 = ann(RDPS_ROLE_SUBSCRIBER, "md.r", 3, 1000);
    struct rdps_announce s4 = ann(RDPS_ROLE_SUBSCRIBER, "md.r", 4, 1000);
    struct rdps_announce p1 = ann(RDPS_ROLE_PUBLISHER, "md.r", 5, 1000);
    struct rdps_announce other = ann(RDPS_ROLE_SUBSCRIBER, "md.other", 6, 1000);
    rdps__disc_on_announce(&h->d, &src, &s1, 0); /* remote-only: no event */
    local_sub(h, "md.r", 0);                     /* adopts s1 */
    rdps__disc_on_announce(&h->d, &src, &s2, 0);
    rdps__disc_on_announce(&h->d, &src, &s3, 0);
    rdps__disc_on_announce(&h->d, &src, &p1, 0);
    rdps__disc_on_announce(&h->d, &src, &other, 0);
    assert_int_equal(h->event_count, 3); /* s2, s3, p1 */
    uint64_t before = rdps__disc_next_serial(&h->d);
    assert_int_equal(before, 5);

    uint32_t cursor = 0;
    struct rdps_disc_event ev;
    uint32_t replayed = 0; /* bit per session */
    assert_true(rdps__disc_replay_next(&h->d, s1.topic_id, "md.r", RDPS_ROLE_SUBSCRIBER, before,
                                       &cursor, &ev));
    replayed |= 1u << ev.session_id;
    uint32_t first = ev.session_id;
    assert_int_equal(ev.type, RDPS_DISC_PEER_SEEN);
    assert_string_equal(ev.topic, "md.r");
    /* Between two replayed events: s3 leaves, s4 arrives. */
    struct rdps_announce leave = s3;
    leave.leaving = true;
    rdps__disc_on_announce(&h->d, &src, &leave, 0);
    rdps__disc_on_announce(&h->d, &src, &s4, 0);
    while (rdps__disc_replay_next(&h->d, s1.topic_id, "md.r", RDPS_ROLE_SUBSCRIBER, before, &cursor,
                                  &ev)) {
        assert_true(ev.serial < before);
        assert_false(replayed & (1u << ev.session_id));
        replayed |= 1u << ev.session_id;
    }
    /* s1 and s2 always; s3 only if it was the first one given; never s4, p1 or md.other's. */
    assert_true(replayed & (1u << 1));
    assert_true(replayed & (1u << 2));
    assert_int_equal((replayed >> 3) & 1u, first == 3);
    assert_false(replayed & (1u << 4));
    assert_false(replayed & (1u << 5));
    assert_false(replayed & (1u << 6));
    assert_int_equal(cursor, 16);
    assert_false(rdps__disc_replay_next(&h->d, s1.topic_id, "md.r", RDPS_ROLE_SUBSCRIBER, before,
                                        &cursor, &ev));
    /* A topic that is not local replays nothing. */
    cursor = 0;
    assert_false(rdps__disc_replay_next(&h->d, other.topic_id, "md.other", RDPS_ROLE_SUBSCRIBER,
                                        UINT64_MAX, &cursor, &ev));
}

static void test_bad_config_refused(void **state)
{
    struct rdps_discovery d;
    struct rdps_disc_config cfg;
    (void)state;
    rdps__disc_config_default(&cfg);
    assert_int_equal(rdps__disc_init(&d, &cfg), RDPS_EINVAL); /* no send callback */
    cfg.send = on_send;
    cfg.max_remote_only = cfg.max_peers;
    assert_int_equal(rdps__disc_init(&d, &cfg), RDPS_EINVAL);
    cfg.max_remote_only = 1;
    cfg.min_interval_ms = 0;
    assert_int_equal(rdps__disc_init(&d, &cfg), RDPS_EINVAL);
    cfg.min_interval_ms = 10;
    assert_int_equal(rdps__disc_init(&d, &cfg), 0);
    rdps__disc_fini(&d);
}

/* Many peers with mixed deadlines, leaves and refreshes, receivers counted by host, a topic
 * turning local and back: the heap, index and host tallies stay consistent. */
static void test_churn_keeps_structures_consistent(void **state)
{
    struct harness *h = *state;
    rdps__disc_fini(&h->d);
    *state = h = setup_with(64, 8);
    local_sub(h, "md.x", 0);
    uint64_t now = 0;
    uint32_t rng = 1, most = 0;
    for (int round = 0; round < 5000; round++) {
        rng = rng * 1103515245u + 12345u;
        uint32_t r = rng >> 8;
        struct rdps_source s = source((uint8_t)(r % 3), 0x100 + (r >> 3) % 5);
        struct rdps_announce a =
            ann(r & 1 ? RDPS_ROLE_PUBLISHER : RDPS_ROLE_SUBSCRIBER, (r >> 4) % 3 ? "md.x" : "other",
                1 + (r >> 6) % 8, 10 + (r >> 9) % 200);
        a.leaving = (r >> 12) % 5 == 0;
        if ((r >> 17) % 3 != 0) { /* mostly reliable receivers naming their own address */
            a.reliable = true;
            a.qpn = s.qpn;
            memcpy(a.gid, s.gid, 16);
        }
        rdps__disc_on_announce(&h->d, &s, &a, now);
        now += (r >> 14) % 7 * MS;
        if (round % 16 == 0)
            rdps__disc_tick(&h->d, now);
        if (round % 500 == 250) { /* "other" becomes local, then not: its peers move twice */
            struct rdps_announce mine = ann(RDPS_ROLE_PUBLISHER, "other", 0xbe11, 1000);
            assert_int_equal(rdps__disc_local_add(&h->d, &mine, now), 0);
            check(h);
        } else if (round % 500 == 400) {
            rdps__disc_local_remove(&h->d, RDPS_ROLE_PUBLISHER, 0xbe11);
            check(h);
        }
        if (round % 256 == 0)
            check(h);
        uint32_t n = counted(h, "md.x");
        most = n > most ? n : most;
    }
    assert_true(most > RDPS_DISC_RECEIVERS_PER_HOST); /* receivers were counted, by host */
    check(h);
}

/* Two names with the same 64-bit topic id (tests/pubsub/test_topic.c tells how they were found). */
#define NAME_A "md.quotes.8MlN5CIm0nE"
#define NAME_B "md.quotes.DceKDt0TJc6"

static unsigned collisions(const struct harness *h)
{
    unsigned n = 0;
    for (unsigned i = 0; i < h->event_count && i < 64; i++)
        n += h->events[i].type == RDPS_DISC_TOPIC_COLLISION;
    return n;
}

/*
 * An announced name with a local topic's id: one TOPIC_COLLISION per (announcer, name) while
 * the announcer keeps announcing it, none for the local name itself, none for a leaving, none
 * when the topic is not local.
 */
static void test_topic_collision_once_per_announcer_and_name(void **state)
{
    struct harness *h = *state;
    struct rdps_source a = source(1, 0x100), b = source(2, 0x100), c = source(3, 0x100);
    assert_true(rdps__topic_hash_id(NAME_A) == rdps__topic_hash_id(NAME_B));
    /* Not a local topic yet: nothing to collide with. */
    struct rdps_announce pb = ann(RDPS_ROLE_PUBLISHER, NAME_B, 5, 100);
    rdps__disc_on_announce(&h->d, &a, &pb, 0);
    assert_int_equal(h->event_count, 0);
    assert_int_equal(rdps__disc_counters(&h->d)->topic_collisions, 0);

    local_sub(h, NAME_A, 0);
    rdps__disc_on_announce(&h->d, &a, &pb, 10 * MS);
    assert_int_equal(h->event_count, 1);
    const struct rdps_disc_event *ev = &h->events[0];
    assert_int_equal(ev->type, RDPS_DISC_TOPIC_COLLISION);
    assert_string_equal(ev->topic, NAME_A);
    assert_non_null(ev->other_topic);
    assert_string_equal(ev->other_topic, NAME_B);
    assert_true(ev->topic_id == rdps__topic_hash_id(NAME_A));
    assert_true(rdps__source_equal(&ev->source, &a));
    assert_int_equal(ev->session_id, 5);
    assert_int_equal(ev->role, RDPS_ROLE_PUBLISHER);
    assert_int_equal(rdps__disc_counters(&h->d)->topic_collisions, 1);

    /* Repeats, and another endpoint of the same announcer under that name: nothing new. */
    rdps__disc_on_announce(&h->d, &a, &pb, 50 * MS);
    struct rdps_announce sb = ann(RDPS_ROLE_SUBSCRIBER, NAME_B, 6, 100);
    rdps__disc_on_announce(&h->d, &a, &sb, 60 * MS);
    assert_int_equal(collisions(h), 1);
    /* The local name itself, from anyone: a peer of ours, no collision. */
    struct rdps_announce pa = ann(RDPS_ROLE_PUBLISHER, NAME_A, 7, 100);
    rdps__disc_on_announce(&h->d, &c, &pa, 70 * MS);
    assert_int_equal(collisions(h), 1);
    assert_int_equal(remote(h, NAME_A, RDPS_ROLE_PUBLISHER), 1);
    /* A leaving with the other name tells nothing. */
    struct rdps_announce leave = pb;
    leave.leaving = true;
    rdps__disc_on_announce(&h->d, &b, &leave, 80 * MS);
    assert_int_equal(collisions(h), 1);
    /* Another announcer of the other name: its own event. */
    rdps__disc_on_announce(&h->d, &b, &pb, 90 * MS);
    assert_int_equal(collisions(h), 2);
    assert_true(rdps__source_equal(&h->events[h->event_count - 1].source, &b));
    assert_int_equal(rdps__disc_counters(&h->d)->topic_collisions, 2);
    /* a announced NAME_B last at 60 ms, every 100 ms: remembered 3 intervals after each
     * announcement (at 359 ms still known, now until 659 ms), told again after that. */
    rdps__disc_on_announce(&h->d, &a, &pb, 359 * MS);
    assert_int_equal(collisions(h), 2);
    rdps__disc_on_announce(&h->d, &a, &pb, 659 * MS + 1);
    assert_int_equal(collisions(h), 3);
    assert_int_equal(rdps__disc_counters(&h->d)->topic_collisions, 3);
    /* Once the local topic is gone, the other name is just a foreign topic. */
    rdps__disc_local_remove(&h->d, RDPS_ROLE_SUBSCRIBER, 0xa0ca1);
    rdps__disc_on_announce(&h->d, &c, &pb, 700 * MS);
    assert_int_equal(collisions(h), 3);
}

/*
 * Forged collisions from many sources cost events, never memory: the table of reported ones
 * has a fixed size, and what falls out of it is reported again when it comes back.
 */
static void test_topic_collision_flood_is_bounded(void **state)
{
    struct harness *h = *state;
    local_sub(h, NAME_A, 0);
    size_t bytes = rdps__disc_memory_bytes(&h->d);
    struct rdps_announce pb = ann(RDPS_ROLE_PUBLISHER, NAME_B, 5, 1000);
    const unsigned n = 3 * RDPS_DISC_COLLISION_SLOTS;
    for (unsigned i = 0; i < n; i++) {
        struct rdps_source s = source((uint8_t)(i % 200), 0x200 + i);
        rdps__disc_on_announce(&h->d, &s, &pb, (1 + i) * MS);
    }
    assert_int_equal(rdps__disc_counters(&h->d)->topic_collisions, n);
    assert_int_equal(rdps__disc_memory_bytes(&h->d), bytes);
    check(h);
    /* The most recent ones are remembered; the first fell out and is told again. */
    struct rdps_source last = source((uint8_t)((n - 1) % 200), 0x200 + n - 1);
    struct rdps_source first = source(0, 0x200);
    rdps__disc_on_announce(&h->d, &last, &pb, (n + 1) * MS);
    assert_int_equal(rdps__disc_counters(&h->d)->topic_collisions, n);
    rdps__disc_on_announce(&h->d, &first, &pb, (n + 2) * MS);
    assert_int_equal(rdps__disc_counters(&h->d)->topic_collisions, n + 1);

    /* The callback removes the local topic it names: the engine stays consistent. */
    h->drop_local_on_collision = true;
    struct rdps_source fresh = source(250, 0x999);
    rdps__disc_on_announce(&h->d, &fresh, &pb, (n + 3) * MS);
    assert_false(h->drop_local_on_collision);
    assert_int_equal(
        rdps__disc_local_count(&h->d, rdps__topic_hash_id(NAME_A), NAME_A, RDPS_ROLE_SUBSCRIBER),
        0);
    check(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_seen_then_expired_after_three_intervals, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_leave_removes_and_tells, setup, teardown),
        cmocka_unit_test_setup_teardown(test_foreign_leave_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_foreign_update_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interval_clamped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_peer_cap_refuses_without_evicting, setup, teardown),
        cmocka_unit_test_setup_teardown(test_remote_only_cap_keeps_room_for_own_topics, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_topic_becoming_local_adopts_and_releases, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_reliable_subscriber_fields_and_enumeration, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_receivers_counted_by_host, setup, teardown),
        cmocka_unit_test_setup_teardown(test_announces_local_endpoints_when_due, setup, teardown),
        cmocka_unit_test_setup_teardown(test_counts_per_topic_and_role, setup, teardown),
        cmocka_unit_test_setup_teardown(test_topic_name_compared_exactly, setup, teardown),
        cmocka_unit_test_setup_teardown(test_last_local_endpoint_releases_topic, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gone_callback_may_remove_the_last_local_endpoint,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_replay_gives_earlier_peers_once, setup, teardown),
        cmocka_unit_test(test_bad_config_refused),
        cmocka_unit_test_setup_teardown(test_churn_keeps_structures_consistent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unicast_change_updates_peer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_topic_collision_once_per_announcer_and_name, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_topic_collision_flood_is_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_enumeration_before_the_topic_is_local, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
