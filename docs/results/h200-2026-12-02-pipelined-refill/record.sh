#!/usr/bin/env bash
# The refill moved into the step: the GEMM lesson's GPU tests and its
# comparison with the CUDA C twins (JSON), in one call.
set -u
out=$1; here=$(cd "$(dirname "$0")" && pwd); cd "$here"
echo "== $(date -u +%FT%TZ) start" > "$out/log.txt"
nvidia-smi --query-gpu=name,pci.bus_id,driver_version,clocks.current.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >> "$out/log.txt"
run() { name=$1; shift; s=$(date +%s); "$@" > "$out/$name" 2>&1; echo "$name: rc=$? $(( $(date +%s) - s )) s" >> "$out/log.txt"; }
run gpu_gemm.txt ./gpu_gemm
run gemm-compare.jsonl ./lab gemm --compare --json
python3 - "$out" >> "$out/log.txt" <<'PY'
import json,sys
for l in open(sys.argv[1]+'/gemm-compare.jsonl'):
    try: j=json.loads(l)
    except Exception: continue
    if 'ratio' in j: print(j.get('symbol'), round(j['ratio'],3), j.get('verdict'), 'rust', round(j.get('rust_ms',0),4), 'c', round(j.get('c_ms',0),4), 'regs', j.get('rust',{}).get('registers'), j.get('c',{}).get('registers'))
PY
echo "== $(date -u +%FT%TZ) end" >> "$out/log.txt"
cat "$out/log.txt"
