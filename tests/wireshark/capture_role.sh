#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# capture_role.sh - one guest's part in the Wireshark capture test (tools/rxe-vm, 2 guests):
# guest 0 captures its netdev with tcpdump while it runs a reliable rdpub, then an unpaced
# unreliable one whose small messages share datagrams (batches, RDPS_SEND_MORE chains) among
# fragmented ones; guest 1 runs the matching rdsub --verify of each: the reliable one drops
# some received DATA in the library (--loss-rx), so the wire also carries NAKs, repairs, STATUS
# and heartbeats; then mckey sends a few foreign UD datagrams.
# Results land in OUT_DIR: rxe.pcap, rdpub.json, rdsub.json, rdpub_batch.json,
# rdsub_batch.json, tcpdump.err, mckey.log.
#
# usage: capture_role.sh BUILD_DIR OUT_DIR COUNT SIZE_RANGE BATCH_COUNT BATCH_SIZE_RANGE
#        (inside tools/rxe-vm)
set -u
usage="usage: capture_role.sh BUILD_DIR OUT_DIR COUNT SIZE_RANGE BATCH_COUNT BATCH_SIZE_RANGE"
build=${1:?$usage} out=${2:?$usage} count=${3:?$usage} sizes=${4:?$usage}
batch_count=${5:?$usage} batch_sizes=${6:?$usage}
[ -n "${RDPS_VM_INDEX:-}" ] || { echo "run inside tools/rxe-vm"; exit 2; }
sync_dir=${RDPS_VM_SCRATCH:?}
topic=ws.capture
batch_topic=ws.batch

# wait_for FILE SECONDS: until FILE exists; 1 when it does not in time.
wait_for() {
    local i
    for ((i = 0; i < $2 * 10; i++)); do
        [ -e "$1" ] && return 0
        sleep 0.1
    done
    echo "guest $RDPS_VM_INDEX: $1 did not appear within $2 s"
    return 1
}

if [ "$RDPS_VM_INDEX" -eq 0 ]; then
    command -v tcpdump >/dev/null || { echo "tcpdump is not installed (Debian: tcpdump)"; exit 1; }
    tcpdump -i "$RDPS_VM_NETDEV" -n -s 0 -U -B 8192 -w "$out/rxe.pcap" 2>"$out/tcpdump.err" &
    dump=$!
    for ((i = 0; i < 100; i++)); do
        grep -q 'listening on' "$out/tcpdump.err" 2>/dev/null && break
        sleep 0.1
    done
    grep -q 'listening on' "$out/tcpdump.err" || { cat "$out/tcpdump.err"; exit 1; }
    touch "$sync_dir/capturing"
    "$build/tools/rdpub/rdpub" -t "$topic" --reliable --pattern -c "$count" --size-range "$sizes" \
        -r 100 --wait-subs 1 --wait-timeout 60 --json >"$out/rdpub.json"
    rc=$?
    # Unpaced: rdpub sends chains of up to 16 messages with RDPS_SEND_MORE, which share
    # datagrams; messages longer than a datagram go as fragments between them.
    "$build/tools/rdpub/rdpub" -t "$batch_topic" --pattern -c "$batch_count" \
        --size-range "$batch_sizes" --wait-subs 1 --wait-timeout 60 --json >"$out/rdpub_batch.json"
    batch_rc=$?
    # The subscriber's last STATUS frames count in its figures: stop after it has finished.
    wait_for "$sync_dir/sub.done" 120
    sleep 1
    kill -INT "$dump"
    wait "$dump"
    cat "$out/tcpdump.err"
    [ "$rc" -eq 0 ] || { echo "rdpub exited $rc"; exit 1; }
    [ "$batch_rc" -eq 0 ] || { echo "rdpub (batches) exited $batch_rc"; exit 1; }
    exit 0
fi

wait_for "$sync_dir/capturing" 60 || exit 1
"$build/tools/rdsub/rdsub" -t "$batch_topic" -c "$batch_count" --verify --timeout 180 -q --json \
    >"$out/rdsub_batch.json" &
batch_sub=$!
"$build/tools/rdsub/rdsub" -t "$topic" -c "$count" --verify --reliable --timeout 120 -q --json \
    --loss-rx 15% --loss-seed 7 >"$out/rdsub.json"
rc=$?
wait "$batch_sub"
batch_rc=$?
# Foreign RoCE traffic the dissector must leave alone: a few UD multicast datagrams of mckey.
timeout 30 mckey -m 239.77.0.9 -b "$RDPS_VM_IP" -s -C 4 -S 64 >"$out/mckey.log" 2>&1 ||
    echo "mckey failed: $(tail -2 "$out/mckey.log")"
touch "$sync_dir/sub.done"
[ "$rc" -eq 0 ] || { echo "rdsub --verify exited $rc"; exit 1; }
[ "$batch_rc" -eq 0 ] || { echo "rdsub --verify (batches) exited $batch_rc"; exit 1; }
