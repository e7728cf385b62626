import re,sys,subprocess
# For each C load (LDG.E.64.CONSTANT) of each tensor-core function: instructions until its
# destination register is first read. Short = the load's latency is exposed.
cub=sys.argv[1]; only=sys.argv[2:] 
out=subprocess.run(['/work/main/target/tools/sass/nvidia/cu13/bin/cuobjdump','-sass',cub],capture_output=True,text=True).stdout
func=None; ins={}
for l in out.splitlines():
    m=re.search(r'Function : (\w+)',l)
    if m: func=m.group(1); ins[func]=[]; continue
    m=re.match(r'\s+/\*[0-9a-f]{4}\*/\s+(.*?);',l)
    if m and func: ins[func].append(m.group(1))
for f,L in sorted(ins.items()):
    if only and f not in only: continue
    if not re.match(r'gemm_(bf16|f16)',f): continue
    d=[]
    for i,x in enumerate(L):
        m=re.search(r'LDG\.E\.64\.CONSTANT (R\d+),',x)
        if not m: continue
        r=int(m.group(1)[1:]); regs={f'R{r}',f'R{r+1}'}
        for k in range(i+1,len(L)):
            ops=L[k].split(None,1)
            body=L[k]
            if body.startswith('@'): body=body.split(None,1)[1]
            parts=body.split(None,1)
            if len(parts)<2: continue
            srcs=re.findall(r'R\d+',parts[1])
            # first operand is usually dest; sources are the rest (stores: all are sources)
            if not parts[0].startswith('ST'): srcs=srcs[1:]
            if regs & set(srcs): d.append(k-i); break
    if d: 
        d.sort(); print(f, 'C loads',len(d),'distance to first use: min',d[0],'median',d[len(d)//2],'<=12:',sum(1 for x in d if x<=12))
