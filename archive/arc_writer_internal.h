/* SPDX-License-Identifier: BSD-2-Clause */
/* arc_writer_internal.h - the writer's state, shared by its two files (arc_writer.c: appending;
 * arc_recover.c: recovery at open and retention after rotation). */
#ifndef RDPS_ARCHIVE_WRITER_INTERNAL_H
#define RDPS_ARCHIVE_WRITER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arc_catalog.h"
#include "arc_io.h"
#include "arc_writer.h"
#include "rdps_archive_chunk.h"

/* A small hash table: topics (key: topic id, name kept) and sessions (topic id, session id),
 * each remembering the segment generation it was last written in. */
struct arc_slot {
    uint64_t key, key2;
    uint64_t generation;
    char *name;
};
struct arc_table {
    struct arc_slot *table;
    size_t slots, used;
};

struct rdps_arc_writer {
    struct rdps_arc_writer_opts o;
    char *dir;
    char rec_dir[RDPS_ARC_PATH_MAX];
    int lock_fd;
    struct rdps_arc_catalog cat;
    uint64_t id;

    uint32_t segment;
    int seg_fd, idx_fd;
    uint64_t seg_off, idx_off;
    uint64_t seg_first_ts;
    uint64_t seg_generation;
    bool rotate_due;

    struct rdps_arc_builder b;
    struct rdps_arc_compressor comp;
    uint8_t *out;
    size_t out_cap;
    size_t sealed_raw;
    uint64_t next_record;
    uint64_t last_ts;
    uint64_t chunk_deadline;
    bool chunk_has_topics;
    uint64_t chunk_messages; /* messages in the chunk being built */
    bool unsynced;
    uint64_t sync_deadline;

    struct rdps_arc_index_entry *pending; /* SESSION entries of the chunk being built */
    size_t npending, pending_cap;
    uint8_t *ix_buf; /* (pending_cap + 1) encoded entries */

    struct arc_table topics, sessions;
    /* The (topic, session) of the last record appended, already defined and indexed in the
     * segment of that generation: consecutive records mostly share it (no table lookups). */
    uint64_t known_topic, known_generation;
    uint32_t known_session;
    int error;
    struct rdps_arc_writer_stats stats;
};

/* arc_recover.c */
int rdps__arc_recover_unfinished(struct rdps_arc_writer *w, uint64_t now_ns, char *report,
                                 size_t report_cap);
void rdps__arc_retention(struct rdps_arc_writer *w);

#endif /* RDPS_ARCHIVE_WRITER_INTERNAL_H */
