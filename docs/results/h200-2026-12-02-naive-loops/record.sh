#!/usr/bin/env bash
# One GPU, two builds in alternating processes: lab-base (45a1703) and
# lab-new (157a344: dot_strided and assume_whole_tiles in matmul_naive and
# gemm_naive). Usage: record.sh OUT LESSON (roofline or gemm): the lesson
# compared base, new, new, base; then the new build's GPU tests of that
# lesson, compute-sanitizer on it and both kernels' PTX and SASS.
set -u
out=$1; lesson=$2; here=$(cd "$(dirname "$0")" && pwd); cd "$here"; tar xJf bins.tar.xz
mkdir -p cmp
log="$out/log-$lesson.txt"
echo "== $(date -u +%FT%TZ) start" > "$log"
nvidia-smi --query-gpu=name,uuid,pci.bus_id,driver_version,clocks.current.sm,clocks.max.sm,temperature.gpu,power.draw,power.limit --format=csv >> "$log"
run() { name=$1; shift; s=$(date +%s); timeout 200 "$@" > "$name" 2>&1; echo "$name: rc=$? $(( $(date +%s) - s )) s" >> "$log"; }
i=0
for v in ${VARIANTS:-base new new base}; do i=$((i + 1)); run cmp/$lesson-$v-$i.jsonl ./lab-$v $lesson --compare --json; done
run cmp/gpu_$lesson.txt ./gpu_$lesson-new
run cmp/sanitize-$lesson.txt ./sanitize.sh ./lab-new $lesson
kernel=matmul_naive; [ "$lesson" = gemm ] && kernel=gemm_naive
run cmp/asm-$kernel.txt ./lab-new $lesson --asm $kernel
grep "test result" cmp/gpu_$lesson.txt >> "$log"
grep -iE "clean|error|planted" cmp/sanitize-$lesson.txt >> "$log"
python3 - "$kernel" >> "$log" <<'PY'
import json,glob,sys
for f in sorted(glob.glob('cmp/*-[0-9].jsonl')):
    for l in open(f):
        try: j=json.loads(l)
        except Exception: continue
        if j.get('symbol') == sys.argv[1] or j.get('verdict') == 'Slower':
            print(f[4:-6], j['context']['git_commit'][:7], j['context'].get('git_dirty'), j['context']['gpu_uuid'][:12], j['symbol'], round(j['ratio'],4), round(j['ratio_min'],4), round(j['ratio_max'],4), j.get('verdict'), 'ms', round(j['rust_ms'],5), round(j['c_ms'],5), 'regs', j['rust']['registers'], j['c']['registers'])
PY
echo "== $(date -u +%FT%TZ) end" >> "$log"
cat "$log"
