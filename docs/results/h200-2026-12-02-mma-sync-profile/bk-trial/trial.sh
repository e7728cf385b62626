#!/usr/bin/env bash
# Trial of the pipelined tensor-core kernel's step depth and stages: the
# GEMM lesson's full run with each build (lab_k<BK>s<STAGES>).
set -u
out=$1; here=$(cd "$(dirname "$0")" && pwd); cd "$here"
echo "== $(date -u +%FT%TZ) start" > "$out/log.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >> "$out/log.txt"
for f in lab_*.xz; do xz -dk "$f"; done; chmod +x lab_k*
for v in k32s4 k64s3 k64s2 k48s3; do
  s=$(date +%s); ./lab_$v gemm > "$out/gemm_$v.txt" 2>&1; echo "$v: rc=$? $(( $(date +%s) - s )) s" >> "$out/log.txt"
  grep -E "gemm_bf16_pipelined/[0-9]+: |gemm_bf16_mma/[0-9]+: " "$out/gemm_$v.txt" >> "$out/log.txt"
done
echo "== $(date -u +%FT%TZ) end" >> "$out/log.txt"
cat "$out/log.txt"
