#!/bin/sh
# cli_errors.sh - rdpub and rdsub reject bad arguments with one clear line and exit 2, and a
# missing device with one line and exit 4; never a crash or a hang.
# usage: cli_errors.sh BUILD_DIR
set -u
build=${1:?usage: cli_errors.sh BUILD_DIR}
pub=$build/tools/rdpub/rdpub
sub=$build/tools/rdsub/rdsub
failures=0
err=$(mktemp)
trap 'rm -f "$err"' EXIT

# expect STATUS MESSAGE-FRAGMENT COMMAND...
expect() {
    want=$1 fragment=$2
    shift 2
    timeout 20 "$@" </dev/null >/dev/null 2>"$err"
    got=$?
    lines=$(grep -vc "^Try '" "$err")
    if [ "$got" -ne "$want" ] || ! grep -q -- "$fragment" "$err" || [ "$lines" -ne 1 ]; then
        echo "FAIL: $* -> status $got (want $want), stderr:"
        sed 's/^/    /' "$err"
        failures=$((failures + 1))
    else
        echo "ok:   $* -> $got: $(head -n 1 "$err")"
    fi
}

expect 2 "topic is required" "$sub"
expect 2 "topic is required" "$pub" --pattern
expect 2 "not both" "$sub" -t t -b 169.254.77.1 -d rxe0
expect 2 "positive count" "$sub" -t t -c 0
expect 2 "positive count" "$pub" -t t -c -5
expect 2 "seconds" "$sub" -t t --timeout x
expect 2 "needs -c COUNT" "$sub" -t t --verify
expect 2 "rate in" "$sub" -t t --loss-rx 1.5
expect 2 "rate in" "$pub" -t t --loss-tx abc
expect 2 "1..65535" "$pub" -t t --cm-port 70000
expect 2 "MIN <= MAX" "$pub" -t t --pattern --size-range 9:3
expect 2 "only apply to --pattern" "$pub" -t t -s 64
expect 2 "do not also give FILE" "$pub" -t t --pattern somefile
expect 2 "unexpected argument" "$sub" -t t extra
expect 2 "cannot open" "$pub" -t t /nonexistent/file
expect 2 "unrecognized option" "$sub" -t t --no-such-option
expect 4 "cannot open RDMA context" "$sub" -t t -d nosuchdev0 -c 1
expect 4 "cannot open RDMA context" "$pub" -t t -d nosuchdev0 --pattern -c 1
expect 2 "invalid topic name" "$sub" -t "bad topic" -c 1
expect 2 "invalid topic name" "$pub" -t "" --pattern

[ $failures -eq 0 ] && echo "all CLI error checks passed" || echo "$failures CLI error checks failed"
exit $((failures > 0))
