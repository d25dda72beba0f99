#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# datagram-walk.sh - follows one datagram through the receive path source line by source line (gdb) and counts the files it visits.
# Usage: tests/bench/datagram-walk.sh DEBUG_BUILD_DIR [SCENARIO...] [--steps N (400)] [--trace]
# DEBUG_BUILD_DIR: a build with -DCMAKE_BUILD_TYPE=Debug (-O0: every inline function is a call,
# every source line a step). Scenarios (default: all):
#   unreliable  rdps__receive_datagram of the 1000th 64-byte message of pubsub_bench send
#   reliable    the same on a reliable publisher and subscriber (pubsub_bench reliable-send)
#   poll        one rdps_ctx_poll of the subscriber with 32 reliable datagrams queued
#   repair      rdps__reasm_input of a repair filling a hole with 12 messages parked behind it
#               (engine_bench reliable-loss, its 200th repair)
#   repair-frag the same with 1 KiB messages in 1024-byte datagrams (two fragments each)
# From the function's entry until it returns, or N steps, gdb `step`s; each step's source file is
# recorded. A "stay" is a run of consecutive steps in one file, a "return" a stay in a file the
# walk had already left. Per module of core/proto (a file and its header together): the stays, and
# the calls back into a module already on the stack below (a call cycle at run time, direct or
# through a callback). --trace prints the files in order. Needs gdb.
set -eu
build=${1:?usage: datagram-walk.sh DEBUG_BUILD_DIR [SCENARIO...] [--steps N] [--trace]}
shift
steps=400
trace=0
scenarios=()
while [ $# -gt 0 ]; do
    case "$1" in
    --steps) steps=$2; shift 2 ;;
    --trace) trace=1; shift ;;
    *) scenarios+=("$1"); shift ;;
    esac
done
[ ${#scenarios[@]} -gt 0 ] || scenarios=(unreliable reliable poll repair repair-frag)
command -v gdb >/dev/null || { echo "datagram-walk: gdb not installed" >&2; exit 1; }
grep -q 'CMAKE_BUILD_TYPE:STRING=Debug' "$build/CMakeCache.txt" 2>/dev/null ||
    echo "datagram-walk: $build is not a Debug build: inlined calls and merged lines hide steps" >&2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/walk.py" <<'EOF'
import gdb, os
root = os.getcwd() + "/"
steps, hits, trace, name = (int(os.environ["WALK_STEPS"]), int(os.environ["WALK_HIT"]),
                            os.environ["WALK_TRACE"] == "1", os.environ["WALK_NAME"])
gdb.execute("set pagination off")
gdb.execute("set confirm off")
gdb.execute("set print thread-events off")
gdb.execute(f"break {os.environ['WALK_FUNC']}")
if os.environ.get("WALK_COND"):
    gdb.execute(f"condition 1 {os.environ['WALK_COND']}")
gdb.execute(f"ignore 1 {hits - 1}")
gdb.execute("run", to_string=True)
gdb.execute("delete")
caller = gdb.selected_frame().older()

def module(path):
    """core/proto/rdps_rx_track.h -> rdps_rx_track (a file and its header are one module)."""
    return os.path.splitext(os.path.basename(path))[0] if path.startswith("core/proto/") else None

def frame_file(frame):
    sal = frame.find_sal()
    return os.path.relpath(sal.symtab.fullname(), root) if sal.symtab else ""

files, reentries = [], []
prev_depth = None
for _ in range(steps):
    frame = gdb.selected_frame()
    if frame == caller:
        break
    sal = frame.find_sal()
    path = sal.symtab.fullname() if sal.symtab else ""
    if not path.startswith(root):  # libc (memcpy, memcmp): not ours, step back out
        gdb.execute("finish", to_string=True)
        continue
    rel = os.path.relpath(path, root)
    files.append(rel)
    # The modules of core/proto on the stack below this frame: a call into one of them is a
    # call back up (a cycle at run time, directly or through a callback).
    below, f, depth = [], frame.older(), 1
    while f is not None and f != caller:
        below.append(module(frame_file(f)))
        f, depth = f.older(), depth + 1
    mod = module(rel)
    if prev_depth is not None and depth > prev_depth and mod is not None and \
            below and below[0] != mod and mod in below[1:]:
        reentries.append(f"{below[0]} -> {mod} ({frame.name()})")
    prev_depth = depth
    gdb.execute("step", to_string=True)
stays = [f for i, f in enumerate(files) if i == 0 or files[i - 1] != f]
left, returns = set(), 0
for i, f in enumerate(stays):
    if f in left:
        returns += 1
    if i > 0:
        left.add(stays[i - 1])
done = "returned" if gdb.selected_frame() == caller else f"stopped at {steps}"
print(f"WALK {name}: {len(files)} steps ({done}), {len(stays)} stays in {len(set(files))} files, "
      f"{returns} returns to a file already left")
proto = sorted({f for f in files if f.startswith("core/proto/")})
mods = [module(f) for f in files if module(f) is not None]
mstays = [m for i, m in enumerate(mods) if i == 0 or mods[i - 1] != m]
print(f"WALK {name} modules of core/proto (a file and its header): {len(set(mods))}, "
      f"{len(mstays)} stays; calls back into a module already on the stack: {len(reentries)}"
      + (f" ({'; '.join(sorted(set(reentries)))})" if reentries else ""))
print(f"WALK {name} files: {', '.join(sorted(set(files)))}")
print(f"WALK {name} core/proto: {len(proto)} files: {', '.join(os.path.basename(f) for f in proto)}")
if trace:
    print(f"WALK {name} stays: {' > '.join(os.path.basename(f) for f in stays)}")
gdb.execute("kill")
EOF

walk() {
    local name=$1 func=$2 hit=$3 cond=$4
    shift 4
    WALK_STEPS=$steps WALK_HIT=$hit WALK_TRACE=$trace WALK_NAME=$name WALK_FUNC=$func \
        WALK_COND=$cond gdb -q -batch -x "$tmp/walk.py" --args "$@" 2>"$tmp/err" | grep '^WALK' ||
        { cat "$tmp/err" >&2; exit 1; }
}

cd "$(dirname "$0")/../.."
for s in "${scenarios[@]}"; do
    case "$s" in
    unreliable) walk "$s" rdps__receive_datagram 1000 "" "$build/tests/bench/pubsub_bench" 2000 send 32 64 ;;
    reliable) walk "$s" rdps__receive_datagram 1000 "" "$build/tests/bench/pubsub_bench" 2000 reliable-send 32 64 ;;
    poll) walk "$s" bench_poll_subscriber 40 "" "$build/tests/bench/pubsub_bench" 2000 reliable-send 32 64 ;;
    repair) walk "$s" rdps__reasm_input 200 '(buf[2] & 4) != 0' "$build/tests/bench/engine_bench" 10000 64 1024 1 reliable-loss ;;
    repair-frag) walk "$s" rdps__reasm_input 200 '(buf[2] & 4) != 0' "$build/tests/bench/engine_bench" 10000 1024 1024 1 reliable-loss ;;
    *) echo "datagram-walk: unknown scenario '$s'" >&2; exit 2 ;;
    esac
done
