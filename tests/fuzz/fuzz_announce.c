/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_announce.c - libFuzzer harness: the announcement decoder, and the discovery engine fed
 * announcements from several spoofed sources on a fake clock. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "discovery.h"
#include "discovery_engine.h"

/*
 * Input: records of [u8 op][u16 le length][length bytes].
 *  - op & 0x80: first advance the fake clock by ((op >> 4) & 7) x 10 ms and tick;
 *  - op & 0x40: first add or remove local endpoint (op & 7) % 6 (topics fz.a, fz.b and
 *    md.quotes.8MlN5CIm0nE, whose 64-bit id md.quotes.DceKDt0TJc6 shares: topic collisions);
 *  - the bytes are an announcement body from source (op & 7) (source 7 is "unknown", NULL).
 * Invariants: the decoder never crashes; whatever it accepts re-encodes and decodes to the same
 * announcement; the engine stays consistent (rdps__disc_check) with peers <= max_peers and
 * remote-only peers <= max_remote_only; tick's deadline is in the future; a TOPIC_COLLISION
 * names a local topic and another name of the same id, at most once per announcement.
 * Small caps (8 peers, 2 remote-only, intervals 10..1000 ms) make every refusal reachable.
 */
#define MAX_PEERS       8
#define MAX_REMOTE_ONLY 2
#define LOCALS          6

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fuzz_state {
    struct rdps_discovery d;
    bool local[LOCALS];
    uint64_t sent;
    unsigned collisions; /* TOPIC_COLLISION events of the announcement being handled */
};

static const struct {
    enum rdps_announce_role role;
    const char *topic;
} locals[LOCALS] = {{RDPS_ROLE_SUBSCRIBER, "fz.a"},
                    {RDPS_ROLE_PUBLISHER, "fz.a"},
                    {RDPS_ROLE_SUBSCRIBER, "fz.b"},
                    {RDPS_ROLE_PUBLISHER, "fz.b"},
                    {RDPS_ROLE_SUBSCRIBER, "md.quotes.8MlN5CIm0nE"},
                    {RDPS_ROLE_PUBLISHER, "md.quotes.8MlN5CIm0nE"}};

static int on_send(void *user, const struct rdps_announce *a)
{
    struct fuzz_state *s = user;
    uint8_t buf[RDPS_ANNOUNCE_MAX_BYTES];
    if (rdps__announce_encode(a, buf, sizeof(buf)) <= 0)
        abort(); /* our own announcements always encode */
    s->sent++;
    return (s->sent & 7) == 0 ? RDPS_ENOTJOINED : 0; /* now and then: not joined yet */
}

static void local_toggle(struct fuzz_state *s, unsigned k, uint64_t now)
{
    if (s->local[k]) {
        rdps__disc_local_remove(&s->d, locals[k].role, 0x10c0 + k);
        s->local[k] = false;
        return;
    }
    struct rdps_announce a;
    memset(&a, 0, sizeof(a));
    a.role = locals[k].role;
    strcpy(a.topic, locals[k].topic);
    a.topic_id = rdps__topic_hash_id(a.topic);
    a.group = 0xefc00009u;
    a.session_id = 0x10c0 + k;
    a.qpn = 1;
    a.interval_ms = 100;
    if (rdps__disc_local_add(&s->d, &a, now) == 0)
        s->local[k] = true;
}

/* The application reacting inside the callback: a GONE of an odd session drops local endpoint 0. */
static void on_event(void *user, const struct rdps_disc_event *ev)
{
    struct fuzz_state *s = user;
    if (ev->topic == NULL || ev->role == 0 || strlen(ev->topic) > RDPS_TOPIC_NAME_MAX)
        abort();
    if (ev->type == RDPS_DISC_TOPIC_COLLISION) {
        if (ev->other_topic == NULL || strcmp(ev->other_topic, ev->topic) == 0 ||
            rdps__topic_hash_id(ev->other_topic) != ev->topic_id ||
            rdps__topic_hash_id(ev->topic) != ev->topic_id || ++s->collisions > 1)
            abort();
        return;
    }
    if (ev->other_topic != NULL)
        abort();
    if (ev->type == RDPS_DISC_PEER_GONE && (ev->session_id & 1) && s->local[0])
        local_toggle(s, 0, 0);
}

static void check_round_trip(const struct rdps_announce *a)
{
    uint8_t buf[RDPS_ANNOUNCE_MAX_BYTES];
    struct rdps_announce back;
    int len = rdps__announce_encode(a, buf, sizeof(buf));
    if (len < 0)
        return; /* an accepted body can still be too long once defaults are written out */
    if (rdps__announce_decode(buf, (size_t)len, &back) != 0 || back.role != a->role ||
        strcmp(back.topic, a->topic) != 0 || back.topic_id != a->topic_id ||
        back.group != a->group || back.session_id != a->session_id || back.qpn != a->qpn ||
        back.qkey != a->qkey || memcmp(back.gid, a->gid, 16) != 0 || back.reliable != a->reliable ||
        back.host != a->host || back.cm_port != a->cm_port || back.pid != a->pid ||
        back.interval_ms != a->interval_ms || back.leaving != a->leaving ||
        back.unicast != a->unicast || back.receiver_id != a->receiver_id ||
        back.announce_seq != a->announce_seq)
        abort();
}

static void check_engine(const struct fuzz_state *s)
{
    const char *why = NULL;
    if (rdps__disc_check(&s->d, &why) != 0) {
        fprintf(stderr, "discovery state inconsistent: %s\n", why);
        abort();
    }
    if (rdps__disc_peer_count(&s->d) > MAX_PEERS ||
        rdps__disc_remote_only_count(&s->d) > MAX_REMOTE_ONLY)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct fuzz_state s;
    struct rdps_disc_config cfg;
    memset(&s, 0, sizeof(s));
    rdps__disc_config_default(&cfg);
    cfg.max_peers = MAX_PEERS;
    cfg.max_remote_only = MAX_REMOTE_ONLY;
    cfg.min_interval_ms = 10;
    cfg.max_interval_ms = 1000;
    cfg.announce_interval_ms = 100;
    cfg.hash_seed = 42;
    cfg.send = on_send;
    cfg.on_event = on_event;
    cfg.user = &s;
    if (rdps__disc_init(&s.d, &cfg) != 0)
        abort();

    struct rdps_source sources[7];
    memset(sources, 0, sizeof(sources));
    for (unsigned i = 0; i < 7; i++) {
        sources[i].has_gid = i != 6;             /* source 6: InfiniBand without GRH (LID only) */
        sources[i].gid[15] = (uint8_t)(i & ~1u); /* pairs share a GID ... */
        sources[i].qpn = 0x100 + (i & 1);        /* ... and differ in QPN */
        sources[i].lid = i == 6 ? 7 : 0;
    }

    uint64_t now = 1000000000ull;
    size_t pos = 0;
    while (size - pos >= 3) {
        uint8_t op = data[pos];
        size_t len = (size_t)data[pos + 1] | (size_t)data[pos + 2] << 8;
        pos += 3;
        if (len > size - pos)
            len = size - pos;
        if (op & 0x80) {
            now += (uint64_t)((op >> 4) & 7) * 10000000ull;
            uint64_t next = rdps__disc_tick(&s.d, now);
            if (next <= now)
                abort();
            check_engine(&s);
        }
        if (op & 0x40)
            local_toggle(&s, (op & 7) % LOCALS, now);
        /* Copy so the body ends exactly where the record says (ASan catches overreads). */
        uint8_t *body = malloc(len ? len : 1);
        if (body == NULL)
            abort();
        memcpy(body, data + pos, len);
        struct rdps_announce a;
        if (rdps__announce_decode(body, len, &a) == 0) {
            check_round_trip(&a);
            unsigned src = op & 7;
            s.collisions = 0;
            rdps__disc_on_announce(&s.d, src == 7 ? NULL : &sources[src], &a, now);
        }
        free(body);
        pos += len;
        check_engine(&s);
    }
    rdps__disc_tick(&s.d, now + 4000000000ull); /* everything expires */
    if (rdps__disc_peer_count(&s.d) != 0)
        abort();
    check_engine(&s);
    rdps__disc_fini(&s.d);
    return 0;
}
