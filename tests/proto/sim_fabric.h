/* SPDX-License-Identifier: BSD-2-Clause */
/* sim_fabric.h - a simulated fabric for the reliable engines: one rdps_rel_pub, N reliable
 * rdps_reasm receivers, lossy links, a discrete-event clock; checks every delivery. */
#ifndef RDPS_TESTS_SIM_FABRIC_H
#define RDPS_TESTS_SIM_FABRIC_H

#include <stddef.h>
#include <stdint.h>

#include "rdps_rel_pub.h"
#include "rdps_rel_recv.h"

/*
 * Model
 * -----
 * The real engines, wired together; only the network and the application
 * are simulated. Time is a fake clock that jumps from event to event: a
 * binary heap holds frame deliveries and engine deadlines
 * (rdps__rel_pub_tick, rdps__reasm_rel_poll), ordered by time.
 *
 * Publisher: an application appends messages as fast as flow control lets
 * it (RDPS_EAGAIN: it retries at the next event); a NIC posts the engine's
 * actions at link_gbps, one after the other, and reports each completion
 * (send_done) once the frame has left. A multicast frame is copied once and
 * fanned out to every receiver; a unicast one (repair, heartbeat) goes to
 * the receiver named by action.dest. With unicast_fanout (a topic without
 * multicast: rdps_pub_opts.transport unicast) every "multicast" action is N
 * copies, one per receiver, each taking the publisher's link in turn (one
 * work-request chain: the ring slot completes when its last copy left).
 *
 * Links: each receiver has a downlink (DATA, repairs, heartbeats) and an
 * uplink (NAK, STATUS to the publisher), each with a fixed delay drawn in
 * [5, 50] us, a jitter of up to 1 us, and its own loss state (struct
 * sim_loss: uniform, Gilbert-Elliott bursts, extra delay for reordering,
 * duplication). A link keeps its frames in order (jitter never overtakes)
 * except those the reorder model delays, and duplicates. Every draw comes from one seeded
 * generator, in event order: a run is a pure function of its config.
 *
 * Receivers: each one is a reassembler with rel.enabled, configured like the
 * library's (pubsub/receive.c; its arena holds two of the largest messages,
 * at least 17 MiB), with its own source and receiver_id; the
 * publisher expects each of them (as discovery does) and each is told the
 * exact receiver count once its stream exists. Every delivered message is
 * checked (id in order, length, fragment count, every byte), every loss
 * event must start where the previous delivery or loss ended: a receiver
 * accounts for each sequence exactly once, delivered or reported lost.
 *
 * Forger (forge_interval_ns > 0): a host on the fabric that no discovery
 * announced, with two QPNs (forge_hosts 2: and a second GID), sends every
 * forge_interval_ns a NAK of up to 1024 retained sequences from each, and
 * (forge_status) a STATUS {consumed = the ring's oldest, window 0}: the
 * audit's forger of 2026-11-28. The publisher's repairs to it take the link
 * like any frame and are dropped; its multicast ones reach every receiver.
 *
 * Late joiner (join_rx): a receiver the fabric does not reach and the
 * publisher does not know of until join_after messages were appended; then
 * it is announced (rdps__rel_pub_expect_receiver) and its downlink carries
 * frames. With join_oldest it joins at the publisher's oldest retained
 * sequence, and must account for every message from there.
 *
 * A run ends when every receiver has accounted for every sequence of every
 * message; one that does not end by time_limit_ns is a failure (a stall).
 */

/* One direction of one link. Probabilities are per frame. */
struct sim_loss {
    const char *name;
    double uniform;                   /* independent loss */
    double ge_p, ge_r;                /* Gilbert-Elliott: good->bad, bad->good; 0: off */
    double ge_loss_bad, ge_loss_good; /* loss in each state */
    double reorder;                   /* extra delay for this share of frames */
    uint64_t reorder_ns;              /* ... uniform in [0, reorder_ns] */
    double dup;                       /* a second copy, a little later */
};

/* The loss models of the matrix: none, uni1, uni5, uni20, ge, reorder, dup, all. */
extern const struct sim_loss sim_models[];
extern const unsigned sim_model_count;

/* Faults injected to prove the checks can fail (SIM_FAULT_NONE in real runs). */
enum sim_fault {
    SIM_FAULT_NONE = 0,
    SIM_FAULT_BLACKHOLE,   /* every copy of one DATA sequence is dropped: it cannot be repaired */
    SIM_FAULT_SKIP_CHECK,  /* one delivery of receiver 0 is not shown to the checker */
    SIM_FAULT_CHECK_TWICE, /* one delivery of receiver 0 is shown to the checker twice */
    SIM_FAULT_CORRUPT,     /* one byte of one DATA frame is changed on the wire to receiver 0 */
};

struct sim_config {
    uint32_t receivers;
    uint64_t messages;
    uint64_t seed;
    struct sim_loss down, up;
    enum rdps_rel_flow flow;
    size_t ring_bytes;
    uint32_t max_datagram;
    uint32_t large_max;      /* one message in 256 is up to this long (others: 1..3 payloads) */
    bool large_exact;        /* ... or exactly this long */
    uint32_t large_every;    /* ... or every this many messages, from the first (0: 1 in 256) */
    double common_drop;      /* share of first DATA posts dropped before the fan-out */
    uint32_t receivers_told; /* the count given to rdps__reasm_rel_set_receivers (0: exact) */
    uint32_t stall_rx;       /* a receiver that stops polling (UINT32_MAX: none) ... */
    uint64_t stall_after;    /* ... once this many messages were appended ... */
    uint64_t stall_ns;       /* ... for this long */
    uint32_t
        nak_max_tries; /* receivers' NAKs per range before RDPS_LOSS_NAK_RETRIES (0: default) */
    uint64_t nak_retry_min_ns, repair_linger_ns; /* what-ifs: 0 keeps the library's 4 ms, 2 ms */
    double link_gbps;
    uint64_t time_limit_ns; /* simulated */
    enum sim_fault fault;
    uint64_t forge_interval_ns; /* the forger (see Model); 0: none */
    uint32_t forge_hosts;       /* its GIDs, 1 or 2 */
    bool forge_status;          /* it sends STATUS too */
    bool unicast_fanout;        /* every "to the group" action is one copy per receiver */
    uint32_t fixed_len;         /* every message this long (0: the mix above) */
    /* Late join: receiver join_rx gets nothing and is unknown to the publisher until
     * join_after messages were appended; then discovery announces it (from_oldest: it joins at
     * the ring's oldest sequence). UINT32_MAX: none. */
    uint32_t join_rx;
    uint64_t join_after;
    bool join_oldest;
    /* The application offers app_rate messages per second (0: as fast as flow control lets it),
     * message i due app_rate^-1 * i after the first append. */
    uint64_t app_rate;
    /* Parity repairs: the publisher's block size (0: none); the receivers keep blocks for it. */
    uint32_t parity_k;
    /* ... and the parity symbols of each block it sends unasked (parity_proactive; 0: none). */
    uint32_t parity_proactive;
    /* The publisher batches (rdps_rel_pub_config.batching): messages that fit a datagram share
     * frames; receivers then tell messages by their ordinal (the id) rather than the frame's
     * timestamp, and check that each message's frame and each loss event's message count are
     * exact. */
    bool batching;
    uint32_t small_max; /* messages that are not long: 1..this many bytes (0: 1..a payload) */
};

/*
 * Where the time of a run goes (sim_profile.c): the publisher's link is busy (sending), or idle
 * while the application has a message it cannot append, and why. Window waits name the state of the
 * receiver that defines the flow-control limit: the publisher has not heard of a quarter window of
 * progress (STATUS not sent yet, or in flight), data is still on its way, or its oldest hole waits
 * for a first NAK, for a repair in the publisher's queue, for a repair in flight (within the link's
 * round trip of the last NAK), or for a retry (NAK or repair lost, or the NAK suppressed). Start:
 * before the first append; tail: after the last one, until every receiver accounted for everything.
 */
enum sim_wait {
    SIM_WAIT_SENDING = 0,
    SIM_WAIT_START,
    SIM_WAIT_CONNECTING,
    SIM_WAIT_RING,
    SIM_WAIT_STATUS_UNSENT,
    SIM_WAIT_STATUS_FLIGHT,
    SIM_WAIT_STATUS_QUARTER,
    SIM_WAIT_DATA_FLIGHT,
    SIM_WAIT_FIRST_NAK,
    SIM_WAIT_REPAIR_QUEUED,
    SIM_WAIT_REPAIR_FLIGHT,
    SIM_WAIT_RETRY,
    SIM_WAIT_TAIL,
    SIM_WAIT_OTHER,
    SIM_WAIT_COUNT
};

extern const char *const sim_wait_names[SIM_WAIT_COUNT];

struct rdps_reasm;

/* Classifies a window wait on receiver r, whose position the publisher knows as known_consumed
 * + window, for a message ending at need_end; rtt_ns bounds a NAK-to-repair round trip. */
enum sim_wait sim_wait_window(const struct rdps_rel_pub *p, const struct rdps_reasm *r,
                              const struct rdps_source *pub_src, uint32_t session_id,
                              uint32_t known_consumed, uint32_t window, uint32_t need_end,
                              uint64_t now_ns, uint64_t rtt_ns);

struct sim_result {
    /* Figures. */
    uint64_t messages, bytes, data_frames, frames_posted, heartbeats;
    uint64_t naks_sent, naks_received, status_sent;
    uint64_t repairs_unicast, repairs_multicast, recovered;
    uint64_t park_evicted, beyond_window, rx_duplicates; /* receivers' counters, summed */
    uint64_t frames_dropped, frames_duplicated;          /* by the links, both directions */
    uint64_t sim_ns, events;
    double cpu_s;
    /* Outcome per receiver, summed (and the minimum delivered). */
    uint64_t delivered, delivered_min, lost_msgs, lost_seqs, loss_events;
    uint64_t lost_by_reason[RDPS__LOSS_REASONS]; /* sequences, from the engines' counters */
    uint32_t late_joins;     /* receivers whose first sequence was not the session's first */
    uint64_t skipped_msgs;   /* messages before those receivers joined */
    uint32_t receivers_done; /* receivers that accounted for every sequence */
    uint64_t bad_order;      /* deliveries not the next message: out of order or duplicated */
    uint64_t bad_content;    /* length, fragment count or bytes differ */
    uint64_t bad_loss;       /* loss events overlapping what was delivered or reported */
    /* Loss common to all receivers. */
    uint64_t common_losses, common_naks; /* frames dropped before the fan-out; NAKs naming them */
    /* Publisher events. */
    uint64_t evictions, evictions_stalled, resumes, timeouts;
    uint32_t evicted_rx; /* the receiver of the first eviction (UINT32_MAX: none) */
    /* The stalled receiver: when (simulated ns from the start) and after how many appended
     * messages it stalled, was first evicted and came back; the first and the last append. */
    uint64_t first_append_ns, stall_ns, evict_ns, back_ns, all_appended_ns;
    uint64_t appended_at_stall, appended_at_evict, appended_at_back;
    uint64_t max_append_gap_ns;      /* longest time without an append, until it is back */
    uint64_t max_append_gap_back_ns; /* ... and after */
    /* Engine calls that asked to be called again at once (deadline <= now). */
    uint64_t zero_deadlines;
    /* Simulated time by what the publisher's application waited for (enum sim_wait). */
    uint64_t wait_ns[SIM_WAIT_COUNT];
    uint64_t pub_nak_seqs_suppressed, pub_repair_queue_full;
    uint64_t forged_bytes, forger_repair_bytes; /* the forger's frames; repairs sent to it */
    uint64_t wire_bytes, wire_frames;  /* what left the publisher's link (copies included) */
    uint64_t data_bytes, repair_bytes; /* ... of it first posts of DATA; retransmissions + parity */
    /* Late join (join_rx): after the join, appends refused by the window or the ring, and those
     * held while the joiner connects (announced, no STATUS yet: one round trip), how far behind
     * its schedule the application got (app_rate; before the join too); receiver 0's largest
     * delivery latency (append to delivery) before and after the join; when the joiner delivered
     * the message live at its join (ns after the join). */
    uint64_t refused_after_join, held_connecting_after_join, app_lag_before_ns, app_lag_after_ns;
    uint64_t latency_before_ns, latency_after_ns, join_ns, caught_up_ns;
    /* Parity: datagrams and bytes the publisher sent, datagrams the receivers rebuilt (summed). */
    uint64_t parity_sent, parity_bytes, parity_rebuilt;
    /* First failure, for the test's message. */
    char failure[200];
};

/* Lossless N=1 defaults: flow min, 16 MiB ring, 1024-byte datagrams, 10 Gb/s, 60 s limit. */
void sim_config_default(struct sim_config *cfg);

/* Runs one scenario. Returns 0, or -1 when the setup failed (res->failure says why). */
int sim_run(const struct sim_config *cfg, struct sim_result *res);

/* Message bytes per simulated second over the link rate. */
double sim_goodput(const struct sim_config *cfg, const struct sim_result *res);

/* One line of figures for docs/performance.md. */
void sim_print(const char *label, const struct sim_config *cfg, const struct sim_result *res);
/* One line: the share of the run's time per enum sim_wait. */
void sim_print_profile(const char *label, const struct sim_config *cfg,
                       const struct sim_result *res);

#endif /* RDPS_TESTS_SIM_FABRIC_H */
