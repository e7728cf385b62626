#!/usr/bin/env python3
"""For each SASS listing named (cuobjdump -sass of one gemm_bf16_mma cubin), prints the main
loop's length and its instruction counts by opcode. The loop is taken from the target of the
first branch after the last BAR.SYNC up to that branch. usage: loops.py NAME=FILE.sass ..."""
import collections
import re
import sys

for arg in sys.argv[1:]:
    name, path = arg.split("=", 1)
    raw = [line for line in open(path) if "*/" in line]
    addr = [int(line.split("/*")[1].split("*/")[0], 16) for line in raw]
    ins = [line.split("*/", 1)[1].strip() for line in raw]
    last_bar = max(i for i, line in enumerate(ins) if "BAR.SYNC" in line)
    end = next(i for i in range(last_bar, len(ins)) if "BRA" in ins[i])
    start = addr.index(int(re.search(r"0x([0-9a-f]+)", ins[end]).group(1), 16))
    ops = collections.Counter(
        re.sub(r"^@!?U?P\w+\s+", "", line).split()[0].split(".")[0] for line in ins[start : end + 1]
    )
    counts = ", ".join(f"{op} {n}" for op, n in sorted(ops.items(), key=lambda x: (-x[1], x[0])))
    print(f"{name}: {end - start + 1} instructions: {counts}")
