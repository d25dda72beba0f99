/* SPDX-License-Identifier: BSD-2-Clause */
/* verify.h - rdsub --verify's bookkeeping and verdict: per publisher session, which of the expected
 * pattern messages arrived, intact and once. */
#ifndef RDPS_TOOLS_VERIFY_H
#define RDPS_TOOLS_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdps/rdps.h>

/*
 * Model. `rdpub --pattern -c N` publishes messages 0..N-1 (pattern.h) in one
 * publisher session. A subscriber of the topic may also hear other sessions:
 * a second publisher, a restarted one, a stray one. Each received message is
 * attributed to its session - the sender's QP (rdps_source) and the session
 * id, compared exactly - and checked against the pattern; every tracked
 * session has a bitmap of the N expected indices, and counts what arrived,
 * what was new, duplicated, corrupt or out of range. Messages of one session
 * never count toward another's N.
 *
 * Verdict (verify_verdict): FAILED when any tracked message was corrupt,
 * duplicated or had an index >= N, or, in ordered mode (rdsub --reliable:
 * verify_set_ordered), when a message arrived after a higher index of its
 * session (out_of_order) or the library reported a loss in a tracked
 * session (verify_loss); else PASSED when one session delivered
 * all N; else NOTHING when no message arrived at all; else MISSING. A
 * session's `missing` is N minus what it delivered; its `holes` are the
 * indices below the highest one seen that never arrived (loss, not just a
 * late start or an early end).
 *
 * Bounds: at most VERIFY_MAX_SESSIONS sessions are tracked, each with an
 * N-bit bitmap allocated when the session first appears (nothing is
 * allocated per message); messages of further sessions, or of a session
 * whose bitmap could not be allocated, are only counted (`untracked`).
 * Pure logic: no clock, no I/O.
 */
#define VERIFY_MAX_SESSIONS 8
#define VERIFY_MAX_EXPECT   (1ull << 32) /* pattern messages carry a 32-bit index */

struct verify_session {
    rdps_source source;
    uint32_t session_id;
    uint8_t *seen;       /* bit i: message i arrived intact */
    uint64_t messages;   /* everything received from this session */
    uint64_t distinct;   /* expected indices that arrived intact */
    uint64_t duplicates; /* intact messages whose index had already arrived */
    uint64_t corrupt; /* not a pattern message of this seed (or no index near the expected one) */
    uint64_t out_of_range; /* intact, index >= N */
    uint64_t out_of_order; /* new, but below an index that already arrived */
    uint64_t loss_events;  /* RDPS_EVENT_LOSS for this session */
    uint64_t lost_seqs;    /* sequences those events gave up */
    uint64_t next_index;   /* highest index seen + 1 (0: none); the hint for pattern_check */
    uint64_t first_index;  /* lowest index that arrived intact (a late joiner's start) */
};

enum verify_result {
    VERIFY_MSG_NEW,          /* an expected index, first time */
    VERIFY_MSG_DUPLICATE,    /* its index already arrived */
    VERIFY_MSG_CORRUPT,      /* bytes do not match the pattern */
    VERIFY_MSG_OUT_OF_RANGE, /* intact, but its index is >= N */
    VERIFY_MSG_UNTRACKED,    /* a session beyond the cap: counted only */
};

enum verify_verdict {
    VERIFY_PASSED,  /* one session delivered all N; nothing corrupt, duplicated or out of range */
    VERIFY_FAILED,  /* corrupt, duplicate or out-of-range messages */
    VERIFY_MISSING, /* messages arrived, but no session delivered all N */
    VERIFY_NOTHING, /* no message arrived */
};

struct verify {
    uint64_t expect, seed;
    struct verify_session sessions[VERIFY_MAX_SESSIONS];
    unsigned nsessions;
    int last;     /* index of the previous message's session (-1): the usual case is one session */
    int complete; /* first session that delivered all N, or -1 */
    uint64_t messages;  /* every message given to verify_message */
    uint64_t untracked; /* messages of sessions that are not tracked */
    bool ordered;       /* out-of-order messages and loss events fail the verdict */
};

/* expect: N, 1..VERIFY_MAX_EXPECT; seed: the publisher's --seed. Returns 0, or -1 for a bad N. */
int verify_init(struct verify *v, uint64_t expect, uint64_t seed);
void verify_fini(struct verify *v);

/* Accounts one received message to the session (source, session_id). */
enum verify_result verify_message(struct verify *v, const rdps_source *source, uint32_t session_id,
                                  const void *data, size_t len);

/* Ordered mode: a reliable subscriber must see each session in order, with no loss event. */
void verify_set_ordered(struct verify *v, bool ordered);
/* Accounts an RDPS_EVENT_LOSS of `count` sequences to the session (source, session_id). */
void verify_loss(struct verify *v, const rdps_source *source, uint32_t session_id, uint64_t count);

/* True once some session delivered all N (the subscriber may stop). */
bool verify_complete(const struct verify *v);
enum verify_verdict verify_verdict(const struct verify *v);
const char *verify_verdict_name(enum verify_verdict verdict);

/*
 * The session a report is about: the complete one, else the one that
 * delivered most (the first on a tie), NULL when none is tracked.
 */
const struct verify_session *verify_reported(const struct verify *v);
uint64_t verify_session_missing(const struct verify *v, const struct verify_session *s);
uint64_t verify_session_holes(const struct verify_session *s);

/* Sums over all tracked sessions (messages, distinct, duplicates, corrupt, out_of_range,
 * out_of_order, loss_events, lost_seqs). */
void verify_totals(const struct verify *v, struct verify_session *sum);

#endif /* RDPS_TOOLS_VERIFY_H */
