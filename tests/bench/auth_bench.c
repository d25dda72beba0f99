/* SPDX-License-Identifier: BSD-2-Clause */
/* auth_bench.c - cost of sealing and verifying one datagram of an authenticated domain: cycles per
 * byte for 64 B, 1 KiB and 4 KiB datagrams, and the libsodium primitives it is made of. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "rdps_auth.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
static uint64_t ticks(void)
{
    return __rdtsc();
}
#define TICKS_NAME "TSC cycles"
#else
static uint64_t ticks(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
#define TICKS_NAME "ns"
#endif

/*
 * Usage: auth_bench [ROUNDS (200000)]          cycles per byte of seal and open
 *        auth_bench parts ROUNDS BYTES          the primitives, for callgrind (instructions)
 *
 * A datagram of B bytes is a 40-byte header, the payload and the trailer (B is what goes on the
 * wire), bound to one source as a sender's frames are. Seal: rdps__auth_seal with a cached subkey,
 * as a sender does; open: rdps__auth_open, as a receiver does once it knows the sender. The median
 * of 9 runs of ROUNDS each. The TSC counts at the CPU's nominal frequency: cycles per byte are
 * exact only with frequency scaling off; compare the rows with each other.
 */

static uint8_t frame[8192];
static uint8_t source[RDPS_AUTH_SOURCE_LEN] = {0xfe, 0x80, [15] = 1, [16] = 0x11, [22] = 1};

static uint32_t seal_one(uint32_t len, const uint8_t *sub, const uint8_t *prefix, uint64_t counter,
                         bool encrypt)
{
    struct rdps_auth_seal_args a = {.prefix = prefix,
                                    .counter = counter,
                                    .sent_s = 1700000000u,
                                    .source = source,
                                    .key_id = 1,
                                    .encrypt = encrypt};
    return rdps__auth_seal(frame, len, sub, &a);
}

static double median(double *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return v[n / 2];
}

static void cycles_per_byte(unsigned long rounds)
{
    uint8_t key[RDPS_AUTH_KEY_LEN] = {7}, prefix[RDPS_AUTH_PREFIX_LEN] = {9}, sub[32];
    rdps__auth_subkey(sub, key, prefix);
    static const uint32_t sizes[] = {64 + 40 + RDPS_AUTH_TRAILER_LEN, 1024, 4096};
    printf("seal / open of one datagram (%s per byte of the datagram, median of 9 x %lu):\n",
           TICKS_NAME, rounds);
    printf("  %-9s %14s %14s %14s %14s\n", "datagram", "auth seal", "auth open", "encrypt seal",
           "encrypt open");
    for (unsigned s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        uint32_t wire = sizes[s], len = wire - RDPS_AUTH_TRAILER_LEN;
        double cell[4];
        for (int mode = 0; mode < 2; mode++) {
            double seal[9], open[9];
            for (int r = 0; r < 9; r++) {
                memset(frame, 0x5a, len);
                uint64_t t0 = ticks();
                for (unsigned long i = 0; i < rounds; i++)
                    seal_one(len, sub, prefix, i, mode == 1);
                uint64_t t1 = ticks();
                int bad = 0;
                for (unsigned long i = 0; i < rounds; i++) {
                    if (mode == 1) /* decrypting in place changes the frame: reseal each time */
                        seal_one(len, sub, prefix, i, true);
                    bad |= rdps__auth_open(frame, wire, sub, source);
                }
                uint64_t t2 = ticks();
                if (bad) {
                    fprintf(stderr, "auth_bench: a frame did not verify\n");
                    exit(1);
                }
                seal[r] = (double)(t1 - t0) / (double)rounds / wire;
                open[r] = (double)(t2 - t1) / (double)rounds / wire;
                if (mode == 1) /* less the reseal */
                    open[r] -= seal[r];
            }
            cell[2 * mode] = median(seal, 9);
            cell[2 * mode + 1] = median(open, 9);
        }
        printf("  %5u B   %14.2f %14.2f %14.2f %14.2f\n", wire, cell[0], cell[1], cell[2], cell[3]);
    }
}

/* Each primitive in a function of its own, so callgrind attributes its instructions. */
__attribute__((noinline)) static void part_seal_auth(unsigned long rounds, uint32_t len,
                                                     const uint8_t *sub, const uint8_t *prefix)
{
    for (unsigned long i = 0; i < rounds; i++)
        seal_one(len, sub, prefix, i, false);
}

__attribute__((noinline)) static void part_chacha_block(unsigned long rounds, const uint8_t *sub)
{
    uint8_t block[64], nonce[12] = {0};
    for (unsigned long i = 0; i < rounds; i++) {
        nonce[4] = (uint8_t)i;
        crypto_stream_chacha20_ietf(block, sizeof(block), nonce, sub);
    }
}

__attribute__((noinline)) static void part_poly1305(unsigned long rounds, uint32_t len,
                                                    const uint8_t *sub)
{
    uint8_t tag[16];
    for (unsigned long i = 0; i < rounds; i++)
        crypto_onetimeauth_poly1305(tag, frame, len, sub);
}

__attribute__((noinline)) static void part_hchacha20(unsigned long rounds, const uint8_t *key,
                                                     const uint8_t *prefix)
{
    uint8_t out[32];
    for (unsigned long i = 0; i < rounds; i++)
        crypto_core_hchacha20(out, prefix, key, NULL);
}

__attribute__((noinline)) static void part_aes256gcm(unsigned long rounds, uint32_t len,
                                                     const uint8_t *key)
{
    if (!crypto_aead_aes256gcm_is_available()) {
        printf("aes256gcm: not available on this CPU\n");
        return;
    }
    static crypto_aead_aes256gcm_state st;
    uint8_t tag[16], nonce[12] = {0};
    crypto_aead_aes256gcm_beforenm(&st, key);
    for (unsigned long i = 0; i < rounds; i++) {
        nonce[4] = (uint8_t)i;
        crypto_aead_aes256gcm_encrypt_detached_afternm(frame, tag, NULL, frame, 0, frame, len, NULL,
                                                       nonce, &st);
    }
}

int main(int argc, char **argv)
{
    if (sodium_init() < 0)
        return 1;
    if (argc >= 2 && strcmp(argv[1], "parts") == 0) {
        unsigned long rounds = argc > 2 ? strtoul(argv[2], NULL, 10) : 10000;
        uint32_t bytes = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 148;
        if (bytes < 40 + RDPS_AUTH_TRAILER_LEN || bytes > sizeof(frame)) {
            fprintf(stderr, "auth_bench: BYTES %u..%zu\n", 40 + RDPS_AUTH_TRAILER_LEN,
                    sizeof(frame));
            return 2;
        }
        uint8_t key[32] = {7}, prefix[16] = {9}, sub[32];
        rdps__auth_subkey(sub, key, prefix);
        uint32_t len = bytes - RDPS_AUTH_TRAILER_LEN;
        part_seal_auth(rounds, len, sub, prefix);
        part_chacha_block(rounds, sub);
        part_poly1305(rounds, len, sub);
        part_hchacha20(rounds, key, prefix);
        part_aes256gcm(rounds, len, key);
        return 0;
    }
    cycles_per_byte(argc >= 2 ? strtoul(argv[1], NULL, 10) : 200000);
    return 0;
}
