# SPDX-License-Identifier: BSD-2-Clause
"""_endpoints.py - Publisher (send, flags, zero-copy claims) and Subscriber (callbacks, an
iterator, events) over rdps_pub_t and rdps_sub_t."""
import collections
import time

from ._context import read_counters, _topic
from ._dispatch import DATA, DATA_INFO, RAW, Message, MessageInfo
from ._errors import CODES, Closed, check, error
from ._ffi import INFO_SIZE as _INFO_SIZE
from ._ffi import ffi, lib

_EAGAIN = CODES["EAGAIN"]
_ECLOSED = CODES["ECLOSED"]
_ENOTOWNER = CODES["ENOTOWNER"]
SEND_MORE = lib.RDPS_SEND_MORE

_FLOW = {"max": lib.RDPS_FLOW_MAX, "min": lib.RDPS_FLOW_MIN, "tagged": lib.RDPS_FLOW_TAGGED}
_TRANSPORT = {"multicast": lib.RDPS_TRANSPORT_MULTICAST, "unicast": lib.RDPS_TRANSPORT_UNICAST,
              "auto": lib.RDPS_TRANSPORT_AUTO}
_BATCHING = {"auto": lib.RDPS_BATCH_AUTO, "off": lib.RDPS_BATCH_OFF}


def _destroy_refused(counters_fn, handle):
    """After a destroy (which returns nothing): True when rdps refused it because another thread
    owns the context."""
    values = ffi.new("uint64_t[]", lib.rdps_counter_count())
    return counters_fn(handle, ffi.cast("rdps_counters *", values), len(values) * 8) == _ENOTOWNER


def _fill_opts(ctype, opts, kind):
    """An rdps_pub_opts / rdps_sub_opts from keyword arguments named as its fields; enums by name
    ("min", "unicast", "off") or number. Returns the struct and the C strings it points to."""
    struct = ffi.new(ctype)
    keep = []
    for name, value in opts.items():
        if name in ("on_event", "event_user") or name.endswith("_") or not hasattr(struct, name):
            raise TypeError("%s: no option %r" % (kind, name))
        table = {"flow": _FLOW, "transport": _TRANSPORT, "batching": _BATCHING}.get(name)
        if table is not None and isinstance(value, str):
            if value not in table:
                raise ValueError("%s: %s=%r: one of %s" % (kind, name, value, ", ".join(table)))
            value = table[value]
        elif name == "group":
            value = ffi.new("char[]", value.encode())
            keep.append(value)
        elif isinstance(value, bool):
            value = int(value)
        try:
            setattr(struct, name, value)
        except (TypeError, OverflowError) as e:
            raise type(e)("%s: %s=%r: %s" % (kind, name, value, e)) from None
    return struct, keep


class _Endpoint:
    """What publishers and subscribers share: the context, the token the collector files their
    messages and events under, events, close."""

    def __init__(self, ctx, topic, on_event, events_kept):
        self.context = ctx
        self.topic = topic
        self._on_event = on_event
        self.events = collections.deque(maxlen=events_kept)
        self._token = ctx._register(self)
        self._open = True

    def _event(self, event):
        if self._on_event is not None:
            self._on_event(event)
        else:
            self.events.append(event)

    def _closed_with_context(self):
        self._open = False

    @property
    def closed(self):
        return not self._open

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def wait_ready(self, timeout=10.0):
        """Polls the context until ready (the group joined); raises rdps.TimedOut after
        `timeout` seconds, rdps.Closed once closed."""
        deadline = time.monotonic() + timeout
        while not self.ready:
            if not self._open:
                raise Closed(_ECLOSED, "%s is closed" % self, "wait_ready")
            if time.monotonic() >= deadline:
                raise error(CODES["ETIMEDOUT"], "wait_ready")
            self.context.wait(0.01)


class Publisher(_Endpoint):
    """A publisher of `topic` on `ctx`. Keyword arguments set rdps_pub_opts by name: reliable,
    ring_bytes, flow ("max", "min", "tagged"), flow_tag, flow_min_receivers, receiver_timeout_ms,
    rate_limit, transport ("multicast", "unicast", "auto"), parity_k, parity_proactive, batching
    ("auto", "off"), batch_linger_us, concurrent, concurrent_queue_bytes, group. Events (subscribers
    seen and gone, receivers evicted, ...) go to on_event(event), or to .events (the latest 1024)."""

    def __init__(self, ctx, topic, *, on_event=None, **opts):
        opts_struct, keep = _fill_opts("rdps_pub_opts *", opts, "Publisher")
        super().__init__(ctx, topic, on_event, 1024)
        out = ffi.new("rdps_pub_t **")
        rc = lib.pyrdps_pub_create(ctx._handle, _topic(topic), opts_struct,
                                   ctx._state.batch or ffi.NULL, self._token, 1, out)
        if rc < 0:
            exc = error(rc, "rdps_pub_create")
            ctx._unregister(self._token, True)
            self._open = False
            raise exc
        del keep
        self._handle = out[0]
        self._drain = ctx._drain
        self._drain.event_targets[self._token | lib.PYRDPS_EVENT_BIT] = self
        self._claim = None

    def __repr__(self):
        return "<rdps.Publisher %r%s>" % (self.topic, "" if self._open else " closed")

    def close(self):
        """rdps_pub_destroy (idempotent; releases an outstanding claim)."""
        if not self._open:
            return
        self._release_claim()
        lib.rdps_pub_destroy(self._handle)
        if _destroy_refused(lib.rdps_pub_counters_sized, self._handle):
            raise error(_ENOTOWNER, "rdps_pub_destroy")
        self._open = False
        self.context._unregister(self._token, True)

    def _closed_with_context(self):
        self._release_claim()
        super()._closed_with_context()

    def send(self, data, flags=0, *, block=False, timeout=None):
        """rdps_pub_send_ex: sends `data` (bytes, or anything with the buffer protocol:
        bytearray, memoryview, array; copied). flags: rdps.SEND_MORE holds it for the next one.
        Raises rdps.TryAgain on back-pressure (nothing sent) unless block: then it waits on the
        context (at most `timeout` seconds, None: for ever) and retries."""
        handle = self._handle
        if type(data) is not bytes:
            data = ffi.from_buffer(data)
        rc = lib.rdps_pub_send_ex(handle, data, len(data), flags)
        if rc == 0:
            self._drain.run()
            if self.context._aio_driver is not None:
                self.context._aio_driver.kick()  # held datagrams go at its next pass
            return
        if rc == _EAGAIN and block:
            rc = self._send_blocking(data, flags, timeout)
            if rc == 0:
                return
        self._drain.run()
        raise error(rc, "rdps_pub_send")

    def _send_blocking(self, data, flags, timeout):
        deadline = None if timeout is None else time.monotonic() + timeout
        ctx = self.context
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return _EAGAIN
            ctx.wait(0.001 if left is None else min(left, 0.001))
            rc = lib.rdps_pub_send_ex(self._handle, data, len(data), flags)
            if rc != _EAGAIN:
                self._drain.run()
                return rc

    def claim(self, length=None, flags=0):
        """rdps_pub_claim_ex: room for a message of `length` bytes (None: one datagram's payload)
        written in place. A Claim, used as a context manager:

            with pub.claim(64) as c:
                struct.pack_into("<QQ", c.buffer, 0, seq, price)
                c.length = 16        # commit 16 bytes (default: the whole claim)

        A normal exit commits, an exception aborts. Raises rdps.TryAgain (nothing held) or
        rdps.Busy (a claim is outstanding)."""
        claim = ffi.new("rdps_claim *")
        if length is None:
            length = lib.rdps_ctx_max_datagram_payload(self.context._handle)
        check(lib.rdps_pub_claim_ex(self._handle, length, flags, claim), "rdps_pub_claim")
        self._claim = Claim(self, claim)
        return self._claim

    def _release_claim(self):
        if self._claim is not None:
            self._claim._invalidate()
            self._claim = None

    @property
    def ready(self):
        """True once the group is joined (rdps_pub_ready)."""
        return lib.rdps_pub_ready(self._handle) == 1

    @property
    def session(self):
        return lib.rdps_pub_session(self._handle)

    @property
    def max_message_size(self):
        return lib.rdps_pub_max_message_size(self._handle)

    @property
    def subscriber_count(self):
        return lib.rdps_pub_subscriber_count(self._handle)

    @property
    def receivers_behind(self):
        return lib.rdps_pub_receivers_behind(self._handle)

    def counters(self):
        return read_counters(lib.rdps_pub_counters_sized, self._handle, "rdps_pub_counters")


class Claim:
    """A claimed message (Publisher.claim). buffer: a writable memoryview of the claimed room,
    valid until commit() or abort() (then released: using it raises ValueError). Do not keep
    views sliced from it past the commit: they point at rdps's send buffers."""

    def __init__(self, pub, claim):
        self._pub = pub
        self._claim = claim
        self.capacity = claim.capacity
        self.length = claim.capacity
        self.buffer = memoryview(ffi.buffer(claim.data, claim.capacity))

    def _invalidate(self):
        if self.buffer is not None:
            self.buffer.release()
            self.buffer = None

    def commit(self, length=None):
        """rdps_pub_commit of the first `length` bytes (default: self.length)."""
        if self.buffer is None:
            raise Closed(_ECLOSED, "the claim is no longer outstanding", "rdps_pub_commit")
        n = self.length if length is None else length
        rc = lib.rdps_pub_commit(self._pub._handle, self._claim, n)
        still_held = rc == _ENOTOWNER or (
            rc == _EAGAIN and n > self._pub.context.max_datagram_payload)
        if not still_held:  # commit ends the claim, except a long claim's RDPS_EAGAIN
            self._invalidate()
            self._pub._claim = None
        self._pub._drain.run()
        check(rc, "rdps_pub_commit")

    def abort(self):
        """rdps_pub_abort: gives the room back unsent."""
        if self.buffer is None:
            return
        self._invalidate()
        self._pub._claim = None
        lib.rdps_pub_abort(self._pub._handle, self._claim)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if self.buffer is None:
            return
        if exc_type is None:
            self.commit()
        else:
            self.abort()


class Subscriber(_Endpoint):
    """A subscriber of `topic` on `ctx`.

    on_message(data, info): called for every message (data: bytes; info: MessageInfo) from the
    context's poll/wait (and from a send on the same context), outside rdps: it may raise (the
    exception comes out of that call; the messages after it stay for the next one), close
    anything or send. with_info=False calls on_message(data) alone (faster). Without on_message
    the messages queue (at most queue_size; more are counted in .overflow) for receive() and
    iteration: `for msg in sub` (msg.data, msg.info) and `async for` (rdps.aio).

    Keyword arguments set rdps_sub_opts by name: reliable, from_oldest, flow_tag, transport,
    group. Events (gap, loss, publisher_seen, ...) go to on_event(event), or to .events (the
    latest 1024)."""

    def __init__(self, ctx, topic, on_message=None, *, on_event=None, with_info=True,
                 queue_size=65536, **opts):
        opts_struct, keep = _fill_opts("rdps_sub_opts *", opts, "Subscriber")
        super().__init__(ctx, topic, on_event, 1024)
        self.overflow = 0
        self._queue = collections.deque()
        self._queue_size = queue_size
        self._waiters = []  # asyncio futures of rdps.aio
        if on_message is None:
            queue, size = self._queue, queue_size

            def enqueue(data, records, at):
                if len(queue) >= size:
                    self.overflow += 1
                    return
                queue.append(Message(data, MessageInfo(topic, records, at * _INFO_SIZE)))
                if self._waiters:
                    self._wake()
            receiver = (RAW, enqueue, topic)
        else:
            receiver = (DATA_INFO if with_info else DATA, on_message, topic)
        out = ffi.new("rdps_sub_t **")
        rc = lib.pyrdps_sub_create(ctx._handle, _topic(topic), opts_struct,
                                   ctx._state.batch or ffi.NULL, self._token, 1, out)
        if rc < 0:
            exc = error(rc, "rdps_sub_create")
            ctx._unregister(self._token, True)
            self._open = False
            raise exc
        del keep
        self._handle = out[0]
        ctx._drain.receivers[self._token] = receiver
        ctx._drain.event_targets[self._token | lib.PYRDPS_EVENT_BIT] = self

    def __repr__(self):
        return "<rdps.Subscriber %r%s>" % (self.topic, "" if self._open else " closed")

    def close(self):
        """rdps_sub_destroy (idempotent). Queued messages stay readable."""
        if not self._open:
            return
        lib.rdps_sub_destroy(self._handle)
        if _destroy_refused(lib.rdps_sub_counters_sized, self._handle):
            raise error(_ENOTOWNER, "rdps_sub_destroy")
        self._open = False
        self.context._unregister(self._token, True)
        self._wake()

    def _closed_with_context(self):
        super()._closed_with_context()
        self._wake()

    def _wake(self):
        waiters, self._waiters = self._waiters, []
        for fut in waiters:
            if not fut.done():
                fut.set_result(None)

    @property
    def ready(self):
        """True once the group is joined (rdps_sub_ready)."""
        return lib.rdps_sub_ready(self._handle) == 1

    def counters(self):
        return read_counters(lib.rdps_sub_counters_sized, self._handle, "rdps_sub_counters")

    def receive(self, timeout=None):
        """The next queued Message, waiting on the context up to `timeout` seconds (None: for
        ever); None on timeout, or once closed and drained."""
        queue = self._queue
        if queue:
            return queue.popleft()
        deadline = None if timeout is None else time.monotonic() + timeout
        ctx = self.context
        while not queue:
            if not self._open:
                return None
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return None
            ctx.wait(0.1 if left is None else min(left, 0.1))
        return queue.popleft()

    def __iter__(self):
        """Messages as they come, for as long as the subscriber is open."""
        while True:
            msg = self.receive()
            if msg is None:
                return
            yield msg

    def __aiter__(self):
        from .aio import subscriber_messages
        return subscriber_messages(self)

