#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# reliable-goodput.sh - reliable delivery across two rxe guests: goodput under wire loss over the
# lossless goodput, reliable over unreliable rate, control datagrams per data datagram, repair
# latency in RTTs.
#
# Usage (host):  tests/bench/reliable-goodput.sh [BUILD_DIR] [MESSAGES] [SIZE] [ROUNDS] [LIMIT]
# Boots two guests (tools/rxe-vm) once; guest 0 publishes MESSAGES pattern messages of SIZE bytes
# (default 4000 x 1024) as fast as it can (LIMIT, e.g. 9m: reliable runs with rdpub --rate-limit
# LIMIT; the unreliable run stays unpaced, so the rate ratio then says nothing), guest 1 runs
# rdsub --verify. ROUNDS times (default 1)
# the scenarios, in turn, each with its own topic and the same netem qdisc on both guests:
#   unreliable  lossless, rdpub/rdsub without --reliable
#   reliable    lossless, then lossless through a netem qdisc (loss 0 %), then netem loss 1 %,
#               5 %, 20 %
# Goodput is the subscriber's verified messages per second (first to last message); a reliable
# run counts only if every message was verified in order with no loss event. Prints one line per
# scenario and the ratios docs/performance.md quotes, each taken within a round (a lossy run over the
# lossless run just before it) and, with several rounds, their median and range. The lossy runs
# are also given over the netem 0 % run: the qdisc's own cost to the guests (TCG emulates every
# instruction of it) is then out of the ratio, which is left with what the loss costs. Figures only:
# under TCG absolute rates mean little and a loaded host moves single runs by 20 %; the ratios
# measured in the same boot, interleaved, are the result.
set -u -o pipefail

if [ "${1:-}" != "--in-guest" ]; then
	repo=$(cd "$(dirname "$0")/../.." && pwd -P)
	build=$(cd "${1:-$repo/build}" && pwd -P)
	msgs=${2:-4000}
	size=${3:-1024}
	rounds=${4:-1}
	limit=${5:-0}
	for tool in rdpub/rdpub rdsub/rdsub; do
		[ -x "$build/tools/$tool" ] || { echo "reliable-goodput: $build/tools/$tool not built" >&2; exit 2; }
	done
	cd "$repo" || exit 2
	log=$(mktemp)
	role="tests/bench/reliable-goodput.sh --in-guest '$build' $msgs $size $rounds $limit"
	tools/rxe-vm exec --timeout $((900 * rounds)) --host "$role" --host "$role" | tee "$log"
	rc=${PIPESTATUS[0]}
	python3 - "$log" "$limit" <<'EOF'
import re, statistics, sys
rounds = {}  # round -> scenario -> fields
for line in open(sys.argv[1]):
    m = re.search(r"(RESULT|PUB) (\S+) round=(\d+) (.*)", line)
    if m:
        fields = dict(kv.split("=") for kv in m.group(4).split())
        row = rounds.setdefault(int(m.group(3)), {}).setdefault(m.group(2), {})
        if m.group(1) == "PUB":
            row.update(heartbeats=fields["heartbeats"], rtt_us=fields["rtt_us"])
        else:
            row.update({k: v for k, v in fields.items() if k not in ("heartbeats", "rtt_us")})
def rate(rows, name):
    r = rows.get(name)
    return float(r["goodput"]) if r and r.get("ok") == "1" else None
def summary(values):
    if not values:
        return "n/a (every run failed)"
    if len(values) == 1:
        return f"{values[0]:.2f}"
    return (f"median {statistics.median(values):.2f} (range {min(values):.2f}-{max(values):.2f}, "
            f"{len(values)} rounds)")
ratios = {"1": [], "5": [], "20": [], "rel/unrel": [], "q0": []}
over_q0 = {"1": [], "5": [], "20": []}
failed = []
for k, rows in sorted(rounds.items()):
    base, unrel = rate(rows, "reliable-0"), rate(rows, "unreliable-0")
    q0 = rate(rows, "reliable-q0")
    if q0 and base:
        ratios["q0"].append(q0 / base)
    elif "reliable-q0" in rows:
        failed.append(f"round {k} netem 0 %")
    for loss in ("1", "5", "20"):
        g = rate(rows, "reliable-" + loss)
        if g and base:
            ratios[loss].append(g / base)
        else:
            failed.append(f"round {k} loss {loss} %")
        if g and q0:
            over_q0[loss].append(g / q0)
    if base and unrel:
        ratios["rel/unrel"].append(base / unrel)
limit = sys.argv[2]
print("\nreliable goodput over the lossless reliable goodput of the same round "
      "(targets 0.95 / 0.85 / 0.5)" +
      (f", reliable publisher limited to {limit} bytes/s:" if limit != "0" else ", unpaced:"))
for loss in ("1", "5", "20"):
    print(f"  loss {loss:>2} %: {summary(ratios[loss])}")
if ratios["q0"]:
    print("the same over the lossless run through a netem qdisc with loss 0 % (the lossy runs' "
          "path without the loss):")
    for loss in ("1", "5", "20"):
        print(f"  loss {loss:>2} %: {summary(over_q0[loss])}")
    print(f"netem 0 % over no qdisc, lossless: {summary(ratios['q0'])}")
# Absolute rates too: a rate limit trades lossless rate for what loss costs.
medians = []
for scen in ("reliable-0", "reliable-q0", "reliable-1", "reliable-5", "reliable-20"):
    rates = [rate(rows, scen) for rows in rounds.values()]
    rates = [r for r in rates if r]
    medians.append(f"{statistics.median(rates):.0f}" if rates else "n/a")
print("reliable goodput, median msgs/s lossless / netem 0 % / 1 / 5 / 20 % loss: " +
      " / ".join(medians))
print(f"reliable lossless rate over unreliable lossless rate (target >= 0.9): "
      f"{summary(ratios['rel/unrel'])}")
if failed:
    print("runs that failed (not verified, or a loss event): " + ", ".join(failed))
def span(values, fmt):
    if not values:
        return "n/a"
    if len(values) == 1:
        return fmt.format(values[0])
    return (fmt.format(statistics.median(values)) + " (" + fmt.format(min(values)) + "-" +
            fmt.format(max(values)) + ")")
ctl_pct, counts = [], []
for rows in rounds.values():
    r = rows.get("reliable-0")
    if r and "status" in r and "heartbeats" in r:
        ctl = float(r["status"]) + float(r["naks"]) + float(r["heartbeats"])
        ctl_pct.append(ctl / float(r["data_frames"]) * 100)
        counts.append(f"STATUS {r['status']}, NAK {r['naks']}, heartbeats {r['heartbeats']}")
if ctl_pct:
    print(f"control datagrams per data datagram, lossless: {span(ctl_pct, '{:.2f}')} % "
          f"({'; '.join(counts)}; target <= 1 %)")
for loss in ("1", "5", "20"):
    p50, p99, p50_ms, p99_ms = [], [], [], []
    for rows in rounds.values():
        r = rows.get("reliable-" + loss)
        if r and float(r.get("p50_rtts", 0)) > 0:
            p50.append(float(r["p50_rtts"]))
            p99.append(float(r["p99_rtts"]))
            p50_ms.append(float(r["p50_us"]) / 1000)
            p99_ms.append(float(r["p99_us"]) / 1000)
    if p50:
        print(f"repair latency at {loss:>2} %: p50 {span(p50, '{:.3g}')} RTT, "
              f"p99 {span(p99, '{:.3g}')} RTT; p50 {span(p50_ms, '{:.0f}')} ms, "
              f"p99 {span(p99_ms, '{:.0f}')} ms (each repair over the subscriber's RTT estimate "
              f"when it came; histogram bucket bounds)")
EOF
	exit "$rc"
fi

build=$2 msgs=$3 size=$4 rounds=$5 limit=${6:-0}
pub=$build/tools/rdpub/rdpub
sub=$build/tools/rdsub/rdsub
[ -n "${RDPS_VM_INDEX:-}" ] || { echo "run inside tools/rxe-vm"; exit 2; }
out=${RDPS_VM_SCRATCH:-/tmp}
status=0
for round in $(seq 1 "$rounds"); do
for scen in unreliable-0 reliable-0 reliable-q0 reliable-1 reliable-5 reliable-20; do
	mode=${scen%-*} loss=${scen#*-}
	loss=${loss#q} # q0: a netem qdisc that drops nothing
	if [ "$scen" = reliable-q0 ]; then
		tc qdisc replace dev "$RDPS_VM_NETDEV" root netem loss 0% || exit 1
	elif [ "$loss" = 0 ]; then
		tc qdisc del dev "$RDPS_VM_NETDEV" root 2>/dev/null
	else
		tc qdisc replace dev "$RDPS_VM_NETDEV" root netem loss "$loss%" || exit 1
	fi
	rel=()
	[ "$mode" = reliable ] && rel=(--reliable)
	lim=()
	[ "$mode" = reliable ] && [ "$limit" != 0 ] && lim=(--rate-limit "$limit")
	topic="bench.goodput.$scen.$round"
	if [ "$RDPS_VM_INDEX" -eq 0 ]; then
		"$pub" -t "$topic" "${rel[@]}" "${lim[@]}" --pattern -c "$msgs" -s "$size" --wait-subs 1 \
			--wait-timeout 90 --drain-timeout 60 --json >"$out/pub.$scen.json" 2>"$out/pub.$scen.err" ||
			echo "$scen round $round: rdpub exited $?: $(grep -v 'timed out$' "$out/pub.$scen.err" | tail -2)"
		# The subscriber reads the publisher's figures from its own run: print them here.
		python3 - "$out/pub.$scen.json" "$scen round=$round" <<'EOF'
import json, sys
lines = open(sys.argv[1]).read().strip().splitlines()
if not lines:
    sys.exit(0)  # rdpub failed before its report: the line above says why
d = json.loads(lines[-1])
print(f"PUB {sys.argv[2]} frames_sent={d['fragments']} heartbeats={d.get('heartbeats', 0)} "
      f"repairs={d.get('repairs', 0)} rtt_us={d.get('rtt_us', 0)} send_rate={d['msgs_per_s']:.0f}")
EOF
	else
		"$sub" -t "$topic" "${rel[@]}" -c "$msgs" --verify --timeout 300 -q --json \
			>"$out/sub.$scen.json" 2>"$out/sub.$scen.err"
		rc=$?
		[ $rc -eq 0 ] || echo "$scen round $round: rdsub exited $rc: $(tail -3 "$out/sub.$scen.err")" \
			"$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]).get("reliable_sessions"))' \
				"$out/sub.$scen.json" 2>/dev/null)"
		python3 - "$out/sub.$scen.json" "$scen round=$round" "$rc" "$mode" <<'EOF'
import json, sys
lines = open(sys.argv[1]).read().strip().splitlines()
if not lines:
    sys.exit(0)  # rdsub failed before its report: the line above says why
d = json.loads(lines[-1])
rc, mode = int(sys.argv[3]), sys.argv[4]
ok = int(rc == 0 and d["verified"] == d["expected"] and d.get("loss_events", 0) == 0) \
    if mode == "reliable" else 1
goodput = d["verified"] / d["elapsed_s"] if d["elapsed_s"] > 0 else 0
ctl = d.get("status_sent", 0) + d.get("naks_sent", 0)
print(f"RESULT {sys.argv[2]} ok={ok} goodput={goodput:.1f} verified={d['verified']} "
      f"expected={d['expected']} data_frames={d['fragments']} status={d.get('status_sent', 0)} "
      f"naks={d.get('naks_sent', 0)} control={ctl} heartbeats=0 recovered={d.get('recovered', 0)} "
      f"loss_events={d.get('loss_events', 0)} lost={d.get('lost', 0)} "
      f"p50_us={d.get('repair_latency_p50_us', 0)} p99_us={d.get('repair_latency_p99_us', 0)} "
      f"p50_rtts={d.get('repair_latency_p50_rtts', 0)} "
      f"p99_rtts={d.get('repair_latency_p99_rtts', 0)} rtt_us=0 rdsub_exit={rc}")
EOF
	fi
done
done
tc qdisc del dev "$RDPS_VM_NETDEV" root 2>/dev/null
exit $status
