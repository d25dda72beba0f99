/* SPDX-License-Identifier: BSD-2-Clause */
/* test_fec.c - the block erasure code: any k of a block's symbols rebuild the rest, lengths come
 * back, too little or repeated parity is refused, block boundaries hold across the wrap. */
#include "rdps_fec.h"

#include <rdps/rdps.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define K         64
#define PARITY    16
#define MAX_FRAME 1024

struct block {
    uint8_t data[K][MAX_FRAME];
    uint32_t lens[K];
    const uint8_t *frames[K];
    uint8_t parity[PARITY][MAX_FRAME + RDPS_FEC_LEN_BYTES];
};

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint32_t next_random(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
}

/* Frames of random lengths (40 bytes, a header alone, up to MAX_FRAME) and bytes. */
static void fill_block(struct block *b)
{
    for (int i = 0; i < K; i++) {
        b->lens[i] = 40 + next_random() % (MAX_FRAME - 40 + 1);
        for (uint32_t j = 0; j < b->lens[i]; j++)
            b->data[i][j] = (uint8_t)next_random();
        b->frames[i] = b->data[i];
    }
}

static struct rdps_fec fec;
static struct block blk;

static int setup(void **state)
{
    (void)state;
    return rdps__fec_init(&fec, K, PARITY, MAX_FRAME);
}

/* Drops `lose` datagrams and rebuilds them from `lose` parity symbols chosen at random. */
static void lose_and_rebuild(int lose)
{
    bool have[K];
    uint8_t rebuilt[K][MAX_FRAME];
    uint8_t *out[K];
    uint32_t out_lens[K];
    const uint8_t *par[PARITY];
    uint32_t par_index[PARITY];
    for (int i = 0; i < K; i++) {
        have[i] = true;
        out[i] = rebuilt[i];
    }
    for (int n = 0; n < lose;) {
        uint32_t i = next_random() % K;
        if (have[i]) {
            have[i] = false;
            n++;
        }
    }
    bool used[PARITY] = {false};
    for (int p = 0; p < lose;) {
        uint32_t j = next_random() % PARITY;
        if (!used[j]) {
            used[j] = true;
            par[p] = blk.parity[j];
            par_index[p] = j;
            p++;
        }
    }
    assert_int_equal(rdps__fec_decode(&fec, have, blk.frames, blk.lens, par, par_index,
                                      (uint32_t)lose, out, out_lens),
                     lose);
    for (int i = 0; i < K; i++) {
        if (have[i])
            continue;
        assert_int_equal(out_lens[i], blk.lens[i]);
        assert_memory_equal(out[i], blk.data[i], blk.lens[i]);
    }
}

static void test_any_k_of_n_rebuild(void **state)
{
    (void)state;
    for (int round = 0; round < 20; round++) {
        fill_block(&blk);
        for (uint32_t j = 0; j < PARITY; j++)
            assert_int_equal(rdps__fec_encode(&fec, blk.frames, blk.lens, j, blk.parity[j]), 0);
        for (int lose = 1; lose <= PARITY; lose++)
            lose_and_rebuild(lose);
    }
}

/* Fewer parity symbols than holes: nothing rebuilt; the same parity twice: refused. */
static void test_too_little_or_repeated_parity(void **state)
{
    (void)state;
    fill_block(&blk);
    for (uint32_t j = 0; j < 2; j++)
        assert_int_equal(rdps__fec_encode(&fec, blk.frames, blk.lens, j, blk.parity[j]), 0);
    bool have[K];
    uint8_t rebuilt[K][MAX_FRAME];
    uint8_t *out[K];
    uint32_t out_lens[K];
    for (int i = 0; i < K; i++) {
        have[i] = i != 3 && i != 40;
        out[i] = rebuilt[i];
    }
    const uint8_t *par[2] = {blk.parity[0], blk.parity[0]};
    uint32_t idx[2] = {0, 0};
    assert_int_equal(rdps__fec_decode(&fec, have, blk.frames, blk.lens, par, idx, 1, out, out_lens),
                     RDPS_EAGAIN);
    assert_int_equal(rdps__fec_decode(&fec, have, blk.frames, blk.lens, par, idx, 2, out, out_lens),
                     RDPS_EBADFRAME);
    idx[1] = 1;
    par[1] = blk.parity[1];
    assert_int_equal(rdps__fec_decode(&fec, have, blk.frames, blk.lens, par, idx, 2, out, out_lens),
                     2);
    assert_memory_equal(out[40], blk.data[40], blk.lens[40]);
    /* A parity index the code does not have, and a parity symbol from elsewhere. */
    idx[1] = PARITY;
    assert_int_equal(rdps__fec_decode(&fec, have, blk.frames, blk.lens, par, idx, 2, out, out_lens),
                     RDPS_EBADFRAME);
}

/* Rebuilt lengths above the largest datagram (what random parity bytes mostly give) are
 * refused; a garbage symbol never writes past the buffers. */
static void test_forged_parity(void **state)
{
    (void)state;
    fill_block(&blk);
    bool have[K];
    uint8_t rebuilt[K][MAX_FRAME];
    uint8_t *out[K];
    uint32_t out_lens[K];
    for (int i = 0; i < K; i++) {
        have[i] = i != 7;
        out[i] = rebuilt[i];
    }
    int refused = 0;
    for (int t = 0; t < 100; t++) {
        uint8_t forged[MAX_FRAME + RDPS_FEC_LEN_BYTES];
        for (size_t j = 0; j < sizeof(forged); j++)
            forged[j] = (uint8_t)next_random();
        const uint8_t *par[1] = {forged};
        uint32_t idx[1] = {next_random() % PARITY};
        int rc = rdps__fec_decode(&fec, have, blk.frames, blk.lens, par, idx, 1, out, out_lens);
        assert_true(rc == 1 || rc == RDPS_EBADFRAME);
        refused += rc == RDPS_EBADFRAME;
        if (rc == 1)
            assert_true(out_lens[7] <= MAX_FRAME);
    }
    assert_true(refused > 80); /* 1024 of 65536 lengths are possible */
}

static void test_block_boundaries_and_config(void **state)
{
    (void)state;
    assert_int_equal(rdps__fec_block_start(&fec, 0xFFFFFFC5u), 0xFFFFFFC0u);
    assert_int_equal(rdps__fec_block_index(&fec, 0xFFFFFFC5u), 5);
    assert_int_equal(rdps__fec_block_start(&fec, 0x3Fu), 0);
    assert_int_equal(rdps__fec_block_start(&fec, 0x40u), 0x40u);
    struct rdps_fec bad;
    assert_int_equal(rdps__fec_init(&bad, 48, 8, 1024), RDPS_EINVAL); /* not a power of two */
    assert_int_equal(rdps__fec_init(&bad, 256, 8, 1024), RDPS_EINVAL);
    assert_int_equal(rdps__fec_init(&bad, 64, 0, 1024), RDPS_EINVAL);
    assert_int_equal(rdps__fec_init(&bad, 64, 8, 32), RDPS_EINVAL);
    /* A missing datagram cannot be encoded over; a parity index past the code is refused. */
    fill_block(&blk);
    const uint8_t *saved = blk.frames[9];
    blk.frames[9] = NULL;
    assert_int_equal(rdps__fec_encode(&fec, blk.frames, blk.lens, 0, blk.parity[0]), RDPS_EINVAL);
    blk.frames[9] = saved;
    assert_int_equal(rdps__fec_encode(&fec, blk.frames, blk.lens, PARITY, blk.parity[0]),
                     RDPS_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_any_k_of_n_rebuild),
        cmocka_unit_test(test_too_little_or_repeated_parity),
        cmocka_unit_test(test_forged_parity),
        cmocka_unit_test(test_block_boundaries_and_config),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
