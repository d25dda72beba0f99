/* SPDX-License-Identifier: BSD-2-Clause */
/* ctx_internal.h - the insides of rdps_ctx, rdps_pub and rdps_sub, shared by the pubsub sources. */
#ifndef RDPS_PUBSUB_CTX_INTERNAL_H
#define RDPS_PUBSUB_CTX_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <rdps/rdps.h>

#include "contacts.h"
#include "rdps_batch.h"
#include "discovery.h"
#include "handles.h"
#include "owner.h"
#include "rdps_frame.h"
#include "rdps_source.h"
#include "rdps_transport.h"
#include "topic.h"
#include "topic_table.h"

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
    /*
     * Unicast resolution of a seed peer (rdps_config.peers): host-order IPv4 and port (0: the
     * default rdma_cm port); *handle is released with unresolve(). NULL (no seeds) where the
     * membership has none.
     */
    int (*resolve)(void *impl, uint32_t ipv4, uint16_t port, void **handle);
    /* 0 pending, 1 resolved (*dest: the peer's QP; *src: the peer as its datagrams show it),
     * negative: failed (unresolve, and start again later). */
    int (*resolve_state)(void *handle, const struct rdps_dest **dest, struct rdps_source *src);
    void (*unresolve)(void *impl, void *handle);
};

/*
 * An endpoint's discovery events (discovery_runtime.c): it hears SEEN for peers admitted from
 * serial `told_from` on as they come; those admitted before it was created are replayed at the
 * next poll (pending), by walking the peer slots from `cursor`. Until a peer is replayed, its
 * GONE is not told either.
 */
struct rdps_disc_replay {
    uint64_t told_from;
    uint32_t cursor;
    bool pending;
};

struct rdps_pub {
    rdps_ctx_t *ctx;
    uintptr_t handle; /* what the application holds (handles.h); 0 once destroyed */
    /* The send fast path's owner check, one load: the ctx owner's token (kept up to date by
     * rdps__ctx_owner_changed), RDPS__OWNER_NONE on a concurrent publisher (the slow way). */
    _Atomic uint64_t send_owner;
    struct rdps_pub *next;
    bool closed;  /* destroyed from a callback: freed when the outermost callback returns */
    bool claimed; /* a claim is outstanding (rdps_pub_claim): sends and claims get RDPS_EBUSY */
    struct rdps_topic *topic;
    uint32_t session_id;
    uint32_t next_seq;
    uint64_t announce_seq;
    rdps_counters counters;
    struct rdps_rel_pub_glue *rel; /* reliable publishers (publisher_reliable.c), else NULL */
    struct rdps_pub_queue *cq;     /* concurrent publishers (publisher_concurrent.c), else NULL */
    rdps_event_cb on_event;        /* rdps_pub_opts.on_event: events of every publisher */
    void *event_user;
    struct rdps_disc_replay replay; /* SUBSCRIBER_SEEN of subscribers known before it */
    /* The outstanding claim: its number (in rdps_claim.opaque_, so a stale or foreign claim is
     * told apart), its capacity and, unreliable, the transport buffer it lends. */
    uint64_t claim_token;
    size_t claim_capacity;
    struct rdps_tx_buf claim_buf;
    unsigned claim_flags; /* rdps_pub_claim_ex's flags, for its commit */
    bool claim_in_open;   /* unreliable: the claim's room is the open datagram's last message */
    bool claim_large;     /* the claim is in the ctx's claim buffer, at claim_pos */
    uint64_t claim_pos;
    /* Batching (publisher_batch.c): the open datagram of an unreliable publisher (open.count 0:
     * none), in a registered send buffer; why it is held (a send's completion was awaited when it
     * opened, RDPS_SEND_MORE on its latest message, the linger); the next message's ordinal. */
    bool batching; /* rdps_pub_opts.batching is RDPS_BATCH_AUTO */
    /* The join path (rdps__pub_batch_join): the open datagram it appends to (&open, or a reliable
     * publisher's open ring frame; nothing open: &open, closed), and whether subscribers in this
     * ctx take every message at once instead (the topic's live_subs). */
    struct rdps_batch *join;
    bool local_subs;
    uint64_t linger_ns;
    uint32_t next_ordinal;
    struct rdps_batch open; /* its messages are next_ordinal.. (next_ordinal moves when it goes) */
    struct rdps_tx_buf open_buf;
    uint32_t open_seq;
    uint64_t open_ts;          /* its timestamp: its first message's (wall clock) */
    uint64_t open_deadline_ns; /* lingering: goes at the first poll from then on (monotonic) */
    /* Held for the device: goes once ctx->tx->seen reaches open_await (0: not held so), or at the
     * first poll from open_await_until_ns on (set by the first poll that finds it held). */
    uint64_t open_await, open_await_until_ns;
    uint64_t last_post_ts; /* wall clock of this publisher's last post from a send */
    bool open_more;
    bool open_hold; /* held by more than RDPS_SEND_MORE: awaiting the device, or lingering */
    /* Tail heartbeats (publisher_tail.c): data sent since the last look; beats sent since; the
     * next one's deadline (UINT64_MAX: nothing sent yet). */
    bool tail_sent;
    uint8_t tail_beats;
    uint64_t tail_due_ns;
};

struct rdps_sub {
    rdps_ctx_t *ctx;
    uintptr_t handle;            /* what the application holds (handles.h); 0 once destroyed */
    struct rdps_sub *next;       /* in ctx */
    bool closed;                 /* destroyed from a callback: skipped, freed later */
    bool reliable;               /* asked for in-order, exactly-once delivery */
    bool from_oldest;            /* reliable: late join from the oldest retained sequence */
    uint32_t flow_tag;           /* reliable: group tag for tagged flow control */
    struct rdps_sub *topic_next; /* in topic */
    struct rdps_topic *topic;
    rdps_msg_cb on_message;
    rdps_event_cb on_event;
    void *user;
    void *event_user; /* on_event's argument: opts->event_user, or user */
    uint32_t receiver_id;
    uint64_t announce_seq;
    rdps_counters counters;
    struct rdps_disc_replay replay; /* PUBLISHER_SEEN of publishers known before it */
};

struct rdps_ctx {
    uintptr_t handle;        /* what the application holds (handles.h); 0 once destroyed */
    struct rdps_owner owner; /* the thread that uses it (owner.h) */
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
    uint16_t self_lid;  /* InfiniBand port LID, 0 on RoCE */
    uint32_t self_host; /* host-order IPv4 or 0 */

    const struct rdps_membership_ops *member_ops;
    void *member_impl;
    void *control_membership;
    const struct rdps_dest *control_dest;

    int epoll_fd;
    struct rdps_frame_limits limits;
    struct rdps_reasm *reasm;

    struct rdps_topic_table topics;
    struct rdps_pub *pubs;
    struct rdps_sub *subs;
    struct rdps_discovery *discovery; /* discovery_runtime.c: peers and our announcements */
    uint64_t discovery_deadline_ns;   /* discovery's next deadline as last reported */
    unsigned discovery_replays;       /* endpoints with a replay pending */
    uint64_t next_timer_ns;
    uint64_t now_ns;
    uint64_t (*clock)(void *user); /* monotonic ns; tests and fuzzers substitute a fake clock */
    void *clock_user;
    /*
     * Callback safety (rdps.h, "Callbacks"): callback_depth counts user callbacks on the stack.
     * While it is above zero, rdps_ctx_poll/wait refuse (RDPS_EBUSY) and destroying a publisher,
     * subscriber or the ctx only marks it closed; the outermost return frees what was closed.
     */
    unsigned callback_depth;
    unsigned closed_endpoints; /* closed pubs + subs waiting to be freed */
    bool destroy_requested;
    unsigned reliable_pubs;   /* publishers with a reliable engine: progressed on every poll */
    uint32_t rel_receiver_id; /* this ctx as a reliable receiver (NAK, STATUS, announcements) */
    unsigned reliable_subs;   /* subscribers that asked for reliable delivery */
    uint64_t last_event_check_ns;
    uint64_t sends_lost_reported; /* transport's tx_lost_qp_error at the last QP_RECOVERED */
    bool sends_queued;            /* RDPS_SEND_MORE left datagrams queued in the transport */
    bool on_loopback_device;      /* opened through rdps__loopback_device_open */
    bool rel_sends_deferred;      /* RDPS_SEND_MORE left reliable ring frames unposted */
    unsigned open_batches;        /* unreliable publishers with an open datagram */
    /* The innermost transport's send progress (batching waits on it), and after how long since
     * a publisher's last post its next message looks for completions itself (publisher_batch.c;
     * a test sets it). */
    const struct rdps_tx_progress *tx;
    uint64_t batch_look_ns;
    bool tail_data;            /* an unreliable publisher sent data since the tail tick */
    uint64_t tail_deadline_ns; /* the tail tick's next deadline (UINT64_MAX: none) */

    struct rdps_rx_datagram rx[RDPS_RX_BATCH];
    struct rdps_source rx_source; /* sender of the datagram being handled */
    struct rdps_topic *rx_topic;  /* its topic (DATA/HEARTBEAT), valid during its handling */
    uint64_t reassembly_timeout_ns;
    uint64_t reorder_allowance_ns; /* a skipped sequence becomes a gap after this long */
    uint64_t bad_frames_by_reason[RDPS_FRAME_REJECT_COUNT];
    rdps_counters counters;
    struct rdps_stat_shm *stat; /* stat_shm.c: live-counters file for rdps-stat, or NULL */
    uint64_t stat_deadline_ns;  /* its next refresh */

    /* Unicast discovery (contacts_runtime.c): the seeds of rdps_config.peers, parsed at create,
     * and the runtime, started at the first poll (it needs this ctx's own QP). */
    struct rdps_seed seeds[RDPS_MAX_SEEDS];
    unsigned nseeds;
    struct rdps_contacts_rt *contacts;
    bool contacts_failed;       /* could not start (logged): no unicast discovery */
    uint64_t peers_deadline_ns; /* its next deadline as last reported */
    /* Concurrent publishers (publisher_concurrent.c): how many, the eventfd other threads wake
     * the ctx's thread with (-1: none yet), destroyed ones whose memory waits a moment. */
    unsigned concurrent_pubs;
    int wake_fd;
    struct rdps_pub *lingering;
    /* Claims longer than a datagram (publisher_claim.c): the buffer they are written in (NULL
     * until the first), and whether the transport could not gather (then fragments copy). */
    struct rdps_claim_buffer *claim_buffer;
    bool no_gather;
    /* Topic paths (unicast.c): sides still joining, and when auto's deadlines next fall. */
    unsigned topics_joining;
    uint64_t topics_deadline_ns;
    /* What auto topics go by: an announcement came through a multicast group (ever), and when
     * the first came by unicast (0: never). */
    bool multicast_heard;
    uint64_t unicast_heard_ns;
    /* rdps_ctx_watch_publishers (discovery_runtime.c): publishers of topics we have no endpoint
     * of, by name prefix. */
    rdps_publisher_watch_cb watch_cb;
    void *watch_user;
    char watch_prefix[RDPS_TOPIC_NAME_MAX + 1];
    size_t watch_prefix_len;
};

/* publisher_reliable.c: the reliable publisher engine (core/proto/rdps_rel_pub.h) driven over
 * the transport: ring memory registered with the device, posts straight from the ring. */
struct rdps_rel_pub_glue;
/* The reliable options of *opts (opts->reliable set): 0, or RDPS_EINVAL naming the option. */
int rdps__pub_rel_check_opts(const rdps_pub_opts *opts);
/* Makes pub reliable; opts passed rdps__pub_rel_check_opts. */
int rdps__pub_rel_attach(rdps_pub_t *pub, const rdps_pub_opts *opts);
void rdps__pub_rel_detach(rdps_pub_t *pub);
/* rdps_pub_send for a reliable publisher: RDPS_EAGAIN before anything is written. */
int rdps__pub_rel_send(rdps_pub_t *pub, const void *data, size_t len, unsigned flags);
/* rdps_pub_claim for a reliable publisher: room for `want` bytes reserved in the ring (in the open
 * frame with batching; SIZE_MAX: a whole datagram; RDPS_EAGAIN as send: nothing reserved); *data
 * is where the message goes, *capacity its room. Commit appends it (len was checked against the
 * capacity) and delivers locally as send does, posting unless flags hold RDPS_SEND_MORE; unclaim
 * gives the room back. */
int rdps__pub_rel_claim(rdps_pub_t *pub, size_t want, void **data, size_t *capacity);
int rdps__pub_rel_commit(rdps_pub_t *pub, size_t len, unsigned flags);
void rdps__pub_rel_unclaim(rdps_pub_t *pub);
/* A NAK or STATUS from `src` (decoded): handed to the publisher whose session it names. */
void rdps__pub_rel_on_control(rdps_ctx_t *ctx, const struct rdps_source *src,
                              const struct rdps_frame_view *v);
/* Completions, timers and due posts of every reliable publisher; returns the next deadline. */
uint64_t rdps__pub_rel_progress(rdps_ctx_t *ctx);
/* Discovery saw a reliable subscriber of topic t arrive or go (discovery_engine.h event). */
struct rdps_disc_event;
void rdps__pub_rel_on_receiver(rdps_ctx_t *ctx, struct rdps_topic *t,
                               const struct rdps_disc_event *ev);
uint32_t rdps__pub_rel_receivers_behind(const rdps_pub_t *pub);
/* When a reliable publisher of topic_id last heard the receiver (STATUS, NAK; 0: never). */
uint64_t rdps__pub_rel_receiver_heard(const rdps_ctx_t *ctx, uint64_t topic_id,
                                      const struct rdps_source *source, uint32_t receiver_id);
/* The topic's publishers' path changed: without the group, repairs go to their askers only. */
void rdps__pub_rel_topic_path(rdps_ctx_t *ctx, const struct rdps_topic *t);
size_t rdps__pub_rel_max_message_size(const rdps_pub_t *pub);
/* What a flush of held sends posts (ctx.c flush_sends; rdps.h above rdps_pub_send_ex). */
enum rdps_flush_mode {
    /* A poll: what RDPS_SEND_MORE held; lingering datagrams whose time came; those held for the
     * device whose awaited completion was seen (or whose wait reached RDPS_BATCH_AWAIT_MAX_NS). */
    RDPS_FLUSH_POLL,
    /* rdps_ctx_arm (the application goes to sleep): also every one held for the device, and
     * lingering ones due within a millisecond. */
    RDPS_FLUSH_SLEEP,
    RDPS_FLUSH_ALL, /* rdps_ctx_flush: everything */
};
/* Posts the ring frames RDPS_SEND_MORE left unposted, as one chain per publisher; from
 * RDPS_FLUSH_SLEEP on, open frames held for the device too; RDPS_FLUSH_ALL: lingering ones too. */
void rdps__pub_rel_flush(rdps_ctx_t *ctx, enum rdps_flush_mode mode);
/* Adds the reliable publishers' figures to a publisher's (or, pub NULL, the ctx's) counters. */
void rdps__pub_rel_counters(const rdps_pub_t *pub, rdps_counters *out);

/* publisher_batch.c: unreliable publishers' batching (rdps_batch.h; rdps.h, RDPS_SEND_MORE). */
/* rdps_pub_send_ex of a message that fits a datagram, on a batching publisher. */
int rdps__pub_batch_send(rdps_pub_t *pub, const void *data, size_t len, unsigned flags);
/* Sends the open datagram (queued only, with RDPS_SEND_MORE in flags). */
int rdps__pub_batch_post(rdps_pub_t *pub, unsigned flags);
/* The publisher is being destroyed: its open datagram goes, or (the device refusing it) is dropped
 * and counted; none is left open. */
void rdps__pub_batch_drop(rdps_pub_t *pub);
/* The topic's live_subs changed: its publishers' join path follows (rdps__pub_batch_join). */
void rdps__pub_local_subs_changed(rdps_ctx_t *ctx, const struct rdps_topic *t);
/* A claim of len bytes in the open datagram, or a new one (*data: where the message goes). */
int rdps__pub_batch_claim(rdps_pub_t *pub, size_t len, void **data);
/* Its commit (len checked against the claim) and abort. */
int rdps__pub_batch_commit(rdps_pub_t *pub, size_t len);
void rdps__pub_batch_abort(rdps_pub_t *pub);
/* Sends the open datagrams `mode` says go (now_ns: monotonic), queued for one transport flush by
 * the caller. *next_ns: the earliest deadline of those left lingering (UINT64_MAX: none).
 * Returns 0 or the first error. */
int rdps__ctx_batches_flush(rdps_ctx_t *ctx, enum rdps_flush_mode mode, uint64_t now_ns,
                            uint64_t *next_ns);
/* After how long since a publisher's last post its next message looks for send completions
 * itself (publisher_batch.c); a test's hook sets another. */
#define RDPS_BATCH_LOOK_NS 1000000ull
/* The test's hook. */
void rdps__ctx_set_batch_look(rdps_ctx_t *handle, uint64_t ns);

/* publisher_concurrent.c: concurrent publishers (rdps_pub_opts.concurrent). */
struct rdps_pub_queue;
/* The concurrent options of *opts: 0, or RDPS_EINVAL naming the option. */
int rdps__pub_queue_check_opts(const rdps_pub_opts *opts);
/* Makes pub concurrent (opts->concurrent set; checked). */
int rdps__pub_queue_attach(rdps_pub_t *pub, const rdps_pub_opts *opts);
/* Any thread: queues a message for the ctx's thread (rdps_pub_send of a non-owner). */
int rdps__pub_queue_offer(rdps_pub_t *pub, const void *data, size_t len, unsigned flags);
/* Any thread: rdps_pub_ready as the ctx's thread last published it (the message set on failure). */
int rdps__pub_queue_ready(const rdps_pub_t *pub);
size_t rdps__pub_queue_max_message(const rdps_pub_t *pub);
/* The ctx's thread: sends what other threads queued (RDPS_EAGAIN: back-pressure stopped it). */
int rdps__pub_queue_drain(rdps_pub_t *pub);
/* publisher.c: sends one queued message as the ctx's thread's own, with RDPS_SEND_MORE. */
int rdps__pub_send_queued(rdps_pub_t *pub, const void *data, size_t len);
/* Refuses producers from now on; flush also sends what they queued (not from a callback). */
void rdps__pub_queue_close(rdps_pub_t *pub);
void rdps__pub_queue_flush(rdps_pub_t *pub);
/* rdps__pub_free's last step for a concurrent publisher: its memory goes a second later. */
void rdps__pub_queue_linger(rdps_pub_t *pub);
void rdps__pub_queue_counters(const rdps_pub_t *pub, rdps_counters *into);
/* Every poll: drains the queues, frees what lingered. Before sleeping: false when a queue holds
 * something (do not sleep), else true with the producers told to wake the ctx. */
void rdps__ctx_queues_drain(rdps_ctx_t *ctx);
bool rdps__ctx_queues_sleep(rdps_ctx_t *ctx);
void rdps__ctx_queues_fini(rdps_ctx_t *ctx);

/* publisher_claim.c: the claim buffer's memory goes (after the transport, which deregistered it:
 * a send still in flight may read it until then). */
void rdps__claim_buffer_fini(rdps_ctx_t *ctx);

/* publisher_tail.c: unreliable publishers' tail heartbeats after a burst (a lost tail is a gap). */
void rdps__pub_tail_init(rdps_pub_t *pub);
/* Beats due; returns the next deadline. Run at polls when data was sent or a deadline passed. */
uint64_t rdps__pubs_tail_tick(rdps_ctx_t *ctx, uint64_t now_ns);
/* The publisher goes (its open datagram posted): one last heartbeat names where it ended, unless
 * it beat its whole back-off since its last data. */
void rdps__pub_tail_final(rdps_pub_t *pub);

/* unicast.c: each side of a topic's path (rdps_transport_mode) and the publishers' fan-out. */
/* RDPS_EINVAL (naming `who`) unless mode is an rdps_transport_mode. */
int rdps__transport_mode_check(const char *who, int mode);
/* Before the publisher is counted in t->pubs: the first sets the topic's send mode, joins (not
 * unicast) and starts the fan-out; later ones must ask the same mode (RDPS_EINVAL). */
int rdps__topic_send_attach(rdps_ctx_t *ctx, struct rdps_topic *t, int mode);
/* After the topic's last publisher went: leaves, drops the fan-out. */
void rdps__topic_send_detach(rdps_ctx_t *ctx, struct rdps_topic *t);
/* Before the subscriber is linked into t->subs: the first sets the mode and joins (not unicast). */
int rdps__topic_recv_attach(rdps_ctx_t *ctx, struct rdps_topic *t, int mode);
void rdps__topic_recv_detach(rdps_ctx_t *ctx, struct rdps_topic *t);
/* Joins that completed or failed, auto's fallbacks (events raised: inside the callback bracket);
 * returns the next deadline. Runs at every poll while a side joins, else at its deadline. */
uint64_t rdps__topics_progress(rdps_ctx_t *ctx);
/* Discovery heard an announcement by unicast (the first one starts auto's clock). */
void rdps__topics_unicast_heard(rdps_ctx_t *ctx);
/* A subscriber peer of topic t seen, updated or gone (discovery_engine.h event). */
void rdps__fanout_on_subscriber(rdps_ctx_t *ctx, struct rdps_topic *t,
                                const struct rdps_disc_event *ev);
/* The sources of the topic's unicast copies (at most max in out); returns how many there are. */
uint32_t rdps__fanout_sources(const struct rdps_topic *t, struct rdps_source *out, uint32_t max);
/* src reported (STATUS) to a reliable publisher of t: its destination is confirmed, never
 * displaced by a newcomer. */
void rdps__fanout_confirm(struct rdps_topic *t, const struct rdps_source *src);

/* contacts_runtime.c: unicast discovery (seeds, peer lists). */
struct rdps_contacts_rt;
/* rdps_config.peers (NULL: $RDPS_PEERS) parsed: 0 and *count seeds, or RDPS_EINVAL. */
int rdps__peers_parse_config(const rdps_config *cfg, struct rdps_seed *seeds, unsigned *count);
int rdps__peers_start(rdps_ctx_t *ctx);
/* Sends `leaving` lists, releases every destination and seed. */
void rdps__peers_stop(rdps_ctx_t *ctx);
uint64_t rdps__peers_tick(rdps_ctx_t *ctx, uint64_t now);
/* An ANNOUNCE frame with topic id 0: a peer list. */
void rdps__peers_on_frame(rdps_ctx_t *ctx, const struct rdps_source *src,
                          const struct rdps_frame_view *view);
/* Where announcements go by unicast (every seed and peer heard directly); returns the count. */
uint32_t rdps__peers_announce_dests(rdps_ctx_t *ctx, const struct rdps_dest ***dests);
void rdps__peers_counters(const rdps_ctx_t *ctx, rdps_counters *out);
/* Seeds and peers heard directly (what announcements go to). */
uint32_t rdps__peers_count(const rdps_ctx_t *ctx);

/* publisher.c: adds what a publisher sent to `into` (the ctx's totals are the sum). */
void rdps__pub_fold_counters(const rdps_pub_t *pub, rdps_counters *into);
/* publisher.c, subscriber.c: the real destroy (leave announcements, group leave, free). */
void rdps__pub_free(rdps_pub_t *pub);
void rdps__sub_free(rdps_sub_t *sub);
/* subscriber.c: an endpoint's counters as rdps_pub_counters / rdps_sub_counters give them. */
void rdps__pub_counters(const rdps_pub_t *pub, rdps_counters *out);
void rdps__sub_counters(const rdps_sub_t *sub, rdps_counters *out);

/* stat_shm.c: the ctx's live-counters file (stat_format.h). Open logs and goes on without one
 * when it cannot be created; refresh returns the next refresh's deadline. */
struct rdps_stat_shm;
void rdps__stat_shm_open(rdps_ctx_t *ctx);
void rdps__stat_shm_close(rdps_ctx_t *ctx);
uint64_t rdps__stat_shm_refresh(rdps_ctx_t *ctx, uint64_t now_ns);

/* config.c */
int rdps__config_validate(const rdps_config *cfg, struct rdps_group_range *range,
                          uint32_t *control_group);

/*
 * Entry points: the object behind the application's handle, for a call from the ctx's thread.
 * 0 and *out; or RDPS_EINVAL (NULL, not a handle of that type), RDPS_ECLOSED (destroyed) or
 * RDPS_ENOTOWNER (another thread owns the ctx), recorded, with *out NULL for the first two.
 * The inline part is the hot path: the handle's lookup and the owner check.
 */
int rdps__enter_refused(const void *handle, enum rdps_handle_type type, rdps_ctx_t *ctx);
/* The ctx changed hands (taken over, handed over): its publishers' send_owner follow. */
void rdps__ctx_owner_changed(rdps_ctx_t *ctx);
static inline int rdps__ctx_enter(const rdps_ctx_t *handle, rdps_ctx_t **out)
{
    rdps_ctx_t *ctx = rdps__handle_get(handle, RDPS_HANDLE_CTX);
    *out = ctx;
    if (__builtin_expect(ctx != NULL && rdps__owner_is_caller(&ctx->owner), 1))
        return 0;
    return rdps__enter_refused(handle, RDPS_HANDLE_CTX, ctx);
}
static inline int rdps__pub_enter(const rdps_pub_t *handle, rdps_pub_t **out)
{
    rdps_pub_t *pub = rdps__handle_get(handle, RDPS_HANDLE_PUB);
    *out = pub;
    if (__builtin_expect(pub != NULL && rdps__owner_is_caller(&pub->ctx->owner), 1))
        return 0;
    return rdps__enter_refused(handle, RDPS_HANDLE_PUB, pub != NULL ? pub->ctx : NULL);
}
static inline int rdps__sub_enter(const rdps_sub_t *handle, rdps_sub_t **out)
{
    rdps_sub_t *sub = rdps__handle_get(handle, RDPS_HANDLE_SUB);
    *out = sub;
    if (__builtin_expect(sub != NULL && rdps__owner_is_caller(&sub->ctx->owner), 1))
        return 0;
    return rdps__enter_refused(handle, RDPS_HANDLE_SUB, sub != NULL ? sub->ctx : NULL);
}
/* Lookups alone, for the calls any thread may make (they read what never changes). */
static inline rdps_ctx_t *rdps__ctx_of_handle(const rdps_ctx_t *handle)
{
    return rdps__handle_get(handle, RDPS_HANDLE_CTX);
}
static inline rdps_pub_t *rdps__pub_of_handle(const rdps_pub_t *handle)
{
    return rdps__handle_get(handle, RDPS_HANDLE_PUB);
}
static inline rdps_sub_t *rdps__sub_of_handle(const rdps_sub_t *handle)
{
    return rdps__handle_get(handle, RDPS_HANDLE_SUB);
}

/* ctx.c */
/* The ctx's monotonic clock (the real one unless a test substituted its own). */
uint64_t rdps__ctx_now(const rdps_ctx_t *ctx);
/* Substitutes the clock of the ctx behind a public handle (tests, fuzzers); call right after
 * creation. */
void rdps__ctx_set_clock(rdps_ctx_t *handle, uint64_t (*clock)(void *user), void *user);
/*
 * Brackets every call of user code. rdps__ctx_callbacks_leave returns true when the ctx itself
 * was destroyed by the callbacks (the caller returns RDPS_ECLOSED without touching it).
 */
static inline void rdps__ctx_callbacks_enter(rdps_ctx_t *ctx)
{
    ctx->callback_depth++;
}
bool rdps__ctx_callbacks_leave(rdps_ctx_t *ctx);

/* Sends posted and not yet completed on the ctx's transport (capped at INT32_MAX). */
int rdps__ctx_sends_pending(const rdps_ctx_t *ctx);
/* rdps_last_error_message() of a call whose callbacks destroyed the ctx. */
#define RDPS__TEXT_CTX_DESTROYED                                                           \
    "a callback destroyed the ctx (freed now: its handle and those of its publishers and " \
    "subscribers are refused from now on)"
/* Appended to every "no such device" of rdps_ctx_create: where rdps runs without RDMA hardware. */
#define RDPS__NO_DEVICE_HINT                                                                    \
    "without RDMA hardware use device \"loopback\" (one process) or \"local\" (the processes "  \
    "of this host; RDPS_DEVICE=local, tools: -d local), or soft-RoCE: the rdma_rxe module, or " \
    "tools/rxe-vm (QEMU guests; docs/rxe-vm.md)"
/* A component's earliest deadline is now `deadline_ns` or later: wake no later than that. */
static inline void rdps__ctx_timer_at(rdps_ctx_t *ctx, uint64_t deadline_ns)
{
    if (deadline_ns < ctx->next_timer_ns)
        ctx->next_timer_ns = deadline_ns;
}
/* A component's deadline moved earlier (new endpoint, new partial, ...): re-read deadlines at the
 * next poll. Components call this instead of writing the ctx's timer. */
void rdps__ctx_timers_changed(rdps_ctx_t *ctx);
static inline struct rdps_topic *rdps__ctx_topic_find(const rdps_ctx_t *ctx, uint64_t topic_id)
{
    return rdps__topic_table_find(&ctx->topics, topic_id);
}
/* Claims a send buffer; when the pool is empty, flushes and reaps completions once first. */
int rdps__ctx_claim(rdps_ctx_t *ctx, struct rdps_tx_buf *buf);
/* This ctx as a source (what local deliveries report). */
void rdps__ctx_self_source(const rdps_ctx_t *ctx, struct rdps_source *out);
/* Reaps send completions without touching received datagrams (safe inside a receive batch). */
int rdps__ctx_reap_sends(rdps_ctx_t *ctx);
int rdps__ctx_send_frame(rdps_ctx_t *ctx, const struct rdps_dest *dest, const uint8_t *frame,
                         uint32_t len);
/* The same frame to n destinations: one buffer per chain of at most 64 of them. */
int rdps__ctx_send_frame_multi(rdps_ctx_t *ctx, const struct rdps_dest *const *dests, uint32_t n,
                               const uint8_t *frame, uint32_t len);
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
/* With a domain key (cfg->domain_key, the key file, $RDPS_DOMAIN_KEY_FILE): wraps *t in the
 * authenticating interceptor (rdps_auth.h); keyless: leaves it. On failure *t is unchanged. */
int rdps__ctx_wrap_auth(const rdps_config *cfg, struct rdps_transport **t);

/* membership.c */
/* Creates the addr/ membership, listening on cfg->cm_port (0: first free from 7471). */
int rdps__membership_verbs_create(struct rdps_transport *transport, const rdps_config *cfg,
                                  const struct rdps_membership_ops **ops, void **impl,
                                  uint16_t *cm_port);
struct rdps_loopback_fabric;
int rdps__membership_loopback_create(struct rdps_loopback_fabric *fabric,
                                     struct rdps_transport *transport,
                                     const struct rdps_membership_ops **ops, void **impl);

/* config.c: the defaults rdps_config_init gives. */
void rdps__config_defaults(rdps_config *cfg);
/* Zero fields of a caller's config take their defaults (rdps.h: "zero fields keep the defaults";
 * the fields where zero means something of its own keep it). */
void rdps__config_zero_defaults(rdps_config *cfg);
/* ctx.c: the ctx's counters in the library's whole struct (zeroed and RDPS_EINVAL for NULL), and
 * a counters query's result copied into the caller's struct of `size` bytes (abi.h). */
int rdps__ctx_counters(const rdps_ctx_t *ctx, rdps_counters *out);
int rdps__counters_to_caller(int rc, const rdps_counters *full, rdps_counters *out, size_t size);

/* loopback_device.c: the public in-process device (rdps_config.device = "loopback"). Opens an
 * endpoint and its membership on the process's fabric; every successful open is paired with one
 * close after the endpoint is destroyed. */
#define RDPS_LOOPBACK_DEVICE_NAME "loopback"
int rdps__loopback_device_open(const rdps_config *cfg, struct rdps_transport **transport,
                               const struct rdps_membership_ops **ops, void **impl);
void rdps__loopback_device_close(void);

/* local_device.c: the public cross-process device (rdps_config.device = "local", "local:1024",
 * "local:4096"): a member of the host's local device and its membership (the registry's). */
#define RDPS_LOCAL_DEVICE_NAME "local"
bool rdps__local_device_name(const char *device);
int rdps__local_device_open(const rdps_config *cfg, const char *device,
                            struct rdps_transport **transport,
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
/* An ANNOUNCE frame from `src` (already decoded as a frame); to_multicast: it came through a
 * group. Peer lists (topic id 0) go to unicast discovery. */
void rdps__discovery_on_frame(rdps_ctx_t *ctx, const struct rdps_source *src,
                              const struct rdps_frame_view *view, bool to_multicast);
/* Sends every local endpoint's announcement to one destination (a peer just found). */
void rdps__discovery_announce_to(rdps_ctx_t *ctx, const struct rdps_dest *dest);
/* The subscriber's topic now goes by unicast: its announcements say so, at once. */
void rdps__discovery_sub_unicast(rdps_ctx_t *ctx, rdps_sub_t *sub);
/* Fills the discovery-derived fields (peers_refused) of *out. */
void rdps__discovery_counters(const rdps_ctx_t *ctx, rdps_counters *out);
/* Sends due announcements and expires silent peers; returns the next deadline (monotonic ns). */
uint64_t rdps__discovery_tick(rdps_ctx_t *ctx, uint64_t now_ns);
/* Tells endpoints created since the last call the peers known before them (SEEN events); the
 * caller is inside the callback bracket. */
void rdps__discovery_replay(rdps_ctx_t *ctx);

/* receive.c */
int rdps__receive_init(rdps_ctx_t *ctx);
void rdps__receive_fini(rdps_ctx_t *ctx);
void rdps__receive_datagram(rdps_ctx_t *ctx, const struct rdps_rx_datagram *rx);
uint64_t rdps__receive_expire(rdps_ctx_t *ctx);
/* When the publisher session (source, session_id) last had a frame here (0: never, forgotten). */
uint64_t rdps__receive_heard(const rdps_ctx_t *ctx, const struct rdps_source *source,
                             uint32_t session_id);
/* Reliable sessions: due NAKs and STATUS, loss deadlines; returns the next deadline. */
/* NAKs, STATUS, loss deadlines; backlog: the poll stopped at its budget with datagrams queued. */
uint64_t rdps__receive_reliable_poll(rdps_ctx_t *ctx, bool backlog);
/* Fills the reassembler-derived fields (gaps, duplicates, evictions, timeouts) of *out. */
void rdps__receive_counters(const rdps_ctx_t *ctx, rdps_counters *out);
/* Raises `ev` on every subscriber of `topic` that has an event callback (safe against callbacks
 * that destroy subscribers). */
void rdps__topic_notify(rdps_ctx_t *ctx, struct rdps_topic *topic, const rdps_event *ev);
/* Delivers a message published in this ctx straight to its local subscribers. */
void rdps__deliver_local(rdps_ctx_t *ctx, struct rdps_topic *topic, const void *data, size_t len,
                         const rdps_msg_info *info);

#endif /* RDPS_PUBSUB_CTX_INTERNAL_H */
