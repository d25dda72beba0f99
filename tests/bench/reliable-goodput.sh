#!/usr/bin/env bash
# reliable-goodput.sh - reliable delivery across two rxe guests: goodput under wire loss over the
# lossless goodput, reliable over unreliable rate, control datagrams per data datagram, repair
# latency in RTTs.
#
# Usage (host):  tests/bench/reliable-goodput.sh [BUILD_DIR] [MESSAGES] [SIZE]
# Boots two guests (tools/rxe-vm) once; guest 0 publishes MESSAGES pattern messages of SIZE bytes
# (default 4000 x 1024) as fast as it can, guest 1 runs rdsub --verify. Scenarios, in turn, each
# with its own topic and the same netem qdisc on both guests:
#   unreliable  lossless, rdpub/rdsub without --reliable
#   reliable    lossless, then netem loss 1 %, 5 %, 20 %
# Goodput is the subscriber's verified messages per second (first to last message); a reliable
# run counts only if every message was verified in order with no loss event. Prints one line per
# scenario and the ratios the README quotes. Figures only: under TCG absolute rates mean little,
# the ratios measured in the same boot are the result.
set -u -o pipefail

if [ "${1:-}" != "--in-guest" ]; then
	repo=$(cd "$(dirname "$0")/../.." && pwd -P)
	build=$(cd "${1:-$repo/build}" && pwd -P)
	msgs=${2:-4000}
	size=${3:-1024}
	for tool in rdpub/rdpub rdsub/rdsub; do
		[ -x "$build/tools/$tool" ] || { echo "reliable-goodput: $build/tools/$tool not built" >&2; exit 2; }
	done
	cd "$repo" || exit 2
	log=$(mktemp)
	role="tests/bench/reliable-goodput.sh --in-guest '$build' $msgs $size"
	tools/rxe-vm exec --timeout 900 --host "$role" --host "$role" | tee "$log"
	rc=${PIPESTATUS[0]}
	python3 - "$log" <<'EOF'
import re, sys
rows, pubs = {}, {}
for line in open(sys.argv[1]):
    m = re.search(r"(RESULT|PUB) (\S+) (.*)", line)
    if m:
        (rows if m.group(1) == "RESULT" else pubs)[m.group(2)] = \
            dict(kv.split("=") for kv in m.group(3).split())
for name, p in pubs.items():
    rows.setdefault(name, {}).update(heartbeats=p["heartbeats"], rtt_us=p["rtt_us"])
def rate(name):
    r = rows.get(name)
    return float(r["goodput"]) if r and r.get("ok") == "1" else None
base, unrel = rate("reliable-0"), rate("unreliable-0")
print("\nreliable goodput over the lossless reliable goodput (targets 0.95 / 0.85 / 0.5):")
for loss in ("1", "5", "20"):
    g = rate("reliable-" + loss)
    print(f"  loss {loss:>2} %: " + (f"{g / base:.2f}" if g and base else "n/a (run failed)"))
if base and unrel:
    print(f"reliable lossless rate over unreliable lossless rate (target >= 0.9): {base / unrel:.2f}")
r = rows.get("reliable-0")
if r:
    data = float(r["data_frames"])
    ctl = float(r["status"]) + float(r["naks"]) + float(r["heartbeats"])
    print(f"control datagrams per data datagram, lossless: {ctl / data * 100:.2f} % "
          f"(STATUS {r['status']}, NAK {r['naks']}, heartbeats {r['heartbeats']}; target <= 1 %)")
for loss in ("1", "5", "20"):
    r = rows.get("reliable-" + loss)
    if r and "p50_us" in r and float(r["rtt_us"]) > 0:
        rtt = float(r["rtt_us"])
        print(f"repair latency at {loss:>2} %: p50 {float(r['p50_us']) / rtt:.1f} RTT, "
              f"p99 {float(r['p99_us']) / rtt:.1f} RTT (RTT {rtt:.0f} us; histogram bucket bounds)")
EOF
	exit "$rc"
fi

build=$2 msgs=$3 size=$4
pub=$build/tools/rdpub/rdpub
sub=$build/tools/rdsub/rdsub
[ -n "${RDPS_VM_INDEX:-}" ] || { echo "run inside tools/rxe-vm"; exit 2; }
out=${RDPS_VM_SCRATCH:-/tmp}
status=0
for scen in unreliable-0 reliable-0 reliable-1 reliable-5 reliable-20; do
	mode=${scen%-*} loss=${scen#*-}
	if [ "$loss" = 0 ]; then
		tc qdisc del dev "$RDPS_VM_NETDEV" root 2>/dev/null
	else
		tc qdisc replace dev "$RDPS_VM_NETDEV" root netem loss "$loss%" || exit 1
	fi
	rel=()
	[ "$mode" = reliable ] && rel=(--reliable)
	topic="bench.goodput.$scen"
	if [ "$RDPS_VM_INDEX" -eq 0 ]; then
		"$pub" -t "$topic" "${rel[@]}" --pattern -c "$msgs" -s "$size" --wait-subs 1 \
			--wait-timeout 90 --drain-timeout 60 --json >"$out/pub.$scen.json" 2>/dev/null ||
			echo "$scen: rdpub exited $?"
		# The subscriber reads the publisher's figures from its own run: print them here.
		python3 - "$out/pub.$scen.json" "$scen" <<'EOF'
import json, sys
d = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
print(f"PUB {sys.argv[2]} frames_sent={d['fragments']} heartbeats={d.get('heartbeats', 0)} "
      f"repairs={d.get('repairs', 0)} rtt_us={d.get('rtt_us', 0)} send_rate={d['msgs_per_s']:.0f}")
EOF
	else
		"$sub" -t "$topic" "${rel[@]}" -c "$msgs" --verify --timeout 300 -q --json \
			>"$out/sub.$scen.json" 2>/dev/null
		rc=$?
		python3 - "$out/sub.$scen.json" "$scen" "$rc" "$mode" <<'EOF'
import json, sys
d = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
rc, mode = int(sys.argv[3]), sys.argv[4]
ok = int(rc == 0 and d["verified"] == d["expected"] and d.get("loss_events", 0) == 0) \
    if mode == "reliable" else 1
goodput = d["verified"] / d["elapsed_s"] if d["elapsed_s"] > 0 else 0
ctl = d.get("status_sent", 0) + d.get("naks_sent", 0)
print(f"RESULT {sys.argv[2]} ok={ok} goodput={goodput:.1f} verified={d['verified']} "
      f"expected={d['expected']} data_frames={d['fragments']} status={d.get('status_sent', 0)} "
      f"naks={d.get('naks_sent', 0)} control={ctl} heartbeats=0 recovered={d.get('recovered', 0)} "
      f"p50_us={d.get('repair_latency_p50_us', 0)} p99_us={d.get('repair_latency_p99_us', 0)} "
      f"rtt_us=0 rdsub_exit={rc}")
EOF
	fi
done
tc qdisc del dev "$RDPS_VM_NETDEV" root 2>/dev/null
exit $status
