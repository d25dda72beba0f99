/* SPDX-License-Identifier: BSD-2-Clause */
/* itch.h - NASDAQ TotalView-ITCH 5.0 messages: host-order structs and a byte-exact big-endian
 * codec for the ten message types the market-data demo uses. */
#ifndef RDPS_MD_ITCH_H
#define RDPS_MD_ITCH_H

#include <stddef.h>
#include <stdint.h>

/*
 * Model
 * -----
 * ITCH 5.0 messages are fixed-layout, big-endian, with no padding and no
 * length field of their own (a transport frames them: NASDAQ's day files and
 * MoldUDP64 put a 2-byte big-endian length before each). Every message
 * starts with the same 11-byte header:
 *
 *   offset 0  type             1  ASCII letter
 *          1  stock locate     2  symbol index of the day (0: not symbol-specific)
 *          3  tracking number  2
 *          5  timestamp        6  nanoseconds since midnight
 *
 * Prices are u32 with 4 implied decimals ($12.34 is 123400); stock symbols
 * are 8 ASCII bytes, left-justified and space padded; sides are 'B' or 'S'.
 *
 * struct itch_msg holds one message in host order: the header fields and a
 * union of per-type bodies named after the type letter. itch_encode() writes
 * exactly itch_msg_len(type) bytes; itch_decode() accepts a buffer only if
 * its first byte is a supported type and its length is exactly that type's
 * size, and never reads past len. Field values are carried as they are
 * (a side other than 'B'/'S' decodes; the order book counts it): the codec
 * checks layouts, the consumer checks meaning.
 *
 * Errors are negative errno values: -ENOMSG unsupported type, -EBADMSG a
 * length that is not the type's, -ENOSPC an encode buffer too small,
 * -ERANGE a timestamp that does not fit 48 bits, -EINVAL a NULL argument.
 */

enum itch_type {
    ITCH_SYSTEM_EVENT = 'S',
    ITCH_STOCK_DIRECTORY = 'R',
    ITCH_ADD_ORDER = 'A',
    ITCH_ADD_ORDER_MPID = 'F',
    ITCH_ORDER_EXECUTED = 'E',
    ITCH_ORDER_EXECUTED_PRICE = 'C',
    ITCH_ORDER_CANCEL = 'X',
    ITCH_ORDER_DELETE = 'D',
    ITCH_ORDER_REPLACE = 'U',
    ITCH_TRADE = 'P',
};

/* Wire sizes in bytes, header included. */
#define ITCH_HEADER_LEN               11
#define ITCH_SYSTEM_EVENT_LEN         12
#define ITCH_STOCK_DIRECTORY_LEN      39
#define ITCH_ADD_ORDER_LEN            36
#define ITCH_ADD_ORDER_MPID_LEN       40
#define ITCH_ORDER_EXECUTED_LEN       31
#define ITCH_ORDER_EXECUTED_PRICE_LEN 36
#define ITCH_ORDER_CANCEL_LEN         23
#define ITCH_ORDER_DELETE_LEN         19
#define ITCH_ORDER_REPLACE_LEN        35
#define ITCH_TRADE_LEN                44
#define ITCH_MAX_LEN                  44 /* the longest supported message */
#define ITCH_TIMESTAMP_MAX            ((UINT64_C(1) << 48) - 1)
#define ITCH_STOCK_LEN                8
#define ITCH_PRICE_SCALE              10000 /* 4 implied decimals */

/* S: system event ('O' start of messages, 'S' start of system hours, 'Q' start of market hours,
 * 'M' end of market hours, 'E' end of system hours, 'C' end of messages). */
struct itch_system_event {
    char event_code;
};

/* R: one per symbol at the start of the day; binds the stock locate to the symbol. */
struct itch_stock_directory {
    char stock[ITCH_STOCK_LEN];
    char market_category;
    char financial_status;
    uint32_t round_lot_size;
    char round_lots_only;
    char issue_classification;
    char issue_subtype[2];
    char authenticity;
    char short_sale_threshold;
    char ipo_flag;
    char luld_tier;
    char etp_flag;
    uint32_t etp_leverage_factor;
    char inverse_indicator;
};

/* A: a new displayed order on the book. */
struct itch_add_order {
    uint64_t order_ref;
    char side; /* 'B' or 'S' */
    uint32_t shares;
    char stock[ITCH_STOCK_LEN];
    uint32_t price;
};

/* F: an add with the market participant's attribution. */
struct itch_add_order_mpid {
    struct itch_add_order add;
    char attribution[4];
};

/* E: part or all of an order executed at its own price. */
struct itch_order_executed {
    uint64_t order_ref;
    uint32_t shares;
    uint64_t match_number;
};

/* C: executed at another price; printable 'Y' counts in volume statistics, 'N' does not. */
struct itch_order_executed_price {
    struct itch_order_executed exec;
    char printable;
    uint32_t price;
};

/* X: part of an order cancelled (the order stays with its remaining shares). */
struct itch_order_cancel {
    uint64_t order_ref;
    uint32_t shares;
};

/* D: the whole order removed. */
struct itch_order_delete {
    uint64_t order_ref;
};

/* U: the original order removed, a new one (new reference, same side and symbol) added. */
struct itch_order_replace {
    uint64_t orig_order_ref;
    uint64_t new_order_ref;
    uint32_t shares;
    uint32_t price;
};

/* P: an execution of a non-displayed order (no book change). */
struct itch_trade {
    uint64_t order_ref;
    char side;
    uint32_t shares;
    char stock[ITCH_STOCK_LEN];
    uint32_t price;
    uint64_t match_number;
};

struct itch_msg {
    uint8_t type; /* enum itch_type */
    uint16_t stock_locate;
    uint16_t tracking_number;
    uint64_t timestamp_ns; /* < 2^48 */
    union {
        struct itch_system_event S;
        struct itch_stock_directory R;
        struct itch_add_order A;
        struct itch_add_order_mpid F;
        struct itch_order_executed E;
        struct itch_order_executed_price C;
        struct itch_order_cancel X;
        struct itch_order_delete D;
        struct itch_order_replace U;
        struct itch_trade P;
    } u;
};

/* Wire length of a supported type, 0 for any other byte. */
size_t itch_msg_len(uint8_t type);

/* Writes msg in wire format; returns its length (itch_msg_len(msg->type)) or a negative error. */
int itch_encode(const struct itch_msg *msg, uint8_t *buf, size_t cap);

/* Reads exactly one message of exactly len bytes; returns len or a negative error (out is then
 * unspecified). */
int itch_decode(const uint8_t *buf, size_t len, struct itch_msg *out);

/* Copies a NUL-terminated symbol into an 8-byte space-padded field (truncated at 8). */
void itch_stock_set(char stock[ITCH_STOCK_LEN], const char *symbol);

#endif /* RDPS_MD_ITCH_H */
