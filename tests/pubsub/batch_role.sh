#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# batch_role.sh - one guest's part in the batching test across two guests (issue 35): guest 0
# publishes unpaced pattern messages of mixed sizes (small ones share datagrams, large ones are
# fragmented), guest 1 verifies them, with netem loss and reordering on both interfaces.
#
# usage: batch_role.sh BUILD_DIR COUNT SIZE_RANGE [SCENARIO...]
#   unreliable  rdsub --verify --count-loss: every message arrived intact or was reported lost
#               by a GAP event with its exact message count (ordinals), none both or twice
#   reliable    rdsub --reliable --verify: every message intact, in order, exactly once
#   keyed       reliable, in a keyed domain (sealed and verified once per datagram)
#   unicast     reliable, a copy of each batched datagram to the subscriber, no group
# Each scenario has its own topic (the publisher waits for the subscriber of it, which keeps the
# guests in step). rdpub must report batched datagrams (frames_batched > 0) and rdsub's exit
# status and its figures must both agree (neither is trusted alone).
set -u
build=$1 count=$2 sizes=$3
shift 3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ -n "${RDPS_VM_INDEX:-}" ] || { echo "run inside tools/rxe-vm"; exit 2; }
[ "$RDPS_VM_COUNT" -eq 2 ] || { echo "batch_role.sh runs on two guests"; exit 2; }
scenarios=(unreliable reliable keyed unicast)
[ $# -gt 0 ] && scenarios=("$@")
# A subscriber gives up well before its publisher stops waiting for the next scenario's one, so
# the guests stay in step when a scenario fails.
limit=$((count / 1000 + 60))

# A test-only domain key, the same in both guests (the format rdps-keygen writes).
key="${RDPS_VM_SCRATCH:-/tmp}/batch.key.$RDPS_VM_INDEX"
(umask 077 && printf '7:%s\n' 5d41402abc4b2a76b9719d911017c592b0d4f4e3a1c2e5f60718293a4b5c6d7e >"$key")

# 5 % loss and a quarter of the datagrams overtaking the others by 1 ms (within the subscriber's
# reorder allowance, as on a real fabric's multipath).
tc qdisc replace dev "$RDPS_VM_NETDEV" root netem loss 5% delay 1ms reorder 25% 50% ||
    { echo "tc qdisc replace failed"; exit 1; }

status=0
for name in "${scenarios[@]}"; do
    pub_args=() sub_args=() checks=()
    case $name in
    unreliable)
        sub_args=(--count-loss)
        checks=("unaccounted==0" "gap_messages>0")
        ;;
    reliable)
        pub_args=(--reliable --drain-timeout 60)
        sub_args=(--reliable)
        checks=("verified==$count" "out_of_order==0" "loss_events==0" "missing==0")
        ;;
    keyed)
        pub_args=(--reliable --drain-timeout 60 --key-file "$key")
        sub_args=(--reliable --key-file "$key")
        checks=("verified==$count" "out_of_order==0" "loss_events==0" "missing==0"
            "auth_dropped==0")
        ;;
    unicast)
        pub_args=(--reliable --drain-timeout 60 --transport unicast)
        sub_args=(--reliable --transport unicast)
        checks=("verified==$count" "out_of_order==0" "loss_events==0" "missing==0")
        ;;
    *)
        echo "unknown scenario $name"
        exit 2
        ;;
    esac
    out="${RDPS_VM_SCRATCH:-/tmp}/batch.$name.$RDPS_VM_INDEX"
    start=$(date +%s.%N)
    if [ "$RDPS_VM_INDEX" -eq 0 ]; then
        "$build/tools/rdpub/rdpub" -t "batch.$name" --pattern -c "$count" --size-range "$sizes" \
            --wait-subs 1 --wait-timeout $((limit + 90)) "${pub_args[@]}" --json >"$out.json" \
            2>"$out.err"
        rc=$?
        [ $rc -eq 0 ] || { echo "[$name] rdpub exited $rc"; tail -3 "$out.err"; status=1; }
        "$here/check_json.py" "$out.json" "messages==$count" "frames_batched>0" >/dev/null ||
            { echo "[$name] publisher figures:"; tail -1 "$out.json"; status=1; }
    else
        "$build/tools/rdsub/rdsub" -t "batch.$name" -c "$count" --verify "${sub_args[@]}" \
            --timeout "$limit" -q --json >"$out.json" 2>"$out.err"
        rc=$?
        [ $rc -eq 0 ] || { echo "[$name] rdsub exited $rc"; tail -3 "$out.err"; status=1; }
        "$here/check_json.py" "$out.json" "corrupt==0" "duplicates==0" "out_of_range==0" \
            "${checks[@]}" >/dev/null ||
            { echo "[$name] subscriber figures:"; tail -1 "$out.json"; status=1; }
    fi
    python3 - "$out.json" "$name" "$RDPS_VM_INDEX" "$start" <<'EOF'
import json, sys, time
d = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
keys = ("messages", "fragments", "frames_batched", "verified", "gap_messages", "lost_messages",
        "unaccounted", "recovered", "repairs", "loss_events", "msgs_per_s")
print(f"[{sys.argv[2]}] guest {sys.argv[3]} {time.time() - float(sys.argv[4]):.1f} s: " +
      " ".join(f"{k}={d[k]}" for k in keys if k in d))
EOF
done
tc qdisc del dev "$RDPS_VM_NETDEV" root 2>/dev/null
exit $status
