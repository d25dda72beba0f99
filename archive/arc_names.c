/* SPDX-License-Identifier: BSD-2-Clause */
/* arc_names.c - the reader's table of topic names: open addressing, grown by doubling, capped. */
#include "arc_names.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

void rdps__arc_names_init(struct arc_names *n)
{
    memset(n, 0, sizeof(*n));
}

void rdps__arc_names_fini(struct arc_names *n)
{
    for (size_t i = 0; i < n->nslots; i++)
        free(n->slots[i].name);
    free(n->slots);
    memset(n, 0, sizeof(*n));
}

static size_t slot_of(const struct arc_name *slots, size_t nslots, uint64_t id)
{
    size_t mask = nslots - 1;
    size_t i = (size_t)((id * 0x9e3779b97f4a7c15ull) >> 20) & mask;
    while (slots[i].id != 0 && slots[i].id != id)
        i = (i + 1) & mask;
    return i;
}

static bool grow(struct arc_names *n)
{
    size_t nslots = n->nslots ? n->nslots * 2 : 64;
    struct arc_name *slots = calloc(nslots, sizeof(*slots));
    if (slots == NULL)
        return false;
    for (size_t i = 0; i < n->nslots; i++)
        if (n->slots[i].id != 0)
            slots[slot_of(slots, nslots, n->slots[i].id)] = n->slots[i];
    free(n->slots);
    n->slots = slots;
    n->nslots = nslots;
    return true;
}

void rdps__arc_names_put(struct arc_names *n, uint64_t id, const uint8_t *name, size_t len)
{
    if (id == 0)
        return;
    if (n->nslots == 0 || (n->used + 1) * 2 > n->nslots) {
        if (n->used >= RDPS_ARC_NAMES_MAX || !grow(n))
            return;
    }
    struct arc_name *s = &n->slots[slot_of(n->slots, n->nslots, id)];
    if (s->id == id && s->name != NULL && strlen(s->name) == len && memcmp(s->name, name, len) == 0)
        return;
    char *copy = malloc(len + 1);
    if (copy == NULL)
        return;
    memcpy(copy, name, len);
    copy[len] = '\0';
    if (s->id == 0)
        n->used++;
    free(s->name);
    s->id = id;
    s->name = copy;
}

const char *rdps__arc_names_get(const struct arc_names *n, uint64_t id)
{
    if (n->nslots == 0 || id == 0)
        return "";
    const struct arc_name *s = &n->slots[slot_of(n->slots, n->nslots, id)];
    return s->id == id ? s->name : "";
}
