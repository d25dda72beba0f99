#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# ping-vs-perftest.sh - rdps-ping RTT and datagram rate against perftest (ib_send_lat/ib_send_bw -c UD) on the same rxe devices.
#
# Usage (host):
#   tests/bench/ping-vs-perftest.sh [BUILD_DIR] [SIZE] [LAT_ITERS] [BW_ITERS] [MODES] [GUESTS]
#
# GUESTS=1 (default, the reference figure): ONE guest, server and client on
# its rxe device, the client targeting the guest's own IP. GUESTS=2: servers in
# guest 0, clients in guest 1 (each side has its own vCPU).
# For the same datagram size, in the same run:
#   latency  rdps-ping p50 RTT vs ib_send_lat -c UD t_typical. perftest prints
#            HALF a round trip, so it is doubled: both figures compared are
#            full round trips.
#   rate     rdps-ping --flood into a --sink listener (the sender's
#            datagrams/s) vs ib_send_bw -c UD MsgRate (also the sender's).
# MODES (default "poll event"): poll = both tools busy-poll (perftest's
# default; rdps-ping yields the CPU when idle), event = both sleep on the
# completion channel (perftest -e, rdps-ping --event). A guest has one vCPU, so
# with GUESTS=1 the busy-polling perftest pair mostly measures scheduler time
# slices; the event mode and GUESTS=2 are the like-for-like comparisons.
# Figures only, not a pass/fail test: under TCG absolute numbers mean little,
# the ratios measured in the same run are the result. Targets: RTT ratio
# <= 1.10, rate ratio >= 0.90.
set -u -o pipefail

if [ "${1:-}" != "--in-guest" ]; then
	repo=$(cd "$(dirname "$0")/../.." && pwd -P)
	build=$(cd "${1:-$repo/build}" && pwd -P)
	size=${2:-64}
	lat_iters=${3:-2000}
	bw_iters=${4:-20000}
	modes=${5:-poll event}
	guests=${6:-1}
	if [ ! -x "$build/tools/rdps-ping/rdps-ping" ]; then
		echo "ping-vs-perftest: $build/tools/rdps-ping/rdps-ping not built" >&2
		exit 2
	fi
	case $guests in 1 | 2) ;; *)
		echo "ping-vs-perftest: GUESTS must be 1 or 2" >&2
		exit 2
		;;
	esac
	cd "$repo" || exit 2
	cmd="tests/bench/ping-vs-perftest.sh --in-guest '$build' $size $lat_iters $bw_iters '$modes'"
	hosts=(--host "$cmd")
	[ "$guests" = 2 ] && hosts+=(--host "$cmd")
	exec tools/rxe-vm exec --timeout 900 "${hosts[@]}"
fi

build=$2 size=$3 lat_iters=$4 bw_iters=$5 modes=${6:-poll event}
ping=$build/tools/rdps-ping/rdps-ping
dev=${RDPS_VM_DEV:-rxe0}
count=${RDPS_VM_COUNT:-1}
index=${RDPS_VM_INDEX:-0}
sync=${RDPS_VM_SCRATCH:?run inside tools/rxe-vm}/bench
mkdir -p "$sync"
# The server side is guest 0; with one guest it is also the client side.
server_ip=$(echo "${RDPS_VM_IPS:-$RDPS_VM_IP}" | tr ' ,' '\n' | sed -n 1p)
is_server=0 is_client=0
[ "$index" = 0 ] && is_server=1
[ "$count" = 1 ] || [ "$index" = 1 ] && is_client=1

# perftest needs the RoCE v2 IPv4 GID index, which is also what rdps picks.
# shellcheck source=guest-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-lib.sh"
gidx=$(roce_v2_gid_index "$dev")

wait_file() {
	local n=0
	until [ -e "$1" ]; do
		n=$((n + 1))
		[ $n -gt 3000 ] && { echo "bench: timed out waiting for $1" >&2; return 1; }
		sleep 0.1
	done
}

# phase NAME 'SERVER CMD' 'CLIENT CMD': server output in $sync/NAME.srv, client in NAME.cli.
phase() {
	local name=$1 server=$2 client=$3 pid=
	if [ $is_server = 1 ]; then
		eval "exec $server" >"$sync/$name.srv" 2>&1 &
		pid=$!
		sleep 1
		touch "$sync/$name.ready"
	fi
	if [ $is_client = 1 ]; then
		wait_file "$sync/$name.ready" || return 1
		eval "$client" >"$sync/$name.cli" 2>&1
		touch "$sync/$name.done"
	fi
	if [ $is_server = 1 ]; then
		wait_file "$sync/$name.done" || return 1
		sleep 1
		kill "$pid" 2>/dev/null # perftest servers end by themselves; rdps-ping listens on
		wait "$pid" 2>/dev/null
		touch "$sync/$name.finished"
	else
		wait_file "$sync/$name.finished" || return 1
	fi
}

compare() {
	local mode=$1 pt='' rd=
	if [ "$mode" = event ]; then
		pt=-e
		rd=--event
	fi
	local perf="-d $dev -c UD -x $gidx -s $size -F $pt"
	phase "$mode-lat-perftest" "ib_send_lat $perf -n $lat_iters -p 18515" \
		"ib_send_lat $perf -n $lat_iters -p 18515 $server_ip" || return 1
	phase "$mode-lat-rdps" "'$ping' --listen -d $dev --port 7471 --timeout 600 $rd" \
		"'$ping' $server_ip:7471 -d $dev -n $lat_iters -s $size $rd --json" || return 1
	phase "$mode-bw-perftest" "ib_send_bw $perf -n $bw_iters -p 18516" \
		"ib_send_bw $perf -n $bw_iters -p 18516 $server_ip" || return 1
	phase "$mode-bw-rdps" "'$ping' --listen --sink -d $dev --port 7472 --timeout 600 $rd --json" \
		"'$ping' $server_ip:7472 -d $dev --flood -n $bw_iters -s $size $rd --json" || return 1
	[ $is_client = 1 ] || return 0

	local pt_typical pt_p99 rd_p50 rd_p99 pt_mpps pt_mpps_srv rd_rate sink_rate sink_recv
	pt_typical=$(field "$size" 5 <"$sync/$mode-lat-perftest.cli")
	pt_p99=$(field "$size" 8 <"$sync/$mode-lat-perftest.cli")
	rd_p50=$(json rtt_p50_us "$sync/$mode-lat-rdps.cli")
	rd_p99=$(json rtt_p99_us "$sync/$mode-lat-rdps.cli")
	pt_mpps=$(field "$size" 5 <"$sync/$mode-bw-perftest.cli")
	pt_mpps_srv=$(field "$size" 5 <"$sync/$mode-bw-perftest.srv")
	rd_rate=$(json datagrams_per_s "$sync/$mode-bw-rdps.cli")
	sink_rate=$(json rx_datagrams_per_s "$sync/$mode-bw-rdps.srv")
	sink_recv=$(json received "$sync/$mode-bw-rdps.srv")
	for v in pt_typical rd_p50 pt_mpps rd_rate; do
		if [ -z "${!v}" ]; then
			echo "bench ($mode): could not read $v; raw outputs:" >&2
			tail -n +1 "$sync/$mode"-* >&2
			return 1
		fi
	done
	awk -v mode="$mode" -v pt="$pt_typical" -v ptp99="$pt_p99" -v rd="$rd_p50" -v rdp99="$rd_p99" \
		-v mpps="$pt_mpps" -v mpps_srv="${pt_mpps_srv:-0}" -v rate="$rd_rate" \
		-v sink="${sink_rate:-0}" -v sink_recv="${sink_recv:-0}" -v n="$bw_iters" -v size="$size" '
	BEGIN {
		pt_rtt = 2 * pt; pt_rate = mpps * 1e6
		printf "[%s] latency (%d B, full round trip, us): rdps-ping p50 %.1f (p99 %.1f) | ib_send_lat -c UD 2 x t_typical %.1f (2 x p99 %.1f)\n", mode, size, rd, rdp99, pt_rtt, 2 * ptp99
		printf "[%s]   ratio rdps/perftest p50 RTT = %.2f (target <= 1.10)\n", mode, rd / pt_rtt
		printf "[%s] rate (%d B, sender side, datagrams/s): rdps-ping --flood %.0f | ib_send_bw -c UD %.0f (its server %.0f)\n", mode, size, rate, pt_rate, mpps_srv * 1e6
		printf "[%s]   ratio rdps/perftest rate = %.2f (target >= 0.90); rdps sink received %d of %d at %.0f/s\n", mode, rate / pt_rate, sink_recv, n, sink
	}'
}

if [ $is_client = 1 ]; then
	echo "bench: $count guest(s), device $dev, GID index $gidx, size $size bytes, $lat_iters round trips, $bw_iters datagrams, server $server_ip"
fi
status=0
for mode in $modes; do
	compare "$mode" || status=1
done
exit $status
