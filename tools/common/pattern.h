/* SPDX-License-Identifier: BSD-2-Clause */
/* pattern.h - self-checking test messages derived from (seed, index), for rdpub --pattern / rdsub
 * --verify. */
#ifndef RDPS_TOOLS_PATTERN_H
#define RDPS_TOOLS_PATTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Messages of at least this many bytes carry their index and a check word. */
#define PATTERN_HEADER_BYTES 8

/* Size of message `index` for a size range [min, max] (uniform, deterministic). */
size_t pattern_size(uint64_t seed, uint64_t index, size_t min, size_t max);
/* Writes message `index` of length len. */
void pattern_fill(uint64_t seed, uint64_t index, uint8_t *buf, size_t len);

enum pattern_verdict {
    PATTERN_OK = 0,
    PATTERN_CORRUPT = 1,
};

/*
 * Identifies and checks a received message. Messages of >= 8 bytes name their
 * index; shorter ones are matched against indices hint, hint + 1, ... hint + 1023,
 * then hint - 1 ... hint - 64 (hint: the receiver's next expected index), the
 * first match wins. On PATTERN_OK *index is set.
 */
enum pattern_verdict pattern_check(uint64_t seed, const uint8_t *buf, size_t len, uint64_t hint,
                                   uint64_t *index);

#endif /* RDPS_TOOLS_PATTERN_H */
