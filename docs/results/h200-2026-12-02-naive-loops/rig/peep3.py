import re,sys
INV={'eq':'ne','ne':'eq','lt':'ge','ge':'lt','le':'gt','gt':'le','lo':'hs','hs':'lo','ls':'hi','hi':'ls'}
def fold3(s):
    """Two-jump loop latch -> NVRTC's form: invert the integer setp that only
    the exit branch reads, and branch back to the header on it."""
    out=[]; n=0
    for ent in re.split(r'(?=\n(?:\.visible )?\.entry )', s):
        pat=re.compile(r'\t@(%p\d+) bra \t(\$L__BB\d+_\d+);\n\tbra\.uni \t(\$L__BB\d+_\d+);\n\2:')
        def rep(m):
            nonlocal ent, n
            p=m.group(1)
            uses=len(re.findall(re.escape(p)+r'\b', ent))
            sp=re.search(r'\tsetp\.(eq|ne|lt|ge|le|gt|lo|hs|ls|hi)\.([sub]\d+) \t'+re.escape(p)+r',', ent)
            if uses!=2 or not sp: return m.group(0)
            n+=1
            return f'\t@{p} bra \t{m.group(3)};\n{m.group(2)}:'
        new=pat.sub(rep, ent)
        # invert the setps of the folded predicates
        for m in pat.finditer(ent):
            p=m.group(1)
            if len(re.findall(re.escape(p)+r'\b', ent))!=2: continue
            new=re.sub(r'\tsetp\.(eq|ne|lt|ge|le|gt|lo|hs|ls|hi)\.([sub]\d+) \t'+re.escape(p)+r',', lambda q: f'\tsetp.{INV[q.group(1)]}.{q.group(2)} \t{p},', new, count=1)
        out.append(new)
    return ''.join(out), n
if __name__=='__main__':
    s,n=fold3(open(sys.argv[1]).read()); open(sys.argv[2],'w').write(s); print(sys.argv[2], n, 'folded')
