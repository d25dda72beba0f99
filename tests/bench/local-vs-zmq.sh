#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# local-vs-zmq.sh - the local device against libzmq's ipc:// in the same run: two processes,
# 64 B and 1 KiB messages, every message verified (rdsub --verify; zmq_ipc_bench checks index and
# fill). rdps: rdpub -> rdsub on -d local, unreliable (at the rate the subscriber keeps up with
# no drop is not promised: the figure counts verified messages) and reliable; zmq: PUB/SUB with
# unlimited high-water marks (no drops). Prints one line per case.
# usage: local-vs-zmq.sh BUILD_DIR [COUNT_64 [COUNT_1K]]
set -u
build=${1:?usage: local-vs-zmq.sh BUILD_DIR [COUNT_64 [COUNT_1K]]}
n64=${2:-1000000} n1k=${3:-300000}
work=$(mktemp -d /tmp/rdps-local-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
export RDPS_LOCAL_DIR=$work/dev RDPS_STAT=0
case_rdps() { # N SIZE [OPTIONS]
    local n=$1 size=$2 opt=${3:-}
    # shellcheck disable=SC2086
    timeout 300 "$build/tools/rdsub/rdsub" -d local -t bench -c "$n" --verify --count-loss \
        --timeout 200 -q --json $opt >"$work/sub" 2>&1 &
    sleep 0.5
    # shellcheck disable=SC2086
    timeout 300 "$build/tools/rdpub/rdpub" -d local -t bench --pattern -c "$n" -s "$size" \
        --wait-subs 1 --json $opt >"$work/pub" 2>&1
    wait
    python3 - "$work/sub" "$work/pub" "$size" "${opt:---unreliable}" "$n" <<'PY'
import json, sys
last = lambda f: [json.loads(l) for l in open(f) if l.startswith("{")][-1]
s, p = last(sys.argv[1]), last(sys.argv[2])
print("rdps local %5s B %-12s %9.0f msgs/s at the subscriber (publisher %9.0f), %d of %s verified"
      % (sys.argv[3], sys.argv[4], s["msgs_per_s"], p["msgs_per_s"], s["verified"], sys.argv[5]))
PY
}
for size in 64 1024; do
    n=$n64
    [ "$size" = 1024 ] && n=$n1k
    "$build/tests/bench/zmq_ipc_bench" "$size" "$n"
    case_rdps "$n" "$size"
    case_rdps "$n" "$size" --reliable
done
