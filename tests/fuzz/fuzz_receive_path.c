/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_receive_path.c - libFuzzer harness: the whole receive path of a ctx (decode, own-frame
 * filter, reassembly, discovery, subscriber callbacks) fed by honest publishers and spoofed
 * senders through the script transport, on a fake clock. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "discovery_engine.h"
#include "fuzz_publisher.h"
#include "rdps_endian.h"
#include "rdps_reasm.h"
#include "receive_path_ops.h"
#include "script_transport.h"

/*
 * Model
 * -----
 * One real ctx (rdps__ctx_create_over with the script transport and an always-joined
 * membership) with subscribers on three topics and a publisher of its own. Four honest publisher
 * sessions on three sources (two RoCE GIDs, one InfiniBand LID without GRH) send messages whose
 * every byte is a function of (publisher, session, first sequence, ordinal, length), packed by
 * fuzz_publisher.h as rdps's publishers pack them (small ones several to a SCRIPT_MAX_PAYLOAD
 * datagram, long ones fragmented), in order or through a pool that the input replays, reorders,
 * duplicates or never sends. Eight spoofed sources send anything: raw bytes,
 * headers with chosen fields (honest session ids, sequences and ordinals included, counts that
 * do not match, batches whose records do), copies of honest
 * frames with a byte changed, announcements (well-formed and garbage), heartbeats, NAKs and
 * STATUS. Each spoofed source differs from every honest one in GID, QPN or LID: one has an honest
 * GID with another QPN, one an honest QPN with another GID, one an honest QPN with another LID,
 * one an honest LID with another QPN, one our GID, one our QPN, one no GRH and QPN 0, one an
 * honest QPN without GRH. A sender that forges a source exactly (GID and QPN, or LID and QPN) is
 * indistinguishable from it (docs/security.md) and is not modelled: the honest sources
 * only ever send what their publishers produce. Copies sent as our own source must be dropped as
 * our looped-back multicast. The input also moves the fake clock (timeouts, expiry, announce
 * ticks), creates and destroys subscribers and arms callbacks to destroy, create, send, poll or
 * destroy the ctx from inside a delivery.
 *
 * Invariants (abort() on violation, so libFuzzer reports it):
 *  - every message delivered with an honest (source, session) was published by it: same first
 *    sequence, same ordinal, same topic, same length, same bytes, the datagrams it was sent in;
 *  - a GAP or LOSS event of an honest session counts only messages its publisher numbered, and
 *    none a GAP to the same subscriber counted before (while no stream was dropped);
 *  - none is delivered twice to a subscriber unless a stream was dropped (evicted, expired,
 *    over its source's quota) in between: then duplicated frames start afresh, by design;
 *  - messages with our own source come only from our publisher, during its send;
 *  - every message and event names a source the harness used, reaches a live subscriber of
 *    its topic, and a GAP on an honest source names one of its sessions;
 *  - after every poll: reassembler streams, sources, partials and arena bytes within the
 *    configured caps, every source within its per-source quotas (streams, partials, arena
 *    chunks; every chunk in use charged to a source), discovery peers and remote-only peers
 *    within their caps, discovery's own consistency check
 *    passes, poll never fails, and a nested poll from a callback returns RDPS_EBUSY;
 *  - ASan/UBSan/LSan: no memory error, no undefined behaviour, nothing leaked.
 * Hostile messages may carry anything; they are only read whole (ASan checks the bounds).
 *
 * One file of ~1000 lines on purpose (the honest publishers are fuzz_publisher.h's): the input
 * language (receive_path_ops.h), the frames each operation builds and the checker are one model
 * sharing one state.
 */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_MESSAGE    24576u /* rdps_config.max_message_size */
#define POOL           128
#define MAX_PUBLISHED  4096
#define PUBLISHED_HASH 8192
#define LOCAL_PUB      RP_PUBLISHERS        /* publisher index of the ctx's own publisher */
#define SOURCES        (3 + RP_HOSTILE + 1) /* honest, spoofed, self */
#define SRC_SELF_INDEX (3 + RP_SRC_SELF)

#define FAIL(why)                                                   \
    do {                                                            \
        fprintf(stderr, "fuzz_receive_path: invariant: %s\n", why); \
        abort();                                                    \
    } while (0)

static const char *const topic_names[RP_TOPICS] = {"fz.a", "fz.b", "fz.c"};
static const unsigned slot_topic[RP_SLOTS] = {0, 0, 1, 2};

/* Honest sources 0..2, spoofed 3..10, ours 11 (see the model above). */
static const struct rdps_source sources[SOURCES] = {
    {.gid = {0xfe, 0x80, [15] = 0x10}, .qpn = 0x200, .has_gid = 1},
    {.gid = {0xfe, 0x80, [15] = 0x11}, .qpn = 0x201, .has_gid = 1},
    {.qpn = 0x202, .lid = 9},
    {.gid = {0xfe, 0x80, [15] = 0x10}, .qpn = 0x300, .has_gid = 1},
    {.gid = {0xfe, 0x80, [15] = 0x66}, .qpn = 0x200, .has_gid = 1},
    {.qpn = 0x202, .lid = 10},
    {.qpn = 0x203, .lid = 9},
    {.gid = {0xfe, 0x80, [15] = 0x01}, .qpn = 78, .has_gid = 1},
    {.gid = {0xfe, 0x80, [15] = 0x67}, .qpn = 77, .has_gid = 1},
    {.qpn = 0}, /* injected as NULL: the anonymous source */
    {.qpn = 0x201},
    {.gid = {0xfe, 0x80, [15] = 0x01}, .qpn = 77, .has_gid = 1}, /* the ctx itself */
};

struct publisher {
    unsigned source, topic;
    uint32_t session;
};
static const struct publisher publishers[RP_PUBLISHERS] = {
    {0, 0, 0x1001},
    {1, 1, 0x1002},
    {1, 0, 0x1003},
    {2, 0, 0x1004},
};

struct published {
    uint8_t pub;
    uint8_t delivered; /* bit per subscriber slot */
    uint32_t session, first_seq, ordinal, len, frags;
    uint64_t drops_at_delivery;
};

struct pooled {
    uint8_t bytes[SCRIPT_MAX_PAYLOAD];
    uint32_t len;
    uint8_t pub;
};

struct slot {
    rdps_sub_t *sub;
    unsigned gen; /* bumped at every create: callbacks name the instance they belong to */
};

struct harness {
    rdps_ctx_t *ctx;
    rdps_ctx_t *obj; /* the ctx behind the handle: its insides, valid until ctx_gone() */
    struct rdps_transport *t;
    rdps_pub_t *pub;
    struct slot slots[RP_SLOTS];
    uint64_t topic_ids[RP_TOPICS];
    struct fuzz_pub pubs[RP_PUBLISHERS];
    uint32_t ord0[RP_PUBLISHERS]; /* each publisher's first ordinal */
    uint32_t emit_pub;            /* the publisher whose datagrams are being placed */
    bool emit_now;
    uint32_t hostile_ord[RP_HOSTILE];
    /* GAP events per subscriber slot and publisher: messages before gap_end were counted. */
    bool gap_seen[RP_SLOTS][RP_PUBLISHERS];
    uint32_t gap_end[RP_SLOTS][RP_PUBLISHERS];
    uint64_t gap_epoch[RP_SLOTS][RP_PUBLISHERS];
    struct published published[MAX_PUBLISHED];
    int32_t published_hash[PUBLISHED_HASH];
    uint32_t published_count;
    struct pooled pool[POOL];
    uint32_t pool_count, pool_next;
    uint64_t now;
    bool held, armed, in_callback;
    uint8_t action, action_arg;
    unsigned local_sending;
    uint64_t honest_msgs, hostile_msgs, local_msgs, events;
    uint8_t msg[RP_MAX_MSG + 1], nested_msg[RP_MAX_MSG + 1], expect[MAX_MESSAGE];
};

static struct harness hx;

/*
 * One script transport serves every input: its 4 MiB receive queue, allocated and poisoned per
 * input, would take most of the run time under ASan. The ctx gets it with a copy of its ops
 * whose destroy only drains what is still queued (a callback may destroy the ctx mid-batch), so
 * each input starts from an empty queue; frames sent before this input are not looked at.
 */
static struct rdps_transport *shared_transport;
static const struct rdps_transport_ops *script_ops;
static struct rdps_transport_ops kept_ops;
static uint64_t sent_before_input;

static void kept_destroy(struct rdps_transport *t)
{
    struct rdps_rx_datagram rx[32];
    int n;
    while ((n = script_ops->poll(t, rx, 32)) > 0)
        script_ops->rx_release(t, rx, n);
}

static uint64_t fake_clock(void *user);

/* script_ctx_create() over the shared transport. */
static void ctx_create(const rdps_config *cfg, const struct rdps_source *self)
{
    const struct rdps_membership_ops *ops;
    void *impl;
    if (shared_transport == NULL) {
        if (script_transport_create(64, &shared_transport) != 0)
            FAIL("script transport not created");
        script_ops = shared_transport->ops;
        kept_ops = *script_ops;
        kept_ops.destroy = kept_destroy;
        shared_transport->ops = &kept_ops;
    }
    script_membership_create(&ops, &impl);
    if (rdps__ctx_create_over(cfg, shared_transport, ops, impl, &hx.ctx) != 0) {
        fprintf(stderr, "fuzz_receive_path: %s\n", rdps_last_error_message());
        FAIL("ctx over the script transport not created");
    }
    hx.t = shared_transport;
    hx.obj = rdps__ctx_of_handle(hx.ctx);
    hx.obj->self_qpn = self->qpn;
    memcpy(hx.obj->self_gid, self->gid, 16);
    hx.obj->has_self_gid = self->has_gid != 0;
    hx.obj->self_lid = self->lid;
    rdps__ctx_set_clock(hx.ctx, fake_clock, NULL);
    sent_before_input = script_transport_sent(hx.t);
}

static uint64_t fake_clock(void *user)
{
    (void)user;
    return hx.now;
}

/* Who sent which message at which sequence, hashed (the table key). Our own publisher's
 * messages are known by their ordinal alone: batching decides their datagram after the send. */
static uint32_t message_key(uint32_t pub, uint32_t session, uint32_t first_seq, uint32_t ordinal)
{
    uint32_t h = (pub + 1) * 0x9E3779B1u ^ session * 0x85EBCA77u ^ first_seq * 0xC2B2AE3Du ^
                 ordinal * 0x27D4EB2Fu;
    return h ^ (h >> 15);
}

static uint32_t key_seq(uint32_t pub, uint32_t first_seq)
{
    return pub == LOCAL_PUB ? 0 : first_seq;
}

static uint32_t published_slot(uint32_t pub, uint32_t session, uint32_t first_seq, uint32_t ordinal)
{
    return message_key(pub, session, first_seq, ordinal) & (PUBLISHED_HASH - 1);
}

static struct published *published_find(uint32_t pub, uint32_t session, uint32_t first_seq,
                                        uint32_t ordinal)
{
    first_seq = key_seq(pub, first_seq);
    for (uint32_t i = published_slot(pub, session, first_seq, ordinal);;
         i = (i + 1) & (PUBLISHED_HASH - 1)) {
        int32_t p = hx.published_hash[i];
        if (p < 0)
            return NULL;
        struct published *m = &hx.published[p];
        if (m->pub == pub && m->session == session && m->first_seq == first_seq &&
            m->ordinal == ordinal)
            return m;
    }
}

/* False when the table is full (the harness then stops publishing). */
static bool published_add(uint32_t pub, uint32_t session, uint32_t first_seq, uint32_t ordinal,
                          uint32_t len, uint32_t frags)
{
    first_seq = key_seq(pub, first_seq);
    struct published *m = published_find(pub, session, first_seq, ordinal);
    if (m == NULL) {
        if (hx.published_count == MAX_PUBLISHED)
            return false;
        uint32_t i = published_slot(pub, session, first_seq, ordinal);
        while (hx.published_hash[i] >= 0)
            i = (i + 1) & (PUBLISHED_HASH - 1);
        hx.published_hash[i] = (int32_t)hx.published_count;
        m = &hx.published[hx.published_count++];
    }
    /* A sequence reused (only after 2^32 of them, or a skip that wrapped) is a new message. */
    memset(m, 0, sizeof(*m));
    m->pub = (uint8_t)pub;
    m->session = session;
    m->first_seq = first_seq;
    m->ordinal = ordinal;
    m->len = len;
    m->frags = frags;
    return true;
}

static int source_index(const struct rdps_source *s)
{
    for (int i = 0; i < SOURCES; i++)
        if (rdps__source_equal(&sources[i], s))
            return i;
    return -1;
}

static uint64_t streams_dropped(void)
{
    const struct rdps_reasm_counters *c = rdps__reasm_counters(hx.obj->reasm);
    return c->sessions_evicted + c->sessions_expired + c->sessions_source_quota;
}

/* Per-host quotas, read from the layers' private tables: every host within its streams (the
 * stream table) and its partials and chunks (the assembly layer), each the sum of its sources',
 * and every arena chunk in use charged to one host. */
static void check_source_quotas(const struct rdps_reasm *r)
{
    const struct rdps_rx_streams *t = &r->streams;
    const struct rdps_rx_assembly *a = &r->assembly;
    uint32_t held = 0, hosts = 0, chunks = 0;
    for (uint32_t b = 0; b <= t->src_mask; b++) {
        for (int32_t i = t->src_buckets[b]; i != RDPS_RX_NONE; i = t->sources[i].hash_next) {
            const struct rdps_rx_source *e = &t->sources[i];
            if (++held > t->cfg.max_sessions)
                FAIL("more sources than the table holds");
            if (!rdps__source_same_host(&e->id, &t->hosts[e->host].id))
                FAIL("a source under another host");
        }
        for (int32_t h = t->host_buckets[b]; h != RDPS_RX_NONE; h = t->hosts[h].hash_next) {
            const struct rdps_rx_host *e = &t->hosts[h];
            uint32_t streams = 0;
            if (e->streams > t->host_max_streams)
                FAIL("a host above its stream quota");
            if (++hosts > t->cfg.max_sessions)
                FAIL("more hosts than the table holds");
            for (int32_t i = e->src_head; i != RDPS_RX_NONE; i = t->sources[i].host_next)
                streams += t->sources[i].streams;
            if (streams != e->streams)
                FAIL("a host's streams are not the sum of its sources'");
        }
    }
    for (uint32_t h = 0; h < t->cfg.max_sessions; h++) {
        const struct rdps_rx_asm_host *e = &a->hosts[h];
        uint32_t partials = 0, host_chunks = 0;
        if (e->partials > a->host_max_partials || e->chunks > a->host_max_chunks)
            FAIL("a host above its reassembly quota");
        for (int32_t i = e->src_head; i != RDPS_RX_NONE; i = a->sources[i].host_next) {
            partials += a->sources[i].partials;
            host_chunks += a->sources[i].chunks;
        }
        if (partials != e->partials || host_chunks != e->chunks)
            FAIL("a host's partials or chunks are not the sum of its sources'");
        chunks += e->chunks;
    }
    if (held != rdps__reasm_source_count(r) || hosts != rdps__reasm_host_count(r) ||
        chunks != a->chunk_count - a->chunks_free)
        FAIL("arena chunks or sources not accounted to a host");
}

static void check_bounds(void)
{
    const struct rdps_reasm *r = hx.obj->reasm;
    check_source_quotas(r);
    if (rdps__reasm_stream_count(r) > r->cfg.max_sessions ||
        rdps__reasm_source_count(r) > r->cfg.max_sessions)
        FAIL("reassembler streams or sources above max_sessions");
    if (rdps__reasm_partial_count(r) > r->cfg.max_partials)
        FAIL("partial messages above max_partials");
    if (rdps__reasm_arena_used(r) > r->cfg.reasm_cap_bytes)
        FAIL("arena bytes above reassembly_memory");
    const struct rdps_discovery *d = hx.obj->discovery;
    const char *why = NULL;
    if (rdps__disc_peer_count(d) > d->cfg.max_peers ||
        rdps__disc_remote_only_count(d) > d->cfg.max_remote_only)
        FAIL("discovery peers above their caps");
    if (rdps__disc_check(d, &why) != 0)
        FAIL(why ? why : "discovery tables disagree");
}

/* The ctx was destroyed from a callback and freed by the outermost call: forget every handle. */
static void ctx_gone(void)
{
    hx.ctx = NULL;
    hx.obj = NULL;
    hx.pub = NULL;
    for (unsigned i = 0; i < RP_SLOTS; i++)
        hx.slots[i].sub = NULL;
}

static void poll_ctx(int budget)
{
    for (;;) {
        int rc = rdps_ctx_poll(hx.ctx, budget);
        if (rc == RDPS_ECLOSED) {
            ctx_gone();
            return;
        }
        if (rc < 0)
            FAIL("rdps_ctx_poll failed");
        if (hx.obj->callback_depth != 0)
            FAIL("callback depth not back to zero");
        check_bounds();
        if (rc == 0 || budget > 0)
            return;
    }
}

static void settle(void)
{
    if (hx.ctx != NULL && !hx.held)
        poll_ctx(0);
}

static void inject(unsigned src, const uint8_t *dgram, size_t len)
{
    if (hx.ctx == NULL)
        return;
    if (len > SCRIPT_MAX_PAYLOAD)
        len = SCRIPT_MAX_PAYLOAD;
    const struct rdps_source *s = src == 3 + 6 ? NULL : &sources[src];
    while (script_transport_inject(hx.t, s, dgram, (uint32_t)len) == RDPS_ENOSPC) {
        poll_ctx(0);
        if (hx.ctx == NULL)
            return;
    }
}

static void on_message(void *user, const void *data, size_t len, const rdps_msg_info *info);
static void on_event(void *user, const rdps_event *ev);

static void slot_create(unsigned i)
{
    struct slot *sl = &hx.slots[i % RP_SLOTS];
    if (hx.ctx == NULL || sl->sub != NULL)
        return;
    sl->gen++;
    uintptr_t key = ((uintptr_t)sl->gen << 4) | (i % RP_SLOTS) | 8u;
    rdps_sub_opts opts = {.on_event = on_event};
    int rc = rdps_sub_create(hx.ctx, topic_names[slot_topic[i % RP_SLOTS]], on_message, (void *)key,
                             &opts, &sl->sub);
    if (rc == RDPS_ECLOSED && hx.obj->destroy_requested)
        sl->sub = NULL;
    else if (rc != 0)
        FAIL("rdps_sub_create failed");
}

static void slot_destroy(unsigned i)
{
    struct slot *sl = &hx.slots[i % RP_SLOTS];
    if (sl->sub == NULL)
        return;
    rdps_sub_destroy(sl->sub);
    sl->sub = NULL;
}

/* The ctx's own publisher sends len bytes from buf (recorded first: subscribers get it now). */
static void local_send(uint8_t *buf, uint32_t len)
{
    if (hx.ctx == NULL || hx.obj->destroy_requested)
        return;
    if (hx.pub == NULL && rdps_pub_create(hx.ctx, "fz.a", NULL, &hx.pub) != 0)
        FAIL("rdps_pub_create failed");
    if (rdps_pub_ready(hx.pub) != 1) {
        if (hx.in_callback)
            return;  /* joins complete at the next poll */
        poll_ctx(1); /* its callbacks may destroy the publisher or the ctx */
        if (hx.ctx == NULL || hx.pub == NULL || rdps_pub_ready(hx.pub) != 1)
            return;
    }
    uint32_t session = rdps_pub_session(hx.pub),
             ordinal = rdps__pub_of_handle(hx.pub)->next_ordinal;
    fuzz_msg_fill(buf, LOCAL_PUB, 0, ordinal, len);
    if (!published_add(LOCAL_PUB, session, 0, ordinal, len,
                       rdps__frag_count(len, SCRIPT_MAX_PAYLOAD)))
        return;
    hx.local_sending++;
    int rc = rdps_pub_send(hx.pub, buf, len);
    hx.local_sending--;
    if (rc == RDPS_ECLOSED && !hx.in_callback)
        ctx_gone();
    else if (rc != 0 && !(rc == RDPS_ECLOSED && hx.obj->destroy_requested))
        FAIL("rdps_pub_send failed");
}

static void run_action(unsigned slot_index)
{
    uint8_t arg = hx.action_arg;
    hx.armed = false;
    switch (hx.action % RP_ACT_COUNT) {
    case RP_ACT_DESTROY_SELF:
        slot_destroy(slot_index);
        break;
    case RP_ACT_DESTROY_SLOT:
        slot_destroy(arg);
        break;
    case RP_ACT_CREATE_SLOT:
        slot_create(arg);
        break;
    case RP_ACT_LOCAL_SEND:
        local_send(hx.nested_msg, ((uint32_t)arg * 97u) % (RP_MAX_MSG + 1));
        break;
    case RP_ACT_NESTED_POLL:
        if (rdps_ctx_poll(hx.ctx, 0) != RDPS_EBUSY || rdps_ctx_wait(hx.ctx, 0) != RDPS_EBUSY)
            FAIL("poll from a callback did not return RDPS_EBUSY");
        break;
    case RP_ACT_DESTROY_PUB:
        rdps_pub_destroy(hx.pub);
        hx.pub = NULL;
        break;
    case RP_ACT_RECREATE_SELF:
        slot_destroy(slot_index);
        slot_create(slot_index);
        break;
    default:
        rdps_ctx_destroy(hx.ctx); /* freed when the outermost call returns RDPS_ECLOSED */
        break;
    }
}

/* The subscriber instance a callback's user pointer names: it must still be open. */
static unsigned callback_slot(void *user, const char *topic)
{
    uintptr_t key = (uintptr_t)user;
    unsigned i = (unsigned)(key & 3u);
    if (!(key & 8u) || hx.slots[i].sub == NULL || (key >> 4) != hx.slots[i].gen)
        FAIL("callback for a destroyed subscriber");
    if (topic == NULL || strcmp(topic, topic_names[slot_topic[i]]) != 0)
        FAIL("callback for another topic than the subscriber's");
    return i;
}

static void check_honest(unsigned slot, int src, const uint8_t *data, uint32_t len,
                         const rdps_msg_info *info)
{
    uint32_t pub = RP_PUBLISHERS;
    for (uint32_t p = 0; p < RP_PUBLISHERS; p++)
        if (publishers[p].source == (unsigned)src && publishers[p].session == info->session_id)
            pub = p;
    if (src == SRC_SELF_INDEX) {
        if (hx.local_sending == 0)
            FAIL("a message with our own source outside our publisher's send");
        pub = LOCAL_PUB;
    } else if (pub == RP_PUBLISHERS) {
        FAIL("honest source delivered a session it never used");
    } else if (publishers[pub].topic != slot_topic[slot]) {
        FAIL("honest session delivered on another topic");
    }
    struct published *m = published_find(pub, info->session_id, info->seq, info->ordinal);
    if (m == NULL)
        FAIL("honest source delivered a message never published at that sequence and ordinal");
    if (m->len != len || m->frags != info->fragments)
        FAIL("honest message delivered with another length or fragment count");
    fuzz_msg_fill(hx.expect, pub, key_seq(pub, info->seq), info->ordinal, len);
    if (len > 0 && memcmp(data, hx.expect, len) != 0)
        FAIL("honest message delivered with bytes it was not sent with");
    uint64_t drops = pub == LOCAL_PUB ? 0 : streams_dropped();
    if (m->drops_at_delivery != drops)
        m->delivered = 0; /* a stream went since: duplicated frames may complete it again */
    if (m->delivered & (1u << slot))
        FAIL("honest message delivered twice by a stream that kept its window");
    m->delivered |= (uint8_t)(1u << slot);
    m->drops_at_delivery = drops;
    if (pub == LOCAL_PUB)
        hx.local_msgs++;
    else
        hx.honest_msgs++;
}

static void on_message(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    unsigned slot = callback_slot(user, info->topic);
    if (info->topic_id != hx.topic_ids[slot_topic[slot]] || (len > 0 && data == NULL) ||
        info->fragments == 0 || len > MAX_MESSAGE)
        FAIL("message info inconsistent");
    int src = source_index(&info->source);
    if (src < 0)
        FAIL("message from a source nobody sent from");
    if (src < 3 || src == SRC_SELF_INDEX) {
        check_honest(slot, src, data, (uint32_t)len, info);
    } else {
        volatile uint8_t sum = 0; /* hostile: anything, but all of it readable */
        for (size_t k = 0; k < len; k++)
            sum ^= ((const uint8_t *)data)[k];
        (void)sum;
        hx.hostile_msgs++;
    }
    if (hx.armed) {
        hx.in_callback = true;
        run_action(slot);
        hx.in_callback = false;
    }
}

/* A GAP (or LOSS) of an honest session: its publisher numbered every message it counts, and a GAP
 * counts none that an earlier one counted for this subscriber or that reached it whole. */
static void check_honest_loss(unsigned slot, int src, const rdps_event *ev)
{
    uint32_t p = RP_PUBLISHERS;
    for (uint32_t k = 0; k < RP_PUBLISHERS; k++)
        if (publishers[k].source == (unsigned)src && publishers[k].session == ev->session_id &&
            publishers[k].topic == slot_topic[slot])
            p = k;
    if (p == RP_PUBLISHERS)
        FAIL("gap or loss on an honest source for a session it never used");
    uint32_t span = hx.pubs[p].next_ordinal - hx.ord0[p];
    if (ev->msg_count == 0)
        return;
    if (ev->msg_count > span || ev->first_ordinal - hx.ord0[p] > span - ev->msg_count)
        FAIL("a gap or loss counts messages the publisher never numbered");
    if (ev->type != RDPS_EVENT_GAP)
        return;
    uint64_t epoch = streams_dropped();
    if (hx.gap_seen[slot][p] && hx.gap_epoch[slot][p] == epoch &&
        (int32_t)(ev->first_ordinal - hx.gap_end[slot][p]) < 0)
        FAIL("a message counted by two gaps");
    hx.gap_seen[slot][p] = true;
    hx.gap_epoch[slot][p] = epoch;
    hx.gap_end[slot][p] = ev->first_ordinal + ev->msg_count;
    if (ev->msg_count > 64)
        return;
    for (uint32_t i = 0; i < hx.published_count; i++) {
        const struct published *m = &hx.published[i];
        if (m->pub == p && m->ordinal - ev->first_ordinal < ev->msg_count &&
            (m->delivered & (1u << slot)) && m->drops_at_delivery == epoch)
            FAIL("a gap counted a message its subscriber had received whole");
    }
}

static void on_event(void *user, const rdps_event *ev)
{
    unsigned slot = callback_slot(user, ev->topic);
    int src = source_index(&ev->source);
    if (src < 0)
        FAIL("event from a source nobody sent from");
    if ((ev->type == RDPS_EVENT_GAP || ev->type == RDPS_EVENT_LOSS) && src < 3)
        check_honest_loss(slot, src, ev);
    hx.events++;
    if (hx.armed) {
        hx.in_callback = true;
        run_action(slot);
        hx.in_callback = false;
    }
}

/* fuzz_publisher.h's callbacks: a datagram to send now or to pool, a message placed. */
static void honest_emit(void *user, const uint8_t *frame, uint32_t len)
{
    (void)user;
    if (hx.emit_now) {
        inject(publishers[hx.emit_pub].source, frame, len);
        return;
    }
    struct pooled *e = &hx.pool[hx.pool_next];
    memcpy(e->bytes, frame, len);
    e->len = len;
    e->pub = (uint8_t)hx.emit_pub;
    hx.pool_next = (hx.pool_next + 1) % POOL;
    if (hx.pool_count < POOL)
        hx.pool_count++;
}

static void honest_placed(void *user, uint32_t first_seq, uint32_t ordinal, uint32_t len,
                          uint32_t datagrams)
{
    (void)user;
    if (!published_add(hx.emit_pub, publishers[hx.emit_pub].session, first_seq, ordinal, len,
                       datagrams))
        FAIL("published table full (publish checks for room)");
}

/* Publishes n honest messages (message i: len alone, else lengths around a datagram's payload:
 * some share datagrams, some fill the room left, some fragment), sent in order now or kept in
 * the pool for the input to send. */
static void publish(uint8_t sel, uint32_t len, uint32_t n, bool send_now)
{
    uint32_t p = sel % RP_PUBLISHERS, room = SCRIPT_MAX_PAYLOAD - RDPS_FRAME_HEADER_LEN;
    if (hx.published_count + n > MAX_PUBLISHED)
        return;
    hx.emit_pub = p;
    hx.emit_now = send_now;
    hx.pubs[p].now_ns = hx.now;
    for (uint32_t i = 0; i < n; i++)
        fuzz_pub_send(&hx.pubs[p],
                      n == 1 ? len : (len + i * 37u * (len >> 11 | 1)) % (room + room / 2 + 1),
                      SCRIPT_MAX_PAYLOAD);
    fuzz_pub_flush(&hx.pubs[p]);
}

/* The publisher's next n datagrams are lost on the way; they held n + n / 2 messages. */
static void skip(uint32_t p, uint32_t n)
{
    hx.pubs[p].next_seq += n;
    hx.pubs[p].next_ordinal += n + n / 2;
}

static void send_pooled(uint32_t index)
{
    if (hx.pool_count == 0)
        return;
    const struct pooled *e = &hx.pool[index % hx.pool_count];
    inject(publishers[e->pub].source, e->bytes, e->len);
}

/* A session id that often collides with an honest or our own one. */
static uint32_t pick_session(uint8_t b)
{
    if (b % 8 < RP_PUBLISHERS)
        return publishers[b % 8].session;
    if (b % 8 == 4 && hx.pub != NULL)
        return rdps_pub_session(hx.pub);
    if (b % 8 == 5)
        return 0;
    return 0x5000u + b;
}

static uint64_t pick_topic(uint8_t b)
{
    return b % 4 < RP_TOPICS ? hx.topic_ids[b % 4] : b;
}

static void hostile_header(unsigned src, const uint8_t *a, uint8_t hi)
{
    uint8_t dgram[SCRIPT_MAX_PAYLOAD];
    struct rdps_frame_header h = {
        .type = a[1] < 240 ? (uint8_t)(a[1] % 5 + 1) : a[1],
        .flags = a[2],
        .session_id = pick_session(a[3]),
        .topic_id = pick_topic(a[4]),
        .seq = rdps__get_le32(a + 5),
        .msg_len = a[9] | (uint32_t)a[10] << 8 | (uint32_t)a[11] << 16,
        .frag_offset = a[12] | (uint32_t)a[13] << 8 | (uint32_t)a[14] << 16,
        .timestamp_ns = hx.now,
    };
    /* Ordinals: this spoof's own walk (steps back and forth), or near an honest session's. */
    uint32_t *walk = &hx.hostile_ord[src - 3];
    *walk += (uint32_t)(int32_t)(int8_t)a[17];
    h.ordinal = *walk;
    h.count = a[18] < 0xF0 ? a[18] % 8u : 0xFFFFFF00u | a[18];
    if (hi & 1) { /* near an honest session's next sequence and ordinal */
        const struct fuzz_pub *p = &hx.pubs[a[3] % RP_PUBLISHERS];
        h.seq = p->next_seq + (uint32_t)(int16_t)h.seq;
        h.ordinal = p->next_ordinal + (uint32_t)(int32_t)(int8_t)a[17];
    }
    uint32_t plen = rdps__get_le16(a + 15) % (SCRIPT_MAX_PAYLOAD - RDPS_FRAME_HEADER_LEN + 1);
    for (uint32_t k = 0; k < plen; k++)
        dgram[RDPS_FRAME_HEADER_LEN + k] = (uint8_t)(0xA5 ^ k ^ a[0]);
    if (hi & 2) { /* records that fill the payload: a batch the decoder accepts when the count
                     says how many (a[18] & 0x80: off by (a[18] & 3) - 1) */
        struct rdps_batch b;
        rdps__batch_open(&b, dgram, RDPS_FRAME_HEADER_LEN + plen);
        for (uint32_t i = 0; i < 2 + a[18] % 30u; i++) {
            uint32_t len = (plen / (2 + a[18] % 30u) + i * 5) % 200;
            if (!rdps__batch_fits(&b, len))
                break;
            memset(rdps__batch_add(&b, len), (int)(i ^ a[0]), len);
        }
        plen = b.used;
        h.msg_len = plen;
        h.frag_offset = 0;
        h.count = b.count + ((a[18] & 0x80) ? (a[18] & 3u) - 1 : 0);
    }
    rdps__frame_put_header(dgram, sizeof(dgram), &h);
    inject(src, dgram, RDPS_FRAME_HEADER_LEN + plen);
}

static void hostile_copy(unsigned src, const uint8_t *a, uint8_t hi)
{
    uint8_t dgram[SCRIPT_MAX_PAYLOAD];
    uint32_t len;
    if (hi & 1) { /* the last frame the ctx sent: our DATA or announcement */
        if (script_transport_sent(hx.t) == sent_before_input)
            return;
        const uint8_t *last = script_transport_last_sent(hx.t, &len);
        memcpy(dgram, last, len);
    } else {
        if (hx.pool_count == 0)
            return;
        const struct pooled *e = &hx.pool[a[1] % hx.pool_count];
        memcpy(dgram, e->bytes, e->len);
        len = e->len;
    }
    if (len > 0)
        dgram[a[2] % len] ^= a[3];
    inject(src, dgram, len);
}

static void announce(const uint8_t *a)
{
    static const char *const foreign[5] = {"fz.x0", "fz.x1", "fz.x2", "fz.x3", "fz.x4"};
    unsigned src = a[0] % SOURCES;
    uint8_t flags = a[1];
    const char *topic = a[2] % 8 < RP_TOPICS ? topic_names[a[2] % 8] : foreign[a[2] % 8 - 3];
    struct rdps_announce an = {
        .role = flags & 1 ? RDPS_ROLE_SUBSCRIBER : RDPS_ROLE_PUBLISHER,
        .topic_id = rdps_topic_id(topic) + ((flags >> 3) & 1),
        .group = 0xefc00100u + a[2],
        .session_id = pick_session(a[3]) ? pick_session(a[3]) : 1,
        .qpn = sources[src].qpn ? sources[src].qpn : 1,
        .interval_ms = rdps__get_le16(a + 4),
        .leaving = (flags >> 1) & 1,
        .announce_seq = hx.now,
    };
    snprintf(an.topic, sizeof(an.topic), "%s", topic);
    memcpy(an.gid, sources[src].gid, 16);
    uint8_t body[RDPS_ANNOUNCE_MAX_BYTES], frame[SCRIPT_MAX_PAYLOAD];
    int blen = rdps__announce_encode(&an, body, sizeof(body));
    if (blen < 0)
        FAIL("announcement did not encode");
    int len = rdps__frame_encode_announce(frame, sizeof(frame), an.session_id + ((flags >> 2) & 1),
                                          an.topic_id, 1, body, (size_t)blen, hx.now);
    if (len < 0)
        FAIL("announce frame did not encode");
    inject(src, frame, (size_t)len);
}

static void control(const uint8_t *a)
{
    uint8_t frame[SCRIPT_MAX_PAYLOAD];
    unsigned src = 3 + a[0] % RP_HOSTILE;
    uint32_t session = pick_session(a[2]), seq = rdps__get_le32(a + 3);
    uint32_t count = rdps__get_le32(a + 7);
    uint64_t topic = hx.topic_ids[publishers[a[2] % 4].topic];
    int len;
    switch (a[1] % 4) {
    case 0:
        len = rdps__frame_encode_heartbeat(frame, sizeof(frame), session, topic, seq, seq, hx.now,
                                           a[1] & 0x10 ? RDPS_FRAME_F_RELIABLE : 0);
        break;
    case 1: {
        struct rdps_seq_range r[2] = {{seq, count & 0x7fffffffu}, {seq + 100, 1 + a[1]}};
        len = rdps__frame_encode_nak(frame, sizeof(frame), session, topic, count, r,
                                     1 + (a[1] >> 7), hx.now);
        break;
    }
    case 2:
        len = rdps__frame_encode_status(frame, sizeof(frame), session, topic, count, seq,
                                        count >> 8, hx.now);
        break;
    default: { /* an honest publisher's heartbeat: tail loss becomes a gap */
        uint32_t p = a[0] % RP_PUBLISHERS;
        len = rdps__frame_encode_heartbeat(frame, sizeof(frame), publishers[p].session,
                                           hx.topic_ids[publishers[p].topic], hx.pubs[p].next_seq,
                                           hx.pubs[p].next_ordinal, hx.now, 0);
        src = publishers[p].source;
        break;
    }
    }
    if (len > 0)
        inject(src, frame, (size_t)len);
}

static void harness_start(uint8_t config)
{
    static const uint32_t sessions[4] = {2, 4, 8, 64};
    memset(&hx, 0, offsetof(struct harness, msg));
    for (int i = 0; i < PUBLISHED_HASH; i++)
        hx.published_hash[i] = -1;
    for (int i = 0; i < RP_TOPICS; i++)
        hx.topic_ids[i] = rdps_topic_id(topic_names[i]);
    for (uint32_t p = 0; p < RP_PUBLISHERS; p++) {
        /* Sequences and ordinals wrap early. */
        hx.ord0[p] = 0xFFFFFFF8u - 3u * p;
        fuzz_pub_init(&hx.pubs[p], p, publishers[p].session, hx.topic_ids[publishers[p].topic], 0,
                      0xFFFFFF00u + 40u * p, hx.ord0[p]);
        hx.pubs[p].emit = honest_emit;
        hx.pubs[p].placed = honest_placed;
    }
    hx.now = 1000000000ull;
    hx.held = (config >> 7) & 1;

    /* Every cap rdps_config has, small enough that each refusal and eviction is reachable. */
    bool tight = config & 0x20, small_discovery = config & 0x40;
    rdps_config cfg;
    rdps_config_init(&cfg);
    cfg.max_message_size = MAX_MESSAGE;
    cfg.max_sessions = sessions[config & 3];
    cfg.max_sessions_per_source = tight ? (cfg.max_sessions + 1) / 2 : cfg.max_sessions;
    cfg.max_partials = tight ? 6 : 16;
    cfg.max_partials_per_source = tight ? 3 : cfg.max_partials;
    cfg.reassembly_memory = config & 4 ? 1024u * 1024u : 64u * 1024u;
    cfg.reassembly_memory_per_source = tight ? 64u * 1024u : cfg.reassembly_memory;
    cfg.reassembly_timeout_ms = 2 + 8u * ((config >> 3) & 3);
    cfg.announce_interval_ms = 50;
    cfg.max_peers = small_discovery ? 6 : 64;
    cfg.max_remote_only_peers = small_discovery ? 2 : 16;
    cfg.peer_interval_min_ms = 10;
    cfg.peer_interval_max_ms = small_discovery ? 200 : 60000;
    ctx_create(&cfg, &sources[SRC_SELF_INDEX]);
    if (tight) {
        /* What rdps_config does not expose: 2 KiB arena chunks (per-source byte quotas bite at
         * 2 KiB granularity instead of 64 KiB) and an idle timeout for streams. */
        struct rdps_reasm_config rc = hx.obj->reasm->cfg;
        rc.chunk_bytes = 2048;
        rc.session_idle_timeout_ns = 40000000ull;
        rdps__reasm_fini(hx.obj->reasm);
        if (rdps__reasm_init(hx.obj->reasm, &rc) != 0)
            FAIL("tight reassembler config refused");
    }
    for (unsigned i = 0; i + 1 < RP_SLOTS; i++)
        slot_create(i);
    if (rdps_pub_create(hx.ctx, "fz.a", NULL, &hx.pub) != 0)
        FAIL("rdps_pub_create failed");
    poll_ctx(0); /* joins complete, first announcements go out */
}

/* Argument bytes per operation (RP_HOSTILE_RAW, RP_ANNOUNCE_RAW: 2 + their length byte). */
static const uint8_t arg_len[RP_OP_COUNT] = {3, 3, 1, 2, 2, 19, 4, 6, 2, 11, 1, 3, 1, 2, 2, 1};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    harness_start(data[0]);
    size_t pos = 1;
    while (pos < size && hx.ctx != NULL) {
        uint8_t op = data[pos++], hi = op / RP_OP_COUNT;
        const uint8_t *a = data + pos;
        size_t need = arg_len[op % RP_OP_COUNT];
        if (size - pos < need)
            break;
        pos += need;
        switch (op % RP_OP_COUNT) {
        case RP_PUBLISH:
        case RP_PUBLISH_POOL:
            publish(a[0], rdps__get_le16(a + 1) % (RP_MAX_MSG + 1), 1 + hi,
                    op % RP_OP_COUNT == RP_PUBLISH);
            break;
        case RP_SEND_POOL:
            send_pooled(a[0]);
            break;
        case RP_SEND_RANGE:
            for (uint32_t k = 0, n = 1 + a[1] % 32u; k < n; k++)
                send_pooled(hi & 1 ? a[0] + n - 1 - k : a[0] + k);
            break;
        case RP_HOSTILE_RAW:
        case RP_ANNOUNCE_RAW: {
            size_t len = a[1] < size - pos ? a[1] : size - pos;
            uint8_t frame[SCRIPT_MAX_PAYLOAD];
            if (op % RP_OP_COUNT == RP_HOSTILE_RAW) {
                inject(3 + a[0] % RP_HOSTILE, data + pos, len);
            } else {
                int n = rdps__frame_encode_announce(frame, sizeof(frame), pick_session(a[0]) | 1,
                                                    hx.topic_ids[a[0] % RP_TOPICS], 1, data + pos,
                                                    len, hx.now);
                if (n > 0)
                    inject(a[0] % SOURCES, frame, (size_t)n);
            }
            pos += len;
            break;
        }
        case RP_HOSTILE_HDR:
            hostile_header(3 + a[0] % RP_HOSTILE, a, hi);
            break;
        case RP_HOSTILE_COPY:
            hostile_copy(3 + a[0] % (RP_HOSTILE + 1), a, hi);
            break;
        case RP_ANNOUNCE:
            announce(a);
            break;
        case RP_CONTROL:
            control(a);
            break;
        case RP_TIME:
            hx.now += (uint64_t)a[0] * (100000ull << (hi % 16));
            if (hx.ctx != NULL)
                poll_ctx(0);
            break;
        case RP_SKIP:
            skip(a[0] % RP_PUBLISHERS, rdps__get_le16(a + 1));
            break;
        case RP_SUB:
            if (hx.slots[a[0] % RP_SLOTS].sub != NULL)
                slot_destroy(a[0]);
            else
                slot_create(a[0]);
            break;
        case RP_ARM:
            hx.armed = true;
            hx.action = a[0];
            hx.action_arg = a[1];
            break;
        case RP_LOCAL_SEND:
            if (hi & 1) {
                rdps_pub_destroy(hx.pub);
                hx.pub = NULL;
            } else {
                local_send(hx.msg, rdps__get_le16(a) % (RP_MAX_MSG + 1));
            }
            break;
        default:
            if (hi & 1)
                hx.held = !hx.held;
            poll_ctx(a[0]);
            break;
        }
        settle();
    }
    if (hx.ctx != NULL) {
        hx.held = false;
        settle();
    }
    if (getenv("RP_VERBOSE") != NULL && hx.ctx != NULL) {
        const struct rdps_reasm_counters *c = rdps__reasm_counters(hx.obj->reasm);
        fprintf(stderr,
                "honest %llu hostile %llu local %llu events %llu | started %llu conflicts %llu "
                "too large %llu | evicted %llu/%llu partials %llu/%llu/%llu timeouts %llu resets "
                "%llu | peers %u\n",
                (unsigned long long)hx.honest_msgs, (unsigned long long)hx.hostile_msgs,
                (unsigned long long)hx.local_msgs, (unsigned long long)hx.events,
                (unsigned long long)c->reasm_started, (unsigned long long)c->reasm_conflicts,
                (unsigned long long)c->reasm_too_large, (unsigned long long)c->sessions_evicted,
                (unsigned long long)c->sessions_source_quota, (unsigned long long)c->reasm_evicted,
                (unsigned long long)c->reasm_source_partials,
                (unsigned long long)c->reasm_source_bytes, (unsigned long long)c->reasm_timeouts,
                (unsigned long long)c->session_resets, rdps__disc_peer_count(hx.obj->discovery));
    }
    rdps_ctx_destroy(hx.ctx); /* NULL when a callback destroyed it */
    hx.ctx = NULL;
    hx.obj = NULL;
    return 0;
}
