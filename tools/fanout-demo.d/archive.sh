# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=bash
# archive.sh - the recorder and the replay of tools/fanout-demo --record, sourced by the demo
# (processes of one host) and by role.sh (guests): the same commands (OUT/record.cmd,
# OUT/replay.cmd, OUT/replay_book.cmd) leave the same files (OUT/recorder.*, OUT/replay.*,
# OUT/replay_book.*) wherever they run. Each status is saved even under `set -e`.

# archive_record_start OUT DIR: the recorder of every channel, writing DIR, in the background
# (its pid in $archive_recorder).
archive_record_start() {
    local out=$1 dir=$2 cmd
    read -r -a cmd <"$out/record.cmd"
    "${cmd[@]}" --dir "$dir" >"$out/recorder.json" 2>"$out/recorder.err" &
    archive_recorder=$!
    archive_stat=${cmd[0]%/rdps-record/rdps-record}/rdps-stat/rdps-stat
}

# archive_record_stop OUT: stops the recorder (SIGTERM: it closes its recording), called once
# every book has ended, when it has received as many messages as the feed sent packets
# (OUT/feed.json; its live counters through rdps-stat), at most 60 s later: a recorder on an
# emulated CPU it shares with a book trailed the feed by seconds (~390 packets/s against the
# feed's 1 310 on rxe), and stopping it with the books cut its recording short. Saves its exit
# status; a recorder still short after 60 s is stopped too, and the report says how short.
archive_record_stop() {
    local rc=0 want got
    want=$(python3 -c 'import json, sys
print(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])["datagrams"])' \
        "$1/feed.json" 2>/dev/null) || want=
    if [ -n "$want" ] && [ -x "$archive_stat" ]; then
        for _ in $(seq 120); do
            got=$("$archive_stat" --pid "$archive_recorder" --json 2>/dev/null | python3 -c 'import json, sys
print(json.loads(sys.stdin.readline())["contexts"][0]["counters"]["msgs_delivered"])' \
                2>/dev/null) || got=0
            [ "${got:-0}" -ge "$want" ] && break
            kill -0 "$archive_recorder" 2>/dev/null || break
            sleep 0.5
        done
    fi
    kill -TERM "$archive_recorder"
    wait "$archive_recorder" || rc=$?
    echo "$rc" >"$1/recorder.rc"
}

# archive_replay OUT DIR: replays the recording in DIR (rdps-replay --fast); saves its status.
archive_replay() {
    local out=$1 dir=$2 cmd rc=0
    read -r -a cmd <"$out/replay.cmd"
    "${cmd[@]}" --dir "$dir" >"$out/replay.json" 2>"$out/replay.err" || rc=$?
    echo "$rc" >"$out/replay.rc"
}

# archive_replay_book OUT: the fresh book the replay feeds, until it has ended every channel,
# or stopped once the replay failed (OUT/replay.rc not 0: nothing more will come); saves its
# status. Runs where the replay runs or on another host sharing OUT.
archive_replay_book() {
    local out=$1 cmd book rc=0
    read -r -a cmd <"$out/replay_book.cmd"
    "${cmd[@]}" >"$out/replay_book.json" 2>"$out/replay_book.err" &
    book=$!
    while kill -0 "$book" 2>/dev/null; do
        if [ -s "$out/replay.rc" ] && [ "$(cat "$out/replay.rc")" != 0 ]; then
            kill -TERM "$book" 2>/dev/null
            break
        fi
        sleep 0.5
    done
    wait "$book" || rc=$?
    echo "$rc" >"$out/replay_book.rc"
}
