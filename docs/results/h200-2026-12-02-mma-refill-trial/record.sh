#!/usr/bin/env bash
# gemm_bf16_mma's refill moved into the step (8311318): the GEMM lesson's GPU
# tests, its comparison with the CUDA C twins, the sanitizer on gemm and
# roofline, then every lesson's comparison, in one call.
set -u
out=$1; here=$(cd "$(dirname "$0")" && pwd); cd "$here"
mkdir -p cmp
echo "== $(date -u +%FT%TZ) start" > "$out/log.txt"
nvidia-smi --query-gpu=name,pci.bus_id,driver_version,clocks.current.sm,clocks.max.sm,temperature.gpu,power.draw,power.limit --format=csv >> "$out/log.txt"
run() { name=$1; shift; s=$(date +%s); "$@" > "$name" 2>&1; echo "$name: rc=$? $(( $(date +%s) - s )) s" >> "$out/log.txt"; }
run cmp/gpu_gemm.txt ./gpu_gemm
run cmp/gemm-compare.jsonl ./lab gemm --compare --json
run cmp/sanitize.txt ./sanitize.sh ./lab gemm roofline
for l in harness bandwidth vectorize unroll specialize fuse conv2d fusion softmax roofline; do
  run cmp/$l-compare.jsonl ./lab $l --compare --json
done
python3 - >> "$out/log.txt" <<'PY'
import json,glob
for f in sorted(glob.glob('cmp/*-compare.jsonl')):
    for l in open(f):
        try: j=json.loads(l)
        except Exception: continue
        if 'ratio' in j: print(f[4:-14], j.get('symbol'), round(j['ratio'],3), j.get('verdict'), 'regs', j.get('rust',{}).get('registers'), j.get('c',{}).get('registers'))
PY
tail -8 cmp/sanitize.txt >> "$out/log.txt"
tar czf "$out/cmp.tgz" cmp
echo "== $(date -u +%FT%TZ) end" >> "$out/log.txt"
cat "$out/log.txt"
