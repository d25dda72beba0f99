# SPDX-License-Identifier: BSD-2-Clause
"""rdps_pcap.py - classic pcap files of RoCEv2 packets: write UD SENDs, read back UD payloads.

The dissector tests use it to build captures of chosen rdps datagrams and to pull each
packet's UD payload (the rdps datagram) out of a capture independently of Wireshark.
"""
import struct

LINKTYPE_ETHERNET = 1
ROCEV2_PORT = 4791
OP_UD_SEND_ONLY = 0x64
OP_UD_SEND_ONLY_IMM = 0x65
OP_RC_SEND_ONLY = 0x04


def write_pcap(path, packets):
    """packets: list of Ethernet frames (bytes), written 1 ms apart."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, LINKTYPE_ETHERNET))
        for i, pkt in enumerate(packets):
            f.write(struct.pack("<IIII", 1700000000, i * 1000, len(pkt), len(pkt)))
            f.write(pkt)


def read_pcap(path):
    """Returns [(captured bytes, original length)]; classic pcap, Ethernet, either byte order."""
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    if magic in (0xA1B2C3D4, 0xA1B23C4D):
        order = "<"
    elif magic in (0xD4C3B2A1, 0x4D3CB2A1):
        order = ">"
    else:
        raise ValueError(f"{path}: not a classic pcap file")
    linktype = struct.unpack(order + "I", data[20:24])[0]
    if linktype != LINKTYPE_ETHERNET:
        raise ValueError(f"{path}: link type {linktype}, want Ethernet")
    out, off = [], 24
    while off + 16 <= len(data):
        _, _, caplen, origlen = struct.unpack(order + "IIII", data[off:off + 16])
        out.append((data[off + 16:off + 16 + caplen], origlen))
        off += 16 + caplen
    return out


def _checksum(hdr):
    s = sum(struct.unpack("!%dH" % (len(hdr) // 2), hdr))
    s = (s & 0xFFFF) + (s >> 16)
    s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def roce_packet(payload, opcode=OP_UD_SEND_ONLY, dst_qp=0x11, src_qp=0x22, qkey=0x80010000,
                psn=0, src_ip="169.254.77.1", dst_ip="169.254.77.2"):
    """An Ethernet/IPv4/UDP 4791 frame carrying BTH (+ DETH for UD) + payload + pad + ICRC."""
    pad = -len(payload) % 4
    bth = struct.pack("!BBHII", opcode, pad << 4, 0xFFFF, dst_qp & 0xFFFFFF, psn & 0xFFFFFF)
    deth = struct.pack("!II", qkey, src_qp & 0xFFFFFF) if opcode & 0xE0 == 0x60 else b""
    ib = bth + deth + payload + b"\0" * pad + b"\0\0\0\0"  # the ICRC is not checked
    udp = struct.pack("!HHHH", 49152, ROCEV2_PORT, 8 + len(ib), 0) + ib
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x4000, 64, 17, 0,
                     bytes(int(x) for x in src_ip.split(".")),
                     bytes(int(x) for x in dst_ip.split(".")))
    ip = ip[:10] + struct.pack("!H", _checksum(ip)) + ip[12:]
    eth = bytes.fromhex("020000000002" "020000000001" "0800")
    return eth + ip + udp


def ud_payload(pkt, origlen=None):
    """The UD SEND payload (bytes) of a RoCEv2 packet, or None for anything else.

    Returns None too when the capture cut the packet short (origlen > len(pkt))."""
    if origlen is not None and origlen > len(pkt):
        return None
    if len(pkt) < 14:
        return None
    ethertype, off = struct.unpack("!H", pkt[12:14])[0], 14
    if ethertype == 0x8100:
        ethertype, off = struct.unpack("!H", pkt[16:18])[0], 18
    if ethertype == 0x0800:
        ihl = (pkt[off] & 0xF) * 4
        if pkt[off + 9] != 17:
            return None
        udp = off + ihl
    elif ethertype == 0x86DD:
        if pkt[off + 6] != 17:
            return None
        udp = off + 40
    else:
        return None
    dport, ulen = struct.unpack("!H", pkt[udp + 2:udp + 4])[0], struct.unpack("!H", pkt[udp + 4:udp + 6])[0]
    if dport != ROCEV2_PORT:
        return None
    ib = pkt[udp + 8:udp + ulen]
    opcode, pad = ib[0], (ib[1] >> 4) & 3
    if opcode == OP_UD_SEND_ONLY:
        body = ib[20:]
    elif opcode == OP_UD_SEND_ONLY_IMM:
        body = ib[24:]
    else:
        return None
    if len(body) < 4 + pad:
        return None
    return body[:len(body) - 4 - pad]
