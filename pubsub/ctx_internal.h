/* ctx_internal.h - the insides of rdps_ctx, rdps_pub and rdps_sub, shared by the pubsub sources. */
#ifndef RDPS_PUBSUB_CTX_INTERNAL_H
#define RDPS_PUBSUB_CTX_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <rdps/rdps.h>

#include "discovery.h"
#include "rdps_frame.h"
#include "rdps_source.h"
#include "rdps_transport.h"
#include "topic.h"

#define RDPS_RX_BATCH 32

struct rdps_reasm;

/*
 * Group membership behind one interface: rdma_cm joins through addr/ on a
 * device, in-process groups on the loopback transport in unit tests.
 */
enum rdps_member_mode { RDPS_MEMBER_RECEIVE = 1, RDPS_MEMBER_SEND_ONLY = 2 };
struct rdps_membership_ops {
    /* Starts joining `group` (host-order IPv4); *handle is released with leave(). */
    int (*join)(void *impl, uint32_t group, enum rdps_member_mode mode, void **handle);
    /* 0 pending, 1 joined (*dest set), negative: failed. */
    int (*state)(void *handle, const struct rdps_dest **dest);
    void (*leave)(void *impl, void *handle);
    int (*fd)(void *impl);      /* event fd to watch, or -1 */
    int (*process)(void *impl); /* progress pending events, never blocks */
    void (*destroy)(void *impl);
};

/* A publisher or subscriber seen through discovery. */
struct rdps_peer {
    struct rdps_peer *next;
    struct rdps_announce ann;
    uint64_t last_seen_ns;
};

/* Per-topic state: the local subscribers and publishers of one topic id. */
struct rdps_topic {
    struct rdps_topic *next; /* hash chain */
    char name[RDPS_TOPIC_NAME_MAX + 1];
    uint32_t id;
    uint32_t group;
    struct rdps_sub *subs;    /* local subscribers */
    unsigned pubs;            /* local publishers */
    void *receive_membership; /* full join while subs != NULL */
    void *send_membership;    /* send-only join while pubs > 0 */
    const struct rdps_dest *send_dest;
    rdps_counters counters; /* what is attributable to this topic */
};

struct rdps_pub {
    rdps_ctx_t *ctx;
    struct rdps_pub *next;
    struct rdps_topic *topic;
    uint32_t session_id;
    uint32_t next_seq;
    uint64_t announce_seq;
    rdps_counters counters;
};

struct rdps_sub {
    rdps_ctx_t *ctx;
    struct rdps_sub *next;       /* in ctx */
    struct rdps_sub *topic_next; /* in topic */
    struct rdps_topic *topic;
    rdps_msg_cb on_message;
    rdps_event_cb on_event;
    void *user;
    uint32_t receiver_id;
    uint64_t announce_seq;
    rdps_counters counters;
};

struct rdps_ctx {
    rdps_config cfg;
    char device[64];
    char bind_ip[16];
    struct rdps_group_range range;
    uint32_t control_group;

    struct rdps_transport *transport; /* outermost (loss interceptor when configured) */
    uint32_t max_datagram;            /* transport max payload: header + message bytes */
    uint32_t self_qpn;
    uint8_t self_gid[16];
    bool has_self_gid;
    uint32_t self_host; /* host-order IPv4 or 0 */

    const struct rdps_membership_ops *member_ops;
    void *member_impl;
    void *control_membership;
    const struct rdps_dest *control_dest;

    int epoll_fd;
    struct rdps_frame_limits limits;
    struct rdps_reasm *reasm;

    struct rdps_topic *topic_buckets[64];
    struct rdps_pub *pubs;
    struct rdps_sub *subs;
    struct rdps_peer *peers;
    uint64_t next_announce_ns;
    uint64_t next_timer_ns;
    uint64_t now_ns;
    uint64_t last_event_check_ns;
    bool sends_queued; /* RDPS_SEND_MORE left datagrams queued in the transport */

    struct rdps_rx_datagram rx[RDPS_RX_BATCH];
    uint64_t bad_frames_by_reason[RDPS_FRAME_REJECT_COUNT];
    rdps_counters counters;
};

/* config.c */
int rdps__config_validate(const rdps_config *cfg, struct rdps_group_range *range,
                          uint32_t *control_group);

/* ctx.c */
uint64_t rdps__ctx_clock_ns(void);
/* A component's deadline moved earlier (new endpoint, new partial, ...): re-read deadlines at the
 * next poll. Components call this instead of writing the ctx's timer. */
void rdps__ctx_timers_changed(rdps_ctx_t *ctx);
struct rdps_topic *rdps__ctx_topic_find(const rdps_ctx_t *ctx, uint32_t topic_id);
int rdps__ctx_topic_get(rdps_ctx_t *ctx, const char *name, const char *group,
                        struct rdps_topic **out);
void rdps__ctx_topic_put(rdps_ctx_t *ctx, struct rdps_topic *topic);
/* Claims a send buffer; when the pool is empty, flushes and reaps completions once first. */
int rdps__ctx_claim(rdps_ctx_t *ctx, struct rdps_tx_buf *buf);
int rdps__ctx_send_frame(rdps_ctx_t *ctx, const struct rdps_dest *dest, const uint8_t *frame,
                         uint32_t len);
uint32_t rdps__ctx_random32(void);
/*
 * Creates a ctx over a caller-supplied transport and membership (unit tests
 * use the loopback transport). Takes ownership of both on success.
 */
int rdps__ctx_create_over(const rdps_config *cfg, struct rdps_transport *transport,
                          const struct rdps_membership_ops *ops, void *member_impl,
                          rdps_ctx_t **out);

/* Wraps *t in the loss-generator interceptor when cfg asks for loss (else leaves it). */
int rdps__ctx_wrap_loss_generator(const rdps_config *cfg, struct rdps_transport **t);

/* membership.c */
/* Creates the addr/ membership, listening on cfg->cm_port (0: first free from 7471). */
int rdps__membership_verbs_create(struct rdps_transport *transport, const rdps_config *cfg,
                                  const struct rdps_membership_ops **ops, void **impl,
                                  uint16_t *cm_port);
struct rdps_loopback_fabric;
int rdps__membership_loopback_create(struct rdps_loopback_fabric *fabric,
                                     struct rdps_transport *transport,
                                     const struct rdps_membership_ops **ops, void **impl);

/* discovery_runtime.c: the ctx's side of discovery (announcing local endpoints, tracking remote
 * ones). Endpoints are added after they are linked into the ctx and removed before they are
 * unlinked (a leaving announcement goes out). */
int rdps__discovery_init(rdps_ctx_t *ctx);
void rdps__discovery_fini(rdps_ctx_t *ctx);
void rdps__discovery_pub_added(rdps_ctx_t *ctx, rdps_pub_t *pub);
void rdps__discovery_pub_removed(rdps_ctx_t *ctx, rdps_pub_t *pub);
void rdps__discovery_sub_added(rdps_ctx_t *ctx, rdps_sub_t *sub);
void rdps__discovery_sub_removed(rdps_ctx_t *ctx, rdps_sub_t *sub);
/* An ANNOUNCE frame from `src` (already decoded as a frame). */
void rdps__discovery_on_frame(rdps_ctx_t *ctx, const struct rdps_source *src,
                              const struct rdps_frame_view *view);
/* Sends due announcements and expires silent peers; returns the next deadline (monotonic ns). */
uint64_t rdps__discovery_tick(rdps_ctx_t *ctx, uint64_t now_ns);

/* receive.c */
int rdps__receive_init(rdps_ctx_t *ctx);
void rdps__receive_fini(rdps_ctx_t *ctx);
void rdps__receive_datagram(rdps_ctx_t *ctx, const struct rdps_rx_datagram *rx);
uint64_t rdps__receive_expire(rdps_ctx_t *ctx);
/* Fills the reassembler-derived fields (gaps, duplicates, evictions, timeouts) of *out. */
void rdps__receive_counters(const rdps_ctx_t *ctx, rdps_counters *out);
/* Raises `ev` on every subscriber of `topic` that has an event callback (safe against callbacks
 * that destroy subscribers). */
void rdps__topic_notify(rdps_ctx_t *ctx, struct rdps_topic *topic, const rdps_event *ev);
/* Delivers a message published in this ctx straight to its local subscribers. */
void rdps__deliver_local(rdps_ctx_t *ctx, struct rdps_topic *topic, const void *data, size_t len,
                         const rdps_msg_info *info);

#endif /* RDPS_PUBSUB_CTX_INTERNAL_H */
