#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# check_spdx.sh - every tracked source, build and script file (.c .h .sh .py .proto .lua .cmake
# .in, CMakeLists.txt, any file starting with #!) has "SPDX-License-Identifier: BSD-2-Clause" in
# its first 3 lines; fails naming each one that has not. Exits 77 (skipped) when SOURCE_DIR is
# not the top of a git checkout (a tarball: nothing says which files are the project's).
# usage: check_spdx.sh SOURCE_DIR
set -u
src=${1:?usage: $0 SOURCE_DIR}

top=$(command -v git >/dev/null && git -C "$src" rev-parse --show-toplevel 2>/dev/null)
if [ -z "$top" ] || [ ! "$top" -ef "$src" ]; then
    echo "skip: $src is not a git checkout (of its own)"
    exit 77
fi

# has_spdx FILE: the line is in FILE's first 3 lines (bash builtins only: ~2000 files).
has_spdx() {
    local line n=0
    while [ "$n" -lt 3 ] && IFS= read -r line; do
        [[ $line == *"SPDX-License-Identifier: BSD-2-Clause"* ]] && return 0
        n=$((n + 1))
    done <"$1"
    return 1
}

declare -A candidates=()
while IFS= read -r -d '' f; do
    case $f in
    *.c | *.h | *.sh | *.py | *.proto | *.lua | *.cmake | *.in | CMakeLists.txt | */CMakeLists.txt)
        candidates[$f]=1 ;;
    esac
done < <(git -C "$src" ls-files -z)
# Scripts without such a name: text files (git grep -I skips binary ones, the fuzz corpora)
# with a line starting "#!", kept when it is the first.
while IFS= read -r -d '' f; do
    IFS= read -r -n 2 first <"$src/$f" && [ "$first" = '#!' ] && candidates[$f]=1
done < <(git -C "$src" grep -I -l -z -e '^#!')

checked=0
missing=()
for f in "${!candidates[@]}"; do
    path=$src/$f
    # Deleted in the work tree, or a link to a file checked under its own name.
    { [ -f "$path" ] && [ ! -L "$path" ]; } || continue
    checked=$((checked + 1))
    has_spdx "$path" || missing+=("$f")
done

if [ ${#missing[@]} -gt 0 ]; then
    printf 'FAIL: no "SPDX-License-Identifier: BSD-2-Clause" in the first 3 lines of %s\n' \
        "${missing[@]}" | sort
    echo "(${#missing[@]} of $checked files; see README, License)"
    exit 1
fi
echo "ok:   $checked source, build and script files carry SPDX-License-Identifier: BSD-2-Clause"
