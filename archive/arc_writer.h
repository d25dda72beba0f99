/* SPDX-License-Identifier: BSD-2-Clause */
/* arc_writer.h - the file layer's writer: one recording of a directory as segments of chunks with
 * their indexes, rotation, the flush and fsync rules, retention, recovery of the directory's
 * unfinished recordings, and a full disk stopping it cleanly. One thread. */
#ifndef RDPS_ARCHIVE_WRITER_H
#define RDPS_ARCHIVE_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rdps_archive_format.h"

/*
 * Rules (docs/recording.md states them for users):
 *  - flush: records go into a chunk in memory; the chunk is sealed and written (write(2): in the
 *    page cache, safe from the process dying) when it holds chunk_bytes, or flush_ns after its
 *    first record, whichever comes first (tick() must be called by then: deadline() says when);
 *  - fsync: written bytes are fdatasync'd fsync_ns after the first unsynced write (0: after each
 *    chunk; UINT64_MAX: only when a segment closes), and always when a segment closes;
 *  - a chunk's index entries are written after the chunk, so an index never names missing data;
 *  - a write that fails (ENOSPC, EDQUOT, EIO) cuts the segment and index back to their last whole
 *    chunk and entry and stops the writer (error()): no file is left with a torn chunk by a full
 *    disk; close() then records the stop reason in the catalog when it can.
 *  - rotation: a new segment starts when the current one reaches segment_bytes, or when a record
 *    comes segment_ns (recorder time) after the segment's first;
 *  - retention: after each rotation the directory's closed segments (all recordings) are deleted
 *    oldest first while they total more than retain_bytes, and while their last modification is
 *    older than retain_ns (wall clock), each deletion noted in the catalog (TRIM).
 */
struct rdps_arc_writer_opts {
    const char *dir;
    int codec; /* enum rdps_arc_codec */
    int level;
    uint32_t chunk_bytes;
    uint64_t flush_ns, fsync_ns;
    uint64_t segment_bytes, segment_ns;
    uint64_t retain_bytes, retain_ns;
    const char *spec; /* what is recorded, for the catalog */
    uint32_t max_topics;
};

struct rdps_arc_writer_stats {
    uint64_t recording_id;
    uint64_t records, messages, loss_events, gap_events, overrun_messages;
    uint64_t written_records, written_messages; /* in chunks written (write(2) returned) */
    uint64_t chunks, segments, stored_bytes, raw_bytes, fsyncs, segments_deleted;
};

struct rdps_arc_writer;

/*
 * Opens dir (created 0700 when missing), takes its lock (RDPS_EBUSY: another recorder has it),
 * closes every recording the catalog lists as unfinished (its last segment's torn tail cut, its
 * index rebuilt, a STOP entry with reason RECOVERED) and describes that in report (one line per
 * recording; "" when none), then starts a new recording. now_ns: CLOCK_REALTIME. 0, or a negative
 * code with the detail in rdps_last_error_message().
 */
int rdps__arc_writer_open(struct rdps_arc_writer **out, const struct rdps_arc_writer_opts *o,
                          uint64_t now_ns, char *report, size_t report_cap);
/*
 * Appends one record (its recorder_ts_ns is raised to the previous record's when the clock went
 * back). topic: the name of r->topic_id (NULL for records without a topic); a TOPIC record
 * precedes its first use in each segment. mono_ns: the monotonic clock (flush deadline). 0, or
 * the error that stopped the writer.
 */
int rdps__arc_writer_append(struct rdps_arc_writer *w, struct rdps_arc_record *r, const char *topic,
                            uint64_t mono_ns);
/* Seals a due chunk, fsyncs when due. 0 or the error that stopped the writer. */
int rdps__arc_writer_tick(struct rdps_arc_writer *w, uint64_t mono_ns);
/* Seals the chunk being built now (the recorder drains its queue, then calls this). */
int rdps__arc_writer_flush(struct rdps_arc_writer *w, uint64_t mono_ns);
/* The monotonic time tick() must run by (UINT64_MAX: nothing pending). */
uint64_t rdps__arc_writer_deadline(const struct rdps_arc_writer *w);
/* 0, or the negative code that stopped the writer (RDPS_ENOSPC: disk full). */
int rdps__arc_writer_error(const struct rdps_arc_writer *w);
const struct rdps_arc_writer_stats *rdps__arc_writer_stats(const struct rdps_arc_writer *w);
/* Seals and writes what is pending, closes the segment, appends STOP (reason from the error, or
 * CLEAN), releases the lock, frees. NULL ok. now_ns: CLOCK_REALTIME. */
void rdps__arc_writer_close(struct rdps_arc_writer *w, uint64_t now_ns);

/*
 * Recovery of one recording (used by open, and by rdps-archive): cuts the torn tail of its last
 * segment (a segment whose header is torn is removed), rewrites that segment's index from its
 * chunks, and returns in *stop the totals for a STOP entry. report gets one line. 0 or -errno.
 */
struct rdps_arc_catalog;
int rdps__arc_recover_recording(const char *dir, uint64_t id, struct rdps_arc_catalog_entry *stop,
                                char *report, size_t report_cap);

#endif /* RDPS_ARCHIVE_WRITER_H */
