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
}

# archive_record_stop OUT: stops the recorder (SIGTERM: it closes its recording) once every book
# has ended and the feed has drained to it; saves its exit status.
archive_record_stop() {
    local rc=0
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
