/* SPDX-License-Identifier: BSD-2-Clause */
/* topic.h - topic naming: the id carried in every frame and the multicast group a name maps to. */
#ifndef RDPS_PUBSUB_TOPIC_H
#define RDPS_PUBSUB_TOPIC_H

#include <stddef.h>
#include <stdint.h>

#include <rdps/rdps.h>

/* An IPv4 range of multicast groups, host byte order. */
struct rdps_group_range {
    uint32_t base; /* first address of the range */
    uint32_t size; /* number of addresses (power of two) */
};

/* Checks a topic name: 1..RDPS_TOPIC_NAME_MAX bytes, printable ASCII. */
int rdps__topic_name_check(const char *topic);
/* The topic id: 64-bit FNV-1a of the name through murmur3's fmix64, never 0 (0 means "no
 * topic" on the wire). */
uint64_t rdps__topic_hash_id(const char *topic);
/* Parses "A.B.C.D/len" inside 224.0.0.0/4, len 8..30. */
int rdps__group_range_parse(const char *cidr, struct rdps_group_range *out);
/* Parses a dotted IPv4 multicast address (224.0.0.0/4) into host order. */
int rdps__mcast_addr_parse(const char *text, uint32_t *out);
/*
 * The group a topic hashes to: uniformly inside the range, skipping the
 * range's first and last address and `avoid` (the discovery group).
 */
uint32_t rdps__topic_hash_group(const char *topic, const struct rdps_group_range *range,
                                uint32_t avoid);
/* Formats a host-order IPv4 address as dotted text; returns buf. */
char *rdps__ipv4_format(uint32_t addr, char *buf, size_t len);

#endif /* RDPS_PUBSUB_TOPIC_H */
