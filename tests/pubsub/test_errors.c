/* SPDX-License-Identifier: BSD-2-Clause */
/* test_errors.c - rdps_last_error_message() belongs to the thread's last call that returns a code
 * (every entry point, failing and succeeding), texts say why, and zero config fields keep their
 * defaults (issue 37, rows 1-3). */
#include <rdps/rdps.h>

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ctx_internal.h"

static void on_msg(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    (void)data;
    (void)len;
    (void)info;
    if (user != NULL)
        (*(int *)user)++;
}

static void loopback_cfg(rdps_config *cfg)
{
    rdps_config_init(cfg);
    cfg->device = "loopback";
    cfg->stats_off = 1;
}

/* The message names `fn` first ("fn: ...") and contains `fragment`. */
static void assert_message(const char *fn, const char *fragment)
{
    const char *m = rdps_last_error_message();
    size_t n = strlen(fn);
    if (strncmp(m, fn, n) != 0 || m[n] != ':' || (fragment != NULL && strstr(m, fragment) == NULL))
        fail_msg("after %s: message \"%s\" (want \"%s: ...%s...\")", fn, m, fn,
                 fragment ? fragment : "");
}

/* Leaves a message behind that names another call: what must not show through later. */
static void stale_failure(void)
{
    assert_int_equal(rdps_pub_commit(NULL, NULL, 0), RDPS_EINVAL);
    assert_message("rdps_pub_commit", NULL);
}

struct fixture {
    rdps_ctx_t *ctx;
    rdps_pub_t *pub;
    rdps_sub_t *sub;
};

static int setup(void **state)
{
    static struct fixture f;
    rdps_config cfg;
    loopback_cfg(&cfg);
    memset(&f, 0, sizeof(f));
    assert_int_equal(rdps_ctx_create(&cfg, &f.ctx), 0);
    assert_int_equal(rdps_sub_create(f.ctx, "err.topic", on_msg, NULL, NULL, &f.sub), 0);
    assert_int_equal(rdps_pub_create(f.ctx, "err.topic", NULL, &f.pub), 0);
    for (int i = 0; i < 100 && !(rdps_pub_ready(f.pub) && rdps_sub_ready(f.sub)); i++)
        assert_true(rdps_ctx_poll(f.ctx, 0) >= 0);
    assert_int_equal(rdps_pub_ready(f.pub), 1);
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    rdps_ctx_destroy(f->ctx);
    return 0;
}

/* The issue's two cases: a failing call with no message of its own showed the previous one's. */
static void test_issue_cases(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(rdps_pub_send_ex(f->pub, NULL, 10, 0), RDPS_EINVAL);
    assert_message("rdps_pub_send_ex", "NULL data");
    assert_int_equal(rdps_pub_send(NULL, "abc", 3), RDPS_EINVAL);
    assert_message("rdps_pub_send", "NULL publisher");
    assert_null(strstr(rdps_last_error_message(), "10 bytes"));

    stale_failure();
    assert_int_equal(rdps_ctx_poll(NULL, 0), RDPS_EINVAL);
    assert_message("rdps_ctx_poll", "NULL ctx");
}

/* Polls and arms until the ctx is armed (0): work or timers may make arm say RDPS_EAGAIN. */
static int arm_until_armed(rdps_ctx_t *ctx)
{
    int rc = RDPS_EAGAIN;
    for (int i = 0; i < 1000 && rc == RDPS_EAGAIN; i++) {
        while (rdps_ctx_poll(ctx, 0) > 0)
            ;
        rc = rdps_ctx_arm(ctx);
    }
    return rc;
}

/*
 * One case per entry point that returns a code: it fails (its own message, naming it, whatever
 * failed before) and succeeds (the message empty). tests/pubsub/check_error_cases.py fails when an
 * RDPS_EXPORT function returning int has no CASE here.
 */
#define CASE(fn, failing_call, want_rc, fragment, good_call)                                  \
    do {                                                                                      \
        stale_failure();                                                                      \
        assert_int_equal((failing_call), (want_rc));                                          \
        assert_message(#fn, fragment);                                                        \
        stale_failure();                                                                      \
        int good_rc_ = (good_call);                                                           \
        if (good_rc_ < 0)                                                                     \
            fail_msg("%s: %s (%s)", #fn, rdps_err_name(good_rc_), rdps_last_error_message()); \
        if (rdps_last_error_message()[0] != '\0')                                             \
            fail_msg("%s succeeded, message \"%s\"", #fn, rdps_last_error_message());         \
    } while (0)

static void test_every_entry_point(void **state)
{
    struct fixture *f = *state;
    rdps_config cfg;
    rdps_ctx_t *ctx2 = NULL;
    rdps_pub_t *pub2 = NULL;
    rdps_sub_t *sub2 = NULL;
    rdps_counters counters;
    rdps_session_stats sessions[2];
    rdps_claim claim;
    char group[32];
    uint8_t key[RDPS_DOMAIN_KEY_BYTES] = {1};
    loopback_cfg(&cfg);

    CASE(rdps_ctx_create, rdps_ctx_create(NULL, &ctx2), RDPS_EINVAL, "config is NULL",
         rdps_ctx_create(&cfg, &ctx2));
    CASE(rdps_pub_create, rdps_pub_create(NULL, "t", NULL, &pub2), RDPS_EINVAL, NULL,
         rdps_pub_create(ctx2, "err.other", NULL, &pub2));
    CASE(rdps_sub_create, rdps_sub_create(f->ctx, "bad topic", on_msg, NULL, NULL, &sub2),
         RDPS_EINVAL, "topic", rdps_sub_create(ctx2, "err.other", on_msg, NULL, NULL, &sub2));
    CASE(rdps_ctx_poll, rdps_ctx_poll(NULL, 0), RDPS_EINVAL, "NULL ctx", rdps_ctx_poll(f->ctx, 0));
    CASE(rdps_ctx_fd, rdps_ctx_fd(NULL), RDPS_EINVAL, "NULL ctx", rdps_ctx_fd(f->ctx));
    CASE(rdps_ctx_arm, rdps_ctx_arm(NULL), RDPS_EINVAL, "NULL ctx", arm_until_armed(f->ctx));
    CASE(rdps_ctx_wait, rdps_ctx_wait(NULL, 0), RDPS_EINVAL, "NULL ctx", rdps_ctx_wait(f->ctx, 0));
    CASE(rdps_ctx_flush, rdps_ctx_flush(NULL), RDPS_EINVAL, "NULL ctx", rdps_ctx_flush(f->ctx));
    /* ctx2 is handed over: the next call (this thread's) takes it back. */
    CASE(rdps_ctx_handover, rdps_ctx_handover(NULL), RDPS_EINVAL, "NULL ctx",
         rdps_ctx_handover(ctx2));
    CASE(rdps_pub_send, rdps_pub_send(NULL, "x", 1), RDPS_EINVAL, "NULL publisher",
         rdps_pub_send(f->pub, "x", 1));
    CASE(rdps_pub_send_ex, rdps_pub_send_ex(f->pub, "x", 1, 0x80), RDPS_EINVAL, "0x80",
         rdps_pub_send_ex(f->pub, "x", 1, 0));
    CASE(rdps_pub_claim, rdps_pub_claim(f->pub, NULL), RDPS_EINVAL, "NULL claim",
         rdps_pub_claim(f->pub, &claim));
    CASE(rdps_pub_commit, rdps_pub_commit(f->pub, NULL, 0), RDPS_EINVAL, "NULL claim",
         rdps_pub_commit(f->pub, &claim, 1));
    CASE(rdps_pub_claim_ex, rdps_pub_claim_ex(f->pub, (size_t)64 << 20, 0, &claim), RDPS_EMSGSIZE,
         "max_message_size", rdps_pub_claim_ex(f->pub, 8, RDPS_SEND_MORE, &claim));
    assert_int_equal(rdps_pub_commit(f->pub, &claim, 8), 0);
    CASE(rdps_topic_group, rdps_topic_group(f->ctx, "t", group, 4), RDPS_EINVAL, "16 bytes",
         rdps_topic_group(f->ctx, "t", group, sizeof(group)));
    CASE(rdps_ctx_map_topic, rdps_ctx_map_topic(f->ctx, "t", "10.0.0.1"), RDPS_EINVAL, "10.0.0.1",
         rdps_ctx_map_topic(f->ctx, "err.mapped", "239.192.9.9"));
    CASE(rdps_ctx_watch_publishers, rdps_ctx_watch_publishers(f->ctx, NULL, NULL, NULL),
         RDPS_EINVAL, "NULL prefix", rdps_ctx_watch_publishers(f->ctx, "err.", NULL, NULL));
    CASE(rdps_ctx_counters, rdps_ctx_counters(NULL, &counters), RDPS_EINVAL, "NULL ctx",
         rdps_ctx_counters(f->ctx, &counters));
    CASE(rdps_pub_counters, rdps_pub_counters(NULL, &counters), RDPS_EINVAL, "NULL publisher",
         rdps_pub_counters(f->pub, &counters));
    CASE(rdps_sub_counters, rdps_sub_counters(NULL, &counters), RDPS_EINVAL, "NULL subscriber",
         rdps_sub_counters(f->sub, &counters));
    CASE(rdps_sub_sessions, rdps_sub_sessions(NULL, sessions, 2), RDPS_EINVAL, "NULL subscriber",
         rdps_sub_sessions(f->sub, sessions, 2));
    char path[] = "/tmp/rdps-test-errors-XXXXXX";
    int fd = mkstemp(path); /* mode 0600 */
    assert_true(fd >= 0);
    static const char line[] =
        "1:0011223344556677889900112233445566778899001122334455667788990011\n";
    assert_int_equal(write(fd, line, sizeof(line) - 1), (ssize_t)(sizeof(line) - 1));
    close(fd);
    CASE(rdps_domain_key_read, rdps_domain_key_read("/nonexistent/key", key, NULL), RDPS_ENOENT,
         "/nonexistent/key", rdps_domain_key_read(path, key, NULL));
    unlink(path);
    /* The key calls fail on a keyless ctx and succeed on a keyed one. */
    rdps_ctx_t *keyed;
    uint8_t key2[RDPS_DOMAIN_KEY_BYTES] = {2};
    cfg.domain_key = key;
    assert_int_equal(rdps_ctx_create(&cfg, &keyed), 0);
    CASE(rdps_ctx_key_add, rdps_ctx_key_add(f->ctx, key2, 2), RDPS_ENOTSUP, "without a domain key",
         rdps_ctx_key_add(keyed, key2, 2));
    CASE(rdps_ctx_key_use, rdps_ctx_key_use(NULL, 2), RDPS_EINVAL, "NULL ctx",
         rdps_ctx_key_use(keyed, 2));
    CASE(rdps_ctx_key_remove, rdps_ctx_key_remove(keyed, 2), RDPS_EBUSY, "sent with",
         rdps_ctx_key_remove(keyed, 1));
    rdps_ctx_destroy(keyed);
    rdps_ctx_destroy(ctx2);
}

/* A success empties the message the failure before it left. */
static void test_success_clears(void **state)
{
    struct fixture *f = *state;
    stale_failure();
    assert_int_equal(rdps_pub_send(f->pub, "x", 1), 0);
    assert_string_equal(rdps_last_error_message(), "");
    stale_failure();
    assert_true(rdps_ctx_poll(f->ctx, 0) >= 0);
    assert_string_equal(rdps_last_error_message(), "");
}

/* The message is the calling thread's: another thread's failures do not show. */
static void *fail_elsewhere(void *arg)
{
    (void)arg;
    rdps_ctx_poll(NULL, 0);
    return strcmp(rdps_last_error_message(), "rdps_ctx_poll: NULL ctx") == 0 ? arg : NULL;
}

static void test_per_thread(void **state)
{
    (void)state;
    pthread_t t;
    int token;
    stale_failure();
    assert_int_equal(pthread_create(&t, NULL, fail_elsewhere, &token), 0);
    void *ok;
    assert_int_equal(pthread_join(t, &ok), 0);
    assert_ptr_equal(ok, &token);
    assert_message("rdps_pub_commit", NULL);
}

/* RDPS_EAGAIN and RDPS_EBUSY say why. */
static void test_eagain_says_why(void **state)
{
    struct fixture *f = *state;
    rdps_pub_t *fresh;
    rdps_claim claim;

    /* A publisher whose group is still joining (the loopback device joins at the next poll). */
    assert_int_equal(rdps_pub_create(f->ctx, "err.fresh", NULL, &fresh), 0);
    assert_int_equal(rdps_pub_send(fresh, "x", 1), RDPS_EAGAIN);
    assert_message("rdps_pub_send", "not ready");
    assert_int_equal(rdps_pub_claim(fresh, &claim), RDPS_EAGAIN);
    assert_message("rdps_pub_claim", "not ready");
    rdps_pub_destroy(fresh);

    /* A claim outstanding. */
    assert_int_equal(rdps_pub_claim(f->pub, &claim), 0);
    assert_int_equal(rdps_pub_send(f->pub, "x", 1), RDPS_EBUSY);
    assert_message("rdps_pub_send", "claim outstanding");
    rdps_pub_abort(f->pub, &claim);

    /* Reliable: a subscriber of another ctx that never polls closes the window or fills the ring;
     * either way the message names which, never the generic text. */
    rdps_config cfg;
    rdps_ctx_t *far;
    rdps_sub_t *far_sub;
    rdps_pub_t *rel;
    rdps_pub_opts popts = {.reliable = 1, .ring_bytes = 64 * 1024};
    rdps_sub_opts sopts = {.reliable = 1};
    loopback_cfg(&cfg);
    cfg.announce_interval_ms = 10;
    assert_int_equal(rdps_ctx_create(&cfg, &far), 0);
    assert_int_equal(rdps_sub_create(far, "err.rel", on_msg, NULL, &sopts, &far_sub), 0);
    assert_int_equal(rdps_pub_create(f->ctx, "err.rel", &popts, &rel), 0);
    char payload[900] = {0};
    char why[640] = "";
    int rc = 0, sent = 0;
    for (int i = 0; i < 200000; i++) {
        rc = rdps_pub_send(rel, payload, sizeof(payload));
        if (rc == RDPS_EAGAIN) {
            snprintf(why, sizeof(why), "%s", rdps_last_error_message());
            if (sent > 0 && strstr(why, "not ready") == NULL)
                break; /* joined and sending, then held back */
        }
        assert_true(rc == 0 || rc == RDPS_EAGAIN);
        sent += rc == 0;
        rdps_ctx_poll(f->ctx, 0);
        if (sent < 4)
            rdps_ctx_poll(far, 0); /* the subscriber reports, then falls silent */
    }
    assert_int_equal(rc, RDPS_EAGAIN);
    print_message("reliable back-pressure after %d messages: %s\n", sent, why);
    if (strncmp(why, "rdps_pub_send: ", 15) != 0 ||
        (strstr(why, "window") == NULL && strstr(why, "ring") == NULL &&
         strstr(why, "reported") == NULL))
        fail_msg("reliable back-pressure without its reason: \"%s\"", why);
    rdps_pub_destroy(rel);
    rdps_ctx_destroy(far);

    /* rdps_ctx_arm with a timer due. */
    rdps__ctx_of_handle(f->ctx)->next_timer_ns = 0;
    assert_int_equal(rdps_ctx_arm(f->ctx), RDPS_EAGAIN);
    assert_message("rdps_ctx_arm", "timer is due");
}

/* Misleading texts of 1.2 (issue 37, row 2). */
static void test_texts_tell_the_truth(void **state)
{
    (void)state;
    rdps_config cfg;
    rdps_ctx_t *ctx;
    loopback_cfg(&cfg);

    /* A program built against a newer header: the text must not blame the device. */
    unsigned newer = (RDPS_VERSION_MAJOR << 16) | ((RDPS_VERSION_MINOR + 1) << 8);
    assert_int_equal(rdps_ctx_create_sized(&cfg, sizeof(cfg), newer, &ctx), RDPS_ENOTSUP);
    assert_message("rdps_ctx_create", "headers; this librdps is");
    assert_non_null(strstr(rdps_strerror(RDPS_ENOTSUP), "library version"));
    assert_null(strstr(rdps_strerror(RDPS_ENOTSUP), "on this device"));

    /* No such device: where to run without RDMA hardware. */
    cfg.device = "nosuchdev0";
    assert_int_equal(rdps_ctx_create(&cfg, &ctx), RDPS_ENODEV);
    assert_message("rdps_ctx_create", "\"loopback\"");
    assert_non_null(strstr(rdps_last_error_message(), "\"local\""));
    assert_non_null(strstr(rdps_last_error_message(), "tools/rxe-vm"));
}

/* Bad flags are not "NULL data". */
static void test_bad_flags(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(rdps_pub_send_ex(f->pub, "x", 1, 0x80), RDPS_EINVAL);
    assert_message("rdps_pub_send_ex", "unknown flags 0x80");
    assert_null(strstr(rdps_last_error_message(), "NULL"));
}

/* Zero keeps the default: max_message_size = 0 used to be taken as 0 bytes (every send failed). */
static void test_zero_fields_keep_defaults(void **state)
{
    (void)state;
    rdps_config cfg;
    rdps_ctx_t *ctx;
    rdps_pub_t *pub;
    loopback_cfg(&cfg);
    cfg.max_message_size = 0;
    assert_int_equal(rdps_ctx_create(&cfg, &ctx), 0);
    assert_int_equal(rdps_pub_create(ctx, "err.zero", NULL, &pub), 0);
    for (int i = 0; i < 100 && !rdps_pub_ready(pub); i++)
        rdps_ctx_poll(ctx, 0);
    assert_int_equal(rdps_pub_max_message_size(pub), 16u * 1024 * 1024);
    char big[5000] = {0};
    assert_int_equal(rdps_pub_send(pub, big, sizeof(big)), 0);
    rdps_ctx_destroy(ctx);

    /* A struct of zeros (no rdps_config_init) is a valid configuration. */
    rdps_config zero;
    memset(&zero, 0, sizeof(zero));
    zero.device = "loopback";
    zero.stats_off = 1;
    assert_int_equal(rdps_ctx_create(&zero, &ctx), 0);
    rdps_ctx_destroy(ctx);
}

/* Every field: zero filled in is the default, except where rdps.h gives zero its own meaning. */
static void test_zero_defaults_cover_every_field(void **state)
{
    (void)state;
    rdps_config defaults, filled;
    rdps__config_defaults(&defaults);
    memset(&filled, 0, sizeof(filled));
    rdps__config_zero_defaults(&filled);
    filled.loss_seed = defaults.loss_seed; /* a seed: 0 is one too */
    assert_memory_equal(&filled, &defaults, sizeof(filled));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_issue_cases, setup, teardown),
        cmocka_unit_test_setup_teardown(test_every_entry_point, setup, teardown),
        cmocka_unit_test_setup_teardown(test_success_clears, setup, teardown),
        cmocka_unit_test(test_per_thread),
        cmocka_unit_test_setup_teardown(test_eagain_says_why, setup, teardown),
        cmocka_unit_test(test_texts_tell_the_truth),
        cmocka_unit_test_setup_teardown(test_bad_flags, setup, teardown),
        cmocka_unit_test(test_zero_fields_keep_defaults),
        cmocka_unit_test(test_zero_defaults_cover_every_field),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
