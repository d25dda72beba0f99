/* SPDX-License-Identifier: BSD-2-Clause */
/* error.c - rdps error codes: names, texts, and the per-thread detail message. */
#include "rdps_error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

_Thread_local struct rdps__err_state rdps__err;
/* The formatted detail (rdps__err.text points here), and the message as read (fn: detail). */
static _Thread_local char detail_buf[512];
static _Thread_local char message_buf[640];

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
    const char *text = rdps__err.text, *fn = rdps__err.fn;
    if (text == NULL)
        return "";
    size_t n = fn != NULL ? strlen(fn) : 0;
    /* A detail that already starts with its call's name ("rdps_ctx_create: ...") is whole. */
    if (fn == NULL || (strncmp(text, fn, n) == 0 && text[n] == ':'))
        return text;
    snprintf(message_buf, sizeof(message_buf), "%s: %s", fn, text);
    return message_buf;
}

int rdps__set_err(int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail_buf, sizeof(detail_buf), fmt, ap);
    va_end(ap);
    rdps__err.text = detail_buf;
    rdps__err.fn = NULL;
    return err;
}

/* Copies src behind detail_buf's first *used bytes, as much as fits (always terminated). */
static void put(size_t *used, const char *src)
{
    size_t n = strnlen(src, sizeof(detail_buf) - 1 - *used);
    memcpy(detail_buf + *used, src, n);
    *used += n;
    detail_buf[*used] = '\0';
}

/* The current detail with `before` in front and `after` behind, cut to the buffer, never overrun
 * (truncation keeps the most specific context: the prefix). */
static void compose(const char *before, const char *after)
{
    char old[sizeof(detail_buf)];
    size_t used = 0;
    old[0] = '\0';
    if (rdps__err.text != NULL)
        memcpy(old, rdps__err.text, strnlen(rdps__err.text, sizeof(old) - 1) + 1);
    old[sizeof(old) - 1] = '\0';
    put(&used, before);
    put(&used, old);
    put(&used, after);
    rdps__err.text = detail_buf;
    rdps__err.fn = NULL;
}

int rdps__prepend_err(int err, const char *fmt, ...)
{
    char prefix[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof(prefix), fmt, ap);
    va_end(ap);
    compose(prefix, "");
    return err;
}

int rdps__append_err(int err, const char *fmt, ...)
{
    char suffix[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(suffix, sizeof(suffix), fmt, ap);
    va_end(ap);
    compose("", suffix);
    return err;
}

int rdps__api_fail(int rc, const char *fn)
{
    if (rdps__err.text == NULL) /* nothing below said why: the code, named */
        rdps__set_err(rc, "%s (%s)", rdps_strerror(rc), rdps_err_name(rc));
    rdps__err.fn = fn;
    return rc;
}

void rdps__api_note(const char *fn)
{
    if (rdps__err.text != NULL)
        rdps__err.fn = fn;
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
