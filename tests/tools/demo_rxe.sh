#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# demo_rxe.sh - tools/fanout-demo over rxe guests as a test: every book's digest must match the
# feed's (the demo's own verdict), and with --want-recovered the books must have repaired loss.
# usage: demo_rxe.sh BUILD_DIR OUT_DIR [--want-recovered] [fanout-demo options...]
set -u
build=${1:?usage: demo_rxe.sh BUILD_DIR OUT_DIR [--want-recovered] [options]}
out=${2:?}
shift 2
want_recovered=0
if [ "${1:-}" = --want-recovered ]; then
    want_recovered=1
    shift
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
"$here/../../tools/fanout-demo" --no-build --build-dir "$build" --out "$out" "$@" || exit 1
# The report shows where the latency goes and against what: every book's round trip in stages,
# and the rdps-ping baseline in the md tools' wait mode, idle and during the flow.
python3 - "$out/summary.json" <<'PY' || exit 1
import json, sys
s = json.load(open(sys.argv[1]))
books = [b for b, j in s["books"].items() if j]
missing = [b for b in books if b not in s.get("stages", {})]
if missing or not s.get("ping_baseline") or not s.get("ping_during_flow"):
    print("the report lacks", "stages of books " + ", ".join(missing) if missing else "",
          "" if s.get("ping_baseline") else "the rdps-ping baseline",
          "" if s.get("ping_during_flow") else "the rdps-ping during the flow")
    sys.exit(1)
PY
[ "$want_recovered" = 1 ] || exit 0
python3 - "$out/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
rec = {b: j["recovered"] for b, j in s["books"].items() if j}
print("recovered per book:", rec)
sys.exit(0 if rec and all(v > 0 for v in rec.values()) else 1)
PY
