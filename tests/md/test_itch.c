/* SPDX-License-Identifier: BSD-2-Clause */
/* test_itch.c - the ITCH 5.0 codec: hand-written golden vectors, round trips of every supported
 * type, and refusal of wrong types, lengths, buffers and timestamps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "itch.h"

static const uint8_t all_types[] = {'S', 'R', 'A', 'F', 'E', 'C', 'X', 'D', 'U', 'P'};
#define NTYPES (sizeof(all_types) / sizeof(all_types[0]))

/* Encodes m, checks the bytes against want, decodes them back and checks the fields by
 * re-encoding and by the caller's field checks. */
static void check_golden(const struct itch_msg *m, const uint8_t *want, size_t want_len,
                         struct itch_msg *decoded)
{
    uint8_t buf[64];
    memset(buf, 0xEE, sizeof(buf));
    assert_int_equal(itch_encode(m, buf, sizeof(buf)), (int)want_len);
    assert_memory_equal(buf, want, want_len);
    assert_int_equal(buf[want_len], 0xEE); /* nothing written past the message */
    assert_int_equal(itch_decode(want, want_len, decoded), (int)want_len);
    assert_int_equal(decoded->type, m->type);
    assert_int_equal(decoded->stock_locate, m->stock_locate);
    assert_int_equal(decoded->tracking_number, m->tracking_number);
    assert_true(decoded->timestamp_ns == m->timestamp_ns);
}

static void test_golden_add_order(void **state)
{
    (void)state;
    static const uint8_t want[ITCH_ADD_ORDER_LEN] = {
        'A',                                            /* type */
        0x00, 0x07,                                     /* stock locate 7 */
        0x01, 0x02,                                     /* tracking number 0x0102 */
        0x1F, 0x1A, 0xCE, 0xD9, 0xF0, 0x00,             /* 09:30:00.000000000 = 34200e9 ns */
        0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, /* order reference */
        'B',                                            /* side */
        0x00, 0x00, 0x01, 0x2C,                         /* 300 shares */
        'A',  'A',  'P',  'L',  ' ',  ' ',  ' ',  ' ',  /* stock */
        0x00, 0x16, 0xF0, 0xA8,                         /* $150.3400 */
    };
    struct itch_msg m = {.type = 'A',
                         .stock_locate = 7,
                         .tracking_number = 0x0102,
                         .timestamp_ns = UINT64_C(34200000000000)};
    m.u.A.order_ref = UINT64_C(0x0011223344556677);
    m.u.A.side = 'B';
    m.u.A.shares = 300;
    itch_stock_set(m.u.A.stock, "AAPL");
    m.u.A.price = 1503400;
    struct itch_msg d;
    check_golden(&m, want, sizeof(want), &d);
    assert_true(d.u.A.order_ref == UINT64_C(0x0011223344556677));
    assert_int_equal(d.u.A.side, 'B');
    assert_int_equal(d.u.A.shares, 300);
    assert_memory_equal(d.u.A.stock, "AAPL    ", 8);
    assert_int_equal(d.u.A.price, 1503400);
}

static void test_golden_order_delete(void **state)
{
    (void)state;
    static const uint8_t want[ITCH_ORDER_DELETE_LEN] = {
        'D',                                            /* type */
        0x1F, 0x40,                                     /* stock locate 8000 */
        0xAB, 0xCD,                                     /* tracking number */
        0x12, 0x34, 0x56, 0x78, 0x9A, 0xBC,             /* timestamp */
        0xFE, 0xDC, 0xBA, 0x98, 0x76, 0x54, 0x32, 0x10, /* order reference */
    };
    struct itch_msg m = {.type = 'D',
                         .stock_locate = 8000,
                         .tracking_number = 0xABCD,
                         .timestamp_ns = UINT64_C(0x123456789ABC)};
    m.u.D.order_ref = UINT64_C(0xFEDCBA9876543210);
    struct itch_msg d;
    check_golden(&m, want, sizeof(want), &d);
    assert_true(d.u.D.order_ref == UINT64_C(0xFEDCBA9876543210));
}

static void test_golden_order_replace(void **state)
{
    (void)state;
    static const uint8_t want[ITCH_ORDER_REPLACE_LEN] = {
        'U',                                            /* type */
        0x00, 0x02,                                     /* stock locate */
        0x00, 0x03,                                     /* tracking number */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x01,             /* 1 ns after midnight */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, /* original reference */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x06, /* new reference */
        0x00, 0x00, 0x00, 0x64,                         /* 100 shares */
        0x00, 0x00, 0x27, 0x10,                         /* $1.0000 */
    };
    struct itch_msg m = {.type = 'U', .stock_locate = 2, .tracking_number = 3, .timestamp_ns = 1};
    m.u.U.orig_order_ref = 5;
    m.u.U.new_order_ref = 6;
    m.u.U.shares = 100;
    m.u.U.price = 10000;
    struct itch_msg d;
    check_golden(&m, want, sizeof(want), &d);
    assert_true(d.u.U.orig_order_ref == 5 && d.u.U.new_order_ref == 6);
    assert_int_equal(d.u.U.shares, 100);
    assert_int_equal(d.u.U.price, 10000);
}

static void test_golden_trade(void **state)
{
    (void)state;
    static const uint8_t want[ITCH_TRADE_LEN] = {
        'P',                                            /* type */
        0x01, 0x00,                                     /* stock locate 256 */
        0x00, 0x00,                                     /* tracking number */
        0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,             /* the largest 48-bit timestamp */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* order reference 0 */
        'B',                                            /* side */
        0x00, 0x00, 0x00, 0xFA,                         /* 250 shares */
        'M',  'S',  'F',  'T',  ' ',  ' ',  ' ',  ' ',  /* stock */
        0x00, 0x3E, 0x95, 0x7C,                         /* $410.1500 */
        0x00, 0x00, 0x00, 0x00, 0x00, 0xAB, 0xCD, 0xEF, /* match number */
    };
    struct itch_msg m = {.type = 'P', .stock_locate = 256, .timestamp_ns = ITCH_TIMESTAMP_MAX};
    m.u.P.side = 'B';
    m.u.P.shares = 250;
    itch_stock_set(m.u.P.stock, "MSFT");
    m.u.P.price = 4101500;
    m.u.P.match_number = 0xABCDEF;
    struct itch_msg d;
    check_golden(&m, want, sizeof(want), &d);
    assert_true(d.u.P.order_ref == 0);
    assert_int_equal(d.u.P.side, 'B');
    assert_int_equal(d.u.P.shares, 250);
    assert_memory_equal(d.u.P.stock, "MSFT    ", 8);
    assert_int_equal(d.u.P.price, 4101500);
    assert_true(d.u.P.match_number == 0xABCDEF);
}

static void test_golden_stock_directory(void **state)
{
    (void)state;
    static const uint8_t want[ITCH_STOCK_DIRECTORY_LEN] = {
        'R',                                          /* type */
        0x00, 0x2A,                                   /* stock locate 42 */
        0x00, 0x00,                                   /* tracking number */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00,           /* timestamp */
        'Z',  'V',  'Z',  'Z',  'T',  ' ',  ' ', ' ', /* stock */
        'Q',                                          /* market category */
        'N',                                          /* financial status */
        0x00, 0x00, 0x00, 0x64,                       /* round lot 100 */
        'N',                                          /* round lots only */
        'C',                                          /* issue classification */
        'Z',  ' ',                                    /* issue sub-type */
        'T',                                          /* authenticity */
        'N',                                          /* short sale threshold */
        ' ',                                          /* IPO flag */
        '2',                                          /* LULD reference price tier */
        'N',                                          /* ETP flag */
        0x00, 0x00, 0x00, 0x03,                       /* ETP leverage factor */
        'Y',                                          /* inverse indicator */
    };
    struct itch_msg m = {.type = 'R', .stock_locate = 42};
    struct itch_stock_directory *r = &m.u.R;
    itch_stock_set(r->stock, "ZVZZT");
    r->market_category = 'Q';
    r->financial_status = 'N';
    r->round_lot_size = 100;
    r->round_lots_only = 'N';
    r->issue_classification = 'C';
    r->issue_subtype[0] = 'Z';
    r->issue_subtype[1] = ' ';
    r->authenticity = 'T';
    r->short_sale_threshold = 'N';
    r->ipo_flag = ' ';
    r->luld_tier = '2';
    r->etp_flag = 'N';
    r->etp_leverage_factor = 3;
    r->inverse_indicator = 'Y';
    struct itch_msg d;
    check_golden(&m, want, sizeof(want), &d);
    assert_memory_equal(d.u.R.stock, "ZVZZT   ", 8);
    assert_int_equal(d.u.R.round_lot_size, 100);
    assert_int_equal(d.u.R.luld_tier, '2');
    assert_int_equal(d.u.R.etp_leverage_factor, 3);
    assert_int_equal(d.u.R.inverse_indicator, 'Y');
}

/* --- round trips ---------------------------------------------------------------------------- */

static uint64_t rnd_state = 12345;

static uint64_t rnd(void)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return rnd_state;
}

static char rnd_char(void)
{
    return (char)(0x20 + rnd() % 95);
}

static void rnd_stock(char s[8])
{
    for (int i = 0; i < 8; i++)
        s[i] = rnd_char();
}

/* Every field of the type gets random bits of its full width. */
static void random_msg(uint8_t type, struct itch_msg *m)
{
    memset(m, 0, sizeof(*m));
    m->type = type;
    m->stock_locate = (uint16_t)rnd();
    m->tracking_number = (uint16_t)rnd();
    m->timestamp_ns = rnd() & ITCH_TIMESTAMP_MAX;
    struct itch_add_order *a = type == 'F' ? &m->u.F.add : &m->u.A;
    struct itch_order_executed *e = type == 'C' ? &m->u.C.exec : &m->u.E;
    switch (type) {
    case 'S':
        m->u.S.event_code = rnd_char();
        break;
    case 'R':
        rnd_stock(m->u.R.stock);
        m->u.R.market_category = rnd_char();
        m->u.R.financial_status = rnd_char();
        m->u.R.round_lot_size = (uint32_t)rnd();
        m->u.R.round_lots_only = rnd_char();
        m->u.R.issue_classification = rnd_char();
        m->u.R.issue_subtype[0] = rnd_char();
        m->u.R.issue_subtype[1] = rnd_char();
        m->u.R.authenticity = rnd_char();
        m->u.R.short_sale_threshold = rnd_char();
        m->u.R.ipo_flag = rnd_char();
        m->u.R.luld_tier = rnd_char();
        m->u.R.etp_flag = rnd_char();
        m->u.R.etp_leverage_factor = (uint32_t)rnd();
        m->u.R.inverse_indicator = rnd_char();
        break;
    case 'A':
    case 'F':
        a->order_ref = rnd();
        a->side = rnd_char();
        a->shares = (uint32_t)rnd();
        rnd_stock(a->stock);
        a->price = (uint32_t)rnd();
        if (type == 'F')
            for (int i = 0; i < 4; i++)
                m->u.F.attribution[i] = rnd_char();
        break;
    case 'E':
    case 'C':
        e->order_ref = rnd();
        e->shares = (uint32_t)rnd();
        e->match_number = rnd();
        if (type == 'C') {
            m->u.C.printable = rnd_char();
            m->u.C.price = (uint32_t)rnd();
        }
        break;
    case 'X':
        m->u.X.order_ref = rnd();
        m->u.X.shares = (uint32_t)rnd();
        break;
    case 'D':
        m->u.D.order_ref = rnd();
        break;
    case 'U':
        m->u.U.orig_order_ref = rnd();
        m->u.U.new_order_ref = rnd();
        m->u.U.shares = (uint32_t)rnd();
        m->u.U.price = (uint32_t)rnd();
        break;
    case 'P':
        m->u.P.order_ref = rnd();
        m->u.P.side = rnd_char();
        m->u.P.shares = (uint32_t)rnd();
        rnd_stock(m->u.P.stock);
        m->u.P.price = (uint32_t)rnd();
        m->u.P.match_number = rnd();
        break;
    }
}

/* Field-by-field equality of two messages of the same type (no memcmp: padding). */
static void assert_msg_equal(const struct itch_msg *x, const struct itch_msg *y)
{
    assert_int_equal(x->type, y->type);
    assert_int_equal(x->stock_locate, y->stock_locate);
    assert_int_equal(x->tracking_number, y->tracking_number);
    assert_true(x->timestamp_ns == y->timestamp_ns);
    const struct itch_add_order *xa = x->type == 'F' ? &x->u.F.add : &x->u.A;
    const struct itch_add_order *ya = y->type == 'F' ? &y->u.F.add : &y->u.A;
    const struct itch_order_executed *xe = x->type == 'C' ? &x->u.C.exec : &x->u.E;
    const struct itch_order_executed *ye = y->type == 'C' ? &y->u.C.exec : &y->u.E;
    switch (x->type) {
    case 'S':
        assert_int_equal(x->u.S.event_code, y->u.S.event_code);
        break;
    case 'R':
        assert_memory_equal(x->u.R.stock, y->u.R.stock, 8);
        assert_int_equal(x->u.R.market_category, y->u.R.market_category);
        assert_int_equal(x->u.R.financial_status, y->u.R.financial_status);
        assert_int_equal(x->u.R.round_lot_size, y->u.R.round_lot_size);
        assert_int_equal(x->u.R.round_lots_only, y->u.R.round_lots_only);
        assert_int_equal(x->u.R.issue_classification, y->u.R.issue_classification);
        assert_memory_equal(x->u.R.issue_subtype, y->u.R.issue_subtype, 2);
        assert_int_equal(x->u.R.authenticity, y->u.R.authenticity);
        assert_int_equal(x->u.R.short_sale_threshold, y->u.R.short_sale_threshold);
        assert_int_equal(x->u.R.ipo_flag, y->u.R.ipo_flag);
        assert_int_equal(x->u.R.luld_tier, y->u.R.luld_tier);
        assert_int_equal(x->u.R.etp_flag, y->u.R.etp_flag);
        assert_int_equal(x->u.R.etp_leverage_factor, y->u.R.etp_leverage_factor);
        assert_int_equal(x->u.R.inverse_indicator, y->u.R.inverse_indicator);
        break;
    case 'A':
    case 'F':
        assert_true(xa->order_ref == ya->order_ref);
        assert_int_equal(xa->side, ya->side);
        assert_int_equal(xa->shares, ya->shares);
        assert_memory_equal(xa->stock, ya->stock, 8);
        assert_int_equal(xa->price, ya->price);
        if (x->type == 'F')
            assert_memory_equal(x->u.F.attribution, y->u.F.attribution, 4);
        break;
    case 'E':
    case 'C':
        assert_true(xe->order_ref == ye->order_ref);
        assert_int_equal(xe->shares, ye->shares);
        assert_true(xe->match_number == ye->match_number);
        if (x->type == 'C') {
            assert_int_equal(x->u.C.printable, y->u.C.printable);
            assert_int_equal(x->u.C.price, y->u.C.price);
        }
        break;
    case 'X':
        assert_true(x->u.X.order_ref == y->u.X.order_ref);
        assert_int_equal(x->u.X.shares, y->u.X.shares);
        break;
    case 'D':
        assert_true(x->u.D.order_ref == y->u.D.order_ref);
        break;
    case 'U':
        assert_true(x->u.U.orig_order_ref == y->u.U.orig_order_ref);
        assert_true(x->u.U.new_order_ref == y->u.U.new_order_ref);
        assert_int_equal(x->u.U.shares, y->u.U.shares);
        assert_int_equal(x->u.U.price, y->u.U.price);
        break;
    case 'P':
        assert_true(x->u.P.order_ref == y->u.P.order_ref);
        assert_int_equal(x->u.P.side, y->u.P.side);
        assert_int_equal(x->u.P.shares, y->u.P.shares);
        assert_memory_equal(x->u.P.stock, y->u.P.stock, 8);
        assert_int_equal(x->u.P.price, y->u.P.price);
        assert_true(x->u.P.match_number == y->u.P.match_number);
        break;
    default:
        fail_msg("unexpected type %c", x->type);
    }
}

static void test_round_trip_every_type(void **state)
{
    (void)state;
    static const size_t lens[NTYPES] = {12, 39, 36, 40, 31, 36, 23, 19, 35, 44};
    for (size_t t = 0; t < NTYPES; t++) {
        assert_int_equal(itch_msg_len(all_types[t]), lens[t]);
        for (int i = 0; i < 1000; i++) {
            struct itch_msg m, d;
            uint8_t buf[ITCH_MAX_LEN], again[ITCH_MAX_LEN];
            random_msg(all_types[t], &m);
            assert_int_equal(itch_encode(&m, buf, sizeof(buf)), (int)lens[t]);
            /* A heap copy of exactly len bytes: ASan sees any read past it. */
            uint8_t *exact = malloc(lens[t]);
            assert_non_null(exact);
            memcpy(exact, buf, lens[t]);
            memset(&d, 0xA5, sizeof(d));
            assert_int_equal(itch_decode(exact, lens[t], &d), (int)lens[t]);
            free(exact);
            assert_msg_equal(&m, &d);
            assert_int_equal(itch_encode(&d, again, sizeof(again)), (int)lens[t]);
            assert_memory_equal(buf, again, lens[t]);
        }
    }
}

static void test_decode_rejects_wrong_length_and_type(void **state)
{
    (void)state;
    uint8_t buf[ITCH_MAX_LEN + 8];
    struct itch_msg m, d;
    for (size_t t = 0; t < NTYPES; t++) {
        random_msg(all_types[t], &m);
        int len = itch_encode(&m, buf, sizeof(buf));
        assert_true(len > 0);
        for (size_t l = 0; l < sizeof(buf); l++) {
            if (l == (size_t)len)
                continue;
            /* Exactly l bytes on the heap: a decoder that trusts the type would read past. */
            uint8_t *exact = malloc(l + 1);
            assert_non_null(exact);
            memcpy(exact, buf, l);
            assert_int_equal(itch_decode(exact, l, &d), -EBADMSG);
            free(exact);
        }
    }
    /* Types the codec does not know, including lower case and ITCH types it does not support. */
    static const uint8_t others[] = {0, 'a', 'Z', 'H', 'Y', 'L', 'I', 'Q', 'B', 0xFF};
    for (size_t i = 0; i < sizeof(others); i++) {
        memset(buf, 0, sizeof(buf));
        buf[0] = others[i];
        assert_int_equal(itch_msg_len(others[i]), 0);
        for (size_t l = 1; l <= ITCH_MAX_LEN; l++)
            assert_int_equal(itch_decode(buf, l, &d), -ENOMSG);
    }
    assert_int_equal(itch_decode(NULL, 12, &d), -EINVAL);
    assert_int_equal(itch_decode(buf, 12, NULL), -EINVAL);
}

static void test_encode_refuses_bad_input(void **state)
{
    (void)state;
    uint8_t buf[ITCH_MAX_LEN];
    struct itch_msg m;
    for (size_t t = 0; t < NTYPES; t++) {
        random_msg(all_types[t], &m);
        size_t len = itch_msg_len(all_types[t]);
        memset(buf, 0xEE, sizeof(buf));
        assert_int_equal(itch_encode(&m, buf, len - 1), -ENOSPC);
        assert_int_equal(buf[0], 0xEE); /* nothing written */
        m.timestamp_ns = ITCH_TIMESTAMP_MAX + 1;
        assert_int_equal(itch_encode(&m, buf, sizeof(buf)), -ERANGE);
    }
    m.type = 'Q';
    m.timestamp_ns = 0;
    assert_int_equal(itch_encode(&m, buf, sizeof(buf)), -ENOMSG);
    assert_int_equal(itch_encode(NULL, buf, sizeof(buf)), -EINVAL);
    assert_int_equal(itch_encode(&m, NULL, sizeof(buf)), -EINVAL);
}

static void test_stock_set_pads_and_truncates(void **state)
{
    (void)state;
    char s[8];
    itch_stock_set(s, "A");
    assert_memory_equal(s, "A       ", 8);
    itch_stock_set(s, "ABCDEFGHIJ");
    assert_memory_equal(s, "ABCDEFGH", 8);
    itch_stock_set(s, "");
    assert_memory_equal(s, "        ", 8);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_add_order),
        cmocka_unit_test(test_golden_order_delete),
        cmocka_unit_test(test_golden_order_replace),
        cmocka_unit_test(test_golden_trade),
        cmocka_unit_test(test_golden_stock_directory),
        cmocka_unit_test(test_round_trip_every_type),
        cmocka_unit_test(test_decode_rejects_wrong_length_and_type),
        cmocka_unit_test(test_encode_refuses_bad_input),
        cmocka_unit_test(test_stock_set_pads_and_truncates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
