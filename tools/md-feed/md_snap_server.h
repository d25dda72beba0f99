/* SPDX-License-Identifier: BSD-2-Clause */
/* md_snap_server.h - md-feed's late-join service: snapshot requests in, book snapshots and the
 * symbol directory out on the snapshot topic, without stalling the flow. */
#ifndef RDPS_TOOLS_MD_SNAP_SERVER_H
#define RDPS_TOOLS_MD_SNAP_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdps/rdps.h>

#include "md_book.h"
#include "md_directory.h"
#include "md_packet.h"
#include "md_recovery.h"
#include "md_snapshot.h"

/*
 * Model
 * -----
 * Books that join late ask for a channel's snapshot or the symbol directory (md_topics.h:
 * struct md_snapreq on md.NAME.snapreq); the feed answers on md.NAME.snap, reliably. Requests
 * only set bits: a channel asked for (by any number of books) is snapshotted once, at most once
 * per MD_SNAP_MIN_INTERVAL_NS, the directory at most once per MD_DIR_MIN_INTERVAL_NS, one
 * snapshot or directory at a time. md_snap_server_serve sends at most one part (or directory
 * slice) per call and never waits on back-pressure (the part is offered again next call), so
 * the feed's loop calls it between flushes and the flow does not stall.
 *
 * A channel's snapshot is its books right after the last message sent on it: the hooks flush
 * the channel first and say which sequence that was. The snapshot is copied when taken, so its
 * parts go out over the next calls while the books move on.
 *
 * Whom it answers. Anyone on the fabric can send requests, and each small one would cost the
 * feed a whole snapshot multicast to every book (~1300x the request's bytes). So:
 *   - only books discovery announced are answered: the request's source (rdps_msg_info.source)
 *     must be that of a live subscriber of the snapshot topic and, for a channel's snapshot, of
 *     that channel (md-feed's publishers pass their SUBSCRIBER_SEEN/_GONE events here:
 *     md_snap_server_pub_opts). A request can overtake its book's first announcements, so one
 *     from a source not (yet) announced waits up to MD_SNAP_SERVER_WAIT_NS for them in a small
 *     table (MD_SNAP_SERVER_WAITING sources, the oldest replaced) and is served if they come;
 *     otherwise it is dropped (requests_unknown counts every such request on arrival);
 *   - each requester gets every channel and the directory twice at once, then once per
 *     MD_SNAP_RETRY_NS, the rate an honest book retries at (requests_limited past that);
 *   - everything sent on the snapshot topic, snapshots and directory slices of every requester
 *     together, is held to budget_bytes_per_s with a burst of one second's worth: a part waits
 *     (budget_waits) until the budget has room for it.
 * A host that forges a book's announcements and source is answered within these bounds: rdps
 * authenticates no sender (docs/security.md).
 *
 * Time is passed in (now_ns, CLOCK_MONOTONIC); the only I/O is through the hooks.
 */

#define MD_SNAP_SERVER_SNAP_TOPIC     64u /* md_snap_server_subscriber's index of md.NAME.snap */
#define MD_SNAP_SERVER_MAX_REQUESTERS 256 /* sources of announced subscribers tracked */
#define MD_SNAP_SERVER_WAITING        16  /* sources whose requests wait for their announcement */
#define MD_SNAP_SERVER_WAIT_NS        2000000000ull
#define MD_SNAP_SERVER_DEFAULT_BUDGET (1u << 20) /* bytes per second on the snapshot topic */

struct md_snap_server_config {
    uint32_t channels;            /* 1..64 */
    const char *feed;             /* topic prefix: the directory names md.FEED.chK */
    char session[MD_SESSION_LEN]; /* the channels' MoldUDP64 session (for the directory) */
    const struct md_book *book;   /* the feed's reference books */
    uint32_t max_locate;          /* symbols are 1..max_locate (<= 65535) */
    uint64_t budget_bytes_per_s;  /* snapshot-topic bytes per second (0: the default) */
};

struct md_snap_server_hooks {
    void *user;
    /* The channel of a symbol (the snapshot's scope). */
    uint32_t (*channel_of)(void *user, uint16_t locate);
    /* Sends channel ch's pending messages and sets *seq to the last one sent: 0, or < 0 when
     * the feed cannot go on. */
    int (*flush)(void *user, uint32_t ch, uint64_t *seq);
    /* Sends one message on the snapshot topic: 0, RDPS_EAGAIN (offered again next call), or
     * another negative code (fatal). */
    int (*send)(void *user, const void *msg, size_t len);
};

struct md_snap_server_counters {
    uint64_t requests, requests_bad; /* taken; malformed or for no such channel */
    uint64_t requests_unknown;       /* from a source not announced as a subscriber of it */
    uint64_t requests_late;          /* ... of which taken when its announcement came */
    uint64_t requests_limited;       /* past the requester's rate */
    uint64_t requesters_refused;     /* announced subscribers not tracked: the table was full */
    uint64_t budget_waits;           /* a part or slice waited for the byte budget */
    uint64_t snapshots, parts, bytes;
    uint64_t directories, directory_bytes;
    uint64_t backpressure; /* sends refused with RDPS_EAGAIN */
};

/* A source discovery announced subscribers from (a book's ctx). */
struct md_snap_requester {
    rdps_source source;
    uint16_t subs[MD_SNAP_SERVER_SNAP_TOPIC + 1]; /* its live subscribers of each topic */
    uint32_t total;                               /* their sum; 0: a free entry */
    uint64_t tat_ns; /* rate limit (GCRA): when its bucket is full again */
};

/* Requests from a source not (yet) announced. */
struct md_snap_waiting {
    rdps_source source;
    uint64_t channels; /* asked for, one bit each */
    bool directory;
    uint64_t expires_ns; /* 0: a free entry */
};

struct md_snap_server;
/* event_user of a publisher's on_event: which topic it publishes. */
struct md_snap_server_topic_ref {
    struct md_snap_server *server;
    uint32_t topic;
};

struct md_snap_server {
    struct md_snap_server_config cfg;
    struct md_snap_server_hooks hooks;
    struct md_snap_requester *requesters; /* MD_SNAP_SERVER_MAX_REQUESTERS */
    struct md_snap_waiting waiting[MD_SNAP_SERVER_WAITING];
    struct md_snap_server_topic_ref topics[MD_SNAP_SERVER_SNAP_TOPIC + 1];
    uint64_t budget_tat_ns; /* byte budget (GCRA): when it is full again */
    uint64_t budget_burst_ns;
    uint8_t *dir_msg; /* the directory slice being offered (tag + encoding), NULL: none */
    size_t dir_msg_len;
    uint32_t dir_msg_symbols;
    uint64_t snap_pending; /* channels asked for, one bit each */
    bool dir_pending;      /* the symbol directory asked for */
    uint64_t dir_last_ns;  /* when the last one went out (requests are rate-limited) */
    bool dir_active;       /* ... being sent, slice by slice */
    struct md_dir_channel *dir_channels;
    struct md_dir_symbol *dir_symbols;
    uint32_t dir_n, dir_next;
    uint64_t snap_last_ns[64];
    uint16_t *locates; /* every channel's symbols, channel after channel */
    uint32_t locate_first[64 + 1];
    struct md_snap_builder builder; /* the snapshot being sent */
    struct md_snap_plan plan;
    bool snap_active;
    uint32_t next_part;
    uint8_t *part; /* tag + part next_part, encoded (part_len 0: not yet) */
    size_t part_len;
    struct md_snap_server_counters counters;
};

/* 0, -EINVAL (channels, max_locate), -ENOMEM. Reads every symbol's channel through the hook. */
int md_snap_server_init(struct md_snap_server *s, const struct md_snap_server_config *cfg,
                        const struct md_snap_server_hooks *hooks);
void md_snap_server_fini(struct md_snap_server *s);

/*
 * Discovery: ev (RDPS_EVENT_SUBSCRIBER_SEEN or _GONE; other events are ignored) about a subscriber
 * of channel `topic`, or of the snapshot topic (MD_SNAP_SERVER_SNAP_TOPIC).
 */
void md_snap_server_subscriber(struct md_snap_server *s, uint32_t topic, const rdps_event *ev,
                               uint64_t now_ns);
/* Sets po->on_event and po->event_user so that the publisher of channel `topic` (or of the
 * snapshot topic) feeds md_snap_server_subscriber (reads CLOCK_MONOTONIC). */
void md_snap_server_pub_opts(struct md_snap_server *s, uint32_t topic, rdps_pub_opts *po);

/* A message of the request topic, from info->source. */
void md_snap_server_request(struct md_snap_server *s, const void *data, size_t len,
                            const rdps_msg_info *info, uint64_t now_ns);
/* One step of serving: 0, or -1 when a hook failed for good (the error is printed). */
int md_snap_server_serve(struct md_snap_server *s, uint64_t now_ns);
/* Something asked for is not fully sent yet. */
bool md_snap_server_busy(const struct md_snap_server *s);

/* rdps_msg_cb for the request topic's subscriber, user = the server (reads CLOCK_MONOTONIC). */
void md_snap_server_on_request(void *user, const void *data, size_t len, const rdps_msg_info *info);

#endif /* RDPS_TOOLS_MD_SNAP_SERVER_H */
