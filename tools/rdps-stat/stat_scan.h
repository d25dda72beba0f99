/* SPDX-License-Identifier: BSD-2-Clause */
/* stat_scan.h - rdps-stat's view of the host: every live-counters file, checked, with liveness. */
#ifndef RDPS_TOOLS_STAT_SCAN_H
#define RDPS_TOOLS_STAT_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stat_format.h"

/*
 * One scan reads every rdps-PID-N.stat in a directory into private snapshots (stat_format.h:
 * a consistent copy or a refusal with its reason). A file whose writer is gone (no process
 * PID, or a process PID started at another time than the file says: the pid was reused) is
 * stale: it is shown as such and `--clean` removes it. A file that does not parse is refused
 * and never removed (it may be someone else's).
 *
 * Any local user can write a file under any pid's name, so before a byte is read a file must
 * be owned by the process it names (its effective or filesystem uid, or root) and no larger
 * than a writer makes (RDPS_STAT_MAX_FILE); then it must name the process's start time (a file
 * that says 0 could be any process that had the pid). Only the part in use is read, and one
 * scan holds at most STAT_SCAN_OWNER_BYTES of the files of one owner and STAT_SCAN_MAX_BYTES in
 * all: past that, files are refused unread, so one user's files can neither exhaust the
 * reader's memory nor crowd out another user's.
 */
#define STAT_SCAN_OWNER_BYTES (16u << 20)
#define STAT_SCAN_MAX_BYTES   (64u << 20)
enum stat_state { STAT_LIVE, STAT_STALE, STAT_REFUSED };

struct stat_ctx {
    char path[512];
    long pid;       /* from the file name */
    unsigned index; /* ctx number, from the file name */
    enum stat_state state;
    char why[160]; /* STAT_STALE / STAT_REFUSED: why */
    uint8_t *buf;  /* the snapshot (STAT_LIVE, STAT_STALE) */
    struct rdps_stat_view view;
};

struct stat_scan {
    struct stat_ctx *ctx; /* sorted by pid, then ctx number */
    size_t n;
    uint64_t taken_mono_ns; /* when the scan ran (CLOCK_MONOTONIC) */
};

/*
 * Reads dir. pid > 0: only that process's files. Returns 0, or -1 with errno when dir cannot
 * be listed. Files vanishing meanwhile (a ctx destroyed) are skipped.
 */
int stat_scan_dir(const char *dir, long pid, struct stat_scan *out);
void stat_scan_free(struct stat_scan *s);

/* The ctx of `prev` that is the same ctx as c (same pid, number and start time), or NULL. */
const struct stat_ctx *stat_scan_match(const struct stat_scan *prev, const struct stat_ctx *c);
/* Entry of `c` with the same kind, topic and session as e, or -1. */
int stat_entry_match(const struct stat_ctx *c, const struct rdps_stat_entry_view *e);
/* Does c have an endpoint of topic (NULL: any)? */
bool stat_ctx_has_topic(const struct stat_ctx *c, const char *topic);

/* Rate per second of a counter between two snapshots of one ctx (0 when time did not move or
 * the counter went back). */
double stat_rate(uint64_t now, uint64_t before, const struct stat_ctx *c,
                 const struct stat_ctx *prev);

/* Removes c's file (stale ones only); 0 or -1 with errno. */
int stat_remove(const struct stat_ctx *c);

#endif /* RDPS_TOOLS_STAT_SCAN_H */
