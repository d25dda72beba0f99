/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rel_recv.h - the receiver's path for reliable streams: the consumed point, in-order
 * exactly-once release, messages longer than the window, late join and explicit loss (model below;
 * NAK and STATUS: rdps_rx_recovery.h). */
#ifndef RDPS_PROTO_REL_RECV_H
#define RDPS_PROTO_REL_RECV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rdps_frame.h"
#include "rdps_rx_recovery.h"
#include "rdps_source.h"

/*
 * Model
 * -----
 * A stream is reliable when the receiver is configured with rel.enabled and
 * the stream's first frame (DATA or HEARTBEAT) carries RELIABLE. The path
 * drives the layers below it and nothing calls it but the receiver
 * (rdps_reasm.c): sequence tracking (rdps_rx_track.h), recovery
 * (rdps_rx_recovery.h: NAK, STATUS, loss decisions) and assembly
 * (rdps_rx_assembly.h: partials, parking, delivery).
 *
 * Consumed point. Every sequence before `consumed` was released in order or
 * declared lost. Frames before it are duplicates; frames at consumed +
 * window (the window STATUS advertises, at most RDPS_SEQ_WINDOW - 1) or
 * beyond are dropped (beyond_window) and asked for again later, so the
 * window never slides over an unreleased sequence and nothing is tracked
 * that could not be parked. A message that completes at the consumed point
 * is delivered at once (single datagrams zero-copy) and the point moves
 * over it; one that completes above it is parked in the arena (a single
 * datagram is copied there) and released in sequence order when the point
 * reaches it: in order, exactly once per stream. A parked or partial
 * message evicted under memory pressure gives its sequences back to the
 * missing ranges (asked for again), it is never lost silently.
 *
 * Messages longer than the window. A message of RDPS_SEQ_WINDOW fragments
 * or more can never be held whole within the window, so it streams through
 * it: once the consumed point reaches its first fragment, its partial is
 * pinned (never evicted) and the point moves over each fragment as it
 * arrives in order, its bytes already in the message's own chunks; the
 * window then slides within the message, and the message is delivered when
 * its last fragment arrives. Its memory is bounded by the assembly layer's
 * quotas (the message must fit the arena and its host's byte quota, else
 * it is lost as TOO_LARGE), the tracking state by the window. Given up, the
 * whole message is reported lost, from its first sequence.
 *
 * Loss (rdps_loss_reason). A missing range recovery gives up (NAK_RETRIES,
 * DEADLINE, BELOW_RING: rdps__rx_rec_verdict); received fragments of a
 * message whose other fragments were given up go with it
 * (PARTIAL_MESSAGE); a message this receiver cannot hold (too large, too
 * many fragments) is given up whole (TOO_LARGE); a reliable stream removed
 * from the table (evicted, idle) loses what it had not delivered
 * (SESSION_DROPPED). Each lost run raises one loss event {source, session,
 * first_seq, count, reason} when the consumed point reaches it, then
 * delivery carries on: events never overlap each other or a delivered
 * message.
 *
 * Messages. Every datagram carries the ordinal of its first message (rdps_frame.h), so a loss
 * event also says which messages went: [the ordinal of the next message to deliver, the ordinal
 * where the loss ends). That end is known from the datagram after the run (parked, or its
 * fragment's partial), the publisher's trail (BELOW_RING) or its next message (a heartbeat at
 * the run's end); a PARTIAL_MESSAGE or TOO_LARGE loss of one known message is that message. When
 * the end is not known yet (the datagram after the run is missing too), the event waits for it
 * (at most until the next message is delivered, a heartbeat tells it, or the stream stops, which
 * counts what was seen): events stay in order with the messages, and losses with no known
 * boundary between them are reported as one, under the first one's reason.
 *
 * Heartbeats: seq (the publisher's next sequence) reveals tail loss up to
 * consumed + window; R gives the trail seq - R: a gap below it is lost at
 * once (BELOW_RING). A heartbeat that finds everything before seq consumed,
 * or seq within what this receiver's window now reaches, is answered with a
 * STATUS (the last one may have been lost while the publisher waits).
 *
 * Late join: a new reliable stream starts at the live position (its first
 * DATA frame that is not a repair, or heartbeat); with from_oldest at the
 * first heartbeat's trail, however far back the publisher's ring reaches: a
 * stream first seen through DATA parks everything until that heartbeat (or
 * join_wait_ns, then starts live). A trail within a window of what arrived
 * keeps it; a trail further back restarts the window there (what arrived is
 * dropped, to be asked for when the window comes to it). The joiner then
 * NAKs what its window allows, one window after the other as the repairs
 * come in (each STATUS and heartbeat tells it how far the publisher is), so
 * it is fed at the rate it drains, within the publisher's repair budgets; a
 * publisher keeps it out of flow control until it is within its window of
 * the live position (rdps_rel_pub.h). What the ring drops before the joiner
 * gets there is lost (BELOW_RING).
 *
 * Parity repairs (rdps_rx_parity.h, with rel.parity_blocks): a heartbeat flagged PARITY tells
 * the publisher's block size; from then on the stream's admitted datagrams are kept per block
 * (its header prediction off: every frame takes the full path), NAKs ask for a block's
 * missing count (rdps_rx_recovery.h), and a block holding k datagrams and parity symbols is
 * decoded: each rebuilt datagram is decoded like a received one and taken as a repair, so
 * tracking, in-order release, loss events and assembly are those of retransmissions.
 *
 * Timers: rdps__reasm_rel_poll() sends what is due and returns the next
 * deadline; call it after each batch of received frames and at the deadline.
 */

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
 * would ask for may be among them. First NAKs and STATUS are not held.
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

/* ---- the receiver's reliable path (called by rdps_reasm.c only) ------------------------------ */

/* Stream si (created reliable, first frame at seq) starts; it stops before it is removed. */
/* Stream si starts with frame h (DATA or a heartbeat). */
void rdps__rel_stream_start(struct rdps_reasm *r, int32_t si, const struct rdps_frame_header *h,
                            uint64_t now_ns);
void rdps__rel_stream_stop(struct rdps_reasm *r, int32_t si);
/* A DATA frame / a heartbeat of reliable stream si; returns the messages delivered. */
int rdps__rel_on_data_frame(struct rdps_reasm *r, int32_t si, const struct rdps_frame_view *v,
                            uint64_t now_ns);
/* rdps_rel_parity.c: the decode a frame made due (r->par_pending set); the messages it
 * delivered. */
int rdps__rel_parity_pending(struct rdps_reasm *r, int32_t si, uint64_t now_ns);
int rdps__rel_on_heartbeat(struct rdps_reasm *r, int32_t si, const struct rdps_frame_view *v,
                           uint64_t now_ns);
/* rdps_rel_parity.c: the block store set up from cfg.rel (0 or an rdps error); a parity
 * datagram from `source` (its stream looked up; returns the messages its decode delivered). */
int rdps__rel_rx_parity_init(struct rdps_reasm *r);
int rdps__rel_on_parity(struct rdps_reasm *r, const struct rdps_source *source,
                        const struct rdps_frame_view *v, uint64_t now_ns);
/* The assembly layer's eviction callback (user: the struct rdps_reasm): the sequences of a
 * reliable stream's partial about to be evicted are asked for again. */
void rdps__rel_partial_evicted(void *user, int32_t si, int32_t pi);

#endif /* RDPS_PROTO_REL_RECV_H */
