#!/usr/bin/env bash
# Scratch: PTX variants of matmul_naive / gemm_naive timed on the same buffers.
set -u
here=$(cd "$(dirname "$0")" && pwd); cd "$here"; out=$1; log=$out/log.txt
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu)
{ echo "== $(date -u +%FT%TZ)"; nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv; } >> $log
./rig matmul 512 200 16 R=rust.ptx C=twin-roofline.ptx r=r-mm.ptx r90=r90-mm.ptx c=c-mm.ptx c75=c75-mm.ptx r4=r4-mm.ptx c8=c8-mm.ptx rba=rba-mm.ptx >> $log 2>&1; echo "rc=$?" >> $log
./rig gemm 4096 4 8 R=rust.ptx C=twin-gemm.ptx r=r-gn.ptx c=c-gn.ptx >> $log 2>&1; echo "rc=$?" >> $log
./rig gemm 2048 20 8 r=r-gn.ptx c=c-gn.ptx >> $log 2>&1; echo "rc=$?" >> $log
echo "== ncu $(date -u +%T)" >> $log
"$ncu" --clock-control none --set full --section SourceCounters --import-source no -k regex:matmul_naive --launch-count 4 -o mm ./rig matmul 512 1 1 r=r-mm.ptx c=c-mm.ptx r4=r4-mm.ptx c8=c8-mm.ptx > ncu-mm.txt 2>&1; echo "ncu mm rc=$?" >> $log
"$ncu" --clock-control none --set full --section SourceCounters --import-source no -k regex:gemm_naive --launch-count 2 -o gn ./rig gemm 4096 1 1 r=r-gn.ptx c=c-gn.ptx > ncu-gn.txt 2>&1; echo "ncu gn rc=$?" >> $log
tail -5 ncu-mm.txt ncu-gn.txt >> $log
for r in mm gn; do "$ncu" -i $r.ncu-rep --page raw --csv > $out/raw-$r.csv 2>&1; done
for i in 0 1 2 3; do "$ncu" -i mm.ncu-rep --page source --print-source sass --launch-skip $i --launch-count 1 > src-mm-$i.txt 2>&1; done
for i in 0 1; do "$ncu" -i gn.ncu-rep --page source --print-source sass --launch-skip $i --launch-count 1 > src-gn-$i.txt 2>&1; done
tar cJf $out/sources.tar.xz src-*.txt
echo "== end $(date -u +%T)" >> $log
