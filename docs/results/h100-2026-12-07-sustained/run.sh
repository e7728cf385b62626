#!/usr/bin/env bash
# Builds and runs the sustained-throughput scratch program (target/dev/sustain).
set -u
here=$(cd "$(dirname "$0")" && pwd)
cd $here/sustain
export PATH=$PATH:/usr/local/cuda/bin
{ date -u; nvidia-smi --query-gpu=name,uuid,driver_version,power.limit,clocks.max.sm --format=csv
  nvcc --version | tail -2
  nvcc -O2 -std=c++17 -o $OUT/sustain sustain.cu -lcuda -lcublas -lnvidia-ml -I/usr/local/cuda/include -L/usr/local/cuda/lib64/stubs 2>&1 && for p in kernels_sm80 g16_sm80 s4_sm80; do ptxas -arch=sm_90 -v $p.ptx -o /dev/null 2>&1 | grep -A3 "function .gemm_bf16_swizzled_wide. for" | sed "s/^/$p: /"; done; timeout 150 $OUT/sustain 3.0 kernels_sm80.ptx group16=g16_sm80.ptx:147456 stages4=s4_sm80.ptx:196608; echo rc=$?; rm -f $OUT/sustain; date -u; } > $OUT/sustain-log.txt 2>&1
