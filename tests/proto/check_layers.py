#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
# check_layers.py - core/proto's file-level call graph from the compiler: fails on a call cycle or an unexplained long file.
"""
Usage: check_layers.py [--cc CC] [--graph] [--max-lines N] SOURCE_DIR

Compiles every core/proto/*.c of SOURCE_DIR with `CC -O0 -fcallgraph-info` (GCC 10 and later;
-O0 so that inline functions stay the calls they are in the source; gcc when CC has no such
option) and builds the call graph
between core/proto's files. A file and the header of the same name are one node (rdps_ranges.c
and rdps_ranges.h); a function belongs to the file that defines it, an inline function of a
header to that header. Calls through function pointers (the callbacks a layer is given at init)
are not edges: they are how a lower layer tells an upper one. Calls outside core/proto (libc,
core/util) are not either.

Fails (exit 1) when two files call each other, directly or around a loop (a strongly connected
component of more than one file), naming one call of each edge of the cycle; and when a file is
longer than --max-lines (600) without saying why in its first ten lines (a comment containing
"Over 600 lines:"). --graph prints the graph (edges with the number of calls) and, per file, its
depth in the call order (0: calls no other file). Exit 77 when the compiler has no
-fcallgraph-info (the test is then skipped).
"""
import argparse
import collections
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

NODE = re.compile(r'node: \{ title: "([^"]+)" label: "([^"\\]+)\\n([^":]+):\d+:\d+"( shape : ellipse)?')
EDGE = re.compile(r'edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)" label: "([^":]+):(\d+)')


def module_of(path):
    """core/proto/rdps_ranges.c and .h -> rdps_ranges; None outside core/proto."""
    norm = path.replace("\\", "/")
    if "core/proto/" not in norm:
        return None
    base = os.path.basename(norm)
    stem, ext = os.path.splitext(base)
    return stem if ext in (".c", ".h") else None


def compile_callgraphs(cc, src, out):
    sources = sorted(glob.glob(os.path.join(src, "core/proto/*.c")))
    if not sources:
        sys.exit(f"check_layers: no core/proto/*.c under {src}")
    flags = ["-std=c11", "-O0", "-fcallgraph-info", "-D_GNU_SOURCE", "-DRDPS_BUILDING_LIBRARY",
             "-I", "core/proto", "-I", "core/util", "-I", "pubsub/include"]
    for path in sources:
        rel = os.path.relpath(path, src)
        obj = os.path.join(out, os.path.basename(rel) + ".o")
        run = subprocess.run([cc, *flags, "-c", rel, "-o", obj, "-dumpdir", out + "/"], cwd=src,
                             capture_output=True, text=True)
        if run.returncode != 0:
            if "callgraph-info" in run.stderr:
                if cc != "gcc" and shutil.which("gcc"):
                    return compile_callgraphs("gcc", src, out)  # clang builds: ask gcc
                print(f"check_layers: {cc} has no -fcallgraph-info: skipped", file=sys.stderr)
                sys.exit(77)
            sys.exit(f"check_layers: {cc} failed on {rel}:\n{run.stderr}")
    cis = glob.glob(os.path.join(out, "*.ci"))
    if len(cis) != len(sources):
        sys.exit(f"check_layers: {len(cis)} call graph files for {len(sources)} sources")
    return cis


def read_graph(cis):
    """Returns {(caller module, callee module): [(caller fn, callee fn, call site)]}."""
    defined = {}  # global function name -> defining module
    units = []
    for ci in cis:
        nodes, edges = {}, []
        with open(ci) as f:
            for line in f:
                m = NODE.match(line)
                if m:
                    title, name, loc, ext = m.groups()
                    nodes[title] = (name, loc, ext is not None)
                    if ext is None and ":" not in title:
                        defined[name] = module_of(loc)
                    continue
                m = EDGE.match(line)
                if m:
                    edges.append(m.groups())
        units.append((nodes, edges))
    graph = collections.defaultdict(list)
    for nodes, edges in units:
        for source, target, site_file, site_line in edges:
            if target == "__indirect_call" or source not in nodes or target not in nodes:
                continue
            s_name, s_loc, _ = nodes[source]
            t_name, t_loc, t_ext = nodes[target]
            s_mod = module_of(s_loc)
            t_mod = defined.get(t_name, module_of(t_loc)) if t_ext else module_of(t_loc)
            if s_mod is None or t_mod is None or s_mod == t_mod:
                continue
            graph[(s_mod, t_mod)].append((s_name, t_name, f"{site_file}:{site_line}"))
    return graph


def components(nodes, succ):
    """Tarjan's strongly connected components."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in succ.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(comp)

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def cycle_in(comp, succ):
    """One cycle through the component's first node (a shortest one, by breadth first)."""
    members = set(comp)
    start = sorted(comp)[0]
    prev = {start: None}
    queue = collections.deque([start])
    while queue:
        v = queue.popleft()
        for w in sorted(succ.get(v, ())):
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if w in members and w not in prev:
                prev[w] = v
                queue.append(w)
    return [start]


def long_files(src, limit):
    bad = []
    for path in sorted(glob.glob(os.path.join(src, "core/proto/*.[ch]"))):
        with open(path) as f:
            lines = f.readlines()
        if len(lines) > limit and not any("Over 600 lines:" in l for l in lines[:10]):
            bad.append((os.path.relpath(path, src), len(lines)))
    return bad


def main():
    ap = argparse.ArgumentParser(description="core/proto's file-level call graph")
    ap.add_argument("--cc", default=os.environ.get("CC", "gcc"))
    ap.add_argument("--graph", action="store_true", help="print the graph")
    ap.add_argument("--max-lines", type=int, default=600)
    ap.add_argument("source_dir")
    args = ap.parse_args()
    src = os.path.abspath(args.source_dir)
    with tempfile.TemporaryDirectory() as out:
        graph = read_graph(compile_callgraphs(args.cc, src, out))
    succ = collections.defaultdict(set)
    nodes = set()
    for (a, b) in graph:
        succ[a].add(b)
        nodes.update((a, b))
    for path in glob.glob(os.path.join(src, "core/proto/*.c")):
        nodes.add(module_of(path))
    comps = [c for c in components(nodes, succ) if len(c) > 1]
    if args.graph:
        depth = {}

        def depth_of(v, seen=()):
            if v in depth:
                return depth[v]
            if v in seen:
                return 0  # inside a cycle
            d = 1 + max((depth_of(w, seen + (v,)) for w in succ.get(v, ())), default=-1)
            depth[v] = d
            return d

        print(f"core/proto call graph: {len(nodes)} files, {len(graph)} edges "
              f"(caller -> callee: calls)")
        for (a, b) in sorted(graph):
            print(f"  {a} -> {b}: {len(graph[(a, b)])}")
        print("depth (0: calls no other file of core/proto):")
        for v in sorted(nodes, key=lambda v: (-depth_of(v), v)):
            print(f"  {depth_of(v)} {v}")
    status = 0
    for comp in comps:
        status = 1
        cycle = cycle_in(comp, succ)
        print(f"check_layers: {len(comp)} files call each other: {', '.join(sorted(comp))}")
        print(f"  a cycle: {' -> '.join(cycle)}")
        for a, b in zip(cycle, cycle[1:]):
            caller, callee, site = graph[(a, b)][0]
            more = len(graph[(a, b)]) - 1
            print(f"    {a} -> {b}: {caller}() calls {callee}() at {site}"
                  + (f" (and {more} more)" if more else ""))
    for path, n in long_files(src, args.max_lines):
        status = 1
        print(f"check_layers: {path} has {n} lines (over {args.max_lines}) and no "
              f"'Over 600 lines:' reason in its first ten lines")
    if status == 0:
        print(f"check_layers: {len(nodes)} files of core/proto, {len(graph)} call edges, no cycle")
    return status


if __name__ == "__main__":
    sys.exit(main())
