/* SPDX-License-Identifier: BSD-2-Clause */
/* ping_wire.h - rdps-ping datagram header (16 bytes, little-endian) and RTT statistics helpers. */
#ifndef RDPS_PING_WIRE_H
#define RDPS_PING_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * offset 0  u8  magic PING_MAGIC
 *        1  u8  kind (PING_KIND_*)
 *        2  u16 flags (0)
 *        4  u32 sequence number
 *        8  u64 sender's CLOCK_MONOTONIC send time, ns (echoed unchanged)
 * Bytes after the header are filler up to the requested size.
 */
#define PING_HEADER_BYTES 16u
#define PING_MAGIC        0xd5u

enum ping_kind {
    PING_KIND_PING = 1, /* echo me */
    PING_KIND_PONG = 2, /* an echo */
};

struct ping_header {
    uint8_t kind;
    uint16_t flags;
    uint32_t seq;
    uint64_t sent_ns;
};

void ping_header_put(uint8_t *buf, const struct ping_header *h);
/* false when len is too short or the magic or kind is wrong. */
bool ping_header_get(const uint8_t *buf, size_t len, struct ping_header *h);

/* Percentile (0..100) of n sorted samples, nearest-rank. */
uint64_t ping_percentile(const uint64_t *sorted, size_t n, double pct);
void ping_sort(uint64_t *samples, size_t n);

#endif /* RDPS_PING_WIRE_H */
