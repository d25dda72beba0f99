/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_reasm.c - libFuzzer harness: the receive engine fed by honest publishers and hostile
 * senders, with its bounds and the exactness of every delivered message checked. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rdps/rdps.h>

#include "rdps_endian.h"
#include "rdps_frag.h"
#include "rdps_reasm.h"

/*
 * Two honest sources publish messages whose bytes are a function of
 * (source, session, first_seq, len); the fuzzer decides when they publish,
 * how their frames are lost, duplicated and reordered, when time passes,
 * and what four hostile sources send: arbitrary datagrams, well-formed DATA
 * and HEARTBEAT headers with chosen fields, and copies of honest frames.
 * The hostile sources are chosen to collide with the honest ones (same GID
 * other QPN, same QPN other GID, LID-only). Invariants (abort on violation):
 * streams, sources, partials and arena bytes within the configured caps
 * after every datagram; every message delivered from an honest source was
 * published by it, with exactly its length and bytes; none is delivered
 * twice while no stream was dropped.
 *
 * Session 2 of each honest source is reliable (RELIABLE frames, reliable
 * heartbeats with a fuzzer-chosen retained count, repairs with RETRANSMIT):
 * its deliveries and loss events must tile the sequence space in order from
 * the first delivery (no message out of order, none twice, no loss event
 * over a delivered message), until the stream is dropped, and its tracker
 * stay within the window (consumed <= next <= consumed + window). Messages
 * go up to FUZZ_MAX_MSG bytes: in small datagrams (8-byte payloads and
 * less) a reliable message is longer than the sequence window and streams
 * through it. Every NAK and STATUS the engine emits must decode.
 *
 * Input: a sequence of ops, each an op byte then its arguments:
 *   op % 8 == 0  publish and send in order:  [sel][len lo][len hi]
 *   op % 8 == 1  publish into the pool only: [sel][len lo][len hi]
 *   op % 8 == 2  send pool frame:            [index]
 *   op % 8 == 3  send pool frame from a hostile source (op >> 3 picks it): [index]
 *   op % 8 == 4  arbitrary datagram from a hostile source: [len][bytes...]
 *   op % 8 == 5  hostile header: [sel][seq x4][msg_len x2][offset x2][timestamp x2][payload len]
 *                sel: session 1 + sel % 4, bit 6 heartbeat instead of DATA, bit 7 other topic
 *   op % 8 == 6  time passes by (op >> 3) x 50 us, then expiry and the reliable poll run
 *   op % 8 == 7  honest publisher (op >> 3 & 3) skips [n x2] sequences or, if n is odd,
 *                sends a heartbeat (reliable session: retained count n >> 1)
 *   op % 8 == 2 with op >> 3 odd: the pool frame goes as a repair (RETRANSMIT)
 * sel: bit 0 honest source, bit 1 session (1 or 2), bits 2-7 datagram size 48 + 8 x n.
 */
#define FUZZ_MAX_MSG   20480u
#define HONEST         2
#define HOSTILE        4
#define SESSIONS       2
#define POOL           64
#define MAX_DGRAM      (48 + 8 * 63)
#define MAX_PUBLISHED  1024
#define PUBLISHED_HASH 2048
#define TOPIC          0x99u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct published {
    uint8_t source, session;
    uint32_t first_seq, len;
    uint32_t delivered;
    bool lost; /* inside a loss event */
};

#define RELIABLE_SESSION 2

struct pooled {
    uint8_t bytes[MAX_DGRAM];
    uint32_t len;
    uint8_t source; /* honest source index */
};

struct harness {
    struct rdps_reasm r;
    struct rdps_reasm_config cfg;
    struct rdps_source sources[HONEST + HOSTILE];
    uint32_t next_seq[HONEST][SESSIONS];
    uint32_t published_count, pool_count, pool_next;
    uint64_t now;
    /* Reliable session of each honest source: where the next delivery or loss must start. */
    bool rel_tiling[HONEST];
    uint32_t rel_pos[HONEST];
    uint64_t rel_dropped[HONEST]; /* streams_dropped() when rel_pos was set */
    int32_t published_hash[PUBLISHED_HASH];
    /* Read only below their counts: not cleared per input. */
    struct published published[MAX_PUBLISHED];
    struct pooled pool[POOL];
    uint8_t msg[FUZZ_MAX_MSG];
};

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    x *= 0x94D049BB133111EBull;
    return x ^ (x >> 32);
}

/* Byte k of an honest publisher's message: depends on who, where and how long. */
static uint8_t message_byte(uint32_t source, uint32_t session, uint32_t first_seq, uint32_t len,
                            uint32_t k)
{
    uint64_t h = mix64(((uint64_t)source << 56) ^ ((uint64_t)session << 48) ^
                       ((uint64_t)first_seq << 16) ^ len);
    return (uint8_t)((h >> (8 * (k % 8))) ^ (k * 131u) ^ (k >> 8));
}

static uint32_t published_slot(uint32_t source, uint32_t session, uint32_t first_seq)
{
    return (uint32_t)mix64(((uint64_t)source << 40) ^ ((uint64_t)session << 32) ^ first_seq) &
           (PUBLISHED_HASH - 1);
}

static struct published *published_find(struct harness *hx, uint32_t source, uint32_t session,
                                        uint32_t first_seq)
{
    for (uint32_t i = published_slot(source, session, first_seq);;
         i = (i + 1) & (PUBLISHED_HASH - 1)) {
        int32_t p = hx->published_hash[i];
        if (p < 0)
            return NULL;
        struct published *m = &hx->published[p];
        if (m->source == source && m->session == session && m->first_seq == first_seq)
            return m;
    }
}

static void published_add(struct harness *hx, uint32_t source, uint32_t session, uint32_t first_seq,
                          uint32_t len)
{
    /* A sequence reused after 2^32 would be a second message at the same place: not reached. */
    struct published *old = published_find(hx, source, session, first_seq);
    if (old != NULL) {
        old->len = len;
        old->delivered = 0;
        old->lost = false;
        return;
    }
    uint32_t i = published_slot(source, session, first_seq);
    while (hx->published_hash[i] >= 0)
        i = (i + 1) & (PUBLISHED_HASH - 1);
    struct published *m = &hx->published[hx->published_count];
    m->source = (uint8_t)source;
    m->session = (uint8_t)session;
    m->first_seq = first_seq;
    m->len = len;
    m->delivered = 0;
    m->lost = false;
    hx->published_hash[i] = (int32_t)hx->published_count++;
}

static int honest_index(const struct harness *hx, const struct rdps_source *s)
{
    for (int i = 0; i < HONEST; i++)
        if (rdps__source_equal(&hx->sources[i], s))
            return i;
    return -1;
}

static uint64_t streams_dropped(const struct rdps_reasm_counters *c)
{
    return c->sessions_evicted + c->sessions_expired + c->sessions_source_quota;
}

static void on_deliver(void *user, const uint8_t *msg, uint32_t len,
                       const struct rdps_reasm_msg_info *info)
{
    struct harness *hx = user;
    if (len != info->msg_len || len > FUZZ_MAX_MSG || info->frag_count == 0 ||
        (len > 0 && msg == NULL))
        abort();
    int src = honest_index(hx, &info->source);
    if (src < 0) {
        /* Hostile: anything goes, but every byte must be readable (ASan). */
        volatile uint8_t sum = 0;
        for (uint32_t i = 0; i < len; i++)
            sum ^= msg[i];
        (void)sum;
        return;
    }
    if (info->topic_id != TOPIC || info->session_id < 1 || info->session_id > SESSIONS)
        abort();
    struct published *m = published_find(hx, (uint32_t)src, info->session_id, info->first_seq);
    if (m == NULL || m->len != len)
        abort(); /* never published: assembled from foreign or stale bytes */
    for (uint32_t k = 0; k < len; k++)
        if (msg[k] != message_byte((uint32_t)src, info->session_id, info->first_seq, len, k))
            abort();
    uint64_t dropped = streams_dropped(rdps__reasm_counters(&hx->r));
    if (m->delivered++ > 0 && dropped == 0)
        abort(); /* delivered twice by a stream that kept its window */
    if (info->session_id == RELIABLE_SESSION) {
        if (!info->reliable || (m->lost && dropped == 0))
            abort(); /* delivered after a loss event covered it */
        if (hx->rel_tiling[src] && hx->rel_dropped[src] == dropped &&
            info->first_seq != hx->rel_pos[src])
            abort(); /* out of order, or a hole without a loss event */
        hx->rel_tiling[src] = true;
        hx->rel_dropped[src] = dropped;
        hx->rel_pos[src] = info->first_seq + info->frag_count;
    }
}

static void on_loss(void *user, const struct rdps_reasm_loss *loss)
{
    struct harness *hx = user;
    if (loss->count == 0 || loss->reason <= RDPS__LOSS_NONE || loss->reason >= RDPS__LOSS_REASONS)
        abort();
    int src = honest_index(hx, loss->source);
    if (src < 0)
        return;
    if (loss->session_id != RELIABLE_SESSION)
        abort(); /* only reliable streams report loss events */
    uint64_t dropped = streams_dropped(rdps__reasm_counters(&hx->r));
    if (hx->rel_tiling[src] && hx->rel_dropped[src] == dropped &&
        loss->first_seq != hx->rel_pos[src])
        abort();
    for (uint32_t i = 0; i < hx->published_count; i++) {
        struct published *m = &hx->published[i];
        if (m->source != src || m->session != RELIABLE_SESSION ||
            m->first_seq - loss->first_seq >= loss->count)
            continue;
        if (m->delivered > 0 && dropped == 0)
            abort(); /* a loss event over a delivered message */
        m->lost = true;
    }
    if (loss->reason == RDPS_LOSS_SESSION_DROPPED) {
        hx->rel_tiling[src] = false; /* a new stream joins at the live position */
        return;
    }
    hx->rel_tiling[src] = hx->rel_tiling[src] || dropped == hx->rel_dropped[src];
    hx->rel_dropped[src] = dropped;
    hx->rel_pos[src] = loss->first_seq + loss->count;
}

static void on_rel_send(void *user, const struct rdps_source *dest, uint32_t session_id,
                        const uint8_t *frame, size_t len)
{
    (void)user;
    (void)dest;
    struct rdps_frame_view v;
    if (rdps__frame_decode(frame, len, NULL, &v) != RDPS_FRAME_OK ||
        v.hdr.session_id != session_id ||
        (v.hdr.type != RDPS_FRAME_NAK && v.hdr.type != RDPS_FRAME_STATUS))
        abort();
}

static void check_bounds(const struct harness *hx)
{
    const struct rdps_reasm *r = &hx->r;
    if (rdps__reasm_stream_count(r) > hx->cfg.max_sessions ||
        rdps__reasm_source_count(r) > hx->cfg.max_sessions ||
        rdps__reasm_partial_count(r) > hx->cfg.max_partials ||
        rdps__reasm_arena_used(r) > hx->cfg.reasm_cap_bytes)
        abort();
    for (int src = 0; src < HONEST; src++) {
        struct rdps_rel_stream_info in;
        if (rdps__reasm_rel_stream_info(r, &hx->sources[src], RELIABLE_SESSION, &in) < 0)
            continue;
        uint32_t held = in.next_seq - in.consumed_seq;
        if (held >= RDPS_REASM_WINDOW)
            abort(); /* the window slid over an unreleased sequence, or next went backwards */
    }
}

static void send(struct harness *hx, int source, const uint8_t *dgram, size_t len)
{
    /* Copy so the datagram ends exactly where it says (ASan catches overreads). */
    uint8_t *copy = malloc(len ? len : 1);
    if (copy == NULL)
        abort();
    memcpy(copy, dgram, len);
    int rc = rdps__reasm_input(&hx->r, &hx->sources[source], copy, len, hx->now);
    free(copy);
    /* A reliable stream's frame may release every parked message behind it. */
    if ((rc < 0 && rc != RDPS_EBADFRAME) || rc > (int)MAX_PUBLISHED)
        abort();
    check_bounds(hx);
}

static void publish(struct harness *hx, uint8_t sel, uint32_t len, bool send_now)
{
    uint32_t src = sel & 1u, session = 1 + ((sel >> 1) & 1u);
    uint32_t max_dgram = 48 + 8 * (uint32_t)(sel >> 2);
    if (hx->published_count == MAX_PUBLISHED)
        return;
    uint32_t *next_seq = &hx->next_seq[src][session - 1];
    uint32_t first_seq = *next_seq;
    for (uint32_t k = 0; k < len; k++)
        hx->msg[k] = message_byte(src, session, first_seq, len, k);
    struct rdps_frag it;
    if (rdps__frag_init(&it, session, TOPIC, next_seq, hx->msg, len, FUZZ_MAX_MSG, max_dgram,
                        hx->now, session == RELIABLE_SESSION ? RDPS_FRAME_F_RELIABLE : 0) < 0)
        abort();
    published_add(hx, src, session, first_seq, len);
    uint8_t frame[MAX_DGRAM];
    int n;
    while ((n = rdps__frag_next(&it, frame, sizeof(frame))) > 0) {
        if (send_now) {
            send(hx, (int)src, frame, (size_t)n);
            continue;
        }
        struct pooled *p = &hx->pool[hx->pool_next];
        memcpy(p->bytes, frame, (size_t)n);
        p->len = (uint32_t)n;
        p->source = (uint8_t)src;
        hx->pool_next = (hx->pool_next + 1) % POOL;
        if (hx->pool_count < POOL)
            hx->pool_count++;
    }
    if (n < 0)
        abort();
}

static void harness_init(struct harness *hx)
{
    memset(hx, 0, offsetof(struct harness, published_hash));
    for (int i = 0; i < HONEST + HOSTILE; i++) {
        struct rdps_source *s = &hx->sources[i];
        s->gid[0] = 0xfe;
        s->gid[1] = 0x80;
        s->gid[15] = (uint8_t)(i + 1);
        s->qpn = 0x100u + (uint32_t)i;
        s->has_gid = 1;
    }
    hx->sources[HONEST + 0].gid[15] = 1; /* honest 0's GID, another QPN */
    hx->sources[HONEST + 1].qpn = 0x100; /* honest 0's QPN, another GID */
    memset(hx->sources[HONEST + 2].gid, 0, 16);
    hx->sources[HONEST + 2].has_gid = 0; /* InfiniBand without a GRH: the LID counts */
    hx->sources[HONEST + 2].lid = 7;
    hx->sources[HONEST + 2].qpn = 0x100;
    for (int s = 0; s < HONEST; s++)
        for (int k = 0; k < SESSIONS; k++)
            hx->next_seq[s][k] = 0xFFFFFF00u + (uint32_t)(s * 64 + k * 16); /* wraps early */
    for (int i = 0; i < PUBLISHED_HASH; i++)
        hx->published_hash[i] = -1;

    rdps__reasm_config_default(&hx->cfg);
    hx->cfg.max_sessions = 6;
    hx->cfg.max_partials = 6;
    hx->cfg.reasm_cap_bytes = 3 * FUZZ_MAX_MSG;
    hx->cfg.chunk_bytes = 512;
    hx->cfg.min_frag_payload = 8; /* 2560 fragments: a reliable message may stream */
    hx->cfg.max_streams_per_source = 3;
    hx->cfg.max_partials_per_source = 3;
    hx->cfg.max_bytes_per_source = FUZZ_MAX_MSG + 2048;
    hx->cfg.partial_timeout_ns = 200000;
    hx->cfg.session_idle_timeout_ns = 1000000;
    hx->cfg.limits.max_msg_len = FUZZ_MAX_MSG;
    hx->cfg.deliver = on_deliver;
    hx->cfg.user = hx;
    hx->cfg.max_gap_ranges = 4;
    hx->cfg.reorder_allowance_ns = 100000;
    hx->cfg.rel.enabled = true;
    hx->cfg.rel.send = on_rel_send;
    hx->cfg.rel.on_loss = on_loss;
    hx->cfg.rel.receivers = 3;
    hx->cfg.rel.default_rtt_ns = 50000;
    hx->cfg.rel.nak_retry_max_ns = 200000;
    hx->cfg.rel.nak_max_tries = 3;
    hx->cfg.rel.loss_deadline_ns = 2000000;
    hx->cfg.rel.status_interval_ns = 1000000;
    hx->cfg.rel.join_wait_ns = 300000;
    if (rdps__reasm_init(&hx->r, &hx->cfg) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct harness hx;
    harness_init(&hx);
    size_t pos = 0;
    while (pos < size) {
        uint8_t op = data[pos++];
        size_t left = size - pos;
        const uint8_t *arg = data + pos;
        uint8_t dgram[MAX_DGRAM];
        switch (op % 8) {
        case 0:
        case 1:
            if (left < 3) {
                pos = size;
                break;
            }
            publish(&hx, arg[0], rdps__get_le16(arg + 1) % (FUZZ_MAX_MSG + 1), op % 8 == 0);
            pos += 3;
            break;
        case 2:
        case 3:
            if (left < 1)
                break;
            pos += 1;
            if (hx.pool_count == 0)
                break;
            {
                struct pooled *p = &hx.pool[arg[0] % hx.pool_count];
                int from = op % 8 == 2 ? p->source : HONEST + (op >> 3) % HOSTILE;
                if (op % 8 == 2 && ((op >> 3) & 1))
                    rdps__put_le16(p->bytes + RDPS_FRAME_OFF_FLAGS,
                                   rdps__get_le16(p->bytes + RDPS_FRAME_OFF_FLAGS) |
                                       RDPS_FRAME_F_RETRANSMIT);
                send(&hx, from, p->bytes, p->len);
            }
            break;
        case 4: {
            size_t len = left == 0 ? 0 : arg[0];
            if (len > left - (left > 0))
                len = left - (left > 0);
            send(&hx, HONEST + (op >> 3) % HOSTILE, arg + 1, len);
            pos += len + (left > 0);
            break;
        }
        case 5: {
            if (left < 12)
                break;
            uint32_t plen = arg[11];
            uint32_t session = 1 + arg[0] % 4u, topic = arg[0] & 0x80 ? TOPIC + 1 : TOPIC;
            uint32_t seq = rdps__get_le32(arg + 1);
            int n;
            if (arg[0] & 0x40) {
                n = rdps__frame_encode_heartbeat(dgram, sizeof(dgram), session, topic, seq, 0, 0);
            } else {
                memset(dgram + RDPS_FRAME_HEADER_LEN, 0xA5, plen);
                n = (int)rdps__frame_put_data_header(
                    dgram, session, topic, seq, rdps__get_le16(arg + 5), rdps__get_le16(arg + 7),
                    plen, rdps__get_le16(arg + 9), (uint16_t)((op >> 6) << 2));
            }
            if (n < 0)
                abort();
            send(&hx, HONEST + (op >> 3) % HOSTILE, dgram, (size_t)n);
            pos += 12;
            break;
        }
        case 6: {
            hx.now += (uint64_t)(op >> 3) * 50000;
            uint64_t next = rdps__reasm_expire(&hx.r, hx.now);
            if (next <= hx.now)
                abort();
            next = rdps__reasm_rel_poll(&hx.r, hx.now, hx.now);
            if (next <= hx.now && rdps__reasm_rel_poll(&hx.r, hx.now, hx.now) <= hx.now)
                abort(); /* one poll sends everything due (up to 64 ranges per NAK) */
            check_bounds(&hx);
            break;
        }
        default: {
            if (left < 2)
                break;
            uint32_t src = (op >> 3) & 1u, session = 1 + ((op >> 4) & 1u);
            uint32_t n = rdps__get_le16(arg);
            pos += 2;
            if (n & 1) {
                int len =
                    session == RELIABLE_SESSION
                        ? rdps__frame_encode_heartbeat_reliable(
                              dgram, sizeof(dgram), session, TOPIC, hx.next_seq[src][session - 1],
                              n >> 1, hx.now)
                        : rdps__frame_encode_heartbeat(dgram, sizeof(dgram), session, TOPIC,
                                                       hx.next_seq[src][session - 1], hx.now, 0);
                if (len < 0)
                    abort();
                send(&hx, (int)src, dgram, (size_t)len);
            } else {
                hx.next_seq[src][session - 1] += n * 4; /* a burst the receiver never sees */
            }
            break;
        }
        }
    }
    /* Each repair is counted once in each latency histogram, in time and in round trips. */
    const struct rdps_rel_recv_counters *rc = rdps__reasm_rel_counters(&hx.r);
    uint64_t in_us = 0, in_rtts = 0;
    for (unsigned b = 0; b < RDPS_REL_LATENCY_BUCKETS; b++)
        in_us += rc->repair_latency[b];
    for (unsigned b = 0; b < RDPS_REL_RTT_BUCKETS; b++)
        in_rtts += rc->repair_rtts[b];
    if (in_us != in_rtts)
        abort();
    rdps__reasm_fini(&hx.r);
    return 0;
}
