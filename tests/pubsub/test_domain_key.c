/* SPDX-License-Identifier: BSD-2-Clause */
/* test_domain_key.c - authenticated domains through the API: keyed pub/sub over the loopback
 * fabric (reliable, encrypted, with loss, key rollover mid-stream), keyless and wrong-key senders,
 * forged and replayed frames of every type dropped before any state, key files and options. */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "discovery.h"
#include "discovery_engine.h"
#include "pubsub_test_util.h"
#include "rdps_auth.h"
#include "rdps_fec.h"
#include "rdps_frag.h"
#include "rdps_reasm.h"
#include "script_transport.h"

static const uint8_t key_one[32] = {0x11, 0x22, 0x33, [30] = 0x44, [31] = 0x55};
static const uint8_t key_two[32] = {0x99, 0x88, 0x77, [30] = 0x66, [31] = 0x55};

static void keyed_config(rdps_config *cfg, const uint8_t *key, uint32_t id, int encrypt)
{
    rdps_config_init(cfg);
    cfg->announce_interval_ms = 1000;
    cfg->domain_key = key;
    cfg->domain_key_id = id;
    cfg->encrypt = encrypt;
    cfg->domain_key_file = ""; /* whatever the environment says */
}

/* Two contexts on one fabric with their own configurations. */
static void pair_open(struct test_pair *p, const rdps_config *ca, const rdps_config *cb)
{
    memset(p, 0, sizeof(*p));
    assert_int_equal(rdps__loopback_fabric_create(&p->fabric), 0);
    assert_int_equal(test_loopback_ctx(p->fabric, ca, 0, &p->a), 0);
    assert_int_equal(test_loopback_ctx(p->fabric, cb, 0, &p->b), 0);
}

static void counters(rdps_ctx_t *ctx, rdps_counters *c)
{
    assert_int_equal(rdps_ctx_counters(ctx, c), 0);
}

/* Reliable, keyed (authenticated, or encrypted too), with the loss generator dropping data and
 * control frames on the subscriber's side: every message arrives, in order, intact. */
static void run_keyed_reliable(int encrypt)
{
    struct test_pair p;
    rdps_config ca, cb;
    keyed_config(&ca, key_one, 1, encrypt);
    keyed_config(&cb, key_one, 1, encrypt);
    cb.loss_rx_rate = 0.05;
    cb.loss_frame_types = 0x1e; /* DATA, HEARTBEAT, NAK, STATUS */
    cb.loss_seed = 7;
    pair_open(&p, &ca, &cb);
    assert_int_equal(rdps_ctx_max_datagram_payload(p.a), LOOPBACK_PAYLOAD - RDPS_AUTH_TRAILER_LEN);
    assert_int_equal(rdps_ctx_key_in_use(p.a), 1);
    struct test_inbox in = {0};
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    rdps_pub_opts popts = {.reliable = 1, .ring_bytes = 1u << 20};
    rdps_sub_opts sopts = {.reliable = 1, .on_event = test_inbox_on_event};
    assert_int_equal(rdps_sub_create(p.b, "auth.rel", test_inbox_on_message, &in, &sopts, &sub), 0);
    assert_int_equal(rdps_pub_create(p.a, "auth.rel", &popts, &pub), 0);
    TEST_PAIR_PUMP(&p, 3);
    uint8_t buf[3000];
    for (uint32_t i = 0; i < 2000; i++) {
        size_t len = test_message_fill(buf, i, 4 + (i * 53u) % (sizeof(buf) - 4));
        TEST_PAIR_SEND_OK(&p, pub, buf, len);
        if (i % 8 == 0)
            TEST_PAIR_PUMP(&p, 1);
    }
    for (int r = 0; r < 2000 && (in.count < 2000 || rdps_pub_receivers_behind(pub) > 0); r++) {
        TEST_PAIR_PUMP(&p, 1);
        usleep(200); /* NAK backoff and heartbeats run on the real clock */
    }
    assert_int_equal(in.count, 2000);
    assert_int_equal(in.out_of_order, 0);
    assert_int_equal(in.corrupt, 0);
    assert_int_equal(in.loss_events, 0);
    rdps_counters c;
    counters(p.b, &c);
    assert_true(c.loss_dropped_rx > 0); /* the loss generator did drop, and repairs healed it */
    assert_true(c.recovered > 0);
    assert_int_equal(c.auth_bad_tag + c.auth_unknown_key + c.auth_unsigned + c.auth_short, 0);
    assert_int_equal(c.auth_replayed, 0);
    rdps_pub_destroy(pub);
    rdps_sub_destroy(sub);
    test_pair_close(&p);
}

static void test_keyed_reliable_with_loss(void **state)
{
    (void)state;
    run_keyed_reliable(0);
}

static void test_encrypted_reliable_with_loss(void **state)
{
    (void)state;
    run_keyed_reliable(1);
}

struct seen {
    unsigned msgs, publishers_seen;
};

static void on_msg(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    (void)data;
    (void)len;
    (void)info;
    ((struct seen *)user)->msgs++;
}

static void on_event(void *user, const rdps_event *ev)
{
    if (ev->type == RDPS_EVENT_PUBLISHER_SEEN)
        ((struct seen *)user)->publishers_seen++;
}

/* A keyed subscriber hears only its domain: a keyless and a wrong-key publisher of the same topic
 * are dropped (and not even discovered); a keyless ctx drops keyed frames as malformed. */
static void test_keyless_and_wrong_key_publishers(void **state)
{
    (void)state;
    struct rdps_loopback_fabric *fabric;
    rdps_ctx_t *honest, *sub_ctx, *keyless, *wrong;
    rdps_config kc, wc;
    keyed_config(&kc, key_one, 1, 0);
    keyed_config(&wc, key_two, 1, 0); /* the same key id, another key */
    assert_int_equal(rdps__loopback_fabric_create(&fabric), 0);
    assert_int_equal(test_loopback_ctx(fabric, &kc, 0, &honest), 0);
    assert_int_equal(test_loopback_ctx(fabric, &kc, 0, &sub_ctx), 0);
    assert_int_equal(test_loopback_ctx(fabric, NULL, 0, &keyless), 0);
    assert_int_equal(test_loopback_ctx(fabric, &wc, 0, &wrong), 0);
    struct seen s = {0}, plain = {0};
    rdps_sub_opts sopts = {.on_event = on_event};
    rdps_sub_t *sub, *plain_sub;
    rdps_pub_t *p_honest, *p_keyless, *p_wrong;
    assert_int_equal(rdps_sub_create(sub_ctx, "auth.mix", on_msg, &s, &sopts, &sub), 0);
    assert_int_equal(rdps_sub_create(keyless, "auth.mix", on_msg, &plain, NULL, &plain_sub), 0);
    assert_int_equal(rdps_pub_create(honest, "auth.mix", NULL, &p_honest), 0);
    assert_int_equal(rdps_pub_create(keyless, "auth.mix", NULL, &p_keyless), 0);
    assert_int_equal(rdps_pub_create(wrong, "auth.mix", NULL, &p_wrong), 0);
    rdps_ctx_t *all[] = {honest, sub_ctx, keyless, wrong};
    for (int r = 0; r < 3; r++)
        for (int i = 0; i < 4; i++)
            assert_true(rdps_ctx_poll(all[i], 0) >= 0);
    for (int m = 0; m < 10; m++) {
        assert_int_equal(rdps_pub_send(p_honest, "honest", 6), 0);
        assert_int_equal(rdps_pub_send(p_keyless, "keyless", 7), 0);
        assert_int_equal(rdps_pub_send(p_wrong, "wrong", 5), 0);
        for (int i = 0; i < 4; i++)
            assert_true(rdps_ctx_poll(all[i], 0) >= 0);
    }
    assert_int_equal(s.msgs, 10);
    assert_int_equal(s.publishers_seen, 1); /* the honest one only */
    assert_int_equal(plain.msgs, 10);       /* the keyless subscriber: the keyless publisher */
    rdps_counters c;
    counters(sub_ctx, &c);
    assert_true(c.auth_unsigned >= 10);
    assert_true(c.auth_bad_tag >= 10);
    counters(keyless, &c);
    assert_true(c.bad_frames >= 20); /* keyed frames: the reserved word is not zero */
    for (int i = 0; i < 4; i++)
        rdps_ctx_destroy(all[i]);
    rdps__loopback_fabric_destroy(fabric);
}

/* ---- forged and replayed frames into one keyed ctx (script transport) ---------------------- */

static uint64_t fake_now = 5000000000ull;
static uint64_t fake_clock(void *user)
{
    (void)user;
    return fake_now;
}

static const struct rdps_source self_src = {.gid = {0xfe, 0x80, [15] = 1}, .qpn = 10, .has_gid = 1};
static const struct rdps_source peer_src = {.gid = {0xfe, 0x80, [15] = 2}, .qpn = 20, .has_gid = 1};

/* A sender of the domain (or a forger with the wrong key): its prefix and counters. */
struct sealer {
    uint8_t prefix[RDPS_AUTH_PREFIX_LEN];
    uint8_t subkey[RDPS_AUTH_KEY_LEN];
    uint64_t data_counter, control_counter;
    uint32_t key_id;
};

static void sealer_init(struct sealer *s, const uint8_t *key, uint32_t key_id, uint8_t seed)
{
    memset(s, 0, sizeof(*s));
    for (unsigned i = 0; i < RDPS_AUTH_PREFIX_LEN; i++)
        s->prefix[i] = (uint8_t)(seed * 31u + i);
    rdps__auth_subkey(s->subkey, key, s->prefix);
    s->control_counter = RDPS_AUTH_CONTROL_COUNTER;
    s->key_id = key_id;
}

/* Sealed for peer_src's address (where inject_poll sends from), now by the wall clock. */
static uint32_t seal(struct sealer *s, uint8_t *frame, uint32_t len)
{
    uint8_t source[RDPS_AUTH_SOURCE_LEN];
    rdps__auth_source_bytes(source, &peer_src);
    struct rdps_auth_seal_args a = {
        .prefix = s->prefix,
        .counter = frame[1] == RDPS_FRAME_DATA ? s->data_counter++ : s->control_counter++,
        .sent_s = (uint32_t)time(NULL),
        .source = source,
        .key_id = s->key_id,
    };
    return rdps__auth_seal(frame, len, s->subkey, &a);
}

/* Seals f (len plain bytes) as s and injects it from `from`, then polls. */
static void inject_sealed(rdps_ctx_t *ctx, struct rdps_transport *wire, struct sealer *s,
                          const struct rdps_source *from, uint8_t *f, uint32_t len)
{
    uint32_t n = seal(s, f, len);
    assert_int_equal(script_transport_inject(wire, from, f, n), 0);
    assert_true(rdps_ctx_poll(ctx, 0) >= 0);
}

/* The five frame types, plain, as an honest member of the domain would send them. */
static uint32_t build_frame(int type, rdps_pub_t *pub, uint8_t *f, uint32_t *seq)
{
    int len = 0;
    uint64_t pub_topic = rdps_topic_id("auth.pub"), sub_topic = rdps_topic_id("auth.sub");
    struct rdps_seq_range range = {.start = 0, .count = 1};
    switch (type) {
    case RDPS_FRAME_DATA:
        memset(f + RDPS_FRAME_HEADER_LEN, 0x5a, 40);
        len = rdps__frag_put_single(f, SCRIPT_MAX_PAYLOAD, 77, sub_topic, seq, 40, 900, 1, 0, *seq);
        break;
    case RDPS_FRAME_HEARTBEAT:
        len = rdps__frame_encode_heartbeat(f, SCRIPT_MAX_PAYLOAD, 77, sub_topic, *seq, *seq, 1, 0);
        break;
    case RDPS_FRAME_NAK:
        len = rdps__frame_encode_nak(f, SCRIPT_MAX_PAYLOAD, rdps_pub_session(pub), pub_topic, 4242,
                                     &range, 1, 1);
        break;
    case RDPS_FRAME_STATUS:
        len = rdps__frame_encode_status(f, SCRIPT_MAX_PAYLOAD, rdps_pub_session(pub), pub_topic,
                                        4242, 0, 64, 1);
        break;
    case RDPS_FRAME_ANNOUNCE: {
        struct rdps_announce a = {.role = RDPS_ROLE_PUBLISHER,
                                  .topic_id = sub_topic,
                                  .group = 0xefc00707,
                                  .session_id = 77,
                                  .qpn = peer_src.qpn,
                                  .interval_ms = 1000};
        strcpy(a.topic, "auth.sub");
        memcpy(a.gid, peer_src.gid, 16);
        uint8_t body[RDPS_ANNOUNCE_MAX_BYTES];
        int blen = rdps__announce_encode(&a, body, sizeof(body));
        assert_true(blen > 0);
        len = rdps__frame_encode_announce(f, SCRIPT_MAX_PAYLOAD, 77, sub_topic, 1, body,
                                          (size_t)blen, 1);
        break;
    }
    default:
        fail();
    }
    assert_true(len > 0 && len + RDPS_AUTH_TRAILER_LEN <= SCRIPT_MAX_PAYLOAD);
    return (uint32_t)len;
}

struct keyed_fixture {
    rdps_ctx_t *ctx;
    struct rdps_transport *wire; /* the script transport under the interceptor */
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    struct seen seen;
};

static void fixture_open(struct keyed_fixture *f)
{
    rdps_config cfg;
    keyed_config(&cfg, key_one, 1, 0);
    memset(f, 0, sizeof(*f));
    assert_int_equal(script_ctx_create(&cfg, &self_src, fake_clock, NULL, &f->ctx, &f->wire), 0);
    rdps_pub_opts popts = {.reliable = 1, .ring_bytes = 1u << 20};
    rdps_sub_opts sopts = {.on_event = on_event};
    assert_int_equal(rdps_pub_create(f->ctx, "auth.pub", &popts, &f->pub), 0);
    assert_int_equal(rdps_sub_create(f->ctx, "auth.sub", on_msg, &f->seen, &sopts, &f->sub), 0);
    assert_true(rdps_ctx_poll(f->ctx, 0) >= 0);
}

static void inject_poll(struct keyed_fixture *f, const uint8_t *bytes, uint32_t len)
{
    assert_int_equal(script_transport_inject(f->wire, &peer_src, bytes, len), 0);
    assert_true(rdps_ctx_poll(f->ctx, 0) >= 0);
}

/* What the tests watch: the counters, and the tables a frame could grow. */
struct snapshot {
    rdps_counters c, pub;
    uint32_t peers, streams, sources, senders;
    int behind, subscribers; /* the reliable publisher's receivers, discovery's subscribers */
};

static void snap(struct keyed_fixture *f, struct snapshot *s)
{
    counters(f->ctx, &s->c);
    assert_int_equal(rdps_pub_counters(f->pub, &s->pub), 0);
    s->peers = rdps__disc_peer_count(rdps__ctx_of_handle(f->ctx)->discovery);
    s->streams = rdps__reasm_stream_count(rdps__ctx_of_handle(f->ctx)->reasm);
    s->sources = rdps__reasm_source_count(rdps__ctx_of_handle(f->ctx)->reasm);
    s->senders = rdps__auth_sender_count(rdps__ctx_of_handle(f->ctx)->transport);
    s->behind = rdps_pub_receivers_behind(f->pub);
    s->subscribers = rdps_pub_subscriber_count(f->pub);
}

/* Every frame type, forged five ways: dropped and counted by the interceptor, nothing else moved:
 * no frame reached the receive path, no table grew, no message, no NAK, no peer. */
static void test_forged_frames_change_nothing(void **state)
{
    (void)state;
    struct keyed_fixture f;
    struct snapshot before, after;
    fixture_open(&f);
    snap(&f, &before);
    struct sealer wrong_key, unknown_id, honest;
    sealer_init(&wrong_key, key_two, 1, 1);
    sealer_init(&unknown_id, key_one, 9, 2);
    sealer_init(&honest, key_one, 1, 3);
    uint32_t seq = 100;
    for (int type = RDPS_FRAME_DATA; type <= RDPS_FRAME_ANNOUNCE; type++) {
        uint8_t f1[SCRIPT_MAX_PAYLOAD], f2[SCRIPT_MAX_PAYLOAD];
        uint32_t len = build_frame(type, f.pub, f1, &seq);
        memcpy(f2, f1, len);
        inject_poll(&f, f1, len); /* keyless */
        uint32_t n = seal(&wrong_key, memcpy(f2, f1, len), len);
        inject_poll(&f, f2, n);
        n = seal(&unknown_id, memcpy(f2, f1, len), len);
        inject_poll(&f, f2, n);
        n = seal(&honest, memcpy(f2, f1, len), len);
        inject_poll(&f, f2, n - 16);                     /* tag cut off */
        inject_poll(&f, f2, RDPS_FRAME_HEADER_LEN + 20); /* shorter than header + trailer */
        f2[20] ^= 1;                                     /* a header field changed */
        inject_poll(&f, f2, n);
    }
    snap(&f, &after);
    assert_int_equal(after.c.auth_unsigned, 5);
    /* A sealed heartbeat is exactly header + trailer: cutting its tag makes it short. A tag cut
     * off the others shifts the trailer: the send time read there is off by years (stale). */
    assert_int_equal(after.c.auth_bad_tag + after.c.auth_stale, 5 * 3 - 1);
    assert_int_equal(after.c.auth_unknown_key, 5);
    assert_int_equal(after.c.auth_short, 5 + 1);
    assert_int_equal(after.c.frames_received, before.c.frames_received);
    assert_int_equal(after.c.bad_frames, before.c.bad_frames);
    assert_int_equal(after.c.msgs_delivered, before.c.msgs_delivered);
    assert_int_equal(after.c.announces_received, before.c.announces_received);
    assert_int_equal(after.pub.naks_received, before.pub.naks_received);
    assert_int_equal(after.peers, before.peers);
    assert_int_equal(after.streams, before.streams);
    assert_int_equal(after.sources, before.sources);
    assert_int_equal(after.senders, before.senders);
    assert_int_equal(after.behind, before.behind);
    assert_int_equal(after.subscribers, before.subscribers);
    assert_int_equal(f.seen.msgs, 0);
    assert_int_equal(f.seen.publishers_seen, 0);
    rdps_ctx_destroy(f.ctx);
}

/*
 * Honest frames once, then the same bytes again: from the sender's own address (the anti-replay
 * windows drop DATA and control frames alike) and from another QP (a host without the key that
 * recorded them: the sender's prefix from another address), before any state is touched: no NAK,
 * no announcement counted twice, no message delivered again, no stream opened for the replayer.
 */
static const struct rdps_source replay_src = {
    .gid = {0xfe, 0x80, [15] = 3}, .qpn = 30, .has_gid = 1};

static void test_replayed_frames(void **state)
{
    (void)state;
    struct keyed_fixture f;
    struct snapshot once, twice;
    fixture_open(&f);
    struct sealer honest;
    sealer_init(&honest, key_one, 1, 3);
    uint32_t seq = 100;
    uint8_t wire[6][SCRIPT_MAX_PAYLOAD];
    uint32_t lens[6];
    for (int type = RDPS_FRAME_DATA; type <= RDPS_FRAME_ANNOUNCE; type++) {
        uint32_t len = build_frame(type, f.pub, wire[type], &seq);
        lens[type] = seal(&honest, wire[type], len);
        uint8_t copy[SCRIPT_MAX_PAYLOAD];
        inject_poll(&f, memcpy(copy, wire[type], lens[type]), lens[type]);
    }
    snap(&f, &once);
    assert_int_equal(once.c.frames_received, 5);
    assert_int_equal(f.seen.msgs, 1);
    assert_int_equal(f.seen.publishers_seen, 1);
    assert_int_equal(once.pub.naks_received, 1);
    assert_int_equal(once.senders, 1);
    for (int from = 0; from < 2; from++) {
        for (int type = RDPS_FRAME_DATA; type <= RDPS_FRAME_ANNOUNCE; type++) {
            uint8_t copy[SCRIPT_MAX_PAYLOAD];
            memcpy(copy, wire[type], lens[type]);
            assert_int_equal(
                script_transport_inject(f.wire, from ? &replay_src : &peer_src, copy, lens[type]),
                0);
            assert_true(rdps_ctx_poll(f.ctx, 0) >= 0);
        }
    }
    snap(&f, &twice);
    assert_int_equal(twice.c.auth_replayed, 10); /* five types, two addresses */
    assert_int_equal(twice.c.auth_bad_tag, 0);
    assert_int_equal(twice.c.frames_received, 5); /* nothing went up */
    assert_int_equal(twice.c.duplicates, once.c.duplicates);
    assert_int_equal(f.seen.msgs, 1);
    assert_int_equal(twice.pub.naks_received, 1);
    assert_int_equal(twice.c.announces_received, once.c.announces_received);
    assert_int_equal(twice.peers, once.peers);
    assert_int_equal(twice.streams, once.streams);
    assert_int_equal(twice.sources, once.sources);
    assert_int_equal(twice.senders, 1);
    assert_int_equal(twice.behind, once.behind);
    assert_int_equal(twice.subscribers, once.subscribers);
    assert_int_equal(twice.c.bad_frames, 0);
    rdps_ctx_destroy(f.ctx);
}

/* Raw endpoints on the keyed pair's fabric: a host without the key (no ctx at all) that joins a
 * topic's group, records what the publisher sends there and sends it again. */
struct recorder {
    struct rdps_transport *ep;
    uint8_t frames[400][LOOPBACK_MAX_DATAGRAM];
    uint32_t lens[400];
    unsigned count;
};

static uint32_t topic_group(rdps_ctx_t *ctx, const char *topic)
{
    char text[32];
    struct in_addr in;
    assert_int_equal(rdps_topic_group(ctx, topic, text, sizeof(text)), 0);
    assert_int_equal(inet_pton(AF_INET, text, &in), 1);
    return ntohl(in.s_addr);
}

static void recorder_take(struct recorder *r)
{
    struct rdps_rx_datagram rx[16];
    int n;
    while ((n = r->ep->ops->poll(r->ep, rx, 16)) > 0) {
        for (int i = 0; i < n; i++) {
            if (r->count < 400 && rx[i].len <= LOOPBACK_MAX_DATAGRAM) {
                memcpy(r->frames[r->count], rx[i].data, rx[i].len);
                r->lens[r->count++] = rx[i].len;
            }
        }
        r->ep->ops->rx_release(r->ep, rx, n);
    }
}

/* Sends every recorded datagram from a fresh endpoint (a new QP: they cost nothing) to the group,
 * then destroys it. */
static void replay_from_fresh_qp(struct rdps_loopback_fabric *fabric, const struct recorder *r,
                                 uint32_t group)
{
    struct rdps_transport *q;
    const struct rdps_dest *dest;
    struct rdps_loopback_config lc = {.max_payload = LOOPBACK_MAX_DATAGRAM, .send_slots = 64};
    assert_int_equal(rdps__loopback_create(fabric, &lc, &q), 0);
    assert_int_equal(rdps__loopback_group_dest(fabric, group, &dest), 0);
    for (unsigned i = 0; i < r->count; i++) {
        struct rdps_tx_buf buf;
        struct rdps_rx_datagram rx;
        assert_true(q->ops->poll(q, &rx, 0) >= 0); /* reaps the sends */
        assert_int_equal(q->ops->claim(q, &buf), 0);
        memcpy(buf.data, r->frames[i], r->lens[i]);
        assert_int_equal(q->ops->submit(q, &buf, r->lens[i], &dest, 1), 0);
        assert_int_equal(q->ops->flush(q), 0);
    }
    q->ops->destroy(q);
}

/*
 * Finding 1 of the fourth review, through the API: a keyless host records a reliable keyed topic's
 * datagrams from its group and replays them from fresh QPs while the publisher runs and after it
 * is gone. The subscriber delivers every message exactly once and drops every replayed datagram
 * in the interceptor (1.2.0 delivered each recording again, as a new stream of the replayer).
 */
static void run_replay_from_fresh_qps(int encrypt)
{
    struct test_pair p;
    rdps_config ca, cb;
    keyed_config(&ca, key_one, 1, encrypt);
    keyed_config(&cb, key_one, 1, encrypt);
    pair_open(&p, &ca, &cb);
    struct test_inbox in = {0};
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    rdps_pub_opts popts = {.reliable = 1, .ring_bytes = 1u << 20};
    rdps_sub_opts sopts = {.reliable = 1, .on_event = test_inbox_on_event};
    assert_int_equal(rdps_sub_create(p.b, "auth.replay", test_inbox_on_message, &in, &sopts, &sub),
                     0);
    assert_int_equal(rdps_pub_create(p.a, "auth.replay", &popts, &pub), 0);
    static struct recorder rec;
    memset(&rec, 0, sizeof(rec));
    struct rdps_loopback_config lc = {.max_payload = LOOPBACK_MAX_DATAGRAM, .recv_slots = 1024};
    assert_int_equal(rdps__loopback_create(p.fabric, &lc, &rec.ep), 0);
    uint32_t group = topic_group(p.a, "auth.replay");
    assert_int_equal(rdps__loopback_join(rec.ep, group), 0);
    TEST_PAIR_PUMP(&p, 3);
    uint8_t buf[600];
    unsigned replays = 0;
    for (uint32_t i = 0; i < 200; i++) {
        size_t len = test_message_fill(buf, i, 4 + (i * 37u) % (sizeof(buf) - 4));
        TEST_PAIR_SEND_OK(&p, pub, buf, len);
        TEST_PAIR_PUMP(&p, 1);
        recorder_take(&rec);
        if (i == 99) { /* while the publisher runs */
            replay_from_fresh_qp(p.fabric, &rec, group);
            replays += rec.count;
            TEST_PAIR_PUMP(&p, 32);
        }
    }
    for (int r = 0; r < 200 && (in.count < 200 || rdps_pub_receivers_behind(pub) > 0); r++)
        TEST_PAIR_PUMP(&p, 1);
    recorder_take(&rec);
    assert_true(rec.count >= 200); /* every message's datagram, and heartbeats */
    replay_from_fresh_qp(p.fabric, &rec, group);
    replays += rec.count;
    TEST_PAIR_PUMP(&p, 32);
    rdps_pub_destroy(pub); /* after the publisher is gone: twice more, from two new QPs */
    TEST_PAIR_PUMP(&p, 2);
    for (int k = 0; k < 2; k++) {
        replay_from_fresh_qp(p.fabric, &rec, group);
        replays += rec.count;
        TEST_PAIR_PUMP(&p, 32);
    }
    rdps_counters c;
    counters(p.b, &c);
    printf("replay from fresh QPs (encrypt %d): %u datagrams replayed, %u messages delivered of "
           "200, auth_replayed %llu, auth_bad_tag %llu\n",
           encrypt, replays, in.count, (unsigned long long)c.auth_replayed,
           (unsigned long long)c.auth_bad_tag);
    assert_int_equal(in.count, 200);
    assert_int_equal(in.out_of_order, 0);
    assert_int_equal(in.corrupt, 0);
    assert_int_equal(in.loss_events, 0);
    assert_true(c.auth_replayed + c.auth_bad_tag >= replays);
    rec.ep->ops->destroy(rec.ep);
    rdps_sub_destroy(sub);
    test_pair_close(&p);
}

static void test_replay_from_fresh_qps(void **state)
{
    (void)state;
    run_replay_from_fresh_qps(0);
}

static void test_replay_from_fresh_qps_encrypted(void **state)
{
    (void)state;
    run_replay_from_fresh_qps(1);
}

/* Key rollover in the middle of a reliable stream: add everywhere, use everywhere, remove the old
 * key; every message arrives in order and no frame is dropped for its key. */
static void test_rollover_mid_stream(void **state)
{
    (void)state;
    struct test_pair p;
    rdps_config ca, cb;
    keyed_config(&ca, key_one, 1, 1);
    keyed_config(&cb, key_one, 1, 1);
    pair_open(&p, &ca, &cb);
    struct test_inbox in = {0};
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    rdps_pub_opts popts = {.reliable = 1, .ring_bytes = 1u << 20};
    rdps_sub_opts sopts = {.reliable = 1, .on_event = test_inbox_on_event};
    assert_int_equal(rdps_sub_create(p.b, "auth.roll", test_inbox_on_message, &in, &sopts, &sub),
                     0);
    assert_int_equal(rdps_pub_create(p.a, "auth.roll", &popts, &pub), 0);
    TEST_PAIR_PUMP(&p, 3);
    uint8_t buf[2000];
    for (uint32_t i = 0; i < 3000; i++) {
        if (i == 1000) { /* step 1: both accept the next key */
            assert_int_equal(rdps_ctx_key_add(p.a, key_two, 2), 0);
            assert_int_equal(rdps_ctx_key_add(p.b, key_two, 2), 0);
        } else if (i == 1500) { /* step 2: the publisher switches first, then the subscriber */
            assert_int_equal(rdps_ctx_key_use(p.a, 2), 0);
        } else if (i == 1700) {
            assert_int_equal(rdps_ctx_key_use(p.b, 2), 0);
        } else if (i == 2000) { /* step 3: the old key goes */
            assert_int_equal(rdps_ctx_key_remove(p.a, 1), 0);
            assert_int_equal(rdps_ctx_key_remove(p.b, 1), 0);
        }
        size_t len = test_message_fill(buf, i, 4 + (i * 29u) % (sizeof(buf) - 4));
        TEST_PAIR_SEND_OK(&p, pub, buf, len);
        if (i % 4 == 0)
            TEST_PAIR_PUMP(&p, 1);
    }
    for (int r = 0; r < 500 && (in.count < 3000 || rdps_pub_receivers_behind(pub) > 0); r++)
        TEST_PAIR_PUMP(&p, 1);
    assert_int_equal(in.count, 3000);
    assert_int_equal(in.out_of_order, 0);
    assert_int_equal(in.corrupt, 0);
    assert_int_equal(in.loss_events, 0);
    rdps_counters c;
    for (int side = 0; side < 2; side++) {
        counters(side ? p.b : p.a, &c);
        assert_int_equal(c.auth_unknown_key + c.auth_bad_tag + c.auth_replayed, 0);
    }
    assert_int_equal(rdps_ctx_key_in_use(p.a), 2);
    assert_int_equal(rdps_ctx_key_remove(p.a, 2), RDPS_EBUSY);
    rdps_pub_destroy(pub);
    rdps_sub_destroy(sub);
    test_pair_close(&p);
}

/* ---- key files and options --------------------------------------------------------------- */

static const char key_hex[] = "00112233445566778899aabbccddeeff0123456789abcdef0011223344556677";

static void write_file(const char *path, const char *text, mode_t mode)
{
    unlink(path);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
    assert_int_equal(chmod(path, mode), 0);
}

static void test_key_files(void **state)
{
    (void)state;
    char dir[] = "/tmp/rdps-key-XXXXXX", path[64], text[256];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/domain.key", dir);
    uint8_t key[32];
    uint32_t id = 0;

    snprintf(text, sizeof(text), "# a comment\n\n  7:%s  \n", key_hex);
    write_file(path, text, 0600);
    assert_int_equal(rdps_domain_key_read(path, key, &id), 0);
    assert_int_equal(id, 7);
    assert_int_equal(key[0], 0x00);
    assert_int_equal(key[10], 0xaa);
    assert_int_equal(key[31], 0x77);
    snprintf(text, sizeof(text), "%s", key_hex); /* no id, no newline */
    write_file(path, text, 0400);
    assert_int_equal(rdps_domain_key_read(path, key, &id), 0);
    assert_int_equal(id, 1);
    assert_int_equal(rdps_domain_key_read(path, key, NULL), 0);

    write_file(path, text, 0640); /* readable by the group: refused, like ssh */
    assert_int_equal(rdps_domain_key_read(path, key, &id), RDPS_EACCES);
    assert_non_null(strstr(rdps_last_error_message(), "chmod 600"));
    write_file(path, text, 0604);
    assert_int_equal(rdps_domain_key_read(path, key, &id), RDPS_EACCES);

    static const char *const bad[] = {
        "",
        "# only a comment\n",
        "0011",
        "0:00112233445566778899aabbccddeeff0123456789abcdef0011223344556677",
        "16777216:00112233445566778899aabbccddeeff0123456789abcdef0011223344556677",
        "x:00112233445566778899aabbccddeeff0123456789abcdef0011223344556677",
        "00112233445566778899aabbccddeeff0123456789abcdef00112233445566zz",
        "00112233445566778899aabbccddeeff0123456789abcdef001122334455667788",
        "00112233445566778899aabbccddeeff0123456789abcdef0011223344556677\n"
        "00112233445566778899aabbccddeeff0123456789abcdef0011223344556677\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        write_file(path, bad[i], 0600);
        assert_int_equal(rdps_domain_key_read(path, key, &id), RDPS_EINVAL);
    }
    unlink(path);
    assert_int_equal(rdps_domain_key_read(path, key, &id), RDPS_ENOENT);
    assert_int_equal(rdps_domain_key_read(NULL, key, &id), RDPS_EINVAL);

    /* A ctx keyed by the file, by $RDPS_DOMAIN_KEY_FILE, and "" to stay keyless. */
    snprintf(text, sizeof(text), "5:%s\n", key_hex);
    write_file(path, text, 0600);
    struct rdps_loopback_fabric *fabric;
    rdps_ctx_t *ctx;
    rdps_config cfg;
    assert_int_equal(rdps__loopback_fabric_create(&fabric), 0);
    rdps_config_init(&cfg);
    cfg.domain_key_file = path;
    assert_int_equal(test_loopback_ctx(fabric, &cfg, 64, &ctx), 0);
    assert_int_equal(rdps_ctx_key_in_use(ctx), 5);
    rdps_ctx_destroy(ctx);
    setenv("RDPS_DOMAIN_KEY_FILE", path, 1);
    rdps_config_init(&cfg);
    assert_int_equal(test_loopback_ctx(fabric, &cfg, 64, &ctx), 0);
    assert_int_equal(rdps_ctx_key_in_use(ctx), 5);
    rdps_ctx_destroy(ctx);
    cfg.domain_key_file = "";
    assert_int_equal(test_loopback_ctx(fabric, &cfg, 64, &ctx), 0);
    assert_int_equal(rdps_ctx_key_in_use(ctx), 0);
    assert_int_equal(rdps_ctx_key_add(ctx, key_one, 2), RDPS_ENOTSUP);
    assert_int_equal(rdps_ctx_key_use(ctx, 1), RDPS_ENOTSUP);
    assert_int_equal(rdps_ctx_key_remove(ctx, 1), RDPS_ENOTSUP);
    rdps_ctx_destroy(ctx);
    chmod(path, 0644);
    rdps_config_init(&cfg);
    assert_int_equal(test_loopback_ctx(fabric, &cfg, 64, &ctx), RDPS_EACCES);
    unsetenv("RDPS_DOMAIN_KEY_FILE");

    /* Options refused: encrypt without a key, key ids and table sizes out of range. */
    rdps_config_init(&cfg);
    cfg.domain_key_file = "";
    cfg.encrypt = 1;
    assert_int_equal(test_loopback_ctx(fabric, &cfg, 64, &ctx), RDPS_EINVAL);
    keyed_config(&cfg, key_one, RDPS_DOMAIN_KEY_ID_MAX + 1, 0);
    assert_int_equal(test_loopback_ctx(fabric, &cfg, 64, &ctx), RDPS_EINVAL);
    keyed_config(&cfg, key_one, 1, 2);
    assert_int_equal(test_loopback_ctx(fabric, &cfg, 64, &ctx), RDPS_EINVAL);
    keyed_config(&cfg, key_one, 1, 0);
    cfg.replay_senders = 15;
    assert_int_equal(test_loopback_ctx(fabric, &cfg, 64, &ctx), RDPS_EINVAL);
    keyed_config(&cfg, key_one, 1, 0);
    assert_int_equal(test_loopback_ctx(fabric, &cfg, 64, &ctx), 0);
    assert_int_equal(rdps_ctx_key_add(ctx, NULL, 2), RDPS_EINVAL);
    assert_int_equal(rdps_ctx_key_add(ctx, key_two, 0), RDPS_EINVAL);
    assert_int_equal(rdps_ctx_key_use(ctx, 0), RDPS_EINVAL);
    assert_int_equal(rdps_ctx_key_use(ctx, 3), RDPS_ENOENT);
    assert_int_equal(rdps_ctx_key_remove(ctx, 1), RDPS_EBUSY);
    assert_int_equal(rdps_ctx_key_add(NULL, key_two, 2), RDPS_EINVAL);
    assert_int_equal(rdps_ctx_key_in_use(NULL), 0);
    rdps_ctx_destroy(ctx);
    rdps__loopback_fabric_destroy(fabric);
    unlink(path);
    rmdir(dir);
}

/*
 * Finding 5 of the fourth review: a key file that is a FIFO (or a device) is refused at once, not
 * waited on (1.2.0 blocked in open() for ever); a symbolic link to a good file is followed; a file
 * another user owns is refused. The read runs in a child with a 10 s alarm, so a hang fails the
 * test instead of hanging it.
 */
static int read_in_child(const char *path)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(10);
        uint8_t key[32];
        int rc = rdps_domain_key_read(path, key, NULL);
        _exit(rc == RDPS_EINVAL ? 0 : rc == 0 ? 1 : 2);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status)) {
        printf("key file %s: the read was killed by signal %d (it blocked)\n", path,
               WTERMSIG(status));
        return -1;
    }
    return WEXITSTATUS(status);
}

static void test_key_file_not_regular(void **state)
{
    (void)state;
    char dir[] = "/tmp/rdps-keyfifo-XXXXXX", fifo[64], link[64], file[64], text[128];
    assert_non_null(mkdtemp(dir));
    snprintf(fifo, sizeof(fifo), "%s/fifo.key", dir);
    snprintf(link, sizeof(link), "%s/link.key", dir);
    snprintf(file, sizeof(file), "%s/real.key", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(read_in_child(fifo), 0); /* RDPS_EINVAL, promptly */
    assert_int_equal(read_in_child("/dev/zero"), 0);
    /* A ctx whose key file is the FIFO fails to be created, and says why. */
    rdps_config cfg;
    rdps_config_init(&cfg);
    cfg.domain_key_file = fifo;
    struct rdps_loopback_fabric *fabric;
    rdps_ctx_t *ctx;
    assert_int_equal(rdps__loopback_fabric_create(&fabric), 0);
    assert_int_equal(test_loopback_ctx(fabric, &cfg, 64, &ctx), RDPS_EINVAL);
    assert_non_null(strstr(rdps_last_error_message(), "not a regular file"));
    /* A link to a private regular file is followed. */
    snprintf(text, sizeof(text), "3:%s\n",
             "00112233445566778899aabbccddeeff0123456789abcdef0011223344556677");
    write_file(file, text, 0600);
    assert_int_equal(symlink(file, link), 0);
    uint8_t key[32];
    uint32_t id = 0;
    assert_int_equal(rdps_domain_key_read(link, key, &id), 0);
    assert_int_equal(id, 3);
    /* A file another user owns (root can make one): refused, whatever its mode. */
    if (geteuid() == 0) {
        assert_int_equal(chown(file, 65534, 65534), 0);
        assert_int_equal(rdps_domain_key_read(file, key, &id), RDPS_EACCES);
        assert_non_null(strstr(rdps_last_error_message(), "owned by uid 65534"));
    }
    rdps__loopback_fabric_destroy(fabric);
    unlink(link);
    unlink(file);
    unlink(fifo);
    rmdir(dir);
}

/*
 * The parity path of a keyed reliable subscriber: a forger without the key builds a parity symbol
 * that decodes into a valid frame for the datagram the subscriber lacks (message 99, header and
 * all: test_rx_parity shows the engine alone delivers it when it comes from the publisher's exact
 * address) and sends it from that address, unsealed and under another key; the publisher's own
 * parity symbol is replayed from another QP. Nothing is delivered until the publisher's symbol
 * comes from the publisher: then the true message, in order.
 */
static void put_reliable_data(uint8_t *f, uint32_t seq, uint32_t index)
{
    uint32_t next = seq;
    size_t len = test_message_fill(f + RDPS_FRAME_HEADER_LEN, index, 100);
    assert_int_equal(rdps__frag_put_single(f, SCRIPT_MAX_PAYLOAD, 88, rdps_topic_id("auth.par"),
                                           &next, len, SCRIPT_MAX_PAYLOAD - RDPS_AUTH_TRAILER_LEN,
                                           index + 1, RDPS_FRAME_F_RELIABLE, index),
                     (int)(RDPS_FRAME_HEADER_LEN + len));
}

static uint32_t parity_over(uint8_t blocks[4][SCRIPT_MAX_PAYLOAD], uint32_t start, uint8_t *f)
{
    const uint8_t *src[4];
    uint32_t lens[4];
    for (int i = 0; i < 4; i++) {
        src[i] = blocks[i] + RDPS_FRAME_SYMBOL_OFF;
        lens[i] = RDPS_FRAME_HEADER_LEN + 100 - RDPS_FRAME_SYMBOL_OFF;
    }
    struct rdps_fec *fec = calloc(1, sizeof(*fec));
    assert_non_null(fec);
    assert_int_equal(rdps__fec_init(fec, 4, 4, 200), 0);
    assert_int_equal(
        rdps__frame_put_parity_header(f, 88, rdps_topic_id("auth.par"), start, 4, 0, 1),
        RDPS_FRAME_HEADER_LEN);
    assert_int_equal(rdps__fec_encode(fec, src, lens, 0, f + RDPS_FRAME_HEADER_LEN), 0);
    free(fec);
    return RDPS_FRAME_HEADER_LEN + 200 + RDPS_FEC_LEN_BYTES;
}

static void test_forged_parity_keyed(void **state)
{
    (void)state;
    rdps_config cfg;
    keyed_config(&cfg, key_one, 1, 0);
    cfg.parity_blocks = 8;
    rdps_ctx_t *ctx;
    struct rdps_transport *wire;
    assert_int_equal(script_ctx_create(&cfg, &self_src, fake_clock, NULL, &ctx, &wire), 0);
    struct test_inbox in = {0};
    rdps_sub_t *sub;
    rdps_sub_opts sopts = {.reliable = 1, .on_event = test_inbox_on_event};
    assert_int_equal(rdps_sub_create(ctx, "auth.par", test_inbox_on_message, &in, &sopts, &sub), 0);
    assert_true(rdps_ctx_poll(ctx, 0) >= 0);
    struct sealer honest, outsider;
    sealer_init(&honest, key_one, 1, 3);
    sealer_init(&outsider, key_two, 1, 4);
    uint8_t f[SCRIPT_MAX_PAYLOAD], block[4][SCRIPT_MAX_PAYLOAD];
    const uint32_t start = 400;
    /* Message 0 (the block before) starts the stream; the heartbeat tells k = 4; messages 1, 2, 4
     * (sequences 400, 401, 403) arrive, 402 (message 3) does not. */
    put_reliable_data(f, start - 1, 0);
    inject_sealed(ctx, wire, &honest, &peer_src, f, RDPS_FRAME_HEADER_LEN + 100);
    /* Next: message 1 at `start`; the ring holds message 0 (at start - 1). */
    int hb = rdps__frame_encode_heartbeat_parity(f, sizeof(f), 88, rdps_topic_id("auth.par"), start,
                                                 1, 1, 0, 2, 4, 0, 1);
    assert_true(hb > 0);
    inject_sealed(ctx, wire, &honest, &peer_src, f, (uint32_t)hb);
    for (uint32_t i = 0; i < 4; i++) {
        put_reliable_data(block[i], start + i, i + 1);
        if (i != 2)
            inject_sealed(ctx, wire, &honest, &peer_src, memcpy(f, block[i], SCRIPT_MAX_PAYLOAD),
                          RDPS_FRAME_HEADER_LEN + 100);
    }
    assert_int_equal(in.count, 3);
    /* The forgery: message 99 in place of sequence 402, a valid frame once decoded. */
    uint8_t forged_block[4][SCRIPT_MAX_PAYLOAD], genuine[SCRIPT_MAX_PAYLOAD];
    memcpy(forged_block, block, sizeof(block));
    put_reliable_data(forged_block[2], start + 2, 99);
    uint32_t plen = parity_over(forged_block, start, f);
    assert_int_equal(script_transport_inject(wire, &peer_src, f, plen), 0); /* unsealed */
    assert_true(rdps_ctx_poll(ctx, 0) >= 0);
    plen = parity_over(forged_block, start, f);
    inject_sealed(ctx, wire, &outsider, &peer_src, f, plen); /* under another key */
    /* The publisher's own symbol, recorded and replayed from another QP. */
    uint32_t glen = parity_over(block, start, genuine);
    glen = seal(&honest, genuine, glen);
    memcpy(f, genuine, glen);
    assert_int_equal(script_transport_inject(wire, &replay_src, f, glen), 0);
    assert_true(rdps_ctx_poll(ctx, 0) >= 0);
    rdps_counters c;
    counters(ctx, &c);
    assert_int_equal(in.count, 3);
    assert_int_equal(c.parity_rebuilt, 0);
    assert_int_equal(c.auth_unsigned, 1);
    assert_int_equal(c.auth_bad_tag, 1);
    assert_int_equal(c.auth_replayed, 1);
    /* From the publisher, the same symbol rebuilds the true message 3: all five, in order. */
    assert_int_equal(script_transport_inject(wire, &peer_src, genuine, glen), 0);
    assert_true(rdps_ctx_poll(ctx, 0) >= 0);
    counters(ctx, &c);
    assert_int_equal(c.parity_rebuilt, 1);
    assert_int_equal(in.count, 5);
    assert_int_equal(in.out_of_order + in.corrupt + in.backwards + in.skipped, 0);
    rdps_ctx_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keyed_reliable_with_loss),
        cmocka_unit_test(test_encrypted_reliable_with_loss),
        cmocka_unit_test(test_keyless_and_wrong_key_publishers),
        cmocka_unit_test(test_forged_frames_change_nothing),
        cmocka_unit_test(test_replayed_frames),
        cmocka_unit_test(test_replay_from_fresh_qps),
        cmocka_unit_test(test_replay_from_fresh_qps_encrypted),
        cmocka_unit_test(test_rollover_mid_stream),
        cmocka_unit_test(test_key_files),
        cmocka_unit_test(test_key_file_not_regular),
        cmocka_unit_test(test_forged_parity_keyed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
