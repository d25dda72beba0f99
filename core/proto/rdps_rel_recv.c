/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rel_recv.c - reliable receive side: consumed point, in-order release, gap ranges, NAK
 * scheduling and explicit loss; the window and STATUS are in rdps_rel_window.c (model:
 * rdps_rel_recv.h). */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "rdps_reasm_internal.h"
#include "rdps_seq.h"

/* ---- timing ---------------------------------------------------------------------------------- */

static uint64_t rng_next(uint64_t *state) /* splitmix64 */
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint64_t rdps__rel_nak_backoff_ns(uint64_t *rng, uint64_t max_ns, uint32_t receivers)
{
    if (receivers <= 1 || max_ns == 0)
        return 0;
    /* RFC 5401 section 3.5: t = T/lambda * ln(1 + u (e^lambda - 1)), lambda = ln(N) + 1: an
     * increasing exponential density on [0, T], so few receivers fire early. */
    double lambda = log((double)receivers) + 1.0;
    double u = (double)(rng_next(rng) >> 11) * 0x1.0p-53;
    double t = (double)max_ns / lambda * log1p(u * (exp(lambda) - 1.0));
    if (!(t > 0))
        return 0;
    return t >= (double)max_ns ? max_ns : (uint64_t)t;
}

/* The stream's live receivers: discovery's count when the hook is there, else the set one. */
static uint32_t stream_receivers(struct rdps_reasm *r, const struct rdps_rel_stream *rs)
{
    if (r->cfg.rel.receivers_of == NULL)
        return rs->receivers;
    uint32_t n = r->cfg.rel.receivers_of(r->cfg.user, r->streams[rs - r->rel].topic_id);
    return n ? n : 1;
}

static uint64_t first_nak_due(struct rdps_reasm *r, const struct rdps_rel_stream *rs,
                              uint64_t now_ns)
{
    uint64_t max = (uint64_t)r->cfg.rel.nak_backoff_rtts * rs->srtt_ns;
    uint32_t receivers = stream_receivers(r, rs);
    uint64_t holdoff = r->cfg.rel.nak_holdoff_ns;
    if (rs->reordering) {
        /* Twice as late as originals came lately, and a quarter RTT (RFC 8985's reordering
         * window), at most reorder_holdoff_ns: the whole 2 ms on a path that reorders by
         * 100 us held a lone receiver's window on every hole (a quarter of line rate with loss
         * on the simulated fabric). */
        uint64_t wait = 2 * rs->reorder_late_ns;
        if (wait < rs->srtt_ns / 4)
            wait = rs->srtt_ns / 4;
        if (wait > r->cfg.rel.reorder_holdoff_ns)
            wait = r->cfg.rel.reorder_holdoff_ns;
        if (wait > holdoff)
            holdoff = wait;
    }
    return now_ns + holdoff + rdps__rel_nak_backoff_ns(&r->rel_rng, max, receivers);
}

/* Retries that do not double (a NAK round fails with 1 - (1 - loss)^2: 36 % at 20 % loss; with
 * four, the 0.6 % of holes that need more held the window for doubled waits and a lone
 * receiver's 20 % loss run lost half its goodput in the simulated fabric; eight receivers there
 * ran 4-6 times slower at 20 % loss when they doubled from the first retry). */
#define REL_RETRIES_UNDOUBLED 8u

/* How long after its latest NAK a range that had `tries` NAKs is asked for again. */
static uint64_t retry_wait(struct rdps_reasm *r, const struct rdps_rel_stream *rs, unsigned tries)
{
    uint64_t floor = r->cfg.rel.nak_retry_min_ns;
    uint32_t receivers = stream_receivers(r, rs);
    bool alone = receivers <= 1;
    /* The publisher answers a retry once the repair it sent could have reached this receiver
     * (two of its RTTs): alone, retries wait three of the smoothed RTTs; with several
     * receivers, three of the latest samples once there is one (the smoothed estimate is kept
     * slow there for the first NAK's spread), at most the configured floor. */
    uint64_t rtt = alone ? rs->srtt_ns : rs->rtt_fast_ns;
    if (r->cfg.rel.nak_retry_alone_ns != 0 && rtt != 0) {
        uint64_t scaled = r->cfg.rel.nak_retry_alone_ns;
        if (rtt * r->cfg.rel.nak_retry_min_rtts > scaled)
            scaled = rtt * r->cfg.rel.nak_retry_min_rtts;
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
    uint64_t cap = r->cfg.rel.nak_retry_max_ns;
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
    if (rtts > (double)r->cfg.rel.nak_backoff_rtts)
        rtts = (double)r->cfg.rel.nak_backoff_rtts;
    uint64_t max = (uint64_t)(rtts * (double)(rtt != 0 ? rtt : rs->srtt_ns));
    return wait + rdps__rel_nak_backoff_ns(&r->rel_rng, max, receivers);
}

static uint64_t retry_due(struct rdps_reasm *r, const struct rdps_rel_stream *rs, unsigned tries,
                          uint64_t now_ns)
{
    return now_ns + retry_wait(r, rs, tries);
}

/* The RTT estimate fell (the first sample replaced the default): retries scheduled with the old
 * one would wait for it (3 ms for 1 ms; the fabric's round trip is 10-100 us), so bring them in. */
static void retries_rescale(struct rdps_reasm *r, int32_t si)
{
    struct rdps_reasm_stream *s = &r->streams[si];
    const struct rdps_rel_stream *rs = &r->rel[si];
    for (unsigned i = 0; i < s->gaps.count; i++) {
        struct rdps_gap_range *g = &s->gaps.r[i];
        if (g->tries == 0 || g->lost_reason != 0)
            continue;
        uint64_t due = g->nak_ns + retry_wait(r, rs, g->tries);
        if (due < g->due_ns) {
            g->due_ns = due;
            rdps__rel_note_due(r, due);
        }
    }
}

/* The power-of-two bucket of v among n: i for v in [2^(i-1), 2^i), 0 for 0, n - 1 above. */
static unsigned log2_bucket(uint64_t v, unsigned n)
{
    unsigned b = 0;
    while (b + 1 < n && v >= (1ull << b))
        b++;
    return b;
}

/* A repair took ns from detection: in microseconds, and in round trips of the RTT estimate as
 * it came (before this repair's own sample, which would make every first try one RTT). */
static void latency_record(struct rdps_reasm *r, struct rdps_rel_stream *rs, uint64_t ns)
{
    RDPS_REL_COUNT(r, rs, repair_latency[log2_bucket(ns / 1000, RDPS_REL_LATENCY_BUCKETS)], 1);
    uint64_t srtt = rs->srtt_ns ? rs->srtt_ns : 1;
    uint64_t quarters = ns < UINT64_MAX / 4 ? ns * 4 / srtt : UINT64_MAX / srtt;
    unsigned b = quarters < RDPS_REL_RTT_LINEAR
                     ? (unsigned)quarters
                     : RDPS_REL_RTT_LINEAR - 1 +
                           log2_bucket(quarters / RDPS_REL_RTT_LINEAR,
                                       RDPS_REL_RTT_BUCKETS - RDPS_REL_RTT_LINEAR + 1);
    RDPS_REL_COUNT(r, rs, repair_rtts[b], 1);
}

/* The bucket below which fraction q of the n-bucket histogram's samples lie; -1: no sample. */
static int hist_quantile(const uint64_t *hist, unsigned n, double q)
{
    uint64_t total = 0;
    for (unsigned b = 0; b < n; b++)
        total += hist[b];
    if (total == 0)
        return -1;
    uint64_t seen = 0;
    for (unsigned b = 0; b < n; b++) {
        seen += hist[b];
        if ((double)seen >= q * (double)total)
            return (int)b;
    }
    return (int)n - 1;
}

uint64_t rdps__rel_latency_quantile_us(const uint64_t hist[RDPS_REL_LATENCY_BUCKETS], double q)
{
    int b = hist_quantile(hist, RDPS_REL_LATENCY_BUCKETS, q);
    return b < 0 ? 0 : 1ull << b;
}

uint64_t rdps__rel_rtts_quantile_milli(const uint64_t hist[RDPS_REL_RTT_BUCKETS], double q)
{
    int b = hist_quantile(hist, RDPS_REL_RTT_BUCKETS, q);
    if (b < 0)
        return 0;
    if (b < RDPS_REL_RTT_LINEAR)
        return (uint64_t)(b + 1) * 250;
    return (RDPS_REL_RTT_LINEAR * 250ull) << (b - RDPS_REL_RTT_LINEAR + 1);
}

/* ---- gap ranges --------------------------------------------------------------------------------
 */

/* [start, start + count) of stream si went missing (again): track it, due for a first NAK. */
static void gap_add(struct rdps_reasm *r, int32_t si, uint32_t start, uint32_t count,
                    uint64_t now_ns)
{
    struct rdps_reasm_stream *s = &r->streams[si];
    struct rdps_rel_stream *rs = &r->rel[si];
    uint64_t due = first_nak_due(r, rs, now_ns);
    bool tail =
        s->gaps.count == 0 || rdps__seq_ge(start, rdps__range_end(&s->gaps.r[s->gaps.count - 1]));
    if (tail) {
        if (rdps__ranges_append(&s->gaps, start, count, now_ns, due) < 0) {
            struct rdps_gap_range *last = &s->gaps.r[s->gaps.count - 1];
            last->count = start + count - last->start; /* full: over-ask */
            RDPS_REL_COUNT(r, rs, range_overflow, 1);
        }
    } else if (!rdps__ranges_insert(&s->gaps, start, count, now_ns, due)) {
        RDPS_REL_COUNT(r, rs, range_overflow, 1);
    }
    rdps__rel_note_due(r, due);
}

/* Moves next_seq up to `upto` (<= consumed + WINDOW): the sequences between are missing. */
static void rel_advance(struct rdps_reasm *r, int32_t si, uint32_t upto, uint64_t now_ns)
{
    struct rdps_reasm_stream *s = &r->streams[si];
    uint32_t first = s->next_seq;
    /* Their slots held sequences before the consumed point: delivered or given up. */
    for (uint32_t q = first; q != upto; q++)
        rdps__reasm_window_clear(s, q);
    s->next_seq = upto;
    gap_add(r, si, first, upto - first, now_ns);
}

/*
 * The repair of a sequence NAKed once, at nak_ns, arrived: ranges NAKed
 * before it and still missing lost their NAK or repair (answered and sent in order). Only a lone
 * receiver (another's NAKs order multicast repairs differently) on a path that does not reorder.
 */
static void repairs_overtaken(struct rdps_reasm *r, int32_t si, uint32_t seq, uint64_t nak_ns,
                              uint64_t now_ns)
{
    struct rdps_reasm_stream *s = &r->streams[si];
    struct rdps_rel_stream *rs = &r->rel[si];
    /* Cheap tests first: the receiver count may ask discovery (a callback). */
    if (rs->reordering || s->gaps.count == 0 || stream_receivers(r, rs) > 1)
        return;
    for (unsigned i = 0; i < s->gaps.count; i++) {
        struct rdps_gap_range *g = &s->gaps.r[i];
        if (g->tries == 0 || g->overtaken || g->lost_reason != 0 || g->nak_ns > nak_ns ||
            (g->nak_ns == nak_ns && !rdps__seq_lt(g->start, seq)))
            continue;
        g->overtaken = 1;
        g->due_ns = now_ns;
        rdps__rel_note_due(r, now_ns);
    }
}

/* A missing sequence arrived: take it out of its range; count how it came. */
static void gap_filled(struct rdps_reasm *r, int32_t si, uint32_t seq, bool repair, uint64_t now_ns)
{
    struct rdps_reasm_stream *s = &r->streams[si];
    struct rdps_rel_stream *rs = &r->rel[si];
    int i = rdps__ranges_find(&s->gaps, seq);
    if (!repair) {
        RDPS_REL_COUNT(r, rs, out_of_order, 1);
        rs->reordering = true; /* this path reorders: NAK later, not what is merely late */
        if (i >= 0 && now_ns > s->gaps.r[i].detect_ns) {
            uint64_t late = now_ns - s->gaps.r[i].detect_ns;
            if (late > r->cfg.rel.reorder_holdoff_ns) /* a straggler sets no more than the cap */
                late = r->cfg.rel.reorder_holdoff_ns;
            uint64_t decayed = rs->reorder_late_ns - rs->reorder_late_ns / 64;
            rs->reorder_late_ns = late > decayed ? late : decayed;
        }
    } else {
        RDPS_REL_COUNT(r, rs, recovered, 1);
    }
    if (i < 0)
        return;
    struct rdps_gap_range *g = &s->gaps.r[i];
    if (repair) {
        latency_record(r, rs, now_ns - g->detect_ns);
        /* Karn: a sample only from a range NAKed once. Except a lone receiver's first: while
         * its estimate is the default, its retries come at a few of those, and on a path slower
         * than that every range was NAKed again before its repair came, so no sample was ever
         * taken (a traced 1 % loss run on rxe: each hole NAKed 5-8 times and repaired as often
         * in the first 0.5 s, and all its 128 duplicate repairs came then). Its first repair
         * then gives the time since the range was found missing, when it was first NAKed: an
         * upper bound, replaced by the Karn samples as they come. */
        bool lone_first = rs->c.rtt_samples == 0 && stream_receivers(r, rs) <= 1;
        bool bootstrap = lone_first && g->tries > 1 && now_ns > g->detect_ns;
        if ((g->tries == 1 && g->nak_ns != 0 && now_ns > g->nak_ns) || bootstrap) {
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
            RDPS_REL_COUNT(r, rs, rtt_samples, 1);
            if (rs->srtt_ns < before / 2 || rs->c.rtt_samples == 1)
                retries_rescale(r, si);
        }
        if (g->tries == 0 && !g->suppressed) {
            g->suppressed = 1;
            RDPS_REL_COUNT(r, rs, naks_suppressed, 1);
        }
        /* The rest of the range is likely being repaired right behind this frame. */
        uint64_t hold = now_ns + rs->srtt_ns;
        if (g->due_ns < hold)
            g->due_ns = hold;
    }
    /* Asked once: the repair answers that NAK (after a retry it may answer an earlier one, and
     * ranges NAKed in between would be taken for lost: 3x the duplicate repairs at 20 % loss). */
    uint64_t nak_ns = g->tries == 1 ? g->nak_ns : 0;
    if (rdps__ranges_remove_seq(&s->gaps, i, seq) < 0)
        RDPS_REL_COUNT(r, rs, range_overflow, 1); /* no slot to split: the range stays whole */
    if (repair && nak_ns != 0)
        repairs_overtaken(r, si, seq, nak_ns, now_ns);
}

/* ---- consumed point and release ----------------------------------------------------------------
 */

static void emit_loss(struct rdps_reasm *r, int32_t si, uint32_t first, uint32_t count,
                      rdps_loss_reason reason)
{
    struct rdps_reasm_stream *s = &r->streams[si];
    struct rdps_rel_stream *rs = &r->rel[si];
    if (count == 0)
        return;
    if (reason == RDPS__LOSS_NONE) { /* before the join: never part of this receiver's stream */
        RDPS_REL_COUNT(r, rs, join_skipped, count);
        return;
    }
    RDPS_REL_COUNT(r, rs, lost[reason], count);
    RDPS_REL_COUNT(r, rs, loss_events, 1);
    if (r->cfg.rel.on_loss != NULL) {
        struct rdps_reasm_loss loss = {
            .source = &s->source,
            .session_id = s->session_id,
            .topic_id = s->topic_id,
            .first_seq = first,
            .count = count,
            .reason = reason,
        };
        r->cfg.rel.on_loss(r->cfg.user, &loss);
    }
}

/*
 * Gives up [consumed, upto): marks it received (nothing more is admitted),
 * forgets its ranges and the partials wholly inside, raises one loss event,
 * and moves the consumed point. Past next_seq the window restarts at upto.
 */
static void skip_to(struct rdps_reasm *r, int32_t si, uint32_t upto, rdps_loss_reason reason)
{
    struct rdps_reasm_stream *s = &r->streams[si];
    struct rdps_rel_stream *rs = &r->rel[si];
    uint32_t from = rs->consumed;
    if (rdps__seq_gt(upto, s->next_seq)) {
        rdps__reasm_stream_drop_partials(r, s);
        memset(s->received, 0xFF, sizeof(s->received));
        s->gaps.count = 0;
        s->next_seq = upto;
        s->loss_floor = upto;
    } else {
        for (uint32_t q = from; q != upto; q++)
            rdps__reasm_window_set(s, q);
        rdps__ranges_trim_below(&s->gaps, upto);
        for (int32_t pi = s->partial_head, after; pi != NO_INDEX; pi = after) {
            const struct rdps_reasm_partial *p = &r->partials[pi];
            after = p->stream_next;
            uint32_t last = p->frag_size != 0 ? p->first_seq + p->frag_total - 1 : p->anchor_seq;
            if (rdps__seq_lt(last, upto))
                rdps__reasm_partial_release(r, pi);
        }
    }
    rs->consumed = upto;
    if (reason != RDPS__LOSS_NONE)
        rs->progressed = true;
    emit_loss(r, si, from, upto - from, reason);
}

/* The first missing sequence of partial p's span at or after the consumed point, as a range. */
static const struct rdps_gap_range *partial_hole(const struct rdps_reasm_stream *s,
                                                 const struct rdps_reasm_partial *p)
{
    if (s->gaps.count == 0)
        return NULL;
    const struct rdps_gap_range *g = &s->gaps.r[0];
    return g->start - p->first_seq < p->frag_total ? g : NULL;
}

/* Why a missing range cannot be had any more, or RDPS__LOSS_NONE. */
static rdps_loss_reason range_verdict(const struct rdps_rel_stream *rs,
                                      const struct rdps_gap_range *g)
{
    if (g->lost_reason != 0)
        return (rdps_loss_reason)g->lost_reason;
    if (rs->have_trail && rdps__seq_lt(g->start, rs->trail))
        return RDPS_LOSS_BELOW_RING;
    return RDPS__LOSS_NONE;
}

/*
 * Tracks the stream up to `upto`, clipped to what this receiver can park past its consumed
 * point: the sequences in between are missing (NAKed when due). Nothing beyond is tracked, so
 * repairs never evict parked messages (a receiver back from a stall NAKed a whole 1024 window
 * and evicted what the repairs brought: seen in the simulated fabric).
 */
static void rel_track(struct rdps_reasm *r, int32_t si, uint32_t upto, uint64_t now_ns)
{
    uint32_t limit = r->rel[si].consumed + rdps__rel_status_window(r, si);
    if (rdps__seq_gt(upto, limit))
        upto = limit;
    if (rdps__seq_gt(upto, r->streams[si].next_seq))
        rel_advance(r, si, upto, now_ns);
}

/*
 * Delivers, in sequence order, every message at the consumed point, and gives
 * up what can no longer come. Returns the messages delivered.
 */
static int rel_release(struct rdps_reasm *r, int32_t si)
{
    struct rdps_reasm_stream *s = &r->streams[si];
    struct rdps_rel_stream *rs = &r->rel[si];
    int delivered = 0;
    while (!rs->joining) {
        uint32_t c = rs->consumed;
        if (c == s->next_seq) {
            if (rs->have_trail && rdps__seq_lt(c, rs->trail))
                skip_to(r, si, rs->trail, RDPS_LOSS_BELOW_RING);
            break;
        }
        if (!rdps__reasm_window_test(s, c)) {
            rdps__ranges_trim_below(&s->gaps, c); /* a merged range may reach below c */
            if (s->gaps.count == 0 || s->gaps.r[0].start != c) {
                /* Every missing sequence has a range; restore one rather than stall. */
                gap_add(r, si, c, 1, r->now_ns);
                continue;
            }
            const struct rdps_gap_range *g = &s->gaps.r[0];
            rdps_loss_reason why = range_verdict(rs, g);
            if (why == RDPS__LOSS_NONE)
                break;
            uint32_t end = rdps__range_end(g);
            if (why == RDPS_LOSS_BELOW_RING && rdps__seq_lt(rs->trail, end))
                end = rs->trail;
            skip_to(r, si, end, why);
            continue;
        }
        int32_t pi = rdps__rel_partial_at(r, si, c);
        if (pi == NO_INDEX) { /* admitted, but no message could hold it */
            skip_to(r, si, c + 1, RDPS_LOSS_TOO_LARGE);
            continue;
        }
        struct rdps_reasm_partial *p = &r->partials[pi];
        if (p->frag_size == 0 || p->first_seq != c) {
            /* Its first fragments are behind the consumed point: given up, or (nothing
             * delivered or given up yet) sent before this receiver joined. */
            uint32_t end = p->frag_size != 0 ? p->first_seq + p->frag_total : c + 1;
            rdps__reasm_partial_release(r, pi);
            skip_to(r, si, end, rs->progressed ? RDPS_LOSS_PARTIAL_MESSAGE : RDPS__LOSS_NONE);
            continue;
        }
        if (p->complete) {
            uint32_t end = c + p->frag_total;
            rs->consumed = end;
            rs->progressed = true;
            RDPS_REL_COUNT(r, rs, delivered, 1);
            delivered += rdps__reasm_deliver_partial(r, pi);
            continue;
        }
        const struct rdps_gap_range *hole = partial_hole(s, p);
        rdps_loss_reason why = hole != NULL ? range_verdict(rs, hole) : RDPS__LOSS_NONE;
        if (why == RDPS__LOSS_NONE)
            break;
        uint32_t end = c + p->frag_total;
        rdps__reasm_partial_release(r, pi);
        skip_to(r, si, end, why);
    }
    rdps__rel_status_progress(r, rs);
    return delivered;
}

/* ---- hooks from the reassembler ----------------------------------------------------------------
 */

void rdps__rel_stream_start(struct rdps_reasm *r, int32_t si, const struct rdps_frame_header *h,
                            uint64_t now_ns)
{
    struct rdps_rel_stream *rs = &r->rel[si];
    memset(rs, 0, offsetof(struct rdps_rel_stream, seq_partial)); /* the map is checked on use */
    rs->consumed = h->seq;
    rs->status_consumed = h->seq;
    rs->receivers = r->cfg.rel.receivers;
    rs->srtt_ns = r->cfg.rel.default_rtt_ns;
    rs->status_now = true;
    /* Joining: a from_oldest stream first seen through DATA waits for a heartbeat's trail; one
     * first seen through a heartbeat takes it from that heartbeat (rdps__rel_on_heartbeat). */
    rs->joining = r->streams[si].from_oldest;
    if (rs->joining) {
        rs->join_deadline_ns = now_ns + r->cfg.rel.join_wait_ns;
        rdps__rel_note_due(r, rs->join_deadline_ns);
    }
    rs->prev = NO_INDEX;
    rs->next = r->rel_head;
    if (r->rel_head != NO_INDEX)
        r->rel[r->rel_head].prev = si;
    r->rel_head = si;
    rdps__rel_note_due(r, now_ns);
}

void rdps__rel_stream_stop(struct rdps_reasm *r, int32_t si)
{
    struct rdps_reasm_stream *s = &r->streams[si];
    struct rdps_rel_stream *rs = &r->rel[si];
    if (!rs->joining && rdps__seq_lt(rs->consumed, s->next_seq))
        emit_loss(r, si, rs->consumed, s->next_seq - rs->consumed, RDPS_LOSS_SESSION_DROPPED);
    s->gaps.count = 0;
    if (rs->prev != NO_INDEX)
        r->rel[rs->prev].next = rs->next;
    else
        r->rel_head = rs->next;
    if (rs->next != NO_INDEX)
        r->rel[rs->next].prev = rs->prev;
    s->reliable = false;
}

int rdps__rel_on_data(struct rdps_reasm *r, int32_t si, const struct rdps_frame_view *v,
                      uint64_t now_ns)
{
    struct rdps_reasm_stream *s = &r->streams[si];
    struct rdps_rel_stream *rs = &r->rel[si];
    const struct rdps_frame_header *h = &v->hdr;
    uint32_t seq = h->seq;
    rdps__rel_heard(r, rs);
    if (rdps__seq_lt(seq, rs->consumed)) {
        r->counters.duplicates++;
        RDPS_REL_COUNT(r, rs, duplicates, 1);
        return 0;
    }
    rdps__rel_learn_head(r, si, v);
    if (!rdps__rel_within_window(r, si, seq - rs->consumed)) {
        /* Nothing slides over an undelivered sequence: beyond the advertised window, drop and
         * ask later. */
        RDPS_REL_COUNT(r, rs, beyond_window, 1);
        rel_track(r, si, seq, now_ns);
        return 0;
    }
    bool repair = (h->flags & RDPS_FRAME_F_RETRANSMIT) != 0;
    if (rdps__seq_ge(seq, s->next_seq)) {
        if (seq != s->next_seq)
            rel_advance(r, si, seq, now_ns);
        rdps__reasm_window_set(s, seq);
        s->next_seq = seq + 1;
    } else {
        if (rdps__reasm_window_test(s, seq)) {
            r->counters.duplicates++;
            RDPS_REL_COUNT(r, rs, duplicates, 1);
            return 0;
        }
        rdps__reasm_window_set(s, seq);
        gap_filled(r, si, seq, repair, now_ns);
    }
    if ((h->flags & (RDPS_FRAME_F_BEGIN | RDPS_FRAME_F_END)) !=
        (RDPS_FRAME_F_BEGIN | RDPS_FRAME_F_END))
        return rdps__reasm_reassemble(r, si, v, now_ns);
    if (!rs->joining && seq == rs->consumed) {
        rs->consumed = seq + 1;
        rs->progressed = true;
        RDPS_REL_COUNT(r, rs, delivered, 1);
        int n = rdps__reasm_deliver_single(r, s, v);
        return n + rel_release(r, si);
    }
    if (rdps__reasm_park_single(r, si, v, now_ns) != NO_INDEX)
        RDPS_REL_COUNT(r, rs, parked, 1);
    return rel_release(r, si);
}

void rdps__rel_delivered_in_order(struct rdps_reasm *r, int32_t si)
{
    struct rdps_rel_stream *rs = &r->rel[si];
    rdps__rel_heard(r, rs);
    rs->consumed++;
    rs->progressed = true;
    RDPS_REL_COUNT(r, rs, delivered, 1);
    rdps__rel_status_progress(r, rs);
}

int rdps__rel_complete(struct rdps_reasm *r, int32_t pi)
{
    struct rdps_reasm_partial *p = &r->partials[pi];
    int32_t si = p->stream;
    p->complete = true;
    if (r->rel[si].joining || p->first_seq != r->rel[si].consumed)
        RDPS_REL_COUNT(r, &r->rel[si], parked, 1);
    return rel_release(r, si);
}

void rdps__rel_partial_evicted(struct rdps_reasm *r, int32_t pi)
{
    const struct rdps_reasm_partial *p = &r->partials[pi];
    int32_t si = p->stream;
    struct rdps_reasm_stream *s = &r->streams[si];
    struct rdps_rel_stream *rs = &r->rel[si];
    RDPS_REL_COUNT(r, rs, park_evicted, 1);
    if (p->frag_size == 0) {
        if (rdps__seq_ge(p->anchor_seq, rs->consumed)) {
            rdps__reasm_window_clear(s, p->anchor_seq);
            gap_add(r, si, p->anchor_seq, 1, r->now_ns);
        }
        return;
    }
    const uint64_t *bits = r->frag_bits + (size_t)pi * r->frag_words;
    for (uint32_t i = 0; i < p->frag_total; i++) {
        uint32_t seq = p->first_seq + i;
        if (!((bits[i / 64] >> (i % 64)) & 1) || rdps__seq_lt(seq, rs->consumed))
            continue;
        rdps__reasm_window_clear(s, seq);
        gap_add(r, si, seq, 1, r->now_ns);
    }
}

void rdps__rel_unreceive(struct rdps_reasm *r, int32_t si, uint32_t seq)
{
    if (rdps__seq_ge(seq, r->rel[si].consumed))
        gap_add(r, si, seq, 1, r->now_ns);
}

int rdps__rel_on_heartbeat(struct rdps_reasm *r, int32_t si, const struct rdps_frame_header *h,
                           uint64_t now_ns)
{
    struct rdps_reasm_stream *s = &r->streams[si];
    struct rdps_rel_stream *rs = &r->rel[si];
    RDPS_REL_COUNT(r, rs, heartbeats, 1);
    rdps__rel_heard(r, rs);
    uint32_t next = h->seq;
    bool has_trail = (h->flags & RDPS_FRAME_F_RELIABLE) != 0;
    uint32_t trail = next - h->msg_len;
    rs->hb_ts_ns = h->timestamp_ns;
    rs->hb_rx_ns = now_ns;
    rs->hb_echo = true;
    if (!rs->has_hb_next || rdps__seq_gt(next, rs->hb_next)) {
        rs->hb_next = next;
        rs->has_hb_next = true;
    }
    if (rs->joining) {
        /* from_oldest: start at the trail, as far back as the window reaches. */
        rs->joining = false;
        uint32_t start = has_trail ? trail : rs->consumed;
        uint32_t oldest = s->next_seq - RDPS_REASM_WINDOW;
        if (rdps__seq_lt(start, oldest))
            start = oldest;
        if (rdps__seq_lt(start, rs->consumed)) {
            for (uint32_t q = start; q != rs->consumed; q++)
                rdps__reasm_window_clear(s, q);
            gap_add(r, si, start, rs->consumed - start, now_ns);
            rs->consumed = start;
            rs->status_consumed = start;
        }
    }
    /* The trail only moves forward (heartbeats may be reordered). */
    if (has_trail && (!rs->have_trail || rdps__seq_gt(trail, rs->trail)) &&
        rdps__seq_le(trail, next)) {
        rs->trail = trail;
        rs->have_trail = true;
    }
    int delivered = 0;
    for (int round = 0; round < 2; round++) {
        /* Tail loss: the publisher sent everything before next. */
        rel_track(r, si, next, now_ns);
        delivered += rel_release(r, si); /* below the trail is given up at once */
    }
    /* A heartbeat means the publisher is idle: it has nothing to send or waits on a window.
     * Report now when everything it sent is held, or when this receiver could take more than
     * it sent: the STATUS that carried the position may have been lost, and a window-blocked
     * publisher only sends heartbeats. Without this it waited for the next quarter window of
     * progress or the status interval (100 ms; seen in the simulated fabric). */
    if (!rs->status_now &&
        (rdps__seq_le(next, rs->consumed) || rdps__rel_within_window(r, si, next - rs->consumed))) {
        rs->status_now = true;
        rdps__rel_note_due(r, now_ns);
    }
    return delivered;
}

/* ---- poll: NAKs, STATUS, deadlines -------------------------------------------------------------
 */

static void send_nak(struct rdps_reasm *r, int32_t si, const struct rdps_seq_range *ranges,
                     unsigned n, bool overtaken, uint64_t wall_ns)
{
    struct rdps_reasm_stream *s = &r->streams[si];
    struct rdps_rel_stream *rs = &r->rel[si];
    uint8_t frame[RDPS_FRAME_NAK_OFF_RANGES + RDPS_FRAME_NAK_MAX_RANGES * RDPS_FRAME_NAK_RANGE_LEN];
    int len = rdps__frame_encode_nak_flags(frame, sizeof(frame), s->session_id, s->topic_id,
                                           r->cfg.rel.receiver_id, ranges, n, wall_ns,
                                           overtaken ? RDPS_FRAME_F_RETRANSMIT : 0);
    if (len < 0)
        return;
    RDPS_REL_COUNT(r, rs, naks_sent, 1);
    RDPS_REL_COUNT(r, rs, nak_ranges_sent, n);
    r->cfg.rel.send(r->cfg.user, &s->source, s->session_id, frame, (size_t)len);
}

static inline uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

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
static uint64_t poll_naks(struct rdps_reasm *r, int32_t si, uint64_t now_ns, uint64_t wall_ns,
                          uint64_t heard, bool idle, bool *gave_up)
{
    struct rdps_reasm_stream *s = &r->streams[si];
    struct rdps_rel_stream *rs = &r->rel[si];
    const struct rdps_rel_recv_config *cfg = &r->cfg.rel;
    /* Ranges whose repair was overtaken go in their own NAK, flagged: answered in the linger. */
    struct rdps_seq_range ranges[2][RDPS_FRAME_NAK_MAX_RANGES];
    unsigned n[2] = {0, 0};
    uint64_t next = UINT64_MAX;
    uint64_t silence_grace = REL_SILENCE_GRACE_INTERVALS * cfg->status_interval_ns;
    rdps__ranges_trim_below(&s->gaps, rs->consumed);
    for (unsigned i = 0; i < s->gaps.count; i++) {
        struct rdps_gap_range *g = &s->gaps.r[i];
        if (range_verdict(rs, g) != RDPS__LOSS_NONE) {
            *gave_up = true;
            continue;
        }
        if (cfg->loss_deadline_ns != 0) {
            if (now_ns - g->detect_ns >= cfg->loss_deadline_ns) {
                g->lost_reason = RDPS_LOSS_DEADLINE;
                *gave_up = true;
                continue;
            }
            next = min_u64(next, g->detect_ns + cfg->loss_deadline_ns);
        }
        if (now_ns < g->due_ns) {
            next = min_u64(next, g->due_ns);
            continue;
        }
        if (idle)
            continue; /* asked again when the publisher is heard (rdps__rel_heard) */
        if (r->rel_rx_backlog && g->tries > 0 && !g->overtaken &&
            now_ns - g->due_ns < retry_wait(r, rs, g->tries)) {
            if (!g->held)
                RDPS_REL_COUNT(r, rs, retries_held, 1);
            g->held = 1;
            next = now_ns; /* asked again once the queue is processed */
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
            RDPS_REL_COUNT(r, rs, overtaken, 1);
        g->overtaken = 0;
        g->held = 0;
        bool unanswered = g->tries > 0 && heard < g->nak_ns && now_ns - heard >= silence_grace;
        g->tries++;
        g->nak_ns = now_ns;
        g->due_ns = retry_due(r, rs, g->tries, now_ns);
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
    for (unsigned k = 2; k-- > 0;)
        if (n[k] > 0)
            send_nak(r, si, ranges[k], n[k], k == 1, wall_ns);
    return next;
}

uint64_t rdps__reasm_rel_poll(struct rdps_reasm *r, uint64_t now_ns, uint64_t wall_ns)
{
    if (r->rel == NULL)
        return UINT64_MAX;
    r->now_ns = now_ns;
    if (now_ns < r->rel_due_ns)
        return r->rel_due_ns;
    uint64_t next = UINT64_MAX;
    r->rel_due_ns = UINT64_MAX; /* hooks run below may lower it again */
    for (int32_t si = r->rel_head; si != NO_INDEX; si = r->rel[si].next) {
        struct rdps_rel_stream *rs = &r->rel[si];
        if (rs->joining) {
            if (now_ns < rs->join_deadline_ns) {
                next = min_u64(next, rs->join_deadline_ns);
                continue;
            }
            rs->joining = false; /* no heartbeat came: start at the live position */
            rel_release(r, si);
        }
        if (rs->extend) {
            rs->extend = false;
            rel_track(r, si, rs->hb_next, now_ns);
            rs->extend_tried = true;
            rs->extend_consumed = rs->consumed;
            rs->extend_next = r->streams[si].next_seq;
        }
        /* A publisher silent for idle_ns (gone, or never there: a forged stream) hears nothing
         * more from this stream until it is heard again; before that, STATUS backs off. */
        uint64_t heard = r->streams[si].last_active_ns;
        bool idle = r->cfg.rel.idle_ns != 0 && now_ns - heard >= r->cfg.rel.idle_ns;
        if (idle && !rs->idle)
            RDPS_REL_COUNT(r, rs, idle, 1);
        rs->idle = idle;
        bool gave_up = false;
        next = min_u64(next, poll_naks(r, si, now_ns, wall_ns, heard, idle, &gave_up));
        if (gave_up)
            rel_release(r, si);
        if (idle) {
            rs->silent = true;
            continue;
        }
        uint64_t wait = rdps__rel_status_wait(r, si);
        if ((rs->status_now && heard >= rs->status_ns) || now_ns - rs->status_ns >= wait) {
            rdps__rel_send_status(r, si, now_ns, wall_ns);
            wait = rdps__rel_status_wait(r, si);
        }
        next = min_u64(next, rs->status_ns + wait);
    }
    if (next < r->rel_due_ns)
        r->rel_due_ns = next;
    return r->rel_due_ns;
}

/* ---- inputs and stats --------------------------------------------------------------------------
 */

void rdps__reasm_rel_set_backlog(struct rdps_reasm *r, bool backlog)
{
    r->rel_rx_backlog = backlog;
}

void rdps__reasm_rel_set_credits(struct rdps_reasm *r, uint32_t credits)
{
    r->rel_credits = credits;
}

static int32_t rel_lookup(const struct rdps_reasm *r, const struct rdps_source *source,
                          uint32_t session_id)
{
    if (r->rel == NULL)
        return NO_INDEX;
    int32_t si = rdps__reasm_stream_lookup(r, source, session_id);
    return si != NO_INDEX && r->streams[si].reliable ? si : NO_INDEX;
}

int rdps__reasm_rel_set_receivers(struct rdps_reasm *r, const struct rdps_source *source,
                                  uint32_t session_id, uint32_t receivers)
{
    int32_t si = rel_lookup(r, source, session_id);
    if (si == NO_INDEX)
        return RDPS_ENOENT;
    r->rel[si].receivers = receivers ? receivers : 1;
    return 0;
}

static void stream_info(const struct rdps_reasm *r, int32_t si, struct rdps_rel_stream_info *out)
{
    const struct rdps_rel_stream *rs = &r->rel[si];
    memset(out, 0, sizeof(*out));
    out->consumed_seq = rs->consumed;
    out->next_seq = r->streams[si].next_seq;
    out->trail_seq = rs->trail;
    out->gap_ranges = r->streams[si].gaps.count;
    out->receivers = rs->receivers;
    out->srtt_ns = rs->srtt_ns;
    out->have_trail = rs->have_trail;
    out->joining = rs->joining;
    out->counters = rs->c;
}

int rdps__reasm_rel_stream_info(const struct rdps_reasm *r, const struct rdps_source *source,
                                uint32_t session_id, struct rdps_rel_stream_info *out)
{
    int32_t si = rel_lookup(r, source, session_id);
    if (si == NO_INDEX)
        return RDPS_ENOENT;
    stream_info(r, si, out);
    return 0;
}

unsigned rdps__reasm_rel_streams(const struct rdps_reasm *r, uint64_t topic_id,
                                 rdps_rel_stream_fn fn, void *user)
{
    unsigned n = 0;
    if (r->rel == NULL)
        return 0;
    for (int32_t si = r->rel_head; si != NO_INDEX; si = r->rel[si].next) {
        const struct rdps_reasm_stream *s = &r->streams[si];
        if (s->topic_id != topic_id)
            continue;
        struct rdps_rel_stream_info info;
        stream_info(r, si, &info);
        fn(user, &s->source, s->session_id, &info);
        n++;
    }
    return n;
}

const struct rdps_rel_recv_counters *rdps__reasm_rel_counters(const struct rdps_reasm *r)
{
    return &r->rel_totals;
}
