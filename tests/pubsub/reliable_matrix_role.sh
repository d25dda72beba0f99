#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# reliable_matrix_role.sh - one guest's part in the reliable loss matrix across guests: guest 0
# publishes with rdpub --reliable, every other guest runs rdsub --reliable --verify. For each
# wire condition in turn, every guest puts the same netem qdisc on its interface, and the
# scenario gets its own topic (the publisher waits for all subscribers of it, which keeps the
# guests in step). Every subscriber must verify every message: intact, in order, exactly once,
# no loss event (rdsub exits 0 AND its figures say so; neither is trusted alone).
#
# usage: reliable_matrix_role.sh BUILD_DIR COUNT SIZE_RANGE RATE [SCENARIO...]
#   SCENARIO is a name from the table below (default: all of them, in order)
set -u
build=$1 count=$2 sizes=$3 rate=$4
shift 4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ -n "${RDPS_VM_INDEX:-}" ] || { echo "run inside tools/rxe-vm"; exit 2; }
subs=$((RDPS_VM_COUNT - 1))
limit=$((count / rate + 120))

declare -A netem=(
    [loss5]="loss 5%"
    [loss20]="loss 20%"
    [gemodel]="loss gemodel 1% 10% 70% 0.1%"
    [reorder]="delay 1ms reorder 25% 50%"
    [duplicate]="duplicate 5%"
    [corrupt]="corrupt 1%"
)
order=(loss5 loss20 gemodel reorder duplicate corrupt)
[ $# -gt 0 ] && order=("$@")

status=0
for name in "${order[@]}"; do
    args=${netem[$name]:-}
    [ -n "$args" ] || { echo "unknown scenario $name"; exit 2; }
    # shellcheck disable=SC2086 # netem arguments are words on purpose
    tc qdisc replace dev "$RDPS_VM_NETDEV" root netem $args ||
        { echo "[$name] tc qdisc replace failed"; exit 1; }
    out="${RDPS_VM_SCRATCH:-/tmp}/matrix.$name.$RDPS_VM_INDEX"
    start=$(date +%s.%N)
    if [ "$RDPS_VM_INDEX" -eq 0 ]; then
        "$build/tools/rdpub/rdpub" -t "rel.matrix.$name" --reliable --pattern -c "$count" \
            --size-range "$sizes" -r "$rate" --wait-subs "$subs" --wait-timeout 90 \
            --drain-timeout 60 --json >"$out.json" 2>"$out.err"
        rc=$?
        [ $rc -eq 0 ] || { echo "[$name] rdpub exited $rc"; tail -3 "$out.err"; status=1; }
        "$here/check_json.py" "$out.json" "messages==$count" >/dev/null || status=1
    else
        "$build/tools/rdsub/rdsub" -t "rel.matrix.$name" -c "$count" --reliable --verify \
            --timeout "$limit" -q --json >"$out.json" 2>"$out.err"
        rc=$?
        [ $rc -eq 0 ] || { echo "[$name] rdsub exited $rc"; tail -3 "$out.err"; status=1; }
        "$here/check_json.py" "$out.json" "verified==$count" "out_of_order==0" \
            "loss_events==0" "duplicates==0" "corrupt==0" "missing==0" >/dev/null ||
            { echo "[$name] subscriber figures:"; tail -1 "$out.json"; status=1; }
    fi
    python3 - "$out.json" "$name" "$RDPS_VM_INDEX" "$start" <<'EOF'
import json, sys, time
d = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
keys = ("messages", "verified", "recovered", "naks_sent", "repairs", "naks_received",
        "repairs_multicast", "loss_events", "repair_latency_p50_us", "repair_latency_p99_us",
        "repair_latency_p50_rtts", "repair_latency_p99_rtts",
        "msgs_per_s", "rtt_us")
print(f"[{sys.argv[2]}] guest {sys.argv[3]} {time.time() - float(sys.argv[4]):.1f} s: " +
      " ".join(f"{k}={d[k]}" for k in keys if k in d))
EOF
done
tc qdisc del dev "$RDPS_VM_NETDEV" root 2>/dev/null
exit $status
