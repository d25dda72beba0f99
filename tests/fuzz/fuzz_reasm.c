/* fuzz_reasm.c - libFuzzer harness: the receive engine (decode, sequencing, reassembly, expiry) on
 * datagram sequences. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rdps/rdps.h>

#include "rdps_reasm.h"

/*
 * Input: records of [u8 op][u16 le length][length bytes]. The datagram goes
 * to source (op & 3); op & 0x80 first advances the fake clock by
 * ((op >> 4) & 7) x 100 us and runs expiry. Small limits make evictions,
 * timeouts and table churn reachable.
 */
#define FUZZ_MAX_MSG 8192u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void on_deliver(void *user, const uint8_t *msg, uint32_t len,
                       const struct rdps_reasm_msg_info *info)
{
    uint64_t *sum = user;
    if (len != info->msg_len || len > FUZZ_MAX_MSG || info->frag_count == 0 ||
        (len > 0 && msg == NULL))
        abort();
    /* Touch every byte so ASan sees any out-of-bounds delivery. */
    for (uint32_t i = 0; i < len; i++)
        *sum += msg[i];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t sum = 0;
    struct rdps_reasm_config cfg;
    rdps__reasm_config_default(&cfg);
    cfg.max_sessions = 4;
    cfg.max_partials = 4;
    cfg.reasm_cap_bytes = 3 * FUZZ_MAX_MSG;
    cfg.partial_timeout_ns = 200000;
    cfg.session_idle_timeout_ns = 1000000;
    cfg.limits.max_msg_len = FUZZ_MAX_MSG;
    cfg.deliver = on_deliver;
    cfg.user = &sum;
    struct rdps_reasm r;
    if (rdps__reasm_init(&r, &cfg) != 0)
        abort();
    uint64_t now = 0;
    size_t pos = 0;
    while (size - pos >= 3) {
        uint8_t op = data[pos];
        size_t len = (size_t)data[pos + 1] | (size_t)data[pos + 2] << 8;
        pos += 3;
        if (len > size - pos)
            len = size - pos;
        if (op & 0x80) {
            now += (uint64_t)((op >> 4) & 7) * 100000;
            uint64_t next = rdps__reasm_expire(&r, now);
            if (next <= now)
                abort();
        }
        /* Copy so the datagram ends exactly where the record says (ASan catches overreads). */
        uint8_t *dgram = malloc(len ? len : 1);
        if (dgram == NULL)
            abort();
        memcpy(dgram, data + pos, len);
        int rc = rdps__reasm_input(&r, op & 3, dgram, len, now);
        free(dgram);
        if (rc != 0 && rc != 1 && rc != RDPS_EBADFRAME)
            abort();
        pos += len;
    }
    if (rdps__reasm_stream_count(&r) > cfg.max_sessions ||
        rdps__reasm_partial_count(&r) > cfg.max_partials)
        abort();
    rdps__reasm_fini(&r);
    return 0;
}
