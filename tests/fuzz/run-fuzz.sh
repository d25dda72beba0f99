#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# run-fuzz.sh - builds the libFuzzer harnesses with clang and runs each for a while on a copy of its corpus.
# Usage: tests/fuzz/run-fuzz.sh [SECONDS_PER_HARNESS (default 60)] [HARNESS...]
# New inputs land in BUILD/fuzz-work/<harness>; copy interesting ones (crashes as regression
# seeds after the fix) into tests/fuzz/corpus/<harness>/ and commit them.
set -eu
seconds=${1:-60}
[ $# -gt 0 ] && shift
harnesses=${*:-"frame_decode reasm sa_mad announce contacts receive_path receive_path_keyed rel_pub md_unpack md_snapshot md_recovery stat_parse archive replay_merge local_ring"}
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${RDPS_FUZZ_BUILD:-$src/build-fuzz}

# Every library is built instrumented (coverage + ASan/UBSan), so harnesses can drive a whole ctx;
# warnings are errors here too: clang finds what gcc does not (an uninitialized flag once).
CC=${CC:-clang} cmake -S "$src" -B "$build" -DRDPS_FUZZ=ON -DRDPS_SANITIZE=ON -DRDPS_BUILD_TOOLS=OFF -DRDPS_WERROR=ON \
    >/dev/null
# librdps.so under clang's sanitizers must link too (it once failed on undefined __asan_*).
cmake --build "$build" --target rdps -j2 >/dev/null
# Harnesses live beside the code they test: tests/fuzz (engine), tests/addr (SA MADs) and
# tests/mdutil (market-data packets and snapshots). All are built first, then run
# RDPS_FUZZ_JOBS at a time (default: the number of cores; libFuzzer uses one each), each with its
# own log, shown when it ends.
area_of() {
    case $1 in
    sa_mad) echo addr ;;
    md_unpack | md_snapshot | md_recovery) echo mdutil ;;
    *) echo fuzz ;;
    esac
}
for h in $harnesses; do
    cmake --build "$build" --target "fuzz_$h" -j2 >/dev/null
done
run_one() {
    local h=$1 area work
    area=$(area_of "$h")
    work=$build/fuzz-work/$h
    mkdir -p "$work"
    cp -n "$src/tests/$area/corpus/$h"/* "$work"/ 2>/dev/null || true
    echo "== fuzz_$h for ${seconds}s (corpus $work)" >"$build/fuzz-work/$h.log"
    "$build/tests/$area/fuzz_$h" -max_total_time="$seconds" -max_len=16384 -print_final_stats=1 \
        -artifact_prefix="$build/fuzz-work/$h-" "$work" >>"$build/fuzz-work/$h.log" 2>&1
}
jobs_max=${RDPS_FUZZ_JOBS:-$(nproc)}
declare -A pid_of
failed=()
finish() { # waits for harness $1, shows its log; a failure is remembered
    local h=$1
    if wait "${pid_of[$h]}"; then
        { head -n 1 "$build/fuzz-work/$h.log"; tail -n 6 "$build/fuzz-work/$h.log"; } >&2
    else
        cat "$build/fuzz-work/$h.log" >&2
        failed+=("$h")
    fi
    unset "pid_of[$h]"
}
running=()
for h in $harnesses; do
    if [ ${#running[@]} -ge "$jobs_max" ]; then
        finish "${running[0]}"
        running=("${running[@]:1}")
    fi
    run_one "$h" &
    pid_of[$h]=$!
    running+=("$h")
done
for h in "${running[@]}"; do finish "$h"; done
if [ ${#failed[@]} -gt 0 ]; then
    echo "run-fuzz: failed: ${failed[*]} (inputs in $build/fuzz-work/<harness>-crash-*)" >&2
    exit 1
fi
echo "run-fuzz: every harness ran ${seconds}s without a finding" >&2
