/* SPDX-License-Identifier: BSD-2-Clause */
/* script_transport.h - a test transport whose receive queue is written by the test: datagrams
 * from any source, exactly as a hostile fabric could deliver them, and an always-joined
 * membership. Used by pub/sub unit tests and the receive-path fuzzer. */
#ifndef RDPS_TESTS_SCRIPT_TRANSPORT_H
#define RDPS_TESTS_SCRIPT_TRANSPORT_H

#include <stdint.h>

#include "ctx_internal.h"

#define SCRIPT_MAX_PAYLOAD 1024

struct script_transport;

/* A transport with max_payload SCRIPT_MAX_PAYLOAD, `send_slots` send buffers; its own source (what
 * a keyed ctx binds its frames to) is fe80::ff QPN 1 unless script_ctx_create says otherwise. */
int script_transport_create(uint32_t send_slots, struct rdps_transport **out);
/*
 * Queues one datagram as received from `src` (NULL: an anonymous source with no GRH, QPN 0).
 * Returns 0, or RDPS_ENOSPC when the receive queue (4096 datagrams) is full.
 */
int script_transport_inject(struct rdps_transport *t, const struct rdps_source *src,
                            const void *data, uint32_t len);
/* Frames the ctx sent since creation (their count and the last one). */
uint64_t script_transport_sent(const struct rdps_transport *t);
const uint8_t *script_transport_last_sent(const struct rdps_transport *t, uint32_t *len);

/*
 * Every frame the ctx sends, as it is submitted: `to` is the source a unicast destination was made
 * for (source_dest), NULL for a multicast group. Set NULL to stop. Unicast destinations are kept
 * for SCRIPT_MAX_DESTS sources (further ones are refused with RDPS_EAGAIN, as a full AH cache
 * refuses).
 */
#define SCRIPT_MAX_DESTS 8192
typedef void (*script_sent_fn)(void *user, const struct rdps_source *to, const uint8_t *frame,
                               uint32_t len);
void script_transport_on_sent(struct rdps_transport *t, script_sent_fn fn, void *user);

/* A membership whose joins complete at once. */
int script_membership_create(const struct rdps_membership_ops **ops, void **impl);

/*
 * A ctx over a script transport and membership, identity `self` (our QPN/GID), clock
 * `clock(user)`; cfg NULL: defaults. *transport is the ctx's transport (for injection).
 */
int script_ctx_create(const rdps_config *cfg, const struct rdps_source *self,
                      uint64_t (*clock)(void *user), void *clock_user, rdps_ctx_t **out,
                      struct rdps_transport **transport);

#endif /* RDPS_TESTS_SCRIPT_TRANSPORT_H */
