#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# update_baseline.sh - writes librdps's ABI (abidw: the exported functions and the types of the
# public header, without paths) to OUT, by default the committed baseline tests/abi/librdps.abi.
# Refresh the baseline at a release that bumps the SONAME (docs/versioning.md). Build with debug
# information (the default RelWithDebInfo) so the types are known.
# usage: update_baseline.sh LIBRDPS_SO SOURCE_DIR [OUT]
set -u
lib=${1:?usage: update_baseline.sh LIBRDPS_SO SOURCE_DIR [OUT]}
src=${2:?usage: update_baseline.sh LIBRDPS_SO SOURCE_DIR [OUT]}
out=${3:-$src/tests/abi/librdps.abi}
if ! abidw --headers-dir "$src/pubsub/include/rdps" --drop-private-types --no-corpus-path \
    --no-comp-dir-path --out-file "$out" "$lib"; then
    echo "FAIL: abidw $lib"
    exit 1
fi
# Source locations name the checkout's directory: keep the file the same from any checkout.
sed -i "s|$(cd "$src" && pwd -P)/||g" "$out"
