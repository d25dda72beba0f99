#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# discovery-instructions.sh - instructions per forged announcement in discovery (decode + engine), measured with callgrind.
# Usage: tests/bench/discovery-instructions.sh [BUILD_DIR (default build)]
# Runs discovery_flood with N1 and N2 announcements; set-up cost cancels in the difference, so the
# figures are the cost of announcements 10 001..110 000, with the table already full. Use a
# release-like build (RelWithDebInfo, no sanitizers).
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
bench=$build/tests/bench/discovery_flood
[[ -x $bench ]] || { echo "discovery-instructions: $bench not built (cmake --build $build --target discovery_flood)" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "discovery-instructions: valgrind not installed" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n1=10000
n2=110000

for n in $n1 $n2; do
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$n" "$bench" "$n" >/dev/null 2>"$tmp/log.$n" ||
        { cat "$tmp/log.$n" >&2; exit 1; }
    callgrind_annotate --inclusive=yes "$tmp/cg.$n" >"$tmp/ann.$n"
done

# Inclusive instructions of the function named $2, from the annotation of run $1.
incl() {
    awk -v pat=":$2 \\\\[" '$0 ~ pat && $1 ~ /^[0-9,]+$/ { gsub(",", "", $1); s += $1 } END { print s + 0 }' "$tmp/ann.$1"
}

d=$((n2 - n1))
engine=$(($(incl $n2 rdps__disc_on_announce) - $(incl $n1 rdps__disc_on_announce)))
decode=$(($(incl $n2 rdps__announce_decode) - $(incl $n1 rdps__announce_decode)))
[[ $engine -gt 0 && $decode -gt 0 ]] || { echo "discovery-instructions: functions not found in the profile" >&2; exit 1; }
awk -v e="$engine" -v c="$decode" -v d="$d" 'BEGIN {
    printf "discovery, %d forged announcements measured (table full, remote-only cap reached):\n", d
    printf "  instructions per announcement, engine (rdps__disc_on_announce): %.1f\n", e / d
    printf "  instructions per announcement, decode (rdps__announce_decode):  %.1f\n", c / d
}'
