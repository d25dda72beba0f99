#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""check_error_cases.py - every entry point that returns an error code is in test_errors.c.

  check_error_cases.py RDPS_H TEST_ERRORS_C

rdps_last_error_message() must belong to the last call that returns a code (rdps.h), so each
RDPS_EXPORT function returning int needs a CASE(name, ...) in test_errors.c that fails it and
succeeds it (a *_sized function under the name of its static inline wrapper). Prints each missing
one and exits 1 when there is any.
"""
import re
import sys


def code_returning_functions(header):
    text = open(header, encoding='utf-8').read()
    names = re.findall(r'^RDPS_EXPORT\s+int\s+(rdps_\w+)\s*\(', text, re.M)
    return sorted({n[:-len('_sized')] if n.endswith('_sized') else n for n in names})


def main():
    if len(sys.argv) != 3:
        sys.exit('usage: check_error_cases.py RDPS_H TEST_ERRORS_C')
    wanted = code_returning_functions(sys.argv[1])
    cases = set(re.findall(r'\bCASE\(\s*(rdps_\w+)\s*,', open(sys.argv[2], encoding='utf-8').read()))
    # Queries that return int but never a negative code: no error to attribute.
    queries = {'rdps_ctx_next_timeout_ms', 'rdps_pub_ready', 'rdps_sub_ready',
               'rdps_pub_subscriber_count', 'rdps_pub_receivers_behind', 'rdps_ctx_sends_pending'}
    missing = [n for n in wanted if n not in cases and n not in queries]
    for n in missing:
        print(f'{n}: returns an error code but test_errors.c has no CASE({n}, ...)')
    if not wanted:
        sys.exit(f'{sys.argv[1]}: no RDPS_EXPORT int function found')
    exempt = len(queries & set(wanted))
    print(f'{len(wanted) - exempt - len(missing)} of {len(wanted) - exempt} functions that return '
          f'error codes have a case ({exempt} never-negative queries exempt)')
    return 1 if missing else 0


if __name__ == '__main__':
    sys.exit(main())
