#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""build_ffi.py - writes the C source of rdps._rdps_cffi, the binding's compiled half (cffi API
mode). Its declarations are rdps.h's and collect.h's own, not restated here: the C compiler
preprocesses collect.h (which includes rdps.h), and cffi is given what those two headers declare,
less what its parser has no use for (other headers, attributes, the static inline wrappers, whose
*_sized functions are declared, and function-like macros). A function, field, event or error
code added to rdps.h reaches Python with no edit here, and the module cannot disagree with it.

usage: build_ffi.py CC INCLUDE_DIR OUTPUT_C
  CC           the C compiler (its preprocessor: -E -dD)
  INCLUDE_DIR  the directory holding rdps/rdps.h (the public header as installed)
"""
import os
import re
import subprocess
import sys

import cffi

HERE = os.path.dirname(os.path.abspath(__file__))
COLLECT_H = os.path.join(HERE, "collect.h")
LINEMARKER = re.compile(r'^# \d+ "([^"]*)"')
OBJECT_MACRO = re.compile(r"^#define ([A-Za-z_]\w*) (\S.*)$")


def preprocess(cc, include_dir):
    """collect.h through the preprocessor, macro definitions kept (-dD), attributes erased."""
    cmd = [cc, "-E", "-dD", "-D__attribute__(x)=", "-I", include_dir, COLLECT_H]
    try:
        return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        detail = getattr(e, "stderr", "") or str(e)
        raise SystemExit("build_ffi.py: preprocessing collect.h failed: %s\n%s" % (" ".join(cmd), detail))


def own_lines(text, include_dir):
    """The lines that come from rdps's headers (rdps/*.h, collect.h), not the system's."""
    ours = (os.path.realpath(os.path.join(include_dir, "rdps")) + os.sep, os.path.realpath(COLLECT_H))
    kept, keep = [], False
    for line in text.splitlines():
        m = LINEMARKER.match(line)
        if m:
            path = os.path.realpath(m.group(1))
            keep = path.startswith(ours[0]) or path == ours[1]
        elif keep:
            kept.append(line)
    return kept


def without_inline_functions(text):
    """Drops every `static inline` definition: cffi declares the functions they call instead."""
    out, i = [], 0
    while True:
        start = text.find("static inline", i)
        if start < 0:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i:start])
        depth, k = 0, text.index("{", start)
        while True:
            depth += {"{": 1, "}": -1}.get(text[k], 0)
            if depth == 0:
                break
            k += 1
        i = k + 1


def declarations(lines):
    """cffi's cdef: the C declarations, then each integer macro as `#define NAME ...` (its value
    checked by the compiler). Include guards and the export macro are empty; strings are left out
    (cffi's `...` is for integers)."""
    code, macros = [], []
    for line in lines:
        if not line.startswith("#"):
            code.append(line)
            continue
        m = OBJECT_MACRO.match(line)
        if m and not m.group(2).startswith('"'):
            macros.append("#define %s ...\n" % m.group(1))
    return without_inline_functions("\n".join(code)) + "\n" + "".join(macros)


def error_names(header_text):
    """The error codes' names, from RDPS_ERROR_MAP itself, for the binding's exception table."""
    block = header_text.split("#define RDPS_ERROR_MAP(X)", 1)[1].split("enum rdps_error", 1)[0]
    names = re.findall(r"X\((E[A-Z]+),", block)
    if not names:
        raise SystemExit("build_ffi.py: no RDPS_ERROR_MAP in the header")
    return names


def main(argv):
    if len(argv) != 4:
        raise SystemExit(__doc__)
    cc, include_dir, output = argv[1], argv[2], argv[3]
    with open(os.path.join(include_dir, "rdps", "rdps.h"), encoding="utf-8") as f:
        names = error_names(f.read())
    ffi = cffi.FFI()
    cdef = declarations(own_lines(preprocess(cc, include_dir), include_dir))
    try:
        ffi.cdef(cdef)
    except cffi.CDefError as e:
        raise SystemExit("build_ffi.py: cffi cannot parse what rdps.h or collect.h declares "
                         "(strip it in build_ffi.py): %s" % e)
    ffi.cdef("static const char *const PYRDPS_ERROR_NAMES;")
    ffi.set_source(
        "rdps._rdps_cffi",
        '#include "collect.h"\n'
        'static const char *const PYRDPS_ERROR_NAMES = "%s";\n' % " ".join(names),
    )
    ffi.emit_c_code(output)


if __name__ == "__main__":
    main(sys.argv)
