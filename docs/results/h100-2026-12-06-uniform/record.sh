#!/usr/bin/env bash
# Device runs. Parts: cmp:LESSON[:N] (lab LESSON --compare --json, and the table), test:NAME (a GPU test
# executable), san:LESSON... (sanitize.sh), ncu:NAME:KERNEL:LESSON:SKIP:COUNT (ncu over --compare).
set -u
here=$(cd "$(dirname "$0")" && pwd); cd "$here"
for f in *.xz; do [ -f "${f%.xz}" ] || { python3 -c "import lzma,sys; open(sys.argv[2],'wb').write(lzma.open(sys.argv[1]).read())" "$f" "${f%.xz}"; chmod +x "${f%.xz}"; }; done
w=/tmp/w; mkdir -p $w; log=$OUT/log.txt
echo "== $(date -u +%FT%TZ) start $*" >> $log
nvidia-smi --query-gpu=name,uuid,pci.bus_id,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >> $log
for part in "$@"; do
  s=$(date +%s)
  case $part in
    wgrig:*) IFS=: read -r _ size reps <<< "$part"
       for i in 1 2; do ./rig wgmma $size $reps 16 R=wg/R.ptx T=wg/T.ptx L=wg/L.ptx >> $log 2>&1; echo "wgrig $size process $i: rc=$? $(( $(date +%s) - s )) s" >> $log; done ;;
    cmp:*) IFS=: read -r _ lesson n <<< "$part"; n=${n:-1}
       timeout 250 ./lab $lesson --compare --json > $w/$lesson-compare-$n.jsonl 2> $w/$lesson-compare-$n.err
       echo "cmp $lesson $n: rc=$? $(( $(date +%s) - s )) s" >> $log
       python3 - $w/$lesson-compare-$n.jsonl >> $log <<'PY'
import json,sys
rows=[json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]
v={}
for j in rows:
    if 'ratio' not in j: continue
    v[j.get('verdict')]=v.get(j.get('verdict'),0)+1
    if j.get('verdict')!='Parity' or j['symbol'] in ('transpose_tiled','gemm_bf16_wgmma','gemm_bf16_tma'):
        print('  ', j.get('variant',j['symbol']), round(j['ratio'],4), round(j['ratio_min'],4), round(j['ratio_max'],4), j.get('verdict'), 'ms', round(j['rust_ms'],5), round(j['c_ms'],5), 'regs', j['rust']['registers'], j['c']['registers'])
print('   rows', len(rows), v)
PY
       ;;
    test:*) t=${part#test:}; timeout 300 ./$t > $w/$t.txt 2>&1; echo "test $t: rc=$? $(( $(date +%s) - s )) s: $(grep -E '^test result' $w/$t.txt | tail -1)" >> $log ;;
    san:*) IFS=: read -ra ls <<< "${part#san:}"; timeout 400 bash ./sanitize.sh ./lab "${ls[@]}" > $w/sanitize.txt 2>&1; echo "sanitize ${ls[*]}: rc=$? $(( $(date +%s) - s )) s" >> $log; cat $w/sanitize.txt >> $log ;;
    ncu:*) IFS=: read -r _ name kern lesson skip count <<< "$part"
       timeout 300 ncu --cache-control none --clock-control none -k "regex:^${kern}\$" -s $skip -c $count --set full --import-source no -f -o $w/$name ./lab $lesson --compare --json > $w/$name-compare.jsonl 2> $w/$name-ncu.err
       echo "ncu $name: rc=$? $(( $(date +%s) - s )) s" >> $log; tail -3 $w/$name-ncu.err >> $log
       ncu -i $w/$name.ncu-rep --page source --csv --print-source sass > $w/$name-source.csv 2>>$log
       ncu -i $w/$name.ncu-rep --page details --csv > $w/$name-details.csv 2>>$log
       ncu -i $w/$name.ncu-rep --page raw --csv > $w/$name-raw.csv 2>>$log ;;
  esac
done
(cd $w && tar cJf $OUT/data.tar.xz *.jsonl *.err *.txt *.csv 2>/dev/null)
echo "== $(date -u +%FT%TZ) end" >> $log
cat $log
