/* SPDX-License-Identifier: BSD-2-Clause */
/* tool_cli.c - exit codes, one-line errors and numeric option parsing shared by the rdps tools. */
#include "tool_cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdps/rdps.h>

#include "rdps_revision.h" /* generated at build time: RDPS_GIT_REVISION */

const char *tool_revision(void)
{
    return RDPS_GIT_REVISION;
}

void tool_version_exit(const char *prog)
{
    printf("%s (rdps) %d.%d.%d, librdps %s, revision %s\n", prog, RDPS_VERSION_MAJOR,
           RDPS_VERSION_MINOR, RDPS_VERSION_PATCH, rdps_version(), RDPS_GIT_REVISION);
    exit(fflush(stdout) == 0 ? TOOL_EXIT_OK : TOOL_EXIT_RUNTIME);
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

void tool_cli_init(char **argv)
{
    if (argv != NULL && argv[0] != NULL)
        argv[0] = program_invocation_short_name;
}

void tool_usage_hint(const char *prog)
{
    fprintf(stderr, "Try '%s --help'.\n", prog);
}

bool tool_parse_u64(const char *text, uint64_t min, uint64_t max, bool allow_suffix, uint64_t *out)
{
    /* strtoull accepts a sign and leading blanks: a count is digits only. */
    if (text == NULL || *text < '0' || *text > '9')
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
    if (*end != '\0' || v > UINT64_MAX / mult)
        return false;
    v *= mult;
    if (v < min || v > max)
        return false;
    *out = v;
    return true;
}

/* tool_opt_u64 and tool_opt_size: the value, or one error line naming the option and range. */
static bool opt_number(const char *prog, const char *name, const char *arg, uint64_t min,
                       uint64_t max, bool allow_suffix, uint64_t *out)
{
    if (tool_parse_u64(arg, min, max, allow_suffix, out))
        return true;
    char range[64];
    if (max == UINT64_MAX) /* no useful upper bound */
        snprintf(range, sizeof(range), ">= %" PRIu64, min);
    else
        snprintf(range, sizeof(range), "in %" PRIu64 "..%" PRIu64, min, max);
    tool_error(prog, "%s needs %s %s%s, got '%s'", name, allow_suffix ? "a number" : "an integer",
               range, allow_suffix ? " (k/m/g suffix allowed)" : "", arg);
    return false;
}

bool tool_opt_u64(const char *prog, const char *name, const char *arg, uint64_t min, uint64_t max,
                  uint64_t *out)
{
    return opt_number(prog, name, arg, min, max, false, out);
}

bool tool_opt_size(const char *prog, const char *name, const char *arg, uint64_t min, uint64_t max,
                   uint64_t *out)
{
    return opt_number(prog, name, arg, min, max, true, out);
}

bool tool_opt_size_range(const char *prog, const char *name, const char *arg, uint64_t max,
                         uint64_t *lo, uint64_t *hi)
{
    const char *colon = strchr(arg, ':');
    char first[32];
    if (colon != NULL && (size_t)(colon - arg) < sizeof(first)) {
        memcpy(first, arg, (size_t)(colon - arg));
        first[colon - arg] = '\0';
        if (tool_parse_u64(first, 0, max, true, lo) &&
            tool_parse_u64(colon + 1, 0, max, true, hi) && *lo <= *hi)
            return true;
    }
    tool_error(prog, "%s needs MIN:MAX sizes in 0..%" PRIu64 " with MIN <= MAX, got '%s'", name,
               max, arg);
    return false;
}

bool tool_opt_probability(const char *prog, const char *name, const char *arg, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = *arg != '\0' ? strtod(arg, &end) : -1.0;
    if (end != NULL && end != arg && errno == 0) {
        if (*end == '%') {
            v /= 100.0;
            end++;
        }
        if (*end == '\0' && v >= 0.0 && v <= 1.0) {
            *out = v;
            return true;
        }
    }
    tool_error(prog, "%s needs a rate in [0,1] or a percentage, got '%s'", name, arg);
    return false;
}
