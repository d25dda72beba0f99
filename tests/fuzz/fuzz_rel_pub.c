/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_rel_pub.c - libFuzzer harness: the reliable publisher fed arbitrary NAK/STATUS frames from
 * many spoofed sources, with its ring accounting and every action it hands out checked. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rdps/rdps.h>

#include "rdps_endian.h"
#include "rdps_seq.h"
#include "rdps_rel_pub.h"
#include "rel_pub_test_util.h"

/*
 * One publisher (flow mode from the first byte: max, min or tagged) with a
 * small ring (4..35 datagrams, so it wraps often) and a receiver table of
 * MAX_RX entries, driven by a sequence of ops:
 *   op % 8 == 0  append a pattern message:          [len lo][len hi] (len % 4 datagrams)
 *   op % 8 == 1  take up to (op >> 3) + 1 actions, completing each when bit 0 of the next
 *                byte is set: [mask]
 *   op % 8 == 2  complete the n oldest in-flight frames: [n]
 *   op % 8 == 3  NAK from source [src] receiver [rid], (op >> 3) % 8 + 1 ranges of
 *                [start lo][start hi][count lo][count hi], start relative to the trail
 *                (signed 16 bits) unless op bit 6 (then raw 32-bit start from those bytes x2);
 *                op bit 7: a parity NAK (start made even, count 1..128)
 * Parity repairs (blocks of 2, or 4 with bit 6) when bit 5 of the second byte is set.
 *   op % 8 == 4  STATUS from [src][rid]: [consumed lo][consumed hi] relative to the trail
 *                (signed), [window][echo delay][echo: bit 7 one of the last heartbeats]
 *   op % 8 == 5  time passes by (op >> 3) x 97 us (x 50 ms when bit 7), then tick
 *   op % 8 == 6  discovery [src][rid][tag % 3]: a tag, or (bit 2 of the tag byte) an
 *                announcement that holds data until the receiver reports
 *   op % 8 == 7  arbitrary datagram [len][bytes...] from source 300 + (op >> 3): decoded,
 *                every valid frame handed to rdps__rel_pub_on_frame
 * Sources: [src] names one of 256 spoofed identities on 64 hosts (4 QPNs each, so the per-host
 * and per-source caps are met); receiver ids rid % 4. Invariants
 * (abort): table within its cap, per host and per source too; every action's frame is the ring slot
 * of its sequence, whole, inside the memory, decodes with that sequence and the right flags and
 * bytes; heartbeats carry next = post and R = post - trail; trail <= post <= head; retained bytes
 * within the memory, retained frames within the slots; no retained frame straddles the end; nothing
 * in flight below the trail; unicast repairs to one receiver within a budget interval at most its
 * share (1..4 datagrams, from the first byte) plus the budget, all repairs (unicast and multicast)
 * at most the shares' total (2 or 16 shares) plus the budget; rate-limited, the debt never beyond
 * one burst and a datagram. Ordinals (wire version 3): every datagram posted, first or as a repair,
 * carries the same ordinal and count each time, and the ordinal after the datagram before it;
 * a heartbeat's next ordinal is the one after the datagram before its next sequence, its trail
 * ordinal that of its oldest retained datagram, or the next one when that datagram continues a
 * message begun below it (its next ordinal when it retains none).
 */
#define MAX_RX       16
#define MAX_PER_HOST 6
#define MAX_PER_SRC  3

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct rp f; /* big: static, reinitialised per input */

/* What each posted datagram said: its ordinal, count and the ordinal after it, by seq. */
#define SEEN_RING 256u
struct seen {
    bool valid;
    uint32_t seq, ordinal, count, after;
    bool begins; /* BEGIN: the message starts here */
};
static struct seen seen[SEEN_RING];

static const struct seen *seen_at(uint32_t seq)
{
    const struct seen *e = &seen[seq % SEEN_RING];
    return e->valid && e->seq == seq ? e : NULL;
}

/* A DATA frame posted: the same ordinal and count as its first post, and contiguous ordinals. */
static void check_data_ordinals(const struct rdps_rel_pub_action *a)
{
    struct rdps_frame_view v;
    if (rdps__frame_decode(a->frame, a->len, NULL, &v) != RDPS_FRAME_OK)
        abort(); /* rp_action_ok checked it */
    const struct seen *old = seen_at(v.hdr.seq), *before = seen_at(v.hdr.seq - 1);
    if (old != NULL && (old->ordinal != v.hdr.ordinal || old->count != v.hdr.count))
        abort(); /* a repair that says another message */
    if (before != NULL && before->after != v.hdr.ordinal)
        abort(); /* ordinals not contiguous from datagram to datagram */
    seen[v.hdr.seq % SEEN_RING] = (struct seen){true,
                                                v.hdr.seq,
                                                v.hdr.ordinal,
                                                v.hdr.count,
                                                rdps__frame_ordinal_after(&v.hdr),
                                                (v.hdr.flags & RDPS_FRAME_F_BEGIN) != 0};
}

/* A heartbeat: its next ordinal follows the datagram before it, its trail is the oldest's. */
static void check_heartbeat_ordinals(const struct rdps_rel_pub_action *a)
{
    struct rdps_frame_view v;
    if (rdps__frame_decode(a->frame, a->len, NULL, &v) != RDPS_FRAME_OK)
        abort();
    const struct seen *before = seen_at(v.hdr.seq - 1);
    if (before != NULL && before->after != v.hdr.ordinal)
        abort();           /* the next ordinal is not the one after the last datagram */
    if (v.retained == 0) { /* the next message, past one whose start the ring let go */
        const struct rdps_pub_ring_slot *at = rdps__pub_ring_find(&f.p.adm.ring, v.hdr.seq);
        bool continues =
            at != NULL &&
            !(rdps__get_le16(rdps__pub_ring_frame(&f.p.adm.ring, at) + RDPS_FRAME_OFF_FLAGS) &
              RDPS_FRAME_F_BEGIN);
        if (v.trail_ordinal != v.hdr.ordinal + (continues ? 1u : 0u))
            abort();
        return;
    }
    const struct seen *oldest = seen_at(v.hdr.seq - v.retained);
    if (oldest != NULL && oldest->ordinal + (oldest->begins ? 0u : 1u) != v.trail_ordinal)
        abort(); /* the trail names another message than the first the ring holds whole */
}

static void check_invariants(void)
{
    const struct rdps_rel_pub *p = &f.p;
    const struct rdps_pub_ring *r = &p->adm.ring;
    if (rdps__rel_pub_receiver_count(p) > MAX_RX)
        abort();
    if (rdps__seq_gt(r->trail_seq, p->adm.post_seq) || rdps__seq_gt(p->adm.post_seq, r->head_seq))
        abort();
    if (rdps__pub_ring_used(r) > r->cap || rdps__pub_ring_retained(r) > r->slot_mask + 1u)
        abort();
    for (uint32_t s = r->trail_seq; s != r->head_seq; s++) {
        const struct rdps_pub_ring_slot *slot = rdps__pub_ring_find(r, s);
        if (slot == NULL || slot->seq != s || slot->pos % r->cap + slot->len > r->cap)
            abort();
    }
    uint32_t min;
    if (rdps__pub_ring_inflight_min(r, &min) && rdps__seq_lt(min, r->trail_seq))
        abort();
    if (p->rq.count > p->cfg.max_repairs)
        abort();
    /* Receivers per host (GID) and per source, as the caps say. */
    for (uint32_t i = 0; i < p->cfg.max_receivers; i++) {
        if (p->rxt.rx[i].state == RDPS_REL_RX_FREE)
            continue;
        uint32_t same_host = 0, same_source = 0;
        for (uint32_t k = 0; k < p->cfg.max_receivers; k++) {
            if (p->rxt.rx[k].state == RDPS_REL_RX_FREE)
                continue;
            same_host += memcmp(p->rxt.rx[k].source.gid, p->rxt.rx[i].source.gid, 16) == 0;
            same_source += rdps__source_equal(&p->rxt.rx[k].source, &p->rxt.rx[i].source);
        }
        if (same_host > MAX_PER_HOST || same_source > MAX_PER_SRC)
            abort();
        if (p->rxt.rx[i].state == RDPS_REL_RX_ACTIVE && !p->rxt.rx[i].announced)
            abort(); /* only announced receivers take part in flow control */
    }
    /* Repairs never put a rate-limited publisher into debt beyond one burst. */
    if (p->cfg.rate_bytes_per_s != 0 &&
        p->adm.rate_paid_ns > f.now + RDPS_REL_RATE_BURST_NS +
                                  (uint64_t)RP_DGRAM * 1000000000ull / p->cfg.rate_bytes_per_s + 1)
        abort();
}

/* An echoed timestamp: (bit 7) one of the last four heartbeats sent, else b microseconds ago. */
static uint64_t echo_ts(uint8_t b)
{
    if (b & 0x80 && f.p.hb.sent_count > 0)
        return f.p.hb.sent[(f.p.hb.sent_count - 1u - b % 4u) % RDPS_REL_HB_SENT].wall_ns;
    return f.now - (uint64_t)b * 1000u;
}

/* Spoofed identity b: host 1 + b % 64 (its GID), QPN 1 + b. */
static struct rdps_source src_of(uint8_t b)
{
    struct rdps_source s = test_source(1u + b % 64u);
    s.qpn = 1u + b;
    return s;
}

/* Unicast repair bytes within one budget interval: per receiver slot (and generation) at most its
 * share past the budget plus the budget itself; for all receivers the shares' total plus the
 * budget. */
struct repaired {
    uint64_t epoch;
    uint32_t gen;
    uint64_t bytes;
};
static struct repaired repaired[MAX_RX];
static struct repaired repaired_all;

static void account_repair(struct repaired *r, uint32_t gen, uint32_t len, uint64_t limit)
{
    if (r->epoch != f.p.rq.tokens_at || r->gen != gen) {
        r->epoch = f.p.rq.tokens_at;
        r->gen = gen;
        r->bytes = 0;
    }
    r->bytes += len;
    if (r->bytes > limit + f.cfg.repair_budget_bytes)
        abort();
}

static void check_repair_share(const struct rdps_rel_pub_action *a)
{
    if (a->kind != RDPS_REL_PUB_POST_REPAIR && a->kind != RDPS_REL_PUB_POST_PARITY)
        return;
    account_repair(&repaired_all, 0, a->len, f.cfg.repair_share_total_bytes);
    if (!a->unicast)
        return;
    if (a->receiver_slot >= MAX_RX)
        abort();
    account_repair(&repaired[a->receiver_slot], a->receiver_gen, a->len, f.cfg.repair_share_bytes);
}

static void take_actions(unsigned max, uint8_t mask)
{
    struct rdps_rel_pub_action a;
    for (unsigned i = 0; i < max; i++) {
        if (rdps__rel_pub_next_action(&f.p, f.now, f.now, &a) != 1)
            break;
        if (!rp_action_ok(&f, &a))
            abort();
        check_repair_share(&a);
        if (a.kind == RDPS_REL_PUB_POST_HEARTBEAT &&
            (rp_hb_seq(&a) != f.p.adm.post_seq ||
             rp_hb_retained(&a) != rdps__rel_pub_retained(&f.p)))
            abort();
        if (a.kind == RDPS_REL_PUB_POST_HEARTBEAT)
            check_heartbeat_ordinals(&a);
        else if (a.in_ring)
            check_data_ordinals(&a);
        if (a.unicast && rdps__rel_pub_receiver_count(&f.p) == 0)
            abort();
        if (a.in_ring && (mask >> (i % 8) & 1))
            rdps__rel_pub_send_done(&f.p, 1);
    }
}

static uint32_t rel(const uint8_t *b)
{
    return f.p.adm.ring.trail_seq + (uint32_t)(int32_t)(int16_t)(b[0] | b[1] << 8);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    memset(repaired, 0, sizeof(repaired));
    memset(&repaired_all, 0, sizeof(repaired_all));
    memset(seen, 0, sizeof(seen));
    rp_config(&f, (size_t)(4 + data[1] % 32) * RP_DGRAM);
    f.cfg.flow = (enum rdps_rel_flow)(data[0] % 3);
    f.cfg.flow_tag = 1;
    f.cfg.flow_min_receivers = data[0] >> 2 & 3;
    f.cfg.max_receivers = MAX_RX;
    f.cfg.max_receivers_per_host = MAX_PER_HOST;
    f.cfg.max_receivers_per_source = MAX_PER_SRC;
    f.cfg.unannounced_nak_frames = 1u + (data[1] & 31);
    f.cfg.connect_timeout_ns = 30000000ull;
    f.cfg.connect_hold_max_ns = 40000000ull;
    f.cfg.max_repairs = 8;
    f.cfg.max_frames_per_nak = 64;
    f.cfg.max_inflight = 16;
    f.cfg.repair_budget_bytes = 3 * RP_DGRAM;
    f.cfg.repair_share_bytes = (1u + (data[0] >> 4 & 3)) * RP_DGRAM;
    f.cfg.repair_share_total_bytes = f.cfg.repair_share_bytes * (data[0] & 0x40 ? 2u : 16u);
    f.cfg.stall_evict_ns = 20000000ull;
    f.cfg.receiver_timeout_ns = 500000000ull;
    if (data[0] & 0x80) /* rate-limited: 1..8 datagrams per millisecond */
        f.cfg.rate_bytes_per_s = (1u + (data[1] >> 5)) * 1000ull * RP_DGRAM;
    if (data[1] & 0x20) /* parity repairs, blocks of 2 or 4 */
        f.cfg.parity_k = data[1] & 0x40 ? 4 : 2;
    f.keep_hb = true;
    if (rp_start(&f) < 0)
        abort();
    uint64_t msg_id = 0;
    size_t i = 2;
    while (i < size) {
        uint8_t op = data[i++];
        const uint8_t *b = data + i;
        size_t left = size - i;
        switch (op % 8) {
        case 0:
            if (left < 2)
                goto out;
            rp_append(&f, (size_t)(b[0] | b[1] << 8) % (4 * RP_PAYLOAD), msg_id++);
            i += 2;
            break;
        case 1:
            if (left < 1)
                goto out;
            take_actions((op >> 3) + 1u, b[0]);
            i += 1;
            break;
        case 2:
            if (left < 1)
                goto out;
            rdps__rel_pub_send_done(&f.p, b[0]);
            i += 1;
            break;
        case 3: {
            unsigned n = (op >> 3) % 8 + 1;
            if (left < 2 + 4 * (size_t)n)
                goto out;
            struct rdps_seq_range ranges[8];
            bool parity = (op & 0x80) != 0; /* {block start, missing count} ranges */
            for (unsigned k = 0; k < n; k++) {
                const uint8_t *q = b + 2 + 4 * k;
                ranges[k].start = op & 0x40 ? rdps__get_le32(q) : rel(q);
                ranges[k].count = (uint32_t)(q[2] | q[3] << 8) % 300 + 1;
                if (parity) {
                    ranges[k].start &= ~1u;
                    ranges[k].count = ranges[k].count % RDPS_FRAME_PARITY_MAX_K + 1;
                }
            }
            uint8_t buf[RDPS_FRAME_NAK_OFF_RANGES + 8 * RDPS_FRAME_NAK_RANGE_LEN];
            int len =
                rdps__frame_encode_nak_flags(buf, sizeof(buf), RP_SESSION, RP_TOPIC, b[1] % 4u,
                                             ranges, n, f.now, parity ? RDPS_FRAME_F_PARITY : 0);
            struct rdps_frame_view v;
            if (len < 0 || rdps__frame_decode(buf, (size_t)len, NULL, &v) != RDPS_FRAME_OK)
                abort();
            struct rdps_source s = src_of(b[0]);
            rdps__rel_pub_on_nak(&f.p, &s, &v, f.now);
            i += 2 + 4 * (size_t)n;
            break;
        }
        case 4: {
            if (left < 7)
                goto out;
            struct rdps_rel_status st = {RP_SESSION,   RP_TOPIC,
                                         b[1] % 4u,    rel(b + 2),
                                         b[4],         b[5] == 0xFF ? RDPS_REL_NO_ECHO : b[5],
                                         echo_ts(b[6])};
            struct rdps_source s = src_of(b[0]);
            rdps__rel_pub_on_status(&f.p, &s, &st, f.now, f.now);
            i += 7;
            break;
        }
        case 5:
            f.now += (uint64_t)(op >> 3 & 15) * (op & 0x80 ? 50000000ull : 97000ull);
            rdps__rel_pub_tick(&f.p, f.now);
            break;
        case 6: {
            if (left < 3)
                goto out;
            struct rdps_source s = src_of(b[0]);
            if (b[2] & 4)
                rdps__rel_pub_expect_receiver(&f.p, &s, b[1] % 4u, b[2] % 3u, f.now);
            else
                rdps__rel_pub_receiver_tag(&f.p, &s, b[1] % 4u, b[2] % 3u, f.now);
            i += 3;
            break;
        }
        case 7: {
            if (left < 1 || left - 1 < b[0])
                goto out;
            struct rdps_frame_view v;
            if (rdps__frame_decode(b + 1, b[0], NULL, &v) == RDPS_FRAME_OK) {
                struct rdps_source s = test_source(300u + (op >> 3));
                rdps__rel_pub_on_frame(&f.p, &s, &v, f.now, f.now);
            }
            i += 1 + (size_t)b[0];
            break;
        }
        }
        check_invariants();
    }
out:
    take_actions(64, 0xFF);
    check_invariants();
    rp_stop(&f);
    return 0;
}
