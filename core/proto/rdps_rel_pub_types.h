/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rel_pub_types.h - the reliable publisher's vocabulary, shared by its layers and its callers:
 * config, counters, actions, events, receiver states (model: rdps_rel_pub.h). */
#ifndef RDPS_PROTO_REL_PUB_TYPES_H
#define RDPS_PROTO_REL_PUB_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rdps_frame.h"
#include "rdps_source.h"

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
    uint32_t session_id;    /* nonzero */
    uint64_t topic_id;      /* nonzero */
    uint32_t first_seq;     /* sequence of the first frame */
    uint32_t first_ordinal; /* ordinal of the first message */
    uint32_t max_datagram;  /* frame bytes including the header (path MTU) */
    uint32_t max_msg_len;   /* larger messages: RDPS_EMSGSIZE */
    void *ring_mem;         /* caller memory (registered), ring_bytes long */
    size_t ring_bytes;      /* default RDPS_REL_PUB_DEFAULT_RING */
    uint32_t ring_frames;   /* slots; power of two; 0 = ring_bytes / 128 rounded up */
    uint32_t max_inflight;  /* ring frames handed out and not completed; power of two */
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
    /* Repairs bounded by what is sent (rdps_rel_earned.h): repair bytes earned per 1000 bytes of
     * data posted and receiver in flow control (default 2000: twice the data), the most saved
     * per receiver in flow control (0: the ring's bytes), and the floor earned per
     * repair_interval_ns however idle (0: repair_budget_bytes / 4096, 64 bytes per ms by
     * default: 64 KB/s, a datagram every 16 ms). */
    uint32_t repair_per_data_permille;
    uint64_t repair_earned_max;
    uint32_t repair_floor_bytes;
    /* Batching (rdps_rel_admit.h): messages of less than a datagram share frames; a frame still
     * filling waits at most batch_linger_ns (0: it goes as soon as it may be posted). */
    bool batching;
    uint64_t batch_linger_ns;
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
    X(heartbeats_poked, "unicast heartbeats asking the receiver the window waits on for a STATUS") \
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
    X(parity_proactive, "parity datagrams sent unasked (parity_proactive; within parity_sent)")    \
    X(frames_batched, "frames closed holding several messages (batching)")

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

/* A heartbeat sent: its wall-clock timestamp (what a receiver echoes) and monotonic departure. */
struct rdps_rel_hb_sent {
    uint64_t wall_ns, mono_ns;
};

/* A repair destination that is not a receiver slot: the topic's group. */
#define RDPS_REL_MULTICAST (-1)

#endif /* RDPS_PROTO_REL_PUB_TYPES_H */
