#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""check_error_cases.py - every entry point that returns an error code is in test_errors.c.

  check_error_cases.py RDPS_H TEST_ERRORS_C

rdps_last_error_message() must belong to the last call that returns a code (rdps.h), so each
RDPS_EXPORT function returning int needs a CASE(name, ...) in test_errors.c that fails it and
succeeds it (a *_sized function under the name of its static inline wrapper; a query whose comment
says "never negative" returns no code). Prints each missing one and exits 1 when there is any.
"""
import os
import re
import sys

# The header's functions as the man page check reads them (prototype, doc, returns codes).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'packaging'))
from check_man import header_functions  # noqa: E402


def code_returning_functions(header):
    """Functions returning int codes (not the never-negative queries), *_sized under the name of
    their static inline wrapper (the name the message gives)."""
    funcs = header_functions(open(header, encoding='utf-8').read())
    return sorted({n[:-len('_sized')] if n.endswith('_sized') else n
                   for n, (_, _, returns_int) in funcs.items() if returns_int})


def main():
    if len(sys.argv) != 3:
        sys.exit('usage: check_error_cases.py RDPS_H TEST_ERRORS_C')
    wanted = code_returning_functions(sys.argv[1])
    cases = set(re.findall(r'\bCASE\(\s*(rdps_\w+)\s*,', open(sys.argv[2], encoding='utf-8').read()))
    if not wanted:
        sys.exit(f'{sys.argv[1]}: no function returning an error code found')
    missing = [n for n in wanted if n not in cases]
    for n in missing:
        print(f'{n}: returns an error code but test_errors.c has no CASE({n}, ...)')
    print(f'{len(wanted) - len(missing)} of {len(wanted)} functions that return error codes have '
          f'a case (queries documented "never negative" are exempt)')
    return 1 if missing else 0


if __name__ == '__main__':
    sys.exit(main())
