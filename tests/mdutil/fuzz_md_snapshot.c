/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_md_snapshot.c - libFuzzer harness: the book-snapshot reassembler on arbitrary parts; every
 * snapshot it completes is checked, encoded again and reassembled to the same content. */
#include <stdlib.h>
#include <string.h>

#include "md_snapshot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_PART_BYTES 8192

static const struct md_snap_asm_config fuzz_config = {
    .max_orders = 2048, .max_symbols = 512, .max_parts = 32, .max_part_bytes = FUZZ_PART_BYTES};

static void check_snapshot(const struct md_snap *s)
{
    if (s->n_orders > fuzz_config.max_orders || s->n_symbols > fuzz_config.max_symbols)
        abort();
    uint8_t seen[(MD_SNAP_LOCATE_MAX + 1) / 8];
    memset(seen, 0, sizeof(seen));
    for (uint32_t i = 0; i < s->n_symbols; i++) {
        uint32_t l = s->symbols[i].locate;
        if (l > MD_SNAP_LOCATE_MAX || (seen[l / 8] & (1u << l % 8)))
            abort();
        seen[l / 8] |= (uint8_t)(1u << l % 8);
    }
    for (uint32_t i = 0; i < s->n_orders; i++) {
        const struct md_snap_order *o = &s->orders[i];
        if ((o->side != 'B' && o->side != 'S') || o->locate > MD_SNAP_LOCATE_MAX ||
            !(seen[o->locate / 8] & (1u << o->locate % 8)))
            abort();
    }
}

/* Whatever the reassembler accepted, our encoder can say again, and says the same. */
static void check_round_trip(const struct md_snap *s)
{
    struct md_snap_plan plan;
    struct md_snap_asm again;
    static uint8_t part[FUZZ_PART_BYTES];
    if (md_snap_plan(s, FUZZ_PART_BYTES, &plan) != 0 || plan.part_count > fuzz_config.max_parts ||
        md_snap_asm_init(&again, &fuzz_config) != 0)
        abort();
    int rc = MD_SNAP_INCOMPLETE;
    for (uint32_t i = 0; i < plan.part_count; i++) {
        size_t len;
        if (md_snap_encode_part(s, &plan, i, part, sizeof(part), &len) != 0)
            abort();
        rc = md_snap_asm_add(&again, part, len);
        if (rc != (i + 1 == plan.part_count ? MD_SNAP_COMPLETE : MD_SNAP_INCOMPLETE))
            abort();
    }
    const struct md_snap *r = md_snap_asm_result(&again);
    if (r == NULL || r->channel != s->channel || r->seq != s->seq || r->n_orders != s->n_orders ||
        r->n_symbols != s->n_symbols)
        abort();
    /* Field by field: the structs have padding. */
    for (uint32_t i = 0; i < s->n_symbols; i++)
        if (r->symbols[i].locate != s->symbols[i].locate ||
            r->symbols[i].vwap_num != s->symbols[i].vwap_num ||
            r->symbols[i].vwap_num_hi != s->symbols[i].vwap_num_hi ||
            r->symbols[i].vwap_den != s->symbols[i].vwap_den)
            abort();
    for (uint32_t i = 0; i < s->n_orders; i++)
        if (r->orders[i].ref != s->orders[i].ref || r->orders[i].locate != s->orders[i].locate ||
            r->orders[i].side != s->orders[i].side || r->orders[i].shares != s->orders[i].shares ||
            r->orders[i].price != s->orders[i].price)
            abort();
    md_snap_asm_fini(&again);
}

/*
 * Input: a sequence of parts, each a 2-byte big-endian length and that many bytes (the last
 * one takes what is left), fed to one reassembler in order. Each part is copied to a buffer
 * of exactly its size.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct md_snap_asm a;
    if (md_snap_asm_init(&a, &fuzz_config) != 0)
        abort();
    size_t off = 0;
    while (off < size) {
        size_t len = size - off;
        if (len >= 2) {
            size_t want = (size_t)data[off] << 8 | data[off + 1];
            off += 2;
            len = want < size - off ? want : size - off;
        }
        uint8_t *part = malloc(len ? len : 1);
        if (part == NULL)
            abort();
        memcpy(part, data + off, len);
        off += len;
        uint64_t refused_before = 0, refused_after = 0;
        for (int e = 0; e < MD_SNAP__ERRORS; e++)
            refused_before += a.counters.rejected[e];
        int rc = md_snap_asm_add(&a, part, len);
        free(part);
        for (int e = 0; e < MD_SNAP__ERRORS; e++)
            refused_after += a.counters.rejected[e];
        if (rc < 0 && (-rc >= MD_SNAP__ERRORS || refused_after != refused_before + 1))
            abort();
        if (rc == MD_SNAP_COMPLETE) {
            const struct md_snap *s = md_snap_asm_result(&a);
            if (s == NULL)
                abort();
            check_snapshot(s);
            check_round_trip(s);
        } else if (md_snap_asm_result(&a) != NULL) {
            abort();
        }
    }
    md_snap_asm_fini(&a);
    return 0;
}
