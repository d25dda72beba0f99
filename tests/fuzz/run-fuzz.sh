#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# run-fuzz.sh - builds the libFuzzer harnesses with clang and runs each for a while on a copy of its corpus.
# Usage: tests/fuzz/run-fuzz.sh [SECONDS_PER_HARNESS (default 60)] [HARNESS...]
# New inputs land in BUILD/fuzz-work/<harness>; copy interesting ones (crashes as regression
# seeds after the fix) into tests/fuzz/corpus/<harness>/ and commit them.
set -eu
seconds=${1:-60}
[ $# -gt 0 ] && shift
harnesses=${*:-"frame_decode reasm sa_mad announce contacts receive_path receive_path_keyed rel_pub md_unpack md_snapshot md_recovery stat_parse"}
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${RDPS_FUZZ_BUILD:-$src/build-fuzz}

# Every library is built instrumented (coverage + ASan/UBSan), so harnesses can drive a whole ctx.
CC=${CC:-clang} cmake -S "$src" -B "$build" -DRDPS_FUZZ=ON -DRDPS_SANITIZE=ON -DRDPS_BUILD_TOOLS=OFF \
    >/dev/null
# librdps.so under clang's sanitizers must link too (it once failed on undefined __asan_*).
cmake --build "$build" --target rdps -j2 >/dev/null
# Harnesses live beside the code they test: tests/fuzz (engine), tests/addr (SA MADs) and
# tests/mdutil (market-data packets and snapshots).
for h in $harnesses; do
    cmake --build "$build" --target "fuzz_$h" -j2 >/dev/null
    case $h in
    sa_mad) area=addr ;;
    md_unpack | md_snapshot | md_recovery) area=mdutil ;;
    *) area=fuzz ;;
    esac
    work=$build/fuzz-work/$h
    mkdir -p "$work"
    cp -n "$src/tests/$area/corpus/$h"/* "$work"/ 2>/dev/null || true
    echo "== fuzz_$h for ${seconds}s (corpus $work)" >&2
    "$build/tests/$area/fuzz_$h" -max_total_time="$seconds" -max_len=16384 -print_final_stats=1 \
        -artifact_prefix="$build/fuzz-work/$h-" "$work"
done
