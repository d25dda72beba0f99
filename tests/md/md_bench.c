/* SPDX-License-Identifier: BSD-2-Clause */
/* md_bench.c - rates of the market-data model on this machine: md_gen_next (which applies each
 * message to the feed's reference book), itch_encode, and itch_decode + md_book_apply on a
 * subscriber's book. Usage: md_bench [messages [symbols [seed]]]. A figure, not a test. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "md_gen.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : 5000000;
    struct md_gen_config cfg;
    md_gen_config_init(&cfg);
    if (argc > 2)
        cfg.symbols = (uint32_t)strtoul(argv[2], NULL, 0);
    if (argc > 3)
        cfg.seed = strtoull(argv[3], NULL, 0);
    struct md_gen gen;
    if (md_gen_init(&gen, &cfg) != 0) {
        fprintf(stderr, "md_bench: bad configuration\n");
        return 2;
    }
    struct itch_msg *msgs = malloc(n * sizeof(*msgs));
    uint8_t *wire = malloc(n * ITCH_MAX_LEN);
    uint8_t *lens = malloc(n);
    if (msgs == NULL || wire == NULL || lens == NULL) {
        fprintf(stderr, "md_bench: out of memory for %" PRIu64 " messages\n", n);
        return 2;
    }

    double t0 = now_s();
    for (uint64_t i = 0; i < n; i++) {
        uint32_t ch;
        md_gen_next(&gen, i, &msgs[i], &ch);
    }
    double t1 = now_s();
    size_t off = 0;
    for (uint64_t i = 0; i < n; i++) {
        int len = itch_encode(&msgs[i], wire + off, ITCH_MAX_LEN);
        lens[i] = (uint8_t)len;
        off += (size_t)len;
    }
    double t2 = now_s();

    struct md_book book;
    struct md_book_config bc;
    md_book_config_init(&bc);
    bc.max_locate = cfg.symbols;
    if (md_book_init(&book, &bc) != 0)
        return 2;
    double t3 = now_s();
    off = 0;
    int refused = 0;
    for (uint64_t i = 0; i < n; i++) {
        struct itch_msg m;
        itch_decode(wire + off, lens[i], &m);
        off += lens[i];
        refused += md_book_apply(&book, &m) != 0;
    }
    double t4 = now_s();
    uint64_t digest = md_book_digest(&book);
    double t5 = now_s();

    const struct md_gen_counters *gc = md_gen_counters(&gen);
    int match = digest == md_gen_digest(&gen);
    printf("{\"messages\": %" PRIu64 ", \"symbols\": %u, \"mean_bytes\": %.2f,\n"
           " \"md_gen_next_per_s\": %.0f, \"itch_encode_per_s\": %.0f,\n"
           " \"decode_and_book_apply_per_s\": %.0f, \"digest_ms\": %.1f,\n"
           " \"live_orders\": %" PRIu64 ", \"refused\": %d, \"digests_match\": %s}\n",
           n, cfg.symbols, (double)gc->bytes / (double)gc->messages, (double)n / (t1 - t0),
           (double)n / (t2 - t1), (double)n / (t4 - t3), (t5 - t4) * 1e3,
           md_book_counters(&book)->live_orders, refused, match ? "true" : "false");
    md_book_fini(&book);
    md_gen_fini(&gen);
    free(msgs);
    free(wire);
    free(lens);
    return match && refused == 0 ? 0 : 1;
}
