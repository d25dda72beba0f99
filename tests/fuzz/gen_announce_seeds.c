/* SPDX-License-Identifier: BSD-2-Clause */
/* gen_announce_seeds.c - writes the seed corpus of fuzz_announce (announce/ under a directory):
 * discovery scenarios as [op][u16 length][announcement body] records. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "discovery.h"

/* Record ops, as fuzz_announce.c reads them. */
#define OP_TICK(steps_of_10ms) (0x80 | ((steps_of_10ms)&7) << 4)
#define OP_LOCAL                                                             \
    0x40 /* | endpoint 0..5: 0 sub fz.a, 1 pub fz.a, 2 sub fz.b, 3 pub fz.b, \
            4 sub md.quotes.8MlN5CIm0nE, 5 its pub */
#define SRC_UNKNOWN 7

struct script {
    uint8_t bytes[32768];
    size_t len;
};

static const char *out_dir;

static void add(struct script *s, uint8_t op, const uint8_t *body, size_t len)
{
    if (s->len + 3 + len > sizeof(s->bytes)) {
        fprintf(stderr, "gen_announce_seeds: script too long\n");
        exit(1);
    }
    s->bytes[s->len] = op;
    s->bytes[s->len + 1] = (uint8_t)len;
    s->bytes[s->len + 2] = (uint8_t)(len >> 8);
    memcpy(s->bytes + s->len + 3, body, len);
    s->len += 3 + len;
}

static struct rdps_announce make(enum rdps_announce_role role, const char *topic, uint32_t session,
                                 uint32_t interval_ms, int leaving)
{
    struct rdps_announce a;
    memset(&a, 0, sizeof(a));
    a.role = role;
    snprintf(a.topic, sizeof(a.topic), "%s", topic);
    a.topic_id = rdps__topic_hash_id(a.topic);
    a.group = 0xefc00042u;
    a.session_id = session;
    a.qpn = 0x42;
    a.qkey = 0x01234567;
    for (int i = 0; i < 16; i++)
        a.gid[i] = (uint8_t)i;
    a.host = 0xa9fe4d02u;
    a.cm_port = 7471;
    a.pid = 1234;
    a.interval_ms = interval_ms;
    a.leaving = leaving != 0;
    return a;
}

static void announce(struct script *s, uint8_t op, const struct rdps_announce *a)
{
    uint8_t body[RDPS_ANNOUNCE_MAX_BYTES];
    int len = rdps__announce_encode(a, body, sizeof(body));
    if (len < 0)
        exit(1);
    add(s, op, body, (size_t)len);
}

static void write_script(const char *name, const struct script *s)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/announce", out_dir);
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
        perror(path);
        exit(1);
    }
    snprintf(path, sizeof(path), "%s/announce/%s", out_dir, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(s->bytes, 1, s->len, f) != s->len || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    static struct script s;
    struct rdps_announce a;
    if (argc != 2) {
        fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
        return 2;
    }
    out_dir = argv[1];

    /* A publisher of our topic: seen, refreshed, a forged leave from another source, its own leave.
     */
    memset(&s, 0, sizeof(s));
    a = make(RDPS_ROLE_PUBLISHER, "fz.a", 0x11, 50, 0);
    announce(&s, OP_LOCAL | 0, &a);
    announce(&s, OP_TICK(3) | 0, &a);
    a.leaving = 1;
    announce(&s, 1, &a);
    announce(&s, SRC_UNKNOWN, &a);
    announce(&s, 0, &a);
    write_script("own_topic_lifecycle", &s);

    /* A forged update with a tiny interval from another source, then time passes. */
    memset(&s, 0, sizeof(s));
    a = make(RDPS_ROLE_SUBSCRIBER, "fz.b", 0x21, 1000, 0);
    announce(&s, OP_LOCAL | 3, &a);
    a.interval_ms = 0;
    announce(&s, 2, &a);
    a.interval_ms = 600000;
    announce(&s, 4, &a);
    announce(&s, OP_TICK(7), &a);
    announce(&s, OP_TICK(7) | 6, &a);
    write_script("forged_intervals", &s);

    /* Foreign topics from every source: the remote-only cap refuses most. */
    memset(&s, 0, sizeof(s));
    for (uint32_t i = 0; i < 24; i++) {
        char topic[32];
        snprintf(topic, sizeof(topic), "foreign.%u", i);
        a = make(i & 1 ? RDPS_ROLE_PUBLISHER : RDPS_ROLE_SUBSCRIBER, topic, 0x100 + i, 100, 0);
        announce(&s, (uint8_t)(i % 8), &a);
    }
    /* ... and then the topic becomes ours: its remote-only peers are adopted. */
    a = make(RDPS_ROLE_SUBSCRIBER, "fz.a", 0x200, 100, 0);
    announce(&s, 5, &a);
    announce(&s, OP_LOCAL | 1, &a);
    write_script("remote_only_flood", &s);

    /* Our topic's subscribers fill the table; the last local endpoint goes and comes back. */
    memset(&s, 0, sizeof(s));
    for (uint32_t i = 0; i < 12; i++) {
        a = make(RDPS_ROLE_SUBSCRIBER, "fz.b", 0x300 + i, 200, 0);
        announce(&s, (uint8_t)((i == 0 ? OP_LOCAL | 2 : 0) | (i % 7)), &a);
    }
    announce(&s, OP_LOCAL | 2, &a);
    announce(&s, OP_LOCAL | 2, &a);
    announce(&s, OP_TICK(5), &a);
    write_script("table_full_and_release", &s);

    /* An odd session's expiry makes the application drop local endpoint 0 inside the callback. */
    memset(&s, 0, sizeof(s));
    a = make(RDPS_ROLE_PUBLISHER, "fz.a", 0x401, 10, 0);
    announce(&s, OP_LOCAL | 0, &a);
    a.session_id = 0x403;
    announce(&s, 3, &a);
    announce(&s, OP_TICK(4), &a);
    write_script("expiry_removes_local_in_callback", &s);

    /* Near misses for the decoder: truncated, bad topic id, empty. */
    memset(&s, 0, sizeof(s));
    uint8_t body[RDPS_ANNOUNCE_MAX_BYTES];
    a = make(RDPS_ROLE_PUBLISHER, "fz.a", 0x501, 100, 0);
    int len = rdps__announce_encode(&a, body, sizeof(body));
    add(&s, 0, body, (size_t)len - 3);
    a.topic_id ^= 1;
    len = rdps__announce_encode(&a, body, sizeof(body));
    add(&s, 1, body, (size_t)len);
    add(&s, 2, body, 0);
    write_script("decoder_near_misses", &s);

    /* Another name with the id of local topic md.quotes.8MlN5CIm0nE: from three sources, again,
     * leaving, after time passes, and the local name itself. */
    memset(&s, 0, sizeof(s));
    a = make(RDPS_ROLE_PUBLISHER, "md.quotes.DceKDt0TJc6", 0x601, 20, 0);
    announce(&s, OP_LOCAL | 4, &a);
    announce(&s, 1, &a);
    announce(&s, 2, &a);
    announce(&s, 0, &a);
    a.leaving = 1;
    announce(&s, 3, &a);
    a.leaving = 0;
    announce(&s, OP_TICK(7) | 0, &a);
    announce(&s, OP_LOCAL | 5, &a);
    a = make(RDPS_ROLE_SUBSCRIBER, "md.quotes.8MlN5CIm0nE", 0x602, 20, 0);
    announce(&s, 4, &a);
    write_script("topic_collision", &s);
    return 0;
}
