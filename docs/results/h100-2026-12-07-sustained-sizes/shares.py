#!/usr/bin/env python3
"""Reads sustain-sizes-log.txt (in the folder given as the one argument, else
this script's folder) and prints, for each size and
each pass over the phases, the wide kernel's share of cuBLAS's held
throughput in the same pass, its FLOP per SM cycle against the mma.sync
chains' and cuBLAS's, and its SM clock over cuBLAS's; then the share in the
alternating phase, with each side's rate there over its held rate (the
mean of the two passes), to standard output: `python3 shares.py > shares.txt`
makes the folder's shares.txt."""
import pathlib
import re
import sys

here = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else pathlib.Path(__file__).parent
sizes = {}
side = None
for line in (here / "sustain-sizes-log.txt").read_text().splitlines():
    m = re.search(r"GEMMs at (\d+)\^3", line)
    if m:
        side = int(m.group(1))
        sizes[side] = {"passes": {}, "alternating": None}
        continue
    cells = [c.strip() for c in line.split("|")]
    if side and len(cells) == 9 and cells[0].isdigit():
        sizes[side]["passes"].setdefault(int(cells[0]), {})[cells[1]] = (
            float(cells[3]), float(cells[6]), float(cells[8]))
    m = re.match(r"alternating batches of 10 \| (.+?) ([\d.]+) TFLOP/s, (.+?) ([\d.]+) TFLOP/s", line)
    if side and m:
        sizes[side]["alternating"] = (float(m.group(2)), float(m.group(4)))
for side, got in sizes.items():
    print(f"{side}^3:")
    held = {"wide": [], "cublas": []}
    for rnd, by in sorted(got["passes"].items()):
        wide = next(v for k, v in by.items() if k.startswith("gemm_bf16_swizzled_wide"))
        cublas = next(v for k, v in by.items() if k.startswith("cublasGemmEx"))
        chains = next(v for k, v in by.items() if k.startswith("mma_peak"))
        held["wide"].append(wide[0])
        held["cublas"].append(cublas[0])
        print(
            f"  pass {rnd}: held, the wide kernel {wide[0]:.1f} TFLOP/s at {wide[1]:.0f} MHz, cuBLAS {cublas[0]:.1f} at"
            f" {cublas[1]:.0f} MHz: {100 * wide[0] / cublas[0]:.1f}% of cuBLAS; per SM cycle the wide kernel does"
            f" {100 * wide[2] / chains[2]:.1f}% of the chains' FLOP and {100 * wide[2] / cublas[2]:.1f}% of cuBLAS's;"
            f" its clock {wide[1] / cublas[1]:.3f} times cuBLAS's"
        )
    w, c = got["alternating"]
    hw, hc = (sum(v) / len(v) for v in (held["wide"], held["cublas"]))
    print(
        f"  alternating: {100 * w / c:.1f}% of cuBLAS; the wide kernel at {100 * w / hw:.1f}% of its held rate,"
        f" cuBLAS at {100 * c / hc:.1f}% of its own"
    )
