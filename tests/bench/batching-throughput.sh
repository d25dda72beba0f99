#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# batching-throughput.sh - small-message rate across two rxe guests: rdps with batching on and off,
# unreliable and reliable, at MTU 1024 and 4096, against ZeroMQ PUB/SUB (tcp, epgm) and NORM, all
# in one boot, rounds interleaved (issue 35).
#
# usage: tests/bench/batching-throughput.sh BUILD_DIR [MESSAGES (200000)] [ROUNDS (2)]
#   [SIZES ("64 256 1024")] [MTUS ("1024 4096")] [SYSTEMS ("rdps zmq-tcp zmq-epgm norm")]
# Guest 0 sends, guest 1 receives. The guests boot with a 9000-byte netdev (rxe active MTU 4096)
# and switch both netdevs between 1500 (active MTU 1024) and 9000 before each MTU's cells, so every
# cell runs in the same guest session. Each round runs, for each MTU and size, in turn:
#   rdps       rdpub --pattern unpaced, rdsub --verify (every message checked byte for byte):
#              batching on and off, unreliable (rdsub --count-loss: a lost message must be
#              reported by its exact count) and reliable; batching off only at 64 bytes, and
#              there also "plain": batching on, rdpub --chain 1 (a plain rdps_pub_send loop, no
#              RDPS_SEND_MORE: the default join rule alone)
#   zmq-tcp    tests/bench/zmq_bench over tcp (XPUB with NODROP: the sender blocks, never drops)
#   zmq-epgm   zmq_bench over epgm (PGM multicast), ZMQ_RATE $RDPS_BENCH_EPGM_RATE kbit/s
#   norm       tests/bench/norm_bench: one NORM stream, segments of 1400 bytes (8192 at MTU 4096),
#              NORM's congestion control (a fixed rate with RDPS_BENCH_NORM_RATE=BITS_PER_S: on
#              these guests 100 and 400 Mbit/s ran 2 and 9 times slower than the rate NORM found)
# 1024-byte messages send MESSAGES/4. The figure of a cell is the receiver's messages per second,
# first to last message received (every message counted and checked at the receiver); cells that
# lost messages are marked. Prints each cell as it ends, then per cell the min / median over the
# rounds, and the issue's ratios from the medians. Figures only, not a pass/fail test.
# env: RDPS_BENCH_EPGM_RATE (kbit/s, default 100000), RDPS_BENCH_NORM_RATE (bit/s or cc, default cc),
#      RDPS_BENCH_LINGER_US (rdpub --batch-linger for the batching-on cells, default 0).
set -u -o pipefail

if [ "${1:-}" = --guest ]; then
    shift
    build=$1 n=$2 rounds=$3 sizes=$4 mtus=$5 systems=$6
    s=$RDPS_VM_SCRATCH i=$RDPS_VM_INDEX
    pub=$build/tools/rdpub/rdpub sub=$build/tools/rdsub/rdsub
    zmq=$build/tests/bench/zmq_bench norm=$build/tests/bench/norm_bench
    peer=$(echo "$RDPS_VM_IPS" | tr ' ,' '\n' | sed -n 2p) # the receiving guest
    epgm_rate=${RDPS_BENCH_EPGM_RATE:-100000} norm_rate=${RDPS_BENCH_NORM_RATE:-cc}
    linger=${RDPS_BENCH_LINGER_US:-0}
    barrier() { # every guest arrived (at most 300 s)
        touch "$s/$1.$i"
        for g in 0 1; do
            for _ in $(seq 3000); do [ -e "$s/$1.$g" ] && break; sleep 0.1; done
        done
    }
    field() { # field FILE KEY: a numeric field of the last JSON line of FILE (empty if none)
        python3 -c 'import json,sys
try:
    d=json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]); print(d.get(sys.argv[2],""))
except Exception:
    pass' "$1" "$2" 2>/dev/null
    }
    set_mtu() { # both guests' netdevs; the rxe port's active MTU follows
        ip link set "$RDPS_VM_NETDEV" mtu "$1"
        for _ in $(seq 50); do
            ibv_devinfo -d "$RDPS_VM_DEV" | grep -q "active_mtu:.*$2 " && return 0
            sleep 0.1
        done
        echo "guest $i: rxe active MTU did not become $2 with netdev MTU $1" >&2
        return 1
    }
    # One cell: guest 0 sends, guest 1 receives and writes "$s/$tag.res": rate, messages
    # received, messages lost, messages per datagram (rdps; else 0).
    # Socket buffers of 16 MiB for the UDP-based systems (ZeroMQ's epgm, NORM ask for 8): a burst
    # the receiver has not read yet is not dropped by the kernel.
    sysctl -qw net.core.rmem_max=16777216 net.core.wmem_max=16777216
    k=0
    cell() {
        local system=$1 size=$2 variant=$3 mtu=$4 r=$5 count=$6
        local tag="$system.$variant.$size.$mtu.$r" limit=$((count / 2000 + 60))
        k=$((k + 1))
        barrier "c$k"
        case $system in
        rdps)
            local popt=(--batch on --batch-linger "$linger") sopt=(--count-loss)
            case $variant in *off*) popt=(--batch off) ;; *plain*) popt+=(--chain 1) ;; esac
            case $variant in rel*) popt+=(--reliable --drain-timeout 60) sopt=(--reliable) ;; esac
            if [ "$i" -eq 0 ]; then
                timeout $((limit + 120)) "$pub" -t "bt.$k" --pattern -s "$size" -c "$count" \
                    --wait-subs 1 --wait-timeout 60 "${popt[@]}" --json >"$s/$tag.pub" \
                    2>"$s/$tag.pub.err" || echo "[$tag] rdpub failed: $(tail -1 "$s/$tag.pub.err")"
            else
                timeout $((limit + 30)) "$sub" -t "bt.$k" -c "$count" --verify "${sopt[@]}" \
                    --timeout "$limit" -q --json >"$s/$tag.sub" 2>"$s/$tag.sub.err" ||
                    echo "[$tag] rdsub --verify: $(tail -1 "$s/$tag.sub.err")"
            fi
            ;;
        zmq-tcp | zmq-epgm)
            local ep=tcp://$peer:$((16000 + k)) zopt=()
            if [ "$system" = zmq-epgm ]; then
                # The interface by its address: libpgm cannot resolve its name in the guests.
                ep="epgm://$RDPS_VM_IP;239.192.35.1:$((16000 + k))"
                zopt=(--rate "$epgm_rate" --maxtpdu "$([ "$mtu" = 4096 ] && echo 9000 || echo 1500)")
            fi
            if [ "$i" -eq 0 ]; then
                sleep 1 # the receiver binds (tcp) or joins (epgm) first
                "$zmq" pub --endpoint "$ep" --count "$count" --size "$size" "${zopt[@]}" \
                    --timeout "$limit" --json >"$s/$tag.pub" 2>"$s/$tag.pub.err" ||
                    echo "[$tag] zmq_bench pub failed: $(tail -1 "$s/$tag.pub.err")"
            else
                [ "$system" = zmq-tcp ] && ep="tcp://*:$((16000 + k))"
                "$zmq" sub --endpoint "$ep" --count "$count" --size "$size" "${zopt[@]}" \
                    --timeout "$limit" --json >"$s/$tag.sub" 2>"$s/$tag.sub.err" ||
                    echo "[$tag] zmq_bench sub: not all intact"
            fi
            ;;
        norm)
            local nopt=(--rate "$norm_rate") seg=1400
            [ "$norm_rate" = cc ] && nopt=(--cc)
            [ "$mtu" = 4096 ] && seg=8192 # norm_bench's largest segment
            # A segment of whole messages (NORM packs messages into its segments).
            seg=$((seg / size * size))
            local common=(--addr 239.192.35.2 --port $((17000 + k)) --iface "$RDPS_VM_NETDEV"
                --count "$count" --size "$size" --timeout "$limit" --json)
            if [ "$i" -eq 0 ]; then
                sleep 1
                "$norm" send "${common[@]}" --segment "$seg" --receivers 1 "${nopt[@]}" \
                    --backoff 0 >"$s/$tag.pub" 2>"$s/$tag.pub.err" ||
                    echo "[$tag] norm_bench send failed: $(tail -1 "$s/$tag.pub.err")"
            else
                "$norm" recv "${common[@]}" --node-id 2 --linger 5 >"$s/$tag.sub" \
                    2>"$s/$tag.sub.err" || echo "[$tag] norm_bench recv: not all intact"
            fi
            ;;
        esac
        barrier "d$k"
        [ "$i" -eq 1 ] || return 0
        local rate got lost per=0 frames
        rate=$(field "$s/$tag.sub" msgs_per_s)
        case $system in
        rdps)
            got=$(field "$s/$tag.sub" verified)
            lost=$((count - ${got:-0}))
            frames=$(field "$s/$tag.pub" fragments)
            [ -n "$frames" ] && [ "$frames" -gt 0 ] &&
                per=$(python3 -c "print(round($count / $frames, 2))")
            ;;
        zmq*)
            got=$(field "$s/$tag.sub" received)
            lost=$(field "$s/$tag.sub" missing)
            ;;
        norm)
            got=$(field "$s/$tag.sub" verified)
            lost=$(field "$s/$tag.sub" missing)
            ;;
        esac
        echo "${rate:-0} ${got:-0} ${lost:-$count} $per" >"$s/$tag.res"
        printf '[round %s] MTU %s %4s B %-9s %-12s %10.0f msgs/s  %s of %s%s\n' "$r" "$mtu" \
            "$size" "$system" "$variant" "${rate:-0}" "${got:-0}" "$count" \
            "$([ "$per" != 0 ] && echo ", $per msgs/datagram")$([ "${lost:-1}" != 0 ] &&
                echo ", LOST ${lost:-?}")"
    }
    for r in $(seq "$rounds"); do
        for mtu in $mtus; do
            barrier "m$r.$mtu"
            if [ "$mtu" = 4096 ]; then set_mtu 9000 4096; else set_mtu 1500 1024; fi || exit 1
            for size in $sizes; do
                count=$n
                [ "$size" -ge 1024 ] && count=$((n / 4))
                for system in $systems; do
                    case $system in
                    rdps)
                        variants="unrel-on rel-on"
                        [ "$size" = 64 ] &&
                            variants="unrel-on unrel-plain unrel-off rel-on rel-plain rel-off"
                        ;;
                    *) variants=- ;;
                    esac
                    for v in $variants; do
                        cell "$system" "$size" "$v" "$mtu" "$r" "$count"
                    done
                done
            done
        done
    done
    barrier end
    [ "$i" -eq 1 ] || exit 0
    python3 - "$s" "$rounds" "$sizes" "$mtus" "$systems" <<'EOF'
import glob, os, statistics, sys
s, rounds, sizes, mtus, systems = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4].split(), sys.argv[5].split()
cells = {}
for f in glob.glob(os.path.join(s, "*.res")):
    system, variant, size, mtu, r = os.path.basename(f)[:-4].split(".")
    rate, got, lost, per = open(f).read().split()
    cells.setdefault((system, variant, size, mtu), []).append((float(rate), int(lost), float(per)))
def med(key):
    v = cells.get(key)
    return statistics.median(x[0] for x in v) if v else 0.0
print("\nmedian (min) msgs/s over %d rounds; lost: messages lost in all rounds; per: messages per datagram" % rounds)
print("MTU  | size | system    | variant   | median msgs/s | min msgs/s | lost | per")
for mtu in mtus:
    for size in sizes:
        for system in systems:
            for key in sorted(k for k in cells if k[0] == system and k[2] == size and k[3] == mtu):
                v = cells[key]
                print(f"{mtu:4} | {size:>4} | {system:9} | {key[1]:9} | {statistics.median(x[0] for x in v):13.0f} | "
                      f"{min(x[0] for x in v):10.0f} | {sum(x[1] for x in v):4} | {statistics.median(x[2] for x in v):g}")
print("\nratios of the medians (targets: on/off >= 10 at 1024, >= 30 at 4096; reliable/unreliable >= 0.9;"
      " >= 200000 msgs/s at 64 B, MTU 1024; rdps ahead of every other system)")
for mtu in mtus:
    for kind in ("unrel", "rel"):
        on, off = med(("rdps", kind + "-on", "64", mtu)), med(("rdps", kind + "-off", "64", mtu))
        if on and off:
            print(f"MTU {mtu}, 64 B, {kind}: batching on / off = {on / off:.1f} ({on:.0f} / {off:.0f})")
        plain = med(("rdps", kind + "-plain", "64", mtu))
        if plain and off:
            print(f"MTU {mtu}, 64 B, {kind}: plain send loop / off = {plain / off:.1f} ({plain:.0f} / {off:.0f})")
    for size in sizes:
        u, r = med(("rdps", "unrel-on", size, mtu)), med(("rdps", "rel-on", size, mtu))
        if u and r:
            print(f"MTU {mtu}, {size} B: reliable / unreliable = {r / u:.2f}")
        others = {sy: med((sy, "-", size, mtu)) for sy in systems if sy != "rdps"}
        best = max(others.items(), key=lambda kv: kv[1], default=(None, 0))
        if u and best[1]:
            print(f"MTU {mtu}, {size} B: rdps unreliable / best other ({best[0]}) = {u / best[1]:.2f};"
                  f" reliable / best other = {r / best[1]:.2f}")
EOF
    exit 0
fi

build=${1:?usage: batching-throughput.sh BUILD_DIR [MESSAGES] [ROUNDS] [SIZES] [MTUS] [SYSTEMS]}
n=${2:-200000}
rounds=${3:-2}
sizes=${4:-64 256 1024}
mtus=${5:-1024 4096}
systems=${6:-rdps zmq-tcp zmq-epgm norm}
build=$(cd "$build" && pwd)
for t in tools/rdpub/rdpub tools/rdsub/rdsub; do
    [ -x "$build/$t" ] || { echo "batching-throughput: needs $build/$t" >&2; exit 2; }
done
case " $systems " in *" zmq-"*)
    [ -x "$build/tests/bench/zmq_bench" ] ||
        { echo "batching-throughput: needs $build/tests/bench/zmq_bench (libzmq3-dev)" >&2; exit 2; } ;;
esac
case " $systems " in *" norm "*)
    [ -x "$build/tests/bench/norm_bench" ] ||
        { echo "batching-throughput: needs $build/tests/bench/norm_bench (libnorm-dev)" >&2; exit 2; } ;;
esac
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
self="$here/batching-throughput.sh --guest $build $n $rounds '$sizes' '$mtus' '$systems'"
exec "$here/../../tools/rxe-vm" exec --mtu 9000 --timeout 7200 --host "$self" --host "$self"
