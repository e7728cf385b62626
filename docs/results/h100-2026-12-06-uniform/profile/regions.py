# Usage: regions.py SOURCE.csv LAUNCH...: per launch of an ncu --page source --csv export (each launch printed twice there; the second copy skipped), its warp samples by region (prologue, main loop = from the target of the backward branch after the loop's HGMMAs to that branch, epilogue) with the top stalls.
import csv,sys,io,re
text=open(sys.argv[1]).read().split('"Kernel Name"')
blocks=[b for b in text if "\"Address\"" in b][::2]
def parse(b):
    return list(csv.DictReader(io.StringIO(b[b.index('"Address"'):])))
def s(r,c='Warp Stall Sampling (All Samples)'): return int(r[c] or 0)
for wi in [int(x) for x in sys.argv[2:]]:
    rows=parse(blocks[wi])
    addr=[int(r['Address'],16) for r in rows]
    # main loop: backward branch after the last HGMMA of the loop
    lb=None
    for i,r in enumerate(rows):
        m=re.search(r'BRA (0x[0-9a-f]+)',r['Source'])
        if m and int(m.group(1),16)<addr[i] and any('HGMMA' in rows[j]['Source'] for j in range(max(0,i-5),i)):
            lb=(addr.index(int(m.group(1),16)),i+1)
    stallcols=[c for c in rows[0] if c.startswith('stall_') and 'Not Issued' not in c]
    tot=sum(s(r) for r in rows)
    inst=sum(int(r['Instructions Executed'] or 0) for r in rows)
    print(f"launch {wi}: {len(rows)} instructions, samples {tot}, executed {inst}, loop rows {lb}")
    for name,(a,b) in [('prologue',(0,lb[0])),('loop',lb),('epilogue',(lb[1],len(rows)))]:
        rs=rows[a:b]; t=sum(s(r) for r in rs)
        agg=sorted(((c[6:],sum(s(r,c) for r in rs)) for c in stallcols),key=lambda x:-x[1])[:6]
        print(f"  {name:9s} samples {t:6d} ({100*t/tot:4.1f}%) inst {sum(int(r['Instructions Executed'] or 0) for r in rs):9d}", ' '.join(f"{k}={v}" for k,v in agg))
