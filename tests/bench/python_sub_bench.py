#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""python_sub_bench.py - how many messages a Python subscriber receives per second through the
rdps package's callback API (and its iterator), every message counted and checked.

Two ways:
* --rdpub PATH (the target's measurement): a C publisher, rdpub --pattern, in another process on
  the local device sends --messages of --size bytes as fast as it can (--reliable: flow control
  holds it to the subscriber's pace, every message delivered; without it the subscriber's ring
  overflows and what is dropped is counted), and this process's Python subscriber receives them;
  the rate is messages over the time from the first to the last one received. The callback
  checks every message's index (rdpub writes it in the first 4 bytes).
* Without it, in one process on the loopback device: a publisher context sends bursts
  (SEND_MORE, then flush) and a subscriber context polls them to the callback; the figure is the
  subscriber's side alone, messages over the time spent in its poll (rdps receive path, the
  binding's collector and drain, the callback).
Both print the subscriber's CPU time too (messages per CPU second), which a loaded machine does
not inflate.

usage: PYTHONPATH=BUILD/python python3 tests/bench/python_sub_bench.py [--messages N]
       [--size BYTES] [--api callback|callback-info|iterator] [--burst N] [--json]
       [--rdpub BUILD/tools/rdpub/rdpub [--reliable]]
"""
import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile
import time

import rdps


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--messages", type=int, default=2_000_000)
    ap.add_argument("--size", type=int, default=64, help="message bytes (>= 8)")
    ap.add_argument("--burst", type=int, default=4096, help="messages sent between polls")
    ap.add_argument("--api", choices=("callback", "callback-info", "iterator"),
                    default="callback")
    ap.add_argument("--json", action="store_true", help="one JSON line instead of text")
    ap.add_argument("--rdpub", help="rdpub's path: a C publisher in another process, on the "
                    "local device")
    ap.add_argument("--reliable", action="store_true", help="with --rdpub: reliable")
    args = ap.parse_args()
    if args.size < 8 or args.messages <= 0 or args.burst <= 0:
        ap.error("--size is at least 8, --messages and --burst positive")
    if args.rdpub:
        return from_rdpub(args)

    count = bad = nbytes = expect = 0

    # The callback does what a real one does at least: looks at the payload (the sequence in
    # its first 8 bytes, checked against the one expected: a loss or a reordering counts once
    # as bad, then the check follows the stream again) and keeps running totals.
    def on_data(data):
        nonlocal count, bad, nbytes, expect
        if data[:8] != seq_bytes[expect & 0xFFFF]:
            bad += 1
            expect = int.from_bytes(data[:8], "little")
        expect += 1
        count += 1
        nbytes += len(data)

    last_ordinal = 0

    def on_message(data, info):
        nonlocal last_ordinal
        on_data(data)
        last_ordinal = info.ordinal  # decodes the info

    seq_bytes = [struct.pack("<Q", i) for i in range(65536)]
    filler = bytes(args.size - 8)
    payloads = [s + filler for s in seq_bytes]

    pub_ctx = rdps.Context(device="loopback")
    sub_ctx = rdps.Context(device="loopback", recv_slots=8192)
    topic = "bench.python.sub"
    if args.api == "callback":
        sub = sub_ctx.subscriber(topic, on_data, with_info=False)
    elif args.api == "callback-info":
        sub = sub_ctx.subscriber(topic, on_message)
    else:
        sub = sub_ctx.subscriber(topic, queue_size=args.burst * 4)
    pub = pub_ctx.publisher(topic)
    pub.wait_ready()
    sub.wait_ready()
    # A burst must fit the subscriber's receive queue (8192 datagrams; a full one drops, as UD).
    room = pub_ctx.max_datagram_payload
    per_datagram = room // (args.size + 2) if args.size + 2 <= room else 0
    datagrams = -(-(args.size) // room) if per_datagram == 0 else 1
    fits = 4096 * per_datagram if per_datagram else 4096 // datagrams
    args.burst = max(1, min(args.burst, fits))

    sub_seconds = 0.0
    sub_cpu = 0.0  # the subscriber's CPU time: what a loaded (shared) machine does not inflate
    sent = 0
    more = rdps.SEND_MORE
    start = time.perf_counter()
    while sent < args.messages:
        n = min(args.burst, args.messages - sent)
        send = pub.send
        for i in range(sent, sent + n - 1):
            send(payloads[i % 65536], more)
        send(payloads[(sent + n - 1) % 65536])
        sent += n
        pub_ctx.flush()  # a datagram batching held while the device was busy
        pub_ctx.poll(0)
        t0 = time.perf_counter()
        c0 = time.thread_time()
        if args.api == "iterator":
            while True:
                got = sub_ctx.poll(0)
                while True:
                    msg = sub.receive(0)
                    if msg is None:
                        break
                    on_data(msg.data)
                if got == 0:
                    break
        else:
            while sub_ctx.poll(0) > 0:
                pass
        sub_cpu += time.thread_time() - c0
        sub_seconds += time.perf_counter() - t0
    total = time.perf_counter() - start
    counters = sub_ctx.counters()
    pub_ctx.close()
    sub_ctx.close()

    ok = count == args.messages and bad == 0
    result = {
        "api": args.api, "size": args.size, "messages": args.messages,
        "received": count, "bad": bad,
        "gap_messages": counters["gap_messages"], "device": "loopback (one process)",
        "subscriber_msgs_per_s": round(count / sub_seconds),
        "end_to_end_msgs_per_s": round(count / total),
        "subscriber_ns_per_msg": round(sub_seconds * 1e9 / max(1, count)),
        "subscriber_msgs_per_cpu_s": round(count / sub_cpu) if sub_cpu > 0 else None,
        "load_average": round(os.getloadavg()[0], 1),
        "ok": ok,
    }
    if args.json:
        print(json.dumps(result))
    else:
        print("python subscriber, %s API, %d B messages, %s" % (args.api, args.size,
                                                               result["device"]))
        print("  received %d of %d (%d bad, %d in gaps)" % (count, args.messages,
                                                          bad,
                                                          counters["gap_messages"]))
        print("  subscriber side: %d msgs/s (%d ns per message), %s msgs per CPU second"
              % (result["subscriber_msgs_per_s"], result["subscriber_ns_per_msg"],
                 result["subscriber_msgs_per_cpu_s"]))
        print("  end to end (Python publisher in the same process): %d msgs/s"
              % result["end_to_end_msgs_per_s"])
        print("  load average %.1f on %d CPUs" % (result["load_average"], os.cpu_count()))
    return 0 if ok else 1


def from_rdpub(args):
    """A C publisher process (rdpub --pattern) on the local device, this Python subscriber."""
    # The low 16 bits of each message's index (rdpub writes it little-endian in the first 4
    # bytes): in order, a lost or reordered message shows.
    index_bytes = [struct.pack("<H", i) for i in range(65536)]
    count = bad = expect = 0
    first = last = None

    def on_data(data):
        nonlocal count, bad, expect
        if data[:2] != index_bytes[expect & 0xFFFF]:
            bad += 1  # lost or reordered before it: counted once, then followed again
            expect = int.from_bytes(data[:4], "little")
        expect += 1
        count += 1

    def on_message(data, info):
        on_data(data)
        info.ordinal  # noqa: B018 (decodes the info)

    topic = "bench.python.rdpub"
    env = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="rdps-bench-") as local_dir:
        env["RDPS_LOCAL_DIR"] = local_dir
        os.environ["RDPS_LOCAL_DIR"] = local_dir
        ctx = rdps.Context(device="local", recv_slots=8192)
        if args.api == "callback":
            sub = ctx.subscriber(topic, on_data, with_info=False, reliable=args.reliable)
        elif args.api == "callback-info":
            sub = ctx.subscriber(topic, on_message, reliable=args.reliable)
        else:
            sub = ctx.subscriber(topic, queue_size=1 << 20, reliable=args.reliable)
        sub.wait_ready()
        cmd = [args.rdpub, "-d", "local", "-t", topic, "--pattern", "-c", str(args.messages),
               "-s", str(args.size), "--wait-subs", "1", "--json"]
        if args.reliable:
            cmd.append("--reliable")
        pub = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
        c0 = time.thread_time()  # sleeping costs none: the loop's CPU time is the receiving's
        seen, quiet_since = 0, None
        while count < args.messages:
            ctx.poll(0)
            if args.api == "iterator":
                while True:
                    msg = sub.receive(0)
                    if msg is None:
                        break
                    on_data(msg.data)
            now = time.perf_counter()
            if count != seen:
                if first is None:
                    first = now
                last, seen, quiet_since = now, count, None
                continue
            if pub.poll() is not None:  # the publisher is done: what did not come is lost
                quiet_since = quiet_since or now
                if now - quiet_since > 2.0:
                    break
            ctx.wait(0.001)
        cpu = time.thread_time() - c0
        counters = ctx.counters()
        ctx.close()
        pub_out, pub_err = pub.communicate(timeout=60)
    seconds = (last - first) if first and last and last > first else float("nan")
    ok = count == args.messages and bad == 0 and pub.returncode == 0
    result = {
        "api": args.api, "size": args.size, "messages": args.messages, "received": count,
        "bad": bad, "reliable": args.reliable, "device": "local (C rdpub process -> Python)",
        "subscriber_msgs_per_s": round(count / seconds) if seconds == seconds else None,
        "subscriber_msgs_per_cpu_s": round(count / cpu) if cpu > 0 else None,
        "gap_messages": counters["gap_messages"],
        "load_average": round(os.getloadavg()[0], 1), "ok": ok,
    }
    if args.json:
        print(json.dumps(result))
    else:
        print("python subscriber, %s API, %d B messages from a C publisher (rdpub%s), local "
              "device" % (args.api, args.size, " --reliable" if args.reliable else ""))
        print("  received %d of %d (%d discontinuities, %d in gaps)"
              % (count, args.messages, bad, counters["gap_messages"]))
        print("  %s msgs/s from the first message to the last, %s msgs per CPU second"
              % (result["subscriber_msgs_per_s"], result["subscriber_msgs_per_cpu_s"]))
        print("  load average %.1f on %d CPUs" % (result["load_average"], os.cpu_count()))
        if pub.returncode != 0:
            print("  rdpub exited %d: %s" % (pub.returncode, pub_err.strip()))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
