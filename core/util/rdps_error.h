/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_error.h - internal error recording: set where a failure starts, callers add context. */
#ifndef RDPS_UTIL_ERROR_H
#define RDPS_UTIL_ERROR_H

#include <stdbool.h>

#include <rdps/rdps.h>

/*
 * The thread's detail message (rdps_last_error_message()). Internal code records why it failed
 * where the failure starts; the public entry points attribute it to themselves:
 *
 *   int rdps_x(...)
 *   {
 *       rdps__api_enter();
 *       return rdps__api_return(x_impl(...), "rdps_x");
 *   }
 *
 * so the message always belongs to the last rdps_* call of the thread that returns a code: empty
 * when it succeeded, "rdps_x: why" when it failed (a generic text naming the code when nothing
 * below said why). Recording a detail formats it (slow paths); rdps__set_err_static records a
 * constant text by pointer (hot paths: back-pressure). The message is composed when read.
 */
struct rdps__err_state {
    const char *text; /* the detail: a constant, or the thread's format buffer; NULL: none */
    const char *fn;   /* the public call it belongs to, NULL until attributed */
};
/* Initial-exec TLS: two pointers, so every public call can reset them with plain stores. */
extern _Thread_local struct rdps__err_state rdps__err
    __attribute__((tls_model("initial-exec"), visibility("hidden")));

/*
 * Records a formatted detail message for rdps_last_error_message() and
 * returns err unchanged so call sites can write `return rdps__set_err(...)`.
 */
int rdps__set_err(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Records a constant detail (a string literal: kept by pointer, nothing formatted). */
static inline int rdps__set_err_static(int err, const char *text)
{
    rdps__err.text = text;
    rdps__err.fn = NULL;
    return err;
}
/* Prefixes the current detail message with more context ("ctx_create: " + old). */
int rdps__prepend_err(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends to the current detail message (a hint: "...; try ..."). */
int rdps__append_err(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Clears the thread's detail message. */
static inline void rdps__clear_err(void)
{
    rdps__err.text = NULL;
}
/* True when a detail is recorded (since the last clear). */
static inline bool rdps__err_is_set(void)
{
    return rdps__err.text != NULL;
}
/* Maps a positive or negative errno value (0 means unknown) to a negative rdps code. */
int rdps__errno_code(int errnum);

/* A public entry point starts: nothing recorded yet for it. */
static inline void rdps__api_enter(void)
{
    rdps__err.text = NULL;
}
/* Out of line: a failing public call keeps (or makes) its detail and names itself. */
int rdps__api_fail(int rc, const char *fn);
/* A public entry point returns rc: success clears the message, a failure is attributed to fn. */
static inline int rdps__api_return(int rc, const char *fn)
{
    if (__builtin_expect(rc >= 0, 1)) {
        rdps__err.text = NULL;
        return rc;
    }
    return rdps__api_fail(rc, fn);
}
/* Attributes the recorded detail to fn (a query that reports a failure without a code). */
void rdps__api_note(const char *fn);

#define RDPS_SET_ERR(err, ...) rdps__set_err((err), __VA_ARGS__)

#endif /* RDPS_UTIL_ERROR_H */
