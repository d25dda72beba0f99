# SPDX-License-Identifier: BSD-2-Clause
"""test_local.py - rdps for Python across processes on the local device: a C publisher (rdpub)
to a Python subscriber, a Python publisher to a C subscriber (rdsub), Python to Python, every
message checked byte for byte (rdpub's pattern, tools/common/pattern.c). Skipped when librdps
has no local device or the tools are not built (RDPS_TOOLS_DIR)."""
import os
import re
import subprocess
import sys
import tempfile
import time

import pytest

import rdps

TOOLS = os.environ.get("RDPS_TOOLS_DIR", "")
MASK = (1 << 64) - 1


def _local_device_or_skip(env):
    try:
        with rdps.Context(device="local"):
            pass
    except rdps.RdpsError as e:
        pytest.skip("no local device: %s" % e)


@pytest.fixture
def local_env(monkeypatch):
    """A local device directory of this test's own (RDPS_LOCAL_DIR), for us and the tools."""
    with tempfile.TemporaryDirectory(prefix="rdps-py-local-") as d:
        monkeypatch.setenv("RDPS_LOCAL_DIR", d)
        _local_device_or_skip(os.environ)
        yield dict(os.environ)


def tool(name):
    path = os.path.join(TOOLS, name, name)
    if not TOOLS or not os.access(path, os.X_OK):
        pytest.skip("%s not built (RDPS_TOOLS_DIR=%r)" % (name, TOOLS))
    return path


def splitmix64(state):
    state = (state + 0x9E3779B97F4A7C15) & MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return state, z ^ (z >> 31)


def pattern(seed, index, length):
    """rdpub --pattern's message `index` (tools/common/pattern.c), written again from its rules."""
    _, start = splitmix64((seed ^ (index * 0xD1342543DE82EF95)) & MASK)
    out = bytearray()
    s = start
    while len(out) < length:
        s, r = splitmix64(s)
        out += r.to_bytes(8, "little")
    out = out[:length]
    if length >= 8:
        _, check = splitmix64((seed ^ (index << 20) ^ length ^ 0xC3A5C85C97CB3127) & MASK)
        out[0:4] = (index & 0xFFFFFFFF).to_bytes(4, "little")
        out[4:8] = (check & 0xFFFFFFFF).to_bytes(4, "little")
    return bytes(out)


@pytest.mark.parametrize("reliable", [False, True])
def test_c_publisher_to_python_subscriber(local_env, topic, reliable):
    count, size = 2000, 64
    with rdps.Context(device="local", announce_interval_ms=100) as ctx:
        got = []
        sub = ctx.subscriber(topic, got.append, with_info=False, reliable=reliable)
        sub.wait_ready()
        args = [tool("rdpub"), "-d", "local", "-t", topic, "--pattern", "-c", str(count), "-s",
                str(size), "--wait-subs", "1", "--seed", "7"] + (["--reliable"] if reliable
                                                                  else [])
        proc = subprocess.Popen(args, env=local_env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + 60
        while len(got) < count and time.monotonic() < deadline:
            ctx.wait(0.05)
        out = proc.communicate(timeout=60)[0]
        assert proc.returncode == 0, out
    assert len(got) == count, "%d of %d; rdpub: %s" % (len(got), count, out)
    assert got == [pattern(7, i, size) for i in range(count)]


def test_python_publisher_to_c_subscriber(local_env, topic):
    count, size = 500, 100
    rdsub = subprocess.Popen([tool("rdsub"), "-d", "local", "-t", topic, "--verify", "-q", "--seed",
                              "3", "-c", str(count), "--timeout", "60"], env=local_env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        with rdps.Context(device="local", announce_interval_ms=100) as ctx:
            pub = ctx.publisher(topic)
            pub.wait_ready()
            deadline = time.monotonic() + 30
            while pub.subscriber_count == 0 and time.monotonic() < deadline:
                ctx.wait(0.05)
            assert pub.subscriber_count == 1
            ctx.run(duration=0.3)
            for i in range(count):
                pub.send(pattern(3, i, size), block=True, timeout=10)
                if i % 64 == 63:
                    ctx.poll()
            ctx.flush()
            out = rdsub.communicate(timeout=60)[0]
    finally:
        if rdsub.poll() is None:
            rdsub.kill()
    assert rdsub.returncode == 0, out


def test_python_to_python_across_processes(local_env, topic):
    code = r'''
import sys, rdps
topic, n = sys.argv[1], int(sys.argv[2])
with rdps.Context(device="local", announce_interval_ms=100) as ctx:
    pub = ctx.publisher(topic, reliable=True)
    for _ in range(600):
        if pub.subscriber_count:
            break
        ctx.wait(0.05)
    ctx.run(duration=0.3)
    for i in range(n):
        pub.send(b"py %d" % i, block=True, timeout=10)
    ctx.run(duration=10, until=lambda: pub.receivers_behind == 0)
'''
    with rdps.Context(device="local", announce_interval_ms=100) as ctx:
        sub = ctx.subscriber(topic, reliable=True)
        sub.wait_ready()
        proc = subprocess.Popen([sys.executable, "-c", code, topic, "300"], env=local_env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        seen = []
        while len(seen) < 300:
            msg = sub.receive(timeout=60)  # bounded: a stalled stream fails, never hangs
            assert msg is not None, "%d of 300; publisher: %s" % (len(seen), proc.poll())
            seen.append(msg.data)
            assert msg.info.source.qpn != 0
        out = proc.communicate(timeout=60)[0]
        assert proc.returncode == 0, out
    assert seen == [b"py %d" % i for i in range(300)]


def test_md_bbo_follows_md_feed(local_env):
    """The example against the real feed in another process: every ITCH message the feed sent is
    applied (none about an unknown order, no sequence gap, no malformed packet) and the followed
    book is not crossed."""
    feed_cmd = [tool("md-feed"), "-d", "local",
                "--feed", "pybbo", "--books", "1", "--duration", "2", "--rate", "5000",
                "--channels", "4"]
    example = os.path.join(os.path.dirname(__file__), "..", "..", "pubsub", "python", "examples",
                           "md_bbo.py")
    bbo = subprocess.Popen([sys.executable, example, "-d", "local", "--feed", "pybbo",
                            "--channels", "4", "--duration", "12"], env=local_env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        feed = subprocess.run(feed_cmd, env=local_env, capture_output=True, text=True,
                              timeout=90)
        out = bbo.communicate(timeout=90)[0]
    finally:
        if bbo.poll() is None:
            bbo.kill()
    assert feed.returncode == 0, feed.stdout + feed.stderr
    assert bbo.returncode == 0, out
    sent = int(feed.stdout.split("md-feed: ")[1].split(" messages")[0])
    last = re.match(r" *(\d+) messages +\S+ +bid +([\d.]+) x +\d+ +ask +([\d.]+) x +\d+ +"
                    r"\(\d+ orders, 0 unknown, 0 gaps, 0 bad\)$", out.strip().splitlines()[-1])
    assert last, out
    assert int(last.group(1)) == sent, out
    assert 0 < float(last.group(2)) < float(last.group(3)), out


def test_asyncio_subscriber_of_a_paced_c_publisher(local_env, topic):
    """rdpub at 200 msgs/s into `async for` on the local device: every message, and the loop
    woken about once per message (through the ctx's fd), not spinning."""
    import asyncio

    import rdps.aio

    count = 200

    async def main():
        with rdps.Context(device="local", announce_interval_ms=100) as ctx:
            async with rdps.aio.attach(ctx) as driver:
                sub = ctx.subscriber(topic)
                while not sub.ready:
                    await asyncio.sleep(0.01)
                proc = await asyncio.create_subprocess_exec(
                    tool("rdpub"), "-d", "local", "-t", topic, "--pattern", "-c", str(count),
                    "-s", "64", "--rate", "200", "--wait-subs", "1", "--seed", "5",
                    env=local_env, stdout=asyncio.subprocess.DEVNULL)
                got = []
                async for msg in sub:
                    got.append(msg.data)
                    if len(got) == count:
                        break
                await proc.wait()
                return got, driver.wakeups

    got, wakeups = asyncio.run(asyncio.wait_for(main(), 60))
    assert got == [pattern(5, i, 64) for i in range(count)]
    assert wakeups < 20 * count, wakeups
