/* SPDX-License-Identifier: BSD-2-Clause */
/* itch.c - the ITCH 5.0 codec: field offsets pinned against the specification's sizes. */
#include "itch.h"

#include <endian.h>
#include <errno.h>
#include <string.h>

/* Header. */
#define OFF_TYPE     0
#define OFF_LOCATE   1
#define OFF_TRACKING 3
#define OFF_TS       5
_Static_assert(OFF_TS + 6 == ITCH_HEADER_LEN, "ITCH header is 11 bytes");

/* Bodies: each offset is the previous one plus the previous field's size. */
#define S_EVENT_CODE 11
_Static_assert(S_EVENT_CODE + 1 == ITCH_SYSTEM_EVENT_LEN, "S is 12 bytes");

#define R_STOCK           11
#define R_MARKET_CATEGORY (R_STOCK + 8)
#define R_FIN_STATUS      (R_MARKET_CATEGORY + 1)
#define R_ROUND_LOT       (R_FIN_STATUS + 1)
#define R_ROUND_LOTS_ONLY (R_ROUND_LOT + 4)
#define R_ISSUE_CLASS     (R_ROUND_LOTS_ONLY + 1)
#define R_ISSUE_SUBTYPE   (R_ISSUE_CLASS + 1)
#define R_AUTHENTICITY    (R_ISSUE_SUBTYPE + 2)
#define R_SHORT_SALE      (R_AUTHENTICITY + 1)
#define R_IPO             (R_SHORT_SALE + 1)
#define R_LULD_TIER       (R_IPO + 1)
#define R_ETP_FLAG        (R_LULD_TIER + 1)
#define R_ETP_LEVERAGE    (R_ETP_FLAG + 1)
#define R_INVERSE         (R_ETP_LEVERAGE + 4)
_Static_assert(R_INVERSE == 38 && R_INVERSE + 1 == ITCH_STOCK_DIRECTORY_LEN, "R is 39 bytes");

#define A_REF    11
#define A_SIDE   (A_REF + 8)
#define A_SHARES (A_SIDE + 1)
#define A_STOCK  (A_SHARES + 4)
#define A_PRICE  (A_STOCK + 8)
#define F_ATTRIB (A_PRICE + 4)
_Static_assert(A_PRICE == 32 && A_PRICE + 4 == ITCH_ADD_ORDER_LEN, "A is 36 bytes");
_Static_assert(F_ATTRIB + 4 == ITCH_ADD_ORDER_MPID_LEN, "F is 40 bytes");

#define E_REF       11
#define E_SHARES    (E_REF + 8)
#define E_MATCH     (E_SHARES + 4)
#define C_PRINTABLE (E_MATCH + 8)
#define C_PRICE     (C_PRINTABLE + 1)
_Static_assert(C_PRINTABLE == ITCH_ORDER_EXECUTED_LEN, "E is 31 bytes");
_Static_assert(C_PRICE + 4 == ITCH_ORDER_EXECUTED_PRICE_LEN, "C is 36 bytes");

#define X_REF    11
#define X_SHARES (X_REF + 8)
_Static_assert(X_SHARES + 4 == ITCH_ORDER_CANCEL_LEN, "X is 23 bytes");

#define D_REF 11
_Static_assert(D_REF + 8 == ITCH_ORDER_DELETE_LEN, "D is 19 bytes");

#define U_ORIG   11
#define U_NEW    (U_ORIG + 8)
#define U_SHARES (U_NEW + 8)
#define U_PRICE  (U_SHARES + 4)
_Static_assert(U_PRICE + 4 == ITCH_ORDER_REPLACE_LEN, "U is 35 bytes");

#define P_REF    11
#define P_SIDE   (P_REF + 8)
#define P_SHARES (P_SIDE + 1)
#define P_STOCK  (P_SHARES + 4)
#define P_PRICE  (P_STOCK + 8)
#define P_MATCH  (P_PRICE + 4)
_Static_assert(P_MATCH + 8 == ITCH_TRADE_LEN && ITCH_TRADE_LEN == ITCH_MAX_LEN, "P is 44 bytes");

/* Big-endian field access (ITCH is the only big-endian format in rdps; the wire helpers of
 * core/proto are little-endian): memcpy plus a byte swap, one unaligned load or store each. */
static inline void put_be16(uint8_t *p, uint16_t v)
{
    v = htobe16(v);
    memcpy(p, &v, sizeof(v));
}

static inline void put_be32(uint8_t *p, uint32_t v)
{
    v = htobe32(v);
    memcpy(p, &v, sizeof(v));
}

static inline void put_be64(uint8_t *p, uint64_t v)
{
    v = htobe64(v);
    memcpy(p, &v, sizeof(v));
}

static inline void put_be48(uint8_t *p, uint64_t v)
{
    put_be16(p, (uint16_t)(v >> 32));
    put_be32(p + 2, (uint32_t)v);
}

static inline uint16_t get_be16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, sizeof(v));
    return be16toh(v);
}

static inline uint32_t get_be32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return be32toh(v);
}

static inline uint64_t get_be64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof(v));
    return be64toh(v);
}

static inline uint64_t get_be48(const uint8_t *p)
{
    return (uint64_t)get_be16(p) << 32 | get_be32(p + 2);
}

static inline void put_char(uint8_t *p, char c)
{
    *p = (uint8_t)c;
}

static inline char get_char(const uint8_t *p)
{
    return (char)*p;
}

size_t itch_msg_len(uint8_t type)
{
    switch (type) {
    case ITCH_SYSTEM_EVENT:
        return ITCH_SYSTEM_EVENT_LEN;
    case ITCH_STOCK_DIRECTORY:
        return ITCH_STOCK_DIRECTORY_LEN;
    case ITCH_ADD_ORDER:
        return ITCH_ADD_ORDER_LEN;
    case ITCH_ADD_ORDER_MPID:
        return ITCH_ADD_ORDER_MPID_LEN;
    case ITCH_ORDER_EXECUTED:
        return ITCH_ORDER_EXECUTED_LEN;
    case ITCH_ORDER_EXECUTED_PRICE:
        return ITCH_ORDER_EXECUTED_PRICE_LEN;
    case ITCH_ORDER_CANCEL:
        return ITCH_ORDER_CANCEL_LEN;
    case ITCH_ORDER_DELETE:
        return ITCH_ORDER_DELETE_LEN;
    case ITCH_ORDER_REPLACE:
        return ITCH_ORDER_REPLACE_LEN;
    case ITCH_TRADE:
        return ITCH_TRADE_LEN;
    default:
        return 0;
    }
}

static void encode_add(const struct itch_add_order *a, uint8_t *b)
{
    put_be64(b + A_REF, a->order_ref);
    put_char(b + A_SIDE, a->side);
    put_be32(b + A_SHARES, a->shares);
    memcpy(b + A_STOCK, a->stock, ITCH_STOCK_LEN);
    put_be32(b + A_PRICE, a->price);
}

static void encode_exec(const struct itch_order_executed *e, uint8_t *b)
{
    put_be64(b + E_REF, e->order_ref);
    put_be32(b + E_SHARES, e->shares);
    put_be64(b + E_MATCH, e->match_number);
}

static void encode_directory(const struct itch_stock_directory *r, uint8_t *b)
{
    memcpy(b + R_STOCK, r->stock, ITCH_STOCK_LEN);
    put_char(b + R_MARKET_CATEGORY, r->market_category);
    put_char(b + R_FIN_STATUS, r->financial_status);
    put_be32(b + R_ROUND_LOT, r->round_lot_size);
    put_char(b + R_ROUND_LOTS_ONLY, r->round_lots_only);
    put_char(b + R_ISSUE_CLASS, r->issue_classification);
    memcpy(b + R_ISSUE_SUBTYPE, r->issue_subtype, 2);
    put_char(b + R_AUTHENTICITY, r->authenticity);
    put_char(b + R_SHORT_SALE, r->short_sale_threshold);
    put_char(b + R_IPO, r->ipo_flag);
    put_char(b + R_LULD_TIER, r->luld_tier);
    put_char(b + R_ETP_FLAG, r->etp_flag);
    put_be32(b + R_ETP_LEVERAGE, r->etp_leverage_factor);
    put_char(b + R_INVERSE, r->inverse_indicator);
}

int itch_encode(const struct itch_msg *msg, uint8_t *buf, size_t cap)
{
    if (msg == NULL || buf == NULL)
        return -EINVAL;
    size_t len = itch_msg_len(msg->type);
    if (len == 0)
        return -ENOMSG;
    if (cap < len)
        return -ENOSPC;
    if (msg->timestamp_ns > ITCH_TIMESTAMP_MAX)
        return -ERANGE;
    buf[OFF_TYPE] = msg->type;
    put_be16(buf + OFF_LOCATE, msg->stock_locate);
    put_be16(buf + OFF_TRACKING, msg->tracking_number);
    put_be48(buf + OFF_TS, msg->timestamp_ns);
    switch (msg->type) {
    case ITCH_SYSTEM_EVENT:
        put_char(buf + S_EVENT_CODE, msg->u.S.event_code);
        break;
    case ITCH_STOCK_DIRECTORY:
        encode_directory(&msg->u.R, buf);
        break;
    case ITCH_ADD_ORDER:
        encode_add(&msg->u.A, buf);
        break;
    case ITCH_ADD_ORDER_MPID:
        encode_add(&msg->u.F.add, buf);
        memcpy(buf + F_ATTRIB, msg->u.F.attribution, 4);
        break;
    case ITCH_ORDER_EXECUTED:
        encode_exec(&msg->u.E, buf);
        break;
    case ITCH_ORDER_EXECUTED_PRICE:
        encode_exec(&msg->u.C.exec, buf);
        put_char(buf + C_PRINTABLE, msg->u.C.printable);
        put_be32(buf + C_PRICE, msg->u.C.price);
        break;
    case ITCH_ORDER_CANCEL:
        put_be64(buf + X_REF, msg->u.X.order_ref);
        put_be32(buf + X_SHARES, msg->u.X.shares);
        break;
    case ITCH_ORDER_DELETE:
        put_be64(buf + D_REF, msg->u.D.order_ref);
        break;
    case ITCH_ORDER_REPLACE:
        put_be64(buf + U_ORIG, msg->u.U.orig_order_ref);
        put_be64(buf + U_NEW, msg->u.U.new_order_ref);
        put_be32(buf + U_SHARES, msg->u.U.shares);
        put_be32(buf + U_PRICE, msg->u.U.price);
        break;
    case ITCH_TRADE:
        put_be64(buf + P_REF, msg->u.P.order_ref);
        put_char(buf + P_SIDE, msg->u.P.side);
        put_be32(buf + P_SHARES, msg->u.P.shares);
        memcpy(buf + P_STOCK, msg->u.P.stock, ITCH_STOCK_LEN);
        put_be32(buf + P_PRICE, msg->u.P.price);
        put_be64(buf + P_MATCH, msg->u.P.match_number);
        break;
    }
    return (int)len;
}

static void decode_add(const uint8_t *b, struct itch_add_order *a)
{
    a->order_ref = get_be64(b + A_REF);
    a->side = get_char(b + A_SIDE);
    a->shares = get_be32(b + A_SHARES);
    memcpy(a->stock, b + A_STOCK, ITCH_STOCK_LEN);
    a->price = get_be32(b + A_PRICE);
}

static void decode_exec(const uint8_t *b, struct itch_order_executed *e)
{
    e->order_ref = get_be64(b + E_REF);
    e->shares = get_be32(b + E_SHARES);
    e->match_number = get_be64(b + E_MATCH);
}

static void decode_directory(const uint8_t *b, struct itch_stock_directory *r)
{
    memcpy(r->stock, b + R_STOCK, ITCH_STOCK_LEN);
    r->market_category = get_char(b + R_MARKET_CATEGORY);
    r->financial_status = get_char(b + R_FIN_STATUS);
    r->round_lot_size = get_be32(b + R_ROUND_LOT);
    r->round_lots_only = get_char(b + R_ROUND_LOTS_ONLY);
    r->issue_classification = get_char(b + R_ISSUE_CLASS);
    memcpy(r->issue_subtype, b + R_ISSUE_SUBTYPE, 2);
    r->authenticity = get_char(b + R_AUTHENTICITY);
    r->short_sale_threshold = get_char(b + R_SHORT_SALE);
    r->ipo_flag = get_char(b + R_IPO);
    r->luld_tier = get_char(b + R_LULD_TIER);
    r->etp_flag = get_char(b + R_ETP_FLAG);
    r->etp_leverage_factor = get_be32(b + R_ETP_LEVERAGE);
    r->inverse_indicator = get_char(b + R_INVERSE);
}

int itch_decode(const uint8_t *buf, size_t len, struct itch_msg *out)
{
    if (buf == NULL || out == NULL)
        return -EINVAL;
    if (len == 0)
        return -EBADMSG;
    size_t want = itch_msg_len(buf[OFF_TYPE]);
    if (want == 0)
        return -ENOMSG;
    if (len != want)
        return -EBADMSG;
    out->type = buf[OFF_TYPE];
    out->stock_locate = get_be16(buf + OFF_LOCATE);
    out->tracking_number = get_be16(buf + OFF_TRACKING);
    out->timestamp_ns = get_be48(buf + OFF_TS);
    switch (out->type) {
    case ITCH_SYSTEM_EVENT:
        out->u.S.event_code = get_char(buf + S_EVENT_CODE);
        break;
    case ITCH_STOCK_DIRECTORY:
        decode_directory(buf, &out->u.R);
        break;
    case ITCH_ADD_ORDER:
        decode_add(buf, &out->u.A);
        break;
    case ITCH_ADD_ORDER_MPID:
        decode_add(buf, &out->u.F.add);
        memcpy(out->u.F.attribution, buf + F_ATTRIB, 4);
        break;
    case ITCH_ORDER_EXECUTED:
        decode_exec(buf, &out->u.E);
        break;
    case ITCH_ORDER_EXECUTED_PRICE:
        decode_exec(buf, &out->u.C.exec);
        out->u.C.printable = get_char(buf + C_PRINTABLE);
        out->u.C.price = get_be32(buf + C_PRICE);
        break;
    case ITCH_ORDER_CANCEL:
        out->u.X.order_ref = get_be64(buf + X_REF);
        out->u.X.shares = get_be32(buf + X_SHARES);
        break;
    case ITCH_ORDER_DELETE:
        out->u.D.order_ref = get_be64(buf + D_REF);
        break;
    case ITCH_ORDER_REPLACE:
        out->u.U.orig_order_ref = get_be64(buf + U_ORIG);
        out->u.U.new_order_ref = get_be64(buf + U_NEW);
        out->u.U.shares = get_be32(buf + U_SHARES);
        out->u.U.price = get_be32(buf + U_PRICE);
        break;
    case ITCH_TRADE:
        out->u.P.order_ref = get_be64(buf + P_REF);
        out->u.P.side = get_char(buf + P_SIDE);
        out->u.P.shares = get_be32(buf + P_SHARES);
        memcpy(out->u.P.stock, buf + P_STOCK, ITCH_STOCK_LEN);
        out->u.P.price = get_be32(buf + P_PRICE);
        out->u.P.match_number = get_be64(buf + P_MATCH);
        break;
    }
    return (int)len;
}

void itch_stock_set(char stock[ITCH_STOCK_LEN], const char *symbol)
{
    size_t n = symbol != NULL ? strnlen(symbol, ITCH_STOCK_LEN) : 0;
    if (n > 0)
        memcpy(stock, symbol, n);
    memset(stock + n, ' ', ITCH_STOCK_LEN - n);
}
