# Sums one profiled launch of wg-source.csv (ncu --page source --csv) by region: prologue, main loop, epilogue, each with its top stall reasons; then the 25 instructions with the most samples. Usage: regions.py SOURCE.csv [LAUNCH]
import csv,sys,io
text=open(sys.argv[1]).read().split('"Kernel Name"')
which=int(sys.argv[2]) if len(sys.argv)>2 else 0
blocks=[b for b in text if '"Address"' in b]
b=blocks[which]
lines=b[b.index('"Address"'):]
rows=list(csv.DictReader(io.StringIO(lines)))
tot=sum(int(r['Warp Stall Sampling (All Samples)']) for r in rows)
print('instructions',len(rows),'samples',tot)
# regions by markers
idx_first_hgmma=None
marks=[]
for i,r in enumerate(rows):
    s=r['Source'].strip()
    if 'WARPGROUP.DEPBAR.LE gsb0, 0x0' in s or 'DEPBAR.LE SB0, 0x0' in s or s.startswith('EXIT') or 'BAR.SYNC' in s: marks.append(i)
cum=0
stallcols=[c for c in rows[0].keys() if c.startswith('stall_') and 'Not Issued' not in c]
def region(a,b,name):
    rs=rows[a:b]; s=sum(int(r['Warp Stall Sampling (All Samples)']) for r in rs)
    agg={c:sum(int(r[c] or 0) for r in rs) for c in stallcols}
    top=sorted(agg.items(),key=lambda x:-x[1])[:5]
    print(f"{name:12s} [{a}:{b}) samples {s} ({100*s/tot:.1f}%)", top)
# epilogue = from last 'DEPBAR.LE SB0, 0x0' or WARPGROUP gsb0 0x0 minus ~30
ep=[i for i,r in enumerate(rows) if 'WARPGROUP.DEPBAR.LE gsb0, 0x0' in r['Source']][-1]
loopbar=[i for i,r in enumerate(rows) if 'BAR.SYNC' in r['Source']]
print('bar.sync at',loopbar,'final wgmma wait at',ep)
lo=loopbar[0]-15
region(0,lo,'prologue')
region(lo,ep-40,'main loop')
region(ep-40,len(rows),'epilogue')
top=sorted(rows,key=lambda r:-int(r['Warp Stall Sampling (All Samples)']))[:25]
for r in top: print(rows.index(r), r['Warp Stall Sampling (All Samples)'], r['Source'].strip()[:60], {c:r[c] for c in stallcols if int(r[c] or 0)>0.2*int(r['Warp Stall Sampling (All Samples)'])})
