#!/usr/bin/env python3
"""Writes gemm_bf16_mma's PTX (arg 1) to arg 2 with every ldmatrix in that entry replaced by moves
of its shared address into its outputs (so the loop keeps its copies and barriers but reads no
shared memory; D is garbage). Use after nomma.py."""
import re, sys
src = open(sys.argv[1]).read().split('\n')
s = next(i for i, l in enumerate(src) if l.startswith('.visible .entry gemm_bf16_mma('))
e = next(i for i in range(s, len(src)) if src[i].startswith('}'))
pat = re.compile(r'\s*ldmatrix\.sync\.aligned\S*\s*\{([^}]*)\},\s*\[([^\]]*)\];')
n = 0
for i in range(s, e):
    m = pat.match(src[i])
    if not m: continue
    outs = [x.strip() for x in m.group(1).split(',')]
    addr = m.group(2).strip()
    src[i] = '\t' + ' '.join(f'mov.b32 {o}, {addr};' for o in outs)
    n += 1
print(n, 'ldmatrix replaced', file=sys.stderr)
open(sys.argv[2], 'w').write('\n'.join(src))
