/* rdps_reasm.c - receive side: stream table, sequence window, reassembly arena, delivery. */
#include "rdps_reasm.h"

#include <stdlib.h>
#include <string.h>

#include "rdps_error.h"
#include "rdps_seq.h"

#define WINDOW_WORDS (RDPS_REASM_WINDOW / 64)
#define NO_INDEX     (-1)
/* Arena allocations are rounded so each assembly buffer is 8-byte aligned. */
#define ARENA_ALIGN 8u
/* Keeps every table index and arena offset far from int32_t/size_t limits. */
#define MAX_TABLE_ENTRIES (1u << 24)

_Static_assert((RDPS_REASM_WINDOW & (RDPS_REASM_WINDOW - 1)) == 0, "window is a power of two");
_Static_assert(RDPS_REASM_WINDOW % 64 == 0, "window is whole 64-bit words");

struct rdps_reasm_stream {
    uint64_t source;
    uint32_t session_id;
    uint32_t topic_id;
    bool accepted;
    bool started;         /* window holds at least one sequence */
    uint32_t window_base; /* oldest tracked sequence */
    uint32_t next_seq;    /* newest sequence seen + 1 */
    uint32_t loss_floor;  /* sequences before the stream's start are not counted as lost */
    uint64_t last_active_ns;
    int32_t lru_prev, lru_next;      /* also the free-list link (lru_next) */
    int32_t partial_head;            /* this stream's partial messages */
    uint64_t received[WINDOW_WORDS]; /* bit seq % WINDOW: seq in [base, next) arrived */
};

struct rdps_reasm_partial {
    int32_t stream;
    int32_t stream_prev, stream_next; /* per-stream list; stream_next is the free-list link */
    int32_t age_prev, age_next;       /* creation order over all partials */
    int32_t addr_prev, addr_next;     /* arena offset order over all partials */
    uint32_t msg_len;
    uint32_t frag_size; /* payload of non-final fragments; 0 while only the END is known */
    uint32_t frag_total;
    uint32_t first_seq;
    uint32_t anchor_seq, anchor_offset; /* the END fragment, while frag_size is unknown */
    uint32_t bytes_received, frags_received;
    uint64_t timestamp_ns, deadline_ns;
    bool retransmit, reliable;
    size_t arena_off, arena_len;
};

void rdps__reasm_config_default(struct rdps_reasm_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->max_sessions = 256;
    cfg->max_partials = 64;
    cfg->reasm_cap_bytes = 64u * 1024u * 1024u;
    cfg->partial_timeout_ns = 1000000000ull;
    rdps__frame_limits_default(&cfg->limits);
}

static uint64_t hash_key(const struct rdps_reasm *r, uint64_t source, uint32_t session_id)
{
    /* splitmix64 finalizer: cheap, and every input bit reaches every output bit. */
    uint64_t x = source ^ ((uint64_t)session_id * 0x9E3779B97F4A7C15ull) ^ r->cfg.hash_seed;
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 31;
    return x;
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
    if (cfg->reasm_cap_bytes < ARENA_ALIGN || cfg->reasm_cap_bytes > SIZE_MAX / 2)
        return rdps__set_err(RDPS_EINVAL, "reasm_init: reasm_cap_bytes %zu out of range",
                             cfg->reasm_cap_bytes);
    r->cfg = *cfg;
    r->cfg.reasm_cap_bytes &= ~(size_t)(ARENA_ALIGN - 1);

    uint32_t slots = 2;
    while (slots < 2 * cfg->max_sessions)
        slots <<= 1;
    r->hash_mask = slots - 1;
    r->hash_slots = malloc(slots * sizeof(*r->hash_slots));
    if (r->hash_slots == NULL)
        goto err_nomem;
    r->streams = calloc(cfg->max_sessions, sizeof(*r->streams));
    if (r->streams == NULL)
        goto err_nomem;
    r->partials = calloc(cfg->max_partials, sizeof(*r->partials));
    if (r->partials == NULL)
        goto err_nomem;
    r->arena = malloc(r->cfg.reasm_cap_bytes);
    if (r->arena == NULL)
        goto err_nomem;

    for (uint32_t i = 0; i < slots; i++)
        r->hash_slots[i] = NO_INDEX;
    for (uint32_t i = 0; i < cfg->max_sessions; i++)
        r->streams[i].lru_next = i + 1 < cfg->max_sessions ? (int32_t)(i + 1) : NO_INDEX;
    for (uint32_t i = 0; i < cfg->max_partials; i++)
        r->partials[i].stream_next = i + 1 < cfg->max_partials ? (int32_t)(i + 1) : NO_INDEX;
    r->stream_free = 0;
    r->lru_head = r->lru_tail = NO_INDEX;
    r->partial_free = 0;
    r->age_head = r->age_tail = NO_INDEX;
    r->addr_head = NO_INDEX;
    return 0;

err_nomem:
    rdps__reasm_fini(r);
    return rdps__set_err(RDPS_ENOMEM,
                         "reasm_init: cannot allocate %u sessions, %u partials, %zu "
                         "arena bytes",
                         cfg->max_sessions, cfg->max_partials, cfg->reasm_cap_bytes);
}

void rdps__reasm_fini(struct rdps_reasm *r)
{
    if (r == NULL)
        return;
    free(r->arena);
    free(r->partials);
    free(r->streams);
    free(r->hash_slots);
    r->arena = NULL;
    r->partials = NULL;
    r->streams = NULL;
    r->hash_slots = NULL;
}

/* ---- partial messages ---------------------------------------------------------------------- */

static void partial_release(struct rdps_reasm *r, int32_t pi)
{
    struct rdps_reasm_partial *p = &r->partials[pi];
    struct rdps_reasm_stream *s = &r->streams[p->stream];
    if (p->stream_prev != NO_INDEX)
        r->partials[p->stream_prev].stream_next = p->stream_next;
    else
        s->partial_head = p->stream_next;
    if (p->stream_next != NO_INDEX)
        r->partials[p->stream_next].stream_prev = p->stream_prev;
    if (p->age_prev != NO_INDEX)
        r->partials[p->age_prev].age_next = p->age_next;
    else
        r->age_head = p->age_next;
    if (p->age_next != NO_INDEX)
        r->partials[p->age_next].age_prev = p->age_prev;
    else
        r->age_tail = p->age_prev;
    if (p->addr_prev != NO_INDEX)
        r->partials[p->addr_prev].addr_next = p->addr_next;
    else
        r->addr_head = p->addr_next;
    if (p->addr_next != NO_INDEX)
        r->partials[p->addr_next].addr_prev = p->addr_prev;
    p->stream = NO_INDEX;
    p->stream_next = r->partial_free;
    r->partial_free = pi;
}

/*
 * First fit over the gaps between live buffers, walked in offset order
 * (at most max_partials entries, and only when a message starts). Sets
 * *off and *after (the buffer the new one follows, NO_INDEX = front).
 */
static bool arena_find_space(const struct rdps_reasm *r, size_t len, size_t *off, int32_t *after)
{
    size_t gap_start = 0;
    int32_t prev = NO_INDEX;
    for (int32_t pi = r->addr_head; pi != NO_INDEX; pi = r->partials[pi].addr_next) {
        const struct rdps_reasm_partial *p = &r->partials[pi];
        if (p->arena_off - gap_start >= len)
            break;
        gap_start = p->arena_off + p->arena_len;
        prev = pi;
    }
    if (r->cfg.reasm_cap_bytes - gap_start < len)
        return false;
    *off = gap_start;
    *after = prev;
    return true;
}

/* A new partial for stream si, or NO_INDEX if the message can never fit. */
static int32_t partial_create(struct rdps_reasm *r, int32_t si, uint32_t msg_len, uint64_t now_ns)
{
    size_t len = ((size_t)msg_len + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    if (len > r->cfg.reasm_cap_bytes) {
        r->counters.reasm_too_large++;
        return NO_INDEX;
    }
    size_t off;
    int32_t after;
    while (!arena_find_space(r, len, &off, &after) || r->partial_free == NO_INDEX) {
        r->counters.reasm_evicted++;
        partial_release(r, r->age_head);
    }
    int32_t pi = r->partial_free;
    struct rdps_reasm_partial *p = &r->partials[pi];
    r->partial_free = p->stream_next;
    memset(p, 0, sizeof(*p));
    p->stream = si;
    p->msg_len = msg_len;
    p->arena_off = off;
    p->arena_len = len;
    p->deadline_ns = now_ns + r->cfg.partial_timeout_ns;
    if (p->deadline_ns < now_ns)
        p->deadline_ns = UINT64_MAX;
    struct rdps_reasm_stream *s = &r->streams[si];
    p->stream_prev = NO_INDEX;
    p->stream_next = s->partial_head;
    if (s->partial_head != NO_INDEX)
        r->partials[s->partial_head].stream_prev = pi;
    s->partial_head = pi;
    p->age_next = NO_INDEX;
    p->age_prev = r->age_tail;
    if (r->age_tail != NO_INDEX)
        r->partials[r->age_tail].age_next = pi;
    else
        r->age_head = pi;
    r->age_tail = pi;
    p->addr_prev = after;
    p->addr_next = after != NO_INDEX ? r->partials[after].addr_next : r->addr_head;
    if (p->addr_next != NO_INDEX)
        r->partials[p->addr_next].addr_prev = pi;
    if (after != NO_INDEX)
        r->partials[after].addr_next = pi;
    else
        r->addr_head = pi;
    r->counters.reasm_started++;
    return pi;
}

/* ---- streams ------------------------------------------------------------------------------- */

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

static uint32_t hash_find_slot(const struct rdps_reasm *r, uint64_t source, uint32_t session_id)
{
    uint32_t i = (uint32_t)hash_key(r, source, session_id) & r->hash_mask;
    for (;;) {
        int32_t si = r->hash_slots[i];
        if (si == NO_INDEX ||
            (r->streams[si].source == source && r->streams[si].session_id == session_id))
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
            (uint32_t)hash_key(r, r->streams[si].source, r->streams[si].session_id) & r->hash_mask;
        /* Move entry i into the hole unless its home lies cyclically in (hole, i]. */
        if (((i - home) & r->hash_mask) >= ((i - hole) & r->hash_mask)) {
            r->hash_slots[hole] = si;
            hole = i;
        }
    }
    r->hash_slots[hole] = NO_INDEX;
}

static void stream_remove(struct rdps_reasm *r, int32_t si)
{
    struct rdps_reasm_stream *s = &r->streams[si];
    while (s->partial_head != NO_INDEX) {
        r->counters.reasm_dropped_with_session++;
        partial_release(r, s->partial_head);
    }
    hash_remove(r, hash_find_slot(r, s->source, s->session_id));
    lru_unlink(r, si);
    s->lru_next = r->stream_free;
    r->stream_free = si;
}

/* The stream for (source, session), created (evicting the LRU one if full) when new. */
static int32_t stream_get(struct rdps_reasm *r, uint64_t source, const struct rdps_frame_view *v,
                          uint64_t now_ns)
{
    /* Consecutive frames usually come from the same stream: skip the hash then. */
    int32_t si = r->lru_head;
    if (si != NO_INDEX && r->streams[si].session_id == v->hdr.session_id &&
        r->streams[si].source == source) {
        r->streams[si].last_active_ns = now_ns;
        return si;
    }
    uint32_t slot = hash_find_slot(r, source, v->hdr.session_id);
    si = r->hash_slots[slot];
    if (si != NO_INDEX) {
        if (r->lru_head != si) {
            lru_unlink(r, si);
            lru_push_front(r, si);
        }
        r->streams[si].last_active_ns = now_ns;
        return si;
    }
    if (r->stream_free == NO_INDEX) {
        r->counters.sessions_evicted++;
        stream_remove(r, r->lru_tail);
        slot = hash_find_slot(r, source, v->hdr.session_id); /* removal may shift entries */
    }
    si = r->stream_free;
    struct rdps_reasm_stream *s = &r->streams[si];
    r->stream_free = s->lru_next;
    memset(s, 0, sizeof(*s));
    s->source = source;
    s->session_id = v->hdr.session_id;
    s->topic_id = v->hdr.topic_id;
    s->partial_head = NO_INDEX;
    s->last_active_ns = now_ns;
    s->accepted = r->cfg.accept == NULL ||
                  r->cfg.accept(r->cfg.user, source, v->hdr.session_id, v->hdr.topic_id);
    r->hash_slots[slot] = si;
    lru_push_front(r, si);
    r->counters.sessions_created++;
    return si;
}

/* ---- sequence window ----------------------------------------------------------------------- */

static inline bool window_test(const struct rdps_reasm_stream *s, uint32_t seq)
{
    uint32_t bit = seq & (RDPS_REASM_WINDOW - 1);
    return (s->received[bit / 64] >> (bit % 64)) & 1u;
}

static inline void window_set(struct rdps_reasm_stream *s, uint32_t seq)
{
    uint32_t bit = seq & (RDPS_REASM_WINDOW - 1);
    s->received[bit / 64] |= 1ull << (bit % 64);
}

/* Forgets a sequence admitted by a frame that was then refused, so the real one can come. */
static inline void window_clear(struct rdps_reasm_stream *s, uint32_t seq)
{
    uint32_t bit = seq & (RDPS_REASM_WINDOW - 1);
    s->received[bit / 64] &= ~(1ull << (bit % 64));
}

/*
 * Moves window_base forward to new_base; unreceived sequences leaving the
 * window are lost, except those from before the stream started.
 */
static void window_slide(struct rdps_reasm *r, struct rdps_reasm_stream *s, uint32_t new_base)
{
    uint32_t distance = new_base - s->window_base;
    uint32_t leaving = distance < RDPS_REASM_WINDOW ? distance : RDPS_REASM_WINDOW;
    uint32_t seq = s->window_base;
    for (uint32_t i = 0; i < leaving; i++, seq++) {
        uint32_t bit = seq & (RDPS_REASM_WINDOW - 1);
        uint64_t mask = 1ull << (bit % 64);
        if (s->received[bit / 64] & mask)
            s->received[bit / 64] &= ~mask;
        else if (rdps__seq_ge(seq, s->loss_floor))
            r->counters.lost_seqs++;
    }
    /* Sequences skipped beyond the old window never had a bit. */
    r->counters.lost_seqs += distance - leaving;
    s->window_base = new_base;
    if (rdps__seq_lt(s->loss_floor, new_base))
        s->loss_floor = new_base;
}

/* Starts tracking at `first`: the window reaches back so early frames reordered behind it count. */
static void window_start(struct rdps_reasm_stream *s, uint32_t first)
{
    s->started = true;
    s->window_base = first - (RDPS_REASM_WINDOW - 1);
    s->next_seq = first;
    s->loss_floor = first;
}

/* Moves next_seq forward to new_next (not older than next_seq), sliding the window along. */
static inline void window_extend(struct rdps_reasm *r, struct rdps_reasm_stream *s,
                                 uint32_t new_next)
{
    uint32_t excess = new_next - s->window_base - RDPS_REASM_WINDOW;
    if (new_next - s->window_base <= RDPS_REASM_WINDOW) {
        /* window not full yet */
    } else if (excess == 1 && rdps__seq_ge(s->window_base, s->loss_floor)) {
        /* In-order steady state: exactly one sequence leaves the window. */
        uint32_t bit = s->window_base & (RDPS_REASM_WINDOW - 1);
        uint64_t mask = 1ull << (bit % 64);
        if (s->received[bit / 64] & mask)
            s->received[bit / 64] &= ~mask;
        else
            r->counters.lost_seqs++;
        s->window_base++;
        s->loss_floor = s->window_base;
    } else {
        window_slide(r, s, new_next - RDPS_REASM_WINDOW);
    }
    s->next_seq = new_next;
}

/* Sequences [next_seq, upto) did not arrive in order: count the gap, move next_seq to upto. */
static inline void window_skip_to(struct rdps_reasm *r, struct rdps_reasm_stream *s, uint32_t upto)
{
    uint32_t skipped = upto - s->next_seq;
    if (skipped == 0)
        return;
    r->counters.gaps++;
    r->counters.gap_seqs += skipped;
    uint32_t first_missing = s->next_seq;
    window_extend(r, s, upto);
    if (r->cfg.on_gap != NULL)
        r->cfg.on_gap(r->cfg.user, s->source, s->session_id, s->topic_id, first_missing, skipped);
}

/* Admits seq into the stream's window: true if it is new, false (counted) if not. */
static bool window_admit(struct rdps_reasm *r, struct rdps_reasm_stream *s, uint32_t seq)
{
    if (!s->started) {
        window_start(s, seq);
        s->next_seq = seq + 1;
        window_set(s, seq);
        return true;
    }
    if (rdps__seq_ge(seq, s->next_seq)) {
        window_skip_to(r, s, seq);
        window_extend(r, s, seq + 1);
        window_set(s, seq);
        return true;
    }
    if (seq - s->window_base >= s->next_seq - s->window_base) {
        r->counters.stale++;
        return false;
    }
    if (window_test(s, seq)) {
        r->counters.duplicates++;
        return false;
    }
    window_set(s, seq);
    r->counters.reordered++;
    return true;
}

/* ---- reassembly ---------------------------------------------------------------------------- */

/*
 * The partial of stream s that fragment v belongs to, NO_INDEX if none, or
 * -2 if v contradicts a partial whose sequence span contains it.
 */
#define CONFLICT (-2)
static int32_t partial_find(struct rdps_reasm *r, const struct rdps_reasm_stream *s,
                            const struct rdps_frame_view *v)
{
    const struct rdps_frame_header *h = &v->hdr;
    bool is_final = (h->flags & RDPS_FRAME_F_END) != 0;
    for (int32_t pi = s->partial_head; pi != NO_INDEX; pi = r->partials[pi].stream_next) {
        struct rdps_reasm_partial *p = &r->partials[pi];
        if (p->frag_size != 0) {
            uint32_t index = h->seq - p->first_seq;
            if (index >= p->frag_total)
                continue;
            bool fits = h->msg_len == p->msg_len &&
                        (uint64_t)index * p->frag_size == h->frag_offset &&
                        is_final == (index == p->frag_total - 1) &&
                        (is_final || v->payload_len == p->frag_size);
            return fits ? pi : CONFLICT;
        }
        /* Only the END fragment is known: a non-final fragment may fix the layout. */
        if (is_final || h->msg_len != p->msg_len || h->frag_offset >= p->anchor_offset)
            continue;
        uint32_t size = v->payload_len;
        if (h->frag_offset % size != 0 || p->anchor_offset % size != 0 ||
            p->msg_len - p->anchor_offset > size ||
            p->anchor_seq - h->seq != (p->anchor_offset - h->frag_offset) / size)
            continue;
        p->frag_size = size;
        p->first_seq = h->seq - h->frag_offset / size;
        p->frag_total = p->anchor_offset / size + 1;
        return pi;
    }
    return NO_INDEX;
}

static int deliver_partial(struct rdps_reasm *r, int32_t pi)
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
    r->counters.msgs_delivered++;
    r->counters.bytes_delivered += p->msg_len;
    /* Release first (state is consistent during the callback); the bytes stay until the next
     * partial_create, which the callback cannot cause. */
    partial_release(r, pi);
    r->cfg.deliver(r->cfg.user, r->arena + p->arena_off, info.msg_len, &info);
    return 1;
}

static int reassemble(struct rdps_reasm *r, int32_t si, const struct rdps_frame_view *v,
                      uint64_t now_ns)
{
    const struct rdps_frame_header *h = &v->hdr;
    /* An empty END fragment after offset 0 has no place in the fixed-size layout. */
    if (v->payload_len == 0)
        goto conflict;
    int32_t pi = partial_find(r, &r->streams[si], v);
    if (pi == CONFLICT)
        goto conflict;
    if (pi == NO_INDEX) {
        bool is_final = (h->flags & RDPS_FRAME_F_END) != 0;
        if (!is_final && h->frag_offset % v->payload_len != 0)
            goto conflict;
        pi = partial_create(r, si, h->msg_len, now_ns);
        if (pi == NO_INDEX)
            return 0;
        struct rdps_reasm_partial *p = &r->partials[pi];
        if (is_final) {
            p->anchor_seq = h->seq;
            p->anchor_offset = h->frag_offset;
        } else {
            p->frag_size = v->payload_len;
            p->first_seq = h->seq - h->frag_offset / p->frag_size;
            p->frag_total = (uint32_t)(((uint64_t)h->msg_len + p->frag_size - 1) / p->frag_size);
        }
    }
    struct rdps_reasm_partial *p = &r->partials[pi];
    memcpy(r->arena + p->arena_off + h->frag_offset, v->payload, v->payload_len);
    p->bytes_received += v->payload_len;
    p->frags_received++;
    if (h->flags & RDPS_FRAME_F_BEGIN)
        p->timestamp_ns = h->timestamp_ns;
    p->retransmit |= (h->flags & RDPS_FRAME_F_RETRANSMIT) != 0;
    p->reliable |= (h->flags & RDPS_FRAME_F_RELIABLE) != 0;
    if (p->bytes_received == p->msg_len)
        return deliver_partial(r, pi);
    return 0;

conflict:
    /* Drop it, but a forged frame must not use up the sequence of the real one. */
    r->counters.reasm_conflicts++;
    window_clear(&r->streams[si], h->seq);
    return 0;
}

/* ---- entry points -------------------------------------------------------------------------- */

int rdps__reasm_on_frame(struct rdps_reasm *r, uint64_t source, const struct rdps_frame_view *v,
                         uint64_t now_ns)
{
    const struct rdps_frame_header *h = &v->hdr;
    if (h->type != RDPS_FRAME_DATA && h->type != RDPS_FRAME_HEARTBEAT) {
        r->counters.control_frames++;
        return 0;
    }
    int32_t si = stream_get(r, source, v, now_ns);
    struct rdps_reasm_stream *s = &r->streams[si];
    if (!s->accepted) {
        r->counters.filtered++;
        return 0;
    }
    if (h->topic_id != s->topic_id) {
        r->counters.topic_mismatch++;
        return 0;
    }
    if (h->type == RDPS_FRAME_HEARTBEAT) {
        r->counters.heartbeats++;
        /* seq is the next sequence the publisher will use: anything before it is due. */
        if (!s->started)
            window_start(s, h->seq);
        else if (rdps__seq_gt(h->seq, s->next_seq)) {
            window_skip_to(r, s, h->seq);
        }
        return 0;
    }
    r->counters.data_frames++;
    if (!window_admit(r, s, h->seq))
        return 0;
    if ((h->flags & (RDPS_FRAME_F_BEGIN | RDPS_FRAME_F_END)) ==
        (RDPS_FRAME_F_BEGIN | RDPS_FRAME_F_END)) {
        struct rdps_reasm_msg_info info = {
            .source = source,
            .session_id = h->session_id,
            .topic_id = h->topic_id,
            .first_seq = h->seq,
            .msg_len = h->msg_len,
            .frag_count = 1,
            .timestamp_ns = h->timestamp_ns,
            .retransmit = (h->flags & RDPS_FRAME_F_RETRANSMIT) != 0,
            .reliable = (h->flags & RDPS_FRAME_F_RELIABLE) != 0,
        };
        r->counters.msgs_delivered++;
        r->counters.bytes_delivered += h->msg_len;
        r->cfg.deliver(r->cfg.user, v->payload, h->msg_len, &info);
        return 1;
    }
    return reassemble(r, si, v, now_ns);
}

int rdps__reasm_input(struct rdps_reasm *r, uint64_t source, const uint8_t *buf, size_t len,
                      uint64_t now_ns)
{
    r->counters.frames_in++;
    r->counters.bytes_in += len;
    struct rdps_frame_view v;
    enum rdps_frame_reject reason = rdps__frame_decode(buf, len, &r->cfg.limits, &v);
    if (reason != RDPS_FRAME_OK) {
        r->counters.bad_frames[reason]++;
        return RDPS_EBADFRAME;
    }
    return rdps__reasm_on_frame(r, source, &v, now_ns);
}

uint64_t rdps__reasm_expire(struct rdps_reasm *r, uint64_t now_ns)
{
    /* Deadlines grow with creation order, so the oldest partial is the next to expire. */
    while (r->age_head != NO_INDEX && r->partials[r->age_head].deadline_ns <= now_ns) {
        r->counters.reasm_timeouts++;
        partial_release(r, r->age_head);
    }
    uint64_t next = r->age_head != NO_INDEX ? r->partials[r->age_head].deadline_ns : UINT64_MAX;
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

uint32_t rdps__reasm_partial_count(const struct rdps_reasm *r)
{
    uint32_t n = 0;
    for (int32_t pi = r->age_head; pi != NO_INDEX; pi = r->partials[pi].age_next)
        n++;
    return n;
}
