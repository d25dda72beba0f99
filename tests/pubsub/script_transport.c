/* SPDX-License-Identifier: BSD-2-Clause */
/* script_transport.c - test transport fed by the test (see script_transport.h). */
#include "script_transport.h"

#include <stdlib.h>
#include <string.h>

#include "rdps_error.h"

#define RX_QUEUE 4096

struct script_rx {
    uint8_t data[SCRIPT_MAX_PAYLOAD];
    uint32_t len;
    struct rdps_source src;
};

/* A unicast destination made for a source (source_dest), found again by that source. */
struct script_dest {
    struct rdps_dest dest;
    struct rdps_source src;
};

struct script_transport {
    struct rdps_transport base;
    uint32_t send_slots, send_used;
    uint8_t *send_mem;
    uint32_t *send_free;
    uint32_t send_free_count;
    struct script_rx *rx;
    uint32_t rx_head, rx_count, rx_lent;
    uint64_t sent;
    uint8_t last_sent[SCRIPT_MAX_PAYLOAD];
    uint32_t last_sent_len;
    struct rdps_transport_stats stats;
    struct script_dest *dests; /* SCRIPT_MAX_DESTS, open addressing by source hash */
    uint32_t dest_count;
    script_sent_fn on_sent;
    void *on_sent_user;
    struct rdps_source self; /* what receivers would see as our source (self_source) */
};

static struct script_transport *to_script(struct rdps_transport *t)
{
    return (struct script_transport *)t;
}

static uint32_t st_max_payload(struct rdps_transport *t)
{
    (void)t;
    return SCRIPT_MAX_PAYLOAD;
}

static int st_claim(struct rdps_transport *t, struct rdps_tx_buf *buf)
{
    struct script_transport *st = to_script(t);
    if (st->send_free_count == 0) {
        st->stats.tx_backpressure++;
        return RDPS_EAGAIN;
    }
    uint32_t slot = st->send_free[--st->send_free_count];
    buf->data = st->send_mem + (size_t)slot * SCRIPT_MAX_PAYLOAD;
    buf->capacity = SCRIPT_MAX_PAYLOAD;
    buf->slot = slot;
    return 0;
}

static void st_abort(struct rdps_transport *t, struct rdps_tx_buf *buf)
{
    struct script_transport *st = to_script(t);
    st->send_free[st->send_free_count++] = buf->slot;
}

/* Sends complete at once: the frame is recorded and its buffer comes back. */
static int st_submit(struct rdps_transport *t, struct rdps_tx_buf *buf, uint32_t len,
                     const struct rdps_dest *const *dests, unsigned ndest)
{
    struct script_transport *st = to_script(t);
    (void)dests;
    if (len > SCRIPT_MAX_PAYLOAD) {
        st_abort(t, buf);
        return RDPS_EMSGSIZE;
    }
    st->sent += ndest;
    for (unsigned i = 0; st->on_sent != NULL && i < ndest; i++) {
        const struct script_dest *d = (const struct script_dest *)dests[i];
        bool unicast = st->dests != NULL && d >= st->dests && d < st->dests + SCRIPT_MAX_DESTS;
        st->on_sent(st->on_sent_user, unicast ? &d->src : NULL, buf->data, len);
    }
    memcpy(st->last_sent, buf->data, len);
    st->last_sent_len = len;
    st->stats.tx_datagrams += ndest;
    st->stats.tx_bytes += (uint64_t)len * ndest;
    st_abort(t, buf);
    return 0;
}

/* Registered regions (a reliable publisher's ring): each submit_mem is a copy sent at once, so
 * the region's cookie completes at once (as the authenticating interceptor's do). */
static int st_mem_register(struct rdps_transport *t, void *addr, size_t len,
                           struct rdps_tx_mem **out)
{
    struct rdps_tx_mem *m = calloc(1, sizeof(*m));
    if (m == NULL)
        return RDPS_ENOMEM;
    m->addr = addr;
    m->len = len;
    m->owner = t;
    *out = m;
    return 0;
}

static int st_mem_deregister(struct rdps_transport *t, struct rdps_tx_mem *m)
{
    if (m == NULL || m->owner != t)
        return RDPS_EINVAL;
    free(m);
    return 0;
}

static int st_submit_mem(struct rdps_transport *t, struct rdps_tx_mem *m, size_t offset,
                         uint32_t len, const struct rdps_dest *const *dests, unsigned ndest,
                         uint64_t cookie)
{
    if (m == NULL || m->owner != t || offset > m->len || len > m->len - offset ||
        cookie <= m->submitted || ndest == 0)
        return RDPS_EINVAL;
    struct rdps_tx_buf buf;
    int rc = st_claim(t, &buf);
    if (rc < 0)
        return rc;
    memcpy(buf.data, m->addr + offset, len);
    rc = st_submit(t, &buf, len, dests, ndest);
    if (rc == 0)
        rdps__tx_mem_skip(m, cookie);
    return rc;
}

static int st_flush(struct rdps_transport *t)
{
    (void)t;
    return 0;
}

static int st_poll(struct rdps_transport *t, struct rdps_rx_datagram *rx, int max)
{
    struct script_transport *st = to_script(t);
    int n = 0;
    while (n < max && st->rx_lent < st->rx_count) {
        const struct script_rx *r = &st->rx[(st->rx_head + st->rx_lent) % RX_QUEUE];
        struct rdps_rx_datagram *d = &rx[n++];
        memset(d, 0, sizeof(*d));
        d->data = r->data;
        d->len = r->len;
        d->src_qpn = r->src.qpn;
        d->has_src_gid = r->src.has_gid != 0;
        memcpy(d->src_gid, r->src.gid, 16);
        d->src_lid = r->src.lid;
        st->rx_lent++;
        st->stats.rx_datagrams++;
        st->stats.rx_bytes += r->len;
    }
    return n;
}

static void st_rx_release(struct rdps_transport *t, struct rdps_rx_datagram *rx, int count)
{
    struct script_transport *st = to_script(t);
    (void)rx;
    /* Released in the order polled. */
    st->rx_head = (st->rx_head + (uint32_t)count) % RX_QUEUE;
    st->rx_count -= (uint32_t)count;
    st->rx_lent -= (uint32_t)count;
}

static int st_event_fd(struct rdps_transport *t)
{
    (void)t;
    return -1;
}

static int st_arm(struct rdps_transport *t)
{
    (void)t;
    return 0;
}

static int st_next_event(struct rdps_transport *t, enum rdps_transport_event_type *type)
{
    (void)t;
    (void)type;
    return 0;
}

static void st_get_stats(const struct rdps_transport *t, struct rdps_transport_stats *out)
{
    *out = ((const struct script_transport *)t)->stats;
}

/* A destination per source, kept for the transport's life (an AH cache that never evicts). */
static int st_source_dest(struct rdps_transport *t, const struct rdps_source *src,
                          const struct rdps_dest **out)
{
    struct script_transport *st = to_script(t);
    *out = NULL;
    if (src == NULL || src->qpn == 0)
        return RDPS_EINVAL;
    uint32_t i = (uint32_t)rdps__source_hash(src, 1) & (SCRIPT_MAX_DESTS - 1);
    for (;; i = (i + 1) & (SCRIPT_MAX_DESTS - 1)) {
        struct script_dest *d = &st->dests[i];
        if (d->src.qpn == 0) {
            if (st->dest_count == SCRIPT_MAX_DESTS / 2)
                return RDPS_EAGAIN;
            st->dest_count++;
            d->src = *src;
            d->dest.remote_qpn = src->qpn;
            d->dest.ah = d;
        } else if (!rdps__source_equal(&d->src, src)) {
            continue;
        }
        *out = &d->dest;
        return 0;
    }
}

/* Held destinations are the same never-evicted ones. */
static int st_dest_acquire(struct rdps_transport *t, const struct rdps_source *src,
                           const struct rdps_dest **out)
{
    return st_source_dest(t, src, out);
}

static void st_dest_release(struct rdps_transport *t, const struct rdps_dest *dest)
{
    (void)t;
    (void)dest;
}

static int st_self_source(struct rdps_transport *t, const struct rdps_dest *dest,
                          struct rdps_source *out)
{
    (void)dest;
    *out = to_script(t)->self;
    return 0;
}

static void st_destroy(struct rdps_transport *t)
{
    struct script_transport *st = to_script(t);
    free(st->dests);
    free(st->send_mem);
    free(st->send_free);
    free(st->rx);
    free(st);
}

static const struct rdps_transport_ops script_ops = {
    .name = "script",
    .max_payload = st_max_payload,
    .claim = st_claim,
    .abort = st_abort,
    .submit = st_submit,
    .flush = st_flush,
    .poll = st_poll,
    .rx_release = st_rx_release,
    .event_fd = st_event_fd,
    .arm = st_arm,
    .next_event = st_next_event,
    .get_stats = st_get_stats,
    .destroy = st_destroy,
    .source_dest = st_source_dest,
    .dest_acquire = st_dest_acquire,
    .dest_release = st_dest_release,
    .self_source = st_self_source,
    .mem_register = st_mem_register,
    .mem_deregister = st_mem_deregister,
    .submit_mem = st_submit_mem,
};

int script_transport_create(uint32_t send_slots, struct rdps_transport **out)
{
    struct script_transport *st = calloc(1, sizeof(*st));
    if (st == NULL)
        return RDPS_ENOMEM;
    st->base.ops = &script_ops;
    st->send_slots = send_slots ? send_slots : 64;
    st->send_mem = calloc(st->send_slots, SCRIPT_MAX_PAYLOAD);
    st->send_free = calloc(st->send_slots, sizeof(*st->send_free));
    st->rx = calloc(RX_QUEUE, sizeof(*st->rx));
    st->dests = calloc(SCRIPT_MAX_DESTS, sizeof(*st->dests));
    if (st->send_mem == NULL || st->send_free == NULL || st->rx == NULL || st->dests == NULL) {
        st_destroy(&st->base);
        return RDPS_ENOMEM;
    }
    for (uint32_t i = 0; i < st->send_slots; i++)
        st->send_free[st->send_free_count++] = i;
    st->self = (struct rdps_source){.gid = {0xfe, 0x80, [15] = 0xff}, .qpn = 1, .has_gid = 1};
    *out = &st->base;
    return 0;
}

int script_transport_inject(struct rdps_transport *t, const struct rdps_source *src,
                            const void *data, uint32_t len)
{
    struct script_transport *st = to_script(t);
    if (st->rx_count == RX_QUEUE)
        return RDPS_ENOSPC;
    if (len > SCRIPT_MAX_PAYLOAD)
        len = SCRIPT_MAX_PAYLOAD; /* a device never delivers more than its MTU */
    struct script_rx *r = &st->rx[(st->rx_head + st->rx_count) % RX_QUEUE];
    memcpy(r->data, data, len);
    r->len = len;
    if (src != NULL)
        r->src = *src;
    else
        memset(&r->src, 0, sizeof(r->src));
    st->rx_count++;
    return 0;
}

uint64_t script_transport_sent(const struct rdps_transport *t)
{
    return ((const struct script_transport *)t)->sent;
}

void script_transport_on_sent(struct rdps_transport *t, script_sent_fn fn, void *user)
{
    struct script_transport *st = to_script(t);
    st->on_sent = fn;
    st->on_sent_user = user;
}

const uint8_t *script_transport_last_sent(const struct rdps_transport *t, uint32_t *len)
{
    const struct script_transport *st = (const struct script_transport *)t;
    *len = st->last_sent_len;
    return st->last_sent;
}

/* ---- membership: every join completes at once ---- */

static struct rdps_dest script_group_dest = {.ah = NULL, .remote_qpn = 0xffffff, .remote_qkey = 0};

static int sm_join(void *impl, uint32_t group, enum rdps_member_mode mode, void **handle)
{
    (void)impl;
    (void)group;
    (void)mode;
    *handle = &script_group_dest;
    return 0;
}

static int sm_state(void *handle, const struct rdps_dest **dest)
{
    *dest = handle;
    return 1;
}

static void sm_leave(void *impl, void *handle)
{
    (void)impl;
    (void)handle;
}

static int sm_fd(void *impl)
{
    (void)impl;
    return -1;
}

static int sm_process(void *impl)
{
    (void)impl;
    return 0;
}

static void sm_destroy(void *impl)
{
    (void)impl;
}

static const struct rdps_membership_ops script_membership_ops = {
    .join = sm_join,
    .state = sm_state,
    .leave = sm_leave,
    .fd = sm_fd,
    .process = sm_process,
    .destroy = sm_destroy,
};

int script_membership_create(const struct rdps_membership_ops **ops, void **impl)
{
    *ops = &script_membership_ops;
    *impl = NULL;
    return 0;
}

int script_ctx_create(const rdps_config *cfg_in, const struct rdps_source *self,
                      uint64_t (*clock)(void *user), void *clock_user, rdps_ctx_t **out,
                      struct rdps_transport **transport)
{
    rdps_config cfg;
    struct rdps_transport *t;
    const struct rdps_membership_ops *ops;
    void *impl;
    if (cfg_in)
        cfg = *cfg_in;
    else
        rdps_config_init(&cfg);
    int rc = script_transport_create(64, &t);
    if (rc < 0)
        return rc;
    to_script(t)->self = *self;
    script_membership_create(&ops, &impl);
    rc = rdps__ctx_create_over(&cfg, t, ops, impl, out);
    if (rc < 0)
        return rc;
    rdps_ctx_t *ctx = rdps__ctx_of_handle(*out);
    ctx->self_qpn = self->qpn;
    memcpy(ctx->self_gid, self->gid, 16);
    ctx->has_self_gid = self->has_gid != 0;
    ctx->self_lid = self->lid;
    if (clock != NULL)
        rdps__ctx_set_clock(*out, clock, clock_user);
    *transport = t;
    return 0;
}
