#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# check_abi.sh - librdps's ABI against the committed baseline (tests/abi/librdps.abi): fails on
# any change an existing binary could notice (a symbol removed, a type changed other than a
# growable struct growing at its end) unless the SONAME was bumped, and on a SONAME bump whose
# baseline was not refreshed with it. Additions pass and are listed.
# usage: check_abi.sh LIBRDPS_SO SOURCE_DIR
set -u
lib=${1:?usage: check_abi.sh LIBRDPS_SO SOURCE_DIR}
src=${2:?usage: check_abi.sh LIBRDPS_SO SOURCE_DIR}
here=$src/tests/abi
baseline=$here/librdps.abi
for tool in abidw abidiff; do
    command -v $tool >/dev/null || { echo "FAIL: $tool not found: install the Debian package abigail-tools"; exit 1; }
done
[ -f "$baseline" ] || { echo "FAIL: no baseline $baseline (tests/abi/update_baseline.sh makes it)"; exit 1; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

"$here/update_baseline.sh" "$lib" "$src" "$scratch/current.abi" || exit 1
old_soname=$(sed -n "s/.*<abi-corpus [^>]*soname='\([^']*\)'.*/\1/p" "$baseline" | head -n 1)
new_soname=$(sed -n "s/.*<abi-corpus [^>]*soname='\([^']*\)'.*/\1/p" "$scratch/current.abi" | head -n 1)
if [ "$old_soname" != "$new_soname" ]; then
    echo "FAIL: the SONAME changed ($old_soname -> $new_soname) but the baseline did not:"
    echo "      an incompatible release refreshes it in the same change:"
    echo "      tests/abi/update_baseline.sh BUILD/pubsub/$new_soname $src"
    exit 1
fi
abidiff --suppressions "$here/growable.suppr" --no-added-syms "$baseline" "$scratch/current.abi" \
    >"$scratch/report.txt"
rc=$?
# abidiff's status is a bit field: 1 error, 2 usage, 4 an ABI change, 8 an incompatible one.
if [ $((rc & 3)) -ne 0 ]; then
    cat "$scratch/report.txt"
    echo "FAIL: abidiff could not compare (status $rc)"
    exit 1
fi
if [ $((rc & 12)) -ne 0 ]; then
    cat "$scratch/report.txt"
    echo "FAIL: librdps ($new_soname) changed its ABI in a way existing programs would notice."
    echo "      Keep the old ABI (append to growable structs, add functions), or bump the SONAME"
    echo "      (docs/versioning.md) and refresh the baseline."
    exit 1
fi
added=$(abidiff --suppressions "$here/growable.suppr" "$baseline" "$scratch/current.abi" |
    grep -c "^  \[A\]")
echo "ok: $new_soname keeps the baseline's ABI ($added function(s) added since the baseline)"
