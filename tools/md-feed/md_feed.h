/* SPDX-License-Identifier: BSD-2-Clause */
/* md_feed.h - md-feed's state shared by its loop (md_feed.c), its command line (md_feed_args.c)
 * and its report (md_feed_report.c). */
#ifndef RDPS_TOOLS_MD_FEED_H
#define RDPS_TOOLS_MD_FEED_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rdps/rdps.h>

#include "ctx_options.h"
#include "lat_hist.h"
#include "md_book.h"
#include "md_gen.h"
#include "md_packet.h"
#include "md_snap_server.h"

#define MD_FEED_PROG "md-feed"

#define MAX_CHANNELS 64
#define MAX_BOOKS    16
#define DAY_NS       86400000000000ull

enum profile { PROFILE_STEADY, PROFILE_OPEN, PROFILE_REPLAY };

struct options {
    struct tool_ctx_options ctx;
    const char *feed, *hgrm_prefix, *timeseries, *replay, *write_itch, *symbol_digests;
    const char *breakdown_prefix;
    uint64_t duration_s, rate, symbols, channels, seed, books, max_delay_us, warmup_ms;
    uint64_t wait_timeout_s, drain_timeout_s, snapshot_rate;
    double zipf;
    enum profile profile;
    bool unreliable, json;
};

/*
 * The reflector's round trip in stages, per echoed packet of channel 0: the feed's own on its
 * clock (how late its loop took up the first message after its intended time; waiting in the
 * packer; handing the packet to rdps and its post), the book's from the durations its echo carries
 * (applying the packet; handing the echo to rdps), and the two legs across the wire (rdps, the
 * devices, the guests' network, and each side's wait to poll) as halves of what is left. They add
 * up to the round trip from the intended time by construction; a sample whose book durations exceed
 * what the feed saw between its post and the echo's arrival is counted as inconsistent, not
 * recorded.
 */
enum stage { ST_WAKE, ST_PACK, ST_SEND, ST_WIRE_OUT, ST_APPLY, ST_ECHO, ST_WIRE_BACK, ST_COUNT };

/* Channel 0's packets as sent, by sequence, until their echo may come back. */
#define SENT_RING 4096
struct sent_packet {
    uint64_t seq, intended_ns, added_ns, packed_ns, posted_ns;
};

struct book_rtt {
    uint32_t id;
    struct lat_hist hist;
    struct lat_hist stage[ST_COUNT];
    uint64_t staged, inconsistent, unmatched;
    FILE *samples; /* --breakdown: one line per echoed packet */
};

struct feed {
    const struct options *opt;
    rdps_ctx_t *ctx;
    rdps_pub_t *pubs[MAX_CHANNELS];
    rdps_sub_t *echo_sub;
    /* Late join: requests in, snapshots out (reliable). */
    rdps_sub_t *snapreq_sub;
    rdps_pub_t *snap_pub;
    struct md_snap_server snap;
    bool snap_ok;
    struct md_gen gen;
    struct md_packer *packers;
    uint64_t start_real_ns, warmup_end_real_ns;
    uint64_t messages, datagrams, bytes, eagain, stalled_sends;
    struct book_rtt books[MAX_BOOKS];
    unsigned nbooks;
    struct sent_packet sent[SENT_RING];
    int wait_ep, wait_timer; /* run_flow's sleep: the ctx's fd and a timer for the schedule */
    uint64_t echoes, echoes_dropped;
    /* --profile replay: the file, and the book its messages build (the reference digest) */
    FILE *replay;
    FILE *itch_out; /* --write-itch */
    struct md_book replay_book;
    bool replay_book_ok;
    uint64_t replay_skipped; /* messages of types the codec does not carry */
    /* --timeseries: one row per second of flow */
    FILE *series;
    struct lat_hist second_hist; /* reflector RTT/2 samples of the current second, all books */
    uint64_t second_start_ns, second_messages, second_datagrams, second_index;
};

extern const char *const md_feed_stage_names[ST_COUNT];

/* --help's text. */
void md_feed_usage(FILE *out);
/* The command line into *o; false (after a message) when it is wrong or asked for help. */
bool md_feed_parse_args(int argc, char **argv, struct options *o);

/* The echo subscriber's callback (user: the feed): a book's echo of a channel 0 packet, timed
 * as a round trip and in stages. */
void md_feed_on_echo(void *user, const void *data, size_t len, const rdps_msg_info *info);

/* The feed's digest: the reference book of what it published (the replayed file's book). */
uint64_t md_feed_digest(const struct feed *f);
/* --hgrm: each book's reflector latency as an HdrHistogram percentile file. */
void md_feed_write_hgrms(struct feed *f);
/* --json: the run's figures on stdout, one object. */
void md_feed_print_json(struct feed *f, uint64_t elapsed_ns);

#endif
