#!/usr/bin/env bash
# One GPU, three builds, alternating processes: lab-before (d36d5b6, before
# this session's kernel changes), lab-guards (ed5432d: opaque_index in
# add_unrolled_4, mul_wide_i32 and opaque_u32 in heat_step_global and
# conv2d_valid) and lab-prologue (580fca7: global_index_x_u32 as well).
# unroll and conv2d compared twice per build, roofline once per build.
set -u
out=$1; here=$(cd "$(dirname "$0")" && pwd); cd "$here"; tar xJf labs.tar.xz
mkdir -p cmp
echo "== $(date -u +%FT%TZ) start" > "$out/log.txt"
nvidia-smi --query-gpu=name,uuid,pci.bus_id,driver_version,clocks.current.sm,clocks.max.sm,temperature.gpu,power.draw,power.limit --format=csv >> "$out/log.txt"
run() { name=$1; shift; s=$(date +%s); "$@" > "$name" 2>&1; echo "$name: rc=$? $(( $(date +%s) - s )) s" >> "$out/log.txt"; }
for i in 1 2; do
  for v in before guards prologue; do
    for l in unroll conv2d; do run cmp/$l-$v-$i.jsonl ./lab-$v $l --compare --json; done
  done
done
for v in before prologue guards; do run cmp/roofline-$v-1.jsonl ./lab-$v roofline --compare --json; done
python3 - >> "$out/log.txt" <<'PY'
import json,glob
want={'add_unrolled_4','conv2d_valid','conv2d_same','heat_step_global','matmul_naive','transpose_tiled'}
for f in sorted(glob.glob('cmp/*.jsonl')):
    for l in open(f):
        try: j=json.loads(l)
        except Exception: continue
        if j.get('symbol') in want: print(f[4:-6], j['context']['git_commit'], j['context']['gpu_uuid'][:12], j['symbol'], round(j['ratio'],4), round(j['ratio_min'],4), round(j['ratio_max'],4), j.get('verdict'), 'regs', j['rust']['registers'], j['c']['registers'], 'sass', j['sass']['rust'], j['sass']['c'])
PY
tar czf "$out/cmp.tgz" cmp
echo "== $(date -u +%FT%TZ) end" >> "$out/log.txt"
cat "$out/log.txt"
