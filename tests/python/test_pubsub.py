# SPDX-License-Identifier: BSD-2-Clause
"""test_pubsub.py - publishers and subscribers: bytes and buffers in, callbacks and the iterator,
message info, SEND_MORE and flush, zero-copy claims, events, counters, domain keys."""
import array
import os
import struct

import pytest

import rdps
from conftest import ready


def test_send_bytes_and_buffers_reach_a_callback(ctx, topic):
    got = []
    sub = ctx.subscriber(topic, lambda data, info: got.append((data, info)))
    pub = ctx.publisher(topic)
    ready(pub, sub)
    payloads = [b"", b"hello", bytearray(b"ba"), memoryview(b"xxworld")[2:],
                array.array("I", [1, 2, 3]), os.urandom(5000)]
    for p in payloads:
        pub.send(p)
    ctx.poll()
    assert [d for d, _ in got] == [bytes(p) for p in payloads]
    assert all(type(d) is bytes for d, _ in got)
    info = got[1][1]
    assert info.topic == topic
    assert info.topic_id == rdps.topic_id(topic) != 0
    assert info.session_id == pub.session
    assert [i.ordinal for _, i in got] == list(range(got[0][1].ordinal,
                                                     got[0][1].ordinal + len(payloads)))
    assert got[5][1].fragments > 1  # 5000 bytes: several datagrams
    assert info.source.has_gid and len(info.source.gid) == 16
    assert info.publisher_ts_ns > 0 and not info.retransmitted


def test_two_contexts_and_the_iterator(topic):
    with rdps.Context(device="loopback") as a, rdps.Context(device="loopback") as b:
        sub = b.subscriber(topic)
        pub = a.publisher(topic)
        ready(pub, sub)
        for i in range(100):
            pub.send(struct.pack("<I", i))
        a.flush()
        seen = []
        for msg in sub:
            seen.append(struct.unpack("<I", msg.data)[0])
            assert msg.info.topic == topic
            if len(seen) == 100:
                break
        more = sub.receive(timeout=0.05)
        assert more is None
        assert seen == list(range(100))


def test_with_info_false_passes_data_alone(ctx, topic):
    got = []
    sub = ctx.subscriber(topic, got.append, with_info=False)
    pub = ctx.publisher(topic)
    ready(pub, sub)
    pub.send(b"one")
    assert got == [b"one"]


def test_send_more_holds_until_flush(topic):
    with rdps.Context(device="loopback") as a, rdps.Context(device="loopback") as b:
        got = []
        sub = b.subscriber(topic, lambda d, i: got.append((d, i.seq)))
        pub = a.publisher(topic)
        ready(pub, sub)
        for i in range(5):
            pub.send(b"m%d" % i, rdps.SEND_MORE)
        b.poll()
        assert got == []  # held in the open datagram
        a.flush()
        b.run(duration=5, until=lambda: len(got) == 5)
        assert [d for d, _ in got] == [b"m%d" % i for i in range(5)]
        assert len({seq for _, seq in got}) == 1  # one datagram
        assert a.counters()["frames_batched"] >= 1


def test_claim_commit_abort_and_release(ctx, topic):
    got = []
    sub = ctx.subscriber(topic, got.append, with_info=False)
    pub = ctx.publisher(topic)
    ready(pub, sub)
    with pub.claim(16) as c:
        assert c.capacity == 16
        struct.pack_into("<QQ", c.buffer, 0, 7, 9)
    view = c.buffer
    assert view is None  # released at commit
    c2 = pub.claim()
    assert c2.capacity == ctx.max_datagram_payload
    c2.buffer[:3] = b"abc"
    with pytest.raises(rdps.Busy):
        pub.send(b"while claimed")
    with pytest.raises(rdps.Busy):
        pub.claim(8)
    c2.commit(3)
    with pytest.raises(rdps.Closed):
        c2.commit(3)  # never a second send
    with pytest.raises(ValueError):
        with pub.claim(8) as c3:
            raise ValueError("abort it")
    assert c3.buffer is None
    with pub.claim(4) as c4:
        c4.buffer[:] = b"last"
    assert got == [struct.pack("<QQ", 7, 9), b"abc", b"last"]
    big = pub.claim(100000)  # longer than a datagram: the ctx's claim buffer
    big.buffer[:] = b"z" * 100000
    big.commit()
    assert got[-1] == b"z" * 100000


def test_claim_buffer_is_released_when_the_publisher_closes(ctx, topic):
    pub = ctx.publisher(topic)
    ready(pub)
    c = pub.claim(8)
    buf = c.buffer
    pub.close()
    with pytest.raises(ValueError):
        buf[0] = 1  # released: no write into rdps's memory after close
    c.abort()


def test_message_too_long_and_bad_flags(ctx, topic):
    pub = ctx.publisher(topic)
    ready(pub)
    with pytest.raises(rdps.MessageTooLong) as e:
        pub.send(b"x" * (pub.max_message_size + 1))
    assert e.value.code == rdps.EMSGSIZE
    with pytest.raises(rdps.InvalidArgument):
        pub.send(b"x", 0x80)


def test_counters_of_each_handle(ctx, topic):
    sub = ctx.subscriber(topic, lambda d, i: None)
    pub = ctx.publisher(topic)
    ready(pub, sub)
    for _ in range(10):
        pub.send(b"0123456789")
    names = rdps.counter_names()
    assert list(ctx.counters()) == names and "msgs_sent" in names
    assert pub.counters()["msgs_sent"] == 10
    assert pub.counters()["bytes_sent"] == 100
    assert sub.counters()["msgs_delivered"] == 10
    assert rdps.counter_descriptions()["msgs_sent"] == "messages published"


def test_discovery_events_reach_callbacks_and_queues(topic):
    with rdps.Context(device="loopback", announce_interval_ms=50) as a, \
            rdps.Context(device="loopback", announce_interval_ms=50) as b:
        events = []
        sub = b.subscriber(topic, lambda d, i: None, on_event=events.append)
        pub = a.publisher(topic)
        ready(pub, sub)
        deadline_runs = 100
        while deadline_runs and not (events and pub.events):
            a.wait(0.02)
            b.wait(0.02)
            deadline_runs -= 1
        seen = [e for e in events if e.type == "publisher_seen"]
        assert seen and seen[0].session_id == pub.session and seen[0].topic == topic
        assert seen[0].type_code == 2 and seen[0].reason == ""
        assert any(e.type == "subscriber_seen" for e in pub.events)
        pub.close()
        for _ in range(100):
            b.wait(0.02)
            if any(e.type == "publisher_gone" for e in events):
                break
        gone = [e for e in events if e.type == "publisher_gone"]
        assert gone and gone[0].reason == "left"


def test_loss_events_of_a_reliable_subscriber_stay_in_order(topic):
    """A reliable stream under 20 % loss on the subscriber's side: every message arrives once,
    in order (repaired), and the iterator sees them as sent."""
    with rdps.Context(device="loopback", announce_interval_ms=50) as a, \
            rdps.Context(device="loopback", announce_interval_ms=50, loss_rx_rate=0.2,
                         loss_seed=7) as b:
        got = []
        sub = b.subscriber(topic, got.append, with_info=False, reliable=True)
        pub = a.publisher(topic, reliable=True)
        ready(pub, sub)
        for i in range(300):
            pub.send(struct.pack("<I", i), block=True, timeout=10)
            b.poll()
        for _ in range(1000):
            if len(got) == 300:
                break
            a.wait(0.005)
            b.wait(0.005)
        assert [struct.unpack("<I", d)[0] for d in got] == list(range(300))
        assert b.counters()["loss_dropped_rx"] > 0
        assert b.counters()["recovered"] > 0


def test_domain_keys(topic, tmp_path):
    key = bytes(range(32))
    path = tmp_path / "domain.key"
    path.write_text("5:" + key.hex() + "\n")
    os.chmod(path, 0o600)
    assert rdps.read_domain_key(path) == (key, 5)
    os.chmod(path, 0o644)
    with pytest.raises(rdps.RdpsError) as e:
        rdps.read_domain_key(path)
    assert e.value.code == rdps.EACCES and "chmod 600" in str(e.value)
    with rdps.Context(device="loopback", domain_key=key, domain_key_id=5) as a, \
            rdps.Context(device="loopback", domain_key=key, domain_key_id=5) as b:
        assert a.key_in_use == 5
        got = []
        sub = b.subscriber(topic, got.append, with_info=False)
        pub = a.publisher(topic)
        ready(pub, sub)
        pub.send(b"sealed")
        b.run(duration=5, until=lambda: got)
        assert got == [b"sealed"]
        a.key_add(bytes(32), 6)
        with pytest.raises(rdps.RdpsError) as e:
            a.key_add(bytes(32), 6)
        assert e.value.code == rdps.EEXIST
        with pytest.raises(rdps.RdpsError) as e:
            a.key_remove(5)
        assert e.value.code == rdps.EBUSY
    with pytest.raises(ValueError):
        rdps.Context(device="loopback", domain_key=b"short")


def test_topic_names_and_groups(ctx):
    assert rdps.topic_id("md.quotes.AAPL") == rdps.topic_id(b"md.quotes.AAPL") != 0
    assert rdps.topic_id("has space") == 0
    ctx.map_topic("test.py.mapped", "239.192.9.9")
    assert ctx.topic_group("test.py.mapped") == "239.192.9.9"
    assert ctx.topic_group("test.py.hashed").startswith("239.192.")
    with pytest.raises(rdps.InvalidArgument) as e:
        ctx.publisher("has space")
    assert "rdps_pub_create" in str(e.value)


def test_gap_events_name_exactly_the_messages_lost(topic):
    """An unreliable subscriber under 30 % loss: GAP events, in order with the messages, whose
    first_ordinal and msg_count cover exactly the ordinals that never arrived."""
    with rdps.Context(device="loopback") as a, \
            rdps.Context(device="loopback", loss_rx_rate=0.3, loss_seed=11) as b:
        got, gaps = [], []
        sub = b.subscriber(topic, lambda d, i: got.append(i.ordinal), on_event=gaps.append)
        pub = a.publisher(topic, batching="off")
        ready(pub, sub)
        for i in range(400):
            pub.send(b"%d" % i)
            if i % 32 == 31:
                b.poll()
        a.run(duration=0.3)  # the tail heartbeats report a lost tail
        b.run(duration=1.0)
        gap_events = [e for e in gaps if e.type == "gap"]
        assert gap_events and all(e.type_code == 1 and e.source.has_gid for e in gap_events)
        assert all(0 < e.msg_count <= 400 for e in gap_events)
        lost = {(e.first_ordinal + k) & 0xFFFFFFFF for e in gap_events for k in range(e.msg_count)}

        def offsets(ordinals):  # from the first message sent, serial arithmetic (ordinals wrap)
            rel = [((o - got[0] + 2**31) & 0xFFFFFFFF) - 2**31 for o in ordinals]
            return rel
        shift = min(offsets(got) + offsets(lost))
        arrived = {r - shift for r in offsets(got)}
        missing = {r - shift for r in offsets(lost)}
        assert arrived | missing == set(range(400))
        assert not arrived & missing
        assert sum(e.msg_count for e in gap_events) == b.counters()["gap_messages"] == 400 - len(got)
