/* tool_util.c - argument parsing, clocks and JSON output shared by the rdps tools. */
#include "tool_util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

bool tool_parse_u64(const char *text, uint64_t min, uint64_t max, bool allow_suffix, uint64_t *out)
{
    if (text == NULL || *text == '\0' || *text == '-' || *text == '+')
        return false;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno != 0 || end == text)
        return false;
    uint64_t mult = 1;
    if (allow_suffix && *end != '\0' && end[1] == '\0') {
        switch (*end) {
        case 'k':
        case 'K':
            mult = 1024ull;
            break;
        case 'm':
        case 'M':
            mult = 1024ull * 1024;
            break;
        case 'g':
        case 'G':
            mult = 1024ull * 1024 * 1024;
            break;
        default:
            return false;
        }
        end++;
    }
    if (*end != '\0')
        return false;
    if (v > UINT64_MAX / mult)
        return false;
    v *= mult;
    if (v < min || v > max)
        return false;
    *out = v;
    return true;
}

bool tool_parse_range(const char *text, uint64_t max, uint64_t *lo, uint64_t *hi)
{
    const char *colon = text ? strchr(text, ':') : NULL;
    char first[32];
    if (colon == NULL || (size_t)(colon - text) >= sizeof(first))
        return false;
    memcpy(first, text, (size_t)(colon - text));
    first[colon - text] = '\0';
    return tool_parse_u64(first, 0, max, true, lo) && tool_parse_u64(colon + 1, 0, max, true, hi) &&
           *lo <= *hi;
}

bool tool_parse_rate(const char *text, double *out)
{
    if (text == NULL || *text == '\0')
        return false;
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (errno != 0 || end == text)
        return false;
    if (*end == '%') {
        v /= 100.0;
        end++;
    }
    if (*end != '\0' || !(v >= 0.0 && v <= 1.0))
        return false;
    *out = v;
    return true;
}

uint64_t tool_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t tool_realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void tool_error(const char *prog, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", prog);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void tool_json_begin(struct tool_json *j, FILE *out)
{
    j->out = out;
    j->first = true;
    fputc('{', out);
}

static void json_key(struct tool_json *j, const char *key)
{
    fprintf(j->out, "%s\"%s\":", j->first ? "" : ",", key);
    j->first = false;
}

void tool_json_u64(struct tool_json *j, const char *key, uint64_t value)
{
    json_key(j, key);
    fprintf(j->out, "%" PRIu64, value);
}

void tool_json_double(struct tool_json *j, const char *key, double value)
{
    json_key(j, key);
    fprintf(j->out, "%.6g", value);
}

void tool_json_str(struct tool_json *j, const char *key, const char *value)
{
    json_key(j, key);
    fputc('"', j->out);
    for (const unsigned char *p = (const unsigned char *)value; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(j->out, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(j->out, "\\u%04x", *p);
        else
            fputc(*p, j->out);
    }
    fputc('"', j->out);
}

void tool_json_end(struct tool_json *j)
{
    fputs("}\n", j->out);
    fflush(j->out);
}
