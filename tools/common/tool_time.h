/* SPDX-License-Identifier: BSD-2-Clause */
/* tool_time.h - wall-clock times on the command line of the archive tools, and printed by them. */
#ifndef RDPS_TOOLS_TIME_H
#define RDPS_TOOLS_TIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A time as the archive tools take it: "2026-12-06T10:31:07.25Z" (UTC; the Z, the fraction and
 * the seconds are optional; a space may stand for the T), a count of nanoseconds since the epoch
 * ("1796550667250000000"), or "+SECONDS" (fraction allowed) after `base_ns` (a recording's
 * start). *relative says the last form was used. false when TEXT is none of them.
 */
bool tool_parse_time(const char *text, uint64_t base_ns, uint64_t *out_ns, bool *relative);
/* "2026-12-06T10:31:07.250000000Z" into buf (at least 32 bytes); returns buf. */
const char *tool_format_time(uint64_t ns, char *buf, size_t len);

#endif /* RDPS_TOOLS_TIME_H */
