#!/usr/bin/env bash
# One GPU, one build (gemm_bf16_swizzled's commit, clean): the GEMM lesson
# beside its twins (twice, in two processes, with the lesson itself between
# them, which times cuBLAS), then its GPU tests and compute-sanitizer on it.
set -u
out=$1; here=$(cd "$(dirname "$0")" && pwd); cd "$here"
mkdir -p "$out/results"
log="$out/log.txt"
echo "== $(date -u +%FT%TZ) start" > "$log"
nvidia-smi --query-gpu=name,uuid,pci.bus_id,driver_version,clocks.current.sm,clocks.max.sm,temperature.gpu,power.draw,power.limit --format=csv >> "$log"
run() { name=$1; shift; s=$(date +%s); timeout 250 "$@" > "$out/$name" 2>&1; echo "$name: rc=$? $(( $(date +%s) - s )) s" >> "$log"; }
run gpu_gemm.txt ./gpu_gemm
run gpu_roofline.txt ./gpu_roofline
run compare-1.jsonl ./lab gemm --compare --json
run gemm.txt ./lab gemm --record --results "$out/results"
run compare-2.jsonl ./lab gemm --compare --json
run sanitize.txt ./sanitize.sh ./lab gemm
grep "test result" "$out/gpu_gemm.txt" "$out/gpu_roofline.txt" >> "$log"
grep -iE "clean|error|planted" "$out/sanitize.txt" >> "$log"
grep -E "gemm_bf16_.*% of cuBLAS" "$out/gemm.txt" >> "$log"
python3 - "$out" >> "$log" <<'PY'
import json,glob,sys
for f in sorted(glob.glob(sys.argv[1]+'/compare-*.jsonl')):
    for l in open(f):
        try: j=json.loads(l)
        except Exception: continue
        if 'ratio' in j and ('bf16' in j.get('symbol','') or j.get('verdict') == 'Slower'):
            print(f.split('/')[-1], j['context']['git_commit'][:7], j['context'].get('git_dirty'), j['symbol'], round(j['ratio'],4), round(j['ratio_min'],4), round(j['ratio_max'],4), j.get('verdict'), 'ms', round(j['rust_ms'],5), round(j['c_ms'],5), 'regs', j['rust']['registers'], j['c']['registers'])
PY
echo "== $(date -u +%FT%TZ) end" >> "$log"
cat "$log"
