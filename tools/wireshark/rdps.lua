-- SPDX-License-Identifier: BSD-2-Clause
-- rdps.lua - Wireshark/tshark dissector for rdps frames (wire format version 3; version 2 of
-- rdps 1.2 for old captures) in RoCEv2 UD SENDs.
--
-- Wireshark's InfiniBand dissector decodes RoCEv2 (UDP 4791) and offers the payload of a
-- SEND, after BTH and DETH, to the "infiniband.payload" heuristic dissectors. This file
-- registers one that claims a UD payload only when it starts like an rdps header: version 3
-- (or 2), a known frame type, no flag bits outside the five defined ones and a nonzero session
-- (rdps has no magic number; these are the fields every rdps datagram carries). Frames of
-- version 1 (32-byte header) are left unclaimed like any other foreign payload. A claimed
-- frame is then checked against every rule of rdps__frame_decode() (core/proto/rdps_frame.c,
-- layout in core/proto/rdps_frame.h, batches in core/proto/rdps_batch.h) in the same order,
-- and the first rule it breaks is shown as expert info and in the field rdps.reject with the C
-- reject name (SHORT, BAD_COUNT, BAD_BATCH, ...), the names the library's bad_frames counters use.
--
-- Version 3 (rdps 1.3): a 48-byte header whose words at 40 and 44 are a message ordinal and a
--         count (rdps.ordinal, rdps.count). A DATA datagram of whole messages carries count >= 1
--         of them, from ordinal on: one is the payload itself, two or more are records (u16
--         length and the bytes) filling the payload exactly. Each message is shown as its own
--         rdps.msg subtree: rdps.msg.ordinal, rdps.msg.len, rdps.msg.data (a lone message too,
--         so a filter on rdps.msg.ordinal finds it batched or not). A fragment (count 0) shows
--         its message's ordinal (rdps.data.msg_ordinal); every DATA frame the ordinal after it
--         (rdps.data.next_ordinal). A HEARTBEAT tells the next message's ordinal
--         (rdps.heartbeat.next_ordinal) and, reliable, the oldest retained datagram's
--         (rdps.heartbeat.trail_ordinal).
-- Version 2 (rdps 1.2; 40-byte header, no ordinal or count): still decoded, so old captures
--         read as they did, but rdps 1.3 drops such a frame as BAD_VERSION: rdps.reject says
--         so (with a warning naming the release), and the rules of version 2 are checked too
--         (rdps.v2.reject, what an rdps 1.2 receiver would say).
--
-- Load: tshark -X lua_script:/path/to/rdps.lua -r capture.pcap
--       or copy it to ~/.local/lib/wireshark/plugins/ (Wireshark >= 3.6 personal plugins).
-- Filter: rdps, rdps.type == 3, rdps.session == 0x..., rdps.seq, rdps.ordinal, rdps.count > 1,
--         rdps.msg.ordinal == N, rdps.flags.retransmit, rdps.nak.range.start, rdps.reject, ...
-- Parity repairs: a PARITY frame (type 6) is a parity symbol of a block of a reliable stream:
--         rdps.parity.block_start (= seq), rdps.parity.k (= msg_len), rdps.parity.index
--         (= frag_offset), rdps.parity.symbol. A NAK flagged PARITY (rdps.flags.parity) asks
--         for parity symbols: each range is a block, rdps.nak.block.start and
--         rdps.nak.block.missing (datagrams of the block the receiver lacks). A reliable
--         HEARTBEAT flagged PARITY carries rdps.heartbeat.parity_k, .max_rtt_us, .receivers.
-- Authenticated domains (rdps_config.domain_key): a keyed frame has its reserved word set to
--         the auth word (key id in bits 0..23, ENCRYPTED bit 24) and a 44-byte trailer
--         (nonce prefix 16, counter u64, sent_s u32, Poly1305 tag 16; core/transport/rdps_auth.h;
--         rdps 1.2 had 40 bytes, without sent_s). It is shown with rdps.auth.key_id,
--         rdps.auth.encrypted, rdps.auth.prefix, .counter, .sent_s, .tag;
--         the frame inside is checked as a keyed receiver sees it (trailer stripped); an
--         encrypted payload or body is shown as opaque rdps.auth.ciphertext (a batch's records
--         too: only its count is checked against the length). The tag is not verified (no key
--         here).
-- Preference: rdps.max_message_size (tshark -o rdps.max_message_size:N) when the receivers
--         run with another rdps_config.max_message_size than the 16 MiB default.

local rdps = Proto("rdps", "rdps pub/sub over RDMA UD")

-- Header (version 3): version u8 | type u8 | flags u16 | session u32 | topic u64 | seq u32
--         | msg_len u32 | frag_offset u32 | reserved u32 | timestamp_ns u64 | ordinal u32
--         | count u32, little-endian; bodies at 48. Version 2 ends after timestamp_ns (40).
local VERSION = 3
local HEADER_LEN = { [2] = 40, [3] = 48 }
local RELEASE = { [2] = "rdps 1.2", [3] = "rdps 1.3" }
-- Decoder limits: the library's defaults (struct rdps_frame_limits); the message size is
-- configurable (rdps_config.max_message_size), so it is a preference here too.
local MAX_MSG_LEN = 16 * 1024 * 1024
local MAX_NAK_RANGES = 64
local MAX_ANNOUNCE_LEN = 4096
local MAX_RANGE_COUNT = 0x7FFFFFFF
local MAX_RETAINED = 0x80000000
-- Bodies, relative to the end of the header: a NAK's receiver, range count, reserved and
-- ranges; a STATUS's 16 bytes; a parity heartbeat's k, reserved, largest RTT, receivers.
local NAK_RANGES, NAK_RANGE_LEN, STATUS_BODY, HB_PARITY_BODY = 8, 8, 16, 12
-- Batches (rdps_batch.h): each record's length prefix.
local RECORD_LEN = 2
-- Parity (rdps_frame.h): largest block size k and parity index; a symbol's length bounds.
local PARITY_MAX_K = 128
local PARITY_MAX_INDEX = 128
local PARITY_MIN_BODY = 2 + 64
local PARITY_MAX_BODY = 2 + 0xFFFF
local NO_ECHO = 0xFFFFFFFF
-- Authenticated domains: the auth word and the trailer (core/transport/rdps_auth.h).
-- The trailer by wire version: 1.2's had no sent_s.
local TRAILER_LEN = { [2] = 40, [3] = 44 }
local AUTH_KEY_MASK = 0xFFFFFF
local AUTH_ENCRYPTED = 0x1000000
local AUTH_RESERVED = 0xFE000000
local WRAP = 0x100000000 -- serial arithmetic on 32-bit sequences and ordinals

local T_DATA, T_HEARTBEAT, T_NAK, T_STATUS, T_ANNOUNCE, T_PARITY = 1, 2, 3, 4, 5, 6
local type_names = {
    [T_DATA] = "DATA", [T_HEARTBEAT] = "HEARTBEAT", [T_NAK] = "NAK",
    [T_STATUS] = "STATUS", [T_ANNOUNCE] = "ANNOUNCE", [T_PARITY] = "PARITY",
}
local F_BEGIN, F_END, F_RETRANSMIT, F_RELIABLE, F_PARITY = 0x1, 0x2, 0x4, 0x8, 0x10
local F_DATA = 0xF      -- the flags a DATA frame may carry
local F_DEFINED = 0x1F  -- every flag some frame type defines
local F_UNDEFINED = 0xFFFF - F_DEFINED

local band = bit32.band

local pf = {
    version = ProtoField.uint8("rdps.version", "Version", base.DEC),
    type = ProtoField.uint8("rdps.type", "Type", base.DEC, type_names),
    flags = ProtoField.uint16("rdps.flags", "Flags", base.HEX),
    f_begin = ProtoField.bool("rdps.flags.begin", "BEGIN", 16, nil, F_BEGIN),
    f_end = ProtoField.bool("rdps.flags.end", "END", 16, nil, F_END),
    f_retransmit = ProtoField.bool("rdps.flags.retransmit", "RETRANSMIT", 16, nil, F_RETRANSMIT),
    f_reliable = ProtoField.bool("rdps.flags.reliable", "RELIABLE", 16, nil, F_RELIABLE),
    f_parity = ProtoField.bool("rdps.flags.parity", "PARITY", 16, nil, F_PARITY),
    f_unknown = ProtoField.uint16("rdps.flags.unknown", "Undefined bits", base.HEX, nil,
                                  F_UNDEFINED),
    session = ProtoField.uint32("rdps.session", "Session", base.HEX),
    topic = ProtoField.uint64("rdps.topic", "Topic id", base.HEX),
    seq = ProtoField.uint32("rdps.seq", "Sequence", base.DEC),
    msg_len = ProtoField.uint32("rdps.msg_len", "Message length", base.DEC),
    frag_offset = ProtoField.uint32("rdps.frag_offset", "Fragment offset", base.DEC),
    reserved = ProtoField.uint32("rdps.reserved", "Reserved", base.HEX),
    timestamp_ns = ProtoField.uint64("rdps.timestamp_ns", "Timestamp (ns)", base.DEC),
    time = ProtoField.absolute_time("rdps.time", "Timestamp", base.UTC),
    ordinal = ProtoField.uint32("rdps.ordinal", "Ordinal", base.DEC),
    count = ProtoField.uint32("rdps.count", "Count", base.DEC),
    body_len = ProtoField.uint32("rdps.body_len", "Payload/body length", base.DEC),
    -- DATA
    payload = ProtoField.bytes("rdps.data.payload", "Fragment payload"),
    frag_end = ProtoField.uint32("rdps.data.frag_end", "Fragment end", base.DEC),
    frag_ordinal = ProtoField.uint32("rdps.data.msg_ordinal", "Fragment of message", base.DEC),
    next_ordinal = ProtoField.uint32("rdps.data.next_ordinal", "Ordinal after this datagram",
                                     base.DEC),
    batch_payload = ProtoField.bytes("rdps.data.batch", "Batch payload (records)"),
    msg = ProtoField.none("rdps.msg", "Message"),
    msg_ordinal = ProtoField.uint32("rdps.msg.ordinal", "Ordinal", base.DEC),
    msg_len_field = ProtoField.uint32("rdps.msg.len", "Length", base.DEC),
    msg_data = ProtoField.bytes("rdps.msg.data", "Data"),
    -- HEARTBEAT
    hb_next = ProtoField.uint32("rdps.heartbeat.next_seq", "Next sequence", base.DEC),
    hb_retained = ProtoField.uint32("rdps.heartbeat.retained", "Retained for repair", base.DEC),
    hb_oldest = ProtoField.uint32("rdps.heartbeat.oldest_seq", "Oldest retained sequence", base.DEC),
    hb_next_ordinal = ProtoField.uint32("rdps.heartbeat.next_ordinal", "Next message's ordinal",
                                        base.DEC),
    hb_trail_ordinal = ProtoField.uint32("rdps.heartbeat.trail_ordinal",
                                         "Oldest retained datagram's ordinal", base.DEC),
    hb_parity_k = ProtoField.uint16("rdps.heartbeat.parity_k", "Parity block size k", base.DEC),
    hb_reserved = ProtoField.uint16("rdps.heartbeat.reserved", "Reserved", base.HEX),
    hb_max_rtt = ProtoField.uint32("rdps.heartbeat.max_rtt_us", "Largest receiver RTT (us)",
                                   base.DEC),
    hb_receivers = ProtoField.uint32("rdps.heartbeat.receivers", "Receivers in flow control",
                                     base.DEC),
    -- NAK
    nak_receiver = ProtoField.uint32("rdps.nak.receiver_id", "Receiver id", base.HEX),
    nak_count = ProtoField.uint16("rdps.nak.range_count", "Range count", base.DEC),
    nak_reserved = ProtoField.uint16("rdps.nak.reserved", "Reserved", base.HEX),
    nak_range = ProtoField.none("rdps.nak.range", "Range"),
    nak_start = ProtoField.uint32("rdps.nak.range.start", "Start", base.DEC),
    nak_rcount = ProtoField.uint32("rdps.nak.range.count", "Count", base.DEC),
    nak_last = ProtoField.uint32("rdps.nak.range.last", "Last", base.DEC),
    nak_missing = ProtoField.uint32("rdps.nak.missing", "Sequences asked for", base.DEC),
    -- NAK flagged PARITY: a range is {block start, datagrams of the block missing}
    nak_block = ProtoField.none("rdps.nak.block", "Block"),
    nak_block_start = ProtoField.uint32("rdps.nak.block.start", "Block start", base.DEC),
    nak_block_missing = ProtoField.uint32("rdps.nak.block.missing",
                                          "Datagrams of the block missing", base.DEC),
    nak_symbols = ProtoField.uint32("rdps.nak.parity_symbols", "Parity symbols asked for",
                                    base.DEC),
    -- STATUS
    st_receiver = ProtoField.uint32("rdps.status.receiver_id", "Receiver id", base.HEX),
    st_consumed = ProtoField.uint32("rdps.status.consumed_seq", "Consumed sequence", base.DEC),
    st_window = ProtoField.uint32("rdps.status.window", "Window (datagrams)", base.DEC),
    st_echo = ProtoField.uint32("rdps.status.echo_delay_us", "Echo delay (us)", base.DEC),
    -- ANNOUNCE
    ann_body = ProtoField.bytes("rdps.announce.body", "Announcement (protobuf)"),
    -- PARITY
    par_block_start = ProtoField.uint32("rdps.parity.block_start", "Block start", base.DEC),
    par_block_last = ProtoField.uint32("rdps.parity.block_last", "Block last sequence", base.DEC),
    par_k = ProtoField.uint32("rdps.parity.k", "Block size k (datagrams)", base.DEC),
    par_index = ProtoField.uint32("rdps.parity.index", "Parity index", base.DEC),
    par_symbol = ProtoField.bytes("rdps.parity.symbol",
                                  "Parity symbol (coded length prefix and frame part)"),
    -- authenticated domains
    auth = ProtoField.none("rdps.auth", "Authentication"),
    auth_key_id = ProtoField.uint32("rdps.auth.key_id", "Key id", base.DEC, nil, AUTH_KEY_MASK),
    auth_encrypted = ProtoField.bool("rdps.auth.encrypted", "Payload encrypted", 32, nil,
                                     AUTH_ENCRYPTED),
    auth_prefix = ProtoField.bytes("rdps.auth.prefix", "Nonce prefix (sender)"),
    auth_counter = ProtoField.uint64("rdps.auth.counter", "Nonce counter", base.DEC),
    auth_sent_s = ProtoField.uint32("rdps.auth.sent_s", "Sealed at (sender's clock, s mod 2^32)",
                                    base.DEC),
    auth_tag = ProtoField.bytes("rdps.auth.tag", "Tag (Poly1305)"),
    auth_ciphertext = ProtoField.bytes("rdps.auth.ciphertext", "Encrypted payload/body"),
    -- validation verdicts: this release's, and an old frame's under its own version's rules
    reject = ProtoField.string("rdps.reject", "Reject reason"),
    v2_reject = ProtoField.string("rdps.v2.reject", "Reject reason under wire version 2"),
}
rdps.fields = pf
rdps.prefs.max_message_size = Pref.uint("Maximum message size", MAX_MSG_LEN,
                                        "rdps_config.max_message_size of the receivers: DATA "
                                        .. "frames of longer messages are MSG_TOO_LARGE")

-- One expert per reject reason of RDPS_FRAME_REJECT_MAP (rdps_frame.h), with its text.
local reject_text = {
    SHORT = "datagram shorter than the 48-byte header",
    BAD_VERSION = "unsupported protocol version",
    BAD_TYPE = "unknown frame type",
    BAD_FLAGS = "unknown flag bits or flags not allowed for this frame type",
    BEGIN_END_MISMATCH = "BEGIN/END flags inconsistent with fragment offset and length",
    MSG_TOO_LARGE = "message length above the configured maximum",
    FRAG_EXCEEDS_MSG = "fragment extends past the message length",
    EMPTY_FRAGMENT = "non-final fragment carries no payload",
    ZERO_SESSION = "session id is zero",
    ZERO_TOPIC = "topic id is zero",
    NONZERO_FIELD = "reserved field or field that must be zero is not zero",
    BAD_BODY_LEN = "body length wrong for the frame type",
    BAD_RANGE_COUNT = "NAK range count zero, above the limit, or not matching the length",
    BAD_RANGE = "NAK range with count zero or spanning half the sequence space",
    BODY_TOO_LARGE = "announce body above the configured maximum",
    BAD_RETAINED = "heartbeat retained count above 2^31",
    BAD_BLOCK = "parity block size not a power of two up to 128, or seq not its start",
    BAD_PARITY_INDEX = "parity index above the limit",
    BAD_COUNT = "message count 0 in whole messages, not 0 in a fragment, or past the payload",
    BAD_BATCH = "batched messages' lengths do not fill the payload exactly",
}
local experts = {}
local expert_list = {}
for name, text in pairs(reject_text) do
    experts[name] = ProtoExpert.new("rdps.malformed." .. name:lower(), text,
                                    expert.group.MALFORMED, expert.severity.ERROR)
    expert_list[#expert_list + 1] = experts[name]
end
local ex_truncated = ProtoExpert.new("rdps.truncated", "frame truncated by the capture",
                                     expert.group.MALFORMED, expert.severity.WARN)
local ex_old_version = ProtoExpert.new("rdps.old_version",
                                       "frame of an older wire version: rdps 1.3 drops it",
                                       expert.group.PROTOCOL, expert.severity.WARN)
local ex_no_echo = ProtoExpert.new("rdps.status.no_echo", "STATUS echoes no heartbeat",
                                   expert.group.SEQUENCE, expert.severity.CHAT)
local ex_retransmit = ProtoExpert.new("rdps.retransmit", "repair (retransmitted DATA)",
                                      expert.group.SEQUENCE, expert.severity.NOTE)
local ex_parity = ProtoExpert.new("rdps.parity", "repair (parity symbol of a block)",
                                  expert.group.SEQUENCE, expert.severity.NOTE)
local ex_keyed = ProtoExpert.new("rdps.auth.unverified",
                                 "authenticated frame (tag not verified: no key here)",
                                 expert.group.SECURITY, expert.severity.CHAT)
expert_list[#expert_list + 1] = ex_keyed
expert_list[#expert_list + 1] = ex_truncated
expert_list[#expert_list + 1] = ex_old_version
expert_list[#expert_list + 1] = ex_no_echo
expert_list[#expert_list + 1] = ex_retransmit
expert_list[#expert_list + 1] = ex_parity
rdps.experts = expert_list

-- Only UD SENDs carry rdps: the InfiniBand dissector adds a DETH for them. Its payload
-- still holds the BTH pad bytes (0-3, to a 4-byte multiple): the datagram ends before them.
local f_deth_srcqp = Field.new("infiniband.deth.srcqp")
local f_bth_padcnt = Field.new("infiniband.bth.padcnt")

local function flag_names(flags)
    local out = {}
    if band(flags, F_BEGIN) ~= 0 then out[#out + 1] = "BEGIN" end
    if band(flags, F_END) ~= 0 then out[#out + 1] = "END" end
    if band(flags, F_RETRANSMIT) ~= 0 then out[#out + 1] = "RETRANSMIT" end
    if band(flags, F_RELIABLE) ~= 0 then out[#out + 1] = "RELIABLE" end
    if band(flags, F_PARITY) ~= 0 then out[#out + 1] = "PARITY" end
    if band(flags, F_UNDEFINED) ~= 0 then
        out[#out + 1] = string.format("0x%x", band(flags, F_UNDEFINED))
    end
    return table.concat(out, ",")
end

-- A parity block size: a power of two, 2..PARITY_MAX_K.
local function is_block_size(k)
    return k >= 2 and k <= PARITY_MAX_K and band(k, k - 1) == 0
end

-- Whole messages of a DATA frame (version 3): rdps__batch_check() on count >= 2 records.
-- nil when they fill the payload exactly (or a truncated capture or ciphertext hides them).
local function batch_verdict(tvb, h, body, caplen, max_msg_len)
    if h.count > math.floor(body / RECORD_LEN) then return "BAD_COUNT" end
    if h.encrypted then return nil end
    local off, stop = h.hl, h.hl + body
    for _ = 1, h.count do
        if stop - off < RECORD_LEN then return "BAD_BATCH" end
        if off + RECORD_LEN > caplen then return nil end
        local rec = tvb(off, RECORD_LEN):le_uint()
        off = off + RECORD_LEN
        if rec > stop - off then return "BAD_BATCH" end
        if rec > max_msg_len then return "MSG_TOO_LARGE" end
        off = off + rec
    end
    if off ~= stop then return "BAD_BATCH" end
    return nil
end

-- decode_data(): flags, topic, lengths, BEGIN/END; version 3 then the count and the records.
local function data_verdict(tvb, h, body, caplen)
    if band(h.flags, 0xFFFF - F_DATA) ~= 0 then return "BAD_FLAGS" end
    if h.topic_zero then return "ZERO_TOPIC" end
    local max_msg_len = rdps.prefs.max_message_size
    -- a batch is as long as its datagram, whatever the limit on one message
    local batch = h.v3 and h.count >= 2 and h.frag_offset == 0 and h.msg_len == body
    if h.msg_len > max_msg_len and not batch then return "MSG_TOO_LARGE" end
    local frag_end = h.frag_offset + body
    if frag_end > h.msg_len then return "FRAG_EXCEEDS_MSG" end
    local is_begin, is_end = h.frag_offset == 0, frag_end == h.msg_len
    if is_begin ~= (band(h.flags, F_BEGIN) ~= 0) or is_end ~= (band(h.flags, F_END) ~= 0) then
        return "BEGIN_END_MISMATCH"
    end
    if not is_end and body == 0 then return "EMPTY_FRAGMENT" end
    if not h.v3 then return nil end
    if not (is_begin and is_end) then -- a fragment of one message
        if h.count ~= 0 then return "BAD_COUNT" end
        return nil
    end
    if h.count == 0 then return "BAD_COUNT" end
    if h.count == 1 then return nil end
    return batch_verdict(tvb, h, body, caplen, max_msg_len)
end

-- The rule rdps__frame_decode() applies first that the frame breaks, or nil if it is valid
-- (h.v3 false: the rules of wire version 2). h holds the header fields; len is the datagram's
-- length, caplen the bytes captured of it (both without a keyed frame's trailer).
local function verdict(tvb, h, len, caplen)
    local hl = h.hl
    local body = len - hl
    if band(h.flags, F_UNDEFINED) ~= 0 then return "BAD_FLAGS" end
    if h.reserved ~= 0 and not h.keyed then return "NONZERO_FIELD" end
    if h.type == T_DATA then return data_verdict(tvb, h, body, caplen) end
    -- only DATA numbers messages; a heartbeat tells the next ordinal and the trail's
    if h.v3 and h.type ~= T_HEARTBEAT and (h.ordinal ~= 0 or h.count ~= 0) then
        return "NONZERO_FIELD"
    end
    if h.type == T_PARITY then
        if h.flags ~= F_RELIABLE + F_RETRANSMIT then return "BAD_FLAGS" end
        if h.topic_zero then return "ZERO_TOPIC" end
        if not is_block_size(h.msg_len) or band(h.seq, h.msg_len - 1) ~= 0 then
            return "BAD_BLOCK"
        end
        if h.frag_offset >= PARITY_MAX_INDEX then return "BAD_PARITY_INDEX" end
        if body < PARITY_MIN_BODY or body > PARITY_MAX_BODY then return "BAD_BODY_LEN" end
        return nil
    end
    if h.frag_offset ~= 0 then return "NONZERO_FIELD" end
    if h.type == T_HEARTBEAT then
        -- RELIABLE, optionally with PARITY (a publisher with parity repairs; 12-byte body).
        if band(h.flags, 0xFFFF - F_RELIABLE - F_PARITY) ~= 0 or h.flags == F_PARITY then
            return "BAD_FLAGS"
        end
        if (h.msg_len ~= 0 or h.count ~= 0) and band(h.flags, F_RELIABLE) == 0 then
            return "NONZERO_FIELD"
        end
        if h.msg_len > MAX_RETAINED then return "BAD_RETAINED" end
        if h.topic_zero then return "ZERO_TOPIC" end
        if band(h.flags, F_PARITY) == 0 then
            if body ~= 0 then return "BAD_BODY_LEN" end
            return nil
        end
        if body ~= HB_PARITY_BODY then return "BAD_BODY_LEN" end
        if h.encrypted or caplen < hl + HB_PARITY_BODY then return nil end
        if tvb(hl + 2, 2):le_uint() ~= 0 then return "NONZERO_FIELD" end
        if not is_block_size(tvb(hl, 2):le_uint()) then return "BAD_BLOCK" end
        return nil
    end
    if h.msg_len ~= 0 then return "NONZERO_FIELD" end
    -- A NAK may carry RETRANSMIT (its repairs were overtaken by later ones (lost), answer now)
    -- and PARITY (its ranges count a block's missing datagrams and ask for parity symbols).
    if h.type == T_NAK then
        if band(h.flags, 0xFFFF - F_RETRANSMIT - F_PARITY) ~= 0 then return "BAD_FLAGS" end
    elseif h.flags ~= 0 then return "BAD_FLAGS" end
    if h.type == T_NAK then
        if h.seq ~= 0 then return "NONZERO_FIELD" end
        if body < NAK_RANGES then return "BAD_BODY_LEN" end
        local ranges = hl + NAK_RANGES
        if h.encrypted then -- the range count is ciphertext: what the length allows
            local n = math.floor((len - ranges) / NAK_RANGE_LEN)
            if (len - ranges) % NAK_RANGE_LEN ~= 0 or n == 0 or n > MAX_NAK_RANGES then
                return "BAD_RANGE_COUNT"
            end
            return nil
        end
        if caplen < ranges then return nil end -- truncated capture: cannot tell
        if tvb(hl + 6, 2):le_uint() ~= 0 then return "NONZERO_FIELD" end
        local n = tvb(hl + 4, 2):le_uint()
        if n == 0 or n > MAX_NAK_RANGES or ranges + NAK_RANGE_LEN * n ~= len then
            return "BAD_RANGE_COUNT"
        end
        for i = 0, n - 1 do
            local off = ranges + NAK_RANGE_LEN * i
            if off + NAK_RANGE_LEN > caplen then break end
            local start, count = tvb(off, 4):le_uint(), tvb(off + 4, 4):le_uint()
            if count == 0 or count > MAX_RANGE_COUNT then return "BAD_RANGE" end
            -- a parity range: a block (starting at a multiple of its size, at least 2) and
            -- at most k of its datagrams
            if band(h.flags, F_PARITY) ~= 0 and (count > PARITY_MAX_K or band(start, 1) ~= 0) then
                return "BAD_RANGE"
            end
        end
        return nil
    end
    if h.type == T_STATUS then
        if h.seq ~= 0 then return "NONZERO_FIELD" end
        if body ~= STATUS_BODY then return "BAD_BODY_LEN" end
        return nil
    end
    if body > MAX_ANNOUNCE_LEN then return "BODY_TOO_LARGE" end -- ANNOUNCE
    return nil
end

-- Does this UD payload start like an rdps datagram? (the heuristic; never claims on less)
local function looks_like_rdps(tvb, len, caplen)
    if caplen < 4 then return false end
    local version = tvb(0, 1):uint()
    if HEADER_LEN[version] == nil then return false end
    local t = tvb(1, 1):uint()
    if t < T_DATA or t > T_PARITY then return false end
    if band(tvb(2, 2):le_uint(), F_UNDEFINED) ~= 0 then return false end
    if caplen >= 8 and tvb(4, 4):le_uint() == 0 then return false end
    -- A datagram shorter than the header shows as a SHORT rdps frame only with a whole session.
    if len < HEADER_LEN[version] and caplen < 8 then return false end
    return true
end

-- The whole messages of a DATA frame (version 3), each a subtree: ordinal, length, bytes. A
-- malformed batch shows its records up to the first that leaves the payload.
local function add_messages(tvb, tree, h, body, caplen)
    local hl = h.hl
    if h.count == 1 then
        local mt = tree:add(pf.msg, tvb(hl, math.min(body, caplen - hl)))
        mt:set_text(string.format("Message: ordinal %u, %u bytes", h.ordinal, body))
        mt:add(pf.msg_ordinal, h.ordinal):set_generated()
        mt:add(pf.msg_len_field, body):set_generated()
        if caplen >= hl + body then mt:add(pf.msg_data, tvb(hl, body)) end
        return
    end
    if caplen > hl then tree:add(pf.batch_payload, tvb(hl, caplen - hl)) end
    local off, stop = hl, hl + body
    for i = 0, h.count - 1 do
        if off + RECORD_LEN > stop or off + RECORD_LEN > caplen then break end
        local rec = tvb(off, RECORD_LEN):le_uint()
        local ord = (h.ordinal + i) % WRAP
        local whole = off + RECORD_LEN + rec <= stop and off + RECORD_LEN + rec <= caplen
        local mt = tree:add(pf.msg, tvb(off, whole and RECORD_LEN + rec or RECORD_LEN))
        mt:set_text(string.format("Message %u: ordinal %u, %u bytes%s", i, ord, rec,
                                  whole and "" or " (runs past the payload)"))
        mt:add(pf.msg_ordinal, ord):set_generated()
        mt:add_le(pf.msg_len_field, tvb(off, RECORD_LEN))
        if not whole then break end
        mt:add(pf.msg_data, tvb(off + RECORD_LEN, rec))
        off = off + RECORD_LEN + rec
    end
end

local function add_body(tvb, tree, h, len, caplen, info)
    local hl = h.hl
    local body = len - hl
    if h.type == T_DATA then
        tree:add(pf.frag_end, h.frag_offset + body):set_generated()
        local whole = h.frag_offset == 0 and body == h.msg_len
        if not h.v3 then
            if caplen > hl then tree:add(pf.payload, tvb(hl, caplen - hl)) end
            info[#info + 1] = string.format("off=%u len=%u/%u", h.frag_offset, body, h.msg_len)
        elseif whole and h.count >= 1 then
            local last = (h.ordinal + h.count - 1) % WRAP
            tree:add(pf.next_ordinal, (h.ordinal + h.count) % WRAP):set_generated()
            add_messages(tvb, tree, h, body, caplen)
            info[#info + 1] = h.count == 1 and string.format("ord=%u len=%u", h.ordinal, body)
                or string.format("msgs=%u ord=%u..%u len=%u", h.count, h.ordinal, last, body)
        else -- a fragment of the message `ordinal`
            tree:add(pf.frag_ordinal, h.ordinal):set_generated()
            tree:add(pf.next_ordinal, (h.ordinal + (band(h.flags, F_END) ~= 0 and 1 or 0)) % WRAP)
                :set_generated()
            if caplen > hl then tree:add(pf.payload, tvb(hl, caplen - hl)) end
            info[#info + 1] = string.format("ord=%u off=%u len=%u/%u", h.ordinal, h.frag_offset,
                                            body, h.msg_len)
        end
    elseif h.type == T_HEARTBEAT then
        local reliable = band(h.flags, F_RELIABLE) ~= 0
        tree:add(pf.hb_next, h.seq):set_generated()
        tree:add(pf.hb_retained, h.msg_len):set_generated()
        if reliable then
            tree:add(pf.hb_oldest, (h.seq - h.msg_len) % WRAP):set_generated()
        end
        info[#info + 1] = string.format("next=%u retained=%u", h.seq, h.msg_len)
        if h.v3 then
            -- rdps__frame_decode: the trail is the count word when reliable, else the next ordinal
            local trail = reliable and h.count or h.ordinal
            tree:add(pf.hb_next_ordinal, h.ordinal):set_generated()
            tree:add(pf.hb_trail_ordinal, trail):set_generated()
            info[#info + 1] = reliable and string.format("next_ord=%u trail_ord=%u", h.ordinal, trail)
                or string.format("next_ord=%u", h.ordinal)
        end
        if band(h.flags, F_PARITY) ~= 0 and caplen >= hl + HB_PARITY_BODY then
            tree:add_le(pf.hb_parity_k, tvb(hl, 2))
            tree:add_le(pf.hb_reserved, tvb(hl + 2, 2))
            local rt = tree:add_le(pf.hb_max_rtt, tvb(hl + 4, 4))
            if tvb(hl + 4, 4):le_uint() == 0 then rt:append_text(" (none measured)") end
            tree:add_le(pf.hb_receivers, tvb(hl + 8, 4))
            info[#info + 1] = string.format("k=%u max_rtt=%uus receivers=%u", tvb(hl, 2):le_uint(),
                                            tvb(hl + 4, 4):le_uint(), tvb(hl + 8, 4):le_uint())
        end
    elseif h.type == T_NAK then
        if caplen >= hl + NAK_RANGES then
            tree:add_le(pf.nak_receiver, tvb(hl, 4))
            local n = tvb(hl + 4, 2):le_uint()
            tree:add_le(pf.nak_count, tvb(hl + 4, 2))
            tree:add_le(pf.nak_reserved, tvb(hl + 6, 2))
            -- PARITY: each range is a block {start, datagrams of it missing}, not sequences.
            local parity = band(h.flags, F_PARITY) ~= 0
            local missing, shown = 0, {}
            for i = 0, n - 1 do
                local off = hl + NAK_RANGES + NAK_RANGE_LEN * i
                if off + NAK_RANGE_LEN > caplen then break end
                local start, count = tvb(off, 4):le_uint(), tvb(off + 4, 4):le_uint()
                if parity then
                    local bt = tree:add(pf.nak_block, tvb(off, 8))
                    bt:set_text(string.format("Block %u: start %u, %u missing", i, start, count))
                    bt:add_le(pf.nak_block_start, tvb(off, 4))
                    bt:add_le(pf.nak_block_missing, tvb(off + 4, 4))
                    if #shown < 4 then
                        shown[#shown + 1] = string.format("%u:-%u", start, count)
                    end
                else
                    local last = (start + count - 1) % WRAP
                    local rt = tree:add(pf.nak_range, tvb(off, 8))
                    rt:set_text(string.format("Range %u: %u..%u (%u)", i, start, last, count))
                    rt:add_le(pf.nak_start, tvb(off, 4))
                    rt:add_le(pf.nak_rcount, tvb(off + 4, 4))
                    rt:add(pf.nak_last, last):set_generated()
                    if #shown < 4 then
                        shown[#shown + 1] = string.format("%u+%u", start, count)
                    end
                end
                missing = missing + count
            end
            tree:add(parity and pf.nak_symbols or pf.nak_missing, missing):set_generated()
            info[#info + 1] = string.format("receiver=0x%08x %s=%u [%s%s]", tvb(hl, 4):le_uint(),
                                            parity and "blocks" or "ranges", n,
                                            table.concat(shown, " "), n > #shown and " ..." or "")
        end
    elseif h.type == T_STATUS then
        if caplen >= hl + STATUS_BODY then
            tree:add_le(pf.st_receiver, tvb(hl, 4))
            tree:add_le(pf.st_consumed, tvb(hl + 4, 4))
            tree:add_le(pf.st_window, tvb(hl + 8, 4))
            local echo = tvb(hl + 12, 4):le_uint()
            local ei = tree:add_le(pf.st_echo, tvb(hl + 12, 4))
            if echo == NO_ECHO then
                ei:append_text(" (no echo)")
                ei:add_proto_expert_info(ex_no_echo)
            end
            info[#info + 1] = string.format("receiver=0x%08x consumed=%u window=%u%s",
                                            tvb(hl, 4):le_uint(), tvb(hl + 4, 4):le_uint(),
                                            tvb(hl + 8, 4):le_uint(),
                                            echo == NO_ECHO and "" or string.format(" echo=%uus", echo))
        end
    elseif h.type == T_PARITY then
        tree:add(pf.par_block_start, h.seq):set_generated()
        tree:add(pf.par_k, h.msg_len):set_generated()
        tree:add(pf.par_block_last, (h.seq + h.msg_len - 1) % WRAP):set_generated()
        tree:add(pf.par_index, h.frag_offset):set_generated()
        if caplen > hl then
            tree:add(pf.par_symbol, tvb(hl, caplen - hl))
        end
        info[#info + 1] = string.format("block=%u k=%u index=%u symbol=%u", h.seq, h.msg_len,
                                        h.frag_offset, body)
    else -- ANNOUNCE
        if caplen > hl then tree:add(pf.ann_body, tvb(hl, caplen - hl)) end
        info[#info + 1] = string.format("body=%u", body)
    end
    if caplen < len then tree:add_proto_expert_info(ex_truncated) end
end

-- Shows a frame's verdict: rdps.reject (this release's), and for a frame of an older wire
-- version the verdict under that version's rules too.
local function add_verdict(tree, info, reason, old_reason)
    if reason then
        tree:add(pf.reject, reason):set_generated()
        tree:add_proto_expert_info(experts[reason])
        info[#info + 1] = "[" .. reason .. "]"
    end
    if old_reason then
        tree:add(pf.v2_reject, old_reason):set_generated()
        local text = old_reason == "SHORT" and "datagram shorter than the 40-byte header"
            or reject_text[old_reason]
        tree:add_proto_expert_info(experts[old_reason], "wire version 2: " .. text)
        info[#info + 1] = "[v2 " .. old_reason .. "]"
    end
end

local function dissect(tvb, pinfo, root, len, caplen)
    pinfo.cols.protocol = "rdps"
    local version = tvb(0, 1):uint()
    local hl = HEADER_LEN[version]
    local v3 = version == VERSION
    local tree = root:add(rdps, tvb(0, caplen))
    local vi = tree:add(pf.version, tvb(0, 1))
    if not v3 then
        vi:append_text(string.format(" (%s)", RELEASE[version]))
        vi:add_proto_expert_info(ex_old_version, string.format(
            "wire version %u (%s): rdps 1.3 drops it as BAD_VERSION", version, RELEASE[version]))
    end
    local t = tvb(1, 1):uint()
    tree:add(pf.type, tvb(1, 1))
    local flags = tvb(2, 2):le_uint()
    local ft = tree:add_le(pf.flags, tvb(2, 2))
    ft:add_le(pf.f_begin, tvb(2, 2))
    ft:add_le(pf.f_end, tvb(2, 2))
    ft:add_le(pf.f_retransmit, tvb(2, 2))
    ft:add_le(pf.f_reliable, tvb(2, 2))
    ft:add_le(pf.f_parity, tvb(2, 2))
    ft:add_le(pf.f_unknown, tvb(2, 2))
    local tname = type_names[t] or "?"
    local prefix = v3 and "rdps " or string.format("rdps v%u ", version)
    -- The library checks the version first: every frame of another version is BAD_VERSION.
    local reason = not v3 and "BAD_VERSION" or nil
    if len < hl or caplen < hl then
        if caplen >= 8 then tree:add_le(pf.session, tvb(4, 4)) end
        local short = len < hl and "SHORT" or nil
        local info = {}
        if v3 then add_verdict(tree, info, short, nil) else add_verdict(tree, info, reason, short) end
        if not short then tree:add_proto_expert_info(ex_truncated) end
        pinfo.cols.info = string.format("%s%s %s", prefix, tname,
                                        #info > 0 and table.concat(info, " ") or "[truncated]")
        return
    end
    -- A keyed frame: an auth word in the reserved field and room for the trailer. What a
    -- keyed receiver checks is the frame inside (len less the trailer).
    local word = tvb(28, 4):le_uint()
    local tl = TRAILER_LEN[v3 and 3 or 2]
    local keyed = word ~= 0 and band(word, AUTH_RESERVED) == 0 and len >= hl + tl
    local encrypted = keyed and band(word, AUTH_ENCRYPTED) ~= 0
    local full_len, full_caplen = len, caplen
    if keyed then
        len = len - tl
        caplen = math.min(caplen, len)
    end
    local topic = tvb(8, 8):le_uint64()
    local h = {
        v3 = v3, hl = hl, type = t, flags = flags,
        session = tvb(4, 4):le_uint(), seq = tvb(16, 4):le_uint(),
        -- 64 bits: zero only when both halves are (UInt64 does not compare with a number)
        topic_zero = tvb(8, 4):le_uint() == 0 and tvb(12, 4):le_uint() == 0,
        msg_len = tvb(20, 4):le_uint(), frag_offset = tvb(24, 4):le_uint(),
        reserved = word, keyed = keyed, encrypted = encrypted,
        ordinal = v3 and tvb(40, 4):le_uint() or 0, count = v3 and tvb(44, 4):le_uint() or 0,
    }
    tree:add_le(pf.session, tvb(4, 4))
    tree:add_le(pf.topic, tvb(8, 8))
    tree:add_le(pf.seq, tvb(16, 4))
    tree:add_le(pf.msg_len, tvb(20, 4))
    tree:add_le(pf.frag_offset, tvb(24, 4))
    if keyed then
        local at = tree:add(pf.auth, tvb(28, 4))
        at:set_text(string.format("Authentication: key %u%s", band(word, AUTH_KEY_MASK),
                                  encrypted and ", payload encrypted" or ""))
        at:add_le(pf.auth_key_id, tvb(28, 4))
        at:add_le(pf.auth_encrypted, tvb(28, 4))
        if full_caplen >= full_len then
            at:add(pf.auth_prefix, tvb(len, 16))
            at:add_le(pf.auth_counter, tvb(len + 16, 8))
            if tl == 44 then
                at:add_le(pf.auth_sent_s, tvb(len + 24, 4))
            end
            at:add(pf.auth_tag, tvb(len + tl - 16, 16))
        end
        at:add_proto_expert_info(ex_keyed)
    else
        tree:add_le(pf.reserved, tvb(28, 4))
    end
    local ts = tvb(32, 8):le_uint64()
    tree:add_le(pf.timestamp_ns, tvb(32, 8))
    local secs = (ts / 1000000000):tonumber()
    local nsecs = (ts % 1000000000):tonumber()
    tree:add(pf.time, tvb(32, 8), NSTime.new(secs, nsecs))
    if v3 then
        -- what the two words mean depends on the frame (rdps_frame.h)
        local oi = tree:add_le(pf.ordinal, tvb(40, 4))
        local ci = tree:add_le(pf.count, tvb(44, 4))
        if t == T_DATA then
            oi:append_text(h.count == 0 and " (the fragment's message)" or " (first message)")
            ci:append_text(h.count == 0 and " (a fragment)" or " (whole messages)")
        elseif t == T_HEARTBEAT then
            oi:append_text(" (next message)")
            if band(flags, F_RELIABLE) ~= 0 then ci:append_text(" (oldest retained datagram's ordinal)") end
        end
    end
    tree:add(pf.body_len, len - hl):set_generated()
    tree:append_text(string.format(", %s, session 0x%08x, seq %u", tname, h.session, h.seq))

    local info = { string.format("%s sess=0x%08x topic=0x%s seq=%u", tname, h.session,
                                 topic:tohex(), h.seq) }
    if keyed then
        info[#info + 1] = string.format("key=%u%s", band(word, AUTH_KEY_MASK),
                                        encrypted and " encrypted" or "")
    end
    if flags ~= 0 then info[#info + 1] = "[" .. flag_names(flags) .. "]" end
    if band(flags, F_RETRANSMIT) ~= 0 and t == T_DATA then
        ft:add_proto_expert_info(ex_retransmit)
    elseif t == T_PARITY then
        ft:add_proto_expert_info(ex_parity)
    end
    local rule = verdict(tvb, h, len, caplen)
    if encrypted then -- opaque: only the header and the lengths mean anything
        if caplen > hl then tree:add(pf.auth_ciphertext, tvb(hl, caplen - hl)) end
        if t == T_DATA and v3 and h.count >= 2 then
            info[#info + 1] = string.format("msgs=%u", h.count)
        end
        info[#info + 1] = string.format("body=%u", len - hl)
        if full_caplen < full_len then tree:add_proto_expert_info(ex_truncated) end
    elseif rule == nil or (rule ~= "BAD_BODY_LEN" and rule ~= "BAD_RANGE_COUNT") then
        -- Body fields are shown only when the frame's layout is one the library accepts.
        add_body(tvb, tree, h, len, caplen, info)
    end
    if v3 then add_verdict(tree, info, rule, nil) else add_verdict(tree, info, reason, rule) end
    pinfo.cols.info = prefix .. table.concat(info, " ")
end

local function heuristic(tvb, pinfo, root)
    if f_deth_srcqp() == nil then return false end
    local pad = f_bth_padcnt()
    local len = tvb:reported_length_remaining() - (pad and pad.value or 0)
    local caplen = math.min(tvb:len(), len)
    if not looks_like_rdps(tvb, len, caplen) then return false end
    dissect(tvb, pinfo, root, len, caplen)
    return true
end

rdps:register_heuristic("infiniband.payload", heuristic)
