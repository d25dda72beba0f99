#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# forge_role.sh - one guest's part in the hostile-host test across three guests: guest 0 publishes
# reliably, guest 1 subscribes and verifies every message, guest 2 is the hostile host. Each round
# runs three times on topics of their own: quiet (guest 2 idle), busy (guest 2 as busy as under
# attack, attacking nothing: the control, see busy()) and attacked; two sets, interleaved. The
# publisher's attacked rounds may take 1.25 times the busy ones, plus, in min mode, the 2 s a
# forged receiver may hold it per round (docs/security.md; what the attack costs rdps), and must
# keep 0.5 of the quiet rate (a floor: three TCG guests share two host cores, so guest 2's own
# work slows the others, to 0.71-0.76 of the quiet rate under load 16; both ratios are printed).
# Every honest message verified in order, exactly once.
#
#   min    a keyless RDPS_FLOW_MIN publisher; the attacker forges reliable-subscriber
#          announcements, STATUS (window 0) and NAKs from its own host (rdps_forge).
#   keyed  the publisher and the subscriber share a domain key; the attacker runs rdps_forge
#          without a key and with another key (announcements, STATUS, NAKs and DATA into the
#          group, 25 of each a second), rdpub with another key on the same topic (100
#          messages a second), and rdps_forge --replay: it records the topic's sealed
#          datagrams from the group and sends the same bytes into it again from a fresh QP
#          every 2 s, 100 a second, while the publisher runs and for 6 s after it ended. The
#          subscriber lingers 8 s after the last message (nothing more may arrive); the forged
#          frames are counted as dropped by authentication and the replays as replayed.
#          (Each datagram a TCG guest receives costs it CPU whatever rdps does with it: a flood
#          of 1 000 a second took 20-30 % of the rate here with every frame dropped unread.)
#
# usage: forge_role.sh BUILD_DIR MODE [COUNT]   (inside tools/rxe-vm with 3 guests)
set -u
build=${1:?usage: forge_role.sh BUILD_DIR MODE [COUNT]}
mode=${2:?usage: forge_role.sh BUILD_DIR MODE [COUNT]}
count=${3:-100000}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
check_json=$here/../pubsub/check_json.py
if [ -z "${RDPS_VM_INDEX:-}" ] || [ "${RDPS_VM_COUNT:-0}" -ne 3 ]; then
    echo "run inside tools/rxe-vm with three guests"
    exit 2
fi
scratch=$RDPS_VM_SCRATCH
rdpub=$build/tools/rdpub/rdpub
rdsub=$build/tools/rdsub/rdsub
forge=$build/tests/tools/rdps_forge
status=0
fail() { echo "[guest $RDPS_VM_INDEX] FAIL: $*"; status=1; }

key=() other_key=()
if [ "$mode" = keyed ]; then
    # One domain key for the honest pair, another for the outsider (files only their owner reads).
    if [ "$RDPS_VM_INDEX" -eq 0 ]; then
        umask 077
        head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$scratch/domain.key.tmp" &&
            mv "$scratch/domain.key.tmp" "$scratch/domain.key"
        head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$scratch/other.key.tmp" &&
            mv "$scratch/other.key.tmp" "$scratch/other.key"
    fi
    for _ in $(seq 100); do [ -f "$scratch/other.key" ] && break; sleep 0.1; done
    key=(--key-file "$scratch/domain.key")
    other_key=(--key-file "$scratch/other.key")
elif [ "$mode" != min ]; then
    echo "unknown mode $mode"
    exit 2
fi

# stop_when_done DONE_FILE PID...: once the publisher wrote DONE_FILE (at most 180 s), the
# processes PID... of this round end.
stop_when_done() {
    local done_file=$1
    shift
    for _ in $(seq 1800); do [ -f "$done_file" ] && break; sleep 0.1; done
    kill "$@" 2>/dev/null
    wait "$@" 2>/dev/null
}

# The attacks of the mode against topic $1 until the publisher writes $2 (the replay goes on
# 6 s longer: replays after the publisher is gone).
attack() {
    local topic=$1 done_file=$2 pids=() replayer=
    if [ "$mode" = min ]; then
        "$forge" -t "$topic" --duration 120 --rate 100 --announce --status --nak \
            >"$scratch/forge.$topic.json" 2>"$scratch/forge.$topic.err" &
        pids+=($!)
    else
        # Outside the domain: keyless, and with another key; each learns its target from the
        # domain's traffic (a capture shows the headers) through a sniffing ctx.
        "$forge" -t "$topic" --sniff-key-file "$scratch/domain.key" --duration 120 --rate 25 \
            --announce --status --nak --data >"$scratch/forge.$topic.json" \
            2>"$scratch/forge.$topic.err" &
        pids+=($!)
        RDPS_DOMAIN_KEY_FILE=$scratch/other.key "$forge" -t "$topic" --duration 120 --rate 25 \
            --sniff-key-file "$scratch/domain.key" --announce --status --nak --data \
            >"$scratch/forge2.$topic.json" 2>"$scratch/forge2.$topic.err" &
        pids+=($!)
        "$rdpub" -t "$topic" "${other_key[@]}" --reliable --pattern -c 1000000 -s 256 -r 100 \
            >/dev/null 2>&1 &
        pids+=($!)
        # A host without the key: records the sealed datagrams, replays them from fresh QPs.
        "$forge" -t "$topic" --replay --replay-qp-s 2 --rate 100 --duration 300 \
            --ready-file "$scratch/$topic.recording" \
            >"$scratch/replay.$topic.json" 2>"$scratch/replay.$topic.err" &
        replayer=$!
    fi
    stop_when_done "$done_file" "${pids[@]}"
    if [ -n "$replayer" ]; then
        sleep 6
        kill "$replayer" 2>/dev/null
        wait "$replayer" 2>/dev/null
        # The whole stream recorded (20 000 messages; at most 8192 kept), and replayed.
        "$check_json" "$scratch/replay.$topic.json" "recorded>=4096" "replayed>0" "qps>=2" || {
            fail "the replayer recorded or replayed nothing ($topic)"
            cat "$scratch/replay.$topic.err"
        }
    fi
}

# The control round: guest 2 as busy as under attack, without attacking, until the publisher
# writes $2. Three TCG guests share two host cores: whatever guest 2 does costs the other two
# CPU, so what the attack costs rdps is the attacked round against this one, not against a quiet
# one. keyed: the same sniffing ctxs decrypting the stream, the outsider's publisher, and 400
# datagrams a second into the group that are no attack (keyless and wrong-key DATA of new
# sessions). min: a plain subscriber of the topic (the forger's sniffing ctx) and 300 datagrams
# a second of another topic.
busy() {
    local topic=$1 done_file=$2 pids=()
    if [ "$mode" = min ]; then
        "$rdsub" -t "$topic" --timeout 120 -q >/dev/null 2>&1 &
        pids+=($!)
        "$rdpub" -t "$topic.noise" --pattern -c 1000000 -s 64 -r 300 --json \
            >"$scratch/busy.$topic.json" 2>"$scratch/busy.$topic.err" &
        pids+=($!)
        stop_when_done "$done_file" "${pids[@]}"
        return
    fi
    "$forge" -t "$topic" --sniff-key-file "$scratch/domain.key" --duration 120 --rate 100 \
        --data >"$scratch/busy.$topic.json" 2>"$scratch/busy.$topic.err" &
    pids+=($!)
    RDPS_DOMAIN_KEY_FILE=$scratch/other.key "$forge" -t "$topic" --duration 120 --rate 100 \
        --sniff-key-file "$scratch/domain.key" --data >/dev/null 2>&1 &
    pids+=($!)
    "$forge" -t "$topic" --sniff-key-file "$scratch/domain.key" --duration 120 --rate 100 \
        --data >/dev/null 2>&1 &
    pids+=($!)
    "$rdpub" -t "$topic" "${other_key[@]}" --reliable --pattern -c 1000000 -s 256 -r 100 \
        >/dev/null 2>&1 &
    pids+=($!)
    stop_when_done "$done_file" "${pids[@]}"
}

flow=()
[ "$mode" = min ] && flow=(--flow min)
# Two sets of rounds, interleaved: the emulated guests' speed drifts by tens of percent.
for round in quiet1 busy1 attacked1 quiet2 busy2 attacked2; do
    topic=sec.$mode.$round
    done_file=$scratch/$topic.done
    sub_done=$scratch/$topic.subdone
    linger=()
    [ "$mode" = keyed ] && [ "${round#attacked}" != "$round" ] && linger=(--linger 8)
    case $RDPS_VM_INDEX in
    0)
        sleep 2 # the subscriber (and the attacker) are listening first
        if [ "$mode" = keyed ] && [ "${round#attacked}" != "$round" ]; then
            # The replayer records the whole stream (a loaded guest's join can take seconds).
            for _ in $(seq 300); do [ -f "$scratch/$topic.recording" ] && break; sleep 0.1; done
        fi
        start=$(date +%s.%N)
        "$rdpub" -t "$topic" "${key[@]}" --reliable "${flow[@]}" --pattern -c "$count" -s 256 \
            --wait-subs 1 --wait-timeout 60 --drain-timeout 60 --json \
            >"$scratch/pub.$round.json" 2>"$scratch/pub.$round.err"
        rc=$?
        end=$(date +%s.%N)
        touch "$done_file"
        [ $rc -eq 0 ] || { fail "rdpub ($round) exited $rc"; tail -3 "$scratch/pub.$round.err"; }
        echo "$start $end" >"$scratch/time.$round"
        ;;
    1)
        "$rdsub" -t "$topic" "${key[@]}" -c "$count" --reliable --verify --timeout 180 -q \
            "${linger[@]}" --json >"$scratch/sub.$round.json" 2>"$scratch/sub.$round.err"
        rc=$?
        touch "$sub_done"
        [ $rc -eq 0 ] || { fail "rdsub ($round) exited $rc"; tail -3 "$scratch/sub.$round.err"; }
        "$check_json" "$scratch/sub.$round.json" "verified==$count" "loss_events==0" \
            "corrupt==0" "missing==0" "messages==$count" "duplicates==0" ||
            fail "subscriber figures ($round)"
        if [ "$mode" = keyed ] && [ "${round#attacked}" != "$round" ]; then
            "$check_json" "$scratch/sub.$round.json" "auth_dropped>0" "auth_replayed>0" ||
                fail "the subscriber dropped no forged or no replayed frame"
            tail -1 "$scratch/sub.$round.json"
        fi
        ;;
    2)
        if [ "${round#attacked}" != "$round" ]; then
            attack "$topic" "$done_file"
            cat "$scratch"/forge*."$topic".json "$scratch"/forge*."$topic".err 2>/dev/null
        elif [ "${round#busy}" != "$round" ]; then
            busy "$topic" "$done_file"
            [ "$mode" = min ] || "$check_json" "$scratch/busy.$topic.json" "data>0" ||
                fail "the busy round's forger sent nothing ($topic)"
        else
            for _ in $(seq 1800); do [ -f "$done_file" ] && break; sleep 0.1; done
        fi
        ;;
    esac
    # Everyone moves to the next round together (the attacked one needs a quiet start), once the
    # subscriber is done too (it lingers after the last message of an attacked keyed round).
    for _ in $(seq 3000); do [ -f "$done_file" ] && [ -f "$sub_done" ] && break; sleep 0.1; done
    sleep 2
done

if [ "$RDPS_VM_INDEX" -eq 0 ]; then
    # The rate is the publisher's run: rdpub from its start until every receiver had every
    # message, 100 000 messages so the seconds-long jitter of discovery on a loaded TCG guest
    # (0.766 failed CI with 20 000) weighs less. Beside it, the same from the first message
    # (rdpub's acked_s), printed, not judged: that phase is a few seconds and its ratio moves
    # with the guests' speed by tens of percent (0.65-1.16 of the quiet one in five runs).
    seconds() { read -r s e <"$scratch/time.$1" && python3 -c "print($e - $s)"; }
    acked() { python3 -c "import json,sys; print(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])['acked_s'])" "$scratch/pub.$1.json"; }
    quiet=$(python3 -c "print($(seconds quiet1) + $(seconds quiet2))")
    attacked=$(python3 -c "print($(seconds attacked1) + $(seconds attacked2))")
    acked_quiet=$(python3 -c "print(round($(acked quiet1) + $(acked quiet2), 2))")
    acked_attacked=$(python3 -c "print(round($(acked attacked1) + $(acked attacked2), 2))")
    ratio=$(python3 -c "print(round($quiet / $attacked, 3))")
    echo "publisher: quiet $(python3 -c "print(round($quiet, 2))") s, attacked" \
        "$(python3 -c "print(round($attacked, 2))") s for 2 x $count messages: rate ratio $ratio" \
        "(from the first message until acknowledged: quiet $acked_quiet s, attacked" \
        "$acked_attacked s, ratio $(python3 -c "print(round($acked_quiet / $acked_attacked, 3))"))"
    # Against the quiet rounds 0.5, a floor against a gross regression (the busy guest's cost to
    # its neighbours is in it: 0.63-0.70 under load 16); against the busy rounds 0.8: what the
    # attack costs rdps (keyed 0.98-1.05; min 0.83 under load 16, where the forged receivers'
    # stalls of 2 s, docs/security.md, weigh more in a run that takes twice as long).
    python3 -c "import sys; sys.exit(0 if $ratio >= 0.5 else 1)" ||
        fail "the attacked publisher kept $ratio of its undisturbed rate (< 0.5)"
    busy=$(python3 -c "print($(seconds busy1) + $(seconds busy2))")
    acked_busy=$(python3 -c "print(round($(acked busy1) + $(acked busy2), 2))")
    busy_ratio=$(python3 -c "print(round($busy / $attacked, 3))")
    echo "publisher: busy (guest 2 as busy, no attack) $(python3 -c "print(round($busy, 2))") s:" \
        "attacked against busy $busy_ratio, quiet against busy" \
        "$(python3 -c "print(round($quiet / $busy, 3))") (acknowledged phase: busy" \
        "$acked_busy s, attacked against busy" \
        "$(python3 -c "print(round($acked_busy / $acked_attacked, 3))"))"
    # What the attack may cost is what docs/security.md promises: nothing for hosts outside a
    # keyed domain; under RDPS_FLOW_MIN a forged receiver on its own host may hold the publisher
    # as a slow one would, at most stall_evict (2 s) per round before it is evicted (its host is
    # then banned). Beside that, a quarter of the busy time for the guests' drift (keyed measured
    # 0.98-1.05 of busy, min 0.83-0.97): a ratio alone failed a loaded CI run of min, where a
    # 2 s hold is a third of a 5 s round.
    allowed=$(python3 -c "print(round($busy * 1.25 + (4 if '$mode' == 'min' else 0), 2))")
    python3 -c "import sys; sys.exit(0 if $attacked <= $allowed else 1)" ||
        fail "the attacked publisher took $(python3 -c "print(round($attacked, 2))") s, more" \
            "than the $allowed s the busy rounds and the stall bound allow (busy $busy_ratio)"
    for round in attacked1 attacked2; do
        tail -1 "$scratch/pub.$round.json"
        if [ "$mode" = keyed ]; then
            "$check_json" "$scratch/pub.$round.json" "auth_dropped>0" ||
                fail "the publisher dropped no forged frame ($round)"
        fi
    done
fi
exit $status
