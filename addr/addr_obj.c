/* SPDX-License-Identifier: BSD-2-Clause */
/* addr_obj.c - the life of a peer or group entry, written once: acquire-or-start, fail, restart,
 * time out, release (AHs retired through the transport). */
#include "addr_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdps_error.h"
#include "rdps_log.h"

void rdps__addr_destroy_id(struct rdma_cm_id **id)
{
    if (*id != NULL)
        rdma_destroy_id(*id);
    *id = NULL;
}

void rdps__addr_obj_fail(struct addr_obj *o, int err, const char *fmt, ...)
{
    char text[sizeof(o->entry.error_text)];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    if (o->entry.state == RDPS_ENTRY_PENDING)
        (*rdps__addr_stat(o->owner, o->kind->failed_stat))++;
    rdps__addr_entry_set_failed(&o->entry, err, "%s", text);
    RDPS_LOG_INF("addr: %s", o->entry.error_text);
}

void rdps__addr_obj_retire_ah(struct addr_obj *o)
{
    o->dest.ah = NULL;
    if (o->ah == NULL)
        return;
    /* Sends posted with it may still be queued: the transport destroys it once they completed. */
    int rc = rdps__verbs_transport_retire_ah(o->owner->transport, o->ah);
    if (rc < 0) {
        /* Better a leaked AH than one destroyed under a posted send. */
        o->owner->stats.ahs_leaked++;
        RDPS_LOG_WRN("addr: %s: the transport cannot take an address handle for deferred "
                     "destruction (%s); it is leaked",
                     o->name, rdps_strerror(rc));
    }
    o->ah = NULL;
}

/* Ends the previous attempt and begins a new one: 0, or the error it failed with at once. */
static int obj_start(struct addr_obj *o)
{
    struct rdps_addr *a = o->owner;

    o->kind->drop(o);
    rdps__addr_entry_start(&o->entry, rdps__addr_now_ms() + a->timeout_ms);
    (*rdps__addr_stat(a, o->kind->started_stat))++;
    if (o->kind->start(o) < 0)
        return rdps__set_err(o->entry.error, "%s", o->entry.error_text);
    return 0;
}

int rdps__addr_obj_acquire(struct rdps_addr *a, struct rdps_addr_table *table,
                           const struct addr_kind *kind, const struct rdps_addr_key *key,
                           const char *name, uint64_t *cache_hits, struct addr_obj **out)
{
    bool must_start;

    *out = NULL;
    struct addr_obj *fresh = calloc(1, kind->size);
    if (fresh == NULL)
        return rdps__set_err(RDPS_ENOMEM, "%s: out of memory", kind->start_api);
    struct rdps_addr_entry *e = rdps__addr_table_acquire(table, key, &fresh->entry, &must_start);
    struct addr_obj *o = (struct addr_obj *)e;
    if (e == &fresh->entry) {
        o->kind = kind;
        o->owner = a;
        o->table = table;
        snprintf(o->name, sizeof(o->name), "%s", name);
        o->cm.kind = CM_OWNER_OBJECT;
        o->cm.object = o;
    } else {
        free(fresh);
        if (!must_start && cache_hits != NULL)
            (*cache_hits)++;
    }
    if (must_start) {
        int err = obj_start(o);
        if (err < 0) {
            rdps__addr_obj_release(o);
            return err;
        }
    }
    *out = o;
    return 0;
}

int rdps__addr_obj_state(struct addr_obj *o, const struct rdps_dest **dest)
{
    int state = rdps__addr_entry_state(&o->entry);
    if (state == 1 && dest != NULL)
        *dest = &o->dest;
    return state;
}

void rdps__addr_obj_release(struct addr_obj *o)
{
    if (!rdps__addr_table_release(o->table, &o->entry))
        return;
    o->kind->drop(o);
    rdps__addr_obj_retire_ah(o);
    free(o);
}

void rdps__addr_obj_restart(struct addr_obj *o)
{
    /* The old AH stays alive (retired) for sends already posted with it. */
    rdps__addr_obj_retire_ah(o);
    if (obj_start(o) < 0)
        RDPS_LOG_WRN("addr: %s failed: %s", o->kind->restart_what, o->entry.error_text);
}

int rdps__addr_obj_restart_now(struct addr_obj *o, size_t stat)
{
    (*rdps__addr_stat(o->owner, stat))++;
    o->entry.invalidations++;
    rdps__addr_obj_restart(o);
    return o->entry.state == RDPS_ENTRY_FAILED
               ? rdps__set_err(o->entry.error, "%s", o->entry.error_text)
               : 0;
}

void rdps__addr_obj_expire(struct rdps_addr_table *table, uint64_t now_ms)
{
    for (struct rdps_addr_entry *e = table->head; e != NULL; e = e->next) {
        if (rdps__addr_entry_check_deadline(e, now_ms)) {
            struct addr_obj *o = (struct addr_obj *)e;
            (*rdps__addr_stat(o->owner, o->kind->failed_stat))++;
            o->kind->timed_out(o);
            o->kind->drop(o); /* cancels whatever step was under way */
        }
    }
}
