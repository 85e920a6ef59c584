#!/usr/bin/env python3
"""How far memcap's progress estimate swings: reads memcap's stderr on stdin (pipe it:
`memcap sweep ... 2>&1 >/dev/null | scripts/progress_swing.py [-v]`; -v prints each
prediction as it comes), passes it through to
stderr, stamps each progress line with the time it arrived, and at the end prints, for every
bar (one per label: "sweep NAME", "tuning", "tuning (round 2)", ...), the total time the
bar's ETA predicted (time since the bar's first line + ETA) from 10% done on, its smallest
and largest, their ratio, and the time the bar really took.

The issue's bar: once 10% is done, the prediction should not swing by more than 2x.
"""
import re
import sys
import time

LINE = re.compile(r"^(?P<label>.+?): (?P<done>\d+)/(?P<total>\d+) cells \((?P<pct>\d+)%\).*?(ETA (?P<eta>\?|[\d.]+s)|took (?P<took>\d+)s)")


def main():
    start = {}
    predictions = {}
    finished = {}
    buf = ""
    while True:
        chunk = sys.stdin.read(1)
        if not chunk:
            break
        sys.stderr.write(chunk)
        if chunk not in "\r\n":
            buf += chunk
            continue
        now = time.monotonic()
        m = LINE.match(buf.strip())
        buf = ""
        if not m:
            continue
        label = m.group("label")
        start.setdefault(label, now)
        if m.group("took"):
            finished[label] = now - start[label]
        elif m.group("eta") and m.group("eta") != "?" and int(m.group("pct")) >= 10:
            predictions.setdefault(label, []).append(now - start[label] + float(m.group("eta")[:-1]))
            if "-v" in sys.argv[1:]:
                print(f"{label}: {m.group('pct')}% at {now - start[label]:.1f} s, ETA {m.group('eta')}", file=sys.stderr)
    print("bar | predictions from 10% | smallest s | largest s | ratio | took s")
    for label in start:
        p = predictions.get(label, [])
        took = finished.get(label)
        if p:
            print(f"{label} | {len(p)} | {min(p):.0f} | {max(p):.0f} | {max(p) / max(min(p), 1e-9):.2f} | "
                  f"{'' if took is None else f'{took:.0f}'}")
        else:
            print(f"{label} | 0 | | | | {'' if took is None else f'{took:.0f}'}")


if __name__ == "__main__":
    main()
