/* SPDX-License-Identifier: BSD-2-Clause */
/* verify.c - per-session accounting of pattern messages and the --verify verdict (see verify.h). */
#include "verify.h"

#include <stdlib.h>
#include <string.h>

#include "pattern.h"

int verify_init(struct verify *v, uint64_t expect, uint64_t seed)
{
    memset(v, 0, sizeof(*v));
    if (expect == 0 || expect > VERIFY_MAX_EXPECT)
        return -1;
    v->expect = expect;
    v->seed = seed;
    v->last = -1;
    v->complete = -1;
    return 0;
}

void verify_fini(struct verify *v)
{
    for (unsigned i = 0; i < v->nsessions; i++) {
        free(v->sessions[i].seen);
        free(v->sessions[i].reported);
        v->sessions[i].seen = NULL;
        v->sessions[i].reported = NULL;
    }
    v->nsessions = 0;
}

static bool same_session(const struct verify_session *s, const rdps_source *source,
                         uint32_t session_id)
{
    /* rdps_source has no padding: compare it whole, like the library does. */
    return s->session_id == session_id && memcmp(&s->source, source, sizeof(*source)) == 0;
}

/* The session's slot, created on first sight; -1 when the table is full or out of memory. */
static int find_session(struct verify *v, const rdps_source *source, uint32_t session_id)
{
    if (v->last >= 0 && same_session(&v->sessions[v->last], source, session_id))
        return v->last;
    for (unsigned i = 0; i < v->nsessions; i++) {
        if (same_session(&v->sessions[i], source, session_id))
            return (int)i;
    }
    if (v->nsessions == VERIFY_MAX_SESSIONS)
        return -1;
    size_t bytes = (size_t)((v->expect + 7) / 8);
    uint8_t *seen = calloc(bytes, 1);
    uint8_t *reported = v->count_loss ? calloc(bytes, 1) : NULL;
    if (seen == NULL || (v->count_loss && reported == NULL)) {
        free(seen);
        free(reported);
        return -1;
    }
    struct verify_session *s = &v->sessions[v->nsessions];
    memset(s, 0, sizeof(*s));
    s->source = *source;
    s->session_id = session_id;
    s->seen = seen;
    s->reported = reported;
    return (int)v->nsessions++;
}

static bool bit_test(const uint8_t *map, uint64_t i)
{
    return (map[i / 8] >> (i % 8)) & 1u;
}

static void bit_set(uint8_t *map, uint64_t i)
{
    map[i / 8] |= (uint8_t)(1u << (i % 8));
}

uint64_t verify_session_before_start(const struct verify *v, const struct verify_session *s)
{
    if (s == NULL || !v->count_loss)
        return 0;
    uint64_t start = v->expect;
    if (s->distinct > 0)
        start = s->first_index;
    if (s->reported_lost > 0 && s->lowest_reported < start)
        start = s->lowest_reported;
    return start == v->expect ? 0 : start;
}

/* Complete: all N delivered, or (loss accounting) delivered and reported lost together, from the
 * session's start. */
static void check_complete(struct verify *v, int slot)
{
    const struct verify_session *s = &v->sessions[slot];
    uint64_t done = s->distinct;
    if (v->count_loss)
        done += s->reported_lost + verify_session_before_start(v, s);
    if (done == v->expect && v->complete < 0)
        v->complete = slot;
}

/* Messages [first, first + count) by ordinal reported lost in session s (its base known). */
static void mark_lost(struct verify *v, struct verify_session *s, uint32_t first, uint32_t count)
{
    /* More than N can never be right: the excess is out of range, and the loop stays bounded. */
    if (count > v->expect) {
        s->lost_out_of_range += count - v->expect;
        count = (uint32_t)v->expect;
    }
    for (uint32_t k = 0; k < count; k++) {
        uint64_t index = (uint32_t)(first + k - s->ordinal_base);
        if (index >= v->expect)
            s->lost_out_of_range++;
        else if (bit_test(s->seen, index))
            s->lost_delivered++;
        else if (bit_test(s->reported, index))
            s->lost_twice++;
        else {
            bit_set(s->reported, index);
            if (s->reported_lost == 0 || index < s->lowest_reported)
                s->lowest_reported = index;
            s->reported_lost++;
        }
    }
}

enum verify_result verify_message(struct verify *v, const rdps_source *source, uint32_t session_id,
                                  uint32_t ordinal, const void *data, size_t len)
{
    v->messages++;
    int slot = find_session(v, source, session_id);
    if (slot < 0) {
        v->untracked++;
        return VERIFY_MSG_UNTRACKED;
    }
    v->last = slot;
    struct verify_session *s = &v->sessions[slot];
    s->messages++;

    /* A message too short to carry its index is found near a hint: with loss accounting, its
     * ordinal says exactly which it is (reordering moves it far from the next expected one). */
    uint64_t hint = s->next_index;
    if (v->count_loss && s->has_base && (uint32_t)(ordinal - s->ordinal_base) < v->expect)
        hint = (uint32_t)(ordinal - s->ordinal_base);
    uint64_t index;
    if (pattern_check(v->seed, data, len, hint, &index) != PATTERN_OK) {
        s->corrupt++;
        return VERIFY_MSG_CORRUPT;
    }
    if (index >= v->expect) {
        s->out_of_range++;
        return VERIFY_MSG_OUT_OF_RANGE;
    }
    if (bit_test(s->seen, index)) {
        s->duplicates++;
        return VERIFY_MSG_DUPLICATE;
    }
    bit_set(s->seen, index);
    if (v->count_loss) {
        if (!s->has_base && len >= PATTERN_HEADER_BYTES) {
            /* Message 0's ordinal, from a message that names its index: the losses reported so
             * far can be placed. */
            s->has_base = true;
            s->ordinal_base = ordinal - (uint32_t)index;
            for (unsigned i = 0; i < s->npending; i++)
                mark_lost(v, s, s->pending[i].first, s->pending[i].count);
            s->npending = 0;
        } else if (s->has_base && ordinal != (uint32_t)(s->ordinal_base + index)) {
            s->bad_ordinal++;
        }
        if (bit_test(s->reported, index))
            s->lost_delivered++; /* reported lost, then delivered */
    }
    if (s->distinct == 0 || index < s->first_index)
        s->first_index = index;
    s->distinct++;
    if (index + 1 < s->next_index)
        s->out_of_order++;
    if (index + 1 > s->next_index)
        s->next_index = index + 1;
    check_complete(v, slot);
    return VERIFY_MSG_NEW;
}

void verify_set_ordered(struct verify *v, bool ordered)
{
    v->ordered = ordered;
}

void verify_set_count_loss(struct verify *v, bool count_loss)
{
    v->count_loss = count_loss;
}

void verify_loss(struct verify *v, const rdps_source *source, uint32_t session_id, bool is_loss,
                 uint64_t seqs, uint32_t first_ordinal, uint32_t msg_count)
{
    int slot = find_session(v, source, session_id);
    if (slot < 0) {
        v->untracked++;
        return;
    }
    struct verify_session *s = &v->sessions[slot];
    if (is_loss) {
        s->loss_events++;
        s->lost_seqs += seqs;
    } else {
        s->gap_events++;
    }
    s->lost_messages += msg_count;
    if (!v->count_loss || msg_count == 0)
        return;
    if (s->has_base) {
        mark_lost(v, s, first_ordinal, msg_count);
        check_complete(v, slot);
    } else if (s->npending < VERIFY_PENDING) {
        s->pending[s->npending].first = first_ordinal;
        s->pending[s->npending].count = msg_count;
        s->npending++;
    } else {
        s->pending_dropped++;
    }
}

bool verify_complete(const struct verify *v)
{
    return v->complete >= 0;
}

void verify_totals(const struct verify *v, struct verify_session *sum)
{
    memset(sum, 0, sizeof(*sum));
    for (unsigned i = 0; i < v->nsessions; i++) {
        const struct verify_session *s = &v->sessions[i];
        sum->messages += s->messages;
        sum->distinct += s->distinct;
        sum->duplicates += s->duplicates;
        sum->corrupt += s->corrupt;
        sum->out_of_range += s->out_of_range;
        sum->out_of_order += s->out_of_order;
        sum->loss_events += s->loss_events;
        sum->lost_seqs += s->lost_seqs;
        sum->gap_events += s->gap_events;
        sum->lost_messages += s->lost_messages;
        sum->reported_lost += s->reported_lost;
        sum->bad_ordinal += s->bad_ordinal;
        sum->lost_delivered += s->lost_delivered;
        sum->lost_twice += s->lost_twice;
        sum->lost_out_of_range += s->lost_out_of_range;
        sum->pending_dropped += s->pending_dropped;
    }
}

enum verify_verdict verify_verdict(const struct verify *v)
{
    struct verify_session sum;
    verify_totals(v, &sum);
    if (sum.corrupt > 0 || sum.duplicates > 0 || sum.out_of_range > 0)
        return VERIFY_FAILED;
    if (v->ordered && (sum.out_of_order > 0 || (sum.loss_events > 0 && !v->count_loss)))
        return VERIFY_FAILED;
    if (v->count_loss && (sum.bad_ordinal > 0 || sum.lost_delivered > 0 || sum.lost_twice > 0 ||
                          sum.lost_out_of_range > 0))
        return VERIFY_FAILED;
    if (verify_complete(v))
        return VERIFY_PASSED;
    return v->messages == 0 ? VERIFY_NOTHING : VERIFY_MISSING;
}

const char *verify_verdict_name(enum verify_verdict verdict)
{
    switch (verdict) {
    case VERIFY_PASSED:
        return "passed";
    case VERIFY_FAILED:
        return "failed";
    case VERIFY_MISSING:
        return "missing";
    case VERIFY_NOTHING:
        return "nothing";
    }
    return "?";
}

const struct verify_session *verify_reported(const struct verify *v)
{
    if (v->complete >= 0)
        return &v->sessions[v->complete];
    const struct verify_session *best = NULL;
    for (unsigned i = 0; i < v->nsessions; i++) {
        if (best == NULL || v->sessions[i].distinct > best->distinct)
            best = &v->sessions[i];
    }
    return best;
}

uint64_t verify_session_missing(const struct verify *v, const struct verify_session *s)
{
    return s != NULL ? v->expect - s->distinct : v->expect;
}

uint64_t verify_session_unaccounted(const struct verify *v, const struct verify_session *s)
{
    if (s == NULL)
        return v->expect;
    if (!v->count_loss)
        return v->expect - s->distinct;
    return v->expect - s->distinct - s->reported_lost - verify_session_before_start(v, s);
}

uint64_t verify_session_holes(const struct verify_session *s)
{
    return s != NULL ? s->next_index - s->distinct : 0;
}
