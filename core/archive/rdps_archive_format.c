/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_archive_format.c - encoders and validating decoders of the recording format's structures. */
#include "rdps_archive_format.h"

#include <isa-l/crc.h>
#include <limits.h>
#include <string.h>

#include "rdps_endian.h"

uint32_t rdps__arc_crc32c(const void *data, size_t len, uint32_t crc)
{
    const unsigned char *p = data;
    /* crc32_iscsi takes an int length and a pre-inverted seed: keep the usual convention (start at
     * 0, feed pieces) by inverting around it. */
    crc = ~crc;
    while (len > 0) {
        int n = len > (size_t)INT_MAX ? INT_MAX : (int)len;
        crc = crc32_iscsi((unsigned char *)p, n, crc);
        p += n;
        len -= (size_t)n;
    }
    return ~crc;
}

const char *rdps__arc_reject_text(enum rdps_arc_reject r)
{
    switch (r) {
    case RDPS_ARC_OK:
        return "ok";
    case RDPS_ARC_SHORT:
        return "truncated";
    case RDPS_ARC_BAD_MAGIC:
        return "bad magic";
    case RDPS_ARC_BAD_VERSION:
        return "unsupported version";
    case RDPS_ARC_BAD_CRC:
        return "checksum mismatch";
    case RDPS_ARC_BAD_FIELD:
        return "field out of range";
    case RDPS_ARC_BAD_LENGTH:
        return "length out of range";
    }
    return "unknown";
}

static bool all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != 0)
            return false;
    return true;
}

void rdps__arc_file_header_encode(uint8_t out[RDPS_ARC_FILE_HEADER_LEN], const char magic[8],
                                  const struct rdps_arc_file_header *h)
{
    memset(out, 0, RDPS_ARC_FILE_HEADER_LEN);
    memcpy(out + RDPS_ARC_FH_OFF_MAGIC, magic, 8);
    rdps__put_le16(out + RDPS_ARC_FH_OFF_VERSION, RDPS_ARC_VERSION);
    rdps__put_le16(out + RDPS_ARC_FH_OFF_HDR_LEN, RDPS_ARC_FILE_HEADER_LEN);
    rdps__put_le64(out + RDPS_ARC_FH_OFF_REC_ID, h->recording_id);
    rdps__put_le32(out + RDPS_ARC_FH_OFF_SEGMENT, h->segment);
    rdps__put_le64(out + RDPS_ARC_FH_OFF_CREATED, h->created_ns);
    rdps__put_le64(out + RDPS_ARC_FH_OFF_FIRST, h->first_record);
    rdps__put_le32(out + RDPS_ARC_FH_OFF_CRC, rdps__arc_crc32c(out, RDPS_ARC_FH_OFF_CRC, 0));
}

enum rdps_arc_reject rdps__arc_file_header_decode(const uint8_t *buf, size_t len,
                                                  const char magic[8],
                                                  struct rdps_arc_file_header *out)
{
    if (len < RDPS_ARC_FILE_HEADER_LEN)
        return RDPS_ARC_SHORT;
    if (memcmp(buf + RDPS_ARC_FH_OFF_MAGIC, magic, 8) != 0)
        return RDPS_ARC_BAD_MAGIC;
    if (rdps__get_le32(buf + RDPS_ARC_FH_OFF_CRC) != rdps__arc_crc32c(buf, RDPS_ARC_FH_OFF_CRC, 0))
        return RDPS_ARC_BAD_CRC;
    if (rdps__get_le16(buf + RDPS_ARC_FH_OFF_VERSION) != RDPS_ARC_VERSION)
        return RDPS_ARC_BAD_VERSION;
    if (rdps__get_le16(buf + RDPS_ARC_FH_OFF_HDR_LEN) != RDPS_ARC_FILE_HEADER_LEN ||
        rdps__get_le32(buf + RDPS_ARC_FH_OFF_FLAGS) != 0 ||
        rdps__get_le32(buf + RDPS_ARC_FH_OFF_RESERVED) != 0 ||
        !all_zero(buf + RDPS_ARC_FH_OFF_FIRST + 8, RDPS_ARC_FH_OFF_CRC - RDPS_ARC_FH_OFF_FIRST - 8))
        return RDPS_ARC_BAD_FIELD;
    memcpy(out->magic, magic, 8);
    out->recording_id = rdps__get_le64(buf + RDPS_ARC_FH_OFF_REC_ID);
    out->segment = rdps__get_le32(buf + RDPS_ARC_FH_OFF_SEGMENT);
    out->created_ns = rdps__get_le64(buf + RDPS_ARC_FH_OFF_CREATED);
    out->first_record = rdps__get_le64(buf + RDPS_ARC_FH_OFF_FIRST);
    return RDPS_ARC_OK;
}

void rdps__arc_chunk_header_encode(uint8_t out[RDPS_ARC_CHUNK_HEADER_LEN],
                                   const struct rdps_arc_chunk_header *h)
{
    memset(out, 0, RDPS_ARC_CHUNK_HEADER_LEN);
    rdps__put_le32(out + RDPS_ARC_CH_OFF_MAGIC, RDPS_ARC_CHUNK_MAGIC);
    out[RDPS_ARC_CH_OFF_CODEC] = h->codec;
    rdps__put_le16(out + RDPS_ARC_CH_OFF_HDR_LEN, RDPS_ARC_CHUNK_HEADER_LEN);
    rdps__put_le32(out + RDPS_ARC_CH_OFF_STORED_LEN, h->stored_len);
    rdps__put_le32(out + RDPS_ARC_CH_OFF_RAW_LEN, h->raw_len);
    rdps__put_le32(out + RDPS_ARC_CH_OFF_RECORDS, h->records);
    rdps__put_le32(out + RDPS_ARC_CH_OFF_STORED_CRC, h->stored_crc);
    rdps__put_le64(out + RDPS_ARC_CH_OFF_FIRST, h->first_record);
    rdps__put_le64(out + RDPS_ARC_CH_OFF_FIRST_TS, h->first_ts);
    rdps__put_le64(out + RDPS_ARC_CH_OFF_LAST_TS, h->last_ts);
    rdps__put_le32(out + RDPS_ARC_CH_OFF_HEADER_CRC,
                   rdps__arc_crc32c(out, RDPS_ARC_CH_OFF_HEADER_CRC, 0));
}

enum rdps_arc_reject rdps__arc_chunk_header_decode(const uint8_t *buf, size_t len,
                                                   struct rdps_arc_chunk_header *out)
{
    if (len < RDPS_ARC_CHUNK_HEADER_LEN)
        return RDPS_ARC_SHORT;
    if (rdps__get_le32(buf + RDPS_ARC_CH_OFF_MAGIC) != RDPS_ARC_CHUNK_MAGIC)
        return RDPS_ARC_BAD_MAGIC;
    if (rdps__get_le32(buf + RDPS_ARC_CH_OFF_HEADER_CRC) !=
        rdps__arc_crc32c(buf, RDPS_ARC_CH_OFF_HEADER_CRC, 0))
        return RDPS_ARC_BAD_CRC;
    struct rdps_arc_chunk_header h = {
        .codec = buf[RDPS_ARC_CH_OFF_CODEC],
        .stored_len = rdps__get_le32(buf + RDPS_ARC_CH_OFF_STORED_LEN),
        .raw_len = rdps__get_le32(buf + RDPS_ARC_CH_OFF_RAW_LEN),
        .records = rdps__get_le32(buf + RDPS_ARC_CH_OFF_RECORDS),
        .stored_crc = rdps__get_le32(buf + RDPS_ARC_CH_OFF_STORED_CRC),
        .first_record = rdps__get_le64(buf + RDPS_ARC_CH_OFF_FIRST),
        .first_ts = rdps__get_le64(buf + RDPS_ARC_CH_OFF_FIRST_TS),
        .last_ts = rdps__get_le64(buf + RDPS_ARC_CH_OFF_LAST_TS),
    };
    if (rdps__get_le16(buf + RDPS_ARC_CH_OFF_HDR_LEN) != RDPS_ARC_CHUNK_HEADER_LEN ||
        buf[RDPS_ARC_CH_OFF_RESERVED8] != 0 ||
        rdps__get_le32(buf + RDPS_ARC_CH_OFF_RESERVED32) != 0 || h.codec > RDPS_ARC_CODEC_ZSTD ||
        h.records == 0 || h.last_ts < h.first_ts)
        return RDPS_ARC_BAD_FIELD;
    if (h.raw_len > RDPS_ARC_MAX_CHUNK_RAW || h.stored_len > RDPS_ARC_MAX_CHUNK_STORE ||
        (h.codec == RDPS_ARC_CODEC_NONE && h.stored_len != h.raw_len) ||
        (uint64_t)h.records * RDPS_ARC_RECORD_HEADER_LEN > h.raw_len)
        return RDPS_ARC_BAD_LENGTH;
    *out = h;
    return RDPS_ARC_OK;
}

size_t rdps__arc_record_encode(uint8_t *out, size_t cap, const struct rdps_arc_record *r)
{
    size_t total = RDPS_ARC_RECORD_HEADER_LEN + (size_t)r->body_len;
    if (total > cap || r->body_len > RDPS_ARC_MAX_BODY)
        return 0;
    out[RDPS_ARC_RH_OFF_TYPE] = r->type;
    out[RDPS_ARC_RH_OFF_FLAGS] = r->flags;
    rdps__put_le16(out + RDPS_ARC_RH_OFF_HDR_LEN, RDPS_ARC_RECORD_HEADER_LEN);
    rdps__put_le32(out + RDPS_ARC_RH_OFF_BODY_LEN, r->body_len);
    rdps__put_le64(out + RDPS_ARC_RH_OFF_TOPIC_ID, r->topic_id);
    rdps__put_le32(out + RDPS_ARC_RH_OFF_SESSION, r->session_id);
    rdps__put_le32(out + RDPS_ARC_RH_OFF_SEQ, r->seq);
    rdps__put_le32(out + RDPS_ARC_RH_OFF_ORDINAL, r->ordinal);
    rdps__put_le32(out + RDPS_ARC_RH_OFF_COUNT, r->count);
    rdps__put_le64(out + RDPS_ARC_RH_OFF_PUB_TS, r->publisher_ts_ns);
    rdps__put_le64(out + RDPS_ARC_RH_OFF_REC_TS, r->recorder_ts_ns);
    if (r->body_len > 0)
        memcpy(out + RDPS_ARC_RECORD_HEADER_LEN, r->body, r->body_len);
    return total;
}

static bool topic_name_valid(const uint8_t *name, uint32_t len)
{
    if (len == 0 || len > RDPS_ARC_TOPIC_NAME_MAX)
        return false;
    for (uint32_t i = 0; i < len; i++)
        if (name[i] < 0x21 || name[i] > 0x7e)
            return false;
    return true;
}

/* The body each record type must carry (longer bodies are for later versions to extend). */
static bool body_valid(const struct rdps_arc_record *r)
{
    switch (r->type) {
    case RDPS_ARC_REC_MESSAGE:
        return true;
    case RDPS_ARC_REC_TOPIC:
        return r->topic_id != 0 && topic_name_valid(r->body, r->body_len);
    case RDPS_ARC_REC_LOSS:
    case RDPS_ARC_REC_GAP:
        return r->body_len >= RDPS_ARC_LOSS_BODY_LEN;
    case RDPS_ARC_REC_SESSION_START:
    case RDPS_ARC_REC_SESSION_END:
        return r->body_len >= RDPS_ARC_SESSION_BODY_LEN;
    case RDPS_ARC_REC_OVERRUN:
        return r->body_len >= RDPS_ARC_OVERRUN_BODY_LEN;
    }
    return false;
}

enum rdps_arc_reject rdps__arc_record_decode(const uint8_t *buf, size_t len,
                                             struct rdps_arc_record *out, size_t *used)
{
    if (len < RDPS_ARC_RECORD_HEADER_LEN)
        return RDPS_ARC_SHORT;
    uint16_t hdr_len = rdps__get_le16(buf + RDPS_ARC_RH_OFF_HDR_LEN);
    uint32_t body_len = rdps__get_le32(buf + RDPS_ARC_RH_OFF_BODY_LEN);
    /* A later version may append header fields: skip what this one does not know. */
    if (hdr_len < RDPS_ARC_RECORD_HEADER_LEN || hdr_len > len || body_len > len - hdr_len)
        return RDPS_ARC_BAD_LENGTH;
    struct rdps_arc_record r = {
        .type = buf[RDPS_ARC_RH_OFF_TYPE],
        .flags = buf[RDPS_ARC_RH_OFF_FLAGS],
        .topic_id = rdps__get_le64(buf + RDPS_ARC_RH_OFF_TOPIC_ID),
        .session_id = rdps__get_le32(buf + RDPS_ARC_RH_OFF_SESSION),
        .seq = rdps__get_le32(buf + RDPS_ARC_RH_OFF_SEQ),
        .ordinal = rdps__get_le32(buf + RDPS_ARC_RH_OFF_ORDINAL),
        .count = rdps__get_le32(buf + RDPS_ARC_RH_OFF_COUNT),
        .publisher_ts_ns = rdps__get_le64(buf + RDPS_ARC_RH_OFF_PUB_TS),
        .recorder_ts_ns = rdps__get_le64(buf + RDPS_ARC_RH_OFF_REC_TS),
        .body = buf + hdr_len,
        .body_len = body_len,
    };
    if (r.type == 0 || r.type > RDPS_ARC_REC_TYPE_MAX || (r.flags & ~RDPS_ARC_RF_MASK) != 0 ||
        !body_valid(&r))
        return RDPS_ARC_BAD_FIELD;
    *out = r;
    *used = (size_t)hdr_len + body_len;
    return RDPS_ARC_OK;
}

void rdps__arc_index_encode(uint8_t out[RDPS_ARC_INDEX_ENTRY_LEN],
                            const struct rdps_arc_index_entry *e)
{
    memset(out, 0, RDPS_ARC_INDEX_ENTRY_LEN);
    out[RDPS_ARC_IX_OFF_TYPE] = e->type;
    out[RDPS_ARC_IX_OFF_FLAGS] = e->flags;
    rdps__put_le64(out + RDPS_ARC_IX_OFF_A, e->a);
    rdps__put_le32(out + RDPS_ARC_IX_OFF_B, e->b);
    rdps__put_le32(out + RDPS_ARC_IX_OFF_C, e->c);
    rdps__put_le64(out + RDPS_ARC_IX_OFF_FIRST, e->first_record);
    rdps__put_le64(out + RDPS_ARC_IX_OFF_FIRST_TS, e->first_ts);
    rdps__put_le64(out + RDPS_ARC_IX_OFF_D, e->d);
    rdps__put_le32(out + RDPS_ARC_IX_OFF_CRC, rdps__arc_crc32c(out, RDPS_ARC_IX_OFF_CRC, 0));
}

enum rdps_arc_reject rdps__arc_index_decode(const uint8_t *buf, size_t len,
                                            struct rdps_arc_index_entry *out)
{
    if (len < RDPS_ARC_INDEX_ENTRY_LEN)
        return RDPS_ARC_SHORT;
    if (rdps__get_le32(buf + RDPS_ARC_IX_OFF_CRC) != rdps__arc_crc32c(buf, RDPS_ARC_IX_OFF_CRC, 0))
        return RDPS_ARC_BAD_CRC;
    struct rdps_arc_index_entry e = {
        .type = buf[RDPS_ARC_IX_OFF_TYPE],
        .flags = buf[RDPS_ARC_IX_OFF_FLAGS],
        .a = rdps__get_le64(buf + RDPS_ARC_IX_OFF_A),
        .b = rdps__get_le32(buf + RDPS_ARC_IX_OFF_B),
        .c = rdps__get_le32(buf + RDPS_ARC_IX_OFF_C),
        .first_record = rdps__get_le64(buf + RDPS_ARC_IX_OFF_FIRST),
        .first_ts = rdps__get_le64(buf + RDPS_ARC_IX_OFF_FIRST_TS),
        .d = rdps__get_le64(buf + RDPS_ARC_IX_OFF_D),
    };
    if (!all_zero(buf + 2, RDPS_ARC_IX_OFF_A - 2) || (e.flags & ~RDPS_ARC_IXF_TOPICS) != 0 ||
        (e.type != RDPS_ARC_IX_CHUNK && e.flags != 0) ||
        !all_zero(buf + RDPS_ARC_IX_OFF_D + 8, RDPS_ARC_IX_OFF_CRC - RDPS_ARC_IX_OFF_D - 8))
        return RDPS_ARC_BAD_FIELD;
    if (e.type == RDPS_ARC_IX_CHUNK) {
        if (e.b < RDPS_ARC_CHUNK_HEADER_LEN ||
            e.b > RDPS_ARC_CHUNK_HEADER_LEN + RDPS_ARC_MAX_CHUNK_STORE || e.c == 0 ||
            e.d < e.first_ts || e.a < RDPS_ARC_FILE_HEADER_LEN)
            return RDPS_ARC_BAD_FIELD;
    } else if (e.type == RDPS_ARC_IX_SESSION) {
        if (e.a == 0 || e.d < RDPS_ARC_FILE_HEADER_LEN)
            return RDPS_ARC_BAD_FIELD;
    } else {
        return RDPS_ARC_BAD_FIELD;
    }
    *out = e;
    return RDPS_ARC_OK;
}

static size_t catalog_body_len(const struct rdps_arc_catalog_entry *e)
{
    switch (e->type) {
    case RDPS_ARC_CE_START:
        return RDPS_ARC_CE_START_FIXED + 4u + e->u.start.spec_len;
    case RDPS_ARC_CE_STOP:
        return RDPS_ARC_CE_STOP_LEN;
    case RDPS_ARC_CE_TRIM:
        return RDPS_ARC_CE_TRIM_LEN;
    }
    return 0;
}

size_t rdps__arc_catalog_encode(uint8_t *out, size_t cap, const struct rdps_arc_catalog_entry *e)
{
    size_t body = catalog_body_len(e);
    size_t total = RDPS_ARC_CE_HEAD_LEN + body + RDPS_ARC_CE_TRAILER_LEN;
    if (body == 0 || total > cap ||
        (e->type == RDPS_ARC_CE_START && e->u.start.spec_len > RDPS_ARC_CE_SPEC_MAX))
        return 0;
    memset(out, 0, total);
    rdps__put_le32(out + RDPS_ARC_CE_OFF_MAGIC, RDPS_ARC_CATALOG_MAGIC_ENTRY);
    rdps__put_le16(out + RDPS_ARC_CE_OFF_TYPE, e->type);
    rdps__put_le16(out + RDPS_ARC_CE_OFF_BODY_LEN, (uint16_t)body);
    rdps__put_le64(out + RDPS_ARC_CE_OFF_REC_ID, e->recording_id);
    uint8_t *b = out + RDPS_ARC_CE_HEAD_LEN;
    switch (e->type) {
    case RDPS_ARC_CE_START:
        rdps__put_le64(b, e->u.start.start_ns);
        rdps__put_le32(b + 8, e->u.start.codec);
        rdps__put_le64(b + 16, e->u.start.segment_bytes);
        rdps__put_le64(b + 24, e->u.start.segment_ns);
        rdps__put_le64(b + 32, e->u.start.retain_bytes);
        rdps__put_le16(b + 40, e->u.start.spec_len);
        if (e->u.start.spec_len > 0)
            memcpy(b + 44, e->u.start.spec, e->u.start.spec_len);
        break;
    case RDPS_ARC_CE_STOP:
        rdps__put_le64(b, e->u.stop.end_ns);
        rdps__put_le64(b + 8, e->u.stop.records);
        rdps__put_le64(b + 16, e->u.stop.messages);
        rdps__put_le64(b + 24, e->u.stop.loss_events);
        rdps__put_le64(b + 32, e->u.stop.overrun_messages);
        rdps__put_le64(b + 40, e->u.stop.last_record);
        rdps__put_le64(b + 48, e->u.stop.bytes);
        rdps__put_le32(b + 56, e->u.stop.segments);
        rdps__put_le32(b + 60, e->u.stop.reason);
        break;
    case RDPS_ARC_CE_TRIM:
        rdps__put_le32(b, e->u.trim.first_segment);
        break;
    }
    size_t crc_off = RDPS_ARC_CE_HEAD_LEN + body;
    rdps__put_le32(out + crc_off, rdps__arc_crc32c(out, crc_off, 0));
    return total;
}

enum rdps_arc_reject rdps__arc_catalog_decode(const uint8_t *buf, size_t len,
                                              struct rdps_arc_catalog_entry *out, size_t *used)
{
    if (len < RDPS_ARC_CE_HEAD_LEN + RDPS_ARC_CE_TRAILER_LEN)
        return RDPS_ARC_SHORT;
    if (rdps__get_le32(buf + RDPS_ARC_CE_OFF_MAGIC) != RDPS_ARC_CATALOG_MAGIC_ENTRY)
        return RDPS_ARC_BAD_MAGIC;
    size_t body = rdps__get_le16(buf + RDPS_ARC_CE_OFF_BODY_LEN);
    size_t total = RDPS_ARC_CE_HEAD_LEN + body + RDPS_ARC_CE_TRAILER_LEN;
    if (total > len)
        return RDPS_ARC_SHORT;
    if (rdps__get_le32(buf + RDPS_ARC_CE_HEAD_LEN + body) !=
        rdps__arc_crc32c(buf, RDPS_ARC_CE_HEAD_LEN + body, 0))
        return RDPS_ARC_BAD_CRC;
    struct rdps_arc_catalog_entry e = {
        .type = rdps__get_le16(buf + RDPS_ARC_CE_OFF_TYPE),
        .recording_id = rdps__get_le64(buf + RDPS_ARC_CE_OFF_REC_ID),
    };
    const uint8_t *b = buf + RDPS_ARC_CE_HEAD_LEN;
    switch (e.type) {
    case RDPS_ARC_CE_START:
        if (body < RDPS_ARC_CE_START_FIXED + 4u)
            return RDPS_ARC_BAD_LENGTH;
        e.u.start.start_ns = rdps__get_le64(b);
        e.u.start.codec = rdps__get_le32(b + 8);
        e.u.start.segment_bytes = rdps__get_le64(b + 16);
        e.u.start.segment_ns = rdps__get_le64(b + 24);
        e.u.start.retain_bytes = rdps__get_le64(b + 32);
        e.u.start.spec_len = rdps__get_le16(b + 40);
        e.u.start.spec = (const char *)(b + 44);
        if (e.u.start.spec_len > RDPS_ARC_CE_SPEC_MAX ||
            body != RDPS_ARC_CE_START_FIXED + 4u + e.u.start.spec_len)
            return RDPS_ARC_BAD_LENGTH;
        if (e.u.start.codec > RDPS_ARC_CODEC_ZSTD || rdps__get_le32(b + 12) != 0 ||
            rdps__get_le16(b + 42) != 0)
            return RDPS_ARC_BAD_FIELD;
        break;
    case RDPS_ARC_CE_STOP:
        if (body != RDPS_ARC_CE_STOP_LEN)
            return RDPS_ARC_BAD_LENGTH;
        e.u.stop.end_ns = rdps__get_le64(b);
        e.u.stop.records = rdps__get_le64(b + 8);
        e.u.stop.messages = rdps__get_le64(b + 16);
        e.u.stop.loss_events = rdps__get_le64(b + 24);
        e.u.stop.overrun_messages = rdps__get_le64(b + 32);
        e.u.stop.last_record = rdps__get_le64(b + 40);
        e.u.stop.bytes = rdps__get_le64(b + 48);
        e.u.stop.segments = rdps__get_le32(b + 56);
        e.u.stop.reason = rdps__get_le32(b + 60);
        if (e.u.stop.reason < RDPS_ARC_STOP_CLEAN || e.u.stop.reason > RDPS_ARC_STOP_RECOVERED)
            return RDPS_ARC_BAD_FIELD;
        break;
    case RDPS_ARC_CE_TRIM:
        if (body != RDPS_ARC_CE_TRIM_LEN)
            return RDPS_ARC_BAD_LENGTH;
        e.u.trim.first_segment = rdps__get_le32(b);
        if (rdps__get_le32(b + 4) != 0)
            return RDPS_ARC_BAD_FIELD;
        break;
    default:
        return RDPS_ARC_BAD_FIELD;
    }
    if (e.recording_id == 0)
        return RDPS_ARC_BAD_FIELD;
    *out = e;
    *used = total;
    return RDPS_ARC_OK;
}

void rdps__arc_session_body_encode(uint8_t out[RDPS_ARC_SESSION_BODY_LEN],
                                   const struct rdps_arc_source *src, uint32_t reason)
{
    memset(out, 0, RDPS_ARC_SESSION_BODY_LEN);
    memcpy(out, src->gid, RDPS_ARC_SOURCE_GID_LEN);
    rdps__put_le32(out + 16, src->qpn);
    rdps__put_le16(out + 20, src->lid);
    out[22] = src->has_gid;
    rdps__put_le32(out + 24, reason);
}

bool rdps__arc_session_body_decode(const uint8_t *body, uint32_t len, struct rdps_arc_source *src,
                                   uint32_t *reason)
{
    if (len < RDPS_ARC_SESSION_BODY_LEN)
        return false;
    memcpy(src->gid, body, RDPS_ARC_SOURCE_GID_LEN);
    src->qpn = rdps__get_le32(body + 16);
    src->lid = rdps__get_le16(body + 20);
    src->has_gid = body[22];
    *reason = rdps__get_le32(body + 24);
    return true;
}
