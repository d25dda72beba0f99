/* SPDX-License-Identifier: BSD-2-Clause */
/* local_shm.h - what the local device's processes share: the host registry (members, groups) and
 * each member's receive ring, laid out in files under one directory; every read of it is checked.
 */
#ifndef RDPS_LOCAL_SHM_H
#define RDPS_LOCAL_SHM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Why shared memory and not AF_UNIX datagram sockets: on a 2-core VM under load, two processes
 * passing 64-byte messages moved 0.09 M msgs/s over SOCK_DGRAM and 0.08 M over SOCK_SEQPACKET (a
 * system call per datagram on each side; a SOCK_DGRAM receiver also refuses a burst beyond
 * net.unix.max_dgram_qlen, 10 by default) against 0.48 M through a ring in shared memory
 * (docs/performance.md, "Local device"). The kernel is used only to wake a sleeping receiver
 * (a FIFO), to tell a live member from a dead one (flock) and to enforce permissions (files).
 *
 * Every process that can open the directory may write anything into these files: readers copy
 * what they need into private memory, then check it (lengths against the MTU, indexes against the
 * tables, states against the lap), and a member that writes garbage can spoil datagrams to the
 * rings it writes and lose its own, never crash or wedge another.
 */

#define LOCAL_MAGIC_REGISTRY 0x3147455253445052ull /* "RPDSREG1" */
#define LOCAL_MAGIC_RING     0x31474e4953445052ull /* "RPDSING1" */
#define LOCAL_VERSION        1u

/* Members of one host directory; a member's QPN is (generation << LOCAL_INDEX_BITS) | index. */
#define LOCAL_INDEX_BITS   9u
#define LOCAL_MAX_MEMBERS  (1u << LOCAL_INDEX_BITS) /* 512 */
#define LOCAL_GEN_MASK     ((1u << (24u - LOCAL_INDEX_BITS)) - 1u)
#define LOCAL_BITMAP_WORDS (LOCAL_MAX_MEMBERS / 64u)
#define LOCAL_MAX_GROUPS   1024u /* groups with at least one receiving member */

/* A ring's slots: a power of two, at most this many, and at most LOCAL_RING_MAX_BYTES of them. */
#define LOCAL_RING_MIN_SLOTS 64u
#define LOCAL_RING_MAX_SLOTS 4096u
#define LOCAL_RING_MAX_BYTES (8u << 20)
#define LOCAL_SLOT_HEADER    32u

/* A slot reserved but not written (its writer stalled or died before it began) is skipped after
 * this long; one being written is taken back once its writer is dead, or after the second. */
#define LOCAL_STUCK_FREE_NS    100000000ull  /* 100 ms */
#define LOCAL_STUCK_WRITING_NS 2000000000ull /* 2 s */

struct local_member_entry {
    _Atomic uint32_t gen;   /* bumped when the entry is taken and when it is freed */
    _Atomic uint32_t state; /* LOCAL_MEMBER_FREE / LOCAL_MEMBER_LIVE */
    _Atomic uint32_t pid;
    _Atomic uint32_t ring_slots;
};
enum { LOCAL_MEMBER_FREE = 0, LOCAL_MEMBER_LIVE = 1 };

struct local_group_entry {
    _Atomic uint32_t group; /* host-order IPv4; 0: a free entry */
    _Atomic uint32_t members;
    _Atomic uint64_t bitmap[LOCAL_BITMAP_WORDS]; /* receiving members by index */
};

struct local_registry {
    uint64_t magic;
    uint32_t version;
    uint32_t mtu;
    uint32_t max_members, max_groups;
    _Atomic uint64_t epoch; /* bumped by every change to groups or members: senders' caches */
    uint8_t reserved[32];
    struct local_member_entry members[LOCAL_MAX_MEMBERS];
    struct local_group_entry groups[LOCAL_MAX_GROUPS];
};

struct local_ring_header {
    uint64_t magic;
    uint32_t version;
    uint32_t slots;     /* a power of two */
    uint32_t slot_size; /* LOCAL_SLOT_HEADER + mtu */
    uint32_t owner_qpn;
    uint8_t pad0[40];
    _Alignas(64) _Atomic uint64_t tail; /* positions reserved by writers (compare-and-swap) */
    uint8_t pad1[56];
    _Alignas(64) _Atomic uint64_t head; /* positions the owner consumed (only it stores) */
    _Atomic uint32_t waiting;           /* the owner sleeps on its FIFO: the next writer wakes it */
    uint32_t pad2;
    _Atomic uint64_t overruns; /* datagrams writers found no room for (a full receive queue) */
    uint8_t pad3[40];
};

/* Each slot: this header, then up to mtu bytes. state = position << 2 | LOCAL_SLOT_*. */
struct local_slot {
    _Atomic uint64_t state;
    _Atomic uint32_t len;
    _Atomic uint32_t src_qpn;
    _Atomic uint32_t flags; /* LOCAL_SLOT_MULTICAST */
    _Atomic uint32_t writer_pid;
    uint64_t reserved;
};
enum { LOCAL_SLOT_FREE = 0, LOCAL_SLOT_WRITING = 1, LOCAL_SLOT_READY = 2 };
#define LOCAL_SLOT_MULTICAST 1u

_Static_assert(sizeof(struct local_slot) == LOCAL_SLOT_HEADER, "slot header size");
_Static_assert(sizeof(struct local_ring_header) == 192, "ring header size");

/* The bytes a ring of `slots` slots for `mtu` takes (header included). */
static inline size_t local_ring_bytes(uint32_t slots, uint32_t mtu)
{
    return sizeof(struct local_ring_header) + (size_t)slots * (LOCAL_SLOT_HEADER + mtu);
}

/* The slot count a member asking for `want` receive buffers gets (power of two, capped). */
uint32_t local_ring_slots_for(uint32_t want, uint32_t mtu);

/* Writes a fresh ring's header and slots (the owner, before anyone can map it). */
void local_ring_init(void *mem, uint32_t slots, uint32_t mtu, uint32_t owner_qpn);

/*
 * Checks a ring someone else created (a writer mapping it): magic, version, a power-of-two slot
 * count within the caps, the slot size of this host's mtu, and `file_bytes` large enough. Fills
 * *slots on success; false for anything else (the writer treats the member as unreachable).
 */
bool local_ring_check(const void *mem, size_t file_bytes, uint32_t mtu, uint32_t *slots);

/* A writer's view of a mapped ring: only what it checked when it mapped it. */
struct local_ring_view {
    struct local_ring_header *hdr;
    uint8_t *slots_mem;
    uint32_t slots, mtu;
};

void local_ring_view_init(struct local_ring_view *v, void *mem, uint32_t slots, uint32_t mtu);

enum local_push_result {
    LOCAL_PUSH_OK = 0,
    LOCAL_PUSH_OK_WAKE = 1, /* delivered, and the owner sleeps: write its FIFO */
    LOCAL_PUSH_FULL = 2,    /* no room: counted in the ring's overruns */
    LOCAL_PUSH_SKIPPED = 3, /* the owner took the slot back (we stalled past the grace): lost */
};

/* Writes one datagram (len <= mtu) into the ring; never blocks, never waits for the owner. */
enum local_push_result local_ring_push(struct local_ring_view *v, const uint8_t *data, uint32_t len,
                                       uint32_t src_qpn, uint32_t flags, uint32_t pid);

/* The owner's private state of its ring: the head it trusts is its own, never the shared one. */
struct local_ring_reader {
    struct local_ring_view view;
    uint64_t head;
    uint64_t stuck_since_ns; /* when the slot at head was first seen reserved but not ready */
    uint64_t stuck_pos;      /* its position (valid while stuck_since_ns != 0) */
    uint64_t bad_slots;      /* slots taken back or refused (bad length, stuck writer) */
};

void local_ring_reader_init(struct local_ring_reader *r, void *mem, uint32_t slots, uint32_t mtu);

/* One datagram taken from the ring, copied into the owner's memory. */
struct local_ring_item {
    uint32_t len, src_qpn, flags;
};

enum local_pop_result {
    LOCAL_POP_EMPTY = 0,
    LOCAL_POP_ITEM = 1,
    LOCAL_POP_STUCK = 2, /* a reserved slot not ready yet: look again later (see *retry_ns) */
};

/* What the reader asks of its owner, only for a slot that is not ready: the time, and whether
 * the process writing a slot still exists (writer_alive may be NULL: assume it does). */
struct local_ring_env {
    uint64_t (*now_ns)(void);
    bool (*writer_alive)(uint32_t pid);
};

/*
 * Takes the datagram at the head into out[0..mtu) when it is ready (*item filled). A slot
 * reserved and not finished is taken back once its grace passed (env decides). Returns
 * LOCAL_POP_STUCK with *retry_ns set to the time it should be looked at again when the head is
 * held by a writer that has not finished.
 */
enum local_pop_result local_ring_pop(struct local_ring_reader *r, uint8_t *out,
                                     struct local_ring_item *item, const struct local_ring_env *env,
                                     uint64_t *retry_ns);

/* True when the slot at the head is ready (arm's last look). */
bool local_ring_ready(const struct local_ring_reader *r);

/* ---- the registry ---- */

/* Checks a mapped registry (magic, version, sizes); *mtu gets its MTU. */
bool local_registry_check(const struct local_registry *reg, size_t file_bytes, uint32_t *mtu);
void local_registry_init(struct local_registry *reg, uint32_t mtu);

/* The entry of `group` (index), or -1. Lock-free: a reader may see a change half made. */
int local_registry_find_group(const struct local_registry *reg, uint32_t group);

/* The QPN of a member entry (its generation and index). */
static inline uint32_t local_qpn(uint32_t gen, uint32_t index)
{
    return ((gen & LOCAL_GEN_MASK) << LOCAL_INDEX_BITS) | index;
}
static inline uint32_t local_qpn_index(uint32_t qpn)
{
    return qpn & (LOCAL_MAX_MEMBERS - 1u);
}
static inline uint32_t local_qpn_gen(uint32_t qpn)
{
    return (qpn >> LOCAL_INDEX_BITS) & LOCAL_GEN_MASK;
}

#endif /* RDPS_LOCAL_SHM_H */
