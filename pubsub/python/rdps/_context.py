# SPDX-License-Identifier: BSD-2-Clause
"""_context.py - Context: one rdps_ctx (a device port and its queue pair), its configuration,
progress (poll, wait, the event-loop fd), counters and domain keys."""
import itertools
import threading
import time
import warnings
import weakref

from ._dispatch import Drain
from ._errors import CODES, Closed, NotOwner, check, error
from ._ffi import ffi, lib, string

_EAGAIN = CODES["EAGAIN"]
_ECLOSED = CODES["ECLOSED"]
_ENOTOWNER = CODES["ENOTOWNER"]

# rdps_config fields that take text, bytes and numbers (everything else in the struct).
_TEXT_FIELDS = ("device", "bind_ip", "group_range", "control_group", "domain_key_file", "peers")


def counter_names():
    """The counters' names, in rdps_counters order."""
    return [string(lib.rdps_counter_name(i)) for i in range(lib.rdps_counter_count())]


def counter_descriptions():
    """{name: description} of every counter."""
    return {string(lib.rdps_counter_name(i)): string(lib.rdps_counter_description(i))
            for i in range(lib.rdps_counter_count())}


def read_counters(fn, handle, call):
    """{name: value} from one of rdps_*_counters_sized."""
    n = lib.rdps_counter_count()
    values = ffi.new("uint64_t[]", n)
    check(fn(handle, ffi.cast("rdps_counters *", values), n * 8), call)
    return dict(zip(counter_names(), values))


class _State:
    """What the context's finalizer needs (never the Context itself)."""
    __slots__ = ("handle", "batch", "drain")

    def __init__(self, handle, batch, drain):
        self.handle, self.batch, self.drain = handle, batch, drain


def _destroy(state, from_finalizer):
    """rdps_ctx_destroy, then frees the collector, unless another thread owns the ctx: then rdps
    refused the destroy and its callbacks may still write to the collector, which is kept."""
    if state.handle is None:
        return True
    lib.rdps_ctx_destroy(state.handle)
    if lib.rdps_ctx_fd(state.handle) != _ECLOSED:
        if from_finalizer:
            warnings.warn("rdps: a Context collected by another thread than its owner's is "
                          "left open (close it on its own thread)", ResourceWarning)
        return False
    state.drain.batch = None
    state.drain.receivers.clear()
    state.drain.event_targets.clear()
    lib.pyrdps_batch_free(state.batch)
    state.handle = state.batch = None
    return True


class Context:
    """An rdps context: Context(device="loopback") or Context() ($RDPS_DEVICE, else the first
    active RDMA port). Keyword arguments set rdps_config's fields by name (announce_interval_ms=100,
    loss_rx_rate=0.01, domain_key=32 bytes, ...; rdps.h documents each). Use it from the thread
    that created it (or after handover()); close() (or a with block) destroys it and every
    publisher and subscriber on it, and every later call on them raises rdps.Closed."""

    def __init__(self, device=None, **config):
        cfg = ffi.new("rdps_config *")
        lib.rdps_config_init_sized(cfg, ffi.sizeof("rdps_config"))
        keep = []  # C strings rdps reads during create
        if device is not None:
            config["device"] = device
        for name, value in config.items():
            if name == "domain_key":
                value = bytes(value)
                if len(value) != lib.RDPS_DOMAIN_KEY_BYTES:
                    raise ValueError("domain_key: %d bytes, not %d"
                                     % (len(value), lib.RDPS_DOMAIN_KEY_BYTES))
                value = ffi.new("uint8_t[]", value)
            elif name in _TEXT_FIELDS:
                value = ffi.new("char[]", value.encode() if isinstance(value, str) else value)
            elif not hasattr(cfg, name) or name.endswith("_"):
                raise TypeError("Context: no rdps_config field %r" % name)
            elif isinstance(value, bool):
                value = int(value)
            keep.append(value)
            try:
                setattr(cfg, name, value)
            except (TypeError, OverflowError) as e:
                raise type(e)("Context: %s=%r: %s" % (name, value, e)) from None
        out = ffi.new("rdps_ctx_t **")
        check(lib.rdps_ctx_create_sized(cfg, ffi.sizeof("rdps_config"), lib.RDPS_VERSION_NUMBER,
                                        out), "rdps_ctx_create")
        handle = out[0]
        batch = lib.pyrdps_batch_new()
        if batch == ffi.NULL:
            lib.rdps_ctx_destroy(handle)
            raise MemoryError("rdps: the message collector")
        self._drain = Drain(batch)
        self._state = _State(handle, batch, self._drain)
        self._handle = handle
        self._fd = lib.rdps_ctx_fd(handle)
        self._tokens = itertools.count(1)
        self._endpoints = {}  # token -> Publisher or Subscriber, until closed
        self._aio_driver = None  # rdps.aio.Driver running this context, if any
        self._finalizer = weakref.finalize(self, _destroy, self._state, True)
        self.device = device

    # ---- life ----
    def close(self):
        """Destroys the context and its publishers and subscribers (idempotent). Raises
        rdps.NotOwner, leaving it open, when called from a thread that does not own it."""
        if self._state.handle is None:
            return
        if not _destroy(self._state, False):
            raise NotOwner(_ENOTOWNER, "Context.close: another thread owns the context",
                           "rdps_ctx_destroy")
        self._finalizer.detach()
        for endpoint in list(self._endpoints.values()):
            endpoint._closed_with_context()
        self._endpoints.clear()

    @property
    def closed(self):
        return self._state.handle is None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "<rdps.Context device=%r%s>" % (self.device, " closed" if self.closed else "")

    def handover(self):
        """rdps_ctx_handover: the next thread that calls on the context becomes its owner."""
        check(lib.rdps_ctx_handover(self._handle), "rdps_ctx_handover")

    # ---- progress ----
    def poll(self, budget=0):
        """rdps_ctx_poll: progress, and the callbacks of what it received. The number of datagrams
        handled."""
        rc = lib.rdps_ctx_poll(self._handle, budget)
        self._drain.run()
        return check(rc, "rdps_ctx_poll")

    def wait(self, timeout=None):
        """rdps_ctx_wait: polls, sleeps on the fd up to `timeout` seconds (None: until the next
        timer) for work, polls again. The datagrams handled."""
        ms = lib.rdps_ctx_next_timeout_ms(self._handle) if timeout is None else \
            max(0, int(timeout * 1000))
        rc = lib.rdps_ctx_wait(self._handle, ms)
        self._drain.run()
        return check(rc, "rdps_ctx_wait")

    def run(self, duration=None, until=None):
        """Waits and delivers for `duration` seconds (None: for ever), or until `until()` is true."""
        deadline = None if duration is None else time.monotonic() + duration
        while until is None or not until():
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return
            self.wait(0.1 if left is None else min(left, 0.1))

    @property
    def fd(self):
        """The event fd (rdps_ctx_fd): readable means "call poll()"; sleep on it only after arm()
        returned True."""
        return self._fd

    def arm(self):
        """rdps_ctx_arm: True when armed (sleep on fd, at most next_timeout_ms), False when work is
        already waiting (poll, then arm again)."""
        rc = lib.rdps_ctx_arm(self._handle)
        self._drain.run()
        if rc == _EAGAIN:
            return False
        check(rc, "rdps_ctx_arm")
        return True

    @property
    def next_timeout_ms(self):
        """Milliseconds to the context's next timer (rdps_ctx_next_timeout_ms)."""
        return lib.rdps_ctx_next_timeout_ms(self._handle)

    def flush(self):
        """rdps_ctx_flush: posts every datagram held by RDPS_SEND_MORE, batching or lingering."""
        rc = lib.rdps_ctx_flush(self._handle)
        self._drain.run()
        if self._aio_driver is not None:
            self._aio_driver.kick()
        check(rc, "rdps_ctx_flush")

    @property
    def sends_pending(self):
        return lib.rdps_ctx_sends_pending(self._handle)

    @property
    def max_datagram_payload(self):
        return lib.rdps_ctx_max_datagram_payload(self._handle)

    @property
    def dropped(self):
        """Messages and events the binding could not keep (out of memory)."""
        b = self._state.batch
        return 0 if b is None else b.dropped

    def counters(self):
        """The context's counters, {name: value} (rdps_ctx_counters)."""
        return read_counters(lib.rdps_ctx_counters_sized, self._handle, "rdps_ctx_counters")

    # ---- topics ----
    def topic_group(self, topic):
        """The multicast group `topic` maps to in this context."""
        buf = ffi.new("char[]", 64)
        check(lib.rdps_topic_group(self._handle, _topic(topic), buf, 64), "rdps_topic_group")
        return string(buf)

    def map_topic(self, topic, group):
        check(lib.rdps_ctx_map_topic(self._handle, _topic(topic), group.encode()),
              "rdps_ctx_map_topic")

    def publisher(self, topic, **opts):
        """A Publisher of `topic` on this context (rdps.Publisher's arguments)."""
        from ._endpoints import Publisher
        return Publisher(self, topic, **opts)

    def subscriber(self, topic, on_message=None, **opts):
        """A Subscriber of `topic` on this context (rdps.Subscriber's arguments)."""
        from ._endpoints import Subscriber
        return Subscriber(self, topic, on_message, **opts)

    # ---- domain keys ----
    def key_add(self, key, key_id):
        check(lib.rdps_ctx_key_add(self._handle, _key(key), key_id), "rdps_ctx_key_add")

    def key_use(self, key_id):
        check(lib.rdps_ctx_key_use(self._handle, key_id), "rdps_ctx_key_use")

    def key_remove(self, key_id):
        check(lib.rdps_ctx_key_remove(self._handle, key_id), "rdps_ctx_key_remove")

    @property
    def key_in_use(self):
        """The id frames are sent under (0: keyless)."""
        return lib.rdps_ctx_key_in_use(self._handle)

    # ---- endpoints ----
    def _register(self, endpoint):
        if self._state.handle is None:
            raise Closed(_ECLOSED, "the context is closed", "rdps")
        token = next(self._tokens)
        self._endpoints[token] = endpoint
        if self._aio_driver is not None:
            self._aio_driver.kick()  # the new endpoint's join starts at the next poll
        return token

    def _unregister(self, token, destroyed):
        self._endpoints.pop(token, None)
        self._drain.receivers.pop(token, None)
        self._drain.event_targets.pop(token | lib.PYRDPS_EVENT_BIT, None)
        if destroyed and self._state.batch is not None:
            lib.pyrdps_sink_forget(self._state.batch, token)


def _topic(topic):
    return topic.encode() if isinstance(topic, str) else bytes(topic)


def _key(key):
    key = bytes(key)
    if len(key) != lib.RDPS_DOMAIN_KEY_BYTES:
        raise ValueError("a domain key is %d bytes, not %d" % (lib.RDPS_DOMAIN_KEY_BYTES, len(key)))
    return ffi.new("uint8_t[]", key)


def read_domain_key(path):
    """rdps_domain_key_read: (key bytes, key id) from a key file (rdps-keygen writes them)."""
    key = ffi.new("uint8_t[]", lib.RDPS_DOMAIN_KEY_BYTES)
    key_id = ffi.new("uint32_t *")
    rc = lib.rdps_domain_key_read(str(path).encode(), key, key_id)
    if rc < 0:
        raise error(rc, "rdps_domain_key_read")
    return bytes(key), key_id[0]


def topic_id(topic):
    """The 64-bit id of a topic name (rdps_topic_id); 0 for a name that breaks the rules."""
    return lib.rdps_topic_id(_topic(topic))
