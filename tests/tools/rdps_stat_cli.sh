#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# rdps_stat_cli.sh - rdps-stat against the files of real contexts (loopback transport, no device),
# a dead process's file, a reused pid's file and a corrupt one: table, --json, --prometheus,
# --watch rates, filters, --clean, usage errors and exit codes.
#
# usage: rdps_stat_cli.sh BUILD_DIR
set -u
build=${1:?usage: rdps_stat_cli.sh BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
stat=$build/tools/rdps-stat/rdps-stat
fixture=$build/tests/tools/stat_fixture
work=$(mktemp -d)
export RDPS_STAT_DIR=$work/shm
mkdir "$RDPS_STAT_DIR"
status=0
fail() { echo "FAIL: $*"; status=1; }
expect_rc() { # WANT CMD...: runs CMD, its status must be WANT
    local want=$1; shift
    "$@" >"$work/out" 2>"$work/err"
    local rc=$?
    [ $rc -eq "$want" ] || fail "'$*' exited $rc, expected $want: $(head -c 300 "$work/err")"
}
json() { # FILE PYTHON-EXPRESSION (d: the last JSON line)
    python3 -c "import json,sys; d=[json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')][-1]; sys.exit(0 if ($2) else 1)" "$1" ||
        fail "JSON check failed: $2"
}

coproc FIX { exec "$fixture" 50; }
fixpid=$FIX_PID
fixin=${FIX[1]}
read -r -t 60 line <&"${FIX[0]}"
[ "${line:-}" = ready ] || { echo "FAIL: the fixture did not start"; exit 1; }

# One-shot table: both live contexts, their endpoints, the stale and the refused files.
expect_rc 0 "$stat"
cp "$work/out" "$work/table"
grep -q "4 rdps contexts (2 live, 2 stale, 0 refused)\|5 rdps contexts (2 live, 2 stale, 1 refused)" \
    "$work/table" || fail "table summary: $(head -1 "$work/table")"
grep -q "^pid $fixpid ctx 0 .* live, updated" "$work/table" || fail "no live ctx 0 in the table"
grep -q "STALE: process .* is gone" "$work/table" || fail "the dead process's file is not stale"
grep -q "STALE: pid $fixpid now belongs to another process" "$work/table" ||
    fail "the reused pid's file is not stale"
grep -q "rdps-$fixpid-98.stat: refused: layout version" "$work/table" ||
    fail "the corrupt file is not refused with its reason"
grep -q "^  pub fix.a session 0x" "$work/table" || fail "no publisher line"
grep -q "^  sub fix.a (reliable)" "$work/table" || fail "no reliable subscriber line"
grep -Eq "^    msgs_sent +100$" "$work/table" || fail "ctx msgs_sent is not 100"
grep -Eq "^    unicast to 1: [0-9a-f:.]+/0x[0-9a-f]{6}$" "$work/table" ||
    fail "the unicast publisher does not list its destination"

# JSON: the figures the fixture produced, per ctx and per endpoint.
expect_rc 0 "$stat" --json
cp "$work/out" "$work/one.json"
json "$work/one.json" "d['live']==2 and d['stale']==2 and d['refused']==1"
json "$work/one.json" "sum(c['counters']['msgs_sent'] for c in d['contexts'] if c['state']=='live')==100"
json "$work/one.json" "sorted(e['counters']['msgs_sent'] for c in d['contexts'] if c['state']=='live' for e in c['endpoints'] if e['kind']=='pub')==[0,50,50]"
json "$work/one.json" "sorted(e['counters']['msgs_delivered'] for c in d['contexts'] if c['state']=='live' for e in c['endpoints'] if e['kind']=='sub')==[0,50,50]"
json "$work/one.json" "[(e['unicast_destinations'],len(e['unicast'])) for c in d['contexts'] if c['state']=='live' for e in c['endpoints'] if e['kind']=='pub' and e['topic']=='fix.u']==[(1,1)]"
json "$work/one.json" "all(e['unicast_destinations']==0 for c in d['contexts'] if c['state']=='live' for e in c['endpoints'] if e['kind']=='pub' and e['topic']!='fix.u')"
json "$work/one.json" "all('bad_frames' not in e['counters'] for c in d['contexts'] if c['state']=='live' for e in c['endpoints'])"
json "$work/one.json" "all(c['bad_frames_by_reason']['SHORT']==0 for c in d['contexts'] if c['state']=='live')"
json "$work/one.json" "'fix.b\"q\\\\' in [e['topic'] for c in d['contexts'] if c['state']=='live' for e in c['endpoints']]"

# OpenMetrics: well formed, the right values under the right labels.
expect_rc 0 "$stat" --prometheus
cp "$work/out" "$work/metrics"
pubctx=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print([c['ctx'] for c in d['contexts'] if c['state']=='live' and any(e['kind']=='pub' for e in c['endpoints'])][0])" "$work/one.json")
"$here/check_openmetrics.py" "$work/metrics" \
    "rdps_msgs_sent_total{pid=\"$fixpid\",ctx=\"$pubctx\",program=\"stat_fixture\"} == 100" \
    "rdps_endpoint_msgs_sent_total{pid=\"$fixpid\",ctx=\"$pubctx\",topic=\"fix.a\",kind=\"pub\"} == 50" \
    "rdps_endpoint_msgs_sent_total{pid=\"$fixpid\",ctx=\"$pubctx\",topic=\"fix.b\\\"q\\\\\",kind=\"pub\"} == 50" \
    "rdps_bad_frames_by_reason_total{pid=\"$fixpid\",ctx=\"$pubctx\",reason=\"SHORT\"} == 0" \
    "rdps_stat_files{state=\"stale\"} == 2" >"$work/om.log" ||
    fail "OpenMetrics: $(grep FAIL "$work/om.log")"
grep -q '^# TYPE rdps_rtt_us gauge$' "$work/metrics" || fail "rtt_us is not a gauge"
! grep -q 'rxe9\|program="old"' "$work/metrics" || fail "a stale ctx was exported"

# Filters.
expect_rc 0 "$stat" --pid "$fixpid" --json
json "$work/out" "len(d['contexts'])==4 and all(c['pid']==$fixpid for c in d['contexts'])"
expect_rc 0 "$stat" --topic fix.a --json
json "$work/out" "d['live']==2 and all(e['topic']=='fix.a' for c in d['contexts'] for e in c.get('endpoints',[]))"
expect_rc 1 "$stat" --topic no.such.topic
grep -q "no rdps context with topic no.such.topic" "$work/err" || fail "--topic miss message"
expect_rc 1 "$stat" --pid 1

# --watch: rates per second between samples (the fixture is idle now: rates 0).
expect_rc 0 "$stat" --watch 0.3 --samples 3 --json --pid "$fixpid"
[ "$(grep -c '^{' "$work/out")" -eq 3 ] || fail "--watch --samples 3 did not give 3 JSON lines"
json "$work/out" "all(c['rates']['msgs_sent']==0 for c in d['contexts'] if c['state']=='live')"
expect_rc 0 "$stat" --watch 0.2 --samples 2
grep -q "rate/s" "$work/out" || fail "the table in --watch has no rate column"

# Usage errors: one line on stderr, status 2; --help on stdout, status 0.
for args in "--watch 0" "--watch x" "--json --prometheus" "--prometheus --watch 1" "--samples 2" \
    "--pid 0" "--bogus" "extra" "--clean --watch 1"; do
    # shellcheck disable=SC2086 # the arguments are words on purpose
    expect_rc 2 "$stat" $args
    grep -q "^rdps-stat: \|^rdps-stat: unrecognized\|invalid\|unrecognized" "$work/err" ||
        fail "'$args': no error line"
done
expect_rc 0 "$stat" --help
grep -q -- "--prometheus" "$work/out" || fail "--help does not list --prometheus"
expect_rc 0 "$stat" --version
grep -q "^rdps-stat (rdps)" "$work/out" || fail "--version: $(cat "$work/out")"
expect_rc 4 "$stat" --dir "$work/no-such-dir"

# --clean removes the two stale files, leaves the live ones and the refused one.
expect_rc 0 "$stat" --clean --json
grep -q "removed 2 stale files" "$work/err" || fail "--clean: $(cat "$work/err")"
expect_rc 0 "$stat" --json
json "$work/out" "d['live']==2 and d['stale']==0 and d['refused']==1"

# The fixture destroys its contexts: their files go with them.
exec {fixin}>&-
wait "$fixpid"
left=$(ls "$RDPS_STAT_DIR")
[ "$left" = "rdps-$fixpid-98.stat" ] || fail "files left after destroy: $left"
rm -rf "$work"
[ $status -eq 0 ] && echo "rdps_stat_cli: all checks passed"
exit $status
