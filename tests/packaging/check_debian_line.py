#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""check_debian_line.py - the README's Debian package line is what a default configure needs.

  check_debian_line.py SOURCE_DIR

A reader copies the README's `apt-get install ...` line (section Install) and runs configure: that
line must hold every Debian package CMakeLists.txt names for a missing dependency ("install the
Debian package 'X'", and rdps_require_pkg(TARGET MODULE X)), and it must be exactly the list
tools/install-deps installs to build (its build_packages), so the two cannot drift apart. Prints
one line per difference and exits 1 when there is any.
"""
import os
import re
import shlex
import sys

# Tools configure cannot name: it needs them to run at all.
TOOLCHAIN = {'build-essential', 'cmake'}


def readme_packages(path):
    """The packages of the README's first `apt-get install` command (section Install)."""
    text = open(path, encoding='utf-8').read()
    command = re.search(r'^apt-get install ((?:.*\\\n)*.*)$', text, re.M)
    if not command:
        sys.exit(f'{path}: no "apt-get install" line')
    words = shlex.split(command.group(1).replace('\\\n', ' '))
    return [w for w in words if not w.startswith('-')]


def cmake_packages(path):
    """Every Debian package CMakeLists.txt names in its missing-dependency messages."""
    text = open(path, encoding='utf-8').read()
    names = set(re.findall(r"install the Debian package '([a-z0-9][a-z0-9.+-]*)'", text))
    for m in re.finditer(r'^\s*rdps_require_pkg\(\s*\w+\s+\S+\s+([a-z0-9][a-z0-9.+-]*)\s*\)',
                         text, re.M):
        names.add(m.group(1))
    return names


def install_deps_packages(path):
    """tools/install-deps' build_packages=( ... ) array (comments dropped)."""
    text = open(path, encoding='utf-8').read()
    m = re.search(r'^build_packages=\((.*?)\)', text, re.M | re.S)
    if not m:
        sys.exit(f'{path}: no build_packages=(...) array')
    body = '\n'.join(line.split('#', 1)[0] for line in m.group(1).split('\n'))
    return body.split()


def main():
    if len(sys.argv) != 2:
        sys.exit('usage: check_debian_line.py SOURCE_DIR')
    src = sys.argv[1]
    readme = readme_packages(os.path.join(src, 'README.md'))
    cmake = cmake_packages(os.path.join(src, 'CMakeLists.txt'))
    deps = install_deps_packages(os.path.join(src, 'tools', 'install-deps'))
    if not cmake:
        sys.exit('CMakeLists.txt: no Debian package found (has the message changed?)')
    problems = []
    for p in sorted((cmake | TOOLCHAIN) - set(readme)):
        problems.append(f"README.md: the Install line misses '{p}' (configure needs it)")
    for p in sorted(set(readme) ^ set(deps)):
        where = 'README.md has' if p in readme else 'tools/install-deps build_packages has'
        problems.append(f"{where} '{p}' and the other does not")
    dups = sorted({p for p in readme if readme.count(p) > 1})
    problems += [f"README.md: '{p}' is listed twice" for p in dups]
    for line in problems:
        print(line)
    if problems:
        print('README.md Install line:', ' '.join(readme))
        return 1
    print(f'README Install line: {len(readme)} packages, as configure and tools/install-deps need')
    return 0


if __name__ == '__main__':
    sys.exit(main())
