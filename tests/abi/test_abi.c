/* SPDX-License-Identifier: BSD-2-Clause */
/* test_abi.c - the *_sized entry points as programs built against other headers call them:
 * smaller and larger structs, canaries past the caller's size, the header version check. */
#include <rdps/rdps.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* rdps 1.0's sizes, as pubsub/abi.h freezes them. */
#define CONFIG_1_0   160u
#define PUB_OPTS_1_0 64u
#define SUB_OPTS_1_0 40u
#define COUNTERS_1_0 432u
#define SESSION_1_0  152u

#define CANARY 0xA5

struct big {
    _Alignas(max_align_t) unsigned char bytes[4096];
};

static void fill(void *p, size_t n, unsigned char v)
{
    memset(p, v, n);
}

static int all(const void *p, size_t n, unsigned char v)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i] != v)
            return 0;
    return 1;
}

static rdps_ctx_t *loopback_ctx(size_t cfg_size)
{
    struct big cfg;
    rdps_ctx_t *ctx = NULL;
    fill(&cfg, sizeof(cfg), 0);
    rdps_config_init_sized((rdps_config *)&cfg, cfg_size);
    rdps_config *c = (rdps_config *)&cfg;
    c->device = "loopback";
    c->stats_off = 1;
    assert_int_equal(rdps_ctx_create_sized(c, cfg_size, RDPS_VERSION_NUMBER, &ctx), 0);
    return ctx;
}

/* config_init never writes past the caller's size; a larger struct's tail is zeroed. */
static void test_config_init_sizes(void **state)
{
    (void)state;
    struct big cfg;
    fill(&cfg, sizeof(cfg), CANARY);
    rdps_config_init_sized((rdps_config *)&cfg, CONFIG_1_0);
    assert_true(all(cfg.bytes + CONFIG_1_0, sizeof(cfg) - CONFIG_1_0, CANARY));
    assert_int_equal(((rdps_config *)&cfg)->qkey, 0x01234567u);
    fill(&cfg, sizeof(cfg), CANARY);
    rdps_config_init_sized((rdps_config *)&cfg, 1000); /* a newer program's struct */
    assert_true(all(cfg.bytes + sizeof(rdps_config), 1000 - sizeof(rdps_config), 0));
    assert_true(all(cfg.bytes + 1000, sizeof(cfg) - 1000, CANARY));
    rdps_config_init_sized(NULL, 1000); /* ignored */
}

/*
 * A config smaller than 1.0's is refused; a newer program's larger config works while the fields
 * this library does not know are zero, and is refused (naming the byte) when one is set.
 */
static void test_ctx_create_sizes(void **state)
{
    (void)state;
    struct big cfg;
    rdps_ctx_t *ctx = (rdps_ctx_t *)&cfg;
    rdps_config_init_sized((rdps_config *)&cfg, sizeof(cfg));
    ((rdps_config *)&cfg)->device = "loopback";
    ((rdps_config *)&cfg)->stats_off = 1;
    assert_int_equal(
        rdps_ctx_create_sized((rdps_config *)&cfg, CONFIG_1_0 - 8, RDPS_VERSION_NUMBER, &ctx),
        RDPS_EINVAL);
    assert_null(ctx);
    assert_non_null(strstr(rdps_last_error_message(), "smaller than rdps 1.0"));
    assert_int_equal(
        rdps_ctx_create_sized((rdps_config *)&cfg, sizeof(cfg), RDPS_VERSION_NUMBER, &ctx), 0);
    rdps_ctx_destroy(ctx);
    cfg.bytes[sizeof(rdps_config) + 3] = 1; /* an option of a newer rdps */
    assert_int_equal(
        rdps_ctx_create_sized((rdps_config *)&cfg, sizeof(cfg), RDPS_VERSION_NUMBER, &ctx),
        RDPS_EINVAL);
    assert_non_null(strstr(rdps_last_error_message(), "does not know"));
    assert_int_equal(rdps_ctx_create_sized(NULL, sizeof(rdps_config), RDPS_VERSION_NUMBER, &ctx),
                     RDPS_EINVAL);
}

/* The header version: same major, minor not newer than the library's. */
static void test_header_version(void **state)
{
    (void)state;
    rdps_config cfg;
    rdps_ctx_t *ctx;
    rdps_config_init(&cfg);
    cfg.device = "loopback";
    cfg.stats_off = 1;
    unsigned newer_minor =
        ((unsigned)RDPS_VERSION_MAJOR << 16) | ((unsigned)(RDPS_VERSION_MINOR + 1) << 8);
    assert_int_equal(rdps_ctx_create_sized(&cfg, sizeof(cfg), newer_minor, &ctx), RDPS_ENOTSUP);
    assert_non_null(strstr(rdps_last_error_message(), "built against rdps"));
    unsigned other_major = (unsigned)(RDPS_VERSION_MAJOR + 1) << 16;
    assert_int_equal(rdps_ctx_create_sized(&cfg, sizeof(cfg), other_major, &ctx), RDPS_ENOTSUP);
    unsigned older_patch =
        ((unsigned)RDPS_VERSION_MAJOR << 16) | ((unsigned)RDPS_VERSION_MINOR << 8); /* patch .0 */
    assert_int_equal(rdps_ctx_create_sized(&cfg, sizeof(cfg), older_patch, &ctx), 0);
    rdps_ctx_destroy(ctx);
}

static void on_msg(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    (void)data;
    (void)len;
    (void)info;
    (*(int *)user)++;
}

/* Options structs: smaller than 1.0 refused; larger with a zero tail taken; a set unknown field
 * refused, not ignored. */
static void test_opts_sizes(void **state)
{
    (void)state;
    rdps_ctx_t *ctx = loopback_ctx(sizeof(rdps_config));
    struct big popts, sopts;
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    int got = 0;
    fill(&popts, sizeof(popts), 0);
    fill(&sopts, sizeof(sopts), 0);
    ((rdps_pub_opts *)&popts)->reliable = 1;
    assert_int_equal(
        rdps_pub_create_sized(ctx, "abi.opts", (rdps_pub_opts *)&popts, PUB_OPTS_1_0 - 1, &pub),
        RDPS_EINVAL);
    assert_int_equal(
        rdps_pub_create_sized(ctx, "abi.opts", (rdps_pub_opts *)&popts, sizeof(popts), &pub), 0);
    rdps_pub_destroy(pub);
    popts.bytes[sizeof(rdps_pub_opts)] = 7;
    assert_int_equal(
        rdps_pub_create_sized(ctx, "abi.opts", (rdps_pub_opts *)&popts, sizeof(popts), &pub),
        RDPS_EINVAL);
    assert_null(pub);
    assert_int_equal(rdps_pub_create_sized(ctx, "abi.opts", NULL, 0, &pub), 0); /* NULL: defaults */
    rdps_pub_destroy(pub);

    assert_int_equal(rdps_sub_create_sized(ctx, "abi.opts", on_msg, &got, (rdps_sub_opts *)&sopts,
                                           SUB_OPTS_1_0 - 8, &sub),
                     RDPS_EINVAL);
    assert_int_equal(rdps_sub_create_sized(ctx, "abi.opts", on_msg, &got, (rdps_sub_opts *)&sopts,
                                           sizeof(sopts), &sub),
                     0);
    rdps_sub_destroy(sub);
    sopts.bytes[sizeof(rdps_sub_opts) + 100] = 1;
    assert_int_equal(rdps_sub_create_sized(ctx, "abi.opts", on_msg, &got, (rdps_sub_opts *)&sopts,
                                           sizeof(sopts), &sub),
                     RDPS_EINVAL);
    rdps_ctx_destroy(ctx);
}

/* Counters and session stats: never written past the caller's size (an older program's struct),
 * zeroed past the library's (a newer one's), sessions at the caller's stride. */
static void test_output_sizes(void **state)
{
    (void)state;
    rdps_ctx_t *pctx = loopback_ctx(sizeof(rdps_config)), *sctx = loopback_ctx(CONFIG_1_0);
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    rdps_pub_opts popts = {.reliable = 1};
    rdps_sub_opts sopts = {.reliable = 1};
    int got = 0;
    assert_int_equal(rdps_sub_create(sctx, "abi.out", on_msg, &got, &sopts, &sub), 0);
    assert_int_equal(rdps_pub_create(pctx, "abi.out", &popts, &pub), 0);
    for (int i = 0; i < 200 && got < 20; i++) {
        (void)rdps_pub_send(pub, "x", 1);
        rdps_ctx_poll(pctx, 0); /* a reliable publisher polls: its frames go as sends complete */
        rdps_ctx_poll(sctx, 0);
    }
    assert_int_equal(got, 20);

    struct big out;
    const size_t sizes[] = {COUNTERS_1_0, sizeof(rdps_counters), sizeof(rdps_counters) + 64};
    for (size_t i = 0; i < 3; i++) {
        fill(&out, sizeof(out), CANARY);
        assert_int_equal(rdps_sub_counters_sized(sub, (rdps_counters *)&out, sizes[i]), 0);
        assert_true(((rdps_counters *)&out)->msgs_delivered == 20);
        assert_true(all(out.bytes + sizes[i], sizeof(out) - sizes[i], CANARY));
        if (sizes[i] > sizeof(rdps_counters))
            assert_true(all(out.bytes + sizeof(rdps_counters), 64, 0));
        fill(&out, sizeof(out), CANARY);
        assert_int_equal(rdps_pub_counters_sized(pub, (rdps_counters *)&out, sizes[i]), 0);
        assert_true(((rdps_counters *)&out)->msgs_sent == 20);
        assert_true(all(out.bytes + sizes[i], sizeof(out) - sizes[i], CANARY));
        fill(&out, sizeof(out), CANARY);
        assert_int_equal(rdps_ctx_counters_sized(sctx, (rdps_counters *)&out, sizes[i]), 0);
        assert_true(all(out.bytes + sizes[i], sizeof(out) - sizes[i], CANARY));
    }
    fill(&out, sizeof(out), CANARY);
    assert_int_equal(rdps_ctx_counters_sized(sctx, (rdps_counters *)&out, 16), RDPS_EINVAL);
    assert_true(all(out.bytes, 16, 0));
    assert_true(all(out.bytes + 16, sizeof(out) - 16, CANARY));

    /* Two sessions' slots at a stride 40 bytes above the library's struct. */
    size_t stride = sizeof(rdps_session_stats) + 40;
    fill(&out, sizeof(out), CANARY);
    assert_int_equal(rdps_sub_sessions_sized(sub, (rdps_session_stats *)&out, 2, stride), 1);
    const rdps_session_stats *s0 = (const rdps_session_stats *)&out;
    assert_int_equal(s0->session_id, rdps_pub_session(pub));
    assert_true(s0->delivered == 20);
    assert_true(all(out.bytes + sizeof(rdps_session_stats), 40, 0));
    assert_true(all(out.bytes + stride, sizeof(out) - stride, CANARY)); /* slot 1 untouched */
    assert_int_equal(rdps_sub_sessions_sized(sub, (rdps_session_stats *)&out, 1, SESSION_1_0 - 1),
                     RDPS_EINVAL);
    rdps_ctx_destroy(pctx);
    rdps_ctx_destroy(sctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_init_sizes), cmocka_unit_test(test_ctx_create_sizes),
        cmocka_unit_test(test_header_version),    cmocka_unit_test(test_opts_sizes),
        cmocka_unit_test(test_output_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
