/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_replay_merge.c - libFuzzer harness: replay-merge's wire decoders (requests a hostile peer
 * can send a recorder, replay records) on the input as is, then the seam (rdps_replay_merge.h)
 * driven by the input as a script of history and live messages, catch-ups and ends: nothing may
 * crash, and per session deliveries never go backwards and never repeat a position (seq, and
 * within a batched datagram the message ordinal); a loss inside a datagram names its messages. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rdps_endian.h"
#include "rdps_history_wire.h"
#include "rdps_replay_merge.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SESSIONS 4

struct seen {
    bool any[SESSIONS];
    uint32_t seq[SESSIONS], end[SESSIONS], ordinal[SESSIONS]; /* the last delivery's position */
};

static void deliver(void *user, const struct rdps_merge_msg *m, bool from_history)
{
    struct seen *s = user;
    (void)from_history;
    uint32_t i = m->session % SESSIONS;
    if (m->kind == RDPS_MERGE_LOSS && m->count == 0) {
        /* Messages missing inside a datagram: named by ordinal, after the last delivered one,
         * in the datagram delivered last. */
        if (m->msg_count == 0 || m->ordinal == 0 || (s->any[i] && m->seq != s->seq[i]) ||
            (s->any[i] && s->ordinal[i] != 0 && (int32_t)(m->ordinal - s->ordinal[i]) <= 0))
            abort();
        s->ordinal[i] = m->ordinal + m->msg_count - 1;
        return;
    }
    if (m->count == 0)
        abort();
    /* In order: never before what was delivered last (serial arithmetic); in the same datagram
     * only a later message of a batch (both with ordinals). */
    uint32_t ordinal = m->kind == RDPS_MERGE_MESSAGE ? m->ordinal : 0;
    if (s->any[i] && m->seq == s->seq[i] && m->count == 1 && s->end[i] == s->seq[i] + 1) {
        if (ordinal == 0 || s->ordinal[i] == 0 || (int32_t)(ordinal - s->ordinal[i]) <= 0)
            abort();
    } else if (s->any[i] && (int32_t)(m->seq - s->end[i]) < 0) {
        abort();
    }
    if (m->kind == RDPS_MERGE_MESSAGE && m->len > 0)
        (void)((const volatile uint8_t *)m->data)[m->len - 1];
    s->any[i] = true;
    s->seq[i] = m->seq;
    s->end[i] = m->seq + m->count;
    s->ordinal[i] = ordinal;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct rdps_hist_request q;
    struct rdps_hist_record r;
    uint8_t buf[RDPS_HIST_REQUEST_LEN + RDPS_HIST_NEED_MAX * RDPS_HIST_NEED_LEN];
    if (rdps__hist_request_decode(data, size, &q)) {
        /* What decodes encodes back to the same bytes. */
        size_t n = rdps__hist_request_encode(buf, sizeof(buf), &q);
        if (n != size || memcmp(buf, data, n) != 0)
            abort();
    }
    if (rdps__hist_record_decode(data, size, &r) && r.len > 0)
        (void)((const volatile uint8_t *)r.data)[r.len - 1];

    /* The seam: ops of 8 bytes: kind, session (2 bits), flags (0x80 loss, 0x40 batched with the
     * stream's previous message: same seq, next ordinal), count, len, ordinal step. Each input
     * keeps per session an in-order history and an in-order live stream, as the two sides
     * promise. */
    struct seen seen = {0};
    struct rdps_merge m;
    if (rdps__merge_init(&m, 65536, SESSIONS, deliver, &seen) != 0)
        abort();
    uint32_t hist_next[SESSIONS] = {0}, live_next[SESSIONS];
    uint32_t hist_ord[SESSIONS] = {0}, live_ord[SESSIONS] = {0};
    for (int i = 0; i < SESSIONS; i++)
        live_next[i] = 1000u * (uint32_t)i + 0xFFFFFF00u;
    static uint8_t payload[4096];
    for (size_t off = 0; off + 8 <= size; off += 8) {
        const uint8_t *op = data + off;
        uint32_t s = op[1] % SESSIONS;
        uint32_t count = 1 + op[3] % 4;
        size_t len = rdps__get_le16(op + 4) % sizeof(payload);
        struct rdps_merge_msg msg = {.kind = (op[2] & 0x80) ? RDPS_MERGE_LOSS : RDPS_MERGE_MESSAGE,
                                     .session = s,
                                     .count = count,
                                     .ordinal = 0,
                                     .data = payload,
                                     .len = (op[2] & 0x80) ? 0 : len};
        switch (op[0] % 5) {
        case 0:
            if ((op[2] & 0xC0) == 0x40 && hist_ord[s] != 0) { /* batched: same datagram */
                msg.seq = hist_next[s] - 1;
                msg.count = 1;
                msg.ordinal = ++hist_ord[s] != 0 ? hist_ord[s] : ++hist_ord[s]; /* 0: none */
            } else {
                msg.seq = hist_next[s];
                hist_next[s] += count;
                hist_ord[s] = op[6] == 0 ? 0 : hist_ord[s] + op[6];
                msg.ordinal = msg.count == 1 && !(op[2] & 0x80) ? hist_ord[s] : 0;
                if (msg.ordinal == 0)
                    hist_ord[s] = 0;
            }
            rdps__merge_history(&m, &msg);
            break;
        case 1:
        case 2:
            if ((op[2] & 0xC0) == 0x40 && live_ord[s] != 0) {
                msg.seq = live_next[s] - 1;
                msg.count = 1;
                msg.ordinal = ++live_ord[s] != 0 ? live_ord[s] : ++live_ord[s]; /* 0: none */
            } else {
                msg.seq = live_next[s];
                live_next[s] += count + (op[2] & 0x3);
                live_ord[s] = op[6] == 0 ? 0 : live_ord[s] + op[6];
                msg.ordinal = msg.count == 1 && !(op[2] & 0x80) ? live_ord[s] : 0;
                if (msg.ordinal == 0)
                    live_ord[s] = 0;
            }
            rdps__merge_live(&m, &msg);
            break;
        case 3:
            rdps__merge_history_caught_up(&m, s, op[2] & 1, hist_next[s]);
            break;
        case 4:
            if (op[2] == 0xff)
                rdps__merge_history_done(&m);
            else if ((int32_t)(live_next[s] - (op[2] % 64u) - hist_next[s]) > 0)
                hist_next[s] = live_next[s] - (op[2] % 64u); /* history skips ahead near live */
            break;
        }
    }
    rdps__merge_fini(&m);
    return 0;
}
