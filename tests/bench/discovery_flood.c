/* SPDX-License-Identifier: BSD-2-Clause */
/* discovery_flood.c - discovery under a flood of forged announcements: memory and per-announcement
 * cost stay flat, and the real peers of local topics stay known. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "discovery.h"
#include "discovery_engine.h"
#include "rdps_clock.h"

/*
 * Usage: discovery_flood [ANNOUNCEMENTS (default 100000)]
 *
 * A ctx-less discovery engine with the ctx's defaults (RDPS_DISCOVERY_DEFAULT_*) has
 * LOCAL_TOPICS local topics (a subscriber of ours each) and REAL_PEERS real remote
 * publishers on them, which re-announce every second of fake time. Then come forged
 * announcements, each from a distinct source (GID and QPN) with a distinct session: nine in
 * ten for distinct foreign topics, one in ten for our topics (filling the table), intervals
 * anywhere in 0..600 s. The fake clock advances 100 us per announcement.
 *
 * Each announcement goes through what the ctx does with an ANNOUNCE body: decode
 * (rdps__announce_decode) and rdps__disc_on_announce; bodies are encoded in batches outside
 * the timed part. At 1k, 10k, 100k, ... it prints the cost per announcement of the last
 * window, the bytes the engine holds and the process RSS growth since the engine was set up.
 * Exit status 1 if a real peer is missing at the end or the engine's state is inconsistent.
 */
#define LOCAL_TOPICS 4
#define REAL_PEERS   8
#define BATCH        1000
#define STEP_NS      100000ull /* fake time per announcement */

struct sent_counter {
    uint64_t sent;
};

static int on_send(void *user, const struct rdps_announce *a)
{
    (void)a;
    ((struct sent_counter *)user)->sent++;
    return 0;
}

static uint64_t wall_ns(void)
{
    return rdps__clock_monotonic_ns();
}

static long rss_bytes(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f == NULL)
        return 0;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
        resident = 0;
    fclose(f);
    return resident * sysconf(_SC_PAGESIZE);
}

static struct rdps_source source_of(uint32_t n, uint8_t tag)
{
    struct rdps_source s;
    memset(&s, 0, sizeof(s));
    s.gid[0] = 0xfe;
    s.gid[1] = 0x80;
    s.gid[8] = tag;
    memcpy(s.gid + 12, &n, 4);
    s.has_gid = 1;
    s.qpn = 0x100 + (n & 0xffff);
    return s;
}

static struct rdps_announce make(enum rdps_announce_role role, const char *topic, uint32_t session,
                                 uint32_t interval_ms)
{
    struct rdps_announce a;
    memset(&a, 0, sizeof(a));
    a.role = role;
    snprintf(a.topic, sizeof(a.topic), "%s", topic);
    a.topic_id = rdps__topic_hash_id(a.topic);
    a.group = 0xefc00077u;
    a.session_id = session;
    a.qpn = 0x100;
    a.qkey = 0x01234567;
    a.host = 0xa9fe4d09u;
    a.cm_port = 7471;
    a.interval_ms = interval_ms;
    return a;
}

static void real_topic(char *buf, size_t len, unsigned i)
{
    snprintf(buf, len, "md.real.%u", i % LOCAL_TOPICS);
}

/* The real publishers announce (every second of fake time). */
static void real_announce(struct rdps_discovery *d, uint64_t now)
{
    for (unsigned i = 0; i < REAL_PEERS; i++) {
        char topic[32];
        real_topic(topic, sizeof(topic), i);
        struct rdps_announce a = make(RDPS_ROLE_PUBLISHER, topic, 0x5ea1000 + i, 1000);
        struct rdps_source src = source_of(i, 0xaa);
        rdps__disc_on_announce(d, &src, &a, now);
    }
}

struct body {
    uint8_t bytes[RDPS_ANNOUNCE_MAX_BYTES];
    size_t len;
    struct rdps_source src;
};

int main(int argc, char **argv)
{
    uint64_t total = argc > 1 ? strtoull(argv[1], NULL, 10) : 100000;
    if (total < BATCH || total % BATCH != 0) {
        fprintf(stderr, "usage: %s [ANNOUNCEMENTS, a multiple of %d]\n", argv[0], BATCH);
        return 2;
    }
    static struct rdps_discovery d;
    struct sent_counter sent = {0};
    struct rdps_disc_config cfg;
    rdps__disc_config_default(&cfg);
    cfg.hash_seed = 0x243f6a8885a308d3ull;
    cfg.send = on_send;
    cfg.user = &sent;
    if (rdps__disc_init(&d, &cfg) != 0) {
        fprintf(stderr, "discovery_flood: init failed\n");
        return 1;
    }
    uint64_t now = 1000000000ull;
    for (unsigned i = 0; i < LOCAL_TOPICS; i++) {
        char topic[32];
        real_topic(topic, sizeof(topic), i);
        struct rdps_announce mine = make(RDPS_ROLE_SUBSCRIBER, topic, 0x10ca1000 + i, 1000);
        if (rdps__disc_local_add(&d, &mine, now) != 0)
            return 1;
    }
    real_announce(&d, now);
    rdps__disc_tick(&d, now);

    static struct body batch[BATCH];
    static struct rdps_announce decoded[BATCH];
    memset(batch, 1, sizeof(batch)); /* the bench's own buffers are resident before rss0 */
    memset(decoded, 1, sizeof(decoded));
    long rss0 = rss_bytes();
    uint64_t decode_ns = 0, engine_ns = 0, window_start = 0, next_real = now + 1000000000ull;
    uint64_t checkpoint = 1000;
    uint32_t rng = 12345;
    printf("%10s %12s %12s %12s %14s %12s %8s %8s %10s\n", "announces", "ns/announce", "decode ns",
           "engine ns", "engine bytes", "rss delta", "peers", "remote", "refused");
    for (uint64_t done = 0; done < total; done += BATCH) {
        for (unsigned k = 0; k < BATCH; k++) {
            uint32_t n = (uint32_t)(done + k);
            char topic[32];
            rng = rng * 1103515245u + 12345u;
            if (n % 10 == 0)
                real_topic(topic, sizeof(topic), n / 10);
            else
                snprintf(topic, sizeof(topic), "forged.%u", n);
            struct rdps_announce a = make(n & 1 ? RDPS_ROLE_PUBLISHER : RDPS_ROLE_SUBSCRIBER, topic,
                                          0x40000000u + n, (rng >> 8) % 600001);
            int len = rdps__announce_encode(&a, batch[k].bytes, sizeof(batch[k].bytes));
            if (len < 0)
                return 1;
            batch[k].len = (size_t)len;
            batch[k].src = source_of(n, 0xbb);
        }
        uint64_t t0 = wall_ns();
        for (unsigned k = 0; k < BATCH; k++)
            if (rdps__announce_decode(batch[k].bytes, batch[k].len, &decoded[k]) != 0)
                return 1;
        uint64_t t1 = wall_ns();
        for (unsigned k = 0; k < BATCH; k++) {
            now += STEP_NS;
            rdps__disc_on_announce(&d, &batch[k].src, &decoded[k], now);
        }
        uint64_t t2 = wall_ns();
        decode_ns += t1 - t0;
        engine_ns += t2 - t1;
        if (now >= next_real) {
            real_announce(&d, now);
            next_real += 1000000000ull;
        }
        rdps__disc_tick(&d, now);

        if (done + BATCH == checkpoint || done + BATCH == total) {
            uint64_t n = done + BATCH - window_start;
            const struct rdps_disc_counters *c = rdps__disc_counters(&d);
            printf("%10llu %12.1f %12.1f %12.1f %14zu %12ld %8u %8u %10llu\n",
                   (unsigned long long)(done + BATCH), (double)(decode_ns + engine_ns) / n,
                   (double)decode_ns / n, (double)engine_ns / n, rdps__disc_memory_bytes(&d),
                   rss_bytes() - rss0, rdps__disc_peer_count(&d), rdps__disc_remote_only_count(&d),
                   (unsigned long long)(c->refused_table_full + c->refused_remote_only));
            window_start = done + BATCH;
            decode_ns = engine_ns = 0;
            while (checkpoint <= done + BATCH)
                checkpoint *= 10;
        }
    }

    int missing = 0, broken = 0;
    for (unsigned i = 0; i < REAL_PEERS; i++) {
        struct rdps_source src = source_of(i, 0xaa);
        struct rdps_disc_peer_info info;
        if (!rdps__disc_peer_find(&d, &src, 0x5ea1000 + i, RDPS_ROLE_PUBLISHER, &info)) {
            fprintf(stderr, "discovery_flood: real publisher %u was lost\n", i);
            missing++;
        }
    }
    const char *why = NULL;
    if (rdps__disc_check(&d, &why) != 0) {
        fprintf(stderr, "discovery_flood: inconsistent state: %s\n", why);
        broken = 1;
    }
    const struct rdps_disc_counters *c = rdps__disc_counters(&d);
    printf("real publishers present: %d/%d; refused: table full %llu, remote-only %llu; "
           "clamped intervals %llu; expired %llu\n",
           REAL_PEERS - missing, REAL_PEERS, (unsigned long long)c->refused_table_full,
           (unsigned long long)c->refused_remote_only, (unsigned long long)c->intervals_clamped,
           (unsigned long long)c->peers_expired);
    rdps__disc_fini(&d);
    return missing || broken ? 1 : 0;
}
