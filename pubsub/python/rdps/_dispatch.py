# SPDX-License-Identifier: BSD-2-Clause
"""_dispatch.py - what subscribers receive (Message, MessageInfo, Event, Source) and the drain
that hands a context's collected batch (collect.h) to its endpoints after each rdps call."""
import collections
import threading

from ._ffi import EVENT_FORMAT, EVENT_SIZE, INFO_FORMAT, INFO_SIZE, ffi, lib, string

EVENT_BIT = lib.PYRDPS_EVENT_BIT
# How a subscriber takes its messages (Drain.receivers): fn(data), fn(data, info), or
# fn(data, info_records, record_index) (the queue of an iterating subscriber).
DATA, DATA_INFO, RAW = 0, 1, 2

Source = collections.namedtuple("Source", "gid qpn lid has_gid")
Source.__doc__ = ("Who sent a message or caused an event, as the device saw it (not "
                  "authenticated): gid (16 bytes), qpn, lid (InfiniBand without GRH), has_gid.")


class MessageInfo:
    """rdps_msg_info of one message, decoded when first read: topic, topic_id, session_id, seq,
    ordinal, publisher_ts_ns, fragments, retransmitted, source. Safe to keep."""

    __slots__ = ("topic", "_records", "_at", "_fields")

    def __init__(self, topic, records, at):
        self.topic = topic
        self._records = records
        self._at = at
        self._fields = None

    def _get(self, i):
        if self._fields is None:
            self._fields = INFO_FORMAT.unpack_from(self._records, self._at)
        return self._fields[i]

    topic_id = property(lambda self: self._get(0))
    publisher_ts_ns = property(lambda self: self._get(1))
    session_id = property(lambda self: self._get(2))
    seq = property(lambda self: self._get(3))
    ordinal = property(lambda self: self._get(4))
    fragments = property(lambda self: self._get(5))
    retransmitted = property(lambda self: bool(self._get(6)))

    @property
    def source(self):
        self._get(0)
        f = self._fields
        return Source(f[10], f[7], f[8], bool(f[9]))

    def __repr__(self):
        return ("MessageInfo(topic=%r, session_id=%#x, seq=%d, ordinal=%d, fragments=%d)"
                % (self.topic, self.session_id, self.seq, self.ordinal, self.fragments))


Message = collections.namedtuple("Message", "data info")
Message.__doc__ = "One received message: data (bytes) and info (MessageInfo)."

_EVENT_NAMES = {}


def event_type_name(code):
    """rdps_event_name: "loss", "gap", ..."""
    name = _EVENT_NAMES.get(code)
    if name is None:
        name = _EVENT_NAMES[code] = string(lib.rdps_event_name(code))
    return name


def _reason_name(code, reason):
    ev = ffi.new("rdps_event *")
    ev.type = code
    ev.reason = reason
    return string(lib.rdps_event_reason_name(ev))


class Event(collections.namedtuple(
        "Event", "type topic session_id first_seq count source receiver_id reason other_topic "
        "first_ordinal msg_count type_code reason_code")):
    """An rdps_event: type ("loss", "gap", "publisher_seen", ...; type_code the number), reason
    ("below_ring", "left", ... or ""; reason_code the number) and the fields rdps.h lists for
    each type (0 when not set)."""
    __slots__ = ()


def decode_event(topic, records, at, other):
    (code, reason, session_id, first_seq, count, receiver_id, first_ordinal, msg_count, qpn, lid,
     has_gid, gid) = EVENT_FORMAT.unpack_from(records, at)
    return Event(event_type_name(code), topic, session_id, first_seq, count,
                 Source(gid, qpn, lid, bool(has_gid)), receiver_id, _reason_name(code, reason),
                 other or None, first_ordinal, msg_count, code, reason)


class Drain:
    """Hands a context's batch to its endpoints. Only the thread that filled the batch (the
    context's owner, inside its own rdps call) drains it: another thread's rdps call may be
    writing to it. A callback that raises stops the drain there; what follows stays for the next
    call. A callback that polls does not drain again (the outer drain goes on)."""

    def __init__(self, batch):
        self.batch = batch  # the cdata; None once the context is closed
        self.next = 0  # the first entry not yet handed out
        self.receivers = {}  # token -> (DATA | DATA_INFO | RAW, function, topic)
        self.event_targets = {}  # token | EVENT_BIT -> endpoint
        self.draining = False

    def pending(self):
        b = self.batch
        return b is not None and b.count > self.next

    def run(self):
        b = self.batch
        if b is None or self.draining or b.count == self.next:
            return
        if b.writer != threading.get_ident():
            return
        self.draining = True
        try:
            self._run(b)
        finally:
            self.draining = False

    def _run(self, b):
        receivers = self.receivers
        while self.batch is b and self.next < b.count:
            start, end = self.next, b.count
            n = end - start
            tokens = ffi.unpack(b.token + start, n)
            offsets = ffi.unpack(b.offset + start, n)
            lengths = ffi.unpack(b.length + start, n)
            records = ffi.unpack(b.record + start, n)
            arena = ffi.buffer(b.arena, b.arena_used)[:] if b.arena_used else b""
            infos = ffi.buffer(b.infos, b.info_count * INFO_SIZE)[:] if b.info_count else b""
            events = (ffi.buffer(b.events, b.event_count * EVENT_SIZE)[:] if b.event_count
                      else b"")
            get = receivers.get
            i = 0
            try:
                for i, (token, off, length, record) in enumerate(
                        zip(tokens, offsets, lengths, records)):
                    receiver = get(token)
                    if receiver is not None:
                        mode, fn, topic = receiver
                        if mode == DATA:
                            fn(arena[off:off + length])
                        elif mode == DATA_INFO:
                            fn(arena[off:off + length], MessageInfo(topic, infos,
                                                                    record * INFO_SIZE))
                        else:
                            fn(arena[off:off + length], infos, record)
                    elif token & EVENT_BIT:
                        target = self.event_targets.get(token)
                        if target is not None:
                            other = arena[off:off + length].decode("ascii", "replace")
                            target._event(decode_event(target.topic, events,
                                                       record * EVENT_SIZE, other))
            except BaseException:
                self.next = start + i + 1
                raise
            self.next = end
        if self.batch is b and self.next == b.count:
            lib.pyrdps_batch_reset(b)
            self.next = 0
