/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_frame.c - decoder and encoders for the rdps version 3 wire format. */
#include "rdps_frame.h"

#include <string.h>

#include <rdps/rdps.h>

#include "rdps_batch.h"
#include "rdps_endian.h"

/* The layout is the protocol: pin every offset so an edit cannot move a field silently. */
_Static_assert(RDPS_FRAME_OFF_TYPE == RDPS_FRAME_OFF_VERSION + 1, "type follows version");
_Static_assert(RDPS_FRAME_OFF_FLAGS == RDPS_FRAME_OFF_TYPE + 1, "flags follow type");
_Static_assert(RDPS_FRAME_OFF_SESSION_ID == RDPS_FRAME_OFF_FLAGS + 2, "flags are 16-bit");
_Static_assert(RDPS_FRAME_OFF_TOPIC_ID == RDPS_FRAME_OFF_SESSION_ID + 4, "session is 32-bit");
_Static_assert(RDPS_FRAME_OFF_SEQ == RDPS_FRAME_OFF_TOPIC_ID + 8, "topic is 64-bit");
_Static_assert(RDPS_FRAME_OFF_MSG_LEN == RDPS_FRAME_OFF_SEQ + 4, "seq is 32-bit");
_Static_assert(RDPS_FRAME_OFF_FRAG_OFFSET == RDPS_FRAME_OFF_MSG_LEN + 4, "msg_len is 32-bit");
_Static_assert(RDPS_FRAME_OFF_RESERVED == RDPS_FRAME_OFF_FRAG_OFFSET + 4, "frag_offset is 32-bit");
_Static_assert(RDPS_FRAME_OFF_TIMESTAMP_NS == RDPS_FRAME_OFF_RESERVED + 4, "reserved is 32-bit");
_Static_assert(RDPS_FRAME_OFF_TOPIC_ID % 8 == 0 && RDPS_FRAME_OFF_TIMESTAMP_NS % 8 == 0,
               "64-bit fields are naturally aligned");
_Static_assert(RDPS_FRAME_OFF_ORDINAL == RDPS_FRAME_OFF_TIMESTAMP_NS + 8, "timestamp is 64-bit");
_Static_assert(RDPS_FRAME_OFF_COUNT == RDPS_FRAME_OFF_ORDINAL + 4, "ordinal is 32-bit");
_Static_assert(RDPS_FRAME_HEADER_LEN == RDPS_FRAME_OFF_COUNT + 4, "count is 32-bit");
_Static_assert(RDPS_FRAME_HEADER_LEN == 48, "the header is 48 bytes");
_Static_assert(RDPS_FRAME_NAK_OFF_RECEIVER_ID == RDPS_FRAME_HEADER_LEN, "NAK body after header");
_Static_assert(RDPS_FRAME_NAK_OFF_RANGE_COUNT == RDPS_FRAME_NAK_OFF_RECEIVER_ID + 4, "NAK layout");
_Static_assert(RDPS_FRAME_NAK_OFF_RESERVED == RDPS_FRAME_NAK_OFF_RANGE_COUNT + 2, "NAK layout");
_Static_assert(RDPS_FRAME_NAK_OFF_RANGES == RDPS_FRAME_NAK_OFF_RESERVED + 2, "NAK layout");
_Static_assert(RDPS_FRAME_STATUS_OFF_RECEIVER_ID == RDPS_FRAME_HEADER_LEN, "STATUS after header");
_Static_assert(RDPS_FRAME_STATUS_OFF_CONSUMED_SEQ == RDPS_FRAME_STATUS_OFF_RECEIVER_ID + 4,
               "STATUS layout");
_Static_assert(RDPS_FRAME_STATUS_OFF_WINDOW == RDPS_FRAME_STATUS_OFF_CONSUMED_SEQ + 4,
               "STATUS layout");
_Static_assert(RDPS_FRAME_STATUS_OFF_ECHO_DELAY == RDPS_FRAME_STATUS_OFF_WINDOW + 4,
               "STATUS layout");
_Static_assert(RDPS_FRAME_STATUS_LEN == RDPS_FRAME_STATUS_OFF_ECHO_DELAY + 4, "STATUS is 64 bytes");
_Static_assert(RDPS_FRAME_HB_OFF_PARITY_K == RDPS_FRAME_HEADER_LEN, "parity body after header");
_Static_assert(RDPS_FRAME_HB_PARITY_LEN == RDPS_FRAME_HB_OFF_RECEIVERS + 4,
               "parity body is 12 bytes");
_Static_assert(RDPS_FRAME_NAK_MAX_RANGES <= UINT16_MAX, "range_count is 16-bit");

void rdps__frame_limits_default(struct rdps_frame_limits *limits)
{
    limits->max_msg_len = RDPS_FRAME_DEFAULT_MAX_MSG_LEN;
    limits->max_nak_ranges = RDPS_FRAME_NAK_MAX_RANGES;
    limits->max_announce_len = RDPS_FRAME_DEFAULT_MAX_ANNOUNCE_LEN;
}

const char *rdps__frame_reject_name(enum rdps_frame_reject reason)
{
    static const char *const names[] = {
#define RDPS_FRAME_REJECT_NAME_(name, text) #name,
        RDPS_FRAME_REJECT_MAP(RDPS_FRAME_REJECT_NAME_)
#undef RDPS_FRAME_REJECT_NAME_
    };
    if ((unsigned)reason >= RDPS_FRAME_REJECT_COUNT)
        return "UNKNOWN";
    return names[reason];
}

const char *rdps__frame_reject_text(enum rdps_frame_reject reason)
{
    static const char *const texts[] = {
#define RDPS_FRAME_REJECT_TEXT_(name, text) text,
        RDPS_FRAME_REJECT_MAP(RDPS_FRAME_REJECT_TEXT_)
#undef RDPS_FRAME_REJECT_TEXT_
    };
    if ((unsigned)reason >= RDPS_FRAME_REJECT_COUNT)
        return "unknown reject reason";
    return texts[reason];
}

static enum rdps_frame_reject decode_data(struct rdps_frame_view *v,
                                          const struct rdps_frame_limits *limits)
{
    const struct rdps_frame_header *h = &v->hdr;
    if (h->flags & ~RDPS_FRAME_F_DATA_MASK)
        return RDPS_FRAME_BAD_FLAGS;
    if (h->topic_id == 0)
        return RDPS_FRAME_ZERO_TOPIC;
    /* Whole messages: their records are checked one by one (a batch is as long as its
     * datagram, whatever the limit on one message). */
    bool batch = h->count >= 2 && h->frag_offset == 0 && h->msg_len == v->payload_len;
    if (h->msg_len > limits->max_msg_len && !batch)
        return RDPS_FRAME_MSG_TOO_LARGE;
    /* 64-bit sum: frag_offset + payload_len cannot wrap. */
    uint64_t frag_end = (uint64_t)h->frag_offset + v->payload_len;
    if (frag_end > h->msg_len)
        return RDPS_FRAME_FRAG_EXCEEDS_MSG;
    bool is_begin = h->frag_offset == 0;
    bool is_end = frag_end == h->msg_len;
    if (is_begin != ((h->flags & RDPS_FRAME_F_BEGIN) != 0) ||
        is_end != ((h->flags & RDPS_FRAME_F_END) != 0))
        return RDPS_FRAME_BEGIN_END_MISMATCH;
    if (!is_end && v->payload_len == 0)
        return RDPS_FRAME_EMPTY_FRAGMENT;
    if (!(is_begin && is_end)) /* a fragment: of one message, which it does not complete */
        return h->count == 0 ? RDPS_FRAME_OK : RDPS_FRAME_BAD_COUNT;
    if (h->count == 0)
        return RDPS_FRAME_BAD_COUNT;
    if (h->count == 1)
        return RDPS_FRAME_OK;
    return rdps__batch_check(v->payload, v->payload_len, h->count, limits->max_msg_len);
}

static enum rdps_frame_reject decode_nak(struct rdps_frame_view *v,
                                         const struct rdps_frame_limits *limits)
{
    if (v->payload_len < RDPS_FRAME_NAK_OFF_RANGES - RDPS_FRAME_HEADER_LEN)
        return RDPS_FRAME_BAD_BODY_LEN;
    const uint8_t *frame = v->payload - RDPS_FRAME_HEADER_LEN;
    v->receiver_id = rdps__get_le32(frame + RDPS_FRAME_NAK_OFF_RECEIVER_ID);
    v->nak_range_count = rdps__get_le16(frame + RDPS_FRAME_NAK_OFF_RANGE_COUNT);
    if (rdps__get_le16(frame + RDPS_FRAME_NAK_OFF_RESERVED) != 0)
        return RDPS_FRAME_NONZERO_FIELD;
    uint32_t max_ranges = limits->max_nak_ranges;
    if (max_ranges == 0 || max_ranges > RDPS_FRAME_NAK_MAX_RANGES)
        max_ranges = RDPS_FRAME_NAK_MAX_RANGES;
    if (v->nak_range_count == 0 || v->nak_range_count > max_ranges ||
        rdps__frame_nak_len(v->nak_range_count) != RDPS_FRAME_HEADER_LEN + (size_t)v->payload_len)
        return RDPS_FRAME_BAD_RANGE_COUNT;
    for (unsigned i = 0; i < v->nak_range_count; i++) {
        struct rdps_seq_range r = rdps__frame_nak_range(v, i);
        if (r.count == 0 || r.count > RDPS_FRAME_NAK_MAX_RANGE_COUNT)
            return RDPS_FRAME_BAD_RANGE;
        /* A parity range counts a block's missing datagrams; a block starts at a multiple of
         * its size, at least 2. */
        if ((v->hdr.flags & RDPS_FRAME_F_PARITY) &&
            (r.count > RDPS_FRAME_PARITY_MAX_K || (r.start & 1) != 0))
            return RDPS_FRAME_BAD_RANGE;
    }
    return RDPS_FRAME_OK;
}

static enum rdps_frame_reject decode_parity(struct rdps_frame_view *v)
{
    const struct rdps_frame_header *h = &v->hdr;
    if (h->flags != (RDPS_FRAME_F_RELIABLE | RDPS_FRAME_F_RETRANSMIT))
        return RDPS_FRAME_BAD_FLAGS;
    if (h->topic_id == 0)
        return RDPS_FRAME_ZERO_TOPIC;
    uint32_t k = h->msg_len;
    if (k < 2 || k > RDPS_FRAME_PARITY_MAX_K || (k & (k - 1)) != 0 || (h->seq & (k - 1)) != 0)
        return RDPS_FRAME_BAD_BLOCK;
    if (h->frag_offset >= RDPS_FRAME_PARITY_MAX_INDEX)
        return RDPS_FRAME_BAD_PARITY_INDEX;
    if (v->payload_len < RDPS_FRAME_PARITY_MIN_BODY || v->payload_len > RDPS_FRAME_PARITY_MAX_BODY)
        return RDPS_FRAME_BAD_BODY_LEN;
    v->parity_k = k;
    v->parity_index = h->frag_offset;
    return RDPS_FRAME_OK;
}

static enum rdps_frame_reject decode_status(struct rdps_frame_view *v)
{
    if (v->payload_len != RDPS_FRAME_STATUS_LEN - RDPS_FRAME_HEADER_LEN)
        return RDPS_FRAME_BAD_BODY_LEN;
    const uint8_t *frame = v->payload - RDPS_FRAME_HEADER_LEN;
    v->receiver_id = rdps__get_le32(frame + RDPS_FRAME_STATUS_OFF_RECEIVER_ID);
    v->consumed_seq = rdps__get_le32(frame + RDPS_FRAME_STATUS_OFF_CONSUMED_SEQ);
    v->window = rdps__get_le32(frame + RDPS_FRAME_STATUS_OFF_WINDOW);
    v->echo_delay_us = rdps__get_le32(frame + RDPS_FRAME_STATUS_OFF_ECHO_DELAY);
    return RDPS_FRAME_OK;
}

enum rdps_frame_reject rdps__frame_decode(const uint8_t *buf, size_t len,
                                          const struct rdps_frame_limits *limits,
                                          struct rdps_frame_view *view)
{
    static const struct rdps_frame_limits default_limits = {
        .max_msg_len = RDPS_FRAME_DEFAULT_MAX_MSG_LEN,
        .max_nak_ranges = RDPS_FRAME_NAK_MAX_RANGES,
        .max_announce_len = RDPS_FRAME_DEFAULT_MAX_ANNOUNCE_LEN,
    };
    if (limits == NULL)
        limits = &default_limits;
    /* The version first: a version 1 frame (32-byte header) is told as such, not as short.
     * Datagrams are at most a few KiB; anything near 4 GiB is hostile. */
    if (len == 0 || len > UINT32_MAX)
        return RDPS_FRAME_SHORT;
    if (buf[RDPS_FRAME_OFF_VERSION] != RDPS_FRAME_VERSION)
        return RDPS_FRAME_BAD_VERSION;
    if (len < RDPS_FRAME_HEADER_LEN)
        return RDPS_FRAME_SHORT;

    struct rdps_frame_view *v = view;
    struct rdps_frame_header *h = &v->hdr;
    h->type = buf[RDPS_FRAME_OFF_TYPE];
    h->flags = rdps__get_le16(buf + RDPS_FRAME_OFF_FLAGS);
    h->session_id = rdps__get_le32(buf + RDPS_FRAME_OFF_SESSION_ID);
    h->topic_id = rdps__get_le64(buf + RDPS_FRAME_OFF_TOPIC_ID);
    h->seq = rdps__get_le32(buf + RDPS_FRAME_OFF_SEQ);
    h->msg_len = rdps__get_le32(buf + RDPS_FRAME_OFF_MSG_LEN);
    h->frag_offset = rdps__get_le32(buf + RDPS_FRAME_OFF_FRAG_OFFSET);
    h->timestamp_ns = rdps__get_le64(buf + RDPS_FRAME_OFF_TIMESTAMP_NS);
    h->ordinal = rdps__get_le32(buf + RDPS_FRAME_OFF_ORDINAL);
    h->count = rdps__get_le32(buf + RDPS_FRAME_OFF_COUNT);
    v->payload = buf + RDPS_FRAME_HEADER_LEN;
    v->payload_len = (uint32_t)(len - RDPS_FRAME_HEADER_LEN);
    v->receiver_id = 0;
    v->nak_range_count = 0;
    v->consumed_seq = 0;
    v->window = 0;
    v->echo_delay_us = RDPS_FRAME_NO_ECHO;
    v->retained = 0;
    v->trail_ordinal = 0;

    if (h->type < RDPS_FRAME_DATA || h->type > RDPS_FRAME_PARITY)
        return RDPS_FRAME_BAD_TYPE;
    if (h->session_id == 0)
        return RDPS_FRAME_ZERO_SESSION;
    /* Bits no frame type defines, before any other field (what the dissector's heuristic
     * looks at: it leaves such a datagram unclaimed). */
    if (h->flags & ~RDPS_FRAME_F_ALL_MASK)
        return RDPS_FRAME_BAD_FLAGS;
    if (rdps__get_le32(buf + RDPS_FRAME_OFF_RESERVED) != 0)
        return RDPS_FRAME_NONZERO_FIELD;
    if (h->type == RDPS_FRAME_DATA)
        return decode_data(v, limits);
    /* Only DATA numbers messages; a heartbeat tells the next ordinal (and, reliable, the
     * oldest retained datagram's in count). */
    if (h->type != RDPS_FRAME_HEARTBEAT && (h->ordinal != 0 || h->count != 0))
        return RDPS_FRAME_NONZERO_FIELD;
    if (h->type == RDPS_FRAME_PARITY)
        return decode_parity(v);

    /* Control frames: no fragment, no message (a reliable heartbeat's msg_len is R). */
    if (h->frag_offset != 0)
        return RDPS_FRAME_NONZERO_FIELD;
    if (h->type == RDPS_FRAME_HEARTBEAT) {
        if ((h->flags & ~(RDPS_FRAME_F_RELIABLE | RDPS_FRAME_F_PARITY)) ||
            h->flags == RDPS_FRAME_F_PARITY)
            return RDPS_FRAME_BAD_FLAGS;
        if ((h->msg_len != 0 || h->count != 0) && !(h->flags & RDPS_FRAME_F_RELIABLE))
            return RDPS_FRAME_NONZERO_FIELD;
        if (h->msg_len > RDPS_FRAME_MAX_RETAINED)
            return RDPS_FRAME_BAD_RETAINED;
        if (h->topic_id == 0)
            return RDPS_FRAME_ZERO_TOPIC;
        v->retained = h->msg_len;
        v->trail_ordinal = (h->flags & RDPS_FRAME_F_RELIABLE) ? h->count : h->ordinal;
        v->parity_k = v->hb_max_rtt_us = v->hb_receivers = 0;
        if (!(h->flags & RDPS_FRAME_F_PARITY))
            return v->payload_len != 0 ? RDPS_FRAME_BAD_BODY_LEN : RDPS_FRAME_OK;
        if (v->payload_len != RDPS_FRAME_HB_PARITY_LEN - RDPS_FRAME_HEADER_LEN)
            return RDPS_FRAME_BAD_BODY_LEN;
        if (rdps__get_le16(buf + RDPS_FRAME_HB_OFF_RESERVED) != 0)
            return RDPS_FRAME_NONZERO_FIELD;
        v->parity_k = rdps__get_le16(buf + RDPS_FRAME_HB_OFF_PARITY_K);
        if (v->parity_k < 2 || v->parity_k > RDPS_FRAME_PARITY_MAX_K ||
            (v->parity_k & (v->parity_k - 1)) != 0)
            return RDPS_FRAME_BAD_BLOCK;
        v->hb_max_rtt_us = rdps__get_le32(buf + RDPS_FRAME_HB_OFF_MAX_RTT);
        v->hb_receivers = rdps__get_le32(buf + RDPS_FRAME_HB_OFF_RECEIVERS);
        return RDPS_FRAME_OK;
    }
    if (h->msg_len != 0)
        return RDPS_FRAME_NONZERO_FIELD;
    switch (h->type) {
    case RDPS_FRAME_NAK:
        /* RETRANSMIT: the repairs were overtaken; PARITY: ranges count a block's losses. */
        if (h->flags & ~(RDPS_FRAME_F_RETRANSMIT | RDPS_FRAME_F_PARITY))
            return RDPS_FRAME_BAD_FLAGS;
        if (h->seq != 0)
            return RDPS_FRAME_NONZERO_FIELD;
        return decode_nak(v, limits);
    case RDPS_FRAME_STATUS:
        if (h->flags != 0)
            return RDPS_FRAME_BAD_FLAGS;
        if (h->seq != 0)
            return RDPS_FRAME_NONZERO_FIELD;
        return decode_status(v);
    default: /* RDPS_FRAME_ANNOUNCE */
        if (h->flags != 0)
            return RDPS_FRAME_BAD_FLAGS;
        if (v->payload_len > limits->max_announce_len)
            return RDPS_FRAME_BODY_TOO_LARGE;
        return RDPS_FRAME_OK;
    }
}

struct rdps_seq_range rdps__frame_nak_range(const struct rdps_frame_view *view, unsigned index)
{
    const uint8_t *p = view->payload + (RDPS_FRAME_NAK_OFF_RANGES - RDPS_FRAME_HEADER_LEN) +
                       (size_t)index * RDPS_FRAME_NAK_RANGE_LEN;
    struct rdps_seq_range r = {rdps__get_le32(p), rdps__get_le32(p + 4)};
    return r;
}

static void put_header(uint8_t *buf, const struct rdps_frame_header *hdr)
{
    buf[RDPS_FRAME_OFF_VERSION] = RDPS_FRAME_VERSION;
    buf[RDPS_FRAME_OFF_TYPE] = hdr->type;
    rdps__put_le16(buf + RDPS_FRAME_OFF_FLAGS, hdr->flags);
    rdps__put_le32(buf + RDPS_FRAME_OFF_SESSION_ID, hdr->session_id);
    rdps__put_le64(buf + RDPS_FRAME_OFF_TOPIC_ID, hdr->topic_id);
    rdps__put_le32(buf + RDPS_FRAME_OFF_SEQ, hdr->seq);
    rdps__put_le32(buf + RDPS_FRAME_OFF_MSG_LEN, hdr->msg_len);
    rdps__put_le32(buf + RDPS_FRAME_OFF_FRAG_OFFSET, hdr->frag_offset);
    rdps__put_le32(buf + RDPS_FRAME_OFF_RESERVED, 0);
    rdps__put_le64(buf + RDPS_FRAME_OFF_TIMESTAMP_NS, hdr->timestamp_ns);
    rdps__put_le32(buf + RDPS_FRAME_OFF_ORDINAL, hdr->ordinal);
    rdps__put_le32(buf + RDPS_FRAME_OFF_COUNT, hdr->count);
}

int rdps__frame_put_header(uint8_t *buf, size_t cap, const struct rdps_frame_header *hdr)
{
    if (cap < RDPS_FRAME_HEADER_LEN)
        return RDPS_ENOSPC;
    put_header(buf, hdr);
    return RDPS_FRAME_HEADER_LEN;
}

static int encode_heartbeat(uint8_t *buf, size_t cap, uint32_t session_id, uint64_t topic_id,
                            uint32_t next_seq, uint32_t retained, uint32_t next_ordinal,
                            uint32_t trail_ordinal, uint64_t timestamp_ns, uint16_t flags)
{
    if (session_id == 0 || topic_id == 0 || (flags & ~RDPS_FRAME_F_RELIABLE))
        return RDPS_EINVAL;
    if (cap < RDPS_FRAME_HEADER_LEN)
        return RDPS_ENOSPC;
    struct rdps_frame_header h = {
        .type = RDPS_FRAME_HEARTBEAT,
        .flags = flags,
        .session_id = session_id,
        .topic_id = topic_id,
        .seq = next_seq,
        .msg_len = retained,
        .timestamp_ns = timestamp_ns,
        .ordinal = next_ordinal,
        .count = trail_ordinal,
    };
    put_header(buf, &h);
    return RDPS_FRAME_HEADER_LEN;
}

int rdps__frame_encode_heartbeat(uint8_t *buf, size_t cap, uint32_t session_id, uint64_t topic_id,
                                 uint32_t next_seq, uint32_t next_ordinal, uint64_t timestamp_ns,
                                 uint16_t flags)
{
    /* Reliable without a retained count: nothing below next_seq is held (trail = next). */
    uint32_t trail_ordinal = (flags & RDPS_FRAME_F_RELIABLE) ? next_ordinal : 0;
    return encode_heartbeat(buf, cap, session_id, topic_id, next_seq, 0, next_ordinal,
                            trail_ordinal, timestamp_ns, flags);
}

int rdps__frame_encode_heartbeat_reliable(uint8_t *buf, size_t cap, uint32_t session_id,
                                          uint64_t topic_id, uint32_t next_seq, uint32_t retained,
                                          uint32_t next_ordinal, uint32_t trail_ordinal,
                                          uint64_t timestamp_ns)
{
    if (retained > RDPS_FRAME_MAX_RETAINED)
        return RDPS_EINVAL;
    return encode_heartbeat(buf, cap, session_id, topic_id, next_seq, retained, next_ordinal,
                            trail_ordinal, timestamp_ns, RDPS_FRAME_F_RELIABLE);
}

int rdps__frame_encode_heartbeat_parity(uint8_t *buf, size_t cap, uint32_t session_id,
                                        uint64_t topic_id, uint32_t next_seq, uint32_t retained,
                                        uint32_t next_ordinal, uint32_t trail_ordinal,
                                        uint64_t timestamp_ns, uint32_t parity_k,
                                        uint32_t max_rtt_us, uint32_t receivers)
{
    if (parity_k < 2 || parity_k > RDPS_FRAME_PARITY_MAX_K || (parity_k & (parity_k - 1)) != 0 ||
        retained > RDPS_FRAME_MAX_RETAINED)
        return RDPS_EINVAL;
    if (cap < RDPS_FRAME_HB_PARITY_LEN)
        return RDPS_ENOSPC;
    int rc = encode_heartbeat(buf, cap, session_id, topic_id, next_seq, retained, next_ordinal,
                              trail_ordinal, timestamp_ns, RDPS_FRAME_F_RELIABLE);
    if (rc < 0)
        return rc;
    rdps__put_le16(buf + RDPS_FRAME_OFF_FLAGS, RDPS_FRAME_F_RELIABLE | RDPS_FRAME_F_PARITY);
    rdps__put_le16(buf + RDPS_FRAME_HB_OFF_PARITY_K, (uint16_t)parity_k);
    rdps__put_le16(buf + RDPS_FRAME_HB_OFF_RESERVED, 0);
    rdps__put_le32(buf + RDPS_FRAME_HB_OFF_MAX_RTT, max_rtt_us);
    rdps__put_le32(buf + RDPS_FRAME_HB_OFF_RECEIVERS, receivers);
    return RDPS_FRAME_HB_PARITY_LEN;
}

int rdps__frame_encode_nak(uint8_t *buf, size_t cap, uint32_t session_id, uint64_t topic_id,
                           uint32_t receiver_id, const struct rdps_seq_range *ranges,
                           unsigned range_count, uint64_t timestamp_ns)
{
    return rdps__frame_encode_nak_flags(buf, cap, session_id, topic_id, receiver_id, ranges,
                                        range_count, timestamp_ns, 0);
}

int rdps__frame_encode_nak_flags(uint8_t *buf, size_t cap, uint32_t session_id, uint64_t topic_id,
                                 uint32_t receiver_id, const struct rdps_seq_range *ranges,
                                 unsigned range_count, uint64_t timestamp_ns, uint16_t flags)
{
    if (session_id == 0 || range_count == 0 || range_count > RDPS_FRAME_NAK_MAX_RANGES ||
        (flags & ~(RDPS_FRAME_F_RETRANSMIT | RDPS_FRAME_F_PARITY)))
        return RDPS_EINVAL;
    for (unsigned i = 0; i < range_count; i++) {
        if (ranges[i].count == 0 || ranges[i].count > RDPS_FRAME_NAK_MAX_RANGE_COUNT)
            return RDPS_EINVAL;
        if ((flags & RDPS_FRAME_F_PARITY) &&
            (ranges[i].count > RDPS_FRAME_PARITY_MAX_K || (ranges[i].start & 1) != 0))
            return RDPS_EINVAL;
    }
    size_t len = rdps__frame_nak_len(range_count);
    if (cap < len)
        return RDPS_ENOSPC;
    struct rdps_frame_header h = {
        .type = RDPS_FRAME_NAK,
        .flags = flags,
        .session_id = session_id,
        .topic_id = topic_id,
        .timestamp_ns = timestamp_ns,
    };
    put_header(buf, &h);
    rdps__put_le32(buf + RDPS_FRAME_NAK_OFF_RECEIVER_ID, receiver_id);
    rdps__put_le16(buf + RDPS_FRAME_NAK_OFF_RANGE_COUNT, (uint16_t)range_count);
    rdps__put_le16(buf + RDPS_FRAME_NAK_OFF_RESERVED, 0);
    uint8_t *p = buf + RDPS_FRAME_NAK_OFF_RANGES;
    for (unsigned i = 0; i < range_count; i++, p += RDPS_FRAME_NAK_RANGE_LEN) {
        rdps__put_le32(p, ranges[i].start);
        rdps__put_le32(p + 4, ranges[i].count);
    }
    return (int)len;
}

int rdps__frame_put_parity_header(uint8_t *buf, uint32_t session_id, uint64_t topic_id,
                                  uint32_t block_start, uint32_t k, uint32_t j,
                                  uint64_t timestamp_ns)
{
    if (session_id == 0 || topic_id == 0 || k < 2 || k > RDPS_FRAME_PARITY_MAX_K ||
        (k & (k - 1)) != 0 || (block_start & (k - 1)) != 0 || j >= RDPS_FRAME_PARITY_MAX_INDEX)
        return RDPS_EINVAL;
    struct rdps_frame_header h = {
        .type = RDPS_FRAME_PARITY,
        .flags = RDPS_FRAME_F_RELIABLE | RDPS_FRAME_F_RETRANSMIT,
        .session_id = session_id,
        .topic_id = topic_id,
        .seq = block_start,
        .msg_len = k,
        .frag_offset = j,
        .timestamp_ns = timestamp_ns,
    };
    put_header(buf, &h);
    return RDPS_FRAME_HEADER_LEN;
}

bool rdps__frame_put_symbol_prefix(uint8_t *frame, uint32_t len, uint32_t session_id,
                                   uint64_t topic_id)
{
    _Static_assert(RDPS_FRAME_SYMBOL_OFF == RDPS_FRAME_OFF_SEQ, "a symbol starts at seq");
    if (len < RDPS_FRAME_HEADER_LEN)
        return false;
    uint32_t msg_len = rdps__get_le32(frame + RDPS_FRAME_OFF_MSG_LEN);
    uint32_t frag_offset = rdps__get_le32(frame + RDPS_FRAME_OFF_FRAG_OFFSET);
    uint16_t flags = RDPS_FRAME_F_RELIABLE | RDPS_FRAME_F_RETRANSMIT |
                     rdps__frame_edge_flags(msg_len, frag_offset, len - RDPS_FRAME_HEADER_LEN);
    frame[RDPS_FRAME_OFF_VERSION] = RDPS_FRAME_VERSION;
    frame[RDPS_FRAME_OFF_TYPE] = RDPS_FRAME_DATA;
    rdps__put_le16(frame + RDPS_FRAME_OFF_FLAGS, flags);
    rdps__put_le32(frame + RDPS_FRAME_OFF_SESSION_ID, session_id);
    rdps__put_le64(frame + RDPS_FRAME_OFF_TOPIC_ID, topic_id);
    return true;
}

int rdps__frame_encode_status_echo(uint8_t *buf, size_t cap, uint32_t session_id, uint64_t topic_id,
                                   uint32_t receiver_id, uint32_t consumed_seq, uint32_t window,
                                   uint32_t echo_delay_us, uint64_t timestamp_ns)
{
    if (session_id == 0)
        return RDPS_EINVAL;
    if (cap < RDPS_FRAME_STATUS_LEN)
        return RDPS_ENOSPC;
    struct rdps_frame_header h = {
        .type = RDPS_FRAME_STATUS,
        .session_id = session_id,
        .topic_id = topic_id,
        .timestamp_ns = timestamp_ns,
    };
    put_header(buf, &h);
    rdps__put_le32(buf + RDPS_FRAME_STATUS_OFF_RECEIVER_ID, receiver_id);
    rdps__put_le32(buf + RDPS_FRAME_STATUS_OFF_CONSUMED_SEQ, consumed_seq);
    rdps__put_le32(buf + RDPS_FRAME_STATUS_OFF_WINDOW, window);
    rdps__put_le32(buf + RDPS_FRAME_STATUS_OFF_ECHO_DELAY, echo_delay_us);
    return RDPS_FRAME_STATUS_LEN;
}

int rdps__frame_encode_status(uint8_t *buf, size_t cap, uint32_t session_id, uint64_t topic_id,
                              uint32_t receiver_id, uint32_t consumed_seq, uint32_t window,
                              uint64_t timestamp_ns)
{
    return rdps__frame_encode_status_echo(buf, cap, session_id, topic_id, receiver_id, consumed_seq,
                                          window, RDPS_FRAME_NO_ECHO, timestamp_ns);
}

int rdps__frame_encode_announce(uint8_t *buf, size_t cap, uint32_t session_id, uint64_t topic_id,
                                uint32_t seq, const void *body, size_t body_len,
                                uint64_t timestamp_ns)
{
    if (session_id == 0 || (body_len > 0 && body == NULL))
        return RDPS_EINVAL;
    if (body_len > INT32_MAX - RDPS_FRAME_HEADER_LEN)
        return RDPS_EMSGSIZE;
    if (cap < RDPS_FRAME_HEADER_LEN + body_len)
        return RDPS_ENOSPC;
    struct rdps_frame_header h = {
        .type = RDPS_FRAME_ANNOUNCE,
        .session_id = session_id,
        .topic_id = topic_id,
        .seq = seq,
        .timestamp_ns = timestamp_ns,
    };
    put_header(buf, &h);
    if (body_len > 0)
        memcpy(buf + RDPS_FRAME_HEADER_LEN, body, body_len);
    return (int)(RDPS_FRAME_HEADER_LEN + body_len);
}
