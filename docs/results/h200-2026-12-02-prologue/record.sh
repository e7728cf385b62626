#!/usr/bin/env bash
# heat_step_global and conv2d_valid with global_index_x_u32 (ntid read first),
# after mul_wide_i32 and the opaque_u32 guard: their GPU tests, the
# sanitizer and each lesson's comparison twice, in two
# processes.
set -u
out=$1; here=$(cd "$(dirname "$0")" && pwd); cd "$here"
mkdir -p cmp
echo "== $(date -u +%FT%TZ) start" > "$out/log.txt"
nvidia-smi --query-gpu=name,pci.bus_id,driver_version,clocks.current.sm,clocks.max.sm,temperature.gpu,power.draw,power.limit --format=csv >> "$out/log.txt"
run() { name=$1; shift; s=$(date +%s); "$@" > "$name" 2>&1; echo "$name: rc=$? $(( $(date +%s) - s )) s" >> "$out/log.txt"; }
for t in gpu_conv2d gpu_roofline; do run cmp/$t.txt ./$t; done
run cmp/sanitize.txt ./sanitize.sh ./lab conv2d roofline
for i in 1 2; do
  for l in conv2d roofline; do run cmp/$l-compare-$i.jsonl ./lab $l --compare --json; done
done
python3 - >> "$out/log.txt" <<'PY'
import json,glob
for f in sorted(glob.glob('cmp/*-compare-*.jsonl')):
    for l in open(f):
        try: j=json.loads(l)
        except Exception: continue
        if 'ratio' in j: print(f[4:-6], j.get('symbol'), round(j['ratio'],3), round(j['ratio_min'],3), round(j['ratio_max'],3), j.get('verdict'), 'regs', j.get('rust',{}).get('registers'), j.get('c',{}).get('registers'), 'sass', j.get('sass',{}).get('rust'), j.get('sass',{}).get('c'))
PY
for t in gpu_conv2d gpu_roofline; do grep "test result" cmp/$t.txt | sed "s/^/$t: /" >> "$out/log.txt"; done
tail -8 cmp/sanitize.txt >> "$out/log.txt"
tar czf "$out/cmp.tgz" cmp
echo "== $(date -u +%FT%TZ) end" >> "$out/log.txt"
cat "$out/log.txt"
