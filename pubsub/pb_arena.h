/* SPDX-License-Identifier: BSD-2-Clause */
/* pb_arena.h - a bump arena on the caller's stack for protobuf-c to decode control messages into.
 */
#ifndef RDPS_PB_ARENA_H
#define RDPS_PB_ARENA_H

#include <protobuf-c/protobuf-c.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>

/*
 * protobuf-c allocates the unpacked message, its strings, its unknown fields and, past 16
 * fields, its scan slabs: here from a bump arena on the stack, so decoding (which every
 * received announcement or peer list does, forged or not) never calls malloc.
 * RDPS_ANNOUNCE_MAX_BYTES of input need well under this (at most 256 two-byte fields); were it
 * short, the allocation fails and the message is rejected like any other malformed one.
 */
struct rdps_pb_arena {
    size_t used;
    alignas(max_align_t) uint8_t bytes[16384];
};

static inline void *rdps__pb_arena_alloc(void *data, size_t size)
{
    struct rdps_pb_arena *a = data;
    size = (size + alignof(max_align_t) - 1) & ~(alignof(max_align_t) - 1);
    if (size > sizeof(a->bytes) - a->used)
        return NULL;
    void *p = a->bytes + a->used;
    a->used += size;
    return p;
}

static inline void rdps__pb_arena_free(void *data, void *ptr)
{
    (void)data, (void)ptr; /* the whole arena goes when the decode returns */
}

/* An allocator over `a`, emptied. */
static inline ProtobufCAllocator rdps__pb_arena_allocator(struct rdps_pb_arena *a)
{
    a->used = 0;
    return (ProtobufCAllocator){
        .alloc = rdps__pb_arena_alloc, .free = rdps__pb_arena_free, .allocator_data = a};
}

#endif /* RDPS_PB_ARENA_H */
