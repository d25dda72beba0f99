/* SPDX-License-Identifier: BSD-2-Clause */
/* local_dir.h - the local device's directory: who may enter (permissions), the registry file and
 * its lock, members' ring and wake files, and reclaiming what dead members left. */
#ifndef RDPS_LOCAL_DIR_H
#define RDPS_LOCAL_DIR_H

#include "local_shm.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct local_dir {
    char path[256];
    int dir_fd;
    mode_t file_mode; /* 0600, or 0660 with a group */
    gid_t gid;
    bool grouped;
    int reg_fd;
    struct local_registry *reg;
    uint32_t mtu;
};

/*
 * Opens (creating when missing) the directory and its registry. Refuses a directory this user
 * does not own (without a group) or whose group is not `group` (with one), one others may enter,
 * and a registry of the other MTU when mtu is not 0. Negative rdps code with the reason recorded.
 */
int local_dir_open(struct local_dir *d, const char *dir, const char *group, uint32_t mtu);
void local_dir_close(struct local_dir *d);

/* The registry's lock (flock: the kernel drops it when its holder dies), waited for at most
 * LOCAL_LOCK_WAIT_MS (RDPS_EBUSY after); trylock does not wait. */
#define LOCAL_LOCK_WAIT_MS 2000u
int local_dir_lock(struct local_dir *d);
bool local_dir_trylock(struct local_dir *d);
void local_dir_unlock(struct local_dir *d);

/* Under the lock: a free member entry taken (its index and odd generation), reaping dead members
 * first when none is free. RDPS_ENOSPC when the host has LOCAL_MAX_MEMBERS live. */
int local_dir_member_take(struct local_dir *d, uint32_t ring_slots, uint32_t *index, uint32_t *gen);
/* Under the lock: the entry freed, its group bits cleared, its files removed. */
void local_dir_member_free(struct local_dir *d, uint32_t index, uint32_t gen);

/*
 * The member's ring file (created, sized, mapped, initialised, flock'ed shared for as long as it
 * lives) and its wake FIFO (opened for reading). On failure everything is undone.
 */
int local_dir_ring_create(struct local_dir *d, uint32_t index, uint32_t gen, uint32_t slots,
                          int *ring_fd, void **mem, size_t *bytes, int *fifo_fd);

/* A writer's mapping of another member's ring (checked, local_ring_check). */
int local_dir_ring_map(struct local_dir *d, uint32_t index, uint32_t gen, void **mem, size_t *bytes,
                       uint32_t *slots);
/* The member's FIFO opened to write its wake-ups (non-blocking, never SIGPIPE), or -1. */
int local_dir_fifo_open(struct local_dir *d, uint32_t index, uint32_t gen);

/* Under the lock: members whose lock is gone (dead) freed; returns how many. */
unsigned local_dir_reap(struct local_dir *d, uint32_t self_index);

/* Under the lock: adds / removes a member's bit in a group (entries made and freed here). */
int local_dir_group_add(struct local_dir *d, uint32_t group, uint32_t index);
void local_dir_group_remove(struct local_dir *d, uint32_t group, uint32_t index);

/* The directory a config names: dir, $RDPS_LOCAL_DIR, or /dev/shm/rdps-local-<uid> (-g<gid>). */
int local_dir_default(const char *dir, const char *group, char *out, size_t size);

#endif /* RDPS_LOCAL_DIR_H */
