#!/usr/bin/env bash
# Writes R0.ptx and T0.ptx: R's and T's PTX (../ptx/*.ptx.xz) with the main loop's four cp.async
# lines of gemm_bf16_mma commented out. The line numbers are those of these two files. Where
# R1.ptx and T1.ptx are here (nomma.py's, which keeps every line where it was), it also writes
# R3.ptx and T3.ptx: the same lines commented out of them (the variants of calls 5 and 6).
here=$(cd "$(dirname "$0")" && pwd)
R_LINES='NR==539||NR==547||NR==559||NR==571'
T_LINES='NR==6730||NR==6744||NR==6764||NR==6784'
# Comments out the lines that $1 (an awk condition) selects.
nocopies() { awk "$1"'{print "//" $0; next} {print}'; }
xz -dc $here/../ptx/R.ptx.xz | nocopies "$R_LINES" > R0.ptx
xz -dc $here/../ptx/T.ptx.xz | nocopies "$T_LINES" > T0.ptx
[ -e R1.ptx ] && nocopies "$R_LINES" < R1.ptx > R3.ptx
[ -e T1.ptx ] && nocopies "$T_LINES" < T1.ptx > T3.ptx
exit 0
