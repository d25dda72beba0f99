#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""check_json.py - asserts conditions on the one-line JSON summary of an rdps tool.

usage: check_json.py FILE 'messages==10000' 'corrupt==0' 'gaps>0' ...
Prints every figure it checks; exits 1 when a condition fails or FILE has no JSON line.
"""
import json
import operator
import re
import sys

OPS = {"==": operator.eq, "!=": operator.ne, ">=": operator.ge, "<=": operator.le,
       ">": operator.gt, "<": operator.lt}


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    path = sys.argv[1]
    summary = None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                summary = json.loads(line)
    if summary is None:
        print(f"{path}: no JSON summary line", file=sys.stderr)
        return 1
    failed = 0
    for cond in sys.argv[2:]:
        m = re.fullmatch(r"(\w+)\s*(==|!=|>=|<=|>|<)\s*(-?[\d.]+)", cond)
        if not m:
            print(f"bad condition '{cond}'", file=sys.stderr)
            return 2
        key, op, want = m.group(1), m.group(2), float(m.group(3))
        if key not in summary:
            print(f"{path}: FAIL {cond}: no field '{key}'")
            failed += 1
            continue
        ok = OPS[op](float(summary[key]), want)
        print(f"{path}: {'ok  ' if ok else 'FAIL'} {key}={summary[key]} ({cond})")
        failed += not ok
    if failed:
        print(f"{path}: summary: {json.dumps(summary)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
