/* SPDX-License-Identifier: BSD-2-Clause */
/* frame_verdict.c - prints the library decoder's verdict and fields for datagrams given in hex,
 * one per line, so the Wireshark dissector test can compare tools/wireshark/rdps.lua with
 * rdps__frame_decode() frame by frame.
 * usage: frame_verdict [MAX_MSG_LEN]   (the decoder's message size limit; default 16 MiB) */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdps_batch.h"
#include "rdps_frame.h"

enum { MAX_DATAGRAM = 65536 };

static int hex_value(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Decodes the hex line into buf; returns the byte count or -1 on a malformed line. */
static long parse_hex(const char *line, uint8_t *buf, size_t cap)
{
    size_t n = 0;
    for (const char *p = line; *p != '\0' && *p != '\n'; p += 2) {
        int hi = hex_value((unsigned char)p[0]);
        int lo = hi < 0 ? -1 : hex_value((unsigned char)p[1]);
        if (lo < 0 || n == cap)
            return -1;
        buf[n++] = (uint8_t)(hi << 4 | lo);
    }
    return (long)n;
}

static uint32_t get_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/*
 * A frame of an authenticated domain (core/transport/rdps_auth.h): an auth word in the
 * reserved field (bits 25..31 clear) and room for the 44-byte trailer. A keyed receiver
 * decodes what is left once its interceptor strips the trailer and clears the word, so that
 * is the verdict here (the tag is not checked: no key). An encrypted body is opaque: it is
 * replaced by what the lengths allow (zeros; a NAK's range count from its length, ranges of
 * one sequence; a parity heartbeat's k = 2; a batch of n messages n - 1 empty records and one
 * holding the rest), so only the header and the lengths are judged, as the dissector can.
 * Printed first: auth=1 key_id=N encrypted=0|1 counter=N. A frame of wire version 2 (rdps 1.2:
 * a 40-byte header) is unwrapped as that release's keyed receivers did, then rejected as
 * BAD_VERSION like any version 2 frame.
 */
#define KEYED_TRAILER_LEN 44 /* RDPS_AUTH_TRAILER_LEN: prefix 16, counter 8, sent_s 4, tag 16 */
#define V2_TRAILER_LEN    40 /* rdps 1.2's: no sent_s */

static size_t unwrap_keyed(uint8_t *buf, size_t len)
{
    bool v2 = len > 0 && buf[RDPS_FRAME_OFF_VERSION] == 2;
    size_t header_len = v2 ? 40 : RDPS_FRAME_HEADER_LEN;
    size_t trailer_len = v2 ? V2_TRAILER_LEN : KEYED_TRAILER_LEN;
    if (len < header_len + trailer_len)
        return len;
    uint32_t word = get_le32(buf + RDPS_FRAME_OFF_RESERVED);
    if (word == 0 || (word & 0xFE000000u) != 0)
        return len;
    len -= trailer_len;
    uint64_t counter = 0;
    for (int i = 7; i >= 0; i--)
        counter = counter << 8 | buf[len + 16 + (size_t)i];
    bool encrypted = (word & 0x1000000u) != 0;
    printf("auth=1 key_id=%" PRIu32 " encrypted=%d counter=%" PRIu64 " ", word & 0xFFFFFFu,
           encrypted ? 1 : 0, counter);
    memset(buf + RDPS_FRAME_OFF_RESERVED, 0, 4);
    if (encrypted && header_len == RDPS_FRAME_HEADER_LEN) {
        memset(buf + RDPS_FRAME_HEADER_LEN, 0, len - RDPS_FRAME_HEADER_LEN);
        if (buf[RDPS_FRAME_OFF_TYPE] == RDPS_FRAME_NAK && len >= RDPS_FRAME_NAK_OFF_RANGES &&
            (len - RDPS_FRAME_NAK_OFF_RANGES) % RDPS_FRAME_NAK_RANGE_LEN == 0) {
            size_t n = (len - RDPS_FRAME_NAK_OFF_RANGES) / RDPS_FRAME_NAK_RANGE_LEN;
            buf[RDPS_FRAME_NAK_OFF_RANGE_COUNT] = (uint8_t)n;
            buf[RDPS_FRAME_NAK_OFF_RANGE_COUNT + 1] = (uint8_t)(n >> 8);
            for (size_t i = 0; i < n; i++)
                buf[RDPS_FRAME_NAK_OFF_RANGES + i * RDPS_FRAME_NAK_RANGE_LEN + 4] = 1;
        }
        /* A parity heartbeat's body: the least valid k (the rest is zero). */
        if (buf[RDPS_FRAME_OFF_TYPE] == RDPS_FRAME_HEARTBEAT && len == RDPS_FRAME_HB_PARITY_LEN)
            buf[RDPS_FRAME_HB_OFF_PARITY_K] = 2;
        /* A batch whose count the length allows: records that fill the payload. */
        uint32_t count = get_le32(buf + RDPS_FRAME_OFF_COUNT);
        size_t body = len - RDPS_FRAME_HEADER_LEN;
        if (buf[RDPS_FRAME_OFF_TYPE] == RDPS_FRAME_DATA && count >= 2 &&
            count <= body / RDPS_BATCH_LEN_BYTES) {
            uint8_t *last =
                buf + RDPS_FRAME_HEADER_LEN + (size_t)(count - 1) * RDPS_BATCH_LEN_BYTES;
            size_t rest = body - (size_t)count * RDPS_BATCH_LEN_BYTES;
            last[0] = (uint8_t)rest;
            last[1] = (uint8_t)(rest >> 8);
        }
    }
    return len;
}

/* A DATA frame's whole messages as ordinal:length:hex, joined by commas (rdps_batch.h). */
static void print_messages(const struct rdps_frame_view *v)
{
    const struct rdps_frame_header *h = &v->hdr;
    struct rdps_batch_iter it;
    rdps__batch_iter_init(&it, v->payload);
    printf(" msgs=");
    for (uint32_t i = 0; i < h->count; i++) {
        uint32_t len = v->payload_len;
        const uint8_t *msg = h->count == 1 ? v->payload : rdps__batch_next(&it, &len);
        printf("%s%" PRIu32 ":%" PRIu32 ":", i ? "," : "", h->ordinal + i, len);
        for (uint32_t k = 0; k < len; k++)
            printf("%02x", msg[k]);
    }
}

/*
 * Output, one line per input line, space-separated key=value: reason first; on OK the header
 * and the body fields of the frame type (NAK ranges as start:count joined by commas, a DATA
 * frame's whole messages as above).
 */
static void print_verdict(uint8_t *buf, size_t len, const struct rdps_frame_limits *limits)
{
    struct rdps_frame_view v;
    len = unwrap_keyed(buf, len);
    enum rdps_frame_reject reason = rdps__frame_decode(buf, len, limits, &v);
    printf("reason=%s", rdps__frame_reject_name(reason));
    if (reason == RDPS_FRAME_OK) {
        const struct rdps_frame_header *h = &v.hdr;
        printf(" type=%u flags=%u session=%" PRIu32 " topic=%" PRIu64 " seq=%" PRIu32
               " msg_len=%" PRIu32 " frag_offset=%" PRIu32 " timestamp_ns=%" PRIu64
               " ordinal=%" PRIu32 " count=%" PRIu32 " body_len=%" PRIu32,
               h->type, h->flags, h->session_id, h->topic_id, h->seq, h->msg_len, h->frag_offset,
               h->timestamp_ns, h->ordinal, h->count, v.payload_len);
        if (h->type == RDPS_FRAME_DATA && h->count > 0) {
            print_messages(&v);
        } else if (h->type == RDPS_FRAME_NAK) {
            printf(" receiver_id=%" PRIu32 " range_count=%u ranges=", v.receiver_id,
                   v.nak_range_count);
            for (unsigned i = 0; i < v.nak_range_count; i++) {
                struct rdps_seq_range r = rdps__frame_nak_range(&v, i);
                printf("%s%" PRIu32 ":%" PRIu32, i ? "," : "", r.start, r.count);
            }
        } else if (h->type == RDPS_FRAME_STATUS) {
            printf(" receiver_id=%" PRIu32 " consumed_seq=%" PRIu32 " window=%" PRIu32
                   " echo_delay_us=%" PRIu32,
                   v.receiver_id, v.consumed_seq, v.window, v.echo_delay_us);
        } else if (h->type == RDPS_FRAME_HEARTBEAT) {
            printf(" retained=%" PRIu32 " trail_ordinal=%" PRIu32, v.retained, v.trail_ordinal);
            if (h->flags & RDPS_FRAME_F_PARITY)
                printf(" parity_k=%" PRIu32 " max_rtt_us=%" PRIu32 " receivers=%" PRIu32,
                       v.parity_k, v.hb_max_rtt_us, v.hb_receivers);
        } else if (h->type == RDPS_FRAME_PARITY) {
            printf(" parity_k=%" PRIu32 " parity_index=%" PRIu32, v.parity_k, v.parity_index);
        }
    }
    putchar('\n');
}

int main(int argc, char **argv)
{
    static char line[2 * MAX_DATAGRAM + 2];
    static uint8_t buf[MAX_DATAGRAM];
    struct rdps_frame_limits limits;
    rdps__frame_limits_default(&limits);
    if (argc > 1) {
        char *end;
        unsigned long max = strtoul(argv[1], &end, 10);
        if (argc > 2 || *end != '\0' || max == 0 || max > UINT32_MAX) {
            fprintf(stderr, "usage: frame_verdict [MAX_MSG_LEN]\n");
            return 2;
        }
        limits.max_msg_len = (uint32_t)max;
    }
    while (fgets(line, sizeof(line), stdin) != NULL) {
        long n = parse_hex(line, buf, sizeof(buf));
        if (n < 0) {
            fprintf(stderr, "frame_verdict: malformed hex line\n");
            return 2;
        }
        print_verdict(buf, (size_t)n, &limits);
    }
    return ferror(stdin) ? 2 : 0;
}
