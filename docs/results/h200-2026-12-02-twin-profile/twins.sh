#!/usr/bin/env bash
# Nsight Compute on gemm_bf16_pipelined, Rust and its CUDA C twin, as lab
# gemm --compare launches them (the first 16 launches of that kernel: the
# checks, then the interleaved timings at 4096^3).
set -u
out=$1; here=$(cd "$(dirname "$0")" && pwd); cd "$here"
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu); export NCU=$ncu
echo "== $(date -u +%FT%TZ) start" > "$out/log.txt"
s=$(date +%s)
"$ncu" --clock-control none --set full --section SourceCounters --import-source no -k 'regex:^gemm_bf16_pipelined$' --launch-skip 75 --launch-count 10 -o "$here/twins" ./lab gemm --compare > "$out/lab-compare.txt" 2>&1
echo "profile: rc=$? $(( $(date +%s) - s )) s" >> "$out/log.txt"
"$ncu" -i "$here/twins.ncu-rep" --page raw --csv --metrics launch__grid_size,launch__registers_per_thread,gpu__time_duration.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,lts__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,sm__warps_active.avg.per_cycle_active > "$out/launches.csv" 2>&1
"$ncu" -i "$here/twins.ncu-rep" --page raw --csv > "$out/raw.csv" 2>&1
python3 - "$out" <<'PY'
import csv,sys,subprocess
out=sys.argv[1]
rows=list(csv.reader(open(out+'/launches.csv')))
hi=[i for i,r in enumerate(rows) if r and r[0]=='ID'][0]
h=rows[hi]; data=rows[hi+2:]
g=h.index('launch__grid_size'); r=h.index('launch__registers_per_thread')
pick={}
for d in data:
    if d[g].replace(',','')=='1024' and d[r] not in pick: pick[d[r]]=d[0]
open(out+'/log.txt','a').write(f"picked launches by registers: {pick}\n")
for regs,i in pick.items():
    with open(f"{out}/source-{regs}regs.txt",'w') as f:
        import os; subprocess.run([os.environ['NCU'],'-i','twins.ncu-rep','--page','source','--print-source','sass','--launch-skip',str(int(i)),'--launch-count','1'],stdout=f,stderr=subprocess.STDOUT)
PY
echo "== $(date -u +%FT%TZ) end" >> "$out/log.txt"
cat "$out/log.txt"
