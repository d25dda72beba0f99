/* SPDX-License-Identifier: BSD-2-Clause */
/* rxe_addr_pair.c - rxe test across two guests: guest 1 resolves guest 0 by IP:port (SIDR) and
 * exchanges unicast, then multicasts to a group guest 0 joined. */
#include <arpa/inet.h>
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

#define CM_PORT       7471
#define PINGS         20
#define MCAST_COUNT   100
#define GROUP_ADDR    0xefc01401u /* 239.192.20.1 */
#define PHASE_MS      60000
#define PING_RETRY_MS 500

struct node {
    struct rdps_transport *t;
    struct rdps_verbs_info info;
    struct rdps_addr *addr;
};

static uint64_t now_ms(void)
{
    return rdps__clock_monotonic_ms();
}

static int fail(const char *what, int err)
{
    printf("FAIL: %s: %s (%s)\n", what, rdps_err_name(err), rdps_last_error_message());
    return 1;
}

static void pump(struct node *n, int wait_ms)
{
    struct pollfd pfd = {.fd = rdps__addr_fd(n->addr), .events = POLLIN};
    if (wait_ms == 0) {
        /* The busy receive loop: the rate-limited variant keeps it free of syscalls. */
        rdps__addr_tick(n->addr);
        return;
    }
    poll(&pfd, 1, wait_ms);
    rdps__addr_process(n->addr);
}

static int send_text(struct node *n, const struct rdps_dest *dest, const char *text)
{
    struct rdps_tx_buf buf;
    const struct rdps_dest *dests[1] = {dest};
    struct rdps_rx_datagram none[1];
    uint64_t deadline = now_ms() + 2000;
    int err;

    while ((err = n->t->ops->claim(n->t, &buf)) == RDPS_EAGAIN && now_ms() < deadline) {
        int got = n->t->ops->poll(n->t, none, 0); /* reap send completions only */
        (void)got;
    }
    if (err < 0)
        return err;
    size_t len = strlen(text);
    memcpy(buf.data, text, len);
    err = n->t->ops->submit(n->t, &buf, (uint32_t)len, dests, 1);
    if (err < 0)
        return err;
    return n->t->ops->flush(n->t);
}

static int node_open(struct node *n, const char *ip_text, int32_t cm_port)
{
    struct sockaddr_in ip;
    struct rdps_verbs_config vc;
    struct rdps_addr_config ac;
    int err;

    memset(&ip, 0, sizeof(ip));
    ip.sin_family = AF_INET;
    if (inet_pton(AF_INET, ip_text, &ip.sin_addr) != 1) {
        printf("FAIL: bad local address '%s'\n", ip_text);
        return RDPS_EINVAL;
    }
    memset(&vc, 0, sizeof(vc));
    vc.bind_addr = (struct sockaddr *)&ip;
    err = rdps__verbs_transport_create(&vc, &n->t);
    if (err < 0)
        return fail("transport_create", err);
    rdps__verbs_transport_info(n->t, &n->info);
    memset(&ac, 0, sizeof(ac));
    ac.transport = n->t;
    ac.cm_port = cm_port;
    ac.resolve_timeout_ms = 3000;
    err = rdps__addr_create(&ac, &n->addr);
    if (err < 0)
        return fail("addr_create", err);
    printf("%s: QPN 0x%06x on %s, MTU %u\n", ip_text, n->info.qpn, n->info.device_name,
           n->info.active_mtu_bytes);
    return 0;
}

static void node_close(struct node *n)
{
    rdps__addr_destroy(n->addr);
    if (n->t != NULL)
        n->t->ops->destroy(n->t);
}

/* Guest 0: joins the group, echoes unicast pings through reply_dest(), counts group datagrams. */
static int run_server(const char *ip_text)
{
    struct node n = {0};
    struct sockaddr_in group = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(GROUP_ADDR)};
    struct rdps_addr_group *g = NULL;
    unsigned char seen[MCAST_COUNT] = {0};
    unsigned distinct = 0, echoed = 0, bad = 0;
    int err, state;

    if (node_open(&n, ip_text, CM_PORT) != 0)
        return 1;
    err = rdps__addr_join_start(n.addr, (struct sockaddr *)&group, RDPS_JOIN_FULL, &g);
    if (err < 0)
        return fail("join_start", err);
    uint64_t deadline = now_ms() + PHASE_MS;
    while ((state = rdps__addr_group_state(g, NULL)) == 0 && now_ms() < deadline)
        pump(&n, 20);
    if (state != 1)
        return fail("join 239.192.20.1", state == 0 ? RDPS_ETIMEDOUT : state);
    printf("ok: server joined 239.192.20.1 (full member, QP attached)\n");

    /* Pings are answered only now, so the client multicasts only once we are attached. */
    deadline = now_ms() + 2 * PHASE_MS;
    while (distinct < MCAST_COUNT && now_ms() < deadline) {
        struct rdps_rx_datagram rx[32];
        pump(&n, 0);
        int got = n.t->ops->poll(n.t, rx, 32);
        if (got <= 0) {
            struct pollfd pfd = {.fd = n.t->ops->event_fd(n.t), .events = POLLIN};
            if (pfd.fd >= 0) {
                poll(&pfd, 1, 5);
                n.t->ops->arm(n.t);
            }
            continue;
        }
        for (int i = 0; i < got; i++) {
            char text[64];
            unsigned seq;
            size_t len = rx[i].len < sizeof(text) - 1 ? rx[i].len : sizeof(text) - 1;
            memcpy(text, rx[i].data, len);
            text[len] = '\0';
            const struct rdps_dest *reply = NULL;
            if (sscanf(text, "ping %u", &seq) == 1 &&
                rdps__transport_reply(n.t, &rx[i], &reply) == 0) {
                char answer[32];
                snprintf(answer, sizeof(answer), "pong %u", seq);
                if (send_text(&n, reply, answer) == 0)
                    echoed++;
            } else if (sscanf(text, "mcast %u", &seq) == 1 && seq < MCAST_COUNT) {
                if (!seen[seq]++)
                    distinct++;
            } else {
                bad++;
            }
        }
        n.t->ops->rx_release(n.t, rx, got);
    }
    struct rdps_addr_stats st;
    rdps__addr_get_stats(n.addr, &st);
    printf("server: answered %llu resolves, echoed %u pings, %u/%u distinct group datagrams, "
           "%u malformed\n",
           (unsigned long long)st.requests_answered, echoed, distinct, MCAST_COUNT, bad);
    int rc = 0;
    if (st.requests_answered < 1) {
        printf("FAIL: server answered no resolve\n");
        rc = 1;
    }
    if (distinct != MCAST_COUNT) {
        printf("FAIL: server received %u of %u group datagrams\n", distinct, MCAST_COUNT);
        rc = 1;
    } else {
        printf("ok: server received all %u group datagrams\n", MCAST_COUNT);
    }
    rdps__addr_leave(g);
    node_close(&n);
    return rc;
}

/* Guest 1: resolves guest 0, ping/pong over unicast, then sends to the group (send-only join). */
static int run_client(const char *ip_text, const char *server_text)
{
    struct node n = {0};
    struct sockaddr_in server = {.sin_family = AF_INET, .sin_port = htons(CM_PORT)};
    struct sockaddr_in group = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(GROUP_ADDR)};
    struct rdps_addr_peer *peer = NULL;
    struct rdps_addr_group *g = NULL;
    const struct rdps_dest *to_server = NULL, *to_group = NULL;
    int err, state = 0;

    if (inet_pton(AF_INET, server_text, &server.sin_addr) != 1) {
        printf("FAIL: bad server address '%s'\n", server_text);
        return 1;
    }
    if (node_open(&n, ip_text, RDPS_ADDR_NO_LISTEN) != 0)
        return 1;

    /* The server may still be starting: a refused or unanswered resolve is retried. */
    uint64_t deadline = now_ms() + PHASE_MS;
    unsigned attempts = 0;
    while (now_ms() < deadline) {
        attempts++;
        err = rdps__addr_resolve_start(n.addr, (struct sockaddr *)&server, &peer);
        if (err < 0)
            return fail("resolve_start", err);
        while ((state = rdps__addr_peer_state(peer, &to_server)) == 0)
            pump(&n, 20);
        if (state == 1)
            break;
        printf("resolve attempt %u: %s (%s); retrying\n", attempts, rdps_err_name(state),
               rdps_last_error_message());
        rdps__addr_peer_release(peer);
        peer = NULL;
        pump(&n, 500);
    }
    if (state != 1)
        return fail("resolve server", state == 0 ? RDPS_ETIMEDOUT : state);
    printf("ok: resolved %s:%u -> QPN 0x%06x Q_Key 0x%08x after %u attempt(s)\n", server_text,
           CM_PORT, to_server->remote_qpn, to_server->remote_qkey, attempts);

    unsigned pongs = 0;
    for (unsigned i = 0; i < PINGS; i++) {
        char text[32];
        bool answered = false;
        snprintf(text, sizeof(text), "ping %u", i);
        deadline = now_ms() + PHASE_MS;
        while (!answered && now_ms() < deadline) {
            err = send_text(&n, to_server, text);
            if (err < 0)
                return fail("send ping", err);
            uint64_t retry = now_ms() + PING_RETRY_MS;
            while (!answered && now_ms() < retry) {
                struct rdps_rx_datagram rx[8];
                int got = n.t->ops->poll(n.t, rx, 8);
                for (int k = 0; k < got; k++) {
                    unsigned seq;
                    char in[32];
                    size_t len = rx[k].len < sizeof(in) - 1 ? rx[k].len : sizeof(in) - 1;
                    memcpy(in, rx[k].data, len);
                    in[len] = '\0';
                    if (sscanf(in, "pong %u", &seq) == 1 && seq == i &&
                        rx[k].src_qpn == to_server->remote_qpn)
                        answered = true;
                }
                if (got > 0)
                    n.t->ops->rx_release(n.t, rx, got);
                else
                    pump(&n, 2);
            }
        }
        if (!answered)
            break;
        pongs++;
    }
    if (pongs != PINGS) {
        printf("FAIL: %u of %u pings answered\n", pongs, PINGS);
        return 1;
    }
    printf("ok: %u unicast pings answered by the resolved peer\n", pongs);

    err = rdps__addr_join_start(n.addr, (struct sockaddr *)&group, RDPS_JOIN_SEND_ONLY, &g);
    if (err < 0)
        return fail("send-only join_start", err);
    deadline = now_ms() + PHASE_MS;
    while ((state = rdps__addr_group_state(g, &to_group)) == 0 && now_ms() < deadline)
        pump(&n, 20);
    if (state != 1)
        return fail("send-only join", state == 0 ? RDPS_ETIMEDOUT : state);
    struct rdps_addr_group_info gi;
    rdps__addr_group_info(g, &gi);
    printf("ok: send-only join done (QP attached: %s%s)\n", gi.qp_attached ? "yes" : "no",
           gi.full_join_fallback ? ", fell back to a full join" : "");
    for (unsigned i = 0; i < MCAST_COUNT; i++) {
        char text[32];
        snprintf(text, sizeof(text), "mcast %u", i);
        err = send_text(&n, to_group, text);
        if (err < 0)
            return fail("send to group", err);
        pump(&n, 2); /* pace: the receiving guest runs under TCG */
    }
    printf("ok: sent %u datagrams to 239.192.20.1\n", MCAST_COUNT);
    pump(&n, 500); /* let the last sends complete before the QP goes */
    rdps__addr_leave(g);
    rdps__addr_peer_release(peer);
    node_close(&n);
    return 0;
}

int main(void)
{
    const char *index = getenv("RDPS_VM_INDEX");
    const char *ip = getenv("RDPS_VM_IP");
    const char *ips = getenv("RDPS_VM_IPS");
    char server[64] = "";

    setvbuf(stdout, NULL, _IOLBF, 0);
    if (index == NULL || ip == NULL || ips == NULL) {
        printf("skip: run by tools/rxe-vm with two --host guests (RDPS_VM_* unset)\n");
        return 77;
    }
    sscanf(ips, "%63s", server);
    int rc = strcmp(index, "0") == 0 ? run_server(ip) : run_client(ip, server);
    printf("%s: %s\n", strcmp(index, "0") == 0 ? "server" : "client", rc == 0 ? "PASS" : "FAIL");
    return rc;
}
