/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_frag.c - the fragmenter: a message into DATA frames of at most max_datagram bytes. */
#include "rdps_frag.h"

#include <string.h>

#include <rdps/rdps.h>

#define EXTRA_FLAGS_MASK (RDPS_FRAME_F_RETRANSMIT | RDPS_FRAME_F_RELIABLE)

uint32_t rdps__frag_count(size_t len, uint32_t max_datagram)
{
    if (max_datagram <= RDPS_FRAME_HEADER_LEN)
        return 0;
    size_t per = max_datagram - RDPS_FRAME_HEADER_LEN;
    if (len == 0)
        return 1;
    return (uint32_t)((len + per - 1) / per);
}

int rdps__frag_init(struct rdps_frag *it, uint32_t session_id, uint64_t topic_id,
                    uint32_t *next_seq, const void *msg, size_t len, size_t max_msg_len,
                    uint32_t max_datagram, uint64_t now_ns, uint16_t flags, uint32_t ordinal)
{
    if (session_id == 0 || topic_id == 0 || next_seq == NULL ||
        max_datagram <= RDPS_FRAME_HEADER_LEN || (msg == NULL && len > 0) ||
        (flags & ~EXTRA_FLAGS_MASK))
        return RDPS_EINVAL;
    if (len > max_msg_len || len > UINT32_MAX)
        return RDPS_EMSGSIZE;
    it->msg = msg;
    it->msg_len = (uint32_t)len;
    it->offset = 0;
    it->frag_payload = max_datagram - RDPS_FRAME_HEADER_LEN;
    it->session_id = session_id;
    it->topic_id = topic_id;
    it->next_seq = next_seq;
    it->timestamp_ns = now_ns;
    it->flags = flags;
    it->ordinal = ordinal;
    it->done = false;
    return (int)rdps__frag_count(len, max_datagram);
}

int rdps__frag_next_header(struct rdps_frag *it, uint8_t *hdr, uint32_t *offset, uint32_t *len)
{
    if (it->done)
        return 0;
    uint32_t remaining = it->msg_len - it->offset;
    uint32_t payload = remaining < it->frag_payload ? remaining : it->frag_payload;
    bool whole = it->offset == 0 && payload == it->msg_len;
    uint32_t n = rdps__frame_put_data_header(hdr, it->session_id, it->topic_id, (*it->next_seq)++,
                                             it->msg_len, it->offset, payload, it->timestamp_ns,
                                             it->flags, it->ordinal, whole ? 1u : 0u);
    *offset = it->offset;
    *len = payload;
    it->offset += payload;
    it->done = it->offset == it->msg_len;
    return (int)n;
}

int rdps__frag_next(struct rdps_frag *it, uint8_t *buf, size_t cap)
{
    if (it->done)
        return 0;
    uint32_t remaining = it->msg_len - it->offset;
    uint32_t payload = remaining < it->frag_payload ? remaining : it->frag_payload;
    if (cap < (size_t)RDPS_FRAME_HEADER_LEN + payload)
        return RDPS_ENOSPC;
    if (payload > 0)
        memcpy(buf + RDPS_FRAME_HEADER_LEN, it->msg + it->offset, payload);
    uint32_t offset, len;
    return rdps__frag_next_header(it, buf, &offset, &len);
}

int rdps__frag_put_single(uint8_t *buf, size_t cap, uint32_t session_id, uint64_t topic_id,
                          uint32_t *next_seq, size_t payload_len, uint32_t max_datagram,
                          uint64_t now_ns, uint16_t flags, uint32_t ordinal)
{
    if (session_id == 0 || topic_id == 0 || (flags & ~EXTRA_FLAGS_MASK))
        return RDPS_EINVAL;
    if (cap < RDPS_FRAME_HEADER_LEN || payload_len > cap - RDPS_FRAME_HEADER_LEN ||
        payload_len + RDPS_FRAME_HEADER_LEN > max_datagram)
        return RDPS_EMSGSIZE;
    return (int)rdps__frame_put_data_header(buf, session_id, topic_id, (*next_seq)++,
                                            (uint32_t)payload_len, 0, (uint32_t)payload_len, now_ns,
                                            flags, ordinal, 1);
}
