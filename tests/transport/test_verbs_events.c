/* SPDX-License-Identifier: BSD-2-Clause */
/* test_verbs_events.c - async events on rxe: a netdev down/up surfaces PORT_DOWN/PORT_ACTIVE
 * through the event fd. */
#include "rdps_error.h"
#include "verbs_test_util.h"

#include <poll.h>
#include <stdio.h>
#include <unistd.h>

/* Waits on the event fd (arming as the contract says) until `want` is reported or 20 s pass. */
static int wait_for_event(struct rdps_transport *t, enum rdps_transport_event_type want)
{
    struct pollfd pfd = {.fd = t->ops->event_fd(t), .events = POLLIN};
    struct rdps_rx_datagram rx[4];
    uint64_t deadline = vt_now_ms() + 20000;
    while (vt_now_ms() < deadline) {
        enum rdps_transport_event_type type;
        if (t->ops->arm(t) < 0)
            return -1;
        while (t->ops->next_event(t, &type) == 1) {
            printf("# event %d\n", (int)type);
            if (type == want)
                return 0;
        }
        int n = t->ops->poll(t, rx, 4);
        if (n > 0)
            t->ops->rx_release(t, rx, n);
        (void)poll(&pfd, 1, 1000);
    }
    return -1;
}

static int run(const char *cmd)
{
    printf("# %s\n", cmd);
    fflush(stdout);
    return system(cmd);
}

int main(void)
{
    const char *netdev = getenv("RDPS_VM_NETDEV");
    if (!vt_have_device() || netdev == NULL || geteuid() != 0) {
        fprintf(stderr,
                "test_verbs_events: needs root in a tools/rxe-vm guest with rxe, skipped\n");
        return VT_SKIP;
    }
    struct rdps_verbs_config cfg = {.device_name = vt_device()};
    struct rdps_transport *t;
    int err = rdps__verbs_transport_create(&cfg, &t);
    if (err < 0) {
        fprintf(stderr, "test_verbs_events: %s\n", rdps_last_error_message());
        return 1;
    }
    char cmd[256];
    int failures = 0;

    snprintf(cmd, sizeof(cmd), "ip link set dev %s down", netdev);
    if (run(cmd) != 0 || wait_for_event(t, RDPS_TRANSPORT_EV_PORT_DOWN) != 0) {
        fprintf(stderr, "FAIL: no PORT_DOWN event after the netdev went down\n");
        failures++;
    } else {
        printf("ok: PORT_DOWN through the event fd\n");
    }
    /* Bring the link back and restore the multicast route the harness set (down removed it). */
    snprintf(cmd, sizeof(cmd), "ip link set dev %s up && ip route replace 224.0.0.0/4 dev %s",
             netdev, netdev);
    if (run(cmd) != 0 || wait_for_event(t, RDPS_TRANSPORT_EV_PORT_ACTIVE) != 0) {
        fprintf(stderr, "FAIL: no PORT_ACTIVE event after the netdev came back\n");
        failures++;
    } else {
        printf("ok: PORT_ACTIVE through the event fd\n");
    }
    struct rdps_transport_stats st;
    t->ops->get_stats(t, &st);
    printf("# async events counted: %llu\n", (unsigned long long)st.async_events);
    if (st.async_events < 2)
        failures++;

    /* The transport still works after the flap: a datagram to itself. */
    struct rdps_verbs_info info;
    rdps__verbs_transport_info(t, &info);
    struct ibv_ah *ah = vt_make_ah(&info, &info);
    struct rdps_dest self = {.ah = ah, .remote_qpn = info.qpn, .remote_qkey = info.qkey};
    const struct rdps_dest *dests[1] = {&self};
    struct rdps_tx_buf buf;
    struct rdps_rx_datagram rx[1];
    int got = 0;
    for (int attempt = 0; attempt < 50 && !got; attempt++) {
        if (ah != NULL && t->ops->claim(t, &buf) == 0) {
            memcpy(buf.data, "again", 5);
            if (t->ops->submit(t, &buf, 5, dests, 1) == 0)
                (void)t->ops->flush(t);
        }
        vt_sleep_ms(100);
        int n = t->ops->poll(t, rx, 1);
        if (n == 1) {
            got = rx[0].len == 5 && memcmp(rx[0].data, "again", 5) == 0;
            t->ops->rx_release(t, rx, 1);
        }
    }
    printf("%s: datagram after the link came back\n", got ? "ok" : "FAIL");
    failures += !got;
    if (ah != NULL)
        ibv_destroy_ah(ah);
    t->ops->destroy(t);
    return failures == 0 ? 0 : 1;
}
