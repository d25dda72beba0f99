#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# parity-vs-norm.sh - reliable goodput under independent loss at two subscribers, over lossless: rdps (parity repairs, and retransmissions only) against NORM (its Reed-Solomon FEC), same guests, same run.
#
# usage: tests/bench/parity-vs-norm.sh BUILD_DIR [MESSAGES (10000)] [LOSSES ("5 20")]
#   [ROUNDS (3)]
# Three rxe guests (tools/rxe-vm): guest 0 sends, guests 1 and 2 receive; for each loss L each
# receiving guest drops L % of its incoming UDP datagrams at ingress, independently (tc gact
# netrand, as tools/rxe-vm --rx-loss). Every round runs, in turn: rdps parity (rdpub --parity-k
# 64, rdsub --parity-blocks 32), rdps plain (retransmissions), NORM (norm_bench: a stream, blocks
# of 64 with up to 32 parity, NAK back-off 0 and 4). Same messages (900 bytes: one rdps datagram
# at rxe's MTU 1024, parity room included; one NORM segment) and the same sending budget
# (rdps --rate-limit 3 MB/s of datagrams, repairs included; NORM --rate 24 Mbit/s).
# Goodput: the slower receiver's bytes over its first-to-last-message time. Prints each
# configuration's median goodput per loss and its ratio over its own lossless median.
# env: RDPS_PARITY_K (rdpub --parity-k, default 64).
set -euo pipefail
if [ "${1:-}" = --guest ]; then
    shift
    build=$1 n=$2 losses=$3 rounds=$4
    s=$RDPS_VM_SCRATCH i=$RDPS_VM_INDEX
    size=900 rate_bytes=3000000 pk=${RDPS_PARITY_K:-64}
    norm=$build/tests/bench/norm_bench
    barrier() { # every guest arrived (at most 180 s)
        touch "$s/$1.$i"
        for g in 0 1 2; do
            for _ in $(seq 1800); do [ -e "$s/$1.$g" ] && break; sleep 0.1; done
        done
    }
    set_rx_loss() { # the receivers' ingress loss; the module is loaded by --rx-loss
        tc filter del dev "$RDPS_VM_NETDEV" ingress prio 2 2>/dev/null || true
        if [ "$1" != 0 ] && [ "$i" != 0 ]; then
            tc filter add dev "$RDPS_VM_NETDEV" ingress protocol ip prio 2 u32 \
                match ip protocol 17 0xff action gact ok random netrand drop $((100 / $1))
        fi
    }
    goodput() { # goodput JSON: bytes per second between the first and the last message
        python3 -c 'import json,sys
d=json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
e=d.get("elapsed_s",0)
print(int(d.get("bytes",0)/e) if e else 0)' "$1"
    }
    k=0
    for r in $(seq "$rounds"); do
        for loss in 0 $losses; do
            set_rx_loss "$loss"
            for cfg in parity plain norm0 norm4; do
                k=$((k + 1))
                tag="$cfg.$loss.$r"
                barrier "b$k"
                case $cfg in
                parity | plain)
                    popt=() sopt=()
                    [ $cfg = parity ] && popt=(--parity-k "$pk") sopt=(--parity-blocks 32)
                    if [ "$i" -eq 0 ]; then
                        "$build/tools/rdpub/rdpub" -t "pv.$k" --reliable "${popt[@]}" --pattern \
                            -c "$n" -s $size --rate-limit $rate_bytes --wait-subs 2 \
                            --drain-timeout 120 --json >"$s/$tag.pub" 2>/dev/null || true
                    else
                        "$build/tools/rdsub/rdsub" -t "pv.$k" --reliable "${sopt[@]}" -c "$n" \
                            --verify --timeout 240 -q --json >"$s/$tag.$i" 2>/dev/null ||
                            echo "[$tag] guest $i: rdsub --verify failed"
                        goodput "$s/$tag.$i" >"$s/$tag.$i.gp"
                    fi
                    ;;
                norm*)
                    port=$((6100 + k))
                    if [ "$i" -eq 0 ]; then
                        sleep 2 # the receivers listen first
                        "$norm" send --addr 239.192.9.1 --port $port --iface "$RDPS_VM_NETDEV" \
                            --count "$n" --size $size --segment $size --receivers 2 \
                            --rate $((rate_bytes * 8)) --block 64 --parity 32 --auto-parity 0 \
                            --backoff "${cfg#norm}" --json >"$s/$tag.pub" 2>/dev/null || true
                    else
                        "$norm" recv --addr 239.192.9.1 --port $port --iface "$RDPS_VM_NETDEV" \
                            --count "$n" --size $size --node-id $((i + 1)) --timeout 240 \
                            --json >"$s/$tag.$i" 2>/dev/null ||
                            echo "[$tag] guest $i: norm_bench recv failed"
                        python3 -c 'import json,sys
d=json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
print(int(d.get("goodput_bps",0)/8))' "$s/$tag.$i" >"$s/$tag.$i.gp" 2>/dev/null || echo 0 >"$s/$tag.$i.gp"
                    fi
                    ;;
                esac
            done
        done
    done
    set_rx_loss 0
    barrier end
    [ "$i" -eq 0 ] || exit 0
    # The table, from every round's goodput files in the shared scratch directory.
python3 - "$s" "$losses" "$rounds" <<'EOF'
import os, statistics, sys
s, losses, rounds = sys.argv[1], ["0"] + sys.argv[2].split(), int(sys.argv[3])
def gp(cfg, loss, r):
    v = []
    for g in (1, 2):
        try:
            v.append(int(open(os.path.join(s, f"{cfg}.{loss}.{r}.{g}.gp")).read().strip() or 0))
        except OSError:
            v.append(0)
    return min(v)
names = {"parity": "rdps parity", "plain": "rdps retransmission", "norm0": "NORM back-off 0",
         "norm4": "NORM back-off 4"}
print("configuration | " + " | ".join(f"loss {l} %: MB/s (ratio)" for l in losses))
for cfg in names:
    med = {l: statistics.median(gp(cfg, l, r) for r in range(1, rounds + 1)) for l in losses}
    base = med["0"] or 1
    cells = [f"{med[l] / 1e6:.2f} ({med[l] / base:.2f})" for l in losses]
    print(f"{names[cfg]} | " + " | ".join(cells))
EOF
    exit 0
fi

build=${1:?usage: parity-vs-norm.sh BUILD_DIR [MESSAGES] [LOSSES] [ROUNDS]}
n=${2:-10000}
losses=${3:-5 20}
rounds=${4:-3}
build=$(cd "$build" && pwd)
[ -x "$build/tests/bench/norm_bench" ] || { echo "needs $build/tests/bench/norm_bench (libnorm-dev)"; exit 2; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
self="$here/parity-vs-norm.sh --guest $build $n '$losses' $rounds"
# --rx-loss loads the tc modules in the receiving guests; each round sets its own loss.
exec "$here/../../tools/rxe-vm" exec --rx-loss 1:50 --rx-loss 2:50 --timeout 3000 \
    --host "$self" --host "$self" --host "$self"
