#!/usr/bin/env bash
set -u
here=$(cd "$(dirname "$0")" && pwd)
cd $here/sustain
export PATH=$PATH:/usr/local/cuda/bin
{ date -u; nvidia-smi --query-gpu=name,uuid,driver_version,power.limit,clocks.max.sm --format=csv
  nvcc --version | tail -1
  nvcc -O2 -std=c++17 -diag-suppress 1650 -o /tmp/sustain sustain.cu -lcuda -lcublas -lnvidia-ml -L/usr/local/cuda/lib64/stubs 2>&1 | grep -v "warn_unused_result\|fread\|~~~\|In lambda"
  for side in 4096 8192; do SIDE=$side timeout 100 /tmp/sustain 3.0 kernels_sm80.ptx; echo rc=$?; done; date -u; } > $OUT/sustain2-log.txt 2>&1
