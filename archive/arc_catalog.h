/* SPDX-License-Identifier: BSD-2-Clause */
/* arc_catalog.h - the catalog file of a recording directory: its entries read back into one
 * summary per recording, and appended by the one recorder that holds the directory. */
#ifndef RDPS_ARCHIVE_CATALOG_H
#define RDPS_ARCHIVE_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rdps_archive_format.h"

/* Recordings a catalog may list (every entry is checked; more are ignored and counted). */
#define RDPS_ARC_CATALOG_MAX_RECORDINGS 1000000u

struct rdps_arc_recording {
    uint64_t id;
    bool stopped;
    uint64_t start_ns;
    uint32_t codec;
    uint64_t segment_bytes, segment_ns, retain_bytes;
    char *spec; /* malloc'd, NUL-terminated */
    struct {
        uint64_t end_ns, records, messages, loss_events, overrun_messages, last_record, bytes;
        uint32_t segments, reason;
    } stop;
    uint32_t first_segment; /* retention: segments below it are gone */
};

struct rdps_arc_catalog {
    int fd; /* open for appending (rdps__arc_catalog_open with for_append), else -1 */
    struct rdps_arc_recording *recs;
    size_t count, cap;
    uint64_t valid_end, torn_bytes; /* where the last whole entry ends; bytes past it */
    uint64_t ignored;               /* entries naming unknown recordings, or past the cap */
};

/*
 * Reads dir's catalog. for_append: creates it when missing (mode 0600), cuts a torn last entry
 * (torn_bytes says how much) and keeps it open to append; otherwise read-only, and a torn tail is
 * only reported. A bad entry ends the catalog there (everything after it is the torn tail). 0,
 * RDPS_ENOENT (no catalog, read-only), RDPS_EPROTO (not a catalog: bad header), RDPS_ENOMEM, or
 * -errno.
 */
int rdps__arc_catalog_open(struct rdps_arc_catalog *cat, const char *dir, bool for_append);
void rdps__arc_catalog_close(struct rdps_arc_catalog *cat);
/* Appends one entry (and fdatasyncs it when sync) and applies it to the summaries. 0 or -errno;
 * a failed append is cut off again so the catalog stays whole. */
int rdps__arc_catalog_append(struct rdps_arc_catalog *cat, const struct rdps_arc_catalog_entry *e,
                             bool sync);
struct rdps_arc_recording *rdps__arc_catalog_find(const struct rdps_arc_catalog *cat, uint64_t id);
/* The next recording id: one more than the largest listed (1 for an empty catalog). */
uint64_t rdps__arc_catalog_next_id(const struct rdps_arc_catalog *cat);
/* Applies decoded entries in the bytes buf[0..len) (after the file header); returns where the last
 * whole valid entry ends. Exposed for the fuzz harness. */
size_t rdps__arc_catalog_parse(struct rdps_arc_catalog *cat, const uint8_t *buf, size_t len);

#endif /* RDPS_ARCHIVE_CATALOG_H */
