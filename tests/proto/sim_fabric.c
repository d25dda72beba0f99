/* SPDX-License-Identifier: BSD-2-Clause */
/* sim_fabric.c - the simulated fabric: the engines, the publisher's NIC and application, checking
 * receivers (model: sim_fabric.h; the network: sim_net.c). One file: every part reads the run. */
#include "sim_fabric.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdps/rdps.h>

#include "proto_test_util.h"
#include "rdps_fec.h"
#include "rdps_frame.h"
#include "rdps_reasm.h"
#include "rdps_seq.h"
#include "sim_net.h"

#define US        1000ull
#define MS        1000000ull
#define SESSION   0x5EED01u
#define TOPIC     0x7A11u
#define FIRST_SEQ 0xFFFFF000u /* every run crosses the 2^32 wrap early */
#define PUB_NUM   1u          /* test_source() numbers */
#define RX_NUM    1000u
#define RX_ID     0x100u /* receiver_id of receiver 0 */
#define TX_LEAD   32u    /* frames the NIC may have queued */
#define NO_WAKE   UINT64_MAX

enum ev_kind { EV_DOWN = 1, EV_UP, EV_RX_WAKE, EV_PUB_WAKE, EV_STALL_END, EV_FORGE };
#define FORGER_NUM       9000u /* test_source() number of the forger's first host */
#define WHO(kind, index) ((uint32_t)(kind) << 24 | (index))

struct rx {
    struct rdps_reasm r;
    struct sim *sim;
    uint32_t index;
    struct rdps_source src;
    struct sim_link down, up;
    uint64_t wake_at;
    uint64_t next_id;   /* next message to account for */
    uint32_t accounted; /* next sequence to account for: all before were delivered or lost */
    bool started, told, stalled, done;
    bool absent; /* a late joiner before its join: the fabric does not reach it */
    uint64_t delivered, lost_msgs, lost_seqs, loss_events;
};

struct sim {
    struct sim_config cfg;
    struct sim_result *res;
    struct sim_net net;
    struct sim_thresholds down, up;
    uint64_t now, t0;
    /* Publisher, its NIC and its application. */
    struct rdps_rel_pub pub;
    uint8_t *ring;
    struct rdps_source pub_src;
    uint64_t nic_free, pub_wake, lead_ns;
    uint64_t *txq; /* departure time of each ring frame not yet reported done */
    uint32_t txq_head, txq_count, txq_cap;
    uint64_t next_msg, last_append;
    uint32_t next_seq, end_seq, payload;
    uint32_t *first_off;         /* per message: its first sequence - FIRST_SEQ */
    uint64_t *append_at;         /* per message: when it was appended */
    uint64_t app_start;          /* app_rate: the first append */
    bool joined;                 /* the late joiner was announced */
    bool all_appended, returned; /* returned: the stalled receiver polls again */
    bool blocked;                /* the application holds a message the engine refused */
    enum sim_wait block_cause;   /* RING, CONNECTING or STATUS_UNSENT for any window refusal */
    uint32_t need_frames;        /* ... its frame count */
    enum sim_wait wait;          /* what the run waits for since the last event */
    uint8_t *common;             /* bitmap by sequence - FIRST_SEQ: dropped before the fan-out */
    uint32_t common_frames;      /* bits in it */
    uint32_t blackhole;          /* SIM_FAULT_BLACKHOLE: offset of the sequence never delivered */
    bool fault_done;
    uint8_t *patterns; /* 256 pattern variants of pattern_len bytes */
    uint32_t pattern_len, max_len;
    struct rx *rx;
    uint32_t done;
};

static void fail(struct sim *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct sim *s, const char *fmt, ...)
{
    if (s->res->failure[0] != '\0')
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->res->failure, sizeof(s->res->failure), fmt, ap);
    va_end(ap);
}

/* ---- messages ------------------------------------------------------------------ */

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Message `id`'s length: 1..3 payloads, one in 256 up to (or exactly) large_max. */
static uint32_t msg_len(const struct sim *s, uint64_t id)
{
    if (s->cfg.fixed_len != 0)
        return s->cfg.fixed_len;
    uint64_t h = mix(s->cfg.seed * 0x9E3779B97F4A7C15ull + id);
    uint32_t r = (uint32_t)(h >> 32);
    if (s->cfg.large_every != 0 ? id % s->cfg.large_every == 0 : (h & 255) == 0)
        return s->cfg.large_exact ? s->cfg.large_max : 1 + r % s->cfg.large_max;
    if ((h & 3) == 0)
        return 1 + r % (3 * s->payload);
    return 1 + r % (s->cfg.small_max != 0 ? s->cfg.small_max : s->payload);
}

static uint32_t msg_frags(const struct sim *s, uint32_t len)
{
    return (len + s->payload - 1) / s->payload;
}

/*
 * pattern_byte(session, id, k) is a function of k plus one of (session, id): messages whose first
 * bytes agree share every byte, so 256 variants serve every id (checked at setup). Up to 1 MiB
 * they are built at setup, once per process for the longest message seen (never freed); longer
 * ones when a message first needs them (a run of 16 MiB messages uses a few).
 */
#define PATTERN_EAGER_MAX (1u << 20)

static uint8_t *pattern_cache;
static uint32_t pattern_cache_len;
static uint8_t *pattern_lazy[256];
static uint32_t pattern_lazy_len;

static const uint8_t *msg_pattern(const struct sim *s, uint64_t id)
{
    unsigned v = pattern_byte(SESSION, id, 0);
    if (s->patterns != NULL)
        return s->patterns + (size_t)v * s->pattern_len;
    if (pattern_lazy[v] == NULL) {
        pattern_lazy[v] = malloc(pattern_lazy_len);
        if (pattern_lazy[v] == NULL)
            abort();
        pattern_fill(pattern_lazy[v], pattern_lazy_len, SESSION, id);
    }
    return pattern_lazy[v];
}

static int patterns_init(struct sim *s)
{
    uint32_t len = s->cfg.large_max > 3 * s->payload ? s->cfg.large_max : 3 * s->payload;
    s->max_len = len;
    if (len > PATTERN_EAGER_MAX) {
        if (len != pattern_lazy_len) {
            for (unsigned v = 0; v < 256; v++) {
                free(pattern_lazy[v]);
                pattern_lazy[v] = NULL;
            }
            pattern_lazy_len = len;
        }
        s->patterns = NULL;
        s->pattern_len = len;
        return 0;
    }
    if (len > pattern_cache_len) {
        free(pattern_cache);
        pattern_cache_len = 0;
        pattern_cache = malloc((size_t)256 * len);
        if (pattern_cache == NULL)
            return -1;
        for (uint64_t id = 0; id < 256; id++)
            pattern_fill(pattern_cache + (size_t)pattern_byte(SESSION, id, 0) * len, len, SESSION,
                         id);
        pattern_cache_len = len;
    }
    s->patterns = pattern_cache;
    s->pattern_len = pattern_cache_len;
    for (uint64_t id = 256; id < 1024; id += 7)
        if (!pattern_check(msg_pattern(s, id), len < 4096 ? len : 4096, SESSION, id))
            return -1;
    return 0;
}

/* ---- receivers: accounting ------------------------------------------------------------------- */

static void rx_check_done(struct sim *s, struct rx *x)
{
    if (!x->done && s->all_appended && x->accounted == s->end_seq) {
        x->done = true;
        s->done++;
    }
}

/* The message whose first sequence is `seq`, or the first one after it. */
static uint64_t msg_at_or_after(const struct sim *s, uint32_t seq)
{
    uint32_t off = seq - FIRST_SEQ;
    uint64_t lo = 0, hi = s->next_msg;
    while (lo < hi) {
        uint64_t mid = (lo + hi) / 2;
        if (s->first_off[mid] < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The first delivery or loss of a receiver sets where it joined. */
static void rx_start(struct sim *s, struct rx *x, uint32_t seq)
{
    x->started = true;
    x->accounted = seq;
    x->next_id = msg_at_or_after(s, seq);
    if (seq != FIRST_SEQ) {
        s->res->late_joins++;
        s->res->skipped_msgs += x->next_id;
    }
}

static void check_delivery(struct sim *s, struct rx *x, const uint8_t *msg, uint32_t len,
                           const struct rdps_reasm_msg_info *info)
{
    /* The id is the ordinal (the first is 0); unbatched frames carry it as their timestamp too. */
    uint64_t id = info->ordinal;
    bool bad_frame = id < s->next_msg && (info->first_seq != FIRST_SEQ + s->first_off[id] ||
                                          (!s->cfg.batching && info->timestamp_ns != id));
    if (id >= s->next_msg || id != x->next_id || bad_frame || info->session_id != SESSION ||
        info->topic_id != TOPIC) {
        s->res->bad_order++;
        fail(s, "receiver %u: got message %llu at seq %u, expected %llu at seq %u", x->index,
             (unsigned long long)id, info->first_seq, (unsigned long long)x->next_id, x->accounted);
        if (id >= s->next_msg)
            return;
        x->next_id = id; /* resynchronise: the run goes on and counts every fault */
        x->accounted = FIRST_SEQ + s->first_off[id];
    }
    uint32_t want = msg_len(s, id), frags = msg_frags(s, want);
    if (len != want || info->msg_len != want || info->frag_count != frags ||
        memcmp(msg, msg_pattern(s, id), len) != 0) {
        s->res->bad_content++;
        fail(s, "receiver %u: message %llu: %u bytes in %u fragments, content %s", x->index,
             (unsigned long long)id, len, info->frag_count,
             len == want && memcmp(msg, msg_pattern(s, id), len) == 0 ? "ok" : "wrong");
    }
    x->delivered++;
    x->accounted = FIRST_SEQ + s->first_off[id] + frags; /* batched: several share one frame */
    x->next_id = id + 1;
    rx_check_done(s, x);
}

static void rx_deliver(void *user, const uint8_t *msg, uint32_t len,
                       const struct rdps_reasm_msg_info *info)
{
    struct rx *x = user;
    struct sim *s = x->sim;
    if (!x->started)
        rx_start(s, x, info->first_seq);
    if (x->index == 0 && !s->fault_done && x->delivered == 10) {
        if (s->cfg.fault == SIM_FAULT_SKIP_CHECK) {
            s->fault_done = true;
            return;
        }
        if (s->cfg.fault == SIM_FAULT_CHECK_TWICE) {
            s->fault_done = true;
            check_delivery(s, x, msg, len, info);
        }
    }
    check_delivery(s, x, msg, len, info);
    uint64_t id = info->ordinal;
    if (s->cfg.join_rx < s->cfg.receivers && id < s->next_msg) {
        if (x->index == 0) {
            uint64_t *worst =
                id < s->cfg.join_after ? &s->res->latency_before_ns : &s->res->latency_after_ns;
            if (s->now - s->append_at[id] > *worst)
                *worst = s->now - s->append_at[id];
        }
        if (x->index == s->cfg.join_rx && id == s->cfg.join_after && s->joined)
            s->res->caught_up_ns = s->now - s->t0 - s->res->join_ns;
    }
}

static void rx_loss(void *user, const struct rdps_reasm_loss *loss)
{
    struct rx *x = user;
    struct sim *s = x->sim;
    if (!x->started)
        rx_start(s, x, loss->first_seq);
    if (loss->first_seq != x->accounted || loss->count == 0 || loss->session_id != SESSION ||
        rdps__seq_gt(loss->first_seq + loss->count, s->next_seq)) {
        s->res->bad_loss++;
        fail(s, "receiver %u: loss [%u, +%u) reason %s, expected it to start at %u", x->index,
             loss->first_seq, loss->count,
             rdps_event_reason_name(
                 &(rdps_event){.type = RDPS_EVENT_LOSS, .reason = (int)loss->reason}),
             x->accounted);
    }
    x->loss_events++;
    x->lost_seqs += loss->count;
    x->accounted = loss->first_seq + loss->count;
    /* Messages that begin in the run are lost (one that ends in it began in an earlier run). */
    uint64_t first_lost = x->next_id;
    while (x->next_id < s->next_msg &&
           rdps__seq_lt(FIRST_SEQ + s->first_off[x->next_id], x->accounted)) {
        x->next_id++;
        x->lost_msgs++;
    }
    /* The event names exactly those messages (the ordinal is the id). */
    uint64_t lost_now = x->next_id - first_lost;
    if (loss->msg_count != lost_now || (lost_now > 0 && loss->msg_first != (uint32_t)first_lost)) {
        s->res->bad_loss++;
        fail(s, "receiver %u: loss [%u, +%u) names messages [%u, +%u), expected [%llu, +%llu)",
             x->index, loss->first_seq, loss->count, loss->msg_first, loss->msg_count,
             (unsigned long long)first_lost, (unsigned long long)lost_now);
    }
    rx_check_done(s, x);
}

/* ---- receivers: I/O ------------------------------------------------------------------------- */

static void rx_send(void *user, const struct rdps_source *dest, uint32_t session_id,
                    const uint8_t *frame, size_t len)
{
    struct rx *x = user;
    struct sim *s = x->sim;
    if (!rdps__source_equal(dest, &s->pub_src) || session_id != SESSION)
        fail(s, "receiver %u: control frame to a stranger", x->index);
    uint32_t b = sim_buf_new(&s->net, frame, (uint32_t)len);
    sim_link_send(&s->net, &s->up, &x->up, WHO(EV_UP, x->index), b, s->now);
    sim_buf_put(&s->net, b);
}

static void rx_schedule(struct sim *s, struct rx *x, uint64_t deadline)
{
    if (deadline <= s->now) {
        s->res->zero_deadlines++;
        deadline = s->now + 1;
    }
    if (deadline < x->wake_at) {
        x->wake_at = deadline;
        sim_push(&s->net, deadline, WHO(EV_RX_WAKE, x->index), 0);
    }
}

static void rx_frame(struct sim *s, struct rx *x, uint32_t b)
{
    if (x->stalled)
        return; /* not polling: its receive queue overflows */
    uint32_t len = s->net.lens[b];
    const uint8_t *frame = sim_buf_data(&s->net, b);
    uint8_t bad[2048];
    if (s->cfg.fault == SIM_FAULT_CORRUPT && x->index == 0 && !s->fault_done &&
        frame[RDPS_FRAME_OFF_TYPE] == RDPS_FRAME_DATA && len > RDPS_FRAME_HEADER_LEN &&
        len <= 2048) {
        memcpy(bad, frame, len);
        bad[RDPS_FRAME_HEADER_LEN] ^= 0x5A; /* the payload */
        frame = bad;
        s->fault_done = true;
    }
    int rc = rdps__reasm_input(&x->r, &s->pub_src, frame, len, s->now);
    if (rc < 0) {
        struct rdps_frame_view v;
        enum rdps_frame_reject why = rdps__frame_decode(frame, len, &x->r.cfg.limits, &v);
        fail(s, "receiver %u: frame of type %u, %u bytes refused (%d: %s)", x->index,
             frame[RDPS_FRAME_OFF_TYPE], len, rc, rdps__frame_reject_name(why));
    }
    if (!x->told) {
        uint32_t n = s->cfg.receivers_told ? s->cfg.receivers_told : s->cfg.receivers;
        x->told = rdps__reasm_rel_set_receivers(&x->r, &s->pub_src, SESSION, n) == 0;
    }
    rx_schedule(s, x, rdps__reasm_rel_poll(&x->r, s->now, s->now));
}

static void rx_wake(struct sim *s, struct rx *x)
{
    x->wake_at = NO_WAKE;
    if (x->stalled)
        return;
    uint64_t expire = rdps__reasm_expire(&x->r, s->now);
    uint64_t poll = rdps__reasm_rel_poll(&x->r, s->now, s->now);
    rx_schedule(s, x, poll < expire ? poll : expire);
}

/* ---- publisher ------------------------------------------------------------------------------- */

static uint64_t wire_ns(const struct sim *s, uint32_t len)
{
    return (uint64_t)((double)len * 8.0 / s->cfg.link_gbps) + 1;
}

static uint32_t rx_of(const struct sim *s, const struct rdps_source *src)
{
    uint64_t n = test_source_number(src) - RX_NUM;
    return n < s->cfg.receivers ? (uint32_t)n : UINT32_MAX;
}

static void pub_event(void *user, const struct rdps_rel_pub_event *ev)
{
    struct sim *s = user;
    struct sim_result *res = s->res;
    switch (ev->kind) {
    case RDPS_REL_PUB_EV_EVICTED:
        res->evictions++;
        if (ev->reason == RDPS_EVICT_STALLED)
            res->evictions_stalled++;
        if (res->evicted_rx == UINT32_MAX) {
            res->evicted_rx = rx_of(s, ev->source);
            res->evict_ns = s->now - s->t0;
            res->appended_at_evict = s->next_msg;
        }
        break;
    case RDPS_REL_PUB_EV_RESUMED:
        res->resumes++;
        break;
    default:
        res->timeouts++;
        break;
    }
}

/* One action onto the wire: after the NIC's queue, copied once, fanned out (or, unicast fan-out,
 * one copy per receiver, each on the link in turn: dep is the last copy's departure). */
static void transmit(struct sim *s, const struct rdps_rel_pub_action *a)
{
    bool copies = s->cfg.unicast_fanout && !a->unicast;
    uint32_t n = copies ? s->cfg.receivers : 1;
    uint64_t first = (s->nic_free > s->now ? s->nic_free : s->now) + wire_ns(s, a->len);
    uint64_t dep = first + (uint64_t)(n - 1) * wire_ns(s, a->len);
    s->nic_free = dep;
    s->res->wire_bytes += (uint64_t)a->len * n;
    s->res->wire_frames += n;
    if (a->kind == RDPS_REL_PUB_POST_DATA)
        s->res->data_bytes += (uint64_t)a->len * n;
    else if (a->kind == RDPS_REL_PUB_POST_REPAIR || a->kind == RDPS_REL_PUB_POST_PARITY)
        s->res->repair_bytes += (uint64_t)a->len * n;
    if (a->in_ring) {
        if (s->txq_count == s->txq_cap)
            abort(); /* the engine hands out at most max_inflight */
        s->txq[(s->txq_head + s->txq_count++) % s->txq_cap] = dep;
    }
    s->res->frames_posted++;
    uint32_t off = a->seq - FIRST_SEQ;
    if (a->kind != RDPS_REL_PUB_POST_HEARTBEAT && s->cfg.fault == SIM_FAULT_BLACKHOLE &&
        off == s->blackhole)
        return;
    if (a->kind == RDPS_REL_PUB_POST_DATA && s->cfg.common_drop > 0 &&
        sim_draw(&s->net) < sim_threshold(s->cfg.common_drop)) {
        s->common[off / 8] |= (uint8_t)(1u << (off % 8));
        s->res->common_losses++;
        return;
    }
    if (a->unicast && s->cfg.forge_interval_ns != 0 &&
        test_source_number(&a->dest) - FORGER_NUM < s->cfg.forge_hosts) {
        s->res->forger_repair_bytes += a->len; /* it took the link; the forger drops it */
        return;
    }
    uint32_t b = sim_buf_new(&s->net, a->frame, a->len);
    if (a->unicast) {
        uint32_t k = rx_of(s, &a->dest);
        if (k == UINT32_MAX)
            fail(s, "unicast action to an unknown receiver");
        else
            sim_link_send(&s->net, &s->down, &s->rx[k].down, WHO(EV_DOWN, k), b, dep);
    } else {
        for (uint32_t k = 0; k < s->cfg.receivers; k++)
            if (!s->rx[k].absent)
                sim_link_send(&s->net, &s->down, &s->rx[k].down, WHO(EV_DOWN, k), b,
                              copies ? first + (uint64_t)k * wire_ns(s, a->len) : dep);
    }
    sim_buf_put(&s->net, b);
}

/* When message id is due (app_rate), 0 before the first append. */
static uint64_t app_due(const struct sim *s, uint64_t id)
{
    if (s->cfg.app_rate == 0 || s->app_start == 0)
        return 0;
    return s->app_start + id * 1000000000ull / s->cfg.app_rate;
}

/* The late joiner is announced: it hears the fabric from now on. */
static void late_join(struct sim *s)
{
    struct rx *x = &s->rx[s->cfg.join_rx];
    s->joined = true;
    x->absent = false;
    s->res->join_ns = s->now - s->t0;
    if (rdps__rel_pub_expect_receiver(&s->pub, &x->src, RX_ID + x->index, 0, s->now) < 0)
        fail(s, "publisher refused the late joiner");
}

static void app_append(struct sim *s)
{
    while (s->next_msg < s->cfg.messages) {
        uint64_t id = s->next_msg;
        if (s->cfg.join_rx < s->cfg.receivers && !s->joined && id == s->cfg.join_after)
            late_join(s);
        uint64_t due = app_due(s, id);
        if (due > s->now)
            break; /* not offered yet */
        uint32_t len = msg_len(s, id);
        const struct rdps_rel_pub_counters *pc = rdps__rel_pub_counters(&s->pub);
        uint64_t ring = pc->backpressure_ring, connecting = pc->backpressure_connecting;
        int n = rdps__rel_pub_append(&s->pub, msg_pattern(s, id), len, s->now, id);
        if (n == RDPS_EAGAIN) {
            s->blocked = true;
            s->need_frames = msg_frags(s, len);
            s->block_cause = pc->backpressure_ring != ring               ? SIM_WAIT_RING
                             : pc->backpressure_connecting != connecting ? SIM_WAIT_CONNECTING
                                                                         : SIM_WAIT_STATUS_UNSENT;
            if (s->joined && s->block_cause == SIM_WAIT_CONNECTING)
                s->res->held_connecting_after_join++;
            else if (s->joined)
                s->res->refused_after_join++;
            break;
        }
        s->blocked = false;
        if (n < 0 || (uint32_t)n != msg_frags(s, len)) {
            fail(s, "append of message %llu (%u bytes): %d", (unsigned long long)id, len, n);
            s->cfg.messages = id; /* end the run with what was appended */
            break;
        }
        /* Its first frame: the open one when it joined it (the engine says). */
        s->first_off[id] = rdps__rel_pub_last_seq(&s->pub) - FIRST_SEQ;
        s->append_at[id] = s->now;
        if (s->app_start == 0)
            s->app_start = s->now;
        uint64_t *lag = s->joined ? &s->res->app_lag_after_ns : &s->res->app_lag_before_ns;
        if (due != 0 && s->now - due > *lag)
            *lag = s->now - due;
        s->next_seq = FIRST_SEQ + s->first_off[id] + (uint32_t)n;
        s->next_msg++;
        /* Throughput while a stalled receiver is away, and after it is back. */
        uint64_t *gap = s->returned ? &s->res->max_append_gap_back_ns : &s->res->max_append_gap_ns;
        if (s->last_append != 0 && s->now - s->last_append > *gap)
            *gap = s->now - s->last_append;
        s->last_append = s->now;
        if (s->next_msg == 1)
            s->res->first_append_ns = s->now - s->t0;
        if (s->cfg.stall_rx < s->cfg.receivers && s->next_msg == s->cfg.stall_after) {
            s->rx[s->cfg.stall_rx].stalled = true;
            s->res->stall_ns = s->now - s->t0;
            s->res->appended_at_stall = s->next_msg;
            sim_push(&s->net, s->now + s->cfg.stall_ns, WHO(EV_STALL_END, s->cfg.stall_rx), 0);
        }
    }
    if (s->next_msg == s->cfg.messages && !s->all_appended) {
        s->all_appended = true;
        s->res->all_appended_ns = s->now - s->t0;
        s->end_seq = s->next_seq;
        for (uint32_t k = 0; k < s->cfg.receivers; k++)
            rx_check_done(s, &s->rx[k]);
    }
}

/* Completions, timers, the application, then the engine's actions while the NIC has room. */
static void pub_step(struct sim *s)
{
    uint32_t done = 0;
    while (s->txq_count > 0 && s->txq[s->txq_head] <= s->now) {
        s->txq_head = (s->txq_head + 1) % s->txq_cap;
        s->txq_count--;
        done++;
    }
    if (done > 0)
        rdps__rel_pub_send_done(&s->pub, done);
    rdps__rel_pub_tick(&s->pub, s->now);
    app_append(s);
    struct rdps_rel_pub_action a;
    uint64_t wake;
    for (;;) {
        if (s->nic_free > s->now + s->lead_ns) {
            wake = s->nic_free - s->lead_ns / 2; /* pull again when half the queue has gone */
            break;
        }
        if (rdps__rel_pub_next_action(&s->pub, s->now, s->now, &a) != 1) {
            wake = rdps__rel_pub_tick(&s->pub, s->now);
            if (wake <= s->now) {
                s->res->zero_deadlines++;
                wake = s->now + 1;
            }
            break;
        }
        transmit(s, &a);
    }
    if (s->txq_count > 0 && s->nic_free < wake)
        wake = s->nic_free; /* completions free ring space and in-flight slots */
    uint64_t due = app_due(s, s->next_msg);
    if (s->next_msg < s->cfg.messages && due > s->now && due < wake)
        wake = due; /* the application's next message */
    if (wake < s->pub_wake) {
        s->pub_wake = wake;
        sim_push(&s->net, wake, WHO(EV_PUB_WAKE, 0), 0);
    }
}

/* A NAK or STATUS arrives from receiver x. */
static void pub_frame(struct sim *s, struct rx *x, uint32_t b)
{
    struct rdps_frame_view v;
    if (rdps__frame_decode(sim_buf_data(&s->net, b), s->net.lens[b], NULL, &v) != RDPS_FRAME_OK) {
        fail(s, "publisher: undecodable control frame from receiver %u", x->index);
        return;
    }
    if (v.hdr.type == RDPS_FRAME_NAK && s->res->common_losses > 0) {
        for (unsigned i = 0; i < v.nak_range_count; i++) {
            struct rdps_seq_range rg = rdps__frame_nak_range(&v, i);
            for (uint32_t k = 0; k < rg.count; k++) {
                uint32_t off = rg.start + k - FIRST_SEQ;
                if (off < s->common_frames && (s->common[off / 8] >> (off % 8) & 1))
                    s->res->common_naks++;
            }
        }
    }
    rdps__rel_pub_on_frame(&s->pub, &x->src, &v, s->now, s->now);
    pub_step(s);
}

/* The forger's frames of one interval (see Model), then the next interval's event. */
static void forge(struct sim *s)
{
    uint32_t trail = rdps__rel_pub_oldest_seq(&s->pub), post = rdps__rel_pub_next_seq(&s->pub);
    uint32_t count = post - trail > 1024 ? 1024 : post - trail;
    for (uint32_t h = 0; h < s->cfg.forge_hosts; h++) {
        for (uint32_t q = 0; q < 2; q++) {
            struct rdps_source src = test_source(FORGER_NUM + h);
            src.qpn = 100 + q;
            uint8_t buf[RDPS_FRAME_STATUS_LEN + RDPS_FRAME_NAK_OFF_RANGES];
            struct rdps_seq_range r = {trail, count};
            int len = count == 0 ? 0
                                 : rdps__frame_encode_nak(buf, sizeof(buf), SESSION, TOPIC, 7 + q,
                                                          &r, 1, s->now);
            struct rdps_frame_view v;
            if (len > 0 && rdps__frame_decode(buf, (size_t)len, NULL, &v) == RDPS_FRAME_OK) {
                s->res->forged_bytes += (uint64_t)len;
                rdps__rel_pub_on_frame(&s->pub, &src, &v, s->now, s->now);
            }
            if (!s->cfg.forge_status)
                continue;
            len = rdps__frame_encode_status(buf, sizeof(buf), SESSION, TOPIC, 7 + q, trail, 0,
                                            s->now);
            if (len > 0 && rdps__frame_decode(buf, (size_t)len, NULL, &v) == RDPS_FRAME_OK) {
                s->res->forged_bytes += (uint64_t)len;
                rdps__rel_pub_on_frame(&s->pub, &src, &v, s->now, s->now);
            }
        }
    }
    pub_step(s);
    sim_push(&s->net, s->now + s->cfg.forge_interval_ns, WHO(EV_FORGE, 0), 0);
}

/* ---- the stall profile ---------------------------------------------------------------------- */

/* What the run waits for now (enum sim_wait); a window wait is read from the receiver that
 * defines the flow-control limit (the lowest consumed + window the publisher knows). */
static enum sim_wait classify(struct sim *s)
{
    if (s->nic_free > s->now)
        return SIM_WAIT_SENDING; /* the link is busy: nothing is waited for */
    if (s->all_appended)
        return SIM_WAIT_TAIL;
    if (s->next_msg == 0)
        return SIM_WAIT_START;
    if (!s->blocked)
        return SIM_WAIT_OTHER;
    if (s->block_cause != SIM_WAIT_STATUS_UNSENT)
        return s->block_cause;
    struct rx *lim = NULL;
    struct rdps_rel_pub_receiver_info info, best = {0};
    for (uint32_t k = 0; k < s->cfg.receivers; k++) {
        struct rx *x = &s->rx[k];
        if (rdps__rel_pub_receiver_info(&s->pub, &x->src, RX_ID + k, &info) < 0 ||
            info.state != RDPS_REL_RX_ACTIVE)
            continue;
        if (lim == NULL ||
            rdps__seq_lt(info.consumed_seq + info.window, best.consumed_seq + best.window)) {
            lim = x;
            best = info;
        }
    }
    if (lim == NULL)
        return SIM_WAIT_DATA_FLIGHT;
    uint64_t rtt = lim->down.delay_ns + lim->up.delay_ns + s->lead_ns + 4 * US;
    return sim_wait_window(&s->pub, &lim->r, &s->pub_src, SESSION, best.consumed_seq, best.window,
                           s->next_seq + s->need_frames, s->now, rtt);
}

void sim_print_profile(const char *label, const struct sim_config *cfg,
                       const struct sim_result *res)
{
    char line[512];
    int at = 0;
    for (int w = 0; w < SIM_WAIT_COUNT && at < (int)sizeof(line); w++)
        if (res->wait_ns[w] != 0)
            at +=
                snprintf(line + at, sizeof(line) - (size_t)at, " %s=%.1f%%", sim_wait_names[w],
                         100.0 * (double)res->wait_ns[w] / (double)(res->sim_ns ? res->sim_ns : 1));
    printf("sim profile %-8s N=%-2u %-7s seed=%llu sim_ms=%.2f nak_seqs_suppressed=%llu "
           "repair_queue_full=%llu:%s\n",
           label, cfg->receivers, cfg->down.name, (unsigned long long)cfg->seed,
           (double)res->sim_ns / 1e6, (unsigned long long)res->pub_nak_seqs_suppressed,
           (unsigned long long)res->pub_repair_queue_full, line);
    fflush(stdout);
}

/* ---- setup and the run ----------------------------------------------------------------------- */

void sim_config_default(struct sim_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->receivers = 1;
    cfg->messages = 1000;
    cfg->seed = 1;
    cfg->down = cfg->up = sim_models[0];
    cfg->flow = RDPS_REL_FLOW_MIN;
    cfg->ring_bytes = RDPS_REL_PUB_DEFAULT_RING;
    cfg->max_datagram = 1024;
    cfg->large_max = 64u * 1024u;
    cfg->stall_rx = UINT32_MAX;
    cfg->link_gbps = 10.0;
    cfg->time_limit_ns = 60000 * MS;
    cfg->join_rx = UINT32_MAX;
}

static int rx_init(struct sim *s, struct rx *x, uint32_t k)
{
    x->sim = s;
    x->index = k;
    x->src = test_source(RX_NUM + k);
    x->wake_at = NO_WAKE;
    x->down.delay_ns = 5 * US + sim_draw_upto(&s->net, 45 * US);
    x->up.delay_ns = 5 * US + sim_draw_upto(&s->net, 45 * US);
    /*
     * As pubsub/receive.c configures the library's reassembler, with tables for one publisher and
     * an arena of 17 MiB instead of 64 (two of the largest messages, if more): the 1024 parked
     * messages the window allows (the partial quota) need 1024 chunks of 16 KiB, and the arena
     * has 1088. The window is the library's.
     */
    struct rdps_reasm_config rc;
    rdps__reasm_config_default(&rc);
    rc.max_sessions = 4;
    rc.max_partials = 2048;
    rc.max_partials_per_source = 1024;
    rc.reasm_cap_bytes = s->max_len > (8u << 20) ? 2 * (size_t)s->max_len + (1u << 20) : 17u << 20;
    rc.max_bytes_per_source = rc.reasm_cap_bytes;
    rc.chunk_bytes = 16u * 1024u;
    rc.partial_timeout_ns = 2000 * MS;
    rc.max_gap_ranges = 256;
    rc.hash_seed = mix(s->cfg.seed + k);
    rc.limits.max_msg_len = s->max_len;
    rc.deliver = rx_deliver;
    rc.user = x;
    rc.rel.enabled = true;
    rc.rel.receiver_id = RX_ID + k;
    rc.rel.rng_seed = mix(s->cfg.seed * 31 + k);
    rc.rel.nak_retry_min_ns = s->cfg.nak_retry_min_ns ? s->cfg.nak_retry_min_ns : 4 * MS;
    rc.rel.nak_retry_alone_ns = 50 * US;
    rc.rel.nak_retry_min_rtts = 2;
    rc.rel.nak_max_tries = 200;
    rc.rel.nak_retry_max_ns = 25 * MS;
    rc.rel.reorder_holdoff_ns = rc.reorder_allowance_ns;
    if (s->cfg.nak_max_tries != 0)
        rc.rel.nak_max_tries = s->cfg.nak_max_tries;
    rc.rel.send = rx_send;
    rc.rel.on_loss = rx_loss;
    rc.rel.from_oldest = k == s->cfg.join_rx && s->cfg.join_oldest;
    if (s->cfg.parity_k != 0) { /* records for the window: 2048 datagrams, 4096 at most */
        rc.rel.parity_k_max = RDPS_FEC_MAX_K;
        rc.rel.parity_blocks_per_stream = 2048 / s->cfg.parity_k;
        rc.rel.parity_blocks = rc.rel.parity_blocks_per_stream;
        rc.rel.parity_max_frame = s->cfg.max_datagram;
    }
    return rdps__reasm_init(&x->r, &rc);
}

static int sim_setup(struct sim *s)
{
    const struct sim_config *c = &s->cfg;
    sim_net_init(&s->net, mix(c->seed), c->max_datagram);
    s->payload = c->max_datagram - RDPS_FRAME_HEADER_LEN -
                 (c->parity_k != 0 ? RDPS_FRAME_PARITY_OVERHEAD : 0); /* the publisher's */
    sim_thresholds_of(&s->down, &c->down);
    sim_thresholds_of(&s->up, &c->up);
    s->pub_src = test_source(PUB_NUM);
    s->lead_ns = TX_LEAD * wire_ns(s, c->max_datagram);
    s->pub_wake = NO_WAKE;
    s->t0 = s->now = 1000 * MS;
    s->next_seq = FIRST_SEQ;
    /* Every sequence the run will use; the blackhole fault takes one in the middle. */
    uint64_t frames = 0;
    for (uint64_t id = 0; id < c->messages; id++) {
        if (id == c->messages / 2)
            s->blackhole = (uint32_t)frames;
        frames += msg_frags(s, msg_len(s, id));
    }
    if (frames >= 1u << 30) {
        fail(s, "setup: %llu frames: too many", (unsigned long long)frames);
        return -1;
    }
    s->common_frames = (uint32_t)frames;
    s->first_off = malloc((c->messages + 1) * sizeof(*s->first_off));
    s->append_at = malloc((c->messages + 1) * sizeof(*s->append_at));
    s->common = calloc(s->common_frames / 8 + 1, 1);
    s->rx = calloc(c->receivers, sizeof(*s->rx));
    if (patterns_init(s) < 0 || s->first_off == NULL || s->append_at == NULL || s->common == NULL ||
        s->rx == NULL) {
        fail(s, "setup: out of memory or pattern_byte no longer shifts by the id");
        return -1;
    }
    struct rdps_rel_pub_config pc;
    rdps__rel_pub_config_default(&pc);
    pc.session_id = SESSION;
    pc.topic_id = TOPIC;
    pc.first_seq = FIRST_SEQ;
    pc.max_datagram = c->max_datagram;
    pc.max_msg_len = s->max_len;
    pc.ring_bytes = c->ring_bytes;
    pc.flow = c->flow;
    pc.parity_k = c->parity_k;
    pc.parity_proactive = c->parity_proactive;
    pc.batching = c->batching;
    pc.hash_seed = mix(c->seed ^ 0xABCDEF);
    if (c->repair_linger_ns != 0)
        pc.repair_linger_ns = c->repair_linger_ns;
    pc.on_event = pub_event;
    pc.user = s;
    s->ring = malloc(c->ring_bytes);
    pc.ring_mem = s->ring;
    s->txq_cap = pc.max_inflight;
    s->txq = malloc(s->txq_cap * sizeof(*s->txq));
    if (s->ring == NULL || s->txq == NULL || rdps__rel_pub_init(&s->pub, &pc) < 0) {
        fail(s, "setup: publisher: %s", rdps_last_error_message());
        return -1;
    }
    /* As the library's glue does for a topic without a group: repairs to their askers only. */
    rdps__rel_pub_set_fanout(&s->pub, c->unicast_fanout);
    for (uint32_t k = 0; k < c->receivers; k++) {
        if (rx_init(s, &s->rx[k], k) < 0) {
            fail(s, "setup: receiver %u: %s", k, rdps_last_error_message());
            return -1;
        }
        if (k == c->join_rx) { /* a late joiner: absent until announced */
            s->rx[k].absent = true;
            continue;
        }
        /* Discovery announced it: the publisher holds data until its first STATUS. */
        if (rdps__rel_pub_expect_receiver(&s->pub, &s->rx[k].src, RX_ID + k, 0, s->now) < 0) {
            fail(s, "setup: publisher refused receiver %u", k);
            return -1;
        }
    }
    return 0;
}

static void sim_teardown(struct sim *s)
{
    if (s->rx != NULL)
        for (uint32_t k = 0; k < s->cfg.receivers; k++)
            rdps__reasm_fini(&s->rx[k].r);
    rdps__rel_pub_fini(&s->pub);
    sim_net_fini(&s->net);
    free(s->ring);
    free(s->txq);
    free(s->first_off);
    free(s->append_at);
    free(s->common);
    free(s->rx);
}

static void collect(struct sim *s)
{
    struct sim_result *res = s->res;
    const struct rdps_rel_pub_counters *pc = rdps__rel_pub_counters(&s->pub);
    res->messages = s->next_msg;
    res->data_frames = pc->data_posted;
    res->bytes = pc->bytes_appended;
    res->heartbeats = pc->heartbeats + pc->heartbeats_unrecoverable;
    res->naks_received = pc->naks_received;
    res->repairs_unicast = pc->repairs_unicast;
    res->repairs_multicast = pc->repairs_multicast;
    res->sim_ns = s->now - s->t0;
    res->pub_nak_seqs_suppressed = pc->nak_seqs_suppressed;
    res->pub_repair_queue_full = pc->repair_queue_full;
    res->parity_sent = pc->parity_sent;
    res->parity_bytes = pc->parity_bytes;
    res->frames_dropped = s->net.dropped;
    res->frames_duplicated = s->net.duplicated;
    res->delivered_min = UINT64_MAX;
    for (uint32_t k = 0; k < s->cfg.receivers; k++) {
        const struct rx *x = &s->rx[k];
        const struct rdps_rel_recv_counters *rc = rdps__reasm_rel_counters(&x->r);
        res->naks_sent += rc->naks_sent;
        res->status_sent += rc->status_sent;
        res->recovered += rc->recovered;
        res->parity_rebuilt += rc->parity_rebuilt;
        res->park_evicted += rc->park_evicted;
        res->beyond_window += rc->beyond_window;
        res->rx_duplicates += rc->duplicates;
        for (int i = 0; i < RDPS__LOSS_REASONS; i++)
            res->lost_by_reason[i] += rc->lost[i];
        res->delivered += x->delivered;
        res->lost_msgs += x->lost_msgs;
        res->lost_seqs += x->lost_seqs;
        res->loss_events += x->loss_events;
        if (x->delivered < res->delivered_min)
            res->delivered_min = x->delivered;
        if (!x->done && s->res->failure[0] == '\0')
            fail(s, "receiver %u stalled at seq %u (message %llu of %llu) at %.3f s simulated", k,
                 x->accounted, (unsigned long long)x->next_id, (unsigned long long)s->next_msg,
                 (double)res->sim_ns / 1e9);
    }
    res->receivers_done = s->done;
}

int sim_run(const struct sim_config *cfg, struct sim_result *res)
{
    struct sim *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return -1;
    memset(res, 0, sizeof(*res));
    res->evicted_rx = UINT32_MAX;
    s->cfg = *cfg;
    s->res = res;
    clock_t cpu = clock();
    int rc = sim_setup(s);
    if (rc == 0) {
        pub_step(s);
        for (uint32_t k = 0; k < cfg->receivers; k++)
            rx_wake(s, &s->rx[k]);
        if (cfg->forge_interval_ns != 0)
            sim_push(&s->net, s->now + cfg->forge_interval_ns, WHO(EV_FORGE, 0), 0);
        s->wait = classify(s);
        while (s->done < cfg->receivers && s->net.n > 0) {
            struct sim_event e = sim_pop(&s->net);
            if (e.at - s->t0 > cfg->time_limit_ns)
                break;
            if (res->zero_deadlines > 10000000) {
                fail(s, "an engine keeps asking to be called again at once (%.3f s simulated)",
                     (double)(e.at - s->t0) / 1e9);
                break;
            }
            res->wait_ns[s->wait] += e.at - s->now;
            s->now = e.at;
            res->events++;
            uint32_t kind = e.who >> 24, k = e.who & 0xFFFFFFu;
            switch (kind) {
            case EV_DOWN:
                rx_frame(s, &s->rx[k], e.buf);
                sim_buf_put(&s->net, e.buf);
                break;
            case EV_UP:
                pub_frame(s, &s->rx[k], e.buf);
                sim_buf_put(&s->net, e.buf);
                break;
            case EV_RX_WAKE:
                if (e.at == s->rx[k].wake_at)
                    rx_wake(s, &s->rx[k]);
                break;
            case EV_PUB_WAKE:
                if (e.at == s->pub_wake) {
                    s->pub_wake = NO_WAKE;
                    pub_step(s);
                }
                break;
            case EV_FORGE:
                forge(s);
                break;
            case EV_STALL_END:
                s->rx[k].stalled = false;
                s->returned = true;
                res->back_ns = s->now - s->t0;
                res->appended_at_back = s->next_msg;
                rx_wake(s, &s->rx[k]);
                break;
            default:
                abort();
            }
            s->wait = classify(s);
        }
        collect(s);
    }
    res->cpu_s = (double)(clock() - cpu) / CLOCKS_PER_SEC;
    sim_teardown(s);
    free(s);
    return rc;
}

double sim_goodput(const struct sim_config *cfg, const struct sim_result *res)
{
    return res->sim_ns ? (double)res->bytes * 8.0 / (double)res->sim_ns / cfg->link_gbps : 0.0;
}

void sim_print(const char *label, const struct sim_config *cfg, const struct sim_result *res)
{
    uint64_t ctl = res->naks_sent + res->status_sent + res->heartbeats;
    double goodput = sim_goodput(cfg, res);
    printf("sim %-8s N=%-2u %-7s seed=%llu msgs=%llu dgrams=%llu naks=%llu (at pub %llu) "
           "repairs uc/mc=%llu/%llu recovered=%llu ctl/data=%.4f lost=%llu evict=%llu "
           "park_ev=%llu parity k=%u sent/rebuilt=%llu/%llu sim_ms=%.1f goodput=%.4f "
           "cpu_s=%.2f\n",
           label, cfg->receivers, cfg->down.name, (unsigned long long)cfg->seed,
           (unsigned long long)res->messages, (unsigned long long)res->data_frames,
           (unsigned long long)res->naks_sent, (unsigned long long)res->naks_received,
           (unsigned long long)res->repairs_unicast, (unsigned long long)res->repairs_multicast,
           (unsigned long long)res->recovered,
           res->data_frames ? (double)ctl / (double)res->data_frames : 0.0,
           (unsigned long long)res->lost_msgs, (unsigned long long)res->evictions,
           (unsigned long long)res->park_evicted, cfg->parity_k,
           (unsigned long long)res->parity_sent, (unsigned long long)res->parity_rebuilt,
           (double)res->sim_ns / 1e6, goodput, res->cpu_s);
    fflush(stdout);
}
