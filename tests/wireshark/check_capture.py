#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""check_capture.py - a capture of rdpub/rdsub traffic, decoded by tshark with
tools/wireshark/rdps.lua, against the tools' own --json figures.

usage: check_capture.py --lua rdps.lua --verdict FRAME_VERDICT --dir DIR
DIR holds rxe.pcap (taken on the publisher's guest), rdpub.json and rdsub.json (a reliable
pair), rdpub_batch.json and rdsub_batch.json (an unpaced unreliable pair that batches;
capture_role.sh). Checks, besides the frame-by-frame agreement with the library
(check_dissector.compare):
  * each stream, its first transmissions in sequence order: sequences contiguous; message
    ordinals contiguous from datagram to datagram (a batch of n takes n, a fragmented message
    one, its every fragment carrying it); a batch's messages each shown with the next
    ordinal; fragment offsets step by the first fragment's size and end at msg_len;
    messages = rdpub "messages" = rdsub "verified", their lengths' sum = rdpub "bytes";
  * every HEARTBEAT's next ordinal is the ordinal after the datagram before its sequence, and
    a reliable one's trail ordinal the ordinal of its oldest retained datagram (the next one
    when that datagram continues a message begun below it);
  * reliable pair: every DATA and HEARTBEAT comes from the QP rdsub verified
    ("verified_session.qpn"); datagrams delivered = rdsub "fragments"; repairs repeat their
    original's offset and length; per type counts: RETRANSMIT DATA = rdpub "repairs",
    HEARTBEAT = "heartbeats", all of them = "fragments" (frames sent); NAK = rdsub
    "naks_sent" = rdpub "naks_received"; STATUS = rdsub "status_sent";
  * batching pair: HEARTBEAT = rdpub "heartbeats"; DATA + HEARTBEAT = rdpub "fragments"
    (with or without the heartbeats: an unreliable publisher's frames_sent leaves them out);
    datagrams of two or more messages = rdpub "frames_batched" (at least one);
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
F_BEGIN, F_END, F_RETRANSMIT, F_RELIABLE = 1, 2, 4, 8
WRAP = 1 << 32
num = check_dissector.num


def load_json(path):
    with open(path, encoding="utf-8") as f:
        lines = [ln for ln in f if ln.startswith("{")]
    if not lines:
        raise SystemExit(f"{path}: no JSON summary")
    return json.loads(lines[-1])


def walk_stream(first):
    """first: a session's first transmissions, by sequence. Returns (messages as (ordinal,
    length, datagrams)), {seq: ordinal after that datagram}, problems) from the fields the
    dissector shows."""
    msgs, after, problems = [], {}, []
    expect, partial = None, None  # the next message's ordinal; a fragmented one in progress
    for r in first:
        seq, ordinal, count = int(r["seq"]), int(r["ordinal"]), int(r["count"])
        flags, off, body = num(r["flags"]), int(r["frag_offset"]), int(r["body_len"])
        if expect is not None and ordinal != expect:
            problems.append(f"seq {seq}: ordinal {ordinal}, want {expect}")
        if count >= 1:
            shown = [int(x) for x in r["msg_ordinal"].split(",") if x != ""]
            lens = [int(x) for x in r["msg_len_each"].split(",") if x != ""]
            if partial is not None or shown != [(ordinal + i) % WRAP for i in range(count)] or \
                    len(lens) != count:
                problems.append(f"seq {seq}: {count} messages shown as ordinals {shown}")
            msgs += [((ordinal + i) % WRAP, n, 1) for i, n in enumerate(lens)]
            expect, partial = (ordinal + count) % WRAP, None
        else:
            if r["frag_ordinal"] == "" or int(r["frag_ordinal"]) != ordinal:
                problems.append(f"seq {seq}: fragment's message ordinal {r['frag_ordinal']}")
            if flags & F_BEGIN:
                if partial is not None:
                    problems.append(f"seq {seq}: a message begins inside another")
                partial = {"ordinal": ordinal, "len": int(r["msg_len"]), "step": body, "at": 0,
                           "frags": 0}
            if partial is None or off != partial["at"] or int(r["msg_len"]) != partial["len"] \
                    or ordinal != partial["ordinal"] or \
                    (not flags & F_END and body != partial["step"]):
                problems.append(f"seq {seq}: fragment layout (offset {off}, {body} bytes)")
                partial = None
                expect = (ordinal + (flags >> 1 & 1)) % WRAP
            else:
                partial["at"] += body
                partial["frags"] += 1
                expect = ordinal
                if flags & F_END:
                    msgs.append((ordinal, partial["len"], partial["frags"]))
                    partial, expect = None, (ordinal + 1) % WRAP
        after[seq] = expect
    return msgs, after, problems


def check_stream(name, rows, pub, sub, expect):
    """The checks both streams share; returns (DATA rows, first transmissions, messages)."""
    mine = [r for r in rows if num(r["session"]) == pub["session"]]
    data = [r for r in mine if int(r["type"]) == DATA]
    first = sorted((r for r in data if not num(r["flags"]) & F_RETRANSMIT),
                   key=lambda r: int(r["seq"]))
    seqs = [int(r["seq"]) for r in first]
    expect(f"{name}: DATA sequences contiguous, one first transmission each",
           seqs == list(range(seqs[0], seqs[0] + len(seqs))) if seqs else False, True)
    msgs, after, problems = walk_stream(first)
    expect(f"{name}: ordinals and fragment layout", problems[:3], [])
    expect(f"{name}: messages", len(msgs), pub["messages"])
    expect(f"{name}: messages verified by rdsub", sub["verified"], pub["messages"])
    expect(f"{name}: bytes (sum of message lengths)", sum(n for _, n, _ in msgs), pub["bytes"])
    by_seq = {int(r["seq"]): r for r in first}
    bad_hb = []
    for r in (r for r in mine if int(r["type"]) == HEARTBEAT):
        seq, retained = int(r["seq"]), int(r["retained"])
        prev = after.get((seq - 1) % WRAP)
        if prev is not None and int(r["hb_next_ordinal"]) != prev:
            bad_hb.append(f"seq {seq} next ordinal {r['hb_next_ordinal']} != {prev}")
        if num(r["flags"]) & F_RELIABLE:
            # The first message the ring holds whole: the oldest datagram's, or the next one
            # when that datagram continues a message begun below it.
            oldest = by_seq.get((seq - retained) % WRAP) if retained else None
            want = (int(oldest["ordinal"]) + (0 if num(oldest["flags"]) & F_BEGIN else 1)) % WRAP \
                if oldest else (prev if not retained else None)
            got = int(r["hb_trail_ordinal"])
            # Nothing retained: the next message, or the one after when the datagram waiting to
            # be posted continues a message whose start the ring let go (not in the capture).
            fine = want is None or got == want or (not retained and got == (want + 1) % WRAP)
            if not fine:
                bad_hb.append(f"seq {seq} trail ordinal {got} != {want}")
    expect(f"{name}: heartbeats' next and trail ordinals", bad_hb[:3], [])
    return mine, data, first, msgs


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
    pub_b = load_json(os.path.join(a.dir, "rdpub_batch.json"))
    sub_b = load_json(os.path.join(a.dir, "rdsub_batch.json"))
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

    # The reliable pair.
    session = pub["session"]
    vs = sub.get("verified_session", {})
    expect("rdsub verified the publisher's session", vs.get("session"), session)
    mine, data, first, msgs = check_stream("reliable", rows, pub, sub, expect)
    by_type = {t: [r for r in mine if int(r["type"]) == t] for t in range(1, 6)}
    repairs = [r for r in data if num(r["flags"]) & F_RETRANSMIT]
    expect("source QPs of DATA/HEARTBEAT = verified qpn",
           sorted({num(r["srcqp"]) for r in data + by_type[HEARTBEAT]}), [vs.get("qpn")])
    expect("datagrams delivered (rdsub fragments)", sum(f for _, _, f in msgs), sub["fragments"])
    expect("repairs (RETRANSMIT DATA)", len(repairs), pub["repairs"])
    expect("heartbeats", len(by_type[HEARTBEAT]), pub["heartbeats"])
    expect("frames sent (DATA + repairs + HEARTBEAT)", len(data) + len(by_type[HEARTBEAT]),
           pub["fragments"])
    expect("NAKs sent", len(by_type[NAK]), sub["naks_sent"])
    expect("NAKs received", len(by_type[NAK]), pub["naks_received"])
    expect("STATUS sent", len(by_type[STATUS]), sub["status_sent"])
    multi = sum(1 for _, _, f in msgs if f > 1)
    print(f"     multi-fragment messages: {multi}")
    if multi == 0:
        problems.append("no multi-fragment message")
    orig = {int(r["seq"]): (r["frag_offset"], r["msg_len"], r["body_len"], r["ordinal"],
                            r["count"]) for r in first}
    expect("repairs matching their originals",
           sum(orig.get(int(r["seq"])) == (r["frag_offset"], r["msg_len"], r["body_len"],
                                           r["ordinal"], r["count"]) for r in repairs),
           len(repairs))

    # The batching pair.
    mine, data, first, msgs = check_stream("batching", rows, pub_b, sub_b, expect)
    heartbeats = [r for r in mine if int(r["type"]) == HEARTBEAT]
    batched = [r for r in first if int(r["count"]) >= 2]
    expect("batching: heartbeats", len(heartbeats), pub_b.get("heartbeats"))
    # An unreliable publisher's frames_sent ("fragments") leaves its tail heartbeats out today
    # (a reliable one's counts them): either is accepted, and said.
    sent = len(data) + len(heartbeats)
    folded = sent == pub_b["fragments"]
    expect("batching: frames sent (DATA + HEARTBEAT)", sent,
           pub_b["fragments"] + (0 if folded else len(heartbeats)))
    print(f"     batching: rdpub fragments {'count' if folded else 'leave out'} the heartbeats")
    expect("batching: datagrams of two or more messages", len(batched),
           pub_b.get("frames_batched"))
    print(f"     batching: {len(msgs)} messages in {len(first)} datagrams, "
          f"{sum(int(r['count']) for r in batched)} of them in {len(batched)} batches, "
          f"{sum(1 for _, _, f in msgs if f > 1)} fragmented")
    if not batched:
        problems.append("no batched datagram")

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
