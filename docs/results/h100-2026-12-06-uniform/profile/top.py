# Usage: top.py SOURCE.csv LAUNCH FIRST_ADDRESS LAST_ADDRESS (hex): each SASS instruction of that range of one launch with its warp samples and its three largest stall reasons.
import csv,sys,io,re
text=open(sys.argv[1]).read().split('"Kernel Name"')
blocks=[b for b in text if '"Address"' in b][::2]
wi=int(sys.argv[2]); a0,a1=int(sys.argv[3],16),int(sys.argv[4],16)
rows=list(csv.DictReader(io.StringIO(blocks[wi][blocks[wi].index('"Address"'):])))
sc=[c for c in rows[0] if c.startswith('stall_') and 'Not Issued' not in c]
for r in rows:
    a=int(r['Address'],16)
    if a0<=a<=a1:
        t=int(r['Warp Stall Sampling (All Samples)'] or 0)
        st=sorted(((c[6:],int(r[c] or 0)) for c in sc),key=lambda x:-x[1])[:3]
        print(f"{a:05x} {t:5d} {r['Source'].strip()[:62]:62s} {' '.join(f'{k}={v}' for k,v in st if v)}")
