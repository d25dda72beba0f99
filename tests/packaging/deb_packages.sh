#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# deb_packages.sh - `cpack -G DEB` builds librdpsN, librdps-dev and rdps-tools with the right
# contents and dependencies; unpacked with dpkg-deb -x into a scratch root (no dpkg -i, nothing
# touches the system), the README's example builds against the unpacked header and rdps.pc and
# loads the unpacked librdps, and the unpacked tools run.
# usage: deb_packages.sh BUILD_DIR SOURCE_DIR VERSION
set -u
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if ! cpack -G DEB --config "$build/CPackConfig.cmake" -B "$scratch/pkgs" >"$scratch/cpack.log" 2>&1
then
    cat "$scratch/cpack.log"
    echo "FAIL: cpack -G DEB"
    exit 1
fi
lib_deb=$(echo "$scratch"/pkgs/librdps"$major"_"$version"-*.deb)
dev_deb=$(echo "$scratch"/pkgs/librdps-dev_"$version"-*.deb)
tools_deb=$(echo "$scratch"/pkgs/rdps-tools_"$version"-*.deb)
for deb in "$lib_deb" "$dev_deb" "$tools_deb"; do
    if [ ! -f "$deb" ]; then
        fail "$(basename "$deb") not built; cpack made: $(ls "$scratch/pkgs")"
        exit 1
    fi
    echo "ok:   $(basename "$deb"): $(dpkg-deb -f "$deb" Depends)"
done

# contents DEB: the files and links a package holds, without the leading ./usr.
contents() { dpkg-deb -c "$1" | awk '$1 !~ /^d/ { print $6 }' | sed 's|^\./usr/||'; }
contents "$lib_deb" | grep -Eq '^lib/(.*/)?librdps\.so\.'"$major"'$' || fail "librdps.so.$major not in $lib_deb"
contents "$lib_deb" | grep -Ev '^lib/(.*/)?librdps\.so\.'"$major"'(\.[0-9.]+)?$' |
    sed 's/^/unexpected in the library package: /' | grep . && fail "$lib_deb holds more than the library"
for f in include/rdps/rdps.h pkgconfig/rdps.pc 'librdps\.so$'; do
    contents "$dev_deb" | grep -q "$f" || fail "$f not in $dev_deb"
done
dpkg-deb -f "$dev_deb" Depends | grep -q "librdps$major (= $version-" ||
    fail "librdps-dev does not depend on the exact librdps$major"
dpkg-deb -f "$tools_deb" Depends | grep -q "librdps$major (= $version-" ||
    fail "rdps-tools does not depend on librdps$major"
dpkg-deb --ctrl-tarfile "$lib_deb" | tar -xO ./shlibs 2>/dev/null | grep -q "^librdps $major librdps$major" ||
    fail "librdps$major has no shlibs entry"

root=$scratch/root
for deb in "$lib_deb" "$dev_deb" "$tools_deb"; do
    dpkg-deb -x "$deb" "$root" || fail "dpkg-deb -x $deb"
done
libdir=$(dirname "$(find "$root" -name "librdps.so.$major" | head -n 1)")
build_example "$src" "$root" "$libdir/pkgconfig" "$libdir" "$scratch/hello"
check_library "$src" "$libdir/librdps.so.$major" "$major"

# The tools' package holds every tool and page built (rdps(3) and rdps(7) come from librdps-dev).
check_tools "$root/usr" "$libdir"
[ "$failures" -eq 0 ]
