/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_reasm.c - receive side: source and stream tables, sequence window, single-datagram delivery
 * and the entry points (model: rdps_reasm.h; partial messages: rdps_reasm_partial.c; gap list:
 * rdps_reasm_gaps.c; reliable mode: rdps_rel_recv.c). About 770 lines of one concern: the tables
 * and the window every frame goes through, kept together so the hot path inlines. */
#include "rdps_reasm_internal.h"

#include <stdlib.h>
#include <string.h>

#include "rdps_endian.h"
#include "rdps_error.h"
#include "rdps_seq.h"

void rdps__reasm_config_default(struct rdps_reasm_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->max_sessions = 256;
    cfg->max_partials = 64;
    cfg->reasm_cap_bytes = 64u * 1024u * 1024u;
    cfg->chunk_bytes = 64u * 1024u;
    cfg->min_frag_payload = 256 - RDPS_FRAME_HEADER_LEN;
    cfg->max_streams_per_source = 64;
    cfg->max_partials_per_source = 16;
    cfg->max_bytes_per_source = 32u * 1024u * 1024u;
    cfg->partial_timeout_ns = 1000000000ull;
    cfg->reorder_allowance_ns = 2000000ull;
    cfg->max_gap_ranges = 32;
    rdps__frame_limits_default(&cfg->limits);
    cfg->rel.receivers = 1;
    cfg->rel.default_rtt_ns = 1000000ull;
    cfg->rel.nak_backoff_rtts = 4;
    cfg->rel.nak_retry_max_ns = 25000000ull;
    cfg->rel.nak_max_tries = 200; /* with 25 ms apart: the 5 s deadline decides */
    cfg->rel.loss_deadline_ns = 5000000000ull;
    cfg->rel.status_interval_ns = 100000000ull;
    cfg->rel.idle_ns = 5000000000ull;
    cfg->rel.join_wait_ns = 100000000ull;
}

static uint32_t clamp_quota(uint64_t quota, uint32_t cap)
{
    return quota == 0 || quota > cap ? cap : (uint32_t)quota;
}

int rdps__reasm_init(struct rdps_reasm *r, const struct rdps_reasm_config *cfg)
{
    memset(r, 0, sizeof(*r));
    if (cfg->deliver == NULL)
        return rdps__set_err(RDPS_EINVAL, "reasm_init: no deliver callback");
    if (cfg->max_sessions == 0 || cfg->max_sessions > MAX_TABLE_ENTRIES || cfg->max_partials == 0 ||
        cfg->max_partials > MAX_TABLE_ENTRIES)
        return rdps__set_err(RDPS_EINVAL,
                             "reasm_init: max_sessions %u / max_partials %u not in 1..%u",
                             cfg->max_sessions, cfg->max_partials, MAX_TABLE_ENTRIES);
    if (cfg->chunk_bytes < MIN_CHUNK || (cfg->chunk_bytes & (cfg->chunk_bytes - 1)) != 0)
        return rdps__set_err(RDPS_EINVAL, "reasm_init: chunk_bytes %u not a power of two >= %u",
                             cfg->chunk_bytes, MIN_CHUNK);
    if (cfg->reasm_cap_bytes < MIN_CHUNK ||
        cfg->reasm_cap_bytes / MIN_CHUNK > (size_t)MAX_TABLE_ENTRIES * 64)
        return rdps__set_err(RDPS_EINVAL, "reasm_init: reasm_cap_bytes %zu out of range",
                             cfg->reasm_cap_bytes);
    if (cfg->min_frag_payload == 0)
        return rdps__set_err(RDPS_EINVAL, "reasm_init: min_frag_payload is 0");
    if (cfg->max_gap_ranges == 0 || cfg->max_gap_ranges > 1024)
        return rdps__set_err(RDPS_EINVAL, "reasm_init: max_gap_ranges %u not in 1..1024",
                             cfg->max_gap_ranges);
    if (cfg->rel.enabled &&
        (cfg->rel.send == NULL || cfg->rel.nak_max_tries == 0 || cfg->rel.receivers == 0 ||
         cfg->rel.default_rtt_ns == 0 || cfg->rel.status_interval_ns == 0))
        return rdps__set_err(RDPS_EINVAL,
                             "reasm_init: reliable mode needs a send callback, nak_max_tries, "
                             "receivers, default_rtt_ns and status_interval_ns above 0");
    r->cfg = *cfg;

    uint32_t chunk = cfg->chunk_bytes;
    while (chunk > cfg->reasm_cap_bytes)
        chunk >>= 1;
    while ((1u << r->chunk_shift) < chunk)
        r->chunk_shift++;
    r->cfg.chunk_bytes = chunk;
    size_t chunks = cfg->reasm_cap_bytes >> r->chunk_shift;
    if (chunks > MAX_TABLE_ENTRIES)
        return rdps__set_err(RDPS_EINVAL, "reasm_init: %zu chunks of %u bytes: above %u", chunks,
                             chunk, MAX_TABLE_ENTRIES);
    r->chunk_count = (uint32_t)chunks;
    uint64_t max_msg = cfg->limits.max_msg_len;
    uint64_t arena_bytes = (uint64_t)r->chunk_count << r->chunk_shift;
    r->max_frags = (uint32_t)((max_msg + cfg->min_frag_payload - 1) / cfg->min_frag_payload);
    r->frag_words = r->max_frags > 64 ? (r->max_frags + 63) / 64 : 1;
    uint64_t span = (max_msg + chunk - 1) >> r->chunk_shift;
    r->map_len = span == 0 ? 1 : span > r->chunk_count ? r->chunk_count : (uint32_t)span;
    r->bounce_bytes = max_msg > chunk ? (size_t)(max_msg < arena_bytes ? max_msg : arena_bytes) : 0;
    r->host_max_streams = clamp_quota(cfg->max_streams_per_source, cfg->max_sessions);
    r->host_max_partials = clamp_quota(cfg->max_partials_per_source, cfg->max_partials);
    r->host_max_chunks =
        clamp_quota((cfg->max_bytes_per_source + chunk - 1) >> r->chunk_shift, r->chunk_count);

    uint32_t slots = 2;
    while (slots < 2 * cfg->max_sessions)
        slots <<= 1;
    r->hash_mask = slots - 1;
    r->src_mask = slots / 2 - 1;
    r->hash_slots = malloc(slots * sizeof(*r->hash_slots));
    r->src_buckets = malloc((slots / 2) * sizeof(*r->src_buckets));
    r->host_buckets = malloc((slots / 2) * sizeof(*r->host_buckets));
    r->streams = calloc(cfg->max_sessions, sizeof(*r->streams));
    r->sources = calloc(cfg->max_sessions, sizeof(*r->sources));
    r->hosts = calloc(cfg->max_sessions, sizeof(*r->hosts));
    r->partials = calloc(cfg->max_partials, sizeof(*r->partials));
    r->frag_bits = calloc((size_t)cfg->max_partials * r->frag_words, sizeof(*r->frag_bits));
    r->chunk_maps = calloc((size_t)cfg->max_partials * r->map_len, sizeof(*r->chunk_maps));
    r->chunk_next = calloc(r->chunk_count, sizeof(*r->chunk_next));
    r->arena = malloc((size_t)arena_bytes);
    r->gap_store = calloc((size_t)cfg->max_sessions * cfg->max_gap_ranges, sizeof(*r->gap_store));
    if (cfg->rel.enabled)
        r->rel = calloc(cfg->max_sessions, sizeof(*r->rel));
    if (r->bounce_bytes > 0)
        r->bounce = malloc(r->bounce_bytes);
    if (r->hash_slots == NULL || r->src_buckets == NULL || r->host_buckets == NULL ||
        r->streams == NULL || r->sources == NULL || r->hosts == NULL || r->partials == NULL ||
        r->frag_bits == NULL || r->chunk_maps == NULL || r->chunk_next == NULL ||
        r->arena == NULL || (r->bounce_bytes > 0 && r->bounce == NULL) || r->gap_store == NULL ||
        (cfg->rel.enabled && r->rel == NULL)) {
        rdps__reasm_fini(r);
        return rdps__set_err(RDPS_ENOMEM,
                             "reasm_init: cannot allocate %u sessions, %u partials, %zu "
                             "arena bytes",
                             cfg->max_sessions, cfg->max_partials, cfg->reasm_cap_bytes);
    }

    for (uint32_t i = 0; i < slots; i++)
        r->hash_slots[i] = NO_INDEX;
    for (uint32_t i = 0; i < slots / 2; i++)
        r->src_buckets[i] = r->host_buckets[i] = NO_INDEX;
    for (uint32_t i = 0; i < cfg->max_sessions; i++) {
        int32_t next = i + 1 < cfg->max_sessions ? (int32_t)(i + 1) : NO_INDEX;
        r->streams[i].lru_next = next;
        r->sources[i].hash_next = next;
        r->hosts[i].hash_next = next;
    }
    for (uint32_t i = 0; i < cfg->max_partials; i++)
        r->partials[i].stream_next = i + 1 < cfg->max_partials ? (int32_t)(i + 1) : NO_INDEX;
    for (uint32_t i = 0; i < r->chunk_count; i++)
        r->chunk_next[i] = i + 1 < r->chunk_count ? (int32_t)(i + 1) : NO_INDEX;
    r->stream_free = 0;
    r->src_free = 0;
    r->host_free = 0;
    r->lru_head = r->lru_tail = NO_INDEX;
    r->partial_free = 0;
    r->age_head = r->age_tail = NO_INDEX;
    r->chunk_free = 0;
    r->chunks_free = r->chunk_count;
    r->gap_head = NO_INDEX;
    r->rel_head = NO_INDEX;
    r->rel_credits = RDPS_REL_CREDITS_MAX;
    r->rel_rng = cfg->rel.rng_seed ^ 0x5DEECE66Dull;
    r->rel_due_ns = UINT64_MAX;
    return 0;
}

void rdps__reasm_fini(struct rdps_reasm *r)
{
    if (r == NULL)
        return;
    free(r->rel);
    free(r->gap_store);
    r->rel = NULL;
    r->gap_store = NULL;
    free(r->bounce);
    free(r->arena);
    free(r->chunk_next);
    free(r->chunk_maps);
    free(r->frag_bits);
    free(r->partials);
    free(r->hosts);
    free(r->sources);
    free(r->streams);
    free(r->host_buckets);
    free(r->src_buckets);
    free(r->hash_slots);
    r->bounce = NULL;
    r->arena = NULL;
    r->chunk_next = NULL;
    r->chunk_maps = NULL;
    r->frag_bits = NULL;
    r->partials = NULL;
    r->hosts = NULL;
    r->sources = NULL;
    r->streams = NULL;
    r->host_buckets = NULL;
    r->src_buckets = NULL;
    r->hash_slots = NULL;
}

/* ---- hosts and sources ----------------------------------------------------------------------- */

/* Seeds differ from the stream table's and each other's: the tables do not collide together. */
static uint32_t source_bucket(const struct rdps_reasm *r, const struct rdps_source *id)
{
    return (uint32_t)rdps__source_hash(id, ~r->cfg.hash_seed) & r->src_mask;
}

static uint32_t host_bucket(const struct rdps_reasm *r, const struct rdps_source *host_id)
{
    return (uint32_t)rdps__source_hash(host_id, r->cfg.hash_seed ^ 0x486f7374ull) & r->src_mask;
}

static int32_t source_find(const struct rdps_reasm *r, const struct rdps_source *id)
{
    for (int32_t i = r->src_buckets[source_bucket(r, id)]; i != NO_INDEX;
         i = r->sources[i].hash_next)
        if (rdps__source_equal(&r->sources[i].id, id))
            return i;
    return NO_INDEX;
}

/* The host of source `id`, NO_INDEX if none of its sources has a stream. */
static int32_t host_find(const struct rdps_reasm *r, const struct rdps_source *id)
{
    struct rdps_source key = rdps__source_host(id);
    for (int32_t i = r->host_buckets[host_bucket(r, &key)]; i != NO_INDEX;
         i = r->hosts[i].hash_next)
        if (rdps__source_equal(&r->hosts[i].id, &key))
            return i;
    return NO_INDEX;
}

/* Called with free entries available: hosts never outnumber sources, nor sources streams. */
static int32_t source_create(struct rdps_reasm *r, const struct rdps_source *id)
{
    int32_t h = host_find(r, id);
    if (h == NO_INDEX) {
        h = r->host_free;
        struct rdps_reasm_host *host = &r->hosts[h];
        r->host_free = host->hash_next;
        memset(host, 0, sizeof(*host));
        host->id = rdps__source_host(id);
        host->src_head = NO_INDEX;
        uint32_t b = host_bucket(r, &host->id);
        host->hash_next = r->host_buckets[b];
        r->host_buckets[b] = h;
    }
    int32_t i = r->src_free;
    struct rdps_reasm_src *e = &r->sources[i];
    r->src_free = e->hash_next;
    memset(e, 0, sizeof(*e));
    e->id = *id;
    e->part_head = e->part_tail = NO_INDEX;
    e->host = h;
    e->host_prev = NO_INDEX;
    e->host_next = r->hosts[h].src_head;
    if (e->host_next != NO_INDEX)
        r->sources[e->host_next].host_prev = i;
    r->hosts[h].src_head = i;
    uint32_t b = source_bucket(r, id);
    e->hash_next = r->src_buckets[b];
    r->src_buckets[b] = i;
    return i;
}

static void host_remove(struct rdps_reasm *r, int32_t h)
{
    int32_t *link = &r->host_buckets[host_bucket(r, &r->hosts[h].id)];
    while (*link != h)
        link = &r->hosts[*link].hash_next;
    *link = r->hosts[h].hash_next;
    r->hosts[h].hash_next = r->host_free;
    r->host_free = h;
}

static void source_remove(struct rdps_reasm *r, int32_t i)
{
    struct rdps_reasm_src *e = &r->sources[i];
    int32_t *link = &r->src_buckets[source_bucket(r, &e->id)];
    while (*link != i)
        link = &r->sources[*link].hash_next;
    *link = e->hash_next;
    if (e->host_prev != NO_INDEX)
        r->sources[e->host_prev].host_next = e->host_next;
    else
        r->hosts[e->host].src_head = e->host_next;
    if (e->host_next != NO_INDEX)
        r->sources[e->host_next].host_prev = e->host_prev;
    if (r->hosts[e->host].src_head == NO_INDEX)
        host_remove(r, e->host);
    e->hash_next = r->src_free;
    r->src_free = i;
}

/* ---- streams ------------------------------------------------------------------------------- */

static uint64_t hash_key(const struct rdps_reasm *r, const struct rdps_source *source,
                         uint32_t session_id)
{
    return rdps__source_hash(source,
                             r->cfg.hash_seed ^ ((uint64_t)session_id * 0x9E3779B97F4A7C15ull));
}

static void lru_unlink(struct rdps_reasm *r, int32_t si)
{
    struct rdps_reasm_stream *s = &r->streams[si];
    if (s->lru_prev != NO_INDEX)
        r->streams[s->lru_prev].lru_next = s->lru_next;
    else
        r->lru_head = s->lru_next;
    if (s->lru_next != NO_INDEX)
        r->streams[s->lru_next].lru_prev = s->lru_prev;
    else
        r->lru_tail = s->lru_prev;
}

static void lru_push_front(struct rdps_reasm *r, int32_t si)
{
    struct rdps_reasm_stream *s = &r->streams[si];
    s->lru_prev = NO_INDEX;
    s->lru_next = r->lru_head;
    if (r->lru_head != NO_INDEX)
        r->streams[r->lru_head].lru_prev = si;
    else
        r->lru_tail = si;
    r->lru_head = si;
}

static uint32_t hash_find_slot(const struct rdps_reasm *r, const struct rdps_source *source,
                               uint32_t session_id)
{
    uint32_t i = (uint32_t)hash_key(r, source, session_id) & r->hash_mask;
    for (;;) {
        int32_t si = r->hash_slots[i];
        if (si == NO_INDEX || (r->streams[si].session_id == session_id &&
                               rdps__source_equal(&r->streams[si].source, source)))
            return i;
        i = (i + 1) & r->hash_mask;
    }
}

/* Backward-shift deletion keeps linear probing correct without tombstones. */
static void hash_remove(struct rdps_reasm *r, uint32_t slot)
{
    uint32_t hole = slot;
    uint32_t i = slot;
    for (;;) {
        i = (i + 1) & r->hash_mask;
        int32_t si = r->hash_slots[i];
        if (si == NO_INDEX)
            break;
        uint32_t home =
            (uint32_t)hash_key(r, &r->streams[si].source, r->streams[si].session_id) & r->hash_mask;
        /* Move entry i into the hole unless its home lies cyclically in (hole, i]. */
        if (((i - home) & r->hash_mask) >= ((i - hole) & r->hash_mask)) {
            r->hash_slots[hole] = si;
            hole = i;
        }
    }
    r->hash_slots[hole] = NO_INDEX;
}

void rdps__reasm_stream_drop_partials(struct rdps_reasm *r, struct rdps_reasm_stream *s)
{
    while (s->partial_head != NO_INDEX) {
        r->counters.reasm_dropped_with_session++;
        rdps__reasm_partial_release(r, s->partial_head);
    }
}

static void stream_remove(struct rdps_reasm *r, int32_t si)
{
    struct rdps_reasm_stream *s = &r->streams[si];
    if (s->reliable)
        rdps__rel_stream_stop(r, si);
    else
        rdps__reasm_gaps_flush(r, si);
    rdps__reasm_stream_drop_partials(r, s);
    hash_remove(r, hash_find_slot(r, &s->source, s->session_id));
    lru_unlink(r, si);
    r->hosts[s->host].streams--;
    if (--r->sources[s->src].streams == 0)
        source_remove(r, s->src);
    s->lru_next = r->stream_free;
    r->stream_free = si;
}

/*
 * The least recently active stream of the heaviest source (most streams) of host `host`, or with
 * host == NO_INDEX of the heaviest source of the host holding the most streams. Walks the LRU
 * list from the tail (at most max_sessions entries), only when a table or quota is full.
 */
static int32_t stream_victim(const struct rdps_reasm *r, int32_t host)
{
    int32_t best = NO_INDEX;
    uint64_t best_weight = 0;
    for (int32_t si = r->lru_tail; si != NO_INDEX; si = r->streams[si].lru_prev) {
        const struct rdps_reasm_stream *s = &r->streams[si];
        if (host != NO_INDEX && s->host != host)
            continue;
        uint64_t weight = (uint64_t)r->hosts[s->host].streams << 32 | r->sources[s->src].streams;
        if (weight > best_weight) {
            best_weight = weight;
            best = si;
        }
    }
    return best;
}

/* A new stream for (source, session) of a DATA frame, making room as the quotas say. */
/* How a new stream whose first frame is h is handled (enum rdps_reasm_want). */
static int want_mode(const struct rdps_reasm *r, const struct rdps_source *source,
                     const struct rdps_frame_header *h)
{
    if (r->rel == NULL || !(h->flags & RDPS_FRAME_F_RELIABLE))
        return RDPS_REASM_WANT_UNRELIABLE;
    if (r->cfg.want_reliable != NULL)
        return r->cfg.want_reliable(r->cfg.user, source, h->session_id, h->topic_id);
    return r->cfg.rel.from_oldest ? RDPS_REASM_WANT_OLDEST : RDPS_REASM_WANT_LIVE;
}

static int32_t stream_create(struct rdps_reasm *r, const struct rdps_source *source,
                             const struct rdps_frame_header *h, uint64_t now_ns)
{
    int32_t host = host_find(r, source);
    int32_t src;
    if (host != NO_INDEX && r->hosts[host].streams >= r->host_max_streams) {
        r->counters.sessions_source_quota++;
        stream_remove(r, stream_victim(r, host));
        src = source_find(r, source); /* its last stream may have taken the entry along */
    } else if (r->stream_free == NO_INDEX) {
        r->counters.sessions_evicted++;
        stream_remove(r, stream_victim(r, NO_INDEX));
        src = source_find(r, source);
    } else {
        src = source_find(r, source);
    }
    if (src == NO_INDEX)
        src = source_create(r, source);
    uint32_t slot = hash_find_slot(r, source, h->session_id);
    int32_t si = r->stream_free;
    struct rdps_reasm_stream *s = &r->streams[si];
    r->stream_free = s->lru_next;
    memset(s, 0, sizeof(*s));
    s->source = *source;
    s->session_id = h->session_id;
    s->topic_id = h->topic_id;
    s->src = src;
    s->host = r->sources[src].host;
    s->partial_head = NO_INDEX;
    s->last_active_ns = now_ns;
    s->next_seq = h->seq;
    s->loss_floor = h->seq;
    rdps__ranges_init(&s->gaps, r->gap_store + (size_t)si * r->cfg.max_gap_ranges,
                      (uint16_t)r->cfg.max_gap_ranges);
    bool accepted =
        r->cfg.accept == NULL || r->cfg.accept(r->cfg.user, source, h->session_id, h->topic_id);
    s->topic_ok = accepted ? h->topic_id : 0;
    int want = want_mode(r, source, h);
    s->reliable = want != RDPS_REASM_WANT_UNRELIABLE;
    s->from_oldest = want == RDPS_REASM_WANT_OLDEST;
    s->single.source = *source;
    s->single.session_id = h->session_id;
    s->single.topic_id = h->topic_id;
    s->single.frag_count = 1;
    /* A refused stream keeps 0: a nonzero version byte never matches it. */
    if (accepted)
        s->predict_w0 = RDPS_FRAME_VERSION | (uint64_t)RDPS_FRAME_DATA << 8 |
                        (uint64_t)(RDPS_FRAME_F_BEGIN | RDPS_FRAME_F_END) << 16 |
                        (uint64_t)h->session_id << 32;
    r->sources[src].streams++;
    r->hosts[s->host].streams++;
    r->hash_slots[slot] = si;
    lru_push_front(r, si);
    r->counters.sessions_created++;
    if (s->reliable && accepted)
        rdps__rel_stream_start(r, si, h, now_ns);
    else
        s->reliable = false;
    return si;
}

int32_t rdps__reasm_stream_lookup(const struct rdps_reasm *r, const struct rdps_source *source,
                                  uint32_t session_id)
{
    return r->hash_slots[hash_find_slot(r, source, session_id)];
}

/* The stream for (source, session), NO_INDEX if there is none. Marks it active. */
static inline int32_t stream_find(struct rdps_reasm *r, const struct rdps_source *source,
                                  uint32_t session_id, uint64_t now_ns)
{
    /* Consecutive frames usually come from the same stream: skip the hash then. */
    int32_t si = r->lru_head;
    if (si != NO_INDEX && r->streams[si].session_id == session_id &&
        rdps__source_equal(&r->streams[si].source, source)) {
        r->streams[si].last_active_ns = now_ns;
        return si;
    }
    si = r->hash_slots[hash_find_slot(r, source, session_id)];
    if (si != NO_INDEX) {
        lru_unlink(r, si);
        lru_push_front(r, si);
        r->streams[si].last_active_ns = now_ns;
    }
    return si;
}

/* ---- sequence window ----------------------------------------------------------------------- */

/*
 * seq == next_seq enters the window as received; seq - WINDOW, sharing its
 * bit, leaves (lost if it never arrived, unless from before the start).
 */
static inline void window_push(struct rdps_reasm *r, struct rdps_reasm_stream *s, uint32_t seq)
{
    uint32_t bit = seq & WINDOW_MASK;
    uint64_t mask = 1ull << (bit % 64);
    uint64_t *word = &s->received[bit / 64];
    if (!(*word & mask)) {
        if (rdps__seq_ge(seq - RDPS_REASM_WINDOW, s->loss_floor)) {
            r->counters.lost_seqs++;
            rdps__reasm_gaps_leaving(r, (int32_t)(s - r->streams), seq - RDPS_REASM_WINDOW);
        }
        *word |= mask;
    }
    s->next_seq = seq + 1;
}

/*
 * next_seq enters the window unreceived; the sequence leaving is given up
 * (lost if it never arrived). The one place a sequence is given up.
 */
static inline void window_forget(struct rdps_reasm *r, struct rdps_reasm_stream *s)
{
    uint32_t seq = s->next_seq;
    uint32_t bit = seq & WINDOW_MASK;
    uint64_t mask = 1ull << (bit % 64);
    uint64_t *word = &s->received[bit / 64];
    if (*word & mask) {
        *word &= ~mask;
    } else if (rdps__seq_ge(seq - RDPS_REASM_WINDOW, s->loss_floor)) {
        r->counters.lost_seqs++;
        rdps__reasm_gaps_leaving(r, (int32_t)(s - r->streams), seq - RDPS_REASM_WINDOW);
    }
    s->next_seq = seq + 1;
}

/*
 * Moves next_seq forward to `upto` (a new frame's sequence). Up to a window
 * away the skipped sequences are a pending gap; further is a reset (reported
 * at once): nothing is slid over, partials go, and the window restarts at
 * `upto` with every earlier sequence marked received, so nothing from before
 * the jump is admitted.
 */
static void window_advance(struct rdps_reasm *r, int32_t si, uint32_t upto, uint64_t now_ns)
{
    struct rdps_reasm_stream *s = &r->streams[si];
    uint32_t first = s->next_seq;
    uint32_t distance = upto - first;
    if (distance >= RDPS_REASM_WINDOW) {
        r->counters.session_resets++;
        rdps__reasm_gaps_flush(r, si);
        rdps__reasm_stream_drop_partials(r, s);
        memset(s->received, 0xFF, sizeof(s->received));
        s->next_seq = upto;
        s->loss_floor = upto;
        rdps__reasm_report_gap(r, s, first, distance);
    } else {
        while (s->next_seq != upto)
            window_forget(r, s);
        rdps__reasm_gaps_note(r, si, first, distance, now_ns);
    }
}

/* Admits seq into the stream's window: true if it is new, false (counted) if not. */
static bool window_admit_slow(struct rdps_reasm *r, int32_t si, uint32_t seq, uint64_t now_ns)
{
    struct rdps_reasm_stream *s = &r->streams[si];
    int32_t d = rdps__seq_diff(seq, s->next_seq);
    if (d > 0) {
        window_advance(r, si, seq, now_ns);
        window_push(r, s, seq);
        return true;
    }
    if (d < -(int32_t)RDPS_REASM_WINDOW) {
        r->counters.stale++;
        return false;
    }
    uint32_t bit = seq & WINDOW_MASK;
    uint64_t mask = 1ull << (bit % 64);
    if (s->received[bit / 64] & mask) {
        r->counters.duplicates++;
        return false;
    }
    s->received[bit / 64] |= mask;
    r->counters.reordered++;
    rdps__reasm_gaps_fill(r, si, seq);
    return true;
}

static inline bool window_admit(struct rdps_reasm *r, int32_t si, uint32_t seq, uint64_t now_ns)
{
    struct rdps_reasm_stream *s = &r->streams[si];
    if (seq == s->next_seq) { /* in order: the common case */
        window_push(r, s, seq);
        return true;
    }
    return window_admit_slow(r, si, seq, now_ns);
}

void rdps__reasm_seq_unreceive(struct rdps_reasm *r, int32_t si, uint32_t seq)
{
    rdps__reasm_window_clear(&r->streams[si], seq);
    if (r->streams[si].reliable)
        rdps__rel_unreceive(r, si, seq);
}

/* ---- entry points -------------------------------------------------------------------------- */

/* Frames of a stream whose accept hook said no, or with another topic than the stream's. */
static int drop_topic(struct rdps_reasm *r, const struct rdps_reasm_stream *s)
{
    if (s->topic_ok == 0)
        r->counters.filtered++;
    else
        r->counters.topic_mismatch++;
    return 0;
}

static int on_heartbeat(struct rdps_reasm *r, const struct rdps_source *source,
                        const struct rdps_frame_header *h, uint64_t now_ns)
{
    r->counters.heartbeats++;
    /* Only a reliable receiver lets heartbeats create streams (late join at the live position
     * or from the publisher's oldest retained sequence); otherwise they carry nothing to keep. */
    int32_t si = stream_find(r, source, h->session_id, now_ns);
    if (si == NO_INDEX) {
        if (want_mode(r, source, h) == RDPS_REASM_WANT_UNRELIABLE) {
            r->counters.heartbeats_unknown++;
            return 0;
        }
        si = stream_create(r, source, h, now_ns);
    }
    if (h->topic_id != r->streams[si].topic_ok)
        return drop_topic(r, &r->streams[si]);
    if (r->streams[si].reliable)
        return rdps__rel_on_heartbeat(r, si, h, now_ns);
    /* seq is the next sequence the publisher will use: anything before it is due. */
    struct rdps_reasm_stream *s = &r->streams[si];
    if (!rdps__seq_gt(h->seq, s->next_seq))
        return 0;
    if (h->seq - s->next_seq >= RDPS_REASM_WINDOW) {
        /* Data-less and cheap to forge: never moves a window by more than it tracks. */
        r->counters.heartbeat_jumps++;
        return 0;
    }
    window_advance(r, si, h->seq, now_ns);
    return 0;
}

/* Every frame the fast path below does not take. */
static int on_frame_slow(struct rdps_reasm *r, const struct rdps_source *source,
                         const struct rdps_frame_view *v, uint64_t now_ns)
{
    const struct rdps_frame_header *h = &v->hdr;
    if (h->type != RDPS_FRAME_DATA) {
        if (h->type == RDPS_FRAME_HEARTBEAT)
            return on_heartbeat(r, source, h, now_ns);
        r->counters.control_frames++;
        return 0;
    }
    r->counters.data_frames++;
    int32_t si = stream_find(r, source, h->session_id, now_ns);
    if (si == NO_INDEX) {
        /* A repair (for other receivers) is no live position to join at. */
        if (r->rel != NULL &&
            (h->flags & (RDPS_FRAME_F_RELIABLE | RDPS_FRAME_F_RETRANSMIT)) ==
                (RDPS_FRAME_F_RELIABLE | RDPS_FRAME_F_RETRANSMIT) &&
            want_mode(r, source, h) != RDPS_REASM_WANT_OLDEST) {
            r->rel_totals.repairs_before_join++;
            return 0;
        }
        si = stream_create(r, source, h, now_ns);
    }
    struct rdps_reasm_stream *s = &r->streams[si];
    if (h->topic_id != s->topic_ok)
        return drop_topic(r, s);
    if (s->reliable)
        return rdps__rel_on_data(r, si, v, now_ns);
    if (!window_admit(r, si, h->seq, now_ns))
        return 0;
    if ((h->flags & (RDPS_FRAME_F_BEGIN | RDPS_FRAME_F_END)) !=
        (RDPS_FRAME_F_BEGIN | RDPS_FRAME_F_END))
        return rdps__reasm_reassemble(r, si, v, now_ns);
    return rdps__reasm_deliver_single(r, s, v);
}

/*
 * The common case inline: a single-datagram DATA message, next in sequence,
 * from the stream of the previous frame. Anything else goes the slow way.
 */
static inline int on_frame(struct rdps_reasm *r, const struct rdps_source *source,
                           const struct rdps_frame_view *v, uint64_t now_ns)
{
    const struct rdps_frame_header *h = &v->hdr;
    int32_t si = r->lru_head;
    if (h->type != RDPS_FRAME_DATA || si == NO_INDEX ||
        (h->flags & (RDPS_FRAME_F_BEGIN | RDPS_FRAME_F_END)) !=
            (RDPS_FRAME_F_BEGIN | RDPS_FRAME_F_END))
        return on_frame_slow(r, source, v, now_ns);
    struct rdps_reasm_stream *s = &r->streams[si];
    if (h->seq != s->next_seq || h->session_id != s->session_id || h->topic_id != s->topic_ok ||
        s->reliable || !rdps__source_equal(&s->source, source))
        return on_frame_slow(r, source, v, now_ns);
    r->counters.data_frames++;
    s->last_active_ns = now_ns;
    window_push(r, s, h->seq);
    return rdps__reasm_deliver_single(r, s, v);
}

int rdps__reasm_on_frame(struct rdps_reasm *r, const struct rdps_source *source,
                         const struct rdps_frame_view *v, uint64_t now_ns)
{
    r->now_ns = now_ns;
    return on_frame(r, source, v, now_ns);
}

_Static_assert(RDPS_FRAME_OFF_VERSION == 0 && RDPS_FRAME_OFF_TYPE == 1 &&
                   RDPS_FRAME_OFF_FLAGS == 2 && RDPS_FRAME_OFF_SESSION_ID == 4 &&
                   RDPS_FRAME_OFF_TOPIC_ID == 8 && RDPS_FRAME_OFF_SEQ == 16 &&
                   RDPS_FRAME_OFF_MSG_LEN == 20 && RDPS_FRAME_OFF_FRAG_OFFSET == 24 &&
                   RDPS_FRAME_OFF_RESERVED == 28 && RDPS_FRAME_OFF_TIMESTAMP_NS == 32 &&
                   RDPS_FRAME_HEADER_LEN == 40 && RDPS_FRAME_VERSION != 0,
               "header prediction reads the header as five little-endian words");

/*
 * Header prediction (after Van Jacobson's TCP fast path). The next frame of
 * the stream that sent the previous one is, most of the time, a
 * single-datagram message whose header is known in advance but for two
 * flags (RETRANSMIT, RELIABLE), its length and its timestamp. If the raw
 * header is exactly that, every rule of rdps__frame_decode holds by
 * construction (version, DATA, BEGIN|END with offset 0 and a payload that
 * ends the message, msg_len within the limit, reserved 0, the stream's
 * non-zero session and accepted non-zero topic), so the message is delivered without the
 * general decoder; on a reliable stream only while its consumed point is
 * next_seq (in order, nothing parked). Returns -1 when the prediction
 * fails: decode as usual.
 */
static inline int predicted_frame(struct rdps_reasm *r, const struct rdps_source *source,
                                  const uint8_t *buf, size_t len, uint64_t now_ns)
{
    int32_t si = r->lru_head;
    if (si == NO_INDEX || len < RDPS_FRAME_HEADER_LEN ||
        len - RDPS_FRAME_HEADER_LEN > r->cfg.limits.max_msg_len)
        return -1;
    struct rdps_reasm_stream *s = &r->streams[si];
    uint64_t w0 = rdps__get_le64(buf);
    uint64_t free_flags = (uint64_t)(RDPS_FRAME_F_RETRANSMIT | RDPS_FRAME_F_RELIABLE) << 16;
    if ((w0 & ~free_flags) != s->predict_w0 || rdps__get_le64(buf + 8) != s->topic_ok ||
        rdps__get_le64(buf + 16) != (s->next_seq | (uint64_t)(len - RDPS_FRAME_HEADER_LEN) << 32) ||
        rdps__get_le64(buf + 24) != 0 || /* frag_offset and reserved */
        !rdps__source_equal(&s->source, source))
        return -1;
    /* A reliable stream takes it only when nothing waits before it (no gap, nothing parked). */
    if (s->reliable && !rdps__rel_in_order(r, si))
        return -1;
    uint32_t msg_len = (uint32_t)(len - RDPS_FRAME_HEADER_LEN);
    r->counters.data_frames++;
    s->last_active_ns = now_ns;
    window_push(r, s, s->next_seq);
    if (s->reliable)
        rdps__rel_delivered_in_order(r, si);
    struct rdps_reasm_msg_info *info = &s->single;
    info->first_seq = s->next_seq - 1;
    info->msg_len = msg_len;
    info->timestamp_ns = rdps__get_le64(buf + RDPS_FRAME_OFF_TIMESTAMP_NS);
    info->retransmit = (w0 & (uint64_t)RDPS_FRAME_F_RETRANSMIT << 16) != 0;
    info->reliable = (w0 & (uint64_t)RDPS_FRAME_F_RELIABLE << 16) != 0;
    r->counters.msgs_delivered++;
    r->counters.bytes_delivered += msg_len;
    r->cfg.deliver(r->cfg.user, buf + RDPS_FRAME_HEADER_LEN, msg_len, info);
    return 1;
}

int rdps__reasm_input(struct rdps_reasm *r, const struct rdps_source *source, const uint8_t *buf,
                      size_t len, uint64_t now_ns)
{
    r->counters.frames_in++;
    r->counters.bytes_in += len;
    r->now_ns = now_ns;
    int delivered = predicted_frame(r, source, buf, len, now_ns);
    if (delivered >= 0)
        return delivered;
    struct rdps_frame_view v;
    enum rdps_frame_reject reason = rdps__frame_decode(buf, len, &r->cfg.limits, &v);
    if (reason != RDPS_FRAME_OK) {
        r->counters.bad_frames[reason]++;
        return RDPS_EBADFRAME;
    }
    return on_frame(r, source, &v, now_ns);
}

uint64_t rdps__reasm_expire(struct rdps_reasm *r, uint64_t now_ns)
{
    r->now_ns = now_ns;
    /* Deadlines grow with creation order, so the oldest partial is the next to expire. A
     * reliable stream's partial never times out (only loss declarations end it): requeued. */
    while (r->age_head != NO_INDEX && r->partials[r->age_head].deadline_ns <= now_ns) {
        int32_t pi = r->age_head;
        if (r->streams[r->partials[pi].stream].reliable) {
            uint64_t wait = r->cfg.partial_timeout_ns ? r->cfg.partial_timeout_ns : 1;
            rdps__reasm_partial_requeue(r, pi, now_ns + wait > now_ns ? now_ns + wait : UINT64_MAX);
            continue;
        }
        r->counters.reasm_timeouts++;
        rdps__reasm_partial_release(r, pi);
    }
    uint64_t next = r->age_head != NO_INDEX ? r->partials[r->age_head].deadline_ns : UINT64_MAX;
    next = rdps__reasm_gaps_expire(r, now_ns, next);
    uint64_t idle = r->cfg.session_idle_timeout_ns;
    if (idle != 0) {
        while (r->lru_tail != NO_INDEX && r->streams[r->lru_tail].last_active_ns + idle <= now_ns &&
               r->streams[r->lru_tail].last_active_ns + idle >= idle) {
            r->counters.sessions_expired++;
            stream_remove(r, r->lru_tail);
        }
        if (r->lru_tail != NO_INDEX) {
            uint64_t last = r->streams[r->lru_tail].last_active_ns;
            uint64_t stream_deadline = last + idle >= last ? last + idle : UINT64_MAX;
            if (stream_deadline < next)
                next = stream_deadline;
        }
    }
    return next;
}

uint32_t rdps__reasm_stream_count(const struct rdps_reasm *r)
{
    uint32_t n = 0;
    for (int32_t si = r->lru_head; si != NO_INDEX; si = r->streams[si].lru_next)
        n++;
    return n;
}

uint32_t rdps__reasm_source_count(const struct rdps_reasm *r)
{
    uint32_t n = 0;
    for (uint32_t b = 0; b <= r->src_mask; b++)
        for (int32_t i = r->src_buckets[b]; i != NO_INDEX; i = r->sources[i].hash_next)
            n++;
    return n;
}

uint32_t rdps__reasm_host_count(const struct rdps_reasm *r)
{
    uint32_t n = 0;
    for (uint32_t b = 0; b <= r->src_mask; b++)
        for (int32_t i = r->host_buckets[b]; i != NO_INDEX; i = r->hosts[i].hash_next)
            n++;
    return n;
}

uint32_t rdps__reasm_partial_count(const struct rdps_reasm *r)
{
    uint32_t n = 0;
    for (int32_t pi = r->age_head; pi != NO_INDEX; pi = r->partials[pi].age_next)
        n++;
    return n;
}

size_t rdps__reasm_arena_used(const struct rdps_reasm *r)
{
    return (size_t)(r->chunk_count - r->chunks_free) << r->chunk_shift;
}
