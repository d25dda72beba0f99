/* SPDX-License-Identifier: BSD-2-Clause */
/* test_contacts_engine.c - unicast discovery's sans-IO engine on a fake clock: contacts heard
 * directly, forged lists, seeds, the per-host and table caps, probes of named peers and the bound
 * on what peer lists make a ctx send, rotation of the lists it sends; the codec and seed parser. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "contacts_engine.h"
#include "discovery.h"

#define MS 1000000ull

struct sent {
    struct rdps_source to;
    uint8_t kind;
    struct rdps_contacts_msg msg;
};

struct harness {
    struct rdps_contacts c;
    struct sent sent[4096];
    unsigned sent_count;
    unsigned added, removed;
};

static void check(const struct harness *h)
{
    const char *why = NULL;
    if (rdps__contacts_check(&h->c, &why) != 0)
        fail_msg("contacts inconsistent: %s", why);
}

static int on_send(void *user, struct rdps_contact *to, const struct rdps_contacts_msg *m)
{
    struct harness *h = user;
    if (h->sent_count < 4096) {
        h->sent[h->sent_count].to = to->source;
        h->sent[h->sent_count].kind = to->kind;
        h->sent[h->sent_count].msg = *m;
    }
    h->sent_count++;
    return 0;
}

static void on_change(void *user, struct rdps_contact *c, bool added)
{
    struct harness *h = user;
    if (added) {
        h->added++;
        c->dest = h; /* anything non-NULL */
    } else {
        h->removed++;
        c->dest = NULL;
    }
}

static struct rdps_source src(uint8_t host, uint32_t qpn)
{
    struct rdps_source s;
    memset(&s, 0, sizeof(s));
    s.gid[0] = 0xfe;
    s.gid[1] = 0x80;
    s.gid[15] = host;
    s.has_gid = 1;
    s.qpn = qpn;
    return s;
}

static struct harness *setup_with(uint32_t max_contacts)
{
    static struct harness h;
    struct rdps_contacts_config cfg;
    memset(&h, 0, sizeof(h));
    rdps__contacts_config_default(&cfg);
    cfg.max_contacts = max_contacts;
    cfg.interval_ms = 100;
    cfg.hash_seed = 7;
    struct rdps_source self = src(1, 0x11);
    memcpy(cfg.self_gid, self.gid, 16);
    cfg.self_qpn = self.qpn;
    cfg.send = on_send;
    cfg.on_change = on_change;
    cfg.user = &h;
    assert_int_equal(rdps__contacts_init(&h.c, &cfg), 0);
    return &h;
}

static int setup(void **state)
{
    *state = setup_with(64);
    return 0;
}

static int teardown(void **state)
{
    struct harness *h = *state;
    check(h);
    rdps__contacts_fini(&h->c);
    assert_int_equal(h->added, h->removed); /* every destination given back */
    return 0;
}

/* A list as `from` would send it: sender = from, peers given. */
static struct rdps_contacts_msg list_from(const struct rdps_source *from, uint32_t interval_ms,
                                          const struct rdps_source *peers, uint32_t n)
{
    struct rdps_contacts_msg m;
    memset(&m, 0, sizeof(m));
    memcpy(m.gid, from->gid, 16);
    m.qpn = from->qpn;
    m.interval_ms = interval_ms;
    for (uint32_t i = 0; i < n; i++)
        m.peers[i] = peers[i];
    m.count = n;
    return m;
}

/* A peer that speaks for itself becomes a contact, hears from us at once, lives 3 of its
 * intervals past its last list, and leaves with its own `leaving`. */
static void test_direct_contact_lifetime(void **state)
{
    struct harness *h = *state;
    struct rdps_source a = src(2, 0x22);
    struct rdps_contacts_msg m = list_from(&a, 50, NULL, 0);
    rdps__contacts_on_list(&h->c, &a, &m, 0);
    assert_int_equal(rdps__contacts_targets(&h->c), 1);
    assert_int_equal(h->sent_count, 1); /* welcomed at once */
    assert_memory_equal(&h->sent[0].to, &a, sizeof(a));
    assert_int_equal(h->sent[0].msg.qpn, 0x11);
    assert_int_equal(h->sent[0].msg.count, 0); /* it is not told about itself */
    const struct rdps_contact *c = rdps__contacts_find(&h->c, &a);
    assert_non_null(c);
    assert_int_equal(c->kind, RDPS_CONTACT_DIRECT);
    assert_true(c->deadline_ns == 150 * MS);
    rdps__contacts_on_list(&h->c, &a, &m, 100 * MS); /* refreshed: 250 ms */
    assert_true(rdps__contacts_tick(&h->c, 200 * MS) <= 250 * MS);
    assert_int_equal(rdps__contacts_targets(&h->c), 1);
    rdps__contacts_tick(&h->c, 250 * MS);
    assert_int_equal(rdps__contacts_targets(&h->c), 0);
    assert_int_equal(rdps__contacts_counters(&h->c)->expired, 1);
    rdps__contacts_on_list(&h->c, &a, &m, 300 * MS);
    m.leaving = true;
    rdps__contacts_on_list(&h->c, &a, &m, 310 * MS);
    assert_int_equal(rdps__contacts_targets(&h->c), 0);
    assert_int_equal(rdps__contacts_counters(&h->c)->left, 1);
    check(h);
}

/* A list whose sender is not its datagram's source is dropped whole: no contact is added,
 * refreshed or removed in another's name, and its peers are not probed. */
static void test_forged_list_dropped(void **state)
{
    struct harness *h = *state;
    struct rdps_source a = src(2, 0x22), forger = src(66, 0x22), named = src(3, 0x33);
    struct rdps_contacts_msg m = list_from(&a, 100, &named, 1);
    rdps__contacts_on_list(&h->c, &a, &m, 0);
    unsigned sent = h->sent_count;
    uint64_t deadline = rdps__contacts_find(&h->c, &a)->deadline_ns;
    rdps__contacts_on_list(&h->c, &forger, &m, 10 * MS); /* a's list from another host */
    m.leaving = true;
    rdps__contacts_on_list(&h->c, &forger, &m, 20 * MS);
    assert_non_null(rdps__contacts_find(&h->c, &a));
    assert_true(rdps__contacts_find(&h->c, &a)->deadline_ns == deadline);
    assert_null(rdps__contacts_find(&h->c, &forger));
    assert_int_equal(rdps__contacts_counters(&h->c)->forged, 2);
    assert_int_equal(h->sent_count, sent);
    /* Our own QP is never a contact, sent or named. */
    struct rdps_source self = src(1, 0x11);
    struct rdps_contacts_msg mine = list_from(&self, 100, NULL, 0);
    rdps__contacts_on_list(&h->c, &self, &mine, 30 * MS);
    assert_null(rdps__contacts_find(&h->c, &self));
    struct rdps_contacts_msg names_self = list_from(&a, 100, &self, 1);
    names_self.leaving = false;
    rdps__contacts_on_list(&h->c, &a, &names_self, 40 * MS);
    assert_null(rdps__contacts_find(&h->c, &self));
    check(h);
}

/* One host behind 40 QPNs gets 16 contacts (per_host). At the table's cap a newcomer displaces
 * the least recently heard contact of the host holding the most, while that host holds more than
 * the newcomer's would; once every host holds one, the next newcomer is refused. */
static void test_host_and_table_caps(void **state)
{
    struct harness *h = *state;
    for (uint32_t q = 0; q < 40; q++) {
        struct rdps_source s = src(9, 0x100 + q);
        struct rdps_contacts_msg m = list_from(&s, 100, NULL, 0);
        rdps__contacts_on_list(&h->c, &s, &m, q * MS / 10); /* 0x100 is heard first */
    }
    assert_int_equal(rdps__contacts_used(&h->c), 16);
    assert_int_equal(rdps__contacts_counters(&h->c)->refused_host, 24);
    for (uint32_t k = 0; k < 48; k++) {
        struct rdps_source s = src((uint8_t)(100 + k), 0x200);
        struct rdps_contacts_msg m = list_from(&s, 100, NULL, 0);
        rdps__contacts_on_list(&h->c, &s, &m, 10 * MS);
    }
    assert_int_equal(rdps__contacts_used(&h->c), 64); /* full, nobody displaced yet */
    assert_int_equal(rdps__contacts_counters(&h->c)->displaced, 0);
    struct rdps_source newcomer = src(200, 0x300), first = src(9, 0x100);
    struct rdps_contacts_msg m = list_from(&newcomer, 100, NULL, 0);
    rdps__contacts_on_list(&h->c, &newcomer, &m, 20 * MS);
    assert_non_null(rdps__contacts_find(&h->c, &newcomer));
    assert_null(rdps__contacts_find(&h->c, &first)); /* host 9's least recently heard */
    assert_int_equal(rdps__contacts_counters(&h->c)->displaced, 1);
    /* 14 more newcomers take host 9 down to one contact; then the table is fair: the 15th is
     * refused. */
    for (uint32_t k = 0; k < 15; k++) {
        struct rdps_source s = src((uint8_t)(201 + k), 0x300);
        struct rdps_contacts_msg n = list_from(&s, 100, NULL, 0);
        rdps__contacts_on_list(&h->c, &s, &n, 30 * MS);
    }
    assert_int_equal(rdps__contacts_used(&h->c), 64);
    assert_int_equal(rdps__contacts_counters(&h->c)->displaced, 15);
    assert_int_equal(rdps__contacts_counters(&h->c)->refused_full, 1);
    struct rdps_source last9 = src(9, 0x100 + 15);
    assert_non_null(rdps__contacts_find(&h->c, &last9));
    check(h);
}

/*
 * Finding 4 of the fourth review: one machine with 16 GIDs (addresses) and 32 QPs on each fills
 * the default 256-entry table as far as the caps let it; a newcomer that speaks for itself is
 * still taken (1.2.0: 8 GIDs x 32 QPs filled the table and every newcomer was refused).
 */
static void test_many_qps_and_gids_cannot_shut_newcomers_out(void **state)
{
    (void)state;
    struct harness *h = setup_with(256);
    for (uint32_t g = 0; g < 16; g++)
        for (uint32_t q = 0; q < 32; q++) {
            struct rdps_source s = src((uint8_t)(20 + g), 0x100 + q);
            struct rdps_contacts_msg m = list_from(&s, 100, NULL, 0);
            rdps__contacts_on_list(&h->c, &s, &m, 0);
        }
    const struct rdps_contacts_counters *k = rdps__contacts_counters(&h->c);
    print_message("16 GIDs x 32 QPs: %u contacts, %llu refused (host), %llu refused (full)\n",
                  rdps__contacts_used(&h->c), (unsigned long long)k->refused_host,
                  (unsigned long long)k->refused_full);
    unsigned taken = 0;
    for (uint32_t n = 0; n < 8; n++) {
        struct rdps_source s = src((uint8_t)(100 + n), 0x77);
        struct rdps_contacts_msg m = list_from(&s, 100, NULL, 0);
        rdps__contacts_on_list(&h->c, &s, &m, 10 * MS);
        taken += rdps__contacts_find(&h->c, &s) != NULL;
    }
    print_message("newcomers taken: %u of 8\n", taken);
    assert_int_equal(taken, 8);
    assert_true(rdps__contacts_used(&h->c) <= 256);
    check(h);
    rdps__contacts_fini(&h->c);
}

/* Unconfirmed and stale contacts go first: at the cap a newcomer displaces a PROBE (never
 * answered) before a DIRECT, a DIRECT that missed its last list before a live one, and at its
 * host's cap a stale contact of its own host. A named peer (PROBE) never displaces anyone. */
static void test_unconfirmed_and_stale_go_first(void **state)
{
    (void)state;
    struct harness *h = setup_with(16);
    struct rdps_source named = src(50, 0x50), introducer = src(2, 0x20);
    struct rdps_contacts_msg intro = list_from(&introducer, 100, &named, 1);
    rdps__contacts_on_list(&h->c, &introducer, &intro, 0); /* DIRECT 2 + PROBE 50 */
    for (uint32_t k = 0; k < 14; k++) {
        struct rdps_source s = src((uint8_t)(60 + k), 0x60);
        struct rdps_contacts_msg m = list_from(&s, 100, NULL, 0);
        rdps__contacts_on_list(&h->c, &s, &m, k < 7 ? 0 : 150 * MS);
    }
    assert_int_equal(rdps__contacts_used(&h->c), 16);
    assert_int_equal(rdps__contacts_probes(&h->c), 1);
    struct rdps_source n1 = src(90, 0x90), n2 = src(91, 0x90), n3 = src(92, 0x90);
    struct rdps_contacts_msg m1 = list_from(&n1, 100, NULL, 0);
    rdps__contacts_on_list(&h->c, &n1, &m1, 160 * MS);
    assert_null(rdps__contacts_find(&h->c, &named)); /* the PROBE went first */
    assert_non_null(rdps__contacts_find(&h->c, &n1));
    /* At 160 ms, contacts heard at 0 missed their list of 100 ms: stale. The oldest goes. */
    struct rdps_contacts_msg m2 = list_from(&n2, 100, NULL, 0);
    rdps__contacts_on_list(&h->c, &n2, &m2, 160 * MS);
    assert_null(rdps__contacts_find(&h->c, &introducer));
    struct rdps_contacts_msg m3 = list_from(&n3, 100, NULL, 0);
    rdps__contacts_on_list(&h->c, &n3, &m3, 160 * MS);
    struct rdps_source s60 = src(60, 0x60), s70 = src(67, 0x60);
    assert_null(rdps__contacts_find(&h->c, &s60));
    assert_non_null(rdps__contacts_find(&h->c, &s70)); /* heard at 150 ms: live */
    assert_int_equal(rdps__contacts_counters(&h->c)->displaced, 3);
    /* A named peer finds the table full: refused, nobody displaced. */
    struct rdps_source named2 = src(51, 0x51);
    struct rdps_contacts_msg intro2 = list_from(&n1, 100, &named2, 1);
    rdps__contacts_on_list(&h->c, &n1, &intro2, 170 * MS);
    assert_null(rdps__contacts_find(&h->c, &named2));
    assert_int_equal(rdps__contacts_counters(&h->c)->displaced, 3);
    check(h);
    rdps__contacts_fini(&h->c);
}

/*
 * Peers a contact names are probed within budgets: 8 new ones per interval, 16 at once, 8 per
 * naming host; each gets our list (never our announcements: PROBE) 3 times and is forgotten
 * unless it answers from its own address, which makes it DIRECT. Lists never pass on probes.
 */
static void test_probes_are_bounded(void **state)
{
    struct harness *h = *state;
    struct rdps_source a = src(2, 0x22), b = src(3, 0x33);
    struct rdps_source named[16];
    for (uint32_t i = 0; i < 16; i++)
        named[i] = src((uint8_t)(50 + i), 0x500 + i);
    struct rdps_contacts_msg m = list_from(&a, 100, named, 16);
    rdps__contacts_on_list(&h->c, &a, &m, 0);
    assert_int_equal(rdps__contacts_probes(&h->c), 8); /* its share (and the round's budget) */
    assert_int_equal(rdps__contacts_counters(&h->c)->refused_probe, 8);
    /* b names the same 16: the round's budget is spent. */
    struct rdps_contacts_msg mb = list_from(&b, 100, named, 16);
    rdps__contacts_on_list(&h->c, &b, &mb, 1 * MS);
    assert_int_equal(rdps__contacts_probes(&h->c), 8);
    unsigned lists_to_probes = 0;
    for (unsigned i = 0; i < h->sent_count; i++)
        lists_to_probes += h->sent[i].kind == RDPS_CONTACT_PROBE;
    assert_int_equal(lists_to_probes, 8);
    /* Next round: b's list again: 8 more (b's own share). */
    rdps__contacts_tick(&h->c, 100 * MS);
    rdps__contacts_on_list(&h->c, &b, &mb, 101 * MS);
    assert_int_equal(rdps__contacts_probes(&h->c), 16);
    /* No list we send names a probe. */
    for (unsigned i = 0; i < h->sent_count; i++)
        for (uint32_t k = 0; k < h->sent[i].msg.count; k++)
            assert_int_not_equal(rdps__contacts_find(&h->c, &h->sent[i].msg.peers[k])->kind,
                                 RDPS_CONTACT_PROBE);
    /* One answers from its own address: DIRECT. */
    struct rdps_contacts_msg answer = list_from(&named[0], 100, NULL, 0);
    rdps__contacts_on_list(&h->c, &named[0], &answer, 150 * MS);
    assert_int_equal(rdps__contacts_find(&h->c, &named[0])->kind, RDPS_CONTACT_DIRECT);
    /* The others get 3 lists each, then are forgotten. */
    h->sent_count = 0;
    for (uint64_t t = 200; t <= 600; t += 100)
        rdps__contacts_tick(&h->c, t * MS);
    assert_int_equal(rdps__contacts_probes(&h->c), 0);
    lists_to_probes = 0;
    for (unsigned i = 0; i < h->sent_count && i < 4096; i++)
        lists_to_probes += h->sent[i].kind == RDPS_CONTACT_PROBE;
    assert_true(lists_to_probes <= 15 * 2); /* 3 each, one of them already sent */
    assert_int_equal(rdps__contacts_counters(&h->c)->probes_unanswered, 15);
    check(h);
}

/*
 * A flood of forged lists, each from a fresh host naming 16 fresh peers, for 20 intervals: the
 * lists sent to named peers stay within 8 new probes x 3 lists per interval, to at most 16 at
 * once, and the table stays within its caps.
 */
static void test_flood_of_named_peers_is_bounded(void **state)
{
    struct harness *h = *state;
    uint32_t q = 0x1000;
    unsigned worst_round = 0;
    for (uint64_t round = 1; round <= 20; round++) {
        unsigned before = h->sent_count, probes_max = 0;
        for (unsigned k = 0; k < 200; k++) {
            struct rdps_source from = src((uint8_t)(k & 0xff), q++);
            from.gid[14] = (uint8_t)round;
            struct rdps_source named[16];
            for (uint32_t i = 0; i < 16; i++) {
                named[i] = src((uint8_t)i, q++);
                named[i].gid[13] = (uint8_t)round;
            }
            struct rdps_contacts_msg m = list_from(&from, 100, named, 16);
            rdps__contacts_on_list(&h->c, &from, &m, round * 100 * MS + k);
            if (rdps__contacts_probes(&h->c) > probes_max)
                probes_max = rdps__contacts_probes(&h->c);
        }
        rdps__contacts_tick(&h->c, (round + 1) * 100 * MS);
        unsigned to_probes = 0;
        for (unsigned i = before; i < h->sent_count && i < 4096; i++)
            to_probes += h->sent[i].kind == RDPS_CONTACT_PROBE;
        if (to_probes > worst_round)
            worst_round = to_probes;
        assert_true(probes_max <= 16);
        assert_true(rdps__contacts_used(&h->c) <= 64);
        if (h->sent_count > 3000)
            h->sent_count = 0;
        check(h);
    }
    assert_true(worst_round <= 8 + 16); /* new probes welcomed, and one list per probe */
}

/* Seeds: always talked to, never expire, outside the caps; `heard` while they speak; a seed
 * that resolves to a peer we already hear turns it into the seed. */
static void test_seeds(void **state)
{
    struct harness *h = *state;
    struct rdps_source s = src(5, 0x55), d = src(6, 0x66);
    assert_int_equal(rdps__contacts_seed_set(&h->c, 0, &s, 0), 0);
    assert_int_equal(rdps__contacts_targets(&h->c), 1);
    assert_int_equal(h->sent_count, 1);
    const struct rdps_contact *c = rdps__contacts_seed(&h->c, 0);
    assert_non_null(c);
    assert_false(c->heard);
    struct rdps_contacts_msg m = list_from(&s, 100, NULL, 0);
    rdps__contacts_on_list(&h->c, &s, &m, 10 * MS);
    assert_true(rdps__contacts_seed(&h->c, 0)->heard);
    rdps__contacts_tick(&h->c, 10000 * MS);
    assert_non_null(rdps__contacts_seed(&h->c, 0)); /* never expires */
    assert_false(rdps__contacts_seed(&h->c, 0)->heard);
    /* d is DIRECT, then seed 1 resolves to it. */
    struct rdps_contacts_msg md = list_from(&d, 100, NULL, 0);
    rdps__contacts_on_list(&h->c, &d, &md, 10000 * MS);
    assert_int_equal(rdps__contacts_used(&h->c), 1);
    assert_int_equal(rdps__contacts_seed_set(&h->c, 1, &d, 10001 * MS), 0);
    assert_int_equal(rdps__contacts_used(&h->c), 0);
    assert_int_equal(rdps__contacts_find(&h->c, &d)->kind, RDPS_CONTACT_SEED);
    assert_int_equal(rdps__contacts_targets(&h->c), 2);
    struct rdps_source self = src(1, 0x11);
    assert_int_equal(rdps__contacts_seed_set(&h->c, 2, &self, 0), RDPS_EINVAL);
    rdps__contacts_seed_clear(&h->c, 0);
    assert_null(rdps__contacts_seed(&h->c, 0));
    assert_int_equal(rdps__contacts_targets(&h->c), 1);
    check(h);
}

/* The lists we send name what we heard directly, 16 at a time, moving through the table so
 * every contact is passed on within a few rounds. */
static void test_lists_rotate_through_contacts(void **state)
{
    struct harness *h = *state;
    for (uint32_t k = 0; k < 40; k++) {
        struct rdps_source s = src((uint8_t)(10 + k), 0x300 + k);
        struct rdps_contacts_msg m = list_from(&s, 1000, NULL, 0);
        rdps__contacts_on_list(&h->c, &s, &m, 0);
    }
    bool named[40] = {false};
    for (uint64_t round = 1; round <= 4; round++) {
        h->sent_count = 0;
        rdps__contacts_tick(&h->c, round * 100 * MS);
        assert_int_equal(h->sent_count, 40);
        for (unsigned i = 0; i < h->sent_count; i++) {
            assert_true(h->sent[i].msg.count <= RDPS_CONTACTS_PER_MESSAGE);
            for (uint32_t k = 0; k < h->sent[i].msg.count; k++) {
                assert_false(rdps__source_equal(&h->sent[i].msg.peers[k], &h->sent[i].to));
                named[h->sent[i].msg.peers[k].qpn - 0x300] = true;
            }
        }
    }
    for (int k = 0; k < 40; k++)
        assert_true(named[k]);
    rdps__contacts_leave(&h->c);
    assert_true(h->sent[h->sent_count - 1].msg.leaving);
}

/* The wire message: round trip, and what the decoder refuses. */
static void test_codec(void **state)
{
    (void)state;
    struct rdps_contacts_msg m, back;
    memset(&m, 0, sizeof(m));
    for (int i = 0; i < 16; i++)
        m.gid[i] = (uint8_t)(0xa0 + i);
    m.lid = 7;
    m.qpn = 0x123456;
    m.host = 0xa9fe4d02u;
    m.cm_port = 7471;
    m.interval_ms = 1000;
    m.count = RDPS_CONTACTS_PER_MESSAGE;
    for (uint32_t i = 0; i < m.count; i++) {
        m.peers[i] = src((uint8_t)i, 0x1000 + i);
        if (i == 3) { /* an InfiniBand source without a GRH */
            memset(&m.peers[i], 0, sizeof(m.peers[i]));
            m.peers[i].lid = 0x44;
            m.peers[i].qpn = 0x77;
        }
    }
    uint8_t buf[RDPS_ANNOUNCE_MAX_BYTES];
    int len = rdps__contacts_encode(&m, buf, sizeof(buf));
    assert_true(len > 0);
    assert_int_equal(rdps__contacts_decode(buf, (size_t)len, &back), 0);
    assert_memory_equal(&back, &m, sizeof(m));
    struct rdps_source from = {.has_gid = 1, .qpn = 0x123456};
    memcpy(from.gid, m.gid, 16);
    assert_true(rdps__contacts_from_source(&back, &from));
    from.qpn++;
    assert_false(rdps__contacts_from_source(&back, &from));
    struct rdps_source ib = {.lid = 7, .qpn = 0x123456};
    assert_true(rdps__contacts_from_source(&back, &ib));

    m.peers[0].has_gid = 0; /* neither GID nor LID */
    len = rdps__contacts_encode(&m, buf, sizeof(buf));
    assert_int_equal(rdps__contacts_decode(buf, (size_t)len, &back), RDPS_EBADFRAME);
    m.peers[0] = src(1, 0);
    len = rdps__contacts_encode(&m, buf, sizeof(buf));
    assert_int_equal(rdps__contacts_decode(buf, (size_t)len, &back), RDPS_EBADFRAME);
    m.peers[0] = src(1, 0xffffff); /* the multicast QPN */
    len = rdps__contacts_encode(&m, buf, sizeof(buf));
    assert_int_equal(rdps__contacts_decode(buf, (size_t)len, &back), RDPS_EBADFRAME);
    m.peers[0] = src(1, 1);
    m.qpn = 0;
    len = rdps__contacts_encode(&m, buf, sizeof(buf));
    assert_int_equal(rdps__contacts_decode(buf, (size_t)len, &back), RDPS_EBADFRAME);
    m.qpn = 5;
    m.count = 17;
    assert_true(rdps__contacts_encode(&m, buf, sizeof(buf)) < 0);
    const uint8_t junk[] = {0xff, 0xff, 0xff};
    assert_int_equal(rdps__contacts_decode(junk, sizeof(junk), &back), RDPS_EBADFRAME);
    assert_int_equal(rdps__contacts_decode(buf, 0, &back), RDPS_EBADFRAME); /* no sender */
}

static void test_seed_parser(void **state)
{
    (void)state;
    struct rdps_seed s[RDPS_MAX_SEEDS];
    assert_int_equal(rdps__seeds_parse(NULL, s, RDPS_MAX_SEEDS), 0);
    assert_int_equal(rdps__seeds_parse("", s, RDPS_MAX_SEEDS), 0);
    assert_int_equal(rdps__seeds_parse(" 169.254.77.1:7472 , 10.0.0.2", s, RDPS_MAX_SEEDS), 2);
    assert_int_equal(s[0].ipv4, 0xa9fe4d01u);
    assert_int_equal(s[0].port, 7472);
    assert_int_equal(s[1].ipv4, 0x0a000002u);
    assert_int_equal(s[1].port, 0);
    assert_int_equal(rdps__seeds_parse("10.0.0.1,", s, RDPS_MAX_SEEDS), 1);
    assert_int_equal(rdps__seeds_parse("10.0.0.1,,10.0.0.2", s, RDPS_MAX_SEEDS), RDPS_EINVAL);
    assert_int_equal(rdps__seeds_parse("host.example", s, RDPS_MAX_SEEDS), RDPS_EINVAL);
    assert_int_equal(rdps__seeds_parse("10.0.0.1:70000", s, RDPS_MAX_SEEDS), RDPS_EINVAL);
    assert_int_equal(rdps__seeds_parse("10.0.0.1:", s, RDPS_MAX_SEEDS), RDPS_EINVAL);
    char many[512] = "";
    for (int i = 0; i < 17; i++)
        snprintf(many + strlen(many), sizeof(many) - strlen(many), "10.0.0.%d,", i + 1);
    assert_int_equal(rdps__seeds_parse(many, s, RDPS_MAX_SEEDS), RDPS_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_direct_contact_lifetime, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forged_list_dropped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_host_and_table_caps, setup, teardown),
        cmocka_unit_test(test_many_qps_and_gids_cannot_shut_newcomers_out),
        cmocka_unit_test(test_unconfirmed_and_stale_go_first),
        cmocka_unit_test_setup_teardown(test_probes_are_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flood_of_named_peers_is_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_seeds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lists_rotate_through_contacts, setup, teardown),
        cmocka_unit_test(test_codec),
        cmocka_unit_test(test_seed_parser),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
