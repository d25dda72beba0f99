/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rx_arena.c - the assembly layer's memory: the partial table, the chunked arena, per-host
 * quotas and their victims (model: rdps_rx_arena.h). */
#include "rdps_rx_arena.h"

#include <stdlib.h>
#include <string.h>

#include "rdps_error.h"
#include "rdps_seq.h"

#define MIN_CHUNK         64u
#define MAX_TABLE_ENTRIES (1u << 24)

static uint32_t clamp_quota(uint64_t quota, uint32_t cap)
{
    return quota == 0 || quota > cap ? cap : (uint32_t)quota;
}

int rdps__rx_asm_init(struct rdps_rx_assembly *a, const struct rdps_rx_assembly_config *cfg)
{
    memset(a, 0, sizeof(*a));
    if (cfg->max_streams == 0 || cfg->max_streams > MAX_TABLE_ENTRIES || cfg->max_partials == 0 ||
        cfg->max_partials > MAX_TABLE_ENTRIES)
        return rdps__set_err(RDPS_EINVAL,
                             "reasm_init: max_sessions %u / max_partials %u not in 1..%u",
                             cfg->max_streams, cfg->max_partials, MAX_TABLE_ENTRIES);
    if (cfg->chunk_bytes < MIN_CHUNK || (cfg->chunk_bytes & (cfg->chunk_bytes - 1)) != 0)
        return rdps__set_err(RDPS_EINVAL, "reasm_init: chunk_bytes %u not a power of two >= %u",
                             cfg->chunk_bytes, MIN_CHUNK);
    if (cfg->arena_bytes < MIN_CHUNK ||
        cfg->arena_bytes / MIN_CHUNK > (size_t)MAX_TABLE_ENTRIES * 64)
        return rdps__set_err(RDPS_EINVAL, "reasm_init: reasm_cap_bytes %zu out of range",
                             cfg->arena_bytes);
    if (cfg->min_frag_payload == 0)
        return rdps__set_err(RDPS_EINVAL, "reasm_init: min_frag_payload is 0");
    a->cfg = *cfg;
    a->c = cfg->counters;

    uint32_t chunk = cfg->chunk_bytes;
    while (chunk > cfg->arena_bytes)
        chunk >>= 1;
    while ((1u << a->chunk_shift) < chunk)
        a->chunk_shift++;
    a->cfg.chunk_bytes = chunk;
    size_t chunks = cfg->arena_bytes >> a->chunk_shift;
    if (chunks > MAX_TABLE_ENTRIES)
        return rdps__set_err(RDPS_EINVAL, "reasm_init: %zu chunks of %u bytes: above %u", chunks,
                             chunk, MAX_TABLE_ENTRIES);
    a->chunk_count = (uint32_t)chunks;
    uint64_t max_msg = cfg->max_msg_len;
    uint64_t arena_bytes = (uint64_t)a->chunk_count << a->chunk_shift;
    a->max_frags = (uint32_t)((max_msg + cfg->min_frag_payload - 1) / cfg->min_frag_payload);
    a->frag_words = a->max_frags > 64 ? (a->max_frags + 63) / 64 : 1;
    uint64_t span = (max_msg + chunk - 1) >> a->chunk_shift;
    a->map_len = span == 0 ? 1 : span > a->chunk_count ? a->chunk_count : (uint32_t)span;
    a->bounce_bytes = max_msg > chunk ? (size_t)(max_msg < arena_bytes ? max_msg : arena_bytes) : 0;
    a->host_max_partials = clamp_quota(cfg->max_partials_per_host, cfg->max_partials);
    a->host_max_chunks =
        clamp_quota((cfg->max_bytes_per_host + chunk - 1) >> a->chunk_shift, a->chunk_count);

    a->streams = calloc(cfg->max_streams, sizeof(*a->streams));
    a->sources = calloc(cfg->max_streams, sizeof(*a->sources));
    a->hosts = calloc(cfg->max_streams, sizeof(*a->hosts));
    /* Pages of the maps are touched only by streams that use them (entries checked on use). */
    a->seq_maps = calloc((size_t)cfg->max_streams * RDPS_RX_SEQ_MAP, sizeof(*a->seq_maps));
    a->partials = calloc(cfg->max_partials, sizeof(*a->partials));
    a->frag_bits = calloc((size_t)cfg->max_partials * a->frag_words, sizeof(*a->frag_bits));
    a->chunk_maps = calloc((size_t)cfg->max_partials * a->map_len, sizeof(*a->chunk_maps));
    a->chunk_next = calloc(a->chunk_count, sizeof(*a->chunk_next));
    a->arena = malloc((size_t)arena_bytes);
    if (a->bounce_bytes > 0)
        a->bounce = malloc(a->bounce_bytes);
    if (a->streams == NULL || a->sources == NULL || a->hosts == NULL || a->seq_maps == NULL ||
        a->partials == NULL || a->frag_bits == NULL || a->chunk_maps == NULL ||
        a->chunk_next == NULL || a->arena == NULL || (a->bounce_bytes > 0 && a->bounce == NULL)) {
        rdps__rx_asm_fini(a);
        return rdps__set_err(RDPS_ENOMEM,
                             "reasm_init: cannot allocate %u partials, %zu arena bytes",
                             cfg->max_partials, cfg->arena_bytes);
    }
    for (uint32_t i = 0; i < cfg->max_streams; i++) {
        a->hosts[i].src_head = RDPS_RX_NONE;
        a->streams[i].partial_head = a->streams[i].pinned = RDPS_RX_NONE;
        for (uint32_t k = 0; k < RDPS_RX_LONG_MAX; k++)
            a->streams[i].longs[k] = RDPS_RX_NONE;
    }
    for (uint32_t i = 0; i < cfg->max_partials; i++) {
        a->partials[i].stream = RDPS_RX_NONE;
        a->partials[i].stream_next = i + 1 < cfg->max_partials ? (int32_t)(i + 1) : RDPS_RX_NONE;
    }
    for (uint32_t i = 0; i < a->chunk_count; i++)
        a->chunk_next[i] = i + 1 < a->chunk_count ? (int32_t)(i + 1) : RDPS_RX_NONE;
    a->partial_free = 0;
    a->age_head = a->age_tail = RDPS_RX_NONE;
    a->chunk_free = 0;
    a->chunks_free = a->chunk_count;
    return 0;
}

void rdps__rx_asm_fini(struct rdps_rx_assembly *a)
{
    if (a == NULL)
        return;
    free(a->bounce);
    free(a->arena);
    free(a->chunk_next);
    free(a->chunk_maps);
    free(a->frag_bits);
    free(a->partials);
    free(a->seq_maps);
    free(a->hosts);
    free(a->sources);
    free(a->streams);
    memset(a, 0, sizeof(*a));
}

static void source_link(struct rdps_rx_assembly *a, int32_t src);
static void source_unlink(struct rdps_rx_assembly *a, int32_t src);

void rdps__rx_asm_stream_start(struct rdps_rx_assembly *a, int32_t si, int32_t src, int32_t host,
                               const struct rdps_rx_ident *id, bool reliable)
{
    struct rdps_rx_asm_stream *s = &a->streams[si];
    s->id = *id;
    s->src = src;
    s->host = host;
    s->partial_head = s->pinned = RDPS_RX_NONE;
    s->partials = s->chunks = 0;
    s->reliable = reliable;
    for (uint32_t k = 0; k < RDPS_RX_LONG_MAX; k++)
        s->longs[k] = RDPS_RX_NONE;
    s->nlongs = s->anchors = 0;
    struct rdps_rx_asm_source *e = &a->sources[src];
    if (!e->linked || e->host != host) { /* a new source index, or one the caller reused */
        if (e->linked)
            source_unlink(a, src);
        e->host = host;
        e->part_head = e->part_tail = RDPS_RX_NONE;
        source_link(a, src);
    }
}

/* ---- lists ------------------------------------------------------------------------------------
 */

static inline void age_unlink(struct rdps_rx_assembly *a, int32_t pi)
{
    struct rdps_rx_partial *p = &a->partials[pi];
    if (p->age_prev != RDPS_RX_NONE)
        a->partials[p->age_prev].age_next = p->age_next;
    else
        a->age_head = p->age_next;
    if (p->age_next != RDPS_RX_NONE)
        a->partials[p->age_next].age_prev = p->age_prev;
    else
        a->age_tail = p->age_prev;
}

static inline void age_push_back(struct rdps_rx_assembly *a, int32_t pi)
{
    struct rdps_rx_partial *p = &a->partials[pi];
    p->age_next = RDPS_RX_NONE;
    p->age_prev = a->age_tail;
    if (a->age_tail != RDPS_RX_NONE)
        a->partials[a->age_tail].age_next = pi;
    else
        a->age_head = pi;
    a->age_tail = pi;
}

/* Sources are linked to their host from their first stream on (a freed one until its index is
 * reused): the host's victim is chosen among them. */
static void source_link(struct rdps_rx_assembly *a, int32_t src)
{
    struct rdps_rx_asm_source *e = &a->sources[src];
    struct rdps_rx_asm_host *h = &a->hosts[e->host];
    e->linked = true;
    e->host_prev = RDPS_RX_NONE;
    e->host_next = h->src_head;
    if (h->src_head != RDPS_RX_NONE)
        a->sources[h->src_head].host_prev = src;
    h->src_head = src;
}

static void source_unlink(struct rdps_rx_assembly *a, int32_t src)
{
    struct rdps_rx_asm_source *e = &a->sources[src];
    if (e->host_prev != RDPS_RX_NONE)
        a->sources[e->host_prev].host_next = e->host_next;
    else
        a->hosts[e->host].src_head = e->host_next;
    if (e->host_next != RDPS_RX_NONE)
        a->sources[e->host_next].host_prev = e->host_prev;
    e->linked = false;
}

void rdps__rx_arena_long_remove(struct rdps_rx_assembly *a, int32_t si, int32_t pi)
{
    for (uint32_t k = 0; k < RDPS_RX_LONG_MAX; k++) {
        if (a->streams[si].longs[k] == pi) {
            a->streams[si].longs[k] = RDPS_RX_NONE;
            a->streams[si].nlongs--;
        }
    }
}

void rdps__rx_asm_release(struct rdps_rx_assembly *a, int32_t pi)
{
    struct rdps_rx_partial *p = &a->partials[pi];
    struct rdps_rx_asm_stream *s = &a->streams[p->stream];
    struct rdps_rx_asm_source *src = &a->sources[p->src];
    struct rdps_rx_asm_host *host = &a->hosts[src->host];
    int32_t *map = rdps__rx_arena_chunk_map(a, pi);
    for (uint32_t c = 0; c < p->chunk_span; c++) {
        if (map[c] == RDPS_RX_NONE)
            continue;
        a->chunk_next[map[c]] = a->chunk_free;
        a->chunk_free = map[c];
        a->chunks_free++;
    }
    host->chunks -= p->chunks;
    src->chunks -= p->chunks;
    s->chunks -= p->chunks;
    host->partials--;
    src->partials--;
    s->partials--;
    if (s->pinned == pi)
        s->pinned = RDPS_RX_NONE;
    if (p->is_long)
        rdps__rx_arena_long_remove(a, p->stream, pi);
    if (p->frag_size == 0)
        s->anchors--;
    if (p->stream_prev != RDPS_RX_NONE)
        a->partials[p->stream_prev].stream_next = p->stream_next;
    else
        s->partial_head = p->stream_next;
    if (p->stream_next != RDPS_RX_NONE)
        a->partials[p->stream_next].stream_prev = p->stream_prev;
    age_unlink(a, pi);
    if (p->src_prev != RDPS_RX_NONE)
        a->partials[p->src_prev].src_next = p->src_next;
    else
        src->part_head = p->src_next;
    if (p->src_next != RDPS_RX_NONE)
        a->partials[p->src_next].src_prev = p->src_prev;
    else
        src->part_tail = p->src_prev;
    p->stream = RDPS_RX_NONE;
    p->stream_next = a->partial_free;
    a->partial_free = pi;
}

void rdps__rx_asm_stream_drop(struct rdps_rx_assembly *a, int32_t si, bool counted)
{
    struct rdps_rx_asm_stream *s = &a->streams[si];
    while (s->partial_head != RDPS_RX_NONE) {
        if (counted)
            a->c->reasm_dropped_with_session++;
        rdps__rx_asm_release(a, s->partial_head);
    }
}

void rdps__rx_asm_release_before(struct rdps_rx_assembly *a, int32_t si, uint32_t upto)
{
    for (int32_t pi = a->streams[si].partial_head, after; pi != RDPS_RX_NONE; pi = after) {
        const struct rdps_rx_partial *p = &a->partials[pi];
        after = p->stream_next;
        uint32_t last = p->frag_size != 0 ? p->first_seq + p->frag_total - 1 : p->anchor_seq;
        if (rdps__seq_lt(last, upto))
            rdps__rx_asm_release(a, pi);
    }
}

void rdps__rx_asm_pin(struct rdps_rx_assembly *a, int32_t pi)
{
    struct rdps_rx_partial *p = &a->partials[pi];
    p->pinned = true;
    a->streams[p->stream].pinned = pi;
}

void rdps__rx_arena_evict(struct rdps_rx_assembly *a, int32_t pi)
{
    if (a->streams[a->partials[pi].stream].reliable && a->cfg.on_evicted != NULL)
        a->cfg.on_evicted(a->cfg.evicted_user, a->partials[pi].stream, pi);
    rdps__rx_asm_release(a, pi);
}

/* ---- victims -------------------------------------------------------------------------------- */

/* What a victim is chosen by: the arena chunks or the partial slots a host or source holds. */
static inline uint32_t src_weight(const struct rdps_rx_asm_source *src, bool by_chunks)
{
    return by_chunks ? src->chunks : src->partials;
}

static inline uint32_t host_weight(const struct rdps_rx_asm_host *host, bool by_chunks)
{
    return by_chunks ? host->chunks : host->partials;
}

/*
 * The victim when a global cap is hit: the oldest partial (other than `keep`, the one being
 * filled, and pinned ones) of the heaviest source (most chunks or partials) of the heaviest host.
 * A walk over at most max_partials entries, only under pressure.
 */
static int32_t heaviest_victim(const struct rdps_rx_assembly *a, bool by_chunks, int32_t keep)
{
    int32_t best = RDPS_RX_NONE;
    uint64_t best_weight = 0;
    for (int32_t pi = a->age_head; pi != RDPS_RX_NONE; pi = a->partials[pi].age_next) {
        if (pi == keep || a->partials[pi].pinned)
            continue;
        const struct rdps_rx_asm_source *src = &a->sources[a->partials[pi].src];
        uint64_t weight = (uint64_t)host_weight(&a->hosts[src->host], by_chunks) << 32 |
                          src_weight(src, by_chunks);
        if (weight > best_weight) {
            best_weight = weight;
            best = pi;
        }
    }
    return best;
}

/* The oldest partial of source src that may be evicted (not `keep`, not pinned). */
static int32_t source_oldest(const struct rdps_rx_assembly *a, int32_t src, int32_t keep)
{
    int32_t pi = a->sources[src].part_head;
    while (pi != RDPS_RX_NONE && (pi == keep || a->partials[pi].pinned))
        pi = a->partials[pi].src_next;
    return pi;
}

/*
 * The victim when host `h` is at its quota: the oldest partial (other than `keep`) of the host's
 * source holding the most: a QPN within its share of the host's quota loses nothing while another
 * is over it. A walk over the host's sources, not the partials.
 */
static int32_t host_victim(const struct rdps_rx_assembly *a, int32_t h, bool by_chunks,
                           int32_t keep)
{
    int32_t best = RDPS_RX_NONE;
    uint32_t best_weight = 0;
    for (int32_t si = a->hosts[h].src_head; si != RDPS_RX_NONE; si = a->sources[si].host_next) {
        const struct rdps_rx_asm_source *src = &a->sources[si];
        if (src_weight(src, by_chunks) <= best_weight)
            continue;
        int32_t pi = source_oldest(a, si, keep);
        if (pi != RDPS_RX_NONE) {
            best_weight = src_weight(src, by_chunks);
            best = pi;
        }
    }
    return best;
}

/* A free chunk for partial `pi`, evicting as the quotas say; RDPS_RX_NONE if none can be had. */
static int32_t chunk_take(struct rdps_rx_assembly *a, int32_t pi)
{
    struct rdps_rx_partial *p = &a->partials[pi];
    struct rdps_rx_asm_source *src = &a->sources[p->src];
    struct rdps_rx_asm_host *host = &a->hosts[src->host];
    while (host->chunks >= a->host_max_chunks) {
        int32_t victim = host_victim(a, src->host, true, pi);
        if (victim == RDPS_RX_NONE)
            return RDPS_RX_NONE;
        a->c->reasm_source_bytes++;
        rdps__rx_arena_evict(a, victim);
    }
    while (a->chunk_free == RDPS_RX_NONE) {
        int32_t victim = heaviest_victim(a, true, pi);
        if (victim == RDPS_RX_NONE)
            return RDPS_RX_NONE;
        a->c->reasm_evicted++;
        rdps__rx_arena_evict(a, victim);
    }
    int32_t c = a->chunk_free;
    a->chunk_free = a->chunk_next[c];
    a->chunks_free--;
    host->chunks++;
    src->chunks++;
    a->streams[p->stream].chunks++;
    p->chunks++;
    return c;
}

bool rdps__rx_arena_write(struct rdps_rx_assembly *a, int32_t pi, uint32_t offset,
                          const uint8_t *data, uint32_t len)
{
    int32_t *map = rdps__rx_arena_chunk_map(a, pi);
    uint32_t chunk_size = a->cfg.chunk_bytes;
    while (len > 0) {
        uint32_t c = offset >> a->chunk_shift;
        uint32_t within = offset & (chunk_size - 1);
        uint32_t piece = chunk_size - within < len ? chunk_size - within : len;
        if (map[c] == RDPS_RX_NONE) {
            map[c] = chunk_take(a, pi);
            if (map[c] == RDPS_RX_NONE)
                return false;
        }
        memcpy(a->arena + ((size_t)map[c] << a->chunk_shift) + within, data, piece);
        offset += piece;
        data += piece;
        len -= piece;
    }
    return true;
}

int32_t rdps__rx_arena_create(struct rdps_rx_assembly *a, int32_t si, uint32_t msg_len,
                              uint64_t now_ns)
{
    uint64_t span = ((uint64_t)msg_len + a->cfg.chunk_bytes - 1) >> a->chunk_shift;
    if (span > a->host_max_chunks || span > a->map_len || (span > 1 && msg_len > a->bounce_bytes)) {
        a->c->reasm_too_large++;
        return RDPS_RX_NONE;
    }
    struct rdps_rx_asm_stream *s = &a->streams[si];
    struct rdps_rx_asm_source *src = &a->sources[s->src];
    struct rdps_rx_asm_host *host = &a->hosts[src->host];
    while (host->partials >= a->host_max_partials) {
        int32_t victim = host_victim(a, src->host, false, RDPS_RX_NONE);
        if (victim == RDPS_RX_NONE) {
            a->c->reasm_too_large++; /* every one of them is pinned */
            return RDPS_RX_NONE;
        }
        a->c->reasm_source_partials++;
        rdps__rx_arena_evict(a, victim);
    }
    if (a->partial_free == RDPS_RX_NONE) {
        int32_t victim = heaviest_victim(a, false, RDPS_RX_NONE);
        if (victim == RDPS_RX_NONE) {
            a->c->reasm_too_large++;
            return RDPS_RX_NONE;
        }
        a->c->reasm_evicted++;
        rdps__rx_arena_evict(a, victim);
    }
    int32_t pi = a->partial_free;
    struct rdps_rx_partial *p = &a->partials[pi];
    a->partial_free = p->stream_next;
    memset(p, 0, sizeof(*p));
    p->stream = si;
    p->src = s->src;
    p->msg_len = msg_len;
    p->chunk_span = (uint32_t)span;
    int32_t *map = rdps__rx_arena_chunk_map(a, pi);
    for (uint32_t c = 0; c < p->chunk_span; c++)
        map[c] = RDPS_RX_NONE;
    p->deadline_ns = now_ns + a->cfg.partial_timeout_ns;
    if (p->deadline_ns < now_ns)
        p->deadline_ns = UINT64_MAX;
    p->stream_prev = RDPS_RX_NONE;
    p->stream_next = s->partial_head;
    if (s->partial_head != RDPS_RX_NONE)
        a->partials[s->partial_head].stream_prev = pi;
    s->partial_head = pi;
    age_push_back(a, pi);
    p->src_next = RDPS_RX_NONE;
    p->src_prev = src->part_tail;
    if (src->part_tail != RDPS_RX_NONE)
        a->partials[src->part_tail].src_next = pi;
    else
        src->part_head = pi;
    src->part_tail = pi;
    host->partials++;
    src->partials++;
    s->partials++;
    a->c->reasm_started++;
    return pi;
}

uint64_t rdps__rx_asm_expire(struct rdps_rx_assembly *a, uint64_t now_ns)
{
    /* Deadlines grow with creation order, so the oldest partial is the next to expire. A
     * reliable stream's partial never times out (only loss declarations end it): requeued. */
    while (a->age_head != RDPS_RX_NONE && a->partials[a->age_head].deadline_ns <= now_ns) {
        int32_t pi = a->age_head;
        if (a->streams[a->partials[pi].stream].reliable) {
            uint64_t wait = a->cfg.partial_timeout_ns ? a->cfg.partial_timeout_ns : 1;
            age_unlink(a, pi);
            a->partials[pi].deadline_ns = now_ns + wait > now_ns ? now_ns + wait : UINT64_MAX;
            age_push_back(a, pi);
            continue;
        }
        a->c->reasm_timeouts++;
        rdps__rx_asm_release(a, pi);
    }
    return a->age_head != RDPS_RX_NONE ? a->partials[a->age_head].deadline_ns : UINT64_MAX;
}

uint32_t rdps__rx_asm_partial_count(const struct rdps_rx_assembly *a)
{
    uint32_t n = 0;
    for (int32_t pi = a->age_head; pi != RDPS_RX_NONE; pi = a->partials[pi].age_next)
        n++;
    return n;
}

size_t rdps__rx_asm_arena_used(const struct rdps_rx_assembly *a)
{
    return (size_t)(a->chunk_count - a->chunks_free) << a->chunk_shift;
}
