/* SPDX-License-Identifier: BSD-2-Clause */
/* ping_client.c - the rdps-ping client: pings (or floods) one peer or group and reports RTT and
 * loss. */
#include <stdlib.h>
#include <string.h>

#include "ping.h"
#include "ping_wire.h"
#include "rdps_clock.h"
#include "rdps_error.h"
#include "tool_cli.h"
#include "tool_json.h"

struct responder {
    uint8_t gid[16];
    uint32_t qpn;
};

struct client_state {
    uint16_t *echoes_per_seq;
    uint64_t *rtt_ns;
    size_t nrtt, rtt_cap;
    struct responder responders[MAX_RESPONDER];
    unsigned nresponders;
    bool responders_overflow;
    uint64_t echoes, bad, foreign;
};

static void note_responder(struct client_state *cs, const struct rdps_rx_datagram *d)
{
    for (unsigned i = 0; i < cs->nresponders; i++) {
        if (cs->responders[i].qpn == d->src_qpn &&
            memcmp(cs->responders[i].gid, d->src_gid, 16) == 0)
            return;
    }
    if (cs->nresponders == MAX_RESPONDER) {
        cs->responders_overflow = true;
        return;
    }
    memcpy(cs->responders[cs->nresponders].gid, d->src_gid, 16);
    cs->responders[cs->nresponders].qpn = d->src_qpn;
    cs->nresponders++;
}

/* Takes in echoes; returns how many echoes of `want_seq` arrived, or a negative code. */
static int drain_echoes(struct ping_ctx *pc, struct client_state *cs, uint32_t want_seq)
{
    struct rdps_rx_datagram rx[RX_BATCH];
    int n = pc->t->ops->poll(pc->t, rx, RX_BATCH);
    int matched = 0;
    if (n <= 0)
        return n;
    uint64_t now = rdps__clock_monotonic_ns();
    for (int i = 0; i < n; i++) {
        struct ping_header h;
        if (!ping_header_get(rx[i].data, rx[i].len, &h) || h.kind != PING_KIND_PONG) {
            cs->bad++;
            continue;
        }
        if (h.seq >= pc->opt.count || h.sent_ns > now) {
            cs->foreign++; /* not one of ours (another client, or a stale run) */
            continue;
        }
        cs->echoes++;
        if (cs->echoes_per_seq[h.seq] < UINT16_MAX)
            cs->echoes_per_seq[h.seq]++;
        note_responder(cs, &rx[i]);
        if (cs->nrtt < cs->rtt_cap)
            cs->rtt_ns[cs->nrtt++] = now - h.sent_ns;
        if (h.seq == want_seq)
            matched++;
    }
    pc->t->ops->rx_release(pc->t, rx, n);
    return matched;
}

static int send_ping(struct ping_ctx *pc, uint32_t seq)
{
    struct rdps_tx_buf buf;
    int err = ping_claim_retry(pc->t, &buf, 1000000000ull);
    if (err < 0)
        return err;
    struct ping_header h = {.kind = PING_KIND_PING, .seq = seq};
    memset(buf.data + PING_HEADER_BYTES, 0xa5, pc->opt.size - PING_HEADER_BYTES);
    h.sent_ns = rdps__clock_monotonic_ns();
    ping_header_put(buf.data, &h);
    err = pc->t->ops->submit(pc->t, &buf, (uint32_t)pc->opt.size, pc->dests, pc->ndests);
    if (err < 0)
        return err;
    return pc->t->ops->flush(pc->t);
}

static void print_summary(struct ping_ctx *pc, struct client_state *cs, uint64_t sent,
                          double send_secs)
{
    uint64_t lost = 0;
    for (uint64_t s = 0; s < sent; s++)
        lost += cs->echoes_per_seq[s] == 0;
    ping_sort(cs->rtt_ns, cs->nrtt);
    double us[5];
    const double pcts[5] = {0, 50, 99, 99.9, 100};
    for (int i = 0; i < 5; i++)
        us[i] = (double)(i == 0 ? (cs->nrtt ? cs->rtt_ns[0] : 0)
                                : ping_percentile(cs->rtt_ns, cs->nrtt, pcts[i])) /
                1000.0;
    double loss_pct = sent ? 100.0 * (double)lost / (double)sent : 0.0;
    double per_ping = sent ? (double)cs->echoes / (double)sent : 0.0;
    double rate = send_secs > 0 ? (double)sent / send_secs : 0.0;
    struct rdps_transport_stats st;
    pc->t->ops->get_stats(pc->t, &st);

    if (pc->opt.json) {
        struct tool_json j;
        tool_json_init(&j, stdout);
        tool_json_object_begin(&j, NULL);
        tool_json_str(&j, "mode", pc->opt.flood ? "flood" : "ping");
        tool_json_str(&j, "target", pc->target_text);
        tool_json_u64(&j, "size", pc->opt.size);
        tool_json_u64(&j, "sent", sent);
        tool_json_u64(&j, "echoes", cs->echoes);
        tool_json_double(&j, "echoes_per_ping", per_ping);
        tool_json_u64(&j, "responders", cs->nresponders);
        tool_json_u64(&j, "lost", lost);
        tool_json_double(&j, "loss_pct", loss_pct);
        tool_json_double(&j, "rtt_min_us", us[0]);
        tool_json_double(&j, "rtt_p50_us", us[1]);
        tool_json_double(&j, "rtt_p99_us", us[2]);
        tool_json_double(&j, "rtt_p999_us", us[3]);
        tool_json_double(&j, "rtt_max_us", us[4]);
        tool_json_double(&j, "send_seconds", send_secs);
        tool_json_double(&j, "datagrams_per_s", rate);
        tool_json_u64(&j, "bad", cs->bad);
        tool_json_u64(&j, "tx_backpressure", st.tx_backpressure);
        tool_json_finish(&j);
        return;
    }
    printf("%llu %s of %llu bytes to %s via %s port %u (max_payload %u)\n",
           (unsigned long long)sent, pc->opt.flood ? "datagrams" : "pings",
           (unsigned long long)pc->opt.size, pc->target_text, pc->info.device_name,
           pc->info.port_num, pc->info.max_payload);
    if (pc->opt.flood)
        printf("rate: %.0f datagrams/s (%.3f s), back-pressure waits %llu\n", rate, send_secs,
               (unsigned long long)st.tx_backpressure);
    printf("rtt us: min %.1f p50 %.1f p99 %.1f p99.9 %.1f max %.1f (%zu samples)\n", us[0], us[1],
           us[2], us[3], us[4], cs->nrtt);
    printf("echoes %llu (%.2f per ping) from %u responder%s%s; lost %llu of %llu (%.2f%%)",
           (unsigned long long)cs->echoes, per_ping, cs->nresponders,
           cs->nresponders == 1 ? "" : "s", cs->responders_overflow ? " (or more)" : "",
           (unsigned long long)lost, (unsigned long long)sent, loss_pct);
    if (cs->bad || cs->foreign)
        printf("; %llu malformed, %llu foreign", (unsigned long long)cs->bad,
               (unsigned long long)cs->foreign);
    printf("\n");
}

int ping_run_client(struct ping_ctx *pc)
{
    struct options *o = &pc->opt;
    struct client_state cs;
    uint64_t deadline = rdps__clock_monotonic_ns() + o->timeout_s * 1000000000ull;
    uint64_t sent = 0;
    int rc = TOOL_EXIT_OK;

    memset(&cs, 0, sizeof(cs));
    cs.echoes_per_seq = calloc(o->count, sizeof(uint16_t));
    cs.rtt_cap = o->count * (pc->fanout ? (o->npeers > 8 ? o->npeers : 8) : 1) + 64;
    cs.rtt_ns = malloc(cs.rtt_cap * sizeof(uint64_t));
    if (cs.echoes_per_seq == NULL || cs.rtt_ns == NULL) {
        tool_error(PROG, "out of memory for %llu pings", (unsigned long long)o->count);
        free(cs.echoes_per_seq);
        free(cs.rtt_ns);
        return TOOL_EXIT_FAILED;
    }
    uint64_t start = rdps__clock_monotonic_ns(), send_end = start;
    if (o->flood) {
        /* As fast as back-pressure allows: chains of `batch` WRs, echoes drained meanwhile. */
        while (sent < o->count && !ping_stop_requested && rdps__clock_monotonic_ns() < deadline) {
            uint64_t chain = 0;
            int err = 0;
            while (chain < o->batch && sent + chain < o->count) {
                struct rdps_tx_buf buf;
                err = pc->t->ops->claim(pc->t, &buf);
                if (err < 0)
                    break;
                struct ping_header h = {.kind = PING_KIND_PING, .seq = (uint32_t)(sent + chain)};
                h.sent_ns = rdps__clock_monotonic_ns();
                ping_header_put(buf.data, &h);
                memset(buf.data + PING_HEADER_BYTES, 0xa5, o->size - PING_HEADER_BYTES);
                err = pc->t->ops->submit(pc->t, &buf, (uint32_t)o->size, pc->dests, pc->ndests);
                if (err < 0)
                    break;
                chain++;
            }
            if (chain > 0) {
                int ferr = pc->t->ops->flush(pc->t);
                if (ferr < 0) {
                    tool_error(PROG, "flush: %s", rdps_last_error_message());
                    rc = TOOL_EXIT_FAILED;
                    break;
                }
                sent += chain;
            }
            if (err < 0 && err != RDPS_EAGAIN) {
                tool_error(PROG, "send: %s", rdps_strerror(err));
                rc = TOOL_EXIT_FAILED;
                break;
            }
            if (drain_echoes(pc, &cs, UINT32_MAX) < 0) {
                rc = TOOL_EXIT_FAILED;
                break;
            }
        }
        send_end = rdps__clock_monotonic_ns();
        /* Collect late echoes for a moment (they are counted, not needed for the rate). */
        uint64_t linger = rdps__clock_monotonic_ns() + o->wait_ms * 1000000ull;
        while (rdps__clock_monotonic_ns() < linger && rdps__clock_monotonic_ns() < deadline &&
               !ping_stop_requested && cs.echoes < sent)
            if (drain_echoes(pc, &cs, UINT32_MAX) == 0)
                ping_idle(pc, 10);
    } else {
        for (uint32_t seq = 0; seq < o->count && !ping_stop_requested; seq++) {
            if (rdps__clock_monotonic_ns() > deadline)
                break;
            uint64_t t0 = rdps__clock_monotonic_ns();
            int err = send_ping(pc, seq);
            if (err < 0) {
                tool_error(PROG, "send: %s (%s)", rdps_strerror(err), rdps_last_error_message());
                rc = TOOL_EXIT_FAILED;
                break;
            }
            sent++;
            uint64_t wait_until = t0 + o->wait_ms * 1000000ull;
            uint64_t next_send = t0 + o->interval_us * 1000ull;
            unsigned want = pc->fanout ? (unsigned)o->expect : 1;
            unsigned got = 0;
            for (;;) {
                int m = drain_echoes(pc, &cs, seq);
                if (m < 0) {
                    tool_error(PROG, "poll: %s", rdps_strerror(m));
                    rc = TOOL_EXIT_FAILED;
                    break;
                }
                got += (unsigned)m;
                uint64_t now = rdps__clock_monotonic_ns();
                bool answered = want > 0 && got >= want;
                if ((answered && now >= next_send) || now >= wait_until ||
                    (want == 0 && now >= next_send) || now > deadline || ping_stop_requested)
                    break;
                if (m == 0) {
                    uint64_t until = answered || want == 0 ? next_send : wait_until;
                    uint64_t ms = until > now ? (until - now) / 1000000u : 0;
                    ping_idle(pc, ms > 100 ? 100 : (int)ms);
                }
            }
            if (rc != TOOL_EXIT_OK)
                break;
        }
        send_end = rdps__clock_monotonic_ns();
        /* Late echoes of the last pings still count. */
        uint64_t linger = rdps__clock_monotonic_ns() + (pc->fanout ? o->wait_ms : 0) * 1000000ull;
        while (rdps__clock_monotonic_ns() < linger && !ping_stop_requested)
            if (drain_echoes(pc, &cs, UINT32_MAX) == 0)
                ping_idle(pc, 10);
    }
    print_summary(pc, &cs, sent, (double)(send_end - start) / 1e9);
    if (sent < o->count && rc == TOOL_EXIT_OK && !ping_stop_requested) {
        tool_error(PROG, "timed out after %llu of %llu pings", (unsigned long long)sent,
                   (unsigned long long)o->count);
        rc = TOOL_EXIT_FAILED;
    }
    if (rc == TOOL_EXIT_OK && !o->flood && cs.echoes == 0) {
        tool_error(PROG, "no echo from %s", pc->target_text);
        rc = TOOL_EXIT_FAILED;
    }
    free(cs.echoes_per_seq);
    free(cs.rtt_ns);
    return rc;
}
