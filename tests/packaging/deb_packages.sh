#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# deb_packages.sh - `cpack -G DEB` builds librdpsN, librdps-dev, rdps-tools (and python3-rdps when
# the Python binding is built) with the right
# contents, dependencies and license (a DEP-5 copyright file naming BSD-2-Clause), and lintian
# finds no error in them (its warnings are listed); unpacked with dpkg-deb -x into a scratch root
# (no dpkg -i, nothing touches the system), the README's example builds against the unpacked
# header and rdps.pc and loads the unpacked librdps, the CMake package and the packaged examples
# build, the unpacked tools (no RUNPATH in /usr) run, and the unpacked rdps Python package
# imports with Debian's python3 and carries a message over the loopback device.
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
# python3-rdps: when configure built the Python binding (its component is in the cpack config).
py_deb=""
if grep -q '^set(CPACK_COMPONENTS_ALL ".*python' "$build/CPackConfig.cmake"; then
    py_deb=$(echo "$scratch"/pkgs/python3-rdps_"$version"-*.deb)
fi
debs=("$lib_deb" "$dev_deb" "$tools_deb")
[ -n "$py_deb" ] && debs+=("$py_deb")
for deb in "${debs[@]}"; do
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
    grep -Ev "^share/doc/librdps$major/(copyright|changelog\.gz|changelog\.Debian\.gz)\$" |
    sed 's/^/unexpected in the library package: /' | grep . && fail "$lib_deb holds more than the library"
for f in include/rdps/rdps.h pkgconfig/rdps.pc 'librdps\.so$' cmake/rdps/rdpsConfig.cmake \
    cmake/rdps/rdpsConfigVersion.cmake cmake/rdps/rdpsTargets.cmake \
    share/doc/librdps-dev/examples/CMakeLists.txt share/doc/librdps-dev/examples/hello_pubsub.c; do
    contents "$dev_deb" | grep -q "$f" || fail "$f not in $dev_deb"
done
dpkg-deb -f "$dev_deb" Depends | grep -q "librdps$major (= $version-" ||
    fail "librdps-dev does not depend on the exact librdps$major"
dpkg-deb -f "$tools_deb" Depends | grep -q "librdps$major (= $version-" ||
    fail "rdps-tools does not depend on librdps$major"
if [ -n "$py_deb" ]; then
    for f in 'lib/python3/dist-packages/rdps/__init__\.py$' 'lib/python3/dist-packages/rdps/aio\.py$' \
        'lib/python3/dist-packages/rdps/_rdps_cffi\.abi3\.so$' \
        'share/doc/python3-rdps/examples/md_bbo\.py$' 'share/doc/python3-rdps/examples/async_pubsub\.py$'; do
        contents "$py_deb" | grep -q "$f" || fail "$f not in $py_deb"
    done
    contents "$py_deb" | grep -E '__pycache__|\.pyc$' | sed 's/^/byte code shipped: /' | grep . &&
        fail "$py_deb ships byte code (postinst compiles it)"
    py_depends=$(dpkg-deb -f "$py_deb" Depends)
    for dep in "librdps$major (= $version-" "python3-cffi-backend" "python3"; do
        grep -qF "$dep" <<<"$py_depends" || fail "python3-rdps does not depend on $dep: $py_depends"
    done
    for script in postinst prerm; do
        dpkg-deb --ctrl-tarfile "$py_deb" | tar -xO "./$script" 2>/dev/null | grep -q 'py3c' ||
            fail "python3-rdps has no $script byte-compiling (py3compile/py3clean)"
    done
fi
dpkg-deb --ctrl-tarfile "$lib_deb" | tar -xO ./shlibs 2>/dev/null | grep -q "^librdps $major librdps$major" ||
    fail "librdps$major has no shlibs entry"

# The Maintainer is the one configure chose (tools/packaging/maintainer.cmake), never 1.2's
# placeholder.
want_maintainer=$(sed -n 's/^set(CPACK_PACKAGE_CONTACT "\(.*\)")$/\1/p' "$build/CPackConfig.cmake")
for deb in "${debs[@]}"; do
    got=$(dpkg-deb -f "$deb" Maintainer)
    if [ "$got" != "$want_maintainer" ] || [ "$got" = "rdps maintainers <rdps@example.org>" ]; then
        fail "$(basename "$deb"): Maintainer '$got', configure chose '$want_maintainer'"
    fi
done

# librdps-dev depends on the package of every .pc rdps.pc requires, and on no other -dev package
# (1.2 required five .pc files but not libisal's, and librdps-dev missed libisal-dev).
pc_requires=$(dpkg-deb --fsys-tarfile "$dev_deb" | tar -xO --wildcards '*/pkgconfig/rdps.pc' |
    sed -n 's/^Requires\(\.private\)\?: *//p' | sed 's/[<>=][^,]*//g; s/[, ]\+/\n/g' | sed '/^$/d')
dev_depends=$(dpkg-deb -f "$dev_deb" Depends)
for pc in $pc_requires; do
    owner=$(dpkg -S "/$pc.pc" 2>/dev/null | sed -n '1s/:.*//p')
    [ -z "$owner" ] && owner=$(dpkg -S "$pc.pc" 2>/dev/null | sed -n '1s/:.*//p')
    grep -qw -- "$owner" <<<"$dev_depends" ||
        fail "rdps.pc requires $pc ($owner), which librdps-dev does not depend on: $dev_depends"
done
for dep in $(tr ',' '\n' <<<"$dev_depends" | sed 's/(.*//; s/ //g' | grep -- '-dev$'); do
    grep -qx -- "$dep" < <(for pc in $pc_requires; do dpkg -S "$pc.pc" 2>/dev/null | sed 's/:.*//'; done) ||
        fail "librdps-dev depends on $dep, but rdps.pc requires nothing of it"
done

# The -dbgsym packages: the debugging symbols of every binary the library and the tools packages
# hold, under their build ids (with DWARF when the build type compiles with -g); the binaries
# themselves are stripped.
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt" | tr '[:lower:]' '[:upper:]')
debug_flags=$(sed -n "s/^CMAKE_C_FLAGS_$build_type:STRING=//p" "$build/CMakeCache.txt" | grep -o -- '-g[0-9]*' || true)
binary_debs=("$lib_deb" "$tools_deb")
[ -n "$py_deb" ] && binary_debs+=("$py_deb")
for deb in "${binary_debs[@]}"; do
    pkg=$(dpkg-deb -f "$deb" Package)
    ddeb=$(echo "$scratch/pkgs/$pkg-dbgsym_$version"-*.ddeb)
    if [ ! -f "$ddeb" ]; then
        fail "$pkg-dbgsym not built"
        continue
    fi
    dpkg-deb -f "$ddeb" Depends | grep -qx "$pkg (= $(dpkg-deb -f "$deb" Version))" ||
        fail "$pkg-dbgsym does not depend on exactly $pkg"
    unpacked=$scratch/dbgsym-check
    rm -rf "$unpacked"
    mkdir -p "$unpacked"
    dpkg-deb -x "$deb" "$unpacked/pkg" || fail "dpkg-deb -x $deb"
    dpkg-deb -x "$ddeb" "$unpacked/dbg" || fail "dpkg-deb -x $ddeb"
    elves=0
    while IFS= read -r elf; do
        elves=$((elves + 1))
        id=$(readelf -n "$elf" | sed -n 's/.*Build ID: *//p')
        debug=$unpacked/dbg/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
        if [ ! -f "$debug" ]; then
            fail "$pkg: ${elf#"$unpacked"/pkg} (build id $id) has no symbols in $pkg-dbgsym"
        elif readelf -S "$elf" | grep -q '\.debug_info'; then
            fail "$pkg: ${elf#"$unpacked"/pkg} is not stripped"
        elif [ -n "$debug_flags" ] && ! readelf -S "$debug" | grep -q '\.debug_info'; then
            fail "$pkg-dbgsym: ${debug##*/} holds no DWARF"
        fi
    done < <(find "$unpacked/pkg" -type f -exec sh -c 'file -b "$1" | grep -q "^ELF"' _ {} \; -print)
    [ "$elves" -gt 0 ] || fail "$pkg holds no binary"
    echo "ok:   $(basename "$ddeb"): the symbols of $elves binaries of $pkg"
done

# Each package's /usr/share/doc/PACKAGE: the machine-readable copyright file (BSD-2-Clause with
# LICENSE's holders and text), the upstream and the Debian changelog.
before=$failures
for deb in "${debs[@]}"; do
    pkg=$(dpkg-deb -f "$deb" Package)
    doc=./usr/share/doc/$pkg
    copyright=$(dpkg-deb --fsys-tarfile "$deb" | tar -xO "$doc/copyright" 2>/dev/null)
    if ! grep -qx 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' \
        <<<"$copyright" || ! grep -qx 'License: BSD-2-Clause' <<<"$copyright" ||
        ! grep -qx "Copyright: $(sed -n 's/^Copyright (c) //p' "$src/LICENSE" | head -n 1)" \
            <<<"$copyright"; then
        fail "$pkg: $doc/copyright is not a DEP-5 file naming BSD-2-Clause and LICENSE's holders"
    elif ! diff <(sed -n '/^Redistribution/,$p' "$src/LICENSE") \
        <(sed -n '/^ Redistribution/,$p' <<<"$copyright" | sed 's/^ //; s/^\.$//') >/dev/null; then
        fail "$pkg: the license text in $doc/copyright is not LICENSE's"
    fi
    dpkg-deb --fsys-tarfile "$deb" | tar -xO "$doc/changelog.gz" 2>/dev/null | gzip -dc |
        cmp -s - "$src/CHANGELOG.md" || fail "$pkg: $doc/changelog.gz is not CHANGELOG.md"
    dpkg-deb --fsys-tarfile "$deb" | tar -xO "$doc/changelog.Debian.gz" 2>/dev/null | gzip -dc |
        head -n 1 | grep -q "^rdps ($version-" || fail "$pkg: no changelog.Debian.gz for $version"
done
[ "$failures" -eq "$before" ] && echo "ok:   copyright (DEP-5, BSD-2-Clause), changelog.gz, changelog.Debian.gz"

# lintian: any error fails, warnings are listed.
if ! command -v lintian >/dev/null; then
    fail "lintian is not installed (tools/install-deps --tests)"
else
    mapfile -t ddebs < <(find "$scratch/pkgs" -maxdepth 1 -name '*.ddeb')
    lintian_out=$(lintian --fail-on error "${debs[@]}" "${ddebs[@]}" 2>&1)
    lintian_rc=$?
    lintian_out=$(grep -v '^running with root privileges' <<<"$lintian_out")
    grep '^W: ' <<<"$lintian_out" | sed 's/^/note: lintian warning: /'
    if grep -q '^E: ' <<<"$lintian_out"; then
        grep '^E: ' <<<"$lintian_out" | sed 's/^/FAIL: lintian error: /'
        fail "lintian reports $(grep -c '^E: ' <<<"$lintian_out") errors"
    elif [ "$lintian_rc" -ne 0 ]; then
        fail "lintian exited $lintian_rc: $lintian_out"
    else
        echo "ok:   lintian: no errors ($(grep -c '^W: ' <<<"$lintian_out") warnings)"
    fi
fi

root=$scratch/root
for deb in "${debs[@]}"; do
    dpkg-deb -x "$deb" "$root" || fail "dpkg-deb -x $deb"
done
libdir=$(dirname "$(find "$root" -name "librdps.so.$major" | head -n 1)")
# librdps is shared only: rdps.pc's --static line is its --libs line, naming no librdps.a.
static=$(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --static --libs rdps)
shared=$(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --libs rdps)
[ "$static" = "$shared" ] ||
    fail "pkg-config --static --libs rdps ($static) differs from --libs ($shared): no librdps.a is built"
build_example "$src" "$root" "$libdir/pkgconfig" "$libdir" "$scratch/hello"
check_library "$src" "$libdir/librdps.so.$major" "$major"

check_cmake_package "$root/usr" "$libdir" "$root/usr/share/doc/librdps-dev/examples" unpacked

# The tools' package holds every tool and page built (rdps(3) and rdps(7) come from librdps-dev).
check_tools "$root/usr" "$libdir" none

# The unpacked Python package: Debian's python3 imports it with the unpacked librdps (the module
# has no RUNPATH in /usr) and a message goes through the loopback device.
if [ -n "$py_deb" ]; then
    py_out=$(cd "$scratch" && env -u PYTHONPATH PYTHONPATH="$root/usr/lib/python3/dist-packages" \
        LD_LIBRARY_PATH="$libdir" RDPS_STAT=0 PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -c '
import rdps, sys
assert rdps.__file__.startswith(sys.argv[1]), rdps.__file__
with rdps.Context(device="loopback") as ctx:
    got = []
    ctx.subscriber("pkg.test", got.append, with_info=False)
    pub = ctx.publisher("pkg.test")
    pub.wait_ready()
    pub.send(b"from the package")
    print(rdps.version(), got[0].decode())
' "$root/usr/lib/python3/dist-packages" 2>&1)
    if [ "$py_out" = "$version from the package" ]; then
        echo "ok:   python3-rdps imports and carries a message: $py_out"
    else
        fail "the unpacked python3-rdps: $py_out"
    fi
    readelf -d "$root/usr/lib/python3/dist-packages/rdps/_rdps_cffi.abi3.so" | grep -q 'R.*PATH' &&
        fail "python3-rdps's module has a RUNPATH in /usr"
fi
[ "$failures" -eq 0 ]
