#!/usr/bin/env python3
"""Reads the rig's output from rig-parts.txt (call 3), rig-parts2.txt (call 4), rig-parts3.txt
(call 5) and rig-parts4.txt (call 6) and prints to standard output, per call and shape, for each
pair (R/T, R0/T0, R1/T1, R2/T2, R3/T3): the Rust variant's median time over the twin variant's,
then the same ratio trial by trial (each variant's "ratio to R" in a trial, Rust's over the
twin's: 16 trials, from ratios printed to 4 decimals) as its median, minimum, maximum and the
count of trials above 1. `python3 parts.py > parts.txt` makes the folder's parts.txt. Above 1,
the Rust side took longer."""
import pathlib
import re
import statistics

here = pathlib.Path(__file__).parent
LINE = re.compile(r"^(\d+x\d+x\d+)\s+(\w+): median ([\d.]+) ms.*; trials ([\d. ]+)$")
CALLS = ((3, "rig-parts.txt"), (4, "rig-parts2.txt"), (5, "rig-parts3.txt"), (6, "rig-parts4.txt"))
for call, name in CALLS:
    medians, trials = {}, {}
    for line in (here / name).read_text().splitlines():
        m = LINE.match(line)
        if m:
            medians.setdefault(m.group(1), {})[m.group(2)] = float(m.group(3))
            trials.setdefault(m.group(1), {})[m.group(2)] = [float(x) for x in m.group(4).split()]
    for shape, got in medians.items():
        pairs = [(r, "T" + r[1:]) for r in got if r.startswith("R") and "T" + r[1:] in got]
        print(f"call {call}, {shape}:")
        for r, t in pairs:
            q = [a / b for a, b in zip(trials[shape][r], trials[shape][t])]
            print(
                f"  {r}/{t} {got[r] / got[t]:.4f}; by trial median {statistics.median(q):.4f}, "
                f"{min(q):.4f} to {max(q):.4f}, above 1 in {sum(x > 1 for x in q)} of {len(q)}"
            )
