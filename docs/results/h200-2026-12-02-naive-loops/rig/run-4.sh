#!/usr/bin/env bash
set -u
here=$(cd "$(dirname "$0")" && pwd); cd "$here"; out=$1; log=$out/log.txt
{ echo "== $(date -u +%FT%TZ)"; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader; } >> $log
./rig matmul 512 200 16 r=r-mm.ptx c=c-mm.ptx v3=mm_v3.ptx:mm_v3 v4=mm_v4.ptx:mm_v4 >> $log 2>&1; echo "rc=$?" >> $log
./rig gemm 4096 4 8 r=r-gn.ptx c=c-gn.ptx v1=gn_v1.ptx:gn_v1 v2=gn_v2.ptx:gn_v2 v3=gn_v3.ptx:gn_v3 v4=gn_v4.ptx:gn_v4 >> $log 2>&1; echo "rc=$?" >> $log
./rig gemm 4095 4 8 r=r-gn.ptx c=c-gn.ptx v1=gn_v1.ptx:gn_v1 v2=gn_v2.ptx:gn_v2 v3=gn_v3.ptx:gn_v3 v4=gn_v4.ptx:gn_v4 >> $log 2>&1; echo "rc=$?" >> $log
echo "== end $(date -u +%T)" >> $log
