/* SPDX-License-Identifier: BSD-2-Clause */
/* rdsub.h - rdsub's options and run state, shared by its main loop and its JSON summary. */
#ifndef RDSUB_H
#define RDSUB_H

#include <stdbool.h>
#include <stdint.h>

#include <rdps/rdps.h>

#include "ctx_options.h"
#include "verify.h"

struct options {
    const char *topic;
    struct tool_ctx_options ctx;
    uint64_t count; /* 0: until interrupted or timeout */
    uint64_t timeout_s;
    uint64_t seed;
    uint64_t tag;      /* --tag: group tag for tagged flow control */
    uint64_t linger_s; /* --linger: seconds of receiving after -c N arrived */
    bool verify, json, quiet;
    bool reliable, from_oldest;
    bool count_loss; /* --count-loss: loss allowed, every message accounted for */
    bool history;    /* --history: from a recorder, then live (rdps_history_sub) */
    uint64_t history_timeout_s;
};

/* --history: where the merge stands (rdps_history_sub_poll's answers). */
enum history_state { HISTORY_MERGING, HISTORY_LIVE, HISTORY_TIMED_OUT, HISTORY_REFUSED };

struct state {
    const struct options *opt;
    uint64_t messages, bytes, fragments;
    uint64_t first_ns, last_ns;
    uint64_t loss_events, lost_seqs;    /* --reliable: RDPS_EVENT_LOSS */
    uint64_t gap_events, lost_messages; /* RDPS_EVENT_GAP; messages both kinds reported */
    struct verify verify;               /* --verify: per publisher session (verify.h) */
    enum history_state history;
    uint64_t start_ns, history_live_ns; /* --history: when every session was live (0: not yet) */
    uint64_t history_live_messages;     /* ... and the messages delivered by then */
};

/* Prints the one-line JSON summary of the run (rdsub_json.c). */
void rdsub_print_json(const struct state *st, const rdps_sub_t *sub, const rdps_counters *c,
                      uint64_t wall_ns);

#endif
