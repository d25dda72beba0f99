/* tool_util.h - shared helpers for the rdps command-line tools: argument parsing, clocks, JSON. */
#ifndef RDPS_TOOLS_UTIL_H
#define RDPS_TOOLS_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Parses a decimal integer in [min, max] with an optional k/m/g (x1024) suffix when allow_suffix.
 */
bool tool_parse_u64(const char *text, uint64_t min, uint64_t max, bool allow_suffix, uint64_t *out);
/* Parses "MIN:MAX" sizes (suffixes allowed), MIN <= MAX. */
bool tool_parse_range(const char *text, uint64_t max, uint64_t *lo, uint64_t *hi);
/* Parses a probability "0.1" or "10%" into [0, 1]. */
bool tool_parse_rate(const char *text, double *out);

uint64_t tool_now_ns(void);      /* CLOCK_MONOTONIC */
uint64_t tool_realtime_ns(void); /* CLOCK_REALTIME */

/* Prints "PROG: message" on stderr (one line). */
void tool_error(const char *prog, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A tiny one-line JSON object writer. */
struct tool_json {
    FILE *out;
    bool first;
};
void tool_json_begin(struct tool_json *j, FILE *out);
void tool_json_u64(struct tool_json *j, const char *key, uint64_t value);
void tool_json_double(struct tool_json *j, const char *key, double value);
void tool_json_str(struct tool_json *j, const char *key, const char *value);
void tool_json_end(struct tool_json *j);

#endif /* RDPS_TOOLS_UTIL_H */
