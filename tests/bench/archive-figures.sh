#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# archive-figures.sh - the figures of recorded history (issue 39), each with the command that
# gives it:
#   1. disk bytes per ITCH message, zstd levels 1 and 3 and uncompressed (archive_bench itch);
#   2. the recorder's instructions per message (callgrind: a recorder against a plain reliable
#      subscriber, both fed the same MoldUDP64 packets on the loopback device; start-up cancels
#      in the difference of two run lengths);
#   3. rdps-replay --fast from a local recording against rdpub on the same device (loopback,
#      no subscriber: what each can hand the library per second);
#   4. seek to a random time in a 10 GB recording (SEEK_GB; needs SEEK_GB + 2 GB free in
#      SEEK_DIR, default under /work or /tmp; removed afterwards).
# usage: tests/bench/archive-figures.sh [BUILD_DIR] (env: SEEK_GB=10, SEEK_DIR, SKIP_SEEK=1)
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
bench=$build/tests/bench/archive_bench
[ -x "$bench" ] || { echo "archive-figures: $bench not built (target archive_bench)" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rdps-archive-figures-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

echo "== 1. disk bytes per ITCH message (tools/md generator, md-feed's MoldUDP64 packets, 8 channels)"
for c in "zstd 1" "zstd 3" "none 0"; do
    echo "\$ archive_bench itch 2000000 DIR $c"
    # shellcheck disable=SC2086
    "$bench" itch 2000000 "$tmp/itch-${c% *}-${c#* }" $c
    rm -rf "$tmp/itch-${c% *}-${c#* }"
done

echo "== 2. recorder instructions per message (callgrind)"
if command -v valgrind >/dev/null; then
    n1=2000 n2=12000
    total() {
        rm -rf "$tmp/rec"
        ARCHIVE_BENCH_DIR=$tmp/rec valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" \
            "$bench" pubsub "$1" "$2" >/dev/null 2>"$tmp/cg.log" || { cat "$tmp/cg.log" >&2; exit 1; }
        (cd / && callgrind_annotate "$tmp/cg") | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }'
    }
    s1=$(total $n1 sub) s2=$(total $n2 sub) r1=$(total $n1 record) r2=$(total $n2 record)
    echo "\$ valgrind --tool=callgrind archive_bench pubsub {$n1,$n2} {sub,record}"
    awk -v s1="$s1" -v s2="$s2" -v r1="$r1" -v r2="$r2" -v d=$((n2 - n1)) 'BEGIN {
        sub_ = (s2 - s1) / d; rec = (r2 - r1) / d
        printf "  per MoldUDP64 packet (7.3 ITCH messages): subscriber %.0f instructions, recorder %.0f: the recorder adds %.0f (%.0f per ITCH message)\n", sub_, rec, rec - sub_, (rec - sub_) / 7.3
    }'
else
    echo "  skipped: valgrind not installed"
fi

echo "== 3. replay as fast as possible vs rdpub, loopback device, 64-byte messages, no subscriber"
n=1000000
"$bench" plain "$tmp/plain" "$n" 64
for rel in "" "--reliable"; do
    echo "\$ rdpub -d loopback -t rate.test --pattern -c $n -s 64 --linger 0 --json $rel"
    pub=$("$build/tools/rdpub/rdpub" -d loopback -t rate.test --pattern -c "$n" -s 64 --linger 0 --json $rel |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["msgs_per_s"])')
    unrel=--unreliable
    [ -n "$rel" ] && unrel=""
    echo "\$ rdps-replay --dir DIR --fast -d loopback --linger 0 --json -q $unrel"
    rep=$("$build/tools/rdps-replay/rdps-replay" --dir "$tmp/plain" --fast -d loopback --linger 0 --json -q $unrel |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["msgs_per_s"])')
    awk -v p="$pub" -v r="$rep" -v m="${rel:-unreliable}" 'BEGIN {
        printf "  %s: rdpub %.0f msg/s, rdps-replay %.0f msg/s (%.2f x)\n", m, p, r, r / p }'
done

echo "== 4. seek to a time in a large recording"
if [ "${SKIP_SEEK:-0}" = 1 ]; then
    echo "  skipped (SKIP_SEEK=1)"
    exit 0
fi
gb=${SEEK_GB:-10}
seek_dir=${SEEK_DIR:-}
if [ -z "$seek_dir" ]; then
    for d in /work /var/tmp /tmp; do
        if [ ! -d "$d" ] || [ ! -w "$d" ]; then continue; fi
        seek_dir=$(mktemp -d "$d/rdps-seek-XXXXXX")
        break
    done
fi
free_gb=$(df -P -BG "$seek_dir" | awk 'NR == 2 { sub("G", "", $4); print $4 }')
if [ "$free_gb" -lt $((gb + 2)) ]; then
    echo "  skipped: $free_gb GB free in $seek_dir, $((gb + 2)) needed (SEEK_GB to change)"
    rm -rf "$seek_dir"
    exit 0
fi
echo "\$ archive_bench seek $seek_dir/rec $gb 200"
"$bench" seek "$seek_dir/rec" "$gb" 200
# The same seeks with the page cache dropped before each batch, when this user may.
if [ -w /proc/sys/vm/drop_caches ]; then
    sync
    echo 3 >/proc/sys/vm/drop_caches
    echo "\$ (page cache dropped) archive_bench seek $seek_dir/rec $gb 20"
    "$bench" seek "$seek_dir/rec" "$gb" 20
fi
rm -rf "$seek_dir"
