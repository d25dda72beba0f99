/* SPDX-License-Identifier: BSD-2-Clause */
/* test_verbs_recovery.c - QP error recovery on rxe: a QP forced into the error state is reset and
 * back to RTS on its own; unicast and multicast traffic resume on the same transport. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "rdps_addr.h"
#include "rdps_error.h"
#include "verbs_addr_test_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>

#define GROUP_IP "239.192.77.9"
#define WAIT_MS  20000

struct node {
    struct rdps_transport *t;
    struct rdps_verbs_info info;
    struct rdps_addr *addr;
    unsigned uni, mcast, replies; /* datagrams received by kind */
    bool saw_recovered_event;
};

static void node_open(struct node *n)
{
    memset(n, 0, sizeof(*n));
    vt_open_with_addr(0, &n->t, &n->info, &n->addr);
}

static void node_close(struct node *n)
{
    vt_close_with_addr(n->t, n->addr);
}

static int send_text(struct node *n, const struct rdps_dest *dest, const char *text)
{
    struct rdps_tx_buf buf;
    const struct rdps_dest *dests[1] = {dest};
    int err = n->t->ops->claim(n->t, &buf);
    if (err < 0)
        return err;
    size_t len = strlen(text);
    memcpy(buf.data, text, len);
    err = n->t->ops->submit(n->t, &buf, (uint32_t)len, dests, 1);
    return err < 0 ? err : n->t->ops->flush(n->t);
}

/* Receives and counts by the first byte: 'u' unicast, 'm' multicast, 'r' reply; 'p' asks for one.
 */
static void drain(struct node *n)
{
    struct rdps_rx_datagram rx[16];
    enum rdps_transport_event_type ev;
    int got;
    rdps__addr_process(n->addr);
    while ((got = n->t->ops->poll(n->t, rx, 16)) > 0) {
        for (int i = 0; i < got; i++) {
            if (rx[i].len == 0)
                continue;
            if (rx[i].data[0] == 'u')
                n->uni++;
            else if (rx[i].data[0] == 'm')
                n->mcast++;
            else if (rx[i].data[0] == 'r')
                n->replies++;
            if (rx[i].data[0] == 'p') {
                const struct rdps_dest *reply = NULL;
                if (rdps__transport_reply(n->t, &rx[i], &reply) == 0)
                    (void)send_text(n, reply, "r");
            }
        }
        n->t->ops->rx_release(n->t, rx, got);
    }
    while (n->t->ops->next_event(n->t, &ev) == 1) {
        if (ev == RDPS_TRANSPORT_EV_QP_RECOVERED)
            n->saw_recovered_event = true;
    }
}

static void pump(struct node *a, struct node *b, int ms)
{
    uint64_t until = vt_now_ms() + (uint64_t)ms;
    do {
        drain(a);
        drain(b);
        vt_sleep_ms(2);
    } while (vt_now_ms() < until);
}

/* Sends a unicast and a multicast datagram from s every 50 ms until r counted one more of each. */
static bool both_arrive(struct node *s, struct node *r, const struct rdps_dest *uni,
                        const struct rdps_dest *group)
{
    unsigned uni0 = r->uni, mcast0 = r->mcast;
    uint64_t deadline = vt_now_ms() + WAIT_MS;
    while ((r->uni == uni0 || r->mcast == mcast0) && vt_now_ms() < deadline) {
        (void)send_text(s, uni, "u");
        (void)send_text(s, group, "m");
        pump(s, r, 50);
    }
    return r->uni > uni0 && r->mcast > mcast0;
}

static void stats_of(struct node *n, struct rdps_transport_stats *st)
{
    n->t->ops->get_stats(n->t, st);
}

static void test_recovery_resumes_unicast_and_multicast(void **state)
{
    (void)state;
    struct node s, r;
    struct rdps_addr_group *rg = NULL, *sg = NULL;
    const struct rdps_dest *group = NULL;
    struct sockaddr_in ga = {.sin_family = AF_INET};
    struct rdps_transport_stats st;

    node_open(&s);
    node_open(&r);
    inet_pton(AF_INET, GROUP_IP, &ga.sin_addr);
    assert_int_equal(rdps__addr_join_start(r.addr, (struct sockaddr *)&ga, RDPS_JOIN_FULL, &rg), 0);
    assert_int_equal(
        rdps__addr_join_start(s.addr, (struct sockaddr *)&ga, RDPS_JOIN_SEND_ONLY, &sg), 0);
    uint64_t deadline = vt_now_ms() + WAIT_MS;
    const struct rdps_dest *rdest = NULL;
    while ((rdps__addr_group_state(rg, &rdest) == 0 || rdps__addr_group_state(sg, &group) == 0) &&
           vt_now_ms() < deadline)
        pump(&s, &r, 20);
    assert_int_equal(rdps__addr_group_state(rg, &rdest), 1);
    assert_int_equal(rdps__addr_group_state(sg, &group), 1);
    struct ibv_ah *ah = vt_make_ah(&s.info, &r.info);
    assert_non_null(ah);
    struct rdps_dest uni = {.ah = ah, .remote_qpn = r.info.qpn, .remote_qkey = r.info.qkey};

    assert_true(both_arrive(&s, &r, &uni, group));
    stats_of(&r, &st);
    assert_int_equal(st.qp_recoveries, 0);

    /* The receiver's QP enters the error state: it must come back by itself, same QPN. */
    assert_int_equal(rdps__verbs_transport_force_error(r.t), 0);
    assert_true(both_arrive(&s, &r, &uni, group));
    stats_of(&r, &st);
    assert_int_equal(st.qp_recoveries, 1);
    assert_true(r.saw_recovered_event);
    struct rdps_verbs_info after;
    assert_int_equal(rdps__verbs_transport_info(r.t, &after), 0);
    assert_int_equal(after.qpn, r.info.qpn);
    printf("# receiver recovered: %llu completion errors (flushed receives)\n",
           (unsigned long long)st.rx_completion_errors);

    /* The recovered QP sends too: it answers through a reply destination. */
    unsigned replies0 = s.replies;
    deadline = vt_now_ms() + WAIT_MS;
    while (s.replies == replies0 && vt_now_ms() < deadline) {
        (void)send_text(&s, &uni, "p");
        pump(&s, &r, 50);
    }
    assert_true(s.replies > replies0);

    /* The sender's QP enters the error state with sends queued: they are lost, it recovers. */
    assert_int_equal(rdps__verbs_transport_force_error(s.t), 0);
    assert_true(both_arrive(&s, &r, &uni, group));
    stats_of(&s, &st);
    assert_int_equal(st.qp_recoveries, 1);
    assert_true(s.saw_recovered_event);
    /* What was sent while the QP was in the error state is accounted for, never silently gone. */
    assert_true(st.tx_lost_qp_error + st.tx_completion_errors > 0);
    printf("# sender recovered: %llu sends lost, %llu completion errors\n",
           (unsigned long long)st.tx_lost_qp_error, (unsigned long long)st.tx_completion_errors);

    ibv_destroy_ah(ah);
    rdps__addr_leave(sg);
    rdps__addr_leave(rg);
    node_close(&s);
    node_close(&r);
}

int main(void)
{
    if (!vt_have_device()) {
        printf("no RDMA device: skipped\n");
        return VT_SKIP;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recovery_resumes_unicast_and_multicast),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
