/* SPDX-License-Identifier: BSD-2-Clause */
/* pcapng.h - a pcapng file of RoCEv2 packets (Ethernet/IPv4/UDP 4791, BTH + DETH, the UD
 * payload, ICRC) that Wireshark's InfiniBand dissector hands to tools/wireshark/rdps.lua. */
#ifndef RDPS_TOOLS_PCAPNG_H
#define RDPS_TOOLS_PCAPNG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Writes the section header and one Ethernet interface with nanosecond timestamps. 0 or -errno. */
int pcapng_begin(FILE *f);
/*
 * Writes one packet carrying `payload` (an rdps datagram) as a UD SEND from src_qpn to dst_qpn,
 * stamped ts_ns (ns since the epoch). The ICRC is zero (Wireshark does not check it). Returns
 * 0, -EMSGSIZE above 9000 bytes, or -errno.
 */
int pcapng_roce_packet(FILE *f, uint64_t ts_ns, const uint8_t *payload, size_t len,
                       uint32_t src_qpn, uint32_t dst_qpn, uint32_t psn);

#endif /* RDPS_TOOLS_PCAPNG_H */
