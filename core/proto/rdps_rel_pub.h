/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rel_pub.h - reliable publisher engine: ring, NAK repair, heartbeats, STATUS and flow
 * control, as sans-IO actions. */
/* Over 600 lines: the publisher's contract is one model (below) over two files of one engine. */
#ifndef RDPS_PROTO_REL_PUB_H
#define RDPS_PROTO_REL_PUB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rdps_frame.h"
#include "rdps_pub_ring.h"
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
 * Ring (rdps_pub_ring.h). rdps__rel_pub_append() fragments a message into
 * DATA frames (RELIABLE flag) written once into caller memory. Sequences
 * [trail, post) have been handed out, [post, head) are written and wait to
 * be posted. Posts and repairs are actions that reference a ring slot
 * (offset, length): no copy per retransmit. Append returns RDPS_EAGAIN
 * before anything is written when the flow-control window or the ring
 * cannot take the whole message; it never waits. rdps__rel_pub_reserve() and
 * rdps__rel_pub_commit() append a one-datagram message the caller writes in
 * place (zero copy), admitted by the same rules.
 *
 * The trail moves only when an append needs room, and only over frames that
 * are (a) posted, (b) not in flight (the caller reports completions with
 * rdps__rel_pub_send_done(), in posting order), and (c) below the
 * flow-control protection point: under `min` and `tagged` the slowest
 * flow-control receiver's consumed sequence, under `max` the fastest's. So
 * under `max` the ring wraps over slow receivers: any receiver whose
 * consumed sequence falls below the trail is evicted (event, counter); the
 * heartbeat's retained count tells it the gap is unrecoverable.
 *
 * Receivers. A table of at most max_receivers entries keyed by (exact
 * source, receiver_id), O(1) lookup by a seeded hash; NAK, STATUS and
 * discovery (rdps__rel_pub_expect_receiver, rdps__rel_pub_receiver_tag)
 * create entries. Anyone on the fabric can send a NAK or a STATUS from any
 * number of QPNs and GIDs it owns, so:
 *  - entries are capped per host (the GID, or the LID without a GRH:
 *    max_receivers_per_host) and per source (a host's QPN, the sender's
 *    choice: max_receivers_per_source); a new receiver past a cap, or in a
 *    full table, displaces the least recently heard unannounced receiver of
 *    the heaviest host (a new unannounced one only from a host with more
 *    receivers than its own; an announced one also an announced receiver of
 *    such a host), else it is refused (receivers_refused);
 *  - only receivers discovery announced from that same source (the glue
 *    checks the announcement names the datagram's own GID and QPN) become
 *    ACTIVE: in flow control, counted as receivers, their RTT pacing
 *    heartbeats and lingers; an unannounced one stays KNOWN whatever it
 *    reports (its NAKs are answered within small caps, below) and leaves
 *    after unannounced_timeout_ns of silence;
 *  - events (EVICTED, RESUMED, TIMED_OUT) are raised only for receivers that
 *    were ACTIVE.
 * States: KNOWN (not in flow control), ACTIVE (announced, reported a
 * position at or above the trail), EVICTED (its consumed sequence fell
 * below the trail: LAGGED; or it stalled a min/tagged publisher for
 * stall_evict_ns: STALLED). An evicted receiver earns its way back: it
 * RESUMES only with a position at or above the trail and past the one it
 * was evicted at, and not before its host's ban ends: a host's second stall
 * eviction (and each later one) within RDPS_REL_STRIKE_DECAY_NS of the
 * previous bans all its receivers from flow control for stall_evict_ns,
 * doubling with each up to RDPS_REL_BAN_MAX_NS (one step forgotten per
 * RDPS_REL_STRIKE_DECAY_NS without one).
 * A receiver unheard for receiver_timeout_ns is removed (event). STATUS:
 * consumed_seq (never moves back; beyond what was posted is bogus and
 * ignored), window = datagrams the receiver can take beyond consumed_seq
 * (at most RDPS_REASM_WINDOW - 1, what a receiver can track), and an
 * optional heartbeat echo: the echoed timestamp is looked up among the last
 * RDPS_REL_HB_SENT heartbeats this engine sent, and RTT = now - that heartbeat's
 * departure (monotonic) - echo delay; an echo of anything else gives no
 * sample (so neither a forged echo nor a step of the wall clock makes one),
 * srtt += (sample - srtt) / 8.
 *
 * Flow control over ACTIVE receivers (tagged: those carrying flow_tag):
 * limit = max (max mode) or min (min, tagged) of consumed + window; a
 * message of n frames is admitted when head + n <= limit, or when the
 * receiver defining the limit has consumed everything (a message larger
 * than its window must still go), and no frame is posted at or past the
 * limit: a message longer than the window leaves as the receivers' window
 * slides over it (they release its fragments in order as they come,
 * rdps_rel_recv.h), so a message is bounded by the ring, not by the window.
 * No such receiver: no limit. Tagged with fewer than flow_min_receivers
 * tagged receivers: nothing goes (back-pressure, cause receivers).
 *
 * Connecting receivers. Discovery tells the engine of a reliable receiver
 * before it has reported (rdps__rel_pub_expect_receiver): until its first
 * STATUS, or connect_timeout_ns, it is "connecting" and holds the data it
 * would take part in the flow control of (min: always; tagged: when it
 * carries the tag; max: only while no receiver is ACTIVE, so a publisher
 * does not send a burst its first receiver has no window for). Appends are
 * refused (backpressure_connecting), and the next heartbeat goes at once so
 * the receiver learns the session and reports. Without this, a burst sent
 * before the first STATUS overruns the receiver's window and is lost to
 * repair storms (seen on rxe: thousands of frames dropped beyond the window).
 * A host can announce receivers that never report, so holds are bounded: a
 * host whose receiver timed out connecting holds nothing for
 * RDPS_REL_CONNECT_BAN_NS, doubling with each one; and all holds together spend
 * a bucket of connect_hold_max_ns that refills at 1/RDPS_REL_HOLD_REFILL of real
 * time, so hosts without number stall the publisher at most that much, then
 * that fraction of the time (connect_holds_refused counts what it cut).
 *
 * NAK. Each range is clipped: the part below the trail is unrecoverable and
 * answered with a heartbeat unicast to the asker (at most one per linger per
 * receiver); the part at or beyond `post` is ignored (nak_future); the part
 * below the position the receiver reported is ignored (nak_stale: it said it
 * has those); at most max_frames_per_nak sequences per NAK are considered
 * (unannounced_nak_frames for an unannounced receiver; the receiver asks
 * again for the rest). Each host's NAKs may schedule host_nak_bytes of
 * repairs per repair interval (unannounced_host_bytes while none of its
 * receivers is announced): past that, sequences are not scheduled
 * (nak_host_limited) and the receiver's retry gets them. So a forged NAK
 * draws a bounded number of bytes, and one host cannot draw more per
 * interval than its allowance however many QPNs and receiver ids it uses.
 * Per sequence the engine remembers who it was last repaired to and until
 * when that answer lingers (repair_linger_ns): a NAK from the same receiver,
 * or any NAK after a multicast repair, within the linger is suppressed
 * (unless the NAK is flagged RETRANSMIT: the receiver saw a repair it asked
 * for later arrive first, so this one was lost, and it is answered once the
 * earlier repair has left); a NAK from an announced receiver of another
 * host within the linger of a unicast repair turns it into a multicast one
 * (askers of one host, or an unannounced asker, get unicast: only distinct
 * hosts that discovery announced and whose receivers are receiving, ACTIVE in
 * flow control, fan a repair out to the group); otherwise
 * the sequence is repaired by unicast to the asker.
 * Consecutive sequences with the same destination form one entry of the
 * repair queue (max_repairs entries; when full, the sequences are not
 * marked, counted, and the receiver's retry gets them).
 *
 * Scheduling (rdps__rel_pub_next_action). Repairs spend a token bucket of
 * repair_budget_bytes per repair_interval_ns, so they cannot starve new
 * data; when both wait, at most data_per_repair new frames go between two
 * repairs, so new data cannot starve repairs. While the window or the ring
 * refuses appends and no new data waits, repairs go past the budget: only
 * they can move the receivers that hold the publisher. Unicast ones then
 * spend their host's share (repair_share_bytes per interval) and multicast
 * ones the shares' pool, both within repair_share_total_bytes for all, and
 * the shared budget past it, so no receiver, host or multicast asker draws
 * repairs at the device's pace: every repair byte, in every state, is
 * charged, at most repair_budget_bytes + repair_share_total_bytes per
 * interval. And every repair byte, in every state, spends what new data earned:
 * each byte of data posted earns repair_per_data_permille / 1000 bytes of
 * repairs for each receiver in flow control (ACTIVE: it reports; at least one),
 * up to repair_earned_max for each saved, and repair_floor_bytes come with each
 * interval so an idle publisher still answers a tail loss. So repair volume is
 * tied to what the publisher sends and to the receivers that report, whoever
 * asks and from how many addresses: over any time, repairs <= ratio x data x
 * the receivers in flow control + the floor's rate + the saved allowance
 * (repairs_unearned counts the waits). A unicast entry held by its host's share goes to
 * the back of the queue, so it does not hold up other receivers' repairs. With a rate limit,
 * repairs wait for the limit's allowance like new data (ahead of it): they never put the publisher
 * into debt beyond one burst. Repairs set the RETRANSMIT flag in the ring copy of the frame. Then
 * owed unicast heartbeats, then a multicast heartbeat when idle: a minimum after data, doubling up
 * to heartbeat_max_ns (8 minimums while appends wait on the window or a receiver in flow control
 * has not reported everything posted: receivers answer heartbeats with STATUS and learn of tail
 * loss from them, which a lost STATUS or tail must not wait for long), back to the minimum on new
 * data. The minimum is heartbeat_min_ns, or half the smallest smoothed RTT
 * of the ACTIVE receivers when that is longer: a
 * receiver cannot act on a tail loss faster than a round trip, so sooner
 * heartbeats are only traffic (on rxe they were 2.4 % of the datagrams). A heartbeat
 * carries seq = post (the next sequence) and msg_len = R = post - trail
 * (the retained sequences), timestamp = wall_ns, flag RELIABLE. Heartbeat
 * frames live in the engine (valid until the next call: copy or inline
 * them); ring frames stay valid until their completion is reported.
 *
 * Parity (parity_k != 0; rdps_rel_pub_parity.c). The ring's sequences form blocks of parity_k
 * (block of s: s & ~(parity_k - 1), so blocks survive the wrap), and DATA frames leave
 * RDPS_FRAME_PARITY_OVERHEAD bytes of the datagram unused so a parity datagram of their block
 * is max_datagram long. A NAK flagged PARITY counts, per block, the datagrams the receiver
 * lacks; the engine answers with that many parity symbols of the block (rdps_fec.h), encoded
 * from the ring when sent: each repairs any one datagram of the block at every receiver that
 * lacks one. Per block a round: NAKs within it raise its target to the largest count asked
 * (not the sum; NORM's rule), a NAK asking no more is suppressed. A receiver counts what it
 * lacks with the symbols it holds, so a NAK sent after the round's last symbol could reach it
 * (later than its RTT and a quarter after that symbol left, or flagged RETRANSMIT) starts a
 * new round with new indices: that many more symbols. Parity goes by multicast
 * to an announced asker that is receiving (ACTIVE), by unicast to any other or under unicast
 * fan-out (a second
 * asker of a unicast round gets its own symbols). Its heartbeats (flagged PARITY) tell
 * receivers k, the largest smoothed RTT of the ACTIVE receivers and their count, so they
 * spread their first NAKs without a default RTT; one goes after every
 * RDPS_REL_PARITY_HB_BLOCKS blocks of data even while data waits. Refused (counted): a block not
 * aligned, a count past it, a block not wholly posted (the receiver asks for the tail by sequence);
 * a block partly below the trail is unrecoverable (heartbeat, as above); a block that leaves the
 * ring before its symbols go drops them (parity_dropped). Parity spends the host's NAK allowance,
 * the repair budget and shares like retransmissions. With parity_proactive n, posting a block's
 * last datagram queues its first n symbols by multicast as if a NAK had asked for n (no host
 * allowance spent): a receiver losing at most n of the block rebuilds them without a NAK.
 *
 * Late join: a receiver may NAK from rdps__rel_pub_oldest_seq(); one asker
 * means unicast repairs, paced by the repair budget and the host's NAK
 * allowance. A receiver joins flow control only once it is within its
 * window of the live position (consumed + window >= post): a late joiner
 * catching up on what the ring retains stays KNOWN (an EVICTED one comes
 * back past where it was evicted, as above), so it holds neither a
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

enum rdps_rel_flow {
    RDPS_REL_FLOW_MAX = 0, /* fastest receiver; slow ones are overrun and evicted */
    RDPS_REL_FLOW_MIN,     /* slowest live receiver */
    RDPS_REL_FLOW_TAGGED,  /* slowest live receiver carrying flow_tag, with a minimum count */
};

enum rdps_rel_rx_state {
    RDPS_REL_RX_FREE = 0,
    RDPS_REL_RX_KNOWN,   /* not in flow control: unannounced, or no position at/above the trail */
    RDPS_REL_RX_ACTIVE,  /* in flow control (announced, reported a position at/above the trail) */
    RDPS_REL_RX_EVICTED, /* was ACTIVE; lagged past the trail or stalled the publisher */
};

enum rdps_rel_pub_event_kind {
    RDPS_REL_PUB_EV_EVICTED = 1, /* reason: rdps_evict_reason (rdps.h) */
    RDPS_REL_PUB_EV_RESUMED,     /* an evicted receiver reported a position at/above the trail */
    RDPS_REL_PUB_EV_TIMED_OUT,   /* unheard for receiver_timeout_ns: removed */
};

struct rdps_rel_pub_event {
    enum rdps_rel_pub_event_kind kind;
    int reason; /* EVICTED: rdps_evict_reason (LAGGED: the ring no longer holds its
                   consumed sequence; STALLED: held a min/tagged publisher back for
                   stall_evict_ns); else 0 */
    const struct rdps_source *source;
    uint32_t receiver_id;
    uint32_t consumed_seq; /* the receiver's last reported position */
    uint32_t trail_seq;    /* the ring's oldest retained sequence at the time */
};

typedef void (*rdps_rel_pub_event_fn)(void *user, const struct rdps_rel_pub_event *ev);

struct rdps_rel_pub_config {
    uint32_t session_id;   /* nonzero */
    uint64_t topic_id;     /* nonzero */
    uint32_t first_seq;    /* sequence of the first frame */
    uint32_t max_datagram; /* frame bytes including the header (path MTU) */
    uint32_t max_msg_len;  /* larger messages: RDPS_EMSGSIZE */
    void *ring_mem;        /* caller memory (registered), ring_bytes long */
    size_t ring_bytes;     /* default RDPS_REL_PUB_DEFAULT_RING */
    uint32_t ring_frames;  /* slots; power of two; 0 = ring_bytes / 128 rounded up */
    uint32_t max_inflight; /* ring frames handed out and not completed; power of two */
    enum rdps_rel_flow flow;
    uint32_t flow_tag;                 /* tagged: the group tag (nonzero) */
    uint32_t flow_min_receivers;       /* tagged: tagged receivers needed before anything is sent */
    uint32_t max_receivers;            /* receiver table cap */
    uint32_t max_receivers_per_host;   /* of one host (GID, or LID without a GRH) */
    uint32_t max_receivers_per_source; /* of one source (a host's QPN) */
    uint64_t receiver_timeout_ns;      /* unheard this long: removed (default 5 s) */
    uint64_t unannounced_timeout_ns;   /* ... an unannounced receiver (1 s) */
    uint64_t connect_timeout_ns;       /* an expected receiver holds data at most this long (1 s) */
    uint64_t connect_hold_max_ns;      /* holds of all connecting receivers: this much held time,
                                          refilled at 1/RDPS_REL_HOLD_REFILL of real time (1 s) */
    uint64_t stall_evict_ns;       /* min/tagged: blocked this long evicts the slowest; 0 = never */
    uint64_t repair_linger_ns;     /* a sequence is answered once per linger (several receivers:
                                      it must cover their NAK backoff spread) */
    uint64_t repair_linger_min_ns; /* one receiver: 1.25 x its smoothed RTT, at least this */
    uint32_t repair_budget_bytes;  /* repair bytes per repair_interval_ns (>= max_datagram) */
    uint32_t repair_share_bytes;   /* unicast repair bytes one receiver may draw past the budget
                                      per repair_interval_ns (>= max_datagram) */
    uint32_t repair_share_total_bytes; /* ... all receivers together (>= repair_share_bytes) */
    uint64_t repair_interval_ns;
    uint32_t data_per_repair;    /* new frames between two repairs when both wait (>= 1) */
    uint32_t max_repairs;        /* repair queue entries (runs of sequences to one destination) */
    uint32_t max_frames_per_nak; /* sequences one NAK may schedule */
    uint32_t unannounced_nak_frames; /* ... one NAK of an unannounced receiver */
    uint32_t host_nak_bytes;         /* repair bytes one host's NAKs may schedule per interval */
    uint32_t unannounced_host_bytes; /* ... while discovery announced none of its receivers */
    /* Datagram bytes per second put on the wire, new data and repairs together (0: no limit).
     * Repairs wait for it like new data, ahead of it (never beyond one burst of debt). Bursts up
     * to RDPS_REL_RATE_BURST_NS worth, so a caller woken once a millisecond keeps the rate. */
    uint64_t rate_bytes_per_s;
    uint64_t heartbeat_min_ns, heartbeat_max_ns;
    uint64_t hash_seed;             /* random per process */
    rdps_rel_pub_event_fn on_event; /* optional */
    void *user;
    /* Parity repairs (see Parity): datagrams per block (0: none; a power of two, 2..128, at most
     * a quarter of the ring's slots) and parity symbols one block may get (1..128). */
    uint32_t parity_k;
    uint32_t parity_max;
    /* Proactive parity: symbols of each block sent unasked, by multicast, right after its last
     * datagram (0: none; at most parity_k and parity_max). They go like answers to a NAK asking
     * that many (queue, budget, rate); a later NAK of the block gets indices after them. */
    uint32_t parity_proactive;
    /* Repairs bounded by what is sent (see Scheduling): repair bytes earned per 1000 bytes of
     * data posted and receiver in flow control (default 2000: twice the data), the most saved
     * per receiver in flow control (0: the ring's bytes), and the
     * floor earned per repair_interval_ns however idle (0: repair_budget_bytes / 4096, 64 bytes
     * per ms by default: 64 KB/s, a datagram every 16 ms). */
    uint32_t repair_per_data_permille;
    uint64_t repair_earned_max;
    uint32_t repair_floor_bytes;
};

#define RDPS_REL_PUB_DEFAULT_RING (16u * 1024u * 1024u)
/* rate_bytes_per_s: at most one datagram per second up to 100 GB/s; bursts of 2 ms. */
#define RDPS_REL_RATE_MAX      100000000000ull
#define RDPS_REL_RATE_BURST_NS 2000000ull
#define RDPS_REL_NO_ECHO       RDPS_FRAME_NO_ECHO
/* Heartbeats remembered for RTT echoes (their wall timestamp and monotonic departure). */
#define RDPS_REL_HB_SENT 256u
/* Stall-eviction bans of a host: none for the first eviction, then stall_evict_ns doubling per
 * eviction up to RDPS_REL_BAN_MAX_NS; one step is forgotten per RDPS_REL_STRIKE_DECAY_NS without
 * another. A host whose announced
 * receiver never reported holds no data for RDPS_REL_CONNECT_BAN_NS, doubling likewise. The
 * connect-hold bucket refills at 1/RDPS_REL_HOLD_REFILL of real time. */
#define RDPS_REL_BAN_MAX_NS      256000000000ull
#define RDPS_REL_STRIKE_DECAY_NS 60000000000ull
#define RDPS_REL_CONNECT_BAN_NS  60000000000ull
#define RDPS_REL_HOLD_REFILL     32u
/* With parity, a heartbeat (telling k) goes after every this many blocks of data however busy
 * the publisher is (64 KiB of 52-byte heartbeats per 1 GiB of 1 KiB datagrams at k = 64). */
#define RDPS_REL_PARITY_HB_BLOCKS 16u

/* A received STATUS, as decoded (rdps__rel_pub_on_frame fills it from the frame view). */
struct rdps_rel_status {
    uint32_t session_id;
    uint64_t topic_id;
    uint32_t receiver_id;
    uint32_t consumed_seq;
    uint32_t window;
    uint32_t echo_delay_us;     /* RDPS_REL_NO_ECHO: no heartbeat echoed */
    uint64_t echo_timestamp_ns; /* the echoed heartbeat's timestamp (header timestamp_ns) */
};

enum rdps_rel_pub_action_kind {
    RDPS_REL_PUB_POST_DATA = 1, /* first post of a frame (multicast) */
    RDPS_REL_PUB_POST_REPAIR,   /* retransmission (multicast or unicast) */
    RDPS_REL_PUB_POST_HEARTBEAT,
    RDPS_REL_PUB_POST_PARITY, /* a parity datagram of a block (engine buffer, like heartbeats) */
};

/* One frame to post. dest and receiver_* are set only when unicast. */
struct rdps_rel_pub_action {
    enum rdps_rel_pub_action_kind kind;
    bool unicast;            /* to `dest`; otherwise to the topic's group */
    bool in_ring;            /* a ring frame: report its completion with send_done */
    uint32_t seq;            /* DATA/REPAIR: the frame's sequence; HEARTBEAT: next sequence */
    uint32_t len;            /* frame bytes */
    uint64_t ring_offset;    /* in_ring: offset of the frame from ring_mem */
    const uint8_t *frame;    /* the bytes: ring_mem + ring_offset, or the engine's buffer */
    struct rdps_source dest; /* unicast: the receiver's address (GID, QPN, LID) */
    uint32_t receiver_id;    /* unicast */
    uint32_t receiver_slot;  /* unicast: table index, stable while receiver_gen is */
    uint32_t receiver_gen;   /* changes when the slot is reused (cache an AH per slot+gen) */
};

#define RDPS_REL_PUB_COUNTER_MAP(X)                                                                \
    X(msgs_appended, "messages written into the ring")                                             \
    X(frames_appended, "frames written into the ring")                                             \
    X(bytes_appended, "message bytes written into the ring")                                       \
    X(data_posted, "first posts of data frames")                                                   \
    X(rate_waits, "times new data waited for the rate limit (each wait, however long)")            \
    X(backpressure_ring, "appends refused: the ring could not drop enough old frames")             \
    X(backpressure_window, "appends refused: flow-control window")                                 \
    X(backpressure_receivers, "appends refused: fewer tagged receivers than the minimum")          \
    X(backpressure_connecting, "appends refused: an expected receiver has not reported yet")       \
    X(receivers_expected, "receivers announced by discovery before their first STATUS")            \
    X(connect_timeouts, "expected receivers that sent no STATUS within connect_timeout")           \
    X(receivers_gone, "receivers removed because discovery saw them leave or expire")              \
    X(naks_received, "NAK frames received for this session")                                       \
    X(nak_ranges, "NAK ranges received")                                                           \
    X(naks_overtaken, "NAKs flagged RETRANSMIT: repairs overtaken, answered in the linger")        \
    X(nak_ranges_answered, "NAK ranges that scheduled at least one repair")                        \
    X(nak_ranges_suppressed, "NAK ranges wholly suppressed by the linger")                         \
    X(nak_seqs_suppressed, "NAKed sequences suppressed by the linger")                             \
    X(nak_ranges_unrecoverable, "NAK ranges reaching below the trail")                             \
    X(nak_future, "NAK ranges (or parts) not posted yet: ignored")                                 \
    X(nak_clipped, "NAK ranges cut at max_frames_per_nak")                                         \
    X(repair_queue_full, "NAKed sequences not scheduled: repair queue full")                       \
    X(repairs_unicast, "repair frames sent by unicast")                                            \
    X(repairs_multicast, "repair frames sent by multicast")                                        \
    X(repair_bytes, "bytes of repair frames")                                                      \
    X(repairs_dropped, "scheduled repairs dropped: below the trail or receiver gone")              \
    X(repair_share_spent, "times a host's share past the budget, or all, ran out")                 \
    X(repairs_unearned, "times repairs waited for what new data earns them (repair volume bound)") \
    X(heartbeats, "multicast heartbeats")                                                          \
    X(heartbeats_unrecoverable, "unicast heartbeats answering NAKs below the trail")               \
    X(status_received, "STATUS frames received for this session")                                  \
    X(status_bogus, "STATUS positions beyond what was posted (ignored)")                           \
    X(status_stale, "STATUS older than the receiver's last position (ignored)")                    \
    X(rtt_samples, "RTT samples from echoed heartbeats")                                           \
    X(rtt_bogus, "echoes giving a negative or absurd RTT (ignored)")                               \
    X(receivers_created, "receiver table entries created")                                         \
    X(receivers_refused, "NAK/STATUS/tag refused: table, host or source full")                     \
    X(receivers_timed_out, "receivers removed after receiver_timeout_ns of silence")               \
    X(evictions, "receivers evicted (lagged past the trail or stalled the publisher)")             \
    X(resumes, "evicted receivers back at the live position")                                      \
    X(foreign_frames, "NAK/STATUS of another session or topic, other frame types (ignored)")       \
    X(nak_stale, "NAK ranges (or parts) below the position the receiver reported (ignored)")       \
    X(nak_host_limited, "NAKed sequences not scheduled: the host's allowance this interval")       \
    X(receivers_displaced,                                                                         \
      "receivers removed to make room for another host's or an announced one")                     \
    X(connect_holds_refused, "announced receivers held no data: host banned or hold bucket empty") \
    X(rejoins_refused, "STATUS of evicted receivers kept out: no progress, or host banned")        \
    X(host_bans, "hosts banned from flow control after a stall eviction")                          \
    X(parity_nak_ranges, "NAK ranges asking for parity symbols of a block")                        \
    X(parity_nak_refused,                                                                          \
      "parity NAK ranges refused: no parity, block misaligned, count past it, not whole posted")   \
    X(parity_nak_suppressed, "parity NAK ranges asking no more than the block's round sends")      \
    X(parity_sent, "parity datagrams sent")                                                        \
    X(parity_bytes, "bytes of parity datagrams")                                                   \
    X(parity_dropped, "scheduled parity symbols dropped: the block left the ring")                 \
    X(parity_proactive, "parity datagrams sent unasked (parity_proactive; within parity_sent)")

struct rdps_rel_pub_counters {
#define RDPS_REL_PUB_COUNTER_FIELD_(name, text) uint64_t name;
    RDPS_REL_PUB_COUNTER_MAP(RDPS_REL_PUB_COUNTER_FIELD_)
#undef RDPS_REL_PUB_COUNTER_FIELD_
    uint64_t rtt_last_ns; /* gauge: the latest RTT sample of an ACTIVE receiver */
};

/* A receiver as the publisher sees it (stats, tests). */
struct rdps_rel_pub_receiver_info {
    struct rdps_source source;
    uint32_t receiver_id;
    enum rdps_rel_rx_state state;
    uint32_t consumed_seq, window, tag;
    uint64_t srtt_ns; /* 0 until the first sample */
    uint64_t last_heard_ns;
};

struct rdps_rel_receiver;
struct rdps_rel_host;
struct rdps_rel_repair;
struct rdps_rel_mark;

/* A heartbeat sent: its wall-clock timestamp (what a receiver echoes) and monotonic departure. */
struct rdps_rel_hb_sent {
    uint64_t wall_ns, mono_ns;
};

/* Embedded by the caller; contents are private to rdps_rel_pub*.c. */
struct rdps_rel_pub {
    struct rdps_rel_pub_config cfg;
    struct rdps_rel_pub_counters counters;
    struct rdps_pub_ring ring;
    uint32_t post_seq;    /* next frame to post: [trail, post) posted, [post, head) waiting */
    uint32_t payload;     /* max_datagram - header */
    uint32_t max_msg_len; /* cfg.max_msg_len capped at what the ring holds */
    struct rdps_rel_mark *marks; /* per ring slot: last repair destination and linger */
    /* Repair queue (FIFO) and budget. */
    struct rdps_rel_repair *repairs;
    uint32_t rq_head, rq_count;
    int64_t repair_tokens;
    int64_t share_pool;       /* what is left of repair_share_total_bytes this interval */
    int64_t repair_earned;    /* repair bytes new data earned (and the floor), not yet spent */
    int64_t earned_max;       /* cfg.repair_earned_max, resolved */
    uint32_t earned_floor;    /* cfg.repair_floor_bytes, resolved */
    bool unearned_waiting;    /* repairs wait for earnings (counted once per wait) */
    int32_t last_repair_host; /* the host (record) the last repair went to; -1: multicast */
    bool earn_starved;        /* repairs waited for earnings since the queue was last empty */
    uint64_t tokens_at;
    uint32_t data_since_repair;
    /* Rate limit (cfg.rate_bytes_per_s): the time the bytes charged so far are paid off; new
     * data goes while it is at most RDPS_REL_RATE_BURST_NS ahead of now (GCRA). */
    uint64_t rate_paid_ns;
    bool rate_waiting; /* new data is waiting for the limit (counted once per wait) */
    /* Heartbeats. */
    uint64_t hb_next, hb_interval;
    uint64_t hb_min;    /* heartbeat_min_ns, or half the ACTIVE receivers' least smoothed RTT */
    uint64_t linger_ns; /* one receiver's linger (repair_linger_ns until an RTT sample) */
    struct rdps_rel_hb_sent hb_sent[RDPS_REL_HB_SENT]; /* the latest heartbeats, a ring */
    uint32_t hb_sent_count;
    uint8_t hb_buf[RDPS_FRAME_HB_PARITY_LEN];
    uint32_t *owed;     /* FIFO of receiver slots owed a unicast heartbeat (NAK below trail) */
    uint32_t *owed_gen; /* ... and their generations (a reused slot is skipped) */
    uint32_t owed_head, owed_count;
    /* Receivers. */
    struct rdps_rel_receiver *rx;
    int32_t *rx_buckets;
    uint32_t rx_mask, rx_count, rx_gen;
    int32_t rx_free;
    uint64_t rx_next_expiry;
    /* Hosts (rdps_rel_host): 2 x max_receivers records, so one is always free or unused. */
    struct rdps_rel_host *hosts;
    int32_t *host_buckets;
    uint32_t host_cap, host_mask;
    int32_t host_free;
    /* Connect holds: held time spent (level), refilled since hold_at; the last refusal. */
    uint64_t hold_level_ns, hold_at_ns, hold_last_ns;
    /* Flow control, recomputed lazily when fc_dirty. */
    bool fc_dirty, fc_limited;
    uint32_t fc_limit;          /* sequences below it may be sent */
    uint32_t fc_limit_consumed; /* consumed sequence of the receiver defining fc_limit */
    uint32_t fc_protect;        /* the trail may not pass it (when fc_protected) */
    bool fc_protected;
    uint32_t fc_tagged;     /* ACTIVE receivers carrying flow_tag */
    uint32_t fc_connecting; /* expected receivers that would hold data (see Connecting) */
    uint32_t fc_members;    /* ACTIVE receivers (any tag): the receiver count */
    bool lag_any;           /* some ACTIVE receiver (any tag) exists */
    uint32_t lag_min;       /* lowest consumed sequence among ACTIVE receivers */
    uint64_t blocked_since; /* min/tagged: first refused append of the current stall; 0 */
    bool window_blocked;    /* the last append was refused by the window (heartbeats stay quick) */
    bool ring_blocked;      /* ... by the ring (its trail waits on receivers), until one succeeds or
                               the position the ring keeps moves */
    int blocked_by_window;  /* the stall's cause: 1 window, 0 ring */
    uint32_t blocked_mark;  /* fc_limit (window) or fc_protect (ring) when it began */
    /* Zero-copy: room for one datagram reserved at the head (rdps__rel_pub_reserve). */
    bool reserved;
    uint32_t reserve_cap; /* payload bytes it holds */
    uint64_t reserve_pos; /* ring position of the frame */
    /* The trail does not pass pin_seq while pins > 0 (rdps__rel_pub_pin). */
    uint32_t pins, pin_seq;
    /* The publisher's group carries nothing (unicast fan-out): every repair goes by unicast to
     * its asker; a "multicast" one would be a copy to every subscriber (rdps__rel_pub_set_fanout).
     */
    bool repairs_unicast_only;
    bool hb_urgent; /* a receiver was announced: the next action is a heartbeat, ahead of data */
    /* Parity (cfg.parity_k != 0): the codec, per block of the ring its repair round
     * (rdps_rel_block, block_mask + 1 of them), the parity datagram being sent. */
    struct rdps_fec *fec;
    struct rdps_rel_block *blocks;
    uint32_t block_mask;
    uint32_t parity_len; /* a parity datagram's bytes: max_datagram */
    uint8_t *parity_buf;
    struct rdps_pub_ring_slot parity_slot; /* len = parity_len: a parity entry in next_repair */
    uint64_t fc_rtt_max; /* the largest smoothed RTT among ACTIVE receivers (heartbeats tell it) */
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
 * wall_ns) to be posted by next_action. Returns the frame count, RDPS_EAGAIN
 * (nothing written: window, ring or missing tagged receivers; counted by
 * cause), RDPS_EMSGSIZE (above rdps__rel_pub_max_msg_len or larger than the ring),
 * RDPS_EBUSY (a reservation is outstanding: rdps__rel_pub_reserve).
 */
int rdps__rel_pub_append(struct rdps_rel_pub *p, const void *msg, size_t len, uint64_t now_ns,
                         uint64_t wall_ns);
/*
 * Zero-copy append of a message of one datagram, in three steps. Reserve admits one datagram as
 * append would (same flow control and ring rules; RDPS_EAGAIN and RDPS_EMSGSIZE leave nothing
 * reserved) and reserves room for a whole one at the head of the ring: *payload is where the
 * message goes, *capacity its room (the datagram's payload, at most max_msg_len). The caller
 * writes the message there, then commit writes the frame's header (sequence, wall_ns) and appends
 * it as append would have: returns 1 (frames), RDPS_EMSGSIZE when len exceeds the capacity (the
 * reservation stays), RDPS_EINVAL when nothing is reserved. unreserve gives the room back. While
 * a reservation is outstanding, append and reserve return RDPS_EBUSY; posts, repairs, NAKs,
 * STATUS and timers go on (the reserved frame is not in the ring until committed).
 */
int rdps__rel_pub_reserve(struct rdps_rel_pub *p, uint64_t now_ns, uint8_t **payload,
                          uint32_t *capacity);
int rdps__rel_pub_commit(struct rdps_rel_pub *p, size_t len, uint64_t wall_ns);
void rdps__rel_pub_unreserve(struct rdps_rel_pub *p);

/*
 * Keeps sequence seq and every later one in the ring until the matching unpin: appends that would
 * need the trail past it are refused (RDPS_EAGAIN, ring). For reading a frame in place while code
 * that may append runs (a committed message delivered from the ring to callbacks). Pins nest; the
 * first one's sequence holds until the last unpin (later pins are of later sequences).
 */
void rdps__rel_pub_pin(struct rdps_rel_pub *p, uint32_t seq);
void rdps__rel_pub_unpin(struct rdps_rel_pub *p);

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
    return p->max_msg_len;
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

/* A STATUS from `source`. Returns 0; outcomes counted like NAKs. */
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
    return p->ring.trail_seq;
}
static inline uint32_t rdps__rel_pub_next_seq(const struct rdps_rel_pub *p)
{
    return p->post_seq;
}
static inline uint32_t rdps__rel_pub_retained(const struct rdps_rel_pub *p)
{
    return p->post_seq - p->ring.trail_seq;
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
