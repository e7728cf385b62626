#!/usr/bin/env python3
"""The GEMM comparison of two or more builds, row by row: builds.txt.

Each argument is one process's `lab gemm --compare --json` output. For every
compared row it prints, per process, the commit that built `lab`, the Rust
kernel's median time (ms), the median Rust / C time ratio with its trial
range, and the verdict.
Usage: python3 compare_builds.py FILE.jsonl... > builds.txt
"""
import json
import sys


def rows(path):
    with open(path) as f:
        return [r for r in map(json.loads, (l for l in f if l.startswith("{"))) if "ratio" in r]


def main(paths):
    runs = [(p, rows(p)) for p in paths]
    ctx = runs[0][1][0]["context"]
    print(f"{ctx['gpu']} {ctx['gpu_uuid']}, compute capability {ctx['compute_capability']}, "
          f"driver {ctx['driver_version']} (CUDA {ctx['driver_cuda']}), {ctx['toolchain']}, "
          f"size {ctx['sizes']['compared']}")
    for p, rs in runs:
        c = rs[0]["context"]
        assert c["gpu_uuid"] == ctx["gpu_uuid"], p
        print(f"  {p}: commit {c['git_commit']}, started {c['date']}")
    for i, first in enumerate(runs[0][1]):
        print(first["variant"])
        for p, rs in runs:
            r = rs[i]
            assert r["variant"] == first["variant"], p
            print(f"  {r['context']['git_commit']:<14} Rust {r['rust_ms']:.5f} ms  C {r['c_ms']:.5f} ms  "
                  f"ratio {r['ratio']:.4f} [{r['ratio_min']:.4f}, {r['ratio_max']:.4f}] {r['verdict']}  ({p})")


if __name__ == "__main__":
    main(sys.argv[1:])
