/* SPDX-License-Identifier: BSD-2-Clause */
/* test_md_recovery.c - late join: a book that joins a running feed and recovers every channel
 * from snapshots (held packets, in-flight packets, snapshots newer than what is held) ends with
 * the feed's digest; stale snapshots, overflows, joins after the end and refused imports. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "itch.h"
#include "md_gen.h"
#include "md_recovery.h"

#define CHANNELS   4
#define PART_BYTES 2048 /* small parts: every snapshot has many */
#define MAX_QUEUE  4096

/* One sent packet, in flight to the late book. */
struct packet {
    uint8_t *data;
    size_t len;
};

/* The late book: books, one recovery and sequence per channel, the snapshot assembler. */
struct late_book {
    struct md_book book;
    struct md_rec rec[CHANNELS];
    uint64_t next_seq[CHANNELS];
    bool wants_snapshot[CHANNELS];
    struct md_unpacker unpacker;
    struct md_snap_asm snap_asm;
    uint64_t applied, covered, missing, refused;
};

/* What md-book does with a packet once its channel is live: messages from next_seq on. */
static void apply(struct late_book *b, uint32_t ch, const uint8_t *data, size_t len)
{
    struct md_packet_view v;
    assert_int_equal(md_unpack(&b->unpacker, data, len, &v), 0);
    if (v.kind != MD_PACKET_DATA)
        return;
    if (b->next_seq[ch] != 0 && v.seq > b->next_seq[ch])
        b->missing += v.seq - b->next_seq[ch];
    struct md_msg m;
    while (md_packet_next(&v, &m)) {
        if (m.seq < b->next_seq[ch]) {
            b->covered++;
            continue;
        }
        struct itch_msg msg;
        assert_int_equal(itch_decode(m.data, m.len, &msg), (int)m.len);
        if (md_book_apply(&b->book, &msg) < 0)
            b->refused++;
        b->applied++;
    }
    if (v.seq + v.count > b->next_seq[ch])
        b->next_seq[ch] = v.seq + v.count;
}

static void deliver(struct late_book *b, uint32_t ch, const struct packet *p)
{
    struct md_packet_view v;
    assert_int_equal(md_unpack(&b->unpacker, p->data, p->len, &v), 0);
    enum md_rec_action a = md_rec_on_packet(&b->rec[ch], &v, p->data, p->len);
    if (a == MD_REC_NEED_SNAPSHOT)
        b->wants_snapshot[ch] = true;
    if (a == MD_REC_APPLY)
        apply(b, ch, p->data, p->len);
}

/* The feed's side of a request: every part of channel ch's snapshot, through the assembler. */
static void serve_snapshot(struct late_book *b, const struct md_book *feed_book, uint32_t ch,
                           const uint16_t *locates, uint32_t n, uint64_t seq)
{
    struct md_snap_builder sb = {0};
    struct md_snap_plan plan;
    uint8_t part[PART_BYTES];
    assert_int_equal(md_snap_build(&sb, feed_book, locates, n, ch, seq), 0);
    assert_int_equal(md_snap_plan(&sb.snap, PART_BYTES, &plan), 0);
    assert_true(plan.part_count > 1);
    int rc = MD_SNAP_INCOMPLETE;
    for (uint32_t i = plan.part_count; i-- > 0;) { /* any order */
        size_t len;
        assert_int_equal(md_snap_encode_part(&sb.snap, &plan, i, part, sizeof(part), &len), 0);
        rc = md_snap_asm_add(&b->snap_asm, part, len);
    }
    assert_int_equal(rc, MD_SNAP_COMPLETE);
    const struct md_snap *s = md_snap_asm_result(&b->snap_asm);
    assert_non_null(s);
    enum md_rec_action a = md_rec_on_snapshot(&b->rec[ch], s, &b->book);
    assert_int_equal(a, MD_REC_REPLAY);
    b->wants_snapshot[ch] = false;
    b->next_seq[ch] = md_rec_resume_seq(&b->rec[ch]);
    const uint8_t *data;
    size_t len;
    while (md_rec_next_held(&b->rec[ch], &data, &len))
        apply(b, ch, data, len);
    md_snap_builder_fini(&sb);
}

static void late_book_init(struct late_book *b, size_t max_held)
{
    struct md_book_config bc;
    md_book_config_init(&bc);
    memset(b, 0, sizeof(*b));
    assert_int_equal(md_book_init(&b->book, &bc), 0);
    for (uint32_t ch = 0; ch < CHANNELS; ch++)
        md_rec_init(&b->rec[ch],
                    &(struct md_rec_config){.channel = ch, .max_held_bytes = max_held});
    struct md_unpacker_config uc = {.max_msg_len = ITCH_MAX_LEN, .intended_times = true};
    md_unpacker_init(&b->unpacker, &uc);
    struct md_snap_asm_config sc = {.max_orders = 1u << 16,
                                    .max_symbols = 4096,
                                    .max_parts = 1024,
                                    .max_part_bytes = PART_BYTES};
    assert_int_equal(md_snap_asm_init(&b->snap_asm, &sc), 0);
}

static void late_book_fini(struct late_book *b)
{
    for (uint32_t ch = 0; ch < CHANNELS; ch++)
        md_rec_fini(&b->rec[ch]);
    md_snap_asm_fini(&b->snap_asm);
    md_book_fini(&b->book);
}

/*
 * A feed of `total` messages on CHANNELS channels; the book joins after message join_at, its
 * packets lag `lag` packets behind the feed (in flight), and each snapshot is served
 * `serve_after` messages after the request, so snapshots land both behind and ahead of what
 * the book holds. The late book must end with the feed's digest.
 */
static void run_late_join(uint64_t seed, uint32_t total, uint32_t join_at, uint32_t lag,
                          uint32_t serve_after, size_t max_held)
{
    struct md_gen gen;
    struct md_gen_config gc;
    md_gen_config_init(&gc);
    gc.seed = seed;
    gc.symbols = 600;
    gc.channels = CHANNELS;
    assert_int_equal(md_gen_init(&gen, &gc), 0);
    struct md_packer packers[CHANNELS];
    for (uint32_t ch = 0; ch < CHANNELS; ch++) {
        struct md_packer_config pc = {.first_seq = 1,
                                      .max_datagram = 1024,
                                      .max_msg_len = ITCH_MAX_LEN,
                                      .max_delay_ns = 1000000,
                                      .intended_times = true};
        memset(pc.session, 'T', sizeof(pc.session));
        assert_int_equal(md_packer_init(&packers[ch], &pc), 0);
    }
    /* Each channel's symbols, as the feed scopes its snapshots. */
    uint16_t locates[CHANNELS][600];
    uint32_t n_locates[CHANNELS] = {0};
    for (uint32_t l = 1; l <= gc.symbols; l++) {
        uint32_t ch = md_gen_channel_of(&gen, (uint16_t)l);
        locates[ch][n_locates[ch]++] = (uint16_t)l;
    }
    struct late_book b;
    late_book_init(&b, max_held);
    struct packet *queue = calloc(MAX_QUEUE, sizeof(*queue));
    uint32_t *queue_ch = calloc(MAX_QUEUE, sizeof(*queue_ch));
    assert_true(queue && queue_ch);
    uint32_t q_head = 0, q_tail = 0;
    int64_t serve_at[CHANNELS];
    for (uint32_t ch = 0; ch < CHANNELS; ch++)
        serve_at[ch] = -1;

#define SEND(ch, data, len)                                                \
    do {                                                                   \
        if (i >= join_at) {                                                \
            assert_true(q_tail - q_head < MAX_QUEUE);                      \
            queue[q_tail % MAX_QUEUE] = (struct packet){malloc(len), len}; \
            memcpy(queue[q_tail % MAX_QUEUE].data, data, len);             \
            queue_ch[q_tail++ % MAX_QUEUE] = ch;                           \
        }                                                                  \
    } while (0)

    for (uint32_t i = 0; i < total; i++) {
        struct itch_msg m;
        uint32_t ch;
        uint8_t buf[ITCH_MAX_LEN];
        int len = md_gen_next(&gen, 1000000000ull + i * 1000ull, &m, &ch);
        assert_true(len > 0);
        assert_int_equal(itch_encode(&m, buf, sizeof(buf)), len);
        int pr = md_packer_add(&packers[ch], buf, (size_t)len, i * 1000ull, i * 1000ull);
        assert_true(pr >= 0);
        if (pr == MD_PACK_FLUSH) {
            const uint8_t *data;
            size_t dlen;
            md_packer_flush(&packers[ch], &data, &dlen);
            SEND(ch, data, dlen);
        }
        while (q_tail - q_head > lag) { /* the oldest packet in flight arrives */
            struct packet *p = &queue[q_head % MAX_QUEUE];
            deliver(&b, queue_ch[q_head % MAX_QUEUE], p);
            free(p->data);
            q_head++;
        }
        for (uint32_t c = 0; c < CHANNELS; c++) {
            if (b.wants_snapshot[c] && serve_at[c] < 0)
                serve_at[c] = (int64_t)(i + serve_after);
            if (serve_at[c] >= 0 && (uint32_t)serve_at[c] == i) {
                const uint8_t *data;
                size_t dlen;
                if (md_packer_flush(&packers[c], &data, &dlen) > 0)
                    SEND(c, data, dlen); /* the feed flushes before it snapshots */
                serve_snapshot(&b, md_gen_book(&gen), c, locates[c], n_locates[c],
                               md_packer_next_seq(&packers[c]) - 1);
                serve_at[c] = b.wants_snapshot[c] ? (int64_t)(i + serve_after) : INT64_MAX;
            }
        }
    }
    for (uint32_t ch = 0; ch < CHANNELS; ch++) {
        const uint8_t *data;
        size_t dlen;
        uint32_t i = total;
        if (md_packer_flush(&packers[ch], &data, &dlen) > 0)
            SEND(ch, data, dlen);
    }
    while (q_head != q_tail) {
        struct packet *p = &queue[q_head % MAX_QUEUE];
        deliver(&b, queue_ch[q_head % MAX_QUEUE], p);
        free(p->data);
        q_head++;
    }
#undef SEND
    for (uint32_t ch = 0; ch < CHANNELS; ch++) {
        assert_int_equal(b.rec[ch].state, MD_REC_LIVE);
        assert_int_equal(b.rec[ch].counters.snapshots_applied, 1);
        assert_int_equal(b.rec[ch].counters.import_refused, 0);
        assert_int_equal(b.next_seq[ch], md_packer_next_seq(&packers[ch]));
    }
    assert_int_equal(b.missing, 0);
    assert_int_equal(b.refused, 0);
    assert_true(b.applied > 0);
    assert_int_equal(md_book_digest(&b.book), md_gen_digest(&gen));
    late_book_fini(&b);
    free(queue);
    free(queue_ch);
    md_gen_fini(&gen);
}

static void test_late_join_converges(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 3; seed++) {
        /* Snapshot served at once: older than nothing held, covers the held packets' start. */
        run_late_join(seed, 60000, 20000, 0, 0, 0);
        /* Packets in flight: the snapshot is newer than what the book holds. */
        run_late_join(seed, 60000, 20000, 40, 0, 0);
        /* Served late: many packets held, snapshot older than the newest of them. */
        run_late_join(seed, 60000, 30000, 5, 3000, 0);
    }
}

/* A packet of channel 0 with `count` messages from seq (or a heartbeat / end: count 0). */
static size_t make_packet(uint8_t *out, uint64_t seq, uint32_t count, bool end,
                          struct md_packet_view *v)
{
    struct md_packer p;
    struct md_packer_config pc = {.first_seq = seq,
                                  .max_datagram = 1024,
                                  .max_msg_len = ITCH_MAX_LEN,
                                  .max_delay_ns = 1000000,
                                  .intended_times = true};
    memset(pc.session, 'T', sizeof(pc.session));
    assert_int_equal(md_packer_init(&p, &pc), 0);
    const uint8_t *data;
    size_t len;
    for (uint32_t i = 0; i < count; i++) {
        struct itch_msg m = {.type = ITCH_SYSTEM_EVENT};
        m.u.S.event_code = 'O';
        uint8_t buf[ITCH_MAX_LEN];
        int n = itch_encode(&m, buf, sizeof(buf));
        assert_true(md_packer_add(&p, buf, (size_t)n, 0, 0) >= 0);
    }
    if (count > 0)
        md_packer_flush(&p, &data, &len);
    else
        assert_true(md_packer_heartbeat(&p, end, 0, &data, &len) > 0);
    memcpy(out, data, len);
    struct md_unpacker u;
    struct md_unpacker_config uc = {.max_msg_len = ITCH_MAX_LEN, .intended_times = true};
    md_unpacker_init(&u, &uc);
    assert_int_equal(md_unpack(&u, out, len, v), 0);
    return len;
}

static struct md_snap empty_snapshot(uint32_t channel, uint64_t seq)
{
    return (struct md_snap){.channel = channel, .seq = seq};
}

static void test_states(void **state)
{
    (void)state;
    struct md_book book;
    struct md_book_config bc;
    md_book_config_init(&bc);
    assert_int_equal(md_book_init(&book, &bc), 0);
    uint8_t pkt[1024];
    struct md_packet_view v;
    struct md_rec r;
    struct md_snap s;

    /* From the start: live at once, snapshots ignored. */
    md_rec_init(&r, &(struct md_rec_config){.channel = 0});
    size_t len = make_packet(pkt, 1, 3, false, &v);
    assert_int_equal(md_rec_on_packet(&r, &v, pkt, len), MD_REC_APPLY);
    s = empty_snapshot(0, 5);
    assert_int_equal(md_rec_on_snapshot(&r, &s, &book), MD_REC_IGNORED);
    assert_int_equal(r.counters.snapshots_ignored, 1);
    md_rec_fini(&r);

    /* Late: held; a stale snapshot asks again; another channel's is ignored; a fitting one
     * replays what was held. */
    md_rec_init(&r, &(struct md_rec_config){.channel = 2});
    len = make_packet(pkt, 100, 4, false, &v);
    assert_int_equal(md_rec_on_packet(&r, &v, pkt, len), MD_REC_NEED_SNAPSHOT);
    len = make_packet(pkt, 104, 2, false, &v);
    assert_int_equal(md_rec_on_packet(&r, &v, pkt, len), MD_REC_HELD);
    s = empty_snapshot(2, 98); /* message 99 would be missing */
    assert_int_equal(md_rec_on_snapshot(&r, &s, &book), MD_REC_NEED_SNAPSHOT);
    assert_int_equal(r.counters.snapshots_stale, 1);
    s = empty_snapshot(1, 99);
    assert_int_equal(md_rec_on_snapshot(&r, &s, &book), MD_REC_IGNORED);
    s = empty_snapshot(2, 99);
    assert_int_equal(md_rec_on_snapshot(&r, &s, &book), MD_REC_REPLAY);
    assert_int_equal(md_rec_resume_seq(&r), 100);
    const uint8_t *data;
    size_t dlen;
    assert_true(md_rec_next_held(&r, &data, &dlen));
    struct md_unpacker u;
    md_unpacker_init(
        &u, &(struct md_unpacker_config){.max_msg_len = ITCH_MAX_LEN, .intended_times = true});
    assert_int_equal(md_unpack(&u, data, dlen, &v), 0);
    assert_int_equal(v.seq, 100);
    assert_true(md_rec_next_held(&r, &data, &dlen));
    assert_int_equal(dlen, len);
    assert_false(md_rec_next_held(&r, &data, &dlen));
    assert_null(r.held);
    len = make_packet(pkt, 106, 1, false, &v);
    assert_int_equal(md_rec_on_packet(&r, &v, pkt, len), MD_REC_APPLY);
    md_rec_fini(&r);

    /* Joined after the end: nothing to hold, the snapshot must reach the end. */
    md_rec_init(&r, &(struct md_rec_config){.channel = 0});
    len = make_packet(pkt, 500, 0, true, &v);
    assert_int_equal(md_rec_on_packet(&r, &v, pkt, len), MD_REC_NEED_SNAPSHOT);
    s = empty_snapshot(0, 498);
    assert_int_equal(md_rec_on_snapshot(&r, &s, &book), MD_REC_NEED_SNAPSHOT);
    s = empty_snapshot(0, 499);
    assert_int_equal(md_rec_on_snapshot(&r, &s, &book), MD_REC_REPLAY);
    assert_false(md_rec_next_held(&r, &data, &dlen));
    md_rec_fini(&r);

    /* Overflow: room for two packets; the third drops them and moves the start. */
    len = make_packet(pkt, 10, 5, false, &v);
    md_rec_init(&r, &(struct md_rec_config){.channel = 0, .max_held_bytes = 2 * (len + 4)});
    assert_int_equal(md_rec_on_packet(&r, &v, pkt, len), MD_REC_NEED_SNAPSHOT);
    len = make_packet(pkt, 15, 5, false, &v);
    assert_int_equal(md_rec_on_packet(&r, &v, pkt, len), MD_REC_HELD);
    len = make_packet(pkt, 20, 5, false, &v);
    assert_int_equal(md_rec_on_packet(&r, &v, pkt, len), MD_REC_HELD);
    assert_int_equal(r.counters.overflows, 1);
    assert_int_equal(r.counters.held_packets, 1);
    assert_true(r.held_used <= r.cfg.max_held_bytes);
    s = empty_snapshot(0, 9); /* fitted before the overflow, no more */
    assert_int_equal(md_rec_on_snapshot(&r, &s, &book), MD_REC_NEED_SNAPSHOT);
    s = empty_snapshot(0, 19);
    assert_int_equal(md_rec_on_snapshot(&r, &s, &book), MD_REC_REPLAY);
    assert_true(md_rec_next_held(&r, &data, &dlen));
    assert_false(md_rec_next_held(&r, &data, &dlen));
    md_rec_fini(&r);
    md_book_fini(&book);
}

/* A hostile snapshot: orders the book refuses are counted, never applied twice. */
static void test_import_refusals(void **state)
{
    (void)state;
    struct md_book book;
    struct md_book_config bc;
    md_book_config_init(&bc);
    bc.max_locate = 100;
    assert_int_equal(md_book_init(&book, &bc), 0);
    struct md_snap_symbol symbols[] = {
        {.locate = 7, .vwap_num = 5, .vwap_num_hi = 1, .vwap_den = 2},
        {.locate = 200, .vwap_den = 1}}; /* beyond max_locate */
    struct md_snap_order orders[] = {
        {.ref = 1, .locate = 7, .side = 'B', .shares = 10, .price = 100},
        {.ref = 1, .locate = 7, .side = 'S', .shares = 10, .price = 200}, /* duplicate ref */
        {.ref = 2, .locate = 7, .side = 'S', .shares = 0, .price = 200},  /* no shares */
        {.ref = 3, .locate = 7, .side = 'S', .shares = 5, .price = 300},
    };
    struct md_snap s = {.channel = 0,
                        .seq = 9,
                        .symbols = symbols,
                        .n_symbols = 2,
                        .orders = orders,
                        .n_orders = 4};
    struct md_rec r;
    md_rec_init(&r, &(struct md_rec_config){.channel = 0});
    uint8_t pkt[1024];
    struct md_packet_view v;
    size_t len = make_packet(pkt, 10, 1, false, &v);
    assert_int_equal(md_rec_on_packet(&r, &v, pkt, len), MD_REC_NEED_SNAPSHOT);
    assert_int_equal(md_rec_on_snapshot(&r, &s, &book), MD_REC_REPLAY);
    assert_int_equal(r.counters.imported_orders, 2);
    assert_int_equal(r.counters.import_refused, 3);
    assert_int_equal(md_book_order_count(&book, 7), 2);
    struct md_vwap vw;
    md_book_vwap(&book, 7, &vw);
    assert_int_equal(vw.notional_hi, 1);
    assert_int_equal(vw.notional_lo, 5);
    assert_int_equal(vw.shares, 2);
    md_rec_fini(&r);

    /* The builder leaves empty symbols out and keeps 128-bit VWAP. */
    uint16_t locates[] = {7, 8};
    struct md_snap_builder sb = {0};
    assert_int_equal(md_snap_build(&sb, &book, locates, 2, 3, 42), 0);
    assert_int_equal(sb.snap.n_symbols, 1);
    assert_int_equal(sb.snap.symbols[0].vwap_num_hi, 1);
    assert_int_equal(sb.snap.n_orders, 2);
    assert_int_equal(sb.snap.channel, 3);
    assert_int_equal(sb.snap.seq, 42);
    md_snap_builder_fini(&sb);
    md_book_fini(&book);
}

/* A packet or snapshot numbered far past what the channel has seen is refused in every state;
 * a run of MD_REC_JUMP_RUN packets that continue each other past the window is followed. */
static void test_plausibility(void **state)
{
    (void)state;
    struct md_book book;
    struct md_book_config bc;
    md_book_config_init(&bc);
    assert_int_equal(md_book_init(&book, &bc), 0);
    uint8_t pkt[1024];
    struct md_packet_view v;
    struct md_rec r;
    struct md_snap s;

    /* Live from the start: 1..3 applied; 2^40 refused, the window's edge taken. */
    md_rec_init(&r, &(struct md_rec_config){.channel = 0, .max_ahead = 1000});
    size_t len = make_packet(pkt, 1, 3, false, &v);
    assert_int_equal(md_rec_on_packet(&r, &v, pkt, len), MD_REC_APPLY);
    len = make_packet(pkt, 1ull << 40, 1, false, &v);
    assert_int_equal(md_rec_on_packet(&r, &v, pkt, len), MD_REC_REFUSED);
    len = make_packet(pkt, 1ull << 40, 0, true, &v); /* an end of session that far, too */
    assert_int_equal(md_rec_on_packet(&r, &v, pkt, len), MD_REC_REFUSED);
    assert_int_equal(r.counters.packets_implausible, 2);
    len = make_packet(pkt, 4 + 1000, 1, false, &v); /* exactly max_ahead past the horizon 4 */
    assert_int_equal(md_rec_on_packet(&r, &v, pkt, len), MD_REC_APPLY);
    len = make_packet(pkt, 2, 1, false, &v); /* behind: the book's business (stale) */
    assert_int_equal(md_rec_on_packet(&r, &v, pkt, len), MD_REC_APPLY);

    /* A real jump: MD_REC_JUMP_RUN consecutive packets past the window; the last is taken. */
    uint64_t seq = 1000000;
    for (uint32_t k = 1; k <= MD_REC_JUMP_RUN; k++) {
        len = make_packet(pkt, seq, 2, false, &v);
        assert_int_equal(md_rec_on_packet(&r, &v, pkt, len),
                         k < MD_REC_JUMP_RUN ? MD_REC_REFUSED : MD_REC_APPLY);
        seq += 2;
    }
    assert_int_equal(r.counters.jumps, 1);
    assert_int_equal(r.horizon, seq);
    /* A run that does not continue itself, or is broken by a plausible packet, never jumps. */
    for (uint32_t k = 0; k < 3 * MD_REC_JUMP_RUN; k++) {
        len = make_packet(pkt, (1ull << 40) + 10 * k, 2, false, &v);
        assert_int_equal(md_rec_on_packet(&r, &v, pkt, len), MD_REC_REFUSED);
        if (k % 8 == 7) {
            len = make_packet(pkt, seq, 1, false, &v);
            assert_int_equal(md_rec_on_packet(&r, &v, pkt, len), MD_REC_APPLY);
            seq++;
        }
    }
    assert_int_equal(r.counters.jumps, 1);
    md_rec_fini(&r);

    /* Late: a held packet at 100; a far one is neither held nor moves the horizon; a snapshot
     * numbered 2^40 is ignored, a fitting one applied. */
    md_rec_init(&r, &(struct md_rec_config){.channel = 1, .max_ahead = 1000});
    len = make_packet(pkt, 100, 4, false, &v);
    assert_int_equal(md_rec_on_packet(&r, &v, pkt, len), MD_REC_NEED_SNAPSHOT);
    len = make_packet(pkt, 1ull << 40, 1, false, &v);
    assert_int_equal(md_rec_on_packet(&r, &v, pkt, len), MD_REC_REFUSED);
    assert_int_equal(r.counters.held_packets, 1);
    s = empty_snapshot(1, 1ull << 40);
    assert_int_equal(md_rec_on_snapshot(&r, &s, &book), MD_REC_IGNORED);
    assert_int_equal(r.counters.snapshots_implausible, 1);
    assert_int_equal(r.state, MD_REC_RECOVERING);
    s = empty_snapshot(1, 104 + 1000); /* ahead of what is held, within the window */
    assert_int_equal(md_rec_on_snapshot(&r, &s, &book), MD_REC_REPLAY);
    md_rec_fini(&r);
    md_book_fini(&book);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_late_join_converges),
        cmocka_unit_test(test_states),
        cmocka_unit_test(test_import_refusals),
        cmocka_unit_test(test_plausibility),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
