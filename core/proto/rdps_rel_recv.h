/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rel_recv.h - reliable receive side: gap ranges, NAK scheduling, STATUS, in-order
 * exactly-once release and explicit loss, as an extension of the reassembler (rdps_reasm.h). */
#ifndef RDPS_PROTO_REL_RECV_H
#define RDPS_PROTO_REL_RECV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rdps_source.h"

/*
 * Model
 * -----
 * A stream is reliable when the reassembler is configured with rel.enabled
 * and the stream's first frame (DATA or HEARTBEAT) carries RELIABLE. It keeps
 * the reassembler's sequence window and arena and adds:
 *
 * Consumed point. Every sequence before `consumed` was delivered or declared
 * lost. Frames before it are duplicates; frames at consumed + window (the
 * window STATUS advertises, at most RDPS_REASM_WINDOW - 1) or beyond are dropped
 * (beyond_window) and asked for again later, so the window never slides over
 * an undelivered sequence and nothing is tracked that could not be parked. A message that
 * completes at the consumed point is delivered at once (single datagrams
 * zero-copy) and the point moves over it; one that completes above it is
 * parked in the arena (a single datagram is copied there) and released in
 * sequence order when the point reaches it: in order, exactly once per
 * stream. A parked or partial message evicted under memory pressure gives
 * its sequences back to the gap list (asked for again), it is never lost
 * silently; reliable partials never time out.
 *
 * Gap ranges (rdps_ranges.h). The missing sequences of [consumed, next_seq)
 * as at most max_gap_ranges ranges. A range is NAKed when due: first after
 * nak_holdoff_ns plus a random truncated-exponential backoff (RFC 5401:
 * max nak_backoff_rtts x RTT, shaped by the EXACT number of live receivers
 * of that publisher, an input; one receiver NAKs at once), then retried
 * after an RTT eight times, then RTT x 2^n (the doubling capped at
 * nak_retry_max_ns; a lone receiver waits at least its RTO, smoothed RTT +
 * 4 mean deviations of the NAK -> repair samples, RFC 6298) plus a new
 * backoff. Every range due at one poll goes in one NAK (up to 64 ranges),
 * by unicast to the stream's source (the send callback gets the encoded
 * frame).
 * Suppression: a repair (DATA with RETRANSMIT) that fills a sequence of a
 * range cancels that part, and pushes the rest of the range back by an RTT
 * (its repair is likely in flight); one never NAKed counts naks_suppressed.
 *
 * Overtaken repairs (a lone receiver on a path not seen reordering): the
 * publisher answers NAKs in order and its repairs leave one queue pair in
 * order, so when the repair of a sequence NAKed once, at time T, arrives, a range
 * NAKed before T (or at T, below that sequence) that is still missing lost
 * its NAK or its repair. It is NAKed again at once, in a NAK flagged
 * RETRANSMIT that the publisher answers inside its linger, instead of after
 * the retry wait and the linger (two RTTs and more: with the queueing of a
 * busy path those are tens of milliseconds, longer than the publisher's
 * window lasts). A range is overtaken at most once per NAK it had.
 *
 * RTT: srtt starts at default_rtt_ns; a repair of a range NAKed exactly once
 * gives a sample (NAK -> repair; Karn's rule), srtt += (sample - srtt) / 8. A
 * lone receiver's first sample replaces the default, and may come from a range
 * NAKed more than once (detection -> repair: an upper bound), or a path slower
 * than the default would never give one.
 *
 * Heartbeats: seq (the publisher's next sequence) reveals tail loss up to
 * consumed + window; R gives the trail seq - R: a gap below it is declared
 * lost at once (RDPS_LOSS_BELOW_RING), never NAKed. A heartbeat (the publisher
 * is idle) that finds everything before seq consumed, or seq below what this
 * receiver's window now reaches, is answered with a STATUS (the last one may
 * have been lost while the publisher waits on its window).
 *
 * Loss (rdps_loss_reason). A range is given up after nak_max_tries NAKs
 * (NAK_RETRIES) or loss_deadline_ns after detection (DEADLINE); received
 * fragments of a message whose other fragments were given up go with it
 * (PARTIAL_MESSAGE); a message this receiver cannot hold (too large, too many
 * fragments) is given up whole (TOO_LARGE); a reliable stream removed from
 * the table (evicted, idle) loses what it had not delivered (SESSION_DROPPED).
 * Each lost run raises one loss event {source, session, first_seq, count,
 * reason} when the consumed point reaches it, then delivery carries on:
 * events never overlap each other or a delivered message.
 *
 * STATUS (unicast to the source): consumed_seq, window = min(the sequences
 * held past the consumed point (up to the newest received) plus the credits
 * (an input: free receive credits, at most RDPS_REL_CREDITS_MAX), so a hole
 * does not hold the publisher back while parking room lasts;
 * RDPS_REASM_WINDOW - 1; the sequences received past the consumed point plus
 * the free slots of the stream's share of its host's partial and
 * arena-chunk quotas: each sequence of the window not received yet, a hole or
 * not sent, may need one more slot when it comes; a message of many
 * fragments parks in one, so the window reaches past an old hole as far as
 * the parking room allows) and receiver_id; sent when the stream is new,
 * after a quarter window of progress, after a quarter of the credits of
 * frames parked behind a hole (the window's edge moved), or every
 * status_interval_ns; it echoes the latest heartbeat's timestamp with the
 * hold delay.
 *
 * A silent publisher. Every frame of the stream (DATA or HEARTBEAT; a live
 * publisher heartbeats at least every 100 ms) is hearing from its publisher.
 * While nothing is heard, STATUS backs off (each one sent with nothing heard
 * since the one before doubles the interval, up to 16 x status_interval_ns);
 * once nothing was heard for two status intervals, a NAK retry whose previous
 * NAK had nothing back waits at least as long as the silence so far (so
 * retries to a silent publisher double), and after idle_ns
 * of silence the stream is idle: it sends nothing at all (its ranges still
 * meet their loss deadline, so what was parked behind them is released with
 * a loss event). The first frame heard ends it: due NAKs and a STATUS go at
 * the next poll. So a stream forged from one datagram costs a bounded number
 * of control frames (8 STATUS and, per hole, a few tens of NAKs, all within
 * idle_ns), not a STATUS every status_interval_ns for ever.
 *
 * Late join: a new reliable stream starts at the live position (its first
 * DATA frame that is not a repair, or heartbeat); with from_oldest at the first heartbeat's trail
 * (at most a window back): a stream first seen through DATA parks
 * everything until that heartbeat, or join_wait_ns, then starts live.
 *
 * Timers: rdps__reasm_rel_poll() sends what is due and returns the next
 * deadline; call it after each batch of received frames and at the deadline.
 * No allocation after init (the gap ranges and stream state are allocated
 * with the reassembler's tables); outgoing frames are built on the stack.
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
};

/* Repair latency histogram: bucket i counts latencies in [2^(i-1), 2^i) microseconds (0: < 1). */
#define RDPS_REL_LATENCY_BUCKETS 24
/* The same latencies in round trips of the stream's smoothed NAK-to-repair RTT when the repair
 * came: quarter-RTT buckets below 4 RTTs (bucket i: [i/4, (i+1)/4)), then one per doubling
 * ([4, 8), [8, 16), ...; the last holds 2048 RTTs and more). A repair that came at the first
 * NAK's round trip falls near 1 RTT, retries and NAK backoff above. */
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
    uint64_t repair_latency[RDPS_REL_LATENCY_BUCKETS]; /* detection -> repair */
    uint64_t repair_rtts[RDPS_REL_RTT_BUCKETS];        /* the same, in RTTs */
};

/* A reliable stream's state for stats and tests. */
struct rdps_rel_stream_info {
    uint32_t consumed_seq;
    uint32_t next_seq;   /* newest sequence seen + 1 */
    uint32_t trail_seq;  /* publisher's oldest retained sequence (valid if have_trail) */
    uint32_t gap_ranges; /* ranges in the gap list */
    uint32_t receivers;
    uint64_t srtt_ns;
    bool have_trail, joining;
    struct rdps_rel_recv_counters counters;
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
    uint64_t loss_deadline_ns;   /* RDPS_LOSS_DEADLINE this long after detection; 0 = never */
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
};

/*
 * Defaults (rdps__reasm_config_default): disabled, live join, 1 receiver,
 * RTT 1 ms, backoff 4 RTTs, no hold-off, retries every RTT x 2^n up to 25 ms,
 * 200 tries, so the 5 s deadline decides when a range the publisher still holds is
 * given up (a NAK round fails with 1 - (1 - loss)^2: at 20 % uniform loss 10 tries gave
 * up 3.7e-5 of the holes; a Gilbert-Elliott burst on the quiet links of a window-blocked
 * publisher ate 20 tries in 0.45 s in the simulated fabric), STATUS every 100 ms, join
 * wait 100 ms, idle after 5 s of silence.
 */

struct rdps_reasm;

/*
 * Sends due NAKs and STATUS frames (timestamps from wall_ns, CLOCK_REALTIME),
 * ends late-join waits and applies loss deadlines; giving up a range may
 * release parked messages, so deliveries and loss events can happen during
 * the call. Returns the next deadline (UINT64_MAX: none). Cheap when
 * nothing is due.
 */
uint64_t rdps__reasm_rel_poll(struct rdps_reasm *r, uint64_t now_ns, uint64_t wall_ns);

/*
 * Whether datagrams already received wait unprocessed (the caller stopped at its budget with
 * more queued). A retry NAK is then held back, for at most its own wait again: the repair it
 * would ask for may be among them (a receiver that runs behind its queue otherwise asked
 * again for repairs it had, and they came twice). First NAKs and STATUS are not held.
 */
void rdps__reasm_rel_set_backlog(struct rdps_reasm *r, bool backlog);

/* Free receive credits (datagrams): what the window lets be in flight past the newest sequence
 * received (at most RDPS_REL_CREDITS_MAX, 1023; until set, 1023). */
void rdps__reasm_rel_set_credits(struct rdps_reasm *r, uint32_t credits);

/*
 * The exact number of live receivers of publisher (source, session_id), from
 * discovery; scales the NAK backoff. RDPS_ENOENT if no such reliable stream.
 */
int rdps__reasm_rel_set_receivers(struct rdps_reasm *r, const struct rdps_source *source,
                                  uint32_t session_id, uint32_t receivers);

/* State and counters of one reliable stream; RDPS_ENOENT if there is none. */
int rdps__reasm_rel_stream_info(const struct rdps_reasm *r, const struct rdps_source *source,
                                uint32_t session_id, struct rdps_rel_stream_info *out);
/* Calls fn for every reliable stream of topic_id (most recently started first); returns how many.
 */
typedef void (*rdps_rel_stream_fn)(void *user, const struct rdps_source *source,
                                   uint32_t session_id, const struct rdps_rel_stream_info *info);
unsigned rdps__reasm_rel_streams(const struct rdps_reasm *r, uint64_t topic_id,
                                 rdps_rel_stream_fn fn, void *user);

/* Totals over every reliable stream, including removed ones. */
const struct rdps_rel_recv_counters *rdps__reasm_rel_counters(const struct rdps_reasm *r);

/* Latency (us) below which fraction q of the histogram's samples lie (bucket upper bound). */
uint64_t rdps__rel_latency_quantile_us(const uint64_t hist[RDPS_REL_LATENCY_BUCKETS], double q);
/* The same for repair_rtts, in thousandths of an RTT (0: no sample). */
uint64_t rdps__rel_rtts_quantile_milli(const uint64_t hist[RDPS_REL_RTT_BUCKETS], double q);

/*
 * RFC 5401 truncated-exponential backoff in [0, max_ns] for `receivers`
 * receivers; 0 for one receiver. *rng is the generator state.
 */
uint64_t rdps__rel_nak_backoff_ns(uint64_t *rng, uint64_t max_ns, uint32_t receivers);

#endif /* RDPS_PROTO_REL_RECV_H */
