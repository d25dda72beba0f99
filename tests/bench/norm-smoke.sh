#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# norm-smoke.sh - norm_bench over multicast on the loopback interface: a sender and two verifying receivers, one losing 10 % (NORM's own loss generator).
#
# Usage: tests/bench/norm-smoke.sh NORM_BENCH [MESSAGES] [SIZE]
# Passes when both receivers verified every message in order and the sender got both
# acknowledgements; then checks that a receiver expecting more messages than are sent fails
# (exit 3, timeout, or 1), so the verifier is shown able to fail. The group and port are drawn per run
# so that concurrent runs on one host do not hear each other. Exits 77 (skipped) when no
# multicast reaches the loopback interface here (no receiver got a single message).
# Nothing here depends on how fast the machine is: NORM runs on real timers, so on a loaded
# machine (the test suite runs two tests at once, beside builds) the first phase gets a minute,
# and the second asks only that the receivers fail with at least the 100 missing messages
# (they may time out before the sender is through: then more are missing).
set -u -o pipefail

bench=${1:?usage: norm-smoke.sh NORM_BENCH [MESSAGES] [SIZE]}
msgs=${2:-2000}
size=${3:-200}
group="239.255.$((RANDOM % 250 + 1)).$((RANDOM % 250 + 1))"
port=$((20000 + RANDOM % 20000))
common=(--addr "$group" --port "$port" --iface lo --size "$size" --loopback --json)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

run_pair() { # $1: messages the receivers expect, $2: their timeout; leaves the results in $dir
	"$bench" recv "${common[@]}" --count "$1" --node-id 2 --timeout "$2" --linger 5 \
		>"$dir/r2.out" 2>"$dir/r2.err" &
	local r2=$!
	"$bench" recv "${common[@]}" --count "$1" --node-id 3 --timeout "$2" --linger 5 \
		--rx-loss 10 >"$dir/r3.out" 2>"$dir/r3.err" &
	local r3=$!
	sleep 0.5
	"$bench" send "${common[@]}" --count "$msgs" --receivers 2 --rate 50000000 --timeout "$2" \
		>"$dir/s.out" 2>"$dir/s.err"
	echo $? >"$dir/s.rc"
	wait "$r2"
	echo $? >"$dir/r2.rc"
	wait "$r3"
	echo $? >"$dir/r3.rc"
}

show() {
	for f in s r2 r3; do
		echo "$f: rc $(cat "$dir/$f.rc") $(cat "$dir/$f.out")"
		sed "s/^/$f: /" "$dir/$f.err" | head -5
	done
}

run_pair "$msgs" 60
show
if [ "$(cat "$dir/s.rc")$(cat "$dir/r2.rc")$(cat "$dir/r3.rc")" != 000 ]; then
	if grep -q '"verified":0,' "$dir/r2.out" && grep -q '"verified":0,' "$dir/r3.out"; then
		echo "norm-smoke: SKIP: no multicast reached the loopback interface"
		exit 77
	fi
	echo "norm-smoke: FAIL: the sender or a receiver failed"
	exit 1
fi
for f in r2 r3; do
	grep -q "\"verified\":$msgs,\"corrupt\":0,\"missing\":0," "$dir/$f.out" || {
		echo "norm-smoke: FAIL: $f did not report all $msgs verified"
		exit 1
	}
done

# The verifier must be able to fail: receivers expecting more than is sent time out (3), or
# fail (1) when NORM reports the stream's end first; either way at least 100 missing (exactly
# 100 when the sender got through before their timeout, more on a loaded machine).
run_pair $((msgs + 100)) 4
show
for f in r2 r3; do
	case $(cat "$dir/$f.rc") in
	1 | 3)
		missing=$(sed -n 's/.*"missing":\([0-9]*\),.*/\1/p' "$dir/$f.out")
		if [ -z "$missing" ] || [ "$missing" -lt 100 ]; then
			echo "norm-smoke: FAIL: $f expecting $((msgs + 100)) of $msgs counted ${missing:-no} missing (< 100)"
			exit 1
		fi
		;;
	*)
		echo "norm-smoke: FAIL: $f expecting $((msgs + 100)) of $msgs exited $(cat "$dir/$f.rc")"
		exit 1
		;;
	esac
done
echo "norm-smoke: PASS"
