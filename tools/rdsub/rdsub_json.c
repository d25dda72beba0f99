/* SPDX-License-Identifier: BSD-2-Clause */
/* rdsub_json.c - rdsub's one-line JSON summary: counts, verification, reliable sessions. */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>

#include <rdps/rdps.h>

#include "rdsub.h"
#include "tool_json.h"

static const char *const history_state_names[] = {"merging", "live", "timed_out", "refused"};

static void json_source(struct tool_json *j, const rdps_source *s)
{
    char gid[INET6_ADDRSTRLEN] = "";
    if (s->has_gid)
        inet_ntop(AF_INET6, s->gid, gid, sizeof(gid));
    tool_json_str(j, "gid", gid);
    tool_json_u64(j, "qpn", s->qpn);
    tool_json_u64(j, "lid", s->lid);
}

static void json_session(struct tool_json *j, const char *key, const struct verify *v,
                         const struct verify_session *s)
{
    tool_json_object_begin(j, key);
    tool_json_u64(j, "session", s->session_id);
    json_source(j, &s->source);
    tool_json_u64(j, "messages", s->messages);
    tool_json_u64(j, "verified", s->distinct);
    tool_json_u64(j, "missing", verify_session_missing(v, s));
    tool_json_u64(j, "holes", verify_session_holes(s));
    tool_json_u64(j, "duplicates", s->duplicates);
    tool_json_u64(j, "corrupt", s->corrupt);
    tool_json_u64(j, "out_of_range", s->out_of_range);
    tool_json_u64(j, "first_index", s->first_index);
    tool_json_u64(j, "out_of_order", s->out_of_order);
    tool_json_u64(j, "loss_events", s->loss_events);
    tool_json_u64(j, "gap_events", s->gap_events);
    tool_json_u64(j, "lost_messages", s->lost_messages);
    if (v->count_loss) {
        tool_json_u64(j, "reported_lost", s->reported_lost);
        tool_json_u64(j, "unaccounted", verify_session_unaccounted(v, s));
        tool_json_u64(j, "before_start", verify_session_before_start(v, s));
        tool_json_u64(j, "bad_ordinal", s->bad_ordinal);
        tool_json_u64(j, "lost_delivered", s->lost_delivered);
        tool_json_u64(j, "lost_twice", s->lost_twice);
        tool_json_u64(j, "lost_out_of_range", s->lost_out_of_range);
    }
    tool_json_object_end(j);
}

/* Reliable sessions as the library tracks them (NAKs, repairs, losses, RTT per publisher). */
static void json_reliable_sessions(struct tool_json *j, const rdps_sub_t *sub)
{
    rdps_session_stats ss[16];
    int n = rdps_sub_sessions(sub, ss, 16);
    /* The array holds the newest 16: the total says whether there were more. */
    tool_json_u64(j, "reliable_sessions_total", n > 0 ? (uint64_t)n : 0);
    tool_json_array_begin(j, "reliable_sessions");
    for (int i = 0; i < n && i < 16; i++) {
        tool_json_object_begin(j, NULL);
        tool_json_u64(j, "session", ss[i].session_id);
        json_source(j, &ss[i].source);
        tool_json_u64(j, "delivered", ss[i].delivered);
        tool_json_u64(j, "naks_sent", ss[i].naks_sent);
        tool_json_u64(j, "naks_suppressed", ss[i].naks_suppressed);
        tool_json_u64(j, "recovered", ss[i].recovered);
        tool_json_u64(j, "out_of_order", ss[i].out_of_order);
        tool_json_u64(j, "duplicates", ss[i].duplicates);
        tool_json_u64(j, "lost", ss[i].lost);
        tool_json_u64(j, "loss_events", ss[i].loss_events);
        tool_json_u64(j, "status_sent", ss[i].status_sent);
        tool_json_u64(j, "rtt_us", ss[i].rtt_us);
        tool_json_u64(j, "repair_latency_p50_us", ss[i].repair_latency_p50_us);
        tool_json_u64(j, "repair_latency_p99_us", ss[i].repair_latency_p99_us);
        tool_json_double(j, "repair_latency_p50_rtts", ss[i].repair_rtts_p50_milli / 1000.0);
        tool_json_double(j, "repair_latency_p99_rtts", ss[i].repair_rtts_p99_milli / 1000.0);
        tool_json_object_end(j);
    }
    tool_json_array_end(j);
}

/*
 * Top-level figures keep their meaning for scripts: messages/bytes are
 * everything received; with --verify, verified/missing/holes are the
 * verified session's (verify_reported), corrupt/duplicates/out_of_range are
 * totals over all sessions, and "sessions" lists each one.
 */
void rdsub_print_json(const struct state *st, const rdps_sub_t *sub, const rdps_counters *c,
                      uint64_t wall_ns)
{
    struct tool_json j;
    double elapsed = st->messages > 1 ? (double)(st->last_ns - st->first_ns) / 1e9 : 0.0;
    const struct verify *v = &st->verify;
    const struct verify_session *best = st->opt->verify ? verify_reported(v) : NULL;
    struct verify_session sum;
    verify_totals(v, &sum);

    tool_json_init(&j, stdout);
    tool_json_object_begin(&j, NULL);
    tool_json_str(&j, "tool", "rdsub");
    tool_json_str(&j, "topic", st->opt->topic);
    tool_json_u64(&j, "topic_id", rdps_topic_id(st->opt->topic));
    tool_json_u64(&j, "messages", st->messages);
    /* --linger: messages beyond -c N (the run's end came after them) */
    tool_json_u64(
        &j, "extra",
        st->opt->count != 0 && st->messages > st->opt->count ? st->messages - st->opt->count : 0);
    tool_json_u64(&j, "bytes", st->bytes);
    tool_json_u64(&j, "fragments", st->fragments);
    tool_json_u64(&j, "corrupt", sum.corrupt);
    tool_json_u64(&j, "duplicates", sum.duplicates);
    tool_json_u64(&j, "out_of_range", sum.out_of_range);
    tool_json_u64(&j, "out_of_order", sum.out_of_order);
    tool_json_bool(&j, "reliable", st->opt->reliable);
    tool_json_u64(&j, "missing", st->opt->verify ? verify_session_missing(v, best) : 0);
    tool_json_u64(&j, "holes", verify_session_holes(best));
    tool_json_u64(&j, "verified", best != NULL ? best->distinct : 0);
    tool_json_u64(&j, "first_index", best != NULL ? best->first_index : 0);
    if (st->opt->verify) {
        tool_json_str(&j, "verdict", verify_verdict_name(verify_verdict(v)));
        tool_json_u64(&j, "expected", st->opt->count);
        tool_json_u64(&j, "untracked", v->untracked);
        if (best != NULL)
            json_session(&j, "verified_session", v, best);
        tool_json_array_begin(&j, "sessions");
        for (unsigned i = 0; i < v->nsessions; i++)
            json_session(&j, NULL, v, &v->sessions[i]);
        tool_json_array_end(&j);
    }
    tool_json_u64(&j, "gaps", c->gaps);
    tool_json_u64(&j, "gap_messages", c->gap_messages);
    tool_json_u64(&j, "lost", c->lost);
    tool_json_u64(&j, "lost_messages", c->lost_messages);
    if (st->opt->count_loss) {
        tool_json_u64(&j, "unaccounted", verify_session_unaccounted(v, best));
        tool_json_u64(&j, "before_start", verify_session_before_start(v, best));
    }
    tool_json_u64(&j, "evicted", c->reasm_evictions);
    tool_json_u64(&j, "timeouts", c->reasm_timeouts);
    tool_json_u64(&j, "bad_frames", c->bad_frames);
    /* Keyed: frames the authenticating layer dropped (forged, keyless, stale key, short, sealed
     * too far from our clock), and replays (also from another address) on their own. */
    tool_json_u64(&j, "auth_dropped",
                  c->auth_unsigned + c->auth_short + c->auth_unknown_key + c->auth_bad_tag +
                      c->auth_stale);
    tool_json_u64(&j, "auth_replayed", c->auth_replayed);
    tool_json_u64(&j, "auth_stale", c->auth_stale);
    tool_json_u64(&j, "dup_frames", c->duplicates);
    tool_json_u64(&j, "loss_dropped_rx", c->loss_dropped_rx);
    tool_json_u64(&j, "frames_received", c->frames_received);
    tool_json_u64(&j, "rq_empty", c->rq_empty);
    tool_json_u64(&j, "qp_recoveries", c->qp_recoveries);
    tool_json_u64(&j, "sends_lost", c->sends_lost);
    tool_json_u64(&j, "send_stalls", c->send_stalls);
    tool_json_u64(&j, "control_send_failures", c->control_send_failures);
    tool_json_u64(&j, "unknown_topic", c->unknown_topic);
    tool_json_u64(&j, "topic_collisions", c->topic_collisions);
    static const char *const modes[] = {"multicast", "unicast", "auto"};
    tool_json_str(&j, "transport", modes[st->opt->ctx.transport]);
    tool_json_u64(&j, "unicast_fallbacks", c->unicast_fallbacks);
    /* Reliable delivery (zero otherwise): lost above counts sequences given up. */
    tool_json_u64(&j, "loss_events", st->loss_events);
    tool_json_u64(&j, "naks_sent", c->naks_sent);
    tool_json_u64(&j, "status_sent", c->status_sent);
    tool_json_u64(&j, "recovered", c->recovered);
    tool_json_u64(&j, "parity_rebuilt", c->parity_rebuilt);
    tool_json_u64(&j, "repairs", c->recovered);
    tool_json_u64(&j, "frames_out_of_order", c->out_of_order);
    tool_json_u64(&j, "evictions", c->receiver_evictions);
    tool_json_u64(&j, "repair_latency_p50_us", c->repair_latency_p50_us);
    tool_json_u64(&j, "repair_latency_p99_us", c->repair_latency_p99_us);
    tool_json_double(&j, "repair_latency_p50_rtts", c->repair_rtts_p50_milli / 1000.0);
    tool_json_double(&j, "repair_latency_p99_rtts", c->repair_rtts_p99_milli / 1000.0);
    if (st->opt->reliable && sub != NULL)
        json_reliable_sessions(&j, sub);
    if (st->opt->history) {
        tool_json_str(&j, "history", history_state_names[st->history]);
        tool_json_double(
            &j, "history_live_s",
            st->history_live_ns != 0 ? (double)(st->history_live_ns - st->start_ns) / 1e9 : 0.0);
        tool_json_u64(&j, "history_live_messages", st->history_live_messages);
    }
    tool_json_double(&j, "elapsed_s", elapsed);
    tool_json_double(&j, "msgs_per_s", elapsed > 0 ? (double)(st->messages - 1) / elapsed : 0.0);
    tool_json_double(&j, "wall_s", (double)wall_ns / 1e9);
    tool_json_object_end(&j);
    tool_json_finish(&j);
}
