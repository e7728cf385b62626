#!/usr/bin/env bash
# First call of 2026-12-07's second session. On an H200: ../dev7/go.sh SECONDS (the lesson's held
# reading, then --compare --json, then a second --json process). On anything else: the rig at
# 4096 x 4096 x 16384 with R (lab sm_80 module at c36970f), T (its twin), P (each copy's source
# pointer formed once and moved a step): P was timed only at 4096^3 before. Argument: seconds.
here=$(cd "$(dirname "$0")" && pwd)
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  bash $here/../dev7/go.sh ${1:-560}
elif [ -n "$2" ]; then
  # On an H100: the loop's cp.async blocks reordered in the PTX (perm.py): Q = A0 B0 B1 A1 and
  # W = A1 B1 B0 A0 (ptxas then reuses the last LDGSTS's registers before the barrier), X = A0 B0 A1 B1
  # (the third's, as in the twin), against R and T, at k = 16384 (where T leads on H100s) and 4096.
  nvidia-smi --query-gpu=name,uuid,driver_version,power.limit,clocks.max.sm --format=csv
  bash $here/unpack.sh; sha256sum $here/perm-*.ptx | tee $OUT/rig-q.txt
  for shape in "4096 4096 16384" "4096 4096 4096"; do
    echo "== rig $shape $(date -u +%FT%TZ)" | tee -a $OUT/rig-q.txt
    timeout ${2:-50} $here/mmarig $shape 20 16 R=lab T=twin Q=$here/perm-0231.ptx W=$here/perm-1320.ptx X=$here/perm-0213.ptx >> $OUT/rig-q.txt 2>&1; echo rc=$?
  done
  grep "median\|DIFF\|identical\|reference" $OUT/rig-q.txt | sed 's/; trials.*//'
else
  nvidia-smi --query-gpu=name,uuid --format=csv,noheader; echo "not an H200: nothing run"
fi
