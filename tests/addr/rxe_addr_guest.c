/* SPDX-License-Identifier: BSD-2-Clause */
/* rxe_addr_guest.c - rxe test in one guest: unicast resolve + send between two transports,
 * multicast join/leave/refcount on a shared QP. */
#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rdps_clock.h"
#include "rdps_addr.h"
#include "rdps_error.h"
#include "rdps_verbs_transport.h"

#define NGROUPS   3
#define PER_GROUP 20
#define PORT_A    17471
#define PORT_B    17472
#define WAIT_MS   8000
#define QUIET_MS  400

static int failures;
static int checks;

#define CHECK(cond, ...)      \
    do {                      \
        checks++;             \
        if (cond) {           \
            printf("ok: ");   \
        } else {              \
            printf("FAIL: "); \
            failures++;       \
        }                     \
        printf(__VA_ARGS__);  \
        printf("\n");         \
        fflush(stdout);       \
    } while (0)

struct node {
    const char *name;
    struct rdps_transport *t;
    struct rdps_verbs_info info;
    struct rdps_addr *addr;
    unsigned rx_by_group[NGROUPS + 1]; /* index 0: unicast */
    unsigned rx_bad;
};

static uint64_t now_ms(void)
{
    return rdps__clock_monotonic_ms();
}

static int node_open(struct node *n, const char *name, const struct sockaddr *ip, int32_t cm_port)
{
    struct rdps_verbs_config vc;
    struct rdps_addr_config ac;
    int err;

    memset(n, 0, sizeof(*n));
    n->name = name;
    memset(&vc, 0, sizeof(vc));
    vc.bind_addr = ip;
    err = rdps__verbs_transport_create(&vc, &n->t);
    if (err < 0) {
        printf("FAIL: %s: transport: %s (%s)\n", name, rdps_strerror(err),
               rdps_last_error_message());
        return err;
    }
    rdps__verbs_transport_info(n->t, &n->info);
    memset(&ac, 0, sizeof(ac));
    ac.transport = n->t;
    ac.cm_port = cm_port;
    err = rdps__addr_create(&ac, &n->addr);
    if (err < 0) {
        printf("FAIL: %s: addr_create: %s (%s)\n", name, rdps_strerror(err),
               rdps_last_error_message());
        return err;
    }
    printf("%s: %s port %u QPN 0x%06x MTU %u listening on cm port %u\n", name, n->info.device_name,
           n->info.port_num, n->info.qpn, n->info.active_mtu_bytes,
           rdps__addr_listen_port(n->addr));
    return 0;
}

static void node_close(struct node *n)
{
    rdps__addr_destroy(n->addr);
    if (n->t != NULL)
        n->t->ops->destroy(n->t);
}

/* Datagram: "rdps-addr-test <group> <seq>", group 0 for unicast. */
static void node_drain(struct node *n)
{
    struct rdps_rx_datagram rx[32];
    int got;

    while ((got = n->t->ops->poll(n->t, rx, 32)) > 0) {
        for (int i = 0; i < got; i++) {
            char text[64];
            unsigned group = 0, seq = 0;
            size_t len = rx[i].len < sizeof(text) - 1 ? rx[i].len : sizeof(text) - 1;
            memcpy(text, rx[i].data, len);
            text[len] = '\0';
            if (sscanf(text, "rdps-addr-test %u %u", &group, &seq) == 2 && group <= NGROUPS)
                n->rx_by_group[group]++;
            else
                n->rx_bad++;
        }
        n->t->ops->rx_release(n->t, rx, got);
    }
}

static void pump(struct node **nodes, int count, int wait_ms)
{
    struct pollfd pfd[8];
    for (int i = 0; i < count; i++) {
        pfd[i].fd = rdps__addr_fd(nodes[i]->addr);
        pfd[i].events = POLLIN;
    }
    poll(pfd, (nfds_t)count, wait_ms);
    for (int i = 0; i < count; i++) {
        rdps__addr_process(nodes[i]->addr);
        node_drain(nodes[i]);
    }
}

static int send_one(struct node *n, const struct rdps_dest *dest, unsigned group, unsigned seq)
{
    struct rdps_tx_buf buf;
    const struct rdps_dest *dests[1] = {dest};
    uint64_t deadline = now_ms() + 2000;
    int err;

    while ((err = n->t->ops->claim(n->t, &buf)) == RDPS_EAGAIN && now_ms() < deadline)
        node_drain(n);
    if (err < 0)
        return err;
    int len = snprintf((char *)buf.data, buf.capacity, "rdps-addr-test %u %u", group, seq);
    err = n->t->ops->submit(n->t, &buf, (uint32_t)len, dests, 1);
    if (err < 0)
        return err;
    return n->t->ops->flush(n->t);
}

static int wait_peer(struct node **nodes, int count, struct rdps_addr_peer *p,
                     const struct rdps_dest **dest)
{
    uint64_t deadline = now_ms() + WAIT_MS;
    int state;
    while ((state = rdps__addr_peer_state(p, dest)) == 0 && now_ms() < deadline)
        pump(nodes, count, 20);
    return state;
}

static int wait_group(struct node **nodes, int count, struct rdps_addr_group *g,
                      const struct rdps_dest **dest)
{
    uint64_t deadline = now_ms() + WAIT_MS;
    int state;
    while ((state = rdps__addr_group_state(g, dest)) == 0 && now_ms() < deadline)
        pump(nodes, count, 20);
    return state;
}

static void wait_counts(struct node **nodes, int count, struct node *n, unsigned group,
                        unsigned want, int max_ms)
{
    uint64_t deadline = now_ms() + (uint64_t)max_ms;
    while (n->rx_by_group[group] < want && now_ms() < deadline)
        pump(nodes, count, 10);
}

static void reset_counts(struct node **nodes, int count)
{
    for (int i = 0; i < count; i++) {
        node_drain(nodes[i]);
        memset(nodes[i]->rx_by_group, 0, sizeof(nodes[i]->rx_by_group));
        nodes[i]->rx_bad = 0;
    }
}

static struct sockaddr_in group_addr(unsigned g)
{
    struct sockaddr_in s;
    memset(&s, 0, sizeof(s));
    s.sin_family = AF_INET;
    s.sin_addr.s_addr = htonl(0xefc00a00u + g); /* 239.192.10.g */
    return s;
}

static void send_burst(struct node **nodes, int count, struct node *from,
                       const struct rdps_dest *dest, unsigned group)
{
    for (unsigned i = 0; i < PER_GROUP; i++) {
        int err = send_one(from, dest, group, i);
        if (err < 0) {
            printf("FAIL: send to group %u: %s\n", group, rdps_strerror(err));
            failures++;
            return;
        }
        if (i % 4 == 3)
            pump(nodes, count, 0);
    }
}

int main(int argc, char **argv)
{
    struct sockaddr_in ip;
    const struct sockaddr *bind_ip = NULL;
    const char *ip_text = argc > 1 ? argv[1] : getenv("RDPS_VM_IP");
    int num_devices = 0;

    setvbuf(stdout, NULL, _IOLBF, 0);
    struct ibv_device **devs = ibv_get_device_list(&num_devices);
    if (devs != NULL)
        ibv_free_device_list(devs);
    if (num_devices == 0) {
        printf("skip: no RDMA device (run inside tools/rxe-vm)\n");
        return 77;
    }
    memset(&ip, 0, sizeof(ip));
    if (ip_text != NULL && *ip_text != '\0') {
        ip.sin_family = AF_INET;
        if (inet_pton(AF_INET, ip_text, &ip.sin_addr) != 1) {
            fprintf(stderr, "rxe_addr_guest: bad IPv4 address '%s'\n", ip_text);
            return 2;
        }
        bind_ip = (const struct sockaddr *)&ip;
    }

    struct node a, b, c;
    if (node_open(&a, "A", bind_ip, PORT_A) < 0 || node_open(&b, "B", bind_ip, PORT_B) < 0 ||
        node_open(&c, "C", bind_ip, RDPS_ADDR_NO_LISTEN) < 0)
        return 1;
    struct node *all[3] = {&a, &b, &c};
    if (!a.info.has_bound_addr) {
        printf("FAIL: transport has no local IP address to resolve\n");
        return 1;
    }

    /* A second context on a cm_port already in use says so. */
    struct rdps_addr_config dup_cfg;
    struct rdps_addr *dup = NULL;
    memset(&dup_cfg, 0, sizeof(dup_cfg));
    dup_cfg.transport = b.t;
    dup_cfg.cm_port = PORT_A;
    int dup_err = rdps__addr_create(&dup_cfg, &dup);
    CHECK(dup_err == -EADDRINUSE && dup == NULL &&
              strstr(rdps_last_error_message(), "another context uses this cm_port") != NULL,
          "second listener on cm port %u refused: %s", PORT_A, rdps_last_error_message());
    rdps__addr_destroy(dup);

    /* RoCE has no subnet administrator: the SA query says so instead of timing out. */
    if (a.info.link_layer == IBV_LINK_LAYER_ETHERNET) {
        struct rdps_sa_mcmember rec[1];
        int sa = rdps__sa_query_mcmember(a.info.device_name, a.info.port_num, NULL, 500, rec, 1);
        CHECK(sa == RDPS_ENOTSUP && strstr(rdps_last_error_message(), "no subnet administrator"),
              "SA query on RoCE: %s (%s)", rdps_err_name(sa), rdps_last_error_message());
    }

    /* ---- unicast: A resolves B by IP:port and sends; B answers through reply_dest() ---- */
    struct sockaddr_in b_addr;
    memcpy(&b_addr, &a.info.bound_addr, sizeof(b_addr));
    b_addr.sin_port = htons(PORT_B);
    struct rdps_addr_peer *peer = NULL, *peer_again = NULL;
    const struct rdps_dest *to_b = NULL;
    int err = rdps__addr_resolve_start(a.addr, (struct sockaddr *)&b_addr, &peer);
    CHECK(err == 0, "resolve_start B: %s", err == 0 ? "started" : rdps_last_error_message());
    int state = peer != NULL ? wait_peer(all, 3, peer, &to_b) : err;
    CHECK(state == 1, "A resolved B (%s): state %d %s", inet_ntoa(b_addr.sin_addr), state,
          state < 0 ? rdps_last_error_message() : "");
    if (state == 1) {
        CHECK(to_b->remote_qpn == b.info.qpn, "resolved QPN 0x%06x is B's shared QP 0x%06x",
              to_b->remote_qpn, b.info.qpn);
        CHECK(to_b->remote_qkey == b.info.qkey, "resolved Q_Key 0x%08x matches B's 0x%08x",
              to_b->remote_qkey, b.info.qkey);
        err = rdps__addr_resolve_start(a.addr, (struct sockaddr *)&b_addr, &peer_again);
        CHECK(err == 0 && peer_again == peer, "second resolve of B returns the cached entry");
        CHECK(rdps__addr_peer_state(peer_again, NULL) == 1, "cached entry is ready at once");
        rdps__addr_peer_release(peer_again);

        for (unsigned i = 0; i < PER_GROUP; i++)
            send_one(&a, to_b, 0, i);
        wait_counts(all, 3, &b, 0, PER_GROUP, WAIT_MS);
        CHECK(b.rx_by_group[0] == PER_GROUP, "B received %u/%u unicast datagrams from A",
              b.rx_by_group[0], PER_GROUP);
        CHECK(b.rx_bad == 0, "B saw %u malformed datagrams", b.rx_bad);

        /* B answers A without any resolve: the reply destination comes with the datagram. */
        struct rdps_rx_datagram rx[4];
        send_one(&a, to_b, 0, 999);
        const struct rdps_dest *reply = NULL;
        uint64_t deadline = now_ms() + WAIT_MS;
        while (reply == NULL && now_ms() < deadline) {
            int got = b.t->ops->poll(b.t, rx, 4);
            for (int i = 0; i < got; i++) {
                if (rx[i].src_qpn == a.info.qpn)
                    (void)rdps__transport_reply(b.t, &rx[i], &reply);
            }
            if (got > 0) {
                if (reply != NULL)
                    err = send_one(&b, reply, 0, 1000);
                b.t->ops->rx_release(b.t, rx, got);
            } else {
                pump(all, 3, 5);
            }
        }
        CHECK(reply != NULL, "B got A's datagram with a reply destination (src QPN = A's QP)");
        wait_counts(all, 3, &a, 0, 1, WAIT_MS);
        CHECK(a.rx_by_group[0] == 1, "A received B's reply through reply_dest()");

        /* Re-resolve (the ADDR_CHANGE path): pending, then ready again with B's QPN. */
        err = rdps__addr_peer_refresh(peer);
        CHECK(err == 0 && rdps__addr_peer_state(peer, NULL) == 0,
              "refresh turns the peer pending (%s)", rdps_strerror(err));
        state = wait_peer(all, 3, peer, &to_b);
        CHECK(state == 1 && to_b->remote_qpn == b.info.qpn,
              "re-resolved B after refresh: state %d QPN 0x%06x", state,
              state == 1 ? to_b->remote_qpn : 0);
        if (state == 1) {
            reset_counts(all, 3);
            for (unsigned i = 0; i < PER_GROUP; i++)
                send_one(&a, to_b, 0, i);
            wait_counts(all, 3, &b, 0, PER_GROUP, WAIT_MS);
            CHECK(b.rx_by_group[0] == PER_GROUP, "B received %u/%u after the re-resolve",
                  b.rx_by_group[0], PER_GROUP);
        }
    }
    rdps__addr_peer_release(peer);
    {
        /* The AHs replaced by the refresh and dropped by the release went to the transport. */
        struct rdps_addr_stats ast;
        rdps__addr_get_stats(a.addr, &ast);
        CHECK(ast.readdresses == 1 && ast.ahs_leaked == 0,
              "A: %llu re-resolve, %llu AHs the transport could not take",
              (unsigned long long)ast.readdresses, (unsigned long long)ast.ahs_leaked);
    }

    /* Nobody listens on this port: a clear refusal, not a hang. */
    struct sockaddr_in closed = b_addr;
    closed.sin_port = htons(17499);
    err = rdps__addr_resolve_start(a.addr, (struct sockaddr *)&closed, &peer);
    state = err == 0 ? wait_peer(all, 3, peer, NULL) : err;
    CHECK(state == RDPS_ECONNREFUSED || state == RDPS_EHOSTUNREACH,
          "resolve of a port without listener fails: %s (%s)", rdps_err_name(state),
          rdps_last_error_message());
    if (err == 0)
        rdps__addr_peer_release(peer);

    /* An address on the segment that nobody owns: "host unreachable". */
    struct sockaddr_in nobody = b_addr;
    nobody.sin_addr.s_addr = htonl((ntohl(b_addr.sin_addr.s_addr) & 0xffffff00u) | 250u);
    err = rdps__addr_resolve_start(a.addr, (struct sockaddr *)&nobody, &peer);
    state = err == 0 ? wait_peer(all, 3, peer, NULL) : err;
    CHECK(state == RDPS_EHOSTUNREACH && strstr(rdps_last_error_message(), "host unreachable"),
          "resolve of an absent host: %s (%s)", rdps_err_name(state), rdps_last_error_message());
    if (err == 0)
        rdps__addr_peer_release(peer);

    /* ---- multicast: B's QP on 3 groups, A's on group 1 only, C sends via send-only joins ---- */
    struct rdps_addr_group *b_groups[NGROUPS + 1] = {0}, *c_groups[NGROUPS + 1] = {0};
    struct rdps_addr_group *a_group1 = NULL;
    const struct rdps_dest *to_group[NGROUPS + 1] = {0};
    for (unsigned g = 1; g <= NGROUPS; g++) {
        struct sockaddr_in ga = group_addr(g);
        err = rdps__addr_join_start(b.addr, (struct sockaddr *)&ga, RDPS_JOIN_FULL, &b_groups[g]);
        CHECK(err == 0, "B join_start FULL 239.192.10.%u: %s", g, rdps_strerror(err));
        err = rdps__addr_join_start(c.addr, (struct sockaddr *)&ga, RDPS_JOIN_SEND_ONLY,
                                    &c_groups[g]);
        CHECK(err == 0, "C join_start SEND_ONLY 239.192.10.%u: %s", g, rdps_strerror(err));
    }
    struct sockaddr_in g1 = group_addr(1);
    err = rdps__addr_join_start(a.addr, (struct sockaddr *)&g1, RDPS_JOIN_FULL, &a_group1);
    CHECK(err == 0, "A join_start FULL 239.192.10.1: %s", rdps_strerror(err));
    for (unsigned g = 1; g <= NGROUPS; g++) {
        state = wait_group(all, 3, b_groups[g], NULL);
        CHECK(state == 1, "B joined 239.192.10.%u: %d %s", g, state,
              state < 0 ? rdps_last_error_message() : "");
        state = wait_group(all, 3, c_groups[g], &to_group[g]);
        CHECK(state == 1, "C send-only joined 239.192.10.%u: %d %s", g, state,
              state < 0 ? rdps_last_error_message() : "");
    }
    state = wait_group(all, 3, a_group1, NULL);
    CHECK(state == 1, "A joined 239.192.10.1: %d", state);

    struct rdps_addr_group_info gi;
    rdps__addr_group_info(b_groups[1], &gi);
    char mgid[INET6_ADDRSTRLEN];
    inet_ntop(AF_INET6, gi.mgid, mgid, sizeof(mgid));
    CHECK(gi.qp_attached, "B's QP attached to group 1 (MGID %s MLID 0x%04x Q_Key 0x%08x)", mgid,
          gi.mlid, gi.qkey);
    rdps__addr_group_info(c_groups[1], &gi);
    CHECK(!gi.qp_attached, "C's send-only join does not attach its QP%s",
          gi.full_join_fallback ? " (device refused send-only: fell back to a full join)" : "");
    CHECK(to_group[1] != NULL && to_group[1]->remote_qpn == 0xffffff,
          "group destination uses the multicast QPN 0xFFFFFF");

    if (to_group[1] != NULL && to_group[2] != NULL && to_group[3] != NULL) {
        reset_counts(all, 3);
        for (unsigned g = 1; g <= NGROUPS; g++)
            send_burst(all, 3, &c, to_group[g], g);
        for (unsigned g = 1; g <= NGROUPS; g++)
            wait_counts(all, 3, &b, g, PER_GROUP, WAIT_MS);
        wait_counts(all, 3, &a, 1, PER_GROUP, WAIT_MS);
        pump(all, 3, QUIET_MS);
        for (unsigned g = 1; g <= NGROUPS; g++)
            CHECK(b.rx_by_group[g] == PER_GROUP, "B (3 groups) received %u/%u on group %u",
                  b.rx_by_group[g], PER_GROUP, g);
        CHECK(a.rx_by_group[1] == PER_GROUP && a.rx_by_group[2] == 0 && a.rx_by_group[3] == 0,
              "A (group 1 only) received %u/%u on group 1, %u on group 2, %u on group 3",
              a.rx_by_group[1], PER_GROUP, a.rx_by_group[2], a.rx_by_group[3]);
        CHECK(c.rx_by_group[1] + c.rx_by_group[2] + c.rx_by_group[3] == 0,
              "C (send-only) received nothing");

        /* Refcount: a second FULL join of group 1 on B, then one leave: B still receives. */
        struct rdps_addr_group *again = NULL;
        err = rdps__addr_join_start(b.addr, (struct sockaddr *)&g1, RDPS_JOIN_FULL, &again);
        CHECK(err == 0 && again == b_groups[1] && rdps__addr_group_state(again, NULL) == 1,
              "second FULL join of group 1 shares the joined entry");
        rdps__addr_group_info(again, &gi);
        CHECK(gi.refcount == 2, "group 1 refcount is %u", gi.refcount);
        rdps__addr_leave(again);
        reset_counts(all, 3);
        send_burst(all, 3, &c, to_group[1], 1);
        wait_counts(all, 3, &b, 1, PER_GROUP, WAIT_MS);
        CHECK(b.rx_by_group[1] == PER_GROUP,
              "after 2 joins + 1 leave B still receives group 1 (%u/%u)", b.rx_by_group[1],
              PER_GROUP);

        /* Last leave detaches: no more group-1 (or group-2) traffic on B; A still gets group 1. */
        rdps__addr_leave(b_groups[1]);
        b_groups[1] = NULL;
        rdps__addr_leave(b_groups[2]);
        b_groups[2] = NULL;
        reset_counts(all, 3);
        send_burst(all, 3, &c, to_group[1], 1);
        send_burst(all, 3, &c, to_group[2], 2);
        send_burst(all, 3, &c, to_group[3], 3);
        wait_counts(all, 3, &a, 1, PER_GROUP, WAIT_MS);
        wait_counts(all, 3, &b, 3, PER_GROUP, WAIT_MS);
        pump(all, 3, QUIET_MS);
        CHECK(b.rx_by_group[1] == 0 && b.rx_by_group[2] == 0,
              "after leave B receives nothing on groups 1 and 2 (%u, %u)", b.rx_by_group[1],
              b.rx_by_group[2]);
        CHECK(b.rx_by_group[3] == PER_GROUP, "B still receives group 3 (%u/%u)", b.rx_by_group[3],
              PER_GROUP);
        CHECK(a.rx_by_group[1] == PER_GROUP, "A still receives group 1 (%u/%u)", a.rx_by_group[1],
              PER_GROUP);
    }

    struct rdps_addr_stats st;
    rdps__addr_get_stats(b.addr, &st);
    CHECK(st.requests_answered >= 1 && st.qp_attaches == 3 && st.qp_detaches == 2,
          "B stats: %llu resolves answered, %llu attaches, %llu detaches, %llu CM events",
          (unsigned long long)st.requests_answered, (unsigned long long)st.qp_attaches,
          (unsigned long long)st.qp_detaches, (unsigned long long)st.cm_events);
    rdps__addr_get_stats(c.addr, &st);
    printf("C stats: %llu joins, %llu send-only fallbacks\n", (unsigned long long)st.joins_ready,
           (unsigned long long)st.send_only_fallbacks);

    /* Re-join (the MULTICAST_ERROR path) on B's remaining group: detached, joined, re-attached. */
    if (b_groups[3] != NULL && to_group[3] != NULL) {
        err = rdps__addr_group_rejoin(b_groups[3]);
        CHECK(err == 0, "rejoin of group 3 started (%s)", rdps_strerror(err));
        state = wait_group(all, 3, b_groups[3], NULL);
        rdps__addr_group_info(b_groups[3], &gi);
        rdps__addr_get_stats(b.addr, &st);
        CHECK(state == 1 && gi.qp_attached && gi.rejoins == 1 && st.rejoins == 1,
              "group 3 re-joined and re-attached (state %d, rejoins %llu)", state,
              (unsigned long long)st.rejoins);
        reset_counts(all, 3);
        send_burst(all, 3, &c, to_group[3], 3);
        wait_counts(all, 3, &b, 3, PER_GROUP, WAIT_MS);
        CHECK(b.rx_by_group[3] == PER_GROUP, "B receives group 3 after the re-join (%u/%u)",
              b.rx_by_group[3], PER_GROUP);
    }

    rdps__addr_leave(a_group1);
    for (unsigned g = 1; g <= NGROUPS; g++) {
        rdps__addr_leave(b_groups[g]);
        rdps__addr_leave(c_groups[g]);
    }
    node_close(&c);
    node_close(&b);
    node_close(&a);
    printf("%d passed, %d failed\n", checks - failures, failures);
    return failures == 0 ? 0 : 1;
}
