/* SPDX-License-Identifier: BSD-2-Clause */
/* test_md_snap_server.c - md-feed's late-join service (tools/md-feed/md_snap_server.h): requests
 * from sources discovery never announced produce nothing, an announced book is held to its rate
 * and every answer to the byte budget (fake clock); and over the public loopback device, a late
 * book's requests are served while a forger's are not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "md_gen.h"
#include "md_snap_server.h"
#include "md_topics.h"
#include "rdps_clock.h"

#define CHANNELS 8 /* as the demo */
#define SYMBOLS  2000
#define MS       1000000ull
#define SECOND   1000000000ull
#define BUDGET   (100u * 1024) /* bytes per second, small enough to matter here */

static const rdps_source evil = {.gid = {0xfe, 0x80, [15] = 0x66}, .qpn = 0x666, .has_gid = 1};
static const rdps_source honest = {.gid = {0xfe, 0x80, [15] = 2}, .qpn = 0x200, .has_gid = 1};
static const rdps_source later = {.gid = {0xfe, 0x80, [15] = 3}, .qpn = 0x300, .has_gid = 1};

struct fixture {
    struct md_gen gen;
    struct md_snap_server s;
    uint64_t sent_bytes, sent_parts, sent_slices;
};

static uint32_t channel_of(void *user, uint16_t locate)
{
    struct fixture *f = user;
    return md_gen_channel_of(&f->gen, locate);
}

static int flush(void *user, uint32_t ch, uint64_t *seq)
{
    (void)user;
    *seq = 1000 + ch;
    return 0;
}

static int send_msg(void *user, const void *msg, size_t len)
{
    struct fixture *f = user;
    const uint8_t *m = msg;
    f->sent_bytes += len;
    if (m[0] == MD_SNAPMSG_PART)
        f->sent_parts++;
    else
        f->sent_slices++;
    return 0;
}

static void fixture_init(struct fixture *f)
{
    memset(f, 0, sizeof(*f));
    struct md_gen_config gc;
    md_gen_config_init(&gc);
    gc.symbols = SYMBOLS;
    gc.channels = CHANNELS;
    assert_int_equal(md_gen_init(&f->gen, &gc), 0);
    for (int i = 0; i < 20000; i++) { /* books with orders: snapshots of several parts */
        struct itch_msg m;
        uint32_t ch;
        assert_true(md_gen_next(&f->gen, 1000000000ull + (uint64_t)i, &m, &ch) > 0);
    }
    struct md_snap_server_config sc = {.channels = CHANNELS,
                                       .feed = "itch",
                                       .book = md_gen_book(&f->gen),
                                       .max_locate = SYMBOLS,
                                       .budget_bytes_per_s = BUDGET};
    memset(sc.session, ' ', sizeof(sc.session));
    struct md_snap_server_hooks hooks = {
        .user = f, .channel_of = channel_of, .flush = flush, .send = send_msg};
    assert_int_equal(md_snap_server_init(&f->s, &sc, &hooks), 0);
}

static void fixture_fini(struct fixture *f)
{
    md_snap_server_fini(&f->s);
    md_gen_fini(&f->gen);
}

static void request(struct fixture *f, const rdps_source *from, uint32_t what, uint64_t now)
{
    struct md_snapreq r = {.book_id = 9, .channel = what};
    uint8_t buf[MD_SNAPREQ_LEN];
    md_snapreq_encode(&r, buf);
    rdps_msg_info info = {.session_id = 0x77, .source = *from};
    md_snap_server_request(&f->s, buf, sizeof(buf), &info, now);
}

/* Discovery's events for one subscriber of every channel and of the snapshot topic. */
static void discovered(struct fixture *f, const rdps_source *who, rdps_event_type type,
                       uint64_t now)
{
    for (uint32_t topic = 0; topic <= CHANNELS; topic++) {
        rdps_event ev = {.type = type,
                         .session_id = 0x5000 + topic + who->qpn,
                         .source = *who,
                         .reason = type == RDPS_EVENT_SUBSCRIBER_GONE ? RDPS_GONE_LEFT : 0};
        md_snap_server_subscriber(&f->s, topic == CHANNELS ? MD_SNAP_SERVER_SNAP_TOPIC : topic, &ev,
                                  now);
    }
}

/* `seconds` of the feed's loop (a serve every millisecond) while `from` asks 33 times a second
 * for the channels and the directory in turn. */
static void flood(struct fixture *f, const rdps_source *from, uint64_t start, uint64_t seconds)
{
    uint32_t n = 0;
    for (uint64_t t = start; t < start + seconds * SECOND; t += MS) {
        if ((t - start) % (30 * MS) == 0) {
            uint32_t what = n % (CHANNELS + 1);
            request(f, from, what == CHANNELS ? MD_SNAPREQ_DIRECTORY : what, t);
            n++;
        }
        assert_int_equal(md_snap_server_serve(&f->s, t), 0);
    }
}

/* The audit's finding 12: 33 requests a second from a source discovery never announced. */
static void test_undiscovered_requester_gets_nothing(void **state)
{
    (void)state;
    struct fixture f;
    fixture_init(&f);
    flood(&f, &evil, SECOND, 10);
    assert_int_equal(f.sent_bytes, 0);
    assert_int_equal(f.s.counters.snapshots, 0);
    assert_int_equal(f.s.counters.directories, 0);
    assert_int_equal(f.s.counters.requests, 0);
    assert_int_equal(f.s.counters.requests_unknown, 334);
    fixture_fini(&f);
}

/* An announced book asking 33 times a second gets its rate (every channel and the directory
 * twice at once, then once per MD_SNAP_RETRY_NS), and all answers stay within the budget. */
static void test_discovered_requester_limited(void **state)
{
    (void)state;
    struct fixture f;
    fixture_init(&f);
    discovered(&f, &honest, RDPS_EVENT_SUBSCRIBER_SEEN, SECOND);
    flood(&f, &honest, SECOND, 10);
    uint64_t allowed = 2 * (CHANNELS + 1) + (CHANNELS + 1) * 10 * SECOND / MD_SNAP_RETRY_NS;
    print_message("announced book, 334 requests in 10 s: %llu taken, %llu limited, %llu "
                  "snapshots, %llu directories, %llu bytes, %llu budget waits\n",
                  (unsigned long long)f.s.counters.requests,
                  (unsigned long long)f.s.counters.requests_limited,
                  (unsigned long long)f.s.counters.snapshots,
                  (unsigned long long)f.s.counters.directories, (unsigned long long)f.sent_bytes,
                  (unsigned long long)f.s.counters.budget_waits);
    assert_true(f.s.counters.requests > 0);
    assert_true(f.s.counters.requests <= allowed);
    assert_int_equal(f.s.counters.requests + f.s.counters.requests_limited, 334);
    assert_true(f.s.counters.snapshots >= CHANNELS); /* every channel was served */
    assert_true(f.s.counters.directories >= 1);
    /* The budget: a second's worth at once, then BUDGET a second (one message may overdraw). */
    assert_true(f.sent_bytes <= BUDGET + 10 * BUDGET + 1 + MD_SNAP_PART_BYTES);
    assert_true(f.s.counters.budget_waits > 0);
    assert_int_equal(f.sent_bytes, f.s.counters.bytes + f.s.counters.directory_bytes +
                                       f.sent_parts + f.sent_slices);
    fixture_fini(&f);
}

/* A request can overtake its book's first announcements: it waits for them (MD_SNAP_SERVER_WAIT_NS)
 * and is served when they come, not after; a book that left is not served. */
static void test_request_waits_for_discovery(void **state)
{
    (void)state;
    struct fixture f;
    fixture_init(&f);
    request(&f, &later, 3, SECOND);
    request(&f, &later, MD_SNAPREQ_DIRECTORY, SECOND);
    for (uint64_t t = SECOND; t < SECOND + 500 * MS; t += MS)
        assert_int_equal(md_snap_server_serve(&f.s, t), 0);
    assert_int_equal(f.sent_bytes, 0);
    discovered(&f, &later, RDPS_EVENT_SUBSCRIBER_SEEN, SECOND + 500 * MS);
    for (uint64_t t = SECOND + 500 * MS; t < 3 * SECOND; t += MS)
        assert_int_equal(md_snap_server_serve(&f.s, t), 0);
    assert_int_equal(f.s.counters.snapshots, 1);
    assert_int_equal(f.s.counters.directories, 1);
    assert_int_equal(f.s.counters.requests_late, 2);

    /* Too late: announced after the wait ran out. */
    request(&f, &honest, 4, 3 * SECOND);
    discovered(&f, &honest, RDPS_EVENT_SUBSCRIBER_SEEN, 3 * SECOND + MD_SNAP_SERVER_WAIT_NS + MS);
    for (uint64_t t = 3 * SECOND; t < 7 * SECOND; t += MS)
        assert_int_equal(md_snap_server_serve(&f.s, t), 0);
    assert_int_equal(f.s.counters.snapshots, 1);

    /* Gone: its requests are refused again. */
    discovered(&f, &later, RDPS_EVENT_SUBSCRIBER_GONE, 7 * SECOND);
    uint64_t unknown = f.s.counters.requests_unknown;
    request(&f, &later, 5, 7 * SECOND);
    assert_int_equal(f.s.counters.requests_unknown, unknown + 1);
    for (uint64_t t = 7 * SECOND; t < 10 * SECOND; t += MS)
        assert_int_equal(md_snap_server_serve(&f.s, t), 0);
    assert_int_equal(f.s.counters.snapshots, 1);
    fixture_fini(&f);
}

/* ---- the public loopback device: md-feed's wiring, a late book, a forger ---- */

struct loop_book {
    uint64_t parts, slices, foreign;
    rdps_source feed;
    bool feed_known;
};

static void on_snap(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct loop_book *b = user;
    const uint8_t *m = data;
    if (!b->feed_known || !md_source_equal(&info->source, &b->feed))
        b->foreign++;
    else if (len > 0 && m[0] == MD_SNAPMSG_PART)
        b->parts++;
    else if (len > 0 && m[0] == MD_SNAPMSG_DIRECTORY)
        b->slices++;
}

static void on_snap_event(void *user, const rdps_event *ev)
{
    struct loop_book *b = user;
    if (ev->type == RDPS_EVENT_PUBLISHER_SEEN && !b->feed_known) {
        b->feed = ev->source;
        b->feed_known = true;
    }
}

static void on_channel(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    (void)user;
    (void)data;
    (void)len;
    (void)info;
}

struct loop_feed {
    struct fixture fx;
    rdps_pub_t *snap_pub;
};

static int loop_send(void *user, const void *msg, size_t len)
{
    struct loop_feed *lf = user;
    return rdps_pub_send(lf->snap_pub, msg, len);
}

static void loop_cfg(rdps_config *cfg)
{
    rdps_config_init(cfg);
    cfg->device = "loopback";
    cfg->stats_off = 1;
}

static void send_request(rdps_ctx_t *ctx, rdps_pub_t *pub, uint32_t what)
{
    struct md_snapreq r = {.book_id = 1, .channel = what};
    uint8_t buf[MD_SNAPREQ_LEN];
    md_snapreq_encode(&r, buf);
    int rc;
    while ((rc = rdps_pub_send(pub, buf, sizeof(buf))) == RDPS_EAGAIN)
        rdps_ctx_poll(ctx, 0);
    assert_int_equal(rc, 0);
}

static void test_late_book_served_over_loopback(void **state)
{
    (void)state;
    rdps_config cfg;
    loop_cfg(&cfg);
    rdps_ctx_t *feed, *book, *forger;
    assert_int_equal(rdps_ctx_create(&cfg, &feed), 0);
    assert_int_equal(rdps_ctx_create(&cfg, &book), 0);
    assert_int_equal(rdps_ctx_create(&cfg, &forger), 0);

    /* The feed, wired as md-feed does: its publishers tell the server who subscribes. */
    struct loop_feed *lf = calloc(1, sizeof(*lf));
    assert_non_null(lf);
    struct md_gen_config gc;
    md_gen_config_init(&gc);
    gc.symbols = 200;
    gc.channels = 2;
    assert_int_equal(md_gen_init(&lf->fx.gen, &gc), 0);
    for (int i = 0; i < 2000; i++) {
        struct itch_msg m;
        uint32_t ch;
        assert_true(md_gen_next(&lf->fx.gen, 1000000000ull + (uint64_t)i, &m, &ch) > 0);
    }
    struct md_snap_server_config sc = {
        .channels = 2, .feed = "lb", .book = md_gen_book(&lf->fx.gen), .max_locate = 200};
    memset(sc.session, ' ', sizeof(sc.session));
    struct md_snap_server_hooks hooks = {
        .user = lf, .channel_of = channel_of, .flush = flush, .send = loop_send};
    assert_int_equal(md_snap_server_init(&lf->fx.s, &sc, &hooks), 0);
    /* channel_of reads the fixture's generator: the fixture is the loop_feed's first member. */
    char topic[64];
    rdps_pub_t *chan_pub[2];
    for (uint32_t ch = 0; ch < 2; ch++) {
        md_channel_topic(topic, sizeof(topic), "lb", ch);
        rdps_pub_opts po = {.reliable = 1};
        md_snap_server_pub_opts(&lf->fx.s, ch, &po);
        assert_int_equal(rdps_pub_create(feed, topic, &po, &chan_pub[ch]), 0);
    }
    md_snap_topic(topic, sizeof(topic), "lb");
    rdps_pub_opts so = {.reliable = 1};
    md_snap_server_pub_opts(&lf->fx.s, MD_SNAP_SERVER_SNAP_TOPIC, &so);
    assert_int_equal(rdps_pub_create(feed, topic, &so, &lf->snap_pub), 0);
    md_snapreq_topic(topic, sizeof(topic), "lb");
    rdps_sub_t *req_sub;
    assert_int_equal(
        rdps_sub_create(feed, topic, md_snap_server_on_request, &lf->fx.s, NULL, &req_sub), 0);

    /* The late book: the channels, the snapshot topic, requests. */
    struct loop_book lb = {0};
    rdps_sub_t *book_chan[2], *book_snap;
    for (uint32_t ch = 0; ch < 2; ch++) {
        md_channel_topic(topic, sizeof(topic), "lb", ch);
        rdps_sub_opts o = {.reliable = 1};
        assert_int_equal(rdps_sub_create(book, topic, on_channel, NULL, &o, &book_chan[ch]), 0);
    }
    md_snap_topic(topic, sizeof(topic), "lb");
    rdps_sub_opts bo = {.reliable = 1, .on_event = on_snap_event, .event_user = &lb};
    assert_int_equal(rdps_sub_create(book, topic, on_snap, &lb, &bo, &book_snap), 0);
    md_snapreq_topic(topic, sizeof(topic), "lb");
    rdps_pub_t *book_req, *forger_req;
    assert_int_equal(rdps_pub_create(book, topic, NULL, &book_req), 0);
    /* The forger only publishes requests: discovery never announces it as a subscriber. */
    assert_int_equal(rdps_pub_create(forger, topic, NULL, &forger_req), 0);

    rdps_ctx_t *all[] = {feed, book, forger};
    for (int i = 0; i < 2000 && !(rdps_pub_ready(book_req) && rdps_pub_ready(forger_req) &&
                                  rdps_sub_ready(req_sub) && rdps_sub_ready(book_snap));
         i++)
        for (int k = 0; k < 3; k++)
            assert_true(rdps_ctx_poll(all[k], 1) >= 0);
    /* The book asks at once, as md-book does, maybe before the feed heard its announcements. */
    send_request(book, book_req, 1);
    send_request(book, book_req, MD_SNAPREQ_DIRECTORY);
    uint64_t forged = 0;
    for (int i = 0; i < 3000 && !(lb.parts > 0 && lb.slices > 0 &&
                                  !md_snap_server_busy(&lf->fx.s) && forged >= 60);
         i++) {
        if (i % 10 == 0) { /* a forged request every ~10 ms */
            send_request(forger, forger_req, i % 20 == 0 ? 0 : MD_SNAPREQ_DIRECTORY);
            forged++;
        }
        for (int k = 0; k < 3; k++)
            assert_true(rdps_ctx_poll(all[k], 1) >= 0);
        assert_int_equal(md_snap_server_serve(&lf->fx.s, rdps__clock_monotonic_ns()), 0);
    }
    print_message("loopback: book got %llu parts, %llu directory slices; %llu forged requests, "
                  "%llu unknown, %llu taken (%llu after waiting)\n",
                  (unsigned long long)lb.parts, (unsigned long long)lb.slices,
                  (unsigned long long)forged,
                  (unsigned long long)lf->fx.s.counters.requests_unknown,
                  (unsigned long long)lf->fx.s.counters.requests,
                  (unsigned long long)lf->fx.s.counters.requests_late);
    assert_true(lb.feed_known);
    assert_true(lb.parts > 0);
    assert_true(lb.slices > 0);
    assert_int_equal(lb.foreign, 0);
    assert_int_equal(lf->fx.s.counters.snapshots, 1); /* channel 1 only: never channel 0 */
    assert_int_equal(lf->fx.s.counters.directories, 1);
    assert_int_equal(lf->fx.s.counters.requests + lf->fx.s.counters.requests_late, 2);
    assert_true(lf->fx.s.counters.requests_unknown >= forged);

    rdps_ctx_destroy(forger);
    rdps_ctx_destroy(book);
    rdps_ctx_destroy(feed);
    md_snap_server_fini(&lf->fx.s);
    md_gen_fini(&lf->fx.gen);
    free(lf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_undiscovered_requester_gets_nothing),
        cmocka_unit_test(test_discovered_requester_limited),
        cmocka_unit_test(test_request_waits_for_discovery),
        cmocka_unit_test(test_late_book_served_over_loopback),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
