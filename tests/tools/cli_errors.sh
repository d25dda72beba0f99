#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# cli_errors.sh - the rdps tools reject bad arguments with one clear line naming the tool, not its
# path (plus a --help hint) and exit 2, and a missing device with one line and exit 4; never a
# crash or a hang. Each tool's --help starts "Usage:" and documents the exit codes it uses; a
# count is -c in every tool; rdps-keygen makes a key file of mode 0600 and never overwrites one.
# usage: cli_errors.sh BUILD_DIR
set -u
build=${1:?usage: cli_errors.sh BUILD_DIR}
pub=$build/tools/rdpub/rdpub
sub=$build/tools/rdsub/rdsub
ping=$build/tools/rdps-ping/rdps-ping
info=$build/tools/rdps-info/rdps-info
stat=$build/tools/rdps-stat/rdps-stat
keygen=$build/tools/rdps-keygen/rdps-keygen
feed=$build/tools/md-feed/md-feed
book=$build/tools/md-book/md-book
failures=0
err=$(mktemp)
trap 'rm -f "$err"' EXIT

fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# expect STATUS MESSAGE-FRAGMENT COMMAND...
# The error is exactly one line; a usage error (2) is followed by the "Try 'PROG --help'." hint.
expect() {
    local want=$1 fragment=$2 got lines hints
    shift 2
    if [ ! -x "$1" ]; then
        fail "$1 not built"
        return
    fi
    timeout 20 "$@" </dev/null >/dev/null 2>"$err"
    got=$?
    lines=$(grep -vc "^Try '" "$err")
    hints=$(grep -c "^Try '$(basename "$1") --help'\.$" "$err")
    # The line names the program as the user knows it, not the path it was started by.
    named=$(grep -c "^$(basename "$1"): " "$err")
    if [ "$got" -ne "$want" ] || ! grep -q -- "$fragment" "$err" || [ "$lines" -ne 1 ] ||
        [ "$named" -ne 1 ] || { [ "$want" -eq 2 ] && [ "$hints" -ne 1 ]; }; then
        fail "$* -> status $got (want $want), stderr:"
        sed 's/^/    /' "$err"
    else
        echo "ok:   $* -> $got: $(head -n 1 "$err")"
    fi
}

# expect_help TOOL FRAGMENT...: --help exits 0 on stdout and mentions every fragment.
expect_help() {
    local tool=$1 text
    shift
    if ! text=$("$tool" --help 2>&1); then
        fail "$tool --help exits non-zero"
        return
    fi
    for fragment in "$@"; do
        if ! grep -qF -- "$fragment" <<<"$text"; then
            fail "$tool --help does not mention '$fragment'"
            return
        fi
    done
    echo "ok:   $tool --help documents: $*"
}

expect 2 "topic is required" "$sub"
expect 2 "topic is required" "$pub" --pattern
expect 2 "not both" "$sub" -t t -b 169.254.77.1 -d rxe0
expect 2 "-c needs an integer >= 1, got '0'" "$sub" -t t -c 0
expect 2 "-c needs an integer >= 1" "$pub" -t t -c -5
expect 2 "--timeout needs an integer in 1..31536000, got 'x'" "$sub" -t t --timeout x
expect 2 "needs -c COUNT" "$sub" -t t --verify
expect 2 "checks at most 4294967296" "$sub" -t t --verify -c 4294967297
expect 2 "--linger needs -c COUNT" "$sub" -t t --linger 5
expect 2 "--linger needs an integer in 1..3600" "$sub" -t t -c 1 --linger 0
expect 2 "--history starts from a recording" "$sub" -t t --history --from-oldest
expect 2 "--history-timeout needs an integer in 1..3600" "$sub" -t t --history --history-timeout 0
expect 2 "--seed needs an integer" "$sub" -t t --seed 1x
expect 2 "rate in" "$sub" -t t --loss-rx 1.5
expect 2 "rate in" "$pub" -t t --loss-tx abc
expect 2 "announce, parity, all" "$sub" -t t --loss-frames fec
expect 2 "1..65535" "$pub" -t t --cm-port 70000
expect 2 "MIN <= MAX" "$pub" -t t --pattern --size-range 9:3
expect 2 "k/m/g suffix" "$pub" -t t --pattern -s 5x
expect 2 "-r needs an integer in 1..100000000" "$pub" -t t --pattern -r 0
expect 2 "only apply to --pattern" "$pub" -t t -s 64
expect 2 "do not also give FILE" "$pub" -t t --pattern somefile
expect 2 "--flow, --ring and --rate-limit need --reliable" "$pub" -t t --pattern --rate-limit 10m
expect 2 "--rate-limit" "$pub" -t t --pattern --reliable --rate-limit 100
expect 2 "N 0..256" "$pub" -t t --pattern --reliable --flow tagged:7:257
expect 2 "unexpected argument" "$sub" -t t extra
expect 2 "cannot open" "$pub" -t t /nonexistent/file
expect 2 "unrecognized option" "$sub" -t t --no-such-option
expect 4 "cannot open an rdps context" "$sub" -t t -d nosuchdev0 -c 1
expect 4 "cannot open an rdps context" "$pub" -t t -d nosuchdev0 --pattern -c 1
expect 2 "invalid topic name" "$sub" -t "bad topic" -c 1
expect 2 "invalid topic name" "$pub" -t "" --pattern

# rdps-ping and rdps-info share the same option layer.
expect 2 "--port needs an integer in 1..65535" "$ping" --listen --port 0
expect 2 "-n needs a number in 1..100000000" "$ping" 10.0.0.1 -n 0
expect 2 "--expect needs an integer in 1..256" "$ping" --group 239.1.1.1 --expect 300
expect 2 "unknown option" "$ping" --no-such-option
expect 2 "give HOST_IP" "$ping"
expect 2 "give HOST_IP" "$ping" 10.0.0.1 --peers 10.0.0.2
expect 2 "--transport unicast needs --peers" "$ping" --group 239.1.1.1 --transport unicast
expect 2 "--transport auto needs --group" "$ping" --peers 10.0.0.2 --transport auto
expect 2 "is not a numeric IPv4" "$ping" --peers 10.0.0.2,nohost
expect 2 "--peers is a client option" "$ping" --listen --peers 10.0.0.2
expect 2 "is not one of multicast, unicast, auto" "$ping" --peers 10.0.0.2 --transport any
expect 2 "is not one of multicast, unicast, auto" "$sub" -t t --transport broadcast
expect 2 "16-byte header" "$ping" 10.0.0.1 -s 15
expect 2 "bad group" "$ping" --group 10.0.0.1
expect 2 "--port needs an integer in 1..255" "$info" -p 0
expect 2 "unrecognized option" "$info" --no-such-option
expect 2 "unexpected argument" "$info" extra
expect 2 "not a multicast IPv4 address" "$info" --group 10.1.1.1

# getopt's own messages too (1.2 printed build/tools/rdsub/rdsub: unrecognized option ...).
for tool in "$pub" "$sub" "$ping" "$info" "$stat" "$keygen" "$feed" "$book"; do
    expect 2 "option" "$tool" --no-such-option
    expect 2 "option" "$tool" -Z
done

# One usage style: every tool's --help starts with "Usage: TOOL".
for tool in "$pub" "$sub" "$ping" "$info" "$stat" "$keygen" "$feed" "$book"; do
    first=$("$tool" --help 2>/dev/null | head -n 1)
    case "$first" in
    "Usage: $(basename "$tool")"* | "Usage:") echo "ok:   $(basename "$tool") --help: $first" ;;
    *) fail "$(basename "$tool") --help starts '$first', not 'Usage: $(basename "$tool")'" ;;
    esac
done

# A count is -c in every tool (rdps-ping keeps -n, rdps-stat -n and --samples, as aliases).
expect 2 "-c needs a number in 1..100000000" "$ping" 10.0.0.1 -c 0
expect 2 "-c needs an integer in 1..4294967295, got '0'" "$stat" --watch 1 -c 0
expect 2 "-c (--count) needs --watch" "$stat" -c 2
expect 2 "-n needs an integer in 1..4294967295" "$stat" --watch 1 -n x
expect_help "$ping" "-c, --count N"
expect_help "$stat" "-c, --count N"

# rdps-keygen: a new key file, mode 0600, in the format the library reads; never over a file.
kdir=$(mktemp -d)
trap 'rm -f "$err"; rm -rf "$kdir"' EXIT
if "$keygen" "$kdir/domain.key" >"$kdir/out" 2>"$err" &&
    [ "$(stat -c %a "$kdir/domain.key")" = 600 ] &&
    grep -Eqx '1:[0-9a-f]{64}' "$kdir/domain.key" && grep -q "domain key 1, mode 0600" "$kdir/out"; then
    echo "ok:   rdps-keygen FILE: $(grep -v '^#' "$kdir/domain.key" | cut -c1-10)..., mode 0600"
else
    fail "rdps-keygen FILE: status, mode $(stat -c %a "$kdir/domain.key" 2>&1) or content wrong: $(cat "$err")"
fi
(umask 0277 && "$keygen" -i 7 "$kdir/other.key" >/dev/null 2>&1)
if [ "$(stat -c %a "$kdir/other.key" 2>&1)" = 600 ] && grep -Eqx '7:[0-9a-f]{64}' "$kdir/other.key" &&
    ! cmp -s <(grep -v '^#' "$kdir/domain.key" | cut -d: -f2) <(grep -v '^#' "$kdir/other.key" | cut -d: -f2); then
    echo "ok:   rdps-keygen -i 7 under umask 0277: mode 0600, id 7, another key"
else
    fail "rdps-keygen -i 7 under umask 0277: $(stat -c %a "$kdir/other.key" 2>&1), $(cat "$kdir/other.key" 2>&1)"
fi
cp "$kdir/domain.key" "$kdir/before"
expect 1 "exists: a key is never overwritten" "$keygen" "$kdir/domain.key"
cmp -s "$kdir/domain.key" "$kdir/before" || fail "rdps-keygen changed an existing key file"
ln -s "$kdir/nowhere" "$kdir/link.key"
expect 1 "exists" "$keygen" "$kdir/link.key"
[ -e "$kdir/nowhere" ] && fail "rdps-keygen wrote through a symbolic link"
expect 4 "cannot create" "$keygen" "$kdir/no/such/dir/domain.key"
expect 2 "-i needs an integer in 1..16777215, got '0'" "$keygen" -i 0 "$kdir/x.key"
expect 2 "give the FILE" "$keygen"
expect 2 "one FILE only" "$keygen" "$kdir/a.key" "$kdir/b.key"
[ -e "$kdir/x.key" ] || [ -e "$kdir/a.key" ] && fail "rdps-keygen left a file after a usage error"
expect_help "$keygen" "Exit status: 0 written; 1 FILE exists" "-i, --id ID"

expect_help "$sub" "1 verification failed" "3 timeout" "4 runtime error" "5 --verify: messages missing"
expect_help "$pub" "1 send failed" "2 bad usage" "3 timed out" "4 runtime error"
expect_help "$ping" "Exit: 0 ok, 1 failed" "2 bad usage"
expect_help "$info" "0 ok, 1 no device" "2 bad arguments"

if [ "$failures" -eq 0 ]; then
    echo "all CLI error checks passed"
else
    echo "$failures CLI error checks failed"
fi
exit $((failures > 0))
