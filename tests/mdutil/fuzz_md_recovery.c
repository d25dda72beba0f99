/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_md_recovery.c - libFuzzer harness for a late joiner's channel recovery: any sequence of
 * packets (data, heartbeat, end; any sequence numbers) and snapshots (any channel, sequence and
 * orders, hostile ones included) keeps the held buffer within its cap and gives back exactly
 * what it held. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "itch.h"
#include "md_recovery.h"

#define MAX_HELD 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct input {
    const uint8_t *p;
    size_t left;
};

static uint32_t take(struct input *in, unsigned bytes)
{
    uint32_t v = 0;
    for (unsigned i = 0; i < bytes; i++) {
        v = v << 8 | (in->left ? *in->p : 0);
        if (in->left) {
            in->p++;
            in->left--;
        }
    }
    return v;
}

/* A packet of `count` System Event messages from seq, or a heartbeat / end when count is 0. */
static size_t build_packet(uint8_t *out, uint64_t seq, uint32_t count, bool end)
{
    static struct md_packer p;
    struct md_packer_config pc = {.first_seq = seq,
                                  .max_datagram = 512,
                                  .max_msg_len = ITCH_MAX_LEN,
                                  .max_delay_ns = 1000,
                                  .intended_times = true};
    memset(pc.session, 'F', sizeof(pc.session));
    if (md_packer_init(&p, &pc) != 0)
        abort();
    const uint8_t *data;
    size_t len = 0;
    struct itch_msg m = {.type = ITCH_SYSTEM_EVENT};
    m.u.S.event_code = 'Q';
    uint8_t buf[ITCH_MAX_LEN];
    int n = itch_encode(&m, buf, sizeof(buf));
    for (uint32_t i = 0; i < count; i++)
        if (md_packer_add(&p, buf, (size_t)n, 0, 0) < 0)
            abort();
    if (count > 0)
        md_packer_flush(&p, &data, &len);
    else if (md_packer_heartbeat(&p, end, 0, &data, &len) < 0)
        abort();
    memcpy(out, data, len);
    return len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct md_book book;
    struct md_book_config bc;
    md_book_config_init(&bc);
    bc.max_locate = 64;
    bc.max_orders = 256;
    bc.max_levels_per_side = 16;
    if (md_book_init(&book, &bc) != 0)
        abort();
    struct input in = {data, size};
    struct md_rec r;
    md_rec_init(&r, &(struct md_rec_config){.channel = 1, .max_held_bytes = MAX_HELD});
    struct md_unpacker u;
    md_unpacker_init(
        &u, &(struct md_unpacker_config){.max_msg_len = ITCH_MAX_LEN, .intended_times = true});
    struct md_snap_symbol symbols[4];
    struct md_snap_order orders[8];
    uint8_t pkt[512];
    uint64_t base = 1;
    while (in.left > 0) {
        uint32_t op = take(&in, 1);
        if ((op & 3) < 2) { /* a packet */
            int64_t step = (int8_t)take(&in, 1);
            base = step < 0 && (uint64_t)-step >= base ? 1 : base + (uint64_t)step;
            uint64_t seq = base;
            uint32_t count = (op & 3) == 0 ? 1 + take(&in, 1) % 8 : 0;
            size_t len = build_packet(pkt, seq, count, op & 4);
            struct md_packet_view v;
            if (md_unpack(&u, pkt, len, &v) != 0)
                abort();
            enum md_rec_action a = md_rec_on_packet(&r, &v, pkt, len);
            if (a != MD_REC_REFUSED && (a == MD_REC_APPLY) != (r.state == MD_REC_LIVE))
                abort();
        } else { /* a snapshot */
            uint32_t n_symbols = take(&in, 1) % 5, n_orders = take(&in, 1) % 9;
            for (uint32_t i = 0; i < n_symbols; i++)
                symbols[i] = (struct md_snap_symbol){.locate = take(&in, 1),
                                                     .vwap_num = take(&in, 2),
                                                     .vwap_num_hi = take(&in, 1),
                                                     .vwap_den = take(&in, 2)};
            for (uint32_t i = 0; i < n_orders; i++)
                orders[i] = (struct md_snap_order){.ref = take(&in, 1),
                                                   .locate = take(&in, 1),
                                                   .side = (char)take(&in, 1),
                                                   .shares = take(&in, 1),
                                                   .price = take(&in, 2)};
            struct md_snap s = {.channel = op & 4 ? 0 : 1,
                                .seq = base + (uint64_t)(int64_t)(int8_t)take(&in, 1), /* any */
                                .symbols = symbols,
                                .n_symbols = n_symbols,
                                .orders = orders,
                                .n_orders = n_orders};
            uint64_t held_packets = r.counters.held_packets, held_bytes = r.counters.held_bytes;
            if (md_rec_on_snapshot(&r, &s, &book) == MD_REC_REPLAY) {
                const uint8_t *d;
                size_t len;
                uint64_t packets = 0, bytes = 0;
                struct md_packet_view v;
                while (md_rec_next_held(&r, &d, &len)) {
                    if (md_unpack(&u, d, len, &v) != 0)
                        abort(); /* held bytes come back intact */
                    packets++;
                    bytes += len;
                }
                if (packets != held_packets || bytes != held_bytes || r.held != NULL ||
                    md_rec_resume_seq(&r) != s.seq + 1)
                    abort();
            }
        }
        if (r.held_used > MAX_HELD || r.held_used > r.held_cap)
            abort();
    }
    md_rec_fini(&r);
    md_book_fini(&book);
    return 0;
}
