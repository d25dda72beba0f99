#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Host-level test: boot ONE rxe-vm guest and run every rxe-guest test of the build tree inside it.
# Usage: run_guest_suite.sh RXE_VM CTEST BUILD_DIR
set -u
rxe_vm=$(readlink -f "$1")
ctest=$2
build=$(cd "$3" && pwd -P) || exit 2

# A tree without rxe-guest tests boots no guest.
if ! "$ctest" --test-dir "$build" -N -L rxe-guest | grep -q '^ *Test *#'; then
    echo "run_guest_suite.sh: no rxe-guest test in $build: nothing to run"
    exit 0
fi

# The guest's ctest keeps its Testing/ logs in the run's scratch dir, so it never writes
# over the log of the host ctest that is running this very test.
cmd="mkdir -p \"\$RDPS_VM_SCRATCH/Testing\" \"$build/Testing\" &&
mount --bind \"\$RDPS_VM_SCRATCH/Testing\" \"$build/Testing\" &&
\"$ctest\" --test-dir \"$build\" -L rxe-guest --output-on-failure --no-tests=ignore"

# The build directory becomes the guest's (writable) working directory.
cd "$build" || exit 2
exec "$rxe_vm" exec --timeout "${RDPS_GUEST_SUITE_TIMEOUT:-1500}" --host "$cmd"
