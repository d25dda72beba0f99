# SPDX-License-Identifier: BSD-2-Clause
"""aio.py - rdps on an asyncio event loop: the context's fd in loop.add_reader, rdps_ctx_arm
before every sleep and a timer for rdps_ctx_next_timeout_ms, so the loop wakes only for work.

    async with rdps.aio.attach(ctx):
        sub = ctx.subscriber("md.quotes")
        async for msg in sub:
            ...
        await rdps.aio.send(pub, b"data")   # waits (without spinning) while back-pressured
"""
import asyncio

from ._errors import TryAgain

# Polls per loop turn before yielding to other tasks (a busy feed cannot starve them).
_POLLS_PER_TURN = 64


class Driver:
    """Runs a Context from an asyncio loop (rdps.h, "Running a ctx from an application's own
    event loop"). One per context; close() (or leaving `async with`) stops it."""

    def __init__(self, ctx, loop=None):
        if getattr(ctx, "_aio_driver", None) is not None:
            raise RuntimeError("rdps.aio: the context already has a driver")
        self.context = ctx
        self.loop = loop if loop is not None else asyncio.get_running_loop()
        self._timer = None
        self._soon = None
        self._progress = []
        self.wakeups = 0  # times the loop ran the context (tests check it does not spin)
        self.loop.add_reader(ctx.fd, self._run)
        ctx._aio_driver = self
        self._soon = self.loop.call_soon(self._run)

    def close(self):
        ctx = self.context
        if getattr(ctx, "_aio_driver", None) is not self:
            return
        ctx._aio_driver = None
        self.loop.remove_reader(ctx.fd)
        for handle in (self._timer, self._soon):
            if handle is not None:
                handle.cancel()
        self._timer = self._soon = None
        self._wake_progress()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        self.close()

    def kick(self):
        """Runs the context at the next loop turn: the binding calls it after creating an
        endpoint or sending from outside the driver, work rdps raises nothing on the fd for
        (a join to start, a datagram held by SEND_MORE or batching)."""
        if self._soon is None:
            self._soon = self.loop.call_soon(self._run)

    def progress(self):
        """A future done after the driver's next pass over the context."""
        fut = self.loop.create_future()
        self._progress.append(fut)
        return fut

    def _wake_progress(self):
        waiting, self._progress = self._progress, []
        for fut in waiting:
            if not fut.done():
                fut.set_result(None)

    def _run(self):
        for handle in (self._timer, self._soon):
            if handle is not None:
                handle.cancel()
        self._timer = self._soon = None
        ctx = self.context
        if ctx.closed:
            self.close()
            return
        self.wakeups += 1
        try:
            for _ in range(_POLLS_PER_TURN):
                if ctx.poll() <= 0:
                    break
            else:
                self._soon = self.loop.call_soon(self._run)  # more waiting: after other tasks
                return
            if ctx.closed:
                self.close()
                return
            if ctx.arm():
                self._timer = self.loop.call_later(ctx.next_timeout_ms / 1000.0, self._run)
            else:
                self._soon = self.loop.call_soon(self._run)
        except Exception as exc:  # a callback's exception, or the device's: report, go on
            self.loop.call_exception_handler({"message": "rdps.aio: exception while running the "
                                              "context", "exception": exc})
            if ctx.closed:
                self.close()
            elif self._soon is None and self._timer is None:
                self._soon = self.loop.call_soon(self._run)
        finally:
            self._wake_progress()


def attach(ctx, loop=None):
    """Runs `ctx` from the running asyncio loop: a Driver (an async context manager)."""
    return Driver(ctx, loop)


def _driver(ctx):
    driver = getattr(ctx, "_aio_driver", None)
    if driver is None:
        raise RuntimeError("rdps.aio: the context has no driver (rdps.aio.attach(ctx))")
    return driver


async def send(pub, data, flags=0):
    """Publisher.send that waits for the context's progress while back-pressured."""
    while True:
        try:
            return pub.send(data, flags)
        except TryAgain:
            await _driver(pub.context).progress()


async def subscriber_messages(sub):
    """`async for msg in sub`: the subscriber's queued messages as they come, until it closes."""
    queue = sub._queue
    while True:
        if queue:
            yield queue.popleft()
            continue
        if sub.closed:
            return
        driver = _driver(sub.context)
        fut = driver.loop.create_future()
        sub._waiters.append(fut)
        await fut


async def receive(sub, timeout=None):
    """The subscriber's next message, or None after `timeout` seconds."""
    agen = subscriber_messages(sub)
    try:
        return await asyncio.wait_for(agen.__anext__(), timeout)
    except (asyncio.TimeoutError, StopAsyncIteration):
        return None
    finally:
        await agen.aclose()
