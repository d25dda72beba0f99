/* SPDX-License-Identifier: BSD-2-Clause */
/* md_snapshot.c - BookSnapshot parts: the split plan, the encoder from plain arrays and the
 * validating reassembler. */
#include "md_snapshot.h"

#include <errno.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#include "md.pb-c.h"

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
    return b == 0 ? 0 : (a + b - 1) / b;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* First element and count of part `index` for `total` elements split `per_part` at a time. */
static void part_range(uint64_t total, uint64_t per_part, uint64_t index, uint32_t *first,
                       uint32_t *n)
{
    uint64_t start = min_u64(index * per_part, total);
    *first = (uint32_t)start;
    *n = (uint32_t)min_u64(per_part, total - start);
}

int md_snap_plan(const struct md_snap *s, size_t max_part_bytes, struct md_snap_plan *plan)
{
    if (max_part_bytes < MD_SNAP_PART_MIN)
        return -EINVAL;
    uint64_t budget = max_part_bytes - MD_SNAP_PART_OVERHEAD;
    uint64_t orders = s->n_orders, symbols = s->n_symbols;
    uint64_t need = orders * MD_SNAP_ORDER_MAX_BYTES + symbols * MD_SNAP_SYMBOL_MAX_BYTES;
    uint64_t parts = need == 0 ? 1 : ceil_div(need, budget);
    /* Rounding each part's share up costs at most one order and one symbol per part, so this
     * ends by the time parts * (budget - 51) >= need, or at one element of each per part. */
    for (;;) {
        uint64_t opp = ceil_div(orders, parts), spp = ceil_div(symbols, parts);
        if (opp * MD_SNAP_ORDER_MAX_BYTES + spp * MD_SNAP_SYMBOL_MAX_BYTES <= budget) {
            plan->part_count = (uint32_t)parts;
            plan->orders_per_part = (uint32_t)opp;
            plan->symbols_per_part = (uint32_t)spp;
            return 0;
        }
        parts++;
    }
}

int md_snap_encode_part(const struct md_snap *s, const struct md_snap_plan *plan,
                        uint32_t part_index, uint8_t *out, size_t cap, size_t *len)
{
    *len = 0;
    if (part_index >= plan->part_count ||
        (uint64_t)plan->orders_per_part * plan->part_count < s->n_orders ||
        (uint64_t)plan->symbols_per_part * plan->part_count < s->n_symbols)
        return -EINVAL;
    uint32_t o_first, o_n, s_first, s_n;
    part_range(s->n_orders, plan->orders_per_part, part_index, &o_first, &o_n);
    part_range(s->n_symbols, plan->symbols_per_part, part_index, &s_first, &s_n);

    /* One scratch block for the columns: 64-bit ones first, so each array is aligned. */
    size_t bytes = (size_t)s_n * (8 + 8 + 8 + 4) + (size_t)o_n * (8 + 4 + 4 + 4 + 1);
    uint8_t *scratch = malloc(bytes ? bytes : 1);
    if (scratch == NULL)
        return -ENOMEM;
    uint64_t *vwap_num = (uint64_t *)scratch, *vwap_num_hi = vwap_num + s_n;
    uint64_t *vwap_den = vwap_num_hi + s_n, *order_ref = vwap_den + s_n;
    uint32_t *locate = (uint32_t *)(order_ref + o_n), *order_locate = locate + s_n;
    uint32_t *order_shares = order_locate + o_n, *order_price = order_shares + o_n;
    uint8_t *order_side = (uint8_t *)(order_price + o_n);

    int rc = 0;
    for (uint32_t i = 0; i < s_n; i++) {
        const struct md_snap_symbol *sym = &s->symbols[s_first + i];
        if (sym->locate > MD_SNAP_LOCATE_MAX)
            rc = -EINVAL;
        locate[i] = sym->locate;
        vwap_num[i] = sym->vwap_num;
        vwap_num_hi[i] = sym->vwap_num_hi;
        vwap_den[i] = sym->vwap_den;
    }
    for (uint32_t i = 0; i < o_n; i++) {
        const struct md_snap_order *o = &s->orders[o_first + i];
        if (o->locate > MD_SNAP_LOCATE_MAX || (o->side != 'B' && o->side != 'S'))
            rc = -EINVAL;
        order_locate[i] = o->locate;
        order_ref[i] = o->ref;
        order_side[i] = (uint8_t)o->side;
        order_shares[i] = o->shares;
        order_price[i] = o->price;
    }
    if (rc == 0) {
        Rdps__Md__BookSnapshot msg = RDPS__MD__BOOK_SNAPSHOT__INIT;
        msg.channel = s->channel;
        msg.seq = s->seq;
        msg.part_index = part_index;
        msg.part_count = plan->part_count;
        msg.orders_total = s->n_orders;
        msg.orders_per_part = plan->orders_per_part;
        msg.symbols_total = s->n_symbols;
        msg.symbols_per_part = plan->symbols_per_part;
        msg.n_locate = msg.n_vwap_num = msg.n_vwap_num_hi = msg.n_vwap_den = s_n;
        msg.locate = locate;
        msg.vwap_num = vwap_num;
        msg.vwap_num_hi = vwap_num_hi;
        msg.vwap_den = vwap_den;
        msg.n_order_locate = msg.n_order_ref = msg.n_order_shares = msg.n_order_price = o_n;
        msg.order_locate = order_locate;
        msg.order_ref = order_ref;
        msg.order_side.data = order_side;
        msg.order_side.len = o_n;
        msg.order_shares = order_shares;
        msg.order_price = order_price;
        size_t need = rdps__md__book_snapshot__get_packed_size(&msg);
        if (need > cap)
            rc = -ENOSPC;
        else
            *len = rdps__md__book_snapshot__pack(&msg, out);
    }
    free(scratch);
    return rc;
}

const char *md_snap_error_name(int error)
{
    static const char *const names[MD_SNAP__ERRORS] = {
        [MD_SNAP_E_TOO_LARGE] = "too_large", [MD_SNAP_E_DECODE] = "decode",
        [MD_SNAP_E_SHAPE] = "shape",         [MD_SNAP_E_CAP] = "cap",
        [MD_SNAP_E_COLUMNS] = "columns",     [MD_SNAP_E_VALUE] = "value",
        [MD_SNAP_E_LOCATE] = "locate",
    };
    if (error < 0)
        error = -error;
    return error > 0 && error < MD_SNAP__ERRORS ? names[error] : "?";
}

/* ---- reassembly ---- */

/* protobuf-c's allocations while unpacking one part come from the assembler's arena. */
static void *arena_alloc(void *data, size_t size)
{
    struct md_snap_asm *a = data;
    size = (size + alignof(max_align_t) - 1) & ~(alignof(max_align_t) - 1);
    if (size > a->arena_size - a->arena_used)
        return NULL;
    void *p = a->arena + a->arena_used;
    a->arena_used += size;
    return p;
}

static void arena_free(void *data, void *ptr)
{
    (void)data, (void)ptr; /* the arena is rewound before the next part */
}

int md_snap_asm_init(struct md_snap_asm *a, const struct md_snap_asm_config *cfg)
{
    memset(a, 0, sizeof(*a));
    if (cfg->max_orders == 0 || cfg->max_symbols == 0 || cfg->max_parts == 0 ||
        cfg->max_part_bytes < MD_SNAP_PART_MIN || cfg->max_part_bytes > (SIZE_MAX - 16384) / 8)
        return -EINVAL;
    a->cfg = *cfg;
    /* Packed columns decode to at most 8 bytes per input byte, plus the message itself. */
    a->arena_size = cfg->max_part_bytes * 8 + 16384;
    a->orders = calloc(cfg->max_orders, sizeof(*a->orders));
    a->symbols = calloc(cfg->max_symbols, sizeof(*a->symbols));
    a->part_seen = calloc((cfg->max_parts + 7) / 8, 1);
    a->locate_seen = calloc((MD_SNAP_LOCATE_MAX + 1) / 8, 1);
    a->arena = malloc(a->arena_size);
    if (!a->orders || !a->symbols || !a->part_seen || !a->locate_seen || !a->arena) {
        md_snap_asm_fini(a);
        return -ENOMEM;
    }
    return 0;
}

void md_snap_asm_fini(struct md_snap_asm *a)
{
    free(a->orders);
    free(a->symbols);
    free(a->part_seen);
    free(a->locate_seen);
    free(a->arena);
    memset(a, 0, sizeof(*a));
}

void md_snap_asm_reset(struct md_snap_asm *a)
{
    a->active = false;
    a->complete = false;
    a->parts_received = 0;
}

static int refuse(struct md_snap_asm *a, enum md_snap_error why)
{
    a->counters.rejected[why]++;
    return -(int)why;
}

static bool bit_test_set(uint8_t *bits, uint32_t i)
{
    bool was = bits[i / 8] & (1u << (i % 8));
    bits[i / 8] |= (uint8_t)(1u << (i % 8));
    return was;
}

/* Shape, caps, column lengths and values of one decoded part; nothing is stored yet. */
static int check_part(struct md_snap_asm *a, const Rdps__Md__BookSnapshot *m, uint32_t *o_first,
                      uint32_t *o_n, uint32_t *s_first, uint32_t *s_n)
{
    if (m->part_count == 0 || m->part_index >= m->part_count ||
        (uint64_t)m->orders_per_part * m->part_count < m->orders_total ||
        (uint64_t)m->symbols_per_part * m->part_count < m->symbols_total)
        return refuse(a, MD_SNAP_E_SHAPE);
    if (m->part_count > a->cfg.max_parts || m->orders_total > a->cfg.max_orders ||
        m->symbols_total > a->cfg.max_symbols)
        return refuse(a, MD_SNAP_E_CAP);
    part_range(m->orders_total, m->orders_per_part, m->part_index, o_first, o_n);
    part_range(m->symbols_total, m->symbols_per_part, m->part_index, s_first, s_n);
    if (m->n_order_locate != *o_n || m->n_order_ref != *o_n || m->order_side.len != *o_n ||
        m->n_order_shares != *o_n || m->n_order_price != *o_n || m->n_locate != *s_n ||
        m->n_vwap_num != *s_n || m->n_vwap_num_hi != *s_n || m->n_vwap_den != *s_n)
        return refuse(a, MD_SNAP_E_COLUMNS);
    for (uint32_t i = 0; i < *s_n; i++)
        if (m->locate[i] > MD_SNAP_LOCATE_MAX)
            return refuse(a, MD_SNAP_E_VALUE);
    for (uint32_t i = 0; i < *o_n; i++)
        if (m->order_locate[i] > MD_SNAP_LOCATE_MAX ||
            (m->order_side.data[i] != 'B' && m->order_side.data[i] != 'S'))
            return refuse(a, MD_SNAP_E_VALUE);
    return 0;
}

static bool same_snapshot(const struct md_snap_asm *a, const Rdps__Md__BookSnapshot *m)
{
    return a->cur.channel == m->channel && a->cur.seq == m->seq &&
           a->cur.n_orders == m->orders_total && a->cur.n_symbols == m->symbols_total &&
           a->shape.part_count == m->part_count && a->shape.orders_per_part == m->orders_per_part &&
           a->shape.symbols_per_part == m->symbols_per_part;
}

static void start_snapshot(struct md_snap_asm *a, const Rdps__Md__BookSnapshot *m)
{
    a->active = true;
    a->complete = false;
    a->parts_received = 0;
    a->cur.channel = m->channel;
    a->cur.seq = m->seq;
    a->cur.n_orders = m->orders_total;
    a->cur.n_symbols = m->symbols_total;
    a->cur.orders = a->orders;
    a->cur.symbols = a->symbols;
    a->shape.part_count = m->part_count;
    a->shape.orders_per_part = m->orders_per_part;
    a->shape.symbols_per_part = m->symbols_per_part;
    memset(a->part_seen, 0, (m->part_count + 7) / 8);
}

/* All parts are in: symbols unique, and every order's symbol present. */
static bool locates_consistent(struct md_snap_asm *a)
{
    memset(a->locate_seen, 0, (MD_SNAP_LOCATE_MAX + 1) / 8);
    for (uint32_t i = 0; i < a->cur.n_symbols; i++)
        if (bit_test_set(a->locate_seen, a->symbols[i].locate))
            return false;
    for (uint32_t i = 0; i < a->cur.n_orders; i++) {
        uint32_t l = a->orders[i].locate;
        if (!(a->locate_seen[l / 8] & (1u << (l % 8))))
            return false;
    }
    return true;
}

int md_snap_asm_add(struct md_snap_asm *a, const uint8_t *data, size_t len)
{
    if (a->complete)
        md_snap_asm_reset(a);
    if (len > a->cfg.max_part_bytes)
        return refuse(a, MD_SNAP_E_TOO_LARGE);
    ProtobufCAllocator allocator = {.alloc = arena_alloc, .free = arena_free, .allocator_data = a};
    a->arena_used = 0;
    Rdps__Md__BookSnapshot *m = rdps__md__book_snapshot__unpack(&allocator, len, data);
    if (m == NULL)
        return refuse(a, MD_SNAP_E_DECODE);
    uint32_t o_first, o_n, s_first, s_n;
    int rc = check_part(a, m, &o_first, &o_n, &s_first, &s_n);
    if (rc < 0)
        return rc;
    if (a->active && !same_snapshot(a, m)) {
        a->counters.restarts++;
        a->active = false;
    }
    if (!a->active)
        start_snapshot(a, m);
    if (bit_test_set(a->part_seen, m->part_index)) {
        a->counters.duplicates++;
        return MD_SNAP_INCOMPLETE;
    }
    for (uint32_t i = 0; i < s_n; i++)
        a->symbols[s_first + i] = (struct md_snap_symbol){.locate = m->locate[i],
                                                          .vwap_num = m->vwap_num[i],
                                                          .vwap_num_hi = m->vwap_num_hi[i],
                                                          .vwap_den = m->vwap_den[i]};
    for (uint32_t i = 0; i < o_n; i++)
        a->orders[o_first + i] = (struct md_snap_order){.ref = m->order_ref[i],
                                                        .locate = m->order_locate[i],
                                                        .side = (char)m->order_side.data[i],
                                                        .shares = m->order_shares[i],
                                                        .price = m->order_price[i]};
    a->counters.parts++;
    if (++a->parts_received < a->shape.part_count)
        return MD_SNAP_INCOMPLETE;
    if (!locates_consistent(a)) {
        md_snap_asm_reset(a);
        return refuse(a, MD_SNAP_E_LOCATE);
    }
    a->complete = true;
    a->counters.completed++;
    return MD_SNAP_COMPLETE;
}

const struct md_snap *md_snap_asm_result(const struct md_snap_asm *a)
{
    return a->complete ? &a->cur : NULL;
}
