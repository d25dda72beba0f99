/* SPDX-License-Identifier: BSD-2-Clause */
/* md_recovery.c - late join: hold a channel's packets, import a fitting snapshot, give the held
 * packets back; and build a channel's snapshot from a book. */
#include "md_recovery.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "itch.h"

#define MD_REC_DEFAULT_HELD (64u << 20)
#define HELD_RECORD_HEADER  4u

void md_rec_init(struct md_rec *r, const struct md_rec_config *cfg)
{
    memset(r, 0, sizeof(*r));
    r->cfg = *cfg;
    if (r->cfg.max_held_bytes == 0)
        r->cfg.max_held_bytes = MD_REC_DEFAULT_HELD;
    if (r->cfg.max_ahead == 0)
        r->cfg.max_ahead = MD_REC_DEFAULT_AHEAD;
}

void md_rec_fini(struct md_rec *r)
{
    free(r->held);
    r->held = NULL;
    r->held_used = r->held_cap = r->replay_off = 0;
}

static void drop_held(struct md_rec *r)
{
    r->held_used = 0;
    r->counters.held_packets = r->counters.held_bytes = 0;
}

/* Copies one packet into the held buffer; false when it cannot (cap or memory). */
static bool hold(struct md_rec *r, const uint8_t *data, size_t len)
{
    size_t need = HELD_RECORD_HEADER + len;
    if (len > UINT32_MAX || need > r->cfg.max_held_bytes - r->held_used)
        return false;
    if (r->held_used + need > r->held_cap) {
        size_t cap = r->held_cap ? r->held_cap : 64 * 1024;
        while (cap < r->held_used + need)
            cap *= 2;
        if (cap > r->cfg.max_held_bytes)
            cap = r->cfg.max_held_bytes;
        uint8_t *p = realloc(r->held, cap);
        if (p == NULL)
            return false;
        r->held = p;
        r->held_cap = cap;
    }
    uint32_t n = (uint32_t)len;
    memcpy(r->held + r->held_used, &n, HELD_RECORD_HEADER);
    memcpy(r->held + r->held_used + HELD_RECORD_HEADER, data, len);
    r->held_used += need;
    r->counters.held_packets++;
    r->counters.held_bytes += len;
    return true;
}

/* Past the horizon by more than the window (never true before the first packet). */
static bool too_far(const struct md_rec *r, uint64_t seq)
{
    return r->horizon != 0 && seq > r->horizon && seq - r->horizon > r->cfg.max_ahead;
}

/* Whether the channel takes this packet: within the window, or the MD_REC_JUMP_RUN-th of
 * consecutive packets that continue each other past it. Moves the horizon. */
static bool plausible(struct md_rec *r, const struct md_packet_view *v)
{
    uint64_t end = v->seq + v->count; /* heartbeat, end: the sequence it names */
    if (too_far(r, v->seq)) {
        r->run = r->run > 0 && v->seq == r->run_next ? r->run + 1 : 1;
        r->run_next = end;
        if (r->run < MD_REC_JUMP_RUN) {
            r->counters.packets_implausible++;
            return false;
        }
        r->counters.jumps++;
    }
    r->run = 0;
    if (end > r->horizon)
        r->horizon = end;
    return true;
}

enum md_rec_action md_rec_on_packet(struct md_rec *r, const struct md_packet_view *v,
                                    const uint8_t *data, size_t len)
{
    if (!plausible(r, v))
        return MD_REC_REFUSED;
    if (r->state == MD_REC_LIVE)
        return MD_REC_APPLY;
    bool data_packet = v->kind == MD_PACKET_DATA;
    if (r->state == MD_REC_NEW) {
        if (data_packet && v->seq == 1) {
            r->state = MD_REC_LIVE;
            return MD_REC_APPLY;
        }
        r->state = MD_REC_RECOVERING;
        r->first_seq = v->seq;
        if (data_packet && !hold(r, data, len)) {
            r->counters.overflows++; /* larger than the cap: the snapshot must cover it */
            r->first_seq = v->seq + v->count;
        }
        return MD_REC_NEED_SNAPSHOT;
    }
    if (!data_packet)
        return MD_REC_HELD; /* nothing to hold: the sequence it names is still to come */
    if (!hold(r, data, len)) {
        /* Out of room: start again from this packet; the snapshot must now reach it. */
        r->counters.overflows++;
        drop_held(r);
        r->first_seq = v->seq;
        if (!hold(r, data, len)) {
            r->counters.overflows++;
            r->first_seq = v->seq + v->count;
        }
    }
    return MD_REC_HELD;
}

/* Every order of the snapshot as an Add Order, every symbol's VWAP. */
static void import_snapshot(struct md_rec *r, const struct md_snap *s, struct md_book *book)
{
    for (uint32_t i = 0; i < s->n_symbols; i++) {
        const struct md_snap_symbol *sym = &s->symbols[i];
        struct md_vwap vw = {
            .notional_hi = sym->vwap_num_hi, .notional_lo = sym->vwap_num, .shares = sym->vwap_den};
        if (md_book_restore_vwap(book, (uint16_t)sym->locate, &vw) < 0)
            r->counters.import_refused++;
    }
    for (uint32_t i = 0; i < s->n_orders; i++) {
        const struct md_snap_order *o = &s->orders[i];
        struct itch_msg m = {.type = ITCH_ADD_ORDER, .stock_locate = (uint16_t)o->locate};
        m.u.A.order_ref = o->ref;
        m.u.A.side = o->side;
        m.u.A.shares = o->shares;
        m.u.A.price = o->price;
        memset(m.u.A.stock, ' ', sizeof(m.u.A.stock));
        if (md_book_apply(book, &m) < 0)
            r->counters.import_refused++;
        else
            r->counters.imported_orders++;
    }
}

enum md_rec_action md_rec_on_snapshot(struct md_rec *r, const struct md_snap *s,
                                      struct md_book *book)
{
    if (r->state != MD_REC_RECOVERING || s->channel != r->cfg.channel) {
        r->counters.snapshots_ignored++;
        return MD_REC_IGNORED;
    }
    if (too_far(r, s->seq)) {
        r->counters.snapshots_implausible++;
        return MD_REC_IGNORED;
    }
    if (s->seq + 1 < r->first_seq) {
        r->counters.snapshots_stale++;
        return MD_REC_NEED_SNAPSHOT;
    }
    import_snapshot(r, s, book);
    r->counters.snapshots_applied++;
    r->resume_seq = s->seq + 1;
    r->replay_off = 0;
    r->state = MD_REC_LIVE;
    return MD_REC_REPLAY;
}

bool md_rec_next_held(struct md_rec *r, const uint8_t **data, size_t *len)
{
    if (r->state != MD_REC_LIVE || r->replay_off >= r->held_used) {
        md_rec_fini(r);
        return false;
    }
    uint32_t n;
    memcpy(&n, r->held + r->replay_off, HELD_RECORD_HEADER);
    *data = r->held + r->replay_off + HELD_RECORD_HEADER;
    *len = n;
    r->replay_off += HELD_RECORD_HEADER + n;
    return true;
}

uint64_t md_rec_resume_seq(const struct md_rec *r)
{
    return r->resume_seq;
}

/* ---- feed side ---- */

static bool grow(void **p, uint32_t *cap, uint64_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    if (need > UINT32_MAX)
        return false;
    void *q = realloc(*p, (size_t)need * elem);
    if (q == NULL)
        return false;
    *p = q;
    *cap = (uint32_t)need;
    return true;
}

int md_snap_build(struct md_snap_builder *b, const struct md_book *book, const uint16_t *locates,
                  uint32_t n, uint32_t channel, uint64_t seq)
{
    uint64_t orders = 0;
    for (uint32_t i = 0; i < n; i++)
        orders += md_book_order_count(book, locates[i]);
    if (!grow((void **)&b->symbols, &b->symbols_cap, n ? n : 1, sizeof(*b->symbols)) ||
        !grow((void **)&b->orders, &b->orders_cap, orders ? orders : 1, sizeof(*b->orders)))
        return -ENOMEM;
    uint32_t ns = 0, no = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint16_t locate = locates[i];
        struct md_vwap vw;
        md_book_vwap(book, locate, &vw);
        uint32_t count = md_book_order_count(book, locate);
        if (count == 0 && vw.shares == 0 && vw.notional_hi == 0 && vw.notional_lo == 0)
            continue;
        b->symbols[ns++] = (struct md_snap_symbol){.locate = locate,
                                                   .vwap_num = vw.notional_lo,
                                                   .vwap_num_hi = vw.notional_hi,
                                                   .vwap_den = vw.shares};
        for (uint32_t k = 0; k < count; k++) {
            const struct md_order *o = md_book_order_at(book, locate, k);
            b->orders[no++] = (struct md_snap_order){.ref = o->ref,
                                                     .locate = locate,
                                                     .side = o->side,
                                                     .shares = o->shares,
                                                     .price = o->price};
        }
    }
    b->snap = (struct md_snap){.channel = channel,
                               .seq = seq,
                               .symbols = b->symbols,
                               .n_symbols = ns,
                               .orders = b->orders,
                               .n_orders = no};
    return 0;
}

void md_snap_builder_fini(struct md_snap_builder *b)
{
    free(b->symbols);
    free(b->orders);
    memset(b, 0, sizeof(*b));
}
