#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# cmake_package.sh - the CMake package of `cmake --install BUILD --prefix P` works from P and
# from wherever P is moved: find_package(rdps VERSION CONFIG) finds it, rdps::rdps builds the
# installed hello_pubsub.c into a program that needs librdps alone and runs without
# LD_LIBRARY_PATH, and the installed examples directory, copied, builds every example.
# usage: cmake_package.sh BUILD_DIR SOURCE_DIR VERSION
set -u
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

prefix=$scratch/prefix
install_tree "$prefix"
examples=$prefix/share/doc/rdps/examples
if [ ! -f "$examples/CMakeLists.txt" ]; then
    fail "no examples (CMakeLists.txt and sources) in $examples"
    exit 1
fi
for c in "$src"/tools/examples/*.c; do
    cmp -s "$c" "$examples/${c##*/}" || fail "tools/examples/${c##*/} is not installed in $examples"
done
check_cmake_package "$prefix" "$libdir" "$examples" installed

mv "$prefix" "$scratch/moved"
libdir=${libdir/#$prefix/$scratch/moved}
check_cmake_package "$scratch/moved" "$libdir" "$scratch/moved/share/doc/rdps/examples" moved

[ "$failures" -eq 0 ]
