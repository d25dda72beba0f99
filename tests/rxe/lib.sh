# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=bash
# Shared helpers for the multi-guest rxe-vm test scripts (sourced, runs inside a guest).

# rxe port counter of this guest's device (0 if the counter is missing).
port_counter() {
	cat "/sys/class/infiniband/$RDPS_VM_DEV/ports/1/hw_counters/$1" 2>/dev/null || echo 0
}

# mckey_send_all GROUP COUNT: multicast COUNT datagrams to GROUP with mckey, until rxe has put
# every one on the wire. mckey's sender posts its sends unsignaled and tears down at once; under
# load rxe has not sent them all by then (the rest fail on the destroyed address handle, "Failed
# no address vector", or go with the destroyed queue pair) and mckey still exits 0. rxe's
# sent_pkts says how many left; another run sends the rest (at most 10 runs). -o joins
# send-only: the sender does not need its own datagrams.
mckey_send_all() {
	local group=$1 count=$2 before sent=0 run=0 log_start
	before=$(port_counter sent_pkts)
	log_start=$(dmesg | wc -l)
	while [ "$sent" -lt "$count" ]; do
		run=$((run + 1))
		if [ "$run" -gt 10 ]; then
			echo "mckey_send_all: only $sent of $count datagrams left in 10 runs; kernel log:"
			dmesg | tail -n +"$((log_start + 1))" | tail -20
			return 1
		fi
		mckey -m "$group" -b "$RDPS_VM_IP" -s -o -C "$((count - sent))" || return 1
		sent=$(($(port_counter sent_pkts) - before))
		[ "$sent" -ge "$count" ] ||
			echo "mckey_send_all: after run $run, $sent of $count datagrams on the wire; sending the rest"
	done
	echo "mckey_send_all: $sent datagrams on the wire in $run run(s)"
}

# wait_for_file PATH SECONDS: poll for a file another guest writes into the shared scratch dir.
wait_for_file() {
	n=0
	while [ ! -e "$1" ]; do
		n=$((n + 1))
		if [ "$n" -gt $(($2 * 5)) ]; then
			echo "timed out after $2 s waiting for $1"
			return 1
		fi
		sleep 0.2
	done
}

# wait_for_line FILE PATTERN SECONDS: poll until FILE has a line matching PATTERN.
wait_for_line() {
	n=0
	until grep -q "$2" "$1" 2>/dev/null; do
		n=$((n + 1))
		if [ "$n" -gt $(($3 * 5)) ]; then
			echo "timed out after $3 s waiting for '$2' in $1"
			return 1
		fi
		sleep 0.2
	done
}

require_guest() {
	if [ -z "${RDPS_VM_DEV:-}" ] || [ -z "${RDPS_VM_SCRATCH:-}" ]; then
		echo "$0: must run inside tools/rxe-vm (RDPS_VM_DEV/RDPS_VM_SCRATCH unset)"
		exit 2
	fi
}
