#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# rxe_stat_one_guest.sh - one guest: rdps-stat watches a running rdpub -> rdsub pair on real rxe;
# what it shows while they run is below their final --json and moving, and what it shows after
# the last message (rdpub lingering, rdsub waiting for its timeout) equals their final --json.
#
# usage: rxe_stat_one_guest.sh BUILD_DIR   (inside tools/rxe-vm; exits 77 elsewhere)
set -u
build=${1:?usage: rxe_stat_one_guest.sh BUILD_DIR}
[ -n "${RDPS_VM_DEV:-}" ] || { echo "no rxe device (run inside tools/rxe-vm): skipped"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
stat=$build/tools/rdps-stat/rdps-stat
out=$(mktemp -d)
export RDPS_STAT_DIR=$out/shm # only this test's contexts
mkdir "$RDPS_STAT_DIR"
n=2000 rate=400 # 5 s of sending

"$build/tools/rdsub/rdsub" -t stat.rxe --timeout 18 -q --json >"$out/sub.json" 2>"$out/sub.err" &
sub=$!
"$build/tools/rdpub/rdpub" -t stat.rxe --pattern -c $n -r $rate --wait-subs 1 --linger 3000 \
    --json >"$out/pub.json" 2>"$out/pub.err" &
pub=$!

# Sample both while rdpub runs (its last samples fall in its 3 s linger, after the last send).
"$stat" --watch 1 --samples 6 --json --pid $sub >"$out/watch.jsonl" 2>/dev/null &
watch=$!
prom_taken=0
while kill -0 $pub 2>/dev/null; do
    "$stat" --json --pid $pub >>"$out/pub_samples.jsonl" 2>/dev/null
    "$stat" --json --pid $sub >>"$out/sub_samples.jsonl" 2>/dev/null
    if [ $prom_taken -eq 0 ] && grep -q '"msgs_sent":[1-9]' "$out/pub_samples.jsonl"; then
        "$stat" --prometheus >"$out/metrics" && prom_taken=1
    fi
    sleep 0.2
done
wait $pub
pub_rc=$?
wait $watch
# rdsub is still running (until its timeout): nothing arrives any more, so this is its final state.
"$stat" --json --pid $sub >"$out/sub_final_sample.json" 2>/dev/null
"$stat" >"$out/table" 2>&1
wait $sub
sub_rc=$?

status=0
[ $pub_rc -eq 0 ] || { echo "rdpub failed ($pub_rc): $(cat "$out/pub.err")"; status=1; }
[ $sub_rc -eq 0 ] || { echo "rdsub failed ($sub_rc): $(cat "$out/sub.err")"; status=1; }
[ $prom_taken -eq 1 ] || { echo "no --prometheus sample while rdpub ran"; status=1; }
if [ $prom_taken -eq 1 ]; then
    "$here/check_openmetrics.py" "$out/metrics" "rdps_stat_files{state=\"live\"} == 2" || status=1
fi
echo "--- rdps-stat after the run (rdsub still waiting):"
cat "$out/table"
python3 - "$out" $n $rate <<'EOF' || status=1
import json, os, sys
out, n, rate = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
ok = True
def check(cond, what):
    global ok
    print(("ok   " if cond else "FAIL ") + what)
    ok = ok and cond
def lines(name):
    path = os.path.join(out, name)
    return [json.loads(l) for l in open(path) if l.startswith("{")] if os.path.exists(path) else []
def ctx_of(sample, kind):
    """The live ctx of the sample and its one endpoint of `kind` (None when absent)."""
    for c in sample["contexts"]:
        if c["state"] == "live":
            for e in c["endpoints"]:
                if e["kind"] == kind and e["topic"] == "stat.rxe":
                    return c, e
    return None
pub_final = lines("pub.json")[-1]
sub_final = lines("sub.json")[-1]
print(f"rdpub --json: messages {pub_final['messages']}, fragments {pub_final['fragments']}; "
      f"rdsub --json: messages {sub_final['messages']}")
pubs = [x for x in map(lambda s: ctx_of(s, "pub"), lines("pub_samples.jsonl")) if x]
subs = [x for x in map(lambda s: ctx_of(s, "sub"), lines("sub_samples.jsonl")) if x]
sent = [e["counters"]["msgs_sent"] for _, e in pubs]
got = [e["counters"]["msgs_delivered"] for _, e in subs]
print(f"{len(pubs)} rdpub samples: msgs_sent {sent[:3]} .. {sent[-3:]}")
print(f"{len(subs)} rdsub samples: msgs_delivered {got[:3]} .. {got[-3:]}")
check(pub_final["messages"] == n, f"rdpub sent all {n}")
check(len(pubs) >= 3 and len(subs) >= 3, "rdps-stat saw both contexts, at least 3 samples each")
check(all(a <= b for a, b in zip(sent, sent[1:])), "msgs_sent never goes back")
check(all(a <= b for a, b in zip(got, got[1:])), "msgs_delivered never goes back")
check(any(0 < s < n for s in sent), "a sample caught rdpub mid-run (0 < msgs_sent < N)")
check(all(s <= pub_final["messages"] for s in sent), "every running sample <= rdpub's final")
check(all(g <= sub_final["messages"] for g in got), "every running sample <= rdsub's final")
if pubs:
    c, e = pubs[-1]
    check(e["counters"]["msgs_sent"] == pub_final["messages"],
          "last rdpub sample (lingering): endpoint msgs_sent == rdpub --json messages")
    check(c["counters"]["msgs_sent"] == pub_final["messages"], "... and the ctx's msgs_sent")
    check(e["counters"]["frames_sent"] == pub_final["fragments"],
          "... endpoint frames_sent == rdpub --json fragments")
    check(c["program"] == "rdpub" and c["device"] == os.environ.get("RDPS_VM_DEV"),
          f"program {c['program']} on device {c['device']}")
final = lines("sub_final_sample.json")
fs = ctx_of(final[-1], "sub") if final else None
check(fs is not None, "rdsub's file is there after rdpub ended")
if fs:
    c, e = fs
    check(e["counters"]["msgs_delivered"] == sub_final["messages"],
          "rdsub after the run: endpoint msgs_delivered == rdsub --json messages")
    check(c["counters"]["bad_frames"] == sub_final["bad_frames"], "... ctx bad_frames equal")
    check(c["counters"]["gaps"] == sub_final["gaps"], "... ctx gaps equal")
watch = lines("watch.jsonl")
rates = [ctx_of(w, "sub")[1].get("rates", {}).get("msgs_delivered") for w in watch[1:]
         if ctx_of(w, "sub")]
print(f"--watch 1: msgs_delivered rates {rates} (rdpub -r {rate})")
check(len(watch) == 6, "--watch 1 --samples 6 gave 6 samples")
check(any(r is not None and 0 < r <= 3 * rate for r in rates),
      "--watch rates: some 0 < msgs_delivered/s <= 3 x the publishing rate")
sys.exit(0 if ok else 1)
EOF
left=$(ls "$RDPS_STAT_DIR")
[ -z "$left" ] || { echo "files left after both tools exited: $left"; status=1; }
rm -rf "$out"
exit $status
