/* SPDX-License-Identifier: BSD-2-Clause */
/* crash_pattern.h - the messages of the crash test: message i is its index and bytes derived from
 * it, so a reader can tell a message from any other and from corruption. */
#ifndef RDPS_TESTS_CRASH_PATTERN_H
#define RDPS_TESTS_CRASH_PATTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define CRASH_TOPIC   "crash.test"
#define CRASH_MAX_LEN 200

static inline size_t crash_message(uint64_t i, uint8_t *out)
{
    size_t len = 8 + (size_t)(i * 7919 % (CRASH_MAX_LEN - 8));
    memcpy(out, &i, 8);
    for (size_t k = 8; k < len; k++)
        out[k] = (uint8_t)(i * 31 + k);
    return len;
}

static inline bool crash_message_is(uint64_t i, const void *data, size_t len)
{
    uint8_t want[CRASH_MAX_LEN];
    size_t n = crash_message(i, want);
    return len == n && memcmp(data, want, n) == 0;
}

#endif /* RDPS_TESTS_CRASH_PATTERN_H */
