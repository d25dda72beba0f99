#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# record-keepup.sh - does a recorder keep up with rdpub unpaced? Two rxe guests: guest 0 publishes
# MESSAGES reliable pattern messages of SIZE bytes unpaced (rdpub --reliable --flow min: the
# slowest receiver sets the pace, so a recorder that fell behind would slow the publisher);
# guest 1 receives them with a plain reliable rdsub, or records them with rdps-record, runs
# alternating, ROUNDS of each. Prints the publisher's median rate with each, their ratio (issue
# 39's target: >= 0.9), and per recording run the messages recorded and missing (rdps-archive
# info on the recording; target 0 missing) and the recorder's overruns. Figures, not pass/fail:
# absolute rates under TCG mean little, the ratio of the same boot is the figure.
#
# usage (host): tests/bench/record-keepup.sh [BUILD_DIR] [MESSAGES (200000)] [ROUNDS (3)] [SIZE (64)]
#                   [RECORD_OPTIONS (e.g. "--compression none"; default none given)]
set -u -o pipefail

if [ "${1:-}" != "--in-guest" ]; then
	repo=$(cd "$(dirname "$0")/../.." && pwd -P)
	build=$(cd "${1:-$repo/build}" && pwd -P)
	msgs=${2:-200000}
	rounds=${3:-3}
	size=${4:-64}
	record_opts=${5:-}
	for tool in rdpub/rdpub rdsub/rdsub rdps-record/rdps-record rdps-archive/rdps-archive; do
		[ -x "$build/tools/$tool" ] || { echo "record-keepup: $build/tools/$tool not built" >&2; exit 2; }
	done
	cd "$repo" || exit 2
	role="tests/bench/record-keepup.sh --in-guest '$build' $msgs $rounds $size '$record_opts'"
	exec tools/rxe-vm exec --timeout 1500 --host "$role" --host "$role"
fi

build=$2 msgs=$3 rounds=$4 size=$5
read -r -a record_opts <<<"${6:-}"
i=${RDPS_VM_INDEX:?run inside tools/rxe-vm}
s=${RDPS_VM_SCRATCH:?}
# shellcheck source=guest-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-lib.sh"

wait_for() { # FILE [TENTHS]: waits for a file (default 300 s)
	for _ in $(seq "${2:-3000}"); do [ -e "$1" ] && return 0; sleep 0.1; done
	return 1
}

run=0
for round in $(seq "$rounds"); do
	for mode in rdsub record; do
		run=$((run + 1))
		topic="keepup.$run"
		if [ "$i" -eq 0 ]; then
			wait_for "$s/ready.$run" || echo "run $run: the receiver never started"
			"$build/tools/rdpub/rdpub" -t "$topic" --reliable --flow min --pattern -s "$size" \
				-c "$msgs" --wait-subs 1 --wait-timeout 60 --json >"$s/pub.$run" 2>/dev/null
			wait_for "$s/done.$run" || echo "run $run: the receiver never finished"
			echo "$round $mode" >"$s/run.$run"
		else
			if [ "$mode" = rdsub ]; then
				touch "$s/ready.$run"
				"$build/tools/rdsub/rdsub" -t "$topic" --reliable -c "$msgs" --timeout 300 -q \
					--json >"$s/sub.$run" 2>/dev/null
			else
				dir=/tmp/keepup.$run
				rm -rf "$dir"
				touch "$s/ready.$run"
				"$build/tools/rdps-record/rdps-record" --dir "$dir" -t "$topic" -c "$msgs" \
					--timeout 300 -q --json "${record_opts[@]}" >"$s/sub.$run" 2>"$s/rec.$run.err"
				"$build/tools/rdps-archive/rdps-archive" info "$dir" --json >"$s/info.$run" 2>&1
				rm -rf "$dir"
			fi
			touch "$s/done.$run"
		fi
	done
done
[ "$i" -eq 0 ] || exit 0

median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "record-keepup: $msgs reliable messages of $size bytes, rdpub --flow min unpaced, $rounds rounds," \
	"rdps-record ${record_opts[*]:-(defaults)}"
with_sub="" with_rec=""
for id in $(seq "$run"); do
	read -r _ mode <"$s/run.$id" || continue
	rate=$(json msgs_per_s "$s/pub.$id")
	if [ "$mode" = rdsub ]; then
		with_sub="$with_sub $rate"
		echo "run $id rdsub:  publisher $rate msg/s, subscriber $(json messages "$s/sub.$id") messages"
	else
		with_rec="$with_rec $rate"
		echo "run $id record: publisher $rate msg/s, recorded $(json messages "$s/info.$id") messages" \
			"(missing $((msgs - $(json messages "$s/info.$id")))), overrun $(json overrun_messages "$s/sub.$id")," \
			"queue high water $(json queue_high_water "$s/sub.$id") bytes, $(json stored_bytes "$s/sub.$id") bytes stored"
	fi
done
ms=$(echo "$with_sub" | median) mr=$(echo "$with_rec" | median)
awk -v s="$ms" -v r="$mr" 'BEGIN { printf "median publisher rate: with rdsub %.0f msg/s, with rdps-record %.0f msg/s: ratio %.2f\n", s, r, (s > 0 ? r / s : 0) }'
