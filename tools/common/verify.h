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
 * Loss accounting (verify_set_count_loss, rdsub --count-loss): loss is allowed, but every
 * message must be accounted for exactly. Each message carries its ordinal (rdps_msg_info); a
 * session's first intact message fixes the ordinal of message 0 (ordinal - index), and every later
 * one must agree (bad_ordinal). GAP and LOSS events name the messages they report
 * [first_ordinal, first_ordinal + msg_count): each must be one of 0..N-1 (lost_out_of_range),
 * never delivered before or after (lost_delivered) and reported once (lost_twice); events that
 * come before the first message wait (up to VERIFY_PENDING of them). The session is complete
 * when what arrived and what was reported lost are N together, less the messages before the
 * first one the subscriber could know of (before_start: an unreliable subscriber learns of a
 * session from its first datagram, so what was lost before that is nobody's to report: below
 * the lowest index that arrived or was reported lost); any of the three faults, or a bad
 * ordinal, fails the verdict. Without it, ordered mode fails on any loss event as above.
 *
 * Bounds: at most VERIFY_MAX_SESSIONS sessions are tracked, each with an
 * N-bit bitmap allocated when the session first appears (nothing is
 * allocated per message); messages of further sessions, or of a session
 * whose bitmap could not be allocated, are only counted (`untracked`).
 * Pure logic: no clock, no I/O.
 */
#define VERIFY_MAX_SESSIONS 8
#define VERIFY_MAX_EXPECT   (1ull << 32) /* pattern messages carry a 32-bit index */
#define VERIFY_PENDING      64           /* loss events held until the ordinal base is known */

struct verify_session {
    rdps_source source;
    uint32_t session_id;
    uint8_t *seen;       /* bit i: message i arrived intact */
    uint64_t messages;   /* everything received from this session */
    uint64_t distinct;   /* expected indices that arrived intact */
    uint64_t duplicates; /* intact messages whose index had already arrived */
    uint64_t corrupt; /* not a pattern message of this seed (or no index near the expected one) */
    uint64_t out_of_range;  /* intact, index >= N */
    uint64_t out_of_order;  /* new, but below an index that already arrived */
    uint64_t loss_events;   /* RDPS_EVENT_LOSS for this session */
    uint64_t lost_seqs;     /* sequences those events gave up */
    uint64_t gap_events;    /* RDPS_EVENT_GAP for this session */
    uint64_t next_index;    /* highest index seen + 1 (0: none); the hint for pattern_check */
    uint64_t first_index;   /* lowest index that arrived intact (a late joiner's start) */
    uint64_t lost_messages; /* messages the session's GAP and LOSS events reported */
    /* Loss accounting (see the model). */
    uint8_t *reported;          /* bit i: message i reported lost */
    bool has_base;              /* ordinal_base is known */
    uint32_t ordinal_base;      /* the ordinal of message 0 */
    uint64_t reported_lost;     /* distinct indices reported lost */
    uint64_t lowest_reported;   /* the lowest index reported lost (reported_lost > 0) */
    uint64_t bad_ordinal;       /* intact messages whose ordinal is not base + index */
    uint64_t lost_delivered;    /* reported lost, yet delivered (before or after the report) */
    uint64_t lost_twice;        /* reported lost again */
    uint64_t lost_out_of_range; /* reported lost, not one of 0..N-1 */
    uint64_t pending_dropped;   /* events beyond VERIFY_PENDING before the base was known */
    unsigned npending;
    struct {
        uint32_t first, count;
    } pending[VERIFY_PENDING];
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
    bool count_loss;    /* loss accounting (see the model) */
};

/* expect: N, 1..VERIFY_MAX_EXPECT; seed: the publisher's --seed. Returns 0, or -1 for a bad N. */
int verify_init(struct verify *v, uint64_t expect, uint64_t seed);
void verify_fini(struct verify *v);

/* Accounts one received message (its ordinal, rdps_msg_info) to the session (source,
 * session_id). */
enum verify_result verify_message(struct verify *v, const rdps_source *source, uint32_t session_id,
                                  uint32_t ordinal, const void *data, size_t len);

/* Ordered mode: a reliable subscriber must see each session in order, with no loss event. */
void verify_set_ordered(struct verify *v, bool ordered);
/* Loss accounting (see the model); before any message. */
void verify_set_count_loss(struct verify *v, bool count_loss);
/* Accounts an RDPS_EVENT_LOSS or RDPS_EVENT_GAP of `seqs` sequences and messages
 * [first_ordinal, first_ordinal + msg_count) to the session (source, session_id). `is_loss`: a
 * LOSS event (ordered mode fails on it unless loss is counted). */
void verify_loss(struct verify *v, const rdps_source *source, uint32_t session_id, bool is_loss,
                 uint64_t seqs, uint32_t first_ordinal, uint32_t msg_count);
/* Messages of session s neither delivered nor reported lost (loss accounting: from its start). */
uint64_t verify_session_unaccounted(const struct verify *v, const struct verify_session *s);
/* Loss accounting: messages before the first one session s could know of (see the model). */
uint64_t verify_session_before_start(const struct verify *v, const struct verify_session *s);

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
