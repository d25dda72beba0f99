/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_reasm.c - libFuzzer harness: the receive engine fed by honest publishers (batching and
 * fragmenting) and hostile senders, with its bounds, the exactness of every delivered message and
 * the message counts of its gap and loss events checked (fuzz_reasm_model.h). */
#include "fuzz_reasm_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * The model and the invariants are in fuzz_reasm_model.h.
 *
 * Input: a sequence of ops, each an op byte then its arguments:
 *   op % 8 == 0  publish 1 + (op >> 3) messages, sent in order: [sel][len lo][len hi]
 *   op % 8 == 1  the same into the pool only
 *   op % 8 == 2  send pool frame:            [index]
 *   op % 8 == 3  send pool frame from a hostile source (op >> 3 picks it): [index]
 *   op % 8 == 4  arbitrary datagram from a hostile source: [len][bytes...]
 *   op % 8 == 5  hostile header: [sel][seq x4][msg_len x2][offset x2][timestamp x2][payload len]
 *                [ordinal step][count]: sel: session 1 + sel % 4, bit 5 a valid batch (or a
 *                reliable heartbeat), bit 6 heartbeat instead of DATA, bit 7 other topic; the
 *                source's ordinal moves by the signed step; count: < 0xF0 a small count, else
 *                a huge one; a batch's count field is off by (count & 3) - 1 when bit 7 is set
 *   op % 8 == 6  time passes by (op >> 3) x 50 us, then expiry and the reliable poll run
 *   op % 8 == 7  honest publisher (op >> 3 & 3), [n x2]: n even, its next 4 n datagrams
 *                (3 n messages) are lost on the way; n odd, it sends a heartbeat (reliable
 *                session: retained count n >> 1); with op >> 5 == 7 instead its next ordinal
 *                moves by the signed n
 *   op % 8 == 2 with op >> 3 odd: the pool frame goes as a repair (RETRANSMIT)
 * sel: bit 0 honest source, bit 1 session (1 or 2), bits 2-7 datagram size header + 8 + 8 x n.
 * Message i of a publish op is len bytes when alone, else (len + i x 37 x (len >> 11 | 1)) modulo
 * 1.5 datagram payloads: some share datagrams, some do not fit the room left, some fragment.
 */

static void send(struct harness *hx, int source, const uint8_t *dgram, size_t len)
{
    hx->newer_src = -1;
    note_sent(hx, source, dgram, len);
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
    check_drops(hx);
}

/* fuzz_publisher.h's callbacks: a datagram to send now or to pool, a message placed. */
static void honest_emit(void *user, const uint8_t *frame, uint32_t len)
{
    struct harness *hx = user;
    struct honest *h = &hx->honest[hx->emit_source][hx->emit_session - 1];
    h->ring[rdps__get_le32(frame + RDPS_FRAME_OFF_SEQ) % SEQ_RING] =
        rdps__get_le32(frame + RDPS_FRAME_OFF_ORDINAL);
    if (hx->emit_now) {
        send(hx, hx->emit_source, frame, len);
        return;
    }
    struct pooled *p = &hx->pool[hx->pool_next];
    memcpy(p->bytes, frame, len);
    p->len = len;
    p->source = (uint8_t)hx->emit_source;
    hx->pool_next = (hx->pool_next + 1) % POOL;
    if (hx->pool_count < POOL)
        hx->pool_count++;
}

static void honest_placed(void *user, uint32_t first_seq, uint32_t ordinal, uint32_t len,
                          uint32_t datagrams)
{
    struct harness *hx = user;
    (void)datagrams;
    published_add(hx, (uint32_t)hx->emit_source, hx->emit_session, first_seq, ordinal, len);
}

static void publish(struct harness *hx, uint8_t op, uint8_t sel, uint16_t len_arg, bool send_now)
{
    uint32_t src = sel & 1u, session = 1 + ((sel >> 1) & 1u);
    uint32_t max_dgram = RDPS_FRAME_HEADER_LEN + 8 + 8 * (uint32_t)(sel >> 2);
    uint32_t n = 1 + (op >> 3), room = max_dgram - RDPS_FRAME_HEADER_LEN;
    if (hx->published_count + n > MAX_PUBLISHED)
        return;
    struct fuzz_pub *p = &hx->honest[src][session - 1].pub;
    hx->emit_source = (int)src;
    hx->emit_session = session;
    hx->emit_now = send_now;
    p->now_ns = hx->now;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t len =
            n == 1 ? len_arg % (FUZZ_MAX_MSG + 1)
                   : (len_arg + i * 37u * ((uint32_t)len_arg >> 11 | 1)) % (room + room / 2 + 1);
        fuzz_pub_send(p, len, max_dgram);
    }
    fuzz_pub_flush(p);
}

/* A hostile DATA or HEARTBEAT with chosen fields (see the input language). */
static void hostile_header(struct harness *hx, uint8_t op, const uint8_t *arg)
{
    uint8_t dgram[MAX_DGRAM];
    unsigned who = (op >> 3) % HOSTILE;
    uint32_t plen = arg[11], count_arg = arg[13];
    uint32_t session = 1 + arg[0] % 4u, topic = arg[0] & 0x80 ? TOPIC + 1 : TOPIC;
    uint32_t seq = rdps__get_le32(arg + 1);
    hx->hostile_ord[who] += (uint32_t)(int32_t)(int8_t)arg[12];
    uint32_t ordinal = hx->hostile_ord[who];
    uint32_t count = count_arg < 0xF0 ? count_arg % 8 : 0xFFFFFF00u | count_arg;
    uint16_t flags = (uint16_t)((op >> 6) << 2);
    int n;
    if (arg[0] & 0x40) {
        n = arg[0] & 0x20
                ? rdps__frame_encode_heartbeat_reliable(dgram, sizeof(dgram), session, topic, seq,
                                                        rdps__get_le16(arg + 5), ordinal,
                                                        ordinal - count, 0)
                : rdps__frame_encode_heartbeat(dgram, sizeof(dgram), session, topic, seq, ordinal,
                                               0, 0);
    } else if (arg[0] & 0x20) { /* a batch the decoder accepts, or one whose count is off */
        struct rdps_batch b;
        rdps__batch_open(&b, dgram, RDPS_FRAME_HEADER_LEN + plen);
        uint32_t want = 2 + count_arg % 6;
        for (uint32_t i = 0; i < want; i++) {
            uint32_t len = (plen / want + i * 3) % 40;
            if (!rdps__batch_fits(&b, len))
                break;
            memset(rdps__batch_add(&b, len), (int)(0x5A ^ i), len);
        }
        count = b.count + ((count_arg & 0x80) ? (count_arg & 3) - 1 : 0);
        n = (int)rdps__frame_put_data_header(dgram, session, topic, seq, b.used, 0, b.used,
                                             rdps__get_le16(arg + 9), flags, ordinal, count);
    } else {
        memset(dgram + RDPS_FRAME_HEADER_LEN, 0xA5, plen);
        n = (int)rdps__frame_put_data_header(dgram, session, topic, seq, rdps__get_le16(arg + 5),
                                             rdps__get_le16(arg + 7), plen, rdps__get_le16(arg + 9),
                                             flags, ordinal, count);
    }
    if (n < 0)
        abort();
    send(hx, HONEST + (int)who, dgram, (size_t)n);
}

/* Honest publisher op: skipped datagrams, a heartbeat, or its ordinals moved (see the input). */
static void honest_control(struct harness *hx, uint8_t op, uint32_t n)
{
    uint32_t src = (op >> 3) & 1u, session = 1 + ((op >> 4) & 1u);
    struct honest *h = &hx->honest[src][session - 1];
    struct fuzz_pub *p = &h->pub;
    uint8_t dgram[MAX_DGRAM];
    if (op >> 5 == 7) { /* the publisher's ordinals jump or go back: counts no longer add up */
        p->next_ordinal += (uint32_t)(int32_t)(int16_t)n;
        h->ord_broken = true;
        return;
    }
    if (!(n & 1)) { /* a burst the receiver never sees: 4 n datagrams holding 3 n messages */
        for (uint32_t k = 0; k < n * 4; k++)
            h->ring[(p->next_seq + k) % SEQ_RING] = p->next_ordinal + k * 3 / 4;
        p->next_seq += n * 4;
        p->next_ordinal += n * 3;
        return;
    }
    int len;
    if (session == RELIABLE_SESSION) {
        /* A publisher retains at most what it sent; the trail is its oldest datagram's ordinal. */
        uint32_t retained = n >> 1, sent = p->next_seq - h->seq0;
        if (retained > sent)
            retained = sent;
        if (retained > SEQ_RING)
            retained = SEQ_RING;
        uint32_t trail = retained ? h->ring[(p->next_seq - retained) % SEQ_RING] : p->next_ordinal;
        len =
            rdps__frame_encode_heartbeat_reliable(dgram, sizeof(dgram), session, TOPIC, p->next_seq,
                                                  retained, p->next_ordinal, trail, hx->now);
    } else {
        len = rdps__frame_encode_heartbeat(dgram, sizeof(dgram), session, TOPIC, p->next_seq,
                                           p->next_ordinal, hx->now, 0);
    }
    if (len < 0)
        abort();
    send(hx, (int)src, dgram, (size_t)len);
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
    for (uint32_t s = 0; s < HONEST; s++) {
        for (uint32_t k = 0; k < SESSIONS; k++) {
            struct honest *h = &hx->honest[s][k];
            /* Sequences wrap early, ordinals elsewhere and soon too. */
            h->seq0 = 0xFFFFFF00u + s * 64 + k * 16;
            h->ord0 = 0xFFFFFFF0u - s * 1000 - k * 7;
            fuzz_pub_init(&h->pub, pub_key(s, k + 1), k + 1, TOPIC,
                          k + 1 == RELIABLE_SESSION ? RDPS_FRAME_F_RELIABLE : 0, h->seq0, h->ord0);
            h->pub.emit = honest_emit;
            h->pub.placed = honest_placed;
            h->pub.user = hx;
            h->ord_broken = false;
            h->gap_seen = false;
        }
    }
    for (int i = 0; i < PUBLISHED_HASH; i++)
        hx->published_hash[i] = hx->ordinal_hash[i] = -1;

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
    hx->cfg.on_gap = on_gap;
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
        switch (op % 8) {
        case 0:
        case 1:
            if (left < 3) {
                pos = size;
                break;
            }
            publish(&hx, op, arg[0], rdps__get_le16(arg + 1), op % 8 == 0);
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
        case 5:
            if (left < 14) {
                pos = size;
                break;
            }
            hostile_header(&hx, op, arg);
            pos += 14;
            break;
        case 6: {
            hx.now += (uint64_t)(op >> 3) * 50000;
            uint64_t next = rdps__reasm_expire(&hx.r, hx.now);
            if (next <= hx.now)
                abort();
            next = rdps__reasm_rel_poll(&hx.r, hx.now, hx.now);
            if (next <= hx.now && rdps__reasm_rel_poll(&hx.r, hx.now, hx.now) <= hx.now)
                abort(); /* one poll sends everything due (up to 64 ranges per NAK) */
            check_bounds(&hx);
            check_drops(&hx);
            break;
        }
        default:
            if (left < 2) {
                pos = size;
                break;
            }
            honest_control(&hx, op, rdps__get_le16(arg));
            pos += 2;
            break;
        }
    }
    const struct rdps_reasm_counters *c = rdps__reasm_counters(&hx.r);
    if (c->gap_msgs != hx.gap_msgs)
        abort(); /* a gap's messages counted otherwise than reported */
    /* Each repair is counted once in each latency histogram, in time and in round trips. */
    const struct rdps_rel_recv_counters *rc = rdps__reasm_rel_counters(&hx.r);
    uint64_t in_us = 0, in_rtts = 0;
    for (unsigned b = 0; b < RDPS_REL_LATENCY_BUCKETS; b++)
        in_us += rc->repair_latency[b];
    for (unsigned b = 0; b < RDPS_REL_RTT_BUCKETS; b++)
        in_rtts += rc->repair_rtts[b];
    if (in_us != in_rtts)
        abort();
    if (getenv("FUZZ_VERBOSE") != NULL)
        fprintf(stderr,
                "delivered %llu | gaps %llu (%llu msgs) | honest loss events %llu (%llu msgs) | "
                "late after gap %llu | bad frames: count %llu batch %llu version %llu\n",
                (unsigned long long)c->msgs_delivered, (unsigned long long)c->gaps,
                (unsigned long long)c->gap_msgs, (unsigned long long)hx.loss_events,
                (unsigned long long)hx.loss_msgs, (unsigned long long)c->late_after_gap,
                (unsigned long long)c->bad_frames[RDPS_FRAME_BAD_COUNT],
                (unsigned long long)c->bad_frames[RDPS_FRAME_BAD_BATCH],
                (unsigned long long)c->bad_frames[RDPS_FRAME_BAD_VERSION]);
    rdps__reasm_fini(&hx.r);
    return 0;
}
