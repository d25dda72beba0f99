/* SPDX-License-Identifier: BSD-2-Clause */
/* archive_test_util.h - helpers of the archive tests: scratch directories and a writer fed with
 * numbered records on a fake clock. */
#ifndef RDPS_TESTS_ARCHIVE_UTIL_H
#define RDPS_TESTS_ARCHIVE_UTIL_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arc_writer.h"

/* A fresh directory under $TMPDIR (or /tmp); rm -rf'd by scratch_remove. */
static inline void scratch_dir(char *out, size_t cap, const char *tag)
{
    const char *base = getenv("TMPDIR");
    snprintf(out, cap, "%s/rdps-%s-XXXXXX", base != NULL && base[0] ? base : "/tmp", tag);
    if (mkdtemp(out) == NULL) {
        perror("mkdtemp");
        abort();
    }
}

static inline void scratch_remove(const char *dir)
{
    char cmd[4200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

static inline void writer_opts(struct rdps_arc_writer_opts *o, const char *dir)
{
    memset(o, 0, sizeof(*o));
    o->dir = dir;
    o->codec = RDPS_ARC_CODEC_ZSTD;
    o->level = 1;
    o->chunk_bytes = 4096;
    o->flush_ns = 100000000;
    o->fsync_ns = UINT64_MAX;
    o->segment_bytes = 1u << 30;
    o->spec = "topics test.a";
    o->max_topics = 64;
}

/* The message record i of the tests: body of i % 97 bytes, each (i + k) & 0xff; time 1 us apart
 * from base_ts. */
static inline struct rdps_arc_record test_record(uint64_t i, uint8_t *body, uint64_t base_ts)
{
    uint32_t len = (uint32_t)(i % 97);
    for (uint32_t k = 0; k < len; k++)
        body[k] = (uint8_t)(i + k);
    return (struct rdps_arc_record){
        .type = RDPS_ARC_REC_MESSAGE,
        .topic_id = (i % 3) + 1,
        .session_id = 100 + (uint32_t)(i % 3),
        .seq = (uint32_t)(i / 3),
        .count = 1,
        .publisher_ts_ns = base_ts + i * 1000 - 500,
        .recorder_ts_ns = base_ts + i * 1000,
        .body = body,
        .body_len = len,
    };
}

static inline const char *test_topic(uint64_t i)
{
    static const char *names[] = {"test.a", "test.b", "test.c"};
    return names[i % 3];
}

#endif /* RDPS_TESTS_ARCHIVE_UTIL_H */
