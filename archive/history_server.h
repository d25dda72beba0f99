/* SPDX-License-Identifier: BSD-2-Clause */
/* history_server.h - the recorder's side of replay-merge: it answers requests for a recorded
 * topic's history with a replay stream read from its own recording (docs/replay-merge.md). */
#ifndef RDPS_ARCHIVE_HISTORY_SERVER_H
#define RDPS_ARCHIVE_HISTORY_SERVER_H

#include <stdbool.h>
#include <stdint.h>

#include <rdps/rdps_archive.h>

#include "rdps_history_wire.h"

/* Replays served at once (more are refused with RDPS_EBUSY). */
#define RDPS_HIST_MAX_JOBS 16
/* Sessions a replay tracks for its CAUGHT_UP state, and the recorder's receive table. */
#define RDPS_HIST_MAX_SESSIONS 256
/* A replay whose requester never subscribes to its reply topic is dropped after this long. */
#define RDPS_HIST_ORPHAN_NS 10000000000ull
/* A SYNC is answered at the latest this long after it came, whatever was recorded. */
#define RDPS_HIST_SYNC_WAIT_NS 2000000000ull

struct hist_job;
struct hist_topic;

/* A session of a recorded topic as the recorder took it. */
struct hist_received {
    uint64_t topic_id;
    uint32_t session, end; /* the sequence after the newest datagram the recorder received */
    uint64_t first_ts;     /* recorder time of its first record (0: none yet) */
    bool ended;            /* its latest marker is a SESSION_END (a START after it reopens it) */
};

/*
 * One per recorder, on the ctx's thread. The recorder hands it each recorded topic (it then
 * subscribes to the topic's request topic: discovery announcing that subscriber is how
 * subscribers find the recorder), each message and session marker it takes (the receive table:
 * what it has seen, so a SYNC is answered only once the recording can have it, and where each
 * open session began, so a request from the sessions' start seeks there at once instead of
 * reading the recording), and its figures at every poll.
 */
struct hist_server {
    rdps_ctx_t *ctx;
    char *dir;
    uint64_t recording_id;
    struct hist_job *jobs[RDPS_HIST_MAX_JOBS];
    struct hist_received received[RDPS_HIST_MAX_SESSIONS];
    unsigned nreceived, last_hit; /* last_hit: consecutive messages are mostly one session's */
    bool forgot; /* an entry made room for another: from-session-start requests go from 0 */
    struct hist_topic **topics; /* one per request subscriber: its callback's argument */
    size_t ntopics, topics_cap;
    uint64_t served, refused;
    bool flush_wanted; /* a SYNC waits for the writer: the recorder asks it to seal its chunk */
};

int hist_server_init(struct hist_server *hs, rdps_ctx_t *ctx, const char *dir, uint64_t id);
void hist_server_fini(struct hist_server *hs);
/* Subscribes to topic's request topic: 0 or a negative code. The subscriber is *out. */
int hist_server_add_topic(struct hist_server *hs, uint64_t topic_id, rdps_sub_t **out);
/* The recorder took a message of (topic, session) covering datagrams up to end (exclusive), at
 * recorder time ts (its record's timestamp, or earlier). */
void hist_server_on_message(struct hist_server *hs, uint64_t topic_id, uint32_t session,
                            uint32_t end, uint64_t ts);
/* The recorder took a SESSION_START (started) or SESSION_END marker of (topic, session). */
void hist_server_on_session(struct hist_server *hs, uint64_t topic_id, uint32_t session,
                            bool started, uint64_t ts);
/* Progress: replays as far as flow control lets, SYNCs answered when due. taken/written: the
 * recorder's records taken and written so far. */
void hist_server_poll(struct hist_server *hs, uint64_t taken, uint64_t written, uint64_t now_ns);

#endif /* RDPS_ARCHIVE_HISTORY_SERVER_H */
