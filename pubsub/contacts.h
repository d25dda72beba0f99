/* SPDX-License-Identifier: BSD-2-Clause */
/* contacts.h - unicast discovery's wire message (a ctx's peer list, schemas/control.proto
 * Contacts) encoded and validated, and the seed list of rdps_config.peers parsed. */
#ifndef RDPS_PUBSUB_CONTACTS_H
#define RDPS_PUBSUB_CONTACTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rdps_source.h"

/* Peers one message names at most (a ctx rotates through the rest, one message per interval). */
#define RDPS_CONTACTS_PER_MESSAGE 16
/* Seeds rdps_config.peers may name. */
#define RDPS_MAX_SEEDS 16

/*
 * A Contacts message: who sends it (its QP as its datagrams must show it: a message whose
 * sender is not the datagram's source is not believed for anything but the list) and up to
 * RDPS_CONTACTS_PER_MESSAGE peers it heard directly. It travels as the body of an ANNOUNCE frame
 * whose topic id is 0 (no announcement has topic id 0), by unicast only.
 */
struct rdps_contacts_msg {
    /* The sender: its port's GID and LID (0 on RoCE) and its QPN; a datagram from it shows the
     * QPN and the GID, or on InfiniBand without a GRH the LID (rdps__contacts_from_source). */
    uint8_t gid[16];
    uint16_t lid;
    uint32_t qpn;
    uint32_t host; /* its host-order IPv4, 0 if unknown */
    uint16_t cm_port;
    uint32_t interval_ms; /* it sends one every interval_ms: liveness is 3 of them */
    bool leaving;         /* its ctx is being destroyed */
    uint32_t count;
    struct rdps_source peers[RDPS_CONTACTS_PER_MESSAGE];
};

/* Whether a message names the datagram's own source as its sender (the discovery rule: QPN equal,
 * and the GID when the datagram had one, else the LID). */
bool rdps__contacts_from_source(const struct rdps_contacts_msg *m, const struct rdps_source *src);

/* Encodes into buf; returns the length or a negative code (RDPS_ENOSPC when it does not fit). */
int rdps__contacts_encode(const struct rdps_contacts_msg *m, uint8_t *buf, size_t cap);
/*
 * Decodes and validates: protobuf well-formed and at most RDPS_ANNOUNCE_MAX_BYTES; the sender a
 * QPN of 1..2^24-2, a 16-byte GID and a 16-bit LID; every peer such a QPN with a 16-byte GID or a
 * nonzero 16-bit LID (not both, not neither, as a datagram's source is); at most
 * RDPS_CONTACTS_PER_MESSAGE peers; host a dotted IPv4 address or empty; cm_port 16 bits. Returns 0
 * or RDPS_EBADFRAME (detail recorded).
 */
int rdps__contacts_decode(const uint8_t *buf, size_t len, struct rdps_contacts_msg *out);

struct rdps_seed {
    uint32_t ipv4; /* host order */
    uint16_t port; /* 0: the default rdma_cm port */
};

/*
 * Parses rdps_config.peers: "ip[:port]" items separated by commas (blanks around them allowed),
 * dotted IPv4 only, port 1..65535, at most RDPS_MAX_SEEDS. Returns the number of seeds (0 for
 * NULL or an empty text), or RDPS_EINVAL naming the bad item.
 */
int rdps__seeds_parse(const char *text, struct rdps_seed *out, size_t max);

#endif /* RDPS_PUBSUB_CONTACTS_H */
