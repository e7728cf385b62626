#!/usr/bin/env bash
# Nsight Compute on the GEMM lesson's mma.sync kernels at 4096^3 (lab gemm
# --profile: one launch of each Rust kernel at the compared size).
set -u
out=$1; here=$(cd "$(dirname "$0")" && pwd); cd "$here"
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "== $(date -u +%FT%TZ) start, ncu at $ncu" > "$out/log.txt"
"$ncu" --version >> "$out/log.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >> "$out/log.txt"
s=$(date +%s)
"$ncu" --clock-control none --set full -k 'regex:gemm_(bf16_mma|bf16_pipelined|bf16_tma)$' ./lab gemm --profile > "$out/ncu-details.txt" 2>&1
echo "details: rc=$? $(( $(date +%s) - s )) s" >> "$out/log.txt"
s=$(date +%s)
"$ncu" --clock-control none --set full --page raw --csv -k 'regex:gemm_(bf16_mma|bf16_pipelined|bf16_tma)$' ./lab gemm --profile > "$out/ncu-raw.csv" 2>&1
echo "raw: rc=$? $(( $(date +%s) - s )) s" >> "$out/log.txt"
s=$(date +%s)
"$ncu" --clock-control none --section SourceCounters --page source --print-source sass -k 'regex:gemm_bf16_mma$' ./lab gemm --profile > "$out/ncu-source-mma.txt" 2>&1
echo "source: rc=$? $(( $(date +%s) - s )) s" >> "$out/log.txt"
echo "== $(date -u +%FT%TZ) end" >> "$out/log.txt"
cat "$out/log.txt"
