/* SPDX-License-Identifier: BSD-2-Clause */
/* test_error.c - error codes: every code has a distinct name and text, detail messages compose. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "rdps_error.h"

static void test_every_code_has_name_and_text(void **state)
{
    (void)state;
#define CHECK_CODE_(name, value, message)                     \
    assert_true((value) < 0);                                 \
    assert_string_equal(rdps_err_name(value), "RDPS_" #name); \
    assert_string_equal(rdps_strerror(value), message);
    RDPS_ERROR_MAP(CHECK_CODE_)
#undef CHECK_CODE_
    assert_string_equal(rdps_err_name(0), "RDPS_OK");
    assert_string_equal(rdps_err_name(-999999), "RDPS_EUNKNOWN");
    assert_string_equal(rdps_strerror(-999999), "unknown error");
}

static void test_codes_are_distinct(void **state)
{
    static const int codes[] = {
#define LIST_CODE_(name, value, message) value,
        RDPS_ERROR_MAP(LIST_CODE_)
#undef LIST_CODE_
    };
    (void)state;
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
        for (size_t j = i + 1; j < sizeof(codes) / sizeof(codes[0]); j++)
            assert_int_not_equal(codes[i], codes[j]);
}

static void test_errno_mapping(void **state)
{
    (void)state;
    assert_int_equal(rdps__errno_code(ENOMEM), RDPS_ENOMEM);
    assert_int_equal(rdps__errno_code(-ENODEV), RDPS_ENODEV);
    assert_int_equal(rdps__errno_code(0), RDPS_EIO);
    /* An errno rdps has no name for stays a negative errno with the system's text. */
    assert_int_equal(rdps__errno_code(EXDEV), -EXDEV);
    assert_string_equal(rdps_strerror(-EXDEV), "Invalid cross-device link");
}

static void test_detail_message_composes(void **state)
{
    (void)state;
    rdps__clear_err();
    assert_string_equal(rdps_last_error_message(), "");
    assert_int_equal(rdps__set_err(RDPS_ENODEV, "device %s not found", "mlx5_9"), RDPS_ENODEV);
    assert_int_equal(rdps__prepend_err(RDPS_ENODEV, "ctx_create: "), RDPS_ENODEV);
    assert_string_equal(rdps_last_error_message(), "ctx_create: device mlx5_9 not found");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_code_has_name_and_text),
        cmocka_unit_test(test_codes_are_distinct),
        cmocka_unit_test(test_errno_mapping),
        cmocka_unit_test(test_detail_message_composes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
