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
[ "$want_recovered" = 1 ] || exit 0
python3 - "$out/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
rec = {b: j["recovered"] for b, j in s["books"].items() if j}
print("recovered per book:", rec)
sys.exit(0 if rec and all(v > 0 for v in rec.values()) else 1)
PY
