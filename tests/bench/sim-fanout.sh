#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# sim-fanout.sh - the reliable publisher on the simulated fabric, multicast against unicast fan-out, for N receivers: goodput, publisher instructions and bytes per delivered message.
# Usage: tests/bench/sim-fanout.sh [BUILD_DIR (default build)] [RECEIVERS... (default 8 64)]
# For each N, runs `test_rel_fabric unicast N MESSAGES MODEL` (lossless and 5 % uniform loss on
# data and control frames, seed 1) under callgrind, counting only the publisher engine
# (rdps__rel_pub_*: appends, posts, NAK/STATUS handling, heartbeats, flow control; the sim's
# NIC and receivers not counted). Unicast fan-out posts each "to the group" action as N copies
# on the publisher's link (sim_fabric.h); the copies themselves are the transport's work
# requests (fanout-instructions.sh counts those). Prints, per mode: the goodput (message bytes
# over the link's), publisher engine instructions per delivered message (per receiver) and
# bytes the publisher's link carried per delivered message.
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
shift || true
receivers=${*:-8 64}
sim=$build/tests/proto/test_rel_fabric
[ -x "$sim" ] || { echo "sim-fanout: $sim not built" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "sim-fanout: valgrind not installed" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for n in $receivers; do
    msgs=$((n >= 64 ? 3000 : 20000))
    for model in none uni5; do
        for mode in multicast unicast; do
            valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" '--toggle-collect=rdps__rel_pub_*' \
                "$sim" unicast "$n" "$msgs" "$model" "$mode" >"$tmp/out" 2>"$tmp/log" ||
                { cat "$tmp/out" "$tmp/log" >&2; exit 1; }
            line=$(grep '^sim fanout' "$tmp/out")
            instr=$(callgrind_annotate "$tmp/cg" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }')
            echo "$line" | awk -v i="$instr" -v m="$msgs" -v n="$n" '{
                sub(/^sim fanout /, ""); sub(/, repairs.*/, "");
                printf "%s; publisher engine instructions per delivered message %.1f\n", $0, i / (m * n) }'
        done
    done
done
