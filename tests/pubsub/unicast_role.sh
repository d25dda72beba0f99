#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# unicast_role.sh - one guest's part in the rxe tests of topics without multicast (rdpub/rdsub
# --transport unicast|auto, seed peers), run in every guest of one tools/rxe-vm boot.
#
# usage: unicast_role.sh BUILD_DIR SCENARIO
#   three  (3 guests, --no-multicast) guest 0 is the seed and nothing else the others are told
#          of; guests 1 and 2 know only it. (a) negative control: a multicast topic finds its
#          subscriber through the seed and delivers nothing; (b) unicast, unreliable, 1..3000-byte
#          messages, --verify, one unicast copy per datagram; (c) auto, reliable, --verify: both
#          sides fall back to unicast (no multicast heard); (d) rdps-ping --peers: every ping
#          echoed by both listeners through one chain of copies.
#   loss   (4 guests, --no-multicast, netem loss) guest 0 publishes reliably by unicast and is
#          the seed; guest 1 verifies every message in order; guest 2 joins 2 s after the
#          publisher starts sending and verifies a contiguous tail; guest 3 is killed with SIGKILL
#          once the publisher copies to all three: its unicast destinations (rdps-stat) lose it
#          within the receiver timeout (5 s).
#   mixed  (3 guests, multicast works) one topic, one subscriber on the group, one by unicast:
#          every message exactly once at each, one unicast copy per datagram.
set -u
build=${1:?usage: unicast_role.sh BUILD_DIR SCENARIO}
scenario=${2:?}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
i=${RDPS_VM_INDEX:?run inside tools/rxe-vm}
read -r -a ips <<<"$RDPS_VM_IPS"
s=${RDPS_VM_SCRATCH:?}
pub=$build/tools/rdpub/rdpub
sub=$build/tools/rdsub/rdsub
check=$here/check_json.py
status=0
fail() {
    echo "FAIL ($scenario, guest $i): $*"
    status=1
}

# barrier NAME GUESTS...: this guest arrived; wait (at most 120 s) for the others named.
barrier() {
    local name=$1
    shift
    touch "$s/$name.$i"
    for g in "$@"; do
        for _ in $(seq 1200); do [ -e "$s/$name.$g" ] && break; sleep 0.1; done
        [ -e "$s/$name.$g" ] || { fail "barrier $name: guest $g never came"; exit 1; }
    done
}

# The seed: a ctx that others know by address; here a subscriber of a topic nobody publishes.
run_seed() {
    "$sub" -t seed.idle --timeout "$1" -q >/dev/null 2>&1 &
    echo $!
}

scenario_three() {
    if [ "$i" -eq 0 ]; then
        local seed
        seed=$(run_seed 240)
        barrier finished 1 2
        kill -TERM "$seed" 2>/dev/null
        wait "$seed" 2>/dev/null
        return
    fi
    export RDPS_PEERS=${ips[0]}
    # (a) The negative control.
    barrier a 1 2
    if [ "$i" -eq 2 ]; then
        "$sub" -t neg -c 200 --timeout 12 -q --json >"$s/neg.sub" 2>/dev/null
        local rc=$?
        [ $rc -eq 3 ] || fail "multicast subscriber exited $rc, expected 3 (timeout, nothing came)"
        "$check" "$s/neg.sub" "messages==0" || fail "a multicast topic delivered on this segment"
    else
        "$pub" -t neg --pattern -c 200 -r 100 --wait-subs 1 --wait-timeout 30 --json \
            >"$s/neg.pub" 2>/dev/null || fail "the multicast publisher did not find its subscriber"
    fi
    # (b) Unicast, unreliable.
    barrier b 1 2
    if [ "$i" -eq 2 ]; then
        "$sub" -t uni --transport unicast -c 3000 --verify --timeout 90 -q --json >"$s/uni.sub" ||
            fail "unicast rdsub --verify failed"
        "$check" "$s/uni.sub" "verified==3000" "corrupt==0" "duplicates==0" "missing==0" ||
            fail "unicast subscriber figures"
    else
        "$pub" -t uni --transport unicast --pattern -c 3000 --size-range 1:3000 -r 1000 \
            --wait-subs 1 --wait-timeout 30 --json >"$s/uni.pub" || fail "unicast rdpub failed"
        local frags
        frags=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().splitlines()[-1])["fragments"])' "$s/uni.pub")
        "$check" "$s/uni.pub" "messages==3000" "unicast_copies==${frags:-0}" \
            "unicast_refused==0" || fail "unicast publisher figures (one copy per datagram)"
    fi
    # (c) Auto: the subscriber falls back (3 s after the first unicast announcement), then the
    # publisher starts, and falls back too while it sends.
    barrier c 1 2
    if [ "$i" -eq 2 ]; then
        "$sub" -t auto --transport auto --reliable -c 1500 --verify --timeout 90 -q --json \
            >"$s/auto.sub" || fail "auto rdsub --verify failed"
        "$check" "$s/auto.sub" "verified==1500" "out_of_order==0" "loss_events==0" \
            "unicast_fallbacks==1" || fail "auto subscriber figures"
    else
        sleep 5
        "$pub" -t auto --transport auto --reliable --pattern -c 1500 -r 250 --wait-subs 1 \
            --wait-timeout 30 --json >"$s/auto.pub" || fail "auto rdpub failed"
        "$check" "$s/auto.pub" "messages==1500" "unicast_fallbacks==1" "unicast_copies>0" ||
            fail "auto publisher figures"
    fi
    # (d) rdps-ping's unicast fan-out: guest 1 pings two listeners of guest 2 (two ports, two
    # QPs): every ping goes as one chain of two copies and is echoed by both.
    barrier d 1 2
    if [ "$i" -eq 2 ]; then
        "$build/tools/rdps-ping/rdps-ping" --listen --port 7601 --timeout 25 >/dev/null 2>&1 &
        local l1=$!
        "$build/tools/rdps-ping/rdps-ping" --listen --port 7602 --timeout 25 >/dev/null 2>&1 &
        local l2=$!
        sleep 3 # both listen (and answer resolutions) by then, also on a slow TCG guest
        barrier listening 1 2
        barrier pinged 1 2
        kill -TERM $l1 $l2 2>/dev/null
        wait $l1 $l2 2>/dev/null
    else
        barrier listening 1 2
        "$build/tools/rdps-ping/rdps-ping" --peers "${ips[2]}:7601,${ips[2]}:7602" -n 50 \
            --json >"$s/ping.json" || fail "rdps-ping --peers failed"
        "$check" "$s/ping.json" "responders==2" "lost==0" "echoes_per_ping==2" || fail "rdps-ping --peers figures"
        barrier pinged 1 2
    fi
    barrier finished 1 2
}

scenario_loss() {
    local n=8000 rate=400
    if [ "$i" -eq 0 ]; then
        "$pub" -t rel --transport unicast --reliable --pattern -c $n -s 200 -r $rate \
            --wait-subs 2 --wait-timeout 60 --json >"$s/rel.pub" 2>"$s/rel.puberr" &
        local p=$!
        # The publisher's unicast destinations, sampled: "TIME COUNT" lines; and the moment it
        # starts sending, which lets the late subscriber in (before, it could be one of the two
        # the publisher waits for, and guest 1 the late one).
        (
            for _ in $(seq 300); do
                kill -0 $p 2>/dev/null || break
                js=$("$build/tools/rdps-stat/rdps-stat" --json --pid $p 2>/dev/null)
                c=$(grep -o '"unicast_destinations":[0-9]*' <<<"$js" | head -1 | cut -d: -f2)
                m=$(grep -o '"msgs_sent":[0-9]*' <<<"$js" | head -1 | cut -d: -f2)
                [ "${m:-0}" -gt 0 ] && [ ! -e "$s/publishing" ] && touch "$s/publishing"
                # All three subscribers are destinations: the victim may go now.
                [ "${c:-0}" != x ] && [ "${c:-0}" -ge 3 ] && [ ! -e "$s/three" ] && touch "$s/three"
                echo "$(date +%s.%N) ${c:-x}"
                sleep 0.2
            done
        ) >"$s/dests.log" &
        local sampler=$!
        for _ in $(seq 600); do [ -e "$s/killed" ] && break; sleep 0.1; done
        date +%s.%N >"$s/killed.seen"
        wait $p || fail "rdpub exited $?"
        kill $sampler 2>/dev/null
        wait $sampler 2>/dev/null
        "$check" "$s/rel.pub" "messages==$n" "unicast_copies>0" || fail "publisher figures"
        # Three destinations before the kill; two within the receiver timeout (5 s) after.
        python3 - "$s/dests.log" "$s/killed.seen" <<'PY' || fail "copies to the killed subscriber did not stop in time"
import sys
rows = [l.split() for l in open(sys.argv[1]) if len(l.split()) == 2 and l.split()[1] != "x"]
seen = float(open(sys.argv[2]).read())
before = [int(c) for t, c in rows if float(t) <= seen]
after = [(float(t) - seen, int(c)) for t, c in rows if float(t) > seen]
peak = max(before) if before else 0
drop = next((dt for dt, c in after if c == peak - 1), None)
print(f"unicast destinations: {peak} before the kill, {peak - 1} after {drop} s")
sys.exit(0 if peak == 3 and drop is not None and drop <= 6.0 else 1)
PY
        barrier finished 1 2 3
        return
    fi
    export RDPS_PEERS=${ips[0]}
    case $i in
    1)
        "$sub" -t rel --transport unicast --reliable -c $n --verify --timeout 120 -q --json \
            >"$s/rel.sub1" || fail "rdsub --verify (from the start) failed"
        "$check" "$s/rel.sub1" "verified==$n" "out_of_order==0" "loss_events==0" \
            "duplicates==0" || fail "subscriber figures"
        ;;
    2)
        for _ in $(seq 600); do [ -e "$s/publishing" ] && break; sleep 0.1; done
        [ -e "$s/publishing" ] || fail "the publisher never started sending"
        sleep 2
        "$sub" -t rel --transport unicast --reliable -c $n --verify --timeout $((n / rate + 15)) \
            -q --json >"$s/rel.sub2"
        local src=$?
        [ $src -eq 5 ] || fail "the late rdsub exited $src, expected 5 (joined live)"
        local f
        f=$(python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]); print(d["first_index"] if d["verified"]==d["expected"]-d["first_index"] else -1)' "$s/rel.sub2")
        [ "${f:--1}" -gt 0 ] || fail "the late subscriber's messages are not a contiguous tail"
        "$check" "$s/rel.sub2" "out_of_order==0" "loss_events==0" "duplicates==0" ||
            fail "late subscriber figures"
        ;;
    3)
        "$sub" -t rel --transport unicast --reliable -q >/dev/null 2>&1 &
        local victim=$!
        # Killed once the publisher copies to all three (the late one is found through the seed
        # in 1 to 7 s on TCG guests under loss), so that its copies are seen to stop.
        for _ in $(seq 600); do [ -e "$s/three" ] && break; sleep 0.1; done
        sleep 1
        kill -KILL $victim
        touch "$s/killed"
        wait $victim 2>/dev/null
        ;;
    esac
    barrier finished 1 2 3
}

scenario_mixed() {
    local n=3000
    case $i in
    0)
        "$pub" -t mix --pattern -c $n --size-range 1:3000 -r 1000 --wait-subs 2 \
            --wait-timeout 60 --json >"$s/mix.pub" || fail "rdpub failed"
        local frags
        frags=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().splitlines()[-1])["fragments"])' "$s/mix.pub")
        "$check" "$s/mix.pub" "messages==$n" "unicast_copies==${frags:-0}" ||
            fail "publisher figures (the group's copy, and one unicast copy per datagram)"
        ;;
    *)
        local mode=multicast
        [ "$i" -eq 2 ] && mode=unicast
        "$sub" -t mix --transport $mode -c $n --verify --timeout 90 -q --json >"$s/mix.sub$i" ||
            fail "rdsub ($mode) --verify failed"
        "$check" "$s/mix.sub$i" "verified==$n" "duplicates==0" "corrupt==0" "missing==0" ||
            fail "subscriber ($mode) figures: every message exactly once"
        ;;
    esac
}

case $scenario in
three) scenario_three ;;
loss) scenario_loss ;;
mixed) scenario_mixed ;;
*)
    echo "unknown scenario '$scenario'"
    exit 2
    ;;
esac
[ $status -eq 0 ] && echo "unicast_role $scenario guest $i: all checks passed"
exit $status
