/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_frame.h - the rdps data-plane wire format (version 2): header layout, decoder, encoders. */
#ifndef RDPS_PROTO_FRAME_H
#define RDPS_PROTO_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rdps_endian.h"

/*
 * Every datagram starts with one fixed 48-byte little-endian header:
 *
 *   off size field         DATA meaning
 *    0   1   version       RDPS_FRAME_VERSION (3; version 2 had a 40-byte header without the
 *                          ordinal and count, version 1 a 32-bit topic id: both are rejected as
 *                          BAD_VERSION)
 *    1   1   type          enum rdps_frame_type
 *    2   2   flags         RDPS_FRAME_F_*; unknown bits are rejected
 *    4   4   session_id    publisher session (nonzero)
 *    8   8   topic_id      64-bit topic id, rdps_topic_id() of the name (nonzero for DATA and
 *                          HEARTBEAT)
 *   16   4   seq           per-session datagram sequence (serial arithmetic, wraps)
 *   20   4   msg_len       total message length (whole messages: the payload's length)
 *   24   4   frag_offset   offset of this fragment's payload in the message
 *   28   4   reserved      0 (rejected as NONZERO_FIELD otherwise; keyed domains' key id word)
 *   32   8   timestamp_ns  sender's CLOCK_REALTIME in ns (the one clock convention, below)
 *   40   4   ordinal       per-session message ordinal (serial arithmetic, wraps) of the first
 *                          message that starts or continues in the datagram
 *   44   4   count         whole messages in the datagram (>= 1); 0 in a fragment
 *   48   ..  payload / body
 *
 * Clock: every frame's timestamp_ns is its sender's CLOCK_REALTIME in
 * nanoseconds when the frame (DATA: its first message) was produced, except a STATUS
 * that echoes a heartbeat (echo_delay_us != RDPS_FRAME_NO_ECHO): its
 * timestamp_ns is the echoed heartbeat's timestamp_ns, on the publisher's
 * clock, so the publisher measures RTT = now - timestamp_ns - echo_delay_us
 * without comparing two hosts' clocks. (The reliable publisher takes the
 * timestamp as the name of a heartbeat it sent and measures from that
 * heartbeat's departure on its monotonic clock: an echo naming no heartbeat
 * of its own gives no sample, and a step of its wall clock none either.)
 *
 * DATA:      Messages are numbered per session by their ordinal; a datagram holds either
 *            whole messages (a batch) or one fragment of a message longer than a datagram.
 *            Whole messages: flags BEGIN | END, frag_offset = 0, msg_len = the payload's
 *            length, count = n >= 1 messages with ordinals [ordinal, ordinal + n). n = 1: the
 *            payload is the message. n >= 2: the payload is n records, each a u16 length L
 *            and L bytes (0 <= L), that fill it exactly; no alignment. (So a batch needs no
 *            flag, and a rebuilt parity symbol's flags follow from its fields as before.)
 *            Fragments: count = 0; BEGIN iff frag_offset == 0; END iff frag_offset + payload
 *            == msg_len; never both (a message of one datagram is sent whole); a non-END
 *            fragment carries > 0 bytes; every fragment of a message except the last carries
 *            the same payload size (the receiver derives fragment indices from it); every
 *            fragment carries its message's ordinal. So the ordinal after a datagram is
 *            ordinal + count, or ordinal + 1 after an END fragment, and a receiver knows
 *            exactly how many messages a run of lost datagrams held.
 *            A repair is a DATA frame with RETRANSMIT.
 * HEARTBEAT: header only; seq = next sequence the publisher will use; ordinal = the ordinal of
 *            the next message it will send (datagram seq's first); frag_offset = 0; only the
 *            RELIABLE flag is allowed. With RELIABLE,
 *            msg_len = R, the number of sequences the publisher still retains
 *            for repair (its ring holds [seq - R, seq)), 0 <= R <= 2^31, and count = the
 *            ordinal of datagram seq - R (the oldest retained: what was lost below it ends
 *            there; = ordinal when R = 0);
 *            without RELIABLE, msg_len = count = 0. With RELIABLE | PARITY (a publisher with
 *            parity repairs): a 12-byte body: parity_k u16 (its block size, a power of two
 *            2..128), reserved u16 (0), max_rtt_us u32 (the largest smoothed RTT it measured
 *            among the receivers in flow control, 0: none), receivers u32 (receivers in flow
 *            control).
 * NAK:       receiver -> publisher (unicast); session/topic are the publisher's;
 *            seq = msg_len = frag_offset = ordinal = count = 0; body: receiver_id u32,
 *            range_count u16, reserved u16 (0), range_count x {start u32, count u32}.
 *            Flag RETRANSMIT (the only one allowed): every range was asked for
 *            before and a repair this receiver asked for later has arrived, so
 *            their repairs (or the NAK) were lost: answer even inside the linger.
 * STATUS:    receiver -> publisher (unicast); seq = msg_len = frag_offset = ordinal = count = 0;
 *            body (16 bytes): receiver_id u32, consumed_seq u32 (every sequence
 *            before it was delivered or declared lost), window u32 (free receive
 *            credits, in datagrams), echo_delay_us u32 (microseconds between
 *            receiving the echoed heartbeat and sending this STATUS;
 *            RDPS_FRAME_NO_ECHO = nothing echoed). Any echo_delay_us is valid.
 * ANNOUNCE:  control plane; body is opaque protobuf bytes; topic_id may be 0;
 *            seq is the announcer's own counter; msg_len = frag_offset = ordinal = count = 0.
 * PARITY:    publisher -> receivers; a parity symbol of a block of a reliable stream
 *            (rdps_fec.h): seq = the block's first sequence, msg_len = k (its datagrams: a
 *            power of two, 2..RDPS_FEC_MAX_K, and seq a multiple of it), frag_offset = j (the
 *            parity index, < RDPS_FEC_MAX_PARITY); ordinal = count = 0; flags exactly
 *            RELIABLE | RETRANSMIT; payload = the symbol, RDPS_FEC_LEN_BYTES + the stream's
 *            largest symbol source (66..65537 bytes). A block's source symbols are its DATA
 *            frames from offset RDPS_FRAME_SYMBOL_OFF (seq onwards: ordinal and count
 *            included): a receiver that rebuilds one knows the first 16 bytes (version, type,
 *            session, topic; the flags follow from the rest) and checks the rebuilt seq is the
 *            one it lacks.
 *            NAK flag PARITY: every range is {start = a block's first sequence, count =
 *            datagrams of that block the receiver lacks (1..RDPS_FEC_MAX_K)}, and asks for
 *            that many parity symbols of the block.
 * STATUS and ANNOUNCE carry no flags.
 */
#define RDPS_FRAME_VERSION    3
#define RDPS_FRAME_HEADER_LEN 48

#define RDPS_FRAME_OFF_VERSION      0
#define RDPS_FRAME_OFF_TYPE         1
#define RDPS_FRAME_OFF_FLAGS        2
#define RDPS_FRAME_OFF_SESSION_ID   4
#define RDPS_FRAME_OFF_TOPIC_ID     8
#define RDPS_FRAME_OFF_SEQ          16
#define RDPS_FRAME_OFF_MSG_LEN      20
#define RDPS_FRAME_OFF_FRAG_OFFSET  24
#define RDPS_FRAME_OFF_RESERVED     28
#define RDPS_FRAME_OFF_TIMESTAMP_NS 32
#define RDPS_FRAME_OFF_ORDINAL      40
#define RDPS_FRAME_OFF_COUNT        44

/* NAK body, relative to the start of the datagram. */
#define RDPS_FRAME_NAK_OFF_RECEIVER_ID 48
#define RDPS_FRAME_NAK_OFF_RANGE_COUNT 52
#define RDPS_FRAME_NAK_OFF_RESERVED    54
#define RDPS_FRAME_NAK_OFF_RANGES      56
#define RDPS_FRAME_NAK_RANGE_LEN       8
#define RDPS_FRAME_NAK_MAX_RANGES      64
/* A NAK range never spans half the sequence space (serial arithmetic limit). */
#define RDPS_FRAME_NAK_MAX_RANGE_COUNT 0x7FFFFFFFu

/* STATUS body, relative to the start of the datagram. */
#define RDPS_FRAME_STATUS_OFF_RECEIVER_ID  48
#define RDPS_FRAME_STATUS_OFF_CONSUMED_SEQ 52
#define RDPS_FRAME_STATUS_OFF_WINDOW       56
#define RDPS_FRAME_STATUS_OFF_ECHO_DELAY   60
#define RDPS_FRAME_STATUS_LEN              64
/* echo_delay_us value of a STATUS that echoes no heartbeat. */
#define RDPS_FRAME_NO_ECHO 0xFFFFFFFFu
/* The body of a HEARTBEAT flagged PARITY. */
#define RDPS_FRAME_HB_OFF_PARITY_K  48
#define RDPS_FRAME_HB_OFF_RESERVED  50
#define RDPS_FRAME_HB_OFF_MAX_RTT   52
#define RDPS_FRAME_HB_OFF_RECEIVERS 56
#define RDPS_FRAME_HB_PARITY_LEN    60
/* Largest retained count R a reliable HEARTBEAT may carry (half the sequence space). */
#define RDPS_FRAME_MAX_RETAINED 0x80000000u

#define RDPS_FRAME_DEFAULT_MAX_MSG_LEN      (16u * 1024u * 1024u)
#define RDPS_FRAME_DEFAULT_MAX_ANNOUNCE_LEN 4096u

enum rdps_frame_type {
    RDPS_FRAME_DATA = 1,
    RDPS_FRAME_HEARTBEAT = 2,
    RDPS_FRAME_NAK = 3,
    RDPS_FRAME_STATUS = 4,
    RDPS_FRAME_ANNOUNCE = 5,
    RDPS_FRAME_PARITY = 6,
};

enum rdps_frame_flag {
    RDPS_FRAME_F_BEGIN = 0x1,
    RDPS_FRAME_F_END = 0x2,
    RDPS_FRAME_F_RETRANSMIT = 0x4,
    RDPS_FRAME_F_RELIABLE = 0x8, /* the publisher wants NAK/STATUS from receivers */
};
#define RDPS_FRAME_F_DATA_MASK \
    (RDPS_FRAME_F_BEGIN | RDPS_FRAME_F_END | RDPS_FRAME_F_RETRANSMIT | RDPS_FRAME_F_RELIABLE)
/* NAK only: the ranges count a block's missing datagrams and ask for parity symbols. */
#define RDPS_FRAME_F_PARITY   0x10
#define RDPS_FRAME_F_ALL_MASK (RDPS_FRAME_F_DATA_MASK | RDPS_FRAME_F_PARITY)

/* Parity (see PARITY above). A block's largest k and parity index (rdps_fec.h's limits). */
#define RDPS_FRAME_PARITY_MAX_K     128
#define RDPS_FRAME_PARITY_MAX_INDEX 128
/* Where a DATA frame's part covered by a parity symbol starts (its seq). */
#define RDPS_FRAME_SYMBOL_OFF 16
/* The length prefix of a symbol, and a symbol's least and largest length. */
#define RDPS_FRAME_SYMBOL_LEN_BYTES 2
#define RDPS_FRAME_PARITY_MIN_BODY  (RDPS_FRAME_SYMBOL_LEN_BYTES + 64)
#define RDPS_FRAME_PARITY_MAX_BODY  (RDPS_FRAME_SYMBOL_LEN_BYTES + 0xFFFF)
/* A parity datagram is this much longer than the stream's longest DATA frame: a stream with
 * parity keeps its DATA frames this much under the path MTU. */
#define RDPS_FRAME_PARITY_OVERHEAD \
    (RDPS_FRAME_HEADER_LEN + RDPS_FRAME_SYMBOL_LEN_BYTES - RDPS_FRAME_SYMBOL_OFF)

/*
 * Why a datagram was rejected. X(name, text). The list generates the enum,
 * rdps__frame_reject_name() and the size of the bad-frame counter array.
 */
#define RDPS_FRAME_REJECT_MAP(X)                                                                \
    X(OK, "ok")                                                                                 \
    X(SHORT, "datagram shorter than the 48-byte header")                                        \
    X(BAD_VERSION, "unsupported protocol version")                                              \
    X(BAD_TYPE, "unknown frame type")                                                           \
    X(BAD_FLAGS, "unknown flag bits or flags not allowed for this frame type")                  \
    X(BEGIN_END_MISMATCH, "BEGIN/END flags inconsistent with fragment offset and length")       \
    X(MSG_TOO_LARGE, "message length above the configured maximum")                             \
    X(FRAG_EXCEEDS_MSG, "fragment extends past the message length")                             \
    X(EMPTY_FRAGMENT, "non-final fragment carries no payload")                                  \
    X(ZERO_SESSION, "session id is zero")                                                       \
    X(ZERO_TOPIC, "topic id is zero")                                                           \
    X(NONZERO_FIELD, "reserved field or field that must be zero is not zero")                   \
    X(BAD_BODY_LEN, "body length wrong for the frame type")                                     \
    X(BAD_RANGE_COUNT, "NAK range count zero, above the limit, or not matching the length")     \
    X(BAD_RANGE, "NAK range with count zero or spanning half the sequence space")               \
    X(BODY_TOO_LARGE, "announce body above the configured maximum")                             \
    X(BAD_RETAINED, "heartbeat retained count above 2^31")                                      \
    X(BAD_BLOCK, "parity block size not a power of two up to 128, or seq not its start")        \
    X(BAD_PARITY_INDEX, "parity index above the limit")                                         \
    X(BAD_COUNT, "message count 0 in whole messages, not 0 in a fragment, or past the payload") \
    X(BAD_BATCH, "batched messages' lengths do not fill the payload exactly")

enum rdps_frame_reject {
#define RDPS_FRAME_REJECT_ENUM_(name, text) RDPS_FRAME_##name,
    RDPS_FRAME_REJECT_MAP(RDPS_FRAME_REJECT_ENUM_)
#undef RDPS_FRAME_REJECT_ENUM_
        RDPS_FRAME_REJECT_COUNT
};

/* Validation limits applied by the decoder. */
struct rdps_frame_limits {
    uint32_t max_msg_len;      /* DATA msg_len upper bound */
    uint32_t max_nak_ranges;   /* 1..RDPS_FRAME_NAK_MAX_RANGES */
    uint32_t max_announce_len; /* ANNOUNCE body bytes */
};

/* The defaults: 16 MiB messages, 64 NAK ranges, 4 KiB announce bodies. */
void rdps__frame_limits_default(struct rdps_frame_limits *limits);

/* Header fields, as decoded or to be encoded (version is implicit). */
struct rdps_frame_header {
    uint8_t type;
    uint16_t flags;
    uint32_t session_id;
    uint64_t topic_id;
    uint32_t seq;
    uint32_t msg_len;
    uint32_t frag_offset;
    uint64_t timestamp_ns;
    uint32_t ordinal; /* DATA: first message's ordinal; HEARTBEAT: the next message's */
    uint32_t count;   /* DATA: whole messages (0: a fragment); reliable HEARTBEAT: the oldest
                         retained datagram's ordinal */
};

/* One NAK range: `count` sequences starting at `start` (wrapping). */
struct rdps_seq_range {
    uint32_t start;
    uint32_t count;
};

/*
 * A decoded datagram. Pointers refer into the caller's buffer (no copy) and
 * live as long as it does.
 */
struct rdps_frame_view {
    struct rdps_frame_header hdr;
    const uint8_t *payload; /* bytes after the header: DATA payload or control body */
    uint32_t payload_len;
    /* NAK and STATUS bodies. */
    uint32_t receiver_id;
    /* NAK: ranges are read with rdps__frame_nak_range(). */
    uint16_t nak_range_count;
    /* STATUS. */
    uint32_t consumed_seq;
    uint32_t window;
    uint32_t echo_delay_us; /* RDPS_FRAME_NO_ECHO unless a STATUS echoes a heartbeat */
    /* HEARTBEAT with RELIABLE: R, sequences retained for repair (= hdr.msg_len), and the ordinal
     * of the oldest retained datagram (= hdr.count); else 0 and hdr.ordinal. */
    uint32_t retained;
    uint32_t trail_ordinal;
    /* PARITY: the block's datagrams (= hdr.msg_len) and the parity index (= hdr.frag_offset);
     * HEARTBEAT: parity_k, the group's largest RTT and receiver count (0 without PARITY).
     * Set for those types only (left as they were for the others). */
    uint32_t parity_k, parity_index;
    uint32_t hb_max_rtt_us, hb_receivers;
};

/*
 * Validates every field of `len` bytes at `buf` against the rules above and
 * `limits` (NULL = defaults) and fills *view. Returns RDPS_FRAME_OK (0) or
 * the reject reason; *view is only meaningful on OK. Never reads past len.
 */
enum rdps_frame_reject rdps__frame_decode(const uint8_t *buf, size_t len,
                                          const struct rdps_frame_limits *limits,
                                          struct rdps_frame_view *view);

/* Static text naming a reject reason ("short", "bad_version", ...); never NULL. */
const char *rdps__frame_reject_name(enum rdps_frame_reject reason);
/* Static one-line description of a reject reason; never NULL. */
const char *rdps__frame_reject_text(enum rdps_frame_reject reason);

/* Range `index` (< view->nak_range_count) of a decoded NAK. */
struct rdps_seq_range rdps__frame_nak_range(const struct rdps_frame_view *view, unsigned index);

/*
 * Writes the 48-byte header `hdr` at buf (reserved = 0). Returns RDPS_FRAME_HEADER_LEN, or
 * RDPS_ENOSPC if cap is smaller. No field validation: use the typed encoders
 * below for control frames and the fragmenter for DATA.
 */
int rdps__frame_put_header(uint8_t *buf, size_t cap, const struct rdps_frame_header *hdr);

/* BEGIN for the fragment at offset 0, END for the one reaching msg_len (both for a whole message).
 */
static inline uint16_t rdps__frame_edge_flags(uint32_t msg_len, uint32_t frag_offset,
                                              uint32_t payload_len)
{
    uint16_t flags = frag_offset == 0 ? RDPS_FRAME_F_BEGIN : 0;
    if ((uint64_t)frag_offset + payload_len == msg_len)
        flags |= RDPS_FRAME_F_END;
    return flags;
}

/*
 * Hot-path DATA header writer for a fragment or whole messages whose payload (payload_len
 * bytes) the caller already placed at buf + RDPS_FRAME_HEADER_LEN; computes BEGIN/END from
 * frag_offset, payload_len and msg_len and ORs in `flags` (RETRANSMIT,
 * RELIABLE). count: whole messages in the payload (1: one message, msg_len = payload_len; >= 2:
 * records, rdps_batch.h), 0 for a fragment. The caller guarantees capacity and consistent
 * arguments (the fragmenter and the packer do). Returns the frame length,
 * RDPS_FRAME_HEADER_LEN + payload_len. Inline: once per datagram on every send path, and the
 * callers' constant arguments (offset 0, whole payloads) fold away.
 */
static inline uint32_t rdps__frame_put_data_header(uint8_t *buf, uint32_t session_id,
                                                   uint64_t topic_id, uint32_t seq,
                                                   uint32_t msg_len, uint32_t frag_offset,
                                                   uint32_t payload_len, uint64_t timestamp_ns,
                                                   uint16_t flags, uint32_t ordinal, uint32_t count)
{
    flags |= rdps__frame_edge_flags(msg_len, frag_offset, payload_len);
    buf[RDPS_FRAME_OFF_VERSION] = RDPS_FRAME_VERSION;
    buf[RDPS_FRAME_OFF_TYPE] = RDPS_FRAME_DATA;
    rdps__put_le16(buf + RDPS_FRAME_OFF_FLAGS, flags);
    rdps__put_le32(buf + RDPS_FRAME_OFF_SESSION_ID, session_id);
    rdps__put_le64(buf + RDPS_FRAME_OFF_TOPIC_ID, topic_id);
    rdps__put_le32(buf + RDPS_FRAME_OFF_SEQ, seq);
    rdps__put_le32(buf + RDPS_FRAME_OFF_MSG_LEN, msg_len);
    rdps__put_le32(buf + RDPS_FRAME_OFF_FRAG_OFFSET, frag_offset);
    rdps__put_le32(buf + RDPS_FRAME_OFF_RESERVED, 0);
    rdps__put_le64(buf + RDPS_FRAME_OFF_TIMESTAMP_NS, timestamp_ns);
    rdps__put_le32(buf + RDPS_FRAME_OFF_ORDINAL, ordinal);
    rdps__put_le32(buf + RDPS_FRAME_OFF_COUNT, count);
    return RDPS_FRAME_HEADER_LEN + payload_len;
}

/*
 * Typed encoders for control frames. Each returns the frame length, RDPS_ENOSPC
 * if cap is too small (nothing written that matters), or RDPS_EINVAL for
 * arguments the decoder would reject (zero session, unknown flags, ...).
 */
/* Heartbeat without a retained count (msg_len 0); flags may only be RELIABLE. next_ordinal: the
 * ordinal of the next message the publisher will send. */
int rdps__frame_encode_heartbeat(uint8_t *buf, size_t cap, uint32_t session_id, uint64_t topic_id,
                                 uint32_t next_seq, uint32_t next_ordinal, uint64_t timestamp_ns,
                                 uint16_t flags);
/*
 * Reliable publisher's heartbeat: RELIABLE flag, seq = next_seq, msg_len =
 * retained (<= RDPS_FRAME_MAX_RETAINED; the ring holds [next_seq - retained, next_seq)),
 * ordinal = next_ordinal, count = trail_ordinal (the first message the ring holds whole: the oldest
 * retained datagram's, or the next one when that datagram continues a message begun below it).
 */
int rdps__frame_encode_heartbeat_reliable(uint8_t *buf, size_t cap, uint32_t session_id,
                                          uint64_t topic_id, uint32_t next_seq, uint32_t retained,
                                          uint32_t next_ordinal, uint32_t trail_ordinal,
                                          uint64_t timestamp_ns);
/* A reliable heartbeat of a publisher with parity repairs (RELIABLE | PARITY, 60 bytes). */
int rdps__frame_encode_heartbeat_parity(uint8_t *buf, size_t cap, uint32_t session_id,
                                        uint64_t topic_id, uint32_t next_seq, uint32_t retained,
                                        uint32_t next_ordinal, uint32_t trail_ordinal,
                                        uint64_t timestamp_ns, uint32_t parity_k,
                                        uint32_t max_rtt_us, uint32_t receivers);
int rdps__frame_encode_nak(uint8_t *buf, size_t cap, uint32_t session_id, uint64_t topic_id,
                           uint32_t receiver_id, const struct rdps_seq_range *ranges,
                           unsigned range_count, uint64_t timestamp_ns);
/* The same with header flags: RETRANSMIT (the ranges' repairs were overtaken) or 0; other flags
 * are RDPS_EINVAL. */
int rdps__frame_encode_nak_flags(uint8_t *buf, size_t cap, uint32_t session_id, uint64_t topic_id,
                                 uint32_t receiver_id, const struct rdps_seq_range *ranges,
                                 unsigned range_count, uint64_t timestamp_ns, uint16_t flags);
/*
 * A parity datagram's header at buf (payload, the symbol, at buf + RDPS_FRAME_HEADER_LEN is the
 * caller's): flags RELIABLE | RETRANSMIT. Returns RDPS_FRAME_HEADER_LEN or RDPS_EINVAL for values
 * the decoder would reject (k, block start, index; zero session or topic).
 */
int rdps__frame_put_parity_header(uint8_t *buf, uint32_t session_id, uint64_t topic_id,
                                  uint32_t block_start, uint32_t k, uint32_t j,
                                  uint64_t timestamp_ns);
/*
 * A DATA frame rebuilt from a parity symbol: frame[RDPS_FRAME_SYMBOL_OFF, len) hold the rebuilt
 * part; writes the 16 bytes before it (version, type DATA, flags BEGIN / END as the rest implies
 * plus RELIABLE | RETRANSMIT, session, topic). The caller decodes the result like any datagram.
 * len must be at least RDPS_FRAME_HEADER_LEN (else nothing is written and false is returned).
 */
bool rdps__frame_put_symbol_prefix(uint8_t *frame, uint32_t len, uint32_t session_id,
                                   uint64_t topic_id);
/* STATUS echoing no heartbeat (echo_delay_us = RDPS_FRAME_NO_ECHO; timestamp = receiver's clock).
 */
int rdps__frame_encode_status(uint8_t *buf, size_t cap, uint32_t session_id, uint64_t topic_id,
                              uint32_t receiver_id, uint32_t consumed_seq, uint32_t window,
                              uint64_t timestamp_ns);
/*
 * STATUS with an explicit echo_delay_us: when it is not RDPS_FRAME_NO_ECHO,
 * timestamp_ns must be the echoed heartbeat's timestamp_ns.
 */
int rdps__frame_encode_status_echo(uint8_t *buf, size_t cap, uint32_t session_id, uint64_t topic_id,
                                   uint32_t receiver_id, uint32_t consumed_seq, uint32_t window,
                                   uint32_t echo_delay_us, uint64_t timestamp_ns);
int rdps__frame_encode_announce(uint8_t *buf, size_t cap, uint32_t session_id, uint64_t topic_id,
                                uint32_t seq, const void *body, size_t body_len,
                                uint64_t timestamp_ns);

/* The count of a DATA frame of one message (1) or a fragment (0), from its header fields. */
static inline uint32_t rdps__frame_one_count(uint32_t msg_len, uint32_t frag_offset,
                                             uint32_t payload_len)
{
    return frag_offset == 0 && payload_len == msg_len ? 1u : 0u;
}

/*
 * The message ordinals around a DATA frame, for counting what a run of lost datagrams held:
 * `before` bounds the ordinals a run ending just before it may hold (exclusive: one more when
 * the frame continues a message begun earlier), `after` is the first a run starting just after
 * it may hold (one past its last whole message, or its message when that goes on).
 */
static inline uint32_t rdps__frame_ordinal_before(const struct rdps_frame_header *h)
{
    return h->ordinal + ((h->flags & RDPS_FRAME_F_BEGIN) ? 0u : 1u);
}
static inline uint32_t rdps__frame_ordinal_after(const struct rdps_frame_header *h)
{
    if (h->count != 0)
        return h->ordinal + h->count;
    return h->ordinal + ((h->flags & RDPS_FRAME_F_END) ? 1u : 0u);
}

/* Frame length of a NAK with n ranges. */
static inline size_t rdps__frame_nak_len(unsigned range_count)
{
    return RDPS_FRAME_NAK_OFF_RANGES + (size_t)range_count * RDPS_FRAME_NAK_RANGE_LEN;
}

#endif /* RDPS_PROTO_FRAME_H */
