#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# fanout-instructions.sh - instructions per datagram per extra unicast subscriber at the publisher (callgrind).
# Usage: tests/bench/fanout-instructions.sh [BUILD_DIR (default build)] [MSG_BYTES (64)]
# Runs pubsub_bench over the loopback transport with K = 1..4 subscriber contexts of a unicast
# topic (RDPS_BENCH_TRANSPORT=unicast: each datagram is one submit of one buffer to K
# destinations) and, for reference, one multicast subscriber, with N1 and N2 messages (start-up
# cancels in the difference); unreliable (rdps_pub_send) and reliable (the same, posted from the
# ring). Per published message:
#   publish   rdps_pub_send inclusive, less the loopback's flush under it: rdps and the
#             work-request building a verbs transport does in submit (lb_submit)
#   flush     the loopback's flush under it: posting, and the copy into each receiver's buffer
#             that a NIC does (on verbs: the chain's post and the device)
# and the slope of each per extra subscriber (K = 1 to 4, least squares). Target for publish:
# under 40 instructions per extra subscriber (a copy is one more work request, not one more
# message). Use a release-like build (RelWithDebInfo, no sanitizers).
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
msg=${2:-64}
bench=$build/tests/bench/pubsub_bench
[ -x "$bench" ] || { echo "fanout-instructions: $bench not built" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "fanout-instructions: valgrind not installed" >&2; exit 1; }
tmp=$(mktemp -d)
trap '[ -n "${KEEP_TMP:-}" ] || rm -rf "$tmp"' EXIT
n1=5000
n2=25000

# run TRANSPORT K MODE N: callgrind of pubsub_bench, annotated inclusive into $tmp/ann.*
run() {
    local tag=$1.$2.$3.$4
    RDPS_BENCH_TRANSPORT=$1 RDPS_BENCH_SUBSCRIBERS=$2 valgrind --tool=callgrind \
        --callgrind-out-file="$tmp/cg.$tag" "--separate-callers6=lb_*" \
        "$bench" "$4" "$3" 32 "$msg" >"$tmp/out.$tag" 2>"$tmp/log.$tag" ||
        { cat "$tmp/out.$tag" "$tmp/log.$tag" >&2; exit 1; }
    callgrind_annotate --inclusive=yes --threshold=100 --auto=no "$tmp/cg.$tag" >"$tmp/ann.$tag"
}
incl() { # FILE PATTERN: inclusive instructions of the matching functions, summed
    awk -v pat="$2" '$0 ~ pat && /\]$/ && $1 ~ /^[0-9,]+$/ { gsub(",", "", $1); s += $1 } END { print s + 0 }' "$1"
}
per() { # TRANSPORT K MODE PATTERN: per message between the two runs
    local a b
    a=$(incl "$tmp/ann.$1.$2.$3.$n1" "$4")
    b=$(incl "$tmp/ann.$1.$2.$3.$n2" "$4")
    awk -v a="$a" -v b="$b" -v d=$((n2 - n1)) 'BEGIN { printf "%.1f", (b - a) / d }'
}

for mode in send reliable-send; do
    xs="" pubs="" flushes=""
    for t in multicast.1 unicast.1 unicast.2 unicast.3 unicast.4; do
        tr=${t%.*} k=${t#*.}
        run "$tr" "$k" "$mode" $n1
        run "$tr" "$k" "$mode" $n2
        all=$(per "$tr" "$k" "$mode" ':rdps_pub_send \[')
        flush=$(per "$tr" "$k" "$mode" ":lb_flush'[^ ]*rdps_pub_send")
        pub=$(awk -v a="$all" -v f="$flush" 'BEGIN { printf "%.1f", a - f }')
        printf "%-14s %-9s K=%s: publish %7.1f  flush %7.1f  instructions per message\n" \
            "$mode" "$tr" "$k" "$pub" "$flush"
        if [ "$tr" = unicast ]; then
            xs="$xs $k" pubs="$pubs $pub" flushes="$flushes $flush"
        fi
    done
    awk -v xs="$xs" -v ps="$pubs" -v fs="$flushes" -v mode="$mode" 'BEGIN {
        n = split(xs, x); split(ps, p); split(fs, f)
        for (i = 1; i <= n; i++) { sx += x[i]; sp += p[i]; sf += f[i]; sxx += x[i] * x[i] }
        for (i = 1; i <= n; i++) { cp += (x[i] - sx / n) * (p[i] - sp / n); cf += (x[i] - sx / n) * (f[i] - sf / n) }
        vx = sxx - sx * sx / n
        printf "%s: per extra unicast subscriber: publish %.1f (target < 40), flush %.1f instructions per datagram\n", mode, cp / vx, cf / vx
    }'
done
