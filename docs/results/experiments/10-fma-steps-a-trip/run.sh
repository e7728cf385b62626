#!/bin/bash
# One call: SASS of each variant's loop, then each configuration in its own process, 3 rounds.
# u32.ptx, u64.ptx, u128.ptx (not kept: 265 KB each) are the lesson's PTX at commit e8fb4df with
# FMA_UNROLL set to 32, 64 and 128 in kernels-gpu/src/roofline.rs (64 and 128 written as 2 and 4
# blocks of a 32-step loop, as the lesson now does), each copied from
# target/release/ptx/nvptx64-nvidia-cuda/release/kernels_gpu.ptx after `cargo build --release`.
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
cd "$(dirname "$0")"
L=$OUT/log.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv
nvcc -O2 -o fmaexp fmaexp.c -lcuda || exit 1
for u in 32 64 128; do ptxas -arch=sm_90 -v u$u.ptx -o u$u.cubin 2>&1 | grep -A1 "fma_peak" | head -3
  echo "== u$u loop (SASS, sm_90)"; cuobjdump -sass -fun fma_peak u$u.cubin | grep -E "^\s+/\*[0-9a-f]{4}\*/" | grep -v FFMA | head -60
  echo "FFMA count: $(cuobjdump -sass -fun fma_peak u$u.cubin | grep -c FFMA)"; done
for r in 1 2 3; do
  for u in 32 64 128; do for it in 16384 32768; do ./fmaexp u$u.ptx $it 32; done; done
  ./fmaexp u32.ptx 16384 16; ./fmaexp u32.ptx 16384 64; ./fmaexp u64.ptx 32768 64
done
nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv; date -u; } > $L 2>&1
