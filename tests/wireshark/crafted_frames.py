# SPDX-License-Identifier: BSD-2-Clause
"""crafted_frames.py - rdps datagrams built by hand for the dissector test: valid and malformed
frames of every type, batches and ordinals (wire version 3), the same frames in version 2
(rdps 1.2, which rdps 1.3 rejects), keyed variants, foreign payloads and random mutations.

synthetic_frames() returns (datagram, verdict, v2_verdict): verdict is what rdps__frame_decode
must say (None: a mutation, whatever it says), v2_verdict what an rdps 1.2 receiver said of a
version 2 frame (None for other frames). The verdicts were worked out by hand from the rules in
core/proto/rdps_frame.c; check_dissector.py fails when the library disagrees (fix the list).
"""
import random
import struct

S, T = 0x5EC0FFEE, 0x9E3779B97F4A7C15  # T: every byte of the 64-bit topic id nonzero
HEADER_LEN = {1: 32, 2: 40, 3: 48}


def hdr(t, flags, session, topic, seq, msg_len, frag_offset, ts=1763900000123456789, reserved=0,
        version=3, ordinal=None, count=None):
    """A header of wire version 3 (48 bytes), 2 (40: no ordinal and count) or 1 (32: 32-bit
    topic id). Version 3 defaults: a DATA frame of BEGIN|END one whole message (count 1), any
    other DATA a fragment (count 0), ordinal 1000 + seq; a HEARTBEAT the next ordinal 1000 + seq
    and, reliable, the oldest retained datagram's ordinal msg_len before it; others 0 and 0."""
    if version == 1:
        return struct.pack("<BBHIIIIIQ", 1, t, flags, session, topic & 0xFFFFFFFF, seq, msg_len,
                           frag_offset, ts)
    h = struct.pack("<BBHIQIIIIQ", version, t, flags, session, topic, seq, msg_len,
                    frag_offset, reserved, ts)
    if version == 2:
        return h
    if ordinal is None:
        ordinal = (1000 + seq) & 0xFFFFFFFF if t in (1, 2) else 0
    if count is None:
        if t == 1:
            count = 1 if flags & 3 == 3 else 0
        elif t == 2 and flags & 8:
            count = (ordinal - msg_len) & 0xFFFFFFFF
        else:
            count = 0
    return h + struct.pack("<II", ordinal, count)


def nak_frame(ranges, rc=None, res=0, fl=0, version=3):
    """A NAK of receiver 0x12345678 (range count rc: the ranges' unless given)."""
    return hdr(3, fl, S, T, 0, 0, 0, version=version) + struct.pack(
        "<IHH", 0x12345678, len(ranges) if rc is None else rc, res) + b"".join(
        struct.pack("<II", a, b) for a, b in ranges)


def records(msgs):
    """A batch payload: each message as a u16 length and its bytes (core/proto/rdps_batch.h)."""
    return b"".join(struct.pack("<H", len(m)) + m for m in msgs)


def batch(msgs, seq=20, ordinal=500, flags=3, count=None, msg_len=None, payload=None):
    """A DATA frame of whole messages: count = len(msgs) unless given, msg_len = the payload's."""
    body = records(msgs) if payload is None else payload
    return hdr(1, flags, S, T, seq, len(body) if msg_len is None else msg_len, 0,
               ordinal=ordinal, count=len(msgs) if count is None else count) + body


def base_frames(version):
    """(frame, verdict) of every frame type, valid and malformed, built in `version` (2 or 3):
    the rules they test are the same in both versions, and so is each verdict."""
    def h(*a, **k):
        return hdr(*a, version=version, **k)

    hl = HEADER_LEN[version]
    short = (44 if version == 3 else 40) - 1  # a payload one byte short of a keyed trailer

    def nak(ranges, **k):
        return nak_frame(ranges, version=version, **k)

    def status(echo, extra=b""):
        return h(4, 0, S, T, 0, 0, 0) + struct.pack("<IIII", 0x12345678, 41, 900, echo) + extra

    def hb_parity(k, rtt, rcv, res=0):
        return h(2, 8 | 16, S, T, 96, 64, 0) + struct.pack("<HHII", k, res, rtt, rcv)

    return [
        (h(1, 3, S, T, 1, 5, 0) + b"hello", "OK"),
        (h(1, 3, S, T, 2, 0, 0), "OK"),                              # empty message
        (h(1, 1 | 8, S, T, 3, 2500, 0) + bytes(1000), "OK"),
        (h(1, 8, S, T, 4, 2500, 1000) + bytes(1000), "OK"),
        (h(1, 2 | 4 | 8, S, T, 5, 2500, 2000) + bytes(500), "OK"),   # repaired last fragment
        (h(2, 0, S, T, 6, 0, 0), "OK"),
        (h(2, 8, S, T, 6, 100, 0), "OK"),
        (h(2, 8, S, T, 6, 0x80000000, 0), "OK"),
        (nak([(10, 2)]), "OK"),
        (nak([(10, 2), (20, 1), (0xFFFFFFFF, 3)]), "OK"),
        (nak([(i * 3, 1) for i in range(64)]), "OK"),
        (nak([(10, 2)], fl=4), "OK"),                                  # repairs overtaken
        (status(0xFFFFFFFF), "OK"),
        (status(250), "OK"),
        (h(5, 0, S, 0, 77, 0, 0) + bytes(range(60)), "OK"),
        (h(5, 0, S, 0, 78, 0, 0), "OK"),
        (h(5, 0, S, T, 79, 0, 0) + bytes(4096), "OK"),
        (h(1, 3, S, 1 << 63, 7, 5, 0) + b"hello", "OK"),             # only the top bit set
        # parity repairs: PARITY frames (block start, k, index; the symbol), the parity NAK
        # (blocks and their missing counts) and the parity heartbeat (k, largest RTT, receivers)
        (h(6, 12, S, T, 64, 16, 0) + bytes(range(66)), "OK"),
        (h(6, 12, S, T, 0xFFFFFF80, 128, 127) + bytes(1402), "OK"),
        (nak([(64, 3)], fl=16), "OK"),
        (nak([(64, 3), (128, 128), (0xFFFFFFFE, 1)], fl=16), "OK"),
        (nak([(64, 1)], fl=16 | 4), "OK"),
        (hb_parity(16, 250, 3), "OK"),
        (hb_parity(128, 0, 0), "OK"),
        (hb_parity(2, 0xFFFFFFFF, 0xFFFFFFFF), "OK"),
        # malformed, still recognisably rdps
        (h(1, 3, S, T, 1, 5, 0)[:20], "SHORT"),
        (h(1, 3, S, T, 1, 5, 0)[:hl - 1], "SHORT"),
        (h(1, 1, S, T, 1, 5, 0) + b"hello", "BEGIN_END_MISMATCH"),
        (h(1, 3, S, T, 1, 16 * 1024 * 1024 + 1, 0) + b"x", "MSG_TOO_LARGE"),
        (h(1, 3, S, T, 1, 4, 0) + b"hello", "FRAG_EXCEEDS_MSG"),
        (h(1, 0, S, T, 1, 10, 4), "EMPTY_FRAGMENT"),
        (h(1, 3, S, 0, 1, 5, 0) + b"hello", "ZERO_TOPIC"),
        (h(1, 3, S, T, 1, 5, 0, reserved=1) + b"hello", "NONZERO_FIELD"),
        (h(1, 3, S, T, 1, 5, 0, reserved=0x80000000) + b"hello", "NONZERO_FIELD"),
        (h(2, 8, S, T, 6, 1, 0, reserved=7), "NONZERO_FIELD"),
        (h(2, 1, S, T, 6, 0, 0), "BAD_FLAGS"),
        (h(2, 0, S, T, 6, 5, 0), "NONZERO_FIELD"),
        (h(2, 8, S, T, 6, 0x80000001, 0), "BAD_RETAINED"),
        (h(2, 8, S, 0, 6, 1, 0), "ZERO_TOPIC"),
        (h(2, 8, S, T, 6, 1, 0) + b"\0", "BAD_BODY_LEN"),
        (h(3, 0, S, T, 0, 0, 8) + struct.pack("<IHHII", 1, 1, 0, 1, 1), "NONZERO_FIELD"),
        (h(3, 2, S, T, 0, 0, 0) + struct.pack("<IHHII", 1, 1, 0, 1, 1), "BAD_FLAGS"),
        (h(3, 0, S, T, 9, 0, 0) + struct.pack("<IHHII", 1, 1, 0, 1, 1), "NONZERO_FIELD"),
        (h(3, 0, S, T, 0, 0, 0) + b"\1\2\3", "BAD_BODY_LEN"),
        (nak([(10, 2)], fl=4 | 8), "BAD_FLAGS"),
        (nak([(10, 2)], res=1), "NONZERO_FIELD"),
        (nak([(10, 2)], rc=2), "BAD_RANGE_COUNT"),
        (nak([], rc=0), "BAD_RANGE_COUNT"),
        (nak([(i, 1) for i in range(65)]), "BAD_RANGE_COUNT"),
        (nak([(10, 0)]), "BAD_RANGE"),
        (nak([(10, 2), (10, 0x80000000)]), "BAD_RANGE"),
        (status(0, b"\0\0\0\0"), "BAD_BODY_LEN"),
        (status(0)[:hl + 12], "BAD_BODY_LEN"),
        (h(4, 0, S, T, 3, 0, 0) + bytes(16), "NONZERO_FIELD"),
        (h(4, 0, S, T, 0, 7, 0) + bytes(16), "NONZERO_FIELD"),
        (h(5, 8, S, T, 1, 0, 0), "BAD_FLAGS"),
        (h(5, 0, S, T, 1, 0, 0) + bytes(4097), "BODY_TOO_LARGE"),
        (h(6, 8, S, T, 64, 16, 0) + bytes(66), "BAD_FLAGS"),
        (h(6, 12 | 16, S, T, 64, 16, 0) + bytes(66), "BAD_FLAGS"),
        (h(6, 12, S, 0, 64, 16, 0) + bytes(66), "ZERO_TOPIC"),
        (h(6, 12, S, T, 64, 12, 0) + bytes(66), "BAD_BLOCK"),           # k not a power of 2
        (h(6, 12, S, T, 64, 256, 0) + bytes(66), "BAD_BLOCK"),          # k above 128
        (h(6, 12, S, T, 64, 1, 0) + bytes(66), "BAD_BLOCK"),
        (h(6, 12, S, T, 72, 16, 0) + bytes(66), "BAD_BLOCK"),           # seq not the start
        (h(6, 12, S, T, 64, 16, 128) + bytes(66), "BAD_PARITY_INDEX"),
        (h(6, 12, S, T, 64, 16, 0) + bytes(65), "BAD_BODY_LEN"),
        # (a symbol above the largest, 2 + 65535 bytes, does not fit a RoCEv2 UDP datagram)
        (h(6, 12, S, T, 64, 16, 0, reserved=0x80000000) + bytes(66), "NONZERO_FIELD"),
        (h(1, 3 | 16, S, T, 1, 5, 0) + b"hello", "BAD_FLAGS"),          # DATA flagged PARITY
        (nak([(64, 129)], fl=16), "BAD_RANGE"),
        (nak([(65, 1)], fl=16), "BAD_RANGE"),
        (nak([(64, 0)], fl=16), "BAD_RANGE"),
        (nak([(64, 1)], fl=16 | 8), "BAD_FLAGS"),
        (h(2, 16, S, T, 6, 0, 0) + struct.pack("<HHII", 16, 0, 1, 1), "BAD_FLAGS"),
        (h(2, 8 | 16, S, T, 6, 100, 0), "BAD_BODY_LEN"),
        (hb_parity(16, 250, 3) + b"\0", "BAD_BODY_LEN"),
        (hb_parity(16, 250, 3, res=1), "NONZERO_FIELD"),
        (hb_parity(24, 250, 3), "BAD_BLOCK"),
        (hb_parity(0, 250, 3), "BAD_BLOCK"),
        (hb_parity(256, 250, 3), "BAD_BLOCK"),
        (h(2, 8 | 16, S, T, 6, 0x80000001, 0) + struct.pack("<HHII", 16, 0, 1, 1),
         "BAD_RETAINED"),
        (h(2, 8 | 16, S, T, 6, 1, 4) + struct.pack("<HHII", 16, 0, 1, 1), "NONZERO_FIELD"),
        # the auth word's reserved bits, or no room for a trailer: a plain frame's reject
        (h(1, 3, S, T, 1, 45, 0, reserved=0x2000001) + bytes(45), "NONZERO_FIELD"),
        (h(1, 3, S, T, 1, short, 0, reserved=1) + bytes(short), "NONZERO_FIELD"),
    ]


def batch_frames():
    """(frame, verdict) of version 3 only: batches of whole messages and the ordinal and count
    words of every frame type, valid and malformed."""
    many = [bytes([i]) * (i % 7) for i in range(60)]
    return [
        # whole messages: a lone one is the payload, two or more are records
        (batch([b"hello", b"world!"]), "OK"),
        (batch([b"", b"", b"x"]), "OK"),                             # empty messages
        (batch([b"", b""]), "OK"),                                    # nothing but lengths
        (batch(many, ordinal=0xFFFFFFF0), "OK"),                      # ordinals wrap inside
        (batch([b"a" * 300, b"b" * 700, b"c"], flags=3 | 4 | 8), "OK"),   # a reliable repair
        (hdr(1, 3, S, T, 21, 6, 0, ordinal=7, count=1) + records([b"ab", b""]), "OK"),  # one
        (hdr(1, 3, S, T, 22, 5, 0, ordinal=0, count=1) + b"hello", "OK"),
        # fragments carry their message's ordinal and count 0
        (hdr(1, 1, S, T, 30, 2500, 0, ordinal=0xFFFFFFFF, count=0) + bytes(1000), "OK"),
        (hdr(1, 0, S, T, 31, 2500, 1000, ordinal=0xFFFFFFFF, count=0) + bytes(1000), "OK"),
        (hdr(1, 2, S, T, 32, 2500, 2000, ordinal=0xFFFFFFFF, count=0) + bytes(500), "OK"),
        # heartbeats: the next ordinal; reliable also the trail's (any value: serial arithmetic)
        (hdr(2, 0, S, T, 40, 0, 0, ordinal=12345, count=0), "OK"),
        (hdr(2, 8, S, T, 40, 9, 0, ordinal=12345, count=12300), "OK"),
        (hdr(2, 8, S, T, 40, 9, 0, ordinal=5, count=0xFFFFFFF0), "OK"),   # trail behind a wrap
        (hdr(2, 8, S, T, 40, 9, 0, ordinal=5, count=9), "OK"),            # trail ahead: hostile
        (hdr(2, 8, S, T, 40, 0, 0, ordinal=77, count=77), "OK"),
        # malformed batches: lengths past the end, counts that do not match
        (batch([], payload=records([b"abc"]) + b"\x09\x00xy", count=2), "BAD_BATCH"),
        (batch([], payload=records([b"abc", b"de"]) + b"!", count=2), "BAD_BATCH"),  # a byte after
        (batch([b"abc", b"de", b""], count=2), "BAD_BATCH"),          # more records than count
        (batch([b"abc", b"de"], count=3), "BAD_BATCH"),               # fewer records than count
        (batch([b"abcdef", b"de"], count=5), "BAD_BATCH"),            # ... a record cut short
        (batch([b"", b""], count=3), "BAD_COUNT"),                    # count past the payload
        (batch([b"abc", b"de"], count=0xFFFFFFFF), "BAD_COUNT"),
        (batch([b"abc"], count=0), "BAD_COUNT"),                      # whole message, count 0
        (hdr(1, 3, S, T, 23, 0, 0, count=2), "BAD_COUNT"),             # empty payload, count 2
        (hdr(1, 3, S, T, 23, 0, 0, count=0), "BAD_COUNT"),
        (hdr(1, 1, S, T, 30, 2500, 0, count=1) + bytes(1000), "BAD_COUNT"),   # fragments with
        (hdr(1, 0, S, T, 31, 2500, 1000, count=2) + bytes(1000), "BAD_COUNT"),  # a count
        (hdr(1, 2, S, T, 32, 2500, 2000, count=1) + bytes(500), "BAD_COUNT"),
        (hdr(1, 1, S, T, 33, 100, 0, count=2) + records([b"ab", b"cd"]), "BAD_COUNT"),
        # rules before the count: the first broken one is reported
        (batch([b"abc", b"de"], flags=1), "BEGIN_END_MISMATCH"),
        (batch([b"abc", b"de"], msg_len=8), "FRAG_EXCEEDS_MSG"),
        (batch([b"abc", b"de"], flags=3 | 16), "BAD_FLAGS"),
        # only DATA and HEARTBEAT carry ordinals; an unreliable heartbeat no trail
        (hdr(2, 0, S, T, 40, 0, 0, ordinal=1, count=1), "NONZERO_FIELD"),
        (hdr(3, 0, S, T, 0, 0, 0, ordinal=1) + struct.pack("<IHHII", 1, 1, 0, 1, 1),
         "NONZERO_FIELD"),
        (hdr(3, 0, S, T, 0, 0, 0, count=1) + struct.pack("<IHHII", 1, 1, 0, 1, 1),
         "NONZERO_FIELD"),
        (hdr(4, 0, S, T, 0, 0, 0, ordinal=3) + bytes(16), "NONZERO_FIELD"),
        (hdr(5, 0, S, T, 1, 0, 0, count=3) + bytes(8), "NONZERO_FIELD"),
        (hdr(6, 12, S, T, 64, 16, 0, ordinal=64) + bytes(66), "NONZERO_FIELD"),
        (hdr(6, 12, S, T, 64, 16, 0, count=1) + bytes(66), "NONZERO_FIELD"),
    ]


def small_limit_frames():
    """(limit, [(frame, verdict)]): receivers whose max_message_size is `limit` bytes accept a
    batch longer than that, not a message of it or a record of it."""
    limit = 100
    return limit, [
        (batch([b"a" * 100, b"b" * 100, b"c"]), "OK"),
        (batch([b"a" * 100, b"b" * 101]), "MSG_TOO_LARGE"),
        (batch([], count=2, payload=b"\xc8\x00" + b"z" * 50 + b"\0\0"),
         "BAD_BATCH"),                             # past the end before too large
        (hdr(1, 3, S, T, 1, 100, 0) + bytes(100), "OK"),
        (hdr(1, 3, S, T, 1, 101, 0) + bytes(101), "MSG_TOO_LARGE"),
        (hdr(1, 1, S, T, 1, 101, 0) + bytes(60), "MSG_TOO_LARGE"),
        (batch([], count=3, payload=records([b"a" * 100] * 2) + bytes(94)), "BAD_BATCH"),
    ]


def foreign_frames():
    """(payload, verdict) of payloads that are not rdps frames of a version the dissector
    knows: it must leave them alone."""
    return [
        (bytes([4]) + hdr(1, 3, S, T, 1, 5, 0)[1:] + b"hello", "BAD_VERSION"),
        (hdr(1, 3, S, T, 1, 5, 0, version=1) + b"hello", "BAD_VERSION"),   # version 1 DATA
        (hdr(2, 8, S, T, 6, 100, 0, version=1), "BAD_VERSION"),          # a 32-byte heartbeat
        (bytes([3, 9]) + hdr(1, 3, S, T, 1, 5, 0)[2:] + b"hello", "BAD_TYPE"),
        (hdr(1, 0x103, S, T, 1, 5, 0) + b"hello", "BAD_FLAGS"),
        (hdr(1, 3, 0, T, 1, 5, 0) + b"hello", "ZERO_SESSION"),
        (bytes([2, 9]) + hdr(1, 3, S, T, 1, 5, 0, version=2)[2:] + b"hello", "BAD_VERSION"),
        (hdr(1, 3, 0, T, 1, 5, 0, version=2) + b"hello", "BAD_VERSION"),
        (b"\3\1\0", "SHORT"),
        (b"\2\1\0", "BAD_VERSION"),
        (b"\1\1\0", "BAD_VERSION"),
        (b"\1\7\2\1" + bytes(252), "BAD_VERSION"),                       # a CM MAD's start
        (b"\3\7\2\1" + bytes(252), "BAD_TYPE"),
        (b"", "SHORT"),
    ]


def keyed(f, key_id, encrypt, rnd, version=3):
    """f as an authenticated domain sends it: the auth word in the reserved field and a trailer
    (random prefix, counter and tag: the dissector cannot verify a tag), the payload or body
    replaced by random bytes of its length when encrypted."""
    hl = HEADER_LEN[version]
    word = key_id | (0x1000000 if encrypt else 0)
    body = bytes(rnd.randrange(256) for _ in range(len(f) - hl)) if encrypt else f[hl:]
    # version 3 (rdps 1.3): prefix 16, counter u64, sent_s u32, tag 16; version 2: no sent_s
    sent_s = struct.pack("<I", rnd.randrange(1 << 32)) if version == 3 else b""
    trailer = bytes(rnd.randrange(256) for _ in range(16)) + \
        struct.pack("<Q", rnd.randrange(1 << 64)) + sent_s + \
        bytes(rnd.randrange(256) for _ in range(16))
    return f[:28] + struct.pack("<I", word) + f[32:hl] + body + trailer


def synthetic_frames(seed=10):
    """[(datagram, verdict or None, v2 verdict or None)], see the module's text."""
    rnd = random.Random(seed)
    v3 = base_frames(3) + batch_frames()
    v3_ok = [f for f, want in v3 if want == "OK"]
    # Keyed frames: every valid frame authenticated only and encrypted.
    for i, f in enumerate(v3_ok):
        v3.append((keyed(f, 1 + i, False, rnd), "OK"))
        v3.append((keyed(f, 0xFFFFFF - i, True, rnd), "OK"))
    v3 += [
        (keyed(hdr(1, 1, S, T, 1, 5, 0) + b"hello", 3, False, rnd), "BEGIN_END_MISMATCH"),
        (keyed(nak_frame([(10, 2)], rc=2), 3, False, rnd), "BAD_RANGE_COUNT"),
        (keyed(hdr(3, 0, S, T, 0, 0, 0) + bytes(12), 3, True, rnd), "BAD_RANGE_COUNT"),
        (keyed(hdr(4, 0, S, T, 0, 0, 0) + bytes(12), 3, True, rnd), "BAD_BODY_LEN"),
        (keyed(hdr(2, 8 | 16, S, T, 96, 64, 0) + struct.pack("<HHII", 24, 0, 250, 3), 3, False,
               rnd), "BAD_BLOCK"),
        (keyed(hdr(6, 12, S, T, 64, 16, 0) + bytes(65), 3, True, rnd), "BAD_BODY_LEN"),
        (keyed(hdr(2, 8 | 16, S, T, 6, 1, 0) + bytes(11), 3, True, rnd), "BAD_BODY_LEN"),
        (keyed(hdr(2, 8, S, T, 6, 1, 0), 0x1000000 >> 1, False, rnd), "OK"),
        # a keyed batch: records checked when in clear, only the count when encrypted
        (keyed(batch([b"abc", b"de"], count=3), 3, False, rnd), "BAD_BATCH"),
        (keyed(batch([b"", b""], count=3), 3, True, rnd), "BAD_COUNT"),
        (keyed(batch([b"abc"], count=0), 3, True, rnd), "BAD_COUNT"),
        (keyed(hdr(1, 1, S, T, 30, 2500, 0, count=1) + bytes(1000), 3, True, rnd), "BAD_COUNT"),
    ]
    v3 += foreign_frames()
    frames = [(f, want, None) for f, want in v3]
    # Version 2 (rdps 1.2): every frame BAD_VERSION now, each with its verdict of then.
    v2 = base_frames(2)
    for i, (f, want) in enumerate([x for x in v2 if x[1] == "OK"][:8]):
        v2.append((keyed(f, 1 + i, False, rnd, version=2), "OK"))
        v2.append((keyed(f, 1 + i, True, rnd, version=2), "OK"))
    frames += [(f, "BAD_VERSION", want) for f, want in v2]
    valid = [f for f, want, old in frames if want == "OK" or old == "OK"]
    for _ in range(500):                                                # mutations
        f = bytearray(rnd.choice(valid))
        for _ in range(rnd.randint(1, 3)):
            op = rnd.random()
            if op < 0.6 and f:
                f[rnd.randrange(min(len(f), 72))] = rnd.choice([0, 1, 2, 3, 5, 8, 0x80, 0xFF,
                                                                 rnd.randrange(256)])
            elif op < 0.8:
                del f[rnd.randrange(len(f) + 1):]
            else:
                f += bytes(rnd.randrange(1, 9))
        frames.append((bytes(f), None, None))
    for _ in range(100):                                                # random foreign bytes
        frames.append((bytes(rnd.randrange(256) for _ in range(rnd.randrange(64))), None, None))
    return frames
