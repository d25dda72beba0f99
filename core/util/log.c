/* SPDX-License-Identifier: BSD-2-Clause */
/* log.c - stderr logging for slow-path events; the data path never logs. */
#include "rdps_log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cached_level = -1;

static enum rdps_log_level parse_level(const char *text)
{
    if (text == NULL)
        return RDPS_LOG_WARN;
    if (strcmp(text, "error") == 0)
        return RDPS_LOG_ERROR;
    if (strcmp(text, "info") == 0)
        return RDPS_LOG_INFO;
    if (strcmp(text, "debug") == 0)
        return RDPS_LOG_DEBUG;
    return RDPS_LOG_WARN;
}

enum rdps_log_level rdps__log_level(void)
{
    /* A benign race: every thread computes the same value. */
    if (cached_level < 0)
        cached_level = (int)parse_level(getenv("RDPS_LOG"));
    return (enum rdps_log_level)cached_level;
}

void rdps__log(enum rdps_log_level level, const char *fmt, ...)
{
    static const char *const names[] = {"error", "warn", "info", "debug"};
    char line[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    fprintf(stderr, "rdps %s: %s\n", names[level], line);
}
