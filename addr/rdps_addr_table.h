/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_addr_table.h - pure bookkeeping for resolved peers and joined groups: keys, refcounts,
 * state, deadlines. */
#ifndef RDPS_ADDR_TABLE_H
#define RDPS_ADDR_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/*
 * Neither rdma_cm nor verbs appear here: addr_obj.c embeds a struct
 * rdps_addr_entry at the start of its peer and group objects and drives the
 * state from CM events, so keying, reference counting, invalidation and
 * timeouts are unit-testable without a device.
 */

/* A normalized IPv4/IPv6 address + port (+ join mode for groups); padding is zeroed. */
struct rdps_addr_key {
    struct sockaddr_storage addr;
    int mode; /* 0 for unicast peers, enum rdps_join_mode for groups */
};

enum rdps_addr_entry_state {
    RDPS_ENTRY_PENDING = 0,
    RDPS_ENTRY_READY = 1,
    RDPS_ENTRY_FAILED = 2,
};

struct rdps_addr_entry {
    struct rdps_addr_entry *next;
    struct rdps_addr_key key;
    unsigned refcount;
    enum rdps_addr_entry_state state;
    int error;              /* negative rdps code while FAILED */
    char error_text[160];   /* why it failed, for rdps_last_error_message */
    uint64_t deadline_ms;   /* PENDING entries fail with RDPS_ETIMEDOUT after this */
    uint32_t generation;    /* bumped by every (re)start: stale CM events are recognized */
    uint64_t starts;        /* resolves or joins started, including restarts */
    uint64_t invalidations; /* ADDR_CHANGE / MULTICAST_ERROR restarts */
};

struct rdps_addr_table {
    struct rdps_addr_entry *head;
    size_t count;
};

/*
 * Builds a key from an IPv4/IPv6 sockaddr; a zero port becomes default_port.
 * Returns 0, or RDPS_EINVAL (with a message) for NULL or other families.
 */
int rdps__addr_key_init(struct rdps_addr_key *key, const struct sockaddr *sa, uint16_t default_port,
                        int mode);
bool rdps__addr_key_equal(const struct rdps_addr_key *a, const struct rdps_addr_key *b);
/* Size of the sockaddr inside the key (sizeof sockaddr_in or sockaddr_in6). */
socklen_t rdps__addr_key_len(const struct rdps_addr_key *key);
/* "192.0.2.1:7471" or "[fe80::1]:7471"; returns buf. */
const char *rdps__addr_key_format(const struct rdps_addr_key *key, char *buf, size_t len);
/* Formats any IPv4/IPv6 sockaddr the same way (port omitted when 0). */
const char *rdps__sockaddr_format(const struct sockaddr *sa, char *buf, size_t len);

void rdps__addr_table_init(struct rdps_addr_table *t);
struct rdps_addr_entry *rdps__addr_table_find(const struct rdps_addr_table *t,
                                              const struct rdps_addr_key *key);
/*
 * Takes a reference on the entry for `key`, or inserts `fresh` (refcount 1,
 * PENDING) when there is none. Returns the entry and sets *must_start when the
 * caller has to (re)start resolution: for a fresh entry, and for an existing
 * entry that had FAILED (it is reset to PENDING so a retry really retries).
 * `fresh` is left untouched when an existing entry is returned.
 */
struct rdps_addr_entry *rdps__addr_table_acquire(struct rdps_addr_table *t,
                                                 const struct rdps_addr_key *key,
                                                 struct rdps_addr_entry *fresh, bool *must_start);
/* Drops a reference; on the last one unlinks the entry and returns true (caller frees it). */
bool rdps__addr_table_release(struct rdps_addr_table *t, struct rdps_addr_entry *e);

/* Marks the entry PENDING for a new attempt ending at deadline_ms; returns the new generation. */
uint32_t rdps__addr_entry_start(struct rdps_addr_entry *e, uint64_t deadline_ms);
void rdps__addr_entry_set_ready(struct rdps_addr_entry *e);
/* Records the failure (first one wins while PENDING) with a formatted reason. */
void rdps__addr_entry_set_failed(struct rdps_addr_entry *e, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* ADDR_CHANGE / MULTICAST_ERROR: counts it and restarts (PENDING, new generation). */
uint32_t rdps__addr_entry_invalidate(struct rdps_addr_entry *e, uint64_t deadline_ms);
/* Fails a PENDING entry whose deadline passed; returns true when it just timed out. */
bool rdps__addr_entry_check_deadline(struct rdps_addr_entry *e, uint64_t now_ms);
/*
 * 0 pending, 1 ready, or the negative error of a failed entry (its reason is
 * copied to rdps_last_error_message).
 */
int rdps__addr_entry_state(const struct rdps_addr_entry *e);

/*
 * What to do with a CM event, decided from the entry's state alone so the
 * state machine is testable without rdma_cm. addr_peer.c and addr_group.c
 * map rdma_cm events onto these kinds and carry the actions out.
 */
enum rdps_addr_event_kind {
    RDPS_ADDR_EV_ADDR_RESOLVED,
    RDPS_ADDR_EV_ROUTE_RESOLVED,
    RDPS_ADDR_EV_ESTABLISHED, /* SIDR reply: AH attributes, QPN, Q_Key */
    RDPS_ADDR_EV_ERROR,       /* ADDR_ERROR, ROUTE_ERROR, UNREACHABLE, REJECTED */
    RDPS_ADDR_EV_ADDR_CHANGE,
    RDPS_ADDR_EV_DEVICE_REMOVAL,
    RDPS_ADDR_EV_MC_JOIN,
    RDPS_ADDR_EV_MC_ERROR,
    RDPS_ADDR_EV_OTHER,
};

enum rdps_addr_action {
    RDPS_ADDR_ACT_IGNORE,        /* late or irrelevant: the event changes nothing */
    RDPS_ADDR_ACT_NEXT_STEP,     /* resolve the route / send the SIDR request */
    RDPS_ADDR_ACT_READY,         /* create the AH (attach the QP for FULL joins) */
    RDPS_ADDR_ACT_FAIL,          /* the attempt failed: record why */
    RDPS_ADDR_ACT_RESTART,       /* invalidate (counted) and resolve / join again */
    RDPS_ADDR_ACT_FALLBACK_FULL, /* send-only refused: join again as a full member */
};

enum rdps_addr_action rdps__addr_peer_action(const struct rdps_addr_entry *e,
                                             enum rdps_addr_event_kind ev);
/* `send_only_pending_fallback`: a SEND_ONLY join that has not fallen back yet. */
enum rdps_addr_action rdps__addr_group_action(const struct rdps_addr_entry *e,
                                              bool send_only_pending_fallback,
                                              enum rdps_addr_event_kind ev);

#endif /* RDPS_ADDR_TABLE_H */
