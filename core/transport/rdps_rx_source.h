/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rx_source.h - who sent a received UD datagram: source GID from the 40 bytes before the
 * payload, or the InfiniBand source LID when there was no GRH (pure functions, tested natively). */
#ifndef RDPS_RX_SOURCE_H
#define RDPS_RX_SOURCE_H

#include "rdps_reply_cache.h"
#include "rdps_transport.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/*
 * Source GID of a received UD datagram from the 40 bytes before its payload:
 * an IB GRH (IPv6 layout, source GID at offset 8), or on RoCE v2 over IPv4
 * 20 unused (zero) bytes followed by the IPv4 header, the GID then being the
 * IPv4-mapped source address. An IB GRH starts with version 6 in its first
 * nibble, so it never begins with 20 zero bytes.
 */
static inline bool rdps__grh_is_ipv4(const uint8_t grh[40])
{
    uint64_t w0, w1;
    uint32_t w2;
    memcpy(&w0, grh, 8);
    memcpy(&w1, grh + 8, 8);
    memcpy(&w2, grh + 16, 4);
    return (w0 | w1 | w2) == 0 && (grh[20] >> 4) == 4;
}

static inline void rdps__grh_source_gid_v4(const uint8_t grh[40], bool ipv4, uint8_t gid[16])
{
    if (ipv4) {
        memset(gid, 0, 10);
        gid[10] = 0xff;
        gid[11] = 0xff;
        memcpy(gid + 12, grh + 20 + 12, 4); /* IPv4 source address */
    } else {
        memcpy(gid, grh + 8, 16);
    }
}

/*
 * Whether the datagram went to a multicast group: the GRH's destination GID is one (ff00::/8, at
 * offset 24), or on RoCE v2 over IPv4 the destination address (at 20 + 16) is in 224.0.0.0/4.
 * A datagram without a GRH (InfiniBand inside a subnet) was sent by unicast: IB multicast always
 * carries one.
 */
static inline void rdps__grh_source_gid(const uint8_t grh[40], uint8_t gid[16])
{
    rdps__grh_source_gid_v4(grh, rdps__grh_is_ipv4(grh), gid);
}

static inline bool rdps__grh_to_multicast(const uint8_t grh[40])
{
    return rdps__grh_is_ipv4(grh) ? (grh[20 + 16] >> 4) == 0xe : grh[24] == 0xff;
}

/*
 * Fills the source fields of d: with a GRH (RoCE always; IB when routed or
 * multicast) the GID, src_lid 0; without one (IB inside a subnet) src_gid all
 * zero, has_src_gid false and src_lid = the work completion's slid. Also whether the datagram
 * was sent to a group (to_multicast).
 */
static inline void rdps__rx_fill_source(struct rdps_rx_datagram *d, const uint8_t grh[40],
                                        bool has_grh, uint16_t slid)
{
    if (has_grh) {
        bool ipv4 = rdps__grh_is_ipv4(grh); /* once for both */
        rdps__grh_source_gid_v4(grh, ipv4, d->src_gid);
        d->has_src_gid = true;
        d->src_lid = 0;
        d->to_multicast = ipv4 ? (grh[20 + 16] >> 4) == 0xe : grh[24] == 0xff;
    } else {
        memset(d->src_gid, 0, sizeof(d->src_gid));
        d->has_src_gid = false;
        d->src_lid = slid;
        d->to_multicast = false;
    }
}

/* The reply-cache key of a datagram's sender: GID + QPN, or LID + QPN without a GRH. */
static inline void rdps__rx_reply_key(const struct rdps_rx_datagram *d, struct rdps_reply_key *k)
{
    memcpy(k->gid, d->src_gid, sizeof(k->gid));
    k->qpn = d->src_qpn;
    k->lid = d->has_src_gid ? 0 : d->src_lid;
    k->pad = 0;
}

/* The same key from a source as rdps_msg_info / rdps_event report it (rdps.h): one entry per
 * sender. */
static inline void rdps__source_reply_key(const struct rdps_source *s, struct rdps_reply_key *k)
{
    if (s->has_gid)
        memcpy(k->gid, s->gid, sizeof(k->gid));
    else
        memset(k->gid, 0, sizeof(k->gid));
    k->qpn = s->qpn;
    k->lid = s->has_gid ? 0 : s->lid;
    k->pad = 0;
}

#endif /* RDPS_RX_SOURCE_H */
