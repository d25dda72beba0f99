/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_reasm_partial.c - reassembly of multi-datagram messages: per-fragment bitmaps, the chunked
 * arena, and the per-host quotas of partials and bytes (model: rdps_reasm.h). */
#include <string.h>

#include "rdps_reasm_internal.h"

/* ---- partial messages ---------------------------------------------------------------------- */

static void age_unlink(struct rdps_reasm *r, int32_t pi);

static inline uint64_t *partial_bits(const struct rdps_reasm *r, int32_t pi)
{
    return r->frag_bits + (size_t)pi * r->frag_words;
}

static inline int32_t *partial_map(const struct rdps_reasm *r, int32_t pi)
{
    return r->chunk_maps + (size_t)pi * r->map_len;
}

void rdps__reasm_partial_release(struct rdps_reasm *r, int32_t pi)
{
    struct rdps_reasm_partial *p = &r->partials[pi];
    struct rdps_reasm_stream *s = &r->streams[p->stream];
    struct rdps_reasm_src *src = &r->sources[p->src];
    struct rdps_reasm_host *host = &r->hosts[src->host];
    int32_t *map = partial_map(r, pi);
    for (uint32_t c = 0; c < p->chunk_span; c++) {
        if (map[c] == NO_INDEX)
            continue;
        r->chunk_next[map[c]] = r->chunk_free;
        r->chunk_free = map[c];
        r->chunks_free++;
        host->chunks--;
        src->chunks--;
        s->chunks--;
    }
    host->partials--;
    src->partials--;
    s->partials--;
    if (p->stream_prev != NO_INDEX)
        r->partials[p->stream_prev].stream_next = p->stream_next;
    else
        s->partial_head = p->stream_next;
    if (p->stream_next != NO_INDEX)
        r->partials[p->stream_next].stream_prev = p->stream_prev;
    age_unlink(r, pi);
    if (p->src_prev != NO_INDEX)
        r->partials[p->src_prev].src_next = p->src_next;
    else
        src->part_head = p->src_next;
    if (p->src_next != NO_INDEX)
        r->partials[p->src_next].src_prev = p->src_prev;
    else
        src->part_tail = p->src_prev;
    p->stream = NO_INDEX;
    p->stream_next = r->partial_free;
    r->partial_free = pi;
}

/* Evicts partial pi (counted by the caller); a reliable stream asks for its sequences again. */
static void partial_evict(struct rdps_reasm *r, int32_t pi)
{
    if (r->streams[r->partials[pi].stream].reliable)
        rdps__rel_partial_evicted(r, pi);
    rdps__reasm_partial_release(r, pi);
}

static void age_unlink(struct rdps_reasm *r, int32_t pi)
{
    struct rdps_reasm_partial *p = &r->partials[pi];
    if (p->age_prev != NO_INDEX)
        r->partials[p->age_prev].age_next = p->age_next;
    else
        r->age_head = p->age_next;
    if (p->age_next != NO_INDEX)
        r->partials[p->age_next].age_prev = p->age_prev;
    else
        r->age_tail = p->age_prev;
}

static void age_push_back(struct rdps_reasm *r, int32_t pi)
{
    struct rdps_reasm_partial *p = &r->partials[pi];
    p->age_next = NO_INDEX;
    p->age_prev = r->age_tail;
    if (r->age_tail != NO_INDEX)
        r->partials[r->age_tail].age_next = pi;
    else
        r->age_head = pi;
    r->age_tail = pi;
}

void rdps__reasm_partial_requeue(struct rdps_reasm *r, int32_t pi, uint64_t deadline_ns)
{
    age_unlink(r, pi);
    r->partials[pi].deadline_ns = deadline_ns;
    age_push_back(r, pi);
}

/* What a victim is chosen by: the arena chunks or the partial slots a host or source holds. */
static inline uint32_t src_weight(const struct rdps_reasm_src *src, bool by_chunks)
{
    return by_chunks ? src->chunks : src->partials;
}

static inline uint32_t host_weight(const struct rdps_reasm_host *host, bool by_chunks)
{
    return by_chunks ? host->chunks : host->partials;
}

/*
 * The victim when a global cap is hit: the oldest partial (other than `keep`, the one being
 * filled) of the heaviest source (most chunks or partials) of the heaviest host. A walk over at
 * most max_partials entries, only under pressure.
 */
static int32_t heaviest_victim(const struct rdps_reasm *r, bool by_chunks, int32_t keep)
{
    int32_t best = NO_INDEX;
    uint64_t best_weight = 0;
    for (int32_t pi = r->age_head; pi != NO_INDEX; pi = r->partials[pi].age_next) {
        if (pi == keep)
            continue;
        const struct rdps_reasm_src *src = &r->sources[r->partials[pi].src];
        uint64_t weight = (uint64_t)host_weight(&r->hosts[src->host], by_chunks) << 32 |
                          src_weight(src, by_chunks);
        if (weight > best_weight) {
            best_weight = weight;
            best = pi;
        }
    }
    return best;
}

/*
 * The victim when host `h` is at its quota: the oldest partial (other than `keep`) of the host's
 * source holding the most: a QPN within its share of the host's quota loses nothing while another
 * is over it. A walk over the host's sources (at most its stream quota), not the partials.
 */
static int32_t host_victim(const struct rdps_reasm *r, int32_t h, bool by_chunks, int32_t keep)
{
    int32_t best = NO_INDEX;
    uint32_t best_weight = 0;
    for (int32_t si = r->hosts[h].src_head; si != NO_INDEX; si = r->sources[si].host_next) {
        const struct rdps_reasm_src *src = &r->sources[si];
        int32_t pi = src->part_head == keep && keep != NO_INDEX ? r->partials[keep].src_next
                                                                : src->part_head;
        if (pi != NO_INDEX && src_weight(src, by_chunks) > best_weight) {
            best_weight = src_weight(src, by_chunks);
            best = pi;
        }
    }
    return best;
}

/* A free chunk for partial `pi`, evicting as the quotas say; NO_INDEX if none can be had. */
static int32_t chunk_take(struct rdps_reasm *r, int32_t pi)
{
    struct rdps_reasm_partial *p = &r->partials[pi];
    struct rdps_reasm_src *src = &r->sources[p->src];
    struct rdps_reasm_host *host = &r->hosts[src->host];
    while (host->chunks >= r->host_max_chunks) {
        int32_t victim = host_victim(r, src->host, true, pi);
        if (victim == NO_INDEX)
            return NO_INDEX;
        r->counters.reasm_source_bytes++;
        partial_evict(r, victim);
    }
    while (r->chunk_free == NO_INDEX) {
        int32_t victim = heaviest_victim(r, true, pi);
        if (victim == NO_INDEX)
            return NO_INDEX;
        r->counters.reasm_evicted++;
        partial_evict(r, victim);
    }
    int32_t c = r->chunk_free;
    r->chunk_free = r->chunk_next[c];
    r->chunks_free--;
    host->chunks++;
    src->chunks++;
    r->streams[p->stream].chunks++;
    return c;
}

/* Copies a fragment's bytes into the partial's chunks, taking chunks as needed. */
static bool partial_write(struct rdps_reasm *r, int32_t pi, uint32_t offset, const uint8_t *data,
                          uint32_t len)
{
    int32_t *map = partial_map(r, pi);
    uint32_t chunk_size = r->cfg.chunk_bytes;
    while (len > 0) {
        uint32_t c = offset >> r->chunk_shift;
        uint32_t within = offset & (chunk_size - 1);
        uint32_t piece = chunk_size - within < len ? chunk_size - within : len;
        if (map[c] == NO_INDEX) {
            map[c] = chunk_take(r, pi);
            if (map[c] == NO_INDEX)
                return false;
        }
        memcpy(r->arena + ((size_t)map[c] << r->chunk_shift) + within, data, piece);
        offset += piece;
        data += piece;
        len -= piece;
    }
    return true;
}

/* A new partial for stream si, or NO_INDEX (counted) if the message can never fit. */
static int32_t partial_create(struct rdps_reasm *r, int32_t si, uint32_t msg_len, uint64_t now_ns)
{
    uint64_t span = ((uint64_t)msg_len + r->cfg.chunk_bytes - 1) >> r->chunk_shift;
    if (span > r->host_max_chunks || span > r->map_len || (span > 1 && msg_len > r->bounce_bytes)) {
        r->counters.reasm_too_large++;
        return NO_INDEX;
    }
    int32_t src_index = r->streams[si].src;
    struct rdps_reasm_src *src = &r->sources[src_index];
    struct rdps_reasm_host *host = &r->hosts[src->host];
    while (host->partials >= r->host_max_partials) {
        r->counters.reasm_source_partials++;
        partial_evict(r, host_victim(r, src->host, false, NO_INDEX));
    }
    if (r->partial_free == NO_INDEX) {
        r->counters.reasm_evicted++;
        partial_evict(r, heaviest_victim(r, false, NO_INDEX));
    }
    int32_t pi = r->partial_free;
    struct rdps_reasm_partial *p = &r->partials[pi];
    r->partial_free = p->stream_next;
    memset(p, 0, sizeof(*p));
    p->stream = si;
    p->src = src_index;
    p->msg_len = msg_len;
    p->chunk_span = (uint32_t)span;
    int32_t *map = partial_map(r, pi);
    for (uint32_t c = 0; c < p->chunk_span; c++)
        map[c] = NO_INDEX;
    p->deadline_ns = now_ns + r->cfg.partial_timeout_ns;
    if (p->deadline_ns < now_ns)
        p->deadline_ns = UINT64_MAX;
    struct rdps_reasm_stream *s = &r->streams[si];
    p->stream_prev = NO_INDEX;
    p->stream_next = s->partial_head;
    if (s->partial_head != NO_INDEX)
        r->partials[s->partial_head].stream_prev = pi;
    s->partial_head = pi;
    age_push_back(r, pi);
    p->src_next = NO_INDEX;
    p->src_prev = src->part_tail;
    if (src->part_tail != NO_INDEX)
        r->partials[src->part_tail].src_next = pi;
    else
        src->part_head = pi;
    src->part_tail = pi;
    host->partials++;
    src->partials++;
    s->partials++;
    r->counters.reasm_started++;
    return pi;
}

/* ---- reliable streams: partials by sequence ------------------------------------------------ */

static inline bool is_reliable_stream(const struct rdps_reasm *r, int32_t si)
{
    return r->rel != NULL && r->streams[si].reliable;
}

/* Fewer fragments than the window: a longer message can never be held whole (refused). */
static inline uint32_t frag_limit(const struct rdps_reasm *r, int32_t si)
{
    return is_reliable_stream(r, si) && r->max_frags > RDPS_REASM_WINDOW - 1 ? RDPS_REASM_WINDOW - 1
                                                                             : r->max_frags;
}

/* Enters partial pi in its reliable stream's sequence map: every sequence it holds from the
 * consumed point on, or its END alone while the layout is unknown. */
static void rel_map(struct rdps_reasm *r, int32_t pi)
{
    const struct rdps_reasm_partial *p = &r->partials[pi];
    if (!is_reliable_stream(r, p->stream))
        return;
    struct rdps_rel_stream *rs = &r->rel[p->stream];
    uint32_t first = p->frag_size != 0 ? p->first_seq : p->anchor_seq;
    uint32_t count = p->frag_size != 0 ? p->frag_total : 1;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t seq = first + i;
        /* Below the consumed point nothing looks it up; past the map it cannot be (see
         * RDPS_REL_SEQ_MAP): never overwrite another sequence's entry. */
        if (seq - rs->consumed < RDPS_REL_SEQ_MAP)
            rs->seq_partial[seq & (RDPS_REL_SEQ_MAP - 1)] = pi;
    }
}

/* Fixes a partial's fragment layout and clears the bitmap words it uses. */
static void partial_set_layout(struct rdps_reasm *r, int32_t pi, uint32_t frag_size,
                               uint32_t first_seq, uint32_t frag_total)
{
    struct rdps_reasm_partial *p = &r->partials[pi];
    p->frag_size = frag_size;
    p->first_seq = first_seq;
    p->frag_total = frag_total;
    memset(partial_bits(r, pi), 0, ((size_t)frag_total + 63) / 64 * sizeof(uint64_t));
    rel_map(r, pi);
}

static inline bool bit_test_and_set(uint64_t *bits, uint32_t index)
{
    uint64_t mask = 1ull << (index % 64);
    bool was = (bits[index / 64] & mask) != 0;
    bits[index / 64] |= mask;
    return was;
}

/* ---- reassembly ---------------------------------------------------------------------------- */

#define CONFLICT  (-2)
#define DUPLICATE (-3)

/* Fragment v against laid-out partial pi whose span contains it: pi, CONFLICT or DUPLICATE. */
static int32_t laid_out_match(struct rdps_reasm *r, int32_t pi, const struct rdps_frame_view *v)
{
    const struct rdps_frame_header *h = &v->hdr;
    const struct rdps_reasm_partial *p = &r->partials[pi];
    bool is_final = (h->flags & RDPS_FRAME_F_END) != 0;
    uint32_t index = h->seq - p->first_seq;
    /* The decoder made the END fragment end at msg_len, so this pins every byte. */
    bool fits = h->msg_len == p->msg_len && (uint64_t)index * p->frag_size == h->frag_offset &&
                is_final == (index == p->frag_total - 1) &&
                (is_final || v->payload_len == p->frag_size);
    if (!fits)
        return CONFLICT;
    return bit_test_and_set(partial_bits(r, pi), index) ? DUPLICATE : pi;
}

/* Non-final fragment v against partial pi of which only the END is known: if v fixes a
 * consistent layout, lays it out and returns pi; else NO_INDEX. */
static int32_t anchor_match(struct rdps_reasm *r, int32_t pi, const struct rdps_frame_view *v,
                            uint32_t max_frags)
{
    const struct rdps_frame_header *h = &v->hdr;
    const struct rdps_reasm_partial *p = &r->partials[pi];
    if (h->msg_len != p->msg_len || h->frag_offset >= p->anchor_offset)
        return NO_INDEX;
    uint32_t size = v->payload_len;
    if (h->frag_offset % size != 0 || p->anchor_offset % size != 0 ||
        p->msg_len - p->anchor_offset > size ||
        p->anchor_seq - h->seq != (p->anchor_offset - h->frag_offset) / size ||
        p->anchor_offset / size >= max_frags)
        return NO_INDEX;
    uint32_t total = p->anchor_offset / size + 1;
    partial_set_layout(r, pi, size, h->seq - h->frag_offset / size, total);
    bit_test_and_set(partial_bits(r, pi), total - 1);
    bit_test_and_set(partial_bits(r, pi), h->frag_offset / size);
    return pi;
}

/*
 * The partial of stream si that fragment v belongs to, NO_INDEX if none,
 * CONFLICT if v contradicts a partial whose sequence span contains it, or
 * DUPLICATE if that fragment is already there. Reliable streams look both
 * candidates up by sequence (the partial holding v's sequence, and the one
 * whose END is where v's message would end); others walk their few partials.
 */
static int32_t partial_find(struct rdps_reasm *r, int32_t si, const struct rdps_frame_view *v)
{
    const struct rdps_frame_header *h = &v->hdr;
    bool is_final = (h->flags & RDPS_FRAME_F_END) != 0;
    if (is_reliable_stream(r, si)) {
        int32_t pi = rdps__rel_partial_at(r, si, h->seq);
        if (pi != NO_INDEX && r->partials[pi].frag_size != 0)
            return laid_out_match(r, pi, v);
        if (is_final || h->frag_offset >= h->msg_len || h->frag_offset % v->payload_len != 0)
            return NO_INDEX;
        uint32_t size = v->payload_len;
        uint32_t end_seq = h->seq + ((h->msg_len - 1) / size - h->frag_offset / size);
        pi = rdps__rel_partial_at(r, si, end_seq);
        if (pi == NO_INDEX || r->partials[pi].frag_size != 0)
            return NO_INDEX;
        return anchor_match(r, pi, v, frag_limit(r, si));
    }
    for (int32_t pi = r->streams[si].partial_head; pi != NO_INDEX;
         pi = r->partials[pi].stream_next) {
        const struct rdps_reasm_partial *p = &r->partials[pi];
        if (p->frag_size != 0) {
            if (h->seq - p->first_seq >= p->frag_total)
                continue;
            return laid_out_match(r, pi, v);
        }
        /* Only the END fragment is known: a non-final fragment may fix the layout. */
        if (!is_final && anchor_match(r, pi, v, frag_limit(r, si)) == pi)
            return pi;
    }
    return NO_INDEX;
}

int rdps__reasm_deliver_partial(struct rdps_reasm *r, int32_t pi)
{
    struct rdps_reasm_partial *p = &r->partials[pi];
    const struct rdps_reasm_stream *s = &r->streams[p->stream];
    struct rdps_reasm_msg_info info = {
        .source = s->source,
        .session_id = s->session_id,
        .topic_id = s->topic_id,
        .first_seq = p->first_seq,
        .msg_len = p->msg_len,
        .frag_count = p->frags_received,
        .timestamp_ns = p->timestamp_ns,
        .retransmit = p->retransmit,
        .reliable = p->reliable,
    };
    const int32_t *map = partial_map(r, pi);
    const uint8_t *msg;
    if (p->chunk_span == 0) {
        msg = r->arena; /* an empty message parked by a reliable stream */
    } else if (p->chunk_span == 1) {
        msg = r->arena + ((size_t)map[0] << r->chunk_shift);
    } else {
        /* Every chunk is present: each byte of the message was written by one of its fragments. */
        size_t done = 0;
        for (uint32_t c = 0; c < p->chunk_span; c++) {
            size_t piece =
                p->msg_len - done < r->cfg.chunk_bytes ? p->msg_len - done : r->cfg.chunk_bytes;
            memcpy(r->bounce + done, r->arena + ((size_t)map[c] << r->chunk_shift), piece);
            done += piece;
        }
        msg = r->bounce;
    }
    r->counters.msgs_delivered++;
    r->counters.bytes_delivered += p->msg_len;
    /* Release first (state is consistent during the callback); a freed chunk keeps its bytes
     * until the next frame, which the callback cannot cause. */
    rdps__reasm_partial_release(r, pi);
    r->cfg.deliver(r->cfg.user, msg, info.msg_len, &info);
    return 1;
}

int rdps__reasm_reassemble(struct rdps_reasm *r, int32_t si, const struct rdps_frame_view *v,
                           uint64_t now_ns)
{
    const struct rdps_frame_header *h = &v->hdr;
    /* An empty END fragment after offset 0 has no place in the fixed-size layout. */
    if (v->payload_len == 0)
        goto conflict;
    int32_t pi = partial_find(r, si, v);
    if (pi == CONFLICT)
        goto conflict;
    if (pi == DUPLICATE) {
        r->counters.duplicates++;
        return 0;
    }
    if (pi == NO_INDEX) {
        bool is_final = (h->flags & RDPS_FRAME_F_END) != 0;
        uint32_t total = 0;
        if (!is_final) {
            if (h->frag_offset % v->payload_len != 0)
                goto conflict;
            total = (uint32_t)(((uint64_t)h->msg_len + v->payload_len - 1) / v->payload_len);
            if (total > frag_limit(r, si)) {
                r->counters.reasm_too_many_frags++;
                return 0;
            }
        }
        pi = partial_create(r, si, h->msg_len, now_ns);
        if (pi == NO_INDEX)
            return 0;
        struct rdps_reasm_partial *p = &r->partials[pi];
        if (is_final) {
            p->anchor_seq = h->seq;
            p->anchor_offset = h->frag_offset;
            rel_map(r, pi);
        } else {
            uint32_t index = h->frag_offset / v->payload_len;
            partial_set_layout(r, pi, v->payload_len, h->seq - index, total);
            bit_test_and_set(partial_bits(r, pi), index);
        }
    }
    if (!partial_write(r, pi, h->frag_offset, v->payload, v->payload_len)) {
        /* Cannot happen while quotas are consistent; never deliver a message with a hole. */
        r->counters.reasm_source_bytes++;
        partial_evict(r, pi);
        return 0;
    }
    struct rdps_reasm_partial *p = &r->partials[pi];
    p->frags_received++;
    if (h->flags & RDPS_FRAME_F_BEGIN)
        p->timestamp_ns = h->timestamp_ns;
    p->retransmit |= (h->flags & RDPS_FRAME_F_RETRANSMIT) != 0;
    p->reliable |= (h->flags & RDPS_FRAME_F_RELIABLE) != 0;
    if (p->frag_size != 0 && p->frags_received == p->frag_total)
        return r->streams[si].reliable ? rdps__rel_complete(r, pi)
                                       : rdps__reasm_deliver_partial(r, pi);
    return 0;

conflict:
    /* Drop it, but a forged frame must not use up the sequence of the real one. */
    r->counters.reasm_conflicts++;
    rdps__reasm_seq_unreceive(r, si, h->seq);
    return 0;
}

int32_t rdps__reasm_park_single(struct rdps_reasm *r, int32_t si, const struct rdps_frame_view *v,
                                uint64_t now_ns)
{
    const struct rdps_frame_header *h = &v->hdr;
    int32_t pi = partial_create(r, si, h->msg_len, now_ns);
    if (pi == NO_INDEX)
        return NO_INDEX;
    partial_set_layout(r, pi, h->msg_len ? h->msg_len : 1, h->seq, 1);
    bit_test_and_set(partial_bits(r, pi), 0);
    if (!partial_write(r, pi, 0, v->payload, v->payload_len)) {
        r->counters.reasm_source_bytes++;
        rdps__reasm_partial_release(r, pi);
        return NO_INDEX;
    }
    struct rdps_reasm_partial *p = &r->partials[pi];
    p->frags_received = 1;
    p->timestamp_ns = h->timestamp_ns;
    p->retransmit = (h->flags & RDPS_FRAME_F_RETRANSMIT) != 0;
    p->reliable = true;
    p->complete = true;
    return pi;
}
