#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Three-guest check (run in every guest): RDPS_VM_* env is consistent, every peer answers ping,
# an rdma_cm UD exchange (udaddy) works around the ring 0->1->2->0, and mckey multicast from
# guest 0 reaches guests 1 and 2.
set -u
. "$(dirname "$0")/lib.sh"
require_guest
s=$RDPS_VM_SCRATCH
i=$RDPS_VM_INDEX
fail() {
	echo "FAIL: $*"
	exit 1
}

# Environment.
[ "$RDPS_VM_COUNT" = 3 ] || fail "RDPS_VM_COUNT=$RDPS_VM_COUNT, expected 3"
# shellcheck disable=SC2086 # split the address list into $1..$3
set -- $RDPS_VM_IPS
[ $# = 3 ] || fail "RDPS_VM_IPS='$RDPS_VM_IPS' does not list 3 addresses"
mine='' next_ip=''
eval "mine=\${$((i + 1))}"
[ "$mine" = "$RDPS_VM_IP" ] || fail "RDPS_VM_IP=$RDPS_VM_IP is not entry $i of RDPS_VM_IPS ($RDPS_VM_IPS)"
[ "$(printf '%s\n' "$@" | sort -u | wc -l)" = 3 ] || fail "RDPS_VM_IPS has duplicates: $RDPS_VM_IPS"
ip -4 addr show dev "$RDPS_VM_NETDEV" | grep -q "inet $RDPS_VM_IP/" || fail "$RDPS_VM_IP is not on $RDPS_VM_NETDEV"
[ -d "/sys/class/infiniband/$RDPS_VM_DEV" ] || fail "no rxe device $RDPS_VM_DEV"
[ "$(hostname)" = "rxe-vm$i" ] || fail "hostname $(hostname), expected rxe-vm$i"
echo "env ok: index $i of $RDPS_VM_COUNT, $RDPS_VM_IP on $RDPS_VM_NETDEV/$RDPS_VM_DEV, peers: $RDPS_VM_IPS"

# Ping.
for peer in "$@"; do
	[ "$peer" = "$RDPS_VM_IP" ] && continue
	ping -c 2 -W 2 "$peer" >/dev/null || fail "no ping answer from $peer"
	echo "ping $peer ok"
done

# rdma_cm UD exchange around the ring: serve one client, connect to the next guest's server.
next=$(((i + 1) % 3 + 1))
eval "next_ip=\${$next}"
timeout 90 udaddy -b "$RDPS_VM_IP" >"$s/udaddy-server-$i.log" 2>&1 &
server=$!
tries=0
until timeout 30 udaddy -b "$RDPS_VM_IP" -s "$next_ip" >"$s/udaddy-client-$i.log" 2>&1; do
	# The next guest's server may not listen yet: retry for a bounded time.
	tries=$((tries + 1))
	[ "$tries" -lt 20 ] || {
		cat "$s/udaddy-client-$i.log"
		fail "udaddy client to $next_ip failed $tries times"
	}
	sleep 1
done
wait "$server" || {
	cat "$s/udaddy-server-$i.log"
	fail "udaddy server failed"
}
echo "udaddy $RDPS_VM_IP -> $next_ip ok, served one client"

# Multicast from guest 0 to guests 1 and 2.
group=239.77.0.3
count=50
if [ "$i" = 0 ]; then
	wait_for_line "$s/mckey-recv-1.log" "receiving data" 120 || exit 1
	wait_for_line "$s/mckey-recv-2.log" "receiving data" 120 || exit 1
	mckey_send_all "$group" "$count" || fail "mckey sender failed"
	touch "$s/mckey.sent"
	echo "mckey: sent $count datagrams to $group"
else
	stdbuf -oL mckey -m "$group" -b "$RDPS_VM_IP" -C "$count" >"$s/mckey-recv-$i.log" 2>&1 &
	pid=$!
	wait_for_file "$s/mckey.sent" 120 || kill "$pid"
	n=0
	while kill -0 "$pid" 2>/dev/null && [ "$n" -lt 50 ]; do
		sleep 0.2
		n=$((n + 1))
	done
	kill "$pid" 2>/dev/null && {
		cat "$s/mckey-recv-$i.log"
		fail "mckey receiver did not get all $count datagrams"
	}
	wait "$pid" || fail "mckey receiver failed"
	echo "mckey: received all $count datagrams from guest 0"
fi
