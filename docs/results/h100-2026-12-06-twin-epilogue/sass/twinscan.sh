#!/bin/bash
# Run on the development machine (no GPU). /tmp/ptxwrap/ptxas is a wrapper that copies each PTX
# file `lab --asm` hands to ptxas into /tmp/ptxdump/$PTXTAG-*.ptx, then runs
# target/tools/cuda-nvcc/nvidia/cuda_nvcc/bin/ptxas (12.9); NVRTC is PyPI's 12.9 in target/tools.
# The twin's PTX (the file with "NVVM" in it) is kept, assembled with ptxas -v, and each GEMM
# function's registers and spill stores printed; load_distance.py reads the cubins.
# usage: twinscan.sh LABBIN TAG  -> /tmp/ptxdump/TAG-sm_80-c.ptx, TAG-sm_90a-c.ptx, summaries
cd /work/main
export PATH=/tmp/ptxwrap:$PWD/target/tools/sass/nvidia/cu13/bin:$PATH
export LD_LIBRARY_PATH=$PWD/target/tools/cuda-nvrtc/nvidia/cuda_nvrtc/lib
P=$PWD/target/tools/cuda-nvcc/nvidia/cuda_nvcc/bin/ptxas
for arch in sm_80 sm_90a; do
  k=gemm_bf16_mma; [ $arch = sm_90a ] && k=gemm_bf16_tma
  rm -f /tmp/ptxdump/scan-*
  PTXTAG=scan $1 gemm --asm $k --arch $arch > /dev/null 2>&1
  f=$(grep -l "NVVM" /tmp/ptxdump/scan-* | head -1); mv $f /tmp/ptxdump/$2-$arch-c.ptx; rm -f /tmp/ptxdump/scan-*
  $P -v -arch=$arch -o /tmp/ptxdump/$2-$arch-c.cubin /tmp/ptxdump/$2-$arch-c.ptx 2>&1 | python3 -c "
import sys,re
name=None
for l in sys.stdin:
    m=re.search(r\"Compiling entry function '(\w+)'\",l)
    if m: name=m.group(1)
    m=re.search(r'(\d+) bytes spill stores',l)
    if m and name: spill=m.group(1)
    m=re.search(r'Used (\d+) registers',l)
    if m and name and name.startswith('gemm_'): print('$2 $arch',name,'regs',m.group(1),'spill',spill)
"
done
