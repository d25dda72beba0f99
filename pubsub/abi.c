/* SPDX-License-Identifier: BSD-2-Clause */
/* abi.c - caller-allocated structs across library versions (abi.h). */
#include "abi.h"

#include <string.h>

#include "rdps_error.h"

_Static_assert(sizeof(rdps_config) >= RDPS__ABI_CONFIG_SIZE_1_0, "rdps_config shrank");
_Static_assert(sizeof(rdps_pub_opts) >= RDPS__ABI_PUB_OPTS_SIZE_1_0, "rdps_pub_opts shrank");
_Static_assert(sizeof(rdps_sub_opts) >= RDPS__ABI_SUB_OPTS_SIZE_1_0, "rdps_sub_opts shrank");
_Static_assert(sizeof(rdps_counters) >= RDPS__ABI_COUNTERS_SIZE_1_0, "rdps_counters shrank");
_Static_assert(sizeof(rdps_session_stats) >= RDPS__ABI_SESSION_STATS_SIZE_1_0,
               "rdps_session_stats shrank");
_Static_assert(sizeof(rdps_claim) == RDPS__ABI_CLAIM_SIZE, "rdps_claim changed size");
_Static_assert(sizeof(rdps_source) == RDPS__ABI_SOURCE_SIZE, "rdps_source changed size");

int rdps__abi_read_in(void *ours, size_t ours_size, const void *theirs, size_t size,
                      size_t min_size, const char *what)
{
    if (size < min_size)
        return rdps__set_err(RDPS_EINVAL,
                             "%s of %zu bytes: smaller than rdps 1.0's (%zu); was the program "
                             "built against rdps.h?",
                             what, size, min_size);
    const unsigned char *bytes = theirs;
    for (size_t i = ours_size; i < size; i++) {
        if (bytes[i] != 0)
            return rdps__set_err(RDPS_EINVAL,
                                 "%s: a field at byte %zu is set that this librdps %d.%d does "
                                 "not know (the program's rdps.h is newer)",
                                 what, i, RDPS_VERSION_MAJOR, RDPS_VERSION_MINOR);
    }
    memcpy(ours, theirs, size < ours_size ? size : ours_size);
    return 0;
}

void rdps__abi_write_out(void *theirs, size_t size, const void *ours, size_t ours_size)
{
    memcpy(theirs, ours, size < ours_size ? size : ours_size);
    if (size > ours_size)
        memset((unsigned char *)theirs + ours_size, 0, size - ours_size);
}

int rdps__abi_check_header(unsigned header_version, const char *where)
{
    unsigned major = header_version >> 16, minor = (header_version >> 8) & 0xffu;
    if (major != RDPS_VERSION_MAJOR || minor > RDPS_VERSION_MINOR)
        return rdps__set_err(RDPS_ENOTSUP,
                             "%s: the program was built against rdps %u.%u headers; this librdps "
                             "is %d.%d (it needs %u.%u or newer within major version %u)",
                             where, major, minor, RDPS_VERSION_MAJOR, RDPS_VERSION_MINOR, major,
                             minor, major);
    return 0;
}
