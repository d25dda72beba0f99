/* SPDX-License-Identifier: BSD-2-Clause */
/* version.c - the library's version string, built from the project version. */
#include <rdps/rdps.h>

#define RDPS_STR_(x) #x
#define RDPS_STR(x)  RDPS_STR_(x)

const char *rdps_version(void)
{
    return RDPS_STR(RDPS_VERSION_MAJOR) "." RDPS_STR(RDPS_VERSION_MINOR) "." RDPS_STR(
        RDPS_VERSION_PATCH);
}
