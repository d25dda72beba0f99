/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_sa_mad.c - libFuzzer harness for the SA response decoder and the MCMemberRecord codec. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rdps_sa_mad.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct rdps_sa_mcmember recs[8];

    /* Any byte string is a possible response: the decoder must bound itself by `size`. */
    uint8_t *copy = malloc(size != 0 ? size : 1);
    if (copy == NULL)
        return 0;
    memcpy(copy, data, size);
    uint64_t tid = 0;
    if (size >= 16)
        memcpy(&tid, data + 8, sizeof(tid));
    tid = __builtin_bswap64(tid); /* the wire TID is big-endian: accept the input's own */
    int n = rdps__sa_mcmember_response_decode(copy, size, tid, recs, 8);
    if (n > 0 && (size_t)n * RDPS_SA_MCMEMBER_RECORD_SIZE > size)
        abort(); /* more records than bytes: the decoder read past the input */
    free(copy);

    /* decode -> encode gives the input back, reserved bits cleared. */
    if (size >= RDPS_SA_MCMEMBER_RECORD_SIZE) {
        struct rdps_sa_mcmember rec;
        uint8_t again[RDPS_SA_MCMEMBER_RECORD_SIZE], want[RDPS_SA_MCMEMBER_RECORD_SIZE];
        memcpy(want, data, sizeof(want));
        want[49] &= 0x80;
        want[50] = 0;
        want[51] = 0;
        rdps__sa_mcmember_decode(data, &rec);
        rdps__sa_mcmember_encode(again, &rec);
        if (memcmp(again, want, sizeof(want)) != 0)
            abort();
    }
    return 0;
}
