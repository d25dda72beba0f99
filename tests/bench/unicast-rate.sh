#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# unicast-rate.sh - unicast fan-out rate to 1, 2 and 3 subscribers over the multicast rate to the same subscribers, same rxe run.
#
# Usage (host):  tests/bench/unicast-rate.sh [BUILD_DIR] [MESSAGES (20000)] [ROUNDS (3)] [SIZE (64)]
# Boots four guests with tools/rxe-vm (multicast works on their segment). Guest 0 publishes
# MESSAGES unpaced pattern messages of SIZE bytes (rdpub --wait-subs N), guests 1..N subscribe
# (rdsub -c MESSAGES): once with the topic's group (multicast: one datagram on the wire per
# message), once with --transport unicast on both sides (one copy per subscriber, one chain per
# datagram). Runs alternate multicast and unicast for N = 1, 2, 3 in each round. Prints, per N,
# the medians over the rounds of the slowest subscriber's msgs/s and of the publisher's, and
# their unicast/multicast ratios. Figures only, not a pass/fail test: absolute rates under TCG
# mean little; the ratio of the same run is the figure (docs/performance.md).
set -u -o pipefail

if [ "${1:-}" != "--in-guest" ]; then
	repo=$(cd "$(dirname "$0")/../.." && pwd -P)
	build=$(cd "${1:-$repo/build}" && pwd -P)
	msgs=${2:-20000}
	rounds=${3:-3}
	size=${4:-64}
	for tool in rdpub/rdpub rdsub/rdsub; do
		[ -x "$build/tools/$tool" ] || { echo "unicast-rate: $build/tools/$tool not built" >&2; exit 2; }
	done
	cd "$repo" || exit 2
	role="tests/bench/unicast-rate.sh --in-guest '$build' $msgs $rounds $size"
	exec tools/rxe-vm exec --timeout 900 --host "$role" --host "$role" --host "$role" --host "$role"
fi

build=$2 msgs=$3 rounds=$4 size=$5
pub=$build/tools/rdpub/rdpub
sub=$build/tools/rdsub/rdsub
i=${RDPS_VM_INDEX:?run inside tools/rxe-vm}
s=${RDPS_VM_SCRATCH:?}
# shellcheck source=guest-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-lib.sh"

wait_for() { # FILE [TENTHS]: waits for a file (default 120 s)
	for _ in $(seq "${2:-1200}"); do [ -e "$1" ] && return 0; sleep 0.1; done
	return 1
}

run=0
for round in $(seq "$rounds"); do
	for n in 1 2 3; do
		for mode in multicast unicast; do
			run=$((run + 1))
			id=$run
			if [ "$i" -eq 0 ]; then
				"$pub" -t "bench.$id" --transport "$mode" --pattern -s "$size" -c "$msgs" \
					--wait-subs "$n" --wait-timeout 60 --json >"$s/pub.$id" 2>/dev/null
				for k in $(seq "$n"); do wait_for "$s/sub.$id.$k.done" || echo "run $id: subscriber $k never finished"; done
				echo "$round $n $mode" >"$s/run.$id"
				touch "$s/next.$id"
			elif [ "$i" -le "$n" ]; then
				"$sub" -t "bench.$id" --transport "$mode" -c "$msgs" --timeout 120 -q --json \
					>"$s/sub.$id.$i" 2>/dev/null
				touch "$s/sub.$id.$i.done"
				wait_for "$s/next.$id"
			else
				wait_for "$s/next.$id"
			fi
		done
	done
done
[ "$i" -eq 0 ] || exit 0

echo "bench: $msgs messages of $size bytes per run, $rounds rounds, subscribers on guests 1..N"
for n in 1 2 3; do
	for mode in multicast unicast; do
		subs="" pubs=""
		for id in $(seq "$run"); do
			read -r _ rn rmode <"$s/run.$id" || continue
			if [ "$rn" != "$n" ] || [ "$rmode" != "$mode" ]; then continue; fi
			slowest=""
			for k in $(seq "$n"); do
				r=$(json msgs_per_s "$s/sub.$id.$k")
				[ -n "$r" ] || r=0
				if [ -z "$slowest" ] || awk -v a="$r" -v b="$slowest" 'BEGIN { exit !(a < b) }'; then slowest=$r; fi
			done
			subs="$subs $slowest"
			pubs="$pubs $(json msgs_per_s "$s/pub.$id")"
		done
		med_sub=$(echo "$subs" | tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
		med_pub=$(echo "$pubs" | tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
		printf "N=%d %-9s slowest subscriber %8.0f msgs/s (rounds:%s), publisher %8.0f msgs/s\n" \
			"$n" "$mode" "$med_sub" "$subs" "$med_pub"
		eval "sub_$mode=$med_sub pub_$mode=$med_pub"
	done
	# shellcheck disable=SC2154 # set by the eval above
	awk -v n="$n" -v su="$sub_unicast" -v sm="$sub_multicast" -v pu="$pub_unicast" -v pm="$pub_multicast" \
		'BEGIN { printf "N=%d unicast/multicast: subscriber %.2f, publisher %.2f\n", n, (sm > 0 ? su / sm : 0), (pm > 0 ? pu / pm : 0) }'
done
