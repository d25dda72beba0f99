/* SPDX-License-Identifier: BSD-2-Clause */
/* frame_verdict.c - prints the library decoder's verdict and fields for datagrams given in hex,
 * one per line, so the Wireshark dissector test can compare tools/wireshark/rdps.lua with
 * rdps__frame_decode() frame by frame. */
#include <inttypes.h>
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
static void print_verdict(const uint8_t *buf, size_t len)
{
    struct rdps_frame_view v;
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
