/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_receive_path_keyed.c - libFuzzer harness: the whole receive path of a keyed ctx
 * (authenticating interceptor, then decode, reassembly, reliable streams, discovery, a reliable
 * publisher's NAK/STATUS handling) fed sealed frames of honest domain members, forgeries,
 * mutations, truncations and replays through the script transport, on a fake clock. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fuzz_publisher.h"
#include "rdps_auth.h"
#include "rdps_endian.h"
#include "script_transport.h"

/*
 * Model
 * -----
 * One real keyed ctx (key 1 installed; the input may add key 2, switch to it, remove key 1)
 * with an unreliable and a reliable subscriber and a reliable publisher. Three honest senders
 * of the domain (their own nonce prefixes and counters, as an interceptor keeps them) seal
 * frames whose header fields and body the input chooses (ordinals and counts too), under key 1
 * or 2; a forger seals with a key of its own under id 1. The honest senders' frames come from
 * their address (peer). Some of the honest frames are batches of session PATTERN_SESSION: whole
 * messages whose bytes fuzz_msg_fill() makes from (sequence, ordinal, length), sealed once for
 * the datagram. The input also replays frames sent before, from that address or from another QP
 * (a host without the key that recorded them), seals frames with a send time off our clock by
 * more than the freshness window, mutates and truncates, injects raw bytes, moves the clock and
 * polls.
 *
 * What must hold (abort() otherwise): a frame reaches the receive path (frames_received moves
 * by one) exactly when the interceptor must accept it: sealed by an honest sender under a key
 * the ctx holds at that moment, for the address it arrives from, fresh, unaltered, and not
 * replayed (its counter is new for its sender: a sender's new frames always carry a larger
 * counter, a frame accepted before never passes again, DATA or control). Raw bytes, forgeries,
 * replays from another address, stale frames, mutations and truncations never reach it. Every
 * message of PATTERN_SESSION delivered was sealed in one of those batches, at that sequence and
 * ordinal, with exactly its bytes: one verification per datagram splits into the right
 * messages. Every frame the ctx sends verifies under the key it uses and the ctx's own address.
 * Polls never fail; the anti-replay table stays within its cap. ASan/UBSan: no memory error, no
 * undefined behaviour, nothing leaked.
 */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define HONEST  3
#define HISTORY 16
#define MAX_OPS 256
/* The session of the honest batches whose messages are checked, and the batches remembered. */
#define PATTERN_SESSION 5u
#define PATTERN_KEY     0x55u
#define MAX_PATTERN     1024

static const uint8_t keys[3][RDPS_AUTH_KEY_LEN] = {
    {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
     1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
     2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2},
    {9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9,
     9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9},
};

struct sender {
    uint8_t prefix[RDPS_AUTH_PREFIX_LEN];
    uint64_t data_counter, control_counter;
};

struct sent_frame {
    uint8_t bytes[SCRIPT_MAX_PAYLOAD];
    uint32_t len;
    bool accepted, control;
};

struct input {
    const uint8_t *p;
    size_t left;
};

static uint8_t take(struct input *in)
{
    if (in->left == 0)
        return 0;
    in->left--;
    return *in->p++;
}

static uint32_t take32(struct input *in)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v = v << 8 | take(in);
    return v;
}

static uint64_t fake_now;
static uint64_t fake_clock(void *user)
{
    (void)user;
    return fake_now;
}

static void check(bool ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_receive_path_keyed: %s\n", what);
        abort();
    }
}

static uint64_t frames_received(rdps_ctx_t *ctx)
{
    rdps_counters c;
    check(rdps_ctx_counters(ctx, &c) == 0, "counters");
    return c.frames_received;
}

/* Messages sealed in the honest batches: (sequence, ordinal, length). */
struct sealed_msg {
    uint32_t seq, ordinal, len;
};
static struct sealed_msg pattern[MAX_PATTERN];
static unsigned npattern;

static void on_msg(void *user, const void *msg, size_t len, const rdps_msg_info *info)
{
    (void)user;
    volatile uint8_t sink = 0;
    for (size_t i = 0; i < len; i++) /* read whole: ASan checks the bounds */
        sink ^= ((const uint8_t *)msg)[i];
    (void)sink;
    if (info->session_id != PATTERN_SESSION)
        return;
    bool sealed = false;
    for (unsigned i = 0; i < npattern && i < MAX_PATTERN && !sealed; i++)
        sealed = pattern[i].seq == info->seq && pattern[i].ordinal == info->ordinal &&
                 pattern[i].len == len;
    static uint8_t expect[SCRIPT_MAX_PAYLOAD];
    if (len <= sizeof(expect))
        fuzz_msg_fill(expect, PATTERN_KEY, info->seq, info->ordinal, (uint32_t)len);
    check(sealed && len <= sizeof(expect) && memcmp(msg, expect, len) == 0,
          "a batched message delivered that no honest batch held");
}

static const char *const topics[] = {"k.sub", "k.rel", "k.pub", "k.other"};

/* A batch of PATTERN_SESSION: 1..7 whole messages of input-chosen lengths at an input-chosen
 * sequence and ordinal, their bytes fuzz_msg_fill()'s, remembered for on_msg. */
static uint32_t build_pattern(struct input *in, uint8_t *f)
{
    uint16_t flags = (uint16_t)(take(in) & (RDPS_FRAME_F_RETRANSMIT | RDPS_FRAME_F_RELIABLE));
    uint64_t topic = rdps_topic_id(topics[take(in) % 2]);
    uint32_t seq = take32(in) % 64, ordinal = take32(in), want = 1 + take(in) % 7;
    struct rdps_batch b;
    rdps__batch_open(&b, f, SCRIPT_MAX_PAYLOAD - RDPS_AUTH_TRAILER_LEN);
    for (uint32_t i = 0; i < want; i++) {
        uint32_t len = take(in) % 128;
        if (!rdps__batch_fits(&b, len))
            break;
        fuzz_msg_fill(rdps__batch_add(&b, len), PATTERN_KEY, seq, ordinal + i, len);
        pattern[npattern++ % MAX_PATTERN] = (struct sealed_msg){seq, ordinal + i, len};
    }
    return rdps__frame_put_data_header(f, PATTERN_SESSION, topic, seq, b.used, 0, b.used, fake_now,
                                       flags, ordinal, b.count);
}

/* A frame with header fields and body from the input (valid or not for the decoder). */
static uint32_t build(struct input *in, uint32_t pub_session, uint8_t *f)
{
    struct rdps_frame_header h = {0};
    uint8_t t = take(in);
    if ((t & 0x40) && t % 5 == 0)
        return build_pattern(in, f);
    h.type = (uint8_t)(1 + t % 5);
    h.flags = (uint16_t)(take(in) & 0x1f);
    h.session_id = (t & 0x80) ? pub_session : 1u + take(in) % 4u;
    if (h.session_id == PATTERN_SESSION) /* only the checked batches use it */
        h.session_id++;
    h.topic_id = rdps_topic_id(topics[take(in) % 4]);
    h.seq = take32(in) % 64;
    h.msg_len = take(in);
    h.frag_offset = take(in) % 4 == 0 ? take(in) : 0;
    h.timestamp_ns = fake_now;
    /* Ordinals anywhere; counts small (matching a lone message or not) or huge. */
    uint8_t shape = take(in);
    h.ordinal = shape & 0x40 ? take32(in) : (uint32_t)h.seq + (shape >> 3 & 7);
    h.count = shape & 0x80 ? take32(in) : shape % 4u;
    rdps__frame_put_header(f, SCRIPT_MAX_PAYLOAD, &h);
    uint32_t body = take(in);
    if (body > SCRIPT_MAX_PAYLOAD - RDPS_FRAME_HEADER_LEN - RDPS_AUTH_TRAILER_LEN)
        body = SCRIPT_MAX_PAYLOAD - RDPS_FRAME_HEADER_LEN - RDPS_AUTH_TRAILER_LEN;
    for (uint32_t i = 0; i < body; i++)
        f[RDPS_FRAME_HEADER_LEN + i] = take(in);
    if (h.type == RDPS_FRAME_NAK && body >= 8) { /* often a well-formed range count */
        uint16_t n = (uint16_t)((body - 8) / 8);
        rdps__put_le16(f + RDPS_FRAME_NAK_OFF_RANGE_COUNT, n);
    }
    return RDPS_FRAME_HEADER_LEN + body;
}

static const struct rdps_source self = {.gid = {0xfe, 0x80, [15] = 1}, .qpn = 5, .has_gid = 1};
static const struct rdps_source peer = {.gid = {0xfe, 0x80, [15] = 2}, .qpn = 6, .has_gid = 1};
static const struct rdps_source replayer = {.gid = {0xfe, 0x80, [15] = 3}, .qpn = 7, .has_gid = 1};

/* The interceptor's clock: the wall clock in seconds (as the ctx reads it). */
static uint32_t wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME_COARSE, &ts);
    return (uint32_t)ts.tv_sec;
}

/* Sealed by s for peer's address, sent `skew` seconds off our clock. */
static uint32_t seal_as(struct sender *s, const uint8_t *key, uint32_t key_id, bool encrypt,
                        int32_t skew, uint8_t *f, uint32_t len)
{
    uint8_t subkey[RDPS_AUTH_KEY_LEN], source[RDPS_AUTH_SOURCE_LEN];
    rdps__auth_subkey(subkey, key, s->prefix);
    rdps__auth_source_bytes(source, &peer);
    bool control = f[RDPS_FRAME_OFF_TYPE] != RDPS_FRAME_DATA;
    struct rdps_auth_seal_args a = {.prefix = s->prefix,
                                    .counter = control ? s->control_counter++ : s->data_counter++,
                                    .sent_s = wall_s() + (uint32_t)skew,
                                    .source = source,
                                    .key_id = key_id,
                                    .encrypt = encrypt};
    return rdps__auth_seal(f, len, subkey, &a);
}

/* Every frame the ctx sent since the last look verifies under the key it uses. */
static void check_sent(struct rdps_transport *wire, uint64_t *seen, uint32_t key_id)
{
    uint64_t sent = script_transport_sent(wire);
    if (sent == *seen)
        return;
    *seen = sent;
    uint32_t len;
    const uint8_t *last = script_transport_last_sent(wire, &len);
    uint8_t copy[SCRIPT_MAX_PAYLOAD], subkey[RDPS_AUTH_KEY_LEN], source[RDPS_AUTH_SOURCE_LEN];
    check(len >= RDPS_FRAME_HEADER_LEN + RDPS_AUTH_TRAILER_LEN, "a sent frame without trailer");
    memcpy(copy, last, len);
    check((rdps__auth_word(copy) & RDPS_AUTH_WORD_KEY_MASK) == key_id, "sent under another key");
    rdps__auth_subkey(subkey, keys[key_id - 1], rdps__auth_trailer(copy, len));
    rdps__auth_source_bytes(source, &self);
    check(rdps__auth_open(copy, len, subkey, source) == 0, "a sent frame does not verify");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct sent_frame history[HISTORY];
    struct input in = {data, size};
    struct sender honest[HONEST], forger;
    memset(honest, 0, sizeof(honest));
    memset(&forger, 0, sizeof(forger));
    for (int i = 0; i < HONEST; i++) {
        memset(honest[i].prefix, 0x10 + i, RDPS_AUTH_PREFIX_LEN);
        honest[i].control_counter = RDPS_AUTH_CONTROL_COUNTER;
    }
    memset(forger.prefix, 0x66, RDPS_AUTH_PREFIX_LEN);
    forger.control_counter = RDPS_AUTH_CONTROL_COUNTER;
    memset(history, 0, sizeof(history));
    unsigned nhistory = 0;
    npattern = 0;
    fake_now = 1000000000ull;

    rdps_config cfg;
    rdps_config_init(&cfg);
    cfg.domain_key = keys[0];
    cfg.domain_key_id = 1;
    cfg.domain_key_file = "";
    cfg.replay_senders = 16;
    rdps_ctx_t *ctx;
    struct rdps_transport *wire;
    check(script_ctx_create(&cfg, &self, fake_clock, NULL, &ctx, &wire) == 0, "ctx create");
    rdps_sub_t *sub, *rel_sub;
    rdps_pub_t *pub;
    rdps_sub_opts rel = {.reliable = 1};
    rdps_pub_opts rel_pub = {.reliable = 1, .ring_bytes = 1u << 16};
    check(rdps_sub_create(ctx, "k.sub", on_msg, NULL, NULL, &sub) == 0, "sub");
    check(rdps_sub_create(ctx, "k.rel", on_msg, NULL, &rel, &rel_sub) == 0, "reliable sub");
    check(rdps_pub_create(ctx, "k.pub", &rel_pub, &pub) == 0, "reliable pub");
    bool installed[3] = {false, true, false}; /* by key id */
    uint32_t in_use = 1;
    uint64_t sent_seen = script_transport_sent(wire);

    for (int op = 0; op < MAX_OPS && in.left > 0; op++) {
        uint8_t code = take(&in);
        uint8_t f[SCRIPT_MAX_PAYLOAD];
        uint32_t len = 0;
        int expect = 0; /* frames the receive path must see: 0, 1, or -1 for "either" */
        const struct rdps_source *from = &peer;
        switch (code % 8) {
        case 0: { /* raw bytes from anywhere */
            len = take(&in) * 4u;
            if (len > SCRIPT_MAX_PAYLOAD)
                len = SCRIPT_MAX_PAYLOAD;
            for (uint32_t i = 0; i < len; i++)
                f[i] = take(&in);
            break;
        }
        case 1:
        case 2: { /* an honest sender's sealed frame, under key 1 or 2 */
            struct sender *s = &honest[take(&in) % HONEST];
            uint32_t key_id = (code & 0x10) ? 2 : 1;
            /* Sometimes sealed 31 s or more off our clock (either way): stale. */
            int32_t skew = (code & 0x40) ? (int32_t)(31 + take(&in)) * ((code & 0x80) ? -1 : 1) : 0;
            len = build(&in, rdps_pub_session(pub), f);
            len = seal_as(s, keys[key_id - 1], key_id, (code & 0x20) != 0, skew, f, len);
            expect = installed[key_id] && skew == 0 ? 1 : 0;
            struct sent_frame *h = &history[nhistory++ % HISTORY];
            memcpy(h->bytes, f, len);
            h->len = len;
            h->accepted = expect == 1;
            h->control = f[RDPS_FRAME_OFF_TYPE] != RDPS_FRAME_DATA;
            break;
        }
        case 3: { /* a replay of an earlier frame, from its sender's address or another QP */
            if (nhistory == 0)
                continue;
            struct sent_frame *h = &history[take(&in) % (nhistory < HISTORY ? nhistory : HISTORY)];
            memcpy(f, h->bytes, h->len);
            len = h->len;
            uint32_t key_id = rdps__auth_word(f) & RDPS_AUTH_WORD_KEY_MASK;
            if (code & 0x10)
                from = &replayer; /* sealed for peer's address: never from another */
            if (!installed[key_id] || from != &peer || h->accepted)
                expect = 0; /* accepted once: never again */
            else
                expect = -1; /* a delayed frame (or a stale one): within the window or not */
            break;
        }
        case 4: { /* an earlier frame altered, or cut short */
            if (nhistory == 0)
                continue;
            struct sent_frame *h = &history[take(&in) % (nhistory < HISTORY ? nhistory : HISTORY)];
            memcpy(f, h->bytes, h->len);
            len = h->len;
            if (code & 0x10) {
                len -= 1 + take(&in) % RDPS_AUTH_TRAILER_LEN;
            } else {
                uint32_t at = ((uint32_t)take(&in) << 8 | take(&in)) % len;
                f[at] ^= (uint8_t)(take(&in) | 1);
            }
            break;
        }
        case 5: { /* a forger with its own key under id 1 */
            len = build(&in, rdps_pub_session(pub), f);
            len = seal_as(&forger, keys[2], 1, (code & 0x20) != 0, 0, f, len);
            break;
        }
        case 6: { /* key rollover steps; refusals are fine, the model follows what happened */
            check_sent(wire, &sent_seen, in_use); /* what went out under the key before */
            uint8_t k = take(&in) % 5;
            if (k == 0 && rdps_ctx_key_add(ctx, keys[1], 2) == 0)
                installed[2] = true;
            else if (k == 1 && rdps_ctx_key_use(ctx, 2) == 0)
                in_use = 2;
            else if (k == 2 && rdps_ctx_key_use(ctx, 1) == 0)
                in_use = 1;
            else if (k == 3 && rdps_ctx_key_remove(ctx, 1) == 0)
                installed[1] = false;
            else if (k == 4 && rdps_ctx_key_remove(ctx, 2) == 0)
                installed[2] = false;
            check(rdps_ctx_key_in_use(ctx) == in_use, "key in use");
            continue;
        }
        default: /* time passes: heartbeats, NAK timers, expiry */
            fake_now += (uint64_t)take(&in) * 1000000ull;
            check(rdps_ctx_poll(ctx, 0) >= 0, "poll");
            check_sent(wire, &sent_seen, in_use);
            if (take(&in) & 1) {
                uint8_t msg[64] = {0};
                (void)rdps_pub_send(pub, msg, take(&in) % sizeof(msg));
                check_sent(wire, &sent_seen, in_use);
            }
            continue;
        }
        uint64_t before = frames_received(ctx);
        check(script_transport_inject(wire, from, f, len) == 0, "inject");
        check(rdps_ctx_poll(ctx, 0) >= 0, "poll");
        uint64_t got = frames_received(ctx) - before;
        if (expect >= 0 && got != (uint64_t)expect) {
            fprintf(stderr, "op %d (code %u): %llu frames reached the receive path, want %d\n", op,
                    code, (unsigned long long)got, expect);
            abort();
        }
        check(rdps__auth_sender_count(rdps__ctx_of_handle(ctx)->transport) <= 16,
              "anti-replay table over its cap");
        check_sent(wire, &sent_seen, in_use);
    }
    rdps_ctx_destroy(ctx);
    return 0;
}
