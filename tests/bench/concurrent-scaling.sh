#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# concurrent-scaling.sh - messages per second of the thread model's two forms on the loopback device.
# Usage: tests/bench/concurrent-scaling.sh [BUILD_DIR (default build)] [MESSAGES_PER_THREAD (2000000)] [ROUNDS (3)]
# Runs concurrent_bench: 1, 2 and 4 threads each with its own ctx pair (a publisher ctx and a
# subscriber ctx, 64-byte messages in full datagrams), interleaved rounds, the best of each; then
# 4 threads sending on one concurrent publisher whose ctx's thread posts and receives. Prints the
# figures and the 1 -> 2 scaling, with the host's load and cores beside them: on a shared host the
# other processes take cores too, so read the scaling against the load. Use a release-like build.
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
per_thread=${2:-2000000}
rounds=${3:-3}
bench=$build/tests/bench/concurrent_bench
[ -x "$bench" ] || { echo "concurrent-scaling: $bench not built (cmake --build $build --target concurrent_bench)" >&2; exit 1; }
echo "host: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) before the run"
"$bench" "$per_thread" "$rounds"
echo "host: load average $(cut -d' ' -f1-3 /proc/loadavg) after the run"
