#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# fanout_check.sh - tools/fanout-demo's verdict fails on every broken result set: a book whose
# digest differs from the feed's, one that exited 0 while messages are missing, one that did not
# end every channel, one that exited non-zero, a missing book, a feed that failed or whose
# generator refused its own messages; with --record, a recording with a hole or a replayed book
# whose digest differs; with --from-archive, a late book whose history timed out; and passes on
# good sets.
# usage: fanout_check.sh   (no device needed: it feeds saved results to fanout-demo --check)
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
demo="$here/../../tools/fanout-demo"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

# make_results DIR [KEY=VALUE...]: a good run of a feed and two books, then the overrides:
# feed_rc, self_check, book2_rc, book2_digest, book2_missing, book2_ended, book2_refused,
# book2_late (book 2 was started late: its channels caught up from this many snapshots),
# book2_named (of its 7000 symbols with state, this many got a name); record=1 (a recorder and
# the book fed from its recording: rec_messages, rec_loss, replay_digest), book2_history=LIVE:TIMEOUTS
# (book 2 started late from the recording).
make_results() {
    local dir=$1 feed_rc=0 self_check=0 book2_rc=0 book2_digest=00c0ffee00c0ffee book2_missing=0
    local book2_ended=8 book2_refused=0 book2_late="" book2_named=7000 record=0 rec_messages=500
    local rec_loss=0 replay_digest=00c0ffee00c0ffee book2_history=""
    shift
    for kv in "$@"; do local "$kv"; done
    mkdir -p "$dir"
    echo 2 >"$dir/books"
    echo "$feed_rc" >"$dir/feed.rc"
    echo "{\"tool\":\"md-feed\",\"digest\":\"00c0ffee00c0ffee\",\"channels\":8,\"datagrams\":500,\"self_check_failures\":$self_check}" \
        >"$dir/feed.json"
    echo 0 >"$dir/book1.rc"
    echo '{"tool":"md-book","digest":"00c0ffee00c0ffee","messages":1000,"missing":0,"channels_ended":8,"apply_errors":0}' \
        >"$dir/book1.json"
    echo "$book2_rc" >"$dir/book2.rc"
    echo "{\"tool\":\"md-book\",\"digest\":\"$book2_digest\",\"messages\":1000,\"missing\":$book2_missing,\"channels_ended\":$book2_ended,\"apply_errors\":$book2_refused,\"late_join\":{\"snapshots_applied\":${book2_late:-0}},\"directory\":{\"symbols_with_state\":7000,\"symbols_named\":$book2_named}}" \
        >"$dir/book2.json"
    if [ -n "$book2_late" ]; then echo 2 >"$dir/late_book"; fi
    if [ "$record" = 1 ]; then
        echo record >"$dir/record"
        echo 0 >"$dir/recorder.rc"
        echo "{\"tool\":\"rdps-record\",\"messages\":$rec_messages,\"stored_bytes\":9000,\"raw_bytes\":20000,\"loss_events\":$rec_loss,\"overrun_messages\":0}" \
            >"$dir/recorder.json"
        echo 0 >"$dir/replay_book.rc"
        echo "{\"tool\":\"md-book\",\"digest\":\"$replay_digest\",\"messages\":1000,\"missing\":0,\"channels_ended\":8,\"apply_errors\":0}" \
            >"$dir/replay_book.json"
    fi
    if [ -n "$book2_history" ]; then
        echo 2 >"$dir/late_book"
        echo archive >"$dir/from_archive"
        echo "{\"tool\":\"md-book\",\"digest\":\"$book2_digest\",\"messages\":1000,\"missing\":0,\"channels_ended\":8,\"apply_errors\":0,\"late_join\":{\"snapshots_applied\":0},\"history\":{\"channels_live\":${book2_history%:*},\"channels_merging\":$((8 - ${book2_history%:*})),\"timeouts\":${book2_history#*:},\"refused\":0}}" \
            >"$dir/book2.json"
    fi
}

# expect WANT NAME: runs the demo's check on $tmp/NAME.
expect() {
    local want=$1 name=$2 got=0
    "$demo" --check "$tmp/$name" >"$tmp/$name.out" 2>&1 || got=$?
    if [ "$got" -ne "$want" ]; then
        echo "FAIL: $name: fanout-demo --check exited $got, want $want:"
        sed 's/^/    /' "$tmp/$name.out"
        failures=$((failures + 1))
    else
        echo "ok:   $name -> $got"
    fi
}

make_results "$tmp/good"
expect 0 good
# The latency breakdown: every echoed packet's stages add up to its round trip.
make_results "$tmp/stages_good"
printf '# seq rtt wake pack send wire_out apply echo wire_back (ns)\n5 700 100 0 50 250 25 25 250\n' \
    >"$tmp/stages_good/stages.book1.dat"
expect 0 stages_good
make_results "$tmp/stages_off"
printf '5 700 100 0 50 250 25 25 250\n10 9000 100 0 50 250 25 25 250\n' \
    >"$tmp/stages_off/stages.book1.dat" # the second's stages sum to 700 ns, not 9000
expect 1 stages_off
make_results "$tmp/digest_differs" book2_digest=00c0ffee00c0fffe
expect 1 digest_differs
make_results "$tmp/missing_exit0" book2_missing=12 # a book that hides what is missing
expect 1 missing_exit0
make_results "$tmp/not_ended_exit0" book2_ended=7
expect 1 not_ended_exit0
make_results "$tmp/refused_exit0" book2_refused=3
expect 1 refused_exit0
make_results "$tmp/book_failed" book2_rc=1
expect 1 book_failed
make_results "$tmp/feed_failed" feed_rc=1
expect 1 feed_failed
make_results "$tmp/self_check" self_check=2
expect 1 self_check
make_results "$tmp/no_book2"
rm "$tmp/no_book2/book2.json" "$tmp/no_book2/book2.rc"
expect 1 no_book2
make_results "$tmp/late_caught_up" book2_late=8
expect 0 late_caught_up
make_results "$tmp/late_but_on_time" book2_late=0 # started late, yet saw every channel from 1
expect 1 late_but_on_time
make_results "$tmp/late_partly" book2_late=7
expect 1 late_partly
make_results "$tmp/late_unnamed" book2_late=8 book2_named=12 # no directory reached it
expect 1 late_unnamed
make_results "$tmp/no_feed"
rm "$tmp/no_feed/feed.json"
expect 1 no_feed
make_results "$tmp/recorded" record=1
expect 0 recorded
make_results "$tmp/recording_short" record=1 rec_messages=499
expect 1 recording_short
make_results "$tmp/recording_lossy" record=1 rec_loss=1
expect 1 recording_lossy
make_results "$tmp/replay_differs" record=1 replay_digest=00c0ffee00c0fffe
expect 1 replay_differs
make_results "$tmp/no_replay_book" record=1
rm "$tmp/no_replay_book/replay_book.json"
expect 1 no_replay_book
make_results "$tmp/late_from_archive" record=1 book2_history=7:0
expect 0 late_from_archive
make_results "$tmp/late_archive_timed_out" record=1 book2_history=7:1
expect 1 late_archive_timed_out

if [ "$failures" -eq 0 ]; then
    echo "fanout-demo's check failed on every broken input"
fi
exit $((failures > 0))
