/* SPDX-License-Identifier: BSD-2-Clause */
/* ping_wire.c - encode/decode of the rdps-ping header through the wire's little-endian helpers. */
#include "ping_wire.h"

#include "rdps_endian.h"

_Static_assert(PING_HEADER_BYTES == 16, "ping header layout is 16 bytes");

void ping_header_put(uint8_t *buf, const struct ping_header *h)
{
    buf[0] = PING_MAGIC;
    buf[1] = h->kind;
    rdps__put_le16(buf + 2, h->flags);
    rdps__put_le32(buf + 4, h->seq);
    rdps__put_le64(buf + 8, h->sent_ns);
}

bool ping_header_get(const uint8_t *buf, size_t len, struct ping_header *h)
{
    if (buf == NULL || len < PING_HEADER_BYTES || buf[0] != PING_MAGIC)
        return false;
    h->kind = buf[1];
    if (h->kind != PING_KIND_PING && h->kind != PING_KIND_PONG)
        return false;
    h->flags = rdps__get_le16(buf + 2);
    h->seq = rdps__get_le32(buf + 4);
    h->sent_ns = rdps__get_le64(buf + 8);
    return true;
}
