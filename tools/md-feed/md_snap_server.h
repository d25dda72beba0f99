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
 * Time is passed in (now_ns, CLOCK_MONOTONIC); the only I/O is through the hooks.
 */

struct md_snap_server_config {
    uint32_t channels;            /* 1..64 */
    const char *feed;             /* topic prefix: the directory names md.FEED.chK */
    char session[MD_SESSION_LEN]; /* the channels' MoldUDP64 session (for the directory) */
    const struct md_book *book;   /* the feed's reference books */
    uint32_t max_locate;          /* symbols are 1..max_locate (<= 65535) */
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
    uint64_t snapshots, parts, bytes;
    uint64_t directories, directory_bytes;
    uint64_t backpressure; /* sends refused with RDPS_EAGAIN */
};

struct md_snap_server {
    struct md_snap_server_config cfg;
    struct md_snap_server_hooks hooks;
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
