/* SPDX-License-Identifier: BSD-2-Clause */
/* receive_path_ops.h - the input language of fuzz_receive_path.c, shared with its seed generator.
 */
#ifndef RDPS_TESTS_FUZZ_RECEIVE_PATH_OPS_H
#define RDPS_TESTS_FUZZ_RECEIVE_PATH_OPS_H

/*
 * An input is one config byte, then operations: an op byte (op % RP_OP_COUNT picks the
 * operation, op / RP_OP_COUNT is a small parameter `hi`) followed by its argument bytes. An
 * operation whose arguments run past the end of the input ends the program.
 *
 * Config byte, mostly rdps_config's caps: bits 0-1 max_sessions 2, 4, 8 or 64; bit 2
 * reassembly_memory 1 MiB instead of 64 KiB (the minimum); bits 3-4 reassembly_timeout_ms =
 * 2 + 8 n; bit 5 tight quotas (max_partials 6 instead of 16; per source: half the sessions,
 * 3 partials, 64 KiB; internally 2 KiB arena chunks and a 40 ms stream idle timeout); bit 6
 * small discovery (max_peers 6, 2 remote-only, intervals clamped to 10..200 ms; else 64 peers,
 * 16 remote-only, 10..60000 ms); bit 7 held mode (datagrams queue up until an RP_POLL instead of
 * being handled after each operation).
 */
enum rp_op {
    RP_PUBLISH = 0,      /* [pub][len lo][len hi]: honest publisher sends 1 + hi messages, in
                            order (several: lengths around a datagram's payload, batched) */
    RP_PUBLISH_POOL = 1, /* [pub][len lo][len hi]: their datagrams go to the pool, not sent */
    RP_SEND_POOL = 2,    /* [index]: pool frame sent by the publisher that made it */
    RP_SEND_RANGE = 3,   /* [first][count]: pool frames first.., reversed when hi is odd */
    RP_HOSTILE_RAW = 4,  /* [src][len][len bytes]: any bytes from a spoofed source */
    RP_HOSTILE_HDR = 5,  /* [src][type][flags][session][topic][seq x4][msg_len x3][offset x3]
                            [payload len x2][ordinal step][count]: a header with chosen fields and
                            a payload; the spoof's ordinal walks by the signed step; count < 0xF0:
                            count % 8, else huge; hi & 1: seq and ordinal near the honest
                            session's; hi & 2: the payload is batch records (count off by
                            (count & 3) - 1 when count & 0x80) */
    RP_HOSTILE_COPY = 6, /* [src][index][pos][xor]: a pool frame resent by a spoofed source
                            (src == RP_SRC_SELF: as our own looped-back multicast), one byte
                            xor-ed (xor 0: unchanged) */
    RP_ANNOUNCE = 7,     /* [src][flags][topic][session][interval x2]: a well-formed
                            announcement; flags: bit 0 subscriber, 1 leaving, 2 frame session
                            differs from the body's, 3 wrong topic id */
    RP_ANNOUNCE_RAW = 8, /* [src][len][len bytes]: ANNOUNCE frame with an arbitrary body */
    RP_CONTROL = 9,      /* [src][kind][session][seq x4][count x4]: kind % 4: heartbeat, NAK,
                            STATUS, honest heartbeat (src picks the publisher) */
    RP_TIME = 10,        /* [n]: the clock advances n x 2^hi x 100 us, then a poll */
    RP_SKIP = 11,        /* [pub][n x2]: the publisher's next n datagrams (n + n / 2 messages)
                            are lost */
    RP_SUB = 12,         /* [slot]: subscriber slot created if empty, else destroyed */
    RP_ARM = 13,         /* [action][arg]: the next callback runs the action (enum rp_action) */
    RP_LOCAL_SEND = 14,  /* [len lo][len hi]: the ctx's own publisher sends (hi odd: destroy it) */
    RP_POLL = 15,        /* [budget]: poll with that budget (0: default); hi odd toggles held */
    RP_OP_COUNT = 16
};

/* What a callback does when armed (RP_ARM). */
enum rp_action {
    RP_ACT_DESTROY_SELF = 0,  /* the called subscriber destroys itself */
    RP_ACT_DESTROY_SLOT = 1,  /* destroys the subscriber in slot arg */
    RP_ACT_CREATE_SLOT = 2,   /* creates a subscriber in slot arg */
    RP_ACT_LOCAL_SEND = 3,    /* the ctx's publisher sends arg x 97 bytes from the callback */
    RP_ACT_NESTED_POLL = 4,   /* rdps_ctx_poll and rdps_ctx_wait (must be RDPS_EBUSY) */
    RP_ACT_DESTROY_PUB = 5,   /* destroys the ctx's publisher */
    RP_ACT_RECREATE_SELF = 6, /* destroys the called subscriber and creates one in its slot */
    RP_ACT_DESTROY_CTX = 7,   /* rdps_ctx_destroy: the outer call returns RDPS_ECLOSED */
    RP_ACT_COUNT = 8
};

#define RP_PUBLISHERS 4 /* honest remote publisher sessions (three sources) */
#define RP_HOSTILE    8 /* spoofed sources */
#define RP_SRC_SELF   RP_HOSTILE
#define RP_TOPICS     3
#define RP_SLOTS      4
#define RP_MAX_MSG    20480u /* honest messages: 0..RP_MAX_MSG bytes */

#endif /* RDPS_TESTS_FUZZ_RECEIVE_PATH_OPS_H */
