/* SPDX-License-Identifier: BSD-2-Clause */
/* handles.c - the process-wide table behind the public handles (handles.h). */
#include "handles.h"

#include <pthread.h>
#include <stdbool.h>
#include <sys/mman.h>

#include "rdps_error.h"

#define NO_SLOT   UINT32_MAX
#define FREE_MARK 8u /* in a free slot's check word: never in a live one (handle ^ type) */

/* What lookups see until the table is reserved: one slot that matches nothing. */
static struct rdps__handle_slot no_table[1];
struct rdps__handle_table rdps__handles = {.slots = no_table, .mask = 0};

/* Creating and destroying: the table's reservation, its free list (oldest freed first). */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rdps__handle_slot *table;
static uint32_t used, free_head = NO_SLOT, free_tail = NO_SLOT;

static const char *type_name(uint64_t type)
{
    switch (type) {
    case RDPS_HANDLE_CTX:
        return "ctx";
    case RDPS_HANDLE_PUB:
        return "publisher";
    case RDPS_HANDLE_SUB:
        return "subscriber";
    default:
        return "handle";
    }
}

/* Reserves the whole table's address space (pages come as slots are touched), then lets
 * lookups reach it: slots first, the mask after (handles.h, rdps__handle_get). */
static bool table_reserve(void)
{
    if (table != NULL)
        return true;
    void *p = mmap(NULL, (size_t)RDPS__HANDLE_MAX * sizeof(struct rdps__handle_slot),
                   PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return false;
    table = p;
    atomic_store_explicit(&rdps__handles.slots, table, memory_order_relaxed);
    atomic_store_explicit(&rdps__handles.mask, (RDPS__HANDLE_MAX - 1) << RDPS__HANDLE_SHIFT,
                          memory_order_release);
    return true;
}

/* A free slot's index (NO_SLOT when none is left); *generation: the one its handle gets. */
static uint32_t slot_take(uint32_t *generation)
{
    if (free_head != NO_SLOT) {
        uint32_t index = free_head;
        struct rdps__handle_slot *s = &table[index];
        free_head = (uint32_t)(uintptr_t)atomic_load_explicit(&s->obj, memory_order_relaxed);
        if (free_head == NO_SLOT)
            free_tail = NO_SLOT;
        *generation = (uint32_t)(atomic_load_explicit(&s->check, memory_order_relaxed) >> 32);
        return index;
    }
    if (used >= RDPS__HANDLE_MAX || !table_reserve())
        return NO_SLOT;
    *generation = 1;
    return used++;
}

uintptr_t rdps__handle_new(enum rdps_handle_type type, void *obj)
{
    uint32_t generation;
    pthread_mutex_lock(&table_lock);
    uint32_t index = slot_take(&generation);
    if (index == NO_SLOT) {
        pthread_mutex_unlock(&table_lock);
        rdps__set_err(RDPS_ENOMEM,
                      "no handle left for a new %s: %u contexts, publishers and subscribers "
                      "are open in this process (or the handle table could not be mapped)",
                      type_name(type), RDPS__HANDLE_MAX);
        return 0;
    }
    uint64_t handle = (uint64_t)generation << 32 | (uint64_t)index << RDPS__HANDLE_SHIFT | 1u;
    struct rdps__handle_slot *s = &table[index];
    atomic_store_explicit(&s->obj, obj, memory_order_relaxed);
    atomic_store_explicit(&s->check, handle ^ (uint64_t)type, memory_order_release);
    pthread_mutex_unlock(&table_lock);
    return (uintptr_t)handle;
}

void rdps__handle_release(uintptr_t handle)
{
    uint64_t h = (uint64_t)handle;
    uint32_t index = (uint32_t)(h >> RDPS__HANDLE_SHIFT) & (RDPS__HANDLE_MAX - 1);
    if (h == 0)
        return;
    pthread_mutex_lock(&table_lock);
    if (table != NULL && index < used) {
        struct rdps__handle_slot *s = &table[index];
        uint64_t check = atomic_load_explicit(&s->check, memory_order_relaxed);
        if ((check ^ h) >= 1 && (check ^ h) <= 3) { /* live, and this very handle */
            /* The next generation (0 skipped: a handle is never below 2^32). */
            uint32_t next = (uint32_t)(h >> 32) + 1;
            atomic_store_explicit(&s->check, (uint64_t)(next == 0 ? 1 : next) << 32 | FREE_MARK,
                                  memory_order_release);
            atomic_store_explicit(&s->obj, (void *)(uintptr_t)NO_SLOT, memory_order_relaxed);
            if (free_tail != NO_SLOT)
                atomic_store_explicit(&table[free_tail].obj, (void *)(uintptr_t)index,
                                      memory_order_relaxed);
            else
                free_head = index;
            free_tail = index;
        }
    }
    pthread_mutex_unlock(&table_lock);
}

int rdps__handle_refusal(const void *handle, enum rdps_handle_type type)
{
    uint64_t h = (uint64_t)(uintptr_t)handle;
    const char *what = type_name(type);
    if (h == 0)
        return rdps__set_err(RDPS_EINVAL, "NULL %s", what);
    if (!(h & 1) || (h >> 32) == 0 || (h & 0xe) != 0)
        return rdps__set_err(RDPS_EINVAL, "%p is not a %s handle (not one rdps returned)", handle,
                             what);
    uint32_t offset = (uint32_t)h & atomic_load_explicit(&rdps__handles.mask, memory_order_acquire);
    const struct rdps__handle_slot *s =
        (const struct rdps__handle_slot *)((const char *)atomic_load_explicit(
                                               &rdps__handles.slots, memory_order_relaxed) +
                                           offset);
    uint64_t other = atomic_load_explicit(&s->check, memory_order_acquire) ^ h;
    if (other >= 1 && other <= 3) /* live, of another type */
        return rdps__set_err(RDPS_EINVAL, "a %s handle where a %s is expected", type_name(other),
                             what);
    return rdps__set_err(RDPS_ECLOSED, "the %s was destroyed%s: its handle stays invalid", what,
                         type == RDPS_HANDLE_CTX ? ""
                         : type == RDPS_HANDLE_PUB
                             ? " (rdps_pub_destroy, or rdps_ctx_destroy of its ctx)"
                             : " (rdps_sub_destroy, or rdps_ctx_destroy of its ctx)");
}
