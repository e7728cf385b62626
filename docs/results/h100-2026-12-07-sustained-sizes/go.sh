#!/usr/bin/env bash
# One GPU call: the sustained/alternating scratch run at 4096 and 8192, then lab gemm with nvidia-smi sampling, then ncu at base clock.
here=$(cd "$(dirname "$0")" && pwd)
s=$(date +%s)
for p in run-sizes.sh dmon.sh ncu_wide.sh; do echo "== $p $(date -u +%T) t=$(( $(date +%s) - s ))"; bash "$here/$p"; done
echo "== done $(date -u +%T) t=$(( $(date +%s) - s ))"
