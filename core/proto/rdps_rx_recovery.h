/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rx_recovery.h - recovery for reliable streams: NAK scheduling, RTT, STATUS and loss
 * deadlines, sans-IO over the sequence tracker (layer 3 of the receive engine). */
#ifndef RDPS_PROTO_RX_RECOVERY_H
#define RDPS_PROTO_RX_RECOVERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdps/rdps.h>

#include "rdps_frame.h"
#include "rdps_rx_parity.h"
#include "rdps_rx_track.h"
#include "rdps_rx_types.h"

/*
 * Model
 * -----
 * One record per reliable stream (by the caller's stream index), allocated
 * at init; no clock (now_ns and wall_ns are passed), frames go out through
 * the send callback given at init, the next deadline comes back from every
 * call that sets one. It reads and writes the missing ranges of the
 * stream's tracker (rdps_rx_track.h: their timers are its NAK schedule) and
 * nothing else below it; it calls no other layer.
 *
 * Ranges (rdps__rx_rec_gap_add). A range is NAKed when due: first after
 * nak_holdoff_ns plus a random truncated-exponential backoff (RFC 5401:
 * max nak_backoff_rtts x RTT, shaped by the EXACT number of live receivers
 * of that publisher, an input; one receiver NAKs at once), then retried
 * after an RTT eight times, then RTT x 2^n (the doubling capped at
 * nak_retry_max_ns; a lone receiver waits at least its RTO, smoothed RTT +
 * 4 mean deviations of the NAK -> repair samples, RFC 6298) plus a new
 * backoff. Every range due at one poll goes in one NAK (up to 64 ranges),
 * by unicast to the stream's source. A stream with parity repairs (several receivers, the
 * publisher's block size known, a whole record of the block in the block store, the block
 * wholly sent as far as its frames and heartbeats tell) asks for a block's missing datagrams by
 * count instead, in a NAK flagged PARITY: {block start, datagrams and symbols it still lacks}; a
 * lone receiver, and blocks without a whole record, ask by sequence.
 * Suppression: a repair (DATA with RETRANSMIT) that fills a sequence of a
 * range cancels that part, and pushes the rest of the range back by an RTT
 * (its repair is likely in flight); one never NAKed counts naks_suppressed.
 *
 * Overtaken repairs (a lone receiver on a path not seen reordering): the
 * publisher answers NAKs in order and its repairs leave one queue pair in
 * order, so when the repair of a sequence NAKed once, at time T, arrives, a
 * range NAKed before T (or at T, below that sequence) that is still missing
 * lost its NAK or its repair. It is NAKed again at once, in a NAK flagged
 * RETRANSMIT that the publisher answers inside its linger. A range is
 * overtaken at most once per NAK it had.
 *
 * RTT: srtt starts at default_rtt_ns; a repair of a range NAKed exactly once
 * gives a sample (NAK -> repair; Karn's rule), srtt += (sample - srtt) / 8. A
 * lone receiver's first sample replaces the default, and may come from a
 * range NAKed more than once (detection -> repair: an upper bound).
 *
 * Loss decisions (rdps__rx_rec_verdict). A range is given up after
 * nak_max_tries NAKs (NAK_RETRIES) or loss_deadline_ns after detection or
 * the stream's last repair, whichever is later (DEADLINE); one below the publisher's trail (its
 * heartbeat's retained count) at once (BELOW_RING), never NAKed. The caller releases in order and
 * raises the loss events.
 *
 * STATUS (unicast to the source): consumed_seq, the window the caller
 * computed (rdps__track_window) and receiver_id; due when the stream is new,
 * after a quarter of the window it last offered was consumed, after a
 * quarter of the credits of frames past the last one reported (the window's
 * edge moved), when a heartbeat finds everything held, or every
 * status_interval_ns; it echoes the latest heartbeat's timestamp with the
 * hold delay. The thresholds are set when a STATUS goes, so a frame's check
 * is two compares.
 *
 * A silent publisher. Every frame of the stream is hearing from its
 * publisher. While nothing is heard, STATUS backs off (each one sent with
 * nothing heard since the one before doubles the interval, up to 16 x
 * status_interval_ns); once nothing was heard for two status intervals, a
 * NAK retry whose previous NAK had nothing back waits at least as long as
 * the silence so far, and after idle_ns of silence the stream is idle: it
 * sends nothing at all (its ranges still meet their loss deadline). The
 * first frame heard ends it (rdps__rx_rec_heard).
 */

/* Why sequences were given up: the public rdps_loss_reason (rdps.h), and RDPS__LOSS_NONE for
 * "not lost" (sequences sent before this receiver joined, which no event reports). */
#define RDPS__LOSS_NONE ((rdps_loss_reason)0)
/* Entries of an array indexed by reason, RDPS__LOSS_NONE included (SESSION_DROPPED is the last). */
#define RDPS__LOSS_REASONS (RDPS_LOSS_SESSION_DROPPED + 1)

/* One unrecoverable run of sequences. */
struct rdps_reasm_loss {
    const struct rdps_source *source;
    uint32_t session_id;
    uint64_t topic_id;
    uint32_t first_seq, count;
    rdps_loss_reason reason;
    uint32_t msg_first, msg_count; /* the messages given up with them (ordinals) */
};

/* Repair latency histogram: bucket i counts latencies in [2^(i-1), 2^i) microseconds (0: < 1). */
#define RDPS_REL_LATENCY_BUCKETS 24
/* The same latencies in round trips of the stream's smoothed NAK-to-repair RTT when the repair
 * came: quarter-RTT buckets below 4 RTTs (bucket i: [i/4, (i+1)/4)), then one per doubling
 * ([4, 8), [8, 16), ...; the last holds 2048 RTTs and more). */
#define RDPS_REL_RTT_LINEAR  16
#define RDPS_REL_RTT_BUCKETS (RDPS_REL_RTT_LINEAR + 10)

struct rdps_rel_recv_counters {
    uint64_t naks_sent;       /* NAK frames */
    uint64_t nak_ranges_sent; /* ranges in them */
    uint64_t naks_suppressed; /* pending NAKs (ranges) cancelled or deferred by a seen repair */
    uint64_t overtaken;       /* ranges NAKed again at once: a later-asked repair came first */
    uint64_t retries_held;    /* ranges whose retry waited for queued datagrams to be processed */
    uint64_t recovered;       /* missing sequences filled by a repair */
    uint64_t out_of_order;    /* missing sequences filled by a late original */
    uint64_t duplicates;      /* frames already received, delivered or given up */
    uint64_t delivered;       /* messages delivered in order */
    uint64_t parked;          /* messages completed above the consumed point */
    uint64_t park_evicted;    /* parked/partial messages evicted: their sequences asked again */
    uint64_t beyond_window;   /* frames a window or more past the consumed point (dropped) */
    uint64_t range_overflow;  /* gap list full: ranges merged (over-asking) */
    uint64_t join_skipped;    /* sequences of messages begun before the join (not delivered) */
    uint64_t repairs_before_join; /* totals only: repairs of unknown streams (no join there) */
    uint64_t status_sent;
    uint64_t idle; /* times a stream's publisher fell silent for idle_ns: NAK and STATUS stopped */
    uint64_t heartbeats;
    uint64_t rtt_samples;
    uint64_t loss_events;
    uint64_t lost[RDPS__LOSS_REASONS];                 /* sequences given up, by reason */
    uint64_t lost_msgs;                                /* messages given up (every reason) */
    uint64_t repair_latency[RDPS_REL_LATENCY_BUCKETS]; /* detection -> repair */
    uint64_t repair_rtts[RDPS_REL_RTT_BUCKETS];        /* the same, in RTTs */
    uint64_t
        streamed; /* messages longer than the window, released into their buffer as they came */
    uint64_t late_joins; /* from_oldest joins that moved back to the publisher's oldest sequence */
    uint64_t parity_ranges_sent; /* NAK ranges asking for parity symbols of a block */
    uint64_t parity_rebuilt;     /* missing sequences rebuilt from parity symbols */
};

/*
 * Sends one control frame (NAK or STATUS, fully encoded) by unicast to the
 * publisher `dest` (the stream's source: its QPN and GID/LID).
 */
typedef void (*rdps_rel_send_fn)(void *user, const struct rdps_source *dest, uint32_t session_id,
                                 const uint8_t *frame, size_t len);
/* Unrecoverable loss, raised once per run when the consumed point reaches it. */
typedef void (*rdps_loss_fn)(void *user, const struct rdps_reasm_loss *loss);
/* The live reliable receivers of a topic (this one included) as discovery counts them. */
typedef uint32_t (*rdps_rel_receivers_fn)(void *user, uint64_t topic_id);

struct rdps_rel_recv_config {
    bool enabled;                /* handle streams whose frames carry RELIABLE reliably */
    bool from_oldest;            /* late join from the oldest retained sequence */
    uint32_t receiver_id;        /* carried in NAK and STATUS */
    uint32_t receivers;          /* live receivers per publisher until set per stream (>= 1) */
    uint64_t default_rtt_ns;     /* RTT before any sample */
    uint32_t nak_backoff_rtts;   /* first-NAK backoff bound in RTTs (more than one receiver) */
    uint64_t nak_holdoff_ns;     /* added before every first NAK (reordering fabrics) */
    uint64_t reorder_holdoff_ns; /* ... at least this once a stream saw a late original (a
                                    path that reorders: no NAK for what is merely late) */
    uint64_t nak_retry_max_ns;   /* retry interval cap */
    uint64_t nak_retry_min_ns;   /* retry interval floor (0: none) with several receivers
                                    until an RTT sample; then (if nak_retry_alone_ns) the
                                    alone rule on the latest samples, at most this */
    uint64_t nak_retry_alone_ns; /* the floor when this is the stream's only receiver (0: the
                                    one above): the publisher's linger is then 2 of its RTTs */
    uint32_t nak_retry_min_rtts; /* alone: and at least this many RTTs */
    uint32_t nak_max_tries;      /* NAKs per range before RDPS_LOSS_NAK_RETRIES (>= 1) */
    uint64_t loss_deadline_ns;   /* RDPS_LOSS_DEADLINE this long after detection or the stream's
                                    last repair, whichever is later; 0 = never */
    uint64_t status_interval_ns; /* STATUS at least this often (doubling while the publisher
                                    is silent) */
    uint64_t idle_ns;            /* publisher silent this long: no NAK or STATUS until it is
                                    heard again (0: never) */
    uint64_t join_wait_ns;       /* from_oldest: wait this long for the first heartbeat */
    uint64_t rng_seed;           /* NAK backoff randomness (seeded: tests replay) */
    /* Both callbacks get rdps_reasm_config.user, like deliver; they must not call back in. */
    rdps_rel_send_fn send; /* required when enabled */
    rdps_loss_fn on_loss;  /* optional; also raised from expire/eviction (STREAM_GONE) */
    /* Optional: asked when a first NAK is scheduled; overrides the per-stream count (the NAK
     * backoff then follows receivers joining and leaving). 0 is taken as 1. */
    rdps_rel_receivers_fn receivers_of;
    /* Parity repairs (rdps_rx_parity.h): block records in the pool (0: none, every NAK names
     * sequences), at most this many per stream (0: 16), the largest block (0: 64) and DATA
     * frame kept (0: 1024 bytes). */
    uint32_t parity_blocks;
    uint32_t parity_blocks_per_stream;
    uint32_t parity_k_max;
    uint32_t parity_max_frame;
};

/* Receive credits: datagrams a receiver lets be in flight past the newest one it received. Half
 * the sequence window: the other half lets the publisher go on past a hole while its repair
 * comes, as far as the parking room allows. 511 on rxe halved the repair latency and the
 * duplicate repairs but cost 7 % of the lossless rate (10 interleaved rounds): the credits must
 * also cover the frames posted ahead in the publisher's send queue and the emulated round trip
 * of several ms. */
#define RDPS_REL_CREDITS_MAX 1023u
/* STATUS intervals double at most this many times (100 ms -> 1.6 s at the defaults; a stream
 * goes idle before: 5 s). */
#define RDPS_REL_STATUS_BACKOFF_MAX 4

/* Recovery state of one reliable stream. */
struct rdps_rx_rel {
    struct rdps_rx_ident id;
    uint32_t trail;           /* publisher's oldest retained sequence (have_trail) */
    uint32_t receivers;       /* live receivers of this publisher */
    uint32_t status_consumed; /* consumed sent in the last STATUS */
    uint32_t status_next;     /* the stream's next at the last STATUS */
    uint32_t status_quarter;  /* a quarter of the window the last STATUS offered (>= 1) */
    uint64_t srtt_ns;
    uint64_t rttvar_ns;          /* mean deviation of the NAK -> repair samples (RFC 6298) */
    uint64_t rtt_fast_ns;        /* NAK -> repair, halving towards each sample (0: none yet) */
    uint64_t status_ns;          /* last STATUS sent */
    uint64_t hb_ts_ns, hb_rx_ns; /* latest heartbeat: its timestamp, when it arrived */
    uint32_t hb_next; /* the publisher sent everything before it, as the newest heartbeat or a
                         frame dropped beyond the window said (valid if has_hb_next) */
    bool has_hb_next;
    bool extend; /* the consumed point moved while hb_next is untracked: track more at poll */
    /* The last extend stopped at the window's edge with these consumed and next: not again
     * until one of them moves (the edge moves with them), or every poll would be due at once. */
    bool extend_tried;
    uint32_t extend_consumed, extend_next;
    uint64_t join_deadline_ns; /* joining: give up waiting for a heartbeat */
    bool have_trail, joining, hb_echo, status_now;
    bool reordering; /* a missing sequence arrived late: first NAKs wait for reordering */
    /* How late missing originals arrived after their range was found (a decaying maximum). */
    uint64_t reorder_late_ns;
    /* The message at (or, streaming, holding) the consumed point spans head_span datagrams from
     * head_seq (learnt from one of its non-final fragments): the window stretches to hold it. */
    uint32_t head_seq, head_span;
    bool has_head;
    bool progressed;      /* consumed moved by a delivery or a loss event since the join */
    uint64_t repaired_ns; /* a repair last filled one of its missing sequences (0: never) */
    /* STATUS intervals doubled status_backoff times (each STATUS sent with no frame heard since
     * the one before); `silent` makes the next frame of the stream bring the poll forward. */
    uint8_t status_backoff;
    bool silent, idle;
    bool parity;           /* the publisher has parity repairs and this receiver keeps its blocks */
    uint32_t hb_receivers; /* the receivers its heartbeats count in flow control (0: none) */
    uint64_t hb_rtt_ns;    /* the group's largest RTT, as its latest heartbeat said (0: none) */
    /* Message ordinals (rdps_rel_recv.c, "Messages"): the trail's and the latest heartbeat's
     * (hb_ord_seq: its next sequence), and after the newest datagram seen (ord_seen). */
    uint32_t trail_ordinal;
    uint32_t hb_ord_seq, hb_ordinal;
    uint32_t ord_seen;
    bool has_hb_ord, has_ord_seen;
    bool ord_known; /* the stream's ord_next is the ordinal of the next message to deliver */
    /* A loss given up whose messages are not known yet: raised once its end is. */
    bool loss_pending;
    uint8_t pend_reason;
    uint32_t pend_first, pend_count;
    int32_t prev, next; /* the recovery's stream list */
    struct rdps_rel_recv_counters c;
};

struct rdps_rx_recovery {
    struct rdps_rel_recv_config cfg;
    void *user; /* the callbacks' */
    struct rdps_rx_rel *rel;
    int32_t head;
    uint32_t credits;
    uint32_t credit_quarter; /* a STATUS is due after this many frames past the last one (>= 1) */
    bool backlog;            /* received datagrams wait unprocessed */
    uint64_t rng;
    uint64_t due_ns; /* earliest pending action (a lower bound) */
    uint64_t now_ns; /* the latest time given */
    struct rdps_rel_recv_counters totals;
    const struct rdps_rx_parity *par; /* the block store (parity NAKs count its holes) */
};

/* Adds n to a reliable stream's counter and to the totals. */
#define RDPS_REL_COUNT(rec, rs, field, n) \
    do {                                  \
        (rs)->c.field += (n);             \
        (rec)->totals.field += (n);       \
    } while (0)

int rdps__rx_rec_init(struct rdps_rx_recovery *rec, const struct rdps_rel_recv_config *cfg,
                      uint32_t max_streams, void *user);
void rdps__rx_rec_fini(struct rdps_rx_recovery *rec);

/* Stream si starts at seq (joining: waits for a heartbeat up to join_wait_ns). */
void rdps__rx_rec_stream_start(struct rdps_rx_recovery *rec, int32_t si,
                               const struct rdps_rx_ident *id, uint32_t seq, bool joining,
                               uint64_t now_ns);
void rdps__rx_rec_stream_stop(struct rdps_rx_recovery *rec, int32_t si);

/* The next poll is due no later than due_ns. */
static inline void rdps__rx_rec_note_due(struct rdps_rx_recovery *rec, uint64_t due_ns)
{
    if (due_ns < rec->due_ns)
        rec->due_ns = due_ns;
}

/* A frame of the stream arrived from its publisher: a stream spaced for a silent publisher is
 * polled again now. One predictable branch on the hot path. */
static inline void rdps__rx_rec_heard(struct rdps_rx_recovery *rec, struct rdps_rx_rel *rs)
{
    if (__builtin_expect(rs->silent, 0)) {
        rs->silent = false;
        rdps__rx_rec_note_due(rec, rec->now_ns);
    }
}

/* The credits the window counts (at most RDPS_REL_CREDITS_MAX). */
static inline uint32_t rdps__rx_rec_credits(const struct rdps_rx_recovery *rec)
{
    return rec->credits < RDPS_REL_CREDITS_MAX ? rec->credits : RDPS_REL_CREDITS_MAX;
}

/* Free receive credits (datagrams): at most RDPS_REL_CREDITS_MAX count. */
static inline void rdps__rx_rec_set_credits(struct rdps_rx_recovery *rec, uint32_t credits)
{
    rec->credits = credits;
    uint32_t quarter = rdps__rx_rec_credits(rec) / 4;
    rec->credit_quarter = quarter ? quarter : 1;
}

/* What the message at the consumed point still needs to complete or stream on (0: unknown). */
static inline uint32_t rdps__rx_rec_head_need(const struct rdps_rx_rel *rs, uint32_t consumed)
{
    uint32_t into = consumed - rs->head_seq;
    return rs->has_head && into < rs->head_span ? rs->head_span - into : 0;
}

/* Why a missing range cannot be had any more, or RDPS__LOSS_NONE. */
static inline rdps_loss_reason rdps__rx_rec_verdict(const struct rdps_rx_rel *rs,
                                                    const struct rdps_gap_range *g)
{
    if (g->lost_reason != 0)
        return (rdps_loss_reason)g->lost_reason;
    if (rs->have_trail && rdps__seq_lt(g->start, rs->trail))
        return RDPS_LOSS_BELOW_RING;
    return RDPS__LOSS_NONE;
}

/* [start, start + count) of stream si went missing (again): tracked, due for a first NAK. */
void rdps__rx_rec_gap_add(struct rdps_rx_recovery *rec, int32_t si, struct rdps_rx_track *t,
                          uint32_t start, uint32_t count, uint64_t now_ns);
/* A missing sequence arrived (a repair, or a late original; rebuilt: a repair rebuilt from
 * parity, which gives no RTT sample): out of its range; RTT, latency, suppression and overtaken
 * repairs follow. */
void rdps__rx_rec_gap_filled(struct rdps_rx_recovery *rec, int32_t si, struct rdps_rx_track *t,
                             uint32_t seq, bool repair, bool rebuilt, uint64_t now_ns);
/* A parity symbol of block [start, start + k) of stream si arrived: its ranges wait an RTT. */
void rdps__rx_rec_block_heard(struct rdps_rx_recovery *rec, int32_t si, struct rdps_rx_track *t,
                              uint32_t start, uint32_t k, uint64_t now_ns);
/* Learns the span of the message at the consumed point from non-final fragment v; true when it
 * learnt something (the window may have grown: the caller decides whether a STATUS is due). */
bool rdps__rx_rec_learn_head(struct rdps_rx_rel *rs, uint32_t consumed,
                             const struct rdps_frame_view *v);
/* After progress: a STATUS is due once its thresholds were passed; more is tracked at the next
 * poll when a heartbeat told of more than the window let track. Inline, two compares when nothing
 * is due (every in-order delivery of a reliable stream comes here). */
void rdps__rx_rec_progress_due(struct rdps_rx_recovery *rec, int32_t si,
                               const struct rdps_rx_track *t);
/* Whether progress to (next, consumed) would make something due (the caller checks first). */
static inline bool rdps__rx_rec_progress_is_due(const struct rdps_rx_recovery *rec,
                                                const struct rdps_rx_rel *rs, uint32_t next,
                                                uint32_t consumed)
{
    return next - rs->status_next >= rec->credit_quarter ||
           consumed - rs->status_consumed >= rs->status_quarter ||
           (rs->has_hb_next && rdps__seq_gt(rs->hb_next, next));
}
static inline void rdps__rx_rec_progress(struct rdps_rx_recovery *rec, int32_t si,
                                         const struct rdps_rx_track *t)
{
    if (rdps__rx_rec_progress_is_due(rec, &rec->rel[si], t->next, t->consumed))
        rdps__rx_rec_progress_due(rec, si, t);
}
/* A STATUS is due at the next poll. */
static inline void rdps__rx_rec_status_now(struct rdps_rx_recovery *rec, struct rdps_rx_rel *rs)
{
    rs->status_now = true;
    rdps__rx_rec_note_due(rec, rec->now_ns);
}

/*
 * NAKs what is due of stream si, gives up what ran out of tries or time (*gave_up: the caller
 * releases), returns the stream's next deadline. `heard`: its last frame from the publisher;
 * `idle`: silent for idle_ns (nothing is sent).
 */
uint64_t rdps__rx_rec_poll_naks(struct rdps_rx_recovery *rec, int32_t si, struct rdps_rx_track *t,
                                uint64_t now_ns, uint64_t wall_ns, uint64_t heard, bool idle,
                                bool *gave_up);
/* Sends a STATUS if one is due (window: what the caller offers now); returns when the next is. */
uint64_t rdps__rx_rec_poll_status(struct rdps_rx_recovery *rec, int32_t si,
                                  const struct rdps_rx_track *t, uint32_t window, uint64_t heard,
                                  uint64_t now_ns, uint64_t wall_ns);

/* Latency (us) below which fraction q of the histogram's samples lie (bucket upper bound). */
uint64_t rdps__rel_latency_quantile_us(const uint64_t hist[RDPS_REL_LATENCY_BUCKETS], double q);
/* The same for repair_rtts, in thousandths of an RTT (0: no sample). */
uint64_t rdps__rel_rtts_quantile_milli(const uint64_t hist[RDPS_REL_RTT_BUCKETS], double q);
/*
 * RFC 5401 truncated-exponential backoff in [0, max_ns] for `receivers`
 * receivers; 0 for one receiver. *rng is the generator state.
 */
uint64_t rdps__rel_nak_backoff_ns(uint64_t *rng, uint64_t max_ns, uint32_t receivers);
/* A repair latency's histogram buckets: microseconds (power-of-two) and quarter round trips of
 * srtt_ns (RDPS_REL_RTT_BUCKETS' scale). */
void rdps__rel_latency_buckets(uint64_t ns, uint64_t srtt_ns, unsigned *us, unsigned *rtts);

#endif /* RDPS_PROTO_RX_RECOVERY_H */
