#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# engine-instructions.sh - instructions per 64-byte message through the engine, measured with callgrind.
# Usage: tests/bench/engine-instructions.sh [BUILD_DIR (default build)] [MSG_BYTES (64)] [MAX_DATAGRAM (1024)]
# Runs engine_bench with N1 and N2 messages; start-up cost cancels in the difference.
# "published" counts the fragmenter (rdps__frag_*), "delivered" the receive side
# (rdps__reasm_input and everything it calls, including the delivery callback),
# "end to end" the whole loop. Use a release-like build (RelWithDebInfo, no sanitizers).
# The reliable line: zero-copy publish with RELIABLE into a reliable receiver (fragmented when the
# message needs several datagrams), lossless, the receiver's rdps__reasm_rel_poll() after every
# frame counted as part of delivery; reliable-loss: the same with one frame in 20 held back and
# fed as a repair 256 frames later (parking above holes, in-order release).
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
msg=${2:-64}
dgram=${3:-1024}
bench=$build/tests/bench/engine_bench
[ -x "$bench" ] || { echo "engine-instructions: $bench not built (cmake --build $build --target engine_bench)" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "engine-instructions: valgrind not installed" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n1=10000
n2=110000

run() {
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$1" "$bench" "$1" "$msg" "$dgram" 1 "$mode" >/dev/null 2>"$tmp/log.$1" ||
        { cat "$tmp/log.$1" >&2; exit 1; }
    # From /: run from the source tree, callgrind_annotate splits a function by the file its code
    # came from and leaves what it inlined from headers out of its inclusive count.
    (cd / && callgrind_annotate --inclusive=yes --auto=no "$tmp/cg.$1") >"$tmp/ann.$1"
}

# Inclusive instructions of the functions whose name matches $2 (summed), from the annotation of run $1.
incl() {
    awk -v pat="$2" '$0 ~ pat && $1 ~ /^[0-9,]+$/ { gsub(",", "", $1); s += $1 } END { print s + 0 }' "$tmp/ann.$1"
}
total() {
    awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }' "$tmp/ann.$1"
}

measure() {
    mode=$1
    run $n1
    run $n2
    d=$((n2 - n1))
    pub=$(( $(incl $n2 "$2") - $(incl $n1 "$2") ))
    rxpat=${3:-':rdps__reasm_input \\['}
    rx=$(( $(incl $n2 "$rxpat") - $(incl $n1 "$rxpat") ))
    all=$(( $(total $n2) - $(total $n1) ))
    awk -v p="$pub" -v r="$rx" -v a="$all" -v d="$d" -v m="$msg" -v g="$dgram" -v mode="$mode" 'BEGIN {
        printf "engine (%s publish), %d-byte messages, %d-byte datagrams, %d messages measured:\n", mode, m, g, d
        printf "  instructions per published %d-byte message: %.1f\n", m, p / d
        printf "  instructions per delivered message:       %.1f\n", r / d
        printf "  instructions per message end to end:      %.1f\n", a / d
    }'
}

# copy: rdps__frag_init + rdps__frag_next (copies the payload); zerocopy: rdps__frag_put_single.
measure copy ':rdps__frag_(init|next) \\['
rel_rx=':rdps__reasm_(input|rel_poll) \\['
if [ $((msg + 32)) -le "$dgram" ]; then
    measure zerocopy ':rdps__frag_put_single \\['
    publish=':rdps__frag_put_single \\['
else
    publish=':rdps__frag_(init|next) \\['
fi
measure reliable "$publish" "$rel_rx"
measure reliable-loss "$publish" "$rel_rx"
