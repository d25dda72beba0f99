/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_error.h - internal error recording: set where a failure starts, callers add context. */
#ifndef RDPS_UTIL_ERROR_H
#define RDPS_UTIL_ERROR_H

#include <rdps/rdps.h>

/*
 * Records a formatted detail message for rdps_last_error_message() and
 * returns err unchanged so call sites can write `return rdps__set_err(...)`.
 */
int rdps__set_err(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prefixes the current detail message with more context ("ctx_create: " + old). */
int rdps__prepend_err(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Clears the thread's detail message. */
void rdps__clear_err(void);
/* Maps a positive or negative errno value (0 means unknown) to a negative rdps code. */
int rdps__errno_code(int errnum);

#define RDPS_SET_ERR(err, ...) rdps__set_err((err), __VA_ARGS__)

#endif /* RDPS_UTIL_ERROR_H */
