/* SPDX-License-Identifier: BSD-2-Clause */
/* error.c - rdps error codes: names, texts, and the per-thread detail message. */
#include "rdps_error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char last_error_message[512];

const char *rdps_strerror(int err)
{
    switch (err) {
    case 0:
        return "success";
#define RDPS_ERROR_TEXT_(name, value, message) \
    case RDPS_##name:                          \
        return message;
        RDPS_ERROR_MAP(RDPS_ERROR_TEXT_)
#undef RDPS_ERROR_TEXT_
    default:
        /* Other negative errno values (from verbs or the OS) keep their system text. */
        if (err < 0 && err > -4000 && strerrordesc_np(-err) != NULL)
            return strerrordesc_np(-err);
        return "unknown error";
    }
}

const char *rdps_err_name(int err)
{
    switch (err) {
    case 0:
        return "RDPS_OK";
#define RDPS_ERROR_NAME_(name, value, message) \
    case RDPS_##name:                          \
        return "RDPS_" #name;
        RDPS_ERROR_MAP(RDPS_ERROR_NAME_)
#undef RDPS_ERROR_NAME_
    default:
        return "RDPS_EUNKNOWN";
    }
}

const char *rdps_last_error_message(void)
{
    return last_error_message;
}

int rdps__set_err(int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error_message, sizeof(last_error_message), fmt, ap);
    va_end(ap);
    return err;
}

int rdps__prepend_err(int err, const char *fmt, ...)
{
    char prefix[256];
    char old[sizeof(last_error_message)];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(prefix, sizeof(prefix), fmt, ap);
    va_end(ap);
    memcpy(old, last_error_message, sizeof(old));
    /* Truncation keeps the most specific context; a long detail is cut, never overrun. */
    size_t used = strnlen(prefix, sizeof(prefix) - 1);
    memcpy(last_error_message, prefix, used);
    size_t room = sizeof(last_error_message) - 1 - used;
    size_t rest = strnlen(old, room);
    memcpy(last_error_message + used, old, rest);
    last_error_message[used + rest] = '\0';
    return err;
}

void rdps__clear_err(void)
{
    last_error_message[0] = '\0';
}

int rdps__errno_code(int errnum)
{
    if (errnum < 0)
        errnum = -errnum;
    if (errnum == 0)
        return RDPS_EIO;
    switch (-errnum) {
#define RDPS_ERROR_ERRNO_(name, value, message) \
    case RDPS_##name:                           \
        return RDPS_##name;
        RDPS_ERROR_MAP(RDPS_ERROR_ERRNO_)
#undef RDPS_ERROR_ERRNO_
    default:
        return -errnum; /* still a valid negative errno; rdps_strerror reports it as unknown */
    }
}
