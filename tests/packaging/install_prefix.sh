#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# install_prefix.sh - `cmake --install BUILD --prefix P` gives a tree that works where it is and
# wherever it is moved, with no LD_LIBRARY_PATH: the tools run (RUNPATH $ORIGIN/../lib), the
# README's example builds through P's rdps.pc with -Wl,-rpath from it and runs, librdps exports
# only the API, the license, changelog and man pages are there, and the rdps Python package in
# P/lib/python3/dist-packages imports and loads P's librdps.
# usage: install_prefix.sh BUILD_DIR SOURCE_DIR VERSION
set -u
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

prefix=$scratch/prefix
install_tree "$prefix"
pcdir=$libdir/pkgconfig
if [ ! -f "$pcdir/rdps.pc" ] || [ ! -f "$prefix/include/rdps/rdps.h" ]; then
    fail "no rdps.pc or rdps/rdps.h under $prefix"
    exit 1
fi
if grep -q "$prefix\|/usr/local" "$pcdir/rdps.pc"; then
    fail "rdps.pc names an absolute prefix: $(grep '^prefix=' "$pcdir/rdps.pc")"
fi
got=$(PKG_CONFIG_PATH=$pcdir pkg-config --modversion rdps)
[ "$got" = "$version" ] || fail "pkg-config --modversion rdps: '$got', want $version"
for f in LICENSE CHANGELOG.md; do
    if cmp -s "$src/$f" "$prefix/share/doc/rdps/$f"; then
        echo "ok:   $f in share/doc/rdps"
    else
        fail "$f is not installed as share/doc/rdps/$f"
    fi
done

build_example "$src" "$prefix" "$pcdir" "$libdir" "$scratch/hello"
check_library "$src" "$libdir/librdps.so.$major" "$major"
check_tools "$prefix" "$libdir" origin
check_python "$prefix" "$libdir"

# The same tree moved elsewhere still builds the example (rdps.pc is relative to itself) and its
# tools still run (their RUNPATH is relative to themselves).
mv "$prefix" "$scratch/moved"
libdir=${libdir/#$prefix/$scratch/moved}
pcdir=$libdir/pkgconfig
prefix=$scratch/moved
build_example "$src" "$prefix" "$pcdir" "$libdir" "$scratch/hello-moved"
check_tools "$prefix" "$libdir" origin
check_python "$prefix" "$libdir"

[ "$failures" -eq 0 ]
