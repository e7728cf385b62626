#!/usr/bin/env bash
# One GPU: lab-base (580fca7) against lab-split (trial ccdfa2e: the pipelined
# kernel's refill split, A's copies after the first 16 of k, B's after the
# second), the trial's GEMM GPU tests, then gemm --compare alternating.
set -u
out=$1; here=$(cd "$(dirname "$0")" && pwd); cd "$here"; tar xJf bins.tar.xz
mkdir -p cmp
echo "== $(date -u +%FT%TZ) start" > "$out/log.txt"
nvidia-smi --query-gpu=name,uuid,pci.bus_id,driver_version,clocks.current.sm,clocks.max.sm,temperature.gpu,power.draw,power.limit --format=csv >> "$out/log.txt"
run() { name=$1; shift; s=$(date +%s); "$@" > "$name" 2>&1; echo "$name: rc=$? $(( $(date +%s) - s )) s" >> "$out/log.txt"; }
run cmp/gpu_gemm-split.txt ./gpu_gemm-split
for i in 1 2; do
  for v in base split; do run cmp/gemm-$v-$i.jsonl ./lab-$v gemm --compare --json; done
done
grep "test result" cmp/gpu_gemm-split.txt >> "$out/log.txt"
python3 - >> "$out/log.txt" <<'PY'
import json,glob
for f in sorted(glob.glob('cmp/gemm-*.jsonl')):
    for l in open(f):
        try: j=json.loads(l)
        except Exception: continue
        if 'ratio' in j and 'bf16' in (j.get('symbol') or ''): print(f[4:-6], j['context']['git_commit'], j['context']['gpu_uuid'][:12], j['symbol'], round(j['ratio'],4), round(j['ratio_min'],4), round(j['ratio_max'],4), j.get('verdict'), 'regs', j['rust']['registers'], j['c']['registers'], 'ms', round(j['rust_ms'],4), round(j['c_ms'],4))
PY
tar czf "$out/cmp.tgz" cmp
echo "== $(date -u +%FT%TZ) end" >> "$out/log.txt"
cat "$out/log.txt"
