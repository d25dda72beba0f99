#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# parity_role.sh - one guest's part in the rxe test of parity repairs: two subscribers with
# independent loss (tools/rxe-vm --rx-loss 1:5 --rx-loss 2:20), every message in order at both.
#
# usage: parity_role.sh BUILD_DIR [ROUND...]   (inside tools/rxe-vm, three guests)
#   ROUND: parity (rdpub --parity-k 64, rdsub --parity-blocks 32) or plain (retransmissions
#   only); default: both, in that order, the same messages and loss.
# Guest 0 publishes N reliable pattern messages of 900 bytes (one datagram each at MTU 1024,
# parity room included)
# once both subscribers are known; guests 1 and 2 verify every one: in order, no duplicate, no
# loss event. The publisher's repair bytes per datagram lost at a subscriber (the sum of both
# subscribers' repaired sequences) are printed for each round: a parity symbol heals a different
# loss at each subscriber, so with parity it falls below one datagram per loss.
set -u
build=${1:?usage: parity_role.sh BUILD_DIR [ROUND...]}
shift
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ -n "${RDPS_VM_INDEX:-}" ] || { echo "run inside tools/rxe-vm"; exit 2; }
[ "${RDPS_VM_COUNT:-0}" -eq 3 ] || { echo "needs three guests"; exit 2; }
s=${RDPS_VM_SCRATCH:?the guests share RDPS_VM_SCRATCH}
i=$RDPS_VM_INDEX
n=${RDPS_PARITY_MESSAGES:-4000}
rate=${RDPS_PARITY_RATE:-1000}
rounds=(parity plain)
[ $# -gt 0 ] && rounds=("$@")
check=$here/check_json.py
status=0
fail() {
    echo "FAIL ($round, guest $i): $*"
    status=1
}

# barrier NAME: every guest arrived (at most 120 s).
barrier() {
    touch "$s/$1.$i"
    for g in 0 1 2; do
        for _ in $(seq 1200); do [ -e "$s/$1.$g" ] && break; sleep 0.1; done
        [ -e "$s/$1.$g" ] || { fail "barrier $1: guest $g never came"; exit 1; }
    done
}

field() { # field FILE KEY: a number from the JSON summary (last line)
    python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]).get(sys.argv[2], 0))' "$1" "$2"
}

for round in "${rounds[@]}"; do
    case $round in
    parity) pub_opt=(--parity-k 64) sub_opt=(--parity-blocks 32) ;;
    plain) pub_opt=() sub_opt=() ;;
    *) echo "unknown round '$round'"; exit 2 ;;
    esac
    topic=par.$round
    out=$s/$round.$i.json
    barrier "start.$round"
    if [ "$i" -eq 0 ]; then
        "$build/tools/rdpub/rdpub" -t "$topic" --reliable "${pub_opt[@]}" --pattern -c "$n" -s 900 \
            -r "$rate" --wait-subs 2 --wait-timeout 60 --drain-timeout 60 --json >"$out" \
            2>"$s/$round.pub.err" || { fail "rdpub exited $?"; tail -3 "$s/$round.pub.err"; }
        "$check" "$out" "messages==$n" || fail "publisher figures"
        [ "$round" = parity ] && { "$check" "$out" "parity_sent>0" || fail "no parity datagram sent"; }
        barrier "done.$round"
        lost=$(($(field "$s/$round.1.json" recovered) + $(field "$s/$round.2.json" recovered)))
        bytes=$(field "$out" repair_bytes)
        python3 - "$round" "$bytes" "$lost" "$(field "$out" parity_sent)" \
            "$(field "$s/$round.1.json" recovered)" "$(field "$s/$round.2.json" recovered)" \
            "$(field "$s/$round.1.json" parity_rebuilt)" "$(field "$s/$round.2.json" parity_rebuilt)" <<'EOF'
import sys
rnd, b, lost, psent, r1, r2, pr1, pr2 = sys.argv[1:]
per = int(b) / int(lost) if int(lost) else 0.0
print(f"[{rnd}] publisher repair bytes {b}, parity datagrams {psent}; repaired at the 5 % "
      f"subscriber {r1} (rebuilt from parity {pr1}), at the 20 % one {r2} ({pr2}): "
      f"{per:.0f} repair bytes per lost datagram")
EOF
    else
        "$build/tools/rdsub/rdsub" -t "$topic" --reliable "${sub_opt[@]}" -c "$n" --verify \
            --timeout $((n / rate + 90)) -q --json >"$out" 2>"$s/$round.sub$i.err" ||
            { fail "rdsub --verify exited $?"; tail -3 "$s/$round.sub$i.err"; }
        "$check" "$out" "verified==$n" "out_of_order==0" "loss_events==0" "duplicates==0" \
            "corrupt==0" "recovered>0" || fail "subscriber figures"
        [ "$round" = parity ] && { "$check" "$out" "parity_rebuilt>0" || fail "nothing rebuilt from parity"; }
        barrier "done.$round"
    fi
done
[ $status -eq 0 ] && echo "parity_role guest $i: all checks passed"
exit $status
