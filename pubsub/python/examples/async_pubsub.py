#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""async_pubsub.py - rdps on asyncio: a publisher task and a subscriber task sharing the event
loop with a ticker, the context woken through its fd (no busy-waiting).

    python3 async_pubsub.py                      # both roles, in-process loopback device
    python3 async_pubsub.py -d local --role sub  # in one terminal ...
    python3 async_pubsub.py -d local --role pub  # ... and the publisher in another
"""
import argparse
import asyncio
import struct
import sys
import time

import rdps
import rdps.aio


async def publish(ctx, topic, count, interval):
    pub = ctx.publisher(topic)
    while not pub.ready:
        await asyncio.sleep(0.01)
    if ctx.device not in (None, "loopback"):
        await asyncio.sleep(1.0)  # let discovery tell subscribers of other processes about us
    for i in range(count):
        await rdps.aio.send(pub, struct.pack("<Qd", i, time.time()))
        await asyncio.sleep(interval)
    print("published %d messages" % count)


async def subscribe(ctx, topic, count, timeout):
    sub = ctx.subscriber(topic)
    received = 0
    while received < count:
        msg = await rdps.aio.receive(sub, timeout)
        if msg is None:
            print("no message for %.1f s: received %d of %d" % (timeout, received, count))
            return False
        seq, sent = struct.unpack("<Qd", msg.data)
        received += 1
        if seq % max(1, count // 10) == 0:
            print("message %d from session %#x, %.0f us after it was sent"
                  % (seq, msg.info.session_id, (time.time() - sent) * 1e6))
    print("received %d messages" % received)
    return True


async def ticker(stop):
    ticks = 0
    while not stop.is_set():
        await asyncio.sleep(0.25)
        ticks += 1
    return ticks


async def main(args):
    ctx = rdps.Context(device=args.device)
    with ctx:
        async with rdps.aio.attach(ctx) as driver:
            stop = asyncio.Event()
            tick_task = asyncio.create_task(ticker(stop))
            jobs = []
            if args.role in ("sub", "both"):
                jobs.append(subscribe(ctx, args.topic, args.count, args.timeout))
            if args.role in ("pub", "both"):
                jobs.append(publish(ctx, args.topic, args.count, args.interval))
            start = time.monotonic()
            results = await asyncio.gather(*jobs)
            stop.set()
            ticks = await tick_task
            elapsed = time.monotonic() - start
            print("the loop ran the context %d times in %.1f s (and the ticker %d times)"
                  % (driver.wakeups, elapsed, ticks))
    return 0 if all(r is not False for r in results) else 1


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-d", "--device", default="loopback",
                    help='rdps device (default "loopback": this process only)')
    ap.add_argument("--role", choices=("pub", "sub", "both"), default="both")
    ap.add_argument("--topic", default="demo.async")
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--interval", type=float, default=0.01, help="seconds between messages")
    ap.add_argument("--timeout", type=float, default=10.0,
                    help="subscriber: give up after this long without a message")
    return ap.parse_args(argv)


if __name__ == "__main__":
    try:
        sys.exit(asyncio.run(main(parse(sys.argv[1:]))))
    except rdps.RdpsError as e:
        print("async_pubsub.py: %s" % e, file=sys.stderr)
        sys.exit(1)
