#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# local-vs-zmq.sh - the local device against libzmq's ipc:// and the in-process loopback device,
# in the same run: one publisher and one subscriber, 64 B and 1 KiB messages, every message
# verified (index and fill). rdps: local_bench (two processes on -d local; two threads on
# loopback), reliable and unreliable; zmq: zmq_ipc_bench (PUB/SUB, unlimited high-water marks: no
# drops). Throughput as fast as the publisher goes (msgs/s at the subscriber, first to last; an
# unreliable subscriber that cannot keep up loses datagrams, counted as a full receive queue, and
# the line says how many were verified), then one-way latency p50 paced at 10 000 msgs/s (one
# clock). ROUNDS rounds, interleaved, so a loaded host spoils all columns alike.
# usage: local-vs-zmq.sh BUILD_DIR [ROUNDS [COUNT_64 [COUNT_1K]]]
set -u
build=${1:?usage: local-vs-zmq.sh BUILD_DIR [ROUNDS [COUNT_64 [COUNT_1K]]]}
rounds=${2:-3} n64=${3:-300000} n1k=${4:-100000}
bench=$build/tests/bench
work=$(mktemp -d /tmp/rdps-local-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
export RDPS_LOCAL_DIR=$work/dev RDPS_STAT=0
echo "# $(date -u +%FT%TZ), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$rounds"); do
    echo "# round $round"
    for size in 64 1024; do
        n=$n64
        [ "$size" = 1024 ] && n=$n1k
        timeout 300 "$bench/zmq_ipc_bench" "$size" "$n"
        for mode in reliable unreliable; do
            timeout 300 "$bench/local_bench" local "$size" "$n" "$mode"
            timeout 300 "$bench/local_bench" loopback "$size" "$n" "$mode"
        done
    done
    # Unreliable: the rates a subscriber keeps up with (a faster publisher overruns its ring).
    for rate in 100000 200000 400000; do
        timeout 300 "$bench/local_bench" local 64 "$n64" unreliable "$rate"
    done
    timeout 300 "$bench/zmq_ipc_bench" 64 20000 10000
    timeout 300 "$bench/local_bench" local 64 20000 reliable 10000
    timeout 300 "$bench/local_bench" local 64 20000 unreliable 10000
    timeout 300 "$bench/local_bench" loopback 64 20000 reliable 10000
done
echo "# load $(cut -d' ' -f1-3 /proc/loadavg)"
