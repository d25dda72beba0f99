#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# topic_collision_role.sh - one guest's part in the two-guest test of issue 27 row 2: names whose
# 32-bit ids were equal stay apart on the wire.
#
# md.quotes.1539599 and md.quotes.1722382 had the same 32-bit FNV-1a topic id (and share a
# multicast group), so a subscriber of one received every message of the other. Guest 1
# subscribes md.quotes.1539599; guest 0 publishes 100 messages on it and, meanwhile, 300 on
# md.quotes.1722382. The subscriber must get exactly its 100, intact, and count the other name's
# datagrams as unknown_topic (they reached it: same group), with no topic collision reported.
#
# usage: topic_collision_role.sh BUILD_DIR   (inside tools/rxe-vm exec, two guests)
set -u
build=${1:?usage: topic_collision_role.sh BUILD_DIR}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../rxe/lib.sh
. "$here/../rxe/lib.sh"
require_guest
mine=md.quotes.1539599 other=md.quotes.1722382
scratch=$RDPS_VM_SCRATCH
started=$scratch/topic_collision.sub_started done=$scratch/topic_collision.pub_done

if [ "$RDPS_VM_INDEX" -eq 0 ]; then
    wait_for_file "$started" 120 || exit 1
    # About two seconds of each name at once; the subscriber is known before its name is sent.
    "$build/tools/rdpub/rdpub" -t "$mine" --pattern --seed 2 -c 100 -r 50 --wait-subs 1 \
        --wait-timeout 60 --json >"$scratch/topic_collision.mine.json" 2>/dev/null &
    mine_pid=$!
    "$build/tools/rdpub/rdpub" -t "$other" --pattern --seed 3 -c 300 -r 100 --json \
        >"$scratch/topic_collision.other.json" 2>/dev/null
    other_rc=$?
    wait "$mine_pid"
    mine_rc=$?
    touch "$done"
    status=0
    [ "$mine_rc" -eq 0 ] || { echo "rdpub $mine exited $mine_rc"; status=1; }
    [ "$other_rc" -eq 0 ] || { echo "rdpub $other exited $other_rc"; status=1; }
    "$here/check_json.py" "$scratch/topic_collision.mine.json" "messages==100" || status=1
    "$here/check_json.py" "$scratch/topic_collision.other.json" "messages==300" || status=1
    exit "$status"
fi

out=$scratch/topic_collision.sub.json
# No -c: it runs until told the publishers are done (SIGINT), then prints its summary.
"$build/tools/rdsub/rdsub" -t "$mine" -q --json --timeout 120 >"$out" &
sub_pid=$!
sleep 3 # its group joined and its subscription announced before guest 0 starts
touch "$started"
wait_for_file "$done" 120 || { kill "$sub_pid"; exit 1; }
sleep 1 # the last datagrams in flight
kill -INT "$sub_pid"
wait "$sub_pid"
sub_rc=$?
status=0
[ "$sub_rc" -eq 0 ] || { echo "rdsub exited $sub_rc"; status=1; }
"$here/check_json.py" "$out" "messages==100" "bad_frames==0" "unknown_topic>=100" \
    "topic_collisions==0" || status=1
exit "$status"
