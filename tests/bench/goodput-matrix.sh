#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# goodput-matrix.sh - reliable multicast on the simulated fabric: goodput against the bound the run's own repair bytes allow, retransmission only and with parity, per receiver count, loss model and seed (issue 40).
# Usage: tests/bench/goodput-matrix.sh [BUILD_DIR (default build)] [RECEIVERS... (default 1 2 8 64)]
# Environment: MESSAGES (per run; default 200000, 50000 for 64 receivers), MODELS (default
# uni1,uni5,uni20,ge,all), SEEDS (default 3), MODES (default retx,proactive: see
# `test_rel_goodput --help`).
# Runs `test_rel_goodput N MESSAGES MODELS SEEDS MODES` under nice, one process at a time (the
# simulator is single-threaded and CPU-bound), then prints one table row per cell: the bound
# (the lossless run's goodput times data bytes over data plus repair bytes), the goodput, their
# ratio, and the largest idle shares (the simulator's stall profile). Every run is checked:
# every message delivered in order exactly once, no loss event.
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
shift || true
receivers=${*:-1 2 8 64}
sim=$build/tests/proto/test_rel_goodput
[ -x "$sim" ] || { echo "goodput-matrix: $sim not built" >&2; exit 1; }
models=${MODELS:-uni1,uni5,uni20,ge,all}
seeds=${SEEDS:-3}
modes=${MODES:-retx,proactive}
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT

for n in $receivers; do
    msgs=${MESSAGES:-$((n >= 64 ? 50000 : 200000))}
    echo "# test_rel_goodput $n $msgs $models $seeds $modes" >&2
    nice -n 10 "$sim" "$n" "$msgs" "$models" "$seeds" "$modes" >"$tmp" 2>&1 ||
        { cat "$tmp" >&2; exit 1; }
    grep '^goodput' "$tmp" | grep -v lossless | awk -v msgs="$msgs" '
        BEGIN { if (!hdr++) printf "| N (messages) | loss | seed | mode | bound | goodput | ratio | idle (largest shares) |\n|---|---|---|---|---|---|---|---|\n" }
        {
            n = $2; sub(/N=/, "", n); model = $3; seed = $4; sub(/seed=/, "", seed); mode = $5
            for (i = 6; i <= NF; i++) {
                split($i, kv, "=")
                if (kv[1] == "share" && mode == "proactive") mode = mode " " kv[2]
                if (kv[1] == "bound") bound = kv[2]
                if (kv[1] == "goodput") good = kv[2]
                if (kv[1] == "ratio") ratio = kv[2]
            }
            idle = $0; sub(/.*idle: */, "", idle)
            printf "| %s (%s) | %s | %s | %s | %s | %s | %s | %s |\n", n, msgs, model, seed, mode, bound, good, ratio, idle
        }'
done
