#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# rxe_send_stall.sh - a link that stops moving is reported, not silent: with the guests' network
# hub frozen (SIGSTOP from the host) a publisher's sends stop completing; the transport's send
# watchdog logs it once and counts send_stalls, and logs again when sends complete once the hub
# runs. Run on the host: tests/transport/rxe_send_stall.sh BUILD_DIR
set -u -o pipefail

build=$(cd "${1:?usage: rxe_send_stall.sh BUILD_DIR}" && pwd -P) || exit 2
repo=$(cd "$(dirname "$0")/../.." && pwd -P)
cd "$repo" || exit 2
log=$(mktemp)
trap 'rm -f "$log"' EXIT

fail() {
	echo "rxe_send_stall: FAIL: $*" >&2
	sed 's/^/  | /' "$log" >&2
	exit 1
}

# A reliable publisher with no receiver sends freely into its ring (nothing is refused while the
# device holds the sends); guest 1 only keeps the hub in use.
pub="RDPS_LOG=info $build/tools/rdpub/rdpub -t stall.test --reliable --pattern -c 3000 -r 300 -s 1024 --json"
tools/rxe-vm exec --timeout 240 --host "$pub" --host "sleep 25" >"$log" 2>&1 &
vm=$!
# Until the publisher's ctx is up (it then sends for 10 s), and 2 s into its sending.
for _ in $(seq 1 200); do
	grep -q "ctx on rxe0" "$log" && break
	kill -0 "$vm" 2>/dev/null || fail "the guests ended before the publisher started"
	sleep 1
done
grep -q "ctx on rxe0" "$log" || fail "the publisher did not start"
sleep 2
hub=$(pgrep -n -f -- "-name rxe-vm-hub") || fail "no network hub process"
kill -STOP "$hub"
sleep 5
kill -CONT "$hub"
wait "$vm"
rc=$?
[ "$rc" -eq 0 ] || fail "rxe-vm exec exited $rc"
grep -q "sends posted, none completed for" "$log" || fail "no stall was logged"
grep -q "sends complete again" "$log" || fail "the end of the stall was not logged"
[ "$(grep -c "none completed for" "$log")" -eq 1 ] || fail "the stall was logged more than once"
json=$(grep -o '{"tool":"rdpub".*}' "$log") || fail "no JSON summary"
python3 - "$json" <<'PY' || fail "summary figures"
import json, sys
d = json.loads(sys.argv[1])
assert d["send_stalls"] == 1, f"send_stalls {d['send_stalls']}"
assert d["messages"] == 3000, f"messages {d['messages']}"
assert d["qp_recoveries"] == 0, "the watchdog must not reset the queue pair"
PY
echo "rxe_send_stall: OK (stall logged once, counted, recovery logged, all 3000 messages sent)"
