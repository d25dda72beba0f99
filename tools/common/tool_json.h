/* SPDX-License-Identifier: BSD-2-Clause */
/* tool_json.h - the rdps tools' JSON writer: nested objects and arrays, one string escaper. */
#ifndef RDPS_TOOLS_JSON_H
#define RDPS_TOOLS_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Writes one JSON document to a stream as the calls arrive (no buffering of
 * its own). Inside an object every value needs a key; inside an array keys
 * are NULL. The writer tracks, per nesting level, whether a comma is due;
 * nesting deeper than TOOL_JSON_MAX_DEPTH or closing more than was opened
 * is a programming error and is ignored (the output stays well formed up to
 * that call). Strings are escaped by tool_json_escape, the only JSON
 * escaper of the tools; doubles that JSON cannot represent (NaN, infinity)
 * are written as null.
 */
#define TOOL_JSON_MAX_DEPTH 16

struct tool_json {
    FILE *out;
    unsigned depth;    /* open objects/arrays */
    unsigned overflow; /* levels opened beyond TOOL_JSON_MAX_DEPTH (not written) */
    bool need_comma[TOOL_JSON_MAX_DEPTH + 1];
    char closer[TOOL_JSON_MAX_DEPTH + 1]; /* '}' or ']' of each open level */
};

/* Starts a document: its top-level object is opened by tool_json_object_begin(j, NULL). */
void tool_json_init(struct tool_json *j, FILE *out);
void tool_json_object_begin(struct tool_json *j, const char *key);
void tool_json_object_end(struct tool_json *j);
void tool_json_array_begin(struct tool_json *j, const char *key);
void tool_json_array_end(struct tool_json *j);

void tool_json_u64(struct tool_json *j, const char *key, uint64_t value);
void tool_json_i64(struct tool_json *j, const char *key, int64_t value);
void tool_json_double(struct tool_json *j, const char *key, double value);
void tool_json_bool(struct tool_json *j, const char *key, bool value);
void tool_json_str(struct tool_json *j, const char *key, const char *value); /* NULL -> null */

/* Closes whatever is still open, ends the line and flushes the stream. */
void tool_json_finish(struct tool_json *j);

/* Writes s as a quoted JSON string: '"', '\\' and control characters escaped. */
void tool_json_escape(FILE *out, const char *s);

#endif /* RDPS_TOOLS_JSON_H */
