#!/usr/bin/env python3
"""Writes gemm_bf16_mma's PTX (arg 1) to arg 2 with every mma.sync in that entry replaced by
bitwise ops that keep the ldmatrix results in use: d0 = c0^a0^b0, d1 = c1^a1^b1, d2 = c2^a2,
d3 = c3^a3 (so the loop is copies, ldmatrix and barriers; D is garbage)."""
import re, sys
src = open(sys.argv[1]).read().split('\n')
s = next(i for i, l in enumerate(src) if l.startswith('.visible .entry gemm_bf16_mma('))
e = next(i for i in range(s, len(src)) if src[i].startswith('}'))
pat = re.compile(r'\s*mma\.sync\.aligned\.m16n8k16\S*\s*\{([^}]*)\},\s*\{([^}]*)\},\s*\{([^}]*)\},\s*\{([^}]*)\};')
n = 0
for i in range(s, e):
    m = pat.match(src[i])
    if not m: continue
    d, a, b, c = ([x.strip() for x in g.split(',')] for g in m.groups())
    src[i] = (f'\tlop3.b32 {d[0]}, {c[0]}, {a[0]}, {b[0]}, 0x96; lop3.b32 {d[1]}, {c[1]}, {a[1]}, {b[1]}, 0x96; '
              f'xor.b32 {d[2]}, {c[2]}, {a[2]}; xor.b32 {d[3]}, {c[3]}, {a[3]};')
    n += 1
print(n, 'mma replaced', file=sys.stderr)
open(sys.argv[2], 'w').write('\n'.join(src))
