/* SPDX-License-Identifier: BSD-2-Clause */
/* auth_senders.h - the authenticating interceptor's table of senders it verified frames from
 * (by nonce prefix): cached subkeys, the address each was verified from, anti-replay windows. */
#ifndef RDPS_AUTH_SENDERS_H
#define RDPS_AUTH_SENDERS_H

#include "rdps_auth.h"

#include <stdbool.h>
#include <stdint.h>

/*
 * A sender as its nonce prefix names it. An entry exists only for a prefix whose frame verified
 * under an installed key (a host without the key cannot make one). It remembers the source the
 * prefix was verified from, once per kind of address (through a GRH: GID + QPN; without one, on
 * InfiniBand: LID + QPN; one sender is seen as both there: its multicast carries a GRH, its
 * unicast in the subnet none): the same prefix from any other address is a replay of its bytes.
 */
struct auth_sender {
    uint8_t prefix[RDPS_AUTH_PREFIX_LEN];
    uint8_t subkey[RDPS_AUTH_KEY_LEN];
    uint32_t key_id; /* the key `subkey` was derived from (0: none) */
    uint32_t hash_next, lru_prev, lru_next;
    uint32_t heard_s;                        /* our clock when a frame of it last verified */
    uint8_t source_set;                      /* bit k: source[k] holds one (k = has_gid) */
    uint8_t source[2][RDPS_AUTH_SOURCE_LEN]; /* [0] without a GRH, [1] through one */
    struct rdps_auth_window control, data;
    uint64_t control_bits[RDPS_AUTH_CONTROL_WORDS];
    uint64_t data_bits[RDPS_AUTH_DATA_WORDS];
};

/* Hashed by prefix (seeded per process), in LRU order (head: most recently verified). */
struct auth_senders {
    struct auth_sender *senders;
    uint32_t *buckets;
    uint32_t bucket_mask, cap, used, lru_head, lru_tail;
    uint64_t hash_seed;
    uint64_t evicted;
};

/* cap entries (1..2^20); RDPS_ENOMEM. */
int rdps__auth_senders_init(struct auth_senders *t, uint32_t cap);
/* Wipes (subkeys) and frees. */
void rdps__auth_senders_fini(struct auth_senders *t);
struct auth_sender *rdps__auth_senders_find(struct auth_senders *t, const uint8_t *prefix);
/* A new entry for a sender whose frame verified; at the cap the least recently verified one is
 * evicted (counted in `evicted`). `prefix` may point into the datagram. */
struct auth_sender *rdps__auth_senders_insert(struct auth_senders *t, const uint8_t *prefix);
/* The entry verified a frame now: most recently used. */
void rdps__auth_senders_touch(struct auth_senders *t, struct auth_sender *s);
/* Subkeys derived from a removed key go with it. */
void rdps__auth_senders_forget_key(struct auth_senders *t, uint32_t key_id);

/*
 * Whether `source` (RDPS_AUTH_SOURCE_LEN bytes) may send under s's prefix: true when s has no
 * source of that kind yet or has exactly this one.
 */
static inline bool rdps__auth_sender_source_ok(const struct auth_sender *s, const uint8_t *source)
{
    unsigned kind = source[22] != 0;
    return (s->source_set & (1u << kind)) == 0 ||
           __builtin_memcmp(s->source[kind], source, RDPS_AUTH_SOURCE_LEN) == 0;
}

static inline void rdps__auth_sender_set_source(struct auth_sender *s, const uint8_t *source)
{
    unsigned kind = source[22] != 0;
    __builtin_memcpy(s->source[kind], source, RDPS_AUTH_SOURCE_LEN);
    s->source_set |= (uint8_t)(1u << kind);
}

#endif /* RDPS_AUTH_SENDERS_H */
