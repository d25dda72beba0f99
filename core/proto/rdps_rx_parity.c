/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rx_parity.c - the receiver's block store for parity repairs and its decode (model:
 * rdps_rx_parity.h). */
#include "rdps_rx_parity.h"

#include <stdlib.h>
#include <string.h>

#include "rdps_endian.h"
#include "rdps_error.h"
#include "rdps_seq.h"

#define NONE (-1)

int rdps__rx_par_init(struct rdps_rx_parity *par, const struct rdps_rx_parity_config *cfg)
{
    memset(par, 0, sizeof(*par));
    par->cfg = *cfg;
    if (cfg->blocks == 0)
        return 0;
    if (cfg->max_streams == 0 || cfg->blocks_per_stream == 0 || cfg->k_max < 2 ||
        cfg->k_max > RDPS_FEC_MAX_K || (cfg->k_max & (cfg->k_max - 1)) != 0 ||
        cfg->max_frame < RDPS_FRAME_HEADER_LEN + 64 || cfg->max_frame > 0xFFFFu)
        return rdps__set_err(RDPS_EINVAL,
                             "parity: %u records of blocks up to %u (a power of two, 2..%u), "
                             "frames up to %u bytes",
                             cfg->blocks, cfg->k_max, RDPS_FEC_MAX_K, cfg->max_frame);
    par->slot_len = cfg->max_frame - RDPS_FRAME_SYMBOL_OFF + RDPS_FEC_LEN_BYTES;
    par->streams = calloc(cfg->max_streams, sizeof(*par->streams));
    par->blocks = calloc(cfg->blocks, sizeof(*par->blocks));
    par->mem = malloc((size_t)cfg->blocks * cfg->k_max * par->slot_len);
    par->fec = malloc(sizeof(*par->fec));
    par->scratch = malloc((size_t)cfg->k_max * cfg->max_frame);
    if (par->streams == NULL || par->blocks == NULL || par->mem == NULL || par->fec == NULL ||
        par->scratch == NULL) {
        rdps__rx_par_fini(par);
        return rdps__set_err(RDPS_ENOMEM, "parity: out of memory");
    }
    par->fec->k = 0; /* not set up */
    for (uint32_t i = 0; i < cfg->max_streams; i++)
        par->streams[i].last = NONE;
    for (uint32_t b = 0; b < cfg->blocks; b++)
        par->blocks[b].stream = NONE;
    return 0;
}

void rdps__rx_par_fini(struct rdps_rx_parity *par)
{
    free(par->streams);
    free(par->blocks);
    free(par->mem);
    free(par->fec);
    free(par->scratch);
    memset(par, 0, sizeof(*par));
}

static inline uint8_t *slot_of(const struct rdps_rx_parity *par, int32_t bi, uint32_t i)
{
    return par->mem + ((size_t)bi * par->cfg.k_max + i) * par->slot_len;
}

static void block_free(struct rdps_rx_parity *par, int32_t bi)
{
    struct rdps_rx_par_block *b = &par->blocks[bi];
    if (b->stream != NONE)
        par->streams[b->stream].blocks--;
    b->stream = NONE;
}

void rdps__rx_par_set_k(struct rdps_rx_parity *par, int32_t si, uint32_t k)
{
    if (par->streams == NULL)
        return;
    struct rdps_rx_par_stream *s = &par->streams[si];
    if (k > par->cfg.k_max || (k & (k - 1)) != 0 || k == 1)
        k = 0;
    if (k == s->k)
        return;
    rdps__rx_par_stream_stop(par, si); /* another block size: records are of no use */
    s->k = k;
}

void rdps__rx_par_stream_stop(struct rdps_rx_parity *par, int32_t si)
{
    if (par->streams == NULL)
        return;
    for (uint32_t b = 0; b < par->cfg.blocks && par->streams[si].blocks > 0; b++)
        if (par->blocks[b].stream == si)
            block_free(par, (int32_t)b);
    memset(&par->streams[si], 0, sizeof(par->streams[si]));
    par->streams[si].last = NONE;
}

void rdps__rx_par_release_before(struct rdps_rx_parity *par, int32_t si, uint32_t consumed)
{
    if (par->streams == NULL || par->streams[si].blocks == 0)
        return;
    uint32_t k = par->streams[si].k;
    for (uint32_t b = 0; b < par->cfg.blocks && par->streams[si].blocks > 0; b++) {
        const struct rdps_rx_par_block *blk = &par->blocks[b];
        if (blk->stream == si && rdps__seq_le(blk->start + k, consumed))
            block_free(par, (int32_t)b);
    }
}

static int32_t block_find(const struct rdps_rx_parity *par, int32_t si, uint32_t start)
{
    const struct rdps_rx_par_stream *s = &par->streams[si];
    if (s->blocks == 0)
        return NONE;
    int32_t last = s->last; /* the common case: the block of the previous frame */
    if (last >= 0 && par->blocks[last].stream == si && par->blocks[last].start == start)
        return last;
    for (uint32_t b = 0; b < par->cfg.blocks; b++)
        if (par->blocks[b].stream == si && par->blocks[b].start == start)
            return (int32_t)b;
    return NONE;
}

bool rdps__rx_par_has(const struct rdps_rx_parity *par, int32_t si, uint32_t seq)
{
    uint32_t k = par->streams[si].k;
    return k != 0 && block_find(par, si, seq & ~(k - 1)) != NONE;
}

/* A record for stream si's block at start: a free one, the stream's oldest at its cap, else the
 * oldest of all. */
static int32_t block_open(struct rdps_rx_parity *par, int32_t si, uint32_t start, bool whole)
{
    int32_t pick = NONE, own_oldest = NONE, oldest = NONE;
    for (uint32_t b = 0; b < par->cfg.blocks; b++) {
        const struct rdps_rx_par_block *blk = &par->blocks[b];
        if (blk->stream == NONE) {
            pick = (int32_t)b;
            break;
        }
        if (blk->stream == si && (own_oldest == NONE || blk->stamp < par->blocks[own_oldest].stamp))
            own_oldest = (int32_t)b;
        if (oldest == NONE || blk->stamp < par->blocks[oldest].stamp)
            oldest = (int32_t)b;
    }
    if (par->streams[si].blocks >= par->cfg.blocks_per_stream)
        pick = own_oldest;
    if (pick == NONE)
        pick = oldest;
    if (par->blocks[pick].stream != NONE) {
        par->c.records_evicted++;
        block_free(par, pick);
    }
    struct rdps_rx_par_block *b = &par->blocks[pick];
    memset(b, 0, sizeof(*b));
    b->stream = si;
    b->start = start;
    b->whole = whole;
    b->stamp = ++par->stamp;
    par->streams[si].blocks++;
    par->streams[si].last = pick;
    return pick;
}

/* The highest slot holding neither a datagram nor a parity symbol (the caller knows there is
 * one: fewer than k are held). */
static uint32_t free_slot(const struct rdps_rx_par_block *b, uint32_t k)
{
    uint32_t slot = k;
    while (slot-- > 0) {
        bool used = b->have[slot] != 0;
        for (uint32_t p = 0; p < b->parity && !used; p++)
            used = b->pidx[p] == slot;
        if (!used)
            return slot;
    }
    return 0;
}

static bool decodable(const struct rdps_rx_parity *par, const struct rdps_rx_par_block *b,
                      uint32_t k)
{
    return b->parity > 0 && b->frames < k && b->frames + b->parity >= k &&
           par->streams[b->stream].symbol_len != 0;
}

int32_t rdps__rx_par_data(struct rdps_rx_parity *par, int32_t si, uint32_t seq,
                          const uint8_t *frame, uint32_t len, bool fresh, uint32_t consumed)
{
    uint32_t k = par->streams[si].k;
    if (k == 0 || len > par->cfg.max_frame || len < RDPS_FRAME_SYMBOL_OFF)
        return NONE;
    uint32_t start = seq & ~(k - 1), i = seq & (k - 1);
    int32_t bi = block_find(par, si, start);
    if (bi == NONE) {
        rdps__rx_par_release_before(par, si, consumed);
        bi = block_open(par, si, start, fresh);
    }
    par->streams[si].last = bi;
    struct rdps_rx_par_block *b = &par->blocks[bi];
    if (b->have[i] != 0)
        return NONE; /* held */
    if (b->frames + b->parity >= k)
        return NONE; /* decodable or whole already: nothing to keep */
    /* Datagram i lives in slot i; parity symbols in slots no datagram holds. One that holds
     * this datagram's slot moves to a free one (there is one: fewer than k are held). */
    for (uint32_t p = 0; p < b->parity; p++)
        if (b->pidx[p] == i) {
            uint32_t to = free_slot(b, k);
            memcpy(slot_of(par, bi, to), slot_of(par, bi, i), par->streams[si].symbol_len);
            b->pidx[p] = (uint8_t)to;
        }
    memcpy(slot_of(par, bi, i), frame + RDPS_FRAME_SYMBOL_OFF, len - RDPS_FRAME_SYMBOL_OFF);
    b->lens[i] = len - RDPS_FRAME_SYMBOL_OFF;
    b->have[i] = 1;
    b->frames++;
    par->c.frames_kept++;
    return decodable(par, b, k) ? bi : NONE;
}

int32_t rdps__rx_par_parity(struct rdps_rx_parity *par, int32_t si, const struct rdps_frame_view *v)
{
    struct rdps_rx_par_stream *s = &par->streams[si];
    par->c.parity_received++;
    if (s->k == 0 || v->parity_k != s->k || v->payload_len > par->slot_len ||
        (s->symbol_len != 0 && v->payload_len != s->symbol_len)) {
        par->c.parity_bad++;
        return NONE;
    }
    int32_t bi = block_find(par, si, v->hdr.seq);
    if (bi == NONE) {
        par->c.parity_useless++; /* consumed already, or never seen: asked by sequence */
        return NONE;
    }
    struct rdps_rx_par_block *b = &par->blocks[bi];
    if (b->frames + b->parity >= s->k || !b->whole) {
        par->c.parity_useless++;
        return NONE;
    }
    for (uint32_t p = 0; p < b->parity; p++)
        if (b->pindex[p] == v->parity_index) {
            par->c.parity_bad++;
            return NONE;
        }
    uint32_t slot = free_slot(b, s->k);
    s->symbol_len = v->payload_len;
    memcpy(slot_of(par, bi, slot), v->payload, v->payload_len);
    b->pidx[b->parity] = (uint8_t)slot;
    b->pindex[b->parity] = v->parity_index;
    b->parity++;
    par->c.parity_kept++;
    return decodable(par, b, s->k) ? bi : NONE;
}

int32_t rdps__rx_par_missing(const struct rdps_rx_parity *par, int32_t si, uint32_t start)
{
    if (par->streams == NULL || par->streams[si].k == 0)
        return NONE;
    int32_t bi = block_find(par, si, start);
    if (bi == NONE || !par->blocks[bi].whole)
        return NONE;
    const struct rdps_rx_par_block *b = &par->blocks[bi];
    uint32_t held = b->frames + b->parity, k = par->streams[si].k;
    /* Holding k, the block was decoded: a hole left in it is a rebuilt datagram the stream
     * refused (beyond its window, say): asked for by sequence. */
    return held >= k ? NONE : (int32_t)(k - held);
}

int rdps__rx_par_decode(struct rdps_rx_parity *par, int32_t bi, uint32_t session_id,
                        uint64_t topic_id, rdps_rx_par_rebuilt_fn fn, void *user)
{
    struct rdps_rx_par_block *b = &par->blocks[bi];
    const struct rdps_rx_par_stream *s = &par->streams[b->stream];
    uint32_t k = s->k, max_source = s->symbol_len - RDPS_FEC_LEN_BYTES;
    if (par->fec->k != k || par->fec->max_frame != max_source) {
        if (rdps__fec_init(par->fec, k, RDPS_FEC_MAX_PARITY, max_source) < 0) {
            par->fec->k = 0;
            return 0;
        }
    }
    bool have[RDPS_FEC_MAX_K];
    const uint8_t *frames[RDPS_FEC_MAX_K], *parity[RDPS_FEC_MAX_K];
    uint8_t *out[RDPS_FEC_MAX_K];
    uint32_t out_lens[RDPS_FEC_MAX_K];
    for (uint32_t i = 0; i < k; i++) {
        have[i] = b->have[i] == 1;
        frames[i] = slot_of(par, bi, i);
        out[i] = par->scratch + (size_t)i * par->cfg.max_frame + RDPS_FRAME_SYMBOL_OFF;
    }
    for (uint32_t p = 0; p < b->parity; p++)
        parity[p] = slot_of(par, bi, b->pidx[p]);
    int n = rdps__fec_decode(par->fec, have, frames, b->lens, parity, b->pindex, b->parity, out,
                             out_lens);
    if (n <= 0) {
        if (n < 0) /* a forged symbol: the record cannot be trusted */
            par->c.rebuilt_bad++;
        b->whole = false;
        return 0;
    }
    par->c.decodes++;
    /* Every slot is now held: nothing more is kept for this block. */
    bool lost[RDPS_FEC_MAX_K];
    for (uint32_t i = 0; i < k; i++) {
        lost[i] = b->have[i] != 1;
        if (lost[i])
            b->have[i] = 1;
    }
    b->frames = k;
    int rebuilt = 0;
    for (uint32_t i = 0; i < k; i++) {
        if (!lost[i])
            continue;
        uint8_t *frame = out[i] - RDPS_FRAME_SYMBOL_OFF;
        uint32_t len = out_lens[i] + RDPS_FRAME_SYMBOL_OFF;
        if (len < RDPS_FRAME_HEADER_LEN || len > par->cfg.max_frame ||
            !rdps__frame_put_symbol_prefix(frame, len, session_id, topic_id) ||
            rdps__get_le32(frame + RDPS_FRAME_OFF_SEQ) != b->start + i) {
            par->c.rebuilt_bad++;
            continue;
        }
        par->c.rebuilt++;
        rebuilt++;
        fn(user, frame, len);
    }
    return rebuilt;
}

int32_t rdps__rx_par_keep(struct rdps_rx_parity *par, int32_t si, const struct rdps_rx_track *t,
                          const struct rdps_frame_view *v)
{
    uint32_t seq = v->hdr.seq, k = par->streams[si].k;
    bool fresh = false;
    if (k != 0 && !rdps__rx_par_has(par, si, seq)) {
        /* A record opened now is whole when none of the block's earlier sequences came (those
         * before the consumed point came or were given up, unkept). */
        uint32_t b = seq & ~(k - 1);
        fresh = rdps__seq_le(t->consumed, b);
        for (uint32_t q = b; fresh && q != seq; q++)
            fresh = !rdps__track_test(t, q);
    }
    return rdps__rx_par_data(par, si, seq, v->payload - RDPS_FRAME_HEADER_LEN,
                             v->payload_len + RDPS_FRAME_HEADER_LEN, fresh, t->consumed);
}

unsigned rdps__rx_par_by_block(const struct rdps_rx_parity *par, int32_t si,
                               struct rdps_seq_range *ranges, unsigned *n,
                               struct rdps_seq_range *blocks, uint32_t sent)
{
    uint32_t k = rdps__rx_par_k(par, si);
    struct rdps_seq_range plain[RDPS_FRAME_NAK_MAX_RANGES];
    unsigned nb = 0, np = 0, count = *n;
    if (k == 0)
        return 0;
    for (unsigned i = 0; i < count; i++) {
        uint32_t s = ranges[i].start, left = ranges[i].count;
        while (left > 0) {
            uint32_t b = s & ~(k - 1), take = b + k - s;
            if (take > left)
                take = left;
            int32_t need = rdps__seq_le(b + k, sent) ? rdps__rx_par_missing(par, si, b) : -1;
            if (need >= 0) {
                if (need > 0 && (nb == 0 || blocks[nb - 1].start != b) &&
                    nb < RDPS_FRAME_NAK_MAX_RANGES)
                    blocks[nb++] = (struct rdps_seq_range){b, (uint32_t)need};
            } else if (np > 0 && plain[np - 1].start + plain[np - 1].count == s) {
                plain[np - 1].count += take;
            } else if (np < RDPS_FRAME_NAK_MAX_RANGES) { /* else asked at the range's retry */
                plain[np++] = (struct rdps_seq_range){s, take};
            }
            s += take;
            left -= take;
        }
    }
    memcpy(ranges, plain, np * sizeof(plain[0]));
    *n = np;
    return nb;
}

bool rdps__rx_par_wait(const struct rdps_rx_parity *par, int32_t si, uint32_t start, uint32_t count,
                       uint32_t sent)
{
    uint32_t k = rdps__rx_par_k(par, si);
    if (k == 0)
        return false;
    uint32_t last = (start + count - 1u) & ~(k - 1u);
    return rdps__seq_gt(last + k, sent) && rdps__rx_par_missing(par, si, last) >= 0;
}
