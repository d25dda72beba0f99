#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""check_capture.py - a capture of reliable rdpub/rdsub traffic, decoded by tshark with
tools/wireshark/rdps.lua, against the tools' own --json figures.

usage: check_capture.py --lua rdps.lua --verdict FRAME_VERDICT --dir DIR
DIR holds rxe.pcap (taken on the publisher's guest), rdpub.json and rdsub.json
(capture_role.sh). Checks, besides the frame-by-frame agreement with the library
(check_dissector.compare):
  * every DATA and HEARTBEAT of the publisher's session (rdpub "session") comes from the
    QP rdsub verified ("verified_session.qpn");
  * DATA sequences are contiguous, one per fragment rdsub delivered ("fragments");
    first transmissions with BEGIN are the messages ("messages"), their msg_len sum the
    bytes; fragment offsets step by the first fragment's size and end at msg_len;
    repairs repeat their original's offset and length;
  * per type counts: RETRANSMIT DATA = rdpub "repairs", HEARTBEAT = "heartbeats",
    all of them = "fragments" (frames sent); NAK = rdsub "naks_sent" = rdpub
    "naks_received"; STATUS = rdsub "status_sent";
  * ANNOUNCE frames from both sides; mckey's UD datagrams, ARP and IGMP left unclaimed.
Exit 0 all match, 1 otherwise, 77 tshark missing.
"""
import argparse
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_dissector  # noqa: E402
import rdps_pcap  # noqa: E402

DATA, HEARTBEAT, NAK, STATUS, ANNOUNCE = 1, 2, 3, 4, 5
F_BEGIN, F_END, F_RETRANSMIT = 1, 2, 4


def load_json(path):
    with open(path, encoding="utf-8") as f:
        lines = [ln for ln in f if ln.startswith("{")]
    if not lines:
        raise SystemExit(f"{path}: no JSON summary")
    return json.loads(lines[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lua", required=True)
    ap.add_argument("--verdict", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--tshark", default=shutil.which("tshark"))
    a = ap.parse_args()
    if not a.tshark:
        print("tshark not installed (Debian: tshark); skipping")
        return 77
    pcap = os.path.join(a.dir, "rxe.pcap")
    pub, sub = load_json(os.path.join(a.dir, "rdpub.json")), load_json(os.path.join(a.dir, "rdsub.json"))
    # A capture that lost packets cannot match the tools' counts: say so rather than mismatch.
    with open(os.path.join(a.dir, "tcpdump.err"), encoding="utf-8") as f:
        dropped = [ln for ln in f if "dropped by kernel" in ln and not ln.startswith("0 ")]
    if dropped:
        print(f"FAIL: tcpdump lost packets: {dropped[0].strip()}")
        return 1
    problems, rows, _, foreign = check_dissector.compare(pcap, a.tshark, a.lua, a.verdict)
    packets = rdps_pcap.read_pcap(pcap)

    def expect(what, got, want):
        ok = got == want
        print(f"{'ok  ' if ok else 'FAIL'} {what}: capture {got}, tools {want}")
        if not ok:
            problems.append(what)

    session = pub["session"]
    vs = sub.get("verified_session", {})
    mine = [r for r in rows if check_dissector.num(r["session"]) == session]
    by_type = {t: [r for r in mine if int(r["type"]) == t] for t in range(1, 6)}
    data = by_type[DATA]
    first = [r for r in data if not check_dissector.num(r["flags"]) & F_RETRANSMIT]
    repairs = [r for r in data if check_dissector.num(r["flags"]) & F_RETRANSMIT]

    expect("rdsub verified the publisher's session", vs.get("session"), session)
    expect("source QPs of DATA/HEARTBEAT = verified qpn",
           sorted({check_dissector.num(r["srcqp"]) for r in data + by_type[HEARTBEAT]}),
           [vs.get("qpn")])
    seqs = sorted({int(r["seq"]) for r in data})
    expect("distinct DATA sequences (fragments delivered)", len(seqs), sub["fragments"])
    expect("DATA sequences contiguous", seqs == list(range(seqs[0], seqs[0] + len(seqs))) if seqs
           else False, True)
    expect("first transmissions, one per sequence", len(first), len(seqs))
    begins = [r for r in first if int(r["flags"], 0) & F_BEGIN]
    expect("messages (BEGIN fragments)", len(begins), pub["messages"])
    expect("messages delivered", len(begins), sub["verified"])
    expect("bytes (sum of msg_len)", sum(int(r["msg_len"]) for r in begins), pub["bytes"])
    expect("repairs (RETRANSMIT DATA)", len(repairs), pub["repairs"])
    expect("heartbeats", len(by_type[HEARTBEAT]), pub["heartbeats"])
    expect("frames sent (DATA + repairs + HEARTBEAT)", len(data) + len(by_type[HEARTBEAT]),
           pub["fragments"])
    expect("NAKs sent", len(by_type[NAK]), sub["naks_sent"])
    expect("NAKs received", len(by_type[NAK]), pub["naks_received"])
    expect("STATUS sent", len(by_type[STATUS]), sub["status_sent"])

    # Fragment layout, message by message, in sequence order.
    by_seq = {int(r["seq"]): r for r in first}
    bad_layout, multi = [], 0
    i = 0
    while i < len(seqs):
        r = by_seq[seqs[i]]
        msg_len = int(r["msg_len"])
        step = int(r["body_len"])
        frags = [r]
        while not int(frags[-1]["flags"], 0) & F_END and i + len(frags) < len(seqs):
            frags.append(by_seq[seqs[i + len(frags)]])
        offs = [int(f["frag_offset"]) for f in frags]
        last = frags[-1]
        if (offs != [k * step for k in range(len(frags))] or
                any(int(f["msg_len"]) != msg_len for f in frags) or
                int(last["frag_offset"]) + int(last["body_len"]) != msg_len or
                not int(r["flags"], 0) & F_BEGIN):
            bad_layout.append(seqs[i])
        multi += len(frags) > 1
        i += len(frags)
    expect("messages with a broken fragment layout", bad_layout, [])
    print(f"     multi-fragment messages: {multi}")
    if multi == 0:
        problems.append("no multi-fragment message")
    orig = {int(r["seq"]): (r["frag_offset"], r["msg_len"], r["body_len"]) for r in first}
    expect("repairs matching their originals",
           sum(orig.get(int(r["seq"])) == (r["frag_offset"], r["msg_len"], r["body_len"])
               for r in repairs), len(repairs))

    announces = [r for r in rows if int(r["type"]) == ANNOUNCE]
    srcs = {r["ip_src"] for r in announces}
    print(f"     ANNOUNCE frames {len(announces)} from {len(srcs)} hosts")
    if len(srcs) < 2 or any(int(r["body_len"]) == 0 for r in announces):
        problems.append("ANNOUNCE frames from both tools, with a body")
    print(f"     {len(rows)} rdps frames of {len(packets)} packets; {foreign} foreign UD SENDs")
    if foreign == 0:
        problems.append("no foreign UD SEND (mckey) in the capture to leave unclaimed")
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
