/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_frame_decode.c - libFuzzer harness: the frame decoder on arbitrary bytes, plus re-encode
 * round trips. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rdps_frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A decoded frame must re-encode to exactly the same bytes: the decoder accepts only canonical
 * frames. */
static void check_round_trip(const uint8_t *data, size_t size, const struct rdps_frame_view *v)
{
    uint8_t *out = malloc(size ? size : 1);
    if (out == NULL)
        abort();
    const struct rdps_frame_header *h = &v->hdr;
    int n = -1;
    switch (h->type) {
    case RDPS_FRAME_DATA:
        memcpy(out + RDPS_FRAME_HEADER_LEN, v->payload, v->payload_len);
        n = (int)rdps__frame_put_data_header(
            out, h->session_id, h->topic_id, h->seq, h->msg_len, h->frag_offset, v->payload_len,
            h->timestamp_ns, (uint16_t)(h->flags & ~(RDPS_FRAME_F_BEGIN | RDPS_FRAME_F_END)));
        break;
    case RDPS_FRAME_HEARTBEAT:
        if (h->flags & RDPS_FRAME_F_PARITY)
            n = rdps__frame_encode_heartbeat_parity(out, size, h->session_id, h->topic_id, h->seq,
                                                    v->retained, h->timestamp_ns, v->parity_k,
                                                    v->hb_max_rtt_us, v->hb_receivers);
        else if (h->flags & RDPS_FRAME_F_RELIABLE)
            n = rdps__frame_encode_heartbeat_reliable(out, size, h->session_id, h->topic_id, h->seq,
                                                      v->retained, h->timestamp_ns);
        else
            n = rdps__frame_encode_heartbeat(out, size, h->session_id, h->topic_id, h->seq,
                                             h->timestamp_ns, h->flags);
        break;
    case RDPS_FRAME_NAK: {
        struct rdps_seq_range ranges[RDPS_FRAME_NAK_MAX_RANGES];
        for (unsigned i = 0; i < v->nak_range_count; i++)
            ranges[i] = rdps__frame_nak_range(v, i);
        n = rdps__frame_encode_nak_flags(out, size, h->session_id, h->topic_id, v->receiver_id,
                                         ranges, v->nak_range_count, h->timestamp_ns, h->flags);
        break;
    }
    case RDPS_FRAME_STATUS:
        n = rdps__frame_encode_status_echo(out, size, h->session_id, h->topic_id, v->receiver_id,
                                           v->consumed_seq, v->window, v->echo_delay_us,
                                           h->timestamp_ns);
        break;
    case RDPS_FRAME_ANNOUNCE:
        n = rdps__frame_encode_announce(out, size, h->session_id, h->topic_id, h->seq, v->payload,
                                        v->payload_len, h->timestamp_ns);
        break;
    case RDPS_FRAME_PARITY:
        n = rdps__frame_put_parity_header(out, h->session_id, h->topic_id, h->seq, v->parity_k,
                                          v->parity_index, h->timestamp_ns);
        if (n > 0) {
            memcpy(out + RDPS_FRAME_HEADER_LEN, v->payload, v->payload_len);
            n += (int)v->payload_len;
        }
        break;
    default:
        abort(); /* the decoder accepted an unknown type */
    }
    if (n < 0 || (size_t)n != size || memcmp(out, data, size) != 0)
        abort();
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct rdps_frame_limits tight = {
        .max_msg_len = 4096, .max_nak_ranges = 4, .max_announce_len = 256};
    struct rdps_frame_view v;
    enum rdps_frame_reject reason = rdps__frame_decode(data, size, NULL, &v);
    if ((unsigned)reason >= RDPS_FRAME_REJECT_COUNT || rdps__frame_reject_name(reason)[0] == '\0')
        abort();
    if (reason == RDPS_FRAME_OK) {
        if (v.payload != data + RDPS_FRAME_HEADER_LEN ||
            v.payload_len != size - RDPS_FRAME_HEADER_LEN)
            abort();
        check_round_trip(data, size, &v);
    }
    /* Tighter limits can only reject more. */
    enum rdps_frame_reject tight_reason = rdps__frame_decode(data, size, &tight, &v);
    if (reason != RDPS_FRAME_OK && tight_reason == RDPS_FRAME_OK)
        abort();
    return 0;
}
