#!/usr/bin/env python3
"""Reads sustain-log.txt (this folder) and prints, per pass over the phases
(the log's first column), each kernel's share of cuBLAS's sustained
throughput in the same pass, its FLOP per SM cycle against the mma.sync
chains' (mma_peak's) and cuBLAS's, and its SM clock over cuBLAS's. Output:
shares.txt."""
import pathlib

here = pathlib.Path(__file__).parent
rows = {}
rest = {}
for line in (here / "sustain-log.txt").read_text().splitlines():
    cells = [c.strip() for c in line.split("|")]
    if len(cells) == 9 and cells[0].isdigit():
        rows.setdefault(int(cells[0]), []).append(
            (cells[1], float(cells[3]), float(cells[6]), float(cells[7]), float(cells[8]))
        )
    elif len(cells) == 3 and cells[0] == "from rest":
        rest[cells[1]] = float(cells[2].split(",")[1].split()[0])
for rnd, phases in sorted(rows.items()):
    by = {name: (tf, mhz, w, fpc) for name, tf, mhz, w, fpc in phases}
    cublas = next(v for k, v in by.items() if k.startswith("cublasGemmEx"))
    chains = next(v for k, v in by.items() if k.startswith("mma_peak"))
    print(f"pass {rnd}:")
    for name, (tf, mhz, w, fpc) in by.items():
        print(
            f"  {name}: {tf:.1f} TFLOP/s at {mhz:.0f} MHz and {w:.0f} W;"
            f" {100 * tf / cublas[0]:.1f}% of cuBLAS's sustained TFLOP/s;"
            f" {fpc:.0f} FLOP per SM cycle, {100 * fpc / chains[3]:.1f}% of the mma.sync chains' per cycle"
            f" and {100 * fpc / cublas[3]:.1f}% of cuBLAS's; its SM clock {mhz / cublas[1]:.3f} times cuBLAS's"
        )
cub = next(v for k, v in rest.items() if k.startswith("cublasGemmEx"))
print("one launch after 2 s of rest:")
for name, tf in rest.items():
    print(f"  {name}: {tf:.1f} TFLOP/s, {100 * tf / cub:.1f}% of cuBLAS's one launch from rest")
