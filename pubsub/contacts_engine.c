/* SPDX-License-Identifier: BSD-2-Clause */
/* contacts_engine.c - sans-IO unicast discovery: contacts keyed by source, capped per host and in
 * all, probes of named peers bounded, peer lists every interval (model in contacts_engine.h). */
#include "contacts_engine.h"

#include <stdlib.h>
#include <string.h>

#include "rdps_error.h"

#define LIVENESS_INTERVALS 3

void rdps__contacts_config_default(struct rdps_contacts_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->max_contacts = 256;
    cfg->per_host = 16;
    cfg->max_probes = 16;
    cfg->probes_per_interval = 8;
    cfg->per_introducer = 8;
    cfg->probe_rounds = 3;
    cfg->interval_ms = 1000;
    cfg->min_interval_ms = 10;
    cfg->max_interval_ms = 60000;
    cfg->hash_seed = 0xc0ffee5eedull;
}

int rdps__contacts_init(struct rdps_contacts *c, const struct rdps_contacts_config *cfg)
{
    memset(c, 0, sizeof(*c));
    if (cfg->send == NULL || cfg->max_contacts == 0 || cfg->max_contacts > (1u << 20) ||
        cfg->per_host == 0 || cfg->max_probes > cfg->max_contacts || cfg->probe_rounds == 0 ||
        cfg->probe_rounds > 255 || cfg->interval_ms == 0 || cfg->min_interval_ms == 0 ||
        cfg->max_interval_ms < cfg->min_interval_ms || cfg->self_qpn == 0)
        return rdps__set_err(RDPS_EINVAL, "contacts: invalid configuration");
    c->cfg = *cfg;
    c->capacity = cfg->max_contacts + RDPS_MAX_SEEDS;
    uint32_t slots = 2;
    while (slots < 2 * c->capacity)
        slots <<= 1;
    c->index_mask = slots - 1;
    c->entries = calloc(c->capacity, sizeof(*c->entries));
    c->index = calloc(slots, sizeof(*c->index));
    c->tally = calloc(slots, sizeof(*c->tally));
    if (c->entries == NULL || c->index == NULL || c->tally == NULL) {
        free(c->entries);
        free(c->index);
        free(c->tally);
        memset(c, 0, sizeof(*c));
        return rdps__set_err(RDPS_ENOMEM, "contacts: %u-entry table", cfg->max_contacts);
    }
    c->next_round_ns = UINT64_MAX;
    return 0;
}

static void notify(struct rdps_contacts *c, struct rdps_contact *e, bool added)
{
    if (c->cfg.on_change != NULL)
        c->cfg.on_change(c->cfg.user, e, added);
}

/* ---- the index: open addressing, linear probing, backward-shift deletion ---- */

static uint32_t source_hash(const struct rdps_contacts *c, const struct rdps_source *src)
{
    return (uint32_t)(rdps__source_hash(src, c->cfg.hash_seed) >> 32);
}

static int32_t lookup(const struct rdps_contacts *c, const struct rdps_source *src, uint32_t hash)
{
    for (uint32_t s = hash & c->index_mask;; s = (s + 1) & c->index_mask) {
        uint32_t v = c->index[s];
        if (v == 0)
            return -1;
        const struct rdps_contact *e = &c->entries[v - 1];
        if (e->hash == hash && rdps__source_equal(&e->source, src))
            return (int32_t)(v - 1);
    }
}

static void index_insert(struct rdps_contacts *c, uint32_t i)
{
    uint32_t s = c->entries[i].hash & c->index_mask;
    while (c->index[s] != 0)
        s = (s + 1) & c->index_mask;
    c->index[s] = i + 1;
}

static void index_remove(struct rdps_contacts *c, uint32_t i)
{
    uint32_t s = c->entries[i].hash & c->index_mask;
    while (c->index[s] != i + 1)
        s = (s + 1) & c->index_mask;
    for (uint32_t j = (s + 1) & c->index_mask; c->index[j] != 0; j = (j + 1) & c->index_mask) {
        uint32_t home = c->entries[c->index[j] - 1].hash & c->index_mask;
        if (((j - home) & c->index_mask) >= ((j - s) & c->index_mask)) {
            c->index[s] = c->index[j];
            s = j;
        }
    }
    c->index[s] = 0;
}

/* ---- entries ---- */

static uint32_t clamp_interval(const struct rdps_contacts *c, uint32_t ms)
{
    if (ms < c->cfg.min_interval_ms)
        return c->cfg.min_interval_ms;
    return ms > c->cfg.max_interval_ms ? c->cfg.max_interval_ms : ms;
}

static bool is_self(const struct rdps_contacts *c, const struct rdps_source *src)
{
    if (src->qpn != c->cfg.self_qpn)
        return false;
    return src->has_gid ? memcmp(src->gid, c->cfg.self_gid, 16) == 0
                        : src->lid == c->cfg.self_lid && c->cfg.self_lid != 0;
}

/* A free entry for `src` (kind set by the caller), indexed; -1 when the table has no room. */
static int32_t entry_new(struct rdps_contacts *c, const struct rdps_source *src, uint32_t hash,
                         enum rdps_contact_kind kind)
{
    for (uint32_t i = 0; i < c->capacity; i++) {
        struct rdps_contact *e = &c->entries[i];
        if (e->kind != RDPS_CONTACT_FREE)
            continue;
        memset(e, 0, sizeof(*e));
        e->source = *src;
        e->hash = hash;
        e->kind = (uint8_t)kind;
        e->interval_ms = c->cfg.interval_ms;
        index_insert(c, i);
        if (kind != RDPS_CONTACT_SEED)
            c->used++;
        if (kind == RDPS_CONTACT_PROBE)
            c->probes++;
        return (int32_t)i;
    }
    return -1;
}

static void entry_free(struct rdps_contacts *c, struct rdps_contact *e)
{
    notify(c, e, false);
    index_remove(c, (uint32_t)(e - c->entries));
    if (e->kind != RDPS_CONTACT_SEED)
        c->used--;
    if (e->kind == RDPS_CONTACT_PROBE)
        c->probes--;
    memset(e, 0, sizeof(*e));
}

/* Whether the host of `src` may take one more DIRECT or PROBE contact. */
static bool host_has_room(const struct rdps_contacts *c, const struct rdps_source *src)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < c->capacity; i++) {
        const struct rdps_contact *e = &c->entries[i];
        if ((e->kind == RDPS_CONTACT_DIRECT || e->kind == RDPS_CONTACT_PROBE) &&
            rdps__source_same_host(&e->source, src) && ++n >= c->cfg.per_host)
            return false;
    }
    return true;
}

/* ---- making room for a peer that speaks for itself (model: who is displaced) ---- */

static uint64_t last_heard(const struct rdps_contact *e)
{
    return e->deadline_ns - (uint64_t)e->interval_ms * 1000000ull * LIVENESS_INTERVALS;
}

/* A DIRECT contact that missed its last list: not heard within one of its intervals. */
static bool stale(const struct rdps_contact *e, uint64_t now_ns)
{
    return e->kind == RDPS_CONTACT_DIRECT &&
           last_heard(e) + (uint64_t)e->interval_ms * 1000000ull < now_ns;
}

/* Counts the contacts of every host (c->tally, open addressing by host); returns the tally of the
 * host holding the most, its least recently heard DIRECT in `oldest` (-1: it has none). */
static const struct rdps_contacts_tally *
tally_hosts(struct rdps_contacts *c, const struct rdps_source *newcomer, uint32_t *newcomer_count)
{
    memset(c->tally, 0, (size_t)(c->index_mask + 1) * sizeof(*c->tally));
    const struct rdps_contacts_tally *heaviest = NULL;
    struct rdps_source mine = rdps__source_host(newcomer);
    *newcomer_count = 0;
    for (uint32_t i = 0; i < c->capacity; i++) {
        const struct rdps_contact *e = &c->entries[i];
        if (e->kind != RDPS_CONTACT_DIRECT && e->kind != RDPS_CONTACT_PROBE)
            continue;
        struct rdps_source host = rdps__source_host(&e->source);
        uint32_t s = (uint32_t)(rdps__source_hash(&host, c->cfg.hash_seed) >> 32) & c->index_mask;
        while (c->tally[s].count != 0 && !rdps__source_equal(&c->tally[s].host, &host))
            s = (s + 1) & c->index_mask;
        struct rdps_contacts_tally *t = &c->tally[s];
        if (t->count++ == 0) {
            t->host = host;
            t->oldest = -1;
        }
        if (e->kind == RDPS_CONTACT_DIRECT && (t->oldest < 0 || last_heard(e) < t->oldest_heard)) {
            t->oldest = (int32_t)i;
            t->oldest_heard = last_heard(e);
        }
        if (rdps__source_equal(&host, &mine))
            *newcomer_count = t->count;
        if (heaviest == NULL || t->count > heaviest->count)
            heaviest = t;
    }
    return heaviest;
}

/*
 * Whom a new DIRECT contact from `src` displaces: only its own host's entries when `own_host`
 * (its host is at per_host), any host's when the table is full. -1: nobody, it is refused.
 */
static int32_t displace_for(struct rdps_contacts *c, const struct rdps_source *src, bool own_host,
                            uint64_t now_ns)
{
    int32_t probe = -1, old = -1;
    for (uint32_t i = 0; i < c->capacity; i++) {
        const struct rdps_contact *e = &c->entries[i];
        if ((e->kind != RDPS_CONTACT_DIRECT && e->kind != RDPS_CONTACT_PROBE) ||
            (own_host && !rdps__source_same_host(&e->source, src)))
            continue;
        if (e->kind == RDPS_CONTACT_PROBE) {
            if (probe < 0 || e->probes_left < c->entries[probe].probes_left)
                probe = (int32_t)i; /* the one probed longest: least likely to answer */
        } else if (stale(e, now_ns) && (old < 0 || last_heard(e) < last_heard(&c->entries[old]))) {
            old = (int32_t)i;
        }
    }
    if (probe >= 0 || old >= 0 || own_host)
        return probe >= 0 ? probe : old;
    uint32_t mine;
    const struct rdps_contacts_tally *heaviest = tally_hosts(c, src, &mine);
    if (heaviest != NULL && heaviest->count > mine + 1)
        return heaviest->oldest;
    return -1;
}

/* Makes room for a new DIRECT contact from `src`: true when it may be added. */
static bool room_for_direct(struct rdps_contacts *c, const struct rdps_source *src, uint64_t now_ns)
{
    if (!host_has_room(c, src)) {
        int32_t victim = displace_for(c, src, true, now_ns);
        if (victim < 0) {
            c->counters.refused_host++;
            return false;
        }
        c->counters.displaced++;
        entry_free(c, &c->entries[victim]);
    }
    if (c->used >= c->cfg.max_contacts) {
        int32_t victim = displace_for(c, src, false, now_ns);
        if (victim < 0) {
            c->counters.refused_full++;
            return false;
        }
        c->counters.displaced++;
        entry_free(c, &c->entries[victim]);
    }
    return true;
}

/* Whether a contact goes into the lists we send (someone we heard from its own address). */
static bool vouched(const struct rdps_contact *e)
{
    return e->kind == RDPS_CONTACT_DIRECT || (e->kind == RDPS_CONTACT_SEED && e->heard);
}

/* Our list for `to`: up to RDPS_CONTACTS_PER_MESSAGE vouched contacts from entry `start` on. */
static uint32_t fill_list(const struct rdps_contacts *c, uint32_t start,
                          const struct rdps_contact *to, bool leaving, struct rdps_contacts_msg *m)
{
    memset(m, 0, sizeof(*m));
    memcpy(m->gid, c->cfg.self_gid, 16);
    m->lid = c->cfg.self_lid;
    m->qpn = c->cfg.self_qpn;
    m->host = c->cfg.self_host;
    m->cm_port = c->cfg.self_cm_port;
    m->interval_ms = c->cfg.interval_ms;
    m->leaving = leaving;
    uint32_t k = 0;
    for (; k < c->capacity && m->count < RDPS_CONTACTS_PER_MESSAGE && !leaving; k++) {
        const struct rdps_contact *e = &c->entries[(start + k) % c->capacity];
        if (e != to && vouched(e))
            m->peers[m->count++] = e->source;
    }
    return (start + k) % c->capacity;
}

static void send_list(struct rdps_contacts *c, struct rdps_contact *to, uint32_t start,
                      bool leaving)
{
    struct rdps_contacts_msg m;
    fill_list(c, start, to, leaving, &m);
    if (c->cfg.send(c->cfg.user, to, &m) == 0)
        c->counters.lists_sent++;
    else
        c->counters.send_failures++;
}

/* A contact came (or turned SEED or DIRECT): it hears from us at once, rounds go on. */
static void welcome(struct rdps_contacts *c, struct rdps_contact *e, uint64_t now_ns)
{
    notify(c, e, true);
    send_list(c, e, c->cursor, false);
    if (e->kind == RDPS_CONTACT_PROBE && e->probes_left > 0)
        e->probes_left--;
    if (c->next_round_ns == UINT64_MAX)
        c->next_round_ns = now_ns + (uint64_t)c->cfg.interval_ms * 1000000ull;
}

/* ---- seeds ---- */

static struct rdps_contact *seed_entry(struct rdps_contacts *c, uint16_t seed)
{
    for (uint32_t i = 0; i < c->capacity; i++)
        if (c->entries[i].kind == RDPS_CONTACT_SEED && c->entries[i].seed == seed)
            return &c->entries[i];
    return NULL;
}

const struct rdps_contact *rdps__contacts_seed(const struct rdps_contacts *c, uint16_t seed)
{
    return seed_entry((struct rdps_contacts *)c, seed);
}

void rdps__contacts_seed_clear(struct rdps_contacts *c, uint16_t seed)
{
    struct rdps_contact *e = seed_entry(c, seed);
    if (e != NULL)
        entry_free(c, e);
}

int rdps__contacts_seed_set(struct rdps_contacts *c, uint16_t seed, const struct rdps_source *src,
                            uint64_t now_ns)
{
    if (seed >= RDPS_MAX_SEEDS || is_self(c, src))
        return RDPS_EINVAL;
    struct rdps_contact *old = seed_entry(c, seed);
    if (old != NULL && rdps__source_equal(&old->source, src))
        return 0;
    if (old != NULL)
        entry_free(c, old);
    uint32_t hash = source_hash(c, src);
    int32_t i = lookup(c, src, hash);
    if (i >= 0) {
        struct rdps_contact *e = &c->entries[i];
        if (e->kind == RDPS_CONTACT_SEED)
            return 0; /* another seed item names the same peer */
        bool heard = e->kind == RDPS_CONTACT_DIRECT;
        uint64_t deadline = e->deadline_ns;
        entry_free(c, e);
        i = entry_new(c, src, hash, RDPS_CONTACT_SEED);
        c->entries[i].heard = heard;
        c->entries[i].deadline_ns = heard ? deadline : 0;
    } else {
        i = entry_new(c, src, hash, RDPS_CONTACT_SEED); /* seeds always have room */
    }
    c->entries[i].seed = seed;
    welcome(c, &c->entries[i], now_ns);
    return 0;
}

/* ---- lists in ---- */

/* A peer another contact (host `introducer`) named: probed if every budget allows. */
static void consider_named(struct rdps_contacts *c, const struct rdps_source *peer,
                           const struct rdps_source *introducer, uint64_t now_ns)
{
    if (is_self(c, peer))
        return;
    uint32_t hash = source_hash(c, peer);
    if (lookup(c, peer, hash) >= 0)
        return;
    if (c->probes >= c->cfg.max_probes || c->probes_this_round >= c->cfg.probes_per_interval) {
        c->counters.refused_probe++;
        return;
    }
    uint32_t by_introducer = 0;
    for (uint32_t i = 0; i < c->capacity; i++)
        if (c->entries[i].kind == RDPS_CONTACT_PROBE &&
            rdps__source_equal(&c->entries[i].introducer, introducer))
            by_introducer++;
    if (by_introducer >= c->cfg.per_introducer) {
        c->counters.refused_probe++;
        return;
    }
    if (c->used >= c->cfg.max_contacts) {
        c->counters.refused_full++;
        return;
    }
    if (!host_has_room(c, peer)) {
        c->counters.refused_host++;
        return;
    }
    int32_t i = entry_new(c, peer, hash, RDPS_CONTACT_PROBE);
    if (i < 0) {
        c->counters.refused_full++;
        return;
    }
    struct rdps_contact *e = &c->entries[i];
    e->probes_left = (uint8_t)c->cfg.probe_rounds;
    e->introducer = *introducer;
    c->probes_this_round++;
    c->counters.added_probes++;
    welcome(c, e, now_ns);
}

void rdps__contacts_on_list(struct rdps_contacts *c, const struct rdps_source *src,
                            const struct rdps_contacts_msg *m, uint64_t now_ns)
{
    c->counters.lists_in++;
    if (src == NULL || !rdps__contacts_from_source(m, src) || is_self(c, src)) {
        c->counters.forged++;
        return;
    }
    uint32_t hash = source_hash(c, src);
    int32_t i = lookup(c, src, hash);
    struct rdps_contact *e = i >= 0 ? &c->entries[i] : NULL;
    if (m->leaving) {
        if (e != NULL && e->kind == RDPS_CONTACT_SEED) {
            e->heard = false;
        } else if (e != NULL) {
            c->counters.left++;
            entry_free(c, e);
        }
        return;
    }
    bool fresh = false;
    if (e == NULL) {
        if (!room_for_direct(c, src, now_ns))
            return;
        i = entry_new(c, src, hash, RDPS_CONTACT_DIRECT);
        e = &c->entries[i];
        fresh = true;
    } else if (e->kind == RDPS_CONTACT_PROBE) {
        notify(c, e, false); /* a PROBE had only lists; a DIRECT gets announcements too */
        e->kind = RDPS_CONTACT_DIRECT;
        c->probes--;
        fresh = true;
    }
    e->heard = true;
    e->interval_ms = clamp_interval(c, m->interval_ms);
    e->deadline_ns = now_ns + (uint64_t)e->interval_ms * 1000000ull * LIVENESS_INTERVALS;
    if (fresh) {
        c->counters.added_direct++;
        welcome(c, e, now_ns);
    }
    struct rdps_source introducer = rdps__source_host(src);
    for (uint32_t k = 0; k < m->count; k++)
        consider_named(c, &m->peers[k], &introducer, now_ns);
}

/* ---- time ---- */

uint64_t rdps__contacts_next_deadline(const struct rdps_contacts *c)
{
    uint64_t next = c->next_round_ns;
    for (uint32_t i = 0; i < c->capacity; i++) {
        const struct rdps_contact *e = &c->entries[i];
        bool timed = e->kind == RDPS_CONTACT_DIRECT || (e->kind == RDPS_CONTACT_SEED && e->heard);
        if (timed && e->deadline_ns < next)
            next = e->deadline_ns;
    }
    return next;
}

uint64_t rdps__contacts_tick(struct rdps_contacts *c, uint64_t now_ns)
{
    for (uint32_t i = 0; i < c->capacity; i++) {
        struct rdps_contact *e = &c->entries[i];
        if (e->kind == RDPS_CONTACT_DIRECT && e->deadline_ns <= now_ns) {
            c->counters.expired++;
            entry_free(c, e);
        } else if (e->kind == RDPS_CONTACT_SEED && e->heard && e->deadline_ns <= now_ns) {
            e->heard = false;
        }
    }
    if (now_ns >= c->next_round_ns) {
        uint32_t start = c->cursor, targets = 0;
        for (uint32_t i = 0; i < c->capacity; i++) {
            struct rdps_contact *e = &c->entries[i];
            if (e->kind == RDPS_CONTACT_PROBE && e->probes_left == 0) {
                c->counters.probes_unanswered++;
                entry_free(c, e);
                continue;
            }
            if (e->kind == RDPS_CONTACT_FREE)
                continue;
            targets++;
            struct rdps_contacts_msg m;
            uint32_t next = fill_list(c, start, e, false, &m);
            if (c->cfg.send(c->cfg.user, e, &m) == 0)
                c->counters.lists_sent++;
            else
                c->counters.send_failures++;
            if (e->kind == RDPS_CONTACT_PROBE)
                e->probes_left--;
            c->cursor = next;
        }
        c->probes_this_round = 0;
        c->next_round_ns =
            targets > 0 ? now_ns + (uint64_t)c->cfg.interval_ms * 1000000ull : UINT64_MAX;
    }
    return rdps__contacts_next_deadline(c);
}

void rdps__contacts_leave(struct rdps_contacts *c)
{
    for (uint32_t i = 0; i < c->capacity; i++) {
        struct rdps_contact *e = &c->entries[i];
        if (e->kind == RDPS_CONTACT_SEED || e->kind == RDPS_CONTACT_DIRECT)
            send_list(c, e, 0, true);
    }
}

void rdps__contacts_fini(struct rdps_contacts *c)
{
    if (c->entries != NULL)
        for (uint32_t i = 0; i < c->capacity; i++)
            if (c->entries[i].kind != RDPS_CONTACT_FREE)
                notify(c, &c->entries[i], false);
    free(c->entries);
    free(c->index);
    free(c->tally);
    memset(c, 0, sizeof(*c));
}

/* ---- queries ---- */

void rdps__contacts_for_each_target(const struct rdps_contacts *c,
                                    void (*fn)(void *user, const struct rdps_contact *contact),
                                    void *user)
{
    for (uint32_t i = 0; i < c->capacity; i++) {
        const struct rdps_contact *e = &c->entries[i];
        if (e->kind == RDPS_CONTACT_SEED || e->kind == RDPS_CONTACT_DIRECT)
            fn(user, e);
    }
}

uint32_t rdps__contacts_targets(const struct rdps_contacts *c)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < c->capacity; i++)
        n += c->entries[i].kind == RDPS_CONTACT_SEED || c->entries[i].kind == RDPS_CONTACT_DIRECT;
    return n;
}

uint32_t rdps__contacts_used(const struct rdps_contacts *c)
{
    return c->used;
}

uint32_t rdps__contacts_probes(const struct rdps_contacts *c)
{
    return c->probes;
}

const struct rdps_contact *rdps__contacts_find(const struct rdps_contacts *c,
                                               const struct rdps_source *src)
{
    int32_t i = lookup(c, src, source_hash(c, src));
    return i >= 0 ? &c->entries[i] : NULL;
}

const struct rdps_contacts_counters *rdps__contacts_counters(const struct rdps_contacts *c)
{
    return &c->counters;
}

static int fail(const char **why, const char *reason)
{
    if (why != NULL)
        *why = reason;
    return -1;
}

int rdps__contacts_check(const struct rdps_contacts *c, const char **why)
{
    uint32_t used = 0, probes = 0, seeds = 0, indexed = 0;
    for (uint32_t i = 0; i < c->capacity; i++) {
        const struct rdps_contact *e = &c->entries[i];
        if (e->kind == RDPS_CONTACT_FREE)
            continue;
        if (e->kind > RDPS_CONTACT_PROBE)
            return fail(why, "unknown kind");
        if (lookup(c, &e->source, e->hash) != (int32_t)i || e->hash != source_hash(c, &e->source))
            return fail(why, "index does not find the contact");
        if (is_self(c, &e->source))
            return fail(why, "our own QP is a contact");
        seeds += e->kind == RDPS_CONTACT_SEED;
        used += e->kind != RDPS_CONTACT_SEED;
        probes += e->kind == RDPS_CONTACT_PROBE;
        if (e->kind == RDPS_CONTACT_PROBE && e->probes_left > c->cfg.probe_rounds)
            return fail(why, "probe rounds");
        if (e->kind != RDPS_CONTACT_SEED &&
            (e->interval_ms < c->cfg.min_interval_ms || e->interval_ms > c->cfg.max_interval_ms) &&
            e->interval_ms != c->cfg.interval_ms)
            return fail(why, "interval outside the clamp range");
    }
    for (uint32_t s = 0; s <= c->index_mask; s++)
        indexed += c->index[s] != 0;
    if (used != c->used || probes != c->probes || indexed != used + seeds)
        return fail(why, "counts out of step");
    if (used > c->cfg.max_contacts || probes > c->cfg.max_probes || seeds > RDPS_MAX_SEEDS)
        return fail(why, "above a cap");
    return 0;
}
