#!/usr/bin/env bash
# Writes R0.ptx and T0.ptx: R's and T's PTX (../ptx/*.ptx.xz) with the main loop's four cp.async
# lines of gemm_bf16_mma commented out. The line numbers are those of these two files.
here=$(cd "$(dirname "$0")" && pwd)
xz -dc $here/../ptx/R.ptx.xz | awk 'NR==539||NR==547||NR==559||NR==571{print "//" $0; next} {print}' > R0.ptx
xz -dc $here/../ptx/T.ptx.xz | awk 'NR==6730||NR==6744||NR==6764||NR==6784{print "//" $0; next} {print}' > T0.ptx
