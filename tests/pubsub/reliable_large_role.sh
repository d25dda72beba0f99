#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# reliable_large_role.sh - one guest's part in the large-message test across guests: reliable messages of 1, 8 and 16 MiB under netem loss and reordering.
#
# Guest 0 publishes with rdpub --reliable (a 40 MiB ring, so a 16 MiB message fits), every other
# guest runs rdsub --reliable --verify. A 16 MiB message is 17 051 datagrams at MTU 1024, longer
# than a receiver's sequence window of 2048: it streams through the window. For each wire
# condition (every guest puts the same netem qdisc on its interface) and each size in turn, the
# run gets its own topic (the publisher waits for every subscriber of it, which keeps the guests
# in step). Every subscriber must verify every message: intact, in order, exactly once, no loss
# event (rdsub exits 0 AND its figures say so; neither is trusted alone). Counts are small: under
# TCG a guest moves about 1 MB/s, so the whole run takes a few minutes.
#
# usage: reliable_large_role.sh BUILD_DIR [SCENARIO...]   (inside tools/rxe-vm)
#   SCENARIO: loss5, reorder (default: both)
set -u
build=${1:?usage: reliable_large_role.sh BUILD_DIR [SCENARIO...]}
shift
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ -n "${RDPS_VM_INDEX:-}" ] || { echo "run inside tools/rxe-vm"; exit 2; }
subs=$((RDPS_VM_COUNT - 1))

declare -A netem=(
    [loss5]="loss 5%"
    [reorder]="delay 1ms reorder 25% 50%"
)
order=(loss5 reorder)
[ $# -gt 0 ] && order=("$@")
# size:count, largest last
runs=(1m:6 8m:2 16m:2)

bytes_of() {
    case $1 in
    *m) echo $((${1%m} * 1024 * 1024)) ;;
    *) echo "$1" ;;
    esac
}

status=0
for name in "${order[@]}"; do
    args=${netem[$name]:-}
    [ -n "$args" ] || { echo "unknown scenario $name"; exit 2; }
    # shellcheck disable=SC2086 # netem arguments are words on purpose
    tc qdisc replace dev "$RDPS_VM_NETDEV" root netem $args ||
        { echo "[$name] tc qdisc replace failed"; exit 1; }
    for run in "${runs[@]}"; do
        size=${run%%:*} count=${run##*:}
        tag="$name.$size"
        out="${RDPS_VM_SCRATCH:-/tmp}/large.$tag.$RDPS_VM_INDEX"
        # 200 kB/s at the least, and a minute for discovery and the tail.
        limit=$((count * $(bytes_of "$size") / 200000 + 60))
        start=$(date +%s.%N)
        if [ "$RDPS_VM_INDEX" -eq 0 ]; then
            "$build/tools/rdpub/rdpub" -t "rel.large.$tag" --reliable --ring 40m --pattern \
                -c "$count" -s "$size" --wait-subs "$subs" --wait-timeout 90 \
                --drain-timeout "$limit" --json >"$out.json" 2>"$out.err"
            rc=$?
            [ $rc -eq 0 ] || { echo "[$tag] rdpub exited $rc"; tail -3 "$out.err"; status=1; }
            "$here/check_json.py" "$out.json" "messages==$count" >/dev/null || status=1
        else
            "$build/tools/rdsub/rdsub" -t "rel.large.$tag" -c "$count" --reliable --verify \
                --timeout "$limit" -q --json >"$out.json" 2>"$out.err"
            rc=$?
            [ $rc -eq 0 ] || { echo "[$tag] rdsub exited $rc"; tail -3 "$out.err"; status=1; }
            "$here/check_json.py" "$out.json" "verified==$count" "out_of_order==0" \
                "loss_events==0" "duplicates==0" "corrupt==0" "missing==0" >/dev/null ||
                { echo "[$tag] subscriber figures:"; tail -1 "$out.json"; status=1; }
        fi
        python3 - "$out.json" "$tag" "$RDPS_VM_INDEX" "$start" <<'EOF'
import json, sys, time
try:
    d = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
except (OSError, ValueError, IndexError):
    d = {}
keys = ("messages", "verified", "bytes", "recovered", "naks_sent", "repairs", "naks_received",
        "loss_events", "repair_latency_p50_us", "repair_latency_p99_us", "msgs_per_s", "rtt_us")
print(f"[{sys.argv[2]}] guest {sys.argv[3]} {time.time() - float(sys.argv[4]):.1f} s: " +
      " ".join(f"{k}={d[k]}" for k in keys if k in d))
EOF
    done
done
tc qdisc del dev "$RDPS_VM_NETDEV" root 2>/dev/null
exit $status
