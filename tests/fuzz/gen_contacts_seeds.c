/* SPDX-License-Identifier: BSD-2-Clause */
/* gen_contacts_seeds.c - writes the seed corpus of fuzz_contacts (contacts/ under a directory):
 * unicast-discovery scenarios as [op][u16 length][peer list] records. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "contacts.h"
#include "discovery.h"

/* Record ops, as fuzz_contacts.c reads them. */
#define OP_TICK(steps_of_25ms) (0x80 | ((steps_of_25ms)&7) << 4)
#define OP_SEED                0x40 /* | 8: clear; | 1: seed 1; | source 0..6 */
#define SRC_SELF               7    /* the list's own sender */

struct script {
    uint8_t bytes[32768];
    size_t len;
};

static const char *out_dir;

static void add(struct script *s, uint8_t op, const uint8_t *body, size_t len)
{
    if (s->len + 3 + len > sizeof(s->bytes)) {
        fprintf(stderr, "gen_contacts_seeds: script too long\n");
        exit(1);
    }
    s->bytes[s->len] = op;
    s->bytes[s->len + 1] = (uint8_t)len;
    s->bytes[s->len + 2] = (uint8_t)(len >> 8);
    memcpy(s->bytes + s->len + 3, body, len);
    s->len += 3 + len;
}

/* A list whose sender is the fuzzer's source `src` (0..6, as fuzz_contacts.c builds them) or, for
 * SRC_SELF, host `host`, naming `n` peers from `first`, arriving from source `op_src`. */
static void list_as(struct script *s, uint8_t op, unsigned src, unsigned op_src, uint8_t host,
                    unsigned first, unsigned n, int leaving, uint32_t interval_ms)
{
    struct rdps_contacts_msg m;
    memset(&m, 0, sizeof(m));
    if (src < 6) {
        m.gid[15] = (uint8_t)(src & ~1u);
        m.qpn = 0x100 + (src & 1);
    } else if (src == 6) {
        m.lid = 7;
        m.qpn = 0x101;
    } else {
        m.gid[0] = 0xfe;
        m.gid[15] = host;
        m.qpn = 0x200 + host;
    }
    m.interval_ms = interval_ms;
    m.leaving = leaving != 0;
    m.host = 0xa9fe4d00u | host;
    m.cm_port = 7471;
    for (unsigned i = 0; i < n && i < RDPS_CONTACTS_PER_MESSAGE; i++) {
        struct rdps_source *p = &m.peers[m.count++];
        if ((first + i) % 5 == 4) {
            p->lid = (uint16_t)(0x10 + first + i);
        } else {
            p->has_gid = 1;
            p->gid[0] = 0xfe;
            p->gid[15] = (uint8_t)(first + i);
            p->gid[14] = (uint8_t)((first + i) % 3);
        }
        p->qpn = 0x300 + first + i;
    }
    uint8_t body[RDPS_ANNOUNCE_MAX_BYTES];
    int len = rdps__contacts_encode(&m, body, sizeof(body));
    if (len < 0)
        exit(1);
    add(s, (uint8_t)(op | (op_src < 7 ? op_src : SRC_SELF)), body, (size_t)len);
}

static void list(struct script *s, uint8_t op, unsigned src, uint8_t host, unsigned first,
                 unsigned n, int leaving, uint32_t interval_ms)
{
    list_as(s, op, src, src, host, first, n, leaving, interval_ms);
}

static void write_script(const char *name, const struct script *s)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/contacts", out_dir);
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
        perror(path);
        exit(1);
    }
    snprintf(path, sizeof(path), "%s/contacts/%s", out_dir, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(s->bytes, 1, s->len, f) != s->len || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
        return 2;
    }
    out_dir = argv[1];
    struct script s;

    /* Peers heard directly, refreshed, expiring, leaving. */
    memset(&s, 0, sizeof(s));
    list(&s, 0, SRC_SELF, 1, 0, 0, 0, 100);
    list(&s, 0, SRC_SELF, 2, 0, 2, 0, 50);
    list(&s, OP_TICK(4), SRC_SELF, 1, 0, 0, 0, 100);
    list(&s, OP_TICK(7), SRC_SELF, 2, 0, 0, 1, 50);
    add(&s, OP_TICK(7), NULL, 0);
    add(&s, OP_TICK(7), NULL, 0);
    write_script("direct_lifetime", &s);

    /* Every source speaking for itself, then each one's list arriving from the others (forged:
     * the sender is not the datagram's source), leaving included. */
    memset(&s, 0, sizeof(s));
    list(&s, 0, SRC_SELF, 3, 0, 4, 0, 100);
    for (unsigned src = 0; src < 7; src++)
        list(&s, 0, src, 0, src, 16, 0, 100);
    for (unsigned src = 0; src < 7; src++)
        list_as(&s, 0, src, (src + 1) % 7, 0, src + 20, 16, (int)(src & 1), 100);
    write_script("sources", &s);

    /* Many hosts naming many peers, rounds going by: the probe budgets. */
    memset(&s, 0, sizeof(s));
    for (unsigned k = 0; k < 12; k++) {
        list(&s, k % 3 == 0 ? OP_TICK(4) : 0, SRC_SELF, (uint8_t)(10 + k), k * 16, 16, 0, 100);
        list(&s, 0, SRC_SELF, (uint8_t)(10 + k), k * 7, 16, 0, 10);
    }
    for (unsigned k = 0; k < 6; k++)
        add(&s, OP_TICK(4), NULL, 0);
    write_script("probe_flood", &s);

    /* Seeds set, heard, cleared, set on a peer already heard. */
    memset(&s, 0, sizeof(s));
    add(&s, OP_SEED | 2, NULL, 0);
    list(&s, 0, 2, 0, 0, 3, 0, 100);
    add(&s, OP_SEED | 1 | 4, NULL, 0);
    list(&s, OP_TICK(7), 4, 0, 5, 3, 0, 100);
    add(&s, OP_SEED | 8, NULL, 0);
    list(&s, OP_TICK(4), 2, 0, 0, 0, 1, 100);
    add(&s, OP_SEED | 8 | 1, NULL, 0);
    add(&s, OP_TICK(7), NULL, 0);
    write_script("seeds", &s);

    /* One host behind many QPNs (per-host cap), and an InfiniBand source. */
    memset(&s, 0, sizeof(s));
    for (unsigned k = 0; k < 6; k++)
        list(&s, 0, k, 0, k, 2, 0, 1000);
    list(&s, 0, 6, 0, 0, 1, 0, 100);
    list(&s, OP_TICK(7), 6, 0, 0, 1, 1, 100);
    write_script("hosts", &s);

    /* Malformed bodies the decoder must refuse. */
    memset(&s, 0, sizeof(s));
    const uint8_t junk[] = {0x0a, 0x05, 0x0a, 0x03, 0x01, 0x02, 0x03, 0x32, 0xff};
    add(&s, 0, junk, sizeof(junk));
    const uint8_t no_sender[] = {0x18, 0x01};
    add(&s, 0, no_sender, sizeof(no_sender));
    write_script("malformed", &s);
    return 0;
}
