/* SPDX-License-Identifier: BSD-2-Clause */
/* md_topics.h - what md-feed and md-book agree on: topic names, the reflector's echo message and
 * the late joiner's snapshot request. */
#ifndef RDPS_TOOLS_MD_TOPICS_H
#define RDPS_TOOLS_MD_TOPICS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <rdps/rdps.h>

#include "lat_hist.h"
#include "md_book.h"
#include "rdps_endian.h"
#include "tool_json.h"

/* Channel k of feed NAME is topic "md.NAME.chK"; books echo on "md.NAME.echo", ask for book
 * snapshots on "md.NAME.snapreq" and receive them on "md.NAME.snap" (reliable). */
static inline void md_channel_topic(char *buf, size_t cap, const char *feed, uint32_t channel)
{
    snprintf(buf, cap, "md.%s.ch%u", feed, channel);
}

static inline void md_echo_topic(char *buf, size_t cap, const char *feed)
{
    snprintf(buf, cap, "md.%s.echo", feed);
}

static inline void md_snap_topic(char *buf, size_t cap, const char *feed)
{
    snprintf(buf, cap, "md.%s.snap", feed);
}

static inline void md_snapreq_topic(char *buf, size_t cap, const char *feed)
{
    snprintf(buf, cap, "md.%s.snapreq", feed);
}

/*
 * The same sender, as the device saw it: GID (or LID) and QP number, compared exactly. md-book
 * keeps a channel to the feed's source and md-feed answers only sources discovery announced as
 * subscribers; neither is authentication (rdps_source: a host on the fabric can forge a GID).
 */
static inline bool md_source_equal(const rdps_source *a, const rdps_source *b)
{
    return a->qpn == b->qpn && a->lid == b->lid && a->has_gid == b->has_gid &&
           memcmp(a->gid, b->gid, sizeof(a->gid)) == 0;
}

/*
 * Reflector echo (book -> feed), little-endian: magic "ECHO", book id (u32), the echoed
 * packet's channel sequence (u64) and intended send time (u64, the feed's CLOCK_REALTIME), then
 * two durations measured on the book's clock: apply_ns, from the rdps callback's start to the
 * packet's messages applied to the book, and echo_ns, from there to the echo handed to rdps
 * (u64 each). The feed records (now - intended) / 2, a one-way estimate that needs no shared
 * clock, and splits the round trip into stages: its own (packing, sending) on its clock, the
 * book's from these durations, and the two wire legs as halves of what is left.
 */
#define MD_ECHO_LEN   40
#define MD_ECHO_MAGIC 0x4f484345u /* "ECHO" */

struct md_echo {
    uint32_t book_id;
    uint64_t seq, intended_ns;
    uint64_t apply_ns, echo_ns; /* book-side durations */
};

static inline void md_echo_encode(const struct md_echo *e, uint8_t out[MD_ECHO_LEN])
{
    rdps__put_le32(out, MD_ECHO_MAGIC);
    rdps__put_le32(out + 4, e->book_id);
    rdps__put_le64(out + 8, e->seq);
    rdps__put_le64(out + 16, e->intended_ns);
    rdps__put_le64(out + 24, e->apply_ns);
    rdps__put_le64(out + 32, e->echo_ns);
}

/* 0, or -1 for anything that is not an echo. */
static inline int md_echo_decode(const void *data, size_t len, struct md_echo *e)
{
    const uint8_t *p = data;
    if (len != MD_ECHO_LEN || rdps__get_le32(p) != MD_ECHO_MAGIC)
        return -1;
    e->book_id = rdps__get_le32(p + 4);
    e->seq = rdps__get_le64(p + 8);
    e->intended_ns = rdps__get_le64(p + 16);
    e->apply_ns = rdps__get_le64(p + 24);
    e->echo_ns = rdps__get_le64(p + 32);
    return 0;
}

/*
 * Snapshot request (book -> feed), little-endian: magic "SREQ", book id (u32), channel (u32),
 * or MD_SNAPREQ_DIRECTORY for the symbol directory. The feed answers on the snapshot topic:
 * every part of that channel's BookSnapshot (schemas/md.proto), at most once per
 * MD_SNAP_MIN_INTERVAL_NS per channel (books that ask together share one snapshot), or the
 * SymbolDirectory. Each message there starts with one tag byte saying which it is. A book that
 * got no answer asks again after MD_SNAP_RETRY_NS (requests are unreliable; answers are not).
 */
#define MD_SNAPREQ_LEN          12
#define MD_SNAPREQ_MAGIC        0x51455253u /* "SREQ" */
#define MD_SNAP_MIN_INTERVAL_NS 250000000ull
#define MD_SNAP_RETRY_NS        3000000000ull
#define MD_DIR_MIN_INTERVAL_NS  1000000000ull /* the directory is ~100 kB for 8 000 symbols */
/* Snapshot parts and directory slices stay small: a reliable message can never take more than
 * 1023 datagrams (half a receiver's sequence window; ~1 MB at rxe's 1 KB MTU; a 65 535-symbol
 * directory is larger), and one that exceeds its stream's share of the parking quota (128 datagrams
 * with 8 channels) stretches the window and holds the stream until it is complete. */
#define MD_SNAP_PART_BYTES   16384 /* encoded snapshot part, one rdps message */
#define MD_DIR_SLICE_SYMBOLS 600   /* symbols per directory message (<= ~13 kB) */
#define MD_SNAPREQ_DIRECTORY 0xFFFFFFFFu
#define MD_SNAPMSG_PART      'S' /* tag: a BookSnapshot part follows */
#define MD_SNAPMSG_DIRECTORY 'D' /* tag: a SymbolDirectory follows */

struct md_snapreq {
    uint32_t book_id, channel;
};

static inline void md_snapreq_encode(const struct md_snapreq *r, uint8_t out[MD_SNAPREQ_LEN])
{
    rdps__put_le32(out, MD_SNAPREQ_MAGIC);
    rdps__put_le32(out + 4, r->book_id);
    rdps__put_le32(out + 8, r->channel);
}

/* 0, or -1 for anything that is not a request. */
static inline int md_snapreq_decode(const void *data, size_t len, struct md_snapreq *r)
{
    const uint8_t *p = data;
    if (len != MD_SNAPREQ_LEN || rdps__get_le32(p) != MD_SNAPREQ_MAGIC)
        return -1;
    r->book_id = rdps__get_le32(p + 4);
    r->channel = rdps__get_le32(p + 8);
    return 0;
}

/* A latency histogram's count and percentiles in microseconds, under the keys both tools'
 * JSON and the demo's report use (count, min_us, p50_us, ... max_us). */
static inline void md_json_latency(struct tool_json *j, const struct lat_hist *h)
{
    struct lat_hist_summary s;
    lat_hist_summarize(h, &s);
    tool_json_u64(j, "count", s.count);
    tool_json_double(j, "min_us", (double)s.min / 1e3);
    tool_json_double(j, "p50_us", (double)s.p50 / 1e3);
    tool_json_double(j, "p90_us", (double)s.p90 / 1e3);
    tool_json_double(j, "p99_us", (double)s.p99 / 1e3);
    tool_json_double(j, "p999_us", (double)s.p999 / 1e3);
    tool_json_double(j, "p9999_us", (double)s.p9999 / 1e3);
    tool_json_double(j, "max_us", (double)s.max / 1e3);
}

/*
 * --symbol-digests FILE: one "locate digest" line per symbol that has state, in locate order, so
 * the demo's report can say how many symbols of a book differ from the feed's (an unreliable
 * book under loss). 0, or -1 when the file cannot be written.
 */
static inline int md_write_symbol_digests(const char *path, const struct md_book *book)
{
    FILE *out = fopen(path, "w");
    if (out == NULL)
        return -1;
    for (uint32_t locate = 1; locate <= 0xFFFFu; locate++) {
        uint64_t d = md_book_symbol_digest(book, (uint16_t)locate);
        if (d != 0)
            fprintf(out, "%u %016llx\n", locate, (unsigned long long)d);
    }
    return fclose(out) == 0 ? 0 : -1;
}

#endif /* RDPS_TOOLS_MD_TOPICS_H */
