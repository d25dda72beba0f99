/* SPDX-License-Identifier: BSD-2-Clause */
/* sim_net.c - the simulated fabric's network: event heap, frame buffers, lossy links (model:
 * sim_net.h). */
#include "sim_net.h"

#include <stdlib.h>
#include <string.h>

#define US 1000ull

const struct sim_loss sim_models[] = {
    {.name = "none"},
    {.name = "uni1", .uniform = 0.01},
    {.name = "uni5", .uniform = 0.05},
    {.name = "uni20", .uniform = 0.20},
    {.name = "ge", .ge_p = 0.01, .ge_r = 0.10, .ge_loss_bad = 0.70, .ge_loss_good = 0.001},
    {.name = "reorder", .reorder = 0.25, .reorder_ns = 100 * US},
    {.name = "dup", .dup = 0.05},
    {.name = "all",
     .uniform = 0.05,
     .ge_p = 0.01,
     .ge_r = 0.10,
     .ge_loss_bad = 0.70,
     .ge_loss_good = 0.001,
     .reorder = 0.25,
     .reorder_ns = 100 * US,
     .dup = 0.05},
};
const unsigned sim_model_count = sizeof(sim_models) / sizeof(sim_models[0]);

void sim_net_init(struct sim_net *net, uint64_t seed, uint32_t max_frame)
{
    memset(net, 0, sizeof(*net));
    net->rng = seed | 1; /* xorshift: never zero */
    net->stride = ((max_frame > 1024 ? max_frame : 1024) + 63u) & ~63u;
}

void sim_net_fini(struct sim_net *net)
{
    for (uint32_t i = 0; i < net->nchunks; i++)
        free(net->chunks[i]);
    free(net->chunks);
    free(net->refs);
    free(net->lens);
    free(net->free_list);
    free(net->heap);
    memset(net, 0, sizeof(*net));
}

uint32_t sim_threshold(double p)
{
    if (p <= 0)
        return 0;
    return p >= 1 ? UINT32_MAX : (uint32_t)(p * 4294967296.0);
}

void sim_thresholds_of(struct sim_thresholds *t, const struct sim_loss *loss)
{
    t->uniform = sim_threshold(loss->uniform);
    t->ge_p = sim_threshold(loss->ge_p);
    t->ge_r = sim_threshold(loss->ge_r);
    t->ge_bad = sim_threshold(loss->ge_loss_bad);
    t->ge_good = sim_threshold(loss->ge_loss_good);
    t->reorder = sim_threshold(loss->reorder);
    t->reorder_ns = loss->reorder_ns;
    t->dup = sim_threshold(loss->dup);
}

void sim_push(struct sim_net *net, uint64_t at, uint32_t who, uint32_t buf)
{
    if (net->n == net->cap) {
        net->cap = net->cap ? net->cap * 2 : 4096;
        net->heap = realloc(net->heap, net->cap * sizeof(*net->heap));
        if (net->heap == NULL)
            abort();
    }
    size_t i = net->n++;
    while (i > 0 && net->heap[(i - 1) / 2].at > at) {
        net->heap[i] = net->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    net->heap[i] = (struct sim_event){at, who, buf};
}

struct sim_event sim_pop(struct sim_net *net)
{
    struct sim_event top = net->heap[0], last = net->heap[--net->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= net->n)
            break;
        if (c + 1 < net->n && net->heap[c + 1].at < net->heap[c].at)
            c++;
        if (net->heap[c].at >= last.at)
            break;
        net->heap[i] = net->heap[c];
        i = c;
    }
    if (net->n > 0)
        net->heap[i] = last;
    return top;
}

uint32_t sim_buf_new(struct sim_net *net, const uint8_t *frame, uint32_t len)
{
    if (len > net->stride)
        abort();
    if (net->nfree == 0) {
        uint32_t n = 1u << SIM_POOL_LOG, base = net->nbufs;
        net->chunks = realloc(net->chunks, (net->nchunks + 1) * sizeof(*net->chunks));
        net->refs = realloc(net->refs, (base + n) * sizeof(*net->refs));
        net->lens = realloc(net->lens, (base + n) * sizeof(*net->lens));
        net->free_list = realloc(net->free_list, (base + n) * sizeof(*net->free_list));
        if (net->chunks == NULL || net->refs == NULL || net->lens == NULL ||
            net->free_list == NULL ||
            (net->chunks[net->nchunks] = malloc((size_t)n * net->stride)) == NULL)
            abort();
        net->nchunks++;
        net->nbufs += n;
        for (uint32_t i = 0; i < n; i++)
            net->free_list[net->nfree++] = base + n - 1 - i;
    }
    uint32_t b = net->free_list[--net->nfree];
    memcpy((uint8_t *)sim_buf_data(net, b), frame, len);
    net->lens[b] = len;
    net->refs[b] = 1;
    return b;
}

static bool link_drops(struct sim_net *net, const struct sim_thresholds *th, struct sim_link *l)
{
    bool drop = th->uniform != 0 && sim_draw(net) < th->uniform;
    if (th->ge_p != 0) {
        drop |= sim_draw(net) < (l->bad ? th->ge_bad : th->ge_good);
        if (sim_draw(net) < (l->bad ? th->ge_r : th->ge_p))
            l->bad = !l->bad;
    }
    return drop;
}

void sim_link_send(struct sim_net *net, const struct sim_thresholds *th, struct sim_link *l,
                   uint32_t who, uint32_t b, uint64_t at)
{
    if (link_drops(net, th, l)) {
        net->dropped++;
        return;
    }
    uint64_t when = at + l->delay_ns + sim_draw_upto(net, 1000);
    if (th->reorder != 0 && sim_draw(net) < th->reorder) {
        when += sim_draw_upto(net, th->reorder_ns);
    } else {
        if (when <= l->last_ns)
            when = l->last_ns + 1;
        l->last_ns = when;
    }
    net->refs[b]++;
    sim_push(net, when, who, b);
    if (th->dup != 0 && sim_draw(net) < th->dup) {
        net->duplicated++;
        net->refs[b]++;
        sim_push(net, when + 1 + sim_draw_upto(net, 10000), who, b);
    }
}
