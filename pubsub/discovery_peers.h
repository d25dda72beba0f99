/* SPDX-License-Identifier: BSD-2-Clause */
/* discovery_peers.h - the discovery engine's tables (discovery_peers.c), shared by the engine
 * (discovery_engine.c) and its queries (discovery_queries.c); private to those three files. */
#ifndef RDPS_PUBSUB_DISCOVERY_PEERS_H
#define RDPS_PUBSUB_DISCOVERY_PEERS_H

#include "discovery_engine.h"

#define NONE (-1)

struct rdps_disc_peer {
    struct rdps_source source;
    uint32_t session_id;
    uint64_t topic_id;
    uint32_t hash;
    uint32_t interval_ms;
    uint64_t deadline_ns;
    uint32_t heap_pos;
    uint8_t role;                  /* 0: free */
    bool reliable;                 /* as first announced */
    uint32_t flow_tag;             /* as first announced */
    uint32_t receiver_id;          /* as first announced */
    bool addressed;                /* first announcement's body gid/qpn were its sender's */
    bool refreshed;                /* announced again after its first announcement */
    bool unicast;                  /* as last announced */
    uint64_t serial;               /* admission number */
    int32_t name_slot;             /* remote-only: its topic name in d->names, else NONE */
    struct rdps_disc_topic *topic; /* local topic, or NULL: remote-only */
    int32_t prev, next;            /* in topic->peers or d->remote_only_head; next: free list */
};

struct rdps_disc_topic {
    struct rdps_disc_topic *next; /* bucket chain */
    uint64_t id;
    uint32_t local[3];             /* local endpoints by role (index 1, 2) */
    uint32_t remote[3];            /* live peers by role */
    uint32_t remote_reliable_subs; /* of the subscribers, those that asked for reliability */
    uint32_t counted_receivers;    /* sum over hosts of min(RECEIVERS_PER_HOST, its tally) */
    int32_t peers;                 /* list head */
    char name[RDPS_TOPIC_NAME_MAX + 1];
};

struct rdps_disc_local {
    struct rdps_announce ann;
    struct rdps_disc_topic *topic;
};

/* The receivers counted on one host for one local topic (rdps__disc_counted_receivers). */
struct rdps_disc_tally {
    const struct rdps_disc_topic *topic; /* NULL: free slot */
    struct rdps_source host;             /* rdps__source_host() */
    uint32_t hash;
    uint32_t count; /* counted peers of the topic on the host */
};

/* A TOPIC_COLLISION already reported: `name`, announced by `source`, until deadline_ns. */
struct rdps_disc_collision {
    struct rdps_source source;
    uint64_t deadline_ns; /* free (or expired) once now_ns reaches it; 0: never used */
    char name[RDPS_TOPIC_NAME_MAX + 1];
};

/* The bucket chain of local topics where id belongs. */
struct rdps_disc_topic **rdps__disc_topic_bucket(struct rdps_discovery *d, uint64_t id);

/* The local topic (id, name), or NULL. */
struct rdps_disc_topic *rdps__disc_topic_find(const struct rdps_discovery *d, uint64_t id,
                                              const char *name);

/* A peer's hash: its key (source, session, role) under the table's random seed. */
uint32_t rdps__disc_key_hash(const struct rdps_discovery *d, const struct rdps_source *src,
                             uint32_t session_id, uint8_t role);

/* The peer of that key and hash in the index (open addressing), or NONE. */
int32_t rdps__disc_index_lookup(const struct rdps_discovery *d, const struct rdps_source *src,
                                uint32_t session_id, uint8_t role, uint32_t hash);

/* Adds peer (its hash set) to the index. */
void rdps__disc_index_insert(struct rdps_discovery *d, int32_t peer);

/* The hash of (local topic t, host) in the tallies of receivers counted per host. */
uint32_t rdps__disc_tally_hash(const struct rdps_discovery *d, const struct rdps_disc_topic *t,
                               const struct rdps_source *host);

/* The slot of (t, host): its tally, or the free slot where it would go. */
uint32_t rdps__disc_tally_slot(const struct rdps_discovery *d, const struct rdps_disc_topic *t,
                               const struct rdps_source *host, uint32_t hash);

/* A counted peer of topic t on the host of `src` came (delta 1) or went (delta -1). */
void rdps__disc_tally_change(struct rdps_discovery *d, struct rdps_disc_topic *t,
                             const struct rdps_source *src, int delta);

/*
 * Whether peer p counts as a receiver of its topic for the NAK backoff: a reliable subscriber
 * whose announcement named the address it came from, and that announced again since (one
 * datagram, sent once, counts nothing).
 */
bool rdps__disc_peer_counted(const struct rdps_disc_peer *p);

/* The expiry heap (earliest deadline first): restores its order after the deadline of the peer
 * at pos moved earlier (up) or later (down). */
void rdps__disc_heap_up(struct rdps_discovery *d, uint32_t pos);
void rdps__disc_heap_down(struct rdps_discovery *d, uint32_t pos);

/* Puts peer i under topic t (local) or, with t == NULL, among the remote-only peers named `name`.
 */
void rdps__disc_peer_attach(struct rdps_discovery *d, int32_t i, struct rdps_disc_topic *t,
                            const char *name);

/* Takes peer i out of its topic's list (or the remote-only ones) and out of their counts. */
void rdps__disc_peer_detach(struct rdps_discovery *d, int32_t i);

/* Peer p's topic name: its local topic's, or its remote-only name slot's. */
const char *rdps__disc_peer_topic_name(const struct rdps_discovery *d,
                                       const struct rdps_disc_peer *p);

/* The event telling what peer p is (topic: its name, valid during the call). */
struct rdps_disc_event rdps__disc_peer_event(const struct rdps_discovery *d,
                                             const struct rdps_disc_peer *p,
                                             enum rdps_disc_event_type type, const char *topic);

/* Removes peer i from every structure; fills *ev (GONE) first when its topic is local. */
bool rdps__disc_peer_remove(struct rdps_discovery *d, int32_t i, struct rdps_disc_event *ev,
                            char *name_buf);

#endif
