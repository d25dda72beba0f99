# SPDX-License-Identifier: BSD-2-Clause
"""test_asyncio.py - rdps.aio: the context's fd in the loop, async iteration and send, and no
busy-waiting: an idle context wakes the loop only for its timers."""
import asyncio
import struct

import rdps
import rdps.aio


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 60))


def test_async_iteration_between_two_contexts(topic):
    async def main():
        with rdps.Context(device="loopback") as a, rdps.Context(device="loopback") as b:
            async with rdps.aio.attach(a), rdps.aio.attach(b):
                sub = b.subscriber(topic)
                pub = a.publisher(topic)
                while not (pub.ready and sub.ready):
                    await asyncio.sleep(0.01)

                async def produce():
                    for i in range(500):
                        await rdps.aio.send(pub, struct.pack("<I", i))

                producer = asyncio.create_task(produce())
                seen = []
                async for msg in sub:
                    seen.append(struct.unpack("<I", msg.data)[0])
                    if len(seen) == 500:
                        break
                await producer
                return seen

    assert run(main()) == list(range(500))


def test_callbacks_run_from_the_loop_and_receive_times_out(topic):
    async def main():
        with rdps.Context(device="loopback") as a, rdps.Context(device="loopback") as b:
            async with rdps.aio.attach(a), rdps.aio.attach(b):
                done = asyncio.get_running_loop().create_future()
                b.subscriber(topic, lambda d, i: done.set_result(d))
                queued = b.subscriber(topic + ".q")
                pub = a.publisher(topic)
                while not pub.ready:
                    await asyncio.sleep(0.01)
                pub.send(b"via the fd")
                data = await done
                none = await rdps.aio.receive(queued, timeout=0.1)
                return data, none

    assert run(main()) == (b"via the fd", None)


def test_an_idle_context_does_not_spin(topic):
    """Over one idle second the driver runs for timers only (announce every 1 s, heartbeats):
    a busy-waiting driver would run thousands of times."""
    async def main():
        with rdps.Context(device="loopback") as ctx:
            async with rdps.aio.attach(ctx) as driver:
                ctx.subscriber(topic, lambda d, i: None)
                await asyncio.sleep(0.3)
                before = driver.wakeups
                await asyncio.sleep(1.0)
                return driver.wakeups - before

    wakeups = run(main())
    assert 0 < wakeups < 200, wakeups


def test_a_callback_exception_goes_to_the_loop_and_the_driver_goes_on(topic):
    async def main():
        loop = asyncio.get_running_loop()
        reported = []
        loop.set_exception_handler(lambda loop, context: reported.append(context["exception"]))
        with rdps.Context(device="loopback") as a, rdps.Context(device="loopback") as b:
            async with rdps.aio.attach(a), rdps.aio.attach(b):
                got = []

                def on_message(data, info):
                    if data == b"bad":
                        raise RuntimeError("bad message")
                    got.append(data)

                b.subscriber(topic, on_message)
                pub = a.publisher(topic)
                while not pub.ready:
                    await asyncio.sleep(0.01)
                for m in (b"bad", b"good"):
                    await rdps.aio.send(pub, m)
                for _ in range(500):
                    if got:
                        break
                    await asyncio.sleep(0.01)
                return got, reported

    got, reported = run(main())
    assert got == [b"good"]
    assert len(reported) == 1 and isinstance(reported[0], RuntimeError)


def test_closing_the_context_ends_iteration_and_the_driver(topic):
    async def main():
        ctx = rdps.Context(device="loopback")
        driver = rdps.aio.attach(ctx)
        sub = ctx.subscriber(topic)

        async def consume():
            return [m async for m in sub]

        task = asyncio.create_task(consume())
        await asyncio.sleep(0.05)
        ctx.close()
        await asyncio.sleep(0.05)
        driver.close()
        return await task

    assert run(main()) == []


def test_an_endpoint_created_under_the_driver_gets_ready(topic):
    """A join starts at a poll and rdps raises nothing on the fd for a new endpoint: the binding
    runs the driver when one is created (before, the join waited for a timer, seconds away)."""
    async def main():
        with rdps.Context(device="loopback") as ctx:
            async with rdps.aio.attach(ctx):
                await asyncio.sleep(0.2)  # the driver is armed and asleep
                pub = ctx.publisher(topic)
                for _ in range(500):
                    if pub.ready:
                        return True
                    await asyncio.sleep(0.01)
                return False

    assert run(main())
