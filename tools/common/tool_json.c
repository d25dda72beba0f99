/* SPDX-License-Identifier: BSD-2-Clause */
/* tool_json.c - a streaming JSON writer with nesting, for the tools' --json output. */
#include "tool_json.h"

#include <inttypes.h>
#include <math.h>

void tool_json_init(struct tool_json *j, FILE *out)
{
    j->out = out;
    j->depth = 0;
    j->overflow = 0;
    for (unsigned i = 0; i <= TOOL_JSON_MAX_DEPTH; i++) {
        j->need_comma[i] = false;
        j->closer[i] = '}';
    }
}

void tool_json_escape(FILE *out, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
        switch (*p) {
        case '"':
            fputs("\\\"", out);
            break;
        case '\\':
            fputs("\\\\", out);
            break;
        case '\n':
            fputs("\\n", out);
            break;
        case '\r':
            fputs("\\r", out);
            break;
        case '\t':
            fputs("\\t", out);
            break;
        default:
            if (*p < 0x20 || *p == 0x7f) {
                fputs("\\u00", out);
                fputc(hex[*p >> 4], out);
                fputc(hex[*p & 0xf], out);
            } else {
                fputc(*p, out);
            }
        }
    }
    fputc('"', out);
}

/* The separator and key in front of every value; false inside a level too deep to write. */
static bool value_prefix(struct tool_json *j, const char *key)
{
    if (j->overflow > 0)
        return false;
    if (j->need_comma[j->depth])
        fputc(',', j->out);
    j->need_comma[j->depth] = true;
    if (key != NULL) {
        tool_json_escape(j->out, key);
        fputc(':', j->out);
    }
    return true;
}

static void open_level(struct tool_json *j, const char *key, char opener, char closer)
{
    if (j->depth == TOOL_JSON_MAX_DEPTH || !value_prefix(j, key)) {
        j->overflow++;
        return;
    }
    fputc(opener, j->out);
    j->depth++;
    j->need_comma[j->depth] = false;
    j->closer[j->depth] = closer;
}

static void close_level(struct tool_json *j)
{
    if (j->overflow > 0) {
        j->overflow--;
        return;
    }
    if (j->depth == 0)
        return;
    fputc(j->closer[j->depth], j->out);
    j->depth--;
}

void tool_json_object_begin(struct tool_json *j, const char *key)
{
    open_level(j, key, '{', '}');
}

void tool_json_object_end(struct tool_json *j)
{
    close_level(j);
}

void tool_json_array_begin(struct tool_json *j, const char *key)
{
    open_level(j, key, '[', ']');
}

void tool_json_array_end(struct tool_json *j)
{
    close_level(j);
}

void tool_json_u64(struct tool_json *j, const char *key, uint64_t value)
{
    if (!value_prefix(j, key))
        return;
    fprintf(j->out, "%" PRIu64, value);
}

void tool_json_i64(struct tool_json *j, const char *key, int64_t value)
{
    if (!value_prefix(j, key))
        return;
    fprintf(j->out, "%" PRId64, value);
}

void tool_json_double(struct tool_json *j, const char *key, double value)
{
    if (!value_prefix(j, key))
        return;
    if (isfinite(value))
        fprintf(j->out, "%.6g", value);
    else
        fputs("null", j->out);
}

void tool_json_bool(struct tool_json *j, const char *key, bool value)
{
    if (!value_prefix(j, key))
        return;
    fputs(value ? "true" : "false", j->out);
}

void tool_json_str(struct tool_json *j, const char *key, const char *value)
{
    if (!value_prefix(j, key))
        return;
    if (value != NULL)
        tool_json_escape(j->out, value);
    else
        fputs("null", j->out);
}

void tool_json_finish(struct tool_json *j)
{
    j->overflow = 0;
    while (j->depth > 0)
        close_level(j);
    fputc('\n', j->out);
    fflush(j->out);
}
