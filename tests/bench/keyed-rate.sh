#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# keyed-rate.sh - rdpub->rdsub message rate with a domain key (authenticated, and encrypted) over
# the keyless rate, in the same guest run, rounds interleaved.
#
# Usage (host):  tests/bench/keyed-rate.sh [BUILD_DIR] [MESSAGES] [ROUNDS] [SIZE]
# Boots one guest with tools/rxe-vm; each round runs rdsub -c MESSAGES -q --json in the background
# and rdpub --pattern -s SIZE -c MESSAGES --wait-subs 1 unthrottled, once keyless, once keyed
# (authentication only) and once keyed with --encrypt; the subscriber's msgs_per_s (first to last
# message received) is the figure. Prints each round and the medians' ratios. Figures only.
set -u -o pipefail

if [ "${1:-}" != "--in-guest" ]; then
    repo=$(cd "$(dirname "$0")/../.." && pwd -P)
    build=$(cd "${1:-$repo/build}" && pwd -P)
    msgs=${2:-20000} rounds=${3:-5} size=${4:-64}
    cd "$repo" || exit 2
    exec tools/rxe-vm exec --timeout 900 \
        --host "tests/bench/keyed-rate.sh --in-guest '$build' $msgs $rounds $size"
fi

build=$2 msgs=$3 rounds=$4 size=$5
pub=$build/tools/rdpub/rdpub
sub=$build/tools/rdsub/rdsub
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
umask 077
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$out/domain.key"

# run KIND ROUND: one pub->sub run; prints the subscriber's msgs_per_s.
run() {
    local kind=$1 round=$2 args=()
    case $kind in
    keyless) ;;
    auth) args=(--key-file "$out/domain.key") ;;
    encrypt) args=(--key-file "$out/domain.key" --encrypt) ;;
    esac
    local topic=bench.keyed.$kind.$round
    timeout 120 "$sub" -t "$topic" "${args[@]}" -c "$msgs" -q --timeout 100 --json \
        >"$out/sub.json" 2>/dev/null &
    local s=$!
    timeout 120 "$pub" -t "$topic" "${args[@]}" --pattern -s "$size" -c "$msgs" --wait-subs 1 \
        >/dev/null 2>&1
    wait "$s"
    python3 -c "import json,sys; print(json.loads(open(sys.argv[1]).read().splitlines()[-1]).get('msgs_per_s', 0))" \
        "$out/sub.json" 2>/dev/null || echo 0
}

echo "keyed-rate: $msgs x $size-byte messages, $rounds rounds (keyless, auth, encrypt interleaved)"
declare -a keyless=() auth=() encrypt=()
for r in $(seq "$rounds"); do
    k=$(run keyless "$r") a=$(run auth "$r") e=$(run encrypt "$r")
    keyless+=("$k") auth+=("$a") encrypt+=("$e")
    echo "round $r: keyless $k, auth $a, encrypt $e msgs/s"
done
python3 - "${keyless[*]}" "${auth[*]}" "${encrypt[*]}" <<'EOF'
import statistics, sys
k, a, e = ([float(x) for x in arg.split()] for arg in sys.argv[1:4])
mk, ma, me = statistics.median(k), statistics.median(a), statistics.median(e)
print(f"median msgs/s: keyless {mk:.0f}, auth {ma:.0f}, encrypt {me:.0f}")
print(f"keyed over keyless: auth {ma / mk:.2f}, encrypt {me / mk:.2f}")
EOF
