/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_local.h - the local device: a transport whose endpoints are the processes of one host,
 * meeting through shared memory under a directory (local_shm.h), with the verbs UD contract. */
#ifndef RDPS_LOCAL_H
#define RDPS_LOCAL_H

#include "rdps_transport.h"

#include <stdint.h>

/*
 * Semantics, as the verbs UD transport's:
 *  - datagrams of at most the host's MTU (1024 or 4096, fixed by the first member of a directory;
 *    a member asking for the other one is refused);
 *  - a multicast group reaches every member that joined it (the sender too when it joined, as
 *    rxe loops multicast back), with to_multicast set; unicast reaches the member of a QPN, and a
 *    datagram to a member that is gone is lost;
 *  - each member's receive queue is a ring of recv_slots (a power of two, 64..4096, at most
 *    8 MiB): a datagram that finds it full is dropped and counted in the receiver's
 *    rx_queue_empty, the sender never waits;
 *  - sends are copied into the receivers' rings at flush and completed by the next poll() (a
 *    sender that outruns its polls sees the send queue fill, as on a device, and batches);
 *  - the event fd wakes a sleeping member (arm) when a datagram arrives: writers write the
 *    member's FIFO only when it armed, so busy-polling costs no system call;
 *  - a member that dies (kill -9 included) is found by the others (its flock is gone), removed
 *    from its groups and its files deleted; a slot it left half written is taken back by the
 *    ring's owner.
 * Sources: src_qpn is the member's QPN, src_gid fe80::5244:5053:<qpn> (every member a host of
 * its own, as on the loopback device); seed peers name a member as 127.78.0.0 + its index.
 */
struct rdps_local_config {
    const char *dir;     /* NULL: $RDPS_LOCAL_DIR, else /dev/shm/rdps-local-<uid> (or -g<gid>) */
    const char *group;   /* NULL: $RDPS_LOCAL_GROUP; set: files 0660 of this group, else 0600 */
    uint32_t mtu;        /* 1024 or 4096; 0: the directory's, 1024 for a new one */
    uint32_t send_slots; /* default 1024 */
    uint32_t recv_slots; /* the ring's slots asked for (default 4096, capped) */
};

#define RDPS_LOCAL_NET 0x7f4e0000u /* 127.78.0.0/16: seed-peer addresses of local members */

int rdps__local_create(const struct rdps_local_config *cfg, struct rdps_transport **out);

/* A group's destination (owned by the endpoint, valid until it is destroyed). */
int rdps__local_group_dest(struct rdps_transport *t, uint32_t group, const struct rdps_dest **out);
/* Joins / leaves a group for receiving; reference-counted (two joins need two leaves). */
int rdps__local_join(struct rdps_transport *t, uint32_t group);
int rdps__local_leave(struct rdps_transport *t, uint32_t group);

uint32_t rdps__local_qpn(struct rdps_transport *t);
void rdps__local_gid(struct rdps_transport *t, uint8_t gid[16]);
uint32_t rdps__local_ipv4(struct rdps_transport *t);
uint32_t rdps__local_mtu(struct rdps_transport *t);
const char *rdps__local_dir(struct rdps_transport *t);
/* The member at 127.78.0.0 + index, now: its destination and source (RDPS_EHOSTUNREACH if none). */
int rdps__local_resolve(struct rdps_transport *t, uint32_t ipv4, const struct rdps_dest **dest,
                        struct rdps_source *src);

/* What rdps-info shows of a directory: its MTU and members (-1 and the error when unusable). */
struct rdps_local_dir_info {
    char dir[256];
    uint32_t mtu, members, groups;
};
int rdps__local_dir_info(const struct rdps_local_config *cfg, struct rdps_local_dir_info *out);

#endif /* RDPS_LOCAL_H */
