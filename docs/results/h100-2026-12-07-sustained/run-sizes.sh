#!/usr/bin/env bash
# Builds sustain-sizes.cu with the GPU machine's nvcc and runs it at 4096^3
# and 8192^3, writing sustain-sizes-log.txt into $OUT (this folder if unset).
# Run it from a folder holding this script, sustain-sizes.cu and the lab's
# sm_80 module, kernels_sm80.ptx (after `cargo build --release`:
# target/release/build/host-*/out/kernels_sm80.ptx).
set -u
here=$(cd "$(dirname "$0")" && pwd); cd "$here"
out=${OUT:-$here}
export PATH=$PATH:/usr/local/cuda/bin
{ date -u; nvidia-smi --query-gpu=name,uuid,driver_version,power.limit,clocks.max.sm --format=csv
  nvcc --version | tail -1; sha256sum kernels_sm80.ptx sustain-sizes.cu
  nvcc -O2 -std=c++17 -diag-suppress 1650 -o /tmp/sustain-sizes sustain-sizes.cu -lcuda -lcublas -lnvidia-ml -L/usr/local/cuda/lib64/stubs 2>&1 | grep -v "warn_unused_result\|fread\|~~~\|In lambda"
  for side in 4096 8192; do SIDE=$side timeout 100 /tmp/sustain-sizes 3.0 kernels_sm80.ptx; echo rc=$?; done; date -u; } > "$out/sustain-sizes-log.txt" 2>&1
