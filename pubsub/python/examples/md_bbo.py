#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""md_bbo.py - subscribes to the market-data demo's feed (md-feed) and prints a symbol's best bid
and offer once a second.

The feed publishes MoldUDP64 packets of NASDAQ TotalView-ITCH 5.0 messages on the topics
md.FEED.ch0 .. md.FEED.chN-1 (reliable by default; tools/mdutil/md_packet.h and tools/md/itch.h
describe the formats). This keeps a book of every order it sees (add, execute, cancel, delete,
replace) and prints the best bid and offer of --symbol (default: the busiest symbol so far).
It knows only the orders added after it started: start it before md-feed, or run md-feed with
--books 1 so it waits for this subscriber on every channel.

    md-feed -d local --books 1 &
    python3 md_bbo.py -d local --symbol SYM00042
"""
import argparse
import struct
import sys
import time

import rdps

MOLD_HEADER = struct.Struct(">10sQH")  # session, sequence of the first message, count
END_OF_SESSION = 0xFFFF
TIMES_EXTENSION = 8  # md-feed's intended-time extension: u64 after the header, u32 per message


def mold_messages(packet):
    """(sequence, [ITCH message bytes]) of a MoldUDP64 packet, with or without md-feed's
    intended-times extension (whichever layout accounts for every byte); ValueError otherwise."""
    if len(packet) < MOLD_HEADER.size:
        raise ValueError("packet shorter than a MoldUDP64 header")
    _, seq, count = MOLD_HEADER.unpack_from(packet)
    if count == 0 or count == END_OF_SESSION:
        return seq, []
    for extension in (TIMES_EXTENSION, 0):
        at = MOLD_HEADER.size + extension
        messages = []
        for _ in range(count):
            if at + 2 > len(packet):
                break
            (length,) = struct.unpack_from(">H", packet, at)
            if length == 0 or at + 2 + length > len(packet):
                break
            messages.append(packet[at + 2:at + 2 + length])
            at += 2 + length
        trailer = 4 * count if extension else 0
        if len(messages) == count and at + trailer == len(packet):
            return seq, messages
    raise ValueError("malformed MoldUDP64 packet (%d bytes, %d messages)" % (len(packet), count))


class Books:
    """Order books of every symbol, from ITCH 5.0 order messages (prices: 4 implied decimals)."""

    def __init__(self):
        self.orders = {}  # order reference -> [locate, side, price, shares]
        self.levels = {}  # (locate, side) -> {price: shares}
        self.names = {}  # locate -> symbol
        self.activity = {}  # locate -> messages
        self.unknown = 0  # messages about orders added before we started
        self.messages = 0

    def _add(self, ref, locate, side, price, shares):
        self.orders[ref] = [locate, side, price, shares]
        level = self.levels.setdefault((locate, side), {})
        level[price] = level.get(price, 0) + shares

    def _reduce(self, ref, shares, delete=False):
        order = self.orders.get(ref)
        if order is None:
            self.unknown += 1
            return None
        locate, side, price, left = order
        taken = left if delete else min(shares, left)
        level = self.levels[(locate, side)]
        level[price] -= taken
        if level[price] <= 0:
            del level[price]
        order[3] = left - taken
        if order[3] == 0:
            del self.orders[ref]
        return order

    def apply(self, m):
        kind = m[0:1]
        self.messages += 1
        if len(m) < 11:
            return
        (locate,) = struct.unpack_from(">H", m, 1)
        self.activity[locate] = self.activity.get(locate, 0) + 1
        if kind in (b"A", b"F") and len(m) >= 36:
            ref, side, shares, stock, price = struct.unpack_from(">QcI8sI", m, 11)
            self.names[locate] = stock.decode("ascii", "replace").strip()
            self._add(ref, locate, side, price, shares)
        elif kind in (b"E", b"C") and len(m) >= 23:
            ref, shares = struct.unpack_from(">QI", m, 11)
            self._reduce(ref, shares)
        elif kind == b"X" and len(m) >= 23:
            ref, shares = struct.unpack_from(">QI", m, 11)
            self._reduce(ref, shares)
        elif kind == b"D" and len(m) >= 19:
            (ref,) = struct.unpack_from(">Q", m, 11)
            self._reduce(ref, 0, delete=True)
        elif kind == b"U" and len(m) >= 35:
            old, new, shares, price = struct.unpack_from(">QQII", m, 11)
            order = self._reduce(old, 0, delete=True)
            if order is not None:
                self._add(new, order[0], order[1], price, shares)
        elif kind == b"R" and len(m) >= 19:
            self.names[locate] = m[11:19].decode("ascii", "replace").strip()

    def locate_of(self, symbol):
        for locate, name in self.names.items():
            if name == symbol:
                return locate
        return None

    def busiest(self):
        return max(self.activity, key=self.activity.get) if self.activity else None

    def bbo(self, locate):
        """((bid price, shares) or None, (ask price, shares) or None), prices in units of 1/10000."""
        bids = self.levels.get((locate, b"B"))
        asks = self.levels.get((locate, b"S"))
        bid = max(bids.items()) if bids else None
        ask = min(asks.items()) if asks else None
        return bid, ask


def price_text(level):
    return "%10.4f x %-6d" % (level[0] / 10000.0, level[1]) if level else "%19s" % "-"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-d", "--device", help='rdps device ("local", "rxe0", ...; default '
                    "$RDPS_DEVICE, else the first active RDMA port)")
    ap.add_argument("--feed", default="itch", help="the feed's name (md-feed --feed; itch)")
    ap.add_argument("--channels", type=int, default=8, help="the feed's channels (8)")
    ap.add_argument("--symbol", help="symbol to follow (default: the busiest one)")
    ap.add_argument("--duration", type=float, help="seconds to run (default: until ^C)")
    ap.add_argument("--unreliable", action="store_true",
                    help="subscribe unreliably (for md-feed --unreliable)")
    args = ap.parse_args(argv)
    if not 1 <= args.channels <= 64:
        ap.error("--channels: 1..64")

    books = Books()
    next_seq = {}  # channel -> the sequence the next packet should carry
    gaps = [0]
    bad = [0]

    def on_packet(channel):
        def handle(data, info):
            try:
                seq, messages = mold_messages(data)
            except ValueError:
                bad[0] += 1
                return
            expected = next_seq.get(channel)
            if expected is not None and seq != expected:
                gaps[0] += 1
            next_seq[channel] = seq + len(messages)
            for m in messages:
                books.apply(m)
        return handle

    def on_event(event):
        if event.type in ("gap", "loss"):
            print("%s: %s (%d datagrams%s)" % (event.topic, event.type, event.count,
                                                ", " + event.reason if event.reason else ""),
                  file=sys.stderr)

    try:
        ctx = rdps.Context(device=args.device)
    except rdps.RdpsError as e:
        print("md_bbo.py: %s" % e, file=sys.stderr)
        return 1
    with ctx:
        for ch in range(args.channels):
            ctx.subscriber("md.%s.ch%d" % (args.feed, ch), on_packet(ch), on_event=on_event,
                           reliable=not args.unreliable)
        deadline = None if args.duration is None else time.monotonic() + args.duration
        print("md_bbo.py: following feed %r on %d channels" % (args.feed, args.channels))
        try:
            while deadline is None or time.monotonic() < deadline:
                ctx.run(duration=1.0)
                locate = books.locate_of(args.symbol) if args.symbol else books.busiest()
                if locate is None:
                    print("%8d messages: %s" % (books.messages, "%s not seen yet" % args.symbol
                                                if args.symbol else "waiting for the feed"))
                    continue
                bid, ask = books.bbo(locate)
                print("%8d messages  %-8s bid %s  ask %s  (%d orders, %d unknown, %d gaps, "
                      "%d bad)" % (books.messages, books.names.get(locate, "#%d" % locate),
                                   price_text(bid), price_text(ask), len(books.orders),
                                   books.unknown, gaps[0], bad[0]))
        except KeyboardInterrupt:
            pass
    return 0 if bad[0] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
