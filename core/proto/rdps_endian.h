/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_endian.h - little-endian put/get helpers for wire fields (never cast structs onto buffers).
 */
#ifndef RDPS_PROTO_ENDIAN_H
#define RDPS_PROTO_ENDIAN_H

#include <stdint.h>
#include <string.h>

/*
 * On little-endian hosts a memcpy of the native value is the wire format and
 * compiles to one unaligned load/store (measured: byte-wise shifts were not
 * merged by gcc -O2 and cost ~100 instructions per header). Elsewhere the
 * byte-by-byte form is endian-neutral.
 */
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define RDPS_HOST_LITTLE_ENDIAN 1
#else
#define RDPS_HOST_LITTLE_ENDIAN 0
#endif

static inline void rdps__put_le16(uint8_t *p, uint16_t v)
{
#if RDPS_HOST_LITTLE_ENDIAN
    memcpy(p, &v, sizeof(v));
#else
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
#endif
}

static inline void rdps__put_le32(uint8_t *p, uint32_t v)
{
#if RDPS_HOST_LITTLE_ENDIAN
    memcpy(p, &v, sizeof(v));
#else
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
#endif
}

static inline void rdps__put_le64(uint8_t *p, uint64_t v)
{
    rdps__put_le32(p, (uint32_t)v);
    rdps__put_le32(p + 4, (uint32_t)(v >> 32));
}

static inline uint16_t rdps__get_le16(const uint8_t *p)
{
#if RDPS_HOST_LITTLE_ENDIAN
    uint16_t v;
    memcpy(&v, p, sizeof(v));
    return v;
#else
    return (uint16_t)(p[0] | (uint16_t)p[1] << 8);
#endif
}

static inline uint32_t rdps__get_le32(const uint8_t *p)
{
#if RDPS_HOST_LITTLE_ENDIAN
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return v;
#else
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
#endif
}

static inline uint64_t rdps__get_le64(const uint8_t *p)
{
    return (uint64_t)rdps__get_le32(p) | (uint64_t)rdps__get_le32(p + 4) << 32;
}

#endif /* RDPS_PROTO_ENDIAN_H */
