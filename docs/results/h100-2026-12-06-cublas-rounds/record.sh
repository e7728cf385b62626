#!/usr/bin/env bash
# Device runs. Parts: rec:LESSON (lab LESSON --record, the table), cmp:LESSON[:N] (lab LESSON --compare --json),
# test:NAME (a GPU test executable), san:LESSON... (sanitize.sh), ncu:NAME:KERNEL:LESSON:SKIP:COUNT (ncu over --compare).
set -u
here=$(cd "$(dirname "$0")" && pwd); cd "$here"
for f in *.xz; do { python3 -c "import lzma,sys; open(sys.argv[2],'wb').write(lzma.open(sys.argv[1]).read())" "$f" "${f%.xz}"; chmod +x "${f%.xz}"; }; done
w=/tmp/w; mkdir -p $w; log=$OUT/log.txt
[ "${1:-}" = --inner ] || { echo "== $(date -u +%FT%TZ) start $*" >> $log
nvidia-smi --query-gpu=name,uuid,pci.bus_id,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >> $log; }
inner=0; [ "${1:-}" = --inner ] && { inner=1; shift; }
for part in "$@"; do
  s=$(date +%s)
  case $part in
    rec:*) IFS=: read -r _ l bin tag <<< "$part"; bin=${bin:-lab}; name=$bin${tag:+-$tag}
       timeout 250 ./$bin $l --record --results $w/results-$name > $w/$l-$name.txt 2>&1
       echo "rec $l ($name): rc=$? $(( $(date +%s) - s )) s" >> $log; grep -E "^Built|^Clocks|(4096|8192): .*% of cuBLAS" $w/$l-$name.txt >> $log ;;
    cmp:*) IFS=: read -r _ lesson n bin <<< "$part"; n=${n:-1}; bin=${bin:-lab}; sfx=$n; [ $bin = lab ] || sfx=$n-$bin
       timeout 250 ./$bin $lesson --compare --json > $w/$lesson-compare-$sfx.jsonl 2> $w/$lesson-compare-$sfx.err
       echo "cmp $lesson $n ($bin): rc=$? $(( $(date +%s) - s )) s" >> $log
       python3 - $w/$lesson-compare-$sfx.jsonl >> $log <<'PY'
import json,sys
rows=[json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]
v={}
for j in rows:
    if 'ratio' not in j: continue
    v[j.get('verdict')]=v.get(j.get('verdict'),0)+1
    if j.get('verdict')!='Parity' or j['symbol'] in ('transpose_tiled','gemm_bf16_wgmma','gemm_bf16_tma','gemm_bf16_swizzled','gemm_bf16_swizzled_wide'):
        print('  ', j.get('variant',j['symbol']), round(j['ratio'],4), round(j['ratio_min'],4), round(j['ratio_max'],4), j.get('verdict'), 'ms', round(j['rust_ms'],5), round(j['c_ms'],5), 'regs', j['rust']['registers'], j['c']['registers'], 'local', j['rust']['local_bytes'], j['c']['local_bytes'])
print('   rows', len(rows), v)
PY
       ;;
    h200only) nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || { echo "not an H200: stopped" >> $log; cat $log; exit 0; } ;;
    h200:*) IFS=: read -r _ n <<< "$part"
       if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
         for l in roofline fusion vectorize unroll fuse specialize harness conv2d bandwidth softmax gemm; do bash "$here/go.sh" --inner cmp:$l:$n; done
       else echo "h200 $n: not an H200, skipped" >> $log; fi ;;
    all:*) IFS=: read -r _ n <<< "$part"
       for l in roofline fusion vectorize unroll fuse specialize harness conv2d bandwidth softmax gemm; do bash "$here/go.sh" --inner cmp:$l:$n; done ;;
    santest:*) IFS=: read -r _ t filter tool <<< "$part"
       cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
       timeout 240 $cs --tool $tool --error-exitcode 86 ./$t "$filter" > $w/santest-$tool.txt 2>&1
       echo "santest $t '$filter' $tool: rc=$? $(( $(date +%s) - s )) s" >> $log; grep -E "SUMMARY|^test |test result" $w/santest-$tool.txt >> $log ;;
    test:*) t=${part#test:}; timeout 300 ./$t > $w/$t.txt 2>&1; echo "test $t: rc=$? $(( $(date +%s) - s )) s: $(grep -E '^test result' $w/$t.txt | tail -1)" >> $log; grep -E "FAIL|not checked|panick" $w/$t.txt >> $log ;;
    sanb:*) IFS=: read -r _ b l <<< "$part"; timeout 400 bash ./sanitize.sh ./$b $l > $w/sanitize-$b.txt 2>&1; echo "sanitize $l ($b): rc=$? $(( $(date +%s) - s )) s" >> $log; cat $w/sanitize-$b.txt >> $log ;;
    san:*) IFS=: read -ra ls <<< "${part#san:}"; timeout 400 bash ./sanitize.sh ./lab "${ls[@]}" > $w/sanitize.txt 2>&1; echo "sanitize ${ls[*]}: rc=$? $(( $(date +%s) - s )) s" >> $log; cat $w/sanitize.txt >> $log ;;
    ncu:*) IFS=: read -r _ name kern lesson skip count <<< "$part"
       timeout 300 ncu --cache-control none --clock-control none -k "regex:^${kern}\$" -s $skip -c $count --set full --import-source no -f -o $w/$name ./lab $lesson --compare --json > $w/$name-compare.jsonl 2> $w/$name-ncu.err
       echo "ncu $name: rc=$? $(( $(date +%s) - s )) s" >> $log; tail -3 $w/$name-ncu.err >> $log
       ncu -i $w/$name.ncu-rep --page source --csv --print-source sass > $w/$name-source.csv 2>>$log
       ncu -i $w/$name.ncu-rep --page details --csv > $w/$name-details.csv 2>>$log ;;
  esac
done
[ $inner = 1 ] && exit 0
(cd $w && tar cJf $OUT/data.tar.xz *.jsonl *.err *.txt *.csv results* 2>/dev/null)
echo "== $(date -u +%FT%TZ) end" >> $log
cat $log
