#!/usr/bin/env bash
# Writes R0.ptx and T0.ptx: R's and T's PTX (../ptx/*.ptx.xz) with the main loop's four cp.async
# lines of gemm_bf16_mma commented out. The line numbers are those of these two files. Where
# R1.ptx and T1.ptx are here (nomma.py's, which keeps every line where it was), it also writes
# R3.ptx and T3.ptx: the same lines commented out of them (the variants of calls 5 and 6).
here=$(cd "$(dirname "$0")" && pwd)
xz -dc $here/../ptx/R.ptx.xz | awk 'NR==539||NR==547||NR==559||NR==571{print "//" $0; next} {print}' > R0.ptx
xz -dc $here/../ptx/T.ptx.xz | awk 'NR==6730||NR==6744||NR==6764||NR==6784{print "//" $0; next} {print}' > T0.ptx
for v in R T; do
  [ -e ${v}1.ptx ] || continue
  if [ $v = R ]; then lines='NR==539||NR==547||NR==559||NR==571'; else lines='NR==6730||NR==6744||NR==6764||NR==6784'; fi
  awk "$lines"'{print "//" $0; next} {print}' ${v}1.ptx > ${v}3.ptx
done
