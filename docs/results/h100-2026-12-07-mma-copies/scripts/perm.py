#!/usr/bin/env python3
"""Writes gemm_bf16_mma's sm_80 PTX (arg 1) with the loop's four cp.async blocks in every order,
to perm-<order>.ptx, the shared definitions first. Orders name the blocks 0 = A0, 1 = A1, 2 = B0, 3 = B1."""
import itertools, sys
src = open(sys.argv[1]).read()
start = src.index('// %bb.3:')
end = src.index('bra.uni \t$L__BB0_4;', start)
body = src[start:end].split('\n')
head, lines = body[0], body[1:]
common_keys = ('cvt.u32.u64 \t%r84', 'setp.lt.u32', 'and.b32 \t%r85', 'setp.ne.b32 \t%p16', 'selp.b32 \t%r86', 'mul.wide.u32 \t%rd45')
common, blocks, cur = [], [], []
for l in lines:
    if any(k in l for k in common_keys):
        common.append(l); continue
    cur.append(l)
    if '// end inline asm' in l:
        blocks.append(cur); cur = []
tail = cur
assert len(blocks) == 4, len(blocks)
for order in itertools.permutations(range(4)):
    new = [head] + common + sum((blocks[i] for i in order), []) + tail
    name = ''.join(map(str, order))
    open(f'perm-{name}.ptx', 'w').write(src[:start] + '\n'.join(new) + src[end:])
