/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_log.h - internal logging to stderr (never stdout), level set by RDPS_LOG. */
#ifndef RDPS_UTIL_LOG_H
#define RDPS_UTIL_LOG_H

enum rdps_log_level {
    RDPS_LOG_ERROR = 0,
    RDPS_LOG_WARN = 1,
    RDPS_LOG_INFO = 2,
    RDPS_LOG_DEBUG = 3,
};

/* Current threshold: RDPS_LOG=error|warn|info|debug in the environment, default warn. */
enum rdps_log_level rdps__log_level(void);
void rdps__log(enum rdps_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define RDPS_LOG(level, ...)                 \
    do {                                     \
        if ((level) <= rdps__log_level())    \
            rdps__log((level), __VA_ARGS__); \
    } while (0)
#define RDPS_LOG_ERR(...) RDPS_LOG(RDPS_LOG_ERROR, __VA_ARGS__)
#define RDPS_LOG_WRN(...) RDPS_LOG(RDPS_LOG_WARN, __VA_ARGS__)
#define RDPS_LOG_INF(...) RDPS_LOG(RDPS_LOG_INFO, __VA_ARGS__)
#define RDPS_LOG_DBG(...) RDPS_LOG(RDPS_LOG_DEBUG, __VA_ARGS__)

#endif /* RDPS_UTIL_LOG_H */
