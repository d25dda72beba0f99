/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rel_pub.h - reliable publisher engine: ring, NAK repair, heartbeats, STATUS and flow
 * control, as sans-IO actions. */
#ifndef RDPS_PROTO_REL_PUB_H
#define RDPS_PROTO_REL_PUB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rdps_frame.h"
#include "rdps_pub_ring.h"
#include "rdps_rel_admit.h"
#include "rdps_rel_beat.h"
#include "rdps_rel_flow.h"
#include "rdps_rel_pub_parity.h"
#include "rdps_rel_pub_types.h"
#include "rdps_rel_receivers.h"
#include "rdps_rel_repairs.h"
#include "rdps_source.h"

/*
 * Model
 * -----
 * One engine per reliable publisher session. It owns no socket and reads no
 * clock: the caller appends messages, feeds received NAK and STATUS frames,
 * asks for the next action to post and reports completed sends; every call
 * that depends on time takes now_ns (monotonic) and, when it writes a frame,
 * wall_ns (the wire clock, CLOCK_REALTIME).
 *
 * It is a stack of layers that call downward only (tests/proto/check_layers.py fails on a call
 * cycle); each keeps its own state, has its contract and model in its header, and is given the
 * layers below it at init. A layer tells the one above through return values; none includes an
 * upper one's header. The public contract (this header) is the engine's; pubsub calls nothing
 * else.
 *
 *   engine        rdps_rel_pub.c: init, what goes next (next_action), timers (tick), NAK and
 *                 STATUS intake (on_frame), heartbeat frames
 *   admission     rdps_rel_admit.h: append, reserve/commit and pins into the ring it owns; the
 *                 post cursor; the rate limit                          -> flow, heartbeat clock
 *   repairs       rdps_rel_repairs.h: NAKed sequences scheduled linger by linger, the repair
 *                 queue, its budget and the shares past it; rdps_rel_earned.h: the allowance
 *                 data earns repairs                            -> parity, flow, receivers
 *   parity        rdps_rel_pub_parity.h: blocks and their rounds, proactive parity, symbols
 *                 encoded from the ring                                 -> flow
 *   flow          rdps_rel_flow.h: the limit and the position the ring keeps, connecting holds,
 *                 stalls and their evictions, the RTT-scaled heartbeat minimum and linger
 *                                                                       -> receivers
 *   receivers     rdps_rel_receivers.h: the table, caps and victims, states, STATUS and RTT,
 *                 timeouts, evictions, owed heartbeats        -> hosts, heartbeat clock
 *   hosts         rdps_rel_hosts.h: host records, bans, NAK allowances and repair shares
 *   heartbeat     rdps_rel_beat.h: when the next heartbeat is due, heartbeats sent (echoes)
 *   ring          rdps_pub_ring.h: frames written once, in flight until completed
 *
 * The counters (one struct, RDPS_REL_PUB_COUNTER_MAP) and the config are the engine's; every
 * layer is given them at init and counts its own outcomes. The engine struct is embedded by the
 * caller and must not move after init (its layers point at each other).
 *
 * NAK (on_frame, the engine). Each range is clipped: the part below the trail is unrecoverable
 * and answered with a heartbeat unicast to the asker (at most one per linger per receiver); the
 * part at or beyond `post` is ignored (nak_future); the part below the position the receiver
 * reported is ignored (nak_stale: it said it has those); at most max_frames_per_nak sequences per
 * NAK are considered (unannounced_nak_frames for an unannounced receiver; the receiver asks again
 * for the rest). Each host's NAKs may schedule host_nak_bytes of repairs per repair interval
 * (unannounced_host_bytes while none of its receivers is announced): past that, sequences are not
 * scheduled (nak_host_limited) and the receiver's retry gets them. So a forged NAK draws a
 * bounded number of bytes, and one host cannot draw more per interval than its allowance however
 * many QPNs and receiver ids it uses. What remains goes to the repair queue (by sequence,
 * rdps_rel_repairs.h) or to a block's parity round (a NAK flagged PARITY,
 * rdps_rel_pub_parity.h).
 *
 * Scheduling (rdps__rel_pub_next_action). First a heartbeat wanted urgently (a receiver was
 * announced; with parity one after every RDPS_REL_PARITY_HB_BLOCKS blocks of data even while data
 * waits). Then repairs (within the budget, or past it while the window or the ring holds appends
 * and no new data waits: rdps_rel_repairs.h; and always within what new data earned, twice the
 * data per receiver in flow control plus 64 KB/s by default, whoever asks and from how many
 * addresses: rdps_rel_earned.h) and new data, at most data_per_repair new frames between two
 * repairs when both wait; with a rate limit, repairs wait for the limit's allowance
 * like new data (ahead of it): they never put the publisher into debt beyond one burst. Repairs
 * set the RETRANSMIT flag in the ring copy of the frame. Then owed unicast heartbeats, then a
 * multicast heartbeat when idle: a minimum after data, doubling up to heartbeat_max_ns (8 minimums
 * while appends wait on the window or a receiver in flow control has not reported everything
 * posted: receivers answer heartbeats with STATUS and learn of tail loss from them, which a lost
 * STATUS or tail must not wait for long), back to the minimum on new data. The minimum is
 * heartbeat_min_ns, or half the smallest smoothed RTT of the ACTIVE receivers when that is longer:
 * a receiver cannot act on a tail loss faster than a round trip, so sooner heartbeats are only
 * traffic (on rxe they were 2.4 % of the datagrams). A heartbeat carries seq = post (the next
 * sequence) and msg_len = R = post - trail (the retained sequences), timestamp = wall_ns, flag
 * RELIABLE; with parity (flagged PARITY) also k, the largest smoothed RTT of the ACTIVE receivers
 * and their count, so receivers spread their first NAKs without a default RTT. Heartbeat and
 * parity frames live in the engine (valid until the next call: copy or inline them); ring frames
 * stay valid until their completion is reported.
 *
 * Late join: a receiver may NAK from rdps__rel_pub_oldest_seq(); one asker
 * means unicast repairs, paced by the repair budget and the host's NAK
 * allowance. A receiver joins flow control only once it is within its
 * window of the live position (consumed + window >= post): a late joiner
 * catching up on what the ring retains stays KNOWN (an EVICTED one comes
 * back past where it was evicted), so it holds neither a
 * min/tagged publisher nor its ring (what the ring drops before the joiner
 * gets there is lost to it, BELOW_RING) and under max never defines the
 * limit; its NAKs are answered as any announced receiver's. A receiver
 * discovery announces makes the next action a heartbeat, ahead of waiting
 * data: a from_oldest receiver learns the ring's oldest sequence from it.
 *
 * Timers: rdps__rel_pub_tick() runs receiver timeouts and stall evictions
 * and returns the next deadline (heartbeat, repair budget refill, receiver
 * timeout, stall), or now_ns when an action is ready.
 *
 * Every frame a remote sends is hostile: bad session/topic, ranges outside
 * the ring, bogus positions and a full table are counted, never trusted.
 * No allocation after init; callbacks must not call back into the engine.
 */

/* Embedded by the caller (not moved after init); contents are private to the engine. */
struct rdps_rel_pub {
    struct rdps_rel_pub_config cfg;
    struct rdps_rel_pub_counters counters;
    struct rdps_rel_admission adm;  /* the ring, the post cursor, the rate limit */
    struct rdps_rel_repairs rq;     /* the repair queue, its budget and shares */
    struct rdps_rel_pub_parity par; /* parity rounds (cfg.parity_k != 0) */
    struct rdps_rel_flowctl fc;     /* flow control over the receivers */
    struct rdps_rel_receivers rxt;  /* the receivers and their hosts */
    struct rdps_rel_beat hb;        /* the heartbeat clock */
    uint8_t hb_buf[RDPS_FRAME_HB_PARITY_LEN];
    /* The publisher's group carries nothing (unicast fan-out): every repair goes by unicast to
     * its asker; a "multicast" one would be a copy to every subscriber (rdps__rel_pub_set_fanout).
     */
    bool repairs_unicast_only;
};

/*
 * Defaults: 16 MiB ring (ring_mem must still be given), 1024-byte datagrams,
 * 16 MiB messages, flow max, 256 receivers (32 per host, 4 per source), 5 s
 * receiver timeout (1 s unannounced), 1 s connect timeout and 1 s of
 * connect holds, 2 s stall
 * eviction, 2 ms linger, 256 KiB of repairs per 1 ms (past it 256 KiB
 * per host, 1 MiB for all), 3 data frames per repair, 4096 repair
 * entries, 1024 sequences per NAK (16 unannounced), 512 KiB of repairs a
 * host's NAKs schedule per 1 ms (16 KiB unannounced), 1024 in flight,
 * heartbeats 100 us doubling to 100 ms.
 */
void rdps__rel_pub_config_default(struct rdps_rel_pub_config *cfg);

/*
 * Allocates the slot, mark, repair and receiver tables (the only
 * allocations; the ring memory is the caller's). Returns 0, RDPS_EINVAL for
 * a bad config (detail via rdps_last_error_message()), RDPS_ENOMEM.
 */
int rdps__rel_pub_init(struct rdps_rel_pub *p, const struct rdps_rel_pub_config *cfg);
/* Frees the tables; accepts a zeroed or already finalized struct. */
void rdps__rel_pub_fini(struct rdps_rel_pub *p);

/*
 * Fragments `len` bytes at msg into DATA frames in the ring (timestamp
 * wall_ns) to be posted by next_action; with cfg.batching a message that fits a datagram joins
 * the open frame instead (rdps_rel_admit.h, Batching). Returns the frames the message spans (1
 * when it joined), RDPS_EAGAIN (nothing written: window, ring or missing tagged receivers;
 * counted by cause), RDPS_EMSGSIZE (above rdps__rel_pub_max_msg_len or larger than the ring),
 * RDPS_EBUSY (a reservation is outstanding: rdps__rel_pub_reserve).
 */
static inline int rdps__rel_pub_append(struct rdps_rel_pub *p, const void *msg, size_t len,
                                       uint64_t now_ns, uint64_t wall_ns)
{
    return rdps__rel_adm_append(&p->adm, msg, len, now_ns, wall_ns);
}
/*
 * Zero-copy append of a message of one datagram, in three steps. Reserve admits room as append
 * would (same flow control and ring rules; RDPS_EAGAIN and RDPS_EMSGSIZE leave nothing
 * reserved): with batching, `want` bytes in the open frame when a message of that length would
 * join one; otherwise a whole datagram at the head of the ring (want > the payload, e.g.
 * UINT32_MAX, always asks for that). *payload is where the message goes, *capacity its room
 * (want, or the datagram's payload, at most max_msg_len). The caller writes the message there,
 * then commit appends it as append would have: returns 1 (frames), RDPS_EMSGSIZE when len
 * exceeds the capacity (the reservation stays), RDPS_EINVAL when nothing is reserved. unreserve
 * gives the room back. While a reservation is outstanding, append and reserve return RDPS_EBUSY
 * and its frame is not posted; posts of earlier frames, repairs, NAKs, STATUS and timers go on.
 */
static inline int rdps__rel_pub_reserve(struct rdps_rel_pub *p, uint32_t want, uint64_t now_ns,
                                        uint64_t wall_ns, uint8_t **payload, uint32_t *capacity)
{
    return rdps__rel_adm_reserve(&p->adm, want, now_ns, wall_ns, payload, capacity);
}
static inline int rdps__rel_pub_commit(struct rdps_rel_pub *p, size_t len, uint64_t wall_ns)
{
    return rdps__rel_adm_commit(&p->adm, len, wall_ns);
}
static inline void rdps__rel_pub_unreserve(struct rdps_rel_pub *p)
{
    rdps__rel_adm_unreserve(&p->adm);
}
/* Where the reserved message goes (valid between reserve and commit or unreserve). */
static inline const uint8_t *rdps__rel_pub_reserved_payload(const struct rdps_rel_pub *p)
{
    return p->adm.reserve_payload;
}
/* The message appended last: the sequence of its first frame (the open frame's when it joined
 * one) and the frames it spans. */
static inline uint32_t rdps__rel_pub_last_seq(const struct rdps_rel_pub *p)
{
    return p->adm.last_seq;
}
static inline uint32_t rdps__rel_pub_last_frames(const struct rdps_rel_pub *p)
{
    return p->adm.last_frames;
}
/* The ordinal the next message appended takes. */
static inline uint32_t rdps__rel_pub_next_ordinal(const struct rdps_rel_pub *p)
{
    return rdps__rel_adm_next_ordinal(&p->adm);
}
/* The messages the open frame holds and their bytes (counted in msgs_appended when it closes),
 * a reservation's aside. */
static inline void rdps__rel_pub_open_counts(const struct rdps_rel_pub *p, uint32_t *msgs,
                                             uint64_t *bytes)
{
    const struct rdps_rel_admission *adm = &p->adm;
    bool joined = adm->reserved && adm->reserve_joined;
    *msgs = adm->open.count - joined;
    *bytes = rdps__batch_message_bytes(&adm->open) - (joined ? adm->reserve_cap : 0);
}
/* With cfg.batching, the open frame (rdps_batch.h): a caller's join path may append to it when
 * its join_limit allows, before the frame is posted (counted when it closes). Stable for the
 * engine's life. */
static inline struct rdps_batch *rdps__rel_pub_open_batch(struct rdps_rel_pub *p)
{
    return &p->adm.open;
}
/* A lingering open frame may go now (rdps_ctx_flush, a publisher's end). */
static inline void rdps__rel_pub_end_linger(struct rdps_rel_pub *p)
{
    rdps__rel_adm_linger_due(&p->adm, UINT64_MAX);
}
/* An open frame waiting for the frames in flight (batching's default rule) may go now (a flush,
 * the caller going to sleep). */
static inline void rdps__rel_pub_end_await(struct rdps_rel_pub *p)
{
    rdps__rel_adm_await_due(&p->adm, UINT64_MAX);
}

/*
 * Keeps sequence seq and every later one in the ring until the matching unpin: appends that would
 * need the trail past it are refused (RDPS_EAGAIN, ring). For reading a frame in place while code
 * that may append runs (a committed message delivered from the ring to callbacks). Pins nest; the
 * first one's sequence holds until the last unpin (later pins are of later sequences).
 */
static inline void rdps__rel_pub_pin(struct rdps_rel_pub *p, uint32_t seq)
{
    rdps__rel_adm_pin(&p->adm, seq);
}
static inline void rdps__rel_pub_unpin(struct rdps_rel_pub *p)
{
    rdps__rel_adm_unpin(&p->adm);
}

/*
 * Unicast fan-out (a topic whose publishers send a copy of each datagram to each subscriber):
 * with unicast_only every repair goes by unicast to the receiver that asked, also when several
 * hosts asked within the linger (on a group, one multicast repair serves them all; without one it
 * would be a copy to every subscriber, asked or not). Default false; may change at any time.
 */
void rdps__rel_pub_set_fanout(struct rdps_rel_pub *p, bool unicast_only);

/* The longest message append takes: max_msg_len and what the ring holds (its bytes and slots),
 * whichever is less. Not the receivers' window: a longer message streams through it. */
static inline uint32_t rdps__rel_pub_max_msg_len(const struct rdps_rel_pub *p)
{
    return p->adm.max_msg_len;
}

/*
 * The next frame to post: returns 1 with *a filled, 0 when nothing is due
 * now. Ring frames are not handed out while max_inflight are in flight.
 */
int rdps__rel_pub_next_action(struct rdps_rel_pub *p, uint64_t now_ns, uint64_t wall_ns,
                              struct rdps_rel_pub_action *a);

/* The n oldest in_ring actions completed (or failed): their slots may be reused. */
void rdps__rel_pub_send_done(struct rdps_rel_pub *p, uint32_t n);

/*
 * A decoded NAK (rdps__frame_decode accepted it) from `source`. Returns 0;
 * every outcome is counted (foreign session/topic, refused receiver, ranges
 * answered, suppressed, unrecoverable, future).
 */
int rdps__rel_pub_on_nak(struct rdps_rel_pub *p, const struct rdps_source *source,
                         const struct rdps_frame_view *v, uint64_t now_ns);

/* A STATUS from `source`. Returns 0; outcomes counted like NAKs. The first STATUS of a receiver
 * not in the table draws a heartbeat ahead of waiting data, as an announcement does: a
 * from_oldest receiver reports as soon as it sees the stream and waits for the ring's oldest
 * sequence, which only a heartbeat tells, and its announcement may reach a loaded host late. */
int rdps__rel_pub_on_status(struct rdps_rel_pub *p, const struct rdps_source *source,
                            const struct rdps_rel_status *st, uint64_t now_ns, uint64_t wall_ns);

/*
 * The glue's entry point: a decoded NAK or STATUS frame addressed to this
 * session (STATUS fields, echo included, are taken from the view). Other
 * frame types are counted as foreign. Returns 0.
 */
int rdps__rel_pub_on_frame(struct rdps_rel_pub *p, const struct rdps_source *source,
                           const struct rdps_frame_view *v, uint64_t now_ns, uint64_t wall_ns);

/*
 * Discovery's group tag for a receiver it announced (0: none); creates the
 * entry (announced, without a connect hold) if needed. Returns 0 or
 * RDPS_ENOSPC (refused, counted).
 */
int rdps__rel_pub_receiver_tag(struct rdps_rel_pub *p, const struct rdps_source *source,
                               uint32_t receiver_id, uint32_t tag, uint64_t now_ns);

/*
 * Discovery announced a reliable receiver (its group tag, 0: none) from
 * `source` itself (the caller checked that the announcement names the
 * datagram's own GID and QPN; never call this for one that does not). It
 * becomes ACTIVE if it already reported a position at or above the trail;
 * otherwise it holds data until its first STATUS or connect_timeout_ns (see
 * Connecting, where holds are bounded), and the next heartbeat goes at once.
 * A receiver already ACTIVE or EVICTED is only re-tagged. Returns 0 or
 * RDPS_ENOSPC (refused, counted).
 */
int rdps__rel_pub_expect_receiver(struct rdps_rel_pub *p, const struct rdps_source *source,
                                  uint32_t receiver_id, uint32_t tag, uint64_t now_ns);

/*
 * Discovery saw the receiver leave (expired: its announcements stopped):
 * it leaves flow control and the table; an expired one that was in flow
 * control raises TIMED_OUT. Returns 0 or RDPS_ENOENT.
 */
int rdps__rel_pub_receiver_gone(struct rdps_rel_pub *p, const struct rdps_source *source,
                                uint32_t receiver_id, bool expired);

/* Timeouts and stall evictions due at now_ns; returns the next deadline (UINT64_MAX: none). */
uint64_t rdps__rel_pub_tick(struct rdps_rel_pub *p, uint64_t now_ns);

/* Oldest retained sequence (late join "from oldest"), next sequence to post, retained count. */
static inline uint32_t rdps__rel_pub_oldest_seq(const struct rdps_rel_pub *p)
{
    return p->adm.ring.trail_seq;
}
static inline uint32_t rdps__rel_pub_next_seq(const struct rdps_rel_pub *p)
{
    return p->adm.post_seq;
}
static inline uint32_t rdps__rel_pub_retained(const struct rdps_rel_pub *p)
{
    return p->adm.post_seq - p->adm.ring.trail_seq;
}

static inline const struct rdps_rel_pub_counters *
rdps__rel_pub_counters(const struct rdps_rel_pub *p)
{
    return &p->counters;
}

/* ACTIVE receivers, and announced KNOWN ones that reported a position (catching up), that have
 * not yet consumed every appended message (drain before exit). */
uint32_t rdps__rel_pub_receivers_behind(const struct rdps_rel_pub *p);

/* Receivers in the table; one receiver's state (0, or RDPS_ENOENT). */
uint32_t rdps__rel_pub_receiver_count(const struct rdps_rel_pub *p);
int rdps__rel_pub_receiver_info(const struct rdps_rel_pub *p, const struct rdps_source *source,
                                uint32_t receiver_id, struct rdps_rel_pub_receiver_info *info);

#endif /* RDPS_PROTO_REL_PUB_H */
