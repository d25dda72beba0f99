#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# reliable-ab.sh - two or more builds of rdpub/rdsub against each other on reliable goodput across
# two rxe guests, interleaved so that the host's drift falls on every build alike.
#
# Usage (host):  tests/bench/reliable-ab.sh MESSAGES ROUNDS "LOSSES" BUILD_DIR...
#   e.g.         tests/bench/reliable-ab.sh 20000 4 "0 1 5" build build-inflight64
# Each round runs, for every build in turn, one reliable publisher (guest 0) and one verifying
# subscriber (guest 1) per loss in LOSSES, 1 KiB messages, unpaced. A loss is a netem loss
# percentage on both guests' wire (0 = no qdisc), or rN: no qdisc, the subscriber's library loss
# generator drops N % of the data frames it received (rdsub --loss-rx), after the guests did all
# their work for them; comparing N with rN tells the wire's share of a loss's cost. Prints
# each run (subscriber msgs/s, NAKs, repairs, duplicates, originals that came late, repair
# latency p50/p99 in us and in RTTs), then per build the mean rate at each loss and its ratio to
# that build's lossless mean. A build is named by its directory, or by its parent's when that is
# "build". A run that does not verify every message prints FAIL. Single runs swing 20 % under
# TCG: compare the means.
set -u -o pipefail

if [ "${1:-}" != "--in-guest" ]; then
	[ $# -ge 4 ] || { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
	repo=$(cd "$(dirname "$0")/../.." && pwd -P)
	msgs=$1 rounds=$2 losses=$3
	shift 3
	for loss in $losses; do
		[[ $loss =~ ^r?[0-9]+$ ]] || { echo "reliable-ab: loss '$loss' is neither N nor rN (percent)" >&2; exit 2; }
	done
	builds=()
	for b in "$@"; do
		dir=$(cd "$b" 2>/dev/null && pwd -P) || { echo "reliable-ab: no build directory $b" >&2; exit 2; }
		for tool in rdpub/rdpub rdsub/rdsub; do
			[ -x "$dir/tools/$tool" ] || { echo "reliable-ab: $dir/tools/$tool not built" >&2; exit 2; }
		done
		builds+=("$dir")
	done
	cd "$repo" || exit 2
	log=$(mktemp)
	role="tests/bench/reliable-ab.sh --in-guest $msgs $rounds '$losses' ${builds[*]}"
	tools/rxe-vm exec --timeout $((300 * rounds * ${#builds[@]})) --host "$role" --host "$role" | tee "$log"
	rc=${PIPESTATUS[0]}
	python3 - "$log" <<'EOF'
import re, statistics, sys
runs = {}  # (build, loss) -> [rates]
for line in open(sys.argv[1]):
    m = re.search(r"AB (\S+) loss=(r?)(\d+) round=\d+ ok=1 rate=([\d.]+)", line)
    if m:
        runs.setdefault((m.group(1), m.group(2), int(m.group(3))), []).append(float(m.group(4)))
for build in sorted({b for b, _, _ in runs}):
    base = runs.get((build, "", 0))
    parts = []
    for _, lib, loss in sorted(k for k in runs if k[0] == build):
        mean = statistics.mean(runs[(build, lib, loss)])
        ratio = f" ({mean / statistics.mean(base):.2f} of lossless)" if base and loss else ""
        parts.append(f"{lib}{loss} %: {mean:.0f} msg/s{ratio}")
    print(f"{build}: " + "; ".join(parts))
EOF
	exit "$rc"
fi

msgs=$2 rounds=$3 losses=$4
shift 4
[ -n "${RDPS_VM_INDEX:-}" ] || { echo "run inside tools/rxe-vm"; exit 2; }
out=${RDPS_VM_SCRATCH:-/tmp}
for round in $(seq 1 "$rounds"); do
	for build in "$@"; do
		name=$(basename "$build")
		# Worktrees' build directories are all "build": name those by their worktree.
		[ "$name" = build ] && name=$(basename "$(dirname "$build")")
		for loss in $losses; do
			lib_loss=()
			if [ "${loss#r}" != "$loss" ]; then
				tc qdisc del dev "$RDPS_VM_NETDEV" root 2>/dev/null
				lib_loss=(--loss-rx "${loss#r}%")
			elif [ "$loss" = 0 ]; then
				tc qdisc del dev "$RDPS_VM_NETDEV" root 2>/dev/null
			else
				tc qdisc replace dev "$RDPS_VM_NETDEV" root netem loss "$loss%" || exit 1
			fi
			topic="bench.ab.$name.$loss.$round"
			if [ "$RDPS_VM_INDEX" -eq 0 ]; then
				"$build/tools/rdpub/rdpub" -t "$topic" --reliable --pattern -c "$msgs" -s 1024 \
					--wait-subs 1 --wait-timeout 90 --drain-timeout 60 --json \
					>"$out/pub.json" 2>"$out/pub.err" ||
					echo "FAIL $name loss=$loss round=$round: rdpub: $(tail -1 "$out/pub.err")"
			else
				"$build/tools/rdsub/rdsub" "${lib_loss[@]}" -t "$topic" --reliable -c "$msgs" --verify --timeout 120 \
					-q --json >"$out/sub.json" 2>"$out/sub.err"
				rc=$?
				python3 - "$out/sub.json" "$name" "$loss" "$round" "$rc" <<'EOF'
import json, sys
lines = open(sys.argv[1]).read().strip().splitlines()
name, loss, rnd, rc = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
if not lines:
    print(f"FAIL {name} loss={loss} round={rnd}: rdsub exited {rc} with no report")
    sys.exit(0)
d = json.loads(lines[-1])
ok = int(rc == 0 and d["verified"] == d["expected"] and d.get("loss_events", 0) == 0)
rate = d["verified"] / d["elapsed_s"] if d["elapsed_s"] > 0 else 0
print(f"AB {name} loss={loss} round={rnd} ok={ok} rate={rate:.0f} naks={d.get('naks_sent', 0)} "
      f"recovered={d.get('recovered', 0)} duplicates={d.get('dup_frames', 0)} "
      f"out_of_order={d.get('out_of_order', 0)} "
      f"p50_us={d.get('repair_latency_p50_us', 0)} p99_us={d.get('repair_latency_p99_us', 0)} "
      f"p50_rtts={d.get('repair_latency_p50_rtts', 0)} p99_rtts={d.get('repair_latency_p99_rtts', 0)}")
if not ok:
    print(f"FAIL {name} loss={loss} round={rnd}: rdsub exited {rc}, verified {d['verified']}")
EOF
			fi
		done
	done
done
tc qdisc del dev "$RDPS_VM_NETDEV" root 2>/dev/null
exit 0
