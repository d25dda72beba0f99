/* SPDX-License-Identifier: BSD-2-Clause */
/* addr_table.c - keys, reference counts, state and deadlines of resolved peers and joined groups.
 */
#include "rdps_addr_table.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "rdps_error.h"

int rdps__addr_key_init(struct rdps_addr_key *key, const struct sockaddr *sa, uint16_t default_port,
                        int mode)
{
    memset(key, 0, sizeof(*key));
    key->mode = mode;
    if (sa == NULL)
        return rdps__set_err(RDPS_EINVAL, "no address given");
    /* Only the meaningful fields are copied so sin_zero or scope garbage never splits a key. */
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        struct sockaddr_in *out = (struct sockaddr_in *)&key->addr;
        out->sin_family = AF_INET;
        out->sin_addr = in->sin_addr;
        out->sin_port = in->sin_port != 0 ? in->sin_port : htons(default_port);
        return 0;
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        struct sockaddr_in6 *out6 = (struct sockaddr_in6 *)&key->addr;
        out6->sin6_family = AF_INET6;
        out6->sin6_addr = in6->sin6_addr;
        out6->sin6_scope_id = in6->sin6_scope_id;
        out6->sin6_port = in6->sin6_port != 0 ? in6->sin6_port : htons(default_port);
        return 0;
    }
    return rdps__set_err(RDPS_EINVAL, "address family %d is not IPv4 or IPv6", sa->sa_family);
}

bool rdps__addr_key_equal(const struct rdps_addr_key *a, const struct rdps_addr_key *b)
{
    /* Keys are fully normalized (zeroed padding), so bytes compare exactly. */
    return a->mode == b->mode && memcmp(&a->addr, &b->addr, sizeof(a->addr)) == 0;
}

socklen_t rdps__addr_key_len(const struct rdps_addr_key *key)
{
    return key->addr.ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                           : sizeof(struct sockaddr_in);
}

const char *rdps__sockaddr_format(const struct sockaddr *sa, char *buf, size_t len)
{
    char host[INET6_ADDRSTRLEN] = "?";
    unsigned port = 0;

    if (len == 0)
        return buf;
    if (sa != NULL && sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
        port = ntohs(in->sin_port);
        if (port != 0)
            snprintf(buf, len, "%s:%u", host, port);
        else
            snprintf(buf, len, "%s", host);
    } else if (sa != NULL && sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
        port = ntohs(in6->sin6_port);
        if (port != 0)
            snprintf(buf, len, "[%s]:%u", host, port);
        else
            snprintf(buf, len, "%s", host);
    } else {
        snprintf(buf, len, "(address family %d)", sa != NULL ? sa->sa_family : -1);
    }
    return buf;
}

const char *rdps__addr_key_format(const struct rdps_addr_key *key, char *buf, size_t len)
{
    return rdps__sockaddr_format((const struct sockaddr *)&key->addr, buf, len);
}

void rdps__addr_table_init(struct rdps_addr_table *t)
{
    t->head = NULL;
    t->count = 0;
}

struct rdps_addr_entry *rdps__addr_table_find(const struct rdps_addr_table *t,
                                              const struct rdps_addr_key *key)
{
    for (struct rdps_addr_entry *e = t->head; e != NULL; e = e->next)
        if (rdps__addr_key_equal(&e->key, key))
            return e;
    return NULL;
}

struct rdps_addr_entry *rdps__addr_table_acquire(struct rdps_addr_table *t,
                                                 const struct rdps_addr_key *key,
                                                 struct rdps_addr_entry *fresh, bool *must_start)
{
    struct rdps_addr_entry *e = rdps__addr_table_find(t, key);

    if (e != NULL) {
        e->refcount++;
        *must_start = e->state == RDPS_ENTRY_FAILED;
        if (*must_start) {
            e->state = RDPS_ENTRY_PENDING;
            e->error = 0;
            e->error_text[0] = '\0';
        }
        return e;
    }
    memset(fresh, 0, sizeof(*fresh));
    fresh->key = *key;
    fresh->refcount = 1;
    fresh->state = RDPS_ENTRY_PENDING;
    fresh->next = t->head;
    t->head = fresh;
    t->count++;
    *must_start = true;
    return fresh;
}

bool rdps__addr_table_release(struct rdps_addr_table *t, struct rdps_addr_entry *e)
{
    if (e->refcount > 1) {
        e->refcount--;
        return false;
    }
    for (struct rdps_addr_entry **link = &t->head; *link != NULL; link = &(*link)->next) {
        if (*link == e) {
            *link = e->next;
            t->count--;
            break;
        }
    }
    e->refcount = 0;
    e->next = NULL;
    return true;
}

uint32_t rdps__addr_entry_start(struct rdps_addr_entry *e, uint64_t deadline_ms)
{
    e->state = RDPS_ENTRY_PENDING;
    e->error = 0;
    e->error_text[0] = '\0';
    e->deadline_ms = deadline_ms;
    e->starts++;
    return ++e->generation;
}

void rdps__addr_entry_set_ready(struct rdps_addr_entry *e)
{
    e->state = RDPS_ENTRY_READY;
    e->error = 0;
    e->error_text[0] = '\0';
}

void rdps__addr_entry_set_failed(struct rdps_addr_entry *e, int err, const char *fmt, ...)
{
    va_list ap;

    if (e->state == RDPS_ENTRY_FAILED)
        return;
    e->state = RDPS_ENTRY_FAILED;
    e->error = err < 0 ? err : RDPS_EIO;
    va_start(ap, fmt);
    vsnprintf(e->error_text, sizeof(e->error_text), fmt, ap);
    va_end(ap);
}

uint32_t rdps__addr_entry_invalidate(struct rdps_addr_entry *e, uint64_t deadline_ms)
{
    e->invalidations++;
    return rdps__addr_entry_start(e, deadline_ms);
}

bool rdps__addr_entry_check_deadline(struct rdps_addr_entry *e, uint64_t now_ms)
{
    char name[INET6_ADDRSTRLEN + 16];

    if (e->state != RDPS_ENTRY_PENDING || now_ms < e->deadline_ms)
        return false;
    rdps__addr_entry_set_failed(e, RDPS_ETIMEDOUT, "%s: no answer before the deadline (timed out)",
                                rdps__addr_key_format(&e->key, name, sizeof(name)));
    return true;
}

int rdps__addr_entry_state(const struct rdps_addr_entry *e)
{
    switch (e->state) {
    case RDPS_ENTRY_PENDING:
        return 0;
    case RDPS_ENTRY_READY:
        return 1;
    default:
        return rdps__set_err(e->error, "%s", e->error_text);
    }
}

enum rdps_addr_action rdps__addr_peer_action(const struct rdps_addr_entry *e,
                                             enum rdps_addr_event_kind ev)
{
    switch (ev) {
    case RDPS_ADDR_EV_ADDR_RESOLVED:
    case RDPS_ADDR_EV_ROUTE_RESOLVED:
        return e->state == RDPS_ENTRY_PENDING ? RDPS_ADDR_ACT_NEXT_STEP : RDPS_ADDR_ACT_IGNORE;
    case RDPS_ADDR_EV_ESTABLISHED:
        return e->state == RDPS_ENTRY_PENDING ? RDPS_ADDR_ACT_READY : RDPS_ADDR_ACT_IGNORE;
    case RDPS_ADDR_EV_ERROR:
        return e->state == RDPS_ENTRY_PENDING ? RDPS_ADDR_ACT_FAIL : RDPS_ADDR_ACT_IGNORE;
    case RDPS_ADDR_EV_ADDR_CHANGE:
        /* A failed peer is retried by the next resolve_start, not behind the caller's back. */
        return e->state == RDPS_ENTRY_FAILED ? RDPS_ADDR_ACT_IGNORE : RDPS_ADDR_ACT_RESTART;
    case RDPS_ADDR_EV_DEVICE_REMOVAL:
        return e->state == RDPS_ENTRY_FAILED ? RDPS_ADDR_ACT_IGNORE : RDPS_ADDR_ACT_FAIL;
    default:
        return RDPS_ADDR_ACT_IGNORE;
    }
}

enum rdps_addr_action rdps__addr_group_action(const struct rdps_addr_entry *e,
                                              bool send_only_pending_fallback,
                                              enum rdps_addr_event_kind ev)
{
    switch (ev) {
    case RDPS_ADDR_EV_MC_JOIN:
        return e->state == RDPS_ENTRY_PENDING ? RDPS_ADDR_ACT_READY : RDPS_ADDR_ACT_IGNORE;
    case RDPS_ADDR_EV_MC_ERROR:
        if (e->state == RDPS_ENTRY_FAILED)
            return RDPS_ADDR_ACT_IGNORE;
        if (e->state == RDPS_ENTRY_PENDING) {
            /* The first send-only join never completed: the fabric may not do send-only. */
            if (send_only_pending_fallback && e->invalidations == 0)
                return RDPS_ADDR_ACT_FALLBACK_FULL;
            /* A join that never completed fails: re-joining it could loop forever. */
            return RDPS_ADDR_ACT_FAIL;
        }
        /* A joined group lost (SM restart, port event): the MLID may change, join again. */
        return RDPS_ADDR_ACT_RESTART;
    case RDPS_ADDR_EV_ADDR_CHANGE:
        return e->state == RDPS_ENTRY_FAILED ? RDPS_ADDR_ACT_IGNORE : RDPS_ADDR_ACT_RESTART;
    case RDPS_ADDR_EV_DEVICE_REMOVAL:
        return e->state == RDPS_ENTRY_FAILED ? RDPS_ADDR_ACT_IGNORE : RDPS_ADDR_ACT_FAIL;
    default:
        return RDPS_ADDR_ACT_IGNORE;
    }
}
