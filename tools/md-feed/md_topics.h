/* md_topics.h - what md-feed and md-book agree on: topic names, the reflector's echo message. */
#ifndef RDPS_TOOLS_MD_TOPICS_H
#define RDPS_TOOLS_MD_TOPICS_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Channel k of feed NAME is topic "md.NAME.chK"; books echo on "md.NAME.echo". */
static inline void md_channel_topic(char *buf, size_t cap, const char *feed, uint32_t channel)
{
    snprintf(buf, cap, "md.%s.ch%u", feed, channel);
}

static inline void md_echo_topic(char *buf, size_t cap, const char *feed)
{
    snprintf(buf, cap, "md.%s.echo", feed);
}

/*
 * Reflector echo (book -> feed), little-endian: magic "ECHO", book id (u32), the echoed
 * message's channel sequence (u64) and intended send time (u64, the feed's CLOCK_REALTIME).
 * The feed records (now - intended) / 2: a one-way estimate that needs no shared clock.
 */
#define MD_ECHO_LEN   24
#define MD_ECHO_MAGIC 0x4f484345u /* "ECHO" */

struct md_echo {
    uint32_t book_id;
    uint64_t seq, intended_ns;
};

static inline void md_put_le(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint64_t md_get_le(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static inline void md_echo_encode(const struct md_echo *e, uint8_t out[MD_ECHO_LEN])
{
    md_put_le(out, MD_ECHO_MAGIC, 4);
    md_put_le(out + 4, e->book_id, 4);
    md_put_le(out + 8, e->seq, 8);
    md_put_le(out + 16, e->intended_ns, 8);
}

/* 0, or -1 for anything that is not an echo. */
static inline int md_echo_decode(const void *data, size_t len, struct md_echo *e)
{
    const uint8_t *p = data;
    if (len != MD_ECHO_LEN || md_get_le(p, 4) != MD_ECHO_MAGIC)
        return -1;
    e->book_id = (uint32_t)md_get_le(p + 4, 4);
    e->seq = md_get_le(p + 8, 8);
    e->intended_ns = md_get_le(p + 16, 8);
    return 0;
}

#endif /* RDPS_TOOLS_MD_TOPICS_H */
