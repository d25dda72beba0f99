/* ping_wire.c - encode/decode of the rdps-ping header with explicit little-endian helpers. */
#include "ping_wire.h"

_Static_assert(PING_HEADER_BYTES == 16, "ping header layout is 16 bytes");

static void put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint16_t get_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t get_u32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

void ping_header_put(uint8_t *buf, const struct ping_header *h)
{
    buf[0] = PING_MAGIC;
    buf[1] = h->kind;
    put_u16(buf + 2, h->flags);
    put_u32(buf + 4, h->seq);
    put_u64(buf + 8, h->sent_ns);
}

bool ping_header_get(const uint8_t *buf, size_t len, struct ping_header *h)
{
    if (buf == NULL || len < PING_HEADER_BYTES || buf[0] != PING_MAGIC)
        return false;
    h->kind = buf[1];
    if (h->kind != PING_KIND_PING && h->kind != PING_KIND_PONG)
        return false;
    h->flags = get_u16(buf + 2);
    h->seq = get_u32(buf + 4);
    h->sent_ns = get_u64(buf + 8);
    return true;
}
