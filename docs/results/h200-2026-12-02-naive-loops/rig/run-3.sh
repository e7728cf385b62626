#!/usr/bin/env bash
set -u
here=$(cd "$(dirname "$0")" && pwd); cd "$here"; out=$1; log=$out/log.txt
{ echo "== $(date -u +%FT%TZ)"; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader; } >> $log
./rig matmul 512 200 16 r=r-mm.ptx c=c-mm.ptx c8=c8-mm.ptx ctwo=ctwo-mm.ptx c8two=c8two-mm.ptx rnomovbot=rnomovbot-mm.ptx v3=mm_v3.ptx:mm_v3 v3peep=v3peep-mm.ptx:mm_v3 v3ne=v3ne-mm.ptx:mm_v3 rpeep=rpeep-mm.ptx >> $log 2>&1; echo "rc=$?" >> $log
./rig gemm 4096 4 8 r=r-gn.ptx c=c-gn.ptx gnpeep=gnpeep.ptx:gemm_naive gnne=gnne.ptx:gemm_naive >> $log 2>&1; echo "rc=$?" >> $log
echo "== end $(date -u +%T)" >> $log
