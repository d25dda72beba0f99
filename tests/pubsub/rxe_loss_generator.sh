#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# rxe_loss_generator.sh - one guest: the library's loss generator drops 10% of received data
# frames; the subscriber reports gaps and delivers only intact messages.
#
# usage: rxe_loss_generator.sh BUILD_DIR   (inside tools/rxe-vm; exits 77 elsewhere)
set -u
build=${1:?usage: rxe_loss_generator.sh BUILD_DIR}
[ -n "${RDPS_VM_DEV:-}" ] || { echo "no rxe device (run inside tools/rxe-vm): skipped"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
n=2000 rate=200
out=$(mktemp -d)
"$build/tools/rdsub/rdsub" -t md.lossy -c $n --verify --timeout $((n / rate + 20)) -q --json \
    --loss-rx 10% --loss-seed 7 >"$out/sub.json" &
sub=$!
"$build/tools/rdpub/rdpub" -t md.lossy --pattern -c $n --size-range 1:5000 -r $rate --wait-subs 1 \
    --json >"$out/pub.json" 2>/dev/null
pub_rc=$?
wait $sub
sub_rc=$?
status=0
[ $pub_rc -eq 0 ] || { echo "rdpub failed ($pub_rc)"; status=1; }
# Some messages are lost for good, so the subscriber ends at the timeout with messages missing (5).
[ $sub_rc -eq 5 ] || { echo "rdsub exited $sub_rc, expected 5 (messages missing)"; status=1; }
"$here/check_json.py" "$out/sub.json" "loss_dropped_rx>0" "gaps>0" "corrupt==0" "duplicates==0" \
    "verified>$((n / 2))" "missing>0" || status=1
rm -rf "$out"
exit $status
