/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_history_wire.h - the messages of replay-merge (docs/replay-merge.md): a subscriber's
 * requests to a recorder, and the records of the replay stream it answers with. Sans-IO. */
#ifndef RDPS_ARCHIVE_HISTORY_WIRE_H
#define RDPS_ARCHIVE_HISTORY_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Topics (rdps topics like any other, found through discovery):
 *   "_rdps.hist.<id>"   requests for the history of the topic whose rdps_topic_id is <id>
 *                       (16 lower-case hex digits); a recorder that serves it subscribes to it,
 *                       so discovery announcing a subscriber of it is the recorder's announcement;
 *   "_rdps.hrep.<nonce>" one replay stream, to the subscriber that chose <nonce> (16 hex).
 *
 * Request (little-endian): magic u32 "RDHQ", version u8 (1), kind u8, flags u16, nonce u64,
 * topic_id u64, from_ns u64, token u32, need_count u16, reserved u16, then need_count x
 * {session u32, seq u32}: 48 + 8n bytes.
 *   REQUEST: replay the topic from recorder time from_ns to the replay topic of nonce (flag
 *            FROM_SESSION_START: from the first record of the earliest session of the topic the
 *            recording has not seen end, instead of from_ns);
 *   SYNC:    token names it; need: per live session waiting at the seam, the sequence the
 *            subscriber needs history to reach (its oldest buffered live one): the recorder
 *            answers CAUGHT_UP(token) once it has recorded and replayed up to those, or once it
 *            has waited long enough;
 *   CANCEL:  the subscriber is live (or gone): stop.
 * Reply record: kind u8, flags u8 (bit 0 retransmitted), reserved u16, session u32, seq u32,
 * count u32, ordinal u32, value u32, publisher_ts_ns u64, reserved u64, then the message: 40 + len.
 *   MESSAGE, LOSS (value: the recording's loss reason), CAUGHT_UP (token in value: the per-session
 *   state follows as SESSION_STATE records before it: session, seq = next, count 1 when the
 *   recording has the session), DONE (the replay ended: the recording ended or was closed),
 *   REFUSED (value: a negative rdps code).
 */

#define RDPS_HIST_REQUEST_MAGIC 0x51484452u /* "RDHQ" */
#define RDPS_HIST_VERSION       1
#define RDPS_HIST_REQUEST_LEN   48
#define RDPS_HIST_NEED_LEN      8
#define RDPS_HIST_NEED_MAX      256
#define RDPS_HIST_RECORD_LEN    40

enum rdps_hist_request_kind {
    RDPS_HIST_REQUEST = 1,
    RDPS_HIST_SYNC = 2,
    RDPS_HIST_CANCEL = 3,
};
#define RDPS_HIST_F_FROM_SESSION_START 0x1u

enum rdps_hist_record_kind {
    RDPS_HIST_MESSAGE = 1,
    RDPS_HIST_LOSS = 2,
    RDPS_HIST_SESSION_STATE = 3,
    RDPS_HIST_CAUGHT_UP = 4,
    RDPS_HIST_DONE = 5,
    RDPS_HIST_REFUSED = 6,
};

struct rdps_hist_need {
    uint32_t session, seq;
};

struct rdps_hist_request {
    uint8_t kind;
    uint16_t flags;
    uint64_t nonce, topic_id, from_ns;
    uint32_t token;
    uint16_t need_count;
    struct rdps_hist_need need[RDPS_HIST_NEED_MAX];
};

struct rdps_hist_record {
    uint8_t kind, flags;
    uint32_t session, seq, count, ordinal, value;
    uint64_t publisher_ts_ns;
    const uint8_t *data;
    size_t len;
};

/* Encoders return the bytes written, 0 when cap is too small. */
size_t rdps__hist_request_encode(uint8_t *out, size_t cap, const struct rdps_hist_request *r);
size_t rdps__hist_record_encode_header(uint8_t out[RDPS_HIST_RECORD_LEN],
                                       const struct rdps_hist_record *r);
/* Decoders: true when every field is valid for its kind and lengths match exactly. */
bool rdps__hist_request_decode(const uint8_t *buf, size_t len, struct rdps_hist_request *out);
bool rdps__hist_record_decode(const uint8_t *buf, size_t len, struct rdps_hist_record *out);

/* "_rdps.hist.<16 hex>" and "_rdps.hrep.<16 hex>" into out (at least 32 bytes). */
void rdps__hist_request_topic(char *out, size_t cap, uint64_t topic_id);
void rdps__hist_reply_topic(char *out, size_t cap, uint64_t nonce);

#endif /* RDPS_ARCHIVE_HISTORY_WIRE_H */
