#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# batching-latency.sh - what batching adds to a lone message's latency: a publish/subscribe round
# trip at a paced rate with batching on and off, against perftest and rdps-ping on the same two
# rxe guests, rounds interleaved (issue 35: no added latency when idle).
#
# usage: tests/bench/batching-latency.sh BUILD_DIR [COUNT (2000)] [ROUNDS (3)] [RATE (100)]
# Guest 0 answers, guest 1 measures. Each round runs, in turn (the order of on and off swapped
# every round):
#   perftest   ib_send_lat -c UD -e (event mode), 64 bytes, COUNT round trips: 2 x t_typical
#   rdps-ping  rdps-ping --event, 64 bytes, COUNT round trips (the transport: no publisher, so
#              batching cannot change it; ping-vs-perftest.sh's figure): p50
#   on, off    tests/bench/pubsub_rtt: COUNT 64-byte messages published at RATE per second,
#              echoed by a subscriber that publishes them back from its callback, batching on or
#              off on both sides (rdps_pub_opts.batching): p50 and p99
# Prints each round, then the medians over the rounds of each figure and of the ratios over
# perftest. Figures only, not a pass/fail test. The default rate leaves the guests idle between
# messages (a round trip takes 1.5-2.5 ms on them); at 1000 per second two TCG guests on a
# loaded host cannot keep up with the echo, the queues grow, and the round trip measures them.
set -u -o pipefail

if [ "${1:-}" = --guest ]; then
    shift
    build=$1 n=$2 rounds=$3 rate=$4
    s=$RDPS_VM_SCRATCH i=$RDPS_VM_INDEX dev=$RDPS_VM_DEV
    server_ip=$(echo "$RDPS_VM_IPS" | tr ' ,' '\n' | sed -n 1p)
    # shellcheck source=guest-lib.sh
    . "$(dirname "${BASH_SOURCE[0]}")/guest-lib.sh"
    gidx=$(roce_v2_gid_index "$dev")
    barrier() { # every guest arrived (at most 300 s)
        touch "$s/$1.$i"
        for g in 0 1; do
            for _ in $(seq 3000); do [ -e "$s/$1.$g" ] && break; sleep 0.1; done
        done
    }
    k=0
    # phase TAG 'ANSWERING CMD' 'MEASURING CMD': the measuring side's output in $s/TAG.out.
    phase() {
        k=$((k + 1))
        barrier "p$k"
        if [ "$i" -eq 0 ]; then
            eval "$2" >"$s/$1.srv" 2>&1 &
            local pid=$!
            barrier "q$k"
            barrier "r$k"
            kill "$pid" 2>/dev/null
            wait "$pid" 2>/dev/null
        else
            barrier "q$k"
            sleep 3 # the answering side is listening (perftest's server takes a while on a loaded host)
            eval "$3" >"$s/$1.out" 2>&1 || echo "[$1] failed: $(tail -2 "$s/$1.out")"
            barrier "r$k"
        fi
    }
    perf="-d $dev -c UD -x $gidx -s 64 -F -e -n $n"
    ping=$build/tools/rdps-ping/rdps-ping rtt=$build/tests/bench/pubsub_rtt
    for r in $(seq "$rounds"); do
        modes="on off"
        [ $((r % 2)) -eq 0 ] && modes="off on"
        phase "perftest.$r" "ib_send_lat $perf -p $((18515 + r))" \
            "ib_send_lat $perf -p $((18515 + r)) $server_ip"
        phase "ping.$r" "'$ping' --listen -d $dev --port 7471 --timeout 600 --event" \
            "'$ping' $server_ip:7471 -d $dev -n $n -s 64 --event --json"
        for m in $modes; do
            phase "$m.$r" "'$rtt' pong $n $rate 64 $m 300" "'$rtt' ping $n $rate 64 $m 300"
        done
        [ "$i" -eq 1 ] || continue
        pt=$(field 64 5 <"$s/perftest.$r.out")
        echo "${pt:-0} $(json rtt_p50_us "$s/ping.$r.out") $(json rtt_p50_us "$s/on.$r.out")" \
            "$(json rtt_p99_us "$s/on.$r.out") $(json rtt_p50_us "$s/off.$r.out")" \
            "$(json rtt_p99_us "$s/off.$r.out") $(json echoed "$s/on.$r.out")" \
            "$(json echoed "$s/off.$r.out")" >"$s/round.$r"
        read -r a b c d e f g h <"$s/round.$r"
        echo "[round $r] RTT us: perftest 2 x typical $(python3 -c "print(2 * ${a:-0})")," \
            "rdps-ping p50 ${b:-?}, pub/sub on p50 ${c:-?} p99 ${d:-?}, off p50 ${e:-?} p99 ${f:-?}" \
            "(echoed on ${g:-?}, off ${h:-?} of $n)"
    done
    barrier end
    [ "$i" -eq 1 ] || exit 0
    python3 - "$s" "$rounds" <<'EOF'
import os, statistics, sys
s, rounds = sys.argv[1], int(sys.argv[2])
rows = []
for r in range(1, rounds + 1):
    try:
        v = [float(x) for x in open(os.path.join(s, f"round.{r}")).read().split()[:6]]
    except (OSError, ValueError):
        continue
    if len(v) == 6 and v[0] > 0:
        rows.append(v)
if not rows:
    sys.exit("no complete round")
med = lambda j: statistics.median(row[j] for row in rows)
ratio = lambda j: statistics.median(row[j] / (2 * row[0]) for row in rows)
print(f"medians over {len(rows)} rounds, RTT us: perftest {2 * med(0):.1f}, rdps-ping p50 {med(1):.1f},"
      f" pub/sub batching on p50 {med(2):.1f} p99 {med(3):.1f}, off p50 {med(4):.1f} p99 {med(5):.1f}")
print(f"over perftest (medians of the rounds' ratios): rdps-ping {ratio(1):.2f}, pub/sub on {ratio(2):.2f},"
      f" off {ratio(4):.2f}; on / off p50 {statistics.median(row[2] / row[4] for row in rows):.2f},"
      f" p99 {statistics.median(row[3] / row[5] for row in rows):.2f}")
EOF
    exit 0
fi

build=${1:?usage: batching-latency.sh BUILD_DIR [COUNT] [ROUNDS] [RATE]}
n=${2:-2000}
rounds=${3:-3}
rate=${4:-100}
build=$(cd "$build" && pwd)
for t in tools/rdps-ping/rdps-ping tests/bench/pubsub_rtt; do
    [ -x "$build/$t" ] || { echo "batching-latency: needs $build/$t" >&2; exit 2; }
done
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
self="$here/batching-latency.sh --guest $build $n $rounds $rate"
exec "$here/../../tools/rxe-vm" exec --timeout 3600 --host "$self" --host "$self"
