/* SPDX-License-Identifier: BSD-2-Clause */
/* test_tool_cli.c - the tool layer: numeric options (values, ranges, one-line errors), the
 * loss generator's frame types, and the nested JSON writer with its escaper. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctx_options.h"
#include "rdps_frame.h"
#include "tool_cli.h"
#include "tool_json.h"

/* JSON output goes to a memory stream; *buf holds the text after capture_end (caller frees). */
static void capture_begin(FILE **f, char **buf, size_t *len)
{
    *f = open_memstream(buf, len);
    assert_non_null(*f);
}

static void capture_end(FILE *f)
{
    assert_int_equal(fclose(f), 0);
}

/* stderr of one call, to check the error line. */
static char *stderr_of(bool (*call)(void *), void *arg, bool *result)
{
    char path[] = "/tmp/test_tool_cli.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    dup2(fd, STDERR_FILENO);
    *result = call(arg);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    char *text = calloc(1, 512);
    assert_non_null(text);
    lseek(fd, 0, SEEK_SET);
    ssize_t n = read(fd, text, 511);
    assert_true(n >= 0);
    close(fd);
    unlink(path);
    return text;
}

static void test_parse_u64(void **state)
{
    uint64_t v;
    (void)state;
    assert_true(tool_parse_u64("64", 0, 100, false, &v) && v == 64);
    assert_true(tool_parse_u64("16m", 0, UINT64_MAX, true, &v) && v == 16u << 20);
    assert_false(tool_parse_u64("16m", 0, UINT64_MAX, false, &v));
    assert_false(tool_parse_u64("-1", 0, 100, false, &v));
    assert_false(tool_parse_u64("+1", 0, 100, false, &v));
    assert_false(tool_parse_u64(" 1", 0, 100, false, &v));
    assert_false(tool_parse_u64("101", 0, 100, false, &v));
    assert_false(tool_parse_u64("", 0, 100, false, &v));
    assert_false(tool_parse_u64("12x", 0, 100, true, &v));
    assert_false(tool_parse_u64("99999999999999999999", 0, UINT64_MAX, false, &v));
    assert_false(tool_parse_u64("17179869184g", 0, UINT64_MAX, true, &v)); /* overflows */
}

struct opt_call {
    const char *name, *arg;
    uint64_t min, max, value, lo, hi;
    double rate;
};

static bool call_u64(void *p)
{
    struct opt_call *c = p;
    return tool_opt_u64("prog", c->name, c->arg, c->min, c->max, &c->value);
}

static bool call_size(void *p)
{
    struct opt_call *c = p;
    return tool_opt_size("prog", c->name, c->arg, c->min, c->max, &c->value);
}

static bool call_range(void *p)
{
    struct opt_call *c = p;
    return tool_opt_size_range("prog", c->name, c->arg, c->max, &c->lo, &c->hi);
}

static bool call_probability(void *p)
{
    struct opt_call *c = p;
    return tool_opt_probability("prog", c->name, c->arg, &c->rate);
}

static void test_opt_errors_are_one_line(void **state)
{
    bool ok;
    char *err;
    (void)state;

    struct opt_call good = {.name = "--port", .arg = "7471", .min = 1, .max = 65535};
    err = stderr_of(call_u64, &good, &ok);
    assert_true(ok);
    assert_int_equal(good.value, 7471);
    assert_string_equal(err, "");
    free(err);

    struct opt_call bad = {.name = "--port", .arg = "70000", .min = 1, .max = 65535};
    err = stderr_of(call_u64, &bad, &ok);
    assert_false(ok);
    assert_string_equal(err, "prog: --port needs an integer in 1..65535, got '70000'\n");
    free(err);

    struct opt_call count = {.name = "-c", .arg = "0", .min = 1, .max = UINT64_MAX};
    err = stderr_of(call_u64, &count, &ok);
    assert_false(ok);
    assert_string_equal(err, "prog: -c needs an integer >= 1, got '0'\n");
    free(err);

    struct opt_call size = {.name = "-s", .arg = "2k", .min = 0, .max = 4096};
    err = stderr_of(call_size, &size, &ok);
    assert_true(ok);
    assert_int_equal(size.value, 2048);
    free(err);
    size.arg = "5k";
    err = stderr_of(call_size, &size, &ok);
    assert_false(ok);
    assert_non_null(strstr(err, "k/m/g suffix"));
    assert_non_null(strchr(err, '\n'));
    assert_null(strchr(strchr(err, '\n') + 1, '\n'));
    free(err);

    struct opt_call range = {.name = "--size-range", .arg = "1:100000", .max = 1u << 30};
    err = stderr_of(call_range, &range, &ok);
    assert_true(ok && range.lo == 1 && range.hi == 100000);
    free(err);
    const char *bad_ranges[] = {"5:1", "5", ":5", "5:", "1:2:3"};
    for (size_t i = 0; i < sizeof(bad_ranges) / sizeof(bad_ranges[0]); i++) {
        range.arg = bad_ranges[i];
        err = stderr_of(call_range, &range, &ok);
        assert_false(ok);
        assert_non_null(strstr(err, "MIN <= MAX"));
        free(err);
    }

    struct opt_call rate = {.name = "--loss-rx", .arg = "10%"};
    err = stderr_of(call_probability, &rate, &ok);
    assert_true(ok && rate.rate > 0.0999 && rate.rate < 0.1001);
    free(err);
    rate.arg = "0.05";
    err = stderr_of(call_probability, &rate, &ok);
    assert_true(ok && rate.rate > 0.0499 && rate.rate < 0.0501);
    free(err);
    const char *bad_rates[] = {"1.5", "abc", "", "nan", "-0.1", "5%x"};
    for (size_t i = 0; i < sizeof(bad_rates) / sizeof(bad_rates[0]); i++) {
        rate.arg = bad_rates[i];
        err = stderr_of(call_probability, &rate, &ok);
        assert_false(ok);
        assert_non_null(strstr(err, "rate in [0,1]"));
        free(err);
    }
}

struct loss_call {
    const char *arg;
    struct tool_ctx_options o;
};

static bool call_loss_frames(void *p)
{
    struct loss_call *c = p;
    tool_ctx_options_init(&c->o);
    return tool_ctx_option("prog", TOOL_OPT_LOSS_FRAMES, c->arg, &c->o) == 1;
}

/* --loss-frames names every frame type, parity repairs included: bit 1 << type each. */
static void test_loss_frames_names(void **state)
{
    (void)state;
    static const struct {
        const char *arg;
        uint32_t bits;
    } good[] = {
        {"data", 1u << RDPS_FRAME_DATA},
        {"parity", 1u << RDPS_FRAME_PARITY},
        {"data,parity", (1u << RDPS_FRAME_DATA) | (1u << RDPS_FRAME_PARITY)},
        {"heartbeat,nak,status,announce", (1u << RDPS_FRAME_HEARTBEAT) | (1u << RDPS_FRAME_NAK) |
                                              (1u << RDPS_FRAME_STATUS) |
                                              (1u << RDPS_FRAME_ANNOUNCE)},
        {"all", (1u << RDPS_FRAME_DATA) | (1u << RDPS_FRAME_HEARTBEAT) | (1u << RDPS_FRAME_NAK) |
                    (1u << RDPS_FRAME_STATUS) | (1u << RDPS_FRAME_ANNOUNCE) |
                    (1u << RDPS_FRAME_PARITY)},
    };
    bool ok;
    struct loss_call c;
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        c.arg = good[i].arg;
        char *err = stderr_of(call_loss_frames, &c, &ok);
        assert_true(ok);
        assert_int_equal(c.o.loss_frame_types, good[i].bits);
        assert_string_equal(err, "");
        free(err);
    }
    const char *bad[] = {"fec", "", "parity,bogus", "data,,parity"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        c.arg = bad[i];
        char *err = stderr_of(call_loss_frames, &c, &ok);
        assert_false(ok);
        assert_non_null(strstr(err, "--loss-frames"));
        free(err);
    }
    c.arg = "fec";
    char *err = stderr_of(call_loss_frames, &c, &ok);
    assert_non_null(strstr(err, "announce, parity, all"));
    free(err);
}

static void test_json_nesting(void **state)
{
    FILE *f;
    char *buf = NULL;
    size_t len = 0;
    struct tool_json j;
    (void)state;
    capture_begin(&f, &buf, &len);
    tool_json_init(&j, f);
    tool_json_object_begin(&j, NULL);
    tool_json_str(&j, "tool", "rdsub");
    tool_json_u64(&j, "messages", 18446744073709551615ull);
    tool_json_i64(&j, "delta", -5);
    tool_json_array_begin(&j, "sessions");
    tool_json_object_begin(&j, NULL);
    tool_json_u64(&j, "qpn", 17);
    tool_json_bool(&j, "verified", true);
    tool_json_object_end(&j);
    tool_json_object_begin(&j, NULL);
    tool_json_object_end(&j);
    tool_json_array_end(&j);
    tool_json_array_begin(&j, "empty");
    tool_json_array_end(&j);
    tool_json_double(&j, "rate", 1.5);
    tool_json_double(&j, "bad", NAN);
    tool_json_double(&j, "inf", INFINITY);
    tool_json_str(&j, "none", NULL);
    tool_json_object_end(&j);
    tool_json_finish(&j);
    capture_end(f);
    assert_string_equal(buf, "{\"tool\":\"rdsub\",\"messages\":18446744073709551615,\"delta\":-5,"
                             "\"sessions\":[{\"qpn\":17,\"verified\":true},{}],\"empty\":[],"
                             "\"rate\":1.5,\"bad\":null,\"inf\":null,\"none\":null}\n");
    free(buf);
}

static void test_json_finish_closes_open_levels(void **state)
{
    FILE *f;
    char *buf = NULL;
    size_t len = 0;
    struct tool_json j;
    (void)state;
    capture_begin(&f, &buf, &len);
    tool_json_init(&j, f);
    tool_json_object_begin(&j, NULL);
    tool_json_array_begin(&j, "a");
    tool_json_u64(&j, NULL, 1);
    tool_json_object_begin(&j, NULL);
    tool_json_finish(&j);
    capture_end(f);
    assert_string_equal(buf, "{\"a\":[1,{}]}\n");
    free(buf);
}

static void test_json_too_deep_stays_well_formed(void **state)
{
    FILE *f;
    char *buf = NULL;
    size_t len = 0;
    struct tool_json j;
    (void)state;
    capture_begin(&f, &buf, &len);
    tool_json_init(&j, f);
    for (int i = 0; i < TOOL_JSON_MAX_DEPTH + 3; i++)
        tool_json_array_begin(&j, NULL);
    tool_json_u64(&j, NULL, 7); /* too deep: dropped */
    for (int i = 0; i < TOOL_JSON_MAX_DEPTH + 3; i++)
        tool_json_array_end(&j);
    tool_json_u64(&j, NULL, 8);
    tool_json_finish(&j);
    capture_end(f);
    char want[2 * TOOL_JSON_MAX_DEPTH + 8];
    memset(want, '[', TOOL_JSON_MAX_DEPTH);
    memset(want + TOOL_JSON_MAX_DEPTH, ']', TOOL_JSON_MAX_DEPTH);
    strcpy(want + 2 * TOOL_JSON_MAX_DEPTH, ",8\n");
    assert_string_equal(buf, want);
    free(buf);
}

static void test_json_escape(void **state)
{
    FILE *f;
    char *buf = NULL;
    size_t len = 0;
    (void)state;
    capture_begin(&f, &buf, &len);
    tool_json_escape(f, "a\"b\\c\nd\te\x01\x1f\x7f\xc3\xa9/");
    capture_end(f);
    /* UTF-8 passes through unchanged; '/' needs no escape. */
    assert_string_equal(buf, "\"a\\\"b\\\\c\\nd\\te\\u0001\\u001f\\u007f\xc3\xa9/\"");
    free(buf);

    /* Keys go through the same escaper. */
    struct tool_json j;
    buf = NULL;
    capture_begin(&f, &buf, &len);
    tool_json_init(&j, f);
    tool_json_object_begin(&j, NULL);
    tool_json_str(&j, "k\"ey", "v\r");
    tool_json_finish(&j);
    capture_end(f);
    assert_string_equal(buf, "{\"k\\\"ey\":\"v\\r\"}\n");
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_u64),
        cmocka_unit_test(test_opt_errors_are_one_line),
        cmocka_unit_test(test_loss_frames_names),
        cmocka_unit_test(test_json_nesting),
        cmocka_unit_test(test_json_finish_closes_open_levels),
        cmocka_unit_test(test_json_too_deep_stays_well_formed),
        cmocka_unit_test(test_json_escape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
