#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# bundle_runner.sh - one guest's part in a bundle of rxe scenarios that share one boot: runs each
# scenario in turn, in step with the other guests, and fails if any guest's part of any failed.
#
# usage: bundle_runner.sh STEPS_FILE   (inside tools/rxe-vm, the same file on every guest)
#   STEPS_FILE: one scenario per line, "NAME<TAB>LIMIT<TAB>NETEM<TAB>NO_MULTICAST<TAB>RX_LOSS<TAB>
#   GUEST_COMMAND" (written by CMake, tests/CMakeLists.txt rdps_add_vm_scenario; NETEM "-" for
#   none, NO_MULTICAST 0 or 1, RX_LOSS "-" or GUEST:PCT,...). Each scenario runs as its own test
#   would: its segment impaired as tools/rxe-vm's --netem, --no-multicast and --rx-loss would
#   (tools/rxe-vm.d/shape-net.sh), then `sh -c GUEST_COMMAND` limited to LIMIT seconds, with its
#   own scratch directory, after which its leftover processes are killed and the impairments
#   removed, so the next scenario starts on a clean guest. Every scenario runs even when an
#   earlier one failed.
set -u
steps_file=$1
shape_net=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../tools/rxe-vm.d" && pwd)/shape-net.sh
if [ -z "${RDPS_VM_INDEX:-}" ] || [ -z "${RDPS_VM_SCRATCH:-}" ]; then
    echo "bundle_runner.sh: run inside tools/rxe-vm"
    exit 2
fi
[ -r "$steps_file" ] || { echo "bundle_runner.sh: cannot read $steps_file"; exit 2; }

base=$RDPS_VM_SCRATCH
sync_dir=$base/bundle-sync
mkdir -p "$sync_dir"
total=$(grep -c . "$steps_file")
[ "$total" -gt 0 ] || { echo "bundle_runner.sh: no scenario in $steps_file"; exit 2; }

# wait_for_guests K LIMIT: until every guest has written its verdict of scenario K.
wait_for_guests() {
    local k=$1 limit=$2 n=0
    while [ "$(find "$sync_dir" -maxdepth 1 -name "$k.*" | wc -l)" -lt "$RDPS_VM_COUNT" ]; do
        n=$((n + 1))
        if [ "$n" -gt $((limit * 5)) ]; then
            echo "bundle_runner.sh: scenario $k: other guests not done after ${limit} s"
            return 1
        fi
        sleep 0.2
    done
}

k=0
failed=()
# rx_loss_of LIST: this guest's percentage in "GUEST:PCT,..." ("-": none), 0 when not named.
rx_loss_of() {
    local item
    [ "$1" = - ] && { echo 0; return; }
    for item in ${1//,/ }; do
        [ "${item%%:*}" = "$RDPS_VM_INDEX" ] && { echo "${item#*:}"; return; }
    done
    echo 0
}

while IFS=$'\t' read -r name limit netem no_multicast rx_loss cmd <&3; do
    [ -n "$name" ] || continue
    k=$((k + 1))
    mkdir -p "$base/$name"
    echo "=== scenario $k/$total: $name (limit $limit s)"
    start=$SECONDS
    [ "$netem" = - ] && netem=''
    if "$shape_net" "$RDPS_VM_NETDEV" set "$netem" "$no_multicast" "$(rx_loss_of "$rx_loss")"; then
        # timeout runs the scenario in a process group of its own: what it leaves behind is killed.
        RDPS_VM_SCRATCH=$base/$name timeout -k 10 "$limit" sh -c "$cmd" </dev/null &
        pid=$!
        wait "$pid"
        rc=$?
        kill -9 -- "-$pid" 2>/dev/null
    else
        echo "=== $name: its segment could not be impaired"
        rc=1
    fi
    "$shape_net" "$RDPS_VM_NETDEV" clear
    [ "$rc" -eq 124 ] && echo "=== $name: timed out after $limit s"
    echo "$rc" >"$sync_dir/$k.$RDPS_VM_INDEX"
    # The slowest guest may still be inside its own limit (and then 10 s to be killed).
    wait_for_guests "$k" $((limit + 60)) || { failed+=("$name(stalled)"); break; }
    bad=0
    for f in "$sync_dir/$k".*; do
        [ "$(cat "$f")" = 0 ] || bad=$((bad + 1))
    done
    if [ "$bad" -eq 0 ]; then
        echo "=== $name: PASS ($((SECONDS - start)) s)"
    else
        echo "=== $name: FAIL (this guest exit $rc; $bad of $RDPS_VM_COUNT guests failed; $((SECONDS - start)) s)"
        failed+=("$name")
    fi
done 3<"$steps_file"

if [ ${#failed[@]} -gt 0 ]; then
    echo "=== bundle: ${#failed[@]} of $total scenarios failed: ${failed[*]}"
    exit 1
fi
echo "=== bundle: all $total scenarios passed"
