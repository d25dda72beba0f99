/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_fec.h - erasure coding of a reliable stream's datagrams in blocks: parity datagrams from
 * which a receiver rebuilds any of a block's datagrams it lacks (Reed-Solomon, ISA-L). */
#ifndef RDPS_PROTO_FEC_H
#define RDPS_PROTO_FEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Model
 * -----
 * A block is k consecutive datagrams of one stream (k a power of two: the block of sequence s
 * starts at s & ~(k - 1), so blocks survive the 2^32 wrap). Each datagram is a source symbol:
 * its length (2 bytes, little-endian) followed by its bytes, zero-padded to symbol_len = 2 +
 * max_frame. Parity symbol j (0 <= j < max_parity) is row k + j of a Cauchy matrix of
 * GF(2^8) (ISA-L's gf_gen_cauchy1_matrix: every k rows of the (k + max_parity) x k matrix are
 * independent, so the code is MDS) applied to the k source symbols: a receiver that holds any k
 * of the block's k + max_parity symbols rebuilds the others. So one parity datagram repairs one
 * missing datagram at every receiver, whichever datagram each one misses (the reason parity
 * repairs scale with receivers, where a retransmission repairs one datagram).
 *
 * Lengths need not be equal: a source symbol's bytes past its length are zeros, which add
 * nothing to a parity, so encoding reads each datagram once over its own length (no padded
 * copy) and the datagram's length comes back from its rebuilt symbol.
 *
 * rdps_fec holds the matrix and scratch tables (no allocation after rdps__fec_init); encoding
 * and decoding are pure functions of their inputs.
 */

#define RDPS_FEC_MAX_K      128 /* datagrams per block */
#define RDPS_FEC_MAX_PARITY 128 /* parity symbols a block can have */
#define RDPS_FEC_LEN_BYTES  2   /* the length prefix of a symbol */

struct rdps_fec {
    uint32_t k, max_parity, max_frame, symbol_len;
    /* (k + max_parity) x k: identity on top, then the parity rows. */
    uint8_t matrix[(RDPS_FEC_MAX_K + RDPS_FEC_MAX_PARITY) * RDPS_FEC_MAX_K];
    uint8_t tables[32 * RDPS_FEC_MAX_K]; /* one output row's tables (ec_init_tables, 1 row) */
    uint8_t work[RDPS_FEC_MAX_K * RDPS_FEC_MAX_K * 2]; /* scratch matrices for one decode */
};

/*
 * k: datagrams per block (a power of two, 2..RDPS_FEC_MAX_K); max_parity: parity symbols a
 * block may get (1..RDPS_FEC_MAX_PARITY); max_frame: the longest datagram (1..65535). 0 or
 * RDPS_EINVAL (with a message).
 */
int rdps__fec_init(struct rdps_fec *f, uint32_t k, uint32_t max_parity, uint32_t max_frame);

/* First sequence of the block holding seq, and seq's index in it. */
static inline uint32_t rdps__fec_block_start(const struct rdps_fec *f, uint32_t seq)
{
    return seq & ~(f->k - 1);
}
static inline uint32_t rdps__fec_block_index(const struct rdps_fec *f, uint32_t seq)
{
    return seq & (f->k - 1);
}

/*
 * Parity symbol j of a block: frames[i], lens[i] are the block's k datagrams (each lens[i] <=
 * max_frame; none may be missing: a block the ring no longer holds whole gets no parity).
 * Writes symbol_len bytes to out. 0, or RDPS_EINVAL for j out of range or a length too long.
 */
int rdps__fec_encode(struct rdps_fec *f, const uint8_t *const frames[], const uint32_t lens[],
                     uint32_t j, uint8_t *out);

/*
 * Rebuilds a block's missing datagrams. have[i] says whether datagram i arrived (frames[i],
 * lens[i] hold it); parity[p] (symbol_len bytes) is parity symbol parity_index[p], for p <
 * nparity, all distinct. When the missing count is at most nparity, writes each missing
 * datagram i to out[i] (max_frame bytes of room) and its length to out_lens[i] and returns how
 * many it rebuilt; RDPS_EAGAIN when more parity is needed (nothing written); RDPS_EBADFRAME
 * when a rebuilt length is impossible (above max_frame: a forged or corrupted parity symbol).
 * Uses the first `missing` parity symbols given.
 */
int rdps__fec_decode(struct rdps_fec *f, const bool have[], const uint8_t *const frames[],
                     const uint32_t lens[], const uint8_t *const parity[],
                     const uint32_t parity_index[], uint32_t nparity, uint8_t *const out[],
                     uint32_t out_lens[]);

#endif /* RDPS_PROTO_FEC_H */
