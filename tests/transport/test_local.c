/* SPDX-License-Identifier: BSD-2-Clause */
/* test_local.c - the local device across processes: unicast and multicast, a full ring counted,
 * a member killed (reaped) and a writer killed mid-datagram (its slot taken back), waking through
 * the event fd, permissions, the MTU of a directory, and garbage written into a ring. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "local_dir.h"
#include "rdps_local.h"

#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define GROUP 0xefc00101u

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/rdps-local-test-XXXXXX");
    assert_non_null(mkdtemp(dir));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
    return 0;
}

static struct rdps_transport *open_member(uint32_t recv_slots)
{
    struct rdps_local_config cfg = {.dir = dir, .recv_slots = recv_slots, .send_slots = 64};
    struct rdps_transport *t = NULL;
    assert_int_equal(rdps__local_create(&cfg, &t), 0);
    return t;
}

static int send_bytes(struct rdps_transport *t, uint8_t fill, uint32_t len,
                      const struct rdps_dest *dest)
{
    struct rdps_tx_buf buf;
    struct rdps_rx_datagram none[1];
    int err = t->ops->claim(t, &buf);
    if (err == RDPS_EAGAIN) { /* completions come with a poll, as a device's do */
        t->ops->poll(t, none, 0);
        err = t->ops->claim(t, &buf);
    }
    if (err < 0)
        return err;
    memset(buf.data, fill, len);
    if ((err = t->ops->submit(t, &buf, len, &dest, 1)) < 0)
        return err;
    return t->ops->flush(t);
}

static const struct rdps_dest *to_member(struct rdps_transport *t, uint32_t qpn)
{
    struct rdps_source src = {.qpn = qpn, .has_gid = 1};
    rdps__local_gid(t, src.gid); /* our own GID's prefix, then the peer's QPN */
    src.gid[12] = (uint8_t)(qpn >> 24);
    src.gid[13] = (uint8_t)(qpn >> 16);
    src.gid[14] = (uint8_t)(qpn >> 8);
    src.gid[15] = (uint8_t)qpn;
    const struct rdps_dest *d = NULL;
    assert_int_equal(t->ops->source_dest(t, &src, &d), 0);
    return d;
}

/* Sleeps on the event fd (arm first) until a datagram arrives; the count received. */
static int wait_receive(struct rdps_transport *t, struct rdps_rx_datagram *rx, int max,
                        int timeout_ms)
{
    for (int waited = 0; waited <= timeout_ms; waited += 50) {
        int n = t->ops->poll(t, rx, max);
        if (n != 0)
            return n;
        if (t->ops->arm(t) == 1)
            continue;
        struct pollfd p = {.fd = t->ops->event_fd(t), .events = POLLIN};
        poll(&p, 1, 50);
    }
    return 0;
}

static int count_files(void)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;)
        n += e->d_name[0] != '.';
    if (d != NULL)
        closedir(d);
    return n;
}

/* A child process joins the group and checks what the parent sends it, by unicast and multicast,
 * having slept on its event fd for each. */
static void test_two_processes(void **state)
{
    (void)state;
    int up[2], down[2];
    assert_int_equal(pipe(up), 0);
    assert_int_equal(pipe(down), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct rdps_transport *b = open_member(256);
        int ok = rdps__local_join(b, GROUP) == 0;
        uint32_t qpn = rdps__local_qpn(b);
        ok &= write(up[1], &qpn, sizeof(qpn)) == sizeof(qpn);
        uint32_t parent_qpn = 0;
        ok &= read(down[0], &parent_qpn, sizeof(parent_qpn)) == sizeof(parent_qpn);
        struct rdps_rx_datagram rx[4];
        int got = 0, n;
        while (ok && got < 2 && (n = wait_receive(b, rx, 4, 10000)) > 0) {
            for (int i = 0; i < n; i++, got++) {
                ok &= rx[i].src_qpn == parent_qpn && rx[i].has_src_gid;
                ok &= rx[i].len == (got == 0 ? 100u : 1024u) && rx[i].data[0] == 0xa0 + got;
                ok &= rx[i].data[rx[i].len - 1] == 0xa0 + got;
                ok &= rx[i].to_multicast == (got == 1);
            }
            b->ops->rx_release(b, rx, n);
        }
        b->ops->destroy(b);
        _exit(ok && got == 2 ? 0 : 1);
    }
    struct rdps_transport *a = open_member(256);
    uint32_t child_qpn = 0, qpn = rdps__local_qpn(a);
    assert_int_equal(read(up[0], &child_qpn, sizeof(child_qpn)), sizeof(child_qpn));
    assert_int_equal(write(down[1], &qpn, sizeof(qpn)), sizeof(qpn));
    usleep(100000); /* the child is asleep on its fd by now (most runs) */
    assert_int_equal(send_bytes(a, 0xa0, 100, to_member(a, child_qpn)), 0);
    const struct rdps_dest *group;
    assert_int_equal(rdps__local_group_dest(a, GROUP, &group), 0);
    usleep(100000);
    assert_int_equal(send_bytes(a, 0xa1, 1024, group), 0);
    assert_int_equal(send_bytes(a, 0, 1025, group), RDPS_EMSGSIZE);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    a->ops->destroy(a);
    assert_int_equal(count_files(), 1); /* the registry only: members removed their files */
}

/* Nobody polls: what does not fit in the ring is dropped and counted as a full receive queue. */
static void test_full_ring_counted(void **state)
{
    (void)state;
    struct rdps_transport *a = open_member(64), *b = open_member(64);
    const struct rdps_dest *d = to_member(a, rdps__local_qpn(b));
    for (int i = 0; i < 200; i++)
        assert_int_equal(send_bytes(a, (uint8_t)i, 64, d), 0);
    struct rdps_transport_stats st;
    b->ops->get_stats(b, &st);
    assert_int_equal(st.rx_queue_empty, 136);
    struct rdps_rx_datagram rx[32];
    int got = 0, n;
    while ((n = b->ops->poll(b, rx, 32)) > 0) {
        for (int i = 0; i < n; i++)
            assert_int_equal(rx[i].data[0], (uint8_t)(got + i)); /* the first 64, in order */
        got += n;
        b->ops->rx_release(b, rx, n);
    }
    assert_int_equal(got, 64);
    a->ops->destroy(a);
    b->ops->destroy(b);
}

/* A member killed with SIGKILL: the others go on; its entry, group bit and files are reclaimed. */
static void test_killed_member_reaped(void **state)
{
    (void)state;
    int up[2];
    assert_int_equal(pipe(up), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct rdps_transport *b = open_member(64);
        rdps__local_join(b, GROUP);
        b->ops->arm(b); /* asleep: the next datagram for it writes its FIFO */
        (void)!write(up[1], "x", 1);
        struct pollfd pfd = {.fd = b->ops->event_fd(b), .events = POLLIN};
        poll(&pfd, 1, 10000);
        b->ops->arm(b); /* asleep again, and then killed: the sender holds its FIFO open */
        (void)!write(up[1], "y", 1);
        pause();
        _exit(0);
    }
    char c;
    assert_int_equal(read(up[0], &c, 1), 1);
    struct rdps_transport *a = open_member(64), *b = open_member(64);
    const struct rdps_dest *group;
    assert_int_equal(rdps__local_group_dest(a, GROUP, &group), 0);
    assert_int_equal(send_bytes(a, 6, 64, group), 0); /* wakes the child through its FIFO */
    assert_int_equal(read(up[0], &c, 1), 1);
    assert_int_equal(rdps__local_join(b, GROUP), 0);
    struct rdps_local_dir_info info;
    struct rdps_local_config cfg = {.dir = dir};
    assert_int_equal(rdps__local_dir_info(&cfg, &info), 0);
    assert_int_equal(info.members, 3);
    int files = count_files();
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    /* A dead receiver costs the sender nothing: no SIGPIPE from its FIFO, no error. */
    assert_int_equal(send_bytes(a, 7, 64, group), 0);
    struct rdps_rx_datagram rx[4];
    assert_int_equal(wait_receive(b, rx, 4, 5000), 1);
    b->ops->rx_release(b, rx, 1);
    assert_int_equal(rdps__local_dir_info(&cfg, &info), 0);
    assert_int_equal(info.members, 2);
    assert_int_equal(info.groups, 1);
    assert_int_equal(count_files(), files - 2); /* its ring and FIFO */
    a->ops->destroy(a);
    b->ops->destroy(b);
}

/* A writer killed between reserving a slot and finishing it: the owner takes the slot back (at
 * once once the writer is dead, its timer fd wakes it) and the datagrams behind it arrive. */
static void test_writer_killed_mid_datagram(void **state)
{
    (void)state;
    struct rdps_transport *a = open_member(64), *b = open_member(64);
    uint32_t qpn = rdps__local_qpn(b);
    struct local_dir d;
    assert_int_equal(local_dir_open(&d, dir, NULL, 0), 0);
    void *mem;
    size_t bytes;
    uint32_t slots;
    uint32_t gen = atomic_load(&d.reg->members[local_qpn_index(qpn)].gen);
    assert_int_equal(local_dir_ring_map(&d, local_qpn_index(qpn), gen, &mem, &bytes, &slots), 0);
    pid_t dead = fork();
    if (dead == 0)
        _exit(0);
    waitpid(dead, NULL, 0);
    /* What the killed writer left: position 0 reserved, its state WRITING, its pid. */
    struct local_ring_header *h = mem;
    struct local_slot *s0 = (struct local_slot *)((uint8_t *)mem + sizeof(*h));
    atomic_store(&h->tail, 1);
    atomic_store(&s0->writer_pid, (uint32_t)dead);
    atomic_store(&s0->state, 0u << 2 | LOCAL_SLOT_WRITING);
    assert_int_equal(send_bytes(a, 0x55, 200, to_member(a, qpn)), 0);
    struct rdps_rx_datagram rx[4];
    assert_int_equal(b->ops->poll(b, rx, 4), 0); /* held behind the stuck slot */
    /* Within 1.5 s: a live writer would keep the slot 2 s; a dead one loses it after 100 ms. */
    assert_int_equal(wait_receive(b, rx, 4, 1500), 1);
    assert_int_equal(rx[0].len, 200);
    assert_int_equal(rx[0].data[199], 0x55);
    b->ops->rx_release(b, rx, 1);
    struct rdps_transport_stats st;
    b->ops->get_stats(b, &st);
    assert_int_equal(st.rx_completion_errors, 1);
    munmap(mem, bytes);
    local_dir_close(&d);
    a->ops->destroy(a);
    b->ops->destroy(b);
}

/* Whatever another process writes into a ring: the owner never takes more than the MTU, never
 * crashes, and goes on receiving once the writer stops. */
static void test_garbage_in_ring(void **state)
{
    (void)state;
    struct rdps_transport *a = open_member(64), *b = open_member(64);
    uint32_t qpn = rdps__local_qpn(b);
    struct local_dir d;
    assert_int_equal(local_dir_open(&d, dir, NULL, 0), 0);
    void *mem;
    size_t bytes;
    uint32_t slots, gen = atomic_load(&d.reg->members[local_qpn_index(qpn)].gen);
    assert_int_equal(local_dir_ring_map(&d, local_qpn_index(qpn), gen, &mem, &bytes, &slots), 0);
    srand(7);
    for (int round = 0; round < 20; round++) {
        uint8_t *p = (uint8_t *)mem + 64; /* past the header's layout fields */
        for (size_t i = 0; i < bytes - 64; i++)
            p[i] = (uint8_t)(round % 3 == 0 ? rand() : (rand() % 4 == 0 ? rand() % 3 : 0));
        struct rdps_rx_datagram rx[8];
        for (int polls = 0; polls < 200; polls++) {
            int n = b->ops->poll(b, rx, 8);
            assert_true(n >= 0 && n <= 8);
            for (int i = 0; i < n; i++)
                assert_true(rx[i].len <= 1024);
            b->ops->rx_release(b, rx, n);
        }
    }
    munmap(mem, bytes);
    local_dir_close(&d);
    a->ops->destroy(a);
    b->ops->destroy(b);
}

/* Who may enter: a directory others can open, one of another user; a second MTU. */
static void test_permissions_and_mtu(void **state)
{
    (void)state;
    struct rdps_transport *t = NULL;
    struct rdps_local_config cfg = {.dir = dir};
    assert_int_equal(chmod(dir, 0755), 0);
    assert_int_equal(rdps__local_create(&cfg, &t), RDPS_EACCES);
    assert_int_equal(chmod(dir, 0700), 0);
    if (geteuid() == 0) {
        assert_int_equal(chown(dir, 65534, (gid_t)-1), 0);
        assert_int_equal(rdps__local_create(&cfg, &t), RDPS_EACCES);
        assert_int_equal(chown(dir, 0, (gid_t)-1), 0);
    }
    cfg.mtu = 4096;
    assert_int_equal(rdps__local_create(&cfg, &t), 0);
    assert_int_equal(rdps__local_mtu(t), 4096);
    struct rdps_transport *u = NULL;
    cfg.mtu = 1024;
    assert_int_equal(rdps__local_create(&cfg, &u), RDPS_EINVAL);
    cfg.mtu = 0;
    assert_int_equal(rdps__local_create(&cfg, &u), 0);
    assert_int_equal(send_bytes(u, 9, 4096, to_member(u, rdps__local_qpn(t))), 0);
    struct rdps_rx_datagram rx[2];
    assert_int_equal(t->ops->poll(t, rx, 2), 1);
    assert_int_equal(rx[0].len, 4096);
    t->ops->rx_release(t, rx, 1);
    struct stat st;
    char path[128];
    snprintf(path, sizeof(path), "%s/registry", dir);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    t->ops->destroy(t);
    u->ops->destroy(u);

    /* A group of ours (root's, when root runs the test): directory 2770, files 0660 of it. */
    struct group *g = getgrgid(getegid());
    char gdir[96];
    snprintf(gdir, sizeof(gdir), "%s/grouped", dir);
    struct rdps_local_config gcfg = {.dir = gdir, .group = g != NULL ? g->gr_name : "root"};
    assert_int_equal(rdps__local_create(&gcfg, &t), 0);
    assert_int_equal(stat(gdir, &st), 0);
    assert_int_equal(st.st_mode & 07777, 02770);
    snprintf(path, sizeof(path), "%s/registry", gdir);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0660);
    assert_int_equal(st.st_gid, getegid());
    t->ops->destroy(t);
    /* The same directory without the group: not ours alone, refused. */
    gcfg.group = "";
    assert_int_equal(rdps__local_create(&gcfg, &t), RDPS_EACCES);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_two_processes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full_ring_counted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_killed_member_reaped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_writer_killed_mid_datagram, setup, teardown),
        cmocka_unit_test_setup_teardown(test_garbage_in_ring, setup, teardown),
        cmocka_unit_test_setup_teardown(test_permissions_and_mtu, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
