/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_seq.h - serial-number arithmetic (RFC 1982 style) for 32-bit wrapping sequence numbers. */
#ifndef RDPS_PROTO_SEQ_H
#define RDPS_PROTO_SEQ_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Signed distance a - b on the 2^32 circle, in [-2^31, 2^31). Two sequences
 * exactly 2^31 apart are ambiguous; rdps never lets a stream span that much
 * (windows and NAK ranges are far smaller).
 */
static inline int32_t rdps__seq_diff(uint32_t a, uint32_t b)
{
    uint32_t d = a - b;
    /* Explicit conversion: casting an out-of-range uint32_t to int32_t is implementation-defined.
     */
    return d < 0x80000000u ? (int32_t)d : (int32_t)(d - 0x80000000u) - INT32_MAX - 1;
}

/* a comes before b. */
static inline bool rdps__seq_lt(uint32_t a, uint32_t b)
{
    return rdps__seq_diff(a, b) < 0;
}

static inline bool rdps__seq_le(uint32_t a, uint32_t b)
{
    return rdps__seq_diff(a, b) <= 0;
}

static inline bool rdps__seq_gt(uint32_t a, uint32_t b)
{
    return rdps__seq_diff(a, b) > 0;
}

static inline bool rdps__seq_ge(uint32_t a, uint32_t b)
{
    return rdps__seq_diff(a, b) >= 0;
}

#endif /* RDPS_PROTO_SEQ_H */
