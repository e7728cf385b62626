#!/usr/bin/env bash
# The epilogues' SASS cost at 9e16104, 1f3b3a3 and dfbf85d on the development machine (no GPU).
# Run from the repository's root, on a clean tree at each commit:
#   record-cpu.sh save COMMIT    # after `cargo build --release` at COMMIT: keeps its PTX
#   record-cpu.sh report > docs/results/h100-2026-12-06-epilogue-clamp/epilogue-cost.txt
# ptxas 12.9 is the one `cargo xtask test` installs under target/tools.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
keep=/tmp/epilogue-cost
p12=target/tools/cuda-nvcc/nvidia/cuda_nvcc/bin/ptxas
mkdir -p $keep
case $1 in
  save)
    for m in "" _sm80 _sm90a; do cp target/release/build/host-*/out/kernels$m.ptx $keep/$2-kernels$m.ptx; done ;;
  report)
    v=$($p12 --version | grep -o 'V[0-9][0-9.]*' | head -1)
    for c in 9e16104 1f3b3a3 dfbf85d; do
      for m in "" _sm80 _sm90a; do
        $p12 -arch=sm_90a -o $keep/$c$m.cubin $keep/$c-kernels$m.ptx
        echo "== Rust at $c, module kernels$m.ptx, ptxas $v -arch=sm_90a"
        python3 $here/epilogue_cost.py $keep/$c$m.cubin
        $p12 -v -arch=sm_90a -o /dev/null $keep/$c-kernels$m.ptx 2>&1 | python3 -c "
import re, sys
name = spill = None
for line in sys.stdin:
    m = re.search(r\"Compiling entry function '(\\w+)'\", line)
    if m: name = m.group(1)
    m = re.search(r'(\\d+) bytes spill stores', line)
    if m: spill = m.group(1)
    m = re.search(r'Used (\\d+) registers', line)
    if m and name and re.match(r'gemm_(bf16|f16)', name): print('  ', name, m.group(1), 'registers,', spill, 'bytes of spill stores')
"
      done
    done ;;
esac
