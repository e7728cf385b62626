#!/usr/bin/env bash
# The tensor-core epilogues' order of C loads and D stores, both builds and the twins, on the
# development machine (no GPU). Run from the repository's root, on a clean tree at each commit:
#   record.sh save 9e16104      # after `cargo build --release` at 9e16104: keeps its PTX
#   record.sh save 0440594      # the same at 0440594
#   record.sh variant           # 0440594's PTX with its C loads through ld.global.nc again
#   record.sh twins             # the twins' cubins: twinscan.sh over 9e16104's `lab` (bundle)
#   record.sh report > epilogue-order.txt
#   record.sh registers > registers.txt
# ptxas 12.9 is the one `cargo xtask test` installs under target/tools; ptxas 13.0 is PyPI's
# nvidia-cuda-nvcc 13.0.* (with nvidia-cuda-nvrtc 13.0.* for the twins), installed with
# `pip install --target /tmp/nvrtc13`.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
keep=/tmp/epilogue-order
p12=target/tools/cuda-nvcc/nvidia/cuda_nvcc/bin/ptxas
p13=/tmp/nvrtc13/nvidia/cu13/bin/ptxas
mkdir -p $keep
case $1 in
  save)
    for m in "" _sm80 _sm90a; do cp target/release/build/host-*/out/kernels$m.ptx $keep/$2-kernels$m.ptx; done ;;
  variant)
    # The C loads unpredicated, as at 0440594, but through the read-only path: `load_v2` is
    # the only source of ld.global.v2.f32 in the modules.
    for m in "" _sm80 _sm90a; do
      sed 's/ld\.global\.v2\.f32/ld.global.nc.v2.f32/g' $keep/0440594-kernels$m.ptx > $keep/0440594-nc-kernels$m.ptx
    done ;;
  twins)
    bash docs/results/h100-2026-12-06-twin-epilogue/sass/twinscan.sh target/bundle/lab 9e16104
    bash docs/results/h100-2026-12-06-twin-epilogue/sass/twinscan.sh target/bundle/lab 9e16104-13 /tmp/nvrtc13/nvidia/cu13 ;;
  report)
    for p in $p12 $p13; do
      v=$($p --version | grep -o 'V[0-9][0-9.]*' | head -1)
      for c in 9e16104 0440594 0440594-nc; do
        for m in "" _sm80 _sm90a; do
          $p -arch=sm_90a -o $keep/$c$m.cubin $keep/$c-kernels$m.ptx
          echo "== Rust at $c, module kernels$m.ptx, ptxas $v -arch=sm_90a"
          python3 $here/epilogue_order.py $keep/$c$m.cubin
        done
      done
    done
    for t in 9e16104 9e16104-13; do
      echo "== CUDA C twins at 9e16104, NVRTC and ptxas $([ $t = 9e16104 ] && echo 12.9 || echo 13.0) -arch=sm_90a"
      python3 $here/epilogue_order.py /tmp/ptxdump/$t-sm_90a-c.cubin gemm_bf16_mma gemm_bf16_pipelined gemm_f16_mma gemm_bf16_wgmma gemm_bf16_tma
    done ;;
  registers)
    for p in $p12 $p13; do
      v=$($p --version | grep -o 'V[0-9][0-9.]*' | head -1)
      for c in 9e16104 0440594; do
        for m in "" _sm80 _sm90a; do
          echo "== Rust at $c, module kernels$m.ptx, ptxas $v -arch=sm_90a: registers, spill stores"
          $p -v -arch=sm_90a -o /dev/null $keep/$c-kernels$m.ptx 2>&1 | python3 -c "
import re, sys
name = spill = None
for line in sys.stdin:
    m = re.search(r\"Compiling entry function '(\\w+)'\", line)
    if m: name = m.group(1)
    m = re.search(r'(\\d+) bytes spill stores', line)
    if m: spill = m.group(1)
    m = re.search(r'Used (\\d+) registers', line)
    if m and name and re.match(r'gemm_(bf16|f16)', name): print(name, m.group(1), 'registers,', spill, 'bytes of spill stores')
"
        done
      done
    done ;;
esac
