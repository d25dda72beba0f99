#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""check_man.py - the man pages and --help document what the tools and the library really have.

  check_man.py tool BINARY PAGE.md SOURCE_DIR [COMMON_DIR]
      Every long option in the tool's getopt_long tables (the `struct option` arrays in
      SOURCE_DIR, macros such as TOOL_CTX_LONG_OPTIONS expanded from SOURCE_DIR and
      COMMON_DIR) appears in PAGE.md and in `BINARY --help`; --help prints on stdout and exits
      0; --version prints "NAME (rdps) X.Y.Z, librdps X.Y.Z, revision REV" and exits 0; a bad
      option exits 2 with the error on stderr only, and the page documents exit status 2.
  check_man.py api HEADER PAGE.md
      Every RDPS_EXPORT function of HEADER appears in PAGE.md (rdps(3)).
  check_man.py functions HEADER PAGES_DIR
      One page per public function (man rdps_pub_send): every function of HEADER (RDPS_EXPORT
      and static inline) is named in the NAME line of one PAGES_DIR/*.3.md, whose SYNOPSIS
      holds its prototype as HEADER declares it and which has RETURN VALUE and ERRORS sections.
      ERRORS lists codes as terms (a line "**RDPS_EXXX**"): a page may name only codes the
      rdps.h comments of its functions name, and must name every code they name (comments of
      functions that return no error code, void or never negative, do not count).
Prints one line per finding and exits 1 when there is any.
"""
import os
import re
import subprocess
import sys

OPTION_ENTRY = re.compile(r'\{\s*"([A-Za-z0-9][A-Za-z0-9-]*)"\s*,\s*(?:no|required|optional)_argument')
TABLE = re.compile(r'struct\s+option\s+\w+\s*\[\s*\]\s*=\s*\{')
IDENT = re.compile(r'\b([A-Z][A-Z0-9_]*)\b')


def read_sources(dirs):
    texts = {}
    for d in dirs:
        for name in sorted(os.listdir(d)):
            if name.endswith(('.c', '.h')):
                with open(os.path.join(d, name), encoding='utf-8') as f:
                    texts[os.path.join(d, name)] = f.read()
    return texts


def macro_bodies(texts):
    """#define NAME BODY (continuation lines joined) for every macro of the sources."""
    bodies = {}
    for text in texts.values():
        joined = text.replace('\\\n', ' ')
        for m in re.finditer(r'^\s*#\s*define\s+([A-Z][A-Z0-9_]*)\b(?!\()(.*)$', joined, re.M):
            bodies[m.group(1)] = m.group(2)
    return bodies


def table_bodies(text):
    """The initializer text of every `struct option X[] = {...};` in text."""
    for m in TABLE.finditer(text):
        depth, i = 1, m.end()
        while depth and i < len(text):
            depth += {'{': 1, '}': -1}.get(text[i], 0)
            i += 1
        yield text[m.end():i - 1]


def options_in(body, macros, seen=()):
    names = set(OPTION_ENTRY.findall(body))
    for ident in IDENT.findall(body):
        if ident in macros and ident not in seen:
            names |= options_in(macros[ident], macros, seen + (ident,))
    return names


def mentions(text, option):
    """--option as a word of its own; markdown writes it \\--option."""
    return re.search(r'(?<![\w-])\\?--' + re.escape(option) + r'(?![\w-])', text) is not None


def run(cmd):
    return subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=30)


def check_tool(binary, page, source_dir, common_dir=None):
    problems = []
    own = read_sources([source_dir])
    macros = macro_bodies(read_sources([d for d in (source_dir, common_dir) if d]))
    options = set()
    for text in own.values():
        for body in table_bodies(text):
            options |= options_in(body, macros)
    name = os.path.basename(binary)
    if not options:
        return [f'{name}: no getopt_long table found in {source_dir}']
    with open(page, encoding='utf-8') as f:
        page_text = f.read()
    help_run = run([binary, '--help'])
    if help_run.returncode != 0 or not help_run.stdout or help_run.stderr:
        problems.append(f'{name} --help: exit {help_run.returncode}, '
                        f'{len(help_run.stdout)} bytes on stdout, stderr {help_run.stderr!r}')
    for option in sorted(options):
        if not mentions(page_text, option):
            problems.append(f'{name}: --{option} is not in {os.path.basename(page)}')
        if not mentions(help_run.stdout, option):
            problems.append(f'{name}: --{option} is not in --help')
    version = run([binary, '--version'])
    want = re.compile(r'^' + re.escape(name) +
                      r' \(rdps\) \d+\.\d+\.\d+, librdps \d+\.\d+\.\d+, revision \S+\n$')
    if version.returncode != 0 or not want.match(version.stdout) or version.stderr:
        problems.append(f'{name} --version: exit {version.returncode}, stdout '
                        f'{version.stdout!r}, stderr {version.stderr!r}')
    bad = run([binary, '--no-such-option-xyz'])
    if bad.returncode != 2 or bad.stdout or not bad.stderr:
        problems.append(f'{name} --no-such-option-xyz: exit {bad.returncode} (want 2), stdout '
                        f'{bad.stdout!r}, stderr {bad.stderr!r}')
    if not re.search(r'^# EXIT STATUS$(.|\n)*^\*\*2\*\*$', page_text, re.M):
        problems.append(f'{name}: {os.path.basename(page)} does not document exit status 2')
    print(f'{name}: {len(options)} long options checked against --help and '
          f'{os.path.basename(page)}')
    return problems


def check_api(header, page):
    with open(header, encoding='utf-8') as f:
        text = f.read()
    functions = set()
    for line in text.replace('\\\n', ' ').splitlines():
        if line.lstrip().startswith('RDPS_EXPORT'):
            m = re.search(r'\b(rdps_\w+)\s*\(', line)
            if m:
                functions.add(m.group(1))
    if not functions:
        return [f'no RDPS_EXPORT function found in {header}']
    with open(page, encoding='utf-8') as f:
        page_text = f.read()
    problems = [f'{fn} is not documented in {os.path.basename(page)}'
                for fn in sorted(functions) if not re.search(r'\b' + fn + r'\b', page_text)]
    print(f'api: {len(functions)} exported functions checked against {os.path.basename(page)}')
    return problems


ERROR_CODE = re.compile(r'\bRDPS_E[A-Z]+\b')


def header_functions(header_text):
    """{name: (prototype, doc, returns_codes)} for every RDPS_EXPORT and static inline function.
    prototype: the declaration normalized to one line ("int rdps_x(int a);"); doc: the comment
    block right above it (declarations between them skipped: a group shares one comment)."""
    lines = header_text.split('\n')
    codes = set(re.findall(r'^\s*X\((E[A-Z]+),', header_text, re.M))
    funcs = {}
    for i, line in enumerate(lines):
        m = re.match(r'^(RDPS_EXPORT\s+|static inline\s+)(.*?\b(rdps_\w+)\s*\()', line)
        if not m:
            continue
        decl, j = line, i
        while not decl.rstrip().endswith((';', ')')) and j + 1 < len(lines):
            j += 1
            decl += ' ' + lines[j].strip()
        decl = re.sub(r'^(RDPS_EXPORT|static inline)\s+', '', decl.strip())
        decl = re.sub(r'\s+', ' ', decl).replace('( ', '(').rstrip(';') + ';'
        name = m.group(3)
        doc = re.sub(r'\s*\n\s*\*?\s*', ' ', comment_above(lines, i))  # one line: phrases whole
        returns_int = re.match(r'int\s', decl) is not None and 'never negative' not in doc
        named = {c for c in ERROR_CODE.findall(doc) if c[len('RDPS_'):] in codes}
        funcs[name] = (decl, named, returns_int)
    return funcs


def comment_above(lines, i):
    """The comment block (starting at column 0) nearest above line i."""
    j = i - 1
    while j >= 0:
        if lines[j].rstrip().endswith('*/'):
            k = j
            while k >= 0 and '/*' not in lines[k]:
                k -= 1
            if k >= 0 and lines[k].startswith('/*'):
                return '\n'.join(lines[k:j + 1])
            j = k - 1
            continue
        j -= 1
    return ''


def page_sections(text):
    sections, current = {}, None
    for line in text.split('\n'):
        m = re.match(r'^# (.+)$', line)
        if m:
            current = m.group(1).strip()
            sections[current] = ''
        elif current:
            sections[current] += line + '\n'
    return sections


def check_functions(header, pages_dir):
    funcs = header_functions(open(header, encoding='utf-8').read())
    if not funcs:
        return [f'no function found in {header}']
    problems, page_of = [], {}
    for name in sorted(os.listdir(pages_dir)):
        if not name.endswith('.3.md'):
            continue
        path = os.path.join(pages_dir, name)
        sections = page_sections(open(path, encoding='utf-8').read())
        for want in ('NAME', 'SYNOPSIS', 'DESCRIPTION', 'RETURN VALUE', 'ERRORS', 'SEE ALSO'):
            if want not in sections:
                problems.append(f'{name}: no {want} section')
        names_line = sections.get('NAME', '').strip().split(' - ')[0]
        names = [n.strip().replace('\\_', '_') for n in names_line.split(',') if n.strip()]
        if not names or names[0] != name[:-len('.3.md')]:
            problems.append(f'{name}: NAME must start with {name[:-len(".3.md")]}')
        synopsis = re.sub(r'\s+', ' ', sections.get('SYNOPSIS', '')).replace('( ', '(')
        listed = set(re.findall(r'^\*\*(RDPS_E[A-Z]+)\*\*\s*$', sections.get('ERRORS', ''), re.M))
        documented = set()
        for fn in names:
            if fn not in funcs:
                problems.append(f'{name}: {fn} is not a function of {os.path.basename(header)}')
                continue
            if fn in page_of:
                problems.append(f'{fn} has two pages: {page_of[fn]} and {name}')
            page_of[fn] = name
            decl, named, returns_int = funcs[fn]
            if decl not in synopsis:
                problems.append(f'{name}: SYNOPSIS lacks the prototype "{decl}"')
            if returns_int:
                documented |= named
        for code in sorted(listed - documented):
            problems.append(f'{name}: ERRORS names {code}, which the rdps.h comments of '
                            f'{", ".join(names)} do not')
        for code in sorted(documented - listed):
            problems.append(f'{name}: ERRORS lacks {code}, which rdps.h names for '
                            f'{", ".join(n for n in names if n in funcs and code in funcs[n][1])}')
    for fn in sorted(set(funcs) - set(page_of)):
        problems.append(f'{fn} has no page (tools/man/api/{fn}.3.md, or name it in one)')
    print(f'functions: {len(funcs)} functions of {os.path.basename(header)}, '
          f'{len(set(page_of.values()))} pages')
    return problems


def main(argv):
    if len(argv) >= 5 and argv[1] == 'tool':
        problems = check_tool(*argv[2:6])
    elif len(argv) == 4 and argv[1] == 'api':
        problems = check_api(argv[2], argv[3])
    elif len(argv) == 4 and argv[1] == 'functions':
        problems = check_functions(argv[2], argv[3])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    for p in problems:
        print('FAIL: ' + p)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
