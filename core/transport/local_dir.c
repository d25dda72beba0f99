/* SPDX-License-Identifier: BSD-2-Clause */
/* local_dir.c - the local device's directory: permissions, the registry and its lock, members'
 * files, and reclaiming dead members' entries and files. */
#include "local_dir.h"

#include "rdps_error.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int errno_err(const char *what, const char *path)
{
    int e = errno;
    return rdps__set_err(rdps__errno_code(e), "local device: %s %s: %s", what, path, strerror(e));
}

int local_dir_default(const char *dir, const char *group, char *out, size_t size)
{
    if (dir == NULL || dir[0] == '\0')
        dir = getenv("RDPS_LOCAL_DIR");
    int n;
    if (dir != NULL && dir[0] != '\0')
        n = snprintf(out, size, "%s", dir);
    else if (group != NULL && group[0] != '\0') {
        struct group *g = getgrnam(group);
        if (g == NULL)
            return rdps__set_err(RDPS_EINVAL, "local device: no group named '%s'", group);
        n = snprintf(out, size, "/dev/shm/rdps-local-g%u", (unsigned)g->gr_gid);
    } else
        n = snprintf(out, size, "/dev/shm/rdps-local-%u", (unsigned)geteuid());
    if (n < 0 || (size_t)n >= size)
        return rdps__set_err(RDPS_EINVAL, "local device: directory name longer than %zu bytes",
                             size - 1);
    return 0;
}

static bool in_group(gid_t gid)
{
    if (getegid() == gid)
        return true;
    gid_t groups[256];
    int n = getgroups(256, groups);
    for (int i = 0; i < n; i++)
        if (groups[i] == gid)
            return true;
    return false;
}

/* Who may enter: the owner alone (0700) or the owner and one group (2770), never others. */
static int check_dir(struct local_dir *d, const struct stat *st)
{
    if (!S_ISDIR(st->st_mode))
        return rdps__set_err(RDPS_EINVAL, "local device: %s is not a directory", d->path);
    if (d->grouped) {
        if (st->st_gid != d->gid || (st->st_mode & 0007) != 0)
            return rdps__set_err(RDPS_EACCES,
                                 "local device: %s is of group %u with mode %04o: a directory "
                                 "shared by group %u must be of that group, closed to others",
                                 d->path, (unsigned)st->st_gid, (unsigned)(st->st_mode & 07777),
                                 (unsigned)d->gid);
        return 0;
    }
    if (st->st_uid != geteuid())
        return rdps__set_err(RDPS_EACCES,
                             "local device: %s belongs to uid %u, not to us (uid %u): members "
                             "of different users meet only in a directory of a group they share "
                             "(RDPS_LOCAL_GROUP; rdps(7), \"Local device\")",
                             d->path, (unsigned)st->st_uid, (unsigned)geteuid());
    if ((st->st_mode & 0077) != 0)
        return rdps__set_err(RDPS_EACCES,
                             "local device: %s has mode %04o: others could read and write the "
                             "members' memory (chmod 700, or set RDPS_LOCAL_GROUP)",
                             d->path, (unsigned)(st->st_mode & 07777));
    return 0;
}

static int open_dir(struct local_dir *d)
{
    mode_t mode = d->grouped ? 02770 : 0700;
    if (mkdir(d->path, mode) == 0) {
        /* mkdir's mode passes through the umask; a group directory needs its bits and group. */
        if ((d->grouped && chown(d->path, (uid_t)-1, d->gid) < 0) || chmod(d->path, mode) < 0) {
            int rc = errno_err("setting up", d->path);
            rmdir(d->path);
            return rc;
        }
    } else if (errno != EEXIST)
        return errno_err("creating", d->path);
    d->dir_fd = open(d->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (d->dir_fd < 0) {
        int e = errno;
        int rc = errno_err("opening", d->path);
        if (e == EACCES)
            rdps__append_err(rc, " (a directory of another user: members of different users "
                                 "meet only through a group, RDPS_LOCAL_GROUP)");
        return rc;
    }
    struct stat st;
    if (fstat(d->dir_fd, &st) < 0)
        return errno_err("examining", d->path);
    return check_dir(d, &st);
}

/* A file of the directory: regular, ours or our group's, closed to others. */
static int check_file(struct local_dir *d, int fd, const char *name, size_t *bytes)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return errno_err("examining", name);
    if (!S_ISREG(st.st_mode) || (st.st_mode & 0007) != 0 ||
        (!d->grouped && st.st_uid != geteuid()) || (d->grouped && st.st_gid != d->gid))
        return rdps__set_err(RDPS_EACCES,
                             "local device: %s/%s is not a file of this user or group closed to "
                             "others (mode %04o, uid %u, gid %u)",
                             d->path, name, (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid,
                             (unsigned)st.st_gid);
    *bytes = (size_t)st.st_size;
    return 0;
}

static int create_file(struct local_dir *d, const char *name)
{
    int fd = openat(d->dir_fd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, d->file_mode);
    if (fd < 0)
        return errno_err("creating", name);
    /* The umask may have taken bits a group needs. */
    if ((d->grouped && fchown(fd, (uid_t)-1, d->gid) < 0) || fchmod(fd, d->file_mode) < 0) {
        int rc = errno_err("setting the mode of", name);
        close(fd);
        return rc;
    }
    return fd;
}

static int open_registry(struct local_dir *d, uint32_t mtu)
{
    int fd = create_file(d, "registry");
    if (fd < 0)
        return fd;
    d->reg_fd = fd;
    int rc = local_dir_lock(d);
    if (rc < 0)
        return rc;
    size_t bytes;
    rc = check_file(d, fd, "registry", &bytes);
    if (rc == 0 && bytes == 0) {
        /* The first member of the host: the registry is ours to lay out, under the lock. */
        if (ftruncate(fd, sizeof(struct local_registry)) < 0)
            rc = errno_err("sizing", "registry");
        bytes = sizeof(struct local_registry);
    }
    void *mem = MAP_FAILED;
    if (rc == 0 && bytes >= sizeof(struct local_registry))
        mem = mmap(NULL, sizeof(struct local_registry), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (rc == 0 && mem == MAP_FAILED)
        rc = bytes < sizeof(struct local_registry)
                 ? rdps__set_err(RDPS_EINVAL,
                                 "local device: %s/registry is %zu bytes, not a "
                                 "registry of this version",
                                 d->path, bytes)
                 : errno_err("mapping", "registry");
    if (rc == 0) {
        d->reg = mem;
        if (d->reg->magic == 0)
            local_registry_init(d->reg, mtu != 0 ? mtu : 1024);
        if (!local_registry_check(d->reg, bytes, &d->mtu))
            rc = rdps__set_err(RDPS_EINVAL,
                               "local device: %s/registry is not a registry of this version "
                               "(remove the directory when no member runs)",
                               d->path);
        else if (mtu != 0 && mtu != d->mtu)
            rc = rdps__set_err(RDPS_EINVAL,
                               "local device: the members of %s use MTU %u, not %u (one MTU per "
                               "directory: use device \"local\", or another RDPS_LOCAL_DIR)",
                               d->path, d->mtu, mtu);
    }
    local_dir_unlock(d);
    return rc;
}

int local_dir_open(struct local_dir *d, const char *dir, const char *group, uint32_t mtu)
{
    memset(d, 0, sizeof(*d));
    d->dir_fd = -1;
    d->reg_fd = -1;
    if (group == NULL)
        group = getenv("RDPS_LOCAL_GROUP");
    if (group != NULL && group[0] != '\0') {
        struct group *g = getgrnam(group);
        if (g == NULL)
            return rdps__set_err(RDPS_EINVAL, "local device: no group named '%s'", group);
        if (!in_group(g->gr_gid))
            return rdps__set_err(RDPS_EACCES,
                                 "local device: this process is not in group '%s' (gid %u)", group,
                                 (unsigned)g->gr_gid);
        d->grouped = true;
        d->gid = g->gr_gid;
    }
    d->file_mode = d->grouped ? 0660 : 0600;
    int rc = local_dir_default(dir, d->grouped ? group : NULL, d->path, sizeof(d->path));
    if (rc == 0)
        rc = open_dir(d);
    if (rc == 0)
        rc = open_registry(d, mtu);
    if (rc < 0)
        local_dir_close(d);
    return rc;
}

void local_dir_close(struct local_dir *d)
{
    if (d->reg != NULL)
        munmap(d->reg, sizeof(*d->reg));
    d->reg = NULL;
    if (d->reg_fd >= 0)
        close(d->reg_fd);
    if (d->dir_fd >= 0)
        close(d->dir_fd);
    d->reg_fd = d->dir_fd = -1;
}

int local_dir_lock(struct local_dir *d)
{
    /* Bounded: a member stopped (SIGSTOP, a debugger) while holding it must not wedge us. */
    for (unsigned waited_ms = 0; waited_ms < LOCAL_LOCK_WAIT_MS; waited_ms++) {
        if (flock(d->reg_fd, LOCK_EX | LOCK_NB) == 0)
            return 0;
        if (errno != EWOULDBLOCK && errno != EINTR)
            return errno_err("locking", "registry");
        usleep(1000);
    }
    return rdps__set_err(RDPS_EBUSY,
                         "local device: %s/registry stayed locked for %u ms (a "
                         "member stopped while holding it?)",
                         d->path, LOCAL_LOCK_WAIT_MS);
}

bool local_dir_trylock(struct local_dir *d)
{
    return flock(d->reg_fd, LOCK_EX | LOCK_NB) == 0;
}

void local_dir_unlock(struct local_dir *d)
{
    flock(d->reg_fd, LOCK_UN);
}

static void member_names(uint32_t index, uint32_t gen, char ring[32], char fifo[32])
{
    snprintf(ring, 32, "m%u-%u", index, gen);
    snprintf(fifo, 32, "m%u-%u.wake", index, gen);
}

static void bump_epoch(struct local_dir *d)
{
    atomic_fetch_add_explicit(&d->reg->epoch, 1, memory_order_release);
}

int local_dir_member_take(struct local_dir *d, uint32_t ring_slots, uint32_t *index, uint32_t *gen)
{
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; i < LOCAL_MAX_MEMBERS; i++) {
            struct local_member_entry *m = &d->reg->members[i];
            if (atomic_load(&m->state) != LOCAL_MEMBER_FREE)
                continue;
            uint32_t g = atomic_load(&m->gen);
            g = (g | 1u) + ((g & 1u) ? 2u : 0u); /* odd: a live member's QPN is never 0 */
            atomic_store(&m->gen, g);
            atomic_store(&m->pid, (uint32_t)getpid());
            atomic_store(&m->ring_slots, ring_slots);
            atomic_store(&m->state, LOCAL_MEMBER_LIVE);
            bump_epoch(d);
            *index = i;
            *gen = g;
            return 0;
        }
        if (pass == 0 && local_dir_reap(d, LOCAL_MAX_MEMBERS) == 0)
            break;
    }
    return rdps__set_err(RDPS_ENOSPC,
                         "local device: %s has %u live members, the most a host "
                         "holds",
                         d->path, LOCAL_MAX_MEMBERS);
}

void local_dir_member_free(struct local_dir *d, uint32_t index, uint32_t gen)
{
    struct local_member_entry *m = &d->reg->members[index];
    if (atomic_load(&m->gen) != gen || atomic_load(&m->state) != LOCAL_MEMBER_LIVE)
        return; /* freed already (reaped by another member) */
    uint64_t bit = 1ull << (index % 64);
    for (uint32_t g = 0; g < LOCAL_MAX_GROUPS; g++) {
        struct local_group_entry *e = &d->reg->groups[g];
        if (atomic_load(&e->group) == 0 || !(atomic_load(&e->bitmap[index / 64]) & bit))
            continue;
        atomic_fetch_and(&e->bitmap[index / 64], ~bit);
        if (atomic_fetch_sub(&e->members, 1) <= 1) {
            atomic_store(&e->members, 0);
            atomic_store(&e->group, 0);
        }
    }
    atomic_store(&m->state, LOCAL_MEMBER_FREE);
    atomic_store(&m->gen, gen + 1);
    bump_epoch(d);
    char ring[32], fifo[32];
    member_names(index, gen, ring, fifo);
    unlinkat(d->dir_fd, ring, 0);
    unlinkat(d->dir_fd, fifo, 0);
}

int local_dir_ring_create(struct local_dir *d, uint32_t index, uint32_t gen, uint32_t slots,
                          int *ring_fd, void **mem, size_t *bytes, int *fifo_fd)
{
    char ring[32], fifo[32];
    member_names(index, gen, ring, fifo);
    *ring_fd = *fifo_fd = -1;
    *mem = MAP_FAILED;
    *bytes = local_ring_bytes(slots, d->mtu);
    unlinkat(d->dir_fd, ring, 0); /* a file of an earlier life of this entry */
    unlinkat(d->dir_fd, fifo, 0);
    int rc, fd = create_file(d, ring);
    if (fd < 0)
        return fd;
    *ring_fd = fd;
    /* Shared while we live: a member that can take it exclusively knows we are gone. */
    if (flock(fd, LOCK_SH) < 0)
        rc = errno_err("locking", ring);
    else if (ftruncate(fd, (off_t)*bytes) < 0)
        rc = errno_err("sizing", ring);
    else if ((*mem = mmap(NULL, *bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED)
        rc = errno_err("mapping", ring);
    else if (mkfifoat(d->dir_fd, fifo, d->file_mode) < 0)
        rc = errno_err("creating", fifo);
    else if ((*fifo_fd = openat(d->dir_fd, fifo, O_RDWR | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)) < 0)
        rc = errno_err("opening", fifo);
    else if ((d->grouped && fchown(*fifo_fd, (uid_t)-1, d->gid) < 0) ||
             fchmod(*fifo_fd, d->file_mode) < 0)
        rc = errno_err("setting the mode of", fifo);
    else {
        local_ring_init(*mem, slots, d->mtu, local_qpn(gen, index));
        return 0;
    }
    if (*mem != MAP_FAILED)
        munmap(*mem, *bytes);
    if (*fifo_fd >= 0)
        close(*fifo_fd);
    close(fd);
    unlinkat(d->dir_fd, ring, 0);
    unlinkat(d->dir_fd, fifo, 0);
    *ring_fd = *fifo_fd = -1;
    *mem = MAP_FAILED;
    return rc;
}

int local_dir_ring_map(struct local_dir *d, uint32_t index, uint32_t gen, void **mem, size_t *bytes,
                       uint32_t *slots)
{
    char ring[32], fifo[32];
    member_names(index, gen, ring, fifo);
    int fd = openat(d->dir_fd, ring, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return errno_err("opening", ring);
    int rc = check_file(d, fd, ring, bytes);
    if (rc == 0 && *bytes < sizeof(struct local_ring_header))
        rc = rdps__set_err(RDPS_EAGAIN, "local device: %s not laid out yet", ring);
    /* Only what the largest ring needs: a file grown by someone else maps no further. */
    size_t most = local_ring_bytes(LOCAL_RING_MAX_SLOTS, d->mtu);
    if (rc == 0 && *bytes > most)
        *bytes = most;
    if (rc == 0) {
        *mem = mmap(NULL, *bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (*mem == MAP_FAILED)
            rc = errno_err("mapping", ring);
        else if (!local_ring_check(*mem, *bytes, d->mtu, slots)) {
            munmap(*mem, *bytes);
            rc = rdps__set_err(RDPS_EINVAL, "local device: %s is not a ring of this host", ring);
        }
    }
    close(fd); /* the mapping keeps the memory; the owner's flock is not ours to hold */
    return rc;
}

int local_dir_fifo_open(struct local_dir *d, uint32_t index, uint32_t gen)
{
    char ring[32], fifo[32];
    member_names(index, gen, ring, fifo);
    /* Read-write (Linux opens a FIFO so without waiting): a write end alone would raise SIGPIPE
     * in our process once the member is gone. Non-blocking: a full FIFO already wakes it. */
    return openat(d->dir_fd, fifo, O_RDWR | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
}

/* True when the member's ring file still holds its owner's lock (or cannot be examined). */
static bool member_alive(struct local_dir *d, uint32_t index, uint32_t gen)
{
    char ring[32], fifo[32];
    member_names(index, gen, ring, fifo);
    int fd = openat(d->dir_fd, ring, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return errno != ENOENT; /* no file: died before it made it, or removed */
    bool alive = flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK;
    close(fd);
    return alive;
}

unsigned local_dir_reap(struct local_dir *d, uint32_t self_index)
{
    unsigned reaped = 0;
    for (uint32_t i = 0; i < LOCAL_MAX_MEMBERS; i++) {
        struct local_member_entry *m = &d->reg->members[i];
        if (i == self_index || atomic_load(&m->state) != LOCAL_MEMBER_LIVE)
            continue;
        uint32_t gen = atomic_load(&m->gen);
        if (member_alive(d, i, gen))
            continue;
        local_dir_member_free(d, i, gen);
        reaped++;
    }
    return reaped;
}

int local_dir_group_add(struct local_dir *d, uint32_t group, uint32_t index)
{
    int at = local_registry_find_group(d->reg, group);
    if (at < 0) {
        for (uint32_t i = 0; i < LOCAL_MAX_GROUPS && at < 0; i++)
            if (atomic_load(&d->reg->groups[i].group) == 0)
                at = (int)i;
        if (at < 0)
            return rdps__set_err(RDPS_ENOSPC,
                                 "local device: %u groups have members on this host, the most "
                                 "it holds",
                                 LOCAL_MAX_GROUPS);
        struct local_group_entry *e = &d->reg->groups[at];
        for (uint32_t w = 0; w < LOCAL_BITMAP_WORDS; w++)
            atomic_store(&e->bitmap[w], 0);
        atomic_store(&e->members, 0);
        atomic_store_explicit(&e->group, group, memory_order_release);
    }
    struct local_group_entry *e = &d->reg->groups[at];
    uint64_t bit = 1ull << (index % 64);
    if (!(atomic_fetch_or(&e->bitmap[index / 64], bit) & bit))
        atomic_fetch_add(&e->members, 1);
    bump_epoch(d);
    return 0;
}

void local_dir_group_remove(struct local_dir *d, uint32_t group, uint32_t index)
{
    int at = local_registry_find_group(d->reg, group);
    if (at < 0)
        return;
    struct local_group_entry *e = &d->reg->groups[at];
    uint64_t bit = 1ull << (index % 64);
    if ((atomic_fetch_and(&e->bitmap[index / 64], ~bit) & bit) &&
        atomic_fetch_sub(&e->members, 1) <= 1) {
        atomic_store(&e->members, 0);
        atomic_store(&e->group, 0);
    }
    bump_epoch(d);
}
