/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rx_streams.c - the receive engine's stream table: hosts, sources, streams, quotas and lookup
 * (model: rdps_rx_streams.h). */
#include "rdps_rx_streams.h"

#include <stdlib.h>
#include <string.h>

#include "rdps_error.h"

#define MAX_TABLE_ENTRIES (1u << 24) /* keeps every index far from int32_t limits */

int rdps__rx_streams_init(struct rdps_rx_streams *t, const struct rdps_rx_streams_config *cfg)
{
    memset(t, 0, sizeof(*t));
    if (cfg->max_sessions == 0 || cfg->max_sessions > MAX_TABLE_ENTRIES)
        return rdps__set_err(RDPS_EINVAL, "rx_streams_init: max_sessions %u not in 1..%u",
                             cfg->max_sessions, MAX_TABLE_ENTRIES);
    if (cfg->max_gap_ranges == 0 || cfg->max_gap_ranges > 1024)
        return rdps__set_err(RDPS_EINVAL, "rx_streams_init: max_gap_ranges %u not in 1..1024",
                             cfg->max_gap_ranges);
    t->cfg = *cfg;
    t->host_max_streams =
        cfg->max_streams_per_host == 0 || cfg->max_streams_per_host > cfg->max_sessions
            ? cfg->max_sessions
            : cfg->max_streams_per_host;
    uint32_t slots = 2;
    while (slots < 2 * cfg->max_sessions)
        slots <<= 1;
    t->hash_mask = slots - 1;
    t->src_mask = slots / 2 - 1;
    t->hash_slots = malloc(slots * sizeof(*t->hash_slots));
    t->src_buckets = malloc((slots / 2) * sizeof(*t->src_buckets));
    t->host_buckets = malloc((slots / 2) * sizeof(*t->host_buckets));
    t->streams = calloc(cfg->max_sessions, sizeof(*t->streams));
    t->sources = calloc(cfg->max_sessions, sizeof(*t->sources));
    t->hosts = calloc(cfg->max_sessions, sizeof(*t->hosts));
    t->gap_store = calloc((size_t)cfg->max_sessions * cfg->max_gap_ranges, sizeof(*t->gap_store));
    if (t->hash_slots == NULL || t->src_buckets == NULL || t->host_buckets == NULL ||
        t->streams == NULL || t->sources == NULL || t->hosts == NULL || t->gap_store == NULL) {
        rdps__rx_streams_fini(t);
        return rdps__set_err(RDPS_ENOMEM, "rx_streams_init: cannot allocate %u streams",
                             cfg->max_sessions);
    }
    for (uint32_t i = 0; i < slots; i++)
        t->hash_slots[i] = RDPS_RX_NONE;
    for (uint32_t i = 0; i < slots / 2; i++)
        t->src_buckets[i] = t->host_buckets[i] = RDPS_RX_NONE;
    for (uint32_t i = 0; i < cfg->max_sessions; i++) {
        int32_t next = i + 1 < cfg->max_sessions ? (int32_t)(i + 1) : RDPS_RX_NONE;
        t->streams[i].lru_next = next;
        t->sources[i].hash_next = next;
        t->hosts[i].hash_next = next;
    }
    t->stream_free = t->src_free = t->host_free = 0;
    t->lru_head = t->lru_tail = RDPS_RX_NONE;
    return 0;
}

void rdps__rx_streams_fini(struct rdps_rx_streams *t)
{
    if (t == NULL)
        return;
    free(t->gap_store);
    free(t->hosts);
    free(t->sources);
    free(t->streams);
    free(t->host_buckets);
    free(t->src_buckets);
    free(t->hash_slots);
    memset(t, 0, sizeof(*t));
}

/* ---- hosts and sources ----------------------------------------------------------------------- */

/* Seeds differ from the stream table's and each other's: the tables do not collide together. */
static uint32_t source_bucket(const struct rdps_rx_streams *t, const struct rdps_source *id)
{
    return (uint32_t)rdps__source_hash(id, ~t->cfg.hash_seed) & t->src_mask;
}

static uint32_t host_bucket(const struct rdps_rx_streams *t, const struct rdps_source *host_id)
{
    return (uint32_t)rdps__source_hash(host_id, t->cfg.hash_seed ^ 0x486f7374ull) & t->src_mask;
}

static int32_t source_find(const struct rdps_rx_streams *t, const struct rdps_source *id)
{
    for (int32_t i = t->src_buckets[source_bucket(t, id)]; i != RDPS_RX_NONE;
         i = t->sources[i].hash_next)
        if (rdps__source_equal(&t->sources[i].id, id))
            return i;
    return RDPS_RX_NONE;
}

/* The host of source `id`, RDPS_RX_NONE if none of its sources has a stream. */
static int32_t host_find(const struct rdps_rx_streams *t, const struct rdps_source *id)
{
    struct rdps_source key = rdps__source_host(id);
    for (int32_t i = t->host_buckets[host_bucket(t, &key)]; i != RDPS_RX_NONE;
         i = t->hosts[i].hash_next)
        if (rdps__source_equal(&t->hosts[i].id, &key))
            return i;
    return RDPS_RX_NONE;
}

/* A host's streams changed: its parking share per stream follows. */
static void host_streams_changed(struct rdps_rx_streams *t, struct rdps_rx_host *host)
{
    uint32_t n = host->streams ? host->streams : 1;
    host->park_share = t->cfg.park_per_host / n;
    host->chunk_share = t->cfg.chunks_per_host / n;
}

/* Called with free entries available: hosts never outnumber sources, nor sources streams. */
static int32_t source_create(struct rdps_rx_streams *t, const struct rdps_source *id)
{
    int32_t h = host_find(t, id);
    if (h == RDPS_RX_NONE) {
        h = t->host_free;
        struct rdps_rx_host *host = &t->hosts[h];
        t->host_free = host->hash_next;
        memset(host, 0, sizeof(*host));
        host->id = rdps__source_host(id);
        host->src_head = RDPS_RX_NONE;
        uint32_t b = host_bucket(t, &host->id);
        host->hash_next = t->host_buckets[b];
        t->host_buckets[b] = h;
    }
    int32_t i = t->src_free;
    struct rdps_rx_source *e = &t->sources[i];
    t->src_free = e->hash_next;
    memset(e, 0, sizeof(*e));
    e->id = *id;
    e->host = h;
    e->host_prev = RDPS_RX_NONE;
    e->host_next = t->hosts[h].src_head;
    if (e->host_next != RDPS_RX_NONE)
        t->sources[e->host_next].host_prev = i;
    t->hosts[h].src_head = i;
    uint32_t b = source_bucket(t, id);
    e->hash_next = t->src_buckets[b];
    t->src_buckets[b] = i;
    return i;
}

static void host_remove(struct rdps_rx_streams *t, int32_t h)
{
    int32_t *link = &t->host_buckets[host_bucket(t, &t->hosts[h].id)];
    while (*link != h)
        link = &t->hosts[*link].hash_next;
    *link = t->hosts[h].hash_next;
    t->hosts[h].hash_next = t->host_free;
    t->host_free = h;
}

static void source_remove(struct rdps_rx_streams *t, int32_t i)
{
    struct rdps_rx_source *e = &t->sources[i];
    int32_t *link = &t->src_buckets[source_bucket(t, &e->id)];
    while (*link != i)
        link = &t->sources[*link].hash_next;
    *link = e->hash_next;
    if (e->host_prev != RDPS_RX_NONE)
        t->sources[e->host_prev].host_next = e->host_next;
    else
        t->hosts[e->host].src_head = e->host_next;
    if (e->host_next != RDPS_RX_NONE)
        t->sources[e->host_next].host_prev = e->host_prev;
    if (t->hosts[e->host].src_head == RDPS_RX_NONE)
        host_remove(t, e->host);
    e->hash_next = t->src_free;
    t->src_free = i;
}

/* ---- streams ------------------------------------------------------------------------------- */

static uint64_t hash_key(const struct rdps_rx_streams *t, const struct rdps_source *source,
                         uint32_t session_id)
{
    return rdps__source_hash(source,
                             t->cfg.hash_seed ^ ((uint64_t)session_id * 0x9E3779B97F4A7C15ull));
}

static void lru_unlink(struct rdps_rx_streams *t, int32_t si)
{
    struct rdps_rx_stream *s = &t->streams[si];
    if (s->lru_prev != RDPS_RX_NONE)
        t->streams[s->lru_prev].lru_next = s->lru_next;
    else
        t->lru_head = s->lru_next;
    if (s->lru_next != RDPS_RX_NONE)
        t->streams[s->lru_next].lru_prev = s->lru_prev;
    else
        t->lru_tail = s->lru_prev;
}

static void lru_push_front(struct rdps_rx_streams *t, int32_t si)
{
    struct rdps_rx_stream *s = &t->streams[si];
    s->lru_prev = RDPS_RX_NONE;
    s->lru_next = t->lru_head;
    if (t->lru_head != RDPS_RX_NONE)
        t->streams[t->lru_head].lru_prev = si;
    else
        t->lru_tail = si;
    t->lru_head = si;
}

static uint32_t hash_find_slot(const struct rdps_rx_streams *t, const struct rdps_source *source,
                               uint32_t session_id)
{
    uint32_t i = (uint32_t)hash_key(t, source, session_id) & t->hash_mask;
    for (;;) {
        int32_t si = t->hash_slots[i];
        if (si == RDPS_RX_NONE || (t->streams[si].id.session_id == session_id &&
                                   rdps__source_equal(&t->streams[si].id.source, source)))
            return i;
        i = (i + 1) & t->hash_mask;
    }
}

/* Backward-shift deletion keeps linear probing correct without tombstones. */
static void hash_remove(struct rdps_rx_streams *t, uint32_t slot)
{
    uint32_t hole = slot;
    uint32_t i = slot;
    for (;;) {
        i = (i + 1) & t->hash_mask;
        int32_t si = t->hash_slots[i];
        if (si == RDPS_RX_NONE)
            break;
        const struct rdps_rx_ident *id = &t->streams[si].id;
        uint32_t home = (uint32_t)hash_key(t, &id->source, id->session_id) & t->hash_mask;
        /* Move entry i into the hole unless its home lies cyclically in (hole, i]. */
        if (((i - home) & t->hash_mask) >= ((i - hole) & t->hash_mask)) {
            t->hash_slots[hole] = si;
            hole = i;
        }
    }
    t->hash_slots[hole] = RDPS_RX_NONE;
}

void rdps__rx_streams_remove(struct rdps_rx_streams *t, int32_t si)
{
    struct rdps_rx_stream *s = &t->streams[si];
    hash_remove(t, hash_find_slot(t, &s->id.source, s->id.session_id));
    lru_unlink(t, si);
    t->hosts[s->host].streams--;
    host_streams_changed(t, &t->hosts[s->host]);
    if (--t->sources[s->src].streams == 0)
        source_remove(t, s->src);
    s->lru_next = t->stream_free;
    t->stream_free = si;
}

/*
 * The least recently active stream of the heaviest source (most streams) of host `host`, or with
 * host == RDPS_RX_NONE of the heaviest source of the host holding the most streams. Walks the LRU
 * list from the tail (at most max_sessions entries), only when a table or quota is full.
 */
static int32_t stream_victim(const struct rdps_rx_streams *t, int32_t host)
{
    int32_t best = RDPS_RX_NONE;
    uint64_t best_weight = 0;
    for (int32_t si = t->lru_tail; si != RDPS_RX_NONE; si = t->streams[si].lru_prev) {
        const struct rdps_rx_stream *s = &t->streams[si];
        if (host != RDPS_RX_NONE && s->host != host)
            continue;
        uint64_t weight = (uint64_t)t->hosts[s->host].streams << 32 | t->sources[s->src].streams;
        if (weight > best_weight) {
            best_weight = weight;
            best = si;
        }
    }
    return best;
}

int32_t rdps__rx_streams_victim(struct rdps_rx_streams *t, const struct rdps_source *source)
{
    int32_t host = host_find(t, source);
    if (host != RDPS_RX_NONE && t->hosts[host].streams >= t->host_max_streams) {
        t->cfg.counters->sessions_source_quota++;
        return stream_victim(t, host);
    }
    if (t->stream_free == RDPS_RX_NONE) {
        t->cfg.counters->sessions_evicted++;
        return stream_victim(t, RDPS_RX_NONE);
    }
    return RDPS_RX_NONE;
}

int32_t rdps__rx_streams_create(struct rdps_rx_streams *t, const struct rdps_source *source,
                                const struct rdps_frame_header *h, bool accepted, bool reliable,
                                bool from_oldest, uint64_t now_ns)
{
    int32_t src = source_find(t, source);
    if (src == RDPS_RX_NONE)
        src = source_create(t, source);
    uint32_t slot = hash_find_slot(t, source, h->session_id);
    int32_t si = t->stream_free;
    struct rdps_rx_stream *s = &t->streams[si];
    t->stream_free = s->lru_next;
    memset(s, 0, offsetof(struct rdps_rx_stream, track));
    s->id.source = *source;
    s->id.session_id = h->session_id;
    s->id.topic_id = h->topic_id;
    s->src = src;
    s->host = t->sources[src].host;
    s->last_active_ns = now_ns;
    s->topic_ok = accepted ? h->topic_id : 0;
    s->reliable = accepted && reliable;
    s->from_oldest = s->reliable && from_oldest;
    s->ord_next = h->ordinal;
    s->single.source = *source;
    s->single.session_id = h->session_id;
    s->single.topic_id = h->topic_id;
    s->single.frag_count = 1;
    /* A refused stream keeps 0: a nonzero version byte never matches it. */
    if (accepted)
        s->predict_w0 = RDPS_FRAME_VERSION | (uint64_t)RDPS_FRAME_DATA << 8 |
                        (uint64_t)(RDPS_FRAME_F_BEGIN | RDPS_FRAME_F_END) << 16 |
                        (uint64_t)h->session_id << 32;
    rdps__track_start(&s->track, h->seq, t->gap_store + (size_t)si * t->cfg.max_gap_ranges,
                      (uint16_t)t->cfg.max_gap_ranges);
    t->sources[src].streams++;
    t->hosts[s->host].streams++;
    host_streams_changed(t, &t->hosts[s->host]);
    t->hash_slots[slot] = si;
    lru_push_front(t, si);
    t->cfg.counters->sessions_created++;
    return si;
}

int32_t rdps__rx_streams_lookup(const struct rdps_rx_streams *t, const struct rdps_source *source,
                                uint32_t session_id)
{
    return t->hash_slots[hash_find_slot(t, source, session_id)];
}

int32_t rdps__rx_streams_find_slow(struct rdps_rx_streams *t, const struct rdps_source *source,
                                   uint32_t session_id, uint64_t now_ns)
{
    int32_t si = t->hash_slots[hash_find_slot(t, source, session_id)];
    if (si != RDPS_RX_NONE) {
        lru_unlink(t, si);
        lru_push_front(t, si);
        t->streams[si].last_active_ns = now_ns;
    }
    return si;
}

int32_t rdps__rx_streams_idle(struct rdps_rx_streams *t, uint64_t now_ns, uint64_t *next)
{
    uint64_t idle = t->cfg.idle_timeout_ns;
    if (idle == 0 || t->lru_tail == RDPS_RX_NONE)
        return RDPS_RX_NONE;
    uint64_t last = t->streams[t->lru_tail].last_active_ns;
    if (last + idle <= now_ns && last + idle >= idle) {
        t->cfg.counters->sessions_expired++;
        return t->lru_tail;
    }
    uint64_t deadline = last + idle >= last ? last + idle : UINT64_MAX;
    if (deadline < *next)
        *next = deadline;
    return RDPS_RX_NONE;
}

uint32_t rdps__rx_streams_count(const struct rdps_rx_streams *t)
{
    uint32_t n = 0;
    for (int32_t si = t->lru_head; si != RDPS_RX_NONE; si = t->streams[si].lru_next)
        n++;
    return n;
}

uint32_t rdps__rx_streams_source_count(const struct rdps_rx_streams *t)
{
    uint32_t n = 0;
    for (uint32_t b = 0; b <= t->src_mask; b++)
        for (int32_t i = t->src_buckets[b]; i != RDPS_RX_NONE; i = t->sources[i].hash_next)
            n++;
    return n;
}

uint32_t rdps__rx_streams_host_count(const struct rdps_rx_streams *t)
{
    uint32_t n = 0;
    for (uint32_t b = 0; b <= t->src_mask; b++)
        for (int32_t i = t->host_buckets[b]; i != RDPS_RX_NONE; i = t->hosts[i].hash_next)
            n++;
    return n;
}
