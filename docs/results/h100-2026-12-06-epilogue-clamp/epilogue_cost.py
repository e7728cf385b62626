#!/usr/bin/env python3
"""What the tensor-core epilogues cost in SASS: epilogue-cost.txt.

usage: epilogue_cost.py CUBIN
For each gemm_bf16_* / gemm_f16_* function with a tensor-core instruction: the
instructions from its last HMMA/HGMMA to the end (every line cuobjdump prints
there, NOP padding and the final self-branch included), how many of them are SEL,
P2R and LOP3 (predicates saved to and rebuilt from registers), the
runs of C loads (LDG.E.64) among the D stores (STG.E.64), and, for the Hopper
kernels, how many C loads are issued before the last `WARPGROUP.DEPBAR` (the wait
for the final wgmma, so those loads overlap it). Reads SASS with
../cpu-2026-12-06-epilogue-order/epilogue_order.py's `functions` (cuobjdump from
target/tools). Run from the repository's root.
"""
import importlib.util
import os
import re
import sys

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "epilogue_order", os.path.join(here, "..", "cpu-2026-12-06-epilogue-order", "epilogue_order.py"))
order = importlib.util.module_from_spec(spec)
spec.loader.exec_module(order)


def main():
    for name, ins in sorted(order.functions(sys.argv[1]).items()):
        if not re.match(r"gemm_(bf16|f16)", name):
            continue
        tc = [i for i, l in enumerate(ins) if "HMMA" in l or "HGMMA" in l]
        if not tc:
            continue
        tail = ins[tc[-1]:]
        ls = "".join("L" if "LDG.E.64" in l else "S" if "STG.E.64" in l else "" for l in tail)
        runs = len(re.findall(r"L+", ls))
        count = {op: sum(1 for l in tail if re.search(rf"(^|\s){op}(\s|\.)", l)) for op in ("SEL", "P2R", "LOP3")}
        ops = ", ".join(f"{n} {op}" for op, n in count.items())
        line = f"{name}: {len(tail)} instructions from the last tensor-core one, {ops}, {runs} runs of loads"
        waits = [i for i, l in enumerate(tail) if "WARPGROUP.DEPBAR" in l]
        if waits:
            early = sum(1 for l in tail[:waits[-1]] if "LDG.E.64" in l)
            line += f", {early} of {ls.count('L')} C loads before the last WARPGROUP.DEPBAR"
        print(line)


if __name__ == "__main__":
    main()
