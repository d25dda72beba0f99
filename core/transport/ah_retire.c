/* SPDX-License-Identifier: BSD-2-Clause */
/* ah_retire.c - deferred destruction of address handles (FIFO ring swept by send sequence). */
#include "rdps_ah_retire.h"

#include "rdps_error.h"

#include <stdlib.h>
#include <string.h>

int rdps__ah_retire_init(struct rdps_ah_retire *r, uint32_t capacity, void (*destroy)(void *ah))
{
    memset(r, 0, sizeof(*r));
    if (capacity == 0 || capacity > (1u << 20) || destroy == NULL)
        return rdps__set_err(RDPS_EINVAL, "AH retirement: bad capacity %u or no destroy function",
                             capacity);
    r->ring = calloc(capacity, sizeof(*r->ring));
    if (r->ring == NULL)
        return rdps__set_err(RDPS_ENOMEM, "AH retirement: out of memory for %u entries", capacity);
    r->capacity = capacity;
    r->destroy = destroy;
    return 0;
}

void rdps__ah_retire_fini(struct rdps_ah_retire *r)
{
    if (r == NULL || r->ring == NULL)
        return;
    rdps__ah_retire_sweep(r, UINT64_MAX);
    free(r->ring);
    memset(r, 0, sizeof(*r));
}

int rdps__ah_retire(struct rdps_ah_retire *r, void *ah, uint64_t pending_until, uint64_t done_seq)
{
    if (ah == NULL)
        return 0;
    if (done_seq >= pending_until && r->count == 0) {
        r->destroy(ah);
        r->destroyed_now++;
        return 0;
    }
    /* Not destroyed at once while older AHs wait, so the ring stays ordered by sequence. */
    if (r->count == r->capacity) {
        r->refused++;
        return RDPS_EAGAIN;
    }
    struct rdps_ah_retire_entry *e = &r->ring[(r->head + r->count) % r->capacity];
    e->ah = ah;
    e->free_after_seq = pending_until;
    r->count++;
    r->deferred++;
    rdps__ah_retire_sweep(r, done_seq);
    return 0;
}

void rdps__ah_retire_sweep(struct rdps_ah_retire *r, uint64_t done_seq)
{
    while (r->count > 0 && done_seq >= r->ring[r->head].free_after_seq) {
        r->destroy(r->ring[r->head].ah);
        r->ring[r->head].ah = NULL;
        r->head = (r->head + 1) % r->capacity;
        r->count--;
    }
}
