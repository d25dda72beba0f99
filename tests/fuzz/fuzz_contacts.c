/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_contacts.c - libFuzzer harness: unicast discovery's peer-list decoder, and the contacts
 * engine fed lists from spoofed sources, seeds and time on a fake clock. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contacts.h"
#include "contacts_engine.h"
#include "discovery.h"

/*
 * Input: records of [u8 op][u16 le length][length bytes].
 *  - op & 0x80: first advance the fake clock by ((op >> 4) & 7) x 25 ms and tick (interval
 *    100 ms);
 *  - op & 0x40: first set (op & 8 clear) or clear seed (op & 1) to source (op & 7);
 *  - the bytes are a peer list (Contacts) from source (op & 7); sources 0..5 share GIDs in pairs,
 *    6 is an InfiniBand source without a GRH, 7 is the body's own sender (a list that speaks for
 *    itself).
 * Invariants: the decoder never crashes and what it accepts re-encodes to the same list; the
 * engine stays consistent (rdps__contacts_check) within its caps (8 contacts, 3 per host, 4
 * probes, 2 new probes per interval, 2 per naming host, 2 lists each); between two rounds the
 * lists sent to probes stay within 2 new probes + the 4 live ones, so peer lists cannot make a ctx
 * send at a high rate or to many places; every destination handed out is given back.
 */
#define MAX_CONTACTS   8
#define PER_HOST       3
#define MAX_PROBES     4
#define NEW_PER_ROUND  2
#define PER_INTRODUCER 2
#define PROBE_ROUNDS   2

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fuzz_state {
    struct rdps_contacts c;
    unsigned added, removed;
    unsigned probe_lists; /* lists sent to probes since the last round */
};

static int on_send(void *user, struct rdps_contact *to, const struct rdps_contacts_msg *m)
{
    struct fuzz_state *s = user;
    uint8_t buf[RDPS_ANNOUNCE_MAX_BYTES];
    struct rdps_contacts_msg back;
    int len = rdps__contacts_encode(m, buf, sizeof(buf));
    if (len <= 0 || rdps__contacts_decode(buf, (size_t)len, &back) != 0)
        abort(); /* our own lists always encode and decode */
    if (to->dest == NULL)
        abort(); /* only contacts we were told about */
    for (uint32_t i = 0; i < m->count; i++) {
        const struct rdps_contact *named = rdps__contacts_find(&s->c, &m->peers[i]);
        if (named == NULL || named->kind == RDPS_CONTACT_PROBE ||
            rdps__source_equal(&m->peers[i], &to->source))
            abort(); /* lists pass on vouched contacts only, never the recipient */
    }
    if (to->kind == RDPS_CONTACT_PROBE)
        s->probe_lists++;
    return (s->added & 7) == 3 ? -1 : 0; /* now and then the send fails */
}

static void on_change(void *user, struct rdps_contact *c, bool added)
{
    struct fuzz_state *s = user;
    if (added) {
        if (c->dest != NULL)
            abort();
        c->dest = s;
        s->added++;
    } else {
        if (c->dest != s)
            abort();
        c->dest = NULL;
        s->removed++;
    }
}

static void check(const struct fuzz_state *s)
{
    const char *why = NULL;
    if (rdps__contacts_check(&s->c, &why) != 0) {
        fprintf(stderr, "contacts inconsistent: %s\n", why);
        abort();
    }
    if (rdps__contacts_used(&s->c) > MAX_CONTACTS || rdps__contacts_probes(&s->c) > MAX_PROBES)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct fuzz_state s;
    struct rdps_contacts_config cfg;
    memset(&s, 0, sizeof(s));
    rdps__contacts_config_default(&cfg);
    cfg.max_contacts = MAX_CONTACTS;
    cfg.per_host = PER_HOST;
    cfg.max_probes = MAX_PROBES;
    cfg.probes_per_interval = NEW_PER_ROUND;
    cfg.per_introducer = PER_INTRODUCER;
    cfg.probe_rounds = PROBE_ROUNDS;
    cfg.interval_ms = 100;
    cfg.min_interval_ms = 10;
    cfg.max_interval_ms = 1000;
    cfg.hash_seed = 42;
    cfg.self_gid[15] = 0xee;
    cfg.self_qpn = 0x42;
    cfg.send = on_send;
    cfg.on_change = on_change;
    cfg.user = &s;
    if (rdps__contacts_init(&s.c, &cfg) != 0)
        abort();

    struct rdps_source sources[7];
    memset(sources, 0, sizeof(sources));
    for (unsigned i = 0; i < 7; i++) {
        sources[i].has_gid = i != 6;
        sources[i].gid[15] = (uint8_t)(i & ~1u);
        sources[i].qpn = 0x100 + (i & 1);
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
            now += (uint64_t)((op >> 4) & 7) * 25000000ull;
            uint64_t round_before = s.c.next_round_ns;
            uint64_t next = rdps__contacts_tick(&s.c, now);
            if (next <= now)
                abort();
            if (round_before <= now) { /* a round ran: what probes got since the last one */
                if (s.probe_lists > NEW_PER_ROUND + MAX_PROBES)
                    abort();
                s.probe_lists = 0;
            }
            check(&s);
        }
        if (op & 0x40) {
            unsigned src = op & 7;
            if (op & 8)
                rdps__contacts_seed_clear(&s.c, op & 1);
            else if (src < 7)
                rdps__contacts_seed_set(&s.c, op & 1, &sources[src], now);
        }
        uint8_t *body = malloc(len ? len : 1);
        if (body == NULL)
            abort();
        memcpy(body, data + pos, len);
        struct rdps_contacts_msg m;
        if (rdps__contacts_decode(body, len, &m) == 0) {
            uint8_t again[RDPS_ANNOUNCE_MAX_BYTES];
            struct rdps_contacts_msg back;
            int n = rdps__contacts_encode(&m, again, sizeof(again));
            if (n < 0 || rdps__contacts_decode(again, (size_t)n, &back) != 0 ||
                memcmp(&back, &m, sizeof(m)) != 0)
                abort();
            unsigned src = op & 7;
            struct rdps_source self = {.qpn = m.qpn, .has_gid = 1};
            memcpy(self.gid, m.gid, 16);
            rdps__contacts_on_list(&s.c, src == 7 ? &self : &sources[src], &m, now);
        }
        free(body);
        pos += len;
        check(&s);
    }
    rdps__contacts_leave(&s.c);
    rdps__contacts_fini(&s.c);
    if (s.added != s.removed)
        abort();
    return 0;
}
