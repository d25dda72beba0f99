# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=bash
# lib.sh - what the packaging tests share: their arguments and scratch directory, building the
# README's example against an installed tree through pkg-config, librdps's exported symbols and
# SONAME, the installed tools and man pages. Sourced by a test run as TEST BUILD_DIR SOURCE_DIR
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

# build_example SRC ROOT PCDIR LIBDIR OUT: compiles SRC/tools/examples/hello_pubsub.c with the
# flags pkg-config gives from PCDIR, checks the header came from ROOT and the program loads
# librdps from LIBDIR (inside ROOT).
build_example() {
    local src=$1 root=$2 pcdir=$3 libdir=$4 out=$5 cflags libs deps
    if ! cflags=$(PKG_CONFIG_PATH=$pcdir pkg-config --cflags rdps) ||
        ! libs=$(PKG_CONFIG_PATH=$pcdir pkg-config --libs rdps); then
        fail "pkg-config cannot read $pcdir/rdps.pc"
        return
    fi
    echo "pkg-config --cflags --libs rdps: $cflags $libs"
    # shellcheck disable=SC2086 # pkg-config output is a list of words
    if ! deps=$(cc -std=c11 -M $cflags "$src/tools/examples/hello_pubsub.c"); then
        fail "hello_pubsub.c does not compile against $root"
        return
    fi
    if ! grep -q "$root/.*rdps/rdps.h" <<<"$deps"; then
        fail "hello_pubsub.c took rdps.h from outside $root: $(grep -o '[^ ]*rdps\.h' <<<"$deps")"
    fi
    # shellcheck disable=SC2086
    if ! cc -std=c11 -Wall -Werror $cflags "$src/tools/examples/hello_pubsub.c" -o "$out" $libs; then
        fail "hello_pubsub does not link against $root"
        return
    fi
    if ! LD_LIBRARY_PATH=$libdir ldd "$out" | grep -q "=> $libdir/librdps.so.0 "; then
        fail "hello_pubsub does not load librdps from $libdir: $(LD_LIBRARY_PATH=$libdir ldd "$out" |
            grep rdps)"
    else
        echo "ok:   hello_pubsub built through pkg-config, loads $libdir/librdps.so.0"
    fi
}

# check_library SRC LIB MAJOR: SONAME librdps.so.MAJOR, and the dynamic symbols LIB defines are
# exactly the RDPS_EXPORT functions of SRC/pubsub/include/rdps/rdps.h.
check_library() {
    local src=$1 lib=$2 major=$3 soname exported declared
    soname=$(objdump -p "$lib" | awk '$1 == "SONAME" { print $2 }')
    if [ "$soname" != "librdps.so.$major" ]; then
        fail "$lib: SONAME '$soname', want librdps.so.$major"
    fi
    exported=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVWiu]$/ { print $3 }' |
        grep -Ev '^(_init|_fini|_edata|_end|__bss_start)$' | sort)
    declared=$(grep -E '^\s*RDPS_EXPORT\b' "$src/pubsub/include/rdps/rdps.h" |
        grep -oE '\brdps_[a-z0-9_]+\s*\(' | tr -d '( ' | sort)
    if [ -z "$declared" ] || [ "$exported" != "$declared" ]; then
        fail "$lib: exported symbols differ from rdps.h's RDPS_EXPORT functions:"
        diff <(echo "$declared") <(echo "$exported") | sed 's/^/    /'
    else
        echo "ok:   $lib: SONAME $soname, $(wc -l <<<"$exported") symbols, all RDPS_EXPORT"
    fi
}

# check_tools ROOT LIBDIR: every tool of the build is in ROOT/bin and runs (--version, with
# librdps from LIBDIR), and every man page built is in ROOT/share/man (compressed).
check_tools() {
    local root=$1 libdir=$2 tool out="" page
    for tool in rdpub rdsub rdps-ping rdps-info rdps-stat md-feed md-book; do
        [ -x "$build/tools/$tool/$tool" ] || continue
        if [ ! -x "$root/bin/$tool" ]; then
            fail "$tool is built but not installed in $root/bin"
        elif ! out=$(LD_LIBRARY_PATH=$libdir "$root/bin/$tool" --version); then
            fail "installed $tool --version"
        fi
    done
    [ -n "$out" ] && echo "ok:   installed tools run: $out"
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
}
