#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# ping-instructions.sh - user-space instructions per UD round trip (callgrind): rdps-ping against ib_send_lat -c UD, in one rxe guest.
#
# Usage (host): tests/bench/ping-instructions.sh [BUILD_DIR (build)] [SIZE (64)] [N1 (200)] [N2 (1200)]
#
# The client of each tool runs under callgrind twice, with N1 and N2 round
# trips; start-up and teardown cancel in the difference, so the figure is
# (Ir(N2) - Ir(N1)) / (N2 - N1): every user-space instruction of the client
# process per round trip (one send, one receive and what waiting for it
# costs), library and provider (librxe) included, kernel excluded. Both tools
# sleep on the completion channel (ib_send_lat -e, rdps-ping --event), so no
# busy-poll spin loop inflates the count and it does not depend on timing.
# The servers run natively. Unlike the RTT, this number hardly depends on
# machine load; what remains is how often a poll finds nothing before the
# tool sleeps, and perftest's start-up wait (a gettimeofday loop), which the
# difference spreads over N2 - N1: with 50 -> 250 perftest moved 1394..1504,
# with 200 -> 1200 1714..1747 (rdps-ping 1585, 1560). The callgrind files are
# kept in BUILD_DIR/bench-ping-ir for callgrind_annotate.
set -u -o pipefail

if [ "${1:-}" != "--in-guest" ]; then
	repo=$(cd "$(dirname "$0")/../.." && pwd -P)
	build=$(cd "${1:-$repo/build}" && pwd -P)
	size=${2:-64} n1=${3:-200} n2=${4:-1200}
	[ -x "$build/tools/rdps-ping/rdps-ping" ] || {
		echo "ping-instructions: $build/tools/rdps-ping/rdps-ping not built" >&2
		exit 2
	}
	[ "$n2" -gt "$n1" ] || { echo "ping-instructions: N2 must exceed N1" >&2; exit 2; }
	command -v valgrind >/dev/null || { echo "ping-instructions: valgrind not installed" >&2; exit 2; }
	cd "$repo" || exit 2
	exec tools/rxe-vm exec --timeout 1500 \
		--host "tests/bench/ping-instructions.sh --in-guest '$build' $size $n1 $n2"
fi

build=$2 size=$3 n1=$4 n2=$5
ping=$build/tools/rdps-ping/rdps-ping
dev=${RDPS_VM_DEV:-rxe0}
ip=${RDPS_VM_IP:?run inside tools/rxe-vm}
out=$build/bench-ping-ir
mkdir -p "$out"
# shellcheck source=guest-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-lib.sh"
gidx=$(roce_v2_gid_index "$dev")

# ir FILE: total instructions (Ir) of a callgrind output file.
ir() {
	awk '/^summary:/ { print $2; exit } /^totals:/ { t = $2 } END { if (t != "") print t }' "$1" | head -1
}

# client TAG N CMD...: runs CMD under callgrind, output in $out/TAG.N.cg; fails when CMD fails.
client() {
	local tag=$1 n=$2
	shift 2
	if ! valgrind --tool=callgrind --callgrind-out-file="$out/$tag.$n.cg" "$@" \
		>"$out/$tag.$n.out" 2>"$out/$tag.$n.log"; then
		echo "ping-instructions: $tag with $n round trips failed:" >&2
		tail -5 "$out/$tag.$n.out" "$out/$tag.$n.log" >&2
		return 1
	fi
}

perftest_run() { # perftest_run N PORT
	local perf=(-d "$dev" -c UD -x "$gidx" -s "$size" -F -e -n "$1" -p "$2")
	ib_send_lat "${perf[@]}" >"$out/perftest-server.$1.out" 2>&1 &
	local pid=$!
	sleep 1
	client perftest "$1" ib_send_lat "${perf[@]}" "$ip" || { kill $pid 2>/dev/null; return 1; }
	wait $pid
}

status=0
perftest_run "$n1" 18515 && perftest_run "$n2" 18516 || status=1

"$ping" --listen -d "$dev" --port 7471 --timeout 1200 --event >"$out/rdps-server.out" 2>&1 &
listener=$!
sleep 1
for n in "$n1" "$n2"; do
	client rdps "$n" "$ping" "$ip:7471" -d "$dev" -n "$n" -s "$size" --event --timeout 600 --json ||
		status=1
done
kill "$listener" 2>/dev/null
wait "$listener" 2>/dev/null
[ $status = 0 ] || exit 1

per_rtt() { # per_rtt TAG
	local a b
	a=$(ir "$out/$1.$n1.cg") b=$(ir "$out/$1.$n2.cg")
	awk -v a="$a" -v b="$b" -v d=$((n2 - n1)) 'BEGIN { printf "%.0f", (b - a) / d }'
}
pt=$(per_rtt perftest)
rd=$(per_rtt rdps)
echo "instructions per round trip ($size B, client process, user space, event mode, $n1 -> $n2 round trips):"
echo "  rdps-ping --event          $rd"
echo "  ib_send_lat -c UD -e       $pt"
awk -v r="$rd" -v p="$pt" 'BEGIN { printf "  ratio rdps/perftest = %.2f (target < 1.00)\n", r / p }'
