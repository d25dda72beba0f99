/* SPDX-License-Identifier: BSD-2-Clause */
/* local_shm.c - the local device's shared rings and registry: writing, reading and checking them
 * (no system calls: the fuzzer drives it over any bytes). */
#include "local_shm.h"

#include <string.h>

uint32_t local_ring_slots_for(uint32_t want, uint32_t mtu)
{
    uint32_t cap = LOCAL_RING_MAX_BYTES / (LOCAL_SLOT_HEADER + mtu);
    if (cap > LOCAL_RING_MAX_SLOTS)
        cap = LOCAL_RING_MAX_SLOTS;
    if (want > cap)
        want = cap;
    uint32_t slots = LOCAL_RING_MIN_SLOTS;
    while (slots * 2 <= want)
        slots *= 2;
    return slots;
}

static struct local_slot *slot_at(const struct local_ring_view *v, uint64_t pos)
{
    size_t index = (size_t)(pos & (v->slots - 1));
    return (struct local_slot *)(v->slots_mem + index * (LOCAL_SLOT_HEADER + v->mtu));
}

static uint64_t slot_state(uint64_t pos, unsigned st)
{
    return pos << 2 | st;
}

void local_ring_init(void *mem, uint32_t slots, uint32_t mtu, uint32_t owner_qpn)
{
    struct local_ring_header *h = mem;
    memset(h, 0, sizeof(*h));
    h->magic = LOCAL_MAGIC_RING;
    h->version = LOCAL_VERSION;
    h->slots = slots;
    h->slot_size = LOCAL_SLOT_HEADER + mtu;
    h->owner_qpn = owner_qpn;
    struct local_ring_view v;
    local_ring_view_init(&v, mem, slots, mtu);
    for (uint32_t i = 0; i < slots; i++)
        atomic_store_explicit(&slot_at(&v, i)->state, slot_state(i, LOCAL_SLOT_FREE),
                              memory_order_relaxed);
}

bool local_ring_check(const void *mem, size_t file_bytes, uint32_t mtu, uint32_t *slots)
{
    if (file_bytes < sizeof(struct local_ring_header))
        return false;
    const struct local_ring_header *h = mem;
    uint32_t n = h->slots; /* one read: the owner's file may change under us */
    if (h->magic != LOCAL_MAGIC_RING || h->version != LOCAL_VERSION ||
        h->slot_size != LOCAL_SLOT_HEADER + mtu)
        return false;
    if (n < LOCAL_RING_MIN_SLOTS || n > LOCAL_RING_MAX_SLOTS || (n & (n - 1)) != 0 ||
        local_ring_bytes(n, mtu) > file_bytes)
        return false;
    *slots = n;
    return true;
}

void local_ring_view_init(struct local_ring_view *v, void *mem, uint32_t slots, uint32_t mtu)
{
    v->hdr = mem;
    v->slots_mem = (uint8_t *)mem + sizeof(struct local_ring_header);
    v->slots = slots;
    v->mtu = mtu;
}

enum local_push_result local_ring_push(struct local_ring_view *v, const uint8_t *data, uint32_t len,
                                       uint32_t src_qpn, uint32_t flags, uint32_t pid)
{
    struct local_ring_header *h = v->hdr;
    uint64_t tail = atomic_load_explicit(&h->tail, memory_order_relaxed);
    for (;;) {
        uint64_t head = atomic_load_explicit(&h->head, memory_order_acquire);
        if (tail - head >= v->slots) {
            /* Full (or a head no owner would store: the same to us). The owner's receive queue
             * overflows; it learns of it through the count, the sender never waits. */
            atomic_fetch_add_explicit(&h->overruns, 1, memory_order_relaxed);
            return LOCAL_PUSH_FULL;
        }
        if (atomic_compare_exchange_weak_explicit(&h->tail, &tail, tail + 1, memory_order_acq_rel,
                                                  memory_order_relaxed))
            break;
    }
    struct local_slot *s = slot_at(v, tail);
    atomic_store_explicit(&s->writer_pid, pid, memory_order_relaxed);
    uint64_t expect = slot_state(tail, LOCAL_SLOT_FREE);
    if (!atomic_compare_exchange_strong(&s->state, &expect, slot_state(tail, LOCAL_SLOT_WRITING)))
        return LOCAL_PUSH_SKIPPED; /* the owner gave up on this slot before we began */
    memcpy((uint8_t *)s + LOCAL_SLOT_HEADER, data, len);
    atomic_store_explicit(&s->len, len, memory_order_relaxed);
    atomic_store_explicit(&s->src_qpn, src_qpn, memory_order_relaxed);
    atomic_store_explicit(&s->flags, flags, memory_order_relaxed);
    expect = slot_state(tail, LOCAL_SLOT_WRITING);
    if (!atomic_compare_exchange_strong(&s->state, &expect, slot_state(tail, LOCAL_SLOT_READY)))
        return LOCAL_PUSH_SKIPPED;
    /* Sequentially consistent with the owner's store of `waiting` and its last look: either it
     * sees this slot ready or we see it waiting. */
    if (atomic_load(&h->waiting) != 0 && atomic_exchange(&h->waiting, 0) != 0)
        return LOCAL_PUSH_OK_WAKE;
    return LOCAL_PUSH_OK;
}

void local_ring_reader_init(struct local_ring_reader *r, void *mem, uint32_t slots, uint32_t mtu)
{
    memset(r, 0, sizeof(*r));
    local_ring_view_init(&r->view, mem, slots, mtu);
}

/* The slot at the head is done with: free for the writer one lap on. */
static void release_head(struct local_ring_reader *r, struct local_slot *s, uint64_t expect)
{
    uint64_t next = slot_state(r->head + r->view.slots, LOCAL_SLOT_FREE);
    /* A compare-and-swap, so a writer still holding the slot (taken back while stuck) fails its
     * own and learns it lost the datagram. */
    atomic_compare_exchange_strong(&s->state, &expect, next);
    r->head++;
    r->stuck_since_ns = 0;
    atomic_store_explicit(&r->view.hdr->head, r->head, memory_order_release);
}

enum local_pop_result local_ring_pop(struct local_ring_reader *r, uint8_t *out,
                                     struct local_ring_item *item, const struct local_ring_env *env,
                                     uint64_t *retry_ns)
{
    for (;;) {
        struct local_slot *s = slot_at(&r->view, r->head);
        uint64_t st = atomic_load_explicit(&s->state, memory_order_acquire);
        if (st == slot_state(r->head, LOCAL_SLOT_READY)) {
            uint32_t len = atomic_load_explicit(&s->len, memory_order_relaxed);
            if (len > r->view.mtu) {
                r->bad_slots++;
                release_head(r, s, st);
                continue;
            }
            item->len = len;
            item->src_qpn = atomic_load_explicit(&s->src_qpn, memory_order_relaxed) & 0xffffffu;
            item->flags = atomic_load_explicit(&s->flags, memory_order_relaxed);
            memcpy(out, (const uint8_t *)s + LOCAL_SLOT_HEADER, len);
            release_head(r, s, st);
            return LOCAL_POP_ITEM;
        }
        uint64_t tail = atomic_load_explicit(&r->view.hdr->tail, memory_order_acquire);
        bool reserved = st == slot_state(r->head, LOCAL_SLOT_WRITING) ||
                        (st == slot_state(r->head, LOCAL_SLOT_FREE) &&
                         tail - r->head - 1 < (uint64_t)UINT32_MAX);
        if (!reserved) {
            if (st == slot_state(r->head, LOCAL_SLOT_FREE))
                return LOCAL_POP_EMPTY;
            /* A state of no lap of ours: garbage from another process. Take the slot back. */
            r->bad_slots++;
            release_head(r, s, st);
            continue;
        }
        uint64_t now_ns = env->now_ns(); /* only here: a clock read costs on some hosts */
        if (r->stuck_since_ns == 0 || r->stuck_pos != r->head) {
            r->stuck_since_ns = now_ns != 0 ? now_ns : 1;
            r->stuck_pos = r->head;
        }
        uint64_t waited = now_ns - r->stuck_since_ns;
        bool writing = st == slot_state(r->head, LOCAL_SLOT_WRITING);
        uint64_t grace = writing ? LOCAL_STUCK_WRITING_NS : LOCAL_STUCK_FREE_NS;
        if (writing && waited >= LOCAL_STUCK_FREE_NS && env->writer_alive != NULL &&
            !env->writer_alive(atomic_load_explicit(&s->writer_pid, memory_order_relaxed)))
            grace = LOCAL_STUCK_FREE_NS; /* killed mid-datagram: nothing will finish it */
        if (waited < grace) {
            uint64_t check = writing ? LOCAL_STUCK_FREE_NS : grace;
            *retry_ns = r->stuck_since_ns + (waited < check ? check : grace);
            return LOCAL_POP_STUCK;
        }
        r->bad_slots++;
        release_head(r, s, st);
    }
}

bool local_ring_ready(const struct local_ring_reader *r)
{
    const struct local_slot *s = slot_at(&r->view, r->head);
    return atomic_load(&((struct local_slot *)s)->state) == slot_state(r->head, LOCAL_SLOT_READY);
}

bool local_registry_check(const struct local_registry *reg, size_t file_bytes, uint32_t *mtu)
{
    if (file_bytes < sizeof(*reg))
        return false;
    uint32_t m = reg->mtu;
    if (reg->magic != LOCAL_MAGIC_REGISTRY || reg->version != LOCAL_VERSION ||
        reg->max_members != LOCAL_MAX_MEMBERS || reg->max_groups != LOCAL_MAX_GROUPS ||
        (m != 1024 && m != 4096))
        return false;
    *mtu = m;
    return true;
}

void local_registry_init(struct local_registry *reg, uint32_t mtu)
{
    memset(reg, 0, sizeof(*reg));
    reg->magic = LOCAL_MAGIC_REGISTRY;
    reg->version = LOCAL_VERSION;
    reg->mtu = mtu;
    reg->max_members = LOCAL_MAX_MEMBERS;
    reg->max_groups = LOCAL_MAX_GROUPS;
}

int local_registry_find_group(const struct local_registry *reg, uint32_t group)
{
    if (group == 0)
        return -1;
    for (uint32_t i = 0; i < LOCAL_MAX_GROUPS; i++) {
        if (atomic_load_explicit(&((struct local_registry *)reg)->groups[i].group,
                                 memory_order_acquire) == group)
            return (int)i;
    }
    return -1;
}
