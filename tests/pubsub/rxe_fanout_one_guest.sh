#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# rxe_fanout_one_guest.sh - one guest: 2 subscribers + 1 publisher, every pattern message verified;
# a subscriber of another topic that hashes to the same multicast group receives none of them.
#
# usage: rxe_fanout_one_guest.sh BUILD_DIR   (inside tools/rxe-vm; exits 77 elsewhere)
# env:   RDPS_TEST_MESSAGES (default 3000, 50 s), RDPS_TEST_RATE messages/s
#        (default 60)
set -u
build=${1:?usage: rxe_fanout_one_guest.sh BUILD_DIR}
[ -n "${RDPS_VM_DEV:-}" ] || { echo "no rxe device (run inside tools/rxe-vm): skipped"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
n=${RDPS_TEST_MESSAGES:-3000}
rate=${RDPS_TEST_RATE:-60}
out=$(mktemp -d)
sub="$build/tools/rdsub/rdsub"
pub="$build/tools/rdpub/rdpub"
# The publisher needs n/rate seconds; give the subscribers that plus a margin.
limit=$((n / rate + 60))

# md.other.9579 hashes to the same group as md.fanout (239.192.197.235 in 239.192.0.0/16).
"$sub" -t md.fanout -c "$n" --verify --timeout "$limit" -q --json >"$out/sub1.json" &
s1=$!
"$sub" -t md.fanout -c "$n" --verify --timeout "$limit" -q --json >"$out/sub2.json" &
s2=$!
"$sub" -t md.other.9579 -q --json >"$out/other.json" &
other=$!

"$pub" -t md.fanout --pattern -c "$n" --size-range 1:100000 -r "$rate" --wait-subs 2 --json \
    >"$out/pub.json" 2>"$out/pub.err"
pub_rc=$?
wait $s1; rc1=$?
wait $s2; rc2=$?
kill -TERM $other; wait $other

status=0
[ $pub_rc -eq 0 ] || { echo "rdpub failed ($pub_rc):"; cat "$out/pub.err"; status=1; }
[ $rc1 -eq 0 ] || { echo "subscriber 1 exited $rc1"; status=1; }
[ $rc2 -eq 0 ] || { echo "subscriber 2 exited $rc2"; status=1; }
"$here/check_json.py" "$out/pub.json" "messages==$n" || status=1
for s in sub1 sub2; do
    "$here/check_json.py" "$out/$s.json" "verified==$n" "corrupt==0" "duplicates==0" \
        "missing==0" || status=1
done
"$here/check_json.py" "$out/other.json" "messages==0" "frames_received>0" || status=1
rm -rf "$out"
exit $status
