/* SPDX-License-Identifier: BSD-2-Clause */
/* abi.h - caller-allocated structs across library versions: what the *_sized entry points do with
 * the size a caller's header gave its struct (rdps.h, "ABI"). */
#ifndef RDPS_PUBSUB_ABI_H
#define RDPS_PUBSUB_ABI_H

#include <stddef.h>

#include <rdps/rdps.h>

/*
 * The size of each caller-allocated struct in RDPS_1.0, the ABI's first release: no caller of
 * this major version passes less. FROZEN: a struct grows at its end, these never change (a
 * smaller struct needs a new SONAME).
 */
#define RDPS__ABI_CONFIG_SIZE_1_0        160u
#define RDPS__ABI_PUB_OPTS_SIZE_1_0      64u
#define RDPS__ABI_SUB_OPTS_SIZE_1_0      40u
#define RDPS__ABI_COUNTERS_SIZE_1_0      432u
#define RDPS__ABI_SESSION_STATS_SIZE_1_0 152u
/* Sizes that never change within a major version. */
#define RDPS__ABI_CLAIM_SIZE  40u
#define RDPS__ABI_SOURCE_SIZE 24u

/*
 * A caller's input struct of `size` bytes at `theirs` into the library's `ours` (ours_size bytes,
 * already holding the defaults): the fields both know are copied; fields the caller's header did
 * not have keep their defaults. RDPS_EINVAL (message naming `what`) when size is below min_size,
 * or when the caller's struct is larger and a byte past ours is not zero (an option this library
 * does not know was set: it is refused rather than ignored).
 */
int rdps__abi_read_in(void *ours, size_t ours_size, const void *theirs, size_t size,
                      size_t min_size, const char *what);
/* The library's output struct into the caller's of `size` bytes: never past it; bytes of a larger
 * caller's struct that this library does not have are zeroed. */
void rdps__abi_write_out(void *theirs, size_t size, const void *ours, size_t ours_size);
/* RDPS_ENOTSUP (with a message) unless a program whose header is header_version may use this
 * library: the same major version, and a minor version no newer than the library's. */
int rdps__abi_check_header(unsigned header_version, const char *where);

#endif /* RDPS_PUBSUB_ABI_H */
