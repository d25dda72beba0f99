/* SPDX-License-Identifier: BSD-2-Clause */
/* ping_listen.c - rdps-ping --listen: echo every ping to its sender (or only count, --sink). */
#include <stdio.h>
#include <string.h>

#include "ping.h"
#include "ping_wire.h"
#include "rdps_clock.h"
#include "rdps_error.h"
#include "tool_cli.h"
#include "tool_json.h"

struct listen_totals {
    uint64_t received, echoed, bad, echo_failed, no_reply;
    uint64_t first_ns, last_ns;
};

int ping_run_listener(struct ping_ctx *pc)
{
    struct rdps_rx_datagram rx[RX_BATCH];
    struct listen_totals tot = {0};
    uint64_t deadline =
        pc->opt.timeout_s ? rdps__clock_monotonic_ns() + pc->opt.timeout_s * 1000000000ull : 0;
    uint64_t next_cm_check = 0;
    int rc = TOOL_EXIT_OK;

    if (pc->local)
        fprintf(stderr, PROG ": listening on the local device as %s, qpn 0x%x%s\n",
                pc->local_member, pc->info.qpn, pc->opt.sink ? " (sink)" : "");
    else
        fprintf(stderr, PROG ": listening on %s port %u, qpn 0x%x, cm port %u%s\n",
                pc->info.device_name, pc->info.port_num, pc->info.qpn,
                rdps__addr_listen_port(pc->addr), pc->opt.sink ? " (sink)" : "");
    while (!ping_stop_requested) {
        int n = pc->t->ops->poll(pc->t, rx, RX_BATCH);
        if (n < 0) {
            tool_error(PROG, "poll: %s", rdps_strerror(n));
            rc = TOOL_EXIT_FAILED;
            break;
        }
        if (n > 0) {
            uint64_t now = rdps__clock_monotonic_ns();
            if (tot.first_ns == 0)
                tot.first_ns = now;
            tot.last_ns = now;
        }
        bool queued = false;
        for (int i = 0; i < n; i++) {
            struct ping_header h;
            tot.received++;
            if (!ping_header_get(rx[i].data, rx[i].len, &h) || h.kind != PING_KIND_PING) {
                tot.bad++;
                continue;
            }
            if (pc->opt.sink)
                continue;
            const struct rdps_dest *reply = NULL;
            if (rdps__transport_reply(pc->t, &rx[i], &reply) < 0) {
                tot.no_reply++;
                continue;
            }
            struct rdps_tx_buf buf;
            int err = ping_claim_retry(pc->t, &buf, 100000000ull);
            if (err == 0) {
                memcpy(buf.data, rx[i].data, rx[i].len);
                h.kind = PING_KIND_PONG;
                ping_header_put(buf.data, &h);
                err = pc->t->ops->submit(pc->t, &buf, rx[i].len, &reply, 1);
            }
            if (err < 0) {
                tot.echo_failed++; /* counted, reported in the summary */
                continue;
            }
            queued = true;
            tot.echoed++;
        }
        if (queued) {
            int err = pc->t->ops->flush(pc->t);
            if (err < 0)
                tool_error(PROG, "flush: %s", rdps_last_error_message());
        }
        if (n > 0)
            pc->t->ops->rx_release(pc->t, rx, n);
        uint64_t now = n > 0 ? tot.last_ns : rdps__clock_monotonic_ns();
        if (now >= next_cm_check) {
            /* CM requests (resolves from clients) are rare: look every 10 ms. */
            if (pc->addr != NULL)
                (void)rdps__addr_process(pc->addr);
            enum rdps_transport_event_type ev;
            while (pc->t->ops->next_event(pc->t, &ev) == 1) {
                if (ev == RDPS_TRANSPORT_EV_DEVICE_FATAL) {
                    tool_error(PROG, "%s: device fatal error", pc->info.device_name);
                    ping_stop_requested = 1;
                    rc = TOOL_EXIT_FAILED;
                } else if (ev == RDPS_TRANSPORT_EV_PORT_DOWN) {
                    fprintf(stderr, PROG ": %s port %u went down\n", pc->info.device_name,
                            pc->info.port_num);
                }
            }
            next_cm_check = now + 10000000ull;
            if (deadline != 0 && now > deadline)
                break;
        }
        if (n == 0)
            ping_idle(pc, 10);
    }
    struct rdps_transport_stats st;
    pc->t->ops->get_stats(pc->t, &st);
    double secs = tot.last_ns > tot.first_ns ? (double)(tot.last_ns - tot.first_ns) / 1e9 : 0.0;
    double rate = secs > 0 ? (double)(tot.received > 1 ? tot.received - 1 : 0) / secs : 0.0;
    if (pc->opt.json) {
        struct tool_json j;
        tool_json_init(&j, stdout);
        tool_json_object_begin(&j, NULL);
        tool_json_str(&j, "mode", pc->opt.sink ? "sink" : "listen");
        tool_json_u64(&j, "received", tot.received);
        tool_json_u64(&j, "echoed", tot.echoed);
        tool_json_u64(&j, "bad", tot.bad);
        tool_json_u64(&j, "echo_failed", tot.echo_failed + tot.no_reply);
        tool_json_u64(&j, "rx_queue_empty", st.rx_queue_empty);
        tool_json_double(&j, "rx_seconds", secs);
        tool_json_double(&j, "rx_datagrams_per_s", rate);
        tool_json_finish(&j);
    } else {
        printf("%s: received %llu datagrams (%llu bad), echoed %llu, echo failures %llu, "
               "receive queue empty %llu times; %.0f datagrams/s over %.3f s\n",
               pc->opt.sink ? "sink" : "listener", (unsigned long long)tot.received,
               (unsigned long long)tot.bad, (unsigned long long)tot.echoed,
               (unsigned long long)(tot.echo_failed + tot.no_reply),
               (unsigned long long)st.rx_queue_empty, rate, secs);
    }
    return rc;
}
