/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_stat.c - rdps-stat: live counters of every rdps process on the host (like AeronStat). */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rdps_clock.h"
#include "stat_print.h"
#include "stat_scan.h"
#include "tool_cli.h"

#define PROG "rdps-stat"

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

struct options {
    const char *dir;
    long pid;
    const char *topic;
    double watch_s; /* 0: one sample */
    uint64_t samples;
    bool json, prometheus, clean, all;
};

static void usage(FILE *out)
{
    fprintf(
        out,
        "Usage: " PROG " [--watch SECONDS [-c N]] [--json | --prometheus] [--pid N]\n"
        "                 [--topic NAME] [--all] [--clean] [--dir DIR]\n"
        "Shows the live counters every rdps context on this host publishes in shared memory\n"
        "(/dev/shm/rdps-PID-N.stat): the ctx's counters, bad frames by reason, and each\n"
        "publisher's and subscriber's own counters. Files of processes that died (or whose\n"
        "pid now belongs to another process) are shown as stale. Files are private (mode\n"
        "0600; a process started with RDPS_STAT_MODE=0640 or 0644 shares its counters): run\n"
        "as root to see every user's. A file is believed only when its owner is the process\n"
        "it names; others, and files larger than a context makes, are refused unread.\n"
        "\n"
        "  -w, --watch SECONDS  sample every SECONDS (e.g. 1, 0.5) until interrupted, with\n"
        "                       rates per second since the previous sample\n"
        "  -c, --count N        with --watch: stop after N samples (also -n, --samples)\n"
        "  -j, --json           one JSON line per sample\n"
        "      --prometheus     OpenMetrics text exposition of the live contexts (for the\n"
        "                       node-exporter textfile collector or a scrape), ending in # EOF\n"
        "  -p, --pid N          only process N\n"
        "  -t, --topic NAME     only contexts with an endpoint of topic NAME, and only those\n"
        "                       endpoints\n"
        "  -a, --all            also counters that are zero (table)\n"
        "      --clean          remove the stale files (after showing them)\n"
        "      --dir DIR        where the files are (default $RDPS_STAT_DIR, else /dev/shm)\n"
        "  -h, --help           this text\n"
        "      --version        the tool's and librdps's version and git revision\n"
        "\n"
        "Exit status: 0 ok; 1 --pid/--topic matched no context, or --clean could not\n"
        "remove a stale file; 2 bad arguments; 4 the directory cannot be read.\n");
}

enum { OPT_PROMETHEUS = 256, OPT_CLEAN, OPT_DIR };

static bool parse_seconds(const char *arg, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(arg, &end);
    if (errno != 0 || end == arg || *end != '\0' || !(v >= 0.01 && v <= 3600.0)) {
        tool_error(PROG, "--watch: '%s' is not a number of seconds in [0.01, 3600]", arg);
        return false;
    }
    *out = v;
    return true;
}

static bool parse_args(int argc, char **argv, struct options *opt)
{
    static const struct option longopts[] = {
        {"watch", required_argument, NULL, 'w'},
        {"count", required_argument, NULL, 'c'},
        {"samples", required_argument, NULL, 'n'}, /* 1.2's name of --count */
        {"json", no_argument, NULL, 'j'},
        {"prometheus", no_argument, NULL, OPT_PROMETHEUS},
        {"pid", required_argument, NULL, 'p'},
        {"topic", required_argument, NULL, 't'},
        {"all", no_argument, NULL, 'a'},
        {"clean", no_argument, NULL, OPT_CLEAN},
        {"dir", required_argument, NULL, OPT_DIR},
        {"help", no_argument, NULL, 'h'},
        TOOL_VERSION_LONG_OPTION,
        {NULL, 0, NULL, 0},
    };
    int c;
    uint64_t v;
    while ((c = getopt_long(argc, argv, "w:c:n:jp:t:ah", longopts, NULL)) != -1) {
        switch (c) {
        case 'w':
            if (!parse_seconds(optarg, &opt->watch_s))
                return false;
            break;
        case 'c':
        case 'n':
            if (!tool_opt_u64(PROG, c == 'c' ? "-c" : "-n", optarg, 1, UINT32_MAX, &opt->samples))
                return false;
            break;
        case 'j':
            opt->json = true;
            break;
        case OPT_PROMETHEUS:
            opt->prometheus = true;
            break;
        case 'p':
            if (!tool_opt_u64(PROG, "--pid", optarg, 1, 0x7fffffff, &v))
                return false;
            opt->pid = (long)v;
            break;
        case 't':
            opt->topic = optarg;
            break;
        case 'a':
            opt->all = true;
            break;
        case OPT_CLEAN:
            opt->clean = true;
            break;
        case OPT_DIR:
            opt->dir = optarg;
            break;
        case 'h':
            usage(stdout);
            exit(TOOL_EXIT_OK);
        case TOOL_OPT_VERSION:
            tool_version_exit(PROG);
        default: /* getopt printed the one-line error */
            return false;
        }
    }
    if (optind < argc) {
        tool_error(PROG, "unexpected argument '%s'", argv[optind]);
        return false;
    }
    if (opt->json && opt->prometheus) {
        tool_error(PROG, "--json and --prometheus exclude each other");
        return false;
    }
    if (opt->prometheus && opt->watch_s > 0) {
        tool_error(PROG, "--prometheus writes one exposition: scrape it again instead of --watch");
        return false;
    }
    if (opt->samples > 0 && opt->watch_s == 0) {
        tool_error(PROG, "-c (--count) needs --watch");
        return false;
    }
    if (opt->clean && opt->watch_s > 0) {
        tool_error(PROG, "--clean is for one sample, not with --watch");
        return false;
    }
    return true;
}

/* Does any context pass the filters? */
static bool any_match(const struct stat_scan *s, const struct options *opt)
{
    for (size_t i = 0; i < s->n; i++)
        if (stat_ctx_has_topic(&s->ctx[i], opt->topic))
            return true;
    return false;
}

static int clean(const struct stat_scan *s, const struct options *opt)
{
    int status = TOOL_EXIT_OK;
    unsigned removed = 0;
    for (size_t i = 0; i < s->n; i++) {
        const struct stat_ctx *c = &s->ctx[i];
        if (c->state != STAT_STALE || !stat_ctx_has_topic(c, opt->topic))
            continue;
        if (stat_remove(c) != 0) {
            tool_error(PROG, "cannot remove %s: %s", c->path, strerror(errno));
            status = TOOL_EXIT_FAILED;
        } else {
            removed++;
        }
    }
    /* On stderr: stdout stays one document (--json, --prometheus). */
    fprintf(stderr, PROG ": removed %u stale file%s\n", removed, removed == 1 ? "" : "s");
    return status;
}

static void sleep_s(double s)
{
    struct timespec ts = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};
    while (!stop_requested && nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

int main(int argc, char **argv)
{
    tool_cli_init(argv);
    struct options opt = {0};
    if (!parse_args(argc, argv, &opt)) {
        tool_usage_hint(PROG);
        return TOOL_EXIT_USAGE;
    }
    if (opt.dir == NULL)
        opt.dir = rdps__stat_dir();
    struct stat_print_opts po = {.dir = opt.dir, .topic = opt.topic, .all = opt.all};
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGPIPE, SIG_IGN);

    struct stat_scan prev = {0}, cur;
    bool have_prev = false, matched = false;
    int status = TOOL_EXIT_OK;
    for (uint64_t sample = 0; !stop_requested; sample++) {
        if (stat_scan_dir(opt.dir, opt.pid, &cur) != 0) {
            tool_error(PROG, "cannot read %s: %s", opt.dir, strerror(errno));
            status = TOOL_EXIT_RUNTIME;
            break;
        }
        matched |= any_match(&cur, &opt);
        const struct stat_scan *before = have_prev ? &prev : NULL;
        if (opt.prometheus)
            stat_print_openmetrics(stdout, &cur, &po);
        else if (opt.json)
            stat_print_json(stdout, &cur, before, &po);
        else
            stat_print_table(stdout, &cur, before, &po);
        if (opt.clean)
            status = clean(&cur, &opt);
        if (have_prev)
            stat_scan_free(&prev);
        prev = cur;
        have_prev = true;
        if (ferror(stdout)) {
            status = TOOL_EXIT_RUNTIME;
            break;
        }
        if (opt.watch_s == 0 || (opt.samples > 0 && sample + 1 >= opt.samples))
            break;
        sleep_s(opt.watch_s);
    }
    if (have_prev)
        stat_scan_free(&prev);
    if (status == TOOL_EXIT_OK && (opt.pid > 0 || opt.topic != NULL) && !matched) {
        if (opt.pid > 0)
            tool_error(PROG, "no rdps context of pid %ld%s%s in %s", opt.pid,
                       opt.topic ? " with topic " : "", opt.topic ? opt.topic : "", opt.dir);
        else
            tool_error(PROG, "no rdps context with topic %s in %s", opt.topic, opt.dir);
        status = TOOL_EXIT_FAILED;
    }
    return status;
}
