/* SPDX-License-Identifier: BSD-2-Clause */
/* discovery.h - discovery announcements: the C view of schemas/control.proto Announce, encoded and
 * validated. */
#ifndef RDPS_PUBSUB_DISCOVERY_H
#define RDPS_PUBSUB_DISCOVERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "topic.h"

enum rdps_announce_role {
    RDPS_ROLE_PUBLISHER = 1,
    RDPS_ROLE_SUBSCRIBER = 2,
};

/* Largest encoded announcement we send or accept. */
#define RDPS_ANNOUNCE_MAX_BYTES 512

struct rdps_announce {
    enum rdps_announce_role role;
    char topic[RDPS_TOPIC_NAME_MAX + 1];
    uint64_t topic_id;
    uint32_t group; /* host-order IPv4 multicast address */
    uint32_t session_id;
    uint32_t qpn;
    uint32_t qkey;
    uint8_t gid[16];
    bool reliable;
    uint32_t flow_tag;    /* reliable subscriber: group tag for tagged flow control, 0 none */
    uint32_t receiver_id; /* reliable subscriber: the id in its NAK and STATUS frames */
    bool unicast;         /* subscriber: wants copies by unicast (not on the topic's group) */
    uint32_t host;        /* host-order IPv4, 0 if unknown */
    uint16_t cm_port;
    uint32_t pid;
    uint32_t interval_ms;
    bool leaving;
    uint64_t announce_seq;
};

/* Encodes into buf; returns the length or a negative code (RDPS_ENOSPC if it does not fit). */
int rdps__announce_encode(const struct rdps_announce *a, uint8_t *buf, size_t cap);
/*
 * Decodes and validates an announcement body: protobuf well-formed, role known,
 * topic a valid name whose id matches topic_id, group multicast, gid 16 bytes,
 * session nonzero, qpn 24-bit. Returns 0 or RDPS_EBADFRAME (detail recorded).
 */
int rdps__announce_decode(const uint8_t *buf, size_t len, struct rdps_announce *out);

#endif /* RDPS_PUBSUB_DISCOVERY_H */
