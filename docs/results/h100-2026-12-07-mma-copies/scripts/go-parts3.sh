#!/usr/bin/env bash
# One device call, 2026-12-07. On an H200: ../dev7/go.sh SECONDS (the lesson's held reading, then
# --compare --json and a second --json process as time allows). On an H100, given RIG_SECONDS:
# the rig experiment below. Otherwise nothing. Arguments: SECONDS [RIG_SECONDS].
here=$(cd "$(dirname "$0")" && pwd)
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  bash $here/../dev7/go.sh ${1:-560}
elif [ -n "$2" ]; then
  # On an H100: where the twin's lead comes from, third call. R1 and T1 = R and T with every
  # mma.sync replaced by bitwise ops on its operands (nomma.py: copies, ldmatrix, barriers);
  # R3 and T3 = R1 and T1 with the loop's four cp.async commented out (nocopies.sh's lines:
  # ldmatrix and barriers, no tensor cores). Their output differs from R's by design.
  nvidia-smi --query-gpu=name,uuid,driver_version,power.limit,clocks.max.sm --format=csv
  bash $here/unpack.sh; sha256sum $here/[RT][13].ptx | tee $OUT/rig-parts3.txt
  for shape in "4096 4096 16384" "4096 4096 4096"; do
    echo "== rig $shape $(date -u +%FT%TZ)" | tee -a $OUT/rig-parts3.txt
    timeout ${2:-60} $here/mmarig $shape 20 16 R=lab T=twin R1=$here/R1.ptx T1=$here/T1.ptx R3=$here/R3.ptx T3=$here/T3.ptx >> $OUT/rig-parts3.txt 2>&1; echo rc=$?
  done
  grep "median\|DIFF\|identical\|reference" $OUT/rig-parts3.txt | sed 's/; trials.*//'
else
  nvidia-smi --query-gpu=name,uuid --format=csv,noheader; echo "not an H200: nothing run"
fi
