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
# Then, under netem loss 5 % on every guest (this round only), late join from a recording
# (replay-merge): guest 1 records the topic (rdps-record, serving its history), guest 0 publishes
# COUNT pattern messages at RATE per second, and guest 2 starts rdsub --history JOIN seconds in:
# the recorder replays the session from its start, the live stream follows, and rdsub --verify
# must see every message exactly once and in order across the seam (no loss event, history
# merged); the recorder must have recorded every message without a loss event.
#
# usage: late_join_role.sh BUILD_DIR [ROUND...]   (inside tools/rxe-vm, three guests)
#   ROUND: max, min, history[:COUNT:RATE:JOIN[:FLOW]] (default: max min history, the last
#   100000:6000:4:max, about 24 000 messages back: with 8 s a loaded run's merge caught up only
#   after the publisher ended, all from history, no seam crossed); JOIN is seconds, or Nm: once
#   N messages were published; tests/bench/history-merge-rxe.sh runs 1 000 000 back)
set -u
build=${1:?usage: late_join_role.sh BUILD_DIR [FLOW...]}
shift
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ -n "${RDPS_VM_INDEX:-}" ] || { echo "run inside tools/rxe-vm"; exit 2; }
[ "${RDPS_VM_COUNT:-0}" -eq 3 ] || { echo "needs three guests"; exit 2; }
scratch=${RDPS_VM_SCRATCH:?the guests share RDPS_VM_SCRATCH}
count=120000 rate=5000 join_after_s=21
flows=(max min history)
[ $# -gt 0 ] && flows=("$@")

# One guest's part in the replay-merge round (history:COUNT:RATE:JOIN); returns its verdict.
history_round() {
    local spec=$1 hcount=100000 hrate=6000 hjoin=4 hflow=max c r j f
    IFS=: read -r _ c r j f <<<"$spec"
    [ -n "${c:-}" ] && hcount=$c hrate=$r hjoin=$j
    [ -n "${f:-}" ] && hflow=$f
    local topic=rel.history out="$scratch/history.$RDPS_VM_INDEX" done="$scratch/history.done"
    local limit=$((hcount * 2 / hrate + 300)) rc st=0 sent
    for g in 0 1 2; do
        for _ in $(seq 1500); do [ -e "$scratch/history.ready.$g" ] && break; sleep 0.2; done
    done
    # The loss of every frame this guest sends, for this round only.
    tc qdisc replace dev "$RDPS_VM_NETDEV" root netem loss 5% ||
        { echo "[history] tc netem failed"; return 1; }
    case $RDPS_VM_INDEX in
    0)
        "$build/tools/rdpub/rdpub" -t "$topic" --reliable --flow "$hflow" --pattern -c "$hcount" \
            -s 64 -r "$hrate" --wait-subs 1 --wait-timeout 90 --drain-timeout 120 --json \
            >"$out.json" 2>"$out.err" &
        local pub=$!
        touch "$scratch/history.started"
        # JOIN given as Nm: the late subscriber starts once N messages were published (the
        # publisher's live counters, rdps-stat).
        if [[ $hjoin == *m ]]; then
            while kill -0 $pub 2>/dev/null; do
                sent=$("$build/tools/rdps-stat/rdps-stat" --pid $pub --json 2>/dev/null |
                    python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["contexts"][0]["counters"]["msgs_sent"])' 2>/dev/null)
                [ "${sent:-0}" -ge "${hjoin%m}" ] && { touch "$scratch/history.join"; break; }
                sleep 1
            done
        fi
        wait $pub
        rc=$?
        touch "$scratch/history.published" # drained: every receiver had every message
        [ $rc -eq 0 ] || { echo "[history] rdpub exited $rc"; tail -3 "$out.err"; st=1; }
        "$here/check_json.py" "$out.json" "messages==$hcount" || st=1
        ;;
    1)
        local dir
        dir=$(mktemp -d /tmp/rdps-history.XXXXXX)
        "$build/tools/rdps-record/rdps-record" -t "$topic" --dir "$dir" --timeout "$limit" \
            --json >"$out.json" 2>"$out.err" &
        local rec=$!
        # It serves the late subscriber's history until that one is done, and records until
        # the publisher has drained to it.
        for _ in $(seq $((limit * 5))); do
            [ -e "$done" ] && [ -e "$scratch/history.published" ] && break
            sleep 0.2
        done
        kill -TERM $rec 2>/dev/null
        wait $rec
        rc=$?
        [ $rc -eq 0 ] || { echo "[history] rdps-record exited $rc"; tail -3 "$out.err"; st=1; }
        "$here/check_json.py" "$out.json" "messages==$hcount" "written_messages==$hcount" \
            "loss_events==0" "overrun_messages==0" || st=1
        rm -rf "$dir"
        ;;
    2)
        for _ in $(seq 600); do [ -e "$scratch/history.started" ] && break; sleep 0.2; done
        if [[ $hjoin == *m ]]; then
            for _ in $(seq $((limit * 5))); do [ -e "$scratch/history.join" ] && break; sleep 0.2; done
        else
            sleep "$hjoin"
        fi
        "$build/tools/rdsub/rdsub" -t "$topic" --history --history-timeout 30 --verify \
            -c "$hcount" --timeout "$limit" -q --json >"$out.json" 2>"$out.err"
        rc=$?
        touch "$done"
        [ $rc -eq 0 ] || { echo "[history] rdsub --history exited $rc"; tail -3 "$out.err"; st=1; }
        "$here/check_json.py" "$out.json" "verified==$hcount" "first_index==0" "out_of_order==0" \
            "duplicates==0" "corrupt==0" "loss_events==0" "history_live_s>0" || st=1
        ;;
    esac
    tc qdisc del dev "$RDPS_VM_NETDEV" root 2>/dev/null
    python3 - "$out.json" "$RDPS_VM_INDEX" "$hcount" "$hrate" "$hjoin $hflow" <<'EOF'
import json, sys
try:
    d = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
except (OSError, ValueError, IndexError):
    d = {}
keys = ("messages", "verified", "first_index", "written_messages", "loss_events",
        "overrun_messages", "history", "history_live_s", "history_live_messages", "recovered", "naks_sent",
        "msgs_per_s", "acked_s", "elapsed_s", "wall_s")
print(f"[history {sys.argv[3]} at {sys.argv[4]}/s, join at {sys.argv[5]}] guest {sys.argv[2]}: " +
      " ".join(f"{k}={d[k]}" for k in keys if k in d))
EOF
    return $st
}

status=0
for flow in "${flows[@]}"; do
    if [[ $flow == history* ]]; then
        touch "$scratch/history.ready.$RDPS_VM_INDEX"
        start_s=$SECONDS
        history_round "$flow" || status=1
        echo "[history] guest $RDPS_VM_INDEX: round took $((SECONDS - start_s)) s"
        continue
    fi

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
