/* SPDX-License-Identifier: BSD-2-Clause */
/* md_book_rx.h - md-book's receive side without a ctx: a feed's channel packets and snapshot
 * messages applied to the order books, late join, loss and latency accounting. */
#ifndef RDPS_TOOLS_MD_BOOK_RX_H
#define RDPS_TOOLS_MD_BOOK_RX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdps/rdps.h>

#include "lat_hist.h"
#include "md_book.h"
#include "md_packet.h"
#include "md_recovery.h"
#include "md_snapshot.h"

/*
 * Model
 * -----
 * md-book subscribes to md-feed's channels (md.NAME.ch0..chN-1) and to its snapshot topic
 * (md.NAME.snap); the ctx's callbacks hand every message here with its rdps_msg_info, and this
 * module does the rest without touching the ctx: what it has to send (a snapshot request, a
 * reflector echo) goes out through the hooks. Tests drive it with packets and snapshots they
 * build themselves.
 *
 * Each channel keeps the MoldUDP64 sequence it expects next; a packet that overlaps what was
 * applied is counted (stale, or covered by a snapshot), a jump counts the messages missing. A
 * channel whose first packet is not sequence 1 joined late (md_recovery.h): its packets are
 * held, a snapshot is asked for (hooks.request) and asked again every MD_SNAP_RETRY_NS, and a
 * fitting one is imported before the held packets are applied. An end of session ends the
 * channel.
 *
 * Whom it believes. Anyone on the fabric can publish on the feed's topics, and one forged
 * snapshot, packet or end of session would corrupt or end a book. So the book keeps to the feed
 * it first heard: the first valid channel packet pins the feed's source (rdps_source: GID or
 * LID, and QP number; one md-feed publishes every topic from one QP) and its MoldUDP64 session,
 * and each channel's first packet pins that channel's rdps session. After that a packet from
 * another source, session or MoldUDP64 session is dropped (packets_foreign), and so is a
 * message of the snapshot topic from another source (snap_foreign; before the feed is known:
 * snap_early, and the directory is asked for again once it is). What the feed's own source
 * sends is bounded by md_recovery.h: sequences more than MD_REC_DEFAULT_AHEAD past what the
 * channel has seen are refused, and an end of session that names a sequence before what was
 * already applied is refused (ends_refused). None of this is authentication: a host that
 * forges the feed's exact source, or speaks first, is believed (docs/security.md).
 */

#define MD_BOOK_RX_MAX_CHANNELS 64

struct md_book_rx_config {
    uint32_t channels;      /* 1..MD_BOOK_RX_MAX_CHANNELS */
    uint64_t reflect_every; /* echo every Nth packet of channel 0 (0: never) */
    bool oneway;            /* record one-way latency from the intended send times */
    uint64_t warmup_ms;     /* ... leaving out the first warmup_ms of flow */
};

struct md_book_rx_hooks {
    void *user;
    /* Ask the feed for channel `what`'s snapshot, or MD_SNAPREQ_DIRECTORY for the directory. */
    void (*request)(void *user, uint32_t what);
    /* Echo this packet of channel 0 to the feed (reflector latency); NULL: never. Called right
     * after the packet's messages were applied; received_real_ns: when its callback began. */
    void (*echo)(void *user, const struct md_packet_view *v, uint64_t received_real_ns);
};

struct md_book_rx_channel {
    uint32_t index;
    struct md_rec rec; /* late join: held packets until a snapshot */
    uint64_t next_seq; /* the MoldUDP64 sequence expected next (0: nothing yet) */
    uint64_t snap_seq; /* the snapshot's last message (late join; 0: none) */
    uint64_t end_seq;  /* end of session seen while recovering: the sequence it named */
    uint64_t last_request_ns;
    uint64_t packets, missing, stale, covered;
    bool ended;
    bool pinned;         /* session_id is the feed's publisher of this channel */
    uint32_t session_id; /* ... its rdps session */
};

struct md_book_rx {
    struct md_book_rx_config cfg;
    struct md_book_rx_hooks hooks;
    struct md_snap_asm snap_asm;
    bool snap_asm_ok;
    unsigned recovering; /* channels waiting for a snapshot */
    bool replaying;      /* applying held packets: no latency samples (they waited for it) */
    uint64_t snap_parts_rejected, snap_parts_unneeded;
    /* The feed's symbol directory: names for a late joiner, channel count checked. */
    bool have_directory;
    uint64_t dir_requested_ns, dir_symbols, dir_rejected;
    struct md_book_rx_channel channels[MD_BOOK_RX_MAX_CHANNELS];
    struct md_book book;
    struct md_unpacker unpacker;
    struct lat_hist oneway;
    uint64_t first_intended_ns; /* the flow's start as seen here (warm-up reference) */
    uint64_t messages, bad_messages, apply_errors, packets_rejected;
    unsigned ended;
    /* The feed: the source and MoldUDP64 session of the first valid channel packet. */
    bool feed_pinned;
    rdps_source feed_source;
    char feed_session[MD_SESSION_LEN];
    uint64_t packets_foreign; /* another source, rdps session or MoldUDP64 session */
    uint64_t snap_foreign;    /* snapshot-topic messages from another source */
    uint64_t snap_early;      /* ... before the feed was known */
    uint64_t ends_refused;    /* an end of session before what was applied */
};

/* 0, -EINVAL (channels out of range), -ENOMEM. */
int md_book_rx_init(struct md_book_rx *rx, const struct md_book_rx_config *cfg,
                    const struct md_book_rx_hooks *hooks);
void md_book_rx_fini(struct md_book_rx *rx);

/* A message of channel `channel` (< cfg.channels). now_real_ns: CLOCK_REALTIME (latency),
 * now_ns: CLOCK_MONOTONIC (request times). */
void md_book_rx_packet(struct md_book_rx *rx, uint32_t channel, const void *data, size_t len,
                       const rdps_msg_info *info, uint64_t now_real_ns, uint64_t now_ns);
/* A message of the snapshot topic: a snapshot part or a directory slice (one tag byte first). */
void md_book_rx_snap_message(struct md_book_rx *rx, const void *msg, size_t len,
                             const rdps_msg_info *info, uint64_t now_ns);
/* Asks again for the directory and the snapshots that did not come (call it now and then). */
void md_book_rx_retry(struct md_book_rx *rx, uint64_t now_ns);
/* Every channel ended, none still waiting for its snapshot. */
bool md_book_rx_done(const struct md_book_rx *rx);

#endif /* RDPS_TOOLS_MD_BOOK_RX_H */
