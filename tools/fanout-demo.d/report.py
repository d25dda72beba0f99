#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""report.py - the fanout-demo report: report.txt, summary.json and gnuplot PNGs from a run's files.

usage: report.py DIR DEVICE NETEM GIT_REVISION
DIR holds feed.json, book*.json (+ .rc), reflector.book*.hgrm, stages.book*.dat,
timeseries.dat, baseline.txt (ib_send_lat -c UD -e), ping.json (rdps-ping --event), kernel.
Missing pieces are reported as missing, never invented.
"""
import json
import os
import shutil
import subprocess
import sys

PCTS = (("min", "min_us"), ("p50", "p50_us"), ("p90", "p90_us"), ("p99", "p99_us"),
        ("p99.9", "p999_us"), ("p99.99", "p9999_us"), ("max", "max_us"))


def load_json(path):
    try:
        lines = [l for l in open(path) if l.strip().startswith("{")]
        return json.loads(lines[-1]) if lines else None
    except OSError:
        return None


def read(path, default=""):
    try:
        return open(path).read().strip()
    except OSError:
        return default


def baseline(path):
    """ib_send_lat's results row: #bytes #iterations t_min t_max t_typical t_avg t_stdev p99 p99.9"""
    for line in read(path).splitlines():
        f = line.split()
        if len(f) >= 9 and f[0].isdigit() and f[1].isdigit():
            return {"bytes": int(f[0]), "iterations": int(f[1]), "t_min_us": float(f[2]),
                    "t_typical_us": float(f[4]), "t_avg_us": float(f[5]),
                    "p99_us": float(f[7]), "p999_us": float(f[8]),
                    "method": "ib_send_lat -c UD one-way (perftest: half the round trip)"}
    return None


STAGES = ("wake", "pack", "send", "wire_out", "apply", "echo", "wire_back")
STAGE_TEXT = {"wake": "feed takes it up late (its wakeup)", "pack": "waiting in the packer", "send": "feed hands it to rdps",
              "wire_out": "wire out (rdps, devices, network, the book's poll)",
              "apply": "book applies it", "echo": "book hands the echo to rdps",
              "wire_back": "wire back (rdps, devices, network, the feed's poll)"}


def ping_baseline(path):
    """rdps-ping --event: half its round trip, in the reflector's columns (min p50 p99 p99.9)."""
    j = load_json(path)
    if not j or j.get("echoes", 0) == 0:
        return None
    return {k: j[f"rtt_{k}_us"] / 2 for k in ("min", "p50", "p99", "p999")} | {"count": j["echoes"]}


def stage_percentiles(path):
    """p50/p99 of each stage and of the round trip from a stages.bookN.dat file, in us."""
    rows = []
    for line in read(path).splitlines():
        if line.startswith("#") or not line.strip():
            continue
        try:
            rows.append([int(x) for x in line.split()][1:])
        except ValueError:
            pass
    if not rows:
        return None
    out = {"count": len(rows)}
    for i, name in enumerate(("rtt",) + STAGES):
        col = sorted(r[i] for r in rows)
        out[name] = {"p50": col[len(col) // 2] / 1e3, "p99": col[min(len(col) - 1, int(len(col) * 0.99))] / 1e3}
    return out


def hgrm_rows(path):
    rows = []
    for line in read(path).splitlines():
        f = line.split()
        if len(f) == 4 and not line.lstrip().startswith("#"):
            try:
                rows.append((float(f[0]), float(f[1]), int(f[2]), f[3]))
            except ValueError:
                pass
    return rows


def plot_stages(d, stages):
    """A stacked bar per book: the median of each stage of the round trip."""
    if shutil.which("gnuplot") is None or not stages:
        return []
    dat = os.path.join(d, "breakdown.dat")
    with open(dat, "w") as out:
        out.write("# book " + " ".join(STAGES) + "\n")
        for b, st in sorted(stages.items()):
            out.write(f"book{b} " + " ".join(f"{st[n]['p50']:.1f}" for n in STAGES) + "\n")
    cols = ", ".join(f"'' using {i + 2} title \"{STAGE_TEXT[n]}\"" if i else
                     f"'{dat}' using 2:xtic(1) title \"{STAGE_TEXT[n]}\"" for i, n in enumerate(STAGES))
    script = ["set terminal pngcairo size 900,500", "set grid y",
              f"set output '{os.path.join(d, 'breakdown.png')}'",
              "set style data histograms", "set style histogram rowstacked",
              "set style fill solid 0.8 border -1", "set boxwidth 0.5", "set key below",
              "set ylabel 'median (us)'",
              "set title 'the round trip by stage, medians (rxe: functional)'",
              "plot " + cols]
    r = subprocess.run(["gnuplot"], input="\n".join(script), text=True, capture_output=True)
    return ["breakdown.png"] if r.returncode == 0 else [f"(gnuplot failed: {r.stderr.strip()[:200]})"]


def plot(d, books, have_series):
    if shutil.which("gnuplot") is None:
        return ["(gnuplot not installed: no plots)"]
    made = []
    curves = []
    for b in books:
        h = os.path.join(d, f"reflector.book{b}.hgrm")
        rows = [r for r in hgrm_rows(h) if r[3] not in ("inf", "Infinity") and r[1] < 1.0]
        if not rows:
            continue
        dat = os.path.join(d, f"latency.book{b}.dat")
        with open(dat, "w") as out:
            for value, pct, _, inv in rows:
                out.write(f"{1.0 / (1.0 - pct)} {value}\n")
        curves.append(f"'{dat}' using 1:2 with lines lw 2 title 'book {b} (reflector RTT/2)'")
    script = ["set terminal pngcairo size 900,500", "set grid"]
    if curves:
        script += [f"set output '{os.path.join(d, 'latency.png')}'",
                   "set logscale x", "set logscale y", "set xlabel 'percentile'",
                   "set xtics ('50%%' 2, '90%%' 10, '99%%' 100, '99.9%%' 1000, '99.99%%' 10000)",
                   "set ylabel 'latency (us)'",
                   "set title 'rdps market-data fan-out: latency by percentile (rxe: functional, "
                   "not representative of hardware)'",
                   "plot " + ", ".join(curves)]
        made.append("latency.png")
    if have_series:
        ts = os.path.join(d, "timeseries.dat")
        script += ["unset logscale", "unset xtics", "set xtics auto",
                   f"set output '{os.path.join(d, 'rate.png')}'",
                   "set xlabel 'second'", "set ylabel 'messages/s'", "set y2label 'p99 RTT/2 (us)'",
                   "set y2tics", "set title 'offered and sent ITCH messages per second, reflector p99'",
                   f"plot '{ts}' using 1:2 with lines title 'offered', '{ts}' using 1:3 with lines "
                   f"title 'sent', '{ts}' using 1:6 axes x1y2 with linespoints title 'p99 RTT/2'"]
        made.append("rate.png")
    if made:
        r = subprocess.run(["gnuplot"], input="\n".join(script), text=True, capture_output=True)
        if r.returncode != 0:
            return [f"(gnuplot failed: {r.stderr.strip()[:200]})"]
    return made


def symbol_digests(path):
    """locate -> digest from a --symbol-digests file, or None when there is none."""
    if not os.path.exists(path):
        return None
    out = {}
    for line in open(path):
        parts = line.split()
        if len(parts) == 2:
            out[parts[0]] = parts[1]
    return out


def symbols_differing(feed_syms, book_syms):
    """How many symbols' books differ (a symbol only one side has state for counts too)."""
    if feed_syms is None or book_syms is None:
        return None
    return sum(1 for k in set(feed_syms) | set(book_syms) if feed_syms.get(k) != book_syms.get(k))


def main():
    d, device, netem, rev = sys.argv[1:5]
    feed = load_json(os.path.join(d, "feed.json"))
    books = sorted(int(n[4:-5]) for n in os.listdir(d)
                   if n.startswith("book") and n.endswith(".json") and n[4:-5].isdigit())
    book_json = {b: load_json(os.path.join(d, f"book{b}.json")) for b in books}
    base = baseline(os.path.join(d, "baseline.txt"))
    ping = ping_baseline(os.path.join(d, "ping.json"))
    ping_loaded = ping_baseline(os.path.join(d, "ping_loaded.json"))
    stages = {b: st for b in books
              if (st := stage_percentiles(os.path.join(d, f"stages.book{b}.dat"))) is not None}
    have_series = os.path.getsize(os.path.join(d, "timeseries.dat")) > 0 \
        if os.path.exists(os.path.join(d, "timeseries.dat")) else False
    lines = []
    add = lines.append
    add("rdps market-data fan-out demo" + ("  [rxe: functional, not representative of hardware]"
                                          if device.startswith("rxe") else ""))
    if feed is None:
        add("the feed left no summary: see feed.err and guests.log")
    else:
        add(f"rdps {feed['version']} ({rev}), kernel {read(os.path.join(d, 'kernel'), '?')}, "
            f"device: {device}{', netem ' + netem if netem else ''}")
        add(f"seed {feed['seed']}, profile {feed['profile']}, {feed['channels']} channels, "
            f"{feed['symbols']} symbols, {'reliable' if feed['reliable'] else 'UNRELIABLE'}"
            f"{', ' + read(os.path.join(d, 'keyed'), '') if os.path.exists(os.path.join(d, 'keyed')) else ''}"
            f"{', ' + read(os.path.join(d, 'no_multicast'), '') if os.path.exists(os.path.join(d, 'no_multicast')) else ''}")
        add("")
        add(f"feed: offered {feed['rate_offered']} msg/s, achieved {feed['msgs_per_s']:.0f} msg/s, "
            f"{feed['datagrams_per_s']:.0f} datagrams/s, {feed['bytes_per_s'] / 1e6:.2f} MB/s; "
            f"{feed['messages']} messages in {feed['datagrams']} datagrams; digest {feed['digest']}")
        add(f"      NAKs received {feed['naks_received']}, repairs {feed['repairs']}, "
            f"back-pressure {feed['backpressure']}")
    add("")
    head = "book  method            " + "".join(f"{p:>9}" for p, _ in PCTS) + "   count"
    add("latency (us)")
    add(head)
    refl = {r["book"]: r for r in (feed or {}).get("reflector", [])}
    for b in books:
        r = refl.get(b)
        if r is None or r["count"] == 0:
            add(f"{b:>4}  reflector RTT/2    (no samples)")
            continue
        add(f"{b:>4}  reflector RTT/2   " + "".join(f"{r[k]:9.1f}" for _, k in PCTS) +
            f"  {r['count']:6d}")
    for b in books:
        ow = (book_json[b] or {}).get("oneway")
        if ow and ow.get("count", 0) > 0:
            add(f"{b:>4}  one-way (1 clock) " + "".join(f"{ow[k]:9.1f}" for _, k in PCTS) +
                f"  {ow['count']:6d}")
    if ping:
        add(f"base  rdps-ping RTT/2   {ping['min']:9.1f}{ping['p50']:9.1f}{'':>9}{ping['p99']:9.1f}"
            f"{ping['p999']:9.1f}{'':>27}  {ping['count']:6d}   (event mode, 64 B, feed to book 1)")
    else:
        add("base  rdps-ping RTT/2   (not measured: see ping.err)")
    if ping_loaded:
        add(f"base  ... during flow   {ping_loaded['min']:9.1f}{ping_loaded['p50']:9.1f}{'':>9}"
            f"{ping_loaded['p99']:9.1f}{ping_loaded['p999']:9.1f}{'':>27}  "
            f"{ping_loaded['count']:6d}   (the same ping while the feed runs)")
    if base:
        add(f"base  ib_send_lat -e    {base['t_min_us']:9.1f}{base['t_typical_us']:9.1f}"
            f"{'':>9}{base['p99_us']:9.1f}{base['p999_us']:9.1f}   (perftest, event mode, 64 B)")
    else:
        why = read(os.path.join(d, "baseline.txt"))
        add("base  ib_send_lat -e    (" + (why if why.startswith("not measured") else
                                       "not measured: see baseline.txt") + ")")
    if ping:
        ratios = [f"book {b} {refl[b]['p50_us'] / ping['p50']:.2f}" for b in books
                  if b in refl and refl[b]["count"] > 0 and ping["p50"] > 0]
        if ratios:
            add("reflector RTT/2 p50 over rdps-ping RTT/2 p50 (same run, same wait mode): " +
                ", ".join(ratios))
    if ping_loaded:
        ratios = [f"book {b} {refl[b]['p50_us'] / ping_loaded['p50']:.2f}" for b in books
                  if b in refl and refl[b]["count"] > 0 and ping_loaded["p50"] > 0]
        if ratios:
            add("... over the rdps-ping RTT/2 p50 measured during the flow: " + ", ".join(ratios))
    if stages:
        add("")
        add("round trip in stages (us, p50 / p99; the feed's stages on its clock, the book's from "
            "its echo, the wire legs halves of the rest)")
        add("book  " + "".join(f"{n:>17}" for n in STAGES) + f"{'round trip':>17}  count")
        for b, st in sorted(stages.items()):
            add(f"{b:>4}  " + "".join(f"{st[n]['p50']:8.1f}/{st[n]['p99']:<8.1f}" for n in
                                      STAGES + ("rtt",)) + f" {st['count']:6d}")
    add("")
    add("book  digest            match  symbols-differing  messages  missing  gaps  NAKs  "
        "recovered  lost  loss-events")
    feed_syms = symbol_digests(os.path.join(d, "feed.sym"))
    late_notes = []
    for b in books:
        j = book_json[b]
        if j is None:
            add(f"{b:>4}  (no summary: see book{b}.err)")
            continue
        match = feed is not None and j["digest"] == feed["digest"]
        differing = symbols_differing(feed_syms, symbol_digests(os.path.join(d, f"book{b}.sym")))
        j["symbols_differing"] = differing
        diff_text = "?" if differing is None else (f"{differing} of {len(feed_syms)}")
        add(f"{b:>4}  {j['digest']}  {'yes' if match else 'NO':>5}  {diff_text:>17}  "
            f"{j['messages']:8d}  {j['missing']:7d}  {j['gaps']:4d}  {j['naks_sent']:4d}  "
            f"{j['recovered']:9d}  {j['lost']:4d}  {j['loss_events']:11d}")
        lj = j.get("late_join", {})
        hist = j.get("history")
        if hist is not None:
            late_notes.append(
                f"book {b} joined late from the recording: {hist['channels_live']} channels "
                f"replayed from the recorder and merged onto the live stream, "
                f"{hist['channels_merging']} ended within their history "
                f"({hist['timeouts']} timed out, {hist['refused']} refused, "
                f"{lj.get('snapshots_applied', 0)} snapshots needed)")
        elif lj.get("channels", 0) > 0:
            late_notes.append(
                f"book {b} joined late: {lj['snapshots_applied']} channels caught up from "
                f"snapshots ({lj['imported_orders']} orders imported, {lj['held_packets']} "
                f"packets held meanwhile, {lj['covered_messages']} messages the snapshots "
                f"already covered, {lj['requests']} requests, {lj['snapshots_stale']} stale)")
    for note in late_notes:
        add(note)
    rec = load_json(os.path.join(d, "recorder.json"))
    replay = load_json(os.path.join(d, "replay.json"))
    replay_book = load_json(os.path.join(d, "replay_book.json"))
    if os.path.exists(os.path.join(d, "record")):
        add("")
        if rec is None:
            add("recorder: no summary (see recorder.err)")
        else:
            ratio = rec["raw_bytes"] / rec["stored_bytes"] if rec["stored_bytes"] else 0
            per_msg = rec["stored_bytes"] / rec["messages"] if rec["messages"] else 0
            add(f"recorder (rdps-record beside book 1): {rec['messages']} packets of "
                f"{feed['datagrams'] if feed else '?'} recorded, {rec['stored_bytes']} bytes on "
                f"disk ({per_msg:.1f} per packet, zstd {ratio:.2f}x of {rec['raw_bytes']} raw), "
                f"{rec['loss_events']} loss events, {rec['overrun_messages']} overruns, "
                f"peak queue {rec['queue_high_water']} B")
        if replay is not None:
            add(f"replay (rdps-replay --fast): {replay['messages']} packets in "
                f"{replay['elapsed_s']:.2f} s ({replay['msgs_per_s']:.0f}/s)")
        if replay_book is not None:
            same = feed is not None and replay_book["digest"] == feed["digest"]
            add(f"book fed from the recording: digest {replay_book['digest']} "
                f"({'matches the feed' if same else 'DIFFERS from the feed'}), "
                f"{replay_book['messages']} messages, missing {replay_book['missing']}")
        else:
            add("book fed from the recording: no summary (see replay_book.err, replay.err)")
    plots = plot(d, books, have_series) + plot_stages(d, stages)
    add("")
    add("plots: " + ", ".join(plots) if plots else "plots: none")
    if feed is not None and feed.get("snapshots", {}).get("sent", 0) > 0:
        sn = feed["snapshots"]
        taken = sn["requests"] + sn.get("requests_late", 0)
        unknown = sn.get("requests_unknown", 0)
        add(f"feed: {sn['sent']} book snapshots sent for late joiners ({sn['parts']} parts, "
            f"{sn['bytes'] / 1e3:.0f} kB, {taken} requests"
            + (f"; {unknown} came before their book's announcement or from none" if unknown else "")
            + ")")
    add("methods: reflector RTT/2 = md-book echoes every 5th datagram of channel 0 to the feed, "
        "which records half the round trip from the message's intended send time (open loop, "
        "warm-up excluded); one-way = a book on the feed's host (one clock) records each message's "
        "arrival minus its intended send time; guests do not share a clock, so across guests "
        "there is no one-way figure.")
    report = "\n".join(lines) + "\n"
    open(os.path.join(d, "report.txt"), "w").write(report)
    summary = {"device": device, "netem": netem, "revision": rev,
               "kernel": read(os.path.join(d, "kernel"), None), "feed": feed,
               "books": {str(b): book_json[b] for b in books}, "baseline": base,
               "recorder": rec, "replay": replay, "replay_book": replay_book,
               "ping_baseline": ping, "ping_during_flow": ping_loaded, "stages": {str(b): st for b, st in stages.items()},
               "plots": [p for p in plots if p.endswith(".png")]}
    json.dump(summary, open(os.path.join(d, "summary.json"), "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
