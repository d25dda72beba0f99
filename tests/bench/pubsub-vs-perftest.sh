#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# pubsub-vs-perftest.sh - rdpub->rdsub message rate against ib_send_bw -c UD for 64-byte datagrams on one rxe device.
#
# Usage (host):  tests/bench/pubsub-vs-perftest.sh [BUILD_DIR] [MESSAGES] [BW_ITERS] [SIZE]
# Boots one guest with tools/rxe-vm and runs, in that guest, on the same rxe
# device and for the same message size (default 64 bytes, one datagram each):
#   perftest  ib_send_bw -c UD (busy-polling server in the background, client
#             to the guest's own IP): MsgRate, datagrams/s at the sender and
#             at the receiver
#   rdps-ping --flood into a --sink listener: rdps's UD transport alone,
#             unicast to the guest's own IP like ib_send_bw
#   rdps      rdsub -c MESSAGES -q --json in the background, then
#             rdpub --pattern -s SIZE -c MESSAGES --wait-subs 1 --json,
#             unthrottled: the subscriber's msgs_per_s (first to last message
#             received) and the publisher's send rate
# and prints the ratio rdps/perftest (subscriber rate over the ib_send_bw
# client's MsgRate), and the flood's. rdps publishes to a multicast group: on
# rxe every multicast datagram leaves through the netdev (a virtio-net
# transmit, costly under TCG) and comes back through the IP stack's multicast
# loopback, while a unicast to the device's own address (ib_send_bw, the
# flood) is looped back inside rxe; the flood figure separates that from the
# pub/sub layer's own cost.
# Figures only, not a pass/fail test: under TCG absolute numbers mean little,
# the ratio measured in the same run is the result. The guest has one vCPU,
# so sender and receiver of both pairs share it.
set -u -o pipefail

if [ "${1:-}" != "--in-guest" ]; then
	repo=$(cd "$(dirname "$0")/../.." && pwd -P)
	build=$(cd "${1:-$repo/build}" && pwd -P)
	msgs=${2:-20000}
	bw_iters=${3:-20000}
	size=${4:-64}
	for tool in rdpub/rdpub rdsub/rdsub rdps-ping/rdps-ping; do
		if [ ! -x "$build/tools/$tool" ]; then
			echo "pubsub-vs-perftest: $build/tools/$tool not built" >&2
			exit 2
		fi
	done
	cd "$repo" || exit 2
	exec tools/rxe-vm exec --timeout 300 \
		--host "tests/bench/pubsub-vs-perftest.sh --in-guest '$build' $msgs $bw_iters $size"
fi

build=$2 msgs=$3 bw_iters=$4 size=$5
pub=$build/tools/rdpub/rdpub
sub=$build/tools/rdsub/rdsub
ping=$build/tools/rdps-ping/rdps-ping
dev=${RDPS_VM_DEV:-rxe0}
ip=${RDPS_VM_IP:?run inside tools/rxe-vm}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# perftest needs the RoCE v2 IPv4 GID index, which is also what rdps picks.
# shellcheck source=guest-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-lib.sh"
gidx=$(roce_v2_gid_index "$dev")
echo "bench: device $dev, GID index $gidx, $size-byte messages, rdps $msgs messages, perftest $bw_iters datagrams"

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# --- perftest: UD send bandwidth, busy-polling (its default), ports of its own.
t0=$(now_ms)
# Every step has a time limit: a stalled device must not hang the run.
timeout 60 ib_send_bw -d "$dev" -c UD -x "$gidx" -s "$size" -n "$bw_iters" -p 18531 -F >"$out/bw_srv" 2>&1 &
srv=$!
sleep 1
timeout 60 ib_send_bw -d "$dev" -c UD -x "$gidx" -s "$size" -n "$bw_iters" -p 18531 -F "$ip" >"$out/bw_cli" 2>&1
wait "$srv"
pt_mpps=$(field "$size" 5 <"$out/bw_cli")
pt_mpps_srv=$(field "$size" 5 <"$out/bw_srv")

# --- rdps transport alone: rdps-ping flood (unicast to the own IP) into a sink.
"$ping" --listen --sink -d "$dev" --port 7479 --json >"$out/sink" 2>&1 &
srv=$!
sleep 1
timeout 60 "$ping" "$ip:7479" -d "$dev" --flood -n "$bw_iters" -s "$size" --json >"$out/flood" 2>"$out/flood.err"
sleep 1
kill "$srv" 2>/dev/null
wait "$srv" 2>/dev/null
flood_rate=$(json datagrams_per_s "$out/flood")
sink_recv=$(json received "$out/sink")
t1=$(now_ms)

# --- rdps: one subscriber, one unthrottled publisher, same topic, same device.
"$sub" -d "$dev" -t bench.rate -c "$msgs" -q --json --timeout 100 >"$out/sub" 2>"$out/sub.err" &
spid=$!
timeout 90 "$pub" -d "$dev" -t bench.rate --pattern -s "$size" -c "$msgs" --wait-subs 1 --linger 200 \
	--json >"$out/pub" 2>"$out/pub.err"
pub_rc=$?
if [ "$pub_rc" -eq 124 ]; then
	echo "bench: rdpub did not finish within 90 s: the device stopped completing its multicast sends" \
		"(netdev $RDPS_VM_NETDEV: $(ip -s link show "$RDPS_VM_NETDEV" 2>/dev/null | awk '/TX:/ { getline; print $2 " frames sent" }'))" >&2
fi
# Give the subscriber a few seconds to drain, then stop it: datagrams it lost will not come.
for _ in $(seq 50); do
	kill -0 "$spid" 2>/dev/null || break
	sleep 0.1
done
kill -INT "$spid" 2>/dev/null
wait "$spid"
sub_rc=$?
t2=$(now_ms)

sub_rate=$(json msgs_per_s "$out/sub")
sub_msgs=$(json messages "$out/sub")
pub_rate=$(json msgs_per_s "$out/pub")
pub_msgs=$(json messages "$out/pub")
for v in pt_mpps flood_rate sub_rate sub_msgs pub_rate pub_msgs; do
	if [ -z "${!v}" ]; then
		echo "bench: could not read $v (rdpub exit $pub_rc, rdsub exit $sub_rc); raw outputs:" >&2
		tail -n +1 "$out"/* >&2
		exit 1
	fi
done
echo "bench: rdpub: $(cat "$out/pub")"
echo "bench: rdsub: $(cat "$out/sub")"

awk -v size="$size" -v mpps="$pt_mpps" -v mpps_srv="${pt_mpps_srv:-0}" -v flood="$flood_rate" -v sink_recv="${sink_recv:-0}" -v n="$bw_iters" \
	-v sub_rate="$sub_rate" -v sub_msgs="$sub_msgs" -v pub_rate="$pub_rate" -v pub_msgs="$pub_msgs" \
	-v gaps="$(json gaps "$out/sub")" -v rq_empty="$(json rq_empty "$out/sub")" \
	-v pt_s="$(((t1 - t0) / 1000))" -v rd_s="$(((t2 - t1) / 1000))" '
BEGIN {
	pt_rate = mpps * 1e6
	printf "perftest:  ib_send_bw -c UD -s %d -n %d to own IP: client MsgRate %.0f datagrams/s, server %.0f\n", size, n, pt_rate, mpps_srv * 1e6
	printf "transport: rdps-ping --flood -s %d -n %d to own IP: %.0f datagrams/s, sink received %d (%d s with perftest)\n", size, n, flood, sink_recv, pt_s
	printf "pub/sub:   rdpub sent %d at %.0f msgs/s; rdsub received %d of %d (%.2f%%) at %.0f msgs/s; gaps %d, receive queue empty %d (%d s)\n", pub_msgs, pub_rate, sub_msgs, pub_msgs, pub_msgs ? 100 * sub_msgs / pub_msgs : 0, sub_rate, gaps, rq_empty, rd_s
	printf "ratio rdps/perftest (%d-byte datagrams per second, rdsub vs ib_send_bw client) = %.2f\n", size, sub_rate / pt_rate
	printf "  rdps-ping flood (unicast, transport only) / perftest = %.2f; pub/sub (multicast) / flood = %.2f\n", flood / pt_rate, sub_rate / flood
}'
