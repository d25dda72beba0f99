/* SPDX-License-Identifier: BSD-2-Clause */
/* arc_index.h - a segment's index file read back: its chunk and session entries, validated. */
#ifndef RDPS_ARCHIVE_INDEX_H
#define RDPS_ARCHIVE_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rdps_archive_format.h"

struct arc_index {
    struct rdps_arc_index_entry *chunks; /* offsets, record numbers and times increasing */
    size_t nchunks;
    struct rdps_arc_index_entry *sessions;
    size_t nsessions;
    bool complete; /* every byte after the header was a valid entry in order */
};

/*
 * Reads the index of segment `seg` of recording `id`. Entries are taken up to the first that fails
 * its CRC or fields, or breaks the order (chunk offsets, record numbers and times increasing;
 * session entries naming an indexed chunk). A missing or foreign index gives an empty one. 0, or
 * RDPS_ENOMEM.
 */
int rdps__arc_index_load(const char *dir, uint64_t id, uint32_t seg, struct arc_index *ix);
/* The same from bytes (after nothing: buf starts with the file header); for the fuzz harness. */
int rdps__arc_index_parse(const uint8_t *buf, size_t len, uint64_t id, uint32_t seg,
                          struct arc_index *ix);
void rdps__arc_index_free(struct arc_index *ix);

#endif /* RDPS_ARCHIVE_INDEX_H */
