/* SPDX-License-Identifier: BSD-2-Clause */
/* discovery_engine.h - sans-IO discovery: the bounded, source-keyed table of remote endpoints and
 * the schedule of our own announcements. */
#ifndef RDPS_PUBSUB_DISCOVERY_ENGINE_H
#define RDPS_PUBSUB_DISCOVERY_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "discovery.h"
#include "rdps_source.h"

/*
 * Model
 * -----
 * Local endpoints (our publishers and subscribers) are registered with
 * rdps__disc_local_add(); each is announced when added and every
 * announce_interval_ms after that (tick), and once with `leaving` when it is
 * removed. A topic with at least one local endpoint is a local topic.
 *
 * Remote endpoints (peers) learnt from announcements are keyed by
 * (source, session_id, role): the source is the datagram's sender as the
 * device saw it (struct rdps_source, compared exactly), so an announcement
 * from another host or QP can never touch a peer it did not create. A
 * `leaving` or an update only reaches the peer of the same key; a leaving
 * for a key that is not in the table is refused (counted), and a key that
 * announces another topic than its first is refused (counted). A NULL
 * source means "unknown" and is the all-zero source.
 *
 * The peer table is preallocated (max_peers entries, an open-addressing
 * index of twice that many slots, hashed with rdps__source_hash and a random
 * seed); a new peer never evicts an existing one: when the table is full it
 * is refused (counted). Peers of topics with no local endpoint (remote-only)
 * are kept only up to max_remote_only (the rest refused, counted), so a flood
 * of foreign topics leaves max_peers - max_remote_only entries for the peers
 * of our own topics. When a topic becomes local, its remote-only peers move
 * to it; when it stops being local, its peers go back to remote-only while
 * there is room and the rest are forgotten (counted, no event: the topic has
 * no local endpoint left to tell).
 *
 * Liveness: a peer lives LIVENESS_INTERVALS x its announced interval, the
 * interval clamped to [min_interval_ms, max_interval_ms] (clamps counted),
 * from its last announcement, or from the last time the caller heard it
 * otherwise (cfg.heard: a publisher's datagrams, a reliable subscriber's
 * STATUS): announcements are few and can all be lost on a receive queue
 * that overflowed, or while a host could not run, when the stream they
 * describe is flowing; a peer of a local topic is not declared gone while
 * its traffic is heard (counted peers_kept_alive).
 * Deadlines sit in a binary min-heap, so an announcement costs O(log n) and
 * tick expires only what is due; nothing walks the table per announcement.
 *
 * Per local topic the engine keeps the number of live remote publishers and
 * subscribers and of local ones, updated incrementally (O(1) queries).
 *
 * Receivers counted (the NAK backoff's receiver count, rdps__disc_counted_receivers): an
 * announcement costs one datagram from anyone, so reliable subscribers are counted by host, not
 * by announcement. A peer counts when it is a reliable subscriber whose first announcement named
 * the address it came from (body gid and qpn equal to the datagram's source; on InfiniBand
 * without a GRH, the qpn) and that announced again since (a one-shot announcement, however
 * long the interval it claims, counts nothing); each host (GID, or LID without a GRH) counts at
 * most RDPS_DISC_RECEIVERS_PER_HOST of its peers. So one forging host adds at most that many,
 * however many sessions, receiver ids or QPNs it announces; a host that announces a receiver
 * from its own address and keeps announcing it is indistinguishable from one (only the
 * publisher sees who shows progress). Tallies per (topic, host) are kept incrementally in a
 * table of 2 x max_peers slots.
 *
 * Events (on_event) are raised for peers of local topics only: SEEN when a
 * peer is admitted, GONE when it leaves or expires (not when it is forgotten
 * or moved), UPDATED when a known peer's announcement changes `unicast` (every
 * other field is kept as first announced). Refused announcements raise nothing. The callback may
 * add or remove local endpoints; it must not feed announcements or tick the same engine. Each
 * admitted peer gets the next serial number: a local endpoint added when the next serial was S
 * heard SEEN for the peers from S on, and rdps__disc_replay_next() gives it the live ones before S
 * (peers that joined the topic before it, or while the topic was remote-only and moved to it).
 *
 * Topic collisions: an announcement (not a leaving) whose topic_id is a local
 * topic's but whose name is another raises TOPIC_COLLISION (topic: the local
 * name, other_topic: the announced one) and counts it, whatever becomes of
 * the announcement in the peer table. It is raised once per (announcer's
 * source, other name) while that announcer keeps announcing it: a fixed table
 * of RDPS_DISC_COLLISION_SLOTS remembers what was reported until 3 of the
 * announcer's intervals pass without it; when every slot is live, the one
 * expiring first is reused, so a flood of forged colliding names (the
 * decoder admits only names whose id matches, but FNV is not collision
 * resistant) costs repeated events, never memory.
 *
 * Time: now_ns (monotonic) is passed in; no clock reads, no I/O, no
 * allocation on the announcement path (local topics and endpoints, which the
 * application creates, are allocated when added). Announcements go out
 * through the send callback as struct rdps_announce; the caller frames them.
 */

#define RDPS_DISC_LIVENESS_INTERVALS 3
#define RDPS_DISC_RETRY_NS \
    10000000ull /* announcing again after a refused send (group not joined) */

/* Defaults (the ctx uses these until rdps_config has fields for them). */
#define RDPS_DISCOVERY_DEFAULT_MAX_PEERS            4096
#define RDPS_DISCOVERY_DEFAULT_MAX_REMOTE_ONLY      64
#define RDPS_DISCOVERY_DEFAULT_MIN_INTERVAL_MS      10
#define RDPS_DISCOVERY_DEFAULT_MAX_INTERVAL_MS      60000
#define RDPS_DISCOVERY_DEFAULT_ANNOUNCE_INTERVAL_MS 1000

/* Reliable subscribers of one topic counted on one host (a machine running several receiving
 * contexts of a topic; more are taken for one host posing as many). */
#define RDPS_DISC_RECEIVERS_PER_HOST 4

/* Announcers' names remembered as collisions already reported. */
#define RDPS_DISC_COLLISION_SLOTS 32

enum rdps_disc_event_type {
    RDPS_DISC_PEER_SEEN = 1,
    RDPS_DISC_PEER_GONE = 2,
    RDPS_DISC_TOPIC_COLLISION = 3, /* an announced name has a local topic's id */
    RDPS_DISC_PEER_UPDATED = 4,    /* a known peer of a local topic now announces another
                                      `unicast` (a subscriber that fell back to unicast) */
};

struct rdps_disc_event {
    enum rdps_disc_event_type type;
    bool expired; /* GONE: silent for its liveness time (else: it left) */
    enum rdps_announce_role role;
    uint64_t topic_id;
    const char *topic; /* valid during the call */
    uint32_t session_id;
    uint32_t interval_ms; /* clamped */
    bool reliable;        /* publisher offers repair / subscriber wants it (first announcement) */
    uint32_t flow_tag;    /* reliable subscriber's group tag (first announcement) */
    uint32_t receiver_id; /* reliable subscriber's NAK/STATUS receiver id (first announcement) */
    struct rdps_source source;
    uint64_t serial;         /* the peer's admission number (rdps__disc_next_serial) */
    uint32_t slot;           /* its entry in the peer table (rdps__disc_replay_next's cursor) */
    const char *other_topic; /* TOPIC_COLLISION: the announced name (topic: the local one) */
    /* The first announcement named its datagram's own source (body qpn equal to the source's,
     * and body gid to its GID when the datagram had one; on InfiniBand without a GRH the QPN
     * alone): only such a peer speaks for that source (a reliable publisher lets only those
     * receivers into flow control; the NAK backoff counts only those). */
    bool addressed;
    /* A subscriber's latest announcement asks for copies by unicast (it may change: UPDATED). */
    bool unicast;
};

/* Sends one announcement; returns 0, or a negative code when it cannot go out now (retried). */
typedef int (*rdps_disc_send_fn)(void *user, const struct rdps_announce *a);
typedef void (*rdps_disc_event_fn)(void *user, const struct rdps_disc_event *ev);
/* The latest time (monotonic ns; 0: never) the caller heard `peer` (type SEEN: what the peer is)
 * otherwise than by its announcements. It must not add or remove local endpoints. */
typedef uint64_t (*rdps_disc_heard_fn)(void *user, const struct rdps_disc_event *peer);

struct rdps_disc_config {
    uint32_t max_peers;       /* remote endpoints tracked (>= 1) */
    uint32_t max_remote_only; /* of which peers of topics with no local endpoint (< max_peers) */
    uint32_t min_interval_ms; /* announced intervals are clamped to this range (>= 1) */
    uint32_t max_interval_ms; /* (>= min_interval_ms) */
    uint32_t announce_interval_ms; /* our own announce period (>= 1) */
    uint64_t hash_seed;            /* random per process */
    rdps_disc_send_fn send;        /* required */
    rdps_disc_event_fn on_event;   /* optional */
    rdps_disc_heard_fn heard;      /* optional: asked before a peer of a local topic expires */
    void *user;
};

struct rdps_disc_counters {
    uint64_t announces_in;     /* announcements given to rdps__disc_on_announce */
    uint64_t peers_added;      /* new peers admitted */
    uint64_t peers_updated;    /* announcements refreshing a known peer */
    uint64_t peers_left;       /* removed by their own `leaving` */
    uint64_t peers_expired;    /* removed after their liveness time */
    uint64_t peers_kept_alive; /* due to expire, kept: heard otherwise within liveness (heard) */
    uint64_t
        peers_forgotten; /* dropped when their topic stopped being local (no room as remote-only) */
    uint64_t refused_table_full;  /* new peer, table at max_peers */
    uint64_t refused_remote_only; /* new peer of a non-local topic, max_remote_only reached */
    uint64_t
        refused_unknown_leave; /* `leaving` for a key not in the table (other source, or gone) */
    uint64_t refused_topic_change; /* known key announcing another topic */
    uint64_t refused_bad_role;
    uint64_t intervals_clamped; /* announced interval outside [min, max] */
    uint64_t topic_collisions;  /* TOPIC_COLLISION events: (announcer, name) pairs reported */
    uint64_t announces_sent, announce_send_failures;
};

/* A peer as the table holds it (tests and tools). */
struct rdps_disc_peer_info {
    uint64_t topic_id;
    bool local_topic;
    uint32_t interval_ms; /* clamped */
    uint64_t deadline_ns; /* expires when now_ns reaches this */
};

struct rdps_disc_peer;
struct rdps_disc_topic;
struct rdps_disc_local;
struct rdps_disc_collision;
struct rdps_disc_tally;

/* Embedded by the caller; contents are private to discovery_engine.c. */
struct rdps_discovery {
    struct rdps_disc_config cfg;
    struct rdps_disc_counters counters;
    struct rdps_disc_peer *peers; /* max_peers entries */
    uint32_t *index;              /* peer index + 1, 0 = empty; open addressing, linear probing */
    uint32_t index_mask;
    uint32_t *heap; /* peer indices by deadline */
    uint32_t heap_len;
    int32_t peer_free;
    uint32_t peer_count;
    uint32_t remote_only_count;
    int32_t remote_only_head;               /* list of remote-only peers */
    char (*names)[RDPS_TOPIC_NAME_MAX + 1]; /* topic names of remote-only peers */
    int32_t *name_free;                     /* stack of free name slots */
    uint32_t name_free_len;
    struct rdps_disc_topic *topic_buckets[64]; /* local topics by id */
    uint32_t topic_count;
    struct rdps_disc_local *locals; /* local endpoints */
    uint32_t local_count, local_cap;
    uint64_t next_announce_ns;
    uint64_t next_serial;                   /* the next admitted peer's serial */
    struct rdps_disc_collision *collisions; /* RDPS_DISC_COLLISION_SLOTS reported collisions */
    struct rdps_disc_tally *tallies;        /* receivers counted per (topic, host) */
};

void rdps__disc_config_default(struct rdps_disc_config *cfg);
/* Allocates the tables; 0, RDPS_EINVAL (bad config) or RDPS_ENOMEM. */
int rdps__disc_init(struct rdps_discovery *d, const struct rdps_disc_config *cfg);
void rdps__disc_fini(struct rdps_discovery *d);

/*
 * Registers a local endpoint: `a` is its announcement (role, topic, topic_id,
 * session_id and the ctx's fields; announce_seq and leaving are managed
 * here). It is announced at the next tick (the deadline becomes now_ns).
 * 0 or RDPS_ENOMEM.
 */
int rdps__disc_local_add(struct rdps_discovery *d, const struct rdps_announce *a, uint64_t now_ns);
/*
 * Changes what a local endpoint announces about how it receives (`unicast`); announced at the
 * next tick (the deadline becomes now_ns). Nothing when it has no such endpoint.
 */
void rdps__disc_local_set_unicast(struct rdps_discovery *d, enum rdps_announce_role role,
                                  uint32_t session_id, bool unicast, uint64_t now_ns);
/* Calls fn with each local endpoint's current announcement (to send them to one new peer). */
void rdps__disc_for_each_local(const struct rdps_discovery *d,
                               void (*fn)(void *user, const struct rdps_announce *a), void *user);
/* Sends the endpoint's leaving announcement and forgets it. */
void rdps__disc_local_remove(struct rdps_discovery *d, enum rdps_announce_role role,
                             uint32_t session_id);

/* A decoded, validated announcement from `src` (NULL: unknown source). */
void rdps__disc_on_announce(struct rdps_discovery *d, const struct rdps_source *src,
                            const struct rdps_announce *a, uint64_t now_ns);
/* Sends due announcements, expires silent peers; returns the next deadline (UINT64_MAX: none). */
uint64_t rdps__disc_tick(struct rdps_discovery *d, uint64_t now_ns);
/* The next deadline without doing anything (O(1)). */
uint64_t rdps__disc_next_deadline(const struct rdps_discovery *d);

/* Live remote endpoints of `role` on local topic (id, name); 0 if the topic is not local. O(1). */
uint32_t rdps__disc_remote_count(const struct rdps_discovery *d, uint64_t topic_id,
                                 const char *topic, enum rdps_announce_role role);
/*
 * Calls fn for each live remote endpoint of `role` on local topic (id, name),
 * as a PEER_SEEN event (a publisher created after its subscribers announced
 * learns them this way). fn must not change the table.
 */
void rdps__disc_for_each_remote(const struct rdps_discovery *d, uint64_t topic_id,
                                const char *topic, enum rdps_announce_role role,
                                rdps_disc_event_fn fn, void *user);
/* The serial the next admitted peer gets (peers admitted so far have smaller ones). */
uint64_t rdps__disc_next_serial(const struct rdps_discovery *d);
/*
 * Replay: the next live remote endpoint of `role` on local topic (id, name) admitted before
 * serial `before`, at or after peer slot *cursor, as a PEER_SEEN event. Returns true with *ev
 * filled and *cursor past its slot, false when there is none left. Calling fn between calls may
 * change the table: a peer removed meanwhile is skipped, one admitted meanwhile is not before
 * `before`. O(max_peers) over a whole walk.
 */
bool rdps__disc_replay_next(const struct rdps_discovery *d, uint64_t topic_id, const char *topic,
                            enum rdps_announce_role role, uint64_t before, uint32_t *cursor,
                            struct rdps_disc_event *ev);
/* Live remote subscribers of local topic (id, name) that asked for reliability. O(1). */
uint32_t rdps__disc_remote_reliable_subscribers(const struct rdps_discovery *d, uint64_t topic_id,
                                                const char *topic);
/*
 * Remote reliable subscribers of local topic (id, name) counted as receivers (model: "Receivers
 * counted"): addressed, refreshed, at most RDPS_DISC_RECEIVERS_PER_HOST per host. O(1).
 */
uint32_t rdps__disc_counted_receivers(const struct rdps_discovery *d, uint64_t topic_id,
                                      const char *topic);
/* Local endpoints of `role` on topic (id, name). O(1). */
uint32_t rdps__disc_local_count(const struct rdps_discovery *d, uint64_t topic_id,
                                const char *topic, enum rdps_announce_role role);
uint32_t rdps__disc_peer_count(const struct rdps_discovery *d);
uint32_t rdps__disc_remote_only_count(const struct rdps_discovery *d);
/* Looks a peer up by its key; true and *out filled when present. */
bool rdps__disc_peer_find(const struct rdps_discovery *d, const struct rdps_source *src,
                          uint32_t session_id, enum rdps_announce_role role,
                          struct rdps_disc_peer_info *out);
const struct rdps_disc_counters *rdps__disc_counters(const struct rdps_discovery *d);
/* Bytes the engine holds (tables, local topics and endpoints). */
size_t rdps__disc_memory_bytes(const struct rdps_discovery *d);
/* Walks every structure and checks that they agree (tests, fuzzing): 0, or -1 with a reason. */
int rdps__disc_check(const struct rdps_discovery *d, const char **why);

#endif /* RDPS_PUBSUB_DISCOVERY_ENGINE_H */
