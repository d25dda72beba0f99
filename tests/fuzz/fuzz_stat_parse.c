/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_stat_parse.c - libFuzzer harness: rdps-stat's parser of live-counters files
 * (pubsub/stat_format.h) on arbitrary bytes; whatever it accepts is walked in full. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stat_format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* An exact-size, 8-byte-aligned copy: ASan flags any read past the end. */
    uint8_t *buf = malloc(size ? size : 1);
    if (buf == NULL)
        abort();
    memcpy(buf, data, size);
    struct rdps_stat_view v;
    char why[160];
    if (rdps__stat_parse(buf, size, &v, why, sizeof(why)) != 0) {
        if (why[0] == '\0' || memchr(why, '\0', sizeof(why)) == NULL)
            abort(); /* a refusal always says why */
        free(buf);
        return 0;
    }
    size_t sum = 0;
    for (uint32_t i = 0; i < v.hdr.counter_count; i++) {
        sum += strlen(rdps__stat_counter_name(&v, i)) + strlen(rdps__stat_counter_help(&v, i));
        sum += rdps__stat_counter_kind(&v, i) + rdps__stat_ctx_counter(&v, i);
    }
    for (uint32_t r = 0; r < v.hdr.reject_count; r++)
        sum += strlen(rdps__stat_reject_name(&v, r)) + rdps__stat_ctx_reject(&v, r);
    for (uint32_t e = 0; e < v.hdr.entry_count; e++) {
        struct rdps_stat_entry_view ev;
        rdps__stat_entry(&v, e, &ev);
        if (ev.kind != RDPS_STAT_ENTRY_PUB && ev.kind != RDPS_STAT_ENTRY_SUB)
            abort(); /* the parser promised */
        sum += strlen(ev.topic);
        for (uint32_t i = 0; i < v.hdr.counter_count; i++)
            sum += rdps__stat_entry_counter(&ev, i) + rdps__stat_entry_owns(&ev, i);
    }
    free(buf);
    return sum == 1 ? 1 : 0; /* keep the walk */
}
