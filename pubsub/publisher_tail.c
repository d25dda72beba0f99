/* SPDX-License-Identifier: BSD-2-Clause */
/* publisher_tail.c - unreliable publishers' tail heartbeats: after a burst, a few heartbeats name
 * the next sequence and ordinal, so a subscriber counts the messages of a lost tail too. */
#include "publisher_internal.h"

#include "rdps_clock.h"

/*
 * An unreliable receiver finds a gap when a later datagram arrives; the datagrams at the end of a
 * burst have none after them. So once a publisher has sent nothing for RDPS_TAIL_FIRST_NS, it
 * sends a HEARTBEAT (seq: its next sequence, ordinal: its next message's) to its destinations,
 * then again RDPS_TAIL_BACKOFF times as long after each, RDPS_TAIL_BEATS in all (1, 4, 13, 40,
 * 121 and 364 ms after the last datagram), then every RDPS_TAIL_IDLE_NS while it stays idle,
 * RDPS_TAIL_IDLE_BEATS times (to 10.4 s); new data starts over. A burst ending in loss is
 * reported within about a millisecond (plus the subscriber's reorder allowance) as a GAP with its
 * exact message count. The idle beats are for a subscriber that heard none of the first ones:
 * its receive queue was full when they came (it overflowed to the end of the burst and the
 * application did not poll for longer than the back-off), or all of them were lost: the next
 * beat after it drains its queue still names the tail (one small datagram a second, where
 * Aeron's idle publications send ten for as long as they live). After them an idle publisher
 * costs nothing (no timer, no counter moving). One deaf for longer cannot know what it missed
 * at the end (rdps(7)). Reliable publishers have heartbeats of their own (rdps_rel_pub.h).
 */
#define RDPS_TAIL_FIRST_NS   1000000ull
#define RDPS_TAIL_BACKOFF    3u
#define RDPS_TAIL_BEATS      6u
#define RDPS_TAIL_IDLE_NS    1000000000ull
#define RDPS_TAIL_IDLE_BEATS 10u
#define RDPS_TAIL_ALL_BEATS  (RDPS_TAIL_BEATS + RDPS_TAIL_IDLE_BEATS)

void rdps__pub_tail_init(rdps_pub_t *pub)
{
    pub->tail_due_ns = UINT64_MAX; /* nothing sent: nothing to tell */
}

static int send_heartbeat(rdps_pub_t *pub)
{
    rdps_ctx_t *ctx = pub->ctx;
    const struct rdps_topic *t = pub->topic;
    uint8_t hb[RDPS_FRAME_HEADER_LEN];
    int len = rdps__frame_encode_heartbeat(hb, sizeof(hb), pub->session_id, t->id, pub->next_seq,
                                           pub->next_ordinal, rdps__clock_realtime_ns(), 0);
    if (len < 0 || t->ndests == 0)
        return len < 0 ? len : 0;
    int rc = rdps__ctx_send_frame_multi(ctx, t->dests, t->ndests, hb, (uint32_t)len);
    if (rc == 0)
        pub->counters.heartbeats_sent++;
    return rc;
}

/* After the beat-th tail heartbeat (0: the first), the next one's delay. */
static uint64_t beat_gap(unsigned beat)
{
    if (beat + 1 >= RDPS_TAIL_BEATS)
        return RDPS_TAIL_IDLE_NS;
    uint64_t gap = RDPS_TAIL_FIRST_NS;
    for (unsigned i = 0; i <= beat; i++)
        gap *= RDPS_TAIL_BACKOFF;
    return gap;
}

uint64_t rdps__pubs_tail_tick(rdps_ctx_t *ctx, uint64_t now_ns)
{
    uint64_t next = UINT64_MAX;
    ctx->tail_data = false;
    for (rdps_pub_t *p = ctx->pubs; p != NULL; p = p->next) {
        if (p->rel != NULL || p->closed)
            continue;
        if (p->tail_sent) { /* data since the last look: the beats start over */
            p->tail_sent = false;
            p->tail_beats = 0;
            p->tail_due_ns = now_ns + RDPS_TAIL_FIRST_NS;
        } else if (p->tail_beats < RDPS_TAIL_ALL_BEATS && now_ns >= p->tail_due_ns) {
            if (p->open.count > 0 || p->claimed) {
                p->tail_due_ns = now_ns + RDPS_TAIL_FIRST_NS; /* data still to go first */
            } else if (send_heartbeat(p) == 0) {
                p->tail_due_ns = now_ns + beat_gap(p->tail_beats);
                p->tail_beats++;
            } else {
                p->tail_due_ns = now_ns + RDPS_TAIL_FIRST_NS; /* the send queue was full */
            }
        }
        if (p->tail_beats < RDPS_TAIL_ALL_BEATS && p->tail_due_ns < next)
            next = p->tail_due_ns;
    }
    ctx->tail_deadline_ns = next;
    return next;
}

void rdps__pub_tail_final(rdps_pub_t *pub)
{
    /* Data since the last tick, or beats of the back-off still to come after it. */
    bool owed =
        pub->tail_sent || (pub->tail_due_ns != UINT64_MAX && pub->tail_beats < RDPS_TAIL_BEATS);
    if (pub->rel != NULL || !owed || pub->open.count > 0)
        return;
    (void)send_heartbeat(pub); /* posted at once; a full send queue: none */
}
