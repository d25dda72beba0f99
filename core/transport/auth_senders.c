/* SPDX-License-Identifier: BSD-2-Clause */
/* auth_senders.c - the authenticating interceptor's sender table: hashed by nonce prefix, least
 * recently verified evicted at the cap (auth_senders.h). */
#include "auth_senders.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "rdps_error.h"

#define NONE UINT32_MAX

int rdps__auth_senders_init(struct auth_senders *t, uint32_t cap)
{
    memset(t, 0, sizeof(*t));
    uint32_t buckets = 16;
    while (buckets < 2 * cap)
        buckets <<= 1;
    t->senders = calloc(cap, sizeof(*t->senders));
    t->buckets = malloc((size_t)buckets * sizeof(*t->buckets));
    if (t->senders == NULL || t->buckets == NULL) {
        free(t->senders);
        free(t->buckets);
        memset(t, 0, sizeof(*t));
        return rdps__set_err(RDPS_ENOMEM, "authentication: out of memory");
    }
    memset(t->buckets, 0xff, (size_t)buckets * sizeof(*t->buckets)); /* NONE */
    t->bucket_mask = buckets - 1;
    t->cap = cap;
    t->lru_head = t->lru_tail = NONE;
    randombytes_buf(&t->hash_seed, sizeof(t->hash_seed));
    return 0;
}

void rdps__auth_senders_fini(struct auth_senders *t)
{
    if (t->senders != NULL) {
        sodium_memzero(t->senders, (size_t)t->cap * sizeof(*t->senders));
        free(t->senders);
    }
    free(t->buckets);
    memset(t, 0, sizeof(*t));
}

static uint32_t prefix_hash(const struct auth_senders *t, const uint8_t *prefix)
{
    uint64_t a, b;
    memcpy(&a, prefix, 8);
    memcpy(&b, prefix + 8, 8);
    uint64_t h = (a ^ t->hash_seed) * 0x9e3779b97f4a7c15ull;
    h = (h ^ (h >> 29) ^ b) * 0xbf58476d1ce4e5b9ull;
    return (uint32_t)(h >> 32) & t->bucket_mask;
}

struct auth_sender *rdps__auth_senders_find(struct auth_senders *t, const uint8_t *prefix)
{
    for (uint32_t i = t->buckets[prefix_hash(t, prefix)]; i != NONE; i = t->senders[i].hash_next)
        if (memcmp(t->senders[i].prefix, prefix, RDPS_AUTH_PREFIX_LEN) == 0)
            return &t->senders[i];
    return NULL;
}

static void lru_unlink(struct auth_senders *t, uint32_t i)
{
    struct auth_sender *s = &t->senders[i];
    if (s->lru_prev != NONE)
        t->senders[s->lru_prev].lru_next = s->lru_next;
    else
        t->lru_head = s->lru_next;
    if (s->lru_next != NONE)
        t->senders[s->lru_next].lru_prev = s->lru_prev;
    else
        t->lru_tail = s->lru_prev;
}

static void lru_push_front(struct auth_senders *t, uint32_t i)
{
    struct auth_sender *s = &t->senders[i];
    s->lru_prev = NONE;
    s->lru_next = t->lru_head;
    if (t->lru_head != NONE)
        t->senders[t->lru_head].lru_prev = i;
    t->lru_head = i;
    if (t->lru_tail == NONE)
        t->lru_tail = i;
}

void rdps__auth_senders_touch(struct auth_senders *t, struct auth_sender *s)
{
    uint32_t i = (uint32_t)(s - t->senders);
    if (t->lru_head == i)
        return;
    lru_unlink(t, i);
    lru_push_front(t, i);
}

struct auth_sender *rdps__auth_senders_insert(struct auth_senders *t, const uint8_t *prefix)
{
    uint8_t copy[RDPS_AUTH_PREFIX_LEN];
    memcpy(copy, prefix, sizeof(copy));
    uint32_t i;
    if (t->used < t->cap) {
        i = t->used++;
    } else {
        i = t->lru_tail;
        lru_unlink(t, i);
        uint32_t *link = &t->buckets[prefix_hash(t, t->senders[i].prefix)];
        while (*link != i)
            link = &t->senders[*link].hash_next;
        *link = t->senders[i].hash_next;
        t->evicted++;
    }
    struct auth_sender *s = &t->senders[i];
    sodium_memzero(s, sizeof(*s));
    memcpy(s->prefix, copy, RDPS_AUTH_PREFIX_LEN);
    uint32_t *bucket = &t->buckets[prefix_hash(t, copy)];
    s->hash_next = *bucket;
    *bucket = i;
    lru_push_front(t, i);
    return s;
}

void rdps__auth_senders_forget_key(struct auth_senders *t, uint32_t key_id)
{
    for (uint32_t i = 0; i < t->used; i++) {
        if (t->senders[i].key_id == key_id) {
            sodium_memzero(t->senders[i].subkey, sizeof(t->senders[i].subkey));
            t->senders[i].key_id = 0;
        }
    }
}
