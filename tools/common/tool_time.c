/* SPDX-License-Identifier: BSD-2-Clause */
/* tool_time.c - parsing and printing UTC times with nanoseconds for the archive tools. */
#include "tool_time.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tool_cli.h"

/* ".25" -> 250000000 ns; false for anything but digits (at most 9). */
static bool parse_fraction(const char *p, uint64_t *ns)
{
    uint64_t v = 0;
    int digits = 0;
    for (; *p != '\0'; p++, digits++) {
        if (*p < '0' || *p > '9' || digits == 9)
            return false;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    if (digits == 0)
        return false;
    for (; digits < 9; digits++)
        v *= 10;
    *ns = v;
    return true;
}

bool tool_parse_time(const char *text, uint64_t base_ns, uint64_t *out_ns, bool *relative)
{
    char buf[64];
    *relative = false;
    if (text == NULL || strlen(text) >= sizeof(buf))
        return false;
    if (text[0] == '+') {
        uint64_t s, frac = 0;
        snprintf(buf, sizeof(buf), "%s", text + 1);
        char *dot = strchr(buf, '.');
        if (dot != NULL) {
            *dot = '\0';
            if (!parse_fraction(dot + 1, &frac))
                return false;
        }
        if (!tool_parse_u64(buf, 0, 100ull * 365 * 86400, false, &s))
            return false;
        *out_ns = base_ns + s * 1000000000ull + frac;
        *relative = true;
        return true;
    }
    if (strchr(text, '-') == NULL)
        return tool_parse_u64(text, 0, UINT64_MAX, false, out_ns);
    snprintf(buf, sizeof(buf), "%s", text);
    size_t n = strlen(buf);
    if (n > 0 && (buf[n - 1] == 'Z' || buf[n - 1] == 'z'))
        buf[--n] = '\0';
    uint64_t frac = 0;
    char *dot = strchr(buf, '.');
    if (dot != NULL) {
        *dot = '\0';
        if (!parse_fraction(dot + 1, &frac))
            return false;
    }
    struct tm tm;
    memset(&tm, 0, sizeof(tm));
    const char *end = NULL;
    static const char *const formats[] = {"%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S",
                                          "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M", "%Y-%m-%d"};
    for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
        memset(&tm, 0, sizeof(tm));
        end = strptime(buf, formats[i], &tm);
        if (end != NULL && *end == '\0')
            break;
        end = NULL;
    }
    if (end == NULL)
        return false;
    time_t t = timegm(&tm);
    if (t < 0)
        return false;
    *out_ns = (uint64_t)t * 1000000000ull + frac;
    return true;
}

const char *tool_format_time(uint64_t ns, char *buf, size_t len)
{
    time_t t = (time_t)(ns / 1000000000ull);
    struct tm tm;
    gmtime_r(&t, &tm);
    char day[32];
    strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, len, "%s.%09lluZ", day, (unsigned long long)(ns % 1000000000ull));
    return buf;
}
