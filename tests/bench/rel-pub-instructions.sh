#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# rel-pub-instructions.sh - instructions per reliable message appended into the publisher ring and posted, measured with callgrind.
# Usage: tests/bench/rel-pub-instructions.sh [BUILD_DIR (default build)] [MSG_BYTES (64)] [MAX_DATAGRAM (1024)]
# Runs rel_pub_bench with N1 and N2 messages; start-up cost cancels in the difference.
# "append" counts rdps__rel_pub_append (fragment + copy into the ring, flow control, trail),
# "post" rdps__rel_pub_next_action + rdps__rel_pub_send_done (actions handed out and completed),
# "status" rdps__rel_pub_on_status (one per 256 frames), "end to end" the whole loop.
# Use a release-like build (RelWithDebInfo, no sanitizers).
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
msg=${2:-64}
dgram=${3:-1024}
bench=$build/tests/bench/rel_pub_bench
[ -x "$bench" ] || { echo "rel-pub-instructions: $bench not built (cmake --build $build --target rel_pub_bench)" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "rel-pub-instructions: valgrind not installed" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n1=10000
n2=110000

run() {
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$1" "$bench" "$1" "$msg" "$dgram" >/dev/null 2>"$tmp/log.$1" ||
        { cat "$tmp/log.$1" >&2; exit 1; }
    # From /, as engine-instructions.sh: run from the source tree, callgrind_annotate splits a
    # function by the file its code came from and leaves what it inlined from the layers' headers
    # (rdps_rel_admit.h, rdps_rel_flow.h, ...) out of its inclusive count.
    (cd / && callgrind_annotate --inclusive=yes --threshold=100 "$tmp/cg.$1") >"$tmp/ann.$1"
}
incl() {
    awk -v pat="$2" '$0 ~ pat && $1 ~ /^[0-9,]+$/ { gsub(",", "", $1); s += $1 } END { print s + 0 }' "$tmp/ann.$1"
}
total() {
    awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }' "$tmp/ann.$1"
}
run $n1
run $n2
d=$((n2 - n1))
delta() { echo $(( $(incl $n2 "$1") - $(incl $n1 "$1") )); }
app=$(delta ':rdps__rel_pub_append \[')
post=$(delta ':rdps__rel_pub_(next_action|send_done) \[')
st=$(delta ':rdps__rel_pub_on_status \[')
all=$(( $(total $n2) - $(total $n1) ))
awk -v a="$app" -v p="$post" -v s="$st" -v t="$all" -v d="$d" -v m="$msg" -v g="$dgram" 'BEGIN {
    printf "reliable publisher, %d-byte messages, %d-byte datagrams, %d messages measured:\n", m, g, d
    printf "  instructions per message appended:          %.1f\n", a / d
    printf "  instructions per message posted + completed: %.1f\n", p / d
    printf "  instructions per message for STATUS:        %.1f\n", s / d
    printf "  instructions per message end to end:        %.1f\n", t / d
}'
