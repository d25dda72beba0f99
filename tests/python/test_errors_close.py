# SPDX-License-Identifier: BSD-2-Clause
"""test_errors_close.py - rdps codes as exceptions (code, name, text, the call's detail), close in
any order and use after close, callbacks that raise, close or poll, and threads."""
import gc
import threading
import time

import pytest

import rdps
from conftest import ready


def test_every_code_maps_to_an_exception_with_its_text():
    assert rdps.EAGAIN < 0 and rdps.ECLOSED == -4004 and rdps.ENOTOWNER == -4005
    for name, code in rdps.CODES.items():
        err = rdps.RdpsError(code)
        assert err.code == code and err.name == "RDPS_" + name
        assert err.strerror == rdps.strerror(code) != ""
        assert rdps.err_name(code) == "RDPS_" + name
    assert issubclass(rdps.TryAgain, BlockingIOError)
    assert issubclass(rdps.InvalidArgument, ValueError)
    assert issubclass(rdps.TimedOut, TimeoutError)


def test_an_error_carries_the_failed_calls_message():
    with pytest.raises(rdps.InvalidArgument) as e:
        rdps.Context(device="loopback", max_sessions_per_source=0, group_range="not a cidr")
    assert e.value.code == rdps.EINVAL
    assert e.value.detail.startswith("rdps_ctx_create")
    assert "RDPS_EINVAL" in str(e.value)
    with pytest.raises(rdps.NoDevice) as e:
        rdps.Context(device="no-such-device")
    assert e.value.code == rdps.ENODEV and "loopback" in e.value.detail


def test_bad_options_are_refused_by_name():
    with pytest.raises(TypeError, match="no rdps_config field 'nope'"):
        rdps.Context(device="loopback", nope=1)
    with rdps.Context(device="loopback") as ctx:
        with pytest.raises(TypeError, match="no option 'nope'"):
            ctx.publisher("test.py.opts", nope=1)
        with pytest.raises(ValueError, match="flow='sideways'"):
            ctx.publisher("test.py.opts", reliable=True, flow="sideways")
        with pytest.raises(rdps.InvalidArgument) as e:
            ctx.publisher("test.py.opts", ring_bytes=1 << 20)  # needs reliable
        assert "ring_bytes" in e.value.detail
        with pytest.raises(OverflowError):
            ctx.publisher("test.py.opts", parity_k=-1)


def test_use_after_close_raises_closed_in_any_order(topic):
    ctx = rdps.Context(device="loopback")
    sub = ctx.subscriber(topic, lambda d, i: None)
    pub = ctx.publisher(topic)
    ready(pub, sub)
    sub.close()
    sub.close()
    assert sub.closed and not sub.ready
    with pytest.raises(rdps.Closed):
        sub.counters()
    ctx.close()
    ctx.close()
    assert ctx.closed and pub.closed
    with pytest.raises(rdps.Closed) as e:
        pub.send(b"x")
    assert e.value.code == rdps.ECLOSED
    for call in (ctx.poll, ctx.flush, ctx.counters, ctx.arm, lambda: ctx.wait(0),
                 lambda: ctx.publisher(topic), lambda: ctx.subscriber(topic),
                 lambda: pub.claim(8), pub.counters):
        with pytest.raises(rdps.Closed):
            call()
    assert not pub.ready and pub.session == 0 and ctx.sends_pending == 0
    pub.close()  # after its context: nothing happens


def test_a_raising_callback_loses_nothing_after_it(ctx, topic):
    got = []

    def on_message(data, info):
        if data == b"bad":
            raise KeyError("from the callback")
        got.append(data)

    b = rdps.Context(device="loopback")
    try:
        b.subscriber(topic, on_message)
        pub = ctx.publisher(topic)
        pub.wait_ready()
        for m in (b"1", b"bad", b"2", b"3"):
            pub.send(m, rdps.SEND_MORE)
        ctx.flush()
        with pytest.raises(KeyError):
            b.run(duration=5, until=lambda: len(got) == 3)
        b.run(duration=5, until=lambda: len(got) == 3)
        assert got == [b"1", b"2", b"3"]
    finally:
        b.close()


def test_a_callback_may_close_the_context_or_poll(topic):
    a = rdps.Context(device="loopback")
    got = []

    def closing(data, info):
        got.append(data)
        a.close()

    a.subscriber(topic, closing)
    pub = a.publisher(topic)
    pub.wait_ready()
    pub.send(b"one")  # delivered in this context at once: the callback closes it
    assert got == [b"one"] and a.closed
    with pytest.raises(rdps.Closed):
        pub.send(b"two")

    with rdps.Context(device="loopback") as c:
        seen = []

        def polling(data, info):
            seen.append(data)
            c.poll()  # not inside rdps: an ordinary poll, no second delivery
            c.flush()

        c.subscriber(topic + ".p", polling)
        p = c.publisher(topic + ".p")
        p.wait_ready()
        for i in range(20):
            p.send(b"%d" % i)
        c.poll()
        assert seen == [b"%d" % i for i in range(20)]


def test_another_thread_gets_not_owner_and_cannot_close(topic):
    ctx = rdps.Context(device="loopback")
    pub = ctx.publisher(topic)
    errors = []

    def other():
        for call in (lambda: pub.send(b"x"), ctx.poll, ctx.close, pub.close):
            try:
                call()
            except rdps.RdpsError as e:
                errors.append(e)

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert [e.code for e in errors] == [rdps.ENOTOWNER] * 4
    assert all(isinstance(e, rdps.NotOwner) for e in errors)
    assert not ctx.closed and not pub.closed
    pub.wait_ready()
    pub.send(b"still works")
    ctx.close()


def test_handover_to_a_thread_that_runs_the_context(topic):
    ctx = rdps.Context(device="loopback")
    got = []
    ctx.subscriber(topic, lambda d, i: got.append(d))
    pub = ctx.publisher(topic)
    ctx.handover()

    def runner():
        pub.wait_ready()
        pub.send(b"from the runner")
        ctx.close()

    t = threading.Thread(target=runner)
    t.start()
    t.join()
    assert got == [b"from the runner"] and ctx.closed


def test_concurrent_publisher_from_other_threads(topic):
    with rdps.Context(device="loopback") as ctx:
        got = []
        sub = ctx.subscriber(topic, got.append, with_info=False)
        pub = ctx.publisher(topic, concurrent=1)
        ready(pub, sub)

        def sender(k):
            for i in range(200):
                while True:
                    try:
                        pub.send(b"%d.%d" % (k, i))
                        break
                    except rdps.TryAgain:
                        time.sleep(0.0005)  # the queue is full: let the owner drain it

        threads = [threading.Thread(target=sender, args=(k,)) for k in range(3)]
        for t in threads:
            t.start()
        while any(t.is_alive() for t in threads) or len(got) < 600:
            ctx.wait(0.01)
            if not any(t.is_alive() for t in threads) and len(got) < 600:
                ctx.run(duration=5, until=lambda: len(got) == 600)
                break
        assert sorted(got) == sorted(b"%d.%d" % (k, i) for k in range(3) for i in range(200))


def test_a_forgotten_context_is_destroyed_by_the_collector(topic):
    ctx = rdps.Context(device="loopback")
    ctx.subscriber(topic, lambda d, i: None)
    pub = ctx.publisher(topic)
    del ctx
    gc.collect()
    assert not pub.closed  # the publisher keeps its context alive
    handle_ctx = pub.context
    del pub
    handle_ctx.close()
