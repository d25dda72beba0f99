/* SPDX-License-Identifier: BSD-2-Clause */
/* test_md_book_rx.c - md-book's receive side (tools/md-book/md_book_rx.h) fed a feed's packets and
 * snapshots, on time and late, with forged snapshots, packets and ends of session from another
 * source or session and sequences far ahead: the book's digest stays the feed's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "itch.h"
#include "md_book_rx.h"
#include "md_gen.h"
#include "md_topics.h"

#define CHANNELS   4
#define SYMBOLS    600
#define TOTAL      40000
#define MAX_QUEUE  4096
#define FAR_SEQ    (1ull << 40) /* the audit's forged sequence */
#define FEED_QPN   0x100u
#define SNAP_SESS  0x2000u
#define CHAN_SESS  0x1000u /* + channel */
#define FORGED_REF 0xBADBADull

/* What the feed sends from, and what the forgers do. */
static const rdps_source feed_source = {
    .gid = {0xfe, 0x80, [15] = 1}, .qpn = FEED_QPN, .has_gid = 1};
static const rdps_source evil_source = {
    .gid = {0xfe, 0x80, [15] = 0x66}, .qpn = 0x666, .has_gid = 1};
static const rdps_source neighbour_qp = {/* the feed's host, another QP */
                                         .gid = {0xfe, 0x80, [15] = 1},
                                         .qpn = FEED_QPN + 1,
                                         .has_gid = 1};

struct scenario {
    uint32_t join_at;     /* messages sent before the book's first packet */
    uint32_t lag;         /* packets in flight */
    uint32_t serve_after; /* messages between a request and the feed's snapshot */
    bool forged_snapshot; /* another source answers every request first: seq 2^40 */
    bool far_snapshot;    /* ... and the feed's own source does, with seq 2^40 */
    bool forged_packets;  /* once live: packets at seq 2^40 from another source and QP */
    bool foreign_session; /* ... from the feed's source under another rdps session */
    bool foreign_mold;    /* ... from the feed's source and session, another MoldUDP64 one */
    bool far_packet;      /* ... from the feed's source and session, seq 2^40 */
    bool forged_end;      /* an end of session at sequence 50 on every channel, forged */
};

struct harness {
    const struct scenario *sc;
    struct md_book_rx rx;
    bool requested[CHANNELS];
    uint32_t requests;
};

static void on_request(void *user, uint32_t what)
{
    struct harness *h = user;
    if (what < CHANNELS) {
        h->requested[what] = true;
        h->requests++;
    }
}

static rdps_msg_info info_from(const rdps_source *src, uint32_t session)
{
    return (rdps_msg_info){.session_id = session, .source = *src};
}

static void deliver_packet(struct harness *h, uint32_t ch, const uint8_t *data, size_t len,
                           const rdps_source *src, uint32_t session, uint64_t now)
{
    rdps_msg_info info = info_from(src, session);
    md_book_rx_packet(&h->rx, ch, data, len, &info, 0, now);
}

/* Every part of snapshot s as the feed sends them, tagged, from src. */
static void deliver_snapshot(struct harness *h, const struct md_snap *s, const rdps_source *src,
                             uint64_t now)
{
    struct md_snap_plan plan;
    uint8_t part[1 + MD_SNAP_PART_BYTES];
    assert_int_equal(md_snap_plan(s, MD_SNAP_PART_BYTES, &plan), 0);
    for (uint32_t i = 0; i < plan.part_count; i++) {
        size_t len;
        part[0] = MD_SNAPMSG_PART;
        assert_int_equal(md_snap_encode_part(s, &plan, i, part + 1, MD_SNAP_PART_BYTES, &len), 0);
        rdps_msg_info info = info_from(src, SNAP_SESS);
        md_book_rx_snap_message(&h->rx, part, len + 1, &info, now);
    }
}

/* The audit's forged snapshot: one part, sequence 2^40, one forged order in a symbol of ch. */
static void forge_snapshot(struct harness *h, uint32_t ch, uint16_t locate, const rdps_source *src,
                           uint64_t now)
{
    struct md_snap_symbol sym = {.locate = locate};
    struct md_snap_order order = {
        .ref = FORGED_REF, .locate = locate, .side = 'B', .shares = 100, .price = 10000};
    struct md_snap s = {.channel = ch,
                        .seq = FAR_SEQ,
                        .symbols = &sym,
                        .n_symbols = 1,
                        .orders = &order,
                        .n_orders = 1};
    deliver_snapshot(h, &s, src, now);
}

/* A data packet of one Add Order (ref FORGED_REF in locate) at seq, session `mold`. */
static size_t forge_packet(uint8_t *out, uint64_t seq, uint16_t locate, char mold, bool end)
{
    struct md_packer p;
    struct md_packer_config pc = {.first_seq = seq,
                                  .max_datagram = 1024,
                                  .max_msg_len = ITCH_MAX_LEN,
                                  .max_delay_ns = 1000000,
                                  .intended_times = true};
    memset(pc.session, mold, sizeof(pc.session));
    assert_int_equal(md_packer_init(&p, &pc), 0);
    const uint8_t *data;
    size_t len;
    if (end) {
        assert_true(md_packer_heartbeat(&p, true, 0, &data, &len) > 0);
    } else {
        struct itch_msg m = {.type = ITCH_ADD_ORDER, .stock_locate = locate};
        m.u.A.order_ref = FORGED_REF;
        m.u.A.side = 'B';
        m.u.A.shares = 100;
        m.u.A.price = 10000;
        memset(m.u.A.stock, ' ', sizeof(m.u.A.stock));
        uint8_t buf[ITCH_MAX_LEN];
        int n = itch_encode(&m, buf, sizeof(buf));
        assert_true(n > 0);
        assert_true(md_packer_add(&p, buf, (size_t)n, 0, 0) >= 0);
        md_packer_flush(&p, &data, &len);
    }
    memcpy(out, data, len);
    return len;
}

struct packet {
    uint8_t *data;
    size_t len;
    uint32_t ch;
};

/*
 * A feed of TOTAL messages on CHANNELS channels through md_book_rx, as md-book's callbacks hand
 * them over; forgers act as the scenario says. The book stops taking input once
 * md_book_rx_done() says every channel ended, as md-book exits then. Returns the book's digest
 * at that point; *reference is the feed's.
 */
static void run(const struct scenario *sc, struct harness *h, uint64_t *digest, uint64_t *reference)
{
    struct md_gen gen;
    struct md_gen_config gc;
    md_gen_config_init(&gc);
    gc.seed = 7;
    gc.symbols = SYMBOLS;
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
    uint16_t locates[CHANNELS][SYMBOLS];
    uint32_t n_locates[CHANNELS] = {0};
    for (uint32_t l = 1; l <= SYMBOLS; l++) {
        uint32_t ch = md_gen_channel_of(&gen, (uint16_t)l);
        locates[ch][n_locates[ch]++] = (uint16_t)l;
    }
    memset(h, 0, sizeof(*h));
    h->sc = sc;
    struct md_book_rx_config cfg = {.channels = CHANNELS};
    struct md_book_rx_hooks hooks = {.user = h, .request = on_request};
    assert_int_equal(md_book_rx_init(&h->rx, &cfg, &hooks), 0);
    struct packet *queue = calloc(MAX_QUEUE, sizeof(*queue));
    assert_non_null(queue);
    uint32_t q_head = 0, q_tail = 0;
    int64_t serve_at[CHANNELS];
    bool forged_answer[CHANNELS] = {false};
    for (uint32_t ch = 0; ch < CHANNELS; ch++)
        serve_at[ch] = -1;
    bool stopped = false;
    uint8_t pkt[1024];

#define SEND(c, d, l)                                                         \
    do {                                                                      \
        if (i >= sc->join_at) {                                               \
            assert_true(q_tail - q_head < MAX_QUEUE);                         \
            queue[q_tail % MAX_QUEUE] = (struct packet){malloc(l), (l), (c)}; \
            memcpy(queue[q_tail % MAX_QUEUE].data, (d), (l));                 \
            q_tail++;                                                         \
        }                                                                     \
    } while (0)
#define ARRIVE(max_in_flight)                                                                  \
    do {                                                                                       \
        while (q_tail - q_head > (max_in_flight)) {                                            \
            struct packet *p = &queue[q_head++ % MAX_QUEUE];                                   \
            if (!stopped)                                                                      \
                deliver_packet(h, p->ch, p->data, p->len, &feed_source, CHAN_SESS + p->ch, i); \
            stopped = stopped || md_book_rx_done(&h->rx);                                      \
            free(p->data);                                                                     \
        }                                                                                      \
    } while (0)

    uint32_t i;
    for (i = 0; i <= TOTAL; i++) {
        if (i < TOTAL) {
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
        } else {
            /* The end: every channel's last packet and its end of session. */
            for (uint32_t ch = 0; ch < CHANNELS; ch++) {
                const uint8_t *data;
                size_t dlen;
                if (md_packer_flush(&packers[ch], &data, &dlen) > 0)
                    SEND(ch, data, dlen);
                assert_true(md_packer_heartbeat(&packers[ch], true, 0, &data, &dlen) > 0);
                SEND(ch, data, dlen);
            }
        }
        ARRIVE(sc->lag);
        if (stopped)
            break;
        /* The forgers. */
        if (sc->forged_end && i == TOTAL / 3) {
            for (uint32_t ch = 0; ch < CHANNELS; ch++) {
                size_t len = forge_packet(pkt, 50, 0, 'T', true);
                deliver_packet(h, ch, pkt, len, &evil_source, CHAN_SESS + ch, i);
                deliver_packet(h, ch, pkt, len, &neighbour_qp, CHAN_SESS + ch, i);
            }
        }
        if (i == TOTAL / 2) {
            for (uint32_t ch = 0; ch < CHANNELS; ch++) {
                uint16_t locate = locates[ch][0];
                size_t len = forge_packet(pkt, FAR_SEQ, locate, 'T', false);
                if (sc->forged_packets) {
                    deliver_packet(h, ch, pkt, len, &evil_source, CHAN_SESS + ch, i);
                    deliver_packet(h, ch, pkt, len, &neighbour_qp, CHAN_SESS + ch, i);
                }
                if (sc->foreign_session)
                    deliver_packet(h, ch, pkt, len, &feed_source, 0xBAD0 + ch, i);
                if (sc->far_packet)
                    deliver_packet(h, ch, pkt, len, &feed_source, CHAN_SESS + ch, i);
                if (sc->foreign_mold) {
                    uint64_t next = h->rx.channels[ch].next_seq;
                    len = forge_packet(pkt, next != 0 ? next : 1, locate, 'X', false);
                    deliver_packet(h, ch, pkt, len, &feed_source, CHAN_SESS + ch, i);
                }
            }
        }
        /* Requests: the forgers answer at once, the feed after serve_after messages. */
        for (uint32_t c = 0; c < CHANNELS; c++) {
            if (h->requested[c] && !forged_answer[c] && (sc->forged_snapshot || sc->far_snapshot)) {
                forged_answer[c] = true;
                if (sc->forged_snapshot) {
                    forge_snapshot(h, c, locates[c][0], &evil_source, i);
                    forge_snapshot(h, c, locates[c][0], &neighbour_qp, i);
                }
                if (sc->far_snapshot)
                    forge_snapshot(h, c, locates[c][0], &feed_source, i);
            }
            if (h->requested[c] && serve_at[c] < 0)
                serve_at[c] = (int64_t)(i + sc->serve_after);
            if (serve_at[c] >= 0 && (uint32_t)serve_at[c] == i) {
                const uint8_t *data;
                size_t dlen;
                if (i < TOTAL && md_packer_flush(&packers[c], &data, &dlen) > 0)
                    SEND(c, data, dlen); /* the feed flushes before it snapshots */
                struct md_snap_builder sb = {0};
                assert_int_equal(md_snap_build(&sb, md_gen_book(&gen), locates[c], n_locates[c], c,
                                               md_packer_next_seq(&packers[c]) - 1),
                                 0);
                h->requested[c] = false;
                deliver_snapshot(h, &sb.snap, &feed_source, i);
                md_snap_builder_fini(&sb);
                serve_at[c] = -1;
            }
        }
    }
    ARRIVE(0);
#undef SEND
#undef ARRIVE
    *digest = md_book_digest(&h->rx.book);
    *reference = md_gen_digest(&gen);
    free(queue);
    md_gen_fini(&gen);
}

/* Every channel live and ended at the feed's end, nothing missing, stale or refused, and the
 * forged order nowhere. */
static void assert_like_the_feed(struct harness *h, uint64_t digest, uint64_t reference, bool late)
{
    struct md_book_rx *rx = &h->rx;
    uint64_t missing = 0, stale = 0, forged = 0;
    for (uint32_t ch = 0; ch < CHANNELS; ch++) {
        missing += rx->channels[ch].missing;
        stale += rx->channels[ch].stale;
    }
    for (uint32_t locate = 1; locate <= SYMBOLS; locate++)
        for (uint32_t k = 0; k < md_book_order_count(&rx->book, (uint16_t)locate); k++)
            forged += md_book_order_at(&rx->book, (uint16_t)locate, k)->ref == FORGED_REF;
    if (digest != reference)
        fail_msg("digest %016llx, the feed's %016llx (%u channels ended, %llu messages applied, "
                 "%llu missing, %llu stale, %llu forged orders in the book)",
                 (unsigned long long)digest, (unsigned long long)reference, rx->ended,
                 (unsigned long long)rx->messages, (unsigned long long)missing,
                 (unsigned long long)stale, (unsigned long long)forged);
    assert_int_equal(forged, 0);
    assert_true(md_book_rx_done(rx));
    assert_int_equal(rx->ended, CHANNELS);
    for (uint32_t ch = 0; ch < CHANNELS; ch++) {
        const struct md_book_rx_channel *c = &rx->channels[ch];
        assert_int_equal(c->rec.state, MD_REC_LIVE);
        assert_int_equal(c->rec.counters.snapshots_applied, late ? 1 : 0);
        assert_int_equal(c->rec.counters.import_refused, 0);
        assert_int_equal(c->missing, 0);
        assert_int_equal(c->stale, 0);
    }
    assert_int_equal(rx->apply_errors, 0);
    assert_int_equal(rx->bad_messages, 0);
    assert_true(rx->messages > 0);
}

static void run_and_check(const struct scenario *sc)
{
    struct harness h;
    uint64_t digest, reference;
    run(sc, &h, &digest, &reference);
    assert_like_the_feed(&h, digest, reference, sc->join_at > 0);
    md_book_rx_fini(&h.rx);
}

/* The references: on time and late, nobody forging. */
static void test_honest(void **state)
{
    (void)state;
    run_and_check(&(struct scenario){.join_at = 0});
    run_and_check(&(struct scenario){.join_at = 12000, .lag = 20, .serve_after = 50});
    run_and_check(&(struct scenario){.join_at = 12000, .lag = 3, .serve_after = 2000});
}

/* [b] A forged snapshot answers the late book's requests before the feed: from another host,
 * another QP of the feed's host, and the feed's own source with sequence 2^40. */
static void test_forged_snapshot(void **state)
{
    (void)state;
    struct harness h;
    uint64_t digest, reference;
    run(&(struct scenario){.join_at = 12000, .lag = 20, .serve_after = 50, .forged_snapshot = true},
        &h, &digest, &reference);
    assert_like_the_feed(&h, digest, reference, true);
    assert_int_equal(h.rx.snap_foreign, 2 * CHANNELS);
    md_book_rx_fini(&h.rx);

    run(&(struct scenario){.join_at = 12000, .lag = 20, .serve_after = 50, .far_snapshot = true},
        &h, &digest, &reference);
    assert_like_the_feed(&h, digest, reference, true);
    uint64_t implausible = 0;
    for (uint32_t ch = 0; ch < CHANNELS; ch++)
        implausible += h.rx.channels[ch].rec.counters.snapshots_implausible;
    assert_int_equal(implausible, CHANNELS);
    md_book_rx_fini(&h.rx);
}

/* [c] Once every channel is live, a data packet at sequence 2^40 on every channel: from another
 * host, another QP, the feed's source under another session, the feed's own session, and a packet
 * at the right sequence under another MoldUDP64 session. On time and late. */
static void test_forged_packets(void **state)
{
    (void)state;
    for (int late = 0; late <= 1; late++) {
        struct scenario sc = {.join_at = late ? 12000 : 0,
                              .lag = 5,
                              .serve_after = 50,
                              .forged_packets = true,
                              .foreign_session = true,
                              .foreign_mold = true,
                              .far_packet = true};
        struct harness h;
        uint64_t digest, reference;
        run(&sc, &h, &digest, &reference);
        assert_like_the_feed(&h, digest, reference, late);
        assert_int_equal(h.rx.packets_foreign, 4 * CHANNELS);
        uint64_t implausible = 0;
        for (uint32_t ch = 0; ch < CHANNELS; ch++)
            implausible += h.rx.channels[ch].rec.counters.packets_implausible;
        assert_int_equal(implausible, CHANNELS);
        md_book_rx_fini(&h.rx);
    }
}

/* [d] A forged end of session at sequence 50 on every channel, a third into the flow: md-book
 * would exit there. */
static void test_forged_end(void **state)
{
    (void)state;
    for (int late = 0; late <= 1; late++) {
        struct harness h;
        uint64_t digest, reference;
        run(
            &(struct scenario){
                .join_at = late ? 8000 : 0, .lag = 5, .serve_after = 50, .forged_end = true},
            &h, &digest, &reference);
        assert_like_the_feed(&h, digest, reference, late);
        assert_int_equal(h.rx.packets_foreign, 2 * CHANNELS);
        md_book_rx_fini(&h.rx);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_honest),
        cmocka_unit_test(test_forged_snapshot),
        cmocka_unit_test(test_forged_packets),
        cmocka_unit_test(test_forged_end),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
