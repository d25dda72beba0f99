#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# rxe_event_loop.sh - one guest: a subscriber driven by its own epoll loop (event_loop_check)
# receives rdpub's paced messages from another process: every one on an fd wakeup, none waiting
# for a timer, few empty wakeups; and the same loop without rdps_ctx_arm fails the check.
#
# usage: rxe_event_loop.sh BUILD_DIR   (inside tools/rxe-vm; exits 77 elsewhere)
set -u
build=${1:?usage: rxe_event_loop.sh BUILD_DIR}
[ -n "${RDPS_VM_DEV:-}" ] || { echo "no rxe device (run inside tools/rxe-vm): skipped"; exit 77; }
check=$build/tests/pubsub/event_loop_check
rdpub=$build/tools/rdpub/rdpub
status=0

# run_pair ARGS...: the check subscribing, rdpub publishing 200 messages at 100/s; the check's rc.
run_pair() {
    "$check" "$@" md.evloop 200 30 &
    local sub=$!
    "$rdpub" -t md.evloop --pattern -c 200 -s 64 -r 100 --wait-subs 1 >/dev/null 2>&1
    wait $sub
}

run_pair
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: event_loop_check exited $rc"; status=1; }
run_pair --no-arm
rc=$?
[ $rc -eq 1 ] || { echo "FAIL: without rdps_ctx_arm the check should fail (exit 1), got $rc"; status=1; }
exit $status
