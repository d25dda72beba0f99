/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_replay_merge.h - replay-merge's seam (issue 39 part B, docs/replay-merge.md): a topic's
 * history from a recording and its live stream, merged per publisher session into one delivery
 * with no gap and no duplicate. Sans-IO: no clock, no I/O, bounded memory. */
#ifndef RDPS_ARCHIVE_REPLAY_MERGE_H
#define RDPS_ARCHIVE_REPLAY_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Model
 * -----
 * Two inputs, each in order per publisher session: history (a recorder replays its recording:
 * messages, and loss markers where the recording has a hole) and live (the subscriber's own
 * reliable stream, joined at the live position). Sequences are the live session's datagram
 * sequences, which every record keeps (serial arithmetic); a message covers [seq, seq + count).
 *
 * Per session the merger is in HISTORY until history reaches what live holds, then LIVE:
 *  - history records are delivered as they come while the session is in HISTORY (a record
 *    entirely before history's next sequence is a duplicate, counted and dropped);
 *  - live messages are copied into a bounded FIFO (all sessions share `buffer_bytes`) while
 *    their session is in HISTORY; when it is full the oldest entry goes (counted): the session
 *    then needs history to cover the evicted range too - the seam moves later, it never opens;
 *  - a session switches to LIVE as soon as history's next sequence reaches its oldest buffered
 *    live message: the buffered messages from there on are delivered (those history already
 *    gave are dropped as duplicates), then live messages go straight through;
 *  - history_caught_up(session, next): the recorder says its recording holds nothing more of
 *    the session than up to `next` (recorder-side: it has replayed everything it received up to
 *    a moment after the subscriber received its oldest buffered live message). A session
 *    still short of its oldest buffered live message then switches with one LOSS for the range
 *    the recording does not have ([next, oldest), reason NOT_IN_RECORDING); a session the
 *    recording never had switches with no loss (it began after the history point, or the
 *    recorder never saw it: documented);
 *  - history_done(): the replay ended; every session in HISTORY is treated as caught up.
 *  - a hole: history skipping ahead of its own last record (the recorder dropped messages when
 *    its disk fell behind, an OVERRUN) or, at the seam, live's oldest message not following
 *    history's last, is delivered as one LOSS (NOT_IN_RECORDING) before what comes next: the
 *    datagrams wholly missing, and the messages by ordinal when both ends have one (counted:
 *    history_holes, or losses_not_in_recording at the seam). Nothing is skipped silently.
 * Positions are (seq, ordinal): on wire version 3 several messages share a datagram (batching)
 * and its seq, each with its own ordinal (consecutive per session). A record is covered by
 * history's last if its datagram is before it, or the same with an ordinal not after it (a loss,
 * a fragmented message or ordinal 0, as on wire version 2, covers its datagrams whole). A
 * session switches when live's oldest buffered message is covered or follows history's last:
 * the next ordinal in its datagram, or the next datagram whose first ordinal is history's last +
 * 1 (every message of history's last datagram given). An eviction takes a whole datagram of the
 * session. A switch where the ordinals still jump (the recorder's CAUGHT_UP released it) is
 * counted (ordinal_breaks).
 */

enum rdps_merge_kind {
    RDPS_MERGE_MESSAGE = 1,
    RDPS_MERGE_LOSS = 2, /* [seq, seq + count) are not delivered (reason) */
};

/* Why a LOSS was delivered. */
enum rdps_merge_loss_reason {
    RDPS_MERGE_LOSS_IN_RECORDING = 1,     /* the recording itself has the hole (its reason) */
    RDPS_MERGE_LOSS_NOT_IN_RECORDING = 2, /* the recording stops short of the live stream */
};

struct rdps_merge_msg {
    enum rdps_merge_kind kind;
    uint32_t session;
    uint32_t seq;
    uint32_t count;     /* datagrams covered (>= 1; a LOSS of messages inside one datagram: 0) */
    uint32_t ordinal;   /* message ordinal (0: unknown: the message's datagrams count whole);
                           LOSS: the first missing message's, when known */
    uint32_t msg_count; /* LOSS: messages missing, exact when known (0: unknown) */
    uint64_t publisher_ts_ns;
    uint32_t flags;
    int reason; /* LOSS: enum rdps_merge_loss_reason */
    const void *data;
    size_t len;
};

/* Receives every delivery in order per session; from_history says which input it came from. */
typedef void (*rdps_merge_deliver_fn)(void *user, const struct rdps_merge_msg *m,
                                      bool from_history);

struct rdps_merge_counters {
    uint64_t history_delivered, live_delivered, live_buffered;
    uint64_t history_duplicates, live_duplicates; /* dropped at the seam */
    uint64_t evicted;                             /* live messages the buffer could not keep */
    uint64_t losses_not_in_recording, ordinal_breaks;
    uint64_t history_holes; /* history skipped ahead of its own last record: a LOSS delivered */
    uint64_t sessions_switched, sessions_refused; /* refused: table full, delivered live only */
};

struct rdps_merge_session;
struct rdps_merge_entry;

struct rdps_merge {
    struct rdps_merge_session *sessions;
    uint32_t max_sessions, nsessions;
    uint8_t *buf; /* the live FIFO: entries back to back, wrapping */
    size_t cap, head, used;
    uint32_t entries;
    rdps_merge_deliver_fn deliver;
    void *user;
    bool history_over; /* history_done(): sessions not yet live switch at their first message */
    struct rdps_merge_counters counters;
};

/* 0, RDPS_EINVAL (no callback, buffer below 64 KiB, no session), RDPS_ENOMEM. */
int rdps__merge_init(struct rdps_merge *m, size_t buffer_bytes, uint32_t max_sessions,
                     rdps_merge_deliver_fn deliver, void *user);
void rdps__merge_fini(struct rdps_merge *m);
/* A replayed record (MESSAGE or LOSS), in order per session. */
void rdps__merge_history(struct rdps_merge *m, const struct rdps_merge_msg *h);
/* A live message, in order per session (a reliable stream's delivery). */
void rdps__merge_live(struct rdps_merge *m, const struct rdps_merge_msg *l);
/* The recording holds nothing of `session` from sequence `next` on (has_history: it had some of
 * it at all). */
void rdps__merge_history_caught_up(struct rdps_merge *m, uint32_t session, bool has_history,
                                   uint32_t next);
/* The replay ended: every session still in HISTORY is caught up where history left it. */
void rdps__merge_history_done(struct rdps_merge *m);
/* Sessions waiting at the seam (live buffered, history short of it): fills up to max with the
 * session and the sequence history must reach (its oldest buffered live one); returns how many
 * there are. */
uint32_t rdps__merge_waiting(const struct rdps_merge *m, uint32_t *sessions, uint32_t *seqs,
                             uint32_t max);
/* 1 when every session seen is LIVE and nothing is buffered. */
bool rdps__merge_all_live(const struct rdps_merge *m);
const struct rdps_merge_counters *rdps__merge_counters(const struct rdps_merge *m);

#endif /* RDPS_ARCHIVE_REPLAY_MERGE_H */
