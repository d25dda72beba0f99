/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps.h - public API of rdps, publish/subscribe over RDMA Unreliable Datagram QPs. */
#ifndef RDPS_RDPS_H
#define RDPS_RDPS_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(RDPS_BUILDING_LIBRARY)
#define RDPS_EXPORT __attribute__((visibility("default")))
#else
#define RDPS_EXPORT
#endif

/*
 * The version of this header (docs/versioning.md says when each number moves). A program
 * built against it needs a librdps of the same major version and at least this minor one:
 * rdps_ctx_create() checks (RDPS_ENOTSUP otherwise), because fields this header added to the
 * structs the library fills in (rdps_msg_info, rdps_event) would be garbage from an older one.
 */
#define RDPS_VERSION_MAJOR 1
#define RDPS_VERSION_MINOR 3
#define RDPS_VERSION_PATCH 0
#define RDPS_VERSION_NUMBER \
    ((RDPS_VERSION_MAJOR << 16) | (RDPS_VERSION_MINOR << 8) | RDPS_VERSION_PATCH)

/*
 * ABI. librdps keeps its binary interface within a major version (SONAME librdps.so.MAJOR,
 * symbol versions RDPS_MAJOR.MINOR): a program built against an older 1.x header runs against a
 * newer 1.y library. Structs the caller allocates (rdps_config, rdps_pub_opts, rdps_sub_opts,
 * rdps_counters, rdps_session_stats) grow only at their end, and the functions that take them
 * are called through the static inline wrappers below, which pass the size this header gives
 * them (sizeof): the library reads the fields both know, keeps its defaults for the ones the
 * caller's header did not have, and never writes past the caller's size. Bindings from other
 * languages call the *_sized functions with their struct's size. rdps_claim and rdps_source
 * never change size within a major version; structs the library hands to callbacks
 * (rdps_msg_info, rdps_event) grow only at their end.
 */

/*
 * Error codes. Every function that can fail returns 0 (or a non-negative
 * count) on success and one of these negative codes on failure. OS and verbs
 * errors map to -errno; rdps's own conditions live below -4000.
 * X(name, value, message)
 */
#define RDPS_ERROR_MAP(X)                                                             \
    X(EPERM, -EPERM, "operation not permitted")                                       \
    X(ENOENT, -ENOENT, "no such entry")                                               \
    X(EINTR, -EINTR, "interrupted")                                                   \
    X(EIO, -EIO, "I/O error")                                                         \
    X(EAGAIN, -EAGAIN, "resource temporarily unavailable (back-pressure), try again") \
    X(ENOMEM, -ENOMEM, "out of memory")                                               \
    X(EACCES, -EACCES, "permission denied")                                           \
    X(EBUSY, -EBUSY, "resource busy")                                                 \
    X(EEXIST, -EEXIST, "already exists")                                              \
    X(ENODEV, -ENODEV, "no such RDMA device or port")                                 \
    X(EINVAL, -EINVAL, "invalid argument")                                            \
    X(ENOSPC, -ENOSPC, "no space left (queue or pool full)")                          \
    X(ERANGE, -ERANGE, "value out of range")                                          \
    X(ENOSYS, -ENOSYS, "not implemented")                                             \
    X(ENOTSUP, -ENOTSUP, "not supported here (device, link, ctx or library version)") \
    X(EMSGSIZE, -EMSGSIZE, "message too long")                                        \
    X(EPROTO, -EPROTO, "protocol error")                                              \
    X(EADDRNOTAVAIL, -EADDRNOTAVAIL, "address not available")                         \
    X(ENETDOWN, -ENETDOWN, "network (port) is down")                                  \
    X(ENETUNREACH, -ENETUNREACH, "network unreachable")                               \
    X(EHOSTUNREACH, -EHOSTUNREACH, "host unreachable")                                \
    X(ETIMEDOUT, -ETIMEDOUT, "timed out")                                             \
    X(ECONNREFUSED, -ECONNREFUSED, "connection refused")                              \
    X(ECANCELED, -ECANCELED, "operation canceled")                                    \
    X(EOVERFLOW, -EOVERFLOW, "value too large for defined data type")                 \
    X(ESHUTDOWN, -ESHUTDOWN, "context is shutting down")                              \
    X(EDEVFATAL, -4001, "RDMA device reported a fatal error")                         \
    X(EBADFRAME, -4002, "malformed frame")                                            \
    X(ENOTJOINED, -4003, "multicast group not joined yet")                            \
    X(ECLOSED, -4004, "handle already closed")                                        \
    X(ENOTOWNER, -4005, "called from a thread that does not own the ctx")

enum rdps_error {
#define RDPS_ERROR_ENUM_(name, value, message) RDPS_##name = (value),
    RDPS_ERROR_MAP(RDPS_ERROR_ENUM_)
#undef RDPS_ERROR_ENUM_
};

/* Human-readable text for an error code (never NULL; unknown codes get a generic text). */
RDPS_EXPORT const char *rdps_strerror(int err);
/* Symbolic name of an error code, e.g. "RDPS_EAGAIN" (never NULL). */
RDPS_EXPORT const char *rdps_err_name(int err);
/*
 * Why the calling thread's last rdps call that returns an error code failed, naming the call:
 * "rdps_ctx_create: ibv_create_qp: Cannot allocate memory", "rdps_pub_send: the send queue is
 * full: ...". The rule: every function that returns an int code sets it when it returns a
 * negative code and empties it ("") when it succeeds, so after such a call the message is
 * non-empty exactly when the call failed, and is about that call. Functions that return no code
 * (void, sizes, ids, names, and queries that are never negative) leave it as it was, except
 * rdps_pub_ready and rdps_sub_ready, which set it when they return 0 because the join failed
 * for good. RDPS_EAGAIN's message says why (not ready, send queue full, window closed, ring
 * full, ...). Never NULL; valid until the thread's next rdps call.
 */
RDPS_EXPORT const char *rdps_last_error_message(void);

/* Library version as "MAJOR.MINOR.PATCH". */
RDPS_EXPORT const char *rdps_version(void);

/* ------------------------------------------------------------------------ */
/*
 * Handles. A ctx owns one RDMA port and ONE shared UD queue pair; every publisher and subscriber
 * created on it multiplexes over that QP. Nothing happens in the background: progress is made by
 * rdps_ctx_poll().
 *
 * A handle (rdps_ctx_t *, rdps_pub_t *, rdps_sub_t *) is an id the library looks up, not the
 * object's address (rdps 1.3): destroying in any order is safe, and so is using a handle after
 * its destroy. rdps_ctx_destroy destroys the ctx's publishers and subscribers; destroying one of
 * them afterwards, or any handle twice, does nothing. Every other call on a destroyed handle
 * returns RDPS_ECLOSED (queries return 0), also when its memory was reused by a new handle:
 * ids are never confused. A handle of another type (a subscriber's where a publisher is
 * expected) or a pointer that is no handle: RDPS_EINVAL.
 *
 * Threads (rdps(7), THREADS). A ctx, its publishers and its subscribers are used by one thread
 * at a time: its owner, the thread that created it. A call from another thread returns
 * RDPS_ENOTOWNER (queries 0; destroy does nothing) and rdps_last_error_message() names both
 * threads. To run a ctx on another thread than the one that set it up, the owner hands it over
 * (rdps_ctx_handover) and the next thread that calls on it becomes its owner; a ctx whose owner
 * thread has exited is taken over the same way. Calls any thread may make: rdps_ctx_fd,
 * rdps_ctx_max_datagram_payload, rdps_pub_session, rdps_pub_max_message_size (what never
 * changes), and rdps_pub_send / rdps_pub_send_ex on a concurrent publisher
 * (rdps_pub_opts.concurrent). The check is two loads and a compare per call, on in every build.
 */
typedef struct rdps_ctx rdps_ctx_t;
typedef struct rdps_pub rdps_pub_t;
typedef struct rdps_sub rdps_sub_t;

/*
 * Context configuration. Start from rdps_config_init(); a field left zero (NULL) keeps its
 * default whichever way the struct was filled (rdps_ctx_create puts the default in), so
 * `rdps_config cfg = {0}` is a valid configuration too. Fields whose zero is a value of its own
 * say so: port_num and cm_port (their defaults), the loss generator's fields (no loss, DATA
 * only, seed 0), stats_off, domain_key_id (1), encrypt, parity_blocks (none).
 */
typedef struct rdps_config {
    /*
     * RDMA device, e.g. "rxe0"; NULL: $RDPS_DEVICE when set, else the device of bind_ip, else the
     * first active port. "loopback": the in-process device, for developing and testing without
     * RDMA: every ctx of this process on it shares one fabric (contexts of different threads
     * too), with UD's semantics except the wire (1024-byte datagrams, multicast groups and
     * discovery, unicast NAK/STATUS and repairs, a full receive queue drops, the loss generator);
     * no other process is reachable; bind_ip, cm_port and qkey do not apply. "local" (or
     * "local:1024", "local:4096"): the local device, the processes of this host through shared
     * memory with the same semantics and frames (MTU 1024 or 4096 per directory), a ctx being a
     * member; $RDPS_LOCAL_DIR and $RDPS_LOCAL_GROUP choose who meets (rdps(7), docs/security.md).
     */
    const char *device;
    const char *bind_ip;       /* local IPv4 address selecting the device/port (optional) */
    uint8_t port_num;          /* 0: first ACTIVE port */
    uint16_t cm_port;          /* rdma_cm UDP port answering unicast resolution; 0 (default):
                                  7471, or the next free port when another ctx has it */
    uint32_t qkey;             /* domain Q_Key (default 0x01234567, rdma_cm's UDP Q_Key) */
    const char *group_range;   /* topic groups: CIDR, default "239.192.0.0/16" */
    const char *control_group; /* discovery group, default "239.192.0.1" */
    size_t max_message_size;   /* default 16 MiB; at most 4 GiB - 1 */
    size_t reassembly_memory;  /* cap on partially assembled messages, default 64 MiB */
    uint32_t
        reassembly_timeout_ms; /* partial messages older than this are dropped (default 2000) */
    uint32_t max_sessions;     /* publisher sessions tracked at once (default 1024) */
    /* Per-host quotas (a host is every source QP of one GID, or of one LID without a GRH: the
     * QPN is the sender's choice, so a host is not made larger by using more QPs): what one host
     * can take from the reassembler before it evicts its own state instead of others'. Within a
     * host each QPN's share is the quota divided among the host's QPNs: the QPN holding the most
     * loses first. A quota above its total (max_sessions, max_partials, reassembly_memory)
     * means the total. The names say "source" for compatibility. */
    uint32_t max_sessions_per_source; /* default 64 */
    uint32_t max_partials; /* messages being reassembled, or parked by reliable streams until
                              the holes before them are repaired (default 4096) */
    uint32_t max_partials_per_source;    /* default 2048: a reliable stream's whole window */
    size_t reassembly_memory_per_source; /* default 32 MiB */
    uint32_t announce_interval_ms;       /* discovery announce period (default 1000) */
    /* Discovery's table of remote publishers and subscribers (every entry comes from the fabric,
     * so it is capped; what does not fit is refused and counted in peers_refused). */
    uint32_t max_peers;             /* remote endpoints tracked (default 4096) */
    uint32_t max_remote_only_peers; /* of which of topics with no local endpoint (default 64) */
    uint32_t peer_interval_min_ms;  /* announced intervals are clamped to */
    uint32_t peer_interval_max_ms;  /*   [min, max] (default 10..60000); liveness is 3 of them */
    uint32_t send_slots;            /* registered send buffers (default 1024) */
    uint32_t recv_slots;            /* registered receive buffers (default 4096) */
    /* Built-in loss generator for tests and demos (seeded, per frame type). */
    double loss_rx_rate;       /* probability of dropping a received frame, 0..1 */
    double loss_tx_rate;       /* probability of dropping a frame to be sent, 0..1 */
    uint32_t loss_frame_types; /* bit (1 << frame type): DATA=1, HEARTBEAT=2, NAK=3,
                                  STATUS=4, ANNOUNCE=5, PARITY=6; 0: DATA only */
    uint64_t loss_seed;
    /* 1: no live-counters file. By default every ctx publishes its counters (the ctx's, every
     * publisher's and subscriber's, bad frames by reason) for rdps-stat in
     * /dev/shm/rdps-PID-N.stat ($RDPS_STAT_DIR overrides the directory; RDPS_STAT=0 in the
     * environment turns it off for the process), refreshed from rdps_ctx_poll at most every
     * 100 ms and removed by rdps_ctx_destroy. */
    int stats_off;
    /*
     * Authenticated domain (rdps 1.1; rdps(7), "Authenticated domains"). With a key, every frame
     * this ctx sends carries a tag under it (XChaCha20-Poly1305, 44 bytes per datagram; 40
     * before 1.3) bound to the sender's address as receivers see it, and a received frame
     * without a valid tag under an installed key for the address it came from is dropped and
     * counted (auth_* counters) before it touches any state; a replayed frame (DATA or control,
     * from any address) and one sealed further than replay_max_age_ms from our clock are dropped
     * too. Every host of the domain needs the key; a keyless
     * ctx drops keyed frames (bad_frames, reserved field) and a keyed one keyless frames.
     * domain_key: RDPS_DOMAIN_KEY_BYTES secret bytes, copied by rdps_ctx_create (not kept).
     * NULL: the key file domain_key_file names (format: rdps_domain_key_read); domain_key_file
     * NULL: the file $RDPS_DOMAIN_KEY_FILE names, when set and not empty; domain_key_file "":
     * no key whatever the environment says. Rollover without a restart: rdps_ctx_key_add.
     */
    const uint8_t *domain_key;
    uint32_t domain_key_id;      /* domain_key's id, 1..RDPS_DOMAIN_KEY_ID_MAX (0: 1) */
    int encrypt;                 /* 1: payloads encrypted too, not only authenticated (a key) */
    const char *domain_key_file; /* see domain_key */
    uint32_t replay_senders;     /* keyed: senders the anti-replay table holds, least recently
                                    heard evicted (default 1024, 16..2^20) */
    /*
     * Fabrics without multicast (rdps(7), "Unicast"). peers: seed peers, "ip[:port],..." (at most
     * 16 IPv4 addresses, port: the peer's cm_port, default 7471; on the loopback device a ctx's
     * address is 127.77.0.N, N its endpoint number); NULL: $RDPS_PEERS when set, "": none. A ctx
     * sends its announcements to its seeds by unicast, and to every peer that it learns from
     * them (each shares up to 16 of the peers it has heard directly, every announce interval):
     * discovery works where no multicast does. Every ctx answers peers that contact it, seeds
     * configured or not, so a ctx may be a seed and nothing more. Announcements still go to the
     * discovery group too while it is joined.
     */
    const char *peers;
    uint32_t max_contacts; /* peers discovery talks to by unicast (default 256, 16..4096); of
                              them at most 16 per host, and 16 only named by others (probed
                              3 announce intervals, 8 new a interval at most); when full, a
                              peer that speaks for itself displaces an unconfirmed or stale one,
                              else one of the host holding the most (contacts_displaced) */
    /*
     * RDPS_TRANSPORT_AUTO topics use unicast when their group is not joined within this long,
     * or when this long after the first announcement that came by unicast none came through a
     * multicast group (default 3000, 10..600000).
     */
    uint32_t multicast_timeout_ms;
    /* Subscribers one topic's publishers send unicast copies to (each a subscribing ctx; default
     * 256, 1..4096, and at most half of send_slots); at most unicast_subscribers_per_host per host.
     * When full, a newcomer displaces an unconfirmed one (it never reported to a reliable
     * publisher of the topic) of the host holding the most, if that host holds more than the
     * newcomer's would (unicast_displaced); else it is refused (unicast_refused). */
    uint32_t max_unicast_subscribers;
    /* Reliable subscribers: block records kept for parity repairs (rdps_pub_opts.parity_k; 0:
     * none, such a publisher's losses are repaired by retransmission; at most 4096). A record
     * holds a block of up to 64 datagrams: parity_blocks x 64 x the path MTU bytes (32 records
     * cover the default window: 2 MiB at MTU 1024), one stream at most 32 of them. */
    uint32_t parity_blocks;
    /*
     * Keyed (rdps 1.3): a frame sealed more than this far from our clock (either way) is dropped
     * (auth_stale): how long a recorded frame could be replayed into a receiver that no longer
     * knows its sender (restarted, or past replay_senders). The hosts' clocks (CLOCK_REALTIME)
     * must agree within it: NTP or PTP. Default 30000, 2000..3600000.
     */
    uint32_t replay_max_age_ms;
    /* Unicast fan-out (rdps 1.3): subscribing contexts of one host (GID, or LID without a GRH)
     * a topic's publishers copy to, and so copies of each datagram one host costs them (default
     * 4, 1..4096). More are refused (unicast_refused). */
    uint32_t unicast_subscribers_per_host;
} rdps_config;

/* Size of a domain key (rdps_config.domain_key) and the largest key id. */
#define RDPS_DOMAIN_KEY_BYTES  32
#define RDPS_DOMAIN_KEY_ID_MAX 0xFFFFFFu

/* Fills the first `size` bytes of *cfg with the defaults (zero past the library's own struct). */
RDPS_EXPORT void rdps_config_init_sized(rdps_config *cfg, size_t size);
/* Fills *cfg with the defaults. */
static inline void rdps_config_init(rdps_config *cfg)
{
    rdps_config_init_sized(cfg, sizeof(*cfg));
}

/*
 * rdps_ctx_create with the caller's sizeof(rdps_config) and RDPS_VERSION_NUMBER. RDPS_EINVAL
 * when size is below the first 1.0 struct's, or when the caller's struct is larger than the
 * library's and a field the library does not know is set; RDPS_ENOTSUP when the caller's
 * header is of another major version or a newer minor one than the library.
 */
RDPS_EXPORT int rdps_ctx_create_sized(const rdps_config *cfg, size_t size, unsigned header_version,
                                      rdps_ctx_t **out);
/* Opens the device port, creates the shared QP and buffer pools, joins the
 * discovery group. Returns 0 and *out, or a negative code (details in
 * rdps_last_error_message()): RDPS_EINVAL (NULL cfg or out, a field out of range, a bad
 * address, seed list or key file), RDPS_ENOTSUP (header and library versions), RDPS_ENODEV (no
 * such device or port), RDPS_ENETDOWN (no ACTIVE port), RDPS_ENOENT or RDPS_EACCES (the key
 * file), RDPS_ENOMEM, or another negative errno from verbs, rdma_cm or the OS. */
static inline int rdps_ctx_create(const rdps_config *cfg, rdps_ctx_t **out)
{
    return rdps_ctx_create_sized(cfg, sizeof(*cfg), RDPS_VERSION_NUMBER, out);
}
/* Destroys every publisher and subscriber still open, leaves groups, frees everything. NULL, a
 * destroyed ctx and a ctx another thread owns (logged) are left alone. */
RDPS_EXPORT void rdps_ctx_destroy(rdps_ctx_t *ctx);
/*
 * Gives up the calling thread's ownership of ctx (rdps 1.3; see "Threads" above): the next thread
 * that calls on the ctx or its handles becomes its owner. The create-here-run-there pattern:
 * create the ctx, its publishers and subscribers, rdps_ctx_handover(ctx), start the thread that
 * runs it; to destroy it from the first thread again, the runner hands it back (or exits).
 * Returns 0, or RDPS_EINVAL (NULL), RDPS_ECLOSED (destroyed), RDPS_ENOTOWNER (another thread
 * owns it), RDPS_EBUSY (from a callback: the poll running it holds the ctx).
 */
RDPS_EXPORT int rdps_ctx_handover(rdps_ctx_t *ctx);
/* Makes progress: completions, receives (callbacks run here), joins, discovery,
 * timers. Handles at most `budget` received datagrams (<= 0: a default batch).
 * Returns the number of datagrams handled, or RDPS_EINVAL (NULL), RDPS_EBUSY (called
 * from a callback: queued sends were posted, nothing received), RDPS_ECLOSED (a
 * callback destroyed the ctx, or a destroyed handle), RDPS_ENOTOWNER (another thread owns the
 * ctx: "Threads"), RDPS_EDEVFATAL or another negative errno (the device). */
RDPS_EXPORT int rdps_ctx_poll(rdps_ctx_t *ctx, int budget);
/*
 * Running a ctx from an application's own event loop (epoll, libuv, libevent, ...):
 *
 *     add rdps_ctx_fd(ctx) to the loop, for reading;
 *     for (;;) {
 *         while (rdps_ctx_poll(ctx, 0) > 0)      // 1. drain: callbacks run here
 *             ;
 *         if (rdps_ctx_arm(ctx) == RDPS_EAGAIN)  // 2. arm; work came in meanwhile:
 *             continue;                          //    poll again instead of sleeping
 *         wait for the fd (and your own fds) for at most rdps_ctx_next_timeout_ms(ctx) ms;
 *     }
 *
 * rdps_ctx_fd() is readable when, after an rdps_ctx_arm() that returned 0, a datagram arrived,
 * a send completed that a blocked sender waits for, a multicast join or leave progressed, or the
 * device reported an event: it means "call rdps_ctx_poll()". It is level-triggered and stays
 * readable until the next rdps_ctx_arm() consumes it; rdps_ctx_poll() alone never does (a
 * busy-polling application pays no system call for notifications it never sleeps on). So after
 * a wakeup, drain and arm again before sleeping; the loop above wakes once per burst of work and
 * never for nothing. Edge-triggered loops (EPOLLET) work with the same rule.
 *
 * The race rule: rdps_ctx_arm() requests the next notification and only then looks once more
 * for work that landed before the request; when it finds some it returns RDPS_EAGAIN (poll,
 * do not sleep), so nothing is slept on between the last poll and the wait. Timers (heartbeats,
 * announcements, repairs, timeouts) raise nothing on the fd: bound every wait by
 * rdps_ctx_next_timeout_ms(), and rdps_ctx_arm() returns RDPS_EAGAIN when one is already due.
 * rdps_ctx_wait() is this loop's body for applications without a loop of their own.
 */
/* The ctx's event fd (see above); the same fd for the ctx's lifetime, any thread may ask.
 * RDPS_EINVAL for NULL, RDPS_ECLOSED for a destroyed handle. */
RDPS_EXPORT int rdps_ctx_fd(rdps_ctx_t *ctx);
/*
 * Prepares to sleep on rdps_ctx_fd(): posts sends queued with RDPS_SEND_MORE, consumes the fd's
 * readiness and requests the next notification. Returns 0 when armed with nothing waiting (sleep
 * on the fd, at most rdps_ctx_next_timeout_ms()), RDPS_EAGAIN when work is already waiting or a
 * timer is due (call rdps_ctx_poll(), then arm again), RDPS_EBUSY from inside a callback,
 * RDPS_EINVAL for NULL, RDPS_ECLOSED (a destroyed handle), RDPS_ENOTOWNER (another thread owns the
 * ctx: "Threads"), or RDPS_EDEVFATAL or another negative errno on a device error.
 */
RDPS_EXPORT int rdps_ctx_arm(rdps_ctx_t *ctx);
/* Milliseconds until the ctx's next timer (heartbeat, announce, timeout): 0..60000, never
 * negative (0 for NULL: a negative timeout would make an epoll_wait block for ever). */
RDPS_EXPORT int rdps_ctx_next_timeout_ms(rdps_ctx_t *ctx);
/* Polls, arms and waits up to timeout_ms (bounded by the next timer) for work, then polls again:
 * the event loop above in one call. Returns what rdps_ctx_poll returns (RDPS_EINVAL, RDPS_EBUSY,
 * RDPS_ECLOSED, RDPS_ENOTOWNER, RDPS_EDEVFATAL, ...), or a negative errno of epoll_wait. */
RDPS_EXPORT int rdps_ctx_wait(rdps_ctx_t *ctx, int timeout_ms);
/* Largest payload of one datagram (active MTU minus the 48-byte rdps header, and minus the
 * 44-byte trailer on a keyed ctx); 0 for NULL. One message of this size fits a datagram; several
 * share one when their lengths plus 2 bytes each fit it. */
RDPS_EXPORT size_t rdps_ctx_max_datagram_payload(const rdps_ctx_t *ctx);

/*
 * Domain keys (rdps 1.1). A key file holds one key: 64 hexadecimal characters (32 bytes),
 * optionally preceded by its id in decimal and a colon ("7:00112233..."; no id: 1); blank lines,
 * lines starting with '#' and whitespace around the key are ignored. Like ssh with a private
 * key, rdps refuses a file that its group or others may read or write, or that another user than
 * us or root owns (RDPS_EACCES: chmod 600), and anything but a regular file (RDPS_EINVAL: a FIFO
 * or a device is refused at once, never waited on; a symbolic link is followed).
 * rdps_domain_key_read fills key and *key_id (key_id may be NULL) and returns 0, or RDPS_ENOENT,
 * RDPS_EACCES or RDPS_EINVAL (a malformed file, NULL path or key), or another negative errno of
 * open/read, the reason in rdps_last_error_message().
 */
RDPS_EXPORT int rdps_domain_key_read(const char *path, uint8_t key[RDPS_DOMAIN_KEY_BYTES],
                                     uint32_t *key_id);
/*
 * Rollover on a keyed ctx, without a restart and without losing a frame: (1) on every host
 * rdps_ctx_key_add(next): frames under it are accepted from now on; (2) once every host has it,
 * rdps_ctx_key_use(next) on each: frames are sent under it; (3) once every host sends under it,
 * rdps_ctx_key_remove(old). A ctx holds two keys at most: add returns RDPS_ENOSPC with two,
 * RDPS_EEXIST for an id it has; use returns RDPS_ENOENT for an id it does not have; remove
 * refuses the key in use (RDPS_EBUSY). On a ctx created without a key: RDPS_ENOTSUP. NULL ctx or
 * key, or an id outside 1..RDPS_DOMAIN_KEY_ID_MAX: RDPS_EINVAL. RDPS_ECLOSED (a destroyed handle),
 * RDPS_ENOTOWNER (another thread owns the ctx: "Threads"). rdps_ctx_key_in_use returns the id
 * frames are sent under, 0 for a keyless (or NULL) ctx.
 */
RDPS_EXPORT int rdps_ctx_key_add(rdps_ctx_t *ctx, const uint8_t key[RDPS_DOMAIN_KEY_BYTES],
                                 uint32_t key_id);
RDPS_EXPORT int rdps_ctx_key_use(rdps_ctx_t *ctx, uint32_t key_id);
RDPS_EXPORT int rdps_ctx_key_remove(rdps_ctx_t *ctx, uint32_t key_id);
RDPS_EXPORT uint32_t rdps_ctx_key_in_use(const rdps_ctx_t *ctx);

/* ------------------------------------------------------------------------ */
/*
 * Topic names. A topic is named by 1..RDPS_TOPIC_NAME_MAX bytes of printable ASCII without
 * spaces (0x21 '!' .. 0x7e '~'), e.g. "md.quotes.AAPL"; names are compared byte for byte
 * (case-sensitive) and carry no hierarchy. rdps_pub_create, rdps_sub_create,
 * rdps_ctx_map_topic and rdps_topic_group return RDPS_EINVAL for any other name (NULL, empty,
 * too long, a space, a control or non-ASCII byte), with the reason in
 * rdps_last_error_message(); rdps_topic_id returns 0 for it.
 *
 * A name maps to a 64-bit topic id carried in every frame (rdps_topic_id) and, unless mapped
 * explicitly, to a multicast group in group_range. Groups are shared by many names; ids are
 * what keep names apart: a subscriber receives only frames carrying its own name's id. Two
 * names with the same id (about one chance in 40 million among a million names) are refused in one
 * ctx (RDPS_EEXIST) and, across hosts, detected through discovery: RDPS_EVENT_TOPIC_COLLISION
 * and the topic_collisions counter.
 */
#define RDPS_TOPIC_NAME_MAX 255

/* ------------------------------------------------------------------------ */
/* Publishing. */
/* Reliable publishers: whose progress gates the publisher (flow control). */
typedef enum rdps_flow_control {
    RDPS_FLOW_MAX = 0,    /* the fastest receiver (default): slower ones that fall further behind
                             than the ring holds are evicted (RDPS_EVENT_RECEIVER_EVICTED) */
    RDPS_FLOW_MIN = 1,    /* the slowest live receiver; one silent for receiver_timeout_ms, or
                             holding the publisher back for 2 s without progress, is dropped
                             (it rejoins once past where it was dropped; a host's second drop
                             within a minute keeps its receivers out 2 s, doubling) */
    RDPS_FLOW_TAGGED = 2, /* the slowest live receiver carrying flow_tag, once at least
                             flow_min_receivers of them are live (nothing is sent before) */
} rdps_flow_control;

/*
 * How a topic's datagrams travel (rdps_pub_opts.transport, rdps_sub_opts.transport; rdps(7),
 * "Unicast"). Publishers and subscribers of one topic in one ctx use one mode each side
 * (RDPS_EINVAL otherwise); the two sides and other contexts may differ: a topic may have
 * subscribers on its group and others by unicast, and each gets every datagram once.
 */
typedef enum rdps_transport_mode {
    /* Default. A publisher sends each datagram to the topic's multicast group, plus one copy by
     * unicast to each subscriber that asked for unicast; a subscriber joins the group. */
    RDPS_TRANSPORT_MULTICAST = 0,
    /* A publisher joins no group: it sends one copy of each datagram to each subscriber that
     * discovery announced from its own address (as one work-request chain from one buffer); a
     * subscriber joins no group and announces that it wants copies. Needs discovery to reach
     * the other side: the discovery group, or seed peers (rdps_config.peers). */
    RDPS_TRANSPORT_UNICAST = 1,
    /* Multicast, and unicast when the group is not joined within multicast_timeout_ms, or when
     * the ctx hears its peers by unicast only (rdps_config.multicast_timeout_ms):
     * RDPS_EVENT_UNICAST_FALLBACK and the unicast_fallbacks counter say so. */
    RDPS_TRANSPORT_AUTO = 2,
} rdps_transport_mode;

/*
 * Batching (rdps 1.3; rdps_pub_opts.batching): whether small messages share datagrams. Every
 * message that fits a datagram's payload may go in one with others (each keeps its length; a
 * message longer than a datagram is fragmented as before and never shares one). See
 * RDPS_SEND_MORE for when messages join a datagram and the latency each rule adds.
 */
typedef enum rdps_batch_mode {
    RDPS_BATCH_AUTO = 0, /* default: batch while an earlier send is still queued, with
                            RDPS_SEND_MORE, or within batch_linger_us */
    RDPS_BATCH_OFF = 1,  /* one message per datagram (rdps 1.2's behaviour); RDPS_SEND_MORE then
                            only chains datagrams into one post */
} rdps_batch_mode;

struct rdps_event; /* below, with the events and what each carries */
typedef void (*rdps_event_cb)(void *user, const struct rdps_event *event);

/*
 * Publisher options; zero-initialize, NULL for all defaults. An option that cannot apply is
 * refused by rdps_pub_create with RDPS_EINVAL (rdps_last_error_message() names it and says why),
 * never silently ignored: ring_bytes, flow, flow_tag, flow_min_receivers, receiver_timeout_ms
 * and rate_limit need reliable = 1 (left zero otherwise); flow_tag and flow_min_receivers need
 * flow = RDPS_FLOW_TAGGED. Out of range, also RDPS_EINVAL: flow not one of the rdps_flow_control
 * values; RDPS_FLOW_TAGGED with flow_tag 0, or with flow_min_receivers above 256 (the receivers
 * a publisher tracks: it would never send); ring_bytes outside 64 KiB..4 GiB (0: the default);
 * rate_limit outside one datagram per second..100 GB/s (0: none). group, on_event and event_user
 * are taken by every publisher.
 */
typedef struct rdps_pub_opts {
    const char *group; /* explicit multicast group (dotted IPv4); NULL: hash of the topic name */
    /*
     * 1: reliable publishing. Frames are written once into a retransmission ring of ring_bytes
     * (default 16 MiB, registered with the device); subscribers that ask for reliability NAK
     * what they miss and report their progress (STATUS); repairs go by unicast to one asker,
     * by multicast when several, on different hosts, asked. rdps_pub_send (and rdps_pub_claim,
     * for one datagram) returns RDPS_EAGAIN, before anything is written, when the ring or the
     * flow-control window cannot take the whole message, or while a reliable subscriber
     * discovery announced has not reported its position yet (at most 1 s; under RDPS_FLOW_MAX
     * only before the first subscriber has reported), so a first burst is not sent into a
     * window nobody has opened. Only subscribers discovery announced from their own address
     * take part in flow control; a host whose announced subscriber never reported holds
     * nothing for a minute (doubling), and such holds together last at most 1 s, then 1/32 of
     * the time. Anyone else's NAKs get bounded repairs (see docs/security.md).
     */
    int reliable;
    size_t ring_bytes;
    rdps_flow_control flow;
    uint32_t flow_tag;            /* RDPS_FLOW_TAGGED: the tag receivers announce (nonzero) */
    uint32_t flow_min_receivers;  /* RDPS_FLOW_TAGGED: tagged receivers needed to start */
    uint32_t receiver_timeout_ms; /* a receiver silent this long leaves flow control (5000) */
    /* optional: RDPS_EVENT_SUBSCRIBER_SEEN/_GONE, RDPS_EVENT_TOPIC_COLLISION, and for a
     * reliable publisher RDPS_EVENT_RECEIVER_* (see rdps_event); called with event_user */
    rdps_event_cb on_event;
    void *event_user;
    /*
     * Reliable publishers: at most this many datagram bytes per second on the wire, new data
     * and repairs together (0: no limit; else at least one datagram per second, at most
     * 100 GB/s). Messages wait in the ring and leave evenly (bursts of 2 ms worth), repairs
     * first within the same limit (at most 3 new datagrams between two repairs when both wait);
     * rdps_pub_send returns RDPS_EAGAIN once the window is full of waiting frames. A
     * publisher sending faster than its receivers drain builds a queue that every repair
     * waits behind, and the window waits on the repair: set the limit a little below what the
     * slowest receiver you keep drains (PGM and LBT-RM publishers are rate-limited the same
     * way). The counter rate_waits says how often new data waited for it.
     */
    uint64_t rate_limit;
    /* How the datagrams go: rdps_transport_mode (default multicast); a value outside the enum is
     * RDPS_EINVAL, and so is another mode than the topic's other publishers in this ctx use. */
    rdps_transport_mode transport;
    /*
     * Reliable publishers: parity repairs (0: none; else a power of two, 2..128; 64 suits most).
     * A NAK from subscribers with parity_blocks counts a block's missing datagrams, and the
     * publisher answers with that many parity datagrams (Reed-Solomon) of the block: each one
     * repairs any one missing datagram at every subscriber that misses one, so a repair serves
     * many receivers with different losses. Datagrams carry 26 bytes less payload (room for a
     * parity datagram's header); heartbeats carry the block size, which subscribers of rdps
     * before 1.1 refuse: set it only where every subscriber runs 1.1 or later.
     */
    uint32_t parity_k;
    /*
     * Reliable publishers with parity_k: parity datagrams of each block sent unasked, by
     * multicast, right after its last datagram (0: none, the default; at most parity_k, else
     * RDPS_EINVAL, and so without parity_k). For links with steady loss: a subscriber losing at
     * most this many of a block rebuilds them without a NAK round; a NAK for more gets the
     * following parity datagrams. They cost this many datagrams per parity_k, every block, and
     * spend the repair budget like repairs (counters parity_sent, parity_proactive).
     */
    uint32_t parity_proactive;
    /* Batching (rdps 1.3): rdps_batch_mode (default RDPS_BATCH_AUTO); another value is
     * RDPS_EINVAL. */
    rdps_batch_mode batching;
    /*
     * Batching: keep a datagram open up to this many microseconds after its first message for
     * more to join (0, the default: none; at most 1 000 000, else RDPS_EINVAL; with
     * RDPS_BATCH_OFF, RDPS_EINVAL): the implicit batching interval of other buses. It goes when
     * full, when the time is up (at the next rdps_ctx_poll(); rdps_ctx_next_timeout_ms() counts
     * it, so an event loop wakes for it, at millisecond granularity), at rdps_ctx_flush(), or when
     * the application is about to sleep on the ctx's fd with less than 1 ms of it left.
     */
    uint32_t batch_linger_us;
    /*
     * rdps 1.3: a concurrent publisher (rdps(7), THREADS), the role of Aeron's concurrent
     * publication against its exclusive one. 0 (default): exclusive, used by its ctx's thread
     * only, like everything else on the ctx. 1: any thread may call rdps_pub_send and
     * rdps_pub_send_ex on it (and rdps_pub_ready, rdps_pub_session, rdps_pub_max_message_size).
     * Another thread's message is copied into the publisher's queue without a lock (one
     * compare-and-swap) and returns 0; the ctx's thread sends what the queue holds at its next
     * rdps_ctx_poll() (and before its own sends on the publisher), packed into datagrams by
     * batching, so RDPS_SEND_MORE changes nothing there. A thread sleeping in rdps_ctx_wait() or
     * on rdps_ctx_fd() is woken. Another thread's send returns RDPS_EAGAIN when the queue is
     * full or the group not joined yet (poll-free: retry), RDPS_EMSGSIZE above the longest
     * message the queue takes (half of concurrent_queue_bytes; rdps_pub_max_message_size),
     * RDPS_ECLOSED once the publisher is destroyed. A message the ctx's thread then cannot send
     * (the join failed, the device failed, the ctx was destroyed first) is counted in
     * queue_dropped. Claims and everything else stay the ctx's thread's (RDPS_ENOTOWNER). Stop
     * the other threads' sends before destroying the publisher or its ctx.
     */
    uint32_t concurrent;
    /* The concurrent publisher's queue in bytes (0: 1 MiB; 4096..2^30, rounded up to a power
     * of two; RDPS_EINVAL otherwise, or without concurrent). */
    uint32_t concurrent_queue_bytes;
} rdps_pub_opts;

/* Creates a publisher of `topic` (a name as described under "Topic names": RDPS_EINVAL
 * otherwise, and for NULL ctx or out and options that cannot apply; RDPS_EEXIST when another
 * topic of this ctx has the same id; RDPS_ECLOSED while the ctx is being destroyed or for a
 * destroyed handle; RDPS_ENOTOWNER (another thread owns the ctx: "Threads"); RDPS_ENOMEM;
 * a negative errno when starting the group's join or registering a reliable ring fails). */
RDPS_EXPORT int rdps_pub_create_sized(rdps_ctx_t *ctx, const char *topic, const rdps_pub_opts *opts,
                                      size_t opts_size, rdps_pub_t **out);
static inline int rdps_pub_create(rdps_ctx_t *ctx, const char *topic, const rdps_pub_opts *opts,
                                  rdps_pub_t **out)
{
    return rdps_pub_create_sized(ctx, topic, opts, sizeof(*opts), out);
}
RDPS_EXPORT void rdps_pub_destroy(rdps_pub_t *pub);
/*
 * 1 once the publisher's multicast group is joined and sends can go out; otherwise 0, never
 * negative: before, for NULL or a closed publisher (destroyed from a callback), and when the join
 * failed for good (rdps_pub_send then returns RDPS_ENOTJOINED, and rdps_last_error_message()
 * says why).
 */
RDPS_EXPORT int rdps_pub_ready(const rdps_pub_t *pub);
/* Publishes one message of 0..rdps_pub_max_message_size() bytes (copied; the
 * buffer is free on return). Returns 0, RDPS_EAGAIN when not ready or the send
 * queue is full (nothing was sent: poll and retry; when it persists, wait with
 * rdps_ctx_wait() rather than spin: on soft-RoCE the kernel does the device's
 * work on the same CPUs), RDPS_EMSGSIZE when too long, RDPS_EBUSY while the
 * publisher has a claim outstanding (rdps_pub_claim), RDPS_EINVAL (NULL pub, NULL
 * data with len > 0), RDPS_ECLOSED (destroyed, or the ctx is being
 * destroyed; after the send: a local subscriber's callback destroyed the ctx),
 * RDPS_ENOTOWNER (another thread owns the ctx: "Threads"),
 * RDPS_ENOTJOINED (the group's join failed for good), RDPS_ETIMEDOUT (send buffers
 * did not come back within 5 s in the middle of a message), RDPS_EDEVFATAL or another
 * negative errno (the device). rdps_last_error_message() says which (a reliable
 * publisher's RDPS_EAGAIN: ring full, flow-control window closed, a subscriber not
 * reported yet, too few tagged receivers). */
RDPS_EXPORT int rdps_pub_send(rdps_pub_t *pub, const void *data, size_t len);
/*
 * rdps_pub_send with flags.
 *
 * When messages join a datagram (batching, rdps_pub_opts.batching = RDPS_BATCH_AUTO). A publisher
 * keeps at most one datagram open; a message that fits the room left joins it, one that does not
 * sends it and opens the next, one longer than a datagram sends it and goes in fragments.
 *   - By default, opportunistically: a message goes out at once, in a datagram of its own, when
 *     nothing is waiting (no latency added to a lone message). While an earlier send of the ctx
 *     is still queued (its completion not yet seen by a poll) or the send queue is
 *     back-pressured, a message opens a datagram instead of waiting behind it in one of its own,
 *     and the messages after it join. It goes at the first rdps_ctx_poll() that sees that
 *     completion (the device's time to send what was ahead, which the message would have waited
 *     anyway), when full, at rdps_ctx_flush(), rdps_ctx_arm() or rdps_ctx_wait() (going to
 *     sleep), and at the latest at the poll 1 ms after the first poll that found it waiting.
 *     Poll while sending: a sender that never polls sees no completion, so its messages join
 *     until full (a message more than 1 ms after the publisher's last post looks for the
 *     completion itself and goes at once); end a burst with rdps_ctx_flush() or a poll.
 *   - RDPS_SEND_MORE: more messages follow at once: hold this one in the open datagram until a
 *     send without the flag, rdps_ctx_flush(), the next poll, or the datagram is full (a full
 *     one is queued on the device at once, its doorbell rung with the rest of the chain).
 *   - rdps_pub_opts.batch_linger_us: hold each datagram that long for more messages.
 * Every message keeps its own rdps_msg_info at the subscriber (its ordinal, its datagram's
 * sequence, its publisher's timestamp: when its datagram was opened, so a message that joined
 * later shows a little more latency than it had). With RDPS_BATCH_OFF, RDPS_SEND_MORE only
 * leaves the message's datagrams queued to be posted with the next send (one work-request
 * chain, one doorbell). Reliable publishers batch the same way, in their ring: a message joins
 * the newest datagram while it waits to be posted (earlier ring datagrams still in flight, at
 * most 1 ms from its opening; the window, the rate limit, RDPS_SEND_MORE, the linger). Returns what
 * rdps_pub_send returns, and RDPS_EINVAL for a flag other than RDPS_SEND_MORE.
 */
#define RDPS_SEND_MORE 0x1u
RDPS_EXPORT int rdps_pub_send_ex(rdps_pub_t *pub, const void *data, size_t len, unsigned flags);
/* Posts every datagram queued or held open (RDPS_SEND_MORE, batching, lingering) by the ctx's
 * publishers. Returns 0, RDPS_EINVAL (NULL), RDPS_ECLOSED (a destroyed handle), RDPS_ENOTOWNER
 * (another thread owns the ctx: "Threads"), or RDPS_EDEVFATAL or another negative errno when the
 * device refuses the post. */
RDPS_EXPORT int rdps_ctx_flush(rdps_ctx_t *ctx);

/*
 * Zero-copy send: claim room, write the message into claim.data (up to claim.capacity bytes),
 * commit. rdps_pub_claim claims one datagram's payload, rdps_pub_claim_ex any length up to the
 * publisher's max_message_size (below). The same rules on every publisher:
 *
 * rdps_pub_claim: an unreliable publisher lends a registered send buffer; a reliable one reserves
 * the room in its retransmission ring, where the frame is posted and repaired from, so the
 * message is never copied. claim.capacity is one datagram's payload
 * (rdps_ctx_max_datagram_payload()), at most the ctx's max_message_size. Returns 0, or (with
 * claim.data NULL and nothing held) RDPS_EAGAIN when a send could not go either (group still
 * joining; the send pool full; reliable: the ring or the flow-control window cannot take one
 * more datagram, or a subscriber has not reported yet, as rdps_pub_send; counted in
 * send_backpressure: poll and retry), RDPS_EBUSY when the publisher has a claim outstanding,
 * RDPS_EINVAL, RDPS_ECLOSED, RDPS_ENOTOWNER, RDPS_ENOTJOINED.
 *
 * One claim per publisher: until it is committed or aborted, a second rdps_pub_claim and
 * rdps_pub_send / rdps_pub_send_ex on that publisher return RDPS_EBUSY (nothing sent, not
 * counted as back-pressure). Other publishers, rdps_ctx_poll, rdps_ctx_wait and rdps_ctx_flush
 * go on as usual; a reliable publisher keeps posting, repairing and answering receivers.
 *
 * rdps_pub_commit sends the first len bytes of the claim (sequence and timestamp are assigned
 * now) like rdps_pub_send: queued to the device, or appended to the ring and posted under the
 * same flow control and rate limit; delivered at once to subscribers in the same ctx; counted in
 * msgs_sent. Admission was decided at claim: commit never returns RDPS_EAGAIN for the window or
 * the ring. Commit ends the claim whatever it returns, except RDPS_EINVAL:
 *   0              sent.
 *   RDPS_EMSGSIZE  len above claim.capacity (as the claim gave it): nothing sent.
 *   RDPS_ENOTOWNER another thread owns the publisher's ctx: nothing happens.
 *   RDPS_ECLOSED   the publisher was destroyed (with its claim) or the ctx is being destroyed:
 *                  nothing sent; or, after the message was sent, a callback of a local
 *                  subscriber destroyed the ctx (as rdps_pub_send).
 *   RDPS_EINVAL    pub or claim NULL, or claim is not the publisher's outstanding claim (already
 *                  committed or aborted, a copy of one, another publisher's, never claimed):
 *                  nothing happens, never a second send.
 *   other codes    unreliable publishers: the device refused the datagram (RDPS_EAGAIN when
 *                  sends made since the claim filled its send queue, RDPS_EDEVFATAL, ...): not
 *                  sent.
 * rdps_pub_abort gives the claim back unsent: no sequence is used, nothing is left behind; a claim
 * that is not outstanding is ignored.
 *
 * Lifetime: claim.data is valid from a successful claim until its commit or abort. Destroying the
 * publisher (or its ctx) releases an outstanding claim; claim.data is invalid from then on.
 */
typedef struct rdps_claim {
    void *data;
    size_t capacity;
    uint64_t opaque_[3];
} rdps_claim;
RDPS_EXPORT int rdps_pub_claim(rdps_pub_t *pub, rdps_claim *claim);
/*
 * rdps_pub_claim for a message of at most len bytes (rdps 1.3), with send flags; claim.capacity is
 * len. rdps_pub_claim is rdps_pub_claim_ex(pub, the datagram's payload, 0, claim).
 *   - Up to one datagram's payload (rdps_ctx_max_datagram_payload()): the room is taken in the
 *     publisher's open datagram when it fits there (batching), else in a new one, or in the ring.
 *   - Longer, up to rdps_pub_max_message_size() (else RDPS_EMSGSIZE): one contiguous buffer in
 *     the ctx's claim buffer (max_message_size bytes, at least 64 KiB, registered with the device
 *     at the first such claim). An unreliable publisher's commit sends each fragment from where
 *     the application wrote it: a work request of two SGEs, the fragment's header from a send
 *     buffer and its payload from the claim buffer, never copied (a keyed ctx's sealing and the
 *     loopback device copy it, as they copy every datagram). A reliable publisher's commit copies
 *     the message into its ring, where its frames are posted, repaired and parity-coded from:
 *     when the ring or the window cannot take it yet, that commit returns RDPS_EAGAIN and the
 *     claim stays outstanding (poll, then commit it again): the one exception to "commit ends
 *     the claim". RDPS_EAGAIN at the claim: the claim buffer is held by messages still being sent
 *     (poll) or by another publisher's claim of this ctx.
 * With RDPS_SEND_MORE the commit holds its datagrams as rdps_pub_send_ex does.
 */
RDPS_EXPORT int rdps_pub_claim_ex(rdps_pub_t *pub, size_t len, unsigned flags, rdps_claim *claim);
RDPS_EXPORT int rdps_pub_commit(rdps_pub_t *pub, rdps_claim *claim, size_t len);
RDPS_EXPORT void rdps_pub_abort(rdps_pub_t *pub, rdps_claim *claim);
/*
 * The longest message the publisher takes: the ctx's max_message_size, and for a reliable
 * publisher at most what its ring holds (ring_bytes / MTU datagrams of MTU - 48 bytes: 62 464
 * bytes with a 64 KiB ring at MTU 1024, a little under 16 MiB with the default 16 MiB ring; a
 * 32 MiB ring takes the default max_message_size of 16 MiB). Not a receiver's sequence window
 * (2048 datagrams): a longer message streams through it, its datagrams released into the
 * message in order as they come, so the window bounds a receiver's tracking, the message its
 * reassembly memory (reassembly_memory, reassembly_memory_per_source). 0 for NULL or a closed
 * publisher.
 */
RDPS_EXPORT size_t rdps_pub_max_message_size(const rdps_pub_t *pub);
/* The publisher's session id (random, nonzero); 0 for NULL. */
RDPS_EXPORT uint32_t rdps_pub_session(const rdps_pub_t *pub);
/*
 * Live subscribers of the topic: those of other contexts discovery knows (announcing, not left:
 * the ones RDPS_EVENT_SUBSCRIBER_SEEN told of) plus this ctx's own. 0 for NULL or a closed
 * publisher, never negative.
 */
RDPS_EXPORT int rdps_pub_subscriber_count(const rdps_pub_t *pub);
/*
 * Reliable publishers: receivers in flow control, or catching up to it (a late join), that have
 * not yet reported every message sent (0 once all caught up; always 0 for an unreliable
 * publisher). Keep polling the ctx until it
 * is 0 before destroying the publisher, or the last messages' repairs are lost with it. 0 for
 * NULL or a closed publisher, never negative: `while (rdps_pub_receivers_behind(pub))` ends.
 */
RDPS_EXPORT int rdps_pub_receivers_behind(const rdps_pub_t *pub);
/* Datagrams of this ctx posted but not yet known complete by the device. Completion of
 * unsignaled sends is learnt from a later signaled one, so after a burst this can stay
 * above zero until more is sent: wait on it with a deadline. 0 for NULL, never negative. */
RDPS_EXPORT int rdps_ctx_sends_pending(const rdps_ctx_t *ctx);

/* ------------------------------------------------------------------------ */
/* Subscribing. */

/*
 * Who sent a message or caused an event, as the receiving device saw it: the
 * sender's QP number, its GID (from the GRH; RoCE always has one) and, on
 * InfiniBand without a GRH, its LID. Not authenticated: anyone on the
 * partition/VLAN can forge a GID (see docs/security.md); use it
 * to tell publishers apart and to drop what you do not expect.
 */
typedef struct rdps_source {
    uint8_t gid[16]; /* all zero when has_gid is 0 */
    uint32_t qpn;
    uint16_t lid;    /* InfiniBand without GRH; 0 otherwise */
    uint8_t has_gid; /* 1 when gid is valid */
    uint8_t reserved_;
} rdps_source;

typedef struct rdps_msg_info {
    const char *topic;
    uint64_t topic_id;        /* rdps_topic_id(topic) */
    uint32_t session_id;      /* publisher session */
    uint32_t seq;             /* sequence of the message's first datagram */
    uint64_t publisher_ts_ns; /* publisher's CLOCK_REALTIME when it sent the message */
    uint32_t fragments;       /* datagrams the message arrived in */
    int retransmitted;        /* some fragment was a retransmission */
    rdps_source source;       /* the publisher's QP (for messages published in this ctx: ours) */
    /* rdps 1.3: the message's ordinal in its session (each message the publisher sends takes the
     * next one, serial arithmetic, wrapping; the first is random like seq). Several messages may
     * share a datagram (batching): then they share seq, in ordinal order. */
    uint32_t ordinal;
} rdps_msg_info;

/*
 * Called for every complete message: from rdps_ctx_poll()/rdps_ctx_wait(), and from
 * rdps_pub_send*()/rdps_pub_commit() for subscribers in the same ctx as the publisher. `data` is
 * valid only during the call.
 *
 * Callbacks (message and event callbacks alike) may call:
 *   - rdps_pub_send*, claim/commit/abort, rdps_ctx_flush: sends work as anywhere else;
 *   - rdps_pub_create / rdps_sub_create;
 *   - rdps_pub_destroy / rdps_sub_destroy on any handle of the ctx, the calling subscriber
 *     included: the handle is closed at once (no further callbacks; calls on it return
 *     RDPS_ECLOSED) and freed when the outermost rdps_* call that ran the callback returns;
 *   - rdps_ctx_destroy: the ctx is freed when that outermost call returns, which then returns
 *     RDPS_ECLOSED (its handle is refused at once, its publishers' and subscribers' from then);
 *   - rdps_ctx_poll / rdps_ctx_wait: they do not handle received datagrams (the outer poll is
 *     in the middle of a batch); they post queued sends, reap send completions, so a
 *     `while (rdps_pub_send(...) == RDPS_EAGAIN) rdps_ctx_poll(ctx, 0);` retry loop makes
 *     progress, and return RDPS_EBUSY;
 *   - counters, ready checks and everything else that only reads.
 * A callback must not block for long: the ctx's thread is the only one making progress.
 */
typedef void (*rdps_msg_cb)(void *user, const void *data, size_t len, const rdps_msg_info *info);

/*
 * Events. A subscriber's on_event (rdps_sub_opts) hears about its topic's publishers and the
 * data it receives; a publisher's on_event (rdps_pub_opts) about its topic's subscribers and,
 * for a reliable publisher, their flow control. Events are raised from rdps_ctx_poll() /
 * rdps_ctx_wait() (the callback rules above apply) and the rdps_event is valid during the call
 * only. Discovery events (SEEN/GONE) concern endpoints of other contexts (one ctx's publishers
 * and subscribers reach each other directly) and come in pairs: an endpoint hears SEEN once for
 * every remote endpoint of its topic the ctx knows, those known before it was created
 * included (at its first poll), then GONE once when that one leaves or times out.
 */
typedef enum rdps_event_type {
    /* To subscribers. */
    RDPS_EVENT_GAP = 1,            /* unreliable session: datagrams that never arrived */
    RDPS_EVENT_PUBLISHER_SEEN = 2, /* discovery: a publisher of the topic announced itself */
    RDPS_EVENT_PUBLISHER_GONE = 3, /* discovery: it left or stopped announcing (reason) */
    RDPS_EVENT_QP_RECOVERED = 4,   /* the ctx's queue pair failed and was reset: datagrams
                                      received or sent meanwhile are lost */
    /* To reliable publishers: a receiver (a reliable subscriber's ctx) in flow control; raised
     * only for receivers discovery announced that took part in it. */
    RDPS_EVENT_RECEIVER_EVICTED = 5,   /* dropped from flow control (reason) */
    RDPS_EVENT_RECEIVER_RESUMED = 6,   /* an evicted receiver is back at the live position */
    RDPS_EVENT_RECEIVER_TIMED_OUT = 7, /* silent for receiver_timeout_ms: out of flow control */
    /* To reliable subscribers: datagrams [first_seq, first_seq + count) of the session could
     * not be recovered (reason); delivery continues after them. Raised once per run, in
     * sequence order with the messages. */
    RDPS_EVENT_LOSS = 8,
    /* To publishers. */
    RDPS_EVENT_SUBSCRIBER_SEEN = 9,  /* discovery: a subscriber of the topic announced itself */
    RDPS_EVENT_SUBSCRIBER_GONE = 10, /* discovery: it left or stopped announcing (reason) */
    /* To publishers and subscribers. Discovery: another host announced a topic whose 64-bit id
     * equals this topic's but whose name differs (other_topic); source is the announcer, session_id
     * the announced endpoint's (publisher session or subscriber receiver id). The two names cannot
     * be told apart on the wire: frames of the other name would be delivered to this topic's
     * subscribers. Rename one of them. Raised to every local subscriber's and publisher's on_event
     * of the topic once per (announcer, other name) while the announcer keeps announcing, and
     * counted in topic_collisions. */
    RDPS_EVENT_TOPIC_COLLISION = 11,
    /* To publishers and subscribers of RDPS_TRANSPORT_AUTO: the topic now goes by unicast in
     * this ctx (reason: rdps_fallback_reason): its publishers send copies to every subscriber
     * instead of the group, its subscribers left the group and ask for copies. Once per topic
     * and side; it stays so. */
    RDPS_EVENT_UNICAST_FALLBACK = 12,
} rdps_event_type;

/* rdps_event.reason of RDPS_EVENT_LOSS: why the datagrams could not be recovered. */
typedef enum rdps_loss_reason {
    RDPS_LOSS_BELOW_RING = 1,       /* the publisher's ring no longer holds them (its oldest
                                       retained sequence, from its heartbeats, is past them) */
    RDPS_LOSS_NAK_RETRIES = 2,      /* NAKed 200 times without a repair */
    RDPS_LOSS_DEADLINE = 3,         /* not repaired within 5 s of being found missing or of
                                       its stream's last repair, whichever is later */
    RDPS_LOSS_PARTIAL_MESSAGE = 4,  /* fragments that did arrive of a message whose other
                                       fragments were lost (a message is delivered whole) */
    RDPS_LOSS_TOO_LARGE = 5,        /* a message this ctx cannot hold: above its reassembly
                                       limits, or of more datagrams than the reliable window */
    RDPS_LOSS_SESSION_DROPPED = 6,  /* the ctx dropped the session before delivering them (its
                                       session table or the sender's quota full, or idle) */
    RDPS_LOSS_NOT_IN_RECORDING = 7, /* rdps 1.3, history subscribers (rdps_archive.h): the
                                       recording stops short of where the live stream began */
} rdps_loss_reason;

/* rdps_event.reason of RDPS_EVENT_RECEIVER_EVICTED. */
typedef enum rdps_evict_reason {
    RDPS_EVICT_LAGGED = 1,  /* fell further behind than the ring holds (RDPS_FLOW_MAX) */
    RDPS_EVICT_STALLED = 2, /* held a min/tagged publisher back for 2 s without progress */
} rdps_evict_reason;

/* rdps_event.reason of RDPS_EVENT_PUBLISHER_GONE and RDPS_EVENT_SUBSCRIBER_GONE. */
typedef enum rdps_gone_reason {
    RDPS_GONE_LEFT = 1,      /* it sent its leaving announcement (destroyed cleanly) */
    RDPS_GONE_TIMED_OUT = 2, /* nothing heard for 3 of its announce intervals: no
                                announcement, and (1.3) no datagram of a publisher's session,
                                no STATUS or NAK of a reliable subscriber (crashed, stopped,
                                partitioned, or its leaving announcement was lost) */
} rdps_gone_reason;

/* rdps_event.reason of RDPS_EVENT_UNICAST_FALLBACK. */
typedef enum rdps_fallback_reason {
    RDPS_FALLBACK_JOIN_FAILED = 1,    /* the fabric refused the group (e.g. no multicast in the
                                         subnet manager) */
    RDPS_FALLBACK_JOIN_TIMED_OUT = 2, /* the join did not complete within multicast_timeout_ms */
    RDPS_FALLBACK_NO_MULTICAST = 3,   /* joined, but for multicast_timeout_ms after peers were
                                         heard by unicast nothing came through a group */
} rdps_fallback_reason;

/*
 * What each event sets; every field not listed is 0 (NULL). topic is the name the receiving
 * endpoint was created with; session_id, first_seq and count are those of the frames.
 *
 *   GAP               session_id: the publisher's session; first_seq: the first missing
 *                     datagram sequence; count: the datagrams missing; source: the publisher;
 *                     first_ordinal, msg_count: the messages they held.
 *   PUBLISHER_SEEN    session_id: the publisher's session; source: the announcer.
 *   PUBLISHER_GONE    as PUBLISHER_SEEN; reason: rdps_gone_reason.
 *   QP_RECOVERED      count: datagrams this ctx had posted that were lost with the queue pair
 *                     (since the previous QP_RECOVERED); source: this ctx's own QP.
 *   RECEIVER_EVICTED  session_id: this publisher's session; source: the receiver's QP;
 *                     receiver_id: the receiver's id (a reliable subscriber's ctx, also in
 *                     its SUBSCRIBER_SEEN); first_seq: its position as it last reported it
 *                     (the first sequence it had not consumed); count: how far that lies
 *                     behind the ring's oldest sequence (0 if it does not); reason:
 *                     rdps_evict_reason.
 *   RECEIVER_RESUMED  as RECEIVER_EVICTED, without reason (count is 0).
 *   RECEIVER_TIMED_OUT  as RECEIVER_EVICTED, without reason.
 *   LOSS              session_id: the publisher's session; first_seq, count: the datagrams
 *                     given up; source: the publisher; reason: rdps_loss_reason;
 *                     first_ordinal, msg_count: the messages given up with them.
 *   SUBSCRIBER_SEEN   session_id: the subscriber's own id (random, as it announces itself; it
 *                     pairs SEEN with GONE); source: the announcer; receiver_id: a reliable
 *                     subscriber's receiver id (0 for an unreliable one).
 *   SUBSCRIBER_GONE   as SUBSCRIBER_SEEN; reason: rdps_gone_reason.
 *   TOPIC_COLLISION   session_id: the announced endpoint's (publisher session or subscriber
 *                     id); source: the announcer; other_topic: the name it announced.
 *   UNICAST_FALLBACK  session_id: the publisher's session (to a subscriber: 0); source: this
 *                     ctx's own QP; reason: rdps_fallback_reason.
 *
 * source is the sender as the device saw it, not authenticated (see rdps_source).
 */
typedef struct rdps_event {
    rdps_event_type type;
    const char *topic;
    uint32_t session_id;
    uint32_t first_seq;
    uint32_t count;
    rdps_source source;
    uint32_t receiver_id;
    int reason; /* rdps_loss_reason, rdps_evict_reason, rdps_gone_reason or
                   rdps_fallback_reason by type, else 0 */
    /* TOPIC_COLLISION: the announced name that has this topic's id (NULL for other events);
     * valid only during the callback. */
    const char *other_topic;
    /* rdps 1.3. GAP and LOSS: the messages the datagrams held, [first_ordinal, first_ordinal +
     * msg_count): exact, batched or not (each datagram names its first message's ordinal); a
     * message split over lost and arrived datagrams is counted once, in the event of its first
     * lost piece. 0 for other events. */
    uint32_t first_ordinal;
    uint32_t msg_count;
} rdps_event;

/*
 * "gap", "publisher_seen", "publisher_gone", "qp_recovered", "receiver_evicted",
 * "receiver_resumed", "receiver_timed_out", "loss", "subscriber_seen", "subscriber_gone",
 * "topic_collision", "unicast_fallback": the
 * enumerator's name in lower case without RDPS_EVENT_. Never NULL: "unknown" for other values.
 */
RDPS_EXPORT const char *rdps_event_name(rdps_event_type type);
/*
 * The name of ev->reason in the enum its type uses, in the same style: "below_ring",
 * "nak_retries", "deadline", "partial_message", "too_large", "session_dropped",
 * "not_in_recording" (LOSS),
 * "lagged", "stalled" (RECEIVER_EVICTED), "left", "timed_out" (PUBLISHER_GONE,
 * SUBSCRIBER_GONE), "join_failed", "join_timed_out", "no_multicast" (UNICAST_FALLBACK). Never NULL:
 * "" for an event type without a reason (and for NULL), "unknown" for a reason value its enum does
 * not have.
 */
RDPS_EXPORT const char *rdps_event_reason_name(const rdps_event *ev);

/*
 * Subscriber options; zero-initialize, NULL for all defaults. from_oldest and flow_tag need
 * reliable = 1: set on an unreliable subscriber, rdps_sub_create refuses them with RDPS_EINVAL
 * (rdps_last_error_message() names the option) rather than ignore them.
 */
typedef struct rdps_sub_opts {
    const char *group; /* explicit multicast group; NULL: hash of the topic name */
    /* optional: RDPS_EVENT_GAP, _PUBLISHER_SEEN/_GONE, _QP_RECOVERED, _LOSS, _TOPIC_COLLISION;
     * called with event_user, or with rdps_sub_create's `user` when event_user is NULL */
    rdps_event_cb on_event;
    /*
     * 1: every message of every reliable publisher of the topic, in order, exactly once per
     * session, or an RDPS_EVENT_LOSS naming what could not be recovered: the ctx NAKs what is
     * missing and reports its progress (STATUS) to the publisher. Sessions of publishers that
     * are not reliable are delivered as usual. Decided when a session is first seen: a session
     * already followed unreliably by this ctx stays so. A session whose publisher falls silent
     * backs its STATUS off and, after 5 s, sends no NAK or STATUS until the publisher is heard
     * again (sessions_idle); the NAK backoff counts other reliable subscribers by host (at most
     * 4 per host, announced from their own address and announced again).
     */
    int reliable;
    /* reliable: a session joined late starts at the publisher's oldest retained message
     * (everything its ring still holds) instead of the live position, and catches up at the
     * rate it drains: it NAKs one window of datagrams after the other, repaired by unicast
     * within the publisher's repair budgets. Until it is within its window of the live
     * position it takes no part in flow control (under RDPS_FLOW_MIN and _TAGGED it holds
     * neither the publisher nor its ring; under any mode, what the ring drops before it gets
     * there is an RDPS_EVENT_LOSS, below_ring). Per topic: one such subscriber makes the ctx
     * join that topic's new sessions from the oldest. */
    int from_oldest;
    /* reliable: the group tag announced for publishers using RDPS_FLOW_TAGGED (0: none). */
    uint32_t flow_tag;
    void *event_user; /* on_event's first argument; NULL: rdps_sub_create's `user` */
    /* How the datagrams come: rdps_transport_mode (default multicast); a value outside the enum
     * is RDPS_EINVAL, and so is another mode than the topic's other subscribers in this ctx use.
     * Unicast: ready at once, the publishers send copies once discovery told them. */
    rdps_transport_mode transport;
} rdps_sub_opts;

/* Creates a subscriber of `topic` (a name as described under "Topic names": RDPS_EINVAL
 * otherwise, and for NULL ctx, out or on_message and options that cannot apply; RDPS_EEXIST when
 * another topic of this ctx has the same id; RDPS_ECLOSED while the ctx is being destroyed or for
 * a destroyed handle; RDPS_ENOTOWNER (another thread owns the ctx: "Threads"); RDPS_ENOMEM; a
 * negative errno when starting the group's join fails). */
RDPS_EXPORT int rdps_sub_create_sized(rdps_ctx_t *ctx, const char *topic, rdps_msg_cb on_message,
                                      void *user, const rdps_sub_opts *opts, size_t opts_size,
                                      rdps_sub_t **out);
static inline int rdps_sub_create(rdps_ctx_t *ctx, const char *topic, rdps_msg_cb on_message,
                                  void *user, const rdps_sub_opts *opts, rdps_sub_t **out)
{
    return rdps_sub_create_sized(ctx, topic, on_message, user, opts, sizeof(*opts), out);
}
RDPS_EXPORT void rdps_sub_destroy(rdps_sub_t *sub);
/*
 * 1 once the subscriber's group is joined (messages can arrive); otherwise 0, never negative:
 * before, for NULL or a closed subscriber, and when the join failed for good
 * (rdps_last_error_message() says why).
 */
RDPS_EXPORT int rdps_sub_ready(const rdps_sub_t *sub);

/* ------------------------------------------------------------------------ */
/* Topic naming: the id carried in frames and the group a name hashes to. */
/*
 * The 64-bit id of a topic name (see "Topic names" above): 64-bit FNV-1a of the name's bytes
 * through murmur3's fmix64 finalizer (0 would become 1), the same on every host; 0 for a name
 * that breaks the rules (NULL, empty, longer than RDPS_TOPIC_NAME_MAX, a byte outside
 * 0x21..0x7e).
 */
RDPS_EXPORT uint64_t rdps_topic_id(const char *topic);
/* Writes the dotted IPv4 group `topic` maps to in `ctx` (explicit maps honoured) into buf, at
 * least 16 bytes. 0, or RDPS_EINVAL (NULL, a short buffer, a name that breaks the rules),
 * RDPS_ECLOSED (a destroyed handle), RDPS_ENOTOWNER (another thread owns the ctx: "Threads"). */
RDPS_EXPORT int rdps_topic_group(const rdps_ctx_t *ctx, const char *topic, char *buf, size_t len);
/* Maps a topic name to a group explicitly (before creating its endpoints). 0, or RDPS_EINVAL (NULL,
 * a bad name or group, a topic already on another group), RDPS_EEXIST (another name of this ctx
 * has its id), RDPS_ENOMEM, RDPS_ECLOSED (a destroyed handle), RDPS_ENOTOWNER (another thread owns
 * the ctx: "Threads"). */
RDPS_EXPORT int rdps_ctx_map_topic(rdps_ctx_t *ctx, const char *topic, const char *group);

/* ------------------------------------------------------------------------ */
/* Counters: one X-macro gives the fields, their names and their order. */
#define RDPS_COUNTER_MAP(X)                                                                       \
    X(msgs_sent, "messages published")                                                            \
    X(bytes_sent, "message bytes published")                                                      \
    X(frames_sent, "datagrams sent")                                                              \
    X(frame_bytes_sent, "datagram bytes sent")                                                    \
    X(send_backpressure, "sends refused with RDPS_EAGAIN")                                        \
    X(msgs_delivered, "messages delivered to subscribers")                                        \
    X(bytes_delivered, "message bytes delivered")                                                 \
    X(frames_received, "datagrams received")                                                      \
    X(frame_bytes_received, "datagram bytes received")                                            \
    X(fragments_received, "data fragments accepted")                                              \
    X(gaps, "datagram sequence gaps (missing datagrams)")                                         \
    X(duplicates, "duplicate datagrams dropped")                                                  \
    X(reasm_evictions, "partial messages evicted by the memory cap")                              \
    X(reasm_timeouts, "partial messages dropped after the timeout")                               \
    X(sessions_evicted, "publisher sessions evicted from the table")                              \
    X(bad_frames, "malformed datagrams dropped")                                                  \
    X(unknown_topic, "datagrams for topics with no local subscriber")                             \
    X(own_frames, "own datagrams looped back by the fabric and dropped")                          \
    X(rq_empty, "receive queue ran empty")                                                        \
    X(announces_sent, "discovery announcements sent")                                             \
    X(announces_received, "discovery announcements received")                                     \
    X(bad_announces, "malformed discovery announcements dropped")                                 \
    X(naks_sent, "NAK frames sent")                                                               \
    X(naks_received, "NAK frames received")                                                       \
    X(retransmits, "datagrams retransmitted")                                                     \
    X(recovered, "missing datagrams recovered")                                                   \
    X(lost, "datagrams declared unrecoverable")                                                   \
    X(loss_dropped_rx, "received datagrams dropped by the loss generator")                        \
    X(loss_dropped_tx, "datagrams to send dropped by the loss generator")                         \
    X(peers_refused,                                                                              \
      "discovery announcements refused (table full, foreign-topic cap, forged leave)")            \
    X(qp_recoveries, "times the queue pair was reset after entering the error state")             \
    X(sends_lost, "datagrams in flight lost when the queue pair entered the error state")         \
    X(reasm_quota_drops, "partials or sessions a host lost for exceeding its per-host quota")     \
    X(session_resets, "sessions restarted by a sequence jump larger than the tracked window")     \
    X(heartbeats_sent, "reliable publishers: heartbeats sent (idle, or answering a NAK)")         \
    X(naks_suppressed, "reliable publishers: NAKed sequences not repaired again (linger)")        \
    X(receiver_evictions, "reliable publishers: receivers evicted (lagged or stalled)")           \
    X(control_send_failures, "reliable subscribers: NAK/STATUS frames that could not be sent")    \
    X(out_of_order, "reliable subscribers: missing datagrams that arrived late (not repaired)")   \
    X(loss_events, "reliable subscribers: RDPS_EVENT_LOSS events raised")                         \
    X(status_sent, "reliable subscribers: STATUS frames sent")                                    \
    X(repair_latency_p50_us, "reliable subscribers: gap detection to repair, median (us, gauge)") \
    X(repair_latency_p99_us, "reliable subscribers: gap detection to repair, 99th pct (gauge)")   \
    X(repairs_unicast, "reliable publishers: repair datagrams sent by unicast")                   \
    X(repairs_multicast, "reliable publishers: repair datagrams sent by multicast")               \
    X(rtt_us, "reliable publishers: latest round-trip time from a heartbeat echo (us, gauge)")    \
    X(send_stalls, "times no send completed for 2 s with sends posted (device or link stalled)")  \
    X(rate_waits, "reliable publishers: times new data waited for rdps_pub_opts.rate_limit")      \
    X(receivers_refused, "reliable publishers: NAK/STATUS refused: table, host or source full")   \
    X(repair_queue_full, "reliable publishers: NAKed sequences not queued (queue full; retried)") \
    X(repair_share_spent,                                                                         \
      "reliable publishers: times a host's repair share (256 KiB/ms) or all shares ran out")      \
    X(repair_rtts_p50_milli,                                                                      \
      "reliable subscribers: gap detection to repair, median, in 1/1000 RTT (gauge)")             \
    X(repair_rtts_p99_milli,                                                                      \
      "reliable subscribers: gap detection to repair, 99th pct, in 1/1000 RTT (gauge)")           \
    X(topic_collisions, "discovery: announced topics with a local topic's id but another name "   \
                        "(per announcer+name)")                                                   \
    X(auth_unsigned, "keyed ctx: frames without a tag (a keyless sender), dropped")               \
    X(auth_short, "keyed ctx: frames shorter than header and trailer, dropped")                   \
    X(auth_unknown_key, "keyed ctx: frames under a key id not installed, dropped")                \
    X(auth_bad_tag, "keyed ctx: frames whose tag did not verify, dropped")                        \
    X(auth_replayed,                                                                              \
      "keyed ctx: frames replayed (counter seen or too old, or from another address), dropped")   \
    X(auth_senders_evicted, "keyed ctx: senders evicted from the anti-replay table (LRU)")        \
    X(sessions_idle,                                                                              \
      "reliable subscribers: sessions whose publisher fell silent 5 s (NAK/STATUS stopped)")      \
    X(naks_limited,                                                                               \
      "reliable publishers: NAKed sequences not repaired: the host's allowance spent")            \
    X(receivers_displaced, "reliable publishers: receivers dropped to make room for others")      \
    X(unicast_copies, "publishers: datagram copies posted by unicast to subscribers (fan-out)")   \
    X(unicast_refused,                                                                            \
      "publishers: unicast subscribers not served (topic or host cap, or no address)")            \
    X(unicast_fallbacks, "auto topics (per side) that fell back to unicast")                      \
    X(contacts_sent, "unicast discovery: peer lists sent to seeds and peers")                     \
    X(contacts_received, "unicast discovery: peer lists received")                                \
    X(contacts_refused, "unicast discovery: peers refused (table, host or probe caps, forged)")   \
    X(seeds_unresolved, "unicast discovery: seed resolutions that failed (retried)")              \
    X(repair_bytes, "reliable publishers: bytes of repair datagrams, retransmissions and parity") \
    X(parity_sent, "reliable publishers: parity datagrams sent (rdps_pub_opts.parity_k)")         \
    X(parity_bytes, "reliable publishers: bytes of parity datagrams")                             \
    X(parity_rebuilt, "reliable subscribers: missing datagrams rebuilt from parity datagrams")    \
    X(parity_proactive,                                                                           \
      "reliable publishers: parity datagrams sent unasked (rdps_pub_opts.parity_proactive)")      \
    X(auth_stale, "keyed ctx: frames sealed further from our clock than replay_max_age_ms")       \
    X(unicast_displaced,                                                                          \
      "publishers: unconfirmed unicast subscribers dropped for a newcomer (table full)")          \
    X(contacts_displaced, "unicast discovery: contacts dropped for a newcomer (table or host "    \
                          "full)")                                                                \
    X(repair_data_limited,                                                                        \
      "reliable publishers: times repairs waited for what new data earns them (2x the data)")     \
    X(gap_messages, "messages that never arrived whole on unreliable sessions (in gaps)")         \
    X(lost_messages, "reliable subscribers: messages declared unrecoverable")                     \
    X(frames_batched, "publishers: datagrams sent carrying two or more messages")                 \
    X(late_dropped, "unreliable subscribers: datagrams that came after a GAP reported them "      \
                    "(dropped: their messages were counted lost)")                                \
    X(queue_dropped,                                                                              \
      "concurrent publishers: messages other threads queued that could not be sent (the join "    \
      "failed, the device failed, the publisher or ctx was destroyed from a callback first)")

typedef struct rdps_counters {
#define RDPS_COUNTER_FIELD_(name, text) uint64_t name;
    RDPS_COUNTER_MAP(RDPS_COUNTER_FIELD_)
#undef RDPS_COUNTER_FIELD_
} rdps_counters;

/* Number of counters and their names/descriptions, in struct order. */
RDPS_EXPORT size_t rdps_counter_count(void);
RDPS_EXPORT const char *rdps_counter_name(size_t index);
RDPS_EXPORT const char *rdps_counter_description(size_t index);

/* Whole-ctx counters, and the ones attributable to one publisher or subscriber: the first `size`
 * bytes of *out (counters this library does not have read 0). Return 0, or RDPS_EINVAL for a
 * NULL argument or a size below the 1.0 struct's (then *out, if given, is zeroed),
 * RDPS_ECLOSED (a destroyed handle) or RDPS_ENOTOWNER (another thread owns the ctx: "Threads"),
 * with *out zeroed. */
RDPS_EXPORT int rdps_ctx_counters_sized(const rdps_ctx_t *ctx, rdps_counters *out, size_t size);
RDPS_EXPORT int rdps_pub_counters_sized(const rdps_pub_t *pub, rdps_counters *out, size_t size);
RDPS_EXPORT int rdps_sub_counters_sized(const rdps_sub_t *sub, rdps_counters *out, size_t size);
static inline int rdps_ctx_counters(const rdps_ctx_t *ctx, rdps_counters *out)
{
    return rdps_ctx_counters_sized(ctx, out, sizeof(*out));
}
static inline int rdps_pub_counters(const rdps_pub_t *pub, rdps_counters *out)
{
    return rdps_pub_counters_sized(pub, out, sizeof(*out));
}
static inline int rdps_sub_counters(const rdps_sub_t *sub, rdps_counters *out)
{
    return rdps_sub_counters_sized(sub, out, sizeof(*out));
}

/*
 * A reliable publisher session as a subscriber's ctx receives it: the reliable layer's figures for
 * that one sender (rdps_sub_counters has their sums over the ctx).
 */
typedef struct rdps_session_stats {
    uint32_t session_id;
    rdps_source source;
    uint32_t consumed_seq;    /* every datagram sequence before it delivered or declared lost */
    uint32_t gap_ranges;      /* missing ranges being asked for */
    uint64_t delivered;       /* messages delivered in order */
    uint64_t naks_sent;       /* NAK datagrams */
    uint64_t naks_suppressed; /* NAKs a repair seen first made unnecessary */
    uint64_t recovered;       /* missing datagrams filled by a repair */
    uint64_t out_of_order;    /* missing datagrams filled by a late original */
    uint64_t duplicates;      /* datagrams received twice (or after their message) */
    uint64_t lost;            /* datagrams given up (RDPS_EVENT_LOSS), every reason */
    uint64_t loss_events;
    uint64_t status_sent;
    uint64_t rtt_us; /* smoothed NAK-to-repair round trip (1000 until measured) */
    uint64_t repair_latency_p50_us, repair_latency_p99_us; /* histogram bucket bounds; 0: none */
    /* The same latencies over the session's RTT estimate when each repair came (before its own
     * sample), in thousandths of a round trip (bucket bounds: 250, 500, ..., 4000 in quarters,
     * then 8000, 16000, ...; 0: none): about 1000 for repairs that came at the first NAK's
     * round trip, more for retries and NAK backoff. */
    uint64_t repair_rtts_p50_milli, repair_rtts_p99_milli;
    uint64_t lost_messages; /* rdps 1.3: messages given up (lost counts datagrams) */
} rdps_session_stats;
/*
 * Fills out[0..max) with the reliable sessions of the subscriber's topic its ctx tracks (newest
 * first) and returns how many there are, which may exceed max; RDPS_EINVAL (NULL subscriber, or
 * NULL out with max > 0), RDPS_ECLOSED (destroyed subscriber), RDPS_ENOTOWNER (another thread
 * owns the ctx: "Threads"): test the result with `> 0`, not for
 * truth. Sessions of a topic are shared by its subscribers in one ctx. The _sized form takes the
 * caller's sizeof(rdps_session_stats) as the array's stride (RDPS_EINVAL below the 1.0 struct's).
 */
RDPS_EXPORT int rdps_sub_sessions_sized(const rdps_sub_t *sub, rdps_session_stats *out, size_t max,
                                        size_t elem_size);
static inline int rdps_sub_sessions(const rdps_sub_t *sub, rdps_session_stats *out, size_t max)
{
    return rdps_sub_sessions_sized(sub, out, max, sizeof(*out));
}

/* ------------------------------------------------------------------------ */
/* rdps 1.3: recorded history (rdps_archive.h) finds the topics a prefix names through this. */
/*
 * Called for every announcement discovery hears from a publisher of a topic that this ctx has no
 * publisher or subscriber of (yet) and whose name starts with the watched prefix: once a second
 * or so per such publisher (its announce interval) until the ctx creates an endpoint of the
 * topic, which the callback may do (the callback rules of rdps_msg_cb apply). source is the
 * announcer, not authenticated.
 */
typedef void (*rdps_publisher_watch_cb)(void *user, const char *topic, const rdps_source *source);
/* Watches for publishers of topics starting with `prefix` ("" for every topic; copied). One watch
 * per ctx: a second call replaces it, a NULL cb removes it. 0, or RDPS_EINVAL (NULL ctx or prefix,
 * a prefix longer than RDPS_TOPIC_NAME_MAX), RDPS_ECLOSED (a destroyed handle), RDPS_ENOTOWNER
 * (another thread owns the ctx: "Threads"). */
RDPS_EXPORT int rdps_ctx_watch_publishers(rdps_ctx_t *ctx, const char *prefix,
                                          rdps_publisher_watch_cb cb, void *user);

#ifdef __cplusplus
}
#endif
#endif /* RDPS_RDPS_H */
