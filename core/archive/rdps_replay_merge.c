/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_replay_merge.c - the seam between a replayed history and the live stream, per session. */
#include "rdps_replay_merge.h"

#include <stdlib.h>
#include <string.h>

#include <rdps/rdps.h>

struct rdps_merge_session {
    uint32_t id;
    bool live;       /* switched: live messages go straight through */
    bool have_next;  /* history delivered something */
    bool have_first; /* live gave something (buffered or evicted) */
    /* History's position: its last record [last_seq, last_end) and, when the wire has ordinals,
     * that message's ordinal (0: the record covers its datagrams whole: wire v2 or a loss). */
    uint32_t last_seq, last_end, last_ordinal;
    /* Live: the oldest message still buffered, or the one after those evicted (ordinal 0:
     * unknown). */
    uint32_t first, first_ordinal;
    bool first_lost;   /* that oldest is live's LOSS: history may still have what live lost */
    uint32_t buffered; /* its entries in the FIFO (not yet delivered) */
};

/* A buffered live message: this header, then len bytes, padded to 8. */
struct rdps_merge_entry {
    uint32_t session; /* index in sessions[] */
    uint32_t seq, count, ordinal, flags, msg_count;
    int kind, reason, dead;
    uint64_t publisher_ts_ns;
    uint64_t len;
};

#define ENTRY_PAD UINT32_MAX /* an entry header whose session is this: skip to the ring's end */

static bool seq_before(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) < 0;
}

static bool ordinal_after(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) > 0;
}

/* History already gave the message at (seq, ordinal): its datagram is before history's last, or
 * inside the last record's datagrams and (batched) its ordinal is not after the last one's. */
static bool covered(const struct rdps_merge_session *s, uint32_t seq, uint32_t ordinal)
{
    if (!s->have_next || seq_before(seq, s->last_seq))
        return s->have_next;
    if (seq == s->last_seq)
        return s->last_ordinal == 0 || ordinal == 0 || !ordinal_after(ordinal, s->last_ordinal);
    return seq_before(seq, s->last_end);
}

/* The message at (seq, ordinal) comes right after history's last: the next ordinal in the same
 * datagram, or the first of the next datagram (whose ordinal, when both are known, is the next:
 * the messages batched with history's last are all given). */
static bool follows(const struct rdps_merge_session *s, uint32_t seq, uint32_t ordinal)
{
    bool ordinals = s->last_ordinal != 0 && ordinal != 0;
    if (seq == s->last_seq)
        return ordinals && ordinal == s->last_ordinal + 1;
    return seq == s->last_end && (!ordinals || ordinal == s->last_ordinal + 1);
}

static uint32_t position_ordinal(int kind, uint32_t ordinal)
{
    return kind == RDPS_MERGE_MESSAGE ? ordinal : 0; /* a loss covers whole datagrams */
}

/* What lies between history's last record and the position (seq, ordinal) that comes next when
 * it does not follow: the datagrams wholly missing and, where both ends have an ordinal, the
 * messages. Delivered as one LOSS (the recording does not hold them); false: no hole. */
static bool deliver_hole(struct rdps_merge *m, struct rdps_merge_session *s, uint32_t seq,
                         uint32_t ordinal)
{
    if (!s->have_next || covered(s, seq, ordinal) || follows(s, seq, ordinal))
        return false;
    uint32_t datagrams = seq_before(s->last_end, seq) ? seq - s->last_end : 0;
    bool ordinals = s->last_ordinal != 0 && ordinal != 0 && ordinal_after(ordinal, s->last_ordinal);
    uint32_t messages = ordinals ? ordinal - s->last_ordinal - 1 : 0;
    if (datagrams == 0 && messages == 0)
        return false; /* ordinals that disagree with the sequences: nothing to count */
    struct rdps_merge_msg loss = {
        .kind = RDPS_MERGE_LOSS,
        .session = s->id,
        .seq = datagrams > 0 ? s->last_end : s->last_seq,
        .count = datagrams,
        .ordinal = messages > 0 ? s->last_ordinal + 1 : 0,
        .msg_count = messages,
        .reason = RDPS_MERGE_LOSS_NOT_IN_RECORDING,
    };
    m->deliver(m->user, &loss, true);
    return true;
}

static size_t entry_size(size_t len)
{
    return sizeof(struct rdps_merge_entry) + ((len + 7u) & ~(size_t)7u);
}

int rdps__merge_init(struct rdps_merge *m, size_t buffer_bytes, uint32_t max_sessions,
                     rdps_merge_deliver_fn deliver, void *user)
{
    memset(m, 0, sizeof(*m));
    if (deliver == NULL || buffer_bytes < 65536 || max_sessions == 0)
        return RDPS_EINVAL;
    m->sessions = calloc(max_sessions, sizeof(*m->sessions));
    m->buf = malloc(buffer_bytes);
    if (m->sessions == NULL || m->buf == NULL) {
        rdps__merge_fini(m);
        return RDPS_ENOMEM;
    }
    m->max_sessions = max_sessions;
    m->cap = buffer_bytes & ~(size_t)7u;
    m->deliver = deliver;
    m->user = user;
    return 0;
}

void rdps__merge_fini(struct rdps_merge *m)
{
    free(m->sessions);
    free(m->buf);
    memset(m, 0, sizeof(*m));
}

static struct rdps_merge_session *session_of(struct rdps_merge *m, uint32_t id, bool add)
{
    for (uint32_t i = 0; i < m->nsessions; i++)
        if (m->sessions[i].id == id)
            return &m->sessions[i];
    if (!add || m->nsessions == m->max_sessions)
        return NULL;
    struct rdps_merge_session *s = &m->sessions[m->nsessions++];
    memset(s, 0, sizeof(*s));
    s->id = id;
    return s;
}

static struct rdps_merge_entry *entry_at(struct rdps_merge *m, size_t off)
{
    return (struct rdps_merge_entry *)(void *)(m->buf + off);
}

/* Frees delivered (dead) entries and pads at the head of the FIFO. */
static void pop_dead(struct rdps_merge *m)
{
    while (m->used > 0) {
        struct rdps_merge_entry *e = entry_at(m, m->head);
        size_t size = e->session == ENTRY_PAD ? m->cap - m->head : entry_size(e->len);
        if (e->session != ENTRY_PAD && !e->dead)
            return;
        if (e->session != ENTRY_PAD)
            m->entries--;
        m->head = (m->head + size) % m->cap;
        m->used -= size;
    }
    m->head = 0;
}

static void deliver_entry(struct rdps_merge *m, const struct rdps_merge_entry *e, uint32_t id)
{
    struct rdps_merge_msg msg = {
        .kind = (enum rdps_merge_kind)e->kind,
        .session = id,
        .seq = e->seq,
        .count = e->count,
        .ordinal = e->ordinal,
        .msg_count = e->msg_count,
        .publisher_ts_ns = e->publisher_ts_ns,
        .flags = e->flags,
        .reason = e->reason,
        .data = e + 1,
        .len = (size_t)e->len,
    };
    m->counters.live_delivered++;
    m->deliver(m->user, &msg, false);
}

/* The session joins the live stream: its buffered messages from history's next on go out. */
static void switch_live(struct rdps_merge *m, struct rdps_merge_session *s)
{
    uint32_t index = (uint32_t)(s - m->sessions);
    bool first = true;
    size_t off = m->head, left = m->used;
    while (left > 0 && s->buffered > 0) {
        struct rdps_merge_entry *e = entry_at(m, off);
        size_t size = e->session == ENTRY_PAD ? m->cap - off : entry_size(e->len);
        if (e->session == index && !e->dead) {
            e->dead = 1;
            s->buffered--;
            /* History gave it (one that only overlaps history's last record is inconsistent:
             * the streams carry the same messages: dropped too). */
            if (covered(s, e->seq, position_ordinal(e->kind, e->ordinal))) {
                m->counters.live_duplicates++;
            } else {
                if (first && s->last_ordinal != 0 && e->ordinal != 0 &&
                    e->ordinal != s->last_ordinal + 1)
                    m->counters.ordinal_breaks++;
                first = false;
                deliver_entry(m, e, s->id);
            }
        }
        off = (off + size) % m->cap;
        left -= size;
    }
    s->live = true;
    m->counters.sessions_switched++;
    pop_dead(m);
}

static void try_switch(struct rdps_merge *m, struct rdps_merge_session *s)
{
    if (!s->live && s->have_first && s->have_next &&
        (covered(s, s->first, s->first_ordinal) || follows(s, s->first, s->first_ordinal)))
        switch_live(m, s);
}

/* History's position just before live's oldest buffered message: the switch delivers it next. */
static void place_before_live(struct rdps_merge_session *s)
{
    s->last_seq = s->first - 1;
    s->last_end = s->first;
    s->last_ordinal = 0;
    s->have_next = true;
}

void rdps__merge_history(struct rdps_merge *m, const struct rdps_merge_msg *h)
{
    struct rdps_merge_session *s = session_of(m, h->session, true);
    uint32_t count = h->count > 0 ? h->count : 1;
    uint32_t ordinal = position_ordinal(h->kind, h->ordinal);
    if (s == NULL || s->live || covered(s, h->seq, ordinal)) {
        /* Live already has it, or history gave it (a session beyond the table is live only). */
        m->counters.history_duplicates++;
        return;
    }
    bool before_live = seq_before(h->seq, s->first) ||
                       (h->seq == s->first && ordinal != 0 && s->first_ordinal != 0 &&
                        ordinal_after(s->first_ordinal, ordinal));
    if (s->buffered > 0 && !s->first_lost && !before_live) {
        /* History jumped past live's oldest buffered message (a hole in the recording across
         * the seam, or a recording that begins after live did): live holds this record and
         * what follows; only what lies before live's oldest can be missing. */
        if (deliver_hole(m, s, s->first, s->first_ordinal))
            m->counters.history_holes++;
        m->counters.history_duplicates++;
        place_before_live(s);
        switch_live(m, s);
        return;
    }
    if (deliver_hole(m, s, h->seq, ordinal))
        m->counters.history_holes++;
    struct rdps_merge_msg out = *h;
    out.count = count;
    if (h->kind == RDPS_MERGE_LOSS)
        out.reason = RDPS_MERGE_LOSS_IN_RECORDING;
    m->counters.history_delivered++;
    m->deliver(m->user, &out, true);
    s->last_seq = h->seq;
    s->last_end = h->seq + count;
    s->last_ordinal = ordinal;
    s->have_next = true;
    try_switch(m, s);
}

/* Drops the oldest buffered entry and the other messages of its datagram (its session's seam
 * moves after the whole datagram: history then has to cover all of it). */
static void evict_oldest(struct rdps_merge *m)
{
    pop_dead(m);
    if (m->used == 0)
        return;
    struct rdps_merge_entry *head = entry_at(m, m->head);
    uint32_t index = head->session, seq = head->seq, count = head->count;
    struct rdps_merge_session *s = &m->sessions[index];
    uint32_t ordinal = position_ordinal(head->kind, head->ordinal);
    size_t off = m->head, left = m->used;
    while (left > 0 && s->buffered > 0) {
        struct rdps_merge_entry *e = entry_at(m, off);
        size_t size = e->session == ENTRY_PAD ? m->cap - off : entry_size(e->len);
        if (e->session == index && !e->dead) {
            if (e->seq != seq)
                break; /* the session's next datagram */
            e->dead = 1;
            s->buffered--;
            ordinal = position_ordinal(e->kind, e->ordinal);
            m->counters.evicted++;
        }
        off = (off + size) % m->cap;
        left -= size;
    }
    s->first = seq + count;
    s->first_ordinal = ordinal != 0 ? ordinal + 1 : 0;
    s->first_lost = false;
    pop_dead(m);
}

/* Room for an entry of `size` bytes at the tail, evicting as needed: its offset, or SIZE_MAX. */
static size_t reserve(struct rdps_merge *m, size_t size)
{
    if (size > m->cap)
        return SIZE_MAX;
    for (;;) {
        size_t tail = (m->head + m->used) % m->cap;
        size_t to_end = m->cap - tail;
        size_t need = size <= to_end ? size : to_end + size;
        if (m->used == 0) {
            m->head = 0;
            tail = 0;
            need = size;
        }
        if (need <= m->cap - m->used) {
            if (need > size) { /* pad to the end, start again at 0 */
                entry_at(m, tail)->session = ENTRY_PAD;
                m->used += to_end;
                tail = 0;
            }
            m->used += size;
            return tail;
        }
        evict_oldest(m);
    }
}

/* Live's oldest buffered message of session s is now l. */
static void set_live_oldest(struct rdps_merge_session *s, const struct rdps_merge_msg *l)
{
    s->first = l->seq;
    s->first_ordinal = position_ordinal(l->kind, l->ordinal);
    s->first_lost = l->kind == RDPS_MERGE_LOSS;
}

void rdps__merge_live(struct rdps_merge *m, const struct rdps_merge_msg *l)
{
    struct rdps_merge_session *s = session_of(m, l->session, true);
    uint32_t count = l->count > 0 ? l->count : 1;
    if (s == NULL) {
        m->counters.sessions_refused++;
        m->counters.live_delivered++;
        m->deliver(m->user, l, false);
        return;
    }
    if (s->live) {
        /* History may have run ahead of where live began: live repeats it until it passes. */
        if (covered(s, l->seq, position_ordinal(l->kind, l->ordinal))) {
            m->counters.live_duplicates++;
            return;
        }
        m->counters.live_delivered++;
        m->deliver(m->user, l, false);
        return;
    }
    if (!s->have_first || s->buffered == 0) {
        set_live_oldest(s, l);
        s->have_first = true;
    }
    size_t size = entry_size(l->len);
    size_t off = reserve(m, size);
    if (off == SIZE_MAX) { /* larger than the whole buffer: history has to cover it */
        m->counters.evicted++;
        s->first = l->seq + count;
        s->first_ordinal = l->ordinal != 0 ? l->ordinal + 1 : 0; /* a message: a LOSS has no body */
        s->first_lost = false;
    } else {
        struct rdps_merge_entry *e = entry_at(m, off);
        *e = (struct rdps_merge_entry){
            .session = (uint32_t)(s - m->sessions),
            .seq = l->seq,
            .count = count,
            .ordinal = l->ordinal,
            .flags = l->flags,
            .msg_count = l->msg_count,
            .kind = l->kind,
            .reason = l->reason,
            .publisher_ts_ns = l->publisher_ts_ns,
            .len = l->len,
        };
        if (l->len > 0)
            memcpy(e + 1, l->data, l->len);
        s->buffered++;
        m->entries++;
        m->counters.live_buffered++;
        if (s->buffered == 1) /* the oldest still buffered */
            set_live_oldest(s, l);
    }
    if (m->history_over && !s->live)
        rdps__merge_history_caught_up(m, s->id, s->have_next, s->last_end);
    else
        try_switch(m, s);
}

void rdps__merge_history_caught_up(struct rdps_merge *m, uint32_t session, bool has_history,
                                   uint32_t next)
{
    struct rdps_merge_session *s = session_of(m, session, false);
    if (s == NULL || s->live || !s->have_first)
        return;
    if (!s->have_next && has_history) { /* the recording's datagrams before next, whole */
        s->last_seq = next - 1;
        s->last_end = next;
        s->last_ordinal = 0;
        s->have_next = true;
    }
    /* The recording stops short of live's oldest: one LOSS for what neither has. */
    bool hole = deliver_hole(m, s, s->first, s->first_ordinal);
    if (hole)
        m->counters.losses_not_in_recording++;
    /* A session the recording never had begins where live began: nothing is missing. History
     * already past live's oldest keeps its place (what it gave is dropped from live). */
    if (!s->have_next || hole)
        place_before_live(s);
    s->have_next = true;
    switch_live(m, s);
}

void rdps__merge_history_done(struct rdps_merge *m)
{
    m->history_over = true;
    for (uint32_t i = 0; i < m->nsessions; i++) {
        struct rdps_merge_session *s = &m->sessions[i];
        if (!s->live && s->have_first)
            rdps__merge_history_caught_up(m, s->id, s->have_next, s->last_end);
    }
}

uint32_t rdps__merge_waiting(const struct rdps_merge *m, uint32_t *sessions, uint32_t *seqs,
                             uint32_t max)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->nsessions; i++) {
        const struct rdps_merge_session *s = &m->sessions[i];
        if (s->live || !s->have_first)
            continue;
        if (n < max) {
            sessions[n] = s->id;
            seqs[n] = s->first;
        }
        n++;
    }
    return n;
}

bool rdps__merge_all_live(const struct rdps_merge *m)
{
    for (uint32_t i = 0; i < m->nsessions; i++)
        if (!m->sessions[i].live)
            return false;
    return m->entries == 0;
}

const struct rdps_merge_counters *rdps__merge_counters(const struct rdps_merge *m)
{
    return &m->counters;
}
