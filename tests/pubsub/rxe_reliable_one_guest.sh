#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# rxe_reliable_one_guest.sh - one guest, reliable delivery through rdpub/rdsub --reliable:
#   loss    the library's loss generator drops 10 % of data and heartbeat frames at the
#           subscriber and 10 % of NAK and STATUS frames at the publisher: every message
#           still arrives, in order, exactly once, with no loss event;
#   kill    two subscribers under --flow min, one killed with SIGKILL mid-stream: it is
#           evicted, the publisher goes on, the other one verifies every message;
#   live    a subscriber that joins mid-stream starts at the live position and then gets
#           every message in order (no hole after its first one);
#   oldest  the same with --from-oldest gets the stream from message 0 (the ring holds it);
#   tagged  --flow tagged:7:2 sends nothing until two subscribers with --tag 7 are there (the
#           second starts 3 s late and still verifies every message from 0); an untagged
#           subscriber does not count.
#
# usage: rxe_reliable_one_guest.sh BUILD_DIR [CASE...]   (inside tools/rxe-vm; exits 77 elsewhere)
set -u
build=${1:?usage: rxe_reliable_one_guest.sh BUILD_DIR [CASE...]}
shift
[ -n "${RDPS_VM_DEV:-}" ] || { echo "no rxe device (run inside tools/rxe-vm): skipped"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
sub="$build/tools/rdsub/rdsub"
pub="$build/tools/rdpub/rdpub"
out=$(mktemp -d)
status=0
cases=${*:-loss kill live oldest tagged}

fail() {
    echo "FAIL [$1]: $2"
    for f in "$out"/"$1".*; do [ -s "$f" ] && { echo "--- $f"; tail -5 "$f"; }; done
    status=1
}

case_loss() {
    local n=1500
    "$sub" -t rel.loss -c $n --verify --reliable --timeout 240 -q --json \
        --loss-rx 10% --loss-frames data,heartbeat --loss-seed 11 >"$out/loss.sub" \
        2>"$out/loss.suberr" &
    local s=$!
    "$pub" -t rel.loss --reliable --pattern -c $n --size-range 1:20000 --wait-subs 1 --json \
        --loss-rx 10% --loss-frames nak,status --loss-seed 12 >"$out/loss.pub" \
        2>"$out/loss.puberr"
    local prc=$?
    wait $s
    local src=$?
    [ $prc -eq 0 ] || fail loss "rdpub exited $prc"
    [ $src -eq 0 ] || fail loss "rdsub exited $src"
    "$here/check_json.py" "$out/loss.sub" "verified==$n" "out_of_order==0" "loss_events==0" \
        "duplicates==0" "corrupt==0" "loss_dropped_rx>0" "recovered>0" "naks_sent>0" \
        "repair_latency_p50_rtts>0" "reliable_sessions_total==1" || fail loss "subscriber figures"
    "$here/check_json.py" "$out/loss.pub" "messages==$n" "loss_dropped_rx>0" "repairs>0" ||
        fail loss "publisher figures"
}

case_kill() {
    local n=2500 rate=250
    "$sub" -t rel.kill -c $n --verify --reliable --timeout 120 -q --json >"$out/kill.sub" \
        2>"$out/kill.suberr" &
    local keep=$!
    "$sub" -t rel.kill --reliable -q >/dev/null 2>&1 &
    local victim=$!
    "$pub" -t rel.kill --reliable --flow min --pattern -c $n -s 200 -r $rate --wait-subs 2 \
        --json >"$out/kill.pub" 2>"$out/kill.puberr" &
    local p=$!
    sleep 4
    kill -KILL $victim
    wait $p
    local prc=$?
    wait $keep
    local src=$?
    wait $victim 2>/dev/null
    [ $prc -eq 0 ] || fail kill "rdpub exited $prc"
    [ $src -eq 0 ] || fail kill "surviving rdsub exited $src"
    grep -Eq "receiver_(evicted|timed_out): receiver " "$out/kill.puberr" ||
        fail kill "the publisher did not report the killed receiver"
    "$here/check_json.py" "$out/kill.sub" "verified==$n" "out_of_order==0" "loss_events==0" ||
        fail kill "surviving subscriber figures"
    "$here/check_json.py" "$out/kill.pub" "messages==$n" || fail kill "publisher figures"
}

# A late joiner: $1 case name, $2 extra rdsub options, $3 the first index it must start at
# ("0", or ">0" for the live position).
late_join() {
    local name=$1 extra=$2 first=$3 n=800 rate=200
    "$pub" -t "rel.$name" --reliable --pattern -c $n -s 64 -r $rate --json >"$out/$name.pub" \
        2>"$out/$name.puberr" &
    local p=$!
    sleep 1.5
    # shellcheck disable=SC2086 # $extra is a list of options
    "$sub" -t "rel.$name" -c $n --verify --reliable $extra --timeout $((n / rate + 20)) -q \
        --json >"$out/$name.sub" 2>"$out/$name.suberr"
    local src=$?
    wait $p
    local prc=$?
    [ $prc -eq 0 ] || fail "$name" "rdpub exited $prc"
    if [ "$first" = 0 ]; then
        [ $src -eq 0 ] || fail "$name" "rdsub exited $src, expected 0 (every message)"
        "$here/check_json.py" "$out/$name.sub" "verified==$n" "first_index==0" \
            "out_of_order==0" "loss_events==0" || fail "$name" "subscriber figures"
    else
        # Joined live: the first messages are missing (exit 5), none after its first one.
        [ $src -eq 5 ] || fail "$name" "rdsub exited $src, expected 5 (joined late)"
        local f
        f=$(python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]); print(d["first_index"] if d["verified"]==d["expected"]-d["first_index"] else -1)' "$out/$name.sub")
        [ "${f:--1}" -gt 0 ] || fail "$name" "not a contiguous tail from a live position (first_index $f)"
        "$here/check_json.py" "$out/$name.sub" "out_of_order==0" "loss_events==0" \
            "duplicates==0" || fail "$name" "subscriber figures"
    fi
}

case_tagged() {
    local n=600
    "$sub" -t rel.tagged -c $n --verify --reliable --tag 7 --timeout 120 -q --json \
        >"$out/tagged.sub1" 2>"$out/tagged.sub1err" &
    local s1=$!
    "$sub" -t rel.tagged --reliable -q >/dev/null 2>&1 &
    local untagged=$!
    "$pub" -t rel.tagged --reliable --flow tagged:7:2 --pattern -c $n -s 300 -r 300 --json \
        >"$out/tagged.pub" 2>"$out/tagged.puberr" &
    local p=$!
    sleep 3
    "$sub" -t rel.tagged -c $n --verify --reliable --tag 7 --timeout 120 -q --json \
        >"$out/tagged.sub2" 2>"$out/tagged.sub2err"
    local rc2=$?
    wait $s1
    local rc1=$?
    wait $p
    local prc=$?
    kill -TERM $untagged
    wait $untagged
    [ $prc -eq 0 ] || fail tagged "rdpub exited $prc"
    [ $rc1 -eq 0 ] || fail tagged "first tagged rdsub exited $rc1"
    [ $rc2 -eq 0 ] || fail tagged "late tagged rdsub exited $rc2 (the publisher did not wait for it)"
    for f in sub1 sub2; do
        "$here/check_json.py" "$out/tagged.$f" "verified==$n" "first_index==0" \
            "out_of_order==0" "loss_events==0" || fail tagged "$f figures"
    done
}

for c in $cases; do
    echo "== $c"
    case $c in
    loss) case_loss ;;
    kill) case_kill ;;
    live) late_join live "" ">0" ;;
    oldest) late_join oldest "--from-oldest" 0 ;;
    tagged) case_tagged ;;
    *) echo "unknown case $c"; status=2 ;;
    esac
done
rm -rf "$out"
exit $status
