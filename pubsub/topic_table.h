/* SPDX-License-Identifier: BSD-2-Clause */
/* topic_table.h - the ctx's topics: one entry per topic id with its local endpoints and groups. */
#ifndef RDPS_PUBSUB_TOPIC_TABLE_H
#define RDPS_PUBSUB_TOPIC_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include <rdps/rdps.h>

#include "topic.h"

struct rdps_dest;
struct rdps_sub;
struct rdps_fanout;

/*
 * A topic exists while a local publisher or subscriber uses it, or while an
 * explicit mapping (rdps_ctx_map_topic) keeps it. Only local API calls create
 * topics, never received frames, so the table grows with the application,
 * not with the fabric. Lookup by id is a hash over a fixed bucket array; two
 * names with the same id are refused at creation (EEXIST).
 */
struct rdps_topic {
    struct rdps_topic *next; /* hash chain */
    char name[RDPS_TOPIC_NAME_MAX + 1];
    uint64_t id;              /* rdps__topic_hash_id(name) */
    uint32_t group;           /* host-order IPv4 multicast group */
    struct rdps_sub *subs;    /* local subscribers (closed ones stay linked until reaped) */
    unsigned live_subs;       /* subscribers not closed */
    unsigned reliable_subs;   /* of which asked for reliable delivery (closed ones until freed) */
    unsigned oldest_subs;     /* of which asked to join from the oldest retained sequence */
    unsigned pubs;            /* local publishers */
    bool mapped;              /* rdps_ctx_map_topic: kept without endpoints */
    void *receive_membership; /* full join while subs != NULL (and the side uses the group) */
    void *send_membership;    /* send-only join while pubs > 0 (and the side uses the group) */
    const struct rdps_dest *send_dest;
    /*
     * How the datagrams travel, per side (unicast.c): the mode its endpoints asked for
     * (rdps_transport_mode) and where it is (enum rdps_topic_path). Publishers send each datagram
     * to dests[0..ndests): the group while they use it, and the unicast subscribers (fanout);
     * ndests_unicast of them are unicast copies. send_ready: publishers may send.
     */
    uint8_t send_mode, send_path, recv_mode, recv_path;
    bool send_ready;
    uint32_t ndests, ndests_unicast;
    const struct rdps_dest *const *dests;
    struct rdps_fanout *fanout;            /* while pubs > 0 */
    uint64_t send_since_ns, recv_since_ns; /* auto: when the side's join started */
};

/* Where one side of a topic is (rdps_topic.send_path, recv_path). */
enum rdps_topic_path {
    RDPS_PATH_NONE = 0,    /* no endpoint on this side */
    RDPS_PATH_JOINING = 1, /* multicast or auto: the join has not completed */
    RDPS_PATH_GROUP = 2,   /* on the group (publishers: plus copies to unicast subscribers) */
    RDPS_PATH_UNICAST = 3, /* unicast mode, or auto fallen back: no group */
    RDPS_PATH_FAILED = 4,  /* multicast mode: the join failed for good */
};

#define RDPS_TOPIC_TABLE_BUCKETS 64

struct rdps_topic_table {
    struct rdps_topic *buckets[RDPS_TOPIC_TABLE_BUCKETS];
    struct rdps_group_range range; /* where names hash to */
    uint32_t avoid_group;          /* the discovery group, never a topic's */
};

void rdps__topic_table_init(struct rdps_topic_table *tt, const struct rdps_group_range *range,
                            uint32_t avoid_group);
/* Frees every topic still held. */
void rdps__topic_table_fini(struct rdps_topic_table *tt);
struct rdps_topic *rdps__topic_table_find(const struct rdps_topic_table *tt, uint64_t topic_id);
/*
 * Finds or creates the topic `name`; `group` (dotted IPv4, may be NULL) maps it
 * explicitly. RDPS_EINVAL for a bad name or group or a group that contradicts
 * an existing mapping, RDPS_EEXIST when another name has the same id.
 */
int rdps__topic_table_get(struct rdps_topic_table *tt, const char *name, const char *group,
                          struct rdps_topic **out);
/* Frees `topic` once it has no local publisher or subscriber left and no explicit mapping. */
void rdps__topic_table_put(struct rdps_topic_table *tt, struct rdps_topic *topic);
/* The group `name` maps to: its entry's if it has one, else the hash. */
uint32_t rdps__topic_table_group_of(const struct rdps_topic_table *tt, const char *name);

#endif /* RDPS_PUBSUB_TOPIC_TABLE_H */
