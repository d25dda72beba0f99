/* SPDX-License-Identifier: BSD-2-Clause */
/* pcapng.c - pcapng blocks (SHB, IDB, EPB) around RoCEv2 UD SEND packets. */
#include "pcapng.h"

#include <errno.h>
#include <string.h>

#define BLOCK_SHB       0x0A0D0D0Au
#define BLOCK_IDB       0x00000001u
#define BLOCK_EPB       0x00000006u
#define LINKTYPE_ETHER  1u
#define ROCEV2_PORT     4791u
#define OP_UD_SEND_ONLY 0x64u
#define QKEY            0x80010000u /* what rxe's rdma_cm gives multicast groups */
#define MAX_PACKET      9000u

/* pcapng is written in the host's byte order (the section header says which); network headers
 * are big-endian. */
static void put16be(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void put32be(uint8_t *p, uint32_t v)
{
    put16be(p, (uint16_t)(v >> 16));
    put16be(p + 2, (uint16_t)v);
}

static int write_block(FILE *f, uint32_t type, const uint8_t *body, size_t len)
{
    static const uint8_t zeros[4];
    size_t pad = (4 - len % 4) % 4;
    uint32_t total = (uint32_t)(12 + len + pad);
    if (fwrite(&type, 4, 1, f) != 1 || fwrite(&total, 4, 1, f) != 1 ||
        fwrite(body, 1, len, f) != len || fwrite(zeros, 1, pad, f) != pad ||
        fwrite(&total, 4, 1, f) != 1)
        return errno != 0 ? -errno : -EIO;
    return 0;
}

int pcapng_begin(FILE *f)
{
    uint8_t shb[16];
    uint32_t magic = 0x1A2B3C4Du;
    uint16_t major = 1, minor = 0;
    int64_t section_len = -1;
    memcpy(shb, &magic, 4);
    memcpy(shb + 4, &major, 2);
    memcpy(shb + 6, &minor, 2);
    memcpy(shb + 8, &section_len, 8);
    int rc = write_block(f, BLOCK_SHB, shb, sizeof(shb));
    if (rc != 0)
        return rc;
    /* link type, reserved, snaplen; option if_tsresol (9) = 9: nanoseconds; end of options. */
    uint8_t idb[20] = {0};
    uint16_t link = LINKTYPE_ETHER, opt_code = 9, opt_len = 1, end = 0;
    uint32_t snaplen = 65535;
    memcpy(idb, &link, 2);
    memcpy(idb + 4, &snaplen, 4);
    memcpy(idb + 8, &opt_code, 2);
    memcpy(idb + 10, &opt_len, 2);
    idb[12] = 9;
    memcpy(idb + 16, &end, 2);
    return write_block(f, BLOCK_IDB, idb, sizeof(idb));
}

static uint16_t ip_checksum(const uint8_t *hdr, size_t len)
{
    uint32_t sum = 0;
    for (size_t i = 0; i + 1 < len; i += 2)
        sum += (uint32_t)(hdr[i] << 8 | hdr[i + 1]);
    while (sum >> 16)
        sum = (sum & 0xFFFF) + (sum >> 16);
    return (uint16_t)~sum;
}

int pcapng_roce_packet(FILE *f, uint64_t ts_ns, const uint8_t *payload, size_t len,
                       uint32_t src_qpn, uint32_t dst_qpn, uint32_t psn)
{
    static uint8_t epb[20 + MAX_PACKET + 64];
    size_t pad = (4 - len % 4) % 4;
    size_t ib = 12 + 8 + len + pad + 4; /* BTH, DETH, payload, pad, ICRC */
    size_t frame = 14 + 20 + 8 + ib;
    if (frame > MAX_PACKET)
        return -EMSGSIZE;
    uint8_t *p = epb + 20;
    memset(p, 0, frame);
    /* Ethernet: to the multicast MAC of 239.192.0.2, from a local MAC. */
    static const uint8_t eth[14] = {0x01, 0x00, 0x5e, 0x40, 0x00, 0x02, 0x02,
                                    0x00, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00};
    memcpy(p, eth, sizeof(eth));
    uint8_t *ip = p + 14;
    ip[0] = 0x45;
    put16be(ip + 2, (uint16_t)(20 + 8 + ib));
    put16be(ip + 6, 0x4000);
    ip[8] = 64;
    ip[9] = 17;
    static const uint8_t addrs[8] = {169, 254, 77, 1, 239, 192, 0, 2};
    memcpy(ip + 12, addrs, sizeof(addrs));
    put16be(ip + 10, ip_checksum(ip, 20));
    uint8_t *udp = ip + 20;
    put16be(udp, 49152);
    put16be(udp + 2, ROCEV2_PORT);
    put16be(udp + 4, (uint16_t)(8 + ib));
    uint8_t *bth = udp + 8;
    bth[0] = OP_UD_SEND_ONLY;
    bth[1] = (uint8_t)(pad << 4);
    put16be(bth + 2, 0xFFFF);
    put32be(bth + 4, dst_qpn & 0xFFFFFFu);
    put32be(bth + 8, psn & 0xFFFFFFu);
    put32be(bth + 12, QKEY);
    put32be(bth + 16, src_qpn & 0xFFFFFFu);
    memcpy(bth + 20, payload, len);
    /* EPB: interface 0, timestamp high/low (ns), captured and original length. */
    uint32_t zero = 0, hi = (uint32_t)(ts_ns >> 32), lo = (uint32_t)ts_ns, cap = (uint32_t)frame;
    memcpy(epb, &zero, 4);
    memcpy(epb + 4, &hi, 4);
    memcpy(epb + 8, &lo, 4);
    memcpy(epb + 12, &cap, 4);
    memcpy(epb + 16, &cap, 4);
    return write_block(f, BLOCK_EPB, epb, 20 + frame);
}
