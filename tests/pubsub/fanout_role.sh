#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# fanout_role.sh - one guest's part in a multi-guest fan-out test: guest 0 publishes pattern
# messages, every other guest subscribes and checks what arrived.
#
# usage: fanout_role.sh BUILD_DIR MODE COUNT SIZE_RANGE RATE
#   MODE verify: every message must arrive intact: rdsub --verify exits 0 AND its summary shows
#                all COUNT verified, nothing missing, corrupt or duplicated (both are checked:
#                neither the status nor the figures alone are trusted)
#   MODE lossy:  the wire drops datagrams (netem); subscribers must report gaps, deliver
#                only intact messages (zero corrupt) and still receive most of them (exact
#                loss accounting under netem: batch_role.sh)
set -u
build=$1 mode=$2 count=$3 sizes=$4 rate=$5
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ -n "${RDPS_VM_INDEX:-}" ] || { echo "run inside tools/rxe-vm"; exit 2; }
subs=$((RDPS_VM_COUNT - 1))
out="${RDPS_VM_SCRATCH:-/tmp}/fanout.$RDPS_VM_INDEX.json"
limit=$((count / rate + 60))

if [ "$RDPS_VM_INDEX" -eq 0 ]; then
    "$build/tools/rdpub/rdpub" -t md.fanout --pattern -c "$count" --size-range "$sizes" -r "$rate" \
        --wait-subs "$subs" --wait-timeout 60 --json 2>/dev/null >"$out" || exit 1
    exec "$here/check_json.py" "$out" "messages==$count"
fi

if [ "$mode" = verify ]; then
    "$build/tools/rdsub/rdsub" -t md.fanout -c "$count" --verify --timeout "$limit" -q --json >"$out"
    rc=$?
    status=0
    [ "$rc" -eq 0 ] || { echo "rdsub --verify exited $rc (see rdsub --help)"; status=1; }
    "$here/check_json.py" "$out" "verified==$count" "corrupt==0" "duplicates==0" "missing==0" \
        "out_of_range==0" || status=1
    exit "$status"
fi
# Lossy: the subscriber cannot get everything, so it ends at the timeout after the publisher
# with messages missing (5), unless netem happened to drop nothing it needed (0).
"$build/tools/rdsub/rdsub" -t md.fanout -c "$count" --verify --timeout $((count / rate + 20)) -q \
    --json >"$out"
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 5 ] || { echo "rdsub failed with $rc"; exit 1; }
exec "$here/check_json.py" "$out" "corrupt==0" "duplicates==0" "gaps>0" "verified>$((count / 2))"
