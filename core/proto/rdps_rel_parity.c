/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rel_parity.c - the reliable receiver's parity path: a block made decodable by a frame or
 * a parity datagram is decoded and its rebuilt datagrams fed as repairs (rdps_rel_recv.h,
 * Parity repairs; the block store: rdps_rx_parity.h). */
#include "rdps_reasm.h"
#include "rdps_rel_recv.h"

int rdps__rel_rx_parity_init(struct rdps_reasm *r)
{
    const struct rdps_rel_recv_config *rel = &r->cfg.rel;
    struct rdps_rx_parity_config pc = {
        .max_streams = r->cfg.max_sessions,
        .blocks = rel->enabled ? rel->parity_blocks : 0,
        .blocks_per_stream = rel->parity_blocks_per_stream ? rel->parity_blocks_per_stream : 16,
        .k_max = rel->parity_k_max ? rel->parity_k_max : 64,
        .max_frame = rel->parity_max_frame ? rel->parity_max_frame : 1024,
    };
    r->rec.par = &r->par;
    r->par_pending = RDPS_RX_NONE;
    return rdps__rx_par_init(&r->par, &pc);
}

struct rebuilt_ctx {
    struct rdps_reasm *r;
    int32_t si;
    uint64_t now_ns;
    int delivered;
};

/* A datagram rebuilt from parity: decoded like a received one, taken as a repair. */
static void feed_rebuilt(void *user, const uint8_t *frame, uint32_t len)
{
    struct rebuilt_ctx *c = user;
    struct rdps_frame_view v;
    if (rdps__frame_decode(frame, len, &c->r->cfg.limits, &v) != RDPS_FRAME_OK ||
        v.hdr.type != RDPS_FRAME_DATA) {
        c->r->par.c.rebuilt_bad++;
        return;
    }
    struct rdps_rx_rel *rs = &c->r->rec.rel[c->si];
    RDPS_REL_COUNT(&c->r->rec, rs, parity_rebuilt, 1);
    c->delivered += rdps__rel_on_data_frame(c->r, c->si, &v, c->now_ns);
}

/* Decodes record bi of stream si and feeds what it rebuilt; returns the messages delivered. */
static int parity_decode(struct rdps_reasm *r, int32_t si, int32_t bi, uint64_t now_ns)
{
    const struct rdps_rx_ident *id = &r->streams.streams[si].id;
    struct rebuilt_ctx c = {r, si, now_ns, 0};
    r->par_feeding = true;
    (void)rdps__rx_par_decode(&r->par, bi, id->session_id, id->topic_id, feed_rebuilt, &c);
    r->par_feeding = false;
    rdps__rx_par_release_before(&r->par, si, r->streams.streams[si].track.consumed);
    return c.delivered;
}

int rdps__rel_parity_pending(struct rdps_reasm *r, int32_t si, uint64_t now_ns)
{
    int32_t bi = r->par_pending;
    r->par_pending = RDPS_RX_NONE;
    return r->par_feeding ? 0 : parity_decode(r, si, bi, now_ns);
}

int rdps__rel_on_parity(struct rdps_reasm *r, const struct rdps_source *source,
                        const struct rdps_frame_view *v, uint64_t now_ns)
{
    /* Only for a reliable stream this receiver has (a parity datagram never starts one). */
    int32_t si = rdps__rx_streams_find(&r->streams, source, v->hdr.session_id, now_ns);
    r->counters.parity_frames++;
    if (si == RDPS_RX_NONE || !r->streams.streams[si].reliable)
        return 0;
    if (v->hdr.topic_id != r->streams.streams[si].topic_ok) {
        r->counters.topic_mismatch++; /* or refused by the accept hook: either way, not ours */
        return 0;
    }
    struct rdps_rx_rel *rs = &r->rec.rel[si];
    rdps__rx_rec_heard(&r->rec, rs);
    if (!rs->parity)
        return 0;
    uint64_t kept = r->par.c.parity_kept;
    int32_t bi = rdps__rx_par_parity(&r->par, si, v);
    if (r->par.c.parity_kept != kept && bi == RDPS_RX_NONE)
        rdps__rx_rec_block_heard(&r->rec, si, &r->streams.streams[si].track, v->hdr.seq,
                                 v->parity_k, now_ns);
    return bi != RDPS_RX_NONE ? parity_decode(r, si, bi, now_ns) : 0;
}
