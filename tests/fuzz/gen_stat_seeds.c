/* SPDX-License-Identifier: BSD-2-Clause */
/* gen_stat_seeds.c - writes seed files for fuzz_stat_parse: valid live-counters files written by
 * the library's writer (pubsub/stat_format.h) with 0, 1 and 3 entries.
 * usage: fuzz_gen_stat_seeds DIR   (writes DIR/stat_parse/seed-N) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "stat_format.h"

static int write_seed(const char *dir, unsigned entries)
{
    static const char *const names[] = {"msgs_sent", "gaps", "rtt_us"};
    static const char *const helps[] = {"messages published", "gaps", "rtt (us, gauge)"};
    static const uint8_t kinds[] = {RDPS_STAT_COUNTER, RDPS_STAT_COUNTER, RDPS_STAT_GAUGE};
    static const char *const rejects[] = {"OK", "SHORT"};
    struct rdps_stat_layout l;
    if (rdps__stat_layout(3, 2, 3, &l) != 0)
        return -1;
    uint8_t *mem = aligned_alloc(64, (l.file_size + 63) / 64 * 64);
    if (mem == NULL)
        return -1;
    struct rdps_stat_identity id = {.pid = 4242,
                                    .start_time = 99,
                                    .ctx_index = 1,
                                    .program = "rdpub",
                                    .device = "rxe0",
                                    .counter_names = names,
                                    .counter_helps = helps,
                                    .counter_kinds = kinds,
                                    .reject_names = rejects};
    struct rdps_stat_writer w;
    rdps__stat_writer_init(&w, mem, &l, &id);
    uint64_t ctx[3] = {10, 2, 150}, rej[2] = {0, 5}, own[2] = {0x1, 0};
    rdps__stat_write_begin(&w);
    rdps__stat_write_ctx(&w, ctx, rej);
    for (unsigned e = 0; e < entries; e++)
        rdps__stat_write_entry(&w, e, e % 2 ? RDPS_STAT_ENTRY_SUB : RDPS_STAT_ENTRY_PUB,
                               e == 0 ? RDPS_STAT_ENTRY_RELIABLE : 0, 0xF1E2D3C4B5A69700ull + e,
                               9 + e, "md.quotes", own, ctx, 0, NULL);
    rdps__stat_write_end(&w, entries, 0, 1000, 2000);
    char path[512];
    snprintf(path, sizeof(path), "%s/stat_parse/seed-%u", dir, entries);
    FILE *f = fopen(path, "wb");
    int rc = f != NULL && fwrite(mem, 1, l.file_size, f) == l.file_size ? 0 : -1;
    if (f != NULL && fclose(f) != 0)
        rc = -1;
    free(mem);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: fuzz_gen_stat_seeds CORPUS_DIR\n");
        return 2;
    }
    char sub[512];
    snprintf(sub, sizeof(sub), "%s/stat_parse", argv[1]);
    mkdir(sub, 0755);
    for (unsigned entries = 0; entries <= 3; entries += entries ? 2 : 1)
        if (write_seed(argv[1], entries) != 0) {
            perror("fuzz_gen_stat_seeds");
            return 1;
        }
    return 0;
}
