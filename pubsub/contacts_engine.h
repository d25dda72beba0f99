/* SPDX-License-Identifier: BSD-2-Clause */
/* contacts_engine.h - sans-IO unicast discovery: the bounded, source-keyed table of the peers a
 * ctx talks to by unicast (seeds, peers heard directly, peers others named), and the schedule
 * and content of its peer lists. */
#ifndef RDPS_PUBSUB_CONTACTS_ENGINE_H
#define RDPS_PUBSUB_CONTACTS_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "contacts.h"
#include "rdps_source.h"

/*
 * Model
 * -----
 * Where a fabric has no multicast, discovery's announcements go by unicast to a set of peers
 * (contexts, each one UD QP): its contacts. A contact is one of
 *
 *   SEED    a configured peer (rdps_config.peers) once its address resolved: always talked to,
 *           never expires, outside every cap (at most RDPS_MAX_SEEDS);
 *   DIRECT  a peer that sent us a peer list (Contacts) from the very source the list names as
 *           its sender: it speaks for itself. Lives 3 of its announced intervals (clamped to
 *           [min_interval_ms, max_interval_ms]) past its last list; a `leaving` list removes it;
 *   PROBE   a peer another contact named in its list and that never spoke to us: we send it our
 *           list (one datagram, never our announcements) at each of probe_rounds intervals and
 *           forget it if it does not answer from its own source, which makes it DIRECT.
 *
 * Every interval each SEED, DIRECT and PROBE contact gets one peer list (send callback): our own
 * QP and up to RDPS_CONTACTS_PER_MESSAGE contacts we heard directly (DIRECT, and SEEDs heard
 * within their liveness), never PROBEs (an address nobody vouched for is not passed on), taken
 * from a cursor that moves through the table round by round, so a ctx that knows one live peer
 * learns of every peer that one heard within a few intervals. Announcements of local endpoints
 * go to SEED and DIRECT contacts (rdps__contacts_for_each_target); the caller sends them.
 *
 * Hostile input. Contacts are keyed by the exact source (rdps_source), looked up through an
 * open-addressing index hashed with a random seed. A list whose sender is not the datagram's
 * source is counted and dropped whole, so nobody adds, refreshes or removes a contact in
 * another's name, and nobody's list is passed on unless it came from its own address. Caps:
 * max_contacts DIRECT and PROBE entries together, per_host of them on one host (GID, or LID
 * without a GRH: a QPN is the sender's choice); PROBEs: max_probes at once, probes_per_interval
 * new ones per interval, per_introducer of them named by one host. A peer that speaks for itself
 * (a new DIRECT) is refused only when nobody can make room: at the cap it displaces, in this
 * order, an unconfirmed PROBE, a stale DIRECT (not heard within its last interval), then the
 * least recently heard DIRECT of the host holding the most contacts if that host holds more
 * than the newcomer's would (fair shares: a host with many QPs and GIDs cannot shut newcomers
 * out); at its host's cap, a PROBE or stale DIRECT of its own host. A PROBE never displaces. So
 * what a peer list can make this ctx send is bounded: at most max_probes destinations it names,
 * each at most probe_rounds datagrams, at most probes_per_interval x probe_rounds datagrams per
 * interval from all lists together; a forger that forges sources can make itself DIRECT (as it can
 * make itself a discovery peer) and receive our lists and announcements for 3 of its intervals,
 * within max_contacts and per_host.
 *
 * Time: now_ns (monotonic) is passed in; no clock reads, no I/O, no allocation after init.
 */

enum rdps_contact_kind {
    RDPS_CONTACT_FREE = 0,
    RDPS_CONTACT_SEED = 1,
    RDPS_CONTACT_DIRECT = 2,
    RDPS_CONTACT_PROBE = 3,
};

struct rdps_contact {
    struct rdps_source source; /* key: the peer as its datagrams show it */
    uint8_t kind;              /* enum rdps_contact_kind */
    bool heard;                /* SEED: a list from it within its liveness; DIRECT: always */
    uint8_t probes_left;       /* PROBE: lists still to send it */
    uint16_t seed;             /* SEED: its index in rdps_config.peers */
    uint32_t hash;
    uint32_t interval_ms;          /* clamped, as it announced it (ours until it did) */
    uint64_t deadline_ns;          /* DIRECT: expires; SEED: `heard` ends */
    struct rdps_source introducer; /* PROBE: the host that named it */
    const void *dest;              /* the caller's: where to send it (set in on_change) */
};

/* Sends one peer list to contact `to`; 0, or a negative code when it cannot go now. */
typedef int (*rdps_contacts_send_fn)(void *user, struct rdps_contact *to,
                                     const struct rdps_contacts_msg *m);
/* A contact was added (set c->dest) or is about to be removed (release c->dest). */
typedef void (*rdps_contacts_change_fn)(void *user, struct rdps_contact *c, bool added);

struct rdps_contacts_config {
    uint32_t max_contacts;        /* DIRECT + PROBE entries (>= 1) */
    uint32_t per_host;            /* of them on one host (>= 1) */
    uint32_t max_probes;          /* PROBE entries at once (<= max_contacts) */
    uint32_t probes_per_interval; /* new PROBE entries per interval */
    uint32_t per_introducer;      /* PROBE entries one host may have named */
    uint32_t probe_rounds;        /* lists a PROBE gets before it is forgotten (1..255) */
    uint32_t interval_ms;         /* our own list interval (>= 1) */
    uint32_t min_interval_ms;     /* a contact's announced interval is clamped to this range */
    uint32_t max_interval_ms;
    uint64_t hash_seed;
    /* Our own QP, as the lists we send name it. */
    uint8_t self_gid[16];
    uint16_t self_lid;
    uint32_t self_qpn;
    uint32_t self_host;
    uint16_t self_cm_port;
    rdps_contacts_send_fn send;
    rdps_contacts_change_fn on_change; /* optional */
    void *user;
};

struct rdps_contacts_counters {
    uint64_t lists_in;          /* peer lists given to rdps__contacts_on_list */
    uint64_t forged;            /* lists whose sender was not the datagram's source */
    uint64_t added_direct;      /* new DIRECT contacts (PROBEs that answered included) */
    uint64_t added_probes;      /* PROBEs created from others' lists */
    uint64_t refused_full;      /* new DIRECT or PROBE refused: max_contacts reached */
    uint64_t displaced;         /* contacts removed to make room for a new DIRECT */
    uint64_t refused_host;      /* ... per_host reached */
    uint64_t refused_probe;     /* PROBE refused: max_probes, the interval's budget or its
                                   introducer's share spent */
    uint64_t expired;           /* DIRECT contacts silent past their liveness */
    uint64_t left;              /* DIRECT contacts removed by their own `leaving` list */
    uint64_t probes_unanswered; /* PROBEs forgotten after probe_rounds lists */
    uint64_t lists_sent, send_failures;
};

/* One host's contacts, counted when room must be made (contacts_engine.c). */
struct rdps_contacts_tally {
    struct rdps_source host;
    uint32_t count;
    int32_t oldest;        /* its least recently heard DIRECT */
    uint64_t oldest_heard; /* when that one was last heard */
};

/* Embedded by the caller; contents are private to contacts_engine.c except through the calls. */
struct rdps_contacts {
    struct rdps_contacts_config cfg;
    struct rdps_contacts_counters counters;
    struct rdps_contact *entries; /* max_contacts + RDPS_MAX_SEEDS */
    uint32_t capacity;
    uint32_t *index; /* entry + 1, 0 = empty; open addressing, linear probing */
    uint32_t index_mask;
    struct rdps_contacts_tally *tally; /* index_mask + 1 slots: contacts per host, to displace */
    uint32_t used;                     /* DIRECT + PROBE entries */
    uint32_t probes;                   /* PROBE entries */
    uint32_t probes_this_round;        /* PROBEs created since the last round */
    uint32_t cursor;                   /* where the next round's peer list starts */
    uint64_t next_round_ns;
    bool started; /* a first round was scheduled */
};

void rdps__contacts_config_default(struct rdps_contacts_config *cfg);
/* Allocates the tables; 0, RDPS_EINVAL (bad config) or RDPS_ENOMEM. */
int rdps__contacts_init(struct rdps_contacts *c, const struct rdps_contacts_config *cfg);
/* Calls on_change(removed) for every contact left, then frees. */
void rdps__contacts_fini(struct rdps_contacts *c);

/*
 * Seed `seed` resolved to `src`: it becomes a SEED contact (an entry of that source of another
 * kind is turned into it), talked to from the next round on, which is now. A seed that resolved
 * before to another source is moved. 0, or RDPS_EINVAL (seed index, our own source).
 */
int rdps__contacts_seed_set(struct rdps_contacts *c, uint16_t seed, const struct rdps_source *src,
                            uint64_t now_ns);
/* Seed `seed` is no longer resolved (its address is being resolved again): forgotten. */
void rdps__contacts_seed_clear(struct rdps_contacts *c, uint16_t seed);
/* The SEED contact of seed `seed`, NULL when it has none. */
const struct rdps_contact *rdps__contacts_seed(const struct rdps_contacts *c, uint16_t seed);

/* A decoded peer list that came from `src` (model: forged lists are counted and dropped). */
void rdps__contacts_on_list(struct rdps_contacts *c, const struct rdps_source *src,
                            const struct rdps_contacts_msg *m, uint64_t now_ns);
/* Sends the round's lists when due, expires silent contacts and unanswered probes; returns the
 * next deadline (UINT64_MAX: nothing to do). */
uint64_t rdps__contacts_tick(struct rdps_contacts *c, uint64_t now_ns);
uint64_t rdps__contacts_next_deadline(const struct rdps_contacts *c);
/* Sends a `leaving` list to every SEED and DIRECT contact (the ctx is being destroyed). */
void rdps__contacts_leave(struct rdps_contacts *c);

/* Calls fn for each SEED and DIRECT contact (where announcements go). fn must not change it. */
void rdps__contacts_for_each_target(const struct rdps_contacts *c,
                                    void (*fn)(void *user, const struct rdps_contact *contact),
                                    void *user);
/* SEED + DIRECT contacts; DIRECT + PROBE entries (what the caps count); PROBEs. */
uint32_t rdps__contacts_targets(const struct rdps_contacts *c);
uint32_t rdps__contacts_used(const struct rdps_contacts *c);
uint32_t rdps__contacts_probes(const struct rdps_contacts *c);
/* The contact of `src`, or NULL. */
const struct rdps_contact *rdps__contacts_find(const struct rdps_contacts *c,
                                               const struct rdps_source *src);
const struct rdps_contacts_counters *rdps__contacts_counters(const struct rdps_contacts *c);
/* Walks every structure and checks that they agree (tests, fuzzing): 0, or -1 with a reason. */
int rdps__contacts_check(const struct rdps_contacts *c, const char **why);

#endif /* RDPS_PUBSUB_CONTACTS_ENGINE_H */
