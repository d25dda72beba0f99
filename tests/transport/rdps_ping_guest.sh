#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# rdps_ping_guest.sh - rdps-ping in one rxe guest: unicast echo, size limits, clear errors, multicast with two listeners.
# Usage: rdps_ping_guest.sh RDPS_PING   (exits 77 when there is no RDMA device)
set -u
ping=$1
dev=${RDPS_VM_DEV:-}
if [ -z "$dev" ] || [ ! -e "/sys/class/infiniband/$dev" ]; then
	echo "rdps_ping_guest: no RDMA device, skipped" >&2
	exit 77
fi
ip=$RDPS_VM_IP
tmp=$(mktemp -d)
fail=0
pids=
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

check() { # check DESCRIPTION CONDITION...
	desc=$1
	shift
	if "$@"; then
		echo "ok: $desc"
	else
		echo "FAIL: $desc"
		fail=1
	fi
}

wait_listening() { # wait_listening LOGFILE
	i=0
	while [ $i -lt 300 ]; do
		grep -q "listening on" "$1" 2>/dev/null && return 0
		sleep 0.1
		i=$((i + 1))
	done
	echo "listener did not start:" >&2
	cat "$1" >&2
	return 1
}

json_num() { sed -n "s/.*\"$1\":\([0-9.e+-]*\).*/\1/p" "$2" | head -1; }

# Two listeners (two contexts, two QPs) on the same group, each answering resolves on its own port.
"$ping" --listen -d "$dev" --port 17481 --group 239.192.99.1 --group 239.192.99.2 --timeout 240 \
	>"$tmp/l1.out" 2>"$tmp/l1.err" &
pids="$pids $!"
"$ping" --listen -d "$dev" --port 17482 --group 239.192.99.1 --timeout 240 \
	>"$tmp/l2.out" 2>"$tmp/l2.err" &
pids="$pids $!"
wait_listening "$tmp/l1.err" || exit 1
wait_listening "$tmp/l2.err" || exit 1

# Unicast: every ping echoed exactly once, by one responder, at 16 bytes, 64 bytes and max_payload.
for size in 16 64 1024; do
	"$ping" "$ip:17481" -d "$dev" -n 50 -s "$size" --json >"$tmp/u.json" 2>"$tmp/u.err"
	rc=$?
	check "unicast -s $size exits 0" [ $rc -eq 0 ]
	check "unicast -s $size: 50 echoes, 0 lost, 1 responder" \
		[ "$(json_num echoes "$tmp/u.json")" = 50 -a "$(json_num lost "$tmp/u.json")" = 0 \
		-a "$(json_num responders "$tmp/u.json")" = 1 ]
	cat "$tmp/u.json"
done

# Device chosen through the local IP (rdma_cm bind) instead of by name.
"$ping" "$ip:17481" -b "$ip" -n 20 -s 64 --json >"$tmp/b.json" 2>"$tmp/b.err"
check "client bound by -b $ip: 20 echoes" [ $? -eq 0 -a "$(json_num echoes "$tmp/b.json")" = 20 ]
"$ping" "$ip:17481" -b 10.9.9.9 -n 5 >/dev/null 2>"$tmp/e6"
check "-b with an address no device owns: exit 1, names it" \
	[ $? -eq 1 -a "$(grep -c "10.9.9.9" "$tmp/e6")" -eq 1 ]

# Size limits and bad targets: one clear line on stderr, non-zero exit.
"$ping" "$ip:17481" -d "$dev" -n 5 -s 15 >/dev/null 2>"$tmp/e1"
check "size 15 refused (exit 2)" [ $? -eq 2 ]
check "size 15 message names the 16-byte header" grep -q "16-byte header" "$tmp/e1"
"$ping" "$ip:17481" -d "$dev" -n 5 -s 1025 >/dev/null 2>"$tmp/e2"
check "size 1025 refused (exit 2)" [ $? -eq 2 ]
check "size 1025 message names max_payload" grep -q "exceeds max_payload" "$tmp/e2"
"$ping" "$ip:17489" -d "$dev" -n 5 --timeout 10 >/dev/null 2>"$tmp/e3"
check "no listener on port 17489: exit 1" [ $? -eq 1 ]
check "no listener: connection refused message" grep -q "refused" "$tmp/e3"
"$ping" 169.254.77.250 -d "$dev" -n 5 --timeout 10 >/dev/null 2>"$tmp/e4"
check "unreachable host: exit 1" [ $? -eq 1 ]
check "unreachable host: one error line" [ "$(wc -l <"$tmp/e4")" -eq 1 ]
"$ping" "$ip:17481" -d nosuchdev0 -n 5 >/dev/null 2>"$tmp/e5"
check "absent device: exit 1" [ $? -eq 1 ]
check "absent device: names it" grep -q "nosuchdev0" "$tmp/e5"
for f in "$tmp"/e[1-6]; do sed 's/^/  stderr: /' "$f"; done

# Multicast: group 1 has two listeners, group 2 one; every ping is counted once per echo.
"$ping" --group 239.192.99.1 -d "$dev" -n 30 -s 64 --expect 2 --json >"$tmp/m1.json" 2>"$tmp/m1.err"
check "multicast group 1 exits 0" [ $? -eq 0 ]
cat "$tmp/m1.json" "$tmp/m1.err"
check "group 1: 60 echoes from 2 responders, none lost" \
	[ "$(json_num echoes "$tmp/m1.json")" = 60 -a "$(json_num responders "$tmp/m1.json")" = 2 \
	-a "$(json_num lost "$tmp/m1.json")" = 0 ]
"$ping" --group 239.192.99.2 -d "$dev" -n 30 -s 64 --wait-ms 300 -i 20000 --json >"$tmp/m2.json" 2>"$tmp/m2.err"
check "multicast group 2 exits 0" [ $? -eq 0 ]
cat "$tmp/m2.json"
check "group 2: 30 echoes from 1 responder" \
	[ "$(json_num echoes "$tmp/m2.json")" = 30 -a "$(json_num responders "$tmp/m2.json")" = 1 ]

# Flood: every datagram of a burst echoed or explicitly counted (echoes + lost = sent).
"$ping" "$ip:17482" -d "$dev" --flood -n 2000 -s 64 --json >"$tmp/f.json" 2>"$tmp/f.err"
check "flood exits 0" [ $? -eq 0 ]
cat "$tmp/f.json"
check "flood sent 2000" [ "$(json_num sent "$tmp/f.json")" = 2000 ]

for p in $pids; do kill -TERM "$p" 2>/dev/null; done
wait 2>/dev/null
pids=
cat "$tmp/l1.out" "$tmp/l2.out"
check "listener summaries printed" grep -q "listener: received" "$tmp/l1.out"
exit $fail
