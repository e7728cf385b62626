#!/usr/bin/env bash
# Device experiments. Parts: wg (ncu of gemm_bf16_wgmma both sides), tr (ncu of transpose_tiled),
# cmp:BIN:LESSON (lab BIN LESSON --compare --json).
set -u
here=$(cd "$(dirname "$0")" && pwd); cd "$here"; for f in lab-*.xz; do [ -f "${f%.xz}" ] || { python3 -c "import lzma,sys; open(sys.argv[2],\"wb\").write(lzma.open(sys.argv[1]).read())" "$f" "${f%.xz}"; chmod +x "${f%.xz}"; }; done
w=/tmp/w; mkdir -p $w; log=$OUT/log.txt
echo "== $(date -u +%FT%TZ) start $*" >> $log
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >> $log
prof() { name=$1; kern=$2; lesson=$3; skip=$4; count=$5; s=$(date +%s)
  timeout 250 ncu --cache-control none --clock-control none -k "regex:^${kern}\$" -s $skip -c $count --set full --import-source no -f -o $w/$name ./lab-base $lesson --compare --json > $w/$name-compare.jsonl 2> $w/$name-ncu.err
  echo "$name: rc=$? $(( $(date +%s) - s )) s" >> $log
  tail -3 $w/$name-ncu.err >> $log
  ncu -i $w/$name.ncu-rep --page source --csv --print-source sass > $w/$name-source.csv 2>>$log
  ncu -i $w/$name.ncu-rep --page details --csv > $w/$name-details.csv 2>>$log
  ncu -i $w/$name.ncu-rep --page raw --csv > $w/$name-raw.csv 2>>$log
}
for part in "$@"; do
  case $part in
    wg) prof wg gemm_bf16_wgmma gemm 6 4 ;;
    wgc) prof wgc gemm_bf16_wgmma gemm 34 6 ;;
    tr) prof tr transpose_tiled roofline 30 10 ;;
    rig) s=$(date +%s); for i in 1 2; do ./rig transpose 8192 50 16 R=tr/R.ptx T=tr/T.ptx V1=tr/V1.ptx V2=tr/V2.ptx V3=tr/V3.ptx Rfull=tr/Rfull.ptx T1=tr/T1.ptx V4=tr/V4.ptx H=tr/H.ptx >> $log 2>&1; echo "rig rc=$?" >> $log; done; echo "rig $(( $(date +%s) - s )) s" >> $log ;;
    cmp:*) IFS=: read -r _ bin lesson n <<< "$part"; s=$(date +%s)
       timeout 200 ./lab-$bin $lesson --compare --json > $w/cmp-$bin-$lesson-$n.jsonl 2> $w/cmp-$bin-$lesson-$n.err
       echo "cmp $bin $lesson $n: rc=$? $(( $(date +%s) - s )) s" >> $log
       python3 - $w/cmp-$bin-$lesson-$n.jsonl >> $log <<'PY'
import json,sys
for l in open(sys.argv[1]):
    try: j=json.loads(l)
    except Exception: continue
    if 'ratio' in j and (j['symbol'] in ('gemm_bf16_wgmma','gemm_bf16_tma','transpose_tiled','gemm_bf16_pipelined') or j.get('verdict')=='Slower'):
        print(' ', j['symbol'], round(j['ratio'],4), round(j['ratio_min'],4), round(j['ratio_max'],4), j.get('verdict'), 'ms', round(j['rust_ms'],5), round(j['c_ms'],5), 'regs', j['rust']['registers'], j['c']['registers'])
PY
       ;;
  esac
done
(cd $w && tar cJf $OUT/data.tar.xz *.csv *.jsonl *.err 2>/dev/null)
echo "== $(date -u +%FT%TZ) end" >> $log
cat $log
