/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_md_unpack.c - libFuzzer harness: the MoldUDP64-style unpacker on arbitrary datagrams, every
 * accepted one walked and packed again to the same bytes. */
#include <stdlib.h>
#include <string.h>

#include "md_packet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Input: one option byte (bit 0: the intended-times extension; bits 1-7: max_msg_len - 1, so
 * 1..128), then the datagram. The datagram is copied to a buffer of exactly its size, so any
 * read past it is an ASan report.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    struct md_unpacker_config cfg = {.max_msg_len = 1u + (data[0] >> 1),
                                     .intended_times = data[0] & 1};
    size_t len = size - 1;
    uint8_t *pkt = malloc(len ? len : 1);
    if (pkt == NULL)
        abort();
    memcpy(pkt, data + 1, len);

    struct md_unpacker u;
    md_unpacker_init(&u, &cfg);
    struct md_packet_view v;
    int rc = md_unpack(&u, pkt, len, &v);
    if (rc < 0) {
        if (-rc >= MD_UNPACK__COUNT || u.rejected[-rc] != 1)
            abort();
        free(pkt);
        return 0;
    }
    size_t header = MD_HEADER_LEN + (cfg.intended_times ? MD_TIMES_LEN : 0);
    if (v.kind != MD_PACKET_DATA) {
        if (len != header || v.count != 0)
            abort();
        free(pkt);
        return 0;
    }

    /* Walk: every message inside the datagram, in sequence, lengths adding up to it. */
    struct md_msg m;
    size_t bytes = header;
    uint32_t n = 0;
    uint64_t first_intended = 0;
    while (md_packet_next(&v, &m)) {
        if (m.data < pkt || m.data + m.len > pkt + len || m.len == 0 || m.len > cfg.max_msg_len ||
            m.seq != v.seq + n)
            abort();
        if (n == 0)
            first_intended = m.intended_ns;
        bytes += 2u + m.len + (cfg.intended_times ? MD_DELTA_LEN : 0);
        n++;
    }
    if (n != v.count || n == 0 || bytes != len)
        abort();

    /* The packer writes the first message's delta as 0: such datagrams are packed again to the
     * same bytes. */
    if (len <= MD_PACKET_MAX && (!cfg.intended_times || first_intended == v.intended_ns)) {
        struct md_packer_config pc = {.first_seq = v.seq,
                                      .max_datagram = MD_PACKET_MAX,
                                      .max_msg_len = cfg.max_msg_len,
                                      .max_delay_ns = 1,
                                      .intended_times = cfg.intended_times};
        memcpy(pc.session, v.session, MD_SESSION_LEN);
        struct md_packer *p = malloc(sizeof(*p));
        if (p == NULL || md_packer_init(p, &pc) != 0)
            abort();
        if (md_unpack(&u, pkt, len, &v) != 0) /* a fresh walk */
            abort();
        while (md_packet_next(&v, &m))
            if (md_packer_add(p, m.data, m.len, m.intended_ns, 0) < 0)
                abort();
        const uint8_t *out;
        size_t out_len;
        if (md_packer_flush(p, &out, &out_len) != len || memcmp(out, pkt, len) != 0)
            abort();
        free(p);
    }
    free(pkt);
    return 0;
}
