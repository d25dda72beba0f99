/* SPDX-License-Identifier: BSD-2-Clause */
/* topic.c - topic names to ids and multicast groups (deterministic on every host). */
#include "topic.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdps_error.h"
#include <rdps/rdps.h>

int rdps__topic_name_check(const char *topic)
{
    if (topic == NULL)
        return rdps__set_err(RDPS_EINVAL, "topic name is NULL");
    size_t len = strnlen(topic, RDPS_TOPIC_NAME_MAX + 1);
    if (len == 0)
        return rdps__set_err(RDPS_EINVAL, "topic name is empty");
    if (len > RDPS_TOPIC_NAME_MAX)
        return rdps__set_err(RDPS_EINVAL, "topic name longer than %d bytes", RDPS_TOPIC_NAME_MAX);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)topic[i];
        if (c < 0x21 || c > 0x7e)
            return rdps__set_err(RDPS_EINVAL,
                                 "topic name has a non-printable or space character at %zu", i);
    }
    return 0;
}

static uint32_t fnv1a32(const char *text)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)text; *p != '\0'; p++) {
        h ^= *p;
        h *= 16777619u;
    }
    return h;
}

/* Murmur3's finalizer: spreads FNV's low bits before reducing modulo the range. The group
 * keeps this 32-bit hash of its own (not the 64-bit id) so that every name maps to the group it
 * mapped to before the id was widened. */
static uint32_t mix32(uint32_t h)
{
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

/* 64-bit FNV-1a: the topic id's base (offset basis and prime of the FNV specification). */
static uint64_t fnv1a64(const char *text)
{
    uint64_t h = 14695981039346656037ull;
    for (const unsigned char *p = (const unsigned char *)text; *p != '\0'; p++) {
        h ^= *p;
        h *= 1099511628211ull;
    }
    return h;
}

/* Murmur3's 64-bit finalizer (fmix64): FNV's last bytes touch only the low bits; this spreads
 * every input bit over all 64, so names that differ in one digit differ in about half the bits. */
static uint64_t fmix64(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

uint64_t rdps__topic_hash_id(const char *topic)
{
    uint64_t h = fmix64(fnv1a64(topic));
    return h == 0 ? 1 : h;
}

static int ipv4_parse(const char *text, uint32_t *out)
{
    struct in_addr in;
    if (inet_pton(AF_INET, text, &in) != 1)
        return RDPS_EINVAL;
    *out = ntohl(in.s_addr);
    return 0;
}

static int is_multicast(uint32_t addr)
{
    return (addr >> 28) == 0xe;
}

int rdps__mcast_addr_parse(const char *text, uint32_t *out)
{
    if (text == NULL || ipv4_parse(text, out) != 0)
        return rdps__set_err(RDPS_EINVAL, "'%s' is not a dotted IPv4 address",
                             text ? text : "(null)");
    if (!is_multicast(*out))
        return rdps__set_err(RDPS_EINVAL, "'%s' is not an IPv4 multicast address (224.0.0.0/4)",
                             text);
    return 0;
}

int rdps__group_range_parse(const char *cidr, struct rdps_group_range *out)
{
    char addr[INET_ADDRSTRLEN];
    const char *slash = cidr ? strchr(cidr, '/') : NULL;
    if (slash == NULL || (size_t)(slash - cidr) >= sizeof(addr))
        return rdps__set_err(RDPS_EINVAL, "group range '%s' is not of the form A.B.C.D/LEN",
                             cidr ? cidr : "(null)");
    memcpy(addr, cidr, (size_t)(slash - cidr));
    addr[slash - cidr] = '\0';

    char *end = NULL;
    long prefix = strtol(slash + 1, &end, 10);
    if (end == slash + 1 || *end != '\0' || prefix < 8 || prefix > 30)
        return rdps__set_err(RDPS_EINVAL, "group range '%s': prefix length must be 8..30", cidr);
    uint32_t base;
    if (ipv4_parse(addr, &base) != 0 || !is_multicast(base))
        return rdps__set_err(RDPS_EINVAL, "group range '%s' is not inside 224.0.0.0/4", cidr);
    uint32_t size = 1u << (32 - prefix);
    if ((base & (size - 1)) != 0)
        return rdps__set_err(RDPS_EINVAL, "group range '%s': address has host bits set", cidr);
    if (!is_multicast(base + size - 1))
        return rdps__set_err(RDPS_EINVAL, "group range '%s' leaves 224.0.0.0/4", cidr);
    out->base = base;
    out->size = size;
    return 0;
}

uint32_t rdps__topic_hash_group(const char *topic, const struct rdps_group_range *range,
                                uint32_t avoid)
{
    uint32_t offset = mix32(fnv1a32(topic)) % range->size;
    for (;;) {
        uint32_t group = range->base + offset;
        if (offset != 0 && offset != range->size - 1 && group != avoid)
            return group;
        offset = (offset + 1) % range->size; /* ranges have >= 4 addresses: this ends */
    }
}

char *rdps__ipv4_format(uint32_t addr, char *buf, size_t len)
{
    snprintf(buf, len, "%u.%u.%u.%u", addr >> 24, (addr >> 16) & 0xff, (addr >> 8) & 0xff,
             addr & 0xff);
    return buf;
}

uint64_t rdps_topic_id(const char *topic)
{
    return rdps__topic_name_check(topic) == 0 ? rdps__topic_hash_id(topic) : 0;
}
