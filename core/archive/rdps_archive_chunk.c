/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_archive_chunk.c - chunk builder, sealing (zstd, CRC-32C) and validating opener. */
#include "rdps_archive_chunk.h"

#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include <rdps/rdps.h>

size_t rdps__arc_record_size(const struct rdps_arc_record *r)
{
    return RDPS_ARC_RECORD_HEADER_LEN + (size_t)r->body_len;
}

int rdps__arc_builder_init(struct rdps_arc_builder *b, size_t raw_cap)
{
    memset(b, 0, sizeof(*b));
    if (raw_cap < RDPS_ARC_RECORD_HEADER_LEN || raw_cap > RDPS_ARC_MAX_CHUNK_RAW)
        return RDPS_EINVAL;
    b->raw = malloc(raw_cap);
    if (b->raw == NULL)
        return RDPS_ENOMEM;
    b->raw_cap = raw_cap;
    return 0;
}

void rdps__arc_builder_fini(struct rdps_arc_builder *b)
{
    free(b->raw);
    memset(b, 0, sizeof(*b));
}

bool rdps__arc_builder_fits(const struct rdps_arc_builder *b, const struct rdps_arc_record *r)
{
    return b->records == 0 || b->raw_len + rdps__arc_record_size(r) <= b->raw_cap;
}

int rdps__arc_builder_add(struct rdps_arc_builder *b, const struct rdps_arc_record *r,
                          uint64_t number)
{
    size_t need = rdps__arc_record_size(r);
    if (r->body_len > RDPS_ARC_MAX_BODY)
        return RDPS_EMSGSIZE;
    if (b->raw_len + need > b->raw_cap) {
        if (b->records != 0)
            return RDPS_ENOSPC;
        /* A record above the usual chunk size: a chunk of its own. */
        uint8_t *bigger = realloc(b->raw, need);
        if (bigger == NULL)
            return RDPS_ENOMEM;
        b->raw = bigger;
        b->raw_cap = need;
    }
    if (b->records == 0) {
        b->first_record = number;
        b->first_ts = r->recorder_ts_ns;
    }
    rdps__arc_record_encode(b->raw + b->raw_len, b->raw_cap - b->raw_len, r);
    b->raw_len += need;
    b->records++;
    b->last_ts = r->recorder_ts_ns;
    return 0;
}

int rdps__arc_compressor_init(struct rdps_arc_compressor *c, int codec, int level)
{
    memset(c, 0, sizeof(*c));
    c->codec = codec;
    c->level = level;
    if (codec == RDPS_ARC_CODEC_NONE)
        return 0;
    if (codec != RDPS_ARC_CODEC_ZSTD || level < ZSTD_minCLevel() || level > ZSTD_maxCLevel())
        return RDPS_EINVAL;
    c->cctx = ZSTD_createCCtx();
    return c->cctx != NULL ? 0 : RDPS_ENOMEM;
}

void rdps__arc_compressor_fini(struct rdps_arc_compressor *c)
{
    ZSTD_freeCCtx(c->cctx);
    c->cctx = NULL;
}

size_t rdps__arc_chunk_bound(size_t raw_len)
{
    size_t z = ZSTD_compressBound(raw_len);
    return RDPS_ARC_CHUNK_HEADER_LEN + (z > raw_len ? z : raw_len);
}

long rdps__arc_chunk_seal(struct rdps_arc_builder *b, struct rdps_arc_compressor *c, uint8_t *out,
                          size_t cap)
{
    if (b->records == 0 || cap < rdps__arc_chunk_bound(b->raw_len))
        return RDPS_EINVAL;
    uint8_t *stored = out + RDPS_ARC_CHUNK_HEADER_LEN;
    size_t stored_len = b->raw_len;
    uint8_t codec = RDPS_ARC_CODEC_NONE;
    if (c->codec == RDPS_ARC_CODEC_ZSTD) {
        size_t z = ZSTD_compressCCtx(c->cctx, stored, cap - RDPS_ARC_CHUNK_HEADER_LEN, b->raw,
                                     b->raw_len, c->level);
        if (ZSTD_isError(z))
            return RDPS_EIO;
        if (z < b->raw_len) {
            stored_len = z;
            codec = RDPS_ARC_CODEC_ZSTD;
        }
    }
    if (codec == RDPS_ARC_CODEC_NONE)
        memcpy(stored, b->raw, b->raw_len);
    struct rdps_arc_chunk_header h = {
        .codec = codec,
        .stored_len = (uint32_t)stored_len,
        .raw_len = (uint32_t)b->raw_len,
        .records = b->records,
        .stored_crc = rdps__arc_crc32c(stored, stored_len, 0),
        .first_record = b->first_record,
        .first_ts = b->first_ts,
        .last_ts = b->last_ts,
    };
    rdps__arc_chunk_header_encode(out, &h);
    b->raw_len = 0;
    b->records = 0;
    return (long)(RDPS_ARC_CHUNK_HEADER_LEN + stored_len);
}

int rdps__arc_decoder_init(struct rdps_arc_decoder *d)
{
    memset(d, 0, sizeof(*d));
    d->dctx = ZSTD_createDCtx();
    return d->dctx != NULL ? 0 : RDPS_ENOMEM;
}

void rdps__arc_decoder_fini(struct rdps_arc_decoder *d)
{
    ZSTD_freeDCtx(d->dctx);
    free(d->raw);
    memset(d, 0, sizeof(*d));
}

/* Every record decodes, they are exactly hdr.records filling raw_len, with recorder timestamps
 * non-decreasing inside [first_ts, last_ts]. */
static enum rdps_arc_reject check_records(const struct rdps_arc_chunk_header *h, const uint8_t *raw)
{
    size_t off = 0;
    uint64_t prev_ts = h->first_ts;
    for (uint32_t i = 0; i < h->records; i++) {
        struct rdps_arc_record r;
        size_t used;
        enum rdps_arc_reject why = rdps__arc_record_decode(raw + off, h->raw_len - off, &r, &used);
        if (why != RDPS_ARC_OK)
            return why;
        if (r.recorder_ts_ns < prev_ts || r.recorder_ts_ns > h->last_ts ||
            (i == 0 && r.recorder_ts_ns != h->first_ts) ||
            (i + 1 == h->records && r.recorder_ts_ns != h->last_ts))
            return RDPS_ARC_BAD_FIELD;
        prev_ts = r.recorder_ts_ns;
        off += used;
    }
    return off == h->raw_len ? RDPS_ARC_OK : RDPS_ARC_BAD_LENGTH;
}

enum rdps_arc_reject rdps__arc_chunk_open(struct rdps_arc_decoder *d, const uint8_t *buf,
                                          size_t len, struct rdps_arc_chunk_view *view,
                                          size_t *chunk_len, bool *oom)
{
    struct rdps_arc_chunk_header h;
    if (oom != NULL)
        *oom = false;
    enum rdps_arc_reject why = rdps__arc_chunk_header_decode(buf, len, &h);
    if (why != RDPS_ARC_OK)
        return why;
    if (len - RDPS_ARC_CHUNK_HEADER_LEN < h.stored_len)
        return RDPS_ARC_SHORT;
    const uint8_t *stored = buf + RDPS_ARC_CHUNK_HEADER_LEN;
    if (rdps__arc_crc32c(stored, h.stored_len, 0) != h.stored_crc)
        return RDPS_ARC_BAD_CRC;
    const uint8_t *raw = stored;
    if (h.codec == RDPS_ARC_CODEC_ZSTD) {
        if (d->raw_cap < h.raw_len) {
            uint8_t *bigger = realloc(d->raw, h.raw_len);
            if (bigger == NULL) {
                if (oom != NULL)
                    *oom = true;
                return RDPS_ARC_BAD_LENGTH;
            }
            d->raw = bigger;
            d->raw_cap = h.raw_len;
        }
        size_t n = ZSTD_decompressDCtx(d->dctx, d->raw, h.raw_len, stored, h.stored_len);
        if (ZSTD_isError(n) || n != h.raw_len)
            return RDPS_ARC_BAD_LENGTH;
        raw = d->raw;
    }
    why = check_records(&h, raw);
    if (why != RDPS_ARC_OK)
        return why;
    view->hdr = h;
    view->records = raw;
    view->len = h.raw_len;
    view->remaining = h.records;
    view->next_number = h.first_record;
    *chunk_len = RDPS_ARC_CHUNK_HEADER_LEN + (size_t)h.stored_len;
    return RDPS_ARC_OK;
}

bool rdps__arc_chunk_next(struct rdps_arc_chunk_view *view, struct rdps_arc_record *r,
                          uint64_t *number)
{
    size_t used;
    if (view->remaining == 0 ||
        rdps__arc_record_decode(view->records, view->len, r, &used) != RDPS_ARC_OK)
        return false;
    view->records += used;
    view->len -= used;
    view->remaining--;
    *number = view->next_number++;
    return true;
}
