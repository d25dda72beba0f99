/* SPDX-License-Identifier: BSD-2-Clause */
/* pattern.c - deterministic message contents so a receiver can verify every byte without a side
 * channel. */
#include "pattern.h"

#include <string.h>

#include "rdps_endian.h"

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t stream_start(uint64_t seed, uint64_t index)
{
    uint64_t s = seed ^ (index * 0xd1342543de82ef95ull);
    return splitmix64(&s);
}

size_t pattern_size(uint64_t seed, uint64_t index, size_t min, size_t max)
{
    uint64_t s = stream_start(seed ^ 0x5a5a5a5a5a5a5a5aull, index);
    if (max <= min)
        return min;
    return min + (size_t)(splitmix64(&s) % (uint64_t)(max - min + 1));
}

static uint32_t check_word(uint64_t seed, uint64_t index, size_t len)
{
    uint64_t s = seed ^ (index << 20) ^ (uint64_t)len ^ 0xc3a5c85c97cb3127ull;
    return (uint32_t)splitmix64(&s);
}

/* The body: 8 pseudo-random bytes per generator step. */
static void fill_stream(uint64_t seed, uint64_t index, uint8_t *buf, size_t len)
{
    uint64_t s = stream_start(seed, index);
    size_t i = 0;
    while (i < len) {
        uint64_t r = splitmix64(&s);
        for (int k = 0; k < 8 && i < len; k++, i++)
            buf[i] = (uint8_t)(r >> (8 * k));
    }
}

void pattern_fill(uint64_t seed, uint64_t index, uint8_t *buf, size_t len)
{
    fill_stream(seed, index, buf, len);
    if (len >= PATTERN_HEADER_BYTES) {
        rdps__put_le32(buf, (uint32_t)index);
        rdps__put_le32(buf + 4, check_word(seed, index, len));
    }
}

static bool body_matches(uint64_t seed, uint64_t index, const uint8_t *buf, size_t len)
{
    uint8_t expect[256];
    uint64_t s = stream_start(seed, index);
    size_t i = 0;
    /* Regenerate in chunks so large messages need no allocation. */
    while (i < len) {
        size_t n = 0;
        while (n < sizeof(expect) && i + n < len) {
            uint64_t r = splitmix64(&s);
            for (int k = 0; k < 8 && n < sizeof(expect) && i + n < len; k++, n++)
                expect[n] = (uint8_t)(r >> (8 * k));
        }
        size_t from =
            i < PATTERN_HEADER_BYTES && len >= PATTERN_HEADER_BYTES ? PATTERN_HEADER_BYTES - i : 0;
        if (from < n && memcmp(buf + i + from, expect + from, n - from) != 0)
            return false;
        i += n;
    }
    return true;
}

enum pattern_verdict pattern_check(uint64_t seed, const uint8_t *buf, size_t len, uint64_t hint,
                                   uint64_t *index)
{
    if (len >= PATTERN_HEADER_BYTES) {
        /* The 32-bit index on the wire is extended using the hint (runs beyond 2^32 wrap). */
        uint32_t low = rdps__get_le32(buf);
        uint64_t idx = (hint & ~0xffffffffull) | low;
        if (idx + 0x80000000ull < hint)
            idx += 0x100000000ull;
        else if (idx > hint + 0x80000000ull && idx >= 0x100000000ull)
            idx -= 0x100000000ull;
        if (rdps__get_le32(buf + 4) != check_word(seed, idx, len) ||
            !body_matches(seed, idx, buf, len))
            return PATTERN_CORRUPT;
        *index = idx;
        return PATTERN_OK;
    }
    /*
     * A few bytes can match more than one index: try the likeliest first (the
     * next expected, then later ones, then a little back for reordering), so
     * an in-order stream is never taken for duplicates.
     */
    for (uint64_t k = 0; k < 1024 + 64; k++) {
        uint64_t idx = k < 1024 ? hint + k : hint - (k - 1023);
        if (k >= 1024 && hint < k - 1023)
            break;
        if (body_matches(seed, idx, buf, len)) {
            *index = idx;
            return PATTERN_OK;
        }
    }
    return PATTERN_CORRUPT;
}
