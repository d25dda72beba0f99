# shellcheck shell=bash
# Shared helpers for the multi-guest rxe-vm test scripts (sourced, runs inside a guest).

# rxe port counter of this guest's device (0 if the counter is missing).
port_counter() {
	cat "/sys/class/infiniband/$RDPS_VM_DEV/ports/1/hw_counters/$1" 2>/dev/null || echo 0
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
