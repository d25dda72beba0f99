#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# local_device.sh - the tools as separate processes on the local device (-d local): rdpub | rdsub
# plain, reliable under receive loss, unicast, keyed, parity with two subscribers, at MTU 4096; a
# subscriber killed with SIGKILL mid-stream while another goes on (its files reclaimed); another
# user refused; rdps-info showing the device; rdps-ping, rdps-record and rdps-replay across
# processes. Every message of every run is verified.
# usage: local_device.sh BUILD_DIR
set -u
build=${1:?usage: local_device.sh BUILD_DIR}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
check=$here/../pubsub/check_json.py
pub=$build/tools/rdpub/rdpub
sub=$build/tools/rdsub/rdsub
info=$build/tools/rdps-info/rdps-info
keygen=$build/tools/rdps-keygen/rdps-keygen
work=$(mktemp -d /tmp/rdps-local-sh.XXXXXX)
export RDPS_LOCAL_DIR=$work/dev RDPS_STAT=0
dev=local # the device every round uses
failures=0
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT

fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# round NAME N SIZE "PUB OPTIONS" "SUB OPTIONS" [SUBSCRIBERS]: one publisher and SUBSCRIBERS
# (default 1) verifying subscribers, each its own process.
round() {
    local name=$1 n=$2 size=$3 popts=$4 sopts=$5 subs=${6:-1} pids=() k
    for k in $(seq "$subs"); do
        # shellcheck disable=SC2086
        timeout 90 "$sub" -d "$dev" -t "$name" -c "$n" --verify --timeout 60 -q --json \
            --loss-seed "$k" $sopts >"$work/$name.sub$k" 2>"$work/$name.sub$k.err" &
        pids+=($!)
    done
    # shellcheck disable=SC2086
    timeout 90 "$pub" -d "$dev" -t "$name" --pattern -c "$n" -s "$size" --wait-subs "$subs" \
        --json $popts >"$work/$name.pub" 2>"$work/$name.pub.err" ||
        fail "$name: rdpub exited $? ($(tail -1 "$work/$name.pub.err"))"
    for k in $(seq "$subs"); do
        wait "${pids[$((k - 1))]}" || fail "$name: rdsub $k exited $? ($(tail -1 "$work/$name.sub$k.err"))"
        "$check" "$work/$name.sub$k" "verified==$n" "corrupt==0" >/dev/null ||
            fail "$name: subscriber $k did not verify all $n"
    done
}

# Unreliable rounds at a rate a subscriber keeps up with on a loaded host: a faster publisher
# overruns its ring, and that loss is counted, not prevented (as on a fabric).
round plain 5000 64 "-r 20000" ""
round large 300 20000 "-r 300" ""
round reliable 3000 1500 "--reliable" "--reliable --loss-rx 0.05"
"$check" "$work/reliable.sub1" "recovered>0" >/dev/null || fail "reliable: nothing was recovered"
round unicast 3000 200 "--transport unicast -r 5000" "--transport unicast" 2
"$check" "$work/unicast.pub" "unicast_copies>0" >/dev/null || fail "unicast: no unicast copies"
"$keygen" "$work/key" >/dev/null || fail "rdps-keygen"
round keyed 2000 300 "--key-file $work/key --encrypt -r 5000" "--key-file $work/key --encrypt"
round parity 3000 900 "--reliable --parity-k 64 -r 3000" \
    "--reliable --loss-rx 0.05 --parity-blocks 32" 2
rebuilt=$(cat "$work/parity.sub1" "$work/parity.sub2" | python3 -c \
    'import json,sys; print(sum(json.loads(l).get("parity_rebuilt",0) for l in sys.stdin if l.startswith("{")))')
[ "${rebuilt:-0}" -gt 0 ] || fail "parity: nothing rebuilt from parity"

# A keyless subscriber hears a keyed publisher's frames and drops every one.
timeout 30 "$sub" -d local -t keyed2 -c 1 --timeout 3 -q --json >"$work/keyless" 2>/dev/null &
kpid=$!
timeout 30 "$pub" -d local -t keyed2 --pattern -c 200 --key-file "$work/key" --linger 1500 \
    >/dev/null 2>&1 || fail "keyed2: rdpub exited $?"
wait $kpid && fail "a keyless subscriber received keyed messages"

# MTU 4096: a directory of its own (one MTU per directory), 4 KiB datagrams.
dev=local:4096 RDPS_LOCAL_DIR=$work/dev4k round mtu4096 2000 4000 "-r 5000" "" 1
"$check" "$work/mtu4096.sub1" "fragments==2000" >/dev/null ||
    fail "mtu4096: a 4000-byte message took more than one datagram"
RDPS_LOCAL_DIR=$work/dev4k timeout 10 "$sub" -d local:1024 -t x -c 1 --timeout 1 \
    >/dev/null 2>"$work/mtu.err" && fail "a 1024 member joined a 4096 directory"
grep -q "use MTU 4096, not 1024" "$work/mtu.err" || fail "no MTU message: $(cat "$work/mtu.err")"

# SIGKILL of a subscriber mid-stream: the other subscriber and the publisher go on; the dead
# member's ring and FIFO are removed by the survivors.
timeout 90 "$sub" -d local -t kill -c 20000 --verify --timeout 60 -q --json >"$work/kill.sub1" \
    2>&1 &
keep=$!
"$sub" -d local -t kill -q >/dev/null 2>&1 & # no timeout(1): the signal is for rdsub itself
victim=$!
timeout 90 "$pub" -d local -t kill --pattern -c 20000 -r 5000 --wait-subs 2 -v --json \
    >"$work/kill.pub" 2>"$work/kill.pub.err" &
publisher=$!
# Killed once the publisher sends to both (4 s of sending): mid-stream, whatever the load.
for _ in $(seq 300); do
    [ "$(grep -c subscriber_seen "$work/kill.pub.err")" -ge 2 ] && break
    sleep 0.1
done
sleep 0.5
kill -KILL $victim
wait $victim 2>/dev/null
wait $publisher || fail "kill: rdpub exited $?"
wait $keep || fail "kill: the surviving subscriber exited $?"
"$check" "$work/kill.sub1" "verified==20000" >/dev/null || fail "kill: the survivor lost messages"
left=$(find "$work/dev" -name 'm*' | wc -l)
[ "$left" -eq 0 ] || fail "kill: $left member files left: $(ls "$work/dev")"
timeout 10 "$info" -d local >"$work/info" 2>&1 || fail "rdps-info -d local exited $?"
grep -q "0 members" "$work/info" || fail "rdps-info: $(cat "$work/info")"

# rdps-ping: a listener and a client, unicast and to a group, every ping echoed.
ping=$build/tools/rdps-ping/rdps-ping
timeout 60 "$ping" -d local --listen --group 239.192.7.7 --timeout 40 2>"$work/listen.err" &
listener=$!
for _ in $(seq 100); do grep -q "127\.78\." "$work/listen.err" && break; sleep 0.1; done
member=$(grep -o "127\.78\.[0-9.]*" "$work/listen.err")
timeout 30 "$ping" -d local "$member" -c 500 -s 1000 --json >"$work/ping.json" 2>&1 ||
    fail "rdps-ping $member exited $? ($(tail -1 "$work/ping.json"))"
"$check" "$work/ping.json" "echoes==500" "lost==0" >/dev/null || fail "rdps-ping: pings lost"
timeout 30 "$ping" -d local --event --group 239.192.7.7 -c 50 --json >"$work/ping_group.json" 2>&1 ||
    fail "rdps-ping --group exited $?"
"$check" "$work/ping_group.json" "echoes==50" >/dev/null || fail "rdps-ping --group: pings lost"
kill $listener 2>/dev/null
wait $listener 2>/dev/null

# rdps-record and rdps-replay: a reliable stream recorded, replayed to a verifying subscriber.
timeout 60 "$build/tools/rdps-record/rdps-record" -d local --dir "$work/arch" -t rec -c 1000 \
    --timeout 45 --json -q >"$work/rec.json" 2>&1 &
recorder=$!
timeout 60 "$pub" -d local -t rec --pattern -c 1000 --reliable --wait-subs 1 >/dev/null 2>&1 ||
    fail "rec: rdpub exited $?"
wait $recorder || fail "rdps-record exited $? ($(tail -1 "$work/rec.json"))"
timeout 60 "$sub" -d local -t rec -c 1000 --verify --reliable --timeout 45 -q --json \
    >"$work/replayed" 2>&1 &
replayed=$!
timeout 60 "$build/tools/rdps-replay/rdps-replay" -d local --dir "$work/arch" --fast \
    --wait-subs 1 -q >/dev/null 2>&1 || fail "rdps-replay exited $?"
wait $replayed || fail "the replayed stream: rdsub exited $?"
"$check" "$work/replayed" "verified==1000" >/dev/null || fail "replay: not every message"

# Another user is refused, with a message that says why.
if [ "$(id -u)" -eq 0 ] && command -v runuser >/dev/null; then
    chmod 755 "$work"
    runuser -u nobody -- env RDPS_LOCAL_DIR="$work/dev" timeout 10 "$sub" -d local -t x -c 1 \
        --timeout 1 >/dev/null 2>"$work/nobody.err" && fail "user nobody entered root's directory"
    grep -q "belongs to uid 0" "$work/nobody.err" ||
        grep -q "another user" "$work/nobody.err" ||
        fail "nobody: no reason given: $(cat "$work/nobody.err")"
else
    echo "SKIP: the other-user check needs root and runuser"
fi

[ "$failures" -eq 0 ] && echo "local device: every round passed"
exit $((failures > 0))
