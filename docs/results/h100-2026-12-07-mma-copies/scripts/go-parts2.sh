#!/usr/bin/env bash
# First call of 2026-12-07's second session. On an H200: ../dev7/go.sh SECONDS (the lesson's held
# reading, then --compare --json, then a second --json process). On anything else: the rig at
# 4096 x 4096 x 16384 with R (lab sm_80 module at c36970f), T (its twin), P (each copy's source
# pointer formed once and moved a step): P was timed only at 4096^3 before. Argument: seconds.
here=$(cd "$(dirname "$0")" && pwd)
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  bash $here/../dev7/go.sh ${1:-560}
elif [ -n "$2" ]; then
  # On an H100: where the twin's lead comes from, second call. R1 and T1 = R and T with every
  # mma.sync replaced by bitwise ops on its operands (nomma.py: copies, ldmatrix, barriers);
  # R2 and T2 = R1 and T1 with every ldmatrix replaced by moves (noldsm.py: copies and barriers).
  # Their D differs from R's by design. At k = 16384 and 4096.
  nvidia-smi --query-gpu=name,uuid,driver_version,power.limit,clocks.max.sm --format=csv
  bash $here/unpack.sh; sha256sum $here/[RT][12].ptx | tee $OUT/rig-parts2.txt
  for shape in "4096 4096 16384" "4096 4096 4096"; do
    echo "== rig $shape $(date -u +%FT%TZ)" | tee -a $OUT/rig-parts2.txt
    timeout ${2:-60} $here/mmarig $shape 20 16 R=lab T=twin R1=$here/R1.ptx T1=$here/T1.ptx R2=$here/R2.ptx T2=$here/T2.ptx >> $OUT/rig-parts2.txt 2>&1; echo rc=$?
  done
  grep "median\|DIFF\|identical\|reference" $OUT/rig-parts2.txt | sed 's/; trials.*//'
else
  nvidia-smi --query-gpu=name,uuid --format=csv,noheader; echo "not an H200: nothing run"
fi
