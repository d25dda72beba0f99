#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# late_join_role.sh - one guest's part in the late-join test across guests: a subscriber joins
# --from-oldest after about 100 000 messages (48 receive windows) and gets the whole ring.
#
# Guest 0 publishes 120 000 pattern messages of 64 bytes at 5000 per second with rdpub --reliable
# and a 64 MiB ring (it keeps them all), once it sees guest 1's subscriber; guest 1 verifies
# every message from the start; guest 2 starts rdsub --reliable --from-oldest when about
# 100 000 were sent (21 s after the publisher started, per the shared scratch directory) and must
# verify every message from message 0 in order, the retained ones first, then the live ones.
# Meanwhile the live subscriber and the publisher must not notice: guest 1 verifies every
# message with no loss event, and the publisher keeps its rate (at least 90 % of 5000 per second
# over the run). Under each flow control mode in turn: max (the joiner is the slower receiver)
# and min (it takes part in flow control only once it caught up, so it holds the publisher for
# no more than the round trip of its announcement).
#
# usage: late_join_role.sh BUILD_DIR [FLOW...]   (inside tools/rxe-vm, three guests)
#   FLOW: max, min (default: both)
set -u
build=${1:?usage: late_join_role.sh BUILD_DIR [FLOW...]}
shift
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ -n "${RDPS_VM_INDEX:-}" ] || { echo "run inside tools/rxe-vm"; exit 2; }
[ "${RDPS_VM_COUNT:-0}" -eq 3 ] || { echo "needs three guests"; exit 2; }
scratch=${RDPS_VM_SCRATCH:?the guests share RDPS_VM_SCRATCH}
count=120000 rate=5000 join_after_s=21
flows=(max min)
[ $# -gt 0 ] && flows=("$@")

status=0
for flow in "${flows[@]}"; do
    topic="rel.latejoin.$flow"
    started="$scratch/latejoin.$flow.started"
    out="$scratch/latejoin.$flow.$RDPS_VM_INDEX"
    limit=$((count / rate + 90))
    # Every guest starts a round together: a late subscriber still waiting out the round before
    # must not find this round's publisher gone.
    touch "$scratch/latejoin.$flow.ready.$RDPS_VM_INDEX"
    for g in 0 1 2; do
        for _ in $(seq 1500); do [ -e "$scratch/latejoin.$flow.ready.$g" ] && break; sleep 0.2; done
    done
    case $RDPS_VM_INDEX in
    0)
        touch "$started"
        "$build/tools/rdpub/rdpub" -t "$topic" --reliable --flow "$flow" --ring 64m --pattern \
            -c $count -s 64 -r $rate --wait-subs 1 --wait-timeout 90 --drain-timeout 90 \
            --json >"$out.json" 2>"$out.err"
        rc=$?
        [ $rc -eq 0 ] || { echo "[$flow] rdpub exited $rc"; tail -3 "$out.err"; status=1; }
        "$here/check_json.py" "$out.json" "messages==$count" "msgs_per_s>=$((rate * 9 / 10))" ||
            { echo "[$flow] publisher figures:"; tail -1 "$out.json"; status=1; }
        ;;
    1)
        "$build/tools/rdsub/rdsub" -t "$topic" -c $count --reliable --verify --timeout $limit \
            -q --json >"$out.json" 2>"$out.err"
        rc=$?
        [ $rc -eq 0 ] || { echo "[$flow] live rdsub exited $rc"; tail -3 "$out.err"; status=1; }
        "$here/check_json.py" "$out.json" "verified==$count" "first_index==0" \
            "out_of_order==0" "loss_events==0" "duplicates==0" "corrupt==0" ||
            { echo "[$flow] live subscriber figures:"; tail -1 "$out.json"; status=1; }
        ;;
    2)
        for _ in $(seq 600); do [ -e "$started" ] && break; sleep 0.2; done
        [ -e "$started" ] || { echo "[$flow] the publisher never started"; status=1; continue; }
        sleep $join_after_s
        "$build/tools/rdsub/rdsub" -t "$topic" -c $count --reliable --from-oldest --verify \
            --timeout $limit -q --json >"$out.json" 2>"$out.err"
        rc=$?
        [ $rc -eq 0 ] || { echo "[$flow] late rdsub exited $rc"; tail -3 "$out.err"; status=1; }
        "$here/check_json.py" "$out.json" "verified==$count" "first_index==0" \
            "out_of_order==0" "loss_events==0" "duplicates==0" "corrupt==0" "naks_sent>0" ||
            { echo "[$flow] late subscriber figures:"; tail -1 "$out.json"; status=1; }
        ;;
    esac
    python3 - "$out.json" "$flow" "$RDPS_VM_INDEX" <<'EOF'
import json, sys
try:
    d = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
except (OSError, ValueError, IndexError):
    d = {}
keys = ("messages", "verified", "first_index", "recovered", "naks_sent", "repairs",
        "repairs_unicast", "naks_received", "evictions", "loss_events", "backpressure",
        "msgs_per_s", "elapsed_s", "rtt_us")
print(f"[late join, flow {sys.argv[2]}] guest {sys.argv[3]}: " +
      " ".join(f"{k}={d[k]}" for k in keys if k in d))
EOF
done
exit $status
