/* SPDX-License-Identifier: BSD-2-Clause */
/* md_packet.h - MoldUDP64-style packing of several market-data messages per datagram, with an
 * optional extension carrying each message's intended send time; packer and validating unpacker. */
#ifndef RDPS_MDUTIL_PACKET_H
#define RDPS_MDUTIL_PACKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Wire format (all integers big-endian, as MoldUDP64 and ITCH)
 * -----------------------------------------------------------
 *   0  session   10 bytes ASCII (space padded)                       MoldUDP64 header
 *  10  sequence  u64: sequence number of the packet's first message
 *  18  count     u16: messages in the packet; 0 heartbeat, 0xFFFF end of session
 *  20  [intended_ns u64]                                             extension (see below)
 *      count message blocks: u16 length (1..max_msg_len), then the message bytes
 *      [count x delta_ns u32]                                        extension (see below)
 *
 * A heartbeat and an end of session carry no message block; their sequence is the next
 * message's. Message bytes are copied as given: an ITCH 5.0 message stays byte-exact.
 *
 * Intended-times extension (not in MoldUDP64; both ends must agree: the demo announces it in
 * its symbol directory, schemas/md.proto). Latency measured without coordinated omission
 * needs, per message, the time the feed *meant* to send it, which is not the packet's send
 * time (a packet waits up to max_delay for more messages; a stalled publisher sends late).
 * So after the header: intended_ns, the intended send time of the first message (heartbeat,
 * end of session: when it was built), and after the last message block one u32 per message:
 * its intended time minus intended_ns. Keeping the deltas in a trailer leaves the message
 * blocks exactly as MoldUDP64 lays them out; 4 bytes per ~29-byte ITCH message (an 8-byte
 * time each would cost twice that). A message whose intended time is before the packet's
 * first or 2^32 ns (4.3 s) after it starts a new packet.
 *
 * Without the extension the packets are plain MoldUDP64 downstream packets.
 */

#define MD_SESSION_LEN          10
#define MD_HEADER_LEN           20
#define MD_TIMES_LEN            8 /* intended_ns after the header */
#define MD_DELTA_LEN            4 /* per message, in the trailer */
#define MD_COUNT_HEARTBEAT      0
#define MD_COUNT_END_OF_SESSION 0xFFFFu
#define MD_PACKET_MAX           8192 /* largest datagram the packer builds */
/* Smallest: the header, the extension and one 1-byte message with its delta. */
#define MD_PACKET_MIN      (MD_HEADER_LEN + MD_TIMES_LEN + 2 + 1 + MD_DELTA_LEN)
#define MD_PACKET_MAX_MSGS ((MD_PACKET_MAX - MD_HEADER_LEN) / 3)

/* ---- packer ---- */

struct md_packer_config {
    char session[MD_SESSION_LEN]; /* copied as is */
    uint64_t first_seq;           /* sequence of the first message (MoldUDP64 counts from 1) */
    uint32_t max_datagram;        /* packet size limit, MD_PACKET_MIN..MD_PACKET_MAX */
    uint32_t max_msg_len;         /* longest message the caller adds (ITCH 5.0: 50) */
    uint64_t max_delay_ns;        /* a packet is due this long after its first message */
    bool intended_times;          /* the extension above */
};

struct md_packer_counters {
    uint64_t packets;      /* data packets flushed */
    uint64_t messages;     /* messages flushed */
    uint64_t bytes;        /* datagram bytes flushed, heartbeats included */
    uint64_t heartbeats;   /* heartbeats and ends of session built */
    uint64_t full_no_room; /* adds refused for room or time range (caller flushes, retries) */
    uint64_t bad_length;   /* adds refused: length 0 or above max_msg_len */
};

/*
 * Builds one packet at a time in its own buffer (no allocation). The caller adds messages as
 * they come; it sends the packet when md_packer_add says so (the next message might not fit)
 * or when md_packer_due says the oldest message waited max_delay_ns; md_packer_deadline
 * gives the time to wake up for it. A flushed packet stays in the buffer until the next add,
 * heartbeat or end of session. Sequence numbers are per packer (one per channel) and
 * consecutive: the k-th message added has first_seq + k.
 */
struct md_packer {
    struct md_packer_config cfg;
    uint64_t next_seq;       /* sequence the next message added gets */
    uint64_t packet_seq;     /* sequence of the first message of the packet being built */
    uint64_t first_added_ns; /* now_ns when that message was added */
    uint64_t base_ns;        /* its intended time */
    uint32_t used;           /* header, extension and message blocks written */
    uint32_t count;          /* messages in the packet being built */
    bool ended;              /* end of session built: adds are refused */
    struct md_packer_counters counters;
    uint32_t deltas[MD_PACKET_MAX_MSGS];
    uint8_t buf[MD_PACKET_MAX];
};

/* Results of md_packer_add (errors are negative errno values). */
enum md_pack_result {
    MD_PACK_ADDED = 0, /* appended; another max_msg_len message fits */
    MD_PACK_FLUSH = 1, /* appended; the next one might not fit: flush now */
};

/* 0, or -EINVAL for a config out of range (max_msg_len 0, sizes, max_delay_ns 0). */
int md_packer_init(struct md_packer *p, const struct md_packer_config *cfg);
/*
 * Appends msg (len bytes) meant to be sent at intended_ns; now_ns starts the delay clock of
 * an empty packet. MD_PACK_ADDED or MD_PACK_FLUSH; -ENOSPC: not appended (no room left, or
 * intended_ns outside what this packet's deltas can say): flush, then add it again; -EINVAL:
 * len 0 or above max_msg_len; -EPIPE: the session has ended.
 */
int md_packer_add(struct md_packer *p, const void *msg, size_t len, uint64_t intended_ns,
                  uint64_t now_ns);
/* True when the packet holds a message that has waited max_delay_ns. */
bool md_packer_due(const struct md_packer *p, uint64_t now_ns);
/* When the packet being built becomes due; UINT64_MAX when it is empty. */
uint64_t md_packer_deadline(const struct md_packer *p);
/* Messages in the packet being built. */
uint32_t md_packer_pending(const struct md_packer *p);
/* Sequence number the next message added will get. */
uint64_t md_packer_next_seq(const struct md_packer *p);
/*
 * Finishes the packet: *data, *len point to it (valid until the next add, heartbeat or end).
 * Returns its length, or 0 (and *len 0) when no message is waiting.
 */
size_t md_packer_flush(struct md_packer *p, const uint8_t **data, size_t *len);
/*
 * A heartbeat (count 0, the next sequence) built at now_ns, or with end_of_session the
 * MoldUDP64 end-of-session packet (count 0xFFFF), after which adds fail with -EPIPE.
 * Returns its length; -EBUSY while messages wait (flush them first).
 */
int md_packer_heartbeat(struct md_packer *p, bool end_of_session, uint64_t now_ns,
                        const uint8_t **data, size_t *len);

/* ---- unpacker ---- */

/* Why a datagram was rejected: md_unpack returns the negative value. */
enum md_unpack_error {
    MD_UNPACK_SHORT = 1,   /* shorter than the header (and the extension) */
    MD_UNPACK_TRUNCATED,   /* a length field or a message runs past the datagram */
    MD_UNPACK_ZERO_LENGTH, /* a message of length 0 */
    MD_UNPACK_TOO_LONG,    /* a message longer than max_msg_len */
    MD_UNPACK_TRAILING,    /* bytes left after count messages (and their deltas) */
    MD_UNPACK_SEQ_WRAP,    /* the last message's sequence would pass 2^64 - 1 */
    MD_UNPACK_TIME_WRAP,   /* intended_ns + delta would pass 2^64 - 1 */
    MD_UNPACK__COUNT
};
/* "short", "truncated", ...; "?" for anything else. */
const char *md_unpack_error_name(int error);

enum md_packet_kind {
    MD_PACKET_DATA,
    MD_PACKET_HEARTBEAT,
    MD_PACKET_END_OF_SESSION,
};

struct md_unpacker_config {
    uint32_t max_msg_len; /* longer messages reject the datagram (ITCH 5.0: 50) */
    bool intended_times;  /* datagrams carry the extension */
};

struct md_unpacker {
    struct md_unpacker_config cfg;
    uint64_t packets, messages, heartbeats, ends;
    uint64_t rejected[MD_UNPACK__COUNT]; /* by enum md_unpack_error */
};

/* A validated datagram; md_packet_next walks its messages. Points into the datagram. */
struct md_packet_view {
    char session[MD_SESSION_LEN];
    uint64_t seq;   /* first message's, or the next one's for a heartbeat / end */
    uint32_t count; /* messages (0 for heartbeat and end of session) */
    enum md_packet_kind kind;
    bool has_times;
    uint64_t intended_ns;  /* extension: the first message's intended time */
    const uint8_t *pkt;    /* the datagram */
    const uint8_t *deltas; /* extension: the trailer */
    uint32_t next_index;   /* iteration state */
    size_t next_off;       /* offset in pkt of the next message block */
};

struct md_msg {
    const uint8_t *data;
    uint16_t len;
    uint64_t seq;
    uint64_t intended_ns; /* 0 without the extension */
};

void md_unpacker_init(struct md_unpacker *u, const struct md_unpacker_config *cfg);
/*
 * Validates the whole datagram before anything is read from it: every length against the
 * bytes that remain, 1..max_msg_len, exactly count messages and deltas and nothing after.
 * 0 and *v on success; -enum md_unpack_error (counted in u->rejected) otherwise.
 */
int md_unpack(struct md_unpacker *u, const uint8_t *pkt, size_t len, struct md_packet_view *v);
/* The next message of a validated datagram; false after the last. */
bool md_packet_next(struct md_packet_view *v, struct md_msg *m);

#endif /* RDPS_MDUTIL_PACKET_H */
