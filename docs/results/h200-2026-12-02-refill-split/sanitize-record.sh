#!/usr/bin/env bash
# compute-sanitizer's four tools on the GEMM lesson with gemm_bf16_pipelined's
# refill in two parts (lab-split, trial ccdfa2e; PTX identical to bd13063).
set -u
out=$1; here=$(cd "$(dirname "$0")" && pwd); cd "$here"; tar xJf bins.tar.xz
echo "== $(date -u +%FT%TZ) start" > "$out/log.txt"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv >> "$out/log.txt"
s=$(date +%s); ./sanitize.sh ./lab-split gemm > "$out/sanitize.txt" 2>&1; echo "sanitize: rc=$? $(( $(date +%s) - s )) s" >> "$out/log.txt"
tail -6 "$out/sanitize.txt" >> "$out/log.txt"
echo "== $(date -u +%FT%TZ) end" >> "$out/log.txt"
cat "$out/log.txt"
