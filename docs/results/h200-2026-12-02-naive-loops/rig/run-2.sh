#!/usr/bin/env bash
set -u
here=$(cd "$(dirname "$0")" && pwd); cd "$here"; out=$1; log=$out/log.txt
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu)
{ echo "== $(date -u +%FT%TZ)"; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader; } >> $log
./rig matmul 512 200 16 r=r-mm.ptx c=c-mm.ptx c8=c8-mm.ptx r4=r4-mm.ptx v1=mm_v1.ptx:mm_v1 v2=mm_v2.ptx:mm_v2 rmax24=rmax24-mm.ptx rmax28=rmax28-mm.ptx rnomov=rnomov-mm.ptx rbot=rbot-mm.ptx rnomovbot=rnomovbot-mm.ptx rf=rf-mm.ptx cb=cb-mm.ptx c8b=c8b-mm.ptx >> $log 2>&1; echo "rc=$?" >> $log
echo "== ncu warm $(date -u +%T)" >> $log
"$ncu" --clock-control none --cache-control none --set full --import-source no -k regex:matmul_naive --launch-skip 4 --launch-count 16 -o mmw ./rig matmul 512 1 1 r=r-mm.ptx c=c-mm.ptx r4=r4-mm.ptx c8=c8-mm.ptx > ncu-mmw.txt 2>&1; echo "ncu rc=$?" >> $log
"$ncu" -i mmw.ncu-rep --page raw --csv > $out/raw-mmw.csv 2>&1
echo "== end $(date -u +%T)" >> $log
