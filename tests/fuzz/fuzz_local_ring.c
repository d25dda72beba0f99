/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_local_ring.c - the local device's shared state as another process may leave it: a ring's
 * slots, tail and overrun count, and a registry, written with any bytes; the owner's reader takes
 * datagrams of at most the MTU and always moves on (stuck slots taken back as time passes). */
#include "local_shm.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 64u
#define MTU   1024u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t fake_now;

static uint64_t fake_clock(void)
{
    return fake_now;
}

static bool writer_alive(uint32_t pid)
{
    return !(pid & 1); /* the input's pids say whether their writer lives */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Aligned as the ring's header (its cache lines) and as a mapping is: a page. */
    static _Alignas(4096)
        uint8_t ring[sizeof(struct local_ring_header) + SLOTS * (LOCAL_SLOT_HEADER + MTU)];
    static uint8_t out[MTU];
    local_ring_init(ring, SLOTS, MTU, 1);
    /* The input overwrites the ring from the writers' fields on (the tail's cache line). */
    size_t from = 64, room = sizeof(ring) - from;
    memcpy(ring + from, data, size < room ? size : room);
    struct local_ring_reader r;
    local_ring_reader_init(&r, ring, SLOTS, MTU);
    static const struct local_ring_env env = {.now_ns = fake_clock, .writer_alive = writer_alive};
    fake_now = 1;
    for (unsigned i = 0; i < 4 * SLOTS; i++) {
        struct local_ring_item item;
        uint64_t retry = 0;
        enum local_pop_result res = local_ring_pop(&r, out, &item, &env, &retry);
        if (res == LOCAL_POP_ITEM && item.len > MTU)
            abort();
        if (res == LOCAL_POP_STUCK) {
            if (retry <= fake_now)
                abort(); /* a retry time that is not ahead would spin an event loop */
            fake_now = retry;
        }
        if (res == LOCAL_POP_EMPTY)
            break;
    }
    (void)local_ring_ready(&r);
    /* A ring image as a writer maps it, and a registry. */
    uint32_t slots, mtu;
    if (local_ring_check(ring, sizeof(ring), MTU, &slots) && slots != SLOTS)
        abort();
    if (size >= sizeof(struct local_registry)) {
        /* Page-aligned, as the mapped registry is. */
        struct local_registry *reg = aligned_alloc(4096, (sizeof(*reg) + 4095) / 4096 * 4096);
        if (reg == NULL)
            return 0;
        memcpy(reg, data, sizeof(*reg));
        if (local_registry_check(reg, sizeof(*reg), &mtu) && mtu != 1024 && mtu != 4096)
            abort();
        (void)local_registry_find_group(reg, 0xefc00001u);
        free(reg);
    }
    return 0;
}
