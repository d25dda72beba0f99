/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_history_wire.c - replay-merge's request and replay-record codec. */
#include "rdps_history_wire.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "rdps_endian.h"

size_t rdps__hist_request_encode(uint8_t *out, size_t cap, const struct rdps_hist_request *r)
{
    size_t len = RDPS_HIST_REQUEST_LEN + (size_t)r->need_count * RDPS_HIST_NEED_LEN;
    if (r->need_count > RDPS_HIST_NEED_MAX || cap < len)
        return 0;
    memset(out, 0, RDPS_HIST_REQUEST_LEN);
    rdps__put_le32(out, RDPS_HIST_REQUEST_MAGIC);
    out[4] = RDPS_HIST_VERSION;
    out[5] = r->kind;
    rdps__put_le16(out + 6, r->flags);
    rdps__put_le64(out + 8, r->nonce);
    rdps__put_le64(out + 16, r->topic_id);
    rdps__put_le64(out + 24, r->from_ns);
    rdps__put_le32(out + 32, r->token);
    rdps__put_le16(out + 36, r->need_count);
    for (uint16_t i = 0; i < r->need_count; i++) {
        rdps__put_le32(out + RDPS_HIST_REQUEST_LEN + 8u * i, r->need[i].session);
        rdps__put_le32(out + RDPS_HIST_REQUEST_LEN + 8u * i + 4, r->need[i].seq);
    }
    return len;
}

bool rdps__hist_request_decode(const uint8_t *buf, size_t len, struct rdps_hist_request *out)
{
    if (len < RDPS_HIST_REQUEST_LEN || rdps__get_le32(buf) != RDPS_HIST_REQUEST_MAGIC ||
        buf[4] != RDPS_HIST_VERSION)
        return false;
    out->kind = buf[5];
    out->flags = rdps__get_le16(buf + 6);
    out->nonce = rdps__get_le64(buf + 8);
    out->topic_id = rdps__get_le64(buf + 16);
    out->from_ns = rdps__get_le64(buf + 24);
    out->token = rdps__get_le32(buf + 32);
    out->need_count = rdps__get_le16(buf + 36);
    if (out->kind < RDPS_HIST_REQUEST || out->kind > RDPS_HIST_CANCEL ||
        (out->flags & ~RDPS_HIST_F_FROM_SESSION_START) != 0 || out->topic_id == 0 ||
        out->nonce == 0 || rdps__get_le16(buf + 38) != 0 || rdps__get_le64(buf + 40) != 0 ||
        out->need_count > RDPS_HIST_NEED_MAX ||
        len != RDPS_HIST_REQUEST_LEN + (size_t)out->need_count * RDPS_HIST_NEED_LEN ||
        (out->kind != RDPS_HIST_SYNC && out->need_count != 0))
        return false;
    for (uint16_t i = 0; i < out->need_count; i++) {
        out->need[i].session = rdps__get_le32(buf + RDPS_HIST_REQUEST_LEN + 8u * i);
        out->need[i].seq = rdps__get_le32(buf + RDPS_HIST_REQUEST_LEN + 8u * i + 4);
    }
    return true;
}

size_t rdps__hist_record_encode_header(uint8_t out[RDPS_HIST_RECORD_LEN],
                                       const struct rdps_hist_record *r)
{
    memset(out, 0, RDPS_HIST_RECORD_LEN);
    out[0] = r->kind;
    out[1] = r->flags;
    rdps__put_le32(out + 4, r->session);
    rdps__put_le32(out + 8, r->seq);
    rdps__put_le32(out + 12, r->count);
    rdps__put_le32(out + 16, r->ordinal);
    rdps__put_le32(out + 20, r->value);
    rdps__put_le64(out + 24, r->publisher_ts_ns);
    return RDPS_HIST_RECORD_LEN;
}

bool rdps__hist_record_decode(const uint8_t *buf, size_t len, struct rdps_hist_record *out)
{
    if (len < RDPS_HIST_RECORD_LEN)
        return false;
    *out = (struct rdps_hist_record){
        .kind = buf[0],
        .flags = buf[1],
        .session = rdps__get_le32(buf + 4),
        .seq = rdps__get_le32(buf + 8),
        .count = rdps__get_le32(buf + 12),
        .ordinal = rdps__get_le32(buf + 16),
        .value = rdps__get_le32(buf + 20),
        .publisher_ts_ns = rdps__get_le64(buf + 24),
        .data = buf + RDPS_HIST_RECORD_LEN,
        .len = len - RDPS_HIST_RECORD_LEN,
    };
    if (out->kind < RDPS_HIST_MESSAGE || out->kind > RDPS_HIST_REFUSED || (out->flags & ~1u) ||
        rdps__get_le16(buf + 2) != 0 || rdps__get_le64(buf + 32) != 0 ||
        (out->kind != RDPS_HIST_MESSAGE && out->len != 0) ||
        ((out->kind == RDPS_HIST_MESSAGE || out->kind == RDPS_HIST_LOSS) && out->count == 0))
        return false;
    return true;
}

void rdps__hist_request_topic(char *out, size_t cap, uint64_t topic_id)
{
    snprintf(out, cap, "_rdps.hist.%016" PRIx64, topic_id);
}

void rdps__hist_reply_topic(char *out, size_t cap, uint64_t nonce)
{
    snprintf(out, cap, "_rdps.hrep.%016" PRIx64, nonce);
}
