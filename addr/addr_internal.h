/* SPDX-License-Identifier: BSD-2-Clause */
/* addr_internal.h - what addr's files share: the context, the object common to peers and groups,
 * and the kind table through which one acquire-or-start path serves both. */
#ifndef RDPS_ADDR_INTERNAL_H
#define RDPS_ADDR_INTERNAL_H

#include <netinet/in.h>
#include <rdma/rdma_cma.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rdps_addr.h"
#include "rdps_addr_table.h"
#include "rdps_verbs_transport.h"

#define ADDR_TEXT (INET6_ADDRSTRLEN + 16)

/*
 * Model: a unicast peer and a multicast group are the same thing seen from
 * the table: an entry found by key (rdps_addr_table.h keeps the policy),
 * shared by reference count, and made ready by an asynchronous rdma_cm
 * operation on an id of its own (resolve + SIDR for a peer, a join for a
 * group) whose events come back through the context's one event channel.
 * struct addr_obj is that common part; a struct addr_kind says what differs
 * (how to start, how to read an event, what to drop on release), so finding,
 * creating, failing, restarting, timing out and releasing are written once
 * (addr_obj.c) and addr_peer.c / addr_group.c hold only the rdma_cm steps.
 *
 * Address handles: a peer's or group's AH may be named by sends already
 * posted on the shared QP when it is replaced (re-resolve, rejoin) or
 * released, so it is never destroyed here but handed to the transport
 * (rdps__verbs_transport_retire_ah), which destroys it once those sends
 * have completed (rdps_ah_retire.h).
 */

/* What an rdma_cm id's context points at, so one handler can route every event. */
enum cm_owner_kind { CM_OWNER_LISTENER = 1, CM_OWNER_OBJECT = 2 };

struct cm_owner {
    enum cm_owner_kind kind;
    void *object; /* struct rdps_addr (listener) or struct addr_obj */
};

/* Everything needed from an event is copied before the ack (the event is freed by it). */
struct event_copy {
    enum rdma_cm_event_type type;
    int status;
    struct rdma_cm_id *id;
    struct rdma_ud_param ud;
};

struct addr_obj;

struct addr_kind {
    const char *start_api;    /* "addr_resolve_start" / "addr_join_start", for messages */
    const char *restart_what; /* "re-resolve" / "re-join", for messages */
    size_t size;              /* of the whole peer or group object */
    /* Counters in struct rdps_addr_stats (offsets): attempts started and failed. */
    size_t started_stat, failed_stat;
    /* Begins a (re)start's rdma_cm steps; the entry is already PENDING. 0 or a failure. */
    int (*start)(struct addr_obj *o);
    /* Handles one event of o->id; true when o must be restarted after the ack. */
    bool (*on_event)(struct addr_obj *o, const struct event_copy *ev);
    /* The attempt passed its deadline (entry FAILED, ETIMEDOUT): word why for the user. */
    void (*timed_out)(struct addr_obj *o);
    /* Ends the current attempt: detaches / leaves what it holds and destroys its id. */
    void (*drop)(struct addr_obj *o);
};

struct addr_obj {
    struct rdps_addr_entry entry; /* first: the table hands entries back */
    const struct addr_kind *kind;
    struct rdps_addr *owner;
    struct rdps_addr_table *table; /* the owner's table this entry lives in */
    char name[ADDR_TEXT];          /* "ip:port" or the group address, for messages */
    struct cm_owner cm;
    struct rdma_cm_id *id;
    struct ibv_ah *ah;
    struct rdps_dest dest;
};

struct rdps_addr_peer {
    struct addr_obj obj; /* first */
    /* The peer as its datagrams show it (from the SIDR reply's AH): GID with a GRH, else LID. */
    union ibv_gid gid;
    uint16_t lid;
    bool has_gid;
};

struct rdps_addr_group {
    struct addr_obj obj; /* first; obj.entry.key.mode is the enum rdps_join_mode */
    bool use_full_join;  /* SEND_ONLY refused by the device: joined as a full member */
    bool join_issued;    /* the id holds a join that must be left before it is destroyed */
    bool attached;
    union ibv_gid mgid;
    uint16_t mlid;
    uint32_t qkey;
};

struct rdps_addr {
    struct rdps_transport *transport;
    struct rdps_verbs_info info;
    struct rdma_event_channel *channel;
    struct rdma_cm_id *listen_id;
    struct cm_owner listen_owner;
    uint16_t listen_port;
    struct sockaddr_storage local;
    bool has_local;
    uint32_t timeout_ms;
    struct rdps_addr_table peers;
    struct rdps_addr_table groups;
    struct rdps_addr_stats stats;
    uint64_t last_tick_ms;
};

extern const struct addr_kind rdps__addr_peer_kind;
extern const struct addr_kind rdps__addr_group_kind;

/* ---- addr_obj.c: the life of a peer or group entry ---- */

/*
 * Takes a reference on the entry for `key` in `table`, or creates one of
 * `kind` (named `name`); starts the rdma_cm operation when the table says so
 * (a new entry, or one that had failed). A started attempt that fails at once
 * drops the reference again and returns the error. `cache_hits`, when not
 * NULL, counts acquisitions answered by an existing, unfailed entry.
 */
int rdps__addr_obj_acquire(struct rdps_addr *a, struct rdps_addr_table *table,
                           const struct addr_kind *kind, const struct rdps_addr_key *key,
                           const char *name, uint64_t *cache_hits, struct addr_obj **out);
/* Drops a reference; on the last one the kind's resources, the id and the AH go. */
void rdps__addr_obj_release(struct addr_obj *o);
/* 0 pending, 1 ready (*dest set when dest is not NULL), or the negative error. */
int rdps__addr_obj_state(struct addr_obj *o, const struct rdps_dest **dest);
/* Records a failure (counted once per attempt) and logs it. */
void rdps__addr_obj_fail(struct addr_obj *o, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Gives the current AH to the transport for deferred destruction; dest.ah becomes NULL. */
void rdps__addr_obj_retire_ah(struct addr_obj *o);
/* Retires the AH and starts again (new generation); a failure is recorded, not returned. */
void rdps__addr_obj_restart(struct addr_obj *o);
/*
 * A restart the user asked for (refresh/rejoin): counted in `stat` and the
 * entry's invalidations; returns 0, or the error when it failed at once.
 */
int rdps__addr_obj_restart_now(struct addr_obj *o, size_t stat);
/* Fails every PENDING entry of `table` whose deadline passed. */
void rdps__addr_obj_expire(struct rdps_addr_table *table, uint64_t now_ms);
/* Destroys the id (if any) and clears the pointer. */
void rdps__addr_destroy_id(struct rdma_cm_id **id);

/* ---- addr.c: helpers of the context ---- */

uint64_t rdps__addr_now_ms(void);
void rdps__addr_set_port(struct sockaddr_storage *ss, uint16_t port);
/* The name rdma_cm / verbs know the device by ("(none)" for NULL). */
const char *rdps__addr_device_name(const struct ibv_context *verbs);
/* rdma_cm opens its own device contexts; the same device is recognized by name and port. */
bool rdps__addr_same_device(const struct rdps_addr *a, const struct rdma_cm_id *id);
enum rdps_addr_event_kind rdps__addr_event_kind(enum rdma_cm_event_type type);

static inline uint64_t *rdps__addr_stat(struct rdps_addr *a, size_t offset)
{
    return (uint64_t *)((char *)&a->stats + offset);
}

#endif /* RDPS_ADDR_INTERNAL_H */
