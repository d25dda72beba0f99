/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_reasm.c - the receive engine's entry: decodes or predicts each frame, finds its stream and
 * drives the layers below it; unreliable streams here, reliable ones in rdps_rel_recv.c (model:
 * rdps_reasm.h). */
#include "rdps_reasm.h"

#include <stdlib.h>
#include <string.h>

#include "rdps_batch.h"
#include "rdps_endian.h"
#include "rdps_error.h"
#include "rdps_seq.h"

/* How far ahead a heartbeat may restart an unreliable stream (on_heartbeat). */
#define RDPS_HEARTBEAT_RESTART_MAX (1u << 30)

void rdps__reasm_config_default(struct rdps_reasm_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->max_sessions = 256;
    cfg->max_partials = 64;
    cfg->reasm_cap_bytes = 64u * 1024u * 1024u;
    cfg->chunk_bytes = 64u * 1024u;
    cfg->min_frag_payload = 256 - RDPS_FRAME_HEADER_LEN;
    cfg->max_streams_per_source = 64;
    cfg->max_partials_per_source = 16;
    cfg->max_bytes_per_source = 32u * 1024u * 1024u;
    cfg->partial_timeout_ns = 1000000000ull;
    cfg->reorder_allowance_ns = 2000000ull;
    cfg->max_gap_ranges = 32;
    rdps__frame_limits_default(&cfg->limits);
    cfg->rel.receivers = 1;
    cfg->rel.default_rtt_ns = 1000000ull;
    cfg->rel.nak_backoff_rtts = 4;
    cfg->rel.nak_retry_max_ns = 25000000ull;
    cfg->rel.nak_max_tries = 200; /* with 25 ms apart: the 5 s deadline decides */
    cfg->rel.loss_deadline_ns = 5000000000ull;
    cfg->rel.status_interval_ns = 100000000ull;
    cfg->rel.idle_ns = 5000000000ull;
    /* 5 of a publisher's longest heartbeat gaps: at one, a slow host's joiner started live. */
    /* Two announcement intervals and more: the heartbeat an announcement draws may come before
     * the receiver's multicast join did, and the next announcement draws another. */
    cfg->rel.join_wait_ns = 2500000000ull;
}

int rdps__reasm_init(struct rdps_reasm *r, const struct rdps_reasm_config *cfg)
{
    memset(r, 0, sizeof(*r));
    if (cfg->deliver == NULL)
        return rdps__set_err(RDPS_EINVAL, "reasm_init: no deliver callback");
    if (cfg->rel.enabled &&
        (cfg->rel.send == NULL || cfg->rel.nak_max_tries == 0 || cfg->rel.receivers == 0 ||
         cfg->rel.default_rtt_ns == 0 || cfg->rel.status_interval_ns == 0))
        return rdps__set_err(RDPS_EINVAL,
                             "reasm_init: reliable mode needs a send callback, nak_max_tries, "
                             "receivers, default_rtt_ns and status_interval_ns above 0");
    r->cfg = *cfg;
    struct rdps_rx_assembly_config ac = {
        .max_streams = cfg->max_sessions,
        .max_partials = cfg->max_partials,
        .arena_bytes = cfg->reasm_cap_bytes,
        .chunk_bytes = cfg->chunk_bytes,
        .min_frag_payload = cfg->min_frag_payload,
        .max_msg_len = cfg->limits.max_msg_len,
        .max_partials_per_host = cfg->max_partials_per_source,
        .max_bytes_per_host = cfg->max_bytes_per_source,
        .partial_timeout_ns = cfg->partial_timeout_ns,
        .deliver = cfg->deliver,
        .deliver_batch = cfg->deliver_batch,
        .user = cfg->user,
        .on_evicted = rdps__rel_partial_evicted,
        .evicted_user = r,
        .counters = &r->counters,
    };
    int rc = rdps__rx_asm_init(&r->assembly, &ac);
    if (rc < 0)
        return rc;
    struct rdps_rx_streams_config sc = {
        .max_sessions = cfg->max_sessions,
        .max_streams_per_host = cfg->max_streams_per_source,
        .max_gap_ranges = cfg->max_gap_ranges,
        .park_per_host = r->assembly.host_max_partials,
        .chunks_per_host = r->assembly.host_max_chunks,
        .idle_timeout_ns = cfg->session_idle_timeout_ns,
        .hash_seed = cfg->hash_seed,
        .counters = &r->counters,
    };
    struct rdps_rx_gaps_config gc = {
        .max_streams = cfg->max_sessions,
        .allowance_ns = cfg->reorder_allowance_ns,
        .on_gap = cfg->on_gap,
        .user = cfg->user,
        .counters = &r->counters,
    };
    if ((rc = rdps__rx_streams_init(&r->streams, &sc)) < 0 ||
        (rc = rdps__rx_gaps_init(&r->gaps, &gc)) < 0 ||
        (cfg->rel.enabled &&
         (rc = rdps__rx_rec_init(&r->rec, &cfg->rel, cfg->max_sessions, cfg->user)) < 0) ||
        (rc = rdps__rel_rx_parity_init(r)) < 0) {
        rdps__reasm_fini(r);
        return rc;
    }
    return 0;
}

void rdps__reasm_fini(struct rdps_reasm *r)
{
    if (r == NULL)
        return;
    rdps__rx_rec_fini(&r->rec);
    rdps__rx_par_fini(&r->par);
    rdps__rx_gaps_fini(&r->gaps);
    rdps__rx_streams_fini(&r->streams);
    rdps__rx_asm_fini(&r->assembly);
}

/* ---- streams ------------------------------------------------------------------------------- */

static inline struct rdps_rx_stream *stream_of(struct rdps_reasm *r, int32_t si)
{
    return &r->streams.streams[si];
}

/* Takes stream si out of every layer, then out of the table. */
static void stream_remove(struct rdps_reasm *r, int32_t si)
{
    struct rdps_rx_stream *s = stream_of(r, si);
    if (s->reliable)
        rdps__rel_stream_stop(r, si);
    else
        rdps__rx_gaps_flush(&r->gaps, si, &s->track, &s->id);
    rdps__rx_asm_stream_drop(&r->assembly, si, true);
    rdps__rx_streams_remove(&r->streams, si);
}

/* How a new stream whose first frame is h is handled (enum rdps_reasm_want). */
static int want_mode(const struct rdps_reasm *r, const struct rdps_source *source,
                     const struct rdps_frame_header *h)
{
    if (!r->cfg.rel.enabled || !(h->flags & RDPS_FRAME_F_RELIABLE))
        return RDPS_REASM_WANT_UNRELIABLE;
    if (r->cfg.want_reliable != NULL)
        return r->cfg.want_reliable(r->cfg.user, source, h->session_id, h->topic_id);
    return r->cfg.rel.from_oldest ? RDPS_REASM_WANT_OLDEST : RDPS_REASM_WANT_LIVE;
}

/* A new stream for (source, session) of frame h, making room as the quotas say. */
static int32_t stream_create(struct rdps_reasm *r, const struct rdps_source *source,
                             const struct rdps_frame_header *h, uint64_t now_ns)
{
    int32_t victim = rdps__rx_streams_victim(&r->streams, source);
    if (victim != RDPS_RX_NONE)
        stream_remove(r, victim);
    bool accepted =
        r->cfg.accept == NULL || r->cfg.accept(r->cfg.user, source, h->session_id, h->topic_id);
    int want = want_mode(r, source, h);
    int32_t si = rdps__rx_streams_create(&r->streams, source, h, accepted,
                                         want != RDPS_REASM_WANT_UNRELIABLE,
                                         want == RDPS_REASM_WANT_OLDEST, now_ns);
    struct rdps_rx_stream *s = stream_of(r, si);
    rdps__rx_asm_stream_start(&r->assembly, si, s->src, s->host, &s->id, s->reliable);
    if (s->reliable)
        rdps__rel_stream_start(r, si, h, now_ns);
    else /* a message begun before its first frame is not the stream's to count */
        rdps__rx_gaps_stream_start(&r->gaps, si, rdps__frame_ordinal_before(h));
    return si;
}

/* ---- sequence window (unreliable streams) ------------------------------------------------- */

/* The sequence pushed out of stream si's window by a push or forget was lost: counted, and its
 * pending range reported now. */
__attribute__((noinline, cold)) static void window_lost(struct rdps_reasm *r, int32_t si,
                                                        uint32_t lost)
{
    struct rdps_rx_stream *s = stream_of(r, si);
    r->counters.lost_seqs += lost;
    rdps__rx_gaps_leaving(&r->gaps, si, &s->track, &s->id, s->track.next - RDPS_SEQ_WINDOW);
}

/* next arrived in order. */
static inline void window_push(struct rdps_reasm *r, int32_t si, struct rdps_rx_stream *s)
{
    if (__builtin_expect(rdps__track_push(&s->track), 0))
        window_lost(r, si, 1);
}

/*
 * Moves next forward to `upto` (a new frame's sequence, or a heartbeat's next): the messages
 * between hold ordinals [ord_next, ord_hi). Up to a window away the skipped sequences are a
 * pending gap; further is a reset (reported at once): nothing is slid over, partials go, and the
 * window restarts at `upto` with every earlier sequence marked received, so nothing from before
 * the jump is admitted.
 */
static void window_advance(struct rdps_reasm *r, int32_t si, uint32_t upto, uint32_t ord_hi,
                           uint64_t now_ns)
{
    struct rdps_rx_stream *s = stream_of(r, si);
    struct rdps_rx_track *t = &s->track;
    uint32_t first = t->next;
    uint32_t distance = upto - first;
    if (distance >= RDPS_SEQ_WINDOW) {
        r->counters.session_resets++;
        rdps__rx_gaps_flush(&r->gaps, si, t, &s->id);
        rdps__rx_asm_stream_drop(&r->assembly, si, true);
        rdps__track_restart(t, upto);
        rdps__rx_gaps_report(&r->gaps, si, &s->id, first, distance, s->ord_next, ord_hi);
        return;
    }
    uint32_t lost = 0;
    while (t->next != upto)
        lost += rdps__track_forget(t);
    if (lost > 0)
        window_lost(r, si, lost);
    rdps__rx_gaps_note(&r->gaps, si, t, &s->id, first, distance, s->ord_next, ord_hi, now_ns);
}

/* Admits frame h into the stream's window: true if it is new, false (counted) if not. */
static bool window_admit_slow(struct rdps_reasm *r, int32_t si, const struct rdps_frame_header *h,
                              uint64_t now_ns)
{
    struct rdps_rx_stream *s = stream_of(r, si);
    struct rdps_rx_track *t = &s->track;
    uint32_t seq = h->seq;
    int32_t d = rdps__seq_diff(seq, t->next);
    if (d > 0) {
        window_advance(r, si, seq, rdps__frame_ordinal_before(h), now_ns);
        window_push(r, si, s);
        s->ord_next = rdps__frame_ordinal_after(h);
        return true;
    }
    if (d < -(int32_t)RDPS_SEQ_WINDOW) {
        r->counters.stale++;
        return false;
    }
    if (rdps__track_test(t, seq)) {
        r->counters.duplicates++;
        return false;
    }
    rdps__track_set(t, seq); /* a later copy is a duplicate, kept or not */
    if (!rdps__rx_gaps_fill(&r->gaps, si, t, &s->id, seq, rdps__frame_ordinal_before(h),
                            rdps__frame_ordinal_after(h), now_ns))
        return false; /* reported missing already: its messages were counted lost */
    r->counters.reordered++;
    return true;
}

static inline bool window_admit(struct rdps_reasm *r, int32_t si, const struct rdps_frame_header *h,
                                uint64_t now_ns)
{
    struct rdps_rx_stream *s = stream_of(r, si);
    if (h->seq == s->track.next) { /* in order: the common case */
        window_push(r, si, s);
        s->ord_next = rdps__frame_ordinal_after(h);
        return true;
    }
    return window_admit_slow(r, si, h, now_ns);
}

/* A fragment of unreliable stream si (admitted). */
static int unreliable_fragment(struct rdps_reasm *r, int32_t si, const struct rdps_frame_view *v,
                               uint64_t now_ns)
{
    int32_t pi;
    switch (rdps__rx_asm_fragment(&r->assembly, si, v, now_ns, &pi)) {
    case RDPS_RX_DELIVERED:
        return 1;
    case RDPS_RX_CONFLICT: { /* a forged frame must not use up the sequence of the real one */
        struct rdps_rx_stream *s = stream_of(r, si);
        rdps__track_clear(&s->track, v->hdr.seq);
        rdps__rx_gaps_reopen(&r->gaps, si, &s->track, &s->id, v->hdr.seq, s->ord_next, now_ns);
        return 0;
    }
    default:
        return 0;
    }
}

/* ---- entry points -------------------------------------------------------------------------- */

/* Frames of a stream whose accept hook said no, or with another topic than the stream's. */
static int drop_topic(struct rdps_reasm *r, const struct rdps_rx_stream *s)
{
    if (s->topic_ok == 0)
        r->counters.filtered++;
    else
        r->counters.topic_mismatch++;
    return 0;
}

static int on_heartbeat(struct rdps_reasm *r, const struct rdps_source *source,
                        const struct rdps_frame_view *v, uint64_t now_ns)
{
    const struct rdps_frame_header *h = &v->hdr;
    r->counters.heartbeats++;
    /* Only a reliable receiver lets heartbeats create streams (late join at the live position
     * or from the publisher's oldest retained sequence); otherwise they carry nothing to keep. */
    int32_t si = rdps__rx_streams_find(&r->streams, source, h->session_id, now_ns);
    if (si == RDPS_RX_NONE) {
        if (want_mode(r, source, h) == RDPS_REASM_WANT_UNRELIABLE) {
            r->counters.heartbeats_unknown++;
            return 0;
        }
        si = stream_create(r, source, h, now_ns);
    }
    struct rdps_rx_stream *s = stream_of(r, si);
    if (h->topic_id != s->topic_ok)
        return drop_topic(r, s);
    if (s->reliable)
        return rdps__rel_on_heartbeat(r, si, v, now_ns);
    /* seq is the next sequence the publisher will use: anything before it is due. */
    if (!rdps__seq_gt(h->seq, s->track.next))
        return 0;
    uint32_t ahead = h->seq - s->track.next;
    if (ahead >= RDPS_SEQ_WINDOW) {
        /* A receive queue that overflowed to the end of a burst heard nothing of a tail longer
         * than the window: the heartbeat restarts the stream as a DATA frame that far would, the
         * tail's messages reported (a window reset). Data-less and cheap to forge, heartbeats
         * alone never bring the window around onto what it delivered: a restart needs the
         * window to have moved since the stream's start or last restart, and stays within a
         * quarter of the sequence circle (a replay of what came before is then stale). */
        if (ahead >= RDPS_HEARTBEAT_RESTART_MAX || s->track.next == s->track.loss_floor) {
            r->counters.heartbeat_jumps++;
            return 0;
        }
    }
    window_advance(r, si, h->seq, h->ordinal, now_ns);
    s->ord_next = h->ordinal;
    return 0;
}

/* Every frame the fast path below does not take. */
static int on_frame_slow(struct rdps_reasm *r, const struct rdps_source *source,
                         const struct rdps_frame_view *v, uint64_t now_ns)
{
    const struct rdps_frame_header *h = &v->hdr;
    if (h->type != RDPS_FRAME_DATA) {
        if (h->type == RDPS_FRAME_HEARTBEAT)
            return on_heartbeat(r, source, v, now_ns);
        if (h->type == RDPS_FRAME_PARITY)
            return rdps__rel_on_parity(r, source, v, now_ns);
        r->counters.control_frames++;
        return 0;
    }
    r->counters.data_frames++;
    int32_t si = rdps__rx_streams_find(&r->streams, source, h->session_id, now_ns);
    if (si == RDPS_RX_NONE) {
        /* A repair (for other receivers) is no live position to join at. */
        if (r->cfg.rel.enabled &&
            (h->flags & (RDPS_FRAME_F_RELIABLE | RDPS_FRAME_F_RETRANSMIT)) ==
                (RDPS_FRAME_F_RELIABLE | RDPS_FRAME_F_RETRANSMIT) &&
            want_mode(r, source, h) != RDPS_REASM_WANT_OLDEST) {
            r->rec.totals.repairs_before_join++;
            return 0;
        }
        si = stream_create(r, source, h, now_ns);
    }
    struct rdps_rx_stream *s = stream_of(r, si);
    if (h->topic_id != s->topic_ok)
        return drop_topic(r, s);
    if (s->reliable) { /* then the decode of a block it made decodable, if it did */
        int n = rdps__rel_on_data_frame(r, si, v, now_ns);
        return r->par_pending == RDPS_RX_NONE ? n : n + rdps__rel_parity_pending(r, si, now_ns);
    }
    if (!window_admit(r, si, h, now_ns))
        return 0;
    if ((h->flags & (RDPS_FRAME_F_BEGIN | RDPS_FRAME_F_END)) !=
        (RDPS_FRAME_F_BEGIN | RDPS_FRAME_F_END))
        return unreliable_fragment(r, si, v, now_ns);
    return rdps__rx_asm_deliver_single(&r->assembly, &stream_of(r, si)->single, v);
}

/*
 * The common case inline: a single-datagram DATA message, next in sequence,
 * from the stream of the previous frame. Anything else goes the slow way.
 */
static inline int on_frame(struct rdps_reasm *r, const struct rdps_source *source,
                           const struct rdps_frame_view *v, uint64_t now_ns)
{
    const struct rdps_frame_header *h = &v->hdr;
    int32_t si = r->streams.lru_head;
    if (h->type != RDPS_FRAME_DATA || si == RDPS_RX_NONE ||
        (h->flags & (RDPS_FRAME_F_BEGIN | RDPS_FRAME_F_END)) !=
            (RDPS_FRAME_F_BEGIN | RDPS_FRAME_F_END))
        return on_frame_slow(r, source, v, now_ns);
    struct rdps_rx_stream *s = stream_of(r, si);
    if (h->seq != s->track.next || h->session_id != s->id.session_id ||
        h->topic_id != s->topic_ok || s->reliable || !rdps__source_equal(&s->id.source, source))
        return on_frame_slow(r, source, v, now_ns);
    r->counters.data_frames++;
    s->last_active_ns = now_ns;
    window_push(r, si, s);
    s->ord_next = rdps__frame_ordinal_after(h);
    return rdps__rx_asm_deliver_single(&r->assembly, &stream_of(r, si)->single, v);
}

int rdps__reasm_on_frame(struct rdps_reasm *r, const struct rdps_source *source,
                         const struct rdps_frame_view *v, uint64_t now_ns)
{
    r->now_ns = r->rec.now_ns = now_ns;
    return on_frame(r, source, v, now_ns);
}

_Static_assert(RDPS_FRAME_OFF_VERSION == 0 && RDPS_FRAME_OFF_TYPE == 1 &&
                   RDPS_FRAME_OFF_FLAGS == 2 && RDPS_FRAME_OFF_SESSION_ID == 4 &&
                   RDPS_FRAME_OFF_TOPIC_ID == 8 && RDPS_FRAME_OFF_SEQ == 16 &&
                   RDPS_FRAME_OFF_MSG_LEN == 20 && RDPS_FRAME_OFF_FRAG_OFFSET == 24 &&
                   RDPS_FRAME_OFF_RESERVED == 28 && RDPS_FRAME_OFF_TIMESTAMP_NS == 32 &&
                   RDPS_FRAME_OFF_ORDINAL == 40 && RDPS_FRAME_OFF_COUNT == 44 &&
                   RDPS_FRAME_HEADER_LEN == 48 && RDPS_FRAME_VERSION != 0,
               "header prediction reads the header as six little-endian words");

/* A reliable stream takes a predicted frame only when nothing waits before it (its consumed
 * point is next: no hole, nothing parked; it is not joining; no loss waits for its message
 * count) and nothing falls due with it (a STATUS, tracking more): that frame takes the full path,
 * once in a quarter of the credits. (A message streaming at the consumed point is made of
 * fragments, which are never predicted.) */
static inline bool rel_predictable(const struct rdps_reasm *r, int32_t si,
                                   const struct rdps_rx_stream *s)
{
    const struct rdps_rx_rel *rs = &r->rec.rel[si];
    return s->track.consumed == s->track.next && !rs->joining && !rs->silent && !rs->loss_pending &&
           !rdps__rx_rec_progress_is_due(&r->rec, rs, s->track.next + 1, s->track.consumed + 1);
}

/* Fills the stream's delivery template for a predicted frame (w0: its first header word). */
static inline struct rdps_reasm_msg_info *predicted_info(struct rdps_reasm *r, int32_t si,
                                                         const uint8_t *buf, uint64_t w0,
                                                         uint32_t seq, uint32_t ordinal)
{
    struct rdps_reasm_msg_info *info = &r->streams.streams[si].single;
    info->first_seq = seq;
    info->ordinal = ordinal;
    info->timestamp_ns = rdps__get_le64(buf + RDPS_FRAME_OFF_TIMESTAMP_NS);
    info->retransmit = (w0 & (uint64_t)RDPS_FRAME_F_RETRANSMIT << 16) != 0;
    info->reliable = (w0 & (uint64_t)RDPS_FRAME_F_RELIABLE << 16) != 0;
    return info;
}

/*
 * Header prediction (after Van Jacobson's TCP fast path). The next frame of
 * the stream that sent the previous one is, most of the time, a
 * datagram of whole messages whose header is known in advance but for two
 * flags (RETRANSMIT, RELIABLE), its length, its timestamp, its ordinal and count. If the raw
 * header is exactly that, every rule of rdps__frame_decode holds by
 * construction (version, DATA, BEGIN|END with offset 0 and a payload that
 * ends the message, msg_len within the limit, reserved 0, the stream's
 * non-zero session and accepted non-zero topic) once a batch's records are checked, so the
 * messages are delivered without the general decoder; on a reliable stream only while its
 * consumed point is next (in order, nothing parked). Returns -1 when the prediction
 * fails: decode as usual.
 */
static inline int predicted_frame(struct rdps_reasm *r, const struct rdps_source *source,
                                  const uint8_t *buf, size_t len, uint64_t now_ns)
{
    int32_t si = r->streams.lru_head;
    if (si == RDPS_RX_NONE || len < RDPS_FRAME_HEADER_LEN || len > UINT32_MAX)
        return -1;
    uint32_t payload_len = (uint32_t)(len - RDPS_FRAME_HEADER_LEN);
    struct rdps_rx_stream *s = stream_of(r, si);
    uint64_t w0 = rdps__get_le64(buf);
    uint64_t free_flags = (uint64_t)(RDPS_FRAME_F_RETRANSMIT | RDPS_FRAME_F_RELIABLE) << 16;
    if ((w0 & ~free_flags) != s->predict_w0 || rdps__get_le64(buf + 8) != s->topic_ok ||
        rdps__get_le64(buf + 16) != (s->track.next | (uint64_t)payload_len << 32) ||
        rdps__get_le64(buf + 24) != 0 || /* frag_offset and reserved */
        !rdps__source_equal(&s->id.source, source))
        return -1;
    const uint8_t *payload = buf + RDPS_FRAME_HEADER_LEN;
    uint32_t count = rdps__get_le32(buf + RDPS_FRAME_OFF_COUNT);
    if (count == 1 ? payload_len > r->cfg.limits.max_msg_len
                   : rdps__batch_check(payload, payload_len, count, r->cfg.limits.max_msg_len) !=
                         RDPS_FRAME_OK)
        return -1; /* the decoder says why */
    /* Nothing but the delivery is called from here (a reliable stream's due STATUS, the lost
     * sequence a push would report: the full path). */
    if (s->reliable && !rel_predictable(r, si, s))
        return -1;
    uint32_t seq = s->track.next;
    if (!rdps__track_push_quiet(&s->track))
        return -1;
    uint32_t ordinal = rdps__get_le32(buf + RDPS_FRAME_OFF_ORDINAL);
    r->counters.data_frames++;
    s->last_active_ns = now_ns;
    s->ord_next = ordinal + count; /* unreliable: after its newest; reliable: its next */
    if (s->reliable) {             /* the consumed point moves over it */
        struct rdps_rx_rel *rs = &r->rec.rel[si];
        s->track.consumed++;
        rs->progressed = true;
        rs->ord_known = true;
        if (!rs->has_ord_seen || rdps__seq_gt(ordinal + count, rs->ord_seen)) {
            rs->ord_seen =
                ordinal + count; /* the newest datagram seen (a drop's loss ends there) */
            rs->has_ord_seen = true;
        }
        RDPS_REL_COUNT(&r->rec, rs, delivered, count);
    }
    struct rdps_reasm_msg_info *info = predicted_info(r, si, buf, w0, seq, ordinal);
    if (count != 1)
        return rdps__rx_asm_deliver_records(&r->assembly, info, payload, payload_len, count);
    info->msg_len = payload_len;
    r->counters.msgs_delivered++;
    r->counters.bytes_delivered += payload_len;
    r->cfg.deliver(r->cfg.user, payload, payload_len, info);
    return 1;
}

/* Every frame the prediction does not take: decoded in full. Out of line, so the predicted path
 * keeps a small frame (no decoded view on its stack, few registers to save). */
static inline int input_decoded(struct rdps_reasm *r, const struct rdps_source *source,
                                const uint8_t *buf, size_t len, uint64_t now_ns)
{
    r->now_ns = r->rec.now_ns = now_ns; /* the predicted path needs no time but its frame's */
    struct rdps_frame_view v;
    enum rdps_frame_reject reason = rdps__frame_decode(buf, len, &r->cfg.limits, &v);
    if (reason != RDPS_FRAME_OK) {
        r->counters.bad_frames[reason]++;
        return RDPS_EBADFRAME;
    }
    return on_frame(r, source, &v, now_ns);
}

int rdps__reasm_input(struct rdps_reasm *r, const struct rdps_source *source, const uint8_t *buf,
                      size_t len, uint64_t now_ns)
{
    r->counters.frames_in++;
    r->counters.bytes_in += len;
    int delivered = predicted_frame(r, source, buf, len, now_ns);
    if (delivered >= 0)
        return delivered;
    return input_decoded(r, source, buf, len, now_ns);
}

uint64_t rdps__reasm_expire(struct rdps_reasm *r, uint64_t now_ns)
{
    r->now_ns = r->rec.now_ns = now_ns;
    uint64_t next = rdps__rx_asm_expire(&r->assembly, now_ns);
    next = rdps__rx_gaps_expire(&r->gaps, now_ns, next);
    int32_t si;
    while ((si = rdps__rx_streams_idle(&r->streams, now_ns, &next)) != RDPS_RX_NONE)
        stream_remove(r, si);
    return next;
}
