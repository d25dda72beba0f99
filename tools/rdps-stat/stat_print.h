/* SPDX-License-Identifier: BSD-2-Clause */
/* stat_print.h - rdps-stat's three outputs of a scan: table, JSON line, OpenMetrics text. */
#ifndef RDPS_TOOLS_STAT_PRINT_H
#define RDPS_TOOLS_STAT_PRINT_H

#include <stdbool.h>
#include <stdio.h>

#include "stat_scan.h"

struct stat_print_opts {
    const char *dir;
    const char *topic; /* only endpoints of this topic (NULL: all) */
    bool all;          /* also counters that are zero */
};

/*
 * `prev` (NULL on the first sample) is the scan before, for rates per second: a ctx or an
 * endpoint absent from it has none. Only contexts that pass the filters are in `cur`'s output.
 */
void stat_print_table(FILE *out, const struct stat_scan *cur, const struct stat_scan *prev,
                      const struct stat_print_opts *o);
void stat_print_json(FILE *out, const struct stat_scan *cur, const struct stat_scan *prev,
                     const struct stat_print_opts *o);
/*
 * OpenMetrics text exposition of the live contexts (stale and refused files are only counted):
 * rdps_<counter>_total{pid,ctx,program} for the ctx, rdps_endpoint_<counter>_total{pid,ctx,
 * topic,kind} for what publishers and subscribers count themselves (summed over the endpoints of
 * one kind and topic in a ctx), rdps_bad_frames_by_reason_total{pid,ctx,reason}, gauges without
 * the suffix; ends with "# EOF".
 */
void stat_print_openmetrics(FILE *out, const struct stat_scan *cur,
                            const struct stat_print_opts *o);

#endif /* RDPS_TOOLS_STAT_PRINT_H */
