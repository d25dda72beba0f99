#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# archive_tools.sh - rdps-archive, rdps-replay and rdps-record on a known recording (make_recording):
# the catalog, the counts, verify (and verify failing on a flipped byte), dump, the pcapng export
# decoded by tshark with the rdps dissector, a replay (all, and a time window) on the loopback
# device, and the tools' usage errors.
# usage: archive_tools.sh BUILD_DIR MAKE_RECORDING RDPS_LUA
set -u
build=${1:?usage: archive_tools.sh BUILD_DIR MAKE_RECORDING RDPS_LUA}
make_recording=${2:?} lua=${3:?}
archive=$build/tools/rdps-archive/rdps-archive
replay=$build/tools/rdps-replay/rdps-replay
record=$build/tools/rdps-record/rdps-record
work=$(mktemp -d "${TMPDIR:-/tmp}/rdps-archive-tools-XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok:   $*"; }
# expect_exit WANT CMD...: runs CMD, checks its exit status.
expect_exit() {
    local want=$1 rc
    shift
    "$@" >"$work/out" 2>"$work/err"
    rc=$?
    if [ "$rc" -ne "$want" ]; then
        fail "$* exited $rc, want $want: $(head -c 300 "$work/err")"
        return 1
    fi
    return 0
}
# json_get FILE KEY: the number or string of a top-level key of a one-line JSON document.
json_get() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

dir=$work/rec
"$make_recording" "$dir" 2000 || { echo "FAIL: make_recording"; exit 1; }

if expect_exit 0 "$archive" list "$dir" --json && python3 - "$work/out" <<'PY'; then
import json, sys
d = json.load(open(sys.argv[1]))
r = d["recordings"]
assert len(r) == 1 and r[0]["state"] == "stopped" and r[0]["messages"] == 2000, r
assert r[0]["spec"] == "topics arc.a,arc.b" and r[0]["loss_events"] == 1, r
PY
    ok "list: one stopped recording of 2000 messages"
else
    fail "list: $(cat "$work/out")"
fi

if expect_exit 0 "$archive" info "$dir" --json && python3 - "$work/out" <<'PY'; then
import json, sys
d = json.load(open(sys.argv[1]))
t = {x["topic"]: x for x in d["topics"]}
assert d["messages"] == 2000 and d["bad_chunks"] == 0, d
assert t["arc.a"]["messages"] == 1000 and t["arc.b"]["messages"] == 1000, t
assert t["arc.a"]["sessions"] == 1 and t["arc.a"]["loss_events"] == 1, t
assert t["arc.a"]["lost_datagrams"] == 3 and t["arc.b"]["loss_events"] == 0, t
PY
    ok "info: 1000 messages a topic, one session each, the loss on arc.a"
else
    fail "info: $(cat "$work/out")"
fi

expect_exit 0 "$archive" verify "$dir" && ok "verify: $(cat "$work/out")"
if expect_exit 0 "$archive" dump "$dir" -c 5 -t arc.b &&
    [ "$(grep -c ' arc.b session 00001001 ' "$work/out")" -eq 5 ]; then
    ok "dump -c 5 -t arc.b"
else
    fail "dump: $(cat "$work/out")"
fi

# Export: every message as DATA datagrams (the 20 messages of 6000 bytes in two at --mtu 4096).
expect_exit 0 "$archive" export "$dir" -o "$work/rec.pcapng" && ok "export: $(cat "$work/err")"
if command -v tshark >/dev/null; then
    tshark -n -X "lua_script:$lua" -r "$work/rec.pcapng" -T fields -e rdps.type -e rdps.flags.begin \
        -e rdps.topic -e _ws.malformed -e _ws.expert.severity >"$work/tshark.txt" 2>"$work/tshark.err"
    frames=$(wc -l <"$work/tshark.txt")
    data=$(awk -F'\t' '$1 == 1' "$work/tshark.txt" | wc -l)
    begins=$(awk -F'\t' '$1 == 1 && ($2 == "True" || $2 == "1")' "$work/tshark.txt" | wc -l)
    bad=$(awk -F'\t' '$4 != "" || $5 ~ /(8388608|error)/' "$work/tshark.txt" | wc -l)
    if [ "$frames" -eq 2020 ] && [ "$data" -eq 2020 ] && [ "$begins" -eq 2000 ] && [ "$bad" -eq 0 ]; then
        ok "tshark decodes 2020 rdps DATA frames, 2000 message starts, none malformed"
    else
        fail "tshark: $frames frames, $data DATA, $begins BEGIN, $bad malformed: $(head -3 "$work/tshark.txt") $(head -3 "$work/tshark.err")"
    fi
else
    echo "skip: tshark not installed (Debian: tshark): the export is not decoded"
fi

# Replay on the loopback device (no subscriber in this process: the figures are the sends).
if expect_exit 0 "$replay" --dir "$dir" --fast -d loopback --json -q &&
    [ "$(json_get "$work/out" messages)" -eq 2000 ] && [ "$(json_get "$work/out" loss_markers)" -eq 1 ]; then
    ok "replay --fast: 2000 messages, the loss marker reported"
else
    fail "replay: $(cat "$work/out" "$work/err")"
fi
# Messages are 1 ms apart from +0: [+1 s, +1.5 s] holds 501 of them; at 10x it takes ~50 ms.
if expect_exit 0 "$replay" --dir "$dir" --speed 10 --from-time +1 --to-time +1.5 -d loopback --json -q &&
    [ "$(json_get "$work/out" messages)" -eq 501 ]; then
    ok "replay of a time window at 10x: 501 messages"
else
    fail "replay window: $(cat "$work/out" "$work/err")"
fi
# arc.b's session 0x1001 from datagram 500: its messages 491..999 (every 50th took two datagrams).
if expect_exit 0 "$replay" --dir "$dir" --fast --from-seq arc.b:1001:500 -t arc.b --rename arc.b=copy.b \
    -d loopback --json -q && [ "$(json_get "$work/out" messages)" -eq 509 ]; then
    ok "replay --from-seq of one topic, renamed"
else
    fail "replay --from-seq: $(cat "$work/out" "$work/err")"
fi

# Replay to a reliable subscriber in another process (the local device): under 20 % receive
# loss it stays until the subscriber has every message; a subscriber that receives nothing
# keeps it the --drain-timeout, then it fails (exit 3), not leaving with success.
sub=$build/tools/rdsub/rdsub
export RDPS_LOCAL_DIR=$work/local-device RDPS_STAT=0
"$sub" -d local -t local.b --reliable -c 509 --loss-rx 20% --timeout 60 --json -q \
    >"$work/sub.out" 2>"$work/sub.err" &
sub_pid=$!
if expect_exit 0 "$replay" --dir "$dir" --fast --from-seq arc.b:1001:500 -t arc.b \
    --rename arc.b=local.b -d local --wait-subs 1 --drain-timeout 30 --linger 0 --json -q &&
    wait "$sub_pid" && [ "$(json_get "$work/sub.out" messages)" -eq 509 ] &&
    [ "$(json_get "$work/sub.out" loss_events)" -eq 0 ]; then
    ok "replay to a reliable subscriber losing 20 %: 509 messages, none lost"
else
    fail "replay under loss: $(cat "$work/out" "$work/err" "$work/sub.out" "$work/sub.err")"
fi
"$sub" -d local -t deaf.b --reliable -c 509 --loss-rx 100% --timeout 30 -q \
    >/dev/null 2>&1 &
sub_pid=$!
if expect_exit 3 "$replay" --dir "$dir" --fast --from-seq arc.b:1001:500 -t arc.b \
    --rename arc.b=deaf.b -d local --wait-subs 1 --drain-timeout 2 --linger 0 -q &&
    grep -q "still behind after the 2 s drain timeout" "$work/err"; then
    ok "replay to a subscriber that receives nothing: exit 3 after the drain timeout"
else
    fail "replay to a deaf subscriber: $(cat "$work/err")"
fi
kill "$sub_pid" 2>/dev/null
wait "$sub_pid" 2>/dev/null
unset RDPS_LOCAL_DIR

# Usage errors and refusals.
expect_exit 2 "$archive" frobnicate "$dir" && ok "rdps-archive: unknown command, exit 2"
expect_exit 4 "$archive" list "$work/nothing-here" && ok "rdps-archive list of no catalog: exit 4"
expect_exit 2 "$replay" --fast && ok "rdps-replay without --dir: exit 2"
expect_exit 2 "$replay" --dir "$dir" --from-time yesterday -d loopback && ok "rdps-replay: a bad time, exit 2"
expect_exit 2 "$record" -t a.b && ok "rdps-record without --dir: exit 2"
expect_exit 2 "$record" --dir "$dir" && ok "rdps-record with nothing to record: exit 2"
if expect_exit 0 "$record" --dir "$dir" -t arc.c -d loopback --timeout 1 --json -q &&
    [ "$(json_get "$work/out" recording)" -eq 2 ]; then
    ok "rdps-record: a second recording (id 2)"
else
    fail "rdps-record: $(cat "$work/out" "$work/err")"
fi

# A directory others may write into is not believed (its recordings could be forged).
chmod 777 "$dir"
if expect_exit 4 "$archive" list "$dir" && grep -q "writable by others" "$work/err"; then
    ok "a directory others can write is refused: $(head -1 "$work/err")"
fi
chmod 700 "$dir"

# A flipped byte in a chunk: verify says so and exits 1.
seg=$dir/rec-00000001/seg-00000000.rdpa
printf '\xff' | dd of="$seg" bs=1 seek=1000 conv=notrunc status=none
if expect_exit 1 "$archive" verify "$dir" 1; then
    ok "verify finds a flipped byte: $(head -1 "$work/err")"
fi

[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
echo "archive_tools: all checks passed"
