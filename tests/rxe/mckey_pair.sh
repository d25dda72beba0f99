#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Two-guest rxe multicast over rdma_cm with librdmacm's mckey: guest 0 receives, guest 1 sends COUNT datagrams.
# Usage (in both guests): mckey_pair.sh COUNT all|lossy
#   all:   pass when the receiver gets every datagram (mckey exits 0 after COUNT receives).
#   lossy: the wire drops some (--netem loss); pass when 0 < received < COUNT, counted by rxe's rcvd_pkts.
set -u
. "$(dirname "$0")/lib.sh"
require_guest
count=${1:?usage: mckey_pair.sh COUNT all|lossy}
mode=${2:?usage: mckey_pair.sh COUNT all|lossy}
group=239.77.0.1
s=$RDPS_VM_SCRATCH

case "$RDPS_VM_INDEX" in
0)
	before=$(port_counter rcvd_pkts)
	# Line-buffered so the sender can see "receiving data" (the join is done) in the shared log.
	stdbuf -oL mckey -m "$group" -b "$RDPS_VM_IP" -C "$count" >"$s/receiver.log" 2>&1 &
	pid=$!
	if [ "$mode" = all ]; then
		# mckey waits for COUNT datagrams; the sender's end plus a grace period bounds it.
		wait_for_file "$s/sender.done" 120 || kill "$pid"
		n=0
		while kill -0 "$pid" 2>/dev/null && [ "$n" -lt 50 ]; do
			sleep 0.2
			n=$((n + 1))
		done
		kill "$pid" 2>/dev/null
		wait "$pid"
		rc=$?
	else
		# Lost datagrams never come: stop the receiver once the sender is done and the rest has landed.
		wait_for_file "$s/sender.done" 120
		sleep 3
		kill "$pid" 2>/dev/null
		wait "$pid"
		rc=0
	fi
	received=$(($(port_counter rcvd_pkts) - before))
	cat "$s/receiver.log"
	sent=$(cat "$s/sender.sent" 2>/dev/null || echo "?")
	echo "mckey $mode: sender sent $sent, receiver's rxe rcvd_pkts grew by $received (of $count)"
	if [ "$mode" = all ]; then
		[ "$rc" = 0 ] || {
			echo "FAIL: the mckey receiver did not get all $count datagrams (status $rc)"
			exit 1
		}
		[ "$received" -ge "$count" ] || {
			echo "FAIL: rcvd_pkts grew by $received < $count"
			exit 1
		}
	else
		{ [ "$received" -gt 0 ] && [ "$received" -lt "$count" ]; } || {
			echo "FAIL: expected 0 < received < $count under loss, got $received"
			exit 1
		}
		echo "loss: $((count - received)) of $count datagrams dropped on the wire ($(((count - received) * 100 / count))%)"
	fi
	;;
1)
	wait_for_line "$s/receiver.log" "receiving data" 120 || exit 1
	before=$(port_counter sent_pkts)
	mckey_send_all "$group" "$count"
	rc=$?
	sent=$(($(port_counter sent_pkts) - before))
	echo "$sent" >"$s/sender.sent"
	touch "$s/sender.done"
	echo "mckey sender: status $rc, rxe sent_pkts grew by $sent"
	exit "$rc"
	;;
*)
	echo "mckey_pair.sh: needs exactly 2 guests"
	exit 2
	;;
esac
