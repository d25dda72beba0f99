/* SPDX-License-Identifier: BSD-2-Clause */
/* test_rel_goodput.c - goodput under loss on the simulated fabric against the bound its own repair
 * bytes allow, retransmission only and with parity, for N receivers (issue 40; sim_fabric.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_fabric.h"

#define MS 1000000ull

/*
 * `test_rel_goodput N MESSAGES [MODELS [SEEDS [MODES [MIN_RATIO [NOT_WORSE]]]]]`
 *   N receivers, MESSAGES per run; MODELS a comma list of sim_models names (default
 *   uni1,uni5,uni20,ge,all); SEEDS how many (1..SEEDS, default 3); MODES a comma list of
 *   retx (parity_k 0), ondemand (parity_k 64, no proactive share), proactive (parity_k 64 and the
 *   share below for the model; "proactive:N" a fixed share); MIN_RATIO: every cell's goodput over
 *   its bound must reach it (0: report only); NOT_WORSE 1: every parity mode's goodput at least
 *   retransmission's on the same seed (both must be in MODES).
 * Per seed a lossless run gives the lossless fraction; per cell one line:
 *   `goodput N=8 uni5 seed=1 proactive bound=0.712 goodput=0.650 ratio=0.913 data/repair=...
 *    idle: first_nak=..% ...`
 * The bound is data bytes over data plus repair bytes (retransmissions and parity) times the
 * lossless fraction: what the link could deliver had it never stood idle. Every run is checked:
 * every message delivered in order exactly once, no loss event.
 */
static uint32_t receivers = 8;
static uint64_t messages = 4000;
static const char *models_arg = "uni1,uni5,uni20,ge,all";
static uint64_t seeds = 3;
static const char *modes_arg = "retx,proactive";
static double min_ratio;
static bool not_worse;

/* The proactive share (of 64) per model: tests/bench/NOTES.md's best fixed shares. */
static uint32_t default_share(const char *model)
{
    static const struct {
        const char *model;
        uint32_t share, share64;
    } shares[] = {
        {"uni1", 2, 2}, {"uni5", 6, 8}, {"uni20", 20, 24}, {"ge", 16, 16}, {"all", 24, 24}};
    for (size_t i = 0; i < sizeof(shares) / sizeof(shares[0]); i++)
        if (strcmp(shares[i].model, model) == 0)
            return receivers >= 64 ? shares[i].share64 : shares[i].share;
    return 0;
}

static const struct sim_loss *model_named(const char *name, size_t len)
{
    for (unsigned m = 0; m < sim_model_count; m++)
        if (strlen(sim_models[m].name) == len && strncmp(sim_models[m].name, name, len) == 0)
            return &sim_models[m];
    return NULL;
}

/* Every receiver got every message intact, in order, once; nothing lost. */
static void expect_everything(const struct sim_config *cfg, const struct sim_result *res)
{
    if (res->failure[0] != '\0')
        print_error("%s seed %llu N=%u: %s\n", cfg->down.name, (unsigned long long)cfg->seed,
                    cfg->receivers, res->failure);
    assert_string_equal(res->failure, "");
    assert_int_equal(res->bad_order + res->bad_content + res->bad_loss, 0);
    assert_int_equal(res->lost_msgs, 0);
    assert_int_equal(res->loss_events, 0);
    assert_int_equal(res->receivers_done, cfg->receivers);
    assert_int_equal(res->delivered, cfg->messages * cfg->receivers);
}

static void configure(struct sim_config *cfg, const struct sim_loss *model, uint64_t seed)
{
    sim_config_default(cfg);
    cfg->receivers = receivers;
    cfg->messages = messages;
    cfg->seed = seed;
    cfg->down = cfg->up = *model;
    cfg->time_limit_ns = 60000 * MS + messages * 2 * MS;
}

/* The waits that are not sending, largest first, as "name=share%" (at most 4). */
static void idle_summary(const struct sim_result *res, char *out, size_t size)
{
    bool used[SIM_WAIT_COUNT] = {[SIM_WAIT_SENDING] = true};
    size_t at = 0;
    out[0] = '\0';
    for (int n = 0; n < 4; n++) {
        int best = -1;
        for (int w = 0; w < SIM_WAIT_COUNT; w++)
            if (!used[w] && res->wait_ns[w] != 0 &&
                (best < 0 || res->wait_ns[w] > res->wait_ns[best]))
                best = w;
        if (best < 0)
            break;
        used[best] = true;
        int k =
            snprintf(out + at, size - at, " %s=%.1f%%", sim_wait_names[best],
                     100.0 * (double)res->wait_ns[best] / (double)(res->sim_ns ? res->sim_ns : 1));
        if (k < 0 || (size_t)k >= size - at)
            break;
        at += (size_t)k;
    }
}

/* One cell: runs it, checks it, prints its line; returns its goodput. */
static double cell(const struct sim_loss *model, uint64_t seed, const char *mode, size_t mode_len,
                   double lossless)
{
    struct sim_config cfg;
    struct sim_result res;
    configure(&cfg, model, seed);
    if (strncmp(mode, "retx", mode_len) == 0 && mode_len == 4) {
        cfg.parity_k = 0;
    } else if (strncmp(mode, "ondemand", mode_len) == 0 && mode_len == 8) {
        cfg.parity_k = 64;
    } else if (strncmp(mode, "proactive", 9) == 0 && (mode_len == 9 || mode[9] == ':')) {
        cfg.parity_k = 64;
        cfg.parity_proactive =
            mode_len > 10 ? (uint32_t)strtoul(mode + 10, NULL, 10) : default_share(model->name);
    } else {
        print_error("unknown mode %.*s\n", (int)mode_len, mode);
        fail();
    }
    assert_int_equal(sim_run(&cfg, &res), 0);
    expect_everything(&cfg, &res);
    double goodput = sim_goodput(&cfg, &res);
    double bound =
        lossless * (double)res.data_bytes / (double)(res.data_bytes + res.repair_bytes + 1);
    double ratio = goodput / bound;
    char idle[200];
    idle_summary(&res, idle, sizeof(idle));
    printf("goodput N=%-2u %-5s seed=%llu %-12.*s share=%-2u bound=%.3f goodput=%.3f ratio=%.3f "
           "repair/data=%.3f naks=%llu parity=%llu sending=%.1f%% idle:%s\n",
           receivers, model->name, (unsigned long long)seed, (int)mode_len, mode,
           cfg.parity_proactive, bound, goodput, ratio,
           (double)res.repair_bytes / (double)(res.data_bytes + 1),
           (unsigned long long)res.naks_received, (unsigned long long)res.parity_sent,
           100.0 * (double)res.wait_ns[SIM_WAIT_SENDING] / (double)(res.sim_ns ? res.sim_ns : 1),
           idle);
    fflush(stdout);
    if (min_ratio > 0)
        assert_true(ratio >= min_ratio);
    return goodput;
}

static void test_goodput_matrix(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= seeds; seed++) {
        struct sim_config cfg;
        struct sim_result res;
        configure(&cfg, &sim_models[0], seed);
        assert_int_equal(sim_run(&cfg, &res), 0);
        expect_everything(&cfg, &res);
        double lossless = sim_goodput(&cfg, &res);
        printf("goodput N=%-2u none  seed=%llu lossless=%.3f\n", receivers,
               (unsigned long long)seed, lossless);
        for (const char *m = models_arg; *m != '\0';) {
            size_t mlen = strcspn(m, ",");
            const struct sim_loss *model = model_named(m, mlen);
            if (model == NULL) {
                print_error("unknown loss model %.*s\n", (int)mlen, m);
                fail();
            }
            double retx = -1;
            for (const char *d = modes_arg; *d != '\0';) {
                size_t dlen = strcspn(d, ",");
                double g = cell(model, seed, d, dlen, lossless);
                if (dlen == 4 && strncmp(d, "retx", 4) == 0)
                    retx = g;
                else if (not_worse && retx >= 0)
                    assert_true(g >= retx); /* parity never below retransmission */
                d += dlen + (d[dlen] == ',');
            }
            m += mlen + (m[mlen] == ',');
        }
    }
}

int main(int argc, char **argv)
{
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: %s [N MESSAGES [MODELS [SEEDS [MODES [MIN_RATIO [NOT_WORSE]]]]]]\n"
               "  MODELS e.g. uni1,uni5,uni20,ge,all; MODES retx,ondemand,proactive[:SHARE]\n",
               argv[0]);
        return 0;
    }
    if (argc > 1)
        receivers = (uint32_t)strtoul(argv[1], NULL, 10);
    if (argc > 2)
        messages = strtoull(argv[2], NULL, 10);
    if (argc > 3)
        models_arg = argv[3];
    if (argc > 4)
        seeds = strtoull(argv[4], NULL, 10);
    if (argc > 5)
        modes_arg = argv[5];
    if (argc > 6)
        min_ratio = strtod(argv[6], NULL);
    if (argc > 7)
        not_worse = strcmp(argv[7], "1") == 0;
    if (receivers == 0 || messages == 0 || seeds == 0) {
        fprintf(stderr, "%s: N, MESSAGES and SEEDS must be positive (--help)\n", argv[0]);
        return 2;
    }
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_goodput_matrix)};
    return cmocka_run_group_tests_name("rel_goodput", tests, NULL, NULL);
}
