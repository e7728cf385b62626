#!/usr/bin/env python3
"""Reads the rig's medians from rig-parts.txt (call 3), rig-parts2.txt (call 4) and rig-parts3.txt
(call 5) and prints, per call and shape, the Rust variant's median time over the twin variant's for
each pair (R/T, R0/T0, R1/T1, R2/T2, R3/T3) to standard output: `python3 parts.py > parts.txt` makes the folder's parts.txt.
Above 1, the Rust side took longer."""
import pathlib
import re

here = pathlib.Path(__file__).parent
LINE = re.compile(r"^(\d+x\d+x\d+)\s+(\w+): median ([\d.]+) ms")
for call, name in ((3, "rig-parts.txt"), (4, "rig-parts2.txt"), (5, "rig-parts3.txt")):
    medians = {}
    for line in (here / name).read_text().splitlines():
        m = LINE.match(line)
        if m:
            medians.setdefault(m.group(1), {})[m.group(2)] = float(m.group(3))
    for shape, got in medians.items():
        pairs = [(r, "T" + r[1:]) for r in got if r.startswith("R") and "T" + r[1:] in got]
        cells = [f"{r}/{t} {got[r] / got[t]:.4f}" for r, t in pairs]
        print(f"call {call}, {shape}: " + ", ".join(cells))
