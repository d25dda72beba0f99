#!/usr/bin/env bash
# ping-vs-perftest.sh - rdps-ping RTT and datagram rate against perftest (ib_send_lat/ib_send_bw -c UD) on one rxe device.
#
# Usage (host):  tests/bench/ping-vs-perftest.sh [BUILD_DIR] [SIZE] [LAT_ITERS] [BW_ITERS] [MODES]
# Boots one guest with tools/rxe-vm and runs, in that guest, on the same rxe
# device and for the same datagram size:
#   latency  rdps-ping (listener + client to the guest's own IP) p50 RTT vs
#            ib_send_lat -c UD t_typical (perftest prints HALF a round trip,
#            so it is doubled: both figures compared are full round trips)
#   rate     rdps-ping --flood into a --sink listener (sender datagrams/s) vs
#            ib_send_bw -c UD MsgRate (also the sender's rate)
# MODES (default "poll event"): poll = both tools busy-poll (perftest's default;
# rdps-ping yields the CPU when idle), event = both sleep on the completion
# channel (perftest -e, rdps-ping --event). The guest has one vCPU, so the
# busy-polling perftest pair mostly measures scheduler time slices.
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
	if [ ! -x "$build/tools/rdps-ping/rdps-ping" ]; then
		echo "ping-vs-perftest: $build/tools/rdps-ping/rdps-ping not built" >&2
		exit 2
	fi
	cd "$repo" || exit 2
	exec tools/rxe-vm exec --timeout 600 \
		--host "tests/bench/ping-vs-perftest.sh --in-guest '$build' $size $lat_iters $bw_iters '$modes'"
fi

build=$2 size=$3 lat_iters=$4 bw_iters=$5 modes=${6:-poll event}
ping=$build/tools/rdps-ping/rdps-ping
dev=${RDPS_VM_DEV:-rxe0}
ip=${RDPS_VM_IP:?run inside tools/rxe-vm}
out=$(mktemp -d)

# perftest needs the RoCE v2 IPv4 GID index, which is also what rdps picks.
gidx=
for t in /sys/class/infiniband/"$dev"/ports/1/gid_attrs/types/*; do
	i=${t##*/}
	gid=$(cat /sys/class/infiniband/"$dev"/ports/1/gids/"$i" 2>/dev/null) || continue
	if [ "$(cat "$t" 2>/dev/null)" = "RoCE v2" ] && [[ $gid == 0000:0000:0000:0000:0000:ffff:* ]]; then
		gidx=$i
		break
	fi
done
: "${gidx:=0}"
echo "bench: device $dev, GID index $gidx, size $size bytes, $lat_iters round trips, $bw_iters datagrams"

field() { # field N of the first results row (a line starting with the size)
	awk -v s="$1" -v f="$2" '$1 == s && NF >= f { print $f; exit }'
}

json() { sed -n "s/.*\"$1\":\([0-9.e+-]*\).*/\1/p" "$2" | head -1; }

# One latency + rate comparison; $1 = poll (both sides busy-poll, perftest's
# default) or event (both sides sleep on the completion channel: perftest -e,
# rdps-ping --event).
compare() {
	local mode=$1 pt_flag= rd_flag= srv
	if [ "$mode" = event ]; then
		pt_flag=-e
		rd_flag=--event
	fi
	ib_send_lat -d "$dev" -c UD -x "$gidx" -s "$size" -n "$lat_iters" -p 18515 -F $pt_flag >"$out/lat_srv" 2>&1 &
	srv=$!
	sleep 1
	ib_send_lat -d "$dev" -c UD -x "$gidx" -s "$size" -n "$lat_iters" -p 18515 -F $pt_flag "$ip" >"$out/lat_cli" 2>&1
	wait "$srv"
	local pt_typical pt_p99 rd_p50 rd_p99 pt_mpps pt_mpps_srv rd_rate sink_rate sink_recv
	pt_typical=$(field "$size" 5 <"$out/lat_cli")
	pt_p99=$(field "$size" 8 <"$out/lat_cli")

	"$ping" --listen -d "$dev" --port 7471 --timeout 300 $rd_flag >"$out/ping_srv" 2>&1 &
	srv=$!
	sleep 1
	"$ping" "$ip:7471" -d "$dev" -n "$lat_iters" -s "$size" $rd_flag --json >"$out/ping_cli" 2>"$out/ping_cli.err"
	kill "$srv" 2>/dev/null
	wait "$srv" 2>/dev/null
	rd_p50=$(json rtt_p50_us "$out/ping_cli")
	rd_p99=$(json rtt_p99_us "$out/ping_cli")

	ib_send_bw -d "$dev" -c UD -x "$gidx" -s "$size" -n "$bw_iters" -p 18516 -F $pt_flag >"$out/bw_srv" 2>&1 &
	srv=$!
	sleep 1
	ib_send_bw -d "$dev" -c UD -x "$gidx" -s "$size" -n "$bw_iters" -p 18516 -F $pt_flag "$ip" >"$out/bw_cli" 2>&1
	wait "$srv"
	pt_mpps=$(field "$size" 5 <"$out/bw_cli")
	pt_mpps_srv=$(field "$size" 5 <"$out/bw_srv")

	"$ping" --listen --sink -d "$dev" --port 7472 $rd_flag --json >"$out/sink" 2>&1 &
	srv=$!
	sleep 1
	"$ping" "$ip:7472" -d "$dev" --flood -n "$bw_iters" -s "$size" $rd_flag --json >"$out/flood_cli" 2>"$out/flood.err"
	sleep 1
	kill "$srv" 2>/dev/null
	wait "$srv" 2>/dev/null
	rd_rate=$(json datagrams_per_s "$out/flood_cli")
	sink_rate=$(json rx_datagrams_per_s "$out/sink")
	sink_recv=$(json received "$out/sink")

	for v in pt_typical rd_p50 pt_mpps rd_rate; do
		if [ -z "${!v}" ]; then
			echo "bench ($mode): could not read $v; raw outputs:" >&2
			tail -n +1 "$out"/* >&2
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

status=0
for mode in $modes; do
	compare "$mode" || status=1
done
rm -rf "$out"
exit $status
