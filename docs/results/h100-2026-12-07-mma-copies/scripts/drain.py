#!/usr/bin/env python3
"""For the main loop of a cuobjdump -sass listing of gemm_bf16_mma: the loop's barrier (the
second-to-last BAR.SYNC of the kernel) and the four LDGSTS before it; for each, its registers and
the first later instruction that overwrites one of them (a write that must wait for that LDGSTS
to leave the MIO queue), marked as before or after that barrier. usage: drain.py file.sass"""
import re, sys
lines = [l.split('*/', 1)[1].strip() for l in open(sys.argv[1]) if '*/' in l]
# main loop: the LDGSTS group that precedes the second-to-last BAR.SYNC pair
bars = [i for i, l in enumerate(lines) if 'BAR.SYNC' in l]
bar = bars[-2]
ld = [i for i, l in enumerate(lines[:bar]) if 'LDGSTS' in l][-4:]
def width(op):
    if op.startswith('IMAD.WIDE') or op.startswith('LDC.64') or op.startswith('MOV.64'): return 2
    if op.startswith('LDSM'): return int(op[-1])
    if op.startswith('HMMA'): return 4
    return 1
def dest(l):
    l = re.sub(r'^@!?U?P\w+\s+', '', l)
    parts = l.split(None, 1)
    if len(parts) < 2: return set()
    op, rest = parts
    if op.split('.')[0] in ('LDGSTS', 'STS', 'STG', 'BAR', 'ISETP', 'BRA', 'DEPBAR', 'LDGDEPBAR', 'LDS', 'NOP'): return set()
    m = re.match(r'R(\d+)\b', rest)
    if not m: return set()
    r = int(m.group(1)); return {r + j for j in range(width(op))}
def regs(l):
    out = set()
    for m in re.finditer(r"\bR(\d+)(\.64)?", l.split(None, 1)[1] if not l.startswith('@') else l.split(None, 2)[2]):
        r = int(m.group(1)); out |= {r, r + 1} if m.group(2) else {r}
    return out
print(f"loop BAR at {bar}; LDGSTS at {ld}")
for i in ld:
    rs = regs(lines[i]); hit = None
    for j in range(i + 1, len(lines)):
        if dest(lines[j]) & rs: hit = j; break
    where = 'after BAR' if hit is None or hit > bar else 'before BAR'
    print(f"  {i}: {lines[i]:60s} regs {sorted(rs)} first overwritten at {hit} ({where}): {lines[hit] if hit else ''}")
