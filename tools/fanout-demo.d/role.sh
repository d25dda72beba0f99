#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# role.sh - one guest's part in tools/fanout-demo: guest 0 measures the baselines against guest 1
# and runs md-feed, every other guest runs md-book. The commands come from OUT/feed.cmd and
# OUT/book.cmd. With --record (OUT/record), guest 1 also runs the recorder (OUT/record.cmd) into
# its tmpfs and, once the books have ended, replays the recording (OUT/replay.cmd) into a fresh
# book on guest 0 (OUT/replay_book.cmd). The baselines wait the way the md tools do (event mode: they sleep on the
# completion channel), so the report compares like with like: ib_send_lat -e (perftest) and
# rdps-ping --event (rdps's transport, with the run's key when it has one).
# usage: role.sh OUT   (inside tools/rxe-vm; RDPS_VM_* describe the guest)
set -u
out=${1:?usage: role.sh OUT}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
i=${RDPS_VM_INDEX:?run inside tools/rxe-vm}
read -r -a ips <<<"$RDPS_VM_IPS"
# shellcheck source=../../tests/bench/guest-lib.sh
. "$here/../../tests/bench/guest-lib.sh"
# shellcheck source=archive.sh
. "$here/archive.sh"
lat=(ib_send_lat -c UD -e -d "$RDPS_VM_DEV" -x "$(roce_v2_gid_index "$RDPS_VM_DEV")" -s 64 -n 2000 -F)
read -r -a feed_cmd <"$out/feed.cmd"
read -r -a book_cmd <"$out/book.cmd"
# rdps-ping beside md-feed in the build tree: BUILD/tools/md-feed/md-feed.
ping=("$(dirname "$(dirname "${feed_cmd[0]}")")/rdps-ping/rdps-ping" -d "$RDPS_VM_DEV" --event
      --port 7490)
if [ -f "$out/domain.key" ]; then ping+=(--key-file "$out/domain.key"); fi
# perftest's UD latency test waits forever for a lost datagram: no baseline on an impaired wire.
netem=$(cat "$out/netem" 2>/dev/null)
record=0
[ -e "$out/record" ] && record=1
recording=/tmp/rdps-demo-recording

if [ "$i" -eq 0 ]; then
    uname -r >"$out/kernel"
    if [ -n "$netem" ]; then
        echo "not measured: perftest's UD latency test stalls on a lost datagram (netem $netem)" \
            >"$out/baseline.txt"
        sleep 3
    else
        sleep 3 # guest 1's ib_send_lat server is listening by then
        timeout 60 "${lat[@]}" "${ips[1]}" >"$out/baseline.txt" 2>&1
    fi
    sleep 2 # then guest 1's rdps-ping listener
    # One ping a millisecond, 1 000 of them (a lost one waits 20 ms); half the round trip is the
    # baseline.
    timeout 60 "${ping[@]}" "${ips[1]}:7490" -n 1000 -i 1000 --wait-ms 20 -s 64 --json \
        >"$out/ping.json" 2>"$out/ping.err"
    touch "$out/feed.started"
    # The same ping under the run's load: 1 s of it, once the flow is under way.
    { sleep 4 && timeout 60 "${ping[@]}" "${ips[1]}:7490" -n 1000 -i 1000 --wait-ms 20 -s 64 --json \
        >"$out/ping_loaded.json" 2>"$out/ping_loaded.err"; } &
    loaded=$!
    "${feed_cmd[@]}" >"$out/feed.json" 2>"$out/feed.err"
    echo $? >"$out/feed.rc"
    wait "$loaded"
    # The book fed from the recording (guest 1 replays it once the live books have ended).
    [ "$record" = 1 ] && archive_replay_book "$out"
    exit 0
fi
if [ "$i" -eq 1 ] && [ "$record" = 1 ]; then
    rm -rf "$recording"
    archive_record_start "$out" "$recording"
fi
if [ "$i" -eq 1 ]; then
    [ -z "$netem" ] && timeout 60 "${lat[@]}" >/dev/null 2>&1
    timeout 600 "${ping[@]}" --listen --timeout "$(($(cat "$out/duration") + 40))" \
        >/dev/null 2>&1 &
fi
# --late-book: the last book starts once the feed has been running that long.
if [ "$(cat "$out/late_book" 2>/dev/null)" = "$i" ]; then
    for _ in $(seq 1200); do [ -e "$out/feed.started" ] && break; sleep 0.1; done
    sleep "$(cat "$out/late_seconds")"
fi
# --no-multicast: the books know the feed's address, discovery's seed; the rest they learn.
seeds=()
[ -e "$out/no_multicast" ] && seeds=(--peers "${ips[0]}")
# --from-archive: the late book replays each channel from guest 1's recorder, then goes live.
if [ "$(cat "$out/late_book" 2>/dev/null)" = "$i" ] && [ -e "$out/from_archive" ]; then
    seeds+=(--from-archive)
fi
"${book_cmd[@]}" --book-id "$i" --symbol-digests "$out/book$i.sym" "${seeds[@]}" \
    >"$out/book$i.json" 2>"$out/book$i.err" &
book=$!
# A book ends when every channel ended; if the feed is gone without that, stop it after 30 s.
while kill -0 "$book" 2>/dev/null; do
    if [ -s "$out/feed.rc" ]; then
        for _ in $(seq 300); do kill -0 "$book" 2>/dev/null || break; sleep 0.1; done
        kill -TERM "$book" 2>/dev/null
        break
    fi
    sleep 0.5
done
wait "$book"
echo $? >"$out/book$i.rc"
if [ "$i" -eq 1 ] && [ "$record" = 1 ]; then
    # Every live book has ended (the late one serves itself from the recorder: wait for it too)
    # and the feed drained to the recorder: stop it, then replay what it wrote.
    for b in $(seq 2 $((RDPS_VM_COUNT - 1))); do
        for _ in $(seq 1200); do [ -s "$out/book$b.rc" ] && break; sleep 0.25; done
    done
    archive_record_stop "$out"
    archive_replay "$out" "$recording"
fi
