/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_archive_format.h - the recording format's fixed layouts (docs/archive-format.md): segment
 * and index headers, chunk headers, records, index entries, catalog entries; sans-IO codec. */
#ifndef RDPS_ARCHIVE_FORMAT_H
#define RDPS_ARCHIVE_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Every integer is little-endian, written and read through rdps_endian.h; every structure that
 * can be torn or corrupted carries a CRC-32C (Castagnoli) of its bytes, computed with ISA-L's
 * crc32_iscsi (already a dependency for parity repairs, hardware-accelerated with SSE4.2/PCLMUL,
 * and a better code than zlib's CRC-32 at these lengths: Hamming distance 4 up to 2^31 bits).
 * Decoders validate every field against the bytes present and the limits below and return
 * RDPS_EBADFRAME (with a reason) for anything else; they never trust a length before checking it.
 *
 * A recording directory holds:
 *   catalog.rdpc                 the catalog: a header, then appended catalog entries
 *   rec-NNNNNNNN/seg-MMMMMMMM.rdpa  a segment: a header, then chunks
 *   rec-NNNNNNNN/seg-MMMMMMMM.rdpi  its index: a header, then fixed 64-byte entries
 */

#define RDPS_ARC_VERSION 1

/* Segment and index file headers: 64 bytes each. */
#define RDPS_ARC_FILE_HEADER_LEN 64
#define RDPS_ARC_SEGMENT_MAGIC   "RDPSARCS"
#define RDPS_ARC_INDEX_MAGIC     "RDPSARCI"
#define RDPS_ARC_CATALOG_MAGIC   "RDPSARCC"
#define RDPS_ARC_FH_OFF_MAGIC    0  /* 8 bytes */
#define RDPS_ARC_FH_OFF_VERSION  8  /* u16 */
#define RDPS_ARC_FH_OFF_HDR_LEN  10 /* u16 */
#define RDPS_ARC_FH_OFF_FLAGS    12 /* u32, 0 */
#define RDPS_ARC_FH_OFF_REC_ID   16 /* u64 recording id (catalog: 0) */
#define RDPS_ARC_FH_OFF_SEGMENT  24 /* u32 segment index (catalog: 0) */
#define RDPS_ARC_FH_OFF_RESERVED 28 /* u32, 0 */
#define RDPS_ARC_FH_OFF_CREATED  32 /* u64 recorder CLOCK_REALTIME ns */
#define RDPS_ARC_FH_OFF_FIRST    40 /* u64 number of the segment's first record */
#define RDPS_ARC_FH_OFF_CRC      60 /* u32 CRC-32C of bytes 0..60 */

/* Chunk header: 56 bytes, followed by stored_len bytes (compressed or not). */
#define RDPS_ARC_CHUNK_HEADER_LEN  56
#define RDPS_ARC_CHUNK_MAGIC       0x4B434452u /* "RDCK" */
#define RDPS_ARC_CH_OFF_MAGIC      0
#define RDPS_ARC_CH_OFF_CODEC      4  /* u8 */
#define RDPS_ARC_CH_OFF_RESERVED8  5  /* u8, 0 */
#define RDPS_ARC_CH_OFF_HDR_LEN    6  /* u16 */
#define RDPS_ARC_CH_OFF_STORED_LEN 8  /* u32 */
#define RDPS_ARC_CH_OFF_RAW_LEN    12 /* u32 */
#define RDPS_ARC_CH_OFF_RECORDS    16 /* u32 */
#define RDPS_ARC_CH_OFF_STORED_CRC 20 /* u32 CRC-32C of the stored bytes */
#define RDPS_ARC_CH_OFF_FIRST      24 /* u64 number of the first record */
#define RDPS_ARC_CH_OFF_FIRST_TS   32 /* u64 recorder ts of the first record */
#define RDPS_ARC_CH_OFF_LAST_TS    40 /* u64 recorder ts of the last record */
#define RDPS_ARC_CH_OFF_RESERVED32 48 /* u32, 0 */
#define RDPS_ARC_CH_OFF_HEADER_CRC 52 /* u32 CRC-32C of bytes 0..52 */

/* Limits every decoder applies. A record never spans chunks, so a chunk holds a message of the
 * largest size rdps carries (16 MiB) with room to spare. */
#define RDPS_ARC_MAX_CHUNK_RAW   (64u * 1024u * 1024u)
#define RDPS_ARC_MAX_CHUNK_STORE (RDPS_ARC_MAX_CHUNK_RAW + RDPS_ARC_MAX_CHUNK_RAW / 128u + 4096u)
#define RDPS_ARC_MAX_BODY        (RDPS_ARC_MAX_CHUNK_RAW - RDPS_ARC_RECORD_HEADER_LEN)

enum rdps_arc_codec {
    RDPS_ARC_CODEC_NONE = 0,
    RDPS_ARC_CODEC_ZSTD = 1,
};

/* Record: a 48-byte header, then body_len bytes; records are packed back to back in a chunk. */
#define RDPS_ARC_RECORD_HEADER_LEN 48
#define RDPS_ARC_RH_OFF_TYPE       0  /* u8 enum rdps_arc_record_type */
#define RDPS_ARC_RH_OFF_FLAGS      1  /* u8 RDPS_ARC_RF_* */
#define RDPS_ARC_RH_OFF_HDR_LEN    2  /* u16 */
#define RDPS_ARC_RH_OFF_BODY_LEN   4  /* u32 */
#define RDPS_ARC_RH_OFF_TOPIC_ID   8  /* u64 */
#define RDPS_ARC_RH_OFF_SESSION    16 /* u32 */
#define RDPS_ARC_RH_OFF_SEQ        20 /* u32 */
#define RDPS_ARC_RH_OFF_ORDINAL    24 /* u32 */
#define RDPS_ARC_RH_OFF_COUNT      28 /* u32 */
#define RDPS_ARC_RH_OFF_PUB_TS     32 /* u64 */
#define RDPS_ARC_RH_OFF_REC_TS     40 /* u64 */

/* Must match rdps_archive_record_type in rdps_archive.h (checked there). */
enum rdps_arc_record_type {
    RDPS_ARC_REC_MESSAGE = 1,       /* body: the message */
    RDPS_ARC_REC_TOPIC = 2,         /* body: the topic's name (topic_id = its id) */
    RDPS_ARC_REC_LOSS = 3,          /* RDPS_EVENT_LOSS: seq, count datagrams; body: loss body */
    RDPS_ARC_REC_GAP = 4,           /* RDPS_EVENT_GAP: as LOSS */
    RDPS_ARC_REC_SESSION_START = 5, /* RDPS_EVENT_PUBLISHER_SEEN; body: session body */
    RDPS_ARC_REC_SESSION_END = 6,   /* RDPS_EVENT_PUBLISHER_GONE; body: session body */
    RDPS_ARC_REC_OVERRUN = 7,       /* the recorder dropped count messages: body: overrun body */
};
#define RDPS_ARC_REC_TYPE_MAX RDPS_ARC_REC_OVERRUN

#define RDPS_ARC_RF_RETRANSMITTED 0x01u
#define RDPS_ARC_RF_MASK          0x01u

/* Bodies of the event records. */
#define RDPS_ARC_LOSS_BODY_LEN    8  /* u32 reason, u32 messages lost (0: unknown) */
#define RDPS_ARC_SESSION_BODY_LEN 28 /* gid[16], qpn u32, lid u16, has_gid u8, 0 u8, reason u32 */
#define RDPS_ARC_OVERRUN_BODY_LEN 24 /* u64 bytes dropped, u64 first ts, u64 last ts */
#define RDPS_ARC_TOPIC_NAME_MAX   255
#define RDPS_ARC_SOURCE_GID_LEN   16

/* Index entry: 64 bytes. */
#define RDPS_ARC_INDEX_ENTRY_LEN 64
#define RDPS_ARC_IX_OFF_TYPE     0  /* u8 enum rdps_arc_index_type */
#define RDPS_ARC_IX_OFF_FLAGS    1  /* u8 RDPS_ARC_IXF_*; bytes 2..8 zero */
#define RDPS_ARC_IX_OFF_A        8  /* u64 chunk: offset; session: topic id */
#define RDPS_ARC_IX_OFF_B        16 /* u32 chunk: length; session: session id */
#define RDPS_ARC_IX_OFF_C        20 /* u32 chunk: records; session: first seq */
#define RDPS_ARC_IX_OFF_FIRST    24 /* u64 first record number */
#define RDPS_ARC_IX_OFF_FIRST_TS 32 /* u64 */
#define RDPS_ARC_IX_OFF_D        40 /* u64 chunk: last ts; session: offset of its chunk */
#define RDPS_ARC_IX_OFF_CRC      60 /* u32 CRC-32C of bytes 0..60 */

/* A chunk index entry's flag: the chunk holds TOPIC records (a reader that seeks into the
 * segment reads the flagged chunks before its target to learn the names). */
#define RDPS_ARC_IXF_TOPICS 0x01u

enum rdps_arc_index_type {
    RDPS_ARC_IX_CHUNK = 1,
    RDPS_ARC_IX_SESSION = 2,
};

/* Catalog entry: 16-byte head, body, u32 CRC-32C of head and body. */
#define RDPS_ARC_CATALOG_MAGIC_ENTRY 0x52434452u /* "RDCR" */
#define RDPS_ARC_CE_HEAD_LEN         16
#define RDPS_ARC_CE_OFF_MAGIC        0 /* u32 */
#define RDPS_ARC_CE_OFF_TYPE         4 /* u16 */
#define RDPS_ARC_CE_OFF_BODY_LEN     6 /* u16 */
#define RDPS_ARC_CE_OFF_REC_ID       8 /* u64 */
#define RDPS_ARC_CE_TRAILER_LEN      4
#define RDPS_ARC_CE_SPEC_MAX         4096
#define RDPS_ARC_CE_START_FIXED                                 \
    40 /* start_ns, codec u32, reserved u32, seg bytes, seg ns, \
          retain bytes; then u16 spec_len, u16 0, spec */
#define RDPS_ARC_CE_STOP_LEN 64
#define RDPS_ARC_CE_TRIM_LEN 8

enum rdps_arc_catalog_type {
    RDPS_ARC_CE_START = 1, /* a recording began */
    RDPS_ARC_CE_STOP = 2,  /* it ended (reason), with its totals */
    RDPS_ARC_CE_TRIM = 3,  /* retention deleted its segments below first_segment */
};

/* Why a recording stopped (catalog STOP reason; rdps_archive.h has the public names). */
enum rdps_arc_stop_reason {
    RDPS_ARC_STOP_CLEAN = 1,     /* the recorder was closed */
    RDPS_ARC_STOP_DISK_FULL = 2, /* a write failed with ENOSPC/EDQUOT: recording stopped */
    RDPS_ARC_STOP_IO_ERROR = 3,  /* another write or fsync error */
    RDPS_ARC_STOP_RECOVERED = 4, /* found unfinished (crash); its torn tail cut on reopening */
};

struct rdps_arc_file_header {
    char magic[8];
    uint64_t recording_id;
    uint32_t segment;
    uint64_t created_ns;
    uint64_t first_record;
};

struct rdps_arc_chunk_header {
    uint8_t codec;
    uint32_t stored_len, raw_len, records, stored_crc;
    uint64_t first_record, first_ts, last_ts;
};

struct rdps_arc_source {
    uint8_t gid[RDPS_ARC_SOURCE_GID_LEN];
    uint32_t qpn;
    uint16_t lid;
    uint8_t has_gid;
};

/* A decoded record; body points into the chunk it came from. */
struct rdps_arc_record {
    uint8_t type, flags;
    uint64_t topic_id;
    uint32_t session_id, seq, ordinal, count;
    uint64_t publisher_ts_ns, recorder_ts_ns;
    const uint8_t *body;
    uint32_t body_len;
};

struct rdps_arc_index_entry {
    uint8_t type, flags;
    uint64_t a;    /* chunk: file offset; session: topic id */
    uint32_t b, c; /* chunk: length, records; session: session id, first seq */
    uint64_t first_record, first_ts;
    uint64_t d; /* chunk: last ts; session: offset of the chunk holding its first record */
};

struct rdps_arc_catalog_entry {
    uint16_t type;
    uint64_t recording_id;
    union {
        struct {
            uint64_t start_ns;
            uint32_t codec;
            uint64_t segment_bytes, segment_ns, retain_bytes;
            uint16_t spec_len;
            const char *spec; /* not NUL-terminated; points into the decoded bytes */
        } start;
        struct {
            uint64_t end_ns, records, messages, loss_events, overrun_messages, last_record;
            uint64_t bytes; /* segment bytes written */
            uint32_t segments, reason;
        } stop;
        struct {
            uint32_t first_segment;
        } trim;
    } u;
};

/* CRC-32C of len bytes, continuing from crc (0 to start). */
uint32_t rdps__arc_crc32c(const void *data, size_t len, uint32_t crc);

/* Why a decoder refused its input (rdps__arc_reject_text). */
enum rdps_arc_reject {
    RDPS_ARC_OK = 0,
    RDPS_ARC_SHORT,       /* fewer bytes than the structure needs */
    RDPS_ARC_BAD_MAGIC,   /* not this structure */
    RDPS_ARC_BAD_VERSION, /* a version this reader does not know */
    RDPS_ARC_BAD_CRC,     /* the checksum does not match */
    RDPS_ARC_BAD_FIELD,   /* a field out of range or a reserved field not zero */
    RDPS_ARC_BAD_LENGTH,  /* a length beyond the limits or the bytes present */
};
const char *rdps__arc_reject_text(enum rdps_arc_reject r);

/* File headers (segment, index, catalog). */
void rdps__arc_file_header_encode(uint8_t out[RDPS_ARC_FILE_HEADER_LEN], const char magic[8],
                                  const struct rdps_arc_file_header *h);
enum rdps_arc_reject rdps__arc_file_header_decode(const uint8_t *buf, size_t len,
                                                  const char magic[8],
                                                  struct rdps_arc_file_header *out);

/* Chunk headers. decode checks the header's own CRC and fields (not the stored bytes). */
void rdps__arc_chunk_header_encode(uint8_t out[RDPS_ARC_CHUNK_HEADER_LEN],
                                   const struct rdps_arc_chunk_header *h);
enum rdps_arc_reject rdps__arc_chunk_header_decode(const uint8_t *buf, size_t len,
                                                   struct rdps_arc_chunk_header *out);

/* Records. encode writes header and body into out (cap bytes) and returns the bytes written, or 0
 * when they do not fit. decode reads the record at buf (len bytes left in the chunk) and stores
 * its total length in *used. */
size_t rdps__arc_record_encode(uint8_t *out, size_t cap, const struct rdps_arc_record *r);
enum rdps_arc_reject rdps__arc_record_decode(const uint8_t *buf, size_t len,
                                             struct rdps_arc_record *out, size_t *used);

/* Index entries. */
void rdps__arc_index_encode(uint8_t out[RDPS_ARC_INDEX_ENTRY_LEN],
                            const struct rdps_arc_index_entry *e);
enum rdps_arc_reject rdps__arc_index_decode(const uint8_t *buf, size_t len,
                                            struct rdps_arc_index_entry *out);

/* Catalog entries: encode returns the length written (0 when cap is too small or the spec too
 * long); decode stores the entry's total length in *used. */
size_t rdps__arc_catalog_encode(uint8_t *out, size_t cap, const struct rdps_arc_catalog_entry *e);
enum rdps_arc_reject rdps__arc_catalog_decode(const uint8_t *buf, size_t len,
                                              struct rdps_arc_catalog_entry *out, size_t *used);

/* Event record bodies. */
void rdps__arc_session_body_encode(uint8_t out[RDPS_ARC_SESSION_BODY_LEN],
                                   const struct rdps_arc_source *src, uint32_t reason);
bool rdps__arc_session_body_decode(const uint8_t *body, uint32_t len, struct rdps_arc_source *src,
                                   uint32_t *reason);

#endif /* RDPS_ARCHIVE_FORMAT_H */
