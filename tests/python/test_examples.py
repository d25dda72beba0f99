# SPDX-License-Identifier: BSD-2-Clause
"""test_examples.py - the Python examples: md_bbo.py's MoldUDP64/ITCH decoding and books on
packets laid out as tools/mdutil/md_packet.h and tools/md/itch.c write them, md_bbo.py against a
feed publisher on the loopback device, and async_pubsub.py."""
import contextlib
import io
import os
import struct
import subprocess
import sys
import threading

import pytest

import rdps

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "pubsub", "python", "examples")
sys.path.insert(0, EXAMPLES)
import md_bbo  # noqa: E402


def itch_add(locate, ref, side, shares, stock, price, kind=b"A"):
    m = kind + struct.pack(">HH", locate, 0) + (123).to_bytes(6, "big")
    m += struct.pack(">Q", ref) + side + struct.pack(">I", shares)
    m += stock.ljust(8).encode() + struct.pack(">I", price)
    return m + (b"MPID" if kind == b"F" else b"")


def itch_ref(kind, locate, ref, *fields):
    m = kind + struct.pack(">HH", locate, 0) + (123).to_bytes(6, "big") + struct.pack(">Q", ref)
    return m + b"".join(fields)


def mold(seq, messages, times=True):
    """A MoldUDP64 packet; with md-feed's intended-times extension (md_packet.h) by default."""
    p = b"itch      " + struct.pack(">QH", seq, len(messages))
    if times:
        p += struct.pack(">Q", 1_000_000)
    for m in messages:
        p += struct.pack(">H", len(m)) + m
    if times:
        p += b"".join(struct.pack(">I", 10 * i) for i in range(len(messages)))
    return p


FLOW = [
    itch_add(7, 1, b"B", 100, "AAPL", 1_500_000),
    itch_add(7, 2, b"B", 200, "AAPL", 1_510_000),
    itch_add(7, 3, b"S", 300, "AAPL", 1_520_000),
    itch_add(7, 4, b"S", 50, "AAPL", 1_530_000, kind=b"F"),
    itch_add(9, 5, b"B", 10, "MSFT", 3_000_000),
    itch_ref(b"E", 7, 2, struct.pack(">IQ", 150, 1)),  # 50 left at 151.00
    itch_ref(b"X", 7, 3, struct.pack(">I", 300)),  # the best ask cancelled whole
    itch_ref(b"U", 7, 1, struct.pack(">QII", 6, 120, 1_511_000)),  # bid 1 -> 151.10
    itch_ref(b"D", 7, 99),  # an order added before we started
]


@pytest.mark.parametrize("times", [True, False])
def test_mold_packets_with_and_without_the_extension(times):
    seq, messages = md_bbo.mold_messages(mold(41, FLOW, times))
    assert seq == 41 and messages == FLOW
    assert md_bbo.mold_messages(mold(5, [], times)) == (5, [])
    with pytest.raises(ValueError):
        md_bbo.mold_messages(mold(41, FLOW, times)[:-1])
    with pytest.raises(ValueError):
        md_bbo.mold_messages(b"short")


def test_books_follow_adds_executions_cancels_replaces():
    books = md_bbo.Books()
    for m in FLOW:
        books.apply(m)
    aapl = books.locate_of("AAPL")
    assert aapl == 7 and books.busiest() == 7
    bid, ask = books.bbo(aapl)
    assert bid == (1_511_000, 120) and ask == (1_530_000, 50)
    assert books.bbo(9) == ((3_000_000, 10), None)
    assert books.unknown == 1
    books.apply(itch_ref(b"D", 7, 6))
    assert books.bbo(aapl)[0] == (1_500_000 + 10_000, 50)


def test_md_bbo_follows_a_feed_on_the_loopback_device():
    """A feed publisher (its own context and thread) sends packets on md.pyfeed.ch0; md_bbo's
    main prints AAPL's best bid and offer."""
    stop = threading.Event()

    def feed():
        with rdps.Context(device="loopback", announce_interval_ms=50) as ctx:
            pub = ctx.publisher("md.pyfeed.ch0", reliable=True)
            while pub.subscriber_count == 0 and not stop.is_set():
                ctx.wait(0.01)
            ctx.run(duration=0.3)
            seq = 1
            for m in FLOW:
                pub.send(mold(seq, [m]), block=True, timeout=5)
                seq += 1
            while not stop.is_set():
                ctx.wait(0.05)

    t = threading.Thread(target=feed)
    t.start()
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            rc = md_bbo.main(["-d", "loopback", "--feed", "pyfeed", "--channels", "1",
                              "--symbol", "AAPL", "--duration", "4"])
    finally:
        stop.set()
        t.join()
    assert rc == 0
    last = out.getvalue().strip().splitlines()[-1]
    assert "AAPL" in last and "151.1000 x 120" in last and "153.0000 x 50" in last, last
    assert "0 gaps" in last


def test_async_example_runs():
    env = dict(os.environ)
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, "async_pubsub.py"), "--count",
                        "40", "--interval", "0.005"], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "received 40 messages" in r.stdout


def test_the_readmes_python_snippet_runs(tmp_path, monkeypatch):
    """README.md's Python example, as printed (run 0.2 s instead of 10, on a device directory
    of its own; skipped without the local device)."""
    readme = open(os.path.join(os.path.dirname(__file__), "..", "..", "README.md")).read()
    snippet = readme.split("```python\n", 1)[1].split("```", 1)[0]
    assert "rdps.Context(" in snippet and "duration=10" in snippet
    monkeypatch.setenv("RDPS_LOCAL_DIR", str(tmp_path))
    env = dict(os.environ)
    try:
        with rdps.Context(device="local"):
            pass
    except rdps.RdpsError as e:
        pytest.skip("no local device: %s" % e)
    r = subprocess.run([sys.executable, "-c", snippet.replace("duration=10", "duration=0.2")],
                       env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
