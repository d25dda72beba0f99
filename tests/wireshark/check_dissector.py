#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""check_dissector.py - tools/wireshark/rdps.lua against the library's own decoder.

Every packet of the captures is decoded twice: by tshark with the Lua dissector, and by
rdps__frame_decode() (through the frame_verdict helper) on the UD payload this script cuts
out of the packet itself. They must agree frame by frame: a datagram the library accepts is
claimed with the same header and body fields (a DATA frame's whole messages each with its
ordinal, length and bytes) and no reject reason; a claimed malformed one carries the library's
reject reason; one left unclaimed is one the library rejects for a reason the heuristic looks
at (not rdps at all); non-UD traffic is never claimed. A frame of wire version 2 (rdps 1.2) is
BAD_VERSION for the library: the dissector claims it as such and shows its fields as version 2
laid them out (checked here against the bytes) with that version's verdict (rdps.v2.reject).

usage: check_dissector.py --lua rdps.lua --verdict FRAME_VERDICT --workdir DIR
                          [--capture PCAP [--expect-capture]] [--capture-v2 PCAP] [--synthetic]
  --capture PCAP     compare on PCAP (repeatable)
  --expect-capture   PCAP is traffic of real rdpub/rdsub: must hold every frame type,
                     a multi-fragment message, batched datagrams and unrelated packets
  --capture-v2 PCAP  a capture of rdps 1.2 (wire version 2) traffic: every rdps frame must be
                     claimed as version 2, BAD_VERSION, valid under version 2's rules
  --synthetic        also build and compare crafted valid, malformed, batched, version 2,
                     keyed, foreign and mutated frames (crafted_frames.py)
Exit 0 agree, 1 disagree, 77 tshark missing (skip).
"""
import argparse
import os
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import crafted_frames  # noqa: E402
import rdps_pcap  # noqa: E402

# tshark fields, in output order; the keys match frame_verdict's output where they overlap.
FIELDS = [
    ("frame", "frame.number"), ("ip_src", "ip.src"), ("srcqp", "infiniband.deth.srcqp"),
    ("version", "rdps.version"),
    ("type", "rdps.type"), ("flags", "rdps.flags"), ("session", "rdps.session"),
    ("topic", "rdps.topic"), ("seq", "rdps.seq"), ("msg_len", "rdps.msg_len"),
    ("frag_offset", "rdps.frag_offset"), ("timestamp_ns", "rdps.timestamp_ns"),
    ("ordinal", "rdps.ordinal"), ("count", "rdps.count"),
    ("body_len", "rdps.body_len"), ("msg_ordinal", "rdps.msg.ordinal"),
    ("msg_len_each", "rdps.msg.len"), ("msg_data", "rdps.msg.data"),
    ("frag_ordinal", "rdps.data.msg_ordinal"), ("next_ordinal", "rdps.data.next_ordinal"),
    ("hb_next_ordinal", "rdps.heartbeat.next_ordinal"),
    ("hb_trail_ordinal", "rdps.heartbeat.trail_ordinal"), ("nak_receiver_id", "rdps.nak.receiver_id"),
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
    ("reject", "rdps.reject"), ("v2_reject", "rdps.v2.reject"), ("lua_error", "_ws.lua.error"),
    ("malformed", "_ws.malformed"), ("expert", "_ws.expert.message"),
    ("info", "_ws.col.Info"),
]
HEADER = ["type", "flags", "session", "topic", "seq", "msg_len", "frag_offset",
          "timestamp_ns", "ordinal", "count", "body_len"]
# Version 2 (rdps 1.2): its 40-byte header, read here from the bytes.
V2_HEADER = ["type", "flags", "session", "topic", "seq", "msg_len", "frag_offset", "reserved",
             "timestamp_ns"]
# Rejects the heuristic uses to tell rdps from other traffic: such datagrams stay unclaimed.
UNCLAIMED_OK = {"SHORT", "BAD_VERSION", "BAD_TYPE", "BAD_FLAGS", "ZERO_SESSION"}


def tshark_decode(tshark, lua, pcap, max_msg_len=None):
    cmd = [tshark, "-n", "-X", "lua_script:" + lua, "-r", pcap, "-T", "fields",
           "-E", "separator=\t", "-E", "occurrence=a", "-E", "aggregator=,"]
    for _, f in FIELDS:
        cmd += ["-e", f]
    if max_msg_len is not None:
        cmd += ["-o", f"rdps.max_message_size:{max_msg_len}"]
    res = subprocess.run(cmd, capture_output=True, text=True)
    errs = [ln for ln in res.stderr.splitlines() if "Running as user" not in ln and ln.strip()]
    if res.returncode != 0 or errs:
        raise SystemExit(f"tshark failed ({res.returncode}): {' | '.join(errs)}")
    rows = []
    for line in res.stdout.splitlines():
        vals = line.split("\t")
        rows.append({k: (vals[i] if i < len(vals) else "") for i, (k, _) in enumerate(FIELDS)})
    return rows


def library_decode(helper, payloads, max_msg_len=None):
    text = "".join(p.hex() + "\n" for p in payloads)
    args = [helper] + ([str(max_msg_len)] if max_msg_len is not None else [])
    res = subprocess.run(args, input=text, capture_output=True, text=True, check=True)
    out = []
    for line in res.stdout.splitlines():
        out.append(dict(kv.split("=", 1) for kv in line.split()))
    if len(out) != len(payloads):
        raise SystemExit("frame_verdict: wrong number of lines")
    return out


def num(s):
    return int(s, 0)


def shown_messages(row):
    """A claimed DATA frame's rdps.msg subtrees as frame_verdict prints them (ord:len:hex)."""
    if not row["msg_ordinal"]:
        return ""
    data = [d if d != "<MISSING>" else "" for d in row["msg_data"].split(",")]
    return ",".join(f"{o}:{n}:{d}" for o, n, d in zip(row["msg_ordinal"].split(","),
                                                      row["msg_len_each"].split(","), data))


def data_diffs(row, v):
    """A valid DATA frame: its whole messages (ordinal, length, bytes) or its fragment's
    message ordinal, and the ordinal after it."""
    ordinal, count, flags = int(v["ordinal"]), int(v["count"]), int(v["flags"])
    after = (ordinal + (count if count else flags >> 1 & 1)) & 0xFFFFFFFF
    diffs = []
    if row["next_ordinal"] == "" or int(row["next_ordinal"]) != after:
        diffs.append(f"next ordinal {row['next_ordinal']} != {after}")
    if count:
        if shown_messages(row) != v["msgs"] or row["frag_ordinal"]:
            diffs.append(f"messages {shown_messages(row)[:120]} != {v['msgs'][:120]}")
    elif row["msg_ordinal"] or row["frag_ordinal"] == "" or int(row["frag_ordinal"]) != ordinal:
        diffs.append(f"fragment's message ordinal {row['frag_ordinal']} != {ordinal} "
                     f"(messages shown: {row['msg_ordinal']})")
    return diffs


def body_diffs(row, v):
    """The body fields of a valid frame against the library's."""
    t = int(v["type"])
    diffs = []
    if t == 1:
        diffs += data_diffs(row, v)
    elif t == 3:
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
        shown = [row[k] for k in ("hb_next_ordinal", "hb_trail_ordinal")]
        want = [v["ordinal"], v["trail_ordinal"]]
        if not all(shown) or [int(x) for x in shown] != [int(x) for x in want]:
            diffs.append(f"heartbeat next/trail ordinals {shown} != {want}")
        shown = [row[k] for k in ("hb_parity_k", "max_rtt_us", "receivers")]
        want = [v.get(k, "") for k in ("parity_k", "max_rtt_us", "receivers")]
        if [int(x) if x else None for x in shown] != [int(x) if x else None for x in want]:
            diffs.append(f"heartbeat parity body {shown} != {want}")
    elif t == 6:
        shown = [row[k] for k in ("par_start", "par_k", "par_index")]
        want = [v["seq"], v["parity_k"], v["parity_index"]]
        if not all(shown) or [int(x) for x in shown] != [int(x) for x in want]:
            diffs.append(f"parity block/k/index {shown} != {want}")
    return diffs


def v2_diffs(row, payload, want):
    """A frame of wire version 2 (rdps 1.2), which the library rejects as BAD_VERSION: claimed
    as such, its header read from the bytes by the 40-byte layout, its verdict under version 2
    `want` (None: not known), and on a valid one the fields of its body."""
    diffs = []
    if row["reject"] != "BAD_VERSION":
        diffs.append(f"reject '{row['reject']}', want BAD_VERSION")
    if want is not None and (row["v2_reject"] or "OK") != want:
        diffs.append(f"version 2 verdict '{row['v2_reject']}', want {want}")
    if len(payload) < 40:
        return diffs
    vals = dict(zip(V2_HEADER, struct.unpack("<xBHIQIIIIQ", payload[:40])))
    vals["body_len"] = len(payload) - 40
    if vals["reserved"] and not vals["reserved"] & 0xFE000000 and len(payload) >= 80:
        vals["body_len"] -= 40  # keyed: the trailer is not the body
    diffs += [f"{k} {row[k]} != {vals[k]}" for k in V2_HEADER + ["body_len"]
              if k != "reserved" and (row[k] == "" or num(row[k]) != vals[k])]
    if row["ordinal"] or row["count"] or row["msg_ordinal"] or row["hb_next_ordinal"]:
        diffs.append("version 3 fields shown in a version 2 frame")
    body = payload[40:40 + vals["body_len"]]
    if want == "OK" and not vals["reserved"] & 0x1000000:
        if vals["type"] == 3:
            n = struct.unpack("<H", body[4:6])[0]
            ranges = ",".join(f"{a}:{b}" for a, b in
                              struct.iter_unpack("<II", body[8:8 + 8 * n]))
            key = ("block_start", "block_missing") if vals["flags"] & 0x10 else \
                ("range_start", "range_cnt")
            shown = ",".join(f"{a}:{b}" for a, b in zip(row[key[0]].split(","),
                                                        row[key[1]].split(",")))
            if shown != ranges or num(row["nak_receiver_id"]) != struct.unpack("<I", body[:4])[0]:
                diffs.append(f"version 2 NAK body {shown} != {ranges}")
        elif vals["type"] == 4:
            want_st = list(struct.unpack("<IIII", body))
            shown = [num(row[k]) if row[k] else None for k in
                     ("st_receiver_id", "consumed_seq", "window", "echo_delay_us")]
            if shown != want_st:
                diffs.append(f"version 2 STATUS body {shown} != {want_st}")
        elif vals["type"] == 2 and vals["flags"] & 0x10:
            k, _, rtt, rcv = struct.unpack("<HHII", body)
            shown = [int(row[f]) if row[f] else None for f in
                     ("hb_parity_k", "max_rtt_us", "receivers")]
            if shown != [k, rtt, rcv]:
                diffs.append(f"version 2 parity heartbeat {shown} != {[k, rtt, rcv]}")
    return diffs


def compare(pcap, tshark, lua, helper, v2_expected=None, max_msg_len=None):
    """Returns (problems, claimed rows, library verdicts, UD SENDs left unclaimed).
    v2_expected(payload): the version 2 verdict a version 2 frame must show (None: unknown);
    max_msg_len: the receivers' message size limit (the preference and the decoder's)."""
    packets = rdps_pcap.read_pcap(pcap)
    rows = tshark_decode(tshark, lua, pcap, max_msg_len)
    if len(rows) != len(packets):
        return [f"{pcap}: tshark shows {len(rows)} packets, the file holds {len(packets)}"], [], [], 0
    payloads = [rdps_pcap.ud_payload(p, orig) for p, orig in packets]
    ud = [p for p in payloads if p is not None]
    verdicts = iter(library_decode(helper, ud, max_msg_len))
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
        if row["version"] == "2":
            diffs = v2_diffs(row, payload, v2_expected(payload) if v2_expected else None)
            if reason != "BAD_VERSION":
                diffs.append(f"claimed as version 2, library says {reason}")
            if diffs:
                problems.append(f"{where}: version 2 frame: {'; '.join(diffs)}")
        elif row["v2_reject"]:
            problems.append(f"{where}: a version 2 verdict on a version {row['version']} frame")
        elif reason == "OK" and encrypted:
            # Opaque body: the header and the lengths only, no body fields.
            diffs = [f"{k} {row[k]} != {v[k]}" for k in HEADER if num(row[k]) != int(v[k])]
            if row["reject"] or row["nak_receiver_id"] or row["st_receiver_id"] or \
                    row["msg_ordinal"]:
                diffs.append("body fields or a reject shown for an encrypted body")
            if diffs:
                problems.append(f"{where}: fields differ: {'; '.join(diffs)}")
        elif reason == "OK":
            if row["reject"]:
                problems.append(f"{where}: library accepts it, dissector says {row['reject']}")
                continue
            diffs = [f"{k} {row[k]} != {v[k]}" for k in HEADER if num(row[k]) != int(v[k])]
            diffs += body_diffs(row, v)
            if diffs:
                problems.append(f"{where}: fields differ: {'; '.join(diffs)}")
        elif row["reject"] != reason:
            problems.append(f"{where}: dissector says '{row['reject']}', library says {reason}")
    return problems, claimed, lib, foreign


def check_capture(cap, a, problems):
    """--capture: agreement, and with --expect-capture that the traffic holds what it must."""
    p, claimed, _, foreign = compare(cap, a.tshark, a.lua, a.verdict)
    problems += p
    types = {int(r["type"]) for r in claimed}
    print(f"{cap}: {len(claimed)} rdps frames of {len(rdps_pcap.read_pcap(cap))} packets, "
          f"types {sorted(types)}")
    if not a.expect_capture:
        return
    # The comparison above must not be vacuous: real traffic of every kind is in it.
    data = [r for r in claimed if int(r["type"]) == 1]
    if types != {1, 2, 3, 4, 5}:
        problems.append(f"{cap}: frame types {sorted(types)}, want all five")
    if not any(num(r["frag_offset"]) > 0 for r in data):
        problems.append(f"{cap}: no DATA fragment past offset 0")
    if not any(num(r["flags"]) & 4 for r in data):
        problems.append(f"{cap}: no RETRANSMIT DATA")
    if not any(int(r["count"]) >= 2 for r in data):
        problems.append(f"{cap}: no batched DATA (count >= 2)")
    if not any(int(r["count"]) == 0 and r["frag_ordinal"] for r in data):
        problems.append(f"{cap}: no fragment showing its message's ordinal")
    if foreign == 0:
        problems.append(f"{cap}: no foreign UD SEND (mckey) to leave unclaimed")
    if any(r["reject"] for r in claimed):
        problems.append(f"{cap}: rdps frames the library rejects (expected none)")


def check_capture_v2(cap, a, problems):
    """--capture-v2: rdps 1.2 traffic still reads as it did, each frame BAD_VERSION."""
    p, claimed, _, _ = compare(cap, a.tshark, a.lua, a.verdict, lambda payload: "OK")
    problems += p
    types = {int(r["type"]) for r in claimed}
    print(f"{cap}: {len(claimed)} version 2 rdps frames, types {sorted(types)}")
    if types != {1, 2, 3, 4, 5} or any(r["version"] != "2" for r in claimed):
        problems.append(f"{cap}: want version 2 frames of all five types")


def check_synthetic(a, problems):
    """--synthetic: crafted frames, their verdicts first checked against the library."""
    frames = crafted_frames.synthetic_frames()
    crafted = [(f, want) for f, want, _ in frames if want is not None]
    for (f, want), v in zip(crafted, library_decode(a.verdict, [f for f, _ in crafted])):
        got = v["reason"]
        if got != want:
            problems.append(f"crafted frame {f[:8].hex()}..: library says {got}, "
                            f"test expects {want} (fix the test)")
    old = {f: v2 for f, _, v2 in frames if v2 is not None}
    pkts = [rdps_pcap.roce_packet(f, psn=i) for i, (f, _, _) in enumerate(frames)]
    # A valid rdps datagram in an RC SEND (no DETH) is not rdps traffic.
    pkts.append(rdps_pcap.roce_packet(frames[0][0], opcode=rdps_pcap.OP_RC_SEND_ONLY))
    path = os.path.join(a.workdir, "synthetic.pcap")
    rdps_pcap.write_pcap(path, pkts)
    p, claimed, lib, _ = compare(path, a.tshark, a.lua, a.verdict, old.get)
    problems += p
    reasons = {}
    for v in lib:
        reasons[v["reason"]] = reasons.get(v["reason"], 0) + 1
    batches = sum(1 for r in claimed if r["count"] and int(r["count"]) >= 2 and not r["reject"])
    versions = {}
    for r in claimed:
        versions[r["version"]] = versions.get(r["version"], 0) + 1
    print(f"synthetic: {len(pkts)} packets, {len(claimed)} claimed (by version {versions}), "
          f"{batches} valid batches; library verdicts {reasons}")
    if pkts and rdps_pcap.ud_payload(pkts[-1]) is not None:
        problems.append("RC packet parsed as UD")
    # The preference rdps.max_message_size against receivers with that limit: a batch may be
    # longer than it, none of its messages.
    limit, frames = crafted_frames.small_limit_frames()
    for (f, want), v in zip(frames, library_decode(a.verdict, [f for f, _ in frames], limit)):
        if v["reason"] != want:
            problems.append(f"crafted frame {f[:8].hex()}.. (limit {limit}): library says "
                            f"{v['reason']}, test expects {want} (fix the test)")
    path = os.path.join(a.workdir, "small_limit.pcap")
    rdps_pcap.write_pcap(path, [rdps_pcap.roce_packet(f, psn=i) for i, (f, _) in enumerate(frames)])
    problems += compare(path, a.tshark, a.lua, a.verdict, max_msg_len=limit)[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lua", required=True)
    ap.add_argument("--verdict", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--capture", action="append", default=[])
    ap.add_argument("--expect-capture", action="store_true")
    ap.add_argument("--capture-v2", action="append", default=[])
    ap.add_argument("--synthetic", action="store_true")
    ap.add_argument("--tshark", default=shutil.which("tshark"))
    a = ap.parse_args()
    if not a.tshark:
        print("tshark not installed (Debian: tshark); skipping")
        return 77
    os.makedirs(a.workdir, exist_ok=True)
    problems = []
    for cap in a.capture:
        check_capture(cap, a, problems)
    for cap in a.capture_v2:
        check_capture_v2(cap, a, problems)
    if a.synthetic:
        check_synthetic(a, problems)
    for p in problems[:40]:
        print("FAIL:", p)
    if len(problems) > 40:
        print(f"... {len(problems) - 40} more")
    print("dissector agrees with the library" if not problems else f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
