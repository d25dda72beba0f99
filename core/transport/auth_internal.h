/* SPDX-License-Identifier: BSD-2-Clause */
/* auth_internal.h - the authenticating interceptor's state, shared by its transport (auth.c) and
 * its data path (auth_path.c); nothing outside core/transport includes it. */
#ifndef RDPS_AUTH_INTERNAL_H
#define RDPS_AUTH_INTERNAL_H

#include "auth_senders.h"
#include "rdps_auth.h"

struct auth_key {
    uint32_t id; /* 0: empty */
    uint8_t key[RDPS_AUTH_KEY_LEN];
};

/* base.inner is the wrapped transport. */
struct auth_transport {
    struct rdps_transport base;
    struct auth_key keys[2];
    unsigned send_key; /* index into keys[] */
    bool encrypt;
    /* Sending: our prefix (drawn in the process generation auth_forks had then), its subkey
     * under the key in use, the two counters. */
    uint8_t prefix[RDPS_AUTH_PREFIX_LEN];
    uint8_t send_subkey[RDPS_AUTH_KEY_LEN];
    uint64_t data_counter, control_counter;
    unsigned long prefix_forks;
    /* Freshness: the wall clock, and how far a frame's send time may be from it. */
    uint64_t (*clock_s)(void *user);
    void *clock_user;
    uint32_t max_age_s;
    struct auth_senders senders;
    struct rdps_tx_mem *regions;
    struct rdps_auth_stats stats;
};

static inline struct auth_transport *to_auth(struct rdps_transport *t)
{
    return (struct auth_transport *)t;
}

static inline const struct auth_key *find_key(const struct auth_transport *at, uint32_t id)
{
    for (unsigned i = 0; i < 2; i++)
        if (at->keys[i].id == id && id != 0)
            return &at->keys[i];
    return NULL;
}

/* Registers the fork watch once per process (pthread_atfork); 0, or RDPS_ENOMEM. */
int rdps__auth_fork_watch(void);
/* A fresh sending identity: a new random prefix, the counters from the start again. */
void rdps__auth_new_prefix(struct auth_transport *at);
/* Draws a new prefix when this is a forked child of the process that drew the current one. */
void rdps__auth_after_fork(struct auth_transport *at);
/* Seals the plain frame in buf (len bytes) for the source each destination sees and hands it to
 * the inner transport, which owns buf from here on failure too. */
int rdps__auth_seal_submit(struct auth_transport *at, struct rdps_tx_buf *buf, uint32_t len,
                           const struct rdps_dest *const *dests, unsigned ndest);
/* Verifies (and decrypts) one received datagram in place: true when it goes up, a plain frame. */
bool rdps__auth_accept(struct auth_transport *at, struct rdps_rx_datagram *d, uint32_t now_s);

#endif /* RDPS_AUTH_INTERNAL_H */
