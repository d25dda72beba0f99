/* SPDX-License-Identifier: BSD-2-Clause */
/* tool_cli.h - the rdps tools' command-line layer: exit codes, one-line errors, numeric options. */
#ifndef RDPS_TOOLS_CLI_H
#define RDPS_TOOLS_CLI_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Exit status of every rdps tool. A tool's --help lists the ones it uses;
 * the numbers never change meaning between tools.
 */
enum tool_exit {
    TOOL_EXIT_OK = 0,
    TOOL_EXIT_FAILED = 1,  /* the tool's check failed: corrupt messages, send failed, no echo */
    TOOL_EXIT_USAGE = 2,   /* bad arguments (one line on stderr, then a --help hint) */
    TOOL_EXIT_TIMEOUT = 3, /* gave up waiting, nothing to judge */
    TOOL_EXIT_RUNTIME = 4, /* device, context or system error */
    TOOL_EXIT_MISSING = 5, /* rdsub --verify: expected messages never arrived */
    TOOL_EXIT_STORAGE = 6, /* rdps-record: the disk filled or a write failed; recording stopped,
                              everything before it intact */
};

/*
 * --version, the same in every tool: the table entry goes into the tool's
 * getopt_long options, the case calls tool_version_exit. The code sits below
 * tool_ctx_option_code (1000+) and above the tools' own enums (256+).
 */
#define TOOL_OPT_VERSION 999
#define TOOL_VERSION_LONG_OPTION                       \
    {                                                  \
        "version", no_argument, NULL, TOOL_OPT_VERSION \
    }
/*
 * Prints "PROG (rdps) VERSION, librdps LIBVERSION, revision REV" on stdout and
 * exits 0. VERSION and REV are this build's (REV: git describe at build time,
 * or the tarball's stamped commit, or "unknown"); LIBVERSION is that of the
 * librdps actually loaded (rdps_version()), which can differ when an older
 * library is found first.
 */
_Noreturn void tool_version_exit(const char *prog);
/* The revision string alone (as above). */
const char *tool_revision(void);

/*
 * Call first in main: getopt's own messages ("unrecognized option '--x'") name argv[0], which is
 * the path the tool was started by (build/tools/rdsub/rdsub); they name the program instead, as
 * every other error line of the tools does.
 */
void tool_cli_init(char **argv);
/* Prints "PROG: message" on stderr (one line). */
void tool_error(const char *prog, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints the line that follows a usage error: "Try 'PROG --help'." */
void tool_usage_hint(const char *prog);

/*
 * Option values. Each parses ARG, the value of option NAME (as the user
 * wrote it, e.g. "-c" or "--timeout"); on success stores *out and returns
 * true, otherwise prints one error line naming NAME, the accepted range and
 * ARG, and returns false (the caller prints tool_usage_hint and exits 2).
 */

/* A decimal integer in [min, max]; no sign, no suffix. */
bool tool_opt_u64(const char *prog, const char *name, const char *arg, uint64_t min, uint64_t max,
                  uint64_t *out);
/* Like tool_opt_u64, with an optional k/m/g suffix (x1024, x1024^2, x1024^3). */
bool tool_opt_size(const char *prog, const char *name, const char *arg, uint64_t min, uint64_t max,
                   uint64_t *out);
/* "MIN:MAX", both sizes (suffixes allowed) in [0, max], MIN <= MAX. */
bool tool_opt_size_range(const char *prog, const char *name, const char *arg, uint64_t max,
                         uint64_t *lo, uint64_t *hi);
/* A probability: "0.1" or "10%", in [0, 1]. */
bool tool_opt_probability(const char *prog, const char *name, const char *arg, double *out);

/* The parsers without the error line (for values that are part of a larger argument). */
bool tool_parse_u64(const char *text, uint64_t min, uint64_t max, bool allow_suffix, uint64_t *out);

#endif /* RDPS_TOOLS_CLI_H */
