/* SPDX-License-Identifier: BSD-2-Clause */
/* gen_md_seeds.c - writes the seed corpora of the mdutil fuzz harnesses (md_unpack/ and
 * md_snapshot/ under a directory): real packets and snapshot parts from the packer and encoder. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "md_endian.h"
#include "md_packet.h"
#include "md_snapshot.h"

static const char *out_dir;

static void write_file(const char *sub, const char *name, const uint8_t *data, size_t len)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", out_dir, sub);
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
        perror(path);
        exit(1);
    }
    snprintf(path, sizeof(path), "%s/%s/%s", out_dir, sub, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

/* The harness's option byte: bit 0 the extension, bits 1-7 max_msg_len - 1. */
static void write_packet(const char *name, int times, uint32_t max_msg_len, const uint8_t *pkt,
                         size_t len)
{
    uint8_t buf[1 + MD_PACKET_MAX];
    buf[0] = (uint8_t)((max_msg_len - 1) << 1 | (times ? 1 : 0));
    memcpy(buf + 1, pkt, len);
    write_file("md_unpack", name, buf, len + 1);
}

static void packet_seeds(void)
{
    for (int times = 0; times <= 1; times++) {
        struct md_packer p;
        struct md_packer_config cfg = {.first_seq = 1,
                                       .max_datagram = 256,
                                       .max_msg_len = 50,
                                       .max_delay_ns = 50000,
                                       .intended_times = times};
        memcpy(cfg.session, "SEEDSESS01", MD_SESSION_LEN);
        if (md_packer_init(&p, &cfg) != 0)
            exit(1);
        const uint8_t *pkt;
        size_t len;
        char name[64];
        /* ITCH-sized messages (delete 19, add 36, executed 31), filled to a full packet. */
        static const uint16_t sizes[] = {19, 36, 31, 19, 36, 12, 1, 50, 23, 35, 44};
        uint8_t msg[50];
        int packets = 0;
        uint64_t t = 1000000;
        for (size_t i = 0; i < 40; i++) {
            uint16_t n = sizes[i % (sizeof(sizes) / sizeof(sizes[0]))];
            memset(msg, 'A' + (int)(i % 26), n);
            t += 700;
            if (md_packer_add(&p, msg, n, t, t) == MD_PACK_FLUSH) {
                md_packer_flush(&p, &pkt, &len);
                snprintf(name, sizeof(name), "%s_full_%d", times ? "times" : "plain", packets++);
                write_packet(name, times, 50, pkt, len);
            }
        }
        md_packer_flush(&p, &pkt, &len);
        snprintf(name, sizeof(name), "%s_partial", times ? "times" : "plain");
        write_packet(name, times, 50, pkt, len);
        md_packer_heartbeat(&p, false, t, &pkt, &len);
        snprintf(name, sizeof(name), "%s_heartbeat", times ? "times" : "plain");
        write_packet(name, times, 50, pkt, len);
        md_packer_heartbeat(&p, true, t, &pkt, &len);
        snprintf(name, sizeof(name), "%s_end_of_session", times ? "times" : "plain");
        write_packet(name, times, 50, pkt, len);
    }
}

/* Parts as the harness reads them: a 2-byte big-endian length before each. */
static void snapshot_seed(const char *name, uint32_t n_symbols, uint32_t n_orders,
                          size_t part_bytes, int reverse)
{
    struct md_snap_symbol *symbols = calloc(n_symbols + 1, sizeof(*symbols));
    struct md_snap_order *orders = calloc(n_orders + 1, sizeof(*orders));
    uint8_t *out = malloc(65536), *part = malloc(part_bytes);
    if (!symbols || !orders || !out || !part)
        exit(1);
    for (uint32_t i = 0; i < n_symbols; i++)
        symbols[i] = (struct md_snap_symbol){.locate = i + 1,
                                             .vwap_num = 1234567ull * i,
                                             .vwap_num_hi = i % 3,
                                             .vwap_den = 1000ull * i};
    for (uint32_t i = 0; i < n_orders; i++)
        orders[i] = (struct md_snap_order){.ref = 1000 + 3ull * i,
                                           .locate = 1 + i % n_symbols,
                                           .side = i % 2 ? 'S' : 'B',
                                           .shares = 100 * (i % 9 + 1),
                                           .price = 100000 + 100 * i};
    struct md_snap s = {.channel = 1,
                        .seq = 4242,
                        .symbols = symbols,
                        .n_symbols = n_symbols,
                        .orders = orders,
                        .n_orders = n_orders};
    struct md_snap_plan plan;
    if (md_snap_plan(&s, part_bytes, &plan) != 0)
        exit(1);
    size_t used = 0;
    for (uint32_t k = 0; k < plan.part_count; k++) {
        uint32_t i = reverse ? plan.part_count - 1 - k : k;
        size_t len;
        if (md_snap_encode_part(&s, &plan, i, part, part_bytes, &len) != 0 ||
            used + 2 + len > 65536)
            exit(1);
        md_put_be16(out + used, (uint16_t)len);
        memcpy(out + used + 2, part, len);
        used += 2 + len;
    }
    write_file("md_snapshot", name, out, used);
    free(symbols);
    free(orders);
    free(out);
    free(part);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR (writes md_unpack/ and md_snapshot/ in it)\n",
                argv[0]);
        return 2;
    }
    out_dir = argv[1];
    packet_seeds();
    snapshot_seed("one_part", 5, 12, 4096, 0);
    snapshot_seed("three_parts", 8, 60, 700, 0);
    snapshot_seed("parts_reversed", 8, 60, 700, 1);
    snapshot_seed("no_orders", 3, 0, 4096, 0);
    return 0;
}
