#!/usr/bin/env bash
# fanout_check.sh - tools/fanout-demo's verdict fails on every broken result set: a subscriber
# that exited non-zero, one that exited 0 while its summary shows messages missing (what rdsub
# did before per-session verification), corrupt or duplicated messages, a missing result, a
# publisher that sent too few; and passes on a good set.
# usage: fanout_check.sh   (no device needed: it feeds saved results to fanout-demo --check)
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
demo="$here/../../tools/fanout-demo"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

# make_results DIR PUB_MESSAGES SUB_RC SUB_VERIFIED SUB_MISSING SUB_CORRUPT SUB_DUPLICATES
make_results() {
    local dir=$1
    mkdir -p "$dir"
    echo 0 >"$dir/pub.rc"
    echo "{\"tool\":\"rdpub\",\"messages\":$2}" >"$dir/pub.json"
    for s in sub1 sub2; do
        echo 0 >"$dir/$s.rc"
        echo '{"tool":"rdsub","verified":200,"missing":0,"corrupt":0,"duplicates":0,"out_of_range":0}' \
            >"$dir/$s.json"
    done
    echo "$3" >"$dir/sub2.rc"
    echo "{\"tool\":\"rdsub\",\"verified\":$4,\"missing\":$5,\"corrupt\":$6,\"duplicates\":$7,\"out_of_range\":0}" \
        >"$dir/sub2.json"
}

# expect WANT NAME: runs the demo's check on $tmp/NAME with -c 200.
expect() {
    local want=$1 name=$2 got=0
    "$demo" --check "$tmp/$name" -c 200 >"$tmp/$name.out" 2>&1 || got=$?
    if [ "$got" -ne "$want" ]; then
        echo "FAIL: $name: fanout-demo --check exited $got, want $want:"
        sed 's/^/    /' "$tmp/$name.out"
        failures=$((failures + 1))
    else
        echo "ok:   $name -> $got"
    fi
}

make_results "$tmp/good" 200 0 200 0 0 0
expect 0 good
make_results "$tmp/missing_rc" 200 5 150 50 0 0
expect 1 missing_rc
make_results "$tmp/missing_exit0" 200 0 150 50 0 0 # a subscriber that hides what is missing
expect 1 missing_exit0
make_results "$tmp/fewer_exit0" 200 0 150 0 0 0 # only 150 verified, "missing" not reported
expect 1 fewer_exit0
make_results "$tmp/corrupt" 200 1 200 0 3 0
expect 1 corrupt
make_results "$tmp/duplicates" 200 0 200 0 0 2
expect 1 duplicates
make_results "$tmp/short_pub" 150 0 200 0 0 0
expect 1 short_pub
make_results "$tmp/no_sub2" 200 0 200 0 0 0
rm "$tmp/no_sub2/sub2.json"
expect 1 no_sub2
# The documented way to see the check fail for real: subscribers expect more than is sent.
make_results "$tmp/expect_more" 200 0 200 0 0 0
if "$demo" --check "$tmp/expect_more" -c 200 --expect 300 >/dev/null 2>&1; then
    echo "FAIL: --expect 300 over 200 verified passed"
    failures=$((failures + 1))
else
    echo "ok:   expect_more -> fails"
fi

if [ "$failures" -eq 0 ]; then
    echo "fanout-demo's check failed on every broken input"
fi
exit $((failures > 0))
