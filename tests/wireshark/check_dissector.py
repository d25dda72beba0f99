#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""check_dissector.py - tools/wireshark/rdps.lua against the library's own decoder.

Every packet of the captures is decoded twice: by tshark with the Lua dissector, and by
rdps__frame_decode() (through the frame_verdict helper) on the UD payload this script cuts
out of the packet itself. They must agree frame by frame: a datagram the library accepts is
claimed with the same header and body fields and no reject reason; a claimed malformed one
carries the library's reject reason; one left unclaimed is one the library rejects for a
reason the heuristic looks at (not rdps at all); non-UD traffic is never claimed.

usage: check_dissector.py --lua rdps.lua --verdict FRAME_VERDICT --workdir DIR
                          [--capture PCAP [--expect-capture]] [--synthetic]
  --capture PCAP     compare on PCAP (repeatable)
  --expect-capture   PCAP is traffic of real rdpub/rdsub: must hold every frame type,
                     a multi-fragment message and unrelated packets
  --synthetic        also build and compare crafted valid, malformed, foreign and mutated frames
Exit 0 agree, 1 disagree, 77 tshark missing (skip).
"""
import argparse
import os
import random
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rdps_pcap  # noqa: E402

# tshark fields, in output order; the keys match frame_verdict's output where they overlap.
FIELDS = [
    ("frame", "frame.number"), ("ip_src", "ip.src"), ("srcqp", "infiniband.deth.srcqp"),
    ("type", "rdps.type"), ("flags", "rdps.flags"), ("session", "rdps.session"),
    ("topic", "rdps.topic"), ("seq", "rdps.seq"), ("msg_len", "rdps.msg_len"),
    ("frag_offset", "rdps.frag_offset"), ("timestamp_ns", "rdps.timestamp_ns"),
    ("body_len", "rdps.body_len"), ("nak_receiver_id", "rdps.nak.receiver_id"),
    ("range_count", "rdps.nak.range_count"), ("range_start", "rdps.nak.range.start"),
    ("range_cnt", "rdps.nak.range.count"), ("st_receiver_id", "rdps.status.receiver_id"),
    ("consumed_seq", "rdps.status.consumed_seq"), ("window", "rdps.status.window"),
    ("echo_delay_us", "rdps.status.echo_delay_us"), ("retained", "rdps.heartbeat.retained"),
    ("block_start", "rdps.nak.block.start"), ("block_missing", "rdps.nak.block.missing"),
    ("hb_parity_k", "rdps.heartbeat.parity_k"), ("max_rtt_us", "rdps.heartbeat.max_rtt_us"),
    ("receivers", "rdps.heartbeat.receivers"), ("par_start", "rdps.parity.block_start"),
    ("par_k", "rdps.parity.k"), ("par_index", "rdps.parity.index"),
    ("key_id", "rdps.auth.key_id"), ("encrypted", "rdps.auth.encrypted"),
    ("counter", "rdps.auth.counter"), ("ciphertext_len", "rdps.auth.ciphertext"),
    ("reject", "rdps.reject"), ("lua_error", "_ws.lua.error"), ("malformed", "_ws.malformed"),
    ("expert", "_ws.expert.message"),
    ("info", "_ws.col.Info"),
]
HEADER = ["type", "flags", "session", "topic", "seq", "msg_len", "frag_offset",
          "timestamp_ns", "body_len"]
# Rejects the heuristic uses to tell rdps from other traffic: such datagrams stay unclaimed.
UNCLAIMED_OK = {"SHORT", "BAD_VERSION", "BAD_TYPE", "BAD_FLAGS", "ZERO_SESSION"}


def tshark_decode(tshark, lua, pcap):
    cmd = [tshark, "-n", "-X", "lua_script:" + lua, "-r", pcap, "-T", "fields",
           "-E", "separator=\t", "-E", "occurrence=a", "-E", "aggregator=,"]
    for _, f in FIELDS:
        cmd += ["-e", f]
    res = subprocess.run(cmd, capture_output=True, text=True)
    errs = [ln for ln in res.stderr.splitlines() if "Running as user" not in ln and ln.strip()]
    if res.returncode != 0 or errs:
        raise SystemExit(f"tshark failed ({res.returncode}): {' | '.join(errs)}")
    rows = []
    for line in res.stdout.splitlines():
        vals = line.split("\t")
        rows.append({k: (vals[i] if i < len(vals) else "") for i, (k, _) in enumerate(FIELDS)})
    return rows


def library_decode(helper, payloads):
    text = "".join(p.hex() + "\n" for p in payloads)
    res = subprocess.run([helper], input=text, capture_output=True, text=True, check=True)
    out = []
    for line in res.stdout.splitlines():
        out.append(dict(kv.split("=", 1) for kv in line.split()))
    if len(out) != len(payloads):
        raise SystemExit("frame_verdict: wrong number of lines")
    return out


def num(s):
    return int(s, 0)


def compare(pcap, tshark, lua, helper):
    """Returns (problems, claimed rows, library verdicts, UD SENDs left unclaimed)."""
    packets = rdps_pcap.read_pcap(pcap)
    rows = tshark_decode(tshark, lua, pcap)
    if len(rows) != len(packets):
        return [f"{pcap}: tshark shows {len(rows)} packets, the file holds {len(packets)}"], [], [], 0
    payloads = [rdps_pcap.ud_payload(p, orig) for p, orig in packets]
    ud = [p for p in payloads if p is not None]
    verdicts = iter(library_decode(helper, ud))
    problems, claimed, lib, foreign = [], [], [], 0
    for i, (row, payload) in enumerate(zip(rows, payloads)):
        where = f"{os.path.basename(pcap)} packet {i + 1} ({row['info'][:90]})"
        is_claimed = row["type"] != ""
        # Our own reject experts are in the Malformed group; anything else there (a Lua error,
        # a bounds exception in an rdps frame) is a dissector bug. (Wireshark's own EoIB
        # heuristic throws on an empty UD payload: not ours.)
        if row["lua_error"] or (is_claimed and ("Exception" in row["expert"] or
                                                (row["malformed"] and not row["reject"]))):
            problems.append(f"{where}: dissector error: {row['lua_error']} {row['expert']}")
        if payload is None:
            if is_claimed:
                problems.append(f"{where}: not a whole UD SEND but claimed as rdps")
            continue
        v = next(verdicts)
        lib.append(v)
        reason = v["reason"]
        if not is_claimed:
            foreign += 1
            if reason not in UNCLAIMED_OK:
                problems.append(f"{where}: library says {reason} but the dissector did not claim it")
            continue
        claimed.append(row)
        # Keyed frames (frame_verdict prints auth=1 ...): the auth word and trailer shown.
        encrypted = v.get("encrypted") == "1"
        if v.get("auth") == "1":
            shown_enc = row["encrypted"] in ("1", "True")
            if row["key_id"] == "" or num(row["key_id"]) != int(v["key_id"]) or \
                    shown_enc != encrypted or \
                    (row["counter"] != "" and int(row["counter"]) != int(v["counter"])):
                problems.append(f"{where}: auth fields {row['key_id']}/{row['encrypted']}/"
                                f"{row['counter']} != {v['key_id']}/{v['encrypted']}/"
                                f"{v['counter']}")
        elif row["key_id"] != "":
            problems.append(f"{where}: shown as keyed, the library reads it as a plain frame")
        if reason == "OK" and encrypted:
            # Opaque body: the header and the lengths only, no body fields.
            diffs = [f"{k} {row[k]} != {v[k]}" for k in HEADER if num(row[k]) != int(v[k])]
            if row["reject"] or row["nak_receiver_id"] or row["st_receiver_id"]:
                diffs.append("body fields or a reject shown for an encrypted body")
            if diffs:
                problems.append(f"{where}: fields differ: {'; '.join(diffs)}")
        elif reason == "OK":
            if row["reject"]:
                problems.append(f"{where}: library accepts it, dissector says {row['reject']}")
                continue
            diffs = [f"{k} {row[k]} != {v[k]}" for k in HEADER if num(row[k]) != int(v[k])]
            t = int(v["type"])
            if t == 3:
                # PARITY: the ranges are blocks {start, missing}, shown as such (and only so)
                parity = int(v["flags"]) & 0x10
                starts, counts = ("block_start", "block_missing") if parity else \
                    ("range_start", "range_cnt")
                other = ("range_start", "block_start")[0 if parity else 1]
                if row[other]:
                    diffs.append(f"NAK ranges shown as both ranges and blocks ({other})")
                ranges = ",".join(f"{a}:{b}" for a, b in zip(row[starts].split(","),
                                                            row[counts].split(",")))
                if ranges != v["ranges"] or num(row["nak_receiver_id"]) != int(v["receiver_id"]) \
                        or int(row["range_count"]) != int(v["range_count"]):
                    diffs.append(f"NAK body {row['nak_receiver_id']} {ranges} != "
                                 f"{v['receiver_id']} {v['ranges']}")
            elif t == 4:
                for k in ("consumed_seq", "window", "echo_delay_us"):
                    if int(row[k]) != int(v[k]):
                        diffs.append(f"{k} {row[k]} != {v[k]}")
                if num(row["st_receiver_id"]) != int(v["receiver_id"]):
                    diffs.append("status receiver_id")
            elif t == 2:
                if int(row["retained"]) != int(v["retained"]):
                    diffs.append(f"retained {row['retained']} != {v['retained']}")
                shown = [row[k] for k in ("hb_parity_k", "max_rtt_us", "receivers")]
                want = [v.get(k, "") for k in ("parity_k", "max_rtt_us", "receivers")]
                if [int(x) if x else None for x in shown] != [int(x) if x else None for x in want]:
                    diffs.append(f"heartbeat parity body {shown} != {want}")
            elif t == 6:
                shown = [row[k] for k in ("par_start", "par_k", "par_index")]
                want = [v["seq"], v["parity_k"], v["parity_index"]]
                if not all(shown) or [int(x) for x in shown] != [int(x) for x in want]:
                    diffs.append(f"parity block/k/index {shown} != {want}")
            if diffs:
                problems.append(f"{where}: fields differ: {'; '.join(diffs)}")
        elif row["reject"] != reason:
            problems.append(f"{where}: dissector says '{row['reject']}', library says {reason}")
    return problems, claimed, lib, foreign


def hdr(t, flags, session, topic, seq, msg_len, frag_offset, ts=1763900000123456789, reserved=0,
        version=2):
    """A version 2 header (40 bytes); version=1 writes the old 32-byte one (32-bit topic)."""
    if version == 1:
        return struct.pack("<BBHIIIIIQ", 1, t, flags, session, topic & 0xFFFFFFFF, seq, msg_len,
                           frag_offset, ts)
    return struct.pack("<BBHIQIIIIQ", version, t, flags, session, topic, seq, msg_len,
                       frag_offset, reserved, ts)


def synthetic_frames(seed=10):
    """(payload, expected library verdict or None for 'whatever it says') for crafted frames."""
    S, T = 0x5EC0FFEE, 0x9E3779B97F4A7C15  # T: every byte of the 64-bit topic id nonzero
    nak = lambda ranges, rc=None, res=0, fl=0: hdr(3, fl, S, T, 0, 0, 0) + struct.pack(  # noqa: E731
        "<IHH", 0x12345678, len(ranges) if rc is None else rc, res) + b"".join(
        struct.pack("<II", a, b) for a, b in ranges)
    status = lambda echo, extra=b"": hdr(4, 0, S, T, 0, 0, 0) + struct.pack(  # noqa: E731
        "<IIII", 0x12345678, 41, 900, echo) + extra
    def hb_parity(k, rtt, rcv, res=0):
        return hdr(2, 8 | 16, S, T, 96, 64, 0) + struct.pack("<HHII", k, res, rtt, rcv)
    frames = [
        (hdr(1, 3, S, T, 1, 5, 0) + b"hello", "OK"),
        (hdr(1, 3, S, T, 2, 0, 0), "OK"),                              # empty message
        (hdr(1, 1 | 8, S, T, 3, 2500, 0) + bytes(1000), "OK"),
        (hdr(1, 8, S, T, 4, 2500, 1000) + bytes(1000), "OK"),
        (hdr(1, 2 | 4 | 8, S, T, 5, 2500, 2000) + bytes(500), "OK"),   # repaired last fragment
        (hdr(2, 0, S, T, 6, 0, 0), "OK"),
        (hdr(2, 8, S, T, 6, 100, 0), "OK"),
        (hdr(2, 8, S, T, 6, 0x80000000, 0), "OK"),
        (nak([(10, 2)]), "OK"),
        (nak([(10, 2), (20, 1), (0xFFFFFFFF, 3)]), "OK"),
        (nak([(i * 3, 1) for i in range(64)]), "OK"),
        (nak([(10, 2)], fl=4), "OK"),                                  # repairs overtaken
        (status(0xFFFFFFFF), "OK"),
        (status(250), "OK"),
        (hdr(5, 0, S, 0, 77, 0, 0) + bytes(range(60)), "OK"),
        (hdr(5, 0, S, 0, 78, 0, 0), "OK"),
        (hdr(5, 0, S, T, 79, 0, 0) + bytes(4096), "OK"),
        (hdr(1, 3, S, 1 << 63, 7, 5, 0) + b"hello", "OK"),             # only the top bit set
        # parity repairs: PARITY frames (block start, k, index; the symbol), the parity NAK
        # (blocks and their missing counts) and the parity heartbeat (k, largest RTT, receivers)
        (hdr(6, 12, S, T, 64, 16, 0) + bytes(range(66)), "OK"),
        (hdr(6, 12, S, T, 0xFFFFFF80, 128, 127) + bytes(1402), "OK"),
        (nak([(64, 3)], fl=16), "OK"),
        (nak([(64, 3), (128, 128), (0xFFFFFFFE, 1)], fl=16), "OK"),
        (nak([(64, 1)], fl=16 | 4), "OK"),
        (hb_parity(16, 250, 3), "OK"),
        (hb_parity(128, 0, 0), "OK"),
        (hb_parity(2, 0xFFFFFFFF, 0xFFFFFFFF), "OK"),
        # malformed, still recognisably rdps
        (hdr(1, 3, S, T, 1, 5, 0)[:20], "SHORT"),
        (hdr(1, 1, S, T, 1, 5, 0) + b"hello", "BEGIN_END_MISMATCH"),
        (hdr(1, 3, S, T, 1, 16 * 1024 * 1024 + 1, 0) + b"x", "MSG_TOO_LARGE"),
        (hdr(1, 3, S, T, 1, 4, 0) + b"hello", "FRAG_EXCEEDS_MSG"),
        (hdr(1, 0, S, T, 1, 10, 4), "EMPTY_FRAGMENT"),
        (hdr(1, 3, S, 0, 1, 5, 0) + b"hello", "ZERO_TOPIC"),
        (hdr(1, 3, S, T, 1, 5, 0, reserved=1) + b"hello", "NONZERO_FIELD"),
        (hdr(1, 3, S, T, 1, 5, 0, reserved=0x80000000) + b"hello", "NONZERO_FIELD"),
        (hdr(2, 8, S, T, 6, 1, 0, reserved=7), "NONZERO_FIELD"),
        (hdr(2, 1, S, T, 6, 0, 0), "BAD_FLAGS"),
        (hdr(2, 0, S, T, 6, 5, 0), "NONZERO_FIELD"),
        (hdr(2, 8, S, T, 6, 0x80000001, 0), "BAD_RETAINED"),
        (hdr(2, 8, S, 0, 6, 1, 0), "ZERO_TOPIC"),
        (hdr(2, 8, S, T, 6, 1, 0) + b"\0", "BAD_BODY_LEN"),
        (hdr(3, 0, S, T, 0, 0, 8) + struct.pack("<IHHII", 1, 1, 0, 1, 1), "NONZERO_FIELD"),
        (hdr(3, 2, S, T, 0, 0, 0) + struct.pack("<IHHII", 1, 1, 0, 1, 1), "BAD_FLAGS"),
        (hdr(3, 0, S, T, 9, 0, 0) + struct.pack("<IHHII", 1, 1, 0, 1, 1), "NONZERO_FIELD"),
        (hdr(3, 0, S, T, 0, 0, 0) + b"\1\2\3", "BAD_BODY_LEN"),
        (nak([(10, 2)], fl=4 | 8), "BAD_FLAGS"),
        (nak([(10, 2)], res=1), "NONZERO_FIELD"),
        (nak([(10, 2)], rc=2), "BAD_RANGE_COUNT"),
        (nak([], rc=0), "BAD_RANGE_COUNT"),
        (nak([(i, 1) for i in range(65)]), "BAD_RANGE_COUNT"),
        (nak([(10, 0)]), "BAD_RANGE"),
        (nak([(10, 2), (10, 0x80000000)]), "BAD_RANGE"),
        (status(0, b"\0\0\0\0"), "BAD_BODY_LEN"),
        (status(0)[:52], "BAD_BODY_LEN"),
        (hdr(4, 0, S, T, 3, 0, 0) + bytes(16), "NONZERO_FIELD"),
        (hdr(4, 0, S, T, 0, 7, 0) + bytes(16), "NONZERO_FIELD"),
        (hdr(5, 8, S, T, 1, 0, 0), "BAD_FLAGS"),
        (hdr(5, 0, S, T, 1, 0, 0) + bytes(4097), "BODY_TOO_LARGE"),
        (hdr(6, 8, S, T, 64, 16, 0) + bytes(66), "BAD_FLAGS"),
        (hdr(6, 12 | 16, S, T, 64, 16, 0) + bytes(66), "BAD_FLAGS"),
        (hdr(6, 12, S, 0, 64, 16, 0) + bytes(66), "ZERO_TOPIC"),
        (hdr(6, 12, S, T, 64, 12, 0) + bytes(66), "BAD_BLOCK"),           # k not a power of 2
        (hdr(6, 12, S, T, 64, 256, 0) + bytes(66), "BAD_BLOCK"),          # k above 128
        (hdr(6, 12, S, T, 64, 1, 0) + bytes(66), "BAD_BLOCK"),
        (hdr(6, 12, S, T, 72, 16, 0) + bytes(66), "BAD_BLOCK"),           # seq not the start
        (hdr(6, 12, S, T, 64, 16, 128) + bytes(66), "BAD_PARITY_INDEX"),
        (hdr(6, 12, S, T, 64, 16, 0) + bytes(65), "BAD_BODY_LEN"),
        # (a symbol above the largest, 2 + 65535 bytes, does not fit a RoCEv2 UDP datagram)
        (hdr(6, 12, S, T, 64, 16, 0, reserved=0x80000000) + bytes(66), "NONZERO_FIELD"),
        (hdr(1, 3 | 16, S, T, 1, 5, 0) + b"hello", "BAD_FLAGS"),          # DATA flagged PARITY
        (nak([(64, 129)], fl=16), "BAD_RANGE"),
        (nak([(65, 1)], fl=16), "BAD_RANGE"),
        (nak([(64, 0)], fl=16), "BAD_RANGE"),
        (nak([(64, 1)], fl=16 | 8), "BAD_FLAGS"),
        (hdr(2, 16, S, T, 6, 0, 0) + struct.pack("<HHII", 16, 0, 1, 1), "BAD_FLAGS"),
        (hdr(2, 8 | 16, S, T, 6, 100, 0), "BAD_BODY_LEN"),
        (hb_parity(16, 250, 3) + b"\0", "BAD_BODY_LEN"),
        (hb_parity(16, 250, 3, res=1), "NONZERO_FIELD"),
        (hb_parity(24, 250, 3), "BAD_BLOCK"),
        (hb_parity(0, 250, 3), "BAD_BLOCK"),
        (hb_parity(256, 250, 3), "BAD_BLOCK"),
        (hdr(2, 8 | 16, S, T, 6, 0x80000001, 0) + struct.pack("<HHII", 16, 0, 1, 1),
         "BAD_RETAINED"),
        (hdr(2, 8 | 16, S, T, 6, 1, 4) + struct.pack("<HHII", 16, 0, 1, 1), "NONZERO_FIELD"),
        # not rdps at all (the heuristic must leave them alone)
        (bytes([3]) + hdr(1, 3, S, T, 1, 5, 0)[1:] + b"hello", "BAD_VERSION"),
        (hdr(1, 3, S, T, 1, 5, 0, version=1) + b"hello", "BAD_VERSION"),    # version 1 DATA
        (hdr(2, 8, S, T, 6, 100, 0, version=1), "BAD_VERSION"),           # a 32-byte heartbeat
        (bytes([2, 9]) + hdr(1, 3, S, T, 1, 5, 0)[2:] + b"hello", "BAD_TYPE"),
        (hdr(1, 0x103, S, T, 1, 5, 0) + b"hello", "BAD_FLAGS"),
        (hdr(1, 3, 0, T, 1, 5, 0) + b"hello", "ZERO_SESSION"),
        (b"\2\1\0", "SHORT"),
        (b"\1\1\0", "BAD_VERSION"),
        (b"\1\7\2\1" + bytes(252), "BAD_VERSION"),                       # a CM MAD's start
        (b"\2\7\2\1" + bytes(252), "BAD_TYPE"),
        (b"", "SHORT"),
    ]
    rnd = random.Random(seed)
    # Keyed frames (authenticated domains): every valid frame with an auth word and a trailer
    # (random prefix, counter and tag: the dissector cannot verify a tag), authenticated only
    # and encrypted (body replaced by random bytes of the same length).
    def keyed(f, key_id, encrypt):
        word = key_id | (0x1000000 if encrypt else 0)
        body = bytes(rnd.randrange(256) for _ in range(len(f) - 40)) if encrypt else f[40:]
        trailer = bytes(rnd.randrange(256) for _ in range(16)) + \
            struct.pack("<QI", rnd.randrange(1 << 64), rnd.randrange(1 << 32)) + \
            bytes(rnd.randrange(256) for _ in range(16))
        return f[:28] + struct.pack("<I", word) + f[32:40] + body + trailer
    plain_ok = [f for f, want in frames if want == "OK"]
    for i, f in enumerate(plain_ok):
        frames.append((keyed(f, 1 + i, False), "OK"))
        frames.append((keyed(f, 0xFFFFFF - i, True), "OK"))
    frames += [
        (keyed(hdr(1, 1, S, T, 1, 5, 0) + b"hello", 3, False), "BEGIN_END_MISMATCH"),
        (keyed(nak([(10, 2)], rc=2), 3, False), "BAD_RANGE_COUNT"),
        (keyed(hdr(3, 0, S, T, 0, 0, 0) + bytes(12), 3, True), "BAD_RANGE_COUNT"),
        (keyed(hdr(4, 0, S, T, 0, 0, 0) + bytes(12), 3, True), "BAD_BODY_LEN"),
        (keyed(hb_parity(24, 250, 3), 3, False), "BAD_BLOCK"),
        (keyed(nak([(65, 1)], fl=16), 3, False), "BAD_RANGE"),
        (keyed(hdr(6, 12, S, T, 64, 16, 0) + bytes(65), 3, True), "BAD_BODY_LEN"),
        (keyed(hdr(2, 8 | 16, S, T, 6, 1, 0) + bytes(11), 3, True), "BAD_BODY_LEN"),
        (keyed(hdr(2, 8, S, T, 6, 1, 0), 0x1000000 >> 1, False), "OK"),
        # the reserved bits of the auth word, or no room for a trailer: a plain frame's reject
        (hdr(1, 3, S, T, 1, 45, 0, reserved=0x2000001) + bytes(45), "NONZERO_FIELD"),
        (hdr(1, 3, S, T, 1, 43, 0, reserved=1) + bytes(43), "NONZERO_FIELD"),
    ]
    valid = [f for f, want in frames if want == "OK"]
    for _ in range(400):                                                # mutations
        f = bytearray(rnd.choice(valid))
        for _ in range(rnd.randint(1, 3)):
            op = rnd.random()
            if op < 0.6 and f:
                f[rnd.randrange(min(len(f), 56))] = rnd.choice([0, 1, 2, 3, 5, 8, 0x80, 0xFF,
                                                                 rnd.randrange(256)])
            elif op < 0.8:
                del f[rnd.randrange(len(f) + 1):]
            else:
                f += bytes(rnd.randrange(1, 9))
        frames.append((bytes(f), None))
    for _ in range(100):                                                # random foreign bytes
        frames.append((bytes(rnd.randrange(256) for _ in range(rnd.randrange(64))), None))
    return frames


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lua", required=True)
    ap.add_argument("--verdict", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--capture", action="append", default=[])
    ap.add_argument("--expect-capture", action="store_true")
    ap.add_argument("--synthetic", action="store_true")
    ap.add_argument("--tshark", default=shutil.which("tshark"))
    a = ap.parse_args()
    if not a.tshark:
        print("tshark not installed (Debian: tshark); skipping")
        return 77
    os.makedirs(a.workdir, exist_ok=True)
    problems = []

    for cap in a.capture:
        p, claimed, lib, foreign = compare(cap, a.tshark, a.lua, a.verdict)
        problems += p
        types = {int(r["type"]) for r in claimed}
        print(f"{cap}: {len(claimed)} rdps frames of {len(rdps_pcap.read_pcap(cap))} packets, "
              f"types {sorted(types)}")
        if a.expect_capture:
            # The comparison above must not be vacuous: real traffic of every kind is in it.
            if types != {1, 2, 3, 4, 5}:
                problems.append(f"{cap}: frame types {sorted(types)}, want all five")
            if not any(num(r["frag_offset"]) > 0 for r in claimed):
                problems.append(f"{cap}: no DATA fragment past offset 0")
            if not any(num(r["flags"]) & 4 for r in claimed):
                problems.append(f"{cap}: no RETRANSMIT DATA")
            if foreign == 0:
                problems.append(f"{cap}: no foreign UD SEND (mckey) to leave unclaimed")
            if any(r["reject"] for r in claimed):
                problems.append(f"{cap}: rdps frames the library rejects (expected none)")

    if a.synthetic:
        frames = synthetic_frames()
        crafted = [(f, want) for f, want in frames if want is not None]
        for (f, want), v in zip(crafted, library_decode(a.verdict, [f for f, _ in crafted])):
            got = v["reason"]
            if got != want:
                problems.append(f"crafted frame {f[:8].hex()}..: library says {got}, "
                                f"test expects {want} (fix the test)")
        pkts = [rdps_pcap.roce_packet(f, psn=i) for i, (f, _) in enumerate(frames)]
        # A valid rdps datagram in an RC SEND (no DETH) is not rdps traffic.
        pkts.append(rdps_pcap.roce_packet(frames[0][0], opcode=rdps_pcap.OP_RC_SEND_ONLY))
        path = os.path.join(a.workdir, "synthetic.pcap")
        rdps_pcap.write_pcap(path, pkts)
        p, claimed, lib, _ = compare(path, a.tshark, a.lua, a.verdict)
        problems += p
        reasons = {}
        for v in lib:
            reasons[v["reason"]] = reasons.get(v["reason"], 0) + 1
        print(f"synthetic: {len(pkts)} packets, {len(claimed)} claimed; library verdicts {reasons}")
        if pkts and rdps_pcap.ud_payload(pkts[-1]) is not None:
            problems.append("RC packet parsed as UD")

    for p in problems[:40]:
        print("FAIL:", p)
    if len(problems) > 40:
        print(f"... {len(problems) - 40} more")
    print("dissector agrees with the library" if not problems else f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
