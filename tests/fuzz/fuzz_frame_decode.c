/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_frame_decode.c - libFuzzer harness: the frame decoder on arbitrary bytes, re-encode round
 * trips, and the batch writer (rdps_batch.h) driven by the same bytes, its datagrams decoded. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rdps_batch.h"
#include "rdps_endian.h"
#include "rdps_frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A decoded DATA frame's whole messages: a batch's records walk the payload exactly, each within
 * the limit; the writer packs them again into the same bytes. */
static void check_messages(const struct rdps_frame_view *v, const struct rdps_frame_limits *lim)
{
    const struct rdps_frame_header *h = &v->hdr;
    if (h->count == 0) {
        if ((h->flags & (RDPS_FRAME_F_BEGIN | RDPS_FRAME_F_END)) ==
            (RDPS_FRAME_F_BEGIN | RDPS_FRAME_F_END))
            abort(); /* a whole message without a count */
        return;
    }
    if (h->frag_offset != 0 || h->msg_len != v->payload_len)
        abort(); /* whole messages fill the payload */
    if (h->count == 1 || v->payload_len > 65536)
        return;
    static uint8_t again[65536 + RDPS_FRAME_HEADER_LEN];
    struct rdps_batch b;
    struct rdps_batch_iter it;
    rdps__batch_open(&b, again, (uint32_t)sizeof(again));
    rdps__batch_iter_init(&it, v->payload);
    uint64_t walked = 0;
    for (uint32_t i = 0; i < h->count; i++) {
        uint32_t len;
        const uint8_t *msg = rdps__batch_next(&it, &len);
        walked += RDPS_BATCH_LEN_BYTES + len;
        if (walked > v->payload_len || len > lim->max_msg_len || !rdps__batch_fits(&b, len))
            abort();
        memcpy(rdps__batch_add(&b, len), msg, len);
    }
    if (walked != v->payload_len || b.count != h->count || b.used != v->payload_len ||
        memcmp(rdps__batch_payload(&b), v->payload, v->payload_len) != 0)
        abort();
}

/* A decoded frame must re-encode to exactly the same bytes: the decoder accepts only canonical
 * frames. */
static void check_round_trip(const uint8_t *data, size_t size, const struct rdps_frame_view *v)
{
    uint8_t *out = malloc(size ? size : 1);
    if (out == NULL)
        abort();
    const struct rdps_frame_header *h = &v->hdr;
    bool reliable = (h->flags & RDPS_FRAME_F_RELIABLE) != 0;
    int n = -1;
    switch (h->type) {
    case RDPS_FRAME_DATA:
        memcpy(out + RDPS_FRAME_HEADER_LEN, v->payload, v->payload_len);
        n = (int)rdps__frame_put_data_header(
            out, h->session_id, h->topic_id, h->seq, h->msg_len, h->frag_offset, v->payload_len,
            h->timestamp_ns, (uint16_t)(h->flags & ~(RDPS_FRAME_F_BEGIN | RDPS_FRAME_F_END)),
            h->ordinal, h->count);
        break;
    case RDPS_FRAME_HEARTBEAT:
        /* The trail is the count word of a reliable heartbeat, the next ordinal otherwise. */
        if (v->trail_ordinal != (reliable ? h->count : h->ordinal) ||
            (!reliable && (h->count != 0 || v->retained != 0)))
            abort();
        if (h->flags & RDPS_FRAME_F_PARITY)
            n = rdps__frame_encode_heartbeat_parity(
                out, size, h->session_id, h->topic_id, h->seq, v->retained, h->ordinal,
                v->trail_ordinal, h->timestamp_ns, v->parity_k, v->hb_max_rtt_us, v->hb_receivers);
        else if (reliable)
            n = rdps__frame_encode_heartbeat_reliable(out, size, h->session_id, h->topic_id, h->seq,
                                                      v->retained, h->ordinal, v->trail_ordinal,
                                                      h->timestamp_ns);
        else
            n = rdps__frame_encode_heartbeat(out, size, h->session_id, h->topic_id, h->seq,
                                             h->ordinal, h->timestamp_ns, h->flags);
        break;
    case RDPS_FRAME_NAK: {
        struct rdps_seq_range ranges[RDPS_FRAME_NAK_MAX_RANGES];
        for (unsigned i = 0; i < v->nak_range_count; i++)
            ranges[i] = rdps__frame_nak_range(v, i);
        n = rdps__frame_encode_nak_flags(out, size, h->session_id, h->topic_id, v->receiver_id,
                                         ranges, v->nak_range_count, h->timestamp_ns, h->flags);
        break;
    }
    case RDPS_FRAME_STATUS:
        n = rdps__frame_encode_status_echo(out, size, h->session_id, h->topic_id, v->receiver_id,
                                           v->consumed_seq, v->window, v->echo_delay_us,
                                           h->timestamp_ns);
        break;
    case RDPS_FRAME_ANNOUNCE:
        n = rdps__frame_encode_announce(out, size, h->session_id, h->topic_id, h->seq, v->payload,
                                        v->payload_len, h->timestamp_ns);
        break;
    case RDPS_FRAME_PARITY:
        n = rdps__frame_put_parity_header(out, h->session_id, h->topic_id, h->seq, v->parity_k,
                                          v->parity_index, h->timestamp_ns);
        if (n > 0) {
            memcpy(out + RDPS_FRAME_HEADER_LEN, v->payload, v->payload_len);
            n += (int)v->payload_len;
        }
        break;
    default:
        abort(); /* the decoder accepted an unknown type */
    }
    if (n < 0 || (size_t)n != size || memcmp(out, data, size) != 0)
        abort();
    free(out);
}

/*
 * The same bytes as a publisher's script for the batch writer: [cap lo][cap hi], then pairs
 * [op][arg]. op % 4: 0 sends a message, 1 claims room and commits fewer bytes, 2 claims and
 * aborts, 3 closes the datagram; the length is (op >> 2) << 8 | arg, at most the room left when
 * op & 0x80 (a message that fits exactly). A message that does not fit closes the datagram and
 * opens the next, as rdps's publishers do; one longer than a datagram is skipped. Every closed
 * datagram must decode with each message at its ordinal, its length and its bytes.
 */
struct written {
    uint32_t len;
    uint8_t fill;
};

static void check_closed(const uint8_t *frame, const struct rdps_batch *b, uint32_t ordinal,
                         const struct written *msgs)
{
    if (b->count == 0)
        return;
    uint8_t dgram[RDPS_FRAME_HEADER_LEN + 4096];
    memcpy(dgram, frame, RDPS_FRAME_HEADER_LEN + b->used);
    uint32_t len = rdps__frame_put_data_header(dgram, 7, 0x99, 1, b->used, 0, b->used, 0,
                                               RDPS_FRAME_F_RELIABLE, ordinal, b->count);
    struct rdps_frame_view v;
    if (len != rdps__batch_frame_len(b) ||
        rdps__frame_decode(dgram, len, NULL, &v) != RDPS_FRAME_OK || v.hdr.count != b->count ||
        v.hdr.ordinal != ordinal)
        abort();
    struct rdps_batch_iter it;
    rdps__batch_iter_init(&it, v.payload);
    for (uint32_t i = 0; i < b->count; i++) {
        uint32_t n = v.payload_len;
        const uint8_t *msg = b->count == 1 ? v.payload : rdps__batch_next(&it, &n);
        if (n != msgs[i].len)
            abort();
        for (uint32_t k = 0; k < n; k++)
            if (msg[k] != (uint8_t)(msgs[i].fill + k))
                abort();
    }
}

static void check_batch_writer(const uint8_t *data, size_t size)
{
    if (size < 2)
        return;
    static uint8_t frame[RDPS_FRAME_HEADER_LEN + 4096];
    static struct written msgs[4096];
    uint32_t cap = RDPS_FRAME_HEADER_LEN + rdps__get_le16(data) % 4097u;
    uint32_t ordinal = 0xFFFFFFF0u; /* of the open datagram's first message: wraps soon */
    struct rdps_batch b;
    rdps__batch_open(&b, frame, cap);
    for (size_t pos = 2; pos + 1 < size; pos += 2) {
        uint8_t op = data[pos], arg = data[pos + 1];
        uint32_t room = rdps__batch_room(&b);
        if (room > 0 && (!rdps__batch_fits(&b, room) || rdps__batch_fits(&b, room + 1)))
            abort(); /* room is the longest message that fits */
        uint32_t len = ((uint32_t)(op >> 2 & 0x1f) << 8 | arg);
        if (op & 0x80)
            len = room;
        if (op % 4 == 3 || !rdps__batch_fits(&b, len)) {
            check_closed(frame, &b, ordinal, msgs);
            ordinal += b.count;
            rdps__batch_open(&b, frame, cap);
            if (op % 4 == 3 || !rdps__batch_fits(&b, len))
                continue; /* closed on purpose, or longer than a datagram: fragments */
        }
        uint32_t used = b.used, count = b.count;
        uint8_t *at = rdps__batch_add(&b, len);
        uint32_t final = op % 4 == 1 ? (len ? arg % len : 0) : len;
        for (uint32_t k = 0; k < final; k++)
            at[k] = (uint8_t)(pos + k);
        if (op % 4 == 2) { /* a claim aborted: as before it */
            rdps__batch_remove_last(&b, len);
            if (b.used != used || b.count != count)
                abort();
            continue;
        }
        if (op % 4 == 1) /* a claim committed shorter */
            rdps__batch_shrink_last(&b, len, final);
        msgs[b.count - 1] = (struct written){final, (uint8_t)pos};
    }
    check_closed(frame, &b, ordinal, msgs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct rdps_frame_limits tight = {
        .max_msg_len = 4096, .max_nak_ranges = 4, .max_announce_len = 256};
    struct rdps_frame_view v;
    enum rdps_frame_reject reason = rdps__frame_decode(data, size, NULL, &v);
    if ((unsigned)reason >= RDPS_FRAME_REJECT_COUNT || rdps__frame_reject_name(reason)[0] == '\0')
        abort();
    if (reason == RDPS_FRAME_OK) {
        struct rdps_frame_limits defaults;
        rdps__frame_limits_default(&defaults);
        if (v.payload != data + RDPS_FRAME_HEADER_LEN ||
            v.payload_len != size - RDPS_FRAME_HEADER_LEN)
            abort();
        if (v.hdr.type == RDPS_FRAME_DATA)
            check_messages(&v, &defaults);
        else if (v.hdr.type != RDPS_FRAME_HEARTBEAT && (v.hdr.ordinal != 0 || v.hdr.count != 0))
            abort(); /* only DATA and HEARTBEAT carry ordinals */
        check_round_trip(data, size, &v);
    }
    /* Tighter limits can only reject more. */
    enum rdps_frame_reject tight_reason = rdps__frame_decode(data, size, &tight, &v);
    if (reason != RDPS_FRAME_OK && tight_reason == RDPS_FRAME_OK)
        abort();
    check_batch_writer(data, size);
    return 0;
}
