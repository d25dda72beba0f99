/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_archive_chunk.h - building a chunk of records (compressed with zstd or stored as is,
 * checksummed) and opening one back: validated, decompressed, its records walked. Sans-IO. */
#ifndef RDPS_ARCHIVE_CHUNK_H
#define RDPS_ARCHIVE_CHUNK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rdps_archive_format.h"

/*
 * A builder packs records into a raw buffer of a fixed capacity (allocated once at init; a
 * record larger than the capacity gets a buffer of its own size, once, at the moment it comes:
 * messages of up to 16 MiB are rare and must still be recorded). Sealing compresses (or copies)
 * the raw bytes into a caller's buffer of rdps__arc_chunk_bound(raw) bytes behind a chunk
 * header, checksums both and empties the builder.
 *
 * Opening a chunk checks, in order: the header (its CRC, its fields, its lengths against the
 * bytes present), the CRC of the stored bytes, the decompressed length, then every record (lengths,
 * types, bodies) and that the records are exactly as many as the header says, fill raw_len
 * exactly, carry consecutive numbers and non-decreasing recorder timestamps between the
 * header's first and last. Only then are records handed out: a chunk is valid as a whole or not
 * at all.
 */

struct rdps_arc_builder {
    uint8_t *raw;
    size_t raw_cap, raw_len;
    uint32_t records;
    uint64_t first_record, first_ts, last_ts;
};

int rdps__arc_builder_init(struct rdps_arc_builder *b, size_t raw_cap);
void rdps__arc_builder_fini(struct rdps_arc_builder *b);
/* Raw bytes record r takes. */
size_t rdps__arc_record_size(const struct rdps_arc_record *r);
/* Whether r fits without sealing first (an empty builder takes any record: it grows). */
bool rdps__arc_builder_fits(const struct rdps_arc_builder *b, const struct rdps_arc_record *r);
/* Appends r as record number `number` (the first record of a chunk names the chunk's first). 0,
 * or RDPS_ENOMEM (growing for a record above the capacity), RDPS_EMSGSIZE (above the format's
 * limit), RDPS_ENOSPC (does not fit: seal first). */
int rdps__arc_builder_add(struct rdps_arc_builder *b, const struct rdps_arc_record *r,
                          uint64_t number);

/* Compression state of one writer (a zstd context, reused). */
struct rdps_arc_compressor {
    void *cctx; /* ZSTD_CCtx */
    int codec;  /* enum rdps_arc_codec */
    int level;
};
int rdps__arc_compressor_init(struct rdps_arc_compressor *c, int codec, int level);
void rdps__arc_compressor_fini(struct rdps_arc_compressor *c);

/* Largest chunk (header + stored bytes) a builder of raw_len bytes can seal into. */
size_t rdps__arc_chunk_bound(size_t raw_len);
/* Seals the builder's records into out (cap >= rdps__arc_chunk_bound(b->raw_len)) and empties
 * it. Returns the chunk's length, or RDPS_EINVAL (empty builder, cap too small), RDPS_EIO (zstd
 * failed). Incompressible data is stored as is (codec NONE) rather than grown. */
long rdps__arc_chunk_seal(struct rdps_arc_builder *b, struct rdps_arc_compressor *c, uint8_t *out,
                          size_t cap);

/* Opening chunks: a zstd decompression context and a raw buffer, reused. */
struct rdps_arc_decoder {
    void *dctx; /* ZSTD_DCtx */
    uint8_t *raw;
    size_t raw_cap;
};
int rdps__arc_decoder_init(struct rdps_arc_decoder *d);
void rdps__arc_decoder_fini(struct rdps_arc_decoder *d);

/* A validated chunk's records, walked in order. */
struct rdps_arc_chunk_view {
    struct rdps_arc_chunk_header hdr;
    const uint8_t *records;
    size_t len;
    uint32_t remaining;
    uint64_t next_number;
};

/*
 * Validates the chunk at buf (len bytes: at least the whole chunk; extra bytes are ignored) as
 * above and fills *view; *chunk_len is the chunk's length on disk. Returns RDPS_ARC_OK or why it
 * was refused (RDPS_ARC_SHORT: more bytes are needed than len). When the raw buffer cannot grow
 * for the chunk, it is refused as RDPS_ARC_BAD_LENGTH with *oom set (oom may be NULL).
 */
enum rdps_arc_reject rdps__arc_chunk_open(struct rdps_arc_decoder *d, const uint8_t *buf,
                                          size_t len, struct rdps_arc_chunk_view *view,
                                          size_t *chunk_len, bool *oom);
/* The next record of an opened chunk: true and *r / *number, false at its end. */
bool rdps__arc_chunk_next(struct rdps_arc_chunk_view *view, struct rdps_arc_record *r,
                          uint64_t *number);

#endif /* RDPS_ARCHIVE_CHUNK_H */
