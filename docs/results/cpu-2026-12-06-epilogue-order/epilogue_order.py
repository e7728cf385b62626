#!/usr/bin/env python3
"""The order of C loads and D stores in the epilogue of tensor-core GEMM kernels' SASS.

usage: epilogue_order.py CUBIN [FUNCTION...]
For each function (default: every gemm_bf16_* / gemm_f16_* one with a tensor-core
instruction), the C loads (LDG.E.64, through the read-only path or not) and the D
stores (STG.E.64) after its last HMMA/HGMMA, in program order, as a string of L and
S, and the number of runs of loads. A store waits for the load of its pair, so each
run of loads followed by a store is one wait on a load's latency; where a row's
stores come after all its loads, there is one run a row. Needs cuobjdump (CUDA 13's,
from PyPI's nvidia-cuda-cuobjdump, as `cargo xtask asm` installs under target/tools).
Run from the repository's root.
"""
import re
import subprocess
import sys

CUOBJDUMP = "target/tools/sass/nvidia/cu13/bin/cuobjdump"


def functions(cubin):
    out = subprocess.run([CUOBJDUMP, "-sass", cubin], capture_output=True, text=True, check=True).stdout
    found, name = {}, None
    for line in out.splitlines():
        m = re.search(r"Function : (\w+)", line)
        if m:
            name = m.group(1)
            found[name] = []
            continue
        m = re.match(r"\s+/\*[0-9a-f]{4,}\*/\s+(.*?);", line)
        if m and name:
            found[name].append(m.group(1))
    return found


def main():
    cubin, only = sys.argv[1], sys.argv[2:]
    for name, ins in sorted(functions(cubin).items()):
        if only and name not in only or not re.match(r"gemm_(bf16|f16)", name):
            continue
        mmas = [i for i, x in enumerate(ins) if re.search(r"\b(HMMA|HGMMA)\b", x)]
        if not mmas:
            continue  # an empty body (a Hopper twin built for another architecture)
        last_mma = mmas[-1]
        seq = ""
        for x in ins[last_mma:]:
            if re.search(r"\bLDG\.E\.64\b", x):
                seq += "L"
            elif re.search(r"\bSTG\.E\.64\b", x):
                seq += "S"
        print(f"{name}: {seq.count('L')} C loads, {seq.count('S')} D stores, "
              f"{seq.count('LS') + seq.endswith('L')} runs of loads")
        print(f"  {seq}")


if __name__ == "__main__":
    main()
