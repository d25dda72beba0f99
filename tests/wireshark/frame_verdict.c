/* SPDX-License-Identifier: BSD-2-Clause */
/* frame_verdict.c - prints the library decoder's verdict and fields for datagrams given in hex,
 * one per line, so the Wireshark dissector test can compare tools/wireshark/rdps.lua with
 * rdps__frame_decode() frame by frame. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

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

/*
 * Output, one line per input line, space-separated key=value: reason first; on OK the header
 * and the body fields of the frame type (NAK ranges as start:count joined by commas).
 */
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
 * one sequence; a parity heartbeat's k = 2), so only the header and the lengths are judged, as the
 * dissector can. Printed first: auth=1 key_id=N encrypted=0|1 counter=N.
 */
#define KEYED_TRAILER_LEN 44 /* RDPS_AUTH_TRAILER_LEN: prefix 16, counter 8, sent_s 4, tag 16 */

static size_t unwrap_keyed(uint8_t *buf, size_t len)
{
    uint32_t word = get_le32(buf + RDPS_FRAME_OFF_RESERVED);
    if (len < RDPS_FRAME_HEADER_LEN + KEYED_TRAILER_LEN || word == 0 || (word & 0xFE000000u) != 0)
        return len;
    len -= KEYED_TRAILER_LEN;
    uint64_t counter = 0;
    for (int i = 7; i >= 0; i--)
        counter = counter << 8 | buf[len + 16 + (size_t)i];
    bool encrypted = (word & 0x1000000u) != 0;
    printf("auth=1 key_id=%" PRIu32 " encrypted=%d counter=%" PRIu64 " ", word & 0xFFFFFFu,
           encrypted ? 1 : 0, counter);
    memset(buf + RDPS_FRAME_OFF_RESERVED, 0, 4);
    if (encrypted) {
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
    }
    return len;
}

static void print_verdict(uint8_t *buf, size_t len)
{
    struct rdps_frame_view v;
    len = unwrap_keyed(buf, len);
    enum rdps_frame_reject reason = rdps__frame_decode(buf, len, NULL, &v);
    printf("reason=%s", rdps__frame_reject_name(reason));
    if (reason == RDPS_FRAME_OK) {
        const struct rdps_frame_header *h = &v.hdr;
        printf(" type=%u flags=%u session=%" PRIu32 " topic=%" PRIu64 " seq=%" PRIu32
               " msg_len=%" PRIu32 " frag_offset=%" PRIu32 " timestamp_ns=%" PRIu64
               " body_len=%" PRIu32,
               h->type, h->flags, h->session_id, h->topic_id, h->seq, h->msg_len, h->frag_offset,
               h->timestamp_ns, v.payload_len);
        if (h->type == RDPS_FRAME_NAK) {
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
            printf(" retained=%" PRIu32, v.retained);
            if (h->flags & RDPS_FRAME_F_PARITY)
                printf(" parity_k=%" PRIu32 " max_rtt_us=%" PRIu32 " receivers=%" PRIu32,
                       v.parity_k, v.hb_max_rtt_us, v.hb_receivers);
        } else if (h->type == RDPS_FRAME_PARITY) {
            printf(" parity_k=%" PRIu32 " parity_index=%" PRIu32, v.parity_k, v.parity_index);
        }
    }
    putchar('\n');
}

int main(void)
{
    static char line[2 * MAX_DATAGRAM + 2];
    static uint8_t buf[MAX_DATAGRAM];
    while (fgets(line, sizeof(line), stdin) != NULL) {
        long n = parse_hex(line, buf, sizeof(buf));
        if (n < 0) {
            fprintf(stderr, "frame_verdict: malformed hex line\n");
            return 2;
        }
        print_verdict(buf, (size_t)n);
    }
    return ferror(stdin) ? 2 : 0;
}
