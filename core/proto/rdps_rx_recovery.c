/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rx_recovery.c - recovery for reliable streams: NAK scheduling, RTT, STATUS, loss deadlines
 * (model: rdps_rx_recovery.h). */
#include "rdps_rx_recovery.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rdps_error.h"
#include "rdps_seq.h"

int rdps__rx_rec_init(struct rdps_rx_recovery *rec, const struct rdps_rel_recv_config *cfg,
                      uint32_t max_streams, void *user)
{
    memset(rec, 0, sizeof(*rec));
    rec->cfg = *cfg;
    rec->user = user;
    rec->head = RDPS_RX_NONE;
    rdps__rx_rec_set_credits(rec, RDPS_REL_CREDITS_MAX);
    rec->rng = cfg->rng_seed ^ 0x5DEECE66Dull;
    rec->due_ns = UINT64_MAX;
    rec->rel = calloc(max_streams, sizeof(*rec->rel));
    if (rec->rel == NULL)
        return rdps__set_err(RDPS_ENOMEM, "reasm_init: cannot allocate %u reliable streams",
                             max_streams);
    return 0;
}

void rdps__rx_rec_fini(struct rdps_rx_recovery *rec)
{
    free(rec->rel);
    rec->rel = NULL;
}

void rdps__rx_rec_stream_start(struct rdps_rx_recovery *rec, int32_t si,
                               const struct rdps_rx_ident *id, uint32_t seq, bool joining,
                               uint64_t now_ns)
{
    struct rdps_rx_rel *rs = &rec->rel[si];
    memset(rs, 0, sizeof(*rs));
    rs->id = *id;
    rs->status_consumed = seq;
    rs->status_next = seq;
    rs->status_quarter = 1;
    rs->receivers = rec->cfg.receivers;
    rs->srtt_ns = rec->cfg.default_rtt_ns;
    rs->status_now = true;
    /* Joining: a from_oldest stream first seen through DATA waits for a heartbeat's trail; one
     * first seen through a heartbeat takes it from that heartbeat. */
    rs->joining = joining;
    if (joining) {
        rs->join_deadline_ns = now_ns + rec->cfg.join_wait_ns;
        rdps__rx_rec_note_due(rec, rs->join_deadline_ns);
    }
    rs->prev = RDPS_RX_NONE;
    rs->next = rec->head;
    if (rec->head != RDPS_RX_NONE)
        rec->rel[rec->head].prev = si;
    rec->head = si;
    rdps__rx_rec_note_due(rec, now_ns);
}

void rdps__rx_rec_stream_stop(struct rdps_rx_recovery *rec, int32_t si)
{
    struct rdps_rx_rel *rs = &rec->rel[si];
    if (rs->prev != RDPS_RX_NONE)
        rec->rel[rs->prev].next = rs->next;
    else
        rec->head = rs->next;
    if (rs->next != RDPS_RX_NONE)
        rec->rel[rs->next].prev = rs->prev;
}

/* ---- timing ---------------------------------------------------------------------------------- */

/* The stream's live receivers: discovery's count when the hook is there, else the set one. */
static uint32_t stream_receivers(struct rdps_rx_recovery *rec, const struct rdps_rx_rel *rs)
{
    uint32_t n = rec->cfg.receivers_of == NULL ? rs->receivers
                                               : rec->cfg.receivers_of(rec->user, rs->id.topic_id);
    return n > rs->hb_receivers ? (n ? n : 1) : rs->hb_receivers; /* or what the publisher says */
}

static uint64_t first_nak_due(struct rdps_rx_recovery *rec, const struct rdps_rx_rel *rs,
                              uint64_t now_ns)
{
    uint64_t max = (uint64_t)rec->cfg.nak_backoff_rtts * rs->srtt_ns;
    uint32_t receivers = stream_receivers(rec, rs);
    uint64_t holdoff = rec->cfg.nak_holdoff_ns;
    if (rs->reordering) {
        /* Twice as late as originals came lately, and a quarter RTT (RFC 8985's reordering
         * window), at most reorder_holdoff_ns: the whole 2 ms on a path that reorders by
         * 100 us held a lone receiver's window on every hole (a quarter of line rate with loss
         * on the simulated fabric). */
        uint64_t wait = 2 * rs->reorder_late_ns;
        if (wait < rs->srtt_ns / 4)
            wait = rs->srtt_ns / 4;
        if (wait > rec->cfg.reorder_holdoff_ns)
            wait = rec->cfg.reorder_holdoff_ns;
        if (wait > holdoff)
            holdoff = wait;
    }
    return now_ns + holdoff + rdps__rel_nak_backoff_ns(&rec->rng, max, receivers);
}

/* Retries that do not double (a NAK round fails with 1 - (1 - loss)^2: 36 % at 20 % loss; with
 * four, the 0.6 % of holes that need more held the window for doubled waits and a lone
 * receiver's 20 % loss run lost half its goodput in the simulated fabric; eight receivers there
 * ran 4-6 times slower at 20 % loss when they doubled from the first retry). */
#define REL_RETRIES_UNDOUBLED 8u

/* How long after its latest NAK a range that had `tries` NAKs is asked for again. */
static uint64_t retry_wait(struct rdps_rx_recovery *rec, const struct rdps_rx_rel *rs,
                           unsigned tries)
{
    uint64_t floor = rec->cfg.nak_retry_min_ns;
    uint32_t receivers = stream_receivers(rec, rs);
    bool alone = receivers <= 1;
    /* The publisher answers a retry once the repair it sent could have reached this receiver
     * (two of its RTTs): alone, retries wait three of the smoothed RTTs; with several
     * receivers, three of the latest samples once there is one (the smoothed estimate is kept
     * slow there for the first NAK's spread) or else the group's largest, from heartbeats (one
     * repaired by parity alone has no sample), at most the configured floor. */
    uint64_t rtt = alone ? rs->srtt_ns : rs->rtt_fast_ns != 0 ? rs->rtt_fast_ns : rs->hb_rtt_ns;
    if (rec->cfg.nak_retry_alone_ns != 0 && rtt != 0) {
        uint64_t scaled = rec->cfg.nak_retry_alone_ns;
        if (rtt * rec->cfg.nak_retry_min_rtts > scaled)
            scaled = rtt * rec->cfg.nak_retry_min_rtts;
        /* Alone, and no earlier than the smoothed RTT plus four deviations (RFC 6298's RTO):
         * repairs that waited behind a receive backlog came at 1-4x the median on rxe, and
         * retries at two RTTs asked again for a third of the holes whose repair was on its way
         * (those lost are asked again at once when a later repair overtakes them). */
        uint64_t rto = rs->srtt_ns + 4 * rs->rttvar_ns;
        if (alone && rto > scaled)
            scaled = rto;
        floor = alone || scaled < floor ? scaled : floor;
    }
    uint64_t wait = rs->srtt_ns > floor ? rs->srtt_ns : floor;
    /* The cap bounds the backoff, never the first wait: capped below it (25 ms against repairs
     * that take 30 ms at the median in TCG guests), every retry asked for a repair on its way. */
    uint64_t cap = rec->cfg.nak_retry_max_ns;
    if (cap != 0 && cap < wait)
        cap = wait;
    /* Back off exponentially after the first retries: a retry asks only for what this receiver
     * still misses, the publisher answers a sequence once per linger whoever asks, and its
     * window waits on the oldest hole of any receiver (doubling from the first retry cost most
     * of a blocked publisher's time at 5 % loss alone, and at 20 % with eight receivers, in the
     * simulated fabric). With several receivers each retry still adds a random backoff. */
    for (unsigned i = REL_RETRIES_UNDOUBLED; i < tries && wait < cap; i++)
        wait *= 2;
    if (cap != 0 && wait > cap)
        wait = cap;
    /* The random part lets one receiver's retry bring the multicast repair that cancels the
     * others' for a repair several of them lost. Retries come spread by their own first NAKs'
     * backoff already, so they spread over fewer RTTs than first NAKs: one up to eight receivers,
     * a third more per doubling after, at most nak_backoff_rtts (in the simulated fabric at 5 %
     * loss: the first NAKs' four RTTs cost eight receivers a sixth of their goodput and 64 a
     * quarter; none at all cost 64 receivers four times the NAKs at 20 % loss). */
    double rtts = log2((double)receivers) / 3.0;
    if (rtts < 1.0)
        rtts = 1.0;
    if (rtts > (double)rec->cfg.nak_backoff_rtts)
        rtts = (double)rec->cfg.nak_backoff_rtts;
    uint64_t max = (uint64_t)(rtts * (double)(rtt != 0 ? rtt : rs->srtt_ns));
    return wait + rdps__rel_nak_backoff_ns(&rec->rng, max, receivers);
}

/* The RTT estimate fell (the first sample replaced the default): retries scheduled with the old
 * one would wait for it (3 ms for 1 ms; the fabric's round trip is 10-100 us), so bring them in. */
static void retries_rescale(struct rdps_rx_recovery *rec, int32_t si, struct rdps_rx_track *t)
{
    const struct rdps_rx_rel *rs = &rec->rel[si];
    for (unsigned i = 0; i < t->gaps.count; i++) {
        struct rdps_gap_range *g = &t->gaps.r[i];
        if (g->tries == 0 || g->lost_reason != 0)
            continue;
        uint64_t due = g->nak_ns + retry_wait(rec, rs, g->tries);
        if (due < g->due_ns) {
            g->due_ns = due;
            rdps__rx_rec_note_due(rec, due);
        }
    }
}

/* The RTT estimate fell from `before` to `after`: first NAKs still waiting keep their place in
 * the backoff draw, scaled to the new estimate (several receivers converge from the 1 ms default
 * by an eighth per sample: a stream's first holes waited out 4 ms on a 70 us fabric). Suppressed
 * ones too: with parity most first holes are (another receiver's NAK brought a symbol of their
 * block, too few for this one), and left with the default's draw they held the window while
 * retransmission's did not (8 receivers at 1 %, 20 000 messages: parity below retransmission). */
static void first_naks_rescale(struct rdps_rx_recovery *rec, struct rdps_rx_track *t,
                               uint64_t before, uint64_t after, uint64_t now_ns)
{
    for (unsigned i = 0; i < t->gaps.count; i++) {
        struct rdps_gap_range *g = &t->gaps.r[i];
        if (g->tries != 0 || g->lost_reason != 0 || g->due_ns <= now_ns)
            continue;
        uint64_t left = g->due_ns - now_ns;
        g->due_ns = now_ns + (uint64_t)((double)left * (double)after / (double)before);
        rdps__rx_rec_note_due(rec, g->due_ns);
    }
}

/* A repair took ns from detection: in microseconds, and in round trips of the RTT estimate as
 * it came (before this repair's own sample, which would make every first try one RTT). */
static void latency_record(struct rdps_rx_recovery *rec, struct rdps_rx_rel *rs, uint64_t ns)
{
    unsigned us, rtts;
    rdps__rel_latency_buckets(ns, rs->srtt_ns, &us, &rtts);
    RDPS_REL_COUNT(rec, rs, repair_latency[us], 1);
    RDPS_REL_COUNT(rec, rs, repair_rtts[rtts], 1);
}

/* ---- ranges -------------------------------------------------------------------------------- */

void rdps__rx_rec_gap_add(struct rdps_rx_recovery *rec, int32_t si, struct rdps_rx_track *t,
                          uint32_t start, uint32_t count, uint64_t now_ns)
{
    struct rdps_rx_rel *rs = &rec->rel[si];
    uint64_t due = first_nak_due(rec, rs, now_ns);
    bool tail =
        t->gaps.count == 0 || rdps__seq_ge(start, rdps__range_end(&t->gaps.r[t->gaps.count - 1]));
    if (tail) {
        if (rdps__ranges_append(&t->gaps, start, count, now_ns, due) < 0) {
            struct rdps_gap_range *last = &t->gaps.r[t->gaps.count - 1];
            last->count = start + count - last->start; /* full: over-ask */
            RDPS_REL_COUNT(rec, rs, range_overflow, 1);
        }
    } else if (!rdps__ranges_insert(&t->gaps, start, count, now_ns, due)) {
        RDPS_REL_COUNT(rec, rs, range_overflow, 1);
    }
    rdps__rx_rec_note_due(rec, due);
}

/*
 * The repair of a sequence NAKed once, at nak_ns, arrived: ranges NAKed
 * before it and still missing lost their NAK or repair (answered and sent in order). Only a lone
 * receiver (another's NAKs order multicast repairs differently) on a path that does not reorder.
 */
static void repairs_overtaken(struct rdps_rx_recovery *rec, int32_t si, struct rdps_rx_track *t,
                              uint32_t seq, uint64_t nak_ns, uint64_t now_ns)
{
    struct rdps_rx_rel *rs = &rec->rel[si];
    /* Cheap tests first: the receiver count may ask discovery (a callback). */
    if (rs->reordering || t->gaps.count == 0 || stream_receivers(rec, rs) > 1)
        return;
    for (unsigned i = 0; i < t->gaps.count; i++) {
        struct rdps_gap_range *g = &t->gaps.r[i];
        if (g->tries == 0 || g->overtaken || g->lost_reason != 0 || g->nak_ns > nak_ns ||
            (g->nak_ns == nak_ns && !rdps__seq_lt(g->start, seq)))
            continue;
        g->overtaken = 1;
        g->due_ns = now_ns;
        rdps__rx_rec_note_due(rec, now_ns);
    }
}

/* A missing sequence arrived: take it out of its range; count how it came. */
void rdps__rx_rec_gap_filled(struct rdps_rx_recovery *rec, int32_t si, struct rdps_rx_track *t,
                             uint32_t seq, bool repair, bool rebuilt, uint64_t now_ns)
{
    struct rdps_rx_rel *rs = &rec->rel[si];
    int i = rdps__ranges_find(&t->gaps, seq);
    if (!repair) {
        RDPS_REL_COUNT(rec, rs, out_of_order, 1);
        rs->reordering = true; /* this path reorders: NAK later, not what is merely late */
        if (i >= 0 && now_ns > t->gaps.r[i].detect_ns) {
            uint64_t late = now_ns - t->gaps.r[i].detect_ns;
            if (late > rec->cfg.reorder_holdoff_ns) /* a straggler sets no more than the cap */
                late = rec->cfg.reorder_holdoff_ns;
            uint64_t decayed = rs->reorder_late_ns - rs->reorder_late_ns / 64;
            rs->reorder_late_ns = late > decayed ? late : decayed;
        }
    } else {
        RDPS_REL_COUNT(rec, rs, recovered, 1);
        rs->repaired_ns = now_ns;
    }
    if (i < 0)
        return;
    struct rdps_gap_range *g = &t->gaps.r[i];
    if (repair) {
        latency_record(rec, rs, now_ns - g->detect_ns);
        /* Karn: a sample only from a range NAKed once. Except a lone receiver's first: while
         * its estimate is the default, its retries come at a few of those, and on a path slower
         * than that every range was NAKed again before its repair came, so no sample was ever
         * taken (a traced 1 % loss run on rxe: each hole NAKed 5-8 times and repaired as often
         * in the first 0.5 s, and all its 128 duplicate repairs came then). Its first repair
         * then gives the time since the range was found missing, when it was first NAKed: an
         * upper bound, replaced by the Karn samples as they come. None from parity: a block
         * decodes once others' rounds brought enough (30 samples of 3.7 ms in one decode). */
        bool lone_first = rs->c.rtt_samples == 0 && stream_receivers(rec, rs) <= 1;
        bool bootstrap = lone_first && g->tries > 1 && now_ns > g->detect_ns;
        if (!rebuilt && ((g->tries == 1 && g->nak_ns != 0 && now_ns > g->nak_ns) || bootstrap)) {
            uint64_t sample = now_ns - (bootstrap ? g->detect_ns : g->nak_ns);
            /* Alone, the first sample replaces the default (RFC 6298): smoothing from 1 ms took
             * dozens of repairs, and every retry waited for that guess meanwhile. With several
             * receivers the estimate also spreads first NAKs, which must cover the others'
             * round trips, not only this one's: it keeps converging from the default (replaced
             * by the first sample, a loss common to 64 receivers cost 11.9 NAKs instead of 2.1
             * over 20 000 messages in the simulated fabric). */
            uint64_t before = rs->srtt_ns;
            if (rs->c.rtt_samples > 0) { /* the deviation from the estimate the sample tests */
                uint64_t dev = sample > before ? sample - before : before - sample;
                rs->rttvar_ns = rs->rttvar_ns - rs->rttvar_ns / 4 + dev / 4;
            }
            rs->srtt_ns = lone_first ? sample : rs->srtt_ns - rs->srtt_ns / 8 + sample / 8;
            rs->rtt_fast_ns = rs->rtt_fast_ns == 0 ? sample : (rs->rtt_fast_ns + sample) / 2;
            if (rs->srtt_ns == 0)
                rs->srtt_ns = 1;
            RDPS_REL_COUNT(rec, rs, rtt_samples, 1);
            if (rs->srtt_ns < before / 2 || rs->c.rtt_samples == 1)
                retries_rescale(rec, si, t);
            if (rs->srtt_ns < before)
                first_naks_rescale(rec, t, before, rs->srtt_ns, now_ns);
        }
        if (g->tries == 0 && !g->suppressed) {
            g->suppressed = 1;
            RDPS_REL_COUNT(rec, rs, naks_suppressed, 1);
        }
        /* The rest of the range is likely being repaired right behind this frame. */
        uint64_t hold = now_ns + rs->srtt_ns;
        if (g->due_ns < hold)
            g->due_ns = hold;
    }
    /* Asked once: the repair answers that NAK (after a retry it may answer an earlier one, and
     * ranges NAKed in between would be taken for lost: 3x the duplicate repairs at 20 % loss). */
    uint64_t nak_ns = g->tries == 1 ? g->nak_ns : 0;
    if (rdps__ranges_remove_seq(&t->gaps, i, seq) < 0)
        RDPS_REL_COUNT(rec, rs, range_overflow, 1); /* no slot to split: the range stays whole */
    if (repair && nak_ns != 0)
        repairs_overtaken(rec, si, t, seq, nak_ns, now_ns);
}

/* A parity symbol of the block [start, start + k) came: the rest of its round likely follows, and
 * this receiver's count is right only with it: its ranges there wait an RTT, like the rest of a
 * range behind a repair. */
void rdps__rx_rec_block_heard(struct rdps_rx_recovery *rec, int32_t si, struct rdps_rx_track *t,
                              uint32_t start, uint32_t k, uint64_t now_ns)
{
    struct rdps_rx_rel *rs = &rec->rel[si];
    for (unsigned i = 0; i < t->gaps.count; i++) {
        struct rdps_gap_range *g = &t->gaps.r[i];
        if (g->start - start >= k && start - g->start >= g->count)
            continue; /* neither starts in the block nor covers its start */
        if (g->tries == 0 && !g->suppressed) {
            g->suppressed = 1;
            RDPS_REL_COUNT(rec, rs, naks_suppressed, 1);
        }
        if (g->due_ns < now_ns + rs->srtt_ns)
            g->due_ns = now_ns + rs->srtt_ns;
    }
}

/* ---- NAKs ---------------------------------------------------------------------------------- */

static void send_nak(struct rdps_rx_recovery *rec, int32_t si, const struct rdps_seq_range *ranges,
                     unsigned n, uint16_t flags, uint64_t wall_ns)
{
    struct rdps_rx_rel *rs = &rec->rel[si];
    uint8_t frame[RDPS_FRAME_NAK_OFF_RANGES + RDPS_FRAME_NAK_MAX_RANGES * RDPS_FRAME_NAK_RANGE_LEN];
    int len = rdps__frame_encode_nak_flags(frame, sizeof(frame), rs->id.session_id, rs->id.topic_id,
                                           rec->cfg.receiver_id, ranges, n, wall_ns, flags);
    if (len < 0)
        return;
    RDPS_REL_COUNT(rec, rs, naks_sent, 1);
    RDPS_REL_COUNT(rec, rs, nak_ranges_sent, n);
    if (flags & RDPS_FRAME_F_PARITY)
        RDPS_REL_COUNT(rec, rs, parity_ranges_sent, n);
    rec->cfg.send(rec->user, &rs->id.source, rs->id.session_id, frame, (size_t)len);
}

static inline uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* A first NAK waiting for its block re-polls at least this far apart. */
#define REL_PARITY_WAIT_MIN_NS 2000ull

/* A live publisher heartbeats at least every 100 ms (the status interval): silence shorter than
 * this many intervals changes nothing (a heartbeat or two lost). */
#define REL_SILENCE_GRACE_INTERVALS 2

/*
 * NAKs what is due, gives up what ran out of tries or time; returns the stream's next deadline.
 * `heard` is when the stream last had a frame from its publisher: past the grace, a retry whose
 * previous NAK had nothing at all back waits at least as long as that silence (the NAKs to a
 * silent publisher back off exponentially, as RFC 6298 backs off an unanswered RTO), and an
 * idle stream sends none (its ranges still meet their loss deadline).
 */
uint64_t rdps__rx_rec_poll_naks(struct rdps_rx_recovery *rec, int32_t si, struct rdps_rx_track *t,
                                uint64_t now_ns, uint64_t wall_ns, uint64_t heard, bool idle,
                                bool *gave_up)
{
    struct rdps_rx_rel *rs = &rec->rel[si];
    const struct rdps_rel_recv_config *cfg = &rec->cfg;
    /* Ranges whose repair was overtaken go in their own NAK, flagged: answered in the linger. */
    struct rdps_seq_range ranges[2][RDPS_FRAME_NAK_MAX_RANGES];
    unsigned n[2] = {0, 0};
    uint64_t next = UINT64_MAX;
    uint64_t silence_grace = REL_SILENCE_GRACE_INTERVALS * cfg->status_interval_ns;
    /* What the publisher sent: up to the newest sequence seen, or a heartbeat's next. */
    bool parity = rs->parity && stream_receivers(rec, rs) > 1;
    uint32_t sent = rs->has_hb_next && rdps__seq_gt(rs->hb_next, t->next) ? rs->hb_next : t->next;
    rdps__ranges_trim_below(&t->gaps, t->consumed);
    for (unsigned i = 0; i < t->gaps.count; i++) {
        struct rdps_gap_range *g = &t->gaps.r[i];
        if (rdps__rx_rec_verdict(rs, g) != RDPS__LOSS_NONE) {
            *gave_up = true;
            continue;
        }
        if (cfg->loss_deadline_ns != 0) {
            /* From detection or the stream's last repair: a late joiner's backlog takes as long
             * as the publisher's repair budget makes it, while repairs keep coming. */
            uint64_t since = g->detect_ns > rs->repaired_ns ? g->detect_ns : rs->repaired_ns;
            if (now_ns - since >= cfg->loss_deadline_ns) {
                g->lost_reason = RDPS_LOSS_DEADLINE;
                *gave_up = true;
                continue;
            }
            next = min_u64(next, since + cfg->loss_deadline_ns);
        }
        if (now_ns < g->due_ns) {
            next = min_u64(next, g->due_ns);
            continue;
        }
        if (idle)
            continue; /* asked again when the publisher is heard (rdps__rel_heard) */
        if (rec->backlog && g->tries > 0 && !g->overtaken &&
            now_ns - g->due_ns < retry_wait(rec, rs, g->tries)) {
            if (!g->held)
                RDPS_REL_COUNT(rec, rs, retries_held, 1);
            g->held = 1;
            next = now_ns; /* asked again once the queue is processed */
            continue;
        }
        /* A first NAK waits for its block to be sent whole (a block's time, well under a
         * round trip), up to a round trip (the tail of a burst may stay short): then it asks
         * for the block's count, which one parity answer serves at every receiver, rather than
         * for this receiver's sequences. */
        if (parity && g->tries == 0 && now_ns - g->detect_ns < rs->srtt_ns &&
            rdps__rx_par_wait(rec->par, si, g->start, g->count, sent)) {
            g->due_ns =
                now_ns + (rs->srtt_ns / 8 > REL_PARITY_WAIT_MIN_NS ? rs->srtt_ns / 8
                                                                   : REL_PARITY_WAIT_MIN_NS);
            next = min_u64(next, g->due_ns);
            continue;
        }
        if (g->tries >= cfg->nak_max_tries) {
            g->lost_reason = RDPS_LOSS_NAK_RETRIES;
            *gave_up = true;
            continue;
        }
        unsigned k = g->overtaken;
        if (n[k] == RDPS_FRAME_NAK_MAX_RANGES) {
            next = now_ns; /* the rest goes in the next NAK */
            continue;
        }
        ranges[k][n[k]].start = g->start;
        ranges[k][n[k]].count = g->count;
        n[k]++;
        if (g->overtaken)
            RDPS_REL_COUNT(rec, rs, overtaken, 1);
        g->overtaken = 0;
        g->held = 0;
        bool unanswered = g->tries > 0 && heard < g->nak_ns && now_ns - heard >= silence_grace;
        g->tries++;
        g->nak_ns = now_ns;
        g->due_ns = now_ns + retry_wait(rec, rs, g->tries);
        if (unanswered && g->due_ns - now_ns < now_ns - heard) {
            g->due_ns = now_ns + (now_ns - heard);
            rs->silent = true;
        }
        next = min_u64(next, g->due_ns);
    }
    /* The flagged NAK first: the publisher answers in order, and repairs_overtaken takes a
     * range asked in the same poll below a repaired sequence for asked before it. Sent second,
     * a re-asked range below a first-asked one was repaired after it and taken for lost again
     * (one more re-ask, and a duplicate repair). */
    for (unsigned k = 2; k-- > 0;) {
        if (n[k] > 0 && parity) {
            struct rdps_seq_range blocks[RDPS_FRAME_NAK_MAX_RANGES];
            unsigned nb = rdps__rx_par_by_block(rec->par, si, ranges[k], &n[k], blocks, sent);
            if (nb > 0)
                send_nak(rec, si, blocks, nb,
                         RDPS_FRAME_F_PARITY | (k == 1 ? RDPS_FRAME_F_RETRANSMIT : 0), wall_ns);
        }
        if (n[k] > 0)
            send_nak(rec, si, ranges[k], n[k], k == 1 ? RDPS_FRAME_F_RETRANSMIT : 0, wall_ns);
    }
    return next;
}

/* ---- STATUS ---------------------------------------------------------------------------------- */

bool rdps__rx_rec_learn_head(struct rdps_rx_rel *rs, uint32_t consumed,
                             const struct rdps_frame_view *v)
{
    const struct rdps_frame_header *h = &v->hdr;
    if ((h->flags & RDPS_FRAME_F_END) || v->payload_len == 0 ||
        rdps__rx_rec_head_need(rs, consumed) != 0)
        return false;
    /* All of a message's non-final fragments carry the same payload: its first sequence and
     * fragment count follow from the offset and the message length. */
    uint32_t index = h->frag_offset / v->payload_len;
    if (h->frag_offset % v->payload_len != 0 || h->seq - index != consumed)
        return false;
    uint64_t span = ((uint64_t)h->msg_len + v->payload_len - 1) / v->payload_len;
    if (span <= index || span > UINT32_MAX)
        return false; /* inconsistent: the assembly layer refuses it */
    rs->head_seq = consumed;
    rs->head_span = (uint32_t)span;
    rs->has_head = true;
    return true;
}

void rdps__rx_rec_progress_due(struct rdps_rx_recovery *rec, int32_t si,
                               const struct rdps_rx_track *t)
{
    struct rdps_rx_rel *rs = &rec->rel[si];
    /* A heartbeat said more was sent than the window let us track: track the next part now
     * rather than at the next heartbeat, which a blocked publisher sends ever more rarely (a
     * receiver back from a stall caught up one window per heartbeat in the simulated fabric). */
    if (rs->has_hb_next && !rs->extend && rdps__seq_gt(rs->hb_next, t->next) &&
        !(rs->extend_tried && rs->extend_consumed == t->consumed && rs->extend_next == t->next)) {
        rs->extend = true;
        rdps__rx_rec_note_due(rec, rec->now_ns);
    }
    if (rs->status_now)
        return;
    /* The window's edge moved a quarter of the credits since the last STATUS (frames received:
     * the credits count from the newest, parked or not), or the consumed point moved a quarter
     * of the window that STATUS offered (the publisher's ring and flow control follow it).
     * Checked whether or not the consumed point moved: under loss it moves a little at each
     * repair, and a publisher that had sent up to the edge then waited for the STATUS interval
     * (test_status_when_edge_moves_while_consumed_creeps). */
    if ((rdps__seq_gt(t->next, rs->status_next) &&
         t->next - rs->status_next >= rec->credit_quarter) ||
        t->consumed - rs->status_consumed >= rs->status_quarter)
        rdps__rx_rec_status_now(rec, rs);
}

/* How long after the last STATUS the next is due: status_interval_ns, doubled status_backoff
 * times while nothing was heard from the publisher since that STATUS (then a frame heard brings
 * the next STATUS forward: `silent`). */
static uint64_t status_wait(struct rdps_rx_recovery *rec, struct rdps_rx_rel *rs, uint64_t heard)
{
    uint64_t interval = rec->cfg.status_interval_ns;
    if (rs->status_backoff == 0 || heard >= rs->status_ns)
        return interval;
    rs->silent = true;
    return interval << rs->status_backoff;
}

static void send_status(struct rdps_rx_recovery *rec, int32_t si, const struct rdps_rx_track *t,
                        uint32_t window, uint64_t heard, uint64_t now_ns, uint64_t wall_ns)
{
    struct rdps_rx_rel *rs = &rec->rel[si];
    /* Nothing heard from the publisher since the last STATUS: the next one waits twice as long
     * (a silent publisher, or none: a stream forged from one datagram reported for ever). */
    if (heard >= rs->status_ns)
        rs->status_backoff = 0;
    else if (rs->status_backoff < RDPS_REL_STATUS_BACKOFF_MAX)
        rs->status_backoff++;
    uint32_t echo = RDPS_FRAME_NO_ECHO;
    uint64_t ts = wall_ns;
    if (rs->hb_echo) {
        uint64_t held_us = (now_ns - rs->hb_rx_ns) / 1000;
        echo = held_us < RDPS_FRAME_NO_ECHO ? (uint32_t)held_us : RDPS_FRAME_NO_ECHO - 1;
        ts = rs->hb_ts_ns;
        rs->hb_echo = false;
    }
    uint8_t frame[RDPS_FRAME_STATUS_LEN];
    int len =
        rdps__frame_encode_status_echo(frame, sizeof(frame), rs->id.session_id, rs->id.topic_id,
                                       rec->cfg.receiver_id, t->consumed, window, echo, ts);
    if (len < 0)
        return;
    rs->status_ns = now_ns;
    rs->status_consumed = t->consumed;
    rs->status_next = t->next;
    rs->status_quarter = window / 4 ? window / 4 : 1;
    rs->status_now = false;
    RDPS_REL_COUNT(rec, rs, status_sent, 1);
    rec->cfg.send(rec->user, &rs->id.source, rs->id.session_id, frame, (size_t)len);
}

uint64_t rdps__rx_rec_poll_status(struct rdps_rx_recovery *rec, int32_t si,
                                  const struct rdps_rx_track *t, uint32_t window, uint64_t heard,
                                  uint64_t now_ns, uint64_t wall_ns)
{
    struct rdps_rx_rel *rs = &rec->rel[si];
    uint64_t wait = status_wait(rec, rs, heard);
    if ((rs->status_now && heard >= rs->status_ns) || now_ns - rs->status_ns >= wait) {
        send_status(rec, si, t, window, heard, now_ns, wall_ns);
        wait = status_wait(rec, rs, heard);
    }
    return rs->status_ns + wait;
}
