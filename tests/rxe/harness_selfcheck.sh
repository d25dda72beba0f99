#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Host-level self-check of tools/rxe-vm: argument errors, output prefixing, exit status
# propagation, stopping the other guests after a failure, --timeout, and no leftovers.
# With CTEST also checks run_guest_suite.sh: passes with no rxe-guest test, fails when one fails.
# Usage: harness_selfcheck.sh RXE_VM [CTEST]   (boots 4 guests in 3 runs, 2 more with CTEST)
# shellcheck disable=SC2016 # the single-quoted --host commands expand inside the guests
set -u
rxe_vm=${1:?usage: harness_selfcheck.sh RXE_VM [CTEST]}
ctest=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
failures=0
check() { # check DESCRIPTION CONDITION...
	local what=$1
	shift
	if "$@"; then
		echo "ok:   $what"
	else
		echo "FAIL: $what"
		failures=$((failures + 1))
	fi
}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rxe-vm-selfcheck.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
# Runs get their own TMPDIR so that leftovers (run dirs, QEMUs, switches) can be found.
runs=$tmp/runs
mkdir "$runs"

# run_vm OUT ARGS...: run rxe-vm with output in OUT.out/OUT.err, status in $rc, seconds in $took.
run_vm() {
	local out=$1
	shift
	local t0=$SECONDS
	TMPDIR=$runs "$rxe_vm" "$@" >"$tmp/$out.out" 2>"$tmp/$out.err"
	rc=$?
	took=$((SECONDS - t0))
}
has() { grep -q -- "$2" "$tmp/$1"; }
no_leftovers() {
	[[ -z $(ls -A "$runs") ]] && ! pgrep -f -- "$runs/" >/dev/null
}

# Bad arguments: status 2, a clear message and the usage, no guest booted.
run_vm noargs
check "no command: status 2 + usage" eval '[[ $rc == 2 ]] && has noargs.err "Usage:"'
run_vm nohost exec
check "exec without --host: status 2 + message + usage" \
	eval '[[ $rc == 2 ]] && has nohost.err "at least one --host" && has nohost.err "Usage:"'
run_vm badmtu exec --mtu abc --host true
check "--mtu abc: status 2 + message" eval '[[ $rc == 2 ]] && has badmtu.err "mtu must be"'
run_vm badtimeout exec --timeout 0 --host true
check "--timeout 0: status 2" eval '[[ $rc == 2 ]] && has badtimeout.err "timeout must be"'
run_vm badopt exec --bogus --host true
check "unknown option: status 2 + message" eval '[[ $rc == 2 ]] && has badopt.err "unknown argument .--bogus."'
run_vm missingval exec --host
check "--host without a value: status 2" eval '[[ $rc == 2 ]] && has missingval.err "needs an argument"'
run_vm toomany exec --host 1 --host 2 --host 3 --host 4 --host 5 --host 6 --host 7 --host 8 --host 9
check "9 guests: status 2" eval '[[ $rc == 2 ]] && has toomany.err "at most 8"'
run_vm badloss exec --rx-loss 0:3 --host true
check "--rx-loss 0:3: status 2 + message" eval '[[ $rc == 2 ]] && has badloss.err "rx-loss takes GUEST:PCT"'
run_vm lossguest exec --rx-loss 1:20 --host true
check "--rx-loss for a guest not run: status 2" eval '[[ $rc == 2 ]] && has lossguest.err "names guest 1"'
run_vm help --help
check "--help: status 0 + usage on stdout" eval '[[ $rc == 0 ]] && has help.out "Usage:"'

# Two guests: the first non-zero status wins, output is prefixed per guest, and the guest
# still running is stopped shortly after the failure instead of running out its sleep. Guest 0
# fails only once guest 1 has printed (a marker in the shared scratch directory, then a second
# for the console to carry the line): both commands start together, and a guest stopped before
# its first line would fail the prefix check, not the harness.
run_vm status exec --timeout 600 \
	--host 'for _ in $(seq 600); do [ -e "$RDPS_VM_SCRATCH/one" ] && break; sleep 0.1; done
		sleep 1; echo "out of zero"; echo "err of zero" >&2; exit 3' \
	--host 'echo "one: $RDPS_VM_INDEX/$RDPS_VM_COUNT"; touch "$RDPS_VM_SCRATCH/one"; sleep 500
		echo "one never gets here"'
cat "$tmp/status.out" "$tmp/status.err"
check "exit 3 in guest 0 gives status 3 (got $rc)" eval '[[ $rc == 3 ]]'
check "stdout prefixed [host0]" has status.out "^\[host0\] out of zero$"
check "stderr prefixed [host0]" has status.out "^\[host0\] err of zero$"
check "guest 1 output prefixed [host1] with its env" has status.out "^\[host1\] one: 1/2$"
check "guest 1 stopped after guest 0 failed (took $took s)" eval '[[ $took -lt 200 ]] && ! has status.out "never gets here"'
check "no boot noise without --verbose" eval '! grep -q -v "^\[host[01]\] \(out of zero\|err of zero\|one: 1/2\)$" "$tmp/status.out"'
check "no run dir or process left after a failure" no_leftovers

# --timeout: status 124 and the guest is gone. The same boot checks --mtu and that output
# without a final newline still shows.
run_vm timeout exec --timeout 5 --mtu 4200 \
	--host 'tests/rxe/check_port_active.sh | tail -n 1; printf "no newline"; sleep 500'
cat "$tmp/timeout.out" "$tmp/timeout.err"
check "--mtu 4200 gives rxe active_mtu 4096" has timeout.out "^\[host0\] check_port_active: .*active_mtu 4096: ok$"
check "--timeout 5 gives 124 (got $rc)" eval '[[ $rc == 124 ]]'
check "a last line without newline is shown alone" has timeout.out "^\[host0\] no newline$"
check "--timeout is reported" has timeout.err "exceeded --timeout 5"
check "--timeout stops the guest in time (took $took s)" eval '[[ $took -lt 150 ]]'
check "no run dir or process left after a timeout" no_leftovers

# SIGTERM to rxe-vm while a guest runs: guests, hub and run dir are gone afterwards.
TMPDIR=$runs "$rxe_vm" exec --timeout 600 --host 'echo started; sleep 500' >"$tmp/term.out" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
	has term.out "^\[host0\] started$" && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.5
done
kill -TERM "$pid"
wait "$pid"
rc=$?
cat "$tmp/term.out"
check "SIGTERM during a run gives 143 (got $rc)" eval '[[ $rc == 143 ]]'
check "no run dir or process left after SIGTERM" no_leftovers

# The guest-suite runner on tiny hand-written CTest trees.
if [[ -n $ctest ]]; then
	mkdir -p "$tmp/empty" "$tmp/failing"
	: >"$tmp/empty/CTestTestfile.cmake"
	cat >"$tmp/failing/CTestTestfile.cmake" <<'EOT'
add_test(guest_ok "/bin/true")
set_tests_properties(guest_ok PROPERTIES LABELS "rxe-guest")
add_test(guest_fails "/bin/sh" "-c" "echo failing on purpose; exit 1")
set_tests_properties(guest_fails PROPERTIES LABELS "rxe-guest")
add_test(host_only "/bin/false")
set_tests_properties(host_only PROPERTIES LABELS "unit")
EOT
	TMPDIR=$runs "$here/run_guest_suite.sh" "$rxe_vm" "$ctest" "$tmp/empty" >"$tmp/suite-empty.out" 2>&1
	rc=$?
	cat "$tmp/suite-empty.out"
	check "guest suite with no rxe-guest test passes (got $rc)" eval '[[ $rc == 0 ]]'
	TMPDIR=$runs "$here/run_guest_suite.sh" "$rxe_vm" "$ctest" "$tmp/failing" >"$tmp/suite-failing.out" 2>&1
	rc=$?
	cat "$tmp/suite-failing.out"
	check "guest suite with a failing rxe-guest test fails (got $rc)" eval '[[ $rc != 0 ]]'
	check "guest suite ran the rxe-guest tests only" \
		eval 'has suite-failing.out "guest_ok .*Passed" && has suite-failing.out "guest_fails .*Failed" && ! has suite-failing.out host_only'
	check "no run dir or process left after the guest suites" no_leftovers
fi

echo "harness self-check: $failures failure(s)"
[[ $failures == 0 ]]
