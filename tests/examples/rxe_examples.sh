#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# rxe_examples.sh - one guest, or one host on the local device: the programs of tools/examples,
# each role in its own process as a user runs them: hello_pubsub; reliable_pubsub's publisher and
# subscriber; zero_copy; event_loop fed by rdpub; relay between rdpub and a verifying rdsub.
#
# usage: rxe_examples.sh BUILD_DIR   (inside tools/rxe-vm, or with RDPS_DEVICE=local; exits 77
# elsewhere)
set -u
build=${1:?usage: rxe_examples.sh BUILD_DIR}
dev=${RDPS_VM_DEV:-}
case ${RDPS_DEVICE:-} in local | local:*) dev=$RDPS_DEVICE ;; esac
[ -n "$dev" ] || { echo "no rxe device (run inside tools/rxe-vm) nor RDPS_DEVICE=local: skipped"; exit 77; }
ex=$build/tools/examples
rdpub=$build/tools/rdpub/rdpub
rdsub=$build/tools/rdsub/rdsub
out=$(mktemp -d)
status=0
fail() { echo "FAIL: $*"; status=1; }

# hello_pubsub: ten quotes published and received in one process.
"$ex/hello_pubsub" >"$out/hello.txt" 2>&1 || fail "hello_pubsub exited $?"
[ "$(grep -c '^md.quotes: quote [0-9] (seq' "$out/hello.txt")" -eq 10 ] ||
    fail "hello_pubsub printed: $(cat "$out/hello.txt")"

# reliable_pubsub: the subscriber exits 0 only with every order in order and none lost.
"$ex/reliable_pubsub" sub 3000 >"$out/rsub.txt" 2>&1 &
rsub=$!
"$ex/reliable_pubsub" pub 3000 >"$out/rpub.txt" 2>&1 || fail "reliable_pubsub pub exited $?"
wait $rsub || fail "reliable_pubsub sub exited $?: $(cat "$out/rsub.txt")"
grep -q "subscriber_seen" "$out/rpub.txt" || fail "the publisher saw no subscriber_seen event"

# zero_copy: quotes built in place in a reliable publisher's ring, received in a second ctx.
timeout 120 "$ex/zero_copy" 3000 >"$out/zero_copy.txt" 2>&1 || fail "zero_copy exited $?"
grep -q "^3000 of 3000 quotes received in order" "$out/zero_copy.txt" ||
    fail "zero_copy: $(tail -n 1 "$out/zero_copy.txt")"

# event_loop: 100 messages from rdpub through the application's own epoll loop.
timeout 60 "$ex/event_loop" md.ex.loop 100 >"$out/loop.txt" 2>&1 &
loop=$!
"$rdpub" -t md.ex.loop --pattern -c 100 -s 64 -r 200 --wait-subs 1 >/dev/null 2>&1 ||
    fail "rdpub to event_loop exited $?"
wait $loop || fail "event_loop exited $?"
grep -q "^received 100 messages" "$out/loop.txt" || fail "event_loop: $(tail -n 1 "$out/loop.txt")"

# relay: rdpub -> md.ex.in -> relay -> md.ex.out -> rdsub --verify (every message intact).
"$rdsub" -t md.ex.out -c 200 --verify --timeout 60 -q >"$out/relayed.txt" 2>&1 &
verify=$!
timeout 60 "$ex/relay" md.ex.in md.ex.out "$dev" "$dev" 200 >"$out/relay.txt" 2>&1 &
relay=$!
sleep 1 # the verifier's and the relay's joins complete before the first message
"$rdpub" -t md.ex.in --pattern -c 200 --size-range 1:3000 -r 200 --wait-subs 1 >/dev/null 2>&1 ||
    fail "rdpub to relay exited $?"
wait $relay || fail "relay exited $?: $(cat "$out/relay.txt")"
wait $verify || fail "rdsub --verify behind the relay exited $?: $(cat "$out/relayed.txt")"

for f in "$out"/*.txt; do echo "--- $(basename "$f")"; tail -n 3 "$f"; done
rm -rf "$out"
exit $status
