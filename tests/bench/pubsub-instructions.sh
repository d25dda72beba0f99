#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# pubsub-instructions.sh - instructions per 64-byte message through the public pub/sub API, measured with callgrind.
# Usage: tests/bench/pubsub-instructions.sh [BUILD_DIR (default build)] [MSG_BYTES (64)] [BATCH (32)]
#        RDPS_BENCH_MORE=1 ...: every message but each BATCH's last is sent with RDPS_SEND_MORE, so
#        messages share full datagrams (batching; 14 of 64 bytes per 1024-byte datagram);
#        RDPS_BENCH_BATCHING=off: one message per datagram (rdps 1.2's behaviour).
# Runs pubsub_bench (publisher ctx -> loopback fabric -> subscriber ctx) with N1
# and N2 messages; start-up cost cancels in the difference. Four modes: send and
# claim on an unreliable publisher, then the same on a reliable publisher with a
# reliable subscriber (reliable-send, reliable-claim: the claim is room in the
# retransmission ring). Figures:
#   published   rdps_pub_send inclusive (claim mode: rdps_pub_claim + rdps_pub_commit;
#               the application's write into the claimed buffer is not counted)
#   delivered   the subscriber's rdps_ctx_poll loop inclusive, per message, with the
#               application callback (the bench's counter) listed apart
#   pub poll    the publisher's rdps_ctx_poll once per BATCH messages (reaps send completions)
# All of them include the in-memory loopback transport (core/transport/loopback.c; its send
# queue, core/transport/soft_sq.c, runs inside the lb_* functions and is counted with them),
# which stands in for the device: on send it copies each datagram into the
# receiver's buffer (the NIC's DMA) and writes an eventfd when the receiver's
# ring goes non-empty; on receive it hands out and takes back the buffers.
# callgrind separates the lb_* functions by their callers, six deep (a reliable
# publisher reaches the transport through its pump: lb_flush'pump'rel_appended'...),
# so they are listed and subtracted per side ("rdps alone"). Use a release-like build
# (RelWithDebInfo, no sanitizers).
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
msg=${2:-64}
batch=${3:-32}
bench=$build/tests/bench/pubsub_bench
[ -x "$bench" ] || { echo "pubsub-instructions: $bench not built (cmake --build $build --target pubsub_bench)" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "pubsub-instructions: valgrind not installed" >&2; exit 1; }
tmp=$(mktemp -d)
trap '[ -n "${KEEP_TMP:-}" ] || rm -rf "$tmp"' EXIT
n1=10000
n2=60000

run() {
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$1" "--separate-callers6=lb_*" \
        "$bench" "$1" "$mode" "$batch" "$msg" >"$tmp/out.$1" 2>"$tmp/log.$1" ||
        { cat "$tmp/out.$1" "$tmp/log.$1" >&2; exit 1; }
    # From /: run from the source tree, callgrind_annotate splits a function by the file its code
    # came from and leaves what it inlined from headers out of its inclusive count.
    (cd / && callgrind_annotate --inclusive=yes --threshold=100 --auto=no "$tmp/cg.$1") >"$tmp/ann.$1"
}

# Inclusive instructions of the functions whose "file:function [object]" matches $2 (summed), run $1.
# Only lines that name the object count: with --separate-callers, callgrind_annotate may print
# a function twice, once without it.
incl() {
    awk -v pat="$2" '$0 ~ pat && /\]$/ && $1 ~ /^[0-9,]+$/ { gsub(",", "", $1); s += $1 } END { print s + 0 }' "$tmp/ann.$1"
}
total() {
    awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }' "$tmp/ann.$1"
}
# Per-message difference between the two runs.
per() {
    awk -v a="$(incl $n1 "$1")" -v b="$(incl $n2 "$1")" -v d=$((n2 - n1)) 'BEGIN { printf "%.1f", (b - a) / d }'
}
# "name per-message" for each loopback function called (through at most two callers) from $1.
lb_list() {
    awk -v pat=":lb_[a-z_]+'[^ ]*$1" '$0 ~ pat && /\]$/ && $1 ~ /^[0-9,]+$/ {
        name = $0; sub(/.*:lb_/, "lb_", name); sub(/\x27.*/, "", name); print name }' "$tmp/ann.$n2" |
        sort -u | while read -r f; do
            printf " %s %s" "$f" "$(per ":$f'[^ ]*$1")"
        done
}

measure() {
    mode=$1
    pub_pat=$2
    pub_callers=$3
    run $n1
    run $n2
    d=$((n2 - n1))
    pub=$(per "$pub_pat")
    pub_lb=$(per ":lb_[a-z_]+'[^ ]*$pub_callers")
    rx=$(per ':bench_poll_subscriber \[')
    rx_lb=$(per ":lb_[a-z_]+'[^ ]*bench_poll_subscriber")
    app=$(per 'pubsub_bench.c:on_message \[')
    ppoll=$(per ':bench_poll_publisher \[')
    ppoll_lb=$(per ":lb_[a-z_]+'[^ ]*bench_poll_publisher")
    all=$(awk -v a="$(total $n1)" -v b="$(total $n2)" -v d=$d 'BEGIN { printf "%.1f", (b - a) / d }')
    pub_alone=$(awk -v a="$pub" -v b="$pub_lb" 'BEGIN { printf "%.1f", a - b }')
    awk -v mode="$mode" -v m="$msg" -v b="$batch" -v d="$d" -v pub="$pub" -v pub_lb="$pub_lb" \
        -v rx="$rx" -v rx_lb="$rx_lb" -v app="$app" -v ppoll="$ppoll" -v ppoll_lb="$ppoll_lb" \
        -v all="$all" -v pub_list="$(lb_list "$pub_callers")" \
        -v rx_list="$(lb_list bench_poll_subscriber)" 'BEGIN {
        printf "pub/sub API (%s%s), %d-byte messages, loopback transport, subscriber polled every %d messages, %d messages measured:\n", mode, ENVIRON["RDPS_BENCH_MORE"] == "1" ? ", RDPS_SEND_MORE: batched" : "", m, b, d
        printf "  instructions per published %d-byte message (%s): %.1f\n", m, mode ~ /claim/ ? "rdps_pub_claim + rdps_pub_commit" : "rdps_pub_send", pub
        printf "      of which loopback transport %.1f:%s\n", pub_lb, pub_list
        printf "      rdps alone: %.1f\n", pub - pub_lb
        printf "  instructions per delivered message (rdps_ctx_poll on the subscriber, per message): %.1f\n", rx
        printf "      of which loopback transport %.1f:%s; application callback %.1f\n", rx_lb, rx_list, app
        printf "      rdps alone: %.1f\n", rx - rx_lb - app
        printf "  publisher rdps_ctx_poll per message (send completions, timers): %.1f (loopback %.1f)\n", ppoll, ppoll_lb
        printf "  instructions per message end to end (whole process): %.1f\n", all
    }'
}

# Two patterns per mode: the publish calls, and the caller names that mark loopback work done for them.
# measure prints each mode and leaves its rdps-alone publish figure in $pub_alone.
measure send ':rdps_pub_send(_ex)? \[' 'rdps_pub_send(_ex)?'
measure claim ':rdps_pub_(claim|claim_ex|commit) \[' 'rdps_pub_(claim|claim_ex|commit)'
measure reliable-send ':rdps_pub_send(_ex)? \[' 'rdps_pub_send(_ex)?'
rel_send=$pub_alone
measure reliable-claim ':rdps_pub_(claim|claim_ex|commit) \[' 'rdps_pub_(claim|claim_ex|commit)'
awk -v s="$rel_send" -v c="$pub_alone" -v m="$msg" 'BEGIN {
    printf "reliable publisher, %d-byte messages, rdps alone: claim + commit %.1f against rdps_pub_send %.1f instructions (%+.1f)\n", m, c, s, c - s
}'
