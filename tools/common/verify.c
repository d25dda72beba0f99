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
        v->sessions[i].seen = NULL;
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
    uint8_t *seen = calloc((size_t)((v->expect + 7) / 8), 1);
    if (seen == NULL)
        return -1;
    struct verify_session *s = &v->sessions[v->nsessions];
    memset(s, 0, sizeof(*s));
    s->source = *source;
    s->session_id = session_id;
    s->seen = seen;
    return (int)v->nsessions++;
}

enum verify_result verify_message(struct verify *v, const rdps_source *source, uint32_t session_id,
                                  const void *data, size_t len)
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

    uint64_t index;
    if (pattern_check(v->seed, data, len, s->next_index, &index) != PATTERN_OK) {
        s->corrupt++;
        return VERIFY_MSG_CORRUPT;
    }
    if (index >= v->expect) {
        s->out_of_range++;
        return VERIFY_MSG_OUT_OF_RANGE;
    }
    uint8_t bit = (uint8_t)(1u << (index % 8));
    if (s->seen[index / 8] & bit) {
        s->duplicates++;
        return VERIFY_MSG_DUPLICATE;
    }
    s->seen[index / 8] |= bit;
    if (s->distinct == 0 || index < s->first_index)
        s->first_index = index;
    s->distinct++;
    if (index + 1 < s->next_index)
        s->out_of_order++;
    if (index + 1 > s->next_index)
        s->next_index = index + 1;
    if (s->distinct == v->expect && v->complete < 0)
        v->complete = slot;
    return VERIFY_MSG_NEW;
}

void verify_set_ordered(struct verify *v, bool ordered)
{
    v->ordered = ordered;
}

void verify_loss(struct verify *v, const rdps_source *source, uint32_t session_id, uint64_t count)
{
    int slot = find_session(v, source, session_id);
    if (slot < 0) {
        v->untracked++;
        return;
    }
    v->sessions[slot].loss_events++;
    v->sessions[slot].lost_seqs += count;
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
    }
}

enum verify_verdict verify_verdict(const struct verify *v)
{
    struct verify_session sum;
    verify_totals(v, &sum);
    if (sum.corrupt > 0 || sum.duplicates > 0 || sum.out_of_range > 0)
        return VERIFY_FAILED;
    if (v->ordered && (sum.out_of_order > 0 || sum.loss_events > 0))
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

uint64_t verify_session_holes(const struct verify_session *s)
{
    return s != NULL ? s->next_index - s->distinct : 0;
}
