/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_frag.h - the fragmenter: splits a message into DATA frames written into caller buffers. */
#ifndef RDPS_PROTO_FRAG_H
#define RDPS_PROTO_FRAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rdps_frame.h"

/*
 * Iterator state for one message. The caller (pubsub) claims a transport
 * buffer, calls rdps__frag_next() to write the next frame into it, submits
 * it, and repeats until 0. Every frame takes the next sequence from
 * *next_seq (the publisher's session counter), so frames of one message are
 * consecutive as long as nothing else uses that counter meanwhile.
 * Fragments: all but the last carry exactly max_datagram - RDPS_FRAME_HEADER_LEN bytes. Every
 * frame carries the message's ordinal; a message of one frame goes whole (count 1), the frames
 * of a longer one as fragments (count 0).
 */
struct rdps_frag {
    const uint8_t *msg;
    uint32_t msg_len;
    uint32_t offset;       /* next byte to send */
    uint32_t frag_payload; /* max_datagram - header */
    uint32_t session_id;
    uint64_t topic_id;
    uint32_t *next_seq;
    uint64_t timestamp_ns;
    uint32_t ordinal; /* the message's ordinal (rdps_frame.h) */
    uint16_t flags;   /* RETRANSMIT / RELIABLE; BEGIN and END are computed */
    bool done;
};

/* Number of DATA frames a message of `len` bytes needs (a 0-byte message needs one). */
uint32_t rdps__frag_count(size_t len, uint32_t max_datagram);

/*
 * Prepares `it` to fragment `len` bytes at `msg` (the memory must stay valid
 * until the last rdps__frag_next()). Returns the number of frames (>= 1),
 * RDPS_EMSGSIZE if len > max_msg_len (or above the 32-bit wire limit),
 * RDPS_EINVAL for a zero session/topic, max_datagram <= RDPS_FRAME_HEADER_LEN, NULL msg with
 * len > 0, or flags other than RETRANSMIT/RELIABLE. No frame is written and
 * *next_seq is untouched on failure.
 */
int rdps__frag_init(struct rdps_frag *it, uint32_t session_id, uint64_t topic_id,
                    uint32_t *next_seq, const void *msg, size_t len, size_t max_msg_len,
                    uint32_t max_datagram, uint64_t now_ns, uint16_t flags, uint32_t ordinal);

/*
 * Writes the next frame into buf and returns its length; 0 when the message
 * is complete; RDPS_ENOSPC if cap is smaller than this frame (nothing is
 * consumed, retry with a bigger buffer).
 */
int rdps__frag_next(struct rdps_frag *it, uint8_t *buf, size_t cap);

/*
 * rdps__frag_next without the copy, for a payload sent from where it lies (a gather send): writes
 * the next frame's RDPS_FRAME_HEADER_LEN-byte header into hdr and sets *offset and *len to the
 * slice of the message that is its payload. Returns the frame's length (header and payload), 0
 * when the message is complete.
 */
int rdps__frag_next_header(struct rdps_frag *it, uint8_t *hdr, uint32_t *offset, uint32_t *len);

/*
 * Zero-copy single-datagram publish: the caller wrote payload_len bytes at
 * buf + RDPS_FRAME_HEADER_LEN; this writes the DATA header (BEGIN|END, seq = (*next_seq)++, one
 * message of `ordinal`) and returns the frame length. RDPS_EMSGSIZE if the header + payload_len
 * exceeds cap or max_datagram (use rdps__frag_init for those), RDPS_EINVAL as for frag_init.
 */
int rdps__frag_put_single(uint8_t *buf, size_t cap, uint32_t session_id, uint64_t topic_id,
                          uint32_t *next_seq, size_t payload_len, uint32_t max_datagram,
                          uint64_t now_ns, uint16_t flags, uint32_t ordinal);

#endif /* RDPS_PROTO_FRAG_H */
