/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_fec.c - a block's parity symbols and the rebuilding of its missing datagrams (rdps_fec.h),
 * over ISA-L's GF(2^8) arithmetic: no Galois-field code of our own. */
#include "rdps_fec.h"

#include <isa-l/erasure_code.h>
#include <string.h>

#include "rdps_endian.h"
#include "rdps_error.h"

/* ISA-L's vector routines need at least this many bytes. */
#define MAD_MIN_LEN 64

int rdps__fec_init(struct rdps_fec *f, uint32_t k, uint32_t max_parity, uint32_t max_frame)
{
    if (k < 2 || k > RDPS_FEC_MAX_K || (k & (k - 1)) != 0)
        return rdps__set_err(RDPS_EINVAL, "fec: block of %u datagrams (a power of two, 2..%u)", k,
                             RDPS_FEC_MAX_K);
    if (max_parity < 1 || max_parity > RDPS_FEC_MAX_PARITY)
        return rdps__set_err(RDPS_EINVAL, "fec: %u parity symbols (1..%u)", max_parity,
                             RDPS_FEC_MAX_PARITY);
    if (max_frame < MAD_MIN_LEN || max_frame > 0xFFFFu)
        return rdps__set_err(RDPS_EINVAL, "fec: datagrams of %u bytes (%u..65535)", max_frame,
                             MAD_MIN_LEN);
    memset(f, 0, sizeof(*f));
    f->k = k;
    f->max_parity = max_parity;
    f->max_frame = max_frame;
    f->symbol_len = RDPS_FEC_LEN_BYTES + max_frame;
    gf_gen_cauchy1_matrix(f->matrix, (int)(k + max_parity), (int)k);
    return 0;
}

/*
 * dest_body (max_frame bytes) and dest_len (the length prefix) += c * (a datagram of len bytes,
 * zeros past it), through tables of one output row (vec_i: the source's column).
 */
static void mad_frame(struct rdps_fec *f, uint8_t *tables, uint32_t vec_i, uint8_t c,
                      const uint8_t *frame, uint32_t len, uint8_t *dest_body, uint8_t dest_len[2])
{
    uint8_t lenb[2];
    rdps__put_le16(lenb, (uint16_t)len);
    dest_len[0] ^= gf_mul(c, lenb[0]);
    dest_len[1] ^= gf_mul(c, lenb[1]);
    if (len == 0)
        return;
    if (len >= MAD_MIN_LEN) {
        gf_vect_mad((int)len, (int)f->k, (int)vec_i, tables, (unsigned char *)frame, dest_body);
        return;
    }
    uint8_t padded[MAD_MIN_LEN] = {0}; /* a short datagram, zeros past it */
    memcpy(padded, frame, len);
    gf_vect_mad(MAD_MIN_LEN, (int)f->k, (int)vec_i, tables, padded, dest_body);
}

int rdps__fec_encode(struct rdps_fec *f, const uint8_t *const frames[], const uint32_t lens[],
                     uint32_t j, uint8_t *out)
{
    if (j >= f->max_parity)
        return rdps__set_err(RDPS_EINVAL, "fec: parity symbol %u of %u", j, f->max_parity);
    const uint8_t *row = &f->matrix[(f->k + j) * f->k];
    ec_init_tables((int)f->k, 1, (unsigned char *)row, f->tables);
    memset(out, 0, f->symbol_len);
    for (uint32_t i = 0; i < f->k; i++) {
        if (frames[i] == NULL || lens[i] > f->max_frame)
            return rdps__set_err(RDPS_EINVAL, "fec: datagram %u of the block missing or too long",
                                 i);
        mad_frame(f, f->tables, i, row[i], frames[i], lens[i], out + RDPS_FEC_LEN_BYTES, out);
    }
    return 0;
}

int rdps__fec_decode(struct rdps_fec *f, const bool have[], const uint8_t *const frames[],
                     const uint32_t lens[], const uint8_t *const parity[],
                     const uint32_t parity_index[], uint32_t nparity, uint8_t *const out[],
                     uint32_t out_lens[])
{
    uint32_t k = f->k, missing = 0;
    uint32_t rows[RDPS_FEC_MAX_K]; /* the k symbols decoded from: a data index, or k + parity */
    uint32_t lost[RDPS_FEC_MAX_K];
    uint32_t nrows = 0;
    for (uint32_t i = 0; i < k; i++) {
        if (have[i])
            rows[nrows++] = i;
        else
            lost[missing++] = i;
    }
    if (missing == 0)
        return 0;
    if (missing > nparity)
        return RDPS_EAGAIN;
    for (uint32_t p = 0; p < missing; p++) {
        if (parity_index[p] >= f->max_parity)
            return rdps__set_err(RDPS_EBADFRAME, "fec: parity symbol %u of %u", parity_index[p],
                                 f->max_parity);
        rows[nrows++] = k + parity_index[p];
    }
    /* The k x k matrix of the symbols held, inverted: row m of the inverse rebuilds datagram m
     * from them. */
    uint8_t *held = f->work, *inverse = f->work + k * k;
    for (uint32_t r = 0; r < k; r++)
        memcpy(&held[r * k], &f->matrix[rows[r] * k], k);
    if (gf_invert_matrix(held, inverse, (int)k) != 0)
        return rdps__set_err(RDPS_EBADFRAME, "fec: parity symbols repeated (singular matrix)");
    for (uint32_t m = 0; m < missing; m++) {
        uint32_t i = lost[m];
        const uint8_t *coef = &inverse[i * k];
        uint8_t len[2] = {0, 0};
        ec_init_tables((int)k, 1, (unsigned char *)coef, f->tables);
        memset(out[i], 0, f->max_frame);
        for (uint32_t r = 0; r < k; r++) {
            if (rows[r] < k) {
                mad_frame(f, f->tables, r, coef[r], frames[rows[r]], lens[rows[r]], out[i], len);
            } else {
                uint32_t p = r - (k - missing); /* parity symbols follow the data rows */
                len[0] ^= gf_mul(coef[r], parity[p][0]);
                len[1] ^= gf_mul(coef[r], parity[p][1]);
                gf_vect_mad((int)f->max_frame, (int)k, (int)r, f->tables,
                            (unsigned char *)parity[p] + RDPS_FEC_LEN_BYTES, out[i]);
            }
        }
        out_lens[i] = rdps__get_le16(len);
        if (out_lens[i] > f->max_frame)
            return rdps__set_err(RDPS_EBADFRAME, "fec: rebuilt datagram of %u bytes (above %u)",
                                 out_lens[i], f->max_frame);
    }
    return (int)missing;
}
