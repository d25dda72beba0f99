# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=bash
# lib.sh - what the packaging tests share: their arguments and scratch directory, building the
# README's example against an installed tree through pkg-config and through the CMake package,
# librdps's exported symbols and SONAME, the installed tools (their RUNPATH) and man pages. Sourced by a test run as TEST BUILD_DIR SOURCE_DIR
# VERSION; sets build, src, version, major, scratch (removed at exit) and failures.

build=${1:?usage: $0 BUILD_DIR SOURCE_DIR VERSION}
src=${2:?usage: $0 BUILD_DIR SOURCE_DIR VERSION}
version=${3:?usage: $0 BUILD_DIR SOURCE_DIR VERSION}
major=${version%%.*}
failures=0
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# install_tree PREFIX: cmake --install of the build into PREFIX; sets libdir (where librdps.so.MAJOR
# went). Exits the test when that fails.
install_tree() {
    if ! cmake --install "$build" --prefix "$1" >"$scratch/install.log" 2>&1; then
        cat "$scratch/install.log"
        echo "FAIL: cmake --install $build --prefix $1"
        exit 1
    fi
    libdir=$(dirname "$(find "$1" -name "librdps.so.$major" | head -n 1)")
}

# loads_rdps BIN LIBDIR: BIN, run with no LD_LIBRARY_PATH, loads librdps.so.MAJOR from LIBDIR (by
# its RUNPATH); says what it loads instead otherwise.
loads_rdps() {
    local bin=$1 libdir=$2 found
    found=$(env -u LD_LIBRARY_PATH ldd "$bin" | awk -v lib="librdps.so.$major" '$1 == lib { print $3 }')
    if [ -z "$found" ] || [ ! -e "$found" ] ||
        [ "$(realpath "$found")" != "$(realpath "$libdir/librdps.so.$major")" ]; then
        fail "$bin does not load librdps.so.$major from $libdir without LD_LIBRARY_PATH: $(
            env -u LD_LIBRARY_PATH ldd "$bin" | grep rdps)"
        return 1
    fi
}

# runs BIN ARGS...: BIN starts (the loader finds every library) with no LD_LIBRARY_PATH. An
# example exits 1 without an RDMA device (rdps_ctx_create fails), 0 with one, or runs on.
runs() {
    local out rc
    out=$(env -u LD_LIBRARY_PATH timeout 10 "$@" 2>&1)
    rc=$?
    if [ "$rc" -gt 1 ] && [ "$rc" -ne 124 ] || grep -q 'error while loading shared libraries' <<<"$out"
    then
        fail "$* does not run without LD_LIBRARY_PATH (exit $rc): $out"
        return 1
    fi
}

# build_example SRC ROOT PCDIR LIBDIR OUT: compiles SRC/tools/examples/hello_pubsub.c with the
# flags pkg-config gives from PCDIR and the RUNPATH docs/building.md gives, to rdps's libdir (a prefix outside
# the loader's search path), checks the header came from ROOT and the program loads librdps from
# LIBDIR (inside ROOT) and runs, with no LD_LIBRARY_PATH.
build_example() {
    local src=$1 root=$2 pcdir=$3 libdir=$4 out=$5 cflags libs rpath deps
    if ! cflags=$(PKG_CONFIG_PATH=$pcdir pkg-config --cflags rdps) ||
        ! libs=$(PKG_CONFIG_PATH=$pcdir pkg-config --libs rdps) ||
        ! rpath=$(PKG_CONFIG_PATH=$pcdir pkg-config --variable=libdir rdps); then
        fail "pkg-config cannot read $pcdir/rdps.pc"
        return
    fi
    echo "pkg-config --cflags --libs rdps: $cflags $libs; -Wl,-rpath,$rpath"
    # shellcheck disable=SC2086 # pkg-config output is a list of words
    if ! deps=$(cc -std=c11 -M $cflags "$src/tools/examples/hello_pubsub.c"); then
        fail "hello_pubsub.c does not compile against $root"
        return
    fi
    if ! grep -q "$root/.*rdps/rdps.h" <<<"$deps"; then
        fail "hello_pubsub.c took rdps.h from outside $root: $(grep -o '[^ ]*rdps\.h' <<<"$deps")"
    fi
    # shellcheck disable=SC2086
    if ! cc -std=c11 -Wall -Werror $cflags "$src/tools/examples/hello_pubsub.c" -o "$out" $libs \
        -Wl,-rpath,"$rpath"; then
        fail "hello_pubsub does not link against $root"
        return
    fi
    loads_rdps "$out" "$libdir" && runs "$out" &&
        echo "ok:   hello_pubsub built through pkg-config, loads $libdir/librdps.so.$major and runs"
}

# check_cmake_package PREFIX LIBDIR EXAMPLES LABEL: the CMake package under PREFIX works: the
# consumer project (cmake_consumer/) finds it, checks rdps::rdps and the version rules and builds
# EXAMPLES/hello_pubsub.c, which links librdps alone (none of its private dependencies) and runs;
# a copy of the installed examples directory EXAMPLES builds every example on its own.
check_cmake_package() {
    local prefix=$1 libdir=$2 examples=$3 label=$4 dir=$scratch/cmake-$4 needed bin n=0
    mkdir -p "$dir"
    if ! cmake -S "$src/tests/packaging/cmake_consumer" -B "$dir/consumer" \
        -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON \
        -DRDPS_VERSION="$version" -DRDPS_PREFIX="$prefix" -DRDPS_EXAMPLES_DIR="$examples" \
        >"$dir/consumer.log" 2>&1 || ! cmake --build "$dir/consumer" >>"$dir/consumer.log" 2>&1
    then
        sed 's/^/    /' "$dir/consumer.log"
        fail "cmake_consumer does not build against the CMake package in $prefix ($label)"
        return
    fi
    grep '^-- rdps' "$dir/consumer.log"
    bin=$dir/consumer/hello_consumer
    needed=$(readelf -d "$bin" | awk '/NEEDED/ { gsub(/[][]/, "", $5); printf "%s ", $5 }')
    if grep -Eq 'ibverbs|rdmacm|ibumad|protobuf' <<<"$needed"; then
        fail "rdps::rdps makes its users link librdps's own dependencies: $needed"
    fi
    loads_rdps "$bin" "$libdir" && runs "$bin" &&
        echo "ok:   find_package(rdps $version CONFIG) in the $label prefix: rdps::rdps builds" \
            "hello_pubsub.c, which needs only $needed"
    # A user copies the examples and builds them against the prefix.
    cp -r "$examples" "$dir/examples"
    if ! cmake -S "$dir/examples" -B "$dir/examples-build" -DCMAKE_PREFIX_PATH="$prefix" \
        -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON >"$dir/examples.log" 2>&1 ||
        ! cmake --build "$dir/examples-build" >>"$dir/examples.log" 2>&1; then
        sed 's/^/    /' "$dir/examples.log"
        fail "the installed examples ($examples) do not build against $prefix"
        return
    fi
    for c in "$examples"/*.c; do
        bin=$dir/examples-build/$(basename "$c" .c)
        if [ ! -x "$bin" ]; then
            fail "the installed examples' CMakeLists.txt does not build $(basename "$c")"
            continue
        fi
        loads_rdps "$bin" "$libdir" && n=$((n + 1))
    done
    [ "$n" -gt 0 ] && echo "ok:   $n installed examples built on their own against the $label prefix"
}

# check_library SRC LIB MAJOR: SONAME librdps.so.MAJOR, and the dynamic symbols LIB defines are
# exactly the RDPS_EXPORT functions of SRC/pubsub/include/rdps/*.h (rdps.h, rdps_archive.h).
check_library() {
    local src=$1 lib=$2 major=$3 soname exported declared unversioned
    soname=$(objdump -p "$lib" | awk '$1 == "SONAME" { print $2 }')
    if [ "$soname" != "librdps.so.$major" ]; then
        fail "$lib: SONAME '$soname', want librdps.so.$major"
    fi
    # Every exported function carries a symbol version of this major (librdps.map).
    unversioned=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVWiu]$/ { print $3 }' |
        grep -Ev '^(_init|_fini|_edata|_end|__bss_start)(@|$)' | grep -v "@@RDPS_$major\.[0-9]*$")
    if [ -n "$unversioned" ]; then
        fail "$lib: symbols without a version RDPS_$major.N: $unversioned"
    else
        echo "ok:   every exported symbol has a version RDPS_$major.N"
    fi
    exported=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVWiu]$/ { print $3 }' |
        sed 's/@.*//' | grep -Ev '^(_init|_fini|_edata|_end|__bss_start)$' | sort)
    declared=$(cat "$src"/pubsub/include/rdps/*.h | grep -E '^\s*RDPS_EXPORT\b' |
        grep -oE '\brdps_[a-z0-9_]+\s*\(' | tr -d '( ' | sort)
    if [ -z "$declared" ] || [ "$exported" != "$declared" ]; then
        fail "$lib: exported symbols differ from rdps.h's RDPS_EXPORT functions:"
        diff <(echo "$declared") <(echo "$exported") | sed 's/^/    /'
    else
        echo "ok:   $lib: SONAME $soname, $(wc -l <<<"$exported") symbols, all RDPS_EXPORT"
    fi
}

# check_tools ROOT LIBDIR RUNPATH: every tool of the build is in ROOT/bin and runs (--version), and
# every man page built is in ROOT/share/man (compressed). RUNPATH "origin": each tool finds
# librdps in LIBDIR through its RUNPATH ($ORIGIN/...) and runs with no LD_LIBRARY_PATH; "none"
# (a /usr install: the packages): no tool has a RUNPATH or RPATH, and they run with
# LD_LIBRARY_PATH=LIBDIR standing in for the system's library directory.
check_tools() {
    local root=$1 libdir=$2 mode=$3 tool out="" page runpath
    for tool in rdpub rdsub rdps-ping rdps-info rdps-stat rdps-keygen md-feed md-book rdps-record \
        rdps-replay rdps-archive; do
        [ -x "$build/tools/$tool/$tool" ] || continue
        if [ ! -x "$root/bin/$tool" ]; then
            fail "$tool is built but not installed in $root/bin"
            continue
        fi
        runpath=$(readelf -d "$root/bin/$tool" | grep -E '\((RPATH|RUNPATH)\)' | grep -o '\[.*\]')
        if [ "$mode" = none ]; then
            [ -z "$runpath" ] || fail "installed $tool has a RUNPATH (a /usr install needs none): $runpath"
            out=$(LD_LIBRARY_PATH=$libdir "$root/bin/$tool" --version) ||
                fail "installed $tool --version"
        else
            case $runpath in
            "[\$ORIGIN/"*) ;;
            *) fail "installed $tool: RUNPATH '$runpath', want \$ORIGIN/<its path to the libdir>" ;;
            esac
            loads_rdps "$root/bin/$tool" "$libdir" || continue
            out=$(env -u LD_LIBRARY_PATH "$root/bin/$tool" --version) ||
                fail "installed $tool --version without LD_LIBRARY_PATH"
        fi
    done
    if [ "$mode" = none ]; then
        [ -n "$out" ] && echo "ok:   installed tools have no RUNPATH and run: $out"
    else
        [ -n "$out" ] && echo "ok:   installed tools run without LD_LIBRARY_PATH (RUNPATH $runpath): $out"
    fi
    if [ ! -f "$build/tools/man/rdps.7" ]; then
        echo "note: man pages not built (no pandoc): not checked"
        return
    fi
    for page in "$build"/tools/man/*.[137]; do
        [ -f "$root/share/man/man${page##*.}/${page##*/}.gz" ] ||
            fail "${page##*/} is built but not installed in $root/share/man as ${page##*/}.gz"
    done
    if ! command -v man >/dev/null; then
        echo "note: no man command: pages not rendered"
    elif man -l "$root/share/man/man1/rdpub.1.gz" 2>/dev/null | grep -q -- '--drain-timeout'; then
        echo "ok:   man pages installed and readable"
    else
        fail "man -l rdpub.1.gz does not render its options"
    fi
    # One page per function: a function that shares a page is a link to it (man rdps_pub_send_ex).
    local alias=$root/share/man/man3/rdps_pub_send_ex.3.gz
    if [ ! -L "$alias" ] || [ "$(readlink "$alias")" != rdps_pub_send.3.gz ]; then
        fail "$alias is not a link to rdps_pub_send.3.gz"
    elif command -v man >/dev/null && ! man -l "$alias" 2>/dev/null | grep -q 'RDPS_ETIMEDOUT'; then
        fail "man -l rdps_pub_send_ex.3.gz does not render rdps_pub_send(3)'s ERRORS"
    fi
}

# check_python PREFIX LIBDIR: when the build has the Python binding, PREFIX/lib/python3/dist-packages
# holds the rdps package, and Debian's python3 imports it from there with no LD_LIBRARY_PATH (the
# module's RUNPATH finds LIBDIR's librdps) and carries a message over the loopback device.
check_python() {
    local prefix=$1 libdir=$2 pydir out
    grep -q '^RDPS_PYTHON_EXECUTABLE' "$build/CMakeCache.txt" && [ -d "$build/python/rdps" ] || return 0
    pydir=$prefix/lib/python3/dist-packages
    if [ ! -f "$pydir/rdps/__init__.py" ] || [ ! -f "$pydir/rdps/_rdps_cffi.abi3.so" ]; then
        fail "the rdps Python package is not in $pydir"
        return 1
    fi
    out=$(cd "$scratch" && env -u LD_LIBRARY_PATH PYTHONPATH="$pydir" RDPS_STAT=0 \
        PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -c '
import os, rdps, sys
assert rdps.__file__.startswith(sys.argv[1]), rdps.__file__
maps = open("/proc/self/maps").read()
lib = [l.split()[-1] for l in maps.splitlines() if "librdps.so" in l][0]
with rdps.Context(device="loopback") as ctx:
    got = []
    ctx.subscriber("install.test", got.append, with_info=False)
    pub = ctx.publisher("install.test")
    pub.wait_ready()
    pub.send(b"installed")
    print(os.path.realpath(lib), got[0].decode())
' "$pydir" 2>&1)
    if [ "$out" = "$(realpath "$libdir/librdps.so.$major") installed" ]; then
        echo "ok:   the rdps Python package in $pydir imports, loads $libdir/librdps.so.$major and runs"
    else
        fail "the installed rdps Python package: $out"
    fi
}
